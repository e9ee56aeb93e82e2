/* Decimating a render mesh into a coarser simulation mesh for physics backends.
 * SPDX-License-Identifier: MIT
 *
 * Physics backends simulate a mesh of a few thousand vertices and upsample to the render mesh
 * (projective-skinning-2018 Sec. 6). When a rig brings only one, large mesh, this makes the
 * simulation mesh from it with meshoptimizer's edge-collapse simplifier (MIT-licensed, linked
 * dynamically). Vertices at identical positions (seams of normals or texture coordinates) are
 * welded first: the simplifier would otherwise treat every seam as a border it must keep. */
#ifndef SINEW_COMMON_DECIMATE_H
#define SINEW_COMMON_DECIMATE_H

#include <sinew/sinew_plugin.h>

/* A decimated mesh, allocated with the host allocator (free with sinew_decimated_free). */
typedef struct sinew_decimated_mesh {
    uint32_t vertex_count;
    uint32_t triangle_count;
    float* positions;            /* 3 per vertex */
    uint32_t* indices;           /* 3 per triangle */
    float relative_error;        /* the simplifier's error, relative to the mesh extent */
} sinew_decimated_mesh;

/* Simplifies `mesh` to at most about `target_vertices` vertices (never more than the welded
 * input has). Fails with SINEW_ERROR_UNSUPPORTED when built without meshoptimizer,
 * SINEW_ERROR_INVALID_ARGUMENT for a target below 4, and SINEW_ERROR_BACKEND_FAILED when the
 * simplifier leaves no triangle. */
sinew_result sinew_decimate_mesh(const sinew_host_api* host, const sinew_mesh_view* mesh,
                                 uint32_t target_vertices, sinew_decimated_mesh* out);

void sinew_decimated_free(const sinew_host_api* host, sinew_decimated_mesh* mesh);

#endif
