/* sinew-skin-microbench: times every kernel of the lbs and dqs backends, one thread, on a
 * synthetic mesh (by default the size of male.off: 23259 vertices, 4 influences, 63 joints,
 * positions and normals). Prints the median of several runs in M vertices/s, the speed-up
 * over the scalar kernel of the same run and, for dqs, its speed relative to lbs with the same
 * instruction set. Not a test: timings never gate anything.
 *
 * usage: sinew-skin-microbench [--vertices N] [--joints N] [--influences N] [--runs N]
 *                              [--no-normals]
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200112L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "builtin_backends.h"
#include "cpu_features.h"

static void* bench_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    void* p = NULL;
    return posix_memalign(&p, alignment < sizeof(void*) ? sizeof(void*) : alignment, size) == 0
               ? p
               : NULL;
}

static void bench_free(void* ptr, void* user)
{
    (void)user;
    free(ptr);
}

static void bench_log(sinew_log_level level, const char* message, void* user)
{
    (void)user;
    if (level <= SINEW_LOG_WARNING) fprintf(stderr, "%s\n", message);
}

/* One thread: the figures are per core. */
static void bench_serial_for(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain,
                             void* user)
{
    (void)grain;
    (void)user;
    fn(data, 0, count);
}

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static float frand(void) /* uniform in [0, 1) */
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (float)(g_rng >> 40) / 16777216.0f;
}

/* A random rotation (from a random unit quaternion) plus translation, column-major. */
static void random_rigid(float* m)
{
    float q[4], n = 0.0f;
    for (int i = 0; i < 4; ++i) {
        q[i] = frand() * 2.0f - 1.0f;
        n += q[i] * q[i];
    }
    n = sqrtf(n);
    float x = q[0] / n, y = q[1] / n, z = q[2] / n, w = q[3] / n;
    float r[16] = {1 - 2 * (y * y + z * z), 2 * (x * y + w * z),     2 * (x * z - w * y),     0,
                   2 * (x * y - w * z),     1 - 2 * (x * x + z * z), 2 * (y * z + w * x),     0,
                   2 * (x * z + w * y),     2 * (y * z - w * x),     1 - 2 * (x * x + y * y), 0,
                   frand() - 0.5f,          frand() - 0.5f,          frand() - 0.5f,          1};
    memcpy(m, r, sizeof r);
}

static double now_seconds(void)
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

