/* The direct solver of `fps`: CHOLMOD's simplicial LDL^T with AMD ordering of the reduced
 * system (fast projective skinning Sec. 4.3), analysed once. The solves run on a copy of the
 * factor cut into two parts that two threads substitute at once (sinew_ldl.h). A changed matrix
 * (collisions, Sec. 6: A + A_col) is refactored by sinew_ldl_refactor on that copy, the parts
 * on two threads, when its factor keeps the pattern, else by CHOLMOD on the kept analysis and
 * copied anew. Only CHOLMOD's Core and Cholesky modules are called (LGPL):
 * no cholmod_updown (Modify, GPL).
 * SPDX-License-Identifier: MIT */
#include <string.h>

#include <cholmod.h>

#include "fps_internal.h"
#include "sinew_ldl_cholmod.h"

struct fps_cholmod {
    sinew_host_api host;
    cholmod_common cc;
    int started;
    uint32_t n;
    cholmod_sparse* K; /* lower triangle, compressed columns */
    cholmod_factor* L;
    sinew_ldl* ldl; /* L's solves */
    /* the pattern of the matrix last factored (its CRS ptr and col), which a matrix must
     * repeat for sinew_ldl_refactor */
    uint32_t* pattern_ptr;
    uint32_t* pattern_col;
    size_t pattern_room;
};

static sinew_result fail(fps_cholmod* c, const char* what)
{
    return sinew_host_fail(&c->host, SINEW_ERROR_BACKEND_FAILED,
                           "fps: CHOLMOD %s failed (status %d) for %u unknowns", what, c->cc.status,
                           c->n);
}

void fps_cholmod_destroy(fps_cholmod* c)
{
    if (!c) return;
    sinew_host_api host = c->host;
    if (c->started) {
        cholmod_free_sparse(&c->K, &c->cc);
        cholmod_free_factor(&c->L, &c->cc);
        cholmod_finish(&c->cc);
    }
    sinew_ldl_destroy(c->ldl);
    sinew_host_free(&host, c->pattern_ptr);
    sinew_host_free(&host, c->pattern_col);
    sinew_host_free(&host, c);
}

/* Whether K has the pattern of the matrix last factored. */
static int same_pattern(const fps_cholmod* c, const sinew_crs* K)
{
    return c->pattern_ptr && memcmp(c->pattern_ptr, K->ptr, ((size_t)c->n + 1u) * 4u) == 0 &&
           memcmp(c->pattern_col, K->col, (size_t)K->ptr[c->n] * 4u) == 0;
}

/* Keeps K's pattern as the one last factored (forgotten when out of memory). */
static void keep_pattern(fps_cholmod* c, const sinew_crs* K)
{
    const size_t nnz = K->ptr[c->n];
    if (!c->pattern_ptr)
        c->pattern_ptr = (uint32_t*)sinew_host_alloc(&c->host, ((size_t)c->n + 1u) * 4u);
    if (nnz > c->pattern_room) {
        sinew_host_free(&c->host, c->pattern_col);
        c->pattern_room = nnz + nnz / 4u + 16u;
        c->pattern_col = (uint32_t*)sinew_host_alloc(&c->host, c->pattern_room * 4u);
    }
    if (!c->pattern_ptr || !c->pattern_col) {
        sinew_host_free(&c->host, c->pattern_ptr);
        sinew_host_free(&c->host, c->pattern_col);
        c->pattern_ptr = c->pattern_col = NULL;
        c->pattern_room = 0;
        return;
    }
    memcpy(c->pattern_ptr, K->ptr, ((size_t)c->n + 1u) * 4u);
    memcpy(c->pattern_col, K->col, nnz * 4u);
}

/* The lower triangle of a symmetric CRS matrix as CHOLMOD compressed columns: column j holds
 * the entries (i, j), i >= j, which by symmetry are row j's entries with column >= j. */
static cholmod_sparse* to_lower(fps_cholmod* c, const sinew_crs* K)
{
    size_t nz = 0;
    for (uint32_t j = 0; j < K->rows; ++j)
        for (uint32_t e = K->ptr[j]; e < K->ptr[j + 1]; ++e) nz += K->col[e] >= j;
    cholmod_sparse* A = cholmod_allocate_sparse(K->rows, K->rows, nz, 1, 1, -1, CHOLMOD_REAL, &c->cc);
    if (!A) return NULL;
    int* p = (int*)A->p;
    int* i = (int*)A->i;
    double* x = (double*)A->x;
    size_t k = 0;
    for (uint32_t j = 0; j < K->rows; ++j) {
        p[j] = (int)k;
        for (uint32_t e = K->ptr[j]; e < K->ptr[j + 1]; ++e) {
            if (K->col[e] < j) continue;
            i[k] = (int)K->col[e];
            x[k++] = K->val[e];
        }
    }
    p[K->rows] = (int)k;
    return A;
}

