/* sinew-quality's schedule for static poses (a 30-step ramp, then steps until settled) with
 * backends that take time to settle, registered in the test: one that moves halfway to its
 * linear-blend target each step, and one that blows up. SPDX-License-Identifier: MIT */
#include "test_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_plugin.h>

#include "sample_character.h"
#include "sample_quality.h"

/* A backend with state: positions chase the linear-blend result of the current pose. */
typedef struct lagging {
    const sinew_rig_view* rig;
    float* positions;            /* 3 per render vertex */
    float* target;
    sinew_output_view bound;     /* vertex_count 0: not bound */
    int explode;                 /* the second backend: NaN after the ramp's first half */
    uint32_t steps;
} lagging;

static sinew_result lag_probe(const sinew_host_api* host)
{
    (void)host;
    return SINEW_OK;
}

static sinew_result prepare(const sinew_rig_view* rig, int explode, void** out)
{
    lagging* b = calloc(1, sizeof *b);
    if (!b) return SINEW_ERROR_OUT_OF_MEMORY;
    size_t n = 3 * (size_t)rig->render_mesh.vertex_count;
    b->positions = malloc(n * sizeof(float));
    b->target = malloc(n * sizeof(float));
    if (!b->positions || !b->target) {
        free(b->positions);
        free(b->target);
        free(b);
        return SINEW_ERROR_OUT_OF_MEMORY;
    }
    memcpy(b->positions, rig->render_mesh.positions, n * sizeof(float));
    memcpy(b->target, rig->render_mesh.positions, n * sizeof(float));
    b->rig = rig;
    b->explode = explode;
    *out = b;
    return SINEW_OK;
}

static sinew_result lag_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                const sinew_param* params, uint32_t param_count, const void* next,
                                void** out)
{
    (void)host; (void)params; (void)param_count; (void)next;
    return prepare(rig, 0, out);
}

static sinew_result boom_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                 const sinew_param* params, uint32_t param_count, const void* next,
                                 void** out)
{
    (void)host; (void)params; (void)param_count; (void)next;
    return prepare(rig, 1, out);
}

static sinew_result lag_set_pose(void* instance, const sinew_pose_view* pose)
{
    lagging* b = instance;
    const sinew_rig_view* rig = b->rig;
    for (uint32_t v = 0; v < rig->render_mesh.vertex_count; ++v) {
        const float* p = rig->render_mesh.positions + 3 * v;
        float out[3] = { 0, 0, 0 };
        for (uint32_t e = rig->weight_offsets[v]; e < rig->weight_offsets[v + 1]; ++e) {
            const float* m = pose->skinning_matrices + 16 * rig->weight_joints[e];
            const float w = rig->weight_values[e];
            for (int k = 0; k < 3; ++k) out[k] += w * (m[k] * p[0] + m[4 + k] * p[1] + m[8 + k] * p[2] + m[12 + k]);
        }
        memcpy(b->target + 3 * v, out, sizeof out);
    }
    return SINEW_OK;
}

static void write_out(const lagging* b, const sinew_output_view* out)
{
    const size_t stride = out->position_stride ? out->position_stride : 12;
    for (uint32_t v = 0; v < b->rig->render_mesh.vertex_count; ++v) {
        memcpy((char*)out->positions + stride * v, b->positions + 3 * v, 12);
        if (out->normals) {
            const size_t ns = out->normal_stride ? out->normal_stride : 12;
            memcpy((char*)out->normals + ns * v, b->rig->render_mesh.normals + 3 * v, 12);
        }
    }
}

static sinew_result lag_step(void* instance, float dt)
{
    (void)dt;
    lagging* b = instance;
    ++b->steps;
    const size_t n = 3 * (size_t)b->rig->render_mesh.vertex_count;
    for (size_t i = 0; i < n; ++i) b->positions[i] += 0.5f * (b->target[i] - b->positions[i]);
    if (b->explode && b->steps >= SAMPLE_RAMP_STEPS / 2) b->positions[0] = NAN;
    if (b->bound.vertex_count) write_out(b, &b->bound);
    return SINEW_OK;
}

static sinew_result lag_read_output(void* instance, const sinew_output_view* out)
{
    write_out(instance, out);
    return SINEW_OK;
}

static sinew_result lag_bind_output(void* instance, const sinew_output_view* out)
{
    lagging* b = instance;
    if (out) b->bound = *out;
    else memset(&b->bound, 0, sizeof b->bound);
    return SINEW_OK;
}

static sinew_result lag_get_state(void* instance, const sinew_state_view* state)
{
    lagging* b = instance;
    memcpy(state->positions, b->positions, 12 * (size_t)state->vertex_count);
    if (state->velocities) memset(state->velocities, 0, 12 * (size_t)state->vertex_count);
    return SINEW_OK;
}

