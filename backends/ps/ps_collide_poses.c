/* The candidate pairs of projective skinning's local collisions from simulated extreme poses
 * (Komaritzan and Botsch 2018, Sec. 5.1; collision_candidates=poses): every chosen joint bent by
 * PS_COLLIDE_ANGLES about PS_COLLIDE_AXES axes perpendicular to its child bone, the bent shapes
 * from the PD solver itself (ps_sim with the rig's model, quasi-static: damping 0), ramped over
 * a few steps and then held, because the skin that folds at a joint is what the simulation
 * makes of it, not what rigid or blended skinning would give; the skin vertices inside a tet of
 * the other side of the joint (vertex-in-tet through a spatial hash), detected at every ramp
 * step too (a vertex that has gone through the other side's thin tissue layer is inside no tet
 * any more), split by the plane through the joint and paired with the closest vertex of the
 * other patch (README.md, `collision_candidates`, has the count and the cost on the male).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps_internal.h"

#define PS_COLLIDE_AXES 4u
static const double ps_collide_angles[] = {120.0, 150.0};
enum { PS_COLLIDE_ANGLE_COUNT = 2, PS_COLLIDE_RAMP = 6, PS_COLLIDE_HOLD = 8 };

/* ---- vertex-in-tetrahedron tests through a spatial hash ---- */

typedef struct tet_hash {
    uint32_t size; /* buckets, a power of two */
    double cell;
    uint32_t* offsets; /* size + 1 */
    uint32_t* items;
} tet_hash;

static uint32_t hash_cell(int64_t x, int64_t y, int64_t z, uint32_t size)
{
    uint64_t h = (uint64_t)x * 73856093u ^ (uint64_t)y * 19349663u ^ (uint64_t)z * 83492791u;
    return (uint32_t)(h & (size - 1u));
}

/* Counting pass then filling pass over the cells each tet's bounding box touches. */
static sinew_result hash_build(const sinew_host_api* host, const ps_model* m, const double* x,
                               uint32_t N, double cell, const uint8_t* near, tet_hash* h)
{
    memset(h, 0, sizeof *h);
    h->cell = cell;
    h->size = 1u;
    while (h->size < 2u * m->tet_count && h->size < (1u << 26)) h->size <<= 1;
    h->offsets = (uint32_t*)sinew_host_calloc(host, (size_t)h->size + 1u, sizeof(uint32_t));
    if (!h->offsets) return SINEW_ERROR_OUT_OF_MEMORY;
    size_t total = 0;
    for (int pass = 0; pass < 2; ++pass) {
        for (uint32_t t = 0; t < m->tet_count; ++t) {
            const uint32_t* tv = m->tets + 4u * t;
            bool any = false;
            for (int k = 0; k < 4; ++k) any |= tv[k] < m->n && near[tv[k]];
            if (!any) continue;
            int64_t lo[3], hi[3];
            for (int c = 0; c < 3; ++c) {
                double a = ps_col_at(x, N, tv[0], c), b = a;
                for (int k = 1; k < 4; ++k) {
                    double q = ps_col_at(x, N, tv[k], c);
                    a = fmin(a, q);
                    b = fmax(b, q);
                }
                lo[c] = (int64_t)floor(a / cell);
                hi[c] = (int64_t)floor(b / cell);
            }
            for (int64_t i = lo[0]; i <= hi[0]; ++i)
                for (int64_t j = lo[1]; j <= hi[1]; ++j)
                    for (int64_t k = lo[2]; k <= hi[2]; ++k) {
                        uint32_t b = hash_cell(i, j, k, h->size);
                        if (pass == 0) {
                            h->offsets[b + 1u]++;
                            ++total;
                        } else {
                            h->items[h->offsets[b]++] = t;
                        }
                    }
        }
        if (pass == 0) {
            for (uint32_t b = 0; b < h->size; ++b) h->offsets[b + 1u] += h->offsets[b];
            h->items = (uint32_t*)sinew_host_calloc(host, total ? total : 1u, sizeof(uint32_t));
            if (!h->items) return SINEW_ERROR_OUT_OF_MEMORY;
        }
    }
    /* The filling pass moved every offset to the end of its bucket: shift back. */
    for (uint32_t b = h->size; b > 0; --b) h->offsets[b] = h->offsets[b - 1u];
    h->offsets[0] = 0;
    return SINEW_OK;
}

