/* Automatic skin weights (runtime/weights.c): rows normalised with at most 4 or 8 influences,
 * adjacent vertices within 0.2 in every joint's weight, limb blends 0.5 to 2 bone radii wide
 * (or as narrow as a coarse mesh allows), on hand-made tubes and on every character; bad
 * input and out of memory. SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_import.h>
#include <sinew/sinew_host.h>

#include "test_support.h"
#include "weights.h"

#ifndef SINEW_TEST_HAS_ASSIMP
#define SINEW_TEST_HAS_ASSIMP 0
#endif

/* The largest difference of a joint's weight across an edge that the scheme promises. */
#define WT_EDGE_BOUND 0.2
/* Blend zone bounds in bone radii, and in local edge lengths where the mesh is too coarse
 * for 2 radii: the edge bound alone needs 0.8 / 0.2 = 4 edges between the 0.1 and 0.9
 * levels; 7 leaves room for the irregular edges of a real mesh. */
#define WT_BLEND_MIN_RADII 0.5
#define WT_BLEND_MAX_RADII 2.0
#define WT_BLEND_MAX_EDGES 7.0
/* A vertex belongs to the limb at joint j when this share of its weight lies on j's parent
 * and on j's subtree; the rest of the skin (a torso under the arm, trousers under a hand)
 * blends for other reasons. */
#define WT_LIMB_SHARE 0.75

static sinew_test_log g_log;

/* ---------------------------------------------------------------------------------------- */
/* Host: a counting allocator that can fail on one call, the capture logger, serial jobs     */
/* ---------------------------------------------------------------------------------------- */

typedef struct wt_allocator {
    long live;
    long calls;
    long fail_at; /* this call returns NULL; -1: none */
} wt_allocator;

static void* wt_alloc(size_t size, size_t alignment, void* user)
{
    wt_allocator* a = (wt_allocator*)user;
    long call = a->calls++;
    if (call == a->fail_at) return NULL;
    unsigned char* raw = (unsigned char*)malloc(size + alignment + sizeof(void*));
    if (!raw) return NULL;
    uintptr_t p = ((uintptr_t)(raw + sizeof(void*)) + alignment - 1) & ~(uintptr_t)(alignment - 1);
    ((void**)p)[-1] = raw;
    a->live++;
    return (void*)p;
}

static void wt_free(void* ptr, void* user)
{
    if (!ptr) return;
    ((wt_allocator*)user)->live--;
    free(((void**)ptr)[-1]);
}

/* Runs the job in chunks of `grain`, in order, to exercise the ranges. */
static void wt_parallel_for(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain,
                            void* user)
{
    (void)user;
    for (uint32_t begin = 0; begin < count; begin += grain)
        fn(data, begin, count - begin > grain ? begin + grain : count);
}

/* Runs the whole range at once. */
static void wt_parallel_once(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain,
                             void* user)
{
    (void)grain;
    (void)user;
    fn(data, 0, count);
}

static sinew_host_api wt_host(wt_allocator* a)
{
    sinew_host_api host;
    memset(&host, 0, sizeof host);
    host.struct_size = (uint32_t)sizeof host;
    host.allocator.alloc = wt_alloc;
    host.allocator.free = wt_free;
    host.allocator.user = a;
    host.logger = g_log.logger;
    host.log_level = SINEW_LOG_DEBUG;
    host.jobs.parallel_for = wt_parallel_for;
    host.jobs.thread_count = 1;
    return host;
}

static void wt_weights_free(const sinew_host_api* host, sinew_auto_weights* w)
{
    sinew_host_free(host, w->offsets);
    sinew_host_free(host, w->joints);
    sinew_host_free(host, w->weights);
    memset(w, 0, sizeof *w);
}

/* ---------------------------------------------------------------------------------------- */
/* Inputs                                                                                   */
/* ---------------------------------------------------------------------------------------- */

typedef struct wt_input {
    const char* name;
    uint32_t vertex_count;
    const float* positions;
    uint32_t triangle_count;
    const uint32_t* indices;
    uint32_t joint_count;
    const int32_t* parents;
    const float* bind;
    const char* const* names; /* may be NULL */
} wt_input;

typedef struct wt_mesh {
    uint32_t vertex_count, triangle_count;
    float* positions;
    uint32_t* indices;
} wt_mesh;

static void wt_mesh_free(wt_mesh* m)
{
    free(m->positions);
    free(m->indices);
    memset(m, 0, sizeof *m);
}

static uint32_t wt_add_vertex(wt_mesh* m, float x, float y, float z)
{
    m->positions = (float*)realloc(m->positions, (m->vertex_count + 1) * 3 * sizeof(float));
    assert_non_null(m->positions);
    float* p = m->positions + 3 * (size_t)m->vertex_count;
    p[0] = x;
    p[1] = y;
    p[2] = z;
    return m->vertex_count++;
}

static void wt_add_triangle(wt_mesh* m, uint32_t a, uint32_t b, uint32_t c)
{
    m->indices = (uint32_t*)realloc(m->indices, (m->triangle_count + 1) * 3 * sizeof(uint32_t));
    assert_non_null(m->indices);
    uint32_t* t = m->indices + 3 * (size_t)m->triangle_count++;
    t[0] = a;
    t[1] = b;
    t[2] = c;
}

/* Appends a tube along x from x0 to x1 around the line (y, z) = center: `rings` rings of
 * `sides` vertices, optionally closed by a fan at each end. With `seam`, the first column is
 * duplicated (same positions, other vertices) to close the tube, as exporters split UV seams. */
