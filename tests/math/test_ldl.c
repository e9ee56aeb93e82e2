/* The two-part LDL^T solve of sinew_ldl.h on a grid Laplacian plus a diagonal (the shape of
 * the physics backends' systems): its solution against a dense solve, the cut's parts, the
 * same bits whatever runs the parts (serially, in reverse order, on two threads), x aliasing
 * b, and the refusal of malformed factors. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>

#include "math_test_util.h"
#include "sinew_ldl.h"

#define SIDE 18
#define N (SIDE * SIDE)

/* The factor of P A P^T, dense, its nonzeros as a CHOLMOD-like simplicial factor. */
typedef struct dense_ldl {
    double A[N][N];
    double L[N][N]; /* unit lower, D on the diagonal */
    int32_t perm[N];
    int32_t colptr[N + 1], colcount[N];
    int32_t* rows;
    double* values;
} dense_ldl;

static void build_matrix(dense_ldl* f, math_rng* rng)
{
    memset(f->A, 0, sizeof f->A);
    for (int y = 0; y < SIDE; ++y)
        for (int x = 0; x < SIDE; ++x) {
            int i = y * SIDE + x;
            int nb[2] = {x + 1 < SIDE ? i + 1 : -1, y + 1 < SIDE ? i + SIDE : -1};
            for (int k = 0; k < 2; ++k) {
                if (nb[k] < 0) continue;
                double w = math_rng_range(rng, 0.5, 2.0);
                f->A[i][nb[k]] = f->A[nb[k]][i] = -w;
                f->A[i][i] += w;
                f->A[nb[k]][nb[k]] += w;
            }
            f->A[i][i] += math_rng_range(rng, 0.01, 0.1);
        }
    /* A dissection: the grid's left half, its right half (each in random order), then the
     * column between them, the separator. */
    int32_t count = 0;
    for (int side = 0; side < 3; ++side) {
        int32_t first = count;
        for (int i = 0; i < N; ++i) {
            int x = i % SIDE;
            int s = x < SIDE / 2 ? 0 : x > SIDE / 2 ? 1 : 2;
            if (s == side) f->perm[count++] = i;
        }
        for (int32_t i = count - 1; side < 2 && i > first; --i) {
            int32_t j = first + (int32_t)(math_rng_next(rng) % (uint64_t)(i - first + 1));
            int32_t t = f->perm[i];
            f->perm[i] = f->perm[j];
            f->perm[j] = t;
        }
    }
}

/* Dense LDL^T of P A P^T and its entries of magnitude above zero as compressed columns. */
static void factor(dense_ldl* f)
{
    static double B[N][N];
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) B[i][j] = f->A[f->perm[i]][f->perm[j]];
    for (int j = 0; j < N; ++j) {
        double d = B[j][j];
        for (int k = 0; k < j; ++k) d -= f->L[j][k] * f->L[j][k] * f->L[k][k];
        f->L[j][j] = d;
        for (int i = j + 1; i < N; ++i) {
            double v = B[i][j];
            for (int k = 0; k < j; ++k) v -= f->L[i][k] * f->L[j][k] * f->L[k][k];
            f->L[i][j] = v / d;
        }
    }
    size_t nz = 0;
    for (int j = 0; j < N; ++j)
        for (int i = j; i < N; ++i) nz += i == j || f->L[i][j] != 0.0;
    f->rows = malloc(nz * sizeof(int32_t));
    f->values = malloc(nz * sizeof(double));
    int32_t e = 0;
    for (int j = 0; j < N; ++j) {
        f->colptr[j] = e;
        for (int i = j; i < N; ++i)
            if (i == j || f->L[i][j] != 0.0) {
                f->rows[e] = i;
                f->values[e++] = f->L[i][j];
            }
        f->colcount[j] = e - f->colptr[j];
    }
    f->colptr[N] = e;
}

