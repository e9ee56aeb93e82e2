/* Local collisions of projective skinning (Komaritzan and Botsch 2018, Sec. 5): candidate pairs
 * precomputed from automatically generated extreme poses (Sec. 5.1), the angle test of Fig. 10
 * at run time (Sec. 5.2), and the mid-plane projection that feeds the collision constraints of
 * the second prefactored matrix (Sec. 5.3; the matrix itself lives in ps_sim.c).
 * SPDX-License-Identifier: MIT
 *
 * Extreme poses: every chosen joint is bent by PS_COLLIDE_ANGLES about PS_COLLIDE_AXES axes
 * perpendicular to its child bone. The bent shapes come from the PD solver itself (ps_sim with
 * the rig's model, quasi-static: damping 0), ramped over a few steps and then held, because the
 * skin that folds at a joint is what the simulation makes of it, not what rigid or blended
 * skinning would give; on the male (4651 simulated vertices) this costs about 0.22 s a pose
 * (88 poses, 19 s of the 20 s bake).
 *
 * Joints (Sec. 5.1 names elbows, shoulders, hip/crotch and knees): `collision_joints` names them
 * explicitly; otherwise every joint whose name contains one of the common fold names (H-Anim,
 * Mixamo/BCN-like, case-insensitive), and when no name matches, every joint with exactly one
 * child bone whose length is within a factor 2 of its incoming bone (a limb's middle joint). */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "ps_internal.h"

#define PS_COLLIDE_AXES 4u
static const double ps_collide_angles[] = {120.0, 150.0};
enum { PS_COLLIDE_ANGLE_COUNT = 2, PS_COLLIDE_RAMP = 6, PS_COLLIDE_HOLD = 8 };

/* ---- joint selection ---- */

static bool contains_ci(const char* hay, const char* needle)
{
    size_t nl = strlen(needle);
    for (const char* h = hay; *h; ++h) {
        size_t k = 0;
        while (k < nl && h[k] && tolower((unsigned char)h[k]) == needle[k]) ++k;
        if (k == nl) return true;
    }
    return false;
}

/* H-Anim vertebrae: vl1..vl5, vt1..vt12 (lumbar and thoracic spine). */
static bool is_vertebra(const char* name)
{
    return (tolower((unsigned char)name[0]) == 'v') &&
           (tolower((unsigned char)name[1]) == 'l' || tolower((unsigned char)name[1]) == 't') &&
           isdigit((unsigned char)name[2]);
}

static bool fold_name(const char* name)
{
    static const char* const names[] = {"elbow",  "knee",     "shoulder", "hip",   "spine",
                                        "forearm", "calf",    "upperarm", "thigh", "upleg",
                                        "leg",     "lowerarm"};
    if (!name || !*name) return false;
    if (is_vertebra(name)) return true;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (contains_ci(name, names[i])) return true;
    return false;
}

/* The bone into joint rep r (PS_NONE for none) and the child bone that continues it best (the
 * one most aligned with the incoming direction; PS_NONE for none). */
static void joint_bones(const ps_model* m, uint32_t j, uint32_t* in, uint32_t* out,
                        uint32_t* child_count)
{
    uint32_t r = m->joint_rep[j];
    *in = *out = PS_NONE;
    *child_count = 0;
    for (uint32_t b = 0; b < m->bone_count; ++b)
        if (m->bones[b].end[1] == r && m->bones[b].end[0] != r) *in = b;
    double best = -2.0, din[3] = {0.0, 0.0, 0.0};
    if (*in != PS_NONE) {
        double a[3], e[3];
        ps_joint_position(m, m->bones[*in].end[0], a);
        ps_joint_position(m, r, e);
        double l = 0.0;
        for (int k = 0; k < 3; ++k) din[k] = e[k] - a[k], l += din[k] * din[k];
        l = sqrt(l);
        if (l > 0.0)
            for (int k = 0; k < 3; ++k) din[k] /= l;
    }
    for (uint32_t b = 0; b < m->bone_count; ++b) {
        if (m->bones[b].end[0] != r || m->bones[b].end[1] == r) continue;
        ++*child_count;
        double a[3], e[3], d[3], l = 0.0;
        ps_joint_position(m, r, a);
        ps_joint_position(m, m->bones[b].end[1], e);
        for (int k = 0; k < 3; ++k) d[k] = e[k] - a[k], l += d[k] * d[k];
        l = sqrt(l);
        double c = l > 0.0 ? (d[0] * din[0] + d[1] * din[1] + d[2] * din[2]) / l : -1.0;
        if (c > best) best = c, *out = b;
    }
}