static void wt_add_tube(wt_mesh* m, float x0, float x1, uint32_t rings, uint32_t sides,
                        float radius, float cy, float cz, int caps, int seam)
{
    const uint32_t columns = sides + (seam ? 1u : 0u);
    const uint32_t first = m->vertex_count;
    for (uint32_t r = 0; r < rings; ++r) {
        float x = x0 + (x1 - x0) * (float)r / (float)(rings - 1);
        for (uint32_t s = 0; s < columns; ++s) {
            double angle = 2.0 * 3.14159265358979323846 * (double)(s % sides) / sides;
            wt_add_vertex(m, x, cy + radius * (float)cos(angle), cz + radius * (float)sin(angle));
        }
    }
    for (uint32_t r = 0; r + 1 < rings; ++r) {
        for (uint32_t s = 0; s < sides; ++s) {
            uint32_t s1 = seam ? s + 1 : (s + 1) % sides;
            uint32_t a = first + r * columns + s, b = first + r * columns + s1;
            uint32_t c = a + columns, d = b + columns;
            wt_add_triangle(m, a, c, b);
            wt_add_triangle(m, b, c, d);
        }
    }
    if (caps) {
        uint32_t c0 = wt_add_vertex(m, x0, cy, cz);
        uint32_t c1 = wt_add_vertex(m, x1, cy, cz);
        uint32_t last = first + (rings - 1) * columns;
        for (uint32_t s = 0; s < sides; ++s) {
            uint32_t s1 = seam ? s + 1 : (s + 1) % sides;
            wt_add_triangle(m, c0, first + s1, first + s);
            wt_add_triangle(m, c1, last + s, last + s1);
        }
    }
}

static void wt_translation(float* bind, uint32_t joint, float x, float y, float z)
{
    float* b = bind + 16 * (size_t)joint;
    memset(b, 0, 16 * sizeof(float));
    b[0] = b[5] = b[10] = b[15] = 1.0f;
    b[12] = x;
    b[13] = y;
    b[14] = z;
}

static wt_input wt_input_of(const char* name, const wt_mesh* m, uint32_t joint_count,
                            const int32_t* parents, const float* bind)
{
    wt_input in = { name, m->vertex_count, m->positions, m->triangle_count, m->indices,
                    joint_count, parents, bind, NULL };
    return in;
}

static sinew_result wt_compute(const sinew_host_api* host, const wt_input* in,
                               uint32_t max_influences, sinew_auto_weights* out)
{
    return sinew_compute_auto_weights(host, in->vertex_count, in->positions, in->triangle_count,
                                      in->indices, in->joint_count, in->parents, in->bind,
                                      max_influences, out);
}

/* ---------------------------------------------------------------------------------------- */
/* Criteria                                                                                 */
/* ---------------------------------------------------------------------------------------- */

static double wt_weight(const sinew_auto_weights* w, uint32_t v, uint32_t joint)
{
    for (uint32_t i = w->offsets[v]; i < w->offsets[v + 1]; ++i)
        if (w->joints[i] == joint) return w->weights[i];
    return 0.0;
}

/* Rows: 1..max_influences entries, valid distinct joints, positive finite weights sorted by
 * decreasing weight, summing to 1. */
static void wt_check_rows(const wt_input* in, const sinew_auto_weights* w, uint32_t max_influences)
{
    assert_non_null(w->offsets);
    assert_non_null(w->joints);
    assert_non_null(w->weights);
    assert_int_equal(w->offsets[0], 0);
    for (uint32_t v = 0; v < in->vertex_count; ++v) {
        uint32_t begin = w->offsets[v], end = w->offsets[v + 1];
        if (end <= begin || end - begin > max_influences)
            fail_msg("%s: vertex %u has %u influences (max %u)", in->name, v, end - begin,
                     max_influences);
        double sum = 0.0;
        for (uint32_t i = begin; i < end; ++i) {
            if (w->joints[i] >= in->joint_count)
                fail_msg("%s: vertex %u has joint %u", in->name, v, w->joints[i]);
            if (!(w->weights[i] >= 0.0f) || !isfinite(w->weights[i]))
                fail_msg("%s: vertex %u has weight %g", in->name, v, w->weights[i]);
            if (i > begin && w->weights[i] > w->weights[i - 1])
                fail_msg("%s: vertex %u is not sorted", in->name, v);
            for (uint32_t k = begin; k < i; ++k)
                if (w->joints[k] == w->joints[i])
                    fail_msg("%s: vertex %u repeats joint %u", in->name, v, w->joints[i]);
            sum += w->weights[i];
        }
        if (fabs(sum - 1.0) > 1e-5)
            fail_msg("%s: vertex %u weights sum to %.8f", in->name, v, sum);
    }
}

/* The largest difference of any joint's weight across a triangle edge. */
static double wt_max_edge_difference(const wt_input* in, const sinew_auto_weights* w,
                                     uint32_t* worst_joint)
{
    double worst = 0.0;
    for (uint32_t t = 0; t < in->triangle_count; ++t) {
        for (int e = 0; e < 3; ++e) {
            uint32_t a = in->indices[3 * (size_t)t + e], b = in->indices[3 * (size_t)t + (e + 1) % 3];
            for (int side = 0; side < 2; ++side) {
                uint32_t u = side ? b : a, o = side ? a : b;
                for (uint32_t i = w->offsets[u]; i < w->offsets[u + 1]; ++i) {
                    double d = fabs(w->weights[i] - wt_weight(w, o, w->joints[i]));
                    if (d > worst) {
                        worst = d;
                        *worst_joint = w->joints[i];
                    }
                }
            }
        }
    }
    return worst;
}

static int wt_compare_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

typedef struct wt_sort_vertex {
    float p[3];
    uint32_t index;
} wt_sort_vertex;

static int wt_compare_vertex(const void* a, const void* b)
{
    const wt_sort_vertex* x = (const wt_sort_vertex*)a;
    const wt_sort_vertex* y = (const wt_sort_vertex*)b;
    for (int k = 0; k < 3; ++k) {
        if (x->p[k] < y->p[k]) return -1;
        if (x->p[k] > y->p[k]) return 1;
    }
    return (x->index > y->index) - (x->index < y->index);
}

static double wt_segment_distance(const float* a, const float* b, const float* p)
{
    double d[3], ap[3], len2 = 0.0, t = 0.0;
    for (int k = 0; k < 3; ++k) {
        d[k] = (double)b[k] - a[k];
        ap[k] = (double)p[k] - a[k];
        len2 += d[k] * d[k];
        t += ap[k] * d[k];
    }
    t = len2 > 0.0 ? t / len2 : 0.0;
    if (t < 0.0) t = 0.0;
    if (t > 1.0) t = 1.0;
    double s = 0.0;
    for (int k = 0; k < 3; ++k) s += (ap[k] - t * d[k]) * (ap[k] - t * d[k]);
    return sqrt(s);
}

