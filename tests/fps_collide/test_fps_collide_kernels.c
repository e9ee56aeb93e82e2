/* The shared kernels of fps's global collisions (Sec. 6) and the spatial hash, without a
 * model: point-in-tetrahedron on hand-made tets (degenerate ones included), the hash against
 * brute force on random boxes and points, the projection onto the triangle's plane, and the
 * constraint's matrix (symmetric, translation invariant) and right-hand side (zero energy and
 * zero gradient at the target). SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sinew/sinew_host.h>

#include "test_support.h"

#include "fps_collide_kernels.h"
#include "sinew_spatial_hash.h"

/* ---- a malloc host with the capture logger ---- */

static void* t_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    size_t rounded = (size + alignment - 1u) / alignment * alignment;
    return aligned_alloc(alignment, rounded ? rounded : alignment);
}

static void t_free(void* p, void* user)
{
    (void)user;
    free(p);
}

static void t_parallel_for(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain, void* user)
{
    (void)grain, (void)user;
    fn(data, 0, count);
}

static void host_init(sinew_host_api* host, sinew_test_log* log)
{
    memset(host, 0, sizeof *host);
    sinew_test_log_init(log);
    host->struct_size = (uint32_t)sizeof *host;
    host->allocator.alloc = t_alloc;
    host->allocator.free = t_free;
    host->logger = log->logger;
    host->log_level = SINEW_LOG_WARNING;
    host->jobs.parallel_for = t_parallel_for;
    host->jobs.thread_count = 1;
}

/* A small deterministic generator (the tests must not depend on the C library's rand). */
static uint64_t rng_state = 88172645463325252ull;
static double urand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

static int all_finite(const double* v, int n)
{
    for (int i = 0; i < n; ++i)
        if (!isfinite(v[i])) return 0;
    return 1;
}

/* ---- point in tetrahedron ---- */

static void test_point_in_tet(void** state)
{
    (void)state;
    const double a[3] = {0, 0, 0}, b[3] = {1, 0, 0}, c[3] = {0, 1, 0}, d[3] = {0, 0, 1};
    double bary[4];
    const double inside[3] = {0.1, 0.2, 0.3};
    assert_true(fps_point_in_tet(inside, a, b, c, d, bary));
    assert_true(fabs(bary[0] - 0.4) < 1e-15 && fabs(bary[1] - 0.1) < 1e-15 &&
                fabs(bary[2] - 0.2) < 1e-15 && fabs(bary[3] - 0.3) < 1e-15);
    /* the other orientation gives the same answer */
    assert_true(fps_point_in_tet(inside, a, c, b, d, NULL));
    /* faces, edges and corners count; just outside does not */
    const double on_face[3] = {0.25, 0.25, 0.5}, corner[3] = {1, 0, 0};
    assert_true(fps_point_in_tet(on_face, a, b, c, d, NULL));
    assert_true(fps_point_in_tet(corner, a, b, c, d, NULL));
    const double outside[][3] = {{0.34, 0.34, 0.34}, {-1e-9, 0.2, 0.2}, {0.2, 0.2, -0.01},
                                 {2, 2, 2}, {-0.1, -0.1, -0.1}};
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; ++i)
        assert_false(fps_point_in_tet(outside[i], a, b, c, d, NULL));
    /* random points: inside exactly when the barycentric coordinates say so, and the
     * coordinates reproduce the point */
    for (int i = 0; i < 2000; ++i) {
        double p[3] = {urand() * 1.2 - 0.1, urand() * 1.2 - 0.1, urand() * 1.2 - 0.1};
        int expect = p[0] >= 0 && p[1] >= 0 && p[2] >= 0 && p[0] + p[1] + p[2] <= 1.0;
        int got = fps_point_in_tet(p, a, b, c, d, bary);
        /* points within rounding of a face may go either way */
        double margin = fmin(fmin(p[0], p[1]), fmin(p[2], 1.0 - p[0] - p[1] - p[2]));
        if (fabs(margin) > 1e-12) assert_int_equal(got, expect);
        if (got) {
            for (int k = 0; k < 3; ++k)
                assert_true(fabs(bary[1] * b[k] + bary[2] * c[k] + bary[3] * d[k] - p[k]) < 1e-14);
        }
    }
    /* degenerate tets contain nothing and write nothing non-finite */
    const double flat_d[3] = {0.5, 0.5, 0.0};        /* all four in the plane z = 0 */
    const double line_c[3] = {2, 0, 0}, line_d[3] = {3, 0, 0};
    const double nan3[3] = {NAN, 0, 0}, inf3[3] = {INFINITY, 0, 0};
    const double tiny_d[3] = {0, 0, 1e-20};
    const double q_flat[3] = {0.25, 0.25, 0.0}, q_line[3] = {0.5, 0, 0};
    for (int k = 0; k < 4; ++k) bary[k] = 7.0;
    assert_false(fps_point_in_tet(q_flat, a, b, c, flat_d, bary));
    assert_false(fps_point_in_tet(q_line, a, b, line_c, line_d, bary));
    assert_false(fps_point_in_tet(a, a, a, a, a, bary));
    assert_false(fps_point_in_tet(q_flat, a, b, c, tiny_d, bary));
    assert_false(fps_point_in_tet(inside, a, b, c, nan3, bary));
    assert_false(fps_point_in_tet(inside, a, b, inf3, d, bary));
    assert_false(fps_point_in_tet(nan3, a, b, c, d, bary));
    assert_true(all_finite(bary, 4) && bary[0] == 7.0); /* untouched */
    /* a thin but valid tet (volume 1e-6 of the cube of its edge) still works */
    const double thin_d[3] = {0, 0, 1e-6}, q_thin[3] = {0.2, 0.2, 5e-7};
    assert_true(fps_point_in_tet(q_thin, a, b, c, thin_d, bary));
    assert_true(all_finite(bary, 4));
}

