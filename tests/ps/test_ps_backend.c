/* The ps backend through its vtable with a hand-made host: parameters, rig and argument
 * checks (one log line each), the rest output before any step, bound output, and the state
 * that carries a shape across backend swaps. SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin_backends.h"
#include "ps_fixture.h"
#include "ps_internal.h"

static const sinew_backend_vtable* vt = &sinew_backend_ps;

typedef struct bad_param {
    const char* key;
    const char* value;
    sinew_result expect;
} bad_param;

static void test_parameters(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    static const bad_param bad[] = {
        {"no_such_key", "1", SINEW_ERROR_PARAMETER},
        {"iterations", "0", SINEW_ERROR_PARAMETER},
        {"iterations", "2.5", SINEW_ERROR_PARAMETER},
        {"iterations", "1001", SINEW_ERROR_PARAMETER},
        {"iterations", "ten", SINEW_ERROR_PARAMETER},
        {"iterations", "", SINEW_ERROR_PARAMETER},
        {"timestep", "0", SINEW_ERROR_PARAMETER},
        {"timestep", "-0.01", SINEW_ERROR_PARAMETER},
        {"timestep", "2", SINEW_ERROR_PARAMETER},
        {"timestep", "nan", SINEW_ERROR_PARAMETER},
        {"damping", "1.01", SINEW_ERROR_PARAMETER},
        {"damping", "-0.5", SINEW_ERROR_PARAMETER},
        {"damping", "0.9x", SINEW_ERROR_PARAMETER},
        {"strain_weight", "0", SINEW_ERROR_PARAMETER},
        {"anchor_weight", "-1", SINEW_ERROR_PARAMETER},
        {"mass", "inf", SINEW_ERROR_PARAMETER},
        {"mass", "1e13", SINEW_ERROR_PARAMETER},
        {"collisions", "2", SINEW_ERROR_PARAMETER},
        {"profile", "yes", SINEW_ERROR_PARAMETER},
        {"simd", "sse", SINEW_ERROR_PARAMETER},
        {"simd", "neon", SINEW_ERROR_PARAMETER},
        {"max_substeps", "0", SINEW_ERROR_PARAMETER},
        {"max_substeps", "65", SINEW_ERROR_PARAMETER},
        {"max_substeps", "1.5", SINEW_ERROR_PARAMETER},
        {"interpolate_output", "yes", SINEW_ERROR_PARAMETER},
        {NULL, "1", SINEW_ERROR_PARAMETER},
        {"mass", NULL, SINEW_ERROR_PARAMETER},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        sinew_param p = {bad[i].key, bad[i].value};
        void* inst = (void*)&p;
        sinew_test_log_reset(&host.log);
        sinew_result r = vt->prepare(&host.api, &rig.view, &p, 1, NULL, &inst);
        if (r != bad[i].expect)
            fail_msg("%s=%s: %s", bad[i].key ? bad[i].key : "(null)",
                     bad[i].value ? bad[i].value : "(null)", sinew_result_string(r));
        assert_null(inst);
        assert_int_equal(host.log.total, 1);
        assert_int_equal(host.log.count[SINEW_LOG_ERROR], 1);
    }
    sinew_test_log_reset(&host.log);
    assert_int_equal(vt->prepare(&host.api, &rig.view, NULL, 0, NULL, NULL),
                     SINEW_ERROR_INVALID_ARGUMENT);
    /* collisions=1 computes candidates at prepare (no baked ones) and steps */
    sinew_param col[2] = {{"collisions", "1"}, {"collision_joints", "joint2"}};
    void* inst = NULL;
    sinew_test_log_reset(&host.log);
    assert_int_equal(vt->prepare(&host.api, &rig.view, col, 2, NULL, &inst), SINEW_OK);
    assert_int_equal(vt->step(inst, 1.0f / 60.0f), SINEW_OK);
    vt->destroy(inst);
    inst = NULL;
    /* a key given twice, params NULL with a count, a typed parameter chain */
    sinew_param twice[2] = {{"iterations", "5"}, {"iterations", "6"}};
    assert_int_equal(vt->prepare(&host.api, &rig.view, twice, 2, NULL, &inst), SINEW_ERROR_PARAMETER);
    assert_int_equal(vt->prepare(&host.api, &rig.view, NULL, 2, NULL, &inst),
                     SINEW_ERROR_INVALID_ARGUMENT);
    sinew_ext_header ext = {(uint32_t)sizeof(sinew_ext_header), SINEW_EXT_CUDA_OUTPUT, NULL};
    assert_int_equal(vt->prepare(&host.api, &rig.view, NULL, 0, &ext, &inst), SINEW_ERROR_UNSUPPORTED);
    /* typed parameters: the same checks as text, and a key given both ways is given twice */
    const sinew_param_value typed_values[2] = {{"iterations", 4.0, NULL}, {"simd", 0.0, "scalar"}};
    sinew_backend_params_ext typed = SINEW_BACKEND_PARAMS_EXT_INIT;
    typed.values = typed_values;
    typed.count = 2;
    assert_int_equal(vt->prepare(&host.api, &rig.view, NULL, 0, &typed, &inst), SINEW_OK);
    vt->destroy(inst);
    inst = NULL;
    assert_int_equal(vt->prepare(&host.api, &rig.view, twice, 1, &typed, &inst), SINEW_ERROR_PARAMETER);
    const sinew_param_value not_whole[1] = {{"iterations", 4.5, NULL}};
    typed.values = not_whole;
    typed.count = 1;
    assert_int_equal(vt->prepare(&host.api, &rig.view, NULL, 0, &typed, &inst), SINEW_ERROR_PARAMETER);
    /* every key with a good value */
    sinew_param good[] = {{"iterations", "4"},   {"timestep", "0.02"},    {"damping", "1"},
                          {"strain_weight", "2"}, {"anchor_weight", "50"}, {"mass", "0.003"},
                          {"collisions", "0"},    {"profile", "1"},        {"simd", "scalar"},
                          {"max_substeps", "64"}, {"interpolate_output", "1"}};
    ps_test_host_init(&host, SINEW_LOG_INFO, 0);
    assert_int_equal(vt->prepare(&host.api, &rig.view, good, 11, NULL, &inst), SINEW_OK);
    assert_int_equal(vt->step(inst, 0.02f), SINEW_OK); /* one step of the timestep */
    sinew_test_log_reset(&host.log);
    vt->destroy(inst);
    /* profile=1 reports the updates and steps in one INFO line, then the phases in another */
    assert_int_equal(host.log.count[SINEW_LOG_INFO], 2);
    assert_non_null(strstr(host.log.last, "solve"));
    ps_test_rig_free(&rig);
}