typedef struct wt_blend_stats {
    uint32_t checked;
    uint32_t skipped; /* only where allowed: no blend zone (a joint between separate parts) */
    double min_radii, max_radii;
} wt_blend_stats;

/* The blend zone at every limb joint j (a parent p, one child c, both bones longer than
 * 1e-5 of the mesh diagonal): the vertices of the limb (at least 3/4 of their weight on p and
 * on j's subtree) whose child-side weight (the sum over j's subtree) is within [0.1, 0.9].
 * Its extent along the joint's axis (the mean of the two bone directions) must lie between
 * 0.5 and 2 radii, where a coarse mesh allows that, else within 7 local edge lengths (the
 * 90th percentile of the axial length of the edges touching the zone). The radius is the
 * code's: the mean of the two bones' radii, each the median distance to the bone of the
 * (position-welded) vertices whose nearest bone it is. With `allow_gaps`, a joint without
 * any blend zone (no vertex nearest to one of its bones, or a joint in the gap between
 * separate parts of the mesh) is reported and skipped. */
static wt_blend_stats wt_check_blends(const wt_input* in, const sinew_auto_weights* w,
                                      int allow_gaps)
{
    wt_blend_stats stats = { 0, 0, 1e30, 0.0 };
    const uint32_t V = in->vertex_count, J = in->joint_count;
    double lo[3] = { 1e30, 1e30, 1e30 }, hi[3] = { -1e30, -1e30, -1e30 };
    for (uint32_t v = 0; v < V; ++v)
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(lo[k], in->positions[3 * (size_t)v + k]);
            hi[k] = fmax(hi[k], in->positions[3 * (size_t)v + k]);
        }
    double diagonal = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                           (hi[2] - lo[2]) * (hi[2] - lo[2]));
    /* Bones in the code's order: by owner, children by index. */
    uint32_t* seg_owner = (uint32_t*)malloc(J * sizeof(uint32_t));
    uint32_t* seg_end = (uint32_t*)malloc(J * sizeof(uint32_t));
    uint32_t S = 0;
    for (uint32_t j = 0; j < J; ++j)
        for (uint32_t c = 0; c < J; ++c) {
            if (in->parents[c] != (int32_t)j) continue;
            const float* a = in->bind + 16 * (size_t)j + 12;
            const float* b = in->bind + 16 * (size_t)c + 12;
            double len = sqrt(((double)b[0] - a[0]) * ((double)b[0] - a[0]) +
                              ((double)b[1] - a[1]) * ((double)b[1] - a[1]) +
                              ((double)b[2] - a[2]) * ((double)b[2] - a[2]));
            if (len <= 1e-5 * diagonal) continue;
            seg_owner[S] = j;
            seg_end[S++] = c;
        }
    /* Welded positions, nearest bones, radii. */
    wt_sort_vertex* sorted = (wt_sort_vertex*)malloc(V * sizeof *sorted);
    for (uint32_t v = 0; v < V; ++v) {
        memcpy(sorted[v].p, in->positions + 3 * (size_t)v, sizeof sorted[v].p);
        sorted[v].index = v;
    }
    qsort(sorted, V, sizeof *sorted, wt_compare_vertex);
    double* dist = (double*)malloc(V * sizeof(double));
    uint32_t* nearest = (uint32_t*)malloc(V * sizeof(uint32_t));
    uint32_t unique = 0;
    for (uint32_t i = 0; i < V; ++i) {
        const float* p = sorted[i].p;
        if (i > 0 && p[0] == sorted[i - 1].p[0] && p[1] == sorted[i - 1].p[1] &&
            p[2] == sorted[i - 1].p[2])
            continue;
        double best = 1e300;
        uint32_t bs = 0;
        for (uint32_t s = 0; s < S; ++s) {
            double d = wt_segment_distance(in->bind + 16 * (size_t)seg_owner[s] + 12,
                                           in->bind + 16 * (size_t)seg_end[s] + 12, p);
            if (d < best) {
                best = d;
                bs = s;
            }
        }
        dist[unique] = best;
        nearest[unique++] = bs;
    }
    double* radius = (double*)malloc((S ? S : 1) * sizeof(double));
    double* scratch = (double*)malloc((unique ? unique : 1) * sizeof(double));
    for (uint32_t s = 0; s < S; ++s) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < unique; ++i)
            if (nearest[i] == s) scratch[n++] = dist[i];
        qsort(scratch, n, sizeof(double), wt_compare_double);
        radius[s] = n == 0 ? -1.0 : n % 2 ? scratch[n / 2] : 0.5 * (scratch[n / 2 - 1] + scratch[n / 2]);
    }

    char* in_subtree = (char*)malloc(J);
    double* x = (double*)malloc(V * sizeof(double));
    char* zone = (char*)malloc(V);
    double* axial = (double*)malloc(3 * (size_t)in->triangle_count * sizeof(double));
    for (uint32_t j = 0; j < J; ++j) {
        int32_t p = in->parents[j];
        if (p < 0) continue;
        uint32_t child_count = 0, c = 0;
        for (uint32_t k = 0; k < J; ++k)
            if (in->parents[k] == (int32_t)j) {
                child_count++;
                c = k;
            }
        if (child_count != 1) continue;
        int s_in = -1, s_out = -1;
        for (uint32_t s = 0; s < S; ++s) {
            if (seg_owner[s] == (uint32_t)p && seg_end[s] == j) s_in = (int)s;
            if (seg_owner[s] == j && seg_end[s] == c) s_out = (int)s;
        }
        if (s_in < 0 || s_out < 0) continue;
        char name[32];
        if (in->names && in->names[j]) snprintf(name, sizeof name, "%s", in->names[j]);
        else snprintf(name, sizeof name, "joint %u", j);
        if (radius[s_in] < 0.0 || radius[s_out] < 0.0) {
            if (!allow_gaps) fail_msg("%s: no vertex is nearest to a bone at %s", in->name, name);
            print_message("  %-14s %-20s skipped: no vertex is nearest to one of its bones\n",
                          in->name, name);
            stats.skipped++;
            continue;
        }
        const double r = 0.5 * (radius[s_in] + radius[s_out]);
        const float* pp = in->bind + 16 * (size_t)p + 12;
        const float* pj = in->bind + 16 * (size_t)j + 12;
        const float* pc = in->bind + 16 * (size_t)c + 12;
        double din[3], dout[3], axis[3], ln = 0.0, lo_ = 0.0, la = 0.0;
        for (int k = 0; k < 3; ++k) {
            din[k] = (double)pj[k] - pp[k];
            dout[k] = (double)pc[k] - pj[k];
            ln += din[k] * din[k];
            lo_ += dout[k] * dout[k];
        }
        for (int k = 0; k < 3; ++k) {
            din[k] /= sqrt(ln);
            dout[k] /= sqrt(lo_);
            axis[k] = din[k] + dout[k];
            la += axis[k] * axis[k];
        }
        la = sqrt(la);
        for (int k = 0; k < 3; ++k) axis[k] = la >= 0.5 ? axis[k] / la : dout[k];
        for (uint32_t k = 0; k < J; ++k) {
            int32_t a = (int32_t)k;
            uint32_t guard = 0;
            while (a >= 0 && a != (int32_t)j && guard++ <= J) a = in->parents[a];
            in_subtree[k] = a == (int32_t)j;
        }
        double zlo = 1e30, zhi = -1e30;
        uint32_t count = 0;
        for (uint32_t v = 0; v < V; ++v) {
            double sub = 0.0, par = 0.0;
            for (uint32_t i = w->offsets[v]; i < w->offsets[v + 1]; ++i) {
                if (in_subtree[w->joints[i]]) sub += w->weights[i];
                if (w->joints[i] == (uint32_t)p) par += w->weights[i];
            }
            x[v] = 0.0;
            for (int k = 0; k < 3; ++k) x[v] += ((double)in->positions[3 * (size_t)v + k] - pj[k]) * axis[k];
            zone[v] = sub + par >= WT_LIMB_SHARE && sub >= 0.1 && sub <= 0.9;
            if (!zone[v]) continue;
            count++;
            zlo = fmin(zlo, x[v]);
            zhi = fmax(zhi, x[v]);
        }
        uint32_t edges = 0;
        for (uint32_t t = 0; t < in->triangle_count; ++t)
            for (int e = 0; e < 3; ++e) {
                uint32_t a = in->indices[3 * (size_t)t + e], b = in->indices[3 * (size_t)t + (e + 1) % 3];
                if (zone[a] || zone[b]) axial[edges++] = fabs(x[a] - x[b]);
            }
        qsort(axial, edges, sizeof(double), wt_compare_double);
        const double edge = edges ? axial[(size_t)(0.9 * (edges - 1))] : 0.0;
        const double extent = count ? zhi - zlo : 0.0;
        const double bound = fmax(WT_BLEND_MAX_RADII * r, WT_BLEND_MAX_EDGES * edge);
        if (count == 0 && allow_gaps) {
            print_message("  %-14s %-20s skipped: no blend zone (between separate parts)\n",
                          in->name, name);
            stats.skipped++;
            continue;
        }
        print_message("  %-14s %-20s radius %.3f: %4u vertices from %+.2f to %+.2f radii:"
                      " %.2f radii (%.1f edges), bound %.2f\n", in->name, name, r, count,
                      zlo / r, zhi / r, extent / r, edge > 0.0 ? extent / edge : 0.0, bound / r);
        if (count < 2)
            fail_msg("%s: joint %s has %u vertices in its blend zone", in->name, name, count);
        if (extent < WT_BLEND_MIN_RADII * r)
            fail_msg("%s: blend at %s spans %.2f radii, less than %.1f", in->name, name,
                     extent / r, WT_BLEND_MIN_RADII);
        if (extent > bound)
            fail_msg("%s: blend at %s spans %.2f radii (%.1f edges of %.3f), more than %.2f",
                     in->name, name, extent / r, extent / edge, edge, bound / r);
        stats.checked++;
        stats.min_radii = fmin(stats.min_radii, extent / r);
        stats.max_radii = fmax(stats.max_radii, extent / r);
    }
    free(seg_owner);
    free(seg_end);
    free(sorted);
    free(dist);
    free(nearest);
    free(radius);
    free(scratch);
    free(in_subtree);
    free(x);
    free(zone);
    free(axial);
    return stats;
}

