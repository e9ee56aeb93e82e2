/* Small hand-made rigs for runtime tests. SPDX-License-Identifier: MIT */
#ifndef SINEW_TEST_RIGS_H
#define SINEW_TEST_RIGS_H

#include <sinew/sinew.h>

/* A bar along x from 0 to 2, built from `rings` square cross-sections (4 vertices each,
 * half-width 0.25) and closed at the ends; two joints at x = 0 (root) and x = 1 (child).
 * Vertices with x <= 1 are weighted to joint 0, the others to joint 1, except the ring at
 * x = 1 which is half and half. Arrays are static: one bar at a time. */
typedef struct test_bar {
    sinew_rig_desc desc;
    float positions[64 * 3];
    uint32_t indices[64 * 6 * 3];
    int32_t parents[2];
    float bind[32];
    const char* names[2];
    uint32_t offsets[65];
    uint32_t joints[128];
    float weights[128];
} test_bar;

/* Fills bar (rings must be odd, 3..63) and returns &bar->desc. */
const sinew_rig_desc* test_bar_make(test_bar* bar, uint32_t rings);

/* Column-major 4x4 helpers. */
void test_mat_identity(float* m);
void test_mat_rotation_z(float* m, float radians, float cx, float cy, float cz);

#endif
