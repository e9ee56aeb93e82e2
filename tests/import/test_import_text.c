/* The text-format characters of ../shared/data: counts, bounds, hierarchy, and posed joints
 * checked against values worked out from the files' numbers. SPDX-License-Identifier: MIT */
#define _XOPEN_SOURCE 700 /* realpath, setenv, strdup */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "import_test_util.h"

static sinew_test_log g_log;

static sinew_character* load_character(const char* relative, uint32_t use_simulation_mesh)
{
    const char* path = sinew_test_data_path(relative);
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.logger = &g_log.logger;
    options.use_simulation_mesh = use_simulation_mesh;
    sinew_test_log_reset(&g_log);
    sinew_character* c = NULL;
    sinew_result r = sinew_import_character(path, &options, &c);
    if (r != SINEW_OK) fail_msg("import %s: %d (%s)", path, (int)r, g_log.last);
    assert_non_null(c);
    assert_int_equal(g_log.total, 0);
    return c;
}

static void assert_near(double actual, double expected, double tolerance, const char* what)
{
    if (!(fabs(actual - expected) <= tolerance))
        fail_msg("%s: %.7g, expected %.7g (tolerance %g)", what, actual, expected, tolerance);
}

static void assert_bounds(const sinew_mesh_desc* mesh, const float lo[3], const float hi[3])
{
    tu_bounds b = tu_bounds_of(mesh->positions, mesh->vertex_count);
    for (int a = 0; a < 3; ++a) {
        assert_near(b.min[a], lo[a], 1e-5, "bounds min");
        assert_near(b.max[a], hi[a], 1e-5, "bounds max");
    }
}

/* The common shape of every text character's rig descriptor. */
static void assert_text_rig(const sinew_character* c)
{
    const sinew_rig_desc* d = &c->rig;
    assert_int_equal(d->struct_size, sizeof(sinew_rig_desc));
    assert_null(d->next);
    assert_string_equal(d->name, c->name);
    assert_null(d->render_mesh.normals);
    assert_null(d->weights.offsets);
    assert_null(d->weights.joints);
    assert_null(d->weights.weights);
    assert_int_equal(d->max_influences, 0);
    assert_non_null(d->skeleton.parents);
    assert_non_null(d->skeleton.bind_matrices);
    assert_non_null(d->skeleton.names);
    for (uint32_t i = 0; i < 3 * d->render_mesh.triangle_count; ++i)
        assert_true(d->render_mesh.indices[i] < d->render_mesh.vertex_count);
    /* FK over the rest local transforms gives back the bind matrices. */
    uint32_t n = d->skeleton.joint_count;
    float* model = (float*)malloc((size_t)n * 16 * sizeof(float));
    assert_true(tu_forward_kinematics(d->skeleton.parents, n, c->rest_local, model));
    for (uint32_t i = 0; i < n * 16; ++i)
        assert_near(model[i], d->skeleton.bind_matrices[i], 1e-5, "FK(rest_local) vs bind");
    free(model);
}

/* Model transforms of every joint of `anim` at `time`. */
static float* posed_model(const sinew_character* c, const sinew_animation* anim, float time,
                          int loop)
{
    uint32_t n = c->rig.skeleton.joint_count;
    float* local = (float*)malloc((size_t)n * 16 * sizeof(float));
    float* model = (float*)malloc((size_t)n * 16 * sizeof(float));
    assert_int_equal(sinew_animation_sample(anim, time, loop, local), SINEW_OK);
    assert_true(tu_forward_kinematics(c->rig.skeleton.parents, n, local, model));
    free(local);
    return model;
}

static void assert_joint_at(const sinew_character* c, const float* model, const char* joint,
                            const double expected[3], double tolerance)
{
    int32_t j = tu_find_joint(c, joint);
    assert_true(j >= 0);
    for (int a = 0; a < 3; ++a) assert_near(model[j * 16 + 12 + a], expected[a], tolerance, joint);
}

/* ---------------------------------------------------------------------------------------- */

