/* The `fps` backend: fast projective skinning on the CPU (Komaritzan and Botsch 2019,
 * ../shared/papers/fast-projective-skinning-2019.txt). The tissue model is ps's (volumetric
 * skeleton, shrinking, tissue mesh, skin sliding, upsampling, baking: backends/ps, object
 * library sinew_tissue); the base vertices are hard (Dirichlet) constraints instead of soft
 * anchors (Sec. 4.3), and the reduced system is solved by CHOLMOD or by the
 * Jacobi-preconditioned CG of Alg. 2 on the ELL/CRS matrix of Sec. 4.2, with the arithmetic of
 * the CUDA plugin (backends/common/fps_kernels.h). SPDX-License-Identifier: MIT
 *
 * Parameters (sinew_param strings; an unknown or repeated key or a bad value is
 * SINEW_ERROR_PARAMETER with one log line; README.md has the same table):
 *
 *   key             default  meaning
 *   iterations      10       PD (local/global) iterations per step, 1..1000 (Alg. 1)
 *   pcg_iterations  10       PCG iterations per PD iteration with solver=pcg, 1..10000 (Alg. 2)
 *   pcg_tolerance   0        0: always pcg_iterations; > 0 (below 1): stop earlier once every
 *                            coordinate's residual is below this, relative to its right-hand
 *                            side (pcg_iterations stays the cap)
 *   solver          cholmod  cholmod (simplicial LDL^T, AMD, factored once) or pcg (warm-started
 *                            from the previous iterate); a build without CHOLMOD defaults to pcg
 *                            and refuses cholmod with SINEW_ERROR_BACKEND_UNAVAILABLE
 *   timestep        1/60     h, seconds, (0, 1]: the fixed step; an update of dt runs the whole
 *                            steps of h that dt and the carried remainder make (ps_update.c)
 *   max_substeps    4        steps one update may run, 1..64; later whole steps are dropped
 *                            (one INFO line the first time; profile=1 counts them)
 *   interpolate_output 0     1: the output blends the state before the latest step towards
 *                            it by the carried fraction of a step (one step behind)
 *   damping         0.95     lambda of v = lambda (x_{t+1} - x_t) / h (Sec. 3): 1 = no damping
 *   strain_weight   1        strain stiffness per unit rest volume (> 0)
 *   mass            0.0005   tissue density (> 0), scaled as in ps (by the squared mean tissue
 *                            thickness, so that the wobble does not depend on the rig's units)
 *   sliding         1        skin sliding at joints (2018 Sec. 4.2) for the base vertices
 *   collisions      1        1: global collisions (Sec. 6): skin vertices found inside another
 *                            part's tissue are pushed onto that skin triangle's plane by three
 *                            edge springs (fps_collide.c)
 *   collision_weight 1       each spring's weight relative to the mean diagonal of the system
 *                            matrix (> 0, at most 1e6)
 *   inelastic_contacts 1     1: after each step a contact's vertex loses its speed of separation
 *                            from what it touches (fps_collide_stop_separation), so that the
 *                            next prediction does not carry it out of the contact; 0: elastic
 *   capsules        =collisions  limb capsules, each bone's rest flesh as a volume that other
 *                            parts' skin is held out of (fps_collide.c): on with the global
 *                            collisions unless capsules=0; capsules=1 needs collisions=1
 *                            (fps-cuda runs them too)
 *   profile         0        1: one INFO line with the per-step means of the phases (collision
 *                            detection among them) on destroy
 *   simd            auto     kernels of the batched polar decomposition: auto, scalar, avx2,
 *                            avx512 (same bits); one the CPU lacks is
 *                            SINEW_ERROR_BACKEND_UNAVAILABLE
 *   decimate_above  12000    as ps: a lone render mesh above this many vertices simulates a
 *   simulation_vertices 4000   decimated mesh of about this many vertices
 *   bone_radii      ""       as ps: joint:radius,... instead of the 75 % rule (2018 Sec. 3.1)
 *   jump_angle      45       as ps: degrees a joint may turn relative to its parent in one step
 *   jump_distance   0.5      and rig heights it may move relative to it (0: never) before the
 *                            step counts as a pose jump and the tissue restarts from the pose
 *                            (backends/ps/ps_jump.c; the contacts are dropped, as on set_state)
 *   joint_collisions 1       the 2018 paper's local collisions (Sec. 5) from ps's code: anchors
 *                            of the skin near each folding joint kept on their side of its plane
 *                            (backends/ps/ps_collide.c); 0: none
 *   volume_weight   0        as ps: the volume term (volume3.h), 0 = none
 *   volume_range    0.01     as ps: the band of det F it leaves alone
 *   upsampling      auto     auto (mls for a separate or decimated simulation mesh, else
 *                            normal), normal (2018 Sec. 6) or mls (2019 Sec. 5), ps_mls.h
 *
 * Contract: that of ps (backends/ps/README.md) with these differences: base vertices sit
 * exactly on their targets at every step; baked data is ps's model blob (bake writes it under
 * the name "fps", and a rig baked for "ps" is restored as well, since the model is the same). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "builtin_backends.h"
#include "fps_collide.h"
#include "ps_param_rows.h"
#include "fps_internal.h"
#include "fps_mls.h"
#include "ps_shell.h"
#include "polar3_batch.h"
#include "sinew_output.h"


typedef struct fps_instance {
    ps_shell shell; /* first: the function-table entries shared with ps (ps_shell.h) */
    sinew_host_api host;
    fps_params params;
    ps_model model;
    fps_sim* sim;
    ps_output out;    /* render-mesh output (own buffers, binding) */
    ps_update update; /* the poses and the step clock (backends/ps/ps_update.c) */
    sinew_mls_weights mls;   /* baked or restored when upsampling resolves to mls */
    ps_jump jump;            /* pose discontinuities (backends/ps/ps_jump.c) */
} fps_instance;

