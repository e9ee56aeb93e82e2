/* fps-cuda's collision data path on the CPU (cuda/fps_cuda_collide.h; fast projective skinning
 * 2019, Sec. 6), against fps itself. Label cuda: no GPU needed.
 *
 * 1. The merged CRS part (A's CRS entries, then A_col's off-diagonal ones per row), read as the
 *    product kernels read it (plain, and staged in blocks of 256 rows through
 *    fps_cuda_stage.h's views), gives fps's rows of (A + A_col) y bit for bit: sinew_ellcrs_row3
 *    with A_col's diagonal in A's, then sinew_crs_row3_add of the off-diagonal part. Random
 *    matrices; bad inputs refused.
 * 2. The male at the arm-into-torso pose of test_fps_collide_world, stepped by fps (solver=pcg,
 *    collisions=1, so with the limb capsules): before each step the host half of the plugin
 *    (fpsc_col_host_step) predicts from fps's state and detects; then
 *    - the device's collision phases run on the CPU (fpsc_col_pair per pair, fpsc_col_rhs_row
 *      per row with the capsule contacts' targets, over the exported data) give
 *      fps_collide_rhs's Q_col^T p_col plus the capsules' w p bit for bit;
 *    - Alg. 2 over what fpsc_set_collisions would upload (A's new diagonal, J, the merged CRS
 *      part staged per block as the device's products read it, the inner products in
 *      fps_block_sum.h's order, the device's and fps's) gives fps_sim_solve's (A + A_col)
 *      solve bit for bit;
 *    - fpsc_col_check accepts those uploads (and empty ones, which carry A's own diagonal
 *      and J) and refuses corrupted copies (pairs and capsule contacts);
 *    - fps's own step then finds the same pairs at its own prediction.
 *    Skipped (a message; a failure under SINEW_REQUIRE_DATA=1) without the test data.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>

#include <sinew/sinew_import.h>

#include "builtin_backends.h"
#include "cuda_test.h"
#include "fps_block_sum.h"
#include "fps_collide.h"
#include "fps_cuda_collide.h"
#include "fps_cuda_device.h"
#include "fps_cuda_stage.h"
#include "fps_cuda_test_arm.h"
#include "fps_internal.h"

#define BLOCK FPS_SUM_BLOCK

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint32_t rng(void)
{
    return cuda_test_rng(&rng_state);
}
static double rng_unit(void)
{
    return cuda_test_rng_unit(&rng_state);
}

/* Row i of the merged matrix the device's way: ELL part, then the merged CRS part (staged:
 * copied per block of 256 rows to a buffer, read through fps_cuda_stage.h's views). */
static void merged_row(const sinew_ellcrs* A, const uint32_t* m_ptr, const uint32_t* m_col,
                       const double* m_val, const uint32_t* none, int staged, uint32_t i,
                       const double* y, size_t ld, double out[3], double* sval, uint32_t* scol)
{
    sinew_ellcrs full = *A;
    full.crs_ptr = m_ptr;
    full.crs_col = m_col;
    full.crs_val = m_val;
    if (!staged) {
        fps_matvec_row(&full, NULL, i, y, ld, out);
        return;
    }
    uint32_t s0 = i - i % BLOCK, end = s0 + BLOCK < A->rows ? s0 + BLOCK : A->rows;
    uint32_t base = m_ptr[s0], count = m_ptr[end] - base;
    for (uint32_t e = 0; e < count; ++e) {
        sval[e] = m_val[base + e];
        scol[e] = m_col[base + e];
    }
    sinew_ellcrs ell;
    sinew_crs crs;
    fpsc_staged_views(&full, none, base, sval, scol, &ell, &crs);
    fps_matvec_row(&ell, &crs, i, y, ld, out);
}

/* Part 1: random A (ELL width 3, CRS rows of 0..12 entries) and A_col (symmetric pairs, with
 * and without diagonal entries). */
