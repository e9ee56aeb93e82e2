/* MLS upsampling on meshes made in code: flat (degenerate) neighbourhoods, holes, separate
 * parts and parts with fewer than K+1 vertices, geodesic distances, determinism under any job
 * split, the weight blob, and the refusal of bad input. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mls_fixture.h"
#include "sinew_geodesic.h"
#include "sinew_mls.h"

static double max_distance(const float* a, const float* b, uint32_t count)
{
    double worst = 0.0;
    for (uint32_t i = 0; i < count; ++i) {
        double d = 0.0;
        for (int k = 0; k < 3; ++k) {
            double e = (double)a[3u * i + (uint32_t)k] - (double)b[3u * i + (uint32_t)k];
            d += e * e;
        }
        worst = fmax(worst, sqrt(d));
    }
    return worst;
}

static int all_finite(const float* v, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (!isfinite(v[i])) return 0;
    return 1;
}

/* Rest pose, affine and quadratic maps of 0.1 diag reproduced within `tol` diag. */
static void check_maps(mls_test_host* host, const sinew_mls_weights* w, const mls_mesh* sim,
                       const mls_mesh* render, double tol)
{
    const uint32_t R = render->vertex_count, S = sim->vertex_count;
    double diag = mls_diagonal(render->positions, R);
    float* out = malloc(3u * R * sizeof(float));
    float* moved = malloc(3u * S * sizeof(float));
    float* expect = malloc(3u * R * sizeof(float));
    assert_non_null(out);
    assert_non_null(moved);
    assert_non_null(expect);
    assert_int_equal(sinew_mls_apply(&host->api, w, S, sim->positions, NULL, out, 0, NULL, 0),
                     SINEW_OK);
    assert_true(all_finite(out, 3u * R));
    assert_true(max_distance(out, render->positions, R) <= 1e-6 * diag);
    for (int kind = 0; kind < 2; ++kind) {
        mls_map map = mls_make_map(kind, render->positions, R, 0.1 * diag);
        mls_map_apply(&map, sim->positions, S, moved);
        mls_map_apply(&map, render->positions, R, expect);
        assert_int_equal(sinew_mls_apply(&host->api, w, S, moved, NULL, out, 0, NULL, 0),
                         SINEW_OK);
        assert_true(all_finite(out, 3u * R));
        double err = max_distance(out, expect, R);
        print_message("  %s map: max error %.3g diag\n", kind ? "quadratic" : "affine", err / diag);
        assert_true(err <= tol * diag);
    }
    free(out);
    free(moved);
    free(expect);
}

/* A flat grid: every neighbourhood is planar, so G is singular in the quadratic (and z)
 * directions; the pseudo-inverse must give finite weights that still reproduce maps on the
 * plane, for the grid itself and for a finer grid in the same plane. */
