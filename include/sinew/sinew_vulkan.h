/*
 * sinew: a skinning runtime for game engines.
 * SPDX-License-Identifier: MIT
 *
 * The Vulkan module (library sinew_vulkan, which links the Vulkan loader; the core runtime
 * never does): a context over the engine's own Vulkan objects, device output buffers that a
 * skin writes, export of their memory to other APIs, and the compute backends vk-lbs and
 * vk-dqs.
 *
 * Conventions are those of sinew.h (struct_size first, zero means default, one log line per
 * refusal). Thread safety: a context is externally synchronised, like a world. sinew submits
 * to the queue it is given; if the engine submits to the same VkQueue from another thread, it
 * must serialise those submissions with sinew's calls (Vulkan requires it for any queue).
 */
#ifndef SINEW_SINEW_VULKAN_H
#define SINEW_SINEW_VULKAN_H

#include <sinew/sinew.h>
#include <vulkan/vulkan.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------- */
/* Context                                                                                  */
/* ---------------------------------------------------------------------------------------- */

typedef struct sinew_vk_context sinew_vk_context;

enum {
    /* Own instance only: enable VK_LAYER_KHRONOS_validation and VK_EXT_debug_utils; every
     * validation message is logged (errors and warnings at SINEW_LOG_ERROR) and counted in
     * sinew_vk_context_info.validation_messages. Refused with SINEW_ERROR_UNSUPPORTED when
     * the layer is not installed. */
    SINEW_VK_CONTEXT_VALIDATION = 1u << 0,
    /* Own device only: require a queue family with graphics as well as compute (the
     * renderer's). Without it a compute-only family may be chosen. */
    SINEW_VK_CONTEXT_GRAPHICS = 1u << 1
};

/* Capabilities found on the device (sinew_vk_context_info.caps). */
enum {
    SINEW_VK_CAP_GRAPHICS = 1u << 0,           /* the context's queue family has graphics */
    SINEW_VK_CAP_TIMELINE_SEMAPHORE = 1u << 1, /* Vulkan 1.2 timeline semaphores enabled */
    SINEW_VK_CAP_EXPORT_MEMORY_FD = 1u << 2,   /* VK_KHR_external_memory_fd, OPAQUE_FD */
    SINEW_VK_CAP_EXPORT_SEMAPHORE_FD = 1u << 3 /* VK_KHR_external_semaphore_fd, OPAQUE_FD,
                                                  for timeline semaphores */
};

typedef struct sinew_vk_context_desc {
    uint32_t struct_size;
    const void* next;
    /* The engine's objects. Either all of instance, physical_device, device and queue are
     * given, or none (the default): sinew then creates its own instance (Vulkan 1.2 or
     * later), picks the first device with a compute queue family (a discrete GPU before an
     * integrated one before a CPU implementation; SINEW_VK_DEVICE_INDEX in the environment
     * overrides), and creates a device with one queue and every extension in caps that the
     * device offers. Given objects are never destroyed by sinew. An engine's device must
     * have the Vulkan 1.2 feature timelineSemaphore enabled, and VK_KHR_external_memory_fd /
     * VK_KHR_external_semaphore_fd for the export caps. */
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family_index;        /* the family of queue (with given objects) */
    uint32_t flags;                     /* SINEW_VK_CONTEXT_* */
    const sinew_allocator* allocator;   /* NULL: aligned malloc/free */
    const sinew_logger* logger;         /* NULL: stderr, warnings and errors only */
    sinew_log_level log_level;          /* as in sinew_world_desc */
} sinew_vk_context_desc;

#define SINEW_VK_CONTEXT_DESC_INIT { (uint32_t)sizeof(sinew_vk_context_desc), NULL, \
    VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE, 0u, 0u, NULL, NULL, \
    SINEW_LOG_WARNING }

/* Creates a context. No Vulkan loader, no driver or no device with a compute queue:
 * SINEW_ERROR_NO_DEVICE (one log line, nothing leaked). */
SINEW_API sinew_result sinew_vk_context_create(const sinew_vk_context_desc* desc,
                                               sinew_vk_context** out_context);
/* Waits for the queue to be idle, then destroys what sinew created. NULL is ignored. Every
 * output, renderer and skin using the context must be gone first. */
SINEW_API void sinew_vk_context_destroy(sinew_vk_context* context);

typedef struct sinew_vk_context_info {
    uint32_t struct_size;
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family_index;
    uint32_t api_version;               /* of the physical device */
    uint32_t caps;                      /* SINEW_VK_CAP_* */
    uint8_t device_uuid[VK_UUID_SIZE];  /* to match the device in CUDA (cudaDeviceProp.uuid) */
    char device_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    uint64_t validation_messages;       /* messages seen so far (SINEW_VK_CONTEXT_VALIDATION) */
} sinew_vk_context_info;

#define SINEW_VK_CONTEXT_INFO_INIT { (uint32_t)sizeof(sinew_vk_context_info) }

SINEW_API sinew_result sinew_vk_context_get_info(const sinew_vk_context* context,
                                                 sinew_vk_context_info* out_info);

/* Runs a one-time command buffer on the context's queue and waits for it (uploads, readbacks
 * in samples and tests). record is called with a command buffer in the recording state. */
SINEW_API sinew_result sinew_vk_context_submit_wait(sinew_vk_context* context,
                                                    void (*record)(VkCommandBuffer cmd,
                                                                   void* user),
                                                    void* user);

/* Index of a memory type with all of `required` among type_bits, or -1. */
SINEW_API int32_t sinew_vk_context_find_memory_type(const sinew_vk_context* context,
                                                    uint32_t type_bits,
                                                    VkMemoryPropertyFlags required);

#ifdef __cplusplus
}
#endif

#endif /* SINEW_SINEW_VULKAN_H */
