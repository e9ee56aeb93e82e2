/* The tissue model of projective skinning built from a sample character, through the
 * sinew_tissue library that ps and fps use. SPDX-License-Identifier: MIT */
#include "sample_tissue.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps_internal.h"
#include "sample_log.h"
#include "sample_options.h"

/* ---- the rig view ---- */

/* Area-weighted unit vertex normals of a mesh ((0, 0, 1) for a vertex without area), as the
 * runtime computes them for a mesh that brings none. NULL when memory runs out. */
static float* area_normals(const sinew_mesh_desc* mesh)
{
    float* n = calloc((size_t)mesh->vertex_count * 3u, sizeof(float));
    if (!n) return NULL;
    for (uint32_t t = 0; t < mesh->triangle_count; ++t) {
        const uint32_t* tri = mesh->indices + 3u * t;
        if (tri[0] >= mesh->vertex_count || tri[1] >= mesh->vertex_count ||
            tri[2] >= mesh->vertex_count) {
            continue;   /* the model's rig check names such a triangle */
        }
        const float* a = mesh->positions + 3u * tri[0];
        const float* b = mesh->positions + 3u * tri[1];
        const float* c = mesh->positions + 3u * tri[2];
        float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        float e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        float f[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                      e1[0] * e2[1] - e1[1] * e2[0]};
        for (int k = 0; k < 3; ++k)
            for (int q = 0; q < 3; ++q) n[3u * tri[k] + q] += f[q];
    }
    for (uint32_t v = 0; v < mesh->vertex_count; ++v) {
        float* x = n + 3u * v;
        float l = sqrtf(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
        if (l > 0.0f) {
            x[0] /= l, x[1] /= l, x[2] /= l;
        } else {
            x[0] = 0.0f, x[1] = 0.0f, x[2] = 1.0f;
        }
    }
    return n;
}

static sinew_mesh_view mesh_view(const sinew_mesh_desc* mesh, const float* normals)
{
    sinew_mesh_view v;
    memset(&v, 0, sizeof v);
    v.vertex_count = mesh->vertex_count;
    v.triangle_count = mesh->triangle_count;
    v.positions = mesh->positions;
    v.normals = normals;
    v.indices = mesh->indices;
    v.submesh_count = mesh->submesh_count;
    v.submesh_first_triangle = mesh->submesh_first_triangle;
    return v;
}

/* The render mesh's weights as the runtime holds them (normalised; computed automatically
 * when the character brings none), copied out of a rig made for the purpose. */
static sinew_result runtime_weights(const sample_character* character, sample_rig_view* out)
{
    sinew_world_desc wd = SINEW_WORLD_DESC_INIT;
    wd.thread_count = 1;
    wd.logger = sample_stderr_logger();
    wd.log_level = SINEW_LOG_ERROR;
    sinew_world* world = NULL;
    sinew_rig rig;
    const uint32_t *offsets = NULL, *joints = NULL;
    const float* weights = NULL;
    sinew_result r = sinew_world_create(&wd, &world);
    if (r == SINEW_OK) r = sinew_rig_create(world, &character->rig, &rig);
    if (r == SINEW_OK) r = sinew_rig_get_weights(world, rig, &offsets, &joints, &weights);
    if (r != SINEW_OK) {
        sinew_world_destroy(world);
        return sample_fail(r, "the rig of %s: %s", character->name, sinew_result_string(r));
    }
    uint32_t n = character->rig.render_mesh.vertex_count, e = offsets[n];
    out->weight_offsets = malloc(sizeof(uint32_t) * (n + 1u));
    out->weight_joints = malloc(sizeof(uint32_t) * (e ? e : 1u));
    out->weight_values = malloc(sizeof(float) * (e ? e : 1u));
    if (out->weight_offsets && out->weight_joints && out->weight_values) {
        memcpy(out->weight_offsets, offsets, sizeof(uint32_t) * (n + 1u));
        memcpy(out->weight_joints, joints, sizeof(uint32_t) * e);
        memcpy(out->weight_values, weights, sizeof(float) * e);
    } else {
        r = sample_fail(SINEW_ERROR_OUT_OF_MEMORY, "sample_rig_view_build: out of memory");
    }
    sinew_world_destroy(world);
    return r;
}

sinew_result sample_rig_view_build(const sample_character* character, sample_rig_view* out)
{
    if (!out || !character) {
        if (out) memset(out, 0, sizeof *out);
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_rig_view_build: NULL argument");
    }
    memset(out, 0, sizeof *out);
    const sinew_rig_desc* d = &character->rig;
    const sinew_mesh_desc* render = &d->render_mesh;
    const sinew_mesh_desc* sim = &d->simulation_mesh;
    if (!render->normals && render->vertex_count > 0 &&
        !(out->render_normals = area_normals(render))) {
        return sample_fail(SINEW_ERROR_OUT_OF_MEMORY, "sample_rig_view_build: out of memory");
    }
    if (sim->vertex_count > 0 && !(out->simulation_normals = area_normals(sim))) {
        sample_rig_view_free(out);
        return sample_fail(SINEW_ERROR_OUT_OF_MEMORY, "sample_rig_view_build: out of memory");
    }
    sinew_rig_view* v = &out->view;
    v->struct_size = (uint32_t)sizeof(sinew_rig_view);
    v->joint_count = d->skeleton.joint_count;
    v->parents = d->skeleton.parents;
    v->names = d->skeleton.names;
    v->bind_matrices = d->skeleton.bind_matrices;
    v->render_mesh = mesh_view(render, render->normals ? render->normals : out->render_normals);
    if (sim->vertex_count > 0) v->simulation_mesh = mesh_view(sim, out->simulation_normals);
    sinew_result r = runtime_weights(character, out);
    if (r != SINEW_OK) {
        sample_rig_view_free(out);
        return r;
    }
    v->weight_offsets = out->weight_offsets;
    v->weight_joints = out->weight_joints;
    v->weight_values = out->weight_values;
    return SINEW_OK;
}

void sample_rig_view_free(sample_rig_view* view)
{
    if (!view) return;
    free(view->render_normals);
    free(view->simulation_normals);
    free(view->weight_offsets);
    free(view->weight_joints);
    free(view->weight_values);
    memset(view, 0, sizeof *view);
}

/* ---- the shaping parameters ---- */

int sample_backend_is_volumetric(const char* backend)
{
    return backend && (strcmp(backend, "ps") == 0 || strcmp(backend, "fps") == 0 ||
                       strcmp(backend, "fps-cuda") == 0 || strcmp(backend, "pbd") == 0);
}

/* One shaping key into *out; 1 when `key` is none of them (ignored). */
static int parse_shaping_key(const char* key, const char* value, sample_tissue_params* out)
{
    if (strcmp(key, "decimate_above") == 0) {
        return sample_parse_u32("--set decimate_above", value, 0, 100000000u, &out->decimate_above);
    }
    if (strcmp(key, "simulation_vertices") == 0) {
        return sample_parse_u32("--set simulation_vertices", value, 4, 100000000u,
                                &out->simulation_vertices);
    }
    if (strcmp(key, "bone_radii") == 0) {
        size_t length = strlen(value);
        if (length == 0 || length >= sizeof out->bone_radii) {
            fprintf(stderr, "option --set bone_radii: \"%.64s\" is empty or longer than %zu "
                    "characters\n", value, sizeof out->bone_radii - 1u);
            return 0;
        }
        memcpy(out->bone_radii, value, length + 1u);   /* names are checked against the rig */
    }
    return 1;
}

int sample_tissue_params_parse(const sinew_param* params, uint32_t count,
                               sample_tissue_params* out)
{
    if (!out || (count > 0 && !params)) {
        fprintf(stderr, "sample_tissue_params_parse: NULL argument\n");
        return 0;
    }
    memset(out, 0, sizeof *out);
    out->decimate_above = SAMPLE_TISSUE_DECIMATE_ABOVE;
    out->simulation_vertices = SAMPLE_TISSUE_SIMULATION_VERTICES;
    for (uint32_t i = 0; i < count; ++i) {
        if (!params[i].key || !params[i].value) {
            fprintf(stderr, "option --set: parameter %u has no key or value\n", i);
            return 0;
        }
        if (!parse_shaping_key(params[i].key, params[i].value, out)) return 0;
    }
    return 1;
}

/* ---- the model ---- */

static void* host_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    size_t rounded = (size + alignment - 1u) / alignment * alignment;
    return aligned_alloc(alignment, rounded ? rounded : alignment);
}

