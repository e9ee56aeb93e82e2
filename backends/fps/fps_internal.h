/* Internals of the `fps` backend (fast projective skinning on the CPU, Komaritzan and Botsch
 * 2019), shared by its source files and its tests. Nothing here crosses the plugin ABI.
 * SPDX-License-Identifier: MIT
 *
 * The pose-independent model (volumetric skeleton, shrunken skin, tissue mesh, skin sliding,
 * upsampling records, baking) is ps's (backends/ps, the sinew_tissue object library, which
 * needs no CHOLMOD); fps replaces ps's soft anchors by hard constraints (Sec. 4.3) and solves
 * with CHOLMOD or with the Jacobi-preconditioned CG of Alg. 2, whose arithmetic lives in
 * backends/common/fps_kernels.h and sparse_ellcrs.h (shared with the CUDA plugin). */
#ifndef SINEW_FPS_INTERNAL_H
#define SINEW_FPS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fps_kernels.h"
#include "ps_internal.h"
#include "ps_param_rows.h"
#include "sinew_ldl.h"
#include "sparse_ellcrs.h"

#define FPS_NAME "fps"
/* joint_volume's default: fps pulls with a force where ps constrains (fps_joint_volume.c), and
 * this gain gives the cylinder's bends their volume as ps's 1 does. */
#define FPS_JOINT_VOLUME 1.4
/* The reach of the folding joints' contacts, in joint radii (ps_collide_candidates_near). */
#define FPS_JOINT_REACH 3.3

typedef enum fps_solver_kind { FPS_SOLVER_CHOLMOD = 0, FPS_SOLVER_PCG = 1 } fps_solver_kind;

/* Parameters (defaults and meaning: the table at the top of fps.c and README.md). */
typedef struct fps_params {
    uint32_t iterations;     /* PD (local/global) iterations per step */
    uint32_t pcg_iterations; /* PCG iterations per PD iteration (solver=pcg) */
    double pcg_tolerance;    /* 0: exactly pcg_iterations; > 0: stop below this relative residual */
    double timestep;         /* h, seconds */
    double damping;          /* lambda of the velocity update, 1 = none */
    double strain_weight;    /* strain stiffness per unit rest volume */
    double mass;             /* tissue density (scaled as in ps) */
    fps_solver_kind solver;
    int sliding;             /* skin sliding (2018 Sec. 4.2) for the base vertices' targets */
    int collisions;          /* 1: global collisions (Sec. 6, fps_collide.c) */
    double collision_weight; /* edge-spring weight relative to the mean diagonal of A */
    int inelastic_contacts;  /* 1: contacts take the speed of separation their pushes gave
                              * (fps_collide_stop_separation) */
    int capsules;            /* 1: limb capsules with the global collisions (fps_collide.c);
                              * fps_params_parse gives it collisions' value when not given */
    int profile;
    sinew_simd simd;         /* the batched polar decomposition's kernels (AUTO resolved) */
    uint32_t decimate_above;
    uint32_t simulation_vertices;
    char bone_radii[1024];
    int upsampling;          /* ps_upsampling (ps_mls.h): auto, normal or mls */
    ps_jump_params jump;     /* jump_angle, jump_distance (backends/ps/ps_jump.c) */
    ps_volume_params volume; /* volume_weight, volume_range (backends/ps/ps_volume.c) */
    int joint_collisions;    /* 1: anchors kept on their side of each folding joint's plane
                              * (the 2018 paper's local collisions, backends/ps/ps_collide.c) */
    ps_update_params update; /* max_substeps, interpolate_output (backends/ps/ps_update.c) */
} fps_params;

#if defined(SINEW_HAVE_CHOLMOD)
#define FPS_DEFAULT_SOLVER "cholmod"
#else
#define FPS_DEFAULT_SOLVER "pcg"
#endif

/* fps's keys (README.md, "Parameters"; sinew_params.h's X-macro rows): its own, then the
 * tissue backends' shared rows. fps-cuda describes them too, after its own. The CHOICE rows
 * name fps_solver_values and ps_simd_values, which only the slot rows use. */
