/* The simulated surface (welding) and the volumetric skeleton (projective skinning Sec. 3.1).
 * SPDX-License-Identifier: MIT */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps_internal.h"

/* Sec. 3.1: bone radius = 75 % of the bone's closest distance to the skin. */
#define PS_RADIUS_FRACTION 0.75

const sinew_mesh_view* ps_sim_mesh(const sinew_rig_view* rig)
{
    return rig->simulation_mesh.vertex_count > 0 ? &rig->simulation_mesh : &rig->render_mesh;
}

void ps_joint_position(const ps_model* m, uint32_t joint, double out[3])
{
    const float* b = m->joint_rest + 16u * joint;
    out[0] = b[12];
    out[1] = b[13];
    out[2] = b[14];
}

static inline double dist2(const double a[3], const double b[3])
{
    double d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
    return d0 * d0 + d1 * d1 + d2 * d2;
}

/* ---- welding ---- */

typedef struct weld_key {
    float p[3];
    uint32_t index;
} weld_key;

static int weld_compare(const void* a, const void* b)
{
    const weld_key* x = (const weld_key*)a;
    const weld_key* y = (const weld_key*)b;
    for (int k = 0; k < 3; ++k) {
        if (x->p[k] < y->p[k]) return -1;
        if (x->p[k] > y->p[k]) return 1;
    }
    return x->index < y->index ? -1 : (x->index > y->index ? 1 : 0);
}

/* Seams (vertices duplicated for normals or texture coordinates) would tear open under
 * simulation: vertices at identical positions become one skin vertex. */
sinew_result ps_model_weld(const sinew_host_api* host, const sinew_rig_view* rig, ps_model* m)
{
    const sinew_mesh_view* mesh = ps_sim_mesh(rig);
    uint32_t nv = mesh->vertex_count;
    m->source_vertex_count = nv;
    m->weld = (uint32_t*)sinew_host_calloc(host, nv, sizeof(uint32_t));
    weld_key* keys = (weld_key*)sinew_host_calloc(host, nv, sizeof(weld_key));
    uint32_t* rep = (uint32_t*)sinew_host_calloc(host, nv, sizeof(uint32_t));
    if (!m->weld || !keys || !rep) {
        sinew_host_free(host, keys);
        sinew_host_free(host, rep);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory welding %u "
                               "vertices", nv);
    }
    for (uint32_t v = 0; v < nv; ++v) {
        for (int k = 0; k < 3; ++k) {
            float x = mesh->positions[3u * v + k];
            keys[v].p[k] = x == 0.0f ? 0.0f : x; /* -0 and +0 weld */
        }
        keys[v].index = v;
    }
    qsort(keys, nv, sizeof(weld_key), weld_compare);
    for (uint32_t i = 0; i < nv; ++i) {
        bool same = i > 0 && memcmp(keys[i].p, keys[i - 1].p, sizeof keys[i].p) == 0;
        rep[keys[i].index] = same ? rep[keys[i - 1].index] : keys[i].index;
    }
    uint32_t n = 0;
    for (uint32_t v = 0; v < nv; ++v) m->weld[v] = rep[v] == v ? n++ : m->weld[rep[v]];
    sinew_host_free(host, keys);
    sinew_host_free(host, rep);
    m->n = n;

    m->rest = (double*)sinew_host_calloc(host, 2u * (size_t)n, 3u * sizeof(double));
    m->triangles = (uint32_t*)sinew_host_calloc(host, mesh->triangle_count, 3u * sizeof(uint32_t));
    if (!m->rest || !m->triangles)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory for %u "
                               "vertices", n);
    for (uint32_t v = 0; v < nv; ++v)
        for (int k = 0; k < 3; ++k) m->rest[3u * m->weld[v] + k] = mesh->positions[3u * v + k];
    uint32_t kept = 0;
    for (uint32_t t = 0; t < mesh->triangle_count; ++t) {
        uint32_t a = m->weld[mesh->indices[3u * t]], b = m->weld[mesh->indices[3u * t + 1]],
                 c = m->weld[mesh->indices[3u * t + 2]];
        if (a == b || b == c || a == c) continue; /* collapsed by the weld: no prism */
        m->triangles[3u * kept] = a;
        m->triangles[3u * kept + 1] = b;
        m->triangles[3u * kept + 2] = c;
        ++kept;
    }
    m->triangle_count = kept;
    if (kept < mesh->triangle_count)
        sinew_host_log(host, SINEW_LOG_INFO, "ps: %u of %u triangles collapse when coincident "
                       "vertices are welded; they get no prism", mesh->triangle_count - kept,
                       mesh->triangle_count);
    double lo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, hi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
    for (uint32_t i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(lo[k], m->rest[3u * i + k]);
            hi[k] = fmax(hi[k], m->rest[3u * i + k]);
        }
    m->diagonal = sqrt(dist2(lo, hi));
    if (!(m->diagonal > 0.0)) m->diagonal = 1.0;
    return SINEW_OK;
}

