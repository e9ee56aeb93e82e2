/* Solves with a sparse LDL^T factor in two independent parts and a shared top, so that two
 * threads share the triangular solves of the physics backends' global step.
 * SPDX-License-Identifier: MIT
 *
 * The factor is the simplicial LDL^T that CHOLMOD keeps (unit lower L with D on its diagonal,
 * compressed columns, the diagonal entry first in each column) with its fill-reducing
 * permutation. Its elimination tree (the parent of column j is the smallest row below the
 * diagonal in column j) is cut into a top, which holds the root, and SINEW_LDL_PARTS parts, each
 * a union of whole subtrees below the top, chosen to make the slower part plus the top as
 * small as possible. A forward solve then runs each part on its own (their columns only update
 * rows of their own part or of the top, which each part accumulates privately), the top after
 * them; the backward solve runs the top, then each part on its own. The cut depends on the
 * factor's pattern only, never on the thread count, so every thread count gives the same
 * bits. The same cut lets a matrix of the factor's pattern be factored again on two threads
 * (sinew_ldl_refactor): a part's rows reach only its own columns. */
#ifndef SINEW_COMMON_LDL_H
#define SINEW_COMMON_LDL_H

#include <stddef.h>
#include <stdint.h>
#include <sinew/sinew_host.h>

#include "sparse_ellcrs.h"

#define SINEW_LDL_PARTS 2u

/* A simplicial LDL^T factor of an n x n matrix A = P^T L D L^T P: column j of L holds
 * colcount[j] entries from colptr[j], the first (row j) being D_jj, the rest rows below j in
 * any order; (P b)[k] = b[perm[k]]. */
typedef struct sinew_ldl_view {
    uint32_t n;
    const int32_t* colptr;
    const int32_t* colcount;
    const int32_t* rows;
    const double* values;
    const int32_t* perm;
} sinew_ldl_view;

typedef struct sinew_ldl sinew_ldl;

/* Copies the factor into the parts' own arrays (so it may change afterwards). An index out of
 * range or a zero, non-finite pivot is SINEW_ERROR_INVALID_ARGUMENT with one line. */
sinew_result sinew_ldl_create(const sinew_host_api* host, const sinew_ldl_view* L,
                              sinew_ldl** out);
/* The same for a factor of another matrix with like's pattern (ps's factors of its system and
 * of the system plus collision weights on the diagonal): it shares like's cut, pattern and
 * permutation and copies only the values; like must outlive it. A factor whose pattern or
 * permutation differs gets a solver of its own (sinew_ldl_create). */
sinew_result sinew_ldl_create_like(const sinew_host_api* host, const sinew_ldl* like,
                                   const sinew_ldl_view* L, sinew_ldl** out);
void sinew_ldl_destroy(sinew_ldl* s);

/* Refactors s in place for a matrix A whose factor has s's pattern and permutation (the same
 * A with other values: fps's system with contacts that keep their pairs), on the host's jobs
 * like a solve: A as rows of the symmetric matrix, both
 * triangles, in A's own numbering. SINEW_ERROR_INVALID_ARGUMENT without a log line when A's
 * factor has another pattern or a pivot is zero or not finite (the caller then factors A
 * another way), with one line for a matrix of another size or a column out of range; s is
 * unchanged after any failure. The parts' rows run on their threads, so every thread count
 * gives the same bits, which differ from CHOLMOD's in the last places. The first call
 * allocates a second set of values, which the factor alternates with. */
sinew_result sinew_ldl_refactor(sinew_ldl* s, const sinew_crs* A);

/* x = A^-1 b for three right-hand sides: column c of b at b + c ldb, of x at x + c ldx (n
 * values each); x may be b. The parts run over the host's jobs; one solve at a time per
 * object. */
void sinew_ldl_solve(sinew_ldl* s, const double* b, size_t ldb, double* x, size_t ldx);

/* Computes the right-hand side of `count` rows of A (rows[k], in the solver's order): x, y and
 * z of rows[k] at out[3 k], out[3 k + 1], out[3 k + 2]. */
typedef void (*sinew_ldl_rhs_fn)(void* user, const uint32_t* rows, uint32_t count, double* out);

/* sinew_ldl_solve with b computed by fn: each part's rows on the thread that solves that part,
 * straight into its own workspace, the top's on the calling thread. Two threads never write
 * one array (rows of different parts share cache lines in b), and b needs no pass of its own.
 * The same bits as computing b with fn and calling sinew_ldl_solve. */
void sinew_ldl_solve_with(sinew_ldl* s, sinew_ldl_rhs_fn fn, void* user, double* x, size_t ldx);

/* The part (0 .. SINEW_LDL_PARTS - 1) whose columns hold row `row` of A, or SINEW_LDL_PARTS
 * for the top: a caller that computes b's rows and reads x's on the same threads as the parts
 * keeps them in that thread's cache. */
uint32_t sinew_ldl_row_part(const sinew_ldl* s, uint32_t row);

/* The part holding most of `count` rows (rows of the top or beyond n do not vote; ties and no
 * votes go to the lower part): where a prism of those vertices is best computed. */
uint32_t sinew_ldl_majority_part(const sinew_ldl* s, const uint32_t* rows, uint32_t count);

/* Rows 0 .. row_count - 1 grouped by part, in increasing order within each, the top's with
 * part 0: part k's are out[start[k] .. start[k + 1] - 1] (out: row_count entries). */
void sinew_ldl_rows_by_part(const sinew_ldl* s, uint32_t row_count, uint32_t* out,
                            uint32_t start[SINEW_LDL_PARTS + 1]);

/* The entries of the factor (with its diagonal), for reports. */
size_t sinew_ldl_entry_count(const sinew_ldl* s);

/* The fraction of the factor's entries in the top (0 when it has no parts), for reports. */
double sinew_ldl_top_share(const sinew_ldl* s);

#endif
