/* The solvers of the fps backend on its reduced system (Sec. 4.3), driven through the vtable
 * with a hand-made host: PCG run to a relative residual of 1e-10 agrees with CHOLMOD per step
 * (and the deviation of the default fixed iteration counts is reported), a refactorization
 * with a changed matrix (A + A_col with new entries) equals a fresh factorization, PCG with
 * the same A_col agrees with it, a baked model reproduces prepare bit for bit, and bad
 * parameters are refused with one log line. SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin_backends.h"
#include "fps_internal.h"
#include "ps_fixture.h"

static const sinew_backend_vtable* vt = &sinew_backend_fps;

static void* prepare(ps_test_host* host, const sinew_rig_view* rig, const sinew_param* params,
                     uint32_t count)
{
    void* inst = NULL;
    sinew_result r = vt->prepare(&host->api, rig, params, count, NULL, &inst);
    if (r != SINEW_OK) fail_msg("fps prepare: %s (%s)", sinew_result_string(r), host->log.last);
    return inst;
}

#if defined(FPS_TEST_CHOLMOD)
/* Steps `k` instances with the same bent pose and compares each one's tissue positions with
 * the first one's after every step; returns the largest deviation of instance 1 and 2 over
 * all steps relative to the model's diagonal. */
static void step_and_compare(const char* relative, uint32_t steps, double* dev_tol,
                             double* dev_fixed)
{
    const char* path = sinew_test_data_path(relative);
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    sinew_param p_chol[] = {{"solver", "cholmod"}};
    sinew_param p_tol[] = {{"solver", "pcg"}, {"pcg_iterations", "5000"}, {"pcg_tolerance", "1e-10"}};
    sinew_param p_fix[] = {{"solver", "pcg"}};
    /* One model build, three restores from its blob (fast, also under sanitizers). */
    ps_test_buffer blob = {0};
    sinew_bake_writer w = ps_test_buffer_writer(&blob);
    assert_int_equal(vt->bake(&host.api, &rig.view, NULL, 0, &w), SINEW_OK);
    sinew_rig_view baked = rig.view;
    baked.baked_backend = "fps";
    baked.baked_data = blob.data;
    baked.baked_size = blob.size;
    void* inst[3] = {prepare(&host, &baked, p_chol, 1), prepare(&host, &baked, p_tol, 3),
                     prepare(&host, &baked, p_fix, 1)};
    const ps_model* m = fps_instance_model(inst[0]);
    uint32_t N = 2u * m->n, jn = rig.view.joint_count;
    double* x[3];
    for (int k = 0; k < 3; ++k) x[k] = malloc(sizeof(double) * 3u * N);
    float* skinning = malloc(sizeof(float) * 16u * jn);
    ps_test_skinning(&rig, (uint32_t)sample_default_joint(&rig.character), 60.0f, 30.0f, skinning);
    sinew_pose_view pose = {(uint32_t)sizeof(sinew_pose_view), jn, skinning, skinning, 0u};
    for (int k = 0; k < 3; ++k) assert_int_equal(vt->set_pose(inst[k], &pose), SINEW_OK);
    *dev_tol = *dev_fixed = 0.0;
    for (uint32_t s = 0; s < steps; ++s) {
        for (int k = 0; k < 3; ++k) {
            assert_int_equal(vt->step(inst[k], 1.0f / 60.0f), SINEW_OK);
            fps_sim_tissue_positions(fps_instance_sim(inst[k]), x[k]);
        }
        double d1 = 0.0, d2 = 0.0;
        for (uint32_t i = 0; i < N; ++i) {
            double a = 0.0, b = 0.0;
            for (int c = 0; c < 3; ++c) {
                double e1 = x[1][3u * i + c] - x[0][3u * i + c];
                double e2 = x[2][3u * i + c] - x[0][3u * i + c];
                a += e1 * e1;
                b += e2 * e2;
            }
            d1 = fmax(d1, sqrt(a));
            d2 = fmax(d2, sqrt(b));
        }
        *dev_tol = fmax(*dev_tol, d1 / m->diagonal);
        *dev_fixed = fmax(*dev_fixed, d2 / m->diagonal);
    }
    print_message("%s, %u steps of a 60/30 degree bend/twist: PCG to 1e-10 against CHOLMOD "
                  "%.2e of the diagonal at most; default PCG (10 x 10) %.2e\n", relative, steps,
                  *dev_tol, *dev_fixed);
    for (int k = 0; k < 3; ++k) {
        vt->destroy(inst[k]);
        free(x[k]);
    }
    free(skinning);
    ps_test_buffer_free(&blob);
    ps_test_rig_free(&rig);
}

