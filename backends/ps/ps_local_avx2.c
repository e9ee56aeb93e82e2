/* The local step's arithmetic with AVX2 (built with -mavx2 -mfma but using no FMA, run after a
 * CPU check): a block of 16 prisms as two vectors of 8; the same operations as
 * ps_local_scalar.c, lane by lane. SPDX-License-Identifier: MIT */
#include <immintrin.h>

#include "ps_local.h"

/* x[c][v_k] - x[c][v_0] for 8 prisms, rounded to float (two gathers of 4 doubles each). */
static inline __m256 relative(const double* xc, __m256i vk, __m256i v0)
{
    __m128i k_lo = _mm256_castsi256_si128(vk), k_hi = _mm256_extracti128_si256(vk, 1);
    __m128i o_lo = _mm256_castsi256_si128(v0), o_hi = _mm256_extracti128_si256(v0, 1);
    __m256d lo = _mm256_sub_pd(_mm256_i32gather_pd(xc, k_lo, 8), _mm256_i32gather_pd(xc, o_lo, 8));
    __m256d hi = _mm256_sub_pd(_mm256_i32gather_pd(xc, k_hi, 8), _mm256_i32gather_pd(xc, o_hi, 8));
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1);
}

void ps_local_gradient_avx2(const ps_local_job* job, uint32_t begin, uint32_t end)
{
    const size_t S = job->stride;
    for (size_t p = (size_t)begin * PS_LOCAL_BLOCK; p < (size_t)end * PS_LOCAL_BLOCK; p += 8) {
        __m256i v[6];
        for (int k = 0; k < 6; ++k)
            v[k] = _mm256_loadu_si256((const __m256i*)(job->pv + (size_t)k * S + p));
        __m256 rel[3][6];
        for (int c = 0; c < 3; ++c) {
            const double* xc = job->x + (size_t)c * job->N;
            for (int k = 1; k < 6; ++k) rel[c][k] = relative(xc, v[k], v[0]);
        }
        __m256 inv_w = _mm256_loadu_ps(job->inv_w + p);
        for (int r = 0; r < 3; ++r) {
            __m256 g[6];
            for (int k = 1; k < 6; ++k) g[k] = _mm256_loadu_ps(job->G + (size_t)(6 * r + k) * S + p);
            for (int c = 0; c < 3; ++c) {
                __m256 sum = _mm256_mul_ps(g[1], rel[c][1]);
                for (int k = 2; k < 6; ++k) sum = _mm256_add_ps(sum, _mm256_mul_ps(g[k], rel[c][k]));
                _mm256_storeu_ps(job->F + (size_t)(3 * c + r) * S + p, _mm256_mul_ps(sum, inv_w));
            }
        }
    }
}

void ps_local_project_avx2(const ps_local_job* job, uint32_t begin, uint32_t end)
{
    const size_t S = job->stride;
    for (size_t p = (size_t)begin * PS_LOCAL_BLOCK; p < (size_t)end * PS_LOCAL_BLOCK; p += 8) {
        __m256 R[9];
        for (int k = 0; k < 9; ++k) R[k] = _mm256_loadu_ps(job->F + (size_t)k * S + p);
        for (int k = 0; k < 6; ++k) {
            __m256 g0 = _mm256_loadu_ps(job->G + (size_t)k * S + p);
            __m256 g1 = _mm256_loadu_ps(job->G + (size_t)(6 + k) * S + p);
            __m256 g2 = _mm256_loadu_ps(job->G + (size_t)(12 + k) * S + p);
            for (int i = 0; i < 3; ++i) {
                __m256 s = _mm256_add_ps(_mm256_mul_ps(R[3 * i], g0), _mm256_mul_ps(R[3 * i + 1], g1));
                s = _mm256_add_ps(s, _mm256_mul_ps(R[3 * i + 2], g2));
                _mm256_storeu_ps(job->contrib + (size_t)(3 * k + i) * S + p, s);
            }
        }
    }
}