static sinew_ldl_view view_of(const dense_ldl* f)
{
    sinew_ldl_view v = {N, f->colptr, f->colcount, f->rows, f->values, f->perm};
    return v;
}

/* Job systems: in order, in reverse order, and one thread per chunk. */
static void jobs_serial(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain, void* user)
{
    (void)grain;
    (void)user;
    for (uint32_t k = 0; k < count; ++k) fn(data, k, k + 1u);
}

static void jobs_reverse(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain, void* user)
{
    (void)grain;
    (void)user;
    for (uint32_t k = count; k-- > 0;) fn(data, k, k + 1u);
}

typedef struct chunk_arg {
    sinew_job_fn fn;
    void* data;
    uint32_t k;
} chunk_arg;

static void* chunk_main(void* p)
{
    chunk_arg* a = (chunk_arg*)p;
    a->fn(a->data, a->k, a->k + 1u);
    return NULL;
}

static void jobs_threads(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain, void* user)
{
    (void)grain;
    (void)user;
    pthread_t t[8];
    chunk_arg a[8];
    assert_true(count <= 8u);
    for (uint32_t k = 1; k < count; ++k) {
        a[k] = (chunk_arg){fn, data, k};
        assert_int_equal(pthread_create(&t[k], NULL, chunk_main, &a[k]), 0);
    }
    fn(data, 0, 1);
    for (uint32_t k = 1; k < count; ++k) pthread_join(t[k], NULL);
}

/* The job systems every solve is checked with: serial, the parts in reverse, real threads. */
static void (*const job_kinds[3])(sinew_job_fn, void*, uint32_t, uint32_t, void*) = {
    jobs_serial, jobs_reverse, jobs_threads};

static void* ldl_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    void* p = NULL;
    return posix_memalign(&p, alignment < sizeof(void*) ? sizeof(void*) : alignment, size) ? NULL
                                                                                          : p;
}

static void ldl_free(void* p, void* user)
{
    (void)user;
    free(p);
}

static int g_errors;
static void test_logger(sinew_log_level level, const char* message, void* user)
{
    (void)user;
    (void)message;
    if (level == SINEW_LOG_ERROR) ++g_errors;
}

static sinew_host_api host_with(void (*jobs)(sinew_job_fn, void*, uint32_t, uint32_t, void*))
{
    sinew_host_api h;
    memset(&h, 0, sizeof h);
    h.struct_size = (uint32_t)sizeof h;
    h.allocator.alloc = ldl_alloc;
    h.allocator.free = ldl_free;
    h.logger.func = test_logger;
    h.log_level = SINEW_LOG_DEBUG;
    h.jobs.parallel_for = jobs;
    h.jobs.thread_count = 2;
    return h;
}

/* b: three random columns of length N; x: the dense solve of A x = b. */
static void reference(const dense_ldl* f, const double* b, double* x)
{
    static double y[3][N];
    for (int c = 0; c < 3; ++c) {
        for (int k = 0; k < N; ++k) y[c][k] = b[c * N + f->perm[k]];
        for (int j = 0; j < N; ++j)
            for (int i = j + 1; i < N; ++i) y[c][i] -= f->L[i][j] * y[c][j];
        for (int j = 0; j < N; ++j) y[c][j] /= f->L[j][j];
        for (int j = N - 1; j >= 0; --j)
            for (int i = j + 1; i < N; ++i) y[c][j] -= f->L[i][j] * y[c][i];
        for (int k = 0; k < N; ++k) x[c * N + f->perm[k]] = y[c][k];
    }
}

static dense_ldl g_f;