static void test_rig_checks(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    void* inst = NULL;
    sinew_rig_view v = rig.view;
    v.struct_size = 8;
    assert_int_equal(vt->prepare(&host.api, &v, NULL, 0, NULL, &inst), SINEW_ERROR_STRUCT_SIZE);
    v = rig.view;
    v.joint_count = 0;
    assert_int_equal(vt->prepare(&host.api, &v, NULL, 0, NULL, &inst), SINEW_ERROR_JOINT_COUNT);
    v = rig.view;
    v.render_mesh.triangle_count = 0;
    assert_int_equal(vt->prepare(&host.api, &v, NULL, 0, NULL, &inst), SINEW_ERROR_EMPTY_MESH);
    uint32_t* indices = malloc(sizeof(uint32_t) * 3u * rig.view.render_mesh.triangle_count);
    memcpy(indices, rig.view.render_mesh.indices, sizeof(uint32_t) * 3u * rig.view.render_mesh.triangle_count);
    indices[7] = rig.view.render_mesh.vertex_count;
    v = rig.view;
    v.render_mesh.indices = indices;
    sinew_test_log_reset(&host.log);
    assert_int_equal(vt->prepare(&host.api, &v, NULL, 0, NULL, &inst), SINEW_ERROR_VERTEX_INDEX);
    assert_int_equal(host.log.total, 1);
    free(indices);
    int32_t* parents = malloc(sizeof(int32_t) * rig.view.joint_count);
    memcpy(parents, rig.view.parents, sizeof(int32_t) * rig.view.joint_count);
    parents[1] = 99;
    v = rig.view;
    v.parents = parents;
    assert_int_equal(vt->prepare(&host.api, &v, NULL, 0, NULL, &inst), SINEW_ERROR_JOINT_INDEX);
    free(parents);
    assert_null(inst);
    ps_test_rig_free(&rig);
}

