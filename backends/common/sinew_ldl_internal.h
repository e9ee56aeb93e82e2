/* The layout of sinew_ldl's factor, shared by its solve (sinew_ldl.c) and its numeric
 * factorization (sinew_ldl_factor.c). SPDX-License-Identifier: MIT */
#ifndef SINEW_COMMON_LDL_INTERNAL_H
#define SINEW_COMMON_LDL_INTERNAL_H

#include "sinew_ldl.h"

#define LDL_TOP UINT32_MAX
#define LDL_COUNT (SINEW_LDL_PARTS + 1u) /* the parts, then the top */

/* A part's columns in increasing order, renumbered: local row r < m is its own column r, row
 * m + t the top's column t. The top's rows are its own columns only. */
typedef struct ldl_part {
    uint32_t m;
    uint32_t* cols; /* the factor's (permuted) index of each own column */
    uint32_t* orig; /* the row of A of each own column (perm[cols[c]]) */
    uint32_t* ptr;  /* m + 1: the below-diagonal entries of local column j */
    uint32_t* rows;
    double* values;
    double* diag;
    double* w; /* 3 (m + top count) values, x y z interleaved: the part's solution */
    /* sinew_ldl_refactor's values and diag, swapped in when it succeeds (NULL before the
     * first); every solver owns its own */
    double* next_values;
    double* next_diag;
} ldl_part;

struct sinew_ldl {
    sinew_host_api host;
    uint32_t n;
    int32_t* perm;
    uint8_t* row_part; /* the part of each row of A (SINEW_LDL_PARTS: the top) */
    ldl_part part[LDL_COUNT];
    double top_share;
    size_t entries;
    /* sinew_ldl_create_like: the solver whose cut, pattern and permutation this one shares
     * (it owns them; NULL when this one does). */
    const struct sinew_ldl* like;
    /* Of the pattern, shared like it: each factor column's local number in its part, its
     * parent in the elimination tree (-1 at a root), the factor index of each row of A (the
     * inverse of perm), each column's part and each entry's row by factor index. */
    uint32_t* local;
    int32_t* parent;
    int32_t* inv;
    uint8_t* col_part;      /* the part of each factor column (SINEW_LDL_PARTS: the top) */
    uint32_t* entry_row[LDL_COUNT]; /* each part's entries as factor row indices */
    /* The solve in progress: b, or fn and user (sinew_ldl_solve_with). */
    const double* b;
    size_t ldb;
    sinew_ldl_rhs_fn fn;
    void* user;
    double* x;
    size_t ldx;
};

#endif
