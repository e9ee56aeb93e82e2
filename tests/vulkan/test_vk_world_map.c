/* The tie between worlds and Vulkan contexts: it ends with the world (far more worlds than the
 * 64 the module once tied at most register vk-lbs/vk-dqs one after another, with one world
 * alive throughout, and every registration succeeds), and it is the world's Vulkan service
 * (SINEW_SERVICE_VULKAN), whose context follows registration and the context's destruction, and
 * which a world that only binds an output gets without a context. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_plugin.h>

#include "vk_test.h"

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

/* The world's Vulkan service, or NULL. */
static const sinew_vk_service* vk_service(const sinew_world* world)
{
    const void* table = NULL;
    sinew_result r = sinew_world_get_service(world, SINEW_SERVICE_VULKAN, 1u, &table);
    assert_true(r == SINEW_OK || r == SINEW_ERROR_NO_SERVICE);
    return (const sinew_vk_service*)table;
}

/* The service's output functions are the module's own. */
static void check_functions(const sinew_vk_service* vk)
{
    assert_non_null(vk);
    assert_true(vk->header.struct_size >= sizeof(sinew_vk_service));
    assert_int_equal(vk->header.version, SINEW_VK_SERVICE_VERSION);
    assert_true(vk->output_export_memory == sinew_vk_output_export_memory);
    assert_true(vk->output_export_semaphores == sinew_vk_output_export_semaphores);
    assert_true(vk->output_set_external_writer == sinew_vk_output_set_external_writer);
    assert_true(vk->output_external_frame == sinew_vk_output_external_frame);
}

/* Registration makes the service, registering again with another context re-ties the world,
 * destroying a context unties every world tied to it (and the worlds outlive it). */
static void test_service_follows_the_tie(void** state)
{
    (void)state;
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_vk_context* ctx = vk_test_context(&log);
    sinew_vk_context* other = vk_test_context(&log);
    sinew_world* a = sinew_test_world(&log, 1);
    sinew_world* b = sinew_test_world(&log, 1);
    assert_null(vk_service(a));
    assert_int_equal(sinew_vk_register_backends(a, ctx), SINEW_OK);
    assert_int_equal(sinew_vk_register_backends(b, ctx), SINEW_OK);
    const sinew_vk_service* vk = vk_service(a);
    check_functions(vk);
    assert_ptr_equal(vk->context(vk), ctx);
    assert_true(vk_service(b) != vk); /* one tie per world */

    uint32_t count = sinew_world_backend_count(a);
    assert_int_equal(sinew_vk_register_backends(a, other), SINEW_OK);
    assert_int_equal(sinew_world_backend_count(a), count);
    assert_ptr_equal(vk_service(a), vk);
    assert_ptr_equal(vk->context(vk), other);
    vk_test_finish(other);
    assert_null(vk->context(vk));
    sinew_test_log_reset(&log);
    assert_int_equal(sinew_world_probe_backend(a, "vk-pbd"), SINEW_ERROR_BACKEND_UNAVAILABLE);
    assert_int_equal(log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(sinew_world_probe_backend(b, "vk-lbs"), SINEW_OK);

    assert_int_equal(sinew_vk_register_backends(a, ctx), SINEW_OK);
    assert_ptr_equal(vk->context(vk), ctx);
    assert_int_equal(sinew_world_probe_backend(a, "vk-dqs"), SINEW_OK);
    sinew_test_log_reset(&log);
    vk_test_finish(ctx);
    for (int i = 0; i < 2; ++i) {
        sinew_world* w = i ? b : a;
        assert_null(vk_service(w)->context(vk_service(w)));
        assert_int_equal(sinew_world_probe_backend(w, "vk-lbs"), SINEW_ERROR_BACKEND_UNAVAILABLE);
    }
    assert_int_equal(log.count[SINEW_LOG_ERROR], 2);
    sinew_world_destroy(a);
    sinew_world_destroy(b);
}

/* A tetrahedron with one joint. */
static sinew_rig tetra_rig(sinew_world* world)
{
    static const float positions[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    static const uint32_t indices[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
    static const int32_t parents[1] = {-1};
    static const float bind[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    sinew_rig_desc desc = SINEW_RIG_DESC_INIT;
    desc.skeleton.joint_count = 1;
    desc.skeleton.parents = parents;
    desc.skeleton.bind_matrices = bind;
    desc.render_mesh.vertex_count = 4;
    desc.render_mesh.positions = positions;
    desc.render_mesh.triangle_count = 4;
    desc.render_mesh.indices = indices;
    sinew_rig rig = {0};
    assert_int_equal(sinew_rig_create(world, &desc, &rig), SINEW_OK);
    return rig;
}

/* A world that only binds an output gets the service with the output functions and no
 * context (what a GPU backend of another module imports the output with); tying the world
 * later gives it the tie's. */
static void test_bind_provides_the_functions(void** state)
{
    (void)state;
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_vk_context* ctx = vk_test_context(&log);
    sinew_world* world = sinew_test_world(&log, 1);
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = tetra_rig(world);
    sinew_skin skin;
    assert_int_equal(sinew_world_add_skin(world, &desc, &skin), SINEW_OK);
    sinew_vk_output_desc od = SINEW_VK_OUTPUT_DESC_INIT;
    od.vertex_capacity = 4;
    sinew_vk_output* out = NULL;
    assert_int_equal(sinew_vk_output_create(ctx, &od, &out), SINEW_OK);
    assert_int_equal(sinew_vk_output_bind(out, world, skin), SINEW_OK);
    const sinew_vk_service* vk = vk_service(world);
    check_functions(vk);
    assert_null(vk->context(vk));
    assert_int_equal(sinew_vk_register_backends(world, ctx), SINEW_OK);
    vk = vk_service(world);
    check_functions(vk);
    assert_ptr_equal(vk->context(vk), ctx);
    assert_int_equal(sinew_vk_output_bind(out, world, skin), SINEW_OK);
    assert_ptr_equal(vk_service(world), vk); /* binding keeps the tie */
    assert_int_equal(log.count[SINEW_LOG_ERROR], 0);
    sinew_vk_output_destroy(out);
    sinew_world_destroy(world);
    vk_test_finish(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_destroyed_worlds_release_their_tie),
        cmocka_unit_test(test_service_follows_the_tie),
        cmocka_unit_test(test_bind_provides_the_functions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