static void test_flat_grid(void** state)
{
    (void)state;
    mls_test_host host;
    mls_test_host_init(&host, 1);
    mls_mesh sim = mls_make_grid(15, 15, 0.0f, 0.0f, 0.0f, 1.0f, NULL);
    mls_mesh fine = mls_make_grid(29, 29, 0.0f, 0.0f, 0.0f, 0.5f, NULL);
    const mls_mesh* renders[2] = {&sim, &fine};
    for (int r = 0; r < 2; ++r) {
        sinew_mesh_view sv = mls_mesh_view(&sim), rv = mls_mesh_view(renders[r]);
        sinew_mls_weights w;
        assert_int_equal(sinew_mls_bake(&host.api, &sv, &rv, &w), SINEW_OK);
        assert_true(all_finite(w.weights, (size_t)w.render_count * SINEW_MLS_K));
        assert_true(all_finite(w.normal_weights, (size_t)w.render_count * SINEW_MLS_K));
        assert_int_equal(w.stats.inexact_count, 0);
        print_message("  flat grid -> %s: %u corrected, max sum|N| %.3g\n", r ? "finer grid" : "itself",
                      w.stats.corrected_count, w.stats.max_weight_l1);
        check_maps(&host, &w, &sim, renders[r], 1e-5);
        /* Normals of a flat sheet stay the sheet's normal. */
        float* sn = malloc(3u * sim.vertex_count * sizeof(float));
        float* pos = malloc(3u * rv.vertex_count * sizeof(float));
        float* nrm = malloc(3u * rv.vertex_count * sizeof(float));
        assert_non_null(sn);
        assert_non_null(pos);
        assert_non_null(nrm);
        assert_int_equal(sinew_mls_vertex_normals(&host.api, sim.positions, sim.vertex_count,
                                                  sim.indices, sim.triangle_count, sn),
                         SINEW_OK);
        assert_int_equal(sinew_mls_apply(&host.api, &w, sim.vertex_count, sim.positions, sn, pos,
                                         0, nrm, 0),
                         SINEW_OK);
        for (uint32_t j = 0; j < rv.vertex_count; ++j) assert_true(fabsf(nrm[3u * j + 2u] - 1.0f) < 1e-5f);
        free(sn);
        free(pos);
        free(nrm);
        sinew_mls_free(&host.api, &w);
    }
    /* Render vertices off the plane of a planar neighbourhood: no affine combination of the
     * neighbours reaches them. Documented result: finite weights summing to one that give the
     * projection onto the plane, and every such vertex counted as inexact. */
    mls_mesh lifted = mls_make_grid(29, 29, 0.0f, 0.0f, 0.01f, 0.5f, NULL);
    sinew_mesh_view sv = mls_mesh_view(&sim), lv = mls_mesh_view(&lifted);
    sinew_mls_weights w;
    assert_int_equal(sinew_mls_bake(&host.api, &sv, &lv, &w), SINEW_OK);
    assert_int_equal(w.stats.inexact_count, lifted.vertex_count);
    float* out = malloc(3u * lifted.vertex_count * sizeof(float));
    assert_non_null(out);
    assert_int_equal(sinew_mls_apply(&host.api, &w, sim.vertex_count, sim.positions, NULL, out, 0,
                                     NULL, 0),
                     SINEW_OK);
    for (uint32_t j = 0; j < lifted.vertex_count; ++j) {
        assert_true(fabsf(out[3u * j + 2u]) < 1e-6f);
        assert_true(fabsf(out[3u * j] - lifted.positions[3u * j]) < 1e-5f);
        assert_true(fabsf(out[3u * j + 1u] - lifted.positions[3u * j + 1u]) < 1e-5f);
    }
    free(out);
    sinew_mls_free(&host.api, &w);
    mls_mesh_free(&lifted);
    mls_mesh_free(&sim);
    mls_mesh_free(&fine);
    assert_int_equal(host.log.count[SINEW_LOG_ERROR], 0);
}

/* On a flat grid geodesic distance is Euclidean distance: the refined Dijkstra never goes
 * below it and stays within a few per cent above it over a 2K-neighbourhood (its 16 directions
 * leave at most 2.8 % far away; 5 % is reached a few edges from the source). */
static void test_geodesic_flat(void** state)
{
    (void)state;
    mls_test_host host;
    mls_test_host_init(&host, 0);
    mls_mesh grid = mls_make_grid(21, 21, 0.0f, 0.0f, 0.0f, 1.0f, NULL);
    sinew_geodesic geo;
    assert_int_equal(sinew_geodesic_build(&host.api, "test", grid.positions, grid.vertex_count,
                                          grid.indices, grid.triangle_count, &geo),
                     SINEW_OK);
    sinew_geodesic_scratch scratch;
    assert_int_equal(sinew_geodesic_scratch_init(&host.api, &geo, &scratch), SINEW_OK);
    double worst = 0.0;
    const double points[3][3] = {{10.3, 10.6, 0.2}, {4.5, 13.25, -0.1}, {0.0, 0.0, 0.0}};
    for (int p = 0; p < 3; ++p) {
        double q[3], bary[3];
        uint32_t t = sinew_geodesic_closest(&geo, points[p], q, bary);
        assert_true(t < geo.triangle_count);
        /* The closest point of a plane z = 0 is the point dropped onto it. */
        assert_true(fabs(q[0] - fmin(fmax(points[p][0], 0.0), 20.0)) < 1e-12);
        assert_true(fabs(q[1] - fmin(fmax(points[p][1], 0.0), 20.0)) < 1e-12);
        assert_true(fabs(q[2]) < 1e-12);
        sinew_geodesic_hit hits[40];
        uint32_t n = sinew_geodesic_nearest(&host.api, &geo, &scratch, t, q, 40u, hits);
        assert_int_equal(n, 40);
        for (uint32_t i = 0; i < n; ++i) {
            const float* x = grid.positions + 3u * hits[i].vertex;
            double e = sqrt((x[0] - q[0]) * (x[0] - q[0]) + (x[1] - q[1]) * (x[1] - q[1]));
            assert_true(hits[i].distance >= e * (1.0 - 1e-12));
            worst = fmax(worst, hits[i].distance / e - 1.0);
            if (i) assert_true(hits[i].distance >= hits[i - 1u].distance);
        }
    }
    print_message("  flat grid: geodesic distances at most %.2f %% above Euclidean\n", 100.0 * worst);
    assert_true(worst < 0.06);
    sinew_geodesic_scratch_free(&host.api, &scratch);
    sinew_geodesic_free(&host.api, &geo);
    mls_mesh_free(&grid);
}

