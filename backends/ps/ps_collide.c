/* Local collisions of projective skinning (Komaritzan and Botsch 2018, Sec. 5): the joints that
 * fold, candidate pairs near them, the run-time test and the projection onto a plane between
 * the two skin patches that feeds the collision constraints of the second prefactored matrix
 * (Sec. 5.2, 5.3; the matrix itself lives in ps_sim.c), and the anchor targets kept on their
 * side of those planes (which fps takes too). Part of the tissue library: ps and fps share it.
 * The paper's candidates from simulated extreme poses (Sec. 5.1) are ps_collide_poses.c.
 * SPDX-License-Identifier: MIT
 *
 * Where this departs from the paper (README.md, "Local collisions", has the figures):
 * - The plane of a pair is the plane that halves the fold at the pair's joint (normal
 *   u_i - u_j of the bone directions), not the mid-plane of the two vertices with averaged
 *   normals: in a symmetric fold they coincide, but the latter follows noisy normals and far
 *   pairs, and made overlapping sheets. A vertex keeps the side of that plane it has at rest.
 * - The default test is that side test per vertex (a few flops). The angle test of Fig. 10 runs
 *   where the paper runs it with collision_test=angle (once per step, it decides which pairs'
 *   planes act), but as that gate it lost at the male's shoulder and changed nothing on the
 *   cylinder (README.md, "The angle test of Fig. 10").
 * - The inner (base) layer is kept on its side too: in a deep bend the capsules of the two
 *   bones overlap, so anchors that follow their bone (or slide onto the capsules' union, which
 *   pushes crease anchors out along the groove) cross the plane, and the skin above them
 *   cannot separate without inverting its tissue. The anchor target of the base of every
 *   constrained vertex is its bone's rigid target pushed back to its side of the plane,
 *   whenever that target crosses it (ps_collide_clamp_targets).
 * - The default candidates are the skin of each folding joint's two bones within the fold's
 *   reach (ps_collide_candidates_near), not the vertices that simulated extreme poses bring
 *   into contact: the run time constrains the same kind of vertices, and the search through
 *   the simulated poses costs seconds at prepare (collision_candidates=poses keeps it).
 *
 * Joints (Sec. 5.1 names elbows, shoulders, hip/crotch and knees): `collision_joints` names them
 * explicitly; otherwise every joint whose name contains one of the common fold names (H-Anim,
 * Mixamo/BCN-like, case-insensitive), and when no name matches, every joint with exactly one
 * child bone whose length is within a factor 2 of its incoming bone (a limb's middle joint). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps_internal.h"

/* The reach of a joint's fold for the candidates near it, in joint radii. */
#define PS_COLLIDE_NEAR 8.0
/* Margins to a contact plane in tissue thicknesses (capped by each vertex's rest distance):
 * the skin keeps a small gap; the base layer stays a thickness away, so that the tissue over
 * it keeps room (README.md, "Local collisions", has the margins' figures). */
#define PS_COLLIDE_SKIN_GAP 0.1
#define PS_COLLIDE_BASE_GAP 1.0

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
void ps_joint_bones(const ps_model* m, uint32_t j, uint32_t* in, uint32_t* out,
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
            ps_joint_bones(m, found, &in, &out, &cc);
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
        ps_joint_bones(m, j, &in, &out, &cc);
        if (in == PS_NONE || out == PS_NONE) continue;
        chosen[j] = 1;
        ++*count;
    }
    if (*count > 0) return SINEW_OK;
    /* No fold names: the middle joints of limbs. */
    for (uint32_t j = 0; j < jn; ++j) {
        if (m->joint_rep[j] != j) continue;
        uint32_t in, out, cc;
        ps_joint_bones(m, j, &in, &out, &cc);
        if (in == PS_NONE || out == PS_NONE || cc != 1) continue;
        double li = bone_length(m, in), lo = bone_length(m, out);
        if (!(li > 0.0) || lo < 0.5 * li || lo > 2.0 * li) continue;
        chosen[j] = 1;
        ++*count;
    }
    return SINEW_OK;
}

