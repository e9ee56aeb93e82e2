/* Allocation failure swept: a host allocator that fails its N-th allocation, for every N that
 * the call makes, during world creation, rig creation, each CPU backend's preparation (a skin
 * added) and a bake load. Each failing call returns SINEW_ERROR_OUT_OF_MEMORY, holds no memory
 * afterwards (every byte counted through the allocator comes back, beyond the capacity of the
 * world's tables that a first successful call grew), and the world stays usable.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sinew/sinew_bake.h>

#include "test_rigs.h"

/* ---- an allocator that fails its N-th allocation and counts the bytes it holds ---- */

static long long g_count;      /* allocations so far */
static long long g_fail_at;    /* 0: never fail */
static long long g_live;       /* bytes held */

static void* failing_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    if (g_fail_at && ++g_count == g_fail_at) return NULL;
    if (!g_fail_at) ++g_count;
    if (alignment < 16u) alignment = 16u;
    unsigned char* p = (unsigned char*)aligned_alloc(alignment,
                                                     (alignment + size + alignment - 1u) /
                                                         alignment * alignment);
    if (!p) return NULL;
    memcpy(p + alignment - sizeof(size_t), &size, sizeof size);
    memcpy(p + alignment - 2u * sizeof(size_t), &alignment, sizeof alignment);
    g_live += (long long)size;
    return p + alignment;
}

static void failing_free(void* ptr, void* user)
{
    (void)user;
    if (!ptr) return;
    unsigned char* q = (unsigned char*)ptr;
    size_t size, head;
    memcpy(&size, q - sizeof(size_t), sizeof size);
    memcpy(&head, q - 2u * sizeof(size_t), sizeof head);
    g_live -= (long long)size;
    free(q - head);
}

static const sinew_allocator g_allocator = {failing_alloc, failing_free, NULL};

/* Arms the allocator to fail the n-th allocation from now (0: disarm). */
static void fail_after(long long n)
{
    g_count = 0;
    g_fail_at = n;
}

static sinew_world* make_world(void)
{
    sinew_world_desc wd = SINEW_WORLD_DESC_INIT;
    wd.allocator = &g_allocator;
    wd.thread_count = 1;
    wd.log_level = SINEW_LOG_ERROR;
    static sinew_test_log log;
    sinew_test_log_init(&log);
    wd.logger = &log.logger;
    sinew_world* w = NULL;
    return sinew_world_create(&wd, &w) == SINEW_OK ? w : NULL;
}

/* ---- the sweeps ---- */

static void test_world_creation(void** state)
{
    (void)state;
    long long n = 1;
    for (;; ++n) {
        fail_after(n);
        sinew_world* w = make_world();
        if (w) {
            fail_after(0);
            sinew_world_destroy(w);
            break;
        }
        assert_int_equal(g_live, 0);
    }
    fail_after(0);
    assert_int_equal(g_live, 0);
    print_message("world creation: %lld allocation points swept\n", n - 1);
}

/* Runs `call` with the n-th allocation failing, for n = 1, 2, ... until it succeeds; each
 * failure must be OUT_OF_MEMORY and leave the world holding what it held before. `undo`
 * releases what a successful call made. Returns the number of points swept. */
typedef sinew_result (*sweep_call)(sinew_world* w, void* ctx);
typedef void (*sweep_undo)(sinew_world* w, void* ctx);

static long long sweep(sinew_world* w, sweep_call call, sweep_undo undo, void* ctx)
{
    /* once through first: tables the world grows for it (kept as capacity) are in the base */
    assert_int_equal(call(w, ctx), SINEW_OK);
    undo(w, ctx);
    long long base = g_live, n = 1;
    for (;; ++n) {
        fail_after(n);
        sinew_result r = call(w, ctx);
        fail_after(0);
        if (r == SINEW_OK) {
            undo(w, ctx);
            break;
        }
        if (r != SINEW_ERROR_OUT_OF_MEMORY) print_message("allocation %lld: result %d\n", n, r);
        assert_int_equal(r, SINEW_ERROR_OUT_OF_MEMORY);
        assert_int_equal(g_live, base);
    }
    assert_int_equal(g_live, base);
    /* still usable */
    assert_int_equal(call(w, ctx), SINEW_OK);
    undo(w, ctx);
    assert_int_equal(g_live, base);
    return n - 1;
}

