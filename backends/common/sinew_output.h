/* Host output views as CPU backends handle them: validation, copying packed vertices into
 * strided arrays, and normalising a binding. Shared by lbs/dqs (skin_geometric.h) and ps.
 * SPDX-License-Identifier: MIT */
#ifndef SINEW_COMMON_OUTPUT_H
#define SINEW_COMMON_OUTPUT_H

#include <stdint.h>
#include <string.h>

#include <sinew/sinew_host.h>

/* Checks that `out` can take `vertex_count` vertices: struct size, no extension chain (CPU
 * backends write host arrays only), capacity, positions present, strides multiples of 4 and
 * at least 12 bytes, 4-byte aligned arrays, positions and normals distinct. Logs one line
 * "<backend> <fn>: ..." and returns the specific code on failure. */
static inline sinew_result sinew_output_check(const sinew_host_api* host, const char* backend,
                                              const char* fn, const sinew_output_view* out,
                                              uint32_t vertex_count)
{
    if (!out)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s %s: out is NULL", backend,
                               fn);
    if (out->struct_size < sizeof(sinew_output_view))
        return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE,
                               "%s %s: output struct_size %u is below %zu", backend, fn,
                               out->struct_size, sizeof(sinew_output_view));
    if (out->next)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "%s %s: a CPU backend writes host arrays only (next is not NULL)",
                               backend, fn);
    if (out->vertex_count < vertex_count)
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING,
                               "%s %s: room for %u vertices, the mesh has %u", backend, fn,
                               out->vertex_count, vertex_count);
    if (!out->positions)
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING, "%s %s: positions is NULL",
                               backend, fn);
    size_t ps = out->position_stride ? out->position_stride : 12u;
    size_t ns = out->normal_stride ? out->normal_stride : 12u;
    if (ps < 12u || ps % 4u || (out->normals && (ns < 12u || ns % 4u)))
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING,
                               "%s %s: strides must be multiples of 4 and at least 12 bytes "
                               "(position %zu, normal %zu)",
                               backend, fn, ps, ns);
    if ((uintptr_t)out->positions % 4u || (uintptr_t)out->normals % 4u)
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING,
                               "%s %s: output arrays must be 4-byte aligned", backend, fn);
    if (out->normals == out->positions)
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING,
                               "%s %s: positions and normals are the same array", backend, fn);
    return SINEW_OK;
}

/* Copies `count` packed xyz triples into an array with a byte stride (0 means 12). */
static inline void sinew_output_copy(const float* src, uint32_t count, float* dst, size_t stride)
{
    if (stride == 0u || stride == 12u) {
        memcpy(dst, src, (size_t)count * 12u);
        return;
    }
    for (uint32_t v = 0; v < count; ++v) memcpy((char*)dst + stride * v, src + 3u * v, 12u);
}

/* Copies `count` vertices' packed positions and, when the view asks for them, normals into
 * the checked view `out` at its strides. */
static inline void sinew_output_copy_view(const float* positions, const float* normals,
                                          uint32_t count, const sinew_output_view* out)
{
    sinew_output_copy(positions, count, out->positions, out->position_stride);
    if (out->normals) sinew_output_copy(normals, count, out->normals, out->normal_stride);
}

/* A checked view kept as a binding: this header's struct size and explicit strides. */
static inline sinew_output_view sinew_output_binding(const sinew_output_view* out)
{
    sinew_output_view b = *out;
    b.struct_size = (uint32_t)sizeof(sinew_output_view);
    if (!b.position_stride) b.position_stride = 12u;
    if (!b.normal_stride) b.normal_stride = 12u;
    return b;
}

#endif
