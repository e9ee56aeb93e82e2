#version 450
// The render mesh as a normal displacement of the simulated skin (2018 Sec. 6,
// ps_upsample_vertex): each render vertex is its record's point of a skin triangle plus its
// offset in the surface frame there (ps_surface_frame), or rigid with its skin vertex's bone
// where no triangle holds it; positions and normals go straight into the output buffer.
// SPDX-License-Identifier: MIT
#extension GL_GOOGLE_include_directive : require
#include "pbd_common.glsl"
#include "pbd_skin.glsl"

vec3 skin_normal(uint i)
{
    return vec3(skin_n[3u * i], skin_n[3u * i + 1u], skin_n[3u * i + 2u]);
}

void frame_point(Record r, out vec3 pos, out vec3 nrm)
{
    uint t0 = tri[3u * r.head.x], t1 = tri[3u * r.head.x + 1u], t2 = tri[3u * r.head.x + 2u];
    precise vec3 x0 = skin_at(t0), x1 = skin_at(t1), x2 = skin_at(t2);
    vec3 n0 = skin_normal(t0), n1 = skin_normal(t1), n2 = skin_normal(t2);
    vec3 by = r.bary.xyz;
    precise vec3 p, nn, e1, e2, fn, tg, bt;
    for (uint k = 0u; k < 3u; ++k) {
        p[k] = by.x * x0[k] + by.y * x1[k] + by.z * x2[k];
        nn[k] = by.x * n0[k] + by.y * n1[k] + by.z * n2[k];
        e1[k] = x1[k] - x0[k];
        e2[k] = x2[k] - x0[k];
    }
    fn.x = e1.y * e2.z - e1.z * e2.y;
    fn.y = e1.z * e2.x - e1.x * e2.z;
    fn.z = e1.x * e2.y - e1.y * e2.x;
    fn = normalize_or(fn, vec3(0.0, 0.0, 1.0));
    nn = normalize_or(nn, fn);
    precise float d = e1.x * nn.x + e1.y * nn.y + e1.z * nn.z;
    for (uint k = 0u; k < 3u; ++k) tg[k] = e1[k] - d * nn[k];
    precise float l2 = tg.x * tg.x + tg.y * tg.y + tg.z * tg.z;
    if (!(l2 > 1e-30)) { // collapsed edge: any direction orthogonal to n
        vec3 a = abs(nn.x) < 0.9 ? vec3(1.0, 0.0, 0.0) : vec3(0.0, 0.0, 1.0);
        d = a.x * nn.x + a.y * nn.y + a.z * nn.z;
        for (uint k = 0u; k < 3u; ++k) tg[k] = a[k] - d * nn[k];
    }
    tg = normalize_or(tg, vec3(1.0, 0.0, 0.0));
    bt.x = nn.y * tg.z - nn.z * tg.y;
    bt.y = nn.z * tg.x - nn.x * tg.z;
    bt.z = nn.x * tg.y - nn.y * tg.x;
    precise vec3 rp, rn;
    for (uint k = 0u; k < 3u; ++k) {
        rp[k] = p[k] + r.offset.x * tg[k] + r.offset.y * bt[k] + r.offset.z * nn[k];
        rn[k] = r.normal.x * tg[k] + r.normal.y * bt[k] + r.normal.z * nn[k];
    }
    pos = rp;
    nrm = rn;
}

void rigid_point(Record r, out vec3 pos, out vec3 nrm)
{
    uint j = 16u * r.head.z;
    precise vec3 xs = skin_at(r.head.y);
    precise vec3 rp, rn;
    for (uint k = 0u; k < 3u; ++k) {
        rp[k] = xs[k] + skinning[j + k] * r.offset.x + skinning[j + 4u + k] * r.offset.y +
                skinning[j + 8u + k] * r.offset.z;
        rn[k] = skinning[j + k] * r.normal.x + skinning[j + 4u + k] * r.normal.y +
                skinning[j + 8u + k] * r.normal.z;
    }
    pos = rp;
    nrm = normalize_or(rn, vec3(0.0));
}

void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.render) return;
    Record r = rec[i];
    vec3 pos, nrm;
    if (r.head.x == PBD_NONE) rigid_point(r, pos, nrm);
    else frame_point(r, pos, nrm);
    for (uint c = 0u; c < 3u; ++c) {
        out_pos[3u * i + c] = pos[c];
        out_nrm[3u * i + c] = nrm[c];
    }
}
