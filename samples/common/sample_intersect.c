/* Self-intersections of a triangle mesh: an exact-in-structure triangle-triangle test built
 * from orientation predicates, and a uniform grid that proposes candidate pairs.
 * SPDX-License-Identifier: MIT
 *
 * The test: two non-coplanar triangles meet along a segment of the line where their planes
 * cross; that segment's ends lie on the boundary of one triangle or the other, so the
 * triangles intersect exactly when one of the six edges passes through the other triangle.
 * Each edge-triangle question is answered with signed volumes (the edge's ends on either side
 * of the plane, and the edge's line passing the three triangle edges on the same side), which
 * needs no division and no tolerance. Coplanar configurations drop to 2D orientation tests.
 * Arithmetic is in double on float inputs.
 */
#include "sample_metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sample_log.h"

static void sub3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[0] - b[0];
    out[1] = a[1] - b[1];
    out[2] = a[2] - b[2];
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

/* Six times the signed volume of the tetrahedron (a, b, c, d): positive when d lies on the
 * side of the plane abc that its right-handed normal points to. */
static double orient3d(const double a[3], const double b[3], const double c[3], const double d[3])
{
    double ab[3], ac[3], ad[3], n[3];
    sub3(b, a, ab);
    sub3(c, a, ac);
    sub3(d, a, ad);
    cross3(ab, ac, n);
    return dot3(n, ad);
}

static double orient2d(const double a[2], const double b[2], const double c[2])
{
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}

static int same_strict_sign(double x, double y)
{
    return (x > 0.0 && y > 0.0) || (x < 0.0 && y < 0.0);
}

/* Closed 2D segments pq and rs share a point. */
static int segments_meet_2d(const double p[2], const double q[2], const double r[2],
                            const double s[2])
{
    double o1 = orient2d(p, q, r), o2 = orient2d(p, q, s);
    double o3 = orient2d(r, s, p), o4 = orient2d(r, s, q);
    if (same_strict_sign(o1, o2) || same_strict_sign(o3, o4)) return 0;
    if (o1 == 0.0 && o2 == 0.0) {
        /* Collinear: they meet when their extents overlap on both axes. */
        for (int k = 0; k < 2; ++k) {
            double lo1 = fmin(p[k], q[k]), hi1 = fmax(p[k], q[k]);
            double lo2 = fmin(r[k], s[k]), hi2 = fmax(r[k], s[k]);
            if (hi1 < lo2 || hi2 < lo1) return 0;
        }
    }
    return 1;
}

/* Point p in the closed, non-degenerate 2D triangle abc (either winding). */
static int point_in_triangle_2d(const double p[2], const double a[2], const double b[2],
                                const double c[2])
{
    double o1 = orient2d(a, b, p), o2 = orient2d(b, c, p), o3 = orient2d(c, a, p);
    return (o1 >= 0.0 && o2 >= 0.0 && o3 >= 0.0) || (o1 <= 0.0 && o2 <= 0.0 && o3 <= 0.0);
}

/* Drops the coordinate along which the plane normal n is largest: the projection onto the
 * other two keeps the plane's configuration non-degenerate. */
static void project_2d(const double n[3], const double p[3], double out[2])
{
    double ax = fabs(n[0]), ay = fabs(n[1]), az = fabs(n[2]);
    if (ax >= ay && ax >= az) {
        out[0] = p[1];
        out[1] = p[2];
    } else if (ay >= az) {
        out[0] = p[2];
        out[1] = p[0];
    } else {
        out[0] = p[0];
        out[1] = p[1];
    }
}

/* Segment pq and triangle abc (normal n) lie in one plane: do they meet? */
static int coplanar_segment_triangle(const double n[3], const double p[3], const double q[3],
                                     const double a[3], const double b[3], const double c[3])
{
    double p2[2], q2[2], t[3][2];
    project_2d(n, p, p2);
    project_2d(n, q, q2);
    project_2d(n, a, t[0]);
    project_2d(n, b, t[1]);
    project_2d(n, c, t[2]);
    if (point_in_triangle_2d(p2, t[0], t[1], t[2])) return 1;
    for (int k = 0; k < 3; ++k) {
        if (segments_meet_2d(p2, q2, t[k], t[(k + 1) % 3])) return 1;
    }
    return 0;
}

