/* The acceptance test for fps's global collisions (Sec. 6): the male's left arm rotated
 * at l_shoulder by 40 degrees about the model-space direction (-0.5, 1, -0.3) (Z up, the
 * character faces -Y; sinew-quality --pose axis:-0.5:1:-0.3:40 --joint l_shoulder). The
 * rotation swings the arm inward (about Y) and forward (about -X, -Z), so the forearm and the
 * hand enter the belly and the left hip from the front (wrist at 1.72, -1.09, 11.21). A pure
 * shoulder rotation that brings the hand into the torso always also folds the skin at the
 * shoulder (the armpit and the upper arm against the chest; lbs already shows 35 pairs there at
 * 20 degrees about Y before the hand touches anything); among the candidates measured this is
 * the one the global collisions can act on: the hand and forearm come in from the front, not
 * through the side of the hip, where the hand's bones pass through the hip's surface and no
 * projection of the surfaces resolves it (backends/fps/README.md, the acceptance test).
 *
 * Counted like sinew-quality (the same ramp, settling test and metric on the render mesh) and
 * split by region: pairs with both triangles within SHOULDER_RADIUS of the shoulder joint at
 * rest (the fold at the joint, which Sec. 6's collisions between body parts do not handle and
 * which ps's local collisions do not remove either) and all other pairs. The bound (fps
 * with collisions at most a tenth of ps) holds for the pairs away from the shoulder but NOT for
 * the total: the shoulder's fold stays (measured: lbs 383 pairs / 149 at the shoulder, ps 386 /
 * 161, fps without collisions 391 / 165, fps with collisions 207 / 207). Asserted: lbs has at least
 * 50 pairs and most of them away from the shoulder; the totals of fps with collisions are below
 * fps without and ps; the pairs away from the shoulder of fps with collisions are at most a
 * tenth of ps's. Also: the parameters collisions and collision_weight refuse bad values with one
 * log line, and the pose form parses. With the limb capsules (capsules=1, backends/fps/README.md)
 * the total is asserted too: at most a tenth of ps's (measured: 0 against 386).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample_character.h"
#include "sample_metrics.h"
#include "sample_quality.h"
#include "test_support.h"

#define ARM_POSE "axis:-0.5:1:-0.3:40"
#define ARM_JOINT "l_shoulder"
/* A little less than the upper arm (2.78 from l_shoulder to l_elbow): the armpit, the
 * shoulder's cap and the chest beside it, but no forearm, hand, belly or hip. */
#define SHOULDER_RADIUS 2.5

/* Settling budget after the 30-step ramp (the tool's default is 600; 90 keeps the test short:
 * lbs, ps and fps without collisions settle within it, fps with collisions is counted after
 * the budget, its contacts still moving by more than the tool's tolerance). */
enum { SETTLE = 90 };

typedef struct arm_count {
    uint32_t total;     /* every intersecting pair (sinew-quality's figure) */
    uint32_t shoulder;  /* both triangles within SHOULDER_RADIUS of the shoulder at rest */
    uint32_t steps;
} arm_count;

static void pose_at(const sample_character* ch, uint32_t joint, const sample_pose_spec* spec,
                    float fraction, float* model)
{
    assert_int_equal(sample_bend_twist_pose(ch, joint, 0.0f, 0.0f, model), SINEW_OK);
    sample_rotate_subtree(ch, joint, spec->axis,
                          spec->degrees * fraction * (float)(3.14159265358979323846 / 180.0), model);
}

/* The topology of the triangles near the shoulder at rest (the same welding as the full one). */
static void shoulder_topology(const sample_character* ch, uint32_t joint, sample_topology* out)
{
    const sinew_mesh_desc* mesh = &ch->rig.render_mesh;
    const float* c = ch->rig.skeleton.bind_matrices + 16u * joint + 12u;
    uint32_t* picked = malloc(sizeof(uint32_t) * 3u * mesh->triangle_count);
    assert_non_null(picked);
    uint32_t count = 0;
    for (uint32_t t = 0; t < mesh->triangle_count; ++t) {
        double centroid[3] = {0.0, 0.0, 0.0};
        for (int k = 0; k < 3; ++k)
            for (int a = 0; a < 3; ++a)
                centroid[a] += mesh->positions[3u * mesh->indices[3u * t + (uint32_t)k] + (uint32_t)a] / 3.0;
        double d2 = 0.0;
        for (int a = 0; a < 3; ++a) d2 += (centroid[a] - c[a]) * (centroid[a] - c[a]);
        if (d2 < SHOULDER_RADIUS * SHOULDER_RADIUS) {
            memcpy(picked + 3u * count, mesh->indices + 3u * t, 3u * sizeof(uint32_t));
            ++count;
        }
    }
    assert_true(count > 0);
    assert_int_equal(sample_topology_build(mesh->positions, mesh->vertex_count, picked, count, out),
                     SINEW_OK);
    free(picked);
}

