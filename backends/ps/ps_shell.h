/* The function-table entries that ps, fps and pbd share: set_pose, step, read_output,
 * bind_output, get_state and set_state of a physics backend whose simulation runs under the
 * tissue layer's time (ps_update.c), pose jumps (ps_jump.c) and output (ps_output.c).
 * SPDX-License-Identifier: MIT
 *
 * A backend's instance starts with a ps_shell that points at its own parts; the table's
 * entries are the ps_shell_* functions below, which take the instance as the runtime passes
 * it. */
#ifndef SINEW_PS_SHELL_H
#define SINEW_PS_SHELL_H

#include "ps_internal.h"

#define PS_SHELL_MAGIC 0x6c656873u /* "shel" */

typedef struct ps_shell {
    uint32_t magic;                  /* PS_SHELL_MAGIC while the instance lives */
    const char* backend;             /* the backend's name, for log lines and casts */
    const sinew_host_api* host;
    uint32_t joint_count;            /* of the rig */
    const uint32_t* render_indices;  /* the rig's render triangles (set_state) */
    const ps_model* model;
    const ps_update_sim* update_ops; /* what the update calls on the simulation */
    void* sim;                       /* set once the simulation exists */
    ps_output* out;
    ps_update* update;
    ps_jump* jump;
} ps_shell;

/* The shell at the start of `instance` when it is an instance of `backend`, else NULL. */
ps_shell* ps_shell_cast(void* instance, const char* backend);

sinew_result ps_shell_set_pose(void* instance, const sinew_pose_view* pose);
sinew_result ps_shell_step(void* instance, float dt);
sinew_result ps_shell_read_output(void* instance, const sinew_output_view* out);
sinew_result ps_shell_bind_output(void* instance, const sinew_output_view* out);
sinew_result ps_shell_get_state(void* instance, const sinew_state_view* state);
sinew_result ps_shell_set_state(void* instance, const sinew_state_view* state);

/* The six entries above in the order of sinew_backend_vtable, between prepare and destroy. */
#define PS_SHELL_VTABLE_ENTRIES                                                                \
    ps_shell_set_pose, ps_shell_step, ps_shell_read_output, ps_shell_bind_output,              \
        ps_shell_get_state, ps_shell_set_state

#endif