bool ps_pair_push(const sinew_host_api* host, ps_pair_list* l, ps_collision_pair p)
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
sinew_result ps_pair_store(const sinew_host_api* host, ps_pair_list* l, ps_model* m)
{
    /* a part pinned to its bone (ps_parts.c) moves rigidly: none of its vertices collides */
    uint32_t kept = 0;
    for (uint32_t k = 0; k < l->count; ++k)
        if (!ps_vertex_pinned(m, l->items[k].i) && !ps_vertex_pinned(m, l->items[k].j))
            l->items[kept++] = l->items[k];
    l->count = kept;
    if (!ps_pair_sort_unique(host, l))
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps collisions: out of memory");
    sinew_host_free(host, m->collision_pairs);
    m->collision_pairs = l->items;
    m->collision_pair_count = l->count;
    m->has_collision_pairs = 1;
    l->items = NULL;
    l->count = l->capacity = 0;
    return SINEW_OK;
}

bool ps_pair_sort_unique(const sinew_host_api* host, ps_pair_list* l)
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


/* Candidates without the offline simulation: around each chosen joint, the skin of its
 * incoming and outgoing bones within the fold's reach (PS_COLLIDE_NEAR joint radii: a bent
 * elbow lays the forearm onto the upper arm about that far from the joint; README.md has the
 * measurements), each vertex paired with the closest vertex of the other bone at rest. The
 * run time constrains exactly these vertices (Sec. 5.2: each keeps the side of the joint's
 * plane it has at rest), the kind of vertices the simulated extreme poses find on a limb, at a
 * fraction of the cost. */
static sinew_result near_joint(const sinew_host_api* host, const ps_model* m, uint32_t j,
                               double reach_radii, uint32_t* list, uint8_t* side,
                               ps_pair_list* out)
{
    uint32_t in, out_bone, children, rep = m->joint_rep[j];
    ps_joint_bones(m, j, &in, &out_bone, &children);
    if (in == PS_NONE || out_bone == PS_NONE) return SINEW_OK;
    double jr[3];
    ps_joint_position(m, rep, jr);
    double reach = reach_radii * m->joint_radius[rep];
    uint32_t count = 0;
    for (uint32_t v = 0; v < m->n; ++v) {
        uint32_t b = m->vertex_bone[v];
        if (b != in && b != out_bone) continue;
        double d[3] = {m->rest[3u * v] - jr[0], m->rest[3u * v + 1] - jr[1],
                       m->rest[3u * v + 2] - jr[2]};
        if (ps_dot3(d, d) > reach * reach) continue;
        side[v] = b == in ? 1u : 2u;
        list[count++] = v;
    }
    for (uint32_t k = 0; k < count; ++k) {
        uint32_t v = list[k], best = PS_NONE;
        double bd = INFINITY;
        for (uint32_t l = 0; l < count; ++l) {
            uint32_t w = list[l];
            if (side[w] == side[v]) continue;
            double d[3] = {m->rest[3u * v] - m->rest[3u * w], m->rest[3u * v + 1] - m->rest[3u * w + 1],
                           m->rest[3u * v + 2] - m->rest[3u * w + 2]};
            double d2 = ps_dot3(d, d);
            if (d2 < bd) bd = d2, best = w;
        }
        if (best == PS_NONE) continue;
        ps_collision_pair p = {side[v] == 1u ? v : best, side[v] == 1u ? best : v, in, out_bone,
                               rep};
        if (!ps_pair_push(host, out, p))
            return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                                   "ps collisions: out of memory for candidate pairs");
    }
    for (uint32_t k = 0; k < count; ++k) side[list[k]] = 0;
    return SINEW_OK;
}

sinew_result ps_collide_candidates_near(const sinew_host_api* host, const sinew_rig_view* rig,
                                        ps_model* m, const ps_params* params, double reach)
{
    if (!(reach > 0.0)) reach = PS_COLLIDE_NEAR;
    uint32_t jn = m->joint_count, n = m->n, joint_count = 0;
    uint8_t* chosen = (uint8_t*)sinew_host_calloc(host, jn ? jn : 1u, 1);
    uint8_t* side = (uint8_t*)sinew_host_calloc(host, n ? n : 1u, 1);
    uint32_t* list = (uint32_t*)sinew_host_calloc(host, n ? n : 1u, sizeof(uint32_t));
    ps_pair_list pairs = {NULL, 0, 0};
    sinew_result r = SINEW_OK;
    if (!chosen || !side || !list)
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps collisions: out of memory");
    if (r == SINEW_OK)
        r = ps_collide_select(host, rig, m, params->collision_joints, chosen, &joint_count);
    for (uint32_t j = 0; r == SINEW_OK && j < jn; ++j)
        if (chosen[j]) r = near_joint(host, m, j, reach, list, side, &pairs);
    if (r == SINEW_OK) r = ps_pair_store(host, &pairs, m);
    if (r == SINEW_OK)
        sinew_host_log(host, SINEW_LOG_INFO, "ps collisions: %u candidate pairs near %u joints",
                       m->collision_pair_count, joint_count);
    sinew_host_free(host, pairs.items);
    sinew_host_free(host, chosen);
    sinew_host_free(host, side);
    sinew_host_free(host, list);
    return r;
}