static sinew_result lag_set_state(void* instance, const sinew_state_view* state)
{
    lagging* b = instance;
    memcpy(b->positions, state->positions, 12 * (size_t)state->vertex_count);
    return SINEW_OK;
}

static void lag_destroy(void* instance)
{
    lagging* b = instance;
    free(b->positions);
    free(b->target);
    free(b);
}

static const sinew_backend_vtable lagging_backend = {
    sizeof(sinew_backend_vtable), "test-lagging", SINEW_BACKEND_FLAG_PHYSICS, lag_probe, lag_prepare,
    lag_set_pose, lag_step, lag_read_output, lag_bind_output, lag_get_state, lag_set_state,
    lag_destroy, NULL, NULL, 0u
};
static const sinew_backend_vtable exploding_backend = {
    sizeof(sinew_backend_vtable), "test-exploding", SINEW_BACKEND_FLAG_PHYSICS, lag_probe,
    boom_prepare, lag_set_pose, lag_step, lag_read_output, lag_bind_output, lag_get_state,
    lag_set_state, lag_destroy, NULL, NULL, 0u
};

typedef struct fixture {
    sinew_test_log log;
    sinew_world* world;
    sample_character arm;
} fixture;

static int setup(void** state)
{
    fixture* f = calloc(1, sizeof *f);
    if (!f) return -1;
    sinew_test_log_init(&f->log);
    f->world = sinew_test_world(&f->log, 1);
    if (sinew_world_register_backend(f->world, &lagging_backend) != SINEW_OK ||
        sinew_world_register_backend(f->world, &exploding_backend) != SINEW_OK ||
        sample_character_make_arm(16, 8, &f->arm) != SINEW_OK) {
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void** state)
{
    fixture* f = *state;
    sinew_world_destroy(f->world);
    sample_character_free(&f->arm);
    free(f);
    return 0;
}

static sinew_result run(fixture* f, const char* backend, const char* pose, uint32_t settle,
                        sample_quality_report* report)
{
    sample_quality_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.character = &f->arm;
    desc.backend = backend;
    desc.world = f->world;
    desc.settle_steps = settle;
    assert_true(sample_pose_parse(pose, &desc.pose));
    return sample_quality_run(&desc, report);
}

/* Halving the distance each step, the largest move after the ramp shrinks by half per step
 * until it drops below 1e-5 of the diagonal: many more than 31 steps, and then the shape is
 * the linear-blend shape. */
static void test_lagging_backend_settles_to_the_geometric_result(void** state)
{
    fixture* f = *state;
    sample_quality_report lag, lbs;
    assert_int_equal(run(f, "test-lagging", "bend:90", 0, &lag), SINEW_OK);
    assert_int_equal(run(f, "lbs", "bend:90", 0, &lbs), SINEW_OK);
    print_message("lagging backend settled after %u steps\n", lag.steps);
    assert_true(lag.settled);
    assert_true(lag.steps > SAMPLE_RAMP_STEPS + 5);
    assert_true(lag.steps < SAMPLE_RAMP_STEPS + SAMPLE_SETTLE_STEPS);
    assert_int_equal(lbs.steps, SAMPLE_RAMP_STEPS + 1);
    assert_true(fabs(lag.volume_ratio - lbs.volume_ratio) < 1e-3);
    assert_true(fabs(lag.max_edge_stretch - lbs.max_edge_stretch) < 1e-3);
    /* The run's rig and skin are gone from the caller's world afterwards: the same world
     * takes another run. */
    assert_int_equal(run(f, "test-lagging", "twist:45", 0, &lag), SINEW_OK);
}

static void test_settle_budget_is_respected(void** state)
{
    fixture* f = *state;
    sample_quality_report report;
    assert_int_equal(run(f, "test-lagging", "bend:90", 3, &report), SINEW_OK);
    assert_false(report.settled);
    assert_int_equal(report.steps, SAMPLE_RAMP_STEPS + 3);
}

static void test_exploding_backend_is_reported_not_settled(void** state)
{
    fixture* f = *state;
    sample_quality_report report;
    assert_int_equal(run(f, "test-exploding", "bend:90", 0, &report), SINEW_OK);
    assert_false(report.settled);
    assert_int_equal(report.nonfinite_vertices, 1);
    assert_int_equal(report.steps, SAMPLE_RAMP_STEPS + 1);   /* no waiting for NaN to settle */
    assert_true(isnan(report.volume_ratio));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lagging_backend_settles_to_the_geometric_result, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_settle_budget_is_respected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exploding_backend_is_reported_not_settled, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
