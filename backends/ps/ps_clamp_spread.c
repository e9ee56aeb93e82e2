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
    uint32_t count;   /* skin vertices within `rings` rings of a constrained vertex */
    uint32_t* list;
    double* before;   /* 3 per listed vertex: its base target before the clamp */
    double* d;        /* 3 per skin vertex: the offset being spread (0 off the list) */
    double* e;
    uint8_t* fixed;   /* per skin vertex: clamped in this step */
};

void ps_clamp_spread_destroy(ps_clamp_spread* s)
{
    if (!s) return;
    sinew_host_api host = s->host;
    void* arrays[] = {s->list, s->before, s->d, s->e, s->fixed};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) sinew_host_free(&host, arrays[i]);
    sinew_host_free(&host, s);
}

/* The skin vertices within s->rings one-rings of the constrained ones (a breadth-first walk
 * over the skin triangles), in s->list; `level` is scratch of n entries. */
static void list_region(ps_clamp_spread* s, const ps_collide* c, uint32_t* level)
{
    const ps_model* m = s->m;
    for (uint32_t v = 0; v < m->n; ++v) level[v] = UINT32_MAX;
    const uint32_t* seeds = ps_collide_vertices(c);
    s->count = 0;
    for (uint32_t k = 0; k < ps_collide_vertex_count(c); ++k) {
        if (level[seeds[k]] == 0) continue;
        level[seeds[k]] = 0;
        s->list[s->count++] = seeds[k];
    }
    for (uint32_t head = 0; head < s->count; ++head) {
        uint32_t v = s->list[head];
        if (level[v] == s->rings) continue;
        for (uint32_t a = m->vertex_tri_offsets[v]; a < m->vertex_tri_offsets[v + 1]; ++a) {
            const uint32_t* t = m->triangles + 3u * m->vertex_tris[a];
            for (int q = 0; q < 3; ++q) {
                if (level[t[q]] != UINT32_MAX) continue;
                level[t[q]] = level[v] + 1u;
                s->list[s->count++] = t[q];
            }
        }
    }
}

sinew_result ps_clamp_spread_create(const sinew_host_api* host, const ps_model* m,
                                    const ps_collide* c, uint32_t rings, ps_clamp_spread** out)
{
    *out = NULL;
    const uint32_t n = m->n ? m->n : 1u;
    ps_clamp_spread* s = (ps_clamp_spread*)sinew_host_calloc(host, 1, sizeof *s);
    uint32_t* level = (uint32_t*)sinew_host_calloc(host, n, sizeof(uint32_t));
    if (s) {
        s->host = *host;
        s->m = m;
        s->rings = rings;
        s->list = (uint32_t*)sinew_host_calloc(host, n, sizeof(uint32_t));
        s->before = (double*)sinew_host_calloc(host, 3u * (size_t)n, sizeof(double));
        s->d = (double*)sinew_host_calloc(host, 3u * (size_t)n, sizeof(double));
        s->e = (double*)sinew_host_calloc(host, 3u * (size_t)n, sizeof(double));
        s->fixed = (uint8_t*)sinew_host_calloc(host, n, 1u);
    }
    if (!s || !level || !s->list || !s->before || !s->d || !s->e || !s->fixed) {
        sinew_host_free(host, level);
        ps_clamp_spread_destroy(s);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "local collisions: out of memory for the clamp's spreading");
    }
    list_region(s, c, level);
    sinew_host_free(host, level);
    *out = s;
    return SINEW_OK;
}

/* One Jacobi step over the listed vertices: a clamped vertex keeps its offset, the others take
 * the mean of their one-ring neighbours' (each counted once per triangle they share). */
static void spread_step(ps_clamp_spread* s)
{
    const ps_model* m = s->m;
    for (uint32_t k = 0; k < s->count; ++k) {
        uint32_t v = s->list[k];
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
    for (uint32_t k = 0; k < s->count; ++k)
        for (int i = 0; i < 3; ++i)
            s->before[3u * (size_t)k + (size_t)i] = target[(size_t)i * N + n + s->list[k]];
    ps_collide_clamp_targets(c, target, N);
    for (uint32_t k = 0; k < s->count; ++k) {
        uint32_t v = s->list[k];
        double l = 0.0;
        for (int i = 0; i < 3; ++i) {
            double o = target[(size_t)i * N + n + v] - s->before[3u * (size_t)k + (size_t)i];
            s->d[3u * (size_t)v + (size_t)i] = o;
            l += o * o;
        }
        s->fixed[v] = l > 0.0;
    }
    for (uint32_t r = 0; r < s->rings; ++r) spread_step(s);
    for (uint32_t k = 0; k < s->count; ++k)
        for (int i = 0; i < 3; ++i)
            target[(size_t)i * N + n + s->list[k]] =
                s->before[3u * (size_t)k + (size_t)i] + s->d[3u * (size_t)s->list[k] + (size_t)i];
}
