/* The pose-independent preparation of the `ps` backend, in the order of the paper: volumetric
 * skeleton (Sec. 3.1), skin shrinking (Sec. 3.2), tissue mesh (Sec. 3.3, 4.1), upsampling
 * data (Sec. 6). SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ps_internal.h"
#include "ps_param_rows.h"

const int ps_simd_values[4] = {SINEW_SIMD_AUTO, SINEW_SIMD_SCALAR, SINEW_SIMD_AVX2,
                                SINEW_SIMD_AVX512};

/* ---- rig checks (ps, fps and the fps-cuda plugin) ---- */

static sinew_result check_mesh(const sinew_host_api* host, const char* backend,
                               const sinew_mesh_view* mesh, const char* which,
                               bool need_normals)
{
    if (mesh->vertex_count == 0 || mesh->triangle_count == 0)
        return sinew_host_fail(host, SINEW_ERROR_EMPTY_MESH, "%s: the %s has %u vertices and %u "
                               "triangles", backend, which, mesh->vertex_count,
                               mesh->triangle_count);
    if (mesh->vertex_count > UINT32_MAX / 8u || mesh->triangle_count > UINT32_MAX / 8u)
        return sinew_host_fail(host, SINEW_ERROR_LIMIT, "%s: the %s is too large (%u vertices, "
                               "%u triangles)", backend, which, mesh->vertex_count,
                               mesh->triangle_count);
    if (!mesh->positions || !mesh->indices || (need_normals && !mesh->normals))
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: the %s lacks positions, normals or indices", backend, which);
    for (size_t k = 0; k < 3u * (size_t)mesh->triangle_count; ++k)
        if (mesh->indices[k] >= mesh->vertex_count)
            return sinew_host_fail(host, SINEW_ERROR_VERTEX_INDEX,
                                   "%s: the %s's triangle %zu names vertex %u of %u", backend,
                                   which, k / 3u, mesh->indices[k], mesh->vertex_count);
    for (size_t k = 0; k < 3u * (size_t)mesh->vertex_count; ++k)
        if (!isfinite(mesh->positions[k]) || (need_normals && !isfinite(mesh->normals[k])))
            return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                                   "%s: vertex %zu of the %s is not finite", backend, k / 3u,
                                   which);
    return SINEW_OK;
}

sinew_result ps_check_rig(const sinew_host_api* host, const sinew_rig_view* rig,
                          const char* backend)
{
    if (!rig)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s: rig is NULL", backend);
    if (rig->struct_size < sizeof(sinew_rig_view))
        return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE,
                               "%s: rig view struct_size %u is below %zu", backend,
                               rig->struct_size, sizeof(sinew_rig_view));
    if (rig->joint_count == 0)
        return sinew_host_fail(host, SINEW_ERROR_JOINT_COUNT, "%s: the rig has no joints",
                               backend);
    if (rig->joint_count > (1u << 20))
        return sinew_host_fail(host, SINEW_ERROR_LIMIT, "%s: %u joints are more than the %u "
                               "supported", backend, rig->joint_count, 1u << 20);
    if (!rig->parents || !rig->bind_matrices)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: the rig lacks parents or bind matrices", backend);
    for (uint32_t j = 0; j < rig->joint_count; ++j) {
        if (rig->parents[j] < -1 || rig->parents[j] >= (int32_t)rig->joint_count ||
            rig->parents[j] == (int32_t)j)
            return sinew_host_fail(host, SINEW_ERROR_JOINT_INDEX,
                                   "%s: joint %u has parent %d", backend, j, rig->parents[j]);
        for (int k = 0; k < 16; ++k)
            if (!isfinite(rig->bind_matrices[16u * j + k]))
                return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                                       "%s: the bind matrix of joint %u is not finite", backend,
                                       j);
    }
    sinew_result r = check_mesh(host, backend, &rig->render_mesh, "render mesh", true);
    if (r == SINEW_OK && rig->simulation_mesh.vertex_count > 0)
        r = check_mesh(host, backend, &rig->simulation_mesh, "simulation mesh", false);
    return r;
}


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
    sinew_host_free(host, m->prism_split);
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
    sinew_host_free(host, m->rest_skip_ptr);
    sinew_host_free(host, m->rest_skip);
    memset(m, 0, sizeof *m);
}

sinew_result ps_model_build(const sinew_host_api* host, const sinew_rig_view* rig,
                            ps_model* m)
{
    return ps_model_build_with(host, rig, NULL, m);
}

double ps_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void ps_build_log(const sinew_host_api* host, const char* backend, const ps_model* m)
{
    const double* t = m->build_seconds;
    double total = 0.0;
    for (int k = 0; k < PS_BUILD_PHASES; ++k) total += t[k];
    sinew_host_log(host, SINEW_LOG_INFO,
                   "%s profile: preparation %.1f ms: decimation %.1f, weld %.1f, skeleton %.1f, "
                   "shrinking %.1f, sliding %.1f, tissue %.1f, upsampling %.1f, collision "
                   "candidates %.1f, MLS weights %.1f, system %.1f", backend, 1e3 * total,
                   1e3 * t[PS_BUILD_DECIMATE], 1e3 * t[PS_BUILD_WELD], 1e3 * t[PS_BUILD_SKELETON],
                   1e3 * t[PS_BUILD_SHRINK], 1e3 * t[PS_BUILD_SLIDING], 1e3 * t[PS_BUILD_TISSUE],
                   1e3 * t[PS_BUILD_UPSAMPLE], 1e3 * t[PS_BUILD_CANDIDATES], 1e3 * t[PS_BUILD_MLS],
                   1e3 * t[PS_BUILD_SYSTEM]);
}

/* Runs one phase of the model's build when r is still OK, adding its time. */
#define PS_TIMED(phase, call)                                 \
    do {                                                      \
        if (r == SINEW_OK) {                                  \
            double t0_ = ps_seconds();                        \
            r = (call);                                       \
            m->build_seconds[phase] += ps_seconds() - t0_;    \
        }                                                     \
    } while (0)

sinew_result ps_model_build_with(const sinew_host_api* host, const sinew_rig_view* rig,
                                 const ps_params* params, ps_model* m)
{
    memset(m, 0, sizeof *m);
    sinew_result r = SINEW_OK;
    PS_TIMED(PS_BUILD_WELD, ps_model_weld(host, rig, m));
    PS_TIMED(PS_BUILD_SKELETON, ps_skeleton_build(host, rig, params ? params->bone_radii : NULL, m));
    PS_TIMED(PS_BUILD_SHRINK, ps_shrink(host, rig, m));
    PS_TIMED(PS_BUILD_SLIDING, ps_sliding_build(host, m));
    PS_TIMED(PS_BUILD_TISSUE, ps_tissue_build(host, m));
    PS_TIMED(PS_BUILD_UPSAMPLE, ps_upsample_build(host, rig, m));
    if (r != SINEW_OK) ps_model_free(host, m);
    return r;
}
