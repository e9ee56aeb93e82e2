/* Dual quaternion skinning with SSE4.1 on batches of four vertices in structure-of-arrays
 * form, one xmm per component (see dqs_x86.h); transposes are 4x4.
 * Built with -msse4.1 and called only when the CPU has SSE4.1.
 * SPDX-License-Identifier: MIT */
#include "dqs_kernels.h"

#if defined(SINEW_SKIN_X86)
#include <smmintrin.h>

#include "dqs_x86.h"

/* The weights of influences k..k+3 of a batch's four vertices (rows of `width` weights from
 * w, vertex i at row dqs_x86_index(0, i, count)), one xmm per influence. */
SINEW_FORCE_INLINE void dqs_sse_weights4(const float* w, uint32_t count, uint32_t k, uint32_t width,
                                         __m128 out[4])
{
    for (uint32_t i = 0; i < 4u; ++i) {
        const float* row = w + (size_t)dqs_x86_index(0u, i, count) * width;
        if (k + 4u <= width) {
            out[i] = _mm_loadu_ps(row + k);
        } else {
            float t[4];
            for (uint32_t j = 0; j < 4u; ++j) t[j] = k + j < width ? row[k + j] : 0.0f;
            out[i] = _mm_loadu_ps(t);
        }
    }
    DQS_SSE_TRANSPOSE4(out[0], out[1], out[2], out[3]);
}

/* Influence k of a batch's four vertices as components q[0..7]. */
SINEW_FORCE_INLINE void dqs_sse_load4(const float* transforms, const uint32_t* o, uint32_t count,
                                      uint32_t k, uint32_t width, __m128 q[8])
{
    for (uint32_t i = 0; i < 4u; ++i) {
        const float* dq = transforms + o[(size_t)dqs_x86_index(0u, i, count) * width + k];
        q[i] = _mm_load_ps(dq);
        q[4 + i] = _mm_load_ps(dq + 4);
    }
    DQS_SSE_TRANSPOSE4(q[0], q[1], q[2], q[3]);
    DQS_SSE_TRANSPOSE4(q[4], q[5], q[6], q[7]);
}

/* 1/sqrt(s) rounded like the scalar kernel's 1.0f / sqrtf(s) (see dqs_avx2.c). */
SINEW_FORCE_INLINE __m128 dqs_sse_rsqrt(__m128 s)
{
    return _mm_div_ps(_mm_set1_ps(1.0f), _mm_sqrt_ps(s));
}

/* a b - c d and x + a b, unfused and in this order: the scalar kernel's rounding, so that
 * this kernel's results are the scalar ones bit for bit. */
SINEW_FORCE_INLINE __m128 dqs_sse_msub(__m128 a, __m128 b, __m128 c, __m128 d)
{
    return _mm_sub_ps(_mm_mul_ps(a, b), _mm_mul_ps(c, d));
}

SINEW_FORCE_INLINE __m128 dqs_sse_madd(__m128 x, __m128 a, __m128 b)
{
    return _mm_add_ps(x, _mm_mul_ps(a, b));
}

/* x + 2 r_v x (r_v x x + r_w x) for four vertices; x[0..2] in place. */
SINEW_FORCE_INLINE void dqs_sse_rotate(const __m128 r[4], __m128 x[3])
{
    __m128 two = _mm_set1_ps(2.0f);
    __m128 ux = dqs_sse_madd(dqs_sse_msub(r[1], x[2], r[2], x[1]), r[3], x[0]);
    __m128 uy = dqs_sse_madd(dqs_sse_msub(r[2], x[0], r[0], x[2]), r[3], x[1]);
    __m128 uz = dqs_sse_madd(dqs_sse_msub(r[0], x[1], r[1], x[0]), r[3], x[2]);
    x[0] = dqs_sse_madd(x[0], two, dqs_sse_msub(r[1], uz, r[2], uy));
    x[1] = dqs_sse_madd(x[1], two, dqs_sse_msub(r[2], ux, r[0], uz));
    x[2] = dqs_sse_madd(x[2], two, dqs_sse_msub(r[0], uy, r[1], ux));
}

