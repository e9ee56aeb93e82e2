/* GPU test: memory exported as an OPAQUE/POSIX fd is imported through
 * cudaImportExternalMemory and the two mappings see each other's writes. Where the machine
 * has no Vulkan driver, CUDA imports an fd that CUDA itself exported (VMM, POSIX fd).
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200112L
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "cuda_test.h"
#include "sinew_cuda.h"

int main(void)
{
    cuda_test_log log = {0};
    sinew_host_api host = cuda_test_host(&log);
    int count = 0;
    if (sinew_cuda_probe(&host, &count) != SINEW_OK) cuda_test_skip("no CUDA device");

    enum { N = 300000 };
    sinew_cuda_exportable exported;
    int fd = -1;
    sinew_result r = sinew_cuda_alloc_exportable(&host, 0, N * sizeof(float), &exported, &fd);
    if (r == SINEW_ERROR_UNSUPPORTED) cuda_test_skip("the driver cannot export POSIX fds");
    CHECK(r == SINEW_OK);
    CHECK(fd >= 0);
    CHECK(exported.size >= N * sizeof(float));

    sinew_cuda_imported_memory imported;
    size_t offset = 4096; /* a range inside the allocation, like one slot of an output */
    size_t bytes = (N - 1024) * sizeof(float);
    r = sinew_cuda_import_memory_fd(&host, fd, exported.size, offset, bytes, 0, &imported);
    CHECK(r == SINEW_OK); /* CUDA owns fd now */

    float* host_in = malloc(N * sizeof(float));
    float* host_out = malloc(N * sizeof(float));
    CHECK(host_in && host_out);
    for (int i = 0; i < N; i++) host_in[i] = (float)i * 0.5f - 7.0f;
    /* Write through the exporter's mapping, read through the importer's. */
    CHECK(cudaMemcpy(exported.device_ptr, host_in, N * sizeof(float), cudaMemcpyHostToDevice) ==
          cudaSuccess);
    CHECK(cudaMemcpy(host_out, imported.device_ptr, bytes, cudaMemcpyDeviceToHost) ==
          cudaSuccess);
    CHECK(memcmp(host_out, host_in + offset / sizeof(float), bytes) == 0);
    /* And the other way round. */
    for (int i = 0; i < N; i++) host_in[i] = -(float)i;
    CHECK(cudaMemcpy(imported.device_ptr, host_in, bytes, cudaMemcpyHostToDevice) ==
          cudaSuccess);
    CHECK(cudaMemcpy(host_out, exported.device_ptr, N * sizeof(float),
                     cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(memcmp(host_out + offset / sizeof(float), host_in, bytes) == 0);

    sinew_cuda_release_memory(&imported);
    sinew_cuda_free_exportable(&exported);
    free(host_in);
    free(host_out);
    printf("ok: %zu bytes shared through an fd\n", bytes);
    return 0;
}
