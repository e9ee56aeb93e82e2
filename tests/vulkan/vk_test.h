/* Helpers shared by the Vulkan tests: a validated context on the first device (skipping, or
 * failing under SINEW_REQUIRE_VULKAN=1, where none exists), a scene with an imported character,
 * and comparisons. SPDX-License-Identifier: MIT */
#ifndef SINEW_VK_TEST_H
#define SINEW_VK_TEST_H

#include <stdbool.h>

#include <sinew/sinew.h>
#include <sinew/sinew_import.h>
#include <sinew/sinew_vulkan.h>

#include "test_support.h"

/* A context with SINEW_VK_CONTEXT_VALIDATION logging into `log`. Skips the test when no device
 * (or no validation layer) is there, fails instead under SINEW_REQUIRE_VULKAN=1. */
sinew_vk_context* vk_test_context(sinew_test_log* log);
/* Asserts that the validation layer reported nothing, then destroys the context. */
void vk_test_finish(sinew_vk_context* ctx);
/* The validation messages so far. */
uint64_t vk_test_validation_messages(const sinew_vk_context* ctx);

typedef struct vk_scene {
    sinew_test_log log;
    sinew_vk_context* ctx;
    sinew_world* world;
    sinew_character* character;
    sinew_rig rig;
    uint32_t vertices, joints;
    float diagonal;                     /* of the rest mesh's bounding box */
    float* local;                       /* joints * 16 */
} vk_scene;

/* Opens characters/<name>/<name>.ini with a world of `threads` threads and the vk backends
 * registered. */
void vk_scene_open(vk_scene* s, const char* name, uint32_t threads);
void vk_scene_close(vk_scene* s);
/* Samples the first animation at fraction t of its duration into s->local. */
void vk_scene_sample(vk_scene* s, float t);
/* A skin of `backend` (normals on), posed with s->local; with backend parameters. */
sinew_skin vk_scene_add_skin(vk_scene* s, const char* backend);
sinew_skin vk_scene_add_skin_with(vk_scene* s, const char* backend, const sinew_param* params,
                                  uint32_t param_count);
void vk_scene_pose(vk_scene* s, sinew_skin skin);
void vk_scene_read(vk_scene* s, sinew_skin skin, float* positions, float* normals);
/* Largest absolute difference of count floats. */
float vk_max_diff(const float* a, const float* b, size_t count);

/* An external writer's view of an output made with SINEW_VK_OUTPUT_EXPORTABLE: the exported
 * memory imported into a second VkBuffer on the context's device (as CUDA imports it), usable
 * for transfers, storage and vertex reads. The import owns the exported fd. */
typedef struct vk_test_alias {
    VkDevice device;
    VkBuffer buffer;
    VkDeviceMemory memory;
} vk_test_alias;
void vk_test_alias_import(sinew_vk_context* ctx, const sinew_vk_output* out, vk_test_alias* a);
void vk_test_alias_free(vk_test_alias* a);
/* The external API's side of the ownership protocol as a barrier on the alias: acquire (1)
 * from VK_QUEUE_FAMILY_EXTERNAL to `family` before transfer writes, or release (0) back after
 * them. */
void vk_test_writer_transfer(VkCommandBuffer cmd, VkBuffer buffer, uint32_t family, int acquire);

/* A buffer in host-visible, coherent memory of ctx's device, mapped: what a test reads back
 * through or hands to sinew as an engine's buffer. */
typedef struct vk_test_buffer {
    VkDevice device;
    VkBuffer buffer;
    VkDeviceMemory memory;
    void* mapped;
} vk_test_buffer;
void vk_test_buffer_create(sinew_vk_context* ctx, VkDeviceSize size, VkBufferUsageFlags usage,
                           vk_test_buffer* out);
void vk_test_buffer_free(vk_test_buffer* b);

/* For a test that defines its own vkCmdPipelineBarrier to see what is recorded: the loader's,
 * the next definition after the program's (RTLD_NEXT), looked up once; a failure if none. */
PFN_vkCmdPipelineBarrier vk_test_next_pipeline_barrier(void);

#endif
