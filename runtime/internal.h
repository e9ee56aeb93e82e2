/* Runtime internals: never included by backends or plugins. SPDX-License-Identifier: MIT */
#ifndef SINEW_RUNTIME_INTERNAL_H
#define SINEW_RUNTIME_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sinew/sinew.h>
#include <sinew/sinew_plugin.h>
#include <sinew/sinew_bake.h>

#include <sinew/sinew_host.h>

/* ---- thread pool (pool.c) ---- */
typedef struct sinew_pool sinew_pool;
uint32_t sinew_pool_default_threads(void);
sinew_result sinew_pool_create(const sinew_host_api* host, uint32_t threads, sinew_pool** out);
void sinew_pool_destroy(const sinew_host_api* host, sinew_pool* pool);
sinew_job_system sinew_pool_job_system(sinew_pool* pool);

/* ---- large blocks (large_pages.c) ---- */
/* On Linux, blocks of SINEW_POPULATED_BLOCK bytes and more are populated when allocated (one
 * madvise instead of a fault per page), and those of SINEW_LARGE_BLOCK and more are first
 * advised for transparent huge pages. */
#define SINEW_POPULATED_BLOCK ((size_t)64u << 10)
#define SINEW_LARGE_BLOCK ((size_t)4u << 20)
void sinew_advise_large_block(void* p, size_t size);
/* An allocator that calls `inner` (which must outlive it) and advises the large blocks. */
sinew_allocator sinew_advising_allocator(const sinew_allocator* inner);

/* ---- handles ---- */
/* A handle id is (generation << 16) | (slot + 1): 0 is never valid, and a slot reused after a
 * destroy gets a new generation, so stale handles are caught. Generations run from 1 to
 * SINEW_HANDLE_MAX_GENERATION and never wrap: a slot that has reached the last one is retired
 * when freed (see world.c). */
#define SINEW_HANDLE_SLOT_BITS 16u
#define SINEW_HANDLE_MAX_SLOTS ((1u << SINEW_HANDLE_SLOT_BITS) - 1u)
#define SINEW_HANDLE_MAX_GENERATION ((1u << (32u - SINEW_HANDLE_SLOT_BITS)) - 1u)

/* ---- rigs (rig.c) ---- */
typedef struct sinew_rig_data {
    sinew_rig_view view;
    char* name;
    uint32_t* fk_order;          /* joints with every parent before its children */
    uint32_t users;              /* skins using this rig */
    float pose_size;             /* the size poses are measured against (pose_range.c) */
    void* block;                 /* one allocation holding every array of the rig */
    /* The backends' blobs of a baked rig, in the file's order (view.baked_* is the first's),
     * and for each the view a backend of that name is prepared on. */
    uint32_t baked_count;
    sinew_baked_blob baked[SINEW_BAKE_MAX_BACKENDS];
    sinew_rig_view baked_views[SINEW_BAKE_MAX_BACKENDS];
} sinew_rig_data;

sinew_result sinew_rig_data_create(const sinew_host_api* host, const sinew_rig_desc* desc,
                                   sinew_rig_data** out);
/* The checks of sinew_rig_data_create, with the same errors, without building the rig. */
sinew_result sinew_rig_data_check(const sinew_host_api* host, const sinew_rig_desc* desc);
void sinew_rig_data_destroy(const sinew_host_api* host, sinew_rig_data* rig);
/* The rig's view as `backend` is prepared on it (valid as long as the rig): with its baked
 * blob when the rig carries one for that backend, else the rig's own view with the first blob
 * (a backend may accept another's, or refuse it). */
const sinew_rig_view* sinew_rig_data_view_for(const sinew_rig_data* rig, const char* backend);
/* model = FK(local); both 16 floats per joint. */
void sinew_rig_data_local_to_model(const sinew_rig_data* rig, const float* local, float* model);

/* ---- the range of a pose (pose_range.c) ---- */
/* The diagonal of the box around the rest meshes, the joints' rest positions and the origin
 * (1 when that box is a point): SINEW_POSE_MAX_REACH is measured in it. */
float sinew_rig_pose_size(const sinew_rig_view* view);
/* SINEW_OK when every skinning transform (16 floats per joint) lies in the range of sinew.h;
 * else NONFINITE (overflowed) or INVALID_ARGUMENT, with one line naming `fn` and the joint. */
sinew_result sinew_pose_check_range(const sinew_host_api* host, const sinew_rig_data* rig,
                                    const float* skinning, const char* fn);

