/* The flesh a bending joint squeezes out, given back around the joint.
 * SPDX-License-Identifier: MIT
 *
 * The tissue keeps its own volume (Sec. 4.1), but inside a bend the volumetric skeleton's
 * capsules overlap and the local collisions (Sec. 5) flatten the crease, so the skin encloses
 * less than at rest: the flesh that would bulge around the joint is lost. Every folding joint
 * (one with local collisions, Sec. 5.1) gets a region: the skin triangles whose corners all lie
 * within `reach` joint radii of the joint's rest centre. The region's volume is the fan of its triangles from the
 * joint's posed centre, which a rigid turn of the limb about the joint keeps. A region that has
 * lost volume moves its vertices outward along their normals, by the first-order amount that
 * gives `gain` of the loss back, each weighted (1 - d^2 / R^2)^2 by its rest distance d from
 * the centre, so that the bulge is round. Skin compressed below PS_JOINT_VOLUME_AREA_GATE of its
 * rest area (the crease itself) is not pushed, which would press the crease's lips into each
 * other. ps reaches the targets through point constraints (ps_sim.c), fps through a pull
 * (fps_joint_volume.c). */
#include <math.h>
#include <string.h>

#include "ps_joint_volume.h"

typedef struct jv_region {
    uint32_t joint;       /* the joint whose matrix poses the centre */
    double rest_centre[3];
    double centre[3];     /* posed, at the last measure */
    double rest_volume;
    double cap;           /* the largest move of one call: half the joint's radius */
    uint32_t tri_begin, tri_end;
    uint32_t vert_begin, vert_end;
} jv_region;

struct ps_joint_volume {
    const ps_model* m;
    uint32_t region_count;
    jv_region* regions;
    uint32_t* tris;   /* region triangles (skin triangle indices) */
    uint32_t* verts;  /* region vertices */
    double* vert_w;   /* their weights */
    double* area0;    /* n: rest area of each skin vertex's triangles (twice, unnormalised) */
    double* push;     /* 3n: scratch, the region's weighted gated normals */
};

/* Corner k of skin triangle t at x (columns of N) relative to c. */
static void corner(const double* x, uint32_t N, uint32_t v, const double c[3], double out[3])
{
    for (int q = 0; q < 3; ++q) out[q] = x[(size_t)q * N + v] - c[q];
}

static double region_volume(const ps_joint_volume* jv, const jv_region* r, const double* x,
                            uint32_t N, const double c[3])
{
    double v = 0.0;
    for (uint32_t k = r->tri_begin; k < r->tri_end; ++k) {
        const uint32_t* t = jv->m->triangles + 3u * jv->tris[k];
        double a[3], b[3], d[3], bd[3];
        corner(x, N, t[0], c, a);
        corner(x, N, t[1], c, b);
        corner(x, N, t[2], c, d);
        ps_cross3(b, d, bd);
        v += (a[0] * bd[0] + a[1] * bd[1] + a[2] * bd[2]) / 6.0;
    }
    return v;
}

/* Twice the area-weighted normal of skin vertex v's triangles at x (columns of N). */
static void vertex_normal_sum(const ps_model* m, const double* x, uint32_t N, uint32_t v,
                              double out[3])
{
    static const double zero[3] = {0.0, 0.0, 0.0};
    out[0] = out[1] = out[2] = 0.0;
    for (uint32_t a = m->vertex_tri_offsets[v]; a < m->vertex_tri_offsets[v + 1]; ++a) {
        const uint32_t* t = m->triangles + 3u * m->vertex_tris[a];
        double p0[3], p1[3], p2[3], e1[3], e2[3], c[3];
        corner(x, N, t[0], zero, p0);
        corner(x, N, t[1], zero, p1);
        corner(x, N, t[2], zero, p2);
        for (int q = 0; q < 3; ++q) {
            e1[q] = p1[q] - p0[q];
            e2[q] = p2[q] - p0[q];
        }
        ps_cross3(e1, e2, c);
        for (int q = 0; q < 3; ++q) out[q] += c[q];
    }
}

static double vertex_weight(const ps_model* m, uint32_t v, const double c[3], double R)
{
    double d2 = 0.0;
    for (int q = 0; q < 3; ++q) {
        double e = m->rest[3u * v + q] - c[q];
        d2 += e * e;
    }
    double f = 1.0 - d2 / (R * R);
    return f > 0.0 ? f * f : 0.0;
}

/* Counts (or, with lists, fills) the region's vertices and triangles; `in` (n bytes, zero on
 * entry and on return) marks the vertices inside. */
