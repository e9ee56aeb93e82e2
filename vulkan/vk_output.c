/* Output buffers: a skin component's positions and normals in one VkBuffer with two to four
 * slots, the frame protocol over two timeline semaphores, binding to a skin, and export of the
 * memory and semaphores as opaque fds. Also the small buffer helpers the compute backends use.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "vk_internal.h"

#define OUTPUT_DESC_MIN_SIZE ((uint32_t)sizeof(sinew_vk_output_desc))
/* Keeps 2 * slots * 12 * capacity far inside VkDeviceSize and every driver's buffer limits. */
#define OUTPUT_MAX_VERTICES (1u << 26)

/* An external GPU writer (sinew_vk_output_set_external_writer) is recorded in the output's
 * gpu_writer slot as this tag's address, which no vk backend instance can have; the frame in
 * which it took the signal of `written` over has gpu_wrote = WROTE_EXTERNAL (a vk backend's
 * queue writes set 1). */
static const char external_writer_tag = 0;
#define EXTERNAL_WRITER ((void*)&external_writer_tag)
#define WROTE_EXTERNAL 2

static int transfers_ownership(const sinew_vk_output* out);

static VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a)
{
    return (v + a - 1u) / a * a;
}

/* ---- buffers ---- */

static int32_t pick_memory_type(const sinew_vk_context* ctx, uint32_t bits,
                                VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred)
{
    int32_t t = sinew_vk_context_find_memory_type(ctx, bits, required | preferred);
    return t >= 0 ? t : sinew_vk_context_find_memory_type(ctx, bits, required);
}

