#version 450
// Skinned mesh: vertices pulled from storage buffers with an offset and stride in floats, so
// host uploads and a backend's interleaved or packed device buffers are drawn alike; optional
// per-vertex colours come the same way.
// SPDX-License-Identifier: MIT
#extension GL_GOOGLE_include_directive : require
#include "frame.glsl"

layout(set = 0, binding = 1, std430) readonly buffer Positions { float p[]; } positions;
layout(set = 0, binding = 2, std430) readonly buffer Normals { float n[]; } normals;
layout(set = 0, binding = 3, std430) readonly buffer Colors { float c[]; } colors;

layout(push_constant) uniform Mesh {
    vec4 color;
    uvec4 layout_; // position offset, position stride, normal offset, normal stride (floats)
    uvec4 colors_; // vertex colour offset, stride (floats), 1 when the mesh has them
} mesh;

layout(location = 0) out vec3 out_world;
layout(location = 1) out vec3 out_normal;
layout(location = 2) out vec3 out_color; // the vertex colour (or the base colour)

void main()
{
    uint v = uint(gl_VertexIndex);
    uint pi = mesh.layout_.x + v * mesh.layout_.y;
    uint ni = mesh.layout_.z + v * mesh.layout_.w;
    vec3 world = vec3(positions.p[pi], positions.p[pi + 1u], positions.p[pi + 2u]);
    out_world = world;
    out_normal = vec3(normals.n[ni], normals.n[ni + 1u], normals.n[ni + 2u]);
    uint ci = mesh.colors_.x + v * mesh.colors_.y;
    out_color = mesh.colors_.z != 0u
        ? vec3(colors.c[ci], colors.c[ci + 1u], colors.c[ci + 2u]) : mesh.color.rgb;
    gl_Position = frame.view_proj * vec4(world, 1.0);
}
