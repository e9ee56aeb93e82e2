/* The body of the SIMD polar decomposition kernels: included once by each instruction-set file
 * (polar3_avx2.c, polar3_avx512.c) after it has defined the vector vocabulary below.
 * SPDX-License-Identifier: MIT
 *
 * It is svd3.h and polar3.h written over vectors of POLAR3_W lanes, statement for statement:
 * the same operations in the same order (no FMA, exact division and square root), so that every
 * lane returns the bits the scalar sinew_polar3 returns for that matrix. Data-dependent choices
 * become masks: the Newton iteration runs until every lane has converged, freezing each lane
 * at its own stopping step; the matrices that need the SVD instead (det < 1e-5, no
 * convergence, or a reflection) are queued and decomposed a full vector at a time (a block of
 * nothing but such matrices directly), which costs less than running the SVD for every block
 * with one such lane and selecting (docs/decisions/2026-11-26-polar-simd-kernels.md).
 *
 * The including file defines:
 *   POLAR3_W                 lanes per vector
 *   vf, vm                   the float vector and the lane mask types
 *   v_set1(x), v_load(p), v_store(p, a)
 *   v_add, v_sub, v_mul, v_div(a, b), v_sqrt(a), v_abs(a), v_neg(a)
 *   v_max(a, b)              a > b ? a : b per lane
 *   v_lt, v_gt, v_ge, v_eq, v_ne(a, b) -> vm, ordered (false with NaN) except v_ne
 *   v_sel(m, a, b)           m ? a : b per lane
 *   m_and, m_or, m_not(a), m_andnot(a, b) (a & ~b), m_none(), m_any(m), m_all(m)
 *   m_bits(m)                the lanes of m as the bits of a uint64_t (lane 0 lowest)
 * Everything here is static: each including file gets its own copy. */
#ifndef POLAR3_W
#  error "define the vector vocabulary before including polar3_simd_kernel.h"
#endif

#include "polar3.h"

#if defined(__GNUC__) || defined(__clang__)
#  define POLAR3_UNROLL _Pragma("GCC unroll 9")
#else
#  define POLAR3_UNROLL
#endif

static inline vf pk_max_abs(const vf a[9])
{
    vf m = v_abs(a[0]);
    POLAR3_UNROLL
    for (int k = 1; k < 9; ++k) m = v_max(v_abs(a[k]), m);
    return m;
}

/* sinew_svd3_approx_givens. */
static inline void pk_approx_givens(vf app, vf apq, vf aqq, vf* ch, vf* sh)
{
    vf c = v_mul(v_set1(2.0f), v_sub(app, aqq));
    vf s = apq;
    vf c2 = v_mul(c, c);
    vf s2 = v_mul(s, s);
    vf w = v_div(v_set1(1.0f), v_sqrt(v_add(c2, s2)));
    vm small = v_lt(v_mul(v_set1(SINEW_SVD3_GAMMA), s2), c2);
    vf ch_ = v_sel(small, v_mul(w, c), v_set1(SINEW_SVD3_CSTAR));
    vf sh_ = v_sel(small, v_mul(w, s), v_set1(SINEW_SVD3_SSTAR));
    vm none = v_eq(s, v_set1(0.0f));
    *ch = v_sel(none, v_set1(1.0f), ch_);
    *sh = v_sel(none, v_set1(0.0f), sh_);
}

/* sinew_svd3_jacobi_rotate. */
static inline void pk_jacobi_rotate(vf* spp, vf* sqq, vf* spq, vf* spk, vf* sqk, vf ch, vf sh)
{
    vf c = v_sub(v_mul(ch, ch), v_mul(sh, sh));
    vf s = v_mul(v_set1(2.0f), v_mul(ch, sh));
    vf cc = v_mul(c, c);
    vf ss = v_mul(s, s);
    vf cs = v_mul(c, s);
    vf app = *spp, aqq = *sqq, apq = *spq, apk = *spk, aqk = *sqk;
    vf t = v_mul(v_set1(2.0f), v_mul(cs, apq));
    *spp = v_add(v_add(v_mul(cc, app), t), v_mul(ss, aqq));
    *sqq = v_add(v_sub(v_mul(ss, app), t), v_mul(cc, aqq));
    *spq = v_add(v_mul(v_sub(cc, ss), apq), v_mul(cs, v_sub(aqq, app)));
    *spk = v_add(v_mul(c, apk), v_mul(s, aqk));
    *sqk = v_sub(v_mul(c, aqk), v_mul(s, apk));
}