sinew_result sinew_vk_buffer_create(sinew_vk_context* ctx, VkDeviceSize size,
                                    VkBufferUsageFlags usage, VkMemoryPropertyFlags required,
                                    VkMemoryPropertyFlags preferred, const char* what,
                                    sinew_vk_buffer* out)
{
    memset(out, 0, sizeof *out);
    VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = size;
    bi.usage = usage;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkResult vr = vkCreateBuffer(ctx->device, &bi, NULL, &out->buffer);
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, what);
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(ctx->device, out->buffer, &req);
    int32_t type = pick_memory_type(ctx, req.memoryTypeBits, required, preferred);
    if (type < 0) {
        sinew_vk_buffer_destroy(ctx, out);
        return sinew_host_fail(&ctx->host, SINEW_ERROR_UNSUPPORTED,
                               "vulkan: no memory type with properties 0x%x for %s",
                               (unsigned)required, what);
    }
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = (uint32_t)type;
    vr = vkAllocateMemory(ctx->device, &ai, NULL, &out->memory);
    if (vr == VK_SUCCESS) vr = vkBindBufferMemory(ctx->device, out->buffer, out->memory, 0);
    VkMemoryPropertyFlags props = ctx->memory.memoryTypes[type].propertyFlags;
    if (vr == VK_SUCCESS && (props & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
        vr = vkMapMemory(ctx->device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped);
    if (vr != VK_SUCCESS) {
        sinew_vk_buffer_destroy(ctx, out);
        return sinew_vk_fail(ctx, vr, what);
    }
    out->size = size;
    out->coherent = (props & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
    return SINEW_OK;
}

void sinew_vk_buffer_destroy(sinew_vk_context* ctx, sinew_vk_buffer* buf)
{
    if (buf->mapped) vkUnmapMemory(ctx->device, buf->memory);
    if (buf->buffer) vkDestroyBuffer(ctx->device, buf->buffer, NULL);
    if (buf->memory) vkFreeMemory(ctx->device, buf->memory, NULL);
    memset(buf, 0, sizeof *buf);
}

sinew_result sinew_vk_buffer_flush(sinew_vk_context* ctx, VkDeviceMemory memory, int coherent,
                                   VkDeviceSize offset, VkDeviceSize size)
{
    if (coherent || size == 0) return SINEW_OK;
    /* Flushed ranges must start and end on the device's atom size (or the allocation's end). */
    VkDeviceSize atom = ctx->properties.limits.nonCoherentAtomSize;
    if (atom == 0) atom = 1;
    VkMappedMemoryRange range = {VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    range.memory = memory;
    range.offset = offset / atom * atom;
    range.size = VK_WHOLE_SIZE;
    VkResult vr = vkFlushMappedMemoryRanges(ctx->device, 1, &range);
    return vr == VK_SUCCESS ? SINEW_OK : sinew_vk_fail(ctx, vr, "vkFlushMappedMemoryRanges");
}

typedef struct copy_job {
    VkBuffer src, dst;
    VkBufferCopy region;
} copy_job;

static void record_copy(VkCommandBuffer cmd, void* user)
{
    const copy_job* job = user;
    vkCmdCopyBuffer(cmd, job->src, job->dst, 1, &job->region);
}

sinew_result sinew_vk_buffer_upload(sinew_vk_context* ctx, sinew_vk_buffer* buf,
                                    VkDeviceSize offset, const void* data, VkDeviceSize size)
{
    if (size == 0) return SINEW_OK;
    if (buf->mapped) {
        memcpy((char*)buf->mapped + offset, data, (size_t)size);
        return sinew_vk_buffer_flush(ctx, buf->memory, buf->coherent, offset, size);
    }
    sinew_vk_buffer staging;
    sinew_result r = sinew_vk_buffer_create(
        ctx, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
        VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, "staging buffer", &staging);
    if (r != SINEW_OK) return r;
    memcpy(staging.mapped, data, (size_t)size);
    r = sinew_vk_buffer_flush(ctx, staging.memory, staging.coherent, 0, size);
    copy_job job = {staging.buffer, buf->buffer, {0, offset, size}};
    if (r == SINEW_OK) r = sinew_vk_context_submit_wait(ctx, record_copy, &job);
    sinew_vk_buffer_destroy(ctx, &staging);
    return r;
}

/* ---- outputs: creation ---- */

static sinew_result create_semaphore(sinew_vk_output* out, int exportable, VkSemaphore* sem)
{
    VkSemaphoreTypeCreateInfo type = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    type.initialValue = 0;
    VkExportSemaphoreCreateInfo exp = {VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO};
    exp.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    if (exportable) type.pNext = &exp;
    VkSemaphoreCreateInfo info = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    info.pNext = &type;
    VkResult vr = vkCreateSemaphore(out->ctx->device, &info, NULL, sem);
    return vr == VK_SUCCESS ? SINEW_OK : sinew_vk_fail(out->ctx, vr, "vkCreateSemaphore");
}

/* Does exporting a buffer of this usage need a dedicated allocation, and can it export at all? */
static sinew_result export_properties(sinew_vk_context* ctx, VkBufferUsageFlags usage,
                                      int* dedicated_only)
{
    VkPhysicalDeviceExternalBufferInfo q = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO};
    q.usage = usage;
    q.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkExternalBufferProperties p = {VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
    vkGetPhysicalDeviceExternalBufferProperties(ctx->physical_device, &q, &p);
    VkExternalMemoryFeatureFlags f = p.externalMemoryProperties.externalMemoryFeatures;
    if (!(f & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT))
        return sinew_host_fail(&ctx->host, SINEW_ERROR_UNSUPPORTED,
                               "sinew_vk_output_create: the device cannot export buffer memory "
                               "of this usage (0x%x) as an opaque fd", (unsigned)usage);
    *dedicated_only = (f & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) != 0;
    return SINEW_OK;
}

static sinew_result output_allocate(sinew_vk_output* out, VkBufferUsageFlags usage)
{
    sinew_vk_context* ctx = out->ctx;
    int exportable = (out->flags & SINEW_VK_OUTPUT_EXPORTABLE) != 0;
    int dedicated_only = 0;
    if (exportable) {
        sinew_result r = export_properties(ctx, usage, &dedicated_only);
        if (r != SINEW_OK) return r;
    }
    VkExternalMemoryBufferCreateInfo ext = {VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
    ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.pNext = exportable ? &ext : NULL;
    bi.size = out->buffer_size;
    bi.usage = usage;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkResult vr = vkCreateBuffer(ctx->device, &bi, NULL, &out->buffer);
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkCreateBuffer (output)");

    VkMemoryDedicatedRequirements dreq = {VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
    VkMemoryRequirements2 req2 = {VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
    req2.pNext = &dreq;
    VkBufferMemoryRequirementsInfo2 rq = {VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2};
    rq.buffer = out->buffer;
    vkGetBufferMemoryRequirements2(ctx->device, &rq, &req2);
    const VkMemoryRequirements* req = &req2.memoryRequirements;
    /* An exported allocation is dedicated whenever the driver wants it: importers (CUDA's
     * cudaExternalMemoryDedicated, Vulkan's VkMemoryDedicatedAllocateInfo) must then say so. */
    out->dedicated = exportable && (dedicated_only || dreq.requiresDedicatedAllocation ||
                                    dreq.prefersDedicatedAllocation);

    int32_t type;
    if (out->flags & SINEW_VK_OUTPUT_DEVICE_LOCAL) {
        type = pick_memory_type(ctx, req->memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
        if (type < 0) type = pick_memory_type(ctx, req->memoryTypeBits, 0, 0);
    } else {
        type = pick_memory_type(ctx, req->memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                                VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    }
    if (type < 0)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_UNSUPPORTED,
                               "sinew_vk_output_create: no %s memory type for the output buffer",
                               (out->flags & SINEW_VK_OUTPUT_DEVICE_LOCAL) ? "device-local"
                                                                           : "host-visible");
    VkMemoryDedicatedAllocateInfo ded = {VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    ded.buffer = out->buffer;
    VkExportMemoryAllocateInfo exp = {VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO};
    exp.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    exp.pNext = out->dedicated ? &ded : NULL;
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.pNext = exportable ? (const void*)&exp : NULL;
    ai.allocationSize = req->size;
    ai.memoryTypeIndex = (uint32_t)type;
    vr = vkAllocateMemory(ctx->device, &ai, NULL, &out->memory);
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkAllocateMemory (output)");
    vr = vkBindBufferMemory(ctx->device, out->buffer, out->memory, 0);
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkBindBufferMemory (output)");
    out->allocation_size = req->size;
    out->memory_type = (uint32_t)type;
    VkMemoryPropertyFlags props = ctx->memory.memoryTypes[type].propertyFlags;
    out->coherent = (props & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
    if (props & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
        void* p = NULL;
        vr = vkMapMemory(ctx->device, out->memory, 0, VK_WHOLE_SIZE, 0, &p);
        if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkMapMemory (output)");
        out->mapped = p;
        /* Defined contents before the first frame: a renderer may draw slot 0 right away. */
        memset(out->mapped, 0, (size_t)out->buffer_size);
        sinew_result r = sinew_vk_buffer_flush(ctx, out->memory, out->coherent, 0,
                                               out->buffer_size);
        if (r != SINEW_OK) return r;
    }
    return SINEW_OK;
}

static void output_free(sinew_vk_output* out)
{
    sinew_vk_context* ctx = out->ctx;
    for (sinew_vk_output** at = &ctx->outputs; *at; at = &(*at)->next_output)
        if (*at == out) {
            *at = out->next_output;
            break;
        }
    if (out->written) vkDestroySemaphore(ctx->device, out->written, NULL);
    if (out->read) vkDestroySemaphore(ctx->device, out->read, NULL);
    if (out->mapped) vkUnmapMemory(ctx->device, out->memory);
    if (out->buffer) vkDestroyBuffer(ctx->device, out->buffer, NULL);
    if (out->memory) vkFreeMemory(ctx->device, out->memory, NULL);
    out->magic = 0;
    sinew_host_free(&ctx->host, out);
}

/* The descriptor against the context: size, chain, vertex capacity, slot count (0 for 2),
 * flags, timeline semaphores, and exportable memory when asked. */
static sinew_result check_output_desc(const sinew_vk_context* ctx,
                                      const sinew_vk_output_desc* desc)
{
    const sinew_host_api* host = &ctx->host;
    if (desc->struct_size < OUTPUT_DESC_MIN_SIZE)
        return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE,
                               "sinew_vk_output_create: struct_size %u is too small (at least "
                               "%u; use SINEW_VK_OUTPUT_DESC_INIT)",
                               desc->struct_size, OUTPUT_DESC_MIN_SIZE);
    if (desc->next)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "sinew_vk_output_create: next is not NULL, and no extension is "
                               "defined");
    if (desc->vertex_capacity == 0 || desc->vertex_capacity > OUTPUT_MAX_VERTICES)
        return sinew_host_fail(host, desc->vertex_capacity ? SINEW_ERROR_LIMIT
                                                           : SINEW_ERROR_OUTPUT_BINDING,
                               "sinew_vk_output_create: vertex_capacity %u (1 to %u)",
                               desc->vertex_capacity, OUTPUT_MAX_VERTICES);
    uint32_t slots = desc->slot_count ? desc->slot_count : 2u;
    if (slots < 2u || slots > SINEW_VK_OUTPUT_MAX_SLOTS)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_output_create: slot_count %u (0 for 2, or 2 to %u)",
                               desc->slot_count, SINEW_VK_OUTPUT_MAX_SLOTS);
    uint32_t known = SINEW_VK_OUTPUT_EXPORTABLE | SINEW_VK_OUTPUT_DEVICE_LOCAL;
    if (desc->flags & ~known)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_output_create: unknown flags 0x%x", desc->flags & ~known);
    if (!(ctx->caps & SINEW_VK_CAP_TIMELINE_SEMAPHORE))
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "sinew_vk_output_create: the device has no timeline semaphores "
                               "(Vulkan 1.2 timelineSemaphore)");
    if ((desc->flags & SINEW_VK_OUTPUT_EXPORTABLE) && !(ctx->caps & SINEW_VK_CAP_EXPORT_MEMORY_FD))
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "sinew_vk_output_create: SINEW_VK_OUTPUT_EXPORTABLE needs "
                               "VK_KHR_external_memory_fd, which the device lacks");
    return SINEW_OK;
}

/* The slots' regions in the one buffer: positions and normals of each slot, every region
 * starting where a storage-buffer descriptor, a vertex binding and a non-coherent flush may
 * all begin. */
static void layout_slots(sinew_vk_output* out)
{
    const VkPhysicalDeviceLimits* lim = &out->ctx->properties.limits;
    VkDeviceSize align = 256u;
    if (lim->minStorageBufferOffsetAlignment > align) align = lim->minStorageBufferOffsetAlignment;
    if (lim->nonCoherentAtomSize > align) align = lim->nonCoherentAtomSize;
    out->slot_bytes = (VkDeviceSize)out->capacity * 12u;
    VkDeviceSize region = align_up(out->slot_bytes, align);
    for (uint32_t k = 0; k < out->slot_count; ++k) {
        out->position_offset[k] = 2u * k * region;
        out->normal_offset[k] = (2u * k + 1u) * region;
    }
    out->buffer_size = 2u * out->slot_count * region;
}

/* Each slot's extension struct, which a skin's output desc chains to bind that slot. */
static void fill_slot_exts(sinew_vk_output* out)
{
    for (uint32_t k = 0; k < out->slot_count; ++k) {
        sinew_vk_output_ext* e = &out->ext[k];
        e->header.struct_size = (uint32_t)sizeof *e;
        e->header.type = SINEW_EXT_VULKAN_OUTPUT;
        e->header.next = NULL;
        e->output = out;
        e->slot = k;
        e->buffer = out->buffer;
        e->position_offset = out->position_offset[k];
        e->normal_offset = out->normal_offset[k];
    }
}

sinew_result sinew_vk_output_create(sinew_vk_context* ctx, const sinew_vk_output_desc* desc,
                                    sinew_vk_output** out_output)
{
    if (out_output) *out_output = NULL;
    if (!ctx) return SINEW_ERROR_INVALID_ARGUMENT; /* no logger without a context */
    const sinew_host_api* host = &ctx->host;
    if (!desc || !out_output)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_output_create: %s is NULL", desc ? "out_output" : "desc");
    sinew_result r = check_output_desc(ctx, desc);
    if (r != SINEW_OK) return r;
    sinew_vk_output* out = sinew_host_calloc(host, 1, sizeof *out);
    if (!out)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "sinew_vk_output_create: out of memory");
    out->magic = SINEW_VK_OUTPUT_MAGIC;
    out->ctx = ctx;
    out->capacity = desc->vertex_capacity;
    out->slot_count = desc->slot_count ? desc->slot_count : 2u;
    out->flags = desc->flags;
    layout_slots(out);
    VkBufferUsageFlags usage = VK_BUFFER_USAGE_VERTEX_BUFFER_BIT |
                               VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                               VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                               VK_BUFFER_USAGE_TRANSFER_DST_BIT | desc->usage;
    r = output_allocate(out, usage);
    out->semaphores_exportable = (desc->flags & SINEW_VK_OUTPUT_EXPORTABLE) &&
                                 (ctx->caps & SINEW_VK_CAP_EXPORT_SEMAPHORE_FD);
    if (r == SINEW_OK) r = create_semaphore(out, out->semaphores_exportable, &out->written);
    if (r == SINEW_OK) r = create_semaphore(out, out->semaphores_exportable, &out->read);
    if (r != SINEW_OK) {
        output_free(out);
        return r;
    }
    fill_slot_exts(out);
    out->next_output = ctx->outputs;
    ctx->outputs = out;
    *out_output = out;
    return SINEW_OK;
}

static sinew_vk_output* output_cast(const sinew_vk_output* out)
{
    return out && out->magic == SINEW_VK_OUTPUT_MAGIC ? (sinew_vk_output*)out : NULL;
}

sinew_vk_output* sinew_vk_output_from_ext(const sinew_vk_output_ext* ext)
{
    if (!ext || ext->header.struct_size < sizeof *ext ||
        ext->header.type != SINEW_EXT_VULKAN_OUTPUT)
        return NULL;
    sinew_vk_output* out = output_cast(ext->output);
    if (!out || ext->slot >= out->slot_count || ext != &out->ext[ext->slot]) return NULL;
    return out;
}

void sinew_vk_output_destroy(sinew_vk_output* output)
{
    sinew_vk_output* out = output_cast(output);
    if (!out) return;
    if (out->world) sinew_vk_output_unbind(out);
    sinew_vk_context_lock_queue(out->ctx);
    vkQueueWaitIdle(out->ctx->queue);
    sinew_vk_context_unlock_queue(out->ctx);
    output_free(out);
}

/* ---- binding ---- */

sinew_result sinew_vk_output_get_desc(const sinew_vk_output* output, uint32_t slot,
                                      sinew_output_desc* desc)
{
    const sinew_vk_output* out = output_cast(output);
    if (!out) return SINEW_ERROR_INVALID_ARGUMENT;
    const sinew_host_api* host = &out->ctx->host;
    if (!desc)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_output_get_desc: out_desc is NULL");
    if (desc->struct_size < sizeof(sinew_output_desc))
        return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE,
                               "sinew_vk_output_get_desc: struct_size %u is below %zu (use "
                               "SINEW_OUTPUT_DESC_INIT)", desc->struct_size,
                               sizeof(sinew_output_desc));
    if (slot >= out->slot_count)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_output_get_desc: slot %u of %u", slot, out->slot_count);
    desc->next = &out->ext[slot];
    desc->kind = SINEW_OUTPUT_EXTERNAL;
    desc->vertex_capacity = out->capacity;
    desc->positions = out->mapped ? (float*)(out->mapped + out->position_offset[slot]) : NULL;
    desc->position_stride = 12u;
    desc->normals = out->mapped ? (float*)(out->mapped + out->normal_offset[slot]) : NULL;
    desc->normal_stride = 12u;
    return SINEW_OK;
}

static sinew_result bind_slot(sinew_vk_output* out, sinew_world* world, sinew_skin skin,
                              uint32_t slot)
{
    sinew_output_desc desc = SINEW_OUTPUT_DESC_INIT;
    sinew_result r = sinew_vk_output_get_desc(out, slot, &desc);
    return r == SINEW_OK ? sinew_skin_bind_output(world, skin, &desc) : r;
}

sinew_result sinew_vk_output_bind(sinew_vk_output* output, sinew_world* world, sinew_skin skin)
{
    sinew_vk_output* out = output_cast(output);
    if (!out) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!world)
        return sinew_host_fail(&out->ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_output_bind: world is NULL");
    if (out->world && (out->world != world || out->skin.id != skin.id)) {
        sinew_result r = sinew_vk_output_unbind(out);
        if (r != SINEW_OK) return r;
    }
    /* A GPU backend of another module (fps-cuda) finds the export functions in the world. */
    sinew_result r = sinew_vk_provide_service(world);
    if (r == SINEW_OK) r = bind_slot(out, world, skin, out->write_slot);
    if (r != SINEW_OK) return r;
    out->world = world;
    out->skin = skin;
    return SINEW_OK;
}

sinew_result sinew_vk_output_unbind(sinew_vk_output* output)
{
    sinew_vk_output* out = output_cast(output);
    if (!out) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_world* world = out->world;
    out->world = NULL;
    /* A removed skin has nothing left to unbind (sinew_skin_backend checks without logging). */
    if (!world || !sinew_skin_backend(world, out->skin)) return SINEW_OK;
    return sinew_skin_bind_output(world, out->skin, NULL);
}

/* ---- frames ---- */

static sinew_result wait_read(sinew_vk_output* out, uint64_t value, uint64_t timeout_ns)
{
    VkSemaphoreWaitInfo wi = {VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wi.semaphoreCount = 1;
    wi.pSemaphores = &out->read;
    wi.pValues = &value;
    VkResult vr = vkWaitSemaphores(out->ctx->device, &wi, timeout_ns);
    if (vr == VK_TIMEOUT)
        return sinew_host_fail(&out->ctx->host, SINEW_ERROR_IN_USE,
                               "sinew_vk_output_begin_frame: the renderer has not released "
                               "frame %llu (read value %llu not reached within %llu ns)",
                               (unsigned long long)(value - 1u), (unsigned long long)value,
                               (unsigned long long)timeout_ns);
    return vr == VK_SUCCESS ? SINEW_OK : sinew_vk_fail(out->ctx, vr, "vkWaitSemaphores (read)");
}

sinew_result sinew_vk_output_wait_pending(sinew_vk_output* out, uint64_t timeout_ns)
{
    if (!out->pending_read_wait) return SINEW_OK;
    sinew_result r = wait_read(out, out->pending_read_wait, timeout_ns);
    if (r == SINEW_OK) out->pending_read_wait = 0;
    return r;
}

sinew_result sinew_vk_output_begin_frame(sinew_vk_output* output, uint64_t timeout_ns,
                                         uint32_t* out_slot)
{
    sinew_vk_output* out = output_cast(output);
    if (!out) return SINEW_ERROR_INVALID_ARGUMENT;
    if (out->in_frame)
        return sinew_host_fail(&out->ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_output_begin_frame: frame %llu has begun and not ended",
                               (unsigned long long)out->frames);
    uint64_t f = out->frames;
    uint32_t slot = (uint32_t)(f % out->slot_count);
    /* The slot last held frame f - slot_count; the renderer releases it with value
     * f - slot_count + 1. */
    uint64_t need = f >= out->slot_count ? f - out->slot_count + 1u : 0u;
    sinew_result r = SINEW_OK;
    if (need && !out->gpu_writer) r = wait_read(out, need, timeout_ns);
    if (r == SINEW_OK && out->world) r = bind_slot(out, out->world, out->skin, slot);
    if (r != SINEW_OK) return r;
    /* A GPU writer (bound by the rebind above at the latest) waits in its own submission. */
    out->pending_read_wait = need && out->gpu_writer ? need : 0u;
    if (out->pending_read_wait) {
        uint64_t value = 0;
        if (vkGetSemaphoreCounterValue(out->ctx->device, out->read, &value) == VK_SUCCESS &&
            value >= need)
            out->pending_read_wait = 0;
    }
    out->write_slot = slot;
    out->in_frame = 1;
    out->gpu_wrote = 0;
    if (out_slot) *out_slot = slot;
    return SINEW_OK;
}

sinew_result sinew_vk_output_end_frame(sinew_vk_output* output)
{
    sinew_vk_output* out = output_cast(output);
    if (!out) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_vk_context* ctx = out->ctx;
    if (!out->in_frame)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_output_end_frame: no frame has begun");
    uint64_t value = out->frames + 1u;
    sinew_result r = SINEW_OK;
    if (out->mapped && !out->coherent)
        r = sinew_vk_buffer_flush(ctx, out->memory, 0, out->position_offset[out->write_slot],
                                  out->normal_offset[out->write_slot] + out->slot_bytes -
                                      out->position_offset[out->write_slot]);
    if (r != SINEW_OK) return r;
    VkResult vr = VK_SUCCESS;
    if (out->gpu_wrote == WROTE_EXTERNAL) {
        /* The external writer signals `written` = value after its writes, on its stream. */
    } else if (out->gpu_wrote) {
        /* A signal in a later submission covers every command submitted before it on the
         * queue, so an empty batch publishes the backend's dispatches. */
        VkTimelineSemaphoreSubmitInfo ts = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
        ts.signalSemaphoreValueCount = 1;
        ts.pSignalSemaphoreValues = &value;
        VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.pNext = &ts;
        si.signalSemaphoreCount = 1;
        si.pSignalSemaphores = &out->written;
        sinew_vk_context_lock_queue(ctx);
        vr = vkQueueSubmit(ctx->queue, 1, &si, VK_NULL_HANDLE);
        sinew_vk_context_unlock_queue(ctx);
    } else {
        /* An external writer's signal of an earlier frame may still be queued on its stream:
         * a host signal must come after it (a timeline only grows). */
        if (out->gpu_writer == EXTERNAL_WRITER && out->frames) {
            VkSemaphoreWaitInfo wi = {VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
            wi.semaphoreCount = 1;
            wi.pSemaphores = &out->written;
            wi.pValues = &out->frames;
            vr = vkWaitSemaphores(ctx->device, &wi, UINT64_MAX);
            if (vr != VK_SUCCESS)
                return sinew_vk_fail(ctx, vr, "sinew_vk_output_end_frame: vkWaitSemaphores "
                                     "(the external writer's previous frame)");
        }
        VkSemaphoreSignalInfo si = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
        si.semaphore = out->written;
        si.value = value;
        vr = vkSignalSemaphore(ctx->device, &si);
    }
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "sinew_vk_output_end_frame: signal");
    out->frames = value;
    out->in_frame = 0;
    out->pending_read_wait = 0;
    return SINEW_OK;
}

sinew_result sinew_vk_output_release(sinew_vk_output* output, uint64_t value)
{
    sinew_vk_output* out = output_cast(output);
    if (!out) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_vk_context* ctx = out->ctx;
    uint64_t current = 0;
    VkResult vr = vkGetSemaphoreCounterValue(ctx->device, out->read, &current);
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkGetSemaphoreCounterValue (read)");
    if (value <= current || value > out->frames)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_output_release: value %llu must exceed the current "
                               "release %llu and not exceed the %llu frames published",
                               (unsigned long long)value, (unsigned long long)current,
                               (unsigned long long)out->frames);
    VkSemaphoreSignalInfo si = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    si.semaphore = out->read;
    si.value = value;
    vr = vkSignalSemaphore(ctx->device, &si);
    return vr == VK_SUCCESS ? SINEW_OK : sinew_vk_fail(ctx, vr, "vkSignalSemaphore (read)");
}

/* Fields appended after the first published sinew_vk_output_info; a caller built against
 * that version passes its smaller size and gets the fields it knows. */
#define OUTPUT_INFO_MIN_SIZE ((uint32_t)offsetof(sinew_vk_output_info, external_writer))

sinew_result sinew_vk_output_get_info(const sinew_vk_output* output, sinew_vk_output_info* info)
{
    const sinew_vk_output* out = output_cast(output);
    if (!out) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!info)
        return sinew_host_fail(&out->ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_output_get_info: out_info is NULL");
    if (info->struct_size < OUTPUT_INFO_MIN_SIZE)
        return sinew_host_fail(&out->ctx->host, SINEW_ERROR_STRUCT_SIZE,
                               "sinew_vk_output_get_info: struct_size %u is below %u (use "
                               "SINEW_VK_OUTPUT_INFO_INIT)", info->struct_size,
                               OUTPUT_INFO_MIN_SIZE);
    sinew_vk_output_info full;
    memset(&full, 0, sizeof full);
    full.struct_size = info->struct_size;
    full.buffer = out->buffer;
    full.buffer_size = out->buffer_size;
    full.vertex_capacity = out->capacity;
    full.slot_count = out->slot_count;
    full.flags = out->flags;
    full.host_visible = out->mapped != NULL;
    full.written = out->written;
    full.read = out->read;
    full.frames = out->frames;
    uint32_t s = out->slot_count;
    full.read_slot = out->frames ? (uint32_t)((out->frames - 1u) % s) : UINT32_MAX;
    full.previous_slot = out->frames >= 2u ? (uint32_t)((out->frames - 2u) % s) : UINT32_MAX;
    full.write_slot = out->in_frame ? out->write_slot : UINT32_MAX;
    uint32_t rs = full.read_slot == UINT32_MAX ? 0u : full.read_slot;
    full.position_offset = out->position_offset[rs];
    full.normal_offset = out->normal_offset[rs];
    full.previous_position_offset =
        full.previous_slot == UINT32_MAX ? 0u : out->position_offset[full.previous_slot];
    full.slot_bytes = out->slot_bytes;
    if (out->mapped) {
        full.positions = (const float*)(out->mapped + out->position_offset[rs]);
        full.normals = (const float*)(out->mapped + out->normal_offset[rs]);
    }
    full.external_writer = out->gpu_writer == EXTERNAL_WRITER;
    full.ownership_transfer = (uint32_t)transfers_ownership(out);
    size_t size = info->struct_size < sizeof full ? info->struct_size : sizeof full;
    memcpy(info, &full, size);
    return SINEW_OK;
}

/* ---- export ---- */

sinew_result sinew_vk_output_export_memory(const sinew_vk_output* output,
                                           sinew_vk_memory_export* ex)
{
    const sinew_vk_output* out = output_cast(output);
    if (!out) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_vk_context* ctx = out->ctx;
    if (!ex)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_output_export_memory: out_export is NULL");
    if (ex->struct_size < sizeof *ex)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_STRUCT_SIZE,
                               "sinew_vk_output_export_memory: struct_size %u is below %zu (use "
                               "SINEW_VK_MEMORY_EXPORT_INIT)", ex->struct_size, sizeof *ex);
    if (!(out->flags & SINEW_VK_OUTPUT_EXPORTABLE))
        return sinew_host_fail(&ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_output_export_memory: the output was created without "
                               "SINEW_VK_OUTPUT_EXPORTABLE");
    PFN_vkGetMemoryFdKHR get_fd =
        (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(ctx->device, "vkGetMemoryFdKHR");
    if (!get_fd)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_UNSUPPORTED,
                               "sinew_vk_output_export_memory: vkGetMemoryFdKHR is missing "
                               "(VK_KHR_external_memory_fd not enabled on the device)");
    VkMemoryGetFdInfoKHR gi = {VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
    gi.memory = out->memory;
    gi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    int fd = -1;
    VkResult vr = get_fd(ctx->device, &gi, &fd);
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkGetMemoryFdKHR");
    uint32_t size = ex->struct_size;
    memset(ex, 0, sizeof *ex);
    ex->struct_size = size;
    ex->fd = fd;
    ex->allocation_size = out->allocation_size;
    ex->memory_type_index = out->memory_type;
    ex->dedicated = (uint32_t)out->dedicated;
    ex->buffer_size = out->buffer_size;
    ex->vertex_capacity = out->capacity;
    ex->slot_count = out->slot_count;
    for (uint32_t k = 0; k < out->slot_count; ++k) {
        ex->position_offsets[k] = out->position_offset[k];
        ex->normal_offsets[k] = out->normal_offset[k];
    }
    memcpy(ex->device_uuid, ctx->device_uuid, VK_UUID_SIZE);
    return SINEW_OK;
}

sinew_result sinew_vk_output_export_semaphores(const sinew_vk_output* output, int* written_fd,
                                               int* read_fd)
{
    const sinew_vk_output* out = output_cast(output);
    if (!out) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_vk_context* ctx = out->ctx;
    if (!written_fd || !read_fd)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_output_export_semaphores: out_written_fd and "
                               "out_read_fd are required");
    *written_fd = -1;
    *read_fd = -1;
    if (!(out->flags & SINEW_VK_OUTPUT_EXPORTABLE))
        return sinew_host_fail(&ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_output_export_semaphores: the output was created "
                               "without SINEW_VK_OUTPUT_EXPORTABLE");
    if (!out->semaphores_exportable)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_UNSUPPORTED,
                               "sinew_vk_output_export_semaphores: %s cannot export timeline "
                               "semaphores as fds; synchronise on the CPU (frames, release)",
                               ctx->properties.deviceName);
    PFN_vkGetSemaphoreFdKHR get_fd =
        (PFN_vkGetSemaphoreFdKHR)vkGetDeviceProcAddr(ctx->device, "vkGetSemaphoreFdKHR");
    if (!get_fd)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_UNSUPPORTED,
                               "sinew_vk_output_export_semaphores: vkGetSemaphoreFdKHR is "
                               "missing (VK_KHR_external_semaphore_fd not enabled)");
    VkSemaphoreGetFdInfoKHR gi = {VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR};
    gi.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    gi.semaphore = out->written;
    int w = -1, r = -1;
    VkResult vr = get_fd(ctx->device, &gi, &w);
    if (vr == VK_SUCCESS) {
        gi.semaphore = out->read;
        vr = get_fd(ctx->device, &gi, &r);
        if (vr != VK_SUCCESS) close(w);
    }
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkGetSemaphoreFdKHR");
    *written_fd = w;
    *read_fd = r;
    return SINEW_OK;
}