/* Everything the scheme promises, for both influence caps; returns the blend figures of the
 * last. `limb_joints`: how many limb joints there are, all measured unless `allow_gaps`. */
static wt_blend_stats wt_check_all(const wt_input* in, uint32_t limb_joints, int allow_gaps)
{
    wt_allocator alloc = { 0, 0, -1 };
    sinew_host_api host = wt_host(&alloc);
    wt_blend_stats stats = { 0, 0, 0.0, 0.0 };
    const uint32_t caps[2] = { 4, 8 };
    for (int i = 0; i < 2; ++i) {
        sinew_auto_weights w;
        sinew_test_log_reset(&g_log);
        sinew_result r = wt_compute(&host, in, caps[i], &w);
        if (r != SINEW_OK)
            fail_msg("%s: %s (%s)", in->name, sinew_result_string(r), g_log.last);
        /* A warning would say the limiter gave up. */
        if (g_log.count[SINEW_LOG_ERROR] + g_log.count[SINEW_LOG_WARNING] != 0)
            fail_msg("%s: logged \"%s\"", in->name, g_log.last);
        wt_check_rows(in, &w, caps[i]);
        uint32_t worst_joint = 0;
        double worst = wt_max_edge_difference(in, &w, &worst_joint);
        print_message("%s, %u influences: largest weight difference across an edge %.3f"
                      " (joint %u)\n", in->name, caps[i], worst, worst_joint);
        if (worst > WT_EDGE_BOUND + 1e-6)
            fail_msg("%s: joint %u's weight differs by %.3f across an edge", in->name,
                     worst_joint, worst);
        stats = wt_check_blends(in, &w, allow_gaps);
        assert_int_equal(stats.checked + stats.skipped, limb_joints);
        wt_weights_free(&host, &w);
        assert_int_equal(alloc.live, 0);
    }
    return stats;
}