static void test_cylinder(void** state)
{
    (void)state;
    sinew_character* c = load_character("characters/cylinder/cylinder.ini", 0);
    const sinew_rig_desc* d = &c->rig;
    assert_string_equal(c->name, "cylinder");
    assert_int_equal(d->render_mesh.vertex_count, 800);
    assert_int_equal(d->render_mesh.triangle_count, 1596);
    assert_int_equal(d->simulation_mesh.vertex_count, 0);
    assert_null(d->simulation_mesh.positions);
    assert_int_equal(d->skeleton.joint_count, 4);
    /* Bounds from awk over cylinder.off. */
    const float lo[3] = { -7.178427f, -0.996708f, -0.997860f };
    const float hi[3] = { 7.178427f, 0.998528f, 0.996524f };
    assert_bounds(&d->render_mesh, lo, hi);
    assert_string_equal(tu_parent_name(c, "joint0"), "");
    assert_string_equal(tu_parent_name(c, "joint1"), "joint0");
    assert_string_equal(tu_parent_name(c, "joint3"), "joint2");
    assert_near(d->skeleton.bind_matrices[2 * 16 + 12], 1.0, 0, "bind x of joint2");
    assert_near(c->rest_local[2 * 16 + 12], 4.0, 0, "rest local x of joint2");
    assert_text_rig(c);

    assert_int_equal(c->animation_count, 1);
    const sinew_animation* a = &c->animations[0];
    assert_string_equal(a->name, "cylinder0");
    assert_int_equal(a->key_count, 2);
    assert_int_equal(a->joint_count, 4);
    assert_near(a->key_times[0], 0.0, 0, "first key");
    assert_near(a->key_times[1], 0.5, 0, "second key");
    assert_near(a->duration, 0.5, 0, "duration");

    /* Frame 1 of cylinder0.anim by hand: joint1 turns 1.60003 rad about
     * (-0.0645696, -0.0934861, 0.993525), joint2 1.88705 rad about
     * (-0.0381287, -0.0720519, -0.996672); joint0 stays. Rest positions -6, -3, 1, 6 on x. */
    const double axis1[3] = { -0.0645696, -0.0934861, 0.993525 };
    const double axis2[3] = { -0.0381287, -0.0720519, -0.996672 };
    double r1[9], r2[9], r12[9], v[3];
    tu_rodrigues(axis1, 1.60003, r1);
    tu_rodrigues(axis2, 1.88705, r2);
    tu_mat3_mul(r1, r2, r12);
    const double offset12[3] = { 4, 0, 0 }, offset23[3] = { 5, 0, 0 };
    double joint2[3], joint3[3];
    tu_mat3_apply(r1, offset12, v);
    for (int i = 0; i < 3; ++i) joint2[i] = (i == 0 ? -3.0 : 0.0) + v[i];
    tu_mat3_apply(r12, offset23, v);
    for (int i = 0; i < 3; ++i) joint3[i] = joint2[i] + v[i];
    float* model = posed_model(c, a, 0.5f, 0);
    assert_joint_at(c, model, "joint2", joint2, 1e-4);
    assert_joint_at(c, model, "joint3", joint3, 1e-4);
    const double joint1[3] = { -3, 0, 0 };
    assert_joint_at(c, model, "joint1", joint1, 1e-5);
    free(model);

    /* Half way, slerp from the identity of frame 0 is half of each angle. */
    tu_rodrigues(axis1, 0.5 * 1.60003, r1);
    tu_rodrigues(axis2, 0.5 * 1.88705, r2);
    tu_mat3_mul(r1, r2, r12);
    tu_mat3_apply(r1, offset12, v);
    for (int i = 0; i < 3; ++i) joint2[i] = (i == 0 ? -3.0 : 0.0) + v[i];
    tu_mat3_apply(r12, offset23, v);
    for (int i = 0; i < 3; ++i) joint3[i] = joint2[i] + v[i];
    model = posed_model(c, a, 0.25f, 0);
    assert_joint_at(c, model, "joint2", joint2, 1e-4);
    assert_joint_at(c, model, "joint3", joint3, 1e-4);
    free(model);

    /* Looping wraps 0.75 to 0.25; clamping holds the last key. */
    float* looped = posed_model(c, a, 0.75f, 1);
    float* direct = posed_model(c, a, 0.25f, 0);
    for (int i = 0; i < 4 * 16; ++i) assert_near(looped[i], direct[i], 1e-5, "loop");
    free(looped);
    free(direct);
    float* clamped = posed_model(c, a, 7.0f, 0);
    float* last = posed_model(c, a, 0.5f, 0);
    for (int i = 0; i < 4 * 16; ++i) assert_near(clamped[i], last[i], 0, "clamp");
    free(clamped);
    free(last);
    float* before = posed_model(c, a, -3.0f, 0);
    for (int i = 0; i < 4 * 16; ++i)
        assert_near(before[i], d->skeleton.bind_matrices[i], 1e-5, "clamp before 0");
    free(before);
    sinew_import_free(c);
}

