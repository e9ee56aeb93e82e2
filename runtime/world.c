/* The world: host services, the backend registry, rigs, skin components and the update.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* posix_memalign, sysconf, dlopen */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>

#include "builtin_backends.h"

#define WORLD_DESC_MIN_SIZE ((uint32_t)(offsetof(sinew_world_desc, log_level) + sizeof(sinew_log_level)))
#define SKIN_DESC_MIN_SIZE ((uint32_t)(offsetof(sinew_skin_desc, param_count) + sizeof(uint32_t)))
#define POSE_DESC_MIN_SIZE ((uint32_t)(offsetof(sinew_pose_desc, matrices) + sizeof(float*)))
/* A pose desc this large carries flags; a smaller one (the first published size) means 0. */
#define POSE_DESC_FLAGS_SIZE ((uint32_t)(offsetof(sinew_pose_desc, flags) + sizeof(uint32_t)))
#define POSE_FLAGS_KNOWN ((uint32_t)SINEW_POSE_DISCONTINUOUS)
#define OUTPUT_DESC_MIN_SIZE ((uint32_t)(offsetof(sinew_output_desc, normal_stride) + sizeof(size_t)))
#define RIG_INFO_MIN_SIZE ((uint32_t)(offsetof(sinew_rig_info, submesh_count) + sizeof(uint32_t)))

/* ---- built-in host services ---- */

static void* default_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    void* p = NULL;
    if (posix_memalign(&p, alignment, size) != 0) return NULL;
    return p;
}

static void default_free(void* ptr, void* user)
{
    (void)user;
    free(ptr);
}

static void default_log(sinew_log_level level, const char* message, void* user)
{
    (void)user;
    static const char* names[] = { "error", "warning", "info", "debug" };
    const char* name = (unsigned)level < 4u ? names[level] : "log";
    fprintf(stderr, "sinew: %s: %s\n", name, message);
}

/* The world's parallel_for: the host's or pool's, except on a swap's preparation thread
 * (swap.c), where it runs inline so that a background preparation never competes with the
 * frame's jobs for the job system. */
static void world_parallel_for(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain,
                               void* user)
{
    const sinew_world* world = (const sinew_world*)user;
    if (sinew_swap_thread()) {
        if (count) fn(data, 0, count);
        return;
    }
    world->jobs.parallel_for(fn, data, count, grain, world->jobs.user);
}

static void serial_parallel_for(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain,
                                void* user)
{
    (void)grain;
    (void)user;
    if (count) fn(data, 0, count);
}

sinew_result sinew_grow(const sinew_host_api* host, void** array, uint32_t* capacity,
                        uint32_t needed, size_t elem_size)
{
    if (needed <= *capacity) return SINEW_OK;
    uint32_t cap = *capacity ? *capacity : 8u;
    while (cap < needed) cap *= 2u;
    void* grown = sinew_host_alloc(host, (size_t)cap * elem_size);
    if (!grown) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "world: out of memory");
    if (*array) {
        memcpy(grown, *array, (size_t)*capacity * elem_size);
        sinew_host_free(host, *array);
    }
    memset((char*)grown + (size_t)*capacity * elem_size, 0,
           (size_t)(cap - *capacity) * elem_size);
    *array = grown;
    *capacity = cap;
    return SINEW_OK;
}

/* ---- world ---- */

sinew_result sinew_world_create(const sinew_world_desc* desc, sinew_world** out_world)
{
    sinew_host_api boot;
    memset(&boot, 0, sizeof boot);
    boot.logger.func = default_log;
    boot.log_level = SINEW_LOG_WARNING;
    if (desc && desc->logger && desc->logger->func) boot.logger = *desc->logger;
    if (!out_world)
        return sinew_host_fail(&boot, SINEW_ERROR_INVALID_ARGUMENT, "world: out_world is NULL");
    *out_world = NULL;
    if (!desc) return sinew_host_fail(&boot, SINEW_ERROR_INVALID_ARGUMENT, "world: desc is NULL");
    if (desc->struct_size < WORLD_DESC_MIN_SIZE)
        return sinew_host_fail(&boot, SINEW_ERROR_STRUCT_SIZE,
                               "world: struct_size %u is too small (at least %u; use "
                               "SINEW_WORLD_DESC_INIT)", desc->struct_size, WORLD_DESC_MIN_SIZE);
    if (desc->next)
        return sinew_host_fail(&boot, SINEW_ERROR_UNSUPPORTED,
                               "world: desc.next is not NULL, and no world extension is supported");
    if ((unsigned)desc->log_level > (unsigned)SINEW_LOG_DEBUG)
        return sinew_host_fail(&boot, SINEW_ERROR_INVALID_ARGUMENT,
                               "world: log_level %d is not a sinew_log_level", (int)desc->log_level);
    if (desc->allocator && (!desc->allocator->alloc || !desc->allocator->free))
        return sinew_host_fail(&boot, SINEW_ERROR_INVALID_ARGUMENT,
                               "world: the allocator lacks its %s function",
                               desc->allocator->alloc ? "free" : "alloc");
    if (desc->jobs && !desc->jobs->parallel_for)
        return sinew_host_fail(&boot, SINEW_ERROR_INVALID_ARGUMENT,
                               "world: the job system lacks parallel_for");
    if (desc->thread_count > 256)
        return sinew_host_fail(&boot, SINEW_ERROR_LIMIT, "world: thread_count %u; at most 256",
                               desc->thread_count);

    sinew_host_api host = boot;
    host.struct_size = (uint32_t)sizeof(sinew_host_api);
    host.log_level = desc->log_level;
    host.allocator.alloc = default_alloc;
    host.allocator.free = default_free;
    host.allocator.user = NULL;
    if (desc->allocator) host.allocator = *desc->allocator;

    sinew_world* world = (sinew_world*)sinew_host_calloc(&host, 1, sizeof *world);
    if (!world) return sinew_host_fail(&host, SINEW_ERROR_OUT_OF_MEMORY, "world: out of memory");
    world->host = host;
    world->allocator = host.allocator;
    world->host.allocator = sinew_advising_allocator(&world->allocator);
    if (desc->jobs) {
        world->host.jobs = *desc->jobs;
        if (world->host.jobs.thread_count == 0) world->host.jobs.thread_count = 1;
    } else {
        uint32_t threads = desc->thread_count ? desc->thread_count : sinew_pool_default_threads();
        if (threads > 1) {
            sinew_result r = sinew_pool_create(&world->host, threads, &world->pool);
            if (r != SINEW_OK) {
                sinew_host_free(&host, world);
                return r;
            }
            world->host.jobs = sinew_pool_job_system(world->pool);
        } else {
            world->host.jobs.parallel_for = serial_parallel_for;
            world->host.jobs.thread_count = 1;
            world->host.jobs.user = NULL;
        }
    }
    world->jobs = world->host.jobs;
    world->host.jobs.parallel_for = world_parallel_for;
    world->host.jobs.user = world;
    sinew_world_services_init(world);
    /* Built-in backends go through the same validation as a plugin's. */
    sinew_result r = sinew_world_add_backend(world, &sinew_backend_lbs, 0, NULL);
    if (r == SINEW_OK) r = sinew_world_add_backend(world, &sinew_backend_dqs, 0, NULL);
#if defined(SINEW_HAVE_PS)
    if (r == SINEW_OK) r = sinew_world_add_backend(world, &sinew_backend_ps, 0, NULL);
#endif
#if defined(SINEW_HAVE_FPS)
    if (r == SINEW_OK) r = sinew_world_add_backend(world, &sinew_backend_fps, 0, NULL);
#endif
#if defined(SINEW_HAVE_PBD)
    if (r == SINEW_OK) r = sinew_world_add_backend(world, &sinew_backend_pbd, 0, NULL);
#endif
    if (r != SINEW_OK) {
        sinew_world_destroy(world);
        return r;
    }
    *out_world = world;
    return SINEW_OK;
}

