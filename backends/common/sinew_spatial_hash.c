/* The host-side build of the spatial hash of boxes (sinew_spatial_hash.h): a counting sort of
 * (box, cube) entries into buckets. SPDX-License-Identifier: MIT */
#include <sinew/sinew_host.h>

#include "sinew_spatial_hash.h"

#include <string.h>


#define SINEW_SPATIAL_HASH_DEFAULT_MAX_CELLS 512u
#define SINEW_SPATIAL_HASH_MAX_TABLE (1u << 30)

void sinew_spatial_hash_free(const sinew_host_api* host, sinew_spatial_hash* h)
{
    if (!host || !h) return;
    sinew_host_free(host, h->bucket_start);
    sinew_host_free(host, h->entries);
    sinew_host_free(host, h->large);
    sinew_host_free(host, h->box_offset);
    sinew_host_free(host, h->entry_bucket);
    memset(h, 0, sizeof *h);
}

sinew_spatial_hash_view sinew_spatial_hash_get_view(const sinew_spatial_hash* h)
{
    sinew_spatial_hash_view v;
    memset(&v, 0, sizeof v);
    v.inv_cell = h->cell > 0.0 ? 1.0 / h->cell : 0.0;
    v.table_mask = h->table_size ? h->table_size - 1u : 0u;
    v.boxes = h->boxes;
    v.bucket_start = h->table_size ? h->bucket_start : NULL; /* empty: no buckets */
    v.entries = h->entries;
    v.large = h->large;
    v.large_count = h->large_count;
    return v;
}

/* Grows a uint32 array to at least `need` elements (contents not kept). */
static int grow(const sinew_host_api* host, uint32_t** array, size_t* capacity, size_t need)
{
    if (need <= *capacity && *array) return 1;
    size_t cap = need + need / 2u + 16u;
    uint32_t* a = (uint32_t*)sinew_host_calloc(host, cap, sizeof(uint32_t));
    if (!a) return 0;
    sinew_host_free(host, *array);
    *array = a;
    *capacity = cap;
    return 1;
}

/* Leaves a valid empty hash (every query finds nothing) after a failed build. */
static void make_empty(sinew_spatial_hash* h)
{
    h->table_size = 0;
    h->entry_count = 0;
    h->large_count = 0;
    h->box_count = 0;
}

/* Pass 1: each box's first entry (box_offset) and *entries in all; boxes over max_cells cells
 * count as large (*large) and take no entry. 0 when the entries would pass 2^31. */
static int count_entries(sinew_spatial_hash* h, const double* boxes, uint32_t count,
                         double inv_cell, size_t* entries, uint32_t* large)
{
    *entries = 0;
    *large = 0;
    for (uint32_t b = 0; b < count; ++b) {
        int32_t lo[3], hi[3];
        uint64_t k = sinew_spatial_hash_box_cells(boxes, b, inv_cell, lo, hi);
        h->box_offset[b] = (uint32_t)*entries;
        if (k > h->max_cells) ++*large;
        else *entries += (size_t)k;
        if (*entries > (size_t)UINT32_MAX / 2u) return 0;
    }
    h->box_offset[count] = (uint32_t)*entries;
    return 1;
}

/* Room for `large` large boxes, `entries` entries and a table of at least as many buckets as
 * entries, zeroed (the table is what each build clears, sums and scatters through; twice as
 * many buckets only shortened buckets that queries filter anyway). 0 when out of memory. */
static int reserve(const sinew_host_api* host, sinew_spatial_hash* h, size_t entries,
                   uint32_t large)
{
    size_t large_cap = h->large_capacity;
    if (!grow(host, &h->large, &large_cap, large ? large : 1u)) return 0;
    h->large_capacity = (uint32_t)large_cap;
    size_t entry_cap = h->entry_capacity;
    size_t bucket_cap = h->entry_capacity;
    if (!grow(host, &h->entries, &entry_cap, entries ? entries : 1u)) return 0;
    if (!grow(host, &h->entry_bucket, &bucket_cap, entries ? entries : 1u)) return 0;
    h->entry_capacity = entry_cap < bucket_cap ? entry_cap : bucket_cap;
    uint32_t table = 64u;
    while (table < SINEW_SPATIAL_HASH_MAX_TABLE && (size_t)table < entries) table <<= 1;
    size_t table_cap = h->table_capacity;
    if (!grow(host, &h->bucket_start, &table_cap, (size_t)table + 1u)) return 0;
    h->table_capacity = (uint32_t)table_cap;
    h->table_size = table;
    memset(h->bucket_start, 0, ((size_t)table + 1u) * sizeof(uint32_t));
    return 1;
}

