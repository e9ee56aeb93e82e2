/* Queue family ownership of externally written output slots (sinew_vk_output_cmd_acquire /
 * sinew_vk_output_cmd_release). The external writer here stands in for fps-cuda: the output's
 * exported memory is imported into a second VkBuffer on the same device (the writer's view of
 * the memory, as CUDA's import is), the writer acquires its view from VK_QUEUE_FAMILY_EXTERNAL,
 * fills the slot, releases it back, waits for `read` and signals `written`; the reader waits
 * for `written` on the GPU, acquires the slot of the output's own buffer with
 * sinew_vk_output_cmd_acquire, copies it, releases it with sinew_vk_output_cmd_release and
 * signals `read`. Checked over six frames of two slots: the values read, zero validation
 * messages, the no-op where no transfer exists, the refusals, the appended info fields, and a
 * negative control showing that the validation layer checks these barriers' family indices.
 * What the functions record is seen through vkCmdPipelineBarrier, which this program defines
 * and forwards to the loader's (see below).
 * SPDX-License-Identifier: MIT */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "vk_test.h"

/* The barriers recorded, seen on the way to the Vulkan loader: the module calls
 * vkCmdPipelineBarrier by name, and a definition in the executable comes first in the dynamic
 * symbol lookup, so this one sees every call (the module's and the test's own) and passes it
 * on to the loader's, found with RTLD_NEXT. A lavapipe run gives no other way to tell that a
 * barrier was recorded: a missing one changes nothing there. */
static struct {
    uint32_t calls;                     /* every vkCmdPipelineBarrier */
    VkPipelineStageFlags src_stage, dst_stage;
    uint32_t buffer_barriers;
    VkBufferMemoryBarrier last;         /* the last call's first buffer barrier */
} seen;

/* Default visibility: the project builds with hidden symbols, and only an exported definition
 * takes part in the dynamic lookup. */
__attribute__((visibility("default"))) VKAPI_ATTR void VKAPI_CALL vkCmdPipelineBarrier(
    VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkPipelineStageFlags dst_stage,
    VkDependencyFlags flags, uint32_t memory_count, const VkMemoryBarrier* memory,
    uint32_t buffer_count, const VkBufferMemoryBarrier* buffers, uint32_t image_count,
    const VkImageMemoryBarrier* images)
{
    PFN_vkCmdPipelineBarrier next = vk_test_next_pipeline_barrier();
    seen.calls++;
    seen.src_stage = src_stage;
    seen.dst_stage = dst_stage;
    seen.buffer_barriers = buffer_count;
    if (buffer_count) seen.last = buffers[0];
    next(cmd, src_stage, dst_stage, flags, memory_count, memory, buffer_count, buffers,
         image_count, images);
}

/* The last call recorded exactly the one ownership transfer of `slot` in `info`'s buffer. */
static void check_seen(uint32_t calls_before, const sinew_vk_output_info* info,
                       const sinew_vk_output_ext* slot, uint32_t src_family,
                       uint32_t dst_family, VkPipelineStageFlags src_stage,
                       VkPipelineStageFlags dst_stage, VkAccessFlags src_access,
                       VkAccessFlags dst_access)
{
    assert_int_equal(seen.calls, calls_before + 1u);
    assert_int_equal(seen.buffer_barriers, 1);
    assert_int_equal(seen.src_stage, src_stage);
    assert_int_equal(seen.dst_stage, dst_stage);
    const VkBufferMemoryBarrier* b = &seen.last;
    assert_int_equal(b->sType, VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER);
    assert_null(b->pNext);
    assert_int_equal(b->srcQueueFamilyIndex, src_family);
    assert_int_equal(b->dstQueueFamilyIndex, dst_family);
    assert_int_equal(b->srcAccessMask, src_access);
    assert_int_equal(b->dstAccessMask, dst_access);
    assert_true(b->buffer == info->buffer);
    /* The slot's positions, the padding, its normals. */
    assert_int_equal(b->offset, slot->position_offset);
    assert_int_equal(b->size, slot->normal_offset + info->slot_bytes - slot->position_offset);
}

enum { VERTICES = 300, FRAMES = 6 };

