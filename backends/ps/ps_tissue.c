/* The volumetric tissue mesh (projective skinning Sec. 3.3) and the rest data of its strain
 * constraints (Sec. 4.1). SPDX-License-Identifier: MIT */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ps_internal.h"

/* A tet whose volume is below PS_DEGENERATE_QUALITY of its longest edge cubed (a prism tet of
 * height h over edges L has about h / (6 L)) is degenerate: its (E E^T)^-1 would blow up, so
 * it is left out of the strain energy. */

/* Sec. 3.3: the quad over a prism edge (u, v), u < v, splits along u-v'. With a < b < c in
 * slots 0-2 and their base copies in slots 3-5 this gives the 3 tets below (ordered so that
 * all three have the same orientation), and two prisms sharing an edge split their common
 * quad the same way. */
const uint8_t ps_tet_slots[3][4] = {{0, 1, 2, 5}, {0, 1, 5, 4}, {0, 3, 4, 5}};

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

sinew_result ps_tissue_build(const sinew_host_api* host, ps_model* m)
{
    uint32_t n = m->n, tc = m->triangle_count;
    m->tet_count = 3u * tc;
    m->tets = (uint32_t*)sinew_host_calloc(host, m->tet_count ? m->tet_count : 1u, 4u * sizeof(uint32_t));
    m->tet_A = (double*)sinew_host_calloc(host, m->tet_count ? m->tet_count : 1u, 12u * sizeof(double));
    m->tet_volume = (double*)sinew_host_calloc(host, m->tet_count ? m->tet_count : 1u, sizeof(double));
    m->tet_excluded = (uint8_t*)sinew_host_calloc(host, m->tet_count ? m->tet_count : 1u, 1u);
    m->vertex_tri_offsets = (uint32_t*)sinew_host_calloc(host, n + 1u, sizeof(uint32_t));
    m->vertex_tris = (uint32_t*)sinew_host_calloc(host, tc ? 3u * (size_t)tc : 1u, sizeof(uint32_t));
    if (!m->tets || !m->tet_A || !m->tet_volume || !m->tet_excluded || !m->vertex_tri_offsets ||
        !m->vertex_tris)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory for %u tets",
                               m->tet_count);
    uint32_t degenerate = 0, inverted = 0, poor = 0;
    for (uint32_t p = 0; p < tc; ++p) {
        uint32_t v[3];
        memcpy(v, m->triangles + 3u * p, sizeof v);
        /* The orientation the skin gives the prism: the base lies below the outward side of
         * the triangle as wound in the mesh. Sorting the corners may flip the winding. */
        const double* x0 = m->rest + 3u * v[0];
        const double* x1 = m->rest + 3u * v[1];
        const double* x2 = m->rest + 3u * v[2];
        double e1[3], e2[3], nrm[3], down[3];
        for (int k = 0; k < 3; ++k) {
            e1[k] = x1[k] - x0[k];
            e2[k] = x2[k] - x0[k];
            down[k] = (m->rest[3u * ((size_t)n + v[0]) + k] + m->rest[3u * ((size_t)n + v[1]) + k] +
                       m->rest[3u * ((size_t)n + v[2]) + k] - x0[k] - x1[k] - x2[k]) / 3.0;
        }
        nrm[0] = e1[1] * e2[2] - e1[2] * e2[1];
        nrm[1] = e1[2] * e2[0] - e1[0] * e2[2];
        nrm[2] = e1[0] * e2[1] - e1[1] * e2[0];
        bool downward = nrm[0] * down[0] + nrm[1] * down[1] + nrm[2] * down[2] <= 0.0;
        /* sort a < b < c; each swap flips the winding */
        bool flipped = false;
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2 - i; ++j)
                if (v[j] > v[j + 1]) {
                    uint32_t t = v[j];
                    v[j] = v[j + 1];
                    v[j + 1] = t;
                    flipped = !flipped;
                }
        uint32_t slot[6] = {v[0], v[1], v[2], n + v[0], n + v[1], n + v[2]};
        /* With the base below a counter-clockwise (a, b, c), tet (a, b, c, c') has negative
         * volume; the expected sign of every tet of this prism in slot order is therefore: */
        double expected = (downward != flipped) ? -1.0 : 1.0;
        for (int k = 0; k < 3; ++k) {
            uint32_t t = 3u * p + (uint32_t)k;
            uint32_t* tet = m->tets + 4u * t;
            for (int c = 0; c < 4; ++c) tet[c] = slot[ps_tet_slots[k][c]];
            const double* x[4];
            for (int c = 0; c < 4; ++c) x[c] = m->rest + 3u * tet[c];
            double vol = signed_volume(x[0], x[1], x[2], x[3]);
            /* Consistent orientation: every well-formed tet is stored with positive volume. */
            if (expected < 0.0) {
                uint32_t tmp = tet[0];
                tet[0] = tet[1];
                tet[1] = tmp;
                const double* tx = x[0];
                x[0] = x[1];
                x[1] = tx;
                vol = -vol;
            }
            double lmax2 = 0.0;
            for (int a = 0; a < 4; ++a)
                for (int b = a + 1; b < 4; ++b) {
                    double d2 = 0.0;
                    for (int q = 0; q < 3; ++q) d2 += (x[a][q] - x[b][q]) * (x[a][q] - x[b][q]);
                    lmax2 = fmax(lmax2, d2);
                }
            double lmax = sqrt(lmax2);
            m->tet_volume[t] = vol;
            bool degen = !(fabs(vol) > PS_DEGENERATE_QUALITY * lmax * lmax * lmax) ||
                         !fit_matrix(x, m->tet_A + 12u * t);
            if (degen) {
                m->tet_excluded[t] = 1;
                memset(m->tet_A + 12u * t, 0, 12u * sizeof(double));
                ++degenerate;
            } else if (vol < 0.0) {
                ++inverted;
            } else if (vol < PS_POOR_QUALITY * lmax * lmax * lmax) {
                ++poor;
            }
        }
    }
    m->degenerate_count = degenerate;
    m->inverted_count = inverted;
    m->poor_count = poor;
    if (degenerate || inverted)
        sinew_host_log(host, SINEW_LOG_WARNING,
                       "ps: %u of %u tetrahedra are degenerate (left out of the strain energy) "
                       "and %u are inverted at rest (the shrunken skin folds there; they keep "
                       "their rest shape as target)", degenerate, m->tet_count, inverted);
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
