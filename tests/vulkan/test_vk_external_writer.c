/* External GPU writers of a Vulkan output (sinew_vk_output_set_external_writer /
 * sinew_vk_output_external_frame): the writer here is a queue submission on the same device
 * that waits for `read` and signals `written` itself, as the fps-cuda plugin does from a CUDA
 * stream with the imported semaphores. Checked: begin_frame no longer waits for `read` on the
 * CPU (the wait goes to the writer's submission), end_frame does not signal `written` when the
 * writer took the frame (no double signal: the validation layer would report it), a frame the
 * writer skips is signalled on the host after the writer's earlier signal, the slot holds what
 * the writer wrote, and bad calls are refused with one line each. Validation layers are on.
 * SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "vk_test.h"

typedef struct writer {
    VkDevice device;
    VkQueue queue;
    VkCommandPool pool;
    VkCommandBuffer cmd[8];
    VkFence fence[8];
    uint32_t used;
} writer;

static void writer_open(writer* w, sinew_vk_context* ctx)
{
    memset(w, 0, sizeof *w);
    sinew_vk_context_info ci = SINEW_VK_CONTEXT_INFO_INIT;
    assert_int_equal(sinew_vk_context_get_info(ctx, &ci), SINEW_OK);
    w->device = ci.device;
    w->queue = ci.queue;
    VkCommandPoolCreateInfo pi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.queueFamilyIndex = ci.queue_family_index;
    assert_int_equal(vkCreateCommandPool(w->device, &pi, NULL, &w->pool), VK_SUCCESS);
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = w->pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 8;
    assert_int_equal(vkAllocateCommandBuffers(w->device, &ai, w->cmd), VK_SUCCESS);
    VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    for (int k = 0; k < 8; ++k)
        assert_int_equal(vkCreateFence(w->device, &fi, NULL, &w->fence[k]), VK_SUCCESS);
}

static void writer_close(writer* w)
{
    if (w->used) assert_int_equal(vkWaitForFences(w->device, w->used, w->fence, VK_TRUE,
                                                  UINT64_MAX), VK_SUCCESS);
    for (int k = 0; k < 8; ++k) vkDestroyFence(w->device, w->fence[k], NULL);
    vkDestroyCommandPool(w->device, w->pool, NULL);
}

/* The writer's frame: wait for read >= wait (0: none), fill the slot's positions with the
 * bits of `pattern`, signal written = signal. */
static void writer_submit(writer* w, const sinew_vk_output_info* info, VkDeviceSize offset,
                          uint32_t pattern, uint64_t wait, uint64_t signal)
{
    assert_true(w->used < 8);
    VkCommandBuffer cmd = w->cmd[w->used];
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    assert_int_equal(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
    vkCmdFillBuffer(cmd, info->buffer, offset, info->slot_bytes, pattern);
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                         &mb, 0, NULL, 0, NULL);
    assert_int_equal(vkEndCommandBuffer(cmd), VK_SUCCESS);
    VkTimelineSemaphoreSubmitInfo ts = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
    ts.waitSemaphoreValueCount = wait ? 1u : 0u;
    ts.pWaitSemaphoreValues = &wait;
    ts.signalSemaphoreValueCount = 1;
    ts.pSignalSemaphoreValues = &signal;
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.pNext = &ts;
    si.waitSemaphoreCount = wait ? 1u : 0u;
    si.pWaitSemaphores = &info->read;
    si.pWaitDstStageMask = &stage;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &info->written;
    assert_int_equal(vkQueueSubmit(w->queue, 1, &si, w->fence[w->used]), VK_SUCCESS);
    w->used++;
}

static uint64_t counter(VkDevice device, VkSemaphore sem)
{
    uint64_t value = 0;
    assert_int_equal(vkGetSemaphoreCounterValue(device, sem, &value), VK_SUCCESS);
    return value;
}

