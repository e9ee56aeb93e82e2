/* The scalar reference kernel of dual quaternion skinning (and the only one off x86).
 * SPDX-License-Identifier: MIT */
#include <math.h>

#include "dqs_kernels.h"

/* a x b, each component in the order the SIMD kernels compute it. */
SINEW_FORCE_INLINE void dqs_cross(const float a[3], const float b[3], float out[3])
{
    float x = a[1] * b[2] - a[2] * b[1];
    float y = a[2] * b[0] - a[0] * b[2];
    float z = a[0] * b[1] - a[1] * b[0];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

/* x + 2 r_v x (r_v x x + r_w x): x rotated by the unit quaternion r. */
SINEW_FORCE_INLINE void dqs_rotate(const float r[4], const float x[3], float out[3])
{
    float c[3], u[3], d[3];
    dqs_cross(r, x, c);
    for (int i = 0; i < 3; ++i) u[i] = c[i] + r[3] * x[i];
    dqs_cross(r, u, d);
    for (int i = 0; i < 3; ++i) out[i] = x[i] + 2.0f * d[i];
}

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
            const float* q = transforms + offsets[k];
            float d = (q[0] * q0[0] + q[1] * q0[1]) + (q[2] * q0[2] + q[3] * q0[3]);
            float w = d < 0.0f ? -weights[k] : weights[k];
            for (int i = 0; i < 8; ++i) b[i] += w * q[i];
        }
        /* |b_r| >= w_0 > 0: every term's real part points into q0's hemisphere. */
        float inv = 1.0f / sqrtf((b[0] * b[0] + b[1] * b[1]) + (b[2] * b[2] + b[3] * b[3]));
        float r[4], e[4];
        for (int i = 0; i < 4; ++i) {
            r[i] = b[i] * inv;
            e[i] = b[4 + i] * inv;
        }
        const float* rest = job->rest + 8u * v;
        if (write_positions) {
            float c[3], t[3], p[3];
            dqs_cross(r, e, c);
            for (int i = 0; i < 3; ++i) {
                float u = c[i] + r[3] * e[i];
                t[i] = 2.0f * (u - e[3] * r[i]);
            }
            dqs_rotate(r, rest, p);
            float* out = sinew_skin_at(job->positions, job->position_stride, v);
            for (int i = 0; i < 3; ++i) out[i] = p[i] + t[i];
        }
        if (write_normals) {
            float n[3];
            dqs_rotate(r, rest + 4, n);
            float len2 = (n[0] * n[0] + n[1] * n[1]) + n[2] * n[2];
            float s = len2 > SINEW_SKIN_MIN_NORMAL_SQ ? 1.0f / sqrtf(len2) : 0.0f;
            float* out = sinew_skin_at(job->normals, job->normal_stride, v);
            for (int i = 0; i < 3; ++i) out[i] = n[i] * s;
        }
    }
}

void sinew_dqs_kernel_scalar(const sinew_skin_job* job, uint32_t begin, uint32_t end)
{
    SINEW_SKIN_DISPATCH(dqs_scalar_range, job, begin, end);
}
