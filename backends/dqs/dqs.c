/* The `dqs` backend: dual quaternion skinning of the render mesh's positions and normals on
 * the CPU, with SSE4.1, AVX2+FMA and AVX-512F kernels chosen at run time and vertex ranges
 * spread over the host's job system. Each skinning matrix becomes a unit dual quaternion once
 * per joint in set_pose; matrices with scale or shear lose them there (dual_quat.h says how).
 * Behaviour shared with `lbs` (parameters, output, state) is documented in
 * backends/common/skin_geometric.h.
 * SPDX-License-Identifier: MIT */
#include "builtin_backends.h"
#include "dqs_kernels.h"
#include "dual_quat.h"
#include "skin_geometric.h"

static void dqs_convert_pose(const float* skinning, uint32_t joint_count, float* out);

static const sinew_geo_ops dqs_ops = {
    "dqs",
    8u,
    dqs_convert_pose,
#if defined(SINEW_SKIN_X86)
    {sinew_dqs_kernel_scalar, sinew_dqs_kernel_sse41, sinew_dqs_kernel_avx2,
     sinew_dqs_kernel_avx512},
#else
    {sinew_dqs_kernel_scalar, NULL, NULL, NULL},
#endif
};

static sinew_result dqs_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                const sinew_param* params, uint32_t param_count, const void* next,
                                void** out_instance)
{
    return sinew_geo_prepare(&dqs_ops, host, rig, params, param_count, next, out_instance);
}

const sinew_backend_vtable sinew_backend_dqs = {
    (uint32_t)sizeof(sinew_backend_vtable),
    "dqs",
    0u,
    sinew_geo_probe,
    dqs_prepare,
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

static void dqs_convert_pose(const float* skinning, uint32_t joint_count, float* out)
{
    for (uint32_t j = 0; j < joint_count; ++j)
        sinew_dual_quat_from_matrix(skinning + 16u * j, out + 8u * j);
}
