/* Dual quaternion skinning with AVX-512F on batches of sixteen vertices in
 * structure-of-arrays form, one zmm per component (see dqs_x86.h). A zmm row holds the
 * records of two vertices (i and i+8), so one 8x8 transpose of eight rows turns sixteen
 * records into eight components, in the vertex order 0-3, 8-11, 4-7, 12-15 within the
 * register; every component uses that same order. Built with -mavx512f, called only when the
 * CPU has it. SPDX-License-Identifier: MIT */
#include "dqs_kernels.h"

#if defined(SINEW_SKIN_X86)
#include <immintrin.h>

#include "dqs_x86.h"

/* Rows r[i] = [record of vertex i | record of vertex i+8] (8 floats each) become components
 * r[c] = element c of all sixteen records; applied to components, it gives records back
 * (see dqs_avx512_store). */
SINEW_FORCE_INLINE void dqs_avx512_transpose(__m512 r[8])
{
    __m512 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int h = 0; h < 8; h += 4) {
        u[h + 0] = _mm512_shuffle_ps(t[h + 0], t[h + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[h + 1] = _mm512_shuffle_ps(t[h + 0], t[h + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[h + 2] = _mm512_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[h + 3] = _mm512_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int e = 0; e < 4; ++e) {
        r[e] = _mm512_shuffle_f32x4(u[e], u[4 + e], _MM_SHUFFLE(2, 0, 2, 0));
        r[4 + e] = _mm512_shuffle_f32x4(u[e], u[4 + e], _MM_SHUFFLE(3, 1, 3, 1));
    }
}

/* Two 8-float records as one zmm row. */
SINEW_FORCE_INLINE __m512 dqs_avx512_row(const float* a, const float* b)
{
    return _mm512_castpd_ps(
        _mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(_mm256_load_ps(a))),
                           _mm256_castps_pd(_mm256_load_ps(b)), 1));
}

/* The weights of influences k..k+3 of the batch's sixteen vertices (rows of `width` weights
 * from w, vertex i at row dqs_x86_index(0, i, count)), one zmm per influence in the batch's
 * vertex order, zero past the width. */
SINEW_FORCE_INLINE void dqs_avx512_weights4(const float* w, uint32_t count, uint32_t k,
                                            uint32_t width, __m512 out[4])
{
    static const uint32_t lane_vertex[4] = {0, 8, 4, 12};
    __m512 a[4];
    for (uint32_t i = 0; i < 4u; ++i) {
        __m128 l[4];
        for (int lane = 0; lane < 4; ++lane) {
            const float* row = w + (size_t)dqs_x86_index(0u, lane_vertex[lane] + i, count) * width;
            if (k + 4u <= width) {
                l[lane] = _mm_loadu_ps(row + k);
            } else {
                float t[4];
                for (uint32_t j = 0; j < 4u; ++j) t[j] = k + j < width ? row[k + j] : 0.0f;
                l[lane] = _mm_loadu_ps(t);
            }
        }
        a[i] = _mm512_insertf32x4(_mm512_castps128_ps512(l[0]), l[1], 1);
        a[i] = _mm512_insertf32x4(a[i], l[2], 2);
        a[i] = _mm512_insertf32x4(a[i], l[3], 3);
    }
    __m512 t0 = _mm512_unpacklo_ps(a[0], a[1]), t1 = _mm512_unpacklo_ps(a[2], a[3]);
    __m512 t2 = _mm512_unpackhi_ps(a[0], a[1]), t3 = _mm512_unpackhi_ps(a[2], a[3]);
    out[0] = _mm512_shuffle_ps(t0, t1, _MM_SHUFFLE(1, 0, 1, 0));
    out[1] = _mm512_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 2, 3, 2));
    out[2] = _mm512_shuffle_ps(t2, t3, _MM_SHUFFLE(1, 0, 1, 0));
    out[3] = _mm512_shuffle_ps(t2, t3, _MM_SHUFFLE(3, 2, 3, 2));
}

/* Blends the dual quaternions of the batch's sixteen vertices (rows of `width` offsets from o
 * and weights from w, vertex i at row dqs_x86_index(0, i, count)) into b[0..7], one zmm per
 * component. Rows are addressed from one base pointer: for a full batch (count a constant
 * 16) every row is a constant displacement. */
