/* sinew-pbd-profile: the colours of pbd's constraint graph and where the time of a step goes
 * (not a test; no thresholds). SPDX-License-Identifier: MIT
 *
 *   sinew-pbd-profile CHARACTER [THREADS [FRAMES [KEY=VALUE ...]]]
 *
 * Plays the character's first animation (or, without one, the samples' bend-and-twist motion
 * of the middle joint) at 60 steps per second with a pbd skin created with profile=1, and
 * prints the backend's INFO lines: its preparation (constraints, colours, the constraint
 * graph's degeneracy) and the per-step means of its phases (which sinew-bench's logger does
 * not show). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample_character.h"

static void print_line(sinew_log_level level, const char* message, void* user)
{
    (void)user;
    if (level <= SINEW_LOG_INFO) printf("%s\n", message);
}

/* Plays `frames` frames of the character into the skin. */
static sinew_result play(sinew_world* world, sinew_skin skin, const sample_character* ch,
                         uint32_t frames)
{
    uint32_t jn = ch->rig.skeleton.joint_count;
    float* pose = malloc(sizeof(float) * 16u * jn);
    int32_t joint = sample_default_joint(ch);
    sinew_result r = pose ? SINEW_OK : SINEW_ERROR_OUT_OF_MEMORY;
    for (uint32_t f = 0; f < frames && r == SINEW_OK; ++f) {
        sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
        pd.joint_count = jn;
        pd.matrices = pose;
        if (ch->animation_count > 0) {
            pd.space = SINEW_POSE_LOCAL;
            r = sinew_animation_sample(&ch->animations[0], (float)f / 60.0f, 1, pose);
        } else {
            r = sample_motion_pose(ch, (uint32_t)joint, f / 60.0, pose);
        }
        if (r == SINEW_OK) r = sinew_skin_set_pose(world, skin, &pd);
        if (r == SINEW_OK) r = sinew_world_update(world, 1.0f / 60.0f);
    }
    free(pose);
    return r;
}

int main(int argc, char** argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: sinew-pbd-profile CHARACTER [THREADS [FRAMES [KEY=VALUE ...]]]\n");
        return 2;
    }
    uint32_t threads = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 0u;
    uint32_t frames = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 300u;
    sinew_param params[16] = {{"profile", "1"}};
    uint32_t count = 1;
    for (int i = 4; i < argc && count < 16; ++i) {
        char* eq = strchr(argv[i], '=');
        if (!eq) {
            fprintf(stderr, "sinew-pbd-profile: %s is not KEY=VALUE\n", argv[i]);
            return 2;
        }
        *eq = '\0';
        params[count].key = argv[i];
        params[count++].value = eq + 1;
    }
    sample_character ch;
    sinew_result r = sample_character_load(argv[1], NULL, &ch);
    if (r != SINEW_OK) return r == SINEW_ERROR_FILE_NOT_FOUND ? 77 : 1;
    sinew_logger logger = {print_line, NULL};
    sinew_world_desc wd = SINEW_WORLD_DESC_INIT;
    wd.logger = &logger;
    wd.log_level = SINEW_LOG_INFO;
    wd.thread_count = threads;
    sinew_world* world = NULL;
    sinew_rig rig;
    sinew_skin skin;
    sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
    if ((r = sinew_world_create(&wd, &world)) == SINEW_OK &&
        (r = sinew_rig_create(world, &ch.rig, &rig)) == SINEW_OK) {
        sd.rig = rig;
        sd.backend = "pbd";
        sd.params = params;
        sd.param_count = count;
        r = sinew_world_add_skin(world, &sd, &skin);
    }
    if (r == SINEW_OK) {
        printf("%s: %u threads, %u frames\n", argv[1], sinew_world_thread_count(world), frames);
        r = play(world, skin, &ch, frames);
    }
    sinew_world_destroy(world); /* prints the profile line */
    sample_character_free(&ch);
    return r == SINEW_OK ? 0 : 1;
}