/* ---- plugins and registry (plugin.c) ---- */
typedef struct sinew_backend_entry {
    const sinew_backend_vtable* vt;
    uint32_t plugin;             /* index into plugins + 1, 0 for built-in */
    sinew_host_api* host;        /* what the backend is handed: the world's host with its
                                    user pointer (an allocation of its own, so that it stays
                                    where it is when the entries grow) */
} sinew_backend_entry;

/* A backend function's result as the runtime passes it on: r when it is a sinew_result, else
 * BACKEND_FAILED with one line naming the backend, its `function` and the raw value. */
/* The table's parameter descriptions (ABI version 2), or NULL and *count 0. */
const sinew_param_info* sinew_backend_param_infos(const sinew_backend_vtable* vt,
                                                  uint32_t* count);
sinew_result sinew_backend_result(const sinew_host_api* host, const sinew_backend_vtable* vt,
                                  const char* function, sinew_result r);

/* Checks a backend table against this host's ABI; logs and returns PLUGIN_ABI when bad. */
sinew_result sinew_validate_backend_table(const sinew_host_api* host,
                                          const sinew_backend_vtable* vt, const char* origin);

typedef struct sinew_world sinew_world;
/* dlcloses every plugin of the world (after its skins are gone). */
void sinew_plugins_unload(sinew_world* world);
/* The file sinew_world_load_plugin opens for `path` (plugin_path.c): `path` itself when it
 * holds a '/', else the first match along the plugin search path written into `buffer`, else
 * `path` for the dynamic loader's own search. */
const char* sinew_plugin_find(const char* path, char* buffer, size_t size);

/* ---- services (services.c) ---- */
/* Slots for the service ids this runtime knows: 1 .. SINEW_SERVICE_SLOTS - 1. */
#define SINEW_SERVICE_SLOTS 2u
/* Fills the services part of world->host (version, get_service, its context). */
void sinew_world_services_init(sinew_world* world);
/* A service id's name for log lines ("vulkan"; "unknown" for an id this runtime lacks). */
const char* sinew_service_name(uint32_t id);

/* ---- world (world.c) ---- */
typedef struct sinew_rig_slot {
    uint32_t generation;
    sinew_rig_data* rig;         /* NULL when free */
} sinew_rig_slot;

typedef struct sinew_skin_data sinew_skin_data;

typedef struct sinew_skin_slot {
    uint32_t generation;
    sinew_skin_data* skin;       /* NULL when free */
} sinew_skin_slot;

typedef struct sinew_destroy_hook {
    sinew_world_destroy_fn fn;
    void* user;
} sinew_destroy_hook;

struct sinew_world {
    sinew_host_api host;         /* its jobs are world_parallel_for over `jobs` (world.c), its
                                    allocator advises large blocks over `allocator` */
    sinew_allocator allocator;   /* the host's allocator, or the default one */
    sinew_job_system jobs;       /* the host's job system, or the pool's, or serial */
    sinew_pool* pool;            /* NULL when the host brought a job system */

    sinew_backend_entry* backends;
    uint32_t backend_count, backend_capacity;
    void** plugins;              /* dlopen handles */
    uint32_t plugin_count, plugin_capacity;

    sinew_rig_slot* rigs;
    uint32_t rig_slot_count, rig_slot_capacity;
    sinew_skin_slot* skins;
    uint32_t skin_slot_count, skin_slot_capacity;

    /* The service tables the world provides, by id (services.c). Backends read them from any
     * thread (a swap's preparation runs on its own). */
    _Atomic(const sinew_service_header*) services[SINEW_SERVICE_SLOTS];

    sinew_destroy_hook* destroy_hooks; /* run by sinew_world_destroy */
    uint32_t destroy_hook_count, destroy_hook_capacity;

    sinew_skin_data** update_list; /* scratch for sinew_world_update */
    uint32_t update_capacity;
    const char* stepping;        /* the stepping call running (its name), or NULL */
};

/* A skin component (world.c). */
struct sinew_skin_data {
    const sinew_host_api* host;  /* the world's, for lines logged while stepping */
    uint32_t rig_slot;
    sinew_rig_data* rig;
    const sinew_backend_vtable* vt;
    void* instance;
    float* model;                /* 16 per joint: the last pose, model space */
    float* skinning;             /* 16 per joint: model * inverse bind */
    float* scratch;              /* 32 per joint: a pose being checked (model, skinning) */
    bool has_pose;
    bool pose_dirty;             /* not yet handed to the backend */
    uint32_t pose_flags;         /* SINEW_POSE_* of the poses not yet handed over, or-ed */
    bool bound;
    sinew_output_view bound_view;
    sinew_result step_result;
    float step_dt;
    struct sinew_swap* swap;     /* a backend being prepared in the background (swap.c) */
    const sinew_backend_vtable* swap_vt;
    sinew_result swap_result;    /* how the last swap ended */
};

