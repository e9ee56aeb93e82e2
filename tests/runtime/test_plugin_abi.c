/* The plugin ABI: a backend built as a separate shared library is loaded, negotiated and run;
 * plugins with a wrong ABI, no entry point, a NULL or short table are refused without a
 * crash and without registering anything. Plugins built against versions 1, 2 and 3 load and
 * run; version 3's user pointers reach the backends and its service requests are checked
 * against what the world provides. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_bake.h>
#include <sinew/sinew_host.h>
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

/* A Vulkan service of the test's own: the runtime keeps and hands out the table, whatever it
 * holds. */
static int g_fake_context;

static struct sinew_vk_context* fake_context(const sinew_vk_service* service)
{
    (void)service;
    return (struct sinew_vk_context*)(void*)&g_fake_context;
}

static const sinew_vk_service g_fake_vk = {
    {(uint32_t)sizeof(sinew_vk_service), SINEW_VK_SERVICE_VERSION}, fake_context, NULL, NULL,
    NULL, NULL};

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
/* A version 3 answer with a service count and no array. */
static void test_bad_services(void** state) { (void)state; expect_refused("bad_services", SINEW_ERROR_PLUGIN_ABI); }
/* More service requests than a plugin may make (the array is not read past the bound). */
static void test_many_services(void** state) { (void)state; expect_refused("many_services", SINEW_ERROR_LIMIT); }

/* A version 3 plugin that needs a service the world does not provide (the Vulkan module's, in a
 * world without it; an id this host does not know) is refused with NO_SERVICE and one line
 * naming it, and nothing is registered; once the world provides the service, it loads. */
static void test_missing_service(void** state)
{
    (void)state;
    expect_refused("needs_vulkan", SINEW_ERROR_NO_SERVICE);
    assert_non_null(strstr(g_log.last, "vulkan"));
    expect_refused("unknown_service", SINEW_ERROR_NO_SERVICE);
    assert_non_null(strstr(g_log.last, "id 77"));

    sinew_test_log_init(&g_log);
    sinew_world* world = sinew_test_world(&g_log, 1);
    assert_int_equal(sinew_world_set_service(world, SINEW_SERVICE_VULKAN, &g_fake_vk), SINEW_OK);
    assert_int_equal(sinew_world_load_plugin(world, plugin_path("needs_vulkan")), SINEW_OK);
    assert_int_equal(sinew_world_probe_backend(world, "test-rigid"), SINEW_OK);
    test_bar bar;
    (void)add_rigid_skin(world, &bar);
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 0);
    sinew_world_destroy(world);
}

/* A plugin built against version 2 (an answer that ends after its tables) loads, runs, swaps
 * and describes its parameters; its backend gets no user pointer, whatever lies beyond its
 * answer (the backend refuses to probe or prepare otherwise). */
static void test_v2_plugin(void** state)
{
    (void)state;
    sinew_test_log_init(&g_log);
    sinew_world* world = sinew_test_world(&g_log, 1);
    assert_int_equal(sinew_world_load_plugin(world, plugin_path("v2")), SINEW_OK);
    assert_int_equal(sinew_world_probe_backend(world, "test-rigid"), SINEW_OK);
    const sinew_param_info* info = NULL;
    uint32_t count = 0;
    assert_int_equal(sinew_world_backend_params(world, "test-rigid", &info, &count), SINEW_OK);
    assert_int_equal(count, 1);
    test_bar bar;
    sinew_skin skin = add_rigid_skin(world, &bar);
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    assert_int_equal(sinew_skin_set_backend(world, skin, "lbs", NULL, 0), SINEW_OK);
    assert_int_equal(sinew_skin_wait_swap(world, skin), SINEW_OK);
    assert_int_equal(sinew_skin_set_backend(world, skin, "test-rigid", NULL, 0), SINEW_OK);
    assert_int_equal(sinew_skin_wait_swap(world, skin), SINEW_OK);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 0);
    sinew_world_destroy(world);
}

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

