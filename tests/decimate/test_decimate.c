/* Decimation: the coarse mesh stays closed, keeps the volume, uses only original vertex
 * positions, and respects its budget; bad input is refused. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_import.h>
#include <sinew/sinew_host.h>

#include "sample_metrics.h"
#include "sinew_decimate.h"
#include "test_support.h"

static sinew_test_log g_log;

static void* host_alloc_fn(size_t size, size_t alignment, void* user)
{
    (void)user;
    void* p = NULL;
    return posix_memalign(&p, alignment, size) == 0 ? p : NULL;
}

static void host_free_fn(void* p, void* user)
{
    (void)user;
    free(p);
}

static void serial_for(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain, void* user)
{
    (void)grain;
    (void)user;
    fn(data, 0, count);
}

static sinew_host_api make_host(void)
{
    sinew_host_api host;
    memset(&host, 0, sizeof host);
    host.struct_size = sizeof host;
    host.allocator.alloc = host_alloc_fn;
    host.allocator.free = host_free_fn;
    host.logger = g_log.logger;
    host.log_level = SINEW_LOG_INFO;
    host.jobs.parallel_for = serial_for;
    host.jobs.thread_count = 1;
    return host;
}

static int cmp_float3(const void* a, const void* b)
{
    return memcmp(a, b, 12);
}

static void check_decimation(const char* relative, int simulation_mesh, uint32_t target)
{
    sinew_test_log_init(&g_log);
    const char* path = sinew_test_data_path(relative);
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.use_simulation_mesh = (uint32_t)simulation_mesh;
    sinew_character* c = NULL;
    assert_int_equal(sinew_import_character(path, &options, &c), SINEW_OK);
    const sinew_mesh_desc* m = &c->rig.render_mesh;
    sinew_mesh_view view = { m->vertex_count, m->triangle_count, m->positions, NULL, m->indices, 0, NULL };
    sinew_host_api host = make_host();
    sinew_decimated_mesh out;
    assert_int_equal(sinew_decimate_mesh(&host, &view, target, &out), SINEW_OK);
    print_message("  %s: %u -> %u vertices, %u triangles, error %.4f\n", relative,
                  m->vertex_count, out.vertex_count, out.triangle_count, (double)out.relative_error);
    assert_true(out.vertex_count <= target + target / 10u);
    assert_true(out.vertex_count >= target / 2u || out.vertex_count == m->vertex_count);

    sample_topology rest, coarse;
    assert_int_equal(sample_topology_build(m->positions, m->vertex_count, m->indices,
                                           m->triangle_count, &rest), SINEW_OK);
    assert_int_equal(sample_topology_build(out.positions, out.vertex_count, out.indices,
                                           out.triangle_count, &coarse), SINEW_OK);
    /* Edge collapses keep the surface closed and its volume close. */
    assert_true(rest.closed);
    assert_true(coarse.closed);
    double v0 = sample_enclosed_volume(&rest, m->positions);
    double v1 = sample_enclosed_volume(&coarse, out.positions);
    print_message("  volume %.5f -> %.5f (ratio %.4f)\n", v0, v1, v1 / v0);
    assert_true(fabs(v1 / v0 - 1.0) < 0.03);
    /* Collapses move vertices onto existing ones: every coarse vertex is an original one. */
    float* sorted = malloc((size_t)m->vertex_count * 12u);
    assert_non_null(sorted);
    memcpy(sorted, m->positions, (size_t)m->vertex_count * 12u);
    qsort(sorted, m->vertex_count, 12u, cmp_float3);
    for (uint32_t v = 0; v < out.vertex_count; ++v)
        assert_non_null(bsearch(out.positions + 3u * v, sorted, m->vertex_count, 12u, cmp_float3));
    free(sorted);
    sample_topology_free(&rest);
    sample_topology_free(&coarse);
    sinew_decimated_free(&host, &out);
    sinew_import_free(c);
}

static void test_male(void** state)
{
    (void)state;
    check_decimation("characters/male/male.ini", 0, 4000);
}

static void test_cylinder_under_budget(void** state)
{
    (void)state;
    /* A budget above the vertex count keeps the mesh whole. */
    check_decimation("characters/cylinder/cylinder.ini", 0, 5000);
}

static void test_tbone(void** state)
{
    (void)state;
    check_decimation("characters/tbone/tbone.ini", 0, 800);
}

static void test_bad_input(void** state)
{
    (void)state;
    sinew_test_log_init(&g_log);
    sinew_host_api host = make_host();
    float p[9] = { 0, 0, 0, 1, 0, 0, 0, 1, 0 };
    uint32_t t[3] = { 0, 1, 2 };
    sinew_mesh_view view = { 3, 1, p, NULL, t, 0, NULL };
    sinew_decimated_mesh out;
    assert_int_equal(sinew_decimate_mesh(&host, &view, 3, &out), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    view.vertex_count = 0;
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_decimate_mesh(&host, &view, 100, &out), SINEW_ERROR_EMPTY_MESH);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(sinew_decimate_mesh(&host, NULL, 100, &out), SINEW_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_male),
        cmocka_unit_test(test_cylinder_under_budget),
        cmocka_unit_test(test_tbone),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
