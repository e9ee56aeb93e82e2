/* Small SSE helpers shared by the x86 kernels of lbs and dqs. Include only from a file built
 * with at least -msse4.1. SPDX-License-Identifier: MIT */
#ifndef SINEW_COMMON_SKIN_SIMD_X86_H
#define SINEW_COMMON_SKIN_SIMD_X86_H

#include <smmintrin.h>

#include "skin_job.h"

/* All four lanes set to lane i of v. */
#define sinew_sse_splat(v, i) _mm_shuffle_ps((v), (v), _MM_SHUFFLE((i), (i), (i), (i)))
/* (v.y, v.z, v.x, v.w). */
#define sinew_sse_yzx(v) _mm_shuffle_ps((v), (v), _MM_SHUFFLE(3, 0, 2, 1))

/* Writes lanes x y z (12 bytes) and nothing past them: a 16-byte store would overwrite the next
 * element of an interleaved array, possibly one that another job already wrote. */
SINEW_FORCE_INLINE void sinew_sse_store3(float* dst, __m128 v)
{
    _mm_storel_pi((__m64*)dst, v);
    _mm_store_ss(dst + 2, _mm_movehl_ps(v, v));
}

/* (x+y)+(z+w) in every lane: the summation order of the scalar kernels. */
SINEW_FORCE_INLINE __m128 sinew_sse_sum4(__m128 v)
{
    __m128 s = _mm_add_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_add_ps(s, _mm_shuffle_ps(s, s, _MM_SHUFFLE(1, 0, 3, 2)));
}

/* 1/sqrt(s) from the 12-bit estimate and one Newton step (relative error about 2e-7), far
 * cheaper per vertex than a square root and a division. */
SINEW_FORCE_INLINE __m128 sinew_sse_rsqrt(__m128 s)
{
    __m128 y = _mm_rsqrt_ps(s);
    __m128 hs = _mm_mul_ps(s, _mm_set1_ps(0.5f));
    return _mm_mul_ps(y, _mm_sub_ps(_mm_set1_ps(1.5f), _mm_mul_ps(hs, _mm_mul_ps(y, y))));
}

/* Normalises a vector whose w lane is zero; (nearly) zero vectors become zero. */
SINEW_FORCE_INLINE __m128 sinew_sse_normalise3(__m128 n)
{
    __m128 s = sinew_sse_sum4(_mm_mul_ps(n, n));
    __m128 ok = _mm_cmpgt_ps(s, _mm_set1_ps(SINEW_SKIN_MIN_NORMAL_SQ));
    return _mm_and_ps(_mm_mul_ps(n, sinew_sse_rsqrt(s)), ok);
}

/* Stores lanes x y z of v at element i of a strided array of a range ending at `end`: one
 * 16-byte store where sinew_skin_wide_store allows it, else exactly 12 bytes. */
SINEW_FORCE_INLINE void sinew_sse_store_at(float* base, size_t stride, uint32_t i, uint32_t end,
                                           __m128 v)
{
    float* dst = sinew_skin_at(base, stride, i);
    if (sinew_skin_wide_store(stride, i, end)) _mm_storeu_ps(dst, v);
    else sinew_sse_store3(dst, v);
}

/* Normalises four vectors (w lanes zero) with one square-root estimate: the squared lengths
 * of all four land in one register, in the scalar summation order. */
SINEW_FORCE_INLINE void sinew_sse_normalise3x4(__m128 n[4])
{
    __m128 s = _mm_hadd_ps(_mm_hadd_ps(_mm_mul_ps(n[0], n[0]), _mm_mul_ps(n[1], n[1])),
                           _mm_hadd_ps(_mm_mul_ps(n[2], n[2]), _mm_mul_ps(n[3], n[3])));
    __m128 inv = _mm_and_ps(sinew_sse_rsqrt(s),
                            _mm_cmpgt_ps(s, _mm_set1_ps(SINEW_SKIN_MIN_NORMAL_SQ)));
    n[0] = _mm_mul_ps(n[0], sinew_sse_splat(inv, 0));
    n[1] = _mm_mul_ps(n[1], sinew_sse_splat(inv, 1));
    n[2] = _mm_mul_ps(n[2], sinew_sse_splat(inv, 2));
    n[3] = _mm_mul_ps(n[3], sinew_sse_splat(inv, 3));
}

/* The vertex loop of every x86 kernel. VERTEX(v, n) skins vertex v, stores its position if
 * positions are written, and sets the __m128 n to its unnormalised normal (w lane 0) if
 * WRITE_NORMALS; the loop normalises and stores the normals, four vertices at a time. */
#define SINEW_SSE_SKIN_LOOP(VERTEX, normals_, normal_stride_, begin, end, WRITE_NORMALS)      \
    do {                                                                                    \
        uint32_t v_ = (begin);                                                              \
        if (WRITE_NORMALS) {                                                                \
            for (; v_ + 4u <= (end); v_ += 4u) {                                            \
                __m128 n_[4];                                                               \
                VERTEX(v_, n_[0]);                                                          \
                VERTEX(v_ + 1u, n_[1]);                                                     \
                VERTEX(v_ + 2u, n_[2]);                                                     \
                VERTEX(v_ + 3u, n_[3]);                                                     \
                sinew_sse_normalise3x4(n_);                                                 \
                for (uint32_t i_ = 0; i_ < 4u; ++i_)                                        \
                    sinew_sse_store_at((normals_), (normal_stride_), v_ + i_, (end), n_[i_]); \
            }                                                                               \
        }                                                                                   \
        for (; v_ < (end); ++v_) {                                                          \
            __m128 n_ = _mm_setzero_ps();                                                   \
            VERTEX(v_, n_);                                                                 \
            if (WRITE_NORMALS)                                                              \
                sinew_sse_store_at((normals_), (normal_stride_), v_, (end),                 \
                                   sinew_sse_normalise3(n_));                               \
        }                                                                                   \
    } while (0)

/* a x b in lanes x y z (w lane 0 for finite input), with the products in the scalar order. */
SINEW_FORCE_INLINE __m128 sinew_sse_cross(__m128 a, __m128 b)
{
    __m128 c = _mm_sub_ps(_mm_mul_ps(a, sinew_sse_yzx(b)), _mm_mul_ps(sinew_sse_yzx(a), b));
    return sinew_sse_yzx(c);
}

#endif
