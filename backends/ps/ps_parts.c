/* Parts of the skin that no bone reaches: a connected part of the simulated surface none of
 * whose foot points (Sec. 3.2) lies within the part's own bounding box has no bone inside it
 * (a loose accessory, a mesh part placed away from the skeleton). Shrinking it toward a bone
 * outside would stretch its prisms across the gap, so it follows the bone nearest to its
 * centre rigidly instead: its base points stay on its skin, its tets are degenerate and left
 * out, and its vertices are anchored to that bone like any vertex no tet holds.
 * SPDX-License-Identifier: MIT */
#include "ps_internal.h"

#include <math.h>
#include <string.h>

static uint32_t find(uint32_t* parent, uint32_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

void ps_skin_parts(const ps_model* m, uint32_t* part)
{
    for (uint32_t i = 0; i < m->n; ++i) part[i] = i;
    for (uint32_t t = 0; t < m->triangle_count; ++t) {
        const uint32_t* q = m->triangles + 3u * t;
        for (int k = 1; k < 3; ++k) {
            uint32_t a = find(part, q[0]), b = find(part, q[k]);
            if (a != b) part[a < b ? b : a] = a < b ? a : b;
        }
    }
    for (uint32_t i = 0; i < m->n; ++i) part[i] = find(part, i);
}

static double segment_distance2(const double p[3], const double a[3], const double b[3])
{
    double d[3], e[3], dd = 0.0, t = 0.0;
    for (int k = 0; k < 3; ++k) {
        d[k] = b[k] - a[k];
        e[k] = p[k] - a[k];
        dd += d[k] * d[k];
        t += d[k] * e[k];
    }
    t = dd > 0.0 ? fmin(fmax(t / dd, 0.0), 1.0) : 0.0;
    double s = 0.0;
    for (int k = 0; k < 3; ++k) s += (e[k] - t * d[k]) * (e[k] - t * d[k]);
    return s;
}

/* The bone whose segment lies nearest to p. */
static uint32_t nearest_bone(const ps_model* m, const double p[3])
{
    uint32_t best = 0;
    double bd = -1.0;
    for (uint32_t b = 0; b < m->bone_count; ++b) {
        double a[3], c[3];
        for (int k = 0; k < 3; ++k) {
            a[k] = m->joint_rest[16u * m->bones[b].joint + 12u + (uint32_t)k];
            c[k] = m->joint_rest[16u * m->bones[b].child + 12u + (uint32_t)k];
        }
        double d = segment_distance2(p, a, c);
        if (bd < 0.0 || d < bd) bd = d, best = b;
    }
    return best;
}

/* Per part (indexed by its root): its bounding box, grown by a thousandth of the skin's
 * diagonal, whether it has a triangle, and whether a foot point of its own lies in the box. */
typedef struct part_boxes {
    double* box;        /* 6 per vertex: lo, hi (used at roots) */
    uint8_t* triangle;  /* per vertex */
    uint8_t* reached;   /* per vertex */
} part_boxes;

static void measure_parts(const ps_model* m, const uint32_t* part, const double* foot,
                          part_boxes* b)
{
    for (uint32_t i = 0; i < m->n; ++i)
        for (int k = 0; k < 3; ++k) b->box[6u * i + k] = INFINITY, b->box[6u * i + 3 + k] = -INFINITY;
    for (uint32_t i = 0; i < m->n; ++i) {
        double* box = b->box + 6u * part[i];
        for (int k = 0; k < 3; ++k) {
            box[k] = fmin(box[k], m->rest[3u * i + k]);
            box[3 + k] = fmax(box[3 + k], m->rest[3u * i + k]);
        }
    }
    for (uint32_t t = 0; t < m->triangle_count; ++t) b->triangle[part[m->triangles[3u * t]]] = 1;
    double grow = 1e-3 * m->diagonal;
    for (uint32_t i = 0; i < m->n; ++i) {
        const double* box = b->box + 6u * part[i];
        const double* f = foot + 3u * i;
        int in = 1;
        for (int k = 0; k < 3; ++k) in &= f[k] >= box[k] - grow && f[k] <= box[3 + k] + grow;
        if (in) b->reached[part[i]] = 1;
    }
}

/* Pins the vertices of part `root` to `bone`: base = skin, both anchored to that bone. */
static uint32_t pin_part(ps_model* m, const uint32_t* part, uint32_t root, uint32_t bone)
{
    uint32_t count = 0;
    for (uint32_t i = 0; i < m->n; ++i) {
        if (part[i] != root) continue;
        memcpy(m->rest + 3u * ((size_t)m->n + i), m->rest + 3u * i, 3u * sizeof(double));
        m->vertex_bone[i] = m->vertex_bone[m->n + i] = bone;
        ++count;
    }
    return count;
}

sinew_result ps_pin_unreached_parts(const sinew_host_api* host, ps_model* m, const double* foot)
{
    if (m->bone_count == 0 || m->n == 0) return SINEW_OK;
    uint32_t* part = (uint32_t*)sinew_host_calloc(host, m->n, sizeof(uint32_t));
    part_boxes b;
    b.box = (double*)sinew_host_calloc(host, m->n, 6u * sizeof(double));
    b.triangle = (uint8_t*)sinew_host_calloc(host, m->n, 1u);
    b.reached = (uint8_t*)sinew_host_calloc(host, m->n, 1u);
    sinew_result r = SINEW_OK;
    uint32_t parts = 0, vertices = 0;
    if (!part || !b.box || !b.triangle || !b.reached) {
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
    } else {
        ps_skin_parts(m, part);
        measure_parts(m, part, foot, &b);
        for (uint32_t i = 0; i < m->n; ++i) {
            if (part[i] != i || !b.triangle[i] || b.reached[i]) continue;
            const double* box = b.box + 6u * i;
            double centre[3] = {0.5 * (box[0] + box[3]), 0.5 * (box[1] + box[4]),
                                0.5 * (box[2] + box[5])};
            vertices += pin_part(m, part, i, nearest_bone(m, centre));
            ++parts;
        }
    }
    sinew_host_free(host, part);
    sinew_host_free(host, b.box);
    sinew_host_free(host, b.triangle);
    sinew_host_free(host, b.reached);
    if (parts)
        sinew_host_log(host, SINEW_LOG_WARNING,
                       "ps: %u part(s) of the skin (%u vertices) have no bone inside; each follows "
                       "the bone nearest to its centre rigidly", parts, vertices);
    return r;
}
