/* Every instruction-set path of lbs and dqs against the scalar path, and the scalar path
 * against a double-precision reference, on random rigs of 1 to 12 influences with rigid and
 * non-rigid skinning matrices: padded as the runtime pads (widths 4, 8 and 9 to 12, which
 * take the fast paths for 4 and 8 and the generic one), unpadded (widths 1, 2, 3, 5, 6, 7)
 * and over-padded (3 influences in rows of 8 or 12). The job system splits the
 * vertices into uneven chunks, whose ends fall anywhere relative to the kernels' batches of
 * 4, 8 and 16: a vertex's result must not depend on where a chunk ends, so the split and the
 * serial runs of one path must agree bit for bit. Paths the CPU lacks are skipped.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin_backends.h"
#include "skin_fixture.h"

enum { V = 203, J = 13 };

/* Position errors are measured relative to the length of the position (at least 1): every
 * coordinate is computed from terms as large as the whole vector (a rotated point plus a
 * translation), each rounding to about 6e-8 of its size. Normals are unit vectors. */
#define POSITION_TOLERANCE 1e-6
#define NORMAL_TOLERANCE 1e-6

typedef struct run_result {
    float p[3 * V];
    float n[3 * V];
} run_result;

static void run(const sinew_backend_vtable* vt, const skin_rig* rig, const char* simd,
                skin_split split, const float* skinning, run_result* out, bool* ran)
{
    skin_host host;
    skin_host_init(&host, split);
    void* inst = skin_prepare(&host, vt, rig, simd, true);
    *ran = inst != NULL;
    if (!inst) return;
    skin_set_pose(vt, inst, J, skinning);
    assert_int_equal(vt->step(inst, 1.0f / 30.0f), SINEW_OK);
    skin_read(vt, inst, V, out->p, out->n);
    assert_int_equal(host.log.total, 0);
    vt->destroy(inst);
}

static void compare_paths(const sinew_backend_vtable* vt, bool rigid)
{
    const bool is_lbs = vt == &sinew_backend_lbs;
    run_result* scalar = malloc(sizeof *scalar);
    run_result* simd = malloc(sizeof *simd);
    run_result* serial = malloc(sizeof *serial);
    double* ref_p = malloc(sizeof(double) * 3 * V);
    double* ref_n = malloc(sizeof(double) * 3 * V);
    double* gain = malloc(sizeof(double) * V);
    assert_non_null(scalar);
    assert_non_null(simd);
    assert_non_null(serial);
    assert_non_null(ref_p);
    assert_non_null(ref_n);
    assert_non_null(gain);
    double worst_ref = 0.0, worst_simd[4] = {0};
    static const uint32_t shapes[][2] = {
        /* influences, width */
        {1, 4},   {2, 4},   {3, 4}, {4, 4}, {5, 8}, {6, 8}, {7, 8}, {8, 8}, {9, 9}, {10, 10},
        {11, 11}, {12, 12}, {1, 1}, {2, 2}, {3, 3}, {5, 5}, {6, 6}, {7, 7}, {3, 8}, {3, 12}};
    for (size_t shape = 0; shape < sizeof shapes / sizeof shapes[0]; ++shape) {
        uint32_t m = shapes[shape][0];
        skin_rig rig;
        skin_rig_random_width(&rig, V, J, m, shapes[shape][1], 100u * shape + (rigid ? 1u : 2u));
        skin_rng rng = {7777u + shape};
        float skinning[16 * J];
        for (int j = 0; j < J; ++j) skin_mat_random(skinning + 16 * j, &rng, !rigid);
        bool ran;
        run(vt, &rig, "scalar", SKIN_SPLIT_SERIAL, skinning, scalar, &ran);
        assert_true(ran);
        {
            if (is_lbs)
                skin_lbs_reference(&rig.view, skinning, ref_p, ref_n, gain);
            else
                skin_dqs_reference(&rig.view, skinning, ref_p, ref_n);
            for (int v = 0; v < V; ++v) {
                double ntol = NORMAL_TOLERANCE * (is_lbs ? fmax(1.0, gain[v]) : 1.0);
                for (int c = 0; c < 3; ++c) {
                    double scale =
                        fmax(1.0, hypot(hypot(ref_p[3 * v], ref_p[3 * v + 1]), ref_p[3 * v + 2]));
                    double ep = fabs(scalar->p[3 * v + c] - ref_p[3 * v + c]) / scale;
                    double en = fabs(scalar->n[3 * v + c] - ref_n[3 * v + c]);
                    worst_ref = fmax(worst_ref, ep);
                    if (ep > POSITION_TOLERANCE || en > ntol)
                        fail_msg("%s scalar vs reference, %u influences in rows of %u, %s, vertex "
                                 "%d axis %d: "
                                 "position %.9g vs %.9g, normal %.9g vs %.9g",
                                 vt->name, m, rig.view.padded_width, rigid ? "rigid" : "non-rigid",
                                 v, c, scalar->p[3 * v + c], ref_p[3 * v + c], scalar->n[3 * v + c],
                                 ref_n[3 * v + c]);
                }
            }
        }
        if (is_lbs && !rigid) /* gains for the path comparison too */
            skin_lbs_reference(&rig.view, skinning, ref_p, ref_n, gain);
        for (int s = 0; s < 4; ++s) {
            run(vt, &rig, skin_simd_names[s], SKIN_SPLIT_UNEVEN, skinning, simd, &ran);
            if (!ran) continue;
            run(vt, &rig, skin_simd_names[s], SKIN_SPLIT_SERIAL, skinning, serial, &ran);
            assert_memory_equal(simd->p, serial->p, sizeof simd->p);
            assert_memory_equal(simd->n, serial->n, sizeof simd->n);
            for (int v = 0; v < V; ++v) {
                double ntol = NORMAL_TOLERANCE * (is_lbs ? fmax(1.0, gain[v]) : 1.0);
                for (int c = 0; c < 3; ++c) {
                    double scale = fmax(1.0, hypot(hypot(scalar->p[3 * v], scalar->p[3 * v + 1]),
                                                   scalar->p[3 * v + 2]));
                    double ep = fabs(simd->p[3 * v + c] - scalar->p[3 * v + c]) / scale;
                    double en = fabs(simd->n[3 * v + c] - scalar->n[3 * v + c]);
                    worst_simd[s] = fmax(worst_simd[s], fmax(ep, en / ntol * NORMAL_TOLERANCE));
                    if (ep > POSITION_TOLERANCE || en > ntol)
                        fail_msg(
                            "%s %s vs scalar, %u influences in rows of %u, %s, vertex %d axis %d: "
                            "position %.9g vs %.9g, normal %.9g vs %.9g",
                            vt->name, skin_simd_names[s], m, rig.view.padded_width,
                            rigid ? "rigid" : "non-rigid", v, c, simd->p[3 * v + c],
                            scalar->p[3 * v + c], simd->n[3 * v + c], scalar->n[3 * v + c]);
                }
            }
        }
        skin_rig_free(&rig);
    }
    print_message("%s %s: worst relative error scalar/reference %.2g, sse %.2g, avx2 %.2g, "
                  "avx512 %.2g\n",
                  vt->name, rigid ? "rigid" : "non-rigid", worst_ref, worst_simd[1], worst_simd[2],
                  worst_simd[3]);
    free(scalar);
    free(simd);
    free(serial);
    free(ref_p);
    free(ref_n);
    free(gain);
}

