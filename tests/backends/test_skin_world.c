/* lbs and dqs inside the runtime, on the male test character (23259 vertices, 63 joints,
 * automatic weights) posed by its first animation: the results are the same bit for bit with
 * one thread and with the pool's two (vertex ranges split over the job system), for every
 * instruction set; a backend swap continues from the current shape; a bound interleaved output
 * receives what read_output returns; bad parameters are refused through the public API.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew.h>
#include <sinew/sinew_import.h>

#include "test_support.h"

static const char* const g_simd[4] = {"scalar", "sse", "avx2", "avx512"};

typedef struct scene {
    sinew_test_log log;
    sinew_world* world;
    sinew_character* character;
    sinew_rig rig;
    uint32_t vertices;
    float* local;
} scene;

static void scene_open(scene* s, uint32_t threads)
{
    const char* path = sinew_test_data_path("characters/male/male.ini");
    memset(s, 0, sizeof *s);
    sinew_test_log_init(&s->log);
    s->world = sinew_test_world(&s->log, threads);
    sinew_import_options opt = SINEW_IMPORT_OPTIONS_INIT;
    opt.logger = &s->log.logger;
    assert_int_equal(sinew_import_character(path, &opt, &s->character), SINEW_OK);
    assert_true(s->character->animation_count > 0);
    assert_int_equal(sinew_rig_create(s->world, &s->character->rig, &s->rig), SINEW_OK);
    sinew_rig_info info = SINEW_RIG_INFO_INIT;
    assert_int_equal(sinew_rig_get_info(s->world, s->rig, &info), SINEW_OK);
    s->vertices = info.vertex_count;
    s->local = malloc((size_t)info.joint_count * 16 * sizeof(float));
    assert_non_null(s->local);
    const sinew_animation* anim = &s->character->animations[0];
    assert_int_equal(anim->joint_count, info.joint_count);
    assert_int_equal(sinew_animation_sample(anim, 0.6f * anim->duration, 0, s->local), SINEW_OK);
}

static void scene_close(scene* s)
{
    free(s->local);
    sinew_world_destroy(s->world);
    sinew_import_free(s->character);
}

static sinew_skin add_posed_skin(scene* s, const char* backend, const char* simd)
{
    sinew_param params[1] = {{"simd", simd}};
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = s->rig;
    desc.backend = backend;
    desc.params = params;
    desc.param_count = 1;
    sinew_skin skin;
    sinew_result r = sinew_world_add_skin(s->world, &desc, &skin);
    if (r != SINEW_OK)
        fail_msg("add_skin %s simd=%s: %s (%s)", backend, simd, sinew_result_string(r),
                 s->log.last);
    sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
    pose.space = SINEW_POSE_LOCAL;
    pose.joint_count = s->character->rig.skeleton.joint_count;
    pose.matrices = s->local;
    assert_int_equal(sinew_skin_set_pose(s->world, skin, &pose), SINEW_OK);
    return skin;
}

static void read_skin(scene* s, sinew_skin skin, float* p, float* n)
{
    sinew_output_desc out = SINEW_OUTPUT_DESC_INIT;
    out.vertex_capacity = s->vertices;
    out.positions = p;
    out.normals = n;
    assert_int_equal(sinew_skin_read_output(s->world, skin, &out), SINEW_OK);
}

static bool simd_available(scene* s, const char* simd)
{
    sinew_param params[1] = {{"simd", simd}};
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = s->rig;
    desc.params = params;
    desc.param_count = 1;
    sinew_skin skin;
    sinew_result r = sinew_world_add_skin(s->world, &desc, &skin);
    if (r == SINEW_OK) {
        assert_int_equal(sinew_world_remove_skin(s->world, skin), SINEW_OK);
        return true;
    }
    assert_int_equal(r, SINEW_ERROR_BACKEND_UNAVAILABLE);
    sinew_test_log_reset(&s->log);
    print_message("SKIP: simd=%s is not available on this CPU\n", simd);
    return false;
}

static void test_threads_agree(void** state)
{
    (void)state;
    scene one, two;
    scene_open(&one, 1);
    scene_open(&two, 2);
    assert_int_equal(sinew_world_thread_count(two.world), 2);
    size_t n3 = (size_t)one.vertices * 3;
    float* p1 = malloc(n3 * sizeof(float));
    float* n1 = malloc(n3 * sizeof(float));
    float* p2 = malloc(n3 * sizeof(float));
    float* n2 = malloc(n3 * sizeof(float));
    assert_true(p1 && n1 && p2 && n2);
    const char* backends[2] = {"lbs", "dqs"};
    for (int b = 0; b < 2; ++b) {
        for (int s = 0; s < 4; ++s) {
            if (!simd_available(&one, g_simd[s])) continue;
            /* One skin per world: the world hands the vertex ranges to the pool. */
            sinew_skin a = add_posed_skin(&one, backends[b], g_simd[s]);
            sinew_skin c = add_posed_skin(&two, backends[b], g_simd[s]);
            assert_int_equal(sinew_world_update(one.world, 1.0f / 60.0f), SINEW_OK);
            assert_int_equal(sinew_world_update(two.world, 1.0f / 60.0f), SINEW_OK);
            read_skin(&one, a, p1, n1);
            read_skin(&two, c, p2, n2);
            assert_memory_equal(p1, p2, n3 * sizeof(float));
            assert_memory_equal(n1, n2, n3 * sizeof(float));
            /* The pose moved the mesh; every normal is unit. */
            const float* rest = NULL;
            assert_int_equal(sinew_rig_get_mesh(one.world, one.rig, &rest, NULL, NULL), SINEW_OK);
            double moved = 0.0;
            for (size_t i = 0; i < n3; ++i) {
                assert_true(isfinite(p1[i]));
                moved = fmax(moved, fabs(p1[i] - rest[i]));
            }
            assert_true(moved > 1e-3);
            for (uint32_t v = 0; v < one.vertices; ++v) {
                double len =
                    sqrt((double)n1[3 * v] * n1[3 * v] + (double)n1[3 * v + 1] * n1[3 * v + 1] +
                         (double)n1[3 * v + 2] * n1[3 * v + 2]);
                assert_true(fabs(len - 1.0) < 1e-5);
            }
            assert_int_equal(sinew_world_remove_skin(one.world, a), SINEW_OK);
            assert_int_equal(sinew_world_remove_skin(two.world, c), SINEW_OK);
        }
    }
    assert_int_equal(one.log.count[SINEW_LOG_ERROR] + two.log.count[SINEW_LOG_ERROR], 0);
    free(p1);
    free(n1);
    free(p2);
    free(n2);
    scene_close(&one);
    scene_close(&two);
}

