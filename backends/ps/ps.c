/* The `ps` backend: projective skinning (Komaritzan and Botsch 2018, "Projective Skinning",
 * ../shared/papers/projective-skinning-2018.txt) on the CPU. A volumetric skeleton of capsules
 * and spheres (Sec. 3.1), the skin shrunk onto it (Sec. 3.2), a tissue layer of prisms split
 * into tetrahedra (Sec. 3.3), simulated with projective dynamics (Sec. 4, 4.1) and upsampled
 * to the render mesh (Sec. 6, or by MLS, 2019 Sec. 5). No skin weights are needed.
 * SPDX-License-Identifier: MIT
 *
 * This file parses the parameters (each parser below says what it accepts; README.md,
 * "Parameters", has them with their defaults and meaning) and implements the backend's vtable:
 * prepare (the tissue model, built by ps_model.c or restored from a baked "ps" blob by
 * ps_bake.c; the local collisions' candidates, ps_collide.c; the simulation, ps_sim.c),
 * destroy and bake. set_pose and step (the update's dt as whole steps of h through the poses
 * in between, ps_update.c, or a restart from the pose after a pose jump, ps_jump.c), output
 * and state (ps_output.c) are the entries fps and pbd share (ps_shell.c). What the backend
 * promises about rigs, poses, output, state and baking is README.md, "Contract". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin_backends.h"
#include "fps_collide.h"
#include "ps_internal.h"
#include "ps_mls.h"
#include "ps_param_rows.h"
#include "ps_shell.h"
#include "sinew_output.h"

typedef struct ps_instance {
    ps_shell shell;   /* first: the shared function-table entries (ps_shell.h) */
    sinew_host_api host;
    ps_params params;
    ps_model model;
    sinew_mls_weights mls; /* restored or computed when upsampling resolves to mls */
    ps_sim* sim;
    ps_output out;    /* render-mesh output (own buffers, binding) */
    ps_update update; /* the poses and the step clock (ps_update.c) */
    ps_jump jump;     /* pose discontinuities (ps_jump.c) */
} ps_instance;

static ps_instance* ps_cast(void* instance)
{
    return (ps_instance*)ps_shell_cast(instance, PS_NAME);
}

/* What ps_output and ps_update call on the simulation. */
PS_SHELL_SIM_OPS(ps_sim, ((ps_sim*)sim, NULL));

/* ---- parameters ---- */

void ps_params_default(ps_params* p)
{
    p->iterations = 10u;
    p->timestep = 1.0 / 60.0;
    p->damping = 0.95;
    p->strain_weight = 1.0;
    p->anchor_weight = 1000.0;
    p->mass = 0.0005;
    p->collisions = 1;
    p->collision_weight = 10.0;
    p->collision_joints[0] = '\0';
    p->global_collisions = 1;
    p->global_weight = 0.5;
    p->inelastic_contacts = 1;
    p->profile = 0;
    p->simd = SINEW_SIMD_AUTO;
    p->sliding = 1;
    p->decimate_above = 12000u;
    p->simulation_vertices = 4000u;
    p->bone_radii[0] = '\0';
    p->collision_angle_test = 0;
    p->collision_poses = 0;
    p->upsampling = PS_UPSAMPLING_AUTO;
    ps_jump_params_default(&p->jump);
    ps_volume_params_default(&p->volume);
    ps_update_params_default(&p->update);
}