/* sample_quality_run's schedule (ramp over SAMPLE_RAMP_STEPS, then steps until no vertex moves
 * by SAMPLE_SETTLE_TOLERANCE of the diagonal, at most SETTLE), keeping the final positions. */
static arm_count measure(const sample_character* ch, const char* backend,
                         const sinew_param* params, uint32_t count)
{
    sample_pose_spec spec;
    assert_true(sample_pose_parse(ARM_POSE, &spec));
    const int32_t joint = sample_find_joint(ch, ARM_JOINT);
    assert_true(joint >= 0);
    const sinew_mesh_desc* mesh = &ch->rig.render_mesh;
    const uint32_t joints = ch->rig.skeleton.joint_count, n = mesh->vertex_count;
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_world* world = sinew_test_world(&log, 2);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, &ch->rig, &rig), SINEW_OK);
    sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
    sd.rig = rig;
    sd.backend = backend;
    sd.params = params;
    sd.param_count = count;
    sinew_skin skin;
    assert_int_equal(sinew_world_add_skin(world, &sd, &skin), SINEW_OK);
    float* model = malloc(sizeof(float) * 16u * joints);
    float* now = malloc(sizeof(float) * 3u * n);
    float* before = malloc(sizeof(float) * 3u * n);
    assert_true(model && now && before);
    const double tolerance = SAMPLE_SETTLE_TOLERANCE * sample_bounding_diagonal(mesh->positions, n);
    sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
    pose.joint_count = joints;
    pose.matrices = model;
    arm_count out = {0, 0, 0};
    for (uint32_t s = 1; s <= SAMPLE_RAMP_STEPS + SETTLE; ++s) {
        float* swap = before;
        before = now;
        now = swap;
        sinew_output_desc output = SINEW_OUTPUT_DESC_INIT;
        output.vertex_capacity = n;
        output.positions = now;
        pose_at(ch, (uint32_t)joint, &spec, s < SAMPLE_RAMP_STEPS ? (float)s / SAMPLE_RAMP_STEPS : 1.0f,
                model);
        assert_int_equal(sinew_skin_set_pose(world, skin, &pose), SINEW_OK);
        assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
        assert_int_equal(sinew_skin_read_output(world, skin, &output), SINEW_OK);
        out.steps = s;
        if (s > SAMPLE_RAMP_STEPS) {
            double move = 0.0;
            for (uint32_t i = 0; i < 3u * n; ++i) move = fmax(move, fabs((double)now[i] - before[i]));
            if (move < tolerance) break;
        }
    }
    assert_int_equal(sample_count_nonfinite(now, n), 0);
    sample_topology all, near;
    assert_int_equal(sample_topology_build(mesh->positions, n, mesh->indices, mesh->triangle_count, &all),
                     SINEW_OK);
    shoulder_topology(ch, (uint32_t)joint, &near);
    out.total = sample_count_self_intersections(&all, now);
    out.shoulder = sample_count_self_intersections(&near, now);
    assert_true(out.total != UINT32_MAX && out.shoulder <= out.total);
    char named[128] = "";
    for (uint32_t i = 0; i < count; ++i) {
        size_t used = strlen(named);
        snprintf(named + used, sizeof named - used, " %s=%s", params[i].key, params[i].value);
    }
    print_message("%s%s, male %s at %s: %u intersecting pairs, %u at the shoulder, "
                  "%u elsewhere (%u steps)\n", backend, named, ARM_POSE, ARM_JOINT, out.total,
                  out.shoulder, out.total - out.shoulder, out.steps);
    sample_topology_free(&all);
    sample_topology_free(&near);
    free(model);
    free(now);
    free(before);
    sinew_world_destroy(world);
    return out;
}

static int backend_available(const char* name)
{
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_world* world = sinew_test_world(&log, 1);
    int found = 0;
    for (uint32_t i = 0; i < sinew_world_backend_count(world); ++i)
        found |= strcmp(sinew_world_backend_name(world, i), name) == 0;
    sinew_world_destroy(world);
    return found;
}

