/* sinew-mls-bench: times MLS upsampling of a character's render mesh from its simulation mesh
 * (default characters/male: male.off, 23,259 vertices, from male_LR20.off, 4,651): the bake,
 * the blob, and per-frame evaluation (positions, positions and normals, and the simulation
 * normals) on the runtime's thread pool. Not a test: prints medians.
 * Usage: sinew-mls-bench [character.ini or ""] [threads] [frames]. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sinew/sinew_import.h>

#include "internal.h" /* the runtime's thread pool (runtime/pool.c, compiled in) */
#include "sinew_mls.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void* bench_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    void* p = NULL;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    return posix_memalign(&p, alignment, size) == 0 ? p : NULL;
}

static void bench_free(void* p, void* user)
{
    (void)user;
    free(p);
}

static void bench_log(sinew_log_level level, const char* message, void* user)
{
    (void)user;
    fprintf(stderr, "[%d] %s\n", (int)level, message);
}

static void serial_for(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain, void* user)
{
    (void)grain;
    (void)user;
    fn(data, 0, count);
}

/* CPU time of every thread of the process: on a machine shared with other work, wall time
 * also counts the time the threads waited for a core. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : (x > y);
}

static double median(double* v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char** argv)
{
    const char* path = argc > 1 && argv[1][0] ? argv[1] : NULL;
    uint32_t threads = argc > 2 ? (uint32_t)atoi(argv[2]) : 2u;
    int frames = argc > 3 ? atoi(argv[3]) : 2000;
    char default_path[4096];
    if (!path) {
        snprintf(default_path, sizeof default_path, "%s/characters/male/male.ini",
                 sinew_import_data_dir());
        path = default_path;
    }
    if (threads == 0 || frames <= 0) {
        fprintf(stderr, "usage: sinew-mls-bench [character.ini] [threads >= 1] [frames >= 1]\n");
        return 2;
    }
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    sinew_character* c = NULL;
    if (sinew_import_character(path, &options, &c) != SINEW_OK) {
        fprintf(stderr, "cannot load %s\n", path);
        return 1;
    }
    const sinew_mesh_desc* rd = &c->rig.render_mesh;
    const sinew_mesh_desc* sd = c->rig.simulation_mesh.vertex_count ? &c->rig.simulation_mesh : rd;
    sinew_mesh_view sim = {sd->vertex_count, sd->triangle_count, sd->positions, sd->normals,
                           sd->indices, 0, NULL};
    sinew_mesh_view render = {rd->vertex_count, rd->triangle_count, rd->positions, rd->normals,
                              rd->indices, 0, NULL};

    sinew_host_api serial;
    memset(&serial, 0, sizeof serial);
    serial.struct_size = sizeof serial;
    serial.allocator.alloc = bench_alloc;
    serial.allocator.free = bench_free;
    serial.logger.func = bench_log;
    serial.log_level = SINEW_LOG_WARNING;
    serial.jobs.parallel_for = serial_for;
    serial.jobs.thread_count = 1;
    sinew_host_api host = serial;
    sinew_pool* pool = NULL;
    if (sinew_pool_create(&serial, threads, &pool) != SINEW_OK) return 1;
    host.jobs = sinew_pool_job_system(pool);

    printf("%s: %u render vertices from %u simulation vertices, %u threads\n", path,
           render.vertex_count, sim.vertex_count, threads);
    sinew_mls_weights w;
    double t0 = now();
    if (sinew_mls_bake(&serial, &sim, &render, &w) != SINEW_OK) return 1;
    double bake1 = now() - t0;
    sinew_mls_free(&serial, &w);
    t0 = now();
    if (sinew_mls_bake(&host, &sim, &render, &w) != SINEW_OK) return 1;
    double bakeN = now() - t0;
    printf("bake: %.3f s on 1 thread, %.3f s on %u threads; %u corrected, %u short, %u inexact, "
           "max sum|N| %.2f\n",
           bake1, bakeN, threads, w.stats.corrected_count, w.stats.short_count,
           w.stats.inexact_count, w.stats.max_weight_l1);
    size_t size = sinew_mls_blob_size(&w);
    void* blob = malloc(size);
    sinew_mls_weights back;
    t0 = now();
    if (!blob || sinew_mls_write(&serial, &w, blob, size) != SINEW_OK) return 1;
    double tw = now() - t0;
    t0 = now();
    if (sinew_mls_read(&serial, blob, size, NULL, &back) != SINEW_OK) return 1;
    double tr = now() - t0;
    printf("blob: %zu bytes, write %.2f ms, read (validated) %.2f ms\n", size, 1e3 * tw, 1e3 * tr);
    sinew_mls_free(&serial, &back);
    free(blob);

    const uint32_t S = sim.vertex_count, R = render.vertex_count;
    float* moved = malloc(3u * S * sizeof(float));
    float* sn = malloc(3u * S * sizeof(float));
    float* out = malloc(3u * R * sizeof(float));
    float* out_n = malloc(3u * R * sizeof(float));
    if (!moved || !sn || !out || !out_n) return 1;
    /* A bent copy of the rest pose: the gathers read the same addresses whatever the pose. */
    for (uint32_t i = 0; i < S; ++i) {
        const float* p = sim.positions + 3u * i;
        moved[3u * i] = p[0] + 0.01f * p[2] * p[2];
        moved[3u * i + 1u] = p[1];
        moved[3u * i + 2u] = p[2] - 0.01f * p[0] * p[2];
    }
    if (sinew_mls_vertex_normals(&serial, moved, S, sim.indices, sim.triangle_count, sn) != SINEW_OK)
        return 1;
    /* The scalar reference and the kernel sinew_mls_apply picks, runs interleaved so that a
     * change in the machine's load hits every mode alike. */
    enum { REPS = 9, MODES = 5 };
    const sinew_simd best = sinew_mls_resolve(SINEW_SIMD_AUTO);
    char names[MODES][64];
    snprintf(names[0], sizeof names[0], "positions (scalar)");
    snprintf(names[1], sizeof names[1], "positions (%s)", sinew_simd_name(best));
    snprintf(names[2], sizeof names[2], "positions + normals (scalar)");
    snprintf(names[3], sizeof names[3], "positions + normals (%s)", sinew_simd_name(best));
    snprintf(names[4], sizeof names[4], "simulation normals (serial)");
    double per[MODES][REPS], cpu[MODES][REPS];
    for (int rep = 0; rep < REPS; ++rep)
        for (int mode = 0; mode < MODES; ++mode) {
            const sinew_simd simd = mode % 2 ? best : SINEW_SIMD_SCALAR;
            double s = now(), cs = cpu_now();
            for (int f = 0; f < frames; ++f) {
                sinew_result r;
                if (mode < 2)
                    r = sinew_mls_apply_simd(&host, simd, &w, S, moved, NULL, out, 0, NULL, 0, NULL, 0);
                else if (mode < 4)
                    r = sinew_mls_apply_simd(&host, simd, &w, S, moved, sn, out, 0, out_n, 0, NULL, 0);
                else
                    r = sinew_mls_vertex_normals(&host, moved, S, sim.indices, sim.triangle_count, sn);
                if (r != SINEW_OK) return 1;
            }
            per[mode][rep] = (now() - s) / frames;
            cpu[mode][rep] = (cpu_now() - cs) / frames;
        }
    for (int mode = 0; mode < MODES; ++mode) {
        double mid = median(per[mode], REPS); /* sorts per[mode] */
        printf("%-30s: median %.1f us per frame (min %.1f, max %.1f over %d runs of %d frames), "
               "CPU time of all threads %.1f us\n",
               names[mode], 1e6 * mid, 1e6 * per[mode][0], 1e6 * per[mode][REPS - 1], REPS, frames,
               1e6 * median(cpu[mode], REPS));
    }
    free(moved);
    free(sn);
    free(out);
    free(out_n);
    sinew_mls_free(&serial, &w);
    sinew_pool_destroy(&serial, pool);
    sinew_import_free(c);
    return 0;
}
