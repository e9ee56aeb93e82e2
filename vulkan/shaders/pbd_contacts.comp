#version 450
// The joints' contacts as inequality constraints of one particle each (2018 Sec. 5.3, as
// backends/ps/ps_collide.c projects them without the angle test): a moving skin vertex that
// crossed one of its contact planes, or came within its margin, goes back onto it; solved as
// one more colour after the others. SPDX-License-Identifier: MIT
#extension GL_GOOGLE_include_directive : require
#include "pbd_common.glsl"

void main()
{
    uint s = gl_GlobalInvocationID.x;
    if (s >= pc.contacts) return;
    uvec4 cv = c_vert[s]; // vertex, first entry, end of entries, moving
    if (cv.w == 0u) return;
    precise vec3 p = vec3(px(0u, cv.x), px(1u, cv.x), px(2u, cv.x));
    for (uint e = cv.y; e < cv.z; ++e) {
        Side sd = c_side[e];
        vec4 point = c_plane[pc.plane_at + 2u * sd.contact];
        vec4 normal = c_plane[pc.plane_at + 2u * sd.contact + 1u];
        if (sd.side == 0.0 || point.w == 0.0) continue;
        precise float d = sd.side * ((p.x - point.x) * normal.x + (p.y - point.y) * normal.y +
                                     (p.z - point.z) * normal.z);
        if (d >= sd.margin - pc.slack) continue;
        precise float f = sd.side * (sd.margin - d);
        for (uint c = 0u; c < 3u; ++c) p[c] = p[c] + f * normal[c];
    }
    for (uint c = 0u; c < 3u; ++c) x[c * pc.N + cv.x] = p[c];
}