/* ---- Sec. 3.1: bones and joints ---- */

/* User-given radii (Sec. 3.1: "the user may specify the joint and bone radii directly"):
 * "joint:radius,joint:radius,..." sets the radius of the bones that start at each named joint
 * (the segments from its position to its children); marks them in `given`. A malformed entry,
 * an unknown joint, a joint that starts no bone or a radius that is not a positive finite
 * number is SINEW_ERROR_PARAMETER with one log line. */
static sinew_result user_radii(const sinew_host_api* host, const sinew_rig_view* rig, ps_model* m,
                               const char* list, uint8_t* given)
{
    const char* entry = list;
    while (*entry) {
        const char* end = strchr(entry, ',');
        size_t len = end ? (size_t)(end - entry) : strlen(entry);
        const char* colon = NULL;
        for (size_t k = 0; k < len; ++k)
            if (entry[k] == ':') colon = entry + k;
        if (!colon || colon == entry || (size_t)(colon - entry) + 1u >= len || len > 255u)
            return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                   "ps: bone_radii entry \"%.*s\" is not joint:radius",
                                   (int)(len < 255u ? len : 255u), entry);
        char name[256], number[256];
        size_t nl = (size_t)(colon - entry), vl = len - nl - 1u;
        memcpy(name, entry, nl);
        name[nl] = '\0';
        memcpy(number, colon + 1, vl);
        number[vl] = '\0';
        double radius = 0.0;
        if (!sinew_number_parse(number, &radius) || !(radius > 0.0))
            return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                   "ps: bone_radii: the radius \"%s\" of joint \"%s\" is not a "
                                   "positive number", number, name);
        uint32_t joint = PS_NONE;
        for (uint32_t j = 0; j < rig->joint_count && joint == PS_NONE; ++j)
            if (rig->names && rig->names[j] && strcmp(rig->names[j], name) == 0) joint = j;
        if (joint == PS_NONE)
            return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                   "ps: bone_radii names joint \"%s\", which the rig does not have",
                                   name);
        uint32_t hits = 0;
        for (uint32_t b = 0; b < m->bone_count; ++b)
            if (m->bones[b].joint == joint || m->bones[b].end[0] == joint) {
                m->bones[b].radius = radius;
                given[b] = 1;
                ++hits;
            }
        if (hits == 0)
            return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                   "ps: bone_radii: no bone starts at joint \"%s\" (a leaf, or at "
                                   "its parent's position)", name);
        entry = end ? end + 1 : entry + len;
    }
    return SINEW_OK;
}

/* Parents may come in any order: settle joints whose parent is settled until all are (the
 * runtime has checked that the graph is a forest). A joint at its parent's position takes the
 * parent's representative; `order` receives the joints in settling order. */
static sinew_result settle_joints(const sinew_host_api* host, const sinew_rig_view* rig,
                                  ps_model* m, uint32_t* order, uint8_t* done)
{
    uint32_t jn = m->joint_count;
    double extent = 0.0;
    for (uint32_t j = 0; j < jn; ++j) {
        double p[3];
        ps_joint_position(m, j, p);
        for (int k = 0; k < 3; ++k) extent = fmax(extent, fabs(p[k]));
    }
    double same2 = (1e-7 * (extent > 0.0 ? extent : 1.0)) * (1e-7 * (extent > 0.0 ? extent : 1.0));
    uint32_t settled = 0;
    while (settled < jn) {
        uint32_t before = settled;
        for (uint32_t j = 0; j < jn; ++j) {
            if (done[j]) continue;
            int32_t p = rig->parents[j];
            if (p >= 0 && !done[p]) continue;
            m->joint_rep[j] = j;
            if (p >= 0) {
                double a[3], b[3];
                ps_joint_position(m, (uint32_t)p, a);
                ps_joint_position(m, j, b);
                if (dist2(a, b) <= same2) m->joint_rep[j] = m->joint_rep[p];
            }
            done[j] = 1;
            order[settled++] = j;
        }
        if (settled == before)
            return sinew_host_fail(host, SINEW_ERROR_SKELETON, "ps: the skeleton has a cycle");
    }
    return SINEW_OK;
}