/* ---- run time (Sec. 5.2, 5.3) ---- */

/* One contact: the two bones and the joint of a set of pairs. Its contact plane passes through
 * the joint with normal (u_i - u_j) / |u_i - u_j|, u_i and u_j the unit directions from the
 * joint to the far ends of b_i and b_j: the plane that halves the angle of the fold, which is
 * where the paper's mid-plane of a pair (mean position, normal (n_i - n_j) / |n_i - n_j|) lies
 * in a symmetric fold, but taken from the bones, so that it does not follow noisy normals. */
typedef struct ps_contact {
    uint32_t bone_i, bone_j, joint;
    int valid;          /* the current pose gives a plane */
    double point[3];    /* current pose */
    double normal[3];
} ps_contact;

/* A vertex kept on its side of one contact plane: side * (x - point) . normal >= margin. The
 * side is the one the vertex has at rest, and the margin never exceeds its rest distance, so
 * the rest pose satisfies every constraint exactly. */
typedef struct ps_side {
    uint32_t contact;
    double side;
    double margin;
} ps_side;

struct ps_collide {
    sinew_host_api host;
    const ps_model* m;
    uint32_t pair_count;
    const ps_collision_pair* pairs;
    uint32_t* pair_contact; /* per pair */
    uint32_t contact_count;
    ps_contact* contacts;
    uint32_t vertex_count;  /* constrained skin vertices: every vertex of a pair */
    uint32_t* vertices;
    uint32_t* slot;         /* per skin vertex: index into vertices, PS_NONE if none */
    uint32_t* side_offsets; /* vertex_count + 1 */
    ps_side* skin_sides;    /* per (constrained vertex, contact) */
    ps_side* base_sides;    /* the same for the vertex's base vertex */
    double* bone_pos;       /* 6 per bone: both ends in the current pose */
    /* Fig. 10, evaluated once per step on the preliminary shape of the first k/2 iterations,
     * over the pairs that can act (a vertex with a side for the pair's contact; act lists
     * them): per pair whether its patches have crossed, and per side entry (vertex, contact)
     * whether one of its pairs has; only active entries are projected. */
    int angle_gate;         /* collision_test=angle: only active entries are projected */
    uint32_t act_count;
    uint32_t* act;          /* pair indices */
    uint8_t* pair_active;   /* per acting pair */
    uint32_t* ep_offsets;   /* per entry: its acting pairs (indices into act), compressed rows */
    uint32_t* ep;
    uint8_t* entry_active;
    double* frames;         /* per contact, current pose: joint, u_i, plane normal, in-plane
                               perpendicular to u_i towards u_j (12 doubles); the 13th is 1
                               when the bones are not straight */
    /* Per (constrained vertex, contact) entry of the side lists, once per step: the cosine of
     * the vertex's angle from b_i in the contact's bone plane and on which side of b_i it lies
     * (+1 towards b_j, -1 away, 2 on it, 0 no fold or at the joint), so that each pair only
     * compares two
     * precomputed entries (pair_entry: 2 per pair). */
    uint32_t entry_count;
    uint32_t* entry_vertex; /* skin vertex of each entry */
    double* entry_cos;
    int8_t* entry_side;
    uint32_t* pair_entry;
    const double* x;        /* the shape the angle test runs on (job context) */
    uint32_t x_rows;
    uint32_t active_pairs;  /* pairs the last angle test reported */
    uint32_t detected;      /* vertices the last projection moved */
    double slack;           /* violations below this are rounding, not contact */
    const float* skinning;  /* the current pose (NULL: rest), owned by the caller */
};

void ps_collide_destroy(ps_collide* c)
{
    if (!c) return;
    sinew_host_api host = c->host;
    void* arrays[] = {c->pair_contact, c->contacts, c->vertices,   c->slot,   c->side_offsets,
                      c->skin_sides,   c->base_sides, c->bone_pos, c->pair_active, c->act,
                      c->ep_offsets,   c->ep,         c->frames,   c->entry_vertex,
                      c->entry_cos,    c->entry_side, c->pair_entry, c->entry_active};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) sinew_host_free(&host, arrays[i]);
    sinew_host_free(&host, c);
}

