/* World, rigs, poses, output bindings, backend swaps, many components.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_plugin.h>

#include "test_rigs.h"
#include "test_support.h"

static sinew_test_log g_log;

static int setup(void** state)
{
    sinew_test_log_init(&g_log);
    *state = sinew_test_world(&g_log, 0);
    return 0;
}

static int teardown(void** state)
{
    sinew_world_destroy((sinew_world*)*state);
    return 0;
}

static sinew_skin add_skin(sinew_world* world, sinew_rig rig, const char* backend)
{
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = rig;
    desc.backend = backend;
    sinew_skin skin;
    assert_int_equal(sinew_world_add_skin(world, &desc, &skin), SINEW_OK);
    return skin;
}

static void read_positions(sinew_world* world, sinew_skin skin, float* positions, float* normals,
                           uint32_t n)
{
    sinew_output_desc out = SINEW_OUTPUT_DESC_INIT;
    out.vertex_capacity = n;
    out.positions = positions;
    out.normals = normals;
    assert_int_equal(sinew_skin_read_output(world, skin, &out), SINEW_OK);
}

/* Model-space pose of the bar: joint 1 rotated by `angle` about z through (1, 0, 0). */
static void bar_pose(float* model, float angle)
{
    test_mat_identity(model);
    test_mat_rotation_z(model + 16, angle, 1.0f, 0.0f, 0.0f);
    float t[16];
    memcpy(t, model + 16, sizeof t);
    /* model_1 = rotation about the elbow * bind_1 (the bind is a translation to x = 1). */
    for (int c = 0; c < 4; ++c) {
        float b[4] = { c == 0, c == 1, c == 2, c == 3 };
        if (c == 3) b[0] = 1.0f;
        for (int r = 0; r < 4; ++r)
            model[16 + 4 * c + r] = t[r] * b[0] + t[4 + r] * b[1] + t[8 + r] * b[2] + t[12 + r] * b[3];
    }
}

static void set_bar_pose(sinew_world* world, sinew_skin skin, float angle)
{
    float model[32];
    bar_pose(model, angle);
    sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
    pose.joint_count = 2;
    pose.matrices = model;
    assert_int_equal(sinew_skin_set_pose(world, skin, &pose), SINEW_OK);
}

static void test_defaults(void** state)
{
    sinew_world* world = (sinew_world*)*state;
    assert_true(sinew_world_thread_count(world) >= 1);
    assert_int_equal(sinew_world_probe_backend(world, "lbs"), SINEW_OK);
    assert_int_equal(sinew_world_probe_backend(world, "dqs"), SINEW_OK);
    assert_true(sinew_world_backend_count(world) >= 2);
    assert_null(sinew_world_backend_name(world, 1000));
    assert_string_equal(sinew_result_string(SINEW_ERROR_NONFINITE), "SINEW_ERROR_NONFINITE");
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 0);
}

/* LBS and DQS of the bar bent 90 degrees at the elbow, against values computed by hand. */
static void test_hand_computed(void** state)
{
    sinew_world* world = (sinew_world*)*state;
    test_bar bar;
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, test_bar_make(&bar, 5), &rig), SINEW_OK);
    sinew_rig_info info = SINEW_RIG_INFO_INIT;
    assert_int_equal(sinew_rig_get_info(world, rig, &info), SINEW_OK);
    assert_int_equal(info.vertex_count, 20);
    assert_int_equal(info.joint_count, 2);
    assert_int_equal(info.max_influences, 2);
    assert_int_equal(sinew_rig_find_joint(world, rig, "elbow"), 1);
    assert_int_equal(sinew_rig_find_joint(world, rig, "knee"), -1);

    sinew_skin lbs = add_skin(world, rig, "lbs");
    sinew_skin dqs = add_skin(world, rig, "dqs");
    const float half_pi = 1.57079632679f;
    set_bar_pose(world, lbs, half_pi);
    set_bar_pose(world, dqs, half_pi);
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);

    float p[20 * 3], n[20 * 3], q[20 * 3];
    read_positions(world, lbs, p, n, 20);
    read_positions(world, dqs, q, NULL, 20);
    /* Vertex 16 = (2, -0.25, -0.25), rigidly on joint 1: rotated about (1, 0, 0) by 90 degrees
     * gives (1 + 0.25, 1, -0.25) for both methods. */
    assert_float_equal(p[48], 1.25f, 1e-5f);
    assert_float_equal(p[49], 1.0f, 1e-5f);
    assert_float_equal(p[50], -0.25f, 1e-5f);
    assert_float_equal(q[48], 1.25f, 1e-5f);
    assert_float_equal(q[49], 1.0f, 1e-5f);
    /* Vertex 8 = (1, -0.25, -0.25), half and half. LBS averages the points: ((1, -0.25) +
     * (1.25, 0)) / 2 = (1.125, -0.125). DQS rotates by 45 degrees about the elbow:
     * (1 + 0.25 sin 45, -0.25 cos 45). */
    assert_float_equal(p[24], 1.125f, 1e-5f);
    assert_float_equal(p[25], -0.125f, 1e-5f);
    assert_float_equal(q[24], 1.0f + 0.25f * 0.70710678f, 1e-5f);
    assert_float_equal(q[25], -0.25f * 0.70710678f, 1e-5f);
    assert_float_equal(q[26], -0.25f, 1e-5f);
    /* Normals come back unit length. */
    for (int v = 0; v < 20; ++v) {
        float len = sqrtf(n[3 * v] * n[3 * v] + n[3 * v + 1] * n[3 * v + 1] + n[3 * v + 2] * n[3 * v + 2]);
        assert_float_equal(len, 1.0f, 1e-4f);
    }
    assert_int_equal(sinew_world_remove_skin(world, lbs), SINEW_OK);
    assert_int_equal(sinew_world_remove_skin(world, dqs), SINEW_OK);
    assert_int_equal(sinew_rig_destroy(world, rig), SINEW_OK);
}