SINEW_FORCE_INLINE void dqs_avx512_blend16(const float* transforms, const uint32_t* o,
                                           const float* w, uint32_t count, uint32_t width,
                                           __m512 b[8])
{
#define DQS_ROW(i) (o + (size_t)dqs_x86_index(0u, (i), count) * width)
    __m512 wk[4], q[8], r0[4];
    dqs_avx512_weights4(w, count, 0u, width, wk);
    for (uint32_t i = 0; i < 8u; ++i)
        q[i] = dqs_avx512_row(transforms + DQS_ROW(i)[0], transforms + DQS_ROW(i + 8u)[0]);
    dqs_avx512_transpose(q);
    for (int c = 0; c < 4; ++c) r0[c] = q[c];
    for (int c = 0; c < 8; ++c) b[c] = _mm512_mul_ps(wk[0], q[c]);
    for (uint32_t k = 1; k < width; ++k) {
        if ((k & 3u) == 0) dqs_avx512_weights4(w, count, k, width, wk);
        for (uint32_t i = 0; i < 8u; ++i)
            q[i] = dqs_avx512_row(transforms + DQS_ROW(i)[k], transforms + DQS_ROW(i + 8u)[k]);
        dqs_avx512_transpose(q);
        /* Same products and summation order as the scalar kernel: same sign choices. */
        __m512 d =
            _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(q[0], r0[0]), _mm512_mul_ps(q[1], r0[1])),
                          _mm512_add_ps(_mm512_mul_ps(q[2], r0[2]), _mm512_mul_ps(q[3], r0[3])));
        __mmask16 flip = _mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_LT_OQ);
        __m512 sw = _mm512_mask_sub_ps(wk[k & 3u], flip, _mm512_setzero_ps(), wk[k & 3u]);
        for (int c = 0; c < 8; ++c) b[c] = _mm512_add_ps(b[c], _mm512_mul_ps(sw, q[c]));
    }
#undef DQS_ROW
}

/* 1/sqrt(s) rounded like the scalar kernel's 1.0f / sqrtf(s) (see dqs_avx2.c). */
SINEW_FORCE_INLINE __m512 dqs_avx512_rsqrt(__m512 s)
{
    return _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_sqrt_ps(s));
}

/* a b - c d and x + a b, unfused and in this order: the scalar kernel's rounding, so that
 * this kernel's results are the scalar ones bit for bit. */
SINEW_FORCE_INLINE __m512 dqs_avx512_msub(__m512 a, __m512 b, __m512 c, __m512 d)
{
    return _mm512_sub_ps(_mm512_mul_ps(a, b), _mm512_mul_ps(c, d));
}

SINEW_FORCE_INLINE __m512 dqs_avx512_madd(__m512 x, __m512 a, __m512 b)
{
    return _mm512_add_ps(x, _mm512_mul_ps(a, b));
}

/* x + 2 r_v x (r_v x x + r_w x) for sixteen vertices; x[0..2] in place. */
SINEW_FORCE_INLINE void dqs_avx512_rotate(const __m512 r[4], __m512 x[3])
{
    __m512 two = _mm512_set1_ps(2.0f);
    __m512 ux = dqs_avx512_madd(dqs_avx512_msub(r[1], x[2], r[2], x[1]), r[3], x[0]);
    __m512 uy = dqs_avx512_madd(dqs_avx512_msub(r[2], x[0], r[0], x[2]), r[3], x[1]);
    __m512 uz = dqs_avx512_madd(dqs_avx512_msub(r[0], x[1], r[1], x[0]), r[3], x[2]);
    x[0] = dqs_avx512_madd(x[0], two, dqs_avx512_msub(r[1], uz, r[2], uy));
    x[1] = dqs_avx512_madd(x[1], two, dqs_avx512_msub(r[2], ux, r[0], uz));
    x[2] = dqs_avx512_madd(x[2], two, dqs_avx512_msub(r[0], uy, r[1], ux));
}

/* Index vectors that interleave three component registers (x, y, z of the sixteen vertices in
 * the batch's order) into the 48 floats x y z x y z ... of a packed array:
 * out_r = permutex2var(permutex2var(x, a[r], y), b[r], z) for r = 0, 1, 2. */
