/* Rigs at the edge of what the tissue model of ps and fps (backends/ps, the sinew_tissue
 * library) accepts: one joint on the skin, a simulation mesh away from the render mesh, and
 * parts of the skin that no bone reaches. Each either works as documented in
 * backends/ps/README.md ("Contract") or is refused with one clear error. Run through the
 * function tables of the backends on that model (ps, fps, pbd) without the runtime.
 * SPDX-License-Identifier: MIT */
#include "ps_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin_backends.h"

static const sinew_backend_vtable* const backends[] = {
    &sinew_backend_ps, &sinew_backend_fps,
#if defined(SINEW_HAVE_PBD)
    &sinew_backend_pbd,
#endif
};
enum { BACKEND_COUNT = sizeof backends / sizeof backends[0] };

/* Steps `inst` `steps` times under the one pose `skinning` and reads the render positions. */
static void run_pose(const sinew_backend_vtable* vt, void* inst, uint32_t joints,
                     const float* skinning, int steps, float* out, uint32_t n)
{
    sinew_pose_view pose = {(uint32_t)sizeof(sinew_pose_view), joints, skinning, skinning, 0u};
    assert_int_equal(vt->set_pose(inst, &pose), SINEW_OK);
    for (int i = 0; i < steps; ++i) assert_int_equal(vt->step(inst, 1.0f / 60.0f), SINEW_OK);
    sinew_output_view ov = {(uint32_t)sizeof(sinew_output_view), n, out, 0, NULL, 0, NULL};
    assert_int_equal(vt->read_output(inst, &ov), SINEW_OK);
}

/* Largest distance between out and the rest positions moved by the affine T. */
static float rigid_error(const float* T, const float* rest, const float* out, uint32_t n)
{
    float worst = 0.0f;
    for (uint32_t v = 0; v < n; ++v) {
        const float* p = rest + 3u * v;
        for (int r = 0; r < 3; ++r) {
            float e = T[r] * p[0] + T[4 + r] * p[1] + T[8 + r] * p[2] + T[12 + r];
            worst = fmaxf(worst, fabsf(out[3u * v + (uint32_t)r] - e));
        }
    }
    return worst;
}

/* One joint placed on a skin vertex: its sphere has no room (radius 0 by the 75 % rule of
 * Sec. 3.1). The whole skin still follows the joint's transform. */
static void test_one_joint_on_the_skin(void** state)
{
    (void)state;
    ps_test_rig rig;
    ps_test_rig_load(&rig, sinew_test_data_path("characters/cylinder/cylinder.ini"));
    sinew_rig_view v = rig.view;
    const float* on = v.render_mesh.positions;
    int32_t parent = -1;
    float bind[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, on[0], on[1], on[2], 1};
    v.joint_count = 1;
    v.parents = &parent;
    v.bind_matrices = bind;
    v.weight_offsets = NULL;
    v.weight_joints = NULL;
    v.weight_values = NULL;
    /* a quarter turn about z and a translation */
    const float T[16] = {0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0, 2.25f, 2.0f, -0.25f, 1};
    uint32_t n = v.render_mesh.vertex_count;
    float* out = malloc(sizeof(float) * 3u * n);
    for (int b = 0; b < BACKEND_COUNT; ++b) {
        ps_test_host host;
        ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
        void* inst = NULL;
        assert_int_equal(backends[b]->prepare(&host.api, &v, NULL, 0, NULL, &inst), SINEW_OK);
        run_pose(backends[b], inst, 1, T, 120, out, n);
        float e = rigid_error(T, v.render_mesh.positions, out, n);
        print_message("%s: one joint on the skin, largest distance from the moved rest mesh %g\n",
                      backends[b]->name, e);
        assert_true(e < 1e-3f);
        backends[b]->destroy(inst);
    }
    free(out);
    ps_test_rig_free(&rig);
}

/* A simulation mesh beside the render mesh (the cylinder moved sideways by three of its
 * radii) is refused at preparation: its upsampling offsets would carry the render mesh through
 * the body. The same mesh in place is accepted. */
static void test_simulation_mesh_away(void** state)
{
    (void)state;
    ps_test_rig rig;
    ps_test_rig_load(&rig, sinew_test_data_path("characters/cylinder/cylinder.ini"));
    sinew_rig_view v = rig.view;
    uint32_t n = v.render_mesh.vertex_count;
    float* moved = malloc(sizeof(float) * 3u * n);
    for (int shift = 0; shift < 2; ++shift) {
        for (uint32_t k = 0; k < n; ++k) {
            memcpy(moved + 3u * k, v.render_mesh.positions + 3u * k, 3u * sizeof(float));
            moved[3u * k + 1] += shift ? 3.0f : 0.0f;
        }
        v.simulation_mesh = v.render_mesh;
        v.simulation_mesh.positions = moved;
        for (int b = 0; b < BACKEND_COUNT; ++b) {
            ps_test_host host;
            ps_test_host_init(&host, SINEW_LOG_ERROR, 0);
            void* inst = NULL;
            sinew_result r = backends[b]->prepare(&host.api, &v, NULL, 0, NULL, &inst);
            assert_int_equal(r, shift ? SINEW_ERROR_GEOMETRY : SINEW_OK);
            if (shift) {
                assert_null(inst);
                assert_non_null(strstr(host.log.last, "does not cover the render mesh"));
            } else {
                backends[b]->destroy(inst);
            }
        }
    }
    free(moved);
    ps_test_rig_free(&rig);
}

