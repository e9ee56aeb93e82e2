/* The CUDA device layer without a GPU requirement: the probe answers cleanly either way, and
 * bad arguments are refused before any CUDA call. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200112L
#include "cuda_test.h"
#include "sinew_cuda.h"

int main(void)
{
    cuda_test_log log = {0};
    sinew_host_api host = cuda_test_host(&log);

    int count = -1;
    sinew_result r = sinew_cuda_probe(&host, &count);
    if (r == SINEW_OK) {
        CHECK(count > 0);
        CHECK(log.lines == 0);
        sinew_cuda_device_info info;
        CHECK(sinew_cuda_device_info_get(&host, 0, &info) == SINEW_OK);
        printf("device 0: %s, sm %d.%d, %d SMs\n", info.name, info.compute_major,
               info.compute_minor, info.sm_count);
        int found = -1;
        CHECK(sinew_cuda_find_device_by_uuid(&host, info.uuid, &found) == SINEW_OK);
        CHECK(found == 0);
        uint8_t bogus[16];
        memset(bogus, 0xA5, sizeof bogus);
        log.lines = 0;
        CHECK(sinew_cuda_find_device_by_uuid(&host, bogus, &found) == SINEW_ERROR_NO_DEVICE);
        CHECK(log.lines == 1);
    } else {
        /* No GPU or no driver: one line that says so, never a crash. */
        CHECK(r == SINEW_ERROR_NO_DEVICE);
        CHECK(count == 0);
        CHECK(log.lines == 1);
        CHECK(strstr(log.last, "cuda") != NULL);
        printf("no CUDA device (expected on CI): %s\n", log.last);
    }

    /* Arguments are checked before CUDA is asked. */
    sinew_cuda_imported_memory mem;
    log.lines = 0;
    CHECK(sinew_cuda_import_memory_fd(&host, -1, 4096, 0, 4096, 0, &mem) ==
          SINEW_ERROR_INVALID_ARGUMENT);
    CHECK(sinew_cuda_import_memory_fd(&host, 3, 4096, 4000, 200, 0, &mem) ==
          SINEW_ERROR_INVALID_ARGUMENT);
    CHECK(sinew_cuda_import_memory_fd(&host, 3, 4096, 0, 0, 0, &mem) ==
          SINEW_ERROR_INVALID_ARGUMENT);
    CHECK(log.lines == 3);
    sinew_cuda_imported_timeline sem;
    CHECK(sinew_cuda_import_timeline_fd(&host, -5, &sem) == SINEW_ERROR_INVALID_ARGUMENT);
    CHECK(sinew_cuda_timeline_signal(&host, NULL, 1, NULL) == SINEW_ERROR_INVALID_ARGUMENT);
    CHECK(sinew_cuda_device_info_get(&host, 0, NULL) == SINEW_ERROR_INVALID_ARGUMENT);
    /* Releasing nothing is harmless. */
    sinew_cuda_release_memory(NULL);
    sinew_cuda_release_timeline(NULL);
    printf("ok\n");
    return 0;
}
