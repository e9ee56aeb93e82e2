/* Internals of the Vulkan module shared by its sources. SPDX-License-Identifier: MIT */
#ifndef SINEW_VK_INTERNAL_H
#define SINEW_VK_INTERNAL_H

#include <sinew/sinew_vulkan.h>

#include "sinew_host.h"

struct sinew_vk_context {
    /* Allocator and logger as a host table, so the common log/alloc helpers apply (its job
     * system runs inline: the context has no pool of its own). */
    sinew_host_api host;
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family_index;
    uint32_t caps;
    int owns_instance, owns_device;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDeviceProperties properties;
    VkPhysicalDeviceMemoryProperties memory;
    uint8_t device_uuid[VK_UUID_SIZE];
    VkCommandPool command_pool;         /* for sinew_vk_context_submit_wait */
    volatile uint64_t validation_messages;
};

/* Logs "<what>: <VkResult name>" and maps the VkResult to a sinew_result. */
sinew_result sinew_vk_fail(const sinew_vk_context* ctx, VkResult vr, const char* what);
const char* sinew_vk_result_name(VkResult vr);

#endif
