/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* RTLD_NEXT */
#include "vk_test.h"

#include <dlfcn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sinew_vk_context* vk_test_context(sinew_test_log* log)
{
    sinew_vk_context_desc desc = SINEW_VK_CONTEXT_DESC_INIT;
    desc.flags = SINEW_VK_CONTEXT_VALIDATION;
    desc.logger = &log->logger;
    sinew_vk_context* ctx = NULL;
    sinew_result r = sinew_vk_context_create(&desc, &ctx);
    if (r == SINEW_ERROR_NO_DEVICE || r == SINEW_ERROR_UNSUPPORTED) {
        const char* require = getenv("SINEW_REQUIRE_VULKAN");
        if (require && strcmp(require, "1") == 0)
            fail_msg("no Vulkan device with validation (%s: %s) and SINEW_REQUIRE_VULKAN=1",
                     sinew_result_string(r), log->last);
        print_message("SKIP: no Vulkan device with validation (%s: %s)\n",
                      sinew_result_string(r), log->last);
        skip();
    }
    if (r != SINEW_OK) fail_msg("sinew_vk_context_create: %s (%s)", sinew_result_string(r), log->last);
    return ctx;
}

uint64_t vk_test_validation_messages(const sinew_vk_context* ctx)
{
    sinew_vk_context_info info = SINEW_VK_CONTEXT_INFO_INIT;
    assert_int_equal(sinew_vk_context_get_info(ctx, &info), SINEW_OK);
    return info.validation_messages;
}

void vk_test_finish(sinew_vk_context* ctx)
{
    uint64_t messages = vk_test_validation_messages(ctx);
    sinew_vk_context_destroy(ctx);
    assert_int_equal(messages, 0);
}

void vk_scene_open(vk_scene* s, const char* name, uint32_t threads)
{
    char rel[256];
    snprintf(rel, sizeof rel, "characters/%s/%s.ini", name, name);
    const char* path = sinew_test_data_path(rel);
    memset(s, 0, sizeof *s);
    sinew_test_log_init(&s->log);
    s->ctx = vk_test_context(&s->log);
    s->world = sinew_test_world(&s->log, threads);
    sinew_import_options opt = SINEW_IMPORT_OPTIONS_INIT;
    opt.logger = &s->log.logger;
    assert_int_equal(sinew_import_character(path, &opt, &s->character), SINEW_OK);
    assert_true(s->character->animation_count > 0);
    assert_int_equal(sinew_rig_create(s->world, &s->character->rig, &s->rig), SINEW_OK);
    sinew_rig_info info = SINEW_RIG_INFO_INIT;
    assert_int_equal(sinew_rig_get_info(s->world, s->rig, &info), SINEW_OK);
    s->vertices = info.vertex_count;
    s->joints = info.joint_count;
    const float* p = s->character->rig.render_mesh.positions;
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t v = 0; v < s->vertices; ++v)
        for (int k = 0; k < 3; ++k) {
            lo[k] = fminf(lo[k], p[3 * v + k]);
            hi[k] = fmaxf(hi[k], p[3 * v + k]);
        }
    s->diagonal = sqrtf((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                        (hi[2] - lo[2]) * (hi[2] - lo[2]));
    assert_true(s->diagonal > 0.0f);
    s->local = malloc((size_t)s->joints * 16 * sizeof(float));
    assert_non_null(s->local);
    vk_scene_sample(s, 0.5f);
    assert_int_equal(sinew_vk_register_backends(s->world, s->ctx), SINEW_OK);
}

void vk_scene_close(vk_scene* s)
{
    free(s->local);
    sinew_world_destroy(s->world);
    sinew_import_free(s->character);
    vk_test_finish(s->ctx);
}

void vk_scene_sample(vk_scene* s, float t)
{
    const sinew_animation* anim = &s->character->animations[0];
    assert_int_equal(anim->joint_count, s->joints);
    assert_int_equal(sinew_animation_sample(anim, t * anim->duration, 0, s->local), SINEW_OK);
}

void vk_scene_pose(vk_scene* s, sinew_skin skin)
{
    sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
    pose.space = SINEW_POSE_LOCAL;
    pose.joint_count = s->joints;
    pose.matrices = s->local;
    assert_int_equal(sinew_skin_set_pose(s->world, skin, &pose), SINEW_OK);
}

sinew_skin vk_scene_add_skin(vk_scene* s, const char* backend)
{
    return vk_scene_add_skin_with(s, backend, NULL, 0);
}

sinew_skin vk_scene_add_skin_with(vk_scene* s, const char* backend, const sinew_param* params,
                                  uint32_t param_count)
{
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = s->rig;
    desc.backend = backend;
    desc.params = params;
    desc.param_count = param_count;
    sinew_skin skin;
    sinew_result r = sinew_world_add_skin(s->world, &desc, &skin);
    if (r != SINEW_OK)
        fail_msg("add_skin %s: %s (%s)", backend, sinew_result_string(r), s->log.last);
    vk_scene_pose(s, skin);
    return skin;
}

