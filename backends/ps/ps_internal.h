/* Internals of the `ps` backend (projective skinning, Komaritzan and Botsch 2018), shared by
 * its source files and its tests. Nothing here crosses the plugin ABI.
 * SPDX-License-Identifier: MIT
 *
 * Vocabulary:
 * - skin vertices: the simulation surface after welding coincident positions (seams), n of
 *   them; base vertices: their shrunken copies on the volumetric skeleton (Sec. 3.2). The
 *   tissue mesh has N = 2n vertices, skin i at index i and its base at n + i (Sec. 3.3).
 * - prism: a skin triangle with its base copy, split into 3 tetrahedra (Sec. 3.3).
 * - bone: the segment from a joint's position to the position of one of its children; it
 *   moves with the parent joint's skinning matrix. Zero-length segments are no bones. */
#ifndef SINEW_PS_INTERNAL_H
#define SINEW_PS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <sinew/sinew_host.h>

#include "cpu_features.h"
#include "sinew_decimate.h"
#include "sinew_number.h"
#include "sinew_step_clock.h"

#define PS_NAME "ps"
#define PS_NONE UINT32_MAX

/* ---- parameters (defaults and meaning: README.md, "Parameters"; parsed in ps.c) ---- */

/* When a step's pose counts as a jump (ps_jump.c; parameters jump_angle and jump_distance of
 * ps and fps). */
typedef struct ps_jump_params {
    double angle;    /* degrees a joint may turn relative to its parent in one step; 0: never */
    double distance; /* rig heights a joint may move relative to its parent in one step
                        (a root: in model space); 0: never */
} ps_jump_params;

/* The volume term of the tissue energy (ps_volume.c, volume3.h): its stiffness per unit rest
 * volume beside strain_weight (0: the paper's energy, no volume term), and the half-width of
 * the band of det F it leaves alone. */
typedef struct ps_volume_params {
    double weight;
    double range;
    double joint;       /* joint_volume: the share of a joint region's loss given back */
    double joint_reach; /* joint_volume_reach: the region's radius in joint radii */
} ps_volume_params;
#define PS_VOLUME_WEIGHT 0.0
#define PS_VOLUME_RANGE 0.01
#define PS_JOINT_VOLUME 1.0
#define PS_JOINT_VOLUME_REACH 3.5

/* How an update's dt becomes fixed steps (ps_update.c, sinew_step_clock.h; parameters
 * max_substeps and interpolate_output of ps and fps). */
typedef struct ps_update_params {
    uint32_t max_substeps;  /* steps one update may run (1..64); later whole steps are dropped */
    int interpolate_output; /* 1: the output blends the last two simulated states */
} ps_update_params;

typedef struct ps_params {
    uint32_t iterations;  /* local/global iterations per step */
    double timestep;      /* h of the mass term, seconds */
    double damping;       /* lambda of the velocity update, 1 = none */
    double strain_weight; /* stiffness of the strain constraints per unit rest volume */
    double anchor_weight; /* anchor stiffness relative to the base vertex's strain stiffness */
    double mass;          /* tissue density, see README.md */
    int collisions;       /* 1: local collisions (Sec. 5) */
    double collision_weight; /* collision constraint weight relative to the vertex's diagonal */
    char collision_joints[1024]; /* "" (automatic) or comma-separated joint names */
    int global_collisions;   /* 1: contacts between body parts (2019 Sec. 6, fps_collide.c) */
    double global_weight;    /* their constraint weight relative to the vertex's diagonal */
    int inelastic_contacts;  /* 1: the global contacts keep no speed of separation from their
                              * pushes (fps_collide_stop_separation) */
    int profile;          /* 1: time the phases of each step, report at INFO on destroy */
    sinew_simd simd;      /* local step kernels: SCALAR, AVX2 or AVX512 (AUTO resolved) */
    int sliding;          /* 1: skin sliding at joints (Sec. 4.2) */
    uint32_t decimate_above;      /* decimate a lone render mesh above this many vertices (0: never) */
    uint32_t simulation_vertices; /* target size of that decimated simulation mesh */
    char bone_radii[1024];        /* "" or "joint:radius,..." (Sec. 3.1, user-given radii) */
    int collision_angle_test;     /* collision_test=angle: Fig. 10 gates the projections */
    int collision_poses;          /* collision_candidates=poses: Sec. 5.1's offline search */
    int upsampling;               /* ps_upsampling (ps_mls.h): auto, normal or mls */
    ps_jump_params jump;          /* jump_angle, jump_distance (ps_jump.c) */
    ps_volume_params volume;      /* volume_weight, volume_range (ps_volume.c) */
    ps_update_params update;      /* max_substeps, interpolate_output (ps_update.c) */
} ps_params;

void ps_params_default(ps_params* p);
/* Resolves SINEW_SIMD_AUTO to the widest local-step kernels this CPU runs (SSE: scalar);
 * an explicit AVX2 or AVX512 the CPU or build lacks is SINEW_ERROR_BACKEND_UNAVAILABLE. */
sinew_result ps_simd_resolve(const sinew_host_api* host, sinew_simd* simd);
/* Parses and validates against ps's description (ps.c; sinew_params.h); one log line and
 * SINEW_ERROR_PARAMETER on a bad key or value. */
sinew_result ps_params_parse(const sinew_host_api* host, const sinew_param* params,
                             uint32_t count, const void* next, ps_params* out);

/* ---- the pose-independent model ---- */

/* The phases of a preparation, as profile=1 reports them (ps_build_log): the model's
 * (ps_model_build_with), the backend-specific ones around it, and the solver's system. */
typedef enum ps_build_phase {
    PS_BUILD_DECIMATE,   /* a lone large render mesh decimated (ps_decimate.c) */
    PS_BUILD_WELD,
    PS_BUILD_SKELETON,   /* Sec. 3.1 */
    PS_BUILD_SHRINK,     /* Sec. 3.2, with its repair */
    PS_BUILD_SLIDING,    /* Sec. 4.2 records */
    PS_BUILD_TISSUE,     /* Sec. 3.3 prisms and tets */
    PS_BUILD_UPSAMPLE,   /* Sec. 6 records */
    PS_BUILD_CANDIDATES, /* Sec. 5.1 collision candidates */
    PS_BUILD_MLS,        /* 2019 Sec. 5 weights (fps) */
    PS_BUILD_SYSTEM,     /* the solver's matrices, factorisation, colouring */
    PS_BUILD_PHASES
} ps_build_phase;

typedef struct ps_bone {
    uint32_t joint;  /* the joint whose skinning matrix moves the bone (segment start) */
    uint32_t child;  /* the joint at the segment end */
    uint32_t end[2]; /* representative joints of both ends (see ps_skeleton) */
    double radius;   /* capsule radius (Sec. 3.1) */
} ps_bone;

