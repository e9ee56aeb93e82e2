/* Backend parameters as data: the shared parser (backends/common/sinew_params.h) on a table of
 * every type, and each built-in backend's description through sinew_world_backend_params held
 * to what its prepare does: every default given explicitly, as text and as typed values, is
 * accepted and steps to the same bits as no parameters, and a value outside each described
 * range or choice is refused; the same for the Vulkan module's compute backends where a Vulkan
 * device is there. SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_import.h>
#if defined(SINEW_TEST_HAVE_VULKAN)
#include <sinew/sinew_vulkan.h>
#endif

#include "sinew_params.h"
#include "test_support.h"

typedef struct sample_params {
    int flag;
    uint32_t count;
    double real;
    int choice;
    char text[8];
} sample_params;

static const int g_choice_values[3] = {10, 20, 30};
static const sinew_param_info g_info[5] = {
    {"flag", SINEW_PARAM_FLAG, 0u, 0.0, 1.0, "0", NULL, "a flag"},
    {"count", SINEW_PARAM_INTEGER, 0u, 1.0, 100.0, "5", NULL, "a count"},
    {"real", SINEW_PARAM_REAL, SINEW_PARAM_MIN_OPEN, 0.0, 1.0, "0.5", NULL, "in (0, 1]"},
    {"choice", SINEW_PARAM_CHOICE, 0u, 0.0, 0.0, "b", "a|b|cc", "a word"},
    {"text", SINEW_PARAM_TEXT, 0u, 0.0, 5.0, "", NULL, "at most 5 bytes"}};
static const sinew_param_slot g_slots[5] = {
    {offsetof(sample_params, flag), SINEW_STORE_INT, sizeof(int), NULL},
    {offsetof(sample_params, count), SINEW_STORE_U32, sizeof(uint32_t), NULL},
    {offsetof(sample_params, real), SINEW_STORE_DOUBLE, sizeof(double), NULL},
    {offsetof(sample_params, choice), SINEW_STORE_INT, sizeof(int), g_choice_values},
    {offsetof(sample_params, text), SINEW_STORE_TEXT, 8u, NULL}};

static sinew_test_log g_log;

static sinew_result parse(const sinew_param* params, uint32_t count, sample_params* out)
{
    sinew_host_api host;
    memset(&host, 0, sizeof host);
    host.struct_size = sizeof host;
    host.logger = g_log.logger;
    host.log_level = SINEW_LOG_DEBUG;
    memset(out, 0, sizeof *out);
    sinew_test_log_reset(&g_log);
    return sinew_params_parse(&host, "test", g_info, g_slots, 5u, params, count, NULL, out);
}

static void expect_refused(const char* key, const char* value)
{
    sinew_param p = {key, value};
    sample_params out;
    assert_int_equal(parse(&p, 1, &out), SINEW_ERROR_PARAMETER);
    assert_int_equal(g_log.total, 1);
    assert_non_null(strstr(g_log.last, "test: "));
}

static void test_parser(void** state)
{
    (void)state;
    sinew_test_log_init(&g_log);
    const sinew_param good[5] = {
        {"flag", "1"}, {"count", "100"}, {"real", "1e-3"}, {"choice", "cc"}, {"text", "abcde"}};
    sample_params out;
    assert_int_equal(parse(good, 5, &out), SINEW_OK);
    assert_int_equal(out.flag, 1);
    assert_int_equal(out.count, 100);
    assert_true(out.real == 1e-3);
    assert_int_equal(out.choice, 30);
    assert_string_equal(out.text, "abcde");
    assert_int_equal(g_log.total, 0);
    const char* bad[][2] = {{"flag", "2"},    {"flag", "true"}, {"count", "0"},
                            {"count", "101"}, {"count", "2.5"}, {"real", "0"},
                            {"real", "1.01"}, {"real", "x"},    {"choice", "c"},
                            {"choice", ""},   {"text", ""},     {"text", "abcdef"},
                            {"nokey", "1"},   {"real", "0,5"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) expect_refused(bad[i][0], bad[i][1]);
    const sinew_param twice[2] = {{"count", "3"}, {"count", "4"}};
    assert_int_equal(parse(twice, 2, &out), SINEW_ERROR_PARAMETER);
    assert_non_null(strstr(g_log.last, "twice"));
    const sinew_param null_value[1] = {{"count", NULL}};
    assert_int_equal(parse(null_value, 1, &out), SINEW_ERROR_PARAMETER);
    assert_int_equal(parse(NULL, 1, &out), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(parse(NULL, 0, &out), SINEW_OK);
}

/* ---- the built-in backends against their descriptions ---- */

