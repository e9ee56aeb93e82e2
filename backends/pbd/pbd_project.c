/* The coloured Gauss-Seidel sweep of pbd (Sec. 4): the colours in order, the constraints of
 * one colour in parallel over the host's job system, each range through the scalar kernels
 * here or the AVX-512 ones (pbd_project_avx512.c), which give the same bits. No two
 * constraints of a colour share a particle, so each writes its own particles and any split of
 * a colour gives the same bits. SPDX-License-Identifier: MIT */
#include "pbd_kernels.h"

void pbd_stretch_scalar(const pbd_solve* s, uint32_t first, uint32_t last)
{
    for (uint32_t i = first; i < last; ++i) pbd_project_stretch(s, i);
}

void pbd_volume_scalar(const pbd_solve* s, uint32_t first, uint32_t last)
{
    for (uint32_t i = first; i < last; ++i) pbd_project_volume(s, i);
}

void pbd_bending_scalar(const pbd_solve* s, uint32_t first, uint32_t last)
{
    for (uint32_t i = first; i < last; ++i) pbd_project_bending(s, i);
}

uint32_t pbd_colour_size(const pbd_constraints* c, uint32_t colour)
{
    return c->stretch_offsets[colour + 1u] - c->stretch_offsets[colour] +
           c->volume_offsets[colour + 1u] - c->volume_offsets[colour] +
           c->bending_offsets[colour + 1u] - c->bending_offsets[colour];
}

/* k of a colour's `count` constraints, scaled to one kind's `part` of them. */
static inline uint32_t share(uint32_t k, uint32_t part, uint32_t count)
{
    return (uint32_t)((uint64_t)k * part / count);
}

/* A range [begin, end) of a colour's constraints takes the same share of each kind's
 * constraints, all sorted by their smallest particle: the chunks of every colour then cover
 * about the same particles for every kind, so that a thread keeps writing the particles (and
 * cache lines) it wrote in the colour before instead of taking them from another core's
 * cache. Consecutive ranges meet, so any split covers each constraint once. */
void pbd_project_range(void* data, uint32_t begin, uint32_t end)
{
    const pbd_solve* s = (const pbd_solve*)data;
    const pbd_constraints* c = s->c;
    uint32_t q = s->colour, s0 = c->stretch_offsets[q], v0 = c->volume_offsets[q];
    uint32_t b0 = c->bending_offsets[q];
    uint32_t ns = c->stretch_offsets[q + 1u] - s0, nv = c->volume_offsets[q + 1u] - v0;
    uint32_t nb = c->bending_offsets[q + 1u] - b0;
    uint32_t count = ns + nv + nb;
    s->stretch(s, s0 + share(begin, ns, count), s0 + share(end, ns, count));
    s->volume(s, v0 + share(begin, nv, count), v0 + share(end, nv, count));
    s->bending(s, b0 + share(begin, nb, count), b0 + share(end, nb, count));
}

void pbd_project_iteration(const sinew_host_api* host, pbd_solve* solve)
{
    for (uint32_t q = 0; q < solve->c->colour_count; ++q) {
        solve->colour = q;
        sinew_host_parallel_for(host, pbd_project_range, solve, pbd_colour_size(solve->c, q),
                                solve->grain);
    }
}