static double bone_length(const ps_model* m, uint32_t b)
{
    double a[3], e[3];
    ps_joint_position(m, m->bones[b].end[0], a);
    ps_joint_position(m, m->bones[b].end[1], e);
    return sqrt((a[0] - e[0]) * (a[0] - e[0]) + (a[1] - e[1]) * (a[1] - e[1]) +
                (a[2] - e[2]) * (a[2] - e[2]));
}

sinew_result ps_collide_select(const sinew_host_api* host, const sinew_rig_view* rig,
                               const ps_model* m, const char* list, uint8_t* chosen,
                               uint32_t* count)
{
    uint32_t jn = m->joint_count;
    memset(chosen, 0, jn);
    *count = 0;
    if (list && *list) {
        const char* s = list;
        while (*s) {
            const char* e = strchr(s, ',');
            size_t len = e ? (size_t)(e - s) : strlen(s);
            uint32_t found = PS_NONE;
            for (uint32_t j = 0; j < jn && found == PS_NONE; ++j) {
                const char* name = rig->names[j] ? rig->names[j] : "";
                if (strlen(name) == len && len > 0 && strncmp(name, s, len) == 0) found = j;
            }
            if (found == PS_NONE)
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "ps: collision_joints names \"%.*s\", which is no joint of "
                                       "the rig", (int)len, s);
            uint32_t in, out, cc;
            joint_bones(m, found, &in, &out, &cc);
            if (in == PS_NONE || out == PS_NONE)
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "ps: collision_joints names \"%.*s\", which does not join "
                                       "two bones", (int)len, s);
            if (!chosen[found]) ++*count;
            chosen[found] = 1;
            s = e ? e + 1 : s + len;
        }
        return SINEW_OK;
    }
    for (uint32_t j = 0; j < jn; ++j) {
        if (m->joint_rep[j] != j || !fold_name(rig->names[j])) continue;
        uint32_t in, out, cc;
        joint_bones(m, j, &in, &out, &cc);
        if (in == PS_NONE || out == PS_NONE) continue;
        chosen[j] = 1;
        ++*count;
    }
    if (*count > 0) return SINEW_OK;
    /* No fold names: the middle joints of limbs. */
    for (uint32_t j = 0; j < jn; ++j) {
        if (m->joint_rep[j] != j) continue;
        uint32_t in, out, cc;
        joint_bones(m, j, &in, &out, &cc);
        if (in == PS_NONE || out == PS_NONE || cc != 1) continue;
        double li = bone_length(m, in), lo = bone_length(m, out);
        if (!(li > 0.0) || lo < 0.5 * li || lo > 2.0 * li) continue;
        chosen[j] = 1;
        ++*count;
    }
    return SINEW_OK;
}

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

static inline double col_at(const double* x, uint32_t N, uint32_t v, int c)
{
    return x[(size_t)c * N + v];
}

