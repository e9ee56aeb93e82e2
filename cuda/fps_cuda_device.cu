/* The device half of fps-cuda (fps_cuda_device.h): kernels, batches, CUDA Graphs and the
 * persistent cooperative kernel. Every per-element computation is a function of
 * backends/common/fps_kernels.h or sparse_ellcrs.h, the very code that the CPU backend `fps`
 * runs; this file adds only the thread indexing, the block sums and the launches (and device
 * twins of ps's upsampling frame, see below). Built with -fmad=false, like `fps` with
 * -ffp-contract=off, so that both round every operation alike, and the PCG's inner products
 * are summed in fps_block_sum.h's order on both. SPDX-License-Identifier: MIT */
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sinew/sinew_host.h>

#include "fps_block_sum.h"
#include "fps_cuda_collide.h"
#include "fps_cuda_device.h"
#include "fps_cuda_stage.h"
#include "sinew_mls_eval.h"

namespace cg = cooperative_groups;

/* Threads per block; the block sums of one block belong to one instance. */
#define FPSC_BLOCK 256u
static_assert(FPSC_BLOCK == FPS_SUM_BLOCK, "a thread block is a block of fps_block_sum.h");
/* The most CRS entries of one block staged in shared memory (12 bytes each: 39 KB, which with
 * the block sums' few hundred bytes stays below the 48 KB a block gets without opting in). The
 * dynamic size of a batch's launches is its members' largest block, up to this. */
#define FPSC_CRS_STAGE_MAX 3328u

/* The kinds of rows a phase runs over; each instance's rows of a kind fill whole blocks.
 * K_PAIR: an instance's collision pair slots (none without collisions). */
enum { K_PRISM = 0, K_FREE, K_TISSUE, K_SKIN, K_RENDER, K_PAIR, K_COUNT };

/* One instance as the kernels see it: device pointers. */
struct fpsc_dev {
    uint32_t n, N, ns, nc, prism_count, render_count, ell_width;
    uint32_t pad_;
    size_t stride;
    double h, vel_f;
    double *x, *v, *x_prev, *pred, *rhs_const, *b, *r, *d, *q;
    const double* mass_h2;
    const double* jinv;
    const int32_t* pv;
    const float* G;
    const float* inv_w;
    float volume_keep, volume_lo, volume_hi; /* the volume term's blend (volume3.h) */
    float* contrib;
    const uint32_t* gather_ptr;
    const uint32_t* gather;
    const double* ell_val;
    const uint32_t* ell_col;
    const uint32_t* crs_ptr;
    const uint32_t* crs_col;
    const double* crs_val;
    const uint32_t* crs_none; /* ns + 1 zeros: an ELL-only view of A (staged CRS part) */
    const uint32_t* ksb_ptr;
    const uint32_t* ksb_col;
    const double* ksb_val;
    const uint32_t* inv; /* n: skin vertex (model) -> row of x */
    float* skin_f;
    float* skin_n;
    const fpsc_upsample* up;
    const uint32_t* tris;
    const uint32_t* vt_off;
    const uint32_t* vt;
    const uint32_t* skin_joint;
    const uint32_t* mls_idx;  /* render_count * SINEW_MLS_K, or NULL: ps's records */
    const float* mls_w;
    const float* mls_wn;
    /* Global collisions (Sec. 6, fps_cuda_collide.h); col_hdr NULL without. The pair count and
     * the contrib stride live in device memory (col_hdr[0], col_hdr[1]), so that a new pair set
     * needs no new kernel arguments: a captured graph and the cooperative kernel's table stay
     * valid. crs_ptr/crs_col/crs_val above then hold A's CRS part followed by A_col's
     * off-diagonal entries per row (fpsc_merge_crs), ell_val's diagonal and jinv A + A_col's. */
    const uint32_t* col_hdr;
    const uint32_t* col_pair_row;
    const uint32_t* col_pair_tri;
    const uint32_t* col_tris;
    const double* col_sign;
    double* col_contrib;
    const uint32_t* col_gather_ptr;
    const uint32_t* col_gather;
    double* col_extra;
    double col_weight, col_margin;
    uint32_t col_cap;       /* pair slots: the instance's K_PAIR rows */
    uint32_t col_bones;     /* fps's limb capsules: bones with tables (0: none) */
    /* the capsules (col_hdr[2]: this step's contact count): per row its contact's bone or
     * FPS_COLLIDE_NONE, the bones' rest tables, their frames at this step's pose */
    const uint32_t* col_cap_of_row;
    const double* col_cap_frame;
    const double* col_cap_radii;
    const double* col_cap_pose;
    /* Set by the batch: its per-frame staging and scalars. */
    const double* target_c; /* nc x 3: the constrained rows' targets */
    const float* skinning;
    double* scal;           /* the PCG's sums, see scal_delta */
    unsigned int* bad;      /* non-finite state after the step */
};

/* Where an instance's render output goes this step (copied per frame). */
struct fpsc_out {
    float* pos;
    float* nrm;
    unsigned long long pos_stride, nrm_stride;
    uint32_t active; /* 0: the member sits this step out (every phase returns at once) */
    uint32_t pad_;
};

/* A batch as the kernels see it (passed by value). first[k * (count + 1) + i] is the first
 * block of instance i in kind k; first[k * (count + 1) + count] = total[k]. */
struct fpsc_table {
    uint32_t count;
    uint32_t pcg;
    uint32_t crs_cap;       /* CRS entries of a block that fit the dynamic shared memory */
    uint32_t pad_;
    const fpsc_dev* dev;
    const fpsc_out* out;
    const uint32_t* first;
    uint32_t total[K_COUNT];
};

/* The PCG's inner products of PD iteration `it`: delta_j (j = 0..P) and d^T q of PCG
 * iteration j, each a site of the member's scal array that holds one share (three
 * coordinates) per block of its free rows (fps_block_sum.h). */
static __device__ __forceinline__ uint32_t site_delta(uint32_t P, uint32_t it, uint32_t j)
{
    return it * (2u * P + 1u) + 2u * j;
}
static __device__ __forceinline__ uint32_t site_dq(uint32_t P, uint32_t it, uint32_t j)
{
    return site_delta(P, it, j) + 1u;
}
static __device__ __forceinline__ uint32_t sum_blocks(const fpsc_dev& D)
{
    return (D.ns + FPSC_BLOCK - 1u) / FPSC_BLOCK;
}
/* Where the block of free row s keeps its share of a site. */
static __device__ __forceinline__ double* site_share(const fpsc_dev& D, uint32_t site, uint32_t s)
{
    return D.scal + 3u * ((size_t)site * sum_blocks(D) + s / FPSC_BLOCK);
}
/* A site's inner product: the blocks' shares in block order from 0 (fps's sum_partials), read
 * past L1 since other blocks wrote them. The loads of eight blocks are issued before their
 * additions, so the chain waits for memory once per eight blocks, not once per block. */
static __device__ void site_sum(const fpsc_dev& D, uint32_t site, double out[3])
{
    constexpr uint32_t batch = 8u;
    const uint32_t blocks = sum_blocks(D);
    const double* p = D.scal + 3u * (size_t)site * blocks;
    out[0] = out[1] = out[2] = 0.0;
    for (uint32_t b0 = 0; b0 < blocks; b0 += batch) {
        const uint32_t n = blocks - b0 < batch ? blocks - b0 : batch;
        double v[3u * batch];
#pragma unroll
        for (uint32_t k = 0; k < 3u * batch; ++k) v[k] = k < 3u * n ? __ldcg(p + 3u * b0 + k) : 0.0;
#pragma unroll
        for (uint32_t b = 0; b < batch; ++b)
            if (b < n)
                for (int c = 0; c < 3; ++c) out[c] += v[3u * b + c];
    }
}

static __device__ uint32_t find_member(const fpsc_table& t, int kind, uint32_t vb)
{
    const uint32_t* first = t.first + (size_t)kind * (t.count + 1u);
    uint32_t lo = 0, hi = t.count; /* the largest i with first[i] <= vb */
    while (hi - lo > 1u) {
        uint32_t mid = (lo + hi) / 2u;
        if (first[mid] <= vb) lo = mid;
        else hi = mid;
    }
    return lo;
}

static __device__ __forceinline__ uint32_t member_row(const fpsc_table& t, int kind, uint32_t i,
                                                      uint32_t vb)
{
    return (vb - t.first[(size_t)kind * (t.count + 1u) + i]) * FPSC_BLOCK + threadIdx.x;
}

/* The block's share of (a, b, c) in fps_block_sum.h's order: within each warp, lane l adds
 * lane l + s for s = 16 .. 1 (shuffle down), then warp 0 adds the warps' sums the same way;
 * thread 0 writes dst[0..2]. No atomics: the bits do not depend on the blocks' timing. Every
 * thread of the block must call it. */
static __device__ void block_sum3_store(double a, double b, double c, double* dst)
{
    constexpr unsigned warps = FPSC_BLOCK / FPS_SUM_WARP;
    __shared__ double sh[3][warps];
    const unsigned lane = threadIdx.x % FPS_SUM_WARP, warp = threadIdx.x / FPS_SUM_WARP;
    for (unsigned s = FPS_SUM_WARP / 2u; s > 0u; s >>= 1u) {
        a += __shfl_down_sync(0xffffffffu, a, s);
        b += __shfl_down_sync(0xffffffffu, b, s);
        c += __shfl_down_sync(0xffffffffu, c, s);
    }
    if (lane == 0) {
        sh[0][warp] = a;
        sh[1][warp] = b;
        sh[2][warp] = c;
    }
    __syncthreads();
    if (warp == 0) {
        a = lane < warps ? sh[0][lane] : 0.0;
        b = lane < warps ? sh[1][lane] : 0.0;
        c = lane < warps ? sh[2][lane] : 0.0;
        for (unsigned s = warps / 2u; s > 0u; s >>= 1u) {
            a += __shfl_down_sync(0xffffffffu, a, s);
            b += __shfl_down_sync(0xffffffffu, b, s);
            c += __shfl_down_sync(0xffffffffu, c, s);
        }
        if (lane == 0) {
            dst[0] = a;
            dst[1] = b;
            dst[2] = c;
        }
    }
    __syncthreads(); /* sh is reused by the next block of a persistent kernel */
}

static __device__ __forceinline__ sinew_ellcrs dev_matrix(const fpsc_dev& D)
{
    sinew_ellcrs A;
    A.rows = D.ns;
    A.ell_width = D.ell_width;
    A.ell_val = D.ell_val;
    A.ell_col = D.ell_col;
    A.crs_ptr = D.crs_ptr;
    A.crs_col = D.crs_col;
    A.crs_val = D.crs_val;
    return A;
}

