/* MLS upsampling from a simulation mesh to a render mesh (fast-projective-skinning-2019 Sec. 5).
 * SPDX-License-Identifier: MIT
 *
 * Physics backends (fps, fps-cuda) simulate a coarse mesh and need the render mesh's positions
 * and normals every frame. This module bakes, once, per render vertex j, SINEW_MLS_K = 20
 * simulation vertices i and weights N_ij such that the render position is the plain weighted
 * sum of the deformed simulation positions (eq. 8), and weights Ñ_ij for the normals (linear
 * MLS on the normals, the formula after eq. 8). Evaluation is then a gather and a sum
 * (sinew_mls_eval.h, shared with CUDA), run over the host's job system here; on x86-64 CPUs
 * with AVX2 an AVX kernel (sinew_mls_avx2.c) gives the same bits faster
 * (docs/decisions/2026-11-26-mls-avx2-kernel.md).
 *
 * How the weights are baked (all in double precision, stored as float):
 *  1. The render vertex is located on the simulation surface (closest point of its triangles).
 *  2. Its K nearest simulation vertices by geodesic distance along the simulation surface are
 *     found by Dijkstra on a refined edge graph seeded from that point (sinew_geodesic.h), so
 *     separate parts, both sides of a narrow gap, and the far rim of a hole are not neighbours.
 *     The support radius rho is the distance of the (K+1)-th vertex; w(r) = (1 - r/rho)^3
 *     (eq. 4) of the geodesic distance r.
 *  3. The neighbours and the render vertex are centred on the neighbours' weighted mean and
 *     scaled so that the farthest weighted neighbour is at distance 1 (Sec. 5, robustness).
 *  4. Quadratic MLS (eq. 6, 7, pi = 10 monomials): G = sum w pi pi^T, G^+ by a symmetric
 *     Jacobi eigendecomposition keeping eigenvalues above 1e-8 of the largest, N_i =
 *     w_i pi(x_i)^T G^+ pi(x_j). When dropped directions of G leave the constant or linear
 *     monomials of x_j unreproduced (x_j off the quadric the neighbours nearly lie on, which
 *     happens on any curved skin: G's smallest eigenvalues reach 1e-9 of the largest), the
 *     weights get the smallest w-weighted change that restores them: linear MLS (pi = 1, x,
 *     y, z, with its own pseudo-inverse) applied to the residual. This departs from the
 *     paper's fallback to plain linear MLS, which would lose quadratic precision at those
 *     vertices. Centring puts every plane of the neighbours through the origin, so no null
 *     direction of the linear G has a constant part: the weights always sum to one, and
 *     reproduce every affine map at x_j's projection onto the neighbours' affine span (x_j
 *     itself unless the neighbours are coplanar and x_j is off their plane).
 *  5. Normals: linear MLS in normal space (pi(n) = 1, nx, ny, nz, centred and scaled the same
 *     way) with the same w, from the simulation and render rest normals.
 * Fewer than K+1 reachable simulation vertices (a small separate part): all reachable ones are
 * used with rho = 1.5 times the largest distance (1 when all are at distance 0); unused entries
 * repeat the first index with weight 0. Render vertices may belong to any sub-mesh: only the
 * simulation surface's connectivity decides neighbourhoods.
 *
 * Units: positions in the meshes' own units (the same for both meshes); weights are unitless.
 * Thread safety: a sinew_mls_weights is immutable after bake/read; sinew_mls_apply may run on
 * several threads or several characters at once with the same weights. bake, apply and
 * vertex_normals call host->jobs.parallel_for (apply and bake may be called from inside a job;
 * the job system then decides whether to run inline). Every function logs exactly one line
 * through the host logger on failure and returns the specific code; nothing is leaked. */
#ifndef SINEW_COMMON_MLS_H
#define SINEW_COMMON_MLS_H

#include <stddef.h>
#include <stdint.h>

#include <sinew/sinew_plugin.h>

#include "cpu_features.h"
#include "sinew_mls_eval.h"

