/* libFuzzer harness: the bake loader. The input is a baked file whose header sizes and
 * checksum are repaired before it is read, so that mutations reach the chunk parsers; a file
 * that loads is restored by its backend (lbs, dqs, ps or fps) and stepped.
 * SPDX-License-Identifier: MIT */
#include "fuzz_common.h"

#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_bake.h>

static uint32_t get32(const uint8_t* p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t* p, uint32_t v)
{
    for (int k = 0; k < 4; ++k) p[k] = (uint8_t)(v >> (8 * k));
}

/* payload_size and the checksum made to agree with the bytes (header_size as given when it is
 * a sane one); returns the size to write. */
static size_t repair(uint8_t* file, size_t size)
{
    if (size < 32u) return size;
    uint32_t header = get32(file + 12);
    if (header < 32u || header > 4096u || header % 8u || header > size) return size;
    size_t payload = (size - header) / 8u * 8u;
    put32(file + 16, (uint32_t)payload);
    put32(file + 20, (uint32_t)((uint64_t)payload >> 32));
    put32(file + 24, fuzz_crc32c(file + header, payload));
    return header + payload;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    uint8_t* file = (uint8_t*)malloc(size ? size : 1u);
    if (!file) return 0;
    memcpy(file, data, size);
    size_t n = repair(file, size);
    int written = fuzz_write(fuzz_path("c.bake"), file, n);
    free(file);
    if (!written) return 0;
    sinew_world* world = fuzz_world();
    sinew_rig rig;
    if (world && sinew_rig_load_baked(world, fuzz_path("c.bake"), &rig) == SINEW_OK) {
        const char* backend = NULL;
        sinew_rig_get_baked(world, rig, &backend, NULL, NULL);
        sinew_baked_file* baked = NULL;
        if (sinew_bake_read(fuzz_path("c.bake"), fuzz_logger(), &baked) == SINEW_OK) {
            const sinew_rig_desc* desc = baked->rig;
            fuzz_skin_steps(world, rig, backend ? backend : "lbs", desc->skeleton.joint_count,
                            desc->skeleton.bind_matrices, desc->render_mesh.vertex_count);
            sinew_bake_free(baked);
        }
    }
    sinew_world_destroy(world);
    return 0;
}
