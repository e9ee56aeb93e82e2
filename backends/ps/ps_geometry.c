/* Closest points on segments and triangles, segment-triangle distances and a uniform grid for
 * closest-triangle queries: the geometry behind the bone radii (Sec. 3.1), the skin shrinking
 * (Sec. 3.2) and the upsampling (Sec. 6) of projective skinning.
 * SPDX-License-Identifier: MIT */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ps_internal.h"
#include "grid_reach.h"

static inline void sub3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[0] - b[0];
    out[1] = a[1] - b[1];
    out[2] = a[2] - b[2];
}

static inline double dist2(const double a[3], const double b[3])
{
    double d[3];
    sub3(a, b, d);
    return ps_dot3(d, d);
}

double ps_closest_on_segment(const double p[3], const double a[3], const double b[3],
                             double out[3])
{
    double ab[3], ap[3];
    sub3(b, a, ab);
    sub3(p, a, ap);
    double len2 = ps_dot3(ab, ab);
    double t = len2 > 0.0 ? ps_dot3(ap, ab) / len2 : 0.0;
    t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
    for (int k = 0; k < 3; ++k) out[k] = a[k] + t * ab[k];
    return t;
}

/* The closest point is found by the region of the triangle's plane that p projects into:
 * a vertex region, an edge region, or the interior. Each region is decided by the signs of
 * the dot products of p's offsets with the two edges leaving a vertex. */
void ps_closest_on_triangle(const double p[3], const double a[3], const double b[3],
                            const double c[3], double out[3], double bary[3])
{
    double ab[3], ac[3], ap[3];
    sub3(b, a, ab);
    sub3(c, a, ac);
    sub3(p, a, ap);
    double d1 = ps_dot3(ab, ap), d2 = ps_dot3(ac, ap);
    if (d1 <= 0.0 && d2 <= 0.0) {
        bary[0] = 1.0, bary[1] = 0.0, bary[2] = 0.0;
        memcpy(out, a, 3 * sizeof(double));
        return;
    }
    double bp[3];
    sub3(p, b, bp);
    double d3 = ps_dot3(ab, bp), d4 = ps_dot3(ac, bp);
    if (d3 >= 0.0 && d4 <= d3) {
        bary[0] = 0.0, bary[1] = 1.0, bary[2] = 0.0;
        memcpy(out, b, 3 * sizeof(double));
        return;
    }
    double cp[3];
    sub3(p, c, cp);
    double d5 = ps_dot3(ab, cp), d6 = ps_dot3(ac, cp);
    if (d6 >= 0.0 && d5 <= d6) {
        bary[0] = 0.0, bary[1] = 0.0, bary[2] = 1.0;
        memcpy(out, c, 3 * sizeof(double));
        return;
    }
    /* Edge regions: the barycentric coordinate of the opposite vertex is <= 0 while the
     * projection onto the edge lies within it. */
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        double t = d1 / (d1 - d3);
        bary[0] = 1.0 - t, bary[1] = t, bary[2] = 0.0;
        for (int k = 0; k < 3; ++k) out[k] = a[k] + t * ab[k];
        return;
    }
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        double t = d2 / (d2 - d6);
        bary[0] = 1.0 - t, bary[1] = 0.0, bary[2] = t;
        for (int k = 0; k < 3; ++k) out[k] = a[k] + t * ac[k];
        return;
    }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
        double t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        bary[0] = 0.0, bary[1] = 1.0 - t, bary[2] = t;
        for (int k = 0; k < 3; ++k) out[k] = b[k] + t * (c[k] - b[k]);
        return;
    }
    double sum = va + vb + vc;
    if (!(sum > 0.0)) {
        /* A degenerate (zero-area) triangle that none of the regions above claimed: its
         * closest point lies on one of its edges. */
        double best = DBL_MAX, q[3];
        const double* v[3] = {a, b, c};
        for (int e = 0; e < 3; ++e) {
            double t = ps_closest_on_segment(p, v[e], v[(e + 1) % 3], q);
            double d = dist2(p, q);
            if (d < best) {
                best = d;
                memcpy(out, q, 3 * sizeof(double));
                bary[e] = 1.0 - t, bary[(e + 1) % 3] = t, bary[(e + 2) % 3] = 0.0;
            }
        }
        return;
    }
    double v = vb / sum, w = vc / sum;
    bary[0] = 1.0 - v - w, bary[1] = v, bary[2] = w;
    for (int k = 0; k < 3; ++k) out[k] = a[k] + v * ab[k] + w * ac[k];
}

