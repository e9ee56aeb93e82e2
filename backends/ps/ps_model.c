/* The pose-independent preparation of the `ps` backend, in the order of the paper: volumetric
 * skeleton (Sec. 3.1), skin shrinking (Sec. 3.2), tissue mesh (Sec. 3.3, 4.1), upsampling
 * data (Sec. 6). SPDX-License-Identifier: MIT */
#include <string.h>

#include "ps_internal.h"

void ps_model_free(const sinew_host_api* host, ps_model* m)
{
    if (!m) return;
    sinew_host_free(host, m->bones);
    sinew_host_free(host, m->joint_radius);
    sinew_host_free(host, m->joint_rep);
    sinew_host_free(host, m->weld);
    sinew_host_free(host, m->triangles);
    sinew_host_free(host, m->rest);
    sinew_host_free(host, m->vertex_bone);
    sinew_host_free(host, m->tets);
    sinew_host_free(host, m->tet_A);
    sinew_host_free(host, m->tet_volume);
    sinew_host_free(host, m->tet_excluded);
    sinew_host_free(host, m->upsample);
    sinew_host_free(host, m->restore);
    sinew_host_free(host, m->vertex_tri_offsets);
    sinew_host_free(host, m->vertex_tris);
    sinew_host_free(host, m->slide_anchors);
    sinew_host_free(host, m->slide_vertices);
    sinew_host_free(host, m->collision_pairs);
    memset(m, 0, sizeof *m);
}

sinew_result ps_model_build(const sinew_host_api* host, const sinew_rig_view* rig,
                            ps_model* m)
{
    return ps_model_build_with(host, rig, NULL, m);
}

sinew_result ps_model_build_with(const sinew_host_api* host, const sinew_rig_view* rig,
                                 const ps_params* params, ps_model* m)
{
    memset(m, 0, sizeof *m);
    sinew_result r = ps_model_weld(host, rig, m);
    if (r == SINEW_OK) r = ps_skeleton_build(host, rig, params ? params->bone_radii : NULL, m);
    if (r == SINEW_OK) r = ps_shrink(host, m);
    if (r == SINEW_OK) r = ps_sliding_build(host, m);
    if (r == SINEW_OK) r = ps_tissue_build(host, m);
    if (r == SINEW_OK) r = ps_upsample_build(host, rig, m);
    if (r != SINEW_OK) ps_model_free(host, m);
    return r;
}