/* ---------------------------------------------------------------------------------------- */
/* Synthetic tubes                                                                          */
/* ---------------------------------------------------------------------------------------- */

/* The classic two-bone case: a tube of radius 1 along x from 0 to 10, joints at 0, 5, 10. */
static void test_two_bone_tube(void** state)
{
    (void)state;
    wt_mesh m = { 0 };
    wt_add_tube(&m, 0.0f, 10.0f, 101, 32, 1.0f, 0.0f, 0.0f, 1, 0);
    const int32_t parents[3] = { -1, 0, 1 };
    float bind[48];
    wt_translation(bind, 0, 0.0f, 0.0f, 0.0f);
    wt_translation(bind, 1, 5.0f, 0.0f, 0.0f);
    wt_translation(bind, 2, 10.0f, 0.0f, 0.0f);
    wt_input in = wt_input_of("two-bone tube", &m, 3, parents, bind);
    wt_blend_stats stats = wt_check_all(&in, 1, 0);
    /* The designed blend: a smoothstep over +-0.8 radii, whose 0.1..0.9 band is 0.97 radii
     * wide; rings every 0.1 radii see 0.8 of it. */
    assert_true(stats.min_radii >= 0.75 && stats.max_radii <= 1.0);

    wt_allocator alloc = { 0, 0, -1 };
    sinew_host_api host = wt_host(&alloc);
    sinew_auto_weights w, again;
    assert_int_equal(wt_compute(&host, &in, 4, &w), SINEW_OK);
    for (uint32_t v = 0; v < m.vertex_count; ++v) {
        float x = m.positions[3 * (size_t)v];
        /* The leaf owns no bone. */
        assert_true(wt_weight(&w, v, 2) == 0.0);
        /* Rigid beyond the blend, half and half at the joint. */
        if (x < 4.0f) assert_true(wt_weight(&w, v, 0) == 1.0);
        if (x > 6.0f) assert_true(wt_weight(&w, v, 1) == 1.0);
        if (fabsf(x - 5.0f) < 0.01f) assert_true(fabs(wt_weight(&w, v, 1) - 0.5) < 0.02);
        /* Monotone along the bone. */
        if (x > 4.0f && x < 6.0f) {
            double w1 = wt_weight(&w, v, 1);
            for (uint32_t u = 0; u < m.vertex_count; ++u)
                if (m.positions[3 * (size_t)u] > x + 0.05f && m.positions[3 * (size_t)u] < 6.0f)
                    assert_true(wt_weight(&w, u, 1) >= w1 - 1e-6);
        }
    }
    /* Deterministic, and independent of how the jobs split the vertices. */
    host.jobs.parallel_for = wt_parallel_once;
    assert_int_equal(wt_compute(&host, &in, 4, &again), SINEW_OK);
    assert_memory_equal(w.offsets, again.offsets, (m.vertex_count + 1) * sizeof(uint32_t));
    assert_memory_equal(w.joints, again.joints, w.offsets[m.vertex_count] * sizeof(uint32_t));
    assert_memory_equal(w.weights, again.weights, w.offsets[m.vertex_count] * sizeof(float));
    wt_weights_free(&host, &w);
    wt_weights_free(&host, &again);
    assert_int_equal(alloc.live, 0);
    wt_mesh_free(&m);
}

/* A coarse tube (rings every half radius): the designed blend is steeper than the edges
 * allow, so the limiter widens it; both criteria must still hold. */
static void test_coarse_tube(void** state)
{
    (void)state;
    wt_mesh m = { 0 };
    wt_add_tube(&m, 0.0f, 10.0f, 21, 10, 1.0f, 0.0f, 0.0f, 1, 0);
    const int32_t parents[4] = { -1, 0, 1, 2 };
    float bind[64];
    wt_translation(bind, 0, 0.0f, 0.0f, 0.0f);
    wt_translation(bind, 1, 3.0f, 0.0f, 0.0f);
    wt_translation(bind, 2, 7.0f, 0.0f, 0.0f);
    wt_translation(bind, 3, 10.0f, 0.0f, 0.0f);
    wt_input in = wt_input_of("coarse tube", &m, 4, parents, bind);
    wt_check_all(&in, 2, 0);
    wt_mesh_free(&m);
}

/* Exporters split vertices along seams: the copies must get the same weights. An open tube
 * (no caps) at the same time. */
static void test_seam_and_open_tube(void** state)
{
    (void)state;
    wt_mesh m = { 0 };
    wt_add_tube(&m, 0.0f, 10.0f, 51, 24, 1.0f, 0.0f, 0.0f, 0, 1);
    const int32_t parents[3] = { -1, 0, 1 };
    float bind[48];
    wt_translation(bind, 0, 0.0f, 0.0f, 0.0f);
    wt_translation(bind, 1, 5.0f, 0.0f, 0.0f);
    wt_translation(bind, 2, 10.0f, 0.0f, 0.0f);
    wt_input in = wt_input_of("seamed open tube", &m, 3, parents, bind);
    wt_check_all(&in, 1, 0);

    wt_allocator alloc = { 0, 0, -1 };
    sinew_host_api host = wt_host(&alloc);
    sinew_auto_weights w;
    assert_int_equal(wt_compute(&host, &in, 4, &w), SINEW_OK);
    const uint32_t columns = 25;
    for (uint32_t r = 0; r < 51; ++r) {
        uint32_t a = r * columns, b = r * columns + 24; /* same position */
        assert_int_equal(w.offsets[a + 1] - w.offsets[a], w.offsets[b + 1] - w.offsets[b]);
        for (uint32_t j = 0; j < 3; ++j) assert_true(wt_weight(&w, a, j) == wt_weight(&w, b, j));
    }
    wt_weights_free(&host, &w);
    assert_int_equal(alloc.live, 0);
    wt_mesh_free(&m);
}

