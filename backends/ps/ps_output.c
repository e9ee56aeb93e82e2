/* The render-mesh output of a physics backend (ps, fps): own buffers kept fresh on demand, a
 * bound caller output written after every step, and the checks of get_state/set_state.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>

#include "ps_internal.h"
#include "sinew_output.h"

sinew_result ps_output_init(ps_output* o, const sinew_host_api* host, const char* backend,
                            const sinew_mesh_view* render, const ps_output_sim* ops, void* sim)
{
    memset(o, 0, sizeof *o);
    o->backend = backend;
    o->render_count = render->vertex_count;
    o->rest_positions = render->positions;
    o->rest_normals = render->normals;
    o->ops = ops;
    o->sim = sim;
    o->positions = (float*)sinew_host_calloc(host, o->render_count, 12u);
    o->normals = (float*)sinew_host_calloc(host, o->render_count, 12u);
    o->spare = (float*)sinew_host_calloc(host, o->render_count, 12u);
    if (!o->positions || !o->normals || !o->spare)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", backend);
    memcpy(o->positions, o->rest_positions, (size_t)o->render_count * 12u);
    memcpy(o->normals, o->rest_normals, (size_t)o->render_count * 12u);
    o->positions_fresh = o->normals_fresh = true;
    o->shape = PS_SHAPE_REST;
    return SINEW_OK;
}

void ps_output_free(ps_output* o, const sinew_host_api* host)
{
    sinew_host_free(host, o->positions);
    sinew_host_free(host, o->normals);
    sinew_host_free(host, o->spare);
    o->positions = o->normals = o->spare = NULL;
}

void ps_output_after_step(ps_output* o)
{
    o->shape = PS_SHAPE_SIM;
    if (o->bound) {
        o->ops->upsample(o->sim, o->binding.positions, o->binding.position_stride, o->binding.normals,
                    o->binding.normal_stride);
        o->positions_fresh = o->normals_fresh = false;
        o->binding_current = true;
    } else {
        o->ops->upsample(o->sim, o->positions, 12u, o->normals, 12u);
        o->positions_fresh = o->normals_fresh = true;
    }
}

void ps_output_refresh(ps_output* o, bool need_normals)
{
    bool pos = !o->positions_fresh;
    bool nrm = need_normals && !o->normals_fresh;
    if (!pos && !nrm) return;
    if (o->shape == PS_SHAPE_REST) {
        if (pos) memcpy(o->positions, o->rest_positions, (size_t)o->render_count * 12u);
        if (nrm) memcpy(o->normals, o->rest_normals, (size_t)o->render_count * 12u);
    } else {
        /* SIM: both from the simulation; STATE: positions are the given ones (always fresh),
         * so normals alone go with positions into the spare array (the upsampling writes
         * both). */
        o->ops->upsample(o->sim, pos ? o->positions : o->spare, 12u, nrm ? o->normals : NULL, 12u);
    }
    if (pos) o->positions_fresh = true;
    if (nrm) o->normals_fresh = true;
}

void ps_output_fill_binding(ps_output* o)
{
    if (!o->bound || o->binding_current) return;
    ps_output_refresh(o, o->binding.normals != NULL);
    sinew_output_copy_view(o->positions, o->normals, o->render_count, &o->binding);
    o->binding_current = true;
}

sinew_result ps_output_read(ps_output* o, const sinew_host_api* host,
                            const sinew_output_view* out)
{
    sinew_result r = sinew_output_check(host, o->backend, "read_output", out, o->render_count);
    if (r != SINEW_OK) return r;
    ps_output_refresh(o, out->normals != NULL);
    sinew_output_copy_view(o->positions, o->normals, o->render_count, out);
    return SINEW_OK;
}

sinew_result ps_output_bind(ps_output* o, const sinew_host_api* host,
                            const sinew_output_view* out)
{
    if (!out) {
        ps_output_refresh(o, true);
        o->bound = false;
        return SINEW_OK;
    }
    sinew_result r = sinew_output_check(host, o->backend, "bind_output", out, o->render_count);
    if (r != SINEW_OK) return r;
    o->binding = sinew_output_binding(out);
    o->bound = true;
    o->binding_current = false;
    return SINEW_OK;
}

/* Checks a state view for get_state/set_state (`fn` names the call in the log line). */
static sinew_result check_state(const ps_output* o, const sinew_host_api* host,
                                const sinew_state_view* state, const char* fn)
{
    if (!state)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s %s: state is NULL",
                               o->backend, fn);
    if (state->struct_size < sizeof(sinew_state_view))
        return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE, "%s %s: state struct_size %u is "
                               "below %zu", o->backend, fn, state->struct_size,
                               sizeof(sinew_state_view));
    if (state->vertex_count != o->render_count)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s %s: a state of %u "
                               "vertices for a mesh of %u", o->backend, fn, state->vertex_count,
                               o->render_count);
    if (!state->positions)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s %s: positions is NULL",
                               o->backend, fn);
    return SINEW_OK;
}

sinew_result ps_output_get_state(ps_output* o, const sinew_host_api* host,
                                 const sinew_state_view* state)
{
    sinew_result r = check_state(o, host, state, "get_state");
    if (r != SINEW_OK) return r;
    ps_output_refresh(o, false);
    memcpy(state->positions, o->positions, (size_t)o->render_count * 12u);
    if (state->velocities) {
        if (o->shape == PS_SHAPE_REST)
            memset(state->velocities, 0, (size_t)o->render_count * 12u);
        else
            o->ops->render_velocities(o->sim, state->velocities);
    }
    return SINEW_OK;
}

sinew_result ps_output_set_state(ps_output* o, const sinew_host_api* host, const ps_model* m,
                                 const uint32_t* render_indices, const sinew_state_view* state)
{
    sinew_result r = check_state(o, host, state, "set_state");
    if (r != SINEW_OK) return r;
    size_t count = 3u * (size_t)o->render_count;
    for (size_t k = 0; k < count; ++k)
        if (!isfinite(state->positions[k]) || (state->velocities && !isfinite(state->velocities[k])))
            return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                                   "%s set_state: vertex %zu is not finite", o->backend, k / 3u);
    float* skin = (float*)sinew_host_calloc(host, m->n, 12u);
    float* vel = state->velocities ? (float*)sinew_host_calloc(host, m->n, 12u) : NULL;
    if (!skin || (state->velocities && !vel)) {
        sinew_host_free(host, skin);
        sinew_host_free(host, vel);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "%s set_state: out of memory",
                               o->backend);
    }
    ps_render_to_skin(m, render_indices, state->positions, skin, true);
    if (vel) ps_render_to_skin(m, render_indices, state->velocities, vel, false);
    o->ops->set_skin(o->sim, skin, vel);
    sinew_host_free(host, skin);
    sinew_host_free(host, vel);
    memcpy(o->positions, state->positions, (size_t)o->render_count * 12u);
    o->shape = PS_SHAPE_STATE;
    o->positions_fresh = true;
    o->normals_fresh = false;
    o->binding_current = false;
    return SINEW_OK;
}
