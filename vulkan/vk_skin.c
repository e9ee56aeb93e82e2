/* The compute backends vk-lbs and vk-dqs: the arithmetic of lbs and dqs in a compute shader
 * (vulkan/shaders/skin_*.comp, SPIR-V embedded at build time), registered through the plugin
 * table like any backend, with vk-pbd (vk_pbd.c), which finds its context the same way.
 * SPDX-License-Identifier: MIT
 *
 * Contract (what differs from backends/common/skin_geometric.h, which otherwise applies):
 * - The context: sinew_vk_register_backends registers the tables with the world's tie to the
 *   context as their user pointer (vk_service.c), which probe and prepare read from their host
 *   api; probe answers BACKEND_UNAVAILABLE once the context is destroyed.
 * - Parameters: `normals` = 1 (default) | 0 only.
 * - prepare uploads the rest mesh and the padded weights into storage buffers; set_pose keeps
 *   the converted transforms on the host (dqs: unit dual quaternions, as the CPU dqs); step
 *   waits for the instance's previous submission, uploads the transforms, records the dispatch
 *   and a barrier (shader write -> vertex attribute, transfer, host and shader reads) and
 *   submits. Steps of one instance are therefore serialised with each other, not with the
 *   caller's other work.
 * - Output: bound to a slot of a sinew_vk_output of the same context (the ext chain), step
 *   writes that slot on the GPU and returns without waiting; the output's end_frame publishes
 *   it. Bound to host arrays (kind HOST, or an external output of another context that has host
 *   pointers), step waits and copies. Bound to a range of the engine's buffer
 *   (sinew_vk_range_ext), step only stores the pose and sinew_vk_record records the dispatch
 *   into the engine's command buffer (vk_skin_record.c). Unbound, it writes the instance's own
 *   host-visible buffer. read_output and get_state copy the latest shape back (from wherever it was
 *   written), so a swap vk-lbs -> lbs continues from it. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "dual_quat.h"
#include "sinew_output.h"
#include "skin_geometric.h"
#include "sinew_params.h"
#include "vk_internal.h"
#include "vk_skin.h"

#if defined(SINEW_VK_HAVE_SHADERS)

static const uint32_t skin_lbs_spirv[] =
#include "skin_lbs.spv.inc"
    ;
static const uint32_t skin_dqs_spirv[] =
#include "skin_dqs.spv.inc"
    ;

/* ---- the instance (vk_skin.h) ---- */

static vk_skin* vk_cast(void* instance)
{
    vk_skin* s = instance;
    return s && s->magic == VK_SKIN_MAGIC ? s : NULL;
}

static sinew_result vk_wait(vk_skin* s)
{
    if (!s->in_flight) return SINEW_OK;
    VkResult vr = vkWaitForFences(s->ctx->device, 1, &s->fence, VK_TRUE, UINT64_MAX);
    if (vr != VK_SUCCESS) return sinew_vk_fail(s->ctx, vr, "vkWaitForFences (skin)");
    s->in_flight = false;
    return SINEW_OK;
}

/* Stops being the GPU writer of the bound output; a read release it was to wait for on the
 * GPU is then waited for on the CPU, so whoever writes the slot next finds it released. */
static void vk_detach_output(vk_skin* s)
{
    if (s->output && s->output->gpu_writer == s) {
        s->output->gpu_writer = NULL;
        sinew_vk_output_wait_pending(s->output, UINT64_MAX);
    }
}

void vk_skin_free(vk_skin* s)
{
    sinew_vk_context* ctx = s->ctx;
    vk_skin_ring_destroy(s);
    VkDevice dev = ctx->device;
    if (s->fence) vkDestroyFence(dev, s->fence, NULL);
    if (s->cmd_pool) vkDestroyCommandPool(dev, s->cmd_pool, NULL);
    if (s->pool) vkDestroyDescriptorPool(dev, s->pool, NULL);
    if (s->pipeline) vkDestroyPipeline(dev, s->pipeline, NULL);
    if (s->module) vkDestroyShaderModule(dev, s->module, NULL);
    if (s->layout) vkDestroyPipelineLayout(dev, s->layout, NULL);
    if (s->set_layout) vkDestroyDescriptorSetLayout(dev, s->set_layout, NULL);
    sinew_vk_buffer_destroy(ctx, &s->rest);
    sinew_vk_buffer_destroy(ctx, &s->joint_buf);
    sinew_vk_buffer_destroy(ctx, &s->weight_buf);
    sinew_vk_buffer_destroy(ctx, &s->transforms);
    sinew_vk_buffer_destroy(ctx, &s->own);
    sinew_host_api host = s->host;
    sinew_host_free(&host, s->latest);
    s->magic = 0;
    sinew_host_free(&host, s);
}

