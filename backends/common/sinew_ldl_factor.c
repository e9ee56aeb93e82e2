/* The numeric LDL^T factorization of sinew_ldl_refactor on a solver's own pattern: the
 * up-looking algorithm (row j of L by a sparse triangular solve with the rows above it, its
 * pattern the reach of row j of A along the elimination tree; Davis, "Direct Methods for Sparse
 * Linear Systems", 2006, Sec. 4.7). A part's rows reach only its own columns, so the parts run
 * on their own threads and the top's rows after them, as in the solve.
 * SPDX-License-Identifier: MIT */
#include "sinew_ldl_internal.h"

#include <math.h>
#include <string.h>

/* The factor is written into the parts' next_values and next_diag and swapped in when every
 * row has met its pattern, so a refused matrix leaves the solver as it was. */

/* One thread's scratch: the dense row being solved (zero between rows), the elimination tree's
 * marks (the row last visited from), the reach in topological order and a path. */
typedef struct row_scratch {
    double* y;
    int32_t* mark;
    uint32_t* stack;
    uint32_t* path;
} row_scratch;

typedef struct factor_job {
    sinew_ldl* s;
    const sinew_crs* A;
    uint32_t* fill; /* each factor column's next entry, a position in its part's arrays */
    row_scratch scratch[SINEW_LDL_PARTS];
    int ok[LDL_COUNT];
} factor_job;

static uint32_t part_index(const sinew_ldl* s, uint32_t j)
{
    return s->col_part[j];
}

/* Pushes the path from column f up to row j (exclusive) onto the reach; 0 when the path leaves
 * part `own` (a part's row) or passes j: A's factor has another pattern. */
static int reach_from(const sinew_ldl* s, uint32_t f, uint32_t j, uint32_t own, row_scratch* w,
                      uint32_t* top)
{
    uint32_t len = 0;
    for (uint32_t i = f; w->mark[i] != (int32_t)j;) {
        if (own != SINEW_LDL_PARTS && part_index(s, i) != own) return 0;
        w->path[len++] = i;
        w->mark[i] = (int32_t)j;
        int32_t up = s->parent[i];
        if (up < 0 || (uint32_t)up > j) return 0;
        i = (uint32_t)up;
    }
    while (len > 0) w->stack[--*top] = w->path[--len];
    return 1;
}

/* Row j of L and D_jj: y = row j of A above the diagonal, solved column by column along the
 * reach; each L_ji goes to column i's next entry, which must be row j. */
static int factor_row(factor_job* job, uint32_t j, uint32_t own, row_scratch* w)
{
    sinew_ldl* s = job->s;
    const sinew_crs* A = job->A;
    const uint32_t o = (uint32_t)s->perm[j];
    uint32_t top = s->n;
    double d = 0.0;
    w->mark[j] = (int32_t)j;
    for (uint32_t e = A->ptr[o]; e < A->ptr[o + 1u]; ++e) {
        uint32_t f = (uint32_t)s->inv[A->col[e]];
        if (f == j) d += A->val[e];
        if (f >= j) continue;
        w->y[f] += A->val[e];
        if (!reach_from(s, f, j, own, w, &top)) return 0;
    }
    for (; top < s->n; ++top) {
        const uint32_t i = w->stack[top], q = part_index(s, i);
        ldl_part* P = &s->part[q];
        const uint32_t c = s->local[i];
        const double yi = w->y[i];
        w->y[i] = 0.0;
        const uint32_t* rows = s->entry_row[q];
        for (uint32_t e = P->ptr[c]; e < job->fill[i]; ++e)
            w->y[rows[e]] -= P->next_values[e] * yi;
        const double l = yi / P->next_diag[c];
        d -= l * yi;
        if (job->fill[i] >= P->ptr[c + 1u] || rows[job->fill[i]] != j) return 0;
        P->next_values[job->fill[i]++] = l;
    }
    if (!isfinite(d) || d == 0.0) return 0;
    s->part[part_index(s, j)].next_diag[s->local[j]] = d;
    return 1;
}

/* The rows of part (or top) q in increasing order, with thread scratch w. */
static int factor_part(factor_job* job, uint32_t q, row_scratch* w)
{
    const ldl_part* P = &job->s->part[q];
    for (uint32_t c = 0; c < P->m; ++c)
        if (!factor_row(job, P->cols[c], q, w)) return 0;
    return 1;
}

static void part_range(void* data, uint32_t begin, uint32_t end)
{
    factor_job* job = (factor_job*)data;
    for (uint32_t q = begin; q < end; ++q) job->ok[q] = factor_part(job, q, &job->scratch[q]);
}

