/* fps-cuda's global collisions (Komaritzan and Botsch 2019, Sec. 6): what the device runs per
 * PD iteration, and the host half that feeds it. SPDX-License-Identifier: MIT
 *
 * Detection stays on the host, as in the paper ("Collision detection is done on the CPU"):
 * each step the plugin predicts the positions from the state the device copied down after the
 * step before (fps_predict_row, the device's arithmetic), runs fps's fps_collide_update on
 * them and, when the pair set changed, hands fps's A_col to fps_sim_set_collision_matrix (the
 * diagonal into A and J, as fps's PCG does) and the device gets the new pairs, their gather
 * lists, A's new diagonal, J and the off-diagonal part (fpsc_collisions, fps_cuda_device.h).
 *
 * Per PD iteration the device then runs, with the kernels of fps_collide_kernels.h, one thread
 * per pair slot (fpsc_col_pair: the projection, i.e. the collision part of the local step, and
 * the pair's shares of Q_col^T p_col) and, in the right-hand-side phase, the row's sum of those
 * shares (fpsc_col_rhs_row) and the target of its limb capsule contact (fps's capsules; the
 * frames of the step uploaded with fpsc_set_capsule_pose) before fps_rhs_row adds it: exactly
 * fps_collide_rhs's loops. The
 * products add A_col's off-diagonal entries after A's CRS part (fpsc_merge_crs): the order of
 * sinew_ellcrs_row3 followed by sinew_crs_row3_add, which fps's PCG uses, so the merged rows
 * give the same bits, staged in shared memory or not. */
#ifndef SINEW_FPS_CUDA_COLLIDE_H
#define SINEW_FPS_CUDA_COLLIDE_H

#include <stddef.h>
#include <stdint.h>

#include "fps_collide_kernels.h"
#include "sinew_hd.h"
#include "sparse_ellcrs.h"

/* What the collision phases read and write (device pointers on the device, host pointers in
 * the CPU tests). The pair arrays, gather lists and contrib layout are fps_collide.c's. */
typedef struct fpsc_col_view {
    uint32_t n_free;            /* rows of the reduced system */
    uint32_t pairs;             /* this step's pair count (0: no collision term) */
    size_t stride;              /* contrib stride (pair slots, >= pairs) */
    const uint32_t* pair_row;   /* per pair: the row of x of its skin vertex */
    const uint32_t* pair_tri;   /* per pair: its skin triangle */
    const uint32_t* tris;       /* 3 rows of x per skin triangle */
    const double* sign;         /* per triangle: the orientation fixed at rest */
    double weight, margin;      /* absolute, as fps_collide holds them */
    double* contrib;            /* 12 x stride */
    const uint32_t* gather_ptr; /* n_free + 1 */
    const uint32_t* gather;
    double* extra;              /* n_free x 3 (ld n_free): Q_col^T p_col */
    /* fps's limb capsules (caps 0: none; fps_collide_data): this step's contact count, per row
     * the bone whose capsule holds it out (FPS_COLLIDE_NONE: none), the bones' rest tables and
     * this step's frames */
    uint32_t caps;
    const uint32_t* cap_of_row; /* n_free */
    const double* cap_frame;    /* FPS_CAP_FRAME per bone */
    const double* cap_radii;    /* FPS_CAP_SLICES x FPS_CAP_SECTORS per bone */
    const double* cap_pose;     /* 9 per bone */
} fpsc_col_view;

/* Pair p's projection and shares of the right-hand side at positions x (fps_collide_rhs's
 * first loop). */
static inline SINEW_HD void fpsc_col_pair(const fpsc_col_view* C, const double* x, size_t ldx,
                                          uint32_t p)
{
    const uint32_t t = C->pair_tri[p];
    (void)fps_collide_pair_rhs(x, ldx, C->pair_row[p], C->tris + 3u * (size_t)t, C->sign[t],
                               C->weight, C->margin, C->n_free, p, C->stride, C->contrib);
}

/* Row s of Q_col^T p_col into extra (fps_collide_rhs's second loop, 0 without pairs), then
 * w p of the row's capsule contact at positions x (its last loop); returns extra for
 * fps_rhs_row, or NULL without pairs and contacts (fps passes NULL then, and nothing is
 * written). */
