/* The update rate of a physics backend through the runtime, shared by the ps and fps tests
 * (test_ps_rates, test_fps_rates): the cylinder's joint2 bent 90 degrees over 0.5 s and then
 * held, driven at 30, 60 and 144 updates per second. SPDX-License-Identifier: MIT */
#ifndef SINEW_TEST_RATE_WORLD_H
#define SINEW_TEST_RATE_WORLD_H

#include <stdint.h>

#include "test_support.h"

#include <sinew/sinew_plugin.h>

/* The same motion at 30, 60 and 144 Hz: the shapes at every 1/6 s (every rate updates then,
 * and each has run 10 steps of 1/60 s per 1/6 s) differ from 60 Hz's by at most
 * `motion_tolerance` of the rest bounding-box diagonal (a vertex's largest distance), the
 * settled shapes after 3 s by at most `settled_tolerance`; the same motion at 30 Hz with one
 * step per update (max_substeps=1: the motion at half speed, as a backend that ignored dt
 * would run it) differs by more than 10 times the tolerance. */
void rate_check_rates(const char* backend, double motion_tolerance, double settled_tolerance);

/* interpolate_output=1: at 60 Hz each update shows exactly the shape the plain skin showed one
 * update before (the output lags one step); at 144 Hz it moves at every update of the bend,
 * where the plain skin's stands still at the updates that run no step. */
void rate_check_interpolated_output(const char* backend);

/* At 144 Hz with the output bound to two arrays in turn (as to the slots of a double-buffered
 * Vulkan output): after every update the array just bound holds the shape read_output gives,
 * also after the updates that run no step. */
void rate_check_rebound_output(const char* backend);

/* max_substeps=2 with updates of 0.1 s (6 steps of 1/60 s each): 2 steps run per update, the
 * rest is dropped, one INFO line says so the first time, and the profile=1 summary counts
 * every dropped step. */
void rate_check_dropped(const char* backend);

/* dt = 0 straight to the backend's step (the runtime refuses it) and a dt below the timestep
 * through the runtime run no step: the output stays what it was, bit for bit, also after a
 * new pose; the carried time then adds up to the step it makes. */
void rate_check_small_dt(const char* backend, const sinew_backend_vtable* vt);

/* At 30 Hz a pose jump (50 degrees within one update: 25 per step, below jump_angle per step
 * but not per update) restarts the tissue once, with its INFO line, and steps at the new pose
 * only: the shape equals that of a 60 Hz skin restarted there and stepped twice; without the
 * detection the update interpolates through the change and ends elsewhere. */
void rate_check_jump(const char* backend);

/* Runs the six checks above as one cmocka group for `backend` (vt for the small-dt check) with
 * the tolerances of rate_check_rates; the test program's main returns what it returns. */
int rate_run_all(const char* backend, const sinew_backend_vtable* vt, double motion_tolerance,
                 double settled_tolerance);

#endif