/* The block's share of the dynamic shared memory: crs_cap doubles, then crs_cap indices. */
extern __shared__ double fpsc_dyn[];

/* Sec. 4.2, "the rest CRS, read coalesced through shared memory": the block's threads copy the
 * CRS entries of its rows [s0, s0 + FPSC_BLOCK) to shared memory with consecutive loads, then
 * each thread sums its row through the views of fps_cuda_stage.h (same order, same bits).
 * *A becomes A without its CRS part, *crs the staged part. Returns false (nothing staged; use
 * A as it is) when the block's entries exceed crs_cap. Every thread of the block calls it (the
 * test is uniform over the block). */
static __device__ bool stage_crs(const fpsc_table& t, const fpsc_dev& D, uint32_t s0,
                                 sinew_ellcrs* A, sinew_crs* crs)
{
    uint32_t end = s0 + FPSC_BLOCK < D.ns ? s0 + FPSC_BLOCK : D.ns;
    uint32_t base = D.crs_ptr[s0], count = D.crs_ptr[end] - base;
    if (count > t.crs_cap) return false;
    double* val = fpsc_dyn;
    uint32_t* col = (uint32_t*)(fpsc_dyn + t.crs_cap);
    for (uint32_t e = threadIdx.x; e < count; e += FPSC_BLOCK) {
        val[e] = D.crs_val[base + e];
        col[e] = D.crs_col[base + e];
    }
    __syncthreads();
    sinew_ellcrs full = *A;
    fpsc_staged_views(&full, D.crs_none, base, val, col, A, crs);
    return true;
}

static __device__ __forceinline__ fpsc_col_view dev_col(const fpsc_dev& D)
{
    fpsc_col_view C;
    C.n_free = D.ns;
    C.pairs = D.col_hdr[0];
    C.stride = D.col_hdr[1];
    C.pair_row = D.col_pair_row;
    C.pair_tri = D.col_pair_tri;
    C.tris = D.col_tris;
    C.sign = D.col_sign;
    C.weight = D.col_weight;
    C.margin = D.col_margin;
    C.contrib = D.col_contrib;
    C.gather_ptr = D.col_gather_ptr;
    C.gather = D.col_gather;
    C.extra = D.col_extra;
    C.caps = D.col_bones ? D.col_hdr[2] : 0u;
    C.cap_of_row = D.col_cap_of_row;
    C.cap_frame = D.col_cap_frame;
    C.cap_radii = D.col_cap_radii;
    C.cap_pose = D.col_cap_pose;
    return C;
}

/* ---- the phases of a step (one virtual block each) ---- */

/* A phase's prologue: the member i that owns virtual block vb, its data D, and this thread's
 * row in it; an inactive member leaves the phase (uniform over the block: one member per
 * block). */
#define PHASE_MEMBER(kind, row)                                                                    \
    uint32_t i = find_member(t, kind, vb);                                                         \
    const fpsc_dev& D = t.dev[i];                                                                  \
    if (!t.out[i].active) return;                                                                  \
    uint32_t row = member_row(t, kind, i, vb)

/* Alg. 1 lines 1-2; constrained rows then sit on their targets (Sec. 4.3). */
static __device__ void ph_predict(const fpsc_table& t, uint32_t vb)
{
    PHASE_MEMBER(K_TISSUE, j);
    if (j >= D.N) return;
    fps_predict_row(D.x, D.v, D.x_prev, D.pred, D.N, j, D.h);
    if (j >= D.ns)
        for (int c = 0; c < 3; ++c)
            D.x[(size_t)c * D.N + j] = D.target_c[(size_t)c * D.nc + (j - D.ns)];
}

static __device__ void ph_rhs_const(const fpsc_table& t, uint32_t vb)
{
    PHASE_MEMBER(K_FREE, s);
    if (s >= D.ns) return;
    sinew_crs Ksb;
    Ksb.rows = D.ns;
    Ksb.ptr = D.ksb_ptr;
    Ksb.col = D.ksb_col;
    Ksb.val = D.ksb_val;
    fps_rhs_const_row(s, D.mass_h2, D.pred, &Ksb, D.x, D.N, D.rhs_const, D.ns);
}

/* Sec. 4.1: one thread per prism. */
static __device__ void ph_local(const fpsc_table& t, uint32_t vb)
{
    PHASE_MEMBER(K_PRISM, p);
    if (p >= D.prism_count) return;
    fps_prisms P;
    P.stride = D.stride;
    P.pv = D.pv;
    P.G = D.G;
    P.inv_w = D.inv_w;
    P.volume_keep = D.volume_keep;
    P.volume_lo = D.volume_lo;
    P.volume_hi = D.volume_hi;
    fps_local_prism(&P, D.x, D.N, p, D.contrib);
}

/* Sec. 6: the collision constraints' projections and right-hand-side shares, one thread per
 * pair, at the current iterate (after the local step in fps; both only read x). */
static __device__ void ph_col_pairs(const fpsc_table& t, uint32_t vb)
{
    PHASE_MEMBER(K_PAIR, p);
    if (!D.col_hdr) return; /* uniform over the block */
    fpsc_col_view C = dev_col(D);
    if (p >= C.pairs) return;
    fpsc_col_pair(&C, D.x, D.N, p);
}

/* The right-hand side; with collisions, the row's Q_col^T p_col first (the shares of
 * ph_col_pairs, summed as fps_collide_rhs does), which this thread alone then reads. */
static __device__ void ph_rhs(const fpsc_table& t, uint32_t vb)
{
    PHASE_MEMBER(K_FREE, s);
    if (s >= D.ns) return;
    const double* extra = NULL;
    if (D.col_hdr) {
        fpsc_col_view C = dev_col(D);
        extra = fpsc_col_rhs_row(&C, D.x, D.N, s);
    }
    fps_rhs_row(s, D.rhs_const, D.gather_ptr, D.gather, D.contrib, D.stride, extra, D.b, D.ns);
}

/* Alg. 2 lines 1-3 (warm start: x holds the previous iterate). */
static __device__ void ph_pcg_init(const fpsc_table& t, uint32_t vb, uint32_t it)
{
    PHASE_MEMBER(K_FREE, s);
    double delta[3] = {0.0, 0.0, 0.0};
    sinew_ellcrs A = dev_matrix(D);
    sinew_crs staged;
    bool st = stage_crs(t, D, s - threadIdx.x, &A, &staged);
    if (s < D.ns) fps_pcg_init_row(&A, st ? &staged : NULL, D.jinv, s, D.b, D.x, D.N, D.r, D.d,
                                   D.ns, delta);
    block_sum3_store(delta[0], delta[1], delta[2], site_share(D, site_delta(t.pcg, it, 0), s));
}

/* Kernel 1 of Alg. 2: q = A d and d^T q. */
static __device__ void ph_pcg_matvec(const fpsc_table& t, uint32_t vb, uint32_t it, uint32_t j)
{
    PHASE_MEMBER(K_FREE, s);
    double dq[3] = {0.0, 0.0, 0.0};
    sinew_ellcrs A = dev_matrix(D);
    sinew_crs staged;
    bool st = stage_crs(t, D, s - threadIdx.x, &A, &staged);
    if (s < D.ns) fps_pcg_matvec_row(&A, st ? &staged : NULL, s, D.d, D.q, D.ns, dq);
    block_sum3_store(dq[0], dq[1], dq[2], site_share(D, site_dq(t.pcg, it, j), s));
}

/* Kernel 2: alpha from the sums of the kernels before, x and r updated, the new delta's share. */
static __device__ void ph_pcg_update(const fpsc_table& t, uint32_t vb, uint32_t it, uint32_t j)
{
    PHASE_MEMBER(K_FREE, s);
    double delta[3] = {0.0, 0.0, 0.0};
    if (s < D.ns) {
        double gamma[3], dq[3], alpha[3];
        site_sum(D, site_delta(t.pcg, it, j), gamma);
        site_sum(D, site_dq(t.pcg, it, j), dq);
        for (int c = 0; c < 3; ++c) alpha[c] = fps_pcg_alpha(gamma[c], dq[c]);
        fps_pcg_update_row(alpha, D.jinv, s, D.x, D.N, D.r, D.d, D.q, D.ns, delta, NULL);
    }
    block_sum3_store(delta[0], delta[1], delta[2], site_share(D, site_delta(t.pcg, it, j + 1u), s));
}

/* Kernel 3: d = J r + beta d. */
static __device__ void ph_pcg_direction(const fpsc_table& t, uint32_t vb, uint32_t it, uint32_t j)
{
    PHASE_MEMBER(K_FREE, s);
    if (s >= D.ns) return;
    double gamma[3], delta[3], beta[3];
    site_sum(D, site_delta(t.pcg, it, j), gamma);
    site_sum(D, site_delta(t.pcg, it, j + 1u), delta);
    for (int c = 0; c < 3; ++c) beta[c] = fps_pcg_beta(delta[c], gamma[c]);
    fps_pcg_direction_row(beta, D.jinv, s, D.r, D.d, D.ns);
}

/* Alg. 1 line 7, and the check fps makes after a step (any non-finite value). */
static __device__ void ph_velocity(const fpsc_table& t, uint32_t vb)
{
    PHASE_MEMBER(K_TISSUE, j);
    if (j >= D.N) return;
    fps_velocity_row(D.x, D.x_prev, D.v, D.N, j, D.vel_f);
    double sum = 0.0;
    for (int c = 0; c < 3; ++c) sum += D.x[(size_t)c * D.N + j] + D.v[(size_t)c * D.N + j];
    if (!isfinite(sum)) atomicOr(D.bad, 1u);
}

/* ---- upsampling: device twins of ps's frame (backends/ps/ps_internal.h: ps_normalize3f,
 * ps_surface_frame, ps_vertex_normal), which are host-only C there; the same operations in
 * the same order, so that with -fmad=false both give the same floats. ---- */

static __device__ void up_normalize(float v[3], float f0, float f1, float f2)
{
    float l2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    if (l2 > 1e-30f) {
        float s = 1.0f / sqrtf(l2);
        v[0] *= s, v[1] *= s, v[2] *= s;
    } else {
        v[0] = f0, v[1] = f1, v[2] = f2;
    }
}

