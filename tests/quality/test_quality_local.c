/* local_volume_ratio and the tissue figures of sinew-quality: the region and its cone volume on
 * a hand-built bar whose bend has a volume worked out by hand, the same figure through
 * sample_quality_run (joint radius from the volumetric skeleton), and the tissue fields, which
 * only the volumetric backends report. SPDX-License-Identifier: MIT */
#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample_character.h"
#include "sample_metrics.h"
#include "sample_quality.h"
#include "sample_tissue.h"

/* The bar: a square tube |y|, |z| <= 1 along x from -4 to 4, with rings of four corners at
 * x = -4, -A, A, 4, capped at both ends (16 vertices, 28 triangles, outward). Joints on its
 * axis at x = -3 (shoulder), 0 (elbow), 3 (wrist); every vertex follows one joint: x < 0 the
 * shoulder, x > 0 the elbow. */
#define BAR_A 0.4f
enum { BAR_RINGS = 4, BAR_VERTICES = 16, BAR_TRIANGLES = 28, BAR_JOINTS = 3 };

typedef struct bar {
    float positions[3 * BAR_VERTICES];
    uint32_t indices[3 * BAR_TRIANGLES];
    uint32_t offsets[BAR_VERTICES + 1];
    uint32_t joints[BAR_VERTICES];
    float weights[BAR_VERTICES];
    int32_t parents[BAR_JOINTS];
    float bind[16 * BAR_JOINTS];
    const char* names[BAR_JOINTS];
} bar;

static void bar_geometry(bar* b)
{
    static const float ring_x[BAR_RINGS] = { -4.0f, -BAR_A, BAR_A, 4.0f };
    static const float corner[4][2] = { { 1, 1 }, { -1, 1 }, { -1, -1 }, { 1, -1 } };
    for (uint32_t r = 0; r < BAR_RINGS; ++r)
        for (uint32_t k = 0; k < 4; ++k) {
            float* p = b->positions + 3 * (4 * r + k);
            p[0] = ring_x[r];
            p[1] = corner[k][0];
            p[2] = corner[k][1];
        }
    /* Corners run counter-clockwise seen from +x, so (a, b, d), (a, d, c) face out of the
     * tube; the caps fan from the first corner. */
    uint32_t* t = b->indices;
    for (uint32_t r = 0; r + 1 < BAR_RINGS; ++r)
        for (uint32_t k = 0; k < 4; ++k) {
            uint32_t i0 = 4 * r + k, i1 = 4 * r + (k + 1) % 4, i2 = i0 + 4, i3 = i1 + 4;
            *t++ = i0; *t++ = i1; *t++ = i3;
            *t++ = i0; *t++ = i3; *t++ = i2;
        }
    const uint32_t last = 4 * (BAR_RINGS - 1);
    *t++ = 0; *t++ = 3; *t++ = 2;
    *t++ = 0; *t++ = 2; *t++ = 1;
    *t++ = last; *t++ = last + 1; *t++ = last + 2;
    *t++ = last; *t++ = last + 2; *t++ = last + 3;
}

static void bar_character(bar* b, sample_character* out)
{
    memset(b, 0, sizeof *b);
    bar_geometry(b);
    for (uint32_t v = 0; v < BAR_VERTICES; ++v) {
        b->offsets[v] = v;
        b->joints[v] = b->positions[3 * v] < 0.0f ? 0u : 1u;
        b->weights[v] = 1.0f;
    }
    b->offsets[BAR_VERTICES] = BAR_VERTICES;
    static const char* const names[BAR_JOINTS] = { "shoulder", "elbow", "wrist" };
    for (uint32_t j = 0; j < BAR_JOINTS; ++j) {
        b->parents[j] = (int32_t)j - 1;
        b->names[j] = names[j];
        float* m = b->bind + 16 * j;
        m[0] = m[5] = m[10] = m[15] = 1.0f;
        m[12] = -3.0f + 3.0f * (float)j;
    }
    memset(out, 0, sizeof *out);
    sinew_rig_desc rig = SINEW_RIG_DESC_INIT;
    rig.name = "bar";
    rig.skeleton.joint_count = BAR_JOINTS;
    rig.skeleton.parents = b->parents;
    rig.skeleton.bind_matrices = b->bind;
    rig.skeleton.names = b->names;
    rig.render_mesh.vertex_count = BAR_VERTICES;
    rig.render_mesh.positions = b->positions;
    rig.render_mesh.triangle_count = BAR_TRIANGLES;
    rig.render_mesh.indices = b->indices;
    rig.weights.offsets = b->offsets;
    rig.weights.joints = b->joints;
    rig.weights.weights = b->weights;
    out->name = "bar";
    out->source = "hand-built bar";
    out->rig = rig;
}

