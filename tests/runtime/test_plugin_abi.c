/* The plugin ABI: a backend built as a separate shared library is loaded, negotiated and run;
 * plugins with a wrong ABI, no entry point, a NULL or short table are refused without a
 * crash and without registering anything. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_plugin.h>

#include "test_rigs.h"
#include "test_support.h"

static sinew_test_log g_log;

static const char* plugin_path(const char* variant)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/test_plugin_%s.so", PLUGIN_DIR, variant);
    return path;
}

/* A skin of the plugin's backend "test-rigid" on a five-joint bar (made into *bar). */
static sinew_skin add_rigid_skin(sinew_world* world, test_bar* bar)
{
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, test_bar_make(bar, 5), &rig), SINEW_OK);
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = rig;
    desc.backend = "test-rigid";
    sinew_skin skin;
    assert_int_equal(sinew_world_add_skin(world, &desc, &skin), SINEW_OK);
    return skin;
}

static void test_good_plugin_runs(void** state)
{
    (void)state;
    sinew_test_log_init(&g_log);
    sinew_world* world = sinew_test_world(&g_log, 2);
    uint32_t before = sinew_world_backend_count(world);
    assert_int_equal(sinew_world_load_plugin(world, plugin_path("good")), SINEW_OK);
    assert_int_equal(sinew_world_backend_count(world), before + 1);
    assert_int_equal(sinew_world_probe_backend(world, "test-rigid"), SINEW_OK);

    test_bar bar;
    sinew_skin skin = add_rigid_skin(world, &bar);
    float model[32];
    test_mat_identity(model);
    test_mat_identity(model + 16);
    model[12] = 3.0f; /* the root moves by 3 along x: so does every vertex */
    model[16 + 12] = 4.0f;
    sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
    pose.joint_count = 2;
    pose.matrices = model;
    assert_int_equal(sinew_skin_set_pose(world, skin, &pose), SINEW_OK);
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    float out[60];
    sinew_output_desc o = SINEW_OUTPUT_DESC_INIT;
    o.vertex_capacity = 20;
    o.positions = out;
    assert_int_equal(sinew_skin_read_output(world, skin, &o), SINEW_OK);
    for (int v = 0; v < 20; ++v) assert_float_equal(out[3 * v], bar.positions[3 * v] + 3.0f, 1e-6f);

    /* Swapping between a plugin backend and a built-in one works both ways. */
    assert_int_equal(sinew_skin_set_backend(world, skin, "lbs", NULL, 0), SINEW_OK);
    assert_int_equal(sinew_skin_wait_swap(world, skin), SINEW_OK);
    assert_int_equal(sinew_skin_set_backend(world, skin, "test-rigid", NULL, 0), SINEW_OK);
    assert_int_equal(sinew_skin_wait_swap(world, skin), SINEW_OK);
    /* The same plugin twice: its backend name is taken, nothing changes. */
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_world_load_plugin(world, plugin_path("good")), SINEW_ERROR_PLUGIN_ABI);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(sinew_world_backend_count(world), before + 1);
    sinew_world_destroy(world);
}

static void expect_refused(const char* variant, sinew_result code)
{
    sinew_test_log_init(&g_log);
    sinew_world* world = sinew_test_world(&g_log, 1);
    uint32_t before = sinew_world_backend_count(world);
    sinew_result r = sinew_world_load_plugin(world, variant ? plugin_path(variant)
                                                            : "/nonexistent/plugin.so");
    print_message("  %s -> %s: %s\n", variant ? variant : "missing file", sinew_result_string(r),
                  g_log.last);
    assert_int_equal(r, code);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(sinew_world_backend_count(world), before);
    assert_int_equal(sinew_world_probe_backend(world, "lbs"), SINEW_OK);
    sinew_world_destroy(world);
}

static void test_wrong_abi(void** state) { (void)state; expect_refused("wrong_abi", SINEW_ERROR_PLUGIN_ABI); }
static void test_null_table(void** state) { (void)state; expect_refused("null_table", SINEW_ERROR_PLUGIN_ABI); }
static void test_no_backends(void** state) { (void)state; expect_refused("no_backends", SINEW_ERROR_PLUGIN_ABI); }
static void test_short_table(void** state) { (void)state; expect_refused("short_table", SINEW_ERROR_PLUGIN_ABI); }
static void test_refusing_plugin(void** state) { (void)state; expect_refused("refuse", SINEW_ERROR_PLUGIN_ABI); }
static void test_duplicate_name(void** state) { (void)state; expect_refused("duplicate", SINEW_ERROR_PLUGIN_ABI); }
static void test_no_entry(void** state) { (void)state; expect_refused("no_entry", SINEW_ERROR_PLUGIN_LOAD); }
static void test_missing_file(void** state) { (void)state; expect_refused(NULL, SINEW_ERROR_PLUGIN_LOAD); }
/* A garbage backend_count is bounded before the array behind it is read. */
static void test_huge_count(void** state) { (void)state; expect_refused("huge_count", SINEW_ERROR_LIMIT); }

