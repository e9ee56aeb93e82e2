/* The split of each prism into three tets (projective skinning Sec. 3.3). A split is an order
 * of the prism's corners: the quad over edge (u, v) is cut along the diagonal from the earlier
 * of the two to the later one's base copy. Prisms that share an edge must cut their common
 * quad the same way. The order of vertex indices does that everywhere (the paper's split);
 * where a prism has a tet below PS_POOR_QUALITY (a side quad twisted by the shrinking), an edge
 * is flipped if its two corners are next to each other in the order of every prism on it and
 * the flip raises the worst tet of those prisms. SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps_internal.h"

#define PS_SPLIT_ROUNDS 8u

/* The six orders of corners 0, 1, 2. */
static const uint8_t perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

/* Local vertex slots of the 3 tets (a, b, c, a', b', c' with a before b before c). */
static const uint8_t tet_slots[3][4] = {{0, 1, 2, 5}, {0, 1, 5, 4}, {0, 3, 4, 5}};

void ps_prism_tets_split(const ps_model* m, uint32_t p, bool base_below, uint8_t order,
                         uint32_t tets[3][4])
{
    const uint32_t* t = m->triangles + 3u * p;
    const uint8_t* o = perms[order];
    uint32_t v[3] = {t[o[0]], t[o[1]], t[o[2]]};
    /* An odd order flips the winding. */
    bool flipped = order == 1u || order == 2u || order == 5u;
    uint32_t n = m->n;
    uint32_t slot[6] = {v[0], v[1], v[2], n + v[0], n + v[1], n + v[2]};
    /* With the base below a counter-clockwise (a, b, c), tet (a, b, c, c') has negative
     * volume: such prisms store their tets with the first two corners swapped. */
    bool swap = base_below != flipped;
    for (int k = 0; k < 3; ++k) {
        for (int c = 0; c < 4; ++c) tets[k][c] = slot[tet_slots[k][c]];
        if (swap) {
            uint32_t x = tets[k][0];
            tets[k][0] = tets[k][1];
            tets[k][1] = x;
        }
    }
}

double ps_prism_quality(const ps_model* m, uint32_t p, bool base_below, uint8_t order)
{
    uint32_t tets[3][4];
    ps_prism_tets_split(m, p, base_below, order, tets);
    const double* x = m->rest;
    double worst = INFINITY;
    for (int k = 0; k < 3; ++k) {
        const uint32_t* q = tets[k];
        worst = fmin(worst, ps_tet_quality(x + 3u * q[0], x + 3u * q[1], x + 3u * q[2],
                                           x + 3u * q[3], NULL));
    }
    return worst;
}

/* The order that sorts prism p's corners by vertex index. */
static uint8_t index_order(const ps_model* m, uint32_t p)
{
    const uint32_t* t = m->triangles + 3u * p;
    for (uint8_t k = 0; k < 6; ++k)
        if (t[perms[k][0]] < t[perms[k][1]] && t[perms[k][1]] < t[perms[k][2]]) return k;
    return 0; /* a triangle repeats no vertex */
}

/* Position of corner `corner` in order `order`. */
static int rank_of(uint8_t order, int corner)
{
    for (int k = 0; k < 3; ++k)
        if (perms[order][k] == corner) return k;
    return 0;
}

/* The order with corners a and b (next to each other in it) swapped. */
static uint8_t swapped(uint8_t order, int a, int b)
{
    uint8_t want[3];
    memcpy(want, perms[order], 3);
    for (int k = 0; k < 3; ++k)
        want[k] = want[k] == a ? (uint8_t)b : (want[k] == b ? (uint8_t)a : want[k]);
    for (uint8_t k = 0; k < 6; ++k)
        if (memcmp(perms[k], want, 3) == 0) return k;
    return order;
}

typedef struct split_edge {
    uint64_t key;  /* smaller vertex << 32 | larger */
    uint32_t prism;
} split_edge;

static int compare_edges(const void* a, const void* b)
{
    const split_edge* x = (const split_edge*)a;
    const split_edge* y = (const split_edge*)b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->prism < y->prism ? -1 : (x->prism > y->prism ? 1 : 0);
}

/* The local corner of prism p at vertex v. */
static int corner_of(const ps_model* m, uint32_t p, uint32_t v)
{
    const uint32_t* t = m->triangles + 3u * p;
    return t[0] == v ? 0 : (t[1] == v ? 1 : 2);
}

/* Tries to flip the edge shared by prisms edges[first .. last); true when it did. */
static bool try_flip(const ps_model* m, const uint8_t* below, uint8_t* order,
                     const split_edge* edges, size_t first, size_t last)
{
    uint32_t u = (uint32_t)(edges[first].key >> 32), v = (uint32_t)edges[first].key;
    uint8_t next[8];
    double before = INFINITY, after = INFINITY;
    if (last - first > 8u) return false;
    for (size_t e = first; e < last; ++e) {
        uint32_t p = edges[e].prism;
        int a = corner_of(m, p, u), b = corner_of(m, p, v);
        if (abs(rank_of(order[p], a) - rank_of(order[p], b)) != 1) return false;
        next[e - first] = swapped(order[p], a, b);
        before = fmin(before, ps_prism_quality(m, p, below[p] != 0, order[p]));
        after = fmin(after, ps_prism_quality(m, p, below[p] != 0, next[e - first]));
    }
    if (!(after > before)) return false;
    for (size_t e = first; e < last; ++e) order[edges[e].prism] = next[e - first];
    return true;
}

sinew_result ps_split_choose(const sinew_host_api* host, const ps_model* m, const uint8_t* below,
                             uint8_t* order)
{
    uint32_t tc = m->triangle_count;
    for (uint32_t p = 0; p < tc; ++p) order[p] = index_order(m, p);
    split_edge* edges = (split_edge*)sinew_host_calloc(host, tc ? 3u * (size_t)tc : 1u,
                                                       sizeof(split_edge));
    if (!edges)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory splitting "
                               "%u prisms", tc);
    for (uint32_t p = 0; p < tc; ++p)
        for (int k = 0; k < 3; ++k) {
            uint64_t a = m->triangles[3u * p + k], b = m->triangles[3u * p + (k + 1) % 3];
            edges[3u * p + k].key = a < b ? (a << 32 | b) : (b << 32 | a);
            edges[3u * p + k].prism = p;
        }
    size_t count = 3u * (size_t)tc;
    qsort(edges, count, sizeof(split_edge), compare_edges);
    for (uint32_t round = 0; round < PS_SPLIT_ROUNDS; ++round) {
        bool flipped = false;
        for (size_t first = 0, last; first < count; first = last) {
            for (last = first + 1u; last < count && edges[last].key == edges[first].key; ++last) {}
            bool failing = false;
            for (size_t e = first; e < last && !failing; ++e) {
                uint32_t p = edges[e].prism;
                failing = ps_prism_quality(m, p, below[p] != 0, order[p]) < PS_POOR_QUALITY;
            }
            if (failing) flipped |= try_flip(m, below, order, edges, first, last);
        }
        if (!flipped) break;
    }
    sinew_host_free(host, edges);
    return SINEW_OK;
}