static sinew_world* g_world;
static sinew_character* g_cylinder;
static sinew_rig g_rig;

/* A skin of `backend` with `params`, stepped through the cylinder's animation; its positions
 * into out (NULL: only the result of adding it). */
static sinew_result run_skin(const char* backend, const sinew_param* params, uint32_t count,
                             const void* next, float* out)
{
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.next = next;
    desc.rig = g_rig;
    desc.backend = backend;
    desc.params = params;
    desc.param_count = count;
    sinew_skin skin;
    sinew_result r = sinew_world_add_skin(g_world, &desc, &skin);
    if (r != SINEW_OK || !out) {
        if (r == SINEW_OK) sinew_world_remove_skin(g_world, skin);
        return r;
    }
    const sinew_animation* anim = &g_cylinder->animations[0];
    uint32_t joints = g_cylinder->rig.skeleton.joint_count;
    float* local = malloc(sizeof(float) * 16u * joints);
    assert_non_null(local);
    for (int f = 0; f < 20; ++f) {
        assert_int_equal(sinew_animation_sample(anim, (float)f / 60.0f, 0, local), SINEW_OK);
        sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
        pose.joint_count = joints;
        pose.matrices = local;
        pose.space = SINEW_POSE_LOCAL;
        assert_int_equal(sinew_skin_set_pose(g_world, skin, &pose), SINEW_OK);
        assert_int_equal(sinew_skin_update(g_world, skin, 1.0f / 60.0f), SINEW_OK);
    }
    free(local);
    sinew_output_desc od = SINEW_OUTPUT_DESC_INIT;
    od.vertex_capacity = g_cylinder->rig.render_mesh.vertex_count;
    od.positions = out;
    assert_int_equal(sinew_skin_read_output(g_world, skin, &od), SINEW_OK);
    assert_int_equal(sinew_world_remove_skin(g_world, skin), SINEW_OK);
    return SINEW_OK;
}

/* The description itself: unique keys, and each default inside what the key accepts. */
static void check_description(const char* backend, const sinew_param_info* info, uint32_t count)
{
    assert_true(count > 0);
    for (uint32_t i = 0; i < count; ++i) {
        const sinew_param_info* p = &info[i];
        assert_non_null(p->key);
        assert_non_null(p->doc);
        for (uint32_t k = 0; k < i; ++k) assert_string_not_equal(p->key, info[k].key);
        assert_true(p->min <= p->max);
        if (p->type == SINEW_PARAM_CHOICE) {
            assert_non_null(p->choices);
            uint32_t index;
            assert_true(!p->default_value || sinew_param_choice(p->choices, p->default_value, &index));
        }
        if (p->default_value && (p->type == SINEW_PARAM_INTEGER || p->type == SINEW_PARAM_REAL)) {
            double v = strtod(p->default_value, NULL);
            if (!(v >= p->min && v <= p->max)) fail_msg("%s: %s's default %s is out of range", backend, p->key, p->default_value);
        }
    }
}

/* A value the key refuses: below its range, a word that is none of its choices, "2" for a
 * flag; NULL for text (checked against the rig, not the description). */
static const char* refused_value(const sinew_param_info* p, char* buf, size_t size)
{
    switch (p->type) {
    case SINEW_PARAM_FLAG:
        return "2";
    case SINEW_PARAM_INTEGER:
    case SINEW_PARAM_REAL:
        snprintf(buf, size, "%.17g", (p->flags & SINEW_PARAM_MIN_OPEN) ? p->min : p->min - 1.0);
        return buf;
    case SINEW_PARAM_CHOICE:
        return "no-such-word";
    default:
        return NULL;
    }
}

