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
 *   timestep        1/60     h, seconds, (0, 1]; fixed at prepare: every step advances by h
 *                            whatever dt it is given (dt is only checked)
 *   damping         0.95     lambda of v = lambda (x_{t+1} - x_t) / h (Sec. 3): 1 = no damping
 *   strain_weight   1        strain stiffness per unit rest volume (> 0)
 *   mass            0.001    tissue density (> 0), scaled as in ps (by the squared mean tissue
 *                            thickness, so that the wobble does not depend on the rig's units)
 *   sliding         1        skin sliding at joints (2018 Sec. 4.2) for the base vertices
 *   collisions      1        1: global collisions (Sec. 6): skin vertices found inside another
 *                            part's tissue are pushed onto that skin triangle's plane by three
 *                            edge springs (fps_collide.c)
 *   collision_weight 1       each spring's weight relative to the mean diagonal of the system
 *                            matrix (> 0, at most 1e6)
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
 *
 * Contract: that of ps (backends/ps/ps.c, README.md) with these differences: base vertices sit
 * exactly on their targets at every step; baked data is ps's model blob (bake writes it under
 * the name "fps", and a rig baked for "ps" is restored as well, since the model is the same). */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "builtin_backends.h"
#include "fps_internal.h"
#include "fps_mls.h"
#include "polar3_batch.h"
#include "sinew_output.h"

#define FPS_MAGIC 0x6670736bu

typedef struct fps_instance {
    uint32_t magic;
    sinew_host_api host;
    fps_params params;
    ps_model model;
    fps_sim* sim;
    uint32_t joint_count;
    const uint32_t* render_indices;
    ps_output out;    /* render-mesh output (own buffers, binding) */
    float* latest;
    bool pose_pending;
    sinew_mls_weights mls;   /* baked or restored when upsampling resolves to mls */
    ps_jump jump;            /* pose discontinuities (backends/ps/ps_jump.c) */
} fps_instance;

static fps_instance* fps_cast(void* instance)
{
    fps_instance* inst = (fps_instance*)instance;
    return inst && inst->magic == FPS_MAGIC ? inst : NULL;
}

/* What ps_output calls on the simulation. */
static void fps_upsample_cb(void* sim, float* positions, size_t position_stride, float* normals,
                            size_t normal_stride)
{
    fps_sim_upsample((fps_sim*)sim, positions, position_stride, normals, normal_stride);
}

static void fps_render_velocities_cb(const void* sim, float* velocities)
{
    fps_sim_render_velocities((const fps_sim*)sim, velocities);
}

static void fps_set_skin_cb(void* sim, const float* positions, const float* velocities)
{
    fps_sim_set_skin((fps_sim*)sim, positions, velocities);
}

static const ps_output_sim fps_sim_ops = {fps_upsample_cb, fps_render_velocities_cb,
                                          fps_set_skin_cb};

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
    p->mass = 0.001;
#if defined(SINEW_HAVE_CHOLMOD)
    p->solver = FPS_SOLVER_CHOLMOD;
#else
    p->solver = FPS_SOLVER_PCG;
#endif
    p->sliding = 1;
    p->collisions = 1;
    p->collision_weight = 1.0;
    p->capsules = -1; /* not given: follows collisions (fps_params_parse) */
    p->profile = 0;
    p->simd = SINEW_SIMD_AUTO;
    p->decimate_above = 12000u;
    p->simulation_vertices = 4000u;
    p->bone_radii[0] = '\0';
    p->upsampling = FPS_UPSAMPLING_AUTO;
    ps_jump_params_default(&p->jump);
    ps_volume_params_default(&p->volume);
    p->joint_collisions = 1;
}

void fps_model_params(const fps_params* p, ps_params* out)
{
    memset(out, 0, sizeof *out);
    out->sliding = p->sliding;
    out->decimate_above = p->decimate_above;
    out->simulation_vertices = p->simulation_vertices;
    memcpy(out->bone_radii, p->bone_radii, sizeof out->bone_radii);
}

static bool parse_count(const char* text, double lo, double hi, uint32_t* out)
{
    double v;
    if (!ps_parse_number(text, &v) || v < lo || v > hi || v != floor(v)) return false;
    *out = (uint32_t)v;
    return true;
}

static bool parse_flag(const char* text, int* out)
{
    if (strcmp(text, "0") != 0 && strcmp(text, "1") != 0) return false;
    *out = text[0] == '1';
    return true;
}