/* A local pose through the rig's FK gives the same shape as the equivalent model pose. */
static void test_local_pose(void** state)
{
    sinew_world* world = (sinew_world*)*state;
    test_bar bar;
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, test_bar_make(&bar, 7), &rig), SINEW_OK);
    sinew_skin a = add_skin(world, rig, "lbs");
    sinew_skin b = add_skin(world, rig, "lbs");
    set_bar_pose(world, a, 0.7f);
    /* Local: root identity; joint 1 = translate(1, 0, 0) * rotate_z(0.7). */
    float local[32];
    test_mat_identity(local);
    test_mat_rotation_z(local + 16, 0.7f, 0.0f, 0.0f, 0.0f);
    local[16 + 12] = 1.0f;
    sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
    pose.space = SINEW_POSE_LOCAL;
    pose.joint_count = 2;
    pose.matrices = local;
    assert_int_equal(sinew_skin_set_pose(world, b, &pose), SINEW_OK);
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    float pa[28 * 3], pb[28 * 3];
    read_positions(world, a, pa, NULL, 28);
    read_positions(world, b, pb, NULL, 28);
    for (int i = 0; i < 28 * 3; ++i) assert_float_equal(pa[i], pb[i], 1e-5f);
    float model[32];
    assert_int_equal(sinew_rig_local_to_model(world, rig, local, model), SINEW_OK);
    assert_float_equal(model[16 + 12], 1.0f, 1e-6f);
    sinew_world_remove_skin(world, a);
    sinew_world_remove_skin(world, b);
    sinew_rig_destroy(world, rig);
}

/* Interleaved output (position, normal, 2 floats of padding per vertex) bound once, written by
 * every update, and surviving a backend swap. */
static void test_bound_output(void** state)
{
    sinew_world* world = (sinew_world*)*state;
    test_bar bar;
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, test_bar_make(&bar, 5), &rig), SINEW_OK);
    sinew_skin skin = add_skin(world, rig, "lbs");
    float interleaved[20 * 8];
    for (int i = 0; i < 20 * 8; ++i) interleaved[i] = -99.0f;
    sinew_output_desc out = SINEW_OUTPUT_DESC_INIT;
    out.vertex_capacity = 20;
    out.positions = interleaved;
    out.position_stride = 32;
    out.normals = interleaved + 3;
    out.normal_stride = 32;
    assert_int_equal(sinew_skin_bind_output(world, skin, &out), SINEW_OK);
    set_bar_pose(world, skin, 1.57079632679f);
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    assert_float_equal(interleaved[16 * 8 + 0], 1.25f, 1e-5f);
    assert_float_equal(interleaved[16 * 8 + 1], 1.0f, 1e-5f);
    for (int v = 0; v < 20; ++v) {
        assert_float_equal(interleaved[v * 8 + 6], -99.0f, 0.0f); /* padding untouched */
        assert_float_equal(interleaved[v * 8 + 7], -99.0f, 0.0f);
    }
    /* Swap to dqs; the binding stays and the next update writes the DQS shape. */
    assert_int_equal(sinew_skin_set_backend(world, skin, "dqs", NULL, 0), SINEW_OK);
    assert_int_equal(sinew_skin_wait_swap(world, skin), SINEW_OK);
    assert_string_equal(sinew_skin_backend(world, skin), "dqs");
    set_bar_pose(world, skin, 1.57079632679f);
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    assert_float_equal(interleaved[8 * 8 + 0], 1.0f + 0.25f * 0.70710678f, 1e-5f);
    /* Unbind: later updates leave the array alone. */
    assert_int_equal(sinew_skin_bind_output(world, skin, NULL), SINEW_OK);
    interleaved[0] = -5.0f;
    set_bar_pose(world, skin, 0.3f);
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    assert_float_equal(interleaved[0], -5.0f, 0.0f);
    sinew_world_remove_skin(world, skin);
    sinew_rig_destroy(world, rig);
}