#define FPS_PARAM_ROWS(X, T)                                                                      \
    X(T, iterations, INTEGER, 0, 1.0, 1000.0, "10", NULL,                                          \
      "PD (local/global) iterations per step", U32, iterations, NULL)                             \
    X(T, pcg_iterations, INTEGER, 0, 1.0, 10000.0, "10", NULL,                                      \
      "PCG iterations per PD iteration (solver=pcg)", U32, pcg_iterations, NULL)                  \
    X(T, pcg_tolerance, REAL, SINEW_PARAM_MAX_OPEN, 0.0, 1.0, "0", NULL,                            \
      "0: always pcg_iterations; else stop once every residual is below this relative one",       \
      DOUBLE, pcg_tolerance, NULL)                                                                \
    X(T, solver, CHOICE, 0, 0.0, 0.0, FPS_DEFAULT_SOLVER, "cholmod|pcg",                           \
      "the global step's solver; a build without CHOLMOD has only pcg", INT, solver,              \
      fps_solver_values)                                                                          \
    X(T, strain_weight, REAL, SINEW_PARAM_MIN_OPEN, 0.0, 1e12, "1", NULL,                           \
      "strain stiffness per unit rest volume", DOUBLE, strain_weight, NULL)                       \
    X(T, simd, CHOICE, 0, 0.0, 0.0, "auto", PS_SIMD_CHOICES,                                        \
      "kernels of the batched polar decomposition (the same bits)", INT, simd, ps_simd_values)    \
    X(T, collisions, FLAG, 0, 0.0, 1.0, "1", NULL, "global collisions (2019 Sec. 6)", INT,          \
      collisions, NULL)                                                                           \
    X(T, collision_weight, REAL, SINEW_PARAM_MIN_OPEN, 0.0, 1e6, "1", NULL,                         \
      "each contact spring's weight relative to the mean diagonal of the system matrix", DOUBLE, \
      collision_weight, NULL)                                                                     \
    X(T, inelastic_contacts, FLAG, 0, 0.0, 1.0, "1", NULL,                                          \
      "contacts keep no speed of separation from their pushes", INT, inelastic_contacts, NULL)    \
    X(T, capsules, FLAG, 0, 0.0, 1.0, NULL, NULL,                                                   \
      "limb capsules with the global collisions; not given: as collisions", INT, capsules, NULL)  \
    X(T, joint_collisions, FLAG, 0, 0.0, 1.0, "1", NULL,                                            \
      "the local collisions of the folding joints (2018 Sec. 5)", INT, joint_collisions, NULL)    \
    X(T, upsampling, CHOICE, 0, 0.0, 0.0, "auto", PS_UPSAMPLING_CHOICES,                            \
      "auto: mls for a separate simulation mesh, else normal displacement", INT, upsampling,      \
      NULL)                                                                                       \
    PS_PARAM_ROWS_TIME(X, T) PS_PARAM_ROWS_MODEL(X, T) PS_PARAM_ROWS_JUMP(X, T)                   \
    PS_PARAM_ROWS_VOLUME(X, T) PS_PARAM_ROWS_JOINT_VOLUME(X, T, "1.4")

void fps_params_default(fps_params* p);
sinew_result fps_params_parse(const sinew_host_api* host, const sinew_param* params,
                              uint32_t count, const void* next, fps_params* out);
/* The ps parameters that shape the model (bone_radii, decimation, sliding), for ps's builders. */
void fps_model_params(const fps_params* p, ps_params* out);

/* ---- sparse helpers (fps_matrix.c) ---- */

/* A CRS matrix that owns its arrays. */
typedef struct fps_csr {
    uint32_t rows;
    uint32_t* ptr;
    uint32_t* col;
    double* val;
} fps_csr;

void fps_csr_free(const sinew_host_api* host, fps_csr* m);
static inline sinew_crs fps_csr_view(const fps_csr* m)
{
    sinew_crs v;
    v.rows = m->rows;
    v.ptr = m->ptr;
    v.col = m->col;
    v.val = m->val;
    return v;
}
/* out = a + b (same row count; columns sorted per row; entries of b that a lacks are added). */
sinew_result fps_csr_add(const sinew_host_api* host, const sinew_crs* a, const sinew_crs* b,
                         fps_csr* out);

