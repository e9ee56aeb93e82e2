/* Linear blend skinning with AVX-512F. The blended matrix of one vertex is one zmm (rows 0-2
 * and a zero row), so each influence costs one load and one FMA; four vertices are then
 * transformed together, their row sums landing as [x x x x | y y y y | z z z z | 0] so that the
 * normals are normalised with vertical arithmetic and one permute turns the result back into
 * xyz records. Built with -mavx512f, called only when the CPU has it.
 * SPDX-License-Identifier: MIT */
#include "lbs_kernels.h"

#if defined(SINEW_SKIN_X86)
#include <immintrin.h>

#include "skin_simd_x86.h"

/* sum_k w_k S_k for vertex v: [row0 | row1 | row2 | 0]. */
SINEW_FORCE_INLINE __m512 lbs_avx512_blend(const sinew_skin_job* job, uint32_t v, uint32_t width)
{
    const uint32_t* offsets = job->offsets + (size_t)v * width;
    const float* weights = job->weights + (size_t)v * width;
    __m512 m =
        _mm512_mul_ps(_mm512_set1_ps(weights[0]), _mm512_load_ps(job->transforms + offsets[0]));
    for (uint32_t k = 1; k < width; ++k)
        m = _mm512_fmadd_ps(_mm512_set1_ps(weights[k]),
                            _mm512_load_ps(job->transforms + offsets[k]), m);
    return m;
}

/* Rows of m times the 4 floats at x (each row times the whole vector). */
SINEW_FORCE_INLINE __m512 lbs_avx512_rows(__m512 m, const float* x)
{
    return _mm512_mul_ps(m, _mm512_broadcast_f32x4(_mm_load_ps(x)));
}

/* Row sums of four vertices' row products: [xa xb xc xd | ya yb yc yd | za .. | 0]. */
SINEW_FORCE_INLINE __m512 lbs_avx512_sum4(__m512 a, __m512 b, __m512 c, __m512 d)
{
    __m512 ab = _mm512_add_ps(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));
    __m512 cd = _mm512_add_ps(_mm512_unpacklo_ps(c, d), _mm512_unpackhi_ps(c, d));
    return _mm512_add_ps(_mm512_shuffle_ps(ab, cd, _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_ps(ab, cd, _MM_SHUFFLE(3, 2, 3, 2)));
}

/* Normalises the four vectors of [x x x x | y y y y | z z z z | 0] (zero for tiny ones). The
 * lengths need only 4 lanes: computing them in xmm halves the work on a CPU that splits zmm
 * operations in two (Zen 4). */
SINEW_FORCE_INLINE __m512 lbs_avx512_normalise4(__m512 n)
{
    __m128 x = _mm512_castps512_ps128(n), y = _mm512_extractf32x4_ps(n, 1);
    __m128 z = _mm512_extractf32x4_ps(n, 2);
    __m128 s = _mm_add_ps(_mm_add_ps(_mm_mul_ps(x, x), _mm_mul_ps(y, y)), _mm_mul_ps(z, z));
    __m128 inv =
        _mm_and_ps(sinew_sse_rsqrt(s), _mm_cmpgt_ps(s, _mm_set1_ps(SINEW_SKIN_MIN_NORMAL_SQ)));
    return _mm512_mul_ps(n, _mm512_broadcast_f32x4(inv));
}

/* Writes the `count` (1-4) xyz vectors of [x x x x | y y y y | z z z z | -] to elements
 * v .. v+count-1: a packed array takes one masked store of exactly 3*count floats. */
