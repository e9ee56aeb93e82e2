/* Per-vertex evaluation of MLS upsampling (fast-projective-skinning-2019 Sec. 5, eq. 8 and the
 * normal formula after it), shared by the CPU code (sinew_mls.c) and CUDA kernels.
 * SPDX-License-Identifier: MIT
 *
 * A render vertex j has SINEW_MLS_K entries: simulation vertex indices i and baked weights
 * N_ij (positions) and Ñ_ij (normals). Positions are the weighted sum of the deformed
 * simulation positions (eq. 8: the rest-pose term vanishes by partition of unity and linear
 * reproduction); normals the weighted sum of the deformed simulation normals, normalised.
 * The sums run in index order 0..K-1 with separate multiply and add, so a compiler that does
 * not contract a*b+c into an FMA (-ffp-contract=off, nvcc -fmad=false) gives the same bits on
 * the host and the device. Only common C11/C++ and CUDA math (sqrtf) is used. */
#ifndef SINEW_COMMON_MLS_EVAL_H
#define SINEW_COMMON_MLS_EVAL_H

#include <math.h>
#include <stdint.h>

#include "sinew_hd.h"

/* Neighbours per render vertex (the paper found 20 sufficient). Fixed, so that every vertex's
 * entries have the same size: one record per GPU thread, whole cache lines on the CPU. */
#define SINEW_MLS_K 20u

/* out = sum_k w[k] * sim[3 * idx[k] + 0..2]: an upsampled position (eq. 8). */
static inline SINEW_HD void sinew_mls_eval_position(const uint32_t* idx, const float* w,
                                                    const float* sim, float* out)
{
    float x = 0.0f, y = 0.0f, z = 0.0f;
    for (uint32_t k = 0; k < SINEW_MLS_K; ++k) {
        const float* p = sim + 3u * idx[k];
        const float wk = w[k];
        x += wk * p[0];
        y += wk * p[1];
        z += wk * p[2];
    }
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

/* Scales n to unit length; a sum that vanishes (opposite normals cancelling in a degenerate
 * fold) gives `fallback` rather than a division by zero. */
static inline SINEW_HD void sinew_mls_normalise(const float* n, const float* fallback, float* out)
{
    const float len2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
    if (len2 > 1e-30f) {
        const float inv = 1.0f / sqrtf(len2);
        out[0] = n[0] * inv;
        out[1] = n[1] * inv;
        out[2] = n[2] * inv;
    } else {
        out[0] = fallback[0];
        out[1] = fallback[1];
        out[2] = fallback[2];
    }
}

/* out = normalize(sum_k w[k] * normals[3 * idx[k] + 0..2]), the linear-MLS normal. */
static inline SINEW_HD void sinew_mls_eval_normal(const uint32_t* idx, const float* w,
                                                  const float* normals, float* out)
{
    float n[3];
    sinew_mls_eval_position(idx, w, normals, n);
    sinew_mls_normalise(n, normals + 3u * idx[0], out);
}

/* Position and normal of one render vertex in one pass over its entries (the indices are
 * read once): the same sums, in the same order, as the two functions above. */
static inline SINEW_HD void sinew_mls_eval_vertex(const uint32_t* idx, const float* wp,
                                                  const float* wn, const float* sim,
                                                  const float* normals, float* out_position,
                                                  float* out_normal)
{
    float x = 0.0f, y = 0.0f, z = 0.0f, nx = 0.0f, ny = 0.0f, nz = 0.0f;
    for (uint32_t k = 0; k < SINEW_MLS_K; ++k) {
        const uint32_t i = 3u * idx[k];
        const float a = wp[k], b = wn[k];
        x += a * sim[i];
        y += a * sim[i + 1u];
        z += a * sim[i + 2u];
        nx += b * normals[i];
        ny += b * normals[i + 1u];
        nz += b * normals[i + 2u];
    }
    out_position[0] = x;
    out_position[1] = y;
    out_position[2] = z;
    const float n[3] = {nx, ny, nz};
    sinew_mls_normalise(n, normals + 3u * idx[0], out_normal);
}

#endif
