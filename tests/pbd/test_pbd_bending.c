/* The bending constraint of pbd on its own (pbd_kernels.h): the dihedral angle against a
 * brute-force one and its gradients against central differences of that one; the gradients
 * sum to zero and have no moment (translations and rotations leave the angle alone); one
 * projection brings the angle closer to its rest value, in plain PBD and in XPBD; a flat pair
 * with rest angle pi, and any pair at its rest angle, is left alone bit for bit; a pair turned
 * too far is let go. SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pbd_kernels.h"
#include "test_support.h"

#define PAIRS 500

/* Four particles as columns of 4 (every x, then every y, then every z). */
typedef struct pair_shape {
    float x[12];
} pair_shape;

static const uint32_t order[4] = {0, 1, 2, 3};

static void pair_point(const pair_shape* s, int k, double out[3])
{
    for (int c = 0; c < 3; ++c) out[c] = s->x[4 * c + k];
}

static void sub3(const double a[3], const double b[3], double out[3])
{
    for (int c = 0; c < 3; ++c) out[c] = a[c] - b[c];
}

static double dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* The angle between the triangles (p0, p1, p2) and (p1, p0, p3) by brute force, in double:
 * the parts of p2 - p0 and p3 - p0 across the edge, the angle between them, and the side from
 * the turn of one into the other about the edge (past pi where it turns against the edge). */
static double brute_angle(const double p[4][3])
{
    double e[3], u[3], v[3];
    sub3(p[1], p[0], e);
    sub3(p[2], p[0], u);
    sub3(p[3], p[0], v);
    double e2 = dot3(e, e), su = dot3(u, e) / e2, sv = dot3(v, e) / e2;
    for (int c = 0; c < 3; ++c) {
        u[c] -= su * e[c];
        v[c] -= sv * e[c];
    }
    double cosine = dot3(u, v) / sqrt(dot3(u, u) * dot3(v, v));
    double angle = acos(fmax(-1.0, fmin(1.0, cosine)));
    double turn[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                      u[0] * v[1] - u[1] * v[0]};
    return dot3(turn, e) <= 0.0 ? angle : 2.0 * 3.14159265358979323846 - angle;
}

static double brute_shape_angle(const pair_shape* s)
{
    double p[4][3];
    for (int k = 0; k < 4; ++k) pair_point(s, k, p[k]);
    return brute_angle(p);
}

/* A pair with an edge along about x, p2 on one side and p3 on the other, bent by `bend`
 * radians about the edge and placed at random; unit-sized, with a random skew. */
static pair_shape random_pair(double bend)
{
    double r[8];
    for (int i = 0; i < 8; ++i) r[i] = (double)rand() / RAND_MAX - 0.5;
    double p[4][3] = {{0.0, 0.0, 0.0}, {1.0, 0.2 * r[0], 0.2 * r[1]},
                      {0.5 + r[2], 0.8 + 0.3 * r[3], 0.0},
                      {0.5 + r[4], -(0.8 + 0.3 * r[5]) * cos(bend), -(0.8 + 0.3 * r[5]) * sin(bend)}};
    /* a rotation about a random axis and a shift, so nothing lines up with the axes */
    double a[3] = {r[6], r[7], 0.7}, n = sqrt(dot3(a, a)), t = 2.0 * r[0] + 0.3;
    for (int c = 0; c < 3; ++c) a[c] /= n;
    pair_shape s;
    for (int k = 0; k < 4; ++k) {
        double x[3] = {p[k][0], p[k][1], p[k][2]}, ax[3] = {a[1] * x[2] - a[2] * x[1],
                                                            a[2] * x[0] - a[0] * x[2],
                                                            a[0] * x[1] - a[1] * x[0]};
        double d = dot3(a, x);
        for (int c = 0; c < 3; ++c) {
            double rot = x[c] * cos(t) + ax[c] * sin(t) + a[c] * d * (1.0 - cos(t));
            s.x[4 * c + k] = (float)(rot + 3.0 * r[c + 2]);
        }
    }
    return s;
}

/* The angle agrees with the brute-force one, and the gradients with its central differences
 * (double precision, steps of 1e-6 of the pair's unit size). */
