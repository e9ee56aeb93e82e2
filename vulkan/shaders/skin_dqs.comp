// vk-dqs: dual quaternion skinning of one vertex per invocation, the same arithmetic as the
// CPU dqs backend (backends/dqs/dqs_scalar.c; Kavan et al. 2008, Sec. 3-4): blend the unit
// dual quaternions with each one flipped into the hemisphere of the first (antipodality),
// normalise by the real part's length, rotate and translate the rest position, rotate the
// rest normal.
// SPDX-License-Identifier: MIT
#version 450
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer Rest { vec4 rest[]; };
layout(std430, set = 0, binding = 1) readonly buffer Joints { uint joints[]; };
layout(std430, set = 0, binding = 2) readonly buffer Weights { float weights[]; };
// Per joint: real part (x y z w) then dual part (x y z w), as backends/common/dual_quat.h.
layout(std430, set = 0, binding = 3) readonly buffer Transforms { vec4 dq[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Positions { float out_positions[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Normals { float out_normals[]; };

layout(push_constant) uniform Params {
    uint vertex_count;
    uint width;
    uint flags;   // 1: write positions, 2: write normals
} params;

// x rotated by the unit quaternion r: x + 2 r_v x (r_v x x + r_w x).
vec3 rotate(vec4 r, vec3 x)
{
    return x + 2.0 * cross(r.xyz, cross(r.xyz, x) + r.w * x);
}

void main()
{
    uint v = gl_GlobalInvocationID.x;
    if (v >= params.vertex_count) return;
    uint base = v * params.width;
    uint j0 = joints[base];
    vec4 q0 = dq[2u * j0];
    vec4 br = weights[base] * q0;
    vec4 be = weights[base] * dq[2u * j0 + 1u];
    for (uint k = 1u; k < params.width; ++k) {
        uint j = joints[base + k];
        vec4 qr = dq[2u * j];
        float w = dot(qr, q0) < 0.0 ? -weights[base + k] : weights[base + k];
        br += w * qr;
        be += w * dq[2u * j + 1u];
    }
    // |br| >= the first weight > 0: every term's real part points into q0's hemisphere.
    float inv = 1.0 / sqrt(dot(br, br));
    vec4 r = br * inv;
    vec4 e = be * inv;
    if ((params.flags & 1u) != 0u) {
        vec3 t = 2.0 * (cross(r.xyz, e.xyz) + r.w * e.xyz - e.w * r.xyz);
        vec3 p = rotate(r, rest[2u * v].xyz) + t;
        out_positions[3u * v + 0u] = p.x;
        out_positions[3u * v + 1u] = p.y;
        out_positions[3u * v + 2u] = p.z;
    }
    if ((params.flags & 2u) != 0u) {
        vec3 n = rotate(r, rest[2u * v + 1u].xyz);
        float len2 = dot(n, n);
        n = len2 > 1e-30 ? n / sqrt(len2) : vec3(0.0);
        out_normals[3u * v + 0u] = n.x;
        out_normals[3u * v + 1u] = n.y;
        out_normals[3u * v + 2u] = n.z;
    }
}
