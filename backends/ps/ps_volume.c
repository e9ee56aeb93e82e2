/* The volume term of the tissue energy (Bouaziz et al. 2014, Sec. 5; volume3.h), shared by ps
 * and fps (and fps-cuda through fps): parameters volume_weight and volume_range; and the
 * defaults of the joints' volume (ps_joint_volume.c): joint_volume and joint_volume_reach.
 * SPDX-License-Identifier: MIT */
#include "ps_internal.h"

void ps_volume_params_default(ps_volume_params* p)
{
    p->weight = PS_VOLUME_WEIGHT;
    p->range = PS_VOLUME_RANGE;
    p->joint = PS_JOINT_VOLUME;
    p->joint_reach = PS_JOINT_VOLUME_REACH;
}

void ps_volume_blend(const ps_volume_params* p, double strain_weight, float* keep, float* lo,
                     float* hi)
{
    *keep = p->weight > 0.0 ? (float)(strain_weight / (strain_weight + p->weight)) : 1.0f;
    *lo = (float)(1.0 - p->range);
    *hi = (float)(1.0 + p->range);
}
