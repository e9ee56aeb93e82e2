/*
 * sinew plugin ABI: how a backend (built in or in a shared library) talks to the runtime.
 * SPDX-License-Identifier: MIT
 *
 * A plugin exports one C function, SINEW_PLUGIN_ENTRY_NAME, of type sinew_plugin_entry_fn.
 * The host passes the range of ABI versions it speaks and the sizes of its structs; the plugin
 * picks a version inside that range, checks the sizes, and fills a sinew_plugin_info with its
 * backends, or returns SINEW_ERROR_PLUGIN_ABI. The host refuses a plugin whose answer is out
 * of range, whose tables are NULL or too small, that returns success with no backend, or that
 * needs a service the world does not provide (SINEW_ERROR_NO_SERVICE).
 *
 * A backend sees only what crosses this header: a read-only rig view, the host's services
 * (sinew_host_api: allocator, logger, jobs, and from ABI version 3 the service tables the world
 * provides and the backend's own user pointer), and its own instance pointer. It never includes
 * runtime internals, and it finds nothing by symbol lookup: what another module offers (the
 * Vulkan module's context and output export) comes as a service table.
 */
#ifndef SINEW_SINEW_PLUGIN_H
#define SINEW_SINEW_PLUGIN_H

#include "sinew.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version 1: the first published table. A new version only appends fields.
 * Version 2: sinew_backend_vtable gains params and param_count (the backend's parameters
 * described).
 * Version 3: sinew_host_api becomes a versioned services table: it gains services_version,
 * backend_user (the pointer a backend was registered with) and get_service (the service tables
 * the world provides, such as SINEW_SERVICE_VULKAN); sinew_plugin_info gains backend_users and
 * the services the plugin cannot work without. The host accepts plugins of versions 1 to 3. */
#define SINEW_PLUGIN_ABI_VERSION 3u
#define SINEW_PLUGIN_ABI_VERSION_MIN 1u
#define SINEW_PLUGIN_ENTRY_NAME "sinew_plugin_entry"

/* ---- services ---- */

/* Service tables a world may provide beside the core services of sinew_host_api. */
typedef enum sinew_service_id {
    SINEW_SERVICE_VULKAN = 1,           /* sinew_vk_service, from the Vulkan module */
    SINEW_SERVICE_ID_MAX_ENUM = 0x7FFFFFFF
} sinew_service_id;

/* Every service table begins with its size and version; a later version only appends. */
typedef struct sinew_service_header {
    uint32_t struct_size;
    uint32_t version;
} sinew_service_header;

struct sinew_vk_context;
struct sinew_vk_output;
struct sinew_vk_memory_export;

#define SINEW_VK_SERVICE_VERSION 1u

/* The Vulkan module's service (SINEW_SERVICE_VULKAN), declared without Vulkan's headers so that
 * a plugin built without them (fps-cuda) can use it. sinew_vk_register_backends provides it for
 * the world it ties to a context, and sinew_vk_output_bind for the world whose skin it binds
 * (when that world has none yet). The output functions are sinew_vulkan.h's of the same names
 * (sinew_vk_output_export_memory, ...), with the same contracts. */
typedef struct sinew_vk_service {
    sinew_service_header header;        /* version SINEW_VK_SERVICE_VERSION */
    /* The context the world's vk-lbs, vk-dqs and vk-pbd run on, or NULL when none is tied to
     * the world (the service came with sinew_vk_output_bind) or it has been destroyed. */
    struct sinew_vk_context* (*context)(const struct sinew_vk_service* service);
    sinew_result (*output_export_memory)(const struct sinew_vk_output* output,
                                         struct sinew_vk_memory_export* out_export);
    sinew_result (*output_export_semaphores)(const struct sinew_vk_output* output,
                                             int* out_written_fd, int* out_read_fd);
    sinew_result (*output_set_external_writer)(struct sinew_vk_output* output, int enabled);
    sinew_result (*output_external_frame)(struct sinew_vk_output* output,
                                          uint64_t* out_wait_read, uint64_t* out_signal_written);
} sinew_vk_service;

#define SINEW_HOST_SERVICES_VERSION 1u

/* What the host hands a backend in probe, prepare and bake (a backend keeps what it needs in its
 * instance): the host's services, as a table that only grows at its end. Always fully populated
 * by the host. Each registered backend gets a table of its own (its backend_user differs); the
 * world's destroy hooks and a plugin's entry point get the world's, whose backend_user is NULL.
 * sinew_host.h reads the version 3 fields safely from any host. */
typedef struct sinew_host_api {
    uint32_t struct_size;
    sinew_allocator allocator;
    sinew_logger logger;
    sinew_log_level log_level;
    sinew_job_system jobs;
    /* ABI version 3: present when struct_size reaches SINEW_HOST_API_SIZE_V3 (a host of
     * versions 1 and 2 hands a table of SINEW_HOST_API_SIZE_V2 bytes). */
    uint32_t services_version;          /* SINEW_HOST_SERVICES_VERSION */
    /* The user pointer this backend was registered with (sinew_world_register_backend_with_user,
     * sinew_plugin_info.backend_users), or NULL. */
    void* backend_user;
    /* The world's service table `id` (sinew_service_id) of version min_version or later:
     * SINEW_OK and *out_table, valid until the world is destroyed or the service replaced; or
     * SINEW_ERROR_NO_SERVICE, *out_table NULL and no log line (a question, not a failure), when
     * the world provides none (an id this host does not know included). A NULL out_table:
     * SINEW_ERROR_INVALID_ARGUMENT and one line. May be called from any thread. */
    sinew_result (*get_service)(const struct sinew_host_api* host, uint32_t id,
                                uint32_t min_version, const void** out_table);
    void* service_context;              /* the host's own, for get_service; opaque to backends */
} sinew_host_api;

