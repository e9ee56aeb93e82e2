/* Skin sliding around joints (projective skinning Sec. 4.2, Fig. 7 and 8).
 * SPDX-License-Identifier: MIT
 *
 * Without sliding a base vertex on a joint sphere follows one bone rigidly, so the shrunken
 * skin tears open on the outside of a bend where parent- and child-bound vertices meet. Here,
 * for every joint with one incoming bone P and outgoing bones that share one skinning matrix
 * C, and for each bone B at that joint:
 * - a joint ring of PS_SLIDE_RING anchors on the joint sphere (the great circle normal to B)
 *   moves with the quaternion average of P's and C's transforms (the half rotation, Fig. 7);
 * - a bone ring of as many anchors on B's capsule, PS_SLIDE_REACH joint radii from the joint
 *   centre (where the capsule leaves the sphere; at most half the bone), moves with B;
 * - each base vertex of B between the joint centre's far side and the bone ring is an affine
 *   combination of four anchors, the two joint-ring and the two bone-ring anchors around its
 *   angle (the bone ring is turned by half a step, so that the four span a tetrahedron and the
 *   combination reproduces the rest position exactly); at run time the combination of the
 *   moved anchors is projected back onto the surface of the posed volumetric skeleton (Fig. 8).
 * The target is q_rest + (p - p0), p the projected point and p0 the same evaluation at rest:
 * p0 equals q_rest up to rounding (q_rest lies on the skeleton), and the rest pose gives the
 * rest anchors bit for bit. The records depend on the rest shape only and are baked. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ps_internal.h"

/* Anchors per ring: 16 keep the chord of the ring within 2 % of the radius. */
#define PS_SLIDE_RING 16u
/* The bone ring's distance from the joint centre, in joint radii (capped at half the bone):
 * one radius, where the capsule leaves the sphere. Farther rings lower the largest base-edge
 * stretch but spread the stretch wider (docs/decisions/2026-11-26-ps-sliding-reach.md). */
#define PS_SLIDE_REACH 1.0

/* Unit quaternion (w, x, y, z) of the rotation part of T (columns normalised first, so that a
 * uniform scale does not disturb it). */
static void matrix_quat(const float* T, double q[4])
{
    double m[3][3];
    for (int c = 0; c < 3; ++c) {
        double l = sqrt((double)T[4 * c] * T[4 * c] + (double)T[4 * c + 1] * T[4 * c + 1] +
                        (double)T[4 * c + 2] * T[4 * c + 2]);
        if (!(l > 0.0)) l = 1.0;
        for (int r = 0; r < 3; ++r) m[r][c] = (double)T[4 * c + r] / l;
    }
    double tr = m[0][0] + m[1][1] + m[2][2];
    if (tr > 0.0) {
        double s = 2.0 * sqrt(tr + 1.0);
        q[0] = 0.25 * s;
        q[1] = (m[2][1] - m[1][2]) / s;
        q[2] = (m[0][2] - m[2][0]) / s;
        q[3] = (m[1][0] - m[0][1]) / s;
    } else if (m[0][0] > m[1][1] && m[0][0] > m[2][2]) {
        double s = 2.0 * sqrt(1.0 + m[0][0] - m[1][1] - m[2][2]);
        q[0] = (m[2][1] - m[1][2]) / s;
        q[1] = 0.25 * s;
        q[2] = (m[0][1] + m[1][0]) / s;
        q[3] = (m[0][2] + m[2][0]) / s;
    } else if (m[1][1] > m[2][2]) {
        double s = 2.0 * sqrt(1.0 + m[1][1] - m[0][0] - m[2][2]);
        q[0] = (m[0][2] - m[2][0]) / s;
        q[1] = (m[0][1] + m[1][0]) / s;
        q[2] = 0.25 * s;
        q[3] = (m[1][2] + m[2][1]) / s;
    } else {
        double s = 2.0 * sqrt(1.0 + m[2][2] - m[0][0] - m[1][1]);
        q[0] = (m[1][0] - m[0][1]) / s;
        q[1] = (m[0][2] + m[2][0]) / s;
        q[2] = (m[1][2] + m[2][1]) / s;
        q[3] = 0.25 * s;
    }
}

/* The half transform at a joint (Sec. 4.2, Fig. 7): rotation = normalised sum of the two
 * rotations' quaternions (same hemisphere), and the joint centre c goes to the mean of where
 * the two transforms take it. Writes a 3x4 matrix (rotation columns, then translation). */
