/* The simulated surface, the volumetric skeleton (projective skinning Sec. 3.1) and the skin
 * shrinking (Sec. 3.2). SPDX-License-Identifier: MIT */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps_internal.h"

/* Smoothing of the foot points (Sec. 3.2): lambda of eq. (2), the paper's 1/2. */
#define PS_SHRINK_LAMBDA 0.5
/* Converged when no foot point moved more than this fraction of the bounding-box diagonal in
 * one iteration, or after the cap. The smoothing is a diffusion: local irregularities of the
 * closest-point map (Fig. 2c) vanish within tens of iterations, what remains is a slow drift
 * along the bones that the cap cuts off. */
#define PS_SHRINK_TOLERANCE 1e-6
#define PS_SHRINK_MAX_ITERATIONS 2000u
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
        char* stop = NULL;
        double radius = strtod(number, &stop);
        if (!stop || *stop != '\0' || !isfinite(radius) || !(radius > 0.0))
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

sinew_result ps_skeleton_build(const sinew_host_api* host, const sinew_rig_view* rig,
                               const char* bone_radii, ps_model* m)
{
    uint32_t jn = rig->joint_count;
    m->joint_count = jn;
    m->joint_rest = rig->bind_matrices;
    m->joint_rep = (uint32_t*)sinew_host_calloc(host, jn, sizeof(uint32_t));
    m->joint_radius = (double*)sinew_host_calloc(host, jn, sizeof(double));
    m->bones = (ps_bone*)sinew_host_calloc(host, jn, sizeof(ps_bone));
    uint32_t* order = (uint32_t*)sinew_host_calloc(host, jn, sizeof(uint32_t));
    uint8_t* done = (uint8_t*)sinew_host_calloc(host, jn, 1u);
    if (!m->joint_rep || !m->joint_radius || !m->bones || !order || !done) {
        sinew_host_free(host, order);
        sinew_host_free(host, done);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory for %u joints",
                               jn);
    }
    /* Parents may come in any order: settle joints whose parent is settled until all are (the
     * runtime has checked that the graph is a forest). */
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
        if (settled == before) {
            sinew_host_free(host, order);
            sinew_host_free(host, done);
            return sinew_host_fail(host, SINEW_ERROR_SKELETON, "ps: the skeleton has a cycle");
        }
    }
    sinew_host_free(host, done);
    uint32_t bc = 0;
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
    sinew_host_free(host, order);
    m->bone_count = bc;

    /* Bone radius: 75 % of the closest distance to the skin surface. Each triangle is skipped
     * when its bounding sphere is farther than the best distance found so far. */
    uint32_t tc = m->triangle_count;
    double* spheres = (double*)sinew_host_calloc(host, tc ? tc : 1u, 4u * sizeof(double));
    if (!spheres) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
    for (uint32_t t = 0; t < tc; ++t) {
        const double* v[3];
        for (int k = 0; k < 3; ++k) v[k] = m->rest + 3u * m->triangles[3u * t + k];
        double* s = spheres + 4u * t;
        for (int k = 0; k < 3; ++k) s[k] = (v[0][k] + v[1][k] + v[2][k]) / 3.0;
        s[3] = sqrt(fmax(dist2(s, v[0]), fmax(dist2(s, v[1]), dist2(s, v[2]))));
    }
    for (uint32_t bi = 0; bi < bc; ++bi) {
        ps_bone* b = &m->bones[bi];
        double a[3], e[3];
        ps_joint_position(m, b->end[0], a);
        ps_joint_position(m, b->end[1], e);
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
        b->radius = best < DBL_MAX ? PS_RADIUS_FRACTION * sqrt(best) : 0.0;
    }
    sinew_host_free(host, spheres);
    uint8_t* given = NULL;
    if (bone_radii && bone_radii[0]) {
        given = (uint8_t*)sinew_host_calloc(host, bc ? bc : 1u, 1u);
        if (!given) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
        sinew_result r = user_radii(host, rig, m, bone_radii, given);
        if (r != SINEW_OK) {
            sinew_host_free(host, given);
            return r;
        }
    }
    /* Joint radius: the largest radius of the incident bones. */
    for (uint32_t bi = 0; bi < bc; ++bi)
        for (int k = 0; k < 2; ++k) {
            uint32_t j = m->bones[bi].end[k];
            m->joint_radius[j] = fmax(m->joint_radius[j], m->bones[bi].radius);
        }
    /* Eq. (1): r1 + r2 + 2 rb <= lb, by scaling the three radii of a bone that does not fit;
     * radii only shrink, so repeated passes settle. User-given radii obey it too. */
    uint32_t given_scaled = 0;
    double given_scaled_min = DBL_MAX;
    for (uint32_t pass = 0; pass < 1000u; ++pass) {
        bool changed = false;
        for (uint32_t bi = 0; bi < bc; ++bi) {
            ps_bone* b = &m->bones[bi];
            if (b->end[0] == b->end[1]) continue;
            double a[3], e[3];
            ps_joint_position(m, b->end[0], a);
            ps_joint_position(m, b->end[1], e);
            double len = sqrt(dist2(a, e));
            double sum = m->joint_radius[b->end[0]] + m->joint_radius[b->end[1]] + 2.0 * b->radius;
            if (sum <= len * (1.0 + 1e-9)) continue;
            double f = len / sum;
            if (given && given[bi] && b->radius * f < given_scaled_min) given_scaled_min = b->radius * f;
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
    sinew_host_free(host, given);
    return SINEW_OK;
}

/* ---- Sec. 3.2: skin shrinking ---- */

typedef struct shrink_ctx {
    const ps_model* m;
    const uint32_t* ring_offsets; /* one-ring neighbours of each skin vertex */
    const uint32_t* ring;
    const uint32_t* adj_offsets; /* bones sharing an end with each bone (itself included) */
    const uint32_t* adj;
    const double* ends; /* 6 per bone: both end positions */
    const uint8_t* fixed;
    const double* s_in;
    const uint32_t* bone_in;
    double* s_out;
    uint32_t* bone_out;
    double* move2; /* per vertex: squared move of this iteration */
} shrink_ctx;

/* Closest point on bone `b`; keeps it when closer than *best (ties: lower bone index). */
static inline void try_bone(const shrink_ctx* c, uint32_t b, const double p[3], double* best,
                            uint32_t* best_bone, double out[3])
{
    double q[3];
    ps_closest_on_segment(p, c->ends + 6u * b, c->ends + 6u * b + 3u, q);
    double d = dist2(p, q);
    if (d < *best || (d == *best && b < *best_bone)) {
        *best = d;
        *best_bone = b;
        memcpy(out, q, sizeof q);
    }
}

/* Eq. (2) for vertices [begin, end): a Jacobi step (reads s_in only), then the projection back
 * onto the skeleton, over the bones next to the vertex's bone and to its neighbours' bones: the
 * average lies between them. */
static void shrink_range(void* data, uint32_t begin, uint32_t end)
{
    const shrink_ctx* c = (const shrink_ctx*)data;
    for (uint32_t i = begin; i < end; ++i) {
        const double* si = c->s_in + 3u * i;
        uint32_t r0 = c->ring_offsets[i], r1 = c->ring_offsets[i + 1];
        if (c->fixed[i] || r0 == r1) {
            memcpy(c->s_out + 3u * i, si, 3u * sizeof(double));
            c->bone_out[i] = c->bone_in[i];
            c->move2[i] = 0.0;
            continue;
        }
        double avg[3] = {0.0, 0.0, 0.0};
        for (uint32_t r = r0; r < r1; ++r) {
            const double* sj = c->s_in + 3u * c->ring[r];
            for (int k = 0; k < 3; ++k) avg[k] += sj[k] - si[k];
        }
        double p[3];
        double f = PS_SHRINK_LAMBDA / (double)(r1 - r0);
        for (int k = 0; k < 3; ++k) p[k] = si[k] + f * avg[k];
        double best = DBL_MAX;
        uint32_t best_bone = PS_NONE;
        double q[3] = {si[0], si[1], si[2]};
        uint32_t own = c->bone_in[i];
        for (uint32_t a = c->adj_offsets[own]; a < c->adj_offsets[own + 1]; ++a)
            try_bone(c, c->adj[a], p, &best, &best_bone, q);
        for (uint32_t r = r0; r < r1; ++r) {
            uint32_t b = c->bone_in[c->ring[r]];
            if (b != own) try_bone(c, b, p, &best, &best_bone, q);
        }
        memcpy(c->s_out + 3u * i, q, sizeof q);
        c->bone_out[i] = best_bone;
        c->move2[i] = dist2(q, si);
    }
}

/* First parameter t in [0, 1] where x + t d enters the sphere (center, r); DBL_MAX if never. */
static double ray_sphere(const double x[3], const double d[3], const double center[3], double r)
{
    double m[3] = {x[0] - center[0], x[1] - center[1], x[2] - center[2]};
    double a = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    double b = m[0] * d[0] + m[1] * d[1] + m[2] * d[2];
    double cc = m[0] * m[0] + m[1] * m[1] + m[2] * m[2] - r * r;
    if (cc <= 0.0) return 0.0;
    if (!(a > 0.0) || b >= 0.0) return DBL_MAX;
    double disc = b * b - a * cc;
    if (disc < 0.0) return DBL_MAX;
    double t = (-b - sqrt(disc)) / a;
    return t >= 0.0 && t <= 1.0 ? t : DBL_MAX;
}

/* First t in [0, 1] where x + t d enters the capsule around [p0, p1] with radius r. */
static double ray_capsule(const double x[3], const double d[3], const double p0[3],
                          const double p1[3], double r)
{
    double best = fmin(ray_sphere(x, d, p0, r), ray_sphere(x, d, p1, r));
    double axis[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
    double len = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    if (!(len > 0.0)) return best;
    for (int k = 0; k < 3; ++k) axis[k] /= len;
    double m[3] = {x[0] - p0[0], x[1] - p0[1], x[2] - p0[2]};
    double md = m[0] * axis[0] + m[1] * axis[1] + m[2] * axis[2];
    double dd = d[0] * axis[0] + d[1] * axis[1] + d[2] * axis[2];
    double mp[3], dp[3];
    for (int k = 0; k < 3; ++k) {
        mp[k] = m[k] - md * axis[k];
        dp[k] = d[k] - dd * axis[k];
    }
    double a = dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2];
    double b = mp[0] * dp[0] + mp[1] * dp[1] + mp[2] * dp[2];
    double cc = mp[0] * mp[0] + mp[1] * mp[1] + mp[2] * mp[2] - r * r;
    if (a > 0.0) {
        double disc = b * b - a * cc;
        if (disc >= 0.0) {
            double t = (-b - sqrt(disc)) / a;
            double h = md + t * dd;
            if (t >= 0.0 && t <= 1.0 && h >= 0.0 && h <= len && t < best) best = t;
        }
    }
    return best;
}

/* Signed distance of p to the volumetric skeleton (negative inside). */
static double skeleton_distance(const ps_model* m, const double* ends, const double p[3])
{
    double best = DBL_MAX;
    for (uint32_t b = 0; b < m->bone_count; ++b) {
        double q[3];
        ps_closest_on_segment(p, ends + 6u * b, ends + 6u * b + 3u, q);
        best = fmin(best, sqrt(dist2(p, q)) - m->bones[b].radius);
    }
    for (uint32_t j = 0; j < m->joint_count; ++j) {
        if (m->joint_radius[j] <= 0.0) continue;
        double c[3];
        ps_joint_position(m, j, c);
        best = fmin(best, sqrt(dist2(p, c)) - m->joint_radius[j]);
    }
    return best;
}

sinew_result ps_shrink(const sinew_host_api* host, ps_model* m)
{
    uint32_t n = m->n, bc = m->bone_count, tc = m->triangle_count;
    sinew_result r = SINEW_OK;
    size_t ring_cap = 6u * (size_t)tc;
    uint32_t* ring_offsets = (uint32_t*)sinew_host_calloc(host, n + 1u, sizeof(uint32_t));
    uint32_t* ring = (uint32_t*)sinew_host_calloc(host, ring_cap ? ring_cap : 1u, sizeof(uint32_t));
    uint32_t* adj_offsets = (uint32_t*)sinew_host_calloc(host, bc + 1u, sizeof(uint32_t));
    uint32_t* joint_offsets = (uint32_t*)sinew_host_calloc(host, m->joint_count + 1u, sizeof(uint32_t));
    uint32_t* joint_bones = (uint32_t*)sinew_host_calloc(host, 2u * (size_t)bc, sizeof(uint32_t));
    uint32_t* adj = NULL;
    double* ends = (double*)sinew_host_calloc(host, bc, 6u * sizeof(double));
    uint8_t* fixed = (uint8_t*)sinew_host_calloc(host, n, 1u);
    double* s[2] = {(double*)sinew_host_calloc(host, n, 3u * sizeof(double)),
                    (double*)sinew_host_calloc(host, n, 3u * sizeof(double))};
    uint32_t* bone[2] = {(uint32_t*)sinew_host_calloc(host, n, sizeof(uint32_t)),
                         (uint32_t*)sinew_host_calloc(host, n, sizeof(uint32_t))};
    double* move2 = (double*)sinew_host_calloc(host, n, sizeof(double));
    uint32_t* degree = (uint32_t*)sinew_host_calloc(host, m->joint_count, sizeof(uint32_t));
    m->vertex_bone = (uint32_t*)sinew_host_calloc(host, 2u * (size_t)n, sizeof(uint32_t));
    if (!ring_offsets || !ring || !adj_offsets || !joint_offsets || !joint_bones || !ends || !fixed || !s[0] || !s[1] ||
        !bone[0] || !bone[1] || !move2 || !degree || !m->vertex_bone) {
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory shrinking %u "
                            "vertices", n);
        goto done;
    }
    for (uint32_t b = 0; b < bc; ++b) {
        ps_joint_position(m, m->bones[b].end[0], ends + 6u * b);
        ps_joint_position(m, m->bones[b].end[1], ends + 6u * b + 3u);
        degree[m->bones[b].end[0]]++;
        degree[m->bones[b].end[1]]++;
    }
    /* Bones sharing an end (itself included, possibly twice): the bones of both end joints. */
    for (uint32_t j = 0; j < m->joint_count; ++j) joint_offsets[j + 1] = joint_offsets[j] + degree[j];
    for (uint32_t b = 0; b < bc; ++b)
        for (int k = 0; k < 2; ++k) joint_bones[joint_offsets[m->bones[b].end[k]]++] = b;
    for (uint32_t j = m->joint_count; j > 0; --j) joint_offsets[j] = joint_offsets[j - 1];
    joint_offsets[0] = 0;
    size_t adj_count = 0;
    for (uint32_t b = 0; b < bc; ++b)
        adj_count += (size_t)degree[m->bones[b].end[0]] + degree[m->bones[b].end[1]];
    adj = (uint32_t*)sinew_host_calloc(host, adj_count ? adj_count : 1u, sizeof(uint32_t));
    if (!adj || adj_count > UINT32_MAX) {
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory for the bone "
                            "adjacency of %u bones", bc);
        goto done;
    }
    for (uint32_t b = 0; b < bc; ++b) {
        adj_offsets[b + 1] = adj_offsets[b];
        for (int k = 0; k < 2; ++k) {
            uint32_t j = m->bones[b].end[k];
            for (uint32_t q = joint_offsets[j]; q < joint_offsets[j + 1]; ++q)
                adj[adj_offsets[b + 1]++] = joint_bones[q];
        }
    }
    /* One-ring neighbours: both directions of every edge, sorted and deduplicated. */
    for (uint32_t t = 0; t < tc; ++t)
        for (int k = 0; k < 3; ++k) ring_offsets[m->triangles[3u * t + k] + 1] += 2u;
    for (uint32_t i = 0; i < n; ++i) ring_offsets[i + 1] += ring_offsets[i];
    uint32_t* cursor = (uint32_t*)sinew_host_calloc(host, n + 1u, sizeof(uint32_t));
    if (!cursor) {
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
        goto done;
    }
    memcpy(cursor, ring_offsets, (n + 1u) * sizeof(uint32_t));
    for (uint32_t t = 0; t < tc; ++t) {
        const uint32_t* tri = m->triangles + 3u * t;
        for (int k = 0; k < 3; ++k) {
            uint32_t i = tri[k];
            ring[cursor[i]++] = tri[(k + 1) % 3];
            ring[cursor[i]++] = tri[(k + 2) % 3];
        }
    }
    {
        uint32_t w = 0;
        for (uint32_t i = 0; i < n; ++i) {
            uint32_t b0 = ring_offsets[i], b1 = ring_offsets[i + 1];
            /* insertion sort: rings are short */
            for (uint32_t a = b0 + 1; a < b1; ++a) {
                uint32_t v = ring[a], q = a;
                while (q > b0 && ring[q - 1] > v) {
                    ring[q] = ring[q - 1];
                    --q;
                }
                ring[q] = v;
            }
            ring_offsets[i] = w;
            for (uint32_t a = b0; a < b1; ++a)
                if (a == b0 || ring[a] != ring[a - 1]) ring[w++] = ring[a];
        }
        ring_offsets[n] = w;
    }
    sinew_host_free(host, cursor);

    /* Foot points start at the closest skeleton point (Fig. 2c). A point clamped to an end
     * joint that has only this bone (hands, feet, head) stays fixed. */
    for (uint32_t i = 0; i < n; ++i) {
        const double* x = m->rest + 3u * i;
        double best = DBL_MAX;
        uint32_t best_bone = 0;
        double q[3] = {x[0], x[1], x[2]};
        double best_t = 0.0;
        for (uint32_t b = 0; b < bc; ++b) {
            double p[3];
            double t = ps_closest_on_segment(x, ends + 6u * b, ends + 6u * b + 3u, p);
            double d = dist2(x, p);
            if (d < best) {
                best = d;
                best_bone = b;
                best_t = t;
                memcpy(q, p, sizeof q);
            }
        }
        memcpy(s[0] + 3u * i, q, sizeof q);
        bone[0][i] = best_bone;
        const ps_bone* b = &m->bones[best_bone];
        if (b->end[0] != b->end[1] && ((best_t <= 0.0 && degree[b->end[0]] == 1) ||
                                       (best_t >= 1.0 && degree[b->end[1]] == 1)))
            fixed[i] = 1;
    }

    /* Eq. (2), iterated to convergence (or the cap), re-projected after each iteration. */
    shrink_ctx ctx;
    ctx.m = m;
    ctx.ring_offsets = ring_offsets;
    ctx.ring = ring;
    ctx.adj_offsets = adj_offsets;
    ctx.adj = adj;
    ctx.ends = ends;
    ctx.fixed = fixed;
    ctx.move2 = move2;
    uint32_t cur = 0, it = 0;
    double residual = 0.0;
    double tol2 = (PS_SHRINK_TOLERANCE * m->diagonal) * (PS_SHRINK_TOLERANCE * m->diagonal);
    for (it = 0; it < PS_SHRINK_MAX_ITERATIONS && bc > 0; ++it) {
        ctx.s_in = s[cur];
        ctx.bone_in = bone[cur];
        ctx.s_out = s[cur ^ 1u];
        ctx.bone_out = bone[cur ^ 1u];
        sinew_host_parallel_for(host, shrink_range, &ctx, n, 512u);
        cur ^= 1u;
        double mx = 0.0;
        for (uint32_t i = 0; i < n; ++i) mx = fmax(mx, move2[i]);
        residual = sqrt(mx) / m->diagonal;
        if (mx <= tol2) {
            ++it;
            break;
        }
    }
    m->shrink_iterations = it;
    m->shrink_residual = residual;
    sinew_host_log(host, SINEW_LOG_INFO,
                   "ps: skin shrinking: %u smoothing iterations, last foot point move %.3g of "
                   "the bounding-box diagonal (%s)", it, residual,
                   residual <= PS_SHRINK_TOLERANCE ? "converged" : "iteration cap reached");

    /* Move each skin vertex toward its foot point until it hits the volumetric skeleton. */
    uint32_t inside = 0;
    double thickness = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        const double* x = m->rest + 3u * i;
        const double* sp = s[cur] + 3u * i;
        double* q = m->rest + 3u * ((size_t)n + i);
        uint32_t own = bone[cur][i];
        double d[3] = {sp[0] - x[0], sp[1] - x[1], sp[2] - x[2]};
        uint32_t hit_bone = own;
        if (bc == 0) {
            memcpy(q, x, 3u * sizeof(double));
        } else if (skeleton_distance(m, ends, x) <= 0.0) {
            /* Already inside (a joint sphere wider than this part of the skin): halfway to
             * the foot point keeps the prism's height. */
            ++inside;
            for (int k = 0; k < 3; ++k) q[k] = x[k] + 0.5 * d[k];
        } else {
            double best = 1.0;
            uint32_t best_joint = PS_NONE;
            for (uint32_t b = 0; b < bc; ++b) {
                double t = ray_capsule(x, d, ends + 6u * b, ends + 6u * b + 3u, m->bones[b].radius);
                if (t < best) {
                    best = t;
                    hit_bone = b;
                    best_joint = PS_NONE;
                }
            }
            for (uint32_t j = 0; j < m->joint_count; ++j) {
                if (m->joint_radius[j] <= 0.0) continue;
                double c[3];
                ps_joint_position(m, j, c);
                double t = ray_sphere(x, d, c, m->joint_radius[j]);
                if (t < best) {
                    best = t;
                    best_joint = j;
                }
            }
            for (int k = 0; k < 3; ++k) q[k] = x[k] + best * d[k];
            if (best_joint != PS_NONE) {
                /* On a joint sphere: keep the foot point's bone when it meets that joint, else
                 * the incident bone closest to the base point. */
                const ps_bone* ob = &m->bones[own];
                if (ob->end[0] == best_joint || ob->end[1] == best_joint) {
                    hit_bone = own;
                } else {
                    double bd = DBL_MAX;
                    for (uint32_t b = 0; b < bc; ++b) {
                        if (m->bones[b].end[0] != best_joint && m->bones[b].end[1] != best_joint)
                            continue;
                        double p[3];
                        ps_closest_on_segment(q, ends + 6u * b, ends + 6u * b + 3u, p);
                        double dd = dist2(p, q);
                        if (dd < bd) {
                            bd = dd;
                            hit_bone = b;
                        }
                    }
                }
            }
        }
        m->vertex_bone[i] = own;
        m->vertex_bone[n + i] = hit_bone;
        thickness += sqrt(dist2(x, q));
    }
    m->inside_count = inside;
    m->thickness = n ? thickness / n : 0.0;
    if (!(m->thickness > 0.0)) m->thickness = 1e-3 * m->diagonal;
    if (inside)
        sinew_host_log(host, SINEW_LOG_INFO,
                       "ps: %u skin vertices lie inside the volumetric skeleton; their base "
                       "points are halfway to the skeleton line", inside);
done:
    sinew_host_free(host, ring_offsets);
    sinew_host_free(host, ring);
    sinew_host_free(host, adj_offsets);
    sinew_host_free(host, adj);
    sinew_host_free(host, joint_offsets);
    sinew_host_free(host, joint_bones);
    sinew_host_free(host, ends);
    sinew_host_free(host, fixed);
    sinew_host_free(host, s[0]);
    sinew_host_free(host, s[1]);
    sinew_host_free(host, bone[0]);
    sinew_host_free(host, bone[1]);
    sinew_host_free(host, move2);
    sinew_host_free(host, degree);
    return r;
}