/* The farthest a render vertex may lie from a separate simulation mesh, relative to that
 * mesh's bounding-box diagonal (ps_upsample.c); the test characters stay below 0.002. */
#define PS_COVER_DISTANCE 0.05

/* One render vertex as a displacement of the simulated surface (Sec. 6). */
typedef struct ps_upsample {
    uint32_t triangle;  /* skin triangle; PS_NONE: the vertex follows skin vertex `vertex` */
    uint32_t vertex;    /* skin vertex of an isolated render vertex, else unused (0) */
    float bary[3];      /* barycentric coordinates of the foot point in `triangle` */
    float offset[3];    /* displacement in the foot point's frame (tangent, bitangent, normal) */
    float normal[3];    /* rest normal in the same frame */
} ps_upsample;

/* The skin vertex a simulation vertex is restored from when a render-mesh shape is given
 * (set_state with a separate simulation mesh): a point of a render triangle plus an offset in
 * that triangle's frame. */
typedef struct ps_restore {
    uint32_t triangle; /* render triangle */
    float bary[3];
    float offset[3];
} ps_restore;

/* A potential collision pair of Sec. 5.1: skin vertices i (on bone_i's side) and j (on
 * bone_j's side), and the joint j_ij, the end of bone_i towards bone_j (a joint rep). */
typedef struct ps_collision_pair {
    uint32_t i, j, bone_i, bone_j, joint;
} ps_collision_pair;

/* Skin sliding (Sec. 4.2, ps_sliding.c): an anchor of a ring around a bone or a joint. It
 * moves with the skinning matrix joint[0] when joint[0] == joint[1] (a bone ring), else with
 * the quaternion average of joint[0]'s and joint[1]'s transforms about joint `center` (a joint
 * ring). The first anchor of each pair of rings also keeps the pair's frame. */
typedef struct ps_slide_anchor {
    uint32_t joint[2];
    uint32_t center;
    double rest[3];
    double axis[3];  /* first anchor of a pair: unit bone direction away from the joint */
    double ref[3];   /* first anchor of a pair: angle 0 around the axis */
    double reach;    /* first anchor of a pair: distance of the bone ring from the joint */
} ps_slide_anchor;

/* A base vertex near a joint as an affine combination of four anchors (Sec. 4.2). */
typedef struct ps_slide_vertex {
    uint32_t vertex;    /* tissue index (a base vertex) */
    uint32_t joint;     /* the joint whose sphere and bones it is projected onto */
    uint32_t anchor[4]; /* two of the joint ring, two of the bone ring */
    double weight[4];   /* sum to 1 and give the rest position */
    double p0[3];       /* the projected combination at rest */
} ps_slide_vertex;

typedef struct ps_model {
    uint32_t joint_count;
    const float* joint_rest; /* the rig's bind matrices (16 per joint) */

    /* Sec. 3.1: the volumetric skeleton. */
    uint32_t bone_count;
    ps_bone* bones;
    double* joint_radius;   /* per joint, 0 for a joint that is not a sphere of the skeleton */
    uint32_t* joint_rep;    /* per joint: the first ancestor at the same position (or itself) */

    /* The simulated surface: the simulation mesh (or the render mesh) with coincident
     * positions welded. */
    uint32_t source_vertex_count; /* vertices of that mesh */
    uint32_t* weld;               /* source vertex -> skin vertex */
    uint32_t n;                   /* skin vertices */
    uint32_t triangle_count;      /* kept triangles = prisms (degenerate ones dropped) */
    uint32_t* triangles;          /* 3 per triangle, skin indices */

    /* Sec. 3.2: shrinking. */
    double* rest;           /* 3 per tissue vertex (2n): skin positions, then base positions */
    uint32_t* vertex_bone;  /* per tissue vertex: the bone its anchor follows */
    uint32_t shrink_iterations;
    double shrink_residual; /* largest foot point move of the last smoothing iteration,
                               relative to the bounding-box diagonal */
    uint32_t inside_count;  /* skin vertices that started inside the volumetric skeleton */

    /* Sec. 3.3 and 4.1: tetrahedra (3 per prism, ps_prism_tets_split) and their rest data. */
    uint8_t* prism_split;   /* per prism: its split (0..5, ps_split.c) */
    uint32_t tet_count;
    uint32_t* tets;         /* 4 tissue indices per tet */
    double* tet_A;          /* 12 per tet: A = (E E^T)^-1 E, 3 x 4 row-major */
    double* tet_volume;     /* signed rest volume */
    uint8_t* tet_excluded;  /* 1: degenerate, left out of the strain energy */
    uint32_t degenerate_count;
    uint32_t inverted_count; /* tets whose rest orientation disagrees with their prism's skin */
    uint32_t poor_count;     /* well-oriented tets below PS_POOR_QUALITY (not degenerate) */

    /* Sec. 6: render vertices from the simulated surface. */
    uint32_t render_count;
    ps_upsample* upsample;
    /* With a separate simulation mesh: per skin vertex, where it sits on the render mesh. */
    ps_restore* restore;
    /* The skin triangles around each skin vertex (compressed rows), for vertex normals. */
    uint32_t* vertex_tri_offsets; /* n + 1 */
    uint32_t* vertex_tris;
    double thickness;       /* mean distance between a skin vertex and its base */
    double diagonal;        /* bounding-box diagonal of the skin at rest */

    /* A simulation mesh decimated from the render mesh (ps_decimate.c): its triangle count,
     * 0 when the simulated mesh is the rig's own. */
    uint32_t decimated_triangles;

    /* Seconds of each phase of this preparation (ps_build_phase; 0 for what was restored from
     * baked data or not run); profile=1 reports them (ps_build_log). */
    double build_seconds[PS_BUILD_PHASES];

    /* Sec. 4.2: skin sliding records (ps_sliding.c); used when the parameter sliding is 1. */
    uint32_t slide_anchor_count;
    ps_slide_anchor* slide_anchors;
    uint32_t slide_vertex_count;
    ps_slide_vertex* slide_vertices;

    /* Sec. 5.1: candidate collision pairs (ps_collide.c), sorted, without duplicates. */
    int has_collision_pairs; /* 1: computed (or restored), even when none were found */
    uint32_t collision_pair_count;
    ps_collision_pair* collision_pairs;

    /* The global collisions' rest skip lists (2019 Sec. 6, fps_collide.c): per skin vertex the
     * triangles it never pairs with, sorted; NULL until kept for a bake or restored from one
     * (fps_collide_keep_rest_skips), and then fps_collide_create takes them as they are. */
    uint32_t* rest_skip_ptr; /* n + 1 */
    uint32_t* rest_skip;     /* rest_skip_ptr[n] */
} ps_model;

