/* Output and state of lbs and dqs: the rest mesh before any pose, get_state and set_state (a
 * backend swap continues from the shape it is given), bound outputs with interleaved or padded
 * strides on every path (nothing outside the caller's elements is touched), and read_output
 * after a bound step. SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin_backends.h"
#include "skin_fixture.h"

enum { V = 37, J = 9 };

static const sinew_backend_vtable* const g_backends[2] = {&sinew_backend_lbs, &sinew_backend_dqs};

static void random_pose(float* skinning, uint64_t seed)
{
    skin_rng rng = {seed};
    for (int j = 0; j < J; ++j) skin_mat_random(skinning + 16 * j, &rng, false);
}

/* The packed output of a fresh instance stepped once with `skinning`. */
static void reference_output(const sinew_backend_vtable* vt, const skin_rig* rig, const char* simd,
                             const float* skinning, float* p, float* n)
{
    skin_host host;
    skin_host_init(&host, SKIN_SPLIT_SERIAL);
    void* inst = skin_prepare(&host, vt, rig, simd, true);
    assert_non_null(inst);
    skin_set_pose(vt, inst, J, skinning);
    assert_int_equal(vt->step(inst, 0.02f), SINEW_OK);
    skin_read(vt, inst, V, p, n);
    vt->destroy(inst);
}

static void test_rest_before_pose(void** state)
{
    (void)state;
    skin_rig rig;
    skin_rig_random(&rig, V, J, 4, 5);
    float skinning[16 * J];
    random_pose(skinning, 6);
    for (int b = 0; b < 2; ++b) {
        const sinew_backend_vtable* vt = g_backends[b];
        skin_host host;
        skin_host_init(&host, SKIN_SPLIT_UNEVEN);
        void* inst = skin_prepare(&host, vt, &rig, "auto", true);
        float p[3 * V], n[3 * V], vel[3 * V];
        skin_read(vt, inst, V, p, n);
        assert_memory_equal(p, rig.positions, sizeof p);
        assert_memory_equal(n, rig.normals, sizeof n);
        /* A step without a pose keeps the rest mesh; a pose takes effect at the next step. */
        assert_int_equal(vt->step(inst, 0.02f), SINEW_OK);
        skin_read(vt, inst, V, p, n);
        assert_memory_equal(p, rig.positions, sizeof p);
        skin_set_pose(vt, inst, J, skinning);
        skin_read(vt, inst, V, p, n);
        assert_memory_equal(p, rig.positions, sizeof p);
        assert_int_equal(vt->step(inst, 0.02f), SINEW_OK);
        float ep[3 * V], en[3 * V];
        reference_output(vt, &rig, "auto", skinning, ep, en);
        skin_read(vt, inst, V, p, n);
        assert_memory_equal(p, ep, sizeof p);
        assert_memory_equal(n, en, sizeof n);
        /* get_state: the current positions and zero velocities. */
        float sp[3 * V];
        for (int i = 0; i < 3 * V; ++i) vel[i] = 123.0f;
        sinew_state_view st = {(uint32_t)sizeof st, V, sp, vel};
        assert_int_equal(vt->get_state(inst, &st), SINEW_OK);
        assert_memory_equal(sp, ep, sizeof sp);
        for (int i = 0; i < 3 * V; ++i) assert_true(vel[i] == 0.0f);
        assert_int_equal(host.log.total, 0);
        vt->destroy(inst);
    }
    skin_rig_free(&rig);
}

/* set_state makes the given positions current until the next step; the normals are the rest
 * normals skinned with the latest pose (given before or after set_state), or the rest normals
 * without a pose. This is what a backend swap relies on. */