/* The elbow bent by 90 degrees about +z with rigid weights: (x, y, z) -> (-y, x, z) for x > 0. */
static void bar_bent(const bar* b, float* posed)
{
    for (uint32_t v = 0; v < BAR_VERTICES; ++v) {
        const float* p = b->positions + 3 * v;
        float* q = posed + 3 * v;
        q[0] = p[0] > 0.0f ? -p[1] : p[0];
        q[1] = p[0] > 0.0f ? p[0] : p[1];
        q[2] = p[2];
    }
}

/* Worked by hand: the band between x = -A and A is the box [-A, A] x [-1, 1]^2 (8A) less the
 * cones of its two end squares from the centre (4A/3 each): 16A/3. Bent, the cross-section
 * (-A,-1), (1,A), (-1,A), (-A,1) has signed area 2A, so the closed box holds 4A; the end
 * squares only rotated about the centre, so the band holds 4A - 8A/3 = 4A/3: a quarter. */
static void test_bar_band_keeps_a_quarter(void** state)
{
    (void)state;
    bar b;
    sample_character character;
    bar_character(&b, &character);
    sample_topology topology;
    assert_int_equal(sample_topology_build(b.positions, BAR_VERTICES, b.indices, BAR_TRIANGLES,
                                           &topology), SINEW_OK);
    assert_true(topology.closed);
    assert_true(fabs(sample_enclosed_volume(&topology, b.positions) - 32.0) < 1e-9);
    const double centre[3] = { 0.0, 0.0, 0.0 };
    uint32_t* region = NULL;
    assert_int_equal(sample_local_select(&topology, b.positions, centre, 1.5, &region), 8);
    float posed[3 * BAR_VERTICES];
    bar_bent(&b, posed);
    const double rest = sample_local_volume(&topology, b.positions, region, 8, centre);
    const double bent = sample_local_volume(&topology, posed, region, 8, centre);
    assert_true(fabs(rest - 16.0 * BAR_A / 3.0) < 1e-6);
    assert_true(fabs(bent - 4.0 * BAR_A / 3.0) < 1e-6);
    free(region);
    sample_topology_free(&topology);
}

/* The radius decides the region: corners of the inner rings lie sqrt(A^2 + 2) from the centre,
 * those of the end rings sqrt(18); a triangle counts only with all three corners inside. Over
 * the whole closed mesh the cone volume is the enclosed volume, wherever the centre is. */
