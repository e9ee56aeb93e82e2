/* The scalar reference kernel of dual quaternion skinning (and the only one off x86).
 * SPDX-License-Identifier: MIT */
#include <math.h>

#include "dqs_kernels.h"

SINEW_FORCE_INLINE void dqs_scalar_range(const sinew_skin_job* job_in, uint32_t begin, uint32_t end,
                                         uint32_t width, bool write_positions, bool write_normals)
{
    /* A local copy: the output stores cannot alias it, so its fields stay in registers. */
    const sinew_skin_job job_copy = *job_in;
    const sinew_skin_job* job = &job_copy;
    const float* transforms = job->transforms;
    for (uint32_t v = begin; v < end; ++v) {
        const uint32_t* offsets = job->offsets + (size_t)v * width;
        const float* weights = job->weights + (size_t)v * width;
        const float* q0 = transforms + offsets[0];
        float b[8];
        for (int i = 0; i < 8; ++i) b[i] = weights[0] * q0[i];
        for (uint32_t k = 1; k < width; ++k) {
            if (weights[k] == 0.0f) continue; /* padding: leaves the blend as it is */
            const float* q = transforms + offsets[k];
            float d = (q[0] * q0[0] + q[1] * q0[1]) + (q[2] * q0[2] + q[3] * q0[3]);
            float w = d < 0.0f ? -weights[k] : weights[k];
            for (int i = 0; i < 8; ++i) b[i] += w * q[i];
        }
        /* |b_r| >= w_0 > 0: every term's real part points into q0's hemisphere. */
        float s = 2.0f / ((b[0] * b[0] + b[1] * b[1]) + (b[2] * b[2] + b[3] * b[3]));
        float x = b[0], y = b[1], z = b[2], w = b[3];
        float x2 = x * s, y2 = y * s, z2 = z * s, w2 = w * s;
        float m[3][3] = {{1.0f - (y * y2 + z * z2), x * y2 - w * z2, x * z2 + w * y2},
                         {x * y2 + w * z2, 1.0f - (x * x2 + z * z2), y * z2 - w * x2},
                         {x * z2 - w * y2, y * z2 + w * x2, 1.0f - (x * x2 + y * y2)}};
        const float* rest = job->rest + 8u * v;
        if (write_positions) {
            const float* e = b + 4;
            float t[3] = {(y2 * e[2] - z2 * e[1]) + (w2 * e[0] - e[3] * x2),
                          (z2 * e[0] - x2 * e[2]) + (w2 * e[1] - e[3] * y2),
                          (x2 * e[1] - y2 * e[0]) + (w2 * e[2] - e[3] * z2)};
            float* out = sinew_skin_at(job->positions, job->position_stride, v);
            for (int i = 0; i < 3; ++i)
                out[i] = (m[i][0] * rest[0] + m[i][1] * rest[1]) + (m[i][2] * rest[2] + t[i]);
        }
        if (write_normals) {
            const float* nr = rest + 4;
            float n[3];
            for (int i = 0; i < 3; ++i)
                n[i] = (m[i][0] * nr[0] + m[i][1] * nr[1]) + m[i][2] * nr[2];
            float len2 = (n[0] * n[0] + n[1] * n[1]) + n[2] * n[2];
            float inv = len2 > SINEW_SKIN_MIN_NORMAL_SQ ? 1.0f / sqrtf(len2) : 0.0f;
            float* out = sinew_skin_at(job->normals, job->normal_stride, v);
            for (int i = 0; i < 3; ++i) out[i] = n[i] * inv;
        }
    }
}

void sinew_dqs_kernel_scalar(const sinew_skin_job* job, uint32_t begin, uint32_t end)
{
    SINEW_SKIN_DISPATCH(dqs_scalar_range, job, begin, end);
}
