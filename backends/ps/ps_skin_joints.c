/* Which joints move each skin vertex, from the rig's skin weights: those that carry a good
 * share of its weight. Skin shrinking (projective skinning Sec. 3.2) then looks for a vertex's
 * foot point on the bones of those joints only. The paper takes the closest point of the whole skeleton,
 * which real rigs defeat: their helper bones pass through flesh they do not move (a neck bone
 * through the back of the head, next to a ponytail), and the skin then follows the wrong bone.
 * The weights, an artist's or the runtime's automatic ones, say which bone moves which skin.
 * With a simulation mesh of its own, a skin vertex takes the weights interpolated at its
 * closest point on the render mesh. SPDX-License-Identifier: MIT */
#include <string.h>

#include "ps_internal.h"

/* Adds `scale` times render vertex v's weights to acc (one entry per joint). */
static void add_weights(const sinew_rig_view* rig, uint32_t v, double scale, double* acc)
{
    for (uint32_t e = rig->weight_offsets[v]; e < rig->weight_offsets[v + 1]; ++e)
        if (rig->weight_joints[e] < rig->joint_count)
            acc[rig->weight_joints[e]] += scale * rig->weight_values[e];
}

/* The joints that carry at least PS_SKIN_JOINT_SHARE of the weight in acc, largest first, into
 * out[0 .. PS_SKIN_JOINTS) (PS_NONE after the last). */
static void main_joints(const double* acc, uint32_t count, uint32_t* out)
{
    double total = 0.0;
    for (uint32_t j = 0; j < count; ++j) total += acc[j];
    for (uint32_t k = 0; k < PS_SKIN_JOINTS; ++k) out[k] = PS_NONE;
    for (uint32_t j = 0; j < count; ++j) {
        if (!(acc[j] > 0.0) || acc[j] < PS_SKIN_JOINT_SHARE * total) continue;
        uint32_t k = PS_SKIN_JOINTS;
        while (k > 0 && (out[k - 1] == PS_NONE || acc[out[k - 1]] < acc[j])) {
            if (k < PS_SKIN_JOINTS) out[k] = out[k - 1];
            --k;
        }
        if (k < PS_SKIN_JOINTS) out[k] = j;
    }
}

/* The simulated mesh is the render mesh: the weights of the render vertices welded into each
 * skin vertex, summed (`next` chains the render vertices of each skin vertex). */
static sinew_result joints_from_weld(const sinew_host_api* host, const sinew_rig_view* rig,
                                     const ps_model* m, double* acc, uint32_t* joint)
{
    uint32_t jn = rig->joint_count, sources = m->source_vertex_count;
    uint32_t* first = (uint32_t*)sinew_host_alloc(host, sizeof(uint32_t) * (m->n ? m->n : 1u));
    uint32_t* next = (uint32_t*)sinew_host_alloc(host, sizeof(uint32_t) * (sources ? sources : 1u));
    if (!first || !next) {
        sinew_host_free(host, first);
        sinew_host_free(host, next);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
    }
    for (uint32_t i = 0; i < m->n; ++i) first[i] = PS_NONE;
    for (uint32_t v = sources; v-- > 0;) {
        next[v] = first[m->weld[v]];
        first[m->weld[v]] = v;
    }
    for (uint32_t i = 0; i < m->n; ++i) {
        memset(acc, 0, sizeof(double) * jn);
        for (uint32_t v = first[i]; v != PS_NONE; v = next[v]) add_weights(rig, v, 1.0, acc);
        main_joints(acc, jn, joint + PS_SKIN_JOINTS * i);
    }
    sinew_host_free(host, first);
    sinew_host_free(host, next);
    return SINEW_OK;
}

/* A simulation mesh of its own: the weights at each skin vertex's closest render point. */
static sinew_result joints_from_render(const sinew_host_api* host, const sinew_rig_view* rig,
                                       const ps_model* m, double* acc, uint32_t* joint)
{
    const sinew_mesh_view* render = &rig->render_mesh;
    uint32_t jn = rig->joint_count;
    double* positions = (double*)sinew_host_calloc(host, render->vertex_count, 3u * sizeof(double));
    if (!positions) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
    for (size_t k = 0; k < 3u * (size_t)render->vertex_count; ++k) positions[k] = render->positions[k];
    ps_grid grid;
    sinew_result r = ps_grid_build(host, positions, render->vertex_count, render->indices,
                                   render->triangle_count, &grid);
    if (r != SINEW_OK) {
        sinew_host_free(host, positions);
        return sinew_host_fail(host, r, "ps: out of memory for the render grid");
    }
    for (uint32_t i = 0; i < m->n; ++i) {
        double q[3], bary[3];
        memset(acc, 0, sizeof(double) * jn);
        uint32_t tri = ps_grid_closest(&grid, m->rest + 3u * i, q, bary);
        for (int k = 0; tri != PS_NONE && k < 3; ++k)
            add_weights(rig, render->indices[3u * tri + k], bary[k], acc);
        main_joints(acc, jn, joint + PS_SKIN_JOINTS * i);
    }
    ps_grid_free(host, &grid);
    sinew_host_free(host, positions);
    return SINEW_OK;
}

sinew_result ps_skin_joints(const sinew_host_api* host, const sinew_rig_view* rig,
                            const ps_model* m, uint32_t* joint)
{
    for (size_t i = 0; i < (size_t)PS_SKIN_JOINTS * m->n; ++i) joint[i] = PS_NONE;
    bool separate = rig->simulation_mesh.vertex_count > 0;
    if (!rig->weight_offsets || !rig->weight_joints || !rig->weight_values || m->n == 0 ||
        (separate && rig->render_mesh.triangle_count == 0))
        return SINEW_OK;
    double* acc = (double*)sinew_host_calloc(host, rig->joint_count, sizeof(double));
    if (!acc)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory for the "
                               "weights of %u joints", rig->joint_count);
    sinew_result r = separate ? joints_from_render(host, rig, m, acc, joint)
                              : joints_from_weld(host, rig, m, acc, joint);
    sinew_host_free(host, acc);
    return r;
}
