/* The conversion of skinning matrices to unit dual quaternions used by dqs: exact for rigid
 * transforms, the rotation of the polar decomposition for stretched or sheared matrices
 * (checked by its defining property, not by a second implementation), a proper rotation for
 * mirrors and collapsed joints, and the translation kept. SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>

#include "dual_quat.h"
#include "skin_fixture.h"

#define assert_near(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (tol)))                                                             \
            fail_msg("%s = %.9g, expected %.9g (tolerance %g)", #a, a_, b_, (double)(tol));        \
    } while (0)

/* Rotation matrix r[row][col] of the real part of dq, after checking that the dual quaternion
 * is unit (|r| = 1, r . e = 0) and canonical (w >= 0), and the translation it carries. */
static void unpack(const float dq[8], double r[3][3], double t[3])
{
    double x = dq[0], y = dq[1], z = dq[2], w = dq[3];
    assert_near(x * x + y * y + z * z + w * w, 1.0, 1e-6);
    assert_near(x * dq[4] + y * dq[5] + z * dq[6] + w * dq[7], 0.0, 1e-6);
    assert_true(w >= 0.0);
    r[0][0] = 1 - 2 * (y * y + z * z);
    r[0][1] = 2 * (x * y - w * z);
    r[0][2] = 2 * (x * z + w * y);
    r[1][0] = 2 * (x * y + w * z);
    r[1][1] = 1 - 2 * (x * x + z * z);
    r[1][2] = 2 * (y * z - w * x);
    r[2][0] = 2 * (x * z - w * y);
    r[2][1] = 2 * (y * z + w * x);
    r[2][2] = 1 - 2 * (x * x + y * y);
    /* t = 2 (e r*): vector part w e_v - e_w r_v + r_v x e_v. */
    double ex = dq[4], ey = dq[5], ez = dq[6], ew = dq[7];
    t[0] = 2 * (w * ex - ew * x + (y * ez - z * ey));
    t[1] = 2 * (w * ey - ew * y + (z * ex - x * ez));
    t[2] = 2 * (w * ez - ew * z + (x * ey - y * ex));
}

static void mat_of(const float m[16], double a[3][3])
{
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) a[r][c] = m[4 * c + r];
}

static void test_rigid(void** state)
{
    (void)state;
    skin_rng rng = {31};
    for (int i = 0; i < 200; ++i) {
        float m[16], dq[8];
        skin_mat_random(m, &rng, false);
        sinew_dual_quat_from_matrix(m, dq);
        double r[3][3], t[3], a[3][3];
        unpack(dq, r, t);
        mat_of(m, a);
        for (int p = 0; p < 3; ++p) {
            for (int q = 0; q < 3; ++q) assert_near(r[p][q], a[p][q], 2e-6);
            assert_near(t[p], m[12 + p], 2e-6);
        }
    }
    /* Half turns about each axis (trace -1: Shepperd's other branches). */
    for (int axis = 0; axis < 3; ++axis) {
        float m[16], dq[8];
        skin_mat_rotation(m, axis == 0, axis == 1, axis == 2, SKIN_PI, NULL);
        sinew_dual_quat_from_matrix(m, dq);
        assert_near(fabs(dq[axis]), 1.0, 1e-6);
        assert_near(dq[3], 0.0, 1e-6);
    }
}

/* For det(A) > 0 the polar factor Q of A = Q P is the rotation with Q^T A symmetric positive
 * definite. */
static void check_polar(const float m[16])
{
    float dq[8];
    sinew_dual_quat_from_matrix(m, dq);
    double q[3][3], t[3], a[3][3], p[3][3];
    unpack(dq, q, t);
    mat_of(m, a);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            p[i][j] = q[0][i] * a[0][j] + q[1][i] * a[1][j] + q[2][i] * a[2][j];
    double scale = sinew_mat3_frobenius(a);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < i; ++j) assert_near(p[i][j], p[j][i], 4e-6 * scale);
    /* Positive definite: positive leading principal minors. */
    assert_true(p[0][0] > 0.0);
    assert_true(p[0][0] * p[1][1] - p[0][1] * p[1][0] > 0.0);
    assert_true(sinew_mat3_det(p) > 0.0);
    for (int i = 0; i < 3; ++i) assert_near(t[i], m[12 + i], 2e-6 * fmax(1.0, fabs(m[12 + i])));
}

