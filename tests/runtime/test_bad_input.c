/* Bad input: each case gets its specific code and exactly one error log line, nothing
 * crashes, and what was already loaded keeps working. SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>

#include "test_rigs.h"
#include "test_support.h"

static sinew_test_log g_log;
static sinew_world* g_world;
static test_bar g_bar;

static int setup(void** state)
{
    (void)state;
    sinew_test_log_init(&g_log);
    g_world = sinew_test_world(&g_log, 2);
    test_bar_make(&g_bar, 5);
    sinew_test_log_reset(&g_log);
    return 0;
}

static int teardown(void** state)
{
    (void)state;
    sinew_world_destroy(g_world);
    g_world = NULL;
    return 0;
}

/* Asserts the result and exactly one error line; prints the line so the log is visible. */
#define EXPECT_ERROR(call, code)                                                          \
    do {                                                                                  \
        sinew_test_log_reset(&g_log);                                                     \
        sinew_result r_ = (call);                                                         \
        if (r_ != (code))                                                                 \
            fail_msg("%s returned %s, expected %s", #call, sinew_result_string(r_),      \
                     sinew_result_string(code));                                          \
        if (g_log.count[SINEW_LOG_ERROR] != 1)                                            \
            fail_msg("%s logged %d error lines, expected 1", #call,                      \
                     g_log.count[SINEW_LOG_ERROR]);                                       \
        print_message("  %s -> %s: %s\n", #code, sinew_result_string(r_), g_log.last);  \
    } while (0)

static sinew_rig rig_ok(void)
{
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(g_world, &g_bar.desc, &rig), SINEW_OK);
    return rig;
}

