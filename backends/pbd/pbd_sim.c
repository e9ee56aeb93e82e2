/* The run-time simulation of `pbd`: position based dynamics on ps's tissue mesh (Sec. 3; the
 * loop of Mueller et al. 2006, Alg. 1): the particles' prediction x = x + h v, `iterations`
 * coloured Gauss-Seidel sweeps over the stretch, volume and bending constraints
 * (pbd_project.c), and
 * the velocity update v = lambda (x - x_prev) / h. Particles of zero inverse mass (base
 * vertices, skin vertices no kept tet holds) sit on their targets, placed as fps places its
 * Dirichlet vertices: the bone's skinning matrix, skin sliding near joints (2018 Sec. 4.2) and
 * the clamp of the joints' contacts (2018 Sec. 5) spread as fps spreads it, whose planes also
 * hold the skin vertices near folding joints on their side in every iteration (Sec. 5.3).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>

#include "pbd_internal.h"

/* The one-rings over which the clamp of the joints' contacts is spread: fps's choice
 * (backends/fps/README.md, joint_collisions), whose base vertices are as hard as pbd's. */
#define PBD_CLAMP_SPREAD_RINGS 8u

struct pbd_sim {
    sinew_host_api host;
    const ps_model* m;
    pbd_params p;
    uint32_t n, N;
    float h;
    pbd_constraints con;
    float* x;        /* 3N, columns of N: single precision, like the render mesh */
    float* v;
    float* x_prev;
    double* target;  /* 3N: where the particles of zero inverse mass go (ps's targets) */
    float* stretch_lambda;
    float* volume_lambda;
    float* bending_lambda;
    uint32_t* joint; /* N: the joint whose skinning matrix moves the particle's target */
    float* skinning; /* 16 per joint */
    int pose_dirty;
    float* skin_f;   /* 3 per skin vertex: positions and normals for the upsampling */
    float* skin_n;
    const float* blend_from; /* interpolate_output: the skin before the latest step, or NULL */
    float blend_fraction;    /* how far the output goes from blend_from to the latest skin */
    ps_slide* slide;
    ps_collide* joints;      /* the joints' contacts (2018 Sec. 5), NULL without */
    ps_clamp_spread* spread; /* their clamp of the base targets, spread (ps_clamp_spread.c) */
    double* contact_x;       /* 3N: the contacts' skin vertices for ps_collide_project */
    double* contact;         /* 3N: their projections */
    double* contact_weight;  /* per contact vertex: 1 */
    pbd_solve solve;
    double profile[4];       /* profile=1: seconds of each phase (pbd_sim_profile) */
    uint64_t profile_steps;
};

void pbd_sim_destroy(pbd_sim* s)
{
    if (!s) return;
    sinew_host_api host = s->host;
    ps_slide_destroy(s->slide);
    ps_clamp_spread_destroy(s->spread);
    ps_collide_destroy(s->joints);
    pbd_constraints_free(&host, &s->con);
    void* arrays[] = {s->x,        s->v,         s->x_prev,         s->target,
                      s->stretch_lambda, s->volume_lambda, s->bending_lambda, s->joint,
                      s->skinning, s->skin_f,    s->skin_n,         s->contact_x,
                      s->contact,  s->contact_weight};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) sinew_host_free(&host, arrays[i]);
    sinew_host_free(&host, s);
}

/* The particles' state, on the rest shape (the constraints' rest values come from it). */
static bool alloc_state(pbd_sim* s)
{
    const sinew_host_api* host = &s->host;
    size_t N3 = 3u * (size_t)(s->N ? s->N : 1u), n = s->n ? s->n : 1u;
    s->x = (float*)sinew_host_calloc(host, N3, sizeof(float));
    s->v = (float*)sinew_host_calloc(host, N3, sizeof(float));
    s->x_prev = (float*)sinew_host_calloc(host, N3, sizeof(float));
    s->target = (double*)sinew_host_calloc(host, N3, sizeof(double));
    s->joint = (uint32_t*)sinew_host_calloc(host, s->N ? s->N : 1u, sizeof(uint32_t));
    s->skinning = (float*)sinew_host_calloc(host, s->m->joint_count, 16u * sizeof(float));
    s->skin_f = (float*)sinew_host_calloc(host, n, 3u * sizeof(float));
    s->skin_n = (float*)sinew_host_calloc(host, n, 3u * sizeof(float));
    if (!(s->x && s->v && s->x_prev && s->target && s->joint && s->skinning && s->skin_f &&
          s->skin_n))
        return false;
    const ps_model* m = s->m;
    for (uint32_t i = 0; i < s->N; ++i) {
        s->joint[i] = m->bones[m->vertex_bone[i]].joint;
        for (int c = 0; c < 3; ++c) {
            s->target[(size_t)c * s->N + i] = m->rest[3u * i + c];
            s->x[(size_t)c * s->N + i] = (float)m->rest[3u * i + c];
        }
    }
    for (uint32_t j = 0; j < m->joint_count; ++j)
        for (int k = 0; k < 16; ++k) s->skinning[16u * j + k] = (k % 5 == 0) ? 1.0f : 0.0f;
    return true;
}

