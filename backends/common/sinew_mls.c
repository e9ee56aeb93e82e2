/* MLS upsampling: baking the weights, evaluating them per frame, and their blob (see
 * sinew_mls.h; fast-projective-skinning-2019 Sec. 5). SPDX-License-Identifier: MIT */
#include <sinew/sinew_host.h>

#include "sinew_mls.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "sinew_geodesic.h"

#define MLS_QUADRATIC_TERMS 10
#define MLS_LINEAR_TERMS 4
/* Relative singular-value tolerance of the pseudo-inverse G^+ (Sec. 5): eigenvalues of G at or
 * below this fraction of the largest, the near-null directions of neighbours on a plane or
 * quadric, are dropped. */
#define MLS_PINV_TOLERANCE 1e-8
/* Largest constant/linear reproduction residual for which weights count as exact: the
 * constant part absolute, the linear part relative to the simulation mesh's bounding-box
 * diagonal. Far below float rounding of the positions (about 3e-8 of the diagonal), yet above
 * what the pseudo-inverse leaves of a dropped direction that float-rounded positions on an
 * exact quadric (a cylinder) produce. */
#define MLS_EXACT_TOLERANCE 1e-9
#define MLS_CHUNK 64u
/* Render vertices whose quadratic systems are diagonalised together (bake_eigen), and the
 * doubles of their matrices and eigenvectors in lane layout (jacobi_eigen_lanes). */
#define MLS_BATCH 16u
#define MLS_LANE_DOUBLES (2u * MLS_QUADRATIC_TERMS * MLS_QUADRATIC_TERMS * MLS_BATCH)
#define MLS_TINY_WEIGHT 1e-15
#define MLS_BLOB_MAGIC 0x534c4d53u /* "SMLS" */
#define MLS_BLOB_VERSION 1u
#define MLS_BLOB_HEADER 24u

/* ---- dense symmetric eigen-analysis (cyclic Jacobi) and the pseudo-inverse ---- */

/* Diagonalises the symmetric n x n matrix a (row-major, overwritten: its diagonal ends up
 * holding the eigenvalues) and accumulates the eigenvectors as the columns of v. */
static void jacobi_eigen(double* a, double* v, int n)
{
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) v[i * n + j] = i == j ? 1.0 : 0.0;
    for (int sweep = 0; sweep < 64; ++sweep) {
        double off = 0.0, diag = 0.0;
        for (int i = 0; i < n; ++i) {
            diag += a[i * n + i] * a[i * n + i];
            for (int j = i + 1; j < n; ++j) off += a[i * n + j] * a[i * n + j];
        }
        /* Off-diagonal mass far below double rounding of the diagonal: converged. */
        if (off <= 1e-34 * diag || off == 0.0) break;
        for (int p = 0; p < n - 1; ++p)
            for (int q = p + 1; q < n; ++q) {
                double apq = a[p * n + q];
                /* Far below the rounding of both diagonal entries: the rotation would not change
                 * them, so the entry is dropped instead of rotated (its sqrt and divisions are
                 * most of the cost). */
                if (apq * apq <= 1e-36 * fabs(a[p * n + p] * a[q * n + q])) {
                    a[p * n + q] = a[q * n + p] = 0.0;
                    continue;
                }
                double theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                double t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                /* a <- J^T a J with J the rotation in the (p, q) plane. */
                for (int k = 0; k < n; ++k) {
                    double akp = a[k * n + p], akq = a[k * n + q];
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for (int k = 0; k < n; ++k) {
                    double apk = a[p * n + k], aqk = a[q * n + k];
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                a[p * n + q] = a[q * n + p] = 0.0;
                for (int k = 0; k < n; ++k) {
                    double vkp = v[k * n + p], vkq = v[k * n + q];
                    v[k * n + p] = c * vkp - s * vkq;
                    v[k * n + q] = s * vkp + c * vkq;
                }
            }
    }
}

#if defined(SINEW_SKIN_X86) && defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define MLS_JACOBI_AVX 1
#include <immintrin.h>

/* Matrices per set of lanes of jacobi_eigen_lanes, and sets run side by side: independent
 * sets give the out-of-order core other chains of divisions and square roots to work on while
 * one waits. */
#define MLS_LANES 4
#define MLS_SETS 4

/* One Jacobi rotation of the pair (x, y): (c x - s y, s x + c y) in the lanes of `rot`, the
 * pair unchanged in the others. */
__attribute__((target("avx2"), always_inline)) static inline void rotate_lanes(
    __m256d* x, __m256d* y, __m256d c, __m256d s, __m256d rot)
{
    __m256d xv = *x, yv = *y;
    *x = _mm256_blendv_pd(xv, _mm256_sub_pd(_mm256_mul_pd(c, xv), _mm256_mul_pd(s, yv)), rot);
    *y = _mm256_blendv_pd(yv, _mm256_add_pd(_mm256_mul_pd(s, xv), _mm256_mul_pd(c, yv)), rot);
}

/* jacobi_eigen of MLS_BATCH n x n matrices at once, one per lane of 256-bit AVX vectors:
 * each lane runs the scalar code's operations in its order (no FMA: the target leaves it out,
 * and the file is built without contraction), so every lane gives that code's bits. Where the
 * scalar code branches, a lane's results are selected by mask: a lane that skips a rotation
 * keeps its entries, and a lane whose sweeps have converged takes no further change while the
 * others go on. a[l] and v[l] as in jacobi_eigen for lane l (a[l] == a[m] is allowed: the
 * lanes then compute the same); `lanes`: MLS_LANE_DOUBLES doubles, 32-byte aligned, for the
 * matrices in lane layout (kept off the stack, which a host's job threads may have little
 * of). */
__attribute__((target("avx2"), always_inline)) static inline void jacobi_eigen_lanes(
    double* const a_out[MLS_BATCH], double* const v_out[MLS_BATCH], const int n,
    double* lanes)
{
    enum { S = MLS_SETS, N = MLS_QUADRATIC_TERMS * MLS_QUADRATIC_TERMS };
    __m256d(*a)[S] = (__m256d(*)[S])lanes;
    __m256d(*v)[S] = a + N;
    for (int k = 0; k < n * n; ++k)
        for (int h = 0; h < S; ++h) {
            double* const* m = a_out + MLS_LANES * h;
            a[k][h] = _mm256_set_pd(m[3][k], m[2][k], m[1][k], m[0][k]);
            v[k][h] = _mm256_set1_pd(k % (n + 1) == 0 ? 1.0 : 0.0);
        }
    const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0);
    const __m256d minus_one = _mm256_set1_pd(-1.0), two = _mm256_set1_pd(2.0);
    const __m256d off_tol = _mm256_set1_pd(1e-34), skip_tol = _mm256_set1_pd(1e-36);
    const __m256d magnitude = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
    __m256d active[S];
    for (int h = 0; h < S; ++h) active[h] = _mm256_castsi256_pd(_mm256_set1_epi64x(-1ll));
    for (int sweep = 0; sweep < 64; ++sweep) {
        int any = 0;
        for (int h = 0; h < S; ++h) {
            __m256d off = zero, diag = zero;
            for (int i = 0; i < n; ++i) {
                diag = _mm256_add_pd(diag, _mm256_mul_pd(a[i * n + i][h], a[i * n + i][h]));
                for (int j = i + 1; j < n; ++j)
                    off = _mm256_add_pd(off, _mm256_mul_pd(a[i * n + j][h], a[i * n + j][h]));
            }
            __m256d done = _mm256_or_pd(
                _mm256_cmp_pd(off, _mm256_mul_pd(off_tol, diag), _CMP_LE_OQ),
                _mm256_cmp_pd(off, zero, _CMP_EQ_OQ));
            active[h] = _mm256_andnot_pd(done, active[h]);
            any |= _mm256_movemask_pd(active[h]);
        }
        if (!any) break;
        for (int p = 0; p < n - 1; ++p)
            for (int q = p + 1; q < n; ++q) {
                __m256d rot[S], c[S], s[S];
                int rotating = 0;
                for (int h = 0; h < S; ++h) {
                    __m256d apq = a[p * n + q][h], app = a[p * n + p][h], aqq = a[q * n + q][h];
                    __m256d skip = _mm256_cmp_pd(
                        _mm256_mul_pd(apq, apq),
                        _mm256_mul_pd(skip_tol,
                                      _mm256_and_pd(_mm256_mul_pd(app, aqq), magnitude)),
                        _CMP_LE_OQ);
                    rot[h] = _mm256_andnot_pd(skip, active[h]);
                    rotating |= _mm256_movemask_pd(rot[h]);
                    __m256d theta =
                        _mm256_div_pd(_mm256_sub_pd(aqq, app), _mm256_mul_pd(two, apq));
                    __m256d sign = _mm256_blendv_pd(minus_one, one,
                                                    _mm256_cmp_pd(theta, zero, _CMP_GE_OQ));
                    __m256d t = _mm256_div_pd(
                        sign, _mm256_add_pd(_mm256_and_pd(theta, magnitude),
                                            _mm256_sqrt_pd(_mm256_add_pd(
                                                _mm256_mul_pd(theta, theta), one))));
                    c[h] = _mm256_div_pd(one,
                                         _mm256_sqrt_pd(_mm256_add_pd(_mm256_mul_pd(t, t), one)));
                    s[h] = _mm256_mul_pd(t, c[h]);
                }
                if (rotating) {
                    for (int k = 0; k < n; ++k)
                        for (int h = 0; h < S; ++h)
                            rotate_lanes(&a[k * n + p][h], &a[k * n + q][h], c[h], s[h], rot[h]);
                    for (int k = 0; k < n; ++k)
                        for (int h = 0; h < S; ++h)
                            rotate_lanes(&a[p * n + k][h], &a[q * n + k][h], c[h], s[h], rot[h]);
                    for (int k = 0; k < n; ++k)
                        for (int h = 0; h < S; ++h)
                            rotate_lanes(&v[k * n + p][h], &v[k * n + q][h], c[h], s[h], rot[h]);
                }
                /* Rotated or dropped, the entry is 0 in every lane still sweeping. */
                for (int h = 0; h < S; ++h) {
                    a[p * n + q][h] = _mm256_blendv_pd(a[p * n + q][h], zero, active[h]);
                    a[q * n + p][h] = _mm256_blendv_pd(a[q * n + p][h], zero, active[h]);
                }
            }
    }
    for (int k = 0; k < n * n; ++k)
        for (int h = 0; h < S; ++h) {
            double lane_a[MLS_LANES], lane_v[MLS_LANES];
            _mm256_storeu_pd(lane_a, a[k][h]);
            _mm256_storeu_pd(lane_v, v[k][h]);
            for (int l = 0; l < MLS_LANES; ++l) {
                a_out[MLS_LANES * h + l][k] = lane_a[l];
                v_out[MLS_LANES * h + l][k] = lane_v[l];
            }
        }
}

