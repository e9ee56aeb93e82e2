/* The shared kernels of fast projective skinning (backends/common/sparse_ellcrs.h,
 * fps_kernels.h): the hybrid ELL/CRS product of Sec. 4.2 equals a plain CSR product, its
 * builder refuses rows without a diagonal, the local step's parts equal the whole-prism kernel,
 * and a PCG built from the row kernels (Alg. 2) solves a small system.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fps_block_sum.h"
#include "fps_kernels.h"
#include "sparse_ellcrs.h"
#include "test_support.h"

static uint32_t rng_state = 12345u;
static uint32_t rnd(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}
static double rndf(void)
{
    return (double)(rnd() % 100000u) / 50000.0 - 1.0;
}

typedef struct csr {
    uint32_t rows;
    uint32_t* ptr;
    uint32_t* col;
    double* val;
} csr;

/* A random symmetric, diagonally dominant matrix with rows of varying length (at least
 * min_len entries, diagonal included). */
static csr random_matrix(uint32_t n, uint32_t min_len, uint32_t extra)
{
    double* dense = calloc((size_t)n * n, sizeof(double));
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t want = min_len - 1u + (rnd() % (extra + 1u));
        for (uint32_t k = 0; k < want; ++k) {
            uint32_t j = rnd() % n;
            if (j == i) continue;
            double v = rndf();
            dense[(size_t)i * n + j] = dense[(size_t)j * n + i] = v;
        }
    }
    csr m;
    m.rows = n;
    m.ptr = calloc(n + 1u, sizeof(uint32_t));
    size_t nnz = 0;
    for (uint32_t i = 0; i < n; ++i) {
        double off = 0.0;
        for (uint32_t j = 0; j < n; ++j)
            if (j != i) off += fabs(dense[(size_t)i * n + j]);
        dense[(size_t)i * n + i] = off + 1.0 + fabs(rndf());
        for (uint32_t j = 0; j < n; ++j) nnz += dense[(size_t)i * n + j] != 0.0;
    }
    m.col = calloc(nnz, sizeof(uint32_t));
    m.val = calloc(nnz, sizeof(double));
    size_t k = 0;
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j < n; ++j)
            if (dense[(size_t)i * n + j] != 0.0) {
                m.col[k] = j;
                m.val[k++] = dense[(size_t)i * n + j];
            }
        m.ptr[i + 1] = (uint32_t)k;
    }
    free(dense);
    return m;
}

static void csr_free(csr* m)
{
    free(m->ptr);
    free(m->col);
    free(m->val);
}

typedef struct ellcrs_storage {
    sinew_ellcrs A;
    double* ell_val;
    uint32_t* ell_col;
    uint32_t* crs_ptr;
    uint32_t* crs_col;
    double* crs_val;
    size_t crs_count;
} ellcrs_storage;

static void to_ellcrs(const csr* m, ellcrs_storage* s)
{
    sinew_crs v = {m->rows, m->ptr, m->col, m->val};
    uint32_t width = 0;
    assert_int_equal(sinew_ellcrs_count(&v, &width, &s->crs_count), 1);
    s->ell_val = calloc((size_t)width * m->rows, sizeof(double));
    s->ell_col = calloc((size_t)width * m->rows, sizeof(uint32_t));
    s->crs_ptr = calloc(m->rows + 1u, sizeof(uint32_t));
    s->crs_col = calloc(s->crs_count + 1u, sizeof(uint32_t));
    s->crs_val = calloc(s->crs_count + 1u, sizeof(double));
    sinew_ellcrs_fill(&v, width, s->ell_val, s->ell_col, s->crs_ptr, s->crs_col, s->crs_val);
    s->A.rows = m->rows;
    s->A.ell_width = width;
    s->A.ell_val = s->ell_val;
    s->A.ell_col = s->ell_col;
    s->A.crs_ptr = s->crs_ptr;
    s->A.crs_col = s->crs_col;
    s->A.crs_val = s->crs_val;
}

static void ellcrs_free(ellcrs_storage* s)
{
    free(s->ell_val);
    free(s->ell_col);
    free(s->crs_ptr);
    free(s->crs_col);
    free(s->crs_val);
}

