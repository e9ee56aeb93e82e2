/* MLS upsampling in fps's simulation (fast-projective-skinning-2019 Sec. 5); the weights and
 * their bake blob are the tissue model's (ps_mls.h). SPDX-License-Identifier: MIT */
#ifndef SINEW_FPS_MLS_H
#define SINEW_FPS_MLS_H

#include "ps_mls.h"

/* Makes fps_sim_upsample and fps_sim_render_velocities use MLS weights (NULL: normal
 * displacement). The weights must outlive the simulation or the next call. */
typedef struct fps_sim fps_sim;
void fps_sim_set_mls(fps_sim* sim, const sinew_mls_weights* mls);
/* The weights the simulation upsamples with (NULL: normal displacement), i.e. the method fps
 * resolved for this instance: the fps-cuda plugin, which prepares through fps, upsamples on
 * the device with the same weights. */
const sinew_mls_weights* fps_sim_mls(const fps_sim* sim);

#endif
