/* Dual quaternion skinning kernels, one per instruction set (dqs_<isa>.c).
 * SPDX-License-Identifier: MIT
 *
 * For every vertex v in [begin, end) (Kavan et al. 2008, "Geometric skinning with approximate
 * dual quaternion blending", Sec. 3 and Algorithm 1):
 * - blend b = sum_k s_k w_k q_{j_k}, where s_k = -1 when the real part of q_{j_k} has a
 *   negative dot product with the real part of the first influence's q (antipodality: q and
 *   -q are the same transform, and blending across hemispheres takes the long way round);
 * - the normalisation by the norm of the real part, (r, e) = (b_r, b_e) / |b_r|, is folded
 *   into s = 2 / |b_r|^2: with b_r = (v, w) and b_e = (e_v, e_w), r rotates by the 3x3 matrix
 *   R = I + s (w [v]x + [v]x^2) ([v]x: the cross-product matrix of v), built once per vertex
 *   and applied to both the position and the normal, and the translation is
 *   t = s (w e_v - e_w v + v x e_v);
 * - p' = R p + t and n' = normalise(R n).
 * The dot products that choose the signs are computed in the same order and without FMA on
 * every path, so every path makes the same sign choice even when a dot product is within
 * rounding of zero. The rest is free to differ in rounding: the SIMD kernels work on batches
 * of vertices in structure-of-arrays form, use FMA, and replace 1 / |b_r|^2 and the normal's
 * 1 / sqrt by a hardware estimate refined by one Newton step; they agree with the scalar
 * kernel to a few units in the last place.
 * An influence of weight zero leaves the blend as it is, bit for bit (adding a zero product
 * could turn a -0 into +0), and the SIMD kernels skip one that no vertex of their batch has:
 * rows are padded with zero weights, and most vertices of a mesh have fewer influences than the
 * width. A vertex's result thus never depends on which batch it falls in. */
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