void vk_scene_read(vk_scene* s, sinew_skin skin, float* positions, float* normals)
{
    sinew_output_desc out = SINEW_OUTPUT_DESC_INIT;
    out.vertex_capacity = s->vertices;
    out.positions = positions;
    out.normals = normals;
    assert_int_equal(sinew_skin_read_output(s->world, skin, &out), SINEW_OK);
}

float vk_max_diff(const float* a, const float* b, size_t count)
{
    float m = 0.0f;
    for (size_t i = 0; i < count; ++i) {
        float d = fabsf(a[i] - b[i]);
        if (!(d <= m)) m = d; /* NaN propagates as a large difference */
        if (isnan(d)) return INFINITY;
    }
    return m;
}

void vk_test_alias_import(sinew_vk_context* ctx, const sinew_vk_output* out, vk_test_alias* a)
{
    memset(a, 0, sizeof *a);
    sinew_vk_context_info ci = SINEW_VK_CONTEXT_INFO_INIT;
    assert_int_equal(sinew_vk_context_get_info(ctx, &ci), SINEW_OK);
    a->device = ci.device;
    sinew_vk_memory_export ex = SINEW_VK_MEMORY_EXPORT_INIT;
    assert_int_equal(sinew_vk_output_export_memory(out, &ex), SINEW_OK);
    VkExternalMemoryBufferCreateInfo ext = {VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
    ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.pNext = &ext;
    bi.size = ex.buffer_size;
    bi.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
               VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_VERTEX_BUFFER_BIT;
    assert_int_equal(vkCreateBuffer(a->device, &bi, NULL, &a->buffer), VK_SUCCESS);
    VkMemoryDedicatedAllocateInfo ded = {VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    ded.buffer = a->buffer;
    VkImportMemoryFdInfoKHR imp = {VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR};
    imp.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    imp.fd = ex.fd;
    imp.pNext = ex.dedicated ? &ded : NULL;
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.pNext = &imp;
    ai.allocationSize = ex.allocation_size;
    ai.memoryTypeIndex = ex.memory_type_index;
    /* The import owns the fd from here on. */
    assert_int_equal(vkAllocateMemory(a->device, &ai, NULL, &a->memory), VK_SUCCESS);
    assert_int_equal(vkBindBufferMemory(a->device, a->buffer, a->memory, 0), VK_SUCCESS);
}

void vk_test_alias_free(vk_test_alias* a)
{
    vkDestroyBuffer(a->device, a->buffer, NULL);
    vkFreeMemory(a->device, a->memory, NULL);
    memset(a, 0, sizeof *a);
}

void vk_test_writer_transfer(VkCommandBuffer cmd, VkBuffer buffer, uint32_t family, int acquire)
{
    VkBufferMemoryBarrier b = {VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
    b.srcAccessMask = acquire ? 0u : VK_ACCESS_TRANSFER_WRITE_BIT;
    b.dstAccessMask = acquire ? VK_ACCESS_TRANSFER_WRITE_BIT : 0u;
    b.srcQueueFamilyIndex = acquire ? VK_QUEUE_FAMILY_EXTERNAL : family;
    b.dstQueueFamilyIndex = acquire ? family : VK_QUEUE_FAMILY_EXTERNAL;
    b.buffer = buffer;
    b.size = VK_WHOLE_SIZE;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         acquire ? VK_PIPELINE_STAGE_TRANSFER_BIT
                                 : VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                         0, 0, NULL, 1, &b, 0, NULL);
}

PFN_vkCmdPipelineBarrier vk_test_next_pipeline_barrier(void)
{
    static PFN_vkCmdPipelineBarrier next;
    if (!next) {
        void* fn = dlsym(RTLD_NEXT, "vkCmdPipelineBarrier");
        if (!fn) fail_msg("vkCmdPipelineBarrier not found after the test's own");
        memcpy(&next, &fn, sizeof next);
    }
    return next;
}

void vk_test_buffer_create(sinew_vk_context* ctx, VkDeviceSize size, VkBufferUsageFlags usage,
                           vk_test_buffer* out)
{
    sinew_vk_context_info ci = SINEW_VK_CONTEXT_INFO_INIT;
    assert_int_equal(sinew_vk_context_get_info(ctx, &ci), SINEW_OK);
    memset(out, 0, sizeof *out);
    out->device = ci.device;
    VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = size;
    bi.usage = usage;
    assert_int_equal(vkCreateBuffer(out->device, &bi, NULL, &out->buffer), VK_SUCCESS);
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(out->device, out->buffer, &req);
    int32_t type = sinew_vk_context_find_memory_type(
        ctx, req.memoryTypeBits,
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    assert_true(type >= 0);
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = (uint32_t)type;
    assert_int_equal(vkAllocateMemory(out->device, &ai, NULL, &out->memory), VK_SUCCESS);
    assert_int_equal(vkBindBufferMemory(out->device, out->buffer, out->memory, 0), VK_SUCCESS);
    assert_int_equal(vkMapMemory(out->device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped),
                     VK_SUCCESS);
}

void vk_test_buffer_free(vk_test_buffer* b)
{
    if (b->mapped) vkUnmapMemory(b->device, b->memory);
    vkDestroyBuffer(b->device, b->buffer, NULL);
    vkFreeMemory(b->device, b->memory, NULL);
    memset(b, 0, sizeof *b);
}