static void test_set_state(void** state)
{
    (void)state;
    skin_rig rig;
    skin_rig_random(&rig, V, J, 6, 7);
    float pose_a[16 * J], pose_b[16 * J];
    random_pose(pose_a, 8);
    random_pose(pose_b, 9);
    float custom[3 * V];
    for (int i = 0; i < 3 * V; ++i) custom[i] = 0.25f * (float)i - 3.0f;
    for (int b = 0; b < 2; ++b) {
        const sinew_backend_vtable* vt = g_backends[b];
        float ap[3 * V], an[3 * V], bp[3 * V], bn[3 * V], p[3 * V], n[3 * V];
        reference_output(vt, &rig, "auto", pose_a, ap, an);
        reference_output(vt, &rig, "auto", pose_b, bp, bn);
        skin_host host;
        skin_host_init(&host, SKIN_SPLIT_UNEVEN);
        sinew_state_view st = {(uint32_t)sizeof st, V, custom, NULL};

        /* No pose yet: rest normals. */
        void* inst = skin_prepare(&host, vt, &rig, "auto", true);
        assert_int_equal(vt->set_state(inst, &st), SINEW_OK);
        skin_read(vt, inst, V, p, n);
        assert_memory_equal(p, custom, sizeof p);
        assert_memory_equal(n, rig.normals, sizeof n);
        /* The swap order of the runtime: state first, then the pose: normals follow it, the
         * positions stay until the next step. */
        skin_set_pose(vt, inst, J, pose_a);
        skin_read(vt, inst, V, p, n);
        assert_memory_equal(p, custom, sizeof p);
        assert_memory_equal(n, an, sizeof n);
        float got[3 * V];
        sinew_state_view out = {(uint32_t)sizeof out, V, got, NULL};
        assert_int_equal(vt->get_state(inst, &out), SINEW_OK);
        assert_memory_equal(got, custom, sizeof got);
        assert_int_equal(vt->step(inst, 0.02f), SINEW_OK);
        skin_read(vt, inst, V, p, n);
        assert_memory_equal(p, ap, sizeof p);
        assert_memory_equal(n, an, sizeof n);
        /* Pose first, then state: normals of the latest pose, even before it was stepped. */
        skin_set_pose(vt, inst, J, pose_b);
        assert_int_equal(vt->set_state(inst, &st), SINEW_OK);
        skin_read(vt, inst, V, p, n);
        assert_memory_equal(p, custom, sizeof p);
        assert_memory_equal(n, bn, sizeof n);
        vt->destroy(inst);

        /* normals=0: always the rest normals. */
        inst = skin_prepare(&host, vt, &rig, "auto", false);
        skin_set_pose(vt, inst, J, pose_a);
        assert_int_equal(vt->set_state(inst, &st), SINEW_OK);
        skin_read(vt, inst, V, p, n);
        assert_memory_equal(n, rig.normals, sizeof n);
        assert_int_equal(vt->step(inst, 0.02f), SINEW_OK);
        skin_read(vt, inst, V, p, n);
        assert_memory_equal(p, ap, sizeof p);
        assert_memory_equal(n, rig.normals, sizeof n);
        vt->destroy(inst);
        assert_int_equal(host.log.total, 0);
    }
    skin_rig_free(&rig);
}

#define SENTINEL 1234.5f

/* Binds an output of `stride` bytes per vertex (positions at float 0, normals at float 3 of
 * each record, or a separate packed normal array when stride is 12), steps, and checks every
 * written element against the packed reference and every other float against the sentinel. */