/* Sec. 4.2: the ELL width is the shortest row, the diagonal comes first, and the product of
 * every row equals the plain CSR product (to rounding: the summation order differs). */
static void test_ellcrs_product(void** state)
{
    (void)state;
    const uint32_t n = 300;
    csr m = random_matrix(n, 5, 12);
    ellcrs_storage s;
    to_ellcrs(&m, &s);
    uint32_t min_len = UINT32_MAX;
    size_t nnz = m.ptr[n];
    for (uint32_t i = 0; i < n; ++i)
        if (m.ptr[i + 1] - m.ptr[i] < min_len) min_len = m.ptr[i + 1] - m.ptr[i];
    assert_int_equal(s.A.ell_width, min_len);
    assert_int_equal(s.crs_count, nnz - (size_t)min_len * n);
    assert_true(s.crs_count > 0);
    double* x = malloc(sizeof(double) * 3u * n);
    for (uint32_t k = 0; k < 3u * n; ++k) x[k] = rndf();
    double worst = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        /* diagonal first */
        for (uint32_t e = m.ptr[i]; e < m.ptr[i + 1]; ++e)
            if (m.col[e] == i) assert_true(sinew_ellcrs_diagonal(&s.A, i) == m.val[e]);
        double y[3];
        sinew_ellcrs_row3(&s.A, i, x, n, y);
        for (int c = 0; c < 3; ++c) {
            double ref = 0.0, mag = 0.0;
            for (uint32_t e = m.ptr[i]; e < m.ptr[i + 1]; ++e) {
                ref += m.val[e] * x[(size_t)c * n + m.col[e]];
                mag += fabs(m.val[e] * x[(size_t)c * n + m.col[e]]);
            }
            worst = fmax(worst, fabs(y[c] - ref) / (mag > 0.0 ? mag : 1.0));
        }
    }
    print_message("ELL/CRS: %u rows, ELL width %u, %zu CRS entries; largest relative "
                  "difference to CSR %.2e\n", n, s.A.ell_width, s.crs_count, worst);
    assert_true(worst < 1e-14);
    /* An extra CRS matrix adds its row. */
    csr b = random_matrix(n, 2, 2);
    sinew_crs bv = {b.rows, b.ptr, b.col, b.val};
    for (uint32_t i = 0; i < n; i += 7) {
        double y[3], z[3] = {0.0, 0.0, 0.0};
        sinew_ellcrs_row3(&s.A, i, x, n, y);
        double ya[3] = {y[0], y[1], y[2]};
        sinew_crs_row3_add(&bv, i, x, n, ya);
        sinew_crs_row3_add(&bv, i, x, n, z);
        for (int c = 0; c < 3; ++c) assert_true(fabs(ya[c] - (y[c] + z[c])) <= 1e-12 * (1.0 + fabs(ya[c])));
        sinew_crs_row3_add(NULL, i, x, n, y); /* no matrix: no change */
    }
    csr_free(&b);
    free(x);
    ellcrs_free(&s);
    csr_free(&m);
}

/* A row without its diagonal, or with unsorted columns, is refused by the builder. */
static void test_ellcrs_refuses(void** state)
{
    (void)state;
    uint32_t ptr[3] = {0, 2, 3};
    uint32_t col_nodiag[3] = {0, 1, 0};  /* row 1 holds only column 0 */
    uint32_t col_unsorted[3] = {1, 0, 1};
    double val[3] = {1.0, 2.0, 3.0};
    sinew_crs a = {2, ptr, col_nodiag, val};
    uint32_t w;
    size_t c;
    assert_int_equal(sinew_ellcrs_count(&a, &w, &c), 0);
    sinew_crs b = {2, ptr, col_unsorted, val};
    assert_int_equal(sinew_ellcrs_count(&b, &w, &c), 0);
    uint32_t col_ok[3] = {0, 1, 1};
    sinew_crs d = {2, ptr, col_ok, val};
    assert_int_equal(sinew_ellcrs_count(&d, &w, &c), 1);
    assert_int_equal(w, 1);
    assert_int_equal(c, 1);
}

