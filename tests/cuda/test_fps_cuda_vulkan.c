/* GPU test: fps-cuda bound to an exportable, device-local Vulkan output writes
 * the slots itself (memory imported into CUDA, the output's timeline semaphores waited on and
 * signalled on the plugin's stream). For 30 frames of male's animation the test acts as the
 * renderer: it waits for `written` on the CPU, copies the slot through Vulkan into host memory
 * (acquiring the buffer from the external queue family first), compares it with fps (PCG
 * path) bit for bit (fps_block_sum.h: the same sums in the same order), and releases the frame. Skips without a CUDA
 * device; where the GPU machine has no Vulkan driver (or its Vulkan device is not a CUDA
 * device, or cannot export memory) it skips with a message: test_cuda_interop covers CUDA
 * importing an fd that CUDA itself exported. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <sinew/sinew_vulkan.h>

#include "fps_cuda_test_world.h"
#include "sinew_cuda.h"

enum { FRAMES = 30 };

/* Keeps the lines that tell which path the binding took. */
typedef struct path_log {
    cuda_test_log base;
    int host_mapping;   /* "writing the Vulkan output through its host mapping" */
    int host_sync;      /* "synchronised on the host" */
} path_log;

static void path_logger(sinew_log_level level, const char* message, void* user)
{
    path_log* log = (path_log*)user;
    if (strstr(message, "through its host mapping")) log->host_mapping++;
    if (strstr(message, "synchronised on the host")) log->host_sync++;
    /* the tissue model's report on the male's rest shape is a warning of every preparation,
     * not of the output path */
    int rest_report = strncmp(message, "ps: ", 4) == 0 && strstr(message, "at rest") != NULL;
    if (level <= SINEW_LOG_WARNING && !rest_report) cuda_test_log_fn(level, message, &log->base);
}

typedef struct readback {
    const sinew_vk_output* out;
    uint32_t slot;
    VkBuffer src, dst;
    VkDeviceSize offset, size;
    uint32_t family;
    int failed;
} readback;

/* Acquire the slot from the external (CUDA) side, copy, release it back
 * (sinew_vk_output_cmd_acquire / _release record the ownership transfers). */
static void record_readback(VkCommandBuffer cmd, void* user)
{
    readback* rb = (readback*)user;
    if (sinew_vk_output_cmd_acquire(rb->out, rb->slot, cmd, rb->family,
                                    VK_PIPELINE_STAGE_TRANSFER_BIT,
                                    VK_ACCESS_TRANSFER_READ_BIT) != SINEW_OK)
        rb->failed = 1;
    VkBufferCopy region = {rb->offset, 0, rb->size};
    vkCmdCopyBuffer(cmd, rb->src, rb->dst, 1, &region);
    if (sinew_vk_output_cmd_release(rb->out, rb->slot, cmd, rb->family,
                                    VK_PIPELINE_STAGE_TRANSFER_BIT,
                                    VK_ACCESS_TRANSFER_READ_BIT) != SINEW_OK)
        rb->failed = 1;
    VkMemoryBarrier host = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                         &host, 0, NULL, 0, NULL);
}