static void hash_free(const sinew_host_api* host, tet_hash* h)
{
    sinew_host_free(host, h->offsets);
    sinew_host_free(host, h->items);
}

static double det3(const double a[3], const double b[3], const double c[3])
{
    return a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
           a[2] * (b[0] * c[1] - b[1] * c[0]);
}

/* Strictly inside (all barycentric coordinates above a small margin), whatever the tet's
 * orientation in the posed mesh. */
static bool in_tet(const double* x, uint32_t N, const uint32_t tv[4], const double p[3])
{
    double q[4][3];
    for (int k = 0; k < 4; ++k)
        for (int c = 0; c < 3; ++c) q[k][c] = ps_col_at(x, N, tv[k], c);
    double e1[3], e2[3], e3[3], d[3];
    for (int c = 0; c < 3; ++c) {
        e1[c] = q[1][c] - q[0][c];
        e2[c] = q[2][c] - q[0][c];
        e3[c] = q[3][c] - q[0][c];
        d[c] = p[c] - q[0][c];
    }
    double V = det3(e1, e2, e3);
    if (!(fabs(V) > 1e-30)) return false;
    double b1 = det3(d, e2, e3) / V, b2 = det3(e1, d, e3) / V, b3 = det3(e1, e2, d) / V;
    double b0 = 1.0 - b1 - b2 - b3;
    const double eps = 1e-4;
    return b0 > eps && b1 > eps && b2 > eps && b3 > eps;
}

/* ---- the extreme poses ---- */

static void rotation(const double axis[3], double deg, double R[9])
{
    double a = deg * 3.14159265358979323846 / 180.0, c = cos(a), s = sin(a), t = 1.0 - c;
    double x = axis[0], y = axis[1], z = axis[2];
    R[0] = t * x * x + c, R[1] = t * x * y - s * z, R[2] = t * x * z + s * y;
    R[3] = t * x * y + s * z, R[4] = t * y * y + c, R[5] = t * y * z - s * x;
    R[6] = t * x * z - s * y, R[7] = t * y * z + s * x, R[8] = t * z * z + c;
}

/* Skinning matrices (column-major 4x4) that rotate joint j's subtree by R about point c. */
static void bent_pose(const sinew_rig_view* rig, const uint8_t* in_subtree, const double R[9],
                      const double c[3], float* out)
{
    for (uint32_t q = 0; q < rig->joint_count; ++q) {
        float* T = out + 16u * q;
        memset(T, 0, 16u * sizeof(float));
        if (!in_subtree[q]) {
            T[0] = T[5] = T[10] = T[15] = 1.0f;
            continue;
        }
        for (int r = 0; r < 3; ++r) {
            for (int k = 0; k < 3; ++k) T[4 * k + r] = (float)R[3 * r + k];
            T[12 + r] = (float)(c[r] - (R[3 * r] * c[0] + R[3 * r + 1] * c[1] + R[3 * r + 2] * c[2]));
        }
        T[15] = 1.0f;
    }
}

/* One query of detect_pose: the tets of the hash bucket of skin vertex v that lie mostly on
 * the other side of the joint and hold v strictly inside; each one's skin vertices of the other
 * side are marked when `mark` is given. Returns whether there was one. */
static bool detect_vertex(const ps_model* m, const double* x, const tet_hash* h,
                          const uint8_t* moved, uint32_t v, uint8_t* mark)
{
    uint32_t n = m->n, N = 2u * n;
    double p[3] = {ps_col_at(x, N, v, 0), ps_col_at(x, N, v, 1), ps_col_at(x, N, v, 2)};
    uint32_t b = hash_cell((int64_t)floor(p[0] / h->cell), (int64_t)floor(p[1] / h->cell),
                           (int64_t)floor(p[2] / h->cell), h->size);
    bool hit = false;
    for (uint32_t e = h->offsets[b]; e < h->offsets[b + 1u]; ++e) {
        uint32_t t = h->items[e];
        const uint32_t* tv = m->tets + 4u * t;
        uint32_t skin[4], sc = 0, other = 0;
        bool own = false;
        for (int k = 0; k < 4; ++k) {
            if (tv[k] == v || tv[k] == v + n) own = true;
            if (tv[k] < n) skin[sc++] = tv[k];
        }
        if (own) continue;
        for (uint32_t k = 0; k < sc; ++k) other += moved[skin[k]] != moved[v];
        if (2u * other <= sc) continue; /* the tet is mostly on v's own side */
        if (!in_tet(x, N, tv, p)) continue;
        hit = true;
        if (!mark) return true;
        for (uint32_t k = 0; k < sc; ++k)
            if (moved[skin[k]] != moved[v]) mark[skin[k]] = 1;
    }
    return hit;
}