static void skin_free(sinew_world* world, sinew_skin_data* skin);

/* Calls that change the world are refused while it steps: a job, or another callback of the
 * host's services, could otherwise free or replace a skin or rig that the step is using. The
 * stepping calls set one field, so the check costs a load. */
sinew_result sinew_world_check_idle(const sinew_world* world, const char* fn)
{
    if (!world->stepping) return SINEW_OK;
    return sinew_host_fail(&world->host, SINEW_ERROR_BUSY,
                           "%s: called while %s is running (from one of its jobs or callbacks); "
                           "the world is left as it was", fn, world->stepping);
}

sinew_result sinew_world_add_destroy_hook(sinew_world* world, sinew_world_destroy_fn fn,
                                          void* user)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = sinew_world_check_idle(world, "sinew_world_add_destroy_hook");
    if (r != SINEW_OK) return r;
    if (!fn)
        return sinew_host_fail(&world->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_world_add_destroy_hook: fn is NULL");
    for (uint32_t i = 0; i < world->destroy_hook_count; ++i) {
        if (world->destroy_hooks[i].fn == fn && world->destroy_hooks[i].user == user)
            return SINEW_OK;
    }
    r = sinew_grow(&world->host, (void**)&world->destroy_hooks, &world->destroy_hook_capacity,
                   world->destroy_hook_count + 1u, sizeof(sinew_destroy_hook));
    if (r != SINEW_OK) return r;
    world->destroy_hooks[world->destroy_hook_count].fn = fn;
    world->destroy_hooks[world->destroy_hook_count].user = user;
    world->destroy_hook_count++;
    return SINEW_OK;
}

void sinew_world_destroy(sinew_world* world)
{
    if (!world || sinew_world_check_idle(world, "sinew_world_destroy") != SINEW_OK) return;
    const sinew_host_api* host = &world->host;
    for (uint32_t i = 0; i < world->skin_slot_count; ++i) {
        if (world->skins[i].skin) skin_free(world, world->skins[i].skin);
    }
    for (uint32_t i = 0; i < world->rig_slot_count; ++i) {
        if (world->rigs[i].rig) sinew_rig_data_destroy(host, world->rigs[i].rig);
    }
    /* Hooks run while the plugins' code is still loaded. */
    for (uint32_t i = 0; i < world->destroy_hook_count; ++i)
        world->destroy_hooks[i].fn(host, world->destroy_hooks[i].user);
    sinew_host_free(host, world->destroy_hooks);
    sinew_host_free(host, world->skins);
    sinew_host_free(host, world->rigs);
    sinew_host_free(host, world->update_list);
    sinew_world_drop_backends(world, 0);
    sinew_host_free(host, world->backends);
    /* Plugins go last: skins held their code. */
    sinew_plugins_unload(world);
    sinew_pool_destroy(host, world->pool);
    sinew_host_api copy = *host;
    sinew_host_free(&copy, world);
}

uint32_t sinew_world_thread_count(const sinew_world* world)
{
    return world ? world->host.jobs.thread_count : 0u;
}

const sinew_backend_vtable* sinew_world_find_backend(const sinew_world* world, const char* name)
{
    for (uint32_t i = 0; i < world->backend_count; ++i) {
        if (strcmp(world->backends[i].vt->name, name) == 0) return world->backends[i].vt;
    }
    return NULL;
}

