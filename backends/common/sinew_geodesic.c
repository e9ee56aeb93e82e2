/* Geodesic neighbourhoods: the refined graph, the triangle grid and Dijkstra from a surface
 * point (see sinew_geodesic.h for the construction and why). SPDX-License-Identifier: MIT */
#include <sinew/sinew_host.h>

#include "sinew_geodesic.h"
#include "grid_reach.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* ---- small vector helpers ---- */

static inline void sub3(const double a[3], const double b[3], double r[3])
{
    r[0] = a[0] - b[0];
    r[1] = a[1] - b[1];
    r[2] = a[2] - b[2];
}

static inline double dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline void cross3(const double a[3], const double b[3], double r[3])
{
    r[0] = a[1] * b[2] - a[2] * b[1];
    r[1] = a[2] * b[0] - a[0] * b[2];
    r[2] = a[0] * b[1] - a[1] * b[0];
}

static inline double dist3(const double a[3], const double b[3])
{
    double d[3];
    sub3(a, b, d);
    return sqrt(dot3(d, d));
}

/* Straight distance from `a` (in the triangle on one side of edge p-q) to `b` (opposite vertex
 * on the other side) with both triangles unfolded into one plane; negative when the straight
 * segment misses the edge (it would leave the two triangles) or a triangle is degenerate. */
static double unfolded_distance(const double p[3], const double q[3], const double a[3],
                                const double b[3])
{
    double e[3], pa[3], pb[3];
    sub3(q, p, e);
    double len = sqrt(dot3(e, e));
    if (!(len > 0.0)) return -1.0;
    e[0] /= len, e[1] /= len, e[2] /= len;
    sub3(a, p, pa);
    sub3(b, p, pb);
    double ax = dot3(pa, e), bx = dot3(pb, e);
    double ay2 = dot3(pa, pa) - ax * ax, by2 = dot3(pb, pb) - bx * bx;
    double ay = ay2 > 0.0 ? sqrt(ay2) : 0.0, by = by2 > 0.0 ? -sqrt(by2) : 0.0;
    if (!(ay - by > 0.0) || by == 0.0) return -1.0;
    double t = ay / (ay - by);
    double x = ax + t * (bx - ax);
    if (x < 0.0 || x > len) return -1.0;
    return sqrt((ax - bx) * (ax - bx) + (ay - by) * (ay - by));
}

/* ---- building ---- */

typedef struct half_edge {
    uint32_t lo, hi, triangle, edge;
} half_edge;

/* The links of the graph, counted (count: links per vertex into g->graph_offsets[v + 1]) or
 * stored (at the cursors `fill`, then graph_targets and graph_lengths), in the order of the
 * sorted half-edges: both ways along an edge, and for a manifold edge both ways across its
 * unfolded triangle pair. */
typedef struct link_pass {
    sinew_geodesic* g;
    uint32_t* fill; /* NULL: count */
} link_pass;

/* A link both ways between vertices a and b of length len. */
static void add_links(link_pass* lp, uint32_t a, uint32_t b, double len)
{
    sinew_geodesic* g = lp->g;
    if (!lp->fill) {
        g->graph_offsets[a + 1u]++;
        g->graph_offsets[b + 1u]++;
        return;
    }
    uint32_t at = lp->fill[a]++;
    g->graph_targets[at] = b;
    g->graph_lengths[at] = len;
    at = lp->fill[b]++;
    g->graph_targets[at] = a;
    g->graph_lengths[at] = len;
}

/* The links of the half-edges he[i] .. he[j - 1] of one edge (lo, hi): the edge itself unless
 * a degenerate triangle repeats a corner there, and for a manifold edge the two triangles as
 * neighbours and a shortcut between their opposite corners across the unfolded pair. */
