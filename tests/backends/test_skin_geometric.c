/* The lbs and dqs backends through their function tables: hand-computed results on every
 * instruction-set path, dual quaternion antipodality and the candy-wrapper twist, parameters,
 * argument validation, rest pose, state and strided or bound output.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin_backends.h"
#include "cpu_features.h"
#include "dqs_kernels.h"
#include "dual_quat.h"
#include "skin_fixture.h"

#define assert_near(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (tol)))                                                             \
            fail_msg("%s = %.9g, expected %.9g (tolerance %g)", #a, a_, b_, (double)(tol));        \
    } while (0)

static const sinew_backend_vtable* const g_backends[2] = {&sinew_backend_lbs, &sinew_backend_dqs};

/* ---- hand-computed results ---- */

/* Two joints: identity, and a 90 degree turn about z followed by a lift of 2 along z.
 * v0 = (1,0,0) half on each, v1 = (0,1,0) on joint 1 only, v2 on joint 0 only. */
static void two_joint_rig(skin_rig* rig, float skinning[32])
{
    skin_rig_alloc(rig, 3, 2, 4);
    const float pos[9] = {1, 0, 0, 0, 1, 0, 0.5f, 0, 0.25f};
    const float nrm[9] = {1, 0, 0, 0, 0, 1, 0, 1, 0};
    memcpy(rig->positions, pos, sizeof pos);
    memcpy(rig->normals, nrm, sizeof nrm);
    rig->joints[0] = 0;
    rig->weights[0] = 0.5f;
    rig->joints[1] = 1;
    rig->weights[1] = 0.5f;
    rig->joints[4] = 1;
    rig->weights[4] = 1.0f;
    rig->joints[8] = 0;
    rig->weights[8] = 1.0f;
    double lift[3] = {0, 0, 2};
    skin_mat_identity(skinning);
    skin_mat_rotation(skinning + 16, 0, 0, 1, SKIN_PI / 2, lift);
}

static void test_hand_computed(void** state)
{
    (void)state;
    skin_rig rig;
    float skinning[32];
    two_joint_rig(&rig, skinning);
    const double h = sqrt(0.5);
    /* lbs: v0 = (p + R p + t) / 2 = (0.5, 0.5, 1), normal (1,1,0)/sqrt2.
     * dqs: the blend of identity and the 90 degree turn is a 45 degree turn, and the blended
     * translation's vector part over |b_r|^2 is (0, 0, 1): v0 = (h, h, 1). */
    const double expect_p[2][9] = {{0.5, 0.5, 1, -1, 0, 2, 0.5, 0, 0.25},
                                   {h, h, 1, -1, 0, 2, 0.5, 0, 0.25}};
    const double expect_n[9] = {h, h, 0, 0, 0, 1, 0, 1, 0};
    for (int b = 0; b < 2; ++b) {
        for (int s = 0; s < 4; ++s) {
            skin_host host;
            skin_host_init(&host, SKIN_SPLIT_SERIAL);
            void* inst = skin_prepare(&host, g_backends[b], &rig, skin_simd_names[s], true);
            if (!inst) continue;
            skin_set_pose(g_backends[b], inst, 2, skinning);
            assert_int_equal(g_backends[b]->step(inst, 1.0f / 60.0f), SINEW_OK);
            float p[9], n[9];
            skin_read(g_backends[b], inst, 3, p, n);
            for (int i = 0; i < 9; ++i) {
                assert_near(p[i], expect_p[b][i], 1e-6);
                assert_near(n[i], expect_n[i], 1e-6);
            }
            assert_true(host.calls >= 1); /* the vertices went through the job system */
            assert_int_equal(host.log.count[SINEW_LOG_ERROR], 0);
            g_backends[b]->destroy(inst);
        }
    }
    skin_rig_free(&rig);
}

/* +170 and -170 degrees about z have quaternions in opposite hemispheres (w = cos 85 > 0 for
 * both, dot = cos 170 < 0). Blended half and half with antipodality handled, dqs turns by 180
 * degrees; blending the raw quaternions would not turn at all. */