static void test_solves_like_a_dense_factor(void** state)
{
    (void)state;
    math_rng rng = {7};
    build_matrix(&g_f, &rng);
    factor(&g_f);
    sinew_ldl_view v = view_of(&g_f);
    static double b[3 * N], ref[3 * N], x[3][3 * N];
    for (int k = 0; k < 3 * N; ++k) b[k] = math_rng_range(&rng, -1.0, 1.0);
    reference(&g_f, b, ref);
    for (int kind = 0; kind < 3; ++kind) {
        sinew_host_api h = host_with(job_kinds[kind]);
        sinew_ldl* s = NULL;
        assert_int_equal(sinew_ldl_create(&h, &v, &s), SINEW_OK);
        double share = sinew_ldl_top_share(s);
        print_message("top share %.3f\n", share);
        assert_true(share > 0.0 && share < 0.3);
        uint32_t in_part[SINEW_LDL_PARTS + 1] = {0};
        for (uint32_t i = 0; i < N; ++i) in_part[sinew_ldl_row_part(s, i)]++;
        for (uint32_t k = 0; k < SINEW_LDL_PARTS; ++k) assert_true(in_part[k] > N / 5);
        /* every row once, grouped by part (the top's with part 0), increasing in each */
        uint32_t rows[N], start[SINEW_LDL_PARTS + 1];
        sinew_ldl_rows_by_part(s, N, rows, start);
        assert_int_equal(start[0], 0);
        assert_int_equal(start[SINEW_LDL_PARTS], N);
        for (uint32_t k = 0; k < SINEW_LDL_PARTS; ++k)
            for (uint32_t e = start[k]; e < start[k + 1]; ++e) {
                uint32_t q = sinew_ldl_row_part(s, rows[e]);
                assert_true(q == k || (k == 0 && q == SINEW_LDL_PARTS));
                if (e > start[k]) assert_true(rows[e] > rows[e - 1]);
            }
        /* a vote: the part of the majority; rows beyond n do not vote */
        uint32_t p1 = rows[start[1]], p0 = rows[start[0]];
        uint32_t vote[4] = {p1, p1, p0, N + 7u};
        assert_int_equal(sinew_ldl_majority_part(s, vote, 4u), sinew_ldl_row_part(s, p1));
        assert_true(sinew_ldl_entry_count(s) == (size_t)g_f.colptr[N]);
        sinew_ldl_solve(s, b, N, x[kind], N);
        double worst = 0.0;
        for (int k = 0; k < 3 * N; ++k) worst = fmax(worst, fabs(x[kind][k] - ref[k]));
        assert_true(worst < 1e-9);
        assert_memory_equal(x[kind], x[0], sizeof x[0]);
        /* in place */
        static double inplace[3 * N];
        memcpy(inplace, b, sizeof inplace);
        sinew_ldl_solve(s, inplace, N, inplace, N);
        assert_memory_equal(inplace, x[0], sizeof inplace);
        sinew_ldl_destroy(s);
    }
    assert_int_equal(g_errors, 0);
}

/* Column strides other than n: columns ld apart. */
static void test_strided_columns(void** state)
{
    (void)state;
    sinew_ldl_view v = view_of(&g_f);
    sinew_host_api h = host_with(jobs_serial);
    sinew_ldl* s = NULL;
    assert_int_equal(sinew_ldl_create(&h, &v, &s), SINEW_OK);
    enum { LD = N + 5 };
    static double b[3 * LD], x[3 * LD], packed_b[3 * N], packed_x[3 * N];
    math_rng rng = {11};
    for (int c = 0; c < 3; ++c)
        for (int k = 0; k < N; ++k) packed_b[c * N + k] = b[c * LD + k] = math_rng_range(&rng, -1, 1);
    sinew_ldl_solve(s, b, LD, x, LD);
    sinew_ldl_solve(s, packed_b, N, packed_x, N);
    for (int c = 0; c < 3; ++c)
        assert_memory_equal(x + c * LD, packed_x + c * N, N * sizeof(double));
    sinew_ldl_destroy(s);
}

/* sinew_ldl_solve_with: each row of b asked for exactly once, the same bits as the solve of b,
 * for every kind of job system (the parts on other threads, in reverse, or serial). */
