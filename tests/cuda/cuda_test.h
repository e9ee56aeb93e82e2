/* A minimal test harness for the CUDA tests, which must build without cmocka (the GPU machine
 * has only CUDA and CMake). A failed CHECK prints the expression and exits 1; a skip prints
 * why and exits 77 (ctest's SKIP_RETURN_CODE), or fails under SINEW_REQUIRE_GPU=1.
 * SPDX-License-Identifier: MIT */
#ifndef SINEW_CUDA_TEST_H
#define SINEW_CUDA_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_plugin.h>

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);     \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

static inline void cuda_test_skip(const char* why)
{
    const char* require = getenv("SINEW_REQUIRE_GPU");
    if (require && strcmp(require, "1") == 0) {
        fprintf(stderr, "FAIL (SINEW_REQUIRE_GPU=1): %s\n", why);
        exit(1);
    }
    printf("SKIP: %s\n", why);
    exit(77);
}

/* A skip for what the machine lacks besides a GPU (a Vulkan driver, an export capability): 77
 * even under SINEW_REQUIRE_GPU=1, with the reason on one line. */
static inline void cuda_test_skip_environment(const char* why)
{
    printf("SKIP: %s\n", why);
    exit(77);
}

/* A host table whose logger counts lines and keeps the last one. */
typedef struct cuda_test_log {
    int lines;
    char last[1024];
} cuda_test_log;

static inline void cuda_test_log_fn(sinew_log_level level, const char* message, void* user)
{
    cuda_test_log* log = (cuda_test_log*)user;
    log->lines++;
    snprintf(log->last, sizeof log->last, "%s", message);
    fprintf(stderr, "log[%d]: %s\n", (int)level, message);
}

static inline void* cuda_test_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    void* p = NULL;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    return posix_memalign(&p, alignment, size) == 0 ? p : NULL;
}

static inline void cuda_test_free(void* p, void* user)
{
    (void)user;
    free(p);
}

static inline void cuda_test_parallel_for(sinew_job_fn fn, void* data, uint32_t count,
                                          uint32_t grain, void* user)
{
    (void)grain;
    (void)user;
    if (count) fn(data, 0, count);
}

static inline sinew_host_api cuda_test_host(cuda_test_log* log)
{
    sinew_host_api host;
    memset(&host, 0, sizeof host);
    host.struct_size = sizeof host;
    host.allocator.alloc = cuda_test_alloc;
    host.allocator.free = cuda_test_free;
    host.logger.func = cuda_test_log_fn;
    host.logger.user = log;
    host.log_level = SINEW_LOG_DEBUG;
    host.jobs.parallel_for = cuda_test_parallel_for;
    host.jobs.thread_count = 1;
    return host;
}

/* Whether the test data file at path opens. If not: under SINEW_REQUIRE_DATA=1 one FAIL line
 * and exit(1); else one line "<skipped>: test data <path> is missing (set SINEW_DATA_DIR)"
 * and 0. */
static inline int cuda_test_data_present(const char* path, const char* skipped)
{
    FILE* f = fopen(path, "rb");
    if (f) {
        fclose(f);
        return 1;
    }
    const char* require = getenv("SINEW_REQUIRE_DATA");
    if (require && strcmp(require, "1") == 0) {
        fprintf(stderr, "FAIL (SINEW_REQUIRE_DATA=1): %s is missing\n", path);
        exit(1);
    }
    printf("%s: test data %s is missing (set SINEW_DATA_DIR)\n", skipped, path);
    return 0;
}

/* Test data: a xorshift generator over the caller's state (each file seeds its own), and a
 * number in [-0.5, 0.5) from it. */
static inline uint32_t cuda_test_rng(uint64_t* state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (uint32_t)(*state >> 11);
}
static inline double cuda_test_rng_unit(uint64_t* state)
{
    return (double)(cuda_test_rng(state) % 1000003u) / 1000003.0 - 0.5;
}

#endif
