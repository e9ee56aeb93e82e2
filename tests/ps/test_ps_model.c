/* The pose-independent model of the ps backend: geometry helpers against brute force, the
 * volumetric skeleton (Sec. 3.1), the shrunken skin (Sec. 3.2), the tissue mesh and its rest
 * data (Sec. 3.3, 4.1), and the upsampling records (Sec. 6); the shrinking's scalar and vector
 * paths give the same bits. SPDX-License-Identifier: MIT */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps_fixture.h"
#include "ps_internal.h"

static double frand(uint64_t* s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static double d2(const double* a, const double* b)
{
    return (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]);
}

/* The closest point on a triangle beats every point of a dense barycentric sampling, and its
 * barycentric coordinates reproduce it. */
static void test_closest_on_triangle(void** state)
{
    (void)state;
    uint64_t seed = 7;
    for (int trial = 0; trial < 200; ++trial) {
        double a[3], b[3], c[3], p[3];
        for (int k = 0; k < 3; ++k) {
            a[k] = frand(&seed), b[k] = frand(&seed), c[k] = frand(&seed), p[k] = 2.0 * frand(&seed);
        }
        if (trial % 10 == 0) memcpy(c, b, sizeof c); /* degenerate triangles too */
        double q[3], bary[3];
        ps_closest_on_triangle(p, a, b, c, q, bary);
        double best = d2(p, q);
        assert_true(bary[0] >= -1e-12 && bary[1] >= -1e-12 && bary[2] >= -1e-12);
        assert_true(fabs(bary[0] + bary[1] + bary[2] - 1.0) < 1e-12);
        for (int k = 0; k < 3; ++k)
            assert_true(fabs(bary[0] * a[k] + bary[1] * b[k] + bary[2] * c[k] - q[k]) < 1e-9);
        const int steps = 60;
        for (int i = 0; i <= steps; ++i)
            for (int j = 0; i + j <= steps; ++j) {
                double u = (double)i / steps, v = (double)j / steps, s[3];
                for (int k = 0; k < 3; ++k) s[k] = (1.0 - u - v) * a[k] + u * b[k] + v * c[k];
                assert_true(best <= d2(p, s) + 1e-12);
            }
    }
}

/* Segment-triangle distance against sampling both; a crossing segment has distance 0. */
static void test_segment_triangle_distance(void** state)
{
    (void)state;
    uint64_t seed = 11;
    for (int trial = 0; trial < 100; ++trial) {
        double a[3], b[3], c[3], p0[3], p1[3];
        for (int k = 0; k < 3; ++k) {
            a[k] = frand(&seed), b[k] = frand(&seed), c[k] = frand(&seed);
            p0[k] = 2.0 * frand(&seed), p1[k] = 2.0 * frand(&seed);
        }
        double d = ps_segment_triangle_dist2(p0, p1, a, b, c);
        double best = DBL_MAX;
        for (int i = 0; i <= 200; ++i) {
            double t = i / 200.0, s[3], q[3], bary[3];
            for (int k = 0; k < 3; ++k) s[k] = p0[k] + t * (p1[k] - p0[k]);
            ps_closest_on_triangle(s, a, b, c, q, bary);
            best = fmin(best, d2(s, q));
        }
        assert_true(d <= best + 1e-12);
        assert_true(sqrt(best) - sqrt(d) < 0.02); /* sampling step bound */
    }
    double a[3] = {0, 0, 0}, b[3] = {1, 0, 0}, c[3] = {0, 1, 0};
    double p0[3] = {0.2, 0.2, -1}, p1[3] = {0.2, 0.2, 1};
    assert_true(ps_segment_triangle_dist2(p0, p1, a, b, c) == 0.0);
}

