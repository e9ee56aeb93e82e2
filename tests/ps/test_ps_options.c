/* Options of the ps backend that shape its model: user-given bone radii (projective skinning
 * Sec. 3.1) and the decimated simulation mesh of a rig with only a large render mesh (Sec. 6).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps_fixture.h"
#include "builtin_backends.h"
#include "ps_internal.h"

static sinew_result build_with(ps_test_host* host, const ps_test_rig* rig, const char* key,
                               const char* value, ps_model* m)
{
    ps_params p;
    sinew_param param = {key, value};
    sinew_result r = ps_params_parse(&host->api, &param, 1, NULL, &p);
    if (r != SINEW_OK) return r;
    return ps_model_build_with(&host->api, &rig->view, &p, m);
}

static uint32_t bone_at(const ps_model* m, uint32_t joint)
{
    for (uint32_t b = 0; b < m->bone_count; ++b)
        if (m->bones[b].joint == joint) return b;
    fail_msg("no bone starts at joint %u", joint);
    return 0;
}

/* The named bones get the given radius, the others keep theirs; the fit condition (eq. 1)
 * still holds, and a radius too large for it is scaled down with one WARNING line. */
static void test_bone_radii(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_INFO, 0);
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_model automatic, given;
    assert_int_equal(ps_model_build(&host.api, &rig.view, &automatic), SINEW_OK);
    uint32_t j1 = (uint32_t)sample_find_joint(&rig.character, "joint1");
    uint32_t j2 = (uint32_t)sample_find_joint(&rig.character, "joint2");
    uint32_t b1 = bone_at(&automatic, j1), b2 = bone_at(&automatic, j2);
    double r1 = automatic.bones[b1].radius, r2 = automatic.bones[b2].radius;
    assert_true(r1 > 0.0 && r2 > 0.0);

    /* smaller radii fit: taken as given */
    char text[128];
    snprintf(text, sizeof text, "joint1:%.17g,joint2:%.17g", 0.5 * r1, 0.25 * r2);
    int warnings = host.log.count[SINEW_LOG_WARNING];
    assert_int_equal(build_with(&host, &rig, "bone_radii", text, &given), SINEW_OK);
    assert_true(given.bones[bone_at(&given, j1)].radius == 0.5 * r1);
    assert_true(given.bones[bone_at(&given, j2)].radius == 0.25 * r2);
    for (uint32_t b = 0; b < given.bone_count; ++b)
        if (given.bones[b].joint != j1 && given.bones[b].joint != j2)
            assert_true(given.bones[b].radius == automatic.bones[b].radius);
    /* no scaling warning (thinner capsules make taller prisms: at most the tissue's line) */
    assert_true(host.log.count[SINEW_LOG_WARNING] <= warnings + 1);
    if (host.log.count[SINEW_LOG_WARNING] > warnings)
        assert_non_null(strstr(host.log.last, "tetrahedra"));
    ps_model_free(&host.api, &given);

    /* a radius longer than its bone: scaled down to fit, with a warning */
    assert_int_equal(build_with(&host, &rig, "bone_radii", "joint2:100", &given), SINEW_OK);
    /* (a capsule wider than the skin also inverts tets at rest: a second warning) */
    assert_true(host.log.count[SINEW_LOG_WARNING] >= warnings + 1);
    for (uint32_t b = 0; b < given.bone_count; ++b) {
        const ps_bone* bone = &given.bones[b];
        double a[3], e[3];
        ps_joint_position(&given, bone->end[0], a);
        ps_joint_position(&given, bone->end[1], e);
        double len = sqrt((a[0] - e[0]) * (a[0] - e[0]) + (a[1] - e[1]) * (a[1] - e[1]) +
                          (a[2] - e[2]) * (a[2] - e[2]));
        double sum = given.joint_radius[bone->end[0]] + given.joint_radius[bone->end[1]] +
                     2.0 * bone->radius;
        assert_true(sum <= len * (1.0 + 1e-9));
    }
    double scaled = given.bones[bone_at(&given, j2)].radius;
    assert_true(scaled > r2 && scaled < 100.0); /* larger than automatic, within the bone */
    ps_model_free(&host.api, &given);

    /* bad input: one error line each, no model */
    const char* bad[] = {"nojoint:1", "joint2:-1", "joint2:abc", "joint2", ":1", "joint2:",
                         "joint3:1" /* a leaf starts no bone */, "joint2:1,,joint1:1",
                         "joint2:inf"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        int errors = host.log.count[SINEW_LOG_ERROR];
        assert_int_equal(build_with(&host, &rig, "bone_radii", bad[k], &given),
                         SINEW_ERROR_PARAMETER);
        assert_int_equal(host.log.count[SINEW_LOG_ERROR], errors + 1);
    }
    ps_model_free(&host.api, &automatic);
    ps_test_rig_free(&rig);
}

