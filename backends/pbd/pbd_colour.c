/* Greedy colouring of the constraint graph (Sec. 4): a node per constraint, an edge between
 * two constraints that share a particle; the constraints of one colour touch disjoint
 * particles and are solved in parallel. The nodes are ordered smallest-last (Matula and Beck
 * 1983, the paper's [MB83]) and coloured greedily in the reverse of that order, which uses at
 * most max over subgraphs of (1 + least degree) colours (eq. 15), i.e. degeneracy + 1.
 * SPDX-License-Identifier: MIT */
#include <string.h>

#include "pbd_internal.h"

/* The graph in compressed rows: node i's neighbours are adj[off[i] .. off[i + 1]). */
typedef struct colour_graph {
    uint32_t count;
    size_t* off;
    uint32_t* adj;
} colour_graph;

/* Particle -> constraints in compressed rows (p_off: particle_count + 1 entries). */
static void particle_lists(uint32_t particle_count, uint32_t count, const uint32_t* particles,
                           uint32_t* p_off, uint32_t* p_list)
{
    memset(p_off, 0, ((size_t)particle_count + 1u) * sizeof(uint32_t));
    for (size_t e = 0; e < 4u * (size_t)count; ++e)
        if (particles[e] != PBD_NONE) p_off[particles[e] + 1u]++;
    for (uint32_t p = 0; p < particle_count; ++p) p_off[p + 1u] += p_off[p];
    for (uint32_t k = 0; k < count; ++k)
        for (int a = 0; a < 4; ++a) {
            uint32_t p = particles[4u * k + a];
            if (p != PBD_NONE) p_list[p_off[p]++] = k;
        }
    /* the fill advanced each row's start to the next row's: shift back */
    for (uint32_t p = particle_count; p > 0; --p) p_off[p] = p_off[p - 1u];
    p_off[0] = 0;
}

/* Walks the distinct neighbours of node k (constraints sharing a particle with it); with
 * `adj` NULL only counts them. stamp: per node, k + 1 once seen from k. */
static size_t neighbours(uint32_t k, const uint32_t* particles, const uint32_t* p_off,
                         const uint32_t* p_list, uint32_t* stamp, uint32_t* adj)
{
    size_t found = 0;
    for (int a = 0; a < 4; ++a) {
        uint32_t p = particles[4u * k + a];
        if (p == PBD_NONE) continue;
        for (uint32_t e = p_off[p]; e < p_off[p + 1u]; ++e) {
            uint32_t o = p_list[e];
            if (o == k || stamp[o] == k + 1u) continue;
            stamp[o] = k + 1u;
            if (adj) adj[found] = o;
            ++found;
        }
    }
    return found;
}

/* The constraint graph; false when memory runs out. */
static bool graph_build(const sinew_host_api* host, uint32_t particle_count, uint32_t count,
                        const uint32_t* particles, colour_graph* g)
{
    uint32_t* p_off = (uint32_t*)sinew_host_calloc(host, (size_t)particle_count + 1u,
                                                   sizeof(uint32_t));
    uint32_t* p_list = (uint32_t*)sinew_host_calloc(host, 4u * (size_t)count + 1u,
                                                    sizeof(uint32_t));
    uint32_t* stamp = (uint32_t*)sinew_host_calloc(host, (size_t)count + 1u, sizeof(uint32_t));
    g->count = count;
    g->off = (size_t*)sinew_host_calloc(host, (size_t)count + 1u, sizeof(size_t));
    bool ok = p_off && p_list && stamp && g->off;
    if (ok) {
        particle_lists(particle_count, count, particles, p_off, p_list);
        for (uint32_t k = 0; k < count; ++k)
            g->off[k + 1u] = g->off[k] + neighbours(k, particles, p_off, p_list, stamp, NULL);
        g->adj = (uint32_t*)sinew_host_calloc(host, g->off[count] + 1u, sizeof(uint32_t));
        ok = g->adj != NULL;
    }
    if (ok) {
        memset(stamp, 0, ((size_t)count + 1u) * sizeof(uint32_t));
        for (uint32_t k = 0; k < count; ++k)
            neighbours(k, particles, p_off, p_list, stamp, g->adj + g->off[k]);
    }
    sinew_host_free(host, p_off);
    sinew_host_free(host, p_list);
    sinew_host_free(host, stamp);
    return ok;
}

/* Buckets of nodes by remaining degree: doubly linked lists, the newest node first. */
typedef struct degree_buckets {
    uint32_t* head; /* per degree */
    uint32_t* next;
    uint32_t* prev;
    uint32_t* degree;
} degree_buckets;

