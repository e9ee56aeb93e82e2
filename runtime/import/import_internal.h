/* Internals shared by the importer's translation units. SPDX-License-Identifier: MIT */
#ifndef SINEW_IMPORT_INTERNAL_H
#define SINEW_IMPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <sinew/sinew_import.h>

#if defined(__GNUC__)
#  define IMPORT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#  define IMPORT_PRINTF(a, b)
#endif

/* Joint keys (key_count * joint_count) one animation may hold: 640 MiB of transforms. */
#define MAX_ANIMATION_ENTRIES ((uint64_t)1 << 24)

/* One import call: where its messages go and what the caller asked for. */
typedef struct import_context {
    sinew_logger logger;            /* func NULL: messages are dropped */
    const char* path;               /* the file the caller passed */
    uint32_t use_simulation_mesh;
    uint32_t flags;                 /* SINEW_IMPORT_* */
} import_context;

/* Everything a character owns beyond its own struct. The rig descriptor points into these
 * arrays; keeping the owning (non-const) pointers here lets sinew_import_free release them
 * without casting const away, also after a failure half-way through an import. */
typedef struct import_storage {
    int32_t* parents;
    float* bind_matrices;
    char** names;
    uint32_t name_count;            /* entries of names that may hold a string */
    float* positions;
    float* normals;
    uint32_t* indices;
    uint32_t* submesh_first_triangle;
    float* sim_positions;
    uint32_t* sim_indices;
    uint32_t* weight_offsets;
    uint32_t* weight_joints;
    float* weight_values;
} import_storage;

static inline import_storage* import_storage_of(sinew_character* character)
{
    return (import_storage*)character->internal;
}

/* Logs one line through the context's logger. */
void import_log(const import_context* ctx, sinew_log_level level, const char* fmt, ...)
    IMPORT_PRINTF(3, 4);
/* Logs one error line and returns `result`. */
sinew_result import_fail(const import_context* ctx, sinew_result result, const char* fmt, ...)
    IMPORT_PRINTF(3, 4);

/* calloc that refuses a zero or overflowing size (NULL then). */
void* import_calloc(size_t count, size_t size);
char* import_strdup(const char* text);
char* import_strndup(const char* text, size_t length);

/* Reads a whole regular file into a NUL-terminated buffer (import_file.c). Errors
 * FILE_NOT_FOUND, FILE_READ (also: not a regular file), LIMIT (over 1 GiB), OUT_OF_MEMORY,
 * each logged once naming the file. Never blocks on a FIFO or device. */
sinew_result import_read_file(const import_context* ctx, const char* path, char** out_data,
                              size_t* out_size);
/* Checks that a regular file exists and can be opened for reading (same errors as above). */
sinew_result import_check_readable(const import_context* ctx, const char* path);
/* Whether the .ini (ctx->path) may name `name` (length bytes) on `line` for `key`: no
 * control characters (FILE_FORMAT), and unless ctx->flags has SINEW_IMPORT_ALLOW_ANY_PATH,
 * relative and without a `..` component (FILE_PATH). One line, which quotes no name. */
sinew_result import_check_ini_name(const import_context* ctx, uint32_t line, const char* key,
                                   const char* name, size_t length);

/* The file name without folder and last extension, newly allocated ("" for none). */
char* import_path_stem(const char* path);

/* Points the rig descriptor of `character` at its storage (call after filling it). */
void import_finish_rig(sinew_character* character);

/* Builds rest_local from parents and bind matrices: bind(parent)^-1 * bind(joint). */
sinew_result import_rest_local_from_bind(const import_context* ctx, sinew_character* character);

/* Loaders, filling a character allocated by sinew_import_character (freed by the caller on
 * failure, so a loader may leave it half-filled). */
sinew_result import_text_character(const import_context* ctx, sinew_character* character);
#if defined(SINEW_WITH_ASSIMP) && SINEW_WITH_ASSIMP
sinew_result import_assimp_character(const import_context* ctx, sinew_character* character);
#endif

/* Transform helpers (column-major 4x4, quaternions x y z w), in animation.c. */
void import_quat_axis_angle(const float axis[3], float angle, float out_q[4]);
void import_quat_normalize(float q[4]);
void import_quat_slerp(const float a[4], const float b[4], float u, float out_q[4]);
void import_compose_trs(const float t[3], const float q[4], const float s[3], float out_m[16]);
/* Splits an affine matrix into translation, rotation and (signed) scale. Shear is lost. */
void import_decompose_trs(const float m[16], float out_t[3], float out_q[4], float out_s[3]);
void import_mat4_mul(const float a[16], const float b[16], float out_m[16]);
/* Returns 0 when the matrix is singular or not finite. */
int import_mat4_invert(const float m[16], float out_m[16]);

#endif
