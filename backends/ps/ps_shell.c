/* The function-table entries shared by the physics backends (ps_shell.h).
 * SPDX-License-Identifier: MIT */
#include "ps_shell.h"

#include <string.h>

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
