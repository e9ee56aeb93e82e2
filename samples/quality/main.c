/* sinew-quality: pose a character with one backend and measure the skinned mesh.
 * SPDX-License-Identifier: MIT
 *
 * The measurement itself is sample_quality_run (samples/common/sample_quality.c), which the
 * quality tests call too; this file only turns the command line into its descriptor and
 * writes the measured mesh where --positions-out asks for it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew.h>
#if defined(SINEW_QUALITY_HAVE_VULKAN)
#include <sinew/sinew_vulkan.h>
#else
typedef struct sinew_vk_context sinew_vk_context;
#endif

#include "sample_character.h"
#include "sample_log.h"
#include "sample_off.h"
#include "sample_options.h"
#include "sample_quality.h"
#include "sample_tissue.h"

static void usage(FILE* out)
{
    fprintf(out,
        "usage: sinew-quality --character PATH --backend NAME --pose POSE [options]\n"
        "       sinew-quality --character PATH --backend NAME --pose anim:K --sweep A:B|loop+N\n"
        "                     [options]\n"
        "\n"
        "Poses a character with one skinning backend and measures its render mesh: enclosed\n"
        "volume against the rest pose (and around the posed joint), intersecting triangle pairs,\n"
        "edge stretch extremes and non-finite vertices; for ps, fps and fps-cuda also the\n"
        "tetrahedra of the tissue model. A sweep plays an animation and measures every frame of\n"
        "a range.\n"
        "\n"
        "  --character PATH   a text-format .ini character, or any file assimp reads\n"
        "  --backend NAME     skinning backend, e.g. lbs or dqs\n"
        "  --pose POSE        bend:DEG     rotate the joint about its bend axis\n"
        "                     twist:DEG    rotate the joint about the axis to its first child\n"
        "                     anim:K:FRAME animation K at frame FRAME (FRAME / 60 s of\n"
        "                                  animation, looping), every update before it\n"
        "                                  simulated\n"
        "                     axis:X:Y:Z:DEG rotate the joint by DEG about the model-space\n"
        "                                  direction (X, Y, Z) through it\n"
        "                     anim:K       with --sweep: animation K, frames from the sweep\n"
        "  --sweep A:B        play from step 0 and measure every frame from A to B (inclusive)\n"
        "  --sweep loop+N     every frame of one loop of the animation and the first N frames\n"
        "                     after its jump back to the start\n"
        "  --joint NAME       joint to bend or twist (default: middle of the longest chain)\n"
        "  --settle N         steps of 1/60 s allowed to settle after the ramp of 0.5 s\n"
        "                     (default 600)\n"
        "  --dt SECONDS       time of one update, sinew_world_update's dt (default 1/60);\n"
        "                     poses follow time whatever it is (a sweep needs 1/60)\n"
        "  --positions-out FILE.off  write the measured mesh (a sweep: its last frame) as OFF\n"
        "  --threads T        world threads (default: one per core)\n"
        "  --set KEY=VALUE    backend parameter (repeatable)\n"
        "  --json             print JSON instead of text\n"
        "  --help             print this and exit\n"
        "\n"
        "Exit codes: 0 done, 1 runtime error, 2 bad command line, 77 character file missing\n"
        "(unless SINEW_REQUIRE_DATA=1).\n");
}

static int bad_usage(void)
{
    usage(stderr);
    return SAMPLE_EXIT_USAGE;
}

/* What the command line asks for. */
typedef struct quality_options {
    const char* character_path;
    const char* backend;
    const char* pose_text;
    const char* joint;
    const char* sweep_text;
    const char* positions_out;
    uint32_t settle, threads;
    double dt;
    int json;
    sample_params params;
} quality_options;

