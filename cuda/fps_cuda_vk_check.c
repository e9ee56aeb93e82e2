/* Compile-time check: fps_cuda_vk.h's declarations match sinew_vulkan.h (same sizes and
 * offsets), built wherever the Vulkan module is. SPDX-License-Identifier: MIT */
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
SAME(fpsc_vk_memory_export, sinew_vk_memory_export, dedicated);
SAME(fpsc_vk_memory_export, sinew_vk_memory_export, buffer_size);
SAME(fpsc_vk_memory_export, sinew_vk_memory_export, position_offsets);
SAME(fpsc_vk_memory_export, sinew_vk_memory_export, device_uuid);

/* The functions fps_cuda.c looks up by name (dlsym) have the shapes it calls them with (a
 * mismatch is an incompatible-pointer diagnostic here). */
static sinew_result (*const check_export_memory)(const sinew_vk_output*, sinew_vk_memory_export*) =
    sinew_vk_output_export_memory;
static sinew_result (*const check_export_semaphores)(const sinew_vk_output*, int*, int*) =
    sinew_vk_output_export_semaphores;
static sinew_result (*const check_set_writer)(sinew_vk_output*, int) =
    sinew_vk_output_set_external_writer;
static sinew_result (*const check_external_frame)(sinew_vk_output*, uint64_t*, uint64_t*) =
    sinew_vk_output_external_frame;

/* An object file needs something in it. */
int sinew_fps_cuda_vk_check_passed(void);
int sinew_fps_cuda_vk_check_passed(void)
{
    return check_export_memory && check_export_semaphores && check_set_writer &&
           check_external_frame;
}
