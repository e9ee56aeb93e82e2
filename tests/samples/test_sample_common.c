/* The shared sample code that is not metrics: option parsing, pose specs, JSON output,
 * quantiles, joint choice and posing. SPDX-License-Identifier: MIT */
#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample_character.h"
#include "sample_json.h"
#include "sample_options.h"
#include "sample_quality.h"
#include "sample_stats.h"

static void test_option_values(void** state)
{
    (void)state;
    char* argv[] = { "prog", "--frames", "20", "--backend=dqs", "--framesx", "--json", "--set", NULL };
    const int argc = 7;
    const char* value = NULL;
    int i = 1;
    assert_int_equal(sample_option_value(argc, argv, &i, "--frames", &value), 1);
    assert_string_equal(value, "20");
    assert_int_equal(i, 2);
    i = 3;
    assert_int_equal(sample_option_value(argc, argv, &i, "--backend", &value), 1);
    assert_string_equal(value, "dqs");
    assert_int_equal(i, 3);
    i = 4;   /* a longer name is another option, not --frames with a glued value */
    assert_int_equal(sample_option_value(argc, argv, &i, "--frames", &value), 0);
    assert_true(sample_option_flag(argv, 5, "--json"));
    assert_false(sample_option_flag(argv, 4, "--json"));
    i = 6;   /* the value is missing at the end */
    assert_int_equal(sample_option_value(argc, argv, &i, "--set", &value), -1);
}

static void test_number_parsing(void** state)
{
    (void)state;
    uint32_t u = 0;
    assert_true(sample_parse_u32("--n", "42", 1, 100, &u));
    assert_int_equal(u, 42);
    assert_false(sample_parse_u32("--n", "0", 1, 100, &u));
    assert_false(sample_parse_u32("--n", "101", 1, 100, &u));
    assert_false(sample_parse_u32("--n", "-1", 0, 100, &u));
    assert_false(sample_parse_u32("--n", "12x", 0, 100, &u));
    assert_false(sample_parse_u32("--n", "", 0, 100, &u));
    assert_false(sample_parse_u32("--n", "99999999999999999999", 0, UINT32_MAX, &u));
    float f = 0.0f;
    assert_true(sample_parse_float("--f", "-12.5", &f));
    assert_true(f == -12.5f);
    assert_false(sample_parse_float("--f", "nan", &f));
    assert_false(sample_parse_float("--f", "inf", &f));
    assert_false(sample_parse_float("--f", "1e999", &f));
    assert_false(sample_parse_float("--f", "3 ", &f));
}

static void test_params(void** state)
{
    (void)state;
    sample_params params;
    memset(&params, 0, sizeof params);
    assert_true(sample_params_add(&params, "iterations=10"));
    assert_true(sample_params_add(&params, "mode="));
    assert_false(sample_params_add(&params, "=5"));
    assert_false(sample_params_add(&params, "novalue"));
    assert_int_equal(params.count, 2);
    assert_string_equal(params.params[0].key, "iterations");
    assert_string_equal(params.params[0].value, "10");
    assert_string_equal(params.params[1].key, "mode");
    assert_string_equal(params.params[1].value, "");
    for (int i = 2; i < SAMPLE_MAX_PARAMS; ++i) assert_true(sample_params_add(&params, "k=v"));
    assert_false(sample_params_add(&params, "one=too many"));
    sample_params_free(&params);
    assert_int_equal(params.count, 0);
}

static void test_pose_specs(void** state)
{
    (void)state;
    sample_pose_spec pose;
    assert_true(sample_pose_parse("bend:90", &pose));
    assert_int_equal(pose.kind, SAMPLE_POSE_BEND);
    assert_true(pose.degrees == 90.0f);
    assert_true(sample_pose_parse("twist:-45.5", &pose));
    assert_int_equal(pose.kind, SAMPLE_POSE_TWIST);
    assert_true(pose.degrees == -45.5f);
    assert_true(sample_pose_parse("anim:2:120", &pose));
    assert_int_equal(pose.kind, SAMPLE_POSE_ANIM);
    assert_int_equal(pose.animation, 2);
    assert_int_equal(pose.frame, 120);
    const char* bad[] = { "bend", "bend:", "bend:x", "bend:nan", "twist:1e9", "anim:1", "anim:1:",
                          "anim::3", "anim:-1:3", "anim:1:2:3", "spin:10", "bendy:10", "" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        if (sample_pose_parse(bad[i], &pose)) fail_msg("accepted \"%s\"", bad[i]);
    }
}

