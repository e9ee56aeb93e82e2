/* Pose flags (sinew_pose_desc.flags, SINEW_POSE_DISCONTINUOUS) through the runtime: a
 * recording backend sees them in its sinew_pose_view at the next update, poses set between
 * two updates pass the flags of all of them, a desc of the first published size (without
 * flags) is accepted as flags 0, unknown bits are refused with one log line and leave the
 * previous pose, and a backend swap hands a pending flag to the new backend.
 * SPDX-License-Identifier: MIT */
#include <string.h>

#include <sinew/sinew_plugin.h>

#include "test_rigs.h"
#include "test_support.h"

/* What the recording backend saw in its last set_pose. */
typedef struct seen_pose {
    int calls;
    uint32_t struct_size;
    uint32_t flags;
    float first;      /* element 12 (x translation) of joint 0's skinning matrix */
} seen_pose;

static seen_pose g_seen;

typedef struct recorder {
    uint32_t n;
    float* positions;
} recorder;

static sinew_result rec_probe(const sinew_host_api* host) { (void)host; return SINEW_OK; }

static sinew_result rec_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                const sinew_param* params, uint32_t param_count,
                                const void* next, void** out)
{
    (void)host, (void)params, (void)param_count, (void)next;
    static recorder r;
    r.n = rig->render_mesh.vertex_count;
    r.positions = (float*)rig->render_mesh.positions;
    *out = &r;
    return SINEW_OK;
}

static sinew_result rec_set_pose(void* inst, const sinew_pose_view* pose)
{
    (void)inst;
    g_seen.calls++;
    g_seen.struct_size = pose->struct_size;
    g_seen.flags = pose->struct_size >= offsetof(sinew_pose_view, flags) + sizeof(uint32_t)
                       ? pose->flags : 0u;
    g_seen.first = pose->skinning_matrices[12];
    return SINEW_OK;
}

static sinew_result rec_step(void* inst, float dt) { (void)inst, (void)dt; return SINEW_OK; }

static sinew_result rec_read(void* inst, const sinew_output_view* out)
{
    recorder* r = (recorder*)inst;
    for (uint32_t v = 0; v < r->n; ++v)
        memcpy((char*)out->positions + v * out->position_stride, r->positions + 3u * v, 12);
    return SINEW_OK;
}

static sinew_result rec_bind(void* inst, const sinew_output_view* out)
{
    (void)inst, (void)out;
    return SINEW_OK;
}

static sinew_result rec_get_state(void* inst, const sinew_state_view* s)
{
    recorder* r = (recorder*)inst;
    memcpy(s->positions, r->positions, (size_t)s->vertex_count * 12u);
    if (s->velocities) memset(s->velocities, 0, (size_t)s->vertex_count * 12u);
    return SINEW_OK;
}

static sinew_result rec_set_state(void* inst, const sinew_state_view* s)
{
    (void)inst, (void)s;
    return SINEW_OK;
}

static void rec_destroy(void* inst) { (void)inst; }

static const sinew_backend_vtable g_recorder = {
    sizeof(sinew_backend_vtable), "test-recorder", SINEW_BACKEND_FLAG_PHYSICS, rec_probe,
    rec_prepare, rec_set_pose, rec_step, rec_read, rec_bind, rec_get_state, rec_set_state,
    rec_destroy, NULL, NULL, 0u};

static sinew_test_log g_log;
static sinew_world* g_world;
static test_bar g_bar;
static sinew_skin g_skin;
static float g_pose[32];

static int setup(void** state)
{
    (void)state;
    sinew_test_log_init(&g_log);
    g_world = sinew_test_world(&g_log, 1);
    assert_int_equal(sinew_world_register_backend(g_world, &g_recorder), SINEW_OK);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(g_world, test_bar_make(&g_bar, 5), &rig), SINEW_OK);
    sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
    sd.rig = rig;
    sd.backend = "test-recorder";
    assert_int_equal(sinew_world_add_skin(g_world, &sd, &g_skin), SINEW_OK);
    test_mat_identity(g_pose);
    test_mat_identity(g_pose + 16);
    memset(&g_seen, 0, sizeof g_seen);
    return 0;
}

static int teardown(void** state)
{
    (void)state;
    sinew_world_destroy(g_world);
    g_world = NULL;
    return 0;
}

/* Sets the model-space pose with joint 0 moved to x and the given flags. */
static sinew_result set_pose(float x, uint32_t flags)
{
    g_pose[12] = x;
    sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
    pd.joint_count = 2;
    pd.matrices = g_pose;
    pd.flags = flags;
    return sinew_skin_set_pose(g_world, g_skin, &pd);
}

