/* The constraints of pbd on ps's tissue mesh (Sec. 3.1): one stretch constraint per unique
 * edge and one volume constraint per tet of the tets the model keeps, one bending constraint
 * per pair of skin triangles on an edge (pbd_kernels.h, pbd_dihedral), the particles' inverse
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
 * then tets, then bending pairs, with their rest value and compliance. */
typedef struct raw_constraints {
    uint32_t edges, tets, bends;
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

/* An edge of a skin triangle: key lo * N + hi, the triangle, its ends in the triangle's
 * winding (a to b) and the corner opposite. */
typedef struct side_entry {
    uint64_t key;
    uint32_t tri, a, b, opposite;
} side_entry;

static int side_order(const void* x, const void* y)
{
    const side_entry* a = (const side_entry*)x;
    const side_entry* b = (const side_entry*)y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->tri < b->tri ? -1 : (a->tri > b->tri ? 1 : 0);
}

/* The 3 edges of every skin triangle, sorted by edge then triangle. Returns the count. */
static uint32_t collect_sides(const ps_model* m, side_entry* e)
{
    uint64_t N = 2u * (uint64_t)m->n;
    uint32_t k = 0;
    for (uint32_t t = 0; t < m->triangle_count; ++t) {
        const uint32_t* v = m->triangles + 3u * t;
        for (int q = 0; q < 3; ++q) {
            uint64_t a = v[q], b = v[(q + 1) % 3];
            e[k] = (side_entry){a < b ? a * N + b : b * N + a, t, (uint32_t)a, (uint32_t)b,
                                v[(q + 2) % 3]};
            ++k;
        }
    }
    qsort(e, k, sizeof *e, side_order);
    return k;
}

/* A pair of skin triangles on an edge: its particles (pbd_dihedral's order) and the smallest. */
typedef struct hinge_entry {
    uint32_t first;
    uint32_t p[4];
} hinge_entry;

static int hinge_order(const void* x, const void* y)
{
    const hinge_entry* a = (const hinge_entry*)x;
    const hinge_entry* b = (const hinge_entry*)y;
    if (a->first != b->first) return a->first < b->first ? -1 : 1;
    for (int c = 0; c < 4; ++c)
        if (a->p[c] != b->p[c]) return a->p[c] < b->p[c] ? -1 : 1;
    return 0;
}

/* The rest area of a pair's two triangles and its edge's squared length (double precision
 * from the single-precision rest shape); false for a degenerate pair. */
static bool hinge_rest(const float* x, size_t ld, const uint32_t p[4], double* area, double* e2)
{
    double e[3], a[3], b[3], na[3], nb[3];
    for (int c = 0; c < 3; ++c) {
        double o = x[(size_t)c * ld + p[0]];
        e[c] = x[(size_t)c * ld + p[1]] - o;
        a[c] = x[(size_t)c * ld + p[2]] - o;
        b[c] = x[(size_t)c * ld + p[3]] - o;
    }
    ps_cross3(e, a, na);
    ps_cross3(b, e, nb);
    double la = sqrt(ps_dot3(na, na)), lb = sqrt(ps_dot3(nb, nb));
    *area = 0.5 * (la + lb);
    *e2 = ps_dot3(e, e);
    return la > 0.0 && lb > 0.0 && *e2 > 0.0;
}

/* The edges that exactly two skin triangles share (an open edge bends nothing; where more
 * meet, no pair is the surface), with a moving corner and of some extent at rest, as
 * pbd_dihedral takes them: the edge in the first triangle's winding, its corner, the second
 * triangle's; sorted by their smallest particle as the edges and tets are. Returns how many. */
static uint32_t order_hinges(const ps_model* m, const float* w, const float* rest,
                             const side_entry* e, uint32_t count, hinge_entry* h)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < count;) {
        uint32_t j = i;
        while (j < count && e[j].key == e[i].key) ++j;
        bool pair = j - i == 2u;
        uint32_t p[4] = {e[i].a, e[i].b, e[i].opposite, pair ? e[i + 1u].opposite : e[i].opposite};
        i = j;
        if (!pair || p[2] == p[3]) continue;
        if (!(w[p[0]] > 0.0f || w[p[1]] > 0.0f || w[p[2]] > 0.0f || w[p[3]] > 0.0f)) continue;
        double area, e2;
        if (!hinge_rest(rest, 2u * (size_t)m->n, p, &area, &e2)) continue;
        h[k].first = p[0];
        for (int c = 0; c < 4; ++c) {
            h[k].p[c] = p[c];
            h[k].first = p[c] < h[k].first ? p[c] : h[k].first;
        }
        ++k;
    }
    qsort(h, k, sizeof *h, hinge_order);
    return k;
}