/* sinew_svd3_quat_mul_axis with the components named: w, the axis one a, then b, c cyclic. */
static inline void pk_quat_mul_axis(vf* qw, vf* qa, vf* qb, vf* qc, vf ch, vf sh)
{
    vf w = *qw, a = *qa, b = *qb, c = *qc;
    *qw = v_sub(v_mul(w, ch), v_mul(a, sh));
    *qa = v_add(v_mul(a, ch), v_mul(w, sh));
    *qb = v_add(v_mul(b, ch), v_mul(c, sh));
    *qc = v_sub(v_mul(c, ch), v_mul(b, sh));
}

/* sinew_svd3_quat_to_matrix. */
static inline void pk_quat_to_matrix(const vf q[4], vf V[9])
{
    vf n2 = v_add(v_add(v_add(v_mul(q[0], q[0]), v_mul(q[1], q[1])), v_mul(q[2], q[2])),
                  v_mul(q[3], q[3]));
    vf n = v_div(v_set1(1.0f), v_sqrt(n2));
    vf w = v_mul(q[0], n), x = v_mul(q[1], n), y = v_mul(q[2], n), z = v_mul(q[3], n);
    vf xx = v_mul(x, x), yy = v_mul(y, y), zz = v_mul(z, z);
    vf xy = v_mul(x, y), xz = v_mul(x, z), yz = v_mul(y, z);
    vf wx = v_mul(w, x), wy = v_mul(w, y), wz = v_mul(w, z);
    vf one = v_set1(1.0f), two = v_set1(2.0f);
    V[0] = v_sub(one, v_mul(two, v_add(yy, zz)));
    V[1] = v_mul(two, v_sub(xy, wz));
    V[2] = v_mul(two, v_add(xz, wy));
    V[3] = v_mul(two, v_add(xy, wz));
    V[4] = v_sub(one, v_mul(two, v_add(xx, zz)));
    V[5] = v_mul(two, v_sub(yz, wx));
    V[6] = v_mul(two, v_sub(xz, wy));
    V[7] = v_mul(two, v_add(yz, wx));
    V[8] = v_sub(one, v_mul(two, v_add(xx, yy)));
}

/* sinew_svd3_exact_rotation. */
static inline void pk_exact_rotation(vf gpp, vf gpq, vf gqq, vf* c, vf* s)
{
    vf zero = v_set1(0.0f), one = v_set1(1.0f);
    vm any = v_ne(gpq, zero);
    vf k = v_div(v_sub(gqq, gpp), v_mul(v_set1(2.0f), gpq));
    vf ka = v_abs(k);
    vf t = v_div(one, v_add(ka, v_sqrt(v_add(one, v_mul(ka, ka)))));
    t = v_sel(v_lt(k, zero), t, v_neg(t));
    t = v_sel(any, t, zero);
    vf ct = v_div(one, v_sqrt(v_add(one, v_mul(t, t))));
    *c = ct;
    *s = v_mul(t, ct);
}

static inline vf pk_dot3(vf a0, vf a1, vf a2, vf b0, vf b1, vf b2)
{
    return v_add(v_add(v_mul(a0, b0), v_mul(a1, b1)), v_mul(a2, b2));
}

/* sinew_svd3_refine_pair. */
static inline void pk_refine_pair(vf B[9], vf V[9], int p, int q)
{
    vf gpp = pk_dot3(B[p], B[3 + p], B[6 + p], B[p], B[3 + p], B[6 + p]);
    vf gqq = pk_dot3(B[q], B[3 + q], B[6 + q], B[q], B[3 + q], B[6 + q]);
    vf gpq = pk_dot3(B[p], B[3 + p], B[6 + p], B[q], B[3 + q], B[6 + q]);
    vf c, s;
    pk_exact_rotation(gpp, gpq, gqq, &c, &s);
    POLAR3_UNROLL
    for (int r = 0; r < 3; ++r) {
        vf bp = B[3 * r + p], bq = B[3 * r + q];
        vf vp = V[3 * r + p], vq = V[3 * r + q];
        B[3 * r + p] = v_add(v_mul(c, bp), v_mul(s, bq));
        B[3 * r + q] = v_sub(v_mul(c, bq), v_mul(s, bp));
        V[3 * r + p] = v_add(v_mul(c, vp), v_mul(s, vq));
        V[3 * r + q] = v_sub(v_mul(c, vq), v_mul(s, vp));
    }
}

