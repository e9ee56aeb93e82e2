/* The scalar reference kernel of linear blend skinning (and the only one off x86).
 * SPDX-License-Identifier: MIT */
#include <math.h>

#include "lbs_kernels.h"

SINEW_FORCE_INLINE void lbs_scalar_range(const sinew_skin_job* job_in, uint32_t begin, uint32_t end,
                                         uint32_t width, bool write_positions, bool write_normals)
{
    /* A local copy: the output stores cannot alias it, so its fields stay in registers. */
    const sinew_skin_job job_copy = *job_in;
    const sinew_skin_job* job = &job_copy;
    const float* transforms = job->transforms;
    for (uint32_t v = begin; v < end; ++v) {
        const uint32_t* offsets = job->offsets + (size_t)v * width;
        const float* weights = job->weights + (size_t)v * width;
        /* The blended 3x4 matrix, row-major: m[4r + c]. */
        float m[12];
        const float* s = transforms + offsets[0];
        for (int i = 0; i < 12; ++i) m[i] = weights[0] * s[i];
        for (uint32_t k = 1; k < width; ++k) {
            s = transforms + offsets[k];
            float w = weights[k];
            for (int i = 0; i < 12; ++i) m[i] += w * s[i];
        }
        const float* rest = job->rest + 8u * v;
        if (write_positions) {
            float* out = sinew_skin_at(job->positions, job->position_stride, v);
            const float* p = rest;
            for (int r = 0; r < 3; ++r) {
                const float* row = m + 4 * r;
                out[r] = (row[0] * p[0] + row[1] * p[1]) + (row[2] * p[2] + row[3]);
            }
        }
        if (write_normals) {
            float* out = sinew_skin_at(job->normals, job->normal_stride, v);
            const float* nr = rest + 4;
            float n[3];
            for (int r = 0; r < 3; ++r) {
                const float* row = m + 4 * r;
                n[r] = (row[0] * nr[0] + row[1] * nr[1]) + row[2] * nr[2];
            }
            float len2 = (n[0] * n[0] + n[1] * n[1]) + n[2] * n[2];
            float inv = len2 > SINEW_SKIN_MIN_NORMAL_SQ ? 1.0f / sqrtf(len2) : 0.0f;
            for (int r = 0; r < 3; ++r) out[r] = n[r] * inv;
        }
    }
}

void sinew_lbs_kernel_scalar(const sinew_skin_job* job, uint32_t begin, uint32_t end)
{
    SINEW_SKIN_DISPATCH(lbs_scalar_range, job, begin, end);
}
