/* Singular value decomposition of a 3x3 matrix with rotations for both factors.
 * SPDX-License-Identifier: MIT
 *
 * sinew_svd3(A, U, S, V) writes A = U diag(S) V^T with U and V rotations (orthonormal,
 * det +1), S[0] >= S[1] >= |S[2]|, and the sign of det(A) carried by S[2]: an inverted
 * element (det A < 0) gets S[2] < 0 instead of a reflection in U or V. This is the method of
 * McAdams et al. 2011, "Efficient elasticity for character skinning with contact and
 * collisions", Sec. 9.2 and Alg. 4:
 *   1. Jacobi eigen-analysis of A^T A with approximate Givens rotations kept as quaternions
 *      (four sweeps over the pairs (0,1), (1,2), (2,0)), which gives V;
 *   2. B = A V, refined by one sweep of exact one-sided Jacobi rotations on B's columns (our
 *      addition, see sinew_svd3_refine_pair: it takes the worst reconstruction error on random
 *      and ill-conditioned matrices from 1e-2 to about 1e-6), then its columns sorted by
 *      decreasing norm, each swap negating one column so that V stays a rotation;
 *   3. a Givens QR factorisation B = U R; R is diagonal up to the Jacobi residual, and its
 *      diagonal is S.
 * The control flow is fixed (no data-dependent branches, only conditional selects), so the
 * SIMD batch kernels in polar3_simd_kernel.h run the same operations lane by lane.
 *
 * Matrices are float[9], row-major: m[3 * row + col]. The input is scaled by its largest
 * entry first, so any finite matrix (also tiny or huge ones, and the zero matrix) gives finite
 * factors; the zero matrix gives U = V = I and S = 0. Plain C11 that also compiles as CUDA
 * C++ (SINEW_HD). U diag(S) V^T reconstructs A to about 1e-6 relative (Frobenius norm); for
 * rank-deficient A the singular vectors of the zero singular values are arbitrary (but the
 * factors are still rotations). Cost: about 22 square roots, 23 divisions and 900 other
 * operations. */
#ifndef SINEW_COMMON_SVD3_H
#define SINEW_COMMON_SVD3_H

#include <math.h>

#include "sinew_hd.h"

/* Jacobi sweeps: four approximate sweeps match three exact ones (McAdams et al., Sec. 9.2). */
#define SINEW_SVD3_SWEEPS 4
/* Exact one-sided Jacobi sweeps on the columns of A V afterwards (sinew_svd3_refine_pair). */
#define SINEW_SVD3_REFINE_SWEEPS 1
/* Alg. 4: the small-angle approximation is used while gamma sh^2 < ch^2, gamma = 3 + 2 sqrt 2;
 * otherwise the rotation by pi/4 (quaternion cos(pi/8), sin(pi/8)) is taken. */
#define SINEW_SVD3_GAMMA 5.82842712474619f
#define SINEW_SVD3_CSTAR 0.923879532511287f
#define SINEW_SVD3_SSTAR 0.382683432365090f
/* A QR Givens step on a column whose two entries are both below this (relative to the largest
 * entry of A) rotates nothing: the column is zero to working precision. */
#define SINEW_SVD3_QR_TINY 1e-12f
/* Inputs whose largest entry is below this are scaled by its inverse instead of 1/max, so the
 * scale factor never overflows (denormal inputs). */
#define SINEW_SVD3_SCALE_TINY 1e-30f
#define SINEW_SVD3_SCALE_HUGE 1e30f

/* The largest |a_k|, written as a select so that SIMD max instructions give the same bits. */
static inline SINEW_HD float sinew_svd3_max_abs(const float a[9])
{
    float m = fabsf(a[0]);
    for (int k = 1; k < 9; ++k) {
        float x = fabsf(a[k]);
        m = (x > m) ? x : m;
    }
    return m;
}

/* Alg. 4: the half-angle quaternion (ch, sh) of the rotation in the (p, q) plane that nearly
 * annihilates a_pq of the symmetric matrix [[app, apq], [apq, aqq]]. The angle from
 * tan(theta/2) ~ apq / (2 (app - aqq)) holds for small angles; otherwise pi/4 reduces apq by
 * at least the factor 0.6 the paper proves. An exactly zero apq needs no rotation: the
 * identity keeps diagonal inputs (and the zero matrix) exact. */