/* jacobi_eigen_lanes for the quadratic systems (10 x 10) and the linear ones (4 x 4). */
__attribute__((target("avx2"))) static void jacobi_eigen_avx10(double* const a[MLS_BATCH],
                                                             double* const v[MLS_BATCH],
                                                             double* lanes)
{
    jacobi_eigen_lanes(a, v, MLS_QUADRATIC_TERMS, lanes);
}

__attribute__((target("avx2"))) static void jacobi_eigen_avx4(double* const a[MLS_BATCH],
                                                            double* const v[MLS_BATCH],
                                                            double* lanes)
{
    jacobi_eigen_lanes(a, v, MLS_LINEAR_TERMS, lanes);
}
#endif

/* y = G^+ b from G's eigen-analysis by jacobi_eigen (eigenvalues on the diagonal of g,
 * eigenvectors the columns of v), dropping eigenvalues at or below MLS_PINV_TOLERANCE times the
 * largest. */
static void pinv_apply(const double* g, const double* v, const double* b, double* y, int n)
{
    double lmax = 0.0;
    for (int i = 0; i < n; ++i)
        if (g[i * n + i] > lmax) lmax = g[i * n + i];
    for (int i = 0; i < n; ++i) y[i] = 0.0;
    if (!(lmax > 0.0)) return;
    for (int m = 0; m < n; ++m) {
        double lambda = g[m * n + m];
        if (!(lambda > MLS_PINV_TOLERANCE * lmax)) continue;
        double proj = 0.0;
        for (int i = 0; i < n; ++i) proj += v[i * n + m] * b[i];
        proj /= lambda;
        for (int i = 0; i < n; ++i) y[i] += v[i * n + m] * proj;
    }
}

/* y = G^+ b for the symmetric positive semi-definite n x n matrix g (destroyed). */
static void pinv_solve(double* g, const double* b, double* y, int n)
{
    double v[MLS_QUADRATIC_TERMS * MLS_QUADRATIC_TERMS];
    jacobi_eigen(g, v, n);
    pinv_apply(g, v, b, y, n);
}

static void basis(const double x[3], int terms, double* pi)
{
    pi[0] = 1.0;
    pi[1] = x[0], pi[2] = x[1], pi[3] = x[2];
    if (terms == MLS_LINEAR_TERMS) return;
    pi[4] = x[0] * x[0], pi[5] = x[1] * x[1], pi[6] = x[2] * x[2];
    pi[7] = x[0] * x[1], pi[8] = x[0] * x[2], pi[9] = x[1] * x[2];
}

/* G = sum_i w_i pi(x_i) pi(x_i)^T (eq. 6) of `count` points xs with weights w. */
static void mls_gram(const double (*xs)[3], const double* w, uint32_t count, int terms, double* g)
{
    /* Accumulated in a local array, which the compiler keeps apart from the inputs and can
     * update a row at a time in vector registers (each entry's sum in the same order). */
    double acc[MLS_QUADRATIC_TERMS * MLS_QUADRATIC_TERMS] = {0.0};
    double pi[MLS_QUADRATIC_TERMS];
    for (uint32_t i = 0; i < count; ++i) {
        if (w[i] <= 0.0) continue;
        basis(xs[i], terms, pi);
        for (int r = 0; r < terms; ++r) {
            const double wr = w[i] * pi[r];
            for (int c = 0; c < terms; ++c) acc[r * terms + c] += wr * pi[c];
        }
    }
    memcpy(g, acc, (size_t)(terms * terms) * sizeof(double));
}

/* out[i] = w_i pi(x_i)^T a, with a = G^+ b. */
static void mls_shape_out(const double (*xs)[3], const double* w, uint32_t count,
                          const double* a, int terms, double* out)
{
    double pi[MLS_QUADRATIC_TERMS];
    for (uint32_t i = 0; i < count; ++i) {
        if (w[i] <= 0.0) {
            out[i] = 0.0;
            continue;
        }
        basis(xs[i], terms, pi);
        double s = 0.0;
        for (int r = 0; r < terms; ++r) s += pi[r] * a[r];
        out[i] = w[i] * s;
    }
}

/* MLS shape functions (eq. 6, 7) of `count` points xs (already centred and scaled) with
 * weights w, applied to the basis vector b: out[i] = w_i pi(x_i)^T G^+ b. With b = pi(x_j)
 * these are the weights N_ij; with b a residual of basis values, the smallest (in the w-weighted
 * norm) weight change that removes it. */
static void mls_shape(const double (*xs)[3], const double* w, uint32_t count, const double* b,
                      int terms, double* out)
{
    double g[MLS_QUADRATIC_TERMS * MLS_QUADRATIC_TERMS], a[MLS_QUADRATIC_TERMS];
    mls_gram(xs, w, count, terms, g);
    pinv_solve(g, b, a, terms);
    mls_shape_out(xs, w, count, a, terms, out);
}

/* Centres points on their weighted mean and scales the farthest weighted one to distance 1
 * (Sec. 5: mean-centring and scaling to the unit sphere); xj goes through the same map.
 * Returns the factor back to mesh units. */
