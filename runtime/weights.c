/*
 * Automatic skin weights for rigs that carry none.
 * SPDX-License-Identifier: MIT
 *
 * The scheme: rigid bone labels, geometric blends across the joints, then a slope limiter.
 *
 * 1. Bones. Joint j owns the segments from j to each of its children: a rotation at j moves
 *    the subtree below j, so the segment j->c moves rigidly with j. Segments shorter than
 *    1e-5 of the mesh's bounding-box diagonal are no bones. A leaf, or a joint whose bones
 *    all have zero length, owns no bone and gets no weight (its rotation moves nothing under
 *    this convention; the skin beyond it follows its parent). A skeleton without any bone
 *    (one joint, or all joints coincident) binds each vertex to its nearest joint as a
 *    point influence.
 * 2. Welding. Vertices at exactly the same position (the seams of imported meshes) are one
 *    vertex here, so weights never differ across a seam and smoothing crosses it.
 * 3. Labels. Each vertex takes the nearest bone that it "sees": the bone's closest point
 *    lies behind the vertex's tangent plane (normals turned out of each connected part by
 *    the sign of its volume), and the straight line to it crosses no triangle of the
 *    vertex's own part (the visibility test of the skin attachment in Baran and Popovic
 *    2007, "Automatic Rigging and Animation of 3D Characters", here against a uniform grid
 *    of triangles). Only bones at most twice as far as the nearest compete; if none is
 *    seen, the nearest wins. This keeps the torso under the arm on the torso, one thigh's
 *    inside off the other thigh, a finger's side off its neighbour and a hand off the
 *    separate trousers beside it.
 * 4. Radii. A bone's radius is the median distance to it of the vertices whose nearest bone
 *    (plain Euclidean, no visibility) it is; the radius r_k of joint k is the mean of the
 *    radius of the bone ending at k and the mean radius of the bones leaving k.
 * 5. Blends. A joint k with a parent gets a step S_k = smoothstep(x) rising from 0 at
 *    x = -h_k to 1 at x = +h_k, where x is the signed distance from joint k along the
 *    joint's axis (the mean of the incoming and outgoing bone directions) and h_k = 0.8 r_k.
 *    S_k is the weight of the whole subtree below k. For a vertex labelled with bone j->c,
 *    the steps along the chain through j (upwards until a step is 1, downwards through
 *    single-child joints until a step is 0) give the subtree weights W as a running minimum
 *    from the top, and each joint's own weight is its W minus the next one's. In a limb the
 *    0.1..0.9 band of a step is 1.22 h_k = 0.97 r_k wide, centred on the joint.
 * 6. Limiter. Where bones that share no joint meet (armpit, crotch, between fingers) the
 *    weights jump, and on a coarse mesh a blend can be steeper than its edges allow. The
 *    two rows of every edge whose weights differ by more than 0.19 for some joint move
 *    towards each other (a convex combination) until they differ by 0.98 times that, in
 *    Gauss-Seidel sweeps over the vertices near the last change, until no edge exceeds the
 *    bound. A jump becomes a ramp of about the least width the bound allows (0.8 / 0.19,
 *    about 4 edges from 0.1 to 0.9), and rows that already satisfy it are never touched.
 * 7. Influences. Rows are cut to max_influences continuously (the (k+1)-th largest weight
 *    is subtracted from the k largest before renormalising, so a weight fades out instead
 *    of dropping), and the limiter runs again on the cut rows, the two rows of an edge
 *    keeping the same joints. Adjacent vertices then differ by at most 0.19 in every
 *    joint's weight (a warning says so should the limiter ever stop short). Rows are sorted
 *    by decreasing weight.
 */
#include <sinew/sinew_host.h>

#include "weights.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


/* Influences a vertex keeps while smoothing: more than the output's 4 or 8, so truncation
 * happens once, at the end. */
#define AW_WORK_CAP 12u
/* Joints of two rows together. */
#define AW_MIX_CAP (2u * AW_WORK_CAP)
/* Longest chain of steps above or below a vertex's bone. */
#define AW_CHAIN_DEPTH 12u
/* Bones that compete for a vertex in the visibility test. */
#define AW_CANDIDATES 8u
/* Competing bones are at most this many times as far as the nearest one. */
#define AW_CANDIDATE_FACTOR 2.0
/* Blend half-width in joint radii (5. above). */
#define AW_BLEND_HALF_WIDTH 0.8
/* Limiter bound on the difference of a joint's weight across an edge (6. and 7.), and the
 * most sweeps it may take (a safety net: the test characters need at most about 250). */
#define AW_LIMIT 0.19
#define AW_LIMIT_SWEEPS 2000u
/* Weights below this are dropped from the output rows. */
#define AW_MIN_WEIGHT 1e-5f

typedef struct aw_grid {
    double min[3];
    double cell;
    uint32_t dims[3];
    uint32_t* offsets; /* cells + 1 */
    uint32_t* items;   /* triangle indices */
} aw_grid;

typedef struct aw_rows {
    uint8_t* count;
    uint32_t* joint;   /* AW_WORK_CAP per vertex */
    float* weight;
} aw_rows;

typedef struct aw_ctx {
    const sinew_host_api* host;
    /* welded mesh */
    uint32_t vertex_count;  /* welded */
    uint32_t* weld;         /* input vertex -> welded vertex */
    double* pos;            /* 3 per welded vertex */
    uint32_t triangle_count;
    uint32_t* tri;          /* welded indices */
    uint32_t* adj_offsets;
    uint32_t* adj;
    uint32_t* part;         /* connected part per welded vertex (a representative vertex) */
    double* normal;         /* area-weighted, pointing out of its part, 3 per welded vertex */
    double diagonal;
    aw_grid grid;
    /* skeleton */
    uint32_t joint_count;
    const int32_t* parents;
    double* jpos;           /* 3 per joint */
    uint32_t* child_offsets;
    uint32_t* children;
    uint32_t segment_count;
    uint32_t* seg_owner;
    uint32_t* seg_end;
    double* seg_dir;        /* unit, 3 per segment (0 for point influences) */
    double* seg_len;
    uint32_t* owner_first;  /* real segments of joint j: owner_first[j] .. owner_first[j+1]-1 */
    double* din;            /* unit direction of the bone arriving at each joint */
    uint8_t* has_din;
    double* dout;           /* normalised mean direction of the bones leaving each joint */
    uint8_t* has_dout;
    double* seg_radius;
    double* half_width;     /* h_k per joint */
    uint32_t* label;        /* segment per welded vertex */
    aw_rows rows;
    aw_rows scratch;        /* a single row */
} aw_ctx;

/* ---------------------------------------------------------------------------------------- */
/* Small vector helpers                                                                     */
/* ---------------------------------------------------------------------------------------- */

