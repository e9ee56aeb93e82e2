/* The tissue model of pbd and vk-pbd: ps's (backends/ps, sinew_tissue), restored from baked
 * data or built from the rig with the folding joints' contact candidates.
 * SPDX-License-Identifier: MIT */
#include <string.h>

#include "pbd_internal.h"

/* The reach of the folding joints' contacts in joint radii (ps_collide_candidates_near): ps's,
 * whose skin projection pbd shares. fps takes 3.3 to keep its limb capsules apart, which pbd
 * lacks; at 3.3 the cylinder's bend:150 kept 58 pairs (README.md, "Collisions"). */
#define PBD_JOINT_REACH 8.0

static bool restorable(const sinew_rig_view* rig, const char* backend)
{
    const char* name = rig->baked_backend;
    return name && rig->baked_data &&
           (strcmp(name, PBD_NAME) == 0 || strcmp(name, PS_NAME) == 0 ||
            strcmp(name, backend) == 0);
}

sinew_result pbd_model_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                               const pbd_params* p, const char* backend, ps_model* m,
                               bool* baked)
{
    *baked = restorable(rig, backend);
    if (*baked) return ps_bake_read(host, rig, rig->baked_data, rig->baked_size, m);
    ps_params pp;
    pbd_model_params(p, &pp);
    return ps_model_build_decimated(host, rig, &pp, p->collisions ? PBD_JOINT_REACH : 0.0, m);
}
