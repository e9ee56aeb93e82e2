/* CUDA device discovery and external memory / semaphore import (sinew_cuda.h).
 * SPDX-License-Identifier: MIT */
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <sinew/sinew_host.h>

#include "sinew_cuda.h"

static sinew_result cuda_fail(const sinew_host_api* host, cudaError_t e, const char* what)
{
    sinew_result r = SINEW_ERROR_DEVICE;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ||
        e == cudaErrorInitializationError || e == cudaErrorDevicesUnavailable)
        r = SINEW_ERROR_NO_DEVICE;
    else if (e == cudaErrorMemoryAllocation)
        r = SINEW_ERROR_OUT_OF_MEMORY;
    else if (e == cudaErrorNotSupported || e == cudaErrorInvalidValue)
        r = SINEW_ERROR_UNSUPPORTED;
    /* Clear the runtime's sticky "last error" so later calls report their own failure. */
    (void)cudaGetLastError();
    return sinew_host_fail(host, r, "cuda: %s failed: %s (%s)", what, cudaGetErrorName(e),
                           cudaGetErrorString(e));
}

sinew_result sinew_cuda_probe(const sinew_host_api* host, int* out_device_count)
{
    if (out_device_count) *out_device_count = 0;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) return cuda_fail(host, e, "cudaGetDeviceCount (is an NVIDIA driver installed?)");
    if (count <= 0)
        return sinew_host_fail(host, SINEW_ERROR_NO_DEVICE, "cuda: no CUDA device found");
    if (out_device_count) *out_device_count = count;
    return SINEW_OK;
}

sinew_result sinew_cuda_device_info_get(const sinew_host_api* host, int ordinal,
                                        sinew_cuda_device_info* out)
{
    if (!out)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_cuda_device_info_get: out is NULL");
    memset(out, 0, sizeof *out);
    int count = 0;
    sinew_result r = sinew_cuda_probe(host, &count);
    if (r != SINEW_OK) return r;
    if (ordinal < 0 || ordinal >= count)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "cuda: device ordinal %d out of range (%d devices)", ordinal,
                               count);
    struct cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, ordinal);
    if (e != cudaSuccess) return cuda_fail(host, e, "cudaGetDeviceProperties");
    out->ordinal = ordinal;
    memcpy(out->uuid, prop.uuid.bytes, 16);
    memcpy(out->name, prop.name, sizeof out->name - 1);
    out->sm_count = prop.multiProcessorCount;
    out->compute_major = prop.major;
    out->compute_minor = prop.minor;
    out->total_memory = prop.totalGlobalMem;
    int coop = 0;
    if (cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, ordinal) == cudaSuccess)
        out->cooperative_launch = coop;
    return SINEW_OK;
}

sinew_result sinew_cuda_find_device_by_uuid(const sinew_host_api* host, const uint8_t uuid[16],
                                            int* out_ordinal)
{
    if (!uuid || !out_ordinal)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_cuda_find_device_by_uuid: uuid and out are required");
    *out_ordinal = -1;
    int count = 0;
    sinew_result r = sinew_cuda_probe(host, &count);
    if (r != SINEW_OK) return r;
    for (int i = 0; i < count; i++) {
        struct cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
        if (memcmp(prop.uuid.bytes, uuid, 16) == 0) {
            *out_ordinal = i;
            return SINEW_OK;
        }
    }
    return sinew_host_fail(host, SINEW_ERROR_NO_DEVICE,
                           "cuda: no CUDA device has the Vulkan device's UUID (%d devices)",
                           count);
}

sinew_result sinew_cuda_import_memory_fd(const sinew_host_api* host, int fd,
                                         size_t allocation_size, size_t offset, size_t size,
                                         int dedicated, sinew_cuda_imported_memory* out)
{
    if (!out || fd < 0 || size == 0 || offset > allocation_size ||
        size > allocation_size - offset)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_cuda_import_memory_fd: bad arguments (fd %d, range "
                               "%zu+%zu of %zu)", fd, offset, size, allocation_size);
    memset(out, 0, sizeof *out);
    struct cudaExternalMemoryHandleDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.type = cudaExternalMemoryHandleTypeOpaqueFd;
    desc.handle.fd = fd;
    desc.size = allocation_size;
    desc.flags = dedicated ? cudaExternalMemoryDedicated : 0;
    cudaExternalMemory_t mem = NULL;
    cudaError_t e = cudaImportExternalMemory(&mem, &desc);
    if (e != cudaSuccess) return cuda_fail(host, e, "cudaImportExternalMemory");
    struct cudaExternalMemoryBufferDesc buf;
    memset(&buf, 0, sizeof buf);
    buf.offset = offset;
    buf.size = size;
    void* ptr = NULL;
    e = cudaExternalMemoryGetMappedBuffer(&ptr, mem, &buf);
    if (e != cudaSuccess) {
        cudaDestroyExternalMemory(mem);
        return cuda_fail(host, e, "cudaExternalMemoryGetMappedBuffer");
    }
    out->handle = mem;
    out->device_ptr = ptr;
    out->size = size;
    return SINEW_OK;
}