sinew_result fps_params_parse(const sinew_host_api* host, const sinew_param* params,
                              uint32_t count, fps_params* out)
{
    fps_params_default(out);
    if (count > 0 && !params)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps: param_count is %u but params is NULL", count);
    static const char* const keys[] = {"iterations", "pcg_iterations", "pcg_tolerance", "solver",
                                       "timestep", "damping", "strain_weight", "mass", "sliding",
                                       "profile", "simd", "decimate_above",
                                       "simulation_vertices", "bone_radii", "collisions",
                                       "collision_weight", "capsules", "joint_collisions"};
    enum { KEY_COUNT = sizeof keys / sizeof keys[0] };
    bool seen[KEY_COUNT] = {false};
    bool seen_upsampling = false;
    bool seen_jump[2] = {false, false};
    bool seen_volume[2] = {false, false};
    for (uint32_t i = 0; i < count; ++i) {
        const char* key = params[i].key;
        const char* value = params[i].value;
        if (!key || !value)
            return sinew_host_fail(host, SINEW_ERROR_PARAMETER, "fps: parameter %u has a NULL %s",
                                   i, key ? "value" : "key");
        sinew_result jump_result;
        if (ps_jump_parse(host, FPS_NAME, key, value, seen_jump, &out->jump, &jump_result) ||
            ps_volume_parse(host, FPS_NAME, key, value, seen_volume, &out->volume, &jump_result)) {
            if (jump_result != SINEW_OK) return jump_result;
            continue;
        }
        if (strcmp(key, "upsampling") == 0) {
            fps_upsampling u;
            if (seen_upsampling)
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "fps: parameter \"upsampling\" is given twice");
            if (!fps_upsampling_parse(value, &u))
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "fps: upsampling=\"%s\" is not one of auto, normal, mls",
                                       value);
            seen_upsampling = true;
            out->upsampling = (int)u;
            continue;
        }
        int k = 0;
        while (k < KEY_COUNT && strcmp(key, keys[k]) != 0) ++k;
        if (k == KEY_COUNT)
            return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                   "fps: unknown parameter \"%s\" (known: iterations, "
                                   "pcg_iterations, pcg_tolerance, solver, timestep, damping, "
                                   "strain_weight, mass, sliding, profile, simd, decimate_above, "
                                   "simulation_vertices, bone_radii, collisions, "
                                   "collision_weight, capsules, upsampling, jump_angle, "
                                   "jump_distance, volume_weight, volume_range, "
                                   "joint_collisions)", key);
        if (seen[k])
            return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                   "fps: parameter \"%s\" is given twice", key);
        seen[k] = true;
        double v = 0.0;
        bool ok = ps_parse_number(value, &v);
        switch (k) {
        case 0:
            if (!parse_count(value, 1.0, 1000.0, &out->iterations))
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "fps: iterations=\"%s\" is not a whole number in 1..1000",
                                       value);
            break;
        case 1:
            if (!parse_count(value, 1.0, 10000.0, &out->pcg_iterations))
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "fps: pcg_iterations=\"%s\" is not a whole number in "
                                       "1..10000", value);
            break;
        case 2:
            if (!ok || v < 0.0 || !(v < 1.0))
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "fps: pcg_tolerance=\"%s\" is not a number in [0, 1)", value);
            out->pcg_tolerance = v;
            break;
        case 3:
            if (strcmp(value, "cholmod") == 0) out->solver = FPS_SOLVER_CHOLMOD;
            else if (strcmp(value, "pcg") == 0) out->solver = FPS_SOLVER_PCG;
            else
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "fps: solver=\"%s\" is neither cholmod nor pcg", value);
            break;
        case 4:
            if (!ok || !(v > 0.0) || v > 1.0)
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "fps: timestep=\"%s\" is not a number of seconds in (0, 1]",
                                       value);
            out->timestep = v;
            break;
        case 5:
            if (!ok || v < 0.0 || v > 1.0)
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "fps: damping=\"%s\" is not a number in [0, 1]", value);
            out->damping = v;
            break;
        case 6:
        case 7:
            if (!ok || !(v > 0.0) || v > 1e12)
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "fps: %s=\"%s\" is not a positive number (at most 1e12)",
                                       key, value);
            if (k == 6) out->strain_weight = v;
            else out->mass = v;
            break;
        case 8:
        case 9:
            if (!parse_flag(value, k == 8 ? &out->sliding : &out->profile))
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "fps: %s=\"%s\" is neither 0 nor 1", key, value);
            break;
        case 10:
            if (!sinew_simd_parse(value, &out->simd) || out->simd == SINEW_SIMD_SSE41)
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "fps: simd=\"%s\" is not one of auto, scalar, avx2, avx512",
                                       value);
            break;
        case 11:
        case 12:
            if (!parse_count(value, k == 11 ? 0.0 : 4.0, 1e8,
                             k == 11 ? &out->decimate_above : &out->simulation_vertices))
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "fps: %s=\"%s\" is not a whole number in %s..100000000",
                                       key, value, k == 11 ? "0" : "4");
            break;
        case 14:
            if (!parse_flag(value, &out->collisions))
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "fps: collisions=\"%s\" is neither 0 nor 1", value);
            break;
        case 15:
            if (!ok || !(v > 0.0) || v > 1e6)
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "fps: collision_weight=\"%s\" is not a number in (0, 1e6]",
                                       value);
            out->collision_weight = v;
            break;
        case 16:
            if (!parse_flag(value, &out->capsules))
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "fps: capsules=\"%s\" is neither 0 nor 1", value);
            break;
        case 17:
            if (!parse_flag(value, &out->joint_collisions))
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "fps: joint_collisions=\"%s\" is neither 0 nor 1", value);
            break;
        default: {
            size_t len = strlen(value);
            if (len == 0 || len >= sizeof out->bone_radii)
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "fps: bone_radii=\"%.64s\" is empty or longer than %zu "
                                       "characters", value, sizeof out->bone_radii - 1u);
            memcpy(out->bone_radii, value, len + 1u); /* names are checked against the rig */
            break;
        }
        }
    }
    if (out->capsules == 1 && !out->collisions)
        return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                               "fps: capsules=1 needs collisions=1 (the capsules are contacts "
                               "of the global collisions)");
    if (out->capsules < 0) out->capsules = out->collisions;
    return SINEW_OK;
}

