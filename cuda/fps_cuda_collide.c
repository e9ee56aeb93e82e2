/* The host half of fps-cuda's global collisions (fps_cuda_collide.h; Komaritzan and Botsch
 * 2019, Sec. 6). SPDX-License-Identifier: MIT
 *
 * Every rule of the detection and assembly is fps's (fps_collide.c, compiled into the plugin
 * with the rest of fps); the device reads its per-pair data through fps_collide_get_data. */
#include <stdint.h>
#include <string.h>

#include "fps_collide.h"

#include "fps_cuda_collide.h"
#include "fps_cuda_device.h"
#include "fps_internal.h"

/* ---- A + A_col for the device's products ---- */

size_t fpsc_merge_crs_size(const sinew_ellcrs* A, const sinew_crs* A_col)
{
    size_t count = A->crs_ptr[A->rows];
    if (!A_col || A_col->rows == 0) return count;
    if (A_col->rows != A->rows) return SIZE_MAX;
    for (uint32_t i = 0; i < A_col->rows; ++i)
        for (uint32_t e = A_col->ptr[i]; e < A_col->ptr[i + 1]; ++e)
            if (A_col->col[e] != i) ++count;
    return count;
}

int fpsc_merge_crs(const sinew_ellcrs* A, const sinew_crs* A_col, uint32_t* ptr, uint32_t* col,
                   double* val, size_t capacity)
{
    const int with_col = A_col && A_col->rows != 0;
    if (with_col && A_col->rows != A->rows) return 0;
    size_t k = 0;
    ptr[0] = 0;
    for (uint32_t i = 0; i < A->rows; ++i) {
        for (uint32_t e = A->crs_ptr[i]; e < A->crs_ptr[i + 1]; ++e) {
            if (k == capacity) return 0;
            col[k] = A->crs_col[e];
            val[k++] = A->crs_val[e];
        }
        /* fps_sim_set_collision_matrix's split: the diagonal went into A, the rest stays in
         * A_col's order */
        if (with_col)
            for (uint32_t e = A_col->ptr[i]; e < A_col->ptr[i + 1]; ++e) {
                uint32_t j = A_col->col[e];
                if (j == i) continue;
                if (j >= A->rows || k == capacity) return 0;
                col[k] = j;
                val[k++] = A_col->val[e];
            }
        if (k > UINT32_MAX) return 0;
        ptr[i + 1] = (uint32_t)k;
    }
    return 1;
}

/* ---- what the device may be given ---- */

const char* fpsc_col_check(uint32_t ns, uint32_t N, uint32_t triangle_count,
                           uint32_t bone_count, const fpsc_collisions* c)
{
    if (!c) return "the data are NULL";
    if (c->pair_count > c->stride) return "more pairs than contrib slots";
    if (c->pair_count && (!c->pair_row || !c->pair_tri)) return "pair arrays missing";
    if (!c->gather_ptr || !c->crs_ptr || !c->diagonal || !c->jinv) return "arrays missing";
    if (c->gather_ptr[0] != 0 || c->crs_ptr[0] != 0) return "row pointers do not start at 0";
    for (uint32_t i = 0; i < ns; ++i)
        if (c->gather_ptr[i + 1] < c->gather_ptr[i] || c->crs_ptr[i + 1] < c->crs_ptr[i])
            return "row pointers decrease";
    if ((c->gather_ptr[ns] && !c->gather) || (c->crs_ptr[ns] && (!c->crs_col || !c->crs_val)))
        return "entry arrays missing";
    for (uint32_t p = 0; p < c->pair_count; ++p)
        if (c->pair_row[p] >= N || c->pair_tri[p] >= triangle_count)
            return "a pair's row or triangle is out of range";
    /* fps_collide_rhs_row reads gather[e], + stride and + 2 stride of the 12 x stride contrib
     * array: gather[e] = 3 slot stride + pair (fps_collide.c's assemble), and only the pairs
     * below pair_count were written this iteration (a slot of another would add stale or
     * uninitialised shares) */
    for (uint32_t e = 0; e < c->gather_ptr[ns]; ++e) {
        uint32_t g = c->gather[e];
        if (c->stride == 0 || g % c->stride >= c->pair_count || (g / c->stride) % 3u != 0u ||
            g / c->stride >= 12u)
            return "a gather slot is not one of a pair's four";
    }
    for (uint32_t e = 0; e < c->crs_ptr[ns]; ++e)
        if (c->crs_col[e] >= ns) return "a matrix column is out of range";
    /* the limb capsules: per row a bone with a table, or none; as many rows as contacts */
    if (c->cap_count && (!c->cap_of_row || bone_count == 0)) return "capsule arrays missing";
    if (c->cap_of_row) {
        uint32_t held = 0;
        for (uint32_t i = 0; i < ns; ++i) {
            if (c->cap_of_row[i] == FPS_COLLIDE_NONE) continue;
            if (c->cap_of_row[i] >= bone_count) return "a capsule contact's bone is out of range";
            ++held;
        }
        if (held != c->cap_count) return "the capsule contacts do not match their count";
    }
    return NULL;
}