/* Counting pass then filling pass over the cells each tet's bounding box touches. */
static sinew_result hash_build(const sinew_host_api* host, const ps_model* m, const double* x,
                               uint32_t N, double cell, tet_hash* h)
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
            int64_t lo[3], hi[3];
            for (int c = 0; c < 3; ++c) {
                double a = col_at(x, N, tv[0], c), b = a;
                for (int k = 1; k < 4; ++k) {
                    double q = col_at(x, N, tv[k], c);
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
        for (int c = 0; c < 3; ++c) q[k][c] = col_at(x, N, tv[k], c);
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

static void normalize3(double v[3])
{
    double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (l > 0.0) v[0] /= l, v[1] /= l, v[2] /= l;
}

static void cross3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static double dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
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

typedef struct pair_list {
    ps_collision_pair* items;
    uint32_t count, capacity;
} pair_list;

static bool pair_push(const sinew_host_api* host, pair_list* l, ps_collision_pair p)
{
    if (l->count == l->capacity) {
        uint32_t cap = l->capacity ? 2u * l->capacity : 256u;
        ps_collision_pair* n = (ps_collision_pair*)sinew_host_alloc(host, cap * sizeof *n);
        if (!n) return false;
        if (l->count) memcpy(n, l->items, l->count * sizeof *n);
        sinew_host_free(host, l->items);
        l->items = n;
        l->capacity = cap;
    }
    l->items[l->count++] = p;
    return true;
}

static int pair_cmp(const ps_collision_pair* a, const ps_collision_pair* b)
{
    const uint32_t* x = &a->i;
    const uint32_t* y = &b->i;
    for (int k = 0; k < 5; ++k)
        if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
    return 0;
}

/* Insertion-free sort of the union: a plain bottom-up merge sort (the list is at most a few
 * tens of thousands). */
static bool pair_sort_unique(const sinew_host_api* host, pair_list* l)
{
    uint32_t n = l->count;
    if (n < 2) return true;
    ps_collision_pair* tmp = (ps_collision_pair*)sinew_host_alloc(host, n * sizeof *tmp);
    if (!tmp) return false;
    ps_collision_pair* a = l->items;
    ps_collision_pair* b = tmp;
    for (uint32_t w = 1; w < n; w *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            uint32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) b[k++] = pair_cmp(&a[j], &a[i]) < 0 ? a[j++] : a[i++];
            while (i < mid) b[k++] = a[i++];
            while (j < hi) b[k++] = a[j++];
        }
        ps_collision_pair* t = a;
        a = b;
        b = t;
    }
    if (a != l->items) memcpy(l->items, a, n * sizeof *a);
    sinew_host_free(host, tmp);
    uint32_t u = 1;
    for (uint32_t i = 1; i < n; ++i)
        if (pair_cmp(&l->items[i], &l->items[u - 1]) != 0) l->items[u++] = l->items[i];
    l->count = u;
    return true;
}

/* Sec. 5.1 for one bent pose: colliding skin vertices (inside a tet of the other side of the
 * joint), split by the plane through the joint, pairs of closest vertices. */
