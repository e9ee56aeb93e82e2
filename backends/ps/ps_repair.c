/* The repair of the shrunken skin: projective skinning Sec. 3.2 moves each skin vertex toward
 * its foot point until it meets the volumetric skeleton, which promises nothing about the tets
 * of Sec. 3.3 (Sec. 7 admits tets outside the body). Where a prism has a tet below
 * PS_POOR_QUALITY, the base vertices of its corners are moved, one at a time, to the best of a
 * few candidates: less or more deep along their shrinking direction (never deeper than the
 * skeleton), and that direction turned toward the inward vertex normal. A vertex takes the
 * candidate that gives the best worst tet around it, and among those that pass with a margin
 * the one closest to where the shrinking put it. SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>

#include "ps_internal.h"

/* A vertex's tets count as good from this quality on (a margin above PS_POOR_QUALITY, since
 * neighbours move later). */
#define PS_REPAIR_GOOD (1.5 * PS_POOR_QUALITY)
#define PS_REPAIR_ROUNDS 100u
/* Offsets (base minus skin) stay between these fractions of the vertex's mean edge length and
 * of its distance to its foot point on the skeleton line. */
#define PS_REPAIR_MIN_EDGE 0.05
#define PS_REPAIR_MAX_FOOT 0.95
static const double scale_steps[] = {0.6, 0.8, 1.25, 1.6};
#define PS_REPAIR_TURN 0.3

typedef struct repair_ctx {
    const sinew_host_api* host;
    ps_model* m;
    uint8_t* base_below;      /* per prism: its orientation from the shrinking */
    uint8_t* order;           /* per prism: its split */
    uint32_t* vp_offsets;     /* prisms around each vertex (compressed rows) */
    uint32_t* vp;
    double* origin;           /* per vertex: the shrinking's base point */
    double* normal;           /* per vertex: unit inward normal (0 where undefined) */
    double* min_len;          /* per vertex: shortest and longest offset allowed */
    double* max_len;
} repair_ctx;

static double prism_quality(const repair_ctx* c, uint32_t p)
{
    return ps_prism_quality(c->m, p, c->base_below[p] != 0, c->order[p]);
}

/* The worst tet quality of the prisms around vertex i. */
static double vertex_quality(const repair_ctx* c, uint32_t i)
{
    double worst = INFINITY;
    for (uint32_t e = c->vp_offsets[i]; e < c->vp_offsets[i + 1]; ++e)
        worst = fmin(worst, prism_quality(c, c->vp[e]));
    return worst;
}

static double* base_of(const repair_ctx* c, uint32_t i)
{
    return c->m->rest + 3u * ((size_t)c->m->n + i);
}

/* Candidate k for base vertex i, as an offset from its skin vertex (`cur` is the current
 * one): the offset scaled, turned toward the inward normal, the mean of the neighbours'
 * offsets (Laplacian smoothing of the base) or half of it, and the shrinking's own. Its
 * length is then clamped to the vertex's bounds. False when k is past the last candidate. */
static bool candidate(const repair_ctx* c, uint32_t i, uint32_t k, const double cur[3],
                      double out[3])
{
    const double* x = c->m->rest + 3u * i;
    const uint32_t nscale = (uint32_t)(sizeof scale_steps / sizeof scale_steps[0]);
    double len = sqrt(cur[0] * cur[0] + cur[1] * cur[1] + cur[2] * cur[2]);
    if (k < nscale) {
        for (int q = 0; q < 3; ++q) out[q] = scale_steps[k] * cur[q];
    } else if (k == nscale) {
        for (int q = 0; q < 3; ++q) out[q] = cur[q] + PS_REPAIR_TURN * len * c->normal[3u * i + q];
    } else if (k == nscale + 1u || k == nscale + 2u) {
        double mean[3] = {0.0, 0.0, 0.0}, count = 0.0;
        for (uint32_t e = c->vp_offsets[i]; e < c->vp_offsets[i + 1]; ++e)
            for (int v = 0; v < 3; ++v) {
                uint32_t j = c->m->triangles[3u * c->vp[e] + v];
                if (j == i) continue;
                const double* b = base_of(c, j);
                const double* y = c->m->rest + 3u * j;
                for (int q = 0; q < 3; ++q) mean[q] += b[q] - y[q];
                count += 1.0;
            }
        if (count == 0.0) return true;
        double f = k == nscale + 1u ? 1.0 : 0.5;
        for (int q = 0; q < 3; ++q) out[q] = (1.0 - f) * cur[q] + f * mean[q] / count;
    } else if (k == nscale + 3u) {
        for (int q = 0; q < 3; ++q) out[q] = c->origin[3u * i + q] - x[q];
    } else {
        return false;
    }
    double l = sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2]);
    double clamped = fmin(c->max_len[i], fmax(c->min_len[i], l));
    for (int q = 0; q < 3; ++q) out[q] = l > 0.0 ? out[q] * clamped / l : cur[q];
    return true;
}

