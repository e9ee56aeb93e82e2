/* Test fixture for the geometric CPU backends. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200112L
#include "skin_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_features.h"

/* ---- host ---- */

static void* fixture_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    void* p = NULL;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    return posix_memalign(&p, alignment, size) == 0 ? p : NULL;
}

static void fixture_free(void* ptr, void* user)
{
    (void)user;
    free(ptr);
}

static void fixture_parallel_for(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain,
                                 void* user)
{
    skin_host* host = (skin_host*)user;
    host->calls++;
    assert_true(grain > 0);
    if (host->split == SKIN_SPLIT_SERIAL) {
        fn(data, 0, count);
        return;
    }
    /* Chunk ends that fall everywhere relative to the kernels' batches of 4, 8 and 16, run
     * last to first: a store that strayed past a chunk's end would overwrite what the chunk
     * after it had already written, and the results would differ from a serial run. */
    static const uint32_t sizes[] = {1, 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
    uint32_t ends[4096], chunks = 0, begin = 0;
    while (begin < count) {
        uint32_t n = sizes[chunks % (sizeof sizes / sizeof sizes[0])];
        begin = count - begin < n ? count : begin + n;
        assert_true(chunks < 4096);
        ends[chunks++] = begin;
    }
    while (chunks > 0) {
        --chunks;
        fn(data, chunks ? ends[chunks - 1] : 0u, ends[chunks]);
    }
}

void skin_host_init(skin_host* host, skin_split split)
{
    memset(host, 0, sizeof *host);
    sinew_test_log_init(&host->log);
    host->split = split;
    host->api.struct_size = (uint32_t)sizeof(sinew_host_api);
    host->api.allocator.alloc = fixture_alloc;
    host->api.allocator.free = fixture_free;
    host->api.logger = host->log.logger;
    host->api.log_level = SINEW_LOG_WARNING;
    host->api.jobs.parallel_for = fixture_parallel_for;
    host->api.jobs.thread_count = 1;
    host->api.jobs.user = host;
}

/* ---- random numbers ---- */

double skin_rand(skin_rng* rng)
{
    rng->s ^= rng->s << 13;
    rng->s ^= rng->s >> 7;
    rng->s ^= rng->s << 17;
    return (double)(rng->s >> 11) / 9007199254740992.0;
}

double skin_rand_range(skin_rng* rng, double lo, double hi)
{
    return lo + (hi - lo) * skin_rand(rng);
}

/* ---- rigs ---- */

uint32_t skin_padded_width(uint32_t max_influences)
{
    return max_influences <= 4 ? 4 : max_influences <= 8 ? 8 : max_influences;
}

void skin_rig_alloc(skin_rig* rig, uint32_t vertices, uint32_t joints, uint32_t width)
{
    memset(rig, 0, sizeof *rig);
    rig->positions = calloc((size_t)vertices * 3, sizeof(float));
    rig->normals = calloc((size_t)vertices * 3, sizeof(float));
    rig->joints = calloc((size_t)vertices * width, sizeof(uint32_t));
    rig->weights = calloc((size_t)vertices * width, sizeof(float));
    rig->parents = calloc(joints, sizeof(int32_t));
    rig->names = calloc(joints, sizeof(char*));
    rig->identity = calloc((size_t)joints * 16, sizeof(float));
    assert_non_null(rig->positions);
    assert_non_null(rig->normals);
    assert_non_null(rig->joints);
    assert_non_null(rig->weights);
    assert_non_null(rig->parents);
    assert_non_null(rig->names);
    assert_non_null(rig->identity);
    for (uint32_t j = 0; j < joints; ++j) {
        rig->parents[j] = (int32_t)j - 1;
        rig->names[j] = "";
        skin_mat_identity(rig->identity + 16 * j);
    }
    sinew_rig_view* v = &rig->view;
    v->struct_size = (uint32_t)sizeof(sinew_rig_view);
    v->joint_count = joints;
    v->parents = rig->parents;
    v->names = rig->names;
    v->bind_matrices = rig->identity;
    v->inverse_bind_matrices = rig->identity;
    v->render_mesh.vertex_count = vertices;
    v->render_mesh.positions = rig->positions;
    v->render_mesh.normals = rig->normals;
    v->max_influences = width;
    v->padded_width = width;
    v->padded_joints = rig->joints;
    v->padded_weights = rig->weights;
}

void skin_rig_free(skin_rig* rig)
{
    free(rig->positions);
    free(rig->normals);
    free(rig->joints);
    free(rig->weights);
    free(rig->parents);
    free((void*)rig->names);
    free(rig->identity);
    memset(rig, 0, sizeof *rig);
}

void skin_rig_random(skin_rig* rig, uint32_t vertices, uint32_t joints, uint32_t max_influences,
                     uint64_t seed)
{
    skin_rig_random_width(rig, vertices, joints, max_influences, skin_padded_width(max_influences),
                          seed);
}

void skin_rig_random_width(skin_rig* rig, uint32_t vertices, uint32_t joints,
                           uint32_t max_influences, uint32_t width, uint64_t seed)
{
    assert_true(max_influences >= 1 && max_influences <= joints && max_influences <= width);
    skin_rig_alloc(rig, vertices, joints, width);
    rig->view.max_influences = max_influences;
    skin_rng rng = {seed * 0x9E3779B97F4A7C15ull + 1};
    for (uint32_t v = 0; v < vertices; ++v) {
        double len = 0.0, n[3];
        for (int c = 0; c < 3; ++c) {
            rig->positions[3 * v + c] = (float)skin_rand_range(&rng, -1.0, 1.0);
            n[c] = skin_rand_range(&rng, -1.0, 1.0);
            len += n[c] * n[c];
        }
        len = sqrt(len);
        if (len < 1e-3) {
            n[0] = 1.0;
            len = 1.0;
        }
        for (int c = 0; c < 3; ++c) rig->normals[3 * v + c] = (float)(n[c] / len);
        /* The first vertex uses every influence so the width is really exercised. */
        uint32_t count = v == 0 ? max_influences
                                : 1 + (uint32_t)(skin_rand(&rng) * max_influences) % max_influences;
        double w[64], sum = 0.0;
        uint32_t used[64];
        for (uint32_t k = 0; k < count; ++k) {
            uint32_t j;
            bool fresh;
            do { /* distinct joints */
                j = (uint32_t)(skin_rand(&rng) * joints) % joints;
                fresh = true;
                for (uint32_t i = 0; i < k; ++i) fresh = fresh && used[i] != j;
            } while (!fresh);
            used[k] = j;
            w[k] = skin_rand_range(&rng, 0.05, 1.0);
            sum += w[k];
        }
        for (uint32_t a = 0; a < count; ++a) /* sort by decreasing weight */
            for (uint32_t b = a + 1; b < count; ++b)
                if (w[b] > w[a]) {
                    double tw = w[a];
                    w[a] = w[b];
                    w[b] = tw;
                    uint32_t tj = used[a];
                    used[a] = used[b];
                    used[b] = tj;
                }
        for (uint32_t k = 0; k < count; ++k) {
            rig->joints[(size_t)v * width + k] = used[k];
            rig->weights[(size_t)v * width + k] = (float)(w[k] / sum);
        }
    }
}

/* ---- matrices ---- */

void skin_mat_identity(float m[16])
{
    memset(m, 0, 16 * sizeof(float));
    m[0] = m[5] = m[10] = m[15] = 1.0f;
}

static void quat_to_mat3(const double q[4], double r[3][3])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    r[0][0] = 1 - 2 * (y * y + z * z);
    r[0][1] = 2 * (x * y - w * z);
    r[0][2] = 2 * (x * z + w * y);
    r[1][0] = 2 * (x * y + w * z);
    r[1][1] = 1 - 2 * (x * x + z * z);
    r[1][2] = 2 * (y * z - w * x);
    r[2][0] = 2 * (x * z - w * y);
    r[2][1] = 2 * (y * z + w * x);
    r[2][2] = 1 - 2 * (x * x + y * y);
}

