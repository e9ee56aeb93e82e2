/* Local volume change per vertex, and the diverging colour map that shows it (sinew-demo's
 * --color volume). SPDX-License-Identifier: MIT
 *
 * The measure: every welded vertex v has a reference point q on the skeleton, the closest
 * point at rest on a bone segment of one of the joints that move it (an influence of at least
 * SAMPLE_VERTEX_VOLUME_MIN_WEIGHT; a segment runs from that joint to one of its children, or
 * is the joint alone for a leaf). q moves rigidly with that joint (its skinning transform,
 * model times inverse bind), so it stays on the posed skeleton. v's cone is the sum over the
 * welded triangles around v of the signed tetrahedra (q, a, b, c): the volume between the
 * bone and v's one-ring. The ratio is the posed cone over the rest cone: 1 where the flesh
 * around v moved rigidly, below 1 where it was squashed towards the bone (a collapsing
 * crease), above 1 where it swelled. A vertex whose rest cone is nearly flat (its mean height
 * over the ring below a quarter of |v - q|: the reference lies almost in the ring's plane)
 * has no ratio (NaN), as has one without a reference.
 */
#ifndef SINEW_SAMPLE_VERTEX_VOLUME_H
#define SINEW_SAMPLE_VERTEX_VOLUME_H

#include <stdint.h>

#include <sinew/sinew.h>

#include "sample_metrics.h"

#define SAMPLE_VERTEX_VOLUME_MIN_WEIGHT 0.2f

typedef struct sample_vertex_volume {
    const sample_topology* topology;    /* not owned: must outlive this */
    uint32_t joint_count;
    int32_t* carrier;       /* per vertex (representatives only): the joint that moves q, -1
                               when the vertex has no ratio */
    float* reference;       /* 3 per vertex: q at rest */
    double* rest_volume;    /* per vertex: the rest cone */
    float* inverse_bind;    /* 16 per joint */
    double* posed_volume;   /* per vertex, scratch of sample_vertex_volume_ratios */
    float* skinning;        /* 16 per joint, scratch */
} sample_vertex_volume;

/* Prepares the measure for a mesh at rest (`rest`, the topology's vertex count of xyz) with
 * its skeleton and its weights in compressed rows (sinew_rig_get_weights). Errors:
 * INVALID_ARGUMENT (NULL, a singular bind matrix), OUT_OF_MEMORY; one line each. On failure
 * *out is zeroed. */
sinew_result sample_vertex_volume_build(const sample_topology* topology, const float* rest,
                                        const sinew_skeleton_desc* skeleton,
                                        const uint32_t* offsets, const uint32_t* joints,
                                        const float* weights, sample_vertex_volume* out);
void sample_vertex_volume_free(sample_vertex_volume* volume);

/* The ratio of every vertex of the mesh (welded copies share their representative's) for the
 * deformed `positions` under the model-space pose `model` (16 floats per joint), into
 * out_ratios (vertex_count floats; NaN where there is none). Returns how many vertices have
 * a ratio. */
uint32_t sample_vertex_volume_ratios(sample_vertex_volume* volume, const float* positions,
                                     const float* model, float* out_ratios);

/* The diverging colour map, in linear RGB for sinew_render: ratio 1 (and NaN) is the neutral
 * near-white SAMPLE_VOLUME_NEUTRAL, ratios towards 1 / range turn blue (volume lost) and
 * towards `range` red (gained), evenly in log(ratio), clamped beyond (range > 1). */
void sample_volume_color(float ratio, float range, float out_rgb[3]);
extern const float SAMPLE_VOLUME_NEUTRAL[3];

/* The same colour as 8-bit sRGB (the gamma the renderer writes), for a colour bar drawn into
 * the image beside the rendered skin. */
void sample_volume_color_srgb(float ratio, float range, uint8_t out_rgb[3]);

#endif
