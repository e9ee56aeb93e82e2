/* Projective dynamics on the tissue mesh (projective skinning Sec. 4 and 4.1; the time step of
 * the 2019 paper, Sec. 3 and Alg. 1), and the upsampling to the render mesh (Sec. 6).
 * SPDX-License-Identifier: MIT
 *
 * Energy of one time step (eq. 4 with the potentials of eq. 5):
 *   E(X, R) = sum_i m_i / (2 h^2) |x_i - s_i|^2                       (mass, s = x + h v)
 *           + sum_t w_t / 2 |A_t S_t X - R_p(t)^T|_F^2                (strain, Sec. 4.1)
 *           + sum_a w_a / 2 |x_a - T_a q_a|^2                         (anchors of base vertices)
 * with w_t = strain_weight * |V_t| (Chao et al.'s potential, eq. 7) and one rotation R_p per
 * prism shared by its 3 tets (Sec. 6). For fixed X the prism's best rotation is the rotation
 * closest to sum_t w_t F_t, the weighted mean deformation gradient of the prism; for fixed R
 * the minimiser solves eq. (6). Alternating the two never increases E, and the precomputed
 * G_p = sum_t w_t A_t (over the prism's 6 vertices) serves both: G_p X_p = sum_t w_t F_t^T,
 * and G_p^T R^T is the prism's share of the right-hand side of eq. (6).
 *
 * The global matrix h^-2 M + sum_t w_t S^T A^T A S + W_anchor is constant: it is factored once
 * with CHOLMOD as a simplicial LDL^T with AMD ordering (faster to solve than a supernodal
 * factor on these shell-like meshes: README.md, "Figures"), and every iteration solves the
 * three coordinates at once with that factor, its elimination tree cut into two parts that two
 * threads substitute at the same time (sinew_ldl.h). Only CHOLMOD's Core and Cholesky modules
 * are used (analyze, factorize and Core utilities). */
#include <float.h>
#include <math.h>
#include <string.h>

#include <cholmod.h>

#include "polar3.h"
#include "polar3_batch.h"
#include "sinew_ldl_cholmod.h"
#include "volume3.h"
#include "fps_collide.h"
#include "ps_internal.h"
#include "ps_joint_volume.h"
#include "ps_local.h"
#include "ps_mls.h"

struct ps_sim {
    sinew_host_api host;
    const ps_model* m;
    ps_params p;
    uint32_t n, N;
    double h, inv_h2;
    double* mass;           /* N */
    double* anchor_w;       /* N; 0: not anchored */
    uint32_t* anchor_joint; /* N */
    uint32_t* anchored;     /* indices of anchored vertices */
    uint32_t anchored_count;
    /* prisms, in blocks of PS_LOCAL_BLOCK (structure of arrays, see ps_local.h) */
    uint32_t prism_count;
    uint32_t block_count;
    size_t stride;      /* prism_count rounded up to whole blocks */
    uint32_t* prism_tri; /* the model triangle of each prism slot */
    uint32_t* prism_v;  /* 6 per prism: a, b, c, a', b', c' (a < b < c) */
    double* prism_w;    /* sum_t w_t per prism */
    int32_t* pv_soa;    /* 6 x stride */
    float* G_soa;       /* 18 x stride */
    float* inv_w;       /* stride: 1 / sum_t w_t; 0 for a prism whose tets are all left out */
    float* F_soa;       /* 9 x stride: each prism's F, then (in place) its R */
    float* R_soa;       /* 9 x stride with the volume term: R, then the blended target */
    float volume_keep, volume_lo, volume_hi; /* the volume term's blend (volume3.h) */
    double tissue_weight; /* strain_weight + volume_weight: the stiffness in the matrix */
    float* contrib;     /* 18 x stride: R_p g_k for each slot k */
    ps_local_gradient_fn gradient;
    ps_local_project_fn project;
    sinew_polar3_batch_fn polar;
    sinew_simd simd;
    uint32_t* gather_offsets; /* N + 1: where each vertex finds its shares in contrib */
    uint32_t* gather;         /* 3 slot stride + prism */
    /* The solver's parts (sinew_ldl.h): part k's prisms fill blocks part_blocks[k] ..
     * part_blocks[k + 1] - 1 and its vertices (the top's with part 0) are part_rows[
     * part_row_start[k] .. part_row_start[k + 1] - 1]. A host of at most SINEW_LDL_PARTS
     * threads runs each part's local step and right-hand side as one job (part_jobs), so a
     * thread reads back what it wrote itself. */
    uint32_t part_blocks[SINEW_LDL_PARTS + 1];
    uint32_t part_row_start[SINEW_LDL_PARTS + 1];
    uint32_t* part_rows;
    bool part_jobs;
    /* CHOLMOD */
    cholmod_common cc;
    int cc_started;
    cholmod_sparse* K;
    cholmod_factor* L;
    cholmod_dense* B; /* the right-hand side */
    /* Sec. 5.3: the second matrices, [0] with a collision constraint on every candidate vertex
     * of the local collisions, [1] also on every other skin vertex for the global ones (used in
     * a step that has global contacts); NULL where not built. */
    ps_collide* col;
    cholmod_sparse* K2[2]; /* until they are factored */
    cholmod_factor* L2[2];
    cholmod_common cc2[2]; /* their factorizations', during factor_numeric only */
    /* The solves with L, L2[0] and L2[1] (NULL where not built); the CHOLMOD factors are freed
     * once these hold their copies. */
    sinew_ldl* solver[3];
    int factor_ok[3];
    int global_step;    /* the step has global contacts: the iterations use L2[1] */
    double* col_w;      /* per constrained vertex (ps_collide_vertices order) */
    /* The 2019 paper's global collisions (Sec. 6) as point constraints of K2[1]: every skin
     * vertex without a local constraint carries one (weight glob_w), projected onto its
     * contact or, without one, onto its current position. */
    fps_collide* glob;
    double* glob_w;     /* n: 0 for the vertices of the local constraints */
    double* glob_t;     /* N x 3: the iterate with the contacts' targets */
    /* The joints' volume (ps_joint_volume.c) through the same point constraints: a step whose
     * first half leaves a joint region short of volume uses K2[1] with its targets. */
    ps_joint_volume* jvol;
    int volume_step;
    /* state: N x 3 columns (x coordinates, then y, then z), as CHOLMOD's dense matrices */
    double* x;
    double* v;
    double* pred;
    double* x_prev;
    double* rhs_const;
    double* target;
    float* skinning; /* 16 per joint, the pose of the anchors */
    int pose_dirty;
    int snap; /* set_state: anchored vertices jump to their targets at the next step */
    float* skin_f; /* upsampling scratch: 3 per skin vertex */
    float* skin_n;
    const sinew_mls_weights* mls; /* MLS upsampling (2019 Sec. 5); NULL: normal displacement */
    const float* blend_from; /* interpolated output: the skin it blends from (NULL: none) */
    float blend_fraction;    /* and how far towards the current skin */
    ps_slide* slide; /* skin sliding (Sec. 4.2); NULL when off or no record */
    double profile[5]; /* local, right-hand side, solve, upsampling, whole step */
    /* With collisions (Sec. 5): the pose's clamp of the base targets, the angle test and the
     * projections; and the solves of the second half (with the second factor), both also
     * inside the figures above. */
    double profile_collide[2];
    uint64_t profile_steps;
};

/* The local step's kernels for a `simd` request: AUTO is the widest this CPU runs (SSE runs the
 * scalar kernels: there is no SSE kernel); an explicit AVX2 or AVX512 the CPU lacks is refused. */