/* Monotonic seconds, for the phases' times (ps_model.c). */
double ps_seconds(void);
/* profile=1: one INFO line "<backend> profile: preparation ..." with each phase's time. */
void ps_build_log(const sinew_host_api* host, const char* backend, const ps_model* m);

/* Tet quality: |signed volume| over the cube of the longest edge (a regular tet has 0.118).
 * Below PS_DEGENERATE_QUALITY a tet is left out of the strain energy; below PS_POOR_QUALITY
 * it is counted as poor: too flat to keep its volume under load. */
#define PS_DEGENERATE_QUALITY 1e-6
#define PS_POOR_QUALITY 1e-3

void ps_model_free(const sinew_host_api* host, ps_model* model);

/* Per prism, the side its base belongs on (1: below its skin triangle as wound): in a
 * connected part of the skin wound consistently, the side most of the part's bases are on,
 * so that a prism whose base crossed to the outside counts as inverted; elsewhere each
 * prism's own side. OUT_OF_MEMORY with one log line. */
sinew_result ps_prism_orient(const sinew_host_api* host, const ps_model* m, uint8_t* below);
/* The split of prism p into 3 tets (ps_split.c): `order` (0..5) orders its corners; the quad
 * over each edge is cut from the earlier corner to the later one's base copy. The tets'
 * corners are ordered so that each has positive volume when the prism is well formed with its
 * base on the given side. */
void ps_prism_tets_split(const ps_model* m, uint32_t p, bool base_below, uint8_t order,
                         uint32_t tets[3][4]);
/* The worst quality (ps_tet_quality) of prism p's tets in that split. */
double ps_prism_quality(const ps_model* m, uint32_t p, bool base_below, uint8_t order);
/* Per prism the split: the vertex-index order (Sec. 3.3), with edges flipped where that raises
 * a prism that has a tet below PS_POOR_QUALITY. OUT_OF_MEMORY with one log line. */
sinew_result ps_split_choose(const sinew_host_api* host, const ps_model* m, const uint8_t* below,
                             uint8_t* order);
/* Signed volume of tet (a, b, c, d) over the cube of its longest edge (0 for a point); the
 * volume itself into *volume when not NULL. */
double ps_tet_quality(const double* a, const double* b, const double* c, const double* d,
                      double* volume);

/* Builds the whole model from the rig (Sec. 3.1-3.3, 6). */
sinew_result ps_model_build(const sinew_host_api* host, const sinew_rig_view* rig,
                            ps_model* model);

/* Render vertex r from the simulated skin (positions and vertex normals, 3 floats per skin
 * vertex) by its upsampling record (normal displacement, 2018 Sec. 6); vertices without a
 * triangle follow their bone's skinning matrix (16 floats per joint). */
void ps_upsample_vertex(const ps_model* m, const float* skin_f, const float* skin_n,
                        const float* skinning, uint32_t r, float pos[3], float nrm[3]);
/* The skin's vertex normals (ps_vertex_normal) from its float positions, over the job system. */
void ps_skin_normals(const sinew_host_api* host, const ps_model* m, const float* skin_f,
                     float* skin_n);
/* Every render vertex by ps_upsample_vertex, over the job system, into strided arrays (byte
 * strides; either array may be NULL). */
void ps_upsample_render(const sinew_host_api* host, const ps_model* m, const float* skin_f,
                        const float* skin_n, const float* skinning, float* positions,
                        size_t position_stride, float* normals, size_t normal_stride);

/* Skin vertex values from render-vertex values (a backend's set_state): with a separate
 * simulation mesh through the restore records (offsets: positions, with the normal offsets of
 * the records; else velocities, barycentric only), else from the first render vertex welded
 * into each skin vertex. 3 floats per vertex. */
void ps_render_to_skin(const ps_model* m, const uint32_t* render_indices, const float* render,
                       float* skin, bool offsets);

/* ---- the render-mesh output of a physics backend (ps_output.c) ---- */

/* What the own buffers hold: the rest pose, the simulation's shape, or a set_state shape. */
typedef enum ps_shape { PS_SHAPE_REST, PS_SHAPE_SIM, PS_SHAPE_STATE } ps_shape;

/* What ps_output asks of the backend's simulation (ps_sim or fps_sim behind `sim`):
 * upsample writes the render mesh into positions/normals (either may be NULL) at byte strides;
 * render_velocities writes the render mesh's velocities; set_skin takes skin positions and
 * velocities (NULL: at rest) for set_state. */
typedef struct ps_output_sim {
    void (*upsample)(void* sim, float* positions, size_t position_stride, float* normals,
                     size_t normal_stride);
    void (*render_velocities)(const void* sim, float* velocities);
    void (*set_skin)(void* sim, const float* positions, const float* velocities);
} ps_output_sim;

typedef struct ps_output {
    const char* backend;     /* for log lines */
    uint32_t render_count;
    const float* rest_positions;
    const float* rest_normals;
    const ps_output_sim* ops;
    void* sim;
    float* positions;        /* own buffers, up to date when *_fresh */
    float* normals;
    float* spare;            /* positions upsampled beside normals that alone were needed */
    bool positions_fresh;
    bool normals_fresh;
    ps_shape shape;
    bool bound;              /* later steps write `binding` directly */
    bool binding_current;    /* `binding` holds the current shape */
    sinew_output_view binding;
} ps_output;

/* Own buffers at the rest pose. OUT_OF_MEMORY with one line naming `backend`. */
sinew_result ps_output_init(ps_output* o, const sinew_host_api* host, const char* backend,
                            const sinew_mesh_view* render, const ps_output_sim* ops, void* sim);
void ps_output_free(ps_output* o, const sinew_host_api* host);
/* After a step: upsample into the binding (own buffers then stale) or the own buffers. */
void ps_output_after_step(ps_output* o);
/* Brings the own buffers up to the current shape (normals only when asked). */
void ps_output_refresh(ps_output* o, bool need_normals);
/* After an update without a step: a binding made since the shape was last written (another
 * slot of a double-buffered output) gets the current shape. */
void ps_output_fill_binding(ps_output* o);
/* The vtable's read_output and bind_output (out NULL: unbind). */
sinew_result ps_output_read(ps_output* o, const sinew_host_api* host,
                            const sinew_output_view* out);
sinew_result ps_output_bind(ps_output* o, const sinew_host_api* host,
                            const sinew_output_view* out);
/* The vtable's get_state: the render mesh's positions and velocities (zero at rest). */
sinew_result ps_output_get_state(ps_output* o, const sinew_host_api* host,
                                 const sinew_state_view* state);
/* The vtable's set_state: a finite render-mesh state mapped onto the skin of model m
 * (ps_render_to_skin) and handed to the simulation; the output then shows the given
 * positions (normals recomputed on demand). */