/* sinew_svd3_swap_columns. */
static inline void pk_swap_columns(vm cond, vf B[9], vf V[9], vf rho[3], int i, int j)
{
    POLAR3_UNROLL
    for (int r = 0; r < 3; ++r) {
        vf bi = B[3 * r + i], bj = B[3 * r + j];
        vf vi = V[3 * r + i], vj = V[3 * r + j];
        B[3 * r + i] = v_sel(cond, bj, bi);
        B[3 * r + j] = v_sel(cond, v_neg(bi), bj);
        V[3 * r + i] = v_sel(cond, vj, vi);
        V[3 * r + j] = v_sel(cond, v_neg(vi), vj);
    }
    vf ri = rho[i], rj = rho[j];
    rho[i] = v_sel(cond, rj, ri);
    rho[j] = v_sel(cond, ri, rj);
}

/* sinew_svd3_qr_givens. */
static inline void pk_qr_givens(vf a, vf b, vf* c, vf* s)
{
    vf tiny = v_set1(SINEW_SVD3_QR_TINY);
    vf rho = v_sqrt(v_add(v_mul(a, a), v_mul(b, b)));
    vm nonzero = v_gt(rho, tiny);
    vf ch = v_add(v_abs(a), v_sel(nonzero, rho, tiny));
    vf sh = v_sel(nonzero, b, v_set1(0.0f));
    vm neg = v_lt(a, v_set1(0.0f));
    vf t = ch;
    ch = v_sel(neg, sh, ch);
    sh = v_sel(neg, t, sh);
    vf ch2 = v_mul(ch, ch), sh2 = v_mul(sh, sh);
    vf inv = v_div(v_set1(1.0f), v_add(ch2, sh2));
    *c = v_mul(v_sub(ch2, sh2), inv);
    *s = v_mul(v_mul(v_set1(2.0f), v_mul(ch, sh)), inv);
}

/* sinew_svd3_qr_rotate. */
static inline void pk_qr_rotate(vf B[9], vf U[9], int p, int q, vf c, vf s)
{
    POLAR3_UNROLL
    for (int j = 0; j < 3; ++j) {
        vf bp = B[3 * p + j], bq = B[3 * q + j];
        B[3 * p + j] = v_add(v_mul(c, bp), v_mul(s, bq));
        B[3 * q + j] = v_sub(v_mul(c, bq), v_mul(s, bp));
    }
    POLAR3_UNROLL
    for (int i = 0; i < 3; ++i) {
        vf up = U[3 * i + p], uq = U[3 * i + q];
        U[3 * i + p] = v_add(v_mul(c, up), v_mul(s, uq));
        U[3 * i + q] = v_sub(v_mul(c, uq), v_mul(s, up));
    }
}