/* ---- vtable ---- */

static sinew_result fps_probe(const sinew_host_api* host)
{
    return host ? SINEW_OK : SINEW_ERROR_INVALID_ARGUMENT;
}

static void fps_destroy(void* instance)
{
    fps_instance* inst = fps_cast(instance);
    if (!inst) return;
    sinew_host_api host = inst->host;
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
    ps_model_free(&host, &inst->model);
    ps_output_free(&inst->out, &host);
    ps_jump_free(&inst->jump);
    sinew_host_free(&host, inst->latest);
    inst->magic = 0;
    sinew_host_free(&host, inst);
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
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
    /* fps_bake_read takes ps's blob alone as well (a rig baked for "ps"). */
    if (*baked) return fps_bake_read(host, rig, rig->baked_data, rig->baked_size, m, mls, has_mls);
    ps_params pp;
    fps_model_params(p, &pp);
    sinew_rig_view view;
    sinew_decimated_mesh decimated;
    sinew_result r = ps_decimate_view(host, rig, &pp, &view, &decimated);
    if (r != SINEW_OK) return r;
    r = ps_model_build_with(host, &view, &pp, m);
    if (r == SINEW_OK) m->decimated_triangles = decimated.triangle_count;
    /* the joints' contacts (2018 Sec. 5, ps_collide.c): candidates near each folding joint,
     * closer than ps's: the skin they constrain is free of the limb capsules, which must
     * still hold the armpit's fold (README.md, joint_collisions) */
    if (r == SINEW_OK && p->joint_collisions)
        r = ps_collide_candidates_near(host, &view, m, &pp, FPS_JOINT_REACH);
    sinew_decimated_free(host, &decimated);
    return r;
}

static sinew_result fps_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                const sinew_param* params, uint32_t param_count, const void* next,
                                void** out_instance)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!out_instance)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "fps: out_instance is NULL");
    *out_instance = NULL;
    fps_params p;
    sinew_result r = fps_params_parse(host, params, param_count, &p);
    if (r != SINEW_OK) return r;
#if !defined(SINEW_HAVE_CHOLMOD)
    if (p.solver == FPS_SOLVER_CHOLMOD)
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_UNAVAILABLE,
                               "fps: solver=cholmod, but this build has no CHOLMOD (use pcg)");