/* Counts the warnings that a part of the skin has no bone inside. */
static int pinned_warnings;
static void count_pinned(sinew_log_level level, const char* message, void* user)
{
    (void)user;
    if (level == SINEW_LOG_WARNING && strstr(message, "have no bone inside")) ++pinned_warnings;
}

/* The cylinder plus a parallel copy of it beside it, a separate part with no bone inside (a
 * hand-made mesh without weights, so foot points may lie on any bone). The copy follows the
 * bone nearest to its centre rigidly, with a warning at preparation; the cylinder itself is
 * simulated as before. */
static void test_part_without_bone(void** state)
{
    (void)state;
    ps_test_rig rig;
    ps_test_rig_load(&rig, sinew_test_data_path("characters/cylinder/cylinder.ini"));
    sinew_rig_view v = rig.view;
    uint32_t n0 = v.render_mesh.vertex_count, t0 = v.render_mesh.triangle_count;
    uint32_t n = 2u * n0;
    float* pos = malloc(sizeof(float) * 3u * n);
    float* nrm = malloc(sizeof(float) * 3u * n);
    uint32_t* idx = malloc(sizeof(uint32_t) * 6u * t0);
    memcpy(pos, v.render_mesh.positions, sizeof(float) * 3u * n0);
    memcpy(nrm, v.render_mesh.normals, sizeof(float) * 3u * n0);
    memcpy(pos + 3u * n0, pos, sizeof(float) * 3u * n0);
    memcpy(nrm + 3u * n0, nrm, sizeof(float) * 3u * n0);
    for (uint32_t k = 0; k < n0; ++k) pos[3u * (n0 + k) + 1] += 3.5f;
    memcpy(idx, v.render_mesh.indices, sizeof(uint32_t) * 3u * t0);
    for (uint32_t k = 0; k < 3u * t0; ++k) idx[3u * t0 + k] = v.render_mesh.indices[k] + n0;
    v.render_mesh.vertex_count = n;
    v.render_mesh.triangle_count = 2u * t0;
    v.render_mesh.positions = pos;
    v.render_mesh.normals = nrm;
    v.render_mesh.indices = idx;
    v.render_mesh.submesh_count = 0;
    v.render_mesh.submesh_first_triangle = NULL;
    v.weight_offsets = NULL;
    v.weight_joints = NULL;
    v.weight_values = NULL;
    uint32_t jn = v.joint_count;
    float* skinning = malloc(sizeof(float) * 16u * jn);
    float* out = malloc(sizeof(float) * 3u * n);
    ps_test_skinning(&rig, 2, 60.0f, 20.0f, skinning);
    for (int b = 0; b < BACKEND_COUNT; ++b) {
        ps_test_host host;
        ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
        host.api.logger.func = count_pinned;
        pinned_warnings = 0;
        void* inst = NULL;
        assert_int_equal(backends[b]->prepare(&host.api, &v, NULL, 0, NULL, &inst), SINEW_OK);
        assert_int_equal(pinned_warnings, 1);
        run_pose(backends[b], inst, jn, skinning, 60, out, n);
        /* rigid: the copy keeps every distance between its vertices */
        float worst = 0.0f;
        for (uint32_t k = 1; k < n0; ++k) {
            const float* a = out + 3u * n0;
            const float* p = out + 3u * (n0 + k);
            const float* ra = pos + 3u * n0;
            const float* rp = pos + 3u * (n0 + k);
            float d = sqrtf((p[0] - a[0]) * (p[0] - a[0]) + (p[1] - a[1]) * (p[1] - a[1]) +
                            (p[2] - a[2]) * (p[2] - a[2]));
            float d0 = sqrtf((rp[0] - ra[0]) * (rp[0] - ra[0]) + (rp[1] - ra[1]) * (rp[1] - ra[1]) +
                             (rp[2] - ra[2]) * (rp[2] - ra[2]));
            worst = fmaxf(worst, fabsf(d - d0));
        }
        /* and it moved with a bone: its first vertex is that bone's transform of its rest */
        float moved = 0.0f;
        for (uint32_t j = 0; j < jn; ++j) {
            float e = rigid_error(skinning + 16u * j, pos + 3u * n0, out + 3u * n0, n0);
            moved = j == 0 || e < moved ? e : moved;
        }
        print_message("%s: part without a bone, distances kept within %g, %g from its nearest "
                      "bone's motion\n", backends[b]->name, worst, moved);
        assert_true(worst < 1e-3f);
        assert_true(moved < 1e-3f);
        for (size_t k = 0; k < 3u * n0; ++k) assert_true(isfinite(out[k]));
        backends[b]->destroy(inst);
    }
    free(skinning);
    free(out);
    free(pos);
    free(nrm);
    free(idx);
    ps_test_rig_free(&rig);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_joint_on_the_skin),
        cmocka_unit_test(test_simulation_mesh_away),
        cmocka_unit_test(test_part_without_bone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