/* A swap continues from the current shape: right after the swap the output is the old
 * backend's shape, and the next frame is the new backend's shape of the current pose. */
static void test_swap_continuity(void** state)
{
    sinew_world* world = (sinew_world*)*state;
    test_bar bar;
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, test_bar_make(&bar, 9), &rig), SINEW_OK);
    sinew_skin skin = add_skin(world, rig, "lbs");
    sinew_skin ref = add_skin(world, rig, "dqs");
    set_bar_pose(world, skin, 2.0f);
    set_bar_pose(world, ref, 2.0f);
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    float before[36 * 3], after[36 * 3], next[36 * 3], expect[36 * 3];
    read_positions(world, skin, before, NULL, 36);
    assert_int_equal(sinew_skin_set_backend(world, skin, "dqs", NULL, 0), SINEW_OK);
    assert_int_equal(sinew_skin_wait_swap(world, skin), SINEW_OK);
    read_positions(world, skin, after, NULL, 36);
    assert_memory_equal(before, after, sizeof before);
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    read_positions(world, skin, next, NULL, 36);
    read_positions(world, ref, expect, NULL, 36);
    for (int i = 0; i < 36 * 3; ++i) assert_float_equal(next[i], expect[i], 1e-6f);
    /* LBS and DQS differ at the elbow for a 2-radian bend: the swap did change the method. */
    float diff = 0.0f;
    for (int i = 0; i < 36 * 3; ++i) diff = fmaxf(diff, fabsf(before[i] - next[i]));
    assert_true(diff > 1e-3f);
    /* A failed swap keeps the old backend. */
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_skin_set_backend(world, skin, "no-such", NULL, 0),
                     SINEW_ERROR_UNKNOWN_BACKEND);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    assert_string_equal(sinew_skin_backend(world, skin), "dqs");
    sinew_world_remove_skin(world, skin);
    sinew_world_remove_skin(world, ref);
    sinew_rig_destroy(world, rig);
}

/* 1000 components, half lbs and half dqs, each at its own angle; every output is checked
 * at the rigid tip, which both methods must place exactly. Handles are reused safely. */
static void test_thousand_components(void** state)
{
    sinew_world* world = (sinew_world*)*state;
    test_bar bar;
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, test_bar_make(&bar, 5), &rig), SINEW_OK);
    enum { N = 1000 };
    sinew_skin* skins = calloc(N, sizeof *skins);
    float* outputs = calloc((size_t)N * 20 * 3, sizeof(float));
    assert_non_null(skins);
    assert_non_null(outputs);
    for (int i = 0; i < N; ++i) {
        skins[i] = add_skin(world, rig, (i % 2) ? "dqs" : "lbs");
        sinew_output_desc out = SINEW_OUTPUT_DESC_INIT;
        out.vertex_capacity = 20;
        out.positions = outputs + (size_t)i * 60;
        assert_int_equal(sinew_skin_bind_output(world, skins[i], &out), SINEW_OK);
        set_bar_pose(world, skins[i], 0.003f * (float)i);
    }
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    for (int i = 0; i < N; ++i) {
        float a = 0.003f * (float)i;
        /* Vertex 16 = (2, -0.25, -0.25) rotated by a about (1, 0, 0). */
        float ex = 1.0f + cosf(a) * 1.0f - sinf(a) * -0.25f;
        float ey = sinf(a) * 1.0f + cosf(a) * -0.25f;
        assert_float_equal(outputs[(size_t)i * 60 + 48], ex, 1e-4f);
        assert_float_equal(outputs[(size_t)i * 60 + 49], ey, 1e-4f);
    }
    /* Remove every third, add new ones into the freed slots: old handles stay dead. */
    for (int i = 0; i < N; i += 3) assert_int_equal(sinew_world_remove_skin(world, skins[i]), SINEW_OK);
    sinew_test_log_reset(&g_log);
    sinew_skin fresh = add_skin(world, rig, "dqs");
    assert_int_not_equal(fresh.id, skins[0].id);
    assert_int_equal(sinew_world_remove_skin(world, skins[0]), SINEW_ERROR_INVALID_HANDLE);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    sinew_world_remove_skin(world, fresh);
    for (int i = 0; i < N; ++i) {
        if (i % 3) assert_int_equal(sinew_world_remove_skin(world, skins[i]), SINEW_OK);
    }
    assert_int_equal(sinew_rig_destroy(world, rig), SINEW_OK);
    free(skins);
    free(outputs);
}

