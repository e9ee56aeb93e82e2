/* The local step's arithmetic with AVX-512F (built with -mavx512f, run after a CPU check): one
 * block of 16 prisms per vector; the same operations as ps_local_scalar.c, lane by lane.
 * SPDX-License-Identifier: MIT */
#include <immintrin.h>

#include "ps_local.h"

/* x[c][v_k] - x[c][v_0] for 16 prisms, rounded to float (two gathers of 8 doubles each). */
static inline __m512 relative(const double* xc, __m512i vk, __m512i v0)
{
    __m256i k_lo = _mm512_castsi512_si256(vk), k_hi = _mm512_extracti64x4_epi64(vk, 1);
    __m256i o_lo = _mm512_castsi512_si256(v0), o_hi = _mm512_extracti64x4_epi64(v0, 1);
    __m512d lo = _mm512_sub_pd(_mm512_i32gather_pd(k_lo, xc, 8), _mm512_i32gather_pd(o_lo, xc, 8));
    __m512d hi = _mm512_sub_pd(_mm512_i32gather_pd(k_hi, xc, 8), _mm512_i32gather_pd(o_hi, xc, 8));
    __m256 flo = _mm512_cvtpd_ps(lo), fhi = _mm512_cvtpd_ps(hi);
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(flo)),
                                               _mm256_castps_pd(fhi), 1));
}

void ps_local_gradient_avx512(const ps_local_job* job, uint32_t begin, uint32_t end)
{
    const size_t S = job->stride;
    for (size_t p = (size_t)begin * PS_LOCAL_BLOCK; p < (size_t)end * PS_LOCAL_BLOCK; p += 16) {
        __m512i v[6];
        for (int k = 0; k < 6; ++k) v[k] = _mm512_loadu_si512((const void*)(job->pv + (size_t)k * S + p));
        __m512 rel[3][6];
        for (int c = 0; c < 3; ++c) {
            const double* xc = job->x + (size_t)c * job->N;
            for (int k = 1; k < 6; ++k) rel[c][k] = relative(xc, v[k], v[0]);
        }
        __m512 inv_w = _mm512_loadu_ps(job->inv_w + p);
        for (int r = 0; r < 3; ++r) {
            __m512 g[6];
            for (int k = 1; k < 6; ++k) g[k] = _mm512_loadu_ps(job->G + (size_t)(6 * r + k) * S + p);
            for (int c = 0; c < 3; ++c) {
                __m512 sum = _mm512_mul_ps(g[1], rel[c][1]);
                for (int k = 2; k < 6; ++k) sum = _mm512_add_ps(sum, _mm512_mul_ps(g[k], rel[c][k]));
                _mm512_storeu_ps(job->F + (size_t)(3 * c + r) * S + p, _mm512_mul_ps(sum, inv_w));
            }
        }
    }
}

void ps_local_project_avx512(const ps_local_job* job, uint32_t begin, uint32_t end)
{
    const size_t S = job->stride;
    for (size_t p = (size_t)begin * PS_LOCAL_BLOCK; p < (size_t)end * PS_LOCAL_BLOCK; p += 16) {
        __m512 R[9];
        for (int k = 0; k < 9; ++k) R[k] = _mm512_loadu_ps(job->F + (size_t)k * S + p);
        for (int k = 0; k < 6; ++k) {
            __m512 g0 = _mm512_loadu_ps(job->G + (size_t)k * S + p);
            __m512 g1 = _mm512_loadu_ps(job->G + (size_t)(6 + k) * S + p);
            __m512 g2 = _mm512_loadu_ps(job->G + (size_t)(12 + k) * S + p);
            for (int i = 0; i < 3; ++i) {
                __m512 s = _mm512_add_ps(_mm512_mul_ps(R[3 * i], g0), _mm512_mul_ps(R[3 * i + 1], g1));
                s = _mm512_add_ps(s, _mm512_mul_ps(R[3 * i + 2], g2));
                _mm512_storeu_ps(job->contrib + (size_t)(3 * k + i) * S + p, s);
            }
        }
    }
}