/* One joint binds everything to it; joints without any bone are point influences. */
static void test_single_joint_and_points(void** state)
{
    (void)state;
    wt_mesh m = { 0 };
    wt_add_tube(&m, 0.0f, 10.0f, 41, 16, 1.0f, 0.0f, 0.0f, 1, 0);
    wt_allocator alloc = { 0, 0, -1 };
    sinew_host_api host = wt_host(&alloc);
    sinew_auto_weights w;

    const int32_t one_parent[1] = { -1 };
    float bind[48];
    wt_translation(bind, 0, 3.0f, 0.0f, 0.0f);
    wt_input one = wt_input_of("one joint", &m, 1, one_parent, bind);
    assert_int_equal(wt_compute(&host, &one, 4, &w), SINEW_OK);
    wt_check_rows(&one, &w, 4);
    for (uint32_t v = 0; v < m.vertex_count; ++v) {
        assert_int_equal(w.offsets[v + 1] - w.offsets[v], 1);
        assert_int_equal(w.joints[w.offsets[v]], 0);
    }
    wt_weights_free(&host, &w);

    /* Two roots and a joint coincident with its parent: no bone at all. */
    const int32_t parents[3] = { -1, -1, 1 };
    wt_translation(bind, 0, 0.0f, 0.0f, 0.0f);
    wt_translation(bind, 1, 10.0f, 0.0f, 0.0f);
    wt_translation(bind, 2, 10.0f, 0.0f, 0.0f);
    wt_input points = wt_input_of("point influences", &m, 3, parents, bind);
    wt_check_all(&points, 0, 0);
    assert_int_equal(wt_compute(&host, &points, 4, &w), SINEW_OK);
    for (uint32_t v = 0; v < m.vertex_count; ++v) {
        float x = m.positions[3 * (size_t)v];
        if (x < 3.0f) assert_true(wt_weight(&w, v, 0) == 1.0);
        if (x > 7.0f) assert_true(wt_weight(&w, v, 0) == 0.0);
    }
    wt_weights_free(&host, &w);
    assert_int_equal(alloc.live, 0);
    wt_mesh_free(&m);
}

/* A branching skeleton over disconnected parts: two tubes meeting at the root without
 * sharing vertices, a box far from every bone, a zero-length bone (a joint on its parent)
 * and coincident leaves. */
static void test_branches_parts_and_degenerate_bones(void** state)
{
    (void)state;
    wt_mesh m = { 0 };
    wt_add_tube(&m, 0.5f, 10.0f, 60, 16, 1.0f, 0.0f, 0.0f, 1, 0);   /* +x arm */
    wt_add_tube(&m, -10.0f, -0.5f, 60, 16, 1.0f, 0.0f, 0.0f, 1, 0); /* -x arm */
    wt_add_tube(&m, 40.0f, 41.0f, 3, 4, 1.0f, 30.0f, 0.0f, 1, 0);   /* far away */
    const int32_t parents[9] = { -1, 0, 1, 2, 0, 4, 5, 6, 6 };
    float bind[9 * 16];
    wt_translation(bind, 0, 0.0f, 0.0f, 0.0f);
    wt_translation(bind, 1, 0.0f, 0.0f, 0.0f);   /* zero-length bone 0->1 */
    wt_translation(bind, 2, 5.0f, 0.0f, 0.0f);
    wt_translation(bind, 3, 10.0f, 0.0f, 0.0f);
    wt_translation(bind, 4, -1.0f, 0.0f, 0.0f);
    wt_translation(bind, 5, -5.0f, 0.0f, 0.0f);
    wt_translation(bind, 6, -10.0f, 0.0f, 0.0f);
    wt_translation(bind, 7, -10.0f, 0.0f, 0.0f); /* two coincident leaves */
    wt_translation(bind, 8, -10.0f, 0.0f, 0.0f);
    wt_input in = wt_input_of("branches and parts", &m, 9, parents, bind);
    /* Limb joints with two real bones: 2 (1->2->3), 4 (0->4->5) and 5 (4->5->6). */
    wt_check_all(&in, 3, 0);

    wt_allocator alloc = { 0, 0, -1 };
    sinew_host_api host = wt_host(&alloc);
    sinew_auto_weights w;
    assert_int_equal(wt_compute(&host, &in, 8, &w), SINEW_OK);
    for (uint32_t v = 0; v < m.vertex_count; ++v) {
        const float* p = m.positions + 3 * (size_t)v;
        /* Leaves own nothing, nor does a joint whose bones all have zero length. */
        for (uint32_t j = 6; j <= 8; ++j) assert_true(wt_weight(&w, v, j) == 0.0);
        assert_true(wt_weight(&w, v, 3) == 0.0);
        /* The far box follows the nearest bone, the +x arm's tip. */
        if (p[0] >= 40.0f) assert_true(wt_weight(&w, v, 2) == 1.0);
        /* The arms' far ends follow their own bones, never the other arm's. */
        if (p[0] > 7.0f) assert_true(wt_weight(&w, v, 2) == 1.0);
        if (p[0] < -7.0f) assert_true(wt_weight(&w, v, 5) == 1.0);
    }
    wt_weights_free(&host, &w);
    assert_int_equal(alloc.live, 0);
    wt_mesh_free(&m);
}

/* ---------------------------------------------------------------------------------------- */
/* Bad input and out of memory                                                              */
/* ---------------------------------------------------------------------------------------- */

#define EXPECT_ERROR(call, code)                                                          \
    do {                                                                                  \
        sinew_test_log_reset(&g_log);                                                     \
        memset(&out, 0xAB, sizeof out);                                                   \
        sinew_result r_ = (call);                                                         \
        if (r_ != (code))                                                                 \
            fail_msg("%s returned %s, expected %s", #call, sinew_result_string(r_),      \
                     sinew_result_string(code));                                          \
        if (g_log.count[SINEW_LOG_ERROR] != 1)                                            \
            fail_msg("%s logged %d error lines, expected 1", #call,                      \
                     g_log.count[SINEW_LOG_ERROR]);                                       \
        assert_null(out.offsets);                                                         \
        assert_null(out.joints);                                                          \
        assert_null(out.weights);                                                         \
        assert_int_equal(alloc.live, 0);                                                  \
        print_message("  %s: %s\n", sinew_result_string(r_), g_log.last);                \
    } while (0)

