#version 450
// After the velocity update: once a step has left a non-finite value (`status`), the shape
// before the step is kept and the velocities cleared, as the CPU's pbd does.
// SPDX-License-Identifier: MIT
#extension GL_GOOGLE_include_directive : require
#include "pbd_common.glsl"

void main()
{
    uint e = gl_GlobalInvocationID.x;
    if (e >= 3u * pc.N || status[0] == 0u) return;
    x[e] = xp[e];
    v[e] = 0.0;
}
