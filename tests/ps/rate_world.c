/* The update rate of a physics backend through the runtime (rate_world.h).
 * SPDX-License-Identifier: MIT */
#include "rate_world.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps_fixture.h"
#include "sample_character.h"
#include "sample_metrics.h"

/* The motion: joint2 bent to 90 degrees over RAMP_SECONDS, then held; shapes compared every
 * 1/SAMPLES_PER_SECOND s up to RATE_SECONDS, 2.5 s after the ramp, when the swing of the
 * defaults (about two seconds, backends/ps/README.md, damping) has died out. */
#define RAMP_SECONDS 0.5
#define BEND_DEGREES 90.0
enum { RATE_SECONDS = 3, SAMPLES_PER_SECOND = 6, SAMPLE_COUNT = RATE_SECONDS * SAMPLES_PER_SECOND };

/* Distances are a vertex's largest distance over the rest bounding-box diagonal (12.3 on the
 * cylinder). Every rate ends at the same held pose, where the step map has one fixed point, so
 * what is left of the settled difference is the swing's decay after 2.5 s and float rounding
 * along different paths (measured 1.6e-8 for ps, 3.3e-8 for fps, 2.2e-6 for pbd, whose
 * particles are single precision). Both tolerances are the caller's (rate_world.h). */

/* Everything a check needs: the cylinder, a world on it and the pose buffer. */
typedef struct rate_scene {
    sample_character ch;
    uint32_t joints, n, joint;
    double diagonal;
    sinew_world* world;
    sinew_rig rig;
    float* model;
} rate_scene;

/* INFO lines of the world kept for the checks (the first RATE_LOG_LINES of them). */
enum { RATE_LOG_LINES = 64 };
typedef struct rate_log {
    int count;
    char lines[RATE_LOG_LINES][512];
} rate_log;

static void keep_line(sinew_log_level level, const char* message, void* user)
{
    rate_log* log = (rate_log*)user;
    if (level > SINEW_LOG_INFO || log->count >= RATE_LOG_LINES) return;
    snprintf(log->lines[log->count++], sizeof log->lines[0], "%s", message);
}

/* Lines that contain both a and b (b NULL: any). */
static int count_lines(const rate_log* log, const char* a, const char* b)
{
    int k = 0;
    for (int i = 0; i < log->count; ++i)
        if (strstr(log->lines[i], a) && (!b || strstr(log->lines[i], b))) ++k;
    return k;
}

/* The cylinder and a world of two threads on it; log (may be NULL) collects its INFO lines. */
static void scene_open(rate_scene* s, rate_log* log)
{
    memset(s, 0, sizeof *s);
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    assert_int_equal(sample_character_load(path, NULL, &s->ch), SINEW_OK);
    s->joints = s->ch.rig.skeleton.joint_count;
    s->n = s->ch.rig.render_mesh.vertex_count;
    int32_t joint = sample_find_joint(&s->ch, "joint2");
    assert_true(joint >= 0);
    s->joint = (uint32_t)joint;
    s->diagonal = sample_bounding_diagonal(s->ch.rig.render_mesh.positions, s->n);
    sinew_world_desc wd = SINEW_WORLD_DESC_INIT;
    sinew_logger logger = {keep_line, log};
    if (log) {
        memset(log, 0, sizeof *log);
        wd.logger = &logger;
        wd.log_level = SINEW_LOG_INFO;
    }
    wd.thread_count = 2;
    assert_int_equal(sinew_world_create(&wd, &s->world), SINEW_OK);
    assert_int_equal(sinew_rig_create(s->world, &s->ch.rig, &s->rig), SINEW_OK);
    s->model = malloc(sizeof(float) * 16u * s->joints);
    assert_non_null(s->model);
}

static void scene_close(rate_scene* s)
{
    sinew_world_destroy(s->world);
    free(s->model);
    sample_character_free(&s->ch);
}

