/* Topology (welding, edges, closedness), enclosed volume, edge stretch and finiteness of a
 * deformed mesh. SPDX-License-Identifier: MIT */
#include "sample_metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sample_log.h"

typedef struct weld_key {
    float p[3];
    uint32_t index;
} weld_key;

/* Lexicographic order on positions, then index: equal positions end up adjacent, the lowest
 * index first, so it becomes the representative. Float == treats -0 and +0 as one point. */
static int compare_weld_keys(const void* a, const void* b)
{
    const weld_key* x = (const weld_key*)a;
    const weld_key* y = (const weld_key*)b;
    for (int k = 0; k < 3; ++k) {
        if (x->p[k] < y->p[k]) return -1;
        if (x->p[k] > y->p[k]) return 1;
    }
    return (x->index > y->index) - (x->index < y->index);
}

/* An undirected edge as one sortable key, plus the direction the triangle walked it. */
typedef struct edge_key {
    uint64_t key;       /* (min << 32) | max */
    int forward;        /* 1 when the triangle walks min -> max */
} edge_key;

static int compare_edge_keys(const void* a, const void* b)
{
    const edge_key* x = (const edge_key*)a;
    const edge_key* y = (const edge_key*)b;
    if (x->key != y->key) return (x->key > y->key) - (x->key < y->key);
    return x->forward - y->forward;
}

static int all_finite3(const float* p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

sinew_result sample_topology_build(const float* rest_positions, uint32_t vertex_count,
                                   const uint32_t* indices, uint32_t triangle_count,
                                   sample_topology* out)
{
    if (!out) return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_topology_build: out is NULL");
    memset(out, 0, sizeof *out);
    if (!rest_positions || !indices) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT,
                           "sample_topology_build: positions or indices is NULL");
    }
    if (vertex_count == 0 || triangle_count == 0) {
        return sample_fail(SINEW_ERROR_EMPTY_MESH,
                           "sample_topology_build: mesh has %u vertices and %u triangles",
                           vertex_count, triangle_count);
    }
    for (uint32_t v = 0; v < vertex_count; ++v) {
        if (!all_finite3(rest_positions + 3 * (size_t)v)) {
            return sample_fail(SINEW_ERROR_NONFINITE,
                               "sample_topology_build: rest position of vertex %u is not finite", v);
        }
    }
    for (size_t i = 0; i < 3 * (size_t)triangle_count; ++i) {
        if (indices[i] >= vertex_count) {
            return sample_fail(SINEW_ERROR_VERTEX_INDEX,
                               "sample_topology_build: triangle %zu uses vertex %u of %u",
                               i / 3, indices[i], vertex_count);
        }
    }

    weld_key* keys = malloc(sizeof *keys * vertex_count);
    uint32_t* weld = malloc(sizeof *weld * vertex_count);
    uint32_t* triangles = malloc(sizeof *triangles * 3 * (size_t)triangle_count);
    edge_key* edge_keys = malloc(sizeof *edge_keys * 3 * (size_t)triangle_count);
    if (!keys || !weld || !triangles || !edge_keys) {
        free(keys); free(weld); free(triangles); free(edge_keys);
        return sample_fail(SINEW_ERROR_OUT_OF_MEMORY,
                           "sample_topology_build: out of memory for %u vertices, %u triangles",
                           vertex_count, triangle_count);
    }

    for (uint32_t v = 0; v < vertex_count; ++v) {
        memcpy(keys[v].p, rest_positions + 3 * (size_t)v, sizeof keys[v].p);
        keys[v].index = v;
    }
    qsort(keys, vertex_count, sizeof *keys, compare_weld_keys);
    uint32_t welded = 0;
    for (uint32_t i = 0; i < vertex_count; ++i) {
        const float* p = keys[i].p;
        const float* q = i > 0 ? keys[i - 1].p : NULL;
        if (q && p[0] == q[0] && p[1] == q[1] && p[2] == q[2]) {
            weld[keys[i].index] = weld[keys[i - 1].index];
        } else {
            weld[keys[i].index] = keys[i].index;
            ++welded;
        }
    }
    free(keys);

    uint32_t kept = 0, degenerate = 0;
    for (uint32_t t = 0; t < triangle_count; ++t) {
        uint32_t a = weld[indices[3 * (size_t)t]];
        uint32_t b = weld[indices[3 * (size_t)t + 1]];
        uint32_t c = weld[indices[3 * (size_t)t + 2]];
        if (a == b || b == c || c == a) {
            ++degenerate;
            continue;
        }
        triangles[3 * (size_t)kept] = a;
        triangles[3 * (size_t)kept + 1] = b;
        triangles[3 * (size_t)kept + 2] = c;
        ++kept;
    }

    size_t key_count = 3 * (size_t)kept;
    for (size_t t = 0; t < kept; ++t) {
        for (int k = 0; k < 3; ++k) {
            uint32_t from = triangles[3 * t + (size_t)k];
            uint32_t to = triangles[3 * t + (size_t)((k + 1) % 3)];
            uint32_t lo = from < to ? from : to, hi = from < to ? to : from;
            edge_keys[3 * t + (size_t)k].key = ((uint64_t)lo << 32) | hi;
            edge_keys[3 * t + (size_t)k].forward = from < to;
        }
    }
    qsort(edge_keys, key_count, sizeof *edge_keys, compare_edge_keys);

    size_t unique = 0;
    for (size_t i = 0; i < key_count; ++i) {
        if (i == 0 || edge_keys[i].key != edge_keys[i - 1].key) ++unique;
    }
    uint32_t* edges = malloc(sizeof *edges * 2 * (unique ? unique : 1));
    if (!edges) {
        free(weld); free(triangles); free(edge_keys);
        return sample_fail(SINEW_ERROR_OUT_OF_MEMORY,
                           "sample_topology_build: out of memory for %zu edges", unique);
    }
    int closed = kept > 0;
    size_t e = 0;
    for (size_t i = 0; i < key_count;) {
        size_t j = i;
        while (j < key_count && edge_keys[j].key == edge_keys[i].key) ++j;
        /* Sorted by direction within a group: a manifold, consistently oriented edge is
         * exactly one backward and one forward traversal. */
        if (j - i != 2 || edge_keys[i].forward != 0 || edge_keys[i + 1].forward != 1) closed = 0;
        edges[2 * e] = (uint32_t)(edge_keys[i].key >> 32);
        edges[2 * e + 1] = (uint32_t)(edge_keys[i].key & 0xFFFFFFFFu);
        ++e;
        i = j;
    }
    free(edge_keys);

    out->vertex_count = vertex_count;
    out->welded_vertex_count = welded;
    out->weld = weld;
    out->triangle_count = kept;
    out->triangles = triangles;
    out->degenerate_triangles = degenerate;
    out->edge_count = (uint32_t)unique;
    out->edges = edges;
    out->closed = closed;
    return SINEW_OK;
}