static sinew_result collect_pose(const sinew_host_api* host, const ps_model* m, const double* x,
                                 const uint8_t* moved, const double jrest[3], const double jpos[3],
                                 const double axis[3], const double far_in_rest[3],
                                 uint32_t bone_in, uint32_t bone_out, uint32_t joint,
                                 uint8_t* mark, uint32_t* list, pair_list* out)
{
    uint32_t n = m->n, N = 2u * n;
    tet_hash h;
    sinew_result r = hash_build(host, m, x, N, fmax(m->thickness, 1e-12), &h);
    if (r != SINEW_OK) {
        hash_free(host, &h);
        return sinew_host_fail(host, r, "ps collisions: out of memory for the spatial hash");
    }
    memset(mark, 0, n);
    for (uint32_t v = 0; v < n; ++v) {
        double p[3] = {col_at(x, N, v, 0), col_at(x, N, v, 1), col_at(x, N, v, 2)};
        uint32_t b = hash_cell((int64_t)floor(p[0] / h.cell), (int64_t)floor(p[1] / h.cell),
                               (int64_t)floor(p[2] / h.cell), h.size);
        for (uint32_t e = h.offsets[b]; e < h.offsets[b + 1u]; ++e) {
            uint32_t t = h.items[e];
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
            mark[v] = 1;
            for (uint32_t k = 0; k < sc; ++k)
                if (moved[skin[k]] != moved[v]) mark[skin[k]] = 1;
        }
    }
    hash_free(host, &h);
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
            double d = col_at(x, N, list[k], q) - jpos[q];
            d2 += d * d;
        }
        if (d2 < best) best = d2, c = list[k];
    }
    /* n = (x_c - j) x (b1 x b2), split in the rest pose, where b1 x b2 is the bend axis. */
    double rc[3], nrm[3];
    for (int q = 0; q < 3; ++q) rc[q] = m->rest[3u * c + q] - jrest[q];
    cross3(rc, axis, nrm);
    double fr[3] = {far_in_rest[0] - jrest[0], far_in_rest[1] - jrest[1], far_in_rest[2] - jrest[2]};
    double side_in = dot3(fr, nrm);
    if (side_in == 0.0) return SINEW_OK;
    for (uint32_t k = 0; k < count; ++k) {
        uint32_t v = list[k];
        double d[3] = {m->rest[3u * v] - jrest[0], m->rest[3u * v + 1] - jrest[1],
                       m->rest[3u * v + 2] - jrest[2]};
        mark[v] = dot3(d, nrm) * side_in > 0.0 ? 1 : 2; /* 1: P1 (incoming bone's side) */
    }
    /* Each vertex of one patch with the closest vertex of the other, in the colliding pose
     * (both directions, so that every colliding vertex is in some pair). */
    for (uint32_t k = 0; k < count; ++k) {
        uint32_t v = list[k], bestv = PS_NONE;
        double bd = INFINITY, xv[3];
        for (int q = 0; q < 3; ++q) xv[q] = col_at(x, N, v, q);
        for (uint32_t l = 0; l < count; ++l) {
            uint32_t w = list[l];
            if (mark[w] == mark[v]) continue;
            double d2 = 0.0;
            for (int q = 0; q < 3; ++q) {
                double d = xv[q] - col_at(x, N, w, q);
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
        if (!pair_push(host, out, p))
            return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                                   "ps collisions: out of memory for candidate pairs");
    }
    return SINEW_OK;
}

