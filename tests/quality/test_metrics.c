/* The quality metrics on hand-made meshes whose answers are known by construction.
 * SPDX-License-Identifier: MIT */
#include "test_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sample_character.h"
#include "sample_metrics.h"

/* cmocka compares only floats; these figures are doubles. NaN never passes. */
#define assert_near(a, b, eps)                                                              \
    do {                                                                                    \
        double a_ = (a), b_ = (b);                                                          \
        if (!(fabs(a_ - b_) <= (eps))) {                                                    \
            fail_msg("%s = %.17g, expected %.17g within %g", #a, a_, b_, (double)(eps));    \
        }                                                                                   \
    } while (0)

/* A unit cube [0,1]^3 with outward-facing triangles, two per face. */
static const float cube_positions[8 * 3] = {
    0, 0, 0,  1, 0, 0,  1, 1, 0,  0, 1, 0,
    0, 0, 1,  1, 0, 1,  1, 1, 1,  0, 1, 1,
};
static const uint32_t cube_indices[12 * 3] = {
    0, 2, 1,  0, 3, 2,   /* z = 0, normal -z */
    4, 5, 6,  4, 6, 7,   /* z = 1, normal +z */
    0, 1, 5,  0, 5, 4,   /* y = 0, normal -y */
    3, 7, 6,  3, 6, 2,   /* y = 1, normal +y */
    0, 4, 7,  0, 7, 3,   /* x = 0, normal -x */
    1, 2, 6,  1, 6, 5,   /* x = 1, normal +x */
};

static void build(const float* positions, uint32_t vertex_count, const uint32_t* indices,
                  uint32_t triangle_count, sample_topology* topology)
{
    assert_int_equal(sample_topology_build(positions, vertex_count, indices, triangle_count, topology),
                     SINEW_OK);
}

static void test_cube_volume_and_edges(void** state)
{
    (void)state;
    sample_topology t;
    build(cube_positions, 8, cube_indices, 12, &t);
    assert_true(t.closed);
    assert_int_equal(t.welded_vertex_count, 8);
    assert_int_equal(t.triangle_count, 12);
    assert_int_equal(t.edge_count, 18);            /* 12 cube edges + 6 face diagonals */
    assert_near(sample_enclosed_volume(&t, cube_positions), 1.0, 1e-12);
    assert_int_equal(sample_count_self_intersections(&t, cube_positions), 0);
    double lo, hi;
    sample_edge_stretch(&t, cube_positions, cube_positions, &lo, &hi);
    assert_near(lo, 1.0, 0.0);
    assert_near(hi, 1.0, 0.0);
    assert_near(sample_bounding_diagonal(cube_positions, 8), sqrt(3.0), 1e-12);
    sample_topology_free(&t);
    assert_null(t.weld);
}

static void test_tetrahedron_volume_and_orientation(void** state)
{
    (void)state;
    const float p[4 * 3] = { 0, 0, 0,  2, 0, 0,  0, 3, 0,  0, 0, 4 };
    const uint32_t outward[4 * 3] = { 0, 2, 1,  0, 1, 3,  0, 3, 2,  1, 2, 3 };
    uint32_t inward[4 * 3];
    for (int i = 0; i < 4; ++i) {
        inward[3 * i] = outward[3 * i];
        inward[3 * i + 1] = outward[3 * i + 2];
        inward[3 * i + 2] = outward[3 * i + 1];
    }
    sample_topology t;
    build(p, 4, outward, 4, &t);
    assert_true(t.closed);
    assert_near(sample_enclosed_volume(&t, p), 2.0 * 3.0 * 4.0 / 6.0, 1e-12);
    sample_topology_free(&t);
    build(p, 4, inward, 4, &t);
    assert_true(t.closed);
    assert_near(sample_enclosed_volume(&t, p), -4.0, 1e-12);
    sample_topology_free(&t);
}

static void test_open_and_inconsistent_meshes_have_no_volume(void** state)
{
    (void)state;
    sample_topology t;
    build(cube_positions, 8, cube_indices, 11, &t);   /* one triangle missing */
    assert_false(t.closed);
    assert_true(isnan(sample_enclosed_volume(&t, cube_positions)));
    sample_topology_free(&t);

    uint32_t flipped[12 * 3];
    memcpy(flipped, cube_indices, sizeof flipped);
    flipped[1] = cube_indices[2];
    flipped[2] = cube_indices[1];
    build(cube_positions, 8, flipped, 12, &t);
    assert_false(t.closed);   /* every edge has two triangles, but one walks the wrong way */
    assert_true(isnan(sample_enclosed_volume(&t, cube_positions)));
    sample_topology_free(&t);
}

/* The same cube with every face owning its four corners, as importers split at seams. */
static void test_welded_duplicates(void** state)
{
    (void)state;
    float p[24 * 3];
    uint32_t idx[12 * 3];
    for (uint32_t f = 0; f < 6; ++f) {
        /* Corners of face f in the order they first appear in its two triangles. */
        const uint32_t* tri = cube_indices + 6 * f;
        uint32_t corner[4], corners = 0;
        for (uint32_t i = 0; i < 6; ++i) {
            int seen = 0;
            for (uint32_t k = 0; k < corners; ++k) seen |= corner[k] == tri[i];
            if (!seen) corner[corners++] = tri[i];
        }
        assert_int_equal(corners, 4);
        for (uint32_t k = 0; k < 4; ++k) memcpy(p + 3 * (4 * f + k), cube_positions + 3 * corner[k], 12);
        for (uint32_t i = 0; i < 6; ++i) {
            for (uint32_t k = 0; k < 4; ++k) {
                if (tri[i] == corner[k]) idx[6 * f + i] = 4 * f + k;
            }
        }
    }
    sample_topology t;
    build(p, 24, idx, 12, &t);
    assert_int_equal(t.welded_vertex_count, 8);
    assert_int_equal(t.edge_count, 18);
    assert_true(t.closed);
    assert_near(sample_enclosed_volume(&t, p), 1.0, 1e-12);
    assert_int_equal(sample_count_self_intersections(&t, p), 0);
    /* The representative of each position is its lowest index. */
    for (uint32_t v = 0; v < 24; ++v) {
        assert_true(t.weld[v] <= v);
        assert_memory_equal(p + 3 * t.weld[v], p + 3 * v, 12);
    }
    sample_topology_free(&t);

    /* -0 and +0 are one position. */
    const float signed_zero[6 * 3] = { 0, 0, 0,  1, 0, 0,  0, 1, 0,  -0.0f, 0, 0,  1, 0, 0,  0, 0, 1 };
    const uint32_t two[6] = { 0, 1, 2,  3, 4, 5 };
    build(signed_zero, 6, two, 2, &t);
    assert_int_equal(t.welded_vertex_count, 4);
    assert_int_equal(t.edge_count, 5);
    sample_topology_free(&t);
}

static void test_crossing_triangles_intersect(void** state)
{
    (void)state;
    /* The second triangle pierces the first through its interior. */
    const float p[6 * 3] = { 0, 0, 0,  4, 0, 0,  0, 4, 0,
                             1, 1, -1,  1, 1, 1,  2, 1, 1 };
    const uint32_t idx[6] = { 0, 1, 2,  3, 4, 5 };
    sample_topology t;
    build(p, 6, idx, 2, &t);
    assert_int_equal(sample_count_self_intersections(&t, p), 1);
    sample_topology_free(&t);

    /* Lift it above the plane: no longer. */
    float q[6 * 3];
    memcpy(q, p, sizeof q);
    q[11] = 0.5f;
    build(q, 6, idx, 2, &t);
    assert_int_equal(sample_count_self_intersections(&t, q), 0);
    sample_topology_free(&t);
}

static void test_shared_vertex_pairs_do_not_count(void** state)
{
    (void)state;
    /* Two triangles through one common vertex that cross each other there: shared by index,
     * then by position only (welding must make it the same vertex). */
    const float p[5 * 3] = { 0, 0, 0,  2, 0, 0,  0, 2, 0,  1, 1, -1,  1, 1, 1 };
    const uint32_t by_index[6] = { 0, 1, 2,  0, 3, 4 };
    sample_topology t;
    build(p, 5, by_index, 2, &t);
    assert_int_equal(sample_count_self_intersections(&t, p), 0);
    sample_topology_free(&t);

    const float q[6 * 3] = { 0, 0, 0,  2, 0, 0,  0, 2, 0,  0, 0, 0,  1, 1, -1,  1, 1, 1 };
    const uint32_t by_position[6] = { 0, 1, 2,  3, 4, 5 };
    build(q, 6, by_position, 2, &t);
    assert_int_equal(t.welded_vertex_count, 5);
    assert_int_equal(sample_count_self_intersections(&t, q), 0);
    sample_topology_free(&t);

    /* The same pair with the common corner moved apart by a hair: now they do intersect,
     * so the zero above came from the shared vertex, not from a test that cannot fire. */
    float r[6 * 3];
    memcpy(r, q, sizeof r);
    r[9] = -0.01f;
    r[10] = 0.3f;
    r[11] = 0.0f;
    build(r, 6, by_position, 2, &t);
    assert_int_equal(sample_count_self_intersections(&t, r), 1);
    sample_topology_free(&t);
}

static void set(double v[3], double x, double y, double z)
{
    v[0] = x;
    v[1] = y;
    v[2] = z;
}

static void test_triangle_pair_cases(void** state)
{
    (void)state;
    double a0[3], a1[3], a2[3], b0[3], b1[3], b2[3];
    set(a0, 0, 0, 0); set(a1, 4, 0, 0); set(a2, 0, 4, 0);

    /* Coplanar, overlapping. */
    set(b0, 1, 1, 0); set(b1, 5, 1, 0); set(b2, 1, 5, 0);
    assert_true(sample_triangles_intersect(a0, a1, a2, b0, b1, b2));
    /* Coplanar, one inside the other with no edge crossing. */
    set(b0, 0.5, 0.5, 0); set(b1, 1, 0.5, 0); set(b2, 0.5, 1, 0);
    assert_true(sample_triangles_intersect(a0, a1, a2, b0, b1, b2));
    assert_true(sample_triangles_intersect(b0, b1, b2, a0, a1, a2));
    /* Coplanar, apart. */
    set(b0, 3, 3, 0); set(b1, 6, 3, 0); set(b2, 3, 6, 0);
    assert_false(sample_triangles_intersect(a0, a1, a2, b0, b1, b2));
    /* Parallel planes. */
    set(b0, 0, 0, 1); set(b1, 4, 0, 1); set(b2, 0, 4, 1);
    assert_false(sample_triangles_intersect(a0, a1, a2, b0, b1, b2));
    /* Touching: a corner of b rests on a's interior. */
    set(b0, 1, 1, 0); set(b1, 1, 1, 2); set(b2, 2, 1, 2);
    assert_true(sample_triangles_intersect(a0, a1, a2, b0, b1, b2));
    /* Crossing planes whose line of intersection misses a. */
    set(b0, 5, 5, -1); set(b1, 5, 5, 1); set(b2, 6, 5, 1);
    assert_false(sample_triangles_intersect(a0, a1, a2, b0, b1, b2));
    /* b passes through a's edge region without touching it (a's edge from (4,0) to (0,4)). */
    set(b0, 2.1, 2.1, -1); set(b1, 2.1, 2.1, 1); set(b2, 3, 3, 0);
    assert_false(sample_triangles_intersect(a0, a1, a2, b0, b1, b2));
    /* Both straddle each other's plane, yet apart (a classic false positive of plane tests). */
    set(b0, 1, 5, -1); set(b1, 1, 5, 1); set(b2, 1, 10, 0);
    assert_false(sample_triangles_intersect(a0, a1, a2, b0, b1, b2));
    /* A zero-area triangle (a segment) piercing a. */
    set(b0, 1, 1, -1); set(b1, 1, 1, 0); set(b2, 1, 1, 1);
    assert_true(sample_triangles_intersect(a0, a1, a2, b0, b1, b2));
    assert_true(sample_triangles_intersect(b0, b1, b2, a0, a1, a2));
}

static void test_stretch_of_scaled_mesh(void** state)
{
    (void)state;
    sample_topology t;
    build(cube_positions, 8, cube_indices, 12, &t);
    float scaled[8 * 3], stretched[8 * 3];
    for (int i = 0; i < 24; ++i) {
        scaled[i] = 2.5f * cube_positions[i];
        stretched[i] = cube_positions[i] * (i % 3 == 0 ? 2.0f : 1.0f);
    }
    double lo, hi;
    sample_edge_stretch(&t, cube_positions, scaled, &lo, &hi);
    assert_near(lo, 2.5, 1e-12);
    assert_near(hi, 2.5, 1e-12);
    assert_near(sample_enclosed_volume(&t, scaled), 2.5 * 2.5 * 2.5, 1e-9);
    sample_edge_stretch(&t, cube_positions, stretched, &lo, &hi);
    assert_near(lo, 1.0, 1e-12);   /* edges along y and z */
    assert_near(hi, 2.0, 1e-12);   /* edges along x */
    assert_near(sample_enclosed_volume(&t, stretched), 2.0, 1e-12);
    sample_topology_free(&t);
}

static void test_nonfinite_vertices(void** state)
{
    (void)state;
    sample_topology t;
    build(cube_positions, 8, cube_indices, 12, &t);
    float p[8 * 3];
    memcpy(p, cube_positions, sizeof p);
    assert_int_equal(sample_count_nonfinite(p, 8), 0);
    p[4] = NAN;
    p[20] = INFINITY;
    assert_int_equal(sample_count_nonfinite(p, 8), 2);
    assert_true(isnan(sample_enclosed_volume(&t, p)));
    assert_int_equal(sample_count_self_intersections(&t, p), 0);
    double lo, hi;
    sample_edge_stretch(&t, cube_positions, p, &lo, &hi);
    assert_near(lo, 1.0, 1e-12);   /* only edges with finite ends are measured */
    assert_near(hi, 1.0, 1e-12);
    p[0] = 0.5f;                           /* vertex 0 moves: its edge to vertex 3 stretches */
    sample_edge_stretch(&t, cube_positions, p, &lo, &hi);
    assert_near(hi, sqrt(1.25), 1e-6);
    /* and its diagonals to vertices 2 and 5 shrink; its edge to vertex 1 (NaN) is skipped */
    assert_near(lo, sqrt(1.25) / sqrt(2.0), 1e-6);
    sample_topology_free(&t);
}

static void test_topology_rejects_bad_input(void** state)
{
    (void)state;
    sample_topology t;
    const uint32_t bad_index[3] = { 0, 1, 8 };
    assert_int_equal(sample_topology_build(NULL, 8, cube_indices, 12, &t), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sample_topology_build(cube_positions, 8, NULL, 12, &t), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sample_topology_build(cube_positions, 8, cube_indices, 12, NULL),
                     SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sample_topology_build(cube_positions, 0, cube_indices, 12, &t), SINEW_ERROR_EMPTY_MESH);
    assert_int_equal(sample_topology_build(cube_positions, 8, cube_indices, 0, &t), SINEW_ERROR_EMPTY_MESH);
    assert_int_equal(sample_topology_build(cube_positions, 8, bad_index, 1, &t), SINEW_ERROR_VERTEX_INDEX);
    float p[8 * 3];
    memcpy(p, cube_positions, sizeof p);
    p[7] = NAN;
    assert_int_equal(sample_topology_build(p, 8, cube_indices, 12, &t), SINEW_ERROR_NONFINITE);
    assert_null(t.weld);
    sample_topology_free(&t);
    sample_topology_free(NULL);

    /* A triangle whose corners weld together is dropped and counted. */
    const float q[4 * 3] = { 0, 0, 0,  1, 0, 0,  0, 1, 0,  1, 0, 0 };
    const uint32_t idx[6] = { 0, 1, 2,  0, 1, 3 };
    build(q, 4, idx, 2, &t);
    assert_int_equal(t.triangle_count, 1);
    assert_int_equal(t.degenerate_triangles, 1);
    sample_topology_free(&t);
}

/* The grid must find exactly the pairs that testing every pair finds: the procedural arm
 * folded onto itself (x -> |x|) and wrung, which makes thousands of crossings. */
static void test_grid_matches_all_pairs(void** state)
{
    (void)state;
    sample_character arm;
    assert_int_equal(sample_character_make_arm(20, 12, &arm), SINEW_OK);
    const sinew_mesh_desc* m = &arm.rig.render_mesh;
    sample_topology t;
    build(m->positions, m->vertex_count, m->indices, m->triangle_count, &t);
    assert_true(t.closed);
    float* p = malloc(sizeof(float) * 3 * m->vertex_count);
    assert_non_null(p);
    for (int variant = 0; variant < 2; ++variant) {
        for (uint32_t v = 0; v < m->vertex_count; ++v) {
            const float* r = m->positions + 3 * v;
            if (variant == 0) {
                p[3 * v] = fabsf(r[0]);
                p[3 * v + 1] = r[1];
                p[3 * v + 2] = r[2];
            } else {
                float a = 0.4f * r[0] * r[0];
                p[3 * v] = 0.2f * r[0];
                p[3 * v + 1] = cosf(a) * r[1] - sinf(a) * r[2];
                p[3 * v + 2] = sinf(a) * r[1] + cosf(a) * r[2];
            }
        }
        uint32_t all_pairs = 0;
        for (uint32_t i = 0; i < t.triangle_count; ++i) {
            for (uint32_t j = i + 1; j < t.triangle_count; ++j) {
                const uint32_t* a = t.triangles + 3 * i;
                const uint32_t* b = t.triangles + 3 * j;
                int shared = 0;
                for (int x = 0; x < 3; ++x)
                    for (int y = 0; y < 3; ++y) shared |= a[x] == b[y];
                if (shared) continue;
                double c[6][3];
                for (int k = 0; k < 3; ++k) {
                    for (int d = 0; d < 3; ++d) {
                        c[k][d] = p[3 * a[k] + (uint32_t)d];
                        c[3 + k][d] = p[3 * b[k] + (uint32_t)d];
                    }
                }
                all_pairs += (uint32_t)sample_triangles_intersect(c[0], c[1], c[2], c[3], c[4], c[5]);
            }
        }
        assert_true(all_pairs > 100);
        assert_int_equal(sample_count_self_intersections(&t, p), all_pairs);
    }
    free(p);
    sample_topology_free(&t);
    sample_character_free(&arm);
}

/* One vertex flung far away (finite, 1e30): the grid must stay small (its cells grow
 * instead of multiplying) and still propose every pair that testing all pairs finds. */
static void test_far_vertex_keeps_the_grid_small(void** state)
{
    (void)state;
    sample_topology t;
    build(cube_positions, 8, cube_indices, 12, &t);
    const float far[2] = { 1.0e30f, -1.0e30f };  /* the second pulls needles through the cube */
    for (int variant = 0; variant < 2; ++variant) {
        float p[8 * 3];
        memcpy(p, cube_positions, sizeof p);
        p[18] = far[variant];   /* vertex 6 (1,1,1) -> (+-1e30,1,1) */
        uint32_t all_pairs = 0;
        for (uint32_t i = 0; i < t.triangle_count; ++i) {
            for (uint32_t j = i + 1; j < t.triangle_count; ++j) {
                const uint32_t* a = t.triangles + 3 * i;
                const uint32_t* b = t.triangles + 3 * j;
                int shared = 0;
                for (int x = 0; x < 3; ++x)
                    for (int y = 0; y < 3; ++y) shared |= a[x] == b[y];
                if (shared) continue;
                double c[6][3];
                for (int k = 0; k < 3; ++k) {
                    for (int d = 0; d < 3; ++d) {
                        c[k][d] = p[3 * a[k] + (uint32_t)d];
                        c[3 + k][d] = p[3 * b[k] + (uint32_t)d];
                    }
                }
                all_pairs += (uint32_t)sample_triangles_intersect(c[0], c[1], c[2], c[3], c[4], c[5]);
            }
        }
        if (variant == 1) assert_true(all_pairs >= 4);   /* four side triangles are pierced */
        assert_int_equal(sample_count_self_intersections(&t, p), all_pairs);
    }
    sample_topology_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cube_volume_and_edges),
        cmocka_unit_test(test_tetrahedron_volume_and_orientation),
        cmocka_unit_test(test_open_and_inconsistent_meshes_have_no_volume),
        cmocka_unit_test(test_welded_duplicates),
        cmocka_unit_test(test_crossing_triangles_intersect),
        cmocka_unit_test(test_shared_vertex_pairs_do_not_count),
        cmocka_unit_test(test_triangle_pair_cases),
        cmocka_unit_test(test_stretch_of_scaled_mesh),
        cmocka_unit_test(test_nonfinite_vertices),
        cmocka_unit_test(test_topology_rejects_bad_input),
        cmocka_unit_test(test_grid_matches_all_pairs),
        cmocka_unit_test(test_far_vertex_keeps_the_grid_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
