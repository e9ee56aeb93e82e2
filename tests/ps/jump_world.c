/* Pose discontinuities of a physics backend through the runtime (jump_world.h).
 * SPDX-License-Identifier: MIT */
#include "jump_world.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample_character.h"
#include "sample_metrics.h"

static const float k_dt = 1.0f / 60.0f;

/* A world of two threads with a rig of ch; log: the world's logger, outliving it. */
static sinew_world* make_world(const sample_character* ch, sinew_test_log* log, sinew_rig* rig)
{
    sinew_test_log_init(log);
    sinew_world* world = sinew_test_world(log, 2);
    assert_int_equal(sinew_rig_create(world, &ch->rig, rig), SINEW_OK);
    return world;
}

static sinew_skin add_skin(sinew_world* world, sinew_rig rig, const char* backend,
                           const sinew_param* params, uint32_t count)
{
    sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
    sd.rig = rig;
    sd.backend = backend;
    sd.params = params;
    sd.param_count = count;
    sinew_skin skin;
    assert_int_equal(sinew_world_add_skin(world, &sd, &skin), SINEW_OK);
    return skin;
}

static void read_positions(sinew_world* world, sinew_skin skin, uint32_t n, float* out)
{
    sinew_output_desc od = SINEW_OUTPUT_DESC_INIT;
    od.vertex_capacity = n;
    od.positions = out;
    assert_int_equal(sinew_skin_read_output(world, skin, &od), SINEW_OK);
}

/* ---- the male's loop jump ---- */

void jump_play_male(const char* backend, const sinew_param* params, uint32_t param_count,
                    uint32_t pairs[JUMP_AFTER])
{
    const char* path = sinew_test_data_path("characters/male/male.ini");
    sample_character male;
    assert_int_equal(sample_character_load(path, NULL, &male), SINEW_OK);
    assert_true(male.animation_count > JUMP_ANIMATION);
    const sinew_mesh_desc* mesh = &male.rig.render_mesh;
    const uint32_t joints = male.rig.skeleton.joint_count, n = mesh->vertex_count;
    sinew_test_log log;
    sinew_rig rig;
    sinew_world* world = make_world(&male, &log, &rig);
    sinew_skin skin = add_skin(world, rig, backend, params, param_count);
    sample_topology all;
    assert_int_equal(sample_topology_build(mesh->positions, n, mesh->indices,
                                           mesh->triangle_count, &all), SINEW_OK);
    float* local = malloc(sizeof(float) * 16u * joints);
    float* now = malloc(sizeof(float) * 3u * n);
    assert_true(local && now);
    sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
    pose.joint_count = joints;
    pose.matrices = local;
    pose.space = SINEW_POSE_LOCAL;
    for (uint32_t f = 0; f < JUMP_FRAME + JUMP_AFTER; ++f) {
        const sinew_animation* anim = &male.animations[JUMP_ANIMATION];
        assert_int_equal(sinew_animation_sample(anim, (float)f / 60.0f, 1, local), SINEW_OK);
        assert_int_equal(sinew_skin_set_pose(world, skin, &pose), SINEW_OK);
        assert_int_equal(sinew_world_update(world, k_dt), SINEW_OK);
        if (f < JUMP_FRAME) continue;
        read_positions(world, skin, n, now);
        assert_int_equal(sample_count_nonfinite(now, n), 0);
        pairs[f - JUMP_FRAME] = sample_count_self_intersections(&all, now);
        assert_true(pairs[f - JUMP_FRAME] != UINT32_MAX);
    }
    sample_topology_free(&all);
    free(local);
    free(now);
    sinew_world_destroy(world);
    sample_character_free(&male);
}

void jump_check_male_loop(const char* backend)
{
    uint32_t lbs[JUMP_AFTER], on[JUMP_AFTER], off[JUMP_AFTER];
    static const sinew_param no_detection[] = {{"jump_angle", "0"}, {"jump_distance", "0"}};
    jump_play_male("lbs", NULL, 0, lbs);
    jump_play_male(backend, NULL, 0, on);
    jump_play_male(backend, no_detection, 2, off);
    uint32_t worst_on = 0, worst_off = 0;
    for (uint32_t i = 0; i < JUMP_AFTER; ++i) {
        print_message("%s, frame %u (the jump at %u): lbs %u, %s %u, without detection %u\n",
                      backend, JUMP_FRAME + i, (unsigned)JUMP_FRAME, lbs[i], backend, on[i],
                      off[i]);
        if (on[i] > lbs[i] + worst_on) worst_on = on[i] - lbs[i];
        if (off[i] > lbs[i] + worst_off) worst_off = off[i] - lbs[i];
    }
    /* the restart keeps the tissue out of the body: lbs's pairs + 10 at every frame */
    assert_true(worst_on <= 10u);
    /* and without it the skin is dragged through the body: the check is not vacuous */
    assert_true(worst_off > 10u);
}