static void test_dqs_antipodal_rotations(void** state)
{
    (void)state;
    skin_rig rig;
    skin_rig_alloc(&rig, 1, 2, 4);
    rig.positions[0] = 1;
    rig.normals[0] = 1;
    rig.joints[0] = 0;
    rig.weights[0] = 0.5f;
    rig.joints[1] = 1;
    rig.weights[1] = 0.5f;
    float skinning[32];
    const double a = 170.0 * SKIN_PI / 180.0;
    skin_mat_rotation(skinning, 0, 0, 1, a, NULL);
    skin_mat_rotation(skinning + 16, 0, 0, 1, -a, NULL);
    for (int s = 0; s < 4; ++s) {
        skin_host host;
        skin_host_init(&host, SKIN_SPLIT_SERIAL);
        void* inst = skin_prepare(&host, &sinew_backend_dqs, &rig, skin_simd_names[s], true);
        if (!inst) continue;
        skin_set_pose(&sinew_backend_dqs, inst, 2, skinning);
        assert_int_equal(sinew_backend_dqs.step(inst, 0.01f), SINEW_OK);
        float p[3], n[3];
        skin_read(&sinew_backend_dqs, inst, 1, p, n);
        assert_near(p[0], -1.0, 1e-5);
        assert_near(p[1], 0.0, 1e-5);
        assert_near(n[0], -1.0, 1e-5);
        sinew_backend_dqs.destroy(inst);
    }
    skin_rig_free(&rig);
}

/* At the kernel level: influences q and -q (the same transform) add up as q, whichever comes
 * first, on every path. Rows (joint: weight, offsets in floats = joint * 8; joint 1 is -q,
 * joint 2 another transform p):
 *   even vertices: q 0.5, -q 0.5        against  q 1
 *   odd vertices:  -q 0.5, q 0.3, p 0.2 against  q 0.8, p 0.2
 * Without the sign flip the first would blend to zero and the second to 0.2 q + 0.2 p. */
static void test_dqs_q_and_minus_q(void** state)
{
    (void)state;
    sinew_skin_kernel_fn kernels[4] = {sinew_dqs_kernel_scalar, NULL, NULL, NULL};
#if defined(SINEW_SKIN_X86)
    kernels[1] = sinew_dqs_kernel_sse41;
    kernels[2] = sinew_dqs_kernel_avx2;
    kernels[3] = sinew_dqs_kernel_avx512;
#endif
    enum { V = 21 };
    skin_rng rng = {12345};
    float m[16];
    _Alignas(64) float dq[24];
    skin_mat_random(m, &rng, false);
    sinew_dual_quat_from_matrix(m, dq);
    for (int i = 0; i < 8; ++i) dq[8 + i] = -dq[i];
    skin_mat_random(m, &rng, false);
    sinew_dual_quat_from_matrix(m, dq + 16);
    _Alignas(64) float rest[8 * V];
    for (int v = 0; v < V; ++v) {
        for (int c = 0; c < 3; ++c) {
            rest[8 * v + c] = (float)skin_rand_range(&rng, -1, 1);
            rest[8 * v + 4 + c] = c == v % 3 ? 1.0f : 0.0f;
        }
        rest[8 * v + 3] = 1.0f;
        rest[8 * v + 7] = 0.0f;
    }
    uint32_t ref_o[4 * V] = {0}, mixed_o[4 * V] = {0};
    float ref_w[4 * V] = {0}, mixed_w[4 * V] = {0};
    for (int v = 0; v < V; ++v) {
        uint32_t* ro = ref_o + 4 * v;
        uint32_t* mo = mixed_o + 4 * v;
        float* rw = ref_w + 4 * v;
        float* mw = mixed_w + 4 * v;
        if (v % 2 == 0) {
            rw[0] = 1.0f;
            mo[0] = 0;
            mw[0] = 0.5f;
            mo[1] = 8;
            mw[1] = 0.5f;
        } else {
            ro[0] = 0;
            rw[0] = 0.8f;
            ro[1] = 16;
            rw[1] = 0.2f;
            mo[0] = 8;
            mw[0] = 0.5f;
            mo[1] = 0;
            mw[1] = 0.3f;
            mo[2] = 16;
            mw[2] = 0.2f;
        }
    }
    float ref_p[3 * V], ref_n[3 * V];
    sinew_skin_job ref = {rest, ref_o, ref_w, 4, dq, ref_p, 12, ref_n, 12};
    sinew_dqs_kernel_scalar(&ref, 0, V);
    for (int s = 0; s < 4; ++s) {
        sinew_simd simd = (sinew_simd)s;
        if (!kernels[s] || !sinew_simd_supported(simd)) {
            print_message("SKIP: dqs kernel %s not available\n", sinew_simd_name(simd));
            continue;
        }
        float p[3 * V], n[3 * V];
        sinew_skin_job mixed = {rest, mixed_o, mixed_w, 4, dq, p, 12, n, 12};
        kernels[s](&mixed, 0, V);
        for (int i = 0; i < 3 * V; ++i) {
            assert_near(p[i], ref_p[i], 2e-6);
            assert_near(n[i], ref_n[i], 2e-6);
        }
    }
}