/* The grid finds the same closest distance as a scan over every triangle. */
static void test_grid_closest(void** state)
{
    (void)state;
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    uint64_t seed = 3;
    enum { V = 300, T = 200 };
    double* pos = malloc(sizeof(double) * 3 * V);
    uint32_t* tri = malloc(sizeof(uint32_t) * 3 * T);
    for (int i = 0; i < 3 * V; ++i) pos[i] = 5.0 * frand(&seed);
    for (int t = 0; t < T; ++t) {
        /* small triangles around random centres */
        for (int k = 0; k < 3; ++k) tri[3 * t + k] = (uint32_t)(3 * (t % 100) + k);
    }
    for (int v = 0; v < 100; ++v)
        for (int k = 1; k < 3; ++k)
            for (int q = 0; q < 3; ++q) pos[3 * (3 * v + k) + q] = pos[3 * (3 * v) + q] + 0.3 * frand(&seed);
    ps_grid grid;
    assert_int_equal(ps_grid_build(&host.api, pos, V, tri, T, &grid), SINEW_OK);
    for (int trial = 0; trial < 300; ++trial) {
        double p[3] = {7.0 * frand(&seed), 7.0 * frand(&seed), 7.0 * frand(&seed)};
        double q[3], bary[3];
        uint32_t t = ps_grid_closest(&grid, p, q, bary);
        assert_true(t < T);
        double best = DBL_MAX;
        for (int s = 0; s < T; ++s) {
            double r[3], bb[3];
            ps_closest_on_triangle(p, pos + 3 * tri[3 * s], pos + 3 * tri[3 * s + 1],
                                   pos + 3 * tri[3 * s + 2], r, bb);
            best = fmin(best, d2(p, r));
        }
        assert_true(fabs(d2(p, q) - best) <= 1e-12 * (1.0 + best));
    }
    ps_grid_free(&host.api, &grid);
    free(pos);
    free(tri);
}

static void joint_pos(const ps_model* m, uint32_t j, double out[3])
{
    ps_joint_position(m, j, out);
}

/* Signed distance to the volumetric skeleton, written independently of ps_skeleton.c. */
static double skeleton_sdf(const ps_model* m, const double p[3])
{
    double best = DBL_MAX;
    for (uint32_t b = 0; b < m->bone_count; ++b) {
        double a[3], e[3], q[3];
        joint_pos(m, m->bones[b].end[0], a);
        joint_pos(m, m->bones[b].end[1], e);
        ps_closest_on_segment(p, a, e, q);
        best = fmin(best, sqrt(d2(p, q)) - m->bones[b].radius);
    }
    for (uint32_t j = 0; j < m->joint_count; ++j) {
        if (m->joint_radius[j] <= 0.0) continue;
        double c[3];
        joint_pos(m, j, c);
        best = fmin(best, sqrt(d2(p, c)) - m->joint_radius[j]);
    }
    return best;
}

