/* The run-time simulation of `fps`: projective dynamics on ps's tissue mesh with hard
 * constraints (fast projective skinning 2019, Sec. 3, 4.3, Alg. 1), solved by CHOLMOD or by
 * the Jacobi-preconditioned CG of Alg. 2 on the hybrid ELL/CRS matrix of Sec. 4.2; every
 * per-element and per-row computation is a function of backends/common/fps_kernels.h, the
 * arithmetic of the CUDA plugin. SPDX-License-Identifier: MIT
 *
 * Energy of a step (as ps, backends/ps/ps_sim.c, without the anchor term):
 *   E(X, R) = sum_i m_i / (2 h^2) |x_i - s_i|^2 + sum_t w_t / 2 |A_t S_t X - R_p(t)^T|_F^2
 * minimised over the free (skin) vertices only: the base vertices (and the rare skin vertices
 * that no tet holds) are Dirichlet values, placed on their targets (their bone, or skin
 * sliding, 2018 Sec. 4.2) at the start of the step. Numbering: free vertices first (rows
 * 0 .. n_s - 1 of x, in the model's order), then the constrained ones, so x_s is x's first n_s
 * rows and every solver works in place. */
#include <math.h>
#include <string.h>

#include "fps_block_sum.h"
#include "fps_collide.h"
#include "fps_joint_volume.h"
#include "fps_internal.h"
#include "fps_mls.h"
#include "polar3_batch.h"
#include "ps_local.h"
#include "sinew_ldl.h"

/* Rows per block of the PCG's partial sums (a CUDA thread block's rows, fps_block_sum.h);
 * fixed, so the sums and hence the results do not depend on the thread count. */
#define FPS_ROW_BLOCK FPS_SUM_BLOCK
/* One-rings over which the local collisions' clamp of the anchors is spread (ps_clamp_spread.c;
 * backends/fps/README.md, joint_collisions, has the measurements behind the choice). */
#define FPS_CLAMP_SPREAD_RINGS 8u

/* Fewest row blocks per PCG job (see pcg_solve). */
#define FPS_PCG_MIN_BLOCKS 64u

/* Phases of a step whose whole work is a few tens of microseconds on one core (the vector
 * updates, the right-hand side's gather: a character has a few thousand free vertices) run on
 * the calling thread: a job dispatch costs microseconds on an idle machine, but on a loaded
 * one a worker preempted inside its chunk holds the caller up for a scheduler time slice. The
 * local step and PCG stay on the job system. */
#define FPS_INLINE(fn, ctx, count) fn((ctx), 0u, (count))

struct fps_sim {
    sinew_host_api host;
    const ps_model* m;
    fps_params p;
    uint32_t n, N, ns;
    uint32_t* perm; /* N: new index -> model index */
    uint32_t* inv;  /* N: model index -> new index */
    double h, inv_h2;
    double* mass_h2;  /* ns: m_i / h^2 */
    uint32_t* joint;  /* N (new order): the joint whose matrix moves a constrained vertex */
    /* prisms (fps_prisms layout) */
    uint32_t prism_count;
    uint32_t block_count; /* prisms in blocks of PS_LOCAL_BLOCK; stride = block_count * 16 */
    size_t stride;
    int32_t* pv;
    float* G;
    float* inv_w;
    float* F;       /* 9 x stride: F, then R in place */
    float* R;       /* 9 x stride with the volume term: R, then the blended target */
    float* contrib; /* 18 x stride */
    fps_prisms prisms;
    sinew_polar3_batch_fn polar;
    /* The local step's gradient and projection: ps's kernels (ps_local.h), whose float
     * operations are those of fps_prism_gradient / fps_prism_project in the same order, so
     * every instruction set gives the CUDA reference's bits (test_fps_kernels checks it). */
    ps_local_gradient_fn gradient;
    ps_local_project_fn project;
    uint32_t* gather_ptr; /* ns + 1 */
    uint32_t* gather;
    /* With CHOLMOD, the parts of its first factor's solver (sinew_ldl.h): part k's prisms fill
     * blocks part_blocks[k] .. part_blocks[k + 1] - 1 and its free rows (the top's with part
     * 0) are part_rows[part_row_start[k] .. part_row_start[k + 1] - 1]. A host of at most
     * SINEW_LDL_PARTS threads runs each part's local step and right-hand side as one job
     * (part_jobs), so a thread reads back what it wrote itself. */
    uint32_t part_blocks[SINEW_LDL_PARTS + 1];
    uint32_t part_row_start[SINEW_LDL_PARTS + 1];
    uint32_t* part_rows;
    bool part_jobs;
    /* matrices */
    fps_csr K;   /* K_ss = h^-2 M_s + Q_s^T Q_s, both triangles */
    fps_csr Ksb; /* free rows x constrained columns (new indices) */
    uint32_t ell_width;
    size_t crs_count;
    double* ell_val;
    uint32_t* ell_col;
    uint32_t* crs_ptr;
    uint32_t* crs_col;
    double* crs_val;
    sinew_ellcrs A;
    double* diag0;  /* ns: A's diagonal without collisions */
    double* jinv;   /* ns */
    fps_csr col_off; /* A_col's off-diagonal part (PCG) */
    fps_csr col_sum; /* K + A_col (CHOLMOD) */
    int has_col;
    fps_cholmod* chol;
    /* state: N x 3 column blocks in the new numbering */
    double* x;
    double* v;
    double* x_prev;
    double* pred;
    double* target; /* N x 3, model numbering (ps_slide_targets writes it) */
    ps_collide* joints; /* the joints' contacts (2018 Sec. 5) that keep anchors on their side */
    ps_clamp_spread* spread; /* their clamp spread around the clamped anchors (hard here) */
    double* rhs_const; /* ns x 3 */
    double* b;
    double* r;
    double* d;
    double* q;
    double* partial; /* 6 per row block */
    uint32_t row_blocks;
    float* skinning;
    int pose_dirty;
    float* skin_f;
    float* skin_n;
    const float* blend_from; /* interpolated output: the skin it blends from (NULL: none) */
    float blend_fraction;    /* and how far towards the current skin */
    ps_slide* slide;
    fps_collide* col;        /* global collisions (Sec. 6), NULL when off */
    const double* col_extra; /* this iteration's Q_col^T p_col, NULL without pairs */
    fps_jv* jvol;            /* the joints' volume (fps_joint_volume.c), NULL when off */
    double profile[6];
    uint64_t profile_steps;
    const sinew_mls_weights* mls; /* MLS upsampling (2019 Sec. 5), NULL: normal displacement */
};

void fps_sim_destroy(fps_sim* s)
{
    if (!s) return;
    sinew_host_api host = s->host;
#if defined(SINEW_HAVE_CHOLMOD)
    fps_cholmod_destroy(s->chol);
#endif
    ps_slide_destroy(s->slide);
    ps_clamp_spread_destroy(s->spread);
    ps_collide_destroy(s->joints);
    fps_collide_destroy(s->col);
    fps_jv_destroy(&host, s->jvol);
    fps_csr_free(&host, &s->K);
    fps_csr_free(&host, &s->Ksb);
    fps_csr_free(&host, &s->col_off);
    fps_csr_free(&host, &s->col_sum);
    void* arrays[] = {s->perm,    s->inv,      s->mass_h2, s->joint,     s->pv,      s->G,
                      s->inv_w,   s->F,        s->contrib, s->gather_ptr, s->gather, s->ell_val,
                      s->ell_col, s->crs_ptr,  s->crs_col, s->crs_val,   s->diag0,   s->jinv,
                      s->x,       s->v,        s->x_prev,  s->pred,      s->target,  s->rhs_const,
                      s->b,       s->r,        s->d,       s->q,         s->partial, s->skinning,
                      s->skin_f,  s->skin_n,   s->R,         s->part_rows};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) sinew_host_free(&host, arrays[i]);
    sinew_host_free(&host, s);
}

static sinew_result oom(fps_sim* s)
{
    return sinew_host_fail(&s->host, SINEW_ERROR_OUT_OF_MEMORY,
                           "fps: out of memory for a tissue mesh of %u vertices", s->N);
}

