/* Worlds, characters and comparisons for the fps-cuda tests and benchmark (plain C, no
 * cmocka). SPDX-License-Identifier: MIT */
#ifndef SINEW_FPS_CUDA_TEST_WORLD_H
#define SINEW_FPS_CUDA_TEST_WORLD_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sinew/sinew.h>
#include <sinew/sinew_bake.h>
#include <sinew/sinew_import.h>

#include "cuda_test.h"

/* A logger that counts lines at or above the world's level. */
static inline void fpsc_test_logger(sinew_log_level level, const char* message, void* user)
{
    cuda_test_log_fn(level, message, user);
}

static inline sinew_world* fpsc_test_world(cuda_test_log* log, sinew_log_level level,
                                           sinew_logger* logger_storage)
{
    logger_storage->func = fpsc_test_logger;
    logger_storage->user = log;
    sinew_world_desc desc = SINEW_WORLD_DESC_INIT;
    desc.logger = logger_storage;
    desc.log_level = level;
    desc.thread_count = 2;
    sinew_world* world = NULL;
    CHECK(sinew_world_create(&desc, &world) == SINEW_OK);
    return world;
}

/* characters/<name>/<name>.ini under the data folder, or a skip (a failure under
 * SINEW_REQUIRE_DATA=1). */
static inline sinew_character* fpsc_test_character(const char* name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/characters/%s/%s.ini", sinew_import_data_dir(), name, name);
    if (!cuda_test_data_present(path, "SKIP")) exit(77);
    sinew_character* c = NULL;
    CHECK(sinew_import_character(path, NULL, &c) == SINEW_OK);
    CHECK(c->animation_count > 0);
    return c;
}

/* The rig of `c` with fps-cuda's preparation baked into it (written to a file under TMPDIR,
 * read back, the file removed), so that every skin added on it restores the model instead of
 * building it again: many copies of a character are ready in seconds. `params` must be the
 * model parameters the skins will use. */
static inline sinew_rig fpsc_test_baked_rig(sinew_world* world, const sinew_character* c,
                                            const sinew_param* params, uint32_t param_count)
{
    char path[1024];
    const char* dir = getenv("TMPDIR");
    static unsigned serial;
    snprintf(path, sizeof path, "%s/sinew-fpsc-test-%ld-%u.sinew", dir && *dir ? dir : "/tmp",
             (long)getpid(), serial++);
    sinew_rig plain = {0}, baked = {0};
    CHECK(sinew_rig_create(world, &c->rig, &plain) == SINEW_OK);
    CHECK(sinew_bake_write(world, plain, "fps-cuda", params, param_count, path) == SINEW_OK);
    CHECK(sinew_rig_destroy(world, plain) == SINEW_OK);
    CHECK(sinew_rig_load_baked(world, path, &baked) == SINEW_OK);
    remove(path);
    return baked;
}

/* Bounding-box diagonal of packed positions. */
static inline double fpsc_test_diagonal(const float* p, uint32_t n)
{
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (uint32_t i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(lo[k], p[3u * i + k]);
            hi[k] = fmax(hi[k], p[3u * i + k]);
        }
    double d = 0.0;
    for (int k = 0; k < 3; ++k) d += (hi[k] - lo[k]) * (hi[k] - lo[k]);
    return sqrt(d);
}

/* Sets every skin's pose to animation 0 of `c` at `time` (local transforms, the rig's FK). */
static inline void fpsc_test_pose(sinew_world* world, const sinew_skin* skins, uint32_t count,
                                  const sinew_character* c, float time, float* local)
{
    CHECK(sinew_animation_sample(&c->animations[0], time, 1, local) == SINEW_OK);
    sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
    pose.space = SINEW_POSE_LOCAL;
    pose.joint_count = c->rig.skeleton.joint_count;
    pose.matrices = local;
    for (uint32_t i = 0; i < count; ++i) CHECK(sinew_skin_set_pose(world, skins[i], &pose) == SINEW_OK);
}

#endif