/* An instance that recorded into an engine's command buffer may still be read by a frame in
 * flight: the world's tie frees it SINEW_VK_RECORD_FRAMES recordings later. */
static void vk_destroy(void* instance)
{
    vk_skin* s = vk_cast(instance);
    if (!s) return;
    vk_wait(s);
    vk_detach_output(s);
    vk_skin_unbind_range(s);
    if (s->recorded && s->tie) {
        s->magic = 0;
        vk_skin_retire(s);
        return;
    }
    vk_skin_free(s);
}

static sinew_result vk_probe(const sinew_host_api* host)
{
    return sinew_vk_backend_probe(host);
}

/* The one key of vk-lbs and vk-dqs (sinew_params.h). */
typedef struct vk_params {
    int normals;
} vk_params;

static const sinew_param_info vk_param_info[] = {
    {"normals", SINEW_PARAM_FLAG, 0u, 0.0, 1.0, "1", NULL,
     "1: skinned normals too; 0: positions only"}};
static const sinew_param_slot vk_param_slots[] = {
    {offsetof(vk_params, normals), SINEW_STORE_INT, (uint32_t)sizeof(int), NULL}};

static sinew_result vk_parse_params(const sinew_host_api* host, const char* name,
                                    const sinew_param* params, uint32_t count, const void* next,
                                    bool* normals)
{
    vk_params p = {1};
    sinew_result r = sinew_params_parse(host, name, vk_param_info, vk_param_slots, 1u, params,
                                        count, next, &p);
    *normals = p.normals != 0;
    return r;
}

/* The compute pipeline: six storage-buffer bindings, three push constants, the backend's
 * SPIR-V. */
static sinew_result vk_create_compute(vk_skin* s)
{
    sinew_vk_context* ctx = s->ctx;
    VkDevice dev = ctx->device;
    sinew_result r = sinew_vk_compute_layouts(ctx, 6u, 3u * (uint32_t)sizeof(uint32_t), "",
                                              &s->set_layout, &s->layout);
    if (r != SINEW_OK) return r;
    VkShaderModuleCreateInfo sm = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    sm.codeSize = s->ops->spirv_size;
    sm.pCode = s->ops->spirv;
    VkResult vr = vkCreateShaderModule(dev, &sm, NULL, &s->module);
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkCreateShaderModule");
    VkComputePipelineCreateInfo cp = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cp.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cp.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cp.stage.module = s->module;
    cp.stage.pName = "main";
    cp.layout = s->layout;
    vr = vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cp, NULL, &s->pipeline);
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkCreateComputePipelines");
    return SINEW_OK;
}

/* The descriptor pool and set, the command pool with one command buffer, and the fence. */
static sinew_result vk_create_objects(vk_skin* s)
{
    sinew_vk_context* ctx = s->ctx;
    VkDevice dev = ctx->device;
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 6};
    VkDescriptorPoolCreateInfo dp = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dp.maxSets = 1;
    dp.poolSizeCount = 1;
    dp.pPoolSizes = &ps;
    VkResult vr = vkCreateDescriptorPool(dev, &dp, NULL, &s->pool);
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkCreateDescriptorPool");
    VkDescriptorSetAllocateInfo da = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    da.descriptorPool = s->pool;
    da.descriptorSetCount = 1;
    da.pSetLayouts = &s->set_layout;
    vr = vkAllocateDescriptorSets(dev, &da, &s->set);
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkAllocateDescriptorSets");
    VkCommandPoolCreateInfo cpi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    cpi.queueFamilyIndex = ctx->queue_family_index;
    vr = vkCreateCommandPool(dev, &cpi, NULL, &s->cmd_pool);
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkCreateCommandPool (skin)");
    VkCommandBufferAllocateInfo ca = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ca.commandPool = s->cmd_pool;
    ca.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ca.commandBufferCount = 1;
    vr = vkAllocateCommandBuffers(dev, &ca, &s->cmd);
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkAllocateCommandBuffers (skin)");
    VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    vr = vkCreateFence(dev, &fi, NULL, &s->fence);
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkCreateFence (skin)");
    return SINEW_OK;
}

