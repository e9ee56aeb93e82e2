/* The device half of the fps-cuda plugin (fps_cuda_device.cu): the simulation of `fps`
 * (fast projective skinning 2019, Sec. 4, Alg. 1 and 2) on a CUDA device, for one or several
 * characters launched together. Plain C interface; the plugin's host half (fps_cuda.c) and the
 * benchmark call it. SPDX-License-Identifier: MIT
 *
 * What runs where. The CPU backend `fps` prepares everything (ps's model, the numbering with
 * the free vertices first, K_ss in ELL/CRS, K_sb, the gathers, the prisms) and this layer
 * copies it to the device once. Per frame the host computes the constrained (base) vertices'
 * targets with ps's shared sliding code, as fps does (fps_sim_update_targets), and the batch
 * copies them up with the skinning matrices; everything else of a step runs on the device:
 * prediction, `iterations` x {local step (one thread per prism, fps_local_prism), right-hand
 * side (one thread per free row, fps_rhs_row), PCG of Alg. 2 warm-started (init kernel and
 * three kernels per iteration, block sums in shared memory and one atomicAdd per block)},
 * the velocity update, the skin's float positions and area-weighted normals, and the
 * upsampling into the output by the method fps resolved: MLS (2019 Sec. 5, one thread per
 * render vertex over sinew_mls_eval.h, the weights fps baked) or ps's normal displacement.
 *
 * Global collisions (Sec. 6, desc.collisions; fps_cuda_collide.h): the host detects and
 * hands each new pair set over with fpsc_set_collisions (from the state copy
 * fpsc_state_mirror keeps); per PD iteration a phase with one thread per pair projects and
 * writes the pairs' right-hand-side shares next to the local step, the right-hand side adds
 * each row's Q_col^T p_col (and its limb capsule contact's w p, fps's capsules), and the
 * products read A's CRS part followed by A_col's
 * off-diagonal entries (A's diagonal and J carry A_col's diagonal).
 *
 * The matrix-vector products (PCG init and kernel 1) read the ELL part of Sec. 4.2 row-wise
 * (column-major, coalesced) and stage each block's CRS part in shared memory with coalesced
 * loads first; the row sums keep sparse_ellcrs.h's order (diagonal, ELL, CRS in order), so
 * staging changes no result. A block whose CRS part exceeds the staging space reads it from
 * global memory instead (same order).
 *
 * Batching. A batch holds instances on one device and steps them together: every kernel
 * covers all of them, a block belonging to one instance (per-instance block offsets in a
 * table), so 64 characters cost the launches of one. A batch's step is captured once into a
 * CUDA Graph and replayed (re-captured when its members change), or, where the device supports
 * cooperative launch and the batch is small, run as one persistent cooperative kernel with
 * grid-wide synchronisation between the phases. Both call the same phase functions. */
#ifndef SINEW_FPS_CUDA_DEVICE_H
#define SINEW_FPS_CUDA_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include <sinew/sinew_plugin.h>

#include "fps_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif


/* One render vertex as a displacement of the simulated skin (ps_upsample's fields). */
typedef struct fpsc_upsample {
    uint32_t triangle; /* skin triangle, or UINT32_MAX: rigid with skin vertex `vertex` */
    uint32_t vertex;
    float bary[3];
    float offset[3];
    float normal[3];
} fpsc_upsample;