static void half_transform(const float* Ta, const float* Tb, const double c[3], double M[12])
{
    double qa[4], qb[4], q[4];
    matrix_quat(Ta, qa);
    matrix_quat(Tb, qb);
    double d = qa[0] * qb[0] + qa[1] * qb[1] + qa[2] * qb[2] + qa[3] * qb[3];
    double sgn = d < 0.0 ? -1.0 : 1.0;
    for (int k = 0; k < 4; ++k) q[k] = qa[k] + sgn * qb[k];
    double l = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(l > 0.0)) {
        q[0] = 1.0, q[1] = q[2] = q[3] = 0.0;
        l = 1.0;
    }
    double w = q[0] / l, x = q[1] / l, y = q[2] / l, z = q[3] / l;
    double R[9] = {1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y),
                   2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x),
                   2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)};
    double ca[3], cb[3];
    ps_transform_point(Ta, c, ca);
    ps_transform_point(Tb, c, cb);
    memcpy(M, R, sizeof R);
    for (int r = 0; r < 3; ++r) {
        double rc = R[r] * c[0] + R[3 + r] * c[1] + R[6 + r] * c[2];
        M[9 + r] = 0.5 * (ca[r] + cb[r]) - rc;
    }
}

/* Per joint: the incoming bone (PS_NONE for none) and the one skinning matrix of its outgoing
 * bones (PS_NONE for none, or when they disagree: no sliding there). */
static void joint_pairs(const ps_model* m, uint32_t joint, uint32_t* in_bone, uint32_t* out_joint)
{
    *in_bone = PS_NONE;
    *out_joint = PS_NONE;
    bool mixed = false;
    for (uint32_t b = 0; b < m->bone_count; ++b) {
        const ps_bone* bone = &m->bones[b];
        if (bone->end[0] == bone->end[1]) continue;
        if (bone->end[1] == joint) *in_bone = b;
        if (bone->end[0] == joint) {
            if (*out_joint != PS_NONE && *out_joint != bone->joint) mixed = true;
            *out_joint = bone->joint;
        }
    }
    if (mixed) *out_joint = PS_NONE;
}

/* ---- the posed skeleton and the evaluation, shared by preparation and run time ---- */

struct ps_slide {
    sinew_host_api host;
    const ps_model* m;
    double* anchors;        /* 3 per anchor, posed */
    double* ends;           /* 6 per bone, posed */
    double* centers;        /* 3 per joint, posed */
    uint32_t* joint_offsets; /* bones at each joint (compressed rows) */
    uint32_t* joint_bones;
};

/* Signed distance to primitive k of joint j's neighbourhood; fills its closest axis point. */
static double prim_distance(const ps_slide* s, uint32_t joint, uint32_t k, const double x[3],
                            double c[3], double* radius)
{
    const ps_model* m = s->m;
    if (k == 0) {
        memcpy(c, s->centers + 3u * joint, 3u * sizeof(double));
        *radius = m->joint_radius[joint];
    } else {
        uint32_t b = s->joint_bones[s->joint_offsets[joint] + k - 1u];
        ps_closest_on_segment(x, s->ends + 6u * b, s->ends + 6u * b + 3u, c);
        *radius = m->bones[b].radius;
    }
    double d[3] = {x[0] - c[0], x[1] - c[1], x[2] - c[2]};
    return sqrt(ps_dot3(d, d)) - *radius;
}

/* The union's signed distance (min over the primitives; exact outside). */
static double union_distance(const ps_slide* s, uint32_t joint, uint32_t count, const double x[3])
{
    double best = DBL_MAX;
    for (uint32_t k = 0; k < count; ++k) {
        double c[3], r;
        best = fmin(best, prim_distance(s, joint, k, x, c, &r));
    }
    return best;
}

/* Moves x onto the surface of joint j's sphere and the capsules of its bones (Sec. 4.2). From
 * outside: the closest point of the union. From inside: the nearest of the primitives' own
 * closest surface points that no other primitive covers; in a crease where every such point is
 * covered, the exit of the union along the sum of the outward directions (bisection). */