/* ---- CHOLMOD (fps_cholmod.c, only with SINEW_HAVE_CHOLMOD) ---- */

typedef struct fps_cholmod fps_cholmod;
/* Simplicial LDL^T with AMD ordering of a symmetric CRS matrix (both triangles stored). */
sinew_result fps_cholmod_create(const sinew_host_api* host, const sinew_crs* K, fps_cholmod** out);
void fps_cholmod_destroy(fps_cholmod* c);
/* Numeric refactorization of K with the kept ordering: on the solver's pattern when K's factor
 * has it (sinew_ldl_refactor), else by CHOLMOD on the kept analysis, where K may have entries
 * the analysed matrix lacked (the simplicial factor grows its columns). */
sinew_result fps_cholmod_refactor(fps_cholmod* c, const sinew_crs* K);
/* Solves the three columns of b (rows x 3, ldb apart) into x (ldx apart). */
sinew_result fps_cholmod_solve(fps_cholmod* c, const double* b, size_t ldb, double* x, size_t ldx);
/* The same with b's rows computed by fn on the threads that solve them (sinew_ldl_solve_with). */
void fps_cholmod_solve_with(fps_cholmod* c, sinew_ldl_rhs_fn fn, void* user, double* x,
                            size_t ldx);
size_t fps_cholmod_factor_nnz(const fps_cholmod* c);
/* The two-part solver of the current factor (sinew_ldl.h): which part each row belongs to. */
const struct sinew_ldl* fps_cholmod_solver(const fps_cholmod* c);

/* ---- the simulation (fps_sim.c) ---- */

typedef struct fps_sim fps_sim;

sinew_result fps_sim_create(const sinew_host_api* host, const ps_model* model,
                            const fps_params* params, fps_sim** out);
void fps_sim_destroy(fps_sim* sim);
/* Skinning matrices (16 floats per joint) of the next step's targets; NULL: rest pose. */
void fps_sim_set_pose(fps_sim* sim, const float* skinning);
/* One time step (Alg. 1 with the reduced system of Sec. 4.3). */
sinew_result fps_sim_step(fps_sim* sim);
/* Skin positions and velocities (3 floats per skin vertex, velocities may be NULL). */
void fps_sim_set_skin(fps_sim* sim, const float* positions, const float* velocities);
/* Zeroes every velocity (after the quasi-static step of a restart, ps_jump). */
void fps_sim_clear_velocities(fps_sim* sim);
/* The render mesh from the current skin, or from its blend set by fps_sim_set_output_blend. */
void fps_sim_upsample(fps_sim* sim, float* positions, size_t position_stride, float* normals,
                      size_t normal_stride);
/* The skin's positions in the model's numbering, 3 floats per skin vertex. */
void fps_sim_skin_positions(const fps_sim* sim, float* out);
/* Later upsampling blends `previous` (skin positions as fps_sim_skin_positions gives them, kept
 * by the caller; NULL: none) towards the current skin by `fraction` (interpolate_output). */
void fps_sim_set_output_blend(fps_sim* sim, const float* previous, float fraction);
void fps_sim_render_velocities(const fps_sim* sim, float* velocities);
/* Tissue positions in the model's numbering (skin 0..n-1, base n..2n-1), 3 per vertex. */
void fps_sim_tissue_positions(const fps_sim* sim, double* out);
/* Sizes: free unknowns (rows of the reduced system), its nonzeros, the factor's nonzeros (0
 * for PCG), the ELL width and CRS-part size. */
uint32_t fps_sim_free_count(const fps_sim* sim);
size_t fps_sim_matrix_nnz(const fps_sim* sim);
size_t fps_sim_factor_nnz(const fps_sim* sim);
void fps_sim_ellcrs_shape(const fps_sim* sim, uint32_t* ell_width, size_t* crs_count);
/* The reduced matrix K_ss (h^-2 M_s + Q_s^T Q_s) in CRS and its ELL/CRS form (tests). */
sinew_crs fps_sim_matrix(const fps_sim* sim);
sinew_ellcrs fps_sim_ellcrs(const fps_sim* sim);
/* The system becomes A + A_col (Sec. 6): a symmetric n_s x n_s CRS matrix (both triangles,
 * diagonal allowed, NULL or empty: none). CHOLMOD refactors numerically on its kept analysis;
 * PCG adds A_col's diagonal to A's, recomputes J and keeps the off-diagonal part as a CRS
 * matrix. SINEW_ERROR_INVALID_ARGUMENT for a wrong size or unsorted rows. */