sinew_result ps_simd_resolve(const sinew_host_api* host, sinew_simd* simd)
{
    if (*simd == SINEW_SIMD_AUTO) {
        sinew_simd best = sinew_simd_best();
        *simd = best == SINEW_SIMD_SSE41 ? SINEW_SIMD_SCALAR : best;
#if !defined(SINEW_SKIN_X86)
        *simd = SINEW_SIMD_SCALAR;
#endif
        return SINEW_OK;
    }
    if (*simd == SINEW_SIMD_SCALAR) return SINEW_OK;
#if defined(SINEW_SKIN_X86)
    if (sinew_simd_supported(*simd)) return SINEW_OK;
#endif
    return sinew_host_fail(host, SINEW_ERROR_BACKEND_UNAVAILABLE,
                           "ps: simd=%s is not available on this CPU or in this build",
                           sinew_simd_name(*simd));
}

void ps_sim_destroy(ps_sim* s)
{
    if (!s) return;
    sinew_host_api host = s->host;
    if (s->cc_started) {
        cholmod_free_sparse(&s->K, &s->cc);
        cholmod_free_factor(&s->L, &s->cc);
        for (int k = 0; k < 2; ++k) {
            cholmod_free_factor(&s->L2[k], &s->cc);
            cholmod_free_sparse(&s->K2[k], &s->cc);
        }
        cholmod_free_dense(&s->B, &s->cc);
        cholmod_finish(&s->cc);
    }
    for (int k = 3; k-- > 0;) sinew_ldl_destroy(s->solver[k]); /* [0] last: the others share it */
    ps_collide_destroy(s->col);
    fps_collide_destroy(s->glob);
    ps_joint_volume_destroy(&s->host, s->jvol);
    ps_slide_destroy(s->slide);
    sinew_host_free(&host, s->col_w);
    sinew_host_free(&host, s->glob_w);
    sinew_host_free(&host, s->glob_t);
    sinew_host_free(&host, s->prism_tri);
    sinew_host_free(&host, s->part_rows);
    void* arrays[] = {s->mass,     s->anchor_w,  s->anchor_joint,   s->anchored, s->prism_v,
                      s->prism_w,   s->pv_soa,         s->G_soa,    s->inv_w,
                      s->F_soa,    s->contrib,   s->gather_offsets, s->gather,   s->x,
                      s->v,        s->pred,      s->x_prev,         s->rhs_const, s->target,
                      s->skinning, s->skin_f,    s->skin_n,         s->R_soa};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) sinew_host_free(&host, arrays[i]);
    sinew_host_free(&host, s);
}

static sinew_result ps_cholmod_fail(ps_sim* s, const char* what)
{
    return sinew_host_fail(&s->host, SINEW_ERROR_BACKEND_FAILED,
                           "ps: CHOLMOD %s failed (status %d) for %u unknowns", what, s->cc.status,
                           s->N);
}

/* Entry (a, b), a <= b, of tet t's part of eq. (6): w_t (A_t^T A_t)_ab. */
static double tet_entry(const ps_sim* s, uint32_t t, int a, int b)
{
    const double* A = s->m->tet_A + 12u * t;
    double w = s->tissue_weight * fabs(s->m->tet_volume[t]);
    double sum = 0.0;
    for (int r = 0; r < 3; ++r) sum += A[4 * r + a] * A[4 * r + b];
    return w * sum;
}

/* Column j of the upper triangle: its rows i <= j into rows[0 .. *count) (ascending) and,
 * unless acc is NULL (counting only), their values into acc[i]. The mass and anchor come
 * first, then each tet at j in tet order, so every entry is the sum a triplet matrix in that
 * order gives (mark: per vertex the last column + 1 that listed it). */
static void column_entries(const ps_sim* s, const ps_vertex_tets* vt, uint32_t j, double* acc,
                           uint32_t* mark, uint32_t* rows, uint32_t* count)
{
    uint32_t k = 0;
    if (acc) acc[j] = s->mass[j] * s->inv_h2 + s->anchor_w[j];
    mark[j] = j + 1u;
    rows[k++] = j;
    for (uint32_t e = vt->offsets[j]; e < vt->offsets[j + 1]; ++e) {
        uint32_t t = vt->corners[e] / 4u;
        int cj = (int)(vt->corners[e] % 4u);
        const uint32_t* tv = s->m->tets + 4u * t;
        for (int c = 0; c < 4; ++c) {
            uint32_t i = tv[c];
            if (i > j) continue;
            double v = acc ? tet_entry(s, t, c < cj ? c : cj, c < cj ? cj : c) : 0.0;
            ps_gather_entry(i, j + 1u, v, acc, mark, rows, &k);
        }
    }
    if (acc) ps_sort_short(rows, k);
    *count = k;
}

/* The upper triangle of the system matrix of eq. (6), column by column (column_entries): its
 * size in a first pass, its entries in a second; NULL when memory runs out. */
static cholmod_sparse* system_matrix(ps_sim* s, const ps_vertex_tets* vt, double* acc,
                                     uint32_t* mark, uint32_t* rows)
{
    uint32_t N = s->N, count;
    size_t nnz = 0;
    for (uint32_t j = 0; j < N; ++j) {
        column_entries(s, vt, j, NULL, mark, rows, &count);
        nnz += count;
    }
    cholmod_sparse* K = cholmod_allocate_sparse(N, N, nnz, 1, 1, 1, CHOLMOD_REAL, &s->cc);
    if (!K) return NULL;
    int* kp = (int*)K->p;
    int* ki = (int*)K->i;
    double* kx = (double*)K->x;
    memset(mark, 0, (size_t)N * sizeof(uint32_t));
    size_t e = 0;
    for (uint32_t j = 0; j < N; ++j) {
        kp[j] = (int)e;
        column_entries(s, vt, j, acc, mark, rows, &count);
        for (uint32_t k = 0; k < count; ++k, ++e) {
            ki[e] = (int)rows[k];
            kx[e] = acc[rows[k]];
        }
    }
    kp[N] = (int)e;
    return K;
}

/* Assembles the upper triangle of the system matrix of eq. (6) and analyses it (AMD ordering,
 * the factor's pattern); factor_numeric computes the factor. */
static sinew_result assemble_system(ps_sim* s)
{
    uint32_t N = s->N;
    ps_vertex_tets vt;
    sinew_result r = ps_vertex_tets_build(&s->host, s->m, &vt);
    if (r != SINEW_OK) return r;
    double* acc = (double*)sinew_host_alloc(&s->host, (size_t)N * sizeof(double));
    uint32_t* mark = (uint32_t*)sinew_host_calloc(&s->host, N, sizeof(uint32_t));
    uint32_t* rows = (uint32_t*)sinew_host_alloc(&s->host, (size_t)N * sizeof(uint32_t));
    if (acc && mark && rows) s->K = system_matrix(s, &vt, acc, mark, rows);
    ps_vertex_tets_free(&s->host, &vt);
    sinew_host_free(&s->host, acc);
    sinew_host_free(&s->host, mark);
    sinew_host_free(&s->host, rows);
    if (!acc || !mark || !rows)
        return sinew_host_fail(&s->host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory for the "
                               "system matrix of %u vertices", N);
    if (!s->K) return ps_cholmod_fail(s, "allocate_sparse");
    s->L = cholmod_analyze(s->K, &s->cc);
    if (!s->L) return ps_cholmod_fail(s, "analyze");
    s->B = cholmod_allocate_dense(N, 3, N, CHOLMOD_REAL, &s->cc);
    if (!s->B) return ps_cholmod_fail(s, "allocate_dense");
    return SINEW_OK;
}

/* The diagonal entry of column v of the upper triangle (the column's last entry), or -1. */
static int diagonal_entry(const cholmod_sparse* K, int v)
{
    const int* cp = (const int*)K->p;
    const int* ri = (const int*)K->i;
    int e = cp[v + 1] - 1;
    while (e >= cp[v] && ri[e] != v) --e;
    return e >= cp[v] ? e : -1;
}