static sinew_skin add_skin(rate_scene* s, const char* backend, const sinew_param* params,
                           uint32_t count)
{
    sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
    sd.rig = s->rig;
    sd.backend = backend;
    sd.params = params;
    sd.param_count = count;
    sinew_skin skin;
    assert_int_equal(sinew_world_add_skin(s->world, &sd, &skin), SINEW_OK);
    return skin;
}

/* Sets the pose of joint2 bent by `degrees` (flags as given). */
static void set_bend(rate_scene* s, sinew_skin skin, double degrees, uint32_t flags)
{
    assert_int_equal(sample_bend_twist_pose(&s->ch, s->joint, (float)degrees, 0.0f, s->model),
                     SINEW_OK);
    sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
    pd.joint_count = s->joints;
    pd.matrices = s->model;
    pd.flags = flags;
    assert_int_equal(sinew_skin_set_pose(s->world, skin, &pd), SINEW_OK);
}

/* The motion's bend at t seconds. */
static double bend_at(double t)
{
    return BEND_DEGREES * fmin(t / RAMP_SECONDS, 1.0);
}

static void read_positions(const rate_scene* s, sinew_skin skin, float* out)
{
    sinew_output_desc od = SINEW_OUTPUT_DESC_INIT;
    od.vertex_capacity = s->n;
    od.positions = out;
    assert_int_equal(sinew_skin_read_output(s->world, skin, &od), SINEW_OK);
}

/* The largest distance between corresponding vertices, over the diagonal. */
static double difference(const rate_scene* s, const float* a, const float* b)
{
    double d = 0.0;
    for (uint32_t v = 0; v < s->n; ++v) {
        double dx = (double)a[3u * v] - b[3u * v], dy = (double)a[3u * v + 1] - b[3u * v + 1],
               dz = (double)a[3u * v + 2] - b[3u * v + 2];
        d = fmax(d, sqrt(dx * dx + dy * dy + dz * dz));
    }
    return d / s->diagonal;
}

/* ---- the same motion at three rates ---- */

/* Drives `skin` along the motion at `rate` updates per second for RATE_SECONDS, reading its
 * output every 1/SAMPLES_PER_SECOND s into shapes (SAMPLE_COUNT shapes of 3n floats). */
static void play(rate_scene* s, sinew_skin skin, uint32_t rate, float* shapes)
{
    const float dt = 1.0f / (float)rate;
    for (uint32_t u = 1; u <= RATE_SECONDS * rate; ++u) {
        set_bend(s, skin, bend_at((double)u / rate), 0u);
        assert_int_equal(sinew_skin_update(s->world, skin, dt), SINEW_OK);
        if ((u * SAMPLES_PER_SECOND) % rate != 0) continue;
        uint32_t k = u * SAMPLES_PER_SECOND / rate - 1u;
        read_positions(s, skin, shapes + 3u * (size_t)s->n * k);
    }
}

void rate_check_rates(const char* backend, double motion_tolerance, double settled_tolerance)
{
    /* the fourth: 30 Hz with one step per update (max_substeps=1), which runs the motion at
     * half speed as a backend that ignored dt would: the check is not vacuous */
    static const uint32_t rates[4] = {30, 60, 144, 30};
    static const sinew_param one_step[] = {{"max_substeps", "1"}};
    rate_scene s;
    scene_open(&s, NULL);
    float* shapes[4];
    for (int r = 0; r < 4; ++r) {
        shapes[r] = malloc(sizeof(float) * 3u * s.n * SAMPLE_COUNT);
        assert_non_null(shapes[r]);
        sinew_skin skin = add_skin(&s, backend, r == 3 ? one_step : NULL, r == 3 ? 1u : 0u);
        play(&s, skin, rates[r], shapes[r]);
    }
    const size_t size = 3u * (size_t)s.n;
    double worst[3] = {0.0, 0.0, 0.0};
    for (uint32_t k = 0; k < SAMPLE_COUNT; ++k) {
        double d[3];
        for (int r = 0; r < 3; ++r)
            d[r] = difference(&s, shapes[r == 1 ? 3 : r] + size * k, shapes[1] + size * k);
        print_message("%s at %.3f s, against 60 Hz: 30 Hz %.3g, 144 Hz %.3g, 30 Hz one step per "
                      "update %.3g of the diagonal\n", backend,
                      (double)(k + 1) / SAMPLES_PER_SECOND, d[0], d[2], d[1]);
        for (int r = 0; r < 3; ++r) worst[r] = fmax(worst[r], d[r]);
    }
    const size_t last = size * (SAMPLE_COUNT - 1u);
    double settled = fmax(difference(&s, shapes[0] + last, shapes[1] + last),
                          difference(&s, shapes[2] + last, shapes[1] + last));
    print_message("%s: largest difference during the motion %.3g (30 Hz), %.3g (144 Hz), %.3g "
                  "(30 Hz, one step per update); settled %.3g\n", backend, worst[0], worst[2],
                  worst[1], settled);
    assert_true(worst[0] <= motion_tolerance && worst[2] <= motion_tolerance);
    assert_true(worst[1] > 10.0 * motion_tolerance);
    assert_true(settled <= settled_tolerance);
    for (int r = 0; r < 4; ++r) free(shapes[r]);
    scene_close(&s);
}