/* Closed segment pq meets the closed, non-degenerate triangle abc with normal n. */
static int segment_meets_triangle(const double p[3], const double q[3], const double a[3],
                                  const double b[3], const double c[3], const double n[3])
{
    double ap[3], aq[3];
    sub3(p, a, ap);
    sub3(q, a, aq);
    double sp = dot3(n, ap), sq = dot3(n, aq);
    if (same_strict_sign(sp, sq)) return 0;
    if (sp == 0.0 && sq == 0.0) return coplanar_segment_triangle(n, p, q, a, b, c);
    /* The segment crosses (or touches) the plane; the crossing point lies inside the
     * triangle when the line pq passes each triangle edge with the same handedness. */
    double u = orient3d(p, q, a, b), v = orient3d(p, q, b, c), w = orient3d(p, q, c, a);
    return (u >= 0.0 && v >= 0.0 && w >= 0.0) || (u <= 0.0 && v <= 0.0 && w <= 0.0);
}

static int coplanar_triangles_meet(const double n[3], const double* a[3], const double* b[3])
{
    double a2[3][2], b2[3][2];
    for (int k = 0; k < 3; ++k) {
        project_2d(n, a[k], a2[k]);
        project_2d(n, b[k], b2[k]);
    }
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            if (segments_meet_2d(a2[i], a2[(i + 1) % 3], b2[j], b2[(j + 1) % 3])) return 1;
        }
    }
    /* No edges cross: one triangle holds the other entirely, or they are apart. */
    return point_in_triangle_2d(a2[0], b2[0], b2[1], b2[2]) ||
           point_in_triangle_2d(b2[0], a2[0], a2[1], a2[2]);
}

static int any_edge_meets(const double* edge_tri[3], const double* tri[3], const double n[3])
{
    for (int k = 0; k < 3; ++k) {
        if (segment_meets_triangle(edge_tri[k], edge_tri[(k + 1) % 3], tri[0], tri[1], tri[2], n)) {
            return 1;
        }
    }
    return 0;
}

int sample_triangles_intersect(const double a0[3], const double a1[3], const double a2[3],
                               const double b0[3], const double b1[3], const double b2[3])
{
    const double* a[3] = { a0, a1, a2 };
    const double* b[3] = { b0, b1, b2 };
    double e1[3], e2[3], na[3], nb[3];
    sub3(a1, a0, e1);
    sub3(a2, a0, e2);
    cross3(e1, e2, na);
    sub3(b1, b0, e1);
    sub3(b2, b0, e2);
    cross3(e1, e2, nb);
    int a_flat = na[0] == 0.0 && na[1] == 0.0 && na[2] == 0.0;
    int b_flat = nb[0] == 0.0 && nb[1] == 0.0 && nb[2] == 0.0;
    /* A zero-area triangle is the segment spanned by its corners, which its longest edge
     * covers; testing all three edges covers it too. Two of them are left alone: a mesh
     * whose triangles collapse has its trouble counted by the stretch figures. */
    if (a_flat && b_flat) return 0;
    if (a_flat) return any_edge_meets(a, b, nb);
    if (b_flat) return any_edge_meets(b, a, na);

    double db[3], da[3];
    for (int k = 0; k < 3; ++k) {
        double d[3];
        sub3(b[k], a0, d);
        db[k] = dot3(na, d);
    }
    if ((db[0] > 0.0 && db[1] > 0.0 && db[2] > 0.0) || (db[0] < 0.0 && db[1] < 0.0 && db[2] < 0.0)) {
        return 0;
    }
    if (db[0] == 0.0 && db[1] == 0.0 && db[2] == 0.0) return coplanar_triangles_meet(na, a, b);
    for (int k = 0; k < 3; ++k) {
        double d[3];
        sub3(a[k], b0, d);
        da[k] = dot3(nb, d);
    }
    if ((da[0] > 0.0 && da[1] > 0.0 && da[2] > 0.0) || (da[0] < 0.0 && da[1] < 0.0 && da[2] < 0.0)) {
        return 0;
    }
    return any_edge_meets(a, b, nb) || any_edge_meets(b, a, na);
}

/* ------------------------------------------------------------------------------------------ */
/* Candidate pairs from a sparse uniform grid                                                  */
/* ------------------------------------------------------------------------------------------ */