sinew_result sinew_world_add_backend(sinew_world* world, const sinew_backend_vtable* vt,
                                     uint32_t plugin, void* user)
{
    const sinew_host_api* host = &world->host;
    sinew_result r = sinew_validate_backend_table(host, vt, plugin ? "plugin" : "register");
    if (r != SINEW_OK) return r;
    if (sinew_world_find_backend(world, vt->name))
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "backend \"%s\" is already registered", vt->name);
    r = sinew_grow(host, (void**)&world->backends, &world->backend_capacity,
                   world->backend_count + 1u, sizeof(sinew_backend_entry));
    if (r != SINEW_OK) return r;
    sinew_host_api* own = (sinew_host_api*)sinew_host_alloc(host, sizeof *own);
    if (!own) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "world: out of memory");
    *own = world->host;
    own->backend_user = user;
    world->backends[world->backend_count].vt = vt;
    world->backends[world->backend_count].plugin = plugin;
    world->backends[world->backend_count].host = own;
    world->backend_count++;
    return SINEW_OK;
}

void sinew_world_drop_backends(sinew_world* world, uint32_t keep)
{
    while (world->backend_count > keep)
        sinew_host_free(&world->host, world->backends[--world->backend_count].host);
}

const sinew_host_api* sinew_world_backend_host(const sinew_world* world,
                                               const sinew_backend_vtable* vt)
{
    for (uint32_t i = 0; i < world->backend_count; ++i) {
        if (world->backends[i].vt == vt) return world->backends[i].host;
    }
    return &world->host;
}

static sinew_result register_backend(sinew_world* world, const sinew_backend_vtable* backend,
                                     void* user, const char* fn)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = sinew_world_check_idle(world, fn);
    if (r != SINEW_OK) return r;
    return sinew_world_add_backend(world, backend, 0, user);
}

sinew_result sinew_world_register_backend_with_user(sinew_world* world,
                                                    const sinew_backend_vtable* backend,
                                                    void* user)
{
    return register_backend(world, backend, user, "sinew_world_register_backend_with_user");
}

sinew_result sinew_world_register_backend(sinew_world* world, const sinew_backend_vtable* backend)
{
    return register_backend(world, backend, NULL, "sinew_world_register_backend");
}

uint32_t sinew_world_backend_count(const sinew_world* world)
{
    return world ? world->backend_count : 0u;
}

const char* sinew_world_backend_name(const sinew_world* world, uint32_t index)
{
    if (!world || index >= world->backend_count) return NULL;
    return world->backends[index].vt->name;
}

sinew_result sinew_world_backend_params(const sinew_world* world, const char* backend,
                                        const sinew_param_info** params, uint32_t* count)
{
    if (params) *params = NULL;
    if (count) *count = 0;
    if (!world || !backend || !params || !count)
        return sinew_host_fail(world ? &world->host : NULL, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_world_backend_params: world, backend, params and count "
                               "are required");
    const sinew_backend_vtable* vt = sinew_world_find_backend(world, backend);
    if (!vt)
        return sinew_host_fail(&world->host, SINEW_ERROR_UNKNOWN_BACKEND,
                               "sinew_world_backend_params: no backend named \"%s\" is "
                               "registered", backend);
    *params = sinew_backend_param_infos(vt, count);
    return SINEW_OK;
}

sinew_result sinew_world_lookup_backend(sinew_world* world, const char* name,
                                        const sinew_backend_vtable** out)
{
    if (!name || !*name)
        return sinew_host_fail(&world->host, SINEW_ERROR_UNKNOWN_BACKEND, "backend name is empty");
    const sinew_backend_vtable* vt = sinew_world_find_backend(world, name);
    if (!vt)
        return sinew_host_fail(&world->host, SINEW_ERROR_UNKNOWN_BACKEND,
                               "no backend named \"%s\" is registered", name);
    sinew_result r = vt->probe(sinew_world_backend_host(world, vt));
    if (r != SINEW_OK)
        return sinew_host_fail(&world->host, SINEW_ERROR_BACKEND_UNAVAILABLE,
                               "backend \"%s\" cannot run here (%s)", name, sinew_result_string(r));
    *out = vt;
    return SINEW_OK;
}

sinew_result sinew_world_probe_backend(sinew_world* world, const char* name)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    const sinew_backend_vtable* vt;
    return sinew_world_lookup_backend(world, name, &vt);
}

/* ---- handles ---- */

static uint32_t make_id(uint32_t slot, uint32_t generation)
{
    return (generation << SINEW_HANDLE_SLOT_BITS) | (slot + 1u);
}

/* Takes slot for a new object: counts it among the used slots when it is the next one, moves
 * its generation on, and returns the new handle id. */
static uint32_t slot_publish(uint32_t slot, uint32_t* slot_count, uint32_t* generation)
{
    if (slot == *slot_count) (*slot_count)++;
    return make_id(slot, ++*generation);
}

static bool split_id(uint32_t id, uint32_t* slot, uint32_t* generation)
{
    uint32_t s = id & SINEW_HANDLE_MAX_SLOTS;
    if (s == 0) return false;
    *slot = s - 1u;
    *generation = id >> SINEW_HANDLE_SLOT_BITS;
    return true;
}

/* Whether a free slot may take a new object. The id has 16 bits of generation and widening
 * them would take bits from the slot index (the id is a public uint32_t), so a slot whose
 * generation has reached the last value is retired instead of wrapping to a generation a
 * stale handle may still carry. Each slot serves 65535 objects before it retires. */
static bool slot_reusable(uint32_t generation)
{
    return generation < SINEW_HANDLE_MAX_GENERATION;
}

static sinew_rig_data* rig_get(const sinew_world* world, sinew_rig rig, uint32_t* out_slot)
{
    uint32_t slot, gen;
    if (!world || !split_id(rig.id, &slot, &gen) || slot >= world->rig_slot_count) return NULL;
    const sinew_rig_slot* s = &world->rigs[slot];
    if (!s->rig || s->generation != gen) return NULL;
    if (out_slot) *out_slot = slot;
    return s->rig;
}

