/* The Vulkan module's side of the world's services: its service table (SINEW_SERVICE_VULKAN,
 * sinew_plugin.h) and the tie between a world and a context that sinew_vk_register_backends
 * makes. SPDX-License-Identifier: MIT
 *
 * A tie is a world's Vulkan service table together with the context it is tied to. The world
 * holds it twice: as its SINEW_SERVICE_VULKAN service (where fps-cuda finds the output
 * functions) and as the user pointer of vk-lbs, vk-dqs and vk-pbd (where they find their
 * context). The world owns it (its destroy hook frees it); the context lists its ties, so that
 * destroying the context unties them, and the backends' probe then answers
 * BACKEND_UNAVAILABLE. A world that only binds a Vulkan output (sinew_vk_output_bind) gets a
 * constant table with the output functions and no context. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "vk_internal.h"

#define VK_TIE_MAGIC 0x766b7469u

struct sinew_vk_tie {
    sinew_vk_service service;           /* first: the table the world provides */
    uint32_t magic;
    /* The context, NULL once it is destroyed: read by backends on any thread (a swap's
     * preparation runs on its own), written by registration and the context's destruction. */
    _Atomic(sinew_vk_context*) ctx;
    sinew_allocator allocator;          /* the one the tie was allocated with */
    struct sinew_vk_tie* next;          /* in ctx->ties, under ctx->ties_lock */
    /* The skins bound to an engine's range (sinew_vk_record): bound and unbound from the
     * engine's thread, and from the world's threads when a swap takes over or a skin goes. */
    pthread_mutex_t recorders_lock;
    sinew_vk_recorder* recorders;
    sinew_vk_recorder* retired;         /* destroyed skins an engine's frame may still run */
};

static sinew_vk_context* no_context(const sinew_vk_service* service)
{
    (void)service;
    return NULL;
}

static sinew_vk_context* tie_context(const sinew_vk_service* service)
{
    /* Only ties carry this function, and a tie is never a const object. */
    sinew_vk_tie* tie = (sinew_vk_tie*)service;
    return atomic_load_explicit(&tie->ctx, memory_order_acquire);
}

static const sinew_vk_service functions_only = {
    {(uint32_t)sizeof(sinew_vk_service), SINEW_VK_SERVICE_VERSION},
    no_context,
    sinew_vk_output_export_memory,
    sinew_vk_output_export_semaphores,
    sinew_vk_output_set_external_writer,
    sinew_vk_output_external_frame,
};

/* The tie behind a service table, or NULL for another table (the constant one). */
static sinew_vk_tie* as_tie(const sinew_vk_service* service)
{
    if (!service || service->context != tie_context) return NULL;
    sinew_vk_tie* tie = (sinew_vk_tie*)service;
    return tie->magic == VK_TIE_MAGIC ? tie : NULL;
}

static const sinew_vk_service* world_service(const sinew_world* world)
{
    const void* table = NULL;
    (void)sinew_world_get_service(world, SINEW_SERVICE_VULKAN, SINEW_VK_SERVICE_VERSION, &table);
    return (const sinew_vk_service*)table;
}

static void link_tie(sinew_vk_tie* tie, sinew_vk_context* ctx)
{
    pthread_mutex_lock(&ctx->ties_lock);
    tie->next = ctx->ties;
    ctx->ties = tie;
    atomic_store_explicit(&tie->ctx, ctx, memory_order_release);
    pthread_mutex_unlock(&ctx->ties_lock);
}

static void unlink_tie(sinew_vk_tie* tie)
{
    sinew_vk_context* ctx = atomic_load_explicit(&tie->ctx, memory_order_acquire);
    if (!ctx) return;
    pthread_mutex_lock(&ctx->ties_lock);
    for (sinew_vk_tie** p = &ctx->ties; *p; p = &(*p)->next) {
        if (*p == tie) {
            *p = tie->next;
            break;
        }
    }
    atomic_store_explicit(&tie->ctx, NULL, memory_order_release);
    pthread_mutex_unlock(&ctx->ties_lock);
}

