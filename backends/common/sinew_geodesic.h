/* Geodesic neighbourhoods on a triangle mesh, for MLS upsampling (fast-projective-skinning-2019
 * Sec. 5): locating a point on the surface and finding the nearest mesh vertices by distance
 * along the surface.
 * SPDX-License-Identifier: MIT
 *
 * The paper computes geodesic distance by fast marching [Kimmel and Sethian 1998]. Here it is
 * Dijkstra on a refined mesh graph instead, which gives the same neighbour order for the short
 * distances MLS needs and is exact along straight paths across two triangles:
 *   - every mesh edge, with its Euclidean length;
 *   - a shortcut across every manifold edge (shared by exactly two triangles): the two vertices
 *     opposite the edge, joined by their straight distance in the two triangles unfolded into
 *     one plane, when that straight segment crosses the shared edge (it then runs on the
 *     surface, so the length is a true surface path and never below the geodesic distance);
 *   - the source point is the closest point of the surface (any point inside a triangle): its
 *     triangle's corners and their graph neighbours are seeded with their straight (chord)
 *     distances, which on a surface smooth at the scale of an edge are the geodesic distances
 *     up to third order; without them a short path has to detour through a corner (15 % too
 *     long on a unit grid).
 * Plain edge Dijkstra on a regular grid reaches 8 directions and overestimates distances in
 * between by up to 8 %; with the shortcuts (16 directions) within 2.8 % far away and 5 % a few edges from
 * the source (tests/mls). Distances only
 * propagate along triangles, so separate parts of the mesh (sub-meshes that share no vertex,
 * surfaces on both sides of a narrow gap) never see each other, and holes are walked around.
 *
 * Thread safety: a built sinew_geodesic is read-only; any number of threads may query it at
 * once, each with its own sinew_geodesic_scratch. */
#ifndef SINEW_COMMON_GEODESIC_H
#define SINEW_COMMON_GEODESIC_H

#include <stddef.h>
#include <stdint.h>

#include <sinew/sinew_plugin.h>

#define SINEW_GEODESIC_NONE 0xffffffffu

/* The refined graph and a uniform grid over the triangles (closest-point queries). All arrays
 * come from the host allocator; free with sinew_geodesic_free. Positions are copied to double. */
typedef struct sinew_geodesic {
    uint32_t vertex_count;
    uint32_t triangle_count;
    double* positions;            /* 3 per vertex */
    const uint32_t* triangles;    /* the caller's indices, 3 per triangle (borrowed) */
    uint32_t* triangle_neighbours;/* 3 per triangle: across edge (c[e], c[e+1 mod 3]), or NONE */
    uint32_t* graph_offsets;      /* vertex_count + 1 */
    uint32_t* graph_targets;      /* graph_offsets[vertex_count] entries */
    double* graph_lengths;        /* same count */
    /* grid */
    double grid_origin[3];
    double cell_size;
    uint32_t grid_dims[3];
    uint32_t* cell_offsets;       /* cell count + 1 */
    uint32_t* cell_triangles;
    /* Per triangle its bounding box, lower corner then upper (6 floats: the positions are
     * floats, so the box is exact), and the squared diagonal of the whole surface's box: a
     * closest-point search skips a triangle whose box lies clearly farther than its best. */
    float* triangle_boxes;
    double diagonal2;
} sinew_geodesic;

/* One settled vertex of a query. */
typedef struct sinew_geodesic_hit {
    uint32_t vertex;
    double distance;
} sinew_geodesic_hit;

/* A query's record of one vertex (valid when stamp is the current query id, so that the records
 * need no clearing between queries): its tentative distance, and its place in the search's
 * frontier, or 0xffffffff once settled. */
typedef struct sinew_geodesic_mark {
    double distance;
    uint32_t stamp;
    uint32_t slot;
} sinew_geodesic_mark;

/* Per-thread working memory for queries (sized for one mesh). */
typedef struct sinew_geodesic_scratch {
    sinew_geodesic_mark* marks;   /* vertex_count */
    uint32_t query;               /* current query id */
    /* the frontier: vertices reached, not yet settled (unordered), and their distances */
    double* frontier_distance;
    uint32_t* frontier_vertex;
    uint32_t frontier_capacity;
} sinew_geodesic_scratch;

/* Builds the graph and grid. `positions` (3 floats per vertex) and `indices` (3 per triangle)
 * must already be validated (finite, in range) by the caller; `indices` must outlive the
 * result. Fails with SINEW_ERROR_EMPTY_MESH without triangles and OUT_OF_MEMORY; logs one line
 * naming `who`. */
sinew_result sinew_geodesic_build(const sinew_host_api* host, const char* who,
                                  const float* positions, uint32_t vertex_count,
                                  const uint32_t* indices, uint32_t triangle_count,
                                  sinew_geodesic* out);

void sinew_geodesic_free(const sinew_host_api* host, sinew_geodesic* geo);

/* The closest point of the surface to `p`: its triangle (returned), the point `q` and its
 * barycentric coordinates (weights of the triangle's corners c0, c1, c2). Exact (the grid is
 * searched ring by ring until no unvisited cell can hold a closer triangle). */
uint32_t sinew_geodesic_closest(const sinew_geodesic* geo, const double p[3], double q[3],
                                double bary[3]);

sinew_result sinew_geodesic_scratch_init(const sinew_host_api* host, const sinew_geodesic* geo,
                                         sinew_geodesic_scratch* scratch);
void sinew_geodesic_scratch_free(const sinew_host_api* host, sinew_geodesic_scratch* scratch);

/* The first `count` vertices by geodesic distance from the surface point `q` inside triangle
 * `triangle`, in nondecreasing distance order, into `hits`. Returns how many were found: fewer
 * than `count` when the connected part of the surface has fewer vertices; SINEW_GEODESIC_NONE
 * when the scratch frontier could not grow (out of memory). */
uint32_t sinew_geodesic_nearest(const sinew_host_api* host, const sinew_geodesic* geo,
                                sinew_geodesic_scratch* scratch, uint32_t triangle,
                                const double q[3], uint32_t count, sinew_geodesic_hit* hits);

#endif
