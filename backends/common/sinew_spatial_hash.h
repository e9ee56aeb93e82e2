/* A spatial hash of axis-aligned boxes (Teschner et al. 2003, "Optimized Spatial Hashing for
 * Collision Detection of Deformable Objects", as fast projective skinning uses it for its
 * point-in-tetrahedron tests, Komaritzan and Botsch 2019 Sec. 6), rebuilt every step in O(n).
 * SPDX-License-Identifier: MIT
 *
 * Space is cut into cubes of edge `cell` (about the mesh's mean edge length); cube (i, j, k)
 * hashes to bucket ((i * 73856093) ^ (j * 19349663) ^ (k * 83492791)) & (table_size - 1).
 * Every box is listed in the buckets of all cubes it overlaps; a box that overlaps more than
 * `max_cells` cubes (a tet torn apart by a broken simulation) goes to a short list of large
 * boxes that every query checks instead, so no input makes the build blow up. Boxes with a
 * non-finite corner are left out (they contain no point).
 *
 * Layout (flat arrays, no pointers to pointers, so that the CUDA plugin builds and reads the
 * same structure, one thread per box or per query):
 * - boxes: six doubles per box, lo x, lo y, lo z, hi x, hi y, hi z: component k of box b at
 *   boxes[6 b + k] (one cache line per box, as queries read boxes at random);
 * - bucket_start (table_size + 1) and entries: the box indices of bucket q are
 *   entries[bucket_start[q] .. bucket_start[q + 1] - 1], increasing (a counting sort over the
 *   boxes in order), so queries are deterministic;
 * - large: the large boxes, increasing.
 * Two cubes of one box may share a bucket, so a bucket can list a box twice; the query
 * functions report each box once. */
#ifndef SINEW_COMMON_SPATIAL_HASH_H
#define SINEW_COMMON_SPATIAL_HASH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "sinew_hd.h"

/* Cube coordinates are clamped to +-2^30 so that far-away (exploded) geometry cannot
 * overflow them; it then shares the border cubes, which stays correct, only slower. */
#define SINEW_SPATIAL_HASH_COORD_LIMIT 1073741824.0

/* The read-only view a query needs (CPU or device). */
typedef struct sinew_spatial_hash_view {
    double inv_cell;             /* 1 / cube edge */
    uint32_t table_mask;         /* table_size - 1, table_size a power of two */
    const double* boxes;         /* 6 per box, see the top of this file */
    const uint32_t* bucket_start;
    const uint32_t* entries;
    const uint32_t* large;
    uint32_t large_count;
} sinew_spatial_hash_view;

/* The cube coordinate of one position coordinate. NaN maps to 0 (callers reject non-finite
 * boxes and points before). */
static inline SINEW_HD int32_t sinew_spatial_hash_coord(double v, double inv_cell)
{
    double c = floor(v * inv_cell);
    if (!(c > -SINEW_SPATIAL_HASH_COORD_LIMIT)) c = c != c ? 0.0 : -SINEW_SPATIAL_HASH_COORD_LIMIT;
    if (c > SINEW_SPATIAL_HASH_COORD_LIMIT) c = SINEW_SPATIAL_HASH_COORD_LIMIT;
    return (int32_t)c;
}

static inline SINEW_HD uint32_t sinew_spatial_hash_bucket(int32_t i, int32_t j, int32_t k,
                                                          uint32_t table_mask)
{
    uint32_t h = ((uint32_t)i * 73856093u) ^ ((uint32_t)j * 19349663u) ^ ((uint32_t)k * 83492791u);
    return h & table_mask;
}

/* The cube range lo[c] .. hi[c] (inclusive) of box b and the number of cubes it spans;
 * 0 for a box with a non-finite or inverted extent (it is left out). */
static inline SINEW_HD uint64_t sinew_spatial_hash_box_cells(const double* boxes, uint32_t b,
                                                             double inv_cell, int32_t lo[3],
                                                             int32_t hi[3])
{
    uint64_t count = 1;
    const double* box = boxes + 6u * (size_t)b;
    for (int c = 0; c < 3; ++c) {
        double a = box[c], e = box[c + 3];
        if (!(a <= e) || !isfinite(a) || !isfinite(e)) return 0;
        lo[c] = sinew_spatial_hash_coord(a, inv_cell);
        hi[c] = sinew_spatial_hash_coord(e, inv_cell);
        count *= (uint64_t)((int64_t)hi[c] - (int64_t)lo[c] + 1);
    }
    return count;
}

