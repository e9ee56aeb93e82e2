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

/* One block's shares built one warp at a time, so that the terms stay in a few hundred bytes:
 * fps_block_acc_row takes the rows' three terms in row order, each warp's tree runs when its
 * 32 rows are in, and fps_block_acc_sum pads the last warp with 0, counts the missing warps as
 * 0 and adds the warps' sums. */
typedef struct fps_block_acc {
    double lane[3][FPS_SUM_WARP / 2u];
    double warp[3][FPS_SUM_BLOCK / FPS_SUM_WARP];
    uint32_t rows;
} fps_block_acc;

static inline void fps_block_acc_init(fps_block_acc* a)
{
    a->rows = 0;
}

/* The warp's tree from its first level on: h[l] holds row l + row l + 16 of the warp. */
static inline double fps_warp_tree_rest(double* h)
{
    for (uint32_t s = FPS_SUM_WARP / 4u; s > 0u; s >>= 1u)
        for (uint32_t l = 0; l < s; ++l) h[l] += h[l + s];
    return h[0];
}

/* Rows 0..15 of a warp are kept, rows 16..31 added to them at once (the tree's first level),
 * so that a warp holds 16 values per coordinate. */
static inline void fps_block_acc_row(fps_block_acc* a, const double term[3])
{
    const uint32_t l = a->rows % FPS_SUM_WARP, w = a->rows / FPS_SUM_WARP;
    const uint32_t gap = FPS_SUM_WARP / 2u;
    if (l < gap)
        for (uint32_t c = 0; c < 3u; ++c) a->lane[c][l] = term[c];
    else
        for (uint32_t c = 0; c < 3u; ++c) a->lane[c][l - gap] += term[c];
    a->rows++;
    if (l == FPS_SUM_WARP - 1u)
        for (uint32_t c = 0; c < 3u; ++c) a->warp[c][w] = fps_warp_tree_rest(a->lane[c]);
}

static inline void fps_block_acc_sum(fps_block_acc* a, double share[3])
{
    const uint32_t warps = FPS_SUM_BLOCK / FPS_SUM_WARP;
    uint32_t full = a->rows / FPS_SUM_WARP, l = a->rows % FPS_SUM_WARP;
    for (uint32_t c = 0; c < 3u; ++c) {
        if (l) { /* the missing rows are 0: added as the device adds them */
            const uint32_t gap = FPS_SUM_WARP / 2u;
            for (uint32_t i = l < gap ? 0u : l - gap; i < gap; ++i)
                a->lane[c][i] = (i < l ? a->lane[c][i] : 0.0) + 0.0;
            a->warp[c][full] = fps_warp_tree_rest(a->lane[c]);
        }
        for (uint32_t w = full + (l ? 1u : 0u); w < warps; ++w) a->warp[c][w] = 0.0;
        for (uint32_t s = warps / 2u; s > 0u; s >>= 1u)
            for (uint32_t w = 0; w < s; ++w) a->warp[c][w] += a->warp[c][w + s];
        share[c] = a->warp[c][0];
    }
}

#endif
