/* fps-cuda's products through a block's staged CRS part (cuda/fps_cuda_stage.h, Sec. 4.2) give
 * the same bits as the plain ELL/CRS rows of sparse_ellcrs.h: PCG init and kernel-1 rows of
 * fps_kernels.h over random symmetric matrices whose rows range from the ELL width to many CRS
 * entries, blocks of 256 rows copied to a buffer as a thread block copies them to shared
 * memory. Runs on the CPU (label cuda, no GPU needed): the views are the device's.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200112L /* posix_memalign in cuda_test.h */
#include <math.h>
#include <stdint.h>

#include "cuda_test.h"
#include "fps_cuda_stage.h"
#include "fps_kernels.h"

#define BLOCK 256u

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rng(void)
{
    return cuda_test_rng(&rng_state);
}
static double rng_unit(void)
{
    return cuda_test_rng_unit(&rng_state);
}

/* A symmetric n x n CRS matrix with a dominant diagonal and about `extra` random off-diagonal
 * pairs per row, plus a band so that the shortest row has a few entries. */
static void build(uint32_t n, uint32_t extra, uint32_t** ptr, uint32_t** col, double** val)
{
    uint8_t* dense = calloc((size_t)n * n, 1);
    double* w = calloc((size_t)n * n, sizeof(double));
    CHECK(dense && w);
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t k = 1; k <= 2 && i + k < n; ++k) dense[(size_t)i * n + i + k] = 1;
        uint32_t more = rng() % (2u * extra + 1u);
        if (i % 97u == 0) more += 40u; /* a few long rows: blocks with many CRS entries */
        for (uint32_t k = 0; k < more; ++k) {
            uint32_t j = rng() % n;
            if (j != i) dense[(size_t)i * n + j] = 1;
        }
    }
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t j = i + 1; j < n; ++j)
            if (dense[(size_t)i * n + j] || dense[(size_t)j * n + i]) {
                dense[(size_t)i * n + j] = dense[(size_t)j * n + i] = 1;
                w[(size_t)i * n + j] = w[(size_t)j * n + i] = rng_unit();
            }
    *ptr = malloc((n + 1u) * sizeof(uint32_t));
    size_t nnz = 0;
    for (size_t e = 0; e < (size_t)n * n; ++e) nnz += dense[e];
    nnz += n;
    *col = malloc(nnz * sizeof(uint32_t));
    *val = malloc(nnz * sizeof(double));
    CHECK(*ptr && *col && *val);
    uint32_t c = 0;
    (*ptr)[0] = 0;
    for (uint32_t i = 0; i < n; ++i) {
        double sum = 0.0;
        for (uint32_t j = 0; j < n; ++j) sum += fabs(w[(size_t)i * n + j]);
        for (uint32_t j = 0; j < n; ++j)
            if (j == i || dense[(size_t)i * n + j]) {
                (*col)[c] = j;
                (*val)[c] = j == i ? 1.0 + sum : w[(size_t)i * n + j];
                ++c;
            }
        (*ptr)[i + 1] = c;
    }
    free(dense);
    free(w);
}

