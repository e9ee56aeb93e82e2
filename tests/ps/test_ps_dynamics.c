/* Projective dynamics of the ps backend (Sec. 4, 4.1; 2019 paper Sec. 3) on the cylinder:
 * the PD energy never rises over the iterations of a step, a held pose converges, a released
 * bend oscillates and settles (and settles later with less damping), and job splits do not
 * change the result. SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps_fixture.h"
#include "ps_internal.h"

typedef struct cylinder {
    ps_test_host host;
    ps_test_rig rig;
    ps_model model;
    uint32_t joint;
    float* skinning;
} cylinder;

static void cylinder_load(cylinder* c, int uneven)
{
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_host_init(&c->host, SINEW_LOG_WARNING, uneven);
    ps_test_rig_load(&c->rig, path);
    int32_t j = sample_find_joint(&c->rig.character, "joint2");
    assert_true(j >= 0);
    c->joint = (uint32_t)j;
    assert_int_equal(ps_model_build(&c->host.api, &c->rig.view, &c->model), SINEW_OK);
    c->skinning = malloc(sizeof(float) * 16u * c->rig.view.joint_count);
}

static void cylinder_free(cylinder* c)
{
    free(c->skinning);
    ps_model_free(&c->host.api, &c->model);
    ps_test_rig_free(&c->rig);
}

static ps_sim* make_sim(cylinder* c, double damping)
{
    ps_params p;
    ps_params_default(&p);
    p.damping = damping;
    /* the energy of Sec. 4: the joints' volume pulls towards targets that move with the
     * iterate, outside it (ps_joint_volume.c) */
    p.volume.joint = 0.0;
    ps_sim* s = NULL;
    assert_int_equal(ps_sim_create(&c->host.api, &c->model, &p, &s), SINEW_OK);
    return s;
}

static void pose(cylinder* c, ps_sim* s, float bend, float twist)
{
    ps_test_skinning(&c->rig, c->joint, bend, twist, c->skinning);
    ps_sim_set_pose(s, c->skinning);
}

/* Largest move of a skin vertex in one step, relative to the bounding-box diagonal. */
static double step_move(ps_sim* s, const ps_model* m, double* scratch)
{
    uint32_t N = 2u * m->n;
    memcpy(scratch, ps_sim_positions(s), sizeof(double) * 3u * N);
    assert_int_equal(ps_sim_step(s, NULL), SINEW_OK);
    const double* x = ps_sim_positions(s);
    double worst = 0.0;
    for (uint32_t i = 0; i < m->n; ++i) {
        double d = 0.0;
        for (int c = 0; c < 3; ++c) {
            double e = x[(size_t)c * N + i] - scratch[(size_t)c * N + i];
            d += e * e;
        }
        worst = fmax(worst, d);
    }
    return sqrt(worst) / m->diagonal;
}

/* Steps until no skin vertex moves more than 1e-5 of the diagonal in a step and none does
 * for the next `hold` steps either (a single quiet step can be the turning point of a swing);
 * returns the step at which the quiet stretch began, or budget + 1 when it did not settle. */
static uint32_t settle_hold(ps_sim* s, const ps_model* m, uint32_t budget, uint32_t hold)
{
    double* scratch = malloc(sizeof(double) * 6u * m->n);
    uint32_t quiet_since = 0, k = 1;
    for (; k <= budget + hold; ++k) {
        if (step_move(s, m, scratch) >= 1e-5) {
            quiet_since = 0;
            continue;
        }
        if (!quiet_since) quiet_since = k;
        if (k - quiet_since + 1 >= hold) break;
    }
    free(scratch);
    return quiet_since && quiet_since <= budget && k <= budget + hold ? quiet_since : budget + 1;
}

static uint32_t settle(ps_sim* s, const ps_model* m, uint32_t budget)
{
    return settle_hold(s, m, budget, 1);
}