static void bucket_insert(degree_buckets* b, uint32_t v)
{
    uint32_t d = b->degree[v];
    b->prev[v] = PBD_NONE;
    b->next[v] = b->head[d];
    if (b->head[d] != PBD_NONE) b->prev[b->head[d]] = v;
    b->head[d] = v;
}

static void bucket_remove(degree_buckets* b, uint32_t v)
{
    if (b->prev[v] != PBD_NONE) b->next[b->prev[v]] = b->next[v];
    else b->head[b->degree[v]] = b->next[v];
    if (b->next[v] != PBD_NONE) b->prev[b->next[v]] = b->prev[v];
}

/* Smallest-last order (order[0] removed first): each removal takes a node of least remaining
 * degree and lowers its remaining neighbours' degrees. The least degree drops by at most one
 * per removal, so the scan for it restarts one below. Returns the degeneracy. */
static uint32_t smallest_last(const colour_graph* g, degree_buckets* b, uint8_t* removed,
                              uint32_t* order)
{
    uint32_t n = g->count, max_degree = 0, degeneracy = 0;
    for (uint32_t v = 0; v < n; ++v) {
        b->degree[v] = (uint32_t)(g->off[v + 1u] - g->off[v]);
        if (b->degree[v] > max_degree) max_degree = b->degree[v];
    }
    for (uint32_t d = 0; d <= max_degree; ++d) b->head[d] = PBD_NONE;
    for (uint32_t v = n; v > 0; --v) bucket_insert(b, v - 1u); /* node 0 first in its bucket */
    uint32_t d = 0;
    for (uint32_t i = 0; i < n; ++i) {
        while (b->head[d] == PBD_NONE) ++d;
        uint32_t v = b->head[d];
        bucket_remove(b, v);
        removed[v] = 1;
        order[i] = v;
        if (d > degeneracy) degeneracy = d;
        for (size_t e = g->off[v]; e < g->off[v + 1u]; ++e) {
            uint32_t u = g->adj[e];
            if (removed[u]) continue;
            bucket_remove(b, u);
            b->degree[u]--;
            bucket_insert(b, u);
        }
        d = d > 0 ? d - 1u : 0u;
    }
    return degeneracy;
}

/* Greedy colouring in the reverse of `order`: each node takes the smallest colour that none
 * of its coloured neighbours holds. Returns the number of colours. */
static uint32_t greedy(const colour_graph* g, const uint32_t* order, uint32_t* colour,
                       uint32_t* taken)
{
    uint32_t n = g->count, colours = 0;
    for (uint32_t v = 0; v < n; ++v) colour[v] = PBD_NONE;
    for (uint32_t i = n; i > 0; --i) {
        uint32_t v = order[i - 1u];
        for (size_t e = g->off[v]; e < g->off[v + 1u]; ++e)
            if (colour[g->adj[e]] != PBD_NONE) taken[colour[g->adj[e]]] = v + 1u;
        uint32_t c = 0;
        while (taken[c] == v + 1u) ++c;
        colour[v] = c;
        if (c + 1u > colours) colours = c + 1u;
    }
    return colours;
}

sinew_result pbd_colour(const sinew_host_api* host, uint32_t particle_count, uint32_t count,
                        const uint32_t* particles, uint32_t* colour, uint32_t* colour_count,
                        uint32_t* degeneracy)
{
    colour_graph g = {0, NULL, NULL};
    degree_buckets b = {NULL, NULL, NULL, NULL};
    size_t room = (size_t)count + 1u;
    bool ok = graph_build(host, particle_count, count, particles, &g);
    /* degrees, and the colours a node may need, are below count + 1 */
    b.head = (uint32_t*)sinew_host_calloc(host, room, sizeof(uint32_t));
    b.next = (uint32_t*)sinew_host_calloc(host, room, sizeof(uint32_t));
    b.prev = (uint32_t*)sinew_host_calloc(host, room, sizeof(uint32_t));
    b.degree = (uint32_t*)sinew_host_calloc(host, room, sizeof(uint32_t));
    uint8_t* removed = (uint8_t*)sinew_host_calloc(host, room, 1u);
    uint32_t* order = (uint32_t*)sinew_host_calloc(host, room, sizeof(uint32_t));
    ok = ok && b.head && b.next && b.prev && b.degree && removed && order;
    if (ok) {
        *degeneracy = smallest_last(&g, &b, removed, order);
        memset(b.head, 0, room * sizeof(uint32_t)); /* reused: colours taken */
        *colour_count = greedy(&g, order, colour, b.head);
    }
    void* arrays[] = {g.off, g.adj, b.head, b.next, b.prev, b.degree, removed, order};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) sinew_host_free(host, arrays[i]);
    if (!ok)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "pbd: out of memory colouring %u constraints", count);
    return SINEW_OK;
}
