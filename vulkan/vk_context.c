/* The Vulkan context: the engine's instance, device and queue, or sinew's own for samples and
 * tests, with the capabilities the output buffers and compute backends need.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200112L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

static void* ctx_default_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    void* p = NULL;
    return posix_memalign(&p, alignment, size) == 0 ? p : NULL;
}

static void ctx_default_free(void* ptr, void* user)
{
    (void)user;
    free(ptr);
}

static void ctx_default_log(sinew_log_level level, const char* message, void* user)
{
    (void)user;
    static const char* const names[] = {"error", "warning", "info", "debug"};
    fprintf(stderr, "sinew: %s: %s\n", (unsigned)level < 4u ? names[level] : "log", message);
}

static void ctx_inline_parallel_for(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain,
                                    void* user)
{
    (void)grain;
    (void)user;
    if (count) fn(data, 0, count);
}

const char* sinew_vk_result_name(VkResult vr)
{
    switch (vr) {
#define VR(x) case x: return #x;
    VR(VK_SUCCESS) VR(VK_NOT_READY) VR(VK_TIMEOUT) VR(VK_INCOMPLETE)
    VR(VK_ERROR_OUT_OF_HOST_MEMORY) VR(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    VR(VK_ERROR_INITIALIZATION_FAILED) VR(VK_ERROR_DEVICE_LOST) VR(VK_ERROR_MEMORY_MAP_FAILED)
    VR(VK_ERROR_LAYER_NOT_PRESENT) VR(VK_ERROR_EXTENSION_NOT_PRESENT)
    VR(VK_ERROR_FEATURE_NOT_PRESENT) VR(VK_ERROR_INCOMPATIBLE_DRIVER)
    VR(VK_ERROR_TOO_MANY_OBJECTS) VR(VK_ERROR_FORMAT_NOT_SUPPORTED)
    VR(VK_ERROR_INVALID_EXTERNAL_HANDLE) VR(VK_ERROR_UNKNOWN)
#undef VR
    default: return "VkResult(other)";
    }
}

sinew_result sinew_vk_submit_compute(sinew_vk_context* ctx, VkCommandBuffer cmd, VkFence fence,
                                     const sinew_vk_output* wait_output, uint64_t wait_read,
                                     const char* what)
{
    char name[96];
    VkResult vr = vkEndCommandBuffer(cmd);
    if (vr != VK_SUCCESS) {
        snprintf(name, sizeof name, "vkEndCommandBuffer (%s)", what);
        return sinew_vk_fail(ctx, vr, name);
    }
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    VkTimelineSemaphoreSubmitInfo ts = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    if (wait_output && wait_read) {
        ts.waitSemaphoreValueCount = 1;
        ts.pWaitSemaphoreValues = &wait_read;
        si.pNext = &ts;
        si.waitSemaphoreCount = 1;
        si.pWaitSemaphores = &wait_output->read;
        si.pWaitDstStageMask = &wait_stage;
    }
    vr = vkResetFences(ctx->device, 1, &fence);
    if (vr == VK_SUCCESS) {
        sinew_vk_context_lock_queue(ctx);
        vr = vkQueueSubmit(ctx->queue, 1, &si, fence);
        sinew_vk_context_unlock_queue(ctx);
    }
    if (vr != VK_SUCCESS) {
        snprintf(name, sizeof name, "vkQueueSubmit (%s)", what);
        return sinew_vk_fail(ctx, vr, name);
    }
    return SINEW_OK;
}

/* sinew_vk_fail for the Vulkan call `call`, with " (what)" after it unless what is empty. */
static sinew_result fail_named(const sinew_vk_context* ctx, VkResult vr, const char* call,
                               const char* what)
{
    char name[96];
    snprintf(name, sizeof name, what[0] ? "%s (%s)" : "%s", call, what);
    return sinew_vk_fail(ctx, vr, name);
}