static double centre_and_scale(const double (*in)[3], const double* w, uint32_t count,
                               const double xj_in[3], double (*out)[3], double xj[3])
{
    double c[3] = {0.0, 0.0, 0.0}, wsum = 0.0;
    for (uint32_t i = 0; i < count; ++i) {
        if (w[i] <= 0.0) continue;
        for (int k = 0; k < 3; ++k) c[k] += w[i] * in[i][k];
        wsum += w[i];
    }
    for (int k = 0; k < 3; ++k) c[k] /= wsum;
    double r2 = 0.0;
    for (uint32_t i = 0; i < count; ++i) {
        double d2 = 0.0;
        for (int k = 0; k < 3; ++k) {
            out[i][k] = in[i][k] - c[k];
            d2 += out[i][k] * out[i][k];
        }
        if (w[i] > 0.0 && d2 > r2) r2 = d2;
    }
    double s = r2 > 0.0 ? 1.0 / sqrt(r2) : 1.0;
    for (uint32_t i = 0; i < count; ++i)
        for (int k = 0; k < 3; ++k) out[i][k] *= s;
    for (int k = 0; k < 3; ++k) xj[k] = (xj_in[k] - c[k]) * s;
    return 1.0 / s;
}

/* ---- the SIMD kernel's layout ---- */

/* Does apply's kernel on this CPU read sinew_mls_weights.packed? */
static int wants_packed(void)
{
#if defined(SINEW_SKIN_X86)
    return sinew_mls_resolve(SINEW_SIMD_AUTO) == SINEW_SIMD_AVX2;
#else
    return 0;
#endif
}

/* Whether weights for `simulation_count` vertices carry packed entries: the kernel reads them
 * and record offsets (32 * index) fit 32 bits. */
static int packs(uint32_t simulation_count)
{
    return wants_packed() && simulation_count <= UINT32_MAX / 32u;
}

/* Render vertex j's packed entries from the arrays. */
static void pack_vertex(sinew_mls_weights* w, uint32_t j)
{
    sinew_mls_packed_vertex* pv = &w->packed[j];
    const size_t e = (size_t)j * SINEW_MLS_K;
    for (uint32_t k = 0; k < SINEW_MLS_K; ++k) {
        pv->offsets[k] = 32u * w->indices[e + k];
        pv->pairs[2u * k] = w->weights[e + k];
        pv->pairs[2u * k + 1u] = w->normal_weights[e + k];
    }
}

/* Fills w->packed from the arrays when the kernel uses it (w complete otherwise); `who` names
 * the caller in the log line. */
static sinew_result make_packed(const sinew_host_api* host, sinew_mls_weights* w, const char* who)
{
    if (!packs(w->simulation_count)) return SINEW_OK;
    w->packed = (sinew_mls_packed_vertex*)sinew_host_alloc(
        host, (size_t)w->render_count * sizeof(sinew_mls_packed_vertex));
    if (!w->packed)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "%s: out of memory for %u render vertices", who, w->render_count);
    for (uint32_t j = 0; j < w->render_count; ++j) pack_vertex(w, j);
    return SINEW_OK;
}

/* ---- baking ---- */

enum { MLS_VERTEX_CORRECTED = 1, MLS_VERTEX_SHORT = 2, MLS_VERTEX_INEXACT = 4 };

typedef struct mls_vertex_report {
    uint32_t flags;
    double surface_distance, weight_l1, rest_error, normal_angle;
} mls_vertex_report;

typedef struct bake_ctx {
    const sinew_host_api* host;
    const sinew_geodesic* geo;
    const float* sim_normals;     /* unit, 3 per simulation vertex */
    const float* render_positions;
    const float* render_normals;  /* unit, 3 per render vertex */
    uint32_t render_count;
    double diagonal;              /* of the simulation mesh's bounding box */
    sinew_mls_weights* out;       /* packed entries allocated when the kernel reads them */
    sinew_mls_stats* chunk_stats; /* per chunk of MLS_CHUNK render vertices: its figures */
    sinew_result* chunk_status;   /* per chunk: its result */
    uint32_t chunks;
    atomic_uint next_chunk;       /* the next chunk a job takes (bake_jobs) */
    int batch_eigen;              /* jacobi_eigen_avx runs on this CPU */
} bake_ctx;

static void normalise3(double v[3])
{
    double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (l > 0.0) v[0] /= l, v[1] /= l, v[2] /= l;
}

/* Sec. 5's weights theta = (1 - r / rho)^3 (eq. 4) of the nearest neighbours: the first K of
 * `found` hits with rho the (K+1)-th's distance, or all of them with rho 1.5 times the last's
 * when fewer were found (flagged short); rho grows while every weight is 0. Returns the count. */
static uint32_t support_weights(const sinew_geodesic_hit* hits, uint32_t found,
                                mls_vertex_report* rep, double w[SINEW_MLS_K])
{
    uint32_t count = found;
    double rho;
    if (found == SINEW_MLS_K + 1u) {
        count = SINEW_MLS_K;
        rho = hits[SINEW_MLS_K].distance;
    } else {
        rep->flags |= MLS_VERTEX_SHORT;
        rho = 1.5 * hits[found - 1u].distance;
    }
    if (!(rho > 0.0)) rho = 1.0;
    for (;;) {
        double wsum = 0.0;
        for (uint32_t i = 0; i < count; ++i) {
            double t = 1.0 - hits[i].distance / rho;
            w[i] = t > 0.0 ? t * t * t : 0.0; /* eq. 4 */
            wsum += w[i];
        }
        if (wsum > 0.0) break;
        rho *= 1.5; /* every neighbour tied with the (K+1)-th: widen the support */
    }
    return count;
}

/* One render vertex between the stages of its bake: the neighbourhood and the quadratic MLS
 * system (bake_vertex_begin), G's eigen-analysis (bake_eigen, several vertices at once where
 * the CPU allows), the position weights and the normals' linear system (bake_vertex_middle),
 * its eigen-analysis (bake_eigen again), then the normal weights (bake_vertex_end). */
typedef struct vertex_work {
    uint32_t j;
    uint32_t count;
    mls_vertex_report rep;
    sinew_geodesic_hit hits[SINEW_MLS_K + 1u];
    double xj[3];
    double w[SINEW_MLS_K], xs[SINEW_MLS_K][3], ns[SINEW_MLS_K][3];
    /* the neighbours and x_j centred and scaled, and the factor back to mesh units */
    double xsc[SINEW_MLS_K][3], xjc[3], rescale;
    double b[MLS_QUADRATIC_TERMS];
    /* G, then its eigenvalues on the diagonal; its eigenvectors as columns */
    double g[MLS_QUADRATIC_TERMS * MLS_QUADRATIC_TERMS];
    double v[MLS_QUADRATIC_TERMS * MLS_QUADRATIC_TERMS];
    /* the position weights */
    double n_ij[SINEW_MLS_K];
    /* the normals' linear system: x_j's normal, the neighbours' normals and it centred and
     * scaled, pi of it, G (then its eigenvalues) and G's eigenvectors */
    double nj[3], nsc[SINEW_MLS_K][3], njc[3], nb[MLS_LINEAR_TERMS];
    double ng[MLS_LINEAR_TERMS * MLS_LINEAR_TERMS], nv[MLS_LINEAR_TERMS * MLS_LINEAR_TERMS];
} vertex_work;

/* Positions: quadratic MLS. Directions of G dropped by the pseudo-inverse can leave the
 * constant and linear monomials of x_j unreproduced (on surface data G always has a near-null
 * direction, the local quadric through the neighbours, with eigenvalues around 1e-9 of the
 * largest on the male mesh, and x_j sits slightly off it). Rather than the paper's fallback
 * to linear MLS, which loses quadratic precision, the residual is removed by the smallest
 * w-weighted change of the weights (linear MLS applied to the residual): eq. 8 then holds
 * exactly while quadratic maps stay reproduced up to the dropped part.
 * This first part sets up the quadratic system: centring, pi(x_j) and G. */
static void position_system(vertex_work* vw)
{
    vw->rescale = centre_and_scale((const double(*)[3])vw->xs, vw->w, vw->count, vw->xj,
                                   vw->xsc, vw->xjc);
    basis(vw->xjc, MLS_QUADRATIC_TERMS, vw->b);
    mls_gram((const double(*)[3])vw->xsc, vw->w, vw->count, MLS_QUADRATIC_TERMS, vw->g);
}

