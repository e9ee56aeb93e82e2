/* The compute backend vk-pbd: pbd's solver (backends/pbd; Fratarcangeli and Pellacini,
 * ../shared/papers/parallel-position-based-dynamics.txt) in compute shaders, registered with
 * vk-lbs and vk-dqs (sinew_vk_register_backends). The preparation is pbd's own (the model,
 * the constraints and their colouring, the compliances, the fixed particles' targets, the
 * contacts' candidates: pbd_model_prepare and pbd_sim_create); the device repeats the steps
 * (vk_pbd_device.c) and writes the render mesh straight into a bound sinew_vk_output slot.
 * SPDX-License-Identifier: MIT
 *
 * Contract: pbd's (backends/pbd/README.md) with these differences:
 * - The targets of the fixed particles and the contact planes are computed on the host for
 *   each step and uploaded; everything else of a step runs on the device, the steps of one
 *   update in one submission.
 * - Output: bound to a slot of a sinew_vk_output of the same context, an update writes that
 *   slot on the device and returns without waiting (the output's end_frame publishes it), as
 *   vk-lbs does. Bound to host arrays, an update waits and copies; unbound, the render mesh is
 *   read back when asked for (read_output, get_state).
 * - A step that leaves a non-finite value is undone on the device (the shape before it kept,
 *   the velocities cleared) and reported by the next update that waits for it. */
#include <math.h>
#include <string.h>

#include "ps_shell.h"
#include "vk_pbd.h"

typedef struct vk_pbd {
    ps_shell shell; /* first: the function-table entries shared with pbd (ps_shell.h) */
    sinew_host_api host;
    sinew_vk_context* ctx;
    pbd_params params;
    ps_model model;
    pbd_sim* sim;       /* pbd's preparation; its targets feed the device */
    vk_pbd_device* dev;
    ps_output out;      /* the render mesh for the host (own buffers, host arrays) */
    ps_update update;   /* the poses and the step clock (backends/ps/ps_update.c) */
    ps_jump jump;       /* pose discontinuities (backends/ps/ps_jump.c) */
    bool blend;         /* interpolate_output: the upsampling blends the kept skin */
    float fraction;
    sinew_vk_output* output; /* a bound output of this context, written on the device */
    uint32_t slot;
} vk_pbd;

static vk_pbd* vk_pbd_cast(void* instance)
{
    return (vk_pbd*)ps_shell_cast(instance, VK_PBD_NAME);
}

/* ---- what ps_output and ps_update call (the instance is their `sim`) ---- */

static void upsample_cb(void* sim, float* positions, size_t position_stride, float* normals,
                        size_t normal_stride)
{
    vk_pbd* s = (vk_pbd*)sim;
    (void)vk_pbd_device_read_render(s->dev, s->blend, s->fraction, positions, position_stride,
                                    normals, normal_stride);
}

/* The skin's state read back into pbd's CPU simulation, whose interpolation gives the render
 * mesh's velocities. */
static void render_velocities_cb(const void* sim, float* velocities)
{
    const vk_pbd* s = (const vk_pbd*)sim;
    uint32_t n = s->model.n, N = 2u * n;
    float* state = sinew_host_calloc(&s->host, 6u * (size_t)(N ? N : 1u), sizeof(float));
    float* skin = sinew_host_calloc(&s->host, 6u * (size_t)(n ? n : 1u), sizeof(float));
    bool ok = state && skin && vk_pbd_device_read_state(s->dev, state, state + 3u * N) == SINEW_OK;
    for (uint32_t i = 0; ok && i < n; ++i)
        for (uint32_t c = 0; c < 3u; ++c) {
            skin[3u * i + c] = state[c * N + i];
            skin[3u * n + 3u * i + c] = state[3u * N + c * N + i];
        }
    if (ok) {
        pbd_sim_set_skin(s->sim, skin, skin + 3u * n);
        pbd_sim_render_velocities(s->sim, velocities);
    } else {
        memset(velocities, 0, (size_t)s->model.render_count * 12u);
    }
    sinew_host_free(&s->host, state);
    sinew_host_free(&s->host, skin);
}

static void set_skin_cb(void* sim, const float* positions, const float* velocities)
{
    vk_pbd* s = (vk_pbd*)sim;
    (void)vk_pbd_device_set_skin(s->dev, positions, velocities);
}

static const ps_output_sim vk_pbd_output_ops = {upsample_cb, render_velocities_cb, set_skin_cb};

static void set_pose_cb(void* sim, const float* skinning)
{
    pbd_sim_set_pose(((vk_pbd*)sim)->sim, skinning);
}

/* One step, or the velocities cleared, in a submission of its own (the updates record theirs
 * in one: vk_pbd_step). */