/* Adds w[k] = rel * K_vv to the diagonal of K2 for each listed vertex. */
static sinew_result add_point_weights(ps_sim* s, cholmod_sparse* K2, const uint32_t* verts,
                                      uint32_t count, double rel, double* w)
{
    double* kx = (double*)K2->x;
    for (uint32_t k = 0; k < count; ++k) {
        int e = diagonal_entry(K2, (int)verts[k]);
        if (e < 0)
            return sinew_host_fail(&s->host, SINEW_ERROR_BACKEND_FAILED,
                                   "ps: vertex %u has no diagonal entry in the system matrix",
                                   verts[k]);
        w[k] = rel * kx[e];
    }
    for (uint32_t k = 0; k < count; ++k) kx[diagonal_entry(K2, (int)verts[k])] += w[k];
    return SINEW_OK;
}

/* The local collisions' constraints (Sec. 5.3): w_v = collision_weight * K_vv on every vertex
 * of a candidate pair (relative to the vertex's own stiffness, like the anchors). */
static sinew_result local_constraints(ps_sim* s, cholmod_sparse* K2)
{
    sinew_result r = ps_collide_create(&s->host, s->m, &s->col);
    if (r != SINEW_OK) return r;
    ps_collide_use_angle_test(s->col, s->p.collision_angle_test);
    uint32_t vc = ps_collide_vertex_count(s->col);
    s->col_w = (double*)sinew_host_calloc(&s->host, vc ? vc : 1u, sizeof(double));
    if (!s->col_w) return sinew_host_fail(&s->host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
    return add_point_weights(s, K2, ps_collide_vertices(s->col), vc, s->p.collision_weight,
                             s->col_w);
}

/* Local-collision vertices within this many joint radii of their pair's joint are free of
 * every limb capsule, which would fight the joint's plane there (fps's joint reach,
 * backends/fps/README.md). */
#define PS_CAPSULE_FREE_REACH 3.3
/* Beyond it, a vertex is free of the capsule of its fold's other bone when both bones are at
 * least this many joint radii long (a limb's fold, the elbow or the knee, which the plane
 * holds); at a short bone's joint (the shoulder after the clavicle, the hip) that capsule
 * holds the other side out, the armpit's wall against the upper arm. */
#define PS_CAPSULE_FOLD_BONES 6.0

static double bone_length(const ps_model* m, uint32_t b)
{
    double a[3], c[3];
    ps_joint_position(m, m->bones[b].end[0], a);
    ps_joint_position(m, m->bones[b].end[1], c);
    double d[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    return sqrt(ps_dot3(d, d));
}

/* Marks in `local` (n bytes) the skin vertices of the local collisions' pairs (1; 2 within
 * PS_CAPSULE_FREE_REACH joint radii of the pair's joint) and frees the vertices of a limb's
 * fold of the capsule of the fold's other bone. */
static void mark_local_vertices(ps_sim* s, uint8_t* local)
{
    const ps_model* m = s->m;
    for (uint32_t k = 0; k < m->collision_pair_count; ++k) {
        const ps_collision_pair* cp = m->collision_pairs + k;
        uint32_t rep = m->joint_rep[cp->joint];
        double jc[3], r = m->joint_radius[rep], reach = PS_CAPSULE_FREE_REACH * r;
        ps_joint_position(m, rep, jc);
        int fold = bone_length(m, cp->bone_i) >= PS_CAPSULE_FOLD_BONES * r &&
                   bone_length(m, cp->bone_j) >= PS_CAPSULE_FOLD_BONES * r;
        const uint32_t ends[2] = {cp->i, cp->j}, other[2] = {cp->bone_j, cp->bone_i};
        for (int e = 0; e < 2; ++e) {
            uint32_t v = ends[e];
            if (v >= m->n) continue;
            double d[3] = {m->rest[3u * v] - jc[0], m->rest[3u * v + 1] - jc[1],
                           m->rest[3u * v + 2] - jc[2]};
            uint8_t mark = ps_dot3(d, d) <= reach * reach ? 2u : 1u;
            if (mark > local[v]) local[v] = mark;
            if (fold && s->glob) fps_collide_free_of_capsule(s->glob, v, other[e]);
        }
    }
}

/* The point constraints' weights: glob_w = global_weight * K_vv on every skin vertex that the
 * local collisions leave free; the local ones near their joint are freed of the capsules. */
static sinew_result point_weights(ps_sim* s, cholmod_sparse* K2, uint8_t* local, uint32_t* list,
                                  double* w)
{
    uint32_t n = s->n, count = 0, near = 0;
    if (s->col) mark_local_vertices(s, local);
    for (uint32_t v = 0; v < n; ++v)
        if (local[v] == 2u) list[near++] = v;
    if (s->glob) fps_collide_free_of_capsules(s->glob, list, near);
    for (uint32_t v = 0; v < n; ++v)
        if (!local[v]) list[count++] = v;
    sinew_result r = add_point_weights(s, K2, list, count, s->p.global_weight, w);
    for (uint32_t k = 0; k < count && r == SINEW_OK; ++k) s->glob_w[list[k]] = w[k];
    return r;
}

/* The global collisions of the 2019 paper (Sec. 6, fps_collide.c): the detection state. */
static sinew_result global_detection(ps_sim* s)
{
    fps_collide_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.model = s->m;
    cd.free_count = s->N;
    cd.weight = 1.0; /* the edge springs' weight, which ps does not use */
    cd.margin = 0.2; /* fps's margin and limb capsules (backends/fps/README.md) */
    cd.skinning = s->skinning;
    return fps_collide_create(&s->host, &cd, &s->glob);
}

/* The point constraints of K2[1], which the global contacts and the joints' volume project
 * onto: their weights and the targets' room. */
static sinew_result point_constraints(ps_sim* s, cholmod_sparse* K2)
{
    uint32_t n = s->n;
    sinew_result r;
    s->glob_w = (double*)sinew_host_calloc(&s->host, n, sizeof(double));
    s->glob_t = (double*)sinew_host_calloc(&s->host, 3u * (size_t)s->N, sizeof(double));
    uint32_t* list = (uint32_t*)sinew_host_calloc(&s->host, n, sizeof(uint32_t));
    double* w = (double*)sinew_host_calloc(&s->host, n, sizeof(double));
    uint8_t* local = (uint8_t*)sinew_host_calloc(&s->host, n, 1u);
    if (s->glob_w && s->glob_t && list && w && local)
        r = point_weights(s, K2, local, list, w);
    else
        r = sinew_host_fail(&s->host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
    sinew_host_free(&s->host, list);
    sinew_host_free(&s->host, w);
    sinew_host_free(&s->host, local);
    return r;
}

/* Sec. 5.3: the second system matrices, the first plus the collision constraints' weights on
 * the diagonal: K2[0] the local collisions', K2[1] K2[0]'s (or the first's) plus the point
 * constraints of the global contacts and the joints' volume. Same pattern as the first, so
 * their factors start as copies of the first one's analysis (same AMD ordering, simplicial
 * LDL^T) and factor_numeric computes them all. */
static sinew_result collision_system(ps_sim* s)
{
    sinew_result r = SINEW_OK;
    if (s->p.collisions && s->m->collision_pair_count > 0) {
        s->K2[0] = cholmod_copy_sparse(s->K, &s->cc);
        if (!s->K2[0]) return ps_cholmod_fail(s, "copy_sparse");
        r = local_constraints(s, s->K2[0]);
    }
    if (r == SINEW_OK && s->p.volume.joint > 0.0)
        r = ps_joint_volume_create(&s->host, s->m, s->p.volume.joint_reach, &s->jvol);
    if (r == SINEW_OK && (s->p.global_collisions || s->jvol)) {
        s->K2[1] = cholmod_copy_sparse(s->K2[0] ? s->K2[0] : s->K, &s->cc);
        if (!s->K2[1]) return ps_cholmod_fail(s, "copy_sparse");
        if (s->p.global_collisions) r = global_detection(s);
        if (r == SINEW_OK) r = point_constraints(s, s->K2[1]);
    }
    for (int k = 0; k < 2 && r == SINEW_OK; ++k) {
        if (!s->K2[k]) continue;
        s->L2[k] = cholmod_copy_factor(s->L, &s->cc);
        if (!s->L2[k]) return ps_cholmod_fail(s, "copy_factor");
    }
    return r;
}

/* Job k of factor_numeric: k = 0 the system's factor, k = 1, 2 the collision matrices', each
 * with its own CHOLMOD common (the numeric factorizations share nothing but the pattern). */
static void factor_range(void* data, uint32_t begin, uint32_t end)
{
    ps_sim* s = (ps_sim*)data;
    for (uint32_t k = begin; k < end; ++k) {
        cholmod_common* cc = k == 0 ? &s->cc : &s->cc2[k - 1u];
        cholmod_sparse* K = k == 0 ? s->K : s->K2[k - 1u];
        cholmod_factor* L = k == 0 ? s->L : s->L2[k - 1u];
        s->factor_ok[k] = !L || (cholmod_factorize(K, L, cc) && cc->status == CHOLMOD_OK);
    }
}

/* The numeric factors of the analysed matrices, all at once over the job system. */
static sinew_result factor_numeric(ps_sim* s)
{
    for (int k = 0; k < 2; ++k) {
        if (!s->L2[k]) continue;
        cholmod_start(&s->cc2[k]);
        s->cc2[k].print = 0;
        s->cc2[k].supernodal = CHOLMOD_SIMPLICIAL;
        s->cc2[k].final_ll = 0;
    }
    s->factor_ok[0] = s->factor_ok[1] = s->factor_ok[2] = 0;
    sinew_host_parallel_for(&s->host, factor_range, s, 3u, 1u);
    for (int k = 0; k < 2; ++k) {
        if (s->L2[k]) cholmod_finish(&s->cc2[k]);
        cholmod_free_sparse(&s->K2[k], &s->cc);
    }
    if (!s->factor_ok[0]) return ps_cholmod_fail(s, "factorize");
    if (!s->factor_ok[1] || !s->factor_ok[2])
        return ps_cholmod_fail(s, "factorize (collision matrix)");
    sinew_result r = SINEW_OK;
    for (int k = 0; k < 3 && r == SINEW_OK; ++k) {
        cholmod_factor** L = k == 0 ? &s->L : &s->L2[k - 1];
        if (!*L) continue;
        r = sinew_ldl_from_cholmod(&s->host, s->solver[0], *L, &s->solver[k]);
        /* the solver holds its own copy; nothing refactors */
        cholmod_free_factor(L, &s->cc);
    }
    return r;
}

/* The simulation's sizes and constants: the time step, the prism blocks of the local step and
 * the volume term's blend (volume3.h). */
static void sim_init(ps_sim* s, const sinew_host_api* host, const ps_model* m,
                     const ps_params* params)
{
    s->host = *host;
    s->m = m;
    s->p = *params;
    s->n = m->n;
    s->N = 2u * m->n;
    s->h = params->timestep;
    s->inv_h2 = 1.0 / (params->timestep * params->timestep);
    s->prism_count = m->triangle_count;
    s->block_count = (s->prism_count + PS_LOCAL_BLOCK - 1u) / PS_LOCAL_BLOCK;
    s->stride = (size_t)s->block_count * PS_LOCAL_BLOCK;
    ps_volume_blend(&params->volume, params->strain_weight, &s->volume_keep, &s->volume_lo,
                    &s->volume_hi);
    s->tissue_weight = params->strain_weight + params->volume.weight;
    s->simd = params->simd;
}

/* The room of the strided per-prism arrays: whole blocks, at least one. */
static size_t sim_prism_room(const ps_sim* s)
{
    return s->stride ? s->stride : PS_LOCAL_BLOCK;
}

/* Allocates the per-vertex weights and the per-prism data of the local step (zeroed); the
 * caller checks them all at once. */
static void sim_alloc_prisms(ps_sim* s)
{
    const sinew_host_api* host = &s->host;
    uint32_t N = s->N, pc = s->prism_count;
    size_t S = sim_prism_room(s);
    s->mass = (double*)sinew_host_calloc(host, N, sizeof(double));
    s->anchor_w = (double*)sinew_host_calloc(host, N, sizeof(double));
    s->anchor_joint = (uint32_t*)sinew_host_calloc(host, N, sizeof(uint32_t));
    s->anchored = (uint32_t*)sinew_host_calloc(host, N, sizeof(uint32_t));
    s->prism_tri = (uint32_t*)sinew_host_calloc(host, pc ? pc : 1u, sizeof(uint32_t));
    s->prism_v = (uint32_t*)sinew_host_calloc(host, pc ? pc : 1u, 6u * sizeof(uint32_t));
    s->prism_w = (double*)sinew_host_calloc(host, pc ? pc : 1u, sizeof(double));
    s->pv_soa = (int32_t*)sinew_host_calloc(host, S, 6u * sizeof(int32_t));
    s->G_soa = (float*)sinew_host_calloc(host, S, 18u * sizeof(float));
    s->inv_w = (float*)sinew_host_calloc(host, S, sizeof(float));
    s->F_soa = (float*)sinew_host_calloc(host, S, 9u * sizeof(float));
    if (s->volume_keep < 1.0f) s->R_soa = (float*)sinew_host_calloc(host, S, 9u * sizeof(float));
    s->contrib = (float*)sinew_host_calloc(host, S, 18u * sizeof(float));
}

/* Resolves the `simd` request and picks the local step's kernels and the batched polar
 * decomposition for it. */
static sinew_result sim_pick_kernels(ps_sim* s)
{
    sinew_result r = ps_simd_resolve(&s->host, &s->simd);
    if (r != SINEW_OK) return r;
    s->gradient = ps_local_gradient_scalar;
    s->project = ps_local_project_scalar;
#if defined(SINEW_SKIN_X86)
    if (s->simd == SINEW_SIMD_AVX512) {
        s->gradient = ps_local_gradient_avx512;
        s->project = ps_local_project_avx512;
    } else if (s->simd == SINEW_SIMD_AVX2) {
        s->gradient = ps_local_gradient_avx2;
        s->project = ps_local_project_avx2;
    }
#endif
    s->polar = sinew_polar3_batch_kernel(s->simd);
    return SINEW_OK;
}

/* Allocates the right-hand side's gather lists, the state columns, the pose and the
 * upsampling scratch (zeroed); the caller checks them all at once. */
static void sim_alloc_state(ps_sim* s)
{
    const sinew_host_api* host = &s->host;
    uint32_t N = s->N, pc = s->prism_count;
    size_t N3 = 3u * (size_t)N;
    s->gather_offsets = (uint32_t*)sinew_host_calloc(host, N + 1u, sizeof(uint32_t));
    s->gather = (uint32_t*)sinew_host_calloc(host, pc ? 6u * (size_t)pc : 1u, sizeof(uint32_t));
    s->part_rows = (uint32_t*)sinew_host_calloc(host, N, sizeof(uint32_t));
    s->x = (double*)sinew_host_calloc(host, N3, sizeof(double));
    s->v = (double*)sinew_host_calloc(host, N3, sizeof(double));
    s->pred = (double*)sinew_host_calloc(host, N3, sizeof(double));
    s->x_prev = (double*)sinew_host_calloc(host, N3, sizeof(double));
    s->rhs_const = (double*)sinew_host_calloc(host, N3, sizeof(double));
    s->target = (double*)sinew_host_calloc(host, N3, sizeof(double));
    s->skinning = (float*)sinew_host_calloc(host, s->m->joint_count, 16u * sizeof(float));
    s->skin_f = (float*)sinew_host_calloc(host, s->n ? s->n : 1u, 3u * sizeof(float));
    s->skin_n = (float*)sinew_host_calloc(host, s->n ? s->n : 1u, 3u * sizeof(float));
}

/* Whether every array of sim_alloc_prisms and sim_alloc_state is there (and the kernels). */
static bool sim_allocated(const ps_sim* s)
{
    return s->mass && s->anchor_w && s->anchor_joint && s->anchored && s->prism_tri && s->prism_v &&
           s->prism_w && s->pv_soa && s->G_soa && s->inv_w && s->F_soa &&
           !(s->volume_keep < 1.0f && !s->R_soa) && s->contrib && s->polar &&
           s->gather_offsets && s->gather && s->part_rows && s->x && s->v && s->pred && s->x_prev &&
           s->rhs_const && s->target && s->skinning && s->skin_f && s->skin_n;
}

/* Per-prism G_p and the diagonal of the strain part of the matrix (Sec. 4.1, one rotation per
 * prism as in Sec. 6); also each vertex's quarter of its tets' volumes. */
static void sim_prism_data(ps_sim* s, double* strain_diag, double* volume)
{
    const ps_model* m = s->m;
    size_t S = sim_prism_room(s);
    for (uint32_t p = 0; p < s->prism_count; ++p) {
        uint32_t* v = s->prism_v + 6u * p;
        ps_prism_slots(m, s->prism_tri[p], v);
        double Gd[18];
        double wsum = ps_prism_G(m, s->prism_tri[p], v, s->p.strain_weight + s->p.volume.weight,
                                 Gd, strain_diag, volume);
        s->prism_w[p] = wsum;
        for (int q = 0; q < 18; ++q) s->G_soa[(size_t)q * S + p] = (float)Gd[q];
        for (int k = 0; k < 6; ++k) s->pv_soa[(size_t)k * S + p] = (int32_t)v[k];
        s->inv_w[p] = wsum > 0.0 ? (float)(1.0 / wsum) : 0.0f;
    }
}

/* Lumped masses: a quarter of each tet's volume per vertex, density `mass` in units of the
 * tissue thickness (README.md, `mass`, explains the scaling). Vertices without volume get a
 * small mass so that the matrix stays positive definite. Returns the mean strain diagonal,
 * which the anchors are relative to. */
static double sim_masses(ps_sim* s, const double* strain_diag, const double* volume)
{
    const ps_model* m = s->m;
    uint32_t N = s->N;
    double l2 = m->thickness * m->thickness;
    double msum = 0.0, dsum = 0.0;
    uint32_t dcount = 0;
    for (uint32_t i = 0; i < N; ++i) {
        s->mass[i] = s->p.mass * volume[i] / l2;
        msum += s->mass[i];
        if (strain_diag[i] > 0.0) {
            dsum += strain_diag[i];
            ++dcount;
        }
    }
    double mmean = N ? msum / N : 0.0;
    if (!(mmean > 0.0)) mmean = s->p.mass > 0.0 ? s->p.mass : 1.0;
    for (uint32_t i = 0; i < N; ++i) s->mass[i] = fmax(s->mass[i], 1e-3 * mmean);
    return dcount ? dsum / dcount : mmean * s->inv_h2;
}

/* Anchors: every base vertex, plus skin vertices that no tet holds (isolated vertices,
 * or all their tets degenerate), which then move rigidly with their bone. */
static void sim_anchors(ps_sim* s, const double* strain_diag, double dmean)
{
    const ps_model* m = s->m;
    for (uint32_t i = 0; i < s->N; ++i) {
        bool base = i >= s->n;
        if (!base && strain_diag[i] > 0.0) continue;
        s->anchor_w[i] = s->p.anchor_weight * fmax(strain_diag[i], dmean);
        s->anchor_joint[i] = m->bones[m->vertex_bone[i]].joint;
        s->anchored[s->anchored_count++] = i;
    }
}

/* The rest data of the prisms, the masses and the anchors, with the strain diagonal and the
 * vertex volumes as scratch. */
static sinew_result sim_rest_data(ps_sim* s)
{
    const sinew_host_api* host = &s->host;
    double* strain_diag = (double*)sinew_host_calloc(host, s->N, sizeof(double));
    double* volume = (double*)sinew_host_calloc(host, s->N, sizeof(double));
    sinew_result r = SINEW_OK;
    if (!strain_diag || !volume) {
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory for a tissue "
                            "mesh of %u vertices", s->N);
    } else {
        for (uint32_t p = 0; p < s->prism_count; ++p) s->prism_tri[p] = p;
        sim_prism_data(s, strain_diag, volume);
        sim_anchors(s, strain_diag, sim_masses(s, strain_diag, volume));
    }
    sinew_host_free(host, strain_diag);
    sinew_host_free(host, volume);
    return r;
}

/* Which prism slots feed each vertex's right-hand side (compressed rows of contrib
 * offsets). */
static sinew_result sim_gather(ps_sim* s)
{
    uint32_t N = s->N, pc = s->prism_count;
    size_t S = sim_prism_room(s);
    memset(s->gather_offsets, 0, (N + 1u) * sizeof(uint32_t));
    for (uint32_t p = 0; p < pc; ++p)
        for (int k = 0; k < 6; ++k) s->gather_offsets[s->prism_v[6u * p + k] + 1]++;
    for (uint32_t i = 0; i < N; ++i) s->gather_offsets[i + 1] += s->gather_offsets[i];
    uint32_t* cursor = (uint32_t*)sinew_host_calloc(&s->host, N + 1u, sizeof(uint32_t));
    if (!cursor) return sinew_host_fail(&s->host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
    memcpy(cursor, s->gather_offsets, (N + 1u) * sizeof(uint32_t));
    for (uint32_t p = 0; p < pc; ++p)
        for (uint32_t k = 0; k < 6; ++k)
            s->gather[cursor[s->prism_v[6u * p + k]]++] = (uint32_t)(3u * k * S + p);
    sinew_host_free(&s->host, cursor);
    return SINEW_OK;
}

/* The solver part that holds most of triangle tri's six prism vertices. */
static uint32_t prism_part(const ps_sim* s, uint32_t tri)
{
    uint32_t v[6];
    ps_prism_slots(s->m, tri, v);
    return sinew_ldl_majority_part(s->solver[0], v, 6u);
}

/* Orders the prism slots and the vertices by the solver's parts (part_blocks, part_rows) and
 * rebuilds the per-prism data and gather lists in that order. The masses and the matrix do not
 * depend on it; the vertex sums of the scratch are dropped. */
static sinew_result sim_order_parts(ps_sim* s)
{
    const sinew_host_api* host = &s->host;
    uint32_t pc = s->prism_count, count[SINEW_LDL_PARTS + 1] = {0};
    double* scratch = (double*)sinew_host_calloc(host, 2u * (size_t)s->N, sizeof(double));
    uint8_t* part = (uint8_t*)sinew_host_alloc(host, pc ? pc : 1u);
    sinew_result r = SINEW_OK;
    if (!scratch || !part) r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
    for (uint32_t t = 0; r == SINEW_OK && t < pc; ++t) count[(part[t] = (uint8_t)prism_part(s, t)) + 1]++;
    if (r == SINEW_OK) {
        for (uint32_t k = 0; k < SINEW_LDL_PARTS; ++k) count[k + 1] += count[k];
        for (uint32_t k = 0; k <= SINEW_LDL_PARTS; ++k)
            s->part_blocks[k] = k == SINEW_LDL_PARTS ? s->block_count
                                                     : (count[k] + PS_LOCAL_BLOCK / 2u) / PS_LOCAL_BLOCK;
        for (uint32_t t = 0; t < pc; ++t) s->prism_tri[count[part[t]]++] = t;
        sim_prism_data(s, scratch, scratch + s->N);
        r = sim_gather(s);
    }
    if (r == SINEW_OK)
        sinew_ldl_rows_by_part(s->solver[0], s->N, s->part_rows, s->part_row_start);
    s->part_jobs = s->host.jobs.thread_count <= SINEW_LDL_PARTS;
    sinew_host_free(host, scratch);
    sinew_host_free(host, part);
    return r;
}

/* CHOLMOD: simplicial LDL^T, AMD ordering only, quiet (errors come back as status). */
static void sim_start_cholmod(ps_sim* s)
{
    sinew_cholmod_start_ldl(&s->cc);
    s->cc_started = 1;
}

/* The parts that only some models use: the collision matrix of Sec. 5.3 and the sliding
 * skeleton of Sec. 4.2. */
static sinew_result sim_optional_parts(ps_sim* s)
{
    const ps_model* m = s->m;
    sinew_result r = SINEW_OK;
    if ((s->p.collisions && m->collision_pair_count > 0) || s->p.global_collisions)
        r = collision_system(s);
    if (r == SINEW_OK && s->p.sliding && m->slide_vertex_count > 0)
        r = ps_slide_create(&s->host, m, &s->slide);
    return r;
}

/* Start at rest: the rest positions as targets and the identity pose. */
static void sim_start_at_rest(ps_sim* s)
{
    const ps_model* m = s->m;
    uint32_t N = s->N;
    for (uint32_t i = 0; i < N; ++i)
        for (int c = 0; c < 3; ++c) s->x[(size_t)c * N + i] = m->rest[3u * i + c];
    memcpy(s->target, s->x, 3u * (size_t)N * sizeof(double));
    for (uint32_t j = 0; j < m->joint_count; ++j)
        for (int k = 0; k < 16; ++k) s->skinning[16u * j + k] = (k % 5 == 0) ? 1.0f : 0.0f;
}

sinew_result ps_sim_create(const sinew_host_api* host, const ps_model* m, const ps_params* params,
                           ps_sim** out)
{
    *out = NULL;
    ps_sim* s = (ps_sim*)sinew_host_calloc(host, 1, sizeof(ps_sim));
    if (!s) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
    sim_init(s, host, m, params);
    sim_alloc_prisms(s);
    sinew_result r = sim_pick_kernels(s);
    if (r == SINEW_OK) {
        sim_alloc_state(s);
        if (!sim_allocated(s))
            r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory for a tissue "
                                "mesh of %u vertices", s->N);
    }
    if (r == SINEW_OK) r = sim_rest_data(s);
    if (r == SINEW_OK) r = sim_gather(s);
    if (r == SINEW_OK) {
        sim_start_cholmod(s);
        r = assemble_system(s);
    }
    if (r == SINEW_OK) r = sim_optional_parts(s);
    if (r == SINEW_OK) r = factor_numeric(s);
    if (r == SINEW_OK) r = sim_order_parts(s);
    if (r != SINEW_OK) {
        ps_sim_destroy(s);
        return r;
    }
    sim_start_at_rest(s);
    sinew_host_log(host, SINEW_LOG_DEBUG,
                   "ps: system of %u unknowns, %zu nonzeros, LDL^T factor with %zu nonzeros",
                   s->N, ps_sim_matrix_nnz(s), ps_sim_factor_nnz(s));
    *out = s;
    return SINEW_OK;
}

const ps_collide* ps_sim_collide(const ps_sim* s)
{
    return s->col;
}

size_t ps_sim_matrix_nnz(const ps_sim* s)
{
    return s->K ? (size_t)((const int*)s->K->p)[s->K->ncol] : 0u;
}

size_t ps_sim_factor_nnz(const ps_sim* s)
{
    return sinew_ldl_entry_count(s->solver[0]);
}

void ps_sim_set_pose(ps_sim* s, const float* skinning)
{
    ps_copy_skinning(s->skinning, skinning, s->m->joint_count);
    s->pose_dirty = 1;
}

/* Anchor targets: the rest position moved by the anchor joint's skinning matrix. */
static void update_targets(ps_sim* s)
{
    uint32_t N = s->N;
    for (uint32_t a = 0; a < s->anchored_count; ++a) {
        uint32_t i = s->anchored[a];
        ps_bone_target(s->target, N, i, s->skinning + 16u * s->anchor_joint[i], s->m->rest);
    }
    /* Sec. 4.2: base vertices near joints slide instead of following one bone. */
    if (s->slide) ps_slide_targets(s->slide, s->skinning, s->target, N);
}

/* ---- local step (Sec. 4.1, rotations per prism as in Sec. 6) ---- */

typedef struct local_ctx {
    ps_sim* s;
} local_ctx;

/* For blocks of prisms [begin, end): the weighted mean deformation gradients, their rotations
 * by the batched polar decomposition (Higham's Newton iteration, the SVD of McAdams et al.
 * where det F < 1e-5, Sec. 6), and each slot's share R_p g_k of the right-hand side. */
static void local_range(void* data, uint32_t begin, uint32_t end)
{
    ps_sim* s = ((const local_ctx*)data)->s;
    ps_local_job job;
    job.x = s->x;
    job.N = s->N;
    job.pv = s->pv_soa;
    job.G = s->G_soa;
    job.inv_w = s->inv_w;
    job.F = s->F_soa;
    job.contrib = s->contrib;
    job.stride = s->stride;
    s->gradient(&job, begin, end);
    /* A prism whose tets are all left out has F = 0, whose rotation is I, and G = 0: it
     * contributes nothing. With the volume term the rotation goes to R_soa, is blended with
     * F's volume projection there, and the blend is projected. */
    if (s->R_soa) {
        s->polar(s->F_soa, s->R_soa, s->stride, begin * PS_LOCAL_BLOCK, end * PS_LOCAL_BLOCK);
        ps_local_volume(s->F_soa, s->R_soa, s->stride, s->volume_keep, s->volume_lo,
                        s->volume_hi, begin, end);
        job.F = s->R_soa;
    } else {
        s->polar(s->F_soa, s->F_soa, s->stride, begin * PS_LOCAL_BLOCK, end * PS_LOCAL_BLOCK);
    }
    s->project(&job, begin, end);
}

/* Row i of the right-hand side of eq. (6): constant part plus the prisms' projections. */
static inline void rhs_value(const ps_sim* s, uint32_t i, double acc[3])
{
    uint32_t N = s->N;
    size_t S = s->stride;
    acc[0] = s->rhs_const[i];
    acc[1] = s->rhs_const[(size_t)N + i];
    acc[2] = s->rhs_const[2u * (size_t)N + i];
    for (uint32_t e = s->gather_offsets[i]; e < s->gather_offsets[i + 1]; ++e) {
        const float* c = s->contrib + s->gather[e];
        acc[0] += c[0];
        acc[1] += c[S];
        acc[2] += c[2u * S];
    }
}

static inline void rhs_row(const ps_sim* s, uint32_t i, double* b)
{
    uint32_t N = s->N;
    double acc[3];
    rhs_value(s, i, acc);
    b[i] = acc[0];
    b[(size_t)N + i] = acc[1];
    b[2u * (size_t)N + i] = acc[2];
}

/* sinew_ldl_rhs_fn: rows of the right-hand side straight into a part's workspace. */
static void rhs_rows(void* user, const uint32_t* rows, uint32_t count, double* out)
{
    const ps_sim* s = (const ps_sim*)user;
    for (uint32_t k = 0; k < count; ++k) rhs_value(s, rows[k], out + 3u * (size_t)k);
}

static void rhs_range(void* data, uint32_t begin, uint32_t end)
{
    ps_sim* s = ((const local_ctx*)data)->s;
    for (uint32_t i = begin; i < end; ++i) rhs_row(s, i, (double*)s->B->x);
}

/* Parts [begin, end): their blocks' local step (part_jobs). */
static void local_part_range(void* data, uint32_t begin, uint32_t end)
{
    const ps_sim* s = ((const local_ctx*)data)->s;
    for (uint32_t k = begin; k < end; ++k)
        if (s->part_blocks[k] < s->part_blocks[k + 1])
            local_range(data, s->part_blocks[k], s->part_blocks[k + 1]);
}

/* Parts [begin, end): their vertices' right-hand side (part_jobs). */
static void rhs_part_range(void* data, uint32_t begin, uint32_t end)
{
    ps_sim* s = ((const local_ctx*)data)->s;
    for (uint32_t k = begin; k < end; ++k)
        for (uint32_t r = s->part_row_start[k]; r < s->part_row_start[k + 1]; ++r)
            rhs_row(s, s->part_rows[r], (double*)s->B->x);
}

double ps_sim_energy(ps_sim* s)
{
    const ps_model* m = s->m;
    uint32_t N = s->N;
    double e = 0.0;
    for (uint32_t i = 0; i < N; ++i) {
        double d2 = 0.0, a2 = 0.0;
        for (int c = 0; c < 3; ++c) {
            double d = s->x[(size_t)c * N + i] - s->pred[(size_t)c * N + i];
            double a = s->x[(size_t)c * N + i] - s->target[(size_t)c * N + i];
            d2 += d * d;
            a2 += a * a;
        }
        e += 0.5 * s->mass[i] * s->inv_h2 * d2 + 0.5 * s->anchor_w[i] * a2;
    }
    for (uint32_t p = 0; p < s->prism_count; ++p) {
        if (!(s->prism_w[p] > 0.0)) continue;
        const uint32_t* v = s->prism_v + 6u * p;
        double G[18];
        ps_prism_G(s->m, s->prism_tri[p], v, s->p.strain_weight + s->p.volume.weight, G, NULL,
                   NULL);
        double M[3][3] = {{0.0}};
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c)
                for (int k = 0; k < 6; ++k) M[r][c] += G[6 * r + k] * s->x[(size_t)c * N + v[k]];
        double wsum = s->prism_w[p];
        float F[9], R[9];
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) F[3 * c + r] = (float)(M[r][c] / wsum);
        sinew_polar3(F, R);
        float P[9];
        sinew_volume_project(F, s->volume_lo, s->volume_hi, P);
        double wv = s->p.volume.weight;
        for (uint32_t k = 0; k < 3; ++k) {
            uint32_t t = 3u * s->prism_tri[p] + k;
            if (m->tet_excluded[t]) continue;
            double vol = fabs(m->tet_volume[t]);
            const double* A = m->tet_A + 12u * t;
            const uint32_t* tv = m->tets + 4u * t;
            double sum = 0.0, sum_v = 0.0;
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) {
                    double f = 0.0;
                    for (int q = 0; q < 4; ++q) f += A[4 * r + q] * s->x[(size_t)c * N + tv[q]];
                    double d = f - (double)R[3 * c + r]; /* (A X)[r][c] against R^T[r][c] */
                    double dv = f - (double)P[3 * c + r];
                    sum += d * d;
                    sum_v += dv * dv;
                }
            e += 0.5 * s->p.strain_weight * vol * sum + 0.5 * wv * vol * sum_v;
        }
    }
    return e;
}

