/* Two-part triangular solves with a simplicial LDL^T factor (sinew_ldl.h says what and why).
 * SPDX-License-Identifier: MIT */
#include "sinew_ldl_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the cut of the elimination tree ---- */

typedef struct ldl_tree {
    uint32_t n;
    const int32_t* parent; /* -1 for a root */
    const uint32_t* child_start;
    const uint32_t* child;
    const double* weight; /* entries in the subtree */
} ldl_tree;

typedef struct ldl_heap {
    uint32_t* item;
    uint32_t count;
    const double* key;
} ldl_heap;

/* Heaviest subtree first; equal weights by smaller column. */
static int heap_before(const ldl_heap* h, uint32_t a, uint32_t b)
{
    double ka = h->key[a], kb = h->key[b];
    return ka > kb || (ka == kb && a < b);
}

static void heap_push(ldl_heap* h, uint32_t v)
{
    uint32_t i = h->count++;
    while (i > 0 && heap_before(h, v, h->item[(i - 1u) / 2u])) {
        h->item[i] = h->item[(i - 1u) / 2u];
        i = (i - 1u) / 2u;
    }
    h->item[i] = v;
}

static uint32_t heap_pop(ldl_heap* h)
{
    uint32_t top = h->item[0], v = h->item[--h->count], i = 0;
    for (;;) {
        uint32_t c = 2u * i + 1u;
        if (c >= h->count) break;
        if (c + 1u < h->count && heap_before(h, h->item[c + 1u], h->item[c])) ++c;
        if (!heap_before(h, h->item[c], v)) break;
        h->item[i] = h->item[c];
        i = c;
    }
    if (h->count) h->item[i] = v;
    return top;
}

/* How many of the heaviest subtrees go into the top: expanding them one by one (a column
 * joins the top, its children become subtrees of their own), the count that minimises the
 * top's entries plus max(heaviest subtree, all subtrees / parts), the slower part's bound. */
static uint32_t cut_depth(const ldl_tree* t, ldl_heap* h, uint32_t* order)
{
    double below = 0.0, top = 0.0;
    h->count = 0;
    for (uint32_t j = 0; j < t->n; ++j)
        if (t->parent[j] < 0) {
            heap_push(h, j);
            below += t->weight[j];
        }
    double best = INFINITY;
    uint32_t best_depth = 0;
    for (uint32_t d = 0; h->count > 0 && top < best; ++d) {
        double part = below / SINEW_LDL_PARTS, heaviest = t->weight[h->item[0]];
        double cost = top + (heaviest > part ? heaviest : part);
        if (cost < best) {
            best = cost;
            best_depth = d;
        }
        uint32_t j = heap_pop(h);
        order[d] = j;
        double own = t->weight[j];
        for (uint32_t c = t->child_start[j]; c < t->child_start[j + 1u]; ++c) {
            heap_push(h, t->child[c]);
            own -= t->weight[t->child[c]];
        }
        top += own;
        below -= own;
    }
    return best_depth;
}

/* part_of[j]: the part of column j, or LDL_TOP. The `depth` heaviest subtrees of cut_depth go
 * into the top; the subtrees left hang below it and go, heaviest first, to the part with
 * the fewest entries so far. */
static void cut_assign(const ldl_tree* t, ldl_heap* h, const uint32_t* order, uint32_t depth,
                       uint32_t* part_of)
{
    const uint32_t unset = LDL_TOP - 1u;
    for (uint32_t j = 0; j < t->n; ++j) part_of[j] = unset;
    for (uint32_t d = 0; d < depth; ++d) part_of[order[d]] = LDL_TOP;
    h->count = 0;
    for (uint32_t j = 0; j < t->n; ++j)
        if (part_of[j] != LDL_TOP && (t->parent[j] < 0 || part_of[t->parent[j]] == LDL_TOP))
            heap_push(h, j);
    double load[SINEW_LDL_PARTS] = {0.0};
    while (h->count > 0) {
        uint32_t j = heap_pop(h), k = 0;
        for (uint32_t q = 1; q < SINEW_LDL_PARTS; ++q)
            if (load[q] < load[k]) k = q;
        load[k] += t->weight[j];
        part_of[j] = k;
    }
    for (uint32_t j = t->n; j-- > 0;)
        if (part_of[j] == unset) part_of[j] = part_of[t->parent[j]];
}