/* The XPBD multipliers, one per constraint. */
static bool alloc_multipliers(pbd_sim* s)
{
    s->stretch_lambda = (float*)sinew_host_calloc(&s->host, s->con.stretch_count + 1u,
                                                  sizeof(float));
    s->volume_lambda = (float*)sinew_host_calloc(&s->host, s->con.volume_count + 1u,
                                                 sizeof(float));
    s->bending_lambda = (float*)sinew_host_calloc(&s->host, s->con.bending_count + 1u,
                                                  sizeof(float));
    return s->stretch_lambda && s->volume_lambda && s->bending_lambda;
}

/* Skin sliding (2018 Sec. 4.2) and the joints' contacts (2018 Sec. 5) where asked for. */
static sinew_result create_targets(pbd_sim* s)
{
    const ps_model* m = s->m;
    sinew_result r = SINEW_OK;
    if (s->p.sliding && m->slide_vertex_count > 0) r = ps_slide_create(&s->host, m, &s->slide);
    if (r == SINEW_OK && s->p.collisions && m->collision_pair_count > 0)
        r = ps_collide_create(&s->host, m, &s->joints);
    if (r == SINEW_OK && s->joints)
        r = ps_clamp_spread_create(&s->host, m, PBD_CLAMP_SPREAD_RINGS, &s->spread);
    if (r == SINEW_OK && s->joints) {
        uint32_t count = ps_collide_vertex_count(s->joints);
        s->contact_x = (double*)sinew_host_calloc(&s->host, 3u * (size_t)s->N, sizeof(double));
        s->contact = (double*)sinew_host_calloc(&s->host, 3u * (size_t)s->N, sizeof(double));
        s->contact_weight = (double*)sinew_host_calloc(&s->host, count + 1u, sizeof(double));
        for (uint32_t k = 0; s->contact_weight && k < count; ++k) s->contact_weight[k] = 1.0;
        if (!s->contact_x || !s->contact || !s->contact_weight)
            r = sinew_host_fail(&s->host, SINEW_ERROR_OUT_OF_MEMORY, "pbd: out of memory");
    }
    return r;
}

/* The solver's view. Plain PBD's stiffness k of the whole solve becomes
 * 1 - (1 - k)^(1 / iterations) per iteration (Mueller et al. 2006, Sec. 3.3), so that the
 * stiffness does not depend on the iteration count. */
static void solver_view(pbd_sim* s)
{
    pbd_solve* v = &s->solve;
    v->c = &s->con;
    v->x = s->x;
    v->N = s->N;
    v->stretch_lambda = s->stretch_lambda;
    v->volume_lambda = s->volume_lambda;
    v->bending_lambda = s->bending_lambda;
    v->xpbd = s->p.compliance;
    v->grain = s->p.grain;
    v->stretch = pbd_stretch_scalar;
    v->volume = pbd_volume_scalar;
    v->bending = pbd_bending_scalar;
#if defined(SINEW_SKIN_X86)
    if (s->p.simd == SINEW_SIMD_AVX512) {
        v->stretch = pbd_stretch_avx512;
        v->volume = pbd_volume_avx512;
    }
#endif
    double its = (double)s->p.iterations;
    v->stretch_k = (float)(1.0 - pow(1.0 - s->p.stretch_stiffness, 1.0 / its));
    v->volume_k = (float)(1.0 - pow(1.0 - s->p.volume_stiffness, 1.0 / its));
    v->bending_k = (float)(1.0 - pow(1.0 - s->p.bending_stiffness, 1.0 / its));
}

sinew_result pbd_sim_create(const sinew_host_api* host, const ps_model* m,
                            const pbd_params* params, pbd_sim** out)
{
    *out = NULL;
    pbd_sim* s = (pbd_sim*)sinew_host_calloc(host, 1, sizeof(pbd_sim));
    if (!s) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "pbd: out of memory");
    s->host = *host;
    s->m = m;
    s->p = *params;
    s->n = m->n;
    s->N = 2u * m->n;
    s->h = (float)params->timestep;
    sinew_result r = pbd_simd_resolve(host, &s->p.simd);
    if (r == SINEW_OK && !alloc_state(s))
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                            "pbd: out of memory for a tissue mesh of %u vertices", s->N);
    if (r == SINEW_OK) r = pbd_constraints_build(host, m, params, s->x, &s->con);
    if (r == SINEW_OK && !alloc_multipliers(s))
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "pbd: out of memory");
    if (r == SINEW_OK) r = create_targets(s);
    if (r != SINEW_OK) {
        pbd_sim_destroy(s);
        return r;
    }
    solver_view(s);
    *out = s;
    return SINEW_OK;
}