static void check_model(const ps_test_rig* rig, const ps_model* m, int expect_exact_upsampling)
{
    /* Sec. 3.1: every bone fits its segment (eq. 1), radii within 75 % of the skin distance. */
    for (uint32_t b = 0; b < m->bone_count; ++b) {
        const ps_bone* bone = &m->bones[b];
        double a[3], e[3];
        joint_pos(m, bone->end[0], a);
        joint_pos(m, bone->end[1], e);
        double len = sqrt(d2(a, e));
        if (bone->end[0] != bone->end[1])
            assert_true(m->joint_radius[bone->end[0]] + m->joint_radius[bone->end[1]] +
                            2.0 * bone->radius <= len * (1.0 + 1e-6));
        double closest = DBL_MAX;
        for (uint32_t t = 0; t < m->triangle_count; ++t) {
            const uint32_t* tri = m->triangles + 3u * t;
            closest = fmin(closest, ps_segment_triangle_dist2(a, e, m->rest + 3u * tri[0],
                                                              m->rest + 3u * tri[1],
                                                              m->rest + 3u * tri[2]));
        }
        assert_true(bone->radius <= 0.75 * sqrt(closest) * (1.0 + 1e-9));
        assert_true(m->joint_radius[bone->end[0]] >= 0.0 && m->joint_radius[bone->end[1]] >= 0.0);
    }
    /* Sec. 3.2: base points lie on the volumetric bones of their own vertex (so on or inside
     * the volumetric skeleton; outside only where the skin vertex itself was inside), each
     * follows a valid bone. */
    uint32_t n = m->n, off = 0;
    for (uint32_t i = 0; i < n; ++i) {
        double sdf = skeleton_sdf(m, m->rest + 3u * ((size_t)n + i));
        if (sdf > 1e-6 * m->diagonal) ++off;
        assert_true(m->vertex_bone[i] < m->bone_count && m->vertex_bone[n + i] < m->bone_count);
    }
    assert_true(off <= m->inside_count);
    /* Sec. 3.3: 3 tets per prism; a tet not excluded fits its rest shape exactly (A X = I)
     * and, unless inverted at rest, has positive volume (consistent orientation). */
    assert_int_equal(m->tet_count, 3u * m->triangle_count);
    uint32_t negative = 0;
    for (uint32_t t = 0; t < m->tet_count; ++t) {
        if (m->tet_excluded[t]) continue;
        const double* A = m->tet_A + 12u * t;
        const uint32_t* tv = m->tets + 4u * t;
        double scale = 0.0;
        for (int k = 0; k < 12; ++k) scale = fmax(scale, fabs(A[k]));
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) {
                double f = 0.0, colsum = 0.0;
                for (int q = 0; q < 4; ++q) f += A[4 * r + q] * m->rest[3u * tv[q] + c];
                for (int q = 0; q < 4; ++q) colsum += A[4 * r + q];
                assert_true(fabs(f - (r == c ? 1.0 : 0.0)) < 1e-7 * (1.0 + scale * m->diagonal));
                /* translation invariance: the fit of a mean-centred shape */
                assert_true(fabs(colsum) < 1e-9 * (1.0 + scale));
            }
        if (m->tet_volume[t] < 0.0) ++negative;
    }
    assert_int_equal(negative, m->inverted_count);
    /* Upsampling: the rest pose reproduces the render mesh. */
    const sinew_mesh_view* render = &rig->view.render_mesh;
    assert_int_equal(m->render_count, render->vertex_count);
    float* skin = malloc(sizeof(float) * 3 * n);
    float* normals = malloc(sizeof(float) * 3 * n);
    for (size_t k = 0; k < 3u * n; ++k) skin[k] = (float)m->rest[k];
    for (uint32_t i = 0; i < n; ++i) ps_vertex_normal(m, skin, i, normals + 3u * i);
    double worst = 0.0;
    for (uint32_t r = 0; r < m->render_count; ++r) {
        const ps_upsample* u = &m->upsample[r];
        float pos[3];
        if (u->triangle == PS_NONE) {
            for (int k = 0; k < 3; ++k) pos[k] = skin[3u * u->vertex + k] + u->offset[k];
        } else {
            const uint32_t* t = m->triangles + 3u * u->triangle;
            float p[3], tg[3], bt[3], nn[3];
            ps_surface_frame(skin + 3u * t[0], skin + 3u * t[1], skin + 3u * t[2],
                             normals + 3u * t[0], normals + 3u * t[1], normals + 3u * t[2],
                             u->bary, p, tg, bt, nn);
            for (int k = 0; k < 3; ++k)
                pos[k] = p[k] + u->offset[0] * tg[k] + u->offset[1] * bt[k] + u->offset[2] * nn[k];
        }
        for (int k = 0; k < 3; ++k)
            worst = fmax(worst, fabs((double)pos[k] - render->positions[3u * r + k]));
    }
    print_message("%u skin vertices, %u bones, %u tets (%u degenerate, %u inverted), shrinking "
                  "%u iterations (residual %.2g), upsampling error %.3g of the diagonal\n",
                  n, m->bone_count, m->tet_count, m->degenerate_count, m->inverted_count,
                  m->shrink_iterations, m->shrink_residual, worst / m->diagonal);
    if (expect_exact_upsampling)
        assert_true(worst == 0.0);
    else
        assert_true(worst < 1e-5 * m->diagonal);
    free(skin);
    free(normals);
}

static int compare_face(const void* a, const void* b)
{
    const uint32_t* x = (const uint32_t*)a;
    const uint32_t* y = (const uint32_t*)b;
    for (int k = 0; k < 3; ++k)
        if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
    return 0;
}

static void test_cylinder_model(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_INFO, 1);
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_model m;
    assert_int_equal(ps_model_build(&host.api, &rig.view, &m), SINEW_OK);
    assert_int_equal(m.bone_count, 3);
    assert_int_equal(m.degenerate_count, 0);
    assert_int_equal(m.inverted_count, 0);
    /* the residual of the smoothing is reported in one INFO line */
    assert_true(host.log.count[SINEW_LOG_INFO] >= 1);
    assert_true(m.shrink_residual <= 1e-6 || m.shrink_iterations >= 1000u);
    check_model(&rig, &m, 1);
    /* The tissue mesh is conforming: each triangle face of a tet is shared by at most two
     * tets (a mismatched quad split would leave faces that no neighbour has). */
    uint32_t faces = 4u * m.tet_count;
    uint32_t(*f)[3] = malloc(sizeof *f * faces);
    for (uint32_t t = 0; t < m.tet_count; ++t)
        for (int k = 0; k < 4; ++k) {
            uint32_t v[3], c = 0;
            for (int q = 0; q < 4; ++q)
                if (q != k) v[c++] = m.tets[4u * t + q];
            for (int i = 0; i < 2; ++i)
                for (int j = 0; j < 2 - i; ++j)
                    if (v[j] > v[j + 1]) {
                        uint32_t x = v[j];
                        v[j] = v[j + 1];
                        v[j + 1] = x;
                    }
            memcpy(f[4u * t + (uint32_t)k], v, sizeof v);
        }
    /* count faces seen once: they must be exactly the skin and base triangles (closed mesh) */
    qsort(f, faces, sizeof *f, compare_face);
    uint32_t once = 0;
    for (uint32_t a = 0; a < faces;) {
        uint32_t b = a + 1;
        while (b < faces && compare_face(f[a], f[b]) == 0) ++b;
        assert_true(b - a <= 2);
        if (b - a == 1) ++once;
        a = b;
    }
    assert_int_equal(once, 2u * m.triangle_count);
    free(f);
    ps_model_free(&host.api, &m);
    ps_test_rig_free(&rig);
}