/* Every entry below the diagonal lies in its column's part or in the top, and a top column's
 * entries in the top: what the parts' independence needs. */
static int cut_valid(const sinew_ldl_view* L, const uint32_t* part_of)
{
    for (uint32_t j = 0; j < L->n; ++j)
        for (int32_t p = L->colptr[j] + 1; p < L->colptr[j] + L->colcount[j]; ++p) {
            uint32_t i = (uint32_t)L->rows[p];
            if (part_of[i] != LDL_TOP && part_of[i] != part_of[j]) return 0;
        }
    return 1;
}

/* The elimination tree of the factor's pattern: the parent of column j is the smallest row
 * below its diagonal, -1 for a root. */
static void elimination_tree(const sinew_ldl_view* L, int32_t* parent)
{
    for (uint32_t j = 0; j < L->n; ++j) {
        parent[j] = -1;
        for (int32_t p = L->colptr[j] + 1; p < L->colptr[j] + L->colcount[j]; ++p)
            if (parent[j] < 0 || L->rows[p] < parent[j]) parent[j] = L->rows[p];
    }
}

/* The subtree weights of the elimination tree (parent) and the cut. */
static sinew_result cut_tree(const sinew_host_api* host, const sinew_ldl_view* L,
                             const int32_t* parent, uint32_t* part_of)
{
    uint32_t n = L->n;
    uint32_t* child_start = (uint32_t*)sinew_host_calloc(host, n + 2u, sizeof(uint32_t));
    uint32_t* child = (uint32_t*)sinew_host_alloc(host, (n + 1u) * sizeof(uint32_t));
    uint32_t* order = (uint32_t*)sinew_host_alloc(host, (n + 1u) * sizeof(uint32_t));
    uint32_t* heap = (uint32_t*)sinew_host_alloc(host, (n + 1u) * sizeof(uint32_t));
    double* weight = (double*)sinew_host_alloc(host, (n + 1u) * sizeof(double));
    sinew_result r = SINEW_OK;
    if (!child_start || !child || !order || !heap || !weight)
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ldl: out of memory (%u columns)", n);
    for (uint32_t j = 0; r == SINEW_OK && j < n; ++j) {
        weight[j] = (double)L->colcount[j];
        if (parent[j] >= 0) child_start[parent[j] + 2]++;
    }
    if (r == SINEW_OK) {
        for (uint32_t j = 0; j < n; ++j) child_start[j + 2u] += child_start[j + 1u];
        for (uint32_t j = 0; j < n; ++j) {
            if (parent[j] < 0) continue;
            child[child_start[parent[j] + 1]++] = j;
            weight[parent[j]] += weight[j]; /* parent > j: j's subtree is complete */
        }
        ldl_tree t = {n, parent, child_start, child, weight};
        ldl_heap h = {heap, 0, weight};
        uint32_t depth = cut_depth(&t, &h, order);
        cut_assign(&t, &h, order, depth, part_of);
        if (!cut_valid(L, part_of))
            for (uint32_t j = 0; j < n; ++j) part_of[j] = 0; /* one part: a plain solve */
    }
    sinew_host_free(host, child_start);
    sinew_host_free(host, child);
    sinew_host_free(host, order);
    sinew_host_free(host, heap);
    sinew_host_free(host, weight);
    return r;
}

/* The factor as sinew_ldl.h describes it: indices in range, entries below the diagonal, a
 * finite non-zero pivot per column and a permutation. */
