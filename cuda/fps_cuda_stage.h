/* The views through which fps-cuda's matrix-vector products read a block's CRS part from
 * shared memory (Sec. 4.2: "the rest CRS, read coalesced through shared memory"). Host and
 * device code (SINEW_HD), so that tests/cuda checks on the CPU that staged products equal the
 * plain ones bit for bit. SPDX-License-Identifier: MIT
 *
 * A block of rows copies the CRS entries [base, base + count) of its rows to a buffer (val,
 * col) with consecutive loads. The row functions of fps_kernels.h then get A without its CRS
 * part (every row's range empty, through crs_none: rows + 1 zeros) and the staged entries as
 * the extra CRS matrix they add after A's entries (the A_col slot of Sec. 6, which fps-cuda
 * does not otherwise use). The sum runs diagonal, ELL, CRS in order: sparse_ellcrs.h's order,
 * so staging changes no bit. */
#ifndef SINEW_FPS_CUDA_STAGE_H
#define SINEW_FPS_CUDA_STAGE_H

#include <stdint.h>

#include "sinew_hd.h"
#include "sparse_ellcrs.h"

/* A pointer to p[-base]: formed as an integer (a generic address on the device), so that
 * staged entry e - base is read by its global number e through the row's own crs_ptr. */
static inline SINEW_HD const double* fpsc_rebase_val(const double* p, uint32_t base)
{
    return (const double*)((uintptr_t)p - (uintptr_t)base * sizeof(double));
}
static inline SINEW_HD const uint32_t* fpsc_rebase_col(const uint32_t* p, uint32_t base)
{
    return (const uint32_t*)((uintptr_t)p - (uintptr_t)base * sizeof(uint32_t));
}

static inline SINEW_HD void fpsc_staged_views(const sinew_ellcrs* A, const uint32_t* crs_none,
                                              uint32_t base, const double* val,
                                              const uint32_t* col, sinew_ellcrs* ell,
                                              sinew_crs* crs)
{
    *ell = *A;
    ell->crs_ptr = crs_none;
    ell->crs_col = 0;
    ell->crs_val = 0;
    crs->rows = A->rows;
    crs->ptr = A->crs_ptr;
    crs->col = fpsc_rebase_col(col, base);
    crs->val = fpsc_rebase_val(val, base);
}

#endif
