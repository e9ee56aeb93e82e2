/* The tie between worlds and Vulkan contexts ends with the world: far more worlds than the
 * module can tie at once register vk-lbs/vk-dqs one after another, with one world alive
 * throughout, and every registration succeeds. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#include <stdlib.h>
#include <string.h>

#include "vk_test.h"

/* More than the 64 worlds the module ties at once. */
#define WORLDS 200

/* An allocator that frees nothing until the test ends, so that no world is allocated where a
 * destroyed one was (a reused address would hide an entry that was never released). */
typedef struct quarantine {
    void* blocks[4096];
    int count;
} quarantine;

static quarantine g_quarantine;

static void* q_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    void* p = NULL;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    return posix_memalign(&p, alignment, size) == 0 ? p : NULL;
}

static void q_free(void* ptr, void* user)
{
    quarantine* q = (quarantine*)user;
    if (!ptr) return;
    if (q->count < (int)(sizeof q->blocks / sizeof q->blocks[0])) q->blocks[q->count++] = ptr;
    else free(ptr);
}

static sinew_world* quarantined_world(sinew_test_log* log, const sinew_allocator* allocator)
{
    sinew_world_desc desc = SINEW_WORLD_DESC_INIT;
    desc.logger = &log->logger;
    desc.allocator = allocator;
    desc.thread_count = 1;
    sinew_world* world = NULL;
    assert_int_equal(sinew_world_create(&desc, &world), SINEW_OK);
    return world;
}

static void test_destroyed_worlds_release_their_tie(void** state)
{
    (void)state;
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_vk_context* ctx = vk_test_context(&log);
    sinew_allocator allocator = { q_alloc, q_free, &g_quarantine };
    sinew_world* alive = quarantined_world(&log, &allocator);
    assert_int_equal(sinew_vk_register_backends(alive, ctx), SINEW_OK);
    for (int i = 0; i < WORLDS; ++i) {
        sinew_world* world = quarantined_world(&log, &allocator);
        sinew_result r = sinew_vk_register_backends(world, ctx);
        if (r != SINEW_OK)
            fail_msg("world %d: sinew_vk_register_backends: %s (%s)", i, sinew_result_string(r),
                     log.last);
        assert_int_equal(sinew_world_probe_backend(world, "vk-lbs"), SINEW_OK);
        sinew_world_destroy(world);
    }
    /* The world that stayed is still tied to the context. */
    assert_int_equal(sinew_world_probe_backend(alive, "vk-dqs"), SINEW_OK);
    sinew_world_destroy(alive);
    assert_int_equal(log.count[SINEW_LOG_ERROR], 0);
    vk_test_finish(ctx);
    for (int i = 0; i < g_quarantine.count; ++i) free(g_quarantine.blocks[i]);
    g_quarantine.count = 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_destroyed_worlds_release_their_tie),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
