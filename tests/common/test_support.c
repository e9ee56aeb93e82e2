/* Shared helpers for the cmocka tests. SPDX-License-Identifier: MIT */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char g_path[4096];

static const char* find_file(const char* env_dir, const char* default_dir, const char* relative,
                             const char* what)
{
    const char* dir = getenv(env_dir);
    if (!dir || !*dir) dir = default_dir;
    snprintf(g_path, sizeof g_path, "%s/%s", dir, relative);
    struct stat st;
    if (stat(g_path, &st) == 0) return g_path;
    const char* require = getenv("SINEW_REQUIRE_DATA");
    if (require && strcmp(require, "1") == 0) {
        fail_msg("%s %s is missing and SINEW_REQUIRE_DATA=1", what, g_path);
    }
    print_message("SKIP: %s %s is missing (set %s)\n", what, g_path, env_dir);
    skip();
    return NULL;
}

const char* sinew_test_data_path(const char* relative)
{
    return find_file("SINEW_DATA_DIR", SINEW_DEFAULT_DATA_DIR, relative, "test data");
}

const char* sinew_test_assimp_path(const char* relative)
{
    return find_file("SINEW_ASSIMP_MODELS_DIR", "/usr/share/assimp/models", relative,
                     "assimp test model");
}

static void capture(sinew_log_level level, const char* message, void* user)
{
    sinew_test_log* log = (sinew_test_log*)user;
    if ((int)level >= 0 && (int)level < 4) log->count[level]++;
    log->total++;
    snprintf(log->last, sizeof log->last, "%s", message);
    if (getenv("SINEW_TEST_VERBOSE")) fprintf(stderr, "[log %d] %s\n", (int)level, message);
}

void sinew_test_log_init(sinew_test_log* log)
{
    memset(log, 0, sizeof *log);
    log->logger.func = capture;
    log->logger.user = log;
}

void sinew_test_log_reset(sinew_test_log* log)
{
    memset(log->count, 0, sizeof log->count);
    log->total = 0;
    log->last[0] = '\0';
}

sinew_world* sinew_test_world(sinew_test_log* log, uint32_t threads)
{
    sinew_world_desc desc = SINEW_WORLD_DESC_INIT;
    desc.logger = &log->logger;
    desc.thread_count = threads;
    sinew_world* world = NULL;
    sinew_result r = sinew_world_create(&desc, &world);
    if (r != SINEW_OK) fail_msg("sinew_world_create: %s", sinew_result_string(r));
    return world;
}
