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