/* ---- external GPU writers ---- */

sinew_result sinew_vk_output_set_external_writer(sinew_vk_output* output, int enabled)
{
    sinew_vk_output* out = output_cast(output);
    if (!out) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_vk_context* ctx = out->ctx;
    if (!enabled) {
        if (out->gpu_writer != EXTERNAL_WRITER) return SINEW_OK;
        out->gpu_writer = NULL;
        /* A release handed to the writer but not taken this frame: the next writer (a CPU
         * one) must find the slot released. */
        return sinew_vk_output_wait_pending(out, UINT64_MAX);
    }
    if (out->gpu_writer && out->gpu_writer != EXTERNAL_WRITER)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_IN_USE,
                               "sinew_vk_output_set_external_writer: a vk-lbs/vk-dqs skin "
                               "writes this output");
    /* Inside a frame begun without a writer, begin_frame has waited for `read` already. */
    out->gpu_writer = EXTERNAL_WRITER;
    return SINEW_OK;
}

sinew_result sinew_vk_output_external_frame(sinew_vk_output* output, uint64_t* out_wait_read,
                                            uint64_t* out_signal_written)
{
    sinew_vk_output* out = output_cast(output);
    if (!out) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_vk_context* ctx = out->ctx;
    if (!out_wait_read || !out_signal_written)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_output_external_frame: out_wait_read and "
                               "out_signal_written are required");
    *out_wait_read = 0;
    *out_signal_written = 0;
    if (out->gpu_writer != EXTERNAL_WRITER)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_output_external_frame: no external writer is "
                               "registered (sinew_vk_output_set_external_writer)");
    /* Outside a frame (a world stepped without begin/end) and for a second step in one frame
     * there is nothing to hand out: the writer then finishes its writes on the CPU. */
    if (!out->in_frame || out->gpu_wrote == WROTE_EXTERNAL) return SINEW_OK;
    *out_wait_read = out->pending_read_wait;
    *out_signal_written = out->frames + 1u;
    out->pending_read_wait = 0;
    out->gpu_wrote = WROTE_EXTERNAL;
    return SINEW_OK;
}

