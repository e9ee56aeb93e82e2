/* Interop: an exportable output's memory exported as an opaque fd and
 * imported into a second VkDevice on the same physical device; lbs writes a frame through the
 * first device's mapping, the second device reads it through a Vulkan copy, and bytes the
 * second device writes show up in the first one's mapping. Validation on both devices.
 * SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vk_test.h"

typedef struct imported {
    VkDevice device;
    VkBuffer buffer;
    VkDeviceMemory memory;
} imported;

static void import_output(sinew_vk_context* ctx, const sinew_vk_memory_export* ex,
                          imported* im)
{
    sinew_vk_context_info ci = SINEW_VK_CONTEXT_INFO_INIT;
    assert_int_equal(sinew_vk_context_get_info(ctx, &ci), SINEW_OK);
    im->device = ci.device;
    VkExternalMemoryBufferCreateInfo ext = {VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
    ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.pNext = &ext;
    bi.size = ex->buffer_size;
    bi.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
               VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_VERTEX_BUFFER_BIT;
    assert_int_equal(vkCreateBuffer(im->device, &bi, NULL, &im->buffer), VK_SUCCESS);
    VkMemoryDedicatedAllocateInfo ded = {VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    ded.buffer = im->buffer;
    VkImportMemoryFdInfoKHR imp = {VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR};
    imp.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    imp.fd = ex->fd;
    imp.pNext = ex->dedicated ? &ded : NULL;
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.pNext = &imp;
    ai.allocationSize = ex->allocation_size;
    ai.memoryTypeIndex = ex->memory_type_index;
    /* On success the import owns the fd: it must not be closed here. */
    assert_int_equal(vkAllocateMemory(im->device, &ai, NULL, &im->memory), VK_SUCCESS);
    assert_int_equal(vkBindBufferMemory(im->device, im->buffer, im->memory, 0), VK_SUCCESS);
}

typedef struct copy_job {
    VkBuffer src, dst;
    VkBufferCopy region;
} copy_job;

static void record_copy(VkCommandBuffer cmd, void* user)
{
    copy_job* job = user;
    vkCmdCopyBuffer(cmd, job->src, job->dst, 1, &job->region);
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                         &mb, 0, NULL, 0, NULL);
}

static void test_round_trip(void** state)
{
    (void)state;
    vk_scene s;
    vk_scene_open(&s, "cylinder", 1);
    sinew_vk_context_info ci = SINEW_VK_CONTEXT_INFO_INIT;
    assert_int_equal(sinew_vk_context_get_info(s.ctx, &ci), SINEW_OK);
    if (!(ci.caps & SINEW_VK_CAP_EXPORT_MEMORY_FD)) {
        print_message("SKIP: %s cannot export memory as fds\n", ci.device_name);
        vk_scene_close(&s);
        skip();
    }
    /* The second device: its own instance and VkDevice on the same physical device. */
    sinew_test_log log2;
    sinew_test_log_init(&log2);
    sinew_vk_context* ctx2 = vk_test_context(&log2);
    sinew_vk_context_info ci2 = SINEW_VK_CONTEXT_INFO_INIT;
    assert_int_equal(sinew_vk_context_get_info(ctx2, &ci2), SINEW_OK);
    assert_true(ci2.device != ci.device);

    sinew_vk_output_desc desc = SINEW_VK_OUTPUT_DESC_INIT;
    desc.vertex_capacity = s.vertices;
    desc.flags = SINEW_VK_OUTPUT_EXPORTABLE;
    sinew_vk_output* out = NULL;
    assert_int_equal(sinew_vk_output_create(s.ctx, &desc, &out), SINEW_OK);
    sinew_vk_memory_export ex = SINEW_VK_MEMORY_EXPORT_INIT;
    assert_int_equal(sinew_vk_output_export_memory(out, &ex), SINEW_OK);
    assert_memory_equal(ex.device_uuid, ci2.device_uuid, VK_UUID_SIZE);
    imported im;
    import_output(ctx2, &ex, &im);

    /* lbs writes frame 0 into slot 0 through the first device's mapping. */
    sinew_skin skin = vk_scene_add_skin(&s, "lbs");
    assert_int_equal(sinew_vk_output_bind(out, s.world, skin), SINEW_OK);
    assert_int_equal(sinew_vk_output_begin_frame(out, 0, NULL), SINEW_OK);
    assert_int_equal(sinew_world_update(s.world, 0.01f), SINEW_OK);
    assert_int_equal(sinew_vk_output_end_frame(out), SINEW_OK);
    size_t n3 = (size_t)s.vertices * 3;
    float* ref = malloc(n3 * sizeof(float));
    assert_non_null(ref);
    vk_scene_read(&s, skin, ref, NULL);

    /* The second device copies slot 0's positions out of the imported memory. */
    VkDeviceSize bytes = n3 * sizeof(float);
    vk_test_buffer h;
    vk_test_buffer_create(ctx2, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                           VK_BUFFER_USAGE_TRANSFER_DST_BIT, &h);
    float* hp = h.mapped;
    copy_job job = {im.buffer, h.buffer, {ex.position_offsets[0], 0, bytes}};
    assert_int_equal(sinew_vk_context_submit_wait(ctx2, record_copy, &job), SINEW_OK);
    assert_memory_equal(hp, ref, (size_t)bytes);

    /* And the other way: the second device writes slot 1, the first device's mapping sees it. */
    for (size_t i = 0; i < n3; ++i) hp[i] = (float)i * 0.5f;
    copy_job back = {h.buffer, im.buffer, {0, ex.position_offsets[1], bytes}};
    assert_int_equal(sinew_vk_context_submit_wait(ctx2, record_copy, &back), SINEW_OK);
    sinew_output_desc od = SINEW_OUTPUT_DESC_INIT;
    assert_int_equal(sinew_vk_output_get_desc(out, 1, &od), SINEW_OK);
    for (size_t i = 0; i < n3; ++i) assert_true(od.positions[i] == (float)i * 0.5f);

    vk_test_buffer_free(&h);
    vkDestroyBuffer(im.device, im.buffer, NULL);
    vkFreeMemory(im.device, im.memory, NULL);
    free(ref);
    sinew_vk_output_destroy(out);
    vk_test_finish(ctx2);
    vk_scene_close(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