/* The input bindings, which never change; the output pair is written when the target moves. */
static void vk_bind_inputs(vk_skin* s)
{
    VkDescriptorBufferInfo info[4] = {
        {s->rest.buffer, 0, VK_WHOLE_SIZE},
        {s->joint_buf.buffer, 0, VK_WHOLE_SIZE},
        {s->weight_buf.buffer, 0, VK_WHOLE_SIZE},
        {s->transforms.buffer, 0, VK_WHOLE_SIZE},
    };
    sinew_vk_write_storage(s->ctx, s->set, 0u, 4u, info);
}

static sinew_result vk_create_pipeline(vk_skin* s)
{
    sinew_result r = vk_create_compute(s);
    if (r == SINEW_OK) r = vk_create_objects(s);
    if (r == SINEW_OK) vk_bind_inputs(s);
    return r;
}

/* The device buffers of skin s (rest mesh, padded joints and weights, transforms, its own
 * output) with their contents uploaded; `rest` holds 8 floats per vertex (position, 1,
 * normal, 0). The own output is read back by the host: cached host memory where there is
 * some. */
static sinew_result vk_create_buffers(vk_skin* s, const sinew_rig_view* rig, const float* rest)
{
    sinew_vk_context* ctx = s->ctx;
    const uint32_t n = s->n;
    VkBufferUsageFlags ssbo = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    const VkMemoryPropertyFlags dl = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    const VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    size_t wbytes = (size_t)n * s->width * 4u;
    size_t tbytes = (size_t)s->joints * s->ops->transform_floats * sizeof(float);
    VkDeviceSize pos_bytes = (VkDeviceSize)n * 12u;
    s->own_normal_offset = (pos_bytes + 255u) / 256u * 256u;
    sinew_result r = sinew_vk_buffer_create(ctx, (VkDeviceSize)n * 32u, ssbo, 0, dl,
                                            "rest buffer", &s->rest);
    if (r == SINEW_OK)
        r = sinew_vk_buffer_create(ctx, wbytes, ssbo, 0, dl, "joint buffer", &s->joint_buf);
    if (r == SINEW_OK)
        r = sinew_vk_buffer_create(ctx, wbytes, ssbo, 0, dl, "weight buffer", &s->weight_buf);
    if (r == SINEW_OK)
        r = sinew_vk_buffer_create(ctx, tbytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, hv,
                                   VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, "transform buffer",
                                   &s->transforms);
    if (r == SINEW_OK)
        r = sinew_vk_buffer_create(ctx, s->own_normal_offset + pos_bytes,
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                   hv, VK_MEMORY_PROPERTY_HOST_CACHED_BIT |
                                           VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                   "own output buffer", &s->own);
    if (r == SINEW_OK) r = sinew_vk_buffer_upload(ctx, &s->rest, 0, rest, (VkDeviceSize)n * 32u);
    if (r == SINEW_OK) r = sinew_vk_buffer_upload(ctx, &s->joint_buf, 0, rig->padded_joints, wbytes);
    if (r == SINEW_OK) r = sinew_vk_buffer_upload(ctx, &s->weight_buf, 0, rig->padded_weights, wbytes);
    if (r == SINEW_OK) r = sinew_vk_buffer_upload(ctx, &s->own, 0, rig->render_mesh.positions, pos_bytes);
    if (r == SINEW_OK)
        r = sinew_vk_buffer_upload(ctx, &s->own, s->own_normal_offset, rig->render_mesh.normals,
                                   pos_bytes);
    return r;
}

/* A skin instance of rig on ctx: its host state, the rest mesh interleaved for the device, and
 * identity transforms until a pose arrives (a step before any pose writes the rest mesh). */
static sinew_result vk_new_skin(const vk_ops* ops, const sinew_host_api* host,
                                sinew_vk_context* ctx, const sinew_rig_view* rig, bool normals,
                                vk_skin** out)
{
    const char* name = ops->name;
    vk_skin* s = sinew_host_calloc(host, 1, sizeof *s);
    if (!s) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", name);
    s->magic = VK_SKIN_MAGIC;
    s->host = *host;
    s->host.struct_size = (uint32_t)sizeof(sinew_host_api);
    s->ops = ops;
    s->ctx = ctx;
    uint32_t n = rig->render_mesh.vertex_count;
    s->n = n;
    s->joints = rig->joint_count;
    s->width = rig->padded_width;
    s->want_normals = normals;
    s->rest_normals = rig->render_mesh.normals;
    size_t tbytes = (size_t)s->joints * ops->transform_floats * sizeof(float);
    s->latest = sinew_host_alloc(host, tbytes);
    float* rest = sinew_host_calloc(host, n, 8u * sizeof(float));
    if (!s->latest || !rest) {
        sinew_host_free(host, rest);
        vk_destroy(s);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "%s: out of memory for a mesh of %u vertices", name, n);
    }
    for (uint32_t v = 0; v < n; ++v) {
        memcpy(rest + 8u * v, rig->render_mesh.positions + 3u * v, 12u);
        rest[8u * v + 3] = 1.0f;
        memcpy(rest + 8u * v + 4, rig->render_mesh.normals + 3u * v, 12u);
    }
    float identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    for (uint32_t j = 0; j < s->joints; ++j) ops->convert_pose(identity, 1, s->latest + (size_t)j * ops->transform_floats);
    s->pose_pending = true;
    sinew_result r = vk_create_buffers(s, rig, rest);
    sinew_host_free(host, rest);
    if (r == SINEW_OK) r = vk_create_pipeline(s);
    if (r != SINEW_OK) {
        vk_destroy(s);
        return r;
    }
    *out = s;
    return SINEW_OK;
}