void sinew_vk_context_untie(sinew_vk_context* ctx)
{
    if (!ctx->ties_lock_ready) return;
    pthread_mutex_lock(&ctx->ties_lock);
    for (sinew_vk_tie* tie = ctx->ties; tie; tie = tie->next)
        atomic_store_explicit(&tie->ctx, NULL, memory_order_release);
    ctx->ties = NULL;
    pthread_mutex_unlock(&ctx->ties_lock);
}

/* The world's destroy hook: its tie goes with it. */
static void free_tie(const sinew_host_api* host, void* user)
{
    (void)host;
    sinew_vk_tie* tie = (sinew_vk_tie*)user;
    unlink_tie(tie);
    while (tie->retired) {
        sinew_vk_recorder* r = tie->retired;
        tie->retired = r->next;
        r->destroy(r);
    }
    pthread_mutex_destroy(&tie->recorders_lock);
    tie->magic = 0;
    sinew_allocator a = tie->allocator;
    a.free(tie, a.user);
}

/* A new tie made the world's Vulkan service, freed with the world. */
static sinew_result new_tie(sinew_world* world, sinew_vk_context* ctx, sinew_vk_tie** out)
{
    sinew_vk_tie* tie = (sinew_vk_tie*)sinew_host_calloc(&ctx->host, 1, sizeof *tie);
    if (!tie)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_OUT_OF_MEMORY,
                               "sinew_vk_register_backends: out of memory");
    if (pthread_mutex_init(&tie->recorders_lock, NULL) != 0) {
        sinew_host_free(&ctx->host, tie);
        return sinew_host_fail(&ctx->host, SINEW_ERROR_OUT_OF_MEMORY,
                               "sinew_vk_register_backends: cannot create a lock");
    }
    tie->service = functions_only;
    tie->service.context = tie_context;
    tie->magic = VK_TIE_MAGIC;
    atomic_init(&tie->ctx, NULL);
    tie->allocator = ctx->host.allocator;
    const sinew_vk_service* before = world_service(world);
    sinew_result r = sinew_world_set_service(world, SINEW_SERVICE_VULKAN, &tie->service);
    if (r == SINEW_OK) {
        r = sinew_world_add_destroy_hook(world, free_tie, tie);
        if (r != SINEW_OK) (void)sinew_world_set_service(world, SINEW_SERVICE_VULKAN, before);
    }
    if (r != SINEW_OK) {
        pthread_mutex_destroy(&tie->recorders_lock);
        sinew_host_free(&ctx->host, tie);
        return r;
    }
    *out = tie;
    return SINEW_OK;
}

sinew_result sinew_vk_tie_world(sinew_world* world, sinew_vk_context* ctx, sinew_vk_tie** out)
{
    sinew_vk_tie* tie = as_tie(world_service(world));
    if (!tie) {
        sinew_result r = new_tie(world, ctx, &tie);
        if (r != SINEW_OK) return r;
    }
    /* Tied again: the new context replaces the old. */
    if (atomic_load_explicit(&tie->ctx, memory_order_acquire) != ctx) {
        unlink_tie(tie);
        link_tie(tie, ctx);
    }
    *out = tie;
    return SINEW_OK;
}

sinew_result sinew_vk_provide_service(sinew_world* world)
{
    if (world_service(world)) return SINEW_OK;
    return sinew_world_set_service(world, SINEW_SERVICE_VULKAN, &functions_only);
}

sinew_vk_context* sinew_vk_backend_context(const sinew_host_api* host)
{
    sinew_vk_tie* tie = as_tie((const sinew_vk_service*)sinew_host_backend_user(host));
    return tie ? atomic_load_explicit(&tie->ctx, memory_order_acquire) : NULL;
}

sinew_result sinew_vk_backend_probe(const sinew_host_api* host)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    return sinew_vk_backend_context(host) ? SINEW_OK : SINEW_ERROR_BACKEND_UNAVAILABLE;
}

sinew_vk_tie* sinew_vk_backend_tie(const sinew_host_api* host)
{
    return as_tie((const sinew_vk_service*)sinew_host_backend_user(host));
}

void sinew_vk_tie_add_recorder(sinew_vk_tie* tie, sinew_vk_recorder* rec)
{
    pthread_mutex_lock(&tie->recorders_lock);
    sinew_vk_recorder* r = tie->recorders;
    while (r && r != rec) r = r->next;
    if (!r) {
        rec->next = tie->recorders;
        tie->recorders = rec;
    }
    pthread_mutex_unlock(&tie->recorders_lock);
}