static __device__ void up_frame(const float* x0, const float* x1, const float* x2, const float* n0,
                                const float* n1, const float* n2, const float bary[3], float p[3],
                                float t[3], float b[3], float nn[3])
{
    float e1[3], e2[3], fn[3];
    for (int k = 0; k < 3; ++k) {
        p[k] = bary[0] * x0[k] + bary[1] * x1[k] + bary[2] * x2[k];
        nn[k] = bary[0] * n0[k] + bary[1] * n1[k] + bary[2] * n2[k];
        e1[k] = x1[k] - x0[k];
        e2[k] = x2[k] - x0[k];
    }
    fn[0] = e1[1] * e2[2] - e1[2] * e2[1];
    fn[1] = e1[2] * e2[0] - e1[0] * e2[2];
    fn[2] = e1[0] * e2[1] - e1[1] * e2[0];
    up_normalize(fn, 0.0f, 0.0f, 1.0f);
    up_normalize(nn, fn[0], fn[1], fn[2]);
    float d = e1[0] * nn[0] + e1[1] * nn[1] + e1[2] * nn[2];
    for (int k = 0; k < 3; ++k) t[k] = e1[k] - d * nn[k];
    float l2 = t[0] * t[0] + t[1] * t[1] + t[2] * t[2];
    if (!(l2 > 1e-30f)) {
        /* collapsed edge: any direction orthogonal to n */
        float a[3] = {0.0f, 0.0f, 1.0f};
        if (fabsf(nn[0]) < 0.9f) a[0] = 1.0f, a[2] = 0.0f;
        d = a[0] * nn[0] + a[1] * nn[1] + a[2] * nn[2];
        for (int k = 0; k < 3; ++k) t[k] = a[k] - d * nn[k];
    }
    up_normalize(t, 1.0f, 0.0f, 0.0f);
    b[0] = nn[1] * t[2] - nn[2] * t[1];
    b[1] = nn[2] * t[0] - nn[0] * t[2];
    b[2] = nn[0] * t[1] - nn[1] * t[0];
}

static __device__ __forceinline__ bool step_failed(const fpsc_dev& D)
{
    return __ldcg(D.bad) != 0u;
}

static __device__ void ph_skin_positions(const fpsc_table& t, uint32_t vb)
{
    PHASE_MEMBER(K_SKIN, s);
    if (s >= D.n || step_failed(D)) return;
    uint32_t j = D.inv[s];
    for (int c = 0; c < 3; ++c) D.skin_f[3u * s + c] = (float)D.x[(size_t)c * D.N + j];
}

static __device__ void ph_skin_normals(const fpsc_table& t, uint32_t vb)
{
    PHASE_MEMBER(K_SKIN, v);
    if (v >= D.n || step_failed(D)) return;
    float s[3] = {0.0f, 0.0f, 0.0f};
    for (uint32_t k = D.vt_off[v]; k < D.vt_off[v + 1]; ++k) {
        const uint32_t* tri = D.tris + 3u * D.vt[k];
        const float* a = D.skin_f + 3u * tri[0];
        const float* b = D.skin_f + 3u * tri[1];
        const float* c = D.skin_f + 3u * tri[2];
        float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        float e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        s[0] += e1[1] * e2[2] - e1[2] * e2[1];
        s[1] += e1[2] * e2[0] - e1[0] * e2[2];
        s[2] += e1[0] * e2[1] - e1[1] * e2[0];
    }
    up_normalize(s, 0.0f, 0.0f, 0.0f);
    for (int k = 0; k < 3; ++k) D.skin_n[3u * v + k] = s[k];
}

/* 2018 Sec. 6: each render vertex is an offset in the frame of a point of the skin. */
static __device__ void ph_render(const fpsc_table& t, uint32_t vb)
{
    PHASE_MEMBER(K_RENDER, r);
    if (r >= D.render_count || step_failed(D)) return;
    const fpsc_out& o = t.out[i];
    float pos[3], nrm[3];
    if (D.mls_idx) {
        /* 2019 Sec. 5: eq. 8 for the position, linear MLS of the skin normals for the normal
         * (sinew_mls_apply's functions; its one-pass form gives the same sums). A vertex's
         * 20 entries are contiguous, so a warp's loads cover consecutive lines that stay in L1
         * over the loop. */
        size_t e = (size_t)r * SINEW_MLS_K;
        if (o.nrm)
            sinew_mls_eval_vertex(D.mls_idx + e, D.mls_w + e, D.mls_wn + e, D.skin_f, D.skin_n,
                                  pos, nrm);
        else
            sinew_mls_eval_position(D.mls_idx + e, D.mls_w + e, D.skin_f, pos);
        if (o.pos) {
            float* dst = (float*)((char*)o.pos + o.pos_stride * r);
            dst[0] = pos[0], dst[1] = pos[1], dst[2] = pos[2];
        }
        if (o.nrm) {
            float* dst = (float*)((char*)o.nrm + o.nrm_stride * r);
            dst[0] = nrm[0], dst[1] = nrm[1], dst[2] = nrm[2];
        }
        return;
    }
    const fpsc_upsample u = D.up[r];
    if (u.triangle == UINT32_MAX) {
        const float* T = D.skinning + 16u * D.skin_joint[u.vertex];
        const float* x = D.skin_f + 3u * u.vertex;
        for (int k = 0; k < 3; ++k) {
            pos[k] = x[k] + T[k] * u.offset[0] + T[4 + k] * u.offset[1] + T[8 + k] * u.offset[2];
            nrm[k] = T[k] * u.normal[0] + T[4 + k] * u.normal[1] + T[8 + k] * u.normal[2];
        }
        up_normalize(nrm, 0.0f, 0.0f, 0.0f);
    } else {
        const uint32_t* tri = D.tris + 3u * u.triangle;
        float p[3], tg[3], bt[3], nn[3];
        up_frame(D.skin_f + 3u * tri[0], D.skin_f + 3u * tri[1], D.skin_f + 3u * tri[2],
                 D.skin_n + 3u * tri[0], D.skin_n + 3u * tri[1], D.skin_n + 3u * tri[2], u.bary,
                 p, tg, bt, nn);
        for (int k = 0; k < 3; ++k) {
            pos[k] = p[k] + u.offset[0] * tg[k] + u.offset[1] * bt[k] + u.offset[2] * nn[k];
            nrm[k] = u.normal[0] * tg[k] + u.normal[1] * bt[k] + u.normal[2] * nn[k];
        }
    }
    if (o.pos) {
        float* dst = (float*)((char*)o.pos + o.pos_stride * r);
        dst[0] = pos[0], dst[1] = pos[1], dst[2] = pos[2];
    }
    if (o.nrm) {
        float* dst = (float*)((char*)o.nrm + o.nrm_stride * r);
        dst[0] = nrm[0], dst[1] = nrm[1], dst[2] = nrm[2];
    }
}

/* ---- one kernel per phase (graph and stream launches) ---- */

__global__ void k_predict(fpsc_table t) { ph_predict(t, blockIdx.x); }
__global__ void k_rhs_const(fpsc_table t) { ph_rhs_const(t, blockIdx.x); }
__global__ void k_local(fpsc_table t) { ph_local(t, blockIdx.x); }
__global__ void k_col_pairs(fpsc_table t) { ph_col_pairs(t, blockIdx.x); }
__global__ void k_rhs(fpsc_table t) { ph_rhs(t, blockIdx.x); }
__global__ void k_pcg_init(fpsc_table t, uint32_t it) { ph_pcg_init(t, blockIdx.x, it); }
__global__ void k_pcg_matvec(fpsc_table t, uint32_t it, uint32_t j)
{
    ph_pcg_matvec(t, blockIdx.x, it, j);
}
__global__ void k_pcg_update(fpsc_table t, uint32_t it, uint32_t j)
{
    ph_pcg_update(t, blockIdx.x, it, j);
}
__global__ void k_pcg_direction(fpsc_table t, uint32_t it, uint32_t j)
{
    ph_pcg_direction(t, blockIdx.x, it, j);
}
__global__ void k_velocity(fpsc_table t) { ph_velocity(t, blockIdx.x); }
__global__ void k_skin_positions(fpsc_table t) { ph_skin_positions(t, blockIdx.x); }
__global__ void k_skin_normals(fpsc_table t) { ph_skin_normals(t, blockIdx.x); }
__global__ void k_render(fpsc_table t) { ph_render(t, blockIdx.x); }

/* ---- the persistent cooperative kernel: every phase, the grid striding over the virtual
 * blocks, with a grid-wide barrier wherever the next phase reads what another block wrote ---- */

#define FPSC_EACH(kind, call)                                                   \
    for (uint32_t vb_ = blockIdx.x; vb_ < t.total[kind]; vb_ += gridDim.x) call; \
    grid.sync()

__global__ void __launch_bounds__(FPSC_BLOCK) k_step_cooperative(fpsc_table t, uint32_t iterations)
{
    cg::grid_group grid = cg::this_grid();
    FPSC_EACH(K_TISSUE, ph_predict(t, vb_));
    FPSC_EACH(K_FREE, ph_rhs_const(t, vb_));
    for (uint32_t it = 0; it < iterations; ++it) {
        /* the local step and the collision projections read only x: one barrier for both */
        for (uint32_t vb = blockIdx.x; vb < t.total[K_PRISM]; vb += gridDim.x) ph_local(t, vb);
        FPSC_EACH(K_PAIR, ph_col_pairs(t, vb_));
        FPSC_EACH(K_FREE, ph_rhs(t, vb_));
        FPSC_EACH(K_FREE, ph_pcg_init(t, vb_, it));
        for (uint32_t j = 0; j < t.pcg; ++j) {
            FPSC_EACH(K_FREE, ph_pcg_matvec(t, vb_, it, j));
            FPSC_EACH(K_FREE, ph_pcg_update(t, vb_, it, j));
            FPSC_EACH(K_FREE, ph_pcg_direction(t, vb_, it, j));
        }
    }
    FPSC_EACH(K_TISSUE, ph_velocity(t, vb_));
    FPSC_EACH(K_SKIN, ph_skin_positions(t, vb_));
    FPSC_EACH(K_SKIN, ph_skin_normals(t, vb_));
    for (uint32_t vb = blockIdx.x; vb < t.total[K_RENDER]; vb += gridDim.x) ph_render(t, vb);
}

/* ---- host side ---- */

struct fpsc_instance {
    sinew_host_api host;
    fpsc_desc desc;
    fpsc_dev hd;              /* device pointers (scal, bad, target_c, skinning set by a batch) */
    void* allocations[64];
    uint32_t allocation_count;
    /* Collisions: the arrays whose size follows the pair set (device; freed on their own),
     * their capacities, and the pinned host copy of the state after each step. */
    void* col_dyn[6];         /* COL_PAIR_ROW .. COL_CRS_VAL */
    size_t col_capacity[6];   /* entries */
    double* mirror;           /* x, then v: N x 3 each */
    float* own_pos;           /* device output when not bound to device memory */
    float* own_nrm;
    float* host_pos;          /* pinned copies of own_pos / own_nrm */
    float* host_nrm;
    fpsc_out out;             /* this step's output */
    fpsc_out last;            /* where the latest shape is (reads), and before that step */
    fpsc_out prev_last;
    uint32_t crs_block_max;   /* the most CRS entries of one block of free rows */
    uint32_t active;
    fpsc_batch* batch;
};