static void mat_mul(const float* a, const float* b, float* out)
{
    for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r) {
            float s = 0.0f;
            for (int k = 0; k < 4; ++k) s += a[4 * k + r] * b[4 * c + k];
            out[4 * c + r] = s;
        }
}

/* Inverse of an affine column-major matrix (rotation-scale part by cofactors). */
static void affine_inverse(const float* m, float* out)
{
    double a[3][3];
    for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) a[r][k] = m[4 * k + r];
    double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                 a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                 a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
    assert_true(fabs(det) > 1e-12);
    double inv[3][3];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            int r1 = (c + 1) % 3, r2 = (c + 2) % 3, c1 = (r + 1) % 3, c2 = (r + 2) % 3;
            inv[r][c] = (a[r1][c1] * a[r2][c2] - a[r1][c2] * a[r2][c1]) / det;
        }
    memset(out, 0, 16 * sizeof(float));
    for (int r = 0; r < 3; ++r) {
        double t = 0.0;
        for (int k = 0; k < 3; ++k) {
            out[4 * k + r] = (float)inv[r][k];
            t -= inv[r][k] * m[12 + k];
        }
        out[12 + r] = (float)t;
    }
    out[15] = 1.0f;
}

/* Skinning matrices of the first animation at `seconds` (local -> model -> times inverse bind). */
static void animation_skinning(const ps_test_rig* rig, float seconds, float* out)
{
    const sample_character* ch = &rig->character;
    uint32_t jn = rig->view.joint_count;
    float* local = malloc(sizeof(float) * 16u * jn);
    float* model = malloc(sizeof(float) * 16u * jn);
    unsigned char* done = calloc(jn, 1);
    assert_non_null(local);
    assert_non_null(model);
    assert_non_null(done);
    assert_true(ch->animation_count > 0);
    assert_int_equal(sinew_animation_sample(&ch->animations[0], seconds, 1, local), SINEW_OK);
    for (uint32_t settled = 0; settled < jn;)
        for (uint32_t j = 0; j < jn; ++j) {
            int32_t p = rig->view.parents[j];
            if (done[j] || (p >= 0 && !done[p])) continue;
            if (p < 0) memcpy(model + 16u * j, local + 16u * j, 16u * sizeof(float));
            else mat_mul(model + 16u * p, local + 16u * j, model + 16u * j);
            done[j] = 1;
            ++settled;
        }
    for (uint32_t j = 0; j < jn; ++j) {
        float inv[16];
        affine_inverse(rig->view.bind_matrices + 16u * j, inv);
        mat_mul(model + 16u * j, inv, out + 16u * j);
    }
    free(local);
    free(model);
    free(done);
}

/* The male's render mesh alone (its simulation mesh dropped): ps decimates a simulation mesh
 * of about simulation_vertices, the rest pose gives the render mesh back, and animation
 * frames stay finite; a bake of it restores the same model. */