void sample_topology_free(sample_topology* topology)
{
    if (!topology) return;
    free(topology->weld);
    free(topology->triangles);
    free(topology->edges);
    memset(topology, 0, sizeof *topology);
}

uint32_t sample_count_nonfinite(const float* positions, uint32_t vertex_count)
{
    if (!positions) return 0;
    uint32_t count = 0;
    for (uint32_t v = 0; v < vertex_count; ++v) {
        if (!all_finite3(positions + 3 * (size_t)v)) ++count;
    }
    return count;
}

/* Six times the signed volume of the tetrahedron (ref, a, b, c), in double relative to ref. */
static double tet_volume6(const double ref[3], const float* a, const float* b, const float* c)
{
    double d[3][3];
    for (int k = 0; k < 3; ++k) {
        d[0][k] = (double)a[k] - ref[k];
        d[1][k] = (double)b[k] - ref[k];
        d[2][k] = (double)c[k] - ref[k];
    }
    return d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) -
           d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
           d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]);
}

/* Sum of the signed tetrahedron volumes (ref, a, b, c) over the listed welded triangles (all of
 * them when `list` is NULL); NaN when a corner is not finite. */
static double cone_volume(const sample_topology* topology, const float* positions,
                          const uint32_t* list, uint32_t count, const double ref[3])
{
    double sum = 0.0;
    for (uint32_t i = 0; i < count; ++i) {
        const uint32_t* tri = topology->triangles + 3 * (size_t)(list ? list[i] : i);
        const float* a = positions + 3 * (size_t)tri[0];
        const float* b = positions + 3 * (size_t)tri[1];
        const float* c = positions + 3 * (size_t)tri[2];
        if (!all_finite3(a) || !all_finite3(b) || !all_finite3(c)) return NAN;
        sum += tet_volume6(ref, a, b, c);
    }
    return sum / 6.0;
}