/* ---- interpolate_output ---- */

/* Whether two shapes are the same bits. */
static bool same_shape(const rate_scene* s, const float* a, const float* b)
{
    return memcmp(a, b, sizeof(float) * 3u * s->n) == 0;
}

void rate_check_interpolated_output(const char* backend)
{
    static const sinew_param blend[] = {{"interpolate_output", "1"}};
    rate_scene s;
    scene_open(&s, NULL);
    const size_t size = 3u * (size_t)s.n;
    float* shape = malloc(sizeof(float) * size * 4u);
    assert_non_null(shape);
    float *plain_before = shape, *plain = shape + size, *lagged = shape + 2u * size,
          *lagged_before = shape + 3u * size;
    /* 60 Hz: the interpolated output is the plain output of the update before, bit for bit */
    sinew_skin a = add_skin(&s, backend, NULL, 0), b = add_skin(&s, backend, blend, 1);
    read_positions(&s, a, plain_before);
    for (uint32_t u = 1; u <= 40; ++u) {
        set_bend(&s, a, bend_at(u / 60.0), 0u);
        set_bend(&s, b, bend_at(u / 60.0), 0u);
        assert_int_equal(sinew_skin_update(s.world, a, 1.0f / 60.0f), SINEW_OK);
        assert_int_equal(sinew_skin_update(s.world, b, 1.0f / 60.0f), SINEW_OK);
        read_positions(&s, a, plain);
        read_positions(&s, b, lagged);
        if (!same_shape(&s, lagged, plain_before))
            fail_msg("%s, update %u at 60 Hz: the interpolated output is not the shape of the "
                     "update before", backend, u);
        memcpy(plain_before, plain, sizeof(float) * size);
    }
    /* 144 Hz along the ramp: the plain output stands still at the updates without a step (7 of
     * every 12), the interpolated one moves at every update */
    sinew_skin c = add_skin(&s, backend, NULL, 0), d = add_skin(&s, backend, blend, 1);
    read_positions(&s, c, plain_before);
    read_positions(&s, d, lagged_before);
    uint32_t still_plain = 0, still_blended = 0;
    for (uint32_t u = 1; u <= 60; ++u) {
        set_bend(&s, c, bend_at(u / 144.0), 0u);
        set_bend(&s, d, bend_at(u / 144.0), 0u);
        assert_int_equal(sinew_skin_update(s.world, c, 1.0f / 144.0f), SINEW_OK);
        assert_int_equal(sinew_skin_update(s.world, d, 1.0f / 144.0f), SINEW_OK);
        read_positions(&s, c, plain);
        read_positions(&s, d, lagged);
        /* the first step comes at update 3; interpolation lags one step behind it */
        if (u > 5) {
            still_plain += same_shape(&s, plain, plain_before);
            still_blended += same_shape(&s, lagged, lagged_before);
        }
        memcpy(plain_before, plain, sizeof(float) * size);
        memcpy(lagged_before, lagged, sizeof(float) * size);
    }
    print_message("%s at 144 Hz, updates 6..60: the output stood still at %u updates, the "
                  "interpolated output at %u\n", backend, still_plain, still_blended);
    assert_true(still_plain >= 28u);
    assert_int_equal(still_blended, 0u);
    free(shape);
    scene_close(&s);
}