struct fpsc_batch {
    sinew_host_api host;
    int ordinal;
    fpsc_launch requested, launch;
    cudaStream_t stream;
    fpsc_instance** members;
    uint32_t count, capacity;
    uint32_t iterations, pcg;
    int dirty;                /* members changed: tables and graph rebuilt at the next step */
    int prepared;             /* fpsc_batch_prepare ran for the next step */
    /* Built for the current members. */
    fpsc_table table;
    void* dev_table_mem[3];   /* devs, outs, first */
    double* scal;
    unsigned int* bad;
    unsigned int* bad_host;   /* pinned */
    double* stage_target;     /* device */
    double* stage_target_host; /* pinned */
    float* stage_skin;
    float* stage_skin_host;
    fpsc_out* outs_host;      /* pinned */
    size_t target_count, skin_count;
    size_t* target_offset;
    size_t* skin_offset;
    size_t scal_per_member;
    uint8_t* captured_host_output; /* per member: 1 when the graph copies its output down */
    cudaGraphExec_t graph;
    unsigned coop_grid;
    size_t crs_smem;          /* dynamic shared memory of the product kernels (bytes) */
    /* Profiling: CUDA events around each step's launches. */
    cudaEvent_t ev_start, ev_stop;
    int timing;               /* events recorded for the step in flight */
    double gpu_ms;
    uint64_t gpu_steps;
};

static sinew_result cuda_check(const sinew_host_api* host, cudaError_t e, const char* what)
{
    if (e == cudaSuccess) return SINEW_OK;
    (void)cudaGetLastError(); /* clear the sticky error so the next call reports its own */
    sinew_result r = e == cudaErrorMemoryAllocation ? SINEW_ERROR_OUT_OF_MEMORY
                                                    : SINEW_ERROR_DEVICE;
    return sinew_host_fail(host, r, "fps-cuda: %s failed: %s (%s)", what, cudaGetErrorName(e),
                           cudaGetErrorString(e));
}

#define CK(call, what)                                                   \
    do {                                                                 \
        sinew_result ck_ = cuda_check(host, (call), (what));             \
        if (ck_ != SINEW_OK) return ck_;                                 \
    } while (0)

/* Allocates `bytes` on the device (at least 16, so that an empty array is a valid pointer)
 * and copies `src` (may be NULL: zeroed). */
static sinew_result inst_upload(fpsc_instance* inst, void** dst, const void* src, size_t bytes)
{
    const sinew_host_api* host = &inst->host;
    if (inst->allocation_count >= sizeof inst->allocations / sizeof inst->allocations[0])
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_FAILED,
                               "fps-cuda: too many device arrays for one instance");
    size_t size = bytes < 16u ? 16u : bytes;
    void* p = NULL;
    CK(cudaMalloc(&p, size), "cudaMalloc");
    inst->allocations[inst->allocation_count++] = p;
    *dst = p;
    if (src && bytes) CK(cudaMemcpy(p, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy (upload)");
    else CK(cudaMemset(p, 0, size), "cudaMemset");
    return SINEW_OK;
}

#define UP(field, src, bytes)                                                            \
    do {                                                                                 \
        void* up_ = NULL;                                                                \
        sinew_result upr_ = inst_upload(inst, &up_, (src), (bytes));                     \
        if (upr_ != SINEW_OK) {                                                          \
            fpsc_destroy(inst);                                                          \
            return upr_;                                                                 \
        }                                                                                \
        field = (decltype(field))up_;                                                    \
    } while (0)

/* The collision arrays that grow with the pair set. */
enum { COL_PAIR_ROW = 0, COL_PAIR_TRI, COL_CONTRIB, COL_GATHER, COL_CRS_COL, COL_CRS_VAL };
static const size_t col_entry_size[6] = {sizeof(uint32_t), sizeof(uint32_t), sizeof(double),
                                         sizeof(uint32_t), sizeof(uint32_t), sizeof(double)};

/* Points the instance's view at its collision arrays (after an allocation). */
static void col_bind(fpsc_instance* inst)
{
    fpsc_dev& D = inst->hd;
    D.col_pair_row = (const uint32_t*)inst->col_dyn[COL_PAIR_ROW];
    D.col_pair_tri = (const uint32_t*)inst->col_dyn[COL_PAIR_TRI];
    D.col_contrib = (double*)inst->col_dyn[COL_CONTRIB];
    D.col_gather = (const uint32_t*)inst->col_dyn[COL_GATHER];
    D.crs_col = (const uint32_t*)inst->col_dyn[COL_CRS_COL];
    D.crs_val = (const double*)inst->col_dyn[COL_CRS_VAL];
    D.col_cap = (uint32_t)inst->col_capacity[COL_PAIR_ROW];
}

/* Makes array k hold at least `need` entries (contents lost when it grows; the caller uploads
 * after); sets *moved when it got a new address. */
static sinew_result col_reserve(fpsc_instance* inst, int k, size_t need, int* moved)
{
    const sinew_host_api* host = &inst->host;
    if (inst->col_dyn[k] && need <= inst->col_capacity[k]) return SINEW_OK;
    size_t cap = need + need / 2u + 64u;
    if (k == COL_PAIR_ROW && cap > UINT32_MAX) cap = UINT32_MAX; /* K_PAIR rows are 32-bit */
    void* p = NULL;
    CK(cudaMalloc(&p, cap * col_entry_size[k]), "cudaMalloc (collisions)");
    if (inst->col_dyn[k]) (void)cudaFree(inst->col_dyn[k]);
    inst->col_dyn[k] = p;
    inst->col_capacity[k] = cap;
    *moved = 1;
    return SINEW_OK;
}

/* Collision arrays at creation: room for one pair per skin vertex (fps_collide keeps at most
 * one pair per skin vertex, so these do not move in practice) and A's CRS part as the merged
 * part without pairs. */
static sinew_result col_create(fpsc_instance* inst, const fpsc_desc* d)
{
    const sinew_host_api* host = &inst->host;
    uint32_t n = d->n, ns = d->ns;
    size_t crs = d->A.crs_ptr[ns];
    size_t need[6] = {n, n, 12u * ((size_t)n + n / 2u + 64u), 4u * (size_t)n,
                      crs + 6u * (size_t)n, crs + 6u * (size_t)n};
    int moved = 0;
    for (int k = 0; k < 6; ++k) {
        sinew_result r = col_reserve(inst, k, need[k], &moved);
        if (r != SINEW_OK) return r;
    }
    col_bind(inst);
    if (crs) {
        CK(cudaMemcpy(inst->col_dyn[COL_CRS_COL], d->A.crs_col, crs * sizeof(uint32_t),
                      cudaMemcpyHostToDevice), "cudaMemcpy (CRS part)");
        CK(cudaMemcpy(inst->col_dyn[COL_CRS_VAL], d->A.crs_val, crs * sizeof(double),
                      cudaMemcpyHostToDevice), "cudaMemcpy (CRS part)");
    }
    size_t N3 = 3u * (size_t)d->N;
    CK(cudaMallocHost((void**)&inst->mirror, 2u * N3 * sizeof(double) + 16u),
       "cudaMallocHost (state)");
    memcpy(inst->mirror, d->x, N3 * sizeof(double));
    memcpy(inst->mirror + N3, d->v, N3 * sizeof(double));
    return SINEW_OK;
}

extern "C" sinew_result fpsc_create(const sinew_host_api* host, const fpsc_desc* d,
                                    fpsc_instance** out)
{
    if (!out || !d)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "fpsc_create: NULL argument");
    *out = NULL;
    if (d->N != 2u * d->n || d->ns > d->N || !d->x || !d->v || !d->perm || !d->inv ||
        !d->target || !d->skinning || d->iterations == 0 || d->pcg_iterations == 0 ||
        d->A.ell_width == 0 || (d->render_count && !d->upsample) || !d->vertex_tri_offsets ||
        !d->skin_joint || (d->triangle_count && !d->triangles) ||
        (d->mls_indices && (!d->mls_weights || !d->mls_normal_weights)))
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fpsc_create: inconsistent simulation (n %u, N %u, ns %u)", d->n,
                               d->N, d->ns);
    bool col_bad = d->collisions && (!d->col_triangles || !d->col_sign ||
                                     d->col_triangle_count == 0 || !(d->col_weight > 0.0) ||
                                     !(d->col_margin >= 0.0) || !isfinite(d->col_weight) ||
                                     !isfinite(d->col_margin) ||
                                     (d->col_bone_count &&
                                      (!d->col_cap_frame || !d->col_cap_radii)));
    for (size_t k = 0; d->collisions && !col_bad && k < 3u * (size_t)d->col_triangle_count; ++k)
        col_bad = d->col_triangles[k] >= d->N; /* rows of x the projections read */
    if (col_bad)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fpsc_create: inconsistent collision data (%u triangles, weight %g, "
                               "margin %g)", d->col_triangle_count, d->col_weight, d->col_margin);
    CK(cudaSetDevice(d->ordinal), "cudaSetDevice");
    fpsc_instance* inst = (fpsc_instance*)calloc(1, sizeof(fpsc_instance));
    if (!inst) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps-cuda: out of memory");
    inst->host = *host;
    inst->desc = *d;
    fpsc_dev& D = inst->hd;
    uint32_t n = d->n, N = d->N, ns = d->ns;
    size_t S = d->prisms.stride, N3 = 3u * (size_t)N, ns3 = 3u * (size_t)ns;
    D.n = n;
    D.N = N;
    D.ns = ns;
    D.nc = N - ns;
    D.prism_count = d->prism_count;
    D.render_count = d->render_count;
    D.ell_width = d->A.ell_width;
    D.stride = S;
    D.h = d->h;
    D.vel_f = d->damping / d->h;
    UP(D.x, d->x, N3 * sizeof(double));
    UP(D.v, d->v, N3 * sizeof(double));
    UP(D.x_prev, d->x, N3 * sizeof(double));
    UP(D.pred, NULL, N3 * sizeof(double));
    UP(D.rhs_const, NULL, ns3 * sizeof(double));
    UP(D.b, NULL, ns3 * sizeof(double));
    UP(D.r, NULL, ns3 * sizeof(double));
    UP(D.d, NULL, ns3 * sizeof(double));
    UP(D.q, NULL, ns3 * sizeof(double));
    UP(D.mass_h2, d->mass_h2, ns * sizeof(double));
    UP(D.jinv, d->jinv, ns * sizeof(double));
    UP(D.pv, d->prisms.pv, 6u * S * sizeof(int32_t));
    UP(D.G, d->prisms.G, 18u * S * sizeof(float));
    UP(D.inv_w, d->prisms.inv_w, S * sizeof(float));
    D.volume_keep = d->prisms.volume_keep;
    D.volume_lo = d->prisms.volume_lo;
    D.volume_hi = d->prisms.volume_hi;
    UP(D.contrib, NULL, 18u * S * sizeof(float));
    UP(D.gather_ptr, d->gather_ptr, ((size_t)ns + 1u) * sizeof(uint32_t));
    UP(D.gather, d->gather, (size_t)d->gather_ptr[ns] * sizeof(uint32_t));
    size_t ell = (size_t)d->A.ell_width * ns, crs = d->A.crs_ptr[ns];
    UP(D.ell_val, d->A.ell_val, ell * sizeof(double));
    UP(D.ell_col, d->A.ell_col, ell * sizeof(uint32_t));
    UP(D.crs_ptr, d->A.crs_ptr, ((size_t)ns + 1u) * sizeof(uint32_t));
    if (!d->collisions) {
        UP(D.crs_col, d->A.crs_col, crs * sizeof(uint32_t));
        UP(D.crs_val, d->A.crs_val, crs * sizeof(double));
    }
    UP(D.crs_none, NULL, ((size_t)ns + 1u) * sizeof(uint32_t));
    for (uint32_t s0 = 0; s0 < ns; s0 += FPSC_BLOCK) {
        uint32_t end = s0 + FPSC_BLOCK < ns ? s0 + FPSC_BLOCK : ns;
        uint32_t c = d->A.crs_ptr[end] - d->A.crs_ptr[s0];
        if (c > inst->crs_block_max) inst->crs_block_max = c;
    }
    if (d->collisions) {
        /* Sec. 6: room in shared memory for A_col's entries of a block as well (a block of
         * more reads its CRS part from global memory, same order, same bits) */
        inst->crs_block_max += 2u * FPSC_BLOCK;
        uint32_t hdr[3] = {0u, 0u, 0u};
        size_t T = d->col_triangle_count;
        UP(D.col_hdr, hdr, sizeof hdr);
        if (d->col_bone_count) {
            size_t B = d->col_bone_count;
            D.col_bones = d->col_bone_count;
            UP(D.col_cap_frame, d->col_cap_frame, B * FPS_CAP_FRAME * sizeof(double));
            UP(D.col_cap_radii, d->col_cap_radii,
               B * FPS_CAP_SLICES * FPS_CAP_SECTORS * sizeof(double));
            UP(D.col_cap_pose, NULL, 9u * B * sizeof(double));
            UP(D.col_cap_of_row, NULL, (size_t)ns * sizeof(uint32_t));
        }
        UP(D.col_tris, d->col_triangles, 3u * T * sizeof(uint32_t));
        UP(D.col_sign, d->col_sign, T * sizeof(double));
        UP(D.col_gather_ptr, NULL, ((size_t)ns + 1u) * sizeof(uint32_t));
        UP(D.col_extra, NULL, ns3 * sizeof(double));
        D.col_weight = d->col_weight;
        D.col_margin = d->col_margin;
        sinew_result cr = col_create(inst, d);
        if (cr != SINEW_OK) {
            fpsc_destroy(inst);
            return cr;
        }
    }
    size_t ksb = d->Ksb.ptr[ns];
    UP(D.ksb_ptr, d->Ksb.ptr, ((size_t)ns + 1u) * sizeof(uint32_t));
    UP(D.ksb_col, d->Ksb.col, ksb * sizeof(uint32_t));
    UP(D.ksb_val, d->Ksb.val, ksb * sizeof(double));
    UP(D.inv, d->inv, (size_t)n * sizeof(uint32_t));
    UP(D.skin_f, NULL, 3u * (size_t)n * sizeof(float));
    UP(D.skin_n, NULL, 3u * (size_t)n * sizeof(float));
    UP(D.up, d->upsample, (size_t)d->render_count * sizeof(fpsc_upsample));
    UP(D.tris, d->triangles, 3u * (size_t)d->triangle_count * sizeof(uint32_t));
    UP(D.vt_off, d->vertex_tri_offsets, ((size_t)n + 1u) * sizeof(uint32_t));
    UP(D.vt, d->vertex_tris, (size_t)d->vertex_tri_offsets[n] * sizeof(uint32_t));
    UP(D.skin_joint, d->skin_joint, (size_t)n * sizeof(uint32_t));
    if (d->mls_indices) {
        size_t entries = (size_t)d->render_count * SINEW_MLS_K;
        UP(D.mls_idx, d->mls_indices, entries * sizeof(uint32_t));
        UP(D.mls_w, d->mls_weights, entries * sizeof(float));
        UP(D.mls_wn, d->mls_normal_weights, entries * sizeof(float));
    }
    UP(inst->own_pos, NULL, 12u * (size_t)d->render_count);
    UP(inst->own_nrm, NULL, 12u * (size_t)d->render_count);
    size_t out_bytes = 12u * (size_t)(d->render_count ? d->render_count : 1u);
    cudaError_t e = cudaMallocHost((void**)&inst->host_pos, out_bytes);
    if (e == cudaSuccess) e = cudaMallocHost((void**)&inst->host_nrm, out_bytes);
    if (e != cudaSuccess) {
        sinew_result r = cuda_check(host, e, "cudaMallocHost (output)");
        fpsc_destroy(inst);
        return r;
    }
    /* the uploads above are on the legacy stream, and a copy from pageable memory may return
     * before its DMA ends: the batch's non-blocking stream must not start before them */
    e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        sinew_result r = cuda_check(host, e, "cudaDeviceSynchronize (upload)");
        fpsc_destroy(inst);
        return r;
    }
    fpsc_set_output(inst, NULL, 0, NULL, 0);
    inst->last = inst->prev_last = inst->out;
    inst->active = 1u;
    *out = inst;
    return SINEW_OK;
}