/* ---- queue family ownership of externally written slots ---- */

/* Does reading the output's slots need a queue family ownership transfer? Only exported
 * memory reaches another API; a registered writer on memory that was never exportable writes
 * through this VkDevice, where VK_QUEUE_FAMILY_EXTERNAL is not involved. */
static int transfers_ownership(const sinew_vk_output* out)
{
    return out->gpu_writer == EXTERNAL_WRITER && (out->flags & SINEW_VK_OUTPUT_EXPORTABLE);
}

/* Records the acquire (EXTERNAL -> family, then the reading stage/access) or the release
 * (family -> EXTERNAL after the reading stage) of one slot; arguments already checked. */
static void record_transfer(const sinew_vk_output* out, uint32_t slot, VkCommandBuffer cmd,
                            uint32_t family, int acquire, VkPipelineStageFlags stage,
                            VkAccessFlags access)
{
    /* One barrier over the slot: its positions, the padding, its normals. */
    VkBufferMemoryBarrier b = {VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
    b.buffer = out->buffer;
    b.offset = out->position_offset[slot];
    b.size = out->normal_offset[slot] + out->slot_bytes - out->position_offset[slot];
    if (acquire) {
        /* The source access of an acquire is ignored (the writer's writes were made available
         * by its release outside Vulkan). Its source stage is the reading stage, so that a
         * semaphore wait for `written` at that stage or an earlier one chains into it. */
        b.srcAccessMask = 0;
        b.dstAccessMask = access;
        b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
        b.dstQueueFamilyIndex = family;
        vkCmdPipelineBarrier(cmd, stage, stage, 0, 0, NULL, 1, &b, 0, NULL);
    } else {
        /* The destination access of a release is ignored; bottom of pipe lets the `read`
         * signal that follows in submission order chain from it. */
        b.srcAccessMask = access;
        b.dstAccessMask = 0;
        b.srcQueueFamilyIndex = family;
        b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
        vkCmdPipelineBarrier(cmd, stage, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0, NULL, 1,
                             &b, 0, NULL);
    }
}

/* Checks the arguments of cmd_acquire/cmd_release; one line for the first problem. */
static sinew_result check_transfer(const sinew_vk_output* out, const char* fn, uint32_t slot,
                                   VkCommandBuffer cmd, uint32_t family,
                                   VkPipelineStageFlags stage, VkAccessFlags access,
                                   int need_access)
{
    sinew_vk_context* ctx = out->ctx;
    if (slot >= out->slot_count)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: slot %u of %u", fn, slot, out->slot_count);
    if (cmd == VK_NULL_HANDLE)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: cmd is VK_NULL_HANDLE", fn);
    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical_device, &families, NULL);
    if (family >= families)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: queue_family_index %u is not a queue family of %s (%u "
                               "families; the special EXTERNAL/FOREIGN/IGNORED values are not "
                               "reading families)", fn, family, ctx->properties.deviceName,
                               families);
    if (stage == 0)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: the stage mask is 0 (give the stages that read the slot)",
                               fn);
    if (need_access && access == 0)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: dst_access is 0 (the reads would not see the writer's "
                               "data)", fn);
    return SINEW_OK;
}

