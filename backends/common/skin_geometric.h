/* The instance, parameters, output and state handling shared by the geometric CPU backends
 * (lbs, dqs). Each backend supplies a sinew_geo_ops (how a pose becomes per-joint transforms
 * and one kernel per instruction set) and points its vtable at these functions.
 * SPDX-License-Identifier: MIT
 *
 * Contract of both backends (what the vtable documentation leaves to the backend):
 * - Parameters: `normals` = 1 (default) | 0, `simd` = auto (default) | scalar | sse | avx2 |
 *   avx512. An unknown or repeated key or a bad value is SINEW_ERROR_PARAMETER; an instruction
 *   set the CPU (or this build) lacks is SINEW_ERROR_BACKEND_UNAVAILABLE. The same keys come
 *   typed in a sinew_backend_params_ext of the `next` chain; any other extension there is
 *   SINEW_ERROR_UNSUPPORTED.
 * - Rig: any padded width >= 1 (fast paths for 4 and 8 influences); each row's first weight
 *   must be positive (the runtime sorts rows by decreasing weight), no weight negative.
 * - Poses: the skinning matrices are taken as affine (row 3 is ignored). lbs uses them as they
 *   are; dqs turns each into a unit dual quaternion in set_pose, projecting scale and shear
 *   away (backends/common/dual_quat.h says how).
 * - Before any pose is set the output is the rest mesh. set_pose only records the pose: the
 *   shape moves to it at the next step (geometric backends ignore dt, but refuse a nonfinite
 *   or negative one).
 * - Normals: lbs transforms them by the blended 3x3 matrix (not its inverse transpose: exact
 *   for rotations and uniform scale, approximate under non-uniform scale or shear), dqs rotates
 *   them by the blended rotation; both renormalise, and a normal that blends to (nearly) zero
 *   is written as a zero vector. With normals=0 steps never touch any normal array and
 *   read_output returns the rest normals.
 * - Output: the backend owns packed position and normal buffers. bind_output redirects later
 *   steps to the caller's arrays (strides >= 12 bytes and multiples of 4, 4-byte aligned
 *   arrays, vertex_count at least the render vertex count; NULL normals: positions only;
 *   a non-NULL `next` is SINEW_ERROR_UNSUPPORTED). A bound step writes only the caller's
 *   arrays, never reads them back; the own buffers are refreshed lazily by running the same
 *   kernel on the same pose when read_output or get_state needs them, so both always return the
 *   latest shape, bit for bit what the bound step wrote.
 * - State: get_state gives the current positions and zero velocities. set_state makes the
 *   given positions the current shape until the next step (velocities are ignored: these
 *   backends have no dynamics); its normals are the rest normals skinned with the most recent
 *   pose given to set_pose (also one given after set_state), or the rest normals when no pose
 *   was set. set_state does not write into a bound output: only steps do.
 * - Every entry point checks its arguments; a NULL or foreign instance returns
 *   SINEW_ERROR_INVALID_ARGUMENT without a log line (there is no host to log through). */
#ifndef SINEW_COMMON_SKIN_GEOMETRIC_H
#define SINEW_COMMON_SKIN_GEOMETRIC_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sinew/sinew_host.h>

#include "cpu_features.h"
#include "sinew_output.h"
#include "skin_job.h"

/* Vertices per job: large enough that scheduling costs nothing next to the work (a chunk takes
 * tens of microseconds), small enough that both cores get several chunks of a 20k mesh. */
#define SINEW_GEO_GRAIN 4096u

typedef struct sinew_geo_ops {
    const char* name;
    uint32_t transform_floats; /* per joint: 16 (lbs) or 8 (dqs) */
    /* Turns joint_count finite skinning matrices into the kernels' per-joint transforms. */
    void (*convert_pose)(const float* skinning, uint32_t joint_count, float* out);
    sinew_skin_kernel_fn kernels[SINEW_SIMD_COUNT]; /* NULL where not built */
} sinew_geo_ops;

typedef enum sinew_geo_shape {
    SINEW_GEO_SHAPE_REST,  /* no pose stepped yet */
    SINEW_GEO_SHAPE_POSED, /* skinned with `stepped` */
    SINEW_GEO_SHAPE_STATE  /* positions given by set_state */
} sinew_geo_shape;

#define SINEW_GEO_MAGIC 0x736b6e67u /* tells our instances from foreign pointers */

typedef struct sinew_geo_instance {
    uint32_t magic;
    sinew_host_api host;
    const sinew_geo_ops* ops;
    uint32_t vertex_count;
    uint32_t joint_count;
    uint32_t width;
    uint32_t* offsets;    /* see sinew_skin_job */
    const float* weights; /* the rig's padded weights: valid for the instance's life */
    const float* rest_positions;
    const float* rest_normals;
    float* rest;      /* 8 floats per vertex, see sinew_skin_job */
    float* positions; /* own output, 3 floats per vertex */
    float* normals;
    float* latest;     /* transforms of the most recent set_pose */
    float* stepped;    /* transforms the last step used */
    bool has_pose;     /* set_pose succeeded at least once */
    bool pose_pending; /* latest differs from stepped */
    bool want_normals;
    sinew_simd simd;
    sinew_skin_kernel_fn kernel;
    bool bound;
    sinew_output_view binding;
    sinew_geo_shape shape;
    bool positions_fresh; /* own positions hold the current shape */
    bool normals_fresh;   /* own normals hold the current normals */
} sinew_geo_instance;

