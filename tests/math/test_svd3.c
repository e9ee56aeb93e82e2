/* The branch-free 3x3 SVD of svd3.h: A = U diag(S) V^T to 1e-5 relative, U and V rotations,
 * S sorted with the sign of det A on S[2], on random, ill-conditioned, rank-deficient,
 * inverted, diagonal and repeated-value matrices, and finite factors for every finite input.
 * SPDX-License-Identifier: MIT */
#include <float.h>
#include <math.h>
#include <string.h>

#include "math_test_util.h"
#include "svd3.h"

#define RECON_TOL 1e-5
#define ROT_TOL 1e-5

/* Every property of one decomposition; `sigma` (may be NULL) are the exact singular values
 * the matrix was built from, sorted by decreasing magnitude, with the sign on the last. */
static void check_svd(const float A[9], const double* sigma, const char* what, int index)
{
    float U[9], S[3], V[9];
    sinew_svd3(A, U, S, V);
    if (!math_all_finite(U, 9) || !math_all_finite(S, 3) || !math_all_finite(V, 9))
        fail_msg("%s: non-finite factor (case %d)", what, index);
    math_assert_le(math_rotation_error(U), ROT_TOL, what, index);
    math_assert_le(math_rotation_error(V), ROT_TOL, what, index);
    math_assert_le(math_reconstruction_error(A, U, S, V), RECON_TOL, what, index);
    double slack = 1e-6 * fabs(S[0]);
    if (!(S[0] >= 0.0f && S[0] >= S[1] - slack && S[1] >= fabsf(S[2]) - slack))
        fail_msg("%s: singular values %g %g %g not sorted (case %d)", what, S[0], S[1], S[2],
                 index);
    double det = math_det(A);
    double norm = math_frobenius(A);
    if (fabs(det) > 1e-3 * norm * norm * norm && (det < 0.0) != (S[2] < 0.0f))
        fail_msg("%s: det %g but S[2] = %g (case %d)", what, det, S[2], index);
    if (sigma) {
        for (int k = 0; k < 3; ++k)
            math_assert_le(fabs(S[k] - sigma[k]), 1e-5 * fabs(sigma[0]), what, index);
    }
}

/* Sorts |s| decreasingly and puts the sign of the product on the last. */
static void sorted_sigma(const double s[3], double out[3])
{
    double a[3] = {fabs(s[0]), fabs(s[1]), fabs(s[2])};
    for (int i = 0; i < 3; ++i)
        for (int j = i + 1; j < 3; ++j)
            if (a[j] > a[i]) {
                double t = a[i];
                a[i] = a[j];
                a[j] = t;
            }
    double sign = (s[0] < 0) != (s[1] < 0) ? -1.0 : 1.0;
    if (s[2] < 0) sign = -sign;
    out[0] = a[0];
    out[1] = a[1];
    out[2] = sign * a[2];
}

static void check_built(math_rng* rng, const double s[3], const char* what, int index)
{
    float A[9];
    double sigma[3];
    math_matrix_from_svd(rng, s, A, NULL);
    sorted_sigma(s, sigma);
    check_svd(A, sigma, what, index);
}

static void test_random_entries(void** state)
{
    (void)state;
    math_rng rng = {1};
    for (int n = 0; n < 20000; ++n) {
        float A[9];
        for (int k = 0; k < 9; ++k) A[k] = (float)math_rng_range(&rng, -1.0, 1.0);
        check_svd(A, NULL, "uniform entries", n);
    }
}

/* Singular values over eight decades: the Jacobi sweeps on A^T A alone fail these by up to
 * 1e-2 without the one-sided refinement. */
static void test_ill_conditioned(void** state)
{
    (void)state;
    math_rng rng = {2};
    for (int n = 0; n < 20000; ++n) {
        double s[3];
        for (int k = 0; k < 3; ++k) s[k] = pow(10.0, -8.0 * math_rng_unit(&rng));
        if (n % 2) {
            s[0] = 1.0;
            s[1] = pow(10.0, -4.0 * math_rng_unit(&rng));
            s[2] = s[1] * 1e-3 * math_rng_unit(&rng);
        }
        check_built(&rng, s, "ill-conditioned", n);
    }
}

