/* Dual quaternion skinning with AVX2 and FMA on batches of eight vertices in
 * structure-of-arrays form, one ymm per component (see dqs_x86.h).
 * Built with -mavx2 -mfma, called only when the CPU has both.
 * SPDX-License-Identifier: MIT */
#include "dqs_kernels.h"

#if defined(SINEW_SKIN_X86)
#include <immintrin.h>

#include "dqs_x86.h"

/* a b - c d and x + a b, unfused and in this order: the scalar kernel's rounding, so that
 * this kernel's results are the scalar ones bit for bit. */
SINEW_FORCE_INLINE __m256 dqs_avx2_msub(__m256 a, __m256 b, __m256 c, __m256 d)
{
    return _mm256_sub_ps(_mm256_mul_ps(a, b), _mm256_mul_ps(c, d));
}

SINEW_FORCE_INLINE __m256 dqs_avx2_madd(__m256 x, __m256 a, __m256 b)
{
    return _mm256_add_ps(x, _mm256_mul_ps(a, b));
}

/* x + 2 r_v x (r_v x x + r_w x) for eight vertices; x[0..2] in place. */
SINEW_FORCE_INLINE void dqs_avx2_rotate(const __m256 r[4], __m256 x[3])
{
    __m256 two = _mm256_set1_ps(2.0f);
    __m256 ux = dqs_avx2_madd(dqs_avx2_msub(r[1], x[2], r[2], x[1]), r[3], x[0]);
    __m256 uy = dqs_avx2_madd(dqs_avx2_msub(r[2], x[0], r[0], x[2]), r[3], x[1]);
    __m256 uz = dqs_avx2_madd(dqs_avx2_msub(r[0], x[1], r[1], x[0]), r[3], x[2]);
    x[0] = dqs_avx2_madd(x[0], two, dqs_avx2_msub(r[1], uz, r[2], uy));
    x[1] = dqs_avx2_madd(x[1], two, dqs_avx2_msub(r[2], ux, r[0], uz));
    x[2] = dqs_avx2_madd(x[2], two, dqs_avx2_msub(r[0], uy, r[1], ux));
}

/* 1/sqrt(s) rounded like the scalar kernel's 1.0f / sqrtf(s): a square root and a division
 * cost little once per eight vertices, and an estimate's error would enter the rotation twice
 * and the translation squared. */
SINEW_FORCE_INLINE __m256 dqs_avx2_rsqrt(__m256 s)
{
    return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_sqrt_ps(s));
}

/* Permutations and blend masks that interleave three component registers (x, y, z of eight
 * vertices) into the 24 floats x y z x y z ... of a packed array: output register r takes
 * element i from component (8r + i) % 3 of vertex (8r + i) / 3. */
typedef struct dqs_avx2_packing {
    __m256i index[3];
    __m256 take_y[3], take_z[3];
} dqs_avx2_packing;

static inline dqs_avx2_packing dqs_avx2_packing_make(void)
{
    dqs_avx2_packing k;
    for (int r = 0; r < 3; ++r) {
        int32_t index[8], y[8], z[8];
        for (int i = 0; i < 8; ++i) {
            int f = 8 * r + i;
            index[i] = f / 3;
            y[i] = f % 3 == 1 ? -1 : 0;
            z[i] = f % 3 == 2 ? -1 : 0;
        }
        k.index[r] = _mm256_loadu_si256((const __m256i*)(const void*)index);
        k.take_y[r] = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i*)(const void*)y));
        k.take_z[r] = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i*)(const void*)z));
    }
    return k;
}

/* Writes x y z of the eight vertices as 24 packed floats at dst. */
SINEW_FORCE_INLINE void dqs_avx2_store_packed(float* dst, const dqs_avx2_packing* k,
                                              const __m256 c[3])
{
    for (int r = 0; r < 3; ++r) {
        __m256 x = _mm256_permutevar8x32_ps(c[0], k->index[r]);
        __m256 y = _mm256_permutevar8x32_ps(c[1], k->index[r]);
        __m256 z = _mm256_permutevar8x32_ps(c[2], k->index[r]);
        _mm256_storeu_ps(dst + 8 * r,
                         _mm256_blendv_ps(_mm256_blendv_ps(x, y, k->take_y[r]), z, k->take_z[r]));
    }
}