static void test_pcg_against_cholmod(void** state)
{
    (void)state;
    double tol, fixed;
    step_and_compare("characters/cylinder/cylinder.ini", 20u, &tol, &fixed);
    assert_true(tol <= 1e-6);
    assert_true(fixed < 0.05); /* reported; a bound only against a broken solver */
    step_and_compare("characters/male/male.ini", 3u, &tol, &fixed);
    assert_true(tol <= 1e-6);
    assert_true(fixed < 0.05);
}

/* A_col: springs (i, j) of weight 10 K_ii between free vertices far apart in the numbering,
 * so A + A_col has entries K lacks (the new pattern a collision set brings). Both triangles. */
static fps_csr spring_matrix(const sinew_crs* K, uint32_t* new_entries)
{
    uint32_t n = K->rows;
    uint32_t pairs = n / 5u;
    uint32_t* ti = malloc(sizeof(uint32_t) * 4u * pairs);
    uint32_t* tj = malloc(sizeof(uint32_t) * 4u * pairs);
    double* tv = malloc(sizeof(double) * 4u * pairs);
    uint32_t t = 0;
    for (uint32_t p = 0; p < pairs; ++p) {
        uint32_t i = 5u * p, j = (i + n / 2u + 3u * p) % n;
        if (i == j) continue;
        double w = 0.0;
        for (uint32_t e = K->ptr[i]; e < K->ptr[i + 1]; ++e)
            if (K->col[e] == i) w = 10.0 * K->val[e];
        uint32_t a[4] = {i, j, i, j}, b[4] = {i, j, j, i};
        double v[4] = {w, w, -w, -w};
        for (int k = 0; k < 4; ++k) ti[t] = a[k], tj[t] = b[k], tv[t++] = v[k];
    }
    /* dense-by-row accumulation into sorted rows */
    fps_csr A;
    A.rows = n;
    A.ptr = calloc(n + 1u, sizeof(uint32_t));
    A.col = malloc(sizeof(uint32_t) * (t + 1u));
    A.val = malloc(sizeof(double) * (t + 1u));
    uint32_t k = 0;
    *new_entries = 0;
    for (uint32_t r = 0; r < n; ++r) {
        uint32_t start = k;
        for (uint32_t e = 0; e < t; ++e) {
            if (ti[e] != r) continue;
            uint32_t f = start;
            while (f < k && A.col[f] != tj[e]) ++f;
            if (f < k) {
                A.val[f] += tv[e];
                continue;
            }
            f = k++;
            while (f > start && A.col[f - 1] > tj[e]) {
                A.col[f] = A.col[f - 1];
                A.val[f] = A.val[f - 1];
                --f;
            }
            A.col[f] = tj[e];
            A.val[f] = tv[e];
        }
        A.ptr[r + 1] = k;
        for (uint32_t e = start; e < k; ++e) {
            int found = 0;
            for (uint32_t g = K->ptr[r]; g < K->ptr[r + 1]; ++g) found |= K->col[g] == A.col[e];
            *new_entries += !found;
        }
    }
    free(ti);
    free(tj);
    free(tv);
    return A;
}

