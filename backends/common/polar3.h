/* Rotational factor of the polar decomposition F = R S of a 3x3 matrix.
 * SPDX-License-Identifier: MIT
 *
 * sinew_polar3(F, R) writes the rotation R (orthonormal, det +1) closest to F, the local step
 * of projective dynamics. It follows projective skinning (Komaritzan and Botsch 2018), Sec. 6
 * (after Chao et al. 2010): Higham's Newton iteration unless det(F) < 1e-5, then the SVD of
 * svd3.h with R = U V^T. Because that SVD keeps U and V rotations and puts the sign of det F
 * into the smallest singular value, U V^T is the paper's U diag(1, 1, det F) V^T: for an
 * inverted F (det < 0) it is the closest rotation, not the closest orthogonal matrix.
 *
 * Newton (Higham 1986, "Computing the polar decomposition - with applications", Sec. 3):
 * X_0 = F, X_{k+1} = (g_k X_k + X_k^-T / g_k) / 2 with the Frobenius-norm scaling
 * g_k = sqrt(|X_k^-1|_F / |X_k|_F), which costs two square roots; X^-T is the cofactor matrix
 * over det X. The iteration stops once |X_{k+1} - X_k|_F < SINEW_POLAR3_NEWTON_TOL = 1e-3: the
 * convergence is quadratic, so X_{k+1} is then within about tol^2 / 2 of the limit (measured:
 * orthonormal to 4e-7). That takes 2-3 steps for stretches within [0.7, 1.3], 3-4 within
 * [0.2, 2] and 4-5 for condition numbers up to 1e6 (tests/math and the microbenchmark
 * measure this). If it has not happened after SINEW_POLAR3_NEWTON_MAX_ITER steps, or it has
 * converged to a reflection (F with a positive determinant but so badly conditioned that
 * rounding flips its sign, cases the det(F) < 1e-5 rule misses), the SVD path is taken as well,
 * so the result is always a rotation.
 *
 * Matrices are float[9], row-major: m[3 * row + col]. Finite input gives finite output; the
 * zero matrix gives the identity. Plain C11 that also compiles as CUDA C++ (SINEW_HD). The
 * batch kernels of polar3_batch.h compute the same operations in the same order, lane by
 * lane, so they return the same bits as this scalar code on the CPU. */
#ifndef SINEW_COMMON_POLAR3_H
#define SINEW_COMMON_POLAR3_H

#include <math.h>

#include "sinew_hd.h"
#include "svd3.h"

/* Projective skinning, Sec. 6: below this determinant the SVD is used. */
#define SINEW_POLAR3_DET_MIN 1e-5f
/* Newton stops once the Frobenius norm of the last update is below this (compared squared);
 * 1e-4 would cost one more step in a third of the cases for no measurable gain. */
#define SINEW_POLAR3_NEWTON_TOL 1e-3f
#define SINEW_POLAR3_NEWTON_TOL2 (SINEW_POLAR3_NEWTON_TOL * SINEW_POLAR3_NEWTON_TOL)
/* ...or gives up after this many steps and leaves the matrix to the SVD. */
#define SINEW_POLAR3_NEWTON_MAX_ITER 12

/* sinew_polar3's return value: which path produced R. */
#define SINEW_POLAR3_PATH_NEWTON 0
#define SINEW_POLAR3_PATH_SVD 1

/* det F = row0 . (row1 x row2). */
static inline SINEW_HD float sinew_polar3_det(const float F[9])
{
    float c0 = F[4] * F[8] - F[5] * F[7];
    float c1 = F[5] * F[6] - F[3] * F[8];
    float c2 = F[3] * F[7] - F[4] * F[6];
    return (F[0] * c0 + F[1] * c1) + F[2] * c2;
}

/* R = U V^T from the SVD: the closest rotation to F, also for inverted or singular F. */
static inline SINEW_HD void sinew_polar3_svd(const float F[9], float R[9])
{
    float U[9], S[3], V[9];
    sinew_svd3(F, U, S, V);
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            R[3 * i + j] =
                (U[3 * i] * V[3 * j] + U[3 * i + 1] * V[3 * j + 1]) + U[3 * i + 2] * V[3 * j + 2];
        }
    }
}

/* t[0] + ... + t[8] as a tree of depth 4 rather than a chain of 8: a Newton step is one long
 * chain of dependent operations, and this shortens it
 * (docs/decisions/2026-11-26-polar-newton-step.md). */