static void region_members(const ps_model* m, const jv_region* r, double R, uint8_t* in,
                           uint32_t* verts, double* vw, uint32_t* tris, uint32_t* vc, uint32_t* tc)
{
    uint32_t nv = 0, nt = 0;
    for (uint32_t v = 0; v < m->n; ++v) {
        double w = vertex_weight(m, v, r->rest_centre, R);
        if (w <= 0.0) continue;
        in[v] = 1u;
        if (verts) {
            verts[nv] = v;
            vw[nv] = w;
        }
        nv++;
    }
    for (uint32_t t = 0; t < m->triangle_count; ++t) {
        const uint32_t* c = m->triangles + 3u * t;
        if (!in[c[0]] || !in[c[1]] || !in[c[2]]) continue;
        if (tris) tris[nt] = t;
        nt++;
    }
    for (uint32_t v = 0; v < m->n; ++v) in[v] = 0u;
    *vc = nv;
    *tc = nt;
}

/* The folding joints: those of the local collisions' candidate pairs (Sec. 5.1), marked in
 * `fold` (one byte per joint). */
static void mark_folding_joints(const ps_model* m, uint8_t* fold)
{
    for (uint32_t k = 0; k < m->collision_pair_count; ++k)
        fold[m->joint_rep[m->collision_pairs[k].joint]] = 1u;
}

static sinew_result alloc_lists(const sinew_host_api* host, ps_joint_volume* jv, uint32_t rc,
                                uint32_t vt, uint32_t tt)
{
    jv->regions = (jv_region*)sinew_host_calloc(host, rc ? rc : 1u, sizeof(jv_region));
    jv->verts = (uint32_t*)sinew_host_calloc(host, vt ? vt : 1u, sizeof(uint32_t));
    jv->vert_w = (double*)sinew_host_calloc(host, vt ? vt : 1u, sizeof(double));
    jv->tris = (uint32_t*)sinew_host_calloc(host, tt ? tt : 1u, sizeof(uint32_t));
    if (!jv->regions || !jv->verts || !jv->vert_w || !jv->tris)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
    return SINEW_OK;
}

/* Two passes over the folding joints (marked in `fold`): count, then fill; the rest volumes
 * from the rest skin. */
static sinew_result build_regions(const sinew_host_api* host, ps_joint_volume* jv, double reach,
                                  const uint8_t* fold, uint8_t* in, double* rest)
{
    const ps_model* m = jv->m;
    for (int pass = 0; pass < 2; ++pass) {
        uint32_t vo = 0, to = 0, rc = 0;
        for (uint32_t j = 0; j < m->joint_count; ++j) {
            if (!fold[j] || !(m->joint_radius[j] > 0.0)) continue;
            jv_region tmp, *r = pass ? jv->regions + rc : &tmp;
            memset(r, 0, sizeof *r);
            r->joint = j;
            ps_joint_position(m, j, r->rest_centre);
            r->cap = 0.5 * m->joint_radius[j];
            uint32_t nv, nt;
            region_members(m, r, reach * m->joint_radius[j], in, pass ? jv->verts + vo : NULL,
                           pass ? jv->vert_w + vo : NULL, pass ? jv->tris + to : NULL, &nv, &nt);
            r->vert_begin = vo;
            r->vert_end = vo += nv;
            r->tri_begin = to;
            r->tri_end = to += nt;
            if (pass) r->rest_volume = region_volume(jv, r, rest, m->n, r->rest_centre);
            rc++;
        }
        if (pass) {
            jv->region_count = rc;
        } else {
            sinew_result e = alloc_lists(host, jv, rc, vo, to);
            if (e != SINEW_OK) return e;
        }
    }
    return SINEW_OK;
}

/* The rest skin as columns (in `rest`, 3n) and each vertex's rest area. */
static void rest_data(ps_joint_volume* jv, double* rest)
{
    const ps_model* m = jv->m;
    for (uint32_t v = 0; v < m->n; ++v)
        for (int q = 0; q < 3; ++q) rest[(size_t)q * m->n + v] = m->rest[3u * v + q];
    for (uint32_t v = 0; v < m->n; ++v) {
        double s[3];
        vertex_normal_sum(m, rest, m->n, v, s);
        jv->area0[v] = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    }
}

