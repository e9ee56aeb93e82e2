/* The rotation of the polar decomposition (polar3.h): R orthonormal with det +1 and R^T F
 * symmetric positive semi-definite (for inverted F: the closest rotation), the Newton and SVD
 * paths agreeing where both apply, the det(F) < 1e-5 switch, and a finite rotation for every
 * finite input (the identity for the zero matrix). SPDX-License-Identifier: MIT */
#include <float.h>
#include <math.h>
#include <string.h>

#include "math_test_util.h"
#include "polar3.h"

#define ROT_TOL 1e-5

/* P = R^T F (double). */
static void stretch_of(const float R[9], const float F[9], double P[9])
{
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            P[3 * i + j] = (double)R[i] * F[j] + (double)R[3 + i] * F[3 + j] +
                           (double)R[6 + i] * F[6 + j];
}

/* R^T F symmetric and positive semi-definite, both to `tol` relative to |F|: the defining
 * property of the polar factor of an F with det >= 0. Semi-definiteness by all principal
 * minors (not only the leading ones, which would miss a zero pivot). */
static void check_polar_property(const float R[9], const float F[9], double tol,
                                 const char* what, int index)
{
    double P[9];
    stretch_of(R, F, P);
    double n = fmax(math_frobenius(F), 1e-30);
    for (int i = 0; i < 3; ++i)
        for (int j = i + 1; j < 3; ++j)
            math_assert_le(fabs(P[3 * i + j] - P[3 * j + i]), tol * n, what, index);
    double S[9];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) S[3 * i + j] = 0.5 * (P[3 * i + j] + P[3 * j + i]);
    for (int i = 0; i < 3; ++i) math_assert_le(-S[4 * i], tol * n, what, index);
    const int pairs[3][2] = {{0, 1}, {1, 2}, {0, 2}};
    for (int p = 0; p < 3; ++p) {
        int a = pairs[p][0], b = pairs[p][1];
        double minor = S[4 * a] * S[4 * b] - S[3 * a + b] * S[3 * a + b];
        math_assert_le(-minor, tol * n * n, what, index);
    }
    double det = S[0] * (S[4] * S[8] - S[5] * S[7]) - S[1] * (S[3] * S[8] - S[5] * S[6]) +
                 S[2] * (S[3] * S[7] - S[4] * S[6]);
    math_assert_le(-det, tol * n * n * n, what, index);
}

static void check_rotation(const float R[9], const char* what, int index)
{
    if (!math_all_finite(R, 9)) fail_msg("%s: non-finite R (case %d)", what, index);
    math_assert_le(math_rotation_error(R), ROT_TOL, what, index);
}

/* Stretches of skinning (deformation gradients near a rotation) up to strong ones: Newton
 * path, R^T F symmetric positive definite, and R equal to the rotation F was built from. */
static void test_newton_path(void** state)
{
    (void)state;
    math_rng rng = {11};
    const double ranges[3][2] = {{0.7, 1.3}, {0.2, 2.0}, {0.01, 1.0}};
    for (int n = 0; n < 30000; ++n) {
        const double* r = ranges[n % 3];
        double s[3];
        for (int k = 0; k < 3; ++k) s[k] = math_rng_range(&rng, r[0], r[1]);
        float F[9], R[9];
        double Rex[9];
        math_matrix_from_svd(&rng, s, F, &Rex[0]);
        int path = sinew_polar3(F, R);
        if (math_det(F) > 2e-5) assert_int_equal(path, SINEW_POLAR3_PATH_NEWTON);
        check_rotation(R, "newton path", n);
        check_polar_property(R, F, 1e-5, "newton path", n);
        float Rexf[9];
        for (int k = 0; k < 9; ++k) Rexf[k] = (float)Rex[k];
        /* The polar factor's condition number is about 2 / (s1 + s2) (the two smallest). */
        math_assert_le(math_max_diff(R, Rexf, 9), 2e-6 / r[0], "newton path vs exact", n);
    }
}