/* A slot through a grid: columns 8..11 of cells removed on rows 2..17. */
static int slot(uint32_t cx, uint32_t cy)
{
    return cx >= 8u && cx <= 11u && cy >= 2u && cy <= 17u;
}

/* Neighbours are found around a hole, never across it. */
static void test_hole(void** state)
{
    (void)state;
    mls_test_host host;
    mls_test_host_init(&host, 1);
    mls_mesh grid = mls_make_grid(20, 20, 0.0f, 0.0f, 0.0f, 1.0f, slot);
    sinew_mesh_view v = mls_mesh_view(&grid);
    sinew_mls_weights w;
    assert_int_equal(sinew_mls_bake(&host.api, &v, &v, &w), SINEW_OK);
    /* Vertex (8, 10) on the slot's left rim: Euclidean neighbours at x = 12 are 4 away, the
     * way around the slot more than 14. */
    uint32_t j = 10u * 20u + 8u;
    for (uint32_t k = 0; k < SINEW_MLS_K; ++k) {
        uint32_t i = w.indices[(size_t)j * SINEW_MLS_K + k];
        assert_true(i % 20u <= 8u);
    }
    check_maps(&host, &w, &grid, &grid, 1e-5);
    sinew_mls_free(&host.api, &w);
    mls_mesh_free(&grid);
}

/* Two sheets 0.3 apart (closer than their vertex spacing) and a separate 4-vertex patch: each
 * render vertex takes neighbours from its own part only, and the small part, with fewer than
 * K+1 vertices, uses all of them. */
static void test_parts(void** state)
{
    (void)state;
    mls_test_host host;
    mls_test_host_init(&host, 1);
    mls_mesh mesh = mls_make_grid(10, 10, 0.0f, 0.0f, 0.0f, 1.0f, NULL);
    mls_mesh upper = mls_make_grid(10, 10, 0.0f, 0.0f, 0.3f, 1.0f, NULL);
    mls_mesh small = mls_make_grid(2, 2, 50.0f, 0.0f, 0.0f, 1.0f, NULL);
    mls_mesh_append(&mesh, &upper);
    mls_mesh_append(&mesh, &small);
    sinew_mesh_view v = mls_mesh_view(&mesh);
    sinew_mls_weights w;
    assert_int_equal(sinew_mls_bake(&host.api, &v, &v, &w), SINEW_OK);
    assert_int_equal(w.stats.short_count, 4);
    for (uint32_t j = 0; j < mesh.vertex_count; ++j) {
        uint32_t part = j < 100u ? 0u : (j < 200u ? 1u : 2u);
        uint32_t seen = 0; /* bit per vertex of the small part */
        for (uint32_t k = 0; k < SINEW_MLS_K; ++k) {
            size_t e = (size_t)j * SINEW_MLS_K + k;
            uint32_t i = w.indices[e];
            assert_int_equal(i < 100u ? 0u : (i < 200u ? 1u : 2u), part);
            if (part == 2u) seen |= 1u << (i - 200u);
            if (part == 2u && k >= 4u) assert_true(w.weights[e] == 0.0f); /* padding */
        }
        if (part == 2u) assert_int_equal(seen, 0xfu); /* all four reachable vertices */
    }
    check_maps(&host, &w, &mesh, &mesh, 1e-5);
    sinew_mls_free(&host.api, &w);
    mls_mesh_free(&mesh);
}

