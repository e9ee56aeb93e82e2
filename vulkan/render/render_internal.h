/* Internals of the headless renderer: the camera and floor that frame a scene, computed on the
 * host. SPDX-License-Identifier: MIT */
#ifndef SINEW_RENDER_INTERNAL_H
#define SINEW_RENDER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* A SPIR-V module embedded at build time (render_shaders.c). */
typedef struct render_spirv {
    const uint32_t* code;
    size_t size;            /* bytes */
} render_spirv;

extern const render_spirv render_shader_mesh_vert, render_shader_mesh_frag;
extern const render_spirv render_shader_floor_vert, render_shader_floor_frag;

/* The per-frame uniform block (std140), mirrored by shaders/frame.glsl. */
typedef struct render_frame_ubo {
    float view_proj[16];    /* column-major, Vulkan clip space (y down, depth 0..1) */
    float camera_pos[4];
    float light0[4];        /* unit direction towards the light, intensity */
    float light1[4];
    float floor_center[4];  /* w: grid spacing */
    float floor_u[4];
    float floor_v[4];
    float background[4];
} render_frame_ubo;

/* Fills the uniform block for a scene box (min xyz, max xyz) seen in a viewport of `aspect`
 * (width / height); up and view_direction as in sinew_render_frame (zero: defaults). */
void render_scene_setup(const float bounds[6], const float up[3], const float view_direction[3],
                        float aspect, render_frame_ubo* out);

/* Grows box (min xyz, max xyz) by the first `count` xyz elements at `stride` bytes. */
void render_bounds_add(float box[6], const float* xyz, uint32_t count, size_t stride);

/* Area-weighted vertex normals (packed xyz into out, vertex_count * 3 floats). */
void render_compute_normals(const float* positions, size_t stride, uint32_t vertex_count,
                            const uint32_t* indices, uint32_t triangle_count, float* out);

/* The grid line spacing for a box diagonal: 1, 2 or 5 times a power of ten, near diagonal/8. */
float render_grid_spacing(float diagonal);

#endif
