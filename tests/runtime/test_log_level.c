/* The world's log_level: a line passes when its level is at or below the world's, for every
 * level including ERROR (errors only), and backends see the same filter through the host.
 * SPDX-License-Identifier: MIT */
#include <string.h>

#include <sinew/sinew_host.h>

#include "test_support.h"

#define PROBE_TAG "log-level probe"

/* Lines of the probe below, counted per level; the runtime's own lines are not counted. */
static int g_counts[4];

static void count_line(sinew_log_level level, const char* message, void* user)
{
    (void)user;
    if (strncmp(message, PROBE_TAG, strlen(PROBE_TAG)) == 0 && (unsigned)level < 4u)
        g_counts[level]++;
}

/* Logs one line at each level through the host's filter, as every backend does. */
static sinew_result probe_logs(const sinew_host_api* host)
{
    sinew_host_log(host, SINEW_LOG_ERROR, "%s: error", PROBE_TAG);
    sinew_host_log(host, SINEW_LOG_WARNING, "%s: warning", PROBE_TAG);
    sinew_host_log(host, SINEW_LOG_INFO, "%s: info", PROBE_TAG);
    sinew_host_log(host, SINEW_LOG_DEBUG, "%s: debug", PROBE_TAG);
    return SINEW_OK;
}

static sinew_result prepare_none(const sinew_host_api* host, const sinew_rig_view* rig,
                                 const sinew_param* params, uint32_t param_count,
                                 const void* next, void** out_instance)
{
    (void)host; (void)rig; (void)params; (void)param_count; (void)next;
    *out_instance = NULL;
    return SINEW_ERROR_UNSUPPORTED;
}
static sinew_result set_pose_none(void* instance, const sinew_pose_view* pose)
{ (void)instance; (void)pose; return SINEW_OK; }
static sinew_result step_none(void* instance, float dt) { (void)instance; (void)dt; return SINEW_OK; }
static sinew_result output_none(void* instance, const sinew_output_view* out)
{ (void)instance; (void)out; return SINEW_OK; }
static sinew_result state_none(void* instance, const sinew_state_view* state)
{ (void)instance; (void)state; return SINEW_OK; }
static void destroy_none(void* instance) { (void)instance; }

static const sinew_backend_vtable g_logging_backend = {
    .struct_size = (uint32_t)sizeof(sinew_backend_vtable),
    .name = "log-level-probe",
    .probe = probe_logs,
    .prepare = prepare_none,
    .set_pose = set_pose_none,
    .step = step_none,
    .read_output = output_none,
    .bind_output = output_none,
    .get_state = state_none,
    .set_state = state_none,
    .destroy = destroy_none,
};

/* A world at `level` passes exactly the probe's lines at or below it. */
static void expect_filter(sinew_log_level level)
{
    sinew_logger logger = { count_line, NULL };
    sinew_world_desc desc = SINEW_WORLD_DESC_INIT;
    desc.logger = &logger;
    desc.thread_count = 1;
    desc.log_level = level;
    sinew_world* world = NULL;
    assert_int_equal(sinew_world_create(&desc, &world), SINEW_OK);
    assert_int_equal(sinew_world_register_backend(world, &g_logging_backend), SINEW_OK);
    memset(g_counts, 0, sizeof g_counts);
    assert_int_equal(sinew_world_probe_backend(world, "log-level-probe"), SINEW_OK);
    for (int k = 0; k < 4; ++k) {
        print_message("  world at %d: level %d lines %d\n", (int)level, k, g_counts[k]);
        assert_int_equal(g_counts[k], k <= (int)level ? 1 : 0);
    }
    sinew_world_destroy(world);
}

static void test_error_keeps_errors_only(void** state)
{
    (void)state;
    expect_filter(SINEW_LOG_ERROR);
}

static void test_every_level(void** state)
{
    (void)state;
    expect_filter(SINEW_LOG_WARNING);
    expect_filter(SINEW_LOG_INFO);
    expect_filter(SINEW_LOG_DEBUG);
}

/* SINEW_WORLD_DESC_INIT's default is WARNING. */
static void test_default_is_warning(void** state)
{
    (void)state;
    sinew_world_desc desc = SINEW_WORLD_DESC_INIT;
    assert_int_equal(desc.log_level, SINEW_LOG_WARNING);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_keeps_errors_only),
        cmocka_unit_test(test_every_level),
        cmocka_unit_test(test_default_is_warning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