static void test_decimated_male(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/male/male.ini");
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    memset(&rig.view.simulation_mesh, 0, sizeof rig.view.simulation_mesh);
    uint32_t n = rig.view.render_mesh.vertex_count, jn = rig.view.joint_count;
    assert_true(n > 12000u);
    void* inst = NULL;
    int warnings = host.log.count[SINEW_LOG_WARNING];
    assert_int_equal(sinew_backend_ps.prepare(&host.api, &rig.view, NULL, 0, NULL, &inst), SINEW_OK);
    const ps_model* m = ps_instance_model(inst);
    print_message("male render mesh alone: %u render vertices, decimated simulation mesh of %u "
                  "skin vertices, %u triangles\n", n, m->n, m->triangle_count);
    if (m->decimated_triangles == 0) {
        /* a build without meshoptimizer: the full mesh, said in a warning */
        assert_true(host.log.count[SINEW_LOG_WARNING] > warnings);
        assert_int_equal(m->source_vertex_count, n);
    } else {
        assert_true(m->n >= 3000u && m->n <= 4200u);
    }
    assert_int_equal(m->render_count, n);

    float* pos = calloc(3u * (size_t)n, sizeof(float));
    float* nrm = calloc(3u * (size_t)n, sizeof(float));
    float* skinning = malloc(sizeof(float) * 16u * jn);
    assert_non_null(pos);
    assert_non_null(nrm);
    assert_non_null(skinning);
    sinew_output_view out = {(uint32_t)sizeof(sinew_output_view), n, pos, 0, nrm, 0, NULL};
    /* the rest pose, stepped: the render mesh */
    for (uint32_t j = 0; j < jn; ++j)
        for (int k = 0; k < 16; ++k) skinning[16u * j + k] = (k % 5 == 0) ? 1.0f : 0.0f;
    sinew_pose_view pose = {(uint32_t)sizeof(sinew_pose_view), jn, skinning, skinning, 0u};
    assert_int_equal(sinew_backend_ps.set_pose(inst, &pose), SINEW_OK);
    assert_int_equal(sinew_backend_ps.step(inst, 1.0f / 60.0f), SINEW_OK);
    assert_int_equal(sinew_backend_ps.read_output(inst, &out), SINEW_OK);
    double worst = 0.0;
    for (size_t k = 0; k < 3u * (size_t)n; ++k)
        worst = fmax(worst, fabs((double)pos[k] - rig.view.render_mesh.positions[k]));
    print_message("rest pose: largest deviation from the render mesh %.3g of the diagonal\n",
                  worst / m->diagonal);
    assert_true(worst < 1e-6 * m->diagonal);
    /* animation frames: finite */
    for (int f = 1; f <= 30; f += 29) {
        animation_skinning(&rig, (float)f / 30.0f, skinning);
        assert_int_equal(sinew_backend_ps.set_pose(inst, &pose), SINEW_OK);
        assert_int_equal(sinew_backend_ps.step(inst, 1.0f / 60.0f), SINEW_OK);
        assert_int_equal(sinew_backend_ps.read_output(inst, &out), SINEW_OK);
        for (size_t k = 0; k < 3u * (size_t)n; ++k)
            if (!isfinite(pos[k]) || !isfinite(nrm[k])) fail_msg("frame %d: vertex %zu", f, k / 3u);
    }
    sinew_backend_ps.destroy(inst);
    free(pos);
    free(nrm);
    free(skinning);
    ps_test_rig_free(&rig);
}

/* decimate_above on a small mesh: 0 simulates the full mesh, a limit below its size
 * decimates; the decimated model survives a bake round trip bit for bit. */
