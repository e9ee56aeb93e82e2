// vk-lbs: linear blend skinning of one vertex per invocation, the same arithmetic as the CPU
// lbs backend (backends/lbs/lbs_scalar.c): blend the skinning matrices by the padded weights,
// transform the rest position, transform the rest normal by the blended 3x3 and renormalise.
// SPDX-License-Identifier: MIT
#version 450
layout(local_size_x = 64) in;

// Per vertex: rest position (w = 1) then rest normal (w = 0).
layout(std430, set = 0, binding = 0) readonly buffer Rest { vec4 rest[]; };
layout(std430, set = 0, binding = 1) readonly buffer Joints { uint joints[]; };
layout(std430, set = 0, binding = 2) readonly buffer Weights { float weights[]; };
// Skinning matrices, column-major like the runtime's.
layout(std430, set = 0, binding = 3) readonly buffer Transforms { mat4 skinning[]; };
// Packed xyz floats: std430 would pad a vec3 array to 16 bytes, the output is 12 per vertex.
layout(std430, set = 0, binding = 4) writeonly buffer Positions { float out_positions[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Normals { float out_normals[]; };

layout(push_constant) uniform Params {
    uint vertex_count;
    uint width;   // influences per vertex (padded)
    uint flags;   // 1: write positions, 2: write normals
} params;

void main()
{
    uint v = gl_GlobalInvocationID.x;
    if (v >= params.vertex_count) return;
    uint base = v * params.width;
    mat4 m = weights[base] * skinning[joints[base]];
    for (uint k = 1u; k < params.width; ++k) m += weights[base + k] * skinning[joints[base + k]];
    if ((params.flags & 1u) != 0u) {
        vec3 p = (m * vec4(rest[2u * v].xyz, 1.0)).xyz;
        out_positions[3u * v + 0u] = p.x;
        out_positions[3u * v + 1u] = p.y;
        out_positions[3u * v + 2u] = p.z;
    }
    if ((params.flags & 2u) != 0u) {
        vec3 n = mat3(m) * rest[2u * v + 1u].xyz;
        float len2 = dot(n, n);
        // A normal that blends to (nearly) zero is written as zero, as on the CPU.
        n = len2 > 1e-30 ? n / sqrt(len2) : vec3(0.0);
        out_normals[3u * v + 0u] = n.x;
        out_normals[3u * v + 1u] = n.y;
        out_normals[3u * v + 2u] = n.z;
    }
}