sinew_result fps_cholmod_create(const sinew_host_api* host, const sinew_crs* K, fps_cholmod** out)
{
    *out = NULL;
    fps_cholmod* c = (fps_cholmod*)sinew_host_calloc(host, 1, sizeof *c);
    if (!c) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps: out of memory");
    c->host = *host;
    c->n = K->rows;
    /* simplicial LDL^T with AMD only: on these meshes it solves faster than a supernodal
     * factor (README.md, "Figures") */
    sinew_cholmod_start_ldl(&c->cc);
    c->started = 1;
    c->K = to_lower(c, K);
    sinew_result r = SINEW_OK;
    if (!c->K) r = fail(c, "allocate_sparse");
    if (r == SINEW_OK && !(c->L = cholmod_analyze(c->K, &c->cc))) r = fail(c, "analyze");
    if (r == SINEW_OK && (!cholmod_factorize(c->K, c->L, &c->cc) || c->cc.status != CHOLMOD_OK))
        r = fail(c, "factorize");
    if (r == SINEW_OK) r = sinew_ldl_from_cholmod(host, NULL, c->L, &c->ldl);
    if (r == SINEW_OK) keep_pattern(c, K);
    if (r != SINEW_OK) {
        fps_cholmod_destroy(c);
        return r;
    }
    *out = c;
    return SINEW_OK;
}

sinew_result fps_cholmod_refactor(fps_cholmod* c, const sinew_crs* K)
{
    if (!K || K->rows != c->n)
        return sinew_host_fail(&c->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps: refactoring a matrix of %u rows with a factor of %u",
                               K ? K->rows : 0u, c->n);
    /* most changes of the contacts (capsules, pairs' weights) keep the matrix's pattern, and
     * so the factor's: a numeric factorization over the solver's parts, on the host's jobs */
    sinew_result r = same_pattern(c, K) ? sinew_ldl_refactor(c->ldl, K)
                                        : SINEW_ERROR_INVALID_ARGUMENT;
    if (r != SINEW_ERROR_INVALID_ARGUMENT) return r;
    cholmod_sparse* A = to_lower(c, K);
    if (!A) return fail(c, "allocate_sparse");
    /* cholmod_factorize keeps L's permutation and symbolic data; a simplicial LDL^T factor
     * takes the new values (and any new entries) in a numeric pass. */
    int ok = cholmod_factorize(A, c->L, &c->cc) && c->cc.status == CHOLMOD_OK;
    if (!ok) {
        cholmod_free_sparse(&A, &c->cc);
        return fail(c, "factorize (refactorization)");
    }
    cholmod_free_sparse(&c->K, &c->cc);
    c->K = A;
    sinew_ldl* ldl = NULL;
    r = sinew_ldl_from_cholmod(&c->host, NULL, c->L, &ldl);
    if (r != SINEW_OK) return r;
    sinew_ldl_destroy(c->ldl);
    c->ldl = ldl;
    keep_pattern(c, K);
    return SINEW_OK;
}

sinew_result fps_cholmod_solve(fps_cholmod* c, const double* b, size_t ldb, double* x, size_t ldx)
{
    sinew_ldl_solve(c->ldl, b, ldb, x, ldx);
    return SINEW_OK;
}

void fps_cholmod_solve_with(fps_cholmod* c, sinew_ldl_rhs_fn fn, void* user, double* x,
                            size_t ldx)
{
    sinew_ldl_solve_with(c->ldl, fn, user, x, ldx);
}

const sinew_ldl* fps_cholmod_solver(const fps_cholmod* c)
{
    return c ? c->ldl : NULL;
}

size_t fps_cholmod_factor_nnz(const fps_cholmod* c)
{
    if (!c || !c->L || c->L->is_super) return 0u;
    const int* colcount = (const int*)c->L->nz;
    size_t total = 0;
    for (size_t j = 0; j < c->L->n; ++j) total += (size_t)colcount[j];
    return total;
}