static fps_instance* fps_cast(void* instance)
{
    return (fps_instance*)ps_shell_cast(instance, FPS_NAME);
}

/* What ps_output and ps_update call on the simulation. */
PS_SHELL_SIM_OPS(fps_sim, ((fps_sim*)sim));

/* ---- parameters ---- */

void fps_params_default(fps_params* p)
{
    memset(p, 0, sizeof *p);
    p->iterations = 10u;
    p->pcg_iterations = 10u;
    p->pcg_tolerance = 0.0;
    p->timestep = 1.0 / 60.0;
    p->damping = 0.95;
    p->strain_weight = 1.0;
    p->mass = 0.0005;
#if defined(SINEW_HAVE_CHOLMOD)
    p->solver = FPS_SOLVER_CHOLMOD;
#else
    p->solver = FPS_SOLVER_PCG;
#endif
    p->sliding = 1;
    p->collisions = 1;
    p->collision_weight = 1.0;
    p->capsules = -1; /* not given: follows collisions (fps_params_parse) */
    p->inelastic_contacts = 1;
    p->profile = 0;
    p->simd = SINEW_SIMD_AUTO;
    p->decimate_above = 12000u;
    p->simulation_vertices = 4000u;
    p->bone_radii[0] = '\0';
    p->upsampling = PS_UPSAMPLING_AUTO;
    ps_jump_params_default(&p->jump);
    ps_volume_params_default(&p->volume);
    p->volume.joint = FPS_JOINT_VOLUME;
    ps_update_params_default(&p->update);
    p->joint_collisions = 1;
}

void fps_model_params(const fps_params* p, ps_params* out)
{
    ps_model_params_of(out, p->sliding, p->decimate_above, p->simulation_vertices, p->bone_radii);
}

static const int fps_solver_values[2] = {FPS_SOLVER_CHOLMOD, FPS_SOLVER_PCG};

static const sinew_param_info fps_param_info[] = {FPS_PARAM_ROWS(SINEW_PARAM_INFO_ROW, fps_params)};
static const sinew_param_slot fps_param_slots[] = {
    FPS_PARAM_ROWS(SINEW_PARAM_SLOT_ROW, fps_params)};
enum { FPS_PARAM_COUNT = sizeof fps_param_info / sizeof fps_param_info[0] };

sinew_result fps_params_parse(const sinew_host_api* host, const sinew_param* params,
                              uint32_t count, const void* next, fps_params* out)
{
    fps_params_default(out);
    sinew_result r = sinew_params_parse(host, FPS_NAME, fps_param_info, fps_param_slots,
                                        FPS_PARAM_COUNT, params, count, next, out);
    if (r != SINEW_OK) return r;
    if (out->capsules == 1 && !out->collisions)
        return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                               "fps: capsules=1 needs collisions=1 (the capsules are contacts "
                               "of the global collisions)");
    if (out->capsules < 0) out->capsules = out->collisions;
    return SINEW_OK;
}

/* ---- vtable ---- */

static void fps_destroy(void* instance)
{
    fps_instance* inst = fps_cast(instance);
    if (!inst) return;
    sinew_host_api host = inst->host;
    /* profile=1: the updates and steps, then the phases of the steps */
    if (inst->sim && inst->params.profile) ps_update_log_profile(&inst->update);
    if (inst->sim && inst->params.profile) {
        double sec[6];
        uint64_t steps;
        fps_sim_profile(inst->sim, sec, &steps);
        if (steps > 0) {
            double f = 1e3 / (double)steps;
            sinew_host_log(&host, SINEW_LOG_INFO,
                           "fps profile: %llu steps, per step: simulation %.3f ms (collision "
                           "detection %.3f, local step %.3f, right-hand side %.3f, solve %.3f), "
                           "upsampling %.3f ms",
                           (unsigned long long)steps, sec[4] * f, sec[5] * f, sec[0] * f,
                           sec[1] * f, sec[2] * f, sec[3] * f);
        }
    }
    fps_sim_destroy(inst->sim);
    sinew_mls_free(&host, &inst->mls);
    ps_shell_free(&inst->shell, &inst->model);
}

