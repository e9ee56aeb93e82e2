/* The clamp of the local collisions (ps_collide_clamp_targets, 2018 Sec. 5) for hard anchors:
 * each clamped base target moves by up to a tissue thickness while its neighbours stay, and a
 * hard anchor (fps, 2019 Sec. 4.3) takes that step exactly, so the skin over it is pulled into
 * a pit. Here the clamp's offsets are spread over the neighbouring base targets by a few
 * Jacobi steps of averaging over the skin's one-rings (the clamped ones keep theirs), which
 * turns the step into a smooth bump. SPDX-License-Identifier: MIT */
#include <string.h>

#include "ps_internal.h"

struct ps_clamp_spread {
    sinew_host_api host;
    const ps_model* m;
    uint32_t rings;
    uint32_t* level;  /* per active vertex: its ring from the clamped ones (scratch) */
    double* before;   /* 3 per active vertex: its base target before the spreading */
    double* d;        /* 3 per skin vertex: the offset being spread (0 off the active region) */
    double* e;
    uint8_t* fixed;   /* per skin vertex: clamped in this step */
    uint32_t* seen;   /* per skin vertex: the step that last listed it as active */
    uint32_t step;
    uint32_t active_count; /* this step's vertices within `rings` rings of a clamped one */
    uint32_t* active;
};

void ps_clamp_spread_destroy(ps_clamp_spread* s)
{
    if (!s) return;
    sinew_host_api host = s->host;
    void* arrays[] = {s->level, s->before, s->d, s->e, s->fixed, s->seen, s->active};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) sinew_host_free(&host, arrays[i]);
    sinew_host_free(&host, s);
}

sinew_result ps_clamp_spread_create(const sinew_host_api* host, const ps_model* m,
                                    uint32_t rings, ps_clamp_spread** out)
{
    *out = NULL;
    const uint32_t n = m->n ? m->n : 1u;
    ps_clamp_spread* s = (ps_clamp_spread*)sinew_host_calloc(host, 1, sizeof *s);
    if (s) {
        s->host = *host;
        s->m = m;
        s->rings = rings;
        s->level = (uint32_t*)sinew_host_calloc(host, n, sizeof(uint32_t));
        s->before = (double*)sinew_host_calloc(host, 3u * (size_t)n, sizeof(double));
        s->d = (double*)sinew_host_calloc(host, 3u * (size_t)n, sizeof(double));
        s->e = (double*)sinew_host_calloc(host, 3u * (size_t)n, sizeof(double));
        s->fixed = (uint8_t*)sinew_host_calloc(host, n, 1u);
        s->seen = (uint32_t*)sinew_host_calloc(host, n, sizeof(uint32_t));
        s->active = (uint32_t*)sinew_host_calloc(host, n, sizeof(uint32_t));
    }
    if (!s || !s->level || !s->before || !s->d || !s->e || !s->fixed || !s->seen || !s->active) {
        ps_clamp_spread_destroy(s);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "local collisions: out of memory for the clamp's spreading");
    }
    *out = s;
    return SINEW_OK;
}

/* This step's active region: the clamped vertices and those within s->rings one-rings of
 * them, by a breadth-first walk over the skin triangles; off it the spread offsets are 0. */
static void find_active(ps_clamp_spread* s, const uint32_t* clamped, uint32_t clamped_count)
{
    const ps_model* m = s->m;
    uint32_t* level = s->level;
    s->active_count = 0;
    for (uint32_t k = 0; k < clamped_count; ++k) {
        s->seen[clamped[k]] = s->step;
        level[s->active_count] = 0;
        s->active[s->active_count++] = clamped[k];
    }
    for (uint32_t head = 0; head < s->active_count; ++head) {
        uint32_t v = s->active[head], lv = level[head];
        if (lv == s->rings) continue;
        for (uint32_t a = m->vertex_tri_offsets[v]; a < m->vertex_tri_offsets[v + 1]; ++a) {
            const uint32_t* t = m->triangles + 3u * m->vertex_tris[a];
            for (int q = 0; q < 3; ++q) {
                if (s->seen[t[q]] == s->step) continue;
                s->seen[t[q]] = s->step;
                level[s->active_count] = lv + 1u;
                s->active[s->active_count++] = t[q];
            }
        }
    }
}