sinew_result fps_sim_set_collision_matrix(fps_sim* sim, const sinew_crs* A_col);
/* Solves (A + A_col) x = b with the chosen solver (x holds the start for PCG), b and x n_s x 3
 * with ld = n_s; for PCG, iterations and tolerance as the parameters (tests, benchmarks).
 * Returns the largest relative residual over the three columns through *residual. */
sinew_result fps_sim_solve(fps_sim* sim, const double* b, double* x, double* residual);
/* The global-collision state (Sec. 6, fps_collide.h) of collisions=1, else NULL (tests). */
struct fps_collide* fps_sim_collide(const fps_sim* sim);
/* Per-step profile (profile=1), seconds summed over the steps: local step, right-hand side,
 * solve, upsampling, whole step, collision detection (with the matrix update; in the step). */
void fps_sim_profile(const fps_sim* sim, double seconds[6], uint64_t* steps);

/* ---- the simulation's arrays for a device copy (the fps-cuda plugin, cuda/) ----
 * fps-cuda prepares with fps (same model, numbering, matrices, gathers) and steps on the GPU;
 * these are views into the simulation, valid while it lives. x and v (N x 3 column blocks,
 * the new numbering) are the host copy of the state that the plugin reads and writes. */
typedef struct fps_sim_arrays {
    uint32_t n, N, ns;          /* skin vertices, tissue vertices (2n), free unknowns */
    uint32_t prism_count;
    double h, damping;
    const uint32_t* perm;       /* N: new index -> model index */
    const uint32_t* inv;        /* N: model index -> new index */
    const double* mass_h2;      /* ns: m_i / h^2 */
    fps_prisms prisms;          /* pv in the new numbering */
    const uint32_t* gather_ptr; /* ns + 1 */
    const uint32_t* gather;
    sinew_ellcrs A;             /* K_ss, diagonal first (without collisions) */
    const double* jinv;         /* ns */
    sinew_crs Ksb;              /* free rows x constrained columns (new indices) */
    double* x;
    double* v;
    const double* target;       /* N x 3, model numbering (fps_sim_update_targets) */
    const float* skinning;      /* 16 per joint: the pose of the targets */
} fps_sim_arrays;

void fps_sim_arrays_get(fps_sim* sim, fps_sim_arrays* out);
/* The constrained vertices' targets for the pose of fps_sim_set_pose (the first thing
 * fps_sim_step does), for a caller that steps elsewhere; nothing when the pose is unchanged. */
void fps_sim_update_targets(fps_sim* sim);

/* ---- the backend instance (fps.c) ---- */

/* The model and simulation of an fps instance (NULL for anything else), for tests. */
const ps_model* fps_instance_model(void* instance);
fps_sim* fps_instance_sim(void* instance);
/* An update of an fps instance as fps-cuda drives it, with its device steps in between
 * (backends/ps/ps_update.c does the same for fps's own steps). begin: dt goes to the step
 * clock, and when the pose set since the last update does not continue the previous one
 * (flagged, or a jump by jump_angle / jump_distance) the simulation's state restarts from it
 * (ps_jump_begin_update) and *reset is true: the caller zeroes the velocities after the first
 * step (quasi-static). step_pose: the pose of step i goes to the simulation (its targets are
 * then stale: fps_sim_update_targets). end: the update's pose is where the next one starts. */
sinew_result fps_instance_begin_update(void* instance, float dt, sinew_step_plan* plan,
                                       bool* reset);
void fps_instance_step_pose(void* instance, const sinew_step_plan* plan, uint32_t i, bool reset);
void fps_instance_end_update(void* instance);

#endif