static sinew_result step_cb(void* sim)
{
    vk_pbd* s = (vk_pbd*)sim;
    sinew_result r = vk_pbd_device_begin(s->dev, NULL);
    if (r == SINEW_OK) r = vk_pbd_device_step(s->dev);
    return r == SINEW_OK ? vk_pbd_device_submit(s->dev, NULL, 0) : r;
}

static void clear_velocities_cb(void* sim)
{
    vk_pbd* s = (vk_pbd*)sim;
    if (vk_pbd_device_begin(s->dev, NULL) != SINEW_OK) return;
    vk_pbd_device_clear_velocities(s->dev);
    (void)vk_pbd_device_submit(s->dev, NULL, 0);
}

static void skin_positions_cb(const void* sim, float* out)
{
    const vk_pbd* s = (const vk_pbd*)sim;
    uint32_t n = s->model.n, N = 2u * n;
    float* x = sinew_host_calloc(&s->host, 3u * (size_t)(N ? N : 1u), sizeof(float));
    bool ok = x && vk_pbd_device_read_state(s->dev, x, NULL) == SINEW_OK;
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t c = 0; c < 3u; ++c) out[3u * i + c] = ok ? x[c * N + i] : 0.0f;
    sinew_host_free(&s->host, x);
}

static void set_output_blend_cb(void* sim, const float* previous, float fraction)
{
    vk_pbd* s = (vk_pbd*)sim;
    s->blend = previous != NULL;
    s->fraction = fraction;
}

static const ps_update_sim vk_pbd_update_ops = {set_pose_cb, step_cb, clear_velocities_cb,
                                                skin_positions_cb, set_output_blend_cb};

/* ---- the update ---- */

/* Stops being the device writer of the bound output; a read release it was to wait for on
 * the device is then waited for on the host (as vk-lbs does). */
static void detach_output(vk_pbd* s)
{
    if (s->output && s->output->gpu_writer == s) {
        s->output->gpu_writer = NULL;
        sinew_vk_output_wait_pending(s->output, UINT64_MAX);
    }
    s->output = NULL;
}

/* The steps of an update recorded into one submission (ps_update.c's time: the whole steps of
 * h that dt and the carried remainder make, through the poses between the updates'), the skin
 * kept before the last one for interpolate_output, and the velocities cleared after a
 * restart's step. */
static sinew_result record_steps(vk_pbd* s, const sinew_step_plan* plan, bool reset)
{
    sinew_result r = SINEW_OK;
    for (uint32_t i = 0; r == SINEW_OK && i < plan->count; ++i) {
        const float* pose = ps_update_step_pose(&s->update, plan, i, reset);
        if (pose) pbd_sim_set_pose(s->sim, pose);
        if (s->params.update.interpolate_output && i + 1u == plan->count) {
            vk_pbd_device_keep_skin(s->dev);
            s->update.have_previous = true;
        }
        r = vk_pbd_device_step(s->dev);
        if (r == SINEW_OK && reset && i == 0) vk_pbd_device_clear_velocities(s->dev);
    }
    return r;
}

/* The output after an update that ran `count` steps, as ps_update.c's: a bound device output
 * gets the render mesh in the same submission (every update, so that a slot bound since the
 * last one gets it too); host arrays get it after a step; own buffers are read back when
 * asked for. */
static void after_update(vk_pbd* s, uint32_t count, bool moved)
{
    ps_output* o = &s->out;
    if (s->output || (!o->bound && (count > 0 || moved))) {
        o->shape = PS_SHAPE_SIM;
        o->positions_fresh = o->normals_fresh = false;
        o->binding_current = false;
    } else if (count > 0 || moved) {
        ps_output_after_step(o);
    } else {
        ps_output_fill_binding(o);
    }
}