/* The local step's split kernels (gradient, rotation, projection) give the bits of the
 * whole-prism kernel; a rigid motion of the prism projects onto the rest shares rotated. */
static void test_local_prism(void** state)
{
    (void)state;
    enum { P = 37, NV = 6 * P };
    size_t S = 40;
    int32_t* pv = calloc(6u * S, sizeof(int32_t));
    float* G = calloc(18u * S, sizeof(float));
    float* inv_w = calloc(S, sizeof(float));
    double* x = malloc(sizeof(double) * 3u * NV);
    for (uint32_t p = 0; p < P; ++p) {
        for (int k = 0; k < 6; ++k) pv[(size_t)k * S + p] = (int32_t)(6u * p + (uint32_t)k);
        for (int r = 0; r < 3; ++r) {
            float sum = 0.0f;
            for (int k = 1; k < 6; ++k) {
                float g = (float)rndf();
                G[(size_t)(6 * r + k) * S + p] = g;
                sum += g;
            }
            G[(size_t)(6 * r) * S + p] = -sum; /* rows sum to zero, as G_p's do */
        }
        inv_w[p] = 0.5f + 0.01f * (float)p;
    }
    for (uint32_t k = 0; k < 3u * NV; ++k) x[k] = rndf();
    fps_prisms prisms = {S, pv, G, inv_w, 1.0f, 1.0f, 1.0f}; /* no volume term */
    float* a = calloc(18u * S, sizeof(float));
    float* b = calloc(18u * S, sizeof(float));
    for (uint32_t p = 0; p < P; ++p) {
        fps_local_prism(&prisms, x, NV, p, a);
        float F[9], R[9];
        fps_prism_gradient(&prisms, x, NV, p, F);
        sinew_polar3(F, R);
        fps_prism_project(&prisms, R, p, b);
    }
    assert_memory_equal(a, b, sizeof(float) * 18u * S);
    /* zero weights: F = 0, R = I, and the shares are G's columns */
    memset(inv_w, 0, sizeof(float) * S);
    fps_local_prism(&prisms, x, NV, 0, a);
    for (int k = 0; k < 6; ++k)
        for (int i = 0; i < 3; ++i)
            assert_true(a[(size_t)(3 * k + i) * S] == G[(size_t)(6 * i + k) * S]);
    free(pv);
    free(G);
    free(inv_w);
    free(x);
    free(a);
    free(b);
}

/* Alg. 2 built from the row kernels solves a random SPD system to a relative residual of
 * 1e-12 (three right-hand sides at once). */
static void test_pcg_rows(void** state)
{
    (void)state;
    const uint32_t n = 200;
    csr m = random_matrix(n, 4, 8);
    ellcrs_storage s;
    to_ellcrs(&m, &s);
    double* jinv = malloc(sizeof(double) * n);
    for (uint32_t i = 0; i < n; ++i) jinv[i] = 1.0 / sinew_ellcrs_diagonal(&s.A, i);
    double *b = malloc(sizeof(double) * 3u * n), *x = calloc(3u * n, sizeof(double));
    double *r = malloc(sizeof(double) * 3u * n), *d = malloc(sizeof(double) * 3u * n);
    double* q = malloc(sizeof(double) * 3u * n);
    for (uint32_t k = 0; k < 3u * n; ++k) b[k] = rndf();
    double delta[3] = {0, 0, 0}, gamma[3], dq[3], alpha[3], beta[3], rr[3];
    for (uint32_t i = 0; i < n; ++i) fps_pcg_init_row(&s.A, NULL, jinv, i, b, x, n, r, d, n, delta);
    int it = 0;
    for (; it < 500; ++it) {
        for (int c = 0; c < 3; ++c) gamma[c] = delta[c], dq[c] = 0.0, delta[c] = 0.0, rr[c] = 0.0;
        for (uint32_t i = 0; i < n; ++i) fps_pcg_matvec_row(&s.A, NULL, i, d, q, n, dq);
        for (int c = 0; c < 3; ++c) alpha[c] = fps_pcg_alpha(gamma[c], dq[c]);
        for (uint32_t i = 0; i < n; ++i)
            fps_pcg_update_row(alpha, jinv, i, x, n, r, d, q, n, delta, rr);
        if (sqrt(fmax(rr[0], fmax(rr[1], rr[2]))) < 1e-13) break;
        for (int c = 0; c < 3; ++c) beta[c] = fps_pcg_beta(delta[c], gamma[c]);
        for (uint32_t i = 0; i < n; ++i) fps_pcg_direction_row(beta, jinv, i, r, d, n);
    }
    double worst = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        double y[3];
        sinew_ellcrs_row3(&s.A, i, x, n, y);
        for (int c = 0; c < 3; ++c) worst = fmax(worst, fabs(y[c] - b[(size_t)c * n + i]));
    }
    print_message("PCG rows: %d iterations, largest residual entry %.2e\n", it, worst);
    assert_true(it < 500);
    assert_true(worst < 1e-10);
    assert_true(fps_pcg_alpha(1.0, 0.0) == 0.0);
    assert_true(fps_pcg_beta(1.0, 0.0) == 0.0);
    free(jinv);
    free(b);
    free(x);
    free(r);
    free(d);
    free(q);
    ellcrs_free(&s);
    csr_free(&m);
}