static void test_quantiles(void** state)
{
    (void)state;
    double v[5] = { 5, 1, 4, 2, 3 };
    assert_true(sample_quantile(v, 5, 0.5) == 3.0);
    assert_true(sample_quantile(v, 5, 0.0) == 1.0);
    assert_true(sample_quantile(v, 5, 1.0) == 5.0);
    assert_true(fabs(sample_quantile(v, 5, 0.95) - 4.8) < 1e-12);
    double w[4] = { 4, 1, 3, 2 };
    assert_true(sample_quantile(w, 4, 0.5) == 2.5);
    assert_true(isnan(sample_quantile(w, 0, 0.5)));
    assert_true(isnan(sample_quantile(w, 4, 1.5)));
    double t0 = sample_now_seconds(), t1 = sample_now_seconds();
    assert_true(t1 >= t0);
}

static void test_json_output(void** state)
{
    (void)state;
    FILE* f = tmpfile();
    assert_non_null(f);
    sample_json json;
    sample_json_init(&json, f);
    sample_json_begin_object(&json, NULL);
    sample_json_string(&json, "name", "a \"quoted\"\\ line\n");
    sample_json_uint(&json, "count", 3);
    sample_json_int(&json, "offset", -2);
    sample_json_number(&json, "ratio", 0.5);
    sample_json_number(&json, "missing", NAN);
    sample_json_bool(&json, "ok", 1);
    sample_json_string(&json, "none", NULL);
    sample_json_begin_array(&json, "runs");
    sample_json_number(&json, NULL, 1.25);
    sample_json_number(&json, NULL, 2);
    sample_json_end_array(&json);
    sample_json_begin_array(&json, "empty");
    sample_json_end_array(&json);
    sample_json_end_object(&json);
    rewind(f);
    char text[1024];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    assert_string_equal(text,
        "{\n"
        "  \"name\": \"a \\\"quoted\\\"\\\\ line\\n\",\n"
        "  \"count\": 3,\n"
        "  \"offset\": -2,\n"
        "  \"ratio\": 0.5,\n"
        "  \"missing\": null,\n"
        "  \"ok\": true,\n"
        "  \"none\": null,\n"
        "  \"runs\": [1.25, 2],\n"
        "  \"empty\": []\n"
        "}\n");
}

