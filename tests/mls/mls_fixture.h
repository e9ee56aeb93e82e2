/* Shared pieces of the MLS tests: a host whose job system splits ranges unevenly, meshes made
 * in code, and the deformations the tests apply. SPDX-License-Identifier: MIT */
#ifndef SINEW_TEST_MLS_FIXTURE_H
#define SINEW_TEST_MLS_FIXTURE_H

#include <stdint.h>

#include <sinew/sinew_plugin.h>

#include "sinew_mls.h"
#include "test_support.h"

typedef struct mls_test_host {
    sinew_host_api api;
    sinew_test_log log;
    int uneven;                 /* 1: Fibonacci-sized chunks, else one call for everything */
} mls_test_host;

void mls_test_host_init(mls_test_host* host, int uneven);

/* A mesh made in code; free with mls_mesh_free. */
typedef struct mls_mesh {
    uint32_t vertex_count, triangle_count;
    float* positions;
    uint32_t* indices;
} mls_mesh;

/* A flat grid in the plane z = z0: nx * ny vertices spaced `spacing` apart from (x0, y0), two
 * triangles per cell except the cells for which `hole(cx, cy)` says 1. */
mls_mesh mls_make_grid(uint32_t nx, uint32_t ny, float x0, float y0, float z0, float spacing,
                       int (*hole)(uint32_t cx, uint32_t cy));
/* Appends b to a (indices shifted); b is freed. */
void mls_mesh_append(mls_mesh* a, mls_mesh* b);
void mls_mesh_free(mls_mesh* m);
sinew_mesh_view mls_mesh_view(const mls_mesh* m);

/* Diagonal of the bounding box of `count` points. */
double mls_diagonal(const float* positions, uint32_t count);

/* Deformations of amplitude `amp` (the largest displacement over the box [lo, lo + size]):
 * kind 0 an affine map, 1 a quadratic one (all six second-order monomials in every
 * coordinate, plus an affine part). */
typedef struct mls_map {
    int kind;
    double centre[3], scale, amp;
    double lin[3][3], quad[3][6], shift[3];
} mls_map;

mls_map mls_make_map(int kind, const float* positions, uint32_t count, double amplitude);
void mls_map_apply(const mls_map* m, const float* in, uint32_t count, float* out);

/* Runs sinew_mls_apply_simd on every instruction-set request (scalar, sse, avx2, avx512, auto)
 * and asserts that each one this build and CPU run gives the scalar reference's bits: with and
 * without normals, with the weights' packed entries and without them (weights->packed set to
 * NULL in a copy), with a scratch buffer of exactly sinew_mls_scratch_size bytes, into outputs of 12- and 20-byte strides allocated to their last byte (so
 * that a sanitizer sees any write past them) whose padding bytes must stay untouched.
 * Requests this CPU cannot run must be refused with UNSUPPORTED and one error line. Returns the
 * number of runs of a kernel other than the scalar one (0 where none is built in or run). */
int mls_check_kernels(mls_test_host* host, const sinew_mls_weights* w, const float* positions,
                      const float* normals);

#endif