static double aw_dot(const double* a, const double* b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static double aw_length(const double* a)
{
    return sqrt(aw_dot(a, a));
}

static void aw_sub(double* out, const double* a, const double* b)
{
    out[0] = a[0] - b[0];
    out[1] = a[1] - b[1];
    out[2] = a[2] - b[2];
}

static void aw_cross(double* out, const double* a, const double* b)
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* Distance from p to segment s and the closest point on it. */
static double aw_segment_distance(const aw_ctx* c, uint32_t s, const double* p, double* closest)
{
    const double* a = c->jpos + 3 * c->seg_owner[s];
    const double* d = c->seg_dir + 3 * s;
    double ap[3];
    aw_sub(ap, p, a);
    double t = aw_dot(ap, d);
    if (t < 0.0) t = 0.0;
    if (t > c->seg_len[s]) t = c->seg_len[s];
    double q[3] = { a[0] + t * d[0], a[1] + t * d[1], a[2] + t * d[2] };
    if (closest) memcpy(closest, q, sizeof q);
    double e[3];
    aw_sub(e, p, q);
    return aw_length(e);
}

/* ---------------------------------------------------------------------------------------- */
/* Cleanup                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static void aw_rows_free(const sinew_host_api* host, aw_rows* rows)
{
    sinew_host_free(host, rows->count);
    sinew_host_free(host, rows->joint);
    sinew_host_free(host, rows->weight);
    memset(rows, 0, sizeof *rows);
}

static void aw_ctx_free(aw_ctx* c)
{
    const sinew_host_api* h = c->host;
    void* arrays[] = { c->weld, c->pos, c->tri, c->adj_offsets, c->adj, c->part, c->normal,
                       c->grid.offsets, c->grid.items, c->jpos, c->child_offsets, c->children,
                       c->seg_owner, c->seg_end, c->seg_dir, c->seg_len, c->owner_first,
                       c->din, c->has_din, c->dout, c->has_dout, c->seg_radius,
                       c->half_width, c->label };
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) sinew_host_free(h, arrays[i]);
    aw_rows_free(h, &c->rows);
    aw_rows_free(h, &c->scratch);
}

static int aw_rows_alloc(const sinew_host_api* host, aw_rows* rows, uint32_t n)
{
    rows->count = sinew_host_calloc(host, n, sizeof *rows->count);
    rows->joint = sinew_host_calloc(host, (size_t)n * AW_WORK_CAP, sizeof *rows->joint);
    rows->weight = sinew_host_calloc(host, (size_t)n * AW_WORK_CAP, sizeof *rows->weight);
    return rows->count && rows->joint && rows->weight;
}

/* ---------------------------------------------------------------------------------------- */
/* Mesh: welding, adjacency, parts                                                          */
/* ---------------------------------------------------------------------------------------- */

typedef struct aw_sort_vertex {
    float p[3];
    uint32_t index;
} aw_sort_vertex;

static int aw_compare_vertex(const void* a, const void* b)
{
    const aw_sort_vertex* x = a;
    const aw_sort_vertex* y = b;
    for (int k = 0; k < 3; ++k) {
        if (x->p[k] < y->p[k]) return -1;
        if (x->p[k] > y->p[k]) return 1;
    }
    return (x->index > y->index) - (x->index < y->index);
}

static int aw_compare_u32(const void* a, const void* b)
{
    uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
    return (x > y) - (x < y);
}

static int aw_compare_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static sinew_result aw_weld(aw_ctx* c, uint32_t vertex_count, const float* positions)
{
    const sinew_host_api* host = c->host;
    aw_sort_vertex* sorted = sinew_host_alloc(host, (size_t)vertex_count * sizeof *sorted);
    c->weld = sinew_host_alloc(host, (size_t)vertex_count * sizeof *c->weld);
    c->pos = sinew_host_alloc(host, (size_t)vertex_count * 3 * sizeof *c->pos);
    if (!sorted || !c->weld || !c->pos) {
        sinew_host_free(host, sorted);
        return SINEW_ERROR_OUT_OF_MEMORY;
    }
    for (uint32_t v = 0; v < vertex_count; ++v) {
        memcpy(sorted[v].p, positions + 3 * (size_t)v, 3 * sizeof(float));
        sorted[v].index = v;
    }
    qsort(sorted, vertex_count, sizeof *sorted, aw_compare_vertex);
    uint32_t n = 0;
    for (uint32_t i = 0; i < vertex_count; ++i) {
        const float* p = sorted[i].p;
        if (i == 0 || p[0] != sorted[i - 1].p[0] || p[1] != sorted[i - 1].p[1] ||
            p[2] != sorted[i - 1].p[2]) {
            for (int k = 0; k < 3; ++k) c->pos[3 * (size_t)n + k] = p[k];
            ++n;
        }
        c->weld[sorted[i].index] = n - 1;
    }
    c->vertex_count = n;
    sinew_host_free(host, sorted);
    return SINEW_OK;
}

static uint32_t aw_find(uint32_t* parent, uint32_t v)
{
    while (parent[v] != v) {
        parent[v] = parent[parent[v]];
        v = parent[v];
    }
    return v;
}

/* Area-weighted vertex normals, turned to point out of their part: the sign of the part's
 * volume (signed tetrahedra to its centroid) says whether its triangles wind inwards. */
static sinew_result aw_build_normals(aw_ctx* c)
{
    const uint32_t n = c->vertex_count;
    c->normal = sinew_host_calloc(c->host, (size_t)n * 3, sizeof *c->normal);
    double* sums = sinew_host_calloc(c->host, (size_t)n * 5, sizeof *sums);
    if (!c->normal || !sums) {
        sinew_host_free(c->host, sums);
        return SINEW_ERROR_OUT_OF_MEMORY;
    }
    /* sums per part representative: centroid (3), count, then the volume. */
    for (uint32_t v = 0; v < n; ++v) {
        double* sum = sums + 5 * (size_t)c->part[v];
        for (int k = 0; k < 3; ++k) sum[k] += c->pos[3 * (size_t)v + k];
        sum[3] += 1.0;
    }
    for (uint32_t t = 0; t < c->triangle_count; ++t) {
        const uint32_t* tri = c->tri + 3 * (size_t)t;
        double e1[3], e2[3], face[3];
        aw_sub(e1, c->pos + 3 * (size_t)tri[1], c->pos + 3 * (size_t)tri[0]);
        aw_sub(e2, c->pos + 3 * (size_t)tri[2], c->pos + 3 * (size_t)tri[0]);
        aw_cross(face, e1, e2);
        for (int i = 0; i < 3; ++i)
            for (int k = 0; k < 3; ++k) c->normal[3 * (size_t)tri[i] + k] += face[k];
        double* sum = sums + 5 * (size_t)c->part[tri[0]];
        double centroid[3], rel[3];
        for (int k = 0; k < 3; ++k) centroid[k] = sum[k] / sum[3];
        aw_sub(rel, c->pos + 3 * (size_t)tri[0], centroid);
        sum[4] += aw_dot(rel, face);
    }
    for (uint32_t v = 0; v < n; ++v) {
        if (sums[5 * (size_t)c->part[v] + 4] >= 0.0) continue;
        for (int k = 0; k < 3; ++k) c->normal[3 * (size_t)v + k] = -c->normal[3 * (size_t)v + k];
    }
    sinew_host_free(c->host, sums);
    return SINEW_OK;
}

static sinew_result aw_build_mesh(aw_ctx* c, uint32_t triangle_count, const uint32_t* indices)
{
    const sinew_host_api* host = c->host;
    const uint32_t n = c->vertex_count;
    c->triangle_count = triangle_count;
    c->tri = sinew_host_alloc(host, (size_t)triangle_count * 3 * sizeof *c->tri);
    c->adj_offsets = sinew_host_calloc(host, (size_t)n + 1, sizeof *c->adj_offsets);
    c->part = sinew_host_alloc(host, (size_t)n * sizeof *c->part);
    uint32_t* fill = sinew_host_calloc(host, (size_t)n + 1, sizeof *fill);
    uint32_t* raw = sinew_host_alloc(host, (size_t)triangle_count * 6 * sizeof *raw);
    if (!c->tri || !c->adj_offsets || !c->part || !fill || !raw) {
        sinew_host_free(host, fill);
        sinew_host_free(host, raw);
        return SINEW_ERROR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < (size_t)triangle_count * 3; ++i) c->tri[i] = c->weld[indices[i]];
    /* Every triangle edge in both directions, bucketed by vertex, then sorted and unique. */
    for (uint32_t t = 0; t < triangle_count; ++t) {
        for (int e = 0; e < 3; ++e) {
            uint32_t a = c->tri[3 * (size_t)t + e], b = c->tri[3 * (size_t)t + (e + 1) % 3];
            if (a == b) continue;
            fill[a + 1]++;
            fill[b + 1]++;
        }
    }
    for (uint32_t v = 0; v < n; ++v) fill[v + 1] += fill[v];
    for (uint32_t t = 0; t < triangle_count; ++t) {
        for (int e = 0; e < 3; ++e) {
            uint32_t a = c->tri[3 * (size_t)t + e], b = c->tri[3 * (size_t)t + (e + 1) % 3];
            if (a == b) continue;
            raw[fill[a]++] = b;
            raw[fill[b]++] = a;
        }
    }
    /* fill[v] now ends bucket v; bucket v starts where bucket v-1 ended. */
    uint32_t total = 0, begin = 0;
    for (uint32_t v = 0; v < n; ++v) {
        uint32_t end = fill[v];
        qsort(raw + begin, end - begin, sizeof *raw, aw_compare_u32);
        c->adj_offsets[v] = total;
        for (uint32_t i = begin; i < end; ++i) {
            if (i == begin || raw[i] != raw[i - 1]) raw[total++] = raw[i];
        }
        begin = end;
    }
    c->adj_offsets[n] = total;
    sinew_host_free(host, fill);
    c->adj = sinew_host_alloc(host, (size_t)(total ? total : 1) * sizeof *c->adj);
    if (!c->adj) {
        sinew_host_free(host, raw);
        return SINEW_ERROR_OUT_OF_MEMORY;
    }
    memcpy(c->adj, raw, (size_t)total * sizeof *c->adj);
    sinew_host_free(host, raw);

    for (uint32_t v = 0; v < n; ++v) c->part[v] = v;
    for (uint32_t v = 0; v < n; ++v) {
        for (uint32_t i = c->adj_offsets[v]; i < c->adj_offsets[v + 1]; ++i) {
            uint32_t a = aw_find(c->part, v), b = aw_find(c->part, c->adj[i]);
            if (a != b) c->part[a < b ? b : a] = a < b ? a : b;
        }
    }
    for (uint32_t v = 0; v < n; ++v) c->part[v] = aw_find(c->part, v);

    double lo[3] = { DBL_MAX, DBL_MAX, DBL_MAX }, hi[3] = { -DBL_MAX, -DBL_MAX, -DBL_MAX };
    for (uint32_t v = 0; v < n; ++v) {
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(lo[k], c->pos[3 * (size_t)v + k]);
            hi[k] = fmax(hi[k], c->pos[3 * (size_t)v + k]);
        }
    }
    double ext[3];
    aw_sub(ext, hi, lo);
    c->diagonal = aw_length(ext);
    return aw_build_normals(c);
}

