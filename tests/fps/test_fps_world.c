/* The fps backend through the runtime: its converged shape at a static pose against ps's
 * (hard against soft anchors, Sec. 4.3), the cylinder's volume measured by the very call
 * sinew-quality makes, and every test character played with both solvers without a
 * non-finite vertex. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* opendir */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample_character.h"
#include "sample_quality.h"
#include "test_support.h"

static int finite_all(const float* v, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        if (!isfinite(v[i])) return 0;
    return 1;
}

#if defined(FPS_TEST_CHOLMOD)
static double bbox_diagonal(const float* p, uint32_t n)
{
    float lo[3] = {p[0], p[1], p[2]}, hi[3] = {p[0], p[1], p[2]};
    for (uint32_t v = 0; v < n; ++v)
        for (int k = 0; k < 3; ++k) {
            lo[k] = fminf(lo[k], p[3u * v + k]);
            hi[k] = fmaxf(hi[k], p[3u * v + k]);
        }
    double d2 = 0.0;
    for (int k = 0; k < 3; ++k) d2 += (double)(hi[k] - lo[k]) * (hi[k] - lo[k]);
    return sqrt(d2);
}

/* ps and fps (both quasi-static: damping 0) hold a bent pose; after `steps` steps the render
 * meshes agree within 1 % of the bounding-box diagonal. */
static void compare_with_ps(const char* relative, float bend, float twist, uint32_t steps,
                            const char* solver, const char* volume_weight)
{
    const char* path = sinew_test_data_path(relative);
    sample_character ch;
    assert_int_equal(sample_character_load(path, NULL, &ch), SINEW_OK);
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_world* world = sinew_test_world(&log, 2);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, &ch.rig, &rig), SINEW_OK);
    /* the solvers alone: neither side's collisions */
    sinew_param ps_params[] = {{"damping", "0"}, {"volume_weight", volume_weight},
                               {"collisions", "0"}, {"global_collisions", "0"}};
    sinew_param fps_params[] = {{"damping", "0"}, {"volume_weight", volume_weight},
                                {"solver", solver}, {"collisions", "0"},
                                {"joint_collisions", "0"}};
    const char* names[2] = {"ps", "fps"};
    sinew_skin skins[2];
    for (int k = 0; k < 2; ++k) {
        sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
        sd.rig = rig;
        sd.backend = names[k];
        sd.params = k ? fps_params : ps_params;
        sd.param_count = k ? 5u : 4u;
        sinew_result r = sinew_world_add_skin(world, &sd, &skins[k]);
        if (r != SINEW_OK) fail_msg("%s: adding a %s skin: %s (%s)", path, names[k],
                                    sinew_result_string(r), log.last);
    }
    uint32_t jn = ch.rig.skeleton.joint_count, n = ch.rig.render_mesh.vertex_count;
    double diagonal = bbox_diagonal(ch.rig.render_mesh.positions, n);
    float* pose = malloc(sizeof(float) * 16u * jn);
    int32_t joint = sample_default_joint(&ch);
    assert_int_equal(sample_bend_twist_pose(&ch, (uint32_t)joint, bend, twist, pose), SINEW_OK);
    sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
    pd.joint_count = jn;
    pd.matrices = pose;
    float* out[2] = {malloc(sizeof(float) * 3u * n), malloc(sizeof(float) * 3u * n)};
    float* before = malloc(sizeof(float) * 3u * n);
    for (int k = 0; k < 2; ++k) assert_int_equal(sinew_skin_set_pose(world, skins[k], &pd), SINEW_OK);
    for (uint32_t s = 0; s < steps; ++s) {
        if (s + 1u == steps) {
            sinew_output_desc od = SINEW_OUTPUT_DESC_INIT;
            od.vertex_capacity = n;
            od.positions = before;
            assert_int_equal(sinew_skin_read_output(world, skins[1], &od), SINEW_OK);
        }
        sinew_result r = sinew_world_update(world, 1.0f / 60.0f);
        if (r != SINEW_OK) fail_msg("%s step %u: %s (%s)", path, s, sinew_result_string(r), log.last);
    }
    for (int k = 0; k < 2; ++k) {
        sinew_output_desc od = SINEW_OUTPUT_DESC_INIT;
        od.vertex_capacity = n;
        od.positions = out[k];
        assert_int_equal(sinew_skin_read_output(world, skins[k], &od), SINEW_OK);
        assert_true(finite_all(out[k], 3u * n));
    }
    double worst = 0.0, mean = 0.0, last = 0.0;
    for (uint32_t v = 0; v < n; ++v) {
        double d2 = 0.0, m2 = 0.0;
        for (int c = 0; c < 3; ++c) {
            double d = (double)out[0][3u * v + c] - out[1][3u * v + c];
            double m = (double)out[1][3u * v + c] - before[3u * v + c];
            d2 += d * d;
            m2 += m * m;
        }
        worst = fmax(worst, sqrt(d2));
        mean += sqrt(d2) / n;
        last = fmax(last, sqrt(m2));
    }
    print_message("%s bend %.0f twist %.0f at joint %d, fps solver=%s, volume_weight=%s, %u "
                  "quasi-static steps: fps against ps max %.3e, mean %.3e of the diagonal; last "
                  "step moved fps by %.1e\n", relative, (double)bend, (double)twist, joint, solver,
                  volume_weight, steps, worst / diagonal, mean / diagonal, last / diagonal);
    assert_true(last / diagonal < 1e-3); /* settled */
    assert_true(worst / diagonal <= 0.01);
    free(pose);
    free(out[0]);
    free(out[1]);
    free(before);
    sinew_world_destroy(world);
    sample_character_free(&ch);
}
#endif

