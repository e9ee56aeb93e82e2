/* SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "mls_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sinew_mls.h"

static void* host_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    void* p = NULL;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    return posix_memalign(&p, alignment, size) == 0 ? p : NULL;
}

static void host_free(void* p, void* user)
{
    (void)user;
    free(p);
}

static void host_parallel_for(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain,
                              void* user)
{
    const mls_test_host* host = (const mls_test_host*)user;
    (void)grain;
    if (!host->uneven) {
        fn(data, 0, count);
        return;
    }
    /* Growing chunk sizes: ranges of one item, of a few, and large ones all occur. */
    uint32_t a = 1, b = 2, begin = 0;
    while (begin < count) {
        uint32_t end = count - begin < a ? count : begin + a;
        fn(data, begin, end);
        begin = end;
        uint32_t c = a + b;
        a = b;
        b = c;
    }
}

void mls_test_host_init(mls_test_host* host, int uneven)
{
    memset(host, 0, sizeof *host);
    sinew_test_log_init(&host->log);
    host->uneven = uneven;
    host->api.struct_size = (uint32_t)sizeof(sinew_host_api);
    host->api.allocator.alloc = host_alloc;
    host->api.allocator.free = host_free;
    host->api.logger = host->log.logger;
    host->api.log_level = SINEW_LOG_INFO;
    host->api.jobs.parallel_for = host_parallel_for;
    host->api.jobs.thread_count = 1;
    host->api.jobs.user = host;
}

mls_mesh mls_make_grid(uint32_t nx, uint32_t ny, float x0, float y0, float z0, float spacing,
                       int (*hole)(uint32_t cx, uint32_t cy))
{
    mls_mesh m;
    m.vertex_count = nx * ny;
    m.positions = malloc(3u * m.vertex_count * sizeof(float));
    m.indices = malloc(6u * (nx - 1u) * (ny - 1u) * sizeof(uint32_t));
    assert_non_null(m.positions);
    assert_non_null(m.indices);
    for (uint32_t y = 0; y < ny; ++y)
        for (uint32_t x = 0; x < nx; ++x) {
            float* p = m.positions + 3u * (y * nx + x);
            p[0] = x0 + spacing * (float)x;
            p[1] = y0 + spacing * (float)y;
            p[2] = z0;
        }
    m.triangle_count = 0;
    for (uint32_t y = 0; y + 1u < ny; ++y)
        for (uint32_t x = 0; x + 1u < nx; ++x) {
            if (hole && hole(x, y)) continue;
            uint32_t v = y * nx + x;
            uint32_t* t = m.indices + 3u * m.triangle_count;
            t[0] = v, t[1] = v + 1u, t[2] = v + nx + 1u;
            t[3] = v, t[4] = v + nx + 1u, t[5] = v + nx;
            m.triangle_count += 2u;
        }
    return m;
}

void mls_mesh_append(mls_mesh* a, mls_mesh* b)
{
    a->positions = realloc(a->positions, 3u * (a->vertex_count + b->vertex_count) * sizeof(float));
    a->indices = realloc(a->indices, 3u * (a->triangle_count + b->triangle_count) * sizeof(uint32_t));
    assert_non_null(a->positions);
    assert_non_null(a->indices);
    memcpy(a->positions + 3u * a->vertex_count, b->positions, 3u * b->vertex_count * sizeof(float));
    for (uint32_t i = 0; i < 3u * b->triangle_count; ++i)
        a->indices[3u * a->triangle_count + i] = b->indices[i] + a->vertex_count;
    a->vertex_count += b->vertex_count;
    a->triangle_count += b->triangle_count;
    mls_mesh_free(b);
}

void mls_mesh_free(mls_mesh* m)
{
    free(m->positions);
    free(m->indices);
    memset(m, 0, sizeof *m);
}

sinew_mesh_view mls_mesh_view(const mls_mesh* m)
{
    sinew_mesh_view v;
    memset(&v, 0, sizeof v);
    v.vertex_count = m->vertex_count;
    v.triangle_count = m->triangle_count;
    v.positions = m->positions;
    v.indices = m->indices;
    return v;
}