static void store_mat(float m[16], const double a[3][3], const double t[3])
{
    skin_mat_identity(m);
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) m[4 * c + r] = (float)a[r][c];
        m[12 + r] = (float)t[r];
    }
}

void skin_mat_rotation(float m[16], double x, double y, double z, double angle, const double t[3])
{
    double s = sin(angle / 2), q[4] = {x * s, y * s, z * s, cos(angle / 2)}, r[3][3];
    quat_to_mat3(q, r);
    double zero[3] = {0, 0, 0};
    store_mat(m, r, t ? t : zero);
}

static void random_quat(skin_rng* rng, double q[4])
{
    double n;
    do {
        n = 0.0;
        for (int i = 0; i < 4; ++i) {
            q[i] = skin_rand_range(rng, -1.0, 1.0);
            n += q[i] * q[i];
        }
    } while (n < 0.01 || n > 1.0);
    n = sqrt(n);
    for (int i = 0; i < 4; ++i) q[i] /= n;
}

static void mat3_mul(const double a[3][3], const double b[3][3], double out[3][3])
{
    double t[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            t[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
    memcpy(out, t, sizeof t);
}

void skin_mat_random(float m[16], skin_rng* rng, bool non_rigid)
{
    double q[4], r[3][3], t[3];
    random_quat(rng, q);
    quat_to_mat3(q, r);
    for (int i = 0; i < 3; ++i) t[i] = skin_rand_range(rng, -0.5, 0.5);
    if (non_rigid) {
        double u[4], qm[3][3], s[3][3] = {{0}}, tmp[3][3], shear[3][3];
        random_quat(rng, u);
        quat_to_mat3(u, qm);
        double d[3] = {skin_rand_range(rng, 0.6, 1.6), skin_rand_range(rng, 0.6, 1.6),
                       skin_rand_range(rng, 0.6, 1.6)};
        for (int i = 0; i < 3; ++i) /* s = qm diag(d) qm^T */
            for (int j = 0; j < 3; ++j)
                for (int k = 0; k < 3; ++k) s[i][j] += qm[i][k] * d[k] * qm[j][k];
        mat3_mul(r, s, tmp);
        memset(shear, 0, sizeof shear);
        for (int i = 0; i < 3; ++i) shear[i][i] = 1.0;
        shear[0][1] = skin_rand_range(rng, -0.3, 0.3);
        shear[1][2] = skin_rand_range(rng, -0.3, 0.3);
        mat3_mul(tmp, shear, r);
    }
    store_mat(m, r, t);
}

/* ---- references ---- */

void skin_lbs_reference(const sinew_rig_view* rig, const float* skinning, double* positions,
                        double* normals, double* normal_gain)
{
    uint32_t w = rig->padded_width;
    for (uint32_t v = 0; v < rig->render_mesh.vertex_count; ++v) {
        double m[16] = {0}, sum_abs = 0.0;
        const float* n = rig->render_mesh.normals + 3 * v;
        for (uint32_t k = 0; k < w; ++k) {
            double wk = rig->padded_weights[(size_t)v * w + k];
            const float* s = skinning + 16 * rig->padded_joints[(size_t)v * w + k];
            for (int i = 0; i < 16; ++i) m[i] += wk * s[i];
            double mn[3];
            for (int r = 0; r < 3; ++r)
                mn[r] = wk * (s[r] * n[0] + s[4 + r] * n[1] + s[8 + r] * n[2]);
            sum_abs += sqrt(mn[0] * mn[0] + mn[1] * mn[1] + mn[2] * mn[2]);
        }
        const float* p = rig->render_mesh.positions + 3 * v;
        double nn[3], len = 0.0;
        for (int r = 0; r < 3; ++r) {
            positions[3 * v + r] = m[r] * p[0] + m[4 + r] * p[1] + m[8 + r] * p[2] + m[12 + r];
            nn[r] = m[r] * n[0] + m[4 + r] * n[1] + m[8 + r] * n[2];
            len += nn[r] * nn[r];
        }
        len = sqrt(len);
        for (int r = 0; r < 3; ++r) normals[3 * v + r] = len > 0 ? nn[r] / len : 0.0;
        if (normal_gain) normal_gain[v] = len > 0 ? sum_abs / len : INFINITY;
    }
}

/* Quaternion (x y z w) of the rotation nearest to the matrix's 3x3 part (for det > 0 the
 * orthogonal polar factor), by another method than the backend's: the dominant eigenvector of
 * the symmetric 4x4 matrix K with q^T K q = trace(R(q)^T A) (Bar-Itzhack 2000), by power
 * iteration in double. */
static void ref_quat(const float* m, double q[4])
{
    double a[3][3];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) a[r][c] = m[4 * c + r];
    double k[4][4] = {
        {a[0][0] - a[1][1] - a[2][2], a[0][1] + a[1][0], a[0][2] + a[2][0], a[2][1] - a[1][2]},
        {a[0][1] + a[1][0], a[1][1] - a[0][0] - a[2][2], a[1][2] + a[2][1], a[0][2] - a[2][0]},
        {a[0][2] + a[2][0], a[1][2] + a[2][1], a[2][2] - a[0][0] - a[1][1], a[1][0] - a[0][1]},
        {a[2][1] - a[1][2], a[0][2] - a[2][0], a[1][0] - a[0][1], a[0][0] + a[1][1] + a[2][2]},
    };
    double shift = 0.0; /* makes every eigenvalue non-negative */
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) shift += k[i][j] * k[i][j];
    shift = sqrt(shift);
    for (int i = 0; i < 4; ++i) k[i][i] += shift;
    /* Start from the column with the largest diagonal: never orthogonal to the answer. */
    int best = 0;
    for (int i = 1; i < 4; ++i)
        if (k[i][i] > k[best][best]) best = i;
    double x[4] = {0, 0, 0, 0};
    x[best] = 1.0;
    for (int iter = 0; iter < 2000; ++iter) {
        double y[4], n = 0.0, change = 0.0;
        for (int i = 0; i < 4; ++i) {
            y[i] = k[i][0] * x[0] + k[i][1] * x[1] + k[i][2] * x[2] + k[i][3] * x[3];
            n += y[i] * y[i];
        }
        n = sqrt(n);
        for (int i = 0; i < 4; ++i) {
            y[i] /= n;
            change += fabs(y[i] - x[i]);
            x[i] = y[i];
        }
        if (change < 1e-15) break;
    }
    memcpy(q, x, sizeof x);
}