static void test_gradient(void** state)
{
    (void)state;
    srand(7);
    double worst_angle = 0.0, worst_grad = 0.0;
    for (int i = 0; i < PAIRS; ++i) {
        pair_shape s = random_pair(2.5 * ((double)rand() / RAND_MAX - 0.5));
        float g[4][3];
        double phi = pbd_dihedral(s.x, 4, order, g);
        worst_angle = fmax(worst_angle, fabs(phi - brute_shape_angle(&s)));
        double p[4][3];
        for (int k = 0; k < 4; ++k) pair_point(&s, k, p[k]);
        for (int k = 0; k < 4; ++k)
            for (int c = 0; c < 3; ++c) {
                const double h = 1e-6;
                double keep = p[k][c];
                p[k][c] = keep + h;
                double up = brute_angle(p);
                p[k][c] = keep - h;
                double down = brute_angle(p);
                p[k][c] = keep;
                worst_grad = fmax(worst_grad, fabs((up - down) / (2.0 * h) - g[k][c]));
            }
    }
    print_message("%d pairs: angle within %.3g of brute force, gradients within %.3g of "
                  "central differences\n", PAIRS, worst_angle, worst_grad);
    /* measured 3.6e-7 and 5.0e-7: single-precision rounding */
    assert_true(worst_angle < 1e-5);
    assert_true(worst_grad < 1e-5);
}

/* Translations and rotations leave the angle alone: the gradients sum to zero and have no
 * moment about the origin. */
static void test_invariance(void** state)
{
    (void)state;
    srand(11);
    double worst_sum = 0.0, worst_moment = 0.0;
    for (int i = 0; i < PAIRS; ++i) {
        pair_shape s = random_pair(2.0 * ((double)rand() / RAND_MAX - 0.5));
        float g[4][3];
        pbd_dihedral(s.x, 4, order, g);
        double sum[3] = {0.0, 0.0, 0.0}, moment[3] = {0.0, 0.0, 0.0}, scale = 0.0;
        for (int k = 0; k < 4; ++k) {
            double p[3];
            pair_point(&s, k, p);
            double gk[3] = {g[k][0], g[k][1], g[k][2]};
            for (int c = 0; c < 3; ++c) sum[c] += gk[c];
            moment[0] += p[1] * gk[2] - p[2] * gk[1];
            moment[1] += p[2] * gk[0] - p[0] * gk[2];
            moment[2] += p[0] * gk[1] - p[1] * gk[0];
            scale = fmax(scale, sqrt(dot3(gk, gk)) * (1.0 + sqrt(dot3(p, p))));
        }
        worst_sum = fmax(worst_sum, sqrt(dot3(sum, sum)) / scale);
        worst_moment = fmax(worst_moment, sqrt(dot3(moment, moment)) / scale);
    }
    print_message("gradient sums within %.3g, moments within %.3g (relative)\n", worst_sum,
                  worst_moment);
    assert_true(worst_sum < 1e-6);
    assert_true(worst_moment < 1e-5);
}

/* A single bending constraint over particles 0..3 with unit masses (or those given). */
typedef struct one_pair {
    uint32_t p[4];
    float w[4], rest, alpha, lambda;
    uint32_t offsets[2];
    pbd_constraints c;
    pbd_solve s;
} one_pair;

static void one_pair_init(one_pair* o, pair_shape* shape, float rest, int xpbd, float alpha)
{
    memset(o, 0, sizeof *o);
    o->rest = rest;
    o->alpha = alpha;
    o->offsets[1] = 1;
    for (int k = 0; k < 4; ++k) {
        o->p[k] = (uint32_t)k;
        o->w[k] = 1.0f + 0.5f * (float)k;
        o->c.bending_p[k] = &o->p[k];
        o->c.bending_w[k] = &o->w[k];
    }
    o->c.particle_count = 4;
    o->c.bending_count = 1;
    o->c.bending_rest = &o->rest;
    o->c.bending_alpha = &o->alpha;
    o->c.bending_offsets = o->offsets;
    o->c.colour_count = 1;
    o->s.c = &o->c;
    o->s.x = shape->x;
    o->s.N = 4;
    o->s.bending_lambda = &o->lambda;
    o->s.xpbd = xpbd;
    o->s.bending_k = 1.0f;
    o->s.bending = pbd_bending_scalar;
}

/* One projection moves the angle towards its rest value (plain PBD at stiffness 1 and XPBD
 * with a small compliance nearly onto it, XPBD with a large one part of the way), and moves
 * the particles' centre of mass by nothing. */
