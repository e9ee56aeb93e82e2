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

/* 1/s from the 12-bit estimate and one Newton step. */
SINEW_FORCE_INLINE __m128 dqs_sse_rcp(__m128 s)
{
    __m128 y = _mm_rcp_ps(s);
    return _mm_mul_ps(y, _mm_sub_ps(_mm_set1_ps(2.0f), _mm_mul_ps(s, y)));
}

/* a b + c d and a b - c d. */
SINEW_FORCE_INLINE __m128 dqs_sse_add2(__m128 a, __m128 b, __m128 c, __m128 d)
{
    return _mm_add_ps(_mm_mul_ps(a, b), _mm_mul_ps(c, d));
}

SINEW_FORCE_INLINE __m128 dqs_sse_sub2(__m128 a, __m128 b, __m128 c, __m128 d)
{
    return _mm_sub_ps(_mm_mul_ps(a, b), _mm_mul_ps(c, d));
}

/* Row (a, b, c) of a matrix times (x, y, z), plus t. */
SINEW_FORCE_INLINE __m128 dqs_sse_row(__m128 a, __m128 b, __m128 c, const __m128 x[3], __m128 t)
{
    return _mm_add_ps(dqs_sse_add2(a, x[0], b, x[1]), _mm_add_ps(_mm_mul_ps(c, x[2]), t));
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
        /* An influence no vertex of the batch has (padding, mostly) is skipped, and lanes of
         * zero weight keep their blend as it is (see dqs_kernels.h). */
        __m128 m = _mm_cmpneq_ps(wk[k & 3u], _mm_setzero_ps());
        int live = _mm_movemask_ps(m);
        if (live == 0) continue;
        dqs_sse_load4(job->transforms, o, count, k, width, q);
        __m128 d = _mm_add_ps(_mm_add_ps(_mm_mul_ps(q[0], r0[0]), _mm_mul_ps(q[1], r0[1])),
                              _mm_add_ps(_mm_mul_ps(q[2], r0[2]), _mm_mul_ps(q[3], r0[3])));
        __m128 flip = _mm_and_ps(_mm_cmplt_ps(d, _mm_setzero_ps()), _mm_set1_ps(-0.0f));
        __m128 sw = _mm_xor_ps(wk[k & 3u], flip);
        if (live == 0xf) {
            for (int c = 0; c < 8; ++c) b[c] = _mm_add_ps(b[c], _mm_mul_ps(sw, q[c]));
        } else {
            for (int c = 0; c < 8; ++c)
                b[c] = _mm_blendv_ps(b[c], _mm_add_ps(b[c], _mm_mul_ps(sw, q[c])), m);
        }
    }
    /* s = 2 / |b_r|^2, and R = I + s (w [v]x + [v]x^2) from the scaled x2 y2 z2 = s v. */
    const __m128 one = _mm_set1_ps(1.0f);
    __m128 s = dqs_sse_rcp(_mm_add_ps(dqs_sse_add2(b[0], b[0], b[1], b[1]),
                                      dqs_sse_add2(b[2], b[2], b[3], b[3])));
    s = _mm_add_ps(s, s);
    __m128 x2 = _mm_mul_ps(b[0], s), y2 = _mm_mul_ps(b[1], s), z2 = _mm_mul_ps(b[2], s);
    __m128 m00 = _mm_sub_ps(one, dqs_sse_add2(b[1], y2, b[2], z2));
    __m128 m11 = _mm_sub_ps(one, dqs_sse_add2(b[0], x2, b[2], z2));
    __m128 m22 = _mm_sub_ps(one, dqs_sse_add2(b[0], x2, b[1], y2));
    __m128 m01 = dqs_sse_sub2(b[0], y2, b[3], z2), m10 = dqs_sse_add2(b[0], y2, b[3], z2);
    __m128 m02 = dqs_sse_add2(b[0], z2, b[3], y2), m20 = dqs_sse_sub2(b[0], z2, b[3], y2);
    __m128 m12 = dqs_sse_sub2(b[1], z2, b[3], x2), m21 = dqs_sse_add2(b[1], z2, b[3], x2);
    if (write_positions) {
        /* t = s (w e_v - e_w v + v x e_v) = w2 e_v - e_w (x2 y2 z2) + (x2 y2 z2) x e_v. */
        __m128 w2 = _mm_mul_ps(b[3], s);
        __m128 tx = _mm_add_ps(dqs_sse_sub2(y2, b[6], z2, b[5]), dqs_sse_sub2(w2, b[4], b[7], x2));
        __m128 ty = _mm_add_ps(dqs_sse_sub2(z2, b[4], x2, b[6]), dqs_sse_sub2(w2, b[5], b[7], y2));
        __m128 tz = _mm_add_ps(dqs_sse_sub2(x2, b[5], y2, b[4]), dqs_sse_sub2(w2, b[6], b[7], z2));
        __m128 r[4] = {dqs_sse_row(m00, m01, m02, p, tx), dqs_sse_row(m10, m11, m12, p, ty),
                       dqs_sse_row(m20, m21, m22, p, tz), _mm_setzero_ps()};
        DQS_SSE_TRANSPOSE4(r[0], r[1], r[2], r[3]);
        for (uint32_t i = 0; i < count; ++i)
            sinew_sse_store_at(job->positions, job->position_stride, v + i, end, r[i]);
    }
    if (write_normals) {
        const __m128 zero = _mm_setzero_ps();
        __m128 r[4] = {dqs_sse_row(m00, m01, m02, n, zero), dqs_sse_row(m10, m11, m12, n, zero),
                       dqs_sse_row(m20, m21, m22, n, zero), zero};
        __m128 l2 = _mm_add_ps(dqs_sse_add2(r[0], r[0], r[1], r[1]), _mm_mul_ps(r[2], r[2]));
        __m128 inv = _mm_and_ps(sinew_sse_rsqrt(l2),
                                _mm_cmpgt_ps(l2, _mm_set1_ps(SINEW_SKIN_MIN_NORMAL_SQ)));
        for (int c = 0; c < 3; ++c) r[c] = _mm_mul_ps(r[c], inv);
        DQS_SSE_TRANSPOSE4(r[0], r[1], r[2], r[3]);
        for (uint32_t i = 0; i < count; ++i)
            sinew_sse_store_at(job->normals, job->normal_stride, v + i, end, r[i]);
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