static void batch_remove(fpsc_batch* b, fpsc_instance* inst);

extern "C" void fpsc_destroy(fpsc_instance* inst)
{
    if (!inst) return;
    if (inst->batch) batch_remove(inst->batch, inst);
    (void)cudaSetDevice(inst->desc.ordinal);
    for (uint32_t k = 0; k < inst->allocation_count; ++k) (void)cudaFree(inst->allocations[k]);
    for (int k = 0; k < 6; ++k)
        if (inst->col_dyn[k]) (void)cudaFree(inst->col_dyn[k]);
    if (inst->mirror) (void)cudaFreeHost(inst->mirror);
    if (inst->host_pos) (void)cudaFreeHost(inst->host_pos);
    if (inst->host_nrm) (void)cudaFreeHost(inst->host_nrm);
    free(inst);
}

extern "C" void fpsc_set_output(fpsc_instance* inst, float* positions, size_t position_stride,
                                float* normals, size_t normal_stride)
{
    if (!inst) return;
    if (positions || normals) {
        inst->out.pos = positions;
        inst->out.nrm = normals;
        inst->out.pos_stride = position_stride ? position_stride : 12u;
        inst->out.nrm_stride = normal_stride ? normal_stride : 12u;
    } else {
        inst->out.pos = inst->own_pos;
        inst->out.nrm = inst->own_nrm;
        inst->out.pos_stride = inst->out.nrm_stride = 12u;
    }
}

extern "C" void fpsc_set_active(fpsc_instance* inst, int active)
{
    if (inst) inst->active = active ? 1u : 0u;
}

extern "C" sinew_result fpsc_read_output(fpsc_instance* inst, float* positions, float* normals)
{
    const sinew_host_api* host = &inst->host;
    size_t n = inst->desc.render_count;
    if (!n) return SINEW_OK;
    CK(cudaSetDevice(inst->desc.ordinal), "cudaSetDevice");
    const fpsc_out* o = &inst->last;
    if (positions)
        CK(cudaMemcpy2D(positions, 12u, o->pos, (size_t)o->pos_stride, 12u, n,
                        cudaMemcpyDeviceToHost), "cudaMemcpy2D (positions)");
    if (normals && o->nrm)
        CK(cudaMemcpy2D(normals, 12u, o->nrm, (size_t)o->nrm_stride, 12u, n,
                        cudaMemcpyDeviceToHost), "cudaMemcpy2D (normals)");
    return SINEW_OK;
}

extern "C" sinew_result fpsc_write_output(fpsc_instance* inst, const float* positions,
                                          const float* normals, void* stream, int wait)
{
    const sinew_host_api* host = &inst->host;
    size_t n = inst->desc.render_count;
    if (!n) return SINEW_OK;
    CK(cudaSetDevice(inst->desc.ordinal), "cudaSetDevice");
    cudaStream_t s = (cudaStream_t)stream;
    const fpsc_out* o = &inst->out;
    if (positions)
        CK(cudaMemcpy2DAsync(o->pos, (size_t)o->pos_stride, positions, 12u, 12u, n,
                             cudaMemcpyHostToDevice, s), "cudaMemcpy2DAsync (positions)");
    if (normals && o->nrm)
        CK(cudaMemcpy2DAsync(o->nrm, (size_t)o->nrm_stride, normals, 12u, 12u, n,
                             cudaMemcpyHostToDevice, s), "cudaMemcpy2DAsync (normals)");
    if (wait) CK(cudaStreamSynchronize(s), "cudaStreamSynchronize (output)");
    inst->prev_last = inst->last;
    inst->last = inst->out;
    return SINEW_OK;
}

static bool host_output(const fpsc_instance* inst)
{
    return inst->out.pos == inst->own_pos;
}

extern "C" const float* fpsc_host_positions(const fpsc_instance* inst)
{
    return inst && host_output(inst) ? inst->host_pos : NULL;
}

extern "C" const float* fpsc_host_normals(const fpsc_instance* inst)
{
    return inst && host_output(inst) ? inst->host_nrm : NULL;
}

extern "C" sinew_result fpsc_upload_state(fpsc_instance* inst)
{
    const sinew_host_api* host = &inst->host;
    size_t bytes = 3u * (size_t)inst->desc.N * sizeof(double);
    CK(cudaSetDevice(inst->desc.ordinal), "cudaSetDevice");
    CK(cudaMemcpy(inst->hd.x, inst->desc.x, bytes, cudaMemcpyHostToDevice), "cudaMemcpy (x)");
    CK(cudaMemcpy(inst->hd.v, inst->desc.v, bytes, cudaMemcpyHostToDevice), "cudaMemcpy (v)");
    /* a copy from pageable memory may return before its DMA ends, and the batch's stream does
     * not wait for the legacy stream: the next step must see the new state */
    CK(cudaDeviceSynchronize(), "cudaDeviceSynchronize (state)");
    if (inst->mirror) {
        memcpy(inst->mirror, inst->desc.x, bytes);
        memcpy(inst->mirror + 3u * (size_t)inst->desc.N, inst->desc.v, bytes);
    }
    return SINEW_OK;
}