int main(int argc, char** argv)
{
    uint32_t vertices = 23259, joints = 63, influences = 4, runs = 9;
    int normals = 1;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--no-normals") == 0) {
            normals = 0;
        } else if (i + 1 < argc && strcmp(argv[i], "--vertices") == 0) {
            vertices = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (i + 1 < argc && strcmp(argv[i], "--joints") == 0) {
            joints = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (i + 1 < argc && strcmp(argv[i], "--influences") == 0) {
            influences = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (i + 1 < argc && strcmp(argv[i], "--runs") == 0) {
            runs = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else {
            fprintf(stderr,
                    "usage: %s [--vertices N] [--joints N] [--influences N] [--runs N] "
                    "[--no-normals]\n",
                    argv[0]);
            return 2;
        }
    }
    if (vertices == 0 || joints == 0 || influences == 0 || influences > joints || runs == 0 ||
        runs > 1000) {
        fprintf(stderr, "need vertices, joints, runs (<= 1000) > 0 and 0 < influences <= joints\n");
        return 2;
    }
    uint32_t width = influences <= 4 ? 4 : influences <= 8 ? 8 : influences;

    float* pos = malloc((size_t)vertices * 12);
    float* nrm = malloc((size_t)vertices * 12);
    uint32_t* pj = calloc((size_t)vertices * width, sizeof(uint32_t));
    float* pw = calloc((size_t)vertices * width, sizeof(float));
    float* skinning = malloc((size_t)joints * 64);
    float* identity = malloc((size_t)joints * 64);
    int32_t* parents = malloc((size_t)joints * sizeof(int32_t));
    const char** names = malloc((size_t)joints * sizeof(char*));
    if (!pos || !nrm || !pj || !pw || !skinning || !identity || !parents || !names) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (uint32_t v = 0; v < vertices; ++v) {
        float len = 0.0f;
        for (int c = 0; c < 3; ++c) {
            pos[3 * v + c] = frand() * 2.0f - 1.0f;
            nrm[3 * v + c] = frand() * 2.0f - 1.0f;
            len += nrm[3 * v + c] * nrm[3 * v + c];
        }
        len = len > 1e-12f ? sqrtf(len) : 1.0f;
        for (int c = 0; c < 3; ++c) nrm[3 * v + c] /= len;
        /* Distinct joints near each other, as on a real limb; weights sorted decreasing. */
        uint32_t base = (uint32_t)(frand() * (float)joints) % joints;
        float sum = 0.0f, w[64];
        for (uint32_t k = 0; k < influences && k < 64; ++k) {
            w[k] = 1.0f / (float)(k + 1) + 0.01f * frand();
            sum += w[k];
        }
        for (uint32_t k = 0; k < influences && k < 64; ++k) {
            pj[(size_t)v * width + k] = (base + k) % joints;
            pw[(size_t)v * width + k] = w[k] / sum;
        }
    }
    for (uint32_t j = 0; j < joints; ++j) {
        random_rigid(skinning + 16u * j);
        memset(identity + 16u * j, 0, 64);
        for (int d = 0; d < 4; ++d) identity[16u * j + 5u * (uint32_t)d] = 1.0f;
        parents[j] = (int32_t)j - 1;
        names[j] = "";
    }

    sinew_host_api host;
    memset(&host, 0, sizeof host);
    host.struct_size = (uint32_t)sizeof host;
    host.allocator.alloc = bench_alloc;
    host.allocator.free = bench_free;
    host.logger.func = bench_log;
    host.log_level = SINEW_LOG_WARNING;
    host.jobs.parallel_for = bench_serial_for;
    host.jobs.thread_count = 1;

    sinew_rig_view rig;
    memset(&rig, 0, sizeof rig);
    rig.struct_size = (uint32_t)sizeof rig;
    rig.joint_count = joints;
    rig.parents = parents;
    rig.names = names;
    rig.bind_matrices = identity;
    rig.inverse_bind_matrices = identity;
    rig.render_mesh.vertex_count = vertices;
    rig.render_mesh.positions = pos;
    rig.render_mesh.normals = nrm;
    rig.max_influences = influences;
    rig.padded_width = width;
    rig.padded_joints = pj;
    rig.padded_weights = pw;

    sinew_pose_view pose = {(uint32_t)sizeof pose, joints, skinning, skinning, 0u};
    const sinew_backend_vtable* backends[2] = {&sinew_backend_lbs, &sinew_backend_dqs};
    /* Steps per timed run: about 5 ms of work at 400 M vertices/s. */
    uint32_t steps = 2000000u / vertices + 1u;
    enum { PATHS = 2 * SINEW_SIMD_COUNT };
    void* inst[PATHS] = {NULL};
    double* times = malloc((size_t)PATHS * runs * sizeof(double));
    if (!times) return 1;

    printf("sinew-skin-microbench: %u vertices, %u joints, %u influences (width %u), %s, "
           "1 thread, median of %u interleaved runs x %u steps\n",
           vertices, joints, influences, width, normals ? "positions+normals" : "positions", runs,
           steps);
    for (int i = 0; i < PATHS; ++i) {
        const sinew_backend_vtable* b = backends[i / SINEW_SIMD_COUNT];
        sinew_simd s = (sinew_simd)(i % SINEW_SIMD_COUNT);
        if (!sinew_simd_supported(s)) continue;
        sinew_param params[2] = {{"simd", sinew_simd_name(s)}, {"normals", normals ? "1" : "0"}};
        if (b->prepare(&host, &rig, params, 2, NULL, &inst[i]) != SINEW_OK ||
            b->set_pose(inst[i], &pose) != SINEW_OK || b->step(inst[i], 1.0f / 60.0f) != SINEW_OK) {
            fprintf(stderr, "%s simd=%s failed to start\n", b->name, sinew_simd_name(s));
            return 1;
        }
    }
    /* Run r times every path once, so that the drifting clock treats all paths alike. */
    for (uint32_t run = 0; run < runs; ++run) {
        for (int i = 0; i < PATHS; ++i) {
            if (!inst[i]) continue;
            const sinew_backend_vtable* b = backends[i / SINEW_SIMD_COUNT];
            double t0 = now_seconds();
            for (uint32_t k = 0; k < steps; ++k) b->step(inst[i], 1.0f / 60.0f);
            times[(size_t)i * runs + run] = (now_seconds() - t0) / steps;
        }
    }
    printf("%-4s %-7s %12s %10s %10s\n", "", "simd", "M vert/s", "x scalar", "x lbs");
    for (int i = 0; i < PATHS; ++i) {
        const sinew_backend_vtable* b = backends[i / SINEW_SIMD_COUNT];
        const char* simd = sinew_simd_name((sinew_simd)(i % SINEW_SIMD_COUNT));
        if (!inst[i]) {
            printf("%-4s %-7s %12s\n", b->name, simd, "(not available)");
            continue;
        }
        b->destroy(inst[i]);
        /* Ratios are taken run by run (same clock), then their median: to the scalar kernel of
         * the same backend and, for dqs, to lbs with the same instruction set. Medians are
         * taken on copies, so that every path's runs stay in run order. */
        const double* t = times + (size_t)i * runs;
        const double* ts = times + (size_t)(i - i % SINEW_SIMD_COUNT) * runs;
        const int lbs_path = i % SINEW_SIMD_COUNT;
        double sorted[1000], ratio[1000], to_lbs[1000];
        for (uint32_t r = 0; r < runs; ++r) {
            sorted[r] = t[r];
            ratio[r] = ts[r] / t[r];
            to_lbs[r] = times[(size_t)lbs_path * runs + r] / t[r];
        }
        qsort(sorted, runs, sizeof(double), cmp_double);
        qsort(ratio, runs, sizeof(double), cmp_double);
        qsort(to_lbs, runs, sizeof(double), cmp_double);
        printf("%-4s %-7s %12.1f %10.2f", b->name, simd, vertices / sorted[runs / 2] * 1e-6,
               ratio[runs / 2]);
        if (i >= SINEW_SIMD_COUNT && inst[lbs_path]) printf(" %10.2f", to_lbs[runs / 2]);
        printf("\n");
    }
    /* set_pose: lbs copies the matrices, dqs converts each to a dual quaternion. */
    for (int b = 0; b < 2; ++b) {
        void* one = NULL;
        sinew_param params[1] = {{"simd", "scalar"}};
        if (backends[b]->prepare(&host, &rig, params, 1, NULL, &one) != SINEW_OK) return 1;
        enum { POSES = 200 };
        for (uint32_t run = 0; run < runs; ++run) {
            double t0 = now_seconds();
            for (int k = 0; k < POSES; ++k) backends[b]->set_pose(one, &pose);
            times[run] = (now_seconds() - t0) / POSES;
        }
        qsort(times, runs, sizeof(double), cmp_double);
        printf("%-4s set_pose %8.2f us for %u joints\n", backends[b]->name, times[runs / 2] * 1e6,
               joints);
        backends[b]->destroy(one);
    }
    free(times);
    free(pos);
    free(nrm);
    free(pj);
    free(pw);
    free(skinning);
    free(identity);
    free(parents);
    free(names);
    return 0;
}
