/* The importer's public entry: argument checks, dispatch by file type, ownership.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* readlink, pthread_once */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import_internal.h"

/* The test data folder's defaults (sinew_import.h): beside an install's bin/, and beside the
 * checkout for a program run from its root. */
#define DATA_DIR_BESIDE_EXECUTABLE "/../share/sinew/data"
#define DATA_DIR_FROM_WORKING_DIR "../shared/data"

/* The first published size of the options (up to use_simulation_mesh): smaller is refused,
 * and flags are read only from options that reach them. */
#define OPTIONS_MIN_SIZE \
    ((uint32_t)(offsetof(sinew_import_options, use_simulation_mesh) + sizeof(uint32_t)))
#define OPTIONS_FLAGS_SIZE ((uint32_t)(offsetof(sinew_import_options, flags) + sizeof(uint32_t)))
#define IMPORT_FLAGS_KNOWN ((uint32_t)SINEW_IMPORT_ALLOW_ANY_PATH)

/* ---------------------------------------------------------------------------------------- */
/* Public API                                                                               */
/* ---------------------------------------------------------------------------------------- */

static void log_to_stderr(sinew_log_level level, const char* message, void* user)
{
    (void)user;
    if (level > SINEW_LOG_WARNING) return;
    fprintf(stderr, "sinew import %s: %s\n", level == SINEW_LOG_ERROR ? "error" : "warning",
            message);
}

static int has_extension(const char* path, const char* ext)
{
    size_t n = strlen(path), e = strlen(ext);
    if (n < e) return 0;
    for (size_t i = 0; i < e; ++i) {
        char c = path[n - e + i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != ext[i]) return 0;
    }
    return 1;
}

/* Takes the caller's options into ctx (its logger first, so later lines reach it). */
static sinew_result read_options(const sinew_import_options* options, import_context* ctx)
{
    /* A too small struct cannot be trusted for its logger either: report on stderr. */
    if (options->struct_size < OPTIONS_MIN_SIZE)
        return import_fail(ctx, SINEW_ERROR_STRUCT_SIZE,
                           "sinew_import_character: options struct_size %u is smaller than %u",
                           (unsigned)options->struct_size, (unsigned)OPTIONS_MIN_SIZE);
    if (options->logger) ctx->logger = *options->logger;
    if (options->next)
        return import_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_import_character: options carry an extension chain, "
                           "but the importer knows no extension type");
    if (options->use_simulation_mesh > 1)
        return import_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_import_character: use_simulation_mesh is %u, not 0 or 1",
                           (unsigned)options->use_simulation_mesh);
    ctx->use_simulation_mesh = options->use_simulation_mesh;
    ctx->flags = options->struct_size >= OPTIONS_FLAGS_SIZE ? options->flags : 0u;
    if (ctx->flags & ~IMPORT_FLAGS_KNOWN)
        return import_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_import_character: flags 0x%x has unknown bits 0x%x "
                           "(known: SINEW_IMPORT_ALLOW_ANY_PATH)", (unsigned)ctx->flags,
                           (unsigned)(ctx->flags & ~IMPORT_FLAGS_KNOWN));
    return SINEW_OK;
}

