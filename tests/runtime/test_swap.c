/* Backend swaps prepared in the background (runtime/swap.c) with a test backend whose
 * preparation waits for a gate the test opens: sinew_skin_set_backend returns while it waits,
 * the old backend goes on stepping and writing, the status says BUSY, a second swap is BUSY;
 * once the preparation ends an update switches over (from the old backend's shape, with the
 * pose); a parallel_for issued by the preparation runs on its own thread; a failed
 * preparation keeps the old backend and reports its error; removing a skin and destroying the
 * world wait for a preparation still running. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sinew/sinew_host.h>
#include <sinew/sinew_plugin.h>

#include "test_rigs.h"
#include "test_support.h"

/* The gate and what the gated backend saw. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_open_cond = PTHREAD_COND_INITIALIZER;
static int g_open;
static int g_prepares, g_destroys, g_set_states, g_inline_chunks;
static pthread_t g_caller;
static int g_prepared_elsewhere;

typedef struct gated {
    uint32_t n;
    float* positions;
} gated;

static void count_chunk(void* data, uint32_t begin, uint32_t end)
{
    (void)data;
    if (begin == 0 && end == 64u) g_inline_chunks++; /* one chunk: run inline */
}

static sinew_result gate_probe(const sinew_host_api* host) { (void)host; return SINEW_OK; }

static sinew_result gate_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                 const sinew_param* params, uint32_t param_count,
                                 const void* next, void** out)
{
    (void)next;
    pthread_mutex_lock(&g_lock);
    while (!g_open) pthread_cond_wait(&g_open_cond, &g_lock);
    g_prepares++;
    g_prepared_elsewhere = !pthread_equal(pthread_self(), g_caller);
    pthread_mutex_unlock(&g_lock);
    sinew_host_parallel_for(host, count_chunk, NULL, 64u, 1u);
    if (param_count > 0 && strcmp(params[0].key, "fail") == 0)
        return sinew_host_fail(host, SINEW_ERROR_PARAMETER, "test-gated: told to fail");
    gated* g = (gated*)calloc(1, sizeof *g);
    if (!g) return SINEW_ERROR_OUT_OF_MEMORY;
    g->n = rig->render_mesh.vertex_count;
    g->positions = (float*)calloc(g->n, 12u);
    *out = g;
    return SINEW_OK;
}

static sinew_result gate_set_pose(void* inst, const sinew_pose_view* pose)
{
    (void)inst, (void)pose;
    return SINEW_OK;
}

static sinew_result gate_step(void* inst, float dt) { (void)inst, (void)dt; return SINEW_OK; }

static sinew_result gate_read(void* inst, const sinew_output_view* out)
{
    gated* g = (gated*)inst;
    for (uint32_t v = 0; v < g->n; ++v)
        memcpy((char*)out->positions + v * out->position_stride, g->positions + 3u * v, 12);
    return SINEW_OK;
}

static sinew_result gate_bind(void* inst, const sinew_output_view* out)
{
    (void)inst, (void)out;
    return SINEW_OK;
}

static sinew_result gate_get_state(void* inst, const sinew_state_view* s)
{
    gated* g = (gated*)inst;
    memcpy(s->positions, g->positions, (size_t)s->vertex_count * 12u);
    if (s->velocities) memset(s->velocities, 0, (size_t)s->vertex_count * 12u);
    return SINEW_OK;
}

static sinew_result gate_set_state(void* inst, const sinew_state_view* s)
{
    gated* g = (gated*)inst;
    memcpy(g->positions, s->positions, (size_t)s->vertex_count * 12u);
    g_set_states++;
    return SINEW_OK;
}

static void gate_destroy(void* inst)
{
    gated* g = (gated*)inst;
    free(g->positions);
    free(g);
    g_destroys++;
}

static const sinew_backend_vtable g_gated = {
    sizeof(sinew_backend_vtable), "test-gated", 0u, gate_probe, gate_prepare, gate_set_pose,
    gate_step, gate_read, gate_bind, gate_get_state, gate_set_state, gate_destroy, NULL, NULL,
    0u};