static void check_backend(const char* backend)
{
    const sinew_param_info* info = NULL;
    uint32_t count = 0;
    assert_int_equal(sinew_world_backend_params(g_world, backend, &info, &count), SINEW_OK);
    check_description(backend, info, count);
    sinew_param* all = calloc(count, sizeof *all);
    sinew_param_value* typed = calloc(count, sizeof *typed);
    assert_true(all && typed);
    uint32_t given = 0;
    for (uint32_t i = 0; i < count; ++i) {
        const char* d = info[i].default_value;
        if (!d || !d[0]) continue;
        int number = info[i].type != SINEW_PARAM_CHOICE && info[i].type != SINEW_PARAM_TEXT;
        typed[given] = (sinew_param_value){info[i].key, number ? strtod(d, NULL) : 0.0,
                                           number ? NULL : d};
        all[given++] = (sinew_param){info[i].key, d};
    }
    sinew_backend_params_ext ext = SINEW_BACKEND_PARAMS_EXT_INIT;
    ext.values = typed;
    ext.count = given;
    size_t n3 = (size_t)g_cylinder->rig.render_mesh.vertex_count * 3u;
    float* plain = malloc(n3 * sizeof(float));
    float* explicit_defaults = malloc(n3 * sizeof(float));
    assert_true(plain && explicit_defaults);
    assert_int_equal(run_skin(backend, NULL, 0, NULL, plain), SINEW_OK);
    assert_int_equal(run_skin(backend, all, given, NULL, explicit_defaults), SINEW_OK);
    assert_memory_equal(plain, explicit_defaults, n3 * sizeof(float));
    assert_int_equal(run_skin(backend, NULL, 0, &ext, explicit_defaults), SINEW_OK);
    assert_memory_equal(plain, explicit_defaults, n3 * sizeof(float));
    print_message("%s: %u keys described, %u defaults given explicitly (as text and typed) step "
                  "to the same bits\n", backend, count, given);
    for (uint32_t i = 0; i < count; ++i) {
        char buf[64];
        const char* value = refused_value(&info[i], buf, sizeof buf);
        if (!value) continue;
        sinew_param p = {info[i].key, value};
        if (run_skin(backend, &p, 1, NULL, NULL) != SINEW_ERROR_PARAMETER)
            fail_msg("%s: %s=%s was not refused", backend, info[i].key, value);
    }
    free(plain);
    free(explicit_defaults);
    free(all);
    free(typed);
}

/* The cylinder's rig in a fresh world of two threads (g_world, g_rig). */
static void open_world(void)
{
    sinew_test_log_init(&g_log);
    assert_int_equal(sinew_import_character(
                         sinew_test_data_path("characters/cylinder/cylinder.ini"), NULL,
                         &g_cylinder), SINEW_OK);
    g_world = sinew_test_world(&g_log, 2);
    assert_int_equal(sinew_rig_create(g_world, &g_cylinder->rig, &g_rig), SINEW_OK);
}

static void close_world(void)
{
    sinew_world_destroy(g_world);
    sinew_import_free(g_cylinder);
}

static void check_backends(const char* const* backends, size_t count)
{
    for (size_t b = 0; b < count; ++b) {
        if (sinew_world_probe_backend(g_world, backends[b]) != SINEW_OK) {
            print_message("%s is not built here\n", backends[b]);
            continue;
        }
        check_backend(backends[b]);
    }
}

static void test_builtin_backends(void** state)
{
    (void)state;
    open_world();
    const char* backends[] = {"lbs", "dqs", "ps", "fps", "pbd"};
    check_backends(backends, sizeof backends / sizeof backends[0]);
    close_world();
}

/* vk-lbs, vk-dqs and vk-pbd on the first Vulkan device (lavapipe without a GPU). */
static void test_vulkan_backends(void** state)
{
    (void)state;
#if defined(SINEW_TEST_HAVE_VULKAN)
    open_world();
    sinew_vk_context_desc cd = SINEW_VK_CONTEXT_DESC_INIT;
    cd.logger = &g_log.logger;
    sinew_vk_context* ctx = NULL;
    sinew_result r = sinew_vk_context_create(&cd, &ctx);
    if (r == SINEW_OK) {
        assert_int_equal(sinew_vk_register_backends(g_world, ctx), SINEW_OK);
        const char* backends[] = {"vk-lbs", "vk-dqs", "vk-pbd"};
        check_backends(backends, sizeof backends / sizeof backends[0]);
    } else {
        print_message("no Vulkan device (%s): the compute backends are not checked\n",
                      sinew_result_string(r));
    }
    close_world();
    sinew_vk_context_destroy(ctx);
#else
    print_message("this build has no Vulkan module\n");
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parser),
        cmocka_unit_test(test_builtin_backends),
        cmocka_unit_test(test_vulkan_backends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