SINEW_API sinew_result sinew_import_character(const char* path,
                                              const sinew_import_options* options,
                                              sinew_character** out_character)
{
    import_context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.logger.func = log_to_stderr;
    ctx.path = path;

    if (out_character) *out_character = NULL;
    if (options) {
        sinew_result r = read_options(options, &ctx);
        if (r != SINEW_OK) return r;
    }
    if (!out_character)
        return import_fail(&ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_import_character: out_character is NULL");
    if (!path || !*path)
        return import_fail(&ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_import_character: path is %s", path ? "empty" : "NULL");

    int text_format = has_extension(path, ".ini");
#if !(defined(SINEW_WITH_ASSIMP) && SINEW_WITH_ASSIMP)
    if (!text_format) {
        sinew_result r = import_check_readable(&ctx, path);
        if (r != SINEW_OK) return r;
        return import_fail(&ctx, SINEW_ERROR_UNSUPPORTED,
                           "%s: only the .ini text format is built in (sinew_import was built "
                           "without assimp)", path);
    }
#endif

    sinew_character* character = (sinew_character*)import_calloc(1, sizeof *character);
    import_storage* storage = (import_storage*)import_calloc(1, sizeof *storage);
    if (!character || !storage) {
        free(character);
        free(storage);
        return import_fail(&ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    character->internal = storage;
    sinew_rig_desc init = SINEW_RIG_DESC_INIT;
    character->rig = init;
    character->name = import_path_stem(path);
    character->source_path = import_strdup(path);
    if (!character->name || !character->source_path) {
        sinew_import_free(character);
        return import_fail(&ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    }

    sinew_result r;
#if defined(SINEW_WITH_ASSIMP) && SINEW_WITH_ASSIMP
    r = text_format ? import_text_character(&ctx, character)
                    : import_assimp_character(&ctx, character);
#else
    r = import_text_character(&ctx, character);
#endif
    if (r != SINEW_OK) {
        sinew_import_free(character);
        return r;
    }
    import_finish_rig(character);
    *out_character = character;
    return SINEW_OK;
}

static void free_animation(sinew_animation* animation)
{
    free(animation->name);
    free(animation->key_times);
    free(animation->rotations);
    free(animation->translations);
    free(animation->scales);
}

SINEW_API void sinew_import_free(sinew_character* character)
{
    if (!character) return;
    import_storage* s = import_storage_of(character);
    if (s) {
        if (s->names) {
            for (uint32_t i = 0; i < s->name_count; ++i) free(s->names[i]);
            free(s->names);
        }
        free(s->parents);
        free(s->bind_matrices);
        free(s->positions);
        free(s->normals);
        free(s->indices);
        free(s->submesh_first_triangle);
        free(s->sim_positions);
        free(s->sim_indices);
        free(s->weight_offsets);
        free(s->weight_joints);
        free(s->weight_values);
        free(s);
    }
    if (character->animations) {
        for (uint32_t i = 0; i < character->animation_count; ++i)
            free_animation(&character->animations[i]);
        free(character->animations);
    }
    free(character->rest_local);
    free(character->name);
    free(character->source_path);
    free(character);
}

static char g_default_data_dir[4096];
static pthread_once_t g_default_data_dir_once = PTHREAD_ONCE_INIT;

static int is_directory(const char* path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* <executable's folder>/../share/sinew/data when that folder exists, else the folder relative
 * to the working directory. The executable comes from /proc/self/exe (Linux). */
static void find_default_data_dir(void)
{
    snprintf(g_default_data_dir, sizeof g_default_data_dir, "%s", DATA_DIR_FROM_WORKING_DIR);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return;
    exe[n] = '\0';
    char* slash = strrchr(exe, '/');
    if (!slash) return;
    *slash = '\0';
    char candidate[sizeof exe + sizeof DATA_DIR_BESIDE_EXECUTABLE];
    snprintf(candidate, sizeof candidate, "%s%s", exe, DATA_DIR_BESIDE_EXECUTABLE);
    if (is_directory(candidate) && strlen(candidate) < sizeof g_default_data_dir)
        memcpy(g_default_data_dir, candidate, strlen(candidate) + 1);
}

SINEW_API const char* sinew_import_data_dir(void)
{
    const char* dir = getenv("SINEW_DATA_DIR");
    if (dir && *dir) return dir;
    pthread_once(&g_default_data_dir_once, find_default_data_dir);
    return g_default_data_dir;
}

/* ---------------------------------------------------------------------------------------- */
/* Helpers shared by the loaders                                                            */
/* ---------------------------------------------------------------------------------------- */

static void log_line(const import_context* ctx, sinew_log_level level, const char* fmt,
                     va_list args)
{
    if (!ctx || !ctx->logger.func) return;
    char line[1024];
    vsnprintf(line, sizeof line, fmt, args);
    ctx->logger.func(level, line, ctx->logger.user);
}

void import_log(const import_context* ctx, sinew_log_level level, const char* fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_line(ctx, level, fmt, args);
    va_end(args);
}

sinew_result import_fail(const import_context* ctx, sinew_result result, const char* fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_line(ctx, SINEW_LOG_ERROR, fmt, args);
    va_end(args);
    return result;
}

void* import_calloc(size_t count, size_t size)
{
    if (count == 0 || size == 0 || count > (size_t)-1 / size) return NULL;
    return calloc(count, size);
}

char* import_strndup(const char* text, size_t length)
{
    char* copy = (char*)malloc(length + 1);
    if (!copy) return NULL;
    memcpy(copy, text, length);
    copy[length] = '\0';
    return copy;
}

char* import_strdup(const char* text)
{
    return import_strndup(text, strlen(text));
}

char* import_path_stem(const char* path)
{
    const char* base = strrchr(path, '/');
#ifdef _WIN32
    const char* back = strrchr(path, '\\');
    if (back && (!base || back > base)) base = back;
#endif
    base = base ? base + 1 : path;
    const char* dot = strrchr(base, '.');
    size_t length = (dot && dot != base) ? (size_t)(dot - base) : strlen(base);
    return import_strndup(base, length);
}

void import_finish_rig(sinew_character* character)
{
    import_storage* s = import_storage_of(character);
    sinew_rig_desc* rig = &character->rig;
    rig->name = character->name;
    rig->skeleton.parents = s->parents;
    rig->skeleton.bind_matrices = s->bind_matrices;
    rig->skeleton.names = (const char* const*)s->names;
    rig->render_mesh.positions = s->positions;
    rig->render_mesh.normals = s->normals;
    rig->render_mesh.indices = s->indices;
    rig->render_mesh.submesh_first_triangle = s->submesh_first_triangle;
    rig->simulation_mesh.positions = s->sim_positions;
    rig->simulation_mesh.indices = s->sim_indices;
    rig->weights.offsets = s->weight_offsets;
    rig->weights.joints = s->weight_joints;
    rig->weights.weights = s->weight_values;
    rig->max_influences = 0;
}

sinew_result import_rest_local_from_bind(const import_context* ctx, sinew_character* character)
{
    import_storage* s = import_storage_of(character);
    uint32_t n = character->rig.skeleton.joint_count;
    character->rest_local = (float*)import_calloc((size_t)n * 16, sizeof(float));
    if (!character->rest_local)
        return import_fail(ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", ctx->path);
    for (uint32_t j = 0; j < n; ++j) {
        float* local = character->rest_local + (size_t)j * 16;
        const float* bind = s->bind_matrices + (size_t)j * 16;
        int32_t p = s->parents[j];
        if (p < 0) {
            memcpy(local, bind, 16 * sizeof(float));
            continue;
        }
        float inverse_parent[16];
        if (!import_mat4_invert(s->bind_matrices + (size_t)p * 16, inverse_parent))
            return import_fail(ctx, SINEW_ERROR_SKELETON,
                               "%s: the bind transform of joint %u ('%s') is singular",
                               ctx->path, (unsigned)p,
                               s->names && s->names[p] ? s->names[p] : "");
        import_mat4_mul(inverse_parent, bind, local);
    }
    return SINEW_OK;
}