/* A bone per segment from a joint to a child at a different position, in settling order;
 * spheres where there is no segment at all. */
static void make_bones(const sinew_rig_view* rig, ps_model* m, const uint32_t* order)
{
    uint32_t jn = m->joint_count, bc = 0;
    for (uint32_t i = 0; i < jn; ++i) {
        uint32_t c = order[i];
        int32_t p = rig->parents[c];
        if (p < 0 || m->joint_rep[c] != c) continue; /* root, or at its parent's position */
        ps_bone* b = &m->bones[bc++];
        b->joint = (uint32_t)p;
        b->child = c;
        b->end[0] = m->joint_rep[p];
        b->end[1] = c;
    }
    if (bc == 0) {
        /* No segment at all (one joint, or all joints at one place): every distinct joint
         * position becomes a sphere, a bone of length zero. */
        for (uint32_t i = 0; i < jn; ++i) {
            uint32_t j = order[i];
            if (m->joint_rep[j] != j) continue;
            ps_bone* b = &m->bones[bc++];
            b->joint = j;
            b->child = j;
            b->end[0] = b->end[1] = j;
        }
    }
    m->bone_count = bc;
}

/* The joints' representatives and the bones (Sec. 3.1), with the settling order and flags
 * as scratch. */
static sinew_result joints_and_bones(const sinew_host_api* host, const sinew_rig_view* rig,
                                     ps_model* m)
{
    uint32_t jn = m->joint_count;
    m->joint_rep = (uint32_t*)sinew_host_calloc(host, jn, sizeof(uint32_t));
    m->joint_radius = (double*)sinew_host_calloc(host, jn, sizeof(double));
    m->bones = (ps_bone*)sinew_host_calloc(host, jn, sizeof(ps_bone));
    uint32_t* order = (uint32_t*)sinew_host_calloc(host, jn, sizeof(uint32_t));
    uint8_t* done = (uint8_t*)sinew_host_calloc(host, jn, 1u);
    sinew_result r = SINEW_OK;
    if (!m->joint_rep || !m->joint_radius || !m->bones || !order || !done)
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory for %u joints",
                            jn);
    if (r == SINEW_OK) r = settle_joints(host, rig, m, order, done);
    if (r == SINEW_OK) make_bones(rig, m, order);
    sinew_host_free(host, order);
    sinew_host_free(host, done);
    return r;
}

/* The centre and radius of each skin triangle's bounding sphere, 4 doubles per triangle. */
static void triangle_spheres(const ps_model* m, double* spheres)
{
    for (uint32_t t = 0; t < m->triangle_count; ++t) {
        const double* v[3];
        for (int k = 0; k < 3; ++k) v[k] = m->rest + 3u * m->triangles[3u * t + k];
        double* s = spheres + 4u * t;
        for (int k = 0; k < 3; ++k) s[k] = (v[0][k] + v[1][k] + v[2][k]) / 3.0;
        s[3] = sqrt(fmax(dist2(s, v[0]), fmax(dist2(s, v[1]), dist2(s, v[2]))));
    }
}

/* The squared closest distance of segment [a, e] to the skin surface; each triangle is
 * skipped when its bounding sphere is farther than the best distance found so far. */
static double skin_dist2(const ps_model* m, const double* spheres, const double a[3],
                         const double e[3])
{
    uint32_t tc = m->triangle_count;
    double best = DBL_MAX;
    for (uint32_t t = 0; t < tc; ++t) {
        const double* s = spheres + 4u * t;
        double q[3];
        ps_closest_on_segment(s, a, e, q);
        double lb = sqrt(dist2(s, q)) - s[3];
        if (lb > 0.0 && lb * lb >= best) continue;
        const uint32_t* tri = m->triangles + 3u * t;
        double d = ps_segment_triangle_dist2(a, e, m->rest + 3u * tri[0],
                                             m->rest + 3u * tri[1], m->rest + 3u * tri[2]);
        if (d < best) best = d;
    }
    if (tc == 0) {
        /* No surface: the closest skin vertex stands in for it. */
        for (uint32_t i = 0; i < m->n; ++i) {
            double q[3];
            ps_closest_on_segment(m->rest + 3u * i, a, e, q);
            best = fmin(best, dist2(m->rest + 3u * i, q));
        }
    }
    return best;
}

typedef struct radii_job {
    ps_model* m;
    const double* spheres;
} radii_job;