/* Per-prism G_p (Sec. 4.1, one rotation per prism), the strain diagonal and the lumped
 * masses, exactly as ps computes them so that both backends simulate the same tissue. */
static sinew_result setup_prisms(fps_sim* s, double* strain_diag, double* mass)
{
    const ps_model* m = s->m;
    uint32_t N = s->N, pc = s->prism_count;
    size_t S = s->stride;
    double* volume = (double*)sinew_host_calloc(&s->host, N, sizeof(double));
    double* Gd = (double*)sinew_host_calloc(&s->host, 18u, sizeof(double));
    if (!volume || !Gd) {
        sinew_host_free(&s->host, volume);
        sinew_host_free(&s->host, Gd);
        return oom(s);
    }
    double ws = s->p.strain_weight + s->p.volume.weight;
    for (uint32_t p = 0; p < pc; ++p) {
        uint32_t v[6];
        ps_prism_slots(m, p, v);
        double wsum = ps_prism_G(m, p, v, ws, Gd, strain_diag, volume);
        for (int q = 0; q < 18; ++q) s->G[(size_t)q * S + p] = (float)Gd[q];
        for (int k = 0; k < 6; ++k) s->pv[(size_t)k * S + p] = (int32_t)v[k]; /* renumbered later */
        s->inv_w[p] = wsum > 0.0 ? (float)(1.0 / wsum) : 0.0f;
    }
    /* Lumped masses as in ps (density in units of the squared tissue thickness, a floor so
     * that every vertex has some inertia). */
    double l2 = m->thickness * m->thickness;
    double msum = 0.0;
    for (uint32_t i = 0; i < N; ++i) {
        mass[i] = s->p.mass * volume[i] / l2;
        msum += mass[i];
    }
    double mmean = N ? msum / N : 0.0;
    if (!(mmean > 0.0)) mmean = s->p.mass > 0.0 ? s->p.mass : 1.0;
    for (uint32_t i = 0; i < N; ++i) mass[i] = fmax(mass[i], 1e-3 * mmean);
    sinew_host_free(&s->host, volume);
    sinew_host_free(&s->host, Gd);
    return SINEW_OK;
}

/* Sec. 4.3: free vertices first. A skin vertex is free when a tet holds it (strain diagonal >
 * 0); base vertices and unheld skin vertices are constrained. */
static void number_vertices(fps_sim* s, const double* strain_diag)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->n; ++i)
        if (strain_diag[i] > 0.0) s->perm[k++] = i;
    s->ns = k;
    for (uint32_t i = 0; i < s->N; ++i)
        if (i >= s->n || !(strain_diag[i] > 0.0)) s->perm[k++] = i;
    for (uint32_t j = 0; j < s->N; ++j) s->inv[s->perm[j]] = j;
    for (uint32_t j = 0; j < s->N; ++j)
        s->joint[j] = s->m->bones[s->m->vertex_bone[s->perm[j]]].joint;
}

/* Free row i of K_ss | K_sb: its columns into cols[0 .. *count) (ascending, so K_ss's come
 * first) and, unless acc is NULL (counting only), their values into acc[column]. h^-2 m_i
 * comes first, then w_t (A_t^T A_t)_ab for each tet at the vertex in tet order, so every entry
 * is summed in the order the tets give it (mark: per column the last row + 1 that listed it). */
static void row_entries(const fps_sim* s, const ps_vertex_tets* vt, uint32_t i, double* acc,
                        uint32_t* mark, uint32_t* cols, uint32_t* count)
{
    const ps_model* m = s->m;
    uint32_t v = s->perm[i], k = 0;
    if (acc) acc[i] = s->mass_h2[i];
    mark[i] = i + 1u;
    cols[k++] = i;
    for (uint32_t e = vt->offsets[v]; e < vt->offsets[v + 1]; ++e) {
        uint32_t t = vt->corners[e] / 4u;
        int a = (int)(vt->corners[e] % 4u);
        double w = (s->p.strain_weight + s->p.volume.weight) * fabs(m->tet_volume[t]);
        const double* A = m->tet_A + 12u * t;
        const uint32_t* tv = m->tets + 4u * t;
        for (int b = 0; b < 4; ++b) {
            double sum = 0.0;
            for (int r = 0; acc && r < 3; ++r) sum += A[4 * r + a] * A[4 * r + b];
            ps_gather_entry(s->inv[tv[b]], i + 1u, w * sum, acc, mark, cols, &k);
        }
    }
    if (acc) ps_sort_short(cols, k);
    *count = k;
}

/* The arrays of K (nk entries) and Ksb (nb entries), zeroed; false when one is missing. */
static bool alloc_matrices(fps_sim* s, size_t nk, size_t nb)
{
    uint32_t ns = s->ns;
    s->K.rows = s->Ksb.rows = ns;
    s->K.ptr = (uint32_t*)sinew_host_calloc(&s->host, (size_t)ns + 1u, sizeof(uint32_t));
    s->K.col = (uint32_t*)sinew_host_calloc(&s->host, nk ? nk : 1u, sizeof(uint32_t));
    s->K.val = (double*)sinew_host_calloc(&s->host, nk ? nk : 1u, sizeof(double));
    s->Ksb.ptr = (uint32_t*)sinew_host_calloc(&s->host, (size_t)ns + 1u, sizeof(uint32_t));
    s->Ksb.col = (uint32_t*)sinew_host_calloc(&s->host, nb ? nb : 1u, sizeof(uint32_t));
    s->Ksb.val = (double*)sinew_host_calloc(&s->host, nb ? nb : 1u, sizeof(double));
    return s->K.ptr && s->K.col && s->K.val && s->Ksb.ptr && s->Ksb.col && s->Ksb.val;
}

/* K and Ksb from the free rows (row_entries), the row split at column ns: their sizes in a
 * first pass, their entries in a second. False when their arrays cannot be allocated. */
static bool fill_matrices(fps_sim* s, const ps_vertex_tets* vt, double* acc, uint32_t* mark,
                          uint32_t* cols)
{
    uint32_t ns = s->ns, count;
    size_t nk = 0, nb = 0;
    for (uint32_t i = 0; i < ns; ++i) {
        row_entries(s, vt, i, NULL, mark, cols, &count);
        for (uint32_t k = 0; k < count; ++k) cols[k] < ns ? ++nk : ++nb;
    }
    if (!alloc_matrices(s, nk, nb)) return false;
    memset(mark, 0, (size_t)s->N * sizeof(uint32_t));
    uint32_t ck = 0, cb = 0;
    for (uint32_t i = 0; i < ns; ++i) {
        row_entries(s, vt, i, acc, mark, cols, &count);
        for (uint32_t k = 0; k < count; ++k) {
            if (cols[k] < ns) {
                s->K.col[ck] = cols[k];
                s->K.val[ck++] = acc[cols[k]];
            } else {
                s->Ksb.col[cb] = cols[k];
                s->Ksb.val[cb++] = acc[cols[k]];
            }
        }
        s->K.ptr[i + 1] = ck;
        s->Ksb.ptr[i + 1] = cb;
    }
    return true;
}

/* Q^T Q over the tets, h^-2 M_s on the diagonal, split into K_ss and K_sb (new numbering);
 * within a row, duplicates are summed in the order the tets give them (mass first). Sets
 * mass_h2. */
static sinew_result assemble(fps_sim* s, const double* mass)
{
    for (uint32_t i = 0; i < s->ns; ++i) s->mass_h2[i] = mass[s->perm[i]] * s->inv_h2;
    ps_vertex_tets vt;
    sinew_result r = ps_vertex_tets_build(&s->host, s->m, &vt);
    if (r != SINEW_OK) return r;
    double* acc = (double*)sinew_host_alloc(&s->host, (size_t)s->N * sizeof(double));
    uint32_t* mark = (uint32_t*)sinew_host_calloc(&s->host, s->N, sizeof(uint32_t));
    uint32_t* cols = (uint32_t*)sinew_host_alloc(&s->host, (size_t)s->N * sizeof(uint32_t));
    bool ok = acc && mark && cols && fill_matrices(s, &vt, acc, mark, cols);
    ps_vertex_tets_free(&s->host, &vt);
    sinew_host_free(&s->host, acc);
    sinew_host_free(&s->host, mark);
    sinew_host_free(&s->host, cols);
    return ok ? SINEW_OK : oom(s);
}