/* fps_block_sum.h's streaming form against the device's reduction written out: 256 lanes (the
 * missing rows 0.0), within each warp lane l adds lane l + s for s = 16 .. 1, then the warps'
 * sums for s = 4 .. 1; the same bits for every row count and for values of wildly different
 * sizes. Each term is 0.0 + x, as a row function adds it to a zeroed accumulator (so -0.0
 * becomes 0.0 on both sides). */
static double device_tree(const double* rows, uint32_t count)
{
    double v[FPS_SUM_BLOCK];
    for (uint32_t i = 0; i < FPS_SUM_BLOCK; ++i) v[i] = i < count ? 0.0 + rows[i] : 0.0;
    for (uint32_t w = 0; w < FPS_SUM_BLOCK / FPS_SUM_WARP; ++w)
        for (uint32_t s = FPS_SUM_WARP / 2u; s > 0u; s >>= 1u)
            for (uint32_t l = 0; l < s; ++l) v[FPS_SUM_WARP * w + l] += v[FPS_SUM_WARP * w + l + s];
    for (uint32_t s = FPS_SUM_BLOCK / FPS_SUM_WARP / 2u; s > 0u; s >>= 1u)
        for (uint32_t w = 0; w < s; ++w) v[FPS_SUM_WARP * w] += v[FPS_SUM_WARP * (w + s)];
    return v[0];
}

static void test_block_sum_order(void** state)
{
    (void)state;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    double rows[3][FPS_SUM_BLOCK];
    for (uint32_t count = 0; count <= FPS_SUM_BLOCK; ++count) {
        for (uint32_t i = 0; i < FPS_SUM_BLOCK; ++i)
            for (int c = 0; c < 3; ++c) {
                seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
                double x = (double)(seed % 2000003u) / 1000001.0 - 1.0;
                rows[c][i] = c == 0 ? x * pow(10.0, (double)(seed % 17u) - 8.0)
                           : c == 1 ? (seed % 5u == 0 ? -0.0 : x) : x;
            }
        fps_block_acc acc;
        fps_block_acc_init(&acc);
        for (uint32_t i = 0; i < count; ++i) {
            double t[3] = {0.0 + rows[0][i], 0.0 + rows[1][i], 0.0 + rows[2][i]};
            fps_block_acc_row(&acc, t);
        }
        double share[3];
        fps_block_acc_sum(&acc, share);
        for (int c = 0; c < 3; ++c) {
            double want = device_tree(rows[c], count);
            assert_memory_equal(&share[c], &want, sizeof want);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ellcrs_product),
        cmocka_unit_test(test_ellcrs_refuses),
        cmocka_unit_test(test_local_prism),
        cmocka_unit_test(test_pcg_rows),
        cmocka_unit_test(test_block_sum_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