/* ---------------------------------------------------------------------------------------- */
/* Triangle grid and the visibility ray                                                     */
/* ---------------------------------------------------------------------------------------- */

static void aw_cell_of(const aw_grid* g, const double* p, uint32_t* cell)
{
    for (int k = 0; k < 3; ++k) {
        double f = floor((p[k] - g->min[k]) / g->cell);
        if (f < 0.0) f = 0.0;
        if (f > (double)(g->dims[k] - 1)) f = (double)(g->dims[k] - 1);
        cell[k] = (uint32_t)f;
    }
}

static sinew_result aw_build_grid(aw_ctx* c)
{
    const sinew_host_api* host = c->host;
    aw_grid* g = &c->grid;
    double lo[3] = { DBL_MAX, DBL_MAX, DBL_MAX }, hi[3] = { -DBL_MAX, -DBL_MAX, -DBL_MAX };
    for (uint32_t v = 0; v < c->vertex_count; ++v) {
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(lo[k], c->pos[3 * (size_t)v + k]);
            hi[k] = fmax(hi[k], c->pos[3 * (size_t)v + k]);
        }
    }
    double pad = 1e-4 * c->diagonal + 1e-12;
    double volume = 1.0;
    for (int k = 0; k < 3; ++k) {
        g->min[k] = lo[k] - pad;
        volume *= hi[k] - lo[k] + 2 * pad;
    }
    /* About two cells per triangle keeps a short ray's walk and each cell's list short. */
    double target = 2.0 * (double)c->triangle_count;
    if (target > 1048576.0) target = 1048576.0;
    g->cell = cbrt(volume / target);
    for (;;) {
        double cells = 1.0;
        for (int k = 0; k < 3; ++k) {
            double d = ceil((hi[k] - lo[k] + 2 * pad) / g->cell);
            if (d < 1.0) d = 1.0;
            g->dims[k] = (uint32_t)fmin(d, 1e9);
            cells *= d;
        }
        if (cells <= 4.0 * target + 8.0) break;
        g->cell *= 1.25; /* flat meshes: the volume says little about the area */
    }
    size_t cells = (size_t)g->dims[0] * g->dims[1] * g->dims[2];
    g->offsets = sinew_host_calloc(host, cells + 1, sizeof *g->offsets);
    if (!g->offsets) return SINEW_ERROR_OUT_OF_MEMORY;
    uint64_t total = 0;
    for (int pass = 0; pass < 2; ++pass) {
        for (uint32_t t = 0; t < c->triangle_count; ++t) {
            double tlo[3] = { DBL_MAX, DBL_MAX, DBL_MAX }, thi[3] = { -DBL_MAX, -DBL_MAX, -DBL_MAX };
            for (int i = 0; i < 3; ++i) {
                const double* p = c->pos + 3 * (size_t)c->tri[3 * (size_t)t + i];
                for (int k = 0; k < 3; ++k) {
                    tlo[k] = fmin(tlo[k], p[k]);
                    thi[k] = fmax(thi[k], p[k]);
                }
            }
            uint32_t a[3], b[3];
            aw_cell_of(g, tlo, a);
            aw_cell_of(g, thi, b);
            for (uint32_t z = a[2]; z <= b[2]; ++z)
                for (uint32_t y = a[1]; y <= b[1]; ++y)
                    for (uint32_t x = a[0]; x <= b[0]; ++x) {
                        size_t cell = ((size_t)z * g->dims[1] + y) * g->dims[0] + x;
                        if (pass == 0) {
                            g->offsets[cell + 1]++;
                            total++;
                        } else {
                            g->items[g->offsets[cell]++] = t;
                        }
                    }
        }
        if (pass == 0) {
            if (total >= UINT32_MAX) return SINEW_ERROR_LIMIT;
            for (size_t i = 0; i < cells; ++i) g->offsets[i + 1] += g->offsets[i];
            g->items = sinew_host_alloc(host, (size_t)(total ? total : 1) * sizeof *g->items);
            if (!g->items) return SINEW_ERROR_OUT_OF_MEMORY;
        }
    }
    /* The fill pass advanced each start to the next cell's start: shift back. */
    for (size_t i = cells; i > 0; --i) g->offsets[i] = g->offsets[i - 1];
    g->offsets[0] = 0;
    return SINEW_OK;
}

/* Does the segment from welded vertex v to point q cross a triangle of v's part (other than
 * v's own)? Moller-Trumbore against the triangles of the cells a 3D DDA walk visits. */