/* One thread and two threads give identical results. */
static void test_thread_counts(void** state)
{
    (void)state;
    float result[2][36 * 3];
    for (int t = 0; t < 2; ++t) {
        sinew_test_log log;
        sinew_test_log_init(&log);
        sinew_world* world = sinew_test_world(&log, (uint32_t)t + 1u);
        assert_int_equal(sinew_world_thread_count(world), (uint32_t)t + 1u);
        test_bar bar;
        sinew_rig rig;
        assert_int_equal(sinew_rig_create(world, test_bar_make(&bar, 9), &rig), SINEW_OK);
        sinew_skin skin = add_skin(world, rig, "dqs");
        set_bar_pose(world, skin, 1.1f);
        assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
        read_positions(world, skin, result[t], NULL, 36);
        sinew_world_destroy(world);
    }
    assert_memory_equal(result[0], result[1], sizeof result[0]);
}

/* A host allocator and job system are used, and everything allocated is freed. */
static atomic_long g_live_allocations;
static atomic_long g_jobs_run;

static void* counting_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    void* p = NULL;
    if (posix_memalign(&p, alignment < sizeof(void*) ? sizeof(void*) : alignment, size)) return NULL;
    atomic_fetch_add(&g_live_allocations, 1);
    return p;
}

static void counting_free(void* ptr, void* user)
{
    (void)user;
    if (ptr) atomic_fetch_sub(&g_live_allocations, 1);
    free(ptr);
}

static void host_parallel_for(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain, void* user)
{
    (void)user;
    /* A trivially correct host scheduler: chunks of `grain`, in order. */
    for (uint32_t b = 0; b < count; b += grain) {
        atomic_fetch_add(&g_jobs_run, 1);
        fn(data, b, b + grain < count ? b + grain : count);
    }
}

static void test_host_services(void** state)
{
    (void)state;
    sinew_allocator allocator = { counting_alloc, counting_free, NULL };
    sinew_job_system jobs = { host_parallel_for, 4, NULL };
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_world_desc desc = SINEW_WORLD_DESC_INIT;
    desc.allocator = &allocator;
    desc.jobs = &jobs;
    desc.logger = &log.logger;
    sinew_world* world = NULL;
    assert_int_equal(sinew_world_create(&desc, &world), SINEW_OK);
    assert_int_equal(sinew_world_thread_count(world), 4);
    test_bar bar;
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, test_bar_make(&bar, 5), &rig), SINEW_OK);
    sinew_skin skins[8];
    for (int i = 0; i < 8; ++i) {
        skins[i] = add_skin(world, rig, i % 2 ? "lbs" : "dqs");
        set_bar_pose(world, skins[i], 0.1f * (float)i);
    }
    assert_true(atomic_load(&g_live_allocations) > 0);
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    assert_true(atomic_load(&g_jobs_run) > 0);
    sinew_world_destroy(world);
    assert_int_equal(atomic_load(&g_live_allocations), 0);
    assert_int_equal(log.count[SINEW_LOG_ERROR], 0);
}

/* Destroy hooks run once each, with the world's host services. */
static sinew_test_log g_hook_log;
static int g_hook_runs[2];

static void count_hook(const sinew_host_api* host, void* user)
{
    assert_non_null(host);
    assert_ptr_equal(host->logger.user, g_hook_log.logger.user);
    g_hook_runs[*(int*)user]++;
}

static void test_destroy_hooks(void** state)
{
    (void)state;
    sinew_test_log_init(&g_hook_log);
    sinew_world* world = sinew_test_world(&g_hook_log, 1);
    int first = 0, second = 1;
    assert_int_equal(sinew_world_add_destroy_hook(world, count_hook, &first), SINEW_OK);
    assert_int_equal(sinew_world_add_destroy_hook(world, count_hook, &first), SINEW_OK);
    assert_int_equal(sinew_world_add_destroy_hook(world, count_hook, &second), SINEW_OK);
    sinew_test_log_reset(&g_hook_log);
    assert_int_equal(sinew_world_add_destroy_hook(world, NULL, &first),
                     SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(g_hook_log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(sinew_world_add_destroy_hook(NULL, count_hook, &first),
                     SINEW_ERROR_INVALID_ARGUMENT);
    sinew_world_destroy(world);
    assert_int_equal(g_hook_runs[0], 1);
    assert_int_equal(g_hook_runs[1], 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hand_computed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_local_pose, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bound_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_swap_continuity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thousand_components, setup, teardown),
        cmocka_unit_test(test_thread_counts),
        cmocka_unit_test(test_host_services),
        cmocka_unit_test(test_destroy_hooks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