/* A cylinder along x twisted by 180 degrees about its axis, weights ramping from joint 0 to
 * joint 1 along x: lbs collapses the middle ring onto the axis (the candy wrapper), dqs keeps
 * every vertex at its distance from the axis. */
static void test_twist_candy_wrapper(void** state)
{
    (void)state;
    enum { RING = 16, RINGS = 5, V = RING * RINGS };
    skin_rig rig;
    skin_rig_alloc(&rig, V, 2, 4);
    for (int r = 0; r < RINGS; ++r) {
        float x = (float)(r + 1) / (RINGS + 1); /* 1/6 .. 5/6, the middle ring at 1/2 */
        for (int i = 0; i < RING; ++i) {
            int v = r * RING + i;
            double a = 2 * SKIN_PI * i / RING;
            rig.positions[3 * v] = x;
            rig.positions[3 * v + 1] = (float)cos(a);
            rig.positions[3 * v + 2] = (float)sin(a);
            rig.normals[3 * v + 1] = (float)cos(a);
            rig.normals[3 * v + 2] = (float)sin(a);
            uint32_t heavy = x > 0.5f ? 1u : 0u; /* sorted by decreasing weight */
            rig.joints[4 * v] = heavy;
            rig.weights[4 * v] = heavy ? x : 1 - x;
            rig.joints[4 * v + 1] = 1 - heavy;
            rig.weights[4 * v + 1] = heavy ? 1 - x : x;
        }
    }
    float skinning[32];
    skin_mat_identity(skinning);
    skin_mat_rotation(skinning + 16, 1, 0, 0, SKIN_PI, NULL);
    for (int b = 0; b < 2; ++b) {
        for (int s = 0; s < 4; ++s) {
            skin_host host;
            skin_host_init(&host, SKIN_SPLIT_UNEVEN);
            void* inst = skin_prepare(&host, g_backends[b], &rig, skin_simd_names[s], true);
            if (!inst) continue;
            skin_set_pose(g_backends[b], inst, 2, skinning);
            assert_int_equal(g_backends[b]->step(inst, 0.01f), SINEW_OK);
            float p[3 * V], n[3 * V];
            skin_read(g_backends[b], inst, V, p, n);
            double min_radius = 1e9;
            for (int v = 0; v < V; ++v) {
                double radius = hypot(p[3 * v + 1], p[3 * v + 2]);
                if (radius < min_radius) min_radius = radius;
                assert_near(p[3 * v], rig.positions[3 * v], 1e-6); /* no motion along the axis */
                if (b == 1) assert_near(radius, 1.0, 1e-5);
            }
            if (b == 0) assert_true(min_radius < 1e-6); /* the middle ring collapsed */
            g_backends[b]->destroy(inst);
        }
    }
    skin_rig_free(&rig);
}

/* ---- parameters ---- */