/* ---- spatial hash against brute force ---- */

static int cmp_u32(const void* x, const void* y)
{
    uint32_t a = *(const uint32_t*)x, b = *(const uint32_t*)y;
    return a < b ? -1 : a > b;
}

static void test_hash_brute_force(void** state)
{
    (void)state;
    sinew_host_api host;
    sinew_test_log log;
    host_init(&host, &log);
    enum { BOXES = 3000, POINTS = 4000 };
    double* boxes = calloc(6u * BOXES, sizeof(double));
    assert_non_null(boxes);
    for (uint32_t b = 0; b < BOXES; ++b) {
        /* mostly tet-sized boxes, some long thin ones, a few huge (the large list), one
         * inverted and one with NaN (both contain nothing), negative coordinates included */
        double size = b % 97 == 0 ? 40.0 : b % 13 == 0 ? 3.0 : 0.3 * urand();
        for (int c = 0; c < 3; ++c) {
            double lo = urand() * 20.0 - 10.0;
            double extent = c == (int)(b % 3) || b % 97 == 0 ? size : 0.3 * urand();
            boxes[6u * b + (uint32_t)c] = lo;
            boxes[6u * b + (uint32_t)c + 3u] = lo + extent;
        }
    }
    boxes[6 * 5 + 0] = 1.0, boxes[6 * 5 + 3] = 0.5;  /* inverted */
    boxes[6 * 6 + 1] = NAN;
    uint32_t* found = calloc(BOXES, sizeof(uint32_t));
    uint32_t* expect = calloc(BOXES, sizeof(uint32_t));
    assert_non_null(found);
    assert_non_null(expect);
    sinew_spatial_hash h;
    memset(&h, 0, sizeof h);
    const double cells[] = {0.25, 0.05, 1.7};
    size_t total_hits = 0;
    for (size_t ci = 0; ci < sizeof cells / sizeof cells[0]; ++ci) {
        /* rebuilt into the same structure: arrays are reused or grown */
        assert_int_equal(sinew_spatial_hash_build(&host, &h, boxes, BOXES, cells[ci], 64),
                         SINEW_OK);
        assert_true(h.large_count > 0);
        sinew_spatial_hash_view view = sinew_spatial_hash_get_view(&h);
        for (uint32_t i = 0; i < POINTS; ++i) {
            double p[3] = {urand() * 22.0 - 11.0, urand() * 22.0 - 11.0, urand() * 22.0 - 11.0};
            if (i % 10 == 0) {
                /* a box corner exactly: the closed box contains it */
                uint32_t b = (uint32_t)(urand() * BOXES);
                for (int c = 0; c < 3; ++c) p[c] = boxes[6u * b + (uint32_t)(c + 3 * (i % 20 == 0))];
            }
            uint32_t ne = 0;
            for (uint32_t b = 0; b < BOXES; ++b)
                if (sinew_spatial_hash_contains(boxes, b, p)) expect[ne++] = b;
            uint32_t nf = sinew_spatial_hash_query_point(&view, p, found, BOXES);
            assert_int_equal(nf, ne);
            qsort(found, nf, sizeof(uint32_t), cmp_u32);
            for (uint32_t k = 0; k < nf; ++k) assert_int_equal(found[k], expect[k]);
            total_hits += nf;
            /* a short output buffer still reports the full count */
            if (nf > 1) assert_int_equal(sinew_spatial_hash_query_point(&view, p, found, 1), nf);
        }
        const double nanp[3] = {NAN, 0.0, 0.0};
        assert_int_equal(sinew_spatial_hash_query_point(&view, nanp, found, BOXES), 0);
    }
    assert_true(total_hits > 1000); /* the comparison was not vacuous */
    print_message("hash: %zu box hits over %d queries x 3 cell sizes\n", total_hits, POINTS);

    /* bad input: one line each, and the hash stays queryable */
    sinew_test_log_reset(&log);
    assert_int_equal(sinew_spatial_hash_build(&host, &h, boxes, BOXES, 0.0, 0),
                     SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(log.total, 1);
    assert_non_null(strstr(log.last, "cell size"));
    sinew_test_log_reset(&log);
    assert_int_equal(sinew_spatial_hash_build(&host, &h, boxes, BOXES, NAN, 0),
                     SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(log.total, 1);
    sinew_test_log_reset(&log);
    assert_int_equal(sinew_spatial_hash_build(&host, &h, NULL, BOXES, 1.0, 0),
                     SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(log.total, 1);
    /* an empty build */
    assert_int_equal(sinew_spatial_hash_build(&host, &h, NULL, 0, 1.0, 0), SINEW_OK);
    sinew_spatial_hash_view view = sinew_spatial_hash_get_view(&h);
    const double origin[3] = {0, 0, 0};
    assert_int_equal(sinew_spatial_hash_query_point(&view, origin, found, BOXES), 0);
    sinew_spatial_hash_free(&host, &h);
    /* a hash never built answers nothing */
    view = sinew_spatial_hash_get_view(&h);
    assert_int_equal(sinew_spatial_hash_query_point(&view, origin, found, BOXES), 0);
    free(boxes);
    free(found);
    free(expect);
}

/* ---- projection ---- */

static void random_point(double p[3], double scale)
{
    for (int k = 0; k < 3; ++k) p[k] = (urand() * 2.0 - 1.0) * scale;
}

static void test_projection(void** state)
{
    (void)state;
    for (int i = 0; i < 1000; ++i) {
        double xa[3], xb[3], xc[3], xv[3], p[3], n[3];
        random_point(xa, 1.0);
        random_point(xb, 1.0);
        random_point(xc, 1.0);
        random_point(xv, 2.0);
        double sign = i % 2 ? 1.0 : -1.0;
        double margin = i % 3 == 0 ? 0.01 : 0.0;
        double dist = fps_collide_project(xv, xa, xb, xc, sign, margin, p);
        assert_true(fps_collide_normal(xa, xb, xc, sign, n));
        double r[3] = {p[0] - xa[0], p[1] - xa[1], p[2] - xa[2]};
        double h = r[0] * n[0] + r[1] * n[1] + r[2] * n[2];
        double move[3] = {p[0] - xv[0], p[1] - xv[1], p[2] - xv[2]};
        double along = move[0] * n[0] + move[1] * n[1] + move[2] * n[2];
        if (dist < margin) {
            /* on the plane (raised by the margin), moved along the normal only */
            assert_true(fabs(h - margin) < 1e-12);
            for (int k = 0; k < 3; ++k) assert_true(fabs(move[k] - along * n[k]) < 1e-12);
            assert_true(along > 0.0);
        } else {
            /* unilateral: a vertex above the plane stays where it is */
            for (int k = 0; k < 3; ++k) assert_true(p[k] == xv[k]);
        }
        /* the distance is the signed height */
        double rv[3] = {xv[0] - xa[0], xv[1] - xa[1], xv[2] - xa[2]};
        assert_true(fabs(dist - (rv[0] * n[0] + rv[1] * n[1] + rv[2] * n[2])) < 1e-12);
    }
    /* the sign: +1 is the triangle's own winding (counter-clockwise from above) */
    const double a[3] = {0, 0, 0}, b[3] = {1, 0, 0}, c[3] = {0, 1, 0}, below[3] = {0.2, 0.2, -0.5};
    double p[3];
    assert_true(fabs(fps_collide_project(below, a, b, c, 1.0, 0.0, p) + 0.5) < 1e-15);
    assert_true(fabs(p[2]) < 1e-15 && p[0] == 0.2 && p[1] == 0.2);
    assert_true(fabs(fps_collide_project(below, a, b, c, -1.0, 0.0, p) - 0.5) < 1e-15);
    assert_true(p[2] == -0.5);
    /* degenerate triangles: no move, no NaN */
    const double nan3[3] = {NAN, 0, 0};
    assert_true(fps_collide_project(below, a, b, b, 1.0, 0.0, p) == 0.0);
    assert_true(p[0] == below[0] && p[1] == below[1] && p[2] == below[2]);
    assert_true(fps_collide_project(below, a, b, nan3, 1.0, 0.0, p) == 0.0);
    assert_true(all_finite(p, 3));
}

/* ---- the constraint: matrix and right-hand side ---- */

/* Dense A_col and b_col of the given pairs at positions x (N x 3 blocks), over n_free rows. */
static void dense_system(const double* x, size_t N, uint32_t n_free, const uint32_t* pv,
                         const uint32_t (*pt)[3], uint32_t P, double w, double* A, double* bcol)
{
    memset(A, 0, sizeof(double) * n_free * n_free);
    memset(bcol, 0, sizeof(double) * 3 * n_free);
    double* contrib = calloc(12u * P, sizeof(double));
    assert_non_null(contrib);
    for (uint32_t p = 0; p < P; ++p) {
        uint32_t rows[10], cols[10];
        double vals[10];
        uint32_t m = fps_collide_pair_entries(pv[p], pt[p], w, n_free, rows, cols, vals);
        for (uint32_t e = 0; e < m; ++e) {
            assert_true(rows[e] < n_free && cols[e] < n_free);
            A[(size_t)rows[e] * n_free + cols[e]] += vals[e];
        }
        fps_collide_pair_rhs(x, N, pv[p], pt[p], 1.0, w, 0.0, n_free, p, P, contrib);
    }
    /* gather by hand: slot s of pair p belongs to row ends[s] */
    for (uint32_t p = 0; p < P; ++p) {
        uint32_t ends[4] = {pv[p], pt[p][0], pt[p][1], pt[p][2]};
        for (uint32_t s = 0; s < 4; ++s) {
            if (ends[s] >= n_free) continue;
            for (int i = 0; i < 3; ++i) bcol[(size_t)i * n_free + ends[s]] += contrib[(3u * s + (uint32_t)i) * P + p];
        }
    }
    free(contrib);
}

static void test_constraint_system(void** state)
{
    (void)state;
    /* 3 pairs over 9 vertices; vertices 7 and 8 are constrained (n_free = 7); pairs share
     * triangle corners, and the third pair's triangle has a constrained corner */
    enum { N = 9, NF = 7, P = 3 };
    const uint32_t pv[P] = {0, 1, 2};
    const uint32_t pt[P][3] = {{3, 4, 5}, {3, 5, 6}, {4, 6, 7}};
    double x[3 * N];
    for (int t = 0; t < 20; ++t) {
        for (int i = 0; i < 3 * N; ++i) x[i] = urand() * 2.0 - 1.0;
        /* vertices below their triangles so that every projection moves them */
        for (int p = 0; p < P; ++p) {
            double n[3], xa[3], xb[3], xc[3], xv[3];
            fps_col_load(x, N, pt[p][0], xa);
            fps_col_load(x, N, pt[p][1], xb);
            fps_col_load(x, N, pt[p][2], xc);
            fps_col_load(x, N, pv[p], xv);
            assert_true(fps_collide_normal(xa, xb, xc, 1.0, n));
            double h = (xv[0] - xa[0]) * n[0] + (xv[1] - xa[1]) * n[1] + (xv[2] - xa[2]) * n[2];
            for (int k = 0; k < 3; ++k) x[(size_t)k * N + pv[p]] -= (h + 0.3) * n[k];
        }
        const double w = 2.5;
        double A[NF * NF], b[3 * NF];
        dense_system(x, N, NF, pv, pt, P, w, A, b);
        /* symmetric; rows of vertices without constrained neighbours sum to zero
         * (translation invariance); diagonal positive for every vertex of a pair */
        for (int i = 0; i < NF; ++i) {
            double row = 0.0;
            for (int j = 0; j < NF; ++j) {
                assert_true(A[i * NF + j] == A[j * NF + i]);
                row += A[i * NF + j];
            }
            assert_true(A[i * NF + i] > 0.0);
            if (i != 2 && i != 4 && i != 6) assert_true(fabs(row) < 1e-12);
        }
        /* energy and gradient: E(y) = sum_p (w/2) sum_k |y_v - y_k - d_k|^2 with d from the
         * projections at x, against the quadratic form y^T A y / 2 - b^T y + const over the
         * free rows (constrained rows fixed at x) */
        double d[P][9];
        for (int p = 0; p < P; ++p) {
            double xv[3], xk[3][3], q[3];
            fps_col_load(x, N, pv[p], xv);
            for (int k = 0; k < 3; ++k) fps_col_load(x, N, pt[p][k], xk[k]);
            fps_collide_project(xv, xk[0], xk[1], xk[2], 1.0, 0.0, q);
            for (int k = 0; k < 3; ++k)
                for (int i = 0; i < 3; ++i) d[p][3 * k + i] = q[i] - xk[k][i];
            /* zero energy when v sits on its projection */
            double y[3 * N];
            memcpy(y, x, sizeof y);
            for (int i = 0; i < 3; ++i) y[(size_t)i * N + pv[p]] = q[i];
            assert_true(fps_collide_pair_energy(y, N, pv[p], pt[p], w, d[p]) < 1e-24);
            assert_true(fps_collide_pair_energy(x, N, pv[p], pt[p], w, d[p]) > 1e-3);
        }
        /* gradient of E at random y (free rows) equals A y - b */
        double y[3 * N];
        for (int i = 0; i < 3 * N; ++i) y[i] = x[i];
        for (int i = 0; i < NF; ++i)
            for (int c = 0; c < 3; ++c) y[(size_t)c * N + i] += urand() - 0.5;
        for (int i = 0; i < NF; ++i)
            for (int c = 0; c < 3; ++c) {
                double ay = 0.0;
                for (int j = 0; j < NF; ++j) ay += A[i * NF + j] * y[(size_t)c * N + j];
                const double hstep = 1e-5;
                double yp[3 * N], ym[3 * N];
                memcpy(yp, y, sizeof yp);
                memcpy(ym, y, sizeof ym);
                yp[(size_t)c * N + i] += hstep;
                ym[(size_t)c * N + i] -= hstep;
                double ep = 0.0, em = 0.0;
                for (int p = 0; p < P; ++p) {
                    ep += fps_collide_pair_energy(yp, N, pv[p], pt[p], w, d[p]);
                    em += fps_collide_pair_energy(ym, N, pv[p], pt[p], w, d[p]);
                }
                double g = (ep - em) / (2.0 * hstep);
                assert_true(fabs(g - (ay - b[(size_t)c * NF + i])) < 1e-6);
            }
        /* a single pair: A x* = b at x* (v on its projection), the target is the minimum */
        {
            double A1[NF * NF], b1[3 * NF];
            dense_system(x, N, NF, pv, pt, 1, w, A1, b1);
            double xs[3 * N];
            memcpy(xs, x, sizeof xs);
            double xv[3], xk[3][3], q[3];
            fps_col_load(x, N, pv[0], xv);
            for (int k = 0; k < 3; ++k) fps_col_load(x, N, pt[0][k], xk[k]);
            fps_collide_project(xv, xk[0], xk[1], xk[2], 1.0, 0.0, q);
            for (int i = 0; i < 3; ++i) xs[(size_t)i * N + pv[0]] = q[i];
            for (int i = 0; i < NF; ++i)
                for (int c = 0; c < 3; ++c) {
                    double r = -b1[(size_t)c * NF + i];
                    for (int j = 0; j < NF; ++j) r += A1[i * NF + j] * xs[(size_t)c * N + j];
                    assert_true(fabs(r) < 1e-11);
                }
        }
    }
    /* the gather kernel sums the listed slots in order, rows without slots get zero */
    double contrib[12 * 2];
    for (int i = 0; i < 24; ++i) contrib[i] = (double)(i + 1);
    const uint32_t gptr[4] = {0, 2, 2, 3};
    const uint32_t gather[3] = {0u + 0u, 3u * 1u * 2u + 1u, 3u * 3u * 2u + 0u};
    double extra[9];
    for (uint32_t s = 0; s < 3; ++s) fps_collide_rhs_row(s, gptr, gather, contrib, 2, extra, 3);
    assert_true(extra[0] == contrib[0] + contrib[7] && extra[3] == contrib[2] + contrib[9] &&
                extra[6] == contrib[4] + contrib[11]);
    assert_true(extra[1] == 0.0 && extra[4] == 0.0 && extra[7] == 0.0);
    assert_true(extra[2] == contrib[18] && extra[5] == contrib[20] && extra[8] == contrib[22]);
}

/* fps_collide_anchor_through: a pair is dropped once the skin vertex's base lies more than
 * base_depth below the triangle's plane, kept above that, and never without anchors. */
static void test_anchor_through(void** state)
{
    (void)state;
    /* rows: 0..2 the triangle in z = 0 (counter-clockwise seen from +z), 3 a skin vertex below
     * it, 4 that vertex's base; column blocks of 5 */
    double x[15] = {0.0, 1.0, 0.0, 0.3, 0.3, /* x */
                    0.0, 0.0, 1.0, 0.3, 0.3, /* y */
                    0.0, 0.0, 0.0, -0.1, 0.0};
    const uint32_t tri[3] = {0, 1, 2};
    const uint32_t base_row[1] = {4};
    const double up[1] = {1.0}, down[1] = {-1.0};
    fps_collide_scene S;
    memset(&S, 0, sizeof S);
    S.x = x;
    S.ldx = 5;
    S.triangles = tri;
    S.tri_sign = up;
    S.base_depth = 0.2;
    const double z[] = {0.5, 0.0, -0.19, -0.21, -3.0};
    const int expect[] = {0, 0, 0, 1, 1};
    for (size_t i = 0; i < sizeof z / sizeof z[0]; ++i) {
        x[14] = z[i];
        S.base_row = NULL;
        assert_int_equal(fps_collide_anchor_through(&S, 0, 0), 0);
        S.base_row = base_row;
        if (fps_collide_anchor_through(&S, 0, 0) != expect[i])
            fail_msg("base at z = %g: %d, expected %d", z[i], !expect[i], expect[i]);
    }
    /* the other orientation: outside is -z, so a base at z = +0.3 went through */
    S.tri_sign = down;
    x[14] = 0.3;
    assert_int_equal(fps_collide_anchor_through(&S, 0, 0), 1);
    x[14] = -0.3;
    assert_int_equal(fps_collide_anchor_through(&S, 0, 0), 0);
    /* a degenerate triangle has no plane: nothing is dropped */
    S.tri_sign = up;
    x[1] = 0.0;
    x[6] = 0.0;
    x[14] = -3.0;
    assert_int_equal(fps_collide_anchor_through(&S, 0, 0), 0);
}

/* fps_collide_tet_usable: a tet counts as a container while its signed volume is within a
 * factor FPS_COLLIDE_TET_RATIO of its rest volume, either way; inverted, flat, grossly
 * stretched or non-finite tets do not, and without rest volumes every tet does. */
static void test_tet_usable(void** state)
{
    (void)state;
    const double unit[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    const double rest[2] = {1.0, -1.0}; /* 6 V of the unit tet, and of a tet inverted at rest */
    fps_collide_scene S;
    memset(&S, 0, sizeof S);
    /* the apex's height scales the volume: 6 V = h */
    const double h[] = {1.0, 0.26, 0.24, 3.9, 4.1, 0.0, -0.5, -1.0, 1e300, NAN, INFINITY};
    const int expect[] = {1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0};
    for (size_t i = 0; i < sizeof h / sizeof h[0]; ++i) {
        double c[4][3];
        memcpy(c, unit, sizeof c);
        c[3][2] = h[i];
        S.tet_rest = NULL;
        assert_int_equal(fps_collide_tet_usable(&S, 0, (const double(*)[3])c), 1);
        S.tet_rest = rest;
        if (fps_collide_tet_usable(&S, 0, (const double(*)[3])c) != expect[i])
            fail_msg("apex height %g: %d, expected %d", h[i], !expect[i], expect[i]);
        /* a tet inverted at rest keeps that orientation to count: the mirror image */
        if (isfinite(h[i]) && h[i] != 0.0) {
            c[3][2] = -h[i];
            if (fps_collide_tet_usable(&S, 1, (const double(*)[3])c) != expect[i])
                fail_msg("inverted at rest, apex height %g: %d, expected %d", -h[i], !expect[i],
                         expect[i]);
        }
    }
    /* a rest volume of 0 (a degenerate tet at rest) never counts */
    const double flat[1] = {0.0};
    S.tet_rest = flat;
    assert_int_equal(fps_collide_tet_usable(&S, 0, unit), 0);
}

/* An inelastic contact (fps_collide_stop_row): a row's velocity loses its component along n
 * where that points away from the contact and keeps everything else; the other rows and a
 * velocity already moving against n are untouched. */
static void test_stop_row(void** state)
{
    (void)state;
    const size_t ld = 3;
    const double n[3] = {0.0, 0.6, 0.8};
    double v[9] = {1.0, 2.0, 3.0, /* x of rows 0..2 */
                   4.0, 1.0, -5.0, /* y */
                   2.0, 3.0, 1.0}; /* z */
    double before[9];
    memcpy(before, v, sizeof v);
    fps_collide_stop_row(v, ld, 1u, n); /* row 1: (2, 1, 3), along n 3.0 */
    assert_true(fabs(v[1] - 2.0) < 1e-15);
    assert_true(fabs(v[4] - (1.0 - 3.0 * 0.6)) < 1e-15);
    assert_true(fabs(v[7] - (3.0 - 3.0 * 0.8)) < 1e-15);
    assert_true(fabs(v[1] * n[0] + v[4] * n[1] + v[7] * n[2]) < 1e-15);
    for (int i = 0; i < 3; ++i) {
        assert_true(v[3 * i] == before[3 * i]);
        assert_true(v[3 * i + 2] == before[3 * i + 2]);
    }
    fps_collide_stop_row(v, ld, 2u, n); /* row 2: (3, -5, 1), along n -2.2: kept */
    assert_true(v[2] == 3.0 && v[5] == -5.0 && v[8] == 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_point_in_tet),
        cmocka_unit_test(test_hash_brute_force),
        cmocka_unit_test(test_projection),
        cmocka_unit_test(test_constraint_system),
        cmocka_unit_test(test_anchor_through),
        cmocka_unit_test(test_tet_usable),
        cmocka_unit_test(test_stop_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
