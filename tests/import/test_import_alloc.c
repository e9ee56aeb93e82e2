/* Allocation failure swept through the importer: this program defines malloc, calloc, realloc
 * and free itself (so they serve every library in the process) and fails the N-th allocation
 * made from inside libsinew_import, for every N that an import makes, on a text character and
 * on an assimp model. Each failing import returns SINEW_ERROR_OUT_OF_MEMORY and gives back
 * every block the importer took. Not built under the sanitizers, which own malloc.
 * SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* dladdr */
#include "test_support.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include <sinew/sinew_import.h>

void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* ptr, size_t size);
void __libc_free(void* ptr);

/* ---- the failing allocator ---- */

#define TRACKED 65536
static int g_armed;
static long long g_count, g_fail_at;
static void* g_blocks[TRACKED]; /* blocks the importer holds, while armed */
static long long g_held;
static int g_in_hook;

/* Is the caller (two frames up: the importer's call into malloc) inside libsinew_import? */
static int from_importer(void* caller)
{
    Dl_info info;
    return dladdr(caller, &info) && info.dli_fname && strstr(info.dli_fname, "libsinew_import");
}

static int should_fail(void* caller)
{
    if (!g_armed || g_in_hook) return 0;
    g_in_hook = 1;
    int ours = from_importer(caller);
    g_in_hook = 0;
    return ours && ++g_count == g_fail_at;
}

static void track(void* p, void* caller)
{
    if (!p || !g_armed || g_in_hook) return;
    g_in_hook = 1;
    if (from_importer(caller)) {
        for (uint32_t i = 0; i < TRACKED; ++i)
            if (!g_blocks[i]) {
                g_blocks[i] = p;
                ++g_held;
                break;
            }
    }
    g_in_hook = 0;
}

static void untrack(void* p)
{
    if (!p || !g_held) return;
    for (uint32_t i = 0; i < TRACKED; ++i)
        if (g_blocks[i] == p) {
            g_blocks[i] = NULL;
            --g_held;
            return;
        }
}

__attribute__((visibility("default"))) void* malloc(size_t size)
{
    void* caller = __builtin_return_address(0);
    if (should_fail(caller)) return NULL;
    void* p = __libc_malloc(size);
    track(p, caller);
    return p;
}

__attribute__((visibility("default"))) void* calloc(size_t count, size_t size)
{
    void* caller = __builtin_return_address(0);
    if (should_fail(caller)) return NULL;
    void* p = __libc_calloc(count, size);
    track(p, caller);
    return p;
}

__attribute__((visibility("default"))) void* realloc(void* ptr, size_t size)
{
    void* caller = __builtin_return_address(0);
    if (should_fail(caller)) return NULL;
    void* p = __libc_realloc(ptr, size);
    if (p) {
        untrack(ptr);
        track(p, caller);
    }
    return p;
}

__attribute__((visibility("default"))) void free(void* ptr)
{
    untrack(ptr);
    __libc_free(ptr);
}

/* ---- the sweep ---- */

static long long sweep_import(const char* path)
{
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.logger = &log.logger;
    long long n = 1;
    for (;; ++n) {
        memset(g_blocks, 0, sizeof g_blocks);
        g_held = 0;
        g_count = 0;
        g_fail_at = n;
        g_armed = 1;
        sinew_character* ch = NULL;
        sinew_result r = sinew_import_character(path, &options, &ch);
        if (r == SINEW_OK) {
            sinew_import_free(ch);
            g_armed = 0;
            assert_int_equal(g_held, 0);
            break;
        }
        g_armed = 0;
        if (r != SINEW_ERROR_OUT_OF_MEMORY)
            print_message("%s, allocation %lld: result %d (%s)\n", path, n, r, log.last);
        assert_int_equal(r, SINEW_ERROR_OUT_OF_MEMORY);
        assert_null(ch);
        assert_int_equal(g_held, 0);
    }
    return n - 1;
}

static void test_text_character(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/tbone/tbone.ini");
    print_message("tbone.ini: %lld allocation points swept\n", sweep_import(path));
}

static void test_assimp_model(void** state)
{
    (void)state;
    if (!SINEW_TEST_HAS_ASSIMP) skip();
    const char* path = sinew_test_assimp_path("glTF2/simple_skin/simple_skin.gltf");
    print_message("simple_skin.gltf: %lld allocation points swept\n", sweep_import(path));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_character),
        cmocka_unit_test(test_assimp_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