sinew_result ps_output_set_state(ps_output* o, const sinew_host_api* host, const ps_model* m,
                                 const uint32_t* render_indices, const sinew_state_view* state);

/* ---- the volume term (ps_volume.c) ---- */

void ps_volume_params_default(ps_volume_params* p);
/* The local step's blend (volume3.h): keep = w_s / (w_s + w_v) (1 without the term) and the
 * band [1 - range, 1 + range]. */
void ps_volume_blend(const ps_volume_params* p, double strain_weight, float* keep, float* lo,
                     float* hi);

/* ---- pose discontinuities of a physics backend (ps_jump.c) ---- */

/* Why a step restarts the tissue. */
typedef enum ps_jump_kind {
    PS_JUMP_NONE = 0,
    PS_JUMP_FLAGGED,  /* the pose came with SINEW_POSE_DISCONTINUOUS */
    PS_JUMP_ANGLE,    /* a joint turned more than jump_angle relative to its parent */
    PS_JUMP_DISTANCE  /* a joint moved more than jump_distance rig heights relative to its
                         parent (a root: in model space) */
} ps_jump_kind;

typedef struct ps_jump_cause {
    ps_jump_kind kind;
    uint32_t joint;   /* ANGLE, DISTANCE: the joint that turned or moved the most */
    double amount;    /* its angle in degrees, or its move in rig heights */
} ps_jump_cause;

/* A physics backend's view of its pose sequence: the pose it last stepped to, the flags of the
 * poses set since, and what it needs to restart the tissue from a pose (the rig's arrays,
 * valid for the instance's lifetime). */
typedef struct ps_jump {
    sinew_host_api host;
    const char* backend;          /* for log lines */
    ps_jump_params params;
    double height;                /* the rig's height: the largest extent of the rest skin's
                                     bounding box */
    uint32_t joint_count;
    const int32_t* parents;
    const float* bind;            /* 16 per joint */
    const char* const* names;
    uint32_t render_count;
    const float* render_rest;
    const uint32_t* render_indices;
    const uint32_t* weight_offsets; /* the render mesh's weights (NULL: none) */
    const uint32_t* weight_joints;
    const float* weight_values;
    float* previous;              /* 16 per joint: the skinning matrices of the last update */
    uint32_t flags;               /* SINEW_POSE_* of the poses set since the last update */
    bool keep_next;               /* set_state: its shape belongs to the next pose */
    uint64_t updates;
} ps_jump;

void ps_jump_params_default(ps_jump_params* p);
/* Starts at the rest pose (the first step is tested against it). OUT_OF_MEMORY, one line. */
sinew_result ps_jump_init(ps_jump* j, const sinew_host_api* host, const char* backend,
                          const sinew_rig_view* rig, const ps_model* m,
                          const ps_jump_params* params);
void ps_jump_free(ps_jump* j);
/* Whether skinning matrices `after` jump from `before` by the thresholds of j (16 floats per
 * joint each); cause says which joint and how far (NONE when not). */
bool ps_jump_detect(const ps_jump* j, const float* before, const float* after,
                    ps_jump_cause* cause);
/* set_pose (after its checks): keeps the pose's flags for the next update. */
void ps_jump_set_pose(ps_jump* j, const sinew_pose_view* pose);
/* set_state: the given shape belongs to the next pose, which is then taken without a test. */
void ps_jump_set_state(ps_jump* j);
/* Start of an update to `skinning` (NULL: the pose did not change), judged once on the whole
 * change since the previous update's pose, whatever number of steps the update runs. On a
 * flagged or detected jump the tissue restarts from the pose (the linear-blend shape of the
 * render mesh mapped to the skin, base vertices at their anchors, velocities zero: ps_output's
 * set_skin), one INFO line says why, and *reset is true: the caller then steps at the new pose
 * only (nothing in between is interpolated) and zeroes the velocities after the first step,
 * which makes it quasi-static. OUT_OF_MEMORY, one line. */
sinew_result ps_jump_begin_update(ps_jump* j, ps_output* o, const ps_model* m,
                                  const float* skinning, bool* reset);

/* ---- fixed steps from an update's dt (ps_update.c, shared with fps and fps-cuda) ---- */

void ps_update_params_default(ps_update_params* p);

/* What an update asks of the simulation behind it (ps_sim or fps_sim behind `sim`): set_pose
 * takes a step's skinning matrices, step runs one step of h, clear_velocities zeroes them
 * (after a restart's step), skin_positions writes the skin (3 floats per skin vertex, the
 * model's numbering), set_output_blend makes the upsampling blend `previous` (such positions,
 * NULL: none) towards the current skin by `fraction`. */
typedef struct ps_update_sim {
    void (*set_pose)(void* sim, const float* skinning);
    sinew_result (*step)(void* sim);
    void (*clear_velocities)(void* sim);
    void (*skin_positions)(const void* sim, float* out);
    void (*set_output_blend)(void* sim, const float* previous, float fraction);
} ps_update_sim;

/* A physics backend's time: the step clock, the poses an update moves between, and the
 * state before the latest step for output interpolation. */
typedef struct ps_update {
    sinew_host_api host;
    const char* backend;          /* for log lines */
    ps_update_params params;
    sinew_step_clock clock;
    uint32_t joint_count;
    float* latest;                /* 16 per joint: the pose of the latest set_pose */
    float* from;                  /* 16 per joint: the previous update's pose */
    float* pose;                  /* 16 per joint: a step's pose, blended */
    bool pending;                 /* a pose was set since the last update */
    bool sim_at_latest;           /* the simulation's pose is `latest` exactly */
    float* previous;              /* interpolate_output: the skin before the latest step */
    bool have_previous;
    bool logged_drop;             /* the first dropped step was logged */
} ps_update;

/* Starts at the rest pose with nothing carried; h is the backend's timestep. OUT_OF_MEMORY,
 * one line. */
sinew_result ps_update_init(ps_update* u, const sinew_host_api* host, const char* backend,
                            uint32_t joint_count, uint32_t skin_count, double h,
                            const ps_update_params* params);
void ps_update_free(ps_update* u);
/* set_pose (after its checks): the pose the next update moves to. */
void ps_update_set_pose(ps_update* u, const float* skinning);
/* Begins an update of dt seconds: the pose change is judged for a jump once
 * (ps_jump_begin_update, which may restart the tissue and set *reset), then the clock plans
 * the steps (at least one after a restart); the first drop by max_substeps logs one INFO line. */
sinew_result ps_update_begin(ps_update* u, ps_jump* j, ps_output* o, const ps_model* m,
                             float dt, sinew_step_plan* plan, bool* reset);
/* The pose of step i of the plan: the previous update's pose blended towards the new one by
 * where the step ends (the new pose itself after a restart), or NULL when the simulation
 * already has it. */
