/* Local volume change per vertex and its colour map (sample_vertex_volume.h), on the
 * procedural arm: the rest pose changes nothing (every vertex gets the neutral colour), an
 * lbs bend squashes the inside of the elbow and leaves the far ends alone, and the colour map
 * is neutral at 1, blue and red at the ends of its range. SPDX-License-Identifier: MIT */
#include "test_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sample_character.h"
#include "sample_metrics.h"
#include "sample_vertex_volume.h"

typedef struct fixture {
    sample_character arm;
    sample_topology topology;
    sample_vertex_volume volume;
    uint32_t vertices;
    float* ratios;
} fixture;

static int setup(void** state)
{
    fixture* f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(sample_character_make_arm(24, 16, &f->arm), SINEW_OK);
    const sinew_rig_desc* rig = &f->arm.rig;
    f->vertices = rig->render_mesh.vertex_count;
    assert_int_equal(sample_topology_build(rig->render_mesh.positions, f->vertices,
                                           rig->render_mesh.indices,
                                           rig->render_mesh.triangle_count, &f->topology),
                     SINEW_OK);
    assert_int_equal(sample_vertex_volume_build(&f->topology, rig->render_mesh.positions,
                                                &rig->skeleton, rig->weights.offsets,
                                                rig->weights.joints, rig->weights.weights,
                                                &f->volume),
                     SINEW_OK);
    f->ratios = malloc(sizeof(float) * f->vertices);
    assert_non_null(f->ratios);
    *state = f;
    return 0;
}

static int teardown(void** state)
{
    fixture* f = *state;
    sample_vertex_volume_free(&f->volume);
    sample_topology_free(&f->topology);
    sample_character_free(&f->arm);
    free(f->ratios);
    free(f);
    return 0;
}

/* The rest mesh under the rest pose: every ratio is 1 and every colour the neutral one. */
static void test_rest_is_neutral(void** state)
{
    fixture* f = *state;
    const sinew_rig_desc* rig = &f->arm.rig;
    uint32_t defined = sample_vertex_volume_ratios(&f->volume, rig->render_mesh.positions,
                                                   rig->skeleton.bind_matrices, f->ratios);
    print_message("%u of %u vertices have a ratio\n", defined, f->vertices);
    /* The caps' centres and rims see the bone's end almost in their plane: a few have none. */
    assert_true(defined > f->vertices * 9 / 10);
    for (uint32_t v = 0; v < f->vertices; v++) {
        float rgb[3];
        sample_volume_color(f->ratios[v], 2.0f, rgb);
        if (!isnan(f->ratios[v])) assert_true(fabsf(f->ratios[v] - 1.0f) < 1e-5f);
        for (int k = 0; k < 3; k++) assert_true(fabsf(rgb[k] - SAMPLE_VOLUME_NEUTRAL[k]) < 1e-4f);
    }
}

/* The elbow bent 90 degrees with lbs: the inside of the bend (towards +y, where the forearm
 * swings) loses volume, the far ends of the arm move rigidly. */
static void test_lbs_bend(void** state)
{
    fixture* f = *state;
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_world* world = sinew_test_world(&log, 1);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, &f->arm.rig, &rig), SINEW_OK);
    sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
    sd.rig = rig;
    sd.backend = "lbs";
    sinew_skin skin;
    assert_int_equal(sinew_world_add_skin(world, &sd, &skin), SINEW_OK);
    const uint32_t joints = f->arm.rig.skeleton.joint_count;
    float* model = malloc(sizeof(float) * 16 * joints);
    float* posed = malloc(sizeof(float) * 3 * f->vertices);
    assert_non_null(model);
    assert_non_null(posed);
    int32_t elbow = sample_find_joint(&f->arm, "elbow");
    assert_int_equal(sample_bend_twist_pose(&f->arm, (uint32_t)elbow, 90.0f, 0.0f, model),
                     SINEW_OK);
    sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
    pose.joint_count = joints;
    pose.matrices = model;
    assert_int_equal(sinew_skin_set_pose(world, skin, &pose), SINEW_OK);
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    sinew_output_desc out = SINEW_OUTPUT_DESC_INIT;
    out.vertex_capacity = f->vertices;
    out.positions = posed;
    assert_int_equal(sinew_skin_read_output(world, skin, &out), SINEW_OK);
    sample_vertex_volume_ratios(&f->volume, posed, model, f->ratios);

    const float* rest = f->arm.rig.render_mesh.positions;
    float inside = INFINITY, far_off = 0.0f;
    for (uint32_t v = 0; v < f->vertices; v++) {
        const float x = rest[3 * v], y = rest[3 * v + 1], r = f->ratios[v];
        if (isnan(r)) continue;
        if (fabsf(x) < 1.0f && y > 0.7f) inside = fminf(inside, r);
        if (fabsf(x) > 3.5f && fabsf(x) < 5.5f) far_off = fmaxf(far_off, fabsf(r - 1.0f));
    }
    print_message("inside of the bend: smallest ratio %.3f; far ends: largest |ratio - 1| %.2e\n",
                  inside, far_off);
    assert_true(inside < 0.8f);
    assert_true(far_off < 1e-4f);
    free(model);
    free(posed);
    sinew_world_destroy(world);
}

/* The map: 1 and NaN neutral, 1 / range and below blue, range and above red, symmetric in
 * log(ratio). */
static void test_color_map(void** state)
{
    (void)state;
    float rgb[3], lo[3], hi[3], half_lo[3], half_hi[3];
    sample_volume_color(1.0f, 1.5f, rgb);
    assert_memory_equal(rgb, SAMPLE_VOLUME_NEUTRAL, sizeof rgb);
    sample_volume_color(NAN, 1.5f, rgb);
    assert_memory_equal(rgb, SAMPLE_VOLUME_NEUTRAL, sizeof rgb);
    sample_volume_color(0.5f, 2.0f, lo);
    sample_volume_color(0.1f, 2.0f, rgb);      /* clamped */
    assert_memory_equal(rgb, lo, sizeof rgb);
    assert_true(lo[2] > lo[0] + 0.5f && lo[2] > lo[1] + 0.5f);
    sample_volume_color(2.0f, 2.0f, hi);
    assert_true(hi[0] > hi[1] + 0.5f && hi[0] > hi[2] + 0.5f);
    sample_volume_color(sqrtf(0.5f), 2.0f, half_lo);
    sample_volume_color(sqrtf(2.0f), 2.0f, half_hi);
    for (int k = 0; k < 3; k++) {
        assert_true(fabsf(half_lo[k] - 0.5f * (lo[k] + SAMPLE_VOLUME_NEUTRAL[k])) < 1e-5f);
        assert_true(fabsf(half_hi[k] - 0.5f * (hi[k] + SAMPLE_VOLUME_NEUTRAL[k])) < 1e-5f);
    }
    uint8_t srgb[3];
    sample_volume_color_srgb(1.0f, 2.0f, srgb);
    assert_int_equal(srgb[0], srgb[2]);   /* neutral grey */
    assert_true(srgb[0] > 200);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rest_is_neutral, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lbs_bend, setup, teardown),
        cmocka_unit_test(test_color_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
