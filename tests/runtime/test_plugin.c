/* A small backend shipped as a separate shared library, in several variants (one per
 * PLUGIN_* define) to exercise the host's ABI negotiation. The good variant registers
 * "test-rigid": every vertex follows the first joint rigidly; the bad_result variant's step
 * returns a code that is no sinew_result. Variants that answer ABI version 3 give the backend a
 * user pointer and check, in probe and prepare, that the host hands it back (and that versions
 * 1 and 2 get none); needs_vulkan, unknown_service, bad_services and many_services ask for
 * services.
 * SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_host.h>
#include <sinew/sinew_plugin.h>

/* The user pointer a version 3 answer gives the backend, and whether the answer was one. */
static int g_user;
static int g_answered_v3;

/* Whether the host handed the backend the user pointer its plugin's answer gave. */
static int user_pointer_ok(const sinew_host_api* host)
{
    return sinew_host_backend_user(host) == (g_answered_v3 ? (void*)&g_user : NULL);
}

typedef struct rigid {
    const sinew_host_api* host;
    const sinew_rig_view* rig;
    float matrix[16];
    float* positions;
    float* normals;
    sinew_output_view bound;
    int is_bound;
} rigid;

static sinew_result rigid_probe(const sinew_host_api* host)
{
    return user_pointer_ok(host) ? SINEW_OK : SINEW_ERROR_BACKEND_UNAVAILABLE;
}

static void identity(float* m)
{
    memset(m, 0, 64);
    m[0] = m[5] = m[10] = m[15] = 1.0f;
}

static sinew_result rigid_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                  const sinew_param* params, uint32_t param_count,
                                  const void* next, void** out)
{
    (void)params;
    if (param_count > 0 || next) {
        host->logger.func(SINEW_LOG_ERROR, "test-rigid takes no parameter", host->logger.user);
        return SINEW_ERROR_PARAMETER;
    }
    if (!user_pointer_ok(host)) {
        host->logger.func(SINEW_LOG_ERROR, "test-rigid: not the user pointer of the plugin's "
                          "answer", host->logger.user);
        return SINEW_ERROR_BACKEND_FAILED;
    }
    rigid* r = (rigid*)calloc(1, sizeof *r);
    if (!r) return SINEW_ERROR_OUT_OF_MEMORY;
    uint32_t n = rig->render_mesh.vertex_count;
    r->host = host;
    r->rig = rig;
    r->positions = (float*)malloc((size_t)n * 12u);
    r->normals = (float*)malloc((size_t)n * 12u);
    if (!r->positions || !r->normals) {
        free(r->positions);
        free(r->normals);
        free(r);
        return SINEW_ERROR_OUT_OF_MEMORY;
    }
    memcpy(r->positions, rig->render_mesh.positions, (size_t)n * 12u);
    memcpy(r->normals, rig->render_mesh.normals, (size_t)n * 12u);
    identity(r->matrix);
    *out = r;
    return SINEW_OK;
}

static sinew_result rigid_set_pose(void* inst, const sinew_pose_view* pose)
{
    rigid* r = (rigid*)inst;
    memcpy(r->matrix, pose->skinning_matrices, 64);
    return SINEW_OK;
}

static sinew_result rigid_step(void* inst, float dt)
{
    (void)dt;
    rigid* r = (rigid*)inst;
    const float* m = r->matrix;
    for (uint32_t v = 0; v < r->rig->render_mesh.vertex_count; ++v) {
        const float* p = r->rig->render_mesh.positions + 3u * v;
        const float* n = r->rig->render_mesh.normals + 3u * v;
        for (int i = 0; i < 3; ++i) {
            r->positions[3u * v + i] = m[i] * p[0] + m[4 + i] * p[1] + m[8 + i] * p[2] + m[12 + i];
            r->normals[3u * v + i] = m[i] * n[0] + m[4 + i] * n[1] + m[8 + i] * n[2];
        }
    }
    if (r->is_bound) {
        for (uint32_t v = 0; v < r->rig->render_mesh.vertex_count; ++v) {
            memcpy((char*)r->bound.positions + v * r->bound.position_stride, r->positions + 3u * v, 12);
            if (r->bound.normals)
                memcpy((char*)r->bound.normals + v * r->bound.normal_stride, r->normals + 3u * v, 12);
        }
    }
#if defined(PLUGIN_BAD_RESULT)
    return (sinew_result)777; /* a plugin's private code, not a sinew_result */
#else
    return SINEW_OK;
#endif
}

static sinew_result rigid_read(void* inst, const sinew_output_view* out)
{
    rigid* r = (rigid*)inst;
    for (uint32_t v = 0; v < r->rig->render_mesh.vertex_count; ++v) {
        memcpy((char*)out->positions + v * out->position_stride, r->positions + 3u * v, 12);
        if (out->normals) memcpy((char*)out->normals + v * out->normal_stride, r->normals + 3u * v, 12);
    }
    return SINEW_OK;
}

static sinew_result rigid_bind(void* inst, const sinew_output_view* out)
{
    rigid* r = (rigid*)inst;
    r->is_bound = out != NULL;
    if (out) r->bound = *out;
    return SINEW_OK;
}