static inline SINEW_HD void sinew_svd3_approx_givens(float app, float apq, float aqq, float* ch,
                                                     float* sh)
{
    float c = 2.0f * (app - aqq);
    float s = apq;
    float c2 = c * c;
    float s2 = s * s;
    float w = 1.0f / sqrtf(c2 + s2);
    int small = (SINEW_SVD3_GAMMA * s2) < c2;
    float ch_ = small ? w * c : SINEW_SVD3_CSTAR;
    float sh_ = small ? w * s : SINEW_SVD3_SSTAR;
    int none = s == 0.0f;
    *ch = none ? 1.0f : ch_;
    *sh = none ? 0.0f : sh_;
}

/* S <- Q^T S Q for the Givens rotation Q of the unit half-angle quaternion (ch, sh) in the
 * (p, q) plane, Q = [[c, -s], [s, c]] with c = cos(theta), s = sin(theta); k is the third
 * index. Only the entries that change are passed: spp, sqq, spq, spk, sqk. */
static inline SINEW_HD void sinew_svd3_jacobi_rotate(float* spp, float* sqq, float* spq,
                                                     float* spk, float* sqk, float ch, float sh)
{
    float c = ch * ch - sh * sh;
    float s = 2.0f * (ch * sh);
    float cc = c * c;
    float ss = s * s;
    float cs = c * s;
    float app = *spp, aqq = *sqq, apq = *spq, apk = *spk, aqk = *sqk;
    float t = 2.0f * (cs * apq);
    *spp = (cc * app + t) + ss * aqq;
    *sqq = (ss * app - t) + cc * aqq;
    *spq = (cc - ss) * apq + cs * (aqq - app);
    *spk = c * apk + s * aqk;
    *sqk = c * aqk - s * apk;
}

/* q <- q * (ch + sh e_axis), q = (w, x, y, z): the accumulated V gets the new rotation on the
 * right (V <- V Q). The rotation in the plane (0,1) is about z, (1,2) about x, (2,0) about y. */
static inline SINEW_HD void sinew_svd3_quat_mul_axis(float q[4], int axis, float ch, float sh)
{
    int ia = 1 + axis, ib = 1 + (axis + 1) % 3, ic = 1 + (axis + 2) % 3;
    float w = q[0], a = q[ia], b = q[ib], c = q[ic];
    q[0] = w * ch - a * sh;
    q[ia] = a * ch + w * sh;
    q[ib] = b * ch + c * sh;
    q[ic] = c * ch - b * sh;
}

/* The rotation matrix of the quaternion q after normalising it. */
static inline SINEW_HD void sinew_svd3_quat_to_matrix(const float q[4], float V[9])
{
    float n = 1.0f / sqrtf(((q[0] * q[0] + q[1] * q[1]) + q[2] * q[2]) + q[3] * q[3]);
    float w = q[0] * n, x = q[1] * n, y = q[2] * n, z = q[3] * n;
    float xx = x * x, yy = y * y, zz = z * z;
    float xy = x * y, xz = x * z, yz = y * z;
    float wx = w * x, wy = w * y, wz = w * z;
    V[0] = 1.0f - 2.0f * (yy + zz);
    V[1] = 2.0f * (xy - wz);
    V[2] = 2.0f * (xz + wy);
    V[3] = 2.0f * (xy + wz);
    V[4] = 1.0f - 2.0f * (xx + zz);
    V[5] = 2.0f * (yz - wx);
    V[6] = 2.0f * (xz - wy);
    V[7] = 2.0f * (yz + wx);
    V[8] = 1.0f - 2.0f * (xx + yy);
}

/* The exact Jacobi rotation (c, s) = (cos t, sin t), |t| <= pi/4, that zeroes the
 * off-diagonal entry of [[gpp, gpq], [gpq, gqq]] under Q^T G Q, Q = [[c, -s], [s, c]]:
 * tan 2t = 2 gpq / (gpp - gqq), solved for the smaller root tan t = -sign(k) / (|k| +
 * sqrt(1 + k^2)) with k = (gqq - gpp) / (2 gpq). Working with the ratio k keeps c^2 + s^2 = 1
 * to rounding even when the Gram entries are tiny (columns that are rounding noise), where
 * squaring them would underflow; a huge k gives t = 0 through k^2 = inf. gpq = 0 gives the
 * identity. */
static inline SINEW_HD void sinew_svd3_exact_rotation(float gpp, float gpq, float gqq, float* c,
                                                      float* s)
{
    int any = gpq != 0.0f;
    float k = (gqq - gpp) / (2.0f * gpq);
    float ka = fabsf(k);
    float t = 1.0f / (ka + sqrtf(1.0f + ka * ka));
    t = (k < 0.0f) ? t : -t;
    t = any ? t : 0.0f;
    float ct = 1.0f / sqrtf(1.0f + t * t);
    *c = ct;
    *s = t * ct;
}