/* sinew_svd3 followed by sinew_polar3_svd: R = U V^T (S is not needed). */
static inline void pk_polar_svd(const vf A[9], vf R[9])
{
    vf m = pk_max_abs(A);
    vm normal = v_gt(m, v_set1(SINEW_SVD3_SCALE_TINY));
    vf up = v_sel(normal, v_div(v_set1(1.0f), m), v_set1(SINEW_SVD3_SCALE_HUGE));
    vf a[9];
    POLAR3_UNROLL
    for (int k = 0; k < 9; ++k) a[k] = v_mul(A[k], up);

    vf s00 = pk_dot3(a[0], a[3], a[6], a[0], a[3], a[6]);
    vf s11 = pk_dot3(a[1], a[4], a[7], a[1], a[4], a[7]);
    vf s22 = pk_dot3(a[2], a[5], a[8], a[2], a[5], a[8]);
    vf s01 = pk_dot3(a[0], a[3], a[6], a[1], a[4], a[7]);
    vf s12 = pk_dot3(a[1], a[4], a[7], a[2], a[5], a[8]);
    vf s02 = pk_dot3(a[0], a[3], a[6], a[2], a[5], a[8]);

    vf q[4] = {v_set1(1.0f), v_set1(0.0f), v_set1(0.0f), v_set1(0.0f)};
    for (int sweep = 0; sweep < SINEW_SVD3_SWEEPS; ++sweep) {
        vf ch, sh;
        pk_approx_givens(s00, s01, s11, &ch, &sh);
        pk_jacobi_rotate(&s00, &s11, &s01, &s02, &s12, ch, sh);
        pk_quat_mul_axis(&q[0], &q[3], &q[1], &q[2], ch, sh); /* axis z */
        pk_approx_givens(s11, s12, s22, &ch, &sh);
        pk_jacobi_rotate(&s11, &s22, &s12, &s01, &s02, ch, sh);
        pk_quat_mul_axis(&q[0], &q[1], &q[2], &q[3], ch, sh); /* axis x */
        pk_approx_givens(s22, s02, s00, &ch, &sh);
        pk_jacobi_rotate(&s22, &s00, &s02, &s12, &s01, ch, sh);
        pk_quat_mul_axis(&q[0], &q[2], &q[3], &q[1], ch, sh); /* axis y */
    }
    vf V[9];
    pk_quat_to_matrix(q, V);

    vf B[9];
    POLAR3_UNROLL
    for (int r = 0; r < 3; ++r) {
        POLAR3_UNROLL
        for (int c = 0; c < 3; ++c)
            B[3 * r + c] = pk_dot3(a[3 * r], a[3 * r + 1], a[3 * r + 2], V[c], V[3 + c], V[6 + c]);
    }
    for (int sweep = 0; sweep < SINEW_SVD3_REFINE_SWEEPS; ++sweep) {
        pk_refine_pair(B, V, 0, 1);
        pk_refine_pair(B, V, 1, 2);
        pk_refine_pair(B, V, 2, 0);
    }
    vf rho[3];
    POLAR3_UNROLL
    for (int c = 0; c < 3; ++c) rho[c] = pk_dot3(B[c], B[3 + c], B[6 + c], B[c], B[3 + c], B[6 + c]);
    pk_swap_columns(v_lt(rho[0], rho[1]), B, V, rho, 0, 1);
    pk_swap_columns(v_lt(rho[0], rho[2]), B, V, rho, 0, 2);
    pk_swap_columns(v_lt(rho[1], rho[2]), B, V, rho, 1, 2);

    vf U[9];
    POLAR3_UNROLL
    for (int k = 0; k < 9; ++k) U[k] = v_set1((k % 4 == 0) ? 1.0f : 0.0f);
    vf c, s;
    pk_qr_givens(B[0], B[3], &c, &s);
    pk_qr_rotate(B, U, 0, 1, c, s);
    pk_qr_givens(B[0], B[6], &c, &s);
    pk_qr_rotate(B, U, 0, 2, c, s);
    pk_qr_givens(B[4], B[7], &c, &s);
    pk_qr_rotate(B, U, 1, 2, c, s);

    POLAR3_UNROLL
    for (int i = 0; i < 3; ++i) {
        POLAR3_UNROLL
        for (int j = 0; j < 3; ++j)
            R[3 * i + j] = pk_dot3(U[3 * i], U[3 * i + 1], U[3 * i + 2], V[3 * j], V[3 * j + 1],
                                   V[3 * j + 2]);
    }
}

/* sinew_polar3_sum9. */
static inline vf pk_sum9(const vf t[9])
{
    return v_add(v_add(v_add(t[0], t[1]), v_add(t[2], t[3])),
                 v_add(v_add(v_add(t[4], t[5]), v_add(t[6], t[7])), t[8]));
}