static void edge_links(link_pass* lp, const half_edge* he, size_t i, size_t j)
{
    sinew_geodesic* g = lp->g;
    const uint32_t* tri = g->triangles;
    uint32_t lo = he[i].lo, hi = he[i].hi;
    if (lo == hi) return;
    add_links(lp, lo, hi,
              lp->fill ? dist3(g->positions + 3u * (size_t)lo, g->positions + 3u * (size_t)hi)
                       : 0.0);
    if (j - i != 2u) return;
    const half_edge* h0 = &he[i];
    const half_edge* h1 = &he[i + 1u];
    g->triangle_neighbours[3u * (size_t)h0->triangle + h0->edge] = h1->triangle;
    g->triangle_neighbours[3u * (size_t)h1->triangle + h1->edge] = h0->triangle;
    uint32_t oa = tri[3u * h0->triangle + (h0->edge + 2u) % 3u];
    uint32_t ob = tri[3u * h1->triangle + (h1->edge + 2u) % 3u];
    if (oa == ob || oa == lo || oa == hi || ob == lo || ob == hi) return;
    double d = unfolded_distance(g->positions + 3u * (size_t)lo, g->positions + 3u * (size_t)hi,
                                 g->positions + 3u * (size_t)oa, g->positions + 3u * (size_t)ob);
    if (d >= 0.0) add_links(lp, oa, ob, d);
}

/* One pass of link_pass over the edges of the sorted half-edges. */
static void edge_pass(link_pass* lp, const half_edge* he, size_t hcount)
{
    for (size_t i = 0; i < hcount;) {
        size_t j = i + 1u;
        while (j < hcount && he[j].lo == he[i].lo && he[j].hi == he[i].hi) ++j;
        edge_links(lp, he, i, j);
        i = j;
    }
}

/* The half-edges of every triangle sorted by (lo, hi, triangle, edge): a counting sort by lo,
 * which keeps the (triangle, edge) order of the input, then each lo's few by hi, stably. */
static sinew_result sorted_half_edges(const sinew_host_api* host, const sinew_geodesic* g,
                                      half_edge** out)
{
    const uint32_t V = g->vertex_count, T = g->triangle_count;
    const uint32_t* tri = g->triangles;
    size_t hcount = 3u * (size_t)T;
    half_edge* he = (half_edge*)sinew_host_alloc(host, hcount * sizeof *he);
    uint32_t* start = (uint32_t*)sinew_host_calloc(host, (size_t)V + 1u, sizeof(uint32_t));
    if (!he || !start) {
        sinew_host_free(host, he);
        sinew_host_free(host, start);
        return SINEW_ERROR_OUT_OF_MEMORY;
    }
    for (uint32_t t = 0; t < T; ++t)
        for (uint32_t e = 0; e < 3u; ++e) {
            uint32_t a = tri[3u * t + e], b = tri[3u * t + (e + 1u) % 3u];
            start[(a < b ? a : b) + 1u]++;
        }
    for (uint32_t v = 0; v < V; ++v) start[v + 1u] += start[v];
    for (uint32_t t = 0; t < T; ++t)
        for (uint32_t e = 0; e < 3u; ++e) {
            uint32_t a = tri[3u * t + e], b = tri[3u * t + (e + 1u) % 3u];
            half_edge h = {a < b ? a : b, a < b ? b : a, t, e};
            he[start[h.lo]++] = h;
        }
    /* The cursors now stand at each lo's end: the runs are [start[v - 1], start[v]). */
    for (uint32_t v = 0, begin = 0; v < V; begin = start[v], ++v)
        for (uint32_t a = begin + 1u; a < start[v]; ++a) {
            half_edge h = he[a];
            uint32_t q = a;
            for (; q > begin && he[q - 1u].hi > h.hi; --q) he[q] = he[q - 1u];
            he[q] = h;
        }
    sinew_host_free(host, start);
    *out = he;
    return SINEW_OK;
}