/* The position weights from G's eigen-analysis, with the correction described above. */
static void position_weights(const bake_ctx* c, const vertex_work* vw, mls_vertex_report* rep,
                             double* n_ij)
{
    const double(*xsc)[3] = (const double(*)[3])vw->xsc;
    const double* w = vw->w;
    const double* xjc = vw->xjc;
    const uint32_t count = vw->count;
    double a[MLS_QUADRATIC_TERMS];
    pinv_apply(vw->g, vw->v, vw->b, a, MLS_QUADRATIC_TERMS);
    mls_shape_out(xsc, w, count, a, MLS_QUADRATIC_TERMS, n_ij);
    for (int pass = 0; pass < 2; ++pass) {
        double res[MLS_LINEAR_TERMS] = {1.0, xjc[0], xjc[1], xjc[2]};
        for (uint32_t i = 0; i < count; ++i) {
            res[0] -= n_ij[i];
            for (int k = 0; k < 3; ++k) res[1 + k] -= n_ij[i] * xsc[i][k];
        }
        /* The linear residual back in mesh units. */
        double lin = fmax(fabs(res[1]), fmax(fabs(res[2]), fabs(res[3]))) * vw->rescale;
        if (fabs(res[0]) <= MLS_EXACT_TOLERANCE && lin <= MLS_EXACT_TOLERANCE * c->diagonal) break;
        if (pass == 1) { /* the neighbours' affine span misses x_j: planar or collinear */
            rep->flags |= MLS_VERTEX_INEXACT;
            break;
        }
        rep->flags |= MLS_VERTEX_CORRECTED;
        double delta[SINEW_MLS_K];
        mls_shape(xsc, w, count, res, MLS_LINEAR_TERMS, delta);
        for (uint32_t i = 0; i < count; ++i) n_ij[i] += delta[i];
    }
}

/* Vertex j's stored weights (K per vertex, padded with a valid index of weight 0) and what
 * they give at rest: the weights' L1 norm, the distance from x_j, the normal's angle. */
static void store_vertex(const bake_ctx* c, uint32_t j, const sinew_geodesic_hit* hits,
                         uint32_t count, const double (*xs)[3], const double (*ns)[3],
                         const double* n_ij, const double* nn_ij, const double xj[3],
                         const double nj[3], mls_vertex_report* rep)
{
    uint32_t* idx = c->out->indices + (size_t)j * SINEW_MLS_K;
    float* wp = c->out->weights + (size_t)j * SINEW_MLS_K;
    float* wn = c->out->normal_weights + (size_t)j * SINEW_MLS_K;
    double rest[3] = {0.0, 0.0, 0.0}, nrest[3] = {0.0, 0.0, 0.0}, l1 = 0.0;
    for (uint32_t i = 0; i < SINEW_MLS_K; ++i) {
        if (i < count) {
            idx[i] = hits[i].vertex;
            /* Weights below 1e-15 (a neighbour just inside rho) change no float sum, but their
             * products with small coordinates are subnormal, which x86 cores compute slowly:
             * stored as 0. */
            wp[i] = fabs(n_ij[i]) < MLS_TINY_WEIGHT ? 0.0f : (float)n_ij[i];
            wn[i] = fabs(nn_ij[i]) < MLS_TINY_WEIGHT ? 0.0f : (float)nn_ij[i];
            l1 += fabs(n_ij[i]);
            for (int k = 0; k < 3; ++k) {
                rest[k] += n_ij[i] * xs[i][k];
                nrest[k] += nn_ij[i] * ns[i][k];
            }
        } else {
            idx[i] = hits[0].vertex;
            wp[i] = 0.0f;
            wn[i] = 0.0f;
        }
    }
    rep->weight_l1 = l1;
    rep->rest_error = sqrt((rest[0] - xj[0]) * (rest[0] - xj[0]) +
                           (rest[1] - xj[1]) * (rest[1] - xj[1]) +
                           (rest[2] - xj[2]) * (rest[2] - xj[2]));
    normalise3(nrest);
    double nju[3] = {nj[0], nj[1], nj[2]};
    normalise3(nju);
    double cosang = nrest[0] * nju[0] + nrest[1] * nju[1] + nrest[2] * nju[2];
    rep->normal_angle = acos(cosang > 1.0 ? 1.0 : (cosang < -1.0 ? -1.0 : cosang));
}

/* Vertex j's neighbourhood and quadratic system, into vw. */
static sinew_result bake_vertex_begin(const bake_ctx* c, sinew_geodesic_scratch* scratch,
                                      uint32_t j, vertex_work* vw)
{
    const sinew_geodesic* geo = c->geo;
    mls_vertex_report* rep = &vw->rep;
    memset(rep, 0, sizeof *rep);
    vw->j = j;
    double* xj = vw->xj;
    for (int k = 0; k < 3; ++k) xj[k] = c->render_positions[3u * (size_t)j + (size_t)k];
    double q[3], bary[3];
    uint32_t tri = sinew_geodesic_closest(geo, xj, q, bary);
    rep->surface_distance = sqrt((xj[0] - q[0]) * (xj[0] - q[0]) + (xj[1] - q[1]) * (xj[1] - q[1]) +
                                 (xj[2] - q[2]) * (xj[2] - q[2]));
    uint32_t found =
        sinew_geodesic_nearest(c->host, geo, scratch, tri, q, SINEW_MLS_K + 1u, vw->hits);
    if (found == SINEW_GEODESIC_NONE) return SINEW_ERROR_OUT_OF_MEMORY;
    /* found >= 1: the source triangle's corners are always seeded. */
    vw->count = support_weights(vw->hits, found, rep, vw->w);
    for (uint32_t i = 0; i < vw->count; ++i)
        for (int k = 0; k < 3; ++k) {
            vw->xs[i][k] = geo->positions[3u * (size_t)vw->hits[i].vertex + (size_t)k];
            vw->ns[i][k] = c->sim_normals[3u * (size_t)vw->hits[i].vertex + (size_t)k];
        }
    position_system(vw);
    return SINEW_OK;
}

/* Vertex vw->j's position weights from the quadratic system's eigen-analysis, and the
 * normals' linear system: linear MLS in normal space (the paper's pi(n)). */
static void bake_vertex_middle(const bake_ctx* c, vertex_work* vw)
{
    const uint32_t j = vw->j;
    position_weights(c, vw, &vw->rep, vw->n_ij);
    for (int k = 0; k < 3; ++k) vw->nj[k] = c->render_normals[3u * (size_t)j + (size_t)k];
    centre_and_scale((const double(*)[3])vw->ns, vw->w, vw->count, vw->nj, vw->nsc, vw->njc);
    basis(vw->njc, MLS_LINEAR_TERMS, vw->nb);
    mls_gram((const double(*)[3])vw->nsc, vw->w, vw->count, MLS_LINEAR_TERMS, vw->ng);
}

/* Vertex vw->j's normal weights from their system's eigen-analysis; both weights stored (with
 * the packed entries when the weights carry them), and the vertex's report. */
static void bake_vertex_end(const bake_ctx* c, vertex_work* vw)
{
    const uint32_t j = vw->j, count = vw->count;
    double a[MLS_LINEAR_TERMS], nn_ij[SINEW_MLS_K];
    pinv_apply(vw->ng, vw->nv, vw->nb, a, MLS_LINEAR_TERMS);
    mls_shape_out((const double(*)[3])vw->nsc, vw->w, count, a, MLS_LINEAR_TERMS, nn_ij);
    store_vertex(c, j, vw->hits, count, (const double(*)[3])vw->xs, (const double(*)[3])vw->ns,
                 vw->n_ij, nn_ij, vw->xj, vw->nj, &vw->rep);
    if (c->out->packed) pack_vertex(c->out, j);
}

/* Adds a vertex's report to the figures `st`. */
static void add_report(const mls_vertex_report* rep, sinew_mls_stats* st)
{
    if (rep->flags & MLS_VERTEX_CORRECTED) st->corrected_count++;
    if (rep->flags & MLS_VERTEX_SHORT) st->short_count++;
    if (rep->flags & MLS_VERTEX_INEXACT) st->inexact_count++;
    st->max_surface_distance = fmax(st->max_surface_distance, rep->surface_distance);
    st->max_weight_l1 = fmax(st->max_weight_l1, rep->weight_l1);
    st->max_rest_error = fmax(st->max_rest_error, rep->rest_error);
    st->max_normal_angle = fmax(st->max_normal_angle, rep->normal_angle);
}