static inline sinew_geo_instance* sinew_geo_cast(void* instance)
{
    sinew_geo_instance* inst = (sinew_geo_instance*)instance;
    return inst && inst->magic == SINEW_GEO_MAGIC ? inst : NULL;
}

static inline bool sinew_geo_finite(const float* v, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        if (!isfinite(v[i])) return false;
    }
    return true;
}

/* The arguments every geometric prepare (CPU and Vulkan) checks alike: an output pointer
 * (cleared), a rig, and no typed-parameter chain, which these backends do not take. */
static inline sinew_result sinew_geo_check_prepare(const sinew_host_api* host, const char* name,
                                                   const sinew_rig_view* rig,
                                                   void** out_instance)
{
    if (!out_instance)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s: out_instance is NULL",
                               name);
    *out_instance = NULL;
    if (!rig) return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s: rig is NULL", name);
    return SINEW_OK;
}

/* Checks the rig view: everything the kernels index must be in range, finite and present. */
static inline sinew_result sinew_geo_check_rig(const sinew_host_api* host, const char* name,
                                               const sinew_rig_view* rig)
{
    if (rig->struct_size < sizeof(sinew_rig_view))
        return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE,
                               "%s: rig view struct_size %u is below %zu", name, rig->struct_size,
                               sizeof(sinew_rig_view));
    if (rig->joint_count == 0)
        return sinew_host_fail(host, SINEW_ERROR_JOINT_COUNT, "%s: the rig has no joints", name);
    if (rig->joint_count > UINT32_MAX / 16u)
        return sinew_host_fail(host, SINEW_ERROR_LIMIT,
                               "%s: %u joints are more than the %u the kernels address", name,
                               rig->joint_count, UINT32_MAX / 16u);
    const sinew_mesh_view* mesh = &rig->render_mesh;
    if (mesh->vertex_count == 0)
        return sinew_host_fail(host, SINEW_ERROR_EMPTY_MESH, "%s: the render mesh has no vertices",
                               name);
    if (!mesh->positions || !mesh->normals)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s: the render mesh has no %s",
                               name, mesh->positions ? "normals" : "positions");
    size_t n3 = (size_t)mesh->vertex_count * 3u;
    if (!sinew_geo_finite(mesh->positions, n3) || !sinew_geo_finite(mesh->normals, n3))
        return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                               "%s: the render mesh has a nonfinite position or normal", name);
    if (rig->padded_width == 0 || !rig->padded_joints || !rig->padded_weights)
        return sinew_host_fail(host, SINEW_ERROR_WEIGHTS,
                               "%s: the rig has no padded weights (width %u)", name,
                               rig->padded_width);
    uint32_t w = rig->padded_width;
    for (uint32_t v = 0; v < mesh->vertex_count; ++v) {
        const uint32_t* j = rig->padded_joints + (size_t)v * w;
        const float* wt = rig->padded_weights + (size_t)v * w;
        float sum = 0.0f;
        for (uint32_t k = 0; k < w; ++k) {
            if (j[k] >= rig->joint_count)
                return sinew_host_fail(host, SINEW_ERROR_JOINT_INDEX,
                                       "%s: vertex %u influence %u names joint %u of a rig with %u "
                                       "joints",
                                       name, v, k, j[k], rig->joint_count);
            if (!isfinite(wt[k]))
                return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                                       "%s: vertex %u influence %u has a nonfinite weight", name, v,
                                       k);
            if (wt[k] < 0.0f)
                return sinew_host_fail(host, SINEW_ERROR_WEIGHTS,
                                       "%s: vertex %u influence %u has the negative weight %g",
                                       name, v, k, (double)wt[k]);
            sum += wt[k];
        }
        /* dqs relies on the first influence weighing more than zero (its normalisation
         * divides by a norm of at least that weight); sorted rows put the largest first. */
        if (!(sum > 0.0f) || !(wt[0] > 0.0f))
            return sinew_host_fail(host, SINEW_ERROR_WEIGHTS, "%s: vertex %u has %s", name, v,
                                   sum > 0.0f ? "a zero first weight (rows must be sorted by "
                                                "decreasing weight)"
                                              : "no positive weight");
    }
    return SINEW_OK;
}

/* ---- the vtable entries (skin_geometric.c); the contract is this file's opening comment ---- */

/* The `normals` and `simd` parameters: their description (the vtables of lbs and dqs) and the
 * parse. */
#define SINEW_GEO_PARAM_COUNT 2u
extern const sinew_param_info sinew_geo_param_info[SINEW_GEO_PARAM_COUNT];
sinew_result sinew_geo_parse_params(const sinew_host_api* host, const char* name,
                                    const sinew_param* params, uint32_t count, const void* next,
                                    bool* want_normals, sinew_simd* simd);
sinew_result sinew_geo_probe(const sinew_host_api* host);
void sinew_geo_destroy(void* instance);
/* An instance of ops's backend for rig: parameters, kernel, rest data and own buffers. */
sinew_result sinew_geo_prepare(const sinew_geo_ops* ops, const sinew_host_api* host,
                               const sinew_rig_view* rig, const sinew_param* params,
                               uint32_t param_count, const void* next,
                               void** out_instance);
sinew_result sinew_geo_set_pose(void* instance, const sinew_pose_view* pose);
sinew_result sinew_geo_step(void* instance, float dt);
sinew_result sinew_geo_read_output(void* instance, const sinew_output_view* out);
sinew_result sinew_geo_bind_output(void* instance, const sinew_output_view* out);
sinew_result sinew_geo_get_state(void* instance, const sinew_state_view* state);
sinew_result sinew_geo_set_state(void* instance, const sinew_state_view* state);

#endif