double mls_diagonal(const float* p, uint32_t count)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t i = 0; i < count; ++i)
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(lo[k], p[3u * i + (uint32_t)k]);
            hi[k] = fmax(hi[k], p[3u * i + (uint32_t)k]);
        }
    return sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                (hi[2] - lo[2]) * (hi[2] - lo[2]));
}

static void map_displacement(const mls_map* m, const float* x, double u[3])
{
    double t[3];
    for (int k = 0; k < 3; ++k) t[k] = ((double)x[k] - m->centre[k]) / m->scale;
    double mono[6] = {t[0] * t[0], t[1] * t[1], t[2] * t[2], t[0] * t[1], t[0] * t[2], t[1] * t[2]};
    for (int r = 0; r < 3; ++r) {
        double s = m->shift[r];
        for (int c = 0; c < 3; ++c) s += m->lin[r][c] * t[c];
        if (m->kind == 1)
            for (int c = 0; c < 6; ++c) s += m->quad[r][c] * mono[c];
        u[r] = s * m->amp;
    }
}

mls_map mls_make_map(int kind, const float* positions, uint32_t count, double amplitude)
{
    mls_map m;
    memset(&m, 0, sizeof m);
    m.kind = kind;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t i = 0; i < count; ++i)
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(lo[k], positions[3u * i + (uint32_t)k]);
            hi[k] = fmax(hi[k], positions[3u * i + (uint32_t)k]);
        }
    for (int k = 0; k < 3; ++k) m.centre[k] = 0.5 * (lo[k] + hi[k]);
    m.scale = 0.5 * mls_diagonal(positions, count);
    if (!(m.scale > 0.0)) m.scale = 1.0;
    /* Fixed, unremarkable coefficients: a shear, a stretch, a rotation-like part. */
    static const double lin[3][3] = {{0.31, -0.52, 0.17}, {0.44, 0.12, -0.38}, {-0.21, 0.47, 0.26}};
    static const double quad[3][6] = {{0.6, -0.3, 0.2, 0.5, -0.4, 0.1},
                                      {-0.2, 0.7, 0.3, -0.6, 0.2, 0.4},
                                      {0.4, 0.1, -0.5, 0.3, 0.6, -0.7}};
    memcpy(m.lin, lin, sizeof lin);
    if (kind == 1) memcpy(m.quad, quad, sizeof quad);
    m.shift[0] = 0.13, m.shift[1] = -0.07, m.shift[2] = 0.05;
    m.amp = 1.0;
    /* Scale so that the largest displacement over the points is `amplitude`. */
    double worst = 0.0;
    for (uint32_t i = 0; i < count; ++i) {
        double u[3];
        map_displacement(&m, positions + 3u * i, u);
        worst = fmax(worst, sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]));
    }
    m.amp = worst > 0.0 ? amplitude / worst : 0.0;
    return m;
}

void mls_map_apply(const mls_map* m, const float* in, uint32_t count, float* out)
{
    for (uint32_t i = 0; i < count; ++i) {
        double u[3];
        map_displacement(m, in + 3u * i, u);
        for (int k = 0; k < 3; ++k) out[3u * i + (uint32_t)k] = (float)((double)in[3u * i + (uint32_t)k] + u[k]);
    }
}

/* Output of one kernel run, `stride` bytes per vertex, allocated to the last vertex's 12 bytes;
 * padding bytes hold 0xA5. */
static float* strided_buffer(uint32_t count, size_t stride)
{
    size_t bytes = (size_t)(count - 1u) * stride + 12u;
    float* p = malloc(bytes);
    assert_non_null(p);
    memset(p, 0xA5, bytes);
    return p;
}

/* Compares `count` vertices of a strided output with the packed reference, and the padding. */
static void expect_same(const float* out, size_t stride, const float* ref, uint32_t count,
                        const char* what, const char* simd)
{
    for (uint32_t j = 0; j < count; ++j) {
        const unsigned char* v = (const unsigned char*)out + stride * j;
        if (memcmp(v, ref + 3u * j, 12u) != 0) {
            float got[3];
            memcpy(got, v, sizeof got);
            print_error("%s %s: vertex %u is (%.9g %.9g %.9g), the scalar kernel gives "
                        "(%.9g %.9g %.9g)\n",
                        simd, what, j, got[0], got[1], got[2], ref[3u * j], ref[3u * j + 1u],
                        ref[3u * j + 2u]);
            fail();
        }
        if (j + 1u < count)
            for (size_t b = 12u; b < stride; ++b) assert_int_equal(v[b], 0xA5);
    }
}

