// The simulated skin for the output (2018 Sec. 6), blended from the skin before the latest
// step when interpolate_output asks for it (sinew_step_blend's expression).
// SPDX-License-Identifier: MIT

precise vec3 skin_at(uint i)
{
    precise vec3 p = vec3(px(0u, i), px(1u, i), px(2u, i));
    if ((pc.flags & PBD_BLEND) == 0u || pc.fraction == 1.0) return p;
    precise vec3 a = vec3(blend_from[i], blend_from[pc.n + i], blend_from[2u * pc.n + i]);
    if (pc.fraction == 0.0) return a;
    precise vec3 r;
    for (uint c = 0u; c < 3u; ++c) r[c] = a[c] + pc.fraction * (p[c] - a[c]);
    return r;
}

// ps_normalize3f: the unit vector, or the fallback where it has no length.
precise vec3 normalize_or(vec3 a, vec3 fallback)
{
    precise float l2 = a.x * a.x + a.y * a.y + a.z * a.z;
    if (!(l2 > 1e-30)) return fallback;
    precise float s = 1.0 / sqrt(l2);
    precise vec3 r = vec3(a.x * s, a.y * s, a.z * s);
    return r;
}
