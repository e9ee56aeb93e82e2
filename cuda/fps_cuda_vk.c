/* The fps-cuda plugin's way to the Vulkan module: the world's Vulkan service, which the module
 * provides when it ties the world to a context or binds one of its outputs to a skin of the
 * world. Found through the backend's host api, so it works however the plugin and the module
 * were loaded (RTLD_LOCAL included), and part of the plugin's host half, so that a CPU test
 * checks it with a service table of its own. SPDX-License-Identifier: MIT */
#include <string.h>

#include <sinew/sinew_host.h>

#include "fps_cuda_vk.h"

const char* fpsc_vk_find(const sinew_host_api* host, const sinew_vk_service** out)
{
    *out = NULL;
    const void* table = NULL;
    if (!sinew_host_has_services(host)) return "the host has no services (ABI version 3)";
    if (sinew_host_get_service(host, SINEW_SERVICE_VULKAN, SINEW_VK_SERVICE_VERSION, &table) !=
        SINEW_OK)
        return "the world has no Vulkan service (sinew_vk_output_bind or "
               "sinew_vk_register_backends provides it)";
    const sinew_vk_service* vk = (const sinew_vk_service*)table;
    if (vk->header.struct_size < sizeof *vk || !vk->output_export_memory ||
        !vk->output_export_semaphores || !vk->output_set_external_writer ||
        !vk->output_external_frame)
        return "the world's Vulkan service lacks the output functions";
    *out = vk;
    return NULL;
}

sinew_result fpsc_vk_export_memory(const sinew_vk_service* vk, const struct sinew_vk_output* output,
                                   fpsc_vk_memory_export* ex)
{
    memset(ex, 0, sizeof *ex);
    ex->struct_size = (uint32_t)sizeof *ex;
    ex->fd = -1;
    /* The same layout as sinew_vk_memory_export (fps_cuda_vk_check.c). */
    return vk->output_export_memory(output, (struct sinew_vk_memory_export*)ex);
}
