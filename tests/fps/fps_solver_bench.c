/* Not a test: times the two solvers of fps on a character's reduced system (Sec. 4.3), one
 * thread: a CHOLMOD solve of three right-hand sides, and 10 PCG iterations (Alg. 2) from a
 * zero start, with the error left after them relative to the start's.
 * Usage: sinew-fps-solver-bench CHARACTER.ini [REPEATS]. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "builtin_backends.h"
#include "fps_internal.h"
#include "ps_fixture.h"

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static double median(double* v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return v[n / 2];
}

/* cmocka's fail_msg in the fixture needs a running test; this tool only runs it in main. */
int main(int argc, char** argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CHARACTER.ini [REPEATS]\n", argv[0]);
        return 2;
    }
    int repeats = argc > 2 ? atoi(argv[2]) : 200;
    if (repeats < 1) repeats = 1;
    ps_test_rig rig;
    ps_test_rig_load(&rig, argv[1]);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    const sinew_backend_vtable* vt = &sinew_backend_fps;
    sinew_param p_pcg[] = {{"solver", "pcg"}, {"pcg_iterations", "10"}};
    void* ip = NULL;
    if (vt->prepare(&host.api, &rig.view, p_pcg, 2, NULL, &ip) != SINEW_OK) return 1;
    fps_sim* sp = fps_instance_sim(ip);
    uint32_t n = fps_sim_free_count(sp);
    double* b = malloc(sizeof(double) * 3u * n);
    double* x = malloc(sizeof(double) * 3u * n);
    double* exact = malloc(sizeof(double) * 3u * n);
    double* t = malloc(sizeof(double) * (size_t)repeats);
    for (uint32_t k = 0; k < 3u * n; ++k) b[k] = sin(0.37 * k) + 0.1 * cos(1.3 * k);
    uint32_t ell;
    size_t crs;
    fps_sim_ellcrs_shape(sp, &ell, &crs);
    printf("%s: reduced system %u unknowns, %zu nonzeros, ELL width %u, %zu CRS entries\n",
           argv[1], n, fps_sim_matrix_nnz(sp), ell, crs);
    for (int r = 0; r < repeats; ++r) {
        memset(x, 0, sizeof(double) * 3u * n);
        double t0 = seconds();
        fps_sim_solve(sp, b, x, NULL);
        t[r] = seconds() - t0;
    }
    printf("10 PCG iterations (3 columns, serial host): median %.3f ms over %d\n",
           1e3 * median(t, repeats), repeats);
#if defined(FPS_TEST_CHOLMOD)
    sinew_param p_chol[] = {{"solver", "cholmod"}};
    void* ic = NULL;
    if (vt->prepare(&host.api, &rig.view, p_chol, 1, NULL, &ic) != SINEW_OK) return 1;
    fps_sim* sc = fps_instance_sim(ic);
    for (int r = 0; r < repeats; ++r) {
        double t0 = seconds();
        fps_sim_solve(sc, b, exact, NULL);
        t[r] = seconds() - t0;
    }
    printf("CHOLMOD solve (3 columns, factor %zu nonzeros): median %.3f ms over %d\n",
           fps_sim_factor_nnz(sc), 1e3 * median(t, repeats), repeats);
    /* the error of 10 PCG iterations from a zero start, relative to the zero start's */
    memset(x, 0, sizeof(double) * 3u * n);
    fps_sim_solve(sp, b, x, NULL);
    double e0 = 0.0, e1 = 0.0;
    for (uint32_t k = 0; k < 3u * n; ++k) {
        e0 += exact[k] * exact[k];
        e1 += (x[k] - exact[k]) * (x[k] - exact[k]);
    }
    printf("10 PCG iterations from zero leave %.3f of the error\n", sqrt(e1 / e0));
    vt->destroy(ic);
#endif
    vt->destroy(ip);
    free(b);
    free(x);
    free(exact);
    free(t);
    ps_test_rig_free(&rig);
    return 0;
}