static void test_against_ps_cylinder(void** state)
{
    (void)state;
#if defined(FPS_TEST_CHOLMOD)
    compare_with_ps("characters/cylinder/cylinder.ini", 90.0f, 45.0f, 120u, "pcg", "0");
    compare_with_ps("characters/cylinder/cylinder.ini", 90.0f, 45.0f, 120u, "cholmod", "0");
    /* with the volume term (volume3.h), the same blend in both */
    compare_with_ps("characters/cylinder/cylinder.ini", 90.0f, 45.0f, 120u, "cholmod", "1");
#else
    skip(); /* no ps without CHOLMOD */
#endif
}

static void test_against_ps_male(void** state)
{
    (void)state;
#if defined(FPS_TEST_CHOLMOD)
    compare_with_ps("characters/male/male.ini", 60.0f, 30.0f, 60u, "cholmod", "0");
#else
    skip(); /* no ps without CHOLMOD */
#endif
}

/* As for ps (tests/ps/test_ps_world.c): the cylinder keeps its volume under fps too. */
static void test_cylinder_volume(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    sample_character cylinder;
    assert_int_equal(sample_character_load(path, NULL, &cylinder), SINEW_OK);
    const char* poses[] = {"bend:120", "twist:180"};
    const char* solvers[] = {"pcg", "cholmod"};
#if defined(FPS_TEST_CHOLMOD)
    int solver_count = 2;
#else
    int solver_count = 1;
#endif
    for (int s = 0; s < solver_count; ++s)
        for (int i = 0; i < 2; ++i) {
            sinew_param params[] = {{"solver", solvers[s]}};
            sample_quality_desc desc;
            memset(&desc, 0, sizeof desc);
            desc.character = &cylinder;
            desc.backend = "fps";
            desc.params = params;
            desc.param_count = 1;
            assert_true(sample_pose_parse(poses[i], &desc.pose));
            desc.joint = "joint2";
            desc.thread_count = 2;
            sample_quality_report r;
            sinew_result res = sample_quality_run(&desc, &r);
            if (res != SINEW_OK)
                fail_msg("sample_quality_run fps %s: %s", poses[i], sinew_result_string(res));
            print_message("fps solver=%s %s at joint2: volume ratio %.4f, %u intersections, "
                          "stretch %.3f..%.3f, %u steps%s\n", solvers[s], poses[i],
                          r.volume_ratio, r.self_intersections, r.min_edge_stretch,
                          r.max_edge_stretch, r.steps, r.settled ? "" : " (not settled)");
            assert_true(r.closed);
            assert_true(r.settled);
            assert_int_equal(r.nonfinite_vertices, 0);
            assert_true(r.volume_ratio >= 0.95 && r.volume_ratio <= 1.05);
        }
    sample_character_free(&cylinder);
}

/* The volume term keeps more of a twisted joint's volume (cylinder twist:180 at joint2; the
 * twisted tissue's prisms shrink); the joints' volume, which gives it all back, is off. */
static void test_volume_term_twist(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    sample_character cylinder;
    assert_int_equal(sample_character_load(path, NULL, &cylinder), SINEW_OK);
    double ratio[2];
    const char* weights[2] = {"0", "3"};
    for (int k = 0; k < 2; ++k) {
        sinew_param params[] = {{"solver", "pcg"}, {"volume_weight", weights[k]},
                                {"joint_volume", "0"}};
        sample_quality_desc desc;
        memset(&desc, 0, sizeof desc);
        desc.character = &cylinder;
        desc.backend = "fps";
        desc.params = params;
        desc.param_count = 3;
        assert_true(sample_pose_parse("twist:180", &desc.pose));
        desc.joint = "joint2";
        desc.thread_count = 2;
        sample_quality_report r;
        assert_int_equal(sample_quality_run(&desc, &r), SINEW_OK);
        ratio[k] = r.volume_ratio;
        print_message("fps volume_weight=%s twist:180 at joint2: volume ratio %.4f, local %.4f\n",
                      weights[k], r.volume_ratio, r.local_volume_ratio);
    }
    assert_true(ratio[1] > ratio[0] + 1e-3);
    sample_character_free(&cylinder);
}

