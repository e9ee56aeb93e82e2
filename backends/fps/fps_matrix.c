/* Sparse helpers of `fps`: owned CRS matrices and their sum (A + A_col, Sec. 6).
 * SPDX-License-Identifier: MIT */
#include <string.h>

#include "fps_internal.h"

void fps_csr_free(const sinew_host_api* host, fps_csr* m)
{
    if (!m) return;
    sinew_host_free(host, m->ptr);
    sinew_host_free(host, m->col);
    sinew_host_free(host, m->val);
    memset(m, 0, sizeof *m);
}

/* Merges two sorted rows; writes (when cols is not NULL) and returns the union's length. */
static uint32_t merge_row(const sinew_crs* a, const sinew_crs* b, uint32_t i, uint32_t* cols,
                          double* vals)
{
    uint32_t ea = a->ptr[i], fa = a->ptr[i + 1];
    uint32_t eb = (b && b->rows) ? b->ptr[i] : 0u, fb = (b && b->rows) ? b->ptr[i + 1] : 0u;
    uint32_t k = 0;
    while (ea < fa || eb < fb) {
        uint32_t ca = ea < fa ? a->col[ea] : UINT32_MAX;
        uint32_t cb = eb < fb ? b->col[eb] : UINT32_MAX;
        double v;
        uint32_t c;
        if (ca == cb) {
            c = ca;
            v = a->val[ea++] + b->val[eb++];
        } else if (ca < cb) {
            c = ca;
            v = a->val[ea++];
        } else {
            c = cb;
            v = b->val[eb++];
        }
        if (cols) {
            cols[k] = c;
            vals[k] = v;
        }
        ++k;
    }
    return k;
}

sinew_result fps_csr_add(const sinew_host_api* host, const sinew_crs* a, const sinew_crs* b,
                         fps_csr* out)
{
    memset(out, 0, sizeof *out);
    if (b && b->rows && b->rows != a->rows)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps: adding a matrix of %u rows to one of %u", b->rows, a->rows);
    out->rows = a->rows;
    out->ptr = (uint32_t*)sinew_host_calloc(host, (size_t)a->rows + 1u, sizeof(uint32_t));
    if (!out->ptr) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps: out of memory");
    for (uint32_t i = 0; i < a->rows; ++i) out->ptr[i + 1] = out->ptr[i] + merge_row(a, b, i, NULL, NULL);
    size_t nnz = out->ptr[a->rows];
    out->col = (uint32_t*)sinew_host_calloc(host, nnz ? nnz : 1u, sizeof(uint32_t));
    out->val = (double*)sinew_host_calloc(host, nnz ? nnz : 1u, sizeof(double));
    if (!out->col || !out->val) {
        fps_csr_free(host, out);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps: out of memory");
    }
    for (uint32_t i = 0; i < a->rows; ++i) merge_row(a, b, i, out->col + out->ptr[i], out->val + out->ptr[i]);
    return SINEW_OK;
}
