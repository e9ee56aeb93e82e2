/* The volumetric tissue mesh (projective skinning Sec. 3.3) and the rest data of its strain
 * constraints (Sec. 4.1). SPDX-License-Identifier: MIT */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ps_internal.h"

static double signed_volume(const double* a, const double* b, const double* c, const double* d)
{
    double u[3], v[3], w[3];
    for (int k = 0; k < 3; ++k) {
        u[k] = b[k] - a[k];
        v[k] = c[k] - a[k];
        w[k] = d[k] - a[k];
    }
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
            u[2] * (v[0] * w[1] - v[1] * w[0])) /
           6.0;
}

/* A = (E E^T)^-1 E for the mean-centred rest vertices E (3 x 4): A X, X the 4 x 3 matrix of
 * deformed vertices, is the transposed deformation gradient of eq. (8) (the gradient fit of
 * Sec. 4.1; A's columns sum to zero, so A N = A). False when E E^T is singular. */
static bool fit_matrix(const double* x[4], double A[12])
{
    double mean[3] = {0.0, 0.0, 0.0};
    for (int v = 0; v < 4; ++v)
        for (int k = 0; k < 3; ++k) mean[k] += 0.25 * x[v][k];
    double E[3][4];
    for (int v = 0; v < 4; ++v)
        for (int k = 0; k < 3; ++k) E[k][v] = x[v][k] - mean[k];
    double S[3][3];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            double s = 0.0;
            for (int v = 0; v < 4; ++v) s += E[r][v] * E[c][v];
            S[r][c] = s;
        }
    double C[3][3];
    C[0][0] = S[1][1] * S[2][2] - S[1][2] * S[2][1];
    C[0][1] = S[0][2] * S[2][1] - S[0][1] * S[2][2];
    C[0][2] = S[0][1] * S[1][2] - S[0][2] * S[1][1];
    C[1][0] = S[1][2] * S[2][0] - S[1][0] * S[2][2];
    C[1][1] = S[0][0] * S[2][2] - S[0][2] * S[2][0];
    C[1][2] = S[0][2] * S[1][0] - S[0][0] * S[1][2];
    C[2][0] = S[1][0] * S[2][1] - S[1][1] * S[2][0];
    C[2][1] = S[0][1] * S[2][0] - S[0][0] * S[2][1];
    C[2][2] = S[0][0] * S[1][1] - S[0][1] * S[1][0];
    double det = S[0][0] * C[0][0] + S[0][1] * C[1][0] + S[0][2] * C[2][0];
    if (!(fabs(det) > DBL_MIN) || !isfinite(det)) return false;
    for (int r = 0; r < 3; ++r)
        for (int v = 0; v < 4; ++v) {
            double s = 0.0;
            for (int k = 0; k < 3; ++k) s += C[r][k] * E[k][v];
            A[4 * r + v] = s / det;
        }
    return true;
}

/* Whether prism p's base centroid lies below its skin triangle as wound (on the side away
 * from its normal). */
static bool prism_base_below(const ps_model* m, uint32_t p)
{
    const uint32_t* v = m->triangles + 3u * p;
    const double* x0 = m->rest + 3u * v[0];
    const double* x1 = m->rest + 3u * v[1];
    const double* x2 = m->rest + 3u * v[2];
    double e1[3], e2[3], nrm[3], down[3];
    for (int k = 0; k < 3; ++k) {
        e1[k] = x1[k] - x0[k];
        e2[k] = x2[k] - x0[k];
        down[k] = (m->rest[3u * ((size_t)m->n + v[0]) + k] + m->rest[3u * ((size_t)m->n + v[1]) + k] +
                   m->rest[3u * ((size_t)m->n + v[2]) + k] - x0[k] - x1[k] - x2[k]) / 3.0;
    }
    ps_cross3(e1, e2, nrm);
    return ps_dot3(nrm, down) <= 0.0;
}

/* Marks (flag 2) the parts (ps_skin_parts), by their vertex, in which a directed edge occurs
 * twice: their winding is not consistent. The directed edges are grouped by their first vertex
 * (start: n + 1 entries, ends: 3 triangle_count), and each vertex's few compared. */
