/* Dual quaternion skinning kernels, one per instruction set (dqs_<isa>.c).
 * SPDX-License-Identifier: MIT
 *
 * For every vertex v in [begin, end) (Kavan et al. 2008, "Geometric skinning with approximate
 * dual quaternion blending", Sec. 3 and Algorithm 1):
 * - blend b = sum_k s_k w_k q_{j_k}, where s_k = -1 when the real part of q_{j_k} has a
 *   negative dot product with the real part of the first influence's q (antipodality: q and
 *   -q are the same transform, and blending across hemispheres takes the long way round);
 * - normalise by the norm of the real part: (r, e) = (b_r, b_e) / |b_r|;
 * - p' = p + 2 r_v x (r_v x p + r_w p) + t with t = 2 (r_w e_v - e_w r_v + r_v x e_v), and
 *   n' = normalise(n + 2 r_v x (r_v x n + r_w n)).
 * The SIMD kernels perform every operation of the scalar kernel in the same order, without
 * FMA (square roots and divisions included), on batches of vertices in structure-of-arrays
 * form; their results are the scalar ones bit for bit, and in particular every path makes the
 * same sign choice even when a dot product is within rounding of zero. */
#ifndef SINEW_DQS_KERNELS_H
#define SINEW_DQS_KERNELS_H

#include "skin_job.h"

void sinew_dqs_kernel_scalar(const sinew_skin_job* job, uint32_t begin, uint32_t end);
#if defined(SINEW_SKIN_X86)
void sinew_dqs_kernel_sse41(const sinew_skin_job* job, uint32_t begin, uint32_t end);
void sinew_dqs_kernel_avx2(const sinew_skin_job* job, uint32_t begin, uint32_t end);
void sinew_dqs_kernel_avx512(const sinew_skin_job* job, uint32_t begin, uint32_t end);
#endif

#endif