/* ---- a flagged pose on the cylinder ---- */

static double max_difference(const float* a, const float* b, uint32_t n)
{
    double d = 0.0;
    for (size_t i = 0; i < 3u * (size_t)n; ++i) d = fmax(d, fabs((double)a[i] - (double)b[i]));
    return d;
}

static void set_model_pose(sinew_world* world, sinew_skin skin, const float* model,
                           uint32_t joints, uint32_t flags)
{
    sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
    pd.joint_count = joints;
    pd.matrices = model;
    pd.flags = flags;
    assert_int_equal(sinew_skin_set_pose(world, skin, &pd), SINEW_OK);
}

void jump_check_flag(const char* backend)
{
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    sample_character ch;
    assert_int_equal(sample_character_load(path, NULL, &ch), SINEW_OK);
    const uint32_t jn = ch.rig.skeleton.joint_count, n = ch.rig.render_mesh.vertex_count;
    const uint32_t joint = (uint32_t)sample_default_joint(&ch);
    sinew_test_log log;
    sinew_rig rig;
    sinew_world* world = make_world(&ch, &log, &rig);
    static const sinew_param off[] = {{"jump_angle", "0"}, {"jump_distance", "0"}};
    static const sinew_param quiet[] = {{"jump_angle", "0"}, {"jump_distance", "0"},
                                        {"damping", "0"}};
    sinew_skin flagged = add_skin(world, rig, backend, off, 2);
    sinew_skin plain = add_skin(world, rig, backend, off, 2);
    sinew_skin from_lbs = add_skin(world, rig, "lbs", NULL, 0);
    float* model = malloc(sizeof(float) * 16u * jn);
    float* out[3] = {malloc(12u * n), malloc(12u * n), malloc(12u * n)};
    assert_true(model && out[0] && out[1] && out[2]);
    double diagonal = sample_bounding_diagonal(ch.rig.render_mesh.positions, n);
    /* a fast ramp to 60 degrees: the tissue swings */
    for (uint32_t s = 1; s <= 20; ++s) {
        float degrees = 3.0f * (float)s;
        assert_int_equal(sample_bend_twist_pose(&ch, joint, degrees, 0.0f, model), SINEW_OK);
        for (int k = 0; k < 3; ++k)
            set_model_pose(world, k == 0 ? flagged : k == 1 ? plain : from_lbs, model, jn, 0u);
        assert_int_equal(sinew_world_update(world, k_dt), SINEW_OK);
    }
    /* the cut: -30 degrees within one step, flagged on one skin only; the third starts from
     * the pose's lbs shape through a backend swap, quasi-static (damping 0) */
    assert_int_equal(sample_bend_twist_pose(&ch, joint, -30.0f, 0.0f, model), SINEW_OK);
    set_model_pose(world, flagged, model, jn, SINEW_POSE_DISCONTINUOUS);
    set_model_pose(world, plain, model, jn, 0u);
    set_model_pose(world, from_lbs, model, jn, 0u);
    assert_int_equal(sinew_skin_update(world, from_lbs, k_dt), SINEW_OK);
    assert_int_equal(sinew_skin_set_backend(world, from_lbs, backend, quiet, 3), SINEW_OK);
    assert_int_equal(sinew_skin_wait_swap(world, from_lbs), SINEW_OK);
    for (int step = 0; step < 2; ++step) {
        assert_int_equal(sinew_world_update(world, k_dt), SINEW_OK);
        read_positions(world, flagged, n, out[0]);
        read_positions(world, plain, n, out[1]);
        read_positions(world, from_lbs, n, out[2]);
        double same = max_difference(out[0], out[2], n) / diagonal;
        double other = max_difference(out[0], out[1], n) / diagonal;
        print_message("%s, step %d after the cut: flagged against started from lbs %.3g, "
                      "against unflagged %.3g of the diagonal\n", backend, step + 1, same, other);
        /* the same start and a velocity-free step: only lbs's float rounding differs */
        assert_true(same <= 1e-5);
        if (step == 0) assert_true(other >= 1e-2);
    }
    free(model);
    for (int k = 0; k < 3; ++k) free(out[k]);
    sinew_world_destroy(world);
    sample_character_free(&ch);
}

/* ---- the log lines ---- */

typedef struct jump_log {
    int restarts;      /* INFO lines about a restart */
    char last[512];
} jump_log;

static void count_restarts(sinew_log_level level, const char* message, void* user)
{
    jump_log* log = (jump_log*)user;
    if (level == SINEW_LOG_INFO && strstr(message, "tissue re-initialised from the pose")) {
        log->restarts++;
        snprintf(log->last, sizeof log->last, "%s", message);
    }
}

