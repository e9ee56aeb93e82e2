/* MLS upsampling for fps (fast-projective-skinning-2019 Sec. 5): the weights from the
 * simulated skin to the render mesh, and the fps bake blob that carries them beside ps's model.
 * SPDX-License-Identifier: MIT */
#ifndef SINEW_FPS_MLS_H
#define SINEW_FPS_MLS_H

#include "ps_internal.h"
#include "sinew_mls.h"

/* How the render mesh follows the simulated skin (parameter `upsampling`). */
typedef enum fps_upsampling {
    FPS_UPSAMPLING_AUTO = 0,   /* mls when a separate (given or decimated) simulation mesh is
                                  simulated, normal otherwise (then the render mesh is the
                                  simulated surface and normal displacement is exact) */
    FPS_UPSAMPLING_NORMAL = 1, /* ps's normal displacement (2018 Sec. 6) */
    FPS_UPSAMPLING_MLS = 2     /* moving least squares (2019 Sec. 5) */
} fps_upsampling;

/* Parses "auto", "normal" or "mls"; false for anything else. */
bool fps_upsampling_parse(const char* text, fps_upsampling* out);
/* What AUTO means for this model. */
fps_upsampling fps_upsampling_resolve(fps_upsampling requested, const ps_model* model);

/* Bakes MLS weights from the model's simulated skin at rest (its welded vertices and kept
 * triangles) to the rig's render mesh. */
sinew_result fps_mls_bake(const sinew_host_api* host, const sinew_rig_view* rig,
                          const ps_model* model, sinew_mls_weights* out);

/* The fps bake blob: "FPSB", version, the size of ps's model blob and the blob itself
 * (ps_bake.c), then a flag and, when set, the MLS weights' own checked blob (sinew_mls.h).
 * A rig baked for "ps", or an older fps blob that is ps's blob alone, is read as the model
 * without weights. */
#define FPS_BAKE_MAGIC 0x42535046u /* "FPSB" little-endian */
#define FPS_BAKE_VERSION 1u

sinew_result fps_bake_write(const sinew_host_api* host, const sinew_rig_view* rig,
                            const ps_model* model, const sinew_mls_weights* mls,
                            const sinew_bake_writer* writer);
/* Restores the model and, when the blob has them, the weights (*has_mls tells). */
sinew_result fps_bake_read(const sinew_host_api* host, const sinew_rig_view* rig,
                           const void* data, size_t size, ps_model* model,
                           sinew_mls_weights* mls, bool* has_mls);

/* Makes fps_sim_upsample and fps_sim_render_velocities use MLS weights (NULL: normal
 * displacement). The weights must outlive the simulation or the next call. */
typedef struct fps_sim fps_sim;
void fps_sim_set_mls(fps_sim* sim, const sinew_mls_weights* mls);
/* The weights the simulation upsamples with (NULL: normal displacement), i.e. the method fps
 * resolved for this instance: the fps-cuda plugin, which prepares through fps, upsamples on
 * the device with the same weights. */
const sinew_mls_weights* fps_sim_mls(const fps_sim* sim);

#endif
