/* The geometric CPU backends' shared instance code; skin_geometric.h has the contract.
 * SPDX-License-Identifier: MIT */
#include "skin_geometric.h"
#include "sinew_params.h"

/* ---- running kernels over the job system ---- */

typedef struct sinew_geo_task {
    sinew_skin_kernel_fn kernel;
    sinew_skin_job job;
} sinew_geo_task;

static void sinew_geo_task_run(void* data, uint32_t begin, uint32_t end)
{
    const sinew_geo_task* task = (const sinew_geo_task*)data;
    task->kernel(&task->job, begin, end);
}

/* Skins every vertex with `transforms` into the given arrays (either may be NULL). */
static void sinew_geo_skin(sinew_geo_instance* inst, const float* transforms,
                           float* positions, size_t position_stride, float* normals,
                           size_t normal_stride)
{
    if (!positions && !normals) return;
    sinew_geo_task task;
    task.kernel = inst->kernel;
    task.job.rest = inst->rest;
    task.job.offsets = inst->offsets;
    task.job.weights = inst->weights;
    task.job.width = inst->width;
    task.job.transforms = transforms;
    task.job.positions = positions;
    task.job.position_stride = position_stride;
    task.job.normals = normals;
    task.job.normal_stride = normal_stride;
    sinew_host_parallel_for(&inst->host, sinew_geo_task_run, &task, inst->vertex_count,
                            SINEW_GEO_GRAIN);
}

/* Brings the own buffers up to the current shape (normals only when asked). */
static void sinew_geo_refresh(sinew_geo_instance* inst, bool need_normals)
{
    bool pos = !inst->positions_fresh;
    bool nrm = need_normals && !inst->normals_fresh;
    if (!pos && !nrm) return;
    uint32_t n = inst->vertex_count;
    switch (inst->shape) {
    case SINEW_GEO_SHAPE_REST:
        if (pos) memcpy(inst->positions, inst->rest_positions, (size_t)n * 12u);
        if (nrm) memcpy(inst->normals, inst->rest_normals, (size_t)n * 12u);
        break;
    case SINEW_GEO_SHAPE_POSED:
        sinew_geo_skin(inst, inst->stepped, pos ? inst->positions : NULL, 12u,
                       nrm ? inst->normals : NULL, 12u);
        break;
    case SINEW_GEO_SHAPE_STATE:
        /* Positions came from set_state and are always fresh; normals follow the pose. */
        if (nrm && inst->has_pose)
            sinew_geo_skin(inst, inst->latest, NULL, 12u, inst->normals, 12u);
        else if (nrm)
            memcpy(inst->normals, inst->rest_normals, (size_t)n * 12u);
        break;
    }
    if (pos) inst->positions_fresh = true;
    if (nrm) inst->normals_fresh = true;
}

/* ---- parameters ---- */

/* The stored form of the two keys (sinew_params.h). */
typedef struct geo_params {
    int normals;
    int simd;
} geo_params;

static const int geo_simd_values[5] = {SINEW_SIMD_AUTO, SINEW_SIMD_SCALAR, SINEW_SIMD_SSE41,
                                       SINEW_SIMD_AVX2, SINEW_SIMD_AVX512};

#define GEO_PARAM_ROWS(X, T)                                                                      \
    X(T, normals, FLAG, 0, 0.0, 1.0, "1", NULL, "1: skinned normals too; 0: positions only", INT, \
      normals, NULL)                                                                              \
    X(T, simd, CHOICE, 0, 0.0, 0.0, "auto", "auto|scalar|sse|avx2|avx512",                        \
      "the kernels' instruction set; one the CPU lacks is refused (the same results)", INT, simd, \
      geo_simd_values)

const sinew_param_info sinew_geo_param_info[SINEW_GEO_PARAM_COUNT] = {
    GEO_PARAM_ROWS(SINEW_PARAM_INFO_ROW, geo_params)};
static const sinew_param_slot geo_param_slots[] = {
    GEO_PARAM_ROWS(SINEW_PARAM_SLOT_ROW, geo_params)};
_Static_assert(sizeof geo_param_slots / sizeof geo_param_slots[0] == SINEW_GEO_PARAM_COUNT,
               "SINEW_GEO_PARAM_COUNT is the number of rows");