sinew_rig_data* sinew_world_get_rig(const sinew_world* world, sinew_rig rig)
{
    return rig_get(world, rig, NULL);
}

sinew_skin_data* sinew_world_get_skin(const sinew_world* world, sinew_skin skin)
{
    uint32_t slot, gen;
    if (!world || !split_id(skin.id, &slot, &gen) || slot >= world->skin_slot_count) return NULL;
    const sinew_skin_slot* s = &world->skins[slot];
    if (!s->skin || s->generation != gen) return NULL;
    return s->skin;
}

static sinew_result bad_rig(const sinew_world* world, sinew_rig rig, const char* fn)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    return sinew_host_fail(&world->host, SINEW_ERROR_INVALID_HANDLE,
                           "%s: rig handle 0x%08x is not a live rig", fn, rig.id);
}

sinew_result sinew_world_bad_skin(const sinew_world* world, sinew_skin skin, const char* fn)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    return sinew_host_fail(&world->host, SINEW_ERROR_INVALID_HANDLE,
                           "%s: skin handle 0x%08x is not a live skin", fn, skin.id);
}

sinew_result sinew_world_idle_skin(const sinew_world* world, sinew_skin skin, const char* fn,
                                   sinew_skin_data** out)
{
    *out = NULL;
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = sinew_world_check_idle(world, fn);
    if (r != SINEW_OK) return r;
    *out = sinew_world_get_skin(world, skin);
    return *out ? SINEW_OK : sinew_world_bad_skin(world, skin, fn);
}

/* ---- rigs ---- */

sinew_result sinew_rig_create(sinew_world* world, const sinew_rig_desc* desc, sinew_rig* out_rig)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!out_rig)
        return sinew_host_fail(&world->host, SINEW_ERROR_INVALID_ARGUMENT, "rig: out_rig is NULL");
    out_rig->id = 0;
    sinew_result r = sinew_world_check_idle(world, "sinew_rig_create");
    if (r != SINEW_OK) return r;
    uint32_t slot = 0;
    while (slot < world->rig_slot_count &&
           (world->rigs[slot].rig || !slot_reusable(world->rigs[slot].generation)))
        ++slot;
    if (slot >= SINEW_HANDLE_MAX_SLOTS)
        return sinew_host_fail(&world->host, SINEW_ERROR_LIMIT,
                               "rig: no rig slot left (at most %u live rigs per world, each "
                               "slot serving %u rigs over the world's life)",
                               SINEW_HANDLE_MAX_SLOTS, SINEW_HANDLE_MAX_GENERATION);
    r = sinew_grow(&world->host, (void**)&world->rigs, &world->rig_slot_capacity, slot + 1u,
                   sizeof(sinew_rig_slot));
    if (r != SINEW_OK) return r;
    sinew_rig_data* rig = NULL;
    r = sinew_rig_data_create(&world->host, desc, &rig);
    if (r != SINEW_OK) return r;
    world->rigs[slot].rig = rig;
    out_rig->id = slot_publish(slot, &world->rig_slot_count, &world->rigs[slot].generation);
    return SINEW_OK;
}

sinew_result sinew_rig_destroy(sinew_world* world, sinew_rig rig)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = sinew_world_check_idle(world, "sinew_rig_destroy");
    if (r != SINEW_OK) return r;
    uint32_t slot;
    sinew_rig_data* data = rig_get(world, rig, &slot);
    if (!data) return bad_rig(world, rig, "sinew_rig_destroy");
    if (data->users > 0)
        return sinew_host_fail(&world->host, SINEW_ERROR_IN_USE,
                               "sinew_rig_destroy: rig 0x%08x is used by %u skins", rig.id,
                               data->users);
    sinew_rig_data_destroy(&world->host, data);
    world->rigs[slot].rig = NULL;
    return SINEW_OK;
}