static void check_bound(const sinew_backend_vtable* vt, const skin_rig* rig, const char* simd,
                        size_t stride, bool with_normals, const float* skinning, const float* ep,
                        const float* en)
{
    const size_t per = stride / 4, guard = 8;
    size_t total = per * V + guard;
    float* buf = malloc(total * sizeof(float));
    float* nbuf = malloc((3 * V + guard) * sizeof(float));
    assert_non_null(buf);
    assert_non_null(nbuf);
    for (size_t i = 0; i < total; ++i) buf[i] = SENTINEL;
    for (size_t i = 0; i < 3 * V + guard; ++i) nbuf[i] = SENTINEL;
    float* normals = !with_normals ? NULL : stride == 12 ? nbuf : buf + 3;
    size_t nstride = stride == 12 ? 12 : stride;

    skin_host host;
    skin_host_init(&host, SKIN_SPLIT_UNEVEN);
    void* inst = skin_prepare(&host, vt, rig, simd, true);
    assert_non_null(inst);
    sinew_output_view out = {(uint32_t)sizeof out, V, buf, stride, normals, nstride, NULL};
    assert_int_equal(vt->bind_output(inst, &out), SINEW_OK);
    skin_set_pose(vt, inst, J, skinning);
    assert_int_equal(vt->step(inst, 0.02f), SINEW_OK);
    for (size_t v = 0; v < V; ++v) {
        assert_memory_equal(buf + per * v, ep + 3 * v, 12);
        if (with_normals && stride != 12) assert_memory_equal(buf + per * v + 3, en + 3 * v, 12);
        for (size_t f = (with_normals && stride != 12) ? 6 : 3; f < per; ++f)
            assert_true(buf[per * v + f] == SENTINEL);
    }
    for (size_t i = per * V; i < total; ++i) assert_true(buf[i] == SENTINEL);
    if (with_normals && stride == 12) assert_memory_equal(nbuf, en, 3 * V * sizeof(float));
    for (size_t i = 3 * V; i < 3 * V + guard; ++i) assert_true(nbuf[i] == SENTINEL);
    if (!with_normals || stride != 12)
        for (size_t i = 0; i < 3 * V; ++i) assert_true(nbuf[i] == SENTINEL);

    /* read_output after a bound step: the latest shape, bit for bit. */
    float p[3 * V], n[3 * V];
    skin_read(vt, inst, V, p, n);
    assert_memory_equal(p, ep, sizeof p);
    assert_memory_equal(n, en, sizeof n);
    /* Strided read_output into another interleaved layout. */
    float inter[8 * V];
    sinew_output_view rd = {(uint32_t)sizeof rd, V, inter, 32, inter + 4, 32, NULL};
    for (int i = 0; i < 8 * V; ++i) inter[i] = SENTINEL;
    assert_int_equal(vt->read_output(inst, &rd), SINEW_OK);
    for (int v = 0; v < V; ++v) {
        assert_memory_equal(inter + 8 * v, ep + 3 * v, 12);
        assert_memory_equal(inter + 8 * v + 4, en + 3 * v, 12);
        assert_true(inter[8 * v + 3] == SENTINEL && inter[8 * v + 7] == SENTINEL);
    }
    /* Unbound again: later steps leave the caller's arrays alone. */
    assert_int_equal(vt->bind_output(inst, NULL), SINEW_OK);
    for (size_t i = 0; i < total; ++i) buf[i] = SENTINEL;
    assert_int_equal(vt->step(inst, 0.02f), SINEW_OK);
    for (size_t i = 0; i < total; ++i) assert_true(buf[i] == SENTINEL);
    skin_read(vt, inst, V, p, n);
    assert_memory_equal(p, ep, sizeof p);
    assert_int_equal(host.log.total, 0);
    vt->destroy(inst);
    free(buf);
    free(nbuf);
}

static void test_bound_strided_output(void** state)
{
    (void)state;
    skin_rig rig;
    skin_rig_random(&rig, V, J, 8, 11);
    float skinning[16 * J];
    random_pose(skinning, 12);
    for (int b = 0; b < 2; ++b) {
        for (int s = 0; s < 4; ++s) {
            if (!skin_simd_available(skin_simd_names[s])) {
                print_message("SKIP: %s simd=%s is not available\n", g_backends[b]->name,
                              skin_simd_names[s]);
                continue;
            }
            float ep[3 * V], en[3 * V];
            reference_output(g_backends[b], &rig, skin_simd_names[s], skinning, ep, en);
            const size_t strides[4] = {12, 16, 24, 32};
            for (int k = 0; k < 4; ++k) {
                if (strides[k] >= 24 || strides[k] == 12)
                    check_bound(g_backends[b], &rig, skin_simd_names[s], strides[k], true, skinning,
                                ep, en);
                check_bound(g_backends[b], &rig, skin_simd_names[s], strides[k], false, skinning,
                            ep, en);
            }
        }
    }
    skin_rig_free(&rig);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rest_before_pose),
        cmocka_unit_test(test_set_state),
        cmocka_unit_test(test_bound_strided_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
