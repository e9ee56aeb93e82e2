// The per-frame uniform block shared by the renderer's shaders (std140; mirrored by
// render_frame_ubo in render.c). SPDX-License-Identifier: MIT
layout(set = 0, binding = 0, std140) uniform Frame {
    mat4 view_proj;
    vec4 camera_pos;    // xyz
    vec4 light0;        // xyz: unit direction towards the key light, w: intensity
    vec4 light1;        // the fill light
    vec4 floor_center;  // xyz, w: grid line spacing
    vec4 floor_u;       // half extent along the first floor axis
    vec4 floor_v;       // half extent along the second floor axis
    vec4 background;    // rgb, linear
} frame;
