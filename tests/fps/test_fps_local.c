/* The CPU local step of `fps` runs ps's block kernels (ps_local.h: gradient and projection,
 * scalar, AVX2, AVX-512) around the batched polar decomposition (polar3_batch.h); the CUDA
 * plugin runs fps_local_prism of fps_kernels.h. This checks that every kernel set this CPU
 * runs gives fps_local_prism's bits, prism by prism, including the padding prisms of the
 * last block (G = 0: no share). SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fps_kernels.h"
#include "polar3_batch.h"
#include "ps_local.h"
#include "test_support.h"

static uint32_t rng_state = 777u;
static double rndf(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return (double)((rng_state >> 8) % 100000u) / 50000.0 - 1.0;
}

typedef struct kernel_set {
    sinew_simd simd;
    ps_local_gradient_fn gradient;
    ps_local_project_fn project;
} kernel_set;

/* Every kernel set this CPU runs, in two uneven job ranges, against `want` (fps_local_prism's
 * shares); with prisms->volume_keep < 1 the rotation goes to its own array and is blended
 * there, as ps and fps run it. Returns the number of kernel sets that ran. */
static int check_kernel_sets(const fps_prisms* prisms, const double* x, uint32_t NV,
                             uint32_t blocks, const float* want)
{
    const size_t S = prisms->stride;
    kernel_set sets[3] = {{SINEW_SIMD_SCALAR, ps_local_gradient_scalar, ps_local_project_scalar},
                          {SINEW_SIMD_COUNT, NULL, NULL},
                          {SINEW_SIMD_COUNT, NULL, NULL}};
#if defined(SINEW_SKIN_X86)
    sets[1] = (kernel_set){SINEW_SIMD_AVX2, ps_local_gradient_avx2, ps_local_project_avx2};
    sets[2] = (kernel_set){SINEW_SIMD_AVX512, ps_local_gradient_avx512, ps_local_project_avx512};
#endif
    const int volume = prisms->volume_keep < 1.0f;
    int ran = 0;
    for (int k = 0; k < 3; ++k) {
        if (!sets[k].gradient) continue;
        sinew_polar3_batch_fn polar = sinew_polar3_batch_kernel(sets[k].simd);
        if (!polar) continue; /* this CPU lacks the instruction set */
        float* F = calloc(9u * S, sizeof(float));
        float* R = calloc(9u * S, sizeof(float));
        float* got = calloc(18u * S, sizeof(float));
        /* poison the outputs: every entry must be written */
        for (size_t e = 0; e < 18u * S; ++e) got[e] = NAN;
        ps_local_job job = {x, NV, prisms->pv, prisms->G, prisms->inv_w, F, got, S};
        const uint32_t ranges[3] = {0, 2, blocks};
        for (int q = 0; q < 2; ++q) {
            uint32_t b0 = ranges[q], b1 = ranges[q + 1];
            job.F = F;
            sets[k].gradient(&job, b0, b1);
            polar(F, volume ? R : F, S, b0 * PS_LOCAL_BLOCK, b1 * PS_LOCAL_BLOCK);
            if (volume) {
                ps_local_volume(F, R, S, prisms->volume_keep, prisms->volume_lo,
                                prisms->volume_hi, b0, b1);
                job.F = R;
            }
            sets[k].project(&job, b0, b1);
        }
        if (memcmp(got, want, sizeof(float) * 18u * S) != 0)
            fail_msg("simd=%s, volume %d: the local step differs from fps_local_prism",
                     sinew_simd_name(sets[k].simd), volume);
        free(F);
        free(R);
        free(got);
        ++ran;
    }
    return ran;
}

static void test_local_kernels_match(void** state)
{
    (void)state;
    /* 5 blocks, the last one partly padding; prisms of a rest shape near the identity (the
     * Newton path of the polar decomposition), some flattened or inverted (its SVD path). */
    enum { P = 75, NV = 6 * P };
    const uint32_t blocks = (P + PS_LOCAL_BLOCK - 1u) / PS_LOCAL_BLOCK;
    const size_t S = (size_t)blocks * PS_LOCAL_BLOCK;
    int32_t* pv = calloc(6u * S, sizeof(int32_t));
    float* G = calloc(18u * S, sizeof(float));
    float* inv_w = calloc(S, sizeof(float));
    double* x = malloc(sizeof(double) * 3u * NV);
    static const double corner[6][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0},
                                        {0, 0, 1}, {1, 0, 1}, {0, 1, 1}};
    for (uint32_t p = 0; p < P; ++p) {
        for (int k = 0; k < 6; ++k) pv[(size_t)k * S + p] = (int32_t)(6u * p + (uint32_t)k);
        for (int r = 0; r < 3; ++r) {
            float sum = 0.0f;
            for (int k = 1; k < 6; ++k) {
                float g = (float)rndf();
                G[(size_t)(6 * r + k) * S + p] = g;
                sum += g;
            }
            G[(size_t)(6 * r) * S + p] = -sum; /* rows sum to zero, as G_p's do */
        }
        inv_w[p] = p % 11u == 3u ? 0.0f : 0.5f + 0.01f * (float)p; /* one in 11: no tets */
        double scale_z = p % 7u == 0u ? -0.5 : (p % 13u == 0u ? 1e-7 : 1.0);
        for (int k = 0; k < 6; ++k)
            for (int c = 0; c < 3; ++c)
                x[(size_t)c * NV + 6u * p + (uint32_t)k] =
                    (c == 2 ? scale_z : 1.0) * corner[k][c] + 0.1 * rndf() + 3.0 * p;
    }
    /* without and with the volume term (volume3.h): the CPU blends after the batch polar */
    const float keeps[2] = {1.0f, 0.5f};
    float* want = calloc(18u * S, sizeof(float));
    for (int v = 0; v < 2; ++v) {
        fps_prisms prisms = {S, pv, G, inv_w, keeps[v], 0.99f, 1.01f};
        uint32_t projected = 0; /* prisms whose volume projection is not F itself */
        for (uint32_t p = 0; p < (uint32_t)S; ++p) {
            float F[9];
            fps_prism_gradient(&prisms, x, NV, p, F);
            float det = sinew_det3(F);
            projected += det > SINEW_VOLUME_MIN_DET && (det < 0.99f || det > 1.01f);
            fps_local_prism(&prisms, x, NV, p, want);
        }
        assert_true(projected >= 10u);
        assert_true(check_kernel_sets(&prisms, x, NV, blocks, want) >= 1);
    }
    /* the padding prisms (vertex 0, G = 0, no weight) give no share */
    for (size_t c = 0; c < 18u; ++c)
        for (size_t p = P; p < S; ++p) assert_true(want[c * S + p] == 0.0f);
    free(pv);
    free(G);
    free(inv_w);
    free(x);
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local_kernels_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
