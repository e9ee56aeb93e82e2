/* Pose discontinuities in ps (backends/ps/ps_jump.c, shared with fps): the detection on
 * hand-made poses of a three-joint chain (a joint turning 30 against 60 degrees within one
 * step, a root moving 0.4 against 0.6 rig heights, a hips joint moving under a fixed scene
 * root, jump_angle=0 and jump_distance=0 turning each test off), the parameters' checks, and
 * through the runtime: the male's loop jump, a flagged pose on the cylinder and the log lines
 * (jump_world.c). SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>

#include "jump_world.h"
#include "ps_fixture.h"
#include "ps_internal.h"

#define PI 3.14159265358979323846

/* A chain along x: joint 0 at the origin (a root), joint 1 at x = 1, joint 2 at x = 2, bind
 * matrices translations only, rig height 2. */
typedef struct chain {
    int32_t parents[3];
    float bind[48];
    ps_jump jump;
} chain;

static void identity(float* m)
{
    memset(m, 0, 64);
    m[0] = m[5] = m[10] = m[15] = 1.0f;
}

static void chain_make(chain* c, double angle, double distance)
{
    memset(c, 0, sizeof *c);
    c->parents[0] = -1;
    c->parents[1] = 0;
    c->parents[2] = 1;
    for (int j = 0; j < 3; ++j) {
        identity(c->bind + 16 * j);
        c->bind[16 * j + 12] = (float)j;
    }
    c->jump.backend = "ps";
    c->jump.joint_count = 3;
    c->jump.parents = c->parents;
    c->jump.bind = c->bind;
    c->jump.height = 2.0;
    c->jump.params.angle = angle;
    c->jump.params.distance = distance;
}

/* m = rotation by `degrees` about z through (cx, 0, 0), times m. */
static void rotate_about(float* m, double degrees, float cx)
{
    double a = degrees * PI / 180.0, c = cos(a), s = sin(a);
    float r[16];
    identity(r);
    r[0] = (float)c, r[1] = (float)s, r[4] = (float)-s, r[5] = (float)c;
    r[12] = (float)(cx - c * cx), r[13] = (float)(-s * cx);
    float out[16];
    for (int col = 0; col < 4; ++col)
        for (int row = 0; row < 4; ++row) {
            float v = 0.0f;
            for (int k = 0; k < 4; ++k) v += r[4 * k + row] * m[4 * col + k];
            out[4 * col + row] = v;
        }
    memcpy(m, out, 64);
}

/* Skinning matrices of the chain with joints first.. turned by `degrees` about joint `first`
 * and everything moved by (dx, 0, 0) from `first` on. */
static void chain_pose(float* skinning, int first, double degrees, float dx)
{
    for (int j = 0; j < 3; ++j) {
        identity(skinning + 16 * j);
        if (j < first) continue;
        rotate_about(skinning + 16 * j, degrees, (float)first);
        skinning[16 * j + 12] += dx;
    }
}

static void test_detect_angle(void** state)
{
    (void)state;
    chain c;
    chain_make(&c, 45.0, 0.5);
    float rest[48], a30[48], a60[48];
    chain_pose(rest, 0, 0.0, 0.0f);
    chain_pose(a30, 1, 30.0, 0.0f);
    chain_pose(a60, 1, 60.0, 0.0f);
    ps_jump_cause cause;
    assert_false(ps_jump_detect(&c.jump, rest, a30, &cause));
    assert_int_equal(cause.kind, PS_JUMP_NONE);
    assert_true(ps_jump_detect(&c.jump, rest, a60, &cause));
    assert_int_equal(cause.kind, PS_JUMP_ANGLE);
    assert_int_equal(cause.joint, 1);
    assert_true(fabs(cause.amount - 60.0) < 0.01);
    /* relative to the previous pose, not to rest: 30 to 60 is a step of 30 */
    assert_false(ps_jump_detect(&c.jump, a30, a60, &cause));
    /* the whole chain turning 30 degrees about its root: only the root turns, by 30 */
    float whole[48];
    chain_pose(whole, 0, 30.0, 0.0f);
    assert_false(ps_jump_detect(&c.jump, rest, whole, &cause));
    /* a uniform scale of the whole pose turns nothing */
    float scaled[48];
    memcpy(scaled, a30, sizeof scaled);
    for (int k = 0; k < 48; ++k)
        if (k % 16 != 15) scaled[k] *= 1.2f;
    assert_false(ps_jump_detect(&c.jump, a30, scaled, &cause));
    /* jump_angle=0: never */
    c.jump.params.angle = 0.0;
    assert_false(ps_jump_detect(&c.jump, rest, a60, &cause));
    float a170[48];
    chain_pose(a170, 1, 170.0, 0.0f);
    assert_false(ps_jump_detect(&c.jump, rest, a170, &cause));
    c.jump.params.angle = 45.0;
    assert_true(ps_jump_detect(&c.jump, rest, a170, &cause));
    assert_true(fabs(cause.amount - 170.0) < 0.01);
}