sinew_result sinew_rig_get_info(const sinew_world* world, sinew_rig rig, sinew_rig_info* out_info)
{
    const sinew_rig_data* data = rig_get(world, rig, NULL);
    if (!data) return bad_rig(world, rig, "sinew_rig_get_info");
    if (!out_info)
        return sinew_host_fail(&world->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_rig_get_info: out_info is NULL");
    if (out_info->struct_size < RIG_INFO_MIN_SIZE)
        return sinew_host_fail(&world->host, SINEW_ERROR_STRUCT_SIZE,
                               "sinew_rig_get_info: struct_size %u is too small (use "
                               "SINEW_RIG_INFO_INIT)", out_info->struct_size);
    const sinew_rig_view* v = &data->view;
    out_info->joint_count = v->joint_count;
    out_info->vertex_count = v->render_mesh.vertex_count;
    out_info->triangle_count = v->render_mesh.triangle_count;
    out_info->simulation_vertex_count = v->simulation_mesh.vertex_count;
    out_info->max_influences = v->max_influences;
    out_info->submesh_count = v->render_mesh.submesh_count;
    return SINEW_OK;
}

sinew_result sinew_rig_get_weights(const sinew_world* world, sinew_rig rig,
                                   const uint32_t** offsets, const uint32_t** joints,
                                   const float** weights)
{
    const sinew_rig_data* data = rig_get(world, rig, NULL);
    if (!data) return bad_rig(world, rig, "sinew_rig_get_weights");
    if (offsets) *offsets = data->view.weight_offsets;
    if (joints) *joints = data->view.weight_joints;
    if (weights) *weights = data->view.weight_values;
    return SINEW_OK;
}

sinew_result sinew_rig_get_mesh(const sinew_world* world, sinew_rig rig, const float** positions,
                                const float** normals, const uint32_t** indices)
{
    const sinew_rig_data* data = rig_get(world, rig, NULL);
    if (!data) return bad_rig(world, rig, "sinew_rig_get_mesh");
    if (positions) *positions = data->view.render_mesh.positions;
    if (normals) *normals = data->view.render_mesh.normals;
    if (indices) *indices = data->view.render_mesh.indices;
    return SINEW_OK;
}

int32_t sinew_rig_find_joint(const sinew_world* world, sinew_rig rig, const char* name)
{
    const sinew_rig_data* data = rig_get(world, rig, NULL);
    if (!data || !name) return -1;
    for (uint32_t j = 0; j < data->view.joint_count; ++j) {
        if (strcmp(data->view.names[j], name) == 0) return (int32_t)j;
    }
    return -1;
}

sinew_result sinew_rig_local_to_model(const sinew_world* world, sinew_rig rig, const float* local,
                                      float* out_model)
{
    const sinew_rig_data* data = rig_get(world, rig, NULL);
    if (!data) return bad_rig(world, rig, "sinew_rig_local_to_model");
    if (!local || !out_model)
        return sinew_host_fail(&world->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_rig_local_to_model: %s is NULL", local ? "out_model" : "local");
    if (!sinew_matrix_finite(local, data->view.joint_count))
        return sinew_host_fail(&world->host, SINEW_ERROR_NONFINITE,
                               "sinew_rig_local_to_model: a local transform is not finite");
    sinew_rig_data_local_to_model(data, local, out_model);
    return SINEW_OK;
}

/* ---- skins ---- */

static void skin_free(sinew_world* world, sinew_skin_data* skin)
{
    const sinew_host_api* host = &world->host;
    sinew_skin_drop_swap(skin);
    if (skin->instance) skin->vt->destroy(skin->instance);
    if (skin->rig) skin->rig->users--;
    sinew_host_free(host, skin->model);
    sinew_host_free(host, skin->skinning);
    sinew_host_free(host, skin->scratch);
    sinew_host_free(host, skin);
}

sinew_result sinew_world_check_params(const sinew_world* world, const sinew_param* params,
                                      uint32_t count, const char* fn)
{
    if (count > 0 && !params)
        return sinew_host_fail(&world->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: param_count is %u but params is NULL", fn, count);
    for (uint32_t i = 0; i < count; ++i) {
        if (!params[i].key || !params[i].value)
            return sinew_host_fail(&world->host, SINEW_ERROR_PARAMETER,
                                   "%s: parameter %u has a NULL %s", fn, i,
                                   params[i].key ? "value" : "key");
    }
    return SINEW_OK;
}

static sinew_result check_chain(const sinew_world* world, const void* next, const char* fn)
{
    for (const sinew_ext_header* h = (const sinew_ext_header*)next; h;
         h = (const sinew_ext_header*)h->next) {
        if (h->struct_size < sizeof(sinew_ext_header))
            return sinew_host_fail(&world->host, SINEW_ERROR_STRUCT_SIZE,
                                   "%s: an extension in the next chain has struct_size %u", fn,
                                   h->struct_size);
    }
    return SINEW_OK;
}

static sinew_result bind_backend_output(const sinew_world* world, const sinew_backend_vtable* vt,
                                        void* instance, const sinew_output_view* view);

/* Hands a prepared instance of vt what the skin has: the shape `state` when given, the pose
 * and the output binding. On failure the instance is destroyed. */
sinew_result sinew_skin_adopt(sinew_world* world, sinew_skin_data* skin,
                              const sinew_backend_vtable* vt, void* inst,
                              const sinew_state_view* state)
{
    const sinew_host_api* host = &world->host;
    sinew_result r = SINEW_OK;
    if (state) r = sinew_backend_result(host, vt, "set_state", vt->set_state(inst, state));
    if (r == SINEW_OK && skin->has_pose) {
        /* A discontinuity the old backend never stepped is the new one's to handle. */
        sinew_pose_view pose = { (uint32_t)sizeof(sinew_pose_view), skin->rig->view.joint_count,
                                 skin->model, skin->skinning,
                                 skin->pose_dirty ? skin->pose_flags : 0u };
        r = sinew_backend_result(host, vt, "set_pose", vt->set_pose(inst, &pose));
    }
    if (r == SINEW_OK && skin->bound) r = bind_backend_output(world, vt, inst, &skin->bound_view);
    if (r != SINEW_OK) vt->destroy(inst);
    return r;
}

sinew_result sinew_backend_prepare(const sinew_host_api* host, const sinew_backend_vtable* vt,
                                   const sinew_rig_view* rig, const sinew_param* params,
                                   uint32_t param_count, const void* next, void** out_instance)
{
    void* inst = NULL;
    sinew_result r = vt->prepare(host, rig, params, param_count, next, &inst);
    r = sinew_backend_result(host, vt, "prepare", r);
    if (r == SINEW_OK && !inst)
        r = sinew_host_fail(host, SINEW_ERROR_BACKEND_FAILED,
                            "backend \"%s\": prepare succeeded but returned no instance", vt->name);
    *out_instance = r == SINEW_OK ? inst : NULL;
    return r;
}

/* Prepares an instance of vt for a new skin's rig. */
static sinew_result instantiate(sinew_world* world, sinew_skin_data* skin,
                                const sinew_backend_vtable* vt, const sinew_param* params,
                                uint32_t param_count, const void* next, void** out_instance)
{
    void* inst = NULL;
    sinew_result r = sinew_backend_prepare(sinew_world_backend_host(world, vt), vt,
                                           sinew_rig_data_view_for(skin->rig, vt->name), params,
                                           param_count, next, &inst);
    if (r == SINEW_OK) r = sinew_skin_adopt(world, skin, vt, inst, NULL);
    if (r == SINEW_OK) *out_instance = inst;
    return r;
}

sinew_result sinew_world_add_skin(sinew_world* world, const sinew_skin_desc* desc,
                                  sinew_skin* out_skin)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    const sinew_host_api* host = &world->host;
    if (!desc || !out_skin)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "sinew_world_add_skin: %s is NULL",
                               desc ? "out_skin" : "desc");
    out_skin->id = 0;
    sinew_result r = sinew_world_check_idle(world, "sinew_world_add_skin");
    if (r != SINEW_OK) return r;
    if (desc->struct_size < SKIN_DESC_MIN_SIZE)
        return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE,
                               "sinew_world_add_skin: struct_size %u is too small (at least %u; "
                               "use SINEW_SKIN_DESC_INIT)", desc->struct_size, SKIN_DESC_MIN_SIZE);
    uint32_t rig_slot;
    sinew_rig_data* rig = rig_get(world, desc->rig, &rig_slot);
    if (!rig) return bad_rig(world, desc->rig, "sinew_world_add_skin");
    r = sinew_world_check_params(world, desc->params, desc->param_count, "sinew_world_add_skin");
    if (r == SINEW_OK) r = check_chain(world, desc->next, "sinew_world_add_skin");
    if (r != SINEW_OK) return r;
    const sinew_backend_vtable* vt;
    r = sinew_world_lookup_backend(world, desc->backend ? desc->backend : "lbs", &vt);
    if (r != SINEW_OK) return r;

    uint32_t slot = 0;
    while (slot < world->skin_slot_count &&
           (world->skins[slot].skin || !slot_reusable(world->skins[slot].generation)))
        ++slot;
    if (slot >= SINEW_HANDLE_MAX_SLOTS)
        return sinew_host_fail(host, SINEW_ERROR_LIMIT,
                               "sinew_world_add_skin: no skin slot left (at most %u live skins "
                               "per world, each slot serving %u skins over the world's life)",
                               SINEW_HANDLE_MAX_SLOTS, SINEW_HANDLE_MAX_GENERATION);
    r = sinew_grow(host, (void**)&world->skins, &world->skin_slot_capacity, slot + 1u,
                   sizeof(sinew_skin_slot));
    if (r != SINEW_OK) return r;

    uint32_t jn = rig->view.joint_count;
    sinew_skin_data* skin = (sinew_skin_data*)sinew_host_calloc(host, 1, sizeof *skin);
    if (!skin) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "skin: out of memory");
    skin->model = (float*)sinew_host_alloc(host, (size_t)jn * 64u);
    skin->skinning = (float*)sinew_host_alloc(host, (size_t)jn * 64u);
    skin->scratch = (float*)sinew_host_alloc(host, (size_t)jn * 128u);
    if (!skin->model || !skin->skinning || !skin->scratch) {
        skin_free(world, skin);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "skin: out of memory");
    }
    skin->host = host;
    skin->rig = rig;
    skin->rig_slot = rig_slot;
    rig->users++;
    skin->vt = vt;
    r = instantiate(world, skin, vt, desc->params, desc->param_count, desc->next,
                    &skin->instance);
    if (r != SINEW_OK) {
        skin_free(world, skin);
        return r;
    }
    world->skins[slot].skin = skin;
    out_skin->id = slot_publish(slot, &world->skin_slot_count, &world->skins[slot].generation);
    return SINEW_OK;
}