typedef struct fpsc_desc {
    int ordinal;                /* CUDA device */
    /* The simulation as fps prepared it (fps_sim_arrays, backends/fps/fps_internal.h); the
     * pointers must outlive the instance. */
    uint32_t n, N, ns;          /* skin vertices, tissue vertices, free unknowns */
    uint32_t prism_count;
    double h, damping;
    const uint32_t* perm;       /* N: new index -> model index */
    const uint32_t* inv;        /* N: model index -> new index */
    const double* mass_h2;      /* ns */
    fps_prisms prisms;
    const uint32_t* gather_ptr; /* ns + 1 */
    const uint32_t* gather;
    sinew_ellcrs A;
    const double* jinv;
    sinew_crs Ksb;
    double* x;                  /* N x 3: the host copy of the state (new numbering) */
    double* v;
    const double* target;       /* N x 3, model numbering: the constrained vertices' targets */
    const float* skinning;      /* 16 per joint: the pose of those targets */
    uint32_t iterations, pcg_iterations;
    uint32_t joint_count;
    /* Upsampling (ps's records). */
    uint32_t render_count;
    const fpsc_upsample* upsample;        /* render_count */
    uint32_t triangle_count;              /* skin triangles */
    const uint32_t* triangles;            /* 3 per triangle, skin indices */
    const uint32_t* vertex_tri_offsets;   /* n + 1 */
    const uint32_t* vertex_tris;
    const uint32_t* skin_joint;           /* n: the joint of a rigid render vertex's skin vertex */
    /* MLS upsampling (2019 Sec. 5) instead of the records above, exactly when fps resolved
     * upsampling to mls (fps_sim_mls): render_count * SINEW_MLS_K entries each, the layout of
     * sinew_mls_weights; all NULL: normal displacement. Uploaded once. */
    const uint32_t* mls_indices;
    const float* mls_weights;
    const float* mls_normal_weights;
    /* Global collisions (Sec. 6; fps_cuda_collide.h): nonzero reserves the device arrays and
     * keeps a host copy of the state after every step (fpsc_state_mirror) for the host's
     * detection; the pairs come per step through fpsc_set_collisions. The static data are
     * fps_collide's (fps_collide_data): */
    int collisions;
    uint32_t col_triangle_count;
    const uint32_t* col_triangles; /* 3 rows of x per skin triangle */
    const double* col_sign;        /* per triangle */
    double col_weight, col_margin;
    /* fps's limb capsules (col_bone_count 0 and NULL: none): per bone its FPS_CAP_FRAME rest
     * values and FPS_CAP_SLICES x FPS_CAP_SECTORS radii (fps_collide_data), uploaded once; the
     * contacts come with fpsc_set_collisions, the bones' frames of each step with
     * fpsc_set_capsule_pose. */
    uint32_t col_bone_count;
    const double* col_cap_frame;
    const double* col_cap_radii;
} fpsc_desc;

/* One step's collision data (fpsc_col_host_collisions), uploaded when the pair set changed. */
typedef struct fpsc_collisions {
    uint32_t pair_count;
    uint32_t stride;            /* contrib stride, >= pair_count */
    const uint32_t* pair_row;   /* pair_count rows of x, < N */
    const uint32_t* pair_tri;   /* pair_count triangles, < col_triangle_count */
    const uint32_t* gather_ptr; /* ns + 1 */
    const uint32_t* gather;     /* gather_ptr[ns] slots, each < 12 x stride */
    const uint32_t* crs_ptr;    /* ns + 1: A's CRS part, then A_col's off-diagonal part per row */
    const uint32_t* crs_col;
    const double* crs_val;
    const double* diagonal;     /* ns: A's diagonal plus A_col's */
    const double* jinv;         /* ns: its inverse, the Jacobi preconditioner */
    uint32_t cap_count;         /* limb capsule contacts (0 without) */
    const uint32_t* cap_of_row; /* ns: each row's capsule bone or FPS_COLLIDE_NONE; NULL only
                                   when cap_count is 0 (then no row has a contact) */
} fpsc_collisions;

typedef struct fpsc_instance fpsc_instance;
typedef struct fpsc_batch fpsc_batch;

typedef enum fpsc_launch {
    FPSC_LAUNCH_AUTO = 0,        /* cooperative for small batches where supported, else graph */
    FPSC_LAUNCH_GRAPH = 1,       /* one CUDA Graph per step */
    FPSC_LAUNCH_COOPERATIVE = 2, /* one persistent kernel (refused where unsupported) */
    FPSC_LAUNCH_STREAM = 3       /* plain launches, no graph (debugging, the baseline) */
} fpsc_launch;

/* Uploads the simulation (state = the arrays' x and v). */
sinew_result fpsc_create(const sinew_host_api* host, const fpsc_desc* desc, fpsc_instance** out);
/* Removes the instance from its batch (if any) first. NULL is ignored. */
void fpsc_destroy(fpsc_instance* inst);

/* Output of later steps: device pointers (memory imported from Vulkan, byte strides; normals
 * may be NULL), or all NULL: the instance's own device buffers, copied to its host copy
 * (fpsc_host_output) after every step. */
void fpsc_set_output(fpsc_instance* inst, float* device_positions, size_t position_stride,
                     float* device_normals, size_t normal_stride);
/* Whether the next batch steps include this instance (default 1): a batch whose members did
 * not all step in an update steps only those that did (a flag per frame, no re-capture). */
void fpsc_set_active(fpsc_instance* inst, int active);
/* Copies the latest output (where the last step wrote it: own buffers or bound device memory,
 * which must still be mapped; before any step the own buffers) to packed host arrays (either
 * may be NULL). Synchronous. */
sinew_result fpsc_read_output(fpsc_instance* inst, float* positions, float* normals);
/* Writes packed host arrays (normals may be NULL) to this step's output (bound device memory),
 * on `stream` (a batch's), which then holds the latest shape: an update that runs no step after
 * the output moved to another slot. With `wait` the host waits for the copies. */