static float max_abs_diff(const float* a, const float* b, size_t count)
{
    float worst = 0.0f;
    for (size_t i = 0; i < count; ++i) worst = fmaxf(worst, fabsf(a[i] - b[i]));
    return worst;
}

static void test_output_and_pose(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    void* inst = NULL;
    assert_int_equal(vt->prepare(&host.api, &rig.view, NULL, 0, NULL, &inst), SINEW_OK);
    uint32_t n = rig.view.render_mesh.vertex_count, jn = rig.view.joint_count;
    float* pos = calloc(3u * n, sizeof(float));
    float* nrm = calloc(3u * n, sizeof(float));
    sinew_output_view out = {(uint32_t)sizeof(sinew_output_view), n, pos, 0, nrm, 0, NULL};
    /* before any step: the rest mesh, bit for bit */
    assert_int_equal(vt->read_output(inst, &out), SINEW_OK);
    assert_memory_equal(pos, rig.view.render_mesh.positions, 12u * n);
    assert_memory_equal(nrm, rig.view.render_mesh.normals, 12u * n);
    /* a step at the rest pose stays at rest */
    assert_int_equal(vt->step(inst, 1.0f / 60.0f), SINEW_OK);
    assert_int_equal(vt->read_output(inst, &out), SINEW_OK);
    assert_true(max_abs_diff(pos, rig.view.render_mesh.positions, 3u * n) < 1e-5f);
    assert_true(max_abs_diff(nrm, rig.view.render_mesh.normals, 3u * n) < 1e-4f);
    /* argument checks, one log line each */
    float* skinning = malloc(sizeof(float) * 16u * jn);
    ps_test_skinning(&rig, 2, 45.0f, 0.0f, skinning);
    sinew_pose_view pose = {(uint32_t)sizeof(sinew_pose_view), jn, skinning, skinning, 0u};
    sinew_test_log_reset(&host.log);
    assert_int_equal(vt->set_pose(inst, NULL), SINEW_ERROR_INVALID_ARGUMENT);
    pose.joint_count = jn + 1u;
    assert_int_equal(vt->set_pose(inst, &pose), SINEW_ERROR_JOINT_COUNT);
    pose.joint_count = jn;
    skinning[5] = NAN;
    assert_int_equal(vt->set_pose(inst, &pose), SINEW_ERROR_NONFINITE);
    assert_int_equal(vt->step(inst, NAN), SINEW_ERROR_NONFINITE);
    assert_int_equal(vt->step(inst, -1.0f), SINEW_ERROR_INVALID_ARGUMENT);
    out.vertex_count = n - 1u;
    assert_int_equal(vt->read_output(inst, &out), SINEW_ERROR_OUTPUT_BINDING);
    out.vertex_count = n;
    out.position_stride = 10u;
    assert_int_equal(vt->bind_output(inst, &out), SINEW_ERROR_OUTPUT_BINDING);
    out.position_stride = 0u;
    assert_int_equal(host.log.total, 7);
    assert_int_equal(vt->step(NULL, 0.1f), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vt->set_pose(&host, &pose), SINEW_ERROR_INVALID_ARGUMENT); /* foreign */
    ps_test_skinning(&rig, 2, 45.0f, 0.0f, skinning);
    assert_int_equal(vt->set_pose(inst, &pose), SINEW_OK);
    /* a bound step writes the caller's strided arrays; read_output gives the same bits */
    size_t stride = 32u;
    float* bound = calloc((size_t)n * stride / 4u, sizeof(float));
    float* bound_n = calloc((size_t)n * stride / 4u, sizeof(float));
    sinew_output_view bind = {(uint32_t)sizeof(sinew_output_view), n, bound, stride, bound_n, stride, NULL};
    assert_int_equal(vt->bind_output(inst, &bind), SINEW_OK);
    for (int i = 0; i < 5; ++i) assert_int_equal(vt->step(inst, 1.0f / 60.0f), SINEW_OK);
    assert_int_equal(vt->read_output(inst, &out), SINEW_OK);
    for (uint32_t v = 0; v < n; ++v) {
        assert_memory_equal(pos + 3u * v, (char*)bound + stride * v, 12u);
        assert_memory_equal(nrm + 3u * v, (char*)bound_n + stride * v, 12u);
        float l = sqrtf(nrm[3 * v] * nrm[3 * v] + nrm[3 * v + 1] * nrm[3 * v + 1] +
                        nrm[3 * v + 2] * nrm[3 * v + 2]);
        assert_true(fabsf(l - 1.0f) < 1e-4f);
    }
    /* the pose moved the far end of the cylinder */
    assert_true(max_abs_diff(pos, rig.view.render_mesh.positions, 3u * n) > 0.5f);
    assert_int_equal(vt->bind_output(inst, NULL), SINEW_OK);
    free(bound);
    free(bound_n);
    free(skinning);
    free(pos);
    free(nrm);
    vt->destroy(inst);
    ps_test_rig_free(&rig);
}

