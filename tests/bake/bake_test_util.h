/* Helpers of the baked-file tests: a procedural rig, a probe backend with a bake function,
 * whole-file byte access, an independent CRC-32C and chunk lookup written from the format
 * description (not from runtime/bake.c). SPDX-License-Identifier: MIT */
#ifndef SINEW_TEST_BAKE_UTIL_H
#define SINEW_TEST_BAKE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "test_support.h"

#include <sinew/sinew_bake.h>
#include <sinew/sinew_plugin.h>

/* A capped tube along x with three joints ("shoulder", "" and "wrist"), a render mesh in two
 * sub-meshes, a coarser simulation mesh, and given weights that are unsorted and not
 * normalised (so the runtime has work to do). Arrays owned by the struct. */
typedef struct bake_test_rig {
    sinew_rig_desc desc;
    float* positions;
    uint32_t* indices;
    float* sim_positions;
    uint32_t* sim_indices;
    uint32_t* offsets;
    uint32_t* joints;
    float* weights;
    uint32_t submeshes[2];
    int32_t parents[3];
    float bind[48];
    const char* names[3];
} bake_test_rig;

void bake_test_rig_make(bake_test_rig* rig);
void bake_test_rig_free(bake_test_rig* rig);

/* The probe backend "bakeprobe": its bake writes a blob made from the rig and the params (in
 * several pieces, more than 64 KiB in all), its prepare records the rig view it was given and,
 * when the view carries baked data for "bakeprobe", compares it with what bake would write and
 * refuses a difference with SINEW_ERROR_FILE_FORMAT. Param "fail=1" makes bake fail with
 * SINEW_ERROR_BACKEND_FAILED (one log line). */
extern const sinew_backend_vtable bake_probe_backend;
/* The same backend named "oldprobe" with a table as short as a plugin built before `bake`
 * existed (its bake pointer lies beyond struct_size and must never be called). */
extern const sinew_backend_vtable bake_old_backend;

typedef struct bake_probe_state {
    const sinew_rig_view* last_view;    /* from the last prepare */
    int prepared_from_blob;             /* the last prepare found and checked its blob */
    int bake_calls;
} bake_probe_state;
extern bake_probe_state bake_probe;

/* The blob bake_probe_backend writes for this rig and these params (malloc'ed). */
uint8_t* bake_probe_blob(const sinew_rig_view* rig, const sinew_param* params, uint32_t count,
                         size_t* out_size);

/* Asserts that two rig views hold the same arrays bit for bit (baked fields excepted). */
void bake_assert_views_equal(const sinew_rig_view* a, const sinew_rig_view* b);

/* The rig view behind a rig handle, captured by adding and removing a "bakeprobe" skin with
 * these params (the world must have bake_probe_backend registered). */
const sinew_rig_view* bake_capture_view(sinew_world* world, sinew_rig rig,
                                        const sinew_param* params, uint32_t count);

/* Whole-file access. bake_read_bytes fails the test when the file cannot be read. */
uint8_t* bake_read_bytes(const char* path, size_t* out_size);
void bake_write_bytes(const char* path, const void* data, size_t size);

/* CRC-32C computed bit by bit, straight from the polynomial's definition. */
uint32_t bake_crc32c_bitwise(const void* data, size_t size);
/* Recomputes the checksum field of a file image after a test edited its payload. */
void bake_fix_checksum(uint8_t* file, size_t size);

/* Offset (in the file) of the chunk with `tag`'s data and its size; false when absent. */
bool bake_find_chunk(const uint8_t* file, size_t size, const char* tag, size_t* out_offset,
                     uint64_t* out_size);

uint32_t bake_get_le32(const uint8_t* p);
void bake_put_le32(uint8_t* p, uint32_t v);
uint64_t bake_get_le64(const uint8_t* p);

/* A fresh folder under $TMPDIR (mkdtemp) and a path inside it; bake_temp_cleanup removes the
 * files named by bake_temp_path and the folder. */
typedef struct bake_temp {
    char dir[256];
    char paths[32][320];
    int count;
} bake_temp;
void bake_temp_init(bake_temp* temp);
const char* bake_temp_path(bake_temp* temp, const char* name);
void bake_temp_cleanup(bake_temp* temp);

#endif