static void run(uint32_t n, uint32_t extra)
{
    uint32_t *ptr, *col;
    double* val;
    build(n, extra, &ptr, &col, &val);
    sinew_crs csr = {n, ptr, col, val};
    uint32_t width = 0;
    size_t crs_count = 0;
    CHECK(sinew_ellcrs_count(&csr, &width, &crs_count));
    CHECK(crs_count > 0);
    double* ell_val = malloc((size_t)width * n * sizeof(double));
    uint32_t* ell_col = malloc((size_t)width * n * sizeof(uint32_t));
    uint32_t* crs_ptr = malloc((n + 1u) * sizeof(uint32_t));
    uint32_t* crs_col = malloc(crs_count * sizeof(uint32_t));
    double* crs_val = malloc(crs_count * sizeof(double));
    uint32_t* none = calloc(n + 1u, sizeof(uint32_t));
    double* jinv = malloc(n * sizeof(double));
    double *x = malloc(3u * n * sizeof(double)), *b = malloc(3u * n * sizeof(double));
    double *r0 = calloc(3u * n, sizeof(double)), *d0 = calloc(3u * n, sizeof(double));
    double *r1 = calloc(3u * n, sizeof(double)), *d1 = calloc(3u * n, sizeof(double));
    double *q0 = calloc(3u * n, sizeof(double)), *q1 = calloc(3u * n, sizeof(double));
    double* stage_val = malloc(crs_count * sizeof(double));
    uint32_t* stage_col = malloc(crs_count * sizeof(uint32_t));
    CHECK(ell_val && ell_col && crs_ptr && crs_col && crs_val && none && jinv && x && b && r0 &&
          d0 && r1 && d1 && q0 && q1 && stage_val && stage_col);
    sinew_ellcrs_fill(&csr, width, ell_val, ell_col, crs_ptr, crs_col, crs_val);
    sinew_ellcrs A = {n, width, ell_val, ell_col, crs_ptr, crs_col, crs_val};
    for (uint32_t i = 0; i < n; ++i) jinv[i] = 1.0 / sinew_ellcrs_diagonal(&A, i);
    for (uint32_t k = 0; k < 3u * n; ++k) {
        x[k] = rng_unit();
        b[k] = rng_unit();
    }
    uint32_t most = 0;
    double delta0[3] = {0, 0, 0}, delta1[3] = {0, 0, 0}, dq0[3] = {0, 0, 0}, dq1[3] = {0, 0, 0};
    for (uint32_t s0 = 0; s0 < n; s0 += BLOCK) {
        uint32_t end = s0 + BLOCK < n ? s0 + BLOCK : n;
        uint32_t base = crs_ptr[s0], count = crs_ptr[end] - base;
        if (count > most) most = count;
        /* The block's copy: consecutive entries, as the threads of a block load them. */
        for (uint32_t e = 0; e < count; ++e) {
            stage_val[e] = crs_val[base + e];
            stage_col[e] = crs_col[base + e];
        }
        sinew_ellcrs ell;
        sinew_crs staged;
        fpsc_staged_views(&A, none, base, stage_val, stage_col, &ell, &staged);
        for (uint32_t i = s0; i < end; ++i) {
            double a[3] = {0, 0, 0}, c[3] = {0, 0, 0};
            fps_pcg_init_row(&A, NULL, jinv, i, b, x, n, r0, d0, n, a);
            fps_pcg_init_row(&ell, &staged, jinv, i, b, x, n, r1, d1, n, c);
            for (int k = 0; k < 3; ++k) {
                delta0[k] += a[k];
                delta1[k] += c[k];
            }
        }
        for (uint32_t i = s0; i < end; ++i) {
            fps_pcg_matvec_row(&A, NULL, i, d0, q0, n, dq0);
            fps_pcg_matvec_row(&ell, &staged, i, d1, q1, n, dq1);
        }
    }
    CHECK(memcmp(r0, r1, 3u * n * sizeof(double)) == 0);
    CHECK(memcmp(d0, d1, 3u * n * sizeof(double)) == 0);
    CHECK(memcmp(q0, q1, 3u * n * sizeof(double)) == 0);
    CHECK(memcmp(delta0, delta1, sizeof delta0) == 0);
    CHECK(memcmp(dq0, dq1, sizeof dq0) == 0);
    /* The staged sums are not trivially equal: the CRS part matters. */
    double plain[3];
    sinew_ellcrs no_crs = A;
    no_crs.crs_ptr = none;
    int differs = 0;
    for (uint32_t i = 0; i < n && !differs; ++i) {
        if (crs_ptr[i + 1] == crs_ptr[i]) continue;
        sinew_ellcrs_row3(&no_crs, i, d0, n, plain);
        differs = plain[0] != q0[i] || plain[1] != q0[n + i] || plain[2] != q0[2u * n + i];
    }
    CHECK(differs);
    printf("n %u: ELL width %u, %zu CRS entries, at most %u per block of %u rows: staged = "
           "plain, bit for bit\n", n, width, crs_count, most, BLOCK);
    free(ptr), free(col), free(val), free(ell_val), free(ell_col), free(crs_ptr), free(crs_col);
    free(crs_val), free(none), free(jinv), free(x), free(b), free(r0), free(d0), free(r1);
    free(d1), free(q0), free(q1), free(stage_val), free(stage_col);
}

int main(void)
{
    run(1000, 3);  /* partial last block */
    run(2048, 6);
    printf("ok\n");
    return 0;
}