static void check_merge_random(void)
{
    const uint32_t n = 700, W = 3;
    double* ell_val = calloc((size_t)W * n, sizeof(double));
    uint32_t* ell_col = calloc((size_t)W * n, sizeof(uint32_t));
    uint32_t* a_ptr = calloc(n + 1u, sizeof(uint32_t));
    uint32_t* a_col = calloc(12u * n, sizeof(uint32_t));
    double* a_val = calloc(12u * n, sizeof(double));
    uint32_t* c_ptr = calloc(n + 1u, sizeof(uint32_t));
    uint32_t* c_col = calloc(8u * n, sizeof(uint32_t));
    double* c_val = calloc(8u * n, sizeof(double));
    uint32_t* none = calloc(n + 1u, sizeof(uint32_t));
    double* y = calloc(3u * n, sizeof(double));
    CHECK(ell_val && ell_col && a_ptr && a_col && a_val && c_ptr && c_col && c_val && none && y);
    for (uint32_t i = 0; i < n; ++i) {
        ell_val[i] = 4.0 + rng_unit();
        ell_col[i] = i;
        for (uint32_t k = 1; k < W; ++k) {
            ell_col[(size_t)k * n + i] = (i + k) % n;
            ell_val[(size_t)k * n + i] = rng_unit();
        }
        uint32_t len = rng() % 13u, c = (i + W) % n;
        a_ptr[i + 1] = a_ptr[i];
        for (uint32_t e = 0; e < len && c != i; ++e) {
            a_col[a_ptr[i + 1]] = c;
            a_val[a_ptr[i + 1]++] = rng_unit();
            c = (c + 1u + rng() % 5u) % n;
            if (c <= a_col[a_ptr[i + 1] - 1]) break; /* increasing columns */
        }
        /* A_col: about every fourth row, up to 6 sorted columns, its diagonal among them */
        c_ptr[i + 1] = c_ptr[i];
        if (rng() % 4u == 0) {
            uint32_t j = rng() % n;
            for (uint32_t e = 0; e < 6u && j < n; ++e) {
                if (rng() % 3u == 0 && (c_ptr[i + 1] == c_ptr[i] || c_col[c_ptr[i + 1] - 1] < i) && j > i) {
                    c_col[c_ptr[i + 1]] = i;
                    c_val[c_ptr[i + 1]++] = 3.0;
                }
                c_col[c_ptr[i + 1]] = j;
                c_val[c_ptr[i + 1]++] = rng_unit();
                j += 1u + rng() % 90u;
            }
        }
    }
    for (uint32_t k = 0; k < 3u * n; ++k) y[k] = rng_unit() * 10.0;
    sinew_ellcrs A = {n, W, ell_val, ell_col, a_ptr, a_col, a_val};
    sinew_crs C = {n, c_ptr, c_col, c_val};
    /* fps's side: A_col's diagonal into A, the rest a separate CRS matrix
     * (fps_sim_set_collision_matrix) */
    double* diag = malloc((size_t)W * n * sizeof(double));
    uint32_t* o_ptr = calloc(n + 1u, sizeof(uint32_t));
    uint32_t* o_col = calloc(8u * n, sizeof(uint32_t));
    double* o_val = calloc(8u * n, sizeof(double));
    CHECK(diag && o_ptr && o_col && o_val);
    memcpy(diag, ell_val, (size_t)W * n * sizeof(double));
    uint32_t off = 0;
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t e = c_ptr[i]; e < c_ptr[i + 1]; ++e) {
            if (c_col[e] == i) diag[i] += c_val[e];
            else {
                o_col[off] = c_col[e];
                o_val[off++] = c_val[e];
            }
        }
        o_ptr[i + 1] = off;
    }
    CHECK(off > 0 && off < c_ptr[n]); /* both kinds of entries occur */
    sinew_ellcrs Ad = A;
    Ad.ell_val = diag;
    sinew_crs O = {n, o_ptr, o_col, o_val};
    size_t size = fpsc_merge_crs_size(&A, &C);
    CHECK(size == (size_t)a_ptr[n] + off);
    uint32_t* m_ptr = calloc(n + 1u, sizeof(uint32_t));
    uint32_t* m_col = calloc(size, sizeof(uint32_t));
    double* m_val = calloc(size, sizeof(double));
    double* sval = calloc(size, sizeof(double));
    uint32_t* scol = calloc(size, sizeof(uint32_t));
    CHECK(m_ptr && m_col && m_val && sval && scol);
    CHECK(fpsc_merge_crs(&A, &C, m_ptr, m_col, m_val, size) == 1);
    CHECK(m_ptr[n] == size);
    for (uint32_t i = 0; i < n; ++i) {
        double ref[3], plain[3], staged[3];
        fps_matvec_row(&Ad, &O, i, y, n, ref);
        merged_row(&Ad, m_ptr, m_col, m_val, none, 0, i, y, n, plain, sval, scol);
        merged_row(&Ad, m_ptr, m_col, m_val, none, 1, i, y, n, staged, sval, scol);
        CHECK(memcmp(ref, plain, sizeof ref) == 0);
        CHECK(memcmp(ref, staged, sizeof ref) == 0);
    }
    /* without A_col: A's CRS part unchanged */
    CHECK(fpsc_merge_crs_size(&A, NULL) == a_ptr[n]);
    CHECK(fpsc_merge_crs(&A, NULL, m_ptr, m_col, m_val, size) == 1);
    CHECK(memcmp(m_ptr, a_ptr, (n + 1u) * sizeof(uint32_t)) == 0);
    CHECK(memcmp(m_col, a_col, a_ptr[n] * sizeof(uint32_t)) == 0);
    /* refused: a short capacity, a row count that differs, a column out of range */
    CHECK(fpsc_merge_crs(&A, &C, m_ptr, m_col, m_val, size - 1u) == 0);
    sinew_crs wrong = C;
    wrong.rows = n - 1u;
    CHECK(fpsc_merge_crs_size(&A, &wrong) == SIZE_MAX);
    CHECK(fpsc_merge_crs(&A, &wrong, m_ptr, m_col, m_val, size) == 0);
    uint32_t last = c_ptr[n] - 1u, keep = c_col[last];
    c_col[last] = n + 3u;
    CHECK(fpsc_merge_crs(&A, &C, m_ptr, m_col, m_val, size) == 0);
    c_col[last] = keep;
    void* arrays[] = {ell_val, ell_col, a_ptr, a_col, a_val, c_ptr, c_col, c_val, none, y, diag,
                      o_ptr, o_col, o_val, m_ptr, m_col, m_val, sval, scol};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; ++k) free(arrays[k]);
    printf("merged CRS: %u rows, %zu entries (%u of A_col off the diagonal): staged and plain "
           "rows equal fps's bit for bit\n", n, size, off);
}