static sinew_result build_graph(const sinew_host_api* host, const char* who, sinew_geodesic* g)
{
    const uint32_t V = g->vertex_count, T = g->triangle_count;
    size_t hcount = 3u * (size_t)T;
    half_edge* he = NULL;
    g->graph_offsets = (uint32_t*)sinew_host_calloc(host, (size_t)V + 1u, sizeof(uint32_t));
    if (!g->graph_offsets || sorted_half_edges(host, g, &he) != SINEW_OK)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "%s: out of memory for the geodesic graph of %u triangles", who, T);
    for (size_t i = 0; i < hcount; ++i) g->triangle_neighbours[i] = SINEW_GEODESIC_NONE;
    link_pass lp = {g, NULL};
    edge_pass(&lp, he, hcount);
    for (uint32_t v = 0; v < V; ++v) g->graph_offsets[v + 1u] += g->graph_offsets[v];
    size_t nlinks = g->graph_offsets[V];
    g->graph_targets = (uint32_t*)sinew_host_alloc(host, (nlinks ? nlinks : 1u) * sizeof(uint32_t));
    g->graph_lengths = (double*)sinew_host_alloc(host, (nlinks ? nlinks : 1u) * sizeof(double));
    lp.fill = (uint32_t*)sinew_host_alloc(host, (size_t)V * sizeof(uint32_t));
    if (!g->graph_targets || !g->graph_lengths || !lp.fill) {
        sinew_host_free(host, he);
        sinew_host_free(host, lp.fill);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "%s: out of memory for %zu geodesic graph links", who, nlinks);
    }
    memcpy(lp.fill, g->graph_offsets, (size_t)V * sizeof(uint32_t));
    edge_pass(&lp, he, hcount);
    sinew_host_free(host, he);
    sinew_host_free(host, lp.fill);
    return SINEW_OK;
}

static inline uint32_t cell_coord(double x, double origin, double h, uint32_t dim)
{
    double c = floor((x - origin) / h);
    if (!(c > 0.0)) return 0u;
    if (c >= (double)dim) return dim - 1u;
    return (uint32_t)c;
}