sinew_result sinew_world_remove_skin(sinew_world* world, sinew_skin skin)
{
    sinew_skin_data* data;
    sinew_result r = sinew_world_idle_skin(world, skin, "sinew_world_remove_skin", &data);
    if (r != SINEW_OK) return r;
    uint32_t slot = (skin.id & SINEW_HANDLE_MAX_SLOTS) - 1u;
    skin_free(world, data);
    world->skins[slot].skin = NULL;
    return SINEW_OK;
}

const char* sinew_skin_backend(const sinew_world* world, sinew_skin skin)
{
    const sinew_skin_data* data = sinew_world_get_skin(world, skin);
    return data ? data->vt->name : NULL;
}

/* Everything about a pose desc but its range: size, space, joint count, flags, finite
 * matrices. Sets *flags to the pose's SINEW_POSE_* bits. */
static sinew_result check_pose_desc(const sinew_host_api* host, const sinew_skin_data* data,
                                    const sinew_pose_desc* pose, uint32_t* flags)
{
    if (!pose)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "sinew_skin_set_pose: pose is NULL");
    if (pose->struct_size < POSE_DESC_MIN_SIZE)
        return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE,
                               "sinew_skin_set_pose: struct_size %u is too small (use "
                               "SINEW_POSE_DESC_INIT)", pose->struct_size);
    if (pose->space != SINEW_POSE_MODEL && pose->space != SINEW_POSE_LOCAL)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_skin_set_pose: space %d is not a sinew_pose_space",
                               (int)pose->space);
    uint32_t jn = data->rig->view.joint_count;
    if (pose->joint_count != jn)
        return sinew_host_fail(host, SINEW_ERROR_JOINT_COUNT,
                               "sinew_skin_set_pose: %u joint transforms for a rig of %u joints",
                               pose->joint_count, jn);
    if (!pose->matrices)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_skin_set_pose: matrices is NULL");
    *flags = pose->struct_size >= POSE_DESC_FLAGS_SIZE ? pose->flags : 0u;
    if (*flags & ~POSE_FLAGS_KNOWN)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_skin_set_pose: flags 0x%x has unknown bits 0x%x (known: "
                               "SINEW_POSE_DISCONTINUOUS)", *flags, *flags & ~POSE_FLAGS_KNOWN);
    for (uint32_t j = 0; j < jn; ++j) {
        if (!sinew_matrix_finite(pose->matrices + 16u * j, 1))
            return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                                   "sinew_skin_set_pose: the transform of joint %u (%s) is not "
                                   "finite", j, data->rig->view.names[j]);
    }
    return SINEW_OK;
}