static sinew_result vk_pbd_step(void* instance, float dt)
{
    vk_pbd* s = vk_pbd_cast(instance);
    if (!s) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = ps_update_check_dt(&s->host, VK_PBD_NAME, dt);
    sinew_step_plan plan;
    bool reset = false;
    if (r == SINEW_OK) r = ps_update_begin(&s->update, &s->jump, &s->out, &s->model, dt, &plan, &reset);
    if (r != SINEW_OK) return r;
    bool interpolate = s->params.update.interpolate_output && s->update.have_previous;
    bool moved = plan.count == 0 && interpolate && s->out.shape == PS_SHAPE_SIM;
    sinew_vk_output* wait_output = NULL;
    uint64_t wait_read = 0;
    vk_pbd_target own = vk_pbd_device_own_target(s->dev), t = own;
    if (s->output) {
        t = (vk_pbd_target){s->output->buffer, s->output->position_offset[s->slot],
                            s->output->normal_offset[s->slot]};
        if (s->output->in_frame && s->output->gpu_writer == s) {
            wait_output = s->output;
            wait_read = s->output->pending_read_wait;
        }
    }
    bool record = plan.count > 0 || s->output;
    if (record) r = vk_pbd_device_begin(s->dev, &t);
    if (r == SINEW_OK && record) r = record_steps(s, &plan, reset);
    ps_update_end(&s->update);
    if (s->params.update.interpolate_output && s->update.have_previous) {
        s->blend = true;
        s->fraction = (float)sinew_step_clock_fraction(&s->update.clock);
    }
    if (r == SINEW_OK && s->output) vk_pbd_device_upsample(s->dev, s->blend, s->fraction);
    if (r == SINEW_OK && record) r = vk_pbd_device_submit(s->dev, wait_output, wait_read);
    if (r != SINEW_OK) return r;
    if (wait_output) {
        wait_output->pending_read_wait = 0;
        wait_output->gpu_wrote = 1;
    }
    after_update(s, plan.count, moved);
    return SINEW_OK;
}

/* ---- binding ---- */

/* The sinew_vk_output named in a chain, or NULL. */
static const sinew_vk_output_ext* find_output_ext(const void* next)
{
    for (const sinew_ext_header* h = next; h; h = h->next)
        if (h->type == SINEW_EXT_VULKAN_OUTPUT) return (const sinew_vk_output_ext*)h;
    return NULL;
}

/* A slot of an output of this context: the updates write it on the device. */
static sinew_result bind_device(vk_pbd* s, sinew_vk_output* output, uint32_t slot)
{
    if (output->capacity < s->model.render_count)
        return sinew_host_fail(&s->host, SINEW_ERROR_OUTPUT_BINDING,
                               "vk-pbd bind_output: the output holds %u vertices, the mesh has %u",
                               output->capacity, s->model.render_count);
    if (s->output != output) detach_output(s);
    s->out.bound = false;
    s->output = output;
    s->slot = slot;
    output->gpu_writer = s;
    return SINEW_OK;
}

static sinew_result vk_pbd_bind_output(void* instance, const sinew_output_view* out)
{
    vk_pbd* s = vk_pbd_cast(instance);
    if (!s) return SINEW_ERROR_INVALID_ARGUMENT;
    if (out && out->struct_size < sizeof(sinew_output_view))
        return sinew_host_fail(&s->host, SINEW_ERROR_STRUCT_SIZE,
                               "vk-pbd bind_output: output struct_size %u is below %zu",
                               out->struct_size, sizeof(sinew_output_view));
    const sinew_vk_output_ext* ext = out ? find_output_ext(out->next) : NULL;
    sinew_vk_output* output = ext ? sinew_vk_output_from_ext(ext) : NULL;
    if (ext && !output)
        return sinew_host_fail(&s->host, SINEW_ERROR_OUTPUT_BINDING,
                               "vk-pbd bind_output: the Vulkan output extension names no live "
                               "sinew_vk_output slot");
    for (const sinew_ext_header* h = out ? out->next : NULL; h; h = h->next)
        if (h->type == SINEW_EXT_VULKAN_RANGE)
            return sinew_host_fail(&s->host, SINEW_ERROR_OUTPUT_BINDING,
                                   "vk-pbd bind_output: an engine's buffer range "
                                   "(sinew_vk_range_ext) is written by vk-lbs and vk-dqs only");
    if (output && output->ctx == s->ctx) return bind_device(s, output, ext->slot);
    /* host arrays, or an output of another device through its host pointers */
    sinew_output_view host_view;
    if (out) {
        host_view = *out;
        host_view.next = NULL;
        if (!out->positions && out->next)
            return sinew_host_fail(&s->host, SINEW_ERROR_OUTPUT_BINDING,
                                   "vk-pbd bind_output: the external output is on another "
                                   "Vulkan device and has no host pointers");
    }
    sinew_result r = ps_output_bind(&s->out, &s->host, out ? &host_view : NULL);
    if (r == SINEW_OK) detach_output(s);
    return r;
}

/* ---- the instance ---- */

static sinew_result vk_pbd_probe(const sinew_host_api* host)
{
    return sinew_vk_backend_probe(host);
}

static void vk_pbd_destroy(void* instance)
{
    vk_pbd* s = vk_pbd_cast(instance);
    if (!s) return;
    sinew_host_api host = s->host;
    if (s->dev) (void)vk_pbd_device_wait(s->dev);
    detach_output(s);
    if (s->sim && s->params.profile) ps_update_log_profile(&s->update);
    vk_pbd_device_destroy(s->dev);
    pbd_sim_destroy(s->sim);
    ps_model_free(&host, &s->model);
    ps_output_free(&s->out, &host);
    ps_jump_free(&s->jump);
    ps_update_free(&s->update);
    s->shell.magic = 0;
    sinew_host_free(&host, s);
}

