/* The instance of vk-lbs and vk-dqs, shared by vk_skin.c (the backend) and vk_skin_record.c
 * (recording into an engine's command buffer). SPDX-License-Identifier: MIT */
#ifndef SINEW_VK_SKIN_H
#define SINEW_VK_SKIN_H

#include <stdbool.h>

#include "vk_internal.h"

typedef struct vk_ops {
    const char* name;
    uint32_t transform_floats; /* per joint: 16 (lbs) or 8 (dqs) */
    const uint32_t* spirv;
    size_t spirv_size;
    void (*convert_pose)(const float* skinning, uint32_t joint_count, float* out);
} vk_ops;

/* Where a step writes: the own buffer, a slot of a sinew_vk_output, host arrays, or an
 * engine's buffer range that sinew_vk_record records into (vk_skin_record.c). */
typedef enum { TARGET_OWN, TARGET_OUTPUT, TARGET_HOST, TARGET_RANGE } vk_target;

#define VK_SKIN_MAGIC 0x766b736bu
#define GROUP_SIZE 64u

typedef struct vk_skin {
    uint32_t magic;
    sinew_host_api host;
    const vk_ops* ops;
    sinew_vk_context* ctx;
    uint32_t n, joints, width;
    bool want_normals;
    const float* rest_normals;
    sinew_vk_buffer rest, joint_buf, weight_buf, transforms, own;
    VkDeviceSize own_normal_offset;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkShaderModule module;
    VkPipeline pipeline;
    VkDescriptorPool pool;
    VkDescriptorSet set;
    VkCommandPool cmd_pool;
    VkCommandBuffer cmd;
    VkFence fence;
    bool in_flight;
    VkBuffer set_buffer;               /* output target written into the descriptor set */
    VkDeviceSize set_pos, set_nrm;
    float* latest;                     /* converted transforms of the latest set_pose */
    bool has_pose, pose_pending;
    /* Binding. */
    vk_target target;
    sinew_vk_output* output;
    uint32_t slot;
    sinew_output_view host_binding;
    /* Where the latest shape is: the own buffer or a slot of `output`. */
    VkBuffer last_buffer;
    VkDeviceSize last_pos, last_nrm;
    /* After set_state the own normals are stale until skinned with a pose. */
    bool state_normals_stale;
    /* Bound to an engine's range (vk_skin_record.c): listed in the world's tie as a recorder,
     * each step's transforms in slot ring_next of the ring, recorded by sinew_vk_record. */
    sinew_vk_recorder recorder;
    sinew_vk_tie* tie;
    sinew_vk_range_ext range;
    sinew_vk_buffer ring;
    VkDeviceSize ring_stride;
    VkDescriptorPool ring_pool;
    VkDescriptorSet ring_sets[SINEW_VK_RECORD_FRAMES];
    uint32_t ring_next;
    bool record_pending;
    bool recorded;                     /* a dispatch went into an engine's command buffer */
    /* The latest shape went to the range: the own buffer holds it only once computed again
     * (vk_latest). */
    bool range_latest;
} vk_skin;

/* Binds s to an engine's range: checks it against the device's limits and the mesh, creates
 * the ring on first use, points the ring's descriptor sets at it and lists s as a recorder.
 * Refused with SINEW_ERROR_OUTPUT_BINDING and one line; nothing changes then. */
sinew_result vk_skin_bind_range(vk_skin* s, const sinew_vk_range_ext* range);
/* Unlists s as a recorder (a pending dispatch is dropped; the shape stays computable). */
void vk_skin_unbind_range(vk_skin* s);
/* A step into the range: the latest transforms into the ring's next slot, to be recorded. */
sinew_result vk_skin_step_range(vk_skin* s);
/* Frees the ring and its descriptor sets. */
void vk_skin_ring_destroy(vk_skin* s);
/* Hands the instance to its world's tie, which frees it (vk_skin_free) once the engine's
 * frames that recorded it are past (sinew_vk_tie_retire_recorder). */
void vk_skin_retire(vk_skin* s);
/* Frees every object of the instance and the instance (vk_skin.c). */
void vk_skin_free(vk_skin* s);

#endif