/* Local and global steps each minimise the same energy, so it never rises within a step. */
static void test_energy_decreases_within_a_step(void** state)
{
    (void)state;
    cylinder c;
    cylinder_load(&c, 0);
    ps_sim* s = make_sim(&c, 0.95);
    const float poses[][2] = {{60.0f, 0.0f}, {0.0f, 90.0f}, {120.0f, 45.0f}};
    for (size_t k = 0; k < 3; ++k) {
        pose(&c, s, poses[k][0], poses[k][1]);
        double e[11];
        assert_int_equal(ps_sim_step(s, e), SINEW_OK);
        print_message("bend %g twist %g: energy %.6g -> %.6g -> %.6g\n", poses[k][0],
                      poses[k][1], e[0], e[1], e[10]);
        for (int i = 0; i < 10; ++i) {
            /* the rotations come from a float polar decomposition: allow its rounding */
            assert_true(e[i + 1] <= e[i] * (1.0 + 1e-5) + 1e-12);
        }
        assert_true(e[10] < 0.99 * e[0]);
    }
    ps_sim_destroy(s);
    cylinder_free(&c);
}

static void test_static_pose_converges(void** state)
{
    (void)state;
    cylinder c;
    cylinder_load(&c, 0);
    ps_sim* s = make_sim(&c, 0.95);
    for (int i = 1; i <= 30; ++i) {
        pose(&c, s, 90.0f * (float)i / 30.0f, 0.0f);
        assert_int_equal(ps_sim_step(s, NULL), SINEW_OK);
    }
    /* converged: quiet for a whole second, not just at the turning point of a swing */
    uint32_t steps = settle_hold(s, &c.model, 600, 60);
    print_message("bend 90 settled %u steps after the ramp\n", steps);
    assert_true(steps <= 600);
    ps_sim_destroy(s);
    cylinder_free(&c);
}

typedef struct release {
    uint32_t settle_steps;
    double initial;   /* displacement of the watched vertex after the release step */
    double overshoot; /* most negative displacement along the initial one afterwards */
} release;

/* Bend 90 degrees, let it settle, return to the rest pose at once and watch the skin vertex
 * that lags most: it swings past its rest position and comes back (the rest shape is the only
 * equilibrium of the rest pose). */
static release run_release(cylinder* c, double damping)
{
    ps_sim* s = make_sim(c, damping);
    const ps_model* m = &c->model;
    uint32_t N = 2u * m->n;
    for (int i = 1; i <= 30; ++i) {
        pose(c, s, 90.0f * (float)i / 30.0f, 0.0f);
        assert_int_equal(ps_sim_step(s, NULL), SINEW_OK);
    }
    assert_true(settle(s, m, 1000) <= 1000);
    ps_sim_set_pose(s, NULL);
    assert_int_equal(ps_sim_step(s, NULL), SINEW_OK);
    const double* x = ps_sim_positions(s);
    uint32_t watch = 0;
    double far = -1.0;
    for (uint32_t i = 0; i < m->n; ++i) {
        double d = 0.0;
        for (int k = 0; k < 3; ++k) {
            double e = x[(size_t)k * N + i] - m->rest[3u * i + k];
            d += e * e;
        }
        if (d > far) far = d, watch = i;
    }
    release out = {0, sqrt(far), 0.0};
    double u[3];
    for (int k = 0; k < 3; ++k) u[k] = (x[(size_t)k * N + watch] - m->rest[3u * watch + k]) / out.initial;
    double* scratch = malloc(sizeof(double) * 3u * N);
    /* settled: quiet (moves below 1e-5 of the diagonal) for 30 steps in a row */
    uint32_t k = 1, quiet_since = 0;
    for (; k <= 2000; ++k) {
        double move = step_move(s, m, scratch);
        double along = 0.0;
        for (int q = 0; q < 3; ++q) along += (x[(size_t)q * N + watch] - m->rest[3u * watch + q]) * u[q];
        out.overshoot = fmin(out.overshoot, along);
        if (move >= 1e-5) {
            quiet_since = 0;
        } else {
            if (!quiet_since) quiet_since = k;
            if (k - quiet_since + 1 >= 30) break;
        }
    }
    out.settle_steps = quiet_since ? quiet_since : k;
    /* settled back at the rest shape */
    for (uint32_t i = 0; i < m->n; ++i)
        for (int q = 0; q < 3; ++q)
            assert_true(fabs(x[(size_t)q * N + i] - m->rest[3u * i + q]) < 1e-3 * m->diagonal);
    free(scratch);
    ps_sim_destroy(s);
    return out;
}