static int aw_ray_blocked(const aw_ctx* c, uint32_t v, const double* q)
{
    const aw_grid* g = &c->grid;
    const double* o = c->pos + 3 * (size_t)v;
    double d[3];
    aw_sub(d, q, o);
    if (aw_length(d) <= 1e-12 * (c->diagonal + 1.0)) return 0;
    uint32_t cell[3];
    aw_cell_of(g, o, cell);
    int step[3];
    double t_max[3], t_delta[3];
    for (int k = 0; k < 3; ++k) {
        if (d[k] > 0.0) {
            step[k] = 1;
            t_max[k] = (g->min[k] + (cell[k] + 1.0) * g->cell - o[k]) / d[k];
            t_delta[k] = g->cell / d[k];
        } else if (d[k] < 0.0) {
            step[k] = -1;
            t_max[k] = (g->min[k] + cell[k] * g->cell - o[k]) / d[k];
            t_delta[k] = -g->cell / d[k];
        } else {
            step[k] = 0;
            t_max[k] = DBL_MAX;
            t_delta[k] = DBL_MAX;
        }
    }
    const uint32_t part = c->part[v];
    for (;;) {
        size_t id = ((size_t)cell[2] * g->dims[1] + cell[1]) * g->dims[0] + cell[0];
        for (uint32_t i = g->offsets[id]; i < g->offsets[id + 1]; ++i) {
            const uint32_t* t = c->tri + 3 * (size_t)g->items[i];
            if (t[0] == v || t[1] == v || t[2] == v) continue;
            if (c->part[t[0]] != part) continue;
            const double* p0 = c->pos + 3 * (size_t)t[0];
            double e1[3], e2[3], s[3], h[3], qv[3];
            aw_sub(e1, c->pos + 3 * (size_t)t[1], p0);
            aw_sub(e2, c->pos + 3 * (size_t)t[2], p0);
            aw_cross(h, d, e2);
            double det = aw_dot(e1, h);
            if (fabs(det) < 1e-300) continue;
            double inv = 1.0 / det;
            aw_sub(s, o, p0);
            double bu = aw_dot(s, h) * inv;
            if (bu < 0.0 || bu > 1.0) continue;
            aw_cross(qv, s, e1);
            double bv = aw_dot(d, qv) * inv;
            if (bv < 0.0 || bu + bv > 1.0) continue;
            double tt = aw_dot(e2, qv) * inv;
            if (tt > 1e-6 && tt < 1.0 - 1e-9) return 1;
        }
        int k = 0;
        if (t_max[1] < t_max[k]) k = 1;
        if (t_max[2] < t_max[k]) k = 2;
        if (t_max[k] > 1.0) return 0;
        if (step[k] > 0) {
            if (cell[k] + 1 >= g->dims[k]) return 0;
            cell[k]++;
        } else {
            if (cell[k] == 0) return 0;
            cell[k]--;
        }
        t_max[k] += t_delta[k];
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Skeleton                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* The skeleton's arrays, sized for J joints (at most J-1 bones, or J point influences). */
static sinew_result aw_alloc_skeleton(aw_ctx* c)
{
    const sinew_host_api* host = c->host;
    const uint32_t J = c->joint_count;
    c->jpos = sinew_host_alloc(host, (size_t)J * 3 * sizeof *c->jpos);
    c->child_offsets = sinew_host_calloc(host, (size_t)J + 1, sizeof *c->child_offsets);
    c->children = sinew_host_alloc(host, (size_t)J * sizeof *c->children);
    c->owner_first = sinew_host_calloc(host, (size_t)J + 1, sizeof *c->owner_first);
    c->din = sinew_host_calloc(host, (size_t)J * 3, sizeof *c->din);
    c->has_din = sinew_host_calloc(host, J, sizeof *c->has_din);
    c->dout = sinew_host_calloc(host, (size_t)J * 3, sizeof *c->dout);
    c->has_dout = sinew_host_calloc(host, J, sizeof *c->has_dout);
    c->half_width = sinew_host_calloc(host, J, sizeof *c->half_width);
    c->seg_owner = sinew_host_alloc(host, (size_t)J * sizeof *c->seg_owner);
    c->seg_end = sinew_host_alloc(host, (size_t)J * sizeof *c->seg_end);
    c->seg_dir = sinew_host_calloc(host, (size_t)J * 3, sizeof *c->seg_dir);
    c->seg_len = sinew_host_calloc(host, J, sizeof *c->seg_len);
    c->seg_radius = sinew_host_calloc(host, J, sizeof *c->seg_radius);
    if (!c->jpos || !c->child_offsets || !c->children || !c->owner_first || !c->din ||
        !c->has_din || !c->dout || !c->has_dout || !c->half_width || !c->seg_owner ||
        !c->seg_end || !c->seg_dir || !c->seg_len || !c->seg_radius)
        return SINEW_ERROR_OUT_OF_MEMORY;
    return SINEW_OK;
}

/* Joint positions from the bind matrices and each joint's children in compressed rows. */
static sinew_result aw_children(aw_ctx* c, const float* bind_matrices)
{
    const uint32_t J = c->joint_count;
    for (uint32_t j = 0; j < J; ++j) {
        for (int k = 0; k < 3; ++k) c->jpos[3 * (size_t)j + k] = bind_matrices[16 * (size_t)j + 12 + k];
        if (c->parents[j] >= 0) c->child_offsets[c->parents[j] + 1]++;
    }
    for (uint32_t j = 0; j < J; ++j) c->child_offsets[j + 1] += c->child_offsets[j];
    uint32_t* next = sinew_host_alloc(c->host, (size_t)J * sizeof *next);
    if (!next) return SINEW_ERROR_OUT_OF_MEMORY;
    memcpy(next, c->child_offsets, (size_t)J * sizeof *next);
    for (uint32_t j = 0; j < J; ++j)
        if (c->parents[j] >= 0) c->children[next[c->parents[j]]++] = j;
    sinew_host_free(c->host, next);
    return SINEW_OK;
}

/* A segment from each joint to each child farther than min_length, grouped by the owning
 * joint; with none at all, every joint is a point influence (a segment of length 0). Returns
 * 1 when there are bones, 0 for point influences. */
static int aw_segments(aw_ctx* c, double min_length)
{
    const uint32_t J = c->joint_count;
    uint32_t s = 0;
    for (uint32_t j = 0; j < J; ++j) {
        c->owner_first[j] = s;
        for (uint32_t i = c->child_offsets[j]; i < c->child_offsets[j + 1]; ++i) {
            uint32_t ch = c->children[i];
            double d[3];
            aw_sub(d, c->jpos + 3 * (size_t)ch, c->jpos + 3 * (size_t)j);
            double len = aw_length(d);
            if (len <= min_length) continue;
            c->seg_owner[s] = j;
            c->seg_end[s] = ch;
            c->seg_len[s] = len;
            for (int k = 0; k < 3; ++k) c->seg_dir[3 * (size_t)s + k] = d[k] / len;
            ++s;
        }
    }
    c->owner_first[J] = s;
    c->segment_count = s;
    if (s > 0) return 1;
    for (uint32_t j = 0; j < J; ++j) {
        c->owner_first[j] = j;
        c->seg_owner[j] = j;
        c->seg_end[j] = j;
    }
    c->owner_first[J] = J;
    c->segment_count = J;
    return 0;
}

/* Per joint the direction of the bone arriving at it (from the nearest ancestor at another
 * position, so a chain of coincident joints still blends along a direction) and the mean
 * direction of the bones leaving it (none for bones leaving in opposite directions, a T). */
static void aw_directions(aw_ctx* c, double min_length)
{
    for (uint32_t j = 0; j < c->joint_count; ++j) {
        int32_t a = c->parents[j];
        while (a >= 0) {
            double d[3];
            aw_sub(d, c->jpos + 3 * (size_t)j, c->jpos + 3 * (size_t)a);
            double len = aw_length(d);
            if (len > min_length) {
                for (int k = 0; k < 3; ++k) c->din[3 * (size_t)j + k] = d[k] / len;
                c->has_din[j] = 1;
                break;
            }
            a = c->parents[a];
        }
        double sum[3] = { 0, 0, 0 };
        for (uint32_t i = c->owner_first[j]; i < c->owner_first[j + 1]; ++i)
            for (int k = 0; k < 3; ++k) sum[k] += c->seg_dir[3 * (size_t)i + k];
        double len = aw_length(sum);
        if (len >= 0.5) {
            for (int k = 0; k < 3; ++k) c->dout[3 * (size_t)j + k] = sum[k] / len;
            c->has_dout[j] = 1;
        }
    }
}

static sinew_result aw_build_skeleton(aw_ctx* c, const float* bind_matrices)
{
    sinew_result r = aw_alloc_skeleton(c);
    if (r == SINEW_OK) r = aw_children(c, bind_matrices);
    if (r != SINEW_OK) return r;
    const double min_length = 1e-5 * c->diagonal;
    if (aw_segments(c, min_length)) aw_directions(c, min_length);
    return SINEW_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Labels and radii                                                                         */
/* ---------------------------------------------------------------------------------------- */

typedef struct aw_label_job {
    aw_ctx* c;
    uint32_t* nearest;  /* plain nearest bone per vertex, for the radii */
    double* nearest_distance;
} aw_label_job;

static void aw_label_range(void* data, uint32_t begin, uint32_t end)
{
    aw_label_job* job = (aw_label_job*)data;
    aw_ctx* c = job->c;
    for (uint32_t v = begin; v < end; ++v) {
        const double* p = c->pos + 3 * (size_t)v;
        double nearest = DBL_MAX;
        uint32_t best = 0;
        for (uint32_t s = 0; s < c->segment_count; ++s) {
            double d = aw_segment_distance(c, s, p, NULL);
            if (d < nearest) {
                nearest = d;
                best = s;
            }
        }
        /* The competing bones, nearest first. */
        uint32_t cand[AW_CANDIDATES];
        double cand_d[AW_CANDIDATES];
        uint32_t n = 0;
        const double limit = AW_CANDIDATE_FACTOR * nearest;
        for (uint32_t s = 0; s < c->segment_count; ++s) {
            double d = aw_segment_distance(c, s, p, NULL);
            if (d > limit) continue;
            if (n == AW_CANDIDATES && d >= cand_d[n - 1]) continue;
            uint32_t i = n < AW_CANDIDATES ? n++ : n - 1;
            while (i > 0 && cand_d[i - 1] > d) {
                cand[i] = cand[i - 1];
                cand_d[i] = cand_d[i - 1];
                --i;
            }
            cand[i] = s;
            cand_d[i] = d;
        }
        uint32_t label = best;
        const double* normal = c->normal + 3 * (size_t)v;
        const double normal_length = aw_length(normal);
        for (uint32_t i = 0; i < n; ++i) {
            double q[3], d[3];
            aw_segment_distance(c, cand[i], p, q);
            aw_sub(d, q, p);
            /* A bone in front of the vertex's tangent plane lies outside its part (an arm
             * beside the hip of a separate pair of trousers) even when no triangle hides it;
             * 0.1 forgives the normals of sharp features. */
            if (aw_dot(d, normal) > 0.1 * aw_length(d) * normal_length) continue;
            if (!aw_ray_blocked(c, v, q)) {
                label = cand[i];
                break;
            }
        }
        c->label[v] = label;
        job->nearest[v] = best;
        job->nearest_distance[v] = nearest;
    }
}

/* Each bone's radius: the median distance of the vertices nearest to it (4. in the header
 * comment), -1 for a bone without any; *fallback: the mean over the measured bones (1 % of the
 * diagonal when none is). */
static sinew_result aw_segment_radii(aw_ctx* c, const uint32_t* nearest, const double* nearest_d,
                                     double* fallback)
{
    const sinew_host_api* host = c->host;
    const uint32_t n = c->vertex_count, S = c->segment_count;
    uint32_t* first = sinew_host_calloc(host, (size_t)S + 1, sizeof *first);
    double* dist = sinew_host_alloc(host, (size_t)n * sizeof *dist);
    uint32_t* next = sinew_host_alloc(host, (size_t)S * sizeof *next);
    sinew_result result = SINEW_ERROR_OUT_OF_MEMORY;
    if (!first || !dist || !next) goto done;
    for (uint32_t v = 0; v < n; ++v) first[nearest[v] + 1]++;
    for (uint32_t s = 0; s < S; ++s) first[s + 1] += first[s];
    memcpy(next, first, (size_t)S * sizeof *next);
    for (uint32_t v = 0; v < n; ++v) dist[next[nearest[v]]++] = nearest_d[v];
    double global_sum = 0.0;
    uint32_t global_count = 0;
    for (uint32_t s = 0; s < S; ++s) {
        uint32_t count = first[s + 1] - first[s];
        c->seg_radius[s] = -1.0; /* no vertex: taken from the neighbours below */
        if (count == 0) continue;
        double* d = dist + first[s];
        qsort(d, count, sizeof *d, aw_compare_double);
        c->seg_radius[s] = count % 2 ? d[count / 2] : 0.5 * (d[count / 2 - 1] + d[count / 2]);
        global_sum += c->seg_radius[s];
        global_count++;
    }
    *fallback = global_count ? global_sum / global_count : 0.01 * c->diagonal;
    result = SINEW_OK;
done:
    sinew_host_free(host, first);
    sinew_host_free(host, dist);
    sinew_host_free(host, next);
    return result;
}

/* The radius of joint j from its bones: the mean of the bone arriving and the mean of the
 * bones leaving, whichever are measured; -1 when none is. */
static double aw_joint_radius(const aw_ctx* c, uint32_t j)
{
    double sum = 0.0;
    uint32_t count = 0;
    for (uint32_t i = c->owner_first[j]; i < c->owner_first[j + 1]; ++i) {
        if (c->seg_radius[i] >= 0.0) {
            sum += c->seg_radius[i];
            count++;
        }
    }
    double out_r = count ? sum / count : -1.0;
    double in_r = -1.0;
    int32_t p = c->parents[j];
    if (p >= 0) {
        for (uint32_t i = c->owner_first[p]; i < c->owner_first[p + 1]; ++i)
            if (c->seg_end[i] == j) in_r = c->seg_radius[i];
    }
    if (in_r >= 0.0 && out_r >= 0.0) return 0.5 * (in_r + out_r);
    if (in_r >= 0.0) return in_r;
    return out_r;
}

/* Blend half-widths: each joint's radius (aw_joint_radius; a joint without any measured bone
 * takes its nearest measured ancestor's, else the fallback), at least a small floor so that a
 * bone whose vertices all lie on it still blends over a positive width, times
 * AW_BLEND_HALF_WIDTH. */
static void aw_joint_half_widths(aw_ctx* c, double fallback)
{
    const uint32_t J = c->joint_count;
    const double floor_radius = 1e-4 * c->diagonal + 1e-12;
    for (uint32_t j = 0; j < J; ++j) c->half_width[j] = -1.0;
    for (uint32_t j = 0; j < J; ++j) c->half_width[j] = aw_joint_radius(c, j); /* a radius for now */
    for (uint32_t j = 0; j < J; ++j) {
        double r = c->half_width[j];
        int32_t a = c->parents[j];
        uint32_t guard = 0;
        while (r < 0.0 && a >= 0 && guard++ < J) {
            r = c->half_width[a];
            a = c->parents[a];
        }
        if (r < 0.0) r = fallback;
        if (r < floor_radius) r = floor_radius;
        c->half_width[j] = r;
    }
    for (uint32_t j = 0; j < J; ++j) c->half_width[j] *= AW_BLEND_HALF_WIDTH;
}

static sinew_result aw_label_and_radii(aw_ctx* c)
{
    const sinew_host_api* host = c->host;
    const uint32_t n = c->vertex_count;
    c->label = sinew_host_alloc(host, (size_t)n * sizeof *c->label);
    uint32_t* nearest = sinew_host_alloc(host, (size_t)n * sizeof *nearest);
    double* nearest_d = sinew_host_alloc(host, (size_t)n * sizeof *nearest_d);
    sinew_result result = SINEW_ERROR_OUT_OF_MEMORY;
    double fallback = 0.0;
    if (c->label && nearest && nearest_d) {
        aw_label_job job = { c, nearest, nearest_d };
        sinew_host_parallel_for(host, aw_label_range, &job, n, 256);
        result = aw_segment_radii(c, nearest, nearest_d, &fallback);
    }
    if (result == SINEW_OK) aw_joint_half_widths(c, fallback);
    sinew_host_free(host, nearest);
    sinew_host_free(host, nearest_d);
    return result;
}

/* ---------------------------------------------------------------------------------------- */
/* Rows                                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* Sorts the largest `count` of n weights to the front, by decreasing weight; returns how
 * many positive ones it found (at most count). */
static uint32_t aw_select(uint32_t* joints, double* w, uint32_t n, uint32_t count)
{
    uint32_t k = 0;
    for (; k < count && k < n; ++k) {
        uint32_t best = k;
        for (uint32_t i = k + 1; i < n; ++i)
            if (w[i] > w[best]) best = i;
        if (w[best] <= 0.0) break;
        double tw = w[k];
        uint32_t tj = joints[k];
        w[k] = w[best];
        joints[k] = joints[best];
        w[best] = tw;
        joints[best] = tj;
    }
    return k;
}

/* Stores the largest `cap` of n weights as row v, normalised and sorted by decreasing weight.
 * The entries must not repeat a joint; at least one must be positive. With `soft`, the
 * (cap+1)-th largest weight is subtracted from the kept ones first, so a weight leaves the
 * row continuously instead of jumping from its value to 0. */
static void aw_store_row(aw_rows* rows, uint32_t v, uint32_t* joints, double* w, uint32_t n,
                         uint32_t cap, int soft)
{
    uint32_t kept = aw_select(joints, w, n, cap + 1);
    if (kept > cap) {
        double cut = soft ? w[cap] : 0.0;
        if (w[0] <= cut) cut = 0.0; /* all tied: only a hard cut is left */
        kept = cap;
        while (kept > 1 && w[kept - 1] - cut <= 0.0) --kept;
        for (uint32_t i = 0; i < kept; ++i) w[i] -= cut;
    }
    double sum = 0.0;
    for (uint32_t i = 0; i < kept; ++i) sum += w[i];
    /* Drop what would vanish in float next to the largest weight. */
    while (kept > 1 && w[kept - 1] < AW_MIN_WEIGHT * sum) sum -= w[--kept];
    uint32_t* rj = rows->joint + (size_t)v * AW_WORK_CAP;
    float* rw = rows->weight + (size_t)v * AW_WORK_CAP;
    for (uint32_t i = 0; i < kept; ++i) {
        rj[i] = joints[i];
        rw[i] = (float)(w[i] / sum);
    }
    rows->count[v] = (uint8_t)kept;
}

/* Adds scale times row v to a gathered list of at most `capacity` (joint, weight). */
static uint32_t aw_gather(const aw_rows* rows, uint32_t v, double scale, uint32_t* joints,
                          double* w, uint32_t n, uint32_t capacity)
{
    const uint32_t* rj = rows->joint + (size_t)v * AW_WORK_CAP;
    const float* rw = rows->weight + (size_t)v * AW_WORK_CAP;
    for (uint32_t i = 0; i < rows->count[v]; ++i) {
        uint32_t k = 0;
        while (k < n && joints[k] != rj[i]) ++k;
        if (k == n) {
            if (n == capacity) continue;
            joints[n] = rj[i];
            w[n++] = 0.0;
        }
        w[k] += scale * rw[i];
    }
    return n;
}

/* The largest difference of any joint's weight between rows a and b. */
static double aw_row_difference(const aw_rows* rows, uint32_t a, uint32_t b)
{
    const uint32_t* ja = rows->joint + (size_t)a * AW_WORK_CAP;
    const uint32_t* jb = rows->joint + (size_t)b * AW_WORK_CAP;
    const float* wa = rows->weight + (size_t)a * AW_WORK_CAP;
    const float* wb = rows->weight + (size_t)b * AW_WORK_CAP;
    double worst = 0.0;
    for (uint32_t i = 0; i < rows->count[a]; ++i) {
        double other = 0.0;
        for (uint32_t k = 0; k < rows->count[b]; ++k)
            if (jb[k] == ja[i]) other = wb[k];
        worst = fmax(worst, fabs(wa[i] - other));
    }
    for (uint32_t k = 0; k < rows->count[b]; ++k) {
        int found = 0;
        for (uint32_t i = 0; i < rows->count[a]; ++i) found |= ja[i] == jb[k];
        if (!found) worst = fmax(worst, wb[k]);
    }
    return worst;
}

/* ---------------------------------------------------------------------------------------- */
/* Geometric blends                                                                         */
/* ---------------------------------------------------------------------------------------- */

/* The subtree weight of joint k at point p (5. in the header comment). `ctx` is the
 * direction of the bone below k that p belongs to, or the mean of k's bones when p lies
 * before them; NULL when that mean means nothing (bones leaving in opposite directions). */
static double aw_step(const aw_ctx* c, uint32_t k, const double* ctx, const double* p)
{
    if (c->parents[k] < 0) return 1.0;
    const double* din = c->din + 3 * (size_t)k;
    double axis[3];
    if (c->has_din[k] && ctx) {
        double sum[3] = { din[0] + ctx[0], din[1] + ctx[1], din[2] + ctx[2] };
        double len = aw_length(sum);
        /* A bone folding back on its parent: its own direction is the better axis. */
        if (len >= 0.5) {
            for (int i = 0; i < 3; ++i) axis[i] = sum[i] / len;
        } else {
            memcpy(axis, ctx, sizeof axis);
        }
    } else if (c->has_din[k]) {
        memcpy(axis, din, sizeof axis);
    } else if (ctx) {
        memcpy(axis, ctx, sizeof axis);
    } else {
        return 1.0;
    }
    double rel[3];
    aw_sub(rel, p, c->jpos + 3 * (size_t)k);
    double u = 0.5 * (aw_dot(rel, axis) / c->half_width[k] + 1.0);
    if (u <= 0.0) return 0.0;
    if (u >= 1.0) return 1.0;
    return u * u * (3.0 - 2.0 * u);
}

static void aw_geometric_row(aw_ctx* c, uint32_t v)
{
    const double* p = c->pos + 3 * (size_t)v;
    const uint32_t s = c->label[v];
    uint32_t joints[2 * AW_CHAIN_DEPTH + 2];
    double subtree[2 * AW_CHAIN_DEPTH + 2];
    double w[2 * AW_CHAIN_DEPTH + 2];
    if (c->seg_len[s] == 0.0) { /* point influence */
        joints[0] = c->seg_owner[s];
        w[0] = 1.0;
        aw_store_row(&c->rows, v, joints, w, 1, AW_WORK_CAP, 0);
        return;
    }
    /* Upwards from the bone's owner until a step is complete. */
    uint32_t up_joint[AW_CHAIN_DEPTH];
    double up_step[AW_CHAIN_DEPTH];
    uint32_t up = 0;
    uint32_t t = c->seg_owner[s];
    const double* ctx = c->seg_dir + 3 * (size_t)s;
    for (;;) {
        int32_t parent = c->parents[t];
        if (parent < 0 || up == AW_CHAIN_DEPTH) break;
        double step = aw_step(c, t, ctx, p);
        if (step >= 1.0) break;
        up_joint[up] = t;
        up_step[up++] = step;
        for (uint32_t i = c->owner_first[parent]; i < c->owner_first[parent + 1]; ++i)
            if (c->seg_end[i] == t) ctx = c->seg_dir + 3 * (size_t)i;
        t = (uint32_t)parent;
    }
    uint32_t n = 0;
    joints[n] = t;
    subtree[n++] = 1.0;
    while (up > 0) {
        --up;
        joints[n] = up_joint[up];
        subtree[n] = fmin(subtree[n - 1], up_step[up]);
        ++n;
    }
    /* Downwards through joints with a single bone until a step is empty. A joint that owns
     * no bone (a leaf, or only zero-length bones) takes no weight: its rotation moves none;
     * a zero-length bone to a single child is passed through to the child. */
    t = c->seg_end[s];
    for (uint32_t depth = 0; depth < 2 * AW_CHAIN_DEPTH; ++depth) {
        uint32_t bones = c->owner_first[t + 1] - c->owner_first[t];
        if (bones == 0) {
            if (c->child_offsets[t + 1] - c->child_offsets[t] != 1) break;
            t = c->children[c->child_offsets[t]];
            continue;
        }
        if (n == 2 * AW_CHAIN_DEPTH + 1) break;
        double step = aw_step(c, t, c->has_dout[t] ? c->dout + 3 * (size_t)t : NULL, p);
        double sub = fmin(subtree[n - 1], step);
        if (sub <= 0.0) break;
        joints[n] = t;
        subtree[n++] = sub;
        if (bones != 1) break;
        t = c->seg_end[c->owner_first[t]];
    }
    for (uint32_t i = 0; i < n; ++i) w[i] = subtree[i] - (i + 1 < n ? subtree[i + 1] : 0.0);
    aw_store_row(&c->rows, v, joints, w, n, AW_WORK_CAP, 0);
}

/* ---------------------------------------------------------------------------------------- */
/* Slope limiter                                                                            */
/* ---------------------------------------------------------------------------------------- */

/* Keeps only the entries whose joint is in `support`. */
static uint32_t aw_restrict(uint32_t* joints, double* w, uint32_t n, const uint32_t* support,
                            uint32_t support_count)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t k = 0; k < support_count; ++k) {
            if (support[k] == joints[i]) {
                joints[m] = joints[i];
                w[m++] = w[i];
                break;
            }
        }
    }
    return m;
}