/* A backend registered with a user pointer, that records the host api it is handed. */
typedef struct spy_seen {
    const sinew_host_api* probe_host;
    const sinew_host_api* prepare_host;
    const sinew_host_api* bake_host;
} spy_seen;

static spy_seen g_spy;
static int g_spy_instance;

static sinew_result spy_probe(const sinew_host_api* host)
{
    g_spy.probe_host = host;
    return SINEW_OK;
}

static sinew_result spy_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                const sinew_param* params, uint32_t param_count, const void* next,
                                void** out)
{
    (void)rig, (void)params, (void)param_count, (void)next;
    g_spy.prepare_host = host;
    *out = &g_spy_instance;
    return SINEW_OK;
}

static sinew_result spy_set_pose(void* inst, const sinew_pose_view* p) { (void)inst, (void)p; return SINEW_OK; }
static sinew_result spy_step(void* inst, float dt) { (void)inst, (void)dt; return SINEW_OK; }
static sinew_result spy_output(void* inst, const sinew_output_view* o) { (void)inst, (void)o; return SINEW_OK; }
static sinew_result spy_state(void* inst, const sinew_state_view* s) { (void)inst, (void)s; return SINEW_OK; }
static void spy_destroy(void* inst) { (void)inst; }

static sinew_result spy_bake(const sinew_host_api* host, const sinew_rig_view* rig,
                             const sinew_param* params, uint32_t param_count,
                             const sinew_bake_writer* writer)
{
    (void)rig, (void)params, (void)param_count;
    g_spy.bake_host = host;
    return writer->write("spy", 3, writer->user);
}

static const sinew_backend_vtable g_spy_table = {
    (uint32_t)sizeof(sinew_backend_vtable), "test-spy", 0u, spy_probe, spy_prepare, spy_set_pose,
    spy_step, spy_output, spy_output, spy_state, spy_state, spy_destroy, spy_bake, NULL, 0u};

/* The user pointer given at registration comes back in probe, prepare (also on a swap's
 * thread) and bake, in a host api of version 3 whose get_service finds the world's tables. */
static void test_register_with_user(void** state)
{
    (void)state;
    sinew_test_log_init(&g_log);
    sinew_world* world = sinew_test_world(&g_log, 1);
    int user = 0;
    memset(&g_spy, 0, sizeof g_spy);
    assert_int_equal(sinew_world_register_backend_with_user(NULL, &g_spy_table, &user),
                     SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sinew_world_register_backend_with_user(world, NULL, &user),
                     SINEW_ERROR_PLUGIN_ABI);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(sinew_world_register_backend_with_user(world, &g_spy_table, &user), SINEW_OK);
    assert_int_equal(sinew_world_probe_backend(world, "test-spy"), SINEW_OK);
    const sinew_host_api* host = g_spy.probe_host;
    assert_non_null(host);
    assert_true(host->struct_size >= SINEW_HOST_API_SIZE_V3);
    assert_int_equal(host->services_version, SINEW_HOST_SERVICES_VERSION);
    assert_ptr_equal(sinew_host_backend_user(host), &user);

    /* the world's service tables, asked for through the host */
    const void* table = &user;
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_host_get_service(host, SINEW_SERVICE_VULKAN, 1u, &table),
                     SINEW_ERROR_NO_SERVICE);
    assert_null(table);
    assert_int_equal(sinew_world_set_service(world, SINEW_SERVICE_VULKAN, &g_fake_vk), SINEW_OK);
    assert_int_equal(host->get_service(host, SINEW_SERVICE_VULKAN, 1u, &table), SINEW_OK);
    assert_ptr_equal(table, &g_fake_vk);
    assert_ptr_equal(((const sinew_vk_service*)table)->context(table), &g_fake_context);
    assert_int_equal(host->get_service(host, 77u, 1u, &table), SINEW_ERROR_NO_SERVICE);
    assert_int_equal(g_log.total, 0);
    assert_int_equal(host->get_service(host, SINEW_SERVICE_VULKAN, 1u, NULL),
                     SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);

    /* prepare, directly and on a swap's thread, and bake get the same host */
    test_bar bar;
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, test_bar_make(&bar, 5), &rig), SINEW_OK);
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = rig;
    sinew_skin skin;
    assert_int_equal(sinew_world_add_skin(world, &desc, &skin), SINEW_OK);
    assert_int_equal(sinew_skin_set_backend(world, skin, "test-spy", NULL, 0), SINEW_OK);
    assert_int_equal(sinew_skin_wait_swap(world, skin), SINEW_OK);
    assert_ptr_equal(g_spy.prepare_host, host);
    char baked[1024];
    snprintf(baked, sizeof baked, "%s/test_plugin_abi_spy.sinew", PLUGIN_DIR);
    assert_int_equal(sinew_bake_write(world, rig, "test-spy", NULL, 0, baked), SINEW_OK);
    assert_ptr_equal(g_spy.bake_host, host);
    remove(baked);
    sinew_world_destroy(world);
}