const float* ps_update_step_pose(ps_update* u, const sinew_step_plan* plan, uint32_t i,
                                 bool reset);
/* Ends the update: its pose is where the next one starts. */
void ps_update_end(ps_update* u);
/* A whole update of ps or fps: begin, the planned steps on `sim` through `ops` (the skin
 * before the last one kept for interpolate_output), end, and the output (ps_output_after_step
 * when a step ran, or when interpolate_output moved the blend). */
sinew_result ps_update_run(ps_update* u, ps_jump* j, ps_output* o, const ps_model* m,
                           const ps_update_sim* ops, void* sim, float dt);
/* What every physics backend's set_pose and step check first: a pose view of the rig's joint
 * count with finite skinning matrices, and a dt finite and not negative; one line beginning
 * with `backend` per refusal. */
sinew_result ps_update_check_pose(const sinew_host_api* host, const char* backend,
                                  const sinew_pose_view* pose, uint32_t joint_count);
sinew_result ps_update_check_dt(const sinew_host_api* host, const char* backend, float dt);
/* set_state: the output shows the given shape, not a blend with the state before it. */
void ps_update_set_state(ps_update* u, const ps_update_sim* ops, void* sim);
/* profile=1: one INFO line with the updates, the steps and the steps dropped. */
void ps_update_log_profile(const ps_update* u);

/* Checks what the tissue model reads of a rig (joints, bind matrices, both meshes); each
 * refusal is one log line that begins with `backend`. */
sinew_result ps_check_rig(const sinew_host_api* host, const sinew_rig_view* rig,
                          const char* backend);

/* The same with the parameters that shape the model (bone_radii; NULL: defaults). */
sinew_result ps_model_build_with(const sinew_host_api* host, const sinew_rig_view* rig,
                                 const ps_params* params, ps_model* m);

/* Parts of the skin with no bone inside follow their nearest bone rigidly (ps_parts.c):
 * called by ps_shrink with each skin vertex's foot point (3 per vertex). One WARNING when it
 * pins any; OUT_OF_MEMORY with one log line. */
sinew_result ps_pin_unreached_parts(const sinew_host_api* host, ps_model* m, const double* foot);
/* Connected parts of the skin by its triangles: part[i] (n entries) is a vertex of i's part,
 * the same one for every vertex of the part, and itself for that vertex (ps_parts.c). */
void ps_skin_parts(const ps_model* m, uint32_t* part);
/* Is skin vertex i pinned to its bone (its base on the skin: no tissue layer)? */
static inline bool ps_vertex_pinned(const ps_model* m, uint32_t i)
{
    const double* s = m->rest + 3u * i;
    const double* b = m->rest + 3u * ((size_t)m->n + i);
    return s[0] == b[0] && s[1] == b[1] && s[2] == b[2];
}

/* Steps of ps_model_build, in order (also used when restoring a bake). */
sinew_result ps_model_weld(const sinew_host_api* host, const sinew_rig_view* rig, ps_model* m);
/* bone_radii: NULL, "" or the parameter of that name (user-given radii, Sec. 3.1). */
sinew_result ps_skeleton_build(const sinew_host_api* host, const sinew_rig_view* rig,
                               const char* bone_radii, ps_model* m);
/* Sec. 3.2 (ps_shrink.c); the rig's weights choose each vertex's bones (ps_skin_joints). */
sinew_result ps_shrink(const sinew_host_api* host, const sinew_rig_view* rig, ps_model* m);
/* Per skin vertex PS_SKIN_JOINTS entries: the joints that carry at least PS_SKIN_JOINT_SHARE
 * of its skin weight, largest first, PS_NONE after the last (all PS_NONE without weights). */
#define PS_SKIN_JOINTS 4u
#define PS_SKIN_JOINT_SHARE 0.25
sinew_result ps_skin_joints(const sinew_host_api* host, const sinew_rig_view* rig,
                            const ps_model* m, uint32_t* joints);
sinew_result ps_tissue_build(const sinew_host_api* host, ps_model* m);
/* Sorts a short list of indices (a matrix row's or column's few entries) in place. */
static inline void ps_sort_short(uint32_t* a, uint32_t count)
{
    for (uint32_t i = 1; i < count; ++i)
        for (uint32_t j = i; j > 0 && a[j - 1] > a[j]; --j) {
            uint32_t q = a[j];
            a[j] = a[j - 1];
            a[j - 1] = q;
        }
}
/* Sorted corners of prism p and its 6 tissue vertices (model numbering) in slot order. */
void ps_prism_slots(const ps_model* m, uint32_t p, uint32_t v[6]);
/* G_p of prism p (Sec. 4.1, one rotation per prism; slots v) into Gd (18 doubles, zeroed
 * here), each tet weighted by ws times its rest volume, returning the sum of the weights; with
 * strain_diag and volume (else NULL) also its tets' shares of the strain part of the matrix's
 * diagonal and each vertex's quarter of its tets' volumes. ps and fps build their tissue's
 * energy from it alike. */
double ps_prism_G(const ps_model* m, uint32_t p, const uint32_t v[6], double ws, double Gd[18],
                  double* strain_diag, double* volume);

/* The tets at each tissue vertex (compressed rows over the 2n vertices), for assembling the
 * system matrices a row at a time with the sums in the tets' order. */
typedef struct ps_vertex_tets {
    uint32_t* offsets; /* 2n + 1 */
    uint32_t* corners; /* per vertex 4 t + c for each corner c of a tet t at it, t increasing;
                          tets left out of the strain energy are not listed */
} ps_vertex_tets;
/* OUT_OF_MEMORY with one log line. */
sinew_result ps_vertex_tets_build(const sinew_host_api* host, const ps_model* m,
                                  ps_vertex_tets* out);
void ps_vertex_tets_free(const sinew_host_api* host, ps_vertex_tets* vt);
sinew_result ps_upsample_build(const sinew_host_api* host, const sinew_rig_view* rig,
                               ps_model* m);

/* The simulated mesh of the rig: the simulation mesh when it has one, else the render mesh. */
const sinew_mesh_view* ps_sim_mesh(const sinew_rig_view* rig);

/* Position of a joint in the rest pose. */
void ps_joint_position(const ps_model* m, uint32_t joint, double out[3]);

/* ---- the frame of a surface point (Sec. 6), shared by preparation and run time so that the
 * rest pose reproduces the render mesh ---- */

static inline void ps_normalize3f(float v[3], const float fallback[3])
{
    float l2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    if (l2 > 1e-30f) {
        float s = 1.0f / sqrtf(l2);
        v[0] *= s, v[1] *= s, v[2] *= s;
    } else {
        v[0] = fallback[0], v[1] = fallback[1], v[2] = fallback[2];
    }
}