/* The model (ps's): restored from a "fps" or "ps" blob, else built (decimating a lone large
 * render mesh first, as ps does). */
static sinew_result build_model(const sinew_host_api* host, const sinew_rig_view* rig,
                                const fps_params* p, ps_model* m, bool* baked,
                                sinew_mls_weights* mls, bool* has_mls)
{
    *has_mls = false;
    *baked = rig->baked_backend && rig->baked_data &&
             (strcmp(rig->baked_backend, FPS_NAME) == 0 || strcmp(rig->baked_backend, PS_NAME) == 0);
    /* ps_bake_read_mls takes ps's blob alone as well (a rig baked for "ps"). */
    if (*baked)
        return ps_bake_read_mls(host, rig, rig->baked_data, rig->baked_size, m, mls, has_mls);
    ps_params pp;
    fps_model_params(p, &pp);
    /* the joints' contacts (2018 Sec. 5, ps_collide.c): candidates near each folding joint,
     * closer than ps's: the skin they constrain is free of the limb capsules, which must
     * still hold the armpit's fold (README.md, joint_collisions) */
    return ps_model_build_decimated(host, rig, &pp, p->joint_collisions ? FPS_JOINT_REACH : 0.0,
                                    m);
}

/* The parameters (text, and typed in `next`) and the checks that need no instance: a solver or
 * SIMD kernels this build or CPU lacks, and the rig. */
static sinew_result check_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                  const sinew_param* params, uint32_t param_count,
                                  const void* next, fps_params* p)
{
    sinew_result r = fps_params_parse(host, params, param_count, next, p);
    if (r != SINEW_OK) return r;
#if !defined(SINEW_HAVE_CHOLMOD)
    if (p->solver == FPS_SOLVER_CHOLMOD)
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_UNAVAILABLE,
                               "fps: solver=cholmod, but this build has no CHOLMOD (use pcg)");
#endif
    if (!sinew_polar3_batch_kernel(p->simd))
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_UNAVAILABLE,
                               "fps: simd=%s is not available on this CPU or in this build",
                               sinew_simd_name(p->simd));
    return ps_check_rig(host, rig, FPS_NAME);
}

/* The instance's model (build_model) and, when upsampling resolves to mls, its MLS weights
 * (Sec. 5): restored with the model when baked, else computed now. */
static sinew_result prepare_model(const sinew_host_api* host, const sinew_rig_view* rig,
                                  fps_instance* inst, bool* baked)
{
    bool has_mls = false;
    sinew_result r = build_model(host, rig, &inst->params, &inst->model, baked, &inst->mls,
                                 &has_mls);
    if (r != SINEW_OK) return r;
    return ps_mls_prepare(host, rig, &inst->model, inst->params.upsampling, has_mls, &inst->mls);
}

/* The simulation on the model and what the steps need around it: the render-mesh output, the
 * poses and the step clock, and the pose-jump detection. */
static sinew_result prepare_simulation(const sinew_host_api* host, const sinew_rig_view* rig,
                                       fps_instance* inst)
{
    sinew_result r = fps_sim_create(host, &inst->model, &inst->params, &inst->sim);
    if (r != SINEW_OK) return r;
    fps_sim_set_mls(inst->sim, inst->mls.indices ? &inst->mls : NULL);
    return ps_shell_init_parts(&inst->shell, host, rig, &fps_sim_output_ops, inst->sim,
                               inst->params.timestep, &inst->params.update,
                               &inst->params.jump);
}

/* One INFO line on the prepared instance: sizes of the model and of the reduced system, the
 * solver, and how long the model (t0 to t1) and the system (t1 to now) took. */
static void log_prepared(const sinew_host_api* host, const fps_instance* inst, bool baked,
                         double t0, double t1)
{
    const ps_model* m = &inst->model;
    const fps_params* p = &inst->params;
    uint32_t ell;
    size_t crs;
    fps_sim_ellcrs_shape(inst->sim, &ell, &crs);
    sinew_host_log(host, SINEW_LOG_INFO,
                   "fps: %s %u skin vertices, %u bones, %u tets; reduced system %u unknowns, "
                   "%zu nonzeros (ELL width %u, %zu CRS), solver %s%s%zu; model %.1f ms, "
                   "system %.1f ms",
                   baked ? "restored from baked data:" : "prepared", m->n, m->bone_count,
                   m->tet_count, fps_sim_free_count(inst->sim), fps_sim_matrix_nnz(inst->sim), ell,
                   crs, p->solver == FPS_SOLVER_PCG ? "pcg" : "cholmod",
                   p->solver == FPS_SOLVER_PCG ? "" : " factor nonzeros ",
                   p->solver == FPS_SOLVER_PCG ? (size_t)0 : fps_sim_factor_nnz(inst->sim),
                   1e3 * (t1 - t0), 1e3 * (ps_seconds() - t1));
}