extern "C" const double* fpsc_state_mirror(const fpsc_instance* inst)
{
    return inst ? inst->mirror : NULL;
}

extern "C" sinew_result fpsc_set_collisions(fpsc_instance* inst, const fpsc_collisions* c)
{
    if (!inst) return SINEW_ERROR_INVALID_ARGUMENT;
    const sinew_host_api* host = &inst->host;
    const fpsc_desc* d = &inst->desc;
    if (!c || !d->collisions || !inst->hd.col_hdr)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "fpsc_set_collisions: %s",
                               !c ? "the data are NULL"
                                  : "the instance was created without collisions");
    const char* why = fpsc_col_check(d->ns, d->N, d->col_triangle_count, d->col_bone_count, c);
    if (why)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "fpsc_set_collisions: %s "
                               "(%u pairs, stride %u, %u unknowns)", why, c->pair_count,
                               c->stride, d->ns);
    CK(cudaSetDevice(d->ordinal), "cudaSetDevice");
    uint32_t ns = d->ns;
    size_t gathers = c->gather_ptr[ns], entries = c->crs_ptr[ns];
    size_t need[6] = {c->pair_count, c->pair_count, 12u * (size_t)c->stride, gathers, entries,
                      entries};
    int moved = 0;
    sinew_result rr = SINEW_OK;
    for (int k = 0; k < 6 && rr == SINEW_OK; ++k) rr = col_reserve(inst, k, need[k], &moved);
    if (moved) {
        /* new addresses (or more pair slots): the batch's tables and graph are rebuilt */
        col_bind(inst);
        if (inst->batch) inst->batch->dirty = 1;
    }
    if (rr != SINEW_OK) return rr; /* the caller uploads everything again before a step */
    fpsc_dev& D = inst->hd;
    cudaStream_t st = inst->batch ? inst->batch->stream : (cudaStream_t)0;
    uint32_t hdr[3] = {c->pair_count, c->stride, c->cap_count};
    /* Asynchronous copies on the stream of the next step (from pageable memory they return
     * once the source has been read, so the caller may reuse it). */
    CK(cudaMemcpyAsync((void*)D.col_hdr, hdr, sizeof hdr, cudaMemcpyHostToDevice, st),
       "cudaMemcpyAsync (pair count)");
    if (c->pair_count) {
        CK(cudaMemcpyAsync((void*)D.col_pair_row, c->pair_row, c->pair_count * sizeof(uint32_t),
                           cudaMemcpyHostToDevice, st), "cudaMemcpyAsync (pairs)");
        CK(cudaMemcpyAsync((void*)D.col_pair_tri, c->pair_tri, c->pair_count * sizeof(uint32_t),
                           cudaMemcpyHostToDevice, st), "cudaMemcpyAsync (pairs)");
    }
    CK(cudaMemcpyAsync((void*)D.col_gather_ptr, c->gather_ptr, ((size_t)ns + 1u) * sizeof(uint32_t),
                       cudaMemcpyHostToDevice, st), "cudaMemcpyAsync (gather lists)");
    if (gathers)
        CK(cudaMemcpyAsync((void*)D.col_gather, c->gather, gathers * sizeof(uint32_t),
                           cudaMemcpyHostToDevice, st), "cudaMemcpyAsync (gather lists)");
    CK(cudaMemcpyAsync((void*)D.crs_ptr, c->crs_ptr, ((size_t)ns + 1u) * sizeof(uint32_t),
                       cudaMemcpyHostToDevice, st), "cudaMemcpyAsync (matrix)");
    if (entries) {
        CK(cudaMemcpyAsync((void*)D.crs_col, c->crs_col, entries * sizeof(uint32_t),
                           cudaMemcpyHostToDevice, st), "cudaMemcpyAsync (matrix)");
        CK(cudaMemcpyAsync((void*)D.crs_val, c->crs_val, entries * sizeof(double),
                           cudaMemcpyHostToDevice, st), "cudaMemcpyAsync (matrix)");
    }
    /* Sec. 6: A's diagonal is ELL entry 0, the first ns values */
    CK(cudaMemcpyAsync((void*)D.ell_val, c->diagonal, (size_t)ns * sizeof(double),
                       cudaMemcpyHostToDevice, st), "cudaMemcpyAsync (diagonal)");
    CK(cudaMemcpyAsync((void*)D.jinv, c->jinv, (size_t)ns * sizeof(double),
                       cudaMemcpyHostToDevice, st), "cudaMemcpyAsync (preconditioner)");
    if (c->cap_of_row && D.col_bones)
        CK(cudaMemcpyAsync((void*)D.col_cap_of_row, c->cap_of_row, (size_t)ns * sizeof(uint32_t),
                           cudaMemcpyHostToDevice, st), "cudaMemcpyAsync (capsule contacts)");
    if (!inst->batch) CK(cudaStreamSynchronize(st), "cudaStreamSynchronize (collisions)");
    return SINEW_OK;
}

extern "C" sinew_result fpsc_set_capsule_pose(fpsc_instance* inst, const double* frames)
{
    if (!inst) return SINEW_ERROR_INVALID_ARGUMENT;
    const sinew_host_api* host = &inst->host;
    const fpsc_dev& D = inst->hd;
    if (!D.col_bones || !frames)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "fpsc_set_capsule_pose: %s",
                               !D.col_bones ? "the instance has no limb capsules"
                                            : "the frames are NULL");
    const size_t count = 9u * (size_t)D.col_bones;
    for (size_t k = 0; k < count; ++k)
        if (!isfinite(frames[k]))
            return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                                   "fpsc_set_capsule_pose: bone %zu's frame is not finite",
                                   k / 9u);
    CK(cudaSetDevice(inst->desc.ordinal), "cudaSetDevice");
    cudaStream_t st = inst->batch ? inst->batch->stream : (cudaStream_t)0;
    CK(cudaMemcpyAsync((void*)D.col_cap_pose, frames, count * sizeof(double),
                       cudaMemcpyHostToDevice, st), "cudaMemcpyAsync (capsule frames)");
    if (!inst->batch) CK(cudaStreamSynchronize(st), "cudaStreamSynchronize (capsule frames)");
    return SINEW_OK;
}

extern "C" sinew_result fpsc_download_state(fpsc_instance* inst)
{
    const sinew_host_api* host = &inst->host;
    size_t bytes = 3u * (size_t)inst->desc.N * sizeof(double);
    CK(cudaSetDevice(inst->desc.ordinal), "cudaSetDevice");
    CK(cudaMemcpy(inst->desc.x, inst->hd.x, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy (x)");
    CK(cudaMemcpy(inst->desc.v, inst->hd.v, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy (v)");
    return SINEW_OK;
}

/* ---- batches ---- */

static void batch_release_tables(fpsc_batch* b)
{
    if (b->graph) (void)cudaGraphExecDestroy(b->graph);
    b->graph = NULL;
    for (int k = 0; k < 3; ++k) {
        if (b->dev_table_mem[k]) (void)cudaFree(b->dev_table_mem[k]);
        b->dev_table_mem[k] = NULL;
    }
    if (b->scal) (void)cudaFree(b->scal);
    if (b->bad) (void)cudaFree(b->bad);
    if (b->stage_target) (void)cudaFree(b->stage_target);
    if (b->stage_skin) (void)cudaFree(b->stage_skin);
    if (b->bad_host) (void)cudaFreeHost(b->bad_host);
    if (b->stage_target_host) (void)cudaFreeHost(b->stage_target_host);
    if (b->stage_skin_host) (void)cudaFreeHost(b->stage_skin_host);
    if (b->outs_host) (void)cudaFreeHost(b->outs_host);
    free(b->target_offset);
    free(b->skin_offset);
    free(b->captured_host_output);
    b->scal = NULL;
    b->bad = b->bad_host = NULL;
    b->stage_target = b->stage_target_host = NULL;
    b->stage_skin = b->stage_skin_host = NULL;
    b->outs_host = NULL;
    b->target_offset = b->skin_offset = NULL;
    b->captured_host_output = NULL;
    memset(&b->table, 0, sizeof b->table);
}

extern "C" sinew_result fpsc_batch_create(const sinew_host_api* host, int ordinal,
                                          fpsc_launch launch, fpsc_batch** out)
{
    if (!out)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fpsc_batch_create: out is NULL");
    *out = NULL;
    if ((int)launch < 0 || launch > FPSC_LAUNCH_STREAM)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fpsc_batch_create: unknown launch mode %d", (int)launch);
    CK(cudaSetDevice(ordinal), "cudaSetDevice");
    if (launch == FPSC_LAUNCH_COOPERATIVE) {
        int coop = 0;
        CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, ordinal),
           "cudaDeviceGetAttribute (cooperative launch)");
        if (!coop)
            return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                                   "fps-cuda: launch=cooperative, but device %d has no "
                                   "cooperative launch", ordinal);
    }
    fpsc_batch* b = (fpsc_batch*)calloc(1, sizeof(fpsc_batch));
    if (!b) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps-cuda: out of memory");
    b->host = *host;
    b->ordinal = ordinal;
    b->requested = b->launch = launch;
    cudaError_t e = cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        free(b);
        return cuda_check(host, e, "cudaStreamCreate");
    }
    b->dirty = 1;
    *out = b;
    return SINEW_OK;
}

extern "C" sinew_result fpsc_batch_set_profile(fpsc_batch* b, int on)
{
    const sinew_host_api* host = &b->host;
    if (!on || b->ev_start) return SINEW_OK;
    CK(cudaSetDevice(b->ordinal), "cudaSetDevice");
    CK(cudaEventCreate(&b->ev_start), "cudaEventCreate");
    cudaError_t e = cudaEventCreate(&b->ev_stop);
    if (e != cudaSuccess) {
        (void)cudaEventDestroy(b->ev_start);
        b->ev_start = NULL;
    }
    return cuda_check(host, e, "cudaEventCreate");
}

extern "C" void fpsc_batch_profile(const fpsc_batch* b, double* gpu_ms, uint64_t* steps)
{
    *gpu_ms = b ? b->gpu_ms : 0.0;
    *steps = b ? b->gpu_steps : 0u;
}

extern "C" void fpsc_batch_destroy(fpsc_batch* b)
{
    if (!b) return;
    (void)cudaSetDevice(b->ordinal);
    (void)cudaStreamSynchronize(b->stream);
    if (b->ev_start) (void)cudaEventDestroy(b->ev_start);
    if (b->ev_stop) (void)cudaEventDestroy(b->ev_stop);
    for (uint32_t i = 0; i < b->count; ++i) b->members[i]->batch = NULL;
    batch_release_tables(b);
    (void)cudaStreamDestroy(b->stream);
    free(b->members);
    free(b);
}