/* Seconds spent in the phases of one step (profile=1). */
typedef struct step_times {
    double local, rhs, solve, collide, solve2;
} step_times;

/* A new pose moves the anchor targets and, with collisions, the contact planes that clamp
 * the base targets (Sec. 5). */
static void step_pose(ps_sim* s, step_times* t)
{
    if (!s->pose_dirty) return;
    update_targets(s);
    if (s->col) {
        double a = s->p.profile ? ps_seconds() : 0.0;
        ps_collide_pose(s->col, s->skinning);
        ps_collide_clamp_targets(s->col, s->target, s->N);
        if (s->p.profile) t->collide += ps_seconds() - a;
    }
    s->pose_dirty = 0;
}

/* After set_state the anchored vertices jump to their targets, at rest. */
static void step_snap(ps_sim* s)
{
    if (!s->snap) return;
    uint32_t N = s->N;
    for (uint32_t a = 0; a < s->anchored_count; ++a) {
        uint32_t i = s->anchored[a];
        for (int c = 0; c < 3; ++c) {
            s->x[(size_t)c * N + i] = s->target[(size_t)c * N + i];
            s->v[(size_t)c * N + i] = 0.0;
        }
    }
    s->snap = 0;
}

/* Alg. 1, line 1-2: the inertial prediction s = x + h v, which also starts the iteration
 * (anchored vertices start at their targets, where they will end up), and the constant
 * part of the right-hand side of eq. (6): M s / h^2 + W_anchor T q. */