static sinew_result vk_prepare(const vk_ops* ops, const sinew_host_api* host,
                               const sinew_rig_view* rig, const sinew_param* params,
                               uint32_t param_count, const void* next, void** out_instance)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    if (host->struct_size < sizeof(sinew_host_api)) return SINEW_ERROR_STRUCT_SIZE;
    const char* name = ops->name;
    sinew_result checked = sinew_geo_check_prepare(host, name, rig, out_instance);
    if (checked != SINEW_OK) return checked;
    sinew_vk_context* ctx = sinew_vk_backend_context(host);
    if (!ctx)
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_UNAVAILABLE,
                               "%s: no Vulkan context is tied to this world "
                               "(sinew_vk_register_backends)", name);
    bool normals;
    sinew_result r = vk_parse_params(host, name, params, param_count, next, &normals);
    if (r == SINEW_OK) r = sinew_geo_check_rig(host, name, rig);
    vk_skin* s = NULL;
    if (r == SINEW_OK) r = vk_new_skin(ops, host, ctx, rig, normals, &s);
    if (r != SINEW_OK) return r;
    s->target = TARGET_OWN;
    s->tie = sinew_vk_backend_tie(host);
    s->last_buffer = s->own.buffer;
    s->last_pos = 0;
    s->last_nrm = s->own_normal_offset;
    sinew_host_log(host, SINEW_LOG_DEBUG, "%s: %u vertices, %u influences on %s", name,
                   s->n, s->width, ctx->properties.deviceName);
    *out_instance = s;
    return SINEW_OK;
}

static sinew_result vk_set_pose(void* instance, const sinew_pose_view* pose)
{
    vk_skin* s = vk_cast(instance);
    if (!s) return SINEW_ERROR_INVALID_ARGUMENT;
    const char* name = s->ops->name;
    if (!pose) return sinew_host_fail(&s->host, SINEW_ERROR_INVALID_ARGUMENT, "%s: pose is NULL", name);
    if (pose->struct_size < SINEW_POSE_VIEW_SIZE_V1)
        return sinew_host_fail(&s->host, SINEW_ERROR_STRUCT_SIZE,
                               "%s: pose struct_size %u is below %u", name, pose->struct_size,
                               SINEW_POSE_VIEW_SIZE_V1);
    if (pose->joint_count != s->joints)
        return sinew_host_fail(&s->host, SINEW_ERROR_JOINT_COUNT,
                               "%s: a pose of %u joints for a rig of %u", name, pose->joint_count,
                               s->joints);
    if (!pose->skinning_matrices)
        return sinew_host_fail(&s->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: the pose has no skinning matrices", name);
    if (!sinew_geo_finite(pose->skinning_matrices, (size_t)s->joints * 16u))
        return sinew_host_fail(&s->host, SINEW_ERROR_NONFINITE,
                               "%s: a skinning matrix is not finite", name);
    s->ops->convert_pose(pose->skinning_matrices, s->joints, s->latest);
    s->has_pose = true;
    s->pose_pending = true;
    return SINEW_OK;
}

typedef struct dispatch_target {
    VkBuffer buffer;
    VkDeviceSize pos, nrm;
} dispatch_target;

/* Records and submits one dispatch into `t` with the latest transforms. flags as the shader's.
 * wait_read: a read-release value of `wait_output` to wait for on the GPU (0: none). */
static sinew_result vk_dispatch(vk_skin* s, dispatch_target t, uint32_t flags,
                                sinew_vk_output* wait_output, uint64_t wait_read)
{
    sinew_vk_context* ctx = s->ctx;
    sinew_result r = vk_wait(s);
    if (r != SINEW_OK) return r;
    if (s->pose_pending) {
        size_t bytes = (size_t)s->joints * s->ops->transform_floats * sizeof(float);
        r = sinew_vk_buffer_upload(ctx, &s->transforms, 0, s->latest, bytes);
        if (r != SINEW_OK) return r;
        s->pose_pending = false;
    }
    if (t.buffer != s->set_buffer || t.pos != s->set_pos || t.nrm != s->set_nrm) {
        VkDeviceSize bytes = (VkDeviceSize)s->n * 12u;
        VkDescriptorBufferInfo info[2] = {{t.buffer, t.pos, bytes}, {t.buffer, t.nrm, bytes}};
        sinew_vk_write_storage(ctx, s->set, 4u, 2u, info);
        s->set_buffer = t.buffer;
        s->set_pos = t.pos;
        s->set_nrm = t.nrm;
    }
    VkCommandBuffer cmd = s->cmd;
    VkResult vr = vkResetCommandBuffer(cmd, 0);
    VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if (vr == VK_SUCCESS) vr = vkBeginCommandBuffer(cmd, &begin);
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkBeginCommandBuffer (skin)");
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s->pipeline);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s->layout, 0, 1, &s->set, 0,
                            NULL);
    uint32_t pc[3] = {s->n, s->width, flags};
    vkCmdPushConstants(cmd, s->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, pc);
    vkCmdDispatch(cmd, (s->n + GROUP_SIZE - 1u) / GROUP_SIZE, 1, 1);
    sinew_vk_cmd_results_barrier(ctx, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                 VK_ACCESS_SHADER_WRITE_BIT);
    r = sinew_vk_submit_compute(ctx, cmd, s->fence, wait_output, wait_read, "skin");
    if (r != SINEW_OK) return r;
    s->in_flight = true;
    return SINEW_OK;
}