sinew_result sinew_skin_set_pose(sinew_world* world, sinew_skin skin, const sinew_pose_desc* pose)
{
    sinew_skin_data* data;
    sinew_result r = sinew_world_idle_skin(world, skin, "sinew_skin_set_pose", &data);
    if (r != SINEW_OK) return r;
    const sinew_host_api* host = &world->host;
    uint32_t flags = 0;
    r = check_pose_desc(host, data, pose, &flags);
    if (r != SINEW_OK) return r;
    /* The new pose is built in scratch and checked there, so a refused one leaves the last
     * good pose in place. */
    uint32_t jn = data->rig->view.joint_count;
    float* model = data->scratch;
    float* skinning = data->scratch + 16u * jn;
    if (pose->space == SINEW_POSE_LOCAL) {
        sinew_rig_data_local_to_model(data->rig, pose->matrices, model);
        /* Finite locals can still overflow when multiplied down a long chain. */
        if (!sinew_matrix_finite(model, jn))
            return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                                   "sinew_skin_set_pose: forward kinematics overflowed");
    } else {
        memcpy(model, pose->matrices, (size_t)jn * 64u);
    }
    const float* inv = data->rig->view.inverse_bind_matrices;
    for (uint32_t j = 0; j < jn; ++j) {
        glm_mat4_mul((vec4*)(model + 16u * j), (vec4*)(inv + 16u * j),
                     (vec4*)(skinning + 16u * j));
    }
    r = sinew_pose_check_range(host, data->rig, skinning, "sinew_skin_set_pose");
    if (r != SINEW_OK) return r;
    memcpy(data->model, model, (size_t)jn * 64u);
    memcpy(data->skinning, skinning, (size_t)jn * 64u);
    /* Poses set between two steps collapse into the last one, with all their flags. */
    data->pose_flags = (data->pose_dirty ? data->pose_flags : 0u) | flags;
    data->has_pose = true;
    data->pose_dirty = true;
    return SINEW_OK;
}

static sinew_result step_one(sinew_skin_data* skin, float dt)
{
    sinew_result r = SINEW_OK;
    if (skin->pose_dirty) {
        sinew_pose_view pose = { (uint32_t)sizeof(sinew_pose_view), skin->rig->view.joint_count,
                                 skin->model, skin->skinning, skin->pose_flags };
        r = sinew_backend_result(skin->host, skin->vt, "set_pose",
                                 skin->vt->set_pose(skin->instance, &pose));
        skin->pose_dirty = false;
        skin->pose_flags = 0;
    }
    if (r == SINEW_OK)
        r = sinew_backend_result(skin->host, skin->vt, "step", skin->vt->step(skin->instance, dt));
    return r;
}

static void step_job(void* data, uint32_t begin, uint32_t end)
{
    sinew_skin_data** list = (sinew_skin_data**)data;
    for (uint32_t i = begin; i < end; ++i) list[i]->step_result = step_one(list[i], list[i]->step_dt);
}

static sinew_result check_dt(const sinew_world* world, float dt, const char* fn)
{
    if (!isfinite(dt) || dt < 0.0f)
        return sinew_host_fail(&world->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: dt %g must be finite and not negative", fn, (double)dt);
    return SINEW_OK;
}

sinew_result sinew_world_update(sinew_world* world, float dt)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = sinew_world_check_idle(world, "sinew_world_update");
    if (r == SINEW_OK) r = check_dt(world, dt, "sinew_world_update");
    if (r != SINEW_OK) return r;
    r = sinew_grow(&world->host, (void**)&world->update_list, &world->update_capacity,
                   world->skin_slot_count, sizeof(sinew_skin_data*));
    if (r != SINEW_OK) return r;
    uint32_t n = 0;
    for (uint32_t i = 0; i < world->skin_slot_count; ++i) {
        sinew_skin_data* skin = world->skins[i].skin;
        if (!skin) continue;
        sinew_skin_apply_swap(world, skin, false);
        skin->step_dt = dt;
        world->update_list[n++] = skin;
    }
    /* With at least as many skins as threads, skins are the unit of work and each backend
     * runs inline on its thread; with fewer, skins go one by one and each backend splits its
     * vertices over the threads. */
    world->stepping = "sinew_world_update";
    if (n >= world->host.jobs.thread_count) {
        sinew_host_parallel_for(&world->host, step_job, world->update_list, n, 1);
    } else {
        step_job(world->update_list, 0, n);
    }
    world->stepping = NULL;
    for (uint32_t i = 0; i < n; ++i) {
        if (world->update_list[i]->step_result != SINEW_OK) return world->update_list[i]->step_result;
    }
    return SINEW_OK;
}

sinew_result sinew_skin_update(sinew_world* world, sinew_skin skin, float dt)
{
    sinew_skin_data* data;
    sinew_result r = sinew_world_idle_skin(world, skin, "sinew_skin_update", &data);
    if (r != SINEW_OK) return r;
    r = check_dt(world, dt, "sinew_skin_update");
    if (r != SINEW_OK) return r;
    sinew_skin_apply_swap(world, data, false);
    world->stepping = "sinew_skin_update";
    r = step_one(data, dt);
    world->stepping = NULL;
    return r;
}

/* ---- output ---- */

/* Checks desc and fills the view every backend kind starts from. An external output keeps its
 * extension chain in view->next and its host pointers (which may be NULL). */