static inline SINEW_HD const double* fpsc_col_rhs_row(const fpsc_col_view* C, const double* x,
                                                      size_t ldx, uint32_t s)
{
    if (C->pairs == 0 && C->caps == 0) return 0;
    if (C->pairs)
        fps_collide_rhs_row(s, C->gather_ptr, C->gather, C->contrib, C->stride, C->extra,
                            C->n_free);
    else
        for (int i = 0; i < 3; ++i) C->extra[(size_t)i * C->n_free + s] = 0.0;
    const uint32_t b = C->caps ? C->cap_of_row[s] : FPS_COLLIDE_NONE;
    if (b != FPS_COLLIDE_NONE) {
        double xs[3], p[3];
        fps_col_load(x, ldx, s, xs);
        fps_capsule_target(C->cap_frame + (size_t)FPS_CAP_FRAME * b,
                           C->cap_radii + (size_t)b * FPS_CAP_SLICES * FPS_CAP_SECTORS,
                           C->cap_pose + 9u * (size_t)b, C->margin, xs, p);
        for (int i = 0; i < 3; ++i) C->extra[(size_t)i * C->n_free + s] += C->weight * p[i];
    }
    return C->extra;
}

#ifndef __CUDACC__
/* ---- host half (plain C: cuda/fps_cuda_collide.c) ---- */

#include <sinew/sinew_plugin.h>

struct fps_collide;
struct fps_sim;

/* fps_collide's per-pair data as the device needs it: fps_collide_data, from
 * fps_collide_get_data (fps_collide.h). */
#include "fps_collide.h"

/* The CRS part the device's products read for A + A_col: row i is A's CRS entries of row i,
 * then A_col's off-diagonal entries of row i in order (its diagonal is added to A's ELL entry
 * 0 by fps_sim_set_collision_matrix). A_col may be NULL or have 0 rows (then the result is
 * A's CRS part). fpsc_merge_crs_size: the entry count, or SIZE_MAX when A_col's row count
 * differs from A's. fpsc_merge_crs: fills ptr (rows + 1), col and val (capacity entries);
 * returns 0 when the capacity is short or a column of A_col is out of range, else 1. */
size_t fpsc_merge_crs_size(const sinew_ellcrs* A, const sinew_crs* A_col);
int fpsc_merge_crs(const sinew_ellcrs* A, const sinew_crs* A_col, uint32_t* ptr, uint32_t* col,
                   double* val, size_t capacity);

/* The host side of one fps-cuda skin's collisions: scratch for the prediction and the merged
 * matrix. */
typedef struct fpsc_col_host fpsc_col_host;

/* For an fps simulation prepared with collisions=1 (fps_sim_collide not NULL; INVALID_ARGUMENT
 * otherwise), OUT_OF_MEMORY; one line each. */
sinew_result fpsc_col_host_create(const sinew_host_api* host, struct fps_sim* sim,
                                  fpsc_col_host** out);
void fpsc_col_host_destroy(fpsc_col_host* h);
/* Alg. 1 lines 1-2 on the host from the state (x, v: N x 3 column blocks of the device's
 * numbering, as the device left them) and the constrained rows' targets, then fps's detection
 * there (fps_collide_update) and, when the pairs changed, fps_sim_set_collision_matrix.
 * *changed: 1 when the device needs fpsc_col_host_collisions. A failed detection (out of
 * memory) drops every pair (and the matrix), sets *changed and returns its error. */
sinew_result fpsc_col_host_step(fpsc_col_host* h, const double* x, const double* v, int* changed);
/* The predicted positions of the last fpsc_col_host_step (N x 3), for tests. */
const double* fpsc_col_host_predicted(const fpsc_col_host* h);

/* Everything fpsc_set_collisions uploads, valid until the next step (fps_cuda_device.h). */
struct fpsc_collisions;
sinew_result fpsc_col_host_collisions(fpsc_col_host* h, struct fpsc_collisions* out);
/* With fps's limb capsules: the bones' frames at the pose of the last fpsc_col_host_step (9 per
 * bone, fps_collide_data), which fpsc_set_capsule_pose uploads every step; NULL without. */
const double* fpsc_col_host_capsule_pose(const fpsc_col_host* h);
#endif

#endif