/* Where Newton converges and det F > 0 both paths must give the same rotation. */
static void test_newton_matches_svd(void** state)
{
    (void)state;
    math_rng rng = {12};
    for (int n = 0; n < 20000; ++n) {
        double s[3];
        for (int k = 0; k < 3; ++k) s[k] = math_rng_range(&rng, 0.1, 3.0);
        float F[9], Rn[9], Rs[9];
        math_matrix_from_svd(&rng, s, F, NULL);
        assert_int_equal(sinew_polar3_newton(F, Rn), 1);
        sinew_polar3_svd(F, Rs);
        check_rotation(Rn, "newton", n);
        check_rotation(Rs, "svd", n);
        math_assert_le(math_max_diff(Rn, Rs, 9), 1e-5, "newton vs svd", n);
    }
    /* Random entries with det > 0.05 (well enough conditioned for 1e-5 agreement). */
    int compared = 0;
    for (int n = 0; compared < 10000; ++n) {
        float F[9], Rn[9], Rs[9];
        for (int k = 0; k < 9; ++k) F[k] = (float)math_rng_range(&rng, -1.0, 1.0);
        if (math_det(F) < 0.05) continue;
        ++compared;
        assert_int_equal(sinew_polar3_newton(F, Rn), 1);
        sinew_polar3_svd(F, Rs);
        math_assert_le(math_max_diff(Rn, Rs, 9), 1e-5, "newton vs svd, random entries", n);
    }
}

/* The switch of projective skinning Sec. 6 sits at det F = 1e-5. */
static void test_det_switch(void** state)
{
    (void)state;
    float F[9] = {0}, R[9];
    F[0] = 1.0f;
    F[4] = 1.0f;
    F[8] = 2e-5f;
    assert_int_equal(sinew_polar3(F, R), SINEW_POLAR3_PATH_NEWTON);
    check_rotation(R, "det 2e-5", 0);
    assert_true(math_max_diff(R, (const float[9]){1, 0, 0, 0, 1, 0, 0, 0, 1}, 9) < 1e-6);
    F[8] = 5e-6f;
    assert_int_equal(sinew_polar3(F, R), SINEW_POLAR3_PATH_SVD);
    check_rotation(R, "det 5e-6", 0);
    assert_true(math_max_diff(R, (const float[9]){1, 0, 0, 0, 1, 0, 0, 0, 1}, 9) < 1e-6);
    F[8] = -1.0f;
    assert_int_equal(sinew_polar3(F, R), SINEW_POLAR3_PATH_SVD);
    check_rotation(R, "det -1", 0);
}

/* Inverted elements: R is a rotation (never a reflection) and is the closest one. For
 * F = R1 diag(s1, s2, -s3) R2^T with s3 the smallest, that rotation is R1 R2^T, and no
 * nearby rotation has a larger tr(R^T F). */
static void test_inverted(void** state)
{
    (void)state;
    math_rng rng = {13};
    for (int n = 0; n < 10000; ++n) {
        double s[3] = {math_rng_range(&rng, 0.5, 2.0), math_rng_range(&rng, 0.5, 2.0),
                       -math_rng_range(&rng, 0.0, 0.4)};
        float F[9], R[9];
        double Rex[9];
        math_matrix_from_svd(&rng, s, F, Rex);
        assert_int_equal(sinew_polar3(F, R), SINEW_POLAR3_PATH_SVD);
        check_rotation(R, "inverted", n);
        float Rexf[9];
        for (int k = 0; k < 9; ++k) Rexf[k] = (float)Rex[k];
        math_assert_le(math_max_diff(R, Rexf, 9), 1e-5, "inverted vs exact", n);
        /* Local optimality: small rotations applied to R never increase tr(R^T F). */
        double P[9];
        stretch_of(R, F, P);
        double best = P[0] + P[4] + P[8];
        for (int t = 0; t < 3; ++t) {
            double axis[3], len = 0.0, RQ[9], Rd[9];
            for (int k = 0; k < 3; ++k) {
                axis[k] = math_rng_range(&rng, -1.0, 1.0);
                len += axis[k] * axis[k];
            }
            len = sqrt(len) + 1e-12;
            for (int k = 0; k < 3; ++k) axis[k] /= len;
            for (int k = 0; k < 9; ++k) Rd[k] = R[k];
            /* Rodrigues: C = I + sin(a) K + (1 - cos(a)) K^2 for a 1e-2 rad turn. */
            double K[9] = {0, -axis[2], axis[1], axis[2], 0, -axis[0], -axis[1], axis[0], 0};
            double C[9];
            for (int i = 0; i < 3; ++i) {
                for (int j = 0; j < 3; ++j) {
                    double k2 = K[3 * i] * K[j] + K[3 * i + 1] * K[3 + j] + K[3 * i + 2] * K[6 + j];
                    C[3 * i + j] = (i == j ? 1.0 : 0.0) + sin(1e-2) * K[3 * i + j] +
                                   (1.0 - cos(1e-2)) * k2;
                }
            }
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j)
                    RQ[3 * i + j] =
                        Rd[3 * i] * C[j] + Rd[3 * i + 1] * C[3 + j] + Rd[3 * i + 2] * C[6 + j];
            double tr = 0.0;
            for (int k = 0; k < 9; ++k) tr += RQ[k] * F[k];
            math_assert_le(tr - best, 1e-6 * math_frobenius(F), "inverted optimality", n);
        }
    }
}