static sinew_result rigid_get_state(void* inst, const sinew_state_view* s)
{
    rigid* r = (rigid*)inst;
    memcpy(s->positions, r->positions, (size_t)s->vertex_count * 12u);
    if (s->velocities) memset(s->velocities, 0, (size_t)s->vertex_count * 12u);
    return SINEW_OK;
}

static sinew_result rigid_set_state(void* inst, const sinew_state_view* s)
{
    rigid* r = (rigid*)inst;
    memcpy(r->positions, s->positions, (size_t)s->vertex_count * 12u);
    return SINEW_OK;
}

static void rigid_destroy(void* inst)
{
    rigid* r = (rigid*)inst;
    free(r->positions);
    free(r->normals);
    free(r);
}

/* The parameters it describes (ABI version 2); it takes none. */
#if !defined(PLUGIN_BAD_PARAMS)
static const sinew_param_info g_info[1] = {
    {"scale", SINEW_PARAM_REAL, SINEW_PARAM_MIN_OPEN, 0.0, 10.0, "1", NULL, "unused"}};
#else
static const sinew_param_info g_bad_info[1] = {
    {NULL, SINEW_PARAM_REAL, 0u, 0.0, 1.0, "1", NULL, "no key"}};
#endif

static sinew_backend_vtable g_rigid = {
    sizeof(sinew_backend_vtable),
#if defined(PLUGIN_DUPLICATE)
    "lbs",
#else
    "test-rigid",
#endif
    0u, rigid_probe, rigid_prepare, rigid_set_pose, rigid_step, rigid_read, rigid_bind,
    rigid_get_state, rigid_set_state, rigid_destroy, NULL,
#if defined(PLUGIN_BAD_PARAMS)
    g_bad_info, 1u, /* a description without a key */
#else
    g_info, 1u,
#endif
};

static const sinew_backend_vtable* g_tables[1] = { &g_rigid };
static void* const g_users[1] = { &g_user };
#if defined(PLUGIN_NEEDS_VULKAN)
static const sinew_service_request g_services[1] = { { SINEW_SERVICE_VULKAN, 1u } };
#elif defined(PLUGIN_UNKNOWN_SERVICE)
static const sinew_service_request g_services[1] = { { 77u, 1u } }; /* a later host's service */
#endif

__attribute__((visibility("default"))) sinew_result sinew_plugin_entry(const sinew_host_info* host,
                                                                       sinew_plugin_info* out);

sinew_result sinew_plugin_entry(const sinew_host_info* host, sinew_plugin_info* out)
{
    if (!host || !out || host->struct_size < sizeof(sinew_host_info)) return SINEW_ERROR_PLUGIN_ABI;
#if defined(PLUGIN_REFUSE)
    return SINEW_ERROR_PLUGIN_ABI; /* a plugin that speaks none of the host's versions */
#endif
    if (host->abi_version_min > SINEW_PLUGIN_ABI_VERSION ||
        host->abi_version_max < SINEW_PLUGIN_ABI_VERSION ||
        host->sizeof_backend_vtable < sizeof(sinew_backend_vtable))
        return SINEW_ERROR_PLUGIN_ABI;
    out->abi_version = SINEW_PLUGIN_ABI_VERSION;
    out->plugin_name = "test plugin";
    out->backend_count = 1;
    out->backends = g_tables;
    /* version 3's fields, where the host's struct has them */
    g_answered_v3 = out->struct_size >= sizeof(sinew_plugin_info);
    if (g_answered_v3) out->backend_users = g_users;
#if defined(PLUGIN_NEEDS_VULKAN) || defined(PLUGIN_UNKNOWN_SERVICE)
    out->services = g_services;
    out->service_count = 1;
#elif defined(PLUGIN_BAD_SERVICES)
    out->service_count = 2; /* and no array */
#elif defined(PLUGIN_MANY_SERVICES)
    static sinew_service_request many[SINEW_PLUGIN_MAX_SERVICES + 1u];
    out->services = many;
    out->service_count = SINEW_PLUGIN_MAX_SERVICES + 1u;
#endif
#if defined(PLUGIN_WRONG_ABI)
    out->abi_version = SINEW_PLUGIN_ABI_VERSION + 7u; /* built against a future header */
#elif defined(PLUGIN_NULL_TABLE)
    out->backends = NULL;
#elif defined(PLUGIN_NO_BACKENDS)
    out->backend_count = 0;
#elif defined(PLUGIN_V1)
    /* built against ABI version 1: its table ends after bake, its answer after backends (the
     * host ignores what lies beyond: the users set above must not reach the backend) */
    out->abi_version = 1u;
    g_answered_v3 = 0;
    g_rigid.struct_size = (uint32_t)offsetof(sinew_backend_vtable, params);
#elif defined(PLUGIN_V2)
    /* built against ABI version 2: the same table, an answer that ends after backends */
    out->abi_version = 2u;
    g_answered_v3 = 0;
#elif defined(PLUGIN_SHORT_TABLE)
    g_rigid.struct_size = 8u; /* a table from an older, smaller ABI */
#elif defined(PLUGIN_HUGE_COUNT)
    out->backend_count = 0xFFFFFFF0u; /* garbage: the array holds one table */
#endif
    return SINEW_OK;
}
