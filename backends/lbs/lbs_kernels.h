/* Linear blend skinning kernels, one per instruction set (lbs_<isa>.c).
 * SPDX-License-Identifier: MIT
 *
 * Each writes, for every vertex v in [begin, end), p' = M p and n' = normalise(M3 n) with
 * M = sum_k w_k S_{j_k}, the weighted sum of the vertex's skinning matrices. The transforms
 * are the matrices' rows 0-2, row-major, then a zero row (16 floats; the bottom row of the
 * input is ignored: skinning matrices are affine). The SIMD kernels blend the matrices of one
 * vertex in registers (one zmm, two ymm or three xmm), multiply the blend with the point
 * broadcast to each row, and sum the rows of four vertices together so that the results come
 * out as x, y and z vectors of four vertices; they agree with the scalar reference to
 * rounding (FMA, summation order, a refined reciprocal square root). */
#ifndef SINEW_LBS_KERNELS_H
#define SINEW_LBS_KERNELS_H

#include "skin_job.h"

void sinew_lbs_kernel_scalar(const sinew_skin_job* job, uint32_t begin, uint32_t end);
#if defined(SINEW_SKIN_X86)
void sinew_lbs_kernel_sse41(const sinew_skin_job* job, uint32_t begin, uint32_t end);
void sinew_lbs_kernel_avx2(const sinew_skin_job* job, uint32_t begin, uint32_t end);
void sinew_lbs_kernel_avx512(const sinew_skin_job* job, uint32_t begin, uint32_t end);
#endif

#endif