/* What the bake found, for reports and tests (zero after sinew_mls_read: not serialised). */
typedef struct sinew_mls_stats {
    uint32_t corrected_count;     /* quadratic weights that needed the linear correction of
                                     step 4 (pseudo-inverse dropped a direction x_j needs) */
    uint32_t short_count;         /* fewer than K+1 simulation vertices reachable */
    uint32_t inexact_count;       /* rest position not reproduced within 1e-9 of the diagonal
                                     even after the correction (vertex off a planar or
                                     collinear neighbourhood) */
    double max_surface_distance;  /* largest render-vertex-to-simulation-surface distance */
    double max_weight_l1;         /* largest sum_i |N_ij| over render vertices: 1 for convex
                                     weights; large values amplify simulation noise */
    double max_rest_error;        /* largest |x_j - sum_i N_ij x_i| with the double weights */
    double max_normal_angle;      /* largest angle (radians) between a rest render normal and
                                     its upsampled rest normal */
} sinew_mls_stats;

/* One render vertex's entries laid out for the SIMD kernel (derived from the arrays of
 * sinew_mls_weights): the byte offsets of its simulation vertices' records in
 * sinew_mls_frame.records (32 * index), then the two weights of each entry side by side, so
 * that one 8-byte broadcast gives an entry's weights for positions and normals at once.
 * 240 bytes, read front to back. */
typedef struct sinew_mls_packed_vertex {
    uint32_t offsets[SINEW_MLS_K];
    float pairs[2u * SINEW_MLS_K]; /* N_ij, Ñ_ij for each k */
} sinew_mls_packed_vertex;

/* The baked weights. Arrays come from the host allocator (64-byte aligned) and belong to the
 * struct, except the three entry arrays of borrowed weights (sinew_mls_read_in_place), which
 * lie in the blob they were read from; release with sinew_mls_free and the same host. Entry k
 * of render vertex j is at j * SINEW_MLS_K + k. Zero-initialised means empty. */
typedef struct sinew_mls_weights {
    uint32_t render_count;
    uint32_t simulation_count;
    uint32_t* indices;            /* render_count * K simulation vertex indices */
    float* weights;               /* render_count * K position weights N_ij, sum 1 per vertex */
    float* normal_weights;        /* render_count * K normal weights Ñ_ij, sum 1 per vertex */
    sinew_mls_stats stats;
    /* The same entries again, render_count records (240 bytes each: 5.6 MB for male), made
     * by bake and read when this CPU runs the AVX2 kernel (NULL otherwise, or in weights filled
     * by hand: apply then reads the arrays above and gives the same bits, more slowly). Not
     * serialised. */
    sinew_mls_packed_vertex* packed;
    /* 1: indices, weights and normal_weights point into a blob (read-only, 4-byte aligned,
     * not freed by sinew_mls_free). */
    int borrowed;
} sinew_mls_weights;

/* Bakes the weights for upsampling `simulation` to `render` (rest poses, same coordinates).
 * simulation: vertices, positions and triangles required; normals optional (NULL: area-
 * weighted, as sinew_mls_vertex_normals computes them). render: vertices and positions
 * required; normals optional (NULL: area-weighted from its triangles, which are then required).
 * Sub-mesh fields are not read. `out` is overwritten (not freed first). Errors:
 * INVALID_ARGUMENT (NULL host/mesh/out/array), EMPTY_MESH (no simulation vertices or
 * triangles, no render vertices, render normals NULL without triangles), VERTEX_INDEX (a
 * triangle index out of range), NONFINITE (NaN or infinity in positions or normals),
 * OUT_OF_MEMORY. Cost: per render vertex a closest-point query, a geodesic search of K + 1
 * vertices and two small eigen-analyses (several vertices' at once where AVX2 runs); scales
 * with the job system. */
sinew_result sinew_mls_bake(const sinew_host_api* host, const sinew_mesh_view* simulation,
                            const sinew_mesh_view* render, sinew_mls_weights* out);

/* sinew_mls_bake on the instruction set `simd` (sinew_mls_bake itself uses SINEW_SIMD_AUTO), as
 * sinew_mls_resolve maps it: with AVX2 the eigen-analyses of several render vertices' systems
 * run together in vector lanes, otherwise one at a time. Every choice gives the same bits.
 * Errors: those of sinew_mls_bake, and INVALID_ARGUMENT (simd not an instruction set),
 * UNSUPPORTED (simd not built in or not run by this CPU). */