int main(void)
{
    sinew_character* c = fpsc_test_character("male");
    path_log log;
    memset(&log, 0, sizeof log);
    sinew_logger logger = {path_logger, &log};
    sinew_world_desc wd = SINEW_WORLD_DESC_INIT;
    wd.logger = &logger;
    wd.log_level = SINEW_LOG_INFO;
    wd.thread_count = 2;
    sinew_world* world = NULL;
    CHECK(sinew_world_create(&wd, &world) == SINEW_OK);
    CHECK(sinew_world_load_plugin(world, FPSC_PLUGIN_PATH) == SINEW_OK);
    if (sinew_world_probe_backend(world, "fps-cuda") != SINEW_OK) cuda_test_skip("no CUDA device");

    cuda_test_log vk_log = {0};
    sinew_logger vk_logger = {cuda_test_log_fn, &vk_log};
    sinew_vk_context_desc cd = SINEW_VK_CONTEXT_DESC_INIT;
    cd.logger = &vk_logger;
    sinew_vk_context* ctx = NULL;
    if (sinew_vk_context_create(&cd, &ctx) != SINEW_OK)
        cuda_test_skip_environment("no Vulkan driver on this machine: the Vulkan-to-CUDA part is not run "
                       "(test_cuda_interop covers CUDA importing an fd CUDA exported)");
    sinew_vk_context_info ci = SINEW_VK_CONTEXT_INFO_INIT;
    CHECK(sinew_vk_context_get_info(ctx, &ci) == SINEW_OK);
    if (!(ci.caps & SINEW_VK_CAP_EXPORT_MEMORY_FD))
        cuda_test_skip_environment("the Vulkan device cannot export memory as an fd");
    cuda_test_log cu_log = {0};
    sinew_host_api cu_host = cuda_test_host(&cu_log);
    int ordinal = -1;
    if (sinew_cuda_find_device_by_uuid(&cu_host, ci.device_uuid, &ordinal) != SINEW_OK)
        cuda_test_skip("the Vulkan device is not a CUDA device (no matching UUID)");
    printf("Vulkan device %s = CUDA device %d; semaphore export %s\n", ci.device_name, ordinal,
           (ci.caps & SINEW_VK_CAP_EXPORT_SEMAPHORE_FD) ? "yes" : "no");

    sinew_rig rig = {0};
    CHECK(sinew_rig_create(world, &c->rig, &rig) == SINEW_OK);
    uint32_t n = c->rig.render_mesh.vertex_count;
    sinew_skin skins[2];
    sinew_param fps_params[3] = {{"solver", "pcg"}, {"joint_volume", "0"},
                                 {"inelastic_contacts", "0"}};
    char device[16];
    snprintf(device, sizeof device, "%d", ordinal);
    sinew_param cuda_params[1] = {{"device", device}};
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = rig;
    desc.backend = "fps";
    desc.params = fps_params;
    desc.param_count = 3;
    CHECK(sinew_world_add_skin(world, &desc, &skins[0]) == SINEW_OK);
    desc.backend = "fps-cuda";
    desc.params = cuda_params;
    desc.param_count = 1;
    CHECK(sinew_world_add_skin(world, &desc, &skins[1]) == SINEW_OK);

    sinew_vk_output_desc od = SINEW_VK_OUTPUT_DESC_INIT;
    od.vertex_capacity = n;
    od.flags = SINEW_VK_OUTPUT_EXPORTABLE | SINEW_VK_OUTPUT_DEVICE_LOCAL;
    sinew_vk_output* out = NULL;
    CHECK(sinew_vk_output_create(ctx, &od, &out) == SINEW_OK);
    CHECK(sinew_vk_output_bind(out, world, skins[1]) == SINEW_OK);
    CHECK(log.host_mapping == 0); /* the slots are written by the kernels */
    int gpu_sync = (ci.caps & SINEW_VK_CAP_EXPORT_SEMAPHORE_FD) != 0;
    if (gpu_sync) CHECK(log.host_sync == 0); /* waits and signals on the plugin's stream */

    /* The renderer's host-visible copy of one slot's positions. */
    VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = 12u * (VkDeviceSize)n;
    bi.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VkBuffer dst;
    CHECK(vkCreateBuffer(ci.device, &bi, NULL, &dst) == VK_SUCCESS);
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(ci.device, dst, &req);
    int32_t type = sinew_vk_context_find_memory_type(
        ctx, req.memoryTypeBits,
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    CHECK(type >= 0);
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = (uint32_t)type;
    VkDeviceMemory mem;
    CHECK(vkAllocateMemory(ci.device, &ai, NULL, &mem) == VK_SUCCESS);
    CHECK(vkBindBufferMemory(ci.device, dst, mem, 0) == VK_SUCCESS);
    void* mapped = NULL;
    CHECK(vkMapMemory(ci.device, mem, 0, VK_WHOLE_SIZE, 0, &mapped) == VK_SUCCESS);

    float* ref = malloc((size_t)n * 12u);
    float* local = malloc((size_t)c->rig.skeleton.joint_count * 64u);
    CHECK(ref && local);
    double diag = fpsc_test_diagonal(c->rig.render_mesh.positions, n);
    double worst = 0.0, moved = 0.0;
    sinew_output_desc rd = SINEW_OUTPUT_DESC_INIT;
    rd.vertex_capacity = n;
    rd.positions = ref;
    for (int f = 0; f < FRAMES; ++f) {
        fpsc_test_pose(world, skins, 2, c, (float)f / 30.0f, local);
        CHECK(sinew_vk_output_begin_frame(out, 5000000000ull, NULL) == SINEW_OK);
        CHECK(sinew_world_update(world, 1.0f / 60.0f) == SINEW_OK);
        CHECK(sinew_vk_output_end_frame(out) == SINEW_OK);
        sinew_vk_output_info info = SINEW_VK_OUTPUT_INFO_INIT;
        CHECK(sinew_vk_output_get_info(out, &info) == SINEW_OK);
        CHECK(info.frames == (uint64_t)f + 1u);
        CHECK(info.host_visible == 0 || log.host_mapping == 0);
        uint64_t value = info.frames;
        VkSemaphoreWaitInfo wi = {VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
        wi.semaphoreCount = 1;
        wi.pSemaphores = &info.written;
        wi.pValues = &value;
        CHECK(vkWaitSemaphores(ci.device, &wi, 10000000000ull) == VK_SUCCESS);
        readback rb = {out, info.read_slot, info.buffer, dst, info.position_offset,
                       12u * (VkDeviceSize)n, ci.queue_family_index, 0};
        CHECK(sinew_vk_context_submit_wait(ctx, record_readback, &rb) == SINEW_OK);
        CHECK(rb.failed == 0);
        CHECK(sinew_vk_output_release(out, value) == SINEW_OK);
        CHECK(sinew_skin_read_output(world, skins[0], &rd) == SINEW_OK);
        const float* got = (const float*)mapped;
        for (size_t k = 0; k < 3u * (size_t)n; ++k) {
            CHECK(isfinite(got[k]));
            worst = fmax(worst, fabs((double)got[k] - (double)ref[k]) / diag);
            moved = fmax(moved, fabs((double)got[k] - (double)c->rig.render_mesh.positions[k]));
        }
    }
    printf("male: fps-cuda writing a Vulkan output (%s sync) vs fps (pcg): worst %.3g of the "
           "diagonal over %d frames; largest motion from rest %.3g of the diagonal\n",
           gpu_sync ? "GPU" : "host", worst, FRAMES, moved / diag);
    CHECK(worst == 0.0);
    CHECK(moved / diag > 1e-3); /* the slots hold the animated shape, not zeros or rest */
    CHECK(sinew_vk_output_unbind(out) == SINEW_OK);
    vkUnmapMemory(ci.device, mem);
    vkDestroyBuffer(ci.device, dst, NULL);
    vkFreeMemory(ci.device, mem, NULL);
    sinew_vk_output_destroy(out);
    free(ref);
    free(local);
    sinew_world_destroy(world);
    sinew_vk_context_destroy(ctx);
    sinew_import_free(c);
    /* no warning or error from the binding, the interop or the steps */
    CHECK(log.base.lines == 0 && vk_log.lines == 0);
    printf("ok\n");
    return 0;
}
