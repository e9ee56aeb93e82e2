#version 450
// Two directional lights (key and fill, fixed to the camera) over an ambient term, lit from
// both sides because imported meshes are not always consistently oriented; shaded in linear
// RGB and written with a 1/2.2 gamma to the UNORM target. SPDX-License-Identifier: MIT
#extension GL_GOOGLE_include_directive : require
#include "frame.glsl"

layout(push_constant) uniform Mesh {
    vec4 color;
    uvec4 layout_;
    uvec4 colors_;
} mesh;

layout(location = 0) in vec3 in_world;
layout(location = 1) in vec3 in_normal;
layout(location = 2) in vec3 in_color;
layout(location = 0) out vec4 out_color;

void main()
{
    vec3 n = in_normal;
    float len = length(n);
    vec3 to_eye = normalize(frame.camera_pos.xyz - in_world);
    n = len > 1e-20 ? n / len : to_eye;
    if (dot(n, to_eye) < 0.0) n = -n;
    float key = max(dot(n, frame.light0.xyz), 0.0) * frame.light0.w;
    float fill = max(dot(n, frame.light1.xyz), 0.0) * frame.light1.w;
    vec3 h = normalize(frame.light0.xyz + to_eye);
    float spec = pow(max(dot(n, h), 0.0), 32.0) * 0.15 * frame.light0.w;
    // Without vertex colours the base colour is read as it always was (not interpolated).
    vec3 base = mesh.colors_.z != 0u ? clamp(in_color, 0.0, 1.0) : mesh.color.rgb;
    vec3 linear = base * (0.18 + key + fill) + vec3(spec);
    out_color = vec4(pow(clamp(linear, 0.0, 1.0), vec3(1.0 / 2.2)), 1.0);
}
