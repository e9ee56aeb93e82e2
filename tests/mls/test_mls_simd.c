/* The SIMD kernels of sinew_mls_apply give the scalar reference's bits (sinew_mls_eval.h, the
 * functions the CUDA kernels use) on meshes made in code: render vertices reading the last
 * simulation vertex, padded entries of a small separate part, ranges of every length, normals
 * whose sums take the normalisation's fallback or overflow; the packed entries made by the bake
 * and by reading a blob; and sinew_mls_apply_simd's refusals. The bake on every instruction set
 * gives the scalar bake's bits. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mls_fixture.h"
#include "sinew_mls.h"

/* A slot through the grid: cells of columns 5..7 on rows 3..9 removed. */
static int slot(uint32_t cx, uint32_t cy)
{
    return cx >= 5 && cx <= 7 && cy >= 3 && cy <= 9;
}

/* Bends a sheet so that the quadratic basis is not degenerate. */
static void bend(mls_mesh* m)
{
    for (uint32_t i = 0; i < m->vertex_count; ++i) {
        float* p = m->positions + 3u * i;
        p[2] += 0.05f * p[0] * p[0] - 0.03f * p[0] * p[1];
    }
}

/* A bent grid with a slot, and a separate 3 x 3 patch (fewer than K + 1 reachable vertices:
 * padded entries). The patch comes last, so the last simulation vertex is a padded one. */
static mls_mesh make_sim(void)
{
    mls_mesh grid = mls_make_grid(17, 13, -3.0f, 2.0f, 1.0f, 0.7f, slot);
    mls_mesh patch = mls_make_grid(3, 3, 20.0f, 2.0f, 1.0f, 0.5f, NULL);
    mls_mesh_append(&grid, &patch);
    bend(&grid);
    return grid;
}

/* Does some render vertex read simulation vertex `i`? */
static int reads_vertex(const sinew_mls_weights* w, uint32_t i)
{
    for (size_t e = 0; e < (size_t)w->render_count * SINEW_MLS_K; ++e)
        if (w->indices[e] == i) return 1;
    return 0;
}

static void test_kernels_match_scalar(void** state)
{
    (void)state;
    mls_test_host host;
    mls_test_host_init(&host, 1); /* job ranges of 1, 2, 3, 5, 8, ... vertices */
    mls_mesh sim = make_sim();
    /* Render: a finer grid over the bent sheet and the patch itself (odd total count). */
    mls_mesh render = mls_make_grid(23, 19, -2.9f, 2.1f, 1.0f, 0.5f, slot);
    mls_mesh patch = mls_make_grid(3, 3, 20.0f, 2.0f, 1.0f, 0.5f, NULL);
    mls_mesh_append(&render, &patch);
    bend(&render);
    sinew_mesh_view sv = mls_mesh_view(&sim), rv = mls_mesh_view(&render);
    sinew_mls_weights w;
    assert_int_equal(sinew_mls_bake(&host.api, &sv, &rv, &w), SINEW_OK);
    const uint32_t S = sim.vertex_count;
    assert_true(w.stats.short_count > 0);
    assert_true(reads_vertex(&w, S - 1u)); /* the masked loads at the arrays' end are used */
    if (sinew_mls_resolve(SINEW_SIMD_AUTO) != SINEW_SIMD_SCALAR) assert_non_null(w.packed);

    /* A deformed pose and its area-weighted normals. */
    mls_map map = mls_make_map(1, sim.positions, S, 0.5);
    float* moved = malloc(12u * S);
    float* normals = malloc(12u * S);
    float* odd = malloc(12u * S);
    assert_non_null(moved);
    assert_non_null(normals);
    assert_non_null(odd);
    mls_map_apply(&map, sim.positions, S, moved);
    assert_int_equal(sinew_mls_vertex_normals(&host.api, moved, S, sim.indices, sim.triangle_count,
                                              normals),
                     SINEW_OK);
    int runs = mls_check_kernels(&host, &w, moved, normals);
    print_message("  %d SIMD runs matched the scalar kernel (auto: %s)\n", runs,
                  sinew_simd_name(sinew_mls_resolve(SINEW_SIMD_AUTO)));
    if (sinew_mls_resolve(SINEW_SIMD_AUTO) != SINEW_SIMD_SCALAR) assert_true(runs > 0);

    /* Normals whose sums fall below the normalisation's threshold (1e-30 squared length: the
     * first neighbour's normal is copied), whose sums overflow, and a mix with zero normals
     * (sums that cancel to exactly zero on some vertices). */
    const float scales[3] = {1e-20f, 1e20f, 1.0f};
    for (int c = 0; c < 3; ++c) {
        for (uint32_t i = 0; i < 3u * S; ++i)
            odd[i] = c < 2 ? normals[i] * scales[c] : ((i / 3u) % 3u == 0 ? 0.0f : normals[i]);
        mls_check_kernels(&host, &w, moved, odd);
    }
    /* All normals zero: every vertex takes the fallback. */
    memset(odd, 0, 12u * S);
    mls_check_kernels(&host, &w, moved, odd);
    assert_int_equal(host.log.count[SINEW_LOG_ERROR], 0);

    /* Weights read back from a blob carry the same packed entries. */
    size_t size = sinew_mls_blob_size(&w);
    void* blob = malloc(size);
    assert_non_null(blob);
    assert_int_equal(sinew_mls_write(&host.api, &w, blob, size), SINEW_OK);
    sinew_mls_weights back;
    assert_int_equal(sinew_mls_read(&host.api, blob, size, NULL, &back), SINEW_OK);
    assert_int_equal(back.packed != NULL, w.packed != NULL);
    if (w.packed)
        assert_memory_equal(back.packed, w.packed,
                            (size_t)w.render_count * sizeof(sinew_mls_packed_vertex));
    mls_check_kernels(&host, &back, moved, normals);
    sinew_mls_free(&host.api, &back);
    assert_null(back.packed);
    free(blob);

    free(moved);
    free(normals);
    free(odd);
    sinew_mls_free(&host.api, &w);
    mls_mesh_free(&sim);
    mls_mesh_free(&render);
}