typedef struct rig_vk {
    sinew_test_log log;
    sinew_vk_context* ctx;
    VkDevice device;
    VkQueue queue;
    uint32_t family;
    VkCommandPool pool;
} rig_vk;

static void rig_open(rig_vk* v)
{
    memset(v, 0, sizeof *v);
    sinew_test_log_init(&v->log);
    v->ctx = vk_test_context(&v->log);
    sinew_vk_context_info ci = SINEW_VK_CONTEXT_INFO_INIT;
    assert_int_equal(sinew_vk_context_get_info(v->ctx, &ci), SINEW_OK);
    if (!(ci.caps & SINEW_VK_CAP_EXPORT_MEMORY_FD)) {
        sinew_vk_context_destroy(v->ctx);
        print_message("SKIP: %s cannot export memory as an fd\n", ci.device_name);
        skip();
    }
    v->device = ci.device;
    v->queue = ci.queue;
    v->family = ci.queue_family_index;
    VkCommandPoolCreateInfo pi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.queueFamilyIndex = v->family;
    assert_int_equal(vkCreateCommandPool(v->device, &pi, NULL, &v->pool), VK_SUCCESS);
}

static void rig_close(rig_vk* v)
{
    vkDestroyCommandPool(v->device, v->pool, NULL);
    vk_test_finish(v->ctx);
}