static double max_rel_diff(const double* a, const double* b, size_t count)
{
    double d = 0.0, m = 0.0;
    for (size_t k = 0; k < count; ++k) {
        d = fmax(d, fabs(a[k] - b[k]));
        m = fmax(m, fabs(b[k]));
    }
    return d / (m > 0.0 ? m : 1.0);
}

/* x = (K + A_col)^-1 b by a fresh analysis and factorization. */
static void fresh_solve(const sinew_host_api* host, const sinew_crs* K, const sinew_crs* A_col,
                        const double* b, double* x)
{
    fps_csr sum;
    assert_int_equal(fps_csr_add(host, K, A_col, &sum), SINEW_OK);
    sinew_crs sv = fps_csr_view(&sum);
    fps_cholmod* fresh = NULL;
    assert_int_equal(fps_cholmod_create(host, &sv, &fresh), SINEW_OK);
    assert_int_equal(fps_cholmod_solve(fresh, b, K->rows, x, K->rows), SINEW_OK);
    fps_cholmod_destroy(fresh);
    fps_csr_free(host, &sum);
}

static void test_refactor(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/male/male.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    sinew_param p_chol[] = {{"solver", "cholmod"}};
    sinew_param p_pcg[] = {{"solver", "pcg"}, {"pcg_iterations", "5000"}, {"pcg_tolerance", "1e-12"}};
    ps_test_buffer blob = {0};
    sinew_bake_writer w = ps_test_buffer_writer(&blob);
    assert_int_equal(vt->bake(&host.api, &rig.view, NULL, 0, &w), SINEW_OK);
    sinew_rig_view baked = rig.view;
    baked.baked_backend = "fps";
    baked.baked_data = blob.data;
    baked.baked_size = blob.size;
    void* ic = prepare(&host, &baked, p_chol, 1);
    void* ip = prepare(&host, &baked, p_pcg, 3);
    fps_sim* sc = fps_instance_sim(ic);
    fps_sim* sp = fps_instance_sim(ip);
    uint32_t n = fps_sim_free_count(sc);
    assert_int_equal(n, fps_sim_free_count(sp));
    sinew_crs K = fps_sim_matrix(sc);
    uint32_t fresh_entries = 0;
    fps_csr Acol = spring_matrix(&K, &fresh_entries);
    sinew_crs Av = fps_csr_view(&Acol);
    assert_true(fresh_entries > 0);

    double* b = malloc(sizeof(double) * 3u * n);
    double* x0 = calloc(3u * n, sizeof(double));
    double* x1 = calloc(3u * n, sizeof(double));
    double* x2 = calloc(3u * n, sizeof(double));
    double* x3 = calloc(3u * n, sizeof(double));
    for (uint32_t k = 0; k < 3u * n; ++k) b[k] = sin(0.37 * k) + 0.1 * cos(1.3 * k);
    double res = 0.0;
    assert_int_equal(fps_sim_solve(sc, b, x0, &res), SINEW_OK);
    assert_true(res < 1e-12);

    /* refactor on the kept analysis vs a fresh analysis and factorization of K + A_col */
    assert_int_equal(fps_sim_set_collision_matrix(sc, &Av), SINEW_OK);
    assert_int_equal(fps_sim_solve(sc, b, x1, &res), SINEW_OK);
    print_message("male reduced system: %u unknowns, A_col adds %u entries outside K's pattern; "
                  "refactored solve residual %.2e\n", n, fresh_entries, res);
    assert_true(res < 1e-12);
    fresh_solve(&host.api, &K, &Av, b, x2);
    double d12 = max_rel_diff(x1, x2, 3u * n);
    print_message("refactorization against a fresh factorization: %.2e relative\n", d12);
    assert_true(d12 < 1e-12);
    assert_true(max_rel_diff(x0, x2, 3u * n) > 1e-6); /* the matrix did change */

    /* the same pattern with twice the weights: factored on the solver's own pattern
     * (sinew_ldl_refactor), against a fresh analysis and factorization of K + 2 A_col */
    for (uint32_t e = 0; e < Acol.ptr[n]; ++e) Acol.val[e] *= 2.0;
    assert_int_equal(fps_sim_set_collision_matrix(sc, &Av), SINEW_OK);
    assert_int_equal(fps_sim_solve(sc, b, x1, &res), SINEW_OK);
    assert_true(res < 1e-12);
    fresh_solve(&host.api, &K, &Av, b, x3);
    double d13 = max_rel_diff(x1, x3, 3u * n);
    print_message("refactorization on the solver's pattern against a fresh factorization: "
                  "%.2e relative\n", d13);
    assert_true(d13 < 1e-12);
    assert_true(max_rel_diff(x3, x2, 3u * n) > 1e-6); /* the weights did change */
    for (uint32_t e = 0; e < Acol.ptr[n]; ++e) Acol.val[e] *= 0.5;
    memset(x3, 0, sizeof(double) * 3u * n);

    /* PCG with the same A_col (diagonal into A and J, the rest as CRS) */
    assert_int_equal(fps_sim_set_collision_matrix(sp, &Av), SINEW_OK);
    assert_int_equal(fps_sim_solve(sp, b, x3, &res), SINEW_OK);
    double d32 = max_rel_diff(x3, x2, 3u * n);
    print_message("PCG to 1e-12 with A + A_col against CHOLMOD: %.2e relative (residual %.2e)\n",
                  d32, res);
    assert_true(d32 < 1e-8);

    /* back to A alone: the first solution again */
    assert_int_equal(fps_sim_set_collision_matrix(sc, NULL), SINEW_OK);
    assert_int_equal(fps_sim_solve(sc, b, x1, &res), SINEW_OK);
    assert_true(max_rel_diff(x1, x0, 3u * n) < 1e-13);
    memset(x3, 0, sizeof(double) * 3u * n);
    assert_int_equal(fps_sim_set_collision_matrix(sp, NULL), SINEW_OK);
    assert_int_equal(fps_sim_solve(sp, b, x3, &res), SINEW_OK);
    assert_true(max_rel_diff(x3, x0, 3u * n) < 1e-8);

    /* a wrong size is refused */
    sinew_crs bad = Av;
    bad.rows = n + 1u;
    sinew_test_log_reset(&host.log);
    assert_int_equal(fps_sim_set_collision_matrix(sc, &bad), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(host.log.count[SINEW_LOG_ERROR], 1);

    free(Acol.ptr);
    free(Acol.col);
    free(Acol.val);
    free(b);
    free(x0);
    free(x1);
    free(x2);
    free(x3);
    vt->destroy(ic);
    vt->destroy(ip);
    ps_test_buffer_free(&blob);
    ps_test_rig_free(&rig);
}
#else
static void test_pcg_against_cholmod(void** state)
{
    (void)state;
    skip(); /* built without CHOLMOD */
}
static void test_refactor(void** state)
{
    (void)state;
    skip();
}
#endif

/* A baked model (ps's blob, written by fps's bake) prepares the very instance that a fresh
 * preparation gives: same system, same steps, bit for bit. */
static void test_bake_round_trip(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_INFO, 0);
    sinew_param params[] = {{"solver", "pcg"}};
    ps_test_buffer blob = {0};
    sinew_bake_writer w = ps_test_buffer_writer(&blob);
    assert_int_equal(vt->bake(&host.api, &rig.view, params, 1, &w), SINEW_OK);
    void* fresh = prepare(&host, &rig.view, params, 1);
    sinew_rig_view baked = rig.view;
    baked.baked_backend = "fps";
    baked.baked_data = blob.data;
    baked.baked_size = blob.size;
    sinew_test_log_reset(&host.log);
    void* restored = prepare(&host, &baked, params, 1);
    assert_non_null(strstr(host.log.last, "restored from baked data"));
    sinew_crs a = fps_sim_matrix(fps_instance_sim(fresh));
    sinew_crs b = fps_sim_matrix(fps_instance_sim(restored));
    assert_int_equal(a.rows, b.rows);
    assert_memory_equal(a.ptr, b.ptr, sizeof(uint32_t) * (a.rows + 1u));
    assert_memory_equal(a.col, b.col, sizeof(uint32_t) * a.ptr[a.rows]);
    assert_memory_equal(a.val, b.val, sizeof(double) * a.ptr[a.rows]);
    uint32_t jn = rig.view.joint_count, n = rig.view.render_mesh.vertex_count;
    float* skinning = malloc(sizeof(float) * 16u * jn);
    ps_test_skinning(&rig, (uint32_t)sample_default_joint(&rig.character), 70.0f, 20.0f, skinning);
    sinew_pose_view pose = {(uint32_t)sizeof(sinew_pose_view), jn, skinning, skinning, 0u};
    float* pa = malloc(sizeof(float) * 3u * n);
    float* pb = malloc(sizeof(float) * 3u * n);
    sinew_output_view oa = {(uint32_t)sizeof(sinew_output_view), n, pa, 0, NULL, 0, NULL};
    sinew_output_view ob = oa;
    ob.positions = pb;
    void* both[2] = {fresh, restored};
    for (int k = 0; k < 2; ++k) {
        assert_int_equal(vt->set_pose(both[k], &pose), SINEW_OK);
        for (int i = 0; i < 3; ++i) assert_int_equal(vt->step(both[k], 1.0f / 60.0f), SINEW_OK);
    }
    assert_int_equal(vt->read_output(fresh, &oa), SINEW_OK);
    assert_int_equal(vt->read_output(restored, &ob), SINEW_OK);
    assert_memory_equal(pa, pb, 12u * n);
    /* a ps blob restores too (the model is the same) */
    baked.baked_backend = "ps";
    void* from_ps = prepare(&host, &baked, params, 1);
    vt->destroy(from_ps);
    free(pa);
    free(pb);
    free(skinning);
    vt->destroy(fresh);
    vt->destroy(restored);
    ps_test_buffer_free(&blob);
    ps_test_rig_free(&rig);
}

