/* The PCG's inner products (fast projective skinning 2019, Alg. 2) in one fixed order, shared
 * by `fps` on the CPU and `fps-cuda` on the device so that both give the same bits and two runs
 * of either give the same bits.
 *
 * The rows are cut into blocks of FPS_SUM_BLOCK (a CUDA thread block's rows). A block's share
 * is the tree of a warp-shuffle reduction: within each warp of 32 rows, row l adds row l + s
 * for s = 16, 8, 4, 2, 1; then the eight warp sums likewise for s = 4, 2, 1. Rows past the
 * end count as 0. The inner product is the blocks' shares added in block order from 0.
 * SPDX-License-Identifier: MIT */
#ifndef SINEW_FPS_BLOCK_SUM_H
#define SINEW_FPS_BLOCK_SUM_H

#include <stdint.h>

#define FPS_SUM_BLOCK 256u
#define FPS_SUM_WARP 32u

/* The tree of one warp's 32 values: halves added pairwise, s = 16, 8, 4, 2, 1. */
static inline double fps_warp_tree_sum(const double* v)
{
    double a[16];
    for (uint32_t l = 0; l < 16u; ++l) a[l] = v[l] + v[l + 16u];
    for (uint32_t l = 0; l < 8u; ++l) a[l] += a[l + 8u];
    for (uint32_t l = 0; l < 4u; ++l) a[l] += a[l + 4u];
    a[0] += a[2];
    a[1] += a[3];
    return a[0] + a[1];
}

/* The tree of one block over v[0 .. FPS_SUM_BLOCK - 1]; returns the share. */
static inline double fps_block_tree_sum(const double* v)
{
    double w[FPS_SUM_BLOCK / FPS_SUM_WARP];
    for (uint32_t k = 0; k < FPS_SUM_BLOCK / FPS_SUM_WARP; ++k)
        w[k] = fps_warp_tree_sum(v + FPS_SUM_WARP * k);
    for (uint32_t s = FPS_SUM_BLOCK / FPS_SUM_WARP / 2u; s > 0u; s >>= 1u)
        for (uint32_t k = 0; k < s; ++k) w[k] += w[k + s];
    return w[0];
}

/* The three coordinates' terms of one block, terms[c * FPS_SUM_BLOCK + row - first], `rows` of
 * them filled by the caller: fps_block_terms_sum pads the rest with 0 and sums each
 * coordinate into share[c]. */
static inline void fps_block_terms_sum(double* terms, uint32_t rows, double share[3])
{
    for (uint32_t c = 0; c < 3u; ++c) {
        for (uint32_t i = rows; i < FPS_SUM_BLOCK; ++i) terms[c * FPS_SUM_BLOCK + i] = 0.0;
        share[c] = fps_block_tree_sum(terms + c * FPS_SUM_BLOCK);
    }
}

#endif