/* ps's keys (README.md, "Parameters"): its own, then the tissue backends' shared rows. */
#define PS_PARAM_ROWS(X, T)                                                                       \
    X(T, iterations, INTEGER, 0, 1.0, 1000.0, "10", NULL,                                          \
      "local/global iterations per step (Sec. 4)", U32, iterations, NULL)                         \
    X(T, strain_weight, REAL, SINEW_PARAM_MIN_OPEN, 0.0, 1e12, "1", NULL,                           \
      "strain stiffness per unit rest volume", DOUBLE, strain_weight, NULL)                       \
    X(T, anchor_weight, REAL, SINEW_PARAM_MIN_OPEN, 0.0, 1e12, "1000", NULL,                        \
      "anchor stiffness of the base vertices relative to their strain stiffness", DOUBLE,         \
      anchor_weight, NULL)                                                                        \
    X(T, simd, CHOICE, 0, 0.0, 0.0, "auto", PS_SIMD_CHOICES,                                        \
      "kernels of the local step (the same bits)", INT, simd, ps_simd_values)                     \
    X(T, collisions, FLAG, 0, 0.0, 1.0, "1", NULL, "local collisions at folding joints (Sec. 5)",   \
      INT, collisions, NULL)                                                                      \
    X(T, collision_weight, REAL, SINEW_PARAM_MIN_OPEN, 0.0, 1e6, "10", NULL,                        \
      "weight of the collision constraints relative to the vertex's diagonal (Sec. 5.3)", DOUBLE, \
      collision_weight, NULL)                                                                     \
    X(T, global_collisions, FLAG, 0, 0.0, 1.0, "1", NULL,                                            \
      "contacts between body parts (2019 Sec. 6) in the second matrix", INT, global_collisions,   \
      NULL)                                                                                       \
    X(T, inelastic_contacts, FLAG, 0, 0.0, 1.0, "1", NULL,                                          \
      "global contacts keep no speed of separation from their pushes", INT, inelastic_contacts,   \
      NULL)                                                                                       \
    X(T, global_weight, REAL, SINEW_PARAM_MIN_OPEN, 0.0, 1e6, "0.5", NULL,                            \
      "weight of each skin vertex's contact constraint relative to its diagonal", DOUBLE,         \
      global_weight, NULL)                                                                        \
    X(T, collision_joints, TEXT, 0, 0.0, 1023.0, "", NULL,                                          \
      "comma-separated names of the folding joints; not given: chosen by name and shape", TEXT,   \
      collision_joints, NULL)                                                                     \
    X(T, collision_test, CHOICE, 0, 0.0, 0.0, "plane", "plane|angle",                               \
      "plane: each vertex keeps its side of the fold's plane; angle: Fig. 10 gates them", INT,    \
      collision_angle_test, NULL)                                                                 \
    X(T, collision_candidates, CHOICE, 0, 0.0, 0.0, "near", "near|poses",                           \
      "near: the skin of each folding joint's bones; poses: Sec. 5.1's simulated poses", INT,     \
      collision_poses, NULL)                                                                      \
    X(T, upsampling, CHOICE, 0, 0.0, 0.0, "auto", PS_UPSAMPLING_CHOICES,                            \
      "auto: mls for a separate simulation mesh, else normal displacement (Sec. 6)", INT,         \
      upsampling, NULL)                                                                           \
    PS_PARAM_ROWS_TIME(X, T) PS_PARAM_ROWS_MODEL(X, T) PS_PARAM_ROWS_JUMP(X, T)                   \
    PS_PARAM_ROWS_VOLUME(X, T) PS_PARAM_ROWS_JOINT_VOLUME(X, T, "1")

static const sinew_param_info ps_param_info[] = {PS_PARAM_ROWS(SINEW_PARAM_INFO_ROW, ps_params)};
static const sinew_param_slot ps_param_slots[] = {
    PS_PARAM_ROWS(SINEW_PARAM_SLOT_ROW, ps_params)};
enum { PS_PARAM_COUNT = sizeof ps_param_info / sizeof ps_param_info[0] };

/* collision_joints: names that are not empty (no leading, trailing or doubled comma). */
static bool joint_list_ok(const char* list)
{
    size_t len = strlen(list);
    return len == 0 || (list[0] != ',' && list[len - 1] != ',' && !strstr(list, ",,"));
}

sinew_result ps_params_parse(const sinew_host_api* host, const sinew_param* params,
                             uint32_t count, const void* next, ps_params* out)
{
    ps_params_default(out);
    sinew_result r = sinew_params_parse(host, PS_NAME, ps_param_info, ps_param_slots,
                                        PS_PARAM_COUNT, params, count, next, out);
    if (r == SINEW_OK && !joint_list_ok(out->collision_joints))
        r = sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                            "ps: collision_joints=\"%.64s\" is not a comma-separated list of "
                            "joint names", out->collision_joints);
    return r;
}

/* ---- vtable ---- */