static void expect_prepare_error(const sinew_backend_vtable* vt, const skin_rig* rig,
                                 const sinew_param* params, uint32_t count, const void* next,
                                 sinew_result expected)
{
    skin_host host;
    skin_host_init(&host, SKIN_SPLIT_SERIAL);
    void* inst = (void*)&host; /* must be reset to NULL */
    sinew_result r = vt->prepare(&host.api, &rig->view, params, count, next, &inst);
    if (r != expected)
        fail_msg("%s prepare: result %d, expected %d (log: %s)", vt->name, (int)r, (int)expected,
                 host.log.last);
    assert_null(inst);
    assert_int_equal(host.log.count[SINEW_LOG_ERROR], 1);
    assert_true(strstr(host.log.last, vt->name) != NULL);
}

static void test_parameters(void** state)
{
    (void)state;
    skin_rig rig;
    float skinning[32];
    two_joint_rig(&rig, skinning);
    for (int b = 0; b < 2; ++b) {
        const sinew_backend_vtable* vt = g_backends[b];
        const sinew_param unknown[1] = {{"smooth", "1"}};
        const sinew_param bad_normals[1] = {{"normals", "yes"}};
        const sinew_param bad_simd[1] = {{"simd", "avx1024"}};
        const sinew_param twice[2] = {{"simd", "scalar"}, {"simd", "scalar"}};
        const sinew_param null_value[1] = {{"simd", NULL}};
        const sinew_param null_key[1] = {{NULL, "1"}};
        expect_prepare_error(vt, &rig, unknown, 1, NULL, SINEW_ERROR_PARAMETER);
        expect_prepare_error(vt, &rig, bad_normals, 1, NULL, SINEW_ERROR_PARAMETER);
        expect_prepare_error(vt, &rig, bad_simd, 1, NULL, SINEW_ERROR_PARAMETER);
        expect_prepare_error(vt, &rig, twice, 2, NULL, SINEW_ERROR_PARAMETER);
        expect_prepare_error(vt, &rig, null_value, 1, NULL, SINEW_ERROR_PARAMETER);
        expect_prepare_error(vt, &rig, null_key, 1, NULL, SINEW_ERROR_PARAMETER);
        expect_prepare_error(vt, &rig, NULL, 2, NULL, SINEW_ERROR_INVALID_ARGUMENT);
        /* typed parameters in the chain: read like the text ones; another extension refused */
        sinew_ext_header ext = {(uint32_t)sizeof ext, SINEW_EXT_CUDA_OUTPUT, NULL};
        expect_prepare_error(vt, &rig, NULL, 0, &ext, SINEW_ERROR_UNSUPPORTED);
        const sinew_param_value typed_bad[1] = {{"normals", 2.0, NULL}};
        sinew_backend_params_ext typed = SINEW_BACKEND_PARAMS_EXT_INIT;
        typed.values = typed_bad;
        typed.count = 1;
        expect_prepare_error(vt, &rig, NULL, 0, &typed, SINEW_ERROR_PARAMETER);
        const sinew_param_value typed_twice[1] = {{"normals", 0.0, NULL}};
        const sinew_param normals_text[1] = {{"normals", "0"}};
        typed.values = typed_twice;
        expect_prepare_error(vt, &rig, normals_text, 1, &typed, SINEW_ERROR_PARAMETER);
        /* Every instruction set: accepted exactly when this CPU has it. */
        for (int s = 0; s < 4; ++s) {
            const sinew_param p[1] = {{"simd", skin_simd_names[s]}};
            if (skin_simd_available(skin_simd_names[s])) {
                skin_host host;
                skin_host_init(&host, SKIN_SPLIT_SERIAL);
                void* inst = NULL;
                assert_int_equal(vt->prepare(&host.api, &rig.view, p, 1, NULL, &inst), SINEW_OK);
                vt->destroy(inst);
            } else {
                expect_prepare_error(vt, &rig, p, 1, NULL, SINEW_ERROR_BACKEND_UNAVAILABLE);
            }
        }
        /* Defaults and explicit defaults. */
        const sinew_param defaults[2] = {{"simd", "auto"}, {"normals", "1"}};
        skin_host host;
        skin_host_init(&host, SKIN_SPLIT_SERIAL);
        void* inst = NULL;
        assert_int_equal(vt->prepare(&host.api, &rig.view, defaults, 2, NULL, &inst), SINEW_OK);
        vt->destroy(inst);
        assert_int_equal(vt->prepare(&host.api, &rig.view, NULL, 0, NULL, &inst), SINEW_OK);
        vt->destroy(inst);
        assert_int_equal(vt->probe(&host.api), SINEW_OK);
        assert_int_equal(host.log.count[SINEW_LOG_ERROR], 0);
    }
    skin_rig_free(&rig);
}