static void open_gate(void)
{
    pthread_mutex_lock(&g_lock);
    g_open = 1;
    pthread_cond_broadcast(&g_open_cond);
    pthread_mutex_unlock(&g_lock);
}

static sinew_test_log g_log;
static sinew_world* g_world;
static test_bar g_bar;
static sinew_skin g_skin;

static int setup(void** state)
{
    (void)state;
    g_open = 0;
    g_prepares = g_destroys = g_set_states = g_inline_chunks = g_prepared_elsewhere = 0;
    g_caller = pthread_self();
    sinew_test_log_init(&g_log);
    g_world = sinew_test_world(&g_log, 2);
    assert_int_equal(sinew_world_register_backend(g_world, &g_gated), SINEW_OK);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(g_world, test_bar_make(&g_bar, 5), &rig), SINEW_OK);
    sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
    sd.rig = rig;
    sd.backend = "lbs";
    assert_int_equal(sinew_world_add_skin(g_world, &sd, &g_skin), SINEW_OK);
    return 0;
}

static int teardown(void** state)
{
    (void)state;
    open_gate();
    sinew_world_destroy(g_world);
    g_world = NULL;
    return 0;
}

/* The bar bent by a quarter turn about z at its joint (x = 1), and one update. */
static void bend_and_update(void)
{
    float pose[32];
    test_mat_identity(pose);
    test_mat_rotation_z(pose + 16, 1.57079632679f, 1.0f, 0.0f, 0.0f);
    sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
    pd.joint_count = 2;
    pd.matrices = pose;
    assert_int_equal(sinew_skin_set_pose(g_world, g_skin, &pd), SINEW_OK);
    assert_int_equal(sinew_world_update(g_world, 1.0f / 60.0f), SINEW_OK);
}

static void read_output(float* positions)
{
    sinew_output_desc od = SINEW_OUTPUT_DESC_INIT;
    od.vertex_capacity = g_bar.desc.render_mesh.vertex_count;
    od.positions = positions;
    assert_int_equal(sinew_skin_read_output(g_world, g_skin, &od), SINEW_OK);
}

/* Updates until the pending swap is gone (a preparation that ended switches at an update). */
static void update_until_swapped(void)
{
    for (int i = 0; i < 10000 && sinew_skin_swap_status(g_world, g_skin) == SINEW_ERROR_BUSY; ++i) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        assert_int_equal(sinew_world_update(g_world, 1.0f / 60.0f), SINEW_OK);
    }
}

static void test_old_backend_steps_while_pending(void** state)
{
    (void)state;
    assert_int_equal(sinew_skin_swap_status(g_world, g_skin), SINEW_OK); /* none asked for */
    assert_int_equal(sinew_skin_set_backend(g_world, g_skin, "test-gated", NULL, 0), SINEW_OK);
    assert_int_equal(sinew_skin_swap_status(g_world, g_skin), SINEW_ERROR_BUSY);
    assert_string_equal(sinew_skin_backend(g_world, g_skin), "lbs");
    /* lbs goes on posing the bar */
    float bent[120];
    bend_and_update();
    read_output(bent);
    assert_string_equal(sinew_skin_backend(g_world, g_skin), "lbs");
    assert_true(memcmp(bent, g_bar.desc.render_mesh.positions, sizeof(float) * 3u * 20u) != 0);
    /* one swap at a time */
    int errors = g_log.count[SINEW_LOG_ERROR];
    assert_int_equal(sinew_skin_set_backend(g_world, g_skin, "dqs", NULL, 0), SINEW_ERROR_BUSY);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], errors + 1);
    open_gate();
    update_until_swapped();
    assert_int_equal(sinew_skin_swap_status(g_world, g_skin), SINEW_OK);
    assert_string_equal(sinew_skin_backend(g_world, g_skin), "test-gated");
    /* the new backend took the shape lbs had, on a thread of its own, with its parallel_for
     * run there in one chunk */
    float got[120];
    read_output(got);
    assert_memory_equal(got, bent, sizeof(float) * 3u * 20u);
    assert_int_equal(g_set_states, 1);
    assert_true(g_prepared_elsewhere);
    assert_int_equal(g_inline_chunks, 1);
}