/* A description with no key is refused like any other malformed table. */
static void test_bad_params(void** state) { (void)state; expect_refused("bad_params", SINEW_ERROR_PLUGIN_ABI); }

/* Version 2 tables describe their parameters; a plugin built against version 1 (a table that
 * ends after bake) still loads, runs, and describes none. */
static void test_param_descriptions(void** state)
{
    (void)state;
    sinew_test_log_init(&g_log);
    sinew_world* world = sinew_test_world(&g_log, 1);
    assert_int_equal(sinew_world_load_plugin(world, plugin_path("good")), SINEW_OK);
    const sinew_param_info* info = NULL;
    uint32_t count = 0;
    assert_int_equal(sinew_world_backend_params(world, "test-rigid", &info, &count), SINEW_OK);
    assert_int_equal(count, 1);
    assert_string_equal(info[0].key, "scale");
    sinew_world_destroy(world);

    world = sinew_test_world(&g_log, 1);
    assert_int_equal(sinew_world_load_plugin(world, plugin_path("v1")), SINEW_OK);
    info = (const sinew_param_info*)&count;
    assert_int_equal(sinew_world_backend_params(world, "test-rigid", &info, &count), SINEW_OK);
    assert_int_equal(count, 0);
    assert_null(info);
    test_bar bar;
    (void)add_rigid_skin(world, &bar);
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_world_backend_params(world, "absent", &info, &count),
                     SINEW_ERROR_UNKNOWN_BACKEND);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(sinew_world_backend_params(world, "lbs", NULL, &count),
                     SINEW_ERROR_INVALID_ARGUMENT);
    sinew_world_destroy(world);
}

/* A step that returns a code of its own (777) reaches the caller of sinew_world_update as
 * BACKEND_FAILED, with one line naming the backend and the raw code. */
static void test_unknown_result(void** state)
{
    (void)state;
    sinew_test_log_init(&g_log);
    sinew_world* world = sinew_test_world(&g_log, 1);
    assert_int_equal(sinew_world_load_plugin(world, plugin_path("bad_result")), SINEW_OK);
    test_bar bar;
    sinew_skin skin = add_rigid_skin(world, &bar);
    sinew_test_log_reset(&g_log);
    sinew_result r = sinew_world_update(world, 1.0f / 60.0f);
    print_message("  update -> %s: %s\n", sinew_result_string(r), g_log.last);
    assert_int_equal(r, SINEW_ERROR_BACKEND_FAILED);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    assert_non_null(strstr(g_log.last, "test-rigid"));
    assert_non_null(strstr(g_log.last, "777"));
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_skin_update(world, skin, 1.0f / 60.0f), SINEW_ERROR_BACKEND_FAILED);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    sinew_world_destroy(world);
}

/* A bare file name is looked for along $SINEW_PLUGIN_PATH (empty and missing folders
 * skipped); a name found nowhere fails like a missing file. */
static void test_search_path(void** state)
{
    (void)state;
    sinew_test_log_init(&g_log);
    sinew_world* world = sinew_test_world(&g_log, 1);
    setenv("SINEW_PLUGIN_PATH", "/nonexistent::" PLUGIN_DIR, 1);
    assert_int_equal(sinew_world_load_plugin(world, "test_plugin_good.so"), SINEW_OK);
    assert_int_equal(sinew_world_probe_backend(world, "test-rigid"), SINEW_OK);
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_world_load_plugin(world, "test_plugin_absent.so"),
                     SINEW_ERROR_PLUGIN_LOAD);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    assert_non_null(strstr(g_log.last, "test_plugin_absent.so"));
    unsetenv("SINEW_PLUGIN_PATH");
    sinew_world_destroy(world);
}

/* Tables registered directly are held to the same rules. */
static sinew_result probe_ok(const sinew_host_api* host) { (void)host; return SINEW_OK; }

static void test_register_bad_table(void** state)
{
    (void)state;
    sinew_test_log_init(&g_log);
    sinew_world* world = sinew_test_world(&g_log, 1);
    sinew_backend_vtable vt;
    memset(&vt, 0, sizeof vt);
    vt.struct_size = sizeof vt;
    vt.name = "half";
    vt.probe = probe_ok;
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_world_register_backend(world, &vt), SINEW_ERROR_PLUGIN_ABI);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    assert_non_null(strstr(g_log.last, "prepare"));
    assert_int_equal(sinew_world_register_backend(world, NULL), SINEW_ERROR_PLUGIN_ABI);
    sinew_world_destroy(world);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_plugin_runs),
        cmocka_unit_test(test_wrong_abi),
        cmocka_unit_test(test_bad_params),
        cmocka_unit_test(test_param_descriptions),
        cmocka_unit_test(test_null_table),
        cmocka_unit_test(test_no_backends),
        cmocka_unit_test(test_short_table),
        cmocka_unit_test(test_refusing_plugin),
        cmocka_unit_test(test_duplicate_name),
        cmocka_unit_test(test_no_entry),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_search_path),
        cmocka_unit_test(test_huge_count),
        cmocka_unit_test(test_unknown_result),
        cmocka_unit_test(test_register_bad_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