static sinew_result build_grid(const sinew_host_api* host, const char* who, sinew_geodesic* g)
{
    const uint32_t T = g->triangle_count;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    double edge_sum = 0.0;
    for (uint32_t t = 0; t < T; ++t)
        for (uint32_t e = 0; e < 3u; ++e) {
            const double* p = g->positions + 3u * (size_t)g->triangles[3u * t + e];
            const double* q = g->positions + 3u * (size_t)g->triangles[3u * t + (e + 1u) % 3u];
            edge_sum += dist3(p, q);
            for (int k = 0; k < 3; ++k) {
                if (p[k] < lo[k]) lo[k] = p[k];
                if (p[k] > hi[k]) hi[k] = p[k];
            }
        }
    g->triangle_boxes = (float*)sinew_host_alloc(host, 6u * (size_t)T * sizeof(float));
    if (!g->triangle_boxes)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "%s: out of memory for the boxes of %u triangles", who, T);
    for (uint32_t t = 0; t < T; ++t)
        for (int k = 0; k < 3; ++k) {
            double a = g->positions[3u * (size_t)g->triangles[3u * t] + (size_t)k];
            double b = g->positions[3u * (size_t)g->triangles[3u * t + 1u] + (size_t)k];
            double c = g->positions[3u * (size_t)g->triangles[3u * t + 2u] + (size_t)k];
            g->triangle_boxes[6u * (size_t)t + (size_t)k] = (float)fmin(a, fmin(b, c));
            g->triangle_boxes[6u * (size_t)t + 3u + (size_t)k] = (float)fmax(a, fmax(b, c));
        }
    g->diagonal2 = (hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                   (hi[2] - lo[2]) * (hi[2] - lo[2]);
    /* Cells about one edge long hold a handful of triangles each. */
    double h = edge_sum / (3.0 * (double)T);
    double extent = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    if (!(h > 0.0)) h = extent > 0.0 ? extent : 1.0;
    double dims[3];
    for (;;) {
        for (int k = 0; k < 3; ++k) dims[k] = floor((hi[k] - lo[k]) / h) + 1.0;
        /* Never many more cells than triangles (a thin mesh in a wide box). */
        if (dims[0] * dims[1] * dims[2] <= 4.0 * (double)T + 64.0) break;
        h *= 1.25;
    }
    for (int k = 0; k < 3; ++k) {
        g->grid_origin[k] = lo[k];
        g->grid_dims[k] = (uint32_t)dims[k];
    }
    g->cell_size = h;
    size_t cells = (size_t)g->grid_dims[0] * g->grid_dims[1] * g->grid_dims[2];
    g->cell_offsets = (uint32_t*)sinew_host_calloc(host, cells + 1u, sizeof(uint32_t));
    if (!g->cell_offsets)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "%s: out of memory for a grid of %zu cells", who, cells);
    /* Two passes over the triangles' bounding boxes: count, then fill. */
    size_t total = 0;
    for (int pass = 0; pass < 2; ++pass) {
        for (uint32_t t = 0; t < T; ++t) {
            uint32_t c0[3], c1[3];
            for (int k = 0; k < 3; ++k) {
                double a = g->positions[3u * (size_t)g->triangles[3u * t] + (size_t)k];
                double b = g->positions[3u * (size_t)g->triangles[3u * t + 1u] + (size_t)k];
                double c = g->positions[3u * (size_t)g->triangles[3u * t + 2u] + (size_t)k];
                c0[k] = cell_coord(fmin(a, fmin(b, c)), lo[k], h, g->grid_dims[k]);
                c1[k] = cell_coord(fmax(a, fmax(b, c)), lo[k], h, g->grid_dims[k]);
            }
            for (uint32_t z = c0[2]; z <= c1[2]; ++z)
                for (uint32_t y = c0[1]; y <= c1[1]; ++y)
                    for (uint32_t x = c0[0]; x <= c1[0]; ++x) {
                        size_t cell = ((size_t)z * g->grid_dims[1] + y) * g->grid_dims[0] + x;
                        if (pass == 0)
                            g->cell_offsets[cell + 1u]++;
                        else
                            g->cell_triangles[g->cell_offsets[cell]++] = t;
                    }
        }
        if (pass == 0) {
            for (size_t c = 0; c < cells; ++c) g->cell_offsets[c + 1u] += g->cell_offsets[c];
            total = g->cell_offsets[cells];
            if (total > UINT32_MAX - 1u)
                return sinew_host_fail(host, SINEW_ERROR_LIMIT,
                                       "%s: %zu triangle-cell entries exceed the grid's limit",
                                       who, total);
            g->cell_triangles = (uint32_t*)sinew_host_alloc(host, total * sizeof(uint32_t));
            if (!g->cell_triangles)
                return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                                       "%s: out of memory for %zu grid entries", who, total);
        } else {
            /* The fill advanced every offset to the next cell's start: shift back. */
            for (size_t c = cells; c > 0; --c) g->cell_offsets[c] = g->cell_offsets[c - 1u];
            g->cell_offsets[0] = 0;
        }
    }
    return SINEW_OK;
}

sinew_result sinew_geodesic_build(const sinew_host_api* host, const char* who,
                                  const float* positions, uint32_t vertex_count,
                                  const uint32_t* indices, uint32_t triangle_count,
                                  sinew_geodesic* out)
{
    if (!out || !host)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s: geodesic output is NULL",
                               who);
    memset(out, 0, sizeof *out);
    if (!positions || !indices || vertex_count == 0 || triangle_count == 0)
        return sinew_host_fail(host, SINEW_ERROR_EMPTY_MESH,
                               "%s: the surface has %u vertices and %u triangles", who,
                               vertex_count, triangle_count);
    out->vertex_count = vertex_count;
    out->triangle_count = triangle_count;
    out->triangles = indices;
    out->positions = (double*)sinew_host_alloc(host, 3u * (size_t)vertex_count * sizeof(double));
    out->triangle_neighbours =
        (uint32_t*)sinew_host_alloc(host, 3u * (size_t)triangle_count * sizeof(uint32_t));
    if (!out->positions || !out->triangle_neighbours) {
        sinew_geodesic_free(host, out);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "%s: out of memory for a surface of %u vertices", who,
                               vertex_count);
    }
    for (size_t i = 0; i < 3u * (size_t)vertex_count; ++i) out->positions[i] = positions[i];
    sinew_result r = build_graph(host, who, out);
    if (r == SINEW_OK) r = build_grid(host, who, out);
    if (r != SINEW_OK) sinew_geodesic_free(host, out);
    return r;
}