/* One option at argv[*i]: 1 taken, 0 --help, -1 after printing the line that names the problem. */
static int parse_option(int argc, char** argv, int* i, quality_options* o)
{
    const char* value = NULL;
    int m;
    if (sample_option_flag(argv, *i, "--help") || sample_option_flag(argv, *i, "-h")) return 0;
    if (sample_option_flag(argv, *i, "--json")) {
        o->json = 1;
    } else if ((m = sample_shared_option(argc, argv, i, &o->character_path, &o->backend,
                                         &o->threads, &o->params)) != 0) {
        return m;
    } else if ((m = sample_option_value(argc, argv, i, "--pose", &value)) != 0) {
        o->pose_text = value;
        return m;
    } else if ((m = sample_option_value(argc, argv, i, "--joint", &value)) != 0) {
        o->joint = value;
        return m;
    } else if ((m = sample_option_value(argc, argv, i, "--sweep", &value)) != 0) {
        o->sweep_text = value;
        return m;
    } else if ((m = sample_option_value(argc, argv, i, "--settle", &value)) != 0) {
        return m < 0 || !sample_parse_u32("--settle", value, 1, 1000000, &o->settle) ? -1 : 1;
    } else if ((m = sample_option_value(argc, argv, i, "--dt", &value)) != 0) {
        return m < 0 || !sample_parse_seconds("--dt", value, &o->dt) ? -1 : 1;
    } else if ((m = sample_option_value(argc, argv, i, "--positions-out", &value)) != 0) {
        o->positions_out = value;
        return m;
    } else {
        fprintf(stderr, "sinew-quality: unknown option %s\n", argv[*i]);
        return -1;
    }
    return 1;
}

/* The checks between options; fills the pose and the sweep. 0 after printing a line. */
static int check_options(const quality_options* o, sample_pose_spec* pose, sample_sweep_spec* sweep)
{
    if (!o->character_path || !o->backend || !o->pose_text) {
        fprintf(stderr, "sinew-quality: --character, --backend and --pose are required\n");
        return 0;
    }
    memset(pose, 0, sizeof *pose);
    if (o->sweep_text) {
        if (!sample_sweep_parse(o->sweep_text, sweep)) return 0;
        if (!sample_sweep_pose_parse(o->pose_text, &pose->animation)) return 0;
        pose->kind = SAMPLE_POSE_ANIM;
    } else if (strncmp(o->pose_text, "anim:", 5) == 0 && !strchr(o->pose_text + 5, ':')) {
        fprintf(stderr, "option --pose: \"%s\" needs a frame (anim:K:FRAME) or --sweep\n",
                o->pose_text);
        return 0;
    } else if (!sample_pose_parse(o->pose_text, pose)) {
        return 0;
    }
    if (o->sweep_text && o->joint) {
        fprintf(stderr, "sinew-quality: --joint has no meaning in a sweep of an animation\n");
        return 0;
    }
    if (o->sweep_text && o->dt != SAMPLE_DEFAULT_DT) {
        fprintf(stderr, "sinew-quality: a sweep measures every frame and updates once per "
                "frame: --dt must be 1/60\n");
        return 0;
    }
    /* The model-shaping values are the tool's business too: it builds the tissue model. */
    sample_tissue_params shaping;
    return sample_tissue_params_parse(o->params.params, o->params.count, &shaping);
}

/* Runs the measurement (single pose or sweep) and prints it; the exit code. */
static int measure(const quality_options* o, const sample_quality_desc* desc,
                   const sample_sweep_spec* sweep)
{
    sinew_result r;
    if (o->sweep_text) {
        sample_sweep_report report;
        r = sample_quality_sweep(desc, sweep, &report);
        if (r == SINEW_OK && o->json) sample_sweep_print_json(stdout, desc, o->pose_text, &report);
        else if (r == SINEW_OK) sample_sweep_print_text(stdout, desc, o->pose_text, &report);
        sample_sweep_report_free(&report);
    } else {
        sample_quality_report report;
        r = sample_quality_run(desc, &report);
        if (r == SINEW_OK && o->json) {
            sample_quality_print_json(stdout, desc, o->pose_text, &report);
        } else if (r == SINEW_OK) {
            sample_quality_print_text(stdout, desc, o->pose_text, &report);
        }
    }
    if (r != SINEW_OK) {
        fprintf(stderr, "sinew-quality: %s with backend %s failed: %s\n", o->character_path,
                o->backend, sinew_result_string(r));
    }
    return r == SINEW_OK ? SAMPLE_EXIT_OK : SAMPLE_EXIT_FAILURE;
}

/* For a vk-* backend: a world with a Vulkan context and the Vulkan backends registered, which
 * the measurement runs in (desc->world); both left NULL for other backends. */