static sinew_result make_output_view(const sinew_world* world, const sinew_skin_data* skin,
                                     const sinew_output_desc* desc, const char* fn,
                                     sinew_output_view* view)
{
    const sinew_host_api* host = &world->host;
    if (desc->struct_size < OUTPUT_DESC_MIN_SIZE)
        return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE,
                               "%s: struct_size %u is too small (use SINEW_OUTPUT_DESC_INIT)", fn,
                               desc->struct_size);
    bool external = desc->kind == SINEW_OUTPUT_EXTERNAL;
    if (!external && desc->kind != SINEW_OUTPUT_HOST)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: kind %d is not a sinew_output_kind", fn, (int)desc->kind);
    if (!external && desc->next)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "%s: a host output takes no extension (next is not NULL)", fn);
    if (external) {
        if (!desc->next)
            return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                                   "%s: an external output without an output extension in "
                                   "next (sinew_vk_output_get_desc fills one)", fn);
        for (const sinew_ext_header* h = (const sinew_ext_header*)desc->next; h;
             h = (const sinew_ext_header*)h->next) {
            if (h->struct_size < sizeof(sinew_ext_header))
                return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE,
                                       "%s: an output extension has struct_size %u", fn,
                                       h->struct_size);
            if (h->type != SINEW_EXT_VULKAN_OUTPUT && h->type != SINEW_EXT_VULKAN_RANGE &&
                h->type != SINEW_EXT_CUDA_OUTPUT)
                return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                                       "%s: extension type 0x%x is not an output extension", fn,
                                       (unsigned)h->type);
        }
    }
    uint32_t n = skin->rig->view.render_mesh.vertex_count;
    if (desc->vertex_capacity < n)
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING,
                               "%s: vertex_capacity %u is below the %u vertices of the render mesh",
                               fn, desc->vertex_capacity, n);
    if (!desc->positions && !external)
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING, "%s: positions is NULL", fn);
    if (!desc->positions && desc->normals)
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING,
                               "%s: normals without positions", fn);
    size_t ps = desc->position_stride ? desc->position_stride : 12u;
    size_t ns = desc->normal_stride ? desc->normal_stride : 12u;
    if (ps < 12u || ps % 4u || (desc->normals && (ns < 12u || ns % 4u)))
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING,
                               "%s: strides must be multiples of 4 and at least 12 bytes "
                               "(position %zu, normal %zu)", fn, ps, ns);
    if (((uintptr_t)desc->positions % 4u) || ((uintptr_t)desc->normals % 4u))
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING,
                               "%s: output arrays must be 4-byte aligned", fn);
    view->struct_size = (uint32_t)sizeof(sinew_output_view);
    view->vertex_count = n;
    view->positions = desc->positions;
    view->position_stride = ps;
    view->normals = desc->normals;
    view->normal_stride = ns;
    view->next = external ? desc->next : NULL;
    return SINEW_OK;
}

/* Hands a (checked) binding to a backend by the rule in sinew.h: a GPU backend gets the
 * extension chain and the host pointers; a CPU backend gets the host pointers only, and an
 * external output without them cannot be bound to it. */
static sinew_result bind_backend_output(const sinew_world* world, const sinew_backend_vtable* vt,
                                        void* instance, const sinew_output_view* view)
{
    const sinew_host_api* host = &world->host;
    if (!view || !view->next || (vt->flags & SINEW_BACKEND_FLAG_GPU))
        return sinew_backend_result(host, vt, "bind_output", vt->bind_output(instance, view));
    if (!view->positions)
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING,
                               "backend \"%s\" runs on the CPU, and the external output has no "
                               "host-visible memory to write (bind it to a GPU backend or use "
                               "host-visible memory)", vt->name);
    sinew_output_view host_view = *view;
    host_view.next = NULL;
    return sinew_backend_result(host, vt, "bind_output", vt->bind_output(instance, &host_view));
}

sinew_result sinew_skin_read_output(const sinew_world* world, sinew_skin skin,
                                    const sinew_output_desc* desc)
{
    const sinew_skin_data* data = sinew_world_get_skin(world, skin);
    if (!data) return sinew_world_bad_skin(world, skin, "sinew_skin_read_output");
    if (!desc)
        return sinew_host_fail(&world->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_skin_read_output: desc is NULL");
    sinew_output_view view;
    sinew_result r = make_output_view(world, data, desc, "sinew_skin_read_output", &view);
    if (r != SINEW_OK) return r;
    /* Reading copies through host pointers, whatever the kind. */
    if (!view.positions)
        return sinew_host_fail(&world->host, SINEW_ERROR_OUTPUT_BINDING,
                               "sinew_skin_read_output: the external output has no host "
                               "pointers to copy into");
    view.next = NULL;
    return sinew_backend_result(&world->host, data->vt, "read_output",
                                data->vt->read_output(data->instance, &view));
}

sinew_result sinew_skin_bind_output(sinew_world* world, sinew_skin skin,
                                    const sinew_output_desc* desc)
{
    sinew_skin_data* data;
    sinew_result r = sinew_world_idle_skin(world, skin, "sinew_skin_bind_output", &data);
    if (r != SINEW_OK) return r;
    if (!desc) {
        r = bind_backend_output(world, data->vt, data->instance, NULL);
        if (r == SINEW_OK) data->bound = false;
        return r;
    }
    sinew_output_view view;
    r = make_output_view(world, data, desc, "sinew_skin_bind_output", &view);
    if (r == SINEW_OK) r = bind_backend_output(world, data->vt, data->instance, &view);
    if (r != SINEW_OK) return r;
    data->bound = true;
    data->bound_view = view;
    return SINEW_OK;
}
