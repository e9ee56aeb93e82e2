/* vk-lbs and vk-dqs writing a range of the engine's own buffer, recorded into the engine's
 * command buffer by sinew_vk_record (sinew_vulkan.h, "Recording into the engine's frame").
 * SPDX-License-Identifier: MIT
 *
 * A step leaves the pose in slot ring_next of a ring of SINEW_VK_RECORD_FRAMES transform slots
 * and touches no queue; the recording binds that slot's descriptor set (the mesh inputs, the
 * slot, the range) and dispatches, then moves to the next slot, so that a command buffer still
 * in flight keeps reading its own pose. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <string.h>

#include "vk_skin.h"

#if defined(SINEW_VK_HAVE_SHADERS)

static VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a)
{
    return a > 1u ? (v + a - 1u) / a * a : v;
}

/* [a, a + len) within size, without overflow. */
static bool fits(VkDeviceSize a, VkDeviceSize len, VkDeviceSize size)
{
    return a <= size && len <= size - a;
}

static sinew_result range_fail(const vk_skin* s, const char* what)
{
    return sinew_host_fail(&s->host, SINEW_ERROR_OUTPUT_BINDING, "%s bind_output: %s",
                           s->ops->name, what);
}

/* The range against the device's offset alignment, its buffer's size and itself. */
static sinew_result check_range(const vk_skin* s, const sinew_vk_range_ext* r)
{
    const VkDeviceSize bytes = (VkDeviceSize)s->n * 12u;
    const VkDeviceSize align = s->ctx->properties.limits.minStorageBufferOffsetAlignment;
    if (r->header.struct_size < sizeof(sinew_vk_range_ext))
        return range_fail(s, "the range extension's struct_size is too small "
                             "(use SINEW_VK_RANGE_EXT_INIT)");
    if (r->buffer == VK_NULL_HANDLE) return range_fail(s, "the range names no VkBuffer");
    if (align > 1u && (r->position_offset % align || (s->want_normals && r->normal_offset % align)))
        return range_fail(s, "a range offset is not a multiple of the device's "
                             "minStorageBufferOffsetAlignment");
    if (!fits(r->position_offset, bytes, r->buffer_size) ||
        (s->want_normals && !fits(r->normal_offset, bytes, r->buffer_size)))
        return range_fail(s, "the range does not fit in buffer_size");
    if (s->want_normals && r->position_offset < r->normal_offset + bytes &&
        r->normal_offset < r->position_offset + bytes)
        return range_fail(s, "the range's positions and normals overlap");
    return SINEW_OK;
}

/* The ring's buffer and its descriptor sets, once per instance. */
static sinew_result create_ring(vk_skin* s)
{
    if (s->ring_pool) return SINEW_OK;
    sinew_vk_context* ctx = s->ctx;
    const VkPhysicalDeviceLimits* lim = &ctx->properties.limits;
    VkDeviceSize tbytes = (VkDeviceSize)s->joints * s->ops->transform_floats * sizeof(float);
    VkDeviceSize a = lim->minStorageBufferOffsetAlignment;
    if (lim->nonCoherentAtomSize > a) a = lim->nonCoherentAtomSize;
    s->ring_stride = align_up(tbytes, a);
    sinew_result r = sinew_vk_buffer_create(ctx, s->ring_stride * SINEW_VK_RECORD_FRAMES,
                                            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                                            VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                            "transform ring", &s->ring);
    if (r != SINEW_OK) return r;
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 6u * SINEW_VK_RECORD_FRAMES};
    VkDescriptorPoolCreateInfo dp = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dp.maxSets = SINEW_VK_RECORD_FRAMES;
    dp.poolSizeCount = 1;
    dp.pPoolSizes = &ps;
    VkResult vr = vkCreateDescriptorPool(ctx->device, &dp, NULL, &s->ring_pool);
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkCreateDescriptorPool (ring)");
    VkDescriptorSetLayout layouts[SINEW_VK_RECORD_FRAMES];
    for (uint32_t k = 0; k < SINEW_VK_RECORD_FRAMES; ++k) layouts[k] = s->set_layout;
    VkDescriptorSetAllocateInfo da = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    da.descriptorPool = s->ring_pool;
    da.descriptorSetCount = SINEW_VK_RECORD_FRAMES;
    da.pSetLayouts = layouts;
    vr = vkAllocateDescriptorSets(ctx->device, &da, s->ring_sets);
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkAllocateDescriptorSets (ring)");
    return SINEW_OK;
}

/* Ring set k: the mesh inputs, transform slot k and the range (its positions twice when the
 * normals are off, which the shader then never writes). */