/* Moves rows a and b towards each other, each by the fraction alpha of their difference
 * (a convex combination, so both stay normalised and non-negative). When their joints
 * together are more than `cap`, both keep the same `cap` joints (the largest in a + b):
 * rows truncated differently could never come closer. */
static void aw_mix(aw_ctx* c, uint32_t a, uint32_t b, double alpha, uint32_t cap)
{
    uint32_t support[AW_MIX_CAP];
    double sum[AW_MIX_CAP];
    uint32_t support_count = aw_gather(&c->rows, a, 1.0, support, sum, 0, AW_MIX_CAP);
    support_count = aw_gather(&c->rows, b, 1.0, support, sum, support_count, AW_MIX_CAP);
    if (support_count > cap) support_count = aw_select(support, sum, support_count, cap);

    uint32_t joints[AW_MIX_CAP];
    double w[AW_MIX_CAP];
    /* Row b's new value goes to the scratch rows first: it needs a's old value. */
    uint32_t m = aw_gather(&c->rows, b, 1.0 - alpha, joints, w, 0, AW_MIX_CAP);
    m = aw_gather(&c->rows, a, alpha, joints, w, m, AW_MIX_CAP);
    m = aw_restrict(joints, w, m, support, support_count);
    aw_store_row(&c->scratch, 0, joints, w, m, cap, 0);
    m = aw_gather(&c->rows, a, 1.0 - alpha, joints, w, 0, AW_MIX_CAP);
    m = aw_gather(&c->rows, b, alpha, joints, w, m, AW_MIX_CAP);
    m = aw_restrict(joints, w, m, support, support_count);
    aw_store_row(&c->rows, a, joints, w, m, cap, 0);
    c->rows.count[b] = c->scratch.count[0];
    memcpy(c->rows.joint + (size_t)b * AW_WORK_CAP, c->scratch.joint,
           AW_WORK_CAP * sizeof *c->rows.joint);
    memcpy(c->rows.weight + (size_t)b * AW_WORK_CAP, c->scratch.weight,
           AW_WORK_CAP * sizeof *c->rows.weight);
}