typedef struct detect_ctx {
    const ps_model* m;
    const double* x;
    const tet_hash* h;
    const uint8_t* moved;
    const uint8_t* near;
    uint8_t* hit; /* per skin vertex, written only by the job that owns it */
} detect_ctx;

static void detect_range(void* data, uint32_t begin, uint32_t end)
{
    const detect_ctx* d = (const detect_ctx*)data;
    for (uint32_t v = begin; v < end; ++v)
        d->hit[v] = d->near[v] && detect_vertex(d->m, d->x, d->h, d->moved, v, NULL);
}

/* Sec. 5.1, detection in one posed shape x: marks (without clearing) the skin vertices inside
 * a tet of the other side of the joint and those tets' skin vertices of the other side. Only
 * skin vertices and tets `near` the joint take part: the bent side turns about the joint, so
 * nothing farther from it than the bent side's farthest vertex can meet it. The queries run
 * over the job system (each writes its own vertex's flag); the few hits then mark their tets'
 * vertices in a serial pass. */
static sinew_result detect_pose(const sinew_host_api* host, const ps_model* m, const double* x,
                                const uint8_t* moved, const uint8_t* near, uint8_t* hit,
                                uint8_t* mark)
{
    uint32_t n = m->n, N = 2u * n;
    tet_hash h;
    sinew_result r = hash_build(host, m, x, N, fmax(m->thickness, 1e-12), near, &h);
    if (r != SINEW_OK) {
        hash_free(host, &h);
        return sinew_host_fail(host, r, "ps collisions: out of memory for the spatial hash");
    }
    detect_ctx d = {m, x, &h, moved, near, hit};
    sinew_host_parallel_for(host, detect_range, &d, n, 256u);
    for (uint32_t v = 0; v < n; ++v)
        if (hit[v]) {
            mark[v] = 1;
            detect_vertex(m, x, &h, moved, v, mark);
        }
    hash_free(host, &h);
    return SINEW_OK;
}

/* Sec. 5.1 for one extreme pose: the colliding skin vertices (marked over the ramp into the
 * pose, detect_pose), split by the plane through the joint, paired with the closest vertex
 * of the other patch in the extreme pose x. */