static void test_tbone(void** state)
{
    (void)state;
    sinew_character* c = load_character("characters/tbone/tbone.ini", 0);
    const sinew_rig_desc* d = &c->rig;
    assert_int_equal(d->render_mesh.vertex_count, 2461);
    assert_int_equal(d->render_mesh.triangle_count, 4918);
    assert_int_equal(d->skeleton.joint_count, 7);
    const float lo[3] = { -1.436661f, -0.998568f, -5.066795f };
    const float hi[3] = { 1.438846f, 6.325172f, 5.067517f };
    assert_bounds(&d->render_mesh, lo, hi);
    assert_string_equal(tu_parent_name(c, "joint0"), "");
    assert_string_equal(tu_parent_name(c, "joint3"), "joint2");
    assert_string_equal(tu_parent_name(c, "joint5"), "joint2");
    assert_string_equal(tu_parent_name(c, "joint6"), "joint5");
    assert_text_rig(c);

    assert_int_equal(c->animation_count, 2);
    assert_string_equal(c->animations[0].name, "tbone0");
    assert_string_equal(c->animations[1].name, "tbone1");
    const sinew_animation* a = &c->animations[1];
    assert_int_equal(a->key_count, 3);
    assert_near(a->duration, 1.0, 0, "duration");

    /* tbone1 frame 1: joints 1, 2, 3 turn 0.872665, 0.698132, 0.872665 rad about +y.
     * joint2 sits at the origin below joint1 (on the y axis, which the turn keeps);
     * joint3 is 1.3 along z from joint2 and joint4 3.3 further: about y, (0,0,d) goes to
     * (d sin a, 0, d cos a). Frame 2 turns about -y by the same angles. */
    for (int frame = 1; frame <= 2; ++frame) {
        double sign = frame == 1 ? 1.0 : -1.0;
        double a3 = sign * (0.872665 + 0.698132), a4 = a3 + sign * 0.872665;
        double joint3[3] = { 1.3 * sin(a3), 0.0, 1.3 * cos(a3) };
        double joint4[3] = { joint3[0] + 3.3 * sin(a4), 0.0, joint3[2] + 3.3 * cos(a4) };
        double joint2[3] = { 0, 0, 0 };
        float* model = posed_model(c, a, 0.5f * (float)frame, 0);
        assert_joint_at(c, model, "joint2", joint2, 1e-5);
        assert_joint_at(c, model, "joint3", joint3, 1e-4);
        assert_joint_at(c, model, "joint4", joint4, 1e-4);
        free(model);
    }
    sinew_import_free(c);
}

