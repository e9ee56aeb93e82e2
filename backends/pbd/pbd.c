/* The `pbd` backend: position based dynamics on the tissue mesh with graph-coloured parallel
 * constraint solving (Fratarcangeli and Pellacini, ../shared/papers/parallel-position-based-
 * dynamics.txt). The tissue model is ps's (backends/ps, object library sinew_tissue); the
 * constraints are a stretch constraint per tet edge and a volume constraint per tet (Sec. 3.1,
 * pbd_constraints.c) and, with `bending`, a bending constraint per pair of skin triangles on
 * an edge, coloured greedily in smallest-last order (Sec. 4, pbd_colour.c) and
 * solved colour by colour over the host's job system (pbd_project.c), with XPBD compliance
 * or plain PBD stiffness; base vertices follow the bones as fps's hard constraints do
 * (pbd_sim.c). Parameters: pbd_params.c and README.md. SPDX-License-Identifier: MIT
 *
 * Contract: that of fps (backends/fps/README.md): base vertices sit exactly on their targets
 * at every step; an update runs the whole steps of `timestep` that its dt and the carried
 * remainder make (backends/ps/ps_update.c: at most max_substeps, through the poses between
 * the previous update's and the new one); the render mesh is upsampled with ps's normal
 * displacements (2018 Sec. 6). */
#include <math.h>
#include <string.h>

#include "builtin_backends.h"
#include "pbd_internal.h"
#include "ps_shell.h"

typedef struct pbd_instance {
    ps_shell shell; /* first: the function-table entries shared with ps (ps_shell.h) */
    sinew_host_api host;
    pbd_params params;
    ps_model model;
    pbd_sim* sim;
    ps_output out;   /* render-mesh output (own buffers, binding) */
    ps_update update; /* the poses and the step clock (backends/ps/ps_update.c) */
    ps_jump jump;    /* pose discontinuities (backends/ps/ps_jump.c) */
} pbd_instance;

static pbd_instance* pbd_cast(void* instance)
{
    return (pbd_instance*)ps_shell_cast(instance, PBD_NAME);
}

/* What ps_output and ps_update call on the simulation. */
PS_SHELL_SIM_OPS(pbd_sim, ((pbd_sim*)sim));

/* profile=1: the per-step means of the phases, one INFO line. */
static void log_profile(const sinew_host_api* host, const pbd_sim* sim)
{
    double sec[4];
    uint64_t steps;
    pbd_sim_profile(sim, sec, &steps);
    if (steps == 0) return;
    double f = 1e3 / (double)steps;
    sinew_host_log(host, SINEW_LOG_INFO,
                   "pbd profile: %llu steps, per step: targets and prediction %.3f ms, coloured "
                   "sweeps %.3f ms, contacts %.3f ms, upsampling %.3f ms",
                   (unsigned long long)steps, sec[0] * f, sec[1] * f, sec[2] * f, sec[3] * f);
}

/* ---- vtable ---- */

static void pbd_destroy(void* instance)
{
    pbd_instance* inst = pbd_cast(instance);
    if (!inst) return;
    sinew_host_api host = inst->host;
    if (inst->sim && inst->params.profile) {
        log_profile(&host, inst->sim);
        ps_update_log_profile(&inst->update);
    }
    pbd_sim_destroy(inst->sim);
    ps_shell_free(&inst->shell, &inst->model);
}

/* The parameters and the checks that need no instance. */
static sinew_result check_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                  const sinew_param* params, uint32_t param_count,
                                  const void* next, pbd_params* p)
{
    sinew_result r = pbd_params_parse(host, params, param_count, next, p);
    if (r != SINEW_OK) return r;
    sinew_simd simd = p->simd;
    r = pbd_simd_resolve(host, &simd);
    if (r != SINEW_OK) return r;
    return ps_check_rig(host, rig, PBD_NAME);
}

/* The simulation on the model and what the steps need around it: the render-mesh output, the
 * poses and step clock of the updates and the pose-jump detection. */
static sinew_result prepare_simulation(const sinew_host_api* host, const sinew_rig_view* rig,
                                       pbd_instance* inst)
{
    sinew_result r = pbd_sim_create(host, &inst->model, &inst->params, &inst->sim);
    if (r != SINEW_OK) return r;
    return ps_shell_init_parts(&inst->shell, host, rig, &pbd_sim_output_ops, inst->sim,
                               inst->params.timestep, &inst->params.update,
                               &inst->params.jump);
}

/* One INFO line on the prepared instance: the model, the constraints and their colours
 * (Sec. 4, Table 1 reports the same), and how long the model (t0 to t1) and the constraints
 * with their colouring (t1 to now) took. */