sinew_result sinew_geo_parse_params(const sinew_host_api* host, const char* name,
                                    const sinew_param* params, uint32_t count, const void* next,
                                    bool* want_normals, sinew_simd* simd)
{
    geo_params p = {1, SINEW_SIMD_AUTO};
    sinew_result r = sinew_params_parse(host, name, sinew_geo_param_info, geo_param_slots,
                                        SINEW_GEO_PARAM_COUNT, params, count, next, &p);
    *want_normals = p.normals != 0;
    *simd = (sinew_simd)p.simd;
    return r;
}

/* ---- vtable entries ---- */

sinew_result sinew_geo_probe(const sinew_host_api* host)
{
    return host ? SINEW_OK : SINEW_ERROR_INVALID_ARGUMENT;
}

void sinew_geo_destroy(void* instance)
{
    sinew_geo_instance* inst = sinew_geo_cast(instance);
    if (!inst) return;
    sinew_host_api host = inst->host;
    sinew_host_free(&host, inst->rest);
    sinew_host_free(&host, inst->offsets);
    sinew_host_free(&host, inst->positions);
    sinew_host_free(&host, inst->normals);
    sinew_host_free(&host, inst->latest);
    sinew_host_free(&host, inst->stepped);
    inst->magic = 0;
    sinew_host_free(&host, inst);
}


/* The kernel for *simd: for AUTO the best the CPU runs that the backend has (*simd resolved),
 * else the one asked for, BACKEND_UNAVAILABLE when the CPU or the build lacks it. */
static sinew_result sinew_geo_pick_kernel(const sinew_geo_ops* ops,
                                          const sinew_host_api* host, sinew_simd* simd)
{
    if (*simd == SINEW_SIMD_AUTO) {
        *simd = sinew_simd_best();
        while (*simd > SINEW_SIMD_SCALAR && !ops->kernels[*simd]) *simd = (sinew_simd)(*simd - 1);
        return SINEW_OK;
    }
    if (!sinew_simd_supported(*simd) || !ops->kernels[*simd])
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_UNAVAILABLE,
                               "%s: simd=%s is not available on this CPU or in this build",
                               ops->name, sinew_simd_name(*simd));
    return SINEW_OK;
}

/* The instance's rest data: position and normal interleaved in 8 floats per vertex, each
 * influence's offset into the transforms, and the rest shape as the first output. */
static void sinew_geo_fill_rest(sinew_geo_instance* inst, const sinew_rig_view* rig)
{
    const uint32_t n = inst->vertex_count;
    for (uint32_t v = 0; v < n; ++v) {
        float* d = inst->rest + 8u * v;
        memcpy(d, inst->rest_positions + 3u * v, 12u);
        d[3] = 1.0f;
        memcpy(d + 4, inst->rest_normals + 3u * v, 12u);
        d[7] = 0.0f;
    }
    for (size_t i = 0; i < (size_t)n * inst->width; ++i)
        inst->offsets[i] = rig->padded_joints[i] * inst->ops->transform_floats;
    memcpy(inst->positions, inst->rest_positions, (size_t)n * 12u);
    memcpy(inst->normals, inst->rest_normals, (size_t)n * 12u);
    inst->positions_fresh = true;
    inst->normals_fresh = true;
}