/* ---- per step ---- */

struct fpsc_col_host {
    sinew_host_api host;
    fps_sim* sim;
    fps_collide* col;
    fps_sim_arrays a;
    double* x;        /* N x 3: the prediction */
    double* scratch;  /* N x 3: fps_predict_row's x_prev and pred, unused */
    uint32_t* m_ptr;  /* ns + 1: the merged CRS part */
    uint32_t* cap_of_row; /* ns: the bone of each row's capsule contact (NULL without capsules) */
    uint32_t* m_col;
    double* m_val;
    size_t m_capacity;
};

void fpsc_col_host_destroy(fpsc_col_host* h)
{
    if (!h) return;
    sinew_host_api host = h->host;
    void* arrays[] = {h->x, h->scratch, h->m_ptr, h->m_col, h->m_val, h->cap_of_row};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) sinew_host_free(&host, arrays[i]);
    sinew_host_free(&host, h);
}

sinew_result fpsc_col_host_create(const sinew_host_api* host, fps_sim* sim, fpsc_col_host** out)
{
    if (out) *out = NULL;
    if (!host || !out || !sim || !fps_sim_collide(sim))
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps-cuda collisions: %s", !host ? "host is NULL"
                               : !out                   ? "out is NULL"
                               : !sim                   ? "the simulation is NULL"
                                      : "the simulation was prepared without collisions");
    fpsc_col_host* h = (fpsc_col_host*)sinew_host_calloc(host, 1, sizeof *h);
    if (!h)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps-cuda collisions: out of "
                               "memory");
    h->host = *host;
    h->sim = sim;
    h->col = fps_sim_collide(sim);
    fps_sim_arrays_get(sim, &h->a);
    size_t N3 = 3u * (size_t)h->a.N;
    h->x = (double*)sinew_host_calloc(host, N3 ? N3 : 1u, sizeof(double));
    h->scratch = (double*)sinew_host_calloc(host, N3 ? N3 : 1u, sizeof(double));
    h->m_ptr = (uint32_t*)sinew_host_calloc(host, (size_t)h->a.ns + 1u, sizeof(uint32_t));
    fps_collide_data ex;
    int capsules = fps_collide_get_data(host, h->col, &ex) == SINEW_OK && ex.cap_frame;
    if (capsules)
        h->cap_of_row = (uint32_t*)sinew_host_calloc(host, (size_t)h->a.ns + 1u, sizeof(uint32_t));
    if (!h->x || !h->scratch || !h->m_ptr || (capsules && !h->cap_of_row)) {
        const uint32_t N = h->a.N; /* the message names it after h is gone */
        fpsc_col_host_destroy(h);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps-cuda collisions: out of "
                               "memory for %u tissue vertices", N);
    }
    *out = h;
    return SINEW_OK;
}