static void step_predict(ps_sim* s)
{
    uint32_t N = s->N;
    double h = s->h;
    for (int c = 0; c < 3; ++c) {
        size_t o = (size_t)c * N;
        double* x = s->x + o;
        const double* v = s->v + o;
        double* xp = s->x_prev + o;
        double* pred = s->pred + o;
        double* rc = s->rhs_const + o;
        const double* target = s->target + o;
        for (uint32_t i = 0; i < N; ++i) {
            double p = x[i] + h * v[i];
            xp[i] = x[i];
            pred[i] = p;
            x[i] = p;
            rc[i] = s->mass[i] * s->inv_h2 * p + s->anchor_w[i] * target[i];
        }
    }
    for (uint32_t a = 0; a < s->anchored_count; ++a) {
        uint32_t i = s->anchored[a];
        for (int c = 0; c < 3; ++c) s->x[(size_t)c * N + i] = s->target[(size_t)c * N + i];
    }
}

/* Sec. 5.3, an iteration of the second half: the collision constraints' projections w_v p_v
 * added to the right-hand side. The global contacts move their vertices' targets first
 * (fps_collide_point_targets), then the joints' volume (ps_joint_volume_targets), and the local
 * contact planes act on the result; every other constrained vertex projects onto its current
 * position. */