/* set_state: the given shape is the output until the next step, get_state returns it with the
 * given velocities; the simulation continues from it. */
static void check_state(const char* relative)
{
    const char* path = sinew_test_data_path(relative);
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    void* inst = NULL;
    assert_int_equal(vt->prepare(&host.api, &rig.view, NULL, 0, NULL, &inst), SINEW_OK);
    uint32_t n = rig.view.render_mesh.vertex_count;
    const ps_model* m = ps_instance_model(inst);
    assert_non_null(m);
    float* pos = malloc(sizeof(float) * 3u * n);
    float* vel = malloc(sizeof(float) * 3u * n);
    float* got = malloc(sizeof(float) * 3u * n);
    float* got_v = malloc(sizeof(float) * 3u * n);
    /* the rest shape shifted by a constant, moving at a constant velocity */
    for (uint32_t v = 0; v < n; ++v)
        for (int k = 0; k < 3; ++k) {
            pos[3u * v + k] = rig.view.render_mesh.positions[3u * v + k] + (k == 1 ? 0.25f : 0.0f);
            vel[3u * v + k] = k == 0 ? 1.5f : 0.0f;
        }
    sinew_state_view st = {(uint32_t)sizeof(sinew_state_view), n, pos, vel};
    assert_int_equal(vt->set_state(inst, &st), SINEW_OK);
    sinew_state_view back = {(uint32_t)sizeof(sinew_state_view), n, got, got_v};
    assert_int_equal(vt->get_state(inst, &back), SINEW_OK);
    assert_memory_equal(got, pos, 12u * n);
    assert_true(max_abs_diff(got_v, vel, 3u * n) < 1e-5f);
    /* normals read alone after it: upsampled from the restored skin, the positions untouched */
    float* nrm = malloc(sizeof(float) * 3u * n);
    assert_non_null(nrm);
    sinew_output_view ov = {(uint32_t)sizeof(sinew_output_view), n, got, 12u, nrm, 12u, NULL};
    int errors = host.log.count[SINEW_LOG_ERROR];
    assert_int_equal(vt->read_output(inst, &ov), SINEW_OK);
    assert_int_equal(host.log.count[SINEW_LOG_ERROR], errors);
    assert_memory_equal(got, pos, 12u * n);
    for (size_t k = 0; k < 3u * n; ++k) assert_true(isfinite(nrm[k]));
    assert_true(max_abs_diff(nrm, rig.view.render_mesh.normals, 3u * n) < 0.05f);
    free(nrm);
    /* the skin restored from it sits at the shifted rest shape */
    const double* x = ps_sim_positions(ps_instance_sim(inst));
    double worst = 0.0;
    for (uint32_t i = 0; i < m->n; ++i)
        for (int k = 0; k < 3; ++k)
            worst = fmax(worst, fabs(x[(size_t)k * 2u * m->n + i] - (m->rest[3u * i + k] + (k == 1 ? 0.25 : 0.0))));
    assert_true(worst < 1e-4 * m->diagonal);
    /* bad states */
    st.vertex_count = n + 1u;
    assert_int_equal(vt->set_state(inst, &st), SINEW_ERROR_INVALID_ARGUMENT);
    st.vertex_count = n;
    pos[4] = INFINITY;
    assert_int_equal(vt->set_state(inst, &st), SINEW_ERROR_NONFINITE);
    /* the next steps pull the skin back onto its bones, finitely */
    for (int i = 0; i < 20; ++i) assert_int_equal(vt->step(inst, 1.0f / 60.0f), SINEW_OK);
    assert_int_equal(vt->get_state(inst, &back), SINEW_OK);
    for (size_t k = 0; k < 3u * n; ++k) assert_true(isfinite(got[k]) && isfinite(got_v[k]));
    free(pos);
    free(vel);
    free(got);
    free(got_v);
    vt->destroy(inst);
    ps_test_rig_free(&rig);
}