static void ps_destroy(void* instance)
{
    ps_instance* inst = ps_cast(instance);
    if (!inst) return;
    sinew_host_api host = inst->host;
    /* profile=1: the updates and steps, then the phases of the steps */
    if (inst->sim && inst->params.profile) ps_update_log_profile(&inst->update);
    if (inst->sim && inst->params.profile) {
        double sec[5];
        uint64_t steps;
        ps_sim_profile(inst->sim, sec, &steps);
        if (steps > 0) {
            double f = 1e3 / (double)steps;
            sinew_host_log(&host, SINEW_LOG_INFO,
                           "ps profile: %llu steps, per step: simulation %.3f ms (local step "
                           "%.3f, right-hand side %.3f, solve %.3f), upsampling %.3f ms",
                           (unsigned long long)steps, sec[4] * f, sec[0] * f, sec[1] * f,
                           sec[2] * f, sec[3] * f);
            if (ps_sim_collide(inst->sim)) {
                double col[2];
                ps_sim_profile_collisions(inst->sim, col);
                sinew_host_log(&host, SINEW_LOG_INFO,
                               "ps profile: collisions per step %.3f ms (clamp, angle test, "
                               "projections), %.3f ms in the %u solves with the second factor",
                               col[0] * f, col[1] * f,
                               inst->params.iterations - inst->params.iterations / 2u);
            }
        }
    }
    ps_sim_destroy(inst->sim);
    sinew_mls_free(&host, &inst->mls);
    ps_shell_free(&inst->shell, &inst->model);
}

/* Checks collision_joints against the rig and, with collisions on, computes the candidate
 * pairs of Sec. 5.1 unless the model already has them (restored from baked data: the baked
 * pairs are used as they are). */
static sinew_result collision_candidates(const sinew_host_api* host, const sinew_rig_view* rig,
                                         ps_model* m, const ps_params* p)
{
    if (p->collision_joints[0]) {
        uint8_t* chosen = (uint8_t*)sinew_host_calloc(host, m->joint_count, 1);
        if (!chosen) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
        uint32_t count = 0;
        sinew_result r = ps_collide_select(host, rig, m, p->collision_joints, chosen, &count);
        sinew_host_free(host, chosen);
        if (r != SINEW_OK) return r;
    }
    if (!p->collisions || m->has_collision_pairs) return SINEW_OK;
    return p->collision_poses ? ps_collide_candidates(host, rig, m, p)
                              : ps_collide_candidates_near(host, rig, m, p, 0.0);
}

/* The model: restored from a "ps" blob (with MLS weights when it has them), else built, a
 * lone large render mesh decimated first (Sec. 6; a bake carries that mesh); then the
 * collision candidates. */
static sinew_result build_model(const sinew_host_api* host, const sinew_rig_view* rig,
                                ps_instance* inst, bool* baked, bool* has_mls)
{
    const ps_params* p = &inst->params;
    double t0 = ps_seconds();
    *has_mls = false;
    *baked = rig->baked_backend && strcmp(rig->baked_backend, PS_NAME) == 0;
    sinew_rig_view view;
    sinew_decimated_mesh decimated;
    sinew_result r;
    if (*baked)
        r = ps_bake_read_mls(host, rig, rig->baked_data, rig->baked_size, &inst->model,
                             &inst->mls, has_mls);
    else
        r = ps_decimate_view(host, rig, p, &view, &decimated);
    double decimation = ps_seconds() - t0;
    if (r == SINEW_OK && !*baked) r = ps_model_build_with(host, &view, p, &inst->model);
    if (r == SINEW_OK && !*baked) {
        inst->model.decimated_triangles = decimated.triangle_count;
        inst->model.build_seconds[PS_BUILD_DECIMATE] = decimation;
    }
    double tc = ps_seconds();
    if (r == SINEW_OK) r = collision_candidates(host, *baked ? rig : &view, &inst->model, p);
    inst->model.build_seconds[PS_BUILD_CANDIDATES] = ps_seconds() - tc;
    if (!*baked) sinew_decimated_free(host, &decimated);
    return r;
}

/* The model (build_model) and, when upsampling resolves to mls, its MLS weights (2019
 * Sec. 5): restored with the model when baked, else computed now. */
static sinew_result prepare_model(const sinew_host_api* host, const sinew_rig_view* rig,
                                  ps_instance* inst, bool* baked)
{
    bool has_mls = false;
    sinew_result r = build_model(host, rig, inst, baked, &has_mls);
    if (r != SINEW_OK) return r;
    return ps_mls_prepare(host, rig, &inst->model, inst->params.upsampling, has_mls, &inst->mls);
}

