#version 450
// One colour of the Gauss-Seidel sweep (Sec. 4): its stretch constraints (Sec. 3.1.1), then
// its volume constraints (Sec. 3.1.2 as 6 V - 6 V0), then its bending constraints (the signed
// dihedral angle of two skin triangles, pbd_dihedral), one thread each. No two constraints of
// a colour share a particle, so every thread writes its own particles. The projections are the
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

precise float dot3(vec3 a, vec3 b)
{
    precise float r = a.x * b.x + a.y * b.y + a.z * b.z;
    return r;
}

const float PBD_PI = 3.14159265358979;
const float PBD_BEND_LET_GO = 0.75 * PBD_PI;

// pbd_bending_fade: the short way round, faded out towards PBD_BEND_LET_GO; false past it.
bool bending_fade(inout float C)
{
    precise float c = C;
    if (c > PBD_PI) c = c - 2.0 * PBD_PI;
    else if (c < -PBD_PI) c = c + 2.0 * PBD_PI;
    precise float turn = abs(c);
    if (!(turn < PBD_BEND_LET_GO)) return false;
    precise float fade = (PBD_BEND_LET_GO - turn) / (0.5 * PBD_BEND_LET_GO);
    precise float faded = fade * c;
    C = fade < 1.0 ? faded : c;
    return true;
}

// pbd_project_bending with the angle and gradients of pbd_dihedral (i: in the four-particle
// arrays, after the volume constraints).
void bending(uint i)
{
    uvec4 p = v_idx[i];
    vec4 wk = v_w[i];
    vec2 par = v_par[i]; // rest angle, alpha~
    uint q[4] = uint[4](p.x, p.y, p.z, p.w);
    float wq[4] = float[4](wk.x, wk.y, wk.z, wk.w);
    precise vec3 e, a, b;
    for (uint c = 0u; c < 3u; ++c) {
        precise float o = px(c, q[0]);
        e[c] = px(c, q[1]) - o;
        a[c] = px(c, q[2]) - o;
        b[c] = px(c, q[3]) - o;
    }
    precise vec3 na = cross3(e, a);
    precise vec3 nb = cross3(b, e);
    precise vec3 m = cross3(na, nb);
    precise float e2 = dot3(e, e);
    precise float len = sqrt(e2);
    precise float phi = PBD_PI - atan(dot3(m, e), len * dot3(na, nb));
    precise float a2 = dot3(na, na);
    precise float b2 = dot3(nb, nb);
    if (!(a2 > 0.0 && b2 > 0.0 && e2 > 0.0)) return; // a degenerate pair: no gradient
    precise float C = phi - par.x;
    if (!bending_fade(C)) return;
    precise float fa = len / a2;
    precise float fb = len / b2;
    precise float sa = dot3(a, e) / e2;
    precise float sb = dot3(b, e) / e2;
    precise vec3 g[4];
    for (uint c = 0u; c < 3u; ++c) {
        g[2][c] = fa * na[c];
        g[3][c] = fb * nb[c];
        g[1][c] = -(sa * g[2][c] + sb * g[3][c]);
        g[0][c] = -(g[1][c] + g[2][c] + g[3][c]);
    }
    precise float denom = 0.0;
    for (uint k = 0u; k < 4u; ++k) denom += wq[k] * dot3(g[k], g[k]);
    if (!(denom > 0.0)) return;
    precise float dl;
    uint li = pc.lambda_v + i;
    if ((pc.flags & PBD_XPBD) != 0u) {
        dl = (-C - par.y * lambda[li]) / (denom + par.y);
        precise float l = lambda[li] + dl;
        lambda[li] = l;
    } else {
        dl = -pc.k_b * C / denom;
    }
    for (uint k = 0u; k < 4u; ++k) {
        precise float f = wq[k] * dl;
        for (uint c = 0u; c < 3u; ++c) {
            precise float mv = f * g[k][c];
            add(c, q[k], mv);
        }
    }
}

void main()
{
    uint t = gl_GlobalInvocationID.x;
    uint sv = pc.count_s + pc.count_v;
    if (t < pc.count_s) stretch(pc.first_s + t);
    else if (t < sv) volume(pc.first_v + t - pc.count_s);
    else if (t < sv + pc.count_b) bending(pc.first_b + t - sv);
}