sinew_result sinew_vk_compute_layouts(sinew_vk_context* ctx, uint32_t count, uint32_t push_bytes,
                                      const char* what, VkDescriptorSetLayout* set_layout,
                                      VkPipelineLayout* layout)
{
    VkDescriptorSetLayoutBinding b[SINEW_VK_MAX_STORAGE_BINDINGS];
    memset(b, 0, sizeof b);
    for (uint32_t i = 0; i < count; ++i) {
        b[i].binding = i;
        b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        b[i].descriptorCount = 1;
        b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo dl = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dl.bindingCount = count;
    dl.pBindings = b;
    VkResult vr = vkCreateDescriptorSetLayout(ctx->device, &dl, NULL, set_layout);
    if (vr != VK_SUCCESS) return fail_named(ctx, vr, "vkCreateDescriptorSetLayout", what);
    VkPushConstantRange pc = {VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo pl = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pl.setLayoutCount = 1;
    pl.pSetLayouts = set_layout;
    pl.pushConstantRangeCount = 1;
    pl.pPushConstantRanges = &pc;
    vr = vkCreatePipelineLayout(ctx->device, &pl, NULL, layout);
    if (vr != VK_SUCCESS) return fail_named(ctx, vr, "vkCreatePipelineLayout", what);
    return SINEW_OK;
}

void sinew_vk_write_storage(const sinew_vk_context* ctx, VkDescriptorSet set, uint32_t first,
                            uint32_t count, const VkDescriptorBufferInfo* info)
{
    VkWriteDescriptorSet w[SINEW_VK_MAX_STORAGE_BINDINGS];
    memset(w, 0, sizeof w);
    for (uint32_t i = 0; i < count; ++i) {
        w[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        w[i].dstSet = set;
        w[i].dstBinding = first + i;
        w[i].descriptorCount = 1;
        w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        w[i].pBufferInfo = &info[i];
    }
    vkUpdateDescriptorSets(ctx->device, count, w, 0, NULL);
}

void sinew_vk_cmd_results_barrier(const sinew_vk_context* ctx, VkCommandBuffer cmd,
                                  VkPipelineStageFlags src_stage, VkAccessFlags src_access)
{
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = src_access;
    mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT |
                       VK_ACCESS_SHADER_READ_BIT;
    VkPipelineStageFlags dst = VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT |
                               VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    if (ctx->caps & SINEW_VK_CAP_GRAPHICS) {
        mb.dstAccessMask |= VK_ACCESS_VERTEX_ATTRIBUTE_READ_BIT;
        dst |= VK_PIPELINE_STAGE_VERTEX_INPUT_BIT;
    }
    vkCmdPipelineBarrier(cmd, src_stage, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

sinew_result sinew_vk_fail(const sinew_vk_context* ctx, VkResult vr, const char* what)
{
    sinew_result r = SINEW_ERROR_DEVICE;
    if (vr == VK_ERROR_OUT_OF_HOST_MEMORY) r = SINEW_ERROR_OUT_OF_MEMORY;
    else if (vr == VK_ERROR_INCOMPATIBLE_DRIVER || vr == VK_ERROR_INITIALIZATION_FAILED)
        r = SINEW_ERROR_NO_DEVICE;
    else if (vr == VK_ERROR_EXTENSION_NOT_PRESENT || vr == VK_ERROR_FEATURE_NOT_PRESENT ||
             vr == VK_ERROR_LAYER_NOT_PRESENT || vr == VK_ERROR_FORMAT_NOT_SUPPORTED)
        r = SINEW_ERROR_UNSUPPORTED;
    return sinew_host_fail(ctx ? &ctx->host : NULL, r, "vulkan: %s failed: %s", what,
                           sinew_vk_result_name(vr));
}

static VKAPI_ATTR VkBool32 VKAPI_CALL ctx_debug_callback(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user)
{
    (void)types;
    sinew_vk_context* ctx = user;
    /* Only warnings and errors count: the layer's info/verbose output is chatter. */
    if (!(severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)))
        return VK_FALSE;
    __atomic_add_fetch(&ctx->validation_messages, 1u, __ATOMIC_RELAXED);
    sinew_host_log(&ctx->host, SINEW_LOG_ERROR, "vulkan validation: %s",
                   data && data->pMessage ? data->pMessage : "(no message)");
    return VK_FALSE;
}

static int has_extension(const VkExtensionProperties* props, uint32_t count, const char* name)
{
    for (uint32_t i = 0; i < count; i++)
        if (strcmp(props[i].extensionName, name) == 0) return 1;
    return 0;
}

static int has_layer(const char* name)
{
    uint32_t count = 0;
    if (vkEnumerateInstanceLayerProperties(&count, NULL) != VK_SUCCESS || count == 0) return 0;
    VkLayerProperties* layers = calloc(count, sizeof *layers);
    if (!layers) return 0;
    int found = 0;
    if (vkEnumerateInstanceLayerProperties(&count, layers) == VK_SUCCESS)
        for (uint32_t i = 0; i < count && !found; i++)
            found = strcmp(layers[i].layerName, name) == 0;
    free(layers);
    return found;
}

static sinew_result create_instance(sinew_vk_context* ctx, uint32_t flags)
{
    int validation = (flags & SINEW_VK_CONTEXT_VALIDATION) != 0;
    if (validation && !has_layer("VK_LAYER_KHRONOS_validation"))
        return sinew_host_fail(&ctx->host, SINEW_ERROR_UNSUPPORTED,
                               "vulkan: validation requested but VK_LAYER_KHRONOS_validation "
                               "is not installed");
    const char* layers[] = {"VK_LAYER_KHRONOS_validation"};
    const char* extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "sinew";
    app.pEngineName = "sinew";
    app.apiVersion = VK_API_VERSION_1_2;
    VkDebugUtilsMessengerCreateInfoEXT messenger = {
        VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                            VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                            VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    messenger.pfnUserCallback = ctx_debug_callback;
    messenger.pUserData = ctx;
    VkInstanceCreateInfo info = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &app;
    if (validation) {
        /* Chained so that instance creation and destruction are validated as well. */
        info.pNext = &messenger;
        info.enabledLayerCount = 1;
        info.ppEnabledLayerNames = layers;
        info.enabledExtensionCount = 1;
        info.ppEnabledExtensionNames = extensions;
    }
    VkResult vr = vkCreateInstance(&info, NULL, &ctx->instance);
    if (vr != VK_SUCCESS) {
        return sinew_host_fail(&ctx->host,
                               vr == VK_ERROR_OUT_OF_HOST_MEMORY ? SINEW_ERROR_OUT_OF_MEMORY
                                                                 : SINEW_ERROR_NO_DEVICE,
                               "vulkan: vkCreateInstance (1.2) failed: %s (no Vulkan driver?)",
                               sinew_vk_result_name(vr));
    }
    ctx->owns_instance = 1;
    if (validation) {
        PFN_vkCreateDebugUtilsMessengerEXT create = (PFN_vkCreateDebugUtilsMessengerEXT)
            vkGetInstanceProcAddr(ctx->instance, "vkCreateDebugUtilsMessengerEXT");
        if (!create) return sinew_vk_fail(ctx, VK_ERROR_EXTENSION_NOT_PRESENT,
                                          "vkCreateDebugUtilsMessengerEXT lookup");
        vr = create(ctx->instance, &messenger, NULL, &ctx->messenger);
        if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkCreateDebugUtilsMessengerEXT");
    }
    return SINEW_OK;
}

/* A compute family (with graphics when asked), or UINT32_MAX. */
static uint32_t pick_family(VkPhysicalDevice pd, int need_graphics)
{
    uint32_t count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, NULL);
    if (count == 0 || count > 64) return UINT32_MAX;
    VkQueueFamilyProperties props[64];
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, props);
    for (uint32_t i = 0; i < count; i++) {
        VkQueueFlags f = props[i].queueFlags;
        if (props[i].queueCount == 0 || !(f & VK_QUEUE_COMPUTE_BIT)) continue;
        if (need_graphics && !(f & VK_QUEUE_GRAPHICS_BIT)) continue;
        return i;
    }
    return UINT32_MAX;
}

static int device_rank(VkPhysicalDeviceType type)
{
    switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
    }
}

static sinew_result pick_physical_device(sinew_vk_context* ctx, int need_graphics)
{
    uint32_t count = 0;
    VkResult vr = vkEnumeratePhysicalDevices(ctx->instance, &count, NULL);
    if (vr != VK_SUCCESS && vr != VK_INCOMPLETE)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_NO_DEVICE,
                               "vulkan: vkEnumeratePhysicalDevices failed: %s",
                               sinew_vk_result_name(vr));
    if (count == 0)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_NO_DEVICE,
                               "vulkan: no physical device (is a Vulkan driver installed?)");
    if (count > 16) count = 16;
    VkPhysicalDevice devices[16];
    vr = vkEnumeratePhysicalDevices(ctx->instance, &count, devices);
    if (vr != VK_SUCCESS && vr != VK_INCOMPLETE)
        return sinew_vk_fail(ctx, vr, "vkEnumeratePhysicalDevices");
    const char* forced = getenv("SINEW_VK_DEVICE_INDEX");
    int best = -1, best_rank = 99;
    for (uint32_t i = 0; i < count; i++) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(devices[i], &p);
        if (p.apiVersion < VK_API_VERSION_1_2) continue;
        if (pick_family(devices[i], need_graphics) == UINT32_MAX) continue;
        if (forced && *forced) {
            if ((uint32_t)atoi(forced) == i) { best = (int)i; break; }
            continue;
        }
        int rank = device_rank(p.deviceType);
        if (rank < best_rank) { best = (int)i; best_rank = rank; }
    }
    if (best < 0)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_NO_DEVICE,
                               "vulkan: none of %u devices offers Vulkan 1.2 and a compute%s "
                               "queue family%s", count, need_graphics ? "+graphics" : "",
                               forced && *forced ? " at SINEW_VK_DEVICE_INDEX" : "");
    ctx->physical_device = devices[best];
    ctx->queue_family_index = pick_family(devices[best], need_graphics);
    return SINEW_OK;
}