static void project(const ps_slide* s, uint32_t joint, double x[3])
{
    uint32_t count = 1u + s->joint_offsets[joint + 1] - s->joint_offsets[joint];
    double best_out = DBL_MAX, best_in = DBL_MAX, best_any = DBL_MAX;
    double p_out[3] = {x[0], x[1], x[2]}, p_in[3] = {x[0], x[1], x[2]};
    double p_any[3] = {x[0], x[1], x[2]};
    bool inside = false;
    for (uint32_t k = 0; k < count; ++k) {
        double c[3], r;
        double d = prim_distance(s, joint, k, x, c, &r);
        double v[3] = {x[0] - c[0], x[1] - c[1], x[2] - c[2]};
        double l = sqrt(ps_dot3(v, v));
        if (!(l > 1e-12 * (r > 0.0 ? r : 1.0))) continue; /* on the axis: no direction */
        double p[3];
        for (int q = 0; q < 3; ++q) p[q] = c[q] + v[q] * (r / l);
        if (d < 0.0) inside = true;
        if (d >= 0.0 && d < best_out) {
            best_out = d;
            memcpy(p_out, p, sizeof p);
        }
        double a = fabs(d);
        if (a < best_any) {
            best_any = a;
            memcpy(p_any, p, sizeof p);
        }
        if (a < best_in && union_distance(s, joint, count, p) >= -1e-12 * (r > 0.0 ? r : 1.0)) {
            best_in = a;
            memcpy(p_in, p, sizeof p);
        }
    }
    if (!inside) {
        memcpy(x, p_out, sizeof p_out);
        return;
    }
    if (best_in < DBL_MAX) {
        memcpy(x, p_in, sizeof p_in);
        return;
    }

    /* The crease: out along the sum of the outward directions of the primitives holding x. */
    double dir[3] = {0.0, 0.0, 0.0}, depth = 0.0;
    for (uint32_t k = 0; k < count; ++k) {
        double c[3], r;
        double d = prim_distance(s, joint, k, x, c, &r);
        double v[3] = {x[0] - c[0], x[1] - c[1], x[2] - c[2]};
        double l = sqrt(ps_dot3(v, v));
        if (d >= 0.0 || !(l > 0.0)) continue;
        for (int q = 0; q < 3; ++q) dir[q] += v[q] / l;
        depth = fmax(depth, -d);
    }
    double dl = sqrt(ps_dot3(dir, dir));
    if (!(dl > 1e-9)) {
        for (int q = 0; q < 3; ++q) dir[q] = p_any[q] - x[q];
        dl = sqrt(ps_dot3(dir, dir));
        if (!(dl > 0.0)) return;
    }
    for (int q = 0; q < 3; ++q) dir[q] *= depth / dl;
    double lo = 0.0, hi = 1.0;
    for (int it = 0; it < 60; ++it) { /* the union is bounded: some multiple gets out */
        double y[3] = {x[0] + hi * dir[0], x[1] + hi * dir[1], x[2] + hi * dir[2]};
        if (union_distance(s, joint, count, y) >= 0.0) break;
        lo = hi;
        hi *= 2.0;
    }
    for (int it = 0; it < 64; ++it) {
        double mid = 0.5 * (lo + hi);
        double y[3] = {x[0] + mid * dir[0], x[1] + mid * dir[1], x[2] + mid * dir[2]};
        if (union_distance(s, joint, count, y) >= 0.0) hi = mid;
        else lo = mid;
    }
    for (int q = 0; q < 3; ++q) x[q] += hi * dir[q];
}