/* The point p at barycentric coordinates `bary` of triangle (x0, x1, x2) and an orthonormal
 * frame there: n the interpolated vertex normal (the face normal where that vanishes), t the
 * first edge made orthogonal to n, b = n x t. */
static inline void ps_surface_frame(const float* x0, const float* x1, const float* x2,
                                    const float* n0, const float* n1, const float* n2,
                                    const float bary[3], float p[3], float t[3], float b[3],
                                    float nn[3])
{
    static const float z_axis[3] = {0.0f, 0.0f, 1.0f};
    static const float x_axis[3] = {1.0f, 0.0f, 0.0f};
    float e1[3], e2[3], fn[3];
    for (int k = 0; k < 3; ++k) {
        p[k] = bary[0] * x0[k] + bary[1] * x1[k] + bary[2] * x2[k];
        nn[k] = bary[0] * n0[k] + bary[1] * n1[k] + bary[2] * n2[k];
        e1[k] = x1[k] - x0[k];
        e2[k] = x2[k] - x0[k];
    }
    fn[0] = e1[1] * e2[2] - e1[2] * e2[1];
    fn[1] = e1[2] * e2[0] - e1[0] * e2[2];
    fn[2] = e1[0] * e2[1] - e1[1] * e2[0];
    ps_normalize3f(fn, z_axis);
    ps_normalize3f(nn, fn);
    float d = e1[0] * nn[0] + e1[1] * nn[1] + e1[2] * nn[2];
    for (int k = 0; k < 3; ++k) t[k] = e1[k] - d * nn[k];
    float l2 = t[0] * t[0] + t[1] * t[1] + t[2] * t[2];
    if (!(l2 > 1e-30f)) {
        /* collapsed edge: any direction orthogonal to n */
        const float* a = fabsf(nn[0]) < 0.9f ? x_axis : z_axis;
        d = a[0] * nn[0] + a[1] * nn[1] + a[2] * nn[2];
        for (int k = 0; k < 3; ++k) t[k] = a[k] - d * nn[k];
    }
    ps_normalize3f(t, x_axis);
    b[0] = nn[1] * t[2] - nn[2] * t[1];
    b[1] = nn[2] * t[0] - nn[0] * t[2];
    b[2] = nn[0] * t[1] - nn[1] * t[0];
}

/* Area-weighted normal of skin vertex i from `positions` (3 floats per skin vertex), over the
 * model's vertex-triangle lists; zero for a vertex without triangles. */
static inline void ps_vertex_normal(const ps_model* m, const float* positions, uint32_t i,
                                    float out[3])
{
    float s[3] = {0.0f, 0.0f, 0.0f};
    for (uint32_t k = m->vertex_tri_offsets[i]; k < m->vertex_tri_offsets[i + 1]; ++k) {
        const uint32_t* tri = m->triangles + 3u * m->vertex_tris[k];
        const float* a = positions + 3u * tri[0];
        const float* b = positions + 3u * tri[1];
        const float* c = positions + 3u * tri[2];
        float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        float e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        s[0] += e1[1] * e2[2] - e1[2] * e2[1];
        s[1] += e1[2] * e2[0] - e1[0] * e2[2];
        s[2] += e1[0] * e2[1] - e1[1] * e2[0];
    }
    static const float zero[3] = {0.0f, 0.0f, 0.0f};
    ps_normalize3f(s, zero);
    out[0] = s[0], out[1] = s[1], out[2] = s[2];
}

/* ---- geometry helpers (ps_geometry.c) ---- */

/* Closest point of segment [a, b] to p; returns the parameter t in [0, 1]. */
double ps_closest_on_segment(const double p[3], const double a[3], const double b[3],
                             double out[3]);
/* Closest point of triangle (a, b, c) to p with its barycentric coordinates. */
void ps_closest_on_triangle(const double p[3], const double a[3], const double b[3],
                            const double c[3], double out[3], double bary[3]);
/* Squared distance between segment [p0, p1] and triangle (a, b, c). */
double ps_segment_triangle_dist2(const double p0[3], const double p1[3], const double a[3],
                                 const double b[3], const double c[3]);

/* A uniform grid over triangles for closest-point queries. */
typedef struct ps_grid {
    double origin[3];
    double cell;
    uint32_t dims[3];
    uint32_t* cell_offsets; /* dims product + 1 */
    uint32_t* items;
    const double* positions;
    const uint32_t* triangles;
    uint32_t triangle_count;
} ps_grid;

sinew_result ps_grid_build(const sinew_host_api* host, const double* positions,
                           uint32_t vertex_count, const uint32_t* triangles,
                           uint32_t triangle_count, ps_grid* grid);
void ps_grid_free(const sinew_host_api* host, ps_grid* grid);
/* The triangle closest to p (PS_NONE for a grid without triangles), with its closest point
 * and barycentric coordinates. Ties go to the lower triangle index. */
uint32_t ps_grid_closest(const ps_grid* grid, const double p[3], double out[3], double bary[3]);

/* ---- the run-time simulation (ps_sim.c) ---- */

typedef struct ps_sim ps_sim;

/* Projective dynamics on the model with the given parameters: the constant system matrix is
 * assembled and factored here (Sec. 4). */
sinew_result ps_sim_create(const sinew_host_api* host, const ps_model* model,
                           const ps_params* params, ps_sim** out);
void ps_sim_destroy(ps_sim* sim);
/* Sets the anchor transforms from skinning matrices (16 floats per joint, finite), or the rest
 * pose for NULL. Takes effect at the next step. */
void ps_sim_set_pose(ps_sim* sim, const float* skinning);
/* One time step of h (Sec. 4, 2019 paper Alg. 1). energies: NULL, or room for iterations + 1
 * values: the PD energy min_R E(X, R) of the start and after each iteration (tests). */
sinew_result ps_sim_step(ps_sim* sim, double* energies);
/* The tissue positions (3N doubles, x then y then z columns of N) and velocities (same). */
const double* ps_sim_positions(const ps_sim* sim);
const double* ps_sim_velocities(const ps_sim* sim);
/* Replaces the skin positions and velocities (3 floats per skin vertex each, velocities may
 * be NULL); base vertices go to their anchors with zero velocity. */
void ps_sim_set_skin(ps_sim* sim, const float* positions, const float* velocities);
/* Zeroes every velocity (after the quasi-static step of a restart, ps_jump). */
void ps_sim_clear_velocities(ps_sim* sim);
/* Writes the render mesh from the current skin (Sec. 6), or from its blend set by
 * ps_sim_set_output_blend; normals may be NULL. */
void ps_sim_upsample(ps_sim* sim, float* positions, size_t position_stride, float* normals,
                     size_t normal_stride);
