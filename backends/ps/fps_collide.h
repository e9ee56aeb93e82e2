/* Global collisions of the tissue backends (Komaritzan and Botsch 2019, Sec. 6): detection
 * with a spatial hash and point-in-tetrahedron tests every step, retention of resting contacts,
 * translation-invariant edge-spring constraints as the matrix A_col and the right-hand-side
 * term Q_col^T p_col (fps), or point targets of the contacts (ps,
 * fps_collide_point_targets). Part of the tissue layer (sinew_tissue) so that both backends
 * share it. The per-element arithmetic is backends/common/fps_collide_kernels.h (shared with
 * the CUDA plugin). SPDX-License-Identifier: MIT
 *
 * Use from the simulation (fps_sim.c), per time step:
 *   fps_collide_update(c, x, ldx, &changed);            after the prediction (Alg. 1 line 2)
 *   if (changed) { sinew_crs a = fps_collide_matrix(c); fps_sim_set_collision_matrix(sim, &a); }
 *   per PD iteration, after the local step:
 *     const double* extra = fps_collide_rhs(c, x, ldx) ? fps_collide_extra(c) : NULL;
 *     ... fps_rhs_row(..., extra, b, ld) with ld = fps_collide_extra_ld(c) == n_free ...
 * Numbering: x is in the solver's numbering (desc.row_of maps the ps model's tissue indices,
 * skin i at i and base at n + i, to rows of x); rows below n_free are the unknowns of the
 * reduced system, the others constrained (Sec. 4.3). Skin vertices and triangles keep the
 * model's numbering in this interface. */
#ifndef SINEW_FPS_COLLIDE_H
#define SINEW_FPS_COLLIDE_H

#include <stddef.h>
#include <stdint.h>

#include "ps_internal.h"
#include "sparse_ellcrs.h"

typedef struct fps_collide fps_collide;

/* How far below a triangle's plane the anchor of a skin vertex may lie before the global
 * detection drops the pair (fps_collide_anchor_through), in units of delta_col. */
#define FPS_COLLIDE_ANCHOR_DEPTH 0.5

typedef struct fps_collide_desc {
    const ps_model* model;  /* required; must outlive the collision state */
    uint32_t free_count;    /* n_free: rows of the reduced system (1 .. 2n) */
    double weight;          /* w of each edge spring (> 0, finite): absolute, in the units of
                               the system matrix (e.g. a multiple of its mean diagonal) */
    double margin;          /* targets lie this far above the plane, relative to the mean skin
                               edge length (>= 0; 0 = on it, Sec. 6) */
    double retain;          /* delta_col relative to the mean skin edge length (0: 0.25, Sec. 6) */
    const uint32_t* row_of; /* 2n entries: the row of x of each model tissue vertex (a
                               permutation; NULL: the model's own numbering) */
    int same_part;          /* 1: pairs within one body part too (bones that meet at a joint,
                               fps_collide_same_part) and whatever the anchors do (plain Sec. 6
                               detection); 0: global pairs only, without pairs whose skin
                               vertex's base went through the plane (fps_collide_anchor_through;
                               the backend) */
    const float* skinning;  /* NULL: no limb capsules. Else the caller's skinning matrices (16
                               per joint), an array that must outlive the state and that holds
                               the pose of each step when fps_collide_update runs: every bone's
                               rest flesh is a capsule that other parts' skin is pushed out of
                               (the limb capsules, fps_collide.c) */
} fps_collide_desc;

/* Precomputes the rest data (triangle orientations, each skin vertex's neighbourhood that it
 * does not collide with, the mean edge length). INVALID_ARGUMENT for a bad desc,
 * OUT_OF_MEMORY; one log line each. */
sinew_result fps_collide_create(const sinew_host_api* host, const fps_collide_desc* desc,
                                fps_collide** out);
void fps_collide_destroy(fps_collide* c);

/* Builds the rest skip lists of the model's skin vertices (each vertex's neighbourhood and the
 * prisms it lies in or touches at rest, as fps_collide_create makes them) and keeps them in
 * the model (rest_skip_ptr, rest_skip), so that a bake carries them and fps_collide_create
 * copies them instead of building them again. Nothing to do when the model has them.
 * INVALID_ARGUMENT, OUT_OF_MEMORY; one log line each. */
sinew_result fps_collide_keep_rest_skips(const sinew_host_api* host, ps_model* m);

/* Detection and retention at positions x (N x 3 column blocks, ldx >= N apart, N = 2n): new
 * pairs, kept pairs, dropped pairs; rebuilds A_col and the right-hand side's gather lists
 * when the set changed (*changed = 1, else 0). Runs over the host's job system.
 * INVALID_ARGUMENT (NULL, ldx < N), OUT_OF_MEMORY (the pairs are then cleared). */
sinew_result fps_collide_update(fps_collide* c, const double* x, size_t ldx, int* changed);

/* A_col over the free rows (n_free x n_free, both triangles, sorted columns, diagonal
 * included; rows 0 without pairs; the limb capsules' point constraints on the diagonal). Valid
 * until the next update. Empty while fps_collide_pair_count + fps_collide_capsule_count is 0. */
sinew_crs fps_collide_matrix(const fps_collide* c);

/* Contacts are inelastic (ours; Sec. 6 leaves the velocities to Alg. 1): after the step's
 * velocities v (x's layout), at the step's end positions x, each contact's vertex loses its
 * relative speed of separation along its push: a pair's vertex against its triangle's corners
 * along the triangle's normal, a capsule contact's vertex against the tube's own motion along
 * the radial direction. per_step converts the step's displacement into
 * velocity (damping / h, Alg. 1 line 7). Only the rows of free vertices in contacts change. */