static void test_arm_into_torso(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/male/male.ini");
    if (!backend_available("ps")) skip(); /* ps needs CHOLMOD */
    sample_character male;
    assert_int_equal(sample_character_load(path, NULL, &male), SINEW_OK);
    const arm_count lbs = measure(&male, "lbs", NULL, 0);
    /* the condition on the pose, and most of lbs's pairs are the hand and forearm in
     * the torso, not the shoulder */
    assert_true(lbs.total >= 50);
    assert_true(lbs.total - lbs.shoulder > lbs.total / 2);
    const arm_count ps = measure(&male, "ps", NULL, 0);
    const sinew_param on[] = {{"collisions", "1"}};
    const arm_count fps = measure(&male, "fps", on, 1);
    const sinew_param off[] = {{"collisions", "0"}};
    const arm_count plain = measure(&male, "fps", off, 1);
    /* without global collisions the body parts do intersect, so the comparison is not vacuous */
    assert_true(ps.total - ps.shoulder >= 50);
    assert_true(plain.total - plain.shoulder >= 50);
    print_message("fps collisions=1 / ps: %.2f in all (the issue asks for 0.1 or less; the "
                  "shoulder's fold stays), %.2f away from the shoulder\n",
                  (double)fps.total / (double)ps.total,
                  (double)(fps.total - fps.shoulder) / (double)(ps.total - ps.shoulder));
    assert_true(fps.total < plain.total);
    assert_true(fps.total < ps.total);
    /* the bound where Sec. 6 acts: between body parts, away from the shoulder's fold */
    assert_true(10u * (fps.total - fps.shoulder) <= ps.total - ps.shoulder);
    /* with the limb capsules (capsules=1, fps_collide.c) the shoulder's crease goes too: the
     * issue's bound on the total (measured: 0 pairs) */
    const sinew_param capsules[] = {{"collisions", "1"}, {"capsules", "1"}};
    const arm_count held = measure(&male, "fps", capsules, 2);
    print_message("fps collisions=1 capsules=1 / ps: %.2f in all\n",
                  (double)held.total / (double)ps.total);
    assert_true(10u * held.total <= ps.total);
    sample_character_free(&male);
}

static void test_parameters(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    sample_character ch;
    assert_int_equal(sample_character_load(path, NULL, &ch), SINEW_OK);
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_world* world = sinew_test_world(&log, 1);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, &ch.rig, &rig), SINEW_OK);
    const sinew_param bad[][1] = {{{"collisions", "2"}}, {{"collisions", ""}},
                                  {{"collision_weight", "0"}}, {{"collision_weight", "nan"}},
                                  {{"collision_weight", "1e9"}}, {{"capsules", "2"}},
                                  {{"capsules", "1"}} /* without collisions=1 */};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
        sd.rig = rig;
        sd.backend = "fps";
        sd.params = bad[i];
        sd.param_count = 1;
        sinew_skin skin;
        sinew_test_log_reset(&log);
        assert_int_equal(sinew_world_add_skin(world, &sd, &skin), SINEW_ERROR_PARAMETER);
        if (log.count[SINEW_LOG_ERROR] < 1 || !strstr(log.last, bad[i][0].key))
            fail_msg("%s=%s: %d error lines, last \"%s\"", bad[i][0].key, bad[i][0].value,
                     log.count[SINEW_LOG_ERROR], log.last);
    }
    /* good values prepare and step */
    const sinew_param good[] = {{"collisions", "1"}, {"collision_weight", "2.5"}, {"capsules", "1"}};
    sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
    sd.rig = rig;
    sd.backend = "fps";
    sd.params = good;
    sd.param_count = 3;
    sinew_skin skin;
    assert_int_equal(sinew_world_add_skin(world, &sd, &skin), SINEW_OK);
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    sinew_world_destroy(world);
    sample_character_free(&ch);

    /* the pose form */
    sample_pose_spec pose;
    assert_true(sample_pose_parse("axis:0:2:0:25", &pose));
    assert_int_equal(pose.kind, SAMPLE_POSE_AXIS);
    assert_true(pose.axis[0] == 0.0f && pose.axis[1] == 1.0f && pose.axis[2] == 0.0f);
    assert_true(pose.degrees == 25.0f);
    const char* wrong[] = {"axis:0:0:0:10", "axis:1:0:10", "axis:1:0:0:", "axis:1:0:0:x",
                           "axis:1:0:0:10:5", "axis:nan:0:0:10", "axis::0:0:10"};
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; ++i)
        if (sample_pose_parse(wrong[i], &pose)) fail_msg("accepted \"%s\"", wrong[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parameters),
        cmocka_unit_test(test_arm_into_torso),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