/* The contact plane of contact k in the current bone positions. */
static void contact_plane(ps_collide* c, ps_contact* k)
{
    const ps_model* m = c->m;
    const double* bi = c->bone_pos + 6u * k->bone_i;
    const double* bj = c->bone_pos + 6u * k->bone_j;
    int ki = m->bones[k->bone_i].end[1] == k->joint ? 1 : 0;
    const double* j = bi + 3 * ki;
    const double* fi = bi + 3 * (1 - ki);
    double dj0 = 0.0, dj1 = 0.0;
    for (int q = 0; q < 3; ++q) {
        dj0 += (bj[q] - j[q]) * (bj[q] - j[q]);
        dj1 += (bj[3 + q] - j[q]) * (bj[3 + q] - j[q]);
    }
    const double* fj = dj1 >= dj0 ? bj + 3 : bj;
    double ui[3], uj[3], nn[3];
    for (int q = 0; q < 3; ++q) ui[q] = fi[q] - j[q], uj[q] = fj[q] - j[q];
    ps_normalize3(ui);
    ps_normalize3(uj);
    /* Fig. 10's frame: the plane of the two bones through the joint, and in it the direction
     * perpendicular to u_i towards u_j (a straight limb has no fold: no pair is tested). */
    double* f = c->frames + 13u * (size_t)(k - c->contacts);
    double pn[3], e2[3];
    ps_cross3(ui, uj, pn);
    double lp = sqrt(ps_dot3(pn, pn));
    f[12] = lp > 1e-6 ? 1.0 : 0.0;
    if (lp > 1e-6) {
        for (int q = 0; q < 3; ++q) pn[q] /= lp;
        ps_cross3(pn, ui, e2);
        for (int q = 0; q < 3; ++q) f[q] = j[q], f[3 + q] = ui[q], f[6 + q] = pn[q], f[9 + q] = e2[q];
    }
    for (int q = 0; q < 3; ++q) nn[q] = ui[q] - uj[q];
    double l = sqrt(ps_dot3(nn, nn));
    /* Bones folded onto each other have no plane between them; the last one stays. */
    if (!(l > 1e-6)) return;
    for (int q = 0; q < 3; ++q) k->normal[q] = nn[q] / l, k->point[q] = j[q];
    k->valid = 1;
}

static int side_cmp(const void* a, const void* b)
{
    const uint32_t* x = (const uint32_t*)a;
    const uint32_t* y = (const uint32_t*)b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    if (x[1] != y[1]) return x[1] < y[1] ? -1 : 1;
    return 0;
}

static void rest_side(const ps_contact* k, const double* p, double gap, ps_side* out)
{
    double d = (p[0] - k->point[0]) * k->normal[0] + (p[1] - k->point[1]) * k->normal[1] +
               (p[2] - k->point[2]) * k->normal[2];
    out->side = d < 0.0 ? -1.0 : 1.0;
    out->margin = fmin(gap, fabs(d));
    if (!k->valid) out->side = 0.0; /* no plane at rest: never constrained */
}

/* Allocates the per-pair arrays and the (vertex slot, contact) tuples of every pair's two
 * vertices; false when any is missing. */
static bool alloc_pair_arrays(ps_collide* c, uint32_t** tuples)
{
    const sinew_host_api* host = &c->host;
    const ps_model* m = c->m;
    uint32_t pc = c->pair_count ? c->pair_count : 1u;
    c->slot = (uint32_t*)sinew_host_alloc(host, (size_t)(m->n ? m->n : 1u) * sizeof(uint32_t));
    c->vertices = (uint32_t*)sinew_host_calloc(host, m->n ? m->n : 1u, sizeof(uint32_t));
    c->bone_pos = (double*)sinew_host_calloc(host, m->bone_count ? m->bone_count : 1u,
                                             6u * sizeof(double));
    c->pair_contact = (uint32_t*)sinew_host_calloc(host, pc, sizeof(uint32_t));
    c->contacts = (ps_contact*)sinew_host_calloc(host, pc, sizeof(ps_contact));
    c->frames = (double*)sinew_host_calloc(host, pc, 13u * sizeof(double));
    c->pair_active = (uint8_t*)sinew_host_calloc(host, pc, 1);
    c->act = (uint32_t*)sinew_host_calloc(host, pc, sizeof(uint32_t));
    c->ep = (uint32_t*)sinew_host_calloc(host, 2u * (size_t)pc, sizeof(uint32_t));
    *tuples = (uint32_t*)sinew_host_calloc(host, 2u * (size_t)pc, 2u * sizeof(uint32_t));
    return c->slot && c->vertices && c->bone_pos && c->pair_contact && c->contacts && *tuples &&
           c->frames && c->pair_active && c->act && c->ep;
}