static sinew_result ps_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                               const sinew_param* params, uint32_t param_count, const void* next,
                               void** out_instance)
{
    sinew_result r = ps_shell_check_prepare(host, PS_NAME, out_instance);
    if (r != SINEW_OK) return r;
    ps_params p;
    r = ps_params_parse(host, params, param_count, next, &p);
    if (r == SINEW_OK) r = ps_simd_resolve(host, &p.simd);
    if (r != SINEW_OK) return r;
    r = ps_check_rig(host, rig, PS_NAME);
    if (r != SINEW_OK) return r;
    double t0 = ps_seconds();
    ps_instance* inst = (ps_instance*)sinew_host_calloc(host, 1, sizeof(ps_instance));
    if (!inst) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
    ps_shell_init(&inst->shell, PS_NAME, &inst->host, host, rig, &inst->model,
                  &ps_sim_update_ops, &inst->out, &inst->update, &inst->jump);
    inst->params = p;
    bool baked = false;
    r = prepare_model(host, rig, inst, &baked);
    if (r != SINEW_OK) {
        ps_destroy(inst);
        return r;
    }
    double t1 = ps_seconds();
    r = ps_sim_create(host, &inst->model, &p, &inst->sim);
    if (r != SINEW_OK) {
        ps_destroy(inst);
        return r;
    }
    ps_sim_set_mls(inst->sim, inst->mls.indices ? &inst->mls : NULL);
    r = ps_shell_init_parts(&inst->shell, host, rig, &ps_sim_output_ops, inst->sim, p.timestep,
                            &p.update, &p.jump);
    if (r != SINEW_OK) {
        ps_destroy(inst);
        return r;
    }
    ps_shell_prepared(&inst->shell, host, &inst->model, inst->sim, p.profile, t1, out_instance);
    const ps_model* m = &inst->model;
    sinew_host_log(host, SINEW_LOG_INFO,
                   "ps: %s %u skin vertices, %u bones, %u tets (%u degenerate), %zu matrix "
                   "nonzeros, %zu in the factor; model %.1f ms, system %.1f ms",
                   baked ? "restored from baked data:" : "prepared", m->n, m->bone_count,
                   m->tet_count, m->degenerate_count, ps_sim_matrix_nnz(inst->sim),
                   ps_sim_factor_nnz(inst->sim), 1e3 * (t1 - t0), 1e3 * (ps_seconds() - t1));
    return SINEW_OK;
}

static sinew_result ps_bake(const sinew_host_api* host, const sinew_rig_view* rig,
                            const sinew_param* params, uint32_t param_count,
                            const sinew_bake_writer* writer)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    ps_params p;
    sinew_result r = ps_params_parse(host, params, param_count, NULL, &p);
    sinew_rig_view plain;
    if (r == SINEW_OK) r = ps_shell_bake_rig(host, PS_NAME, rig, writer, &plain);
    if (r != SINEW_OK) return r;
    ps_instance inst;
    memset(&inst, 0, sizeof inst);
    inst.params = p;
    bool baked = false;
    r = prepare_model(host, &plain, &inst, &baked);
    /* the global collisions' rest data, so that a restore does not build it again */
    if (r == SINEW_OK && p.global_collisions) r = fps_collide_keep_rest_skips(host, &inst.model);
    /* The model's blob alone when there are no weights (ps_mls.h reads both). */
    if (r == SINEW_OK && inst.mls.indices)
        r = ps_bake_write_mls(host, rig, &inst.model, &inst.mls, writer);
    else if (r == SINEW_OK)
        r = ps_bake_write(host, rig, &inst.model, writer);
    sinew_mls_free(host, &inst.mls);
    ps_model_free(host, &inst.model);
    return r;
}

const ps_model* ps_instance_model(void* instance)
{
    ps_instance* inst = ps_cast(instance);
    return inst ? &inst->model : NULL;
}

ps_sim* ps_instance_sim(void* instance)
{
    ps_instance* inst = ps_cast(instance);
    return inst ? inst->sim : NULL;
}

const sinew_backend_vtable sinew_backend_ps = {
    (uint32_t)sizeof(sinew_backend_vtable),
    PS_NAME,
    SINEW_BACKEND_FLAG_PHYSICS,
    ps_shell_probe,
    ps_prepare,
    PS_SHELL_VTABLE_ENTRIES,
    ps_destroy,
    ps_bake,
    ps_param_info,
    PS_PARAM_COUNT,
};
