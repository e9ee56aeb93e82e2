/* The flesh a bending joint squeezes out, given back around it (ps_joint_volume.c).
 * SPDX-License-Identifier: MIT */
#ifndef SINEW_PS_JOINT_VOLUME_H
#define SINEW_PS_JOINT_VOLUME_H

#include "ps_internal.h"

typedef struct ps_joint_volume ps_joint_volume;

/* Skin vertices whose triangles keep less than this fraction of their rest area are not
 * pushed, and those between it and their rest area partly. */
#define PS_JOINT_VOLUME_AREA_GATE 0.8
/* A region counts as having lost volume beyond this fraction of its rest volume. */
#define PS_JOINT_VOLUME_SLACK 1e-3

/* The regions around the model's folding joints (those of its local collisions' candidate
 * pairs): the skin triangles within `reach` joint radii of the joint's rest centre, and their
 * rest volume. *out is NULL (and SINEW_OK) when no joint has a region. */
sinew_result ps_joint_volume_create(const sinew_host_api* host, const ps_model* m, double reach,
                                    ps_joint_volume** out);
void ps_joint_volume_destroy(const sinew_host_api* host, ps_joint_volume* jv);
uint32_t ps_joint_volume_region_count(const ps_joint_volume* jv);

/* Poses the regions' centres by `skinning` (16 floats per joint; NULL: rest), measures every
 * region at skin positions x (columns of N) and returns whether one has lost more than `slack`
 * of its rest volume. lost: NULL, or room for a region count of lost fractions. */
int ps_joint_volume_measure(ps_joint_volume* jv, const double* x, uint32_t N,
                            const float* skinning, double slack, double* lost);

/* Adds to t (columns of N, skin rows) the outward moves along the vertex normals that give back
 * `gain` of each region's lost volume to first order, measured at x about the centres of the
 * last measure; a region that has not lost volume adds nothing. */
void ps_joint_volume_targets(ps_joint_volume* jv, const double* x, uint32_t N, double gain,
                             double* t);

#endif
