/* The measurement behind sinew-quality, as a library call: pose a character with one backend,
 * step it until it settles, and measure the render mesh. Tests call sample_quality_run
 * directly, so they assert on the very figures the tool prints. SPDX-License-Identifier: MIT */
#ifndef SINEW_SAMPLE_QUALITY_H
#define SINEW_SAMPLE_QUALITY_H

#include <stdint.h>
#include <stdio.h>

#include <sinew/sinew.h>

#include "sample_character.h"
#include "sample_metrics.h"
#include "sample_tissue.h"

typedef enum sample_pose_kind {
    SAMPLE_POSE_BEND = 0,       /* rotate the joint about its bend axis */
    SAMPLE_POSE_TWIST = 1,      /* rotate the joint about the axis to its first child */
    SAMPLE_POSE_ANIM = 2,       /* animation `animation` at frame `frame` (frame / 60 s) */
    SAMPLE_POSE_AXIS = 3        /* rotate the joint about a model-space axis through it */
} sample_pose_kind;

typedef struct sample_pose_spec {
    sample_pose_kind kind;
    float degrees;              /* BEND, TWIST, AXIS */
    float axis[3];              /* AXIS: unit axis in model space */
    uint32_t animation;         /* ANIM */
    uint32_t frame;             /* ANIM: 60 frames per second of animation time */
} sample_pose_spec;

/* Parses "bend:DEG", "twist:DEG", "anim:K:FRAME" or "axis:X:Y:Z:DEG" (a rotation by DEG about
 * the model-space direction (X, Y, Z), normalised, through the joint: poses such as an arm
 * swung across the body, which neither the bend nor the twist axis reaches). 0 (after printing
 * a line) when malformed. */
int sample_pose_parse(const char* text, sample_pose_spec* out);

/* Steps of 1/60 s of the ramp from the rest pose to a static target (0.5 s, whatever the
 * update interval), and the default budget to settle afterwards (10 s). */
enum { SAMPLE_RAMP_STEPS = 30, SAMPLE_SETTLE_STEPS = 600 };
/* Settled: no vertex moved more than this fraction of the rest bounding-box diagonal in 1/60 s
 * (between updates at least 1/60 s apart, the tolerance scaled by their time). */
#define SAMPLE_SETTLE_TOLERANCE 1e-5

typedef struct sample_quality_desc {
    const sample_character* character;  /* required */
    const char* backend;                /* NULL: "lbs" */
    const sinew_param* params;          /* backend parameters (--set) */
    uint32_t param_count;
    sample_pose_spec pose;
    const char* joint;                  /* NULL: sample_default_joint; ignored for ANIM */
    uint32_t settle_steps;              /* 0: SAMPLE_SETTLE_STEPS (steps of 1/60 s) */
    uint32_t thread_count;              /* world threads, 0: one per core */
    const sinew_logger* logger;         /* NULL: stderr */
    /* Optional: run in this world (with its plugins and registered backends) instead of a
     * fresh one; the run adds its rig and skin and removes them again. thread_count and
     * logger are then unused. */
    sinew_world* world;
    /* Seconds per update, sinew_world_update's dt (0: 1/60). Poses follow time: an animation
     * frame is 1/60 s of animation whatever dt is (the last update of anim:K:FRAME is cut
     * short to end at FRAME / 60 s), a static pose ramps over 0.5 s. Sweeps need 1/60. */
    double dt;
    /* Optional: receives the measured mesh, 3 floats per render vertex (a sweep: its last
     * frame). */
    float* positions;
} sample_quality_desc;

/* The figures of one deformed frame (what the sweep reports per frame). */
typedef struct sample_quality_frame {
    uint32_t frame;                     /* ANIM: the frame; static poses: 0 */
    double volume_ratio;                /* enclosed volume over rest; NaN when not closed */
    double volume;
    uint32_t self_intersections;        /* pairs (sample_count_self_intersections) */
    double min_edge_stretch;
    double max_edge_stretch;
    uint32_t nonfinite_vertices;
} sample_quality_frame;

/* The tissue model of a volumetric backend (ps, fps, fps-cuda), from sample_tissue_build with
 * the model-shaping keys of the run's parameters. */
typedef struct sample_quality_tissue {
    int present;                        /* 0 for geometric backends */
    uint32_t tets, inverted, degenerate, poor;
} sample_quality_tissue;

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
    /* Static poses: the volume around the posed joint (README.md, local_volume_ratio). The
     * region is the welded triangles with all three corners within local_radius (twice the
     * joint's radius in the volumetric skeleton, 2018 Sec. 3.1) of the joint's rest centre;
     * the volume is the sum of the signed tetrahedra (centre, a, b, c), posed (centre: the
     * joint's posed position) over rest. NaN for ANIM or an empty region. */
    double local_radius;
    uint32_t local_triangles;
    double local_volume_ratio;
    sample_quality_tissue tissue;
} sample_quality_report;