static sinew_result collect_pose(const sinew_host_api* host, const ps_model* m, const double* x,
                                 const double jrest[3], const double jpos[3],
                                 const double axis[3], const double far_in_rest[3],
                                 uint32_t bone_in, uint32_t bone_out, uint32_t joint,
                                 uint8_t* mark, uint32_t* list, ps_pair_list* out)
{
    uint32_t n = m->n, N = 2u * n;
    uint32_t count = 0;
    for (uint32_t v = 0; v < n; ++v)
        if (mark[v]) list[count++] = v;
    if (count < 2) return SINEW_OK;
    /* x_c: the colliding vertex closest to the joint in the colliding pose. */
    uint32_t c = list[0];
    double best = INFINITY;
    for (uint32_t k = 0; k < count; ++k) {
        double d2 = 0.0;
        for (int q = 0; q < 3; ++q) {
            double d = ps_col_at(x, N, list[k], q) - jpos[q];
            d2 += d * d;
        }
        if (d2 < best) best = d2, c = list[k];
    }
    /* n = (x_c - j) x (b1 x b2), split in the rest pose, where b1 x b2 is the bend axis. */
    double rc[3], nrm[3];
    for (int q = 0; q < 3; ++q) rc[q] = m->rest[3u * c + q] - jrest[q];
    ps_cross3(rc, axis, nrm);
    double fr[3] = {far_in_rest[0] - jrest[0], far_in_rest[1] - jrest[1], far_in_rest[2] - jrest[2]};
    double side_in = ps_dot3(fr, nrm);
    if (side_in == 0.0) return SINEW_OK;
    for (uint32_t k = 0; k < count; ++k) {
        uint32_t v = list[k];
        double d[3] = {m->rest[3u * v] - jrest[0], m->rest[3u * v + 1] - jrest[1],
                       m->rest[3u * v + 2] - jrest[2]};
        mark[v] = ps_dot3(d, nrm) * side_in > 0.0 ? 1 : 2; /* 1: P1 (incoming bone's side) */
    }
    /* Each vertex of one patch with the closest vertex of the other, in the colliding pose
     * (both directions, so that every colliding vertex is in some pair). */
    for (uint32_t k = 0; k < count; ++k) {
        uint32_t v = list[k], bestv = PS_NONE;
        double bd = INFINITY, xv[3];
        for (int q = 0; q < 3; ++q) xv[q] = ps_col_at(x, N, v, q);
        for (uint32_t l = 0; l < count; ++l) {
            uint32_t w = list[l];
            if (mark[w] == mark[v]) continue;
            double d2 = 0.0;
            for (int q = 0; q < 3; ++q) {
                double d = xv[q] - ps_col_at(x, N, w, q);
                d2 += d * d;
            }
            if (d2 < bd) bd = d2, bestv = w;
        }
        if (bestv == PS_NONE) continue;
        ps_collision_pair p;
        p.i = mark[v] == 1 ? v : bestv;
        p.j = mark[v] == 1 ? bestv : v;
        p.bone_i = bone_in;
        p.bone_j = bone_out;
        p.joint = joint;
        if (!ps_pair_push(host, out, p))
            return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                                   "ps collisions: out of memory for candidate pairs");
    }
    return SINEW_OK;
}

/* The offline search of Sec. 5.1: the rig and model, the offline simulation, the scratch of
 * one joint's poses (per joint: chosen, in the bent subtree; per skin vertex: on the bent
 * side, colliding, near the joint, hit, listed) and the pairs found so far. */
typedef struct poses_search {
    const sinew_host_api* host;
    const sinew_rig_view* rig;
    ps_model* m;
    ps_sim* sim;
    uint8_t* chosen;
    uint8_t* subtree;
    uint8_t* moved;
    uint8_t* mark;
    uint8_t* near;
    uint8_t* hit;
    uint32_t* list;
    float* pose; /* skinning matrices of the current bent pose */
    float* skin; /* the rest skin, where every pose's simulation starts */
    ps_pair_list pairs;
} poses_search;

/* One chosen joint as its extreme poses see it: its representative, incoming and outgoing
 * bones, rest position, the far end of the incoming bone, and two unit axes perpendicular
 * to the child bone that the bend axes are combined from. */
typedef struct joint_bend {
    uint32_t rep, in, out;
    double jr[3], far_in[3], u[3], w[3];
} joint_bend;

/* Allocates the scratch of the search; false when any of it is missing. */
static bool search_alloc(poses_search* s)
{
    uint32_t jn = s->m->joint_count, n = s->m->n;
    s->chosen = (uint8_t*)sinew_host_calloc(s->host, jn, 1);
    s->subtree = (uint8_t*)sinew_host_calloc(s->host, jn, 1);
    s->moved = (uint8_t*)sinew_host_calloc(s->host, n, 1);
    s->mark = (uint8_t*)sinew_host_calloc(s->host, n, 1);
    s->near = (uint8_t*)sinew_host_calloc(s->host, n ? n : 1u, 1);
    s->hit = (uint8_t*)sinew_host_calloc(s->host, n ? n : 1u, 1);
    s->list = (uint32_t*)sinew_host_calloc(s->host, n, sizeof(uint32_t));
    s->pose = (float*)sinew_host_calloc(s->host, jn, 16u * sizeof(float));
    s->skin = (float*)sinew_host_calloc(s->host, n, 3u * sizeof(float));
    return s->chosen && s->subtree && s->moved && s->mark && s->near && s->hit && s->list &&
           s->pose && s->skin;
}