static sinew_result check_factor(const sinew_host_api* host, const sinew_ldl_view* L)
{
    if (!L || !L->colptr || !L->colcount || !L->rows || !L->values || !L->perm || L->n == 0 ||
        L->n >= (uint32_t)INT32_MAX)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "ldl: the factor view is empty or misses an array");
    uint32_t n = L->n;
    for (uint32_t j = 0; j < n; ++j) {
        int32_t p0 = L->colptr[j], c = L->colcount[j];
        if (p0 < 0 || c < 1 || L->rows[p0] != (int32_t)j || !isfinite(L->values[p0]) ||
            L->values[p0] == 0.0)
            return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                                   "ldl: column %u does not start with a finite non-zero pivot", j);
        for (int32_t p = p0 + 1; p < p0 + c; ++p)
            if (L->rows[p] <= (int32_t)j || L->rows[p] >= (int32_t)n)
                return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                                       "ldl: column %u has row %d, not below its diagonal", j,
                                       L->rows[p]);
    }
    return SINEW_OK;
}

/* A permutation of 0 .. n - 1 (seen: n bytes of scratch). */
static sinew_result check_perm(const sinew_host_api* host, const sinew_ldl_view* L,
                               unsigned char* seen)
{
    memset(seen, 0, L->n);
    for (uint32_t k = 0; k < L->n; ++k) {
        int32_t i = L->perm[k];
        if (i < 0 || i >= (int32_t)L->n || seen[i])
            return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                                   "ldl: the permutation is not one of %u rows", L->n);
        seen[i] = 1;
    }
    return SINEW_OK;
}

/* Part k's arrays: its columns (local[j] their local numbers), their entries renumbered. */
static sinew_result part_build(sinew_ldl* s, const sinew_ldl_view* L, const uint32_t* part_of,
                               const uint32_t* local, uint32_t k, uint32_t top_count)
{
    ldl_part* P = &s->part[k];
    uint32_t key = k == SINEW_LDL_PARTS ? LDL_TOP : k;
    size_t entries = 0;
    for (uint32_t j = 0; j < L->n; ++j)
        if (part_of[j] == key) entries += (size_t)L->colcount[j] - 1u;
    uint32_t width = key == LDL_TOP ? P->m : P->m + top_count;
    const sinew_host_api* host = &s->host;
    P->cols = (uint32_t*)sinew_host_alloc(host, (P->m + 1u) * sizeof(uint32_t));
    P->orig = (uint32_t*)sinew_host_alloc(host, (P->m + 1u) * sizeof(uint32_t));
    P->ptr = (uint32_t*)sinew_host_alloc(host, (P->m + 1u) * sizeof(uint32_t));
    P->rows = (uint32_t*)sinew_host_alloc(host, (entries + 1u) * sizeof(uint32_t));
    P->values = (double*)sinew_host_alloc(host, (entries + 1u) * sizeof(double));
    P->diag = (double*)sinew_host_alloc(host, (P->m + 1u) * sizeof(double));
    P->w = (double*)sinew_host_alloc(host, (3u * (size_t)width + 1u) * sizeof(double));
    if (!P->cols || !P->orig || !P->ptr || !P->rows || !P->values || !P->diag || !P->w)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ldl: out of memory (%zu entries)",
                               entries);
    uint32_t e = 0;
    for (uint32_t j = 0; j < L->n; ++j) {
        if (part_of[j] != key) continue;
        uint32_t c = local[j];
        int32_t p0 = L->colptr[j];
        P->cols[c] = j;
        P->orig[c] = (uint32_t)L->perm[j];
        P->diag[c] = L->values[p0];
        P->ptr[c] = e;
        for (int32_t p = p0 + 1; p < p0 + L->colcount[j]; ++p, ++e) {
            uint32_t i = (uint32_t)L->rows[p];
            P->rows[e] = part_of[i] == key ? local[i] : P->m + local[i];
            P->values[e] = L->values[p];
        }
    }
    P->ptr[P->m] = e;
    return SINEW_OK;
}