static void test_polar(void** state)
{
    (void)state;
    skin_rng rng = {77};
    for (int i = 0; i < 200; ++i) {
        float m[16];
        skin_mat_random(m, &rng, true); /* rotation x stretch x shear */
        check_polar(m);
    }
    /* Rotation times a symmetric stretch: the rotation itself comes back. */
    for (int i = 0; i < 50; ++i) {
        float r[16], m[16], dq[8];
        skin_mat_random(r, &rng, false);
        double s[3] = {skin_rand_range(&rng, 0.2, 5.0), skin_rand_range(&rng, 0.2, 5.0),
                       skin_rand_range(&rng, 0.2, 5.0)};
        memcpy(m, r, sizeof m);
        for (int c = 0; c < 3; ++c)
            for (int row = 0; row < 3; ++row) m[4 * c + row] = (float)(r[4 * c + row] * s[c]);
        sinew_dual_quat_from_matrix(m, dq);
        double q[3][3], t[3], a[3][3];
        unpack(dq, q, t);
        mat_of(r, a);
        for (int p = 0; p < 3; ++p)
            for (int k = 0; k < 3; ++k) assert_near(q[p][k], a[p][k], 1e-5);
    }
    /* Uniform scales far from 1. */
    const double scales[3] = {1e-3, 1e3, 37.0};
    for (int i = 0; i < 3; ++i) {
        float r[16], m[16], dq[8];
        skin_mat_random(r, &rng, false);
        memcpy(m, r, sizeof m);
        for (int k = 0; k < 12; ++k) m[k] = (float)(r[k] * scales[i]);
        sinew_dual_quat_from_matrix(m, dq);
        double q[3][3], t[3], a[3][3];
        unpack(dq, q, t);
        mat_of(r, a);
        for (int p = 0; p < 3; ++p)
            for (int k = 0; k < 3; ++k) assert_near(q[p][k], a[p][k], 1e-5);
    }
}

static void check_proper_rotation(const double r[3][3])
{
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double d = r[0][i] * r[0][j] + r[1][i] * r[1][j] + r[2][i] * r[2][j];
            assert_near(d, i == j ? 1.0 : 0.0, 1e-6);
        }
    assert_near(sinew_mat3_det(r), 1.0, 1e-6);
}

/* No rotation is a mirror or a collapse: the backend keeps the first two axes. */
static void test_mirror_and_collapse(void** state)
{
    (void)state;
    skin_rng rng = {5};
    for (int i = 0; i < 20; ++i) { /* mirrored rotations: the rotation comes back */
        float r[16], m[16], dq[8];
        skin_mat_random(r, &rng, false);
        memcpy(m, r, sizeof m);
        for (int row = 0; row < 3; ++row) m[8 + row] = -r[8 + row];
        sinew_dual_quat_from_matrix(m, dq);
        double q[3][3], t[3], a[3][3];
        unpack(dq, q, t);
        mat_of(r, a);
        for (int p = 0; p < 3; ++p)
            for (int k = 0; k < 3; ++k) assert_near(q[p][k], a[p][k], 1e-5);
        for (int p = 0; p < 3; ++p) assert_near(t[p], m[12 + p], 2e-6);
    }
    /* A joint scaled to nothing: identity rotation, translation kept. */
    float zero[16] = {0}, dq[8];
    zero[12] = 1.0f;
    zero[13] = -2.0f;
    zero[15] = 1.0f;
    sinew_dual_quat_from_matrix(zero, dq);
    double q[3][3], t[3];
    unpack(dq, q, t);
    for (int p = 0; p < 3; ++p)
        for (int k = 0; k < 3; ++k) assert_near(q[p][k], p == k ? 1.0 : 0.0, 1e-6);
    assert_near(t[0], 1.0, 1e-6);
    assert_near(t[1], -2.0, 1e-6);
    /* Flattened onto a line along (0.6, 0.8, 0): a rotation whose x axis is that line. */
    float line[16] = {0.6f, 0.8f, 0, 0, 1.2f, 1.6f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    sinew_dual_quat_from_matrix(line, dq);
    unpack(dq, q, t);
    check_proper_rotation(q);
    assert_near(q[0][0], 0.6, 1e-6);
    assert_near(q[1][0], 0.8, 1e-6);
    /* Minus identity (det -1). */
    float minus[16] = {-1, 0, 0, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 1};
    sinew_dual_quat_from_matrix(minus, dq);
    unpack(dq, q, t);
    check_proper_rotation(q);
    assert_near(q[0][0], -1.0, 1e-6);
    assert_near(q[1][1], -1.0, 1e-6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rigid),
        cmocka_unit_test(test_polar),
        cmocka_unit_test(test_mirror_and_collapse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
