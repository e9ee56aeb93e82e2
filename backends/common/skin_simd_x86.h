/* Small SSE helpers shared by the x86 kernels of lbs and dqs. Include only from a file built
 * with at least -msse4.1. SPDX-License-Identifier: MIT */
#ifndef SINEW_COMMON_SKIN_SIMD_X86_H
#define SINEW_COMMON_SKIN_SIMD_X86_H

#include <smmintrin.h>

#include "skin_job.h"

/* Writes lanes x y z (12 bytes) and nothing past them: a 16-byte store would overwrite the next
 * element of an interleaved array, possibly one that another job already wrote. */
SINEW_FORCE_INLINE void sinew_sse_store3(float* dst, __m128 v)
{
    _mm_storel_pi((__m64*)dst, v);
    _mm_store_ss(dst + 2, _mm_movehl_ps(v, v));
}

/* Stores lanes x y z of v at element i of a strided array of a range ending at `end`: one
 * 16-byte store where sinew_skin_wide_store allows it, else exactly 12 bytes. */
SINEW_FORCE_INLINE void sinew_sse_store_at(float* base, size_t stride, uint32_t i, uint32_t end,
                                           __m128 v)
{
    float* dst = sinew_skin_at(base, stride, i);
    if (sinew_skin_wide_store(stride, i, end))
        _mm_storeu_ps(dst, v);
    else
        sinew_sse_store3(dst, v);
}

/* 1/sqrt(s) from the 12-bit estimate and one Newton step (relative error about 2e-7), far
 * cheaper than a square root and a division where it is needed per vertex. */
SINEW_FORCE_INLINE __m128 sinew_sse_rsqrt(__m128 s)
{
    __m128 y = _mm_rsqrt_ps(s);
    __m128 hs = _mm_mul_ps(s, _mm_set1_ps(0.5f));
    return _mm_mul_ps(y, _mm_sub_ps(_mm_set1_ps(1.5f), _mm_mul_ps(hs, _mm_mul_ps(y, y))));
}

#endif
