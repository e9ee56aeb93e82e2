#version 450
// One colour of the Gauss-Seidel sweep (Sec. 4): its stretch constraints (Sec. 3.1.1), then
// its volume constraints (Sec. 3.1.2 as 6 V - 6 V0), one thread each. No two constraints of a
// colour share a particle, so every thread writes its own particles. The projections are the
// CPU's (backends/pbd/pbd_kernels.h) operation by operation, with NOTES.md's corrected
// formulas and XPBD's multipliers (Macklin et al. 2016, eq. 18). SPDX-License-Identifier: MIT
#extension GL_GOOGLE_include_directive : require
#include "pbd_common.glsl"

void add(uint c, uint i, float value)
{
    precise float r = x[c * pc.N + i] + value;
    x[c * pc.N + i] = r;
}

void stretch(uint i)
{
    uint a = s_idx[i].x, b = s_idx[i].y;
    vec4 par = s_par[i]; // wa, wb, rest length, alpha~
    precise float d[3];
    for (uint c = 0u; c < 3u; ++c) d[c] = px(c, a) - px(c, b);
    precise float len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (!(len > 0.0)) return; // no direction: nothing to project
    precise float C = len - par.z;
    precise float f;
    if ((pc.flags & PBD_XPBD) != 0u) {
        f = (-C - par.w * lambda[i]) / ((par.x + par.y + par.w) * len);
        precise float l = lambda[i] + f * len;
        lambda[i] = l;
    } else {
        f = -pc.k_s * C / ((par.x + par.y) * len);
    }
    for (uint c = 0u; c < 3u; ++c) {
        precise float da = par.x * f * d[c];
        precise float db = par.y * f * d[c];
        add(c, a, da);
        add(c, b, -db);
    }
}

precise vec3 cross3(vec3 a, vec3 b)
{
    precise vec3 r;
    r.x = a.y * b.z - a.z * b.y;
    r.y = a.z * b.x - a.x * b.z;
    r.z = a.x * b.y - a.y * b.x;
    return r;
}

void volume(uint i)
{
    uvec4 p = v_idx[i];
    vec4 wk = v_w[i];
    vec2 par = v_par[i]; // 6 V0, alpha~
    uint q[4] = uint[4](p.x, p.y, p.z, p.w);
    float wq[4] = float[4](wk.x, wk.y, wk.z, wk.w);
    precise vec3 e[3];
    for (uint k = 0u; k < 3u; ++k)
        for (uint c = 0u; c < 3u; ++c) e[k][c] = px(c, q[k + 1u]) - px(c, q[0]);
    precise vec3 g[4];
    g[3] = cross3(e[0], e[1]);
    precise float vol = g[3].x * e[2].x + g[3].y * e[2].y + g[3].z * e[2].z;
    g[1] = cross3(e[1], e[2]);
    g[2] = cross3(e[2], e[0]);
    for (uint c = 0u; c < 3u; ++c) g[0][c] = -(g[1][c] + g[2][c] + g[3][c]);
    precise float C = vol - par.x;
    precise float denom = 0.0;
    for (uint k = 0u; k < 4u; ++k)
        denom += wq[k] * (g[k].x * g[k].x + g[k].y * g[k].y + g[k].z * g[k].z);
    if (!(denom > 0.0)) return; // collapsed to a point or a line: no gradient
    precise float dl;
    uint li = pc.lambda_v + i;
    if ((pc.flags & PBD_XPBD) != 0u) {
        dl = (-C - par.y * lambda[li]) / (denom + par.y);
        precise float l = lambda[li] + dl;
        lambda[li] = l;
    } else {
        dl = -pc.k_v * C / denom;
    }
    for (uint k = 0u; k < 4u; ++k) {
        precise float f = wq[k] * dl;
        for (uint c = 0u; c < 3u; ++c) {
            precise float m = f * g[k][c];
            add(c, q[k], m);
        }
    }
}

void main()
{
    uint t = gl_GlobalInvocationID.x;
    if (t < pc.count_s) stretch(pc.first_s + t);
    else if (t < pc.count_s + pc.count_v) volume(pc.first_v + t - pc.count_s);
}
