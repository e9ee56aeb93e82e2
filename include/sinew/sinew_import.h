/*
 * sinew importers: characters from files into rig descriptors and animations.
 * SPDX-License-Identifier: MIT
 *
 * A library of its own (sinew_import), separate from the runtime core: a game that ships baked
 * or engine-made rigs never links it. The text format of the test characters is always
 * built in; glTF 2.0 / FBX / X / Collada come through assimp when the library is built with it
 * (SINEW_WITH_ASSIMP), else they are refused with SINEW_ERROR_UNSUPPORTED.
 */
#ifndef SINEW_SINEW_IMPORT_H
#define SINEW_SINEW_IMPORT_H

#include "sinew.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A skeletal animation sampled at key times shared by all joints. Joint transforms are local
 * (relative to the parent): rotation quaternion (x, y, z, w), translation, scale.
 * Joints without a channel hold their rest local transform in every key. */
typedef struct sinew_animation {
    char* name;
    uint32_t joint_count;
    uint32_t key_count;                 /* >= 1 */
    float* key_times;                   /* key_count ascending seconds, key_times[0] = 0 */
    float* rotations;                   /* key_count * joint_count * 4, key-major */
    float* translations;                /* key_count * joint_count * 3 */
    float* scales;                      /* key_count * joint_count * 3 */
    float duration;                     /* seconds, = last key time */
} sinew_animation;

/* An imported character: a ready rig descriptor (its arrays owned by the character) and its
 * animations. Sub-meshes that share a skeleton are merged into one render mesh. */
typedef struct sinew_character {
    char* name;
    char* source_path;
    sinew_rig_desc rig;                 /* pass to sinew_rig_create */
    float* rest_local;                  /* joint_count * 16: rest local transforms */
    uint32_t animation_count;
    sinew_animation* animations;
    void* internal;                     /* storage; do not touch */
} sinew_character;

enum {
    /* File names in an .ini may be absolute or leave the .ini's folder (`..`). Without it
     * they resolve against that folder and must stay inside it (subfolders are fine);
     * others are refused with SINEW_ERROR_FILE_PATH. Set it only for .ini files you trust:
     * one could otherwise name any file the process can read. */
    SINEW_IMPORT_ALLOW_ANY_PATH = 1u << 0
};

typedef struct sinew_import_options {
    uint32_t struct_size;
    const void* next;
    const sinew_logger* logger;         /* NULL: errors and warnings to stderr */
    uint32_t use_simulation_mesh;       /* text format with SIMMESH and VISMESH: 0 (default)
                                           renders VISMESH and simulates SIMMESH; 1 renders
                                           SIMMESH only (no simulation mesh) */
    uint32_t flags;                     /* SINEW_IMPORT_* bits; 0: none. Unknown bits are
                                           refused (SINEW_ERROR_INVALID_ARGUMENT); options of
                                           the first published size, which end before flags,
                                           mean 0 */
} sinew_import_options;

#define SINEW_IMPORT_OPTIONS_INIT { (uint32_t)sizeof(sinew_import_options), NULL, NULL, 0u, 0u }

/* Loads a character: `.ini` is the text format of the characters folder, anything else goes
 * to assimp. options may be NULL. Errors: FILE_NOT_FOUND, FILE_READ (also for anything but a
 * regular file: a folder, a FIFO, a device), FILE_FORMAT, FILE_TRUNCATED, FILE_PATH (an .ini
 * names a file outside its folder, see SINEW_IMPORT_ALLOW_ANY_PATH), SKELETON, UNSUPPORTED
 * (no assimp), with one log line naming the file. Log lines name files and lines, never
 * quote what a file holds. */
SINEW_API sinew_result sinew_import_character(const char* path,
                                              const sinew_import_options* options,
                                              sinew_character** out_character);
SINEW_API void sinew_import_free(sinew_character* character);

/* Local joint transforms (16 floats per joint, column-major) of an animation at `time`
 * seconds: rotations slerped, translations and scales lerped between the two keys around
 * it. When `loop` is non-zero time wraps around the duration, else it is clamped. */
SINEW_API sinew_result sinew_animation_sample(const sinew_animation* animation, float time,
                                              int loop, float* out_local);

/* The test data folder (characters/...), looked for at run time, first match wins:
 *   1. $SINEW_DATA_DIR when set and not empty (returned as given, present or not);
 *   2. <executable's folder>/../share/sinew/data, where an install puts it beside bin/
 *      (a build tree links it to ../shared/data beside the source checkout);
 *   3. ../shared/data relative to the working directory (a program run from a checkout).
 * When neither default exists, the last one is returned, so that a message can name it.
 * $SINEW_DATA_DIR is read at every call, the defaults are looked for once. Never NULL. */
SINEW_API const char* sinew_import_data_dir(void);

#ifdef __cplusplus
}
#endif

#endif /* SINEW_SINEW_IMPORT_H */