/* Squared distance between segments [p0, p1] and [q0, q1]: minimise over both parameters,
 * clamping one and re-solving for the other. */
static double segment_segment_dist2(const double p0[3], const double p1[3], const double q0[3],
                                    const double q1[3])
{
    double d1[3], d2[3], r[3];
    sub3(p1, p0, d1);
    sub3(q1, q0, d2);
    sub3(p0, q0, r);
    double a = ps_dot3(d1, d1), e = ps_dot3(d2, d2), f = ps_dot3(d2, r);
    double s, t;
    if (a <= DBL_MIN && e <= DBL_MIN) return ps_dot3(r, r);
    if (a <= DBL_MIN) {
        s = 0.0;
        t = f / e;
        t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
    } else {
        double c = ps_dot3(d1, r);
        if (e <= DBL_MIN) {
            t = 0.0;
            s = -c / a;
            s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
        } else {
            double b = ps_dot3(d1, d2);
            double denom = a * e - b * b;
            s = denom > 0.0 ? (b * f - c * e) / denom : 0.0;
            s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
            t = (b * s + f) / e;
            if (t < 0.0) {
                t = 0.0;
                s = -c / a;
                s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
            } else if (t > 1.0) {
                t = 1.0;
                s = (b - c) / a;
                s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
            }
        }
    }
    double cp[3], cq[3];
    for (int k = 0; k < 3; ++k) {
        cp[k] = p0[k] + s * d1[k];
        cq[k] = q0[k] + t * d2[k];
    }
    return dist2(cp, cq);
}

/* Does the segment cross the triangle? (The plane crossing point inside the triangle.) */
static bool segment_crosses_triangle(const double p0[3], const double p1[3], const double a[3],
                                     const double b[3], const double c[3])
{
    double ab[3], ac[3], nrm[3], d[3], ap[3];
    sub3(b, a, ab);
    sub3(c, a, ac);
    ps_cross3(ab, ac, nrm);
    sub3(p1, p0, d);
    sub3(p0, a, ap);
    double denom = ps_dot3(nrm, d);
    if (denom == 0.0) return false; /* parallel: the edge distances decide */
    double t = -ps_dot3(nrm, ap) / denom;
    if (t < 0.0 || t > 1.0) return false;
    double x[3];
    for (int k = 0; k < 3; ++k) x[k] = p0[k] + t * d[k];
    double cr[3], xa[3], xb[3], xc[3];
    sub3(a, x, xa);
    sub3(b, x, xb);
    sub3(c, x, xc);
    ps_cross3(xa, xb, cr);
    double s0 = ps_dot3(cr, nrm);
    ps_cross3(xb, xc, cr);
    double s1 = ps_dot3(cr, nrm);
    ps_cross3(xc, xa, cr);
    double s2 = ps_dot3(cr, nrm);
    return (s0 >= 0.0 && s1 >= 0.0 && s2 >= 0.0) || (s0 <= 0.0 && s1 <= 0.0 && s2 <= 0.0);
}

double ps_segment_triangle_dist2(const double p0[3], const double p1[3], const double a[3],
                                 const double b[3], const double c[3])
{
    if (segment_crosses_triangle(p0, p1, a, b, c)) return 0.0;
    double q[3], bary[3];
    ps_closest_on_triangle(p0, a, b, c, q, bary);
    double best = dist2(p0, q);
    ps_closest_on_triangle(p1, a, b, c, q, bary);
    double d = dist2(p1, q);
    if (d < best) best = d;
    const double* v[3] = {a, b, c};
    for (int e = 0; e < 3; ++e) {
        d = segment_segment_dist2(p0, p1, v[e], v[(e + 1) % 3]);
        if (d < best) best = d;
    }
    return best;
}