/* ---- an output bound to two arrays in turn ---- */

void rate_check_rebound_output(const char* backend)
{
    rate_scene s;
    scene_open(&s, NULL);
    const size_t size = 3u * (size_t)s.n;
    float* shape = malloc(sizeof(float) * size * 3u);
    assert_non_null(shape);
    sinew_skin skin = add_skin(&s, backend, NULL, 0);
    for (uint32_t u = 1; u <= 30; ++u) {
        float* slot = shape + size * (u % 2u);
        memset(slot, 0, sizeof(float) * size);
        sinew_output_desc od = SINEW_OUTPUT_DESC_INIT;
        od.vertex_capacity = s.n;
        od.positions = slot;
        assert_int_equal(sinew_skin_bind_output(s.world, skin, &od), SINEW_OK);
        set_bend(&s, skin, bend_at(u / 144.0), 0u);
        assert_int_equal(sinew_skin_update(s.world, skin, 1.0f / 144.0f), SINEW_OK);
        read_positions(&s, skin, shape + 2u * size);
        if (!same_shape(&s, slot, shape + 2u * size))
            fail_msg("%s, update %u at 144 Hz: the array bound for it does not hold the shape",
                     backend, u);
    }
    free(shape);
    scene_close(&s);
}

/* ---- max_substeps ---- */

void rate_check_dropped(const char* backend)
{
    static const sinew_param params[] = {{"max_substeps", "2"}, {"profile", "1"}};
    rate_log log;
    rate_scene s;
    scene_open(&s, &log);
    sinew_skin skin = add_skin(&s, backend, params, 2);
    for (uint32_t u = 1; u <= 3; ++u) {
        set_bend(&s, skin, 10.0 * u, 0u);
        assert_int_equal(sinew_skin_update(s.world, skin, 0.1f), SINEW_OK);
    }
    /* one line at the first drop: 6 steps needed, 4 of them (1/15 s) dropped */
    char line[128];
    snprintf(line, sizeof line, "%s: an update of 0.1 s needs 6 steps", backend);
    assert_int_equal(count_lines(&log, line, "max_substeps is 2: 0.06667 s dropped"), 1);
    assert_int_equal(count_lines(&log, "max_substeps is", NULL), 1);
    /* the profile summary counts every drop: 3 updates, 6 steps run, 12 (0.2 s) dropped */
    assert_int_equal(sinew_world_remove_skin(s.world, skin), SINEW_OK);
    snprintf(line, sizeof line, "%s profile: 3 updates, 6 steps of 0.01667 s", backend);
    assert_int_equal(count_lines(&log, line, "12 steps (0.2 s) dropped in 3 updates"), 1);
    for (int i = 0; i < log.count; ++i)
        if (strstr(log.lines[i], "dropped")) print_message("%s\n", log.lines[i]);
    scene_close(&s);
}

/* ---- dt = 0 and dt below the timestep ---- */