/* One-sided Jacobi step on columns p, q of B = a V (and of V): the exact rotation that makes
 * them orthogonal, computed from their own dot products. Four approximate sweeps on a^T a
 * leave some matrices with off-diagonal terms of 1e-3 relative (when the pi/4 fallback of
 * Alg. 4 is taken early), and a^T a holds singular values below sqrt(eps) |a| at an absolute
 * error of eps |a|^2, which mixes B's small columns; either costs the reconstruction up to 1e-2
 * relative. The Gram entries of B itself carry errors relative to those columns' own norms,
 * so one sweep over the pairs brings every case we tested to about 1e-6 (see tests/math). */
static inline SINEW_HD void sinew_svd3_refine_pair(float B[9], float V[9], int p, int q)
{
    float gpp = (B[p] * B[p] + B[3 + p] * B[3 + p]) + B[6 + p] * B[6 + p];
    float gqq = (B[q] * B[q] + B[3 + q] * B[3 + q]) + B[6 + q] * B[6 + q];
    float gpq = (B[p] * B[q] + B[3 + p] * B[3 + q]) + B[6 + p] * B[6 + q];
    float c, s;
    sinew_svd3_exact_rotation(gpp, gpq, gqq, &c, &s);
    for (int r = 0; r < 3; ++r) {
        float bp = B[3 * r + p], bq = B[3 * r + q];
        float vp = V[3 * r + p], vq = V[3 * r + q];
        B[3 * r + p] = c * bp + s * bq;
        B[3 * r + q] = c * bq - s * bp;
        V[3 * r + p] = c * vp + s * vq;
        V[3 * r + q] = c * vq - s * vp;
    }
}

/* When cond: columns i, j of B and V become (col j, -col i), a quarter turn in the (i, j)
 * plane, so V stays a rotation (McAdams et al., Sec. 9.2: sorting by descending norm). */
static inline SINEW_HD void sinew_svd3_swap_columns(int cond, float B[9], float V[9], float rho[3],
                                                    int i, int j)
{
    for (int r = 0; r < 3; ++r) {
        float bi = B[3 * r + i], bj = B[3 * r + j];
        float vi = V[3 * r + i], vj = V[3 * r + j];
        B[3 * r + i] = cond ? bj : bi;
        B[3 * r + j] = cond ? -bi : bj;
        V[3 * r + i] = cond ? vj : vi;
        V[3 * r + j] = cond ? -vi : vj;
    }
    float ri = rho[i], rj = rho[j];
    rho[i] = cond ? rj : ri;
    rho[j] = cond ? ri : rj;
}

/* The Givens rotation (c, s) with [[c, s], [-s, c]] (a, b)^T = (sqrt(a^2 + b^2), 0), built from
 * the half-angle quaternion (|a| + rho, b): for a < 0 its components are swapped, which is the
 * same rotation without the cancellation in rho + a. A zero column gives the identity (or a
 * half turn when a < 0, which is also a rotation). */
static inline SINEW_HD void sinew_svd3_qr_givens(float a, float b, float* c, float* s)
{
    float rho = sqrtf(a * a + b * b);
    int nonzero = rho > SINEW_SVD3_QR_TINY;
    float ch = fabsf(a) + (nonzero ? rho : SINEW_SVD3_QR_TINY);
    float sh = nonzero ? b : 0.0f;
    int neg = a < 0.0f;
    float t = ch;
    ch = neg ? sh : ch;
    sh = neg ? t : sh;
    float ch2 = ch * ch, sh2 = sh * sh;
    float inv = 1.0f / (ch2 + sh2);
    *c = (ch2 - sh2) * inv;
    *s = (2.0f * (ch * sh)) * inv;
}

/* Rows p, q of B <- [[c, s], [-s, c]] (rows p, q), columns p, q of U <- (columns) Q, so that
 * U B stays constant. */
static inline SINEW_HD void sinew_svd3_qr_rotate(float B[9], float U[9], int p, int q, float c,
                                                 float s)
{
    for (int j = 0; j < 3; ++j) {
        float bp = B[3 * p + j], bq = B[3 * q + j];
        B[3 * p + j] = c * bp + s * bq;
        B[3 * q + j] = c * bq - s * bp;
    }
    for (int i = 0; i < 3; ++i) {
        float up = U[3 * i + p], uq = U[3 * i + q];
        U[3 * i + p] = c * up + s * uq;
        U[3 * i + q] = c * uq - s * up;
    }
}

