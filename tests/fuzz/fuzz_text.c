/* libFuzzer harness: the text importer over all four file kinds (.ini, .off, .skel, .anim),
 * then rig creation, animation sampling and steps of lbs and dqs. An input is the four files
 * one after the other, separated by a line "#--8<--" (the .ini names c.off, c.skel and
 * c.anim). SPDX-License-Identifier: MIT */
#include "fuzz_common.h"

#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_import.h>

#define SEPARATOR "\n#--8<--\n"

static const char* const file_names[4] = {"c.ini", "c.off", "c.skel", "c.anim"};

/* Writes the input's parts as the four files; a missing part is an empty file. */
static int write_parts(const uint8_t* data, size_t size)
{
    size_t sep = strlen(SEPARATOR), at = 0;
    for (int k = 0; k < 4; ++k) {
        size_t end = size;
        if (k < 3)
            for (size_t i = at; i + sep <= size; ++i)
                if (memcmp(data + i, SEPARATOR, sep) == 0) {
                    end = i;
                    break;
                }
        if (at > size) at = size;
        if (!fuzz_write(fuzz_path(file_names[k]), data + at, end - at)) return 0;
        at = end + sep;
    }
    return 1;
}

/* Each animation sampled twice and stepped with the geometric backends. */
static void drive(sinew_world* world, sinew_rig rig, const sinew_character* ch)
{
    uint32_t joints = ch->rig.skeleton.joint_count;
    float* local = (float*)malloc(sizeof(float) * 16u * (joints ? joints : 1u));
    if (!local) return;
    sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
    pd.joint_count = joints;
    pd.matrices = local;
    pd.space = SINEW_POSE_LOCAL;
    const char* backends[2] = {"lbs", "dqs"};
    for (uint32_t a = 0; a < ch->animation_count && a < 2u; ++a) {
        for (int b = 0; b < 2; ++b) {
            sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
            sd.rig = rig;
            sd.backend = backends[b];
            sinew_skin skin;
            if (sinew_world_add_skin(world, &sd, &skin) != SINEW_OK) continue;
            for (int f = 0; f < 2; ++f) {
                if (sinew_animation_sample(&ch->animations[a], 0.37f * (float)f, 1, local) !=
                    SINEW_OK)
                    break;
                sinew_skin_set_pose(world, skin, &pd);
                sinew_world_update(world, 1.0f / 60.0f);
            }
            sinew_world_remove_skin(world, skin);
        }
    }
    free(local);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (!write_parts(data, size)) return 0;
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.logger = fuzz_logger();
    sinew_character* ch = NULL;
    if (sinew_import_character(fuzz_path("c.ini"), &options, &ch) != SINEW_OK) return 0;
    sinew_world* world = fuzz_world();
    sinew_rig rig;
    if (world && sinew_rig_create(world, &ch->rig, &rig) == SINEW_OK) drive(world, rig, ch);
    sinew_world_destroy(world);
    sinew_import_free(ch);
    return 0;
}