static void second_half_targets(ps_sim* s, uint32_t it)
{
    uint32_t N = s->N;
    const double* xt = s->x;
    double* b = (double*)s->B->x;
    if (s->global_step || s->volume_step) {
        memcpy(s->glob_t, s->x, 3u * (size_t)N * sizeof(double));
        if (s->global_step) fps_collide_point_targets(s->glob, s->x, N, s->glob_t, 0.5);
        if (s->volume_step) ps_joint_volume_targets(s->jvol, s->x, N, s->p.volume.joint, s->glob_t);
        xt = s->glob_t;
        for (int c = 0; c < 3; ++c) {
            size_t o = (size_t)c * N;
            for (uint32_t v = 0; v < s->n; ++v) b[o + v] += s->glob_w[v] * xt[o + v];
        }
    }
    if (s->col) {
        /* Fig. 10 once per step, on the preliminary shape of the first k/2 iterations. */
        if (it == s->p.iterations / 2u && s->p.collision_angle_test)
            ps_collide_detect(s->col, s->x, N);
        ps_collide_project(s->col, xt, N, s->col_w, b);
    }
}

/* 2019 Sec. 6: the global contacts of the step, detected at the prediction. */
static sinew_result step_contacts(ps_sim* s, step_times* t)
{
    if (!s->glob) return SINEW_OK;
    double a = s->p.profile ? ps_seconds() : 0.0;
    int changed = 0;
    sinew_result r = fps_collide_update(s->glob, s->x, s->N, &changed);
    s->global_step = fps_collide_pair_count(s->glob) + fps_collide_capsule_count(s->glob) > 0;
    if (s->p.profile) t->collide += ps_seconds() - a;
    return r;
}