/* Reads properties, UUID and the caps of the (own or given) device. For an engine's device
 * the extensions cannot be queried as enabled, so the caps say what the device offers and the
 * desc documents what must have been enabled. */
static sinew_result read_caps(sinew_vk_context* ctx, const VkExtensionProperties* ext,
                              uint32_t ext_count)
{
    vkGetPhysicalDeviceProperties(ctx->physical_device, &ctx->properties);
    vkGetPhysicalDeviceMemoryProperties(ctx->physical_device, &ctx->memory);
    VkPhysicalDeviceIDProperties id = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &id;
    vkGetPhysicalDeviceProperties2(ctx->physical_device, &p2);
    memcpy(ctx->device_uuid, id.deviceUUID, VK_UUID_SIZE);

    uint32_t count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical_device, &count, NULL);
    if (ctx->queue_family_index >= count)
        return sinew_host_fail(&ctx->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "vulkan: queue_family_index %u out of range (%u families)",
                               ctx->queue_family_index, count);
    VkQueueFamilyProperties props[64];
    if (count > 64) count = 64;
    vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical_device, &count, props);
    if (!(props[ctx->queue_family_index].queueFlags & VK_QUEUE_COMPUTE_BIT))
        return sinew_host_fail(&ctx->host, SINEW_ERROR_UNSUPPORTED,
                               "vulkan: queue family %u has no compute",
                               ctx->queue_family_index);
    if (props[ctx->queue_family_index].queueFlags & VK_QUEUE_GRAPHICS_BIT)
        ctx->caps |= SINEW_VK_CAP_GRAPHICS;

    VkPhysicalDeviceVulkan12Features f12 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &f12;
    vkGetPhysicalDeviceFeatures2(ctx->physical_device, &f2);
    if (f12.timelineSemaphore) ctx->caps |= SINEW_VK_CAP_TIMELINE_SEMAPHORE;

    if (has_extension(ext, ext_count, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME))
        ctx->caps |= SINEW_VK_CAP_EXPORT_MEMORY_FD;
    if (has_extension(ext, ext_count, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME) &&
        (ctx->caps & SINEW_VK_CAP_TIMELINE_SEMAPHORE)) {
        /* lavapipe lists the extension yet cannot export a timeline semaphore: ask. */
        VkSemaphoreTypeCreateInfo type = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
        type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
        VkPhysicalDeviceExternalSemaphoreInfo q = {
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO};
        q.pNext = &type;
        q.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
        VkExternalSemaphoreProperties out = {VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES};
        vkGetPhysicalDeviceExternalSemaphoreProperties(ctx->physical_device, &q, &out);
        if (out.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT)
            ctx->caps |= SINEW_VK_CAP_EXPORT_SEMAPHORE_FD;
    }
    return SINEW_OK;
}

