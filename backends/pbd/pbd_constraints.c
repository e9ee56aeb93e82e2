/* The constraints of pbd on ps's tissue mesh (Sec. 3.1): one stretch constraint per unique
 * edge and one volume constraint per tet of the tets the model keeps, the particles' inverse
 * masses, the XPBD compliances, and the grouping by colour (Sec. 4, pbd_colour.c) into
 * structure-of-arrays runs, one per colour. SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "pbd_internal.h"
#include "pbd_kernels.h"

/* An edge of a kept tet: key a * N + b (a < b), the tet it came from and its volume share. */
typedef struct edge_entry {
    uint64_t key;
    uint32_t tet;
    double share;
} edge_entry;

/* The constraints before colouring: 4 particles each (PBD_NONE pads an edge), edges first,
 * with their rest value and compliance. */
typedef struct raw_constraints {
    uint32_t edges, tets;
    uint32_t* particles;
    float* rest;
    float* alpha;
} raw_constraints;

static sinew_result oom(const sinew_host_api* host)
{
    return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "pbd: out of memory for the "
                           "constraints");
}

/* Inverse masses (Sec. 3, the particles' weights): masses as ps lumps them (a quarter of each
 * tet's volume per corner, density in units of the squared tissue thickness, a floor of 1e-3
 * of the mean); 0 for base vertices and for skin vertices that no kept tet holds, which
 * follow their targets like fps's Dirichlet vertices. */
static void inverse_masses(const ps_model* m, const pbd_params* p, double* volume, uint8_t* held,
                           float* w)
{
    uint32_t N = 2u * m->n;
    for (uint32_t t = 0; t < m->tet_count; ++t)
        for (int c = 0; c < 4; ++c) {
            volume[m->tets[4u * t + c]] += 0.25 * fabs(m->tet_volume[t]);
            if (!m->tet_excluded[t]) held[m->tets[4u * t + c]] = 1;
        }
    double l2 = m->thickness * m->thickness, msum = 0.0;
    for (uint32_t i = 0; i < N; ++i) {
        volume[i] = p->mass * volume[i] / l2; /* now the mass */
        msum += volume[i];
    }
    double mmean = N ? msum / N : 0.0;
    if (!(mmean > 0.0)) mmean = p->mass;
    for (uint32_t i = 0; i < N; ++i)
        w[i] = (i < m->n && held[i]) ? (float)(1.0 / fmax(volume[i], 1e-3 * mmean)) : 0.0f;
}

static int edge_order(const void* a, const void* b)
{
    const edge_entry* x = (const edge_entry*)a;
    const edge_entry* y = (const edge_entry*)b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->tet < y->tet ? -1 : (x->tet > y->tet ? 1 : 0);
}

/* The 6 edges of every kept tet, sorted by edge then tet (a total order: the volume shares
 * are summed in the same order whatever the sort does with ties). Returns the entry count. */