static void test_failed_preparation_keeps_the_old_backend(void** state)
{
    (void)state;
    sinew_param fail[1] = {{"fail", "1"}};
    assert_int_equal(sinew_skin_set_backend(g_world, g_skin, "test-gated", fail, 1), SINEW_OK);
    open_gate();
    assert_int_equal(sinew_skin_wait_swap(g_world, g_skin), SINEW_ERROR_PARAMETER);
    assert_int_equal(sinew_skin_swap_status(g_world, g_skin), SINEW_ERROR_PARAMETER);
    assert_string_equal(sinew_skin_backend(g_world, g_skin), "lbs");
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);   /* the backend's line */
    assert_int_equal(g_log.count[SINEW_LOG_WARNING], 1); /* the swap's */
    bend_and_update();
    /* the next swap starts afresh */
    assert_int_equal(sinew_skin_set_backend(g_world, g_skin, "dqs", NULL, 0), SINEW_OK);
    assert_int_equal(sinew_skin_wait_swap(g_world, g_skin), SINEW_OK);
    assert_int_equal(sinew_skin_swap_status(g_world, g_skin), SINEW_OK);
    assert_string_equal(sinew_skin_backend(g_world, g_skin), "dqs");
}

/* The preparation still waits on the gate when the skin goes: a thread opens it a little
 * later, and the removal waits for the preparation, then destroys what it made. */
static void* open_gate_later(void* arg)
{
    (void)arg;
    struct timespec ms = {0, 20000000};
    nanosleep(&ms, NULL);
    open_gate();
    return NULL;
}

static void test_remove_waits_for_the_preparation(void** state)
{
    (void)state;
    assert_int_equal(sinew_skin_set_backend(g_world, g_skin, "test-gated", NULL, 0), SINEW_OK);
    pthread_t opener;
    assert_int_equal(pthread_create(&opener, NULL, open_gate_later, NULL), 0);
    assert_int_equal(sinew_world_remove_skin(g_world, g_skin), SINEW_OK);
    pthread_join(opener, NULL);
    assert_int_equal(g_prepares, 1);
    assert_int_equal(g_destroys, 1);
}

static void test_destroy_waits_for_the_preparation(void** state)
{
    (void)state;
    assert_int_equal(sinew_skin_set_backend(g_world, g_skin, "test-gated", NULL, 0), SINEW_OK);
    pthread_t opener;
    assert_int_equal(pthread_create(&opener, NULL, open_gate_later, NULL), 0);
    sinew_world_destroy(g_world);
    g_world = sinew_test_world(&g_log, 1); /* for teardown */
    pthread_join(opener, NULL);
    assert_int_equal(g_prepares, 1);
    assert_int_equal(g_destroys, 1);
}

static void test_bad_calls(void** state)
{
    (void)state;
    int errors = g_log.count[SINEW_LOG_ERROR];
    sinew_skin stale = {g_skin.id + 1u};
    assert_int_equal(sinew_skin_swap_status(g_world, stale), SINEW_ERROR_INVALID_HANDLE);
    assert_int_equal(sinew_skin_wait_swap(g_world, stale), SINEW_ERROR_INVALID_HANDLE);
    assert_int_equal(sinew_skin_swap_status(NULL, g_skin), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sinew_skin_wait_swap(NULL, g_skin), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], errors + 2);
    assert_int_equal(sinew_skin_wait_swap(g_world, g_skin), SINEW_OK); /* none pending */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_old_backend_steps_while_pending, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_preparation_keeps_the_old_backend, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_remove_waits_for_the_preparation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_waits_for_the_preparation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_calls, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