/* Poses anchors, bone ends and joint centres with the skinning matrices (NULL: rest). */
static void pose(ps_slide* s, const float* skinning)
{
    static const float identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    const ps_model* m = s->m;
#define MAT(j) (skinning ? skinning + 16u * (j) : identity)
    for (uint32_t b = 0; b < m->bone_count; ++b) {
        double a[3], e[3];
        ps_joint_position(m, m->bones[b].end[0], a);
        ps_joint_position(m, m->bones[b].end[1], e);
        ps_transform_point(MAT(m->bones[b].joint), a, s->ends + 6u * b);
        ps_transform_point(MAT(m->bones[b].joint), e, s->ends + 6u * b + 3u);
    }
    for (uint32_t j = 0; j < m->joint_count; ++j) {
        /* the centre moves with the bone that ends there, else one that starts there */
        uint32_t mat = j;
        for (uint32_t k = s->joint_offsets[j]; k < s->joint_offsets[j + 1]; ++k) {
            const ps_bone* b = &m->bones[s->joint_bones[k]];
            if (b->end[1] == j || mat == j) mat = b->joint;
            if (b->end[1] == j) break;
        }
        double c[3];
        ps_joint_position(m, j, c);
        ps_transform_point(MAT(mat), c, s->centers + 3u * j);
    }
    /* A ring's anchors share their transform: the half transform is computed once per ring. */
    uint32_t key[3] = {PS_NONE, PS_NONE, PS_NONE};
    double M[12] = {0.0};
    for (uint32_t a = 0; a < m->slide_anchor_count; ++a) {
        const ps_slide_anchor* an = &m->slide_anchors[a];
        double* out = s->anchors + 3u * a;
        if (an->joint[0] == an->joint[1]) {
            ps_transform_point(MAT(an->joint[0]), an->rest, out);
            continue;
        }
        if (an->joint[0] != key[0] || an->joint[1] != key[1] || an->center != key[2]) {
            double c[3];
            ps_joint_position(m, an->center, c);
            half_transform(MAT(an->joint[0]), MAT(an->joint[1]), c, M);
            key[0] = an->joint[0], key[1] = an->joint[1], key[2] = an->center;
        }
        for (int r = 0; r < 3; ++r)
            out[r] = M[r] * an->rest[0] + M[3 + r] * an->rest[1] + M[6 + r] * an->rest[2] +
                     M[9 + r];
    }
#undef MAT
}

/* The projected combination of a record's four posed anchors. */
static void evaluate(const ps_slide* s, const ps_slide_vertex* v, double out[3])
{
    for (int k = 0; k < 3; ++k) {
        double acc = 0.0;
        for (int a = 0; a < 4; ++a) acc += v->weight[a] * s->anchors[3u * v->anchor[a] + k];
        out[k] = acc;
    }
    project(s, v->joint, out);
}

void ps_slide_destroy(ps_slide* s)
{
    if (!s) return;
    sinew_host_api host = s->host;
    sinew_host_free(&host, s->anchors);
    sinew_host_free(&host, s->ends);
    sinew_host_free(&host, s->centers);
    sinew_host_free(&host, s->joint_offsets);
    sinew_host_free(&host, s->joint_bones);
    sinew_host_free(&host, s);
}

sinew_result ps_slide_create(const sinew_host_api* host, const ps_model* m, ps_slide** out)
{
    *out = NULL;
    ps_slide* s = (ps_slide*)sinew_host_calloc(host, 1, sizeof(ps_slide));
    if (!s) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps sliding: out of memory");
    s->host = *host;
    s->m = m;
    uint32_t ac = m->slide_anchor_count;
    s->anchors = (double*)sinew_host_calloc(host, ac ? ac : 1u, 3u * sizeof(double));
    s->ends = (double*)sinew_host_calloc(host, m->bone_count ? m->bone_count : 1u, 6u * sizeof(double));
    s->centers = (double*)sinew_host_calloc(host, m->joint_count, 3u * sizeof(double));
    s->joint_offsets = (uint32_t*)sinew_host_calloc(host, m->joint_count + 1u, sizeof(uint32_t));
    s->joint_bones = (uint32_t*)sinew_host_calloc(host, 2u * (size_t)m->bone_count + 1u,
                                                  sizeof(uint32_t));
    if (!s->anchors || !s->ends || !s->centers || !s->joint_offsets || !s->joint_bones) {
        ps_slide_destroy(s);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps sliding: out of memory");
    }
    for (uint32_t b = 0; b < m->bone_count; ++b) {
        s->joint_offsets[m->bones[b].end[0] + 1]++;
        if (m->bones[b].end[1] != m->bones[b].end[0]) s->joint_offsets[m->bones[b].end[1] + 1]++;
    }
    for (uint32_t j = 0; j < m->joint_count; ++j) s->joint_offsets[j + 1] += s->joint_offsets[j];
    uint32_t* fill = s->joint_bones;
    for (uint32_t j = 0; j < m->joint_count; ++j) /* bones in index order at every joint */
        for (uint32_t b = 0; b < m->bone_count; ++b)
            if (m->bones[b].end[0] == j || m->bones[b].end[1] == j) *fill++ = b;
    *out = s;
    return SINEW_OK;
}