sinew_result ps_collide_candidates(const sinew_host_api* host, const sinew_rig_view* rig,
                                   ps_model* m, const ps_params* params)
{
    uint32_t jn = m->joint_count, n = m->n;
    uint8_t* chosen = (uint8_t*)sinew_host_calloc(host, jn, 1);
    uint8_t* subtree = (uint8_t*)sinew_host_calloc(host, jn, 1);
    uint8_t* moved = (uint8_t*)sinew_host_calloc(host, n, 1);
    uint8_t* mark = (uint8_t*)sinew_host_calloc(host, n, 1);
    uint32_t* list = (uint32_t*)sinew_host_calloc(host, n, sizeof(uint32_t));
    float* pose = (float*)sinew_host_calloc(host, jn, 16u * sizeof(float));
    float* skin = (float*)sinew_host_calloc(host, n, 3u * sizeof(float));
    pair_list pairs = {NULL, 0, 0};
    ps_sim* sim = NULL;
    sinew_result r = SINEW_OK;
    if (!chosen || !subtree || !moved || !mark || !list || !pose || !skin) {
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps collisions: out of memory");
        goto done;
    }
    uint32_t joint_count = 0;
    r = ps_collide_select(host, rig, m, params->collision_joints, chosen, &joint_count);
    if (r != SINEW_OK) goto done;
    if (joint_count > 0) {
        /* The offline simulation: quasi-static (no momentum), no collisions. */
        ps_params sp = *params;
        sp.collisions = 0;
        sp.damping = 0.0;
        sp.profile = 0;
        r = ps_sim_create(host, m, &sp, &sim);
        if (r != SINEW_OK) goto done;
    }
    for (uint32_t i = 0; i < n; ++i)
        for (int c = 0; c < 3; ++c) skin[3u * i + c] = (float)m->rest[3u * i + c];
    for (uint32_t j = 0; j < jn && r == SINEW_OK; ++j) {
        if (!chosen[j]) continue;
        uint32_t in, out, cc, rep = m->joint_rep[j];
        joint_bones(m, j, &in, &out, &cc);
        /* The subtree of j: descendants of j (parents precede nothing in particular, so
         * iterate to a fixed point). */
        memset(subtree, 0, jn);
        subtree[j] = 1;
        for (bool grew = true; grew;) {
            grew = false;
            for (uint32_t q = 0; q < jn; ++q)
                if (!subtree[q] && rig->parents[q] >= 0 && subtree[rig->parents[q]])
                    subtree[q] = 1, grew = true;
        }
        for (uint32_t i = 0; i < n; ++i) moved[i] = subtree[m->bones[m->vertex_bone[i]].joint];
        double jr[3], far_in[3], child[3], d[3], u[3], w[3];
        ps_joint_position(m, rep, jr);
        ps_joint_position(m, m->bones[in].end[0], far_in);
        ps_joint_position(m, m->bones[out].end[1], child);
        for (int k = 0; k < 3; ++k) d[k] = child[k] - jr[k];
        normalize3(d);
        double ref[3] = {1.0, 0.0, 0.0};
        if (fabs(d[0]) > 0.9) ref[0] = 0.0, ref[1] = 1.0;
        cross3(d, ref, u);
        normalize3(u);
        cross3(d, u, w);
        for (uint32_t a = 0; a < PS_COLLIDE_AXES && r == SINEW_OK; ++a) {
            double phi = 2.0 * 3.14159265358979323846 * a / PS_COLLIDE_AXES;
            double axis[3];
            for (int k = 0; k < 3; ++k) axis[k] = cos(phi) * u[k] + sin(phi) * w[k];
            for (int g = 0; g < PS_COLLIDE_ANGLE_COUNT && r == SINEW_OK; ++g) {
                ps_sim_set_skin(sim, skin, NULL);
                double R[9];
                for (int s = 1; s <= PS_COLLIDE_RAMP + PS_COLLIDE_HOLD && r == SINEW_OK; ++s) {
                    double f = s < PS_COLLIDE_RAMP ? (double)s / PS_COLLIDE_RAMP : 1.0;
                    rotation(axis, f * ps_collide_angles[g], R);
                    bent_pose(rig, subtree, R, jr, pose);
                    ps_sim_set_pose(sim, pose);
                    r = ps_sim_step(sim, NULL);
                }
                if (r != SINEW_OK) break;
                r = collect_pose(host, m, ps_sim_positions(sim), moved, jr, jr, axis, far_in,
                                 in, out, rep, mark, list, &pairs);
            }
        }
    }
    if (r == SINEW_OK && !pair_sort_unique(host, &pairs))
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps collisions: out of memory");
    if (r == SINEW_OK) {
        sinew_host_free(host, m->collision_pairs);
        m->collision_pairs = pairs.items;
        m->collision_pair_count = pairs.count;
        m->has_collision_pairs = 1;
        pairs.items = NULL;
        sinew_host_log(host, SINEW_LOG_INFO,
                       "ps collisions: %u candidate pairs from %u joints x %u extreme poses",
                       m->collision_pair_count, joint_count,
                       PS_COLLIDE_AXES * (uint32_t)PS_COLLIDE_ANGLE_COUNT);
    }
done:
    ps_sim_destroy(sim);
    sinew_host_free(host, pairs.items);
    sinew_host_free(host, chosen);
    sinew_host_free(host, subtree);
    sinew_host_free(host, moved);
    sinew_host_free(host, mark);
    sinew_host_free(host, list);
    sinew_host_free(host, pose);
    sinew_host_free(host, skin);
    return r;
}

/* ---- run time (Sec. 5.2, 5.3) ---- */

struct ps_collide {
    sinew_host_api host;
    const ps_model* m;
    uint32_t pair_count;
    const ps_collision_pair* pairs;
    uint32_t vertex_count;  /* constrained skin vertices: every vertex of a pair */
    uint32_t* vertices;
    uint32_t* slot;         /* per skin vertex: index into vertices, PS_NONE if none */
    double* bone_pos;       /* 6 per bone: both ends in the current pose */
    double* normal;         /* 3 per constrained vertex */
    double* disp;           /* 3 per constrained vertex */
    uint32_t* hits;         /* per constrained vertex */
    double* target;         /* 3 per constrained vertex: the last projections */
    uint32_t detected;      /* pairs reported by the angle test in the last projection */
    double orientation;     /* 1 when the skin's triangles face outwards, else -1 */
};

