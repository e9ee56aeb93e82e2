/* vk-lbs and vk-dqs against the CPU lbs and dqs on the cylinder and on male over several poses
 * of their first animation (positions within 1e-5 of the bounding-box diagonal, normals within
 * 1e-4), normals=0, a world without a context, a destroyed context, and swaps lbs <-> vk-lbs
 * that continue from the current shape. Validation layers are on; any message fails.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vk_test.h"

static void compare_backends(const char* character, int poses)
{
    vk_scene s;
    vk_scene_open(&s, character, 1);
    const char* pairs[2][2] = {{"lbs", "vk-lbs"}, {"dqs", "vk-dqs"}};
    size_t n3 = (size_t)s.vertices * 3;
    float* pc = malloc(n3 * sizeof(float));
    float* nc = malloc(n3 * sizeof(float));
    float* pg = malloc(n3 * sizeof(float));
    float* ng = malloc(n3 * sizeof(float));
    assert_true(pc && nc && pg && ng);
    for (int b = 0; b < 2; ++b) {
        sinew_skin cpu = vk_scene_add_skin(&s, pairs[b][0]);
        sinew_skin gpu = vk_scene_add_skin(&s, pairs[b][1]);
        assert_string_equal(sinew_skin_backend(s.world, gpu), pairs[b][1]);
        /* Before any step both give the rest mesh. */
        vk_scene_read(&s, gpu, pg, ng);
        assert_true(vk_max_diff(pg, s.character->rig.render_mesh.positions, n3) == 0.0f);
        for (int i = 0; i < poses; ++i) {
            vk_scene_sample(&s, (float)(i + 1) / (float)(poses + 1));
            vk_scene_pose(&s, cpu);
            vk_scene_pose(&s, gpu);
            assert_int_equal(sinew_world_update(s.world, 1.0f / 60.0f), SINEW_OK);
            vk_scene_read(&s, cpu, pc, nc);
            vk_scene_read(&s, gpu, pg, ng);
            float dp = vk_max_diff(pc, pg, n3), dn = vk_max_diff(nc, ng, n3);
            print_message("%s %s pose %d: positions %.3g of the diagonal, normals %.3g\n",
                          character, pairs[b][1], i, (double)(dp / s.diagonal), (double)dn);
            assert_true(dp <= 1e-5f * s.diagonal);
            assert_true(dn <= 1e-4f);
            /* The pose moved the mesh: the comparison is not of two rest meshes. */
            assert_true(vk_max_diff(pg, s.character->rig.render_mesh.positions, n3) >
                        1e-3f * s.diagonal);
        }
        assert_int_equal(sinew_world_remove_skin(s.world, cpu), SINEW_OK);
        assert_int_equal(sinew_world_remove_skin(s.world, gpu), SINEW_OK);
    }
    free(pc);
    free(nc);
    free(pg);
    free(ng);
    vk_scene_close(&s);
}

static void test_cylinder(void** state)
{
    (void)state;
    compare_backends("cylinder", 4);
}

static void test_male(void** state)
{
    (void)state;
    compare_backends("male", 3);
}

static void test_normals_off_and_params(void** state)
{
    (void)state;
    vk_scene s;
    vk_scene_open(&s, "cylinder", 1);
    sinew_param off[1] = {{"normals", "0"}};
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = s.rig;
    desc.backend = "vk-dqs";
    desc.params = off;
    desc.param_count = 1;
    sinew_skin skin;
    assert_int_equal(sinew_world_add_skin(s.world, &desc, &skin), SINEW_OK);
    vk_scene_pose(&s, skin);
    assert_int_equal(sinew_skin_update(s.world, skin, 0.01f), SINEW_OK);
    size_t n3 = (size_t)s.vertices * 3;
    float* p = malloc(n3 * sizeof(float));
    float* n = malloc(n3 * sizeof(float));
    assert_true(p && n);
    vk_scene_read(&s, skin, p, n);
    /* normals=0: read_output gives the rest normals. */
    const float* rest_normals = NULL;
    assert_int_equal(sinew_rig_get_mesh(s.world, s.rig, NULL, &rest_normals, NULL), SINEW_OK);
    assert_true(vk_max_diff(n, rest_normals, n3) == 0.0f);
    free(p);
    free(n);
    /* Parameters: unknown key, bad value; typed extensions are refused. */
    sinew_param bad[1] = {{"simd", "avx2"}};
    desc.params = bad;
    sinew_test_log_reset(&s.log);
    assert_int_equal(sinew_world_add_skin(s.world, &desc, &skin), SINEW_ERROR_PARAMETER);
    assert_int_equal(s.log.count[SINEW_LOG_ERROR], 1);
    sinew_param bad2[1] = {{"normals", "yes"}};
    desc.params = bad2;
    assert_int_equal(sinew_world_add_skin(s.world, &desc, &skin), SINEW_ERROR_PARAMETER);
    vk_scene_close(&s);
}

