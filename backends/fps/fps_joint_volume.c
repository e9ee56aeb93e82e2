/* The joints' volume (ps_joint_volume.c) on fps's reduced system: in an iteration whose
 * starting shape has left a joint region short of volume, each free skin vertex is pulled
 * towards its target (the iterate moved by ps_joint_volume_targets) by w (t - x), a force on
 * the right-hand side. ps puts the same pull into its second matrix as a point constraint; fps
 * keeps A constant, so that neither its CHOLMOD factor nor its preconditioner changes with it.
 * SPDX-License-Identifier: MIT */
#include <string.h>

#include "fps_joint_volume.h"

sinew_result fps_jv_create(const sinew_host_api* host, const ps_model* m, const fps_params* p,
                           const uint32_t* perm, const uint32_t* inv, uint32_t ns, uint32_t N,
                           const double* diag0, fps_jv** out)
{
    *out = NULL;
    ps_joint_volume* jv = NULL;
    sinew_result r = ps_joint_volume_create(host, m, p->volume.joint_reach, &jv);
    if (r != SINEW_OK || !jv) return r;
    fps_jv* f = (fps_jv*)sinew_host_calloc(host, 1u, sizeof *f);
    if (f) {
        f->jv = jv;
        f->xm = (double*)sinew_host_calloc(host, 3u * (size_t)N, sizeof(double));
        f->t = (double*)sinew_host_calloc(host, 3u * (size_t)N, sizeof(double));
        f->w = (double*)sinew_host_calloc(host, ns ? ns : 1u, sizeof(double));
    }
    if (!f || !f->xm || !f->t || !f->w) {
        ps_joint_volume_destroy(host, jv);
        if (f) f->jv = NULL;
        fps_jv_destroy(host, f);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps: out of memory");
    }
    f->inv = inv;
    f->ns = ns;
    f->N = N;
    f->n = m->n;
    f->gain = p->volume.joint;
    for (uint32_t i = 0; i < ns; ++i) f->w[i] = perm[i] < m->n ? FPS_JV_WEIGHT * diag0[i] : 0.0;
    *out = f;
    return SINEW_OK;
}

void fps_jv_destroy(const sinew_host_api* host, fps_jv* f)
{
    if (!f) return;
    ps_joint_volume_destroy(host, f->jv);
    sinew_host_free(host, f->xm);
    sinew_host_free(host, f->t);
    sinew_host_free(host, f->w);
    sinew_host_free(host, f);
}

int fps_jv_judge(fps_jv* f, const double* x, const float* skinning)
{
    uint32_t N = f->N;
    for (int c = 0; c < 3; ++c)
        for (uint32_t v = 0; v < f->n; ++v) f->xm[(size_t)c * N + v] = x[(size_t)c * N + f->inv[v]];
    return ps_joint_volume_measure(f->jv, f->xm, N, skinning, PS_JOINT_VOLUME_SLACK, NULL);
}

void fps_jv_rhs(fps_jv* f, double* b)
{
    uint32_t N = f->N, ns = f->ns;
    for (int c = 0; c < 3; ++c) memset(f->t + (size_t)c * N, 0, f->n * sizeof(double));
    ps_joint_volume_targets(f->jv, f->xm, N, f->gain, f->t);
    for (uint32_t v = 0; v < f->n; ++v) {
        uint32_t i = f->inv[v];
        if (i >= ns) continue;
        for (int c = 0; c < 3; ++c) b[(size_t)c * ns + i] += f->w[i] * f->t[(size_t)c * N + v];
    }
}