/* Numbers each part's and the top's columns in increasing order, then builds them. */
static sinew_result build_parts(sinew_ldl* s, const sinew_ldl_view* L, const uint32_t* part_of,
                                uint32_t* local)
{
    for (uint32_t j = 0; j < L->n; ++j) {
        uint32_t k = part_of[j] == LDL_TOP ? SINEW_LDL_PARTS : part_of[j];
        local[j] = s->part[k].m++;
    }
    uint32_t top_count = s->part[SINEW_LDL_PARTS].m;
    sinew_result r = SINEW_OK;
    for (uint32_t k = 0; k < LDL_COUNT && r == SINEW_OK; ++k)
        r = part_build(s, L, part_of, local, k, top_count);
    double all = 0.0, top = 0.0;
    for (uint32_t j = 0; j < L->n; ++j) {
        s->row_part[L->perm[j]] =
            (uint8_t)(part_of[j] == LDL_TOP ? SINEW_LDL_PARTS : part_of[j]);
        all += L->colcount[j];
        if (part_of[j] == LDL_TOP) top += L->colcount[j];
    }
    s->top_share = top / all;
    s->entries = (size_t)all;
    return r;
}

/* What the numeric factorization needs of the pattern besides the elimination tree
 * (sinew_ldl_internal.h): local numbers, the inverse permutation, the columns' parts and the
 * entries' rows. */
static sinew_result keep_tree(sinew_ldl* s, const sinew_ldl_view* L, const uint32_t* local)
{
    const uint32_t n = L->n;
    s->local = (uint32_t*)sinew_host_alloc(&s->host, n * sizeof(uint32_t));
    s->inv = (int32_t*)sinew_host_alloc(&s->host, n * sizeof(int32_t));
    s->col_part = (uint8_t*)sinew_host_alloc(&s->host, n);
    int ok = s->local && s->inv && s->col_part;
    for (uint32_t k = 0; k < LDL_COUNT; ++k) {
        s->entry_row[k] = (uint32_t*)sinew_host_alloc(
            &s->host, ((size_t)s->part[k].ptr[s->part[k].m] + 1u) * sizeof(uint32_t));
        ok = ok && s->entry_row[k];
    }
    if (!ok)
        return sinew_host_fail(&s->host, SINEW_ERROR_OUT_OF_MEMORY,
                               "ldl: out of memory (%u columns)", n);
    memcpy(s->local, local, n * sizeof(uint32_t));
    for (uint32_t j = 0; j < n; ++j) {
        s->inv[L->perm[j]] = (int32_t)j;
        s->col_part[j] = s->row_part[L->perm[j]];
    }
    const ldl_part* T = &s->part[SINEW_LDL_PARTS];
    for (uint32_t k = 0; k < LDL_COUNT; ++k) {
        const ldl_part* P = &s->part[k];
        for (uint32_t e = 0; e < P->ptr[P->m]; ++e) {
            uint32_t r = P->rows[e];
            s->entry_row[k][e] = k == SINEW_LDL_PARTS ? T->cols[r]
                                 : r < P->m           ? P->cols[r]
                                                      : T->cols[r - P->m];
        }
    }
    return SINEW_OK;
}

void sinew_ldl_destroy(sinew_ldl* s)
{
    if (!s) return;
    sinew_host_api host = s->host;
    for (uint32_t k = 0; k < LDL_COUNT; ++k) {
        ldl_part* P = &s->part[k];
        if (!s->like) {
            sinew_host_free(&host, P->cols);
            sinew_host_free(&host, P->orig);
            sinew_host_free(&host, P->ptr);
            sinew_host_free(&host, P->rows);
        }
        sinew_host_free(&host, P->values);
        sinew_host_free(&host, P->diag);
        sinew_host_free(&host, P->w);
        sinew_host_free(&host, P->next_values);
        sinew_host_free(&host, P->next_diag);
    }
    if (!s->like) {
        sinew_host_free(&host, s->perm);
        sinew_host_free(&host, s->row_part);
        sinew_host_free(&host, s->local);
        sinew_host_free(&host, s->parent);
        sinew_host_free(&host, s->inv);
        sinew_host_free(&host, s->col_part);
        for (uint32_t k = 0; k < LDL_COUNT; ++k) sinew_host_free(&host, s->entry_row[k]);
    }
    sinew_host_free(&host, s);
}

/* Whether L has the permutation and, column by column in the same order, the entries that
 * `like` was made from. */
