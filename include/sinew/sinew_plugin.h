/*
 * sinew plugin ABI: how a backend (built in or in a shared library) talks to the runtime.
 * SPDX-License-Identifier: MIT
 *
 * A plugin exports one C function, SINEW_PLUGIN_ENTRY_NAME, of type sinew_plugin_entry_fn.
 * The host passes the range of ABI versions it speaks and the sizes of its structs; the plugin
 * picks a version inside that range, checks the sizes, and fills a sinew_plugin_info with its
 * backends, or returns SINEW_ERROR_PLUGIN_ABI. The host refuses a plugin whose answer is out
 * of range, whose tables are NULL or too small, or that returns success with no backend.
 *
 * A backend sees only what crosses this header: a read-only rig view, host services, and
 * its own instance pointer. It never includes runtime internals.
 */
#ifndef SINEW_SINEW_PLUGIN_H
#define SINEW_SINEW_PLUGIN_H

#include "sinew.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version 1: the first published table. A new version only appends fields.
 * Version 2: sinew_backend_vtable gains params and param_count (the backend's parameters
 * described). The host accepts plugins of versions 1 and 2. */
#define SINEW_PLUGIN_ABI_VERSION 2u
#define SINEW_PLUGIN_ABI_VERSION_MIN 1u
#define SINEW_PLUGIN_ENTRY_NAME "sinew_plugin_entry"

/* Services the host hands to backends. Always fully populated by the host. */
typedef struct sinew_host_api {
    uint32_t struct_size;
    sinew_allocator allocator;
    sinew_logger logger;
    sinew_log_level log_level;
    sinew_job_system jobs;
} sinew_host_api;

/* A mesh as the backend sees it. */
typedef struct sinew_mesh_view {
    uint32_t vertex_count;
    uint32_t triangle_count;
    const float* positions;             /* 3 per vertex, rest pose */
    const float* normals;               /* 3 per vertex, unit length */
    const uint32_t* indices;            /* 3 per triangle */
    uint32_t submesh_count;
    const uint32_t* submesh_first_triangle;
} sinew_mesh_view;

/* Everything a backend may read about a rig. Valid for the lifetime of the backend instance. */
typedef struct sinew_rig_view {
    uint32_t struct_size;
    uint32_t joint_count;
    const int32_t* parents;             /* -1 for roots */
    const char* const* names;           /* never NULL; entries may be "" */
    const float* bind_matrices;         /* 16 per joint, model-space rest transforms */
    const float* inverse_bind_matrices; /* 16 per joint */
    sinew_mesh_view render_mesh;
    sinew_mesh_view simulation_mesh;    /* vertex_count 0 when the rig has none */
    /* Render-mesh weights in compressed rows (normalised, sorted by decreasing weight). */
    const uint32_t* weight_offsets;
    const uint32_t* weight_joints;
    const float* weight_values;
    uint32_t max_influences;            /* largest row length */
    /* The same weights padded to a fixed width (max_influences rounded up to 4 or 8, or
     * max_influences beyond 8): `padded_width` entries per vertex, unused ones have weight 0
     * and joint 0. */
    uint32_t padded_width;
    const uint32_t* padded_joints;
    const float* padded_weights;
    /* Baked data loaded with the rig (sinew_rig_load_baked), or NULL/0: the blob baked for the
     * backend being prepared when the file holds one, else the file's first. A backend whose
     * name equals baked_backend restores its preparation from these bytes instead of
     * recomputing;
     * the runtime has checked the file's checksum, but the backend must still bounds-check
     * every field it reads and refuse inconsistent data with SINEW_ERROR_FILE_FORMAT. */
    const char* baked_backend;
    const void* baked_data;
    size_t baked_size;
} sinew_rig_view;

/* Where a backend writes the render mesh (host arrays with byte strides; normals may be NULL). */
typedef struct sinew_output_view {
    uint32_t struct_size;
    uint32_t vertex_count;
    float* positions;
    size_t position_stride;
    float* normals;
    size_t normal_stride;
    const void* next;                   /* extension chain of the sinew_output_desc */
} sinew_output_view;

/* The dynamic state of a skin: render-mesh positions and velocities (velocities may be NULL:
 * zero). Used to carry the shape across a backend swap. */
typedef struct sinew_state_view {
    uint32_t struct_size;
    uint32_t vertex_count;
    float* positions;                   /* 3 per vertex */
    float* velocities;                  /* 3 per vertex, or NULL */
} sinew_state_view;

/* Per-frame pose as the runtime hands it to a backend: model-space joint transforms and the
 * skinning matrices (model transform times inverse bind), 16 floats per joint each. */
typedef struct sinew_pose_view {
    uint32_t struct_size;
    uint32_t joint_count;
    const float* model_matrices;
    const float* skinning_matrices;
    /* SINEW_POSE_* of sinew_pose_desc (SINEW_POSE_DISCONTINUOUS), of every pose set since the
     * last step. Appended: read it only when struct_size covers it (an older host passes
     * SINEW_POSE_VIEW_SIZE_V1 bytes; then it is 0). */
    uint32_t flags;
} sinew_pose_view;