sinew_result sinew_geo_prepare(const sinew_geo_ops* ops, const sinew_host_api* host,
                               const sinew_rig_view* rig, const sinew_param* params,
                               uint32_t param_count, const void* next,
                               void** out_instance)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    if (host->struct_size < sizeof(sinew_host_api)) return SINEW_ERROR_STRUCT_SIZE;
    const char* name = ops->name;
    if (!host->allocator.alloc || !host->allocator.free || !host->jobs.parallel_for)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: the host API lacks an allocator or parallel_for", name);
    sinew_result checked = sinew_geo_check_prepare(host, name, rig, out_instance);
    if (checked != SINEW_OK) return checked;
    bool want_normals;
    sinew_simd simd;
    sinew_result r =
        sinew_geo_parse_params(host, name, params, param_count, next, &want_normals, &simd);
    if (r == SINEW_OK) r = sinew_geo_pick_kernel(ops, host, &simd);
    if (r != SINEW_OK) return r;
    r = sinew_geo_check_rig(host, name, rig);
    if (r != SINEW_OK) return r;

    sinew_geo_instance* inst =
        (sinew_geo_instance*)sinew_host_calloc(host, 1, sizeof(sinew_geo_instance));
    if (!inst) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", name);
    inst->magic = SINEW_GEO_MAGIC;
    inst->host = *host;
    inst->host.struct_size = (uint32_t)sizeof(sinew_host_api);
    inst->ops = ops;
    uint32_t n = rig->render_mesh.vertex_count;
    inst->vertex_count = n;
    inst->joint_count = rig->joint_count;
    inst->width = rig->padded_width;
    inst->weights = rig->padded_weights;
    inst->rest_positions = rig->render_mesh.positions;
    inst->rest_normals = rig->render_mesh.normals;
    inst->want_normals = want_normals;
    inst->simd = simd;
    inst->kernel = ops->kernels[simd];
    inst->shape = SINEW_GEO_SHAPE_REST;
    size_t transform_bytes = (size_t)rig->joint_count * ops->transform_floats * sizeof(float);
    inst->rest = (float*)sinew_host_calloc(host, n, 8u * sizeof(float));
    inst->offsets = (uint32_t*)sinew_host_calloc(host, n, (size_t)inst->width * sizeof(uint32_t));
    inst->positions = (float*)sinew_host_calloc(host, n, 12u);
    inst->normals = (float*)sinew_host_calloc(host, n, 12u);
    inst->latest = (float*)sinew_host_alloc(host, transform_bytes);
    inst->stepped = (float*)sinew_host_alloc(host, transform_bytes);
    if (!inst->rest || !inst->offsets || !inst->positions || !inst->normals || !inst->latest ||
        !inst->stepped) {
        sinew_geo_destroy(inst);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "%s: out of memory for a mesh of %u vertices", name, n);
    }
    sinew_geo_fill_rest(inst, rig);
    sinew_host_log(host, SINEW_LOG_DEBUG, "%s: %u vertices, %u influences, simd=%s, normals=%d",
                   name, n, inst->width, sinew_simd_name(simd), (int)want_normals);
    *out_instance = inst;
    return SINEW_OK;
}

sinew_result sinew_geo_set_pose(void* instance, const sinew_pose_view* pose)
{
    sinew_geo_instance* inst = sinew_geo_cast(instance);
    if (!inst) return SINEW_ERROR_INVALID_ARGUMENT;
    const sinew_host_api* host = &inst->host;
    const char* name = inst->ops->name;
    if (!pose) return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s: pose is NULL", name);
    if (pose->struct_size < SINEW_POSE_VIEW_SIZE_V1)
        return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE,
                               "%s: pose struct_size %u is below %u", name, pose->struct_size,
                               SINEW_POSE_VIEW_SIZE_V1);
    if (pose->joint_count != inst->joint_count)
        return sinew_host_fail(host, SINEW_ERROR_JOINT_COUNT,
                               "%s: a pose of %u joints for a rig of %u", name, pose->joint_count,
                               inst->joint_count);
    if (!pose->skinning_matrices)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: the pose has no skinning matrices", name);
    for (uint32_t j = 0; j < inst->joint_count; ++j) {
        if (!sinew_geo_finite(pose->skinning_matrices + 16u * j, 16u))
            return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                                   "%s: the skinning matrix of joint %u is not finite", name, j);
    }
    inst->ops->convert_pose(pose->skinning_matrices, inst->joint_count, inst->latest);
    inst->has_pose = true;
    inst->pose_pending = true;
    if (inst->shape == SINEW_GEO_SHAPE_STATE && inst->want_normals) inst->normals_fresh = false;
    return SINEW_OK;
}

sinew_result sinew_geo_step(void* instance, float dt)
{
    sinew_geo_instance* inst = sinew_geo_cast(instance);
    if (!inst) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!isfinite(dt) || dt < 0.0f)
        return sinew_host_fail(
            &inst->host, isfinite(dt) ? SINEW_ERROR_INVALID_ARGUMENT : SINEW_ERROR_NONFINITE,
            "%s: dt %g must be finite and not negative", inst->ops->name, (double)dt);
    if (inst->pose_pending) {
        memcpy(inst->stepped, inst->latest,
               (size_t)inst->joint_count * inst->ops->transform_floats * sizeof(float));
        inst->pose_pending = false;
    }
    inst->shape = inst->has_pose ? SINEW_GEO_SHAPE_POSED : SINEW_GEO_SHAPE_REST;
    float* pos = inst->positions;
    float* nrm = inst->want_normals ? inst->normals : NULL;
    size_t ps = 12u, ns = 12u;
    if (inst->bound) {
        pos = inst->binding.positions;
        ps = inst->binding.position_stride;
        nrm = inst->want_normals ? inst->binding.normals : NULL;
        ns = inst->binding.normal_stride;
    }
    if (inst->shape == SINEW_GEO_SHAPE_POSED) {
        sinew_geo_skin(inst, inst->stepped, pos, ps, nrm, ns);
    } else {
        sinew_output_copy(inst->rest_positions, inst->vertex_count, pos, ps);
        if (nrm) sinew_output_copy(inst->rest_normals, inst->vertex_count, nrm, ns);
    }
    /* Own normals with normals=0 keep the rest normals, which are always current. */
    inst->positions_fresh = !inst->bound;
    inst->normals_fresh = !inst->bound || !inst->want_normals;
    return SINEW_OK;
}