static void qmul(const double a[4], const double b[4], double out[4])
{
    double r[4] = {a[3] * b[0] + b[3] * a[0] + a[1] * b[2] - a[2] * b[1],
                   a[3] * b[1] + b[3] * a[1] + a[2] * b[0] - a[0] * b[2],
                   a[3] * b[2] + b[3] * a[2] + a[0] * b[1] - a[1] * b[0],
                   a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};
    memcpy(out, r, sizeof r);
}

void skin_dqs_reference(const sinew_rig_view* rig, const float* skinning, double* positions,
                        double* normals)
{
    uint32_t w = rig->padded_width;
    for (uint32_t v = 0; v < rig->render_mesh.vertex_count; ++v) {
        double br[4] = {0}, be[4] = {0}, r0[4] = {0};
        for (uint32_t k = 0; k < w; ++k) {
            double wk = rig->padded_weights[(size_t)v * w + k];
            const float* s = skinning + 16 * rig->padded_joints[(size_t)v * w + k];
            double r[4], e[4], t[4] = {s[12], s[13], s[14], 0.0};
            ref_quat(s, r);
            qmul(t, r, e); /* e = t r / 2 */
            for (int i = 0; i < 4; ++i) e[i] *= 0.5;
            if (k == 0) memcpy(r0, r, sizeof r0);
            double d = r[0] * r0[0] + r[1] * r0[1] + r[2] * r0[2] + r[3] * r0[3];
            if (d < 0) wk = -wk;
            for (int i = 0; i < 4; ++i) {
                br[i] += wk * r[i];
                be[i] += wk * e[i];
            }
        }
        double len = sqrt(br[0] * br[0] + br[1] * br[1] + br[2] * br[2] + br[3] * br[3]);
        for (int i = 0; i < 4; ++i) {
            br[i] /= len;
            be[i] /= len;
        }
        double conj[4] = {-br[0], -br[1], -br[2], br[3]}, tq[4], x[4], y[4];
        qmul(be, conj, tq); /* translation: 2 vec(e r*) */
        const float* p = rig->render_mesh.positions + 3 * v;
        const float* n = rig->render_mesh.normals + 3 * v;
        double pq[4] = {p[0], p[1], p[2], 0}, nq[4] = {n[0], n[1], n[2], 0};
        qmul(br, pq, x);
        qmul(x, conj, y);
        for (int i = 0; i < 3; ++i) positions[3 * v + i] = y[i] + 2 * tq[i];
        qmul(br, nq, x);
        qmul(x, conj, y);
        double nl = sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]);
        for (int i = 0; i < 3; ++i) normals[3 * v + i] = y[i] / nl;
    }
}