void sinew_geodesic_free(const sinew_host_api* host, sinew_geodesic* geo)
{
    if (!geo) return;
    sinew_host_free(host, geo->positions);
    sinew_host_free(host, geo->triangle_neighbours);
    sinew_host_free(host, geo->graph_offsets);
    sinew_host_free(host, geo->graph_targets);
    sinew_host_free(host, geo->graph_lengths);
    sinew_host_free(host, geo->cell_offsets);
    sinew_host_free(host, geo->cell_triangles);
    sinew_host_free(host, geo->triangle_boxes);
    memset(geo, 0, sizeof *geo);
}

/* ---- closest point ---- */

/* Squared distance from p to segment a-b; t is the parameter of the closest point. */
static double segment_closest(const double p[3], const double a[3], const double b[3], double* t)
{
    double ab[3], ap[3];
    sub3(b, a, ab);
    sub3(p, a, ap);
    double ll = dot3(ab, ab);
    double s = ll > 0.0 ? dot3(ap, ab) / ll : 0.0;
    s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
    double d[3] = {ap[0] - s * ab[0], ap[1] - s * ab[1], ap[2] - s * ab[2]};
    *t = s;
    return dot3(d, d);
}

/* Squared distance from p to triangle abc, with the closest point's barycentric coordinates:
 * the projection onto the plane when it falls inside, else the best of the three edges (which
 * also covers degenerate triangles). */
static double triangle_closest(const double p[3], const double a[3], const double b[3],
                               const double c[3], double bary[3])
{
    double ab[3], ac[3], n[3];
    sub3(b, a, ab);
    sub3(c, a, ac);
    cross3(ab, ac, n);
    double nn = dot3(n, n);
    double scale = dot3(ab, ab) + dot3(ac, ac);
    if (nn > 1e-24 * scale * scale) {
        double ap[3];
        sub3(p, a, ap);
        double h = dot3(ap, n) / nn;
        double p0[3] = {p[0] - h * n[0], p[1] - h * n[1], p[2] - h * n[2]};
        double pb[3], pc[3], pa[3], x[3];
        sub3(b, p0, pb);
        sub3(c, p0, pc);
        sub3(a, p0, pa);
        cross3(pb, pc, x);
        double la = dot3(n, x) / nn;
        cross3(pc, pa, x);
        double lb = dot3(n, x) / nn;
        double lc = 1.0 - la - lb;
        if (la >= 0.0 && lb >= 0.0 && lc >= 0.0) {
            bary[0] = la, bary[1] = lb, bary[2] = lc;
            return h * h * nn;
        }
    }
    double t0, t1, t2;
    double d0 = segment_closest(p, a, b, &t0);
    double d1 = segment_closest(p, b, c, &t1);
    double d2 = segment_closest(p, c, a, &t2);
    if (d0 <= d1 && d0 <= d2) {
        bary[0] = 1.0 - t0, bary[1] = t0, bary[2] = 0.0;
        return d0;
    }
    if (d1 <= d2) {
        bary[0] = 0.0, bary[1] = 1.0 - t1, bary[2] = t1;
        return d1;
    }
    bary[0] = t2, bary[1] = 0.0, bary[2] = 1.0 - t2;
    return d2;
}

/* A triangle met by a closest-point search, with the squared distance from the point to its
 * bounding box: no point of the triangle is nearer. */
typedef struct closest_candidate {
    double bound;
    uint32_t triangle;
} closest_candidate;

/* Candidates held before they are tested (test_candidates). */
#define CLOSEST_CANDIDATES 128u

/* Whether a triangle whose box lies `bound` (squared) from the point can still give a squared
 * distance of at most `best`. The margin, far above the rounding of any squared distance the
 * search computes (relative to the distance and to the surface's size), keeps every triangle
 * whose computed distance could tie with or beat `best`, so skipping the others changes no
 * result. */
static inline int may_reach(double bound, double best, double diagonal2)
{
    return !(bound > best + 1e-9 * (best + diagonal2));
}

