/* The per-element arithmetic of fast projective skinning (Komaritzan and Botsch 2019,
 * ../shared/papers/fast-projective-skinning-2019.txt), shared by the CPU backend `fps` and the
 * CUDA plugin `fps-cuda`: whatever `fps` computes with these functions, `fps-cuda` computes
 * with the same operations in the same order (one CUDA thread per element or row).
 * SPDX-License-Identifier: MIT
 *
 * Problem (Sec. 3 and 4.3, hard constraints): the tissue mesh's N vertices are numbered so that
 * the n_s free (skin) vertices come first, rows 0 .. n_s - 1, and the constrained (bone)
 * vertices after them; the reduced system is
 *   (h^-2 M_s + Q_s^T Q_s) x_s = h^-2 M_s s_s + Q_s^T (p - Q_b x_b)
 * with K = Q^T Q the strain matrix, K_ss its free block (in the ELL/CRS format of
 * sparse_ellcrs.h, with h^-2 M_s on its diagonal) and K_sb its free-by-constrained block (CRS,
 * columns are full tissue indices >= n_s). Q_s^T p is gathered from the prisms' shares.
 *
 * Layouts (all structure of arrays):
 * - positions x: double, N x 3 column blocks, coordinate c of vertex i at x[c * ldx + i]
 *   (ldx >= N); x_s is its first n_s rows, so the solver works in place on x.
 * - reduced vectors (b, r, d, q, right-hand sides): double, n_s x 3 column blocks, ld apart.
 * - prisms (Sec. 4.1 with one rotation per prism, projective skinning 2018 Sec. 6): `stride`
 *   entries per component (fps_prisms); per prism p its six vertices a, b, c, a', b', c'
 *   (tissue indices), G_p = sum_t w_t A_t over the prism's three tets as a 3 x 6 matrix
 *   (float, component 6 r + k), 1 / sum_t w_t (float, 0 for a prism whose tets all left the
 *   energy), and its output: six 3-vectors R_p g_k (float, component i of slot k at
 *   (3 k + i) * stride + p), each slot's share of Q^T p.
 * - the right-hand side gathers those shares per free vertex (compressed rows of indices
 *   3 k * stride + p, no atomics), so the result does not depend on the thread order.
 *
 * The local step's rotation is sinew_polar3 (polar3.h: Higham's Newton iteration, the SVD of
 * McAdams et al. where det F < 1e-5); the CPU may run the batched SIMD version of
 * polar3_batch.h, which returns the same bits.
 *
 * PCG (Alg. 2, Jacobi preconditioner J = diag(A)^-1) for the three coordinates at once, each
 * coordinate its own system with its own scalars. One function per row for each of the
 * paper's kernels; each returns its row's share of the inner product that follows it, which
 * the caller sums in fps_block_sum.h's order (a tree per block of rows, then the blocks in
 * order), on the CPU and the GPU alike. Line 13 of Alg. 2 as
 * printed reads d = r + beta d; with a preconditioner it is d = J r + beta d (standard PCG,
 * and what the paper's delta = r^T J r implies), which is what fps_pcg_direction_row does.
 *
 * Collisions (Sec. 6, added later): the system becomes A + A_col (A_col off-diagonal in an
 * extra CRS matrix, its diagonal added to A's, J recomputed), and each free row's right-hand
 * side gets an additive term Q_col^T p_col (the `extra` argument of fps_rhs_row, n_s x 3, NULL
 * without collisions). The collision projection itself fills that term. */
#ifndef SINEW_COMMON_FPS_KERNELS_H
#define SINEW_COMMON_FPS_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "polar3.h"
#include "sinew_hd.h"
#include "sparse_ellcrs.h"
#include "volume3.h"

/* Prisms of the tissue mesh, structure of arrays (see the top of this file). */
typedef struct fps_prisms {
    size_t stride;       /* >= prism count; components are `stride` apart */
    const int32_t* pv;   /* 6 x stride: tissue indices a, b, c, a', b', c' */
    const float* G;      /* 18 x stride: G_p[r][k] at (6 r + k) * stride + p */
    const float* inv_w;  /* stride: 1 / sum of the prism's tet weights, 0 for none */
    /* The volume term (volume3.h): keep = w_s / (w_s + w_v), 1 without it; the band of det F
     * it leaves alone. */
    float volume_keep, volume_lo, volume_hi;
} fps_prisms;

/* ---- local step (Sec. 4.1; one thread per prism) ---- */

/* F = (G_p X_p)^T / sum w, the weighted mean deformation gradient of the prism's tets, with
 * X_p taken relative to the prism's first vertex (G's rows sum to zero) and rounded to float.
 * F is row-major: F[3 row + col]. */