static void test_detect_distance(void** state)
{
    (void)state;
    chain c;
    chain_make(&c, 45.0, 0.5);
    float rest[48], near[48], far[48];
    chain_pose(rest, 0, 0.0, 0.0f);
    chain_pose(near, 0, 0.0, 0.4f * 2.0f);
    chain_pose(far, 0, 0.0, 0.6f * 2.0f);
    ps_jump_cause cause;
    assert_false(ps_jump_detect(&c.jump, rest, near, &cause));
    assert_true(ps_jump_detect(&c.jump, rest, far, &cause));
    assert_int_equal(cause.kind, PS_JUMP_DISTANCE);
    assert_int_equal(cause.joint, 0);
    assert_true(fabs(cause.amount - 0.6) < 1e-5);
    /* a hips joint under a fixed scene root carries the teleport */
    float hips[48];
    chain_pose(hips, 1, 0.0, 0.6f * 2.0f);
    assert_true(ps_jump_detect(&c.jump, rest, hips, &cause));
    assert_int_equal(cause.kind, PS_JUMP_DISTANCE);
    assert_int_equal(cause.joint, 1);
    /* a turn of the whole chain moves joint 2 far in model space, but not against its parent */
    float whole[48];
    chain_pose(whole, 0, 40.0, 0.0f);
    assert_false(ps_jump_detect(&c.jump, rest, whole, &cause));
    /* jump_distance=0: never */
    c.jump.params.distance = 0.0;
    assert_false(ps_jump_detect(&c.jump, rest, far, &cause));
    assert_false(ps_jump_detect(&c.jump, rest, hips, &cause));
}

static void test_parameters(void** state)
{
    (void)state;
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    ps_params p;
    assert_int_equal(ps_params_parse(&host.api, NULL, 0, NULL, &p), SINEW_OK);
    assert_true(p.jump.angle == 45.0 && p.jump.distance == 0.5);
    const sinew_param good[] = {{"jump_angle", "0"}, {"jump_distance", "2.5"}};
    assert_int_equal(ps_params_parse(&host.api, good, 2, NULL, &p), SINEW_OK);
    assert_true(p.jump.angle == 0.0 && p.jump.distance == 2.5);
    const sinew_param edge[] = {{"jump_angle", "180"}, {"jump_distance", "0"}};
    assert_int_equal(ps_params_parse(&host.api, edge, 2, NULL, &p), SINEW_OK);
    const sinew_param bad[][2] = {{{"jump_angle", "-1"}, {"iterations", "10"}},
                                  {{"jump_angle", "181"}, {"iterations", "10"}},
                                  {{"jump_angle", "nan"}, {"iterations", "10"}},
                                  {{"jump_angle", ""}, {"iterations", "10"}},
                                  {{"jump_distance", "-0.1"}, {"iterations", "10"}},
                                  {{"jump_distance", "1e7"}, {"iterations", "10"}},
                                  {{"jump_distance", "half"}, {"iterations", "10"}},
                                  {{"jump_angle", "30"}, {"jump_angle", "40"}}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        sinew_test_log_reset(&host.log);
        assert_int_equal(ps_params_parse(&host.api, bad[i], 2, NULL, &p), SINEW_ERROR_PARAMETER);
        assert_int_equal(host.log.count[SINEW_LOG_ERROR], 1);
        assert_non_null(strstr(host.log.last, bad[i][0].key));
    }
}

static void test_male_loop(void** state)
{
    (void)state;
    jump_check_male_loop("ps");
}

static void test_flag(void** state)
{
    (void)state;
    jump_check_flag("ps");
}

static void test_log(void** state)
{
    (void)state;
    jump_check_log("ps");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detect_angle),  cmocka_unit_test(test_detect_distance),
        cmocka_unit_test(test_parameters),    cmocka_unit_test(test_male_loop),
        cmocka_unit_test(test_flag),          cmocka_unit_test(test_log),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