/* Pulls the two rows of every edge whose weights differ by more than `bound` (for some
 * joint) towards each other until they differ by 0.98 bound, sweeping Gauss-Seidel over the
 * vertices near the last changes until no edge exceeds the bound (6. in the header
 * comment). A step thus becomes a ramp of the least width the bound allows, and rows that
 * already satisfy it never change. Counts the edges still above the bound. */
static sinew_result aw_limit(aw_ctx* c, double bound, uint32_t cap, uint32_t* out_violations)
{
    const sinew_host_api* host = c->host;
    const uint32_t n = c->vertex_count;
    uint8_t* now = sinew_host_alloc(host, n);
    uint8_t* next = sinew_host_calloc(host, n, 1);
    if (!now || !next) {
        sinew_host_free(host, now);
        sinew_host_free(host, next);
        return SINEW_ERROR_OUT_OF_MEMORY;
    }
    memset(now, 1, n);
    const double target = 0.98 * bound;
    for (uint32_t sweep = 0; sweep < AW_LIMIT_SWEEPS; ++sweep) {
        uint32_t changes = 0;
        for (uint32_t v = 0; v < n; ++v) {
            if (!now[v]) continue;
            for (uint32_t e = c->adj_offsets[v]; e < c->adj_offsets[v + 1]; ++e) {
                uint32_t u = c->adj[e];
                double d = aw_row_difference(&c->rows, v, u);
                if (d <= bound) continue;
                aw_mix(c, v, u, 0.5 * (1.0 - target / d), cap);
                changes++;
                next[v] = next[u] = 1;
                for (uint32_t k = c->adj_offsets[u]; k < c->adj_offsets[u + 1]; ++k)
                    next[c->adj[k]] = 1;
            }
            if (next[v])
                for (uint32_t k = c->adj_offsets[v]; k < c->adj_offsets[v + 1]; ++k)
                    next[c->adj[k]] = 1;
        }
        uint8_t* t = now;
        now = next;
        next = t;
        memset(next, 0, n);
        if (changes == 0) break;
    }
    uint32_t violations = 0;
    for (uint32_t v = 0; v < n; ++v)
        for (uint32_t e = c->adj_offsets[v]; e < c->adj_offsets[v + 1]; ++e)
            if (c->adj[e] > v && aw_row_difference(&c->rows, v, c->adj[e]) > bound) violations++;
    sinew_host_free(host, now);
    sinew_host_free(host, next);
    *out_violations = violations;
    return SINEW_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Entry point                                                                              */
/* ---------------------------------------------------------------------------------------- */

static sinew_result aw_validate(const sinew_host_api* host, uint32_t vertex_count,
                                const float* positions, uint32_t triangle_count,
                                const uint32_t* indices, uint32_t joint_count,
                                const int32_t* parents, const float* bind_matrices,
                                uint32_t max_influences, sinew_auto_weights* out)
{
    static const char* fn = "sinew_compute_auto_weights";
    if (!out) return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    if (!positions)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s: positions is NULL", fn);
    if (!indices)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s: indices is NULL", fn);
    if (!parents)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s: parents is NULL", fn);
    if (!bind_matrices)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s: bind_matrices is NULL",
                               fn);
    if (max_influences != 4 && max_influences != 8)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: max_influences is %u, must be 4 or 8", fn, max_influences);
    if (vertex_count == 0 || triangle_count == 0)
        return sinew_host_fail(host, SINEW_ERROR_EMPTY_MESH,
                               "%s: mesh has %u vertices and %u triangles", fn, vertex_count,
                               triangle_count);
    if (vertex_count > UINT32_MAX / 8u - 1u)
        return sinew_host_fail(host, SINEW_ERROR_LIMIT, "%s: %u vertices is more than %u", fn,
                               vertex_count, UINT32_MAX / 8u - 1u);
    if (joint_count == 0)
        return sinew_host_fail(host, SINEW_ERROR_SKELETON, "%s: skeleton has no joint", fn);
    for (uint32_t i = 0; i < 3 * vertex_count; ++i)
        if (!isfinite(positions[i]))
            return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                                   "%s: position of vertex %u is not finite", fn, i / 3);
    for (size_t i = 0; i < 3 * (size_t)triangle_count; ++i)
        if (indices[i] >= vertex_count)
            return sinew_host_fail(host, SINEW_ERROR_VERTEX_INDEX,
                                   "%s: triangle %zu has vertex index %u, vertex count is %u",
                                   fn, i / 3, indices[i], vertex_count);
    for (uint32_t j = 0; j < joint_count; ++j) {
        if (parents[j] < -1 || parents[j] >= (int64_t)joint_count)
            return sinew_host_fail(host, SINEW_ERROR_JOINT_INDEX,
                                   "%s: joint %u has parent %d, joint count is %u", fn, j,
                                   parents[j], joint_count);
        for (int k = 0; k < 16; ++k)
            if (!isfinite(bind_matrices[16 * (size_t)j + k]))
                return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                                       "%s: bind matrix of joint %u is not finite", fn, j);
    }
    /* A forest: walking up from any joint reaches a root within joint_count steps. */
    for (uint32_t j = 0; j < joint_count; ++j) {
        int32_t a = parents[j];
        uint32_t steps = 0;
        while (a >= 0 && steps <= joint_count) {
            a = parents[a];
            ++steps;
        }
        if (a >= 0)
            return sinew_host_fail(host, SINEW_ERROR_SKELETON,
                                   "%s: joint %u lies on a cycle of parents", fn, j);
    }
    return SINEW_OK;
}