void pbd_sim_set_pose(pbd_sim* s, const float* skinning)
{
    ps_copy_skinning(s->skinning, skinning, s->m->joint_count);
    s->pose_dirty = 1;
}

/* Targets of the particles of zero inverse mass: the rest position moved by the bone's
 * skinning matrix, skin sliding near joints, and the clamp of the joints' contacts spread
 * around the clamped anchors, exactly as fps places its constrained vertices. */
static void update_targets(pbd_sim* s)
{
    uint32_t N = s->N;
    const float* w = s->con.inv_mass;
    for (uint32_t i = 0; i < N; ++i)
        if (!(w[i] > 0.0f))
            ps_bone_target(s->target, N, i, s->skinning + 16u * s->joint[i], s->m->rest);
    ps_hard_targets_adjust(s->slide, s->joints, s->spread, s->skinning, s->target, N);
}

/* Sec. 3: each moving particle predicted from its velocity (no external forces act on the
 * tissue); the others put on their targets. */
static void predict(pbd_sim* s)
{
    uint32_t N = s->N;
    const float* w = s->con.inv_mass;
    for (int c = 0; c < 3; ++c) {
        float* x = s->x + (size_t)c * N;
        const float* v = s->v + (size_t)c * N;
        const double* t = s->target + (size_t)c * N;
        float* xp = s->x_prev + (size_t)c * N;
        for (uint32_t i = 0; i < N; ++i) {
            xp[i] = x[i];
            x[i] = w[i] > 0.0f ? x[i] + s->h * v[i] : (float)t[i];
        }
    }
}

/* v = lambda (x - x_prev) / h: the damping of ps and fps (2019 Sec. 3). */
static void update_velocities(pbd_sim* s)
{
    size_t N3 = 3u * (size_t)s->N;
    float f = (float)(s->p.damping / s->p.timestep);
    for (size_t k = 0; k < N3; ++k) s->v[k] = f * (s->x[k] - s->x_prev[k]);
}

/* The joints' contacts as inequality constraints of the skin (2018 Sec. 5.3, ps_collide.c):
 * each of their moving skin vertices that crossed a contact plane (or came within its margin)
 * goes back onto it; the others stay. Each moves one particle, so they form one more colour
 * after the others, solved on the calling thread (737 vertices on the cylinder, 1965 on the
 * male). */
static void project_contacts(pbd_sim* s)
{
    uint32_t N = s->N, count = ps_collide_vertex_count(s->joints);
    const uint32_t* vertices = ps_collide_vertices(s->joints);
    for (uint32_t k = 0; k < count; ++k)
        for (int c = 0; c < 3; ++c) {
            size_t e = (size_t)c * N + vertices[k];
            s->contact_x[e] = s->x[e];
            s->contact[e] = 0.0;
        }
    /* weight 1 each: the projection itself lands in s->contact */
    ps_collide_project(s->joints, s->contact_x, N, s->contact_weight, s->contact);
    for (uint32_t k = 0; k < count; ++k) {
        uint32_t v = vertices[k];
        if (!(s->con.inv_mass[v] > 0.0f)) continue;
        for (int c = 0; c < 3; ++c)
            s->x[(size_t)c * N + v] = (float)s->contact[(size_t)c * N + v];
    }
}

/* The solver's iterations: the coloured sweep, then the contacts; timed when profiling. */
static void iterate(pbd_sim* s)
{
    int prof = s->p.profile;
    for (uint32_t it = 0; it < s->p.iterations; ++it) {
        double t0 = prof ? ps_seconds() : 0.0;
        pbd_project_iteration(&s->host, &s->solve);
        double t1 = prof ? ps_seconds() : 0.0;
        if (s->joints) project_contacts(s);
        if (prof) {
            s->profile[1] += t1 - t0;
            s->profile[2] += ps_seconds() - t1;
        }
    }
}

const double* pbd_sim_targets(pbd_sim* s)
{
    if (s->pose_dirty) {
        update_targets(s);
        s->pose_dirty = 0;
    }
    return s->target;
}