static void mark_inconsistent(const ps_model* m, const uint32_t* part, uint32_t* start,
                              uint32_t* ends, uint8_t* flag)
{
    uint32_t n = m->n, tc = m->triangle_count;
    for (uint32_t p = 0; p < tc; ++p)
        for (int k = 0; k < 3; ++k) start[m->triangles[3u * p + k] + 1u]++;
    for (uint32_t i = 0; i < n; ++i) start[i + 1u] += start[i];
    for (uint32_t p = 0; p < tc; ++p)
        for (int k = 0; k < 3; ++k)
            ends[start[m->triangles[3u * p + k]]++] = m->triangles[3u * p + (k + 1) % 3];
    /* The cursors now stand at each vertex's end: its edges are [start[i - 1], start[i]). */
    for (uint32_t i = 0, begin = 0; i < n; begin = start[i], ++i)
        for (uint32_t a = begin; a < start[i]; ++a)
            for (uint32_t b = begin; b < a; ++b)
                if (ends[a] == ends[b]) flag[part[i]] |= 2u;
}

sinew_result ps_prism_orient(const sinew_host_api* host, const ps_model* m, uint8_t* below)
{
    uint32_t n = m->n, tc = m->triangle_count;
    uint32_t* parent = (uint32_t*)sinew_host_calloc(host, n ? n : 1u, sizeof(uint32_t));
    int32_t* votes = (int32_t*)sinew_host_calloc(host, n ? n : 1u, sizeof(int32_t));
    uint8_t* flag = (uint8_t*)sinew_host_calloc(host, n ? n : 1u, 1u);
    uint32_t* start = (uint32_t*)sinew_host_calloc(host, n + 1u, sizeof(uint32_t));
    uint32_t* ends =
        (uint32_t*)sinew_host_alloc(host, (tc ? 3u * (size_t)tc : 1u) * sizeof(uint32_t));
    if (!parent || !votes || !flag || !start || !ends) {
        sinew_host_free(host, parent);
        sinew_host_free(host, votes);
        sinew_host_free(host, flag);
        sinew_host_free(host, start);
        sinew_host_free(host, ends);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory orienting "
                               "%u prisms", tc);
    }
    ps_skin_parts(m, parent);
    mark_inconsistent(m, parent, start, ends, flag);
    for (uint32_t p = 0; p < tc; ++p) {
        below[p] = prism_base_below(m, p) ? 1u : 0u;
        votes[parent[m->triangles[3u * p]]] += below[p] ? 1 : -1;
    }
    for (uint32_t p = 0; p < tc; ++p) {
        uint32_t root = parent[m->triangles[3u * p]];
        if (!(flag[root] & 2u)) below[p] = votes[root] >= 0 ? 1u : 0u;
    }
    sinew_host_free(host, parent);
    sinew_host_free(host, votes);
    sinew_host_free(host, flag);
    sinew_host_free(host, start);
    sinew_host_free(host, ends);
    return SINEW_OK;
}

double ps_tet_quality(const double* a, const double* b, const double* c, const double* d,
                      double* volume)
{
    const double* x[4] = {a, b, c, d};
    double lmax2 = 0.0;
    for (int i = 0; i < 4; ++i)
        for (int j = i + 1; j < 4; ++j) {
            double d2 = 0.0;
            for (int q = 0; q < 3; ++q) d2 += (x[i][q] - x[j][q]) * (x[i][q] - x[j][q]);
            lmax2 = fmax(lmax2, d2);
        }
    double vol = signed_volume(a, b, c, d);
    if (volume) *volume = vol;
    return lmax2 > 0.0 ? vol / (lmax2 * sqrt(lmax2)) : 0.0;
}

/* Prisms per job of the tets' rest data. */
#define PS_TET_BLOCK 1024u

typedef struct tet_job {
    ps_model* m;
    const uint8_t* below;
    const uint8_t* order;
    uint32_t* counts; /* per block: degenerate, inverted and poor tets */
} tet_job;

/* The tets of the prisms of blocks [begin, end) of PS_TET_BLOCK: corners, rest volume, rest
 * matrix and exclusion, and the counts of degenerate, inverted and poor ones. */
