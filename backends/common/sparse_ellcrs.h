/* The hybrid ELL/CRS sparse matrix of fast projective skinning (Komaritzan and Botsch 2019,
 * Sec. 4.2) and its matrix-vector product rows, shared by the CPU backend `fps` and the CUDA
 * plugin `fps-cuda`. SPDX-License-Identifier: MIT
 *
 * Format (square, n rows, symmetric or not; every row must hold its diagonal entry):
 * - ELL part, column-major ("structure of arrays"): the first `ell_width` entries of every row,
 *   entry k of row i at ell_val[k * n + i] / ell_col[k * n + i], so that one thread per row
 *   reads consecutive addresses for each k. Entry 0 is always the diagonal (the Jacobi
 *   preconditioner reads it there); entries 1.. are the row's off-diagonal entries in
 *   increasing column order. ell_width is the smallest row length of the matrix (Sec. 4.2:
 *   "n_ell = the minimum amount of non-zeros per row"), so the ELL part holds no padding.
 * - CRS part: the rest of each row (its remaining off-diagonal entries, increasing column) in
 *   compressed rows crs_ptr (n + 1), crs_col, crs_val. On a GPU a thread block reads the CRS
 *   entries of its rows together (coalesced) into shared memory; the row's thread then sums
 *   them in the order given here.
 * - A second, very sparse matrix (collisions: the system is A + A_col, Sec. 6) is a plain CRS
 *   matrix (sinew_crs) of off-diagonal entries only; its diagonal is added to A's ELL entry 0.
 *
 * Vectors are n x 3 column blocks (structure of arrays: coordinate c of row i at c * ld + i),
 * and one row's product handles all three coordinates, reading each matrix entry once.
 *
 * Summation order (what makes a CPU and a GPU product agree): y = diagonal * x_i, then the ELL
 * entries k = 1 .. ell_width - 1, then the CRS entries in order, then the extra CRS matrix.
 * All values are double.
 *
 * Everything here is plain C11 that also compiles as CUDA C++: the row functions are SINEW_HD;
 * the builders (sinew_ellcrs_count, sinew_ellcrs_fill) are host code over caller-provided
 * arrays. */
#ifndef SINEW_COMMON_SPARSE_ELLCRS_H
#define SINEW_COMMON_SPARSE_ELLCRS_H

#include <stddef.h>
#include <stdint.h>

#include "sinew_hd.h"

/* Compressed rows: row i holds entries ptr[i] .. ptr[i + 1] - 1. */
typedef struct sinew_crs {
    uint32_t rows;
    const uint32_t* ptr; /* rows + 1 */
    const uint32_t* col;
    const double* val;
} sinew_crs;

typedef struct sinew_ellcrs {
    uint32_t rows;
    uint32_t ell_width;      /* >= 1: entry 0 is the diagonal */
    const double* ell_val;   /* ell_width * rows, column-major */
    const uint32_t* ell_col; /* ell_width * rows, column-major */
    const uint32_t* crs_ptr; /* rows + 1 */
    const uint32_t* crs_col;
    const double* crs_val;
} sinew_ellcrs;

/* The diagonal entry of row i. */
static inline SINEW_HD double sinew_ellcrs_diagonal(const sinew_ellcrs* A, uint32_t i)
{
    return A->ell_val[i];
}

/* y = (row i of A) x for the three columns of x (ld apart). */
static inline SINEW_HD void sinew_ellcrs_row3(const sinew_ellcrs* A, uint32_t i, const double* x,
                                              size_t ld, double y[3])
{
    const size_t n = A->rows;
    double a = A->ell_val[i];
    y[0] = a * x[i];
    y[1] = a * x[ld + i];
    y[2] = a * x[2u * ld + i];
    for (uint32_t k = 1; k < A->ell_width; ++k) {
        size_t e = (size_t)k * n + i;
        uint32_t j = A->ell_col[e];
        double v = A->ell_val[e];
        y[0] += v * x[j];
        y[1] += v * x[ld + j];
        y[2] += v * x[2u * ld + j];
    }
    for (uint32_t e = A->crs_ptr[i]; e < A->crs_ptr[i + 1]; ++e) {
        uint32_t j = A->crs_col[e];
        double v = A->crs_val[e];
        y[0] += v * x[j];
        y[1] += v * x[ld + j];
        y[2] += v * x[2u * ld + j];
    }
}

/* y += (row i of B) x: the extra CRS matrix (A_col of Sec. 6); B may be NULL or empty. */
static inline SINEW_HD void sinew_crs_row3_add(const sinew_crs* B, uint32_t i, const double* x,
                                               size_t ld, double y[3])
{
    if (!B || B->rows == 0) return;
    for (uint32_t e = B->ptr[i]; e < B->ptr[i + 1]; ++e) {
        uint32_t j = B->col[e];
        double v = B->val[e];
        y[0] += v * x[j];
        y[1] += v * x[ld + j];
        y[2] += v * x[2u * ld + j];
    }
}

/* ---- building the format (host code) ---- */

/* For a CRS matrix whose every row holds its diagonal: the ELL width (minimum row length) and
 * the number of CRS-part entries. Returns 0 when a row lacks its diagonal or has a repeated or
 * unsorted column (columns must increase within a row), else 1. */
static inline int sinew_ellcrs_count(const sinew_crs* csr, uint32_t* ell_width, size_t* crs_count)
{
    uint32_t width = UINT32_MAX;
    size_t total = 0;
    for (uint32_t i = 0; i < csr->rows; ++i) {
        uint32_t len = csr->ptr[i + 1] - csr->ptr[i];
        int diag = 0;
        for (uint32_t e = csr->ptr[i]; e < csr->ptr[i + 1]; ++e) {
            if (e > csr->ptr[i] && csr->col[e] <= csr->col[e - 1]) return 0;
            if (csr->col[e] == i) diag = 1;
        }
        if (!diag) return 0;
        if (len < width) width = len;
        total += len;
    }
    if (csr->rows == 0) width = 1;
    *ell_width = width;
    *crs_count = total - (size_t)width * csr->rows;
    return 1;
}

/* Fills the arrays of `out` (sized by sinew_ellcrs_count: ell_width * rows, rows + 1 and
 * crs_count entries) from a CRS matrix that passed sinew_ellcrs_count. */
static inline void sinew_ellcrs_fill(const sinew_crs* csr, uint32_t ell_width, double* ell_val,
                                     uint32_t* ell_col, uint32_t* crs_ptr, uint32_t* crs_col,
                                     double* crs_val)
{
    const size_t n = csr->rows;
    uint32_t c = 0;
    crs_ptr[0] = 0;
    for (uint32_t i = 0; i < csr->rows; ++i) {
        uint32_t k = 1;
        for (uint32_t e = csr->ptr[i]; e < csr->ptr[i + 1]; ++e) {
            uint32_t j = csr->col[e];
            double v = csr->val[e];
            if (j == i) {
                ell_val[i] = v;
                ell_col[i] = i;
            } else if (k < ell_width) {
                ell_val[(size_t)k * n + i] = v;
                ell_col[(size_t)k * n + i] = j;
                ++k;
            } else {
                crs_col[c] = j;
                crs_val[c] = v;
                ++c;
            }
        }
        crs_ptr[i + 1] = c;
    }
}

#endif
