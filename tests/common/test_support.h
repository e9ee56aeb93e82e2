/* Shared helpers for the cmocka tests. SPDX-License-Identifier: MIT */
#ifndef SINEW_TEST_SUPPORT_H
#define SINEW_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sinew/sinew.h>

/* Path of a file under the test-data folder ($SINEW_DATA_DIR, else ../shared/data beside the
 * checkout), e.g. sinew_test_data_path("characters/cylinder/cylinder.ini"). When the file is
 * missing the calling cmocka test is skipped with a message, or fails when SINEW_REQUIRE_DATA=1.
 * The string is valid until the next call. */
const char* sinew_test_data_path(const char* relative);

/* The same for Debian's assimp-testmodels ($SINEW_ASSIMP_MODELS_DIR, else
 * /usr/share/assimp/models), e.g. sinew_test_assimp_path("X/BCN_Epileptic.X"). */
const char* sinew_test_assimp_path(const char* relative);

/* A logger that keeps the last message and counts messages per level. */
typedef struct sinew_test_log {
    sinew_logger logger;        /* pass &log.logger to the world or importer */
    int count[4];               /* per sinew_log_level */
    int total;
    char last[512];
} sinew_test_log;

void sinew_test_log_init(sinew_test_log* log);
void sinew_test_log_reset(sinew_test_log* log);

/* A world with the capture logger and `threads` threads (0: default). Fails the test on error. */
sinew_world* sinew_test_world(sinew_test_log* log, uint32_t threads);

#endif
