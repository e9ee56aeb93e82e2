/* sinew-bake: compute a character's pose-independent preparation once and write a baked file.
 * SPDX-License-Identifier: MIT
 *
 * Imports the character, creates its rig (automatic weights when it has none), runs the bake
 * function of each backend named that has one, writes the result with
 * sinew_bake_write_backends, and reads the file back with sinew_rig_load_baked as a check. Baking can take a minute (projective
 * skinning with collision candidates), so progress goes to stderr: a line per phase with its
 * duration, and the runtime's and the backend's INFO lines, each stamped with the seconds
 * since start. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <sinew/sinew.h>
#include <sinew/sinew_bake.h>

#include "sample_character.h"
#include "sample_options.h"
#include "sample_stats.h"

static void usage(FILE* out)
{
    fprintf(out,
        "usage: sinew-bake --character PATH --backend NAME[,NAME...] --out FILE [options]\n"
        "\n"
        "Imports a character, creates its rig (automatic weights when it carries none), runs\n"
        "each backend's bake and writes everything to a baked file, which sinew_rig_load_baked,\n"
        "sinew-bench and sinew-quality load instead of the character; a skin of any backend in\n"
        "it (or a swap to one) restores from its blob. A backend with nothing to bake (lbs,\n"
        "dqs) adds nothing: alone it gives a file with the rig only, which still spares the\n"
        "import and the automatic weights. Progress goes to stderr, one summary line to\n"
        "stdout.\n"
        "\n"
        "  --character PATH   a text-format .ini character, any file assimp reads, or a baked\n"
        "                     file (to bake its rig for another backend)\n"
        "  --backend LIST     the backends to bake for, comma-separated (at most 8), e.g. ps\n"
        "                     or ps,fps\n"
        "  --out FILE         the file to write (as FILE.tmp first, renamed when complete)\n"
        "  --set KEY=VALUE    backend parameter (repeatable), given to every backend of the\n"
        "                     list; recorded in the file\n"
        "  --threads T        world threads (default: one per core)\n"
        "  --quiet            no progress lines, only warnings and errors\n"
        "  --help             print this and exit\n"
        "\n"
        "Exit codes: 0 done, 1 runtime error, 2 bad command line, 77 character file missing\n"
        "(unless SINEW_REQUIRE_DATA=1).\n");
}

static double g_start;
static int g_quiet;

/* One progress line on stderr, stamped with the seconds since start. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void progress(const char* fmt, ...)
{
    if (g_quiet) return;
    char line[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(line, sizeof line, fmt, args);
    va_end(args);
    fprintf(stderr, "[%8.3f s] sinew-bake: %s\n", sample_now_seconds() - g_start, line);
}

/* The runtime's and the backend's lines, stamped the same way. */
static void log_line(sinew_log_level level, const char* message, void* user)
{
    (void)user;
    static const char* const names[] = { "error", "warning", "info", "debug" };
    if (g_quiet && level > SINEW_LOG_WARNING) return;
    fprintf(stderr, "[%8.3f s] sinew %s: %s\n", sample_now_seconds() - g_start,
            (unsigned)level < 4u ? names[level] : "log", message);
}

static int fail(const char* what, sinew_result r)
{
    fprintf(stderr, "sinew-bake: %s failed: %s\n", what, sinew_result_string(r));
    return SAMPLE_EXIT_FAILURE;
}

/* Is `name` registered? Checked before the import, which can take seconds. */
static int check_backend(const sinew_world* world, const char* name)
{
    char list[512] = "";
    for (uint32_t i = 0; i < sinew_world_backend_count(world); ++i) {
        const char* known = sinew_world_backend_name(world, i);
        if (strcmp(known, name) == 0) return 1;
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", known);
    }
    fprintf(stderr, "sinew-bake: no backend named \"%s\" (registered: %s): %s\n", name, list,
            sinew_result_string(SINEW_ERROR_UNKNOWN_BACKEND));
    return 0;
}

/* The comma-separated backend names of `text` into names[] (at most SINEW_BAKE_MAX_BACKENDS,
 * each checked against the registry), in `storage`. The count, 0 after a line on stderr. */
static uint32_t split_backends(const sinew_world* world, const char* text, char* storage,
                               size_t size, const char** names)
{
    snprintf(storage, size, "%s", text);
    uint32_t count = 0;
    for (char* name = strtok(storage, ","); name; name = strtok(NULL, ",")) {
        if (count == SINEW_BAKE_MAX_BACKENDS) {
            fprintf(stderr, "sinew-bake: at most %u backends\n", SINEW_BAKE_MAX_BACKENDS);
            return 0;
        }
        if (!check_backend(world, name)) return 0;
        names[count++] = name;
    }
    if (count == 0) fprintf(stderr, "sinew-bake: --backend %s names no backend\n", text);
    return count;
}

/* One summary line: the file, the rig and each backend's blob in it. */
static void print_summary(sinew_world* world, sinew_rig loaded, const char* out_path,
                          const char* rig_name, const char* backends)
{
    struct stat st;
    long long file_size = stat(out_path, &st) == 0 ? (long long)st.st_size : -1;
    uint32_t count = 0;
    sinew_rig_get_baked_count(world, loaded, &count);
    printf("sinew-bake: wrote %s (%lld bytes): rig \"%s\"", out_path, file_size, rig_name);
    for (uint32_t i = 0; i < count; ++i) {
        const char* name = NULL;
        size_t size = 0;
        sinew_rig_get_baked_at(world, loaded, i, &name, NULL, &size);
        printf("%s %zu bytes of backend \"%s\"", i ? "," : " and", size, name);
    }
    if (count == 0) printf(" only (backend \"%s\" has nothing to bake)", backends);
    printf(" in %.3f s\n", sample_now_seconds() - g_start);
}

