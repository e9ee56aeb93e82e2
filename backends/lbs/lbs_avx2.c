/* Linear blend skinning with AVX2 and FMA. The blended matrix of one vertex is two ymm (rows
 * 0|1 and 2|0); four vertices are transformed together, their row sums folded with horizontal
 * adds into [x x x x | y y y y] and [z z z z], so that normals are normalised with vertical
 * arithmetic. Built with -mavx2 -mfma, called only when the CPU has both.
 * SPDX-License-Identifier: MIT */
#include "lbs_kernels.h"

#if defined(SINEW_SKIN_X86)
#include <immintrin.h>

#include "skin_simd_x86.h"

typedef struct lbs_avx2_matrix {
    __m256 r01; /* rows 0 | 1 */
    __m256 r2;  /* row 2 | zero row */
} lbs_avx2_matrix;

/* sum_k w_k S_k for vertex v. */
SINEW_FORCE_INLINE lbs_avx2_matrix lbs_avx2_blend(const sinew_skin_job* job, uint32_t v,
                                                  uint32_t width)
{
    const uint32_t* offsets = job->offsets + (size_t)v * width;
    const float* weights = job->weights + (size_t)v * width;
    const float* s = job->transforms + offsets[0];
    __m256 w = _mm256_broadcast_ss(weights);
    lbs_avx2_matrix m = {_mm256_mul_ps(w, _mm256_load_ps(s)),
                         _mm256_mul_ps(w, _mm256_load_ps(s + 8))};
    for (uint32_t k = 1; k < width; ++k) {
        s = job->transforms + offsets[k];
        w = _mm256_broadcast_ss(weights + k);
        m.r01 = _mm256_fmadd_ps(w, _mm256_load_ps(s), m.r01);
        m.r2 = _mm256_fmadd_ps(w, _mm256_load_ps(s + 8), m.r2);
    }
    return m;
}

/* Transforms the 4-float vectors at x[0..3] (stride 8 floats apart in the rest records of
 * vertices a b c d) by the four matrices: X Y in [x x x x | y y y y], Z in the low half of
 * *z. */
SINEW_FORCE_INLINE __m256 lbs_avx2_transform4(const lbs_avx2_matrix m[4], const float* const x[4],
                                              __m128* z)
{
    __m256 p[4], q[4];
    for (int i = 0; i < 4; ++i) {
        __m256 xx = _mm256_broadcast_ps((const __m128*)x[i]);
        p[i] = _mm256_mul_ps(m[i].r01, xx);
        q[i] = _mm256_mul_ps(m[i].r2, xx);
    }
    /* hadd(hadd(a, b), hadd(c, d)) sums each row's four products, per 128-bit half. */
    __m256 xy = _mm256_hadd_ps(_mm256_hadd_ps(p[0], p[1]), _mm256_hadd_ps(p[2], p[3]));
    __m256 zz = _mm256_hadd_ps(_mm256_hadd_ps(q[0], q[1]), _mm256_hadd_ps(q[2], q[3]));
    *z = _mm256_castps256_ps128(zz);
    return xy;
}

/* Writes `count` (1-4) vectors given as x y z of four vertices to elements v.. of an array. */
SINEW_FORCE_INLINE void lbs_avx2_store4(float* base, size_t stride, uint32_t v, uint32_t count,
                                        uint32_t end, __m128 x, __m128 y, __m128 z)
{
    /* Back to xyz records: [xa ya xb yb], [xc yc xd yd], then z moved in. */
    __m128 lo = _mm_unpacklo_ps(x, y), hi = _mm_unpackhi_ps(x, y);
    __m128 a = _mm_movelh_ps(lo, z);                           /* xa ya za zb */
    __m128 b = _mm_shuffle_ps(lo, z, _MM_SHUFFLE(3, 1, 3, 2)); /* xb yb zb zd */
    __m128 c = _mm_shuffle_ps(hi, z, _MM_SHUFFLE(3, 2, 1, 0)); /* xc yc zc zd */
    __m128 d = _mm_shuffle_ps(hi, z, _MM_SHUFFLE(3, 3, 3, 2)); /* xd yd zd zd */
    sinew_sse_store_at(base, stride, v, end, a);
    if (count > 1) sinew_sse_store_at(base, stride, v + 1, end, b);
    if (count > 2) sinew_sse_store_at(base, stride, v + 2, end, c);
    if (count > 3) sinew_sse_store_at(base, stride, v + 3, end, d);
}

/* Skins the group of four vertices at v (a short group repeats vertex v and stores only
 * `count` < 4). For a full group (count a constant 4) every row is a constant displacement. */
SINEW_FORCE_INLINE void lbs_avx2_group(const sinew_skin_job* job, uint32_t v, uint32_t count,
                                       uint32_t end, uint32_t width, bool write_positions,
                                       bool write_normals)
{
    uint32_t idx[4] = {v, count > 1 ? v + 1 : v, count > 2 ? v + 2 : v, count > 3 ? v + 3 : v};
    lbs_avx2_matrix m[4];
    for (int i = 0; i < 4; ++i) m[i] = lbs_avx2_blend(job, idx[i], width);
    if (write_positions) {
        /* Rest positions have w = 1, which picks up the translation column. */
        const float* x[4];
        for (int i = 0; i < 4; ++i) x[i] = job->rest + 8u * idx[i];
        __m128 z;
        __m256 xy = lbs_avx2_transform4(m, x, &z);
        lbs_avx2_store4(job->positions, job->position_stride, v, count, end,
                        _mm256_castps256_ps128(xy), _mm256_extractf128_ps(xy, 1), z);
    }
    if (write_normals) {
        const float* x[4];
        for (int i = 0; i < 4; ++i) x[i] = job->rest + 8u * idx[i] + 4u;
        __m128 z;
        __m256 xy = lbs_avx2_transform4(m, x, &z);
        __m128 nx = _mm256_castps256_ps128(xy), ny = _mm256_extractf128_ps(xy, 1);
        __m128 s = _mm_add_ps(_mm_add_ps(_mm_mul_ps(nx, nx), _mm_mul_ps(ny, ny)), _mm_mul_ps(z, z));
        __m128 inv =
            _mm_and_ps(sinew_sse_rsqrt(s), _mm_cmpgt_ps(s, _mm_set1_ps(SINEW_SKIN_MIN_NORMAL_SQ)));
        lbs_avx2_store4(job->normals, job->normal_stride, v, count, end, _mm_mul_ps(nx, inv),
                        _mm_mul_ps(ny, inv), _mm_mul_ps(z, inv));
    }
}

SINEW_FORCE_INLINE void lbs_avx2_range(const sinew_skin_job* job_in, uint32_t begin, uint32_t end,
                                       uint32_t width, bool write_positions, bool write_normals)
{
    const sinew_skin_job job = *job_in; /* cannot alias the outputs: stays in registers */
    uint32_t v = begin;
    for (; end - v >= 4u; v += 4u)
        lbs_avx2_group(&job, v, 4u, end, width, write_positions, write_normals);
    if (v < end) lbs_avx2_group(&job, v, end - v, end, width, write_positions, write_normals);
}

void sinew_lbs_kernel_avx2(const sinew_skin_job* job, uint32_t begin, uint32_t end)
{
    SINEW_SKIN_DISPATCH(lbs_avx2_range, job, begin, end);
}
#endif