/* ---- part 2: the male ---- */

/* An allocator that refuses the allocation numbered `fail` (0-based; counted in `calls`). */
typedef struct failing_alloc {
    int calls, fail, live;
} failing_alloc;

static void* failing_alloc_fn(size_t size, size_t alignment, void* user)
{
    failing_alloc* f = (failing_alloc*)user;
    if (f->calls++ == f->fail) return NULL;
    void* p = cuda_test_alloc(size, alignment, NULL);
    if (p) f->live++;
    return p;
}

static void failing_free_fn(void* p, void* user)
{
    ((failing_alloc*)user)->live--;
    free(p);
}

/* fpsc_col_host_create's refusals and each of its allocations failing in turn: the specific
 * code, one line, *out NULL and nothing left allocated (ASan sees a use after free). */
static void check_host_create_failures(fps_sim* sim)
{
    cuda_test_log log = {0};
    sinew_host_api host = cuda_test_host(&log);
    fpsc_col_host* h = (fpsc_col_host*)&log;
    CHECK(fpsc_col_host_create(&host, NULL, &h) == SINEW_ERROR_INVALID_ARGUMENT);
    CHECK(h == NULL && log.lines == 1);
    CHECK(fpsc_col_host_create(&host, sim, NULL) == SINEW_ERROR_INVALID_ARGUMENT);
    h = (fpsc_col_host*)&log;
    CHECK(fpsc_col_host_create(NULL, sim, &h) == SINEW_ERROR_INVALID_ARGUMENT);
    CHECK(h == NULL && log.lines == 2);
    failing_alloc f = {0, -1, 0};
    host.allocator.alloc = failing_alloc_fn;
    host.allocator.free = failing_free_fn;
    host.allocator.user = &f;
    CHECK(fpsc_col_host_create(&host, sim, &h) == SINEW_OK && h);
    const int allocations = f.calls;
    fpsc_col_host_destroy(h);
    CHECK(allocations >= 4 && f.live == 0);
    for (int k = 0; k < allocations; ++k) {
        f.calls = 0;
        f.fail = k;
        int before = log.lines;
        h = (fpsc_col_host*)&log;
        CHECK(fpsc_col_host_create(&host, sim, &h) == SINEW_ERROR_OUT_OF_MEMORY);
        CHECK(h == NULL && log.lines == before + 1 && f.live == 0);
        CHECK(strstr(log.last, "out of memory") != NULL);
    }
    printf("fpsc_col_host_create: refusals and %d failed allocations, one line each, nothing "
           "leaked\n", allocations);
}