#endif
    if (!sinew_polar3_batch_kernel(p.simd))
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_UNAVAILABLE,
                               "fps: simd=%s is not available on this CPU or in this build",
                               sinew_simd_name(p.simd));
    if (next)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "fps: takes no typed parameters (next is not NULL)");
    r = ps_check_rig(host, rig, FPS_NAME);
    if (r != SINEW_OK) return r;
    double t0 = seconds_now();
    fps_instance* inst = (fps_instance*)sinew_host_calloc(host, 1, sizeof(fps_instance));
    if (!inst) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps: out of memory");
    inst->magic = FPS_MAGIC;
    inst->host = *host;
    inst->host.struct_size = (uint32_t)sizeof(sinew_host_api);
    inst->params = p;
    inst->joint_count = rig->joint_count;
    inst->render_indices = rig->render_mesh.indices;
    bool baked = false, has_mls = false;
    r = build_model(host, rig, &p, &inst->model, &baked, &inst->mls, &has_mls);
    if (r != SINEW_OK) {
        fps_destroy(inst);
        return r;
    }
    fps_upsampling up = fps_upsampling_resolve((fps_upsampling)p.upsampling, &inst->model);
    if (up != FPS_UPSAMPLING_MLS) {
        sinew_mls_free(host, &inst->mls);
    } else if (!has_mls) {
        /* Not in the baked data (or nothing baked): the weights of Sec. 5 now. */
        r = fps_mls_bake(host, rig, &inst->model, &inst->mls);
        if (r != SINEW_OK) {
            fps_destroy(inst);
            return r;
        }
    }
    double t1 = seconds_now();
    r = fps_sim_create(host, &inst->model, &p, &inst->sim);
    if (r != SINEW_OK) {
        fps_destroy(inst);
        return r;
    }
    fps_sim_set_mls(inst->sim, inst->mls.indices ? &inst->mls : NULL);
    r = ps_output_init(&inst->out, host, FPS_NAME, &rig->render_mesh, &fps_sim_ops,
                       inst->sim);
    if (r != SINEW_OK) {
        fps_destroy(inst);
        return r;
    }
    inst->latest = (float*)sinew_host_calloc(host, rig->joint_count, 64u);
    if (!inst->latest) {
        fps_destroy(inst);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps: out of memory");
    }
    r = ps_jump_init(&inst->jump, host, FPS_NAME, rig, &inst->model, &p.jump);
    if (r != SINEW_OK) {
        fps_destroy(inst);
        return r;
    }
    const ps_model* m = &inst->model;
    uint32_t ell;
    size_t crs;
    fps_sim_ellcrs_shape(inst->sim, &ell, &crs);
    sinew_host_log(host, SINEW_LOG_INFO,
                   "fps: %s %u skin vertices, %u bones, %u tets; reduced system %u unknowns, "
                   "%zu nonzeros (ELL width %u, %zu CRS), solver %s%s%zu; model %.1f ms, "
                   "system %.1f ms",
                   baked ? "restored from baked data:" : "prepared", m->n, m->bone_count,
                   m->tet_count, fps_sim_free_count(inst->sim), fps_sim_matrix_nnz(inst->sim), ell,
                   crs, p.solver == FPS_SOLVER_PCG ? "pcg" : "cholmod",
                   p.solver == FPS_SOLVER_PCG ? "" : " factor nonzeros ",
                   p.solver == FPS_SOLVER_PCG ? (size_t)0 : fps_sim_factor_nnz(inst->sim),
                   1e3 * (t1 - t0), 1e3 * (seconds_now() - t1));
    *out_instance = inst;
    return SINEW_OK;
}

static sinew_result fps_set_pose(void* instance, const sinew_pose_view* pose)
{
    fps_instance* inst = fps_cast(instance);
    if (!inst) return SINEW_ERROR_INVALID_ARGUMENT;
    const sinew_host_api* host = &inst->host;
    if (!pose) return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "fps: pose is NULL");
    if (pose->struct_size < SINEW_POSE_VIEW_SIZE_V1)
        return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE, "fps: pose struct_size %u is below "
                               "%u", pose->struct_size, SINEW_POSE_VIEW_SIZE_V1);
    if (pose->joint_count != inst->joint_count)
        return sinew_host_fail(host, SINEW_ERROR_JOINT_COUNT, "fps: a pose of %u joints for a rig "
                               "of %u", pose->joint_count, inst->joint_count);
    if (!pose->skinning_matrices)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps: the pose has no skinning matrices");
    for (uint32_t k = 0; k < 16u * inst->joint_count; ++k)
        if (!isfinite(pose->skinning_matrices[k]))
            return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                                   "fps: the skinning matrix of joint %u is not finite", k / 16u);
    memcpy(inst->latest, pose->skinning_matrices, (size_t)inst->joint_count * 64u);
    ps_jump_set_pose(&inst->jump, pose);
    inst->pose_pending = true;
    return SINEW_OK;
}