static void test_lbs_rigid(void** state)
{
    (void)state;
    compare_paths(&sinew_backend_lbs, true);
}

static void test_lbs_non_rigid(void** state)
{
    (void)state;
    compare_paths(&sinew_backend_lbs, false);
}

static void test_dqs_rigid(void** state)
{
    (void)state;
    compare_paths(&sinew_backend_dqs, true);
}

static void test_dqs_non_rigid(void** state)
{
    (void)state;
    compare_paths(&sinew_backend_dqs, false);
}

/* normals=0: positions identical to normals=1 on the same path, normals are the rest ones. */
static void test_without_normals(void** state)
{
    (void)state;
    const sinew_backend_vtable* const backends[2] = {&sinew_backend_lbs, &sinew_backend_dqs};
    skin_rig rig;
    skin_rig_random(&rig, V, J, 6, 99);
    skin_rng rng = {4242};
    float skinning[16 * J];
    for (int j = 0; j < J; ++j) skin_mat_random(skinning + 16 * j, &rng, false);
    for (int b = 0; b < 2; ++b) {
        for (int s = 0; s < 4; ++s) {
            skin_host host;
            skin_host_init(&host, SKIN_SPLIT_UNEVEN);
            void* with = skin_prepare(&host, backends[b], &rig, skin_simd_names[s], true);
            if (!with) continue;
            void* without = skin_prepare(&host, backends[b], &rig, skin_simd_names[s], false);
            skin_set_pose(backends[b], with, J, skinning);
            skin_set_pose(backends[b], without, J, skinning);
            assert_int_equal(backends[b]->step(with, 0.1f), SINEW_OK);
            assert_int_equal(backends[b]->step(without, 0.1f), SINEW_OK);
            static float p1[3 * V], n1[3 * V], p0[3 * V], n0[3 * V];
            skin_read(backends[b], with, V, p1, n1);
            skin_read(backends[b], without, V, p0, n0);
            assert_memory_equal(p0, p1, sizeof p0);
            assert_memory_equal(n0, rig.normals, sizeof n0);
            backends[b]->destroy(with);
            backends[b]->destroy(without);
        }
    }
    skin_rig_free(&rig);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lbs_rigid),       cmocka_unit_test(test_lbs_non_rigid),
        cmocka_unit_test(test_dqs_rigid),       cmocka_unit_test(test_dqs_non_rigid),
        cmocka_unit_test(test_without_normals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