/* The pairs of order_hinges after the tets: the rest angle from the projection's own formula,
 * and alpha~ = alpha / h^2 of alpha = c_b A / (l^3 |e|^2), the compliance of the bending strain
 * l (phi - phi0) |e| / A per unit of the pair's volume l A, with A a third of the two
 * triangles' area (the pair's share of the surface) and l the mean tissue thickness: the
 * angle's change over the pair's width A / |e|, across the skin's layer. */
static void add_bends(const ps_model* m, const pbd_params* p, const float* rest,
                      const hinge_entry* h, uint32_t count, raw_constraints* raw)
{
    size_t N = 2u * (size_t)m->n;
    double h2 = p->timestep * p->timestep, l3 = m->thickness * m->thickness * m->thickness;
    for (uint32_t j = 0; j < count; ++j) {
        uint32_t k = raw->edges + raw->tets + raw->bends++;
        memcpy(raw->particles + 4u * k, h[j].p, sizeof h[j].p);
        raw->rest[k] = pbd_dihedral(rest, N, h[j].p, NULL);
        double area, e2;
        hinge_rest(rest, N, h[j].p, &area, &e2);
        raw->alpha[k] = (float)(p->bending_compliance * (area / 3.0) / (l3 * e2) / h2);
    }
}

/* With `bending` and a tissue layer of some thickness: the bending pairs into raw. */
static sinew_result bends_build(const sinew_host_api* host, const ps_model* m,
                                const pbd_params* p, const float* w, const float* rest,
                                raw_constraints* raw)
{
    if (!p->bending || !(m->thickness > 0.0) || m->triangle_count == 0) return SINEW_OK;
    size_t sides = 3u * (size_t)m->triangle_count;
    side_entry* e = (side_entry*)sinew_host_calloc(host, sides, sizeof(side_entry));
    hinge_entry* h = (hinge_entry*)sinew_host_calloc(host, sides, sizeof(hinge_entry));
    sinew_result r = e && h ? SINEW_OK : oom(host);
    if (r == SINEW_OK)
        add_bends(m, p, rest, h, order_hinges(m, w, rest, e, collect_sides(m, e), h), raw);
    sinew_host_free(host, e);
    sinew_host_free(host, h);
    return r;
}

/* A four-particle kind (volume or bending): its particles and their inverse masses. */
static bool alloc_four(const sinew_host_api* host, size_t count, uint32_t* p[4], float* w[4])
{
    bool ok = true;
    for (int k = 0; k < 4; ++k) {
        p[k] = (uint32_t*)sinew_host_calloc(host, count, sizeof(uint32_t));
        w[k] = (float*)sinew_host_calloc(host, count, sizeof(float));
        ok = ok && p[k] && w[k];
    }
    return ok;
}

static bool alloc_grouped(const sinew_host_api* host, pbd_constraints* c)
{
    size_t s = c->stretch_count ? c->stretch_count : 1u, v = c->volume_count ? c->volume_count : 1u;
    size_t b = c->bending_count ? c->bending_count : 1u;
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
    ok = alloc_four(host, v, c->volume_p, c->volume_w) && ok;
    ok = alloc_four(host, b, c->bending_p, c->bending_w) && ok;
    c->volume_rest = (float*)sinew_host_calloc(host, v, sizeof(float));
    c->volume_alpha = (float*)sinew_host_calloc(host, v, sizeof(float));
    c->bending_rest = (float*)sinew_host_calloc(host, b, sizeof(float));
    c->bending_alpha = (float*)sinew_host_calloc(host, b, sizeof(float));
    c->stretch_offsets = (uint32_t*)sinew_host_calloc(host, colours, sizeof(uint32_t));
    c->volume_offsets = (uint32_t*)sinew_host_calloc(host, colours, sizeof(uint32_t));
    c->bending_offsets = (uint32_t*)sinew_host_calloc(host, colours, sizeof(uint32_t));
    return ok && c->volume_rest && c->volume_alpha && c->bending_rest && c->bending_alpha &&
           c->stretch_offsets && c->volume_offsets && c->bending_offsets;
}

enum { KIND_STRETCH, KIND_VOLUME, KIND_BENDING, KIND_COUNT };

static int kind_of(const raw_constraints* raw, uint32_t k)
{
    if (k < raw->edges) return KIND_STRETCH;
    return k < raw->edges + raw->tets ? KIND_VOLUME : KIND_BENDING;
}

