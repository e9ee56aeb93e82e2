/* The time of a physics backend (ps, fps, and fps-cuda through fps): each update's dt becomes
 * whole steps of the fixed timestep h (sinew_step_clock.h: an accumulator, at most
 * max_substeps steps per update, the rest below h carried), the steps of one update move
 * through the poses between the previous update's and the new one (linear blends of the
 * skinning matrices at each step's end), and with interpolate_output the output blends the
 * state before the latest step towards it by the carried fraction of a step. A pose jump is
 * judged once per update on its whole change (ps_jump.c); a restart then steps at the new
 * pose only. SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>

#include "ps_internal.h"

sinew_result ps_update_check_pose(const sinew_host_api* host, const char* backend,
                                  const sinew_pose_view* pose, uint32_t joint_count)
{
    if (!pose) return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s: pose is NULL", backend);
    if (pose->struct_size < SINEW_POSE_VIEW_SIZE_V1)
        return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE, "%s: pose struct_size %u is below "
                               "%u", backend, pose->struct_size, SINEW_POSE_VIEW_SIZE_V1);
    if (pose->joint_count != joint_count)
        return sinew_host_fail(host, SINEW_ERROR_JOINT_COUNT, "%s: a pose of %u joints for a rig "
                               "of %u", backend, pose->joint_count, joint_count);
    if (!pose->skinning_matrices)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: the pose has no skinning matrices", backend);
    for (uint32_t k = 0; k < 16u * joint_count; ++k)
        if (!isfinite(pose->skinning_matrices[k]))
            return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                                   "%s: the skinning matrix of joint %u is not finite", backend,
                                   k / 16u);
    return SINEW_OK;
}

sinew_result ps_update_check_dt(const sinew_host_api* host, const char* backend, float dt)
{
    if (isfinite(dt) && dt >= 0.0f) return SINEW_OK;
    return sinew_host_fail(host, isfinite(dt) ? SINEW_ERROR_INVALID_ARGUMENT : SINEW_ERROR_NONFINITE,
                           "%s: dt %g must be finite and not negative", backend, (double)dt);
}

void ps_update_params_default(ps_update_params* p)
{
    p->max_substeps = SINEW_STEP_CLOCK_DEFAULT_SUBSTEPS;
    p->interpolate_output = 0;
}

static void identity_poses(float* skinning, uint32_t joint_count)
{
    for (uint32_t j = 0; j < joint_count; ++j)
        for (int k = 0; k < 16; ++k) skinning[16u * j + k] = (k % 5 == 0) ? 1.0f : 0.0f;
}

sinew_result ps_update_init(ps_update* u, const sinew_host_api* host, const char* backend,
                            uint32_t joint_count, uint32_t skin_count, double h,
                            const ps_update_params* params)
{
    memset(u, 0, sizeof *u);
    u->host = *host;
    u->backend = backend;
    u->params = *params;
    u->joint_count = joint_count;
    sinew_step_clock_init(&u->clock, h, params->max_substeps);
    u->latest = (float*)sinew_host_calloc(host, joint_count, 64u);
    u->from = (float*)sinew_host_calloc(host, joint_count, 64u);
    u->pose = (float*)sinew_host_calloc(host, joint_count, 64u);
    if (params->interpolate_output)
        u->previous = (float*)sinew_host_calloc(host, skin_count ? skin_count : 1u, 12u);
    if (!u->latest || !u->from || !u->pose || (params->interpolate_output && !u->previous))
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", backend);
    /* the simulation starts at the rest pose, as the jump test does */
    identity_poses(u->latest, joint_count);
    identity_poses(u->from, joint_count);
    u->sim_at_latest = true;
    return SINEW_OK;
}

void ps_update_free(ps_update* u)
{
    sinew_host_free(&u->host, u->latest);
    sinew_host_free(&u->host, u->from);
    sinew_host_free(&u->host, u->pose);
    sinew_host_free(&u->host, u->previous);
    u->latest = u->from = u->pose = u->previous = NULL;
}

void ps_update_set_pose(ps_update* u, const float* skinning)
{
    memcpy(u->latest, skinning, (size_t)u->joint_count * 64u);
    u->pending = true;
    u->sim_at_latest = false;
}

