/* The volume projection of volume3.h (Bouaziz et al. 2014, Sec. 5) against a brute-force
 * minimiser: for random matrices whose determinant lies outside the band, the projection has
 * its determinant on the band's near end and is as close to F as the best of a dense search
 * over that surface; inside the band (and for flat or inverted matrices) F comes back
 * unchanged; the blend of the local step. SPDX-License-Identifier: MIT */
#include <float.h>
#include <math.h>
#include <string.h>

#include "math_test_util.h"
#include "volume3.h"

/* The smallest |s' - s| over s'_0 s'_1 s'_2 = c, by a search over s'_0 and s'_1 (s'_2 follows)
 * refined around the best point; s sorted decreasingly and positive. */
static double brute_distance(const double s[3], double c)
{
    double best = DBL_MAX, b0 = s[0], b1 = s[1];
    for (double span = 0.5; span > 1e-5; span *= 0.2) {
        double c0 = b0, c1 = b1;
        for (int i = -40; i <= 40; ++i)
            for (int j = -40; j <= 40; ++j) {
                double a = c0 + span * i / 40.0, b = c1 + span * j / 40.0;
                if (!(a > 0.0 && b > 0.0)) continue;
                double t = c / (a * b);
                double d = (a - s[0]) * (a - s[0]) + (b - s[1]) * (b - s[1]) + (t - s[2]) * (t - s[2]);
                if (d < best) {
                    best = d;
                    b0 = a;
                    b1 = b;
                }
            }
    }
    return sqrt(best);
}

static double frobenius_distance(const float A[9], const float B[9])
{
    double d = 0.0;
    for (int k = 0; k < 9; ++k) d += ((double)A[k] - B[k]) * ((double)A[k] - B[k]);
    return sqrt(d);
}

static void test_projection_against_brute_force(void** state)
{
    (void)state;
    math_rng rng = {42};
    const float lo = 0.97f, hi = 1.03f;
    for (int trial = 0; trial < 300; ++trial) {
        double s[3];
        for (int k = 0; k < 3; ++k) s[k] = math_rng_range(&rng, 0.6, 1.4);
        double det = s[0] * s[1] * s[2];
        if ((det >= lo && det <= hi) || det <= SINEW_VOLUME_MIN_DET) continue;
        for (int i = 0; i < 2; ++i) /* sorted decreasingly, as the brute force expects */
            for (int j = 0; j < 2 - i; ++j)
                if (s[j] < s[j + 1]) {
                    double t = s[j];
                    s[j] = s[j + 1];
                    s[j + 1] = t;
                }
        float F[9], P[9];
        math_matrix_from_svd(&rng, s, F, NULL);
        sinew_volume_project(F, lo, hi, P);
        double c = det < lo ? lo : hi;
        math_assert_le(fabs(math_det(P) - c), 2e-4, "det of the projection", trial);
        double ours = frobenius_distance(F, P), brute = brute_distance(s, c);
        math_assert_le(ours, brute * (1.0 + 1e-3) + 1e-5, "distance to the band", trial);
    }
}

static void test_inside_and_flat_unchanged(void** state)
{
    (void)state;
    math_rng rng = {7};
    const double inside[3] = {1.1, 1.0, 0.93}, flat[3] = {1.0, 1.0, 0.1}, inverted[3] = {1.0, 0.9, -0.5};
    const double* cases[3] = {inside, flat, inverted};
    for (int k = 0; k < 3; ++k) {
        float F[9], P[9];
        math_matrix_from_svd(&rng, cases[k], F, NULL);
        sinew_volume_project(F, 0.97f, 1.03f, P);
        assert_memory_equal(F, P, sizeof F);
    }
}

/* keep = 1 gives R back bit for bit; keep = 1/2 the mean of R and the projection. */
static void test_blend(void** state)
{
    (void)state;
    math_rng rng = {3};
    const double s[3] = {1.2, 1.0, 0.6};
    float F[9], R[9], T[9], P[9];
    double Rexact[9];
    math_matrix_from_svd(&rng, s, F, Rexact);
    for (int k = 0; k < 9; ++k) R[k] = (float)Rexact[k];
    sinew_volume_target(F, R, 1.0f, 0.99f, 1.01f, T);
    assert_memory_equal(T, R, sizeof T);
    sinew_volume_target(F, R, 0.5f, 0.99f, 1.01f, T);
    sinew_volume_project(F, 0.99f, 1.01f, P);
    for (int k = 0; k < 9; ++k) math_assert_le(fabs(T[k] - 0.5 * (R[k] + P[k])), 1e-6, "blend", k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_projection_against_brute_force),
        cmocka_unit_test(test_inside_and_flat_unchanged),
        cmocka_unit_test(test_blend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