static float* area_normals(const sinew_mesh_desc* mesh)
{
    float* nrm = calloc((size_t)mesh->vertex_count * 3u, sizeof(float));
    CHECK(nrm);
    for (uint32_t t = 0; t < mesh->triangle_count; ++t) {
        const uint32_t* tri = mesh->indices + 3u * t;
        const float* a = mesh->positions + 3u * tri[0];
        const float* b = mesh->positions + 3u * tri[1];
        const float* c = mesh->positions + 3u * tri[2];
        float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        float e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        float f[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                      e1[0] * e2[1] - e1[1] * e2[0]};
        for (int k = 0; k < 3; ++k)
            for (int q = 0; q < 3; ++q) nrm[3u * tri[k] + (uint32_t)q] += f[q];
    }
    for (uint32_t v = 0; v < mesh->vertex_count; ++v) {
        float* x = nrm + 3u * v;
        float l = sqrtf(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
        if (l > 0.0f) x[0] /= l, x[1] /= l, x[2] /= l;
        else x[0] = 0.0f, x[1] = 0.0f, x[2] = 1.0f;
    }
    return nrm;
}

static sinew_mesh_view mesh_view(const sinew_mesh_desc* mesh, const float* normals)
{
    sinew_mesh_view v;
    memset(&v, 0, sizeof v);
    v.vertex_count = mesh->vertex_count;
    v.triangle_count = mesh->triangle_count;
    v.positions = mesh->positions;
    v.normals = normals;
    v.indices = mesh->indices;
    v.submesh_count = mesh->submesh_count;
    v.submesh_first_triangle = mesh->submesh_first_triangle;
    return v;
}

/* Skinning matrices: model * inverse(bind) (affine, column-major). */
static void skinning_from_model(const float* bind, const float* model, uint32_t joints, float* out)
{
    for (uint32_t j = 0; j < joints; ++j) {
        const float* m = bind + 16u * j;
        double a[3][3], c[3][3];
        for (int r = 0; r < 3; ++r)
            for (int k = 0; k < 3; ++k) a[r][k] = m[4 * k + r];
        c[0][0] = a[1][1] * a[2][2] - a[1][2] * a[2][1];
        c[0][1] = a[0][2] * a[2][1] - a[0][1] * a[2][2];
        c[0][2] = a[0][1] * a[1][2] - a[0][2] * a[1][1];
        c[1][0] = a[1][2] * a[2][0] - a[1][0] * a[2][2];
        c[1][1] = a[0][0] * a[2][2] - a[0][2] * a[2][0];
        c[1][2] = a[0][2] * a[1][0] - a[0][0] * a[1][2];
        c[2][0] = a[1][0] * a[2][1] - a[1][1] * a[2][0];
        c[2][1] = a[0][1] * a[2][0] - a[0][0] * a[2][1];
        c[2][2] = a[0][0] * a[1][1] - a[0][1] * a[1][0];
        double det = a[0][0] * c[0][0] + a[0][1] * c[1][0] + a[0][2] * c[2][0];
        CHECK(fabs(det) > 1e-12);
        float inv[16] = {0};
        for (int r = 0; r < 3; ++r) {
            double t = 0.0;
            for (int k = 0; k < 3; ++k) {
                inv[4 * k + r] = (float)(c[r][k] / det);
                t -= c[r][k] / det * m[12 + k];
            }
            inv[12 + r] = (float)t;
        }
        inv[15] = 1.0f;
        const float* p = model + 16u * j;
        for (int col = 0; col < 4; ++col)
            for (int r = 0; r < 4; ++r) {
                float s = 0.0f;
                for (int k = 0; k < 4; ++k) s += p[4 * k + r] * inv[4 * col + k];
                out[16u * j + 4u * (uint32_t)col + (uint32_t)r] = s;
            }
    }
}

/* Block blk's rows s0 .. end - 1 and their views, with the block's merged CRS part staged
 * into sval / scol as the device's products stage it. */
static void stage_block(const sinew_ellcrs* A, const fpsc_collisions* c, const uint32_t* none,
                        uint32_t ns, uint32_t blk, double* sval, uint32_t* scol,
                        sinew_ellcrs* ellv, sinew_crs* crs, uint32_t* s0, uint32_t* end)
{
    *s0 = blk * BLOCK;
    *end = *s0 + BLOCK < ns ? *s0 + BLOCK : ns;
    uint32_t base = c->crs_ptr[*s0], count = c->crs_ptr[*end] - base;
    for (uint32_t e = 0; e < count; ++e) {
        sval[e] = c->crs_val[base + e];
        scol[e] = c->crs_col[base + e];
    }
    fpsc_staged_views(A, none, base, sval, scol, ellv, crs);
}

/* Alg. 2 over the data fpsc_set_collisions uploads (init, then matvec / update / direction per
 * iteration; products through the staged merged CRS part, as the device's; each block's share
 * a tree over its rows' terms, the blocks in order: fps_block_sum.h, as the device and fps). */
static void device_pcg(const fps_sim_arrays* a, const fpsc_collisions* c, uint32_t iterations,
                       const double* b, double* x)
{
    const uint32_t ns = a->ns, blocks = (ns + BLOCK - 1u) / BLOCK;
    size_t n3 = 3u * (size_t)ns;
    double* ell = malloc((size_t)a->A.ell_width * ns * sizeof(double));
    double* r = calloc(n3, sizeof(double));
    double* d = calloc(n3, sizeof(double));
    double* q = calloc(n3, sizeof(double));
    double* partial = calloc(3u * (size_t)blocks, sizeof(double));
    fps_block_acc acc;
    uint32_t* none = calloc(ns + 1u, sizeof(uint32_t));
    size_t cap = c->crs_ptr[ns] ? c->crs_ptr[ns] : 1u;
    double* sval = calloc(cap, sizeof(double));
    uint32_t* scol = calloc(cap, sizeof(uint32_t));
    CHECK(ell && r && d && q && partial && none && sval && scol);
    /* the device's A: the ELL part uploaded once, its diagonal replaced by c->diagonal */
    memcpy(ell, a->A.ell_val, (size_t)a->A.ell_width * ns * sizeof(double));
    memcpy(ell, c->diagonal, ns * sizeof(double));
    sinew_ellcrs A = a->A;
    A.ell_val = ell;
    A.crs_ptr = c->crs_ptr;
    A.crs_col = c->crs_col;
    A.crs_val = c->crs_val;
    double delta[3], gamma[3], dq[3];
    for (uint32_t blk = 0; blk < blocks; ++blk) {
        uint32_t s0, end;
        sinew_ellcrs ellv;
        sinew_crs crs;
        stage_block(&A, c, none, ns, blk, sval, scol, &ellv, &crs, &s0, &end);
        fps_block_acc_init(&acc);
        for (uint32_t i = s0; i < end; ++i) {
            double s[3] = {0.0, 0.0, 0.0};
            fps_pcg_init_row(&ellv, &crs, c->jinv, i, b, x, ns, r, d, ns, s);
            fps_block_acc_row(&acc, s);
        }
        fps_block_acc_sum(&acc, partial + 3u * blk);
    }
    for (int k = 0; k < 3; ++k) {
        delta[k] = 0.0;
        for (uint32_t blk = 0; blk < blocks; ++blk) delta[k] += partial[3u * blk + (uint32_t)k];
    }
    for (uint32_t it = 0; it < iterations; ++it) {
        memcpy(gamma, delta, sizeof gamma);
        for (uint32_t blk = 0; blk < blocks; ++blk) {
            uint32_t s0, end;
            sinew_ellcrs ellv;
            sinew_crs crs;
            stage_block(&A, c, none, ns, blk, sval, scol, &ellv, &crs, &s0, &end);
            fps_block_acc_init(&acc);
            for (uint32_t i = s0; i < end; ++i) {
                double s[3] = {0.0, 0.0, 0.0};
                fps_pcg_matvec_row(&ellv, &crs, i, d, q, ns, s);
                fps_block_acc_row(&acc, s);
            }
            fps_block_acc_sum(&acc, partial + 3u * blk);
        }
        double alpha[3], beta[3];
        for (int k = 0; k < 3; ++k) {
            dq[k] = 0.0;
            for (uint32_t blk = 0; blk < blocks; ++blk) dq[k] += partial[3u * blk + (uint32_t)k];
            alpha[k] = fps_pcg_alpha(gamma[k], dq[k]);
        }
        for (uint32_t blk = 0; blk < blocks; ++blk) {
            uint32_t s0 = blk * BLOCK, end = s0 + BLOCK < ns ? s0 + BLOCK : ns;
            fps_block_acc_init(&acc);
            for (uint32_t i = s0; i < end; ++i) {
                double s[3] = {0.0, 0.0, 0.0};
                fps_pcg_update_row(alpha, c->jinv, i, x, ns, r, d, q, ns, s, NULL);
                fps_block_acc_row(&acc, s);
            }
            fps_block_acc_sum(&acc, partial + 3u * blk);
        }
        for (int k = 0; k < 3; ++k) {
            delta[k] = 0.0;
            for (uint32_t blk = 0; blk < blocks; ++blk) delta[k] += partial[3u * blk + (uint32_t)k];
            beta[k] = fps_pcg_beta(delta[k], gamma[k]);
        }
        for (uint32_t i = 0; i < ns; ++i) fps_pcg_direction_row(beta, c->jinv, i, r, d, ns);
    }
    void* arrays[] = {ell, r, d, q, partial, none, sval, scol};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; ++k) free(arrays[k]);
}