static void tet_blocks(void* data, uint32_t begin, uint32_t end)
{
    const tet_job* job = (const tet_job*)data;
    ps_model* m = job->m;
    for (uint32_t block = begin; block < end; ++block) {
        uint32_t degenerate = 0, inverted = 0, poor = 0;
        uint32_t p0 = block * PS_TET_BLOCK;
        uint32_t p1 = m->triangle_count - p0 < PS_TET_BLOCK ? m->triangle_count : p0 + PS_TET_BLOCK;
        for (uint32_t p = p0; p < p1; ++p) {
            uint32_t prism[3][4];
            ps_prism_tets_split(m, p, job->below[p] != 0, job->order[p], prism);
            for (int k = 0; k < 3; ++k) {
                uint32_t t = 3u * p + (uint32_t)k;
                uint32_t* tet = m->tets + 4u * t;
                memcpy(tet, prism[k], sizeof prism[k]);
                const double* x[4];
                for (int c = 0; c < 4; ++c) x[c] = m->rest + 3u * tet[c];
                double vol;
                double quality = ps_tet_quality(x[0], x[1], x[2], x[3], &vol);
                m->tet_volume[t] = vol;
                /* (E E^T)^-1 of a flat tet blows up: it is left out of the strain energy. Flat
                 * and inverted ones above that keep their rest shape: they still tie their
                 * prism's corners together, where leaving them out frees hinge-like modes. */
                bool fitted = fit_matrix(x, m->tet_A + 12u * t);
                m->tet_excluded[t] = 0;
                if (!fitted || !(fabs(quality) > PS_DEGENERATE_QUALITY)) {
                    ++degenerate;
                    m->tet_excluded[t] = 1;
                    memset(m->tet_A + 12u * t, 0, 12u * sizeof(double));
                } else if (vol < 0.0) {
                    ++inverted;
                } else if (quality < PS_POOR_QUALITY) {
                    ++poor;
                }
            }
        }
        job->counts[3u * block] = degenerate;
        job->counts[3u * block + 1u] = inverted;
        job->counts[3u * block + 2u] = poor;
    }
}

sinew_result ps_tissue_build(const sinew_host_api* host, ps_model* m)
{
    uint32_t n = m->n, tc = m->triangle_count;
    m->tet_count = 3u * tc;
    /* Every entry of the tets' arrays is written by tet_blocks, in its jobs: no clearing first
     * (the first touch of fresh pages is a good part of their cost). */
    size_t tets = m->tet_count ? m->tet_count : 1u;
    m->tets = (uint32_t*)sinew_host_alloc(host, tets * 4u * sizeof(uint32_t));
    m->tet_A = (double*)sinew_host_alloc(host, tets * 12u * sizeof(double));
    m->tet_volume = (double*)sinew_host_alloc(host, tets * sizeof(double));
    m->tet_excluded = (uint8_t*)sinew_host_alloc(host, tets);
    m->vertex_tri_offsets = (uint32_t*)sinew_host_calloc(host, n + 1u, sizeof(uint32_t));
    m->vertex_tris = (uint32_t*)sinew_host_calloc(host, tc ? 3u * (size_t)tc : 1u, sizeof(uint32_t));
    if (!m->tets || !m->tet_A || !m->tet_volume || !m->tet_excluded || !m->vertex_tri_offsets ||
        !m->vertex_tris)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory for %u tets",
                               m->tet_count);
    uint8_t* below = (uint8_t*)sinew_host_calloc(host, tc ? tc : 1u, 1u);
    bool chosen = m->prism_split != NULL;
    if (!chosen) m->prism_split = (uint8_t*)sinew_host_calloc(host, tc ? tc : 1u, 1u);
    if (!below || !m->prism_split) {
        sinew_host_free(host, below);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
    }
    const uint8_t* order = m->prism_split;
    sinew_result r = ps_prism_orient(host, m, below);
    if (r == SINEW_OK && !chosen) r = ps_split_choose(host, m, below, m->prism_split);
    if (r != SINEW_OK) {
        sinew_host_free(host, below);
        return r;
    }
    uint32_t blocks = (tc + PS_TET_BLOCK - 1u) / PS_TET_BLOCK;
    uint32_t* counts =
        (uint32_t*)sinew_host_calloc(host, blocks ? 3u * blocks : 1u, sizeof(uint32_t));
    if (!counts) {
        sinew_host_free(host, below);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
    }
    tet_job job = {m, below, order, counts};
    sinew_host_parallel_for(host, tet_blocks, &job, blocks, 1u);
    uint32_t degenerate = 0, inverted = 0, poor = 0;
    for (uint32_t b = 0; b < blocks; ++b) {
        degenerate += counts[3u * b];
        inverted += counts[3u * b + 1u];
        poor += counts[3u * b + 2u];
    }
    sinew_host_free(host, counts);
    sinew_host_free(host, below);
    m->degenerate_count = degenerate;
    m->inverted_count = inverted;
    m->poor_count = poor;
    if (degenerate || inverted || poor)
        sinew_host_log(host, SINEW_LOG_WARNING,
                       "ps: %u of %u tetrahedra are inverted at rest and %u flat (quality below "
                       "%g; the shrunken skin folds there, they keep their rest shape as "
                       "target), %u degenerate (below %g, left out of the strain energy)",
                       inverted, m->tet_count, poor, PS_POOR_QUALITY, degenerate,
                       PS_DEGENERATE_QUALITY);
    /* Skin triangles around each vertex, for vertex normals. */
    for (uint32_t t = 0; t < tc; ++t)
        for (int k = 0; k < 3; ++k) m->vertex_tri_offsets[m->triangles[3u * t + k] + 1]++;
    for (uint32_t i = 0; i < n; ++i) m->vertex_tri_offsets[i + 1] += m->vertex_tri_offsets[i];
    uint32_t* cursor = (uint32_t*)sinew_host_calloc(host, n + 1u, sizeof(uint32_t));
    if (!cursor) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
    memcpy(cursor, m->vertex_tri_offsets, (n + 1u) * sizeof(uint32_t));
    for (uint32_t t = 0; t < tc; ++t)
        for (int k = 0; k < 3; ++k) m->vertex_tris[cursor[m->triangles[3u * t + k]]++] = t;
    sinew_host_free(host, cursor);
    return SINEW_OK;
}