static int same_pattern(const sinew_ldl* like, const sinew_ldl_view* L)
{
    if (L->n != like->n || memcmp(L->perm, like->perm, L->n * sizeof(int32_t)) != 0) return 0;
    const ldl_part* T = &like->part[SINEW_LDL_PARTS];
    for (uint32_t k = 0; k < LDL_COUNT; ++k) {
        const ldl_part* P = &like->part[k];
        for (uint32_t c = 0; c < P->m; ++c) {
            uint32_t j = P->cols[c];
            int32_t p = L->colptr[j] + 1;
            if ((uint32_t)L->colcount[j] != P->ptr[c + 1u] - P->ptr[c] + 1u) return 0;
            for (uint32_t e = P->ptr[c]; e < P->ptr[c + 1u]; ++e, ++p) {
                uint32_t r = P->rows[e];
                uint32_t i = r < P->m ? P->cols[r] : T->cols[r - P->m];
                if ((uint32_t)L->rows[p] != i) return 0;
            }
        }
    }
    return 1;
}

/* A solver on like's cut and arrays with L's values (same_pattern holds). */
static sinew_result create_shared(const sinew_host_api* host, const sinew_ldl* like,
                                  const sinew_ldl_view* L, sinew_ldl* s)
{
    *s = *like;
    s->host = *host;
    s->like = like;
    uint32_t top_count = like->part[SINEW_LDL_PARTS].m;
    for (uint32_t k = 0; k < LDL_COUNT; ++k) {
        ldl_part* P = &s->part[k];
        P->values = NULL;
        P->diag = NULL;
        P->w = NULL;
        P->next_values = NULL;
        P->next_diag = NULL;
    }
    for (uint32_t k = 0; k < LDL_COUNT; ++k) {
        ldl_part* P = &s->part[k];
        uint32_t width = k == SINEW_LDL_PARTS ? P->m : P->m + top_count;
        P->values = (double*)sinew_host_alloc(host, ((size_t)P->ptr[P->m] + 1u) * sizeof(double));
        P->diag = (double*)sinew_host_alloc(host, (P->m + 1u) * sizeof(double));
        P->w = (double*)sinew_host_alloc(host, (3u * (size_t)width + 1u) * sizeof(double));
        if (!P->values || !P->diag || !P->w)
            return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                                   "ldl: out of memory (%u columns)", L->n);
        for (uint32_t c = 0; c < P->m; ++c) {
            int32_t p0 = L->colptr[P->cols[c]];
            P->diag[c] = L->values[p0];
            memcpy(P->values + P->ptr[c], L->values + p0 + 1,
                   (P->ptr[c + 1u] - P->ptr[c]) * sizeof(double));
        }
    }
    return SINEW_OK;
}

sinew_result sinew_ldl_create_like(const sinew_host_api* host, const sinew_ldl* like,
                                   const sinew_ldl_view* L, sinew_ldl** out)
{
    if (!like || like->like) return sinew_ldl_create(host, L, out);
    if (!out) return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "ldl: out is NULL");
    *out = NULL;
    sinew_result r = check_factor(host, L);
    if (r != SINEW_OK) return r;
    if (!same_pattern(like, L)) return sinew_ldl_create(host, L, out);
    sinew_ldl* s = (sinew_ldl*)sinew_host_calloc(host, 1, sizeof *s);
    if (!s) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ldl: out of memory");
    r = create_shared(host, like, L, s);
    if (r != SINEW_OK) {
        sinew_ldl_destroy(s);
        return r;
    }
    *out = s;
    return SINEW_OK;
}