/* fpsc_set_collisions's check (fpsc_col_check) on real data: accepted as fps exported it,
 * refused with each kind of corruption a kernel would follow out of bounds or into stale
 * shares. */
static void check_upload_refusals(const fpsc_collisions* cd, uint32_t ns, uint32_t N,
                                  uint32_t triangles, uint32_t bones)
{
    CHECK(fpsc_col_check(ns, N, triangles, bones, cd) == NULL);
    CHECK(fpsc_col_check(ns, N, triangles, bones, NULL) != NULL);
    fpsc_collisions bad = *cd;
    bad.stride = cd->pair_count - 1u;
    CHECK(fpsc_col_check(ns, N, triangles, bones, &bad) != NULL);
    bad = *cd;
    bad.jinv = NULL;
    CHECK(fpsc_col_check(ns, N, triangles, bones, &bad) != NULL);
    /* a pair's row, a pair's triangle, a matrix column out of range */
    uint32_t P = cd->pair_count, G = cd->gather_ptr[ns], E = cd->crs_ptr[ns];
    uint32_t* rows = malloc(P * sizeof(uint32_t));
    uint32_t* gather = malloc((G ? G : 1u) * sizeof(uint32_t));
    uint32_t* cols = malloc((E ? E : 1u) * sizeof(uint32_t));
    CHECK(rows && gather && cols);
    memcpy(rows, cd->pair_row, P * sizeof(uint32_t));
    memcpy(gather, cd->gather, G * sizeof(uint32_t));
    memcpy(cols, cd->crs_col, E * sizeof(uint32_t));
    bad = *cd;
    bad.pair_row = rows;
    rows[P - 1u] = N;
    CHECK(fpsc_col_check(ns, N, triangles, bones, &bad) != NULL);
    CHECK(fpsc_col_check(ns, N, 0u, bones, cd) != NULL); /* every pair's triangle out of range */
    /* gather slots: a pair beyond pair_count (stale shares), a column of a slot (not a slot),
     * a slot beyond the four */
    CHECK(G > 0);
    bad = *cd;
    bad.gather = gather;
    gather[G - 1u] = cd->pair_count; /* slot 0 of the first unused pair */
    CHECK(cd->pair_count < cd->stride);
    CHECK(fpsc_col_check(ns, N, triangles, bones, &bad) != NULL);
    gather[G - 1u] = cd->stride; /* component 1 of slot 0, pair 0 */
    CHECK(fpsc_col_check(ns, N, triangles, bones, &bad) != NULL);
    gather[G - 1u] = 12u * cd->stride;
    CHECK(fpsc_col_check(ns, N, triangles, bones, &bad) != NULL);
    gather[G - 1u] = 9u * cd->stride; /* slot 3 of pair 0: a valid slot */
    CHECK(fpsc_col_check(ns, N, triangles, bones, &bad) == NULL);
    bad = *cd;
    bad.crs_col = cols;
    cols[E - 1u] = ns;
    CHECK(fpsc_col_check(ns, N, triangles, bones, &bad) != NULL);
    free(rows);
    free(gather);
    free(cols);
}