extern "C" sinew_result fpsc_batch_add(fpsc_batch* b, fpsc_instance* inst)
{
    const sinew_host_api* host = &b->host;
    if (!inst || inst->batch)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fpsc_batch_add: the instance is NULL or already in a batch");
    if (inst->desc.ordinal != b->ordinal)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps-cuda: an instance on device %d cannot join a batch on device "
                               "%d", inst->desc.ordinal, b->ordinal);
    if (b->count && (inst->desc.iterations != b->iterations || inst->desc.pcg_iterations != b->pcg))
        return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                               "fps-cuda: a batch steps every member with the same iteration "
                               "counts (%u x %u), this instance has %u x %u", b->iterations,
                               b->pcg, inst->desc.iterations, inst->desc.pcg_iterations);
    if (b->count == b->capacity) {
        uint32_t cap = b->capacity ? 2u * b->capacity : 8u;
        fpsc_instance** m = (fpsc_instance**)realloc(b->members, cap * sizeof *m);
        if (!m) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps-cuda: out of memory");
        b->members = m;
        b->capacity = cap;
    }
    b->iterations = inst->desc.iterations;
    b->pcg = inst->desc.pcg_iterations;
    b->members[b->count++] = inst;
    inst->batch = b;
    b->dirty = 1;
    return SINEW_OK;
}

static void batch_remove(fpsc_batch* b, fpsc_instance* inst)
{
    (void)cudaSetDevice(b->ordinal);
    (void)cudaStreamSynchronize(b->stream);
    for (uint32_t i = 0; i < b->count; ++i)
        if (b->members[i] == inst) {
            memmove(b->members + i, b->members + i + 1, (b->count - i - 1u) * sizeof *b->members);
            --b->count;
            break;
        }
    inst->batch = NULL;
    b->dirty = 1;
}

extern "C" void fpsc_batch_remove(fpsc_batch* b, fpsc_instance* inst)
{
    if (b && inst && inst->batch == b) batch_remove(b, inst);
}

extern "C" uint32_t fpsc_batch_size(const fpsc_batch* b)
{
    return b ? b->count : 0u;
}

extern "C" fpsc_launch fpsc_batch_launch(const fpsc_batch* b)
{
    return b ? b->launch : FPSC_LAUNCH_AUTO;
}

extern "C" void* fpsc_batch_stream(const fpsc_batch* b)
{
    return b ? (void*)b->stream : NULL;
}

static uint32_t blocks_of(uint32_t rows)
{
    return (rows + FPSC_BLOCK - 1u) / FPSC_BLOCK;
}

/* Tables, scalars and staging for the current members. */
static sinew_result batch_build(fpsc_batch* b)
{
    const sinew_host_api* host = &b->host;
    batch_release_tables(b);
    uint32_t count = b->count;
    /* the PCG's shares: per site one per block of the member's free rows (the largest member's
     * count, so that every member's sites fit) */
    uint32_t most_blocks = 1;
    for (uint32_t i = 0; i < count; ++i)
        if (blocks_of(b->members[i]->hd.ns) > most_blocks) most_blocks = blocks_of(b->members[i]->hd.ns);
    b->scal_per_member = (size_t)b->iterations * (2u * b->pcg + 1u) * 3u * most_blocks;
    b->target_offset = (size_t*)calloc(count + 1u, sizeof(size_t));
    b->skin_offset = (size_t*)calloc(count + 1u, sizeof(size_t));
    b->captured_host_output = (uint8_t*)calloc(count ? count : 1u, 1u);
    fpsc_dev* devs = (fpsc_dev*)calloc(count, sizeof(fpsc_dev));
    uint32_t* first = (uint32_t*)calloc((size_t)K_COUNT * (count + 1u), sizeof(uint32_t));
    if (!b->target_offset || !b->skin_offset || !b->captured_host_output || !devs || !first) {
        free(devs);
        free(first);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps-cuda: out of memory");
    }
    for (uint32_t i = 0; i < count; ++i) {
        const fpsc_instance* m = b->members[i];
        b->target_offset[i + 1] = b->target_offset[i] + 3u * (size_t)m->hd.nc;
        b->skin_offset[i + 1] = b->skin_offset[i] + 16u * (size_t)m->desc.joint_count;
        uint32_t rows[K_COUNT] = {m->hd.prism_count, m->hd.ns, m->hd.N, m->hd.n,
                                  m->hd.render_count, m->hd.col_hdr ? m->hd.col_cap : 0u};
        for (int k = 0; k < K_COUNT; ++k)
            first[(size_t)k * (count + 1u) + i + 1u] =
                first[(size_t)k * (count + 1u) + i] + blocks_of(rows[k]);
    }
    uint32_t crs_cap = 0;
    for (uint32_t i = 0; i < count; ++i)
        if (b->members[i]->crs_block_max > crs_cap) crs_cap = b->members[i]->crs_block_max;
    if (crs_cap > FPSC_CRS_STAGE_MAX) crs_cap = FPSC_CRS_STAGE_MAX;
    b->crs_smem = (size_t)crs_cap * (sizeof(double) + sizeof(uint32_t));
    b->target_count = b->target_offset[count];
    b->skin_count = b->skin_offset[count];
    cudaError_t e = cudaSuccess;
    size_t tbytes = (b->target_count ? b->target_count : 1u) * sizeof(double);
    size_t sbytes = (b->skin_count ? b->skin_count : 1u) * sizeof(float);
    size_t scal_count = (size_t)count * b->scal_per_member;
    size_t cbytes = (scal_count ? scal_count : 1u) * sizeof(double);
    size_t obytes = (count ? count : 1u) * sizeof(fpsc_out);
    if (e == cudaSuccess) e = cudaMalloc((void**)&b->scal, cbytes);
    if (e == cudaSuccess) e = cudaMalloc((void**)&b->bad, (count ? count : 1u) * sizeof(unsigned));
    if (e == cudaSuccess) e = cudaMalloc((void**)&b->stage_target, tbytes);
    if (e == cudaSuccess) e = cudaMalloc((void**)&b->stage_skin, sbytes);
    if (e == cudaSuccess) e = cudaMallocHost((void**)&b->bad_host, (count ? count : 1u) * sizeof(unsigned));
    if (e == cudaSuccess) e = cudaMallocHost((void**)&b->stage_target_host, tbytes);
    if (e == cudaSuccess) e = cudaMallocHost((void**)&b->stage_skin_host, sbytes);
    if (e == cudaSuccess) e = cudaMallocHost((void**)&b->outs_host, obytes);
    if (e == cudaSuccess) e = cudaMalloc(&b->dev_table_mem[0], (count ? count : 1u) * sizeof(fpsc_dev));
    if (e == cudaSuccess) e = cudaMalloc(&b->dev_table_mem[1], obytes);
    if (e == cudaSuccess)
        e = cudaMalloc(&b->dev_table_mem[2], (size_t)K_COUNT * (count + 1u) * sizeof(uint32_t));
    if (e == cudaSuccess) {
        for (uint32_t i = 0; i < count; ++i) {
            devs[i] = b->members[i]->hd;
            devs[i].scal = b->scal + i * b->scal_per_member;
            devs[i].bad = b->bad + i;
            devs[i].target_c = b->stage_target + b->target_offset[i];
            devs[i].skinning = b->stage_skin + b->skin_offset[i];
        }
        /* on the batch's stream: a cudaMemcpy from pageable memory goes onto the legacy stream
         * and may return before its DMA ends, and the non-blocking stream's kernels would not
         * wait for it (the tables change whenever a member joins, leaves or its collision
         * arrays move); an asynchronous copy from pageable memory has read its source when it
         * returns, so devs and first may be freed below */
        e = cudaMemcpyAsync(b->dev_table_mem[0], devs, count * sizeof(fpsc_dev),
                            cudaMemcpyHostToDevice, b->stream);
    }
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(b->dev_table_mem[2], first,
                            (size_t)K_COUNT * (count + 1u) * sizeof(uint32_t),
                            cudaMemcpyHostToDevice, b->stream);
    b->table.count = count;
    b->table.pcg = b->pcg;
    b->table.crs_cap = crs_cap;
    b->table.dev = (const fpsc_dev*)b->dev_table_mem[0];
    b->table.out = (const fpsc_out*)b->dev_table_mem[1];
    b->table.first = (const uint32_t*)b->dev_table_mem[2];
    for (int k = 0; k < K_COUNT; ++k) b->table.total[k] = first[(size_t)k * (count + 1u) + count];
    free(devs);
    free(first);
    return cuda_check(host, e, "allocating the batch's tables");
}

