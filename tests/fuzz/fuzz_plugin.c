/* libFuzzer harness: the plugin loader's negotiation and table validation. The input drives
 * what a plugin (fuzz_plugin_table.c) answers: its result, ABI version, name, backend count,
 * and each table's size, name, flags and functions; the codes its functions return too.
 * Whatever registers is used on a small rig and stepped. SPDX-License-Identifier: MIT */
#include "fuzz_common.h"

#include <string.h>

#include <sinew/sinew_plugin.h>

static const uint8_t* current;
static size_t current_size;

/* Read by the plugin's entry point (through dlsym: the harness exports it). */
__attribute__((visibility("default"))) void fuzz_plugin_input(const uint8_t** data, size_t* size)
{
    *data = current;
    *size = current_size;
}

/* A triangle bound to one joint. */
static int small_rig(sinew_world* world, sinew_rig* rig)
{
    static const float positions[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    static const uint32_t indices[3] = {0, 1, 2};
    static const int32_t parent = -1;
    static const float bind[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    sinew_rig_desc desc = SINEW_RIG_DESC_INIT;
    desc.skeleton.joint_count = 1;
    desc.skeleton.parents = &parent;
    desc.skeleton.bind_matrices = bind;
    desc.render_mesh.vertex_count = 3;
    desc.render_mesh.positions = positions;
    desc.render_mesh.triangle_count = 1;
    desc.render_mesh.indices = indices;
    return sinew_rig_create(world, &desc, rig) == SINEW_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    current = data;
    current_size = size;
    sinew_world* world = fuzz_world();
    if (!world) return 0;
    uint32_t before = sinew_world_backend_count(world);
    sinew_rig rig;
    if (sinew_world_load_plugin(world, FUZZ_PLUGIN_PATH) == SINEW_OK && small_rig(world, &rig)) {
        static const float pose[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.5f, 0, 0, 1};
        for (uint32_t b = before; b < sinew_world_backend_count(world); ++b)
            fuzz_skin_steps(world, rig, sinew_world_backend_name(world, b), 1, pose, 3);
    }
    sinew_world_destroy(world);
    return 0;
}
