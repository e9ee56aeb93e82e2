/* The constraint functions of pbd (Sec. 3.1) with the corrected formulas of NOTES.md, on
 * positions stored as columns (x of every particle, then y, then z; ld apart), and the
 * projection of one constraint. Shared by the rest data (pbd_constraints.c) and the
 * projections (pbd_project.c and its SIMD twin), so that the rest shape satisfies every
 * constraint exactly. SPDX-License-Identifier: MIT */
#ifndef SINEW_PBD_KERNELS_H
#define SINEW_PBD_KERNELS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "pbd_internal.h"

/* |p_a - p_b| and the difference itself (Sec. 3.1.1, eq. 2 without d). */
static inline float pbd_edge_length(const float* x, size_t ld, uint32_t a, uint32_t b, float d[3])
{
    for (int c = 0; c < 3; ++c) d[c] = x[(size_t)c * ld + a] - x[(size_t)c * ld + b];
    return sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

static inline void pbd_cross(const float a[3], const float b[3], float out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* Six times the signed volume, (p21 x p31) . p41, of tet p (Sec. 3.1.2, eq. 5 without V0)
 * and six times its gradients: p31 x p41 for p2, p41 x p21 for p3, p21 x p31 for p4, and
 * minus their sum for p1 (NOTES.md; the paper's eqs. 6-9 and 11-13 are wrong). The factor 6
 * cancels from the projection dp_i = -w_i grad_i C / sum_j w_j |grad_j|^2, so the volume
 * constraint is solved as 6 V - 6 V0 (with 36 times the compliance). g may be NULL. */
static inline float pbd_tet_volume6(const float* x, size_t ld, const uint32_t p[4], float g[4][3])
{
    float e[3][3];
    for (int k = 0; k < 3; ++k)
        for (int c = 0; c < 3; ++c)
            e[k][c] = x[(size_t)c * ld + p[k + 1]] - x[(size_t)c * ld + p[0]];
    float g4[3];
    pbd_cross(e[0], e[1], g4);
    float v = g4[0] * e[2][0] + g4[1] * e[2][1] + g4[2] * e[2][2];
    if (!g) return v;
    pbd_cross(e[1], e[2], g[1]);
    pbd_cross(e[2], e[0], g[2]);
    for (int c = 0; c < 3; ++c) {
        g[3][c] = g4[c];
        g[0][c] = -(g[1][c] + g[2][c] + g[3][c]);
    }
    return v;
}

/* ---- the projections of one constraint (Sec. 3.1) ----
 * A constraint C with gradients grad_i moves its particles by dp_i = w_i grad_i dl. XPBD
 * (Macklin, Mueller and Chentanez 2016, eq. 18) with alpha~ = alpha / h^2 and the multiplier
 * lambda accumulated over the step: dl = (-C - alpha~ lambda) / (sum_i w_i |grad_i|^2 +
 * alpha~), lambda += dl. Plain PBD (Mueller et al. 2006): dl = -k C / sum_i w_i |grad_i|^2 with
 * the per-iteration stiffness k. The SIMD kernels repeat these operations in this order. */

/* Sec. 3.1.1: C = |p1 - p2| - d, grad p1 = n = (p1 - p2) / |p1 - p2|, grad p2 = -n, so
 * sum_i w_i |grad_i|^2 = w1 + w2; dl / |p1 - p2| is folded into one division. */
static inline void pbd_project_stretch(const pbd_solve* s, uint32_t i)
{
    const pbd_constraints* c = s->c;
    uint32_t a = c->stretch_a[i], b = c->stretch_b[i];
    float wa = c->stretch_w[0][i], wb = c->stretch_w[1][i];
    float d[3];
    float len = pbd_edge_length(s->x, s->N, a, b, d);
    if (!(len > 0.0f)) return; /* no direction: nothing to project */
    float C = len - c->stretch_rest[i], f;
    if (s->xpbd) {
        float at = c->stretch_alpha[i];
        f = (-C - at * s->stretch_lambda[i]) / ((wa + wb + at) * len);
        s->stretch_lambda[i] += f * len;
    } else {
        f = -s->stretch_k * C / ((wa + wb) * len);
    }
    for (int q = 0; q < 3; ++q) {
        s->x[(size_t)q * s->N + a] += wa * f * d[q];
        s->x[(size_t)q * s->N + b] -= wb * f * d[q];
    }
}

/* Sec. 3.1.2 as 6 V - 6 V0 with the gradients of pbd_tet_volume6. */
static inline void pbd_project_volume(const pbd_solve* s, uint32_t i)
{
    const pbd_constraints* c = s->c;
    uint32_t p[4] = {c->volume_p[0][i], c->volume_p[1][i], c->volume_p[2][i], c->volume_p[3][i]};
    float g[4][3];
    float C = pbd_tet_volume6(s->x, s->N, p, g) - c->volume_rest[i];
    float denom = 0.0f;
    for (int k = 0; k < 4; ++k)
        denom += c->volume_w[k][i] * (g[k][0] * g[k][0] + g[k][1] * g[k][1] + g[k][2] * g[k][2]);
    if (!(denom > 0.0f)) return; /* collapsed to a point or a line: no gradient */
    float dl;
    if (s->xpbd) {
        float at = c->volume_alpha[i];
        dl = (-C - at * s->volume_lambda[i]) / (denom + at);
        s->volume_lambda[i] += dl;
    } else {
        dl = -s->volume_k * C / denom;
    }
    for (int k = 0; k < 4; ++k) {
        float f = c->volume_w[k][i] * dl;
        for (int q = 0; q < 3; ++q) s->x[(size_t)q * s->N + p[k]] += f * g[k][q];
    }
}

#endif