sinew_result sinew_mls_bake_simd(const sinew_host_api* host, sinew_simd simd,
                                 const sinew_mesh_view* simulation, const sinew_mesh_view* render,
                                 sinew_mls_weights* out);

/* Releases the arrays and zeroes the struct; NULL and zeroed structs are fine. */
void sinew_mls_free(const sinew_host_api* host, sinew_mls_weights* weights);

/* Upsamples one frame. sim_positions: simulation_count * 3 floats (packed xyz), the deformed
 * simulation vertices; simulation_count must equal weights->simulation_count. sim_normals:
 * the deformed simulation normals (packed xyz, any length: they are normalised after
 * blending) computed the same way as the rest normals given to the bake, or NULL when no
 * normals are wanted (out_normals must then be NULL). Writes render_count positions to
 * out_positions and, when out_normals is not NULL, unit normals to out_normals, with byte
 * strides (0 means 12; else a multiple of 4, at least 12). The output arrays must not overlap
 * the inputs. Errors: INVALID_ARGUMENT (NULL host/weights/positions, empty weights,
 * simulation_count mismatch, out_normals without sim_normals), OUTPUT_BINDING (out_positions
 * NULL, bad stride, positions and normals the same array), NONFINITE (NaN or infinity in
 * sim_positions or sim_normals: nothing is written).
 * Runs the widest kernel this CPU has (sinew_mls_apply_simd with SINEW_SIMD_AUTO); with normals
 * the AVX2 kernel takes sinew_mls_scratch_size(weights) bytes from the host allocator for the
 * call (pass a buffer to sinew_mls_apply_simd to avoid that). */
sinew_result sinew_mls_apply(const sinew_host_api* host, const sinew_mls_weights* weights,
                             uint32_t simulation_count, const float* sim_positions,
                             const float* sim_normals, float* out_positions,
                             size_t position_stride, float* out_normals, size_t normal_stride);

/* sinew_mls_apply on the instruction set `simd` (sinew_mls_apply itself uses SINEW_SIMD_AUTO,
 * the widest this CPU runs, and no scratch). Every kernel gives the bits of the scalar
 * reference, which evaluates each vertex with sinew_mls_eval_position and
 * sinew_mls_eval_normal (the functions the CUDA kernels use; sinew_mls_eval_vertex gives the
 * same bits in one pass). scratch: NULL, or scratch_size bytes (no alignment needed) that
 * this call may overwrite, at least sinew_mls_scratch_size(weights), overlapping nothing else
 * and used by one call at a time; with NULL a kernel that wants scratch memory takes it from
 * the host allocator for the call (and reads the inputs directly, more slowly, if that fails).
 * Errors: those of sinew_mls_apply, and INVALID_ARGUMENT (simd not an instruction set),
 * UNSUPPORTED (simd not built in or not run by this CPU), OUTPUT_BINDING (scratch too small). */
sinew_result sinew_mls_apply_simd(const sinew_host_api* host, sinew_simd simd,
                                  const sinew_mls_weights* weights, uint32_t simulation_count,
                                  const float* sim_positions, const float* sim_normals,
                                  float* out_positions, size_t position_stride,
                                  float* out_normals, size_t normal_stride, void* scratch,
                                  size_t scratch_size);

/* Bytes of scratch memory sinew_mls_apply_simd can use with these weights (32 per simulation
 * vertex when the weights carry packed entries, else 0; 0 for NULL): a caller that upsamples
 * every frame keeps a buffer this large instead of an allocation per call. */
size_t sinew_mls_scratch_size(const sinew_mls_weights* weights);

/* The kernel sinew_mls_apply_simd runs for `simd` (AUTO resolved; SSE41 runs the scalar one,
 * AVX-512 the AVX2 one), for logs and benchmarks; SINEW_SIMD_COUNT when none: not built in or
 * not run by this CPU. */
sinew_simd sinew_mls_resolve(sinew_simd simd);

/* ---- evaluation kernels (dispatch targets of sinew_mls_apply_simd; no validation) ----
 * One frame's validated inputs: the baked arrays, the deformed simulation positions and
 * normals (NULL: positions only, out_normals is then ignored), the outputs with their byte
 * strides (at least 12, multiples of 4). A kernel evaluates render vertices [begin, end); it is
 * reentrant and keeps no state. */