static void test_rank_deficient(void** state)
{
    (void)state;
    math_rng rng = {3};
    for (int n = 0; n < 5000; ++n) {
        double s2[3] = {math_rng_range(&rng, 0.1, 2.0), math_rng_range(&rng, 0.01, 2.0), 0.0};
        check_built(&rng, s2, "rank 2", n);
        double s1[3] = {math_rng_range(&rng, 0.1, 2.0), 0.0, 0.0};
        check_built(&rng, s1, "rank 1", n);
        /* Exactly rank 1 in float: rows are power-of-two multiples of one row. */
        float A[9];
        for (int k = 0; k < 3; ++k) {
            A[k] = (float)math_rng_range(&rng, -1.0, 1.0);
            A[3 + k] = 2.0f * A[k];
            A[6 + k] = -0.5f * A[k];
        }
        check_svd(A, NULL, "exact rank 1", n);
        float U[9], S[3], V[9];
        sinew_svd3(A, U, S, V);
        math_assert_le(fabs(S[1]), 1e-6 * S[0], "exact rank 1", n);
        math_assert_le(fabs(S[2]), 1e-6 * S[0], "exact rank 1", n);
        /* Exactly rank 2: the third column is the sum of the first two... up to rounding. */
        for (int k = 0; k < 6; ++k) A[k] = (float)math_rng_range(&rng, -1.0, 1.0);
        for (int k = 0; k < 3; ++k) A[6 + k] = A[k] + A[3 + k];
        check_svd(A, NULL, "rank 2 rows", n);
    }
}

/* The zero matrix is exact: U = V = I, S = 0. */
static void test_zero_and_identity(void** state)
{
    (void)state;
    const float I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    float Z[9] = {0}, U[9], S[3], V[9];
    sinew_svd3(Z, U, S, V);
    assert_memory_equal(U, I, sizeof I);
    assert_memory_equal(V, I, sizeof I);
    for (int k = 0; k < 3; ++k) assert_true(S[k] == 0.0f);
    sinew_svd3(I, U, S, V);
    assert_memory_equal(U, I, sizeof I);
    assert_memory_equal(V, I, sizeof I);
    for (int k = 0; k < 3; ++k) assert_true(S[k] == 1.0f);
    /* -I: det -1, so S = (1, 1, -1) and U V^T = I. */
    float M[9];
    for (int k = 0; k < 9; ++k) M[k] = -I[k];
    check_svd(M, NULL, "-I", 0);
    sinew_svd3(M, U, S, V);
    assert_true(S[2] < 0.0f);
}

static void test_inverted(void** state)
{
    (void)state;
    math_rng rng = {4};
    for (int n = 0; n < 10000; ++n) {
        double s[3] = {math_rng_range(&rng, 0.05, 2.0), math_rng_range(&rng, 0.05, 2.0),
                       math_rng_range(&rng, 0.05, 2.0)};
        /* One or three negative values: det < 0. */
        s[n % 3] = -s[n % 3];
        if (n % 7 == 0) {
            s[0] = -s[0];
            s[1] = -s[1];
            s[2] = -s[2];
            s[n % 3] = -s[n % 3];
            s[(n + 1) % 3] = -s[(n + 1) % 3];
            s[(n + 2) % 3] = -s[(n + 2) % 3];
        }
        float A[9];
        double sigma[3];
        math_matrix_from_svd(&rng, s, A, NULL);
        sorted_sigma(s, sigma);
        assert_true(math_det(A) < 0.0);
        check_svd(A, sigma, "inverted", n);
        float U[9], S[3], V[9];
        sinew_svd3(A, U, S, V);
        assert_true(S[2] < 0.0f);
    }
}

static void test_nearly_singular(void** state)
{
    (void)state;
    math_rng rng = {5};
    for (int n = 0; n < 10000; ++n) {
        double s[3] = {math_rng_range(&rng, 0.5, 2.0), math_rng_range(&rng, 0.1, 2.0),
                       pow(10.0, math_rng_range(&rng, -7.0, -3.0))};
        if (n % 2) s[2] = -s[2];
        check_built(&rng, s, "nearly singular", n);
    }
}