/* A job's working memory: the vertices of one batch, and the lane matrices of their
 * eigen-analyses (first: at the block's 64-byte alignment). */
typedef struct bake_work {
    double lanes[MLS_LANE_DOUBLES];
    vertex_work vw[MLS_BATCH];
} bake_work;

/* The eigen-analysis of the quadratic G (linear: the normals' G) of the first `count` (at most
 * MLS_BATCH) vertices of `work`. */
static void bake_eigen(const bake_ctx* c, bake_work* work, uint32_t count, int linear)
{
    vertex_work* vw = work->vw;
#if defined(MLS_JACOBI_AVX)
    if (c->batch_eigen) {
        double* g[MLS_BATCH];
        double* v[MLS_BATCH];
        /* Lanes without a vertex repeat the first: they end when it does. */
        for (uint32_t l = 0; l < MLS_BATCH; ++l) {
            vertex_work* x = &vw[l < count ? l : 0];
            g[l] = linear ? x->ng : x->g;
            v[l] = linear ? x->nv : x->v;
        }
        if (linear)
            jacobi_eigen_avx4(g, v, work->lanes);
        else
            jacobi_eigen_avx10(g, v, work->lanes);
        return;
    }
#else
    (void)c;
#endif
    for (uint32_t l = 0; l < count; ++l) {
        if (linear)
            jacobi_eigen(vw[l].ng, vw[l].nv, MLS_LINEAR_TERMS);
        else
            jacobi_eigen(vw[l].g, vw[l].v, MLS_QUADRATIC_TERMS);
    }
}

/* Chunks of render vertices, MLS_BATCH at a time through the stages, taken one by one from the
 * shared counter until none is left: the threads stay busy to the end whatever their speed
 * (the job system splits a loop into a few fixed ranges, and a thread slowed by other work
 * would leave the others idle at its last one). Any number of jobs, from any range. */
static void bake_jobs(void* data, uint32_t begin, uint32_t end)
{
    (void)begin;
    (void)end;
    bake_ctx* c = (bake_ctx*)data;
    sinew_geodesic_scratch scratch;
    sinew_result r = sinew_geodesic_scratch_init(c->host, c->geo, &scratch);
    bake_work* work = (bake_work*)sinew_host_alloc(c->host, sizeof(bake_work));
    if (r == SINEW_OK && !work) r = SINEW_ERROR_OUT_OF_MEMORY;
    vertex_work* vw = work ? work->vw : NULL;
    for (;;) {
        uint32_t chunk = atomic_fetch_add_explicit(&c->next_chunk, 1u, memory_order_relaxed);
        if (chunk >= c->chunks) break;
        sinew_result cr = r;
        sinew_mls_stats* st = &c->chunk_stats[chunk];
        memset(st, 0, sizeof *st);
        uint32_t v0 = chunk * MLS_CHUNK;
        uint32_t v1 = c->render_count - v0 < MLS_CHUNK ? c->render_count : v0 + MLS_CHUNK;
        for (uint32_t j = v0; j < v1 && cr == SINEW_OK; j += MLS_BATCH) {
            uint32_t count = v1 - j < MLS_BATCH ? v1 - j : MLS_BATCH;
            for (uint32_t l = 0; l < count && cr == SINEW_OK; ++l)
                cr = bake_vertex_begin(c, &scratch, j + l, &vw[l]);
            if (cr != SINEW_OK) break;
            bake_eigen(c, work, count, 0);
            for (uint32_t l = 0; l < count; ++l) bake_vertex_middle(c, &vw[l]);
            bake_eigen(c, work, count, 1);
            for (uint32_t l = 0; l < count; ++l) {
                bake_vertex_end(c, &vw[l]);
                add_report(&vw[l].rep, st);
            }
        }
        c->chunk_status[chunk] = cr;
    }
    sinew_host_free(c->host, work);
    sinew_geodesic_scratch_free(c->host, &scratch);
}

/* Checks one mesh view; `role` names it in the log line. */
static sinew_result check_mesh(const sinew_host_api* host, const sinew_mesh_view* m,
                               const char* role, int need_triangles)
{
    if (!m)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "sinew_mls_bake: %s mesh is NULL",
                               role);
    if (m->vertex_count == 0 || (need_triangles && m->triangle_count == 0))
        return sinew_host_fail(host, SINEW_ERROR_EMPTY_MESH,
                               "sinew_mls_bake: %s mesh has %u vertices and %u triangles", role,
                               m->vertex_count, m->triangle_count);
    if (!m->positions || (m->triangle_count && !m->indices))
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_mls_bake: %s mesh has NULL positions or indices", role);
    for (size_t i = 0; i < 3u * (size_t)m->vertex_count; ++i)
        if (!isfinite(m->positions[i]) || (m->normals && !isfinite(m->normals[i])))
            return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                                   "sinew_mls_bake: %s vertex %zu has a non-finite %s", role,
                                   i / 3u, isfinite(m->positions[i]) ? "normal" : "position");
    for (size_t i = 0; i < 3u * (size_t)m->triangle_count; ++i)
        if (m->indices[i] >= m->vertex_count)
            return sinew_host_fail(host, SINEW_ERROR_VERTEX_INDEX,
                                   "sinew_mls_bake: %s triangle %zu uses vertex %u of %u", role,
                                   i / 3u, m->indices[i], m->vertex_count);
    return SINEW_OK;
}

static double bounding_diagonal(const float* p, uint32_t count)
{
    double lo[3] = {p[0], p[1], p[2]}, hi[3] = {p[0], p[1], p[2]};
    for (size_t i = 0; i < count; ++i)
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(lo[k], p[3u * i + (size_t)k]);
            hi[k] = fmax(hi[k], p[3u * i + (size_t)k]);
        }
    double d = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                    (hi[2] - lo[2]) * (hi[2] - lo[2]));
    return d > 0.0 ? d : 1.0;
}

/* Area-weighted normals without validation (the callers have checked the mesh). */
static void area_normals(const float* positions, uint32_t vertex_count, const uint32_t* indices,
                         uint32_t triangle_count, float* out)
{
    memset(out, 0, 3u * (size_t)vertex_count * sizeof(float));
    for (uint32_t t = 0; t < triangle_count; ++t) {
        const uint32_t* tri = indices + 3u * (size_t)t;
        const float* a = positions + 3u * (size_t)tri[0];
        const float* b = positions + 3u * (size_t)tri[1];
        const float* c = positions + 3u * (size_t)tri[2];
        float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        float e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        float f[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                      e1[0] * e2[1] - e1[1] * e2[0]};
        for (int k = 0; k < 3; ++k)
            for (int q = 0; q < 3; ++q) out[3u * (size_t)tri[k] + (size_t)q] += f[q];
    }
    for (uint32_t v = 0; v < vertex_count; ++v) {
        float* n = out + 3u * (size_t)v;
        float l = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (l > 0.0f) {
            n[0] /= l, n[1] /= l, n[2] /= l;
        } else {
            n[0] = 0.0f, n[1] = 0.0f, n[2] = 1.0f;
        }
    }
}

/* Every render vertex's weights (bake_vertex) in chunks over the job system; a chunk whose
 * geodesic searches ran out of memory fails the bake. */