/* The region of local_volume_ratio around one joint, as sample_quality_run measures it (and
 * sinew-demo, for its labels): the welded triangles with all three corners within `radius`
 * (twice the joint's radius in the volumetric skeleton) of the joint's rest centre, and their
 * cone volume from that centre at rest. */
typedef struct sample_local_region {
    uint32_t joint;
    double radius;
    double rest_centre[3];
    uint32_t count;                     /* triangles in the region */
    uint32_t* triangles;                /* owned: indices into topology->triangles */
    double rest_volume;
} sample_local_region;

/* Selects the region of `joint` from the tissue model's joint radii. Errors: INVALID_ARGUMENT
 * (NULL, joint out of range), OUT_OF_MEMORY; one line each. */
sinew_result sample_local_region_build(const sample_topology* topology,
                                       const sample_character* character,
                                       const sample_tissue* tissue, uint32_t joint,
                                       sample_local_region* out);
/* local_volume_ratio for the deformed `positions` under the model-space pose `model` (16
 * floats per joint): the region's cone volume from the joint's posed centre (the translation
 * of its model matrix) over the rest volume. NaN for an empty region. */
double sample_local_region_ratio(const sample_local_region* region,
                                 const sample_topology* topology, const float* positions,
                                 const float* model);
void sample_local_region_free(sample_local_region* region);

/* Creates a world, the rig and one skin, poses and steps it, measures the output, and tears
 * everything down. Static poses ramp from rest over 0.5 s and then update until settled; ANIM
 * updates every dt from time 0 to frame / 60 s. Static poses and volumetric
 * backends also build the tissue model once (sample_tissue_build), for the local region's
 * radius and the tissue figures. Errors: INVALID_ARGUMENT (bad desc, unknown joint, animation
 * out of range, a malformed model-shaping parameter) and whatever the runtime or the tissue
 * model returns; each is reported in one line. */
sinew_result sample_quality_run(const sample_quality_desc* desc, sample_quality_report* out);

/* The report as the tool prints it: JSON, or one human-readable line. */
void sample_quality_print_json(FILE* out, const sample_quality_desc* desc, const char* pose_text,
                               const sample_quality_report* report);
void sample_quality_print_text(FILE* out, const sample_quality_desc* desc, const char* pose_text,
                               const sample_quality_report* report);

/* ---- sweeps: every frame of a stretch of an animation ---- */

/* "A:B" (frames A to B, inclusive) or "loop+N" (every frame of one loop and the first N
 * after its jump back to the start: frames 0 .. loop - 1 + N, sample_animation_loop_frames).
 * 0 (after printing a line) when malformed. */
typedef struct sample_sweep_spec {
    int loop;                           /* loop+N form */
    uint32_t first, last;               /* A:B form */
    uint32_t after;                     /* loop+N form: N */
} sample_sweep_spec;
enum { SAMPLE_SWEEP_MAX_FRAME = 10000000 };
int sample_sweep_parse(const char* text, sample_sweep_spec* out);
/* "anim:K" (no frame: the sweep gives the frames). 0 (after printing a line) otherwise. */
int sample_sweep_pose_parse(const char* text, uint32_t* animation);

typedef struct sample_sweep_report {
    uint32_t vertices, triangles;
    uint32_t animation;
    uint32_t loop_frames;               /* sample_animation_loop_frames */
    uint32_t first, last;               /* the frames measured */
    uint32_t steps;                     /* world updates run: last + 1 */
    int closed;
    uint32_t rest_self_intersections;
    uint32_t frame_count;               /* last - first + 1 */
    sample_quality_frame* frames;       /* owned; sample_sweep_report_free */
    uint32_t max_self_intersections;
    uint64_t sum_self_intersections;
    double max_edge_stretch;            /* over the frames (NaN when none is finite) */
    uint64_t nonfinite_total;           /* non-finite vertices summed over the frames */
    sample_quality_tissue tissue;
} sample_sweep_report;

/* Plays animation desc->pose.animation (desc->pose.kind must be SAMPLE_POSE_ANIM; its frame is
 * unused) from step 0, every step simulated as in sample_quality_run, and measures each frame
 * the spec names: the figures of a frame equal those of a run at anim:K:FRAME. Errors as
 * sample_quality_run's, and INVALID_ARGUMENT for a range past SAMPLE_SWEEP_MAX_FRAME or a dt
 * other than 1/60 (a sweep measures every frame, so it updates once per frame). */
sinew_result sample_quality_sweep(const sample_quality_desc* desc, const sample_sweep_spec* spec,
                                  sample_sweep_report* out);
void sample_sweep_report_free(sample_sweep_report* report);

/* The sweep as the tool prints it: JSON (one line per frame in "frames"), or one line per
 * frame and a summary line. */
void sample_sweep_print_json(FILE* out, const sample_quality_desc* desc, const char* pose_text,
                             const sample_sweep_report* report);
void sample_sweep_print_text(FILE* out, const sample_quality_desc* desc, const char* pose_text,
                             const sample_sweep_report* report);

#endif