/* Diagonal matrices in any order, with negative and zero entries: S is |d| sorted with the
 * sign of the product last, and V is a signed permutation. */
static void test_diagonal(void** state)
{
    (void)state;
    const float values[] = {3.0f, -2.0f, 1.0f, 0.0f, 0.5f, -0.25f, 2.0f};
    int n = 0;
    for (int i = 0; i < 7; ++i) {
        for (int j = 0; j < 7; ++j) {
            for (int k = 0; k < 7; ++k, ++n) {
                float A[9] = {0};
                A[0] = values[i];
                A[4] = values[j];
                A[8] = values[k];
                double d[3] = {values[i], values[j], values[k]}, sigma[3];
                sorted_sigma(d, sigma);
                /* A zero among the values has no sign: compare magnitudes there. */
                if (sigma[2] == 0.0) {
                    check_svd(A, NULL, "diagonal", n);
                    float U[9], S[3], V[9];
                    sinew_svd3(A, U, S, V);
                    math_assert_le(fabs(S[0] - sigma[0]), 1e-6 * sigma[0], "diagonal", n);
                    math_assert_le(fabs(S[1] - sigma[1]), 1e-6 * sigma[0], "diagonal", n);
                    assert_true(S[2] == 0.0f);
                } else {
                    check_svd(A, sigma, "diagonal", n);
                }
            }
        }
    }
}

static void test_repeated(void** state)
{
    (void)state;
    math_rng rng = {6};
    for (int n = 0; n < 6000; ++n) {
        double a = math_rng_range(&rng, 0.1, 2.0), b = math_rng_range(&rng, 0.1, 2.0);
        double s[3];
        switch (n % 4) {
        case 0: s[0] = s[1] = s[2] = a; break;
        case 1: s[0] = s[1] = a; s[2] = b; break;
        case 2: s[0] = a; s[1] = s[2] = b; break;
        default: s[0] = a; s[1] = a * (1.0 + 1e-5 * math_rng_unit(&rng)); s[2] = -b; break;
        }
        if (n % 3 == 0) s[2] = -s[2];
        check_built(&rng, s, "repeated", n);
    }
}

/* Scale: tiny and huge matrices keep relative accuracy; denormal ones stay finite rotations. */
static void test_scale_and_finite(void** state)
{
    (void)state;
    math_rng rng = {7};
    const float scales[] = {1e-30f, 1e-20f, 1e20f, 1e37f};
    for (int n = 0; n < 4000; ++n) {
        float A[9];
        for (int k = 0; k < 9; ++k) A[k] = (float)math_rng_range(&rng, -1.0, 1.0);
        float B[9];
        for (int k = 0; k < 9; ++k) B[k] = A[k] * scales[n % 4];
        check_svd(B, NULL, "scaled", n);
        /* Denormal entries and mixed magnitudes: finite rotations, nothing else promised. */
        const float odd[] = {0.0f, 1e-40f, -1e-42f, FLT_MIN, 1.0f, -1e-20f, 1e30f, -3.0f};
        for (int k = 0; k < 9; ++k) B[k] = odd[math_rng_next(&rng) % 8];
        float U[9], S[3], V[9];
        sinew_svd3(B, U, S, V);
        if (!math_all_finite(U, 9) || !math_all_finite(S, 3) || !math_all_finite(V, 9))
            fail_msg("odd entries: non-finite factor (case %d)", n);
        math_assert_le(math_rotation_error(U), ROT_TOL, "odd entries", n);
        math_assert_le(math_rotation_error(V), ROT_TOL, "odd entries", n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_entries),  cmocka_unit_test(test_ill_conditioned),
        cmocka_unit_test(test_rank_deficient),  cmocka_unit_test(test_zero_and_identity),
        cmocka_unit_test(test_inverted),        cmocka_unit_test(test_nearly_singular),
        cmocka_unit_test(test_diagonal),        cmocka_unit_test(test_repeated),
        cmocka_unit_test(test_scale_and_finite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