/* The size of the table hosts of ABI versions 1 and 2 hand out (up to jobs), and of version 3's. */
#define SINEW_HOST_API_SIZE_V2 \
    ((uint32_t)(offsetof(sinew_host_api, jobs) + sizeof(sinew_job_system)))
#define SINEW_HOST_API_SIZE_V3 \
    ((uint32_t)(offsetof(sinew_host_api, service_context) + sizeof(void*)))

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

/* A backend: a table of functions. probe, prepare and bake receive the backend's host api;
 * every other function receives the instance from prepare. All
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

/* The most services one plugin may ask for: more are refused with SINEW_ERROR_LIMIT. */
#define SINEW_PLUGIN_MAX_SERVICES 16u

/* A service a plugin cannot work without. */
typedef struct sinew_service_request {
    uint32_t id;                        /* sinew_service_id */
    uint32_t min_version;               /* the table version it needs at least (0: any) */
} sinew_service_request;

/* What a plugin answers. */
typedef struct sinew_plugin_info {
    uint32_t struct_size;               /* set by the host before the call */
    uint32_t abi_version;               /* chosen by the plugin */
    const char* plugin_name;
    uint32_t backend_count;             /* 1 .. SINEW_PLUGIN_MAX_BACKENDS */
    const sinew_backend_vtable* const* backends;
    /* ABI version 3: read when abi_version is 3 or more; a plugin writes them only when
     * struct_size covers them (a host of versions 1 and 2 has a smaller struct). */
    void* const* backend_users;         /* NULL, or backend_count pointers: backend i's
                                           host->backend_user */
    /* Services the plugin needs: the world must provide each (at min_version or later) when
     * the plugin is loaded, else the plugin is refused with SINEW_ERROR_NO_SERVICE and one log
     * line naming the service, and nothing is registered. Services a backend can do without
     * are asked for later through host->get_service instead. */
    const sinew_service_request* services;
    uint32_t service_count;             /* 0 .. SINEW_PLUGIN_MAX_SERVICES */
} sinew_plugin_info;

typedef sinew_result (*sinew_plugin_entry_fn)(const sinew_host_info* host,
                                              sinew_plugin_info* out);

/* Registers a backend table directly (what the built-in backends do). The table must outlive
 * the world. Refused like a plugin's table when its size or name is invalid. */
SINEW_API sinew_result sinew_world_register_backend(sinew_world* world,
                                                    const sinew_backend_vtable* backend);
/* The same, with a user pointer the backend gets back as host->backend_user in probe, prepare
 * and bake: one table registered in several worlds tells them apart by it (the Vulkan module
 * hands each world its tie to a context). `user` may be NULL; what it points to must stay valid
 * while the world may call the backend, i.e. until the world's destroy hooks run. */
SINEW_API sinew_result sinew_world_register_backend_with_user(sinew_world* world,
                                                              const sinew_backend_vtable* backend,
                                                              void* user);

/* Provides a service table to the world's backends (host->get_service finds it), replacing the
 * one of that id; NULL removes it. For a module beside the runtime: the Vulkan module provides
 * SINEW_SERVICE_VULKAN. The table begins with a sinew_service_header of at least the size of its
 * id's first version and a version of 1 or more, and stays valid until it is replaced or removed
 * or the world is destroyed. Refused with one line: an id this runtime does not know or a
 * version 0 (SINEW_ERROR_INVALID_ARGUMENT), a short table (SINEW_ERROR_STRUCT_SIZE), and BUSY
 * while the world updates. */
SINEW_API sinew_result sinew_world_set_service(sinew_world* world, sinew_service_id id,
                                               const void* table);
/* The world's service table, as host->get_service answers: SINEW_OK, or SINEW_ERROR_NO_SERVICE
 * without a log line when the world provides none of that id at min_version or later. A NULL
 * out_table: SINEW_ERROR_INVALID_ARGUMENT with one line. */
SINEW_API sinew_result sinew_world_get_service(const sinew_world* world, sinew_service_id id,
                                               uint32_t min_version, const void** out_table);

/* Called by sinew_world_destroy with the world's host services (backend_user NULL) and the
 * hook's `user`. */
typedef void (*sinew_world_destroy_fn)(const sinew_host_api* host, void* user);

/* Runs fn(host, user) when the world is destroyed: after its skins and rigs are gone, before
 * its plugins are unloaded. For a module that registers backends directly and keeps state per
 * world (the user pointer it registered them with), so that it can release it. The same fn
 * and user added twice run once. */
SINEW_API sinew_result sinew_world_add_destroy_hook(sinew_world* world, sinew_world_destroy_fn fn,
                                                    void* user);

#ifdef __cplusplus
}
#endif

#endif /* SINEW_SINEW_PLUGIN_H */