static sinew_result bake_all(const sinew_host_api* host, const sinew_geodesic* geo,
                             const sinew_mesh_view* simulation, const sinew_mesh_view* render,
                             const float* sim_normals, const float* render_normals,
                             sinew_mls_stats* chunk_stats, sinew_result* status,
                             int batch_eigen, sinew_mls_weights* out)
{
    const uint32_t R = render->vertex_count;
    const uint32_t chunks = (R + MLS_CHUNK - 1u) / MLS_CHUNK;
    bake_ctx ctx;
    ctx.host = host;
    ctx.geo = geo;
    ctx.sim_normals = sim_normals;
    ctx.render_positions = render->positions;
    ctx.render_normals = render_normals;
    ctx.render_count = R;
    ctx.diagonal = bounding_diagonal(simulation->positions, simulation->vertex_count);
    ctx.out = out;
    ctx.chunk_stats = chunk_stats;
    ctx.chunk_status = status;
    ctx.batch_eigen = batch_eigen;
    ctx.chunks = chunks;
    atomic_init(&ctx.next_chunk, 0u);
    /* One job per thread, each taking chunks until none is left. */
    uint32_t jobs = host->jobs.thread_count ? host->jobs.thread_count : 1u;
    sinew_host_parallel_for(host, bake_jobs, &ctx, jobs < chunks ? jobs : chunks, 1u);
    for (uint32_t ch = 0; ch < chunks; ++ch)
        if (status[ch] != SINEW_OK)
            return sinew_host_fail(host, status[ch],
                                   "sinew_mls_bake: out of memory for geodesic searches");
    return SINEW_OK;
}

/* The bake's figures over its chunks' (counts add up, maxima are the largest of any order). */
static void gather_stats(const sinew_mls_stats* chunk_stats, uint32_t chunks, sinew_mls_stats* st)
{
    for (uint32_t ch = 0; ch < chunks; ++ch) {
        const sinew_mls_stats* c = &chunk_stats[ch];
        st->corrected_count += c->corrected_count;
        st->short_count += c->short_count;
        st->inexact_count += c->inexact_count;
        st->max_surface_distance = fmax(st->max_surface_distance, c->max_surface_distance);
        st->max_weight_l1 = fmax(st->max_weight_l1, c->max_weight_l1);
        st->max_rest_error = fmax(st->max_rest_error, c->max_rest_error);
        st->max_normal_angle = fmax(st->max_normal_angle, c->max_normal_angle);
    }
}

sinew_result sinew_mls_bake(const sinew_host_api* host, const sinew_mesh_view* simulation,
                            const sinew_mesh_view* render, sinew_mls_weights* out)
{
    return sinew_mls_bake_simd(host, SINEW_SIMD_AUTO, simulation, render, out);
}

sinew_result sinew_mls_bake_simd(const sinew_host_api* host, sinew_simd simd,
                                 const sinew_mesh_view* simulation, const sinew_mesh_view* render,
                                 sinew_mls_weights* out)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!out)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "sinew_mls_bake: out is NULL");
    memset(out, 0, sizeof *out);
    if ((unsigned)simd > (unsigned)SINEW_SIMD_AUTO || simd == SINEW_SIMD_COUNT)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_mls_bake: simd value %d is not an instruction set",
                               (int)simd);
    sinew_simd resolved = sinew_mls_resolve(simd);
    if (resolved == SINEW_SIMD_COUNT)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "sinew_mls_bake: simd '%s' is not built in or not run by this CPU",
                               sinew_simd_name(simd));
#if defined(MLS_JACOBI_AVX)
    const int batch_eigen = resolved == SINEW_SIMD_AVX2;
#else
    const int batch_eigen = 0;
#endif
    sinew_result r = check_mesh(host, simulation, "simulation", 1);
    if (r == SINEW_OK) r = check_mesh(host, render, "render", 0);
    if (r != SINEW_OK) return r;
    if (!render->normals && render->triangle_count == 0)
        return sinew_host_fail(host, SINEW_ERROR_EMPTY_MESH,
                               "sinew_mls_bake: render mesh has neither normals nor triangles to "
                               "compute them from");
    const uint32_t R = render->vertex_count, S = simulation->vertex_count;
    const size_t entries = (size_t)R * SINEW_MLS_K;
    float* sim_normals = NULL;
    float* render_normals = NULL;
    uint32_t chunks = (R + MLS_CHUNK - 1u) / MLS_CHUNK;
    sinew_mls_stats* chunk_stats =
        (sinew_mls_stats*)sinew_host_alloc(host, chunks * sizeof(sinew_mls_stats));
    sinew_result* status = (sinew_result*)sinew_host_alloc(host, chunks * sizeof(sinew_result));
    out->indices = (uint32_t*)sinew_host_alloc(host, entries * sizeof(uint32_t));
    out->weights = (float*)sinew_host_alloc(host, entries * sizeof(float));
    out->normal_weights = (float*)sinew_host_alloc(host, entries * sizeof(float));
    /* The packed entries are written with the arrays, vertex by vertex in the bake's jobs. */
    if (packs(S))
        out->packed = (sinew_mls_packed_vertex*)sinew_host_alloc(
            host, (size_t)R * sizeof(sinew_mls_packed_vertex));
    if (!simulation->normals)
        sim_normals = (float*)sinew_host_alloc(host, 3u * (size_t)S * sizeof(float));
    if (!render->normals)
        render_normals = (float*)sinew_host_alloc(host, 3u * (size_t)R * sizeof(float));
    sinew_geodesic geo;
    memset(&geo, 0, sizeof geo);
    if (!chunk_stats || !status || !out->indices || !out->weights || !out->normal_weights ||
        (packs(S) && !out->packed) || (!simulation->normals && !sim_normals) ||
        (!render->normals && !render_normals)) {
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                            "sinew_mls_bake: out of memory for %u render vertices", R);
        goto done;
    }
    if (sim_normals)
        area_normals(simulation->positions, S, simulation->indices, simulation->triangle_count,
                     sim_normals);
    if (render_normals)
        area_normals(render->positions, R, render->indices, render->triangle_count,
                     render_normals);
    r = sinew_geodesic_build(host, "sinew_mls_bake", simulation->positions, S,
                             simulation->indices, simulation->triangle_count, &geo);
    if (r != SINEW_OK) goto done;
    r = bake_all(host, &geo, simulation, render, sim_normals ? sim_normals : simulation->normals,
                 render_normals ? render_normals : render->normals, chunk_stats, status,
                 batch_eigen, out);
    if (r != SINEW_OK) goto done;
    out->render_count = R;
    out->simulation_count = S;
    gather_stats(chunk_stats, chunks, &out->stats);
done:
    sinew_geodesic_free(host, &geo);
    sinew_host_free(host, chunk_stats);
    sinew_host_free(host, status);
    sinew_host_free(host, sim_normals);
    sinew_host_free(host, render_normals);
    if (r != SINEW_OK) sinew_mls_free(host, out);
    return r;
}

void sinew_mls_free(const sinew_host_api* host, sinew_mls_weights* weights)
{
    if (!weights) return;
    if (host && !weights->borrowed) {
        sinew_host_free(host, weights->indices);
        sinew_host_free(host, weights->weights);
        sinew_host_free(host, weights->normal_weights);
    }
    if (host) {
        sinew_host_free(host, weights->packed);
    }
    memset(weights, 0, sizeof *weights);
}

/* ---- per frame ---- */

/* The reference kernel: one pass per vertex through the functions the CUDA kernels use. */
void sinew_mls_kernel_scalar(const sinew_mls_frame* f, uint32_t begin, uint32_t end)
{
    if (!f->sim_normals) {
        for (uint32_t j = begin; j < end; ++j) {
            size_t e = (size_t)j * SINEW_MLS_K;
            sinew_mls_eval_position(f->indices + e, f->weights + e, f->sim_positions,
                                    (float*)((char*)f->out_positions + f->position_stride * j));
        }
        return;
    }
    for (uint32_t j = begin; j < end; ++j) {
        size_t e = (size_t)j * SINEW_MLS_K;
        sinew_mls_eval_position(f->indices + e, f->weights + e, f->sim_positions,
                                (float*)((char*)f->out_positions + f->position_stride * j));
        sinew_mls_eval_normal(f->indices + e, f->normal_weights + e, f->sim_normals,
                              (float*)((char*)f->out_normals + f->normal_stride * j));
    }
}

/* No SSE kernel: the AVX kernel's masked loads are what make 128-bit lanes safe at the
 * arrays' ends, and SSE would need a copy of the inputs. No AVX-512 kernel: the work is loads,
 * not arithmetic, and wider registers gain nothing (see the kernel). */
sinew_simd sinew_mls_resolve(sinew_simd simd)
{
    return sinew_simd_resolve_up_to(simd, SINEW_SIMD_AVX2);
}