/* dt = 0 and a small dt straight to the backend's vtable (the cylinder, a fixture host). */
static void small_dt_backend(const sinew_backend_vtable* vt)
{
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    const uint32_t n = rig.view.render_mesh.vertex_count, joints = rig.view.joint_count;
    float* skinning = malloc(sizeof(float) * 16u * joints);
    float* out = malloc(sizeof(float) * 6u * n);
    assert_true(skinning && out);
    void* inst = NULL;
    assert_int_equal(vt->prepare(&host.api, &rig.view, NULL, 0, NULL, &inst), SINEW_OK);
    sinew_pose_view pose = {(uint32_t)sizeof(sinew_pose_view), joints, skinning, skinning, 0u};
    sinew_output_view ov = {(uint32_t)sizeof(sinew_output_view), n, out, 12u, NULL, 12u, NULL};
    ps_test_skinning(&rig, 2u, 10.0f, 0.0f, skinning);
    assert_int_equal(vt->set_pose(inst, &pose), SINEW_OK);
    assert_int_equal(vt->step(inst, 1.0f / 60.0f), SINEW_OK);
    assert_int_equal(vt->read_output(inst, &ov), SINEW_OK);
    /* a new pose and dt = 0, then 0.005 s: no step, the same bits */
    ps_test_skinning(&rig, 2u, 20.0f, 0.0f, skinning);
    assert_int_equal(vt->set_pose(inst, &pose), SINEW_OK);
    assert_int_equal(vt->step(inst, 0.0f), SINEW_OK);
    ov.positions = out + 3u * (size_t)n;
    assert_int_equal(vt->read_output(inst, &ov), SINEW_OK);
    assert_memory_equal(out, out + 3u * (size_t)n, sizeof(float) * 3u * n);
    assert_int_equal(vt->step(inst, 0.005f), SINEW_OK);
    assert_int_equal(vt->read_output(inst, &ov), SINEW_OK);
    assert_memory_equal(out, out + 3u * (size_t)n, sizeof(float) * 3u * n);
    /* 0.0117 s more: 0.0167 s carried in all, one step */
    assert_int_equal(vt->step(inst, 0.0117f), SINEW_OK);
    assert_int_equal(vt->read_output(inst, &ov), SINEW_OK);
    assert_true(memcmp(out, out + 3u * (size_t)n, sizeof(float) * 3u * n) != 0);
    vt->destroy(inst);
    free(skinning);
    free(out);
    ps_test_rig_free(&rig);
}

void rate_check_small_dt(const char* backend, const sinew_backend_vtable* vt)
{
    small_dt_backend(vt);
    /* through the runtime: dt = 0 (a paused frame) and a dt below the timestep run no step */
    rate_log log;
    rate_scene s;
    scene_open(&s, &log);
    float* out = malloc(sizeof(float) * 6u * s.n);
    assert_non_null(out);
    float* after = out + 3u * (size_t)s.n;
    sinew_skin skin = add_skin(&s, backend, NULL, 0);
    set_bend(&s, skin, 10.0, 0u);
    assert_int_equal(sinew_world_update(s.world, 1.0f / 60.0f), SINEW_OK);
    read_positions(&s, skin, out);
    set_bend(&s, skin, 20.0, 0u);
    assert_int_equal(sinew_world_update(s.world, 0.0f), SINEW_OK);
    read_positions(&s, skin, after);
    assert_memory_equal(out, after, sizeof(float) * 3u * s.n);
    assert_int_equal(sinew_world_update(s.world, 0.001f), SINEW_OK);
    read_positions(&s, skin, after);
    assert_memory_equal(out, after, sizeof(float) * 3u * s.n);
    assert_int_equal(sinew_world_update(s.world, 1.0f / 60.0f), SINEW_OK);
    read_positions(&s, skin, after);
    assert_true(memcmp(out, after, sizeof(float) * 3u * s.n) != 0);
    free(out);
    scene_close(&s);
}

/* ---- a pose jump at 30 Hz ---- */

