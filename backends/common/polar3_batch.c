/* Dispatch and validation of the batched polar decomposition, and its scalar kernel.
 * SPDX-License-Identifier: MIT */
#include <sinew/sinew_host.h>

#include "polar3_batch.h"

#include <stdint.h>

#include "polar3.h"

/* The reference: gather one matrix, sinew_polar3, scatter. */
void sinew_polar3_batch_scalar(const float* F_soa, float* R_soa, size_t stride, uint32_t begin,
                               uint32_t end)
{
    for (uint32_t i = begin; i < end; ++i) {
        float F[9], R[9];
        for (int k = 0; k < 9; ++k) F[k] = F_soa[(size_t)k * stride + i];
        sinew_polar3(F, R);
        for (int k = 0; k < 9; ++k) R_soa[(size_t)k * stride + i] = R[k];
    }
}

/* No SSE kernel: four lanes would gain little over scalar on the CPUs that lack AVX2. */
sinew_simd sinew_polar3_batch_resolve(sinew_simd simd)
{
    return sinew_simd_resolve_up_to(simd, SINEW_SIMD_AVX512);
}

sinew_polar3_batch_fn sinew_polar3_batch_kernel(sinew_simd simd)
{
    switch (sinew_polar3_batch_resolve(simd)) {
    case SINEW_SIMD_SCALAR:
        return sinew_polar3_batch_scalar;
#if defined(SINEW_SKIN_X86)
    case SINEW_SIMD_AVX2:
        return sinew_polar3_batch_avx2;
    case SINEW_SIMD_AVX512:
        return sinew_polar3_batch_avx512;
#endif
    default:
        return NULL;
    }
}

sinew_result sinew_polar3_batch(const sinew_host_api* host, sinew_simd simd, const float* F_soa,
                                float* R_soa, size_t stride, uint32_t begin, uint32_t end)
{
    if (!F_soa || !R_soa)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_polar3_batch: %s is NULL", !F_soa ? "F_soa" : "R_soa");
    if ((unsigned)simd > (unsigned)SINEW_SIMD_AUTO || simd == SINEW_SIMD_COUNT)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_polar3_batch: simd value %d is not an instruction set",
                               (int)simd);
    if (begin > end)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_polar3_batch: range begin %u > end %u", begin, end);
    if (end > stride)
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING,
                               "sinew_polar3_batch: end %u exceeds the component stride %zu", end,
                               stride);
    if (stride > SIZE_MAX / (9 * sizeof(float)))
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING,
                               "sinew_polar3_batch: stride %zu overflows 9 component arrays",
                               stride);
    uintptr_t f0 = (uintptr_t)F_soa, r0 = (uintptr_t)R_soa;
    uintptr_t bytes = (uintptr_t)(9 * stride * sizeof(float));
    if (f0 != r0 && f0 < r0 + bytes && r0 < f0 + bytes)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_polar3_batch: F_soa %p and R_soa %p overlap (%zu-float "
                               "stride) without being the same array",
                               (const void*)F_soa, (void*)R_soa, stride);
    sinew_polar3_batch_fn fn = sinew_polar3_batch_kernel(simd);
    if (!fn)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "sinew_polar3_batch: simd '%s' is not built in or not run by "
                               "this CPU",
                               sinew_simd_name(simd));
    fn(F_soa, R_soa, stride, begin, end);
    return SINEW_OK;
}