sinew_result ps_joint_volume_create(const sinew_host_api* host, const ps_model* m, double reach,
                                    ps_joint_volume** out)
{
    *out = NULL;
    ps_joint_volume* jv = (ps_joint_volume*)sinew_host_calloc(host, 1u, sizeof *jv);
    uint8_t* in = (uint8_t*)sinew_host_calloc(host, m->n ? m->n : 1u, 1u);
    uint8_t* fold = (uint8_t*)sinew_host_calloc(host, m->joint_count ? m->joint_count : 1u, 1u);
    if (jv) {
        jv->m = m;
        jv->area0 = (double*)sinew_host_calloc(host, m->n ? m->n : 1u, sizeof(double));
        jv->push = (double*)sinew_host_calloc(host, 3u * (size_t)m->n + 1u, sizeof(double));
    }
    sinew_result r = SINEW_OK;
    if (!jv || !in || !fold || !jv->area0 || !jv->push) {
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
    } else {
        mark_folding_joints(m, fold);
        rest_data(jv, jv->push);
        r = build_regions(host, jv, reach, fold, in, jv->push);
    }
    sinew_host_free(host, in);
    sinew_host_free(host, fold);
    if (r != SINEW_OK || jv->region_count == 0) {
        ps_joint_volume_destroy(host, jv);
        return r;
    }
    *out = jv;
    return SINEW_OK;
}

void ps_joint_volume_destroy(const sinew_host_api* host, ps_joint_volume* jv)
{
    if (!jv) return;
    sinew_host_free(host, jv->regions);
    sinew_host_free(host, jv->verts);
    sinew_host_free(host, jv->vert_w);
    sinew_host_free(host, jv->tris);
    sinew_host_free(host, jv->area0);
    sinew_host_free(host, jv->push);
    sinew_host_free(host, jv);
}

uint32_t ps_joint_volume_region_count(const ps_joint_volume* jv)
{
    return jv ? jv->region_count : 0u;
}

int ps_joint_volume_measure(ps_joint_volume* jv, const double* x, uint32_t N,
                            const float* skinning, double slack, double* lost)
{
    int any = 0;
    for (uint32_t k = 0; k < jv->region_count; ++k) {
        jv_region* r = jv->regions + k;
        if (skinning)
            ps_transform_point(skinning + 16u * r->joint, r->rest_centre, r->centre);
        else
            memcpy(r->centre, r->rest_centre, sizeof r->centre);
        double v = region_volume(jv, r, x, N, r->centre);
        double l = r->rest_volume > 0.0 ? 1.0 - v / r->rest_volume : 0.0;
        if (lost) lost[k] = l;
        any |= l > slack;
    }
    return any;
}

/* The region's gated unit normals times the vertex weights, into jv->push (3 per skin vertex). */
static void region_push(ps_joint_volume* jv, const jv_region* r, const double* x, uint32_t N)
{
    for (uint32_t k = r->vert_begin; k < r->vert_end; ++k) {
        uint32_t v = jv->verts[k];
        double s[3];
        vertex_normal_sum(jv->m, x, N, v, s);
        double l = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
        double g = jv->area0[v] > 0.0 ? (l / jv->area0[v] - PS_JOINT_VOLUME_AREA_GATE) /
                                            (1.0 - PS_JOINT_VOLUME_AREA_GATE)
                                      : 0.0;
        g = g < 0.0 ? 0.0 : (g > 1.0 ? 1.0 : g);
        double f = l > 0.0 ? g * jv->vert_w[k] / l : 0.0;
        for (int q = 0; q < 3; ++q) jv->push[3u * v + q] = f * s[q];
    }
}

/* d volume / d lambda for the moves lambda push_v. */
static double region_rate(const ps_joint_volume* jv, const jv_region* r, const double* x,
                          uint32_t N)
{
    double rate = 0.0;
    for (uint32_t k = r->tri_begin; k < r->tri_end; ++k) {
        const uint32_t* t = jv->m->triangles + 3u * jv->tris[k];
        double p[3][3];
        for (int c = 0; c < 3; ++c) corner(x, N, t[c], r->centre, p[c]);
        for (int c = 0; c < 3; ++c) {
            double g[3];
            ps_cross3(p[(c + 1) % 3], p[(c + 2) % 3], g);
            const double* n = jv->push + 3u * t[c];
            rate += (g[0] * n[0] + g[1] * n[1] + g[2] * n[2]) / 6.0;
        }
    }
    return rate;
}

void ps_joint_volume_targets(ps_joint_volume* jv, const double* x, uint32_t N, double gain,
                             double* t)
{
    for (uint32_t k = 0; k < jv->region_count; ++k) {
        const jv_region* r = jv->regions + k;
        if (!(r->rest_volume > 0.0)) continue;
        double lost = r->rest_volume - region_volume(jv, r, x, N, r->centre);
        if (!(lost > 0.0)) continue;
        region_push(jv, r, x, N);
        double rate = region_rate(jv, r, x, N);
        double lambda = rate > 0.0 ? fmin(gain * lost / rate, r->cap) : 0.0;
        for (uint32_t i = r->vert_begin; i < r->vert_end && lambda > 0.0; ++i) {
            uint32_t v = jv->verts[i];
            for (int q = 0; q < 3; ++q) t[(size_t)q * N + v] += lambda * jv->push[3u * v + q];
        }
    }
}