/* The hybrid ELL/CRS copy of K_ss (Sec. 4.2) and the Jacobi preconditioner. */
static sinew_result build_ellcrs(fps_sim* s)
{
    sinew_crs K = fps_csr_view(&s->K);
    if (!sinew_ellcrs_count(&K, &s->ell_width, &s->crs_count))
        return sinew_host_fail(&s->host, SINEW_ERROR_BACKEND_FAILED,
                               "fps: the reduced matrix (%u rows) has a row without its diagonal",
                               s->ns);
    size_t ns = s->ns ? s->ns : 1u;
    s->ell_val = (double*)sinew_host_calloc(&s->host, (size_t)s->ell_width * ns, sizeof(double));
    s->ell_col = (uint32_t*)sinew_host_calloc(&s->host, (size_t)s->ell_width * ns, sizeof(uint32_t));
    s->crs_ptr = (uint32_t*)sinew_host_calloc(&s->host, ns + 1u, sizeof(uint32_t));
    s->crs_col = (uint32_t*)sinew_host_calloc(&s->host, s->crs_count ? s->crs_count : 1u, sizeof(uint32_t));
    s->crs_val = (double*)sinew_host_calloc(&s->host, s->crs_count ? s->crs_count : 1u, sizeof(double));
    s->diag0 = (double*)sinew_host_calloc(&s->host, ns, sizeof(double));
    s->jinv = (double*)sinew_host_calloc(&s->host, ns, sizeof(double));
    if (!s->ell_val || !s->ell_col || !s->crs_ptr || !s->crs_col || !s->crs_val || !s->diag0 ||
        !s->jinv)
        return oom(s);
    sinew_ellcrs_fill(&K, s->ell_width, s->ell_val, s->ell_col, s->crs_ptr, s->crs_col, s->crs_val);
    s->A.rows = s->ns;
    s->A.ell_width = s->ell_width;
    s->A.ell_val = s->ell_val;
    s->A.ell_col = s->ell_col;
    s->A.crs_ptr = s->crs_ptr;
    s->A.crs_col = s->crs_col;
    s->A.crs_val = s->crs_val;
    for (uint32_t i = 0; i < s->ns; ++i) {
        s->diag0[i] = s->ell_val[i];
        s->jinv[i] = 1.0 / s->ell_val[i];
    }
    return SINEW_OK;
}

/* Which prism slots feed each free vertex's right-hand side (pv in the new numbering). */
static sinew_result build_gather(fps_sim* s)
{
    uint32_t pc = s->prism_count, ns = s->ns;
    size_t S = s->stride;
    memset(s->gather_ptr, 0, ((size_t)ns + 1u) * sizeof(uint32_t));
    for (uint32_t p = 0; p < pc; ++p)
        for (int k = 0; k < 6; ++k) {
            uint32_t i = (uint32_t)s->pv[(size_t)k * S + p];
            if (i < ns) s->gather_ptr[i + 1]++;
        }
    for (uint32_t i = 0; i < ns; ++i) s->gather_ptr[i + 1] += s->gather_ptr[i];
    uint32_t* cursor = (uint32_t*)sinew_host_calloc(&s->host, (size_t)ns + 1u, sizeof(uint32_t));
    if (!cursor) return oom(s);
    memcpy(cursor, s->gather_ptr, ((size_t)ns + 1u) * sizeof(uint32_t));
    for (uint32_t p = 0; p < pc; ++p)
        for (uint32_t k = 0; k < 6; ++k) {
            uint32_t i = (uint32_t)s->pv[(size_t)k * S + p];
            if (i < ns) s->gather[cursor[i]++] = (uint32_t)(3u * k * S + p);
        }
    sinew_host_free(&s->host, cursor);
    return SINEW_OK;
}

/* The sizes and constants of the simulation from the model and parameters. */
static void sim_init(fps_sim* s, const sinew_host_api* host, const ps_model* m,
                     const fps_params* params)
{
    s->host = *host;
    s->m = m;
    s->p = *params;
    s->n = m->n;
    s->N = 2u * m->n;
    s->h = params->timestep;
    s->inv_h2 = 1.0 / (params->timestep * params->timestep);
    s->prism_count = m->triangle_count;
    /* Whole blocks for the SIMD kernels: the padding prisms have G = 0, inv_w = 0 and vertex
     * 0, so they give F = 0, R = I and no share, and no free vertex gathers them. */
    s->block_count = (s->prism_count + PS_LOCAL_BLOCK - 1u) / PS_LOCAL_BLOCK;
    s->stride = s->block_count ? (size_t)s->block_count * PS_LOCAL_BLOCK : PS_LOCAL_BLOCK;
}

/* The local step's kernels for the simd parameter (the solver too must be in the build):
 * the batched polar decomposition and ps's gradient and projection of the same instruction
 * set. */
static sinew_result select_kernels(fps_sim* s)
{
    const fps_params* params = &s->p;
#if !defined(SINEW_HAVE_CHOLMOD)
    if (params->solver == FPS_SOLVER_CHOLMOD)
        return sinew_host_fail(&s->host, SINEW_ERROR_BACKEND_UNAVAILABLE,
                               "fps: solver=cholmod, but this build has no CHOLMOD (use pcg)");
#endif
    s->polar = sinew_polar3_batch_kernel(params->simd);
    if (!s->polar)
        return sinew_host_fail(&s->host, SINEW_ERROR_BACKEND_UNAVAILABLE,
                               "fps: simd=%s is not available on this CPU or in this build",
                               sinew_simd_name(params->simd));
    s->gradient = ps_local_gradient_scalar;
    s->project = ps_local_project_scalar;
#if defined(SINEW_SKIN_X86)
    switch (sinew_polar3_batch_resolve(params->simd)) {
    case SINEW_SIMD_AVX512:
        s->gradient = ps_local_gradient_avx512;
        s->project = ps_local_project_avx512;
        break;
    case SINEW_SIMD_AVX2:
        s->gradient = ps_local_gradient_avx2;
        s->project = ps_local_project_avx2;
        break;
    default:
        break;
    }
#endif
    return SINEW_OK;
}

/* The per-vertex, per-prism and per-step arrays (the volume term's R only when it blends, the
 * PCG's vectors only for solver=pcg); false when one of them cannot be allocated. */