/* Every job split gives the same bits (PCG sums per fixed block of rows). */
static void test_job_splits(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host serial, uneven;
    ps_test_host_init(&serial, SINEW_LOG_WARNING, 0);
    ps_test_host_init(&uneven, SINEW_LOG_WARNING, 1);
    sinew_param params[] = {{"solver", "pcg"}};
    void* a = prepare(&serial, &rig.view, params, 1);
    void* b = prepare(&uneven, &rig.view, params, 1);
    uint32_t jn = rig.view.joint_count, n = rig.view.render_mesh.vertex_count;
    float* skinning = malloc(sizeof(float) * 16u * jn);
    ps_test_skinning(&rig, (uint32_t)sample_default_joint(&rig.character), 80.0f, 40.0f, skinning);
    sinew_pose_view pose = {(uint32_t)sizeof(sinew_pose_view), jn, skinning, skinning, 0u};
    float* pa = malloc(sizeof(float) * 3u * n);
    float* pb = malloc(sizeof(float) * 3u * n);
    sinew_output_view oa = {(uint32_t)sizeof(sinew_output_view), n, pa, 0, NULL, 0, NULL};
    sinew_output_view ob = oa;
    ob.positions = pb;
    void* both[2] = {a, b};
    for (int k = 0; k < 2; ++k) {
        assert_int_equal(vt->set_pose(both[k], &pose), SINEW_OK);
        for (int i = 0; i < 5; ++i) assert_int_equal(vt->step(both[k], 1.0f / 60.0f), SINEW_OK);
    }
    assert_int_equal(vt->read_output(a, &oa), SINEW_OK);
    assert_int_equal(vt->read_output(b, &ob), SINEW_OK);
    assert_memory_equal(pa, pb, 12u * n);
    free(pa);
    free(pb);
    free(skinning);
    vt->destroy(a);
    vt->destroy(b);
    ps_test_rig_free(&rig);
}

