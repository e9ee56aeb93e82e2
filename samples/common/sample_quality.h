/* The measurement behind sinew-quality, as a library call: pose a character with one backend,
 * step it until it settles, and measure the render mesh. Tests call sample_quality_run
 * directly, so they assert on the very figures the tool prints. SPDX-License-Identifier: MIT */
#ifndef SINEW_SAMPLE_QUALITY_H
#define SINEW_SAMPLE_QUALITY_H

#include <stdint.h>
#include <stdio.h>

#include <sinew/sinew.h>

#include "sample_character.h"

typedef enum sample_pose_kind {
    SAMPLE_POSE_BEND = 0,       /* rotate the joint about its bend axis */
    SAMPLE_POSE_TWIST = 1,      /* rotate the joint about the axis to its first child */
    SAMPLE_POSE_ANIM = 2,       /* animation `animation` at step `frame` */
    SAMPLE_POSE_AXIS = 3        /* rotate the joint about a model-space axis through it */
} sample_pose_kind;

typedef struct sample_pose_spec {
    sample_pose_kind kind;
    float degrees;              /* BEND, TWIST, AXIS */
    float axis[3];              /* AXIS: unit axis in model space */
    uint32_t animation;         /* ANIM */
    uint32_t frame;             /* ANIM: 60 steps per second */
} sample_pose_spec;

/* Parses "bend:DEG", "twist:DEG", "anim:K:FRAME" or "axis:X:Y:Z:DEG" (a rotation by DEG about
 * the model-space direction (X, Y, Z), normalised, through the joint: poses such as an arm
 * swung across the body, which neither the bend nor the twist axis reaches). 0 (after printing
 * a line) when malformed. */
int sample_pose_parse(const char* text, sample_pose_spec* out);

/* Steps of the ramp from the rest pose to a static target, and the default step budget to
 * settle afterwards. */
enum { SAMPLE_RAMP_STEPS = 30, SAMPLE_SETTLE_STEPS = 600 };
/* Settled: no vertex moved more than this fraction of the rest bounding-box diagonal in one
 * step. */
#define SAMPLE_SETTLE_TOLERANCE 1e-5

typedef struct sample_quality_desc {
    const sample_character* character;  /* required */
    const char* backend;                /* NULL: "lbs" */
    const sinew_param* params;          /* backend parameters (--set) */
    uint32_t param_count;
    sample_pose_spec pose;
    const char* joint;                  /* NULL: sample_default_joint; ignored for ANIM */
    uint32_t settle_steps;              /* 0: SAMPLE_SETTLE_STEPS */
    uint32_t thread_count;              /* world threads, 0: one per core */
    const sinew_logger* logger;         /* NULL: stderr */
    /* Optional: run in this world (with its plugins and registered backends) instead of a
     * fresh one; the run adds its rig and skin and removes them again. thread_count and
     * logger are then unused. */
    sinew_world* world;
} sample_quality_desc;

typedef struct sample_quality_report {
    uint32_t vertices;                  /* render mesh */
    uint32_t triangles;
    int32_t joint;                      /* posed joint, -1 for ANIM */
    const char* joint_name;             /* points into the character; NULL for ANIM */
    uint32_t steps;                     /* world updates run */
    int settled;                        /* static poses: settled within the budget */
    int closed;                         /* welded mesh bounds a volume */
    double rest_volume;                 /* NaN when not closed */
    double volume;
    double volume_ratio;                /* volume / rest_volume; NaN when not closed */
    uint32_t self_intersections;
    uint32_t rest_self_intersections;   /* the same count on the rest mesh, for reference */
    double min_edge_stretch;
    double max_edge_stretch;
    uint32_t nonfinite_vertices;
} sample_quality_report;

/* Creates a world, the rig and one skin, poses and steps it, measures the output, and tears
 * everything down. Static poses ramp from rest over SAMPLE_RAMP_STEPS steps and then step
 * until settled; ANIM steps every frame from 0 to `frame`. Errors: INVALID_ARGUMENT (bad
 * desc, unknown joint, animation out of range) and whatever the runtime returns; each is
 * reported in one line. */
sinew_result sample_quality_run(const sample_quality_desc* desc, sample_quality_report* out);

/* The report as the tool prints it: JSON, or one human-readable line. */
void sample_quality_print_json(FILE* out, const sample_quality_desc* desc, const char* pose_text,
                               const sample_quality_report* report);
void sample_quality_print_text(FILE* out, const sample_quality_desc* desc, const char* pose_text,
                               const sample_quality_report* report);

#endif