static sinew_result fps_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                const sinew_param* params, uint32_t param_count, const void* next,
                                void** out_instance)
{
    sinew_result r = ps_shell_check_prepare(host, FPS_NAME, out_instance);
    if (r != SINEW_OK) return r;
    fps_params p;
    r = check_prepare(host, rig, params, param_count, next, &p);
    if (r != SINEW_OK) return r;
    double t0 = ps_seconds();
    fps_instance* inst = (fps_instance*)sinew_host_calloc(host, 1, sizeof(fps_instance));
    if (!inst) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps: out of memory");
    ps_shell_init(&inst->shell, FPS_NAME, &inst->host, host, rig, &inst->model,
                  &fps_sim_update_ops, &inst->out, &inst->update, &inst->jump);
    inst->params = p;
    bool baked = false;
    r = prepare_model(host, rig, inst, &baked);
    double t1 = ps_seconds();
    if (r == SINEW_OK) r = prepare_simulation(host, rig, inst);
    if (r != SINEW_OK) {
        fps_destroy(inst);
        return r;
    }
    ps_shell_prepared(&inst->shell, host, &inst->model, inst->sim, inst->params.profile, t1,
                      out_instance);
    log_prepared(host, inst, baked, t0, t1);
    return SINEW_OK;
}

sinew_result fps_instance_begin_update(void* instance, float dt, sinew_step_plan* plan,
                                       bool* reset)
{
    fps_instance* inst = fps_cast(instance);
    *reset = false;
    memset(plan, 0, sizeof *plan);
    if (!inst) return SINEW_ERROR_INVALID_ARGUMENT;
    return ps_update_begin(&inst->update, &inst->jump, &inst->out, &inst->model, dt, plan,
                           reset);
}

void fps_instance_step_pose(void* instance, const sinew_step_plan* plan, uint32_t i, bool reset)
{
    fps_instance* inst = fps_cast(instance);
    if (!inst) return;
    const float* pose = ps_update_step_pose(&inst->update, plan, i, reset);
    if (pose) fps_sim_set_pose(inst->sim, pose);
}

void fps_instance_end_update(void* instance)
{
    fps_instance* inst = fps_cast(instance);
    if (inst) ps_update_end(&inst->update);
}

/* Writes the blob of ps_mls.h: ps's model blob (ps_bake.c; fps uses the same
 * pose-independent model) and, when upsampling resolves to mls, the MLS weights. */
static sinew_result fps_bake(const sinew_host_api* host, const sinew_rig_view* rig,
                             const sinew_param* params, uint32_t param_count,
                             const sinew_bake_writer* writer)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    fps_params p;
    sinew_result r = fps_params_parse(host, params, param_count, NULL, &p);
    sinew_rig_view plain;
    if (r == SINEW_OK) r = ps_shell_bake_rig(host, FPS_NAME, rig, writer, &plain);
    if (r != SINEW_OK) return r;
    ps_model m;
    bool baked = false;
    sinew_mls_weights mls;
    bool has_mls = false;
    memset(&mls, 0, sizeof mls);
    r = build_model(host, &plain, &p, &m, &baked, &mls, &has_mls);
    if (r != SINEW_OK) return r;
    r = ps_mls_prepare(host, rig, &m, p.upsampling, false, &mls);
    /* the global collisions' rest data, so that a restore does not build it again */
    if (r == SINEW_OK && p.collisions) r = fps_collide_keep_rest_skips(host, &m);
    if (r == SINEW_OK) r = ps_bake_write_mls(host, rig, &m, mls.indices ? &mls : NULL, writer);
    sinew_mls_free(host, &mls);
    ps_model_free(host, &m);
    return r;
}

const ps_model* fps_instance_model(void* instance)
{
    fps_instance* inst = fps_cast(instance);
    return inst ? &inst->model : NULL;
}

fps_sim* fps_instance_sim(void* instance)
{
    fps_instance* inst = fps_cast(instance);
    return inst ? inst->sim : NULL;
}

const sinew_backend_vtable sinew_backend_fps = {
    (uint32_t)sizeof(sinew_backend_vtable),
    FPS_NAME,
    SINEW_BACKEND_FLAG_PHYSICS,
    ps_shell_probe,
    fps_prepare,
    PS_SHELL_VTABLE_ENTRIES,
    fps_destroy,
    fps_bake,
    fps_param_info,
    FPS_PARAM_COUNT,
};