static dispatch_target own_target(const vk_skin* s)
{
    dispatch_target t = {s->own.buffer, 0, s->own_normal_offset};
    return t;
}

/* Reads the own buffer after the device wrote it. */
static sinew_result vk_invalidate_own(vk_skin* s)
{
    if (s->own.coherent) return SINEW_OK;
    VkMappedMemoryRange range = {VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    range.memory = s->own.memory;
    range.size = VK_WHOLE_SIZE;
    VkResult vr = vkInvalidateMappedMemoryRanges(s->ctx->device, 1, &range);
    return vr == VK_SUCCESS ? SINEW_OK : sinew_vk_fail(s->ctx, vr, "vkInvalidateMappedMemoryRanges");
}

typedef struct pull_job {
    VkBuffer src, dst;
    VkBufferCopy regions[2];
    uint32_t count;
} pull_job;

static void record_pull(VkCommandBuffer cmd, void* user)
{
    const pull_job* job = user;
    vkCmdCopyBuffer(cmd, job->src, job->dst, job->count, job->regions);
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                         &mb, 0, NULL, 0, NULL);
}

/* Brings the latest shape into the own buffer (a device copy when it lies in an output). */
static sinew_result vk_pull(vk_skin* s)
{
    sinew_result r = vk_wait(s);
    if (r != SINEW_OK || s->last_buffer == s->own.buffer) return r;
    VkDeviceSize bytes = (VkDeviceSize)s->n * 12u;
    pull_job job = {s->last_buffer, s->own.buffer, {{s->last_pos, 0, bytes}}, 1};
    if (s->want_normals) {
        job.regions[1] = (VkBufferCopy){s->last_nrm, s->own_normal_offset, bytes};
        job.count = 2;
    }
    r = sinew_vk_context_submit_wait(s->ctx, record_pull, &job);
    if (r != SINEW_OK) return r;
    s->last_buffer = s->own.buffer;
    s->last_pos = 0;
    s->last_nrm = s->own_normal_offset;
    return SINEW_OK;
}

