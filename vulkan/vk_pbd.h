/* Internals of the compute backend vk-pbd (vk_pbd.c, the instance; vk_pbd_device.c, the
 * device's state and the recording of its steps): pbd's solver (backends/pbd) in compute
 * shaders (shaders/pbd_*.comp). SPDX-License-Identifier: MIT */
#ifndef SINEW_VK_PBD_H
#define SINEW_VK_PBD_H

#include "pbd_internal.h"
#include "vk_internal.h"

/* Where an upsampling writes the render mesh: a buffer with the byte offsets of its positions
 * and normals (3 floats per render vertex each). */
typedef struct vk_pbd_target {
    VkBuffer buffer;
    VkDeviceSize pos, nrm;
} vk_pbd_target;

typedef struct vk_pbd_device vk_pbd_device;

/* The device's copy of pbd's simulation `sim` on model m (its constraints as coloured, its
 * particles at rest, its contacts and upsampling records), the compute pipelines and room for
 * `ring` steps' targets per submission. One line and a specific code on failure. */
sinew_result vk_pbd_device_create(sinew_vk_context* ctx, const sinew_host_api* host,
                                  const ps_model* m, pbd_sim* sim, const pbd_params* p,
                                  uint32_t ring, vk_pbd_device** out);
void vk_pbd_device_destroy(vk_pbd_device* d);
/* Waits for the latest submission; a step in it that left a non-finite value (undone on the
 * device, as pbd undoes it) is SINEW_ERROR_BACKEND_FAILED with one line. */
sinew_result vk_pbd_device_wait(vk_pbd_device* d);
/* Starts recording a submission whose upsampling (if any) writes `target` (NULL: the one of
 * the submission before). */
sinew_result vk_pbd_device_begin(vk_pbd_device* d, const vk_pbd_target* target);
/* The device's own buffer of the render mesh, which the host reads back. */
vk_pbd_target vk_pbd_device_own_target(const vk_pbd_device* d);
/* Records one step at the pose of pbd_sim_set_pose: the targets and contact planes computed
 * on the host (pbd_sim_targets) and uploaded, then prediction, `iterations` sweeps over the
 * colours with the contacts after each, the velocity update. A full ring submits and waits. */
sinew_result vk_pbd_device_step(vk_pbd_device* d);
/* Records: the velocities cleared (after a restart's step); the skin kept as the blend's
 * start (interpolate_output, before the last step of an update). */
void vk_pbd_device_clear_velocities(vk_pbd_device* d);
void vk_pbd_device_keep_skin(vk_pbd_device* d);
/* Records the upsampling into the begun target, blending the kept skin towards the current
 * one by `fraction` when `blend` (2018 Sec. 6, shaders/pbd_normals.comp, pbd_upsample.comp). */
void vk_pbd_device_upsample(vk_pbd_device* d, bool blend, float fraction);
/* Ends and submits what was recorded; wait_output/wait_read: a read release to wait for on
 * the device before writing (0: none). Does not wait. */
sinew_result vk_pbd_device_submit(vk_pbd_device* d, sinew_vk_output* wait_output,
                                  uint64_t wait_read);
/* The render mesh into host arrays (either may be NULL) at byte strides: an upsampling into
 * the device's own buffer, waited for and copied. */
sinew_result vk_pbd_device_read_render(vk_pbd_device* d, bool blend, float fraction,
                                       float* positions, size_t position_stride,
                                       float* normals, size_t normal_stride);
/* The particles' positions and velocities (3N each, columns of N; either may be NULL). */
sinew_result vk_pbd_device_read_state(vk_pbd_device* d, float* x, float* v);
/* Skin positions and velocities (3 floats per skin vertex; velocities NULL: zero). */
sinew_result vk_pbd_device_set_skin(vk_pbd_device* d, const float* positions,
                                    const float* velocities);

#endif
