/* The `lbs` backend: linear blend skinning of the render mesh's positions and normals on the
 * CPU, with SSE4.1, AVX2+FMA and AVX-512F kernels chosen at run time and vertex ranges spread
 * over the host's job system. Behaviour shared with `dqs` (parameters, output, state) is
 * documented in backends/common/skin_geometric.h.
 * SPDX-License-Identifier: MIT */
#include "builtin_backends.h"
#include "lbs_kernels.h"
#include "skin_geometric.h"

static void lbs_convert_pose(const float* skinning, uint32_t joint_count, float* out);

static const sinew_geo_ops lbs_ops = {
    "lbs",
    16u,
    lbs_convert_pose,
#if defined(SINEW_SKIN_X86)
    {sinew_lbs_kernel_scalar, sinew_lbs_kernel_sse41, sinew_lbs_kernel_avx2,
     sinew_lbs_kernel_avx512},
#else
    {sinew_lbs_kernel_scalar, NULL, NULL, NULL},
#endif
};

static sinew_result lbs_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                const sinew_param* params, uint32_t param_count, const void* next,
                                void** out_instance)
{
    return sinew_geo_prepare(&lbs_ops, host, rig, params, param_count, next, out_instance);
}

const sinew_backend_vtable sinew_backend_lbs = {
    (uint32_t)sizeof(sinew_backend_vtable),
    "lbs",
    0u,
    sinew_geo_probe,
    lbs_prepare,
    sinew_geo_set_pose,
    sinew_geo_step,
    sinew_geo_read_output,
    sinew_geo_bind_output,
    sinew_geo_get_state,
    sinew_geo_set_state,
    sinew_geo_destroy,
    NULL, /* bake: nothing pose-independent is worth baking */
    sinew_geo_param_info,
    SINEW_GEO_PARAM_COUNT,
};

/* Stores each skinning matrix row-major, rows 0-2 then a zero row (row 3 of an affine
 * matrix is 0 0 0 1 and is ignored). Rows let a kernel transform a point by multiplying the
 * blended matrix with the point broadcast to every row and summing within each row, which
 * for four vertices at once lands the results directly in structure-of-arrays form. */
static void lbs_convert_pose(const float* skinning, uint32_t joint_count, float* out)
{
    for (uint32_t j = 0; j < joint_count; ++j) {
        const float* m = skinning + 16u * j;
        float* o = out + 16u * j;
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 4; ++c) o[4 * r + c] = m[4 * c + r];
        for (int c = 0; c < 4; ++c) o[12 + c] = 0.0f;
    }
}