/* sinew_polar3_newton_step; returns |X_new - X_old|_F^2 per lane. */
static inline vf pk_newton_step(vf X[9], vf Xn[9])
{
    vf C[9];
    C[0] = v_sub(v_mul(X[4], X[8]), v_mul(X[5], X[7]));
    C[1] = v_sub(v_mul(X[5], X[6]), v_mul(X[3], X[8]));
    C[2] = v_sub(v_mul(X[3], X[7]), v_mul(X[4], X[6]));
    C[3] = v_sub(v_mul(X[7], X[2]), v_mul(X[8], X[1]));
    C[4] = v_sub(v_mul(X[8], X[0]), v_mul(X[6], X[2]));
    C[5] = v_sub(v_mul(X[6], X[1]), v_mul(X[7], X[0]));
    C[6] = v_sub(v_mul(X[1], X[5]), v_mul(X[2], X[4]));
    C[7] = v_sub(v_mul(X[2], X[3]), v_mul(X[0], X[5]));
    C[8] = v_sub(v_mul(X[0], X[4]), v_mul(X[1], X[3]));
    vf det = pk_dot3(X[0], X[1], X[2], C[0], C[1], C[2]);
    vf x2[9], c2[9];
    POLAR3_UNROLL
    for (int k = 0; k < 9; ++k) {
        x2[k] = v_mul(X[k], X[k]);
        c2[k] = v_mul(C[k], C[k]);
    }
    vf nx = pk_sum9(x2);
    vf nc = pk_sum9(c2);
    vf g = v_sqrt(v_div(v_sqrt(v_div(nc, nx)), v_abs(det)));
    vf a = v_mul(v_set1(0.5f), g);
    vf b = v_div(v_set1(0.5f), v_mul(g, det));
    vf d2[9];
    POLAR3_UNROLL
    for (int k = 0; k < 9; ++k) {
        vf x = v_add(v_mul(a, X[k]), v_mul(b, C[k]));
        vf d = v_sub(x, X[k]);
        d2[k] = v_mul(d, d);
        Xn[k] = x;
    }
    return pk_sum9(d2);
}

/* The Newton half of sinew_polar3 on POLAR3_W matrices at once (F[k] holds component k of
 * every lane): X gets the converged iterate of every lane that takes the Newton path; the
 * returned mask marks the lanes that need the SVD instead (det < 1e-5, no convergence, or
 * convergence to a reflection). */
static inline vm pk_newton_block(const vf F[9], vf X[9])
{
    vf c0 = v_sub(v_mul(F[4], F[8]), v_mul(F[5], F[7]));
    vf c1 = v_sub(v_mul(F[5], F[6]), v_mul(F[3], F[8]));
    vf c2 = v_sub(v_mul(F[3], F[7]), v_mul(F[4], F[6]));
    vf det = pk_dot3(F[0], F[1], F[2], c0, c1, c2);
    vm newton = v_ge(det, v_set1(SINEW_POLAR3_DET_MIN));

    /* Lanes left to the SVD start from the identity, so the iteration computes nothing wild
     * (no overflow, no slow denormals) on them while the others converge. */
    vf m = pk_max_abs(F);
    vf up = v_sel(v_gt(m, v_set1(SINEW_SVD3_SCALE_TINY)), v_div(v_set1(1.0f), m),
                  v_set1(SINEW_SVD3_SCALE_HUGE));
    POLAR3_UNROLL
    for (int k = 0; k < 9; ++k)
        X[k] = v_sel(newton, v_mul(F[k], up), v_set1((k % 4 == 0) ? 1.0f : 0.0f));
    vm done = m_not(newton); /* lanes not iterating: left to the SVD, or converged */
    vm converged = m_none();
    for (int it = 0; it < SINEW_POLAR3_NEWTON_MAX_ITER && !m_all(done); ++it) {
        vf Xn[9];
        vf diff = pk_newton_step(X, Xn);
        POLAR3_UNROLL
        for (int k = 0; k < 9; ++k) X[k] = v_sel(done, X[k], Xn[k]);
        vm now = m_andnot(v_lt(diff, v_set1(SINEW_POLAR3_NEWTON_TOL2)), done);
        converged = m_or(converged, now);
        done = m_or(done, now);
    }
    /* sinew_polar3's check that Newton did not converge to a reflection. */
    vf r0 = v_sub(v_mul(X[4], X[8]), v_mul(X[5], X[7]));
    vf r1 = v_sub(v_mul(X[5], X[6]), v_mul(X[3], X[8]));
    vf r2 = v_sub(v_mul(X[3], X[7]), v_mul(X[4], X[6]));
    vm proper = v_gt(pk_dot3(X[0], X[1], X[2], r0, r1, r2), v_set1(0.0f));
    return m_not(m_and(converged, proper));
}