/* pbd's simulation on the model, its copy on the device (with room for max_substeps steps per
 * submission), and what the updates need around them. */
static sinew_result prepare_simulation(vk_pbd* s, const sinew_rig_view* rig)
{
    const sinew_host_api* host = &s->host;
    sinew_result r = pbd_sim_create(host, &s->model, &s->params, &s->sim);
    if (r == SINEW_OK)
        r = vk_pbd_device_create(s->ctx, host, &s->model, s->sim, &s->params,
                                 s->params.update.max_substeps, &s->dev);
    if (r == SINEW_OK)
        r = ps_output_init(&s->out, host, VK_PBD_NAME, &rig->render_mesh, &vk_pbd_output_ops, s);
    if (r == SINEW_OK)
        r = ps_update_init(&s->update, host, VK_PBD_NAME, rig->joint_count, s->model.n,
                           s->params.timestep, &s->params.update);
    if (r == SINEW_OK)
        r = ps_jump_init(&s->jump, host, VK_PBD_NAME, rig, &s->model, &s->params.jump);
    return r;
}

/* The parameters, the context tied to the world, and the rig's checks. */
static sinew_result check_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                  const sinew_param* params, uint32_t param_count,
                                  const void* next, pbd_params* p, sinew_vk_context** ctx)
{
    *ctx = sinew_vk_backend_context(host);
    if (!*ctx)
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_UNAVAILABLE,
                               "vk-pbd: no Vulkan context is tied to this world "
                               "(sinew_vk_register_backends)");
    sinew_result r = vk_pbd_params_parse(host, params, param_count, next, p);
    return r == SINEW_OK ? ps_check_rig(host, rig, VK_PBD_NAME) : r;
}

static void log_prepared(const vk_pbd* s, bool baked)
{
    const pbd_constraints* c = pbd_sim_constraints(s->sim);
    sinew_host_log(&s->host, SINEW_LOG_INFO,
                   "vk-pbd: %s %u skin vertices, %u tets; %u stretch, %u volume and %u bending "
                   "constraints in %u colours, one dispatch each, on %s",
                   baked ? "restored from baked data:" : "prepared", s->model.n,
                   s->model.tet_count, c->stretch_count, c->volume_count, c->bending_count,
                   c->colour_count,
                   s->ctx->properties.deviceName);
}

static sinew_result vk_pbd_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                   const sinew_param* params, uint32_t param_count,
                                   const void* next, void** out_instance)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!out_instance)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "vk-pbd: out_instance is NULL");
    *out_instance = NULL;
    pbd_params p;
    sinew_vk_context* ctx = NULL;
    sinew_result r = check_prepare(host, rig, params, param_count, next, &p, &ctx);
    if (r != SINEW_OK) return r;
    vk_pbd* s = (vk_pbd*)sinew_host_calloc(host, 1, sizeof(vk_pbd));
    if (!s) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "vk-pbd: out of memory");
    s->shell = (ps_shell){PS_SHELL_MAGIC, VK_PBD_NAME, &s->host, rig->joint_count,
                          rig->render_mesh.indices, &s->model, &vk_pbd_update_ops, NULL,
                          &s->out, &s->update, &s->jump};
    s->host = *host;
    s->host.struct_size = (uint32_t)sizeof(sinew_host_api);
    s->ctx = ctx;
    s->params = p;
    bool baked = false;
    r = pbd_model_prepare(host, rig, &s->params, VK_PBD_NAME, &s->model, &baked);
    if (r == SINEW_OK) r = prepare_simulation(s, rig);
    if (r != SINEW_OK) {
        vk_pbd_destroy(s);
        return r;
    }
    if (s->params.profile) ps_build_log(host, VK_PBD_NAME, &s->model);
    log_prepared(s, baked);
    s->shell.sim = s;
    *out_instance = s;
    return SINEW_OK;
}

const sinew_backend_vtable sinew_vk_pbd_table = {
    (uint32_t)sizeof(sinew_backend_vtable),
    VK_PBD_NAME,
    SINEW_BACKEND_FLAG_PHYSICS | SINEW_BACKEND_FLAG_GPU,
    vk_pbd_probe,
    vk_pbd_prepare,
    ps_shell_set_pose,
    vk_pbd_step,
    ps_shell_read_output,
    vk_pbd_bind_output,
    ps_shell_get_state,
    ps_shell_set_state,
    vk_pbd_destroy,
    NULL,
    vk_pbd_param_info,
    VK_PBD_PARAM_COUNT,
};