/* ---- validation ---- */

static void test_rig_validation(void** state)
{
    (void)state;
    for (int b = 0; b < 2; ++b) {
        const sinew_backend_vtable* vt = g_backends[b];
        skin_rig rig;
        float skinning[32];
        two_joint_rig(&rig, skinning);
        rig.joints[1] = 2; /* joint out of range */
        expect_prepare_error(vt, &rig, NULL, 0, NULL, SINEW_ERROR_JOINT_INDEX);
        rig.joints[1] = 1;
        rig.weights[1] = -0.5f;
        expect_prepare_error(vt, &rig, NULL, 0, NULL, SINEW_ERROR_WEIGHTS);
        rig.weights[1] = NAN;
        expect_prepare_error(vt, &rig, NULL, 0, NULL, SINEW_ERROR_NONFINITE);
        rig.weights[1] = 0.5f;
        rig.weights[8] = 0.0f; /* a vertex without weight */
        expect_prepare_error(vt, &rig, NULL, 0, NULL, SINEW_ERROR_WEIGHTS);
        rig.weights[8] = 1.0f;
        rig.positions[4] = INFINITY;
        expect_prepare_error(vt, &rig, NULL, 0, NULL, SINEW_ERROR_NONFINITE);
        rig.positions[4] = 1.0f;
        rig.view.render_mesh.normals = NULL;
        expect_prepare_error(vt, &rig, NULL, 0, NULL, SINEW_ERROR_INVALID_ARGUMENT);
        rig.view.render_mesh.normals = rig.normals;
        rig.view.render_mesh.vertex_count = 0;
        expect_prepare_error(vt, &rig, NULL, 0, NULL, SINEW_ERROR_EMPTY_MESH);
        rig.view.render_mesh.vertex_count = 3;
        rig.view.joint_count = 0;
        expect_prepare_error(vt, &rig, NULL, 0, NULL, SINEW_ERROR_JOINT_COUNT);
        rig.view.joint_count = 2;
        rig.view.padded_width = 0;
        expect_prepare_error(vt, &rig, NULL, 0, NULL, SINEW_ERROR_WEIGHTS);
        rig.view.padded_width = 4;
        rig.view.struct_size = 8;
        expect_prepare_error(vt, &rig, NULL, 0, NULL, SINEW_ERROR_STRUCT_SIZE);
        rig.view.struct_size = (uint32_t)sizeof(sinew_rig_view);

        skin_host host;
        skin_host_init(&host, SKIN_SPLIT_SERIAL);
        void* inst = (void*)&host;
        assert_int_equal(vt->prepare(NULL, &rig.view, NULL, 0, NULL, &inst),
                         SINEW_ERROR_INVALID_ARGUMENT);
        assert_int_equal(vt->prepare(&host.api, NULL, NULL, 0, NULL, &inst),
                         SINEW_ERROR_INVALID_ARGUMENT);
        assert_null(inst);
        assert_int_equal(vt->prepare(&host.api, &rig.view, NULL, 0, NULL, NULL),
                         SINEW_ERROR_INVALID_ARGUMENT);
        assert_int_equal(host.log.count[SINEW_LOG_ERROR], 2);
        assert_int_equal(vt->probe(NULL), SINEW_ERROR_INVALID_ARGUMENT);
        skin_rig_free(&rig);
    }
}