/* The first update that drops steps says so once; profile=1 counts every one. */
static void log_drop(ps_update* u, const sinew_step_plan* plan)
{
    if (u->logged_drop) return;
    u->logged_drop = true;
    sinew_host_log(&u->host, SINEW_LOG_INFO,
                   "%s: an update of %.4g s needs %llu steps of %.4g s, max_substeps is %u: "
                   "%.4g s dropped (logged once; profile=1 counts every drop)", u->backend,
                   plan->dt, (unsigned long long)(plan->count + plan->dropped), plan->h,
                   u->params.max_substeps, (double)plan->dropped * plan->h);
}

sinew_result ps_update_begin(ps_update* u, ps_jump* j, ps_output* o, const ps_model* m,
                             float dt, sinew_step_plan* plan, bool* reset)
{
    sinew_result r = ps_jump_begin_update(j, o, m, u->pending ? u->latest : NULL, reset);
    if (r != SINEW_OK) return r;
    *plan = sinew_step_clock_advance(&u->clock, (double)dt, *reset ? 1u : 0u);
    if (plan->dropped) log_drop(u, plan);
    return SINEW_OK;
}

const float* ps_update_step_pose(ps_update* u, const sinew_step_plan* plan, uint32_t i,
                                 bool reset)
{
    float w = u->pending && !reset ? sinew_step_plan_weight(plan, i) : 1.0f;
    if (w == 1.0f) {
        if (u->sim_at_latest) return NULL;
        u->sim_at_latest = true;
        return u->latest;
    }
    sinew_step_blend(u->from, u->latest, 16u * u->joint_count, w, u->pose);
    u->sim_at_latest = false;
    return u->pose;
}

void ps_update_end(ps_update* u)
{
    if (u->pending) memcpy(u->from, u->latest, (size_t)u->joint_count * 64u);
    u->pending = false;
}

/* The output after an update that ran `count` steps. Without a step the shape stays (a
 * binding made since it was written, another slot of a double-buffered output, gets it), unless
 * the interpolated output's blend moved on a simulated shape. */
static void update_output(ps_update* u, ps_output* o, const ps_update_sim* ops, void* sim,
                          uint32_t count)
{
    bool moved = false;
    if (u->params.interpolate_output && u->have_previous) {
        ops->set_output_blend(sim, u->previous, sinew_step_clock_fraction(&u->clock));
        moved = o->shape == PS_SHAPE_SIM;
    }
    if (count > 0 || moved) ps_output_after_step(o);
    else ps_output_fill_binding(o);
}

sinew_result ps_update_run(ps_update* u, ps_jump* j, ps_output* o, const ps_model* m,
                           const ps_update_sim* ops, void* sim, float dt)
{
    sinew_step_plan plan;
    bool reset = false;
    sinew_result r = ps_update_begin(u, j, o, m, dt, &plan, &reset);
    for (uint32_t i = 0; r == SINEW_OK && i < plan.count; ++i) {
        const float* pose = ps_update_step_pose(u, &plan, i, reset);
        if (pose) ops->set_pose(sim, pose);
        if (u->previous && i + 1u == plan.count) {
            ops->skin_positions(sim, u->previous);
            u->have_previous = true;
        }
        r = ops->step(sim);
        if (r == SINEW_OK && reset && i == 0) ops->clear_velocities(sim); /* quasi-static */
    }
    ps_update_end(u);
    if (r != SINEW_OK) return r;
    update_output(u, o, ops, sim, plan.count);
    return SINEW_OK;
}

void ps_update_set_state(ps_update* u, const ps_update_sim* ops, void* sim)
{
    u->have_previous = false;
    if (u->previous) ops->set_output_blend(sim, NULL, 0.0f);
}

void ps_update_log_profile(const ps_update* u)
{
    const sinew_step_clock* c = &u->clock;
    sinew_host_log(&u->host, SINEW_LOG_INFO,
                   "%s profile: %llu updates, %llu steps of %.4g s; %llu steps (%.4g s) dropped "
                   "in %llu updates (max_substeps %u)", u->backend,
                   (unsigned long long)c->updates, (unsigned long long)c->steps, c->h,
                   (unsigned long long)c->dropped_steps, (double)c->dropped_steps * c->h,
                   (unsigned long long)c->dropped_updates, u->params.max_substeps);
}
