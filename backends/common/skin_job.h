/* The unit of work of the geometric CPU backends (lbs, dqs): one vertex range to skin.
 * SPDX-License-Identifier: MIT
 *
 * Shared by the backend scaffolding (skin_geometric.h) and the per-instruction-set kernel
 * files, which include nothing else of the backend so that each can be compiled with its own
 * -m flags. */
#ifndef SINEW_COMMON_SKIN_JOB_H
#define SINEW_COMMON_SKIN_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define SINEW_FORCE_INLINE static inline __attribute__((always_inline))
#else
#define SINEW_FORCE_INLINE static inline
#endif

/* Everything a kernel reads and writes for vertices [begin, end). */
typedef struct sinew_skin_job {
    /* 8 floats per vertex, 32-byte aligned: rest position x y z 1, rest normal x y z 0. The
     * padding lets a kernel load a vertex as whole vectors without reading past the array. */
    const float* rest;
    /* `width` entries per vertex: the joint index times the floats per transform (16 or 8),
     * i.e. where the joint's transform starts in `transforms` (padding: joint 0). Premultiplied
     * once at prepare so the kernels address a transform without a shift per influence. */
    const uint32_t* offsets;
    const float* weights; /* `width` weights per vertex (padding: weight 0) */
    uint32_t width;       /* >= 1 */
    /* Per joint: lbs 16 floats (rows 0-2 of the skinning matrix, row-major, then a zero row;
     * 64-byte aligned), dqs 8 floats (unit dual quaternion: real x y z w, dual x y z w;
     * 32-byte aligned). */
    const float* transforms;
    float* positions;       /* NULL: positions are not written */
    size_t position_stride; /* bytes, >= 12, multiple of 4 */
    float* normals;         /* NULL: normals are not computed */
    size_t normal_stride;
} sinew_skin_job;

typedef void (*sinew_skin_kernel_fn)(const sinew_skin_job* job, uint32_t begin, uint32_t end);

/* Normals whose squared length falls below this are written as zero vectors in every path
 * (a blend that collapses them has no direction to keep). */
#define SINEW_SKIN_MIN_NORMAL_SQ 1e-30f

/* Calls RANGE(job, begin, end, width, write_positions, write_normals) with the width 4 and 8
 * and the two flags as compile-time constants, so each kernel file gets fully unrolled fast
 * paths for 4 and 8 influences and a loop for any other width. */
#define SINEW_SKIN_DISPATCH(RANGE, job, begin, end)                                                \
    do {                                                                                           \
        const bool p_ = (job)->positions != NULL;                                                  \
        const bool n_ = (job)->normals != NULL;                                                    \
        const uint32_t w_ = (job)->width;                                                          \
        if (w_ == 4u) {                                                                            \
            if (p_ && n_)                                                                          \
                RANGE(job, begin, end, 4u, true, true);                                            \
            else if (p_)                                                                           \
                RANGE(job, begin, end, 4u, true, false);                                           \
            else if (n_)                                                                           \
                RANGE(job, begin, end, 4u, false, true);                                           \
        } else if (w_ == 8u) {                                                                     \
            if (p_ && n_)                                                                          \
                RANGE(job, begin, end, 8u, true, true);                                            \
            else if (p_)                                                                           \
                RANGE(job, begin, end, 8u, true, false);                                           \
            else if (n_)                                                                           \
                RANGE(job, begin, end, 8u, false, true);                                           \
        } else {                                                                                   \
            if (p_ && n_)                                                                          \
                RANGE(job, begin, end, w_, true, true);                                            \
            else if (p_)                                                                           \
                RANGE(job, begin, end, w_, true, false);                                           \
            else if (n_)                                                                           \
                RANGE(job, begin, end, w_, false, true);                                           \
        }                                                                                          \
    } while (0)

/* Output element v of a strided array. */
SINEW_FORCE_INLINE float* sinew_skin_at(float* base, size_t stride, uint32_t v)
{
    return (float*)((char*)base + (size_t)v * stride);
}

/* May a kernel store 16 bytes (x y z and a junk w) at element v of [begin, end)? Only in a
 * packed array (stride 12), where the 4 extra bytes are the next element's x that the same
 * kernel call overwrites right after: never at the range's last element (it belongs to another
 * job or lies past the array) and never in a wider stride (the caller's bytes, e.g. a UV). */
SINEW_FORCE_INLINE bool sinew_skin_wide_store(size_t stride, uint32_t v, uint32_t end)
{
    return stride == 12u && v + 1u < end;
}

#endif
