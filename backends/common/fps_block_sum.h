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

/* The tree of one block over v[0 .. FPS_SUM_BLOCK - 1] (overwritten); returns the share. */
static inline double fps_block_tree_sum(double* v)
{
    for (uint32_t w = 0; w < FPS_SUM_BLOCK / FPS_SUM_WARP; ++w)
        for (uint32_t s = FPS_SUM_WARP / 2u; s > 0u; s >>= 1u)
            for (uint32_t l = 0; l < s; ++l) v[FPS_SUM_WARP * w + l] += v[FPS_SUM_WARP * w + l + s];
    for (uint32_t s = FPS_SUM_BLOCK / FPS_SUM_WARP / 2u; s > 0u; s >>= 1u)
        for (uint32_t w = 0; w < s; ++w) v[FPS_SUM_WARP * w] += v[FPS_SUM_WARP * (w + s)];
    return v[0];
}

/* The three coordinates' terms of one block, terms[c * FPS_SUM_BLOCK + row - first]: zeroed
 * by fps_block_terms_clear, filled by the caller, summed into share[3] by fps_block_terms_sum. */
static inline void fps_block_terms_clear(double* terms)
{
    for (uint32_t k = 0; k < 3u * FPS_SUM_BLOCK; ++k) terms[k] = 0.0;
}

static inline void fps_block_terms_sum(double* terms, double share[3])
{
    for (uint32_t c = 0; c < 3u; ++c) share[c] = fps_block_tree_sum(terms + c * FPS_SUM_BLOCK);
}

#endif
