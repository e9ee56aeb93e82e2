/* The coloured Gauss-Seidel sweep of pbd (Sec. 4): the colours in order, the constraints of
 * one colour in parallel over the host's job system, each range through the scalar kernels
 * here or the AVX-512 ones (pbd_project_avx512.c), which give the same bits. No two
 * constraints of a colour share a particle, so each writes its own particles and any split of
 * a colour gives the same bits. SPDX-License-Identifier: MIT */
#include "pbd_kernels.h"

/* Constraints of one colour per job chunk at least: a chunk of a few hundred projections
 * outweighs the cost of handing it to a worker. */
#define PBD_GRAIN 256u

void pbd_stretch_scalar(const pbd_solve* s, uint32_t first, uint32_t last)
{
    for (uint32_t i = first; i < last; ++i) pbd_project_stretch(s, i);
}

void pbd_volume_scalar(const pbd_solve* s, uint32_t first, uint32_t last)
{
    for (uint32_t i = first; i < last; ++i) pbd_project_volume(s, i);
}

uint32_t pbd_colour_size(const pbd_constraints* c, uint32_t colour)
{
    return c->stretch_offsets[colour + 1u] - c->stretch_offsets[colour] +
           c->volume_offsets[colour + 1u] - c->volume_offsets[colour];
}

void pbd_project_range(void* data, uint32_t begin, uint32_t end)
{
    const pbd_solve* s = (const pbd_solve*)data;
    const pbd_constraints* c = s->c;
    uint32_t s0 = c->stretch_offsets[s->colour];
    uint32_t stretches = c->stretch_offsets[s->colour + 1u] - s0;
    uint32_t v0 = c->volume_offsets[s->colour];
    if (begin < stretches) s->stretch(s, s0 + begin, s0 + (end < stretches ? end : stretches));
    if (end > stretches)
        s->volume(s, v0 + (begin > stretches ? begin - stretches : 0u), v0 + (end - stretches));
}

void pbd_project_iteration(const sinew_host_api* host, pbd_solve* solve)
{
    for (uint32_t q = 0; q < solve->c->colour_count; ++q) {
        solve->colour = q;
        sinew_host_parallel_for(host, pbd_project_range, solve, pbd_colour_size(solve->c, q),
                                PBD_GRAIN);
    }
}