static void test_male(void** state)
{
    (void)state;
    sinew_character* c = load_character("characters/male/male.ini", 0);
    const sinew_rig_desc* d = &c->rig;
    assert_int_equal(d->render_mesh.vertex_count, 23259);
    assert_int_equal(d->render_mesh.triangle_count, 46514);
    assert_int_equal(d->simulation_mesh.vertex_count, 4651);
    assert_int_equal(d->simulation_mesh.triangle_count, 9298);
    assert_non_null(d->simulation_mesh.positions);
    assert_non_null(d->simulation_mesh.indices);
    for (uint32_t i = 0; i < 3 * d->simulation_mesh.triangle_count; ++i)
        assert_true(d->simulation_mesh.indices[i] < d->simulation_mesh.vertex_count);
    assert_int_equal(d->skeleton.joint_count, 63);
    const float lo[3] = { -5.842500f, -2.332277f, -0.183590f };
    const float hi[3] = { 5.842500f, 2.026158f, 20.684097f };
    assert_bounds(&d->render_mesh, lo, hi);
    const float sim_lo[3] = { -5.838300f, -2.332277f, -0.183265f };
    const float sim_hi[3] = { 5.841100f, 2.026158f, 20.675299f };
    assert_bounds(&d->simulation_mesh, sim_lo, sim_hi);
    assert_string_equal(tu_parent_name(c, "HumanoidRoot"), "");
    assert_string_equal(tu_parent_name(c, "l_shoulder"), "l_sternoclavicular");
    assert_string_equal(tu_parent_name(c, "head"), "skullbase");
    assert_string_equal(tu_parent_name(c, "l_index1"), "l_wrist");
    assert_text_rig(c);

    const uint32_t keys[6] = { 3, 5, 3, 2, 3, 3 };
    assert_int_equal(c->animation_count, 6);
    for (uint32_t i = 0; i < 6; ++i) {
        char name[16];
        snprintf(name, sizeof name, "male%u", (unsigned)i);
        assert_string_equal(c->animations[i].name, name);
        assert_int_equal(c->animations[i].key_count, keys[i]);
        assert_int_equal(c->animations[i].joint_count, 63);
        assert_near(c->animations[i].duration, 0.5 * (keys[i] - 1), 0, "duration");
    }
    sinew_import_free(c);

    /* use_simulation_mesh: the coarse mesh alone is rendered. */
    c = load_character("characters/male/male.ini", 1);
    assert_int_equal(c->rig.render_mesh.vertex_count, 4651);
    assert_int_equal(c->rig.render_mesh.triangle_count, 9298);
    assert_int_equal(c->rig.simulation_mesh.vertex_count, 0);
    assert_null(c->rig.simulation_mesh.positions);
    assert_bounds(&c->rig.render_mesh, sim_lo, sim_hi);
    sinew_import_free(c);
}

/* ---------------------------------------------------------------------------------------- */
/* Every frame of every animation against a reference read with fscanf                      */
/* ---------------------------------------------------------------------------------------- */

#define REF_MAX_JOINTS 128

typedef struct ref_skeleton {
    int count;
    double position[REF_MAX_JOINTS][3];
    char name[REF_MAX_JOINTS][64];
    int parent[REF_MAX_JOINTS];
} ref_skeleton;

static void read_reference_skeleton(const char* path, ref_skeleton* s)
{
    FILE* f = fopen(path, "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%d", &s->count), 1);
    assert_true(s->count > 0 && s->count <= REF_MAX_JOINTS);
    char parents[REF_MAX_JOINTS][64];
    for (int j = 0; j < s->count; ++j)
        assert_int_equal(fscanf(f, "%lf %lf %lf %63s %63s", &s->position[j][0],
                                &s->position[j][1], &s->position[j][2], s->name[j], parents[j]),
                         5);
    fclose(f);
    for (int j = 0; j < s->count; ++j) {
        s->parent[j] = -1;
        for (int k = 0; k < s->count; ++k)
            if (strcmp(parents[j], s->name[k]) == 0) s->parent[j] = k;
        assert_true(s->parent[j] < j); /* the data files list parents first */
    }
}

