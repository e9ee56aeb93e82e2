/* sinew-cuda-bench: fps-cuda's time per step on a test character (characters/male by default;
 * 10 PD x 10 PCG iterations), one character alone and `copies` characters batched, all on one
 * rig baked for fps-cuda first so that the copies restore their preparation. GPU time per step comes from
 * CUDA events the plugin records around each step's launches (its profile=1 line); wall time
 * per sinew_world_update (median, p95) includes the host's target update and the wait.
 * Prints one JSON object. Exit 77 without a GPU or the data. The targets on an H100:
 * <= 0.5 ms (male), <= 8 ms (64 copies). Never used as a test threshold.
 * --collisions 1 runs fps's global collisions (Sec. 6: detection on the host each step, the
 * constraints on the device); the plugin's profile lines then add the host's collision time per
 * step and the mean pair count (the target: male with collisions at fps-cuda speed).
 * Usage: sinew-cuda-bench [--frames N] [--copies K] [--launch auto|graph|cooperative|stream]
 *                         [--collisions 0|1] [--character NAME]
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "fps_cuda_test_world.h"

/* The profile lines: per batch, and with collisions one per skin (up to 64 kept). */
#define PROFILE_LINES 72
static char g_profile[PROFILE_LINES][512];
static int g_profile_count;

static void bench_log(sinew_log_level level, const char* message, void* user)
{
    (void)user;
    if (strstr(message, "fps-cuda profile") && g_profile_count < PROFILE_LINES)
        snprintf(g_profile[g_profile_count++], sizeof g_profile[0], "%s", message);
    else if (level <= SINEW_LOG_WARNING)
        fprintf(stderr, "%s\n", message);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* Runs `copies` fps-cuda skins (batched when copies > 1) for `frames` timed updates. */
static void run(sinew_world* world, sinew_rig rig, const sinew_character* c, uint32_t copies,
                uint32_t frames, const char* launch, const char* collisions, double* median,
                double* p95)
{
    sinew_param params[4] = {{"profile", "1"}, {"launch", launch}, {"collisions", collisions},
                             {"batch", "bench"}};
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = rig;
    desc.backend = "fps-cuda";
    desc.params = params;
    desc.param_count = copies > 1 ? 4u : 3u;
    sinew_skin* skins = calloc(copies, sizeof *skins);
    double* t = calloc(frames, sizeof *t);
    float* local = malloc((size_t)c->rig.skeleton.joint_count * 64u);
    CHECK(skins && t && local);
    for (uint32_t i = 0; i < copies; ++i) {
        sinew_result r = sinew_world_add_skin(world, &desc, &skins[i]);
        if (r == SINEW_ERROR_BACKEND_UNAVAILABLE) cuda_test_skip("no CUDA device");
        CHECK(r == SINEW_OK);
    }
    for (uint32_t f = 0; f < 10u + frames; ++f) {
        fpsc_test_pose(world, skins, copies, c, (float)f / 30.0f, local);
        double a = now();
        CHECK(sinew_world_update(world, 1.0f / 60.0f) == SINEW_OK);
        if (f >= 10u) t[f - 10u] = now() - a;
    }
    qsort(t, frames, sizeof *t, cmp_double);
    *median = 1e3 * t[frames / 2u];
    *p95 = 1e3 * t[(frames * 95u) / 100u < frames ? (frames * 95u) / 100u : frames - 1u];
    for (uint32_t i = 0; i < copies; ++i) CHECK(sinew_world_remove_skin(world, skins[i]) == SINEW_OK);
    free(skins);
    free(t);
    free(local);
}

int main(int argc, char** argv)
{
    uint32_t frames = 200, copies = 64;
    const char* launch = "auto";
    const char* collisions = "0";
    const char* character = "male";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--frames") == 0) frames = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--copies") == 0) copies = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--launch") == 0) launch = argv[i + 1];
        else if (strcmp(argv[i], "--collisions") == 0) collisions = argv[i + 1];
        else if (strcmp(argv[i], "--character") == 0) character = argv[i + 1];
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (frames < 1 || copies < 1) {
        fprintf(stderr, "--frames and --copies must be at least 1\n");
        return 2;
    }
    if (strcmp(collisions, "0") != 0 && strcmp(collisions, "1") != 0) {
        fprintf(stderr, "--collisions must be 0 or 1\n");
        return 2;
    }
    sinew_character* c = fpsc_test_character(character);
    sinew_logger logger = {bench_log, NULL};
    sinew_world_desc wd = SINEW_WORLD_DESC_INIT;
    wd.logger = &logger;
    wd.log_level = SINEW_LOG_INFO;
    sinew_world* world = NULL;
    CHECK(sinew_world_create(&wd, &world) == SINEW_OK);
    CHECK(sinew_world_load_plugin(world, FPSC_PLUGIN_PATH) == SINEW_OK);
    if (sinew_world_probe_backend(world, "fps-cuda") != SINEW_OK) cuda_test_skip("no CUDA device");
    sinew_rig rig = fpsc_test_baked_rig(world, c, NULL, 0);
    double m1, p1, mk, pk;
    run(world, rig, c, 1, frames, launch, collisions, &m1, &p1);
    run(world, rig, c, copies, frames, launch, collisions, &mk, &pk);
    printf("{\"character\": \"%s\", \"frames\": %u, \"launch\": \"%s\", "
           "\"collisions\": %s,\n"
           " \"alone\": {\"wall_ms_median\": %.4f, \"wall_ms_p95\": %.4f},\n"
           " \"batched\": {\"copies\": %u, \"wall_ms_median\": %.4f, \"wall_ms_p95\": %.4f},\n"
           " \"gpu\": [", character, frames, launch, collisions, m1, p1, copies, mk, pk);
    for (int i = 0; i < g_profile_count; ++i) printf("%s\"%s\"", i ? ", " : "", g_profile[i]);
    printf("]}\n");
    sinew_world_destroy(world);
    sinew_import_free(c);
    return 0;
}