static sinew_mls_kernel_fn kernel_for(sinew_simd resolved)
{
    switch (resolved) {
    case SINEW_SIMD_SCALAR:
        return sinew_mls_kernel_scalar;
#if defined(SINEW_SKIN_X86)
    case SINEW_SIMD_AVX2:
        return sinew_mls_kernel_avx2;
#endif
    default:
        return NULL;
    }
}

typedef struct apply_ctx {
    sinew_mls_kernel_fn kernel;
    sinew_mls_frame frame;
} apply_ctx;

static void apply_range(void* data, uint32_t begin, uint32_t end)
{
    const apply_ctx* c = (const apply_ctx*)data;
    c->kernel(&c->frame, begin, end);
}

static int all_finite(const float* v, size_t count)
{
    /* No early exit: the loop vectorises, and the all-finite case is the one that matters. */
    int ok = 1;
    for (size_t i = 0; i < count; ++i) ok &= isfinite(v[i]) ? 1 : 0;
    return ok;
}

sinew_result sinew_mls_apply(const sinew_host_api* host, const sinew_mls_weights* weights,
                             uint32_t simulation_count, const float* sim_positions,
                             const float* sim_normals, float* out_positions,
                             size_t position_stride, float* out_normals, size_t normal_stride)
{
    return sinew_mls_apply_simd(host, SINEW_SIMD_AUTO, weights, simulation_count, sim_positions,
                                sim_normals, out_positions, position_stride, out_normals,
                                normal_stride, NULL, 0u);
}

size_t sinew_mls_scratch_size(const sinew_mls_weights* weights)
{
    if (!weights || !weights->packed) return 0u;
    return 8u * sizeof(float) * (size_t)weights->simulation_count;
}

/* sinew_mls_apply's arrays: weights baked for simulation_count vertices, finite inputs,
 * outputs with strides of whole floats (at least 12 bytes), distinct, and scratch big enough. */
static sinew_result check_apply(const sinew_host_api* host, const sinew_mls_weights* weights,
                                uint32_t simulation_count, const float* sim_positions,
                                const float* sim_normals, const float* out_positions,
                                size_t position_stride, const float* out_normals,
                                size_t normal_stride, const void* scratch, size_t scratch_size)
{
    if (!weights || !weights->indices || !weights->weights || !weights->normal_weights ||
        weights->render_count == 0)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_mls_apply: weights are NULL or empty");
    if (simulation_count != weights->simulation_count)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_mls_apply: %u simulation vertices given, the weights were "
                               "baked for %u",
                               simulation_count, weights->simulation_count);
    if (!sim_positions)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_mls_apply: sim_positions is NULL");
    if (out_normals && !sim_normals)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_mls_apply: out_normals given without sim_normals");
    if (!out_positions)
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING,
                               "sinew_mls_apply: out_positions is NULL");
    if (position_stride < 12u || position_stride % 4u ||
        (out_normals && (normal_stride < 12u || normal_stride % 4u)))
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING,
                               "sinew_mls_apply: strides must be multiples of 4 and at least 12 "
                               "bytes (position %zu, normal %zu)",
                               position_stride, normal_stride);
    if (out_normals == out_positions)
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING,
                               "sinew_mls_apply: positions and normals are the same array");
    if (scratch && scratch_size < sinew_mls_scratch_size(weights))
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING,
                               "sinew_mls_apply: scratch of %zu bytes, these weights need %zu",
                               scratch_size, sinew_mls_scratch_size(weights));
    if (!all_finite(sim_positions, 3u * (size_t)simulation_count))
        return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                               "sinew_mls_apply: sim_positions holds NaN or infinity");
    if (sim_normals && !all_finite(sim_normals, 3u * (size_t)simulation_count))
        return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                               "sinew_mls_apply: sim_normals holds NaN or infinity");
    return SINEW_OK;
}

sinew_result sinew_mls_apply_simd(const sinew_host_api* host, sinew_simd simd,
                                  const sinew_mls_weights* weights, uint32_t simulation_count,
                                  const float* sim_positions, const float* sim_normals,
                                  float* out_positions, size_t position_stride,
                                  float* out_normals, size_t normal_stride, void* scratch,
                                  size_t scratch_size)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    if ((unsigned)simd > (unsigned)SINEW_SIMD_AUTO || simd == SINEW_SIMD_COUNT)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_mls_apply: simd value %d is not an instruction set",
                               (int)simd);
    sinew_mls_kernel_fn kernel = kernel_for(sinew_mls_resolve(simd));
    if (!kernel)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "sinew_mls_apply: simd '%s' is not built in or not run by this CPU",
                               sinew_simd_name(simd));
    if (!position_stride) position_stride = 12u;
    if (!normal_stride) normal_stride = 12u;
    sinew_result r = check_apply(host, weights, simulation_count, sim_positions, sim_normals,
                                 out_positions, position_stride, out_normals, normal_stride,
                                 scratch, scratch_size);
    if (r != SINEW_OK) return r;
    apply_ctx ctx;
    ctx.kernel = kernel;
    ctx.frame.indices = weights->indices;
    ctx.frame.weights = weights->weights;
    ctx.frame.normal_weights = weights->normal_weights;
    ctx.frame.sim_positions = sim_positions;
    ctx.frame.sim_normals = out_normals ? sim_normals : NULL;
    ctx.frame.out_positions = out_positions;
    ctx.frame.position_stride = position_stride;
    ctx.frame.out_normals = out_normals;
    ctx.frame.normal_stride = normal_stride;
    ctx.frame.packed = NULL;
    ctx.frame.records = NULL;
    float* owned = NULL; /* records allocated for this call */
#if defined(SINEW_SKIN_X86)
    /* Each simulation vertex is read by about 100 render-vertex entries: interleaving its
     * position and normal once lets the kernel fetch both with one load per entry. Without
     * the memory the kernel reads the caller's arrays instead: the same bits, more slowly. */
    if (kernel == sinew_mls_kernel_avx2 && ctx.frame.sim_normals && weights->packed) {
        float* records = (float*)scratch;
        if (!records)
            records = owned = (float*)sinew_host_alloc(host, sinew_mls_scratch_size(weights));
        if (records) {
            sinew_mls_pack_avx2(sim_positions, sim_normals, simulation_count, records);
            ctx.frame.records = records;
            ctx.frame.packed = weights->packed;
        }
    }
#endif
    /* Chunks of 1024 render vertices: big enough to hide the job system's overhead. */
    sinew_host_parallel_for(host, apply_range, &ctx, weights->render_count, 1024u);
    sinew_host_free(host, owned);
    return SINEW_OK;
}

sinew_result sinew_mls_vertex_normals(const sinew_host_api* host, const float* positions,
                                      uint32_t vertex_count, const uint32_t* indices,
                                      uint32_t triangle_count, float* out_normals)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    if (vertex_count == 0 || triangle_count == 0)
        return sinew_host_fail(host, SINEW_ERROR_EMPTY_MESH,
                               "sinew_mls_vertex_normals: %u vertices and %u triangles",
                               vertex_count, triangle_count);
    if (!positions || !indices || !out_normals)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_mls_vertex_normals: NULL positions, indices or output");
    for (size_t i = 0; i < 3u * (size_t)triangle_count; ++i)
        if (indices[i] >= vertex_count)
            return sinew_host_fail(host, SINEW_ERROR_VERTEX_INDEX,
                                   "sinew_mls_vertex_normals: triangle %zu uses vertex %u of %u",
                                   i / 3u, indices[i], vertex_count);
    area_normals(positions, vertex_count, indices, triangle_count, out_normals);
    return SINEW_OK;
}

/* ---- serialisation ---- */