/* Moves base vertex i to its best candidate; returns whether it moved. */
static bool improve_vertex(repair_ctx* c, uint32_t i)
{
    const double* x = c->m->rest + 3u * i;
    double* b = base_of(c, i);
    double start[3] = {b[0], b[1], b[2]}, cur[3] = {b[0] - x[0], b[1] - x[1], b[2] - x[2]};
    double best[3] = {b[0], b[1], b[2]};
    double best_q = fmin(vertex_quality(c, i), PS_REPAIR_GOOD);
    double best_d2 = 0.0;
    for (int q = 0; q < 3; ++q) best_d2 += (b[q] - c->origin[3u * i + q]) * (b[q] - c->origin[3u * i + q]);
    double off[3];
    for (uint32_t k = 0; candidate(c, i, k, cur, off); ++k) {
        for (int q = 0; q < 3; ++q) b[q] = x[q] + off[q];
        double quality = fmin(vertex_quality(c, i), PS_REPAIR_GOOD);
        double d2 = 0.0;
        for (int q = 0; q < 3; ++q) d2 += (b[q] - c->origin[3u * i + q]) * (b[q] - c->origin[3u * i + q]);
        /* Better, or as good and closer to the shrinking's own base point. */
        if (quality > best_q || (quality == best_q && d2 < best_d2)) {
            best_q = quality;
            best_d2 = d2;
            memcpy(best, b, sizeof best);
        }
    }
    memcpy(b, best, sizeof best);
    return memcmp(best, start, sizeof best) != 0;
}

/* The prisms' orientations, the inward normals and the offset bounds from the shrinking. */
static void repair_init(repair_ctx* c)
{
    ps_model* m = c->m;
    uint32_t n = m->n;
    double* edge_sum = c->max_len; /* scratch until the bounds are set */
    for (uint32_t p = 0; p < m->triangle_count; ++p) {
        const uint32_t* v = m->triangles + 3u * p;
        const double* x0 = m->rest + 3u * v[0];
        const double* x1 = m->rest + 3u * v[1];
        const double* x2 = m->rest + 3u * v[2];
        double e1[3] = {x1[0] - x0[0], x1[1] - x0[1], x1[2] - x0[2]};
        double e2[3] = {x2[0] - x0[0], x2[1] - x0[1], x2[2] - x0[2]};
        double f[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                       e1[0] * e2[1] - e1[1] * e2[0]};
        double sign = c->base_below[p] ? -1.0 : 1.0; /* toward the base */
        for (int k = 0; k < 3; ++k) {
            for (int q = 0; q < 3; ++q) c->normal[3u * v[k] + q] += sign * f[q];
            const double* a = m->rest + 3u * v[k];
            const double* b = m->rest + 3u * v[(k + 1) % 3];
            double l = sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                            (a[2] - b[2]) * (a[2] - b[2]));
            edge_sum[v[k]] += 0.5 * l;
            edge_sum[v[(k + 1) % 3]] += 0.5 * l;
            c->vp_offsets[v[k] + 1]++;
        }
    }
    for (uint32_t i = 0; i < n; ++i) {
        c->vp_offsets[i + 1] += c->vp_offsets[i];
        const double* x = m->rest + 3u * i;
        const double* b = m->rest + 3u * ((size_t)n + i);
        double n2 = 0.0, l2 = 0.0, f2 = 0.0;
        for (int k = 0; k < 3; ++k) {
            c->origin[3u * i + k] = b[k];
            n2 += c->normal[3u * i + k] * c->normal[3u * i + k];
            l2 += (b[k] - x[k]) * (b[k] - x[k]);
            if (m->foot) f2 += (m->foot[3u * i + k] - x[k]) * (m->foot[3u * i + k] - x[k]);
        }
        for (int k = 0; k < 3; ++k)
            c->normal[3u * i + k] = n2 > 0.0 ? c->normal[3u * i + k] / sqrt(n2) : 0.0;
        uint32_t deg = c->vp_offsets[i + 1] - c->vp_offsets[i];
        double mean_edge = deg ? edge_sum[i] / deg : 0.0;
        c->max_len[i] = fmax(sqrt(l2), PS_REPAIR_MAX_FOOT * sqrt(f2));
        c->min_len[i] = fmin(PS_REPAIR_MIN_EDGE * mean_edge, c->max_len[i]);
    }
}