/* The grid is sparse: only occupied cells exist, as (cell, triangle) entries sorted by cell.
 * Its cell size is twice the median triangle extent (about 2.5 cells per triangle; smaller
 * cells cost more in sorting than they save in pairs), so a mesh that partly flew apart
 * (exactly what a quality run must survive) neither crowds its good part into one cell nor
 * allocates the empty space in between. Triangles spanning more than BIG_CELLS cells
 * (needles towards a far vertex) skip the grid and are tested against every triangle whose
 * box they overlap: linear in the mesh per needle, which only an exploded mesh has many of. */
enum { BIG_CELLS = 64 };

typedef struct grid_entry {
    int64_t cell[3];
    uint32_t triangle;
} grid_entry;

static int compare_entries(const void* a, const void* b)
{
    const grid_entry* x = (const grid_entry*)a;
    const grid_entry* y = (const grid_entry*)b;
    for (int k = 0; k < 3; ++k) {
        if (x->cell[k] != y->cell[k]) return (x->cell[k] > y->cell[k]) - (x->cell[k] < y->cell[k]);
    }
    return (x->triangle > y->triangle) - (x->triangle < y->triangle);
}

static int compare_doubles(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static int shares_vertex(const uint32_t* s, const uint32_t* t)
{
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            if (s[i] == t[j]) return 1;
        }
    }
    return 0;
}

static int boxes_overlap(const double* a, const double* b)
{
    for (int k = 0; k < 3; ++k) {
        if (a[3 + k] < b[k] || b[3 + k] < a[k]) return 0;
    }
    return 1;
}

/* Decides one candidate pair: no shared vertex, and the exact test. */
static int pair_intersects(const sample_topology* topology, const float* positions, uint32_t s,
                           uint32_t t)
{
    const uint32_t* ts = topology->triangles + 3 * (size_t)s;
    const uint32_t* tt = topology->triangles + 3 * (size_t)t;
    if (shares_vertex(ts, tt)) return 0;
    double p[6][3];
    for (int v = 0; v < 3; ++v) {
        for (int k = 0; k < 3; ++k) {
            p[v][k] = positions[3 * (size_t)ts[v] + (size_t)k];
            p[3 + v][k] = positions[3 * (size_t)tt[v] + (size_t)k];
        }
    }
    return sample_triangles_intersect(p[0], p[1], p[2], p[3], p[4], p[5]);
}

/* Cell coordinate of x; the caller has checked |x| / cell fits comfortably in an int64. */
static int64_t cell_of(double x, double inverse_cell)
{
    return (int64_t)floor(x * inverse_cell);
}

