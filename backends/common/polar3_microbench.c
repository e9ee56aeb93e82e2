/* sinew-polar-microbench: nanoseconds per matrix of every polar decomposition kernel
 * (polar3_batch.h) and of the scalar SVD, on batches the size of projective skinning's local
 * step, single thread. Not a test.
 * SPDX-License-Identifier: MIT
 *
 * The clock of a shared machine drifts, so the kernels run interleaved, round after round, and
 * the report gives the median and the minimum over the rounds, plus the median of the per-round
 * ratio to the scalar kernel (a ratio within one round is robust to the drift). */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "polar3.h"
#include "polar3_batch.h"

typedef struct rng {
    uint64_t s;
} rng;

static double unit(rng* r)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(r->s >> 11) * (1.0 / 9007199254740992.0);
}

static void random_rotation(rng* r, double R[9])
{
    double q[4], n;
    do {
        n = 0.0;
        for (int i = 0; i < 4; ++i) {
            q[i] = 2.0 * unit(r) - 1.0;
            n += q[i] * q[i];
        }
    } while (n > 1.0 || n < 1e-6);
    n = sqrt(n);
    double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
    double m[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                   2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                   2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    memcpy(R, m, sizeof m);
}

/* F = R1 diag(s) R2^T. */
static void from_svd(rng* r, const double s[3], float F[9])
{
    double R1[9], R2[9];
    random_rotation(r, R1);
    random_rotation(r, R2);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double t = 0.0;
            for (int k = 0; k < 3; ++k) t += R1[3 * i + k] * s[k] * R2[3 * j + k];
            F[3 * i + j] = (float)t;
        }
}

enum { DIST_PD, DIST_STRETCH, DIST_PD_FLAT1, DIST_INVERTED, DIST_COUNT };
static const char* const dist_names[DIST_COUNT] = {
    "pd: stretch 0.85-1.15", "stretch 0.2-2", "pd + 1% flat/inverted", "inverted (all SVD)"};