static void test_decimate_small(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    assert_int_equal(rig.view.simulation_mesh.vertex_count, 0);
    sinew_param never[2] = {{"decimate_above", "0"}, {"simulation_vertices", "200"}};
    sinew_param below[2] = {{"decimate_above", "100"}, {"simulation_vertices", "200"}};
    void* full = NULL;
    void* coarse = NULL;
    assert_int_equal(sinew_backend_ps.prepare(&host.api, &rig.view, never, 2, NULL, &full), SINEW_OK);
    assert_int_equal(sinew_backend_ps.prepare(&host.api, &rig.view, below, 2, NULL, &coarse),
                     SINEW_OK);
    const ps_model* mf = ps_instance_model(full);
    const ps_model* mc = ps_instance_model(coarse);
    assert_int_equal(mf->decimated_triangles, 0);
    assert_int_equal(mf->source_vertex_count, rig.view.render_mesh.vertex_count);
    if (mc->decimated_triangles == 0) { /* a build without meshoptimizer */
        sinew_backend_ps.destroy(full);
        sinew_backend_ps.destroy(coarse);
        ps_test_rig_free(&rig);
        skip();
    }
    assert_true(mc->n <= 220u && mc->n >= 100u);
    print_message("cylinder: full %u skin vertices, decimated %u\n", mf->n, mc->n);

    /* bake the decimated preparation and restore it */
    ps_test_buffer blob = {0};
    sinew_bake_writer w = ps_test_buffer_writer(&blob);
    assert_int_equal(sinew_backend_ps.bake(&host.api, &rig.view, below, 2, &w), SINEW_OK);
    sinew_rig_view baked = rig.view;
    baked.baked_backend = "ps";
    baked.baked_data = blob.data;
    baked.baked_size = blob.size;
    void* restored = NULL;
    assert_int_equal(sinew_backend_ps.prepare(&host.api, &baked, NULL, 0, NULL, &restored), SINEW_OK);
    ps_test_buffer a = {0}, b = {0};
    sinew_bake_writer wa = ps_test_buffer_writer(&a), wb = ps_test_buffer_writer(&b);
    assert_int_equal(ps_model_dump(mc, &wa), SINEW_OK);
    assert_int_equal(ps_model_dump(ps_instance_model(restored), &wb), SINEW_OK);
    assert_int_equal(a.size, b.size);
    assert_memory_equal(a.data, b.data, a.size);
    /* a truncated blob is refused: its end, the MLS weights of the decimated mesh, is cut */
    baked.baked_size = blob.size - 9u;
    void* bad = NULL;
    assert_int_equal(sinew_backend_ps.prepare(&host.api, &baked, NULL, 0, NULL, &bad),
                     SINEW_ERROR_FILE_TRUNCATED);
    sinew_backend_ps.destroy(restored);
    sinew_backend_ps.destroy(full);
    sinew_backend_ps.destroy(coarse);
    ps_test_buffer_free(&blob);
    ps_test_buffer_free(&a);
    ps_test_buffer_free(&b);
    ps_test_rig_free(&rig);
}

/* volume_weight and volume_range (ps_volume.c): defaults, accepted values, and one error line
 * for each bad value or repeated key. */
static void test_volume_parameters(void** state)
{
    (void)state;
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    ps_params p;
    assert_int_equal(ps_params_parse(&host.api, NULL, 0, NULL, &p), SINEW_OK);
    assert_true(p.volume.weight == PS_VOLUME_WEIGHT && p.volume.range == PS_VOLUME_RANGE);
    const sinew_param good[] = {{"volume_weight", "2.5"}, {"volume_range", "0"}};
    assert_int_equal(ps_params_parse(&host.api, good, 2, NULL, &p), SINEW_OK);
    assert_true(p.volume.weight == 2.5 && p.volume.range == 0.0);
    float keep, lo, hi;
    ps_volume_blend(&p.volume, 1.0, &keep, &lo, &hi);
    assert_true(fabsf(keep - 1.0f / 3.5f) < 1e-6f && lo == 1.0f && hi == 1.0f);
    const sinew_param bad[][2] = {{{"volume_weight", "-1"}, {"iterations", "10"}},
                                  {{"volume_weight", "inf"}, {"iterations", "10"}},
                                  {{"volume_range", "1"}, {"iterations", "10"}},
                                  {{"volume_range", "-0.01"}, {"iterations", "10"}},
                                  {{"volume_range", "wide"}, {"iterations", "10"}},
                                  {{"volume_weight", "1"}, {"volume_weight", "1"}}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        sinew_test_log_reset(&host.log);
        assert_int_equal(ps_params_parse(&host.api, bad[i], 2, NULL, &p), SINEW_ERROR_PARAMETER);
        assert_int_equal(host.log.count[SINEW_LOG_ERROR], 1);
        assert_non_null(strstr(host.log.last, bad[i][0].key));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bone_radii),
        cmocka_unit_test(test_volume_parameters),
        cmocka_unit_test(test_decimate_small),
        cmocka_unit_test(test_decimated_male),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