/* The capsule contacts of an upload: a count that does not match the rows, a bone without a
 * table, a missing per-row table. */
static void check_capsule_refusals(const fpsc_collisions* cd, uint32_t ns, uint32_t N,
                                   uint32_t triangles, uint32_t bones)
{
    CHECK(cd->cap_count > 0 && cd->cap_of_row);
    CHECK(fpsc_col_check(ns, N, triangles, bones, cd) == NULL);
    fpsc_collisions bad = *cd;
    bad.cap_count = cd->cap_count + 1u;
    CHECK(fpsc_col_check(ns, N, triangles, bones, &bad) != NULL);
    bad = *cd;
    bad.cap_of_row = NULL;
    CHECK(fpsc_col_check(ns, N, triangles, bones, &bad) != NULL);
    CHECK(fpsc_col_check(ns, N, triangles, 0u, cd) != NULL); /* no tables */
    uint32_t* rows = malloc((size_t)ns * sizeof(uint32_t));
    CHECK(rows);
    memcpy(rows, cd->cap_of_row, (size_t)ns * sizeof(uint32_t));
    uint32_t i = 0;
    while (rows[i] == FPS_COLLIDE_NONE) ++i;
    rows[i] = bones; /* a bone out of range */
    bad = *cd;
    bad.cap_of_row = rows;
    CHECK(fpsc_col_check(ns, N, triangles, bones, &bad) != NULL);
    free(rows);
}

