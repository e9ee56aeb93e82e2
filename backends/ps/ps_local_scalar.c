/* The local step's arithmetic in plain C (any CPU), the reference for the SIMD kernels.
 * SPDX-License-Identifier: MIT */
#include "ps_local.h"
#include "volume3.h"

void ps_local_gradient_scalar(const ps_local_job* job, uint32_t begin, uint32_t end)
{
    const size_t S = job->stride;
    for (size_t p = (size_t)begin * PS_LOCAL_BLOCK; p < (size_t)end * PS_LOCAL_BLOCK; ++p) {
        float rel[3][6];
        for (int c = 0; c < 3; ++c) {
            const double* xc = job->x + (size_t)c * job->N;
            double base = xc[job->pv[p]];
            for (int k = 1; k < 6; ++k) rel[c][k] = (float)(xc[job->pv[(size_t)k * S + p]] - base);
        }
        float inv_w = job->inv_w[p];
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) {
                float sum = job->G[(size_t)(6 * r + 1) * S + p] * rel[c][1];
                for (int k = 2; k < 6; ++k) sum = sum + job->G[(size_t)(6 * r + k) * S + p] * rel[c][k];
                job->F[(size_t)(3 * c + r) * S + p] = sum * inv_w;
            }
    }
}

void ps_local_project_scalar(const ps_local_job* job, uint32_t begin, uint32_t end)
{
    const size_t S = job->stride;
    for (size_t p = (size_t)begin * PS_LOCAL_BLOCK; p < (size_t)end * PS_LOCAL_BLOCK; ++p) {
        float R[9], G[18];
        for (int k = 0; k < 9; ++k) R[k] = job->F[(size_t)k * S + p];
        for (int k = 0; k < 18; ++k) G[k] = job->G[(size_t)k * S + p];
        for (int k = 0; k < 6; ++k)
            for (int i = 0; i < 3; ++i)
                job->contrib[(size_t)(3 * k + i) * S + p] =
                    (R[3 * i] * G[k] + R[3 * i + 1] * G[6 + k]) + R[3 * i + 2] * G[12 + k];
    }
}

void ps_local_volume(const float* F, float* R, size_t stride, float keep, float lo, float hi,
                     uint32_t begin, uint32_t end)
{
    for (size_t p = (size_t)begin * PS_LOCAL_BLOCK; p < (size_t)end * PS_LOCAL_BLOCK; ++p) {
        float f[9], r[9], t[9];
        for (int k = 0; k < 9; ++k) {
            f[k] = F[(size_t)k * stride + p];
            r[k] = R[(size_t)k * stride + p];
        }
        sinew_volume_target(f, r, keep, lo, hi, t);
        for (int k = 0; k < 9; ++k) R[(size_t)k * stride + p] = t[k];
    }
}