/* Each pair's contact (bone_i, bone_j, joint), the constrained vertices with their slots,
 * and a (slot, contact) tuple for each of the pair's two vertices. */
static void index_pairs(ps_collide* c, uint32_t* tuples)
{
    for (uint32_t i = 0; i < c->m->n; ++i) c->slot[i] = PS_NONE;
    /* Pairs are sorted by (i, j, bone_i, bone_j, joint), so contacts are found by a scan over
     * the few distinct ones. */
    for (uint32_t k = 0; k < c->pair_count; ++k) {
        const ps_collision_pair* p = &c->pairs[k];
        uint32_t q = 0;
        while (q < c->contact_count &&
               !(c->contacts[q].bone_i == p->bone_i && c->contacts[q].bone_j == p->bone_j &&
                 c->contacts[q].joint == p->joint))
            ++q;
        if (q == c->contact_count) {
            c->contacts[q].bone_i = p->bone_i;
            c->contacts[q].bone_j = p->bone_j;
            c->contacts[q].joint = p->joint;
            ++c->contact_count;
        }
        c->pair_contact[k] = q;
        uint32_t v[2] = {p->i, p->j};
        for (int e = 0; e < 2; ++e) {
            if (c->slot[v[e]] == PS_NONE) {
                c->slot[v[e]] = c->vertex_count;
                c->vertices[c->vertex_count++] = v[e];
            }
            tuples[4u * k + 2u * e] = c->slot[v[e]];
            tuples[4u * k + 2u * e + 1u] = q;
        }
    }
}

/* Sorts the `count` (slot, contact) tuples and keeps one of each: the side entries, grouped
 * by vertex. Returns how many remain. */
static uint32_t unique_tuples(uint32_t* tuples, uint32_t count)
{
    uint32_t u = 0;
    qsort(tuples, count, 2u * sizeof(uint32_t), side_cmp);
    for (uint32_t t = 0; t < count; ++t)
        if (u == 0 || side_cmp(tuples + 2u * t, tuples + 2u * (u - 1u)) != 0) {
            tuples[2u * u] = tuples[2u * t];
            tuples[2u * u + 1u] = tuples[2u * t + 1u];
            ++u;
        }
    return u;
}

/* Allocates the arrays of the u side entries and of the angle test; false when any is
 * missing. */
static bool alloc_entry_arrays(ps_collide* c, uint32_t u)
{
    const sinew_host_api* host = &c->host;
    uint32_t pc = c->pair_count ? c->pair_count : 1u;
    uint32_t vc = c->vertex_count ? c->vertex_count : 1u;
    c->side_offsets = (uint32_t*)sinew_host_calloc(host, (size_t)vc + 1u, sizeof(uint32_t));
    c->skin_sides = (ps_side*)sinew_host_calloc(host, u ? u : 1u, sizeof(ps_side));
    c->base_sides = (ps_side*)sinew_host_calloc(host, u ? u : 1u, sizeof(ps_side));
    c->entry_count = u;
    c->entry_vertex = (uint32_t*)sinew_host_calloc(host, u ? u : 1u, sizeof(uint32_t));
    c->entry_cos = (double*)sinew_host_calloc(host, u ? u : 1u, sizeof(double));
    c->entry_side = (int8_t*)sinew_host_calloc(host, u ? u : 1u, 1);
    c->pair_entry = (uint32_t*)sinew_host_calloc(host, 2u * (size_t)pc, sizeof(uint32_t));
    c->ep_offsets = (uint32_t*)sinew_host_calloc(host, (size_t)(u ? u : 1u) + 1u, sizeof(uint32_t));
    c->entry_active = (uint8_t*)sinew_host_calloc(host, u ? u : 1u, 1);
    return c->side_offsets && c->skin_sides && c->base_sides && c->entry_vertex &&
           c->entry_cos && c->entry_side && c->pair_entry && c->ep_offsets && c->entry_active;
}

/* The rest planes give every vertex its side and margin, for the skin vertex and its base
 * vertex of each of the u entries; side_offsets become the entries' rows per vertex. */