/* The current shape (the own buffers refreshed first where a bound step left them behind)
 * copied into out. */
sinew_result sinew_geo_read_output(void* instance, const sinew_output_view* out)
{
    sinew_geo_instance* inst = sinew_geo_cast(instance);
    if (!inst) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!out)
        return sinew_host_fail(&inst->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s read_output: out is NULL", inst->ops->name);
    sinew_result r = sinew_output_check(&inst->host, inst->ops->name, "read_output", out,
                                        inst->vertex_count);
    if (r != SINEW_OK) return r;
    sinew_geo_refresh(inst, out->normals != NULL);
    sinew_output_copy_view(inst->positions, inst->normals, inst->vertex_count, out);
    return SINEW_OK;
}

sinew_result sinew_geo_bind_output(void* instance, const sinew_output_view* out)
{
    sinew_geo_instance* inst = sinew_geo_cast(instance);
    if (!inst) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!out) {
        /* Back to the own buffers: bring them up to date first, so a read right after unbinding
         * and the next step both start from the latest shape. */
        sinew_geo_refresh(inst, true);
        inst->bound = false;
        return SINEW_OK;
    }
    sinew_result r = sinew_output_check(&inst->host, inst->ops->name, "bind_output", out,
                                        inst->vertex_count);
    if (r != SINEW_OK) return r;
    inst->binding = sinew_output_binding(out);
    inst->bound = true;
    return SINEW_OK;
}

static sinew_result sinew_geo_check_state(const sinew_geo_instance* inst,
                                          const sinew_state_view* state, const char* fn)
{
    const sinew_host_api* host = &inst->host;
    const char* name = inst->ops->name;
    if (!state)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s %s: state is NULL", name,
                               fn);
    if (state->struct_size < sizeof(sinew_state_view))
        return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE,
                               "%s %s: state struct_size %u is below %zu", name, fn,
                               state->struct_size, sizeof(sinew_state_view));
    if (state->vertex_count != inst->vertex_count)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s %s: a state of %u vertices for a mesh of %u", name, fn,
                               state->vertex_count, inst->vertex_count);
    if (!state->positions)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "%s %s: positions is NULL", name,
                               fn);
    return SINEW_OK;
}

sinew_result sinew_geo_get_state(void* instance, const sinew_state_view* state)
{
    sinew_geo_instance* inst = sinew_geo_cast(instance);
    if (!inst) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = sinew_geo_check_state(inst, state, "get_state");
    if (r != SINEW_OK) return r;
    sinew_geo_refresh(inst, false);
    memcpy(state->positions, inst->positions, (size_t)inst->vertex_count * 12u);
    if (state->velocities) memset(state->velocities, 0, (size_t)inst->vertex_count * 12u);
    return SINEW_OK;
}

sinew_result sinew_geo_set_state(void* instance, const sinew_state_view* state)
{
    sinew_geo_instance* inst = sinew_geo_cast(instance);
    if (!inst) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = sinew_geo_check_state(inst, state, "set_state");
    if (r != SINEW_OK) return r;
    if (!sinew_geo_finite(state->positions, (size_t)inst->vertex_count * 3u))
        return sinew_host_fail(&inst->host, SINEW_ERROR_NONFINITE,
                               "%s set_state: a position is not finite", inst->ops->name);
    memcpy(inst->positions, state->positions, (size_t)inst->vertex_count * 12u);
    inst->shape = SINEW_GEO_SHAPE_STATE;
    inst->positions_fresh = true;
    inst->normals_fresh = !inst->want_normals;
    if (!inst->want_normals)
        memcpy(inst->normals, inst->rest_normals, (size_t)inst->vertex_count * 12u);
    return SINEW_OK;
}