void ps_slide_targets(ps_slide* s, const float* skinning, double* target, uint32_t N)
{
    const ps_model* m = s->m;
    pose(s, skinning);
    for (uint32_t i = 0; i < m->slide_vertex_count; ++i) {
        const ps_slide_vertex* v = &m->slide_vertices[i];
        double p[3];
        evaluate(s, v, p);
        const double* q = m->rest + 3u * v->vertex;
        for (int k = 0; k < 3; ++k) target[(size_t)k * N + v->vertex] = q[k] + (p[k] - v->p0[k]);
    }
}

/* ---- preparation ---- */

/* Affine coordinates of x in the tetrahedron (A0..A3); false when it is too flat to trust. */
static bool affine_weights(const double* A[4], const double x[3], double w[4])
{
    double e[3][3], d[3];
    for (int k = 0; k < 3; ++k) {
        for (int c = 0; c < 3; ++c) e[c][k] = A[c + 1][k] - A[0][k];
        d[k] = x[k] - A[0][k];
    }
    double c12[3], c20[3], c01[3];
    ps_cross3(e[1], e[2], c12);
    ps_cross3(e[2], e[0], c20);
    ps_cross3(e[0], e[1], c01);
    double det = ps_dot3(e[0], c12);
    double scale = sqrt(ps_dot3(e[0], e[0]) * ps_dot3(e[1], e[1]) * ps_dot3(e[2], e[2]));
    if (!(fabs(det) > 1e-6 * scale)) return false;
    w[1] = ps_dot3(d, c12) / det;
    w[2] = ps_dot3(d, c20) / det;
    w[3] = ps_dot3(d, c01) / det;
    w[0] = 1.0 - w[1] - w[2] - w[3];
    return fabs(w[0]) + fabs(w[1]) + fabs(w[2]) + fabs(w[3]) < 100.0;
}

static sinew_result sliding_finish(const sinew_host_api* host, ps_model* m);

/* A full turn and the angle between neighbouring anchors of a ring. */
static const double two_pi = 6.283185307179586;
static const double ring_step = 6.283185307179586 / PS_SLIDE_RING;

/* An orthonormal frame (dir, u, v) around the unit bone direction dir. */
static void bone_frame(const double dir[3], double u[3], double v[3])
{
    double a[3] = {0.0, 0.0, 0.0};
    int least = fabs(dir[0]) <= fabs(dir[1]) ? (fabs(dir[0]) <= fabs(dir[2]) ? 0 : 2)
                                             : (fabs(dir[1]) <= fabs(dir[2]) ? 1 : 2);
    a[least] = 1.0;
    ps_cross3(dir, a, u);
    double ul = sqrt(ps_dot3(u, u));
    for (int k = 0; k < 3; ++k) u[k] /= ul;
    ps_cross3(dir, u, v);
}

/* The joint ring and the bone ring of bone b at its end e (Fig. 7), appended at
 * m->slide_anchors + *ac: the joint ring on the joint sphere moves with the half rotation of
 * the joint's incoming bone and outgoing skinning matrix, the bone ring on the capsule with
 * the bone. Returns the first anchor, or PS_NONE where the pair gets no rings. */
static uint32_t add_rings(ps_model* m, uint32_t b, uint32_t e, const uint32_t* in_bone,
                          const uint32_t* out_joint, uint32_t* ac)
{
    const ps_bone* bone = &m->bones[b];
    uint32_t j = bone->end[e];
    if (bone->end[0] == bone->end[1] || in_bone[j] == PS_NONE || out_joint[j] == PS_NONE)
        return PS_NONE;
    double c[3], o[3], dir[3];
    ps_joint_position(m, j, c);
    ps_joint_position(m, bone->end[e ^ 1u], o);
    for (int k = 0; k < 3; ++k) dir[k] = o[k] - c[k];
    double len = sqrt(ps_dot3(dir, dir));
    double rj = m->joint_radius[j];
    double reach = fmin(PS_SLIDE_REACH * rj, 0.5 * len);
    if (!(len > 0.0) || !(rj > 0.0) || !(reach > 0.0)) return PS_NONE;
    for (int k = 0; k < 3; ++k) dir[k] /= len;
    /* a frame around the bone's axis */
    double u[3], v[3];
    bone_frame(dir, u, v);
    uint32_t first = *ac;
    uint32_t half[2] = {m->bones[in_bone[j]].joint, out_joint[j]};
    for (uint32_t r = 0; r < 2u * PS_SLIDE_RING; ++r) {
        ps_slide_anchor* an = &m->slide_anchors[(*ac)++];
        bool joint_ring = r < PS_SLIDE_RING;
        double th = joint_ring ? ring_step * r : ring_step * ((double)(r - PS_SLIDE_RING) + 0.5);
        double rad = joint_ring ? rj : bone->radius;
        double ax = joint_ring ? 0.0 : reach;
        for (int k = 0; k < 3; ++k)
            an->rest[k] = c[k] + ax * dir[k] + rad * (cos(th) * u[k] + sin(th) * v[k]);
        an->center = j;
        an->joint[0] = joint_ring ? half[0] : bone->joint;
        an->joint[1] = joint_ring ? half[1] : bone->joint;
        /* the frame of the pair, kept for the vertices below */
        if (r == 0) {
            memcpy(an->axis, dir, sizeof an->axis);
            memcpy(an->ref, u, sizeof an->ref);
            an->reach = reach;
        }
    }
    return first;
}

