/* Shared pieces of the libFuzzer harnesses. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void quiet(sinew_log_level level, const char* message, void* user)
{
    (void)level;
    (void)message;
    (void)user;
}

const sinew_logger* fuzz_logger(void)
{
    static const sinew_logger logger = {quiet, NULL};
    return &logger;
}

const char* fuzz_path(const char* name)
{
    static char dir[256];
    static char path[512];
    if (!dir[0]) {
        const char* tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/sinew-fuzz-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        if (!mkdtemp(dir)) abort();
    }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

int fuzz_write(const char* path, const void* data, size_t size)
{
    FILE* f = fopen(path, "wb");
    if (!f) return 0;
    int ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

uint32_t fuzz_crc32c(const void* data, size_t size)
{
    const uint8_t* p = (const uint8_t*)data;
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < size; ++i) {
        crc ^= p[i];
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return crc ^ 0xFFFFFFFFu;
}

sinew_world* fuzz_world(void)
{
    sinew_world_desc desc = SINEW_WORLD_DESC_INIT;
    desc.thread_count = 1;
    desc.logger = fuzz_logger();
    sinew_world* world = NULL;
    return sinew_world_create(&desc, &world) == SINEW_OK ? world : NULL;
}

void fuzz_skin_steps(sinew_world* world, sinew_rig rig, const char* backend, uint32_t joints,
                     const float* pose, uint32_t vertices)
{
    sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
    sd.rig = rig;
    sd.backend = backend;
    sinew_skin skin;
    if (sinew_world_add_skin(world, &sd, &skin) != SINEW_OK) return;
    sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
    pd.joint_count = joints;
    pd.matrices = pose;
    float* out = (float*)malloc(sizeof(float) * 3u * (vertices ? vertices : 1u));
    for (int i = 0; i < 2 && out; ++i) {
        sinew_skin_set_pose(world, skin, &pd);
        sinew_world_update(world, 1.0f / 60.0f);
    }
    if (out) {
        sinew_output_desc od = SINEW_OUTPUT_DESC_INIT;
        od.vertex_capacity = vertices;
        od.positions = out;
        sinew_skin_read_output(world, skin, &od);
    }
    free(out);
    sinew_world_remove_skin(world, skin);
}