/* The skin's positions, 3 floats per skin vertex. */
void ps_sim_skin_positions(const ps_sim* sim, float* out);
/* Later upsampling blends `previous` (skin positions as ps_sim_skin_positions gives them, kept
 * by the caller; NULL: none) towards the current skin by `fraction` (interpolate_output). */
void ps_sim_set_output_blend(ps_sim* sim, const float* previous, float fraction);
/* Render-vertex velocities interpolated from the skin vertices. */
void ps_sim_render_velocities(const ps_sim* sim, float* velocities);
/* The PD energy min_R E(X, R) at the current positions for the current step's prediction. */
double ps_sim_energy(ps_sim* sim);
/* Accumulated times in seconds (profile=1): local step, right-hand side, solve, upsampling,
 * and the whole of ps_sim_step; and the number of steps. */
void ps_sim_profile(const ps_sim* sim, double seconds[5], uint64_t* steps);
/* Accumulated times in seconds (profile=1, collisions on): the collision work (the pose's
 * target clamp, the angle test, the projections) and the solves with the second factor; both
 * are also inside the solve and whole-step figures of ps_sim_profile. */
void ps_sim_profile_collisions(const ps_sim* sim, double seconds[2]);
/* The factor and matrix statistics for logs and tests. */
size_t ps_sim_matrix_nnz(const ps_sim* sim);
size_t ps_sim_factor_nnz(const ps_sim* sim);
/* Writes the system matrix (upper triangle, compressed columns) and the per-vertex masses and
 * anchor weights through `writer` (the bit-for-bit comparison of the bake test). */
sinew_result ps_sim_dump(const ps_sim* sim, const sinew_bake_writer* writer);

/* ---- local collisions (ps_collide.c, ps_collide_poses.c, Sec. 5) ---- */

/* Affine transform of p by a column-major 4x4 float matrix (a skinning matrix; the identity
 * gives p exactly). */
static inline void ps_transform_point(const float* T, const double p[3], double out[3])
{
    for (int r = 0; r < 3; ++r)
        out[r] = (double)T[r] * p[0] + (double)T[4 + r] * p[1] + (double)T[8 + r] * p[2] +
                 (double)T[12 + r];
}

/* Vertex i's target in `target` (N rows, x/y/z columns): its rest position `rest` (3 per
 * vertex) moved by the skinning matrix T. */
static inline void ps_bone_target(double* target, uint32_t N, uint32_t i, const float* T,
                                  const double* rest)
{
    double p[3];
    ps_transform_point(T, rest + 3u * i, p);
    for (int r = 0; r < 3; ++r) target[(size_t)r * N + i] = p[r];
}

/* A pose's skinning matrices (16 floats per joint; NULL: identities) into `dst`. */
static inline void ps_copy_skinning(float* dst, const float* skinning, uint32_t joint_count)
{
    for (uint32_t j = 0; j < joint_count; ++j)
        for (int k = 0; k < 16; ++k)
            dst[16u * j + k] = skinning ? skinning[16u * j + k] : ((k % 5 == 0) ? 1.0f : 0.0f);
}

static inline double ps_dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline void ps_cross3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static inline void ps_normalize3(double v[3])
{
    double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (l > 0.0) v[0] /= l, v[1] /= l, v[2] /= l;
}

/* Entry `index` of a sparse row or column being gathered, `stamp` its index + 1: listed in
 * list[*k] (and its value set to v) the first time, v added to it the times after (mark: per
 * index the stamp that last listed it; acc NULL: counting only, no values). */
static inline void ps_gather_entry(uint32_t index, uint32_t stamp, double v, double* acc,
                                   uint32_t* mark, uint32_t* list, uint32_t* k)
{
    if (mark[index] == stamp) {
        if (acc) acc[index] += v;
    } else {
        mark[index] = stamp;
        if (acc) acc[index] = v;
        list[(*k)++] = index;
    }
}

/* Coordinate c of vertex v in positions x of N rows, x/y/z columns. */
static inline double ps_col_at(const double* x, uint32_t N, uint32_t v, int c)
{
    return x[(size_t)c * N + v];
}

/* Joint j's incoming bone, the outgoing bone closest to its continuation, and the number of
 * outgoing bones (PS_NONE where there is none). */
void ps_joint_bones(const ps_model* m, uint32_t j, uint32_t* in, uint32_t* out,
                    uint32_t* child_count);

/* A growing list of candidate pairs. */
typedef struct ps_pair_list {
    ps_collision_pair* items;
    uint32_t count, capacity;
} ps_pair_list;
bool ps_pair_push(const sinew_host_api* host, ps_pair_list* l, ps_collision_pair p);
/* Sorts the list and drops duplicates; false when memory runs out. */
bool ps_pair_sort_unique(const sinew_host_api* host, ps_pair_list* l);
/* Sorted and unique, the list becomes the model's candidate pairs (the list is emptied). */
sinew_result ps_pair_store(const sinew_host_api* host, ps_pair_list* l, ps_model* m);

/* The joints whose extreme poses give candidates: those `list` names (comma-separated; an
 * unknown name or one that does not join two bones is SINEW_ERROR_PARAMETER with one log
 * line), else the automatic choice (fold names, else limb-like middle joints). chosen: one
 * byte per joint. */
sinew_result ps_collide_select(const sinew_host_api* host, const sinew_rig_view* rig,
                               const ps_model* m, const char* list, uint8_t* chosen,
                               uint32_t* count);
/* Sec. 5.1: bends each chosen joint to extreme angles in an offline PD simulation, finds the
 * colliding skin vertices (vertex in tetrahedron, spatial hash), splits and pairs them; the
 * union goes to m->collision_pairs. */
sinew_result ps_collide_candidates(const sinew_host_api* host, const sinew_rig_view* rig,
                                   ps_model* m, const ps_params* params);
/* The same without the offline simulation: the skin of each chosen joint's two bones within
 * `reach` joint radii of it (0: ps's default), each vertex paired with the closest one of the
 * other bone at rest. */
sinew_result ps_collide_candidates_near(const sinew_host_api* host, const sinew_rig_view* rig,
                                        ps_model* m, const ps_params* params, double reach);

/* The run-time detection and projection over a model's pairs (Sec. 5.2, 5.3). */
typedef struct ps_collide ps_collide;
sinew_result ps_collide_create(const sinew_host_api* host, const ps_model* m, ps_collide** out);
void ps_collide_destroy(ps_collide* c);
/* The skin vertices that carry a collision constraint (every vertex of a pair). */
uint32_t ps_collide_vertex_count(const ps_collide* c);
const uint32_t* ps_collide_vertices(const ps_collide* c);
/* Constrained skin vertices the last projection moved (on the wrong side of a contact plane). */
uint32_t ps_collide_detected(const ps_collide* c);
/* For a copy of ps_collide_project (without the angle test) on another device: the side
 * entries of the skin, per constrained vertex s its entries [offsets[s], offsets[s + 1])
 * (vertex_count + 1 offsets), per entry its contact, side (+1, -1, 0: none) and margin, and the
 * slack below the margin that counts as on the plane; single precision. */