/* The size of the first published sinew_pose_view (up to skinning_matrices): backends accept
 * any struct_size from this one up. */
#define SINEW_POSE_VIEW_SIZE_V1 \
    ((uint32_t)(offsetof(sinew_pose_view, skinning_matrices) + sizeof(const float*)))

enum {
    SINEW_BACKEND_FLAG_PHYSICS = 1u << 0, /* has dynamic state (velocities) */
    SINEW_BACKEND_FLAG_GPU = 1u << 1
};

/* Sink for a backend's baked blob: write appends `size` bytes (returns SINEW_OK or an error
 * that the backend must pass on). */
typedef struct sinew_bake_writer {
    sinew_result (*write)(const void* data, size_t size, void* user);
    void* user;
} sinew_bake_writer;

/* A backend: a table of functions. Every function receives the instance from prepare. All
 * return SINEW_OK or a negative result after logging one line through host->logger. Any other
 * value (a code of the plugin's own) reaches the runtime's caller as
 * SINEW_ERROR_BACKEND_FAILED, logged with the backend's name and the raw value. */
typedef struct sinew_backend_vtable {
    uint32_t struct_size;
    const char* name;                   /* unique, e.g. "lbs" */
    uint32_t flags;
    /* Can the backend run on this machine? (A GPU backend without a GPU says no.) */
    sinew_result (*probe)(const sinew_host_api* host);
    /* Heavy per-character work. `next` is the skin descriptor's extension chain. */
    sinew_result (*prepare)(const sinew_host_api* host, const sinew_rig_view* rig,
                            const sinew_param* params, uint32_t param_count, const void* next,
                            void** out_instance);
    sinew_result (*set_pose)(void* instance, const sinew_pose_view* pose);
    sinew_result (*step)(void* instance, float dt);
    /* Copy the current output into `out`. */
    sinew_result (*read_output)(void* instance, const sinew_output_view* out);
    /* Write later steps straight into `out` (NULL: into the backend's own buffers). */
    sinew_result (*bind_output)(void* instance, const sinew_output_view* out);
    /* get_state copies into state's arrays; set_state starts from them. */
    sinew_result (*get_state)(void* instance, const sinew_state_view* state);
    sinew_result (*set_state)(void* instance, const sinew_state_view* state);
    void (*destroy)(void* instance);
    /* Optional (may be NULL: the backend has nothing worth baking). Computes everything of the
     * preparation that does not depend on the pose and writes it through `writer` as one
     * blob, little-endian, that prepare can later restore from rig->baked_data. */
    sinew_result (*bake)(const sinew_host_api* host, const sinew_rig_view* rig,
                         const sinew_param* params, uint32_t param_count,
                         const struct sinew_bake_writer* writer);
    /* ABI version 2 (read only when struct_size covers them): the parameters prepare and bake
     * accept, as sinew_world_backend_params returns them; the array must outlive the
     * registration. NULL with param_count 0: none described. */
    const sinew_param_info* params;
    uint32_t param_count;
} sinew_backend_vtable;

/* What the host tells a plugin. */
typedef struct sinew_host_info {
    uint32_t struct_size;
    uint32_t abi_version_min;
    uint32_t abi_version_max;
    uint32_t sizeof_backend_vtable;     /* sizeof(sinew_backend_vtable) of the host */
    uint32_t sizeof_rig_view;
    uint32_t sizeof_host_api;
    const sinew_host_api* host;
} sinew_host_info;

/* The most backend tables one plugin may offer: a larger backend_count is refused with
 * SINEW_ERROR_LIMIT before the array is read. */
#define SINEW_PLUGIN_MAX_BACKENDS 64u

/* What a plugin answers. */
typedef struct sinew_plugin_info {
    uint32_t struct_size;               /* set by the host before the call */
    uint32_t abi_version;               /* chosen by the plugin */
    const char* plugin_name;
    uint32_t backend_count;             /* 1 .. SINEW_PLUGIN_MAX_BACKENDS */
    const sinew_backend_vtable* const* backends;
} sinew_plugin_info;

typedef sinew_result (*sinew_plugin_entry_fn)(const sinew_host_info* host,
                                              sinew_plugin_info* out);

/* Registers a backend table directly (what the built-in backends do). The table must outlive
 * the world. Refused like a plugin's table when its size or name is invalid. */
SINEW_API sinew_result sinew_world_register_backend(sinew_world* world,
                                                    const sinew_backend_vtable* backend);

/* Called by sinew_world_destroy with the world's host services (the pointer its backends are
 * handed in probe and prepare) and the hook's `user`. */
typedef void (*sinew_world_destroy_fn)(const sinew_host_api* host, void* user);

/* Runs fn(host, user) when the world is destroyed: after its skins and rigs are gone, before
 * its plugins are unloaded. For a module that registers backends directly and keeps state per
 * world keyed by the host pointer (which a later world may reuse), so that it can release it.
 * The same fn and user added twice run once. */
SINEW_API sinew_result sinew_world_add_destroy_hook(sinew_world* world, sinew_world_destroy_fn fn,
                                                    void* user);

#ifdef __cplusplus
}
#endif

#endif /* SINEW_SINEW_PLUGIN_H */
