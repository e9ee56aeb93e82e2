#version 450
// Grid lines one pixel wide whatever the distance (the screen-space derivative of the grid
// coordinate sets the line width), fading out towards the floor's edge.
// SPDX-License-Identifier: MIT
#extension GL_GOOGLE_include_directive : require
#include "frame.glsl"

layout(location = 0) in vec2 in_plane;
layout(location = 0) out vec4 out_color;

void main()
{
    vec2 grid = in_plane * vec2(length(frame.floor_u.xyz), length(frame.floor_v.xyz)) /
                frame.floor_center.w;
    vec2 width = max(fwidth(grid), vec2(1e-6));
    vec2 distance_to_line = abs(fract(grid - 0.5) - 0.5) / width;
    float line = 1.0 - min(min(distance_to_line.x, distance_to_line.y), 1.0);
    float fade = 1.0 - smoothstep(0.6, 1.0, max(abs(in_plane.x), abs(in_plane.y)));
    vec3 floor_color = vec3(0.085, 0.09, 0.10);
    vec3 line_color = vec3(0.30, 0.32, 0.36);
    vec3 linear = mix(floor_color, line_color, line * 0.8);
    linear = mix(frame.background.rgb, linear, fade);
    out_color = vec4(pow(clamp(linear, 0.0, 1.0), vec3(1.0 / 2.2)), 1.0);
}