#define LAUNCH_SMEM(kind, smem, kernel, ...)                                                  \
    do {                                                                                      \
        if (t.total[kind]) {                                                                  \
            kernel<<<t.total[kind], FPSC_BLOCK, (smem), b->stream>>>(t, ##__VA_ARGS__);       \
            CK(cudaGetLastError(), #kernel);                                                  \
        }                                                                                     \
    } while (0)
#define LAUNCH(kind, kernel, ...) LAUNCH_SMEM(kind, 0, kernel, ##__VA_ARGS__)

/* Enqueues a whole step on the stream (run directly, or captured into the graph). */
static sinew_result batch_enqueue(fpsc_batch* b, int cooperative)
{
    const sinew_host_api* host = &b->host;
    const fpsc_table t = b->table;
    uint32_t count = b->count;
    CK(cudaMemcpyAsync(b->stage_target, b->stage_target_host,
                       (b->target_count ? b->target_count : 1u) * sizeof(double),
                       cudaMemcpyHostToDevice, b->stream), "cudaMemcpyAsync (targets)");
    CK(cudaMemcpyAsync(b->stage_skin, b->stage_skin_host,
                       (b->skin_count ? b->skin_count : 1u) * sizeof(float),
                       cudaMemcpyHostToDevice, b->stream), "cudaMemcpyAsync (skinning)");
    CK(cudaMemcpyAsync(b->dev_table_mem[1], b->outs_host, count * sizeof(fpsc_out),
                       cudaMemcpyHostToDevice, b->stream), "cudaMemcpyAsync (outputs)");
    CK(cudaMemsetAsync(b->bad, 0, count * sizeof(unsigned), b->stream), "cudaMemsetAsync (flags)");
    if (cooperative) {
        fpsc_table targ = t;
        uint32_t iterations = b->iterations;
        void* args[] = {&targ, &iterations};
        CK(cudaLaunchCooperativeKernel((const void*)k_step_cooperative, dim3(b->coop_grid),
                                       dim3(FPSC_BLOCK), args, b->crs_smem, b->stream),
           "cudaLaunchCooperativeKernel");
    } else {
        LAUNCH(K_TISSUE, k_predict);
        LAUNCH(K_FREE, k_rhs_const);
        for (uint32_t it = 0; it < b->iterations; ++it) {
            LAUNCH(K_PRISM, k_local);
            LAUNCH(K_PAIR, k_col_pairs);
            LAUNCH(K_FREE, k_rhs);
            LAUNCH_SMEM(K_FREE, b->crs_smem, k_pcg_init, it);
            for (uint32_t j = 0; j < b->pcg; ++j) {
                LAUNCH_SMEM(K_FREE, b->crs_smem, k_pcg_matvec, it, j);
                LAUNCH(K_FREE, k_pcg_update, it, j);
                LAUNCH(K_FREE, k_pcg_direction, it, j);
            }
        }
        LAUNCH(K_TISSUE, k_velocity);
        LAUNCH(K_SKIN, k_skin_positions);
        LAUNCH(K_SKIN, k_skin_normals);
        LAUNCH(K_RENDER, k_render);
    }
    for (uint32_t i = 0; i < count; ++i) {
        fpsc_instance* m = b->members[i];
        b->captured_host_output[i] = host_output(m) ? 1u : 0u;
        if (!host_output(m) || !m->hd.render_count) continue;
        size_t bytes = 12u * (size_t)m->hd.render_count;
        CK(cudaMemcpyAsync(m->host_pos, m->own_pos, bytes, cudaMemcpyDeviceToHost, b->stream),
           "cudaMemcpyAsync (positions)");
        CK(cudaMemcpyAsync(m->host_nrm, m->own_nrm, bytes, cudaMemcpyDeviceToHost, b->stream),
           "cudaMemcpyAsync (normals)");
    }
    /* Collisions: the state for the host's detection of the next step (Sec. 6, on the CPU) */
    for (uint32_t i = 0; i < count; ++i) {
        fpsc_instance* m = b->members[i];
        if (!m->mirror) continue;
        size_t bytes = 3u * (size_t)m->hd.N * sizeof(double);
        CK(cudaMemcpyAsync(m->mirror, m->hd.x, bytes, cudaMemcpyDeviceToHost, b->stream),
           "cudaMemcpyAsync (state)");
        CK(cudaMemcpyAsync(m->mirror + 3u * (size_t)m->hd.N, m->hd.v, bytes,
                           cudaMemcpyDeviceToHost, b->stream), "cudaMemcpyAsync (state)");
    }
    CK(cudaMemcpyAsync(b->bad_host, b->bad, count * sizeof(unsigned), cudaMemcpyDeviceToHost,
                       b->stream), "cudaMemcpyAsync (flags)");
    return SINEW_OK;
}

/* Picks the launch for AUTO: the persistent kernel when the device has cooperative launch and
 * every phase fits in one wave of resident blocks (a small batch: its phases are too short
 * for launch overheads to hide), else the graph. Sizes the cooperative grid. */
static sinew_result batch_choose_launch(fpsc_batch* b)
{
    const sinew_host_api* host = &b->host;
    uint32_t most = 1;
    for (int k = 0; k < K_COUNT; ++k)
        if (b->table.total[k] > most) most = b->table.total[k];
    int coop = 0, sms = 0, per_sm = 0;
    CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, b->ordinal),
       "cudaDeviceGetAttribute (cooperative launch)");
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, b->ordinal),
       "cudaDeviceGetAttribute (SM count)");
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_step_cooperative, FPSC_BLOCK,
                                                     b->crs_smem),
       "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    uint32_t resident = (uint32_t)(sms > 0 ? sms : 0) * (uint32_t)(per_sm > 0 ? per_sm : 0);
    b->coop_grid = resident < most ? resident : most;
    if (b->requested == FPSC_LAUNCH_COOPERATIVE && (!coop || b->coop_grid == 0))
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "fps-cuda: the cooperative kernel cannot run on device %d "
                               "(cooperative launch %d, %u resident blocks)", b->ordinal, coop,
                               resident);
    if (b->requested == FPSC_LAUNCH_AUTO)
        b->launch = coop && b->coop_grid > 0 && most <= resident ? FPSC_LAUNCH_COOPERATIVE
                                                                 : FPSC_LAUNCH_GRAPH;
    return SINEW_OK;
}

static sinew_result batch_capture(fpsc_batch* b)
{
    const sinew_host_api* host = &b->host;
    CK(cudaStreamBeginCapture(b->stream, cudaStreamCaptureModeThreadLocal),
       "cudaStreamBeginCapture");
    sinew_result r = batch_enqueue(b, 0);
    cudaGraph_t graph = NULL;
    cudaError_t e = cudaStreamEndCapture(b->stream, &graph);
    if (r != SINEW_OK) {
        if (graph) (void)cudaGraphDestroy(graph);
        return r;
    }
    CK(e, "cudaStreamEndCapture");
    e = cudaGraphInstantiate(&b->graph, graph, 0);
    (void)cudaGraphDestroy(graph);
    if (e != cudaSuccess) b->graph = NULL;
    return cuda_check(host, e, "cudaGraphInstantiate");
}

/* The per-frame inputs of every member into the pinned staging buffers: the constrained rows'
 * targets in the device numbering (the host computed them with ps's sliding code), the
 * skinning matrices and the output pointers. */
static int batch_stage(fpsc_batch* b)
{
    int recapture = 0;
    for (uint32_t i = 0; i < b->count; ++i) {
        const fpsc_instance* m = b->members[i];
        const fpsc_desc* d = &m->desc;
        uint32_t N = d->N, ns = d->ns, nc = N - ns;
        double* t = b->stage_target_host + b->target_offset[i];
        for (int c = 0; c < 3; ++c)
            for (uint32_t j = ns; j < N; ++j)
                t[(size_t)c * nc + (j - ns)] = d->target[(size_t)c * N + d->perm[j]];
        memcpy(b->stage_skin_host + b->skin_offset[i], d->skinning,
               16u * (size_t)d->joint_count * sizeof(float));
        b->outs_host[i] = m->out;
        b->outs_host[i].active = m->active;
        if (m->active) {
            b->members[i]->prev_last = m->last;
            b->members[i]->last = m->out;
        }
        if ((host_output(m) ? 1u : 0u) != b->captured_host_output[i]) recapture = 1;
    }
    return recapture;
}

extern "C" sinew_result fpsc_batch_prepare(fpsc_batch* b)
{
    const sinew_host_api* host = &b->host;
    if (b->count == 0) return SINEW_OK;
    CK(cudaSetDevice(b->ordinal), "cudaSetDevice");
    if (b->dirty) {
        sinew_result r = batch_build(b);
        if (r == SINEW_OK) r = batch_choose_launch(b);
        if (r != SINEW_OK) return r;
        /* The graph is captured below with the staging of this step. */
        for (uint32_t i = 0; i < b->count; ++i)
            b->captured_host_output[i] = host_output(b->members[i]) ? 1u : 0u;
        b->dirty = 0;
    }
    if (batch_stage(b) && b->graph) {
        (void)cudaGraphExecDestroy(b->graph);
        b->graph = NULL;
    }
    sinew_result r = SINEW_OK;
    if (b->launch != FPSC_LAUNCH_COOPERATIVE && b->launch != FPSC_LAUNCH_STREAM && !b->graph)
        r = batch_capture(b);
    b->prepared = r == SINEW_OK;
    return r;
}

extern "C" sinew_result fpsc_batch_step(fpsc_batch* b)
{
    const sinew_host_api* host = &b->host;
    if (b->count == 0) return SINEW_OK;
    if (!b->prepared)
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_FAILED,
                               "fps-cuda: a batch stepped without fpsc_batch_prepare");
    b->prepared = 0;
    CK(cudaSetDevice(b->ordinal), "cudaSetDevice");
    if (b->ev_start) CK(cudaEventRecord(b->ev_start, b->stream), "cudaEventRecord");
    sinew_result r = SINEW_OK;
    switch (b->launch) {
    case FPSC_LAUNCH_COOPERATIVE:
        r = batch_enqueue(b, 1);
        break;
    case FPSC_LAUNCH_STREAM:
        r = batch_enqueue(b, 0);
        break;
    default:
        CK(cudaGraphLaunch(b->graph, b->stream), "cudaGraphLaunch");
        break;
    }
    if (r == SINEW_OK && b->ev_start) {
        CK(cudaEventRecord(b->ev_stop, b->stream), "cudaEventRecord");
        b->timing = 1;
    }
    return r;
}

extern "C" sinew_result fpsc_batch_wait(fpsc_batch* b)
{
    const sinew_host_api* host = &b->host;
    if (b->count == 0 || !b->bad_host) return SINEW_OK;
    CK(cudaSetDevice(b->ordinal), "cudaSetDevice");
    CK(cudaStreamSynchronize(b->stream), "cudaStreamSynchronize (step)");
    if (b->timing) {
        float ms = 0.0f;
        CK(cudaEventElapsedTime(&ms, b->ev_start, b->ev_stop), "cudaEventElapsedTime");
        b->gpu_ms += ms;
        b->gpu_steps++;
        b->timing = 0;
    }
    uint32_t failed = 0, first_failed = 0;
    for (uint32_t i = 0; i < b->count; ++i) {
        if (!b->bad_host[i] || !b->members[i]->active) continue;
        fpsc_instance* m = b->members[i];
        size_t bytes = 3u * (size_t)m->hd.N * sizeof(double);
        CK(cudaMemcpy(m->hd.x, m->hd.x_prev, bytes, cudaMemcpyDeviceToDevice),
           "cudaMemcpy (restoring x)");
        CK(cudaMemset(m->hd.v, 0, bytes), "cudaMemset (clearing v)");
        if (m->mirror) {
            CK(cudaMemcpy(m->mirror, m->hd.x, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy (state)");
            memset(m->mirror + 3u * (size_t)m->hd.N, 0, bytes);
        }
        m->last = m->prev_last; /* the step wrote no output */
        if (!failed) first_failed = i;
        ++failed;
    }
    /* the restores are device-to-device copies on the legacy stream, asynchronous to the host
     * and unordered with the batch's stream: done before the next step */
    if (failed) CK(cudaDeviceSynchronize(), "cudaDeviceSynchronize (restore)");
    if (failed)
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_FAILED,
                               "fps-cuda: the step produced a non-finite position in %u of %u "
                               "batched characters (first: member %u); their shapes are kept and "
                               "their velocities cleared", failed, b->count, first_failed);
    return SINEW_OK;
}