/* ---- backends ---- */

const char* const skin_simd_names[4] = {"scalar", "sse", "avx2", "avx512"};

bool skin_simd_available(const char* name)
{
    sinew_simd s;
    return sinew_simd_parse(name, &s) && (s == SINEW_SIMD_AUTO || sinew_simd_supported(s));
}

void* skin_prepare(skin_host* host, const sinew_backend_vtable* vt, const skin_rig* rig,
                   const char* simd, bool normals)
{
    if (!skin_simd_available(simd)) {
        print_message("SKIP: %s simd=%s is not available on this CPU/build\n", vt->name, simd);
        return NULL;
    }
    sinew_param params[2] = {{"simd", simd}, {"normals", normals ? "1" : "0"}};
    void* inst = NULL;
    sinew_result r = vt->prepare(&host->api, &rig->view, params, 2, NULL, &inst);
    if (r != SINEW_OK)
        fail_msg("%s prepare simd=%s: result %d (%s)", vt->name, simd, (int)r, host->log.last);
    assert_non_null(inst);
    return inst;
}

void skin_set_pose(const sinew_backend_vtable* vt, void* inst, uint32_t joints,
                   const float* skinning)
{
    sinew_pose_view pose = {(uint32_t)sizeof pose, joints, skinning, skinning, 0u};
    assert_int_equal(vt->set_pose(inst, &pose), SINEW_OK);
}

void skin_read(const sinew_backend_vtable* vt, void* inst, uint32_t vertices, float* positions,
               float* normals)
{
    sinew_output_view out = {(uint32_t)sizeof out, vertices, positions, 12, normals, 12, NULL};
    assert_int_equal(vt->read_output(inst, &out), SINEW_OK);
}