static void test_selection_radius(void** state)
{
    (void)state;
    bar b;
    sample_character character;
    bar_character(&b, &character);
    sample_topology topology;
    assert_int_equal(sample_topology_build(b.positions, BAR_VERTICES, b.indices, BAR_TRIANGLES,
                                           &topology), SINEW_OK);
    const double centre[3] = { 0.0, 0.0, 0.0 };
    const double inner = sqrt(BAR_A * BAR_A + 2.0), outer = sqrt(18.0);
    assert_int_equal(sample_local_select(&topology, b.positions, centre, 0.0, NULL), 0);
    assert_int_equal(sample_local_select(&topology, b.positions, centre, inner - 1e-3, NULL), 0);
    assert_int_equal(sample_local_select(&topology, b.positions, centre, inner + 1e-3, NULL), 8);
    assert_int_equal(sample_local_select(&topology, b.positions, centre, outer - 1e-3, NULL), 8);
    assert_int_equal(sample_local_select(&topology, b.positions, centre, outer + 1e-3, NULL),
                     BAR_TRIANGLES);
    uint32_t* none = (uint32_t*)&topology;   /* must be reset to NULL */
    assert_int_equal(sample_local_select(&topology, b.positions, centre, 1.0, &none), 0);
    assert_null(none);
    assert_true(sample_local_volume(&topology, b.positions, NULL, 0, centre) == 0.0);

    uint32_t* all = NULL;
    assert_int_equal(sample_local_select(&topology, b.positions, centre, 5.0, &all), BAR_TRIANGLES);
    float posed[3 * BAR_VERTICES];
    bar_bent(&b, posed);
    const double elsewhere[3] = { 2.0, -7.0, 0.5 };
    assert_true(fabs(sample_local_volume(&topology, posed, all, BAR_TRIANGLES, elsewhere) -
                     sample_enclosed_volume(&topology, posed)) < 1e-5);
    all[0] = BAR_TRIANGLES;   /* out of range */
    assert_true(isnan(sample_local_volume(&topology, posed, all, 1, centre)));
    free(all);
    sample_topology_free(&topology);
}

static sample_quality_report measure(const sample_character* character, const char* backend,
                                     const char* pose, const char* joint,
                                     const sinew_param* params, uint32_t param_count)
{
    sample_quality_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.character = character;
    desc.backend = backend;
    desc.joint = joint;
    desc.params = params;
    desc.param_count = param_count;
    desc.thread_count = 1;
    assert_true(sample_pose_parse(pose, &desc.pose));
    sample_quality_report report;
    sinew_result r = sample_quality_run(&desc, &report);
    if (r != SINEW_OK) {
        fail_msg("sample_quality_run %s %s: %s", backend, pose, sinew_result_string(r));
    }
    return report;
}

/* The tool's figure is the hand-worked one: the bones of the bar lie 1 from its skin, so the
 * elbow's radius is 0.75 (Sec. 3.1, eq. (1) holds with equality) and the region reaches 1.5,
 * which takes in the eight triangles between the inner rings. */
static void test_bar_through_the_tool(void** state)
{
    (void)state;
    bar b;
    sample_character character;
    bar_character(&b, &character);
    sample_quality_report lbs = measure(&character, "lbs", "bend:90", "elbow", NULL, 0);
    assert_true(fabs(lbs.local_radius - 1.5) < 1e-9);
    assert_int_equal(lbs.local_triangles, 8);
    assert_true(fabs(lbs.local_volume_ratio - 0.25) < 1e-5);
    assert_false(lbs.tissue.present);

    /* Rest is rest, and user-given radii (a model-shaping key) move the region. */
    sample_quality_report flat = measure(&character, "lbs", "bend:0", "elbow", NULL, 0);
    assert_true(fabs(flat.local_volume_ratio - 1.0) < 1e-6);
    const sinew_param small[1] = { { "bone_radii", "shoulder:0.5,elbow:0.5" } };
    sample_tissue_params shaping;
    assert_true(sample_tissue_params_parse(small, 1, &shaping));
    sample_tissue tissue;
    assert_int_equal(sample_tissue_build(&character, &shaping, 0, NULL, &tissue), SINEW_OK);
    assert_true(fabs(tissue.joint_radius[1] - 0.5) < 1e-9);
    assert_false(tissue.has_model);
    sample_tissue_free(&tissue);
}

/* Animation poses have no joint, so no region. */
static void test_animation_has_no_region(void** state)
{
    (void)state;
    sample_character cylinder;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    assert_int_equal(sample_character_load(path, NULL, &cylinder), SINEW_OK);
    sample_quality_report anim = measure(&cylinder, "lbs", "anim:0:3", NULL, NULL, 0);
    assert_true(isnan(anim.local_volume_ratio));
    assert_int_equal(anim.local_triangles, 0);
    sample_character_free(&cylinder);
}