static void test_release_oscillates_and_damping_acts(void** state)
{
    (void)state;
    cylinder c;
    cylinder_load(&c, 0);
    release damped = run_release(&c, 0.9);
    release lively = run_release(&c, 0.99);
    print_message("lambda 0.90: lag %.3f, overshoot %.3f, settled in %u steps\n", damped.initial,
                  damped.overshoot, damped.settle_steps);
    print_message("lambda 0.99: lag %.3f, overshoot %.3f, settled in %u steps\n", lively.initial,
                  lively.overshoot, lively.settle_steps);
    /* secondary motion: the skin lags and swings past its rest position */
    assert_true(damped.initial > 1e-3 * c.model.diagonal);
    assert_true(damped.overshoot < -0.05 * damped.initial);
    assert_true(damped.settle_steps <= 600);
    /* the negative control: less damping, larger swing, later rest */
    assert_true(lively.overshoot < damped.overshoot);
    assert_true(lively.settle_steps > damped.settle_steps + damped.settle_steps / 4);
    cylinder_free(&c);
}

/* The local step and the right-hand side run over job ranges; any split gives the same bits. */
static void test_job_split_does_not_change_the_result(void** state)
{
    (void)state;
    cylinder a, b;
    cylinder_load(&a, 0);
    cylinder_load(&b, 1);
    ps_sim* sa = make_sim(&a, 0.95);
    ps_sim* sb = make_sim(&b, 0.95);
    for (int i = 1; i <= 5; ++i) {
        pose(&a, sa, 20.0f * i, 10.0f * i);
        pose(&b, sb, 20.0f * i, 10.0f * i);
        assert_int_equal(ps_sim_step(sa, NULL), SINEW_OK);
        assert_int_equal(ps_sim_step(sb, NULL), SINEW_OK);
    }
    assert_memory_equal(ps_sim_positions(sa), ps_sim_positions(sb),
                        sizeof(double) * 6u * a.model.n);
    uint32_t rc = a.model.render_count;
    float* pa = malloc(sizeof(float) * 6u * rc);
    float* pb = malloc(sizeof(float) * 6u * rc);
    ps_sim_upsample(sa, pa, 12u, pa + 3u * rc, 12u);
    ps_sim_upsample(sb, pb, 12u, pb + 3u * rc, 12u);
    assert_memory_equal(pa, pb, sizeof(float) * 6u * rc);
    free(pa);
    free(pb);
    ps_sim_destroy(sa);
    ps_sim_destroy(sb);
    cylinder_free(&a);
    cylinder_free(&b);
}

/* The scalar, AVX2 and AVX-512 local steps give the same bits (each where this CPU runs it). */
static void test_kernels_agree(void** state)
{
    (void)state;
    cylinder c;
    cylinder_load(&c, 0);
    const sinew_simd kinds[] = {SINEW_SIMD_SCALAR, SINEW_SIMD_AVX2, SINEW_SIMD_AVX512};
    double* reference = NULL;
    size_t bytes = sizeof(double) * 6u * c.model.n;
    int ran = 0;
    for (size_t k = 0; k < 3; ++k) {
        ps_params p;
        ps_params_default(&p);
        p.simd = kinds[k];
        ps_sim* s = NULL;
        sinew_result r = ps_sim_create(&c.host.api, &c.model, &p, &s);
        if (r == SINEW_ERROR_BACKEND_UNAVAILABLE) {
            print_message("simd=%s: not available here\n", sinew_simd_name(kinds[k]));
            continue;
        }
        assert_int_equal(r, SINEW_OK);
        for (int i = 1; i <= 6; ++i) {
            pose(&c, s, 25.0f * i, -15.0f * i);
            assert_int_equal(ps_sim_step(s, NULL), SINEW_OK);
        }
        if (!reference) {
            reference = malloc(bytes);
            memcpy(reference, ps_sim_positions(s), bytes);
        } else {
            assert_memory_equal(reference, ps_sim_positions(s), bytes);
        }
        ++ran;
        ps_sim_destroy(s);
    }
    print_message("%d kernel sets compared\n", ran);
    assert_true(ran >= 1);
    free(reference);
    cylinder_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_energy_decreases_within_a_step),
        cmocka_unit_test(test_static_pose_converges),
        cmocka_unit_test(test_release_oscillates_and_damping_acts),
        cmocka_unit_test(test_job_split_does_not_change_the_result),
        cmocka_unit_test(test_kernels_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