/* Flat and degenerate F: still a finite rotation, and the polar property where it is unique
 * (rank 2). The zero matrix gives the identity. */
static void test_degenerate(void** state)
{
    (void)state;
    const float I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    float Z[9] = {0}, R[9];
    assert_int_equal(sinew_polar3(Z, R), SINEW_POLAR3_PATH_SVD);
    assert_memory_equal(R, I, sizeof I);
    math_rng rng = {14};
    for (int n = 0; n < 10000; ++n) {
        double s[3] = {math_rng_range(&rng, 0.1, 2.0), math_rng_range(&rng, 0.1, 2.0), 0.0};
        if (n % 2) s[1] = 0.0;
        float F[9];
        math_matrix_from_svd(&rng, s, F, NULL);
        sinew_polar3(F, R);
        check_rotation(R, "rank 1-2", n);
        if (s[1] > 0.0) check_polar_property(R, F, 1e-5, "rank 2", n);
        /* Nearly singular with either sign of det. */
        double t[3] = {math_rng_range(&rng, 0.5, 2.0), math_rng_range(&rng, 0.5, 2.0),
                       (n % 2 ? -1.0 : 1.0) * pow(10.0, math_rng_range(&rng, -8.0, -4.0))};
        math_matrix_from_svd(&rng, t, F, NULL);
        sinew_polar3(F, R);
        check_rotation(R, "nearly singular", n);
        /* det F > 1e-5 but condition number beyond 1 / eps: rounding can flip the sign of the
         * determinant inside Newton, which would then converge to a reflection. */
        double u[3] = {1e3, math_rng_range(&rng, 1e-3, 1.0), math_rng_range(&rng, 1e-6, 1e-3)};
        math_matrix_from_svd(&rng, u, F, NULL);
        sinew_polar3(F, R);
        check_rotation(R, "positive det, cond > 1e7", n);
    }
}

/* Extreme scales and mixed magnitudes: finite rotations. Newton with a positive but tiny
 * relative determinant either converges or hands over to the SVD. */
static void test_scale_and_finite(void** state)
{
    (void)state;
    math_rng rng = {15};
    const float scales[] = {1e-30f, 1e-3f, 1e3f, 1e30f};
    const float odd[] = {0.0f, 1e-40f, -1e-42f, FLT_MIN, 1.0f, -1e-20f, 1e30f, -3.0f};
    for (int n = 0; n < 4000; ++n) {
        float F[9], R[9];
        double s[3] = {math_rng_range(&rng, 0.3, 2.0), math_rng_range(&rng, 0.3, 2.0),
                       math_rng_range(&rng, 0.3, 2.0)};
        math_matrix_from_svd(&rng, s, F, NULL);
        for (int k = 0; k < 9; ++k) F[k] *= scales[n % 4];
        sinew_polar3(F, R);
        check_rotation(R, "scaled", n);
        check_polar_property(R, F, 1e-5, "scaled", n);
        for (int k = 0; k < 9; ++k) F[k] = odd[math_rng_next(&rng) % 8];
        sinew_polar3(F, R);
        check_rotation(R, "odd entries", n);
    }
    /* Condition numbers up to 1e12 with det >= 1e-5. */
    for (int e = 0; e <= 12; ++e) {
        float F[9] = {0}, R[9];
        F[0] = 1e6f;
        F[4] = 1e6f;
        F[8] = powf(10.0f, (float)-e);
        sinew_polar3(F, R);
        check_rotation(R, "diag(1e6, 1e6, small)", e);
        assert_true(math_max_diff(R, (const float[9]){1, 0, 0, 0, 1, 0, 0, 0, 1}, 9) < 1e-5);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_newton_path),   cmocka_unit_test(test_newton_matches_svd),
        cmocka_unit_test(test_det_switch),    cmocka_unit_test(test_inverted),
        cmocka_unit_test(test_degenerate),    cmocka_unit_test(test_scale_and_finite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
