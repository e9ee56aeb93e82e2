/* What the fps-cuda plugin reads of the Vulkan module: the parts of sinew_vulkan.h it uses,
 * declared here because the plugin builds without the Vulkan headers (fps_cuda_vk_check.c
 * checks them against the real header wherever the Vulkan module is built), and the module's
 * functions, which it finds in the world's Vulkan service (sinew_plugin.h, SINEW_SERVICE_VULKAN)
 * rather than by symbol lookup. SPDX-License-Identifier: MIT */
#ifndef SINEW_FPS_CUDA_VK_H
#define SINEW_FPS_CUDA_VK_H

#include <stdint.h>

#include <sinew/sinew_plugin.h>

#if UINTPTR_MAX == UINT64_MAX
typedef void* fpsc_vk_handle; /* VkBuffer: a pointer on 64-bit platforms */
#else
typedef uint64_t fpsc_vk_handle;
#endif
typedef struct fpsc_vk_output_ext {
    sinew_ext_header header;
    struct sinew_vk_output* output;
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

/* The world's Vulkan service with every output function the plugin calls, through the backend's
 * host api: NULL and *out set, or a reason (for the one INFO line of the fallback to the host
 * mapping) and *out NULL. Logs nothing. */
const char* fpsc_vk_find(const sinew_host_api* host, const sinew_vk_service** out);

/* The output's memory exported through `vk` into `ex` (struct_size set, fd -1 until exported). */
sinew_result fpsc_vk_export_memory(const sinew_vk_service* vk, const struct sinew_vk_output* output,
                                   fpsc_vk_memory_export* ex);

#endif