typedef struct rig_ctx {
    test_bar bar;
    sinew_rig rig;
    const char* backend;
    sinew_skin skin;
    char path[512];
} rig_ctx;

static sinew_result create_rig(sinew_world* w, void* ctx)
{
    rig_ctx* c = (rig_ctx*)ctx;
    return sinew_rig_create(w, &c->bar.desc, &c->rig);
}

static void destroy_rig(sinew_world* w, void* ctx)
{
    assert_int_equal(sinew_rig_destroy(w, ((rig_ctx*)ctx)->rig), SINEW_OK);
}

static sinew_result add_skin(sinew_world* w, void* ctx)
{
    rig_ctx* c = (rig_ctx*)ctx;
    sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
    sd.rig = c->rig;
    sd.backend = c->backend;
    return sinew_world_add_skin(w, &sd, &c->skin);
}

static void remove_skin(sinew_world* w, void* ctx)
{
    assert_int_equal(sinew_world_remove_skin(w, ((rig_ctx*)ctx)->skin), SINEW_OK);
}

static sinew_result load_bake(sinew_world* w, void* ctx)
{
    rig_ctx* c = (rig_ctx*)ctx;
    return sinew_rig_load_baked(w, c->path, &c->rig);
}

static void test_rig_creation(void** state)
{
    (void)state;
    sinew_world* w = make_world();
    assert_non_null(w);
    rig_ctx c;
    memset(&c, 0, sizeof c);
    test_bar_make(&c.bar, 9);
    print_message("rig creation: %lld allocation points swept\n",
                  sweep(w, create_rig, destroy_rig, &c));
    sinew_world_destroy(w);
    assert_int_equal(g_live, 0);
}

static void test_backend_preparation(void** state)
{
    (void)state;
    sinew_world* w = make_world();
    assert_non_null(w);
    rig_ctx c;
    memset(&c, 0, sizeof c);
    test_bar_make(&c.bar, 9);
    assert_int_equal(sinew_rig_create(w, &c.bar.desc, &c.rig), SINEW_OK);
    for (uint32_t b = 0; b < sinew_world_backend_count(w); ++b) {
        c.backend = sinew_world_backend_name(w, b);
        if (strncmp(c.backend, "vk-", 3) == 0 || strstr(c.backend, "cuda")) continue;
        print_message("%s preparation: %lld allocation points swept\n", c.backend,
                      sweep(w, add_skin, remove_skin, &c));
    }
    sinew_world_destroy(w);
    assert_int_equal(g_live, 0);
}

static void test_bake_load(void** state)
{
    (void)state;
    sinew_world* w = make_world();
    assert_non_null(w);
    rig_ctx c;
    memset(&c, 0, sizeof c);
    test_bar_make(&c.bar, 9);
    char dir[] = "/tmp/sinew-alloc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    snprintf(c.path, sizeof c.path, "%s/bar.bake", dir);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(w, &c.bar.desc, &rig), SINEW_OK);
    const char* backends[2] = {"lbs", "ps"};
    for (int b = 0; b < 2; ++b) {
        if (sinew_bake_write(w, rig, backends[b], NULL, 0, c.path) != SINEW_OK) continue;
        print_message("bake load (%s): %lld allocation points swept\n", backends[b],
                      sweep(w, load_bake, destroy_rig, &c));
        /* the backend restored from the baked blob */
        assert_int_equal(load_bake(w, &c), SINEW_OK);
        c.backend = backends[b];
        print_message("%s restored from the bake: %lld allocation points swept\n", backends[b],
                      sweep(w, add_skin, remove_skin, &c));
        destroy_rig(w, &c);
    }
    unlink(c.path);
    rmdir(dir);
    sinew_world_destroy(w);
    assert_int_equal(g_live, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_world_creation),
        cmocka_unit_test(test_rig_creation),
        cmocka_unit_test(test_backend_preparation),
        cmocka_unit_test(test_bake_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