typedef struct sinew_mls_frame {
    const uint32_t* indices;
    const float* weights;
    const float* normal_weights;
    const float* sim_positions;
    const float* sim_normals;
    float* out_positions;
    size_t position_stride;
    float* out_normals;
    size_t normal_stride;
    /* Optional, both or neither (NULL: not made), for the AVX2 kernel with normals: the
     * weights' packed entries, and simulation_count records of 8 floats, px nx py ny pz nz 0 0
     * (sinew_mls_pack_avx2). */
    const sinew_mls_packed_vertex* packed;
    const float* records;
} sinew_mls_frame;

typedef void (*sinew_mls_kernel_fn)(const sinew_mls_frame* frame, uint32_t begin, uint32_t end);

void sinew_mls_kernel_scalar(const sinew_mls_frame* frame, uint32_t begin, uint32_t end);
#if defined(SINEW_SKIN_X86)
/* 128-bit lanes, AVX masked loads (built with -mavx2, run on CPUs with AVX2 and FMA). */
void sinew_mls_kernel_avx2(const sinew_mls_frame* frame, uint32_t begin, uint32_t end);
/* Interleaves positions and normals into sinew_mls_frame.records' layout (records: 8 * count
 * floats, no alignment needed). */
void sinew_mls_pack_avx2(const float* positions, const float* normals, uint32_t count,
                         float* records);
#endif

/* Area-weighted vertex normals (the normalised sum of the incident triangles' cross products;
 * (0, 0, 1) for a vertex without area): the normals to give sinew_mls_apply as sim_normals
 * for a bake that computed its own. Serial. Errors:
 * INVALID_ARGUMENT (NULL arrays), EMPTY_MESH (no vertices or triangles), VERTEX_INDEX. */
sinew_result sinew_mls_vertex_normals(const sinew_host_api* host, const float* positions,
                                      uint32_t vertex_count, const uint32_t* indices,
                                      uint32_t triangle_count, float* out_normals);

/* ---- serialisation ----
 * Little-endian blob, version 1: u32 magic "SMLS", u32 version, u32 K, u32 render_count,
 * u32 simulation_count, u32 flags (0), render_count*K u32 indices, render_count*K f32 weights,
 * render_count*K f32 normal weights, u64 FNV-1a of all bytes before it. */

/* Size in bytes of the blob of `weights` (0 for NULL or empty weights). */
size_t sinew_mls_blob_size(const sinew_mls_weights* weights);

/* Writes the blob into dst (capacity bytes; at least sinew_mls_blob_size). Errors:
 * INVALID_ARGUMENT (NULL or empty weights, NULL dst), OUTPUT_BINDING (capacity too small). */
sinew_result sinew_mls_write(const sinew_host_api* host, const sinew_mls_weights* weights,
                             void* dst, size_t capacity);

/* Reads a blob written by sinew_mls_write, checking every field: magic, version, K, counts,
 * checksum, every index below simulation_count, every weight finite, each vertex's weights
 * summing to 1 (within 1e-3). consumed NULL: the blob must be exactly `size` bytes; else
 * trailing bytes are allowed and *consumed gets the blob's size (for blobs embedded in a larger
 * file). Errors: INVALID_ARGUMENT (NULL), FILE_TRUNCATED (fewer bytes than the header or the
 * counts need), FILE_FORMAT (anything else wrong), OUT_OF_MEMORY. `out` is overwritten; on
 * failure it is left zeroed. */
sinew_result sinew_mls_read(const sinew_host_api* host, const void* data, size_t size,
                            size_t* consumed, sinew_mls_weights* out);

/* sinew_mls_read with the same checks and errors, whose indices and weights stay in `data`
 * where the host is little-endian and they lie at a 4-byte boundary (out->borrowed; else they
 * are copied): restoring a large blob then allocates only the packed entries. `data` must stay
 * valid and unchanged until the weights are freed. */
sinew_result sinew_mls_read_in_place(const sinew_host_api* host, const void* data, size_t size,
                                     size_t* consumed, sinew_mls_weights* out);

#endif