typedef struct rows_user {
    const double* b;
    uint32_t asked[N];
} rows_user;

static void rows_from_b(void* user, const uint32_t* rows, uint32_t count, double* out)
{
    rows_user* u = (rows_user*)user;
    for (uint32_t k = 0; k < count; ++k) {
        assert_true(rows[k] < N);
        u->asked[rows[k]]++;
        for (int c = 0; c < 3; ++c) out[3u * k + (uint32_t)c] = u->b[c * N + rows[k]];
    }
}

static void test_solve_with_rows(void** state)
{
    (void)state;
    sinew_ldl_view v = view_of(&g_f);
    static double b[3 * N], x[3 * N], y[3 * N];
    math_rng rng = {13};
    for (int k = 0; k < 3 * N; ++k) b[k] = math_rng_range(&rng, -1.0, 1.0);
    for (int kind = 0; kind < 3; ++kind) {
        sinew_host_api h = host_with(job_kinds[kind]);
        sinew_ldl* s = NULL;
        assert_int_equal(sinew_ldl_create(&h, &v, &s), SINEW_OK);
        sinew_ldl_solve(s, b, N, x, N);
        static rows_user u;
        memset(&u, 0, sizeof u);
        u.b = b;
        sinew_ldl_solve_with(s, rows_from_b, &u, y, N);
        for (uint32_t i = 0; i < N; ++i) assert_int_equal(u.asked[i], 1);
        assert_memory_equal(x, y, sizeof x);
        /* a plain solve afterwards reads b again */
        memset(y, 0, sizeof y);
        sinew_ldl_solve(s, b, N, y, N);
        assert_memory_equal(x, y, sizeof x);
        sinew_ldl_destroy(s);
    }
}

/* A factor of A + 0.5 I (the same pattern) shares the first one's cut and solves its own
 * system; a factor under another permutation gets a cut of its own. */
static void test_like_shares_the_cut(void** state)
{
    (void)state;
    static dense_ldl g2;
    memcpy(g2.A, g_f.A, sizeof g2.A);
    memcpy(g2.perm, g_f.perm, sizeof g2.perm);
    for (int i = 0; i < N; ++i) g2.A[i][i] += 0.5;
    factor(&g2);
    sinew_host_api h = host_with(jobs_threads);
    sinew_ldl_view v1 = view_of(&g_f), v2 = view_of(&g2);
    sinew_ldl *s1 = NULL, *s2 = NULL;
    assert_int_equal(sinew_ldl_create(&h, &v1, &s1), SINEW_OK);
    assert_int_equal(sinew_ldl_create_like(&h, s1, &v2, &s2), SINEW_OK);
    assert_true(sinew_ldl_top_share(s2) == sinew_ldl_top_share(s1));
    static double b[3 * N], ref[3 * N], x[3 * N];
    math_rng rng = {5};
    for (int k = 0; k < 3 * N; ++k) b[k] = math_rng_range(&rng, -1.0, 1.0);
    reference(&g2, b, ref);
    sinew_ldl_solve(s2, b, N, x, N);
    for (int k = 0; k < 3 * N; ++k) assert_true(fabs(x[k] - ref[k]) < 1e-9);
    /* the same values on their own give the same bits */
    sinew_ldl* own = NULL;
    static double x2[3 * N];
    assert_int_equal(sinew_ldl_create(&h, &v2, &own), SINEW_OK);
    sinew_ldl_solve(own, b, N, x2, N);
    assert_memory_equal(x, x2, sizeof x);
    sinew_ldl_destroy(own);
    sinew_ldl_destroy(s2);
    /* another permutation: a solver of its own, still right */
    int32_t t = g2.perm[0];
    g2.perm[0] = g2.perm[N - 1];
    g2.perm[N - 1] = t;
    free(g2.rows);
    free(g2.values);
    factor(&g2);
    v2 = view_of(&g2);
    assert_int_equal(sinew_ldl_create_like(&h, s1, &v2, &s2), SINEW_OK);
    reference(&g2, b, ref);
    sinew_ldl_solve(s2, b, N, x, N);
    for (int k = 0; k < 3 * N; ++k) assert_true(fabs(x[k] - ref[k]) < 1e-9);
    sinew_ldl_destroy(s2);
    sinew_ldl_destroy(s1);
    free(g2.rows);
    free(g2.values);
}