static sinew_result vulkan_world(const quality_options* o, sinew_world** world,
                                 sinew_vk_context** ctx)
{
    *world = NULL;
    *ctx = NULL;
    if (strncmp(o->backend, "vk-", 3) != 0) return SINEW_OK;
#if defined(SINEW_QUALITY_HAVE_VULKAN)
    sinew_world_desc wd = SINEW_WORLD_DESC_INIT;
    wd.logger = sample_stderr_logger();
    wd.thread_count = o->threads;
    sinew_result r = sinew_world_create(&wd, world);
    sinew_vk_context_desc cd = SINEW_VK_CONTEXT_DESC_INIT;
    cd.logger = sample_stderr_logger();
    if (r == SINEW_OK) r = sinew_vk_context_create(&cd, ctx);
    if (r == SINEW_OK) r = sinew_vk_register_backends(*world, *ctx);
    return r;
#else
    fprintf(stderr, "sinew-quality: this build has no Vulkan module\n");
    return SINEW_ERROR_UNSUPPORTED;
#endif
}

static void vulkan_world_free(sinew_world* world, sinew_vk_context* ctx)
{
    sinew_world_destroy(world);
#if defined(SINEW_QUALITY_HAVE_VULKAN)
    sinew_vk_context_destroy(ctx);
#else
    (void)ctx;
#endif
}

/* Loads the character and measures; the exit code. */
static int run(const quality_options* o, const sample_pose_spec* pose,
               const sample_sweep_spec* sweep)
{
    sample_character character;
    sinew_result r = sample_character_load(o->character_path, NULL, &character);
    if (r == SINEW_ERROR_FILE_NOT_FOUND && !sample_require_data()) {
        fprintf(stderr, "sinew-quality: skipped, %s is missing (SINEW_REQUIRE_DATA=1 makes this "
                "an error)\n", o->character_path);
        return SAMPLE_EXIT_SKIP;
    }
    if (r != SINEW_OK) {
        fprintf(stderr, "sinew-quality: cannot load %s: %s\n", o->character_path,
                sinew_result_string(r));
        return SAMPLE_EXIT_FAILURE;
    }
    sample_quality_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.character = &character;
    desc.backend = o->backend;
    desc.params = o->params.params;
    desc.param_count = o->params.count;
    desc.pose = *pose;
    desc.joint = o->joint;
    desc.settle_steps = o->settle;
    desc.thread_count = o->threads;
    desc.dt = o->dt;
    const sinew_mesh_desc* mesh = &character.rig.render_mesh;
    if (o->positions_out) desc.positions = malloc(sizeof(float) * 3 * mesh->vertex_count);
    int code = SAMPLE_EXIT_FAILURE;
    sinew_vk_context* vk = NULL;
    r = vulkan_world(o, &desc.world, &vk);
    if (r != SINEW_OK) {
        const char* require = getenv("SINEW_REQUIRE_VULKAN");
        int skip = r == SINEW_ERROR_NO_DEVICE && !(require && strcmp(require, "1") == 0);
        fprintf(stderr, "sinew-quality: %s needs a Vulkan device: %s%s\n", o->backend,
                sinew_result_string(r),
                skip ? " (skipped; SINEW_REQUIRE_VULKAN=1 makes this an error)" : "");
        if (skip) code = SAMPLE_EXIT_SKIP;
    } else if (o->positions_out && !desc.positions)
        fprintf(stderr, "sinew-quality: out of memory\n");
    else
        code = measure(o, &desc, sweep);
    vulkan_world_free(desc.world, vk);
    if (code == SAMPLE_EXIT_OK && desc.positions &&
        sample_off_write(o->positions_out, desc.positions, mesh->vertex_count, mesh->indices,
                         mesh->triangle_count) != SINEW_OK) {
        code = SAMPLE_EXIT_FAILURE;
    }
    free(desc.positions);
    sample_character_free(&character);
    return code;
}

int main(int argc, char** argv)
{
    quality_options o;
    memset(&o, 0, sizeof o);
    o.settle = SAMPLE_SETTLE_STEPS;
    o.dt = SAMPLE_DEFAULT_DT;
    for (int i = 1; i < argc; ++i) {
        int m = parse_option(argc, argv, &i, &o);
        if (m == 0) {
            usage(stdout);
            sample_params_free(&o.params);
            return SAMPLE_EXIT_OK;
        }
        if (m < 0) {
            sample_params_free(&o.params);
            return bad_usage();
        }
    }
    sample_pose_spec pose;
    sample_sweep_spec sweep;
    memset(&sweep, 0, sizeof sweep);
    int code = check_options(&o, &pose, &sweep) ? run(&o, &pose, &sweep) : bad_usage();
    sample_params_free(&o.params);
    return code;
}