/* One Jacobi step over the active vertices: a clamped vertex keeps its offset, the others take
 * the mean of their one-ring neighbours' (each counted once per triangle they share; off the
 * active region the offsets are 0). */
static void spread_step(ps_clamp_spread* s)
{
    const ps_model* m = s->m;
    for (uint32_t k = 0; k < s->active_count; ++k) {
        uint32_t v = s->active[k];
        double* out = s->e + 3u * (size_t)v;
        if (s->fixed[v]) {
            memcpy(out, s->d + 3u * (size_t)v, 3u * sizeof(double));
            continue;
        }
        double sum[3] = {0.0, 0.0, 0.0};
        uint32_t cnt = 0;
        for (uint32_t a = m->vertex_tri_offsets[v]; a < m->vertex_tri_offsets[v + 1]; ++a) {
            const uint32_t* t = m->triangles + 3u * m->vertex_tris[a];
            for (int q = 0; q < 3; ++q) {
                if (t[q] == v) continue;
                for (int i = 0; i < 3; ++i) sum[i] += s->d[3u * (size_t)t[q] + (size_t)i];
                ++cnt;
            }
        }
        for (int i = 0; i < 3; ++i) out[i] = cnt ? sum[i] / cnt : 0.0;
    }
    double* swap = s->d;
    s->d = s->e;
    s->e = swap;
}

void ps_clamp_spread_apply(ps_clamp_spread* s, ps_collide* c, double* target, uint32_t N)
{
    const uint32_t n = s->m->n;
    const uint32_t* cand = ps_collide_vertices(c);
    const uint32_t cand_count = ps_collide_vertex_count(c);
    /* the constrained vertices' base targets before the clamp, by position in cand */
    for (uint32_t k = 0; k < cand_count; ++k)
        for (int i = 0; i < 3; ++i)
            s->before[3u * (size_t)k + (size_t)i] = target[(size_t)i * N + n + cand[k]];
    ps_collide_clamp_targets(c, target, N);
    uint32_t* clamped = s->active; /* find_active starts its walk from these, in place */
    uint32_t clamped_count = 0;
    for (uint32_t k = 0; k < cand_count; ++k) {
        uint32_t v = cand[k];
        double l = 0.0;
        for (int i = 0; i < 3; ++i) {
            double o = target[(size_t)i * N + n + v] - s->before[3u * (size_t)k + (size_t)i];
            s->d[3u * (size_t)v + (size_t)i] = o;
            l += o * o;
        }
        s->fixed[v] = l > 0.0;
        if (l > 0.0) clamped[clamped_count++] = v;
        else memset(s->d + 3u * (size_t)v, 0, 3u * sizeof(double));
    }
    if (clamped_count == 0) return;
    ++s->step;
    find_active(s, clamped, clamped_count);
    /* the base targets of the region before the spreading (the clamped ones as clamped) */
    for (uint32_t k = 0; k < s->active_count; ++k)
        for (int i = 0; i < 3; ++i)
            s->before[3u * (size_t)k + (size_t)i] =
                target[(size_t)i * N + n + s->active[k]] -
                s->d[3u * (size_t)s->active[k] + (size_t)i];
    for (uint32_t r = 0; r < s->rings; ++r) spread_step(s);
    for (uint32_t k = 0; k < s->active_count; ++k) {
        uint32_t v = s->active[k];
        for (int i = 0; i < 3; ++i)
            target[(size_t)i * N + n + v] =
                s->before[3u * (size_t)k + (size_t)i] + s->d[3u * (size_t)v + (size_t)i];
        memset(s->d + 3u * (size_t)v, 0, 3u * sizeof(double));
        memset(s->e + 3u * (size_t)v, 0, 3u * sizeof(double));
        s->fixed[v] = 0;
    }
}

void ps_hard_targets_adjust(ps_slide* slide, ps_collide* joints, ps_clamp_spread* spread,
                            const float* skinning, double* target, uint32_t N)
{
    if (slide) ps_slide_targets(slide, skinning, target, N);
    if (joints) {
        ps_collide_pose(joints, skinning);
        ps_clamp_spread_apply(spread, joints, target, N);
    }
}
