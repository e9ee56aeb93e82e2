/* The parts of sinew_vulkan.h that the fps-cuda plugin reads, declared here because the plugin
 * builds without the Vulkan headers; fps_cuda_vk_check.c checks them against
 * the real header wherever the Vulkan module is built. SPDX-License-Identifier: MIT */
#ifndef SINEW_FPS_CUDA_VK_H
#define SINEW_FPS_CUDA_VK_H

#include <stdint.h>

#include <sinew/sinew.h>

#if UINTPTR_MAX == UINT64_MAX
typedef void* fpsc_vk_handle; /* VkBuffer: a pointer on 64-bit platforms */
#else
typedef uint64_t fpsc_vk_handle;
#endif
typedef struct fpsc_vk_output_ext {
    sinew_ext_header header;
    void* output;
    uint32_t slot;
    fpsc_vk_handle buffer;
    uint64_t position_offset;
    uint64_t normal_offset;
} fpsc_vk_output_ext;

typedef struct fpsc_vk_memory_export {
    uint32_t struct_size;
    int fd;
    uint64_t allocation_size;
    uint32_t memory_type_index;
    uint32_t dedicated;
    uint64_t buffer_size;
    uint32_t vertex_capacity;
    uint32_t slot_count;
    uint64_t position_offsets[4];
    uint64_t normal_offsets[4];
    uint8_t device_uuid[16];
} fpsc_vk_memory_export;

#endif