/* The latest shape's positions and normals on the host (pointers into the own mapping). */
static sinew_result vk_latest(vk_skin* s, bool need_normals, const float** pos, const float** nrm)
{
    sinew_result r = vk_pull(s);
    if (r == SINEW_OK && s->range_latest) {
        /* The engine's range is the engine's: the same pose skinned again, into the own buffer. */
        r = vk_dispatch(s, own_target(s), 1u | (s->want_normals ? 2u : 0u), NULL, 0);
        if (r == SINEW_OK) r = vk_wait(s);
        if (r == SINEW_OK) s->range_latest = false;
    }
    if (r == SINEW_OK && need_normals && s->want_normals && s->state_normals_stale) {
        /* After set_state the normals follow the latest pose (the rest normals without one). */
        if (s->has_pose) {
            r = vk_dispatch(s, own_target(s), 2u, NULL, 0);
            if (r == SINEW_OK) r = vk_wait(s);
        } else {
            r = sinew_vk_buffer_upload(s->ctx, &s->own, s->own_normal_offset, s->rest_normals,
                                       (VkDeviceSize)s->n * 12u);
        }
        if (r == SINEW_OK) s->state_normals_stale = false;
    }
    if (r == SINEW_OK) r = vk_invalidate_own(s);
    if (r != SINEW_OK) return r;
    *pos = (const float*)s->own.mapped;
    *nrm = s->want_normals ? (const float*)((const char*)s->own.mapped + s->own_normal_offset)
                           : s->rest_normals;
    return SINEW_OK;
}

static sinew_result vk_step(void* instance, float dt)
{
    vk_skin* s = vk_cast(instance);
    if (!s) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!isfinite(dt) || dt < 0.0f)
        return sinew_host_fail(&s->host,
                               isfinite(dt) ? SINEW_ERROR_INVALID_ARGUMENT : SINEW_ERROR_NONFINITE,
                               "%s: dt %g must be finite and not negative", s->ops->name,
                               (double)dt);
    if (s->target == TARGET_RANGE) return vk_skin_step_range(s);
    uint32_t flags = 1u | (s->want_normals ? 2u : 0u);
    dispatch_target t = own_target(s);
    sinew_vk_output* wait_output = NULL;
    uint64_t wait_read = 0;
    if (s->target == TARGET_OUTPUT) {
        t.buffer = s->output->buffer;
        t.pos = s->output->position_offset[s->slot];
        t.nrm = s->output->normal_offset[s->slot];
        if (s->output->in_frame && s->output->gpu_writer == s) {
            wait_output = s->output;
            wait_read = s->output->pending_read_wait;
        }
    }
    sinew_result r = vk_dispatch(s, t, flags, wait_output, wait_read);
    if (r != SINEW_OK) return r;
    s->state_normals_stale = false;
    s->range_latest = false;
    s->last_buffer = t.buffer;
    s->last_pos = t.pos;
    s->last_nrm = t.nrm;
    if (s->target == TARGET_OUTPUT) {
        if (wait_output) {
            wait_output->pending_read_wait = 0;
            wait_output->gpu_wrote = 1;
        }
        return SINEW_OK;
    }
    if (s->target == TARGET_HOST) {
        const float *pos, *nrm;
        r = vk_latest(s, s->want_normals, &pos, &nrm);
        if (r != SINEW_OK) return r;
        const sinew_output_view* b = &s->host_binding;
        sinew_output_copy(pos, s->n, b->positions, b->position_stride);
        if (b->normals && s->want_normals) sinew_output_copy(nrm, s->n, b->normals, b->normal_stride);
    }
    return SINEW_OK;
}

static sinew_result vk_read_output(void* instance, const sinew_output_view* out)
{
    vk_skin* s = vk_cast(instance);
    if (!s) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = sinew_output_check(&s->host, s->ops->name, "read_output", out, s->n);
    if (r != SINEW_OK) return r;
    const float *pos, *nrm;
    r = vk_latest(s, out->normals != NULL, &pos, &nrm);
    if (r != SINEW_OK) return r;
    sinew_output_copy(pos, s->n, out->positions, out->position_stride ? out->position_stride : 12u);
    if (out->normals)
        sinew_output_copy(nrm, s->n, out->normals, out->normal_stride ? out->normal_stride : 12u);
    return SINEW_OK;
}

/* The sinew_vk_output named in a chain, or NULL. */
static const sinew_vk_output_ext* find_output_ext(const void* next)
{
    for (const sinew_ext_header* h = next; h; h = h->next)
        if (h->type == SINEW_EXT_VULKAN_OUTPUT) return (const sinew_vk_output_ext*)h;
    return NULL;
}

/* The engine's range named in a chain, or NULL. */
static const sinew_vk_range_ext* find_range_ext(const void* next)
{
    for (const sinew_ext_header* h = next; h; h = h->next)
        if (h->type == SINEW_EXT_VULKAN_RANGE) return (const sinew_vk_range_ext*)h;
    return NULL;
}

/* Moves the skin to an engine's range (vk_skin_record.c), keeping the latest shape when it
 * lies in an output it leaves. */