uint32_t ps_collide_entry_count(const ps_collide* c);
uint32_t ps_collide_contact_count(const ps_collide* c);
void ps_collide_skin_entries(const ps_collide* c, uint32_t* offsets, uint32_t* contact,
                             float* side, float* margin, float* slack);
/* The contact planes of the current pose (ps_collide_pose), 8 floats per contact: the point,
 * 1 when the pose gives a plane (else 0), the unit normal, 0. */
void ps_collide_planes(const ps_collide* c, float* out);
/* The collision state of a simulation (NULL without collisions or without pairs). */
const ps_collide* ps_sim_collide(const ps_sim* sim);
/* Bone positions for skinning matrices (16 floats per joint), or the rest pose for NULL. */
void ps_collide_pose(ps_collide* c, const float* skinning);
/* Adds weight[s] * P_s to b (N rows, x/y/z columns) for each constrained vertex s: its
 * projection onto its side of the contact planes where it has crossed one, else its position
 * in x (ps_collide.c explains the planes). */
void ps_collide_project(ps_collide* c, const double* x, uint32_t N, const double* weight,
                        double* b);
/* Fig. 10's angle test of every candidate pair in the shape x (N rows, x/y/z columns), over
 * the job system; until the next call, ps_collide_project tests a vertex against a contact
 * plane only where a pair of that contact with the vertex was reported (the others get the
 * do-nothing projection). Call once per step. */
void ps_collide_detect(ps_collide* c, const double* x, uint32_t N);
/* Pairs the last ps_collide_detect reported. */
uint32_t ps_collide_active_pairs(const ps_collide* c);
/* on: ps_collide_project tests only what the last ps_collide_detect reported (the paper's use
 * of Fig. 10); off (the default): every constrained vertex against all its planes. */
void ps_collide_use_angle_test(ps_collide* c, int on);
/* Keeps the anchor targets of the base vertices of constrained skin vertices (N rows, x/y/z
 * columns) on their side of the contact planes of the current pose. */
void ps_collide_clamp_targets(ps_collide* c, double* target, uint32_t N);
/* ps_collide_clamp_targets for hard anchors (ps_clamp_spread.c): the clamp's offsets of the base
 * targets spread over `rings` one-rings around the clamped skin, so that a clamped anchor does
 * not pull a pit into the skin over it. The state holds the scratch of that spreading. */
typedef struct ps_clamp_spread ps_clamp_spread;
sinew_result ps_clamp_spread_create(const sinew_host_api* host, const ps_model* m,
                                    uint32_t rings, ps_clamp_spread** out);
void ps_clamp_spread_destroy(ps_clamp_spread* s);
void ps_clamp_spread_apply(ps_clamp_spread* s, ps_collide* c, double* target, uint32_t N);

/* ---- decimated simulation mesh (ps_decimate.c, Sec. 6) ---- */

/* `view` = `rig`, with a simulation mesh decimated from the render mesh (into `mesh`, free
 * with sinew_decimated_free) when the rig has none and the render mesh has more than
 * params->decimate_above vertices; without meshoptimizer one WARNING line and no change. */
sinew_result ps_decimate_view(const sinew_host_api* host, const sinew_rig_view* rig,
                              const ps_params* params, sinew_rig_view* view,
                              sinew_decimated_mesh* mesh);

/* The ps parameters that shape the model of fps and pbd from theirs: skin sliding, the
 * decimation and the bone radii (1024 chars, as ps_params's); the rest zero. */
void ps_model_params_of(ps_params* out, int sliding, uint32_t decimate_above,
                        uint32_t simulation_vertices, const char* bone_radii);

/* The model of fps and pbd: a lone large render mesh decimated first, the model built on the
 * simulated mesh and, when candidate_reach > 0, the joints' contact candidates within that
 * many joint radii (ps_collide_candidates_near); each phase timed in m->build_seconds. */
sinew_result ps_model_build_decimated(const sinew_host_api* host, const sinew_rig_view* rig,
                                      const ps_params* params, double candidate_reach,
                                      ps_model* m);

/* ---- skin sliding (ps_sliding.c, Sec. 4.2) ---- */

/* Builds the anchor rings and the records of the base vertices near joints (after ps_shrink). */
sinew_result ps_sliding_build(const sinew_host_api* host, ps_model* m);
/* The run-time evaluation: posed anchors and skeleton. */
typedef struct ps_slide ps_slide;
sinew_result ps_slide_create(const sinew_host_api* host, const ps_model* m, ps_slide** out);
void ps_slide_destroy(ps_slide* s);
/* Writes the anchor targets of the sliding base vertices (N rows, x/y/z columns) for skinning
 * matrices (16 floats per joint; NULL: rest pose, which gives the rest positions exactly). */
void ps_slide_targets(ps_slide* s, const float* skinning, double* target, uint32_t N);
/* The hard anchors' targets after the bones placed them (fps, pbd): skin sliding near joints
 * (Sec. 4.2, when `slide`), then the joints' contacts (2018 Sec. 5, when `joints`) keep the
 * anchors near a folding joint on their side of its plane, their clamp spread by `spread`
 * (ps_clamp_spread.c). */
void ps_hard_targets_adjust(ps_slide* slide, ps_collide* joints, ps_clamp_spread* spread,
                            const float* skinning, double* target, uint32_t N);

/* ---- the backend instance (ps.c) ---- */

/* The model and simulation of a ps instance (NULL for anything else), for tests. */
const ps_model* ps_instance_model(void* instance);
ps_sim* ps_instance_sim(void* instance);

/* ---- baking (ps_bake.c) ---- */

#define PS_BAKE_MAGIC 0x314b4250u /* "PBK1" little-endian */
#define PS_BAKE_VERSION 2u /* 2: optional tagged sections before the end marker */

/* Writes the pose-independent model (what ps_model_build computed) as one little-endian blob. */
sinew_result ps_bake_write(const sinew_host_api* host, const sinew_rig_view* rig,
                           const ps_model* model, const sinew_bake_writer* writer);
/* Restores a model from a blob written by ps_bake_write for this rig; a truncated,
 * inconsistent or foreign blob is SINEW_ERROR_FILE_FORMAT with one log line. */
sinew_result ps_bake_read(const sinew_host_api* host, const sinew_rig_view* rig,
                          const void* data, size_t size, ps_model* model);
/* Writes every array of the model, derived ones included (tests compare two of these). */
sinew_result ps_model_dump(const ps_model* model, const sinew_bake_writer* writer);

#endif
