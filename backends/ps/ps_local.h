/* The arithmetic of the local step of the `ps` backend (projective skinning Sec. 4.1 and 6),
 * one file per instruction set, each compiled with its own flags and chosen at run time; this
 * header is all they include. SPDX-License-Identifier: MIT
 *
 * Prisms are processed in blocks of PS_LOCAL_BLOCK; every per-prism array is structure of
 * arrays with `stride` entries per component (the prism count rounded up to a whole block, the
 * padding prisms having G = 0 and vertex 0), so a block is always whole. Every kernel performs
 * the same float operations in the same order (no fused multiply-add), so all return the same
 * bits. */
#ifndef SINEW_PS_LOCAL_H
#define SINEW_PS_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#define PS_LOCAL_BLOCK 16u

typedef struct ps_local_job {
    const double* x;      /* tissue positions, N x 3 columns (x, then y, then z) */
    size_t N;
    const int32_t* pv;    /* 6 x stride: the prism's vertices a, b, c, a', b', c' */
    const float* G;       /* 18 x stride: G_p[r][k] at (6 r + k) * stride */
    const float* inv_w;   /* stride: 1 / (sum of the prism's tet weights), 0 for none */
    float* F;             /* 9 x stride: F[3 row + col], then R in place */
    float* contrib;       /* 18 x stride: R_p g_k, component i at (3 k + i) * stride */
    size_t stride;
} ps_local_job;

/* Stage 1, blocks [begin, end): F = (G_p X_p)^T / sum w, with X_p taken relative to the
 * prism's first vertex (G's columns sum to zero) and rounded to float. */
typedef void (*ps_local_gradient_fn)(const ps_local_job* job, uint32_t begin, uint32_t end);
/* Stage 3, blocks [begin, end): with R in F, contrib = R g_k for the prism's 6 slots. */
typedef void (*ps_local_project_fn)(const ps_local_job* job, uint32_t begin, uint32_t end);

void ps_local_gradient_scalar(const ps_local_job* job, uint32_t begin, uint32_t end);
/* With the volume term (volume3.h), blocks [begin, end): R (9 x stride, in place) becomes
 * keep R + (1 - keep) P(F), F the gradients of stage 1 (9 x stride). One code for every
 * instruction set: only prisms outside the band need the SVD. */
void ps_local_volume(const float* F, float* R, size_t stride, float keep, float lo, float hi,
                     uint32_t begin, uint32_t end);
void ps_local_project_scalar(const ps_local_job* job, uint32_t begin, uint32_t end);
#if defined(SINEW_SKIN_X86)
void ps_local_gradient_avx2(const ps_local_job* job, uint32_t begin, uint32_t end);
void ps_local_project_avx2(const ps_local_job* job, uint32_t begin, uint32_t end);
void ps_local_gradient_avx512(const ps_local_job* job, uint32_t begin, uint32_t end);
void ps_local_project_avx512(const ps_local_job* job, uint32_t begin, uint32_t end);
#endif

#endif