static VkCommandBuffer begin_cmd(rig_vk* v)
{
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = v->pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cmd;
    assert_int_equal(vkAllocateCommandBuffers(v->device, &ai, &cmd), VK_SUCCESS);
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    assert_int_equal(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
    return cmd;
}

/* Ends cmd and submits it waiting for `wait_sem` >= wait (none when 0) at `stage`, signalling
 * `signal_sem` = signal (none when VK_NULL_HANDLE); waits for it on the CPU and frees it. */
static void submit_cmd(rig_vk* v, VkCommandBuffer cmd, VkSemaphore wait_sem, uint64_t wait,
                       VkPipelineStageFlags stage, VkSemaphore signal_sem, uint64_t signal)
{
    assert_int_equal(vkEndCommandBuffer(cmd), VK_SUCCESS);
    VkTimelineSemaphoreSubmitInfo ts = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    ts.waitSemaphoreValueCount = wait ? 1u : 0u;
    ts.pWaitSemaphoreValues = &wait;
    ts.signalSemaphoreValueCount = signal_sem ? 1u : 0u;
    ts.pSignalSemaphoreValues = &signal;
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.pNext = &ts;
    si.waitSemaphoreCount = wait ? 1u : 0u;
    si.pWaitSemaphores = &wait_sem;
    si.pWaitDstStageMask = &stage;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    si.signalSemaphoreCount = signal_sem ? 1u : 0u;
    si.pSignalSemaphores = &signal_sem;
    VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    assert_int_equal(vkCreateFence(v->device, &fi, NULL, &fence), VK_SUCCESS);
    assert_int_equal(vkQueueSubmit(v->queue, 1, &si, fence), VK_SUCCESS);
    assert_int_equal(vkWaitForFences(v->device, 1, &fence, VK_TRUE, 10000000000ull), VK_SUCCESS);
    vkDestroyFence(v->device, fence, NULL);
    vkFreeCommandBuffers(v->device, v->pool, 1, &cmd);
}

static sinew_vk_output* make_output(rig_vk* v, uint32_t flags)
{
    sinew_vk_output_desc desc = SINEW_VK_OUTPUT_DESC_INIT;
    desc.vertex_capacity = VERTICES;
    desc.flags = flags;
    sinew_vk_output* out = NULL;
    assert_int_equal(sinew_vk_output_create(v->ctx, &desc, &out), SINEW_OK);
    return out;
}

static void check_words(const void* data, VkDeviceSize bytes, uint32_t want, const char* what,
                        uint64_t frame)
{
    const uint32_t* w = data;
    for (VkDeviceSize k = 0; k < bytes / 4u; ++k)
        if (w[k] != want)
            fail_msg("frame %llu: %s word %llu is 0x%x, want 0x%x", (unsigned long long)frame,
                     what, (unsigned long long)k, w[k], want);
}

/* Six frames through two slots: writer and reader hand each slot over through
 * VK_QUEUE_FAMILY_EXTERNAL, and the reader sees exactly what the writer wrote. */
static void test_acquire_read_release(void** state)
{
    (void)state;
    rig_vk v;
    rig_open(&v);
    sinew_vk_output* out = make_output(&v, SINEW_VK_OUTPUT_EXPORTABLE);
    sinew_vk_output_info info = SINEW_VK_OUTPUT_INFO_INIT;
    assert_int_equal(sinew_vk_output_get_info(out, &info), SINEW_OK);
    assert_int_equal(info.external_writer, 0);
    assert_int_equal(info.ownership_transfer, 0);
    vk_test_alias a;
    vk_test_alias_import(v.ctx, out, &a);
    vk_test_buffer rb;
    vk_test_buffer_create(v.ctx, 2u * info.slot_bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, &rb);
    assert_int_equal(sinew_vk_output_set_external_writer(out, 1), SINEW_OK);
    assert_int_equal(sinew_vk_output_get_info(out, &info), SINEW_OK);
    assert_int_equal(info.external_writer, 1);
    assert_int_equal(info.ownership_transfer, 1);

    for (uint64_t f = 0; f < FRAMES; ++f) {
        uint32_t slot = 99;
        assert_int_equal(sinew_vk_output_begin_frame(out, 0, &slot), SINEW_OK);
        assert_int_equal(slot, (uint32_t)(f % info.slot_count));
        uint64_t wait = 0, signal = 0;
        assert_int_equal(sinew_vk_output_external_frame(out, &wait, &signal), SINEW_OK);
        assert_int_equal(signal, f + 1u);
        sinew_vk_output_ext slot_ext;
        {
            sinew_output_desc d = SINEW_OUTPUT_DESC_INIT;
            assert_int_equal(sinew_vk_output_get_desc(out, slot, &d), SINEW_OK);
            slot_ext = *(const sinew_vk_output_ext*)d.next;
        }
        const uint32_t pos_word = 0x3f800000u + (uint32_t)f;  /* 1.0f and up */
        const uint32_t nrm_word = 0xbf800000u + (uint32_t)f;  /* -1.0f and down */

        /* The writer: its view of the slot, between two transfers through EXTERNAL. */
        VkCommandBuffer wcmd = begin_cmd(&v);
        vk_test_writer_transfer(wcmd, a.buffer, v.family, 1);
        vkCmdFillBuffer(wcmd, a.buffer, slot_ext.position_offset, info.slot_bytes, pos_word);
        vkCmdFillBuffer(wcmd, a.buffer, slot_ext.normal_offset, info.slot_bytes, nrm_word);
        vk_test_writer_transfer(wcmd, a.buffer, v.family, 0);
        submit_cmd(&v, wcmd, info.read, wait, VK_PIPELINE_STAGE_TRANSFER_BIT, info.written,
                   signal);
        assert_int_equal(sinew_vk_output_end_frame(out), SINEW_OK);

        /* The reader: waits for `written` on the GPU, acquires, copies, releases, signals
         * `read` = f + 1. */
        sinew_vk_output_info cur = SINEW_VK_OUTPUT_INFO_INIT;
        assert_int_equal(sinew_vk_output_get_info(out, &cur), SINEW_OK);
        assert_int_equal(cur.read_slot, slot);
        memset(rb.mapped, 0, (size_t)(2u * info.slot_bytes));
        VkCommandBuffer rcmd = begin_cmd(&v);
        sinew_test_log_reset(&v.log);
        uint32_t calls = seen.calls;
        assert_int_equal(sinew_vk_output_cmd_acquire(out, slot, rcmd, v.family,
                                                     VK_PIPELINE_STAGE_TRANSFER_BIT,
                                                     VK_ACCESS_TRANSFER_READ_BIT),
                         SINEW_OK);
        check_seen(calls, &cur, &slot_ext, VK_QUEUE_FAMILY_EXTERNAL, v.family,
                   VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                   VK_ACCESS_TRANSFER_READ_BIT);
        VkBufferCopy regions[2] = {{cur.position_offset, 0, info.slot_bytes},
                                   {cur.normal_offset, info.slot_bytes, info.slot_bytes}};
        vkCmdCopyBuffer(rcmd, cur.buffer, rb.buffer, 2, regions);
        calls = seen.calls;
        assert_int_equal(sinew_vk_output_cmd_release(out, slot, rcmd, v.family,
                                                     VK_PIPELINE_STAGE_TRANSFER_BIT,
                                                     VK_ACCESS_TRANSFER_READ_BIT),
                         SINEW_OK);
        check_seen(calls, &cur, &slot_ext, v.family, VK_QUEUE_FAMILY_EXTERNAL,
                   VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                   VK_ACCESS_TRANSFER_READ_BIT, 0);
        assert_int_equal(v.log.total, 0);
        VkMemoryBarrier host = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
        vkCmdPipelineBarrier(rcmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                             0, 1, &host, 0, NULL, 0, NULL);
        submit_cmd(&v, rcmd, cur.written, f + 1u, VK_PIPELINE_STAGE_TRANSFER_BIT, cur.read,
                   f + 1u);
        check_words(rb.mapped, info.slot_bytes, pos_word, "position", f);
        check_words((const char*)rb.mapped + info.slot_bytes, info.slot_bytes, nrm_word,
                    "normal", f);
    }
    assert_int_equal(vk_test_validation_messages(v.ctx), 0);

    /* Unregistered, the same calls record nothing: the command buffer they get has not begun
     * recording, and a recorded barrier would be a validation error. */
    assert_int_equal(sinew_vk_output_set_external_writer(out, 0), SINEW_OK);
    assert_int_equal(sinew_vk_output_get_info(out, &info), SINEW_OK);
    assert_int_equal(info.external_writer, 0);
    assert_int_equal(info.ownership_transfer, 0);
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = v.pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer idle;
    assert_int_equal(vkAllocateCommandBuffers(v.device, &ai, &idle), VK_SUCCESS);
    uint32_t calls = seen.calls;
    assert_int_equal(sinew_vk_output_cmd_acquire(out, 0, idle, v.family,
                                                 VK_PIPELINE_STAGE_VERTEX_INPUT_BIT,
                                                 VK_ACCESS_VERTEX_ATTRIBUTE_READ_BIT),
                     SINEW_OK);
    assert_int_equal(sinew_vk_output_cmd_release(out, 0, idle, v.family,
                                                 VK_PIPELINE_STAGE_VERTEX_INPUT_BIT, 0),
                     SINEW_OK);
    assert_int_equal(seen.calls, calls);
    vkFreeCommandBuffers(v.device, v.pool, 1, &idle);

    vk_test_buffer_free(&rb);
    vk_test_alias_free(&a);
    sinew_vk_output_destroy(out);
    rig_close(&v);
}

/* A writer registered on memory that was never exportable writes through this VkDevice: no
 * transfer through VK_QUEUE_FAMILY_EXTERNAL, nothing recorded. */
static void test_no_transfer_without_export(void** state)
{
    (void)state;
    rig_vk v;
    rig_open(&v);
    sinew_vk_output* out = make_output(&v, 0);
    assert_int_equal(sinew_vk_output_set_external_writer(out, 1), SINEW_OK);
    sinew_vk_output_info info = SINEW_VK_OUTPUT_INFO_INIT;
    assert_int_equal(sinew_vk_output_get_info(out, &info), SINEW_OK);
    assert_int_equal(info.external_writer, 1);
    assert_int_equal(info.ownership_transfer, 0);
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = v.pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer idle;
    assert_int_equal(vkAllocateCommandBuffers(v.device, &ai, &idle), VK_SUCCESS);
    sinew_test_log_reset(&v.log);
    const uint32_t calls = seen.calls;
    for (uint32_t slot = 0; slot < info.slot_count; ++slot) {
        assert_int_equal(sinew_vk_output_cmd_acquire(out, slot, idle, v.family,
                                                     VK_PIPELINE_STAGE_VERTEX_SHADER_BIT,
                                                     VK_ACCESS_SHADER_READ_BIT),
                         SINEW_OK);
        assert_int_equal(sinew_vk_output_cmd_release(out, slot, idle, v.family,
                                                     VK_PIPELINE_STAGE_VERTEX_SHADER_BIT, 0),
                         SINEW_OK);
    }
    assert_int_equal(v.log.total, 0);
    assert_int_equal(seen.calls, calls);
    vkFreeCommandBuffers(v.device, v.pool, 1, &idle);
    assert_int_equal(sinew_vk_output_set_external_writer(out, 0), SINEW_OK);
    sinew_vk_output_destroy(out);
    rig_close(&v);
}

/* Bad arguments: SINEW_ERROR_INVALID_ARGUMENT and one line each, with and without a
 * registered writer (the arguments are checked before the no-op decision). */
static void test_refusals(void** state)
{
    (void)state;
    rig_vk v;
    rig_open(&v);
    sinew_vk_output* out = make_output(&v, SINEW_VK_OUTPUT_EXPORTABLE);
    VkCommandBuffer cmd = begin_cmd(&v);
    uint32_t families = 0;
    {
        sinew_vk_context_info ci = SINEW_VK_CONTEXT_INFO_INIT;
        assert_int_equal(sinew_vk_context_get_info(v.ctx, &ci), SINEW_OK);
        vkGetPhysicalDeviceQueueFamilyProperties(ci.physical_device, &families, NULL);
    }
    const VkPipelineStageFlags st = VK_PIPELINE_STAGE_VERTEX_SHADER_BIT;
    const VkAccessFlags ac = VK_ACCESS_SHADER_READ_BIT;
#define REFUSED(call)                                                      \
    do {                                                                   \
        sinew_test_log_reset(&v.log);                                      \
        assert_int_equal((call), SINEW_ERROR_INVALID_ARGUMENT);            \
        assert_int_equal(v.log.count[SINEW_LOG_ERROR], 1);                 \
        assert_int_equal(v.log.total, 1);                                  \
    } while (0)
    const uint32_t calls = seen.calls;
    for (int registered = 0; registered < 2; ++registered) {
        assert_int_equal(sinew_vk_output_set_external_writer(out, registered), SINEW_OK);
        /* No output: nothing to log through, as for every output function. */
        sinew_test_log_reset(&v.log);
        assert_int_equal(sinew_vk_output_cmd_acquire(NULL, 0, cmd, v.family, st, ac),
                         SINEW_ERROR_INVALID_ARGUMENT);
        assert_int_equal(sinew_vk_output_cmd_release(NULL, 0, cmd, v.family, st, 0),
                         SINEW_ERROR_INVALID_ARGUMENT);
        assert_int_equal(v.log.total, 0);
        REFUSED(sinew_vk_output_cmd_acquire(out, 2, cmd, v.family, st, ac));
        REFUSED(sinew_vk_output_cmd_release(out, 2, cmd, v.family, st, 0));
        REFUSED(sinew_vk_output_cmd_acquire(out, 0, VK_NULL_HANDLE, v.family, st, ac));
        REFUSED(sinew_vk_output_cmd_release(out, 0, VK_NULL_HANDLE, v.family, st, 0));
        REFUSED(sinew_vk_output_cmd_acquire(out, 0, cmd, families, st, ac));
        REFUSED(sinew_vk_output_cmd_release(out, 0, cmd, families, st, 0));
        REFUSED(sinew_vk_output_cmd_acquire(out, 0, cmd, VK_QUEUE_FAMILY_EXTERNAL, st, ac));
        REFUSED(sinew_vk_output_cmd_release(out, 0, cmd, VK_QUEUE_FAMILY_EXTERNAL, st, 0));
        REFUSED(sinew_vk_output_cmd_acquire(out, 0, cmd, VK_QUEUE_FAMILY_IGNORED, st, ac));
        REFUSED(sinew_vk_output_cmd_release(out, 0, cmd, VK_QUEUE_FAMILY_FOREIGN_EXT, st, 0));
        REFUSED(sinew_vk_output_cmd_acquire(out, 0, cmd, v.family, 0, ac));
        REFUSED(sinew_vk_output_cmd_release(out, 0, cmd, v.family, 0, 0));
        REFUSED(sinew_vk_output_cmd_acquire(out, 0, cmd, v.family, st, 0));
    }
#undef REFUSED
    /* The command buffer received nothing from the refused calls: it ends and runs clean. */
    assert_int_equal(seen.calls, calls);
    submit_cmd(&v, cmd, VK_NULL_HANDLE, 0, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
               VK_NULL_HANDLE, 0);
    assert_int_equal(sinew_vk_output_set_external_writer(out, 0), SINEW_OK);
    sinew_vk_output_destroy(out);
    rig_close(&v);
}

/* sinew_vk_output_info gained fields: a caller of the first published size still gets its
 * fields and nothing is written past them; a smaller size is refused. */
static void test_info_sizes(void** state)
{
    (void)state;
    rig_vk v;
    rig_open(&v);
    sinew_vk_output* out = make_output(&v, SINEW_VK_OUTPUT_EXPORTABLE);
    assert_int_equal(sinew_vk_output_set_external_writer(out, 1), SINEW_OK);
    sinew_vk_output_info info;
    memset(&info, 0xab, sizeof info);
    info.struct_size = (uint32_t)offsetof(sinew_vk_output_info, external_writer);
    assert_int_equal(sinew_vk_output_get_info(out, &info), SINEW_OK);
    assert_int_equal(info.vertex_capacity, VERTICES);
    assert_int_equal(info.external_writer, 0xababababu);
    assert_int_equal(info.ownership_transfer, 0xababababu);
    info.struct_size -= 4u;
    sinew_test_log_reset(&v.log);
    assert_int_equal(sinew_vk_output_get_info(out, &info), SINEW_ERROR_STRUCT_SIZE);
    assert_int_equal(v.log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(sinew_vk_output_set_external_writer(out, 0), SINEW_OK);
    sinew_vk_output_destroy(out);
    rig_close(&v);
}

/* The negative control: the validation layer does check these barriers. The barrier that
 * sinew_vk_output_cmd_acquire records, recorded by hand, is clean with the reading family and
 * reported with a family the device does not have (which the function itself refuses, so it
 * cannot be produced through it). */
static void test_validation_sees_bad_family(void** state)
{
    (void)state;
    rig_vk v;
    rig_open(&v);
    sinew_vk_output* out = make_output(&v, SINEW_VK_OUTPUT_EXPORTABLE);
    sinew_vk_output_info info = SINEW_VK_OUTPUT_INFO_INIT;
    assert_int_equal(sinew_vk_output_get_info(out, &info), SINEW_OK);
    uint32_t families = 0;
    {
        sinew_vk_context_info ci = SINEW_VK_CONTEXT_INFO_INIT;
        assert_int_equal(sinew_vk_context_get_info(v.ctx, &ci), SINEW_OK);
        vkGetPhysicalDeviceQueueFamilyProperties(ci.physical_device, &families, NULL);
    }
    VkCommandBuffer cmd = begin_cmd(&v);
    VkBufferMemoryBarrier b = {VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
    b.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
    b.dstQueueFamilyIndex = v.family;
    b.buffer = info.buffer;
    b.offset = info.position_offset;
    b.size = info.normal_offset + info.slot_bytes - info.position_offset;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         0, 0, NULL, 1, &b, 0, NULL);
    assert_int_equal(vk_test_validation_messages(v.ctx), 0);
    b.dstQueueFamilyIndex = families + 6u;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         0, 0, NULL, 1, &b, 0, NULL);
    uint64_t messages = vk_test_validation_messages(v.ctx);
    print_message("acquire to family %u: %llu validation message(s)\n", b.dstQueueFamilyIndex,
                  (unsigned long long)messages);
    assert_true(messages >= 1u);
    /* Never submitted: the bad barrier only had to be seen. */
    vkEndCommandBuffer(cmd);
    vkFreeCommandBuffers(v.device, v.pool, 1, &cmd);
    sinew_vk_output_destroy(out);
    vkDestroyCommandPool(v.device, v.pool, NULL);
    sinew_vk_context_destroy(v.ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acquire_read_release),
        cmocka_unit_test(test_no_transfer_without_export),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_info_sizes),
        cmocka_unit_test(test_validation_sees_bad_family),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