static void host_free(void* p, void* user)
{
    (void)user;
    free(p);
}

/* The model is built once per measurement, serially: the world's threads are the backend's. */
static void host_parallel_for(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain,
                              void* user)
{
    (void)grain;
    (void)user;
    if (count > 0) fn(data, 0, count);
}

static sinew_host_api make_host(const sinew_logger* logger)
{
    sinew_host_api host;
    memset(&host, 0, sizeof host);
    host.struct_size = (uint32_t)sizeof host;
    host.allocator.alloc = host_alloc;
    host.allocator.free = host_free;
    host.logger = *(logger ? logger : sample_stderr_logger());
    host.log_level = SINEW_LOG_ERROR;
    host.jobs.parallel_for = host_parallel_for;
    host.jobs.thread_count = 1;
    return host;
}

/* The weld and the volumetric skeleton only (Sec. 3.1), or the whole model. */
static sinew_result build_model(const sinew_host_api* host, const sinew_rig_view* view,
                                const ps_params* params, int whole_model, ps_model* m)
{
    if (whole_model) return ps_model_build_with(host, view, params, m);
    memset(m, 0, sizeof *m);
    sinew_result r = ps_model_weld(host, view, m);
    if (r == SINEW_OK) r = ps_skeleton_build(host, view, params->bone_radii, m);
    if (r != SINEW_OK) ps_model_free(host, m);
    return r;
}

