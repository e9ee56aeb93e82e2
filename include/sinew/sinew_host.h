/* Helpers over sinew_host_api for backends and plugins, and for the runtime and the Vulkan
 * module, which hand the same table to them: logging, failing with one line, allocation
 * through the host allocator, the host's parallel_for, and the ABI version 3 fields (service
 * tables, the backend's user pointer) read safely from a host of any version. Header-only
 * (static inline), so using them adds no symbol a plugin must find in the runtime.
 * SPDX-License-Identifier: MIT */
#ifndef SINEW_SINEW_HOST_H
#define SINEW_SINEW_HOST_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sinew_plugin.h"

#if defined(__GNUC__)
#  define SINEW_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#  define SINEW_PRINTF(a, b)
#endif

/* Formats one line and hands it to the host's logger when `level` passes the host's filter. */
static inline void sinew_host_vlog(const sinew_host_api* host, sinew_log_level level,
                                   const char* fmt, va_list args)
{
    if (!host || !host->logger.func || level > host->log_level) return;
    char line[1024];
    vsnprintf(line, sizeof line, fmt, args);
    host->logger.func(level, line, host->logger.user);
}

/* Logs one line through the host's logger when `level` passes the host's filter. */
static inline SINEW_PRINTF(3, 4) void sinew_host_log(const sinew_host_api* host,
                                                     sinew_log_level level, const char* fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    sinew_host_vlog(host, level, fmt, args);
    va_end(args);
}

/* Logs an error line and returns `result`, so a failure path reads
 * `return sinew_host_fail(host, SINEW_ERROR_X, "what was wrong with which input");`. */
static inline SINEW_PRINTF(3, 4) sinew_result sinew_host_fail(const sinew_host_api* host,
                                                              sinew_result result,
                                                              const char* fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    sinew_host_vlog(host, SINEW_LOG_ERROR, fmt, args);
    va_end(args);
    return result;
}

/* 64-byte aligned allocation through the host allocator; NULL on failure or size 0. */
static inline void* sinew_host_alloc(const sinew_host_api* host, size_t size)
{
    if (size == 0) return NULL;
    return host->allocator.alloc(size, 64, host->allocator.user);
}

static inline void* sinew_host_calloc(const sinew_host_api* host, size_t count, size_t size)
{
    if (count == 0 || size == 0 || count > (size_t)-1 / size) return NULL;
    void* p = sinew_host_alloc(host, count * size);
    if (p) memset(p, 0, count * size);
    return p;
}

static inline void sinew_host_free(const sinew_host_api* host, void* ptr)
{
    if (ptr) host->allocator.free(ptr, host->allocator.user);
}

/* Runs fn over [0, count) through the host's job system. */
static inline void sinew_host_parallel_for(const sinew_host_api* host, sinew_job_fn fn,
                                           void* data, uint32_t count, uint32_t grain)
{
    if (count == 0) return;
    host->jobs.parallel_for(fn, data, count, grain ? grain : 1, host->jobs.user);
}

/* Whether the host's table has the ABI version 3 fields (services, backend_user). */
static inline int sinew_host_has_services(const sinew_host_api* host)
{
    return host && host->struct_size >= SINEW_HOST_API_SIZE_V3 && host->get_service;
}

/* The host's service table `id` (sinew_service_id) of version min_version or later, as
 * host->get_service answers; SINEW_ERROR_NO_SERVICE, without a log line, from a host without
 * services (older than ABI version 3, or a table a test or tool made by hand). */
static inline sinew_result sinew_host_get_service(const sinew_host_api* host, uint32_t id,
                                                  uint32_t min_version, const void** out_table)
{
    if (out_table) *out_table = NULL;
    if (!sinew_host_has_services(host)) return SINEW_ERROR_NO_SERVICE;
    return host->get_service(host, id, min_version, out_table);
}

/* The user pointer the backend was registered with; NULL from a host older than version 3. */
static inline void* sinew_host_backend_user(const sinew_host_api* host)
{
    return host && host->struct_size >= SINEW_HOST_API_SIZE_V3 ? host->backend_user : NULL;
}

#endif