double sample_enclosed_volume(const sample_topology* topology, const float* positions)
{
    if (!topology || !positions || !topology->closed) return NAN;
    /* Tetrahedra from a reference point near the mesh rather than the origin: a character
     * far from the origin would otherwise sum large terms that cancel. */
    const float* first = positions + 3 * (size_t)topology->triangles[0];
    if (!all_finite3(first)) return NAN;
    const double ref[3] = { first[0], first[1], first[2] };
    return cone_volume(topology, positions, NULL, topology->triangle_count, ref);
}

uint32_t sample_local_select(const sample_topology* topology, const float* rest,
                             const double centre[3], double radius, uint32_t** out_triangles)
{
    if (out_triangles) *out_triangles = NULL;
    if (!topology || !rest || !centre || !(radius >= 0.0)) return 0;
    uint32_t* list = NULL;
    if (out_triangles && topology->triangle_count > 0) {
        list = malloc(sizeof *list * topology->triangle_count);
        if (!list) {
            sample_fail(SINEW_ERROR_OUT_OF_MEMORY, "sample_local_select: out of memory");
            return UINT32_MAX;
        }
    }
    const double r2 = radius * radius;
    uint32_t count = 0;
    for (uint32_t t = 0; t < topology->triangle_count; ++t) {
        int inside = 1;
        for (int k = 0; k < 3 && inside; ++k) {
            const float* p = rest + 3 * (size_t)topology->triangles[3 * (size_t)t + (size_t)k];
            double dx = (double)p[0] - centre[0], dy = (double)p[1] - centre[1],
                   dz = (double)p[2] - centre[2];
            inside = dx * dx + dy * dy + dz * dz <= r2;
        }
        if (!inside) continue;
        if (list) list[count] = t;
        ++count;
    }
    if (list && count == 0) {
        free(list);
        list = NULL;
    }
    if (out_triangles) *out_triangles = list;
    return count;
}

double sample_local_volume(const sample_topology* topology, const float* positions,
                           const uint32_t* triangles, uint32_t count, const double centre[3])
{
    if (!topology || !positions || !centre || (count > 0 && !triangles)) return NAN;
    for (uint32_t i = 0; i < count; ++i) {
        if (triangles[i] >= topology->triangle_count) return NAN;
    }
    return cone_volume(topology, positions, triangles, count, centre);
}

static double distance3(const float* a, const float* b)
{
    double dx = (double)a[0] - b[0], dy = (double)a[1] - b[1], dz = (double)a[2] - b[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

void sample_edge_stretch(const sample_topology* topology, const float* rest, const float* posed,
                         double* out_min, double* out_max)
{
    double lo = INFINITY, hi = -INFINITY;
    if (topology && rest && posed) {
        for (uint32_t e = 0; e < topology->edge_count; ++e) {
            const size_t a = topology->edges[2 * (size_t)e], b = topology->edges[2 * (size_t)e + 1];
            if (!all_finite3(posed + 3 * a) || !all_finite3(posed + 3 * b)) continue;
            double rest_length = distance3(rest + 3 * a, rest + 3 * b);
            if (!(rest_length > 0.0)) continue;  /* welded ends are distinct; stay safe */
            double ratio = distance3(posed + 3 * a, posed + 3 * b) / rest_length;
            if (ratio < lo) lo = ratio;
            if (ratio > hi) hi = ratio;
        }
    }
    if (lo > hi) lo = hi = NAN;
    if (out_min) *out_min = lo;
    if (out_max) *out_max = hi;
}

double sample_bounding_diagonal(const float* positions, uint32_t vertex_count)
{
    double lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3] = { -INFINITY, -INFINITY, -INFINITY };
    int any = 0;
    for (uint32_t v = 0; positions && v < vertex_count; ++v) {
        const float* p = positions + 3 * (size_t)v;
        if (!all_finite3(p)) continue;
        any = 1;
        for (int k = 0; k < 3; ++k) {
            if (p[k] < lo[k]) lo[k] = p[k];
            if (p[k] > hi[k]) hi[k] = p[k];
        }
    }
    if (!any) return 0.0;
    double dx = hi[0] - lo[0], dy = hi[1] - lo[1], dz = hi[2] - lo[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}
