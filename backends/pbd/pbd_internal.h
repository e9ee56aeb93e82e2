/* Internals of the `pbd` backend (position based dynamics with graph colouring, Fratarcangeli
 * and Pellacini, ../shared/papers/parallel-position-based-dynamics.txt), shared by its source
 * files and its tests. Nothing here crosses the plugin ABI.
 * SPDX-License-Identifier: MIT
 *
 * The tissue model (volumetric skeleton, shrunken skin, prisms split into tets, skin sliding,
 * upsampling records, pose jumps) is ps's object library sinew_tissue (backends/ps). Its
 * tissue vertices are pbd's particles in the model's numbering: skin 0..n-1, base n..2n-1,
 * stored as structure of arrays (all x, then all y, then all z: N = 2n rows per column). */
#ifndef SINEW_PBD_INTERNAL_H
#define SINEW_PBD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ps_internal.h"

#define PBD_NAME "pbd"
#define VK_PBD_NAME "vk-pbd" /* the same solver in Vulkan compute shaders (vulkan/vk_pbd.c) */
#define PBD_NONE UINT32_MAX

/* ---- parameters (pbd_params.c; defaults and meaning: README.md, "Parameters") ---- */

typedef struct pbd_params {
    uint32_t iterations;       /* solver iterations per step (Sec. 4: n_its) */
    double timestep;           /* h, seconds */
    double damping;            /* lambda of v = lambda (x - x_prev) / h, 1 = none */
    int compliance;            /* 1: XPBD compliance; 0: plain PBD stiffness */
    double stretch_compliance; /* XPBD: per unit rest volume, of the strain (|p12| - d) / d */
    double volume_compliance;  /* XPBD: per unit rest volume, of the relative volume change */
    double stretch_stiffness;  /* plain PBD: stiffness in [0, 1] of the whole solve */
    double volume_stiffness;
    int bending;               /* 1: a bending constraint per pair of skin triangles on an edge */
    double bending_compliance; /* XPBD: per unit rest volume, of the bending strain */
    double bending_stiffness;  /* plain PBD: stiffness in [0, 1] of the whole solve */
    double mass;               /* tissue density, scaled as in ps */
    int collisions;            /* 1: the joints' contacts clamp the base targets (2018 Sec. 5) */
    int sliding;               /* 1: skin sliding (2018 Sec. 4.2) for the base targets */
    uint32_t decimate_above;
    uint32_t simulation_vertices;
    char bone_radii[1024];
    int profile;               /* 1: time the phases of each step, one INFO line on destroy */
    sinew_simd simd;           /* the projections' kernels: AUTO, SCALAR or AVX512 */
    uint32_t grain;            /* constraints of a colour per job range at least; a colour of
                                  at most this many runs on the calling thread */
    ps_jump_params jump;       /* jump_angle, jump_distance (backends/ps/ps_jump.c) */
    ps_update_params update;   /* max_substeps, interpolate_output (backends/ps/ps_update.c) */
} pbd_params;

void pbd_params_default(pbd_params* p);
/* The keys pbd_params_parse takes, as sinew_world_backend_params gives them. */
#define PBD_PARAM_COUNT 24u
extern const sinew_param_info pbd_param_info[PBD_PARAM_COUNT];
/* Parses and validates; an unknown or repeated key or a bad value is SINEW_ERROR_PARAMETER
 * with one log line. */
sinew_result pbd_params_parse(const sinew_host_api* host, const sinew_param* params,
                              uint32_t count, const void* next, pbd_params* out);
/* vk-pbd's keys: pbd's without simd and grain, which only the CPU's sweeps read. */
#define VK_PBD_PARAM_COUNT 22u
extern const sinew_param_info vk_pbd_param_info[VK_PBD_PARAM_COUNT];
sinew_result vk_pbd_params_parse(const sinew_host_api* host, const sinew_param* params,
                                 uint32_t count, const void* next, pbd_params* out);
/* The kernels of a simd parameter: AUTO resolves to AVX512 where the CPU and the build have
 * it, else SCALAR; an explicit AVX512 they lack is SINEW_ERROR_BACKEND_UNAVAILABLE (one line). */
sinew_result pbd_simd_resolve(const sinew_host_api* host, sinew_simd* simd);
/* The ps parameters that shape the model (bone_radii, decimation, sliding). */
void pbd_model_params(const pbd_params* p, ps_params* out);

/* ---- graph colouring (pbd_colour.c, Sec. 4) ---- */