sinew_result fpsc_write_output(fpsc_instance* inst, const float* positions, const float* normals,
                               void* stream, int wait);
/* The host copy of the last step's output (12-byte packed; valid after fpsc_batch_wait), or
 * NULL when the output goes to device pointers. */
const float* fpsc_host_positions(const fpsc_instance* inst);
const float* fpsc_host_normals(const fpsc_instance* inst);

/* Copies the state (desc.x, desc.v, N x 3 new numbering) to the device, or back. */
sinew_result fpsc_upload_state(fpsc_instance* inst);
sinew_result fpsc_download_state(fpsc_instance* inst);

/* Collisions (desc.collisions): the new pair set, A's diagonal, J and the merged CRS part,
 * enqueued on the instance's batch stream before its next step (the caller finished the step
 * before). The device arrays keep their addresses while the data fit; where they grow, the
 * batch rebuilds its tables and re-captures its graph at the next step. INVALID_ARGUMENT
 * (one line) for an instance without collisions or data out of range, OUT_OF_MEMORY, DEVICE. */
sinew_result fpsc_set_collisions(fpsc_instance* inst, const fpsc_collisions* c);
/* With limb capsules (desc.col_bone_count > 0): the bones' frames at this step's pose (9 per
 * bone, fpsc_col_host_capsule_pose), enqueued like fpsc_set_collisions, every step.
 * INVALID_ARGUMENT (one line) for an instance without capsules, NULL or non-finite frames;
 * DEVICE. */
sinew_result fpsc_set_capsule_pose(fpsc_instance* inst, const double* frames);
/* The check fpsc_set_collisions makes first (plain C in fps_cuda_collide.c, so that the CPU
 * tests run it): NULL when c fits a system of ns unknowns, N rows of x, triangle_count skin
 * triangles and bone_count capsule tables (every index the kernels follow in range, every
 * gather slot a written one: slot 0..3 of a pair below pair_count; as many rows with a
 * capsule contact as cap_count), else the reason. */
const char* fpsc_col_check(uint32_t ns, uint32_t N, uint32_t triangle_count,
                           uint32_t bone_count, const fpsc_collisions* c);
/* The state after the last finished step (x, then v: N x 3 each, the device numbering), or
 * NULL without collisions. Valid after fpsc_batch_wait (and after create / upload_state). */
const double* fpsc_state_mirror(const fpsc_instance* inst);

sinew_result fpsc_batch_create(const sinew_host_api* host, int ordinal, fpsc_launch launch,
                               fpsc_batch** out);
/* Destroys the batch; its members are left without a batch. NULL is ignored. */
void fpsc_batch_destroy(fpsc_batch* batch);
/* Joins (an instance is in at most one batch, on the batch's device). */
sinew_result fpsc_batch_add(fpsc_batch* batch, fpsc_instance* inst);
/* Leaves (waits for the batch's work first); nothing when inst is not a member. */
void fpsc_batch_remove(fpsc_batch* batch, fpsc_instance* inst);
uint32_t fpsc_batch_size(const fpsc_batch* batch);
/* Makes ready the next step of every member: rebuilds the tables after members joined or
 * left or arrays moved, stages each member's targets (from desc.target, which the caller
 * updated with fps_sim_update_targets) and captures the graph when needed. Everything here
 * that may wait for the whole device (cudaFree) comes before the caller queues any wait on a
 * renderer's semaphore, which the renderer may signal only after the update returns. */
sinew_result fpsc_batch_prepare(fpsc_batch* batch);
/* Launches the step that fpsc_batch_prepare made ready (an error without it); asynchronous,
 * and it waits for nothing on the host. */
sinew_result fpsc_batch_step(fpsc_batch* batch);
/* Waits for the step; SINEW_ERROR_BACKEND_FAILED (one line) when a member's step produced a
 * non-finite value (that member's shape is then kept and its velocities cleared, as fps
 * does); the output of such a member is left as it was. */
sinew_result fpsc_batch_wait(fpsc_batch* batch);
/* The launch actually used (AUTO resolved at the first step). */
fpsc_launch fpsc_batch_launch(const fpsc_batch* batch);
/* The batch's stream (a cudaStream_t). */
void* fpsc_batch_stream(const fpsc_batch* batch);
/* Times every later step with CUDA events (recorded around the step's launches on the
 * batch's stream); fpsc_batch_profile returns the sum in milliseconds and the step count. */
sinew_result fpsc_batch_set_profile(fpsc_batch* batch, int on);
void fpsc_batch_profile(const fpsc_batch* batch, double* gpu_ms, uint64_t* steps);

#ifdef __cplusplus
}
#endif

#endif