static int check_male(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/characters/male/male.ini", sinew_import_data_dir());
    if (!cuda_test_data_present(path, "male part skipped")) return 0;
    sample_character ch;
    CHECK(sample_character_load(path, NULL, &ch) == SINEW_OK);
    const sinew_rig_desc* rd = &ch.rig;
    float* rnorm = rd->render_mesh.normals ? NULL : area_normals(&rd->render_mesh);
    float* snorm = rd->simulation_mesh.vertex_count ? area_normals(&rd->simulation_mesh) : NULL;
    sinew_rig_view view;
    memset(&view, 0, sizeof view);
    view.struct_size = (uint32_t)sizeof view;
    view.joint_count = rd->skeleton.joint_count;
    view.parents = rd->skeleton.parents;
    view.names = rd->skeleton.names;
    view.bind_matrices = rd->skeleton.bind_matrices;
    view.render_mesh = mesh_view(&rd->render_mesh, rd->render_mesh.normals ? rd->render_mesh.normals
                                                                           : rnorm);
    if (snorm) view.simulation_mesh = mesh_view(&rd->simulation_mesh, snorm);

    cuda_test_log log = {0};
    sinew_host_api host = cuda_test_host(&log);
    host.log_level = SINEW_LOG_WARNING;
    /* fps's defaults with collisions=1: the prism pairs and the limb capsules */
    const sinew_param params[] = {{"solver", "pcg"}, {"collisions", "1"}, {"pcg_iterations", "10"}};
    void* inst = NULL;
    CHECK(sinew_backend_fps.prepare(&host, &view, params, 3, NULL, &inst) == SINEW_OK);
    fps_sim* sim = fps_instance_sim(inst);
    fps_collide* col = fps_sim_collide(sim);
    CHECK(sim && col);
    fps_sim_arrays a;
    fps_sim_arrays_get(sim, &a);
    check_host_create_failures(sim);
    fpsc_col_host* h = NULL;
    CHECK(fpsc_col_host_create(&host, sim, &h) == SINEW_OK);
    /* the static data the device gets at creation */
    fps_collide_data ex;
    CHECK(fps_collide_get_data(&host, col, &ex) == SINEW_OK);
    CHECK(ex.n_free == a.ns && ex.tissue_count == a.N && ex.weight > 0.0 && ex.margin >= 0.0);
    /* refusals: one line each */
    int lines = log.lines;
    CHECK(fps_collide_get_data(&host, NULL, &ex) == SINEW_ERROR_INVALID_ARGUMENT);
    int changed = 0;
    CHECK(fpsc_col_host_step(h, NULL, a.v, &changed) == SINEW_ERROR_INVALID_ARGUMENT);
    CHECK(log.lines == lines + 2);

    const uint32_t joints = rd->skeleton.joint_count, N = a.N, ns = a.ns;
    float* model = malloc((size_t)joints * 64u);
    float* skin = malloc((size_t)joints * 64u);
    size_t n3 = 3u * (size_t)ns;
    double* mine = calloc(3u * (size_t)ns, sizeof(double));
    double* contrib = NULL;
    double* b = calloc(n3, sizeof(double));
    double* x_dev = calloc(n3, sizeof(double));
    double* x_fps = calloc(n3, sizeof(double));
    uint32_t* pv = calloc(a.n, sizeof(uint32_t));
    uint32_t* pt = calloc(a.n, sizeof(uint32_t));
    CHECK(model && skin && mine && b && x_dev && x_fps && pv && pt);
    uint32_t checked = 0, most = 0, changes = 0, capsule_steps = 0, most_caps = 0;
    for (uint32_t s = 1; s <= SAMPLE_RAMP_STEPS + 10u; ++s) {
        fpsc_arm_pose(&ch, s, model);
        skinning_from_model(rd->skeleton.bind_matrices, model, joints, skin);
        fps_sim_set_pose(sim, skin);
        fps_sim_update_targets(sim);
        /* the plugin's host half on fps's state (the device's copy of it in the plugin) */
        CHECK(fpsc_col_host_step(h, a.x, a.v, &changed) == SINEW_OK);
        changes += (uint32_t)changed;
        const uint32_t P = fps_collide_pair_count(col);
        const uint32_t caps = fps_collide_capsule_count(col);
        if (P > most) most = P;
        if (caps > most_caps) most_caps = caps;
        if (P > 0 || caps > 0) {
            const double* xp = fpsc_col_host_predicted(h);
            /* the device's collision phases on the CPU over the exported data */
            CHECK(fps_collide_get_data(&host, col, &ex) == SINEW_OK);
            CHECK(ex.pair_count == P && ex.stride >= P && ex.cap_count == caps);
            CHECK(ex.bone_count > 0 && ex.cap_frame && ex.cap_radii && ex.cap_pose);
            fpsc_collisions cd;
            CHECK(fpsc_col_host_collisions(h, &cd) == SINEW_OK);
            CHECK(cd.pair_count == P && cd.cap_count == caps && cd.cap_of_row);
            free(contrib);
            contrib = calloc(12u * ex.stride + 1u, sizeof(double));
            CHECK(contrib);
            fpsc_col_view C = {ex.n_free, ex.pair_count, ex.stride, ex.pair_row, ex.pair_tri,
                               ex.triangles, ex.sign, ex.weight, ex.margin, contrib,
                               ex.gather_ptr, ex.gather, mine, cd.cap_count, cd.cap_of_row,
                               ex.cap_frame, ex.cap_radii, ex.cap_pose};
            for (uint32_t p = 0; p < P; ++p) fpsc_col_pair(&C, xp, N, p);
            for (uint32_t r = 0; r < ns; ++r) CHECK(fpsc_col_rhs_row(&C, xp, N, r) == mine);
            CHECK(fps_collide_rhs(col, xp, N) == 1);
            CHECK(memcmp(mine, fps_collide_extra(col), n3 * sizeof(double)) == 0);
            /* Alg. 2 over the uploaded data against fps's solve of A + A_col */
            if (P > 0) check_upload_refusals(&cd, ns, N, ex.triangle_count, ex.bone_count);
            if (caps > 0) {
                check_capsule_refusals(&cd, ns, N, ex.triangle_count, ex.bone_count);
                ++capsule_steps;
            }
            for (size_t k = 0; k < n3; ++k) {
                b[k] = 1e-2 * rng_unit() + (double)(k % 7u);
                uint32_t c = (uint32_t)(k / ns), i = (uint32_t)(k % ns);
                x_dev[k] = x_fps[k] = xp[(size_t)c * N + i];
            }
            device_pcg(&a, &cd, 10u, b, x_dev);
            CHECK(fps_sim_solve(sim, b, x_fps, NULL) == SINEW_OK);
            CHECK(memcmp(x_dev, x_fps, n3 * sizeof(double)) == 0);
            memcpy(pv, fps_collide_pair_vertices(col), P * sizeof(uint32_t));
            memcpy(pt, fps_collide_pair_triangles(col), P * sizeof(uint32_t));
            checked += P > 0;
        }
        if (P == 0 && caps == 0) {
            /* what a step without pairs uploads (after the pairs vanished, or never held) */
            fpsc_collisions cd;
            CHECK(fpsc_col_host_collisions(h, &cd) == SINEW_OK);
            CHECK(cd.pair_count == 0 && cd.gather_ptr[ns] == 0 && cd.crs_ptr[ns] == a.A.crs_ptr[ns]);
            CHECK(fpsc_col_check(ns, N, ex.triangle_count, ex.bone_count, &cd) == NULL);
            /* A's own diagonal and J again: fps_sim_set_collision_matrix(NULL) restored them */
            for (uint32_t i = 0; i < ns; ++i) CHECK(cd.jinv[i] == 1.0 / cd.diagonal[i]);
        }
        /* fps's step detects at its own prediction: the same pairs */
        CHECK(fps_sim_step(sim) == SINEW_OK);
        CHECK(fps_collide_pair_count(col) == P);
        if (P > 0) {
            CHECK(memcmp(pv, fps_collide_pair_vertices(col), P * sizeof(uint32_t)) == 0);
            CHECK(memcmp(pt, fps_collide_pair_triangles(col), P * sizeof(uint32_t)) == 0);
        }
    }
    printf("male at %s (%s): %u steps with pairs (most %u), %u with limb capsule contacts (most "
           "%u), %u changes of the set: collision right-hand side and PCG over the uploaded data "
           "equal fps's bit for bit\n", FPSC_ARM_POSE, FPSC_ARM_JOINT, checked, most,
           capsule_steps, most_caps, changes);
    /* the pose must collide, pairs and capsules, or the comparison is vacuous */
    CHECK(checked > 0 && capsule_steps > 0);
    void* arrays[] = {model, skin, mine, contrib, b, x_dev, x_fps, pv, pt, rnorm, snorm};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; ++k) free(arrays[k]);
    fpsc_col_host_destroy(h);
    sinew_backend_fps.destroy(inst);
    sample_character_free(&ch);
    return 1;
}

int main(void)
{
    check_merge_random();
    check_male();
    printf("ok\n");
    return 0;
}