static void rest_sides(ps_collide* c, const uint32_t* tuples, uint32_t u)
{
    const ps_model* m = c->m;
    ps_collide_pose(c, NULL);
    /* The float local step leaves a resting skin within about 1e-7 of its rest shape. */
    c->slack = 1e-4 * m->thickness;
    double gs = PS_COLLIDE_SKIN_GAP * m->thickness, gb = PS_COLLIDE_BASE_GAP * m->thickness;
    for (uint32_t t = 0; t < u; ++t) {
        uint32_t s = tuples[2u * t], v = c->vertices[s];
        const ps_contact* k = &c->contacts[tuples[2u * t + 1u]];
        c->side_offsets[s + 1u]++;
        c->entry_vertex[t] = v;
        c->skin_sides[t].contact = c->base_sides[t].contact = tuples[2u * t + 1u];
        rest_side(k, m->rest + 3u * v, gs, &c->skin_sides[t]);
        rest_side(k, m->rest + 3u * ((size_t)m->n + v), gb, &c->base_sides[t]);
        /* Only the two bones' own vertices: the plane halves the fold between those limbs and
         * says nothing about other parts that the extreme poses brought into contact (a torso
         * at a shoulder), which it would cut through. */
        uint32_t bv = m->vertex_bone[v];
        if (bv != k->bone_i && bv != k->bone_j) c->skin_sides[t].side = c->base_sides[t].side = 0.0;
    }
    for (uint32_t s = 0; s < c->vertex_count; ++s) c->side_offsets[s + 1u] += c->side_offsets[s];
}

/* Each pair's two entries: its vertices' entries for its contact (a vertex has few). */
static void pair_entries(ps_collide* c)
{
    for (uint32_t k = 0; k < c->pair_count; ++k) {
        uint32_t v[2] = {c->slot[c->pairs[k].i], c->slot[c->pairs[k].j]};
        for (int e = 0; e < 2; ++e) {
            uint32_t t = c->side_offsets[v[e]];
            while (c->skin_sides[t].contact != c->pair_contact[k]) ++t;
            c->pair_entry[2u * k + (uint32_t)e] = t;
        }
    }
}

/* The pairs that can act: a pair whose two vertices have no side for its contact (both of
 * other bones) can activate nothing, so the angle test skips it. Its vertices stay
 * constrained all the same (the do-nothing projection of the second matrix), as every
 * candidate vertex is. Also each of the u entries' acting pairs (compressed rows). */