static sinew_result bind_range(vk_skin* s, const sinew_vk_range_ext* range)
{
    sinew_result r = s->last_buffer != s->own.buffer ? vk_pull(s) : SINEW_OK;
    if (r == SINEW_OK) r = vk_skin_bind_range(s, range);
    if (r != SINEW_OK) return r;
    if (s->output) vk_detach_output(s);
    s->target = TARGET_RANGE;
    s->output = NULL;
    return SINEW_OK;
}

static sinew_result vk_bind_output(void* instance, const sinew_output_view* out)
{
    vk_skin* s = vk_cast(instance);
    if (!s) return SINEW_ERROR_INVALID_ARGUMENT;
    const char* name = s->ops->name;
    sinew_vk_output* output = NULL;
    uint32_t slot = 0;
    if (out) {
        if (out->struct_size < sizeof(sinew_output_view))
            return sinew_host_fail(&s->host, SINEW_ERROR_STRUCT_SIZE,
                                   "%s bind_output: output struct_size %u is below %zu", name,
                                   out->struct_size, sizeof(sinew_output_view));
        const sinew_vk_output_ext* ext = find_output_ext(out->next);
        output = ext ? sinew_vk_output_from_ext(ext) : NULL;
        if (ext && !output)
            return sinew_host_fail(&s->host, SINEW_ERROR_OUTPUT_BINDING,
                                   "%s bind_output: the Vulkan output extension names no live "
                                   "sinew_vk_output slot", name);
        if (output && output->ctx != s->ctx) output = NULL; /* another device: host fallback */
        if (output && output->capacity < s->n)
            return sinew_host_fail(&s->host, SINEW_ERROR_OUTPUT_BINDING,
                                   "%s bind_output: the output holds %u vertices, the mesh has %u",
                                   name, output->capacity, s->n);
        if (output) slot = ext->slot;
        const sinew_vk_range_ext* range = ext ? NULL : find_range_ext(out->next);
        if (range) return bind_range(s, range);
    }
    sinew_output_view host_view;
    if (out && !output) {
        host_view = *out;
        host_view.next = NULL;
        if (!out->positions && out->next)
            return sinew_host_fail(&s->host, SINEW_ERROR_OUTPUT_BINDING,
                                   "%s bind_output: the external output is on another Vulkan "
                                   "device and has no host pointers", name);
        sinew_result r = sinew_output_check(&s->host, name, "bind_output", &host_view, s->n);
        if (r != SINEW_OK) return r;
    }
    /* Keep the latest shape when it lies in an output this binding leaves. */
    if (s->last_buffer != s->own.buffer && (!output || output->buffer != s->last_buffer)) {
        sinew_result r = vk_pull(s);
        if (r != SINEW_OK) return r;
    }
    if (s->output && s->output != output) vk_detach_output(s);
    if (s->target == TARGET_RANGE) vk_skin_unbind_range(s);
    if (!out) {
        s->target = TARGET_OWN;
        s->output = NULL;
    } else if (output) {
        s->target = TARGET_OUTPUT;
        s->output = output;
        s->slot = slot;
        output->gpu_writer = s;
    } else {
        s->target = TARGET_HOST;
        s->output = NULL;
        s->host_binding = sinew_output_binding(&host_view);
    }
    return SINEW_OK;
}