/* Bad parameters: SINEW_ERROR_PARAMETER and exactly one error line each. */
static void test_bad_params(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    const sinew_param bad[][2] = {
        {{"iterations", "0"}, {NULL, NULL}},       {{"iterations", "2.5"}, {NULL, NULL}},
        {{"pcg_iterations", "0"}, {NULL, NULL}},   {{"pcg_iterations", "x"}, {NULL, NULL}},
        {{"pcg_tolerance", "-1"}, {NULL, NULL}},   {{"pcg_tolerance", "1"}, {NULL, NULL}},
        {{"solver", "lu"}, {NULL, NULL}},          {{"timestep", "0"}, {NULL, NULL}},
        {{"damping", "1.5"}, {NULL, NULL}},        {{"strain_weight", "-1"}, {NULL, NULL}},
        {{"mass", "nan"}, {NULL, NULL}},           {{"sliding", "2"}, {NULL, NULL}},
        {{"profile", "yes"}, {NULL, NULL}},        {{"simd", "sse41"}, {NULL, NULL}},
        {{"decimate_above", "-3"}, {NULL, NULL}},  {{"simulation_vertices", "3"}, {NULL, NULL}},
        {{"bone_radii", ""}, {NULL, NULL}},        {{"anchor_weight", "1"}, {NULL, NULL}},
        {{"iterations", "5"}, {"iterations", "6"}}, {{"solver", NULL}, {NULL, NULL}},
        {{"volume_weight", "-1"}, {NULL, NULL}},   {{"volume_weight", "x"}, {NULL, NULL}},
        {{"volume_range", "1"}, {NULL, NULL}},     {{"volume_range", "-0.1"}, {NULL, NULL}},
        {{"volume_weight", "1"}, {"volume_weight", "2"}},
        {{"max_substeps", "0"}, {NULL, NULL}},     {{"max_substeps", "65"}, {NULL, NULL}},
        {{"max_substeps", "2.5"}, {NULL, NULL}},   {{"interpolate_output", "2"}, {NULL, NULL}},
        {{"max_substeps", "4"}, {"max_substeps", "4"}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        uint32_t count = bad[i][1].key ? 2u : 1u;
        void* inst = (void*)&host;
        sinew_test_log_reset(&host.log);
        sinew_result r = vt->prepare(&host.api, &rig.view, bad[i], count, NULL, &inst);
        if (r != SINEW_ERROR_PARAMETER)
            fail_msg("%s=%s gave %s", bad[i][0].key, bad[i][0].value ? bad[i][0].value : "(null)",
                     sinew_result_string(r));
        assert_null(inst);
        assert_int_equal(host.log.count[SINEW_LOG_ERROR], 1);
        ps_test_buffer blob = {0};
        sinew_bake_writer w = ps_test_buffer_writer(&blob);
        assert_int_equal(vt->bake(&host.api, &rig.view, bad[i], count, &w), SINEW_ERROR_PARAMETER);
        ps_test_buffer_free(&blob);
    }
#if !defined(FPS_TEST_CHOLMOD)
    sinew_param chol[] = {{"solver", "cholmod"}};
    void* inst = NULL;
    sinew_test_log_reset(&host.log);
    assert_int_equal(vt->prepare(&host.api, &rig.view, chol, 1, NULL, &inst),
                     SINEW_ERROR_BACKEND_UNAVAILABLE);
    assert_int_equal(host.log.count[SINEW_LOG_ERROR], 1);
#endif
    ps_test_rig_free(&rig);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pcg_against_cholmod),
        cmocka_unit_test(test_refactor),
        cmocka_unit_test(test_bake_round_trip),
        cmocka_unit_test(test_job_splits),
        cmocka_unit_test(test_bad_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