static void wait_value(VkDevice device, VkSemaphore sem, uint64_t value)
{
    VkSemaphoreWaitInfo wi = {VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wi.semaphoreCount = 1;
    wi.pSemaphores = &sem;
    wi.pValues = &value;
    assert_int_equal(vkWaitSemaphores(device, &wi, 10000000000ull), VK_SUCCESS);
}

/* The slot's positions all hold `pattern` (read through the mapping, after written). */
static void check_slot(const sinew_vk_output_info* info, uint32_t pattern)
{
    assert_non_null(info->positions);
    const uint32_t* words = (const uint32_t*)(const void*)info->positions;
    for (VkDeviceSize k = 0; k < info->slot_bytes / 4u; ++k)
        if (words[k] != pattern) fail_msg("word %llu is 0x%x, want 0x%x", (unsigned long long)k,
                                          words[k], pattern);
}

static void test_external_writer(void** state)
{
    (void)state;
    vk_scene s;
    vk_scene_open(&s, "cylinder", 1);
    sinew_vk_output_desc desc = SINEW_VK_OUTPUT_DESC_INIT;
    desc.vertex_capacity = s.vertices;
    sinew_vk_output* out = NULL;
    assert_int_equal(sinew_vk_output_create(s.ctx, &desc, &out), SINEW_OK);
    sinew_vk_output_info info = SINEW_VK_OUTPUT_INFO_INIT;
    assert_int_equal(sinew_vk_output_get_info(out, &info), SINEW_OK);
    assert_int_equal(info.slot_count, 2);
    writer w;
    writer_open(&w, s.ctx);
    assert_int_equal(sinew_vk_output_set_external_writer(out, 1), SINEW_OK);
    assert_int_equal(sinew_vk_output_set_external_writer(out, 1), SINEW_OK); /* idempotent */

    uint64_t wait = 99, signal = 99;
    for (uint64_t f = 0; f < 4; ++f) {
        uint32_t slot = 9;
        /* Timeout 0: from frame 2 on the renderer has not released the slot, and begin_frame
         * must hand that wait to the writer instead of failing. */
        assert_int_equal(sinew_vk_output_begin_frame(out, 0, &slot), SINEW_OK);
        assert_int_equal(slot, (uint32_t)(f % 2u));
        assert_int_equal(sinew_vk_output_external_frame(out, &wait, &signal), SINEW_OK);
        assert_int_equal(signal, f + 1u);
        assert_int_equal(wait, f >= 2u ? f - 1u : 0u);
        uint64_t w2 = 7, s2 = 7;
        assert_int_equal(sinew_vk_output_external_frame(out, &w2, &s2), SINEW_OK);
        assert_int_equal(w2, 0); /* handed out already */
        assert_int_equal(s2, 0);
        uint32_t pattern = 0x3f800000u + (uint32_t)f; /* about 1.0f */
        sinew_vk_output_info cur = SINEW_VK_OUTPUT_INFO_INIT;
        assert_int_equal(sinew_vk_output_get_info(out, &cur), SINEW_OK);
        assert_int_equal(cur.write_slot, slot);
        /* slot k's positions start at 2 k regions (the layout of sinew_vk_output_create). */
        VkDeviceSize region = cur.buffer_size / (2u * cur.slot_count);
        writer_submit(&w, &cur, 2u * slot * region, pattern, wait, signal);
        assert_int_equal(sinew_vk_output_end_frame(out), SINEW_OK);
        assert_int_equal(sinew_vk_output_get_info(out, &info), SINEW_OK);
        assert_int_equal(info.frames, f + 1u);
        /* The renderer: waits for the frame, reads it, releases it. Releasing frame f - 1
         * only after the writer of frame f + 1 was submitted puts that writer's wait on the
         * GPU. */
        if (wait) assert_int_equal(sinew_vk_output_release(out, wait), SINEW_OK);
        wait_value(w.device, info.written, f + 1u);
        assert_int_equal(counter(w.device, info.written), f + 1u);
        check_slot(&info, pattern);
        }

    /* A frame the writer skips: end_frame signals on the host (after the writer's signal of
     * frame 3, which has happened). */
    assert_int_equal(sinew_vk_output_release(out, 3), SINEW_OK);
    assert_int_equal(sinew_vk_output_begin_frame(out, 0, NULL), SINEW_OK);
    assert_int_equal(sinew_vk_output_end_frame(out), SINEW_OK);
    assert_int_equal(counter(w.device, info.written), 5);

    /* The writer takes frame 5 and its submission waits for a release that comes only after
     * end_frame; frame 6 is skipped, so its end_frame waits for the writer's signal 6 first
     * (released before, so that this single thread does not wait for itself). */
    assert_int_equal(sinew_vk_output_begin_frame(out, 0, NULL), SINEW_OK);
    assert_int_equal(sinew_vk_output_external_frame(out, &wait, &signal), SINEW_OK);
    assert_int_equal(wait, 4); /* frame 3 (slot 1) not released yet */
    assert_int_equal(signal, 6);
    {
        sinew_vk_output_info cur = SINEW_VK_OUTPUT_INFO_INIT;
        assert_int_equal(sinew_vk_output_get_info(out, &cur), SINEW_OK);
        VkDeviceSize region = cur.buffer_size / (2u * cur.slot_count);
        writer_submit(&w, &cur, 2u * cur.write_slot * region, 0x40000000u, wait, signal);
    }
    assert_int_equal(sinew_vk_output_end_frame(out), SINEW_OK);
    assert_int_equal(counter(w.device, info.written), 5); /* not signalled by end_frame */
    assert_int_equal(sinew_vk_output_begin_frame(out, 0, NULL), SINEW_OK);
    assert_int_equal(sinew_vk_output_release(out, 4), SINEW_OK);
    assert_int_equal(sinew_vk_output_end_frame(out), SINEW_OK);
    assert_int_equal(counter(w.device, info.written), 7);

    /* Unregistered: begin_frame waits on the CPU again (the renderer has not released frame
     * 5 yet: refused after the timeout), and external_frame is refused. */
    assert_int_equal(sinew_vk_output_set_external_writer(out, 0), SINEW_OK);
    assert_int_equal(sinew_vk_output_set_external_writer(out, 0), SINEW_OK);
    sinew_test_log_reset(&s.log);
    assert_int_equal(sinew_vk_output_begin_frame(out, 0, NULL), SINEW_ERROR_IN_USE);
    assert_int_equal(s.log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(sinew_vk_output_release(out, 7), SINEW_OK);
    assert_int_equal(sinew_vk_output_begin_frame(out, 0, NULL), SINEW_OK);
    sinew_test_log_reset(&s.log);
    assert_int_equal(sinew_vk_output_external_frame(out, &wait, &signal),
                     SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(s.log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(sinew_vk_output_end_frame(out), SINEW_OK);
    assert_int_equal(counter(w.device, info.written), 8);

    writer_close(&w);
    sinew_vk_output_destroy(out);
    vk_scene_close(&s);
}

/* Bad calls: one line and a specific code each; a vk-lbs skin writing the output keeps it. */
static void test_external_writer_refusals(void** state)
{
    (void)state;
    vk_scene s;
    vk_scene_open(&s, "cylinder", 1);
    sinew_vk_output_desc desc = SINEW_VK_OUTPUT_DESC_INIT;
    desc.vertex_capacity = s.vertices;
    sinew_vk_output* out = NULL;
    assert_int_equal(sinew_vk_output_create(s.ctx, &desc, &out), SINEW_OK);
#define REFUSED(call, code)                                      \
    do {                                                         \
        sinew_test_log_reset(&s.log);                            \
        assert_int_equal((call), (code));                        \
        assert_int_equal(s.log.count[SINEW_LOG_ERROR], 1);       \
    } while (0)
    uint64_t wait = 1, signal = 1;
    assert_int_equal(sinew_vk_output_set_external_writer(NULL, 1), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sinew_vk_output_external_frame(NULL, &wait, &signal),
                     SINEW_ERROR_INVALID_ARGUMENT);
    REFUSED(sinew_vk_output_external_frame(out, NULL, &signal), SINEW_ERROR_INVALID_ARGUMENT);
    REFUSED(sinew_vk_output_external_frame(out, &wait, &signal), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(wait, 0);
    assert_int_equal(signal, 0);
    assert_int_equal(sinew_vk_output_set_external_writer(out, 1), SINEW_OK);
    /* Outside a frame: nothing to hand out (the writer finishes on the CPU), no refusal. */
    wait = signal = 5;
    sinew_test_log_reset(&s.log);
    assert_int_equal(sinew_vk_output_external_frame(out, &wait, &signal), SINEW_OK);
    assert_int_equal(s.log.total, 0);
    assert_int_equal(wait, 0);
    assert_int_equal(signal, 0);
    assert_int_equal(sinew_vk_output_set_external_writer(out, 0), SINEW_OK);
    /* A vk-lbs skin bound to the output is its GPU writer. */
    sinew_skin skin = vk_scene_add_skin(&s, "vk-lbs");
    assert_int_equal(sinew_vk_output_bind(out, s.world, skin), SINEW_OK);
    REFUSED(sinew_vk_output_set_external_writer(out, 1), SINEW_ERROR_IN_USE);
    vk_scene_pose(&s, skin);
    assert_int_equal(sinew_vk_output_begin_frame(out, 0, NULL), SINEW_OK);
    assert_int_equal(sinew_world_update(s.world, 0.01f), SINEW_OK);
    assert_int_equal(sinew_vk_output_end_frame(out), SINEW_OK);
    assert_int_equal(sinew_vk_output_unbind(out), SINEW_OK);
    assert_int_equal(sinew_vk_output_set_external_writer(out, 1), SINEW_OK);
    assert_int_equal(sinew_vk_output_set_external_writer(out, 0), SINEW_OK);
#undef REFUSED
    sinew_vk_output_destroy(out);
    vk_scene_close(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_external_writer),
        cmocka_unit_test(test_external_writer_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