int mls_check_kernels(mls_test_host* host, const sinew_mls_weights* w, const float* positions,
                      const float* normals)
{
    const uint32_t R = w->render_count, S = w->simulation_count;
    float* ref_p = malloc(12u * (size_t)R);
    float* ref_n = malloc(12u * (size_t)R);
    float* ref_only = malloc(12u * (size_t)R);
    assert_non_null(ref_p);
    assert_non_null(ref_n);
    assert_non_null(ref_only);
    assert_int_equal(sinew_mls_apply_simd(&host->api, SINEW_SIMD_SCALAR, w, S, positions, normals,
                                          ref_p, 0, ref_n, 0, NULL, 0),
                     SINEW_OK);
    assert_int_equal(sinew_mls_apply_simd(&host->api, SINEW_SIMD_SCALAR, w, S, positions, NULL,
                                          ref_only, 0, NULL, 0, NULL, 0),
                     SINEW_OK);
    /* Without normals the positions are the same sums. */
    assert_memory_equal(ref_only, ref_p, 12u * (size_t)R);
    sinew_mls_weights unpacked = *w;
    unpacked.packed = NULL;
    /* The weights as given with the records allocated per call, without packed entries, and
     * as given with the caller's scratch (exactly as large as asked for). */
    const sinew_mls_weights* variants[3] = {w, &unpacked, w};
    const size_t scratch_size = sinew_mls_scratch_size(w);
    void* scratch = scratch_size ? malloc(scratch_size) : NULL;
    assert_true(!scratch_size || scratch);
    static const sinew_simd requests[] = {SINEW_SIMD_SCALAR, SINEW_SIMD_SSE41, SINEW_SIMD_AVX2,
                                          SINEW_SIMD_AVX512, SINEW_SIMD_AUTO};
    static const size_t strides[] = {12u, 20u};
    int simd_runs = 0;
    for (size_t q = 0; q < sizeof requests / sizeof requests[0]; ++q) {
        const sinew_simd simd = requests[q];
        const char* name = sinew_simd_name(simd);
        if (sinew_mls_resolve(simd) == SINEW_SIMD_COUNT) {
            sinew_test_log_reset(&host->log);
            float* out = strided_buffer(R, 12u);
            assert_int_equal(sinew_mls_apply_simd(&host->api, simd, w, S, positions, normals, out,
                                                  0, NULL, 0, NULL, 0),
                             SINEW_ERROR_UNSUPPORTED);
            assert_int_equal(host->log.count[SINEW_LOG_ERROR], 1);
            assert_int_equal(host->log.total, 1);
            free(out);
            continue;
        }
        for (int v = 0; v < 3; ++v)
            for (size_t s = 0; s < sizeof strides / sizeof strides[0]; ++s) {
                const size_t stride = strides[s];
                void* scr = v == 2 ? scratch : NULL;
                const size_t scr_size = v == 2 ? scratch_size : 0u;
                float* out_p = strided_buffer(R, stride);
                float* out_n = strided_buffer(R, stride);
                assert_int_equal(sinew_mls_apply_simd(&host->api, simd, variants[v], S, positions,
                                                      normals, out_p, stride, out_n, stride, scr,
                                                      scr_size),
                                 SINEW_OK);
                expect_same(out_p, stride, ref_p, R, "positions (with normals)", name);
                static const char* const kinds[3] = {"normals", "normals (unpacked)",
                                                     "normals (caller's scratch)"};
                expect_same(out_n, stride, ref_n, R, kinds[v], name);
                memset(out_p, 0xA5, (size_t)(R - 1u) * stride + 12u);
                assert_int_equal(sinew_mls_apply_simd(&host->api, simd, variants[v], S, positions,
                                                      NULL, out_p, stride, NULL, 0, scr, scr_size),
                                 SINEW_OK);
                expect_same(out_p, stride, ref_p, R, "positions", name);
                free(out_p);
                free(out_n);
                if (sinew_mls_resolve(simd) != SINEW_SIMD_SCALAR) ++simd_runs;
            }
    }
    free(scratch);
    free(ref_p);
    free(ref_n);
    free(ref_only);
    return simd_runs;
}
