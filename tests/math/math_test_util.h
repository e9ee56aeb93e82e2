/* Helpers for the 3x3 SVD and polar decomposition tests: a seeded generator, matrices built
 * from chosen singular values, and the checks in double precision. Matrices are row-major
 * float[9] / double[9] like svd3.h. SPDX-License-Identifier: MIT */
#ifndef SINEW_MATH_TEST_UTIL_H
#define SINEW_MATH_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "test_support.h"

typedef struct math_rng {
    uint64_t state;
} math_rng;

/* splitmix64: a fixed sequence for a fixed seed, so every failure reproduces. */
static inline uint64_t math_rng_next(math_rng* r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double math_rng_unit(math_rng* r)
{
    return (double)(math_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in [lo, hi). */
static inline double math_rng_range(math_rng* r, double lo, double hi)
{
    return lo + (hi - lo) * math_rng_unit(r);
}

/* A uniformly distributed rotation: a quaternion drawn uniformly from the unit ball (by
 * rejection) and normalised. */
static inline void math_random_rotation(math_rng* r, double R[9])
{
    double q[4], n;
    do {
        n = 0.0;
        for (int i = 0; i < 4; ++i) {
            q[i] = math_rng_range(r, -1.0, 1.0);
            n += q[i] * q[i];
        }
    } while (n > 1.0 || n < 1e-6);
    n = sqrt(n);
    double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
    R[0] = 1 - 2 * (y * y + z * z);
    R[1] = 2 * (x * y - w * z);
    R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z);
    R[4] = 1 - 2 * (x * x + z * z);
    R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y);
    R[7] = 2 * (y * z + w * x);
    R[8] = 1 - 2 * (x * x + y * y);
}

/* C = A B^T (double). */
static inline void math_mul_abt(const double A[9], const double B[9], double C[9])
{
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            C[3 * i + j] = A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1] +
                           A[3 * i + 2] * B[3 * j + 2];
}

/* A = R1 diag(s) R2^T rounded to float, with R1 R2^T returned in Rexact (the closest
 * rotation to A when s[2] is the smallest in magnitude and s[0], s[1] > 0). */
static inline void math_matrix_from_svd(math_rng* r, const double s[3], float A[9],
                                        double Rexact[9])
{
    double R1[9], R2[9], T[9];
    math_random_rotation(r, R1);
    math_random_rotation(r, R2);
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 3; ++k) T[3 * i + k] = R1[3 * i + k] * s[k];
    double M[9];
    math_mul_abt(T, R2, M);
    for (int k = 0; k < 9; ++k) A[k] = (float)M[k];
    if (Rexact) math_mul_abt(R1, R2, Rexact);
}

static inline double math_det(const float A[9])
{
    double a[9];
    for (int k = 0; k < 9; ++k) a[k] = A[k];
    return a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) +
           a[2] * (a[3] * a[7] - a[4] * a[6]);
}

static inline double math_frobenius(const float A[9])
{
    double s = 0.0;
    for (int k = 0; k < 9; ++k) s += (double)A[k] * A[k];
    return sqrt(s);
}

static inline int math_all_finite(const float* a, int n)
{
    for (int k = 0; k < n; ++k)
        if (!isfinite(a[k])) return 0;
    return 1;
}

/* max |R^T R - I| and |det R - 1|, whichever is larger. */
static inline double math_rotation_error(const float R[9])
{
    double e = 0.0;
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            double t = 0.0;
            for (int k = 0; k < 3; ++k) t += (double)R[3 * k + i] * R[3 * k + j];
            e = fmax(e, fabs(t - (i == j ? 1.0 : 0.0)));
        }
    }
    return fmax(e, fabs(math_det(R) - 1.0));
}

/* |A - U diag(S) V^T|_F / |A|_F (absolute when A = 0). */
static inline double math_reconstruction_error(const float A[9], const float U[9],
                                               const float S[3], const float V[9])
{
    double e = 0.0;
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            double t = 0.0;
            for (int k = 0; k < 3; ++k) t += (double)U[3 * i + k] * S[k] * V[3 * j + k];
            e += (t - A[3 * i + j]) * (t - A[3 * i + j]);
        }
    }
    double n = math_frobenius(A);
    return n > 0.0 ? sqrt(e) / n : sqrt(e);
}

/* max |a_k - b_k|. */
static inline double math_max_diff(const float* a, const float* b, int n)
{
    double e = 0.0;
    for (int k = 0; k < n; ++k) e = fmax(e, fabs((double)a[k] - b[k]));
    return e;
}

#define math_assert_le(value, bound, what, index)                                                  \
    do {                                                                                           \
        double v_ = (value), b_ = (bound);                                                         \
        if (!(v_ <= b_))                                                                           \
            fail_msg("%s: %s = %.3g exceeds %.3g (case %d)", what, #value, v_, b_, (int)(index));  \
    } while (0)

#endif