/* Skins the batch of four vertices starting at v, of which `count` are stored. */
SINEW_FORCE_INLINE void dqs_sse_batch(const sinew_skin_job* job, uint32_t v, uint32_t count,
                                      uint32_t end, uint32_t width, bool write_positions,
                                      bool write_normals)
{
    const uint32_t* o = job->offsets + (size_t)v * width;
    const float* w = job->weights + (size_t)v * width;
    const float* rest = job->rest + 8u * (size_t)v;
    __m128 p[4], n[4];
    for (uint32_t i = 0; i < 4u; ++i) {
        p[i] = _mm_load_ps(rest + 8u * dqs_x86_index(0u, i, count));
        n[i] = _mm_load_ps(rest + 8u * dqs_x86_index(0u, i, count) + 4u);
    }
    DQS_SSE_TRANSPOSE4(p[0], p[1], p[2], p[3]);
    DQS_SSE_TRANSPOSE4(n[0], n[1], n[2], n[3]);

    /* The blend, in the scalar kernel's order: products first, then the running sum. */
    __m128 wk[4], q[8], r0[4], b[8];
    dqs_sse_weights4(w, count, 0u, width, wk);
    dqs_sse_load4(job->transforms, o, count, 0u, width, q);
    for (int c = 0; c < 4; ++c) r0[c] = q[c];
    for (int c = 0; c < 8; ++c) b[c] = _mm_mul_ps(wk[0], q[c]);
    for (uint32_t k = 1; k < width; ++k) {
        if ((k & 3u) == 0) dqs_sse_weights4(w, count, k, width, wk);
        dqs_sse_load4(job->transforms, o, count, k, width, q);
        __m128 d = _mm_add_ps(_mm_add_ps(_mm_mul_ps(q[0], r0[0]), _mm_mul_ps(q[1], r0[1])),
                              _mm_add_ps(_mm_mul_ps(q[2], r0[2]), _mm_mul_ps(q[3], r0[3])));
        __m128 flip = _mm_and_ps(_mm_cmplt_ps(d, _mm_setzero_ps()), _mm_set1_ps(-0.0f));
        __m128 sw = _mm_xor_ps(wk[k & 3u], flip);
        for (int c = 0; c < 8; ++c) b[c] = _mm_add_ps(b[c], _mm_mul_ps(sw, q[c]));
    }
    __m128 inv = dqs_sse_rsqrt(_mm_add_ps(dqs_sse_madd(_mm_mul_ps(b[0], b[0]), b[1], b[1]),
                                          dqs_sse_madd(_mm_mul_ps(b[2], b[2]), b[3], b[3])));
    for (int c = 0; c < 8; ++c) b[c] = _mm_mul_ps(b[c], inv);
    if (write_positions) {
        /* t = 2 ((r_v x e_v + r_w e_v) - e_w r_v), in the scalar kernel's order. */
        __m128 two = _mm_set1_ps(2.0f);
        __m128 tx = dqs_sse_madd(dqs_sse_msub(b[1], b[6], b[2], b[5]), b[3], b[4]);
        __m128 ty = dqs_sse_madd(dqs_sse_msub(b[2], b[4], b[0], b[6]), b[3], b[5]);
        __m128 tz = dqs_sse_madd(dqs_sse_msub(b[0], b[5], b[1], b[4]), b[3], b[6]);
        dqs_sse_rotate(b, p);
        p[0] = _mm_add_ps(p[0], _mm_mul_ps(two, _mm_sub_ps(tx, _mm_mul_ps(b[7], b[0]))));
        p[1] = _mm_add_ps(p[1], _mm_mul_ps(two, _mm_sub_ps(ty, _mm_mul_ps(b[7], b[1]))));
        p[2] = _mm_add_ps(p[2], _mm_mul_ps(two, _mm_sub_ps(tz, _mm_mul_ps(b[7], b[2]))));
        p[3] = _mm_setzero_ps();
        DQS_SSE_TRANSPOSE4(p[0], p[1], p[2], p[3]);
        for (uint32_t i = 0; i < count; ++i)
            sinew_sse_store_at(job->positions, job->position_stride, v + i, end, p[i]);
    }
    if (write_normals) {
        dqs_sse_rotate(b, n);
        __m128 s = dqs_sse_madd(dqs_sse_madd(_mm_mul_ps(n[0], n[0]), n[1], n[1]), n[2], n[2]);
        __m128 ninv =
            _mm_and_ps(dqs_sse_rsqrt(s), _mm_cmpgt_ps(s, _mm_set1_ps(SINEW_SKIN_MIN_NORMAL_SQ)));
        for (int c = 0; c < 3; ++c) n[c] = _mm_mul_ps(n[c], ninv);
        n[3] = _mm_setzero_ps();
        DQS_SSE_TRANSPOSE4(n[0], n[1], n[2], n[3]);
        for (uint32_t i = 0; i < count; ++i)
            sinew_sse_store_at(job->normals, job->normal_stride, v + i, end, n[i]);
    }
}

SINEW_FORCE_INLINE void dqs_sse_range(const sinew_skin_job* job_in, uint32_t begin, uint32_t end,
                                      uint32_t width, bool write_positions, bool write_normals)
{
    const sinew_skin_job job = *job_in; /* cannot alias the outputs: stays in registers */
    uint32_t v = begin;
    /* Full batches with a constant count (constant row displacements), then the rest. */
    for (; end - v >= 4u; v += 4u)
        dqs_sse_batch(&job, v, 4u, end, width, write_positions, write_normals);
    if (v < end) dqs_sse_batch(&job, v, end - v, end, width, write_positions, write_normals);
}

void sinew_dqs_kernel_sse41(const sinew_skin_job* job, uint32_t begin, uint32_t end)
{
    SINEW_SKIN_DISPATCH(dqs_sse_range, job, begin, end);
}
#endif