/* ---- grid ---- */

void ps_grid_free(const sinew_host_api* host, ps_grid* grid)
{
    sinew_host_free(host, grid->cell_offsets);
    sinew_host_free(host, grid->items);
    memset(grid, 0, sizeof *grid);
}

static inline uint32_t grid_coord(const ps_grid* g, double x, int axis)
{
    double c = floor((x - g->origin[axis]) / g->cell);
    if (!(c > 0.0)) return 0; /* also NaN */
    if (c >= (double)(g->dims[axis] - 1u)) return g->dims[axis] - 1u;
    return (uint32_t)c;
}

sinew_result ps_grid_build(const sinew_host_api* host, const double* positions,
                           uint32_t vertex_count, const uint32_t* triangles,
                           uint32_t triangle_count, ps_grid* grid)
{
    memset(grid, 0, sizeof *grid);
    grid->positions = positions;
    grid->triangles = triangles;
    grid->triangle_count = triangle_count;
    double lo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, hi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
    double edge_sum = 0.0;
    for (uint32_t t = 0; t < triangle_count; ++t) {
        for (int k = 0; k < 3; ++k) {
            const double* p = positions + 3u * triangles[3u * t + k];
            const double* q = positions + 3u * triangles[3u * t + (k + 1) % 3];
            edge_sum += sqrt(dist2(p, q));
            for (int a = 0; a < 3; ++a) {
                if (p[a] < lo[a]) lo[a] = p[a];
                if (p[a] > hi[a]) hi[a] = p[a];
            }
        }
    }
    (void)vertex_count;
    if (triangle_count == 0) {
        for (int a = 0; a < 3; ++a) lo[a] = hi[a] = 0.0;
    }
    /* Cells about twice the mean edge: a handful of triangles per cell, few empty rings. */
    double cell = triangle_count ? 2.0 * edge_sum / (3.0 * triangle_count) : 1.0;
    double extent = 0.0;
    for (int a = 0; a < 3; ++a) extent = fmax(extent, hi[a] - lo[a]);
    if (!(cell > extent / 200.0)) cell = extent / 200.0;
    if (!(cell > 0.0)) cell = 1.0;
    grid->cell = cell;
    size_t cells = 1;
    for (int a = 0; a < 3; ++a) {
        grid->origin[a] = lo[a];
        grid->dims[a] = (uint32_t)((hi[a] - lo[a]) / cell) + 1u;
        cells *= grid->dims[a];
    }
    grid->cell_offsets = (uint32_t*)sinew_host_calloc(host, cells + 1u, sizeof(uint32_t));
    if (!grid->cell_offsets) return SINEW_ERROR_OUT_OF_MEMORY;
    /* Two passes over the triangles' bounding boxes: count, then fill. */
    for (int pass = 0; pass < 2; ++pass) {
        for (uint32_t t = 0; t < triangle_count; ++t) {
            uint32_t c0[3], c1[3];
            for (int a = 0; a < 3; ++a) {
                double mn = DBL_MAX, mx = -DBL_MAX;
                for (int k = 0; k < 3; ++k) {
                    double x = positions[3u * triangles[3u * t + k] + a];
                    mn = fmin(mn, x);
                    mx = fmax(mx, x);
                }
                c0[a] = grid_coord(grid, mn, a);
                c1[a] = grid_coord(grid, mx, a);
            }
            for (uint32_t z = c0[2]; z <= c1[2]; ++z)
                for (uint32_t y = c0[1]; y <= c1[1]; ++y)
                    for (uint32_t x = c0[0]; x <= c1[0]; ++x) {
                        size_t id = ((size_t)z * grid->dims[1] + y) * grid->dims[0] + x;
                        if (pass == 0)
                            grid->cell_offsets[id + 1]++;
                        else
                            grid->items[grid->cell_offsets[id]++] = t;
                    }
        }
        if (pass == 0) {
            for (size_t i = 0; i < cells; ++i) grid->cell_offsets[i + 1] += grid->cell_offsets[i];
            size_t total = grid->cell_offsets[cells];
            grid->items = (uint32_t*)sinew_host_calloc(host, total ? total : 1u, sizeof(uint32_t));
            if (!grid->items) {
                ps_grid_free(host, grid);
                return SINEW_ERROR_OUT_OF_MEMORY;
            }
        } else {
            /* The fill advanced every offset to the next cell's start: shift back. */
            for (size_t i = cells; i > 0; --i) grid->cell_offsets[i] = grid->cell_offsets[i - 1];
            grid->cell_offsets[0] = 0;
        }
    }
    return SINEW_OK;
}

