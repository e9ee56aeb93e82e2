/* Pose discontinuities of a physics backend through the runtime, shared by the ps and fps
 * tests (test_ps_jump, test_fps_jump): the male's looping animation 5 across its jump, and a
 * flagged pose on the cylinder. SPDX-License-Identifier: MIT */
#ifndef SINEW_TEST_JUMP_WORLD_H
#define SINEW_TEST_JUMP_WORLD_H

#include <stdint.h>

#include "test_support.h"

/* The male's animation 5 has three keys 0.5 s apart and loops: at frame JUMP_FRAME (60 steps
 * a second) the pose jumps from the last key back to the first within one step. */
enum { JUMP_ANIMATION = 5, JUMP_FRAME = 60, JUMP_AFTER = 10 };

/* Plays animation 5 of the male with `backend` from frame 0 (the pose of frame f at f / 60 s,
 * one step each) and counts the intersecting render-mesh pairs (sinew-quality's metric) at
 * the JUMP_AFTER frames from JUMP_FRAME on into pairs. */
void jump_play_male(const char* backend, const sinew_param* params, uint32_t param_count,
                    uint32_t pairs[JUMP_AFTER]);

/* The acceptance check on the male: with the default detection, `backend` has at most lbs's
 * pairs + 10 at each of the JUMP_AFTER frames; with jump_angle=0 and jump_distance=0 (no
 * detection) it has more than that at some frame. Prints the figures. */
void jump_check_male_loop(const char* backend);

/* The cylinder through the public API, detection off (jump_angle=0, jump_distance=0) so that
 * only the flag acts: after a swinging ramp, a pose far from it set with
 * SINEW_POSE_DISCONTINUOUS gives another shape at the next step than the same pose without
 * the flag, the shape of a skin started from the pose's lbs shape (a swap from lbs), and the
 * step after it continues from zero velocities (as that skin with damping=0 does). */
void jump_check_flag(const char* backend);

/* One INFO line per restart, naming the backend, the update and the cause; none while the
 * cylinder follows a smooth ramp. */
void jump_check_log(const char* backend);

#endif