/* The job split never changes a bit of the weights. */
static void test_deterministic(void** state)
{
    (void)state;
    mls_test_host serial, uneven;
    mls_test_host_init(&serial, 0);
    mls_test_host_init(&uneven, 1);
    mls_mesh grid = mls_make_grid(17, 13, -3.0f, 2.0f, 1.0f, 0.7f, slot);
    /* Bend it so that the quadratic basis is not degenerate. */
    for (uint32_t i = 0; i < grid.vertex_count; ++i) {
        float* p = grid.positions + 3u * i;
        p[2] += 0.05f * p[0] * p[0] - 0.03f * p[0] * p[1];
    }
    sinew_mesh_view v = mls_mesh_view(&grid);
    sinew_mls_weights a, b;
    assert_int_equal(sinew_mls_bake(&serial.api, &v, &v, &a), SINEW_OK);
    assert_int_equal(sinew_mls_bake(&uneven.api, &v, &v, &b), SINEW_OK);
    size_t n = (size_t)a.render_count * SINEW_MLS_K;
    assert_memory_equal(a.indices, b.indices, n * sizeof(uint32_t));
    assert_memory_equal(a.weights, b.weights, n * sizeof(float));
    assert_memory_equal(a.normal_weights, b.normal_weights, n * sizeof(float));
    float* pa = malloc(3u * grid.vertex_count * sizeof(float));
    float* pb = malloc(3u * grid.vertex_count * sizeof(float));
    assert_non_null(pa);
    assert_non_null(pb);
    assert_int_equal(sinew_mls_apply(&serial.api, &a, grid.vertex_count, grid.positions, NULL, pa,
                                     0, NULL, 0),
                     SINEW_OK);
    assert_int_equal(sinew_mls_apply(&uneven.api, &a, grid.vertex_count, grid.positions, NULL, pb,
                                     0, NULL, 0),
                     SINEW_OK);
    assert_memory_equal(pa, pb, 3u * grid.vertex_count * sizeof(float));
    /* The one-pass evaluation (for kernels that want both) gives the two-pass bits. */
    float* sn = malloc(3u * grid.vertex_count * sizeof(float));
    assert_non_null(sn);
    assert_int_equal(sinew_mls_vertex_normals(&serial.api, grid.positions, grid.vertex_count,
                                              grid.indices, grid.triangle_count, sn),
                     SINEW_OK);
    for (uint32_t j = 0; j < grid.vertex_count; ++j) {
        size_t e = (size_t)j * SINEW_MLS_K;
        float p1[3], n1[3], p2[3], n2[3];
        sinew_mls_eval_position(a.indices + e, a.weights + e, grid.positions, p1);
        sinew_mls_eval_normal(a.indices + e, a.normal_weights + e, sn, n1);
        sinew_mls_eval_vertex(a.indices + e, a.weights + e, a.normal_weights + e, grid.positions,
                              sn, p2, n2);
        assert_memory_equal(p1, p2, sizeof p1);
        assert_memory_equal(n1, n2, sizeof n1);
        assert_memory_equal(p1, pa + 3u * j, sizeof p1);
    }
    free(sn);
    free(pa);
    free(pb);
    sinew_mls_free(&serial.api, &a);
    sinew_mls_free(&uneven.api, &b);
    mls_mesh_free(&grid);
}