static uint32_t count_failing(const repair_ctx* c)
{
    uint32_t failing = 0;
    for (uint32_t p = 0; p < c->m->triangle_count; ++p)
        failing += prism_quality(c, p) < PS_POOR_QUALITY;
    return failing;
}

/* Rounds until no prism fails or nothing changes: the corners of failing prisms moved, then
 * the splits of failing prisms improved. */
static sinew_result repair_rounds(repair_ctx* c, uint32_t* rounds, uint32_t* failing)
{
    ps_model* m = c->m;
    uint32_t tc = m->triangle_count;
    sinew_result r = ps_split_choose(c->host, m, c->base_below, c->order);
    for (*rounds = 0; r == SINEW_OK && *rounds < PS_REPAIR_ROUNDS; ++*rounds) {
        if ((*failing = count_failing(c)) == 0) break;
        bool moved = false;
        for (uint32_t p = 0; p < tc; ++p) {
            if (prism_quality(c, p) >= PS_POOR_QUALITY) continue;
            for (int k = 0; k < 3; ++k) moved |= improve_vertex(c, m->triangles[3u * p + k]);
        }
        memcpy(c->order + tc, c->order, tc);
        r = ps_split_improve(c->host, m, c->base_below, c->order);
        if (!moved && memcmp(c->order + tc, c->order, tc) == 0) break;
    }
    *failing = count_failing(c);
    return r;
}

sinew_result ps_shrink_repair(const sinew_host_api* host, ps_model* m)
{
    uint32_t n = m->n, tc = m->triangle_count;
    repair_ctx c;
    memset(&c, 0, sizeof c);
    c.host = host;
    c.m = m;
    c.base_below = (uint8_t*)sinew_host_calloc(host, tc ? 3u * (size_t)tc : 1u, 1u);
    c.order = c.base_below + tc;
    c.vp_offsets = (uint32_t*)sinew_host_calloc(host, n + 1u, sizeof(uint32_t));
    c.vp = (uint32_t*)sinew_host_calloc(host, tc ? 3u * (size_t)tc : 1u, sizeof(uint32_t));
    c.origin = (double*)sinew_host_calloc(host, n ? n : 1u, 3u * sizeof(double));
    c.normal = (double*)sinew_host_calloc(host, n ? n : 1u, 3u * sizeof(double));
    c.min_len = (double*)sinew_host_calloc(host, n ? n : 1u, sizeof(double));
    c.max_len = (double*)sinew_host_calloc(host, n ? n : 1u, sizeof(double));
    uint32_t* cursor = (uint32_t*)sinew_host_calloc(host, n + 1u, sizeof(uint32_t));
    sinew_result r = SINEW_OK;
    if (!c.base_below || !c.vp_offsets || !c.vp || !c.origin || !c.normal || !c.min_len ||
        !c.max_len || !cursor) {
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory repairing the "
                            "tissue of %u vertices", n);
        goto done;
    }
    r = ps_prism_orient(host, m, c.base_below);
    if (r != SINEW_OK) goto done;
    repair_init(&c);
    memcpy(cursor, c.vp_offsets, (n + 1u) * sizeof(uint32_t));
    for (uint32_t p = 0; p < tc; ++p)
        for (int k = 0; k < 3; ++k) c.vp[cursor[m->triangles[3u * p + k]]++] = p;
    uint32_t rounds = 0, failing = 0;
    r = repair_rounds(&c, &rounds, &failing);
    if (r != SINEW_OK) goto done;
    uint32_t moved = 0;
    for (uint32_t i = 0; i < n; ++i)
        moved += memcmp(c.origin + 3u * i, m->rest + 3u * ((size_t)n + i), 3u * sizeof(double)) != 0;
    if (moved)
        sinew_host_log(host, SINEW_LOG_INFO,
                       "ps: tissue repair: %u of %u base vertices moved in %u rounds; %u prisms "
                       "still have a tet below quality %g", moved, n, rounds, failing,
                       PS_POOR_QUALITY);
done:
    sinew_host_free(host, c.base_below);
    sinew_host_free(host, c.vp_offsets);
    sinew_host_free(host, c.vp);
    sinew_host_free(host, c.origin);
    sinew_host_free(host, c.normal);
    sinew_host_free(host, c.min_len);
    sinew_host_free(host, c.max_len);
    sinew_host_free(host, cursor);
    return r;
}