sinew_result fpsc_col_host_step(fpsc_col_host* h, const double* x, const double* v, int* changed)
{
    if (changed) *changed = 0;
    if (!h || !x || !v || !changed)
        return sinew_host_fail(h ? &h->host : NULL, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps-cuda collisions: step with a NULL argument");
    const fps_sim_arrays* a = &h->a;
    const uint32_t N = a->N;
    memcpy(h->x, x, 3u * (size_t)N * sizeof(double));
    /* Alg. 1 lines 1-2 as the device's prediction does them (ph_predict): the same function
     * and the same targets, so detection sees the device's positions bit for bit */
    for (uint32_t j = 0; j < N; ++j) {
        fps_predict_row(h->x, v, h->scratch, h->scratch, N, j, a->h);
        if (j >= a->ns)
            for (int c = 0; c < 3; ++c)
                h->x[(size_t)c * N + j] = a->target[(size_t)c * N + a->perm[j]];
    }
    /* Sec. 6, as fps_sim_step: A + A_col changes only with the pairs */
    sinew_result r = fps_collide_update(h->col, h->x, N, changed);
    if (r == SINEW_OK && *changed) {
        sinew_crs m = fps_collide_matrix(h->col);
        uint32_t held = fps_collide_pair_count(h->col) + fps_collide_capsule_count(h->col);
        r = fps_sim_set_collision_matrix(h->sim, held ? &m : NULL);
    }
    if (r != SINEW_OK) {
        /* the host and the device drop every pair alike (fps_collide_update has reset its
         * pairs; the matrix follows) */
        fps_collide_reset(h->col);
        (void)fps_sim_set_collision_matrix(h->sim, NULL);
        *changed = 1;
    }
    return r;
}

const double* fpsc_col_host_predicted(const fpsc_col_host* h)
{
    return h ? h->x : NULL;
}

sinew_result fpsc_col_host_collisions(fpsc_col_host* h, fpsc_collisions* out)
{
    if (!h || !out)
        return sinew_host_fail(h ? &h->host : NULL, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps-cuda collisions: collisions with a NULL argument");
    const sinew_host_api* host = &h->host;
    fps_collide_data ex;
    memset(&ex, 0, sizeof ex);
    sinew_result r = fps_collide_get_data(host, h->col, &ex);
    if (r != SINEW_OK) return r;
    sinew_crs acol = fps_collide_matrix(h->col);
    const sinew_crs* pa = ex.pair_count || ex.cap_count ? &acol : NULL;
    size_t need = fpsc_merge_crs_size(&h->a.A, pa);
    if (need == SIZE_MAX || need > UINT32_MAX || ex.stride > UINT32_MAX)
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_FAILED,
                               "fps-cuda collisions: a collision matrix of %u rows (%zu entries) "
                               "for %u unknowns", acol.rows, need, h->a.ns);
    if (need > h->m_capacity) {
        size_t cap = need + need / 2u + 64u;
        uint32_t* c = (uint32_t*)sinew_host_calloc(host, cap, sizeof(uint32_t));
        double* v = (double*)sinew_host_calloc(host, cap, sizeof(double));
        if (!c || !v) {
            sinew_host_free(host, c);
            sinew_host_free(host, v);
            return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps-cuda collisions: out "
                                   "of memory for %zu matrix entries", cap);
        }
        sinew_host_free(host, h->m_col);
        sinew_host_free(host, h->m_val);
        h->m_col = c;
        h->m_val = v;
        h->m_capacity = cap;
    }
    if (!fpsc_merge_crs(&h->a.A, pa, h->m_ptr, h->m_col, h->m_val, h->m_capacity))
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_FAILED,
                               "fps-cuda collisions: the collision matrix has a column outside "
                               "the %u unknowns", h->a.ns);
    memset(out, 0, sizeof *out);
    out->pair_count = ex.pair_count;
    out->stride = (uint32_t)ex.stride;
    out->pair_row = ex.pair_row;
    out->pair_tri = ex.pair_tri;
    out->gather_ptr = ex.gather_ptr;
    out->gather = ex.gather;
    out->crs_ptr = h->m_ptr;
    out->crs_col = h->m_col;
    out->crs_val = h->m_val;
    /* fps_sim_set_collision_matrix wrote A's diagonal (ELL entry 0, Sec. 6) and J in place */
    out->diagonal = h->a.A.ell_val;
    out->jinv = h->a.jinv;
    if (h->cap_of_row) {
        /* the contacts (at most one per skin vertex) as a per-row table, for the row threads
         * of the right-hand side */
        for (uint32_t i = 0; i < h->a.ns; ++i) h->cap_of_row[i] = FPS_COLLIDE_NONE;
        for (uint32_t q = 0; q < ex.cap_count; ++q) {
            if (ex.cap_row[q] >= h->a.ns || ex.cap_bone[q] >= ex.bone_count)
                return sinew_host_fail(host, SINEW_ERROR_BACKEND_FAILED,
                                       "fps-cuda collisions: capsule contact %u (row %u, bone %u) "
                                       "is out of range", q, ex.cap_row[q], ex.cap_bone[q]);
            h->cap_of_row[ex.cap_row[q]] = ex.cap_bone[q];
        }
        out->cap_count = ex.cap_count;
        out->cap_of_row = h->cap_of_row;
    }
    return SINEW_OK;
}

const double* fpsc_col_host_capsule_pose(const fpsc_col_host* h)
{
    if (!h || !h->cap_of_row) return NULL;
    fps_collide_data ex;
    return fps_collide_get_data(&h->host, h->col, &ex) == SINEW_OK ? ex.cap_pose : NULL;
}