static inline double box_distance2(const float* box, const double p[3])
{
    double d2 = 0.0;
    for (int k = 0; k < 3; ++k) {
        double below = (double)box[k] - p[k], above = p[k] - (double)box[3 + k];
        double gap = below > above ? below : above;
        gap = gap > 0.0 ? gap : 0.0;
        d2 += gap * gap;
    }
    return d2;
}

/* Tests triangle t against the best so far (*best, *best_t, bary): the lowest squared
 * distance, ties to the lower triangle index, as in any order of the triangles. */
static inline void test_triangle(const sinew_geodesic* geo, const double p[3], uint32_t t,
                                 double* best, uint32_t* best_t, double bary[3])
{
    const uint32_t* tri = geo->triangles + 3u * (size_t)t;
    double b[3];
    double d = triangle_closest(p, geo->positions + 3u * (size_t)tri[0],
                                geo->positions + 3u * (size_t)tri[1],
                                geo->positions + 3u * (size_t)tri[2], b);
    if (d < *best || (d == *best && t < *best_t)) {
        *best = d;
        *best_t = t;
        memcpy(bary, b, sizeof b);
    }
}

/* Tests the candidates c[0 .. count): first the one whose box is nearest, whose distance then
 * rules out most of the others by their boxes (a triangle listed by several cells is tested
 * again at most, which changes nothing). */
static void test_candidates(const sinew_geodesic* geo, const double p[3],
                            const closest_candidate* c, uint32_t count, double* best,
                            uint32_t* best_t, double bary[3])
{
    if (count == 0) return;
    uint32_t nearest = 0;
    for (uint32_t a = 1; a < count; ++a)
        if (c[a].bound < c[nearest].bound) nearest = a;
    test_triangle(geo, p, c[nearest].triangle, best, best_t, bary);
    for (uint32_t a = 0; a < count; ++a)
        if (a != nearest && may_reach(c[a].bound, *best, geo->diagonal2))
            test_triangle(geo, p, c[a].triangle, best, best_t, bary);
}

uint32_t sinew_geodesic_closest(const sinew_geodesic* geo, const double p[3], double q[3],
                                double bary[3])
{
    const double h = geo->cell_size;
    uint32_t c[3];
    for (int k = 0; k < 3; ++k) c[k] = cell_coord(p[k], geo->grid_origin[k], h, geo->grid_dims[k]);
    uint32_t max_dim = geo->grid_dims[0];
    if (geo->grid_dims[1] > max_dim) max_dim = geo->grid_dims[1];
    if (geo->grid_dims[2] > max_dim) max_dim = geo->grid_dims[2];
    double best = INFINITY;
    uint32_t best_t = SINEW_GEODESIC_NONE;
    closest_candidate held[CLOSEST_CANDIDATES];
    for (int64_t r = 0; r <= (int64_t)max_dim; ++r) {
        /* Every cell at Chebyshev distance r from c (the shell of the cube of radius r). The
         * ring's triangle with the nearest box is tested first, so that its distance lets the
         * boxes of the others rule them out. */
        uint32_t count = 0;
        for (int64_t dz = -r; dz <= r; ++dz) {
            int64_t z = (int64_t)c[2] + dz;
            if (z < 0 || z >= (int64_t)geo->grid_dims[2]) continue;
            for (int64_t dy = -r; dy <= r; ++dy) {
                int64_t y = (int64_t)c[1] + dy;
                if (y < 0 || y >= (int64_t)geo->grid_dims[1]) continue;
                int shell = (dz == -r || dz == r || dy == -r || dy == r);
                int64_t step = shell || r == 0 ? 1 : 2 * r;
                for (int64_t dx = -r; dx <= r; dx += step) {
                    int64_t x = (int64_t)c[0] + dx;
                    if (x < 0 || x >= (int64_t)geo->grid_dims[0]) continue;
                    size_t cell = ((size_t)z * geo->grid_dims[1] + (size_t)y) * geo->grid_dims[0] +
                                  (size_t)x;
                    for (uint32_t i = geo->cell_offsets[cell]; i < geo->cell_offsets[cell + 1u];
                         ++i) {
                        uint32_t t = geo->cell_triangles[i];
                        double bound = box_distance2(geo->triangle_boxes + 6u * (size_t)t, p);
                        if (!may_reach(bound, best, geo->diagonal2)) continue;
                        if (count == CLOSEST_CANDIDATES) {
                            test_candidates(geo, p, held, count, &best, &best_t, bary);
                            count = 0;
                        }
                        held[count].bound = bound;
                        held[count].triangle = t;
                        ++count;
                    }
                }
            }
        }
        test_candidates(geo, p, held, count, &best, &best_t, bary);
        /* Cells beyond ring r lie at least r cells away from the point's clamped position, and
         * clamping into the grid box never lengthens a distance to a point inside it. */
        double reach = (double)r * h;
        double inside = sinew_grid_ring_reach(geo->grid_origin, h, c, (double)r, p);
        if (best_t != SINEW_GEODESIC_NONE &&
            (best <= reach * reach || (inside > 0.0 && best < inside * inside)))
            break;
    }
    if (best_t != SINEW_GEODESIC_NONE) {
        const uint32_t* tri = geo->triangles + 3u * (size_t)best_t;
        for (int k = 0; k < 3; ++k)
            q[k] = bary[0] * geo->positions[3u * (size_t)tri[0] + (size_t)k] +
                   bary[1] * geo->positions[3u * (size_t)tri[1] + (size_t)k] +
                   bary[2] * geo->positions[3u * (size_t)tri[2] + (size_t)k];
    }
    return best_t;
}