static sinew_result create_device(sinew_vk_context* ctx, const VkExtensionProperties* ext,
                                  uint32_t ext_count)
{
    const char* enabled[4];
    uint32_t n = 0;
    if (ctx->caps & SINEW_VK_CAP_EXPORT_MEMORY_FD) {
        enabled[n++] = VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME;
    }
    if (has_extension(ext, ext_count, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME))
        enabled[n++] = VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME;
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue.queueFamilyIndex = ctx->queue_family_index;
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    VkPhysicalDeviceVulkan12Features f12 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    f12.timelineSemaphore = (ctx->caps & SINEW_VK_CAP_TIMELINE_SEMAPHORE) ? VK_TRUE : VK_FALSE;
    VkPhysicalDeviceFeatures2 supported = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    vkGetPhysicalDeviceFeatures2(ctx->physical_device, &supported);
    VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    features.pNext = &f12;
    /* The renderer's floor grid draws lines wider than one pixel where the device can. */
    features.features.wideLines = supported.features.wideLines;
    features.features.fillModeNonSolid = supported.features.fillModeNonSolid;
    VkDeviceCreateInfo info = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    info.pNext = &features;
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue;
    info.enabledExtensionCount = n;
    info.ppEnabledExtensionNames = enabled;
    VkResult vr = vkCreateDevice(ctx->physical_device, &info, NULL, &ctx->device);
    if (vr != VK_SUCCESS) return sinew_vk_fail(ctx, vr, "vkCreateDevice");
    ctx->owns_device = 1;
    vkGetDeviceQueue(ctx->device, ctx->queue_family_index, 0, &ctx->queue);
    return SINEW_OK;
}