/* Rings per (bone, end): anchors 2 K from pair_of[2 b + e] (PS_NONE: no rings). */
static void build_rings(ps_model* m, uint32_t* pair_of, const uint32_t* in_bone,
                        const uint32_t* out_joint)
{
    uint32_t ac = 0;
    for (uint32_t b = 0; b < m->bone_count; ++b)
        for (uint32_t e = 0; e < 2; ++e)
            pair_of[2u * b + e] = add_rings(m, b, e, in_bone, out_joint, &ac);
    m->slide_anchor_count = ac;
}

/* Base vertices between a joint centre and a bone ring: of the joints at the ends of the
 * vertex's bone, the nearest, and at that joint the bone whose direction is closest to
 * the vertex's (a vertex on the parent's side of the sphere slides with the parent's
 * rings even when it was bound to the child). False when base vertex t is in no such
 * place; else the bone and its end in *b and *end. */
static bool slide_pair(const ps_model* m, const uint32_t* pair_of, uint32_t t, uint32_t* b,
                       uint32_t* end)
{
    const double* q = m->rest + 3u * t;
    const ps_bone* own = &m->bones[m->vertex_bone[t]];
    double best_dist = DBL_MAX;
    *b = PS_NONE;
    *end = PS_NONE;
    for (uint32_t oe = 0; oe < 2; ++oe) {
        uint32_t j = own->end[oe];
        double c[3], d[3];
        ps_joint_position(m, j, c);
        for (int k = 0; k < 3; ++k) d[k] = q[k] - c[k];
        double dist = sqrt(ps_dot3(d, d));
        double top = -DBL_MAX;
        uint32_t tb = PS_NONE, te = PS_NONE;
        for (uint32_t bb = 0; bb < m->bone_count; ++bb)
            for (uint32_t e = 0; e < 2; ++e) {
                if (m->bones[bb].end[e] != j || pair_of[2u * bb + e] == PS_NONE) continue;
                const ps_slide_anchor* f = &m->slide_anchors[pair_of[2u * bb + e]];
                double axial = ps_dot3(d, f->axis);
                if (axial > top) top = axial, tb = bb, te = e;
            }
        if (tb == PS_NONE) continue;
        const ps_slide_anchor* f = &m->slide_anchors[pair_of[2u * tb + te]];
        if (top < 0.0 || top > f->reach || dist >= best_dist) continue;
        best_dist = dist, *b = tb, *end = te;
    }
    return *b != PS_NONE;
}

/* The record of base vertex t sliding with bone b's rings at its end e: the two joint-ring
 * and the two bone-ring anchors around its angle, and its affine weights in them. False when
 * those four are too flat to trust. */