static void test_state_render_mesh(void** state)
{
    (void)state;
    check_state("characters/cylinder/cylinder.ini");
}

static void test_state_simulation_mesh(void** state)
{
    (void)state;
    check_state("characters/male/male.ini");
}

/* Holes, a separate floating part, an unreferenced vertex and two sub-meshes: the cylinder with
 * its first triangles removed, a small triangle beside it and a lone vertex. Everything stays
 * finite, and the lone vertex moves rigidly with its bone. */
static void test_holes_parts_and_isolated_vertices(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    const sinew_mesh_view* base = &rig.view.render_mesh;
    uint32_t n0 = base->vertex_count, t0 = base->triangle_count, removed = 12u;
    uint32_t n = n0 + 4u, tc = t0 - removed + 1u;
    float* pos = malloc(sizeof(float) * 3u * n);
    float* nrm = malloc(sizeof(float) * 3u * n);
    uint32_t* idx = malloc(sizeof(uint32_t) * 3u * tc);
    memcpy(pos, base->positions, sizeof(float) * 3u * n0);
    memcpy(nrm, base->normals, sizeof(float) * 3u * n0);
    const float extra[4][3] = {{4.0f, 0.0f, 0.2f}, {3.0f, 2.5f, 0.0f}, {3.5f, 2.5f, 0.0f}, {3.2f, 2.9f, 0.1f}};
    for (int k = 0; k < 4; ++k) {
        memcpy(pos + 3u * (n0 + (uint32_t)k), extra[k], sizeof extra[k]);
        nrm[3u * (n0 + k)] = 0.0f, nrm[3u * (n0 + k) + 1] = 0.0f, nrm[3u * (n0 + k) + 2] = 1.0f;
    }
    memcpy(idx, base->indices + 3u * removed, sizeof(uint32_t) * 3u * (t0 - removed));
    idx[3u * (tc - 1u)] = n0 + 1u, idx[3u * (tc - 1u) + 1] = n0 + 2u, idx[3u * (tc - 1u) + 2] = n0 + 3u;
    uint32_t firsts[2] = {0u, tc - 1u};
    sinew_rig_view v = rig.view;
    v.render_mesh.vertex_count = n;
    v.render_mesh.triangle_count = tc;
    v.render_mesh.positions = pos;
    v.render_mesh.normals = nrm;
    v.render_mesh.indices = idx;
    v.render_mesh.submesh_count = 2;
    v.render_mesh.submesh_first_triangle = firsts;
    /* a hand-made mesh without weights: foot points on the whole skeleton (Sec. 3.2) */
    v.weight_offsets = NULL;
    v.weight_joints = NULL;
    v.weight_values = NULL;
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    void* inst = NULL;
    assert_int_equal(vt->prepare(&host.api, &v, NULL, 0, NULL, &inst), SINEW_OK);
    const ps_model* m = ps_instance_model(inst);
    uint32_t lone = m->weld[n0];
    uint32_t jn = v.joint_count;
    float* skinning = malloc(sizeof(float) * 16u * jn);
    float* out = malloc(sizeof(float) * 3u * n);
    float* out_n = malloc(sizeof(float) * 3u * n);
    sinew_output_view ov = {(uint32_t)sizeof(sinew_output_view), n, out, 0, out_n, 0, NULL};
    sinew_pose_view pose = {(uint32_t)sizeof(sinew_pose_view), jn, skinning, skinning, 0u};
    for (int i = 1; i <= 40; ++i) {
        ps_test_skinning(&rig, 2, 3.0f * (float)(i < 30 ? i : 30), 2.0f * (float)(i < 30 ? i : 30), skinning);
        assert_int_equal(vt->set_pose(inst, &pose), SINEW_OK);
        assert_int_equal(vt->step(inst, 1.0f / 60.0f), SINEW_OK);
        assert_int_equal(vt->read_output(inst, &ov), SINEW_OK);
        for (size_t k = 0; k < 3u * n; ++k) assert_true(isfinite(out[k]) && isfinite(out_n[k]));
    }
    /* The lone vertex follows the skinning matrix of its bone's joint exactly (a stiff anchor). */
    const float* T = skinning + 16u * m->bones[m->vertex_bone[lone]].joint;
    for (int r = 0; r < 3; ++r) {
        float expect = T[r] * extra[0][0] + T[4 + r] * extra[0][1] + T[8 + r] * extra[0][2] + T[12 + r];
        assert_true(fabsf(out[3u * n0 + (uint32_t)r] - expect) < 1e-3f);
    }
    free(skinning);
    free(out);
    free(out_n);
    vt->destroy(inst);
    free(pos);
    free(nrm);
    free(idx);
    ps_test_rig_free(&rig);
}