void ps_collide_destroy(ps_collide* c)
{
    if (!c) return;
    sinew_host_api host = c->host;
    sinew_host_free(&host, c->vertices);
    sinew_host_free(&host, c->slot);
    sinew_host_free(&host, c->bone_pos);
    sinew_host_free(&host, c->normal);
    sinew_host_free(&host, c->disp);
    sinew_host_free(&host, c->hits);
    sinew_host_free(&host, c->target);
    sinew_host_free(&host, c);
}

sinew_result ps_collide_create(const sinew_host_api* host, const ps_model* m, ps_collide** out)
{
    *out = NULL;
    ps_collide* c = (ps_collide*)sinew_host_calloc(host, 1, sizeof *c);
    if (!c) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps collisions: out of memory");
    c->host = *host;
    c->m = m;
    c->pair_count = m->collision_pair_count;
    c->pairs = m->collision_pairs;
    c->slot = (uint32_t*)sinew_host_alloc(host, (size_t)(m->n ? m->n : 1u) * sizeof(uint32_t));
    c->vertices = (uint32_t*)sinew_host_calloc(host, m->n ? m->n : 1u, sizeof(uint32_t));
    c->bone_pos = (double*)sinew_host_calloc(host, m->bone_count, 6u * sizeof(double));
    if (!c->slot || !c->vertices || !c->bone_pos) {
        ps_collide_destroy(c);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps collisions: out of memory");
    }
    for (uint32_t i = 0; i < m->n; ++i) c->slot[i] = PS_NONE;
    for (uint32_t k = 0; k < c->pair_count; ++k) {
        uint32_t v[2] = {c->pairs[k].i, c->pairs[k].j};
        for (int q = 0; q < 2; ++q)
            if (c->slot[v[q]] == PS_NONE) {
                c->slot[v[q]] = c->vertex_count;
                c->vertices[c->vertex_count++] = v[q];
            }
    }
    uint32_t vc = c->vertex_count ? c->vertex_count : 1u;
    c->normal = (double*)sinew_host_calloc(host, vc, 3u * sizeof(double));
    c->disp = (double*)sinew_host_calloc(host, vc, 3u * sizeof(double));
    c->hits = (uint32_t*)sinew_host_calloc(host, vc, sizeof(uint32_t));
    c->target = (double*)sinew_host_calloc(host, vc, 3u * sizeof(double));
    if (!c->normal || !c->disp || !c->hits || !c->target) {
        ps_collide_destroy(c);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps collisions: out of memory");
    }
    /* The mid-plane test needs outward normals: the sign of the rest skin's enclosed volume
     * says which way its triangles face. */
    double vol = 0.0;
    for (uint32_t t = 0; t < m->triangle_count; ++t) {
        const uint32_t* tri = m->triangles + 3u * t;
        double bc[3];
        cross3(m->rest + 3u * tri[1], m->rest + 3u * tri[2], bc);
        vol += dot3(m->rest + 3u * tri[0], bc);
    }
    c->orientation = vol < 0.0 ? -1.0 : 1.0;
    ps_collide_pose(c, NULL);
    *out = c;
    return SINEW_OK;
}

uint32_t ps_collide_vertex_count(const ps_collide* c)
{
    return c->vertex_count;
}

const uint32_t* ps_collide_vertices(const ps_collide* c)
{
    return c->vertices;
}

uint32_t ps_collide_detected(const ps_collide* c)
{
    return c->detected;
}