/* Local/global iteration `it`: the prisms' rotations, the right-hand side and the solve. */
static sinew_result step_iterate(ps_sim* s, uint32_t it, step_times* t)
{
    uint32_t N = s->N;
    local_ctx ctx = {s};
    double a = s->p.profile ? ps_seconds() : 0.0;
    if (s->part_jobs)
        sinew_host_parallel_for(&s->host, local_part_range, &ctx, SINEW_LDL_PARTS, 1u);
    else
        sinew_host_parallel_for(&s->host, local_range, &ctx, s->block_count, 8u);
    double b = s->p.profile ? ps_seconds() : 0.0;
    /* The joints' volume is judged on the first half's shape, which the plain matrix gives
     * alike in every step of a held pose (judged at the prediction, a step that restored the
     * volume would switch the next one off). */
    if (s->jvol && it == s->p.iterations / 2u)
        s->volume_step = ps_joint_volume_measure(s->jvol, s->x, N, s->skinning,
                                                 PS_JOINT_VOLUME_SLACK, NULL);
    /* Sec. 5.3: the first k/2 iterations without collisions, the rest with the second
     * matrix and the collision projections of the current positions. */
    sinew_ldl* L2 = s->solver[s->global_step || s->volume_step ? 2 : 1];
    sinew_ldl* L = L2 && it >= s->p.iterations / 2u ? L2 : s->solver[0];
    double c = b, c2 = b;
    if (L == L2) {
        if (s->part_jobs)
            sinew_host_parallel_for(&s->host, rhs_part_range, &ctx, SINEW_LDL_PARTS, 1u);
        else
            sinew_host_parallel_for(&s->host, rhs_range, &ctx, N, 1024u);
        c = s->p.profile ? ps_seconds() : 0.0;
        second_half_targets(s, it);
        c2 = s->p.profile ? ps_seconds() : 0.0;
        sinew_ldl_solve(L, (const double*)s->B->x, N, s->x, N);
    } else {
        /* without projections to add, each part's rows of the right-hand side are computed
         * by the thread that solves the part (in the solve's time) */
        sinew_ldl_solve_with(L, rhs_rows, s, s->x, N);
    }
    if (s->p.profile) {
        double d = ps_seconds();
        t->local += b - a;
        t->rhs += c - b;
        t->solve += d - c;
        t->collide += c2 - c;
        if (L == L2) t->solve2 += d - c2;
    }
    return SINEW_OK;
}