/* The descriptor, read into the temporary context's host as far as it goes (allocator,
 * logger, log level raised to WARNING at least): extension chain, flags, and the caller's
 * Vulkan objects all or none (and no validation flag with them). */
static sinew_result check_context_desc(const sinew_vk_context_desc* desc, sinew_vk_context* tmp)
{
    if (desc->struct_size < sizeof(sinew_vk_context_desc))
        return sinew_host_fail(&tmp->host, SINEW_ERROR_STRUCT_SIZE,
                               "sinew_vk_context_create: struct_size %u < %zu",
                               desc->struct_size, sizeof(sinew_vk_context_desc));
    if (desc->allocator) {
        if (!desc->allocator->alloc || !desc->allocator->free)
            return sinew_host_fail(&tmp->host, SINEW_ERROR_INVALID_ARGUMENT,
                                   "sinew_vk_context_create: allocator needs alloc and free");
        tmp->host.allocator = *desc->allocator;
    }
    if (desc->logger) tmp->host.logger = *desc->logger;
    if ((uint32_t)desc->log_level > (uint32_t)SINEW_LOG_DEBUG)
        return sinew_host_fail(&tmp->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_context_create: log_level %d out of range",
                               (int)desc->log_level);
    tmp->host.log_level = desc->log_level;
    if (desc->next)
        return sinew_host_fail(&tmp->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_context_create: unknown extension in next");
    if (desc->flags & ~(uint32_t)(SINEW_VK_CONTEXT_VALIDATION | SINEW_VK_CONTEXT_GRAPHICS))
        return sinew_host_fail(&tmp->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_context_create: unknown flags 0x%x", desc->flags);
    int given = desc->instance != VK_NULL_HANDLE;
    if (given != (desc->physical_device != VK_NULL_HANDLE) ||
        given != (desc->device != VK_NULL_HANDLE) || given != (desc->queue != VK_NULL_HANDLE))
        return sinew_host_fail(&tmp->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_context_create: give all of instance, "
                               "physical_device, device and queue, or none");
    if (given && (desc->flags & SINEW_VK_CONTEXT_VALIDATION))
        return sinew_host_fail(&tmp->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_context_create: SINEW_VK_CONTEXT_VALIDATION applies "
                               "to sinew's own instance only (enable the layer in yours)");
    return SINEW_OK;
}

/* The physical device's extensions (*ext, calloc'ed, the caller frees; NULL when none). */
static sinew_result device_extensions(sinew_vk_context* ctx, VkExtensionProperties** ext,
                                      uint32_t* ext_count)
{
    sinew_result r = SINEW_OK;
    *ext = NULL;
    *ext_count = 0;
    VkResult vr = vkEnumerateDeviceExtensionProperties(ctx->physical_device, NULL, ext_count,
                                                       NULL);
    if (vr == VK_SUCCESS && *ext_count) {
        *ext = calloc(*ext_count, sizeof **ext);
        if (!*ext) r = sinew_host_fail(&ctx->host, SINEW_ERROR_OUT_OF_MEMORY,
                                       "sinew_vk_context_create: out of memory");
        else vr = vkEnumerateDeviceExtensionProperties(ctx->physical_device, NULL, ext_count,
                                                       *ext);
    }
    if (r == SINEW_OK && vr != VK_SUCCESS && vr != VK_INCOMPLETE)
        r = sinew_vk_fail(ctx, vr, "vkEnumerateDeviceExtensionProperties");
    return r;
}

/* The context's Vulkan objects: the caller's, or an instance, device and queue of its own;
 * then its capabilities and a transient command pool. */
static sinew_result open_device(sinew_vk_context* ctx, const sinew_vk_context_desc* desc)
{
    const int given = desc->instance != VK_NULL_HANDLE;
    sinew_result r = SINEW_OK;
    if (given) {
        ctx->instance = desc->instance;
        ctx->physical_device = desc->physical_device;
        ctx->device = desc->device;
        ctx->queue = desc->queue;
        ctx->queue_family_index = desc->queue_family_index;
    } else {
        r = create_instance(ctx, desc->flags);
        if (r == SINEW_OK)
            r = pick_physical_device(ctx, (desc->flags & SINEW_VK_CONTEXT_GRAPHICS) != 0);
    }
    VkExtensionProperties* ext = NULL;
    uint32_t ext_count = 0;
    if (r == SINEW_OK) r = device_extensions(ctx, &ext, &ext_count);
    if (r == SINEW_OK) r = read_caps(ctx, ext, ext_count);
    if (r == SINEW_OK && !given) r = create_device(ctx, ext, ext_count);
    free(ext);
    if (r == SINEW_OK) {
        VkCommandPoolCreateInfo pool = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT |
                     VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
        pool.queueFamilyIndex = ctx->queue_family_index;
        VkResult vr = vkCreateCommandPool(ctx->device, &pool, NULL, &ctx->command_pool);
        if (vr != VK_SUCCESS) r = sinew_vk_fail(ctx, vr, "vkCreateCommandPool");
    }
    return r;
}

sinew_result sinew_vk_context_create(const sinew_vk_context_desc* desc,
                                     sinew_vk_context** out_context)
{
    if (out_context) *out_context = NULL;
    /* Logging before the context exists goes through a temporary host made from desc. */
    sinew_vk_context tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.host.struct_size = sizeof tmp.host;
    tmp.host.allocator.alloc = ctx_default_alloc;
    tmp.host.allocator.free = ctx_default_free;
    tmp.host.logger.func = ctx_default_log;
    tmp.host.log_level = SINEW_LOG_WARNING;
    tmp.host.jobs.parallel_for = ctx_inline_parallel_for;
    tmp.host.jobs.thread_count = 1;
    if (!desc || !out_context)
        return sinew_host_fail(&tmp.host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_context_create: desc and out_context are required");
    sinew_result r = check_context_desc(desc, &tmp);
    if (r != SINEW_OK) return r;
    sinew_vk_context* ctx = tmp.host.allocator.alloc(sizeof *ctx, 64, tmp.host.allocator.user);
    if (!ctx)
        return sinew_host_fail(&tmp.host, SINEW_ERROR_OUT_OF_MEMORY,
                               "sinew_vk_context_create: out of memory");
    *ctx = tmp;
    ctx->queue_lock_ready = pthread_mutex_init(&ctx->queue_lock, NULL) == 0;
    ctx->ties_lock_ready = ctx->queue_lock_ready && pthread_mutex_init(&ctx->ties_lock, NULL) == 0;
    if (!ctx->ties_lock_ready) {
        sinew_vk_context_destroy(ctx);
        return sinew_host_fail(&tmp.host, SINEW_ERROR_OUT_OF_MEMORY,
                               "sinew_vk_context_create: cannot create the context's locks");
    }
    r = open_device(ctx, desc);
    if (r != SINEW_OK) {
        sinew_vk_context_destroy(ctx);
        return r;
    }
    *out_context = ctx;
    return SINEW_OK;
}

void sinew_vk_context_destroy(sinew_vk_context* ctx)
{
    if (!ctx) return;
    /* Worlds tied to this context see their vk backends as unavailable from now on. */
    sinew_vk_context_untie(ctx);
    if (ctx->device && ctx->queue) {
        sinew_vk_context_lock_queue(ctx);
        vkQueueWaitIdle(ctx->queue);
        sinew_vk_context_unlock_queue(ctx);
    }
    if (ctx->command_pool) vkDestroyCommandPool(ctx->device, ctx->command_pool, NULL);
    if (ctx->queue_lock_ready) pthread_mutex_destroy(&ctx->queue_lock);
    if (ctx->ties_lock_ready) pthread_mutex_destroy(&ctx->ties_lock);
    if (ctx->owns_device && ctx->device) vkDestroyDevice(ctx->device, NULL);
    if (ctx->messenger) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy = (PFN_vkDestroyDebugUtilsMessengerEXT)
            vkGetInstanceProcAddr(ctx->instance, "vkDestroyDebugUtilsMessengerEXT");
        if (destroy) destroy(ctx->instance, ctx->messenger, NULL);
    }
    if (ctx->owns_instance && ctx->instance) vkDestroyInstance(ctx->instance, NULL);
    sinew_allocator a = ctx->host.allocator;
    a.free(ctx, a.user);
}

sinew_result sinew_vk_context_get_info(const sinew_vk_context* ctx, sinew_vk_context_info* out)
{
    if (!ctx || !out) {
        return sinew_host_fail(ctx ? &ctx->host : NULL, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_context_get_info: context and out_info are required");
    }
    if (out->struct_size < sizeof(sinew_vk_context_info))
        return sinew_host_fail(&ctx->host, SINEW_ERROR_STRUCT_SIZE,
                               "sinew_vk_context_get_info: struct_size %u < %zu",
                               out->struct_size, sizeof(sinew_vk_context_info));
    uint32_t size = out->struct_size;
    memset(out, 0, sizeof *out);
    out->struct_size = size;
    out->instance = ctx->instance;
    out->physical_device = ctx->physical_device;
    out->device = ctx->device;
    out->queue = ctx->queue;
    out->queue_family_index = ctx->queue_family_index;
    out->api_version = ctx->properties.apiVersion;
    out->caps = ctx->caps;
    memcpy(out->device_uuid, ctx->device_uuid, VK_UUID_SIZE);
    memcpy(out->device_name, ctx->properties.deviceName, sizeof out->device_name);
    out->validation_messages = __atomic_load_n(&ctx->validation_messages, __ATOMIC_RELAXED);
    return SINEW_OK;
}

void sinew_vk_context_lock_queue(sinew_vk_context* ctx)
{
    if (ctx && ctx->queue_lock_ready) pthread_mutex_lock(&ctx->queue_lock);
}

void sinew_vk_context_unlock_queue(sinew_vk_context* ctx)
{
    if (ctx && ctx->queue_lock_ready) pthread_mutex_unlock(&ctx->queue_lock);
}

sinew_result sinew_vk_context_submit_wait(sinew_vk_context* ctx,
                                          void (*record)(VkCommandBuffer cmd, void* user),
                                          void* user)
{
    if (!ctx || !record)
        return sinew_host_fail(ctx ? &ctx->host : NULL, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_vk_context_submit_wait: context and record are required");
    VkCommandBufferAllocateInfo alloc = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = ctx->command_pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    sinew_vk_context_lock_queue(ctx);
    VkResult vr = vkAllocateCommandBuffers(ctx->device, &alloc, &cmd);
    if (vr != VK_SUCCESS) {
        sinew_vk_context_unlock_queue(ctx);
        return sinew_vk_fail(ctx, vr, "vkAllocateCommandBuffers");
    }
    VkFence fence = VK_NULL_HANDLE;
    VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    sinew_result r = SINEW_OK;
    vr = vkBeginCommandBuffer(cmd, &begin);
    if (vr != VK_SUCCESS) r = sinew_vk_fail(ctx, vr, "vkBeginCommandBuffer");
    if (r == SINEW_OK) {
        record(cmd, user);
        vr = vkEndCommandBuffer(cmd);
        if (vr != VK_SUCCESS) r = sinew_vk_fail(ctx, vr, "vkEndCommandBuffer");
    }
    if (r == SINEW_OK) {
        VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        vr = vkCreateFence(ctx->device, &fi, NULL, &fence);
        if (vr != VK_SUCCESS) r = sinew_vk_fail(ctx, vr, "vkCreateFence");
    }
    if (r == SINEW_OK) {
        VkSubmitInfo submit = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
        submit.commandBufferCount = 1;
        submit.pCommandBuffers = &cmd;
        vr = vkQueueSubmit(ctx->queue, 1, &submit, fence);
        if (vr != VK_SUCCESS) r = sinew_vk_fail(ctx, vr, "vkQueueSubmit");
    }
    sinew_vk_context_unlock_queue(ctx);
    if (r == SINEW_OK) {
        vr = vkWaitForFences(ctx->device, 1, &fence, VK_TRUE, UINT64_MAX);
        if (vr != VK_SUCCESS) r = sinew_vk_fail(ctx, vr, "vkWaitForFences");
    }
    if (fence) vkDestroyFence(ctx->device, fence, NULL);
    sinew_vk_context_lock_queue(ctx);
    vkFreeCommandBuffers(ctx->device, ctx->command_pool, 1, &cmd);
    sinew_vk_context_unlock_queue(ctx);
    return r;
}

int32_t sinew_vk_context_find_memory_type(const sinew_vk_context* ctx, uint32_t type_bits,
                                          VkMemoryPropertyFlags required)
{
    if (!ctx) return -1;
    for (uint32_t i = 0; i < ctx->memory.memoryTypeCount && i < 32; i++)
        if ((type_bits & (1u << i)) &&
            (ctx->memory.memoryTypes[i].propertyFlags & required) == required)
            return (int32_t)i;
    return -1;
}