/* The arm: shoulder -> elbow -> wrist along x. */
static void test_arm_joints_and_axes(void** state)
{
    (void)state;
    sample_character arm;
    assert_int_equal(sample_character_make_arm(8, 6, &arm), SINEW_OK);
    assert_int_equal(arm.rig.render_mesh.vertex_count, 8 * 6 + 2);
    assert_int_equal(arm.rig.render_mesh.triangle_count, 2 * 6 * 7 + 2 * 6);
    assert_int_equal(sample_find_joint(&arm, "elbow"), 1);
    assert_int_equal(sample_find_joint(&arm, "knee"), -1);
    assert_int_equal(sample_find_joint(&arm, NULL), -1);
    assert_int_equal(sample_default_joint(&arm), 1);

    float twist[3], bend[3];
    assert_int_equal(sample_joint_axes(&arm, 1, twist, bend), SINEW_OK);
    assert_true(twist[0] == 1.0f && twist[1] == 0.0f && twist[2] == 0.0f);
    /* y and z tie as least aligned with x; the lower (y) wins: x cross y = z. */
    assert_true(bend[0] == 0.0f && bend[1] == 0.0f && bend[2] == 1.0f);
    /* A leaf (the wrist) takes the direction from its parent. */
    assert_int_equal(sample_joint_axes(&arm, 2, twist, bend), SINEW_OK);
    assert_true(twist[0] == 1.0f);
    assert_int_equal(sample_joint_axes(&arm, 3, twist, bend), SINEW_ERROR_JOINT_INDEX);

    /* Bending the elbow 90 degrees about z carries the wrist from (6,0,0) to (0,6,0) and
     * leaves the shoulder alone. */
    float model[3 * 16];
    assert_int_equal(sample_bend_twist_pose(&arm, 1, 90.0f, 0.0f, model), SINEW_OK);
    assert_true(fabsf(model[16 * 0 + 12] + 6.0f) < 1e-6f);
    assert_true(fabsf(model[16 * 2 + 12] - 0.0f) < 1e-5f);
    assert_true(fabsf(model[16 * 2 + 13] - 6.0f) < 1e-5f);
    assert_true(fabsf(model[16 * 1 + 12]) < 1e-6f && fabsf(model[16 * 1 + 13]) < 1e-6f);
    /* A twist about the bone's own axis moves no joint position, only orientations. */
    assert_int_equal(sample_bend_twist_pose(&arm, 1, 0.0f, 90.0f, model), SINEW_OK);
    assert_true(fabsf(model[16 * 2 + 12] - 6.0f) < 1e-5f && fabsf(model[16 * 2 + 13]) < 1e-5f);
    assert_true(fabsf(model[16 * 2 + 5]) < 1e-6f);          /* y axis of the wrist turned */
    assert_true(fabsf(fabsf(model[16 * 2 + 6]) - 1.0f) < 1e-6f);
    /* The motion starts at rest. */
    assert_int_equal(sample_motion_pose(&arm, 1, 0.0, model), SINEW_OK);
    assert_memory_equal(model, arm.rig.skeleton.bind_matrices, sizeof model);
    assert_int_equal(sample_motion_pose(&arm, 1, NAN, model), SINEW_ERROR_NONFINITE);
    sample_character_free(&arm);

    assert_int_equal(sample_character_make_arm(1, 6, &arm), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sample_character_make_arm(4, 2, &arm), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sample_character_make_arm(100000, 100000, &arm), SINEW_ERROR_LIMIT);
    assert_int_equal(sample_character_make_arm(4, 4, NULL), SINEW_ERROR_INVALID_ARGUMENT);
}

/* Several joints turned in one pose: on the bind pose sample_turn_joint is
 * sample_bend_twist_pose; a parent's turn carries the child's axes along. */
static void test_turn_several_joints(void** state)
{
    (void)state;
    sample_character arm;
    assert_int_equal(sample_character_make_arm(8, 6, &arm), SINEW_OK);
    float model[3 * 16], reference[3 * 16];
    memcpy(model, arm.rig.skeleton.bind_matrices, sizeof model);
    assert_int_equal(sample_turn_joint(&arm, 1, 70.0f, 20.0f, model), SINEW_OK);
    assert_int_equal(sample_bend_twist_pose(&arm, 1, 70.0f, 20.0f, reference), SINEW_OK);
    assert_memory_equal(model, reference, sizeof model);

    /* Shoulder bent 90 about z (elbow to (-6,6,0)), then the elbow 90 about its carried axis,
     * still z: the wrist goes from (-6,12,0) to (-12,6,0). */
    memcpy(model, arm.rig.skeleton.bind_matrices, sizeof model);
    assert_int_equal(sample_turn_joint(&arm, 0, 90.0f, 0.0f, model), SINEW_OK);
    assert_int_equal(sample_turn_joint(&arm, 1, 90.0f, 0.0f, model), SINEW_OK);
    assert_true(fabsf(model[16 * 1 + 12] + 6.0f) < 1e-5f &&
                fabsf(model[16 * 1 + 13] - 6.0f) < 1e-5f);
    assert_true(fabsf(model[16 * 2 + 12] + 12.0f) < 1e-5f &&
                fabsf(model[16 * 2 + 13] - 6.0f) < 1e-5f);
    /* Shoulder twisted 90 about x turns the elbow's bend axis from z to -y: the elbow's bend
     * then swings the wrist to (0,0,6), not to (0,6,0) as about the rest axis. */
    memcpy(model, arm.rig.skeleton.bind_matrices, sizeof model);
    assert_int_equal(sample_turn_joint(&arm, 0, 0.0f, 90.0f, model), SINEW_OK);
    float z[3] = {0.0f, 0.0f, 1.0f}, turned[3];
    sample_joint_turned_direction(&arm, 1, model, z, turned);
    assert_true(fabsf(turned[0]) < 1e-6f && fabsf(turned[1] + 1.0f) < 1e-6f);
    assert_int_equal(sample_turn_joint(&arm, 1, 90.0f, 0.0f, model), SINEW_OK);
    assert_true(fabsf(model[16 * 2 + 12]) < 1e-5f && fabsf(model[16 * 2 + 13]) < 1e-5f &&
                fabsf(model[16 * 2 + 14] - 6.0f) < 1e-5f);
    assert_int_equal(sample_turn_joint(&arm, 1, NAN, 0.0f, model), SINEW_ERROR_NONFINITE);
    sample_character_free(&arm);
}