static uint64_t fnv1a(const uint8_t* p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Patches a little-endian u32 at `at` and re-seals the checksum, so that only the field
 * validation can catch the change. */
static void patch_u32(uint8_t* blob, size_t size, size_t at, uint32_t value)
{
    for (int i = 0; i < 4; ++i) blob[at + (size_t)i] = (uint8_t)(value >> (8 * i));
    uint64_t h = fnv1a(blob, size - 8u);
    for (int i = 0; i < 8; ++i) blob[size - 8u + (size_t)i] = (uint8_t)(h >> (8 * i));
}

static void expect_refused(mls_test_host* host, const uint8_t* blob, size_t size,
                           sinew_result code)
{
    sinew_mls_weights w;
    memset(&w, 0xab, sizeof w);
    sinew_test_log_reset(&host->log);
    assert_int_equal(sinew_mls_read(&host->api, blob, size, NULL, &w), code);
    assert_int_equal(host->log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(host->log.total, 1);
    assert_null(w.indices);
    assert_int_equal(w.render_count, 0);
}

static void test_blob(void** state)
{
    (void)state;
    mls_test_host host;
    mls_test_host_init(&host, 0);
    mls_mesh grid = mls_make_grid(9, 7, 0.0f, 0.0f, 0.0f, 1.0f, NULL);
    for (uint32_t i = 0; i < grid.vertex_count; ++i) {
        float* p = grid.positions + 3u * i;
        p[2] = 0.1f * p[0] * p[1];
    }
    sinew_mesh_view v = mls_mesh_view(&grid);
    sinew_mls_weights w;
    assert_int_equal(sinew_mls_bake(&host.api, &v, &v, &w), SINEW_OK);
    size_t size = sinew_mls_blob_size(&w);
    assert_int_equal(size, 24u + 12u * (size_t)w.render_count * SINEW_MLS_K + 8u);
    uint8_t* blob = malloc(size + 16u);
    uint8_t* again = malloc(size);
    uint8_t* bad = malloc(size + 16u);
    assert_non_null(blob);
    assert_non_null(again);
    assert_non_null(bad);
    sinew_test_log_reset(&host.log);
    assert_int_equal(sinew_mls_write(&host.api, &w, blob, size - 1u), SINEW_ERROR_OUTPUT_BINDING);
    assert_int_equal(host.log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(sinew_mls_write(&host.api, &w, blob, size), SINEW_OK);
    assert_memory_equal(blob, "SMLS", 4);

    /* Round trip: the same bits, and the same blob again. */
    sinew_mls_weights r;
    assert_int_equal(sinew_mls_read(&host.api, blob, size, NULL, &r), SINEW_OK);
    size_t n = (size_t)w.render_count * SINEW_MLS_K;
    assert_int_equal(r.render_count, w.render_count);
    assert_int_equal(r.simulation_count, w.simulation_count);
    assert_memory_equal(r.indices, w.indices, n * sizeof(uint32_t));
    assert_memory_equal(r.weights, w.weights, n * sizeof(float));
    assert_memory_equal(r.normal_weights, w.normal_weights, n * sizeof(float));
    assert_int_equal(sinew_mls_write(&host.api, &r, again, size), SINEW_OK);
    assert_memory_equal(again, blob, size);
    sinew_mls_free(&host.api, &r);

    /* Embedded in a larger buffer: trailing bytes only with `consumed`. */
    memset(blob + size, 0x5a, 16u);
    size_t consumed = 0;
    assert_int_equal(sinew_mls_read(&host.api, blob, size + 16u, &consumed, &r), SINEW_OK);
    assert_int_equal(consumed, size);
    sinew_mls_free(&host.api, &r);
    expect_refused(&host, blob, size + 16u, SINEW_ERROR_FILE_FORMAT);

    /* Truncated anywhere. */
    const size_t cuts[] = {0u, 3u, 4u, 23u, 24u, size / 2u, size - 8u, size - 1u};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; ++c)
        expect_refused(&host, blob, cuts[c], SINEW_ERROR_FILE_TRUNCATED);

    /* A flipped bit anywhere is caught by the checksum. */
    const size_t flips[] = {30u, 24u + 4u * n - 1u, 24u + 4u * n + 7u, 24u + 8u * n + 1u, size - 3u};
    for (size_t f = 0; f < sizeof flips / sizeof flips[0]; ++f) {
        memcpy(bad, blob, size);
        bad[flips[f]] ^= 0x10u;
        expect_refused(&host, bad, size, SINEW_ERROR_FILE_FORMAT);
    }

    /* Fields with a valid checksum: each must still be refused. */
    struct {
        size_t at;
        uint32_t value;
    } fields[] = {
        {0u, 0x11223344u},               /* magic */
        {4u, 2u},                        /* version */
        {8u, 16u},                       /* K */
        {12u, 0u},                       /* no render vertices */
        {16u, 0u},                       /* no simulation vertices */
        {20u, 1u},                       /* flags */
        {24u + 4u * 5u, w.simulation_count}, /* an index out of range */
        {24u + 4u * n + 4u * 3u, 0x7fc00000u}, /* a NaN position weight */
        {24u + 8u * n + 4u * 9u, 0x7f800000u}, /* an infinite normal weight */
        {24u + 4u * n, 0x40000000u},     /* position weights no longer summing to 1 */
    };
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; ++f) {
        memcpy(bad, blob, size);
        patch_u32(bad, size, fields[f].at, fields[f].value);
        expect_refused(&host, bad, size, SINEW_ERROR_FILE_FORMAT);
    }
    /* A render count larger than the bytes hold is truncation. */
    memcpy(bad, blob, size);
    patch_u32(bad, size, 12u, w.render_count + 1u);
    expect_refused(&host, bad, size, SINEW_ERROR_FILE_TRUNCATED);

    free(blob);
    free(again);
    free(bad);
    sinew_mls_free(&host.api, &w);
    mls_mesh_free(&grid);
}

/* Weights read in place against a copying read of the same blob: the same entries and packed
 * records; `borrowed` where the arrays can stay in the blob. */
static void expect_same_read(mls_test_host* host, const uint8_t* blob, size_t size,
                             const sinew_mls_weights* copy, int borrowed)
{
    sinew_mls_weights r;
    assert_int_equal(sinew_mls_read_in_place(&host->api, blob, size, NULL, &r), SINEW_OK);
    size_t n = (size_t)copy->render_count * SINEW_MLS_K;
    assert_int_equal(r.borrowed, borrowed);
    if (borrowed) assert_ptr_equal((const void*)r.indices, (const void*)(blob + 24u));
    assert_int_equal(r.render_count, copy->render_count);
    assert_int_equal(r.simulation_count, copy->simulation_count);
    assert_memory_equal(r.indices, copy->indices, n * sizeof(uint32_t));
    assert_memory_equal(r.weights, copy->weights, n * sizeof(float));
    assert_memory_equal(r.normal_weights, copy->normal_weights, n * sizeof(float));
    assert_int_equal(r.packed != NULL, copy->packed != NULL);
    if (r.packed)
        assert_memory_equal(r.packed, copy->packed,
                            copy->render_count * sizeof(sinew_mls_packed_vertex));
    sinew_mls_free(&host->api, &r);
    assert_null(r.indices);
}

/* sinew_mls_read_in_place: aligned arrays stay in the blob, unaligned ones are copied, and a
 * damaged blob is refused as sinew_mls_read refuses it; freeing leaves the blob as it was. */
static void test_blob_in_place(void** state)
{
    (void)state;
    mls_test_host host;
    mls_test_host_init(&host, 0);
    mls_mesh grid = mls_make_grid(8, 6, 0.0f, 0.0f, 0.0f, 1.0f, NULL);
    sinew_mesh_view v = mls_mesh_view(&grid);
    sinew_mls_weights w, copy;
    assert_int_equal(sinew_mls_bake(&host.api, &v, &v, &w), SINEW_OK);
    size_t size = sinew_mls_blob_size(&w);
    uint8_t* buffer = malloc(size + 8u);
    uint8_t* before = malloc(size);
    assert_non_null(buffer);
    assert_non_null(before);
    assert_int_equal(sinew_mls_write(&host.api, &w, buffer, size), SINEW_OK);
    memcpy(before, buffer, size);
    assert_int_equal(sinew_mls_read(&host.api, buffer, size, NULL, &copy), SINEW_OK);
    assert_int_equal(copy.borrowed, 0);
    expect_same_read(&host, buffer, size, &copy, 1);
    assert_memory_equal(buffer, before, size);
    /* One byte on, the arrays are not 4-byte aligned. */
    memmove(buffer + 1, buffer, size);
    expect_same_read(&host, buffer + 1, size, &copy, 0);
    /* A flipped bit: refused, one error, nothing kept. */
    buffer[1 + size / 2u] ^= 0x08u;
    sinew_mls_weights r;
    memset(&r, 0xab, sizeof r);
    sinew_test_log_reset(&host.log);
    assert_int_equal(sinew_mls_read_in_place(&host.api, buffer + 1, size, NULL, &r),
                     SINEW_ERROR_FILE_FORMAT);
    assert_int_equal(host.log.count[SINEW_LOG_ERROR], 1);
    assert_null(r.indices);
    assert_int_equal(r.borrowed, 0);
    free(buffer);
    free(before);
    sinew_mls_free(&host.api, &copy);
    sinew_mls_free(&host.api, &w);
    mls_mesh_free(&grid);
}

#define EXPECT_ONE_ERROR(host, call, code)                                                        \
    do {                                                                                          \
        sinew_test_log_reset(&(host).log);                                                        \
        assert_int_equal((call), (code));                                                         \
        assert_int_equal((host).log.count[SINEW_LOG_ERROR], 1);                                   \
        assert_int_equal((host).log.total, 1);                                                    \
    } while (0)

static void test_bad_input(void** state)
{
    (void)state;
    mls_test_host host;
    mls_test_host_init(&host, 0);
    mls_mesh grid = mls_make_grid(6, 6, 0.0f, 0.0f, 0.0f, 1.0f, NULL);
    sinew_mesh_view good = mls_mesh_view(&grid);
    sinew_mls_weights w;

    assert_int_equal(sinew_mls_bake(NULL, &good, &good, &w), SINEW_ERROR_INVALID_ARGUMENT);
    EXPECT_ONE_ERROR(host, sinew_mls_bake(&host.api, &good, &good, NULL),
                     SINEW_ERROR_INVALID_ARGUMENT);
    EXPECT_ONE_ERROR(host, sinew_mls_bake(&host.api, NULL, &good, &w),
                     SINEW_ERROR_INVALID_ARGUMENT);
    EXPECT_ONE_ERROR(host, sinew_mls_bake(&host.api, &good, NULL, &w),
                     SINEW_ERROR_INVALID_ARGUMENT);
    sinew_mesh_view m = good;
    m.vertex_count = 0;
    EXPECT_ONE_ERROR(host, sinew_mls_bake(&host.api, &m, &good, &w), SINEW_ERROR_EMPTY_MESH);
    EXPECT_ONE_ERROR(host, sinew_mls_bake(&host.api, &good, &m, &w), SINEW_ERROR_EMPTY_MESH);
    m = good;
    m.triangle_count = 0;
    EXPECT_ONE_ERROR(host, sinew_mls_bake(&host.api, &m, &good, &w), SINEW_ERROR_EMPTY_MESH);
    /* A render mesh without triangles and without normals has no normals to fit. */
    EXPECT_ONE_ERROR(host, sinew_mls_bake(&host.api, &good, &m, &w), SINEW_ERROR_EMPTY_MESH);
    m = good;
    m.positions = NULL;
    EXPECT_ONE_ERROR(host, sinew_mls_bake(&host.api, &m, &good, &w), SINEW_ERROR_INVALID_ARGUMENT);
    grid.indices[7] = grid.vertex_count;
    EXPECT_ONE_ERROR(host, sinew_mls_bake(&host.api, &good, &good, &w), SINEW_ERROR_VERTEX_INDEX);
    grid.indices[7] = 1u;
    grid.positions[10] = NAN;
    EXPECT_ONE_ERROR(host, sinew_mls_bake(&host.api, &good, &good, &w), SINEW_ERROR_NONFINITE);
    grid.positions[10] = 0.0f;
    float* normals = calloc(3u * grid.vertex_count, sizeof(float));
    assert_non_null(normals);
    for (uint32_t i = 0; i < grid.vertex_count; ++i) normals[3u * i + 2u] = 1.0f;
    normals[5] = INFINITY;
    m = good;
    m.normals = normals;
    EXPECT_ONE_ERROR(host, sinew_mls_bake(&host.api, &good, &m, &w), SINEW_ERROR_NONFINITE);
    normals[5] = 1.0f;
    normals[3u * 7u + 2u] = 1.0f;

    /* Render points without triangles but with normals are fine. */
    m.triangle_count = 0;
    assert_int_equal(sinew_mls_bake(&host.api, &good, &m, &w), SINEW_OK);

    const uint32_t S = grid.vertex_count, R = w.render_count;
    float* out = malloc(4u * R * sizeof(float));
    float* out_n = malloc(4u * R * sizeof(float));
    float* moved = malloc(3u * S * sizeof(float));
    assert_non_null(out);
    assert_non_null(out_n);
    assert_non_null(moved);
    EXPECT_ONE_ERROR(host, sinew_mls_apply(&host.api, NULL, S, grid.positions, NULL, out, 0, NULL, 0),
                     SINEW_ERROR_INVALID_ARGUMENT);
    EXPECT_ONE_ERROR(host, sinew_mls_apply(&host.api, &w, S + 1u, grid.positions, NULL, out, 0, NULL, 0),
                     SINEW_ERROR_INVALID_ARGUMENT);
    EXPECT_ONE_ERROR(host, sinew_mls_apply(&host.api, &w, S, NULL, NULL, out, 0, NULL, 0),
                     SINEW_ERROR_INVALID_ARGUMENT);
    EXPECT_ONE_ERROR(host, sinew_mls_apply(&host.api, &w, S, grid.positions, NULL, out, 0, out_n, 0),
                     SINEW_ERROR_INVALID_ARGUMENT);
    EXPECT_ONE_ERROR(host, sinew_mls_apply(&host.api, &w, S, grid.positions, NULL, NULL, 0, NULL, 0),
                     SINEW_ERROR_OUTPUT_BINDING);
    EXPECT_ONE_ERROR(host, sinew_mls_apply(&host.api, &w, S, grid.positions, NULL, out, 8, NULL, 0),
                     SINEW_ERROR_OUTPUT_BINDING);
    EXPECT_ONE_ERROR(host, sinew_mls_apply(&host.api, &w, S, grid.positions, normals, out, 0, out_n, 14),
                     SINEW_ERROR_OUTPUT_BINDING);
    EXPECT_ONE_ERROR(host, sinew_mls_apply(&host.api, &w, S, grid.positions, normals, out, 0, out, 0),
                     SINEW_ERROR_OUTPUT_BINDING);
    memcpy(moved, grid.positions, 3u * S * sizeof(float));
    moved[3u * S - 1u] = NAN;
    for (uint32_t i = 0; i < 3u * R; ++i) out[i] = -7.0f;
    EXPECT_ONE_ERROR(host, sinew_mls_apply(&host.api, &w, S, moved, NULL, out, 0, NULL, 0),
                     SINEW_ERROR_NONFINITE);
    for (uint32_t i = 0; i < 3u * R; ++i) assert_true(out[i] == -7.0f); /* nothing written */
    normals[4] = NAN;
    EXPECT_ONE_ERROR(host, sinew_mls_apply(&host.api, &w, S, grid.positions, normals, out, 0, out_n, 0),
                     SINEW_ERROR_NONFINITE);
    normals[4] = 0.0f;

    /* Strided output matches packed output. */
    assert_int_equal(sinew_mls_apply(&host.api, &w, S, grid.positions, normals, out, 0, out_n, 0),
                     SINEW_OK);
    float* wide = malloc(4u * R * sizeof(float));
    float* wide_n = malloc(4u * R * sizeof(float));
    assert_non_null(wide);
    assert_non_null(wide_n);
    assert_int_equal(sinew_mls_apply(&host.api, &w, S, grid.positions, normals, wide, 16, wide_n, 16),
                     SINEW_OK);
    for (uint32_t j = 0; j < R; ++j) {
        assert_memory_equal(wide + 4u * j, out + 3u * j, 12u);
        assert_memory_equal(wide_n + 4u * j, out_n + 3u * j, 12u);
    }
    free(wide);
    free(wide_n);

    /* Vertex normals. */
    EXPECT_ONE_ERROR(host, sinew_mls_vertex_normals(&host.api, grid.positions, 0, grid.indices,
                                                    grid.triangle_count, out_n),
                     SINEW_ERROR_EMPTY_MESH);
    EXPECT_ONE_ERROR(host, sinew_mls_vertex_normals(&host.api, grid.positions, S, grid.indices,
                                                    grid.triangle_count, NULL),
                     SINEW_ERROR_INVALID_ARGUMENT);
    EXPECT_ONE_ERROR(host, sinew_mls_vertex_normals(&host.api, grid.positions, S - 1u, grid.indices,
                                                    grid.triangle_count, out_n),
                     SINEW_ERROR_VERTEX_INDEX);
    /* Blob calls. */
    EXPECT_ONE_ERROR(host, sinew_mls_write(&host.api, &w, NULL, 100u), SINEW_ERROR_INVALID_ARGUMENT);
    EXPECT_ONE_ERROR(host, sinew_mls_read(&host.api, NULL, 100u, NULL, &w), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sinew_mls_blob_size(NULL), 0);

    free(out);
    free(out_n);
    free(moved);
    free(normals);
    sinew_mls_free(&host.api, &w);
    sinew_mls_free(&host.api, &w); /* twice is harmless */
    mls_mesh_free(&grid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_grid),    cmocka_unit_test(test_geodesic_flat),
        cmocka_unit_test(test_hole),         cmocka_unit_test(test_parts),
        cmocka_unit_test(test_deterministic), cmocka_unit_test(test_blob),
        cmocka_unit_test(test_blob_in_place),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