/* Raw constraint k (of `kind`) at index i of its kind's arrays. */
static void place(const raw_constraints* raw, uint32_t k, int kind, uint32_t i,
                  pbd_constraints* c)
{
    const uint32_t* p = raw->particles + 4u * k;
    if (kind == KIND_STRETCH) {
        c->stretch_a[i] = p[0], c->stretch_b[i] = p[1];
        c->stretch_w[0][i] = c->inv_mass[p[0]], c->stretch_w[1][i] = c->inv_mass[p[1]];
        c->stretch_rest[i] = raw->rest[k], c->stretch_alpha[i] = raw->alpha[k];
        return;
    }
    bool volume = kind == KIND_VOLUME;
    uint32_t** particles = volume ? c->volume_p : c->bending_p;
    float** w = volume ? c->volume_w : c->bending_w;
    for (int q = 0; q < 4; ++q) {
        particles[q][i] = p[q];
        w[q][i] = c->inv_mass[p[q]];
    }
    (volume ? c->volume_rest : c->bending_rest)[i] = raw->rest[k];
    (volume ? c->volume_alpha : c->bending_alpha)[i] = raw->alpha[k];
}

/* Sec. 4: the constraints of each colour contiguous, each kind apart and in its raw order
 * within a colour (every kind sorted by its smallest particle). */
static sinew_result group(const sinew_host_api* host, const raw_constraints* raw,
                          const uint32_t* colour, pbd_constraints* c)
{
    c->stretch_count = raw->edges;
    c->volume_count = raw->tets;
    c->bending_count = raw->bends;
    if (!alloc_grouped(host, c)) return oom(host);
    uint32_t* off[KIND_COUNT] = {c->stretch_offsets, c->volume_offsets, c->bending_offsets};
    uint32_t total = raw->edges + raw->tets + raw->bends;
    for (uint32_t k = 0; k < total; ++k) off[kind_of(raw, k)][colour[k] + 1u]++;
    for (int t = 0; t < KIND_COUNT; ++t)
        for (uint32_t q = 0; q < c->colour_count; ++q) off[t][q + 1u] += off[t][q];
    for (uint32_t k = 0; k < total; ++k) {
        int t = kind_of(raw, k);
        place(raw, k, t, off[t][colour[k]]++, c);
    }
    /* the fill advanced each colour's start to the next one's: shift back */
    for (int t = 0; t < KIND_COUNT; ++t) {
        for (uint32_t q = c->colour_count; q > 0; --q) off[t][q] = off[t][q - 1u];
        off[t][0] = 0;
    }
    return SINEW_OK;
}

/* The raw constraints of model m with inverse masses w: edges, then tets, then bending pairs. */
static sinew_result raw_build(const sinew_host_api* host, const ps_model* m, const pbd_params* p,
                              const float* w, const float* rest, raw_constraints* raw)
{
    /* 6 edges and the tet itself per tet, fewer than 2 pairs per skin triangle */
    size_t most = 7u * (size_t)m->tet_count + 2u * (size_t)m->triangle_count + 1u;
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
    return r == SINEW_OK ? bends_build(host, m, p, w, rest, raw) : r;
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
    raw_constraints raw = {0, 0, 0, NULL, NULL, NULL};
    uint32_t* colour = NULL;
    sinew_result r = out->inv_mass && volume && held ? SINEW_OK : oom(host);
    if (r == SINEW_OK) {
        inverse_masses(m, p, volume, held, out->inv_mass);
        r = raw_build(host, m, p, out->inv_mass, rest, &raw);
    }
    uint32_t total = raw.edges + raw.tets + raw.bends;
    if (r == SINEW_OK) {
        colour = (uint32_t*)sinew_host_calloc(host, (size_t)total + 1u, sizeof(uint32_t));
        r = colour ? pbd_colour(host, N, total, raw.particles, colour, &out->colour_count,
                                &out->degeneracy)
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
                      c->volume_w[1], c->volume_w[2], c->volume_w[3], c->bending_p[0],
                      c->bending_p[1], c->bending_p[2], c->bending_p[3], c->bending_w[0],
                      c->bending_w[1], c->bending_w[2], c->bending_w[3], c->bending_rest,
                      c->bending_alpha, c->bending_offsets};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) sinew_host_free(host, arrays[i]);
    memset(c, 0, sizeof *c);
}

void pbd_constraint_particles(const pbd_constraints* c, uint32_t k, uint32_t out[4],
                              uint32_t* colour)
{
    const uint32_t* off = c->stretch_offsets;
    uint32_t i = k;
    if (k < c->stretch_count) {
        out[0] = c->stretch_a[i], out[1] = c->stretch_b[i], out[2] = out[3] = PBD_NONE;
    } else if ((i = k - c->stretch_count) < c->volume_count) {
        off = c->volume_offsets;
        for (int q = 0; q < 4; ++q) out[q] = c->volume_p[q][i];
    } else {
        i -= c->volume_count;
        off = c->bending_offsets;
        for (int q = 0; q < 4; ++q) out[q] = c->bending_p[q][i];
    }
    uint32_t q = 0;
    while (q + 1u < c->colour_count && off[q + 1u] <= i) ++q;
    *colour = q;
}
