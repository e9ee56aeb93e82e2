#version 450
// Prediction (Sec. 3; Mueller et al. 2006, Alg. 1): each moving particle x + h v (no external
// force acts on the tissue), each particle of zero inverse mass on its target (uploaded by the
// host for this step); the previous positions kept for the velocity update.
// SPDX-License-Identifier: MIT
#extension GL_GOOGLE_include_directive : require
#include "pbd_common.glsl"

void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.N) return;
    for (uint c = 0u; c < 3u; ++c) {
        uint e = c * pc.N + i;
        precise float moved = x[e] + pc.h * v[e];
        xp[e] = x[e];
        x[e] = w[i] > 0.0 ? moved : target[pc.target_at + e];
    }
}