static void acting_pairs(ps_collide* c, uint32_t u)
{
    for (uint32_t k = 0; k < c->pair_count; ++k) {
        uint32_t ti = c->pair_entry[2u * k], tj = c->pair_entry[2u * k + 1u];
        if (c->skin_sides[ti].side == 0.0 && c->skin_sides[tj].side == 0.0) continue;
        c->ep_offsets[ti + 1u]++;
        c->ep_offsets[tj + 1u]++;
        c->act[c->act_count++] = k;
    }
    for (uint32_t t = 0; t < u; ++t) c->ep_offsets[t + 1u] += c->ep_offsets[t];
    for (uint32_t a = 0; a < c->act_count; ++a) {
        uint32_t k = c->act[a];
        c->ep[c->ep_offsets[c->pair_entry[2u * k]]++] = a;
        c->ep[c->ep_offsets[c->pair_entry[2u * k + 1u]]++] = a;
    }
    for (uint32_t t = u; t > 0; --t) c->ep_offsets[t] = c->ep_offsets[t - 1u];
    c->ep_offsets[0] = 0;
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
    uint32_t* tuples = NULL;
    uint32_t u = 0;
    bool ok = alloc_pair_arrays(c, &tuples);
    if (ok) {
        index_pairs(c, tuples);
        u = unique_tuples(tuples, 2u * c->pair_count);
        ok = alloc_entry_arrays(c, u);
    }
    if (!ok) {
        sinew_host_free(host, tuples);
        ps_collide_destroy(c);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps collisions: out of memory");
    }
    rest_sides(c, tuples, u);
    sinew_host_free(host, tuples);
    pair_entries(c);
    acting_pairs(c, u);
    sinew_host_log(host, SINEW_LOG_INFO,
                   "ps collisions: %u of %u candidate pairs can act (a vertex of one of their "
                   "bones), %u constrained vertices, %u contacts",
                   c->act_count, c->pair_count, c->vertex_count, c->contact_count);
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

uint32_t ps_collide_entry_count(const ps_collide* c)
{
    return c->entry_count;
}

uint32_t ps_collide_contact_count(const ps_collide* c)
{
    return c->contact_count;
}

void ps_collide_skin_entries(const ps_collide* c, uint32_t* offsets, uint32_t* contact,
                             float* side, float* margin, float* slack)
{
    memcpy(offsets, c->side_offsets, ((size_t)c->vertex_count + 1u) * sizeof(uint32_t));
    for (uint32_t e = 0; e < c->entry_count; ++e) {
        contact[e] = c->skin_sides[e].contact;
        side[e] = (float)c->skin_sides[e].side;
        margin[e] = (float)c->skin_sides[e].margin;
    }
    *slack = (float)c->slack;
}

void ps_collide_planes(const ps_collide* c, float* out)
{
    for (uint32_t k = 0; k < c->contact_count; ++k) {
        const ps_contact* q = &c->contacts[k];
        for (int i = 0; i < 3; ++i) {
            out[8u * k + i] = (float)q->point[i];
            out[8u * k + 4u + i] = (float)q->normal[i];
        }
        out[8u * k + 3u] = q->valid ? 1.0f : 0.0f;
        out[8u * k + 7u] = 0.0f;
    }
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
    for (uint32_t k = 0; k < c->contact_count; ++k) contact_plane(c, &c->contacts[k]);
    c->skinning = skinning;
}

/* Moves p onto the right side of each of its contact planes (only as far as the margin, never
 * past it). Returns 1 when p moved. */
static int keep_sides(const ps_collide* c, const ps_side* sides, const uint8_t* only,
                      uint32_t begin, uint32_t end, double p[3])
{
    int moved = 0;
    for (uint32_t e = begin; e < end; ++e) {
        if (only && !only[e]) continue;
        const ps_side* sd = &sides[e];
        const ps_contact* k = &c->contacts[sd->contact];
        if (sd->side == 0.0 || !k->valid) continue;
        double d = sd->side * ((p[0] - k->point[0]) * k->normal[0] +
                               (p[1] - k->point[1]) * k->normal[1] +
                               (p[2] - k->point[2]) * k->normal[2]);
        if (d >= sd->margin - c->slack) continue;
        double f = sd->side * (sd->margin - d);
        for (int q = 0; q < 3; ++q) p[q] += f * k->normal[q];
        moved = 1;
    }
    return moved;
}

/* Where the bone's rigid target of a base vertex crosses a contact plane, the vertex is in the
 * fold: its target becomes that rigid target pushed back to the margin (a slid target there
 * sits in the groove between the overlapping capsules, farther out than its rigid neighbours,
 * which pleats the skin). Elsewhere the target (slid or rigid) is only kept on its side. */
void ps_collide_clamp_targets(ps_collide* c, double* target, uint32_t N)
{
    const ps_model* m = c->m;
    for (uint32_t s = 0; s < c->vertex_count; ++s) {
        size_t b = (size_t)m->n + c->vertices[s];
        uint32_t e0 = c->side_offsets[s], e1 = c->side_offsets[s + 1u];
        double p[3];
        if (c->skinning) {
            const float* T = c->skinning + 16u * m->bones[m->vertex_bone[b]].joint;
            const double* q = m->rest + 3u * b;
            for (int k = 0; k < 3; ++k)
                p[k] = (double)T[k] * q[0] + (double)T[4 + k] * q[1] + (double)T[8 + k] * q[2] +
                       T[12 + k];
            if (keep_sides(c, c->base_sides, NULL, e0, e1, p)) {
                for (int k = 0; k < 3; ++k) target[(size_t)k * N + b] = p[k];
                continue;
            }
        }
        for (int k = 0; k < 3; ++k) p[k] = target[(size_t)k * N + b];
        if (keep_sides(c, c->base_sides, NULL, e0, e1, p))
            for (int k = 0; k < 3; ++k) target[(size_t)k * N + b] = p[k];
    }
}

/* Fig. 10 for pair k in the shape c->x: both points projected into the plane of the two bones
 * through the joint j_ij, x_i at angle alpha from b_i (the ray from j_ij along bone i), x_j at
 * angle beta from the same ray; the patches have passed each other when alpha > beta, i.e.
 * delta_c = cos(alpha) - cos(beta) < 0. The paper prints b_j in the second cosine; measured
 * from b_j (in the opposite sense of rotation) that angle is the fold's angle minus beta, and
 * only the common ray b_i makes the comparison a crossing test. A pair whose x_i lies on the
 * far side of b_i from b_j formed when the joint bent the other way and is not in this fold;
 * an x_j beyond b_i has crossed for sure. The projection and the cosine depend on one vertex
 * and one contact only, so they are computed once per (vertex, contact) entry (entry_range)
 * and each pair compares two of them (angle_test). */
static void entry_range(void* data, uint32_t begin, uint32_t end)
{
    ps_collide* c = (ps_collide*)data;
    const double* x = c->x;
    uint32_t N = c->x_rows;
    for (uint32_t t = begin; t < end; ++t) {
        const double* f = c->frames + 13u * (size_t)c->skin_sides[t].contact;
        uint32_t v = c->entry_vertex[t];
        c->entry_side[t] = 0;
        c->entry_cos[t] = 0.0;
        if (f[12] == 0.0) continue;
        double d[3] = {ps_col_at(x, N, v, 0) - f[0], ps_col_at(x, N, v, 1) - f[1],
                       ps_col_at(x, N, v, 2) - f[2]};
        /* In-plane coordinates along b_i and along the perpendicular towards b_j: dropping the
         * normal component is the projection into the plane. */
        double a = ps_dot3(d, f + 3), b = ps_dot3(d, f + 9), l = sqrt(a * a + b * b);
        if (!(l > 0.0)) continue;
        c->entry_cos[t] = a / l;
        c->entry_side[t] = (int8_t)(b > 0.0 ? 1 : (b < 0.0 ? -1 : 2));
    }
}

static int angle_test(const ps_collide* c, uint32_t k)
{
    uint32_t ti = c->pair_entry[2u * k], tj = c->pair_entry[2u * k + 1u];
    if (c->entry_side[ti] != 1) return 0;
    if (c->entry_side[tj] < 0) return 1;
    return c->entry_side[tj] != 0 && c->entry_cos[ti] < c->entry_cos[tj];
}

static void angle_range(void* data, uint32_t begin, uint32_t end)
{
    ps_collide* c = (ps_collide*)data;
    for (uint32_t a = begin; a < end; ++a) c->pair_active[a] = (uint8_t)angle_test(c, c->act[a]);
}

/* A side entry (vertex, contact) is tested when one of its pairs reports a crossing; per
 * entry (each job writes its own entries), so no two jobs write one byte. */
static void active_range(void* data, uint32_t begin, uint32_t end)
{
    ps_collide* c = (ps_collide*)data;
    for (uint32_t t = begin; t < end; ++t) {
        uint8_t a = 0;
        for (uint32_t e = c->ep_offsets[t]; e < c->ep_offsets[t + 1u] && !a; ++e)
            a = c->pair_active[c->ep[e]];
        c->entry_active[t] = a;
    }
}

void ps_collide_detect(ps_collide* c, const double* x, uint32_t N)
{
    c->x = x;
    c->x_rows = N;
    sinew_host_parallel_for(&c->host, entry_range, c, c->entry_count, 1024u);
    sinew_host_parallel_for(&c->host, angle_range, c, c->act_count, 4096u);
    sinew_host_parallel_for(&c->host, active_range, c, c->entry_count, 2048u);
    uint32_t n = 0;
    for (uint32_t a = 0; a < c->act_count; ++a) n += c->pair_active[a];
    c->active_pairs = n;
    c->x = NULL;
}

uint32_t ps_collide_active_pairs(const ps_collide* c)
{
    return c->active_pairs;
}

void ps_collide_use_angle_test(ps_collide* c, int on)
{
    c->angle_gate = on != 0;
}

/* Sec. 5.3 with the contact planes: a constrained skin vertex on the wrong side of one of its
 * contact planes (closer than its margin, or beyond) whose pairs at that contact the angle test
 * of this step reported is a collision and projects onto the plane at the margin, only as far
 * as that; the others project onto their current position
 * (the paper's "do-nothing" projection, which the second matrix needs for every constrained
 * vertex). Adds w_v p_v to the right-hand side b (N rows, 3 columns). */
void ps_collide_project(ps_collide* c, const double* x, uint32_t N, const double* weight,
                        double* b)
{
    uint32_t projected = 0;
    for (uint32_t s = 0; s < c->vertex_count; ++s) {
        uint32_t v = c->vertices[s];
        double t[3] = {ps_col_at(x, N, v, 0), ps_col_at(x, N, v, 1), ps_col_at(x, N, v, 2)};
        projected += (uint32_t)keep_sides(c, c->skin_sides, c->angle_gate ? c->entry_active : NULL,
                                          c->side_offsets[s], c->side_offsets[s + 1u], t);
        for (int q = 0; q < 3; ++q) b[(size_t)q * N + v] += weight[s] * t[q];
    }
    c->detected = projected;
}