static bool alloc_arrays(fps_sim* s)
{
    const sinew_host_api* host = &s->host;
    uint32_t N = s->N;
    size_t S = s->stride, N3 = 3u * (size_t)N;
    s->perm = (uint32_t*)sinew_host_calloc(host, N, sizeof(uint32_t));
    s->inv = (uint32_t*)sinew_host_calloc(host, N, sizeof(uint32_t));
    s->joint = (uint32_t*)sinew_host_calloc(host, N, sizeof(uint32_t));
    s->mass_h2 = (double*)sinew_host_calloc(host, N, sizeof(double));
    s->pv = (int32_t*)sinew_host_calloc(host, S, 6u * sizeof(int32_t));
    s->G = (float*)sinew_host_calloc(host, S, 18u * sizeof(float));
    s->inv_w = (float*)sinew_host_calloc(host, S, sizeof(float));
    s->F = (float*)sinew_host_calloc(host, S, 9u * sizeof(float));
    ps_volume_blend(&s->p.volume, s->p.strain_weight, &s->prisms.volume_keep,
                    &s->prisms.volume_lo, &s->prisms.volume_hi);
    if (s->prisms.volume_keep < 1.0f)
        s->R = (float*)sinew_host_calloc(host, S, 9u * sizeof(float));
    s->contrib = (float*)sinew_host_calloc(host, S, 18u * sizeof(float));
    s->gather_ptr = (uint32_t*)sinew_host_calloc(host, (size_t)N + 1u, sizeof(uint32_t));
    s->gather = (uint32_t*)sinew_host_calloc(host, 6u * S, sizeof(uint32_t));
    s->part_rows = (uint32_t*)sinew_host_calloc(host, N, sizeof(uint32_t));
    s->x = (double*)sinew_host_calloc(host, N3, sizeof(double));
    s->v = (double*)sinew_host_calloc(host, N3, sizeof(double));
    s->x_prev = (double*)sinew_host_calloc(host, N3, sizeof(double));
    s->pred = (double*)sinew_host_calloc(host, N3, sizeof(double));
    s->target = (double*)sinew_host_calloc(host, N3, sizeof(double));
    s->rhs_const = (double*)sinew_host_calloc(host, N3, sizeof(double));
    s->b = (double*)sinew_host_calloc(host, N3, sizeof(double));
    /* The PCG's vectors: with CHOLMOD nothing reads them (solve). */
    bool pcg = s->p.solver == FPS_SOLVER_PCG;
    if (pcg) {
        s->r = (double*)sinew_host_calloc(host, N3, sizeof(double));
        s->d = (double*)sinew_host_calloc(host, N3, sizeof(double));
        s->q = (double*)sinew_host_calloc(host, N3, sizeof(double));
    }
    s->row_blocks = (N + FPS_ROW_BLOCK - 1u) / FPS_ROW_BLOCK;
    s->partial = (double*)sinew_host_calloc(host, s->row_blocks ? s->row_blocks : 1u,
                                            6u * sizeof(double));
    s->skinning = (float*)sinew_host_calloc(host, s->m->joint_count, 16u * sizeof(float));
    s->skin_f = (float*)sinew_host_calloc(host, s->n ? s->n : 1u, 3u * sizeof(float));
    s->skin_n = (float*)sinew_host_calloc(host, s->n ? s->n : 1u, 3u * sizeof(float));
    return s->perm && s->inv && s->joint && s->mass_h2 && s->pv && s->G && s->inv_w && s->F &&
           !(s->prisms.volume_keep < 1.0f && !s->R) && s->contrib && s->gather_ptr &&
           s->gather && s->part_rows && s->x && s->v && s->x_prev && s->pred && s->target && s->rhs_const &&
           s->b && (!pcg || (s->r && s->d && s->q)) && s->partial && s->skinning && s->skin_f &&
           s->skin_n;
}

/* The arrays, then the prisms, the numbering (free vertices first, Sec. 4.3), the reduced
 * matrices, the right-hand side's gather lists and the ELL/CRS copy (Sec. 4.2); the strain
 * diagonal and the lumped masses are scratch. */
static sinew_result build_system(fps_sim* s)
{
    const sinew_host_api* host = &s->host;
    bool arrays = alloc_arrays(s);
    double* strain_diag = (double*)sinew_host_calloc(host, s->N, sizeof(double));
    double* mass = (double*)sinew_host_calloc(host, s->N, sizeof(double));
    sinew_result r = SINEW_OK;
    if (!arrays || !strain_diag || !mass) r = oom(s);
    if (r == SINEW_OK) r = setup_prisms(s, strain_diag, mass);
    if (r == SINEW_OK) {
        number_vertices(s, strain_diag);
        r = assemble(s, mass);
    }
    sinew_host_free(host, strain_diag);
    sinew_host_free(host, mass);
    if (r == SINEW_OK) {
        for (size_t e = 0; e < 6u * s->stride; ++e) s->pv[e] = (int32_t)s->inv[s->pv[e]];
        r = build_gather(s);
    }
    if (r == SINEW_OK) r = build_ellcrs(s);
    return r;
}

/* The global collisions (Sec. 6, fps_collide.c) on the reduced system, with the limb
 * capsules when they are on; the joints' contacts keep their vertices free of the capsules.
 * host: the caller's, which the collision state keeps. */
static sinew_result create_collide(const sinew_host_api* host, fps_sim* s)
{
    const fps_params* params = &s->p;
    /* Sec. 6: the springs' stiffness scales with the system's own (its mean diagonal) */
    double mean = 0.0;
    for (uint32_t i = 0; i < s->ns; ++i) mean += s->diag0[i];
    fps_collide_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.model = s->m;
    cd.free_count = s->ns;
    cd.weight = params->collision_weight * mean / s->ns;
    cd.row_of = s->inv;
    /* targets a fifth of an edge above the plane: the render mesh, displaced from the
     * simulated surface, still crossed the plane with the target on it (male, hand on the
     * hip: 130 intersecting render pairs at 0, none at 0.18; 0.28 and more push the
     * neighbouring prisms into each other and the pairs multiply) */
    cd.margin = 0.2;
    /* the limb capsules read the pose of each step from s->skinning (fps_collide.c) */
    cd.skinning = params->capsules ? s->skinning : NULL;
    sinew_result r = fps_collide_create(host, &cd, &s->col);
    if (r == SINEW_OK && s->joints)
        fps_collide_free_of_capsules(s->col, ps_collide_vertices(s->joints),
                                     ps_collide_vertex_count(s->joints));
    return r;
}

/* The solver and the constraints of the parameters: the CHOLMOD factor, skin sliding (2018
 * Sec. 4.2), the joints' contacts (2018 Sec. 5) and the global collisions (Sec. 6), each
 * given the caller's host. */
static sinew_result create_solver_and_contacts(const sinew_host_api* host, fps_sim* s)
{
    const ps_model* m = s->m;
    const fps_params* params = &s->p;
    sinew_result r = SINEW_OK;
#if defined(SINEW_HAVE_CHOLMOD)
    if (params->solver == FPS_SOLVER_CHOLMOD && s->ns > 0) {
        sinew_crs K = fps_csr_view(&s->K);
        r = fps_cholmod_create(host, &K, &s->chol);
    }
#endif
    if (r == SINEW_OK && params->sliding && m->slide_vertex_count > 0)
        r = ps_slide_create(host, m, &s->slide);
    if (r == SINEW_OK && params->joint_collisions && m->collision_pair_count > 0)
        r = ps_collide_create(host, m, &s->joints);
    if (r == SINEW_OK && s->joints)
        r = ps_clamp_spread_create(host, m, FPS_CLAMP_SPREAD_RINGS, &s->spread);
    if (r == SINEW_OK && params->collisions && s->ns > 0) r = create_collide(host, s);
    if (r == SINEW_OK && params->volume.joint > 0.0 && s->ns > 0)
        r = fps_jv_create(host, m, params, s->perm, s->inv, s->ns, s->N, s->diag0, &s->jvol);
    return r;
}

#if defined(SINEW_HAVE_CHOLMOD)
/* The solver part that holds most of prism slot p's free vertices (the constrained ones,
 * beyond the solver's rows, do not vote). */
static uint32_t prism_part(const fps_sim* s, const sinew_ldl* ldl, uint32_t p)
{
    uint32_t v[6];
    for (uint32_t k = 0; k < 6u; ++k) v[k] = (uint32_t)s->pv[(size_t)k * s->stride + p];
    return sinew_ldl_majority_part(ldl, v, 6u);
}

/* Slot q takes the prism data (G, pv, inv_w) of slot order[q]; buf holds a stride. */
static void permute_prisms(fps_sim* s, const uint32_t* order, void* buf)
{
    size_t S = s->stride;
    uint32_t pc = s->prism_count;
    float* f = (float*)buf;
    int32_t* v = (int32_t*)buf;
    for (size_t c = 0; c < 18u; ++c) {
        for (uint32_t q = 0; q < pc; ++q) f[q] = s->G[c * S + order[q]];
        memcpy(s->G + c * S, f, pc * sizeof(float));
    }
    for (size_t c = 0; c < 6u; ++c) {
        for (uint32_t q = 0; q < pc; ++q) v[q] = s->pv[c * S + order[q]];
        memcpy(s->pv + c * S, v, pc * sizeof(int32_t));
    }
    for (uint32_t q = 0; q < pc; ++q) f[q] = s->inv_w[order[q]];
    memcpy(s->inv_w, f, pc * sizeof(float));
}
#endif

/* With CHOLMOD: the prisms and free rows in the order of the solver's parts (part_blocks,
 * part_rows), the gather lists rebuilt for it. The arithmetic of a prism or a row does not
 * depend on its slot; a row's shares are summed in slot order. */