uint32_t sample_count_self_intersections(const sample_topology* topology,
                                         const float* positions)
{
    if (!topology || !positions || topology->triangle_count == 0) return 0;
    const uint32_t n = topology->triangle_count;
    double* box = malloc(sizeof *box * 6 * (size_t)n);       /* lo xyz, hi xyz */
    double* extent = malloc(sizeof *extent * (size_t)n);
    uint32_t* live = malloc(sizeof *live * (size_t)n);
    uint32_t* big = malloc(sizeof *big * (size_t)n);
    if (!box || !extent || !live || !big) {
        free(box); free(extent); free(live); free(big);
        sample_fail(SINEW_ERROR_OUT_OF_MEMORY, "self-intersections: out of memory for %u triangles", n);
        return UINT32_MAX;
    }

    /* Boxes of the triangles with finite corners. */
    uint32_t live_count = 0;
    for (uint32_t t = 0; t < n; ++t) {
        double* b = box + 6 * (size_t)t;
        int finite = 1;
        for (int k = 0; k < 3; ++k) {
            b[k] = INFINITY;
            b[3 + k] = -INFINITY;
        }
        for (int v = 0; v < 3; ++v) {
            const float* p = positions + 3 * (size_t)topology->triangles[3 * (size_t)t + (size_t)v];
            for (int k = 0; k < 3; ++k) {
                if (!isfinite(p[k])) finite = 0;
                if (p[k] < b[k]) b[k] = p[k];
                if (p[k] > b[3 + k]) b[3 + k] = p[k];
            }
        }
        if (!finite) continue;
        extent[live_count] = fmax(b[3] - b[0], fmax(b[4] - b[1], b[5] - b[2]));
        live[live_count++] = t;
    }
    if (live_count < 2) {
        free(box); free(extent); free(live); free(big);
        return 0;
    }
    qsort(extent, live_count, sizeof *extent, compare_doubles);
    double cell = 2.0 * extent[live_count / 2];
    if (!(cell > 0.0)) cell = extent[live_count - 1] > 0.0 ? extent[live_count - 1] : 1.0;
    free(extent);
    const double inverse_cell = 1.0 / cell;
    const double coordinate_limit = 1.0e15;   /* cells per axis that an int64 holds easily */

    /* Count the entries, separating the big triangles. */
    size_t entry_count = 0;
    uint32_t big_count = 0;
    for (uint32_t i = 0; i < live_count; ++i) {
        const double* b = box + 6 * (size_t)live[i];
        double cells = 1.0;
        for (int k = 0; k < 3; ++k) {
            double lo = b[k] * inverse_cell, hi = b[3 + k] * inverse_cell;
            if (fabs(lo) > coordinate_limit || fabs(hi) > coordinate_limit) cells = INFINITY;
            else cells *= floor(hi) - floor(lo) + 1.0;
        }
        if (cells > BIG_CELLS) big[big_count++] = live[i];
        else entry_count += (size_t)cells;
    }
    grid_entry* entries = malloc(sizeof *entries * (entry_count ? entry_count : 1));
    if (!entries) {
        free(box); free(live); free(big);
        sample_fail(SINEW_ERROR_OUT_OF_MEMORY, "self-intersections: out of memory for %zu grid entries",
                    entry_count);
        return UINT32_MAX;
    }
    size_t e = 0;
    uint32_t next_big = 0;
    for (uint32_t i = 0; i < live_count; ++i) {
        if (next_big < big_count && big[next_big] == live[i]) {
            ++next_big;   /* both lists ascend: big is a subsequence of live */
            continue;
        }
        const double* b = box + 6 * (size_t)live[i];
        int64_t c0[3], c1[3], c[3];
        for (int k = 0; k < 3; ++k) {
            c0[k] = cell_of(b[k], inverse_cell);
            c1[k] = cell_of(b[3 + k], inverse_cell);
        }
        for (c[2] = c0[2]; c[2] <= c1[2]; ++c[2])
            for (c[1] = c0[1]; c[1] <= c1[1]; ++c[1])
                for (c[0] = c0[0]; c[0] <= c1[0]; ++c[0]) {
                    memcpy(entries[e].cell, c, sizeof c);
                    entries[e].triangle = live[i];
                    ++e;
                }
    }
    qsort(entries, entry_count, sizeof *entries, compare_entries);

    uint32_t count = 0;
    for (size_t first = 0; first < entry_count;) {
        size_t end = first + 1;
        while (end < entry_count && memcmp(entries[end].cell, entries[first].cell,
                                           sizeof entries[first].cell) == 0) {
            ++end;
        }
        const int64_t* here = entries[first].cell;
        for (size_t i = first; i < end; ++i) {
            const uint32_t s = entries[i].triangle;
            const double* bs = box + 6 * (size_t)s;
            for (size_t j = i + 1; j < end; ++j) {
                const uint32_t t = entries[j].triangle;
                const double* bt = box + 6 * (size_t)t;
                if (!boxes_overlap(bs, bt)) continue;
                /* A pair shares several cells; only the cell holding the low corner of the
                 * overlap of their boxes tests it, so each pair counts once. */
                int owner = 1;
                for (int k = 0; k < 3; ++k) {
                    if (cell_of(fmax(bs[k], bt[k]), inverse_cell) != here[k]) owner = 0;
                }
                if (owner && pair_intersects(topology, positions, s, t)) ++count;
            }
        }
        first = end;
    }
    free(entries);

    /* Big triangles against every live triangle; a pair of two big ones counts once. */
    for (uint32_t i = 0; i < big_count; ++i) {
        const uint32_t s = big[i];
        const double* bs = box + 6 * (size_t)s;
        uint32_t other_big = 0;
        for (uint32_t j = 0; j < live_count; ++j) {
            const uint32_t t = live[j];
            while (other_big < big_count && big[other_big] < t) ++other_big;
            const int t_is_big = other_big < big_count && big[other_big] == t;
            if (t == s || (t_is_big && t < s)) continue;
            if (boxes_overlap(bs, box + 6 * (size_t)t) && pair_intersects(topology, positions, s, t)) {
                ++count;
            }
        }
    }
    free(box);
    free(live);
    free(big);
    return count;
}
