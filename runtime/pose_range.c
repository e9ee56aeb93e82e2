/* The range of a pose: how far a skinning transform may scale and move the rig before it is
 * refused (SINEW_POSE_MAX_LINEAR and SINEW_POSE_MAX_REACH in sinew.h).
 * SPDX-License-Identifier: MIT
 *
 * Finite but huge transforms (a joint scaled by 1e38) would make lbs write infinities and
 * dqs keep its rest shape, each reporting success; physics backends would carry the state
 * into later frames. One check here, once per pose, spares every backend from guarding its
 * arithmetic. */
#include "internal.h"

#include <math.h>

static void grow_box(const float* p, float lo[3], float hi[3])
{
    for (int i = 0; i < 3; ++i) {
        if (p[i] < lo[i]) lo[i] = p[i];
        if (p[i] > hi[i]) hi[i] = p[i];
    }
}

float sinew_rig_pose_size(const sinew_rig_view* v)
{
    /* The origin is in the box, so a rig modelled away from it may still turn about it. */
    float lo[3] = { 0.0f, 0.0f, 0.0f }, hi[3] = { 0.0f, 0.0f, 0.0f };
    for (uint32_t i = 0; i < v->render_mesh.vertex_count; ++i)
        grow_box(v->render_mesh.positions + 3u * i, lo, hi);
    for (uint32_t i = 0; i < v->simulation_mesh.vertex_count; ++i)
        grow_box(v->simulation_mesh.positions + 3u * i, lo, hi);
    for (uint32_t j = 0; j < v->joint_count; ++j)
        grow_box(v->bind_matrices + 16u * j + 12u, lo, hi);
    double d = 0.0;
    for (int i = 0; i < 3; ++i) d += ((double)hi[i] - lo[i]) * ((double)hi[i] - lo[i]);
    /* A rig collapsed onto the origin has no size to scale by: one unit then. */
    return d > 0.0 ? (float)sqrt(d) : 1.0f;
}

/* The largest magnitude in the 3x3 linear part of a column-major 4x4. */
static float linear_extent(const float* m)
{
    float largest = 0.0f;
    for (int c = 0; c < 3; ++c) {
        for (int r = 0; r < 3; ++r) {
            float a = fabsf(m[4 * c + r]);
            if (a > largest) largest = a;
        }
    }
    return largest;
}

sinew_result sinew_pose_check_range(const sinew_host_api* host, const sinew_rig_data* rig,
                                    const float* skinning, const char* fn)
{
    const sinew_rig_view* v = &rig->view;
    const double reach = (double)SINEW_POSE_MAX_REACH * rig->pose_size;
    for (uint32_t j = 0; j < v->joint_count; ++j) {
        const float* m = skinning + 16u * j;
        if (!sinew_matrix_finite(m, 1))
            return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                                   "%s: the skinning transform of joint %u (%s) overflowed", fn,
                                   j, v->names[j]);
        float linear = linear_extent(m);
        if (linear > SINEW_POSE_MAX_LINEAR)
            return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                                   "%s: joint %u (%s) scales the rig by up to %g, beyond "
                                   "SINEW_POSE_MAX_LINEAR (%g)", fn, j, v->names[j],
                                   (double)linear, (double)SINEW_POSE_MAX_LINEAR);
        double t = sqrt((double)m[12] * m[12] + (double)m[13] * m[13] + (double)m[14] * m[14]);
        if (t > reach)
            return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                                   "%s: joint %u (%s) moves the rig by %g, beyond "
                                   "SINEW_POSE_MAX_REACH (%g) times its size %g", fn, j,
                                   v->names[j], t, (double)SINEW_POSE_MAX_REACH,
                                   (double)rig->pose_size);
    }
    return SINEW_OK;
}
