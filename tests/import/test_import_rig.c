/* Imported characters go straight into sinew_rig_create, and the runtime's FK of the rest
 * local transforms gives back the bind matrices. SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "import_test_util.h"

static void check_rig(const char* path, uint32_t use_simulation_mesh)
{
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.logger = &log.logger;
    options.use_simulation_mesh = use_simulation_mesh;
    sinew_character* c = NULL;
    sinew_result r = sinew_import_character(path, &options, &c);
    if (r != SINEW_OK) fail_msg("import %s: %s (%s)", path, sinew_result_string(r), log.last);

    sinew_world* world = sinew_test_world(&log, 1);
    sinew_rig rig = { 0 };
    r = sinew_rig_create(world, &c->rig, &rig);
    if (r != SINEW_OK) fail_msg("rig %s: %s (%s)", path, sinew_result_string(r), log.last);
    assert_int_equal(log.count[SINEW_LOG_ERROR], 0);

    sinew_rig_info info = SINEW_RIG_INFO_INIT;
    assert_int_equal(sinew_rig_get_info(world, rig, &info), SINEW_OK);
    const sinew_rig_desc* d = &c->rig;
    assert_int_equal(info.joint_count, d->skeleton.joint_count);
    assert_int_equal(info.vertex_count, d->render_mesh.vertex_count);
    assert_int_equal(info.triangle_count, d->render_mesh.triangle_count);
    assert_int_equal(info.simulation_vertex_count, d->simulation_mesh.vertex_count);
    assert_int_equal(info.submesh_count,
                     d->render_mesh.submesh_count ? d->render_mesh.submesh_count : 1);
    assert_true(info.max_influences >= 1);
    if (d->weights.offsets) {
        uint32_t widest = 0;
        for (uint32_t v = 0; v < d->render_mesh.vertex_count; ++v) {
            uint32_t k = d->weights.offsets[v + 1] - d->weights.offsets[v];
            if (k > widest) widest = k;
        }
        assert_int_equal(info.max_influences, widest);
    }
    for (uint32_t j = 0; j < d->skeleton.joint_count; ++j)
        assert_int_equal(sinew_rig_find_joint(world, rig, d->skeleton.names[j]), (int32_t)j);

    uint32_t n = d->skeleton.joint_count;
    float* model = (float*)malloc((size_t)n * 16 * sizeof(float));
    assert_int_equal(sinew_rig_local_to_model(world, rig, c->rest_local, model), SINEW_OK);
    for (uint32_t i = 0; i < n * 16; ++i) {
        float scale = 1.0f + fabsf(d->skeleton.bind_matrices[i]);
        if (!(fabsf(model[i] - d->skeleton.bind_matrices[i]) <= 1e-4f * scale))
            fail_msg("%s: runtime FK(rest_local)[%u] = %g, bind %g", path, (unsigned)i,
                     (double)model[i], (double)d->skeleton.bind_matrices[i]);
    }
    /* An animation frame through the runtime's FK equals the same through the test's. */
    if (c->animation_count > 0) {
        float* local = (float*)malloc((size_t)n * 16 * sizeof(float));
        float* mine = (float*)malloc((size_t)n * 16 * sizeof(float));
        const sinew_animation* a = &c->animations[c->animation_count - 1];
        assert_int_equal(sinew_animation_sample(a, 0.5f * a->duration, 1, local), SINEW_OK);
        assert_int_equal(sinew_rig_local_to_model(world, rig, local, model), SINEW_OK);
        assert_true(tu_forward_kinematics(d->skeleton.parents, n, local, mine));
        for (uint32_t i = 0; i < n * 16; ++i)
            assert_true(fabsf(model[i] - mine[i]) <= 1e-4f * (1.0f + fabsf(mine[i])));
        free(local);
        free(mine);
    }
    free(model);
    assert_int_equal(sinew_rig_destroy(world, rig), SINEW_OK);
    sinew_world_destroy(world);
    sinew_import_free(c);
}

static void test_text_rigs(void** state)
{
    (void)state;
    check_rig(sinew_test_data_path("characters/cylinder/cylinder.ini"), 0);
    check_rig(sinew_test_data_path("characters/tbone/tbone.ini"), 0);
    check_rig(sinew_test_data_path("characters/male/male.ini"), 0);
}

static void test_assimp_rigs(void** state)
{
    (void)state;
#if SINEW_TEST_HAS_ASSIMP
    check_rig(sinew_test_assimp_path("glTF2/simple_skin/simple_skin.gltf"), 0);
    check_rig(sinew_test_assimp_path("X/BCN_Epileptic.X"), 0);
    check_rig(sinew_test_assimp_path("FBX/animation_with_skeleton.fbx"), 0);
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_rigs),
        cmocka_unit_test(test_assimp_rigs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