static void update(void)
{
    assert_int_equal(sinew_world_update(g_world, 1.0f / 60.0f), SINEW_OK);
}

static void test_default_is_continuous(void** state)
{
    (void)state;
    sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
    assert_int_equal(pd.flags, 0u);
    assert_int_equal(set_pose(0.5f, 0u), SINEW_OK);
    update();
    assert_int_equal(g_seen.calls, 1);
    assert_true(g_seen.struct_size >= offsetof(sinew_pose_view, flags) + sizeof(uint32_t));
    assert_int_equal(g_seen.flags, 0u);
}

static void test_flag_reaches_the_backend_once(void** state)
{
    (void)state;
    assert_int_equal(set_pose(0.5f, 0u), SINEW_OK);
    update();
    assert_int_equal(set_pose(3.0f, SINEW_POSE_DISCONTINUOUS), SINEW_OK);
    update();
    assert_int_equal(g_seen.calls, 2);
    assert_int_equal(g_seen.flags, SINEW_POSE_DISCONTINUOUS);
    assert_true(g_seen.first == 3.0f);
    /* the next pose continues this one */
    assert_int_equal(set_pose(3.1f, 0u), SINEW_OK);
    update();
    assert_int_equal(g_seen.flags, 0u);
    /* an update without a new pose hands nothing over */
    update();
    assert_int_equal(g_seen.calls, 3);
}

static void test_flags_of_collapsed_poses(void** state)
{
    (void)state;
    assert_int_equal(set_pose(1.0f, SINEW_POSE_DISCONTINUOUS), SINEW_OK);
    assert_int_equal(set_pose(2.0f, 0u), SINEW_OK);
    update();
    assert_int_equal(g_seen.calls, 1);
    assert_true(g_seen.first == 2.0f);
    assert_int_equal(g_seen.flags, SINEW_POSE_DISCONTINUOUS);
}

static void test_first_published_size(void** state)
{
    (void)state;
    /* an older caller's desc ends before flags: whatever follows in memory is not read */
    sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
    g_pose[12] = 4.0f;
    pd.struct_size = (uint32_t)(offsetof(sinew_pose_desc, matrices) + sizeof(const float*));
    pd.joint_count = 2;
    pd.matrices = g_pose;
    pd.flags = 0xdeadbeefu;
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_skin_set_pose(g_world, g_skin, &pd), SINEW_OK);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 0);
    update();
    assert_true(g_seen.first == 4.0f);
    assert_int_equal(g_seen.flags, 0u);
}

static void test_unknown_bits_refused(void** state)
{
    (void)state;
    assert_int_equal(set_pose(1.0f, 0u), SINEW_OK);
    update();
    const uint32_t bad[] = {1u << 1, SINEW_POSE_DISCONTINUOUS | (1u << 5), 0x80000000u};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        sinew_test_log_reset(&g_log);
        assert_int_equal(set_pose(9.0f, bad[i]), SINEW_ERROR_INVALID_ARGUMENT);
        assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
        assert_non_null(strstr(g_log.last, "flags"));
    }
    /* the refused poses left the previous one: nothing new reaches the backend */
    update();
    assert_int_equal(g_seen.calls, 1);
    assert_true(g_seen.first == 1.0f);
}

static void test_swap_hands_the_flag_over(void** state)
{
    (void)state;
    assert_int_equal(set_pose(1.0f, 0u), SINEW_OK);
    update();
    assert_int_equal(set_pose(5.0f, SINEW_POSE_DISCONTINUOUS), SINEW_OK);
    /* the new instance gets the pending pose with its flag; the update has nothing more */
    assert_int_equal(sinew_skin_set_backend(g_world, g_skin, "test-recorder", NULL, 0), SINEW_OK);
    assert_int_equal(sinew_skin_wait_swap(g_world, g_skin), SINEW_OK);
    assert_int_equal(g_seen.calls, 2);
    assert_int_equal(g_seen.flags, SINEW_POSE_DISCONTINUOUS);
    assert_true(g_seen.first == 5.0f);
    update();
    assert_int_equal(g_seen.calls, 2);
    /* a swap without a pending pose passes the current pose without flags */
    assert_int_equal(sinew_skin_set_backend(g_world, g_skin, "test-recorder", NULL, 0), SINEW_OK);
    assert_int_equal(sinew_skin_wait_swap(g_world, g_skin), SINEW_OK);
    assert_int_equal(g_seen.calls, 3);
    assert_int_equal(g_seen.flags, 0u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_default_is_continuous, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flag_reaches_the_backend_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flags_of_collapsed_poses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_published_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_bits_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_swap_hands_the_flag_over, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