/* sinew_world_set_service and sinew_world_get_service: a question gets NO_SERVICE without a
 * line; bad input its code and one line, leaving the table in place. */
static void test_service_tables(void** state)
{
    (void)state;
    sinew_test_log_init(&g_log);
    sinew_world* world = sinew_test_world(&g_log, 1);
    const void* table = &g_log;
    assert_int_equal(sinew_world_get_service(world, SINEW_SERVICE_VULKAN, 0u, &table),
                     SINEW_ERROR_NO_SERVICE);
    assert_null(table);
    assert_int_equal(sinew_world_set_service(world, SINEW_SERVICE_VULKAN, &g_fake_vk), SINEW_OK);
    assert_int_equal(sinew_world_get_service(world, SINEW_SERVICE_VULKAN, 1u, &table), SINEW_OK);
    assert_ptr_equal(table, &g_fake_vk);
    assert_int_equal(sinew_world_get_service(world, SINEW_SERVICE_VULKAN, 2u, &table),
                     SINEW_ERROR_NO_SERVICE);
    assert_int_equal(g_log.total, 0);

    sinew_vk_service short_table = g_fake_vk;
    short_table.header.struct_size = (uint32_t)sizeof(sinew_service_header);
    sinew_vk_service version0 = g_fake_vk;
    version0.header.version = 0;
    struct { sinew_service_id id; const void* table; sinew_result code; } bad[3] = {
        {(sinew_service_id)77, &g_fake_vk, SINEW_ERROR_INVALID_ARGUMENT},
        {SINEW_SERVICE_VULKAN, &short_table, SINEW_ERROR_STRUCT_SIZE},
        {SINEW_SERVICE_VULKAN, &version0, SINEW_ERROR_INVALID_ARGUMENT}};
    for (int i = 0; i < 3; ++i) {
        sinew_test_log_reset(&g_log);
        assert_int_equal(sinew_world_set_service(world, bad[i].id, bad[i].table), bad[i].code);
        print_message("  %s: %s\n", sinew_result_string(bad[i].code), g_log.last);
        assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    }
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_world_get_service(world, SINEW_SERVICE_VULKAN, 1u, NULL),
                     SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(sinew_world_set_service(NULL, SINEW_SERVICE_VULKAN, &g_fake_vk),
                     SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sinew_world_get_service(NULL, SINEW_SERVICE_VULKAN, 1u, &table),
                     SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sinew_world_get_service(world, SINEW_SERVICE_VULKAN, 1u, &table), SINEW_OK);
    assert_ptr_equal(table, &g_fake_vk);
    assert_int_equal(sinew_world_set_service(world, SINEW_SERVICE_VULKAN, NULL), SINEW_OK);
    assert_int_equal(sinew_world_get_service(world, SINEW_SERVICE_VULKAN, 1u, &table),
                     SINEW_ERROR_NO_SERVICE);
    sinew_world_destroy(world);
}

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
        cmocka_unit_test(test_v2_plugin),
        cmocka_unit_test(test_missing_service),
        cmocka_unit_test(test_bad_services),
        cmocka_unit_test(test_many_services),
        cmocka_unit_test(test_register_with_user),
        cmocka_unit_test(test_service_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