/* Whether box b contains point p (closed box). */
static inline SINEW_HD int sinew_spatial_hash_contains(const double* boxes, uint32_t b,
                                                       const double p[3])
{
    const double* box = boxes + 6u * (size_t)b;
    return p[0] >= box[0] && p[0] <= box[3] && p[1] >= box[1] && p[1] <= box[4] &&
           p[2] >= box[2] && p[2] <= box[5];
}

/* Allocates nothing: writes the boxes that contain p, each once, in
 * increasing order of their first appearance (bucket entries, then large boxes) to out (room
 * for cap) and returns how many there are, which may exceed cap (then only cap were written).
 * A non-finite p gives 0. */
static inline SINEW_HD uint32_t sinew_spatial_hash_query_point(const sinew_spatial_hash_view* h,
                                                               const double p[3], uint32_t* out,
                                                               uint32_t cap)
{
    if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) return 0;
    uint32_t found = 0;
    uint32_t q = sinew_spatial_hash_bucket(sinew_spatial_hash_coord(p[0], h->inv_cell),
                                           sinew_spatial_hash_coord(p[1], h->inv_cell),
                                           sinew_spatial_hash_coord(p[2], h->inv_cell),
                                           h->table_mask);
    /* an empty hash (nothing built, or a failed build) has no buckets */
    uint32_t e_begin = h->bucket_start ? h->bucket_start[q] : 0u;
    uint32_t e_end = h->bucket_start ? h->bucket_start[q + 1] : 0u;
    for (uint32_t e = e_begin; e < e_end; ++e) {
        uint32_t b = h->entries[e];
        /* Entries are increasing, so a repeat of b (two of its cubes in this bucket) follows
         * it directly. */
        if (e > e_begin && h->entries[e - 1] == b) continue;
        if (!sinew_spatial_hash_contains(h->boxes, b, p)) continue;
        if (found < cap) out[found] = b;
        ++found;
    }
    for (uint32_t e = 0; e < h->large_count; ++e) {
        uint32_t b = h->large[e];
        if (!sinew_spatial_hash_contains(h->boxes, b, p)) continue;
        if (found < cap) out[found] = b;
        ++found;
    }
    return found;
}

/* ---- host side (sinew_spatial_hash.c) ---- */

#ifndef __CUDACC__
#include <sinew/sinew_plugin.h>

/* The owning structure; arrays grow as needed and are reused across rebuilds. */
typedef struct sinew_spatial_hash {
    double cell;
    uint32_t max_cells;       /* boxes spanning more cubes go to `large` */
    uint32_t table_size;      /* power of two, at least the entry count */
    uint32_t box_count;
    size_t entry_count;
    uint32_t* bucket_start;   /* table_size + 1 */
    uint32_t* entries;        /* entry_count */
    uint32_t* large;
    uint32_t large_count;
    const double* boxes;      /* the caller's, as given to the last build */
    /* capacities */
    uint32_t table_capacity;
    size_t entry_capacity;
    uint32_t large_capacity;
    uint32_t* box_offset;     /* box_count + 1: first entry of each box (in box order) */
    uint32_t* entry_bucket;   /* entry_count: bucket of each entry (in box order) */
    uint32_t box_capacity;
} sinew_spatial_hash;

/* Builds the hash of `count` boxes (6 doubles each, above; the array must outlive the queries) with
 * cubes of edge `cell` (finite, > 0). max_cells 0: 512. INVALID_ARGUMENT (one log line) for
 * bad input; OUT_OF_MEMORY (one log line) when the arrays cannot grow, the hash then being
 * empty but valid. O(count + entries). */
sinew_result sinew_spatial_hash_build(const sinew_host_api* host, sinew_spatial_hash* h,
                                      const double* boxes, uint32_t count, double cell,
                                      uint32_t max_cells);
void sinew_spatial_hash_free(const sinew_host_api* host, sinew_spatial_hash* h);
sinew_spatial_hash_view sinew_spatial_hash_get_view(const sinew_spatial_hash* h);
#endif

#endif
