/* The volume constraint of projective dynamics (Bouaziz et al. 2014, "Projective Dynamics:
 * Fusing Constraint Projections for Fast Simulation", Sec. 5, volume preservation): the
 * deformation gradient F is projected onto the matrices whose determinant lies in
 * [lo, hi]. The set depends on F's singular values only, so by von Neumann's trace inequality
 * the closest matrix keeps F's singular vectors and moves the singular values s to the closest
 * s' with s'_0 s'_1 s'_2 in [lo, hi]: F itself when det F is inside, else the point of the
 * surface s'_0 s'_1 s'_2 = lo (or hi) closest to s, found by Gauss-Newton steps on the
 * linearised constraint (Bouaziz et al. use the same iteration).
 *
 * The tissue's local step (projective skinning 2018 Sec. 4.1, one rotation per prism as in
 * Sec. 6) then blends this projection with the strain's rotation R: a prism's energy
 * w_s |AX - R|^2 + w_v |AX - P|^2 equals (w_s + w_v) |AX - T|^2 plus a term without X, with
 * T = keep R + (1 - keep) P, keep = w_s / (w_s + w_v); the system matrix holds w_s + w_v.
 *
 * Matrices are float[9], row-major. Plain C11 that also compiles as CUDA C++ (SINEW_HD), so
 * `ps`, `fps` and `fps-cuda` run the same operations. SPDX-License-Identifier: MIT */
#ifndef SINEW_COMMON_VOLUME3_H
#define SINEW_COMMON_VOLUME3_H

#include "sinew_hd.h"
#include "svd3.h"

/* Gauss-Newton steps toward the constraint surface: the error falls quadratically, and 8 steps
 * bring a determinant from 0.5 to within float precision of 0.95. */
#define SINEW_VOLUME_STEPS 8
/* A prism flattened or inverted below this determinant is left to the strain term: pushing
 * its singular values through zero to the band flips it over. */
#define SINEW_VOLUME_MIN_DET 0.25f

static inline SINEW_HD float sinew_det3(const float F[9])
{
    return F[0] * (F[4] * F[8] - F[5] * F[7]) - F[1] * (F[3] * F[8] - F[5] * F[6]) +
           F[2] * (F[3] * F[7] - F[4] * F[6]);
}

/* The singular values s (signed, as sinew_svd3 gives them) moved to the closest point of
 * s_0 s_1 s_2 = c. */
static inline SINEW_HD void sinew_volume_values(const float s[3], float c, float out[3])
{
    float d[3] = {0.0f, 0.0f, 0.0f};
    for (int it = 0; it < SINEW_VOLUME_STEPS; ++it) {
        float p[3] = {s[0] + d[0], s[1] + d[1], s[2] + d[2]};
        float g[3] = {p[1] * p[2], p[0] * p[2], p[0] * p[1]};
        float gg = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
        if (!(gg > 1e-20f)) break; /* at a singular point of the surface: stop */
        /* the step to the linearised constraint C(p) + g . (s + d' - p) = 0 along g */
        float f = (g[0] * d[0] + g[1] * d[1] + g[2] * d[2] - (p[0] * p[1] * p[2] - c)) / gg;
        for (int k = 0; k < 3; ++k) d[k] = f * g[k];
    }
    for (int k = 0; k < 3; ++k) out[k] = s[k] + d[k];
}

/* P = the closest matrix to F whose determinant lies in [lo, hi] (lo <= hi); F itself where
 * det F is at most SINEW_VOLUME_MIN_DET. */
static inline SINEW_HD void sinew_volume_project(const float F[9], float lo, float hi, float P[9])
{
    float det = sinew_det3(F);
    if ((det >= lo && det <= hi) || !(det > SINEW_VOLUME_MIN_DET)) {
        for (int k = 0; k < 9; ++k) P[k] = F[k];
        return;
    }
    float U[9], S[3], V[9], T[3];
    sinew_svd3(F, U, S, V);
    sinew_volume_values(S, det < lo ? lo : hi, T);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            P[3 * r + c] = (U[3 * r] * T[0] * V[3 * c] + U[3 * r + 1] * T[1] * V[3 * c + 1]) +
                           U[3 * r + 2] * T[2] * V[3 * c + 2];
}

/* The local step's target with the volume term: T = keep R + (1 - keep) P(F) (top of file).
 * keep = 1 leaves R. */
static inline SINEW_HD void sinew_volume_target(const float F[9], const float R[9], float keep,
                                                float lo, float hi, float T[9])
{
    if (!(keep < 1.0f)) {
        for (int k = 0; k < 9; ++k) T[k] = R[k];
        return;
    }
    float P[9];
    sinew_volume_project(F, lo, hi, P);
    for (int k = 0; k < 9; ++k) T[k] = keep * R[k] + (1.0f - keep) * P[k];
}

#endif