/* Grows an array of elem_size items to hold at least `needed`. */
sinew_result sinew_grow(const sinew_host_api* host, void** array, uint32_t* capacity,
                        uint32_t needed, size_t elem_size);

const sinew_backend_vtable* sinew_world_find_backend(const sinew_world* world, const char* name);
/* Registers vt (validated) with the user pointer its host api will carry. */
sinew_result sinew_world_add_backend(sinew_world* world, const sinew_backend_vtable* vt,
                                     uint32_t plugin, void* user);
/* Unregisters the backends added after the first `keep` (a plugin's, when one of them failed). */
void sinew_world_drop_backends(sinew_world* world, uint32_t keep);
/* The host api a registered backend is handed (its own, with its user pointer); the world's
 * own for a table that is not registered. */
const sinew_host_api* sinew_world_backend_host(const sinew_world* world,
                                               const sinew_backend_vtable* vt);

bool sinew_matrix_finite(const float* m, uint32_t count);

/* SINEW_OK, or SINEW_ERROR_BUSY with one line naming `fn` while the world steps (world.c). */
sinew_result sinew_world_check_idle(const sinew_world* world, const char* fn);

/* The live rig of a handle, or NULL (world.c). */
sinew_rig_data* sinew_world_get_rig(const sinew_world* world, sinew_rig rig);
/* The live skin of a handle, or NULL; and the one line for a bad handle (world.c). */
sinew_skin_data* sinew_world_get_skin(const sinew_world* world, sinew_skin skin);
sinew_result sinew_world_bad_skin(const sinew_world* world, sinew_skin skin, const char* fn);
/* The skin that call `fn` changes: INVALID_ARGUMENT for a NULL world, else the line of
 * sinew_world_check_idle or sinew_world_bad_skin when the world steps or the handle is stale;
 * *out is NULL unless SINEW_OK (world.c). */
sinew_result sinew_world_idle_skin(const sinew_world* world, sinew_skin skin, const char* fn,
                                   sinew_skin_data** out);
/* Parameters with a NULL key or value refused with one line naming `fn` (world.c). */
sinew_result sinew_world_check_params(const sinew_world* world, const sinew_param* params,
                                      uint32_t count, const char* fn);
/* The registered backend of that name that can run here, or an error with one line. */
sinew_result sinew_world_lookup_backend(sinew_world* world, const char* name,
                                        const sinew_backend_vtable** out);
/* vt's prepare, its result passed on as sinew_backend_result does, and an instance required
 * on success (world.c). */
sinew_result sinew_backend_prepare(const sinew_host_api* host, const sinew_backend_vtable* vt,
                                   const sinew_rig_view* rig, const sinew_param* params,
                                   uint32_t param_count, const void* next, void** out_instance);
/* Hands a prepared instance what the skin has (state when given, pose, output binding);
 * destroys it on failure (world.c). */
sinew_result sinew_skin_adopt(sinew_world* world, sinew_skin_data* skin,
                              const sinew_backend_vtable* vt, void* inst,
                              const sinew_state_view* state);

/* ---- backend swaps prepared in the background (swap.c) ---- */
/* True on a swap's preparation thread: the world's parallel_for runs inline there. */
bool sinew_swap_thread(void);
/* Between updates: a skin whose swap has prepared adopts the new instance (state, pose,
 * binding) or, when preparing or adopting failed, keeps its backend and records why (one
 * WARNING line). `wait`: wait for a preparation still running. */
void sinew_skin_apply_swap(sinew_world* world, sinew_skin_data* skin, bool wait);
/* A skin going away: waits for its preparation and destroys what it made. */
void sinew_skin_drop_swap(sinew_skin_data* skin);

/* ---- baked files (bake.c) ---- */
/* A logger that begins every line with "<prefix>: ", so errors found deep inside (rig
 * validation) still name the file they came from. */
typedef struct sinew_prefix_logger {
    sinew_logger inner;
    const char* prefix;
} sinew_prefix_logger;

/* A copy of `host` whose logger goes through `storage` (which must outlive the copy). */
sinew_host_api sinew_host_with_prefix(const sinew_host_api* host, const char* prefix,
                                      sinew_prefix_logger* storage);

#endif