/* Frees the offline simulation, the pairs found and the scratch. */
static void search_free(poses_search* s)
{
    ps_sim_destroy(s->sim);
    sinew_host_free(s->host, s->pairs.items);
    sinew_host_free(s->host, s->chosen);
    sinew_host_free(s->host, s->subtree);
    sinew_host_free(s->host, s->moved);
    sinew_host_free(s->host, s->mark);
    sinew_host_free(s->host, s->near);
    sinew_host_free(s->host, s->hit);
    sinew_host_free(s->host, s->list);
    sinew_host_free(s->host, s->pose);
    sinew_host_free(s->host, s->skin);
}

/* The subtree of j: descendants of j (parents precede nothing in particular, so iterate to a
 * fixed point). */
static void joint_subtree(const sinew_rig_view* rig, uint32_t j, uint8_t* subtree)
{
    uint32_t jn = rig->joint_count;
    memset(subtree, 0, jn);
    subtree[j] = 1;
    for (bool grew = true; grew;) {
        grew = false;
        for (uint32_t q = 0; q < jn; ++q)
            if (!subtree[q] && rig->parents[q] >= 0 && subtree[rig->parents[q]])
                subtree[q] = 1, grew = true;
    }
}

/* The skin vertices near the joint at jr: the reach of the bent side is its farthest skin
 * vertex from the joint (a rotation about the joint keeps that distance), plus room for the
 * tissue's own give. */
static void near_vertices(const ps_model* m, const uint8_t* moved, const double jr[3],
                          uint8_t* near)
{
    double reach = 0.0;
    for (uint32_t i = 0; i < m->n; ++i) {
        if (!moved[i]) continue;
        double dd[3] = {m->rest[3u * i] - jr[0], m->rest[3u * i + 1] - jr[1],
                        m->rest[3u * i + 2] - jr[2]};
        reach = fmax(reach, ps_dot3(dd, dd));
    }
    reach = 1.1 * sqrt(reach) + 2.0 * m->thickness;
    for (uint32_t i = 0; i < m->n; ++i) {
        double dd[3] = {m->rest[3u * i] - jr[0], m->rest[3u * i + 1] - jr[1],
                        m->rest[3u * i + 2] - jr[2]};
        near[i] = ps_dot3(dd, dd) <= reach * reach;
    }
}

/* Joint j's bones and position, the far end of its incoming bone, and the axes u, w
 * perpendicular to its child bone. */
static void joint_bend_setup(const ps_model* m, uint32_t j, joint_bend* b)
{
    uint32_t cc;
    b->rep = m->joint_rep[j];
    ps_joint_bones(m, j, &b->in, &b->out, &cc);
    double child[3], d[3];
    ps_joint_position(m, b->rep, b->jr);
    ps_joint_position(m, m->bones[b->in].end[0], b->far_in);
    ps_joint_position(m, m->bones[b->out].end[1], child);
    for (int k = 0; k < 3; ++k) d[k] = child[k] - b->jr[k];
    ps_normalize3(d);
    double ref[3] = {1.0, 0.0, 0.0};
    if (fabs(d[0]) > 0.9) ref[0] = 0.0, ref[1] = 1.0;
    ps_cross3(d, ref, b->u);
    ps_normalize3(b->u);
    ps_cross3(d, b->u, b->w);
}

/* One extreme pose of Sec. 5.1: the subtree bent by `degrees` about `axis`, ramped over
 * PS_COLLIDE_RAMP steps from the rest skin and then held, the colliding vertices detected
 * along the way and in the end, then split and paired (collect_pose). */