static sinew_result order_parts(fps_sim* s)
{
    s->part_jobs = false;
#if defined(SINEW_HAVE_CHOLMOD)
    const sinew_ldl* ldl = fps_cholmod_solver(s->chol);
    if (!ldl || s->prism_count == 0) return SINEW_OK;
    uint32_t pc = s->prism_count, count[SINEW_LDL_PARTS + 1] = {0};
    uint8_t* part = (uint8_t*)sinew_host_alloc(&s->host, pc);
    uint32_t* order = (uint32_t*)sinew_host_alloc(&s->host, pc * sizeof(uint32_t));
    void* buf = sinew_host_alloc(&s->host, s->stride * sizeof(float));
    sinew_result r = part && order && buf ? SINEW_OK : oom(s);
    if (r == SINEW_OK) {
        for (uint32_t p = 0; p < pc; ++p) count[(part[p] = (uint8_t)prism_part(s, ldl, p)) + 1]++;
        for (uint32_t k = 0; k < SINEW_LDL_PARTS; ++k) count[k + 1] += count[k];
        for (uint32_t k = 0; k < SINEW_LDL_PARTS; ++k)
            s->part_blocks[k] = (count[k] + PS_LOCAL_BLOCK / 2u) / PS_LOCAL_BLOCK;
        s->part_blocks[SINEW_LDL_PARTS] = s->block_count;
        for (uint32_t p = 0; p < pc; ++p) order[count[part[p]]++] = p;
        permute_prisms(s, order, buf);
        r = build_gather(s);
    }
    if (r == SINEW_OK) sinew_ldl_rows_by_part(ldl, s->ns, s->part_rows, s->part_row_start);
    s->part_jobs = r == SINEW_OK && s->host.jobs.thread_count <= SINEW_LDL_PARTS;
    sinew_host_free(&s->host, part);
    sinew_host_free(&s->host, order);
    sinew_host_free(&s->host, buf);
    return r;
#else
    return SINEW_OK;
#endif
}

/* The prisms' views for the kernels, and the state at rest: positions and targets on the rest
 * shape, every skinning matrix the identity. */
static void start_at_rest(fps_sim* s)
{
    const ps_model* m = s->m;
    uint32_t N = s->N;
    s->prisms.stride = s->stride;
    s->prisms.pv = s->pv;
    s->prisms.G = s->G;
    s->prisms.inv_w = s->inv_w;
    /* Start at rest. */
    for (uint32_t j = 0; j < N; ++j)
        for (int c = 0; c < 3; ++c) {
            s->x[(size_t)c * N + j] = m->rest[3u * s->perm[j] + c];
            s->target[(size_t)c * N + j] = m->rest[3u * j + c];
        }
    for (uint32_t j = 0; j < m->joint_count; ++j)
        for (int k = 0; k < 16; ++k) s->skinning[16u * j + k] = (k % 5 == 0) ? 1.0f : 0.0f;
}

sinew_result fps_sim_create(const sinew_host_api* host, const ps_model* m, const fps_params* params,
                            fps_sim** out)
{
    *out = NULL;
    fps_sim* s = (fps_sim*)sinew_host_calloc(host, 1, sizeof(fps_sim));
    if (!s) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps: out of memory");
    sim_init(s, host, m, params);
    sinew_result r = select_kernels(s);
    if (r == SINEW_OK) r = build_system(s);
    if (r == SINEW_OK) r = create_solver_and_contacts(host, s);
    if (r == SINEW_OK) r = order_parts(s);
    if (r != SINEW_OK) {
        fps_sim_destroy(s);
        return r;
    }
    start_at_rest(s);
    sinew_host_log(host, SINEW_LOG_DEBUG,
                   "fps: reduced system of %u unknowns (of %u tissue vertices), %zu nonzeros, "
                   "ELL width %u, %zu CRS entries, factor %zu nonzeros",
                   s->ns, s->N, fps_sim_matrix_nnz(s), s->ell_width, s->crs_count,
                   fps_sim_factor_nnz(s));
    *out = s;
    return SINEW_OK;
}

uint32_t fps_sim_free_count(const fps_sim* s)
{
    return s->ns;
}

size_t fps_sim_matrix_nnz(const fps_sim* s)
{
    return s->K.ptr ? s->K.ptr[s->ns] : 0u;
}

size_t fps_sim_factor_nnz(const fps_sim* s)
{
#if defined(SINEW_HAVE_CHOLMOD)
    return fps_cholmod_factor_nnz(s->chol);
#else
    (void)s;
    return 0u;
#endif
}

void fps_sim_ellcrs_shape(const fps_sim* s, uint32_t* ell_width, size_t* crs_count)
{
    *ell_width = s->ell_width;
    *crs_count = s->crs_count;
}

sinew_crs fps_sim_matrix(const fps_sim* s)
{
    return fps_csr_view(&s->K);
}

sinew_ellcrs fps_sim_ellcrs(const fps_sim* s)
{
    return s->A;
}

void fps_sim_set_pose(fps_sim* s, const float* skinning)
{
    ps_copy_skinning(s->skinning, skinning, s->m->joint_count);
    s->pose_dirty = 1;
}

/* Targets of the constrained vertices (model numbering in s->target): the rest position moved
 * by the bone's skinning matrix, or skin sliding near joints (2018 Sec. 4.2), as ps does. */
static void update_targets(fps_sim* s)
{
    uint32_t N = s->N;
    for (uint32_t j = s->ns; j < N; ++j)
        ps_bone_target(s->target, N, s->perm[j], s->skinning + 16u * s->joint[j], s->m->rest);
    /* 2018 Sec. 5 (ps_collide.c): anchors near a folding joint kept on their side of its
     * plane, so that the crease's skin is not pressed through itself */
    ps_hard_targets_adjust(s->slide, s->joints, s->spread, s->skinning, s->target, N);
}

/* ---- the step's phases over the job system ---- */

typedef struct step_ctx {
    fps_sim* s;
    const double* b;
    size_t ld;
    double* x;
    size_t ldx;
    double alpha[3];
    double beta[3];
    int want_rr;
} step_ctx;

/* Alg. 1 lines 1-2 for every vertex; constrained vertices then sit on their targets. */
static void predict_range(void* data, uint32_t begin, uint32_t end)
{
    fps_sim* s = ((const step_ctx*)data)->s;
    uint32_t N = s->N;
    for (uint32_t j = begin; j < end; ++j) {
        fps_predict_row(s->x, s->v, s->x_prev, s->pred, N, j, s->h);
        if (j >= s->ns)
            for (int c = 0; c < 3; ++c)
                s->x[(size_t)c * N + j] = s->target[(size_t)c * N + s->perm[j]];
    }
}

static void rhs_const_range(void* data, uint32_t begin, uint32_t end)
{
    fps_sim* s = ((const step_ctx*)data)->s;
    sinew_crs Ksb = fps_csr_view(&s->Ksb);
    for (uint32_t i = begin; i < end; ++i)
        fps_rhs_const_row(i, s->mass_h2, s->pred, &Ksb, s->x, s->N, s->rhs_const, s->ns);
}

/* Local step for prism blocks [begin, end): gradients, their rotations by the batched polar
 * decomposition (the bits of sinew_polar3, which fps_local_prism calls), projections; all
 * three in one pass over the block range, so F stays in cache between them. */
static void local_range(void* data, uint32_t begin, uint32_t end)
{
    fps_sim* s = ((const step_ctx*)data)->s;
    ps_local_job job;
    job.x = s->x;
    job.N = s->N;
    job.pv = s->pv;
    job.G = s->G;
    job.inv_w = s->inv_w;
    job.F = s->F;
    job.contrib = s->contrib;
    job.stride = s->stride;
    s->gradient(&job, begin, end);
    if (s->R) { /* the volume term: the rotation blended with F's volume projection */
        s->polar(s->F, s->R, s->stride, begin * PS_LOCAL_BLOCK, end * PS_LOCAL_BLOCK);
        ps_local_volume(s->F, s->R, s->stride, s->prisms.volume_keep, s->prisms.volume_lo,
                        s->prisms.volume_hi, begin, end);
        job.F = s->R;
    } else {
        s->polar(s->F, s->F, s->stride, begin * PS_LOCAL_BLOCK, end * PS_LOCAL_BLOCK);
    }
    s->project(&job, begin, end);
}