static void expect_error(skin_host* host, sinew_result got, sinew_result expected, const char* what)
{
    if (got != expected)
        fail_msg("%s: result %d, expected %d (log: %s)", what, (int)got, (int)expected,
                 host->log.last);
    assert_int_equal(host->log.count[SINEW_LOG_ERROR], 1);
    sinew_test_log_reset(&host->log);
}

static void test_call_validation(void** state)
{
    (void)state;
    skin_rig rig;
    float skinning[32];
    two_joint_rig(&rig, skinning);
    for (int b = 0; b < 2; ++b) {
        const sinew_backend_vtable* vt = g_backends[b];
        float p[9], n[9];
        sinew_pose_view pose = {(uint32_t)sizeof pose, 2, skinning, skinning, 0u};
        sinew_output_view out = {(uint32_t)sizeof out, 3, p, 12, n, 12, NULL};
        sinew_state_view st = {(uint32_t)sizeof st, 3, p, NULL};
        /* A NULL or foreign instance is refused without a crash (and without a host to log). */
        assert_int_equal(vt->set_pose(NULL, &pose), SINEW_ERROR_INVALID_ARGUMENT);
        assert_int_equal(vt->step(NULL, 0.1f), SINEW_ERROR_INVALID_ARGUMENT);
        assert_int_equal(vt->read_output(NULL, &out), SINEW_ERROR_INVALID_ARGUMENT);
        assert_int_equal(vt->bind_output(NULL, &out), SINEW_ERROR_INVALID_ARGUMENT);
        assert_int_equal(vt->get_state(NULL, &st), SINEW_ERROR_INVALID_ARGUMENT);
        assert_int_equal(vt->set_state(NULL, &st), SINEW_ERROR_INVALID_ARGUMENT);
        uint32_t foreign[64] = {0};
        assert_int_equal(vt->step(foreign, 0.1f), SINEW_ERROR_INVALID_ARGUMENT);
        vt->destroy(NULL);
        vt->destroy(foreign);

        skin_host host;
        skin_host_init(&host, SKIN_SPLIT_SERIAL);
        void* inst = skin_prepare(&host, vt, &rig, "scalar", true);
        float first[32];
        skin_mat_identity(first);
        skin_mat_rotation(first + 16, 0, 1, 0, 0.3, NULL);
        skin_set_pose(vt, inst, 2, first);

        /* Refused poses leave the previous one in place. */
        sinew_pose_view bad = pose;
        expect_error(&host, vt->set_pose(inst, NULL), SINEW_ERROR_INVALID_ARGUMENT, "NULL pose");
        bad.struct_size = 4;
        expect_error(&host, vt->set_pose(inst, &bad), SINEW_ERROR_STRUCT_SIZE, "pose size");
        bad = pose;
        bad.joint_count = 3;
        expect_error(&host, vt->set_pose(inst, &bad), SINEW_ERROR_JOINT_COUNT, "pose joints");
        bad = pose;
        bad.skinning_matrices = NULL;
        expect_error(&host, vt->set_pose(inst, &bad), SINEW_ERROR_INVALID_ARGUMENT, "no matrices");
        float nan_pose[32];
        memcpy(nan_pose, skinning, sizeof nan_pose);
        nan_pose[16 + 13] = NAN;
        bad = pose;
        bad.skinning_matrices = nan_pose;
        expect_error(&host, vt->set_pose(inst, &bad), SINEW_ERROR_NONFINITE, "nan pose");
        assert_int_equal(vt->step(inst, 0.1f), SINEW_OK);
        float q[9], e[9];
        skin_read(vt, inst, 3, q, NULL);
        void* ref = skin_prepare(&host, vt, &rig, "scalar", true);
        skin_set_pose(vt, ref, 2, first);
        assert_int_equal(vt->step(ref, 0.1f), SINEW_OK);
        skin_read(vt, ref, 3, e, NULL);
        assert_memory_equal(q, e, sizeof q);
        vt->destroy(ref);

        /* dt */
        expect_error(&host, vt->step(inst, NAN), SINEW_ERROR_NONFINITE, "nan dt");
        expect_error(&host, vt->step(inst, INFINITY), SINEW_ERROR_NONFINITE, "inf dt");
        expect_error(&host, vt->step(inst, -0.1f), SINEW_ERROR_INVALID_ARGUMENT, "negative dt");
        assert_int_equal(vt->step(inst, 0.0f), SINEW_OK);

        /* Outputs, for read and bind alike; unbinding (NULL) is always fine. */
        expect_error(&host, vt->read_output(inst, NULL), SINEW_ERROR_INVALID_ARGUMENT, "NULL out");
        assert_int_equal(vt->bind_output(inst, NULL), SINEW_OK);
        sinew_result (*const fns[2])(void*, const sinew_output_view*) = {vt->read_output,
                                                                         vt->bind_output};
        _Alignas(16) char raw[64];
        sinew_ext_header ext = {(uint32_t)sizeof ext, SINEW_EXT_VULKAN_OUTPUT, NULL};
        for (int f = 0; f < 2; ++f) {
            sinew_output_view o = out;
            o.struct_size = 8;
            expect_error(&host, fns[f](inst, &o), SINEW_ERROR_STRUCT_SIZE, "output size");
            o = out;
            o.vertex_count = 2;
            expect_error(&host, fns[f](inst, &o), SINEW_ERROR_OUTPUT_BINDING, "capacity");
            o = out;
            o.positions = NULL;
            expect_error(&host, fns[f](inst, &o), SINEW_ERROR_OUTPUT_BINDING, "no positions");
            o = out;
            o.position_stride = 8;
            expect_error(&host, fns[f](inst, &o), SINEW_ERROR_OUTPUT_BINDING, "stride 8");
            o = out;
            o.normal_stride = 14;
            expect_error(&host, fns[f](inst, &o), SINEW_ERROR_OUTPUT_BINDING, "stride 14");
            o = out;
            o.positions = (float*)(void*)(raw + 2);
            o.vertex_count = 3;
            expect_error(&host, fns[f](inst, &o), SINEW_ERROR_OUTPUT_BINDING, "misaligned");
            o = out;
            o.normals = o.positions;
            expect_error(&host, fns[f](inst, &o), SINEW_ERROR_OUTPUT_BINDING, "same array");
            o = out;
            o.next = &ext;
            expect_error(&host, fns[f](inst, &o), SINEW_ERROR_UNSUPPORTED, "extension");
        }

        /* State views. */
        sinew_state_view s2 = st;
        expect_error(&host, vt->get_state(inst, NULL), SINEW_ERROR_INVALID_ARGUMENT, "NULL state");
        s2.struct_size = 4;
        expect_error(&host, vt->get_state(inst, &s2), SINEW_ERROR_STRUCT_SIZE, "state size");
        s2 = st;
        s2.vertex_count = 2;
        expect_error(&host, vt->get_state(inst, &s2), SINEW_ERROR_INVALID_ARGUMENT, "state count");
        expect_error(&host, vt->set_state(inst, &s2), SINEW_ERROR_INVALID_ARGUMENT, "state count");
        s2 = st;
        s2.positions = NULL;
        expect_error(&host, vt->set_state(inst, &s2), SINEW_ERROR_INVALID_ARGUMENT, "no positions");
        float nan_state[9] = {0, 0, 0, NAN, 0, 0, 0, 0, 0};
        s2 = st;
        s2.positions = nan_state;
        expect_error(&host, vt->set_state(inst, &s2), SINEW_ERROR_NONFINITE, "nan state");
        /* The refused state changed nothing. */
        skin_read(vt, inst, 3, e, NULL);
        assert_memory_equal(q, e, sizeof q);
        assert_int_equal(host.log.total, 0);
        vt->destroy(inst);
    }
    skin_rig_free(&rig);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_computed),     cmocka_unit_test(test_dqs_antipodal_rotations),
        cmocka_unit_test(test_dqs_q_and_minus_q), cmocka_unit_test(test_twist_candy_wrapper),
        cmocka_unit_test(test_parameters),        cmocka_unit_test(test_rig_validation),
        cmocka_unit_test(test_call_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