static void test_projection(void** state)
{
    (void)state;
    srand(13);
    double worst[3] = {0.0, 0.0, 0.0}, drift = 0.0;
    const float alphas[3] = {0.0f, 1e-3f, 1.0f};
    for (int i = 0; i < PAIRS; ++i)
        for (int m = 0; m < 3; ++m) {
            double bend = 1.4 * ((double)rand() / RAND_MAX - 0.5);
            pair_shape s = random_pair(bend);
            float rest = pbd_dihedral(s.x, 4, order, NULL) + (float)(0.3 * (rand() % 2 ? 1 : -1));
            one_pair o;
            one_pair_init(&o, &s, rest, m > 0, alphas[m]);
            double before[3] = {0.0, 0.0, 0.0}, after[3] = {0.0, 0.0, 0.0};
            for (int k = 0; k < 4; ++k)
                for (int c = 0; c < 3; ++c) before[c] += s.x[4 * c + k] / o.w[k];
            double C0 = pbd_dihedral(s.x, 4, order, NULL) - rest;
            pbd_bending_scalar(&o.s, 0, 1);
            double C1 = pbd_dihedral(s.x, 4, order, NULL) - rest;
            assert_true(fabs(C1) < fabs(C0));
            worst[m] = fmax(worst[m], fabs(C1 / C0));
            for (int k = 0; k < 4; ++k)
                for (int c = 0; c < 3; ++c) after[c] += s.x[4 * c + k] / o.w[k];
            for (int c = 0; c < 3; ++c) drift = fmax(drift, fabs(after[c] - before[c]));
        }
    print_message("after one projection the angle error is at most %.3g (PBD), %.3g (XPBD, "
                  "alpha~ 1e-3), %.3g (XPBD, alpha~ 1) of what it was; the centre of mass moved "
                  "%.3g\n", worst[0], worst[1], worst[2], drift);
    /* measured 0.039, 0.037 and 0.13: what the linearisation leaves of a 0.3 radian error,
     * and XPBD's compliance holding part of it back */
    assert_true(worst[0] < 0.1);
    assert_true(worst[1] < 0.1);
    assert_true(worst[2] < 0.5);
    assert_true(drift < 1e-5);
}

static void project_and_compare(pair_shape shape, float rest)
{
    for (int xpbd = 0; xpbd <= 1; ++xpbd) {
        pair_shape s = shape;
        one_pair o;
        one_pair_init(&o, &s, rest, xpbd, 1e-3f);
        pbd_bending_scalar(&o.s, 0, 1);
        assert_memory_equal(s.x, shape.x, sizeof s.x);
        assert_true(o.lambda == 0.0f);
    }
}

/* A flat pair with rest angle pi, and any pair at its own rest angle, keeps its bits. */
static void test_at_rest(void** state)
{
    (void)state;
    pair_shape flat = {{0.0f, 1.0f, 0.4f, 0.7f, 0.0f, 0.0f, 0.9f, -1.1f, 0.0f, 0.0f, 0.0f, 0.0f}};
    assert_true(pbd_dihedral(flat.x, 4, order, NULL) == PBD_PI);
    project_and_compare(flat, PBD_PI);
    srand(17);
    for (int i = 0; i < PAIRS; ++i) {
        pair_shape s = random_pair(0.0);
        project_and_compare(s, pbd_dihedral(s.x, 4, order, NULL));
        s = random_pair(2.0 * ((double)rand() / RAND_MAX - 0.5));
        project_and_compare(s, pbd_dihedral(s.x, 4, order, NULL));
    }
}

/* The correction's factor: 1 up to 3 pi / 8 from the rest angle, falling to 0 at 3 pi / 4,
 * the short way round; a pair turned further is let go. */
static void test_fade(void** state)
{
    (void)state;
    float C = 0.5f;
    assert_true(pbd_bending_fade(&C) && C == 0.5f);
    C = -1.0f;
    assert_true(pbd_bending_fade(&C) && C == -1.0f);
    C = 0.5f * PBD_BEND_LET_GO + 0.5f * (0.5f * PBD_BEND_LET_GO); /* half way down the ramp */
    float expect = 0.5f * C;
    assert_true(pbd_bending_fade(&C) && fabsf(C - expect) < 1e-6f);
    C = PBD_BEND_LET_GO;
    assert_false(pbd_bending_fade(&C));
    C = -3.0f;
    assert_false(pbd_bending_fade(&C));
    C = 2.0f * PBD_PI - 0.25f; /* the short way round: -0.25 */
    assert_true(pbd_bending_fade(&C) && fabsf(C + 0.25f) < 1e-6f);
    /* a pair let go keeps its bits */
    pair_shape s = random_pair(0.3);
    project_and_compare(s, pbd_dihedral(s.x, 4, order, NULL) + 2.5f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gradient),   cmocka_unit_test(test_invariance),
        cmocka_unit_test(test_projection), cmocka_unit_test(test_at_rest),
        cmocka_unit_test(test_fade),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
