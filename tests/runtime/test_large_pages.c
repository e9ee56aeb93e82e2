/* The world's allocator hints (runtime/large_pages.c): the advice changes no byte of a block,
 * populates the pages of a fresh one where the kernel supports it, and the advising allocator
 * forwards every call to the host's. SPDX-License-Identifier: MIT */
#define _DEFAULT_SOURCE /* mmap, mincore */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test_support.h"
#include "../../runtime/internal.h"

/* A pattern that no zeroing or page replacement would keep. */
static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 131u + 7u);
}

static void test_content_kept(void** state)
{
    (void)state;
    const size_t sizes[] = { 1u, 4095u, SINEW_POPULATED_BLOCK - 1u, SINEW_POPULATED_BLOCK + 17u,
                             SINEW_LARGE_BLOCK + 3u * 4096u + 5u };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
        unsigned char* p = malloc(sizes[k]);
        assert_non_null(p);
        for (size_t i = 0; i < sizes[k]; ++i) p[i] = pattern(i);
        sinew_advise_large_block(p, sizes[k]);
        for (size_t i = 0; i < sizes[k]; ++i)
            if (p[i] != pattern(i)) fail_msg("byte %zu of a %zu-byte block changed", i, sizes[k]);
        free(p);
    }
    sinew_advise_large_block(NULL, SINEW_LARGE_BLOCK);
}

/* Resident pages of [p, p + size), page-aligned p. */
static size_t resident_pages(void* p, size_t size, size_t page)
{
    size_t count = (size + page - 1u) / page, resident = 0;
    unsigned char* vec = malloc(count);
    assert_non_null(vec);
    assert_int_equal(mincore(p, size, vec), 0);
    for (size_t i = 0; i < count; ++i) resident += vec[i] & 1u;
    free(vec);
    return resident;
}

static void test_fresh_block_populated(void** state)
{
    (void)state;
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    const size_t page = (size_t)sysconf(_SC_PAGESIZE), size = 64u * page;
    void* p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    /* Whether this kernel populates at all (Linux 5.14 and later). */
    void* probe = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(probe != MAP_FAILED);
    const int supported = madvise(probe, page, MADV_POPULATE_WRITE) == 0;
    munmap(probe, page);
    if (!supported) {
        munmap(p, size);
        print_message("skipped: madvise(MADV_POPULATE_WRITE) is refused here (errno %d)\n", errno);
        skip();
    }
    assert_int_equal(resident_pages(p, size, page), 0);
    sinew_advise_large_block(p, size);
    assert_int_equal(resident_pages(p, size, page), 64);
    munmap(p, size);
#else
    print_message("skipped: no MADV_POPULATE_WRITE on this system\n");
    skip();
#endif
}

typedef struct counting {
    int allocs, frees;
    size_t last_size, last_alignment;
} counting;

static void* count_alloc(size_t size, size_t alignment, void* user)
{
    counting* c = user;
    c->allocs++;
    c->last_size = size;
    c->last_alignment = alignment;
    void* p = NULL;
    return posix_memalign(&p, alignment, size) == 0 ? p : NULL;
}

static void count_free(void* ptr, void* user)
{
    counting* c = user;
    c->frees++;
    free(ptr);
}

static void* refuse_alloc(size_t size, size_t alignment, void* user)
{
    (void)size;
    (void)alignment;
    ((counting*)user)->allocs++;
    return NULL;
}

static void test_allocator_forwards(void** state)
{
    (void)state;
    counting c = { 0, 0, 0u, 0u };
    const sinew_allocator inner = { count_alloc, count_free, &c };
    const sinew_allocator a = sinew_advising_allocator(&inner);
    unsigned char* big = a.alloc(SINEW_LARGE_BLOCK + 100u, 4096u, a.user);
    assert_non_null(big);
    assert_int_equal(c.allocs, 1);
    assert_int_equal(c.last_size, SINEW_LARGE_BLOCK + 100u);
    assert_int_equal(c.last_alignment, 4096u);
    assert_int_equal((uintptr_t)big % 4096u, 0);
    memset(big, 0xA5, SINEW_LARGE_BLOCK + 100u);
    a.free(big, a.user);
    a.free(NULL, a.user);
    assert_int_equal(c.frees, 2);
    const sinew_allocator none = { refuse_alloc, count_free, &c };
    const sinew_allocator b = sinew_advising_allocator(&none);
    assert_null(b.alloc(SINEW_LARGE_BLOCK, 64u, b.user));
    assert_int_equal(c.allocs, 2);
}

/* A world with the host's allocator: everything it allocates goes through it, and is freed. */
static void test_world_uses_host_allocator(void** state)
{
    (void)state;
    counting c = { 0, 0, 0u, 0u };
    const sinew_allocator inner = { count_alloc, count_free, &c };
    sinew_world_desc desc = SINEW_WORLD_DESC_INIT;
    desc.allocator = &inner;
    desc.thread_count = 2;
    sinew_world* world = NULL;
    assert_int_equal(sinew_world_create(&desc, &world), SINEW_OK);
    assert_true(c.allocs > 0);
    sinew_world_destroy(world);
    assert_int_equal(c.allocs, c.frees);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_content_kept),
        cmocka_unit_test(test_fresh_block_populated),
        cmocka_unit_test(test_allocator_forwards),
        cmocka_unit_test(test_world_uses_host_allocator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