/* The figures of a built model into *out. */
static sinew_result take_figures(const ps_model* m, int whole_model, sample_tissue* out)
{
    out->joint_count = m->joint_count;
    out->joint_radius = calloc(m->joint_count ? m->joint_count : 1u, sizeof(double));
    if (!out->joint_radius) return sample_fail(SINEW_ERROR_OUT_OF_MEMORY, "tissue: out of memory");
    for (uint32_t j = 0; j < m->joint_count; ++j) {
        out->joint_radius[j] = m->joint_radius[m->joint_rep[j]];
    }
    out->has_model = whole_model;
    if (whole_model) {
        out->tets = m->tet_count;
        out->inverted = m->inverted_count;
        out->degenerate = m->degenerate_count;
        out->poor = m->poor_count;
    }
    return SINEW_OK;
}

sinew_result sample_tissue_build(const sample_character* character,
                                 const sample_tissue_params* params, int whole_model,
                                 const sinew_logger* logger, sample_tissue* out)
{
    if (!out) return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_tissue_build: out is NULL");
    memset(out, 0, sizeof *out);
    if (!character || !params) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_tissue_build: NULL argument");
    }
    const sinew_host_api host = make_host(logger);
    sample_rig_view rig;
    sinew_result r = sample_rig_view_build(character, &rig);
    if (r != SINEW_OK) return r;
    r = ps_check_rig(&host, &rig.view, "tissue");
    /* The model-shaping fields only, as fps hands them over (fps_model_params). */
    ps_params shaping;
    memset(&shaping, 0, sizeof shaping);
    shaping.decimate_above = params->decimate_above;
    shaping.simulation_vertices = params->simulation_vertices;
    memcpy(shaping.bone_radii, params->bone_radii, sizeof shaping.bone_radii);
    shaping.bone_radii[sizeof shaping.bone_radii - 1u] = '\0';
    sinew_rig_view view;
    sinew_decimated_mesh decimated;
    memset(&decimated, 0, sizeof decimated);
    if (r == SINEW_OK) r = ps_decimate_view(&host, &rig.view, &shaping, &view, &decimated);
    ps_model model;
    memset(&model, 0, sizeof model);
    if (r == SINEW_OK) r = build_model(&host, &view, &shaping, whole_model, &model);
    if (r == SINEW_OK) r = take_figures(&model, whole_model, out);
    if (r != SINEW_OK) sample_tissue_free(out);
    ps_model_free(&host, &model);
    sinew_decimated_free(&host, &decimated);
    sample_rig_view_free(&rig);
    return r;
}

void sample_tissue_free(sample_tissue* tissue)
{
    if (!tissue) return;
    free(tissue->joint_radius);
    memset(tissue, 0, sizeof *tissue);
}