static void grid_visit(const ps_grid* g, size_t id, const double p[3], double* best,
                       uint32_t* best_tri, double out[3], double bary[3])
{
    for (uint32_t i = g->cell_offsets[id]; i < g->cell_offsets[id + 1]; ++i) {
        uint32_t t = g->items[i];
        const uint32_t* tri = g->triangles + 3u * t;
        double q[3], b[3];
        ps_closest_on_triangle(p, g->positions + 3u * tri[0], g->positions + 3u * tri[1],
                               g->positions + 3u * tri[2], q, b);
        double d = dist2(p, q);
        if (d < *best || (d == *best && t < *best_tri)) {
            *best = d;
            *best_tri = t;
            memcpy(out, q, sizeof q);
            memcpy(bary, b, sizeof b);
        }
    }
}

uint32_t ps_grid_closest(const ps_grid* g, const double p[3], double out[3], double bary[3])
{
    if (g->triangle_count == 0) return PS_NONE;
    uint32_t c[3];
    for (int a = 0; a < 3; ++a) c[a] = grid_coord(g, p[a], a);
    uint32_t max_dim = g->dims[0];
    if (g->dims[1] > max_dim) max_dim = g->dims[1];
    if (g->dims[2] > max_dim) max_dim = g->dims[2];
    double best = DBL_MAX;
    uint32_t best_tri = PS_NONE;
    /* Rings of cells at growing Chebyshev distance r; every cell of ring r + 1 is at least
     * r cells away from p, so a candidate closer than that ends the search. */
    for (uint32_t r = 0; r <= max_dim; ++r) {
        int64_t lo[3], hi[3];
        for (int a = 0; a < 3; ++a) {
            lo[a] = (int64_t)c[a] - r;
            hi[a] = (int64_t)c[a] + r;
        }
        for (int64_t z = lo[2]; z <= hi[2]; ++z) {
            if (z < 0 || z >= g->dims[2]) continue;
            for (int64_t y = lo[1]; y <= hi[1]; ++y) {
                if (y < 0 || y >= g->dims[1]) continue;
                bool shell_yz = (z == lo[2] || z == hi[2] || y == lo[1] || y == hi[1]);
                for (int64_t x = lo[0]; x <= hi[0]; ++x) {
                    if (x < 0 || x >= g->dims[0]) continue;
                    if (!shell_yz && x != lo[0] && x != hi[0]) {
                        x = hi[0] - 1; /* skip the inside of the ring, visited earlier */
                        continue;
                    }
                    size_t id = ((size_t)z * g->dims[1] + (size_t)y) * g->dims[0] + (size_t)x;
                    grid_visit(g, id, p, &best, &best_tri, out, bary);
                }
            }
        }
        if (best_tri != PS_NONE) {
            double reach = (double)r * g->cell;
            double inside = sinew_grid_ring_reach(g->origin, g->cell, c, (double)r, p);
            if (best <= reach * reach || (inside > 0.0 && best < inside * inside)) break;
        }
    }
    return best_tri;
}