void fps_collide_stop_separation(const fps_collide* c, const double* x, size_t ldx, double* v,
                                 double per_step);

/* Q_col^T p_col at positions x (projections recomputed: the collision part of the local
 * step; with the limb capsules also w p per capsule contact) into the n_free x 3 array
 * fps_collide_extra (ld = n_free). Returns 0 without pairs and capsule contacts (the array is
 * then not written: pass NULL as `extra`), else 1. */
int fps_collide_rhs(fps_collide* c, const double* x, size_t ldx);
const double* fps_collide_extra(const fps_collide* c);

/* Point targets of the held contacts at positions x, for a solver that takes each contact as
 * a point constraint (ps's second matrix, 2018 Sec. 5.3): where a pair's skin vertex lies
 * below its triangle's plane raised by the margin (fps_collide_project), the vertex takes
 * 1 - share of the push onto it and the triangle's corners share of it the other way (0.5:
 * both sides meet at the in-between plane of 2018 Sec. 5.3; a corner pushed by several pairs
 * takes their mean); then each capsule contact's vertex goes onto its tube
 * (fps_capsule_target). t holds positions in x's layout (ldx apart) on entry, usually a copy
 * of x; only the rows of skin vertices in contacts change. Needs n_free >= n (the skin's
 * rows). Returns the contacts that moved a vertex. */
uint32_t fps_collide_point_targets(fps_collide* c, const double* x, size_t ldx, double* t,
                                   double share);
size_t fps_collide_extra_ld(const fps_collide* c);

/* Forgets every pair (a teleport: set_state or a new rest) and frees the scratch that grew with
 * the poses seen; the next update starts afresh. */
void fps_collide_reset(fps_collide* c);

/* The pairs: count, and per pair its skin vertex and triangle (model numbering, increasing
 * skin vertex). */
uint32_t fps_collide_pair_count(const fps_collide* c);
const uint32_t* fps_collide_pair_vertices(const fps_collide* c);
const uint32_t* fps_collide_pair_triangles(const fps_collide* c);
/* Limb-capsule contacts of the last update: skin vertices held outside another bone's rest
 * flesh (0 without capsules). */
uint32_t fps_collide_capsule_count(const fps_collide* c);
/* Skin vertices (model numbering) that no limb capsule holds out: those a folding joint's
 * contact keeps on its side (backends/ps/ps_collide.c), where the two would fight. */
void fps_collide_free_of_capsules(fps_collide* c, const uint32_t* vertices, uint32_t count);
/* Skin vertex `vertex` is never held out of `bone`'s capsule (a vertex of a folding joint's
 * contact and the other bone of that joint: the fold's plane decides there). Indices out of
 * range are ignored. */
void fps_collide_free_of_capsule(fps_collide* c, uint32_t vertex, uint32_t bone);
/* Of the last update: pairs found inside a tet, pairs kept by retention only. */
void fps_collide_stats(const fps_collide* c, uint32_t* detected, uint32_t* retained);
/* 1 when skin vertex v never pairs with `triangle` (its neighbourhood, inside that prism at
 * rest, the same or a neighbouring bone: fps_collide_same_part, or behind the triangle at
 * rest: fps_collide_behind), else 0 (also for indices out of range). */
int fps_collide_skips(const fps_collide* c, uint32_t v, uint32_t triangle);
/* What a consumer that runs the per-pair work elsewhere needs (the fps-cuda plugin uploads it
 * to the device and runs fps_collide_pair_rhs / fps_collide_rhs_row there): the sizes, the
 * absolute spring weight and margin, each skin triangle's rows of x and orientation, the pairs
 * (vertex row, triangle) and the gather lists of the right-hand side, whose contrib entries lie
 * `stride` apart. Views into the state, valid until its next update or reset; pair_row,
 * pair_tri and gather are NULL while no pair was ever held. */
typedef struct fps_collide_data {
    uint32_t n_free, tissue_count, triangle_count;
    double weight, margin;
    const uint32_t* triangles;  /* 3 rows of x per skin triangle */
    const double* sign;         /* per triangle (fps_collide_normal) */
    uint32_t pair_count;
    size_t stride;              /* the contrib stride: the pair capacity */
    const uint32_t* pair_row;   /* pair_count */
    const uint32_t* pair_tri;
    const uint32_t* gather_ptr; /* n_free + 1 */
    const uint32_t* gather;     /* gather_ptr[n_free] */
    /* The limb capsules (all 0 / NULL without them): per bone its FPS_CAP_FRAME rest values,
     * FPS_CAP_SLICES x FPS_CAP_SECTORS radii (fps_collide_kernels.h; a bone without a capsule
     * has no contacts) and its frame at the pose of the last update (9: a, u, e1); the contacts
     * (at most one per skin vertex): the row of x of the vertex and the bone. Each adds
     * (w / 2) |x_row - p|^2 with p = fps_capsule_target(...) at the iterate: w on A_col's
     * diagonal (in fps_collide_matrix) and w p on the row of the right-hand side, after the
     * row's pair shares (fps_collide_rhs). */
    uint32_t bone_count;
    const double* cap_frame;
    const double* cap_radii;
    const double* cap_pose;
    uint32_t cap_count;
    const uint32_t* cap_row;
    const uint32_t* cap_bone;
} fps_collide_data;

/* INVALID_ARGUMENT (one line) for a NULL state or output. */
sinew_result fps_collide_get_data(const sinew_host_api* host, const fps_collide* c,
                                  fps_collide_data* out);

/* delta_col (absolute) and the hash's cell size. */
double fps_collide_retain_distance(const fps_collide* c);
double fps_collide_cell_size(const fps_collide* c);

#endif