sinew_result sinew_ldl_create(const sinew_host_api* host, const sinew_ldl_view* L,
                              sinew_ldl** out)
{
    if (!out) return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "ldl: out is NULL");
    *out = NULL;
    sinew_result r = check_factor(host, L);
    if (r != SINEW_OK) return r;
    sinew_ldl* s = (sinew_ldl*)sinew_host_calloc(host, 1, sizeof *s);
    if (s) s->host = *host;
    uint32_t* part_of = (uint32_t*)sinew_host_alloc(host, L->n * sizeof(uint32_t));
    uint32_t* local = (uint32_t*)sinew_host_alloc(host, L->n * sizeof(uint32_t));
    if (s) s->perm = (int32_t*)sinew_host_alloc(host, L->n * sizeof(int32_t));
    if (s) s->row_part = (uint8_t*)sinew_host_alloc(host, L->n);
    if (s) s->parent = (int32_t*)sinew_host_alloc(host, L->n * sizeof(int32_t));
    if (!s || !part_of || !local || !s->perm || !s->row_part || !s->parent)
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ldl: out of memory (%u columns)",
                            L->n);
    if (r == SINEW_OK) {
        s->n = L->n;
        r = check_perm(host, L, (unsigned char*)local);
    }
    if (r == SINEW_OK) {
        memcpy(s->perm, L->perm, L->n * sizeof(int32_t));
        elimination_tree(L, s->parent);
        r = cut_tree(host, L, s->parent, part_of);
    }
    if (r == SINEW_OK) r = build_parts(s, L, part_of, local);
    if (r == SINEW_OK) r = keep_tree(s, L, local);
    sinew_host_free(host, part_of);
    sinew_host_free(host, local);
    if (r != SINEW_OK) {
        sinew_ldl_destroy(s);
        return r;
    }
    *out = s;
    return SINEW_OK;
}

/* ---- the solve ---- */

/* L y = w over the part's columns, in place, then y / D: each column's updates go to the rows
 * below it (the part's own, or its copy of the top's). */
static void forward_columns(const ldl_part* P)
{
    double* w = P->w;
    for (uint32_t j = 0; j < P->m; ++j) {
        double y0 = w[3u * j], y1 = w[3u * j + 1u], y2 = w[3u * j + 2u];
        for (uint32_t e = P->ptr[j]; e < P->ptr[j + 1u]; ++e) {
            double* r = w + 3u * (size_t)P->rows[e];
            double v = P->values[e];
            r[0] -= v * y0;
            r[1] -= v * y1;
            r[2] -= v * y2;
        }
        double d = P->diag[j];
        w[3u * j] = y0 / d;
        w[3u * j + 1u] = y1 / d;
        w[3u * j + 2u] = y2 / d;
    }
}

/* L^T x = w over the part's columns, in place, last column first; the rows below them (the
 * part's own, or its copy of the top's) already hold x. */
static void backward_columns(const ldl_part* P)
{
    double* w = P->w;
    for (uint32_t j = P->m; j-- > 0;) {
        double x0 = w[3u * j], x1 = w[3u * j + 1u], x2 = w[3u * j + 2u];
        for (uint32_t e = P->ptr[j]; e < P->ptr[j + 1u]; ++e) {
            const double* r = w + 3u * (size_t)P->rows[e];
            double v = P->values[e];
            x0 -= v * r[0];
            x1 -= v * r[1];
            x2 -= v * r[2];
        }
        w[3u * j] = x0;
        w[3u * j + 1u] = x1;
        w[3u * j + 2u] = x2;
    }
}

/* The part's rows of P b (from b, or computed by fn), with zeros in its copy of the top's
 * rows. */
static void part_gather(const sinew_ldl* s, const ldl_part* P, uint32_t top_count)
{
    double* w = P->w;
    if (s->fn) {
        s->fn(s->user, P->orig, P->m, w);
    } else {
        for (uint32_t j = 0; j < P->m; ++j) {
            size_t i = P->orig[j];
            for (uint32_t c = 0; c < 3u; ++c) w[3u * j + c] = s->b[c * s->ldb + i];
        }
    }
    memset(w + 3u * (size_t)P->m, 0, 3u * (size_t)top_count * sizeof(double));
}

/* The part's rows of x = P^T w. */
static void part_scatter(const sinew_ldl* s, const ldl_part* P)
{
    for (uint32_t j = 0; j < P->m; ++j) {
        size_t i = P->orig[j];
        for (uint32_t c = 0; c < 3u; ++c) s->x[c * s->ldx + i] = P->w[3u * j + c];
    }
}

static void forward_range(void* data, uint32_t begin, uint32_t end)
{
    sinew_ldl* s = (sinew_ldl*)data;
    for (uint32_t k = begin; k < end; ++k) {
        part_gather(s, &s->part[k], s->part[SINEW_LDL_PARTS].m);
        forward_columns(&s->part[k]);
    }
}