/* One matrix of distribution d, row-major. */
static void sample(rng* r, int d, float F[9])
{
    double s[3];
    for (int k = 0; k < 3; ++k) s[k] = 0.85 + 0.3 * unit(r);
    if (d == DIST_STRETCH)
        for (int k = 0; k < 3; ++k) s[k] = 0.2 + 1.8 * unit(r);
    if ((d == DIST_PD_FLAT1 && unit(r) < 0.01) || d == DIST_INVERTED)
        s[2] = (unit(r) < 0.5 ? 1e-6 : -0.5) * unit(r); /* flat (det < 1e-5) or inverted */
    if (d == DIST_INVERTED) s[2] = -0.1 - 0.5 * unit(r);
    from_svd(r, s, F);
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static double median(double* v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define MAX_ROUNDS 101
/* Kernels: the batch kernels, then the scalar sinew_svd3 on row-major matrices. */
#define KERNELS 4

int main(int argc, char** argv)
{
    uint32_t count = 9300; /* prisms of the male character's tissue */
    int rounds = 15;
    int reps = 20;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) {
            count = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else {
            printf("usage: %s [--count N] [--rounds R] [--reps K]\n"
                   "  times every polar kernel on N matrices (default 9300), K passes per\n"
                   "  round (default 20), R interleaved rounds (default 15, at most %d)\n",
                   argv[0], MAX_ROUNDS);
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    if (count == 0 || rounds < 1 || rounds > MAX_ROUNDS || reps < 1) {
        fprintf(stderr, "sinew-polar-microbench: count, rounds and reps must be positive "
                        "(rounds at most %d)\n", MAX_ROUNDS);
        return 2;
    }

    const sinew_simd isas[3] = {SINEW_SIMD_SCALAR, SINEW_SIMD_AVX2, SINEW_SIMD_AVX512};
    sinew_polar3_batch_fn fns[3];
    for (int k = 0; k < 3; ++k) {
        fns[k] = sinew_polar3_batch_resolve(isas[k]) == isas[k] ? sinew_polar3_batch_kernel(isas[k])
                                                                  : NULL;
    }
    float* F = malloc(sizeof(float) * 9 * count);
    float* Faos = malloc(sizeof(float) * 9 * count);
    float* R = malloc(sizeof(float) * 9 * count);
    float* Rref = malloc(sizeof(float) * 9 * count);
    float* Sv = malloc(sizeof(float) * 3 * count);
    if (!F || !Faos || !R || !Rref || !Sv) {
        fprintf(stderr, "sinew-polar-microbench: out of memory\n");
        return 1;
    }
    printf("sinew-polar-microbench: %u matrices, %d passes per round, %d rounds, single "
           "thread; ns per matrix (median / min over rounds), ratio = median per-round "
           "speed-up over scalar\n",
           count, reps, rounds);

    for (int d = 0; d < DIST_COUNT; ++d) {
        rng r = {0x5EED0000u + (uint64_t)d};
        for (uint32_t i = 0; i < count; ++i) {
            float m[9];
            sample(&r, d, m);
            for (int k = 0; k < 9; ++k) {
                F[(size_t)k * count + i] = m[k];
                Faos[9 * (size_t)i + k] = m[k];
            }
        }
        /* What the kernels face: Newton steps per matrix, and per block of 16 (AVX2) and 32
         * (AVX-512) matrices, where a block steps until its slowest lane has converged. */
        double steps = 0.0, block_steps[2] = {0.0, 0.0};
        uint32_t svd_lanes = 0, block_max[2] = {0, 0};
        const uint32_t widths[2] = {16, 32};
        for (uint32_t i = 0; i < count; ++i) {
            const float* m = Faos + 9 * (size_t)i;
            uint32_t taken = 0;
            int svd = 1;
            if (sinew_polar3_det(m) >= SINEW_POLAR3_DET_MIN) {
                float X[9];
                float mx = sinew_svd3_max_abs(m);
                for (int k = 0; k < 9; ++k) X[k] = m[k] / mx;
                for (int it = 0; it < SINEW_POLAR3_NEWTON_MAX_ITER; ++it) {
                    ++taken;
                    if (sinew_polar3_newton_step(X) < SINEW_POLAR3_NEWTON_TOL2) {
                        svd = 0;
                        break;
                    }
                }
            }
            steps += svd ? 0.0 : (double)taken;
            svd_lanes += (uint32_t)svd;
            for (int w = 0; w < 2; ++w) {
                block_max[w] = taken > block_max[w] ? taken : block_max[w];
                if (i % widths[w] == widths[w] - 1 || i + 1 == count) {
                    block_steps[w] += block_max[w];
                    block_max[w] = 0;
                }
            }
        }
        printf("\n%s: %.2f%% of the matrices by SVD; Newton steps %.2f per Newton matrix, "
               "%.2f per block of 16, %.2f per block of 32\n",
               dist_names[d], 100.0 * svd_lanes / count,
               steps / (double)(count > svd_lanes ? count - svd_lanes : 1),
               block_steps[0] / ((count + 15) / 16), block_steps[1] / ((count + 31) / 32));

        /* Reference and bit-exactness of every kernel. */
        sinew_polar3_batch_scalar(F, Rref, count, 0, count);
        for (int k = 1; k < 3; ++k) {
            if (!fns[k]) continue;
            fns[k](F, R, count, 0, count);
            uint32_t differ = 0;
            for (size_t e = 0; e < 9 * (size_t)count; ++e) differ += R[e] != Rref[e];
            if (differ) printf("  %s: %u of %zu floats differ from scalar\n",
                               sinew_simd_name(isas[k]), differ, 9 * (size_t)count);
        }

        double t[KERNELS][MAX_ROUNDS], ratio[KERNELS][MAX_ROUNDS];
        volatile float sink = 0.0f;
        for (int round = 0; round < rounds; ++round) {
            for (int k = 0; k < KERNELS; ++k) {
                if (k < 3 && !fns[k]) continue;
                double t0 = now_ns();
                for (int rep = 0; rep < reps; ++rep) {
                    if (k < 3) {
                        fns[k](F, R, count, 0, count);
                    } else {
                        for (uint32_t i = 0; i < count; ++i)
                            sinew_svd3(Faos + 9 * (size_t)i, R + 9 * (size_t)i, Sv + 3 * (size_t)i,
                                       Rref + 9 * (size_t)i);
                    }
                    sink += R[rep % count];
                }
                t[k][round] = (now_ns() - t0) / ((double)reps * count);
            }
            for (int k = 0; k < KERNELS; ++k) ratio[k][round] = t[0][round] / t[k][round];
        }
        (void)sink;
        static const char* const names[KERNELS] = {"scalar", "avx2", "avx512", "svd3 scalar"};
        for (int k = 0; k < KERNELS; ++k) {
            if (k < 3 && !fns[k]) {
                printf("  %-12s not available (not built in or not run by this CPU)\n", names[k]);
                continue;
            }
            double med = median(t[k], rounds), mn = t[k][0];
            for (int i = 1; i < rounds; ++i) mn = t[k][i] < mn ? t[k][i] : mn;
            printf("  %-12s %8.2f ns  (min %7.2f)   x%.2f\n", names[k], med, mn,
                   median(ratio[k], rounds));
        }
    }
    free(F);
    free(Faos);
    free(R);
    free(Rref);
    free(Sv);
    return 0;
}