sinew_result fps_instance_begin_step(void* instance, bool* reset)
{
    fps_instance* inst = fps_cast(instance);
    *reset = false;
    if (!inst) return SINEW_ERROR_INVALID_ARGUMENT;
    const float* pose = NULL;
    if (inst->pose_pending) {
        fps_sim_set_pose(inst->sim, inst->latest);
        inst->pose_pending = false;
        pose = inst->latest;
    }
    return ps_jump_begin_step(&inst->jump, &inst->out, &inst->model, pose, reset);
}

static sinew_result fps_step(void* instance, float dt)
{
    fps_instance* inst = fps_cast(instance);
    if (!inst) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!isfinite(dt) || dt < 0.0f)
        return sinew_host_fail(&inst->host,
                               isfinite(dt) ? SINEW_ERROR_INVALID_ARGUMENT : SINEW_ERROR_NONFINITE,
                               "fps: dt %g must be finite and not negative", (double)dt);
    bool reset = false;
    sinew_result r = fps_instance_begin_step(inst, &reset);
    if (r == SINEW_OK) r = fps_sim_step(inst->sim);
    if (r != SINEW_OK) return r;
    if (reset) fps_sim_clear_velocities(inst->sim); /* the restart's step is quasi-static */
    ps_output_after_step(&inst->out);
    return SINEW_OK;
}

static sinew_result fps_read_output(void* instance, const sinew_output_view* out)
{
    fps_instance* inst = fps_cast(instance);
    if (!inst) return SINEW_ERROR_INVALID_ARGUMENT;
    return ps_output_read(&inst->out, &inst->host, out);
}

static sinew_result fps_bind_output(void* instance, const sinew_output_view* out)
{
    fps_instance* inst = fps_cast(instance);
    if (!inst) return SINEW_ERROR_INVALID_ARGUMENT;
    return ps_output_bind(&inst->out, &inst->host, out);
}

static sinew_result fps_get_state(void* instance, const sinew_state_view* state)
{
    fps_instance* inst = fps_cast(instance);
    if (!inst) return SINEW_ERROR_INVALID_ARGUMENT;
    return ps_output_get_state(&inst->out, &inst->host, state);
}

static sinew_result fps_set_state(void* instance, const sinew_state_view* state)
{
    fps_instance* inst = fps_cast(instance);
    if (!inst) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = ps_output_set_state(&inst->out, &inst->host, &inst->model,
                                         inst->render_indices, state);
    if (r == SINEW_OK) ps_jump_set_state(&inst->jump);
    return r;
}

/* Writes the fps blob (fps_mls.h): ps's model blob (ps_bake.c; fps uses the same
 * pose-independent model) and, when upsampling resolves to mls, the MLS weights. */
static sinew_result fps_bake(const sinew_host_api* host, const sinew_rig_view* rig,
                             const sinew_param* params, uint32_t param_count,
                             const sinew_bake_writer* writer)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    fps_params p;
    sinew_result r = fps_params_parse(host, params, param_count, &p);
    if (r != SINEW_OK) return r;
    if (!writer || !writer->write)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "fps bake: writer is NULL");
    r = ps_check_rig(host, rig, FPS_NAME);
    if (r != SINEW_OK) return r;
    ps_model m;
    bool baked = false;
    sinew_rig_view plain = *rig;
    plain.baked_backend = NULL; /* bake from the rig itself, not from a blob it carries */
    plain.baked_data = NULL;
    plain.baked_size = 0;
    sinew_mls_weights mls;
    bool has_mls = false;
    memset(&mls, 0, sizeof mls);
    r = build_model(host, &plain, &p, &m, &baked, &mls, &has_mls);
    if (r != SINEW_OK) return r;
    if (fps_upsampling_resolve((fps_upsampling)p.upsampling, &m) == FPS_UPSAMPLING_MLS)
        r = fps_mls_bake(host, rig, &m, &mls);
    if (r == SINEW_OK) r = fps_bake_write(host, rig, &m, mls.indices ? &mls : NULL, writer);
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
    fps_probe,
    fps_prepare,
    fps_set_pose,
    fps_step,
    fps_read_output,
    fps_bind_output,
    fps_get_state,
    fps_set_state,
    fps_destroy,
    fps_bake,
};
