/* Poses outside the sane range of sinew.h (finite, yet scaled or moved far beyond the rig) are
 * refused by sinew_skin_set_pose with one log line, and the skin keeps its last good pose:
 * lbs writes no inf or NaN, dqs does not fall back to the rest shape.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>

#include "test_rigs.h"
#include "test_support.h"

#define VERTICES 20u /* the bar of 5 rings */

static sinew_test_log g_log;

typedef struct scene {
    sinew_world* world;
    test_bar bar;
    sinew_rig rig;
    sinew_skin skin;
} scene;

static void scene_open(scene* s, const char* backend)
{
    sinew_test_log_init(&g_log);
    s->world = sinew_test_world(&g_log, 1);
    assert_int_equal(sinew_rig_create(s->world, test_bar_make(&s->bar, 5), &s->rig), SINEW_OK);
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = s->rig;
    desc.backend = backend;
    assert_int_equal(sinew_world_add_skin(s->world, &desc, &s->skin), SINEW_OK);
}

static sinew_result set_pose(scene* s, sinew_pose_space space, const float* matrices)
{
    sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
    pose.space = space;
    pose.joint_count = 2;
    pose.matrices = matrices;
    sinew_test_log_reset(&g_log);
    return sinew_skin_set_pose(s->world, s->skin, &pose);
}

static void read_positions(scene* s, float* out)
{
    assert_int_equal(sinew_world_update(s->world, 1.0f / 60.0f), SINEW_OK);
    sinew_output_desc o = SINEW_OUTPUT_DESC_INIT;
    o.vertex_capacity = VERTICES;
    o.positions = out;
    assert_int_equal(sinew_skin_read_output(s->world, s->skin, &o), SINEW_OK);
}

/* A good pose (the child bent 90 degrees), then bad ones: each is refused with one line and
 * the output stays that of the good pose. */
static void keeps_last_good_pose(const char* backend)
{
    scene s;
    scene_open(&s, backend);
    float good[32], expected[VERTICES * 3], got[VERTICES * 3];
    test_mat_identity(good);
    test_mat_rotation_z(good + 16, 1.5707964f, 1.0f, 0.0f, 0.0f);
    assert_int_equal(set_pose(&s, SINEW_POSE_MODEL, good), SINEW_OK);
    read_positions(&s, expected);

    float bad[32];
    const float scales[] = { 2e38f, 1e5f };
    for (int k = 0; k < 2; ++k) {
        memcpy(bad, good, sizeof bad);
        for (int i = 0; i < 32; ++i) if (i % 16 < 12) bad[i] *= scales[k];
        sinew_result r = set_pose(&s, SINEW_POSE_MODEL, bad);
        print_message("  %s, scaled by %g: %s: %s\n", backend, (double)scales[k],
                      sinew_result_string(r), g_log.last);
        assert_int_equal(r, SINEW_ERROR_INVALID_ARGUMENT);
        assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
        read_positions(&s, got);
        for (uint32_t i = 0; i < VERTICES * 3; ++i) {
            assert_true(isfinite(got[i]));
            assert_float_equal(got[i], expected[i], 1e-6f);
        }
    }
    /* Moved 1e7 rig sizes away (the bar's box with the origin has a diagonal near 2). */
    memcpy(bad, good, sizeof bad);
    bad[12] = bad[16 + 12] = 2e7f;
    assert_int_equal(set_pose(&s, SINEW_POSE_MODEL, bad), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    /* Local transforms whose forward kinematics leaves the range: refused the same way. */
    float local[32];
    test_mat_identity(local);
    test_mat_identity(local + 16);
    local[0] = local[5] = local[10] = 200.0f;
    local[16 + 0] = local[16 + 5] = local[16 + 10] = 200.0f;
    assert_int_equal(set_pose(&s, SINEW_POSE_LOCAL, local), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    read_positions(&s, got);
    for (uint32_t i = 0; i < VERTICES * 3; ++i) assert_float_equal(got[i], expected[i], 1e-6f);
    sinew_world_destroy(s.world);
}

static void test_lbs_keeps_last_good_pose(void** state)
{
    (void)state;
    keeps_last_good_pose("lbs");
}

static void test_dqs_keeps_last_good_pose(void** state)
{
    (void)state;
    keeps_last_good_pose("dqs");
}

/* Inside the range: large but plausible poses (a scale of 1000, a move of 1e4 rig sizes) are
 * accepted. */
static void test_range_admits_large_poses(void** state)
{
    (void)state;
    scene s;
    scene_open(&s, "lbs");
    float m[32];
    test_mat_identity(m);
    test_mat_identity(m + 16);
    for (int i = 0; i < 32; ++i) if (i % 16 < 12) m[i] *= 1000.0f;
    assert_int_equal(set_pose(&s, SINEW_POSE_MODEL, m), SINEW_OK);
    test_mat_identity(m);
    test_mat_identity(m + 16);
    m[12] = m[16 + 12] = 2e4f;
    assert_int_equal(set_pose(&s, SINEW_POSE_MODEL, m), SINEW_OK);
    float got[VERTICES * 3];
    read_positions(&s, got);
    assert_float_equal(got[0], s.bar.positions[0] + 2e4f, 1e-2f);
    sinew_world_destroy(s.world);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lbs_keeps_last_good_pose),
        cmocka_unit_test(test_dqs_keeps_last_good_pose),
        cmocka_unit_test(test_range_admits_large_poses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