SINEW_FORCE_INLINE void lbs_avx512_store4(float* base, size_t stride, uint32_t v, uint32_t count,
                                          uint32_t end, __m512 r)
{
    if (stride == 12u) {
        __m512 packed = _mm512_permutexvar_ps(
            _mm512_setr_epi32(0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, 12, 12, 12, 12), r);
        _mm512_mask_storeu_ps(base + 3u * (size_t)v, (__mmask16)((1u << (3u * count)) - 1u),
                              packed);
        return;
    }
    __m512 aos = _mm512_permutexvar_ps(
        _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), r);
    sinew_sse_store_at(base, stride, v, end, _mm512_castps512_ps128(aos));
    if (count > 1) sinew_sse_store_at(base, stride, v + 1, end, _mm512_extractf32x4_ps(aos, 1));
    if (count > 2) sinew_sse_store_at(base, stride, v + 2, end, _mm512_extractf32x4_ps(aos, 2));
    if (count > 3) sinew_sse_store_at(base, stride, v + 3, end, _mm512_extractf32x4_ps(aos, 3));
}

/* Blends and transforms the group of four vertices at v (a short group repeats vertex v and
 * has `count` < 4): stores the positions, returns the unnormalised normals. */
SINEW_FORCE_INLINE __m512 lbs_avx512_group(const sinew_skin_job* job, uint32_t v, uint32_t count,
                                           uint32_t end, uint32_t width, bool write_positions,
                                           bool write_normals)
{
    uint32_t i1 = count > 1 ? v + 1 : v, i2 = count > 2 ? v + 2 : v;
    uint32_t i3 = count > 3 ? v + 3 : v;
    __m512 ma = lbs_avx512_blend(job, v, width), mb = lbs_avx512_blend(job, i1, width);
    __m512 mc = lbs_avx512_blend(job, i2, width), md = lbs_avx512_blend(job, i3, width);
    const float* rest = job->rest;
    if (write_positions) {
        /* Rest positions have w = 1, which picks up the translation column. */
        __m512 p = lbs_avx512_sum4(
            lbs_avx512_rows(ma, rest + 8u * v), lbs_avx512_rows(mb, rest + 8u * i1),
            lbs_avx512_rows(mc, rest + 8u * i2), lbs_avx512_rows(md, rest + 8u * i3));
        lbs_avx512_store4(job->positions, job->position_stride, v, count, end, p);
    }
    if (!write_normals) return _mm512_setzero_ps();
    return lbs_avx512_sum4(
        lbs_avx512_rows(ma, rest + 8u * v + 4u), lbs_avx512_rows(mb, rest + 8u * i1 + 4u),
        lbs_avx512_rows(mc, rest + 8u * i2 + 4u), lbs_avx512_rows(md, rest + 8u * i3 + 4u));
}

SINEW_FORCE_INLINE void lbs_avx512_range(const sinew_skin_job* job_in, uint32_t begin, uint32_t end,
                                         uint32_t width, bool write_positions, bool write_normals)
{
    const sinew_skin_job job = *job_in; /* cannot alias the outputs: stays in registers */
    uint32_t v = begin;
    /* Full groups, with a constant count (constant row displacements), software-pipelined:
     * a group's normals are normalised and stored after the next group has been blended, so
     * that the normalisation's long chain overlaps independent work. */
    if (end - v >= 4u) {
        __m512 n = lbs_avx512_group(&job, v, 4u, end, width, write_positions, write_normals);
        while (end - v >= 8u) {
            __m512 next =
                lbs_avx512_group(&job, v + 4u, 4u, end, width, write_positions, write_normals);
            if (write_normals)
                lbs_avx512_store4(job.normals, job.normal_stride, v, 4u, end,
                                  lbs_avx512_normalise4(n));
            n = next;
            v += 4u;
        }
        if (write_normals)
            lbs_avx512_store4(job.normals, job.normal_stride, v, 4u, end, lbs_avx512_normalise4(n));
        v += 4u;
    }
    if (v < end) {
        __m512 n = lbs_avx512_group(&job, v, end - v, end, width, write_positions, write_normals);
        if (write_normals)
            lbs_avx512_store4(job.normals, job.normal_stride, v, end - v, end,
                              lbs_avx512_normalise4(n));
    }
}

void sinew_lbs_kernel_avx512(const sinew_skin_job* job, uint32_t begin, uint32_t end)
{
    SINEW_SKIN_DISPATCH(lbs_avx512_range, job, begin, end);
}
#endif