void ps_collide_pose(ps_collide* c, const float* skinning)
{
    const ps_model* m = c->m;
    for (uint32_t b = 0; b < m->bone_count; ++b) {
        double e[2][3];
        ps_joint_position(m, m->bones[b].end[0], e[0]);
        ps_joint_position(m, m->bones[b].end[1], e[1]);
        for (int k = 0; k < 2; ++k)
            for (int r = 0; r < 3; ++r) {
                double v = e[k][r];
                if (skinning) {
                    const float* T = skinning + 16u * m->bones[b].joint;
                    v = (double)T[r] * e[k][0] + (double)T[4 + r] * e[k][1] +
                        (double)T[8 + r] * e[k][2] + T[12 + r];
                }
                c->bone_pos[6u * b + 3u * k + r] = v;
            }
    }
}

/* Area-weighted normal of skin vertex v from the tissue positions x (N rows, 3 columns). */
static void vertex_normal(const ps_model* m, const double* x, uint32_t N, uint32_t v, double out[3])
{
    double s[3] = {0.0, 0.0, 0.0};
    for (uint32_t k = m->vertex_tri_offsets[v]; k < m->vertex_tri_offsets[v + 1]; ++k) {
        const uint32_t* t = m->triangles + 3u * m->vertex_tris[k];
        double e1[3], e2[3], f[3];
        for (int c = 0; c < 3; ++c) {
            e1[c] = col_at(x, N, t[1], c) - col_at(x, N, t[0], c);
            e2[c] = col_at(x, N, t[2], c) - col_at(x, N, t[0], c);
        }
        cross3(e1, e2, f);
        for (int c = 0; c < 3; ++c) s[c] += f[c];
    }
    normalize3(s);
    memcpy(out, s, sizeof s);
}

/* Fig. 10: j is the end of bone_i at the pair's joint (the inner end of b_i along the chain),
 * b_i and b_j point from j to the far ends of their bones. Both projected points are measured
 * against b_i: x_i lies on b_i's side, so it is at a smaller angle from b_i than x_j unless the
 * two patches have passed through each other. (The paper prints b_j in the second term; with
 * b_j the test would compare angles taken from different rays and would not flag a crossing of
 * two symmetric folds.) */
static bool angle_test(const ps_collide* c, const ps_collision_pair* p, const double xi[3],
                       const double xj[3])
{
    const ps_model* m = c->m;
    const double* bi = c->bone_pos + 6u * p->bone_i;
    const double* bj = c->bone_pos + 6u * p->bone_j;
    int ki = m->bones[p->bone_i].end[1] == p->joint ? 1 : 0;
    const double* j = bi + 3 * ki;
    const double* fi = bi + 3 * (1 - ki);
    double dj0 = 0.0, dj1 = 0.0;
    for (int k = 0; k < 3; ++k) {
        dj0 += (bj[k] - j[k]) * (bj[k] - j[k]);
        dj1 += (bj[3 + k] - j[k]) * (bj[3 + k] - j[k]);
    }
    const double* fj = dj1 >= dj0 ? bj + 3 : bj;
    double ui[3], uj[3], pn[3];
    for (int k = 0; k < 3; ++k) ui[k] = fi[k] - j[k], uj[k] = fj[k] - j[k];
    normalize3(ui);
    normalize3(uj);
    cross3(ui, uj, pn);
    double l = sqrt(dot3(pn, pn));
    if (!(l > 1e-6)) return false; /* straight: the two patches cannot fold onto each other */
    for (int k = 0; k < 3; ++k) pn[k] /= l;
    double di[3], dj[3];
    for (int k = 0; k < 3; ++k) di[k] = xi[k] - j[k], dj[k] = xj[k] - j[k];
    double si = dot3(di, pn), sj = dot3(dj, pn);
    for (int k = 0; k < 3; ++k) di[k] -= si * pn[k], dj[k] -= sj * pn[k];
    double li = sqrt(dot3(di, di)), lj = sqrt(dot3(dj, dj));
    if (!(li > 0.0) || !(lj > 0.0)) return false;
    /* Cosines do not tell the two sides of b_i apart: a pair that formed when the joint bent
     * the other way lies on the far side of b_i from b_j, where x_i's angle mirrors the fold's.
     * Only pairs with x_i on b_j's side of b_i are in this fold; an x_j that has crossed to the
     * far side has passed x_i for sure. */
    double e2[3];
    cross3(pn, ui, e2); /* in the plane, perpendicular to b_i, towards b_j */
    if (!(dot3(di, e2) > 0.0)) return false;
    if (dot3(dj, e2) < 0.0) return true;
    double dc = dot3(ui, di) / li - dot3(ui, dj) / lj;
    return dc < 0.0;
}