void rate_check_jump(const char* backend)
{
    static const sinew_param off[] = {{"jump_angle", "0"}, {"jump_distance", "0"}};
    rate_log log;
    rate_scene s;
    scene_open(&s, &log);
    const size_t size = 3u * (size_t)s.n;
    float* shape = malloc(sizeof(float) * size * 3u);
    assert_non_null(shape);
    /* a: 30 Hz; b: 60 Hz, the reference restart; c: 30 Hz without the detection */
    sinew_skin a = add_skin(&s, backend, NULL, 0), b = add_skin(&s, backend, NULL, 0);
    sinew_skin c = add_skin(&s, backend, off, 2);
    /* a smooth ramp to 40 degrees restarts nothing: 4 degrees per update at 30 Hz */
    for (uint32_t u = 1; u <= 10; ++u) {
        set_bend(&s, a, 4.0 * u, 0u);
        set_bend(&s, c, 4.0 * u, 0u);
        assert_int_equal(sinew_skin_update(s.world, a, 1.0f / 30.0f), SINEW_OK);
        assert_int_equal(sinew_skin_update(s.world, c, 1.0f / 30.0f), SINEW_OK);
    }
    for (uint32_t u = 1; u <= 20; ++u) {
        set_bend(&s, b, 2.0 * u, 0u);
        assert_int_equal(sinew_skin_update(s.world, b, 1.0f / 60.0f), SINEW_OK);
    }
    assert_int_equal(count_lines(&log, "tissue re-initialised", NULL), 0);
    /* 50 degrees back within one update: 25 per step, a jump only as a whole */
    set_bend(&s, a, -10.0, 0u);
    set_bend(&s, c, -10.0, 0u);
    assert_int_equal(sinew_skin_update(s.world, a, 1.0f / 30.0f), SINEW_OK);
    assert_int_equal(sinew_skin_update(s.world, c, 1.0f / 30.0f), SINEW_OK);
    char line[96];
    snprintf(line, sizeof line, "%s: pose jump at update 11", backend);
    assert_int_equal(count_lines(&log, line, "rotated 50 degrees"), 1);
    assert_int_equal(count_lines(&log, "tissue re-initialised", NULL), 1);
    /* the 60 Hz skin restarted at the same pose and stepped twice, the second without a pose */
    set_bend(&s, b, -10.0, 0u);
    assert_int_equal(sinew_skin_update(s.world, b, 1.0f / 60.0f), SINEW_OK);
    assert_int_equal(sinew_skin_update(s.world, b, 1.0f / 60.0f), SINEW_OK);
    read_positions(&s, a, shape);
    read_positions(&s, b, shape + size);
    read_positions(&s, c, shape + 2u * size);
    double same = difference(&s, shape, shape + size);
    double through = difference(&s, shape, shape + 2u * size);
    print_message("%s, 30 Hz after the jump: against the 60 Hz restart %.3g, against the update "
                  "interpolated through the jump %.3g of the diagonal\n", backend, same, through);
    /* the restart discards the state before it: both ran the same two steps from it */
    assert_true(same <= 1e-6);
    assert_true(through >= 1e-2);
    free(shape);
    scene_close(&s);
}

/* ---- the six checks as one group (rate_run_all) ---- */

static struct {
    const char* backend;
    const sinew_backend_vtable* vt;
    double motion_tolerance, settled_tolerance;
} g_run;

static void run_rates(void** state)
{
    (void)state;
    rate_check_rates(g_run.backend, g_run.motion_tolerance, g_run.settled_tolerance);
}

static void run_interpolated_output(void** state)
{
    (void)state;
    rate_check_interpolated_output(g_run.backend);
}

static void run_rebound_output(void** state)
{
    (void)state;
    rate_check_rebound_output(g_run.backend);
}

static void run_dropped(void** state)
{
    (void)state;
    rate_check_dropped(g_run.backend);
}

static void run_small_dt(void** state)
{
    (void)state;
    rate_check_small_dt(g_run.backend, g_run.vt);
}

static void run_jump(void** state)
{
    (void)state;
    rate_check_jump(g_run.backend);
}

int rate_run_all(const char* backend, const sinew_backend_vtable* vt, double motion_tolerance,
                 double settled_tolerance)
{
    g_run.backend = backend;
    g_run.vt = vt;
    g_run.motion_tolerance = motion_tolerance;
    g_run.settled_tolerance = settled_tolerance;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(run_rates),
        cmocka_unit_test(run_interpolated_output),
        cmocka_unit_test(run_rebound_output),
        cmocka_unit_test(run_dropped),
        cmocka_unit_test(run_small_dt),
        cmocka_unit_test(run_jump),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