static void backward_range(void* data, uint32_t begin, uint32_t end)
{
    sinew_ldl* s = (sinew_ldl*)data;
    const ldl_part* T = &s->part[SINEW_LDL_PARTS];
    for (uint32_t k = begin; k < end; ++k) {
        ldl_part* P = &s->part[k];
        memcpy(P->w + 3u * (size_t)P->m, T->w, 3u * (size_t)T->m * sizeof(double));
        backward_columns(P);
        part_scatter(s, P);
    }
}

/* The top: its rows of P b plus the parts' updates (in part order), both substitutions over
 * its columns, and its rows of x. */
static void top_solve(sinew_ldl* s)
{
    ldl_part* T = &s->part[SINEW_LDL_PARTS];
    if (s->fn) s->fn(s->user, T->orig, T->m, T->w);
    for (uint32_t j = 0; j < T->m; ++j) {
        size_t i = T->orig[j];
        for (uint32_t c = 0; c < 3u; ++c) {
            double v = s->fn ? T->w[3u * j + c] : s->b[c * s->ldb + i];
            for (uint32_t k = 0; k < SINEW_LDL_PARTS; ++k)
                v += s->part[k].w[3u * ((size_t)s->part[k].m + j) + c];
            T->w[3u * j + c] = v;
        }
    }
    forward_columns(T);
    backward_columns(T);
}

static void solve(sinew_ldl* s, double* x, size_t ldx)
{
    s->x = x;
    s->ldx = ldx;
    sinew_host_parallel_for(&s->host, forward_range, s, SINEW_LDL_PARTS, 1u);
    top_solve(s);
    /* x may be b: the top's rows of x are written after every read of b */
    part_scatter(s, &s->part[SINEW_LDL_PARTS]);
    sinew_host_parallel_for(&s->host, backward_range, s, SINEW_LDL_PARTS, 1u);
}

void sinew_ldl_solve(sinew_ldl* s, const double* b, size_t ldb, double* x, size_t ldx)
{
    s->b = b;
    s->ldb = ldb;
    s->fn = NULL;
    solve(s, x, ldx);
}

void sinew_ldl_solve_with(sinew_ldl* s, sinew_ldl_rhs_fn fn, void* user, double* x, size_t ldx)
{
    s->b = NULL;
    s->fn = fn;
    s->user = user;
    solve(s, x, ldx);
    s->fn = NULL;
}

uint32_t sinew_ldl_row_part(const sinew_ldl* s, uint32_t row)
{
    return s && row < s->n ? s->row_part[row] : SINEW_LDL_PARTS;
}

uint32_t sinew_ldl_majority_part(const sinew_ldl* s, const uint32_t* rows, uint32_t count)
{
    uint32_t votes[SINEW_LDL_PARTS + 1] = {0}, best = 0;
    for (uint32_t k = 0; k < count; ++k) votes[sinew_ldl_row_part(s, rows[k])]++;
    for (uint32_t q = 1; q < SINEW_LDL_PARTS; ++q)
        if (votes[q] > votes[best]) best = q;
    return best;
}

void sinew_ldl_rows_by_part(const sinew_ldl* s, uint32_t row_count, uint32_t* out,
                            uint32_t start[SINEW_LDL_PARTS + 1])
{
    uint32_t rows = 0;
    for (uint32_t k = 0; k < SINEW_LDL_PARTS; ++k) {
        start[k] = rows;
        for (uint32_t i = 0; i < row_count; ++i) {
            uint32_t q = sinew_ldl_row_part(s, i);
            if (q == k || (k == 0 && q == SINEW_LDL_PARTS)) out[rows++] = i;
        }
    }
    start[SINEW_LDL_PARTS] = rows;
}

size_t sinew_ldl_entry_count(const sinew_ldl* s)
{
    return s ? s->entries : 0u;
}

double sinew_ldl_top_share(const sinew_ldl* s)
{
    return s ? s->top_share : 0.0;
}
