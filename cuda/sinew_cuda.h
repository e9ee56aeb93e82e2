/* The fps-cuda plugin's device layer: finding a usable CUDA device, matching it to a Vulkan
 * device by UUID, and importing Vulkan's exported memory and timeline semaphores
 * (cudaImportExternalMemory / cudaImportExternalSemaphore). Plain C over the CUDA runtime API;
 * every function logs one line through the host and returns a sinew_result.
 * SPDX-License-Identifier: MIT */
#ifndef SINEW_CUDA_H
#define SINEW_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include <sinew/sinew_plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sinew_cuda_device_info {
    int ordinal;
    uint8_t uuid[16];
    char name[256];
    int sm_count;
    int compute_major, compute_minor;
    int cooperative_launch;             /* grid-wide synchronisation available */
    size_t total_memory;
} sinew_cuda_device_info;

/* SINEW_OK when a CUDA device can run kernels here; otherwise SINEW_ERROR_NO_DEVICE with one
 * line naming why (no driver, driver too old, no device). Never aborts the process. */
sinew_result sinew_cuda_probe(const sinew_host_api* host, int* out_device_count);

/* Properties of device `ordinal`. */
sinew_result sinew_cuda_device_info_get(const sinew_host_api* host, int ordinal,
                                        sinew_cuda_device_info* out);

/* The CUDA ordinal whose UUID equals `uuid` (a Vulkan VkPhysicalDeviceIDProperties
 * deviceUUID), or SINEW_ERROR_NO_DEVICE when the Vulkan device is not a CUDA device. */
sinew_result sinew_cuda_find_device_by_uuid(const sinew_host_api* host, const uint8_t uuid[16],
                                            int* out_ordinal);

/* Memory imported from an OPAQUE_FD export. On success CUDA owns the fd (the caller must
 * not close it, CUDA closes it with the import); on failure the fd stays the caller's. */
typedef struct sinew_cuda_imported_memory {
    void* handle;                       /* cudaExternalMemory_t */
    void* device_ptr;                   /* mapped range [offset, offset + size) */
    size_t size;
} sinew_cuda_imported_memory;

sinew_result sinew_cuda_import_memory_fd(const sinew_host_api* host, int fd,
                                         size_t allocation_size, size_t offset, size_t size,
                                         int dedicated, sinew_cuda_imported_memory* out);
void sinew_cuda_release_memory(sinew_cuda_imported_memory* memory);

/* A Vulkan timeline semaphore imported from an OPAQUE_FD export (fd ownership as above). */
typedef struct sinew_cuda_imported_timeline {
    void* handle;                       /* cudaExternalSemaphore_t */
} sinew_cuda_imported_timeline;

sinew_result sinew_cuda_import_timeline_fd(const sinew_host_api* host, int fd,
                                           sinew_cuda_imported_timeline* out);
void sinew_cuda_release_timeline(sinew_cuda_imported_timeline* timeline);

/* Enqueue on `stream` (a cudaStream_t; NULL for the default stream) a wait until the
 * timeline reaches `value`, or a signal of `value`. */
sinew_result sinew_cuda_timeline_wait(const sinew_host_api* host,
                                      const sinew_cuda_imported_timeline* timeline,
                                      uint64_t value, void* stream);
sinew_result sinew_cuda_timeline_signal(const sinew_host_api* host,
                                        const sinew_cuda_imported_timeline* timeline,
                                        uint64_t value, void* stream);

/* CUDA's own exportable allocation (virtual memory management, POSIX fd handle): used to test
 * the import path on machines without a Vulkan driver. *out_fd is a new fd owned by the
 * caller; free with sinew_cuda_free_exportable (which does not close the fd). */
typedef struct sinew_cuda_exportable {
    unsigned long long handle;          /* CUmemGenericAllocationHandle */
    void* device_ptr;
    size_t size;                        /* rounded up to the allocation granularity */
    int ordinal;
} sinew_cuda_exportable;

sinew_result sinew_cuda_alloc_exportable(const sinew_host_api* host, int ordinal, size_t size,
                                         sinew_cuda_exportable* out, int* out_fd);
void sinew_cuda_free_exportable(sinew_cuda_exportable* memory);

#ifdef __cplusplus
}
#endif

#endif
