/* Dual quaternion skinning with AVX2 and FMA on batches of eight vertices in
 * structure-of-arrays form, one ymm per component (see dqs_x86.h).
 * Built with -mavx2 -mfma, called only when the CPU has both.
 * SPDX-License-Identifier: MIT */
#include "dqs_kernels.h"

#if defined(SINEW_SKIN_X86)
#include <immintrin.h>

#include "dqs_x86.h"

/* 1/s from the 12-bit estimate and one Newton step. */
SINEW_FORCE_INLINE __m256 dqs_avx2_rcp(__m256 s)
{
    __m256 y = _mm256_rcp_ps(s);
    return _mm256_fmadd_ps(y, _mm256_fnmadd_ps(s, y, _mm256_set1_ps(1.0f)), y);
}

/* 1/sqrt(s) from the 12-bit estimate and one Newton step. */
SINEW_FORCE_INLINE __m256 dqs_avx2_rsqrt(__m256 s)
{
    __m256 y = _mm256_rsqrt_ps(s);
    __m256 u = _mm256_fnmadd_ps(_mm256_mul_ps(s, y), y, _mm256_set1_ps(1.0f));
    return _mm256_fmadd_ps(_mm256_mul_ps(y, _mm256_set1_ps(0.5f)), u, y);
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
    /* s = 2 / |b_r|^2, and R = I + s (w [v]x + [v]x^2) from the scaled x2 y2 z2 = s v. */
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 n2 = _mm256_fmadd_ps(
        q[0], q[0],
        _mm256_fmadd_ps(q[1], q[1], _mm256_fmadd_ps(q[2], q[2], _mm256_mul_ps(q[3], q[3]))));
    __m256 s = dqs_avx2_rcp(n2);
    s = _mm256_add_ps(s, s);
    __m256 x2 = _mm256_mul_ps(q[0], s), y2 = _mm256_mul_ps(q[1], s), z2 = _mm256_mul_ps(q[2], s);
    __m256 wx = _mm256_mul_ps(q[3], x2), wy = _mm256_mul_ps(q[3], y2), wz = _mm256_mul_ps(q[3], z2);
    __m256 m00 = _mm256_fnmadd_ps(q[1], y2, _mm256_fnmadd_ps(q[2], z2, one));
    __m256 m11 = _mm256_fnmadd_ps(q[0], x2, _mm256_fnmadd_ps(q[2], z2, one));
    __m256 m22 = _mm256_fnmadd_ps(q[0], x2, _mm256_fnmadd_ps(q[1], y2, one));
    __m256 m01 = _mm256_fmsub_ps(q[0], y2, wz), m10 = _mm256_fmadd_ps(q[0], y2, wz);
    __m256 m02 = _mm256_fmadd_ps(q[0], z2, wy), m20 = _mm256_fmsub_ps(q[0], z2, wy);
    __m256 m12 = _mm256_fmsub_ps(q[1], z2, wx), m21 = _mm256_fmadd_ps(q[1], z2, wx);
    if (write_positions) {
        /* t = s (w e_v - e_w v + v x e_v) = w2 e_v - e_w (x2 y2 z2) + (x2 y2 z2) x e_v. */
        __m256 w2 = _mm256_mul_ps(q[3], s);
        __m256 tx = _mm256_fmsub_ps(y2, q[6], _mm256_mul_ps(z2, q[5]));
        __m256 ty = _mm256_fmsub_ps(z2, q[4], _mm256_mul_ps(x2, q[6]));
        __m256 tz = _mm256_fmsub_ps(x2, q[5], _mm256_mul_ps(y2, q[4]));
        tx = _mm256_fnmadd_ps(q[7], x2, _mm256_fmadd_ps(w2, q[4], tx));
        ty = _mm256_fnmadd_ps(q[7], y2, _mm256_fmadd_ps(w2, q[5], ty));
        tz = _mm256_fnmadd_ps(q[7], z2, _mm256_fmadd_ps(w2, q[6], tz));
        __m256 px = x[0], py = x[1], pz = x[2];
        x[0] = _mm256_fmadd_ps(m00, px, _mm256_fmadd_ps(m01, py, _mm256_fmadd_ps(m02, pz, tx)));
        x[1] = _mm256_fmadd_ps(m10, px, _mm256_fmadd_ps(m11, py, _mm256_fmadd_ps(m12, pz, ty)));
        x[2] = _mm256_fmadd_ps(m20, px, _mm256_fmadd_ps(m21, py, _mm256_fmadd_ps(m22, pz, tz)));
        x[3] = _mm256_setzero_ps();
    }
    if (write_normals) {
        __m256 ux = x[4], uy = x[5], uz = x[6];
        __m256 nx = _mm256_fmadd_ps(m00, ux, _mm256_fmadd_ps(m01, uy, _mm256_mul_ps(m02, uz)));
        __m256 ny = _mm256_fmadd_ps(m10, ux, _mm256_fmadd_ps(m11, uy, _mm256_mul_ps(m12, uz)));
        __m256 nz = _mm256_fmadd_ps(m20, ux, _mm256_fmadd_ps(m21, uy, _mm256_mul_ps(m22, uz)));
        __m256 l2 = _mm256_fmadd_ps(nx, nx, _mm256_fmadd_ps(ny, ny, _mm256_mul_ps(nz, nz)));
        __m256 ok = _mm256_cmp_ps(l2, _mm256_set1_ps(SINEW_SKIN_MIN_NORMAL_SQ), _CMP_GT_OQ);
        __m256 inv = _mm256_and_ps(dqs_avx2_rsqrt(l2), ok);
        x[4] = _mm256_mul_ps(nx, inv);
        x[5] = _mm256_mul_ps(ny, inv);
        x[6] = _mm256_mul_ps(nz, inv);
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