sinew_result pbd_sim_step(pbd_sim* s)
{
    size_t N3 = 3u * (size_t)s->N;
    double t0 = s->p.profile ? ps_seconds() : 0.0;
    pbd_sim_targets(s);
    predict(s);
    /* XPBD: the multipliers start from zero each step (Macklin et al. 2016, Alg. 1) */
    memset(s->stretch_lambda, 0, ((size_t)s->con.stretch_count + 1u) * sizeof(float));
    memset(s->volume_lambda, 0, ((size_t)s->con.volume_count + 1u) * sizeof(float));
    memset(s->bending_lambda, 0, ((size_t)s->con.bending_count + 1u) * sizeof(float));
    if (s->p.profile) {
        s->profile[0] += ps_seconds() - t0;
        s->profile_steps++;
    }
    iterate(s);
    update_velocities(s);
    bool finite = true;
    for (size_t k = 0; k < N3; ++k) finite = finite && isfinite(s->x[k]) && isfinite(s->v[k]);
    if (!finite) {
        memcpy(s->x, s->x_prev, N3 * sizeof(float));
        memset(s->v, 0, N3 * sizeof(float));
        return sinew_host_fail(&s->host, SINEW_ERROR_BACKEND_FAILED,
                               "pbd: the step produced a non-finite position; the shape is kept "
                               "and the velocities are cleared");
    }
    return SINEW_OK;
}

void pbd_sim_set_skin(pbd_sim* s, const float* positions, const float* velocities)
{
    uint32_t N = s->N;
    for (uint32_t i = 0; i < s->n; ++i)
        for (int c = 0; c < 3; ++c) {
            s->x[(size_t)c * N + i] = positions[3u * i + c];
            s->v[(size_t)c * N + i] = velocities ? velocities[3u * i + c] : 0.0f;
        }
}

void pbd_sim_clear_velocities(pbd_sim* s)
{
    memset(s->v, 0, 3u * (size_t)s->N * sizeof(float));
}

/* Sec. 5 of the paper keeps the particles as the render data; here the render mesh is a
 * displacement of the simulated skin instead (2018 Sec. 6, ps_upsample_render), as fps does
 * with its normal-displacement records. */
void pbd_sim_upsample(pbd_sim* s, float* positions, size_t position_stride, float* normals,
                      size_t normal_stride)
{
    uint32_t N = s->N;
    double t0 = s->p.profile ? ps_seconds() : 0.0;
    for (uint32_t i = 0; i < s->n; ++i)
        for (int c = 0; c < 3; ++c) s->skin_f[3u * i + c] = s->x[(size_t)c * N + i];
    if (s->blend_from)
        sinew_step_blend(s->blend_from, s->skin_f, 3u * s->n, s->blend_fraction, s->skin_f);
    ps_skin_normals(&s->host, s->m, s->skin_f, s->skin_n);
    ps_upsample_render(&s->host, s->m, s->skin_f, s->skin_n, s->skinning, positions,
                       position_stride, normals, normal_stride);
    if (s->p.profile) s->profile[3] += ps_seconds() - t0;
}

void pbd_sim_skin_positions(const pbd_sim* s, float* out)
{
    for (uint32_t i = 0; i < s->n; ++i)
        for (int c = 0; c < 3; ++c) out[3u * i + c] = s->x[(size_t)c * s->N + i];
}

void pbd_sim_set_output_blend(pbd_sim* s, const float* previous, float fraction)
{
    s->blend_from = previous;
    s->blend_fraction = fraction;
}

void pbd_sim_profile(const pbd_sim* s, double seconds[4], uint64_t* steps)
{
    memcpy(seconds, s->profile, sizeof s->profile);
    *steps = s->profile_steps;
}

/* Render-vertex velocities interpolated from the skin's with the upsampling's barycentric
 * coordinates. */
void pbd_sim_render_velocities(const pbd_sim* s, float* velocities)
{
    const ps_model* m = s->m;
    uint32_t N = s->N;
    for (uint32_t r = 0; r < m->render_count; ++r) {
        const ps_upsample* u = &m->upsample[r];
        for (int c = 0; c < 3; ++c) {
            const float* v = s->v + (size_t)c * N;
            float val;
            if (u->triangle == PS_NONE) {
                val = v[u->vertex];
            } else {
                const uint32_t* t = m->triangles + 3u * u->triangle;
                val = u->bary[0] * v[t[0]] + u->bary[1] * v[t[1]] + u->bary[2] * v[t[2]];
            }
            velocities[3u * r + c] = val;
        }
    }
}

const pbd_constraints* pbd_sim_constraints(const pbd_sim* s)
{
    return &s->con;
}

const float* pbd_sim_positions(const pbd_sim* s)
{
    return s->x;
}

ps_collide* pbd_sim_contacts(const pbd_sim* s)
{
    return s->joints;
}

const float* pbd_sim_skinning(const pbd_sim* s)
{
    return s->skinning;
}
