/* Polar decomposition of many 3x3 matrices at once, for the local step of projective dynamics.
 * SPDX-License-Identifier: MIT
 *
 * Layout (structure of arrays): component k = 3 * row + col of matrix i is at
 * F_soa[k * stride + i] (and the same for R_soa), so each of the nine components is a
 * contiguous float array of `stride` entries; matrices [begin, end) are processed, which lets
 * job ranges of one batch run in parallel. No alignment is required. R_soa may be F_soa itself
 * (in place); any other overlap is refused by sinew_polar3_batch.
 *
 * Each R is exactly what sinew_polar3 (polar3.h) returns for that matrix, bit for bit, on
 * every instruction set: the SIMD kernels repeat its operations lane by lane without FMA (see
 * polar3_simd_kernel.h). Finite input gives finite rotations; a matrix with NaN or infinite
 * entries gets a non-finite R and does not affect the others (the iteration is bounded).
 *
 * Kernels: scalar everywhere; AVX2 (16 matrices per step, in two ymm registers) and AVX-512F
 * (32, in two zmm registers) on x86-64 built with GCC or Clang (SINEW_SKIN_X86), each only
 * after a run-time CPU check (cpu_features.h). There is no SSE kernel: SINEW_SIMD_SSE41 runs
 * the scalar one. Matrices that need the SVD are queued and decomposed a full vector at a
 * time, so a few flat or inverted elements cost little. The objects live in the
 * sinew_math_simd object library (backends/common/CMakeLists.txt), which the runtime links in.
 * sinew-polar-microbench measures the kernels on stretches like those of projective dynamics,
 * with and without flat or inverted elements. */
#ifndef SINEW_COMMON_POLAR3_BATCH_H
#define SINEW_COMMON_POLAR3_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include <sinew/sinew_plugin.h>

#include "cpu_features.h"

/* A kernel: R = polar rotation of F for matrices [begin, end), no validation. */
typedef void (*sinew_polar3_batch_fn)(const float* F_soa, float* R_soa, size_t stride,
                                      uint32_t begin, uint32_t end);

/* The kernel for `simd` (SINEW_SIMD_AUTO: the widest this CPU runs), or NULL when that
 * instruction set is not built in or this CPU lacks it. Pick it once (at prepare time) and
 * call it per job range: it is reentrant and keeps no state. */
sinew_polar3_batch_fn sinew_polar3_batch_kernel(sinew_simd simd);

/* The instruction set sinew_polar3_batch_kernel(simd) runs (AUTO resolved, SSE41 as scalar),
 * for logs and benchmarks; SINEW_SIMD_COUNT when it returns NULL. */
sinew_simd sinew_polar3_batch_resolve(sinew_simd simd);

/* Validates, then runs the kernel for `simd` on [begin, end). Errors, each logged once through
 * `host` (which may be NULL: no log):
 *   SINEW_ERROR_INVALID_ARGUMENT  F_soa or R_soa NULL, a bad simd value, begin > end, or F
 *                                 and R overlapping without being the same array;
 *   SINEW_ERROR_OUTPUT_BINDING    end > stride (a component array would run into the next),
 *                                 or 9 * stride overflowing;
 *   SINEW_ERROR_UNSUPPORTED       simd not built in or not run by this CPU.
 * begin == end is valid and does nothing. */
sinew_result sinew_polar3_batch(const sinew_host_api* host, sinew_simd simd, const float* F_soa,
                                float* R_soa, size_t stride, uint32_t begin, uint32_t end);

/* The kernels themselves (dispatch targets; prefer sinew_polar3_batch_kernel). */
void sinew_polar3_batch_scalar(const float* F_soa, float* R_soa, size_t stride, uint32_t begin,
                               uint32_t end);
#if defined(SINEW_SKIN_X86)
void sinew_polar3_batch_avx2(const float* F_soa, float* R_soa, size_t stride, uint32_t begin,
                             uint32_t end);
void sinew_polar3_batch_avx512(const float* F_soa, float* R_soa, size_t stride, uint32_t begin,
                               uint32_t end);
#endif

#endif
