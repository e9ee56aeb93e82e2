/* Compile-time check: fps_cuda_vk.h's declarations match sinew_vulkan.h (same sizes and
 * offsets), and the Vulkan service table of sinew_plugin.h, through which the plugin calls the
 * module, has the shapes of the module's functions; built wherever the Vulkan module is.
 * SPDX-License-Identifier: MIT */
#include <stddef.h>

#include <sinew/sinew_vulkan.h>

#include "fps_cuda_vk.h"

#define SAME(a, b, f) _Static_assert(offsetof(a, f) == offsetof(b, f), #f " moved")
_Static_assert(sizeof(fpsc_vk_output_ext) == sizeof(sinew_vk_output_ext), "ext size");
SAME(fpsc_vk_output_ext, sinew_vk_output_ext, output);
SAME(fpsc_vk_output_ext, sinew_vk_output_ext, slot);
SAME(fpsc_vk_output_ext, sinew_vk_output_ext, buffer);
SAME(fpsc_vk_output_ext, sinew_vk_output_ext, position_offset);
SAME(fpsc_vk_output_ext, sinew_vk_output_ext, normal_offset);
_Static_assert(sizeof(fpsc_vk_memory_export) == sizeof(sinew_vk_memory_export), "export size");
SAME(fpsc_vk_memory_export, sinew_vk_memory_export, fd);
SAME(fpsc_vk_memory_export, sinew_vk_memory_export, allocation_size);
SAME(fpsc_vk_memory_export, sinew_vk_memory_export, memory_type_index);
SAME(fpsc_vk_memory_export, sinew_vk_memory_export, dedicated);
SAME(fpsc_vk_memory_export, sinew_vk_memory_export, buffer_size);
SAME(fpsc_vk_memory_export, sinew_vk_memory_export, vertex_capacity);
SAME(fpsc_vk_memory_export, sinew_vk_memory_export, slot_count);
SAME(fpsc_vk_memory_export, sinew_vk_memory_export, position_offsets);
SAME(fpsc_vk_memory_export, sinew_vk_memory_export, normal_offsets);
SAME(fpsc_vk_memory_export, sinew_vk_memory_export, device_uuid);

/* Each field of sinew_vk_service has exactly the type of a pointer to the function of
 * sinew_vulkan.h it stands for: a _Generic selection on the function's address, so a mismatch is
 * an error here, not a warning. */
#define SHAPE(field, fn)                                                                    \
    _Static_assert(_Generic(&fn, __typeof__(((sinew_vk_service*)0)->field): 1, default: 0), \
                   #fn " does not have the shape of sinew_vk_service." #field)
SHAPE(output_export_memory, sinew_vk_output_export_memory);
SHAPE(output_export_semaphores, sinew_vk_output_export_semaphores);
SHAPE(output_set_external_writer, sinew_vk_output_set_external_writer);
SHAPE(output_external_frame, sinew_vk_output_external_frame);
_Static_assert(_Generic(((sinew_vk_service*)0)->context,
                        sinew_vk_context* (*)(const sinew_vk_service*): 1, default: 0),
               "sinew_vk_service.context does not return a sinew_vk_context");

/* An object file needs something in it. */
int sinew_fps_cuda_vk_check_passed(void);
int sinew_fps_cuda_vk_check_passed(void)
{
    return 1;
}
