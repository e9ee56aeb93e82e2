/* Test fixture for the ps backend: a hand-made host (capture logger, serial or uneven job
 * splits) and a rig view built from a character file, so the backend's internals and its
 * vtable can be driven without the runtime. SPDX-License-Identifier: MIT */
#ifndef SINEW_TEST_PS_FIXTURE_H
#define SINEW_TEST_PS_FIXTURE_H

#include <stdint.h>

#include "test_support.h"

#include <sinew/sinew_plugin.h>

#include "sample_character.h"
#include "sample_tissue.h"

typedef struct ps_test_host {
    sinew_host_api api;
    sinew_test_log log;
    int uneven; /* parallel_for in chunks of 1, 2, 3, 5, 8, ... items instead of one call */
} ps_test_host;

/* The logger captures into host->log; messages up to `level` pass. */
void ps_test_host_init(ps_test_host* host, sinew_log_level level, int uneven);

/* A character loaded from a data path and the rig view of it (the samples'
 * sample_rig_view_build: area-weighted normals computed as the runtime does when a mesh has
 * none). */
typedef struct ps_test_rig {
    sample_character character;
    sinew_rig_view view;
    sample_rig_view built;  /* owner of the normals `view` points to */
} ps_test_rig;

/* Loads `path` (fails the test when it does not load); the caller skips first when the data
 * path is missing (sinew_test_data_path does). */
void ps_test_rig_load(ps_test_rig* rig, const char* path);
void ps_test_rig_free(ps_test_rig* rig);

/* Skinning matrices (16 floats per joint) for the rest pose bent and twisted at `joint` (the
 * samples' sample_bend_twist_pose, times the inverse bind matrices). */
void ps_test_skinning(const ps_test_rig* rig, uint32_t joint, float bend_degrees,
                      float twist_degrees, float* out);

/* A writer that appends to a growing heap buffer. */
typedef struct ps_test_buffer {
    unsigned char* data;
    size_t size;
    size_t capacity;
} ps_test_buffer;

sinew_bake_writer ps_test_buffer_writer(ps_test_buffer* buffer);
void ps_test_buffer_free(ps_test_buffer* buffer);

#endif