/* lbs -> dqs: right after the swap the output is the shape lbs left; the next update is dqs. A
 * bound interleaved output (position and normal in one 24-byte record) survives the swap. */
static void test_swap_and_bound_output(void** state)
{
    (void)state;
    scene s;
    scene_open(&s, 2);
    size_t n3 = (size_t)s.vertices * 3;
    float* before = malloc(n3 * sizeof(float));
    float* after = malloc(n3 * sizeof(float));
    float* normals = malloc(n3 * sizeof(float));
    float* bound = malloc(n3 * 2 * sizeof(float));
    assert_true(before && after && normals && bound);
    sinew_skin skin = add_posed_skin(&s, "lbs", "auto");
    sinew_output_desc out = SINEW_OUTPUT_DESC_INIT;
    out.vertex_capacity = s.vertices;
    out.positions = bound;
    out.position_stride = 24;
    out.normals = bound + 3;
    out.normal_stride = 24;
    assert_int_equal(sinew_skin_bind_output(s.world, skin, &out), SINEW_OK);
    assert_int_equal(sinew_world_update(s.world, 1.0f / 60.0f), SINEW_OK);
    read_skin(&s, skin, before, normals);
    for (uint32_t v = 0; v < s.vertices; ++v) {
        assert_memory_equal(bound + 6 * v, before + 3 * v, 12);
        assert_memory_equal(bound + 6 * v + 3, normals + 3 * v, 12);
    }
    assert_int_equal(sinew_skin_set_backend(s.world, skin, "dqs", NULL, 0), SINEW_OK);
    assert_int_equal(sinew_skin_wait_swap(s.world, skin), SINEW_OK);
    assert_string_equal(sinew_skin_backend(s.world, skin), "dqs");
    read_skin(&s, skin, after, normals);
    assert_memory_equal(after, before, n3 * sizeof(float));
    assert_int_equal(sinew_world_update(s.world, 1.0f / 60.0f), SINEW_OK);
    read_skin(&s, skin, after, normals);
    double diff = 0.0;
    for (size_t i = 0; i < n3; ++i) diff = fmax(diff, fabs(after[i] - before[i]));
    assert_true(diff > 1e-4); /* dqs differs from lbs where joints bend */
    for (uint32_t v = 0; v < s.vertices; ++v) {
        assert_memory_equal(bound + 6 * v, after + 3 * v, 12);
        assert_memory_equal(bound + 6 * v + 3, normals + 3 * v, 12);
    }
    assert_int_equal(s.log.count[SINEW_LOG_ERROR], 0);

    /* A swap whose preparation refuses a parameter keeps the old backend: the backend's ERROR
     * line, one WARNING line, and the error from the wait. */
    sinew_param bad[1] = {{"normals", "2"}};
    assert_int_equal(sinew_skin_set_backend(s.world, skin, "lbs", bad, 1), SINEW_OK);
    assert_int_equal(sinew_skin_wait_swap(s.world, skin), SINEW_ERROR_PARAMETER);
    assert_string_equal(sinew_skin_backend(s.world, skin), "dqs");
    assert_int_equal(s.log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(s.log.count[SINEW_LOG_WARNING], 1);
    sinew_test_log_reset(&s.log);
    sinew_param unknown[1] = {{"smoothing", "1"}};
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = s.rig;
    desc.backend = "dqs";
    desc.params = unknown;
    desc.param_count = 1;
    sinew_skin other;
    assert_int_equal(sinew_world_add_skin(s.world, &desc, &other), SINEW_ERROR_PARAMETER);
    assert_int_equal(s.log.count[SINEW_LOG_ERROR], 1);
    free(before);
    free(after);
    free(normals);
    free(bound);
    scene_close(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_agree),
        cmocka_unit_test(test_swap_and_bound_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