static void log_prepared(const sinew_host_api* host, const pbd_instance* inst, bool baked,
                         double t0, double t1)
{
    const ps_model* m = &inst->model;
    const pbd_constraints* c = pbd_sim_constraints(inst->sim);
    uint32_t largest = 0, smallest = c->colour_count ? UINT32_MAX : 0u;
    for (uint32_t q = 0; q < c->colour_count; ++q) {
        uint32_t size = pbd_colour_size(c, q);
        largest = size > largest ? size : largest;
        smallest = size < smallest ? size : smallest;
    }
    sinew_host_log(host, SINEW_LOG_INFO,
                   "pbd: %s %u skin vertices, %u bones, %u tets; %u stretch, %u volume and %u "
                   "bending constraints in %u colours of %u to %u (constraint graph degeneracy "
                   "%u); model %.1f ms, constraints and colouring %.1f ms",
                   baked ? "restored from baked data:" : "prepared", m->n, m->bone_count,
                   m->tet_count, c->stretch_count, c->volume_count, c->bending_count,
                   c->colour_count, smallest,
                   largest, c->degeneracy, 1e3 * (t1 - t0), 1e3 * (ps_seconds() - t1));
}

static sinew_result pbd_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                const sinew_param* params, uint32_t param_count, const void* next,
                                void** out_instance)
{
    sinew_result r = ps_shell_check_prepare(host, PBD_NAME, out_instance);
    if (r != SINEW_OK) return r;
    pbd_params p;
    r = check_prepare(host, rig, params, param_count, next, &p);
    if (r != SINEW_OK) return r;
    double t0 = ps_seconds();
    pbd_instance* inst = (pbd_instance*)sinew_host_calloc(host, 1, sizeof(pbd_instance));
    if (!inst) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "pbd: out of memory");
    ps_shell_init(&inst->shell, PBD_NAME, &inst->host, host, rig, &inst->model,
                  &pbd_sim_update_ops, &inst->out, &inst->update, &inst->jump);
    inst->params = p;
    bool baked = false;
    r = pbd_model_prepare(host, rig, &inst->params, PBD_NAME, &inst->model, &baked);
    double t1 = ps_seconds();
    if (r == SINEW_OK) r = prepare_simulation(host, rig, inst);
    if (r != SINEW_OK) {
        pbd_destroy(inst);
        return r;
    }
    ps_shell_prepared(&inst->shell, host, &inst->model, inst->sim, inst->params.profile, t1,
                      out_instance);
    log_prepared(host, inst, baked, t0, t1);
    return SINEW_OK;
}

/* Writes ps's model blob (ps_bake.c; pbd uses the same pose-independent model) with the
 * joints' contact candidates when collisions are on. */
static sinew_result pbd_bake(const sinew_host_api* host, const sinew_rig_view* rig,
                             const sinew_param* params, uint32_t param_count,
                             const sinew_bake_writer* writer)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    pbd_params p;
    sinew_result r = pbd_params_parse(host, params, param_count, NULL, &p);
    sinew_rig_view plain;
    if (r == SINEW_OK) r = ps_shell_bake_rig(host, PBD_NAME, rig, writer, &plain);
    if (r != SINEW_OK) return r;
    ps_model m;
    bool baked = false;
    r = pbd_model_prepare(host, &plain, &p, PBD_NAME, &m, &baked);
    if (r != SINEW_OK) return r;
    r = ps_bake_write(host, rig, &m, writer);
    ps_model_free(host, &m);
    return r;
}

pbd_sim* pbd_instance_sim(void* instance)
{
    pbd_instance* inst = pbd_cast(instance);
    return inst ? inst->sim : NULL;
}

const ps_model* pbd_instance_model(void* instance)
{
    pbd_instance* inst = pbd_cast(instance);
    return inst ? &inst->model : NULL;
}

uint32_t pbd_instance_colour_count(void* instance)
{
    pbd_instance* inst = pbd_cast(instance);
    return inst ? pbd_sim_constraints(inst->sim)->colour_count : 0u;
}

const sinew_backend_vtable sinew_backend_pbd = {
    (uint32_t)sizeof(sinew_backend_vtable),
    PBD_NAME,
    SINEW_BACKEND_FLAG_PHYSICS,
    ps_shell_probe,
    pbd_prepare,
    PS_SHELL_VTABLE_ENTRIES,
    pbd_destroy,
    pbd_bake,
    pbd_param_info,
    PBD_PARAM_COUNT,
};