static sinew_result vk_check_state(vk_skin* s, const sinew_state_view* state, const char* fn)
{
    const char* name = s->ops->name;
    if (!state)
        return sinew_host_fail(&s->host, SINEW_ERROR_INVALID_ARGUMENT, "%s %s: state is NULL",
                               name, fn);
    if (state->struct_size < sizeof(sinew_state_view))
        return sinew_host_fail(&s->host, SINEW_ERROR_STRUCT_SIZE,
                               "%s %s: state struct_size %u is below %zu", name, fn,
                               state->struct_size, sizeof(sinew_state_view));
    if (state->vertex_count != s->n)
        return sinew_host_fail(&s->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s %s: a state of %u vertices for a mesh of %u", name, fn,
                               state->vertex_count, s->n);
    if (!state->positions)
        return sinew_host_fail(&s->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s %s: positions is NULL", name, fn);
    return SINEW_OK;
}

static sinew_result vk_get_state(void* instance, const sinew_state_view* state)
{
    vk_skin* s = vk_cast(instance);
    if (!s) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = vk_check_state(s, state, "get_state");
    const float *pos, *nrm;
    if (r == SINEW_OK) r = vk_latest(s, false, &pos, &nrm);
    if (r != SINEW_OK) return r;
    memcpy(state->positions, pos, (size_t)s->n * 12u);
    if (state->velocities) memset(state->velocities, 0, (size_t)s->n * 12u);
    return SINEW_OK;
}

static sinew_result vk_set_state(void* instance, const sinew_state_view* state)
{
    vk_skin* s = vk_cast(instance);
    if (!s) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = vk_check_state(s, state, "set_state");
    if (r != SINEW_OK) return r;
    if (!sinew_geo_finite(state->positions, (size_t)s->n * 3u))
        return sinew_host_fail(&s->host, SINEW_ERROR_NONFINITE,
                               "%s set_state: a position is not finite", s->ops->name);
    r = vk_wait(s);
    if (r == SINEW_OK)
        r = sinew_vk_buffer_upload(s->ctx, &s->own, 0, state->positions, (VkDeviceSize)s->n * 12u);
    if (r != SINEW_OK) return r;
    s->last_buffer = s->own.buffer;
    s->last_pos = 0;
    s->last_nrm = s->own_normal_offset;
    s->state_normals_stale = true;
    s->range_latest = false;
    return SINEW_OK;
}

/* ---- lbs and dqs ---- */

/* The shader takes the runtime's column-major skinning matrices as they are. */
static void lbs_convert_pose(const float* skinning, uint32_t joint_count, float* out)
{
    memcpy(out, skinning, (size_t)joint_count * 16u * sizeof(float));
}

static void dqs_convert_pose(const float* skinning, uint32_t joint_count, float* out)
{
    for (uint32_t j = 0; j < joint_count; ++j)
        sinew_dual_quat_from_matrix(skinning + 16u * j, out + 8u * j);
}

static const vk_ops vk_lbs_ops = {"vk-lbs", 16u, skin_lbs_spirv, sizeof skin_lbs_spirv,
                                  lbs_convert_pose};
static const vk_ops vk_dqs_ops = {"vk-dqs", 8u, skin_dqs_spirv, sizeof skin_dqs_spirv,
                                  dqs_convert_pose};

static sinew_result vk_lbs_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                   const sinew_param* params, uint32_t param_count,
                                   const void* next, void** out_instance)
{
    return vk_prepare(&vk_lbs_ops, host, rig, params, param_count, next, out_instance);
}

static sinew_result vk_dqs_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                   const sinew_param* params, uint32_t param_count,
                                   const void* next, void** out_instance)
{
    return vk_prepare(&vk_dqs_ops, host, rig, params, param_count, next, out_instance);
}

static const sinew_backend_vtable vk_lbs_table = {
    (uint32_t)sizeof(sinew_backend_vtable), "vk-lbs", SINEW_BACKEND_FLAG_GPU, vk_probe,
    vk_lbs_prepare, vk_set_pose, vk_step, vk_read_output, vk_bind_output, vk_get_state,
    vk_set_state, vk_destroy, NULL, vk_param_info, 1u,
};

static const sinew_backend_vtable vk_dqs_table = {
    (uint32_t)sizeof(sinew_backend_vtable), "vk-dqs", SINEW_BACKEND_FLAG_GPU, vk_probe,
    vk_dqs_prepare, vk_set_pose, vk_step, vk_read_output, vk_bind_output, vk_get_state,
    vk_set_state, vk_destroy, NULL, vk_param_info, 1u,
};

static bool world_has(const sinew_world* world, const char* name)
{
    for (uint32_t i = 0; i < sinew_world_backend_count(world); ++i)
        if (strcmp(sinew_world_backend_name(world, i), name) == 0) return true;
    return false;
}

sinew_result sinew_vk_register_backends(sinew_world* world, sinew_vk_context* ctx)
{
    if (!ctx) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!world)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_register_backends: world is NULL");
    sinew_vk_tie* tie = NULL;
    sinew_result r = sinew_vk_tie_world(world, ctx, &tie);
    const sinew_backend_vtable* tables[3] = {&vk_lbs_table, &vk_dqs_table, &sinew_vk_pbd_table};
    for (int i = 0; r == SINEW_OK && i < 3; ++i) {
        if (!world_has(world, tables[i]->name))
            r = sinew_world_register_backend_with_user(world, tables[i], tie);
    }
    return r;
}

#else /* no glslc: the module builds without its compute backends */

sinew_result sinew_vk_register_backends(sinew_world* world, sinew_vk_context* ctx)
{
    (void)world;
    if (!ctx) return SINEW_ERROR_INVALID_ARGUMENT;
    return sinew_host_fail(&ctx->host, SINEW_ERROR_UNSUPPORTED,
                           "sinew_vk_register_backends: this build has no compute shaders "
                           "(glslc was not found)");
}

#endif