/* Matrices that need the SVD, collected from the blocks until a full vector of them is
 * there. F is copied in when a matrix is queued, before its block's R is stored, so in-place
 * batches work. */
typedef struct polar3_queue {
    float F[9][2 * POLAR3_W];
    uint32_t index[2 * POLAR3_W];
    uint32_t count;
} polar3_queue;

/* The SVD path for the last POLAR3_W queued matrices (or all, padded with identities, when
 * fewer), written over the Newton results at their indices. */
static inline void polar3_queue_flush(polar3_queue* q, float* R_soa, size_t stride)
{
    uint32_t n = q->count < POLAR3_W ? q->count : POLAR3_W;
    uint32_t first = q->count - n;
    float tmp[9][POLAR3_W];
    for (int k = 0; k < 9; ++k)
        for (uint32_t l = 0; l < POLAR3_W; ++l)
            tmp[k][l] = l < n ? q->F[k][first + l] : ((k % 4 == 0) ? 1.0f : 0.0f);
    vf A[9], R[9];
    POLAR3_UNROLL
    for (int k = 0; k < 9; ++k) A[k] = v_load(tmp[k]);
    pk_polar_svd(A, R);
    POLAR3_UNROLL
    for (int k = 0; k < 9; ++k) v_store(tmp[k], R[k]);
    for (uint32_t l = 0; l < n; ++l)
        for (int k = 0; k < 9; ++k) R_soa[(size_t)k * stride + q->index[first + l]] = tmp[k][l];
    q->count = first;
}

/* Queues lanes `bits` of the block at matrix i (F read from F_soa), flushing full vectors. */
static inline void polar3_queue_add(polar3_queue* q, uint64_t bits, const float* F_soa,
                                    size_t stride, uint32_t i)
{
    while (bits) {
        uint32_t l = (uint32_t)__builtin_ctzll(bits);
        bits &= bits - 1;
        for (int k = 0; k < 9; ++k) q->F[k][q->count] = F_soa[(size_t)k * stride + i + l];
        q->index[q->count++] = i + l;
    }
}

/* Full blocks straight from the component arrays; the last partial block through a local copy
 * padded with identities (which take the Newton path and converge in one step). */
static inline void polar3_simd_loop(const float* F_soa, float* R_soa, size_t stride,
                                    uint32_t begin, uint32_t end)
{
    polar3_queue q;
    q.count = 0;
    uint32_t i = begin;
    for (; end - i >= POLAR3_W; i += POLAR3_W) {
        vf F[9], X[9];
        POLAR3_UNROLL
        for (int k = 0; k < 9; ++k) F[k] = v_load(F_soa + (size_t)k * stride + i);
        vm svd = pk_newton_block(F, X);
        if (m_all(svd)) {
            pk_polar_svd(F, X); /* a block of nothing but SVD lanes needs no queue */
        } else if (m_any(svd)) {
            polar3_queue_add(&q, m_bits(svd), F_soa, stride, i);
        }
        POLAR3_UNROLL
        for (int k = 0; k < 9; ++k) v_store(R_soa + (size_t)k * stride + i, X[k]);
        if (q.count >= POLAR3_W) polar3_queue_flush(&q, R_soa, stride);
    }
    if (i < end) {
        uint32_t n = end - i;
        float tmp[9][POLAR3_W];
        for (int k = 0; k < 9; ++k) {
            for (uint32_t l = 0; l < POLAR3_W; ++l)
                tmp[k][l] = l < n ? F_soa[(size_t)k * stride + i + l] : ((k % 4 == 0) ? 1.0f : 0.0f);
        }
        vf F[9], X[9];
        for (int k = 0; k < 9; ++k) F[k] = v_load(tmp[k]);
        vm svd = pk_newton_block(F, X);
        if (m_any(svd)) polar3_queue_add(&q, m_bits(svd), F_soa, stride, i);
        for (int k = 0; k < 9; ++k) v_store(tmp[k], X[k]);
        for (int k = 0; k < 9; ++k)
            for (uint32_t l = 0; l < n; ++l) R_soa[(size_t)k * stride + i + l] = tmp[k][l];
    }
    while (q.count > 0) polar3_queue_flush(&q, R_soa, stride);
}
