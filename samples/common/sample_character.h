/* Characters for the samples: loading through sinew_import, a procedural arm built in code,
 * joint choice and the poses the samples apply. SPDX-License-Identifier: MIT */
#ifndef SINEW_SAMPLE_CHARACTER_H
#define SINEW_SAMPLE_CHARACTER_H

#include <stdint.h>

#include <sinew/sinew.h>
#include <sinew/sinew_bake.h>
#include <sinew/sinew_import.h>

/* A character ready for sinew_rig_create, whether it came from a file or from code. The
 * arrays belong to the character; sample_character_free releases them. */
typedef struct sample_character {
    const char* name;
    const char* source;                 /* the file path, or "procedural arm" */
    sinew_rig_desc rig;                 /* pass &rig to sinew_rig_create */
    const float* rest_local;            /* joint_count * 16 rest local transforms (NULL for a
                                           baked file) */
    uint32_t animation_count;
    const sinew_animation* animations;
    sinew_character* imported;          /* owner of the arrays for a loaded file, else NULL */
    void* storage;                      /* owner of the arrays for a procedural one, else NULL */
    sinew_baked_file* baked;            /* owner of the arrays for a baked file, else NULL */
} sample_character;

/* Loads `path` with sinew_import_character: `.ini` is the text format, anything else goes to
 * assimp. A baked file (sinew-bake's output, recognised by its "SINEWBAK" magic) is read with
 * sinew_bake_read instead: `rig` then carries the baked-rig extension, so sinew_rig_create
 * gives the rig exactly as baked with the backend's blob attached; it has no animation.
 * A missing file is SINEW_ERROR_FILE_NOT_FOUND (the samples treat it as "data absent"); other
 * errors are the importer's or the baked-file reader's. logger NULL: stderr. */
sinew_result sample_character_load(const char* path, const sinew_logger* logger,
                                   sample_character* out);

/* A capped cylinder along x from -6 to 6 with radius 1, `rings` rings of `sides` vertices,
 * and three joints in a chain: "shoulder" (x = -6), "elbow" (x = 0), "wrist" (x = 6). It
 * carries its own weights: the upper arm follows the shoulder, the forearm the elbow, and a
 * smooth blend 1.5 units either side of the elbow. Needs no data files, so samples and tests
 * can always run. rings >= 2, sides >= 3, at most 1,000,000 vertices. */
sinew_result sample_character_make_arm(uint32_t rings, uint32_t sides, sample_character* out);

/* Steps of 1/60 s that one loop of `animation` lasts as the samples play it: frame f samples
 * time f / 60 with sinew_animation_sample's looping, which wraps time into [first key, last
 * key); the loop is the first frame whose time reaches the span (last key time minus first),
 * that is ceil(60 * span) up to float rounding. Frames 0 .. loop-1 are one loop and frame
 * `loop` is the first after the jump back to the start. 1 for an animation without duration;
 * 0 for NULL or an animation without keys; UINT32_MAX when the span is not finite or longer
 * than SAMPLE_MAX_LOOP_FRAMES. */
enum { SAMPLE_MAX_LOOP_FRAMES = 10000000 };
uint32_t sample_animation_loop_frames(const sinew_animation* animation);

/* Releases a character from either constructor and zeroes it; NULL and zeroed are fine. */
void sample_character_free(sample_character* character);

/* Joint index by name, -1 when absent (or name NULL). */
int32_t sample_find_joint(const sample_character* character, const char* name);

/* The middle joint of the longest chain: among root-to-leaf paths, the one with most joints
 * (ties: the longer path in model space, then the lower leaf index); the joint at position
 * floor((n - 1) / 2) along it from the root. -1 for a character without joints. */
int32_t sample_default_joint(const sample_character* character);

/* Unit axes for posing `joint` at rest: twist runs from the joint to its first child (lowest
 * index) at a distinct position, or from its parent to it for a leaf; bend is the cross
 * product of the twist axis with the world axis least aligned with it. INVALID_ARGUMENT when
 * the joint is out of range or has no neighbour at a distinct position. */
sinew_result sample_joint_axes(const sample_character* character, uint32_t joint,
                               float twist_axis[3], float bend_axis[3]);

/* Rotates the subtree of `joint` in the model-space pose `model` (16 floats per joint,
 * in/out) by `radians` about the unit `axis` through the joint's current position: what an
 * extra rotation in the joint's local transform does. */
void sample_rotate_subtree(const sample_character* character, uint32_t joint,
                           const float axis[3], float radians, float* model);

/* The rest pose in model space (the bind matrices) bent by bend_degrees and twisted by
 * twist_degrees at `joint` (twist first, both about the rest axes). */
sinew_result sample_bend_twist_pose(const sample_character* character, uint32_t joint,
                                    float bend_degrees, float twist_degrees, float* out_model);

/* `rest_direction` (a direction at rest) turned as the model-space pose `model` has turned
 * `joint`: by the rotation-scale part of its model matrix times its inverse bind matrix,
 * renormalised. The rest direction itself when that matrix is singular. */
void sample_joint_turned_direction(const sample_character* character, uint32_t joint,
                                   const float* model, const float rest_direction[3],
                                   float out[3]);

/* Twists then bends `joint` in the model-space pose `model` (in/out) by the given degrees,
 * about its rest axes (sample_joint_axes) as the pose has already turned them, so that
 * several joints compose, a child's axes following its parent. On the bind pose this is
 * sample_bend_twist_pose. Errors as sample_joint_axes, NONFINITE for an angle. */
sinew_result sample_turn_joint(const sample_character* character, uint32_t joint,
                               float bend_degrees, float twist_degrees, float* model);

/* The built-in motion for characters without animations: at `seconds`, bend from 0 up to 90
 * degrees and back every 2 s, twist between -90 and +90 degrees every 3 s. */
sinew_result sample_motion_pose(const sample_character* character, uint32_t joint,
                                double seconds, float* out_model);

#endif