typedef struct dqs_avx512_packing {
    __m512i a[3], b[3];
} dqs_avx512_packing;

static inline dqs_avx512_packing dqs_avx512_packing_make(void)
{
    /* Register lane of each vertex (the order is its own inverse). */
    static const int32_t lane_of[16] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15};
    dqs_avx512_packing k;
    for (int r = 0; r < 3; ++r) {
        int32_t a[16], b[16];
        for (int i = 0; i < 16; ++i) {
            int f = 16 * r + i, c = f % 3, lane = lane_of[f / 3];
            a[i] = c == 0 ? lane : c == 1 ? 16 + lane : 0; /* x or y; z comes next */
            b[i] = c == 2 ? 16 + lane : i;
        }
        k.a[r] = _mm512_loadu_si512((const void*)a);
        k.b[r] = _mm512_loadu_si512((const void*)b);
    }
    return k;
}

/* Writes x y z of the sixteen vertices as 48 packed floats at dst. */
SINEW_FORCE_INLINE void dqs_avx512_store_packed(float* dst, const dqs_avx512_packing* k,
                                                const __m512 c[3])
{
    for (int r = 0; r < 3; ++r)
        _mm512_storeu_ps(
            dst + 16 * r,
            _mm512_permutex2var_ps(_mm512_permutex2var_ps(c[0], k->a[r], c[1]), k->b[r], c[2]));
}

/* Stores vertex i of the batch from records given back by dqs_avx512_transpose: vertex
 * 8h + 4g + e sits in register 4h + e, 128-bit lane g (position) and lane g + 2 (normal). */
#define DQS_AVX512_STORE(x, h, g, e)                                                               \
    do {                                                                                           \
        uint32_t i_ = 8u * (h) + 4u * (g) + (e);                                                   \
        if (i_ < count) {                                                                          \
            if (strided_positions)                                                                 \
                sinew_sse_store_at(job->positions, job->position_stride, v + i_, end,              \
                                   _mm512_extractf32x4_ps((x)[4 * (h) + (e)], (g)));               \
            if (strided_normals)                                                                   \
                sinew_sse_store_at(job->normals, job->normal_stride, v + i_, end,                  \
                                   _mm512_extractf32x4_ps((x)[4 * (h) + (e)], (g) + 2));           \
        }                                                                                          \
    } while (0)

