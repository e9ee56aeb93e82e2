/* What the geometric backends do to real shapes, measured through sample_quality_run: the very
 * call sinew-quality's main makes, so these figures are the tool's figures.
 * SPDX-License-Identifier: MIT */
#include "test_support.h"

#include <math.h>
#include <string.h>

#include "sample_character.h"
#include "sample_quality.h"

static sample_quality_report measure(const sample_character* character, const char* backend,
                                     const char* pose_text, const char* joint)
{
    sample_quality_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.character = character;
    desc.backend = backend;
    assert_true(sample_pose_parse(pose_text, &desc.pose));
    desc.joint = joint;
    desc.thread_count = 2;
    sample_quality_report report;
    sinew_result r = sample_quality_run(&desc, &report);
    if (r != SINEW_OK) fail_msg("sample_quality_run %s %s: %s", backend, pose_text, sinew_result_string(r));
    print_message("%s %s%s%s: volume ratio %.4f, %u intersections, stretch %.3f..%.3f, %u steps\n",
                  backend, pose_text, joint ? " at " : "", joint ? joint : "", report.volume_ratio,
                  report.self_intersections, report.min_edge_stretch, report.max_edge_stretch,
                  report.steps);
    return report;
}

/* Twisting the cylinder 180 degrees at joint2, LBS collapses
 * the volume (the candy-wrapper artefact) while DQS keeps it. */
static void test_cylinder_twist_dqs_keeps_volume_lbs_loses_it(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    sample_character cylinder;
    assert_int_equal(sample_character_load(path, NULL, &cylinder), SINEW_OK);

    sample_quality_report dqs = measure(&cylinder, "dqs", "twist:180", "joint2");
    assert_true(dqs.closed);
    assert_true(dqs.volume_ratio >= 0.98 && dqs.volume_ratio <= 1.02);
    assert_int_equal(dqs.nonfinite_vertices, 0);

    sample_quality_report lbs = measure(&cylinder, "lbs", "twist:180", "joint2");
    assert_true(lbs.closed);
    assert_true(lbs.volume_ratio <= 0.93);
    assert_true(lbs.volume_ratio > 0.0);
    assert_int_equal(lbs.nonfinite_vertices, 0);

    /* Geometric backends settle on the first step after the 30-step ramp. */
    assert_int_equal(dqs.steps, SAMPLE_RAMP_STEPS + 1);
    assert_int_equal(lbs.steps, SAMPLE_RAMP_STEPS + 1);
    assert_true(dqs.settled && lbs.settled);
    assert_int_equal(dqs.rest_self_intersections, 0);
    assert_string_equal(dqs.joint_name, "joint2");
    sample_character_free(&cylinder);
}

static void test_cylinder_animation_frame(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    sample_character cylinder;
    assert_int_equal(sample_character_load(path, NULL, &cylinder), SINEW_OK);
    assert_true(cylinder.animation_count >= 1);
    sample_quality_report report = measure(&cylinder, "dqs", "anim:0:20", NULL);
    assert_int_equal(report.steps, 21);             /* frames 0..20 */
    assert_int_equal(report.joint, -1);
    assert_null(report.joint_name);
    assert_int_equal(report.nonfinite_vertices, 0);
    assert_true(report.volume_ratio > 0.9 && report.volume_ratio < 1.1);
    sample_character_free(&cylinder);
}

/* The procedural arm needs no data: the same comparison always runs. */
static void test_arm_dqs_beats_lbs_under_twist(void** state)
{
    (void)state;
    sample_character arm;
    assert_int_equal(sample_character_make_arm(48, 16, &arm), SINEW_OK);
    sample_quality_report lbs = measure(&arm, "lbs", "twist:150", NULL);
    sample_quality_report dqs = measure(&arm, "dqs", "twist:150", NULL);
    assert_string_equal(lbs.joint_name, "elbow");
    assert_int_equal(lbs.nonfinite_vertices, 0);
    assert_int_equal(dqs.nonfinite_vertices, 0);
    assert_true(lbs.volume_ratio < 0.97);
    assert_true(fabs(dqs.volume_ratio - 1.0) < fabs(lbs.volume_ratio - 1.0));
    sample_character_free(&arm);
}

/* Zero degrees is the rest pose: every figure is the rest mesh's. */
static void test_zero_pose_is_rest(void** state)
{
    (void)state;
    sample_character arm;
    assert_int_equal(sample_character_make_arm(24, 12, &arm), SINEW_OK);
    const char* backends[2] = { "lbs", "dqs" };
    for (int b = 0; b < 2; ++b) {
        sample_quality_report report = measure(&arm, backends[b], "bend:0", "elbow");
        assert_true(report.closed);
        assert_true(fabs(report.volume_ratio - 1.0) < 1e-5);
        assert_true(fabs(report.min_edge_stretch - 1.0) < 1e-5);
        assert_true(fabs(report.max_edge_stretch - 1.0) < 1e-5);
        assert_int_equal(report.self_intersections, report.rest_self_intersections);
        assert_int_equal(report.self_intersections, 0);
    }
    sample_character_free(&arm);
}

/* A bend must reach the mesh: the edges around the elbow stretch on the outside and shrink on
 * the inside (a run that ignored the pose would measure the rest mesh). */
static void test_bend_deforms_mesh(void** state)
{
    (void)state;
    sample_character arm;
    assert_int_equal(sample_character_make_arm(24, 12, &arm), SINEW_OK);
    sample_quality_report lbs = measure(&arm, "lbs", "bend:90", NULL);
    assert_true(lbs.max_edge_stretch > 1.05 || lbs.min_edge_stretch < 0.95);
    assert_int_equal(lbs.nonfinite_vertices, 0);
    sample_character_free(&arm);
}

static void test_bad_requests_are_refused(void** state)
{
    (void)state;
    sample_character arm;
    assert_int_equal(sample_character_make_arm(8, 8, &arm), SINEW_OK);
    sample_quality_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.character = &arm;
    desc.backend = "dqs";
    assert_true(sample_pose_parse("twist:90", &desc.pose));
    sample_quality_report report;

    desc.joint = "no such joint";
    assert_int_equal(sample_quality_run(&desc, &report), SINEW_ERROR_INVALID_ARGUMENT);
    desc.joint = NULL;
    assert_true(sample_pose_parse("anim:0:5", &desc.pose));   /* the arm has no animation */
    assert_int_equal(sample_quality_run(&desc, &report), SINEW_ERROR_INVALID_ARGUMENT);
    assert_true(sample_pose_parse("bend:10", &desc.pose));
    desc.backend = "no-such-backend";
    assert_int_equal(sample_quality_run(&desc, &report), SINEW_ERROR_UNKNOWN_BACKEND);
    assert_int_equal(sample_quality_run(NULL, &report), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sample_quality_run(&desc, NULL), SINEW_ERROR_INVALID_ARGUMENT);
    sample_character_free(&arm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cylinder_twist_dqs_keeps_volume_lbs_loses_it),
        cmocka_unit_test(test_cylinder_animation_frame),
        cmocka_unit_test(test_arm_dqs_beats_lbs_under_twist),
        cmocka_unit_test(test_zero_pose_is_rest),
        cmocka_unit_test(test_bend_deforms_mesh),
        cmocka_unit_test(test_bad_requests_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
