/* libFuzzer harness: the assimp import path. The first byte picks the file's extension (and so
 * assimp's reader), the rest is the file; a character that imports is created as a rig and
 * stepped with lbs and dqs. SPDX-License-Identifier: MIT */
#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>

#include <sinew/sinew_import.h>

static const char* const extensions[] = {"obj", "x", "gltf", "dae"};

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1) return 0;
    char name[32];
    snprintf(name, sizeof name, "c.%s",
             extensions[data[0] % (sizeof extensions / sizeof extensions[0])]);
    if (!fuzz_write(fuzz_path(name), data + 1, size - 1)) return 0;
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.logger = fuzz_logger();
    sinew_character* ch = NULL;
    if (sinew_import_character(fuzz_path(name), &options, &ch) != SINEW_OK) return 0;
    sinew_world* world = fuzz_world();
    sinew_rig rig;
    if (world && sinew_rig_create(world, &ch->rig, &rig) == SINEW_OK) {
        uint32_t joints = ch->rig.skeleton.joint_count;
        fuzz_skin_steps(world, rig, "lbs", joints, ch->rig.skeleton.bind_matrices,
                        ch->rig.render_mesh.vertex_count);
        fuzz_skin_steps(world, rig, "dqs", joints, ch->rig.skeleton.bind_matrices,
                        ch->rig.render_mesh.vertex_count);
    }
    sinew_world_destroy(world);
    sinew_import_free(ch);
    return 0;
}