/* The male character: a separate simulation mesh, upsampled to the render mesh. */
static void test_male_model(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/male/male.ini");
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_model m;
    assert_int_equal(ps_model_build(&host.api, &rig.view, &m), SINEW_OK);
    assert_int_equal(m.n, rig.view.simulation_mesh.vertex_count);
    assert_non_null(m.restore);
    /* degenerate and inverted tets are reported in one WARNING line */
    assert_true(host.log.count[SINEW_LOG_WARNING] <= 1);
    if (m.degenerate_count || m.inverted_count || m.poor_count)
        assert_int_equal(host.log.count[SINEW_LOG_WARNING], 1);
    check_model(&rig, &m, 0);
    ps_model_free(&host.api, &m);
    ps_test_rig_free(&rig);
}

/* Three sub-meshes, seams welded, bones poking out of the skin (zero radius), degenerate tets:
 * the model builds and every figure stays finite. */
static void test_epileptic_model(void** state)
{
    (void)state;
    const char* path = sinew_test_assimp_path("X/BCN_Epileptic.X");
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    assert_true(rig.view.render_mesh.submesh_count >= 2);
    ps_model m;
    assert_int_equal(ps_model_build(&host.api, &rig.view, &m), SINEW_OK);
    assert_true(m.n < rig.view.render_mesh.vertex_count); /* seams were welded */
    for (size_t k = 0; k < 6u * m.n; ++k) assert_true(isfinite(m.rest[k]));
    for (size_t k = 0; k < 12u * m.tet_count; ++k) assert_true(isfinite(m.tet_A[k]));
    assert_int_equal(host.log.count[SINEW_LOG_WARNING],
                     m.degenerate_count || m.inverted_count || m.poor_count);
    check_model(&rig, &m, 1);
    ps_model_free(&host.api, &m);
    ps_test_rig_free(&rig);
}

/* The tissue mesh of each character (Sec. 3.2, 3.3): no tet inverted at rest on the cylinder
 * and the tbone, none below PS_POOR_QUALITY on the cylinder; the tbone's tall prisms, the male
 * and BCN_Epileptic.X (open, several parts, a facial rig) keep some, bounded here about 10 %
 * above the counts of today's shrinking so that a change that makes them worse is seen. */
static void check_tissue(const char* path, uint32_t max_inverted, uint32_t max_poor,
                         uint32_t max_degenerate)
{
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_model m;
    assert_int_equal(ps_model_build(&host.api, &rig.view, &m), SINEW_OK);
    print_message("%s: %u tets, %u inverted, %u below quality %g, %u degenerate\n", path,
                  m.tet_count, m.inverted_count, m.poor_count, PS_POOR_QUALITY,
                  m.degenerate_count);
    assert_true(m.inverted_count <= max_inverted);
    assert_true(m.poor_count <= max_poor);
    assert_true(m.degenerate_count <= max_degenerate);
    /* the counts are those of the tets themselves */
    uint32_t inverted = 0, poor = 0;
    for (uint32_t t = 0; t < m.tet_count; ++t) {
        const uint32_t* v = m.tets + 4u * t;
        double q = ps_tet_quality(m.rest + 3u * v[0], m.rest + 3u * v[1], m.rest + 3u * v[2],
                                  m.rest + 3u * v[3], NULL);
        if (m.tet_excluded[t]) continue;
        inverted += q < 0.0;
        poor += q >= 0.0 && q < PS_POOR_QUALITY;
    }
    assert_int_equal(inverted, m.inverted_count);
    assert_int_equal(poor, m.poor_count);
    ps_model_free(&host.api, &m);
    ps_test_rig_free(&rig);
}