/* A's rows, both triangles, as CRS (its nonzeros). */
typedef struct crs_copy {
    uint32_t ptr[N + 1];
    uint32_t col[N * 8];
    double val[N * 8];
} crs_copy;

static sinew_crs crs_of(double (*A)[N], crs_copy* c)
{
    uint32_t e = 0;
    for (int i = 0; i < N; ++i) {
        c->ptr[i] = e;
        for (int j = 0; j < N; ++j)
            if (A[i][j] != 0.0) {
                assert_true(e < N * 8);
                c->col[e] = (uint32_t)j;
                c->val[e++] = A[i][j];
            }
    }
    c->ptr[N] = e;
    sinew_crs m = {N, c->ptr, c->col, c->val};
    return m;
}

/* sinew_ldl_refactor: a factor of A refactored for A plus a diagonal (collision weights on
 * some rows) solves that system, with the same bits for every job system and for a solver
 * that shares the pattern; a matrix with another pattern is refused without a line, leaving
 * the factor as it was; a matrix of another size is refused with one. */
static void test_refactor_same_pattern(void** state)
{
    (void)state;
    static dense_ldl g2;
    static crs_copy c1, c2, c3;
    memcpy(g2.A, g_f.A, sizeof g2.A);
    memcpy(g2.perm, g_f.perm, sizeof g2.perm);
    math_rng rng = {17};
    for (int i = 0; i < N; i += 3) g2.A[i][i] += math_rng_range(&rng, 0.1, 5.0);
    factor(&g2);
    sinew_crs A1 = crs_of(g_f.A, &c1), A2 = crs_of(g2.A, &c2);
    static double b[3 * N], ref1[3 * N], ref2[3 * N], x[3][3 * N], y[3 * N];
    for (int k = 0; k < 3 * N; ++k) b[k] = math_rng_range(&rng, -1.0, 1.0);
    reference(&g_f, b, ref1);
    reference(&g2, b, ref2);
    sinew_ldl_view v1 = view_of(&g_f);
    g_errors = 0;
    for (int kind = 0; kind < 3; ++kind) {
        sinew_host_api h = host_with(job_kinds[kind]);
        sinew_ldl *s = NULL, *like = NULL;
        assert_int_equal(sinew_ldl_create(&h, &v1, &s), SINEW_OK);
        assert_int_equal(sinew_ldl_create_like(&h, s, &v1, &like), SINEW_OK);
        assert_int_equal(sinew_ldl_refactor(s, &A2), SINEW_OK);
        sinew_ldl_solve(s, b, N, x[kind], N);
        for (int k = 0; k < 3 * N; ++k) assert_true(fabs(x[kind][k] - ref2[k]) < 1e-9);
        assert_memory_equal(x[kind], x[0], sizeof x[0]);
        assert_int_equal(sinew_ldl_refactor(like, &A2), SINEW_OK);
        sinew_ldl_solve(like, b, N, y, N);
        assert_memory_equal(y, x[0], sizeof y);
        /* back to A itself */
        assert_int_equal(sinew_ldl_refactor(s, &A1), SINEW_OK);
        sinew_ldl_solve(s, b, N, y, N);
        for (int k = 0; k < 3 * N; ++k) assert_true(fabs(y[k] - ref1[k]) < 1e-9);
        sinew_ldl_destroy(like);
        sinew_ldl_destroy(s);
    }
    assert_int_equal(g_errors, 0);
    /* a coupling between the two halves of the grid: another pattern */
    static double A3[N][N];
    memcpy(A3, g2.A, sizeof A3);
    A3[0][N - 1] = A3[N - 1][0] = -0.01;
    sinew_crs M3 = crs_of(A3, &c3);
    sinew_host_api h = host_with(jobs_threads);
    sinew_ldl* s = NULL;
    assert_int_equal(sinew_ldl_create(&h, &v1, &s), SINEW_OK);
    assert_int_equal(sinew_ldl_refactor(s, &A2), SINEW_OK);
    assert_int_equal(sinew_ldl_refactor(s, &M3), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(g_errors, 0);
    /* unchanged: still A2's factor */
    sinew_ldl_solve(s, b, N, y, N);
    assert_memory_equal(y, x[0], sizeof y);
    assert_int_equal(sinew_ldl_refactor(s, &A2), SINEW_OK);
    sinew_ldl_solve(s, b, N, y, N);
    assert_memory_equal(y, x[0], sizeof y);
    sinew_crs small = A2;
    small.rows = N - 1;
    assert_int_equal(sinew_ldl_refactor(s, &small), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(g_errors, 1);
    assert_int_equal(sinew_ldl_refactor(s, NULL), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(g_errors, 2);
    assert_int_equal(sinew_ldl_refactor(NULL, &A2), SINEW_ERROR_INVALID_ARGUMENT);
    sinew_ldl_destroy(s);
    free(g2.rows);
    free(g2.values);
}

static void expect_refused(sinew_ldl_view v)
{
    sinew_host_api h = host_with(jobs_serial);
    sinew_ldl* s = (sinew_ldl*)&h;
    g_errors = 0;
    assert_int_equal(sinew_ldl_create(&h, &v, &s), SINEW_ERROR_INVALID_ARGUMENT);
    assert_null(s);
    assert_int_equal(g_errors, 1);
}

static void test_refuses_malformed_factors(void** state)
{
    (void)state;
    sinew_ldl_view good = view_of(&g_f);
    sinew_ldl_view v = good;
    v.rows = NULL;
    expect_refused(v);
    v = good;
    v.n = 0;
    expect_refused(v);
    /* a zero pivot */
    double saved = g_f.values[g_f.colptr[3]];
    g_f.values[g_f.colptr[3]] = 0.0;
    expect_refused(good);
    g_f.values[g_f.colptr[3]] = NAN;
    expect_refused(good);
    g_f.values[g_f.colptr[3]] = saved;
    /* an entry above the diagonal, one out of range */
    int32_t row = g_f.rows[g_f.colptr[5] + 1];
    g_f.rows[g_f.colptr[5] + 1] = 2;
    expect_refused(good);
    g_f.rows[g_f.colptr[5] + 1] = N;
    expect_refused(good);
    g_f.rows[g_f.colptr[5] + 1] = row;
    /* not a permutation */
    int32_t p0 = g_f.perm[0];
    g_f.perm[0] = g_f.perm[1];
    expect_refused(good);
    g_f.perm[0] = p0;
    sinew_host_api h = host_with(jobs_serial);
    assert_int_equal(sinew_ldl_create(&h, &good, NULL), SINEW_ERROR_INVALID_ARGUMENT);
    sinew_ldl* s = NULL;
    g_errors = 0;
    assert_int_equal(sinew_ldl_create(&h, &good, &s), SINEW_OK);
    assert_int_equal(g_errors, 0);
    sinew_ldl_destroy(s);
    sinew_ldl_destroy(NULL);
    free(g_f.rows);
    free(g_f.values);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_solves_like_a_dense_factor),
        cmocka_unit_test(test_strided_columns),
        cmocka_unit_test(test_solve_with_rows),
        cmocka_unit_test(test_like_shares_the_cut),
        cmocka_unit_test(test_refactor_same_pattern),
        cmocka_unit_test(test_refuses_malformed_factors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