/* Colours `count` constraints, each given by up to 4 particles (PBD_NONE pads), so that no
 * two constraints of one colour share a particle: the nodes in smallest-last order (Matula
 * and Beck 1983: repeatedly remove a node of least remaining degree), then coloured greedily
 * in the reverse of that order with the smallest colour no coloured neighbour holds, which
 * bounds the count by the graph's degeneracy + 1 (eq. 15). colour: one per constraint;
 * *degeneracy: the largest remaining degree met during the removals. OUT_OF_MEMORY, one line. */
sinew_result pbd_colour(const sinew_host_api* host, uint32_t particle_count, uint32_t count,
                        const uint32_t* particles, uint32_t* colour, uint32_t* colour_count,
                        uint32_t* degeneracy);

/* ---- constraints (pbd_constraints.c, Sec. 3.1) ---- */

/* Every constraint of the tissue mesh, grouped by colour: the stretch constraints of colour
 * c are [stretch_offsets[c], stretch_offsets[c + 1]), the volume and bending constraints
 * likewise. Single precision throughout, like the render mesh and the positions they act on. */
typedef struct pbd_constraints {
    uint32_t particle_count;    /* N = 2n */
    float* inv_mass;            /* N: 0 for particles that follow their targets */
    uint32_t stretch_count;
    uint32_t* stretch_a;        /* particle indices of each edge */
    uint32_t* stretch_b;
    float* stretch_w[2];        /* the inverse masses of a and b, copied per constraint so that
                                   the SIMD kernels load them instead of gathering */
    float* stretch_rest;        /* d, the rest length */
    float* stretch_alpha;       /* XPBD: alpha~ = alpha / h^2 of the compliance alpha */
    uint32_t volume_count;
    uint32_t* volume_p[4];      /* particle indices of each tet, the model's corner order */
    float* volume_w[4];         /* their inverse masses, copied per constraint */
    float* volume_rest;         /* 6 V0, six times the signed rest volume (pbd_tet_volume6) */
    float* volume_alpha;        /* XPBD: alpha~ of 6 V - 6 V0 */
    uint32_t bending_count;
    uint32_t* bending_p[4];     /* a pair of skin triangles (p0, p1, p2) and (p1, p0, p3) */
    float* bending_w[4];
    float* bending_rest;        /* the rest dihedral angle (pbd_dihedral: pi when flat) */
    float* bending_alpha;       /* XPBD: alpha~ of the angle */
    uint32_t colour_count;
    uint32_t* stretch_offsets;  /* colour_count + 1 */
    uint32_t* volume_offsets;   /* colour_count + 1 */
    uint32_t* bending_offsets;  /* colour_count + 1 */
    uint32_t degeneracy;        /* of the constraint graph, as pbd_colour found it */
} pbd_constraints;

/* Builds the constraints of model m: one stretch constraint per unique edge and one volume
 * constraint per tet, of the tets the model keeps (tet_excluded 0), and with `bending` one
 * bending constraint per edge that exactly two skin triangles share, each kept only when one
 * of its particles moves; inverse masses from the tet volumes as ps (base vertices and skin
 * vertices no kept tet holds: 0). Rest lengths, volumes and angles from `rest` (3N floats,
 * columns of N: the particles' start), then colours and groups them. OUT_OF_MEMORY, one
 * line. */
sinew_result pbd_constraints_build(const sinew_host_api* host, const ps_model* m,
                                   const pbd_params* p, const float* rest, pbd_constraints* out);
void pbd_constraints_free(const sinew_host_api* host, pbd_constraints* c);
/* The particles of constraint k in a single numbering (stretch 0..stretch_count-1, then
 * volume, then bending), 4 entries padded with PBD_NONE; its colour through *colour (tests). */
void pbd_constraint_particles(const pbd_constraints* c, uint32_t k, uint32_t out[4],
                              uint32_t* colour);

/* ---- projections (pbd_project.c, Sec. 3.1, 4) ---- */

typedef struct pbd_solve pbd_solve;
/* Projects constraints [first, last) of one kind (indices into the colour-ordered arrays). */
typedef void (*pbd_range_fn)(const pbd_solve* s, uint32_t first, uint32_t last);

/* What one colour's projections read and write. lambda: the XPBD multipliers (one per
 * constraint, colour order), unused in plain PBD. */
struct pbd_solve {
    const pbd_constraints* c;
    float* x;                   /* 3N positions, columns of N */
    uint32_t N;
    float* stretch_lambda;
    float* volume_lambda;
    float* bending_lambda;
    int xpbd;                   /* 1: XPBD with alpha~; 0: PBD with the stiffness factors */
    float stretch_k;            /* plain PBD: the per-iteration stiffness factors */
    float volume_k;
    float bending_k;
    uint32_t colour;            /* the colour being solved */
    pbd_range_fn stretch;       /* the kernels of the `simd` parameter */
    pbd_range_fn volume;
    pbd_range_fn bending;       /* scalar whatever `simd` says (the same bits either way) */
    uint32_t grain;             /* the `grain` parameter: constraints per job range at least */
};