static void add_targets(const ps_collide* c, uint32_t N, const double* weight, double* b)
{
    for (uint32_t s = 0; s < c->vertex_count; ++s) {
        uint32_t v = c->vertices[s];
        for (int q = 0; q < 3; ++q) b[(size_t)q * N + v] += weight[s] * c->target[3u * s + q];
    }
}

/* One collision projection (Sec. 5.3) from the current positions x: every pair flagged by the
 * angle test projects each of its vertices that is on the wrong side onto the mid-plane at
 * (x_i + x_j) / 2 with normal (n_i - n_j) / |n_i - n_j|; a vertex of several pairs takes the
 * mean of its moves; the others project onto their current position ("do nothing"). Adds
 * w_v p_v to the right-hand side b (N rows, 3 columns). */
void ps_collide_project(ps_collide* c, const double* x, uint32_t N, const double* weight,
                        double* b)
{
    const ps_model* m = c->m;
    for (uint32_t s = 0; s < c->vertex_count; ++s) {
        double* nv = c->normal + 3u * s;
        vertex_normal(m, x, N, c->vertices[s], nv);
        nv[0] *= c->orientation, nv[1] *= c->orientation, nv[2] *= c->orientation;
        c->disp[3u * s] = c->disp[3u * s + 1] = c->disp[3u * s + 2] = 0.0;
        c->hits[s] = 0;
    }
    uint32_t detected = 0;
    for (uint32_t k = 0; k < c->pair_count; ++k) {
        const ps_collision_pair* p = &c->pairs[k];
        double xi[3], xj[3];
        for (int q = 0; q < 3; ++q) xi[q] = col_at(x, N, p->i, q), xj[q] = col_at(x, N, p->j, q);
        if (!angle_test(c, p, xi, xj)) continue;
        ++detected;
        uint32_t si = c->slot[p->i], sj = c->slot[p->j];
        const double* ni = c->normal + 3u * si;
        const double* nj = c->normal + 3u * sj;
        double nn[3] = {ni[0] - nj[0], ni[1] - nj[1], ni[2] - nj[2]};
        double l = sqrt(dot3(nn, nn));
        if (!(l > 1e-9)) continue;
        for (int q = 0; q < 3; ++q) nn[q] /= l;
        double mid[3] = {0.5 * (xi[0] + xj[0]), 0.5 * (xi[1] + xj[1]), 0.5 * (xi[2] + xj[2])};
        double di = (xi[0] - mid[0]) * nn[0] + (xi[1] - mid[1]) * nn[1] + (xi[2] - mid[2]) * nn[2];
        double dj = (xj[0] - mid[0]) * nn[0] + (xj[1] - mid[1]) * nn[1] + (xj[2] - mid[2]) * nn[2];
        /* x_i's outward normal points towards x_j: its side is below the plane, x_j's above. */
        if (di > 0.0) {
            for (int q = 0; q < 3; ++q) c->disp[3u * si + q] -= di * nn[q];
            c->hits[si]++;
        }
        if (dj < 0.0) {
            for (int q = 0; q < 3; ++q) c->disp[3u * sj + q] -= dj * nn[q];
            c->hits[sj]++;
        }
    }
    c->detected = detected;
    for (uint32_t s = 0; s < c->vertex_count; ++s) {
        uint32_t v = c->vertices[s];
        double f = c->hits[s] ? 1.0 / c->hits[s] : 0.0;
        for (int q = 0; q < 3; ++q)
            c->target[3u * s + q] = col_at(x, N, v, q) + f * c->disp[3u * s + q];
    }
    add_targets(c, N, weight, b);
}
