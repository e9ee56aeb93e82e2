#version 450
// The skin's area-weighted vertex normals (ps_vertex_normal), over its vertex-triangle lists.
// SPDX-License-Identifier: MIT
#extension GL_GOOGLE_include_directive : require
#include "pbd_common.glsl"
#include "pbd_skin.glsl"

void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n) return;
    precise vec3 s = vec3(0.0);
    for (uint k = vt_off[i]; k < vt_off[i + 1u]; ++k) {
        uint t = vt[k];
        precise vec3 a = skin_at(tri[3u * t]);
        precise vec3 b = skin_at(tri[3u * t + 1u]);
        precise vec3 c = skin_at(tri[3u * t + 2u]);
        precise vec3 e1 = vec3(b.x - a.x, b.y - a.y, b.z - a.z);
        precise vec3 e2 = vec3(c.x - a.x, c.y - a.y, c.z - a.z);
        s.x = s.x + (e1.y * e2.z - e1.z * e2.y);
        s.y = s.y + (e1.z * e2.x - e1.x * e2.z);
        s.z = s.z + (e1.x * e2.y - e1.y * e2.x);
    }
    precise vec3 nrm = normalize_or(s, vec3(0.0));
    for (uint c = 0u; c < 3u; ++c) skin_n[3u * i + c] = nrm[c];
}