static inline SINEW_HD void fps_prism_gradient(const fps_prisms* P, const double* x, size_t ldx,
                                               uint32_t p, float F[9])
{
    const size_t S = P->stride;
    float rel[3][6];
    for (int c = 0; c < 3; ++c) {
        const double* xc = x + (size_t)c * ldx;
        double base = xc[P->pv[p]];
        rel[c][0] = 0.0f;
        for (int k = 1; k < 6; ++k) rel[c][k] = (float)(xc[P->pv[(size_t)k * S + p]] - base);
    }
    float inv_w = P->inv_w[p];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            float sum = P->G[(size_t)(6 * r + 1) * S + p] * rel[c][1];
            for (int k = 2; k < 6; ++k) sum = sum + P->G[(size_t)(6 * r + k) * S + p] * rel[c][k];
            F[3 * c + r] = sum * inv_w;
        }
}

/* The prism's shares of Q^T p: R g_k for its six slots (g_k column k of G_p), written to
 * contrib (component i of slot k at (3 k + i) * stride + p). */
static inline SINEW_HD void fps_prism_project(const fps_prisms* P, const float R[9], uint32_t p,
                                              float* contrib)
{
    const size_t S = P->stride;
    for (int k = 0; k < 6; ++k) {
        float g0 = P->G[(size_t)k * S + p];
        float g1 = P->G[(size_t)(6 + k) * S + p];
        float g2 = P->G[(size_t)(12 + k) * S + p];
        for (int i = 0; i < 3; ++i)
            contrib[(size_t)(3 * k + i) * S + p] =
                (R[3 * i] * g0 + R[3 * i + 1] * g1) + R[3 * i + 2] * g2;
    }
}

/* The whole local step of one prism: gradient, closest rotation, with the volume term its
 * blend with the volume projection (volume3.h), projection. */
static inline SINEW_HD void fps_local_prism(const fps_prisms* P, const double* x, size_t ldx,
                                            uint32_t p, float* contrib)
{
    float F[9], R[9], T[9];
    fps_prism_gradient(P, x, ldx, p, F);
    sinew_polar3(F, R); /* F = 0 (no tets) gives R = I, and G = 0 then gives no share */
    sinew_volume_target(F, R, P->volume_keep, P->volume_lo, P->volume_hi, T);
    fps_prism_project(P, T, p, contrib);
}

/* ---- vector updates of Alg. 1 (one thread per vertex) ---- */

/* Lines 1-2: s = x + h v, x_prev = x, x = s (free and constrained vertices alike). */
static inline SINEW_HD void fps_predict_row(double* x, const double* v, double* x_prev,
                                            double* pred, size_t ld, uint32_t i, double h)
{
    for (int c = 0; c < 3; ++c) {
        size_t e = (size_t)c * ld + i;
        double s = x[e] + h * v[e];
        x_prev[e] = x[e];
        pred[e] = s;
        x[e] = s;
    }
}

/* Line 7: v = lambda (x - x_prev) / h, with f = lambda / h. */
static inline SINEW_HD void fps_velocity_row(const double* x, const double* x_prev, double* v,
                                             size_t ld, uint32_t i, double f)
{
    for (int c = 0; c < 3; ++c) {
        size_t e = (size_t)c * ld + i;
        v[e] = f * (x[e] - x_prev[e]);
    }
}

/* ---- right-hand side (Sec. 4.3; one thread per free vertex) ---- */

/* The part that stays constant within a time step: h^-2 m_s s_s - K_sb x_b for free row s
 * (mass_h2[s] = h^-2 m_s; pred, x: ldx apart; out: ld apart). */
static inline SINEW_HD void fps_rhs_const_row(uint32_t s, const double* mass_h2,
                                              const double* pred, const sinew_crs* Ksb,
                                              const double* x, size_t ldx, double* out, size_t ld)
{
    double acc[3];
    for (int c = 0; c < 3; ++c) acc[c] = mass_h2[s] * pred[(size_t)c * ldx + s];
    for (uint32_t e = Ksb->ptr[s]; e < Ksb->ptr[s + 1]; ++e) {
        uint32_t j = Ksb->col[e];
        double v = Ksb->val[e];
        acc[0] -= v * x[j];
        acc[1] -= v * x[ldx + j];
        acc[2] -= v * x[2u * ldx + j];
    }
    for (int c = 0; c < 3; ++c) out[(size_t)c * ld + s] = acc[c];
}

/* b_s = constant part + Q_s^T p (the shares of the prisms around s, in gather order) + the
 * collision term extra_s (NULL: none), into acc. gather[e] is 3 k * stride + p for slot k of
 * prism p. */