/* Alg. 1, line 7: v = lambda (x_{t+1} - x_t) / h. A non-finite result restores the previous
 * shape and clears the velocities. */
static sinew_result step_velocities(ps_sim* s)
{
    size_t N3 = 3u * (size_t)s->N;
    double f = s->p.damping / s->h;
    double check = 0.0;
    for (size_t k = 0; k < N3; ++k) {
        s->v[k] = f * (s->x[k] - s->x_prev[k]);
        check += s->x[k] + s->v[k];
    }
    if (s->global_step && s->p.inelastic_contacts)
        fps_collide_stop_separation(s->glob, s->x, s->N, s->v, f);
    if (!isfinite(check)) {
        memcpy(s->x, s->x_prev, N3 * sizeof(double));
        memset(s->v, 0, N3 * sizeof(double));
        return sinew_host_fail(&s->host, SINEW_ERROR_BACKEND_FAILED,
                               "ps: the step produced a non-finite position; the shape is kept "
                               "and the velocities are cleared");
    }
    return SINEW_OK;
}

/* Adds one step's phase times to the profile (profile=1). */
static void step_profile(ps_sim* s, const step_times* t, double t0)
{
    s->profile[0] += t->local;
    s->profile[1] += t->rhs;
    s->profile[2] += t->solve;
    s->profile_collide[0] += t->collide;
    s->profile_collide[1] += t->solve2;
    s->profile[4] += ps_seconds() - t0;
    s->profile_steps++;
}

sinew_result ps_sim_step(ps_sim* s, double* energies)
{
    double t0 = s->p.profile ? ps_seconds() : 0.0;
    step_times t = {0.0, 0.0, 0.0, 0.0, 0.0};
    step_pose(s, &t);
    step_snap(s);
    step_predict(s);
    sinew_result r = step_contacts(s, &t);
    if (r != SINEW_OK) return r;
    if (energies) energies[0] = ps_sim_energy(s);
    for (uint32_t it = 0; it < s->p.iterations; ++it) {
        r = step_iterate(s, it, &t);
        if (r != SINEW_OK) return r;
        if (energies) energies[it + 1] = ps_sim_energy(s);
    }
    r = step_velocities(s);
    if (r != SINEW_OK) return r;
    if (s->p.profile) step_profile(s, &t, t0);
    return SINEW_OK;
}

const double* ps_sim_positions(const ps_sim* s)
{
    return s->x;
}

const double* ps_sim_velocities(const ps_sim* s)
{
    return s->v;
}

void ps_sim_set_skin(ps_sim* s, const float* positions, const float* velocities)
{
    uint32_t N = s->N;
    for (uint32_t i = 0; i < s->n; ++i)
        for (int c = 0; c < 3; ++c) {
            s->x[(size_t)c * N + i] = positions[3u * i + c];
            s->v[(size_t)c * N + i] = velocities ? velocities[3u * i + c] : 0.0;
        }
    s->snap = 1;
    fps_collide_reset(s->glob);
}

void ps_sim_clear_velocities(ps_sim* s)
{
    memset(s->v, 0, 3u * (size_t)s->N * sizeof(double));
}

void ps_sim_profile(const ps_sim* s, double seconds[5], uint64_t* steps)
{
    memcpy(seconds, s->profile, sizeof s->profile);
    *steps = s->profile_steps;
}

void ps_sim_profile_collisions(const ps_sim* s, double seconds[2])
{
    seconds[0] = s->profile_collide[0];
    seconds[1] = s->profile_collide[1];
}

/* ---- upsampling (Sec. 6) ---- */

/* The skin's float positions (the sim's numbering is the model's). */
static void skin_float_range(void* data, uint32_t begin, uint32_t end)
{
    ps_sim* s = (ps_sim*)data;
    uint32_t N = s->N;
    for (uint32_t i = begin; i < end; ++i)
        for (int c = 0; c < 3; ++c) s->skin_f[3u * i + c] = (float)s->x[(size_t)c * N + i];
}

void ps_sim_skin_positions(const ps_sim* s, float* out)
{
    uint32_t N = s->N;
    for (uint32_t i = 0; i < s->n; ++i)
        for (int c = 0; c < 3; ++c) out[3u * i + c] = (float)s->x[(size_t)c * N + i];
}

void ps_sim_set_output_blend(ps_sim* s, const float* previous, float fraction)
{
    s->blend_from = previous;
    s->blend_fraction = fraction;
}

void ps_sim_upsample(ps_sim* s, float* positions, size_t position_stride, float* normals,
                     size_t normal_stride)
{
    double t0 = s->p.profile ? ps_seconds() : 0.0;
    sinew_host_parallel_for(&s->host, skin_float_range, s, s->n, 2048u);
    ps_mls_upsample_skin(&s->host, s->m, s->mls, s->blend_from, s->blend_fraction, s->skin_f,
                         s->skin_n, s->skinning, positions, position_stride, normals,
                         normal_stride);
    if (s->p.profile) s->profile[3] += ps_seconds() - t0;
}

void ps_sim_set_mls(ps_sim* s, const sinew_mls_weights* mls)
{
    s->mls = mls;
}

void ps_sim_render_velocities(const ps_sim* s, float* velocities)
{
    ps_mls_render_velocities(&s->host, s->m, s->mls, s->v, s->N, NULL, s->skin_f, velocities);
}

sinew_result ps_sim_dump(const ps_sim* s, const sinew_bake_writer* w)
{
    const int* p = (const int*)s->K->p;
    size_t ncol = s->K->ncol, nnz = (size_t)p[ncol];
    sinew_result r = w->write(&s->N, sizeof s->N, w->user);
    if (r == SINEW_OK) r = w->write(p, (ncol + 1u) * sizeof(int), w->user);
    if (r == SINEW_OK) r = w->write(s->K->i, nnz * sizeof(int), w->user);
    if (r == SINEW_OK) r = w->write(s->K->x, nnz * sizeof(double), w->user);
    if (r == SINEW_OK) r = w->write(s->mass, s->N * sizeof(double), w->user);
    if (r == SINEW_OK) r = w->write(s->anchor_w, s->N * sizeof(double), w->user);
    if (r == SINEW_OK) r = w->write(s->G_soa, s->stride * 18u * sizeof(float), w->user);
    if (r == SINEW_OK) r = w->write(s->pv_soa, s->stride * 6u * sizeof(int32_t), w->user);
    return r;
}