/* The weights of the welded vertices in c->rows: mesh, grid, skeleton, radii, geometric rows,
 * then the smoothness limiter before and after truncating to max_influences (7.). */
static sinew_result aw_weights(aw_ctx* c, uint32_t vertex_count, const float* positions,
                               uint32_t triangle_count, const uint32_t* indices,
                               const float* bind_matrices, uint32_t max_influences)
{
    const sinew_host_api* host = c->host;
    uint32_t violations = 0;
    sinew_result result;
    if ((result = aw_weld(c, vertex_count, positions)) != SINEW_OK) return result;
    if ((result = aw_build_mesh(c, triangle_count, indices)) != SINEW_OK) return result;
    if ((result = aw_build_grid(c)) != SINEW_OK) return result;
    if ((result = aw_build_skeleton(c, bind_matrices)) != SINEW_OK) return result;
    if ((result = aw_label_and_radii(c)) != SINEW_OK) return result;
    if (!aw_rows_alloc(host, &c->rows, c->vertex_count)) return SINEW_ERROR_OUT_OF_MEMORY;
    if (!aw_rows_alloc(host, &c->scratch, 1)) return SINEW_ERROR_OUT_OF_MEMORY; /* for aw_mix */
    for (uint32_t v = 0; v < c->vertex_count; ++v) aw_geometric_row(c, v);
    if ((result = aw_limit(c, AW_LIMIT, AW_WORK_CAP, &violations)) != SINEW_OK) return result;
    /* Truncate once, then let the limiter repair what truncation broke (7.). */
    for (uint32_t v = 0; v < c->vertex_count; ++v) {
        uint32_t joints[AW_MIX_CAP];
        double w[AW_MIX_CAP];
        uint32_t m = aw_gather(&c->rows, v, 1.0, joints, w, 0, AW_MIX_CAP);
        aw_store_row(&c->rows, v, joints, w, m, max_influences, 1);
    }
    if ((result = aw_limit(c, AW_LIMIT, max_influences, &violations)) != SINEW_OK) return result;
    if (violations)
        sinew_host_log(host, SINEW_LOG_WARNING,
                       "sinew_compute_auto_weights: %u edges still differ by more than %.2f",
                       violations, AW_LIMIT);
    return SINEW_OK;
}