/* The public acquire and release: the arguments checked, then the barrier recorded where
 * the slot's ownership crosses to or from the external writer. */
static sinew_result cmd_transfer(const sinew_vk_output* output, const char* fn, uint32_t slot,
                                 VkCommandBuffer cmd, uint32_t family, int acquire,
                                 VkPipelineStageFlags stage, VkAccessFlags access)
{
    const sinew_vk_output* out = output_cast(output);
    if (!out) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = check_transfer(out, fn, slot, cmd, family, stage, access, acquire);
    if (r != SINEW_OK) return r;
    if (transfers_ownership(out)) record_transfer(out, slot, cmd, family, acquire, stage, access);
    return SINEW_OK;
}

sinew_result sinew_vk_output_cmd_acquire(const sinew_vk_output* output, uint32_t slot,
                                         VkCommandBuffer cmd, uint32_t queue_family_index,
                                         VkPipelineStageFlags dst_stage,
                                         VkAccessFlags dst_access)
{
    return cmd_transfer(output, "sinew_vk_output_cmd_acquire", slot, cmd, queue_family_index, 1,
                        dst_stage, dst_access);
}

sinew_result sinew_vk_output_cmd_release(const sinew_vk_output* output, uint32_t slot,
                                         VkCommandBuffer cmd, uint32_t queue_family_index,
                                         VkPipelineStageFlags src_stage,
                                         VkAccessFlags src_access)
{
    return cmd_transfer(output, "sinew_vk_output_cmd_release", slot, cmd, queue_family_index, 0,
                        src_stage, src_access);
}