/* A = U diag(S) V^T; see the top of this file. U, S, V must not alias A. */
static inline SINEW_HD void sinew_svd3(const float A[9], float U[9], float S[3], float V[9])
{
    /* Scale so the largest entry is 1: A^T A then neither overflows nor underflows. */
    float m = sinew_svd3_max_abs(A);
    int normal = m > SINEW_SVD3_SCALE_TINY;
    float up = normal ? 1.0f / m : SINEW_SVD3_SCALE_HUGE;
    float down = normal ? m : SINEW_SVD3_SCALE_TINY;
    float a[9];
    for (int k = 0; k < 9; ++k) a[k] = A[k] * up;

    /* Symmetric S = a^T a: s_ij is the dot product of columns i and j. */
    float s00 = (a[0] * a[0] + a[3] * a[3]) + a[6] * a[6];
    float s11 = (a[1] * a[1] + a[4] * a[4]) + a[7] * a[7];
    float s22 = (a[2] * a[2] + a[5] * a[5]) + a[8] * a[8];
    float s01 = (a[0] * a[1] + a[3] * a[4]) + a[6] * a[7];
    float s12 = (a[1] * a[2] + a[4] * a[5]) + a[7] * a[8];
    float s02 = (a[0] * a[2] + a[3] * a[5]) + a[6] * a[8];

    /* Step 1: cyclic Jacobi with approximate Givens rotations (Alg. 4). */
    float q[4] = {1.0f, 0.0f, 0.0f, 0.0f};
    for (int sweep = 0; sweep < SINEW_SVD3_SWEEPS; ++sweep) {
        float ch, sh;
        sinew_svd3_approx_givens(s00, s01, s11, &ch, &sh);
        sinew_svd3_jacobi_rotate(&s00, &s11, &s01, &s02, &s12, ch, sh);
        sinew_svd3_quat_mul_axis(q, 2, ch, sh);
        sinew_svd3_approx_givens(s11, s12, s22, &ch, &sh);
        sinew_svd3_jacobi_rotate(&s11, &s22, &s12, &s01, &s02, ch, sh);
        sinew_svd3_quat_mul_axis(q, 0, ch, sh);
        sinew_svd3_approx_givens(s22, s02, s00, &ch, &sh);
        sinew_svd3_jacobi_rotate(&s22, &s00, &s02, &s12, &s01, ch, sh);
        sinew_svd3_quat_mul_axis(q, 1, ch, sh);
    }
    sinew_svd3_quat_to_matrix(q, V);

    /* Step 2: B = a V, refined, columns sorted by decreasing norm. */
    float B[9];
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) {
            B[3 * r + c] = (a[3 * r] * V[c] + a[3 * r + 1] * V[3 + c]) + a[3 * r + 2] * V[6 + c];
        }
    }
    for (int sweep = 0; sweep < SINEW_SVD3_REFINE_SWEEPS; ++sweep) {
        sinew_svd3_refine_pair(B, V, 0, 1);
        sinew_svd3_refine_pair(B, V, 1, 2);
        sinew_svd3_refine_pair(B, V, 2, 0);
    }
    float rho[3];
    for (int c = 0; c < 3; ++c) rho[c] = (B[c] * B[c] + B[3 + c] * B[3 + c]) + B[6 + c] * B[6 + c];
    sinew_svd3_swap_columns(rho[0] < rho[1], B, V, rho, 0, 1);
    sinew_svd3_swap_columns(rho[0] < rho[2], B, V, rho, 0, 2);
    sinew_svd3_swap_columns(rho[1] < rho[2], B, V, rho, 1, 2);

    /* Step 3: Givens QR, B = U R, zeroing (1,0), (2,0), (2,1) in that order. */
    for (int k = 0; k < 9; ++k) U[k] = (k % 4 == 0) ? 1.0f : 0.0f;
    float c, s;
    sinew_svd3_qr_givens(B[0], B[3], &c, &s);
    sinew_svd3_qr_rotate(B, U, 0, 1, c, s);
    sinew_svd3_qr_givens(B[0], B[6], &c, &s);
    sinew_svd3_qr_rotate(B, U, 0, 2, c, s);
    sinew_svd3_qr_givens(B[4], B[7], &c, &s);
    sinew_svd3_qr_rotate(B, U, 1, 2, c, s);
    S[0] = B[0] * down;
    S[1] = B[4] * down;
    S[2] = B[8] * down;
}

#endif
