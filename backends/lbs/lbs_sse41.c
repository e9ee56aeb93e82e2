/* Linear blend skinning with SSE4.1. The blended matrix of one vertex is three xmm rows; four
 * vertices are transformed together, their row sums folded with horizontal adds into x, y and
 * z vectors of four vertices, so that normals are normalised with vertical arithmetic.
 * Built with -msse4.1 and called only when the CPU has SSE4.1.
 * SPDX-License-Identifier: MIT */
#include "lbs_kernels.h"

#if defined(SINEW_SKIN_X86)
#include <smmintrin.h>

#include "skin_simd_x86.h"

typedef struct lbs_sse_matrix {
    __m128 r[3];
} lbs_sse_matrix;

/* sum_k w_k S_k for vertex v (rows 0-2; the zero row is never read). */
SINEW_FORCE_INLINE lbs_sse_matrix lbs_sse_blend(const sinew_skin_job* job, uint32_t v,
                                                uint32_t width)
{
    const uint32_t* offsets = job->offsets + (size_t)v * width;
    const float* weights = job->weights + (size_t)v * width;
    const float* s = job->transforms + offsets[0];
    __m128 w = _mm_set1_ps(weights[0]);
    lbs_sse_matrix m = {{_mm_mul_ps(w, _mm_load_ps(s)), _mm_mul_ps(w, _mm_load_ps(s + 4)),
                         _mm_mul_ps(w, _mm_load_ps(s + 8))}};
    for (uint32_t k = 1; k < width; ++k) {
        s = job->transforms + offsets[k];
        w = _mm_set1_ps(weights[k]);
        for (int r = 0; r < 3; ++r)
            m.r[r] = _mm_add_ps(m.r[r], _mm_mul_ps(w, _mm_load_ps(s + 4 * r)));
    }
    return m;
}

/* Row r of the four matrices times the 4-float vectors x[0..3], summed: one lane per vertex. */
SINEW_FORCE_INLINE __m128 lbs_sse_row4(const lbs_sse_matrix m[4], const __m128 x[4], int r)
{
    return _mm_hadd_ps(_mm_hadd_ps(_mm_mul_ps(m[0].r[r], x[0]), _mm_mul_ps(m[1].r[r], x[1])),
                       _mm_hadd_ps(_mm_mul_ps(m[2].r[r], x[2]), _mm_mul_ps(m[3].r[r], x[3])));
}

/* Writes `count` (1-4) vectors given as x y z of four vertices to elements v.. of an array. */
SINEW_FORCE_INLINE void lbs_sse_store4(float* base, size_t stride, uint32_t v, uint32_t count,
                                       uint32_t end, __m128 x, __m128 y, __m128 z)
{
    __m128 lo = _mm_unpacklo_ps(x, y), hi = _mm_unpackhi_ps(x, y);
    sinew_sse_store_at(base, stride, v, end, _mm_movelh_ps(lo, z));
    if (count > 1)
        sinew_sse_store_at(base, stride, v + 1, end,
                           _mm_shuffle_ps(lo, z, _MM_SHUFFLE(3, 1, 3, 2)));
    if (count > 2)
        sinew_sse_store_at(base, stride, v + 2, end,
                           _mm_shuffle_ps(hi, z, _MM_SHUFFLE(3, 2, 1, 0)));
    if (count > 3)
        sinew_sse_store_at(base, stride, v + 3, end,
                           _mm_shuffle_ps(hi, z, _MM_SHUFFLE(3, 3, 3, 2)));
}

/* Skins the group of four vertices at v (a short group repeats vertex v and stores only
 * `count` < 4). For a full group (count a constant 4) every row is a constant displacement. */
SINEW_FORCE_INLINE void lbs_sse_group(const sinew_skin_job* job, uint32_t v, uint32_t count,
                                      uint32_t end, uint32_t width, bool write_positions,
                                      bool write_normals)
{
    uint32_t idx[4] = {v, count > 1 ? v + 1 : v, count > 2 ? v + 2 : v, count > 3 ? v + 3 : v};
    lbs_sse_matrix m[4];
    for (int i = 0; i < 4; ++i) m[i] = lbs_sse_blend(job, idx[i], width);
    if (write_positions) {
        /* Rest positions have w = 1, which picks up the translation column. */
        __m128 x[4];
        for (int i = 0; i < 4; ++i) x[i] = _mm_load_ps(job->rest + 8u * idx[i]);
        lbs_sse_store4(job->positions, job->position_stride, v, count, end, lbs_sse_row4(m, x, 0),
                       lbs_sse_row4(m, x, 1), lbs_sse_row4(m, x, 2));
    }
    if (write_normals) {
        __m128 x[4];
        for (int i = 0; i < 4; ++i) x[i] = _mm_load_ps(job->rest + 8u * idx[i] + 4u);
        __m128 nx = lbs_sse_row4(m, x, 0), ny = lbs_sse_row4(m, x, 1);
        __m128 nz = lbs_sse_row4(m, x, 2);
        __m128 s =
            _mm_add_ps(_mm_add_ps(_mm_mul_ps(nx, nx), _mm_mul_ps(ny, ny)), _mm_mul_ps(nz, nz));
        __m128 inv =
            _mm_and_ps(sinew_sse_rsqrt(s), _mm_cmpgt_ps(s, _mm_set1_ps(SINEW_SKIN_MIN_NORMAL_SQ)));
        lbs_sse_store4(job->normals, job->normal_stride, v, count, end, _mm_mul_ps(nx, inv),
                       _mm_mul_ps(ny, inv), _mm_mul_ps(nz, inv));
    }
}

SINEW_FORCE_INLINE void lbs_sse_range(const sinew_skin_job* job_in, uint32_t begin, uint32_t end,
                                      uint32_t width, bool write_positions, bool write_normals)
{
    const sinew_skin_job job = *job_in; /* cannot alias the outputs: stays in registers */
    uint32_t v = begin;
    for (; end - v >= 4u; v += 4u)
        lbs_sse_group(&job, v, 4u, end, width, write_positions, write_normals);
    if (v < end) lbs_sse_group(&job, v, end - v, end, width, write_positions, write_normals);
}

void sinew_lbs_kernel_sse41(const sinew_skin_job* job, uint32_t begin, uint32_t end)
{
    SINEW_SKIN_DISPATCH(lbs_sse_range, job, begin, end);
}
#endif