void sinew_cuda_release_memory(sinew_cuda_imported_memory* memory)
{
    if (!memory || !memory->handle) return;
    /* The mapped buffer must be freed before the external memory is destroyed. */
    if (memory->device_ptr) cudaFree(memory->device_ptr);
    cudaDestroyExternalMemory((cudaExternalMemory_t)memory->handle);
    memset(memory, 0, sizeof *memory);
}

sinew_result sinew_cuda_import_timeline_fd(const sinew_host_api* host, int fd,
                                           sinew_cuda_imported_timeline* out)
{
    if (!out || fd < 0)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_cuda_import_timeline_fd: bad arguments (fd %d)", fd);
    memset(out, 0, sizeof *out);
    struct cudaExternalSemaphoreHandleDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.type = cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd;
    desc.handle.fd = fd;
    cudaExternalSemaphore_t sem = NULL;
    cudaError_t e = cudaImportExternalSemaphore(&sem, &desc);
    if (e != cudaSuccess) return cuda_fail(host, e, "cudaImportExternalSemaphore (timeline)");
    out->handle = sem;
    return SINEW_OK;
}

void sinew_cuda_release_timeline(sinew_cuda_imported_timeline* timeline)
{
    if (!timeline || !timeline->handle) return;
    cudaDestroyExternalSemaphore((cudaExternalSemaphore_t)timeline->handle);
    timeline->handle = NULL;
}

/* Waits for (signal 0) or signals (signal 1) `value` of the imported timeline on stream;
 * fn names the public call in the line of a missing semaphore. */
static sinew_result timeline_op(const sinew_host_api* host,
                                const sinew_cuda_imported_timeline* timeline, uint64_t value,
                                void* stream, int signal, const char* fn)
{
    if (!timeline || !timeline->handle)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s: no imported semaphore",
                               fn);
    cudaExternalSemaphore_t sem = (cudaExternalSemaphore_t)timeline->handle;
    cudaError_t e;
    const char* call;
    if (signal) {
        struct cudaExternalSemaphoreSignalParams p;
        memset(&p, 0, sizeof p);
        p.params.fence.value = value;
        e = cudaSignalExternalSemaphoresAsync(&sem, &p, 1, (cudaStream_t)stream);
        call = "cudaSignalExternalSemaphoresAsync";
    } else {
        struct cudaExternalSemaphoreWaitParams p;
        memset(&p, 0, sizeof p);
        p.params.fence.value = value;
        e = cudaWaitExternalSemaphoresAsync(&sem, &p, 1, (cudaStream_t)stream);
        call = "cudaWaitExternalSemaphoresAsync";
    }
    return e == cudaSuccess ? SINEW_OK : cuda_fail(host, e, call);
}

sinew_result sinew_cuda_timeline_wait(const sinew_host_api* host,
                                      const sinew_cuda_imported_timeline* timeline,
                                      uint64_t value, void* stream)
{
    return timeline_op(host, timeline, value, stream, 0, "sinew_cuda_timeline_wait");
}

sinew_result sinew_cuda_timeline_signal(const sinew_host_api* host,
                                        const sinew_cuda_imported_timeline* timeline,
                                        uint64_t value, void* stream)
{
    return timeline_op(host, timeline, value, stream, 1, "sinew_cuda_timeline_signal");
}

/* Driver API entry points, fetched through the runtime so that nothing links libcuda (absent
 * on machines without an NVIDIA driver, where the plugin must still load and say no). */
typedef CUresult (*pfn_cuMemGetAllocationGranularity)(size_t*, const CUmemAllocationProp*,
                                                       CUmemAllocationGranularity_flags);
typedef CUresult (*pfn_cuMemCreate)(CUmemGenericAllocationHandle*, size_t,
                                    const CUmemAllocationProp*, unsigned long long);
typedef CUresult (*pfn_cuMemExportToShareableHandle)(void*, CUmemGenericAllocationHandle,
                                                     CUmemAllocationHandleType,
                                                     unsigned long long);
typedef CUresult (*pfn_cuMemAddressReserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr,
                                            unsigned long long);
typedef CUresult (*pfn_cuMemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                                 unsigned long long);
typedef CUresult (*pfn_cuMemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t);
typedef CUresult (*pfn_cuMemUnmap)(CUdeviceptr, size_t);
typedef CUresult (*pfn_cuMemAddressFree)(CUdeviceptr, size_t);
typedef CUresult (*pfn_cuMemRelease)(CUmemGenericAllocationHandle);

static void* driver_entry(const char* name)
{
    void* fn = NULL;
    enum cudaDriverEntryPointQueryResult status;
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &status) !=
            cudaSuccess ||
        status != cudaDriverEntryPointSuccess)
        return NULL;
    return fn;
}