static inline SINEW_HD void fps_rhs_value(uint32_t s, const double* rhs_const,
                                          const uint32_t* gather_ptr, const uint32_t* gather,
                                          const float* contrib, size_t stride,
                                          const double* extra, size_t ld, double acc[3])
{
    acc[0] = rhs_const[s];
    acc[1] = rhs_const[ld + s];
    acc[2] = rhs_const[2u * ld + s];
    for (uint32_t e = gather_ptr[s]; e < gather_ptr[s + 1]; ++e) {
        const float* c = contrib + gather[e];
        acc[0] += c[0];
        acc[1] += c[stride];
        acc[2] += c[2u * stride];
    }
    if (extra) {
        acc[0] += extra[s];
        acc[1] += extra[ld + s];
        acc[2] += extra[2u * ld + s];
    }
}

/* fps_rhs_value into row s of b (columns ld apart). */
static inline SINEW_HD void fps_rhs_row(uint32_t s, const double* rhs_const,
                                        const uint32_t* gather_ptr, const uint32_t* gather,
                                        const float* contrib, size_t stride, const double* extra,
                                        double* b, size_t ld)
{
    double acc[3];
    fps_rhs_value(s, rhs_const, gather_ptr, gather, contrib, stride, extra, ld, acc);
    b[s] = acc[0];
    b[ld + s] = acc[1];
    b[2u * ld + s] = acc[2];
}

/* ---- PCG, Alg. 2 (one thread per row; x is ldx apart, the other vectors ld) ---- */

/* (A + A_col) y, row i. A_col may be NULL. */
static inline SINEW_HD void fps_matvec_row(const sinew_ellcrs* A, const sinew_crs* A_col,
                                           uint32_t i, const double* y, size_t ldy,
                                           double out[3])
{
    sinew_ellcrs_row3(A, i, y, ldy, out);
    sinew_crs_row3_add(A_col, i, y, ldy, out);
}

/* Init kernel, lines 1-3: r = b - A x, d = J r; adds d . r to delta[3]. jinv[i] = 1 / A_ii. */
static inline SINEW_HD void fps_pcg_init_row(const sinew_ellcrs* A, const sinew_crs* A_col,
                                             const double* jinv, uint32_t i, const double* b,
                                             const double* x, size_t ldx, double* r, double* d,
                                             size_t ld, double delta[3])
{
    double ax[3];
    fps_matvec_row(A, A_col, i, x, ldx, ax);
    for (int c = 0; c < 3; ++c) {
        size_t e = (size_t)c * ld + i;
        double rr = b[e] - ax[c];
        double dd = jinv[i] * rr;
        r[e] = rr;
        d[e] = dd;
        delta[c] += dd * rr;
    }
}

/* Kernel 1, lines 5-7: q = A d; adds d . q to dq[3]. */
static inline SINEW_HD void fps_pcg_matvec_row(const sinew_ellcrs* A, const sinew_crs* A_col,
                                               uint32_t i, const double* d, double* q, size_t ld,
                                               double dq[3])
{
    double ad[3];
    fps_matvec_row(A, A_col, i, d, ld, ad);
    for (int c = 0; c < 3; ++c) {
        q[(size_t)c * ld + i] = ad[c];
        dq[c] += d[(size_t)c * ld + i] * ad[c];
    }
}

/* Line 8: alpha = gamma / d^T q, 0 when d^T q is not positive (converged or broken down). */
static inline SINEW_HD double fps_pcg_alpha(double gamma, double dq)
{
    return dq > 0.0 ? gamma / dq : 0.0;
}

/* Kernel 2, lines 9-11: x += alpha d, r -= alpha q; adds r^T J r to delta[3] and r^T r to
 * rr[3] (the residual norm, for a tolerance; NULL when unused). */
static inline SINEW_HD void fps_pcg_update_row(const double alpha[3], const double* jinv,
                                               uint32_t i, double* x, size_t ldx, double* r,
                                               const double* d, const double* q, size_t ld,
                                               double delta[3], double rr[3])
{
    for (int c = 0; c < 3; ++c) {
        size_t e = (size_t)c * ld + i;
        x[(size_t)c * ldx + i] += alpha[c] * d[e];
        double re = r[e] - alpha[c] * q[e];
        r[e] = re;
        delta[c] += re * (jinv[i] * re);
        if (rr) rr[c] += re * re;
    }
}

/* Line 12: beta = delta / gamma, 0 when gamma is not positive. */
static inline SINEW_HD double fps_pcg_beta(double delta, double gamma)
{
    return gamma > 0.0 ? delta / gamma : 0.0;
}

/* Kernel 3, line 13: d = J r + beta d. */
static inline SINEW_HD void fps_pcg_direction_row(const double beta[3], const double* jinv,
                                                  uint32_t i, const double* r, double* d,
                                                  size_t ld)
{
    for (int c = 0; c < 3; ++c) {
        size_t e = (size_t)c * ld + i;
        d[e] = jinv[i] * r[e] + beta[c] * d[e];
    }
}

#endif