static bool make_record(const ps_model* m, const uint32_t* pair_of, uint32_t t, uint32_t b,
                        uint32_t e, ps_slide_vertex* sv)
{
    const double* q = m->rest + 3u * t;
    const ps_bone* bone = &m->bones[b];
    uint32_t p0 = pair_of[2u * b + e];
    const ps_slide_anchor* f = &m->slide_anchors[p0];
    double c[3], d[3], v[3];
    ps_joint_position(m, bone->end[e], c);
    for (int k = 0; k < 3; ++k) d[k] = q[k] - c[k];
    ps_cross3(f->axis, f->ref, v);
    double phi = atan2(ps_dot3(d, v), ps_dot3(d, f->ref));
    if (phi < 0.0) phi += two_pi;
    uint32_t k0 = (uint32_t)floor(phi / ring_step) % PS_SLIDE_RING;
    double pb = phi - 0.5 * ring_step;
    if (pb < 0.0) pb += two_pi;
    uint32_t m0 = (uint32_t)floor(pb / ring_step) % PS_SLIDE_RING;
    sv->vertex = t;
    sv->joint = bone->end[e];
    sv->anchor[0] = p0 + k0;
    sv->anchor[1] = p0 + (k0 + 1u) % PS_SLIDE_RING;
    sv->anchor[2] = p0 + PS_SLIDE_RING + m0;
    sv->anchor[3] = p0 + PS_SLIDE_RING + (m0 + 1u) % PS_SLIDE_RING;
    const double* A[4];
    for (int a = 0; a < 4; ++a) A[a] = m->slide_anchors[sv->anchor[a]].rest;
    return affine_weights(A, q, sv->weight);
}

/* A record for every base vertex that slides (slide_pair) and has trustworthy weights. */
static void build_records(ps_model* m, const uint32_t* pair_of)
{
    uint32_t vc = 0;
    for (uint32_t i = 0; i < m->n; ++i) {
        uint32_t t = m->n + i, b, e;
        if (!slide_pair(m, pair_of, t, &b, &e)) continue;
        if (!make_record(m, pair_of, t, b, e, &m->slide_vertices[vc])) continue;
        ++vc;
    }
    m->slide_vertex_count = vc;
}

sinew_result ps_sliding_build(const sinew_host_api* host, ps_model* m)
{
    uint32_t n = m->n, jc = m->joint_count, bc = m->bone_count;
    /* Pairs (joint, bone at it) that get rings: at most 2 per bone. */
    uint32_t* pair_of = (uint32_t*)sinew_host_calloc(host, 2u * (size_t)bc + 1u, sizeof(uint32_t));
    uint32_t* in_bone = (uint32_t*)sinew_host_calloc(host, jc, sizeof(uint32_t));
    uint32_t* out_joint = (uint32_t*)sinew_host_calloc(host, jc, sizeof(uint32_t));
    m->slide_anchors = (ps_slide_anchor*)sinew_host_calloc(
        host, 2u * (size_t)bc * 2u * PS_SLIDE_RING + 1u, sizeof(ps_slide_anchor));
    m->slide_vertices = (ps_slide_vertex*)sinew_host_calloc(host, n ? n : 1u, sizeof(ps_slide_vertex));
    sinew_result r = SINEW_OK;
    if (!pair_of || !in_bone || !out_joint || !m->slide_anchors || !m->slide_vertices) {
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps sliding: out of memory");
    } else {
        for (uint32_t j = 0; j < jc; ++j) joint_pairs(m, j, &in_bone[j], &out_joint[j]);
        build_rings(m, pair_of, in_bone, out_joint);
        build_records(m, pair_of);
    }
    sinew_host_free(host, pair_of);
    sinew_host_free(host, in_bone);
    sinew_host_free(host, out_joint);
    return r == SINEW_OK ? sliding_finish(host, m) : r;
}

static sinew_result sliding_finish(const sinew_host_api* host, ps_model* m)
{
    /* p0: the rest evaluation, by the very code the run time uses. Records whose rest base
     * vertex is off the skeleton surface (inside vertices, Sec. 3.2) keep their rigid anchor. */
    ps_slide* s = NULL;
    sinew_result r = ps_slide_create(host, m, &s);
    if (r != SINEW_OK) return r;
    pose(s, NULL);
    uint32_t kept = 0;
    double tol = 1e-6 * m->diagonal;
    for (uint32_t i = 0; i < m->slide_vertex_count; ++i) {
        ps_slide_vertex v = m->slide_vertices[i];
        evaluate(s, &v, v.p0);
        const double* q = m->rest + 3u * v.vertex;
        double d2 = 0.0;
        for (int k = 0; k < 3; ++k) d2 += (v.p0[k] - q[k]) * (v.p0[k] - q[k]);
        if (!(d2 <= tol * tol)) continue;
        m->slide_vertices[kept++] = v;
    }
    m->slide_vertex_count = kept;
    ps_slide_destroy(s);
    return SINEW_OK;
}