/* A branching skeleton built by hand: the longest chain decides, ties by length, then index.
 *      0
 *     / \
 *    1   4
 *    |   |
 *    2   5      chains 0-1-2-3 and 0-4-5-6 both have 4 joints; the second is longer
 *    |   |
 *    3   6
 */
static void test_default_joint_of_a_branching_skeleton(void** state)
{
    (void)state;
    int32_t parents[7] = { -1, 0, 1, 2, 0, 4, 5 };
    float bind[7 * 16];
    const float x[7] = { 0, 1, 2, 3, -1, -2, -3.5f };
    for (int j = 0; j < 7; ++j) {
        memset(bind + 16 * j, 0, 16 * sizeof(float));
        bind[16 * j] = bind[16 * j + 5] = bind[16 * j + 10] = bind[16 * j + 15] = 1.0f;
        bind[16 * j + 12] = x[j];
    }
    sample_character c;
    memset(&c, 0, sizeof c);
    c.rig.skeleton.joint_count = 7;
    c.rig.skeleton.parents = parents;
    c.rig.skeleton.bind_matrices = bind;
    assert_int_equal(sample_default_joint(&c), 4);     /* 0-4-5-6: position floor(3/2) = 1 */
    bind[16 * 6 + 12] = -3.0f;                         /* equal lengths: the lower leaf (3) */
    assert_int_equal(sample_default_joint(&c), 1);
    parents[3] = -1;                                   /* 0-4-5-6 alone has 4 joints */
    assert_int_equal(sample_default_joint(&c), 4);
    c.rig.skeleton.joint_count = 1;                    /* one joint: itself */
    assert_int_equal(sample_default_joint(&c), 0);
    float twist[3], bend[3];
    assert_int_equal(sample_joint_axes(&c, 0, twist, bend), SINEW_ERROR_INVALID_ARGUMENT);
    c.rig.skeleton.joint_count = 0;
    assert_int_equal(sample_default_joint(&c), -1);
    assert_int_equal(sample_default_joint(NULL), -1);
}

static void test_missing_character_file(void** state)
{
    (void)state;
    sample_character c;
    assert_int_equal(sample_character_load("/nonexistent/sinew/character.ini", NULL, &c),
                     SINEW_ERROR_FILE_NOT_FOUND);
    assert_int_equal(sample_character_load(NULL, NULL, &c), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sample_character_load("x.ini", NULL, NULL), SINEW_ERROR_INVALID_ARGUMENT);
    sample_character_free(&c);
    sample_character_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_option_values),
        cmocka_unit_test(test_number_parsing),
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_pose_specs),
        cmocka_unit_test(test_quantiles),
        cmocka_unit_test(test_json_output),
        cmocka_unit_test(test_arm_joints_and_axes),
        cmocka_unit_test(test_turn_several_joints),
        cmocka_unit_test(test_default_joint_of_a_branching_skeleton),
        cmocka_unit_test(test_missing_character_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
