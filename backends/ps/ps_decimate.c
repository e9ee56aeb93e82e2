/* A decimated simulation mesh for a rig that brings only one, large render mesh (projective
 * skinning Sec. 6: simulate a coarser skin, upsample to the render mesh by normal
 * displacement), and the model of fps and pbd built on it (ps_model_build_decimated).
 * SPDX-License-Identifier: MIT */
#include <string.h>
#include <sinew/sinew_result_names.h>

#include "ps_internal.h"
#include "sinew_decimate.h"

sinew_result ps_decimate_view(const sinew_host_api* host, const sinew_rig_view* rig,
                              const ps_params* params, sinew_rig_view* view,
                              sinew_decimated_mesh* mesh)
{
    *view = *rig;
    memset(mesh, 0, sizeof *mesh);
    uint32_t count = rig->render_mesh.vertex_count;
    if (rig->simulation_mesh.vertex_count > 0 || params->decimate_above == 0 ||
        count <= params->decimate_above || params->simulation_vertices >= count)
        return SINEW_OK;
#if defined(SINEW_HAVE_MESHOPTIMIZER)
    sinew_result r = sinew_decimate_mesh(host, &rig->render_mesh, params->simulation_vertices, mesh);
    if (r != SINEW_OK)
        return sinew_host_fail(host, r, "ps: decimating the render mesh of %u vertices to about "
                               "%u failed (%s)", count, params->simulation_vertices,
                               sinew_result_name(r));
    sinew_mesh_view* sim = &view->simulation_mesh;
    memset(sim, 0, sizeof *sim);
    sim->vertex_count = mesh->vertex_count;
    sim->triangle_count = mesh->triangle_count;
    sim->positions = mesh->positions;
    sim->indices = mesh->indices;
    sinew_host_log(host, SINEW_LOG_INFO,
                   "ps: the render mesh has %u vertices (above decimate_above=%u): simulating a "
                   "decimated mesh of %u vertices and %u triangles (error %.3g of the extent), "
                   "upsampled to it", count, params->decimate_above, mesh->vertex_count,
                   mesh->triangle_count, (double)mesh->relative_error);
#else
    sinew_host_log(host, SINEW_LOG_WARNING,
                   "ps: the render mesh has %u vertices (above decimate_above=%u), but this "
                   "build has no meshoptimizer to decimate it: simulating the full mesh",
                   count, params->decimate_above);
#endif
    return SINEW_OK;
}

sinew_result ps_model_build_decimated(const sinew_host_api* host, const sinew_rig_view* rig,
                                      const ps_params* params, double candidate_reach,
                                      ps_model* m)
{
    sinew_rig_view view;
    sinew_decimated_mesh decimated;
    double t0 = ps_seconds();
    sinew_result r = ps_decimate_view(host, rig, params, &view, &decimated);
    double decimation = ps_seconds() - t0;
    if (r != SINEW_OK) return r;
    r = ps_model_build_with(host, &view, params, m);
    if (r == SINEW_OK) {
        m->decimated_triangles = decimated.triangle_count;
        m->build_seconds[PS_BUILD_DECIMATE] = decimation;
    }
    if (r == SINEW_OK && candidate_reach > 0.0) {
        double tc = ps_seconds();
        r = ps_collide_candidates_near(host, &view, m, params, candidate_reach);
        m->build_seconds[PS_BUILD_CANDIDATES] = ps_seconds() - tc;
    }
    sinew_decimated_free(host, &decimated);
    return r;
}

void ps_model_params_of(ps_params* out, int sliding, uint32_t decimate_above,
                        uint32_t simulation_vertices, const char* bone_radii)
{
    memset(out, 0, sizeof *out);
    out->sliding = sliding;
    out->decimate_above = decimate_above;
    out->simulation_vertices = simulation_vertices;
    memcpy(out->bone_radii, bone_radii, sizeof out->bone_radii);
}