static uint64_t fnv1a(const uint8_t* p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void put_le(uint8_t* p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t* p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

size_t sinew_mls_blob_size(const sinew_mls_weights* weights)
{
    if (!weights || !weights->render_count) return 0;
    return MLS_BLOB_HEADER + 12u * (size_t)weights->render_count * SINEW_MLS_K + 8u;
}

sinew_result sinew_mls_write(const sinew_host_api* host, const sinew_mls_weights* weights,
                             void* dst, size_t capacity)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!weights || !weights->render_count || !weights->indices || !weights->weights ||
        !weights->normal_weights || !dst)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_mls_write: weights empty or destination NULL");
    size_t size = sinew_mls_blob_size(weights);
    if (capacity < size)
        return sinew_host_fail(host, SINEW_ERROR_OUTPUT_BINDING,
                               "sinew_mls_write: %zu bytes of room, the blob needs %zu", capacity,
                               size);
    uint8_t* p = (uint8_t*)dst;
    put_le(p + 0, MLS_BLOB_MAGIC, 4);
    put_le(p + 4, MLS_BLOB_VERSION, 4);
    put_le(p + 8, SINEW_MLS_K, 4);
    put_le(p + 12, weights->render_count, 4);
    put_le(p + 16, weights->simulation_count, 4);
    put_le(p + 20, 0u, 4);
    size_t entries = (size_t)weights->render_count * SINEW_MLS_K;
    uint8_t* q = p + MLS_BLOB_HEADER;
    for (size_t i = 0; i < entries; ++i, q += 4) put_le(q, weights->indices[i], 4);
    const float* arrays[2] = {weights->weights, weights->normal_weights};
    for (int a = 0; a < 2; ++a)
        for (size_t i = 0; i < entries; ++i, q += 4) {
            uint32_t u;
            memcpy(&u, arrays[a] + i, 4);
            put_le(q, u, 4);
        }
    put_le(q, fnv1a(p, (size_t)(q - p)), 8);
    return SINEW_OK;
}

/* The header's fields and the blob's size: *R, *S and *need (the blob's bytes) for a good
 * one; `consumed` NULL: nothing may follow the blob. */
static sinew_result check_blob_header(const sinew_host_api* host, const uint8_t* p, size_t size,
                                      const size_t* consumed, uint32_t* R, uint32_t* S,
                                      size_t* need)
{
    if (size >= 4u && get_le(p, 4) != MLS_BLOB_MAGIC)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "sinew_mls_read: not an MLS weight blob (magic 0x%08x)",
                               (unsigned)get_le(p, 4));
    if (size < MLS_BLOB_HEADER)
        return sinew_host_fail(host, SINEW_ERROR_FILE_TRUNCATED,
                               "sinew_mls_read: %zu bytes, the header alone needs %u", size,
                               MLS_BLOB_HEADER);
    uint32_t version = (uint32_t)get_le(p + 4, 4), k = (uint32_t)get_le(p + 8, 4);
    *R = (uint32_t)get_le(p + 12, 4);
    *S = (uint32_t)get_le(p + 16, 4);
    uint32_t flags = (uint32_t)get_le(p + 20, 4);
    if (version != MLS_BLOB_VERSION || k != SINEW_MLS_K || *R == 0 || *S == 0 || flags != 0)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "sinew_mls_read: bad header (version %u, K %u, %u render and %u "
                               "simulation vertices, flags %u)",
                               version, k, *R, *S, flags);
    *need = MLS_BLOB_HEADER + 12u * (size_t)*R * SINEW_MLS_K + 8u;
    if (size < *need)
        return sinew_host_fail(host, SINEW_ERROR_FILE_TRUNCATED,
                               "sinew_mls_read: %zu bytes, %u render vertices need %zu", size, *R,
                               *need);
    if (size > *need && !consumed)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "sinew_mls_read: %zu bytes after the %zu-byte blob", size - *need,
                               *need);
    return SINEW_OK;
}

/* Whether the blob's arrays can be used where they lie: a little-endian host and arrays at a
 * 4-byte boundary. */
static bool blob_arrays_usable(const uint8_t* p)
{
    const uint32_t one = 1u;
    uint8_t low;
    memcpy(&low, &one, 1);
    return low == 1u && (uintptr_t)(p + MLS_BLOB_HEADER) % sizeof(uint32_t) == 0;
}

/* The three arrays of `entries` entries: pointing into the blob when `in_place` and the blob
 * allows it (out->borrowed), else copies from the host allocator. */
static sinew_result take_arrays(const sinew_host_api* host, const uint8_t* p, size_t entries,
                                bool in_place, sinew_mls_weights* out)
{
    const uint8_t* q = p + MLS_BLOB_HEADER;
    if (in_place && blob_arrays_usable(p)) {
        /* The blob outlives the weights (sinew_mls_read_in_place), and nothing writes them. */
        out->indices = (uint32_t*)(uintptr_t)q;
        out->weights = (float*)(uintptr_t)(q + 4u * entries);
        out->normal_weights = (float*)(uintptr_t)(q + 8u * entries);
        out->borrowed = 1;
        return SINEW_OK;
    }
    out->indices = (uint32_t*)sinew_host_alloc(host, entries * sizeof(uint32_t));
    out->weights = (float*)sinew_host_alloc(host, entries * sizeof(float));
    out->normal_weights = (float*)sinew_host_alloc(host, entries * sizeof(float));
    if (!out->indices || !out->weights || !out->normal_weights)
        return SINEW_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < entries; ++i, q += 4) out->indices[i] = (uint32_t)get_le(q, 4);
    float* arrays[2] = {out->weights, out->normal_weights};
    for (int a = 0; a < 2; ++a)
        for (size_t i = 0; i < entries; ++i, q += 4) {
            uint32_t u = (uint32_t)get_le(q, 4);
            memcpy(arrays[a] + i, &u, 4);
        }
    return SINEW_OK;
}

/* What is wrong with render vertex j's entries (NULL: nothing): an index of S or more, a
 * weight that is not finite, or weights that do not sum to 1. */
static const char* vertex_entries_fault(const sinew_mls_weights* w, uint32_t j, uint32_t S)
{
    const float* arrays[2] = {w->weights, w->normal_weights};
    double sums[2] = {0.0, 0.0};
    for (uint32_t i = 0; i < SINEW_MLS_K; ++i) {
        size_t e = (size_t)j * SINEW_MLS_K + i;
        if (w->indices[e] >= S) return "a simulation index out of range";
        for (int a = 0; a < 2; ++a) {
            if (!isfinite(arrays[a][e])) return "a non-finite weight";
            sums[a] += arrays[a][e];
        }
    }
    if (fabs(sums[0] - 1.0) > 1e-3 || fabs(sums[1] - 1.0) > 1e-3)
        return "weights that do not sum to 1";
    return NULL;
}

/* sinew_mls_read and sinew_mls_read_in_place: in_place lets the arrays point into `data`. */
static sinew_result read_blob(const sinew_host_api* host, const void* data, size_t size,
                              size_t* consumed, bool in_place, sinew_mls_weights* out)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!out || !data)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_mls_read: data or out is NULL");
    memset(out, 0, sizeof *out);
    const uint8_t* p = (const uint8_t*)data;
    uint32_t R = 0, S = 0;
    size_t need = 0;
    sinew_result r = check_blob_header(host, p, size, consumed, &R, &S, &need);
    if (r != SINEW_OK) return r;
    if (fnv1a(p, need - 8u) != get_le(p + need - 8u, 8))
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT, "sinew_mls_read: checksum mismatch");
    if (take_arrays(host, p, (size_t)R * SINEW_MLS_K, in_place, out) != SINEW_OK) {
        sinew_mls_free(host, out);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "sinew_mls_read: out of memory for %u render vertices", R);
    }
    for (uint32_t j = 0; j < R; ++j) {
        const char* bad = vertex_entries_fault(out, j, S);
        if (bad) {
            sinew_mls_free(host, out);
            return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                                   "sinew_mls_read: render vertex %u has %s", j, bad);
        }
    }
    out->render_count = R;
    out->simulation_count = S;
    r = make_packed(host, out, "sinew_mls_read");
    if (r != SINEW_OK) {
        sinew_mls_free(host, out);
        return r;
    }
    if (consumed) *consumed = need;
    return SINEW_OK;
}

sinew_result sinew_mls_read(const sinew_host_api* host, const void* data, size_t size,
                            size_t* consumed, sinew_mls_weights* out)
{
    return read_blob(host, data, size, consumed, false, out);
}

sinew_result sinew_mls_read_in_place(const sinew_host_api* host, const void* data, size_t size,
                                     size_t* consumed, sinew_mls_weights* out)
{
    return read_blob(host, data, size, consumed, true, out);
}