void sinew_vk_tie_remove_recorder(sinew_vk_tie* tie, sinew_vk_recorder* rec)
{
    pthread_mutex_lock(&tie->recorders_lock);
    for (sinew_vk_recorder** p = &tie->recorders; *p; p = &(*p)->next) {
        if (*p == rec) {
            *p = rec->next;
            break;
        }
    }
    rec->next = NULL;
    pthread_mutex_unlock(&tie->recorders_lock);
}

void sinew_vk_tie_retire_recorder(sinew_vk_tie* tie, sinew_vk_recorder* rec)
{
    sinew_vk_tie_remove_recorder(tie, rec);
    pthread_mutex_lock(&tie->recorders_lock);
    rec->retire_calls = SINEW_VK_RECORD_FRAMES;
    rec->next = tie->retired;
    tie->retired = rec;
    pthread_mutex_unlock(&tie->recorders_lock);
}

/* Counts a sinew_vk_record call down on the retired recorders and takes out those whose last
 * recorded frame has left the ring's reach (under the tie's lock); returns that list. */
static sinew_vk_recorder* take_expired(sinew_vk_tie* tie)
{
    sinew_vk_recorder* expired = NULL;
    sinew_vk_recorder** p = &tie->retired;
    while (*p) {
        sinew_vk_recorder* r = *p;
        if (--r->retire_calls == 0) {
            *p = r->next;
            r->next = expired;
            expired = r;
        } else {
            p = &r->next;
        }
    }
    return expired;
}

/* The barrier after the dispatches: compute writes to the engine's reads (info's, or vertex
 * input where the queue has graphics, else later shaders). */
static void record_barrier(const sinew_vk_context* ctx, const sinew_vk_record_info* info,
                           VkCommandBuffer cmd)
{
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, VK_ACCESS_SHADER_WRITE_BIT, 0};
    VkPipelineStageFlags dst = info ? info->dst_stage_mask : 0u;
    mb.dstAccessMask = info ? info->dst_access_mask : 0u;
    bool graphics = (ctx->caps & SINEW_VK_CAP_GRAPHICS) != 0;
    if (!dst) dst = graphics ? VK_PIPELINE_STAGE_VERTEX_INPUT_BIT : VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    if (!mb.dstAccessMask)
        mb.dstAccessMask = graphics ? VK_ACCESS_VERTEX_ATTRIBUTE_READ_BIT : VK_ACCESS_SHADER_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, dst, 0, 1, &mb, 0, NULL, 0,
                         NULL);
}

sinew_result sinew_vk_record(sinew_world* world, VkCommandBuffer cmd,
                             const sinew_vk_record_info* info, uint32_t* out_recorded)
{
    if (out_recorded) *out_recorded = 0;
    sinew_vk_tie* tie = world ? as_tie(world_service(world)) : NULL;
    sinew_vk_context* ctx = tie ? atomic_load_explicit(&tie->ctx, memory_order_acquire) : NULL;
    if (!world || !cmd)
        return ctx ? sinew_host_fail(&ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                                     "sinew_vk_record: command buffer is NULL")
                   : SINEW_ERROR_INVALID_ARGUMENT;
    if (!ctx) return SINEW_ERROR_NO_SERVICE;
    if (info && info->struct_size < sizeof(sinew_vk_record_info))
        return sinew_host_fail(&ctx->host, SINEW_ERROR_STRUCT_SIZE,
                               "sinew_vk_record: info struct_size %u is below %zu",
                               info->struct_size, sizeof(sinew_vk_record_info));
    uint32_t count = 0;
    pthread_mutex_lock(&tie->recorders_lock);
    for (sinew_vk_recorder* r = tie->recorders; r; r = r->next) count += (uint32_t)r->record(r, cmd);
    sinew_vk_recorder* expired = take_expired(tie);
    pthread_mutex_unlock(&tie->recorders_lock);
    while (expired) {
        sinew_vk_recorder* r = expired;
        expired = r->next;
        r->destroy(r);
    }
    if (count) record_barrier(ctx, info, cmd);
    if (out_recorded) *out_recorded = count;
    return SINEW_OK;
}