void pbd_stretch_scalar(const pbd_solve* s, uint32_t first, uint32_t last);
void pbd_volume_scalar(const pbd_solve* s, uint32_t first, uint32_t last);
void pbd_bending_scalar(const pbd_solve* s, uint32_t first, uint32_t last);
#if defined(SINEW_SKIN_X86)
/* AVX-512F (built with -mavx512f; run only after a CPU check): 16 constraints per vector, the
 * scalar kernels' operations lane by lane, the same bits. */
void pbd_stretch_avx512(const pbd_solve* s, uint32_t first, uint32_t last);
void pbd_volume_avx512(const pbd_solve* s, uint32_t first, uint32_t last);
#endif

/* Projects the constraints of one colour, k in [begin, end) of its stretch, volume and bending
 * constraints (a sinew_job_fn: no two of them share a particle, so any split of the range
 * gives the same bits). */
void pbd_project_range(void* data, uint32_t begin, uint32_t end);
/* Constraints in colour `colour`. */
uint32_t pbd_colour_size(const pbd_constraints* c, uint32_t colour);
/* One iteration: every colour in order, each over the host's job system. */
void pbd_project_iteration(const sinew_host_api* host, pbd_solve* solve);

/* ---- the simulation (pbd_sim.c, Sec. 3) ---- */

typedef struct pbd_sim pbd_sim;

sinew_result pbd_sim_create(const sinew_host_api* host, const ps_model* model,
                            const pbd_params* params, pbd_sim** out);
void pbd_sim_destroy(pbd_sim* sim);
/* Skinning matrices (16 floats per joint) of the next step's targets; NULL: rest pose. */
void pbd_sim_set_pose(pbd_sim* sim, const float* skinning);
/* One time step of h: prediction, `iterations` coloured sweeps, velocity update. */
sinew_result pbd_sim_step(pbd_sim* sim);
/* Skin positions and velocities (3 floats per skin vertex, velocities may be NULL); the other
 * particles go to their targets at the next step. */
void pbd_sim_set_skin(pbd_sim* sim, const float* positions, const float* velocities);
void pbd_sim_clear_velocities(pbd_sim* sim);
/* The skin's positions (3 floats per skin vertex), for output interpolation. */
void pbd_sim_skin_positions(const pbd_sim* sim, float* out);
/* interpolate_output: the upsampling blends `previous` (NULL: none) towards the latest skin by
 * `fraction`. */
void pbd_sim_set_output_blend(pbd_sim* sim, const float* previous, float fraction);
void pbd_sim_upsample(pbd_sim* sim, float* positions, size_t position_stride, float* normals,
                      size_t normal_stride);
void pbd_sim_render_velocities(const pbd_sim* sim, float* velocities);
/* Seconds summed over the steps (profile=1): targets and prediction, the coloured sweeps,
 * the contacts' projections, the upsampling; and the number of steps. */
void pbd_sim_profile(const pbd_sim* sim, double seconds[4], uint64_t* steps);
/* The constraints (colours, particles) and the positions (3N, columns of N) for tests and
 * for vk-pbd, which uploads them. */
const pbd_constraints* pbd_sim_constraints(const pbd_sim* sim);
const float* pbd_sim_positions(const pbd_sim* sim);
/* The targets of the particles of zero inverse mass (3N, columns of N) for the pose of the
 * latest pbd_sim_set_pose, placed as a step places them (computed once per pose); the contact
 * planes of the joints follow the same pose. vk-pbd uploads them for each of its steps. */
const double* pbd_sim_targets(pbd_sim* sim);
/* The joints' contacts (2018 Sec. 5), NULL without; and the skinning matrices of the latest
 * pose (16 floats per joint), which the upsampling reads. */
ps_collide* pbd_sim_contacts(const pbd_sim* sim);
const float* pbd_sim_skinning(const pbd_sim* sim);

/* ---- the model (pbd_model.c) ---- */

/* ps's tissue model for pbd or vk-pbd (`backend`): restored from a blob the rig carries for
 * "pbd", "ps" or `backend`, else built (decimating a lone large render mesh first, as ps does)
 * with the joints' contact candidates when collisions are on. *baked: whether it was restored. */
sinew_result pbd_model_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                               const pbd_params* p, const char* backend, ps_model* m,
                               bool* baked);

/* ---- the backend instance (pbd.c) ---- */

pbd_sim* pbd_instance_sim(void* instance);
const ps_model* pbd_instance_model(void* instance);
/* The number of colours of an instance's constraint graph (0 for anything else). */
uint32_t pbd_instance_colour_count(void* instance);

#endif
