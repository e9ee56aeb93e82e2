/* Quality metrics of a deformed triangle mesh: the figures sinew-quality prints, as plain
 * functions that tests call directly. SPDX-License-Identifier: MIT
 *
 * A mesh is measured through its topology, built once from the rest pose: vertices at
 * identical rest positions are welded into one (importers split vertices at UV and normal
 * seams, which would otherwise open a closed mesh and turn seam neighbours into strangers).
 * Every metric then reads the deformed positions through the weld map.
 */
#ifndef SINEW_SAMPLE_METRICS_H
#define SINEW_SAMPLE_METRICS_H

#include <stdint.h>

#include <sinew/sinew.h>

typedef struct sample_topology {
    uint32_t vertex_count;          /* vertices of the original mesh */
    uint32_t welded_vertex_count;   /* distinct rest positions */
    uint32_t* weld;                 /* vertex -> representative (lowest index at its position) */
    uint32_t triangle_count;        /* triangles left after welding */
    uint32_t* triangles;            /* 3 per triangle, representative indices */
    uint32_t degenerate_triangles;  /* dropped: two corners welded together */
    uint32_t edge_count;
    uint32_t* edges;                /* 2 per undirected edge, first < second */
    /* Every edge has exactly two incident triangles that traverse it in opposite directions:
     * the mesh bounds a volume and its orientation is consistent, so a signed volume means
     * something. */
    int closed;
} sample_topology;

/* Builds the topology of a triangle mesh from its rest positions (3 floats per vertex, all
 * finite). Errors: INVALID_ARGUMENT (NULL), EMPTY_MESH, VERTEX_INDEX, NONFINITE,
 * OUT_OF_MEMORY; each logs one line to stderr. On failure *out is zeroed. */
sinew_result sample_topology_build(const float* rest_positions, uint32_t vertex_count,
                                   const uint32_t* indices, uint32_t triangle_count,
                                   sample_topology* out);
/* Frees the arrays and zeroes the struct; NULL and zeroed structs are fine. */
void sample_topology_free(sample_topology* topology);

/* Number of vertices with a NaN or infinite coordinate. */
uint32_t sample_count_nonfinite(const float* positions, uint32_t vertex_count);

/* Signed enclosed volume (divergence theorem, positive for outward-facing triangles) of the
 * welded triangles at `positions`. NaN when the topology is not closed or a used vertex is
 * not finite. */
double sample_enclosed_volume(const sample_topology* topology, const float* positions);

/* The region of local_volume_ratio around a joint: the welded triangles whose three corners
 * lie within `radius` of `centre` (distance <= radius) in the rest positions. Returns how
 * many; with out_triangles non-NULL their indices into topology->triangles go to a malloc'd
 * array (NULL when there are none; release it with free). UINT32_MAX (after one line) when
 * memory runs out. */
uint32_t sample_local_select(const sample_topology* topology, const float* rest,
                             const double centre[3], double radius, uint32_t** out_triangles);

/* Sum over the listed welded triangles (a, b, c) of the signed volume of the tetrahedron
 * (centre, a, b, c) at `positions`: the volume the patch encloses seen from the centre,
 * positive where it faces away from it. NaN when a corner is not finite or an index is out
 * of range; 0 for an empty list. */
double sample_local_volume(const sample_topology* topology, const float* positions,
                           const uint32_t* triangles, uint32_t count, const double centre[3]);

/* Smallest and largest ratio of deformed to rest length over all edges whose endpoints are
 * finite in `posed`. Both NaN when there is no such edge. */
void sample_edge_stretch(const sample_topology* topology, const float* rest, const float* posed,
                         double* out_min, double* out_max);

/* Number of intersecting pairs of triangles that share no vertex after welding (triangles
 * with a non-finite corner are skipped). Pairs come from a uniform grid over the triangles'
 * bounding boxes; each candidate is decided by sample_triangles_intersect. Returns
 * UINT32_MAX (and logs one line) when memory runs out. */
uint32_t sample_count_self_intersections(const sample_topology* topology,
                                         const float* positions);

/* Do the closed triangles (a0 a1 a2) and (b0 b1 b2) share at least one point? Touching
 * counts; degenerate (zero-area) triangles are treated as the segment or point they are. */
int sample_triangles_intersect(const double a0[3], const double a1[3], const double a2[3],
                               const double b0[3], const double b1[3], const double b2[3]);

/* Length of the diagonal of the axis-aligned bounding box of the finite positions (0 when
 * there are none). */
double sample_bounding_diagonal(const float* positions, uint32_t vertex_count);

#endif
