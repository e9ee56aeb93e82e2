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

/* pi in single precision, the dihedral angle of a flat pair. */
#define PBD_PI 3.14159265358979f

static inline float pbd_dot(const float a[3], const float b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* The bending term. The paper's cloth carries bending constraints (Fig. 1, Sec. 6, Table 1)
 * but it prints no formula for them; Sec. 3 defers to Mueller et al. 2006 (its [MHHR06]),
 * whose Sec. 4.2 writes C = acos(n1 . n2) - phi0. That angle is unsigned (a crease folded the
 * other way satisfies it) and its derivative, -1 / sqrt(1 - (n1 . n2)^2) times that of n1 . n2,
 * is 0 / 0 at a flat pair. Here instead the signed dihedral angle of the skin triangles
 * (p0, p1, p2) and (p1, p0, p3) at their shared edge e = p1 - p0, through atan2: pi when they
 * are flat, less at a ridge of a surface wound with outward normals, more in a crease. Its
 * gradient, derived for this form (the hinge of Bridson et al. 2003), with nA = e x (p2 - p0),
 * nB = (p3 - p0) x e and s2, s3 where p2, p3 lie along e as fractions of |e|:
 *   grad p2 = |e| nA / |nA|^2,  grad p3 = |e| nB / |nB|^2,
 *   grad p1 = -(s2 grad p2 + s3 grad p3),  grad p0 = -(grad p1 + grad p2 + grad p3).
 * g may be NULL; a degenerate pair (an edge or a triangle of no extent) has zero gradients. */
static inline float pbd_dihedral(const float* x, size_t ld, const uint32_t p[4], float g[4][3])
{
    float e[3], a[3], b[3];
    for (int c = 0; c < 3; ++c) {
        float o = x[(size_t)c * ld + p[0]];
        e[c] = x[(size_t)c * ld + p[1]] - o;
        a[c] = x[(size_t)c * ld + p[2]] - o;
        b[c] = x[(size_t)c * ld + p[3]] - o;
    }
    float na[3], nb[3], m[3];
    pbd_cross(e, a, na);
    pbd_cross(b, e, nb);
    pbd_cross(na, nb, m);
    float e2 = pbd_dot(e, e), len = sqrtf(e2);
    float phi = PBD_PI - atan2f(pbd_dot(m, e), len * pbd_dot(na, nb));
    if (!g) return phi;
    float a2 = pbd_dot(na, na), b2 = pbd_dot(nb, nb);
    if (!(a2 > 0.0f && b2 > 0.0f && e2 > 0.0f)) {
        for (int k = 0; k < 4; ++k) g[k][0] = g[k][1] = g[k][2] = 0.0f;
        return phi;
    }
    float fa = len / a2, fb = len / b2, sa = pbd_dot(a, e) / e2, sb = pbd_dot(b, e) / e2;
    for (int c = 0; c < 3; ++c) {
        g[2][c] = fa * na[c];
        g[3][c] = fb * nb[c];
        g[1][c] = -(sa * g[2][c] + sb * g[3][c]);
        g[0][c] = -(g[1][c] + g[2][c] + g[3][c]);
    }
    return phi;
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

/* Past this turn from its rest angle a pair is crumpled, not bent (the tissue folded the skin
 * over): its projection is let go (pbd_bending_fade). */
#define PBD_BEND_LET_GO (0.75f * PBD_PI)

/* *C = phi - phi0 taken the short way round the circle and scaled by a factor that falls
 * linearly from 1 at half of PBD_BEND_LET_GO to 0 at it; false past it (the pair is let go).
 * The projection so stays continuous in the angle and never meets the jump of the short way
 * round at pi, where a correction flips direction between iterations and feeds the velocities
 * (on the male's elbow that blew the mesh up); a plain cut-off left pairs cycling around it. */
static inline bool pbd_bending_fade(float* C)
{
    float c = *C;
    if (c > PBD_PI) c -= 2.0f * PBD_PI;
    else if (c < -PBD_PI) c += 2.0f * PBD_PI;
    float turn = fabsf(c);
    if (!(turn < PBD_BEND_LET_GO)) return false;
    float fade = (PBD_BEND_LET_GO - turn) / (0.5f * PBD_BEND_LET_GO);
    *C = fade < 1.0f ? fade * c : c;
    return true;
}

/* The bending term as C = phi - phi0 (pbd_bending_fade) with the gradients of pbd_dihedral. */
static inline void pbd_project_bending(const pbd_solve* s, uint32_t i)
{
    const pbd_constraints* c = s->c;
    uint32_t p[4] = {c->bending_p[0][i], c->bending_p[1][i], c->bending_p[2][i],
                     c->bending_p[3][i]};
    float g[4][3];
    float C = pbd_dihedral(s->x, s->N, p, g) - c->bending_rest[i];
    if (!pbd_bending_fade(&C)) return;
    float denom = 0.0f;
    for (int k = 0; k < 4; ++k) denom += c->bending_w[k][i] * pbd_dot(g[k], g[k]);
    if (!(denom > 0.0f)) return; /* a degenerate pair: no gradient */
    float dl;
    if (s->xpbd) {
        float at = c->bending_alpha[i];
        dl = (-C - at * s->bending_lambda[i]) / (denom + at);
        s->bending_lambda[i] += dl;
    } else {
        dl = -s->bending_k * C / denom;
    }
    for (int k = 0; k < 4; ++k) {
        float f = c->bending_w[k][i] * dl;
        for (int q = 0; q < 3; ++q) s->x[(size_t)q * s->N + p[k]] += f * g[k][q];
    }
}

#endif