static void test_bad_input(void** state)
{
    (void)state;
    wt_mesh m = { 0 };
    wt_add_tube(&m, 0.0f, 10.0f, 11, 8, 1.0f, 0.0f, 0.0f, 1, 0);
    int32_t parents[3] = { -1, 0, 1 };
    float bind[48];
    wt_translation(bind, 0, 0.0f, 0.0f, 0.0f);
    wt_translation(bind, 1, 5.0f, 0.0f, 0.0f);
    wt_translation(bind, 2, 10.0f, 0.0f, 0.0f);
    const uint32_t V = m.vertex_count, T = m.triangle_count;
    const float* P = m.positions;
    const uint32_t* I = m.indices;
    wt_allocator alloc = { 0, 0, -1 };
    sinew_host_api host = wt_host(&alloc);
    sinew_auto_weights out;

    /* Without a host nothing can be logged; the result still says why. */
    assert_int_equal(sinew_compute_auto_weights(NULL, V, P, T, I, 3, parents, bind, 4, &out),
                     SINEW_ERROR_INVALID_ARGUMENT);
    sinew_host_api no_alloc = host;
    no_alloc.allocator.alloc = NULL;
    EXPECT_ERROR(sinew_compute_auto_weights(&no_alloc, V, P, T, I, 3, parents, bind, 4, &out),
                 SINEW_ERROR_INVALID_ARGUMENT);
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_compute_auto_weights(&host, V, P, T, I, 3, parents, bind, 4, NULL),
                     SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    EXPECT_ERROR(sinew_compute_auto_weights(&host, V, NULL, T, I, 3, parents, bind, 4, &out),
                 SINEW_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(sinew_compute_auto_weights(&host, V, P, T, NULL, 3, parents, bind, 4, &out),
                 SINEW_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(sinew_compute_auto_weights(&host, V, P, T, I, 3, NULL, bind, 4, &out),
                 SINEW_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(sinew_compute_auto_weights(&host, V, P, T, I, 3, parents, NULL, 4, &out),
                 SINEW_ERROR_INVALID_ARGUMENT);
    const uint32_t bad_caps[4] = { 0, 3, 5, 16 };
    for (int i = 0; i < 4; ++i)
        EXPECT_ERROR(sinew_compute_auto_weights(&host, V, P, T, I, 3, parents, bind,
                                                bad_caps[i], &out),
                     SINEW_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(sinew_compute_auto_weights(&host, 0, P, T, I, 3, parents, bind, 4, &out),
                 SINEW_ERROR_EMPTY_MESH);
    EXPECT_ERROR(sinew_compute_auto_weights(&host, V, P, 0, I, 3, parents, bind, 4, &out),
                 SINEW_ERROR_EMPTY_MESH);
    EXPECT_ERROR(sinew_compute_auto_weights(&host, V, P, T, I, 0, parents, bind, 4, &out),
                 SINEW_ERROR_SKELETON);

    /* An index out of range (the mesh without its last vertex). */
    EXPECT_ERROR(sinew_compute_auto_weights(&host, V - 1, P, T, I, 3, parents, bind, 4, &out),
                 SINEW_ERROR_VERTEX_INDEX);
    m.indices[3 * (T - 1) + 2] = 0xFFFFFFFFu;
    EXPECT_ERROR(sinew_compute_auto_weights(&host, V, P, T, m.indices, 3, parents, bind, 4, &out),
                 SINEW_ERROR_VERTEX_INDEX);
    m.indices[3 * (T - 1) + 2] = 0;

    /* Non-finite positions and bind matrices. */
    const float bad_values[2] = { NAN, INFINITY };
    for (int i = 0; i < 2; ++i) {
        float keep = m.positions[3 * 7 + 1];
        m.positions[3 * 7 + 1] = bad_values[i];
        EXPECT_ERROR(sinew_compute_auto_weights(&host, V, P, T, I, 3, parents, bind, 4, &out),
                     SINEW_ERROR_NONFINITE);
        m.positions[3 * 7 + 1] = keep;
        keep = bind[16 + 13];
        bind[16 + 13] = bad_values[i];
        EXPECT_ERROR(sinew_compute_auto_weights(&host, V, P, T, I, 3, parents, bind, 4, &out),
                     SINEW_ERROR_NONFINITE);
        bind[16 + 13] = keep;
    }

    /* Parents out of range, on a cycle, or their own. */
    const int32_t bad_parents[4][3] = { { -1, 0, 3 }, { -2, 0, 1 }, { -1, 2, 1 }, { 0, 0, 1 } };
    const sinew_result codes[4] = { SINEW_ERROR_JOINT_INDEX, SINEW_ERROR_JOINT_INDEX,
                                    SINEW_ERROR_SKELETON, SINEW_ERROR_SKELETON };
    for (int i = 0; i < 4; ++i)
        EXPECT_ERROR(sinew_compute_auto_weights(&host, V, P, T, I, 3, bad_parents[i], bind, 4,
                                                &out),
                     codes[i]);

    /* The same inputs, repaired, work. */
    assert_int_equal(sinew_compute_auto_weights(&host, V, P, T, I, 3, parents, bind, 4, &out),
                     SINEW_OK);
    wt_weights_free(&host, &out);
    assert_int_equal(alloc.live, 0);
    wt_mesh_free(&m);
}

/* Every allocation failing in turn: OUT_OF_MEMORY, one error line, nothing leaked. */
static void test_out_of_memory(void** state)
{
    (void)state;
    wt_mesh m = { 0 };
    wt_add_tube(&m, 0.0f, 10.0f, 21, 8, 1.0f, 0.0f, 0.0f, 1, 0);
    const int32_t parents[3] = { -1, 0, 1 };
    float bind[48];
    wt_translation(bind, 0, 0.0f, 0.0f, 0.0f);
    wt_translation(bind, 1, 5.0f, 0.0f, 0.0f);
    wt_translation(bind, 2, 10.0f, 0.0f, 0.0f);
    wt_input in = wt_input_of("oom", &m, 3, parents, bind);
    long failures = 0;
    for (long fail_at = 0;; ++fail_at) {
        wt_allocator alloc = { 0, 0, fail_at };
        sinew_host_api host = wt_host(&alloc);
        sinew_auto_weights out;
        sinew_test_log_reset(&g_log);
        sinew_result r = wt_compute(&host, &in, 4, &out);
        if (r == SINEW_OK) {
            assert_true(alloc.calls <= fail_at); /* no allocation was refused */
            wt_weights_free(&host, &out);
            assert_int_equal(alloc.live, 0);
            break;
        }
        assert_int_equal(r, SINEW_ERROR_OUT_OF_MEMORY);
        assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
        assert_null(out.offsets);
        assert_int_equal(alloc.live, 0);
        failures++;
    }
    print_message("  %ld allocations, each refused once\n", failures);
    assert_true(failures > 20);
    wt_mesh_free(&m);
}

/* ---------------------------------------------------------------------------------------- */
/* Characters                                                                               */
/* ---------------------------------------------------------------------------------------- */

/* Limb joints of a skeleton: a parent, one child, both bones longer than 1e-5 of the mesh
 * diagonal (counted here, apart from the measurement, so that none is silently dropped). */
static uint32_t wt_count_limb_joints(const wt_input* in)
{
    double lo[3] = { 1e30, 1e30, 1e30 }, hi[3] = { -1e30, -1e30, -1e30 };
    for (uint32_t v = 0; v < in->vertex_count; ++v)
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(lo[k], in->positions[3 * (size_t)v + k]);
            hi[k] = fmax(hi[k], in->positions[3 * (size_t)v + k]);
        }
    double diagonal = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                           (hi[2] - lo[2]) * (hi[2] - lo[2]));
    uint32_t count = 0;
    for (uint32_t j = 0; j < in->joint_count; ++j) {
        int32_t p = in->parents[j];
        if (p < 0) continue;
        uint32_t children = 0, c = 0;
        for (uint32_t k = 0; k < in->joint_count; ++k)
            if (in->parents[k] == (int32_t)j) {
                children++;
                c = k;
            }
        if (children != 1) continue;
        const float* a = in->bind + 16 * (size_t)p + 12;
        const float* b = in->bind + 16 * (size_t)j + 12;
        const float* d = in->bind + 16 * (size_t)c + 12;
        double l1 = 0.0, l2 = 0.0;
        for (int k = 0; k < 3; ++k) {
            l1 += ((double)b[k] - a[k]) * ((double)b[k] - a[k]);
            l2 += ((double)d[k] - b[k]) * ((double)d[k] - b[k]);
        }
        if (sqrt(l1) > 1e-5 * diagonal && sqrt(l2) > 1e-5 * diagonal) count++;
    }
    return count;
}

/* `parts`: the character's mesh has separate parts, so a joint may lie between them. */
static void wt_character(const char* label, const char* path, uint32_t use_simulation_mesh,
                         int parts)
{
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.use_simulation_mesh = use_simulation_mesh;
    sinew_character* ch = NULL;
    sinew_result r = sinew_import_character(path, &options, &ch);
    if (r != SINEW_OK) fail_msg("import %s: %s", path, sinew_result_string(r));
    const sinew_rig_desc* rig = &ch->rig;
    wt_input in = { label, rig->render_mesh.vertex_count, rig->render_mesh.positions,
                    rig->render_mesh.triangle_count, rig->render_mesh.indices,
                    rig->skeleton.joint_count, rig->skeleton.parents,
                    rig->skeleton.bind_matrices, rig->skeleton.names };
    uint32_t limbs = wt_count_limb_joints(&in);
    print_message("%s: %u vertices, %u triangles, %u joints, %u limb joints\n", label,
                  in.vertex_count, in.triangle_count, in.joint_count, limbs);
    wt_blend_stats stats = wt_check_all(&in, limbs, parts);
    print_message("%s: %u limb joints measured, %u skipped; blends %.2f to %.2f radii\n", label,
                  stats.checked, stats.skipped, stats.min_radii, stats.max_radii);
    assert_true(stats.checked > 0);
    sinew_import_free(ch);
}

static void test_cylinder(void** state)
{
    (void)state;
    wt_character("cylinder", sinew_test_data_path("characters/cylinder/cylinder.ini"), 0, 0);
}

static void test_tbone(void** state)
{
    (void)state;
    wt_character("tbone", sinew_test_data_path("characters/tbone/tbone.ini"), 0, 0);
}

static void test_male(void** state)
{
    (void)state;
    wt_character("male", sinew_test_data_path("characters/male/male.ini"), 0, 0);
}

static void test_male_simulation_mesh(void** state)
{
    (void)state;
    wt_character("male_LR20", sinew_test_data_path("characters/male/male.ini"), 1, 0);
}

static void test_bcn_epileptic(void** state)
{
    (void)state;
    if (!SINEW_TEST_HAS_ASSIMP) {
        print_message("SKIP: sinew_import was built without assimp\n");
        skip();
    }
    /* Three sub-meshes (body, head, trousers) and closed eyes and teeth: six parts. */
    wt_character("BCN_Epileptic", sinew_test_assimp_path("X/BCN_Epileptic.X"), 0, 1);
}

int main(void)
{
    sinew_test_log_init(&g_log);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_bone_tube),
        cmocka_unit_test(test_coarse_tube),
        cmocka_unit_test(test_seam_and_open_tube),
        cmocka_unit_test(test_single_joint_and_points),
        cmocka_unit_test(test_branches_parts_and_degenerate_bones),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_cylinder),
        cmocka_unit_test(test_tbone),
        cmocka_unit_test(test_male),
        cmocka_unit_test(test_male_simulation_mesh),
        cmocka_unit_test(test_bcn_epileptic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