static void check_animation_file(const sinew_character* c, const ref_skeleton* s,
                                 const char* folder, const sinew_animation* anim)
{
    char path[1200];
    snprintf(path, sizeof path, "%.1000s/%.100s.anim", folder, anim->name);
    FILE* f = fopen(path, "r");
    assert_non_null(f);
    int frames, animated;
    assert_int_equal(fscanf(f, "%d %d", &frames, &animated), 2);
    assert_int_equal(anim->key_count, (uint32_t)frames);
    assert_true(animated <= s->count);
    double axes[REF_MAX_JOINTS][3], angles[REF_MAX_JOINTS];
    double world_r[REF_MAX_JOINTS][9], world_p[REF_MAX_JOINTS][3];
    for (int frame = 0; frame < frames; ++frame) {
        int stamp;
        assert_int_equal(fscanf(f, "%d", &stamp), 1);
        for (int j = 0; j < animated; ++j)
            assert_int_equal(fscanf(f, "%lf %lf %lf", &axes[j][0], &axes[j][1], &axes[j][2]), 3);
        for (int j = 0; j < animated; ++j) assert_int_equal(fscanf(f, "%lf", &angles[j]), 1);

        float* model = posed_model(c, anim, 0.5f * (float)frame, 0);
        for (int j = 0; j < s->count; ++j) {
            double local[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
            if (j < animated) tu_rodrigues(axes[j], angles[j], local);
            int p = s->parent[j];
            if (p < 0) {
                memcpy(world_r[j], local, sizeof local);
                memcpy(world_p[j], s->position[j], sizeof world_p[j]);
            } else {
                double offset[3], v[3];
                for (int i = 0; i < 3; ++i) offset[i] = s->position[j][i] - s->position[p][i];
                tu_mat3_apply(world_r[p], offset, v);
                for (int i = 0; i < 3; ++i) world_p[j][i] = world_p[p][i] + v[i];
                tu_mat3_mul(world_r[p], local, world_r[j]);
            }
            int32_t ji = tu_find_joint(c, s->name[j]);
            assert_true(ji >= 0);
            const float* m = model + ji * 16;
            for (int i = 0; i < 3; ++i) {
                assert_near(m[12 + i], world_p[j][i], 2e-4 * (1.0 + fabs(world_p[j][i])),
                            "posed joint position");
                for (int k = 0; k < 3; ++k)
                    assert_near(m[k * 4 + i], world_r[j][i * 3 + k], 2e-4, "posed joint rotation");
            }
        }
        free(model);
    }
    fclose(f);
}

static void check_character_against_files(const char* folder_rel, const char* ini,
                                          const char* skel)
{
    char rel[256];
    snprintf(rel, sizeof rel, "%s/%s", folder_rel, ini);
    sinew_character* c = load_character(rel, 0);
    char folder[1024];
    snprintf(folder, sizeof folder, "%s", sinew_test_data_path(folder_rel));
    char skel_path[1200];
    snprintf(skel_path, sizeof skel_path, "%s/%s", folder, skel);
    ref_skeleton s;
    read_reference_skeleton(skel_path, &s);
    assert_int_equal(c->rig.skeleton.joint_count, (uint32_t)s.count);
    assert_true(c->animation_count > 0);
    for (uint32_t i = 0; i < c->animation_count; ++i)
        check_animation_file(c, &s, folder, &c->animations[i]);
    sinew_import_free(c);
}

static void test_every_frame_matches_reference(void** state)
{
    (void)state;
    check_character_against_files("characters/cylinder", "cylinder.ini", "cylinder.skel");
    check_character_against_files("characters/tbone", "tbone.ini", "tbone.skel");
    check_character_against_files("characters/male", "male.ini", "male.skel");
}

/* $SINEW_DATA_DIR wins when set; unset, the build tree's share/sinew/data beside bin/ leads
 * to the build's data folder, and with no data at all the path relative to the working
 * directory is named. */
static void test_data_dir(void** state)
{
    (void)state;
    char* saved = getenv("SINEW_DATA_DIR") ? strdup(getenv("SINEW_DATA_DIR")) : NULL;
    setenv("SINEW_DATA_DIR", "/some/data", 1);
    assert_string_equal(sinew_import_data_dir(), "/some/data");
    unsetenv("SINEW_DATA_DIR");
    const char* dir = sinew_import_data_dir();
    assert_non_null(dir);
    char found[PATH_MAX], expected[PATH_MAX];
    if (realpath(SINEW_DEFAULT_DATA_DIR, expected)) {
        assert_non_null(realpath(dir, found));
        assert_string_equal(found, expected);
        assert_non_null(strstr(dir, "/share/sinew/data"));
    } else {
        assert_string_equal(dir, "../shared/data");
    }
    if (saved) setenv("SINEW_DATA_DIR", saved, 1);
    free(saved);
}

int main(void)
{
    sinew_test_log_init(&g_log);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cylinder),
        cmocka_unit_test(test_tbone),
        cmocka_unit_test(test_male),
        cmocka_unit_test(test_every_frame_matches_reference),
        cmocka_unit_test(test_data_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