/* The packed entries hold the arrays' values in the documented layout. */
static void test_packed_layout(void** state)
{
    (void)state;
    mls_test_host host;
    mls_test_host_init(&host, 0);
    mls_mesh sim = make_sim();
    sinew_mesh_view sv = mls_mesh_view(&sim);
    sinew_mls_weights w;
    assert_int_equal(sinew_mls_bake(&host.api, &sv, &sv, &w), SINEW_OK);
    if (!w.packed) {
        print_message("  no packed entries: this CPU runs no kernel that reads them\n");
        assert_true(sinew_mls_resolve(SINEW_SIMD_AUTO) != SINEW_SIMD_AVX2);
    } else {
        for (uint32_t j = 0; j < w.render_count; ++j)
            for (uint32_t k = 0; k < SINEW_MLS_K; ++k) {
                const size_t e = (size_t)j * SINEW_MLS_K + k;
                assert_int_equal(w.packed[j].offsets[k], 32u * w.indices[e]);
                assert_memory_equal(&w.packed[j].pairs[2u * k], &w.weights[e], sizeof(float));
                assert_memory_equal(&w.packed[j].pairs[2u * k + 1u], &w.normal_weights[e],
                                    sizeof(float));
            }
    }
    sinew_mls_free(&host.api, &w);
    mls_mesh_free(&sim);
}

static void* no_memory(size_t size, size_t alignment, void* user)
{
    (void)size;
    (void)alignment;
    (void)user;
    return NULL;
}

/* Without memory for the records apply still succeeds, with the same bits. */
static void test_apply_without_memory(void** state)
{
    (void)state;
    mls_test_host host;
    mls_test_host_init(&host, 1);
    mls_mesh sim = make_sim();
    sinew_mesh_view sv = mls_mesh_view(&sim);
    sinew_mls_weights w;
    assert_int_equal(sinew_mls_bake(&host.api, &sv, &sv, &w), SINEW_OK);
    const uint32_t S = sim.vertex_count;
    float* normals = malloc(12u * S);
    float* ref_p = malloc(12u * S);
    float* ref_n = malloc(12u * S);
    float* out_p = malloc(12u * S);
    float* out_n = malloc(12u * S);
    assert_true(normals && ref_p && ref_n && out_p && out_n);
    assert_int_equal(sinew_mls_vertex_normals(&host.api, sim.positions, S, sim.indices,
                                              sim.triangle_count, normals),
                     SINEW_OK);
    assert_int_equal(sinew_mls_apply_simd(&host.api, SINEW_SIMD_SCALAR, &w, S, sim.positions,
                                          normals, ref_p, 0, ref_n, 0, NULL, 0),
                     SINEW_OK);
    sinew_host_api starved = host.api;
    starved.allocator.alloc = no_memory;
    sinew_test_log_reset(&host.log);
    assert_int_equal(sinew_mls_apply(&starved, &w, S, sim.positions, normals, out_p, 0, out_n, 0),
                     SINEW_OK);
    assert_int_equal(host.log.total, 0);
    assert_memory_equal(out_p, ref_p, 12u * S);
    assert_memory_equal(out_n, ref_n, 12u * S);
    free(normals);
    free(ref_p);
    free(ref_n);
    free(out_p);
    free(out_n);
    sinew_mls_free(&host.api, &w);
    mls_mesh_free(&sim);
}

