#version 450
// The velocity update v = lambda (x - x_prev) / h (the damping of ps and fps), and a flag in
// `status` when a position or velocity is not finite. SPDX-License-Identifier: MIT
#extension GL_GOOGLE_include_directive : require
#include "pbd_common.glsl"

void main()
{
    uint e = gl_GlobalInvocationID.x;
    if (e >= 3u * pc.N) return;
    precise float value = pc.vel * (x[e] - xp[e]);
    v[e] = value;
    if (isnan(value) || isinf(value) || isnan(x[e]) || isinf(x[e])) status[0] = 1u;
}
