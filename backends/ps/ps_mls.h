/* MLS upsampling of the simulated skin to the render mesh (fast-projective-skinning-2019
 * Sec. 5), shared by ps and fps: the choice of method, the weights from the model's skin, and
 * the bake blob that carries them beside the model. SPDX-License-Identifier: MIT */
#ifndef SINEW_PS_MLS_H
#define SINEW_PS_MLS_H

#include "ps_internal.h"
#include "sinew_mls.h"

/* How the render mesh follows the simulated skin (parameter `upsampling`). */
typedef enum ps_upsampling {
    PS_UPSAMPLING_AUTO = 0,   /* mls when a separate (given or decimated) simulation mesh is
                                 simulated, normal otherwise (then the render mesh is the
                                 simulated surface and normal displacement is exact) */
    PS_UPSAMPLING_NORMAL = 1, /* normal displacement (2018 Sec. 6) */
    PS_UPSAMPLING_MLS = 2     /* moving least squares (2019 Sec. 5) */
} ps_upsampling;

/* What AUTO means for this model. */
ps_upsampling ps_upsampling_resolve(ps_upsampling requested, const ps_model* model);

/* Bakes MLS weights from the model's simulated skin at rest (its welded vertices and kept
 * triangles) to the rig's render mesh. */
sinew_result ps_mls_bake(const sinew_host_api* host, const sinew_rig_view* rig,
                         const ps_model* model, sinew_mls_weights* out);

/* The weights `requested` (a ps_upsampling) needs for this model: those restored with it
 * (has_mls) kept, else computed now (timed into the model's build_seconds[PS_BUILD_MLS]) when
 * it resolves to mls; released when it does not. */
sinew_result ps_mls_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                            ps_model* model, int requested, bool has_mls,
                            sinew_mls_weights* mls);

/* The blob of a model with MLS weights: "FPSB", version, the size of the model's blob and
 * the blob itself (ps_bake.c), then a flag and, when set, the MLS weights' own checked blob
 * (sinew_mls.h). The model's blob alone is read as the model without weights. */
#define PS_BAKE_MLS_MAGIC 0x42535046u /* "FPSB" little-endian */
#define PS_BAKE_MLS_VERSION 1u

sinew_result ps_bake_write_mls(const sinew_host_api* host, const sinew_rig_view* rig,
                               const ps_model* model, const sinew_mls_weights* mls,
                               const sinew_bake_writer* writer);
/* Restores the model and, when the blob has them, the weights (*has_mls tells), both at once
 * over the job system; the weights' arrays may stay in `data` (sinew_mls_read_in_place): it
 * must outlive them, as a rig's blob does. */
sinew_result ps_bake_read_mls(const sinew_host_api* host, const sinew_rig_view* rig,
                              const void* data, size_t size, ps_model* model,
                              sinew_mls_weights* mls, bool* has_mls);

/* The render mesh from the simulated skin's float positions `skin_f` (3 per skin vertex, the
 * model's numbering), blended from `blend_from` (NULL: none) towards them by `blend_fraction`
 * first: its vertex normals into `skin_n`, then the render mesh by the MLS weights (2019 eq. 8)
 * when `mls`, else by normal displacement (2018 Sec. 6), into strided arrays (byte strides;
 * either may be NULL). */
void ps_mls_upsample_skin(const sinew_host_api* host, const ps_model* m,
                          const sinew_mls_weights* mls, const float* blend_from,
                          float blend_fraction, float* skin_f, float* skin_n,
                          const float* skinning, float* positions, size_t position_stride,
                          float* normals, size_t normal_stride);

/* The render mesh's velocities (3 floats per render vertex) from the skin's, `v` (N rows,
 * x/y/z columns, skin vertex i in row inv[i]; inv NULL: row i): by the MLS weights when `mls`
 * (through `skin_f`, 3 floats per skin vertex), else by the upsampling's barycentric
 * coordinates. */
void ps_mls_render_velocities(const sinew_host_api* host, const ps_model* m,
                              const sinew_mls_weights* mls, const double* v, uint32_t N,
                              const uint32_t* inv, float* skin_f, float* velocities);

/* Makes ps_sim_upsample and ps_sim_render_velocities use MLS weights (NULL: normal
 * displacement). The weights must outlive the simulation or the next call. */
void ps_sim_set_mls(ps_sim* sim, const sinew_mls_weights* mls);

#endif