/* Steps once to `model` (flags as given) and returns how many restart lines that logged. */
static int step_to(sinew_world* world, sinew_skin skin, jump_log* log, const float* model,
                   uint32_t joints, uint32_t flags)
{
    int before = log->restarts;
    set_model_pose(world, skin, model, joints, flags);
    assert_int_equal(sinew_world_update(world, k_dt), SINEW_OK);
    return log->restarts - before;
}

static void expect_line(const jump_log* log, const char* backend, const char* a, const char* b)
{
    if (strncmp(log->last, backend, strlen(backend)) != 0 || !strstr(log->last, a) ||
        (b && !strstr(log->last, b)))
        fail_msg("restart line \"%s\" lacks \"%s\" or \"%s\"", log->last, a, b ? b : "");
}

/* The largest extent of the rest mesh's bounding box. */
static double rig_height(const sample_character* ch)
{
    const sinew_mesh_desc* m = &ch->rig.render_mesh;
    double lo[3] = {1e30, 1e30, 1e30}, hi[3] = {-1e30, -1e30, -1e30}, h = 0.0;
    for (uint32_t v = 0; v < m->vertex_count; ++v)
        for (int c = 0; c < 3; ++c) {
            lo[c] = fmin(lo[c], m->positions[3u * v + c]);
            hi[c] = fmax(hi[c], m->positions[3u * v + c]);
        }
    for (int c = 0; c < 3; ++c) h = fmax(h, hi[c] - lo[c]);
    return h;
}

void jump_check_log(const char* backend)
{
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    sample_character ch;
    assert_int_equal(sample_character_load(path, NULL, &ch), SINEW_OK);
    const uint32_t jn = ch.rig.skeleton.joint_count;
    const uint32_t joint = (uint32_t)sample_default_joint(&ch);
    jump_log log;
    memset(&log, 0, sizeof log);
    sinew_logger logger = {count_restarts, &log};
    sinew_world_desc wd = SINEW_WORLD_DESC_INIT;
    wd.logger = &logger;
    wd.log_level = SINEW_LOG_INFO;
    wd.thread_count = 2;
    sinew_world* world = NULL;
    assert_int_equal(sinew_world_create(&wd, &world), SINEW_OK);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, &ch.rig, &rig), SINEW_OK);
    sinew_skin skin = add_skin(world, rig, backend, NULL, 0);
    float* model = malloc(sizeof(float) * 16u * jn);
    assert_non_null(model);
    /* a smooth ramp from rest to 40 degrees restarts nothing */
    for (uint32_t s = 1; s <= 40; ++s) {
        assert_int_equal(sample_bend_twist_pose(&ch, joint, (float)s, 0.0f, model), SINEW_OK);
        assert_int_equal(step_to(world, skin, &log, model, jn, 0u), 0);
    }
    /* 80 degrees back within one update (update 41) */
    assert_int_equal(sample_bend_twist_pose(&ch, joint, -40.0f, 0.0f, model), SINEW_OK);
    assert_int_equal(step_to(world, skin, &log, model, jn, 0u), 1);
    expect_line(&log, backend, "pose jump at update 41", "rotated 80 degrees");
    assert_non_null(strstr(log.last, ch.rig.skeleton.names[joint]));
    /* the same pose again, flagged (update 42) */
    assert_int_equal(step_to(world, skin, &log, model, jn, SINEW_POSE_DISCONTINUOUS), 1);
    expect_line(&log, backend, "discontinuous pose (flagged) at update 42", NULL);
    /* a teleport of 8 along y: more than half the rig's height (its length) */
    char moved[64];
    snprintf(moved, sizeof moved, "moved %.2f rig heights", 8.0 / rig_height(&ch));
    for (uint32_t j = 0; j < jn; ++j) model[16u * j + 13u] += 8.0f;
    assert_int_equal(step_to(world, skin, &log, model, jn, 0u), 1);
    expect_line(&log, backend, "pose jump at update 43", moved);
    assert_int_equal(step_to(world, skin, &log, model, jn, 0u), 0);
    /* a new skin spawned straight into a far pose restarts at its first step */
    sinew_skin spawned = add_skin(world, rig, backend, NULL, 0);
    assert_int_equal(sinew_world_remove_skin(world, skin), SINEW_OK);
    assert_int_equal(sample_bend_twist_pose(&ch, joint, 90.0f, 0.0f, model), SINEW_OK);
    assert_int_equal(step_to(world, spawned, &log, model, jn, 0u), 1);
    expect_line(&log, backend, "pose jump at update 1", "rotated 90 degrees");
    free(model);
    sinew_world_destroy(world);
    sample_character_free(&ch);
}