sinew_result ps_vertex_tets_build(const sinew_host_api* host, const ps_model* m,
                                  ps_vertex_tets* out)
{
    size_t N = 2u * (size_t)m->n;
    out->offsets = out->corners = NULL;
    if (m->tet_count > UINT32_MAX / 4u) /* the corners' 4 t + c must fit */
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: %u tets are too many",
                               m->tet_count);
    out->offsets = (uint32_t*)sinew_host_calloc(host, N + 1u, sizeof(uint32_t));
    out->corners = (uint32_t*)sinew_host_alloc(host, m->tet_count ? 4u * (size_t)m->tet_count
                                                                   * sizeof(uint32_t) : 4u);
    uint32_t* cursor = (uint32_t*)sinew_host_alloc(host, (N + 1u) * sizeof(uint32_t));
    if (!out->offsets || !out->corners || !cursor) {
        sinew_host_free(host, cursor);
        ps_vertex_tets_free(host, out);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory for the "
                               "tets of %zu vertices", N);
    }
    for (uint32_t t = 0; t < m->tet_count; ++t)
        if (!m->tet_excluded[t])
            for (int c = 0; c < 4; ++c) out->offsets[m->tets[4u * t + c] + 1]++;
    for (size_t v = 0; v < N; ++v) out->offsets[v + 1] += out->offsets[v];
    memcpy(cursor, out->offsets, (N + 1u) * sizeof(uint32_t));
    for (uint32_t t = 0; t < m->tet_count; ++t)
        if (!m->tet_excluded[t])
            for (uint32_t c = 0; c < 4; ++c)
                out->corners[cursor[m->tets[4u * t + c]]++] = 4u * t + c;
    sinew_host_free(host, cursor);
    return SINEW_OK;
}

void ps_vertex_tets_free(const sinew_host_api* host, ps_vertex_tets* vt)
{
    sinew_host_free(host, vt->offsets);
    sinew_host_free(host, vt->corners);
    vt->offsets = vt->corners = NULL;
}

void ps_prism_slots(const ps_model* m, uint32_t p, uint32_t v[6])
{
    uint32_t a[3];
    memcpy(a, m->triangles + 3u * p, sizeof a);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2 - i; ++j)
            if (a[j] > a[j + 1]) {
                uint32_t t = a[j];
                a[j] = a[j + 1];
                a[j + 1] = t;
            }
    for (int k = 0; k < 3; ++k) {
        v[k] = a[k];
        v[k + 3] = m->n + a[k];
    }
}

double ps_prism_G(const ps_model* m, uint32_t p, const uint32_t v[6], double ws, double Gd[18],
                  double* strain_diag, double* volume)
{
    double wsum = 0.0;
    memset(Gd, 0, 18u * sizeof(double));
    for (uint32_t k = 0; k < 3; ++k) {
        uint32_t t = 3u * p + k;
        const uint32_t* tv = m->tets + 4u * t;
        double vol = fabs(m->tet_volume[t]);
        if (volume)
            for (int c = 0; c < 4; ++c) volume[tv[c]] += 0.25 * vol;
        if (m->tet_excluded[t]) continue;
        double w = ws * vol;
        wsum += w;
        const double* A = m->tet_A + 12u * t;
        for (int c = 0; c < 4; ++c) {
            int slot = 0;
            while (slot < 6 && v[slot] != tv[c]) ++slot;
            for (int r = 0; r < 3; ++r) {
                Gd[6 * r + slot] += w * A[4 * r + c];
                if (strain_diag) strain_diag[tv[c]] += w * A[4 * r + c] * A[4 * r + c];
            }
        }
    }
    return wsum;
}