static void rhs_range(void* data, uint32_t begin, uint32_t end)
{
    fps_sim* s = ((const step_ctx*)data)->s;
    for (uint32_t i = begin; i < end; ++i)
        fps_rhs_row(i, s->rhs_const, s->gather_ptr, s->gather, s->contrib, s->stride, s->col_extra,
                    s->b, s->ns);
}

/* Parts [begin, end): their blocks' local step (part_jobs). */
static void local_part_range(void* data, uint32_t begin, uint32_t end)
{
    const fps_sim* s = ((const step_ctx*)data)->s;
    for (uint32_t k = begin; k < end; ++k)
        if (s->part_blocks[k] < s->part_blocks[k + 1])
            local_range(data, s->part_blocks[k], s->part_blocks[k + 1]);
}

/* sinew_ldl_rhs_fn: rows of the right-hand side straight into a part's workspace. */
static void rhs_rows(void* user, const uint32_t* rows, uint32_t count, double* out)
{
    const fps_sim* s = (const fps_sim*)user;
    for (uint32_t k = 0; k < count; ++k)
        fps_rhs_value(rows[k], s->rhs_const, s->gather_ptr, s->gather, s->contrib, s->stride,
                      s->col_extra, s->ns, out + 3u * (size_t)k);
}

/* Parts [begin, end): their free rows' right-hand side (part_jobs). */
static void rhs_part_range(void* data, uint32_t begin, uint32_t end)
{
    fps_sim* s = ((const step_ctx*)data)->s;
    for (uint32_t k = begin; k < end; ++k)
        for (uint32_t e = s->part_row_start[k]; e < s->part_row_start[k + 1]; ++e)
            fps_rhs_row(s->part_rows[e], s->rhs_const, s->gather_ptr, s->gather, s->contrib,
                        s->stride, s->col_extra, s->b, s->ns);
}

static void velocity_range(void* data, uint32_t begin, uint32_t end)
{
    fps_sim* s = ((const step_ctx*)data)->s;
    double f = s->p.damping / s->h;
    for (uint32_t j = begin; j < end; ++j) fps_velocity_row(s->x, s->x_prev, s->v, s->N, j, f);
}

/* ---- PCG (Alg. 2): one job range = whole blocks of FPS_ROW_BLOCK rows ---- */

static const sinew_crs* col_matrix(const fps_sim* s, sinew_crs* view)
{
    if (!s->has_col) return NULL;
    *view = fps_csr_view(&s->col_off);
    return view;
}

/* Each block's share of an inner product: its rows' terms (each row's function called on a
 * zeroed accumulator, as a device thread does) summed in fps_block_sum.h's order. `init`:
 * the rows of the initial residual (fps_pcg_init_row), else of the product A d. */
static void pcg_block_sums(step_ctx* c, uint32_t begin, uint32_t end, bool init)
{
    fps_sim* s = c->s;
    sinew_crs cv;
    const sinew_crs* col = col_matrix(s, &cv);
    fps_block_acc acc;
    for (uint32_t blk = begin; blk < end; ++blk) {
        uint32_t lo = blk * FPS_ROW_BLOCK;
        uint32_t hi = lo + FPS_ROW_BLOCK < s->ns ? lo + FPS_ROW_BLOCK : s->ns;
        fps_block_acc_init(&acc);
        for (uint32_t i = lo; i < hi; ++i) {
            double row[3] = {0.0, 0.0, 0.0};
            if (init)
                fps_pcg_init_row(&s->A, col, s->jinv, i, c->b, c->x, c->ldx, s->r, s->d, s->ns,
                                 row);
            else
                fps_pcg_matvec_row(&s->A, col, i, s->d, s->q, s->ns, row);
            fps_block_acc_row(&acc, row);
        }
        fps_block_acc_sum(&acc, s->partial + 6u * blk);
    }
}

static void pcg_init_range(void* data, uint32_t begin, uint32_t end)
{
    pcg_block_sums((step_ctx*)data, begin, end, true);
}

static void pcg_matvec_range(void* data, uint32_t begin, uint32_t end)
{
    pcg_block_sums((step_ctx*)data, begin, end, false);
}

static void pcg_update_range(void* data, uint32_t begin, uint32_t end)
{
    step_ctx* c = (step_ctx*)data;
    fps_sim* s = c->s;
    fps_block_acc acc, acc_rr;
    for (uint32_t blk = begin; blk < end; ++blk) {
        uint32_t lo = blk * FPS_ROW_BLOCK;
        uint32_t hi = lo + FPS_ROW_BLOCK < s->ns ? lo + FPS_ROW_BLOCK : s->ns;
        fps_block_acc_init(&acc);
        fps_block_acc_init(&acc_rr);
        for (uint32_t i = lo; i < hi; ++i) {
            double delta[3] = {0.0, 0.0, 0.0}, rr[3] = {0.0, 0.0, 0.0};
            fps_pcg_update_row(c->alpha, s->jinv, i, c->x, c->ldx, s->r, s->d, s->q, s->ns, delta,
                               c->want_rr ? rr : NULL);
            fps_block_acc_row(&acc, delta);
            if (c->want_rr) fps_block_acc_row(&acc_rr, rr);
        }
        fps_block_acc_sum(&acc, s->partial + 6u * blk);
        if (c->want_rr) fps_block_acc_sum(&acc_rr, s->partial + 6u * blk + 3u);
    }
}

static void pcg_direction_range(void* data, uint32_t begin, uint32_t end)
{
    step_ctx* c = (step_ctx*)data;
    fps_sim* s = c->s;
    for (uint32_t blk = begin; blk < end; ++blk) {
        uint32_t hi = (blk + 1u) * FPS_ROW_BLOCK < s->ns ? (blk + 1u) * FPS_ROW_BLOCK : s->ns;
        for (uint32_t i = blk * FPS_ROW_BLOCK; i < hi; ++i)
            fps_pcg_direction_row(c->beta, s->jinv, i, s->r, s->d, s->ns);
    }
}

/* The blocks' partial sums in block order (offset 0: first three, 3: second three). */
static void sum_partials(const fps_sim* s, uint32_t blocks, int offset, double out[3])
{
    out[0] = out[1] = out[2] = 0.0;
    for (uint32_t blk = 0; blk < blocks; ++blk)
        for (int k = 0; k < 3; ++k) out[k] += s->partial[6u * blk + (uint32_t)offset + k];
}

/* Warm-started PCG (x holds the start): pcg_iterations iterations, or fewer once every column's
 * residual is below pcg_tolerance relative to its right-hand side. Returns the largest
 * relative residual when `residual` is not NULL (computed only then or with a tolerance). */