/* Skins the batch of sixteen vertices starting at v, of which `count` are stored. */
SINEW_FORCE_INLINE void dqs_avx512_batch(const sinew_skin_job* job, const dqs_avx512_packing* pk,
                                         uint32_t v, uint32_t count, uint32_t end, uint32_t width,
                                         bool write_positions, bool write_normals)
{
    __m512 q[8], x[8];
    const float* rest = job->rest + 8u * (size_t)v;
    for (uint32_t i = 0; i < 8u; ++i)
        x[i] = dqs_avx512_row(rest + 8u * dqs_x86_index(0u, i, count),
                              rest + 8u * dqs_x86_index(0u, i + 8u, count));
    /* q: r.x r.y r.z r.w e.x e.y e.z e.w; x: p.x p.y p.z 1 n.x n.y n.z 0 (sixteen vertices). */
    dqs_avx512_blend16(job->transforms, job->offsets + (size_t)v * width,
                       job->weights + (size_t)v * width, count, width, q);
    dqs_avx512_transpose(x);
    /* Normalise by the norm of the real part, which is at least the first weight. */
    __m512 inv =
        dqs_avx512_rsqrt(_mm512_add_ps(dqs_avx512_madd(_mm512_mul_ps(q[0], q[0]), q[1], q[1]),
                                       dqs_avx512_madd(_mm512_mul_ps(q[2], q[2]), q[3], q[3])));
    for (int c = 0; c < 8; ++c) q[c] = _mm512_mul_ps(q[c], inv);
    if (write_positions) {
        /* t = 2 ((r_v x e_v + r_w e_v) - e_w r_v), in the scalar kernel's order. */
        __m512 two = _mm512_set1_ps(2.0f);
        __m512 tx = dqs_avx512_madd(dqs_avx512_msub(q[1], q[6], q[2], q[5]), q[3], q[4]);
        __m512 ty = dqs_avx512_madd(dqs_avx512_msub(q[2], q[4], q[0], q[6]), q[3], q[5]);
        __m512 tz = dqs_avx512_madd(dqs_avx512_msub(q[0], q[5], q[1], q[4]), q[3], q[6]);
        tx = _mm512_mul_ps(two, _mm512_sub_ps(tx, _mm512_mul_ps(q[7], q[0])));
        ty = _mm512_mul_ps(two, _mm512_sub_ps(ty, _mm512_mul_ps(q[7], q[1])));
        tz = _mm512_mul_ps(two, _mm512_sub_ps(tz, _mm512_mul_ps(q[7], q[2])));
        dqs_avx512_rotate(q, x);
        x[0] = _mm512_add_ps(x[0], tx);
        x[1] = _mm512_add_ps(x[1], ty);
        x[2] = _mm512_add_ps(x[2], tz);
    }
    if (write_normals) {
        dqs_avx512_rotate(q, x + 4);
        __m512 s =
            dqs_avx512_madd(dqs_avx512_madd(_mm512_mul_ps(x[4], x[4]), x[5], x[5]), x[6], x[6]);
        __mmask16 ok = _mm512_cmp_ps_mask(s, _mm512_set1_ps(SINEW_SKIN_MIN_NORMAL_SQ), _CMP_GT_OQ);
        __m512 ninv = _mm512_maskz_mov_ps(ok, dqs_avx512_rsqrt(s));
        for (int c = 4; c < 7; ++c) x[c] = _mm512_mul_ps(x[c], ninv);
    }
    /* A full batch into a packed array: three permuted stores per array. Otherwise back to
     * records: register 4h + e holds, per 128-bit lane g, the position (g = 0, 1) and normal
     * (g = 2, 3) of vertex 8h + 4g + e, stored one by one in vertex order. */
    bool strided_positions = write_positions, strided_normals = write_normals;
    if (write_positions && count == 16u && job->position_stride == 12u) {
        dqs_avx512_store_packed(job->positions + 3u * (size_t)v, pk, x);
        strided_positions = false;
    }
    if (write_normals && count == 16u && job->normal_stride == 12u) {
        dqs_avx512_store_packed(job->normals + 3u * (size_t)v, pk, x + 4);
        strided_normals = false;
    }
    if (!strided_positions && !strided_normals) return;
    dqs_avx512_transpose(x);
    DQS_AVX512_STORE(x, 0, 0, 0);
    DQS_AVX512_STORE(x, 0, 0, 1);
    DQS_AVX512_STORE(x, 0, 0, 2);
    DQS_AVX512_STORE(x, 0, 0, 3);
    DQS_AVX512_STORE(x, 0, 1, 0);
    DQS_AVX512_STORE(x, 0, 1, 1);
    DQS_AVX512_STORE(x, 0, 1, 2);
    DQS_AVX512_STORE(x, 0, 1, 3);
    DQS_AVX512_STORE(x, 1, 0, 0);
    DQS_AVX512_STORE(x, 1, 0, 1);
    DQS_AVX512_STORE(x, 1, 0, 2);
    DQS_AVX512_STORE(x, 1, 0, 3);
    DQS_AVX512_STORE(x, 1, 1, 0);
    DQS_AVX512_STORE(x, 1, 1, 1);
    DQS_AVX512_STORE(x, 1, 1, 2);
    DQS_AVX512_STORE(x, 1, 1, 3);
}

SINEW_FORCE_INLINE void dqs_avx512_range(const sinew_skin_job* job_in, uint32_t begin, uint32_t end,
                                         uint32_t width, bool write_positions, bool write_normals)
{
    const sinew_skin_job job = *job_in; /* cannot alias the outputs: stays in registers */
    const dqs_avx512_packing pk = dqs_avx512_packing_make();
    uint32_t v = begin;
    /* Full batches with a constant count (constant row displacements), then the rest. */
    for (; end - v >= 16u; v += 16u)
        dqs_avx512_batch(&job, &pk, v, 16u, end, width, write_positions, write_normals);
    if (v < end)
        dqs_avx512_batch(&job, &pk, v, end - v, end, width, write_positions, write_normals);
}

void sinew_dqs_kernel_avx512(const sinew_skin_job* job, uint32_t begin, uint32_t end)
{
    SINEW_SKIN_DISPATCH(dqs_avx512_range, job, begin, end);
}
#endif