/* The JSON of a report, in a heap string. */
static char* report_json(const sample_character* character, const char* backend, const char* pose,
                         const sample_quality_report* report)
{
    sample_quality_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.character = character;
    desc.backend = backend;
    FILE* f = tmpfile();
    assert_non_null(f);
    sample_quality_print_json(f, &desc, pose, report);
    long size = ftell(f);
    char* text = calloc((size_t)size + 1, 1);
    assert_non_null(text);
    rewind(f);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    return text;
}

/* ps and fps simulate the tissue model, so they report its tetrahedra; lbs does not. */
static void test_tissue_fields(void** state)
{
    (void)state;
    sample_character cylinder;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    assert_int_equal(sample_character_load(path, NULL, &cylinder), SINEW_OK);
    const char* backends[] = { "lbs", "fps",
#if defined(SINEW_QUALITY_HAVE_PS)
                               "ps",
#endif
    };
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; ++i) {
        const int volumetric = strcmp(backends[i], "lbs") != 0;
        sample_quality_report report =
            measure(&cylinder, backends[i], "bend:30", "joint2", NULL, 0);
        assert_int_equal(report.tissue.present, volumetric);
        char* json = report_json(&cylinder, backends[i], "bend:30", &report);
        const char* keys[] = { "\"tissue_tets\": ", "\"tissue_inverted\": ",
                               "\"tissue_degenerate\": ", "\"tissue_poor\": " };
        for (size_t k = 0; k < 4; ++k) assert_int_equal(strstr(json, keys[k]) != NULL, volumetric);
        assert_non_null(strstr(json, "\"local_volume_ratio\": 0."));
        if (volumetric) {
            assert_true(report.tissue.tets > 0 && report.tissue.tets % 3 == 0);
            assert_true(report.tissue.inverted + report.tissue.degenerate + report.tissue.poor <=
                        report.tissue.tets);
        }
        free(json);
    }
    sample_character_free(&cylinder);
}

/* Only the model-shaping keys are read; malformed ones are refused with a line. */
static void test_shaping_params(void** state)
{
    (void)state;
    sample_tissue_params p;
    const sinew_param mixed[3] = { { "iterations", "7" }, { "decimate_above", "0" },
                                   { "simulation_vertices", "500" } };
    assert_true(sample_tissue_params_parse(mixed, 3, &p));
    assert_int_equal(p.decimate_above, 0);
    assert_int_equal(p.simulation_vertices, 500);
    assert_string_equal(p.bone_radii, "");
    assert_true(sample_tissue_params_parse(NULL, 0, &p));
    assert_int_equal(p.decimate_above, SAMPLE_TISSUE_DECIMATE_ABOVE);
    assert_int_equal(p.simulation_vertices, SAMPLE_TISSUE_SIMULATION_VERTICES);
    const sinew_param bad[][1] = { { { "decimate_above", "-1" } },
                                   { { "simulation_vertices", "3" } },
                                   { { "simulation_vertices", "4.5" } },
                                   { { "bone_radii", "" } } };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        if (sample_tissue_params_parse(bad[i], 1, &p)) fail_msg("accepted %s=%s", bad[i][0].key,
                                                                 bad[i][0].value);
    }
    assert_true(sample_backend_is_volumetric("fps-cuda"));
    assert_false(sample_backend_is_volumetric("dqs"));
    assert_false(sample_backend_is_volumetric(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bar_band_keeps_a_quarter),
        cmocka_unit_test(test_selection_radius),
        cmocka_unit_test(test_bar_through_the_tool),
        cmocka_unit_test(test_animation_has_no_region),
        cmocka_unit_test(test_tissue_fields),
        cmocka_unit_test(test_shaping_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
