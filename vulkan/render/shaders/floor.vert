#version 450
// The floor: one quad (two triangles) across the up axis, built from the frame block.
// SPDX-License-Identifier: MIT
#extension GL_GOOGLE_include_directive : require
#include "frame.glsl"

layout(location = 0) out vec2 out_plane; // position on the floor in units of its half extent

void main()
{
    const vec2 corners[6] = vec2[6](vec2(-1, -1), vec2(1, -1), vec2(1, 1),
                                    vec2(-1, -1), vec2(1, 1), vec2(-1, 1));
    vec2 c = corners[gl_VertexIndex];
    out_plane = c;
    vec3 world = frame.floor_center.xyz + c.x * frame.floor_u.xyz + c.y * frame.floor_v.xyz;
    gl_Position = frame.view_proj * vec4(world, 1.0);
}