static void test_bad_rigs(void** state)
{
    (void)state;
    sinew_rig rig;
    sinew_rig_desc d;

    d = g_bar.desc; d.struct_size = 0;
    EXPECT_ERROR(sinew_rig_create(g_world, &d, &rig), SINEW_ERROR_STRUCT_SIZE);
    assert_int_equal(rig.id, 0);
    d = g_bar.desc; d.struct_size = 8;
    EXPECT_ERROR(sinew_rig_create(g_world, &d, &rig), SINEW_ERROR_STRUCT_SIZE);
    EXPECT_ERROR(sinew_rig_create(g_world, NULL, &rig), SINEW_ERROR_INVALID_ARGUMENT);

    /* Zero vertices, zero triangles, missing arrays. */
    d = g_bar.desc; d.render_mesh.vertex_count = 0;
    EXPECT_ERROR(sinew_rig_create(g_world, &d, &rig), SINEW_ERROR_EMPTY_MESH);
    d = g_bar.desc; d.render_mesh.triangle_count = 0;
    EXPECT_ERROR(sinew_rig_create(g_world, &d, &rig), SINEW_ERROR_EMPTY_MESH);
    d = g_bar.desc; d.render_mesh.positions = NULL;
    EXPECT_ERROR(sinew_rig_create(g_world, &d, &rig), SINEW_ERROR_INVALID_ARGUMENT);

    /* Non-finite data. */
    test_bar bad = g_bar;
    bad.desc = g_bar.desc;
    bad.desc.render_mesh.positions = bad.positions;
    bad.positions[7] = NAN;
    EXPECT_ERROR(sinew_rig_create(g_world, &bad.desc, &rig), SINEW_ERROR_NONFINITE);
    float bind[32];
    memcpy(bind, g_bar.bind, sizeof bind);
    bind[16 + 12] = INFINITY;
    d = g_bar.desc; d.skeleton.bind_matrices = bind;
    EXPECT_ERROR(sinew_rig_create(g_world, &d, &rig), SINEW_ERROR_NONFINITE);
    memcpy(bind, g_bar.bind, sizeof bind);
    memset(bind + 16, 0, 16 * sizeof(float));
    EXPECT_ERROR(sinew_rig_create(g_world, &d, &rig), SINEW_ERROR_SKELETON);

    /* Triangle index out of range. */
    uint32_t indices[64 * 6 * 3];
    memcpy(indices, g_bar.indices, sizeof indices);
    indices[5] = 20;
    d = g_bar.desc; d.render_mesh.indices = indices;
    EXPECT_ERROR(sinew_rig_create(g_world, &d, &rig), SINEW_ERROR_VERTEX_INDEX);

    /* Skeletons: a cycle, a missing parent, a self-parent, no joint. */
    int32_t cycle[2] = { 1, 0 };
    d = g_bar.desc; d.skeleton.parents = cycle;
    EXPECT_ERROR(sinew_rig_create(g_world, &d, &rig), SINEW_ERROR_SKELETON);
    int32_t missing[2] = { -1, 5 };
    d = g_bar.desc; d.skeleton.parents = missing;
    EXPECT_ERROR(sinew_rig_create(g_world, &d, &rig), SINEW_ERROR_SKELETON);
    int32_t self[2] = { -1, 1 };
    d = g_bar.desc; d.skeleton.parents = self;
    EXPECT_ERROR(sinew_rig_create(g_world, &d, &rig), SINEW_ERROR_SKELETON);
    d = g_bar.desc; d.skeleton.joint_count = 0;
    EXPECT_ERROR(sinew_rig_create(g_world, &d, &rig), SINEW_ERROR_SKELETON);

    /* Weights: joint out of range, negative, all zero, non-finite, empty row. */
    test_bar w = g_bar;
    w.desc.weights.joints = w.joints;
    w.desc.weights.weights = w.weights;
    w.desc.weights.offsets = w.offsets;
    w.joints[3] = 2;
    EXPECT_ERROR(sinew_rig_create(g_world, &w.desc, &rig), SINEW_ERROR_JOINT_INDEX);
    w.joints[3] = g_bar.joints[3];
    w.weights[2] = -0.5f;
    EXPECT_ERROR(sinew_rig_create(g_world, &w.desc, &rig), SINEW_ERROR_WEIGHTS);
    w.weights[2] = 0.0f;
    EXPECT_ERROR(sinew_rig_create(g_world, &w.desc, &rig), SINEW_ERROR_WEIGHTS);
    w.weights[2] = NAN;
    EXPECT_ERROR(sinew_rig_create(g_world, &w.desc, &rig), SINEW_ERROR_NONFINITE);
    w.weights[2] = 1.0f;
    w.offsets[1] = 0; /* vertex 0 now has no influence */
    EXPECT_ERROR(sinew_rig_create(g_world, &w.desc, &rig), SINEW_ERROR_WEIGHTS);

    /* Automatic weights accept only 4 or 8 influences. */
    d = g_bar.desc;
    d.weights.offsets = NULL;
    d.max_influences = 3;
    EXPECT_ERROR(sinew_rig_create(g_world, &d, &rig), SINEW_ERROR_INVALID_ARGUMENT);

    /* None of this left anything behind: a good rig still works. */
    sinew_rig good = rig_ok();
    assert_int_equal(sinew_rig_destroy(g_world, good), SINEW_OK);
}

static sinew_skin skin_ok(sinew_rig rig, const char* backend)
{
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = rig;
    desc.backend = backend;
    sinew_skin skin;
    assert_int_equal(sinew_world_add_skin(g_world, &desc, &skin), SINEW_OK);
    return skin;
}

