/* sinew-quality: pose a character with one backend and measure the skinned mesh.
 * SPDX-License-Identifier: MIT
 *
 * The measurement itself is sample_quality_run (samples/common/sample_quality.c), which the
 * quality tests call too; this file only turns the command line into its descriptor. */
#include <stdio.h>
#include <string.h>

#include <sinew/sinew.h>

#include "sample_character.h"
#include "sample_options.h"
#include "sample_quality.h"

static void usage(FILE* out)
{
    fprintf(out,
        "usage: sinew-quality --character PATH --backend NAME --pose POSE [options]\n"
        "\n"
        "Poses a character with one skinning backend and measures its render mesh: enclosed\n"
        "volume against the rest pose, intersecting triangle pairs, edge stretch extremes and\n"
        "non-finite vertices.\n"
        "\n"
        "  --character PATH   a text-format .ini character, or any file assimp reads\n"
        "  --backend NAME     skinning backend, e.g. lbs or dqs\n"
        "  --pose POSE        bend:DEG     rotate the joint about its bend axis\n"
        "                     twist:DEG    rotate the joint about the axis to its first child\n"
        "                     anim:K:FRAME animation K at step FRAME (60 steps per\n"
        "                                  second, looping), every step before it simulated\n"
        "                     axis:X:Y:Z:DEG rotate the joint by DEG about the model-space\n"
        "                                  direction (X, Y, Z) through it\n"
        "  --joint NAME       joint to bend or twist (default: middle of the longest chain)\n"
        "  --settle N         steps allowed to settle after the 30-step ramp (default 600)\n"
        "  --threads T        world threads (default: one per core)\n"
        "  --set KEY=VALUE    backend parameter (repeatable)\n"
        "  --json             print JSON instead of one line of text\n"
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

int main(int argc, char** argv)
{
    const char* character_path = NULL;
    const char* backend = NULL;
    const char* pose_text = NULL;
    const char* joint = NULL;
    uint32_t settle = SAMPLE_SETTLE_STEPS, threads = 0;
    int json = 0;
    sample_params params;
    memset(&params, 0, sizeof params);

    for (int i = 1; i < argc; ++i) {
        const char* value = NULL;
        int m;
        if (sample_option_flag(argv, i, "--help") || sample_option_flag(argv, i, "-h")) {
            usage(stdout);
            sample_params_free(&params);
            return SAMPLE_EXIT_OK;
        } else if (sample_option_flag(argv, i, "--json")) {
            json = 1;
        } else if ((m = sample_shared_option(argc, argv, &i, &character_path, &backend,
                                             &threads, &params)) != 0) {
            if (m < 0) goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--pose", &value)) != 0) {
            if (m < 0) goto usage_error;
            pose_text = value;
        } else if ((m = sample_option_value(argc, argv, &i, "--joint", &value)) != 0) {
            if (m < 0) goto usage_error;
            joint = value;
        } else if ((m = sample_option_value(argc, argv, &i, "--settle", &value)) != 0) {
            if (m < 0 || !sample_parse_u32("--settle", value, 1, 1000000, &settle)) goto usage_error;
        } else {
            fprintf(stderr, "sinew-quality: unknown option %s\n", argv[i]);
            goto usage_error;
        }
    }
    sample_pose_spec pose;
    if (!character_path || !backend || !pose_text) {
        fprintf(stderr, "sinew-quality: --character, --backend and --pose are required\n");
        goto usage_error;
    }
    if (!sample_pose_parse(pose_text, &pose)) goto usage_error;

    sample_character character;
    sinew_result r = sample_character_load(character_path, NULL, &character);
    if (r == SINEW_ERROR_FILE_NOT_FOUND && !sample_require_data()) {
        fprintf(stderr, "sinew-quality: skipped, %s is missing (SINEW_REQUIRE_DATA=1 makes this an error)\n",
                character_path);
        sample_params_free(&params);
        return SAMPLE_EXIT_SKIP;
    }
    if (r != SINEW_OK) {
        fprintf(stderr, "sinew-quality: cannot load %s: %s\n", character_path, sinew_result_string(r));
        sample_params_free(&params);
        return SAMPLE_EXIT_FAILURE;
    }

    sample_quality_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.character = &character;
    desc.backend = backend;
    desc.params = params.params;
    desc.param_count = params.count;
    desc.pose = pose;
    desc.joint = joint;
    desc.settle_steps = settle;
    desc.thread_count = threads;
    sample_quality_report report;
    r = sample_quality_run(&desc, &report);
    if (r == SINEW_OK) {
        if (json) sample_quality_print_json(stdout, &desc, pose_text, &report);
        else sample_quality_print_text(stdout, &desc, pose_text, &report);
    } else {
        fprintf(stderr, "sinew-quality: %s with backend %s failed: %s\n", character_path, backend,
                sinew_result_string(r));
    }
    sample_character_free(&character);
    sample_params_free(&params);
    return r == SINEW_OK ? SAMPLE_EXIT_OK : SAMPLE_EXIT_FAILURE;

usage_error:
    sample_params_free(&params);
    return bad_usage();
}
