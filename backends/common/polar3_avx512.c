/* AVX-512F polar decomposition kernel (built with -mavx512f; the arithmetic deliberately uses
 * no FMA, to match the scalar code bit for bit). SPDX-License-Identifier: MIT
 *
 * A "vector" of the kernel is two zmm registers side by side, 32 matrices, with the lane masks
 * of both in one word: every operation is issued for both, which gives the out-of-order core
 * two independent chains to overlap (a Newton step is one long dependent chain per register);
 * more registers spill. No FMA, so that the bits stay the scalar code's (sinew-polar-microbench
 * measures the kernels). */
#include <immintrin.h>

#include "polar3_batch.h"

#define POLAR3_W 32

typedef struct vf {
    __m512 lo, hi;
} vf;
typedef uint64_t vm; /* bits 0-15: lanes of lo, bits 16-31: lanes of hi */

static inline vf mk(__m512 lo, __m512 hi)
{
    vf r;
    r.lo = lo;
    r.hi = hi;
    return r;
}
static inline vf v_set1(float x) { return mk(_mm512_set1_ps(x), _mm512_set1_ps(x)); }
static inline vf v_load(const float* a) { return mk(_mm512_loadu_ps(a), _mm512_loadu_ps(a + 16)); }
static inline void v_store(float* a, vf x)
{
    _mm512_storeu_ps(a, x.lo);
    _mm512_storeu_ps(a + 16, x.hi);
}

#define POLAR3_BINARY(name, op)                                                                    \
    static inline vf name(vf a, vf b) { return mk(op(a.lo, b.lo), op(a.hi, b.hi)); }
POLAR3_BINARY(v_add, _mm512_add_ps)
POLAR3_BINARY(v_sub, _mm512_sub_ps)
POLAR3_BINARY(v_mul, _mm512_mul_ps)
POLAR3_BINARY(v_div, _mm512_div_ps)
POLAR3_BINARY(v_max, _mm512_max_ps)

#define POLAR3_COMPARE(name, pred)                                                                 \
    static inline vm name(vf a, vf b)                                                              \
    {                                                                                              \
        return (vm)_mm512_cmp_ps_mask(a.lo, b.lo, pred) |                                          \
               ((vm)_mm512_cmp_ps_mask(a.hi, b.hi, pred) << 16);                                   \
    }
POLAR3_COMPARE(v_lt, _CMP_LT_OQ)
POLAR3_COMPARE(v_gt, _CMP_GT_OQ)
POLAR3_COMPARE(v_ge, _CMP_GE_OQ)
POLAR3_COMPARE(v_eq, _CMP_EQ_OQ)
POLAR3_COMPARE(v_ne, _CMP_NEQ_UQ)

static inline __m512 neg1(__m512 a)
{
    return _mm512_castsi512_ps(
        _mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32((int)0x80000000u)));
}
static inline vf v_sqrt(vf a) { return mk(_mm512_sqrt_ps(a.lo), _mm512_sqrt_ps(a.hi)); }
static inline vf v_abs(vf a) { return mk(_mm512_abs_ps(a.lo), _mm512_abs_ps(a.hi)); }
static inline vf v_neg(vf a) { return mk(neg1(a.lo), neg1(a.hi)); }
static inline vf v_sel(vm m, vf a, vf b)
{
    return mk(_mm512_mask_blend_ps((__mmask16)m, b.lo, a.lo),
              _mm512_mask_blend_ps((__mmask16)(m >> 16), b.hi, a.hi));
}
static inline vm m_or(vm a, vm b) { return a | b; }
static inline vm m_and(vm a, vm b) { return a & b; }
static inline vm m_andnot(vm a, vm b) { return a & ~b; }
static inline vm m_not(vm a) { return ~a & 0xFFFFFFFFu; }
static inline vm m_none(void) { return 0; }
static inline uint64_t m_bits(vm m) { return m; }
static inline int m_any(vm m) { return m != 0; }
static inline int m_all(vm m) { return m == 0xFFFFFFFFu; }

#include "polar3_simd_kernel.h"

void sinew_polar3_batch_avx512(const float* F_soa, float* R_soa, size_t stride, uint32_t begin,
                               uint32_t end)
{
    polar3_simd_loop(F_soa, R_soa, stride, begin, end);
}