static uint32_t collect_edges(const ps_model* m, edge_entry* e)
{
    static const int pairs[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
    uint64_t N = 2u * (uint64_t)m->n;
    uint32_t k = 0;
    for (uint32_t t = 0; t < m->tet_count; ++t) {
        if (m->tet_excluded[t]) continue;
        const uint32_t* v = m->tets + 4u * t;
        for (int q = 0; q < 6; ++q) {
            uint64_t a = v[pairs[q][0]], b = v[pairs[q][1]];
            e[k].key = a < b ? a * N + b : b * N + a;
            e[k].tet = t;
            e[k].share = fabs(m->tet_volume[t]) / 6.0;
            ++k;
        }
    }
    qsort(e, k, sizeof *e, edge_order);
    return k;
}

/* Unique edges with a moving end, into raw: particles, rest length d, and alpha~ = alpha / h^2
 * (XPBD, Macklin et al. 2016) of alpha = c_s d^2 / V_e, the compliance of the strain
 * (|p12| - d) / d per unit of the edge's volume share V_e. */
static void add_edges(const ps_model* m, const pbd_params* p, const float* w, const float* rest,
                      const edge_entry* e, uint32_t count, raw_constraints* raw)
{
    uint64_t N = 2u * (uint64_t)m->n;
    double h2 = p->timestep * p->timestep;
    for (uint32_t i = 0; i < count;) {
        double share = 0.0;
        uint32_t j = i;
        for (; j < count && e[j].key == e[i].key; ++j) share += e[j].share;
        uint32_t a = (uint32_t)(e[i].key / N), b = (uint32_t)(e[i].key % N);
        i = j;
        if (!(w[a] > 0.0f || w[b] > 0.0f)) continue;
        uint32_t k = raw->edges++;
        uint32_t* q = raw->particles + 4u * k;
        q[0] = a, q[1] = b, q[2] = q[3] = PBD_NONE;
        float d[3];
        raw->rest[k] = pbd_edge_length(rest, N, a, b, d);
        double len = raw->rest[k];
        raw->alpha[k] = (float)(p->stretch_compliance * len * len / share / h2);
    }
}

/* A kept tet with a moving corner: its smallest particle (a skin vertex), for the order. */
typedef struct tet_entry {
    uint32_t first;
    uint32_t tet;
} tet_entry;

static int tet_order(const void* a, const void* b)
{
    const tet_entry* x = (const tet_entry*)a;
    const tet_entry* y = (const tet_entry*)b;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return x->tet < y->tet ? -1 : (x->tet > y->tet ? 1 : 0);
}

/* The kept tets with a moving corner, sorted by their smallest particle as the edges are (so
 * each colour's constraints of both kinds run through the particles in one order). Returns
 * how many. */
static uint32_t order_tets(const ps_model* m, const float* w, tet_entry* e)
{
    uint32_t k = 0;
    for (uint32_t t = 0; t < m->tet_count; ++t) {
        if (m->tet_excluded[t]) continue;
        const uint32_t* v = m->tets + 4u * t;
        if (!(w[v[0]] > 0.0f || w[v[1]] > 0.0f || w[v[2]] > 0.0f || w[v[3]] > 0.0f)) continue;
        uint32_t first = v[0];
        for (int c = 1; c < 4; ++c) first = v[c] < first ? v[c] : first;
        e[k].first = first;
        e[k++].tet = t;
    }
    qsort(e, k, sizeof *e, tet_order);
    return k;
}

/* The tets of order_tets after the edges: rest 6 V0 from the same formula as the projection,
 * and alpha~ = alpha / h^2 of alpha = c_v |V0| (the compliance of the volume change relative
 * to V0 per unit rest volume) times 36 for the constraint 6 V - 6 V0 that pbd_tet_volume6
 * solves. */
static void add_tets(const ps_model* m, const pbd_params* p, const float* rest,
                     const tet_entry* e, uint32_t count, raw_constraints* raw)
{
    double h2 = p->timestep * p->timestep;
    for (uint32_t j = 0; j < count; ++j) {
        const uint32_t* v = m->tets + 4u * e[j].tet;
        uint32_t k = raw->edges + raw->tets++;
        memcpy(raw->particles + 4u * k, v, 4u * sizeof(uint32_t));
        raw->rest[k] = pbd_tet_volume6(rest, 2u * (size_t)m->n, v, NULL);
        double volume = fabs((double)raw->rest[k]) / 6.0;
        raw->alpha[k] = (float)(36.0 * p->volume_compliance * volume / h2);
    }
}

static bool alloc_grouped(const sinew_host_api* host, pbd_constraints* c)
{
    size_t s = c->stretch_count ? c->stretch_count : 1u, v = c->volume_count ? c->volume_count : 1u;
    size_t colours = (size_t)c->colour_count + 1u;
    c->stretch_a = (uint32_t*)sinew_host_calloc(host, s, sizeof(uint32_t));
    c->stretch_b = (uint32_t*)sinew_host_calloc(host, s, sizeof(uint32_t));
    c->stretch_rest = (float*)sinew_host_calloc(host, s, sizeof(float));
    c->stretch_alpha = (float*)sinew_host_calloc(host, s, sizeof(float));
    bool ok = c->stretch_a && c->stretch_b && c->stretch_rest && c->stretch_alpha;
    for (int k = 0; k < 2; ++k) {
        c->stretch_w[k] = (float*)sinew_host_calloc(host, s, sizeof(float));
        ok = ok && c->stretch_w[k];
    }
    for (int k = 0; k < 4; ++k) {
        c->volume_p[k] = (uint32_t*)sinew_host_calloc(host, v, sizeof(uint32_t));
        c->volume_w[k] = (float*)sinew_host_calloc(host, v, sizeof(float));
        ok = ok && c->volume_p[k] && c->volume_w[k];
    }
    c->volume_rest = (float*)sinew_host_calloc(host, v, sizeof(float));
    c->volume_alpha = (float*)sinew_host_calloc(host, v, sizeof(float));
    c->stretch_offsets = (uint32_t*)sinew_host_calloc(host, colours, sizeof(uint32_t));
    c->volume_offsets = (uint32_t*)sinew_host_calloc(host, colours, sizeof(uint32_t));
    return ok && c->volume_rest && c->volume_alpha && c->stretch_offsets && c->volume_offsets;
}

/* Sec. 4: the constraints of each colour contiguous, stretch and volume apart, each kind in
 * its raw order within a colour (both sorted by their smallest particle). */
static sinew_result group(const sinew_host_api* host, const raw_constraints* raw,
                          const uint32_t* colour, pbd_constraints* c)
{
    c->stretch_count = raw->edges;
    c->volume_count = raw->tets;
    if (!alloc_grouped(host, c)) return oom(host);
    uint32_t total = raw->edges + raw->tets;
    for (uint32_t k = 0; k < total; ++k) {
        uint32_t* off = k < raw->edges ? c->stretch_offsets : c->volume_offsets;
        off[colour[k] + 1u]++;
    }
    for (uint32_t q = 0; q < c->colour_count; ++q) {
        c->stretch_offsets[q + 1u] += c->stretch_offsets[q];
        c->volume_offsets[q + 1u] += c->volume_offsets[q];
    }
    for (uint32_t k = 0; k < total; ++k) {
        const uint32_t* p = raw->particles + 4u * k;
        if (k < raw->edges) {
            uint32_t i = c->stretch_offsets[colour[k]]++;
            c->stretch_a[i] = p[0], c->stretch_b[i] = p[1];
            c->stretch_w[0][i] = c->inv_mass[p[0]], c->stretch_w[1][i] = c->inv_mass[p[1]];
            c->stretch_rest[i] = raw->rest[k], c->stretch_alpha[i] = raw->alpha[k];
        } else {
            uint32_t i = c->volume_offsets[colour[k]]++;
            for (int q = 0; q < 4; ++q) {
                c->volume_p[q][i] = p[q];
                c->volume_w[q][i] = c->inv_mass[p[q]];
            }
            c->volume_rest[i] = raw->rest[k], c->volume_alpha[i] = raw->alpha[k];
        }
    }
    /* the fill advanced each colour's start to the next one's: shift back */
    for (uint32_t q = c->colour_count; q > 0; --q) {
        c->stretch_offsets[q] = c->stretch_offsets[q - 1u];
        c->volume_offsets[q] = c->volume_offsets[q - 1u];
    }
    c->stretch_offsets[0] = c->volume_offsets[0] = 0;
    return SINEW_OK;
}

/* The raw constraints of model m with inverse masses w: edges, then tets. */
static sinew_result raw_build(const sinew_host_api* host, const ps_model* m, const pbd_params* p,
                              const float* w, const float* rest, raw_constraints* raw)
{
    size_t most = 7u * (size_t)m->tet_count + 1u; /* 6 edges and the tet itself per tet */
    edge_entry* e = (edge_entry*)sinew_host_calloc(host, 6u * (size_t)m->tet_count + 1u,
                                                   sizeof(edge_entry));
    tet_entry* t = (tet_entry*)sinew_host_calloc(host, (size_t)m->tet_count + 1u,
                                                 sizeof(tet_entry));
    raw->particles = (uint32_t*)sinew_host_calloc(host, most, 4u * sizeof(uint32_t));
    raw->rest = (float*)sinew_host_calloc(host, most, sizeof(float));
    raw->alpha = (float*)sinew_host_calloc(host, most, sizeof(float));
    sinew_result r = e && t && raw->particles && raw->rest && raw->alpha ? SINEW_OK : oom(host);
    if (r == SINEW_OK) {
        add_edges(m, p, w, rest, e, collect_edges(m, e), raw);
        add_tets(m, p, rest, t, order_tets(m, w, t), raw);
    }
    sinew_host_free(host, e);
    sinew_host_free(host, t);
    return r;
}

sinew_result pbd_constraints_build(const sinew_host_api* host, const ps_model* m,
                                   const pbd_params* p, const float* rest, pbd_constraints* out)
{
    memset(out, 0, sizeof *out);
    uint32_t N = 2u * m->n;
    out->particle_count = N;
    out->inv_mass = (float*)sinew_host_calloc(host, N ? N : 1u, sizeof(float));
    double* volume = (double*)sinew_host_calloc(host, N ? N : 1u, sizeof(double));
    uint8_t* held = (uint8_t*)sinew_host_calloc(host, N ? N : 1u, 1u);
    raw_constraints raw = {0, 0, NULL, NULL, NULL};
    uint32_t* colour = NULL;
    sinew_result r = out->inv_mass && volume && held ? SINEW_OK : oom(host);
    if (r == SINEW_OK) {
        inverse_masses(m, p, volume, held, out->inv_mass);
        r = raw_build(host, m, p, out->inv_mass, rest, &raw);
    }
    if (r == SINEW_OK) {
        colour = (uint32_t*)sinew_host_calloc(host, (size_t)raw.edges + raw.tets + 1u,
                                              sizeof(uint32_t));
        r = colour ? pbd_colour(host, N, raw.edges + raw.tets, raw.particles, colour,
                                &out->colour_count, &out->degeneracy)
                   : oom(host);
    }
    if (r == SINEW_OK) r = group(host, &raw, colour, out);
    void* scratch[] = {volume, held, raw.particles, raw.rest, raw.alpha, colour};
    for (size_t i = 0; i < sizeof scratch / sizeof scratch[0]; ++i)
        sinew_host_free(host, scratch[i]);
    if (r != SINEW_OK) pbd_constraints_free(host, out);
    return r;
}

void pbd_constraints_free(const sinew_host_api* host, pbd_constraints* c)
{
    void* arrays[] = {c->inv_mass,     c->stretch_a,    c->stretch_b,     c->stretch_rest,
                      c->stretch_alpha, c->volume_p[0], c->volume_p[1],   c->volume_p[2],
                      c->volume_p[3],  c->volume_rest,  c->volume_alpha,  c->stretch_offsets,
                      c->volume_offsets, c->stretch_w[0], c->stretch_w[1], c->volume_w[0],
                      c->volume_w[1], c->volume_w[2], c->volume_w[3]};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) sinew_host_free(host, arrays[i]);
    memset(c, 0, sizeof *c);
}

void pbd_constraint_particles(const pbd_constraints* c, uint32_t k, uint32_t out[4],
                              uint32_t* colour)
{
    const uint32_t* off = k < c->stretch_count ? c->stretch_offsets : c->volume_offsets;
    uint32_t i = k < c->stretch_count ? k : k - c->stretch_count;
    if (k < c->stretch_count) {
        out[0] = c->stretch_a[i], out[1] = c->stretch_b[i], out[2] = out[3] = PBD_NONE;
    } else {
        for (int q = 0; q < 4; ++q) out[q] = c->volume_p[q][i];
    }
    uint32_t q = 0;
    while (q + 1u < c->colour_count && off[q + 1u] <= i) ++q;
    *colour = q;
}
