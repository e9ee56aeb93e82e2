/* The pose of fps's collision acceptance test (tests/fps_collide/test_fps_collide_world.c) for
 * the fps-cuda collision tests: the male's left arm rotated at l_shoulder by 40 degrees about
 * the model-space direction (-0.5, 1, -0.3), which swings the forearm and the hand into the
 * belly, ramped from rest over SAMPLE_RAMP_STEPS steps (sinew-quality's schedule).
 * SPDX-License-Identifier: MIT */
#ifndef SINEW_FPS_CUDA_TEST_ARM_H
#define SINEW_FPS_CUDA_TEST_ARM_H

#include <math.h>

#include "cuda_test.h"
#include "sample_character.h"
#include "sample_quality.h"

#define FPSC_ARM_POSE "axis:-0.5:1:-0.3:40"
#define FPSC_ARM_JOINT "l_shoulder"

/* Model-space matrices (16 per joint) of the pose at step s (1-based) of the ramp. */
static inline void fpsc_arm_pose(const sample_character* ch, uint32_t s, float* model)
{
    sample_pose_spec spec;
    CHECK(sample_pose_parse(FPSC_ARM_POSE, &spec));
    int32_t joint = sample_find_joint(ch, FPSC_ARM_JOINT);
    CHECK(joint >= 0);
    float fraction = s < SAMPLE_RAMP_STEPS ? (float)s / SAMPLE_RAMP_STEPS : 1.0f;
    CHECK(sample_bend_twist_pose(ch, (uint32_t)joint, 0.0f, 0.0f, model) == SINEW_OK);
    sample_rotate_subtree(ch, (uint32_t)joint, spec.axis,
                          spec.degrees * fraction * (float)(3.14159265358979323846 / 180.0), model);
}

#endif
