/* Calls back into a world from inside its update (here from the host's job system, as an
 * engine's job or callback might): each one that would change the world is refused with
 * SINEW_ERROR_BUSY and one log line, and the update and the world carry on unharmed.
 * SPDX-License-Identifier: MIT */
#include <string.h>

#include <sinew/sinew_plugin.h>

#include "test_rigs.h"
#include "test_support.h"

static sinew_test_log g_log;
static sinew_world* g_world;
static sinew_rig g_rig, g_spare_rig;
static sinew_skin g_skin;
static test_bar g_bar;
static float g_out[64 * 3];
static int g_reentered;

typedef struct reentry {
    const char* call;
    sinew_result result;
} reentry;

static reentry g_results[16];
static int g_result_count;

static void record(const char* call, sinew_result result)
{
    g_results[g_result_count].call = call;
    g_results[g_result_count].result = result;
    g_result_count++;
}

/* Every call that changes the world, made while it steps. */
static void reenter(void)
{
    sinew_world* w = g_world;
    sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
    sd.rig = g_rig;
    sinew_skin other;
    sinew_rig rig;
    float model[32];
    test_mat_identity(model);
    test_mat_identity(model + 16);
    sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
    pose.joint_count = 2;
    pose.matrices = model;
    sinew_output_desc out = SINEW_OUTPUT_DESC_INIT;
    out.vertex_capacity = 64;
    out.positions = g_out;
    record("sinew_world_remove_skin", sinew_world_remove_skin(w, g_skin));
    record("sinew_world_add_skin", sinew_world_add_skin(w, &sd, &other));
    record("sinew_skin_set_backend", sinew_skin_set_backend(w, g_skin, "dqs", NULL, 0));
    record("sinew_skin_set_pose", sinew_skin_set_pose(w, g_skin, &pose));
    record("sinew_skin_bind_output", sinew_skin_bind_output(w, g_skin, &out));
    record("sinew_rig_create", sinew_rig_create(w, &g_bar.desc, &rig));
    record("sinew_rig_destroy", sinew_rig_destroy(w, g_spare_rig));
    record("sinew_world_update", sinew_world_update(w, 1.0f / 60.0f));
    record("sinew_skin_update", sinew_skin_update(w, g_skin, 1.0f / 60.0f));
    record("sinew_world_load_plugin", sinew_world_load_plugin(w, "/nonexistent/plugin.so"));
    record("sinew_world_register_backend", sinew_world_register_backend(w, NULL));
    /* Returns nothing: the world must simply still be there afterwards. */
    sinew_world_destroy(w);
}

/* The host's job system: the first job of the update calls back into the world. */
static void reentrant_parallel_for(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain,
                                   void* user)
{
    (void)grain;
    (void)user;
    if (!g_reentered) {
        g_reentered = 1;
        reenter();
    }
    if (count) fn(data, 0, count);
}

static void test_calls_during_update_are_refused(void** state)
{
    (void)state;
    sinew_test_log_init(&g_log);
    sinew_job_system jobs = { reentrant_parallel_for, 1, NULL };
    sinew_world_desc wd = SINEW_WORLD_DESC_INIT;
    wd.logger = &g_log.logger;
    wd.jobs = &jobs;
    assert_int_equal(sinew_world_create(&wd, &g_world), SINEW_OK);
    test_bar_make(&g_bar, 5);
    assert_int_equal(sinew_rig_create(g_world, &g_bar.desc, &g_rig), SINEW_OK);
    assert_int_equal(sinew_rig_create(g_world, &g_bar.desc, &g_spare_rig), SINEW_OK);
    sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
    sd.rig = g_rig;
    assert_int_equal(sinew_world_add_skin(g_world, &sd, &g_skin), SINEW_OK);

    g_reentered = 0;
    g_result_count = 0;
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_world_update(g_world, 1.0f / 60.0f), SINEW_OK);
    assert_true(g_reentered);
    for (int i = 0; i < g_result_count; ++i) {
        if (g_results[i].result != SINEW_ERROR_BUSY)
            fail_msg("%s during the update returned %s, expected SINEW_ERROR_BUSY",
                     g_results[i].call, sinew_result_string(g_results[i].result));
    }
    /* One line per refused call, sinew_world_destroy's included. */
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], g_result_count + 1);
    print_message("  last line: %s\n", g_log.last);

    /* Nothing was changed: the skin, both rigs and the backend are as they were. */
    assert_string_equal(sinew_skin_backend(g_world, g_skin), "lbs");
    sinew_rig_info info = SINEW_RIG_INFO_INIT;
    assert_int_equal(sinew_rig_get_info(g_world, g_spare_rig, &info), SINEW_OK);
    assert_int_equal(sinew_world_update(g_world, 1.0f / 60.0f), SINEW_OK);
    assert_int_equal(sinew_world_remove_skin(g_world, g_skin), SINEW_OK);
    assert_int_equal(sinew_rig_destroy(g_world, g_spare_rig), SINEW_OK);
    sinew_world_destroy(g_world);
    g_world = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calls_during_update_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
