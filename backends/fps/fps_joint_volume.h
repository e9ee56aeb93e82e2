/* The joints' volume on fps's reduced system (fps_joint_volume.c).
 * SPDX-License-Identifier: MIT */
#ifndef SINEW_FPS_JOINT_VOLUME_H
#define SINEW_FPS_JOINT_VOLUME_H

#include "fps_internal.h"
#include "ps_joint_volume.h"

/* The pull's weight relative to the vertex's diagonal (ps's global_weight). */
#define FPS_JV_WEIGHT 0.5

typedef struct fps_jv {
    ps_joint_volume* jv;
    double* xm;  /* 3N: the iterate in the model's numbering */
    double* t;   /* 3N: the targets' moves from it (skin rows) */
    double* w;   /* ns: each free row's weight (0 for a base vertex) */
    const uint32_t* inv; /* model index -> new index */
    uint32_t ns, N, n;
    double gain;
} fps_jv;

/* NULL in *out (and SINEW_OK) when the model has no joint region. perm: new index -> model
 * index, inv its inverse; diag0: the reduced matrix's diagonal. */
sinew_result fps_jv_create(const sinew_host_api* host, const ps_model* m, const fps_params* p,
                           const uint32_t* perm, const uint32_t* inv, uint32_t ns, uint32_t N,
                           const double* diag0, fps_jv** out);
void fps_jv_destroy(const sinew_host_api* host, fps_jv* f);
/* Whether the iterate x (new numbering, columns of N) leaves a region short of volume. Reads
 * the skin rows only. */
int fps_jv_judge(fps_jv* f, const double* x, const float* skinning);
/* Adds w_i (t_i - x_i) to each free row of b (columns of ns), for the iterate x that
 * fps_jv_judge last read. */
void fps_jv_rhs(fps_jv* f, double* b);

#endif