/* A skeleton of one joint has no segment: the joint becomes a sphere and the skin a shell
 * around it, which a pure translation of the joint carries along unchanged. */
static void test_single_joint(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    sinew_rig_view v = rig.view;
    int32_t parent = -1;
    float bind[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.5f, 0, 0, 1};
    v.joint_count = 1;
    v.parents = &parent;
    v.bind_matrices = bind;
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    void* inst = NULL;
    assert_int_equal(vt->prepare(&host.api, &v, NULL, 0, NULL, &inst), SINEW_OK);
    const ps_model* m = ps_instance_model(inst);
    assert_int_equal(m->bone_count, 1);
    assert_true(m->joint_radius[0] > 0.0);
    float skinning[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.25f, -0.5f, 1.0f, 1};
    sinew_pose_view pose = {(uint32_t)sizeof(sinew_pose_view), 1, skinning, skinning, 0u};
    assert_int_equal(vt->set_pose(inst, &pose), SINEW_OK);
    for (int i = 0; i < 200; ++i) assert_int_equal(vt->step(inst, 1.0f / 60.0f), SINEW_OK);
    uint32_t n = v.render_mesh.vertex_count;
    float* out = malloc(sizeof(float) * 3u * n);
    sinew_output_view ov = {(uint32_t)sizeof(sinew_output_view), n, out, 0, NULL, 0, NULL};
    assert_int_equal(vt->read_output(inst, &ov), SINEW_OK);
    float worst = 0.0f;
    for (uint32_t k = 0; k < n; ++k)
        for (int c = 0; c < 3; ++c)
            worst = fmaxf(worst, fabsf(out[3u * k + c] - (v.render_mesh.positions[3u * k + c] + skinning[12 + c])));
    print_message("single joint: largest deviation from the translated rest mesh %g\n", worst);
    assert_true(worst < 1e-3f);
    free(out);
    vt->destroy(inst);
    ps_test_rig_free(&rig);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parameters),
        cmocka_unit_test(test_rig_checks),
        cmocka_unit_test(test_output_and_pose),
        cmocka_unit_test(test_state_render_mesh),
        cmocka_unit_test(test_state_simulation_mesh),
        cmocka_unit_test(test_holes_parts_and_isolated_vertices),
        cmocka_unit_test(test_single_joint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