/* The radii of bones [begin, end) (skin_radii). */
static void bone_radius_range(void* data, uint32_t begin, uint32_t end)
{
    const radii_job* job = (const radii_job*)data;
    ps_model* m = job->m;
    for (uint32_t bi = begin; bi < end; ++bi) {
        ps_bone* b = &m->bones[bi];
        double a[3], e[3];
        ps_joint_position(m, b->end[0], a);
        ps_joint_position(m, b->end[1], e);
        double best = skin_dist2(m, job->spheres, a, e);
        b->radius = best < DBL_MAX ? PS_RADIUS_FRACTION * sqrt(best) : 0.0;
    }
}

/* Bone radius: 75 % of the closest distance to the skin surface (Sec. 3.1); one bone per job. */
static sinew_result skin_radii(const sinew_host_api* host, ps_model* m)
{
    uint32_t tc = m->triangle_count;
    double* spheres = (double*)sinew_host_calloc(host, tc ? tc : 1u, 4u * sizeof(double));
    if (!spheres) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
    triangle_spheres(m, spheres);
    radii_job job = {m, spheres};
    sinew_host_parallel_for(host, bone_radius_range, &job, m->bone_count, 1u);
    sinew_host_free(host, spheres);
    return SINEW_OK;
}

/* Joint radius: the largest radius of the incident bones. */
static void joint_radii(ps_model* m)
{
    for (uint32_t bi = 0; bi < m->bone_count; ++bi)
        for (int k = 0; k < 2; ++k) {
            uint32_t j = m->bones[bi].end[k];
            m->joint_radius[j] = fmax(m->joint_radius[j], m->bones[bi].radius);
        }
}

/* Eq. (1): r1 + r2 + 2 rb <= lb, by scaling the three radii of a bone that does not fit;
 * radii only shrink, so repeated passes settle. User-given radii (`given`, may be NULL) obey
 * it too, with one WARNING when any had to shrink. */
static void fit_radii(const sinew_host_api* host, ps_model* m, const uint8_t* given)
{
    uint32_t given_scaled = 0;
    double given_scaled_min = DBL_MAX;
    for (uint32_t pass = 0; pass < 1000u; ++pass) {
        bool changed = false;
        for (uint32_t bi = 0; bi < m->bone_count; ++bi) {
            ps_bone* b = &m->bones[bi];
            if (b->end[0] == b->end[1]) continue;
            double a[3], e[3];
            ps_joint_position(m, b->end[0], a);
            ps_joint_position(m, b->end[1], e);
            double len = sqrt(dist2(a, e));
            double sum = m->joint_radius[b->end[0]] + m->joint_radius[b->end[1]] + 2.0 * b->radius;
            if (sum <= len * (1.0 + 1e-9)) continue;
            double f = len / sum;
            if (given && given[bi] && b->radius * f < given_scaled_min)
                given_scaled_min = b->radius * f;
            if (given && given[bi]) ++given_scaled;
            b->radius *= f;
            m->joint_radius[b->end[0]] *= f;
            m->joint_radius[b->end[1]] *= f;
            changed = true;
        }
        if (!changed) break;
    }
    if (given_scaled)
        sinew_host_log(host, SINEW_LOG_WARNING,
                       "ps: bone_radii: %u scalings of user-given bone radii were needed to fit "
                       "the bones (eq. 1: r1 + r2 + 2 rb <= lb); the smallest is now %g",
                       given_scaled, given_scaled_min);
}

/* The radii of Sec. 3.1: from the skin, the user-given ones (bone_radii: NULL or "" for
 * none) over them, the joints' from their bones, then all fitted to eq. (1). */
static sinew_result bone_and_joint_radii(const sinew_host_api* host, const sinew_rig_view* rig,
                                         const char* bone_radii, ps_model* m)
{
    sinew_result r = skin_radii(host, m);
    if (r != SINEW_OK) return r;
    uint8_t* given = NULL;
    if (bone_radii && bone_radii[0]) {
        given = (uint8_t*)sinew_host_calloc(host, m->bone_count ? m->bone_count : 1u, 1u);
        if (!given) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
        r = user_radii(host, rig, m, bone_radii, given);
    }
    if (r == SINEW_OK) {
        joint_radii(m);
        fit_radii(host, m, given);
    }
    sinew_host_free(host, given);
    return r;
}

sinew_result ps_skeleton_build(const sinew_host_api* host, const sinew_rig_view* rig,
                               const char* bone_radii, ps_model* m)
{
    m->joint_count = rig->joint_count;
    m->joint_rest = rig->bind_matrices;
    sinew_result r = joints_and_bones(host, rig, m);
    if (r == SINEW_OK) r = bone_and_joint_radii(host, rig, bone_radii, m);
    return r;
}