static void test_apply_simd_refusals(void** state)
{
    (void)state;
    mls_test_host host;
    mls_test_host_init(&host, 0);
    mls_mesh sim = make_sim();
    sinew_mesh_view sv = mls_mesh_view(&sim);
    sinew_mls_weights w;
    assert_int_equal(sinew_mls_bake(&host.api, &sv, &sv, &w), SINEW_OK);
    const uint32_t S = sim.vertex_count;
    float* out = malloc(12u * S);
    assert_non_null(out);
    const int bad[3] = {(int)SINEW_SIMD_COUNT, -1, 99};
    for (int b = 0; b < 3; ++b) {
        sinew_test_log_reset(&host.log);
        assert_int_equal(sinew_mls_apply_simd(&host.api, (sinew_simd)bad[b], &w, S, sim.positions,
                                              NULL, out, 0, NULL, 0, NULL, 0),
                         SINEW_ERROR_INVALID_ARGUMENT);
        assert_int_equal(host.log.count[SINEW_LOG_ERROR], 1);
        assert_int_equal(host.log.total, 1);
        assert_int_equal(sinew_mls_resolve((sinew_simd)bad[b]), SINEW_SIMD_COUNT);
    }
    /* The usual argument checks come through the SIMD entry point too. */
    sinew_test_log_reset(&host.log);
    assert_int_equal(sinew_mls_apply_simd(&host.api, SINEW_SIMD_AUTO, &w, S + 1u, sim.positions,
                                          NULL, out, 0, NULL, 0, NULL, 0),
                     SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(host.log.total, 1);
    /* A scratch buffer smaller than asked for is refused before anything is written. */
    const size_t need = sinew_mls_scratch_size(&w);
    assert_int_equal(need, w.packed ? 32u * (size_t)S : 0u);
    assert_int_equal(sinew_mls_scratch_size(NULL), 0u);
    if (need) {
        float* normals = malloc(12u * S);
        void* scratch = malloc(need);
        assert_non_null(normals);
        assert_non_null(scratch);
        assert_int_equal(sinew_mls_vertex_normals(&host.api, sim.positions, S, sim.indices,
                                                  sim.triangle_count, normals),
                         SINEW_OK);
        for (uint32_t i = 0; i < 3u * S; ++i) out[i] = -7.0f;
        sinew_test_log_reset(&host.log);
        float* out_n = malloc(12u * S);
        assert_non_null(out_n);
        assert_int_equal(sinew_mls_apply_simd(&host.api, SINEW_SIMD_AUTO, &w, S, sim.positions,
                                              normals, out, 0, out_n, 0, scratch, need - 1u),
                         SINEW_ERROR_OUTPUT_BINDING);
        assert_int_equal(host.log.count[SINEW_LOG_ERROR], 1);
        assert_int_equal(host.log.total, 1);
        for (uint32_t i = 0; i < 3u * S; ++i) assert_true(out[i] == -7.0f);
        free(out_n);
        free(scratch);
        free(normals);
    }
    /* What resolves: scalar always, auto to something, sse to scalar where it runs. */
    assert_int_equal(sinew_mls_resolve(SINEW_SIMD_SCALAR), SINEW_SIMD_SCALAR);
    assert_true(sinew_mls_resolve(SINEW_SIMD_AUTO) != SINEW_SIMD_COUNT);
    const sinew_simd sse = sinew_mls_resolve(SINEW_SIMD_SSE41);
    assert_true(sse == SINEW_SIMD_SCALAR || sse == SINEW_SIMD_COUNT);
    free(out);
    sinew_mls_free(&host.api, &w);
    mls_mesh_free(&sim);
}

/* Weights, indices and figures of two bakes are the same bits. */
static void expect_same_bake(const sinew_mls_weights* a, const sinew_mls_weights* b)
{
    assert_int_equal(a->render_count, b->render_count);
    assert_int_equal(a->simulation_count, b->simulation_count);
    const size_t n = (size_t)a->render_count * SINEW_MLS_K;
    assert_memory_equal(a->indices, b->indices, n * sizeof(uint32_t));
    assert_memory_equal(a->weights, b->weights, n * sizeof(float));
    assert_memory_equal(a->normal_weights, b->normal_weights, n * sizeof(float));
    assert_memory_equal(&a->stats, &b->stats, sizeof a->stats);
}

/* The bake on every instruction set this CPU runs gives the scalar code's bits: the sheet with
 * its slot and the separate patch (short neighbourhoods, a render count that leaves a partial
 * group of vertices at the end), and job ranges of every length. */
static void test_bake_matches_scalar(void** state)
{
    (void)state;
    mls_test_host serial, uneven;
    mls_test_host_init(&serial, 0);
    mls_test_host_init(&uneven, 1);
    mls_mesh sim = make_sim();
    mls_mesh render = mls_make_grid(23, 19, -2.9f, 2.1f, 1.0f, 0.5f, slot);
    mls_mesh patch = mls_make_grid(3, 3, 20.0f, 2.0f, 1.0f, 0.5f, NULL);
    mls_mesh_append(&render, &patch);
    bend(&render);
    sinew_mesh_view sv = mls_mesh_view(&sim), rv = mls_mesh_view(&render);
    sinew_mls_weights ref;
    assert_int_equal(sinew_mls_bake_simd(&serial.api, SINEW_SIMD_SCALAR, &sv, &rv, &ref),
                     SINEW_OK);
    assert_true(ref.stats.short_count > 0);
    const sinew_simd all[] = {SINEW_SIMD_AUTO, SINEW_SIMD_SSE41, SINEW_SIMD_AVX2,
                              SINEW_SIMD_AVX512};
    int runs = 0;
    for (size_t k = 0; k < sizeof all / sizeof all[0]; ++k) {
        if (sinew_mls_resolve(all[k]) == SINEW_SIMD_COUNT) continue;
        for (int h = 0; h < 2; ++h) {
            sinew_mls_weights w;
            assert_int_equal(sinew_mls_bake_simd(h ? &uneven.api : &serial.api, all[k], &sv, &rv,
                                                 &w),
                             SINEW_OK);
            expect_same_bake(&ref, &w);
            sinew_mls_free(&serial.api, &w);
            ++runs;
        }
    }
    print_message("  %d bakes matched the scalar bake (auto: %s)\n", runs,
                  sinew_simd_name(sinew_mls_resolve(SINEW_SIMD_AUTO)));
    /* What the bake refuses: no instruction set, or one this CPU does not run. */
    const int bad[3] = {(int)SINEW_SIMD_COUNT, -1, 99};
    for (int b = 0; b < 3; ++b) {
        sinew_mls_weights w;
        sinew_test_log_reset(&serial.log);
        assert_int_equal(sinew_mls_bake_simd(&serial.api, (sinew_simd)bad[b], &sv, &rv, &w),
                         SINEW_ERROR_INVALID_ARGUMENT);
        assert_int_equal(serial.log.total, 1);
        assert_null(w.indices);
    }
    for (size_t k = 0; k < sizeof all / sizeof all[0]; ++k) {
        if (sinew_mls_resolve(all[k]) != SINEW_SIMD_COUNT) continue;
        sinew_mls_weights w;
        sinew_test_log_reset(&serial.log);
        assert_int_equal(sinew_mls_bake_simd(&serial.api, all[k], &sv, &rv, &w),
                         SINEW_ERROR_UNSUPPORTED);
        assert_int_equal(serial.log.total, 1);
    }
    sinew_mls_free(&serial.api, &ref);
    mls_mesh_free(&render);
    mls_mesh_free(&sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_match_scalar),
        cmocka_unit_test(test_packed_layout),
        cmocka_unit_test(test_apply_without_memory),
        cmocka_unit_test(test_apply_simd_refusals),
        cmocka_unit_test(test_bake_matches_scalar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
