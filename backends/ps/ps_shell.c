/* The function-table entries shared by the physics backends (ps_shell.h).
 * SPDX-License-Identifier: MIT */
#include "ps_shell.h"

#include <string.h>

sinew_result ps_shell_probe(const sinew_host_api* host)
{
    return host ? SINEW_OK : SINEW_ERROR_INVALID_ARGUMENT;
}

ps_shell* ps_shell_cast(void* instance, const char* backend)
{
    ps_shell* s = (ps_shell*)instance;
    return s && s->magic == PS_SHELL_MAGIC && strcmp(s->backend, backend) == 0 ? s : NULL;
}

/* Any live shell: the runtime hands each table only its own instances. */
static ps_shell* live(void* instance)
{
    ps_shell* s = (ps_shell*)instance;
    return s && s->magic == PS_SHELL_MAGIC && s->sim ? s : NULL;
}

sinew_result ps_shell_set_pose(void* instance, const sinew_pose_view* pose)
{
    ps_shell* s = live(instance);
    if (!s) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = ps_update_check_pose(s->host, s->backend, pose, s->joint_count);
    if (r != SINEW_OK) return r;
    ps_update_set_pose(s->update, pose->skinning_matrices);
    ps_jump_set_pose(s->jump, pose);
    return SINEW_OK;
}

/* The whole steps of h that dt and the carried remainder make (dt 0: a paused frame, no
 * step), through the poses between the last update's and the new one; a pose that jumps from
 * the previous one restarts the tissue instead (ps_update.c, ps_jump.c). */
sinew_result ps_shell_step(void* instance, float dt)
{
    ps_shell* s = live(instance);
    if (!s) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = ps_update_check_dt(s->host, s->backend, dt);
    if (r != SINEW_OK) return r;
    return ps_update_run(s->update, s->jump, s->out, s->model, s->update_ops, s->sim, dt);
}

sinew_result ps_shell_read_output(void* instance, const sinew_output_view* out)
{
    ps_shell* s = live(instance);
    return s ? ps_output_read(s->out, s->host, out) : SINEW_ERROR_INVALID_ARGUMENT;
}

sinew_result ps_shell_bind_output(void* instance, const sinew_output_view* out)
{
    ps_shell* s = live(instance);
    return s ? ps_output_bind(s->out, s->host, out) : SINEW_ERROR_INVALID_ARGUMENT;
}

sinew_result ps_shell_get_state(void* instance, const sinew_state_view* state)
{
    ps_shell* s = live(instance);
    return s ? ps_output_get_state(s->out, s->host, state) : SINEW_ERROR_INVALID_ARGUMENT;
}

/* A state from get_state: the skin and the output it gives; the pose-jump detection and the
 * step clock start over from it. */
sinew_result ps_shell_set_state(void* instance, const sinew_state_view* state)
{
    ps_shell* s = live(instance);
    if (!s) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = ps_output_set_state(s->out, s->host, s->model, s->render_indices, state);
    if (r != SINEW_OK) return r;
    ps_jump_set_state(s->jump);
    ps_update_set_state(s->update, s->update_ops, s->sim);
    return SINEW_OK;
}

void ps_shell_init(ps_shell* s, const char* backend, sinew_host_api* own_host,
                   const sinew_host_api* host, const sinew_rig_view* rig, const ps_model* model,
                   const ps_update_sim* update_ops, ps_output* out, ps_update* update,
                   ps_jump* jump)
{
    *s = (ps_shell){PS_SHELL_MAGIC, backend, own_host, rig->joint_count,
                    rig->render_mesh.indices, model, update_ops, NULL, out, update, jump};
    *own_host = *host;
    own_host->struct_size = (uint32_t)sizeof(sinew_host_api);
}

sinew_result ps_shell_check_prepare(const sinew_host_api* host, const char* backend,
                                    void** out_instance)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!out_instance)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s: out_instance is NULL",
                               backend);
    *out_instance = NULL;
    return SINEW_OK;
}

sinew_result ps_shell_init_parts(ps_shell* s, const sinew_host_api* host,
                                 const sinew_rig_view* rig, const ps_output_sim* output_ops,
                                 void* sim, double timestep, const ps_update_params* update,
                                 const ps_jump_params* jump)
{
    sinew_result r =
        ps_output_init(s->out, host, s->backend, &rig->render_mesh, output_ops, sim);
    if (r != SINEW_OK) return r;
    r = ps_update_init(s->update, host, s->backend, rig->joint_count, s->model->n, timestep,
                       update);
    if (r != SINEW_OK) return r;
    return ps_jump_init(s->jump, host, s->backend, rig, s->model, jump);
}

void ps_shell_prepared(ps_shell* s, const sinew_host_api* host, ps_model* model, void* sim,
                       bool profile, double t1, void** out_instance)
{
    model->build_seconds[PS_BUILD_SYSTEM] = ps_seconds() - t1;
    if (profile) ps_build_log(host, s->backend, model);
    s->sim = sim;
    *out_instance = s;
}

void ps_shell_free(ps_shell* s, ps_model* model)
{
    sinew_host_api host = *s->host;
    ps_model_free(&host, model);
    ps_output_free(s->out, &host);
    ps_jump_free(s->jump);
    ps_update_free(s->update);
    s->magic = 0;
    sinew_host_free(&host, s);
}

sinew_result ps_shell_bake_rig(const sinew_host_api* host, const char* backend,
                               const sinew_rig_view* rig, const sinew_bake_writer* writer,
                               sinew_rig_view* plain)
{
    if (!writer || !writer->write)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s bake: writer is NULL",
                               backend);
    sinew_result r = ps_check_rig(host, rig, backend);
    if (r != SINEW_OK) return r;
    *plain = *rig;
    plain->baked_backend = NULL;
    plain->baked_data = NULL;
    plain->baked_size = 0;
    return SINEW_OK;
}