/* The welded rows handed to every vertex of the input, in compressed rows. */
static sinew_result aw_output(const aw_ctx* c, uint32_t vertex_count, sinew_auto_weights* out)
{
    const sinew_host_api* host = c->host;
    size_t total = 0;
    for (uint32_t v = 0; v < vertex_count; ++v) total += c->rows.count[c->weld[v]];
    out->offsets = sinew_host_alloc(host, ((size_t)vertex_count + 1) * sizeof *out->offsets);
    out->joints = sinew_host_alloc(host, total * sizeof *out->joints);
    out->weights = sinew_host_alloc(host, total * sizeof *out->weights);
    if (!out->offsets || !out->joints || !out->weights) return SINEW_ERROR_OUT_OF_MEMORY;
    uint32_t at = 0;
    for (uint32_t v = 0; v < vertex_count; ++v) {
        uint32_t w = c->weld[v];
        out->offsets[v] = at;
        memcpy(out->joints + at, c->rows.joint + (size_t)w * AW_WORK_CAP,
               c->rows.count[w] * sizeof *out->joints);
        memcpy(out->weights + at, c->rows.weight + (size_t)w * AW_WORK_CAP,
               c->rows.count[w] * sizeof *out->weights);
        at += c->rows.count[w];
    }
    out->offsets[vertex_count] = at;
    return SINEW_OK;
}

sinew_result sinew_compute_auto_weights(const sinew_host_api* host, uint32_t vertex_count,
                                        const float* positions, uint32_t triangle_count,
                                        const uint32_t* indices, uint32_t joint_count,
                                        const int32_t* parents, const float* bind_matrices,
                                        uint32_t max_influences, sinew_auto_weights* out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!host || !host->allocator.alloc || !host->allocator.free || !host->jobs.parallel_for)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_compute_auto_weights: host services are missing");
    sinew_result result = aw_validate(host, vertex_count, positions, triangle_count, indices,
                                      joint_count, parents, bind_matrices, max_influences, out);
    if (result != SINEW_OK) return result;

    aw_ctx c;
    memset(&c, 0, sizeof c);
    c.host = host;
    c.joint_count = joint_count;
    c.parents = parents;
    if ((result = aw_weights(&c, vertex_count, positions, triangle_count, indices,
                             bind_matrices, max_influences)) != SINEW_OK)
        goto fail;
    if ((result = aw_output(&c, vertex_count, out)) != SINEW_OK) goto fail;
    aw_ctx_free(&c);
    return SINEW_OK;

fail:
    if (result == SINEW_ERROR_OUT_OF_MEMORY)
        sinew_host_log(host, SINEW_LOG_ERROR,
                       "sinew_compute_auto_weights: out of memory for %u vertices and %u joints",
                       vertex_count, joint_count);
    else if (result == SINEW_ERROR_LIMIT)
        sinew_host_log(host, SINEW_LOG_ERROR,
                       "sinew_compute_auto_weights: triangle grid of %u triangles too large",
                       triangle_count);
    sinew_host_free(host, out->offsets);
    sinew_host_free(host, out->joints);
    sinew_host_free(host, out->weights);
    memset(out, 0, sizeof *out);
    aw_ctx_free(&c);
    return result;
}