static void test_unavailable(void** state)
{
    (void)state;
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_vk_context* ctx = vk_test_context(&log);
    sinew_world* plain = sinew_test_world(&log, 1);
    /* Not registered: unknown. */
    assert_int_equal(sinew_world_probe_backend(plain, "vk-lbs"), SINEW_ERROR_UNKNOWN_BACKEND);
    assert_int_equal(sinew_vk_register_backends(NULL, ctx), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sinew_vk_register_backends(plain, NULL), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sinew_vk_register_backends(plain, ctx), SINEW_OK);
    assert_int_equal(sinew_world_probe_backend(plain, "vk-lbs"), SINEW_OK);
    assert_int_equal(sinew_world_probe_backend(plain, "vk-dqs"), SINEW_OK);
    /* Registering again keeps one entry per name. */
    uint32_t count = sinew_world_backend_count(plain);
    assert_int_equal(sinew_vk_register_backends(plain, ctx), SINEW_OK);
    assert_int_equal(sinew_world_backend_count(plain), count);
    uint64_t messages = vk_test_validation_messages(ctx);
    assert_int_equal(messages, 0);
    /* A destroyed context leaves the names registered but unavailable. */
    sinew_vk_context_destroy(ctx);
    sinew_test_log_reset(&log);
    assert_int_equal(sinew_world_probe_backend(plain, "vk-lbs"), SINEW_ERROR_BACKEND_UNAVAILABLE);
    assert_int_equal(log.count[SINEW_LOG_ERROR], 1);
    sinew_world_destroy(plain);
}

/* lbs -> vk-lbs -> lbs -> vk-dqs on a live skin, each swap continuing from the current shape
 * (compared with a reference skin stepped alongside). */
static void test_swap(void** state)
{
    (void)state;
    vk_scene s;
    vk_scene_open(&s, "cylinder", 1);
    size_t n3 = (size_t)s.vertices * 3;
    float* pa = malloc(n3 * sizeof(float));
    float* pb = malloc(n3 * sizeof(float));
    assert_true(pa && pb);
    sinew_skin skin = vk_scene_add_skin(&s, "lbs");
    sinew_skin ref = vk_scene_add_skin(&s, "lbs");
    assert_int_equal(sinew_world_update(s.world, 0.01f), SINEW_OK);
    const char* order[3] = {"vk-lbs", "lbs", "vk-lbs"};
    for (int i = 0; i < 3; ++i) {
        assert_int_equal(sinew_skin_set_backend(s.world, skin, order[i], NULL, 0), SINEW_OK);
        assert_int_equal(sinew_skin_wait_swap(s.world, skin), SINEW_OK);
        /* Right after the swap: the shape of the last step. */
        vk_scene_read(&s, skin, pa, NULL);
        vk_scene_read(&s, ref, pb, NULL);
        assert_true(vk_max_diff(pa, pb, n3) <= 1e-5f * s.diagonal);
        vk_scene_sample(&s, 0.2f + 0.25f * (float)i);
        vk_scene_pose(&s, skin);
        vk_scene_pose(&s, ref);
        assert_int_equal(sinew_world_update(s.world, 0.01f), SINEW_OK);
        vk_scene_read(&s, skin, pa, NULL);
        vk_scene_read(&s, ref, pb, NULL);
        assert_true(vk_max_diff(pa, pb, n3) <= 1e-5f * s.diagonal);
    }
    free(pa);
    free(pb);
    vk_scene_close(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cylinder),
        cmocka_unit_test(test_male),
        cmocka_unit_test(test_normals_off_and_params),
        cmocka_unit_test(test_unavailable),
        cmocka_unit_test(test_swap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