static void write_ring_set(vk_skin* s, uint32_t k)
{
    const sinew_vk_range_ext* r = &s->range;
    VkDeviceSize bytes = (VkDeviceSize)s->n * 12u;
    VkDeviceSize tbytes = (VkDeviceSize)s->joints * s->ops->transform_floats * sizeof(float);
    VkDescriptorBufferInfo info[6] = {
        {s->rest.buffer, 0, VK_WHOLE_SIZE},
        {s->joint_buf.buffer, 0, VK_WHOLE_SIZE},
        {s->weight_buf.buffer, 0, VK_WHOLE_SIZE},
        {s->ring.buffer, k * s->ring_stride, tbytes},
        {r->buffer, r->position_offset, bytes},
        {r->buffer, s->want_normals ? r->normal_offset : r->position_offset, bytes},
    };
    VkWriteDescriptorSet w[6];
    memset(w, 0, sizeof w);
    for (uint32_t i = 0; i < 6; ++i) {
        w[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        w[i].dstSet = s->ring_sets[k];
        w[i].dstBinding = i;
        w[i].descriptorCount = 1;
        w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        w[i].pBufferInfo = &info[i];
    }
    vkUpdateDescriptorSets(s->ctx->device, 6, w, 0, NULL);
}

static vk_skin* recorder_skin(sinew_vk_recorder* rec)
{
    return (vk_skin*)((char*)rec - offsetof(vk_skin, recorder));
}

/* sinew_vk_record's call for this skin (the recorder is the instance's member). */
static int record_skin(sinew_vk_recorder* rec, VkCommandBuffer cmd)
{
    vk_skin* s = recorder_skin(rec);
    if (!s->record_pending) return 0;
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s->pipeline);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s->layout, 0, 1,
                            &s->ring_sets[s->ring_next], 0, NULL);
    uint32_t pc[3] = {s->n, s->width, 1u | (s->want_normals ? 2u : 0u)};
    vkCmdPushConstants(cmd, s->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, pc);
    vkCmdDispatch(cmd, (s->n + GROUP_SIZE - 1u) / GROUP_SIZE, 1, 1);
    s->record_pending = false;
    s->recorded = true;
    s->ring_next = (s->ring_next + 1u) % SINEW_VK_RECORD_FRAMES;
    return 1;
}

static void destroy_retired(sinew_vk_recorder* rec)
{
    vk_skin_free(recorder_skin(rec));
}

void vk_skin_retire(vk_skin* s)
{
    s->recorder.destroy = destroy_retired;
    sinew_vk_tie_retire_recorder(s->tie, &s->recorder);
}

sinew_result vk_skin_bind_range(vk_skin* s, const sinew_vk_range_ext* range)
{
    sinew_result r = check_range(s, range);
    if (r != SINEW_OK) return r;
    if (!s->tie) return range_fail(s, "the skin's world is not tied to a Vulkan context");
    r = create_ring(s);
    if (r != SINEW_OK) return r;
    s->range = *range;
    s->range.header.next = NULL;
    for (uint32_t k = 0; k < SINEW_VK_RECORD_FRAMES; ++k) write_ring_set(s, k);
    s->record_pending = false;
    s->recorder.record = record_skin;
    sinew_vk_tie_add_recorder(s->tie, &s->recorder);
    return SINEW_OK;
}

void vk_skin_unbind_range(vk_skin* s)
{
    if (s->tie && s->recorder.record) sinew_vk_tie_remove_recorder(s->tie, &s->recorder);
    s->record_pending = false;
}

sinew_result vk_skin_step_range(vk_skin* s)
{
    VkDeviceSize tbytes = (VkDeviceSize)s->joints * s->ops->transform_floats * sizeof(float);
    VkDeviceSize at = s->ring_next * s->ring_stride;
    memcpy((char*)s->ring.mapped + at, s->latest, (size_t)tbytes);
    sinew_result r = sinew_vk_buffer_flush(s->ctx, s->ring.memory, s->ring.coherent, at,
                                           s->ring_stride);
    if (r != SINEW_OK) return r;
    s->record_pending = true;
    s->range_latest = true;
    s->state_normals_stale = false;
    return SINEW_OK;
}

void vk_skin_ring_destroy(vk_skin* s)
{
    if (s->ring_pool) vkDestroyDescriptorPool(s->ctx->device, s->ring_pool, NULL);
    s->ring_pool = VK_NULL_HANDLE;
    sinew_vk_buffer_destroy(s->ctx, &s->ring);
}

#endif