/* Pass 2: the bucket of every entry, counted per bucket (at q + 1), and the large boxes. */
static void bucket_entries(sinew_spatial_hash* h, const double* boxes, uint32_t count,
                           double inv_cell)
{
    const uint32_t mask = h->table_size - 1u;
    uint32_t large = 0;
    for (uint32_t b = 0; b < count; ++b) {
        int32_t lo[3], hi[3];
        uint64_t k = sinew_spatial_hash_box_cells(boxes, b, inv_cell, lo, hi);
        if (k == 0) continue;
        if (k > h->max_cells) {
            h->large[large++] = b;
            continue;
        }
        uint32_t e = h->box_offset[b];
        for (int32_t i = lo[0]; i <= hi[0]; ++i)
            for (int32_t j = lo[1]; j <= hi[1]; ++j)
                for (int32_t l = lo[2]; l <= hi[2]; ++l) {
                    uint32_t q = sinew_spatial_hash_bucket(i, j, l, mask);
                    h->entry_bucket[e++] = q;
                    h->bucket_start[q + 1]++;
                }
    }
    h->large_count = large;
}

/* Pass 3: bucket starts from the counts, then the entries scattered in box order (so each
 * bucket lists its boxes increasing) with bucket_start[q] as the cursor, shifted back after. */
static void scatter_entries(sinew_spatial_hash* h, uint32_t count)
{
    const uint32_t table = h->table_size;
    for (uint32_t q = 0; q < table; ++q) h->bucket_start[q + 1] += h->bucket_start[q];
    for (uint32_t b = 0; b < count; ++b)
        for (uint32_t e = h->box_offset[b]; e < h->box_offset[b + 1]; ++e)
            h->entries[h->bucket_start[h->entry_bucket[e]]++] = b;
    for (uint32_t q = table; q > 0; --q) h->bucket_start[q] = h->bucket_start[q - 1];
    h->bucket_start[0] = 0;
}

sinew_result sinew_spatial_hash_build(const sinew_host_api* host, sinew_spatial_hash* h,
                                      const double* boxes, uint32_t count, double cell,
                                      uint32_t max_cells)
{
    if (!host || !h)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "spatial hash: NULL %s", host ? "hash" : "host");
    if (count > 0 && !boxes)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "spatial hash: %u boxes without an array", count);
    if (!(cell > 0.0) || !isfinite(cell))
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "spatial hash: cell size %g is not a positive finite number", cell);
    if (max_cells == 0) max_cells = SINEW_SPATIAL_HASH_DEFAULT_MAX_CELLS;
    const double inv_cell = 1.0 / cell;
    h->cell = cell;
    h->max_cells = max_cells;
    h->boxes = boxes;
    size_t box_cap = h->box_capacity, entries = 0;
    uint32_t large = 0;
    if (!grow(host, &h->box_offset, &box_cap, (size_t)count + 1u)) goto oom;
    h->box_capacity = (uint32_t)box_cap;
    if (!count_entries(h, boxes, count, inv_cell, &entries, &large)) {
        make_empty(h);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "spatial hash: more than 2^31 entries for %u boxes of cell %g",
                               count, cell);
    }
    if (!reserve(host, h, entries, large)) goto oom;
    bucket_entries(h, boxes, count, inv_cell);
    scatter_entries(h, count);
    h->entry_count = entries;
    h->box_count = count;
    return SINEW_OK;

oom:
    make_empty(h);
    return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                           "spatial hash: out of memory for %u boxes of cell %g", count, cell);
}