sinew_result sinew_cuda_alloc_exportable(const sinew_host_api* host, int ordinal, size_t size,
                                         sinew_cuda_exportable* out, int* out_fd)
{
    if (!out || !out_fd || size == 0)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_cuda_alloc_exportable: bad arguments");
    memset(out, 0, sizeof *out);
    *out_fd = -1;
    cudaError_t e = cudaSetDevice(ordinal);
    if (e != cudaSuccess) return cuda_fail(host, e, "cudaSetDevice");
    e = cudaFree(NULL); /* creates the primary context the driver calls below need */
    if (e != cudaSuccess) return cuda_fail(host, e, "cudaFree(NULL)");
    pfn_cuMemGetAllocationGranularity granularity = (pfn_cuMemGetAllocationGranularity)
        driver_entry("cuMemGetAllocationGranularity");
    pfn_cuMemCreate create = (pfn_cuMemCreate)driver_entry("cuMemCreate");
    pfn_cuMemExportToShareableHandle export_handle =
        (pfn_cuMemExportToShareableHandle)driver_entry("cuMemExportToShareableHandle");
    pfn_cuMemAddressReserve reserve = (pfn_cuMemAddressReserve)driver_entry("cuMemAddressReserve");
    pfn_cuMemMap map = (pfn_cuMemMap)driver_entry("cuMemMap");
    pfn_cuMemSetAccess set_access = (pfn_cuMemSetAccess)driver_entry("cuMemSetAccess");
    pfn_cuMemUnmap unmap = (pfn_cuMemUnmap)driver_entry("cuMemUnmap");
    pfn_cuMemAddressFree address_free = (pfn_cuMemAddressFree)driver_entry("cuMemAddressFree");
    pfn_cuMemRelease release = (pfn_cuMemRelease)driver_entry("cuMemRelease");
    if (!granularity || !create || !export_handle || !reserve || !map || !set_access ||
        !unmap || !address_free || !release)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "cuda: the driver lacks the virtual memory management API");
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = ordinal;
    size_t gran = 0;
    if (granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS || !gran)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "cuda: cuMemGetAllocationGranularity failed");
    size_t rounded = (size + gran - 1) / gran * gran;
    CUmemGenericAllocationHandle handle = 0;
    if (create(&handle, rounded, &prop, 0) != CUDA_SUCCESS)
        return sinew_host_fail(host, SINEW_ERROR_DEVICE,
                               "cuda: cuMemCreate of %zu exportable bytes failed", rounded);
    int fd = -1;
    CUdeviceptr ptr = 0;
    sinew_result r = SINEW_OK;
    if (export_handle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) != CUDA_SUCCESS)
        r = sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                            "cuda: cuMemExportToShareableHandle (POSIX fd) failed");
    if (r == SINEW_OK && reserve(&ptr, rounded, gran, 0, 0) != CUDA_SUCCESS)
        r = sinew_host_fail(host, SINEW_ERROR_DEVICE, "cuda: cuMemAddressReserve failed");
    if (r == SINEW_OK && map(ptr, rounded, 0, handle, 0) != CUDA_SUCCESS) {
        address_free(ptr, rounded);
        ptr = 0;
        r = sinew_host_fail(host, SINEW_ERROR_DEVICE, "cuda: cuMemMap failed");
    }
    if (r == SINEW_OK) {
        CUmemAccessDesc access;
        memset(&access, 0, sizeof access);
        access.location = prop.location;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        if (set_access(ptr, rounded, &access, 1) != CUDA_SUCCESS) {
            unmap(ptr, rounded);
            address_free(ptr, rounded);
            ptr = 0;
            r = sinew_host_fail(host, SINEW_ERROR_DEVICE, "cuda: cuMemSetAccess failed");
        }
    }
    if (r != SINEW_OK) {
        release(handle);
        return r;
    }
    out->handle = handle;
    out->device_ptr = (void*)(uintptr_t)ptr;
    out->size = rounded;
    out->ordinal = ordinal;
    *out_fd = fd;
    return SINEW_OK;
}

void sinew_cuda_free_exportable(sinew_cuda_exportable* memory)
{
    if (!memory || !memory->handle) return;
    pfn_cuMemUnmap unmap = (pfn_cuMemUnmap)driver_entry("cuMemUnmap");
    pfn_cuMemAddressFree address_free = (pfn_cuMemAddressFree)driver_entry("cuMemAddressFree");
    pfn_cuMemRelease release = (pfn_cuMemRelease)driver_entry("cuMemRelease");
    CUdeviceptr ptr = (CUdeviceptr)(uintptr_t)memory->device_ptr;
    if (unmap && ptr) unmap(ptr, memory->size);
    if (address_free && ptr) address_free(ptr, memory->size);
    if (release) release((CUmemGenericAllocationHandle)memory->handle);
    memset(memory, 0, sizeof *memory);
}
