/* AVX2 polar decomposition kernel (built with -mavx2 -mfma; the arithmetic deliberately uses
 * no FMA, to match the scalar code bit for bit). SPDX-License-Identifier: MIT
 *
 * A "vector" of the kernel is two ymm registers side by side, 16 matrices: every operation is
 * issued for both, which gives the out-of-order core two independent chains to overlap (a
 * Newton step is one long dependent chain per register); more registers spill. No FMA, so that
 * the bits stay the scalar code's (sinew-polar-microbench measures the kernels). */
#include <immintrin.h>

#include "polar3_batch.h"

#define POLAR3_W 16

typedef struct vf {
    __m256 lo, hi;
} vf;
typedef vf vm; /* all-ones lanes for true */

static inline vf mk(__m256 lo, __m256 hi)
{
    vf r;
    r.lo = lo;
    r.hi = hi;
    return r;
}
static inline vf v_set1(float x) { return mk(_mm256_set1_ps(x), _mm256_set1_ps(x)); }
static inline vf v_load(const float* a) { return mk(_mm256_loadu_ps(a), _mm256_loadu_ps(a + 8)); }
static inline void v_store(float* a, vf x)
{
    _mm256_storeu_ps(a, x.lo);
    _mm256_storeu_ps(a + 8, x.hi);
}

#define POLAR3_BINARY(name, op)                                                                    \
    static inline vf name(vf a, vf b) { return mk(op(a.lo, b.lo), op(a.hi, b.hi)); }
static inline __m256 cmp_lt(__m256 a, __m256 b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
static inline __m256 cmp_gt(__m256 a, __m256 b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
static inline __m256 cmp_ge(__m256 a, __m256 b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
static inline __m256 cmp_eq(__m256 a, __m256 b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
static inline __m256 cmp_ne(__m256 a, __m256 b) { return _mm256_cmp_ps(a, b, _CMP_NEQ_UQ); }
static inline __m256 andnot_rev(__m256 a, __m256 b) { return _mm256_andnot_ps(b, a); }
static inline __m256 abs1(__m256 a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
static inline __m256 neg1(__m256 a) { return _mm256_xor_ps(_mm256_set1_ps(-0.0f), a); }
static inline __m256 not1(__m256 a)
{
    return _mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(-1)));
}
POLAR3_BINARY(v_add, _mm256_add_ps)
POLAR3_BINARY(v_sub, _mm256_sub_ps)
POLAR3_BINARY(v_mul, _mm256_mul_ps)
POLAR3_BINARY(v_div, _mm256_div_ps)
POLAR3_BINARY(v_max, _mm256_max_ps)
POLAR3_BINARY(v_lt, cmp_lt)
POLAR3_BINARY(v_gt, cmp_gt)
POLAR3_BINARY(v_ge, cmp_ge)
POLAR3_BINARY(v_eq, cmp_eq)
POLAR3_BINARY(v_ne, cmp_ne)
POLAR3_BINARY(m_or, _mm256_or_ps)
POLAR3_BINARY(m_and, _mm256_and_ps)
POLAR3_BINARY(m_andnot, andnot_rev)
static inline vf v_sqrt(vf a) { return mk(_mm256_sqrt_ps(a.lo), _mm256_sqrt_ps(a.hi)); }
static inline vf v_abs(vf a) { return mk(abs1(a.lo), abs1(a.hi)); }
static inline vf v_neg(vf a) { return mk(neg1(a.lo), neg1(a.hi)); }
static inline vm m_not(vm a) { return mk(not1(a.lo), not1(a.hi)); }
static inline vf v_sel(vm m, vf a, vf b)
{
    return mk(_mm256_blendv_ps(b.lo, a.lo, m.lo), _mm256_blendv_ps(b.hi, a.hi, m.hi));
}
static inline vm m_none(void) { return v_set1(0.0f); }
static inline uint64_t m_bits(vm m)
{
    return (uint64_t)(uint32_t)_mm256_movemask_ps(m.lo) |
           ((uint64_t)(uint32_t)_mm256_movemask_ps(m.hi) << 8);
}
static inline int m_any(vm m) { return m_bits(m) != 0; }
static inline int m_all(vm m) { return m_bits(m) == 0xFFFFu; }

#include "polar3_simd_kernel.h"

void sinew_polar3_batch_avx2(const float* F_soa, float* R_soa, size_t stride, uint32_t begin,
                             uint32_t end)
{
    polar3_simd_loop(F_soa, R_soa, stride, begin, end);
}
