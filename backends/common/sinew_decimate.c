/* Decimating a render mesh into a simulation mesh (see sinew_decimate.h).
 * SPDX-License-Identifier: MIT */
#include <sinew/sinew_host.h>

#include "sinew_decimate.h"

#include <math.h>


#if defined(SINEW_HAVE_MESHOPTIMIZER)
#  include <meshoptimizer.h>
#endif

void sinew_decimated_free(const sinew_host_api* host, sinew_decimated_mesh* mesh)
{
    if (!mesh) return;
    sinew_host_free(host, mesh->positions);
    sinew_host_free(host, mesh->indices);
    memset(mesh, 0, sizeof *mesh);
}

sinew_result sinew_decimate_mesh(const sinew_host_api* host, const sinew_mesh_view* mesh,
                                 uint32_t target_vertices, sinew_decimated_mesh* out)
{
    if (!host || !mesh || !out) return SINEW_ERROR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (!mesh->positions || !mesh->indices || mesh->vertex_count == 0 || mesh->triangle_count == 0)
        return sinew_host_fail(host, SINEW_ERROR_EMPTY_MESH, "decimate: the mesh is empty");
    if (target_vertices < 4)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "decimate: target of %u vertices; at least 4", target_vertices);
#if !defined(SINEW_HAVE_MESHOPTIMIZER)
    return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                           "decimate: this build has no meshoptimizer; give the rig a "
                           "simulation mesh instead");
#else
    const size_t index_count = (size_t)mesh->triangle_count * 3u;
    const size_t vertex_count = mesh->vertex_count;
    unsigned int* remap = (unsigned int*)sinew_host_alloc(host, vertex_count * sizeof(unsigned));
    unsigned int* welded = (unsigned int*)sinew_host_alloc(host, index_count * sizeof(unsigned));
    unsigned int* simplified = (unsigned int*)sinew_host_alloc(host, index_count * sizeof(unsigned));
    float* unique = (float*)sinew_host_alloc(host, vertex_count * 12u);
    sinew_result result = SINEW_OK;
    if (!remap || !welded || !simplified || !unique) {
        result = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "decimate: out of memory");
        goto done;
    }
    /* Weld by position only: seams must not become borders. */
    size_t unique_count = meshopt_generateVertexRemap(remap, mesh->indices, index_count,
                                                      mesh->positions, vertex_count, 12u);
    meshopt_remapIndexBuffer(welded, mesh->indices, index_count, remap);
    meshopt_remapVertexBuffer(unique, mesh->positions, vertex_count, 12u, remap);

    size_t kept = index_count;
    float error = 0.0f;
    if (unique_count > target_vertices) {
        /* A closed triangle mesh has about twice as many triangles as vertices. The error
         * bound is left open (1 = the mesh extent): the vertex budget decides, and the
         * simplifier still collapses the edges that change the shape least first. */
        size_t target_indices = (size_t)target_vertices * 2u * 3u;
        kept = meshopt_simplify(simplified, welded, index_count, unique, unique_count, 12u,
                                target_indices, 1.0f, 0u, &error);
    } else {
        memcpy(simplified, welded, index_count * sizeof(unsigned));
    }
    if (kept < 3) {
        result = sinew_host_fail(host, SINEW_ERROR_BACKEND_FAILED,
                                 "decimate: the simplifier left no triangle of %u",
                                 mesh->triangle_count);
        goto done;
    }
    /* Compact: keep only the vertices the simplified triangles use. */
    size_t final_count = meshopt_optimizeVertexFetchRemap(remap, simplified, kept, unique_count);
    out->positions = (float*)sinew_host_alloc(host, final_count * 12u);
    out->indices = (uint32_t*)sinew_host_alloc(host, kept * sizeof(uint32_t));
    if (!out->positions || !out->indices) {
        sinew_decimated_free(host, out);
        result = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "decimate: out of memory");
        goto done;
    }
    meshopt_remapIndexBuffer(out->indices, simplified, kept, remap);
    meshopt_remapVertexBuffer(out->positions, unique, unique_count, 12u, remap);
    out->vertex_count = (uint32_t)final_count;
    out->triangle_count = (uint32_t)(kept / 3u);
    out->relative_error = error;
    sinew_host_log(host, SINEW_LOG_INFO,
                   "decimate: %u vertices (%zu after welding) -> %u vertices, %u triangles, "
                   "relative error %.4f", mesh->vertex_count, unique_count, out->vertex_count,
                   out->triangle_count, (double)error);
done:
    sinew_host_free(host, remap);
    sinew_host_free(host, welded);
    sinew_host_free(host, simplified);
    sinew_host_free(host, unique);
    return result;
#endif
}