static void test_bad_skins(void** state)
{
    (void)state;
    sinew_rig rig = rig_ok();
    sinew_skin skin;
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = rig;
    desc.backend = "no-such-backend";
    EXPECT_ERROR(sinew_world_add_skin(g_world, &desc, &skin), SINEW_ERROR_UNKNOWN_BACKEND);
    desc.backend = "";
    EXPECT_ERROR(sinew_world_add_skin(g_world, &desc, &skin), SINEW_ERROR_UNKNOWN_BACKEND);
    desc.backend = "lbs";
    desc.struct_size = 0;
    EXPECT_ERROR(sinew_world_add_skin(g_world, &desc, &skin), SINEW_ERROR_STRUCT_SIZE);
    desc.struct_size = sizeof desc;
    sinew_param unknown = { "no-such-parameter", "1" };
    desc.params = &unknown;
    desc.param_count = 1;
    EXPECT_ERROR(sinew_world_add_skin(g_world, &desc, &skin), SINEW_ERROR_PARAMETER);
    sinew_param bad_value = { "normals", "maybe" };
    desc.params = &bad_value;
    EXPECT_ERROR(sinew_world_add_skin(g_world, &desc, &skin), SINEW_ERROR_PARAMETER);
    desc.params = NULL;
    EXPECT_ERROR(sinew_world_add_skin(g_world, &desc, &skin), SINEW_ERROR_INVALID_ARGUMENT);
    desc.param_count = 0;
    desc.rig.id = 0x12345;
    EXPECT_ERROR(sinew_world_add_skin(g_world, &desc, &skin), SINEW_ERROR_INVALID_HANDLE);

    /* Poses: NaN, infinity, wrong joint count, bad space, NULL matrices, small struct. */
    skin = skin_ok(rig, "dqs");
    float good[32], bad[32];
    test_mat_identity(good);
    test_mat_rotation_z(good + 16, 0.5f, 1.0f, 0.0f, 0.0f);
    good[16 + 12] += 1.0f;
    sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
    pose.joint_count = 2;
    pose.matrices = good;
    assert_int_equal(sinew_skin_set_pose(g_world, skin, &pose), SINEW_OK);
    assert_int_equal(sinew_world_update(g_world, 1.0f / 60.0f), SINEW_OK);
    float before[60], after[60];
    sinew_output_desc out = SINEW_OUTPUT_DESC_INIT;
    out.vertex_capacity = 20;
    out.positions = before;
    assert_int_equal(sinew_skin_read_output(g_world, skin, &out), SINEW_OK);

    memcpy(bad, good, sizeof bad);
    bad[16 + 5] = NAN;
    pose.matrices = bad;
    EXPECT_ERROR(sinew_skin_set_pose(g_world, skin, &pose), SINEW_ERROR_NONFINITE);
    bad[16 + 5] = INFINITY;
    EXPECT_ERROR(sinew_skin_set_pose(g_world, skin, &pose), SINEW_ERROR_NONFINITE);
    pose.space = SINEW_POSE_LOCAL;
    EXPECT_ERROR(sinew_skin_set_pose(g_world, skin, &pose), SINEW_ERROR_NONFINITE);
    pose.space = (sinew_pose_space)7;
    pose.matrices = good;
    EXPECT_ERROR(sinew_skin_set_pose(g_world, skin, &pose), SINEW_ERROR_INVALID_ARGUMENT);
    pose.space = SINEW_POSE_MODEL;
    pose.joint_count = 3;
    EXPECT_ERROR(sinew_skin_set_pose(g_world, skin, &pose), SINEW_ERROR_JOINT_COUNT);
    pose.joint_count = 1;
    EXPECT_ERROR(sinew_skin_set_pose(g_world, skin, &pose), SINEW_ERROR_JOINT_COUNT);
    pose.joint_count = 2;
    pose.matrices = NULL;
    EXPECT_ERROR(sinew_skin_set_pose(g_world, skin, &pose), SINEW_ERROR_INVALID_ARGUMENT);
    pose.struct_size = 4;
    EXPECT_ERROR(sinew_skin_set_pose(g_world, skin, &pose), SINEW_ERROR_STRUCT_SIZE);
    EXPECT_ERROR(sinew_skin_set_pose(g_world, skin, NULL), SINEW_ERROR_INVALID_ARGUMENT);

    /* The refused poses changed nothing: the next frame has the previous good pose. */
    assert_int_equal(sinew_world_update(g_world, 1.0f / 60.0f), SINEW_OK);
    out.positions = after;
    assert_int_equal(sinew_skin_read_output(g_world, skin, &out), SINEW_OK);
    assert_memory_equal(before, after, sizeof before);

    /* Updates with bad time steps. */
    EXPECT_ERROR(sinew_world_update(g_world, NAN), SINEW_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(sinew_world_update(g_world, -1.0f), SINEW_ERROR_INVALID_ARGUMENT);
    /* dt 0 is a paused frame, not an error */
    assert_int_equal(sinew_world_update(g_world, 0.0f), SINEW_OK);
    EXPECT_ERROR(sinew_skin_update(g_world, skin, INFINITY), SINEW_ERROR_INVALID_ARGUMENT);

    /* Outputs: too small, NULL positions, bad strides, device outputs in a host-only build. */
    out.vertex_capacity = 19;
    EXPECT_ERROR(sinew_skin_read_output(g_world, skin, &out), SINEW_ERROR_OUTPUT_BINDING);
    out.vertex_capacity = 20;
    out.position_stride = 8;
    EXPECT_ERROR(sinew_skin_bind_output(g_world, skin, &out), SINEW_ERROR_OUTPUT_BINDING);
    out.position_stride = 14;
    EXPECT_ERROR(sinew_skin_bind_output(g_world, skin, &out), SINEW_ERROR_OUTPUT_BINDING);
    out.position_stride = 0;
    out.positions = NULL;
    EXPECT_ERROR(sinew_skin_bind_output(g_world, skin, &out), SINEW_ERROR_OUTPUT_BINDING);
    out.positions = after;
    out.kind = SINEW_OUTPUT_EXTERNAL;
    EXPECT_ERROR(sinew_skin_bind_output(g_world, skin, &out), SINEW_ERROR_UNSUPPORTED);
    out.kind = SINEW_OUTPUT_HOST;
    out.struct_size = 0;
    EXPECT_ERROR(sinew_skin_read_output(g_world, skin, &out), SINEW_ERROR_STRUCT_SIZE);

    /* Destroyed handles, and a rig in use. */
    EXPECT_ERROR(sinew_rig_destroy(g_world, rig), SINEW_ERROR_IN_USE);
    assert_int_equal(sinew_world_remove_skin(g_world, skin), SINEW_OK);
    pose.struct_size = sizeof pose;
    pose.matrices = good;
    EXPECT_ERROR(sinew_skin_set_pose(g_world, skin, &pose), SINEW_ERROR_INVALID_HANDLE);
    EXPECT_ERROR(sinew_world_remove_skin(g_world, skin), SINEW_ERROR_INVALID_HANDLE);
    EXPECT_ERROR(sinew_skin_set_backend(g_world, skin, "lbs", NULL, 0), SINEW_ERROR_INVALID_HANDLE);
    EXPECT_ERROR(sinew_skin_update(g_world, skin, 0.1f), SINEW_ERROR_INVALID_HANDLE);
    assert_null(sinew_skin_backend(g_world, skin));
    assert_int_equal(sinew_rig_destroy(g_world, rig), SINEW_OK);
    sinew_rig_info info = SINEW_RIG_INFO_INIT;
    EXPECT_ERROR(sinew_rig_get_info(g_world, rig, &info), SINEW_ERROR_INVALID_HANDLE);
    EXPECT_ERROR(sinew_rig_destroy(g_world, rig), SINEW_ERROR_INVALID_HANDLE);
    sinew_skin never = { 0 };
    EXPECT_ERROR(sinew_world_remove_skin(g_world, never), SINEW_ERROR_INVALID_HANDLE);
}

static void test_bad_worlds(void** state)
{
    (void)state;
    sinew_world* world = (sinew_world*)0x1;
    sinew_world_desc desc = SINEW_WORLD_DESC_INIT;
    desc.logger = &g_log.logger;
    desc.struct_size = 0;
    EXPECT_ERROR(sinew_world_create(&desc, &world), SINEW_ERROR_STRUCT_SIZE);
    assert_null(world);
    desc.struct_size = sizeof desc;
    sinew_allocator half = { NULL, NULL, NULL };
    desc.allocator = &half;
    EXPECT_ERROR(sinew_world_create(&desc, &world), SINEW_ERROR_INVALID_ARGUMENT);
    desc.allocator = NULL;
    sinew_job_system jobs = { NULL, 2, NULL };
    desc.jobs = &jobs;
    EXPECT_ERROR(sinew_world_create(&desc, &world), SINEW_ERROR_INVALID_ARGUMENT);
    desc.jobs = NULL;
    desc.log_level = (sinew_log_level)9;
    EXPECT_ERROR(sinew_world_create(&desc, &world), SINEW_ERROR_INVALID_ARGUMENT);
    sinew_world_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bad_rigs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_skins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_worlds, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