/* Every column filled to its end: the rows met every entry of the pattern. */
static int all_filled(const factor_job* job)
{
    const sinew_ldl* s = job->s;
    for (uint32_t j = 0; j < s->n; ++j) {
        const ldl_part* P = &s->part[part_index(s, j)];
        if (job->fill[j] != P->ptr[s->local[j] + 1u]) return 0;
    }
    return 1;
}

static void free_job(const sinew_host_api* host, factor_job* job)
{
    sinew_host_free(host, job->fill);
    for (uint32_t q = 0; q < SINEW_LDL_PARTS; ++q) {
        sinew_host_free(host, job->scratch[q].y);
        sinew_host_free(host, job->scratch[q].mark);
        sinew_host_free(host, job->scratch[q].stack);
        sinew_host_free(host, job->scratch[q].path);
    }
}

/* The columns' first entries and each thread's cleared scratch; 0 when out of memory. */
static int start_job(sinew_ldl* s, factor_job* job)
{
    const sinew_host_api* host = &s->host;
    const uint32_t n = s->n;
    job->fill = (uint32_t*)sinew_host_alloc(host, n * sizeof(uint32_t));
    int ok = job->fill != NULL;
    for (uint32_t q = 0; q < SINEW_LDL_PARTS; ++q) {
        row_scratch* w = &job->scratch[q];
        w->y = (double*)sinew_host_calloc(host, n, sizeof(double));
        w->mark = (int32_t*)sinew_host_alloc(host, n * sizeof(int32_t));
        w->stack = (uint32_t*)sinew_host_alloc(host, n * sizeof(uint32_t));
        w->path = (uint32_t*)sinew_host_alloc(host, n * sizeof(uint32_t));
        ok = ok && w->y && w->mark && w->stack && w->path;
        if (w->mark) memset(w->mark, 0xFF, n * sizeof(int32_t));
    }
    for (uint32_t q = 0; q < LDL_COUNT; ++q) {
        ldl_part* P = &s->part[q];
        if (!P->next_values)
            P->next_values =
                (double*)sinew_host_alloc(host, ((size_t)P->ptr[P->m] + 1u) * sizeof(double));
        if (!P->next_diag)
            P->next_diag = (double*)sinew_host_alloc(host, (P->m + 1u) * sizeof(double));
        ok = ok && P->next_values && P->next_diag;
    }
    for (uint32_t j = 0; ok && j < n; ++j)
        job->fill[j] = s->part[part_index(s, j)].ptr[s->local[j]];
    return ok;
}

/* The new factor becomes the solver's; the old one's arrays take the next refactor. */
static void swap_in(sinew_ldl* s)
{
    for (uint32_t q = 0; q < LDL_COUNT; ++q) {
        ldl_part* P = &s->part[q];
        double* v = P->values;
        double* d = P->diag;
        P->values = P->next_values;
        P->diag = P->next_diag;
        P->next_values = v;
        P->next_diag = d;
    }
}

sinew_result sinew_ldl_refactor(sinew_ldl* s, const sinew_crs* A)
{
    if (!s) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!A || !A->ptr || !A->col || !A->val)
        return sinew_host_fail(&s->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "ldl: refactoring without a matrix");
    if (A->rows != s->n)
        return sinew_host_fail(&s->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "ldl: refactoring a matrix of %u rows with a factor of %u",
                               A->rows, s->n);
    for (uint32_t e = 0; e < A->ptr[A->rows]; ++e)
        if (A->col[e] >= s->n)
            return sinew_host_fail(&s->host, SINEW_ERROR_INVALID_ARGUMENT,
                                   "ldl: the matrix has column %u of %u", A->col[e], s->n);
    factor_job job;
    memset(&job, 0, sizeof job);
    job.s = s;
    job.A = A;
    sinew_result r = SINEW_OK;
    if (!start_job(s, &job)) {
        r = sinew_host_fail(&s->host, SINEW_ERROR_OUT_OF_MEMORY, "ldl: out of memory (%u columns)",
                            s->n);
    } else {
        sinew_host_parallel_for(&s->host, part_range, &job, SINEW_LDL_PARTS, 1u);
        int ok = 1;
        for (uint32_t q = 0; q < SINEW_LDL_PARTS; ++q) ok = ok && job.ok[q];
        /* the top's rows reach every part: after them, on the calling thread */
        ok = ok && factor_part(&job, SINEW_LDL_PARTS, &job.scratch[0]);
        if (ok && all_filled(&job)) swap_in(s);
        else r = SINEW_ERROR_INVALID_ARGUMENT;
    }
    free_job(&s->host, &job);
    return r;
}