static void test_tissue_quality(void** state)
{
    (void)state;
    check_tissue(sinew_test_data_path("characters/cylinder/cylinder.ini"), 0, 0, 0);
    check_tissue(sinew_test_data_path("characters/tbone/tbone.ini"), 0, 1300, 0);
    check_tissue(sinew_test_data_path("characters/male/male.ini"), 250, 1900, 5);
    check_tissue(sinew_test_assimp_path("X/BCN_Epileptic.X"), 960, 1700, 2000);
}

/* ps_shrink with a chosen path (ps_shrink.c): only tests choose it, so it is declared here. */
sinew_result ps_shrink_with(const sinew_host_api* host, const sinew_rig_view* rig, ps_model* m,
                            sinew_simd simd, uint32_t part_vertices);

/* The model of `rig` up to its shrunken skin, shrunk by ps_shrink_with. */
static void shrunk_model(ps_test_host* host, const ps_test_rig* rig, sinew_simd simd,
                         uint32_t part_vertices, ps_model* m)
{
    memset(m, 0, sizeof *m);
    assert_int_equal(ps_model_weld(&host->api, &rig->view, m), SINEW_OK);
    assert_int_equal(ps_skeleton_build(&host->api, &rig->view, NULL, m), SINEW_OK);
    assert_int_equal(ps_shrink_with(&host->api, &rig->view, m, simd, part_vertices), SINEW_OK);
}

/* The shrunken skin (Sec. 3.2) has the same bits whether its smoothing runs one vertex at a
 * time or four at a time in vector lanes, in one job or in parts of any size, with job ranges
 * of any length. */
static void test_shrink_paths(void** state)
{
    (void)state;
    /* The test characters and BCN_Epileptic.X (open parts, bones poking out of the skin). */
    const char* names[] = {"characters/cylinder/cylinder.ini", "characters/tbone/tbone.ini",
                           "characters/male/male.ini", "X/BCN_Epileptic.X"};
    const struct {
        int split;
        sinew_simd simd;
        uint32_t part_vertices;
    } runs[] = {{0, SINEW_SIMD_AUTO, 0}, {1, SINEW_SIMD_SCALAR, 16}, {1, SINEW_SIMD_AUTO, 16},
                {1, SINEW_SIMD_AUTO, 1}, {1, SINEW_SIMD_AUTO, 100000}};
    for (size_t c = 0; c < sizeof names / sizeof names[0]; ++c) {
        const char* path =
            c < 3 ? sinew_test_data_path(names[c]) : sinew_test_assimp_path(names[c]);
        ps_test_host serial, split;
        ps_test_host_init(&serial, SINEW_LOG_WARNING, 0);
        ps_test_host_init(&split, SINEW_LOG_WARNING, 1);
        split.api.jobs.thread_count = 5; /* parts of the smoothing, run in uneven job ranges */
        ps_test_rig rig;
        ps_test_rig_load(&rig, path);
        ps_model ref;
        shrunk_model(&serial, &rig, SINEW_SIMD_SCALAR, 0, &ref);
        for (size_t k = 0; k < sizeof runs / sizeof runs[0]; ++k) {
            ps_model m;
            shrunk_model(runs[k].split ? &split : &serial, &rig, runs[k].simd,
                         runs[k].part_vertices, &m);
            assert_int_equal(m.n, ref.n);
            assert_memory_equal(m.rest, ref.rest, 6u * ref.n * sizeof(double));
            assert_memory_equal(m.vertex_bone, ref.vertex_bone, 2u * ref.n * sizeof(uint32_t));
            assert_int_equal(m.shrink_iterations, ref.shrink_iterations);
            assert_memory_equal(&m.shrink_residual, &ref.shrink_residual, sizeof(double));
            assert_int_equal(m.inside_count, ref.inside_count);
            assert_memory_equal(&m.thickness, &ref.thickness, sizeof(double));
            ps_model_free(&split.api, &m);
        }
        print_message("%s: %u skin vertices, %u smoothing iterations, the same bits on %zu "
                      "paths\n", names[c], ref.n, ref.shrink_iterations,
                      sizeof runs / sizeof runs[0]);
        ps_model_free(&serial.api, &ref);
        ps_test_rig_free(&rig);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_closest_on_triangle),
        cmocka_unit_test(test_segment_triangle_distance),
        cmocka_unit_test(test_grid_closest),
        cmocka_unit_test(test_cylinder_model),
        cmocka_unit_test(test_male_model),
        cmocka_unit_test(test_epileptic_model),
        cmocka_unit_test(test_tissue_quality),
        cmocka_unit_test(test_shrink_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
