/* Helpers shared by the x86 kernels of dqs. Include only from a file built with at least
 * -msse4.1; the AVX2 parts need -mavx2 -mfma (implied by -mavx512f).
 * SPDX-License-Identifier: MIT
 *
 * The kernels work on batches of 4 (SSE), 8 (AVX2) or 16 (AVX-512) vertices in
 * structure-of-arrays form: for each influence the batch's dual quaternions are loaded (one
 * row per vertex) and transposed so that one register holds one component of every vertex;
 * the antipodality dot products, the sign flips, the blend, the normalisation and the rigid
 * transform are then plain vertical arithmetic, and the batch's vertices run side by side
 * instead of as one long dependency chain each. Horizontal adds and per-influence
 * broadcasts, slow on some CPUs (Zen 4), are not needed at all. */
#ifndef SINEW_DQS_X86_H
#define SINEW_DQS_X86_H

#include "skin_simd_x86.h"

/* Vertex i of a batch of n starting at v, the last one repeated past the range's end (a
 * short batch computes duplicates and stores only its `count` vertices). */
SINEW_FORCE_INLINE uint32_t dqs_x86_index(uint32_t v, uint32_t i, uint32_t count)
{
    return v + (i < count ? i : count - 1u);
}

/* Four vectors (w lanes ignored) as x, y, z of four vertices, or back. */
#define DQS_SSE_TRANSPOSE4(a, b, c, d)                                                             \
    do {                                                                                           \
        __m128 t0_ = _mm_unpacklo_ps((a), (b)), t1_ = _mm_unpacklo_ps((c), (d));                   \
        __m128 t2_ = _mm_unpackhi_ps((a), (b)), t3_ = _mm_unpackhi_ps((c), (d));                   \
        (a) = _mm_movelh_ps(t0_, t1_);                                                             \
        (b) = _mm_movehl_ps(t1_, t0_);                                                             \
        (c) = _mm_movelh_ps(t2_, t3_);                                                             \
        (d) = _mm_movehl_ps(t3_, t2_);                                                             \
    } while (0)

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

/* The 8x8 transpose of eight ymm rows (in place): row i element j <-> row j element i. */
SINEW_FORCE_INLINE void dqs_avx2_transpose8(__m256 r[8])
{
    __m256 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int h = 0; h < 8; h += 4) {
        u[h + 0] = _mm256_shuffle_ps(t[h + 0], t[h + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[h + 1] = _mm256_shuffle_ps(t[h + 0], t[h + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int e = 0; e < 4; ++e) {
        r[e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x20);
        r[4 + e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x31);
    }
}

/* The weights of influences k..k+3 of a batch's eight vertices (rows of `width` weights from
 * w, vertex i at row dqs_x86_index(0, i, count)), one ymm per influence, zero past the width. */
SINEW_FORCE_INLINE void dqs_avx2_weights4(const float* w, uint32_t count, uint32_t k,
                                          uint32_t width, __m256 out[4])
{
    __m256 a[4];
    for (uint32_t i = 0; i < 4u; ++i) {
        const float* rows[2] = {w + (size_t)dqs_x86_index(0u, i, count) * width,
                                w + (size_t)dqs_x86_index(0u, i + 4u, count) * width};
        __m128 h[2];
        for (int j = 0; j < 2; ++j) {
            if (k + 4u <= width) {
                h[j] = _mm_loadu_ps(rows[j] + k);
            } else {
                float t[4];
                for (uint32_t n = 0; n < 4u; ++n) t[n] = k + n < width ? rows[j][k + n] : 0.0f;
                h[j] = _mm_loadu_ps(t);
            }
        }
        a[i] = _mm256_insertf128_ps(_mm256_castps128_ps256(h[0]), h[1], 1);
    }
    /* 4x4 transposes within each half: vertices 0-3 low, 4-7 high. */
    __m256 t0 = _mm256_unpacklo_ps(a[0], a[1]), t1 = _mm256_unpacklo_ps(a[2], a[3]);
    __m256 t2 = _mm256_unpackhi_ps(a[0], a[1]), t3 = _mm256_unpackhi_ps(a[2], a[3]);
    out[0] = _mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(1, 0, 1, 0));
    out[1] = _mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 2, 3, 2));
    out[2] = _mm256_shuffle_ps(t2, t3, _MM_SHUFFLE(1, 0, 1, 0));
    out[3] = _mm256_shuffle_ps(t2, t3, _MM_SHUFFLE(3, 2, 3, 2));
}

/* Blends the dual quaternions of a batch's eight vertices (rows of `width` offsets from o and
 * weights from w, vertex i at row dqs_x86_index(0, i, count)) into b[0..7] = r.x r.y r.z r.w
 * e.x e.y e.z e.w, one ymm per component. Rows are addressed from one base pointer: for a full
 * batch (count a constant 8) every row is a constant displacement. */
SINEW_FORCE_INLINE void dqs_avx2_blend8(const float* transforms, const uint32_t* o, const float* w,
                                        uint32_t count, uint32_t width, __m256 b[8])
{
    __m256 wk[4], q[8], r0[4];
    dqs_avx2_weights4(w, count, 0u, width, wk);
    for (uint32_t i = 0; i < 8u; ++i)
        q[i] = _mm256_load_ps(transforms + o[(size_t)dqs_x86_index(0u, i, count) * width]);
    dqs_avx2_transpose8(q);
    for (int c = 0; c < 4; ++c) r0[c] = q[c];
    for (int c = 0; c < 8; ++c) b[c] = _mm256_mul_ps(wk[0], q[c]);
    for (uint32_t k = 1; k < width; ++k) {
        if ((k & 3u) == 0) dqs_avx2_weights4(w, count, k, width, wk);
        /* An influence no vertex of the batch has (padding, mostly) is skipped, and lanes of
         * zero weight keep their blend as it is (see dqs_kernels.h). */
        __m256 m = _mm256_cmp_ps(wk[k & 3u], _mm256_setzero_ps(), _CMP_NEQ_UQ);
        int live = _mm256_movemask_ps(m);
        if (live == 0) continue;
        for (uint32_t i = 0; i < 8u; ++i)
            q[i] = _mm256_load_ps(transforms + o[(size_t)dqs_x86_index(0u, i, count) * width + k]);
        dqs_avx2_transpose8(q);
        /* Same products and summation order as the scalar kernel, unfused: same sign choices. */
        __m256 d =
            _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(q[0], r0[0]), _mm256_mul_ps(q[1], r0[1])),
                          _mm256_add_ps(_mm256_mul_ps(q[2], r0[2]), _mm256_mul_ps(q[3], r0[3])));
        __m256 flip =
            _mm256_and_ps(_mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_LT_OQ), _mm256_set1_ps(-0.0f));
        __m256 sw = _mm256_xor_ps(wk[k & 3u], flip);
        if (live == 0xff) {
            for (int c = 0; c < 8; ++c) b[c] = _mm256_fmadd_ps(sw, q[c], b[c]);
        } else {
            for (int c = 0; c < 8; ++c)
                b[c] = _mm256_blendv_ps(b[c], _mm256_fmadd_ps(sw, q[c], b[c]), m);
        }
    }
}
#endif

#endif