/* The phases after the import: rig, bake and write, read back. */
static int bake(const sample_character* character, sinew_world* world, const char** backends,
                uint32_t backend_count, const char* backend_text, const sample_params* params,
                const char* out_path)
{
    const sinew_rig_desc* desc = &character->rig;
    const int automatic = desc->weights.offsets == NULL;
    progress("creating the rig (%s)", automatic ? "computing automatic weights" : "given weights");
    double t = sample_now_seconds();
    sinew_rig rig;
    sinew_result r = sinew_rig_create(world, desc, &rig);
    if (r != SINEW_OK) return fail("sinew_rig_create", r);
    sinew_rig_info info = SINEW_RIG_INFO_INIT;
    sinew_rig_get_info(world, rig, &info);
    progress("rig created in %.3f s: %u joints, %u vertices, %u triangles, %u simulation "
             "vertices, up to %u influences", sample_now_seconds() - t, info.joint_count,
             info.vertex_count, info.triangle_count, info.simulation_vertex_count,
             info.max_influences);

    progress("baking for %s and writing %s", backend_text, out_path);
    t = sample_now_seconds();
    sinew_bake_backend list[SINEW_BAKE_MAX_BACKENDS];
    for (uint32_t i = 0; i < backend_count; ++i) {
        list[i].name = backends[i];
        list[i].params = params->params;
        list[i].param_count = params->count;
    }
    r = sinew_bake_write_backends(world, rig, list, backend_count, out_path);
    if (r != SINEW_OK) return fail("sinew_bake_write_backends", r);
    progress("baked and written in %.3f s", sample_now_seconds() - t);

    /* Reading the file back proves it complete and valid before anyone ships it. */
    t = sample_now_seconds();
    sinew_rig loaded;
    r = sinew_rig_load_baked(world, out_path, &loaded);
    if (r != SINEW_OK) return fail("reading the baked file back", r);
    progress("read back in %.3f s", sample_now_seconds() - t);
    print_summary(world, loaded, out_path, character->name, backend_text);
    return SAMPLE_EXIT_OK;
}

int main(int argc, char** argv)
{
    g_start = sample_now_seconds();
    const char* character_path = NULL;
    const char* backend = NULL;
    const char* out_path = NULL;
    uint32_t threads = 0;
    sample_params params;
    memset(&params, 0, sizeof params);

    for (int i = 1; i < argc; ++i) {
        const char* value = NULL;
        int m;
        if (sample_option_flag(argv, i, "--help") || sample_option_flag(argv, i, "-h")) {
            usage(stdout);
            sample_params_free(&params);
            return SAMPLE_EXIT_OK;
        } else if (sample_option_flag(argv, i, "--quiet")) {
            g_quiet = 1;
        } else if ((m = sample_shared_option(argc, argv, &i, &character_path, &backend,
                                             &threads, &params)) != 0) {
            if (m < 0) goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--out", &value)) != 0) {
            if (m < 0) goto usage_error;
            out_path = value;
        } else {
            fprintf(stderr, "sinew-bake: unknown option %s\n", argv[i]);
            goto usage_error;
        }
    }
    if (!character_path || !backend || !out_path || !*backend || !*out_path) {
        fprintf(stderr, "sinew-bake: --character, --backend and --out are required and not empty\n");
        goto usage_error;
    }

    sinew_logger logger = { log_line, NULL };
    sinew_world_desc world_desc = SINEW_WORLD_DESC_INIT;
    world_desc.logger = &logger;
    world_desc.log_level = SINEW_LOG_INFO;
    world_desc.thread_count = threads;
    sinew_world* world = NULL;
    sinew_result r = sinew_world_create(&world_desc, &world);
    if (r != SINEW_OK) {
        sample_params_free(&params);
        return fail("sinew_world_create", r);
    }
    progress("%u threads", sinew_world_thread_count(world));
    char names_text[1024];
    const char* names[SINEW_BAKE_MAX_BACKENDS];
    uint32_t name_count = split_backends(world, backend, names_text, sizeof names_text, names);
    if (name_count == 0) {
        sinew_world_destroy(world);
        sample_params_free(&params);
        return SAMPLE_EXIT_FAILURE;
    }

    progress("importing %s", character_path);
    double t = sample_now_seconds();
    sample_character character;
    r = sample_character_load(character_path, &logger, &character);
    int status = SAMPLE_EXIT_OK;
    if (r == SINEW_ERROR_FILE_NOT_FOUND && !sample_require_data()) {
        fprintf(stderr, "sinew-bake: skipped, %s is missing (SINEW_REQUIRE_DATA=1 makes this an "
                "error)\n", character_path);
        status = SAMPLE_EXIT_SKIP;
    } else if (r != SINEW_OK) {
        fprintf(stderr, "sinew-bake: cannot load %s: %s\n", character_path, sinew_result_string(r));
        status = SAMPLE_EXIT_FAILURE;
    } else {
        progress("imported \"%s\" in %.3f s", character.name, sample_now_seconds() - t);
        status = bake(&character, world, names, name_count, backend, &params, out_path);
        sample_character_free(&character);
    }
    sinew_world_destroy(world);
    sample_params_free(&params);
    return status;

usage_error:
    sample_params_free(&params);
    usage(stderr);
    return SAMPLE_EXIT_USAGE;
}