/* ---- Dijkstra ---- */

sinew_result sinew_geodesic_scratch_init(const sinew_host_api* host, const sinew_geodesic* geo,
                                         sinew_geodesic_scratch* s)
{
    memset(s, 0, sizeof *s);
    size_t V = geo->vertex_count;
    s->marks = (sinew_geodesic_mark*)sinew_host_calloc(host, V, sizeof(sinew_geodesic_mark));
    s->frontier_capacity = 256u;
    s->frontier_distance =
        (double*)sinew_host_alloc(host, s->frontier_capacity * sizeof(double));
    s->frontier_vertex =
        (uint32_t*)sinew_host_alloc(host, s->frontier_capacity * sizeof(uint32_t));
    if (!s->marks || !s->frontier_distance || !s->frontier_vertex) {
        sinew_geodesic_scratch_free(host, s);
        return SINEW_ERROR_OUT_OF_MEMORY;
    }
    return SINEW_OK;
}

void sinew_geodesic_scratch_free(const sinew_host_api* host, sinew_geodesic_scratch* s)
{
    if (!s) return;
    sinew_host_free(host, s->marks);
    sinew_host_free(host, s->frontier_distance);
    sinew_host_free(host, s->frontier_vertex);
    memset(s, 0, sizeof *s);
}

/* The search's frontier: the vertices reached and not yet settled, unordered, with their
 * tentative distances; each one's mark holds its place (decrease-key in place). */
typedef struct frontier {
    sinew_geodesic_scratch* s;
    uint32_t size;
} frontier;

#define MARK_SETTLED 0xffffffffu

/* Doubles the frontier's room (the rare path of relax). */
static int frontier_grow(const sinew_host_api* host, frontier* f)
{
    sinew_geodesic_scratch* s = f->s;
    uint32_t cap = s->frontier_capacity * 2u;
    double* distance = (double*)sinew_host_alloc(host, cap * sizeof(double));
    uint32_t* vertex = (uint32_t*)sinew_host_alloc(host, cap * sizeof(uint32_t));
    if (!distance || !vertex) {
        sinew_host_free(host, distance);
        sinew_host_free(host, vertex);
        return 0;
    }
    memcpy(distance, s->frontier_distance, f->size * sizeof(double));
    memcpy(vertex, s->frontier_vertex, f->size * sizeof(uint32_t));
    sinew_host_free(host, s->frontier_distance);
    sinew_host_free(host, s->frontier_vertex);
    s->frontier_distance = distance;
    s->frontier_vertex = vertex;
    s->frontier_capacity = cap;
    return 1;
}