static inline SINEW_HD float sinew_polar3_sum9(const float t[9])
{
    return ((t[0] + t[1]) + (t[2] + t[3])) + (((t[4] + t[5]) + (t[6] + t[7])) + t[8]);
}

/* One scaled Newton step X <- (g X + X^-T / g) / 2 in place; returns |X_new - X_old|_F^2.
 * The rows of the cofactor matrix C are row1 x row2, row2 x row0, row0 x row1, so that
 * X^-T = C / det X. A singular X gives a non-finite result, which the caller's tolerance test
 * (false for NaN) rejects. */
static inline SINEW_HD float sinew_polar3_newton_step(float X[9])
{
    float C[9];
    C[0] = X[4] * X[8] - X[5] * X[7];
    C[1] = X[5] * X[6] - X[3] * X[8];
    C[2] = X[3] * X[7] - X[4] * X[6];
    C[3] = X[7] * X[2] - X[8] * X[1];
    C[4] = X[8] * X[0] - X[6] * X[2];
    C[5] = X[6] * X[1] - X[7] * X[0];
    C[6] = X[1] * X[5] - X[2] * X[4];
    C[7] = X[2] * X[3] - X[0] * X[5];
    C[8] = X[0] * X[4] - X[1] * X[3];
    float det = (X[0] * C[0] + X[1] * C[1]) + X[2] * C[2];
    float x2[9], c2[9];
    for (int k = 0; k < 9; ++k) {
        x2[k] = X[k] * X[k];
        c2[k] = C[k] * C[k];
    }
    float nx = sinew_polar3_sum9(x2);
    float nc = sinew_polar3_sum9(c2);
    /* |X^-1|_F = |C|_F / |det|, so g^2 = sqrt(nc / nx) / |det| (Higham 1986, Sec. 3.3),
     * computed as written: fewer square roots and divisions gain nothing
     * (docs/decisions/2026-11-26-polar-newton-step.md). */
    float g = sqrtf(sqrtf(nc / nx) / fabsf(det));
    float a = 0.5f * g;
    float b = 0.5f / (g * det);
    float d2[9];
    for (int k = 0; k < 9; ++k) {
        float x = a * X[k] + b * C[k];
        float d = x - X[k];
        d2[k] = d * d;
        X[k] = x;
    }
    return sinew_polar3_sum9(d2);
}

/* Higham's scaled Newton iteration alone. Returns 1 when it converged (R is then the
 * orthogonal polar factor of F: a rotation when det F > 0, a reflection when det F < 0), 0 when
 * it did not within SINEW_POLAR3_NEWTON_MAX_ITER steps (R holds the last iterate, possibly not
 * finite for singular F). F is scaled by its largest entry first so no product overflows; the
 * scaling g makes the result independent of that. */
static inline SINEW_HD int sinew_polar3_newton(const float F[9], float R[9])
{
    float m = sinew_svd3_max_abs(F);
    float up = (m > SINEW_SVD3_SCALE_TINY) ? 1.0f / m : SINEW_SVD3_SCALE_HUGE;
    for (int k = 0; k < 9; ++k) R[k] = F[k] * up;
    for (int it = 0; it < SINEW_POLAR3_NEWTON_MAX_ITER; ++it) {
        if (sinew_polar3_newton_step(R) < SINEW_POLAR3_NEWTON_TOL2) return 1;
    }
    return 0;
}

/* The rotation closest to F (see the top of this file). Returns SINEW_POLAR3_PATH_NEWTON or
 * SINEW_POLAR3_PATH_SVD. R must not alias F. */
static inline SINEW_HD int sinew_polar3(const float F[9], float R[9])
{
    /* The last test catches an F whose determinant is positive by one rounding and negative by
     * another (condition number beyond 1 / eps, e.g. singular values 1e3, 0.6, 6e-5): Newton
     * then converges to a reflection. */
    if (sinew_polar3_det(F) >= SINEW_POLAR3_DET_MIN && sinew_polar3_newton(F, R) &&
        sinew_polar3_det(R) > 0.0f)
        return SINEW_POLAR3_PATH_NEWTON;
    sinew_polar3_svd(F, R);
    return SINEW_POLAR3_PATH_SVD;
}

#endif