static void pcg_solve(fps_sim* s, const double* b, double* x, size_t ldx, double* residual)
{
    uint32_t blocks = (s->ns + FPS_ROW_BLOCK - 1u) / FPS_ROW_BLOCK;
    step_ctx c;
    memset(&c, 0, sizeof c);
    c.s = s;
    c.b = b;
    c.ld = s->ns;
    c.x = x;
    c.ldx = ldx;
    c.want_rr = s->p.pcg_tolerance > 0.0 || residual != NULL;
    double bnorm[3] = {1.0, 1.0, 1.0};
    if (c.want_rr)
        for (int k = 0; k < 3; ++k) {
            double sum = 0.0;
            for (uint32_t i = 0; i < s->ns; ++i) sum += b[(size_t)k * s->ns + i] * b[(size_t)k * s->ns + i];
            bnorm[k] = sum > 0.0 ? sqrt(sum) : 1.0;
        }
    /* The grain: blocks per job, at least FPS_PCG_MIN_BLOCKS, and two jobs at most. Each
     * PCG iteration dispatches four kernels of a few microseconds per thousand rows, so a
     * character's system (a few thousand rows) runs on the calling thread, where a split
     * costs more in dispatch than it gains; a system of several tens of thousands of rows is
     * split. The sums are per fixed block either way, so the bits are the same. */
    uint32_t grain = blocks > 1u ? (blocks + 1u) / 2u : 1u;
    if (grain < FPS_PCG_MIN_BLOCKS) grain = FPS_PCG_MIN_BLOCKS;
    double delta[3], gamma[3], tmp[3], rel = 0.0;
    sinew_host_parallel_for(&s->host, pcg_init_range, &c, blocks, grain);
    sum_partials(s, blocks, 0, delta);
    for (uint32_t it = 0; it < s->p.pcg_iterations; ++it) {
        for (int k = 0; k < 3; ++k) gamma[k] = delta[k];
        sinew_host_parallel_for(&s->host, pcg_matvec_range, &c, blocks, grain);
        sum_partials(s, blocks, 0, tmp);
        for (int k = 0; k < 3; ++k) c.alpha[k] = fps_pcg_alpha(gamma[k], tmp[k]);
        sinew_host_parallel_for(&s->host, pcg_update_range, &c, blocks, grain);
        sum_partials(s, blocks, 0, delta);
        if (c.want_rr) {
            sum_partials(s, blocks, 3, tmp);
            rel = 0.0;
            for (int k = 0; k < 3; ++k) rel = fmax(rel, sqrt(tmp[k]) / bnorm[k]);
            if (s->p.pcg_tolerance > 0.0 && rel <= s->p.pcg_tolerance) break;
        }
        for (int k = 0; k < 3; ++k) c.beta[k] = fps_pcg_beta(delta[k], gamma[k]);
        sinew_host_parallel_for(&s->host, pcg_direction_range, &c, blocks, grain);
    }
    if (residual) *residual = rel;
}

static sinew_result solve(fps_sim* s, const double* b, double* x, size_t ldx, double* residual)
{
    if (s->ns == 0) return SINEW_OK;
#if defined(SINEW_HAVE_CHOLMOD)
    if (s->chol) {
        sinew_result r = fps_cholmod_solve(s->chol, b, s->ns, x, ldx);
        if (r == SINEW_OK && residual) {
            /* The true relative residual, for tests. */
            sinew_crs cv;
            const sinew_crs* col = col_matrix(s, &cv);
            double rr[3] = {0.0, 0.0, 0.0}, bb[3] = {0.0, 0.0, 0.0};
            for (uint32_t i = 0; i < s->ns; ++i) {
                double ax[3];
                fps_matvec_row(&s->A, col, i, x, ldx, ax);
                for (int k = 0; k < 3; ++k) {
                    double e = b[(size_t)k * s->ns + i] - ax[k];
                    rr[k] += e * e;
                    bb[k] += b[(size_t)k * s->ns + i] * b[(size_t)k * s->ns + i];
                }
            }
            *residual = 0.0;
            for (int k = 0; k < 3; ++k)
                *residual = fmax(*residual, sqrt(rr[k]) / (bb[k] > 0.0 ? sqrt(bb[k]) : 1.0));
        }
        return r;
    }
#endif
    pcg_solve(s, b, x, ldx, residual);
    return SINEW_OK;
}

sinew_result fps_sim_solve(fps_sim* s, const double* b, double* x, double* residual)
{
    if (residual) *residual = 0.0;
    return solve(s, b, x, s->ns, residual);
}

/* Whether an iteration solves with the right-hand side computed inside the solve: with
 * CHOLMOD's factor and nothing (the joints' volume) to add to b after it is computed. */
static int fused_solve(const fps_sim* s, int volume)
{
#if defined(SINEW_HAVE_CHOLMOD)
    return s->chol && s->ns > 0 && !volume;
#else
    (void)s, (void)volume;
    return 0;
#endif
}

/* Sec. 6: detection at the predicted positions; A + A_col changes only with the pairs. */
static sinew_result step_contacts(fps_sim* s)
{
    if (!s->col) return SINEW_OK;
    double tc = s->p.profile ? ps_seconds() : 0.0;
    int changed = 0;
    sinew_result r = fps_collide_update(s->col, s->x, s->N, &changed);
    if (r == SINEW_OK && changed) {
        sinew_crs a = fps_collide_matrix(s->col);
        uint32_t held = fps_collide_pair_count(s->col) + fps_collide_capsule_count(s->col);
        r = fps_sim_set_collision_matrix(s, held ? &a : NULL);
    }
    if (s->p.profile) s->profile[5] += ps_seconds() - tc;
    return r;
}

/* One local/global iteration (Alg. 1 lines 3-6): the local step, the right-hand side and the
 * solve; times[0..2] gather the phases' times with profile=1. */
static sinew_result step_iteration(fps_sim* s, step_ctx* ctx, double times[3])
{
    const int prof = s->p.profile;
    double a = prof ? ps_seconds() : 0.0;
    if (s->part_jobs)
        sinew_host_parallel_for(&s->host, local_part_range, ctx, SINEW_LDL_PARTS, 1u);
    else
        sinew_host_parallel_for(&s->host, local_range, ctx, s->block_count, 32u);
    /* Sec. 6: the collision projection is part of the local step, its targets from the
     * current iterate (a spring whose target is fixed once per step leaves a penetration
     * that builds up over the steps, and the pairs multiply) */
    s->col_extra = s->col && fps_collide_rhs(s->col, s->x, s->N) ? fps_collide_extra(s->col) : NULL;
    double b = prof ? ps_seconds() : 0.0, c = b;
    /* the joints' volume, judged on the iteration's starting shape, pulls towards its targets
     * on the right-hand side */
    const int volume = s->jvol && fps_jv_judge(s->jvol, s->x, s->skinning);
    if (fused_solve(s, volume)) {
        /* each part's rows of the right-hand side computed by the thread that solves the
         * part (in the solve's time) */
        fps_cholmod_solve_with(s->chol, rhs_rows, s, s->x, s->N);
    } else {
        if (s->part_jobs)
            sinew_host_parallel_for(&s->host, rhs_part_range, ctx, SINEW_LDL_PARTS, 1u);
        else
            FPS_INLINE(rhs_range, ctx, s->ns);
        if (volume) fps_jv_rhs(s->jvol, s->b);
        c = prof ? ps_seconds() : 0.0;
        sinew_result r = solve(s, s->b, s->x, s->N, NULL);
        if (r != SINEW_OK) return r;
    }
    if (prof) {
        double d = ps_seconds();
        times[0] += b - a;
        times[1] += c - b;
        times[2] += d - c;
    }
    return SINEW_OK;
}

/* Alg. 1 line 7, then inelastic contacts; a non-finite result restores the previous shape
 * and clears the velocities. */
static sinew_result step_velocities(fps_sim* s, step_ctx* ctx)
{
    size_t N3 = 3u * (size_t)s->N;
    FPS_INLINE(velocity_range, ctx, s->N);
    if (s->col && s->p.inelastic_contacts)
        fps_collide_stop_separation(s->col, s->x, s->N, s->v, s->p.damping / s->h);
    double check = 0.0;
    for (size_t k = 0; k < N3; ++k) check += s->x[k] + s->v[k];
    if (isfinite(check)) return SINEW_OK;
    memcpy(s->x, s->x_prev, N3 * sizeof(double));
    memset(s->v, 0, N3 * sizeof(double));
    return sinew_host_fail(&s->host, SINEW_ERROR_BACKEND_FAILED,
                           "fps: the step produced a non-finite position; the shape is kept "
                           "and the velocities are cleared");
}

sinew_result fps_sim_step(fps_sim* s)
{
    double t0 = s->p.profile ? ps_seconds() : 0.0;
    if (s->pose_dirty) {
        update_targets(s);
        s->pose_dirty = 0;
    }
    step_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.s = s;
    /* Alg. 1 lines 1-2 (x = s for free vertices, the targets for constrained ones), then the
     * part of the right-hand side that the iterations keep: h^-2 M_s s_s - K_sb x_b. */
    FPS_INLINE(predict_range, &ctx, s->N);
    sinew_result r = step_contacts(s);
    if (r != SINEW_OK) return r;
    FPS_INLINE(rhs_const_range, &ctx, s->ns);
    double times[3] = {0.0, 0.0, 0.0};
    for (uint32_t it = 0; it < s->p.iterations && r == SINEW_OK; ++it)
        r = step_iteration(s, &ctx, times);
    if (r == SINEW_OK) r = step_velocities(s, &ctx);
    if (r != SINEW_OK) return r;
    if (s->p.profile) {
        for (int k = 0; k < 3; ++k) s->profile[k] += times[k];
        s->profile[4] += ps_seconds() - t0;
        s->profile_steps++;
    }
    return SINEW_OK;
}