/* Plays `frames` frames of the first animation (or the built-in motion); every frame's
 * positions and normals are finite and the normals unit length. */
static void play(const char* path, uint32_t frames, const char* solver)
{
    sample_character ch;
    assert_int_equal(sample_character_load(path, NULL, &ch), SINEW_OK);
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_world* world = sinew_test_world(&log, 2);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, &ch.rig, &rig), SINEW_OK);
    sinew_param params[] = {{"solver", solver}};
    sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
    sd.rig = rig;
    sd.backend = "fps";
    sd.params = params;
    sd.param_count = 1;
    sinew_skin skin;
    sinew_result r = sinew_world_add_skin(world, &sd, &skin);
    if (r != SINEW_OK) fail_msg("%s: adding an fps skin: %s (%s)", path, sinew_result_string(r), log.last);
    uint32_t jn = ch.rig.skeleton.joint_count, n = ch.rig.render_mesh.vertex_count;
    float* pose = malloc(sizeof(float) * 16u * jn);
    float* pos = malloc(sizeof(float) * 3u * n);
    float* nrm = malloc(sizeof(float) * 3u * n);
    sinew_output_desc od = SINEW_OUTPUT_DESC_INIT;
    od.vertex_capacity = n;
    od.positions = pos;
    od.normals = nrm;
    int32_t joint = sample_default_joint(&ch);
    for (uint32_t f = 0; f < frames; ++f) {
        sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
        pd.joint_count = jn;
        pd.matrices = pose;
        if (ch.animation_count > 0) {
            pd.space = SINEW_POSE_LOCAL;
            assert_int_equal(sinew_animation_sample(&ch.animations[0], (float)f / 60.0f, 1, pose),
                             SINEW_OK);
        } else {
            assert_int_equal(sample_motion_pose(&ch, (uint32_t)joint, f / 60.0, pose), SINEW_OK);
        }
        assert_int_equal(sinew_skin_set_pose(world, skin, &pd), SINEW_OK);
        r = sinew_world_update(world, 1.0f / 60.0f);
        if (r != SINEW_OK) fail_msg("%s frame %u: %s (%s)", path, f, sinew_result_string(r), log.last);
        assert_int_equal(sinew_skin_read_output(world, skin, &od), SINEW_OK);
        if (!finite_all(pos, 3u * n) || !finite_all(nrm, 3u * n))
            fail_msg("%s frame %u: a non-finite vertex", path, f);
        for (uint32_t v = 0; v < n; ++v) {
            const float* q = nrm + 3u * v;
            float l = sqrtf(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
            if (fabsf(l - 1.0f) > 1e-3f) fail_msg("%s frame %u: normal %u has length %g", path, f, v, l);
        }
    }
    print_message("%s: %u frames with solver=%s, %u render vertices, finite\n", path, frames,
                  solver, n);
    free(pose);
    free(pos);
    free(nrm);
    sinew_world_destroy(world);
    sample_character_free(&ch);
}

/* Every character folder of the test data, found by listing it (so a new one is covered). */
static void test_every_data_character(void** state)
{
    (void)state;
    const char* dir_path = sinew_test_data_path("characters");
    char base[4096];
    snprintf(base, sizeof base, "%s", dir_path);
    DIR* dir = opendir(base);
    assert_non_null(dir);
    char names[64][256];
    int count = 0;
    struct dirent* e;
    while ((e = readdir(dir)) && count < 64) {
        if (e->d_name[0] == '.') continue;
        snprintf(names[count++], sizeof names[0], "%s", e->d_name);
    }
    closedir(dir);
    assert_true(count >= 3);
    for (int i = 0; i < count; ++i) {
        char ini[4096 + 600];
        if (snprintf(ini, sizeof ini, "%s/%s/%s.ini", base, names[i], names[i]) >= (int)sizeof ini)
            continue;
        FILE* f = fopen(ini, "r");
        if (!f) continue;
        fclose(f);
        play(ini, 24u, "pcg");
#if defined(FPS_TEST_CHOLMOD)
        play(ini, 24u, "cholmod");
#endif
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_ps_cylinder),
        cmocka_unit_test(test_against_ps_male),
        cmocka_unit_test(test_cylinder_volume),
        cmocka_unit_test(test_volume_term_twist),
        cmocka_unit_test(test_every_data_character),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
