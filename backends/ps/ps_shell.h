/* The function-table entries that ps, fps and pbd share: set_pose, step, read_output,
 * bind_output, get_state and set_state of a physics backend whose simulation runs under the
 * tissue layer's time (ps_update.c), pose jumps (ps_jump.c) and output (ps_output.c).
 * SPDX-License-Identifier: MIT
 *
 * A backend's instance starts with a ps_shell that points at its own parts; the table's
 * entries are the ps_shell_* functions below, which take the instance as the runtime passes
 * it. The steps of prepare, destroy and bake that the backends share are here too, and the
 * adapters from the shell's tables to a simulation's functions (PS_SHELL_SIM_OPS). */
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

/* probe: the tissue backends run wherever the host does. */
sinew_result ps_shell_probe(const sinew_host_api* host);

/* The shell at the start of `instance` when it is an instance of `backend`, else NULL. */
ps_shell* ps_shell_cast(void* instance, const char* backend);

sinew_result ps_shell_set_pose(void* instance, const sinew_pose_view* pose);
sinew_result ps_shell_step(void* instance, float dt);
sinew_result ps_shell_read_output(void* instance, const sinew_output_view* out);
sinew_result ps_shell_bind_output(void* instance, const sinew_output_view* out);
sinew_result ps_shell_get_state(void* instance, const sinew_state_view* state);
sinew_result ps_shell_set_state(void* instance, const sinew_state_view* state);

/* Fills the shell of a new instance whose parts are the pointers given, and copies `host`
 * into `own_host` (the instance's copy, which the shell then uses). The simulation is set
 * once it exists (shell->sim). */
void ps_shell_init(ps_shell* s, const char* backend, sinew_host_api* own_host,
                   const sinew_host_api* host, const sinew_rig_view* rig, const ps_model* model,
                   const ps_update_sim* update_ops, ps_output* out, ps_update* update,
                   ps_jump* jump);

/* prepare's first checks: a host and somewhere to put the instance (set to NULL). */
sinew_result ps_shell_check_prepare(const sinew_host_api* host, const char* backend,
                                    void** out_instance);

/* What the steps need around the simulation `sim`: the render-mesh output (`output_ops`
 * on it), the poses and step clock of the updates, and the pose-jump detection. */
sinew_result ps_shell_init_parts(ps_shell* s, const sinew_host_api* host,
                                 const sinew_rig_view* rig, const ps_output_sim* output_ops,
                                 void* sim, double timestep, const ps_update_params* update,
                                 const ps_jump_params* jump);

/* A prepare that succeeded: the system's build time since t1 into the model's build_seconds
 * (with `profile`, ps_build_log's line on the model through `host`), the simulation into the
 * shell, and the instance (which starts with the shell) into *out_instance. */
void ps_shell_prepared(ps_shell* s, const sinew_host_api* host, ps_model* model, void* sim,
                       bool profile, double t1, void** out_instance);

/* Frees the parts the shell points at, `model` (the shell's, writable) and the instance
 * itself; the simulation is the backend's to free before. */
void ps_shell_free(ps_shell* s, ps_model* model);

/* bake's checks after the parameters (a writer, the rig) and the rig to bake from: `rig`
 * without the baked data it carries, so that a bake starts from scratch. */
sinew_result ps_shell_bake_rig(const sinew_host_api* host, const char* backend,
                               const sinew_rig_view* rig, const sinew_bake_writer* writer,
                               sinew_rig_view* plain);

/* The static adapters from ps_output_sim and ps_update_sim to a simulation type SIM whose
 * functions are SIM_upsample, SIM_step and so on, and the two tables SIM_output_ops and
 * SIM_update_ops; STEP_ARGS is the parenthesised argument list of SIM_step, in which the
 * simulation is `sim`. */
#define PS_SHELL_SIM_OPS(SIM, STEP_ARGS)                                                       \
    static void SIM##_upsample_cb(void* sim, float* positions, size_t position_stride,         \
                                  float* normals, size_t normal_stride)                        \
    {                                                                                          \
        SIM##_upsample((SIM*)sim, positions, position_stride, normals, normal_stride);         \
    }                                                                                          \
    static void SIM##_render_velocities_cb(const void* sim, float* velocities)                 \
    {                                                                                          \
        SIM##_render_velocities((const SIM*)sim, velocities);                                  \
    }                                                                                          \
    static void SIM##_set_skin_cb(void* sim, const float* positions, const float* velocities)  \
    {                                                                                          \
        SIM##_set_skin((SIM*)sim, positions, velocities);                                      \
    }                                                                                          \
    static void SIM##_set_pose_cb(void* sim, const float* skinning)                            \
    {                                                                                          \
        SIM##_set_pose((SIM*)sim, skinning);                                                   \
    }                                                                                          \
    static sinew_result SIM##_step_cb(void* sim)                                               \
    {                                                                                          \
        return SIM##_step STEP_ARGS;                                                           \
    }                                                                                          \
    static void SIM##_clear_velocities_cb(void* sim)                                           \
    {                                                                                          \
        SIM##_clear_velocities((SIM*)sim);                                                     \
    }                                                                                          \
    static void SIM##_skin_positions_cb(const void* sim, float* out)                           \
    {                                                                                          \
        SIM##_skin_positions((const SIM*)sim, out);                                            \
    }                                                                                          \
    static void SIM##_set_output_blend_cb(void* sim, const float* previous, float fraction)    \
    {                                                                                          \
        SIM##_set_output_blend((SIM*)sim, previous, fraction);                                 \
    }                                                                                          \
    static const ps_output_sim SIM##_output_ops = {SIM##_upsample_cb,                          \
                                                   SIM##_render_velocities_cb,                 \
                                                   SIM##_set_skin_cb};                         \
    static const ps_update_sim SIM##_update_ops = {                                            \
        SIM##_set_pose_cb, SIM##_step_cb, SIM##_clear_velocities_cb, SIM##_skin_positions_cb,  \
        SIM##_set_output_blend_cb}

/* The six entries above in the order of sinew_backend_vtable, between prepare and destroy. */
#define PS_SHELL_VTABLE_ENTRIES                                                                \
    ps_shell_set_pose, ps_shell_step, ps_shell_read_output, ps_shell_bind_output,              \
        ps_shell_get_state, ps_shell_set_state

#endif