sinew_result fps_sim_set_collision_matrix(fps_sim* s, const sinew_crs* A_col)
{
    const sinew_host_api* host = &s->host;
    if (A_col && A_col->rows && A_col->rows != s->ns)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps: a collision matrix of %u rows for %u unknowns", A_col->rows,
                               s->ns);
    if (A_col && A_col->rows)
        for (uint32_t i = 0; i < A_col->rows; ++i)
            for (uint32_t e = A_col->ptr[i]; e < A_col->ptr[i + 1]; ++e)
                if (A_col->col[e] >= s->ns || (e > A_col->ptr[i] && A_col->col[e] <= A_col->col[e - 1]))
                    return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                                           "fps: row %u of the collision matrix has an unsorted "
                                           "or out-of-range column", i);
    fps_csr_free(host, &s->col_off);
    fps_csr_free(host, &s->col_sum);
    s->has_col = 0;
    /* Sec. 6: the diagonal goes into A (and J), the rest stays a separate CRS matrix. */
    for (uint32_t i = 0; i < s->ns; ++i) s->ell_val[i] = s->diag0[i];
    sinew_result r = SINEW_OK;
    if (A_col && A_col->rows) {
        uint32_t ns = s->ns;
        s->col_off.rows = ns;
        s->col_off.ptr = (uint32_t*)sinew_host_calloc(host, (size_t)ns + 1u, sizeof(uint32_t));
        size_t nnz = A_col->ptr[ns];
        s->col_off.col = (uint32_t*)sinew_host_calloc(host, nnz ? nnz : 1u, sizeof(uint32_t));
        s->col_off.val = (double*)sinew_host_calloc(host, nnz ? nnz : 1u, sizeof(double));
        if (!s->col_off.ptr || !s->col_off.col || !s->col_off.val) {
            fps_csr_free(host, &s->col_off);
            return oom(s);
        }
        uint32_t k = 0;
        for (uint32_t i = 0; i < ns; ++i) {
            for (uint32_t e = A_col->ptr[i]; e < A_col->ptr[i + 1]; ++e) {
                if (A_col->col[e] == i) {
                    s->ell_val[i] += A_col->val[e];
                } else {
                    s->col_off.col[k] = A_col->col[e];
                    s->col_off.val[k++] = A_col->val[e];
                }
            }
            s->col_off.ptr[i + 1] = k;
        }
        s->has_col = 1;
    }
    for (uint32_t i = 0; i < s->ns; ++i) s->jinv[i] = 1.0 / s->ell_val[i];
#if defined(SINEW_HAVE_CHOLMOD)
    if (s->chol) {
        sinew_crs K = fps_csr_view(&s->K);
        if (s->has_col) {
            r = fps_csr_add(host, &K, A_col, &s->col_sum);
            if (r == SINEW_OK) {
                sinew_crs sum = fps_csr_view(&s->col_sum);
                r = fps_cholmod_refactor(s->chol, &sum);
            }
        } else {
            r = fps_cholmod_refactor(s->chol, &K);
        }
    }
#endif
    return r;
}

void fps_sim_set_skin(fps_sim* s, const float* positions, const float* velocities)
{
    uint32_t N = s->N;
    if (s->col) {
        /* a teleport: the old contacts mean nothing at the new shape */
        int held = fps_collide_pair_count(s->col) + fps_collide_capsule_count(s->col) > 0;
        fps_collide_reset(s->col);
        if (held && fps_sim_set_collision_matrix(s, NULL) != SINEW_OK)
            sinew_host_log(&s->host, SINEW_LOG_ERROR, "fps: dropping the collision matrix failed");
    }
    for (uint32_t i = 0; i < s->n; ++i) {
        uint32_t j = s->inv[i];
        for (int c = 0; c < 3; ++c) {
            s->x[(size_t)c * N + j] = positions[3u * i + c];
            s->v[(size_t)c * N + j] = velocities ? velocities[3u * i + c] : 0.0;
        }
    }
}

void fps_sim_clear_velocities(fps_sim* s)
{
    memset(s->v, 0, 3u * (size_t)s->N * sizeof(double));
}

void fps_sim_tissue_positions(const fps_sim* s, double* out)
{
    for (uint32_t i = 0; i < s->N; ++i)
        for (int c = 0; c < 3; ++c) out[3u * i + c] = s->x[(size_t)c * s->N + s->inv[i]];
}

struct fps_collide* fps_sim_collide(const fps_sim* s)
{
    return s->col;
}

void fps_sim_profile(const fps_sim* s, double seconds[6], uint64_t* steps)
{
    memcpy(seconds, s->profile, sizeof s->profile);
    *steps = s->profile_steps;
}

/* ---- upsampling to the render mesh: ps's normal displacements (2018 Sec. 6, the records of
 * ps_upsample.c and the frame of ps_internal.h); MLS upsampling (2019 Sec. 5) comes here as
 * a second kind of record. ---- */

/* The skin's float positions in the model's numbering (x is in the solver's). */
static void skin_float_range(void* data, uint32_t begin, uint32_t end)
{
    fps_sim* s = (fps_sim*)data;
    uint32_t N = s->N;
    for (uint32_t i = begin; i < end; ++i) {
        uint32_t j = s->inv[i];
        for (int c = 0; c < 3; ++c) s->skin_f[3u * i + c] = (float)s->x[(size_t)c * N + j];
    }
}

void fps_sim_skin_positions(const fps_sim* s, float* out)
{
    uint32_t N = s->N;
    for (uint32_t i = 0; i < s->n; ++i)
        for (int c = 0; c < 3; ++c) out[3u * i + c] = (float)s->x[(size_t)c * N + s->inv[i]];
}

void fps_sim_set_output_blend(fps_sim* s, const float* previous, float fraction)
{
    s->blend_from = previous;
    s->blend_fraction = fraction;
}

void fps_sim_upsample(fps_sim* s, float* positions, size_t position_stride, float* normals,
                      size_t normal_stride)
{
    double t0 = s->p.profile ? ps_seconds() : 0.0;
    FPS_INLINE(skin_float_range, s, s->n);
    ps_mls_upsample_skin(&s->host, s->m, s->mls, s->blend_from, s->blend_fraction, s->skin_f,
                         s->skin_n, s->skinning, positions, position_stride, normals,
                         normal_stride);
    if (s->p.profile) s->profile[3] += ps_seconds() - t0;
}

void fps_sim_set_mls(fps_sim* s, const sinew_mls_weights* mls)
{
    s->mls = mls;
}

const sinew_mls_weights* fps_sim_mls(const fps_sim* s)
{
    return s->mls;
}

void fps_sim_render_velocities(const fps_sim* s, float* velocities)
{
    ps_mls_render_velocities(&s->host, s->m, s->mls, s->v, s->N, s->inv, s->skin_f, velocities);
}

/* ---- the arrays for a device copy (fps_internal.h, the fps-cuda plugin) ---- */

void fps_sim_arrays_get(fps_sim* s, fps_sim_arrays* out)
{
    memset(out, 0, sizeof *out);
    out->n = s->n;
    out->N = s->N;
    out->ns = s->ns;
    out->prism_count = s->prism_count;
    out->h = s->h;
    out->damping = s->p.damping;
    out->perm = s->perm;
    out->inv = s->inv;
    out->mass_h2 = s->mass_h2;
    out->prisms = s->prisms;
    out->gather_ptr = s->gather_ptr;
    out->gather = s->gather;
    out->A = s->A;
    out->jinv = s->jinv;
    out->Ksb = fps_csr_view(&s->Ksb);
    out->x = s->x;
    out->v = s->v;
    out->target = s->target;
    out->skinning = s->skinning;
}

void fps_sim_update_targets(fps_sim* s)
{
    if (!s->pose_dirty) return;
    update_targets(s);
    s->pose_dirty = 0;
}