/* Skins the batch of eight vertices starting at v, of which `count` are stored. */
SINEW_FORCE_INLINE void dqs_avx2_batch(const sinew_skin_job* job, const dqs_avx2_packing* pk,
                                       uint32_t v, uint32_t count, uint32_t end, uint32_t width,
                                       bool write_positions, bool write_normals)
{
    __m256 q[8], x[8];
    const float* rest = job->rest + 8u * (size_t)v;
    for (uint32_t i = 0; i < 8u; ++i)
        x[i] = _mm256_load_ps(rest + 8u * dqs_x86_index(0u, i, count));
    /* q: r.x r.y r.z r.w e.x e.y e.z e.w of eight vertices; x: p.x p.y p.z 1 n.x n.y n.z 0. */
    dqs_avx2_blend8(job->transforms, job->offsets + (size_t)v * width,
                    job->weights + (size_t)v * width, count, width, q);
    dqs_avx2_transpose8(x);
    /* Normalise by the norm of the real part, which is at least the first weight. */
    __m256 inv =
        dqs_avx2_rsqrt(_mm256_add_ps(dqs_avx2_madd(_mm256_mul_ps(q[0], q[0]), q[1], q[1]),
                                     dqs_avx2_madd(_mm256_mul_ps(q[2], q[2]), q[3], q[3])));
    for (int c = 0; c < 8; ++c) q[c] = _mm256_mul_ps(q[c], inv);
    if (write_positions) {
        /* t = 2 ((r_v x e_v + r_w e_v) - e_w r_v), in the scalar kernel's order. */
        __m256 two = _mm256_set1_ps(2.0f);
        __m256 tx = dqs_avx2_madd(dqs_avx2_msub(q[1], q[6], q[2], q[5]), q[3], q[4]);
        __m256 ty = dqs_avx2_madd(dqs_avx2_msub(q[2], q[4], q[0], q[6]), q[3], q[5]);
        __m256 tz = dqs_avx2_madd(dqs_avx2_msub(q[0], q[5], q[1], q[4]), q[3], q[6]);
        tx = _mm256_mul_ps(two, _mm256_sub_ps(tx, _mm256_mul_ps(q[7], q[0])));
        ty = _mm256_mul_ps(two, _mm256_sub_ps(ty, _mm256_mul_ps(q[7], q[1])));
        tz = _mm256_mul_ps(two, _mm256_sub_ps(tz, _mm256_mul_ps(q[7], q[2])));
        dqs_avx2_rotate(q, x);
        x[0] = _mm256_add_ps(x[0], tx);
        x[1] = _mm256_add_ps(x[1], ty);
        x[2] = _mm256_add_ps(x[2], tz);
        x[3] = _mm256_setzero_ps();
    }
    if (write_normals) {
        dqs_avx2_rotate(q, x + 4);
        __m256 s = dqs_avx2_madd(dqs_avx2_madd(_mm256_mul_ps(x[4], x[4]), x[5], x[5]), x[6], x[6]);
        __m256 ok = _mm256_cmp_ps(s, _mm256_set1_ps(SINEW_SKIN_MIN_NORMAL_SQ), _CMP_GT_OQ);
        __m256 ninv = _mm256_and_ps(dqs_avx2_rsqrt(s), ok);
        for (int c = 4; c < 7; ++c) x[c] = _mm256_mul_ps(x[c], ninv);
    }
    /* A full batch into a packed array: three permuted stores per array. Otherwise back to
     * one record per vertex, p' | n', stored in vertex order. */
    bool strided_positions = write_positions, strided_normals = write_normals;
    if (write_positions && count == 8u && job->position_stride == 12u) {
        dqs_avx2_store_packed(job->positions + 3u * (size_t)v, pk, x);
        strided_positions = false;
    }
    if (write_normals && count == 8u && job->normal_stride == 12u) {
        dqs_avx2_store_packed(job->normals + 3u * (size_t)v, pk, x + 4);
        strided_normals = false;
    }
    if (!strided_positions && !strided_normals) return;
    dqs_avx2_transpose8(x);
    for (uint32_t i = 0; i < count; ++i) {
        if (strided_positions)
            sinew_sse_store_at(job->positions, job->position_stride, v + i, end,
                               _mm256_castps256_ps128(x[i]));
        if (strided_normals)
            sinew_sse_store_at(job->normals, job->normal_stride, v + i, end,
                               _mm256_extractf128_ps(x[i], 1));
    }
}

SINEW_FORCE_INLINE void dqs_avx2_range(const sinew_skin_job* job_in, uint32_t begin, uint32_t end,
                                       uint32_t width, bool write_positions, bool write_normals)
{
    const sinew_skin_job job = *job_in; /* cannot alias the outputs: stays in registers */
    const dqs_avx2_packing pk = dqs_avx2_packing_make();
    uint32_t v = begin;
    /* Full batches with a constant count (constant row displacements), then the rest. */
    for (; end - v >= 8u; v += 8u)
        dqs_avx2_batch(&job, &pk, v, 8u, end, width, write_positions, write_normals);
    if (v < end) dqs_avx2_batch(&job, &pk, v, end - v, end, width, write_positions, write_normals);
}

void sinew_dqs_kernel_avx2(const sinew_skin_job* job, uint32_t begin, uint32_t end)
{
    SINEW_SKIN_DISPATCH(dqs_avx2_range, job, begin, end);
}
#endif