static sinew_result extreme_pose(poses_search* c, const joint_bend* b, const double axis[3],
                                 double degrees)
{
    const ps_model* m = c->m;
    ps_sim_set_skin(c->sim, c->skin, NULL);
    memset(c->mark, 0, m->n);
    double R[9];
    sinew_result r = SINEW_OK;
    for (int s = 1; s <= PS_COLLIDE_RAMP + PS_COLLIDE_HOLD && r == SINEW_OK; ++s) {
        double f = s < PS_COLLIDE_RAMP ? (double)s / PS_COLLIDE_RAMP : 1.0;
        rotation(axis, f * degrees, R);
        bent_pose(c->rig, c->subtree, R, b->jr, c->pose);
        ps_sim_set_pose(c->sim, c->pose);
        r = ps_sim_step(c->sim, NULL);
        /* Detection along the ramp too: a vertex that has gone through the other
         * side's tissue layer into its bone is inside no tet any more, so the
         * extreme pose alone misses the deepest part of the fold. */
        if (r == SINEW_OK && s <= PS_COLLIDE_RAMP + 1)
            r = detect_pose(c->host, m, ps_sim_positions(c->sim), c->moved, c->near, c->hit,
                            c->mark);
    }
    if (r == SINEW_OK)
        r = detect_pose(c->host, m, ps_sim_positions(c->sim), c->moved, c->near, c->hit, c->mark);
    if (r == SINEW_OK)
        r = collect_pose(c->host, m, ps_sim_positions(c->sim), b->jr, b->jr, axis, b->far_in,
                         b->in, b->out, b->rep, c->mark, c->list, &c->pairs);
    return r;
}

/* The candidates of chosen joint j: its subtree bent to every angle about every axis. */
static sinew_result joint_candidates(poses_search* c, uint32_t j)
{
    const ps_model* m = c->m;
    joint_bend b;
    joint_bend_setup(m, j, &b);
    joint_subtree(c->rig, j, c->subtree);
    for (uint32_t i = 0; i < m->n; ++i)
        c->moved[i] = c->subtree[m->bones[m->vertex_bone[i]].joint];
    near_vertices(m, c->moved, b.jr, c->near);
    sinew_result r = SINEW_OK;
    for (uint32_t a = 0; a < PS_COLLIDE_AXES && r == SINEW_OK; ++a) {
        double phi = 2.0 * 3.14159265358979323846 * a / PS_COLLIDE_AXES;
        double axis[3];
        for (int k = 0; k < 3; ++k) axis[k] = cos(phi) * b.u[k] + sin(phi) * b.w[k];
        for (int g = 0; g < PS_COLLIDE_ANGLE_COUNT && r == SINEW_OK; ++g)
            r = extreme_pose(c, &b, axis, ps_collide_angles[g]);
    }
    return r;
}

/* The offline simulation: quasi-static (no momentum), no collisions. */
static sinew_result offline_sim(poses_search* c, const ps_params* params)
{
    ps_params sp = *params;
    sp.collisions = 0;
    sp.damping = 0.0;
    sp.profile = 0;
    return ps_sim_create(c->host, c->m, &sp, &c->sim);
}

sinew_result ps_collide_candidates(const sinew_host_api* host, const sinew_rig_view* rig,
                                   ps_model* m, const ps_params* params)
{
    poses_search c;
    memset(&c, 0, sizeof c);
    c.host = host;
    c.rig = rig;
    c.m = m;
    sinew_result r = SINEW_OK;
    if (!search_alloc(&c))
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps collisions: out of memory");
    uint32_t joint_count = 0;
    if (r == SINEW_OK)
        r = ps_collide_select(host, rig, m, params->collision_joints, c.chosen, &joint_count);
    if (r == SINEW_OK && joint_count > 0) r = offline_sim(&c, params);
    if (r == SINEW_OK)
        for (uint32_t i = 0; i < m->n; ++i)
            for (int k = 0; k < 3; ++k) c.skin[3u * i + k] = (float)m->rest[3u * i + k];
    for (uint32_t j = 0; j < m->joint_count && r == SINEW_OK; ++j)
        if (c.chosen[j]) r = joint_candidates(&c, j);
    if (r == SINEW_OK) r = ps_pair_store(host, &c.pairs, m);
    if (r == SINEW_OK) {
        sinew_host_log(host, SINEW_LOG_INFO,
                       "ps collisions: %u candidate pairs from %u joints x %u extreme poses",
                       m->collision_pair_count, joint_count,
                       PS_COLLIDE_AXES * (uint32_t)PS_COLLIDE_ANGLE_COUNT);
    }
    search_free(&c);
    return r;
}