/* Vertex v reached at distance d: kept when it is not settled and d is shorter than its
 * distance so far (the first reach of a query always). Returns 0 when out of memory. */
static inline int relax(const sinew_host_api* host, frontier* f, uint32_t v, double d)
{
    sinew_geodesic_scratch* s = f->s;
    sinew_geodesic_mark* m = &s->marks[v];
    if (m->stamp == s->query) {
        if (m->slot == MARK_SETTLED || !(d < m->distance)) return 1;
        m->distance = d;
        s->frontier_distance[m->slot] = d;
        return 1;
    }
    if (f->size == s->frontier_capacity && !frontier_grow(host, f)) return 0;
    m->stamp = s->query;
    m->distance = d;
    m->slot = f->size;
    s->frontier_vertex[f->size] = v;
    s->frontier_distance[f->size] = d;
    ++f->size;
    return 1;
}

/* Removes and returns the frontier's nearest vertex (ties: the lower index, so the order never
 * depends on the search history), settled: the least distance first, without branches, then
 * the lowest vertex at it. */
static inline sinew_geodesic_hit settle_nearest(frontier* f)
{
    sinew_geodesic_scratch* s = f->s;
    const double* d = s->frontier_distance;
    const uint32_t* v = s->frontier_vertex;
    double least = d[0];
    for (uint32_t i = 1; i < f->size; ++i) least = d[i] < least ? d[i] : least;
    uint32_t best = 0, best_vertex = 0xffffffffu;
    for (uint32_t i = 0; i < f->size; ++i)
        if (d[i] == least && v[i] < best_vertex) best = i, best_vertex = v[i];
    sinew_geodesic_hit top = {best_vertex, d[best]};
    uint32_t last = --f->size;
    s->frontier_distance[best] = d[last];
    s->frontier_vertex[best] = v[last];
    if (best < last) s->marks[s->frontier_vertex[best]].slot = best;
    s->marks[top.vertex].slot = MARK_SETTLED;
    return top;
}

uint32_t sinew_geodesic_nearest(const sinew_host_api* host, const sinew_geodesic* geo,
                                sinew_geodesic_scratch* s, uint32_t triangle, const double q[3],
                                uint32_t count, sinew_geodesic_hit* hits)
{
    if (++s->query == 0u) { /* the id wrapped: forget every old stamp */
        memset(s->marks, 0, geo->vertex_count * sizeof(sinew_geodesic_mark));
        s->query = 1u;
    }
    frontier f = {s, 0u};
    const uint32_t* tri = geo->triangles + 3u * (size_t)triangle;
    const uint32_t* offsets = geo->graph_offsets;
    const uint32_t* targets = geo->graph_targets;
    const double* lengths = geo->graph_lengths;
    int ok = 1;
    /* Inside the source triangle, straight lines are geodesics. */
    for (int k = 0; k < 3; ++k)
        ok &= relax(host, &f, tri[k], dist3(q, geo->positions + 3u * (size_t)tri[k]));
    /* Around the source, straight chords to every graph neighbour of its corners: on a surface
     * smooth at the scale of an edge the chord is the geodesic up to third order, and it spares
     * the search the detour through a corner that dominates short distances. */
    for (int k = 0; k < 3; ++k)
        for (uint32_t i = offsets[tri[k]]; i < offsets[tri[k] + 1u]; ++i) {
            uint32_t u = targets[i];
            ok &= relax(host, &f, u, dist3(q, geo->positions + 3u * (size_t)u));
        }
    uint32_t found = 0;
    while (ok && f.size > 0 && found < count) {
        sinew_geodesic_hit top = settle_nearest(&f);
        hits[found++] = top;
        if (found == count) break;
        for (uint32_t i = offsets[top.vertex]; i < offsets[top.vertex + 1u]; ++i)
            ok &= relax(host, &f, targets[i], top.distance + lengths[i]);
    }
    return ok ? found : SINEW_GEODESIC_NONE;
}
