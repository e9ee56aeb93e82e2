/* Helpers of the baked-file tests. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "bake_test_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------------- */
/* The procedural rig                                                                        */
/* ---------------------------------------------------------------------------------------- */

/* A capped tube along x from -6 to 6, radius 1: rings x sides vertices plus two caps. */
static void make_tube(uint32_t rings, uint32_t sides, float** out_positions,
                      uint32_t** out_indices, uint32_t* out_vertices, uint32_t* out_triangles)
{
    uint32_t vn = rings * sides + 2u, tn = 2u * sides * (rings - 1u) + 2u * sides;
    float* p = (float*)malloc(sizeof(float) * 3u * vn);
    uint32_t* t = (uint32_t*)malloc(sizeof(uint32_t) * 3u * tn);
    assert_non_null(p);
    assert_non_null(t);
    for (uint32_t r = 0; r < rings; ++r) {
        for (uint32_t s = 0; s < sides; ++s) {
            double a = 2.0 * 3.14159265358979323846 * s / sides;
            float* q = p + 3u * (r * sides + s);
            q[0] = -6.0f + 12.0f * (float)r / (float)(rings - 1u);
            q[1] = (float)cos(a);
            q[2] = (float)sin(a);
        }
    }
    uint32_t c0 = rings * sides, c1 = c0 + 1u;
    p[3u * c0] = -6.0f; p[3u * c0 + 1] = 0.0f; p[3u * c0 + 2] = 0.0f;
    p[3u * c1] = 6.0f; p[3u * c1 + 1] = 0.0f; p[3u * c1 + 2] = 0.0f;
    uint32_t* w = t;
    for (uint32_t r = 0; r + 1u < rings; ++r) {
        for (uint32_t s = 0; s < sides; ++s) {
            uint32_t a = r * sides + s, b = r * sides + (s + 1u) % sides;
            *w++ = a; *w++ = b; *w++ = b + sides;
            *w++ = a; *w++ = b + sides; *w++ = a + sides;
        }
    }
    for (uint32_t s = 0; s < sides; ++s) {
        *w++ = c0; *w++ = (s + 1u) % sides; *w++ = s;
        *w++ = c1; *w++ = (rings - 1u) * sides + s; *w++ = (rings - 1u) * sides + (s + 1u) % sides;
    }
    *out_positions = p;
    *out_indices = t;
    *out_vertices = vn;
    *out_triangles = tn;
}

static void translation(float* m, float x)
{
    memset(m, 0, 16 * sizeof(float));
    m[0] = m[5] = m[10] = m[15] = 1.0f;
    m[12] = x;
}

void bake_test_rig_make(bake_test_rig* rig)
{
    memset(rig, 0, sizeof *rig);
    sinew_rig_desc init = SINEW_RIG_DESC_INIT;
    rig->desc = init;
    uint32_t vn, tn, svn, stn;
    make_tube(9, 8, &rig->positions, &rig->indices, &vn, &tn);
    make_tube(4, 6, &rig->sim_positions, &rig->sim_indices, &svn, &stn);
    /* Up to four entries per vertex, out of order, unnormalised, one joint repeated and one
     * zero weight: the runtime merges, sorts and normalises them. */
    rig->offsets = (uint32_t*)malloc(sizeof(uint32_t) * (vn + 1u));
    rig->joints = (uint32_t*)malloc(sizeof(uint32_t) * 4u * vn);
    rig->weights = (float*)malloc(sizeof(float) * 4u * vn);
    assert_non_null(rig->offsets);
    assert_non_null(rig->joints);
    assert_non_null(rig->weights);
    uint32_t e = 0;
    for (uint32_t v = 0; v < vn; ++v) {
        rig->offsets[v] = e;
        float x = rig->positions[3u * v];
        float t = (x + 6.0f) / 12.0f;
        rig->joints[e] = 2u; rig->weights[e++] = 0.25f * t * t;
        rig->joints[e] = 0u; rig->weights[e++] = 3.0f * (1.0f - t);
        rig->joints[e] = 1u; rig->weights[e++] = 1.5f + (float)(v % 3u);
        if (v % 2u) {
            rig->joints[e] = 0u; rig->weights[e++] = 0.5f;
        } else if (v % 5u == 0) {
            rig->joints[e] = 2u; rig->weights[e++] = 0.0f;
        }
    }
    rig->offsets[vn] = e;
    rig->submeshes[0] = 0;
    rig->submeshes[1] = tn / 2u;
    rig->parents[0] = -1;
    rig->parents[1] = 0;
    rig->parents[2] = 1;
    translation(rig->bind, -6.0f);
    translation(rig->bind + 16, 0.0f);
    translation(rig->bind + 32, 6.0f);
    rig->bind[32 + 0] = 0.5f; /* a scaled joint: the inverse is not a mere transpose */
    rig->names[0] = "shoulder";
    rig->names[1] = NULL;
    rig->names[2] = "wrist";

    sinew_rig_desc* d = &rig->desc;
    d->name = "bake test tube";
    d->skeleton.joint_count = 3;
    d->skeleton.parents = rig->parents;
    d->skeleton.bind_matrices = rig->bind;
    d->skeleton.names = rig->names;
    d->render_mesh.vertex_count = vn;
    d->render_mesh.positions = rig->positions;
    d->render_mesh.triangle_count = tn;
    d->render_mesh.indices = rig->indices;
    d->render_mesh.submesh_count = 2;
    d->render_mesh.submesh_first_triangle = rig->submeshes;
    d->simulation_mesh.vertex_count = svn;
    d->simulation_mesh.positions = rig->sim_positions;
    d->simulation_mesh.triangle_count = stn;
    d->simulation_mesh.indices = rig->sim_indices;
    d->weights.offsets = rig->offsets;
    d->weights.joints = rig->joints;
    d->weights.weights = rig->weights;
}

void bake_test_rig_free(bake_test_rig* rig)
{
    free(rig->positions);
    free(rig->indices);
    free(rig->sim_positions);
    free(rig->sim_indices);
    free(rig->offsets);
    free(rig->joints);
    free(rig->weights);
    memset(rig, 0, sizeof *rig);
}

/* ---------------------------------------------------------------------------------------- */
/* The probe backend                                                                         */
/* ---------------------------------------------------------------------------------------- */

bake_probe_state bake_probe;

static sinew_result probe_fail(const sinew_host_api* host, sinew_result r, const char* fmt, ...)
{
    char line[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(line, sizeof line, fmt, args);
    va_end(args);
    if (host->logger.func && host->log_level >= SINEW_LOG_ERROR)
        host->logger.func(SINEW_LOG_ERROR, line, host->logger.user);
    return r;
}

enum { PROBE_PATTERN = 70000 };

uint8_t* bake_probe_blob(const sinew_rig_view* rig, const sinew_param* params, uint32_t count,
                         size_t* out_size)
{
    size_t size = 16u + PROBE_PATTERN;
    for (uint32_t i = 0; i < count; ++i) size += strlen(params[i].key) + strlen(params[i].value) + 2u;
    uint8_t* b = (uint8_t*)malloc(size);
    assert_non_null(b);
    uint32_t hash = 2166136261u; /* FNV-1a over the rest positions' bits */
    for (size_t i = 0; i < 3u * (size_t)rig->render_mesh.vertex_count; ++i) {
        uint32_t bits;
        memcpy(&bits, rig->render_mesh.positions + i, 4);
        for (int k = 0; k < 4; ++k) hash = (hash ^ ((bits >> (8 * k)) & 0xFFu)) * 16777619u;
    }
    memcpy(b, "PROBEBLB", 8);
    bake_put_le32(b + 8, rig->render_mesh.vertex_count);
    bake_put_le32(b + 12, hash);
    size_t at = 16u;
    for (uint32_t i = 0; i < count; ++i) {
        at += (size_t)sprintf((char*)b + at, "%s=%s;", params[i].key, params[i].value);
    }
    for (size_t i = 0; i < PROBE_PATTERN; ++i) b[at + i] = (uint8_t)(i * 31u + hash + (i >> 8));
    *out_size = at + PROBE_PATTERN;
    return b;
}

typedef struct probe_instance {
    const sinew_rig_view* rig;
} probe_instance;

static sinew_result probe_probe(const sinew_host_api* host)
{
    (void)host;
    return SINEW_OK;
}

static sinew_result probe_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                  const sinew_param* params, uint32_t count, const void* next,
                                  void** out)
{
    (void)next;
    bake_probe.last_view = rig;
    bake_probe.prepared_from_blob = 0;
    if (rig->baked_backend && strcmp(rig->baked_backend, "bakeprobe") == 0) {
        size_t size = 0;
        uint8_t* expected = bake_probe_blob(rig, params, count, &size);
        int same = size == rig->baked_size && memcmp(expected, rig->baked_data, size) == 0;
        free(expected);
        if (!same)
            return probe_fail(host, SINEW_ERROR_FILE_FORMAT,
                              "bakeprobe: the baked blob (%zu bytes) is not what bake writes "
                              "(%zu bytes)", rig->baked_size, size);
        bake_probe.prepared_from_blob = 1;
    }
    probe_instance* inst = (probe_instance*)calloc(1, sizeof *inst);
    if (!inst) return probe_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "bakeprobe: out of memory");
    inst->rig = rig;
    *out = inst;
    return SINEW_OK;
}

static sinew_result probe_set_pose(void* instance, const sinew_pose_view* pose)
{
    (void)instance;
    (void)pose;
    return SINEW_OK;
}

static sinew_result probe_step(void* instance, float dt)
{
    (void)instance;
    (void)dt;
    return SINEW_OK;
}

static sinew_result probe_read_output(void* instance, const sinew_output_view* out)
{
    const probe_instance* inst = (const probe_instance*)instance;
    for (uint32_t v = 0; v < out->vertex_count; ++v) {
        memcpy((char*)out->positions + v * out->position_stride,
               inst->rig->render_mesh.positions + 3u * v, 12);
        if (out->normals)
            memcpy((char*)out->normals + v * out->normal_stride,
                   inst->rig->render_mesh.normals + 3u * v, 12);
    }
    return SINEW_OK;
}

static sinew_result probe_bind_output(void* instance, const sinew_output_view* out)
{
    (void)instance;
    (void)out;
    return SINEW_OK;
}

static sinew_result probe_get_state(void* instance, const sinew_state_view* state)
{
    const probe_instance* inst = (const probe_instance*)instance;
    memcpy(state->positions, inst->rig->render_mesh.positions, (size_t)state->vertex_count * 12u);
    if (state->velocities) memset(state->velocities, 0, (size_t)state->vertex_count * 12u);
    return SINEW_OK;
}

static sinew_result probe_set_state(void* instance, const sinew_state_view* state)
{
    (void)instance;
    (void)state;
    return SINEW_OK;
}

static void probe_destroy(void* instance)
{
    free(instance);
}

static sinew_result probe_bake(const sinew_host_api* host, const sinew_rig_view* rig,
                               const sinew_param* params, uint32_t count,
                               const sinew_bake_writer* writer)
{
    bake_probe.bake_calls++;
    for (uint32_t i = 0; i < count; ++i) {
        if (strcmp(params[i].key, "fail") == 0 && strcmp(params[i].value, "1") == 0)
            return probe_fail(host, SINEW_ERROR_BACKEND_FAILED, "bakeprobe: asked to fail");
    }
    size_t size = 0;
    uint8_t* blob = bake_probe_blob(rig, params, count, &size);
    /* Pieces of 0, 1, 7 bytes and the rest in three: the writer must append them in order. */
    size_t cuts[] = { 0, 0, 1, 8, 8 + (size - 8) / 3, 8 + 2 * (size - 8) / 3, size };
    sinew_result r = SINEW_OK;
    for (size_t i = 0; i + 1 < sizeof cuts / sizeof cuts[0] && r == SINEW_OK; ++i)
        r = writer->write(blob + cuts[i], cuts[i + 1] - cuts[i], writer->user);
    free(blob);
    return r;
}

const sinew_backend_vtable bake_probe_backend = {
    (uint32_t)sizeof(sinew_backend_vtable), "bakeprobe", 0u, probe_probe, probe_prepare,
    probe_set_pose, probe_step, probe_read_output, probe_bind_output, probe_get_state,
    probe_set_state, probe_destroy, probe_bake, NULL, 0u
};

const sinew_backend_vtable bake_old_backend = {
    (uint32_t)offsetof(sinew_backend_vtable, bake), "oldprobe", 0u, probe_probe, probe_prepare,
    probe_set_pose, probe_step, probe_read_output, probe_bind_output, probe_get_state,
    probe_set_state, probe_destroy, probe_bake, NULL, 0u
};

const sinew_rig_view* bake_capture_view(sinew_world* world, sinew_rig rig,
                                        const sinew_param* params, uint32_t count)
{
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = rig;
    desc.backend = "bakeprobe";
    desc.params = params;
    desc.param_count = count;
    sinew_skin skin;
    bake_probe.last_view = NULL;
    assert_int_equal(sinew_world_add_skin(world, &desc, &skin), SINEW_OK);
    assert_int_equal(sinew_world_remove_skin(world, skin), SINEW_OK);
    assert_non_null(bake_probe.last_view);
    return bake_probe.last_view;
}

/* ---------------------------------------------------------------------------------------- */
/* Comparison                                                                                */
/* ---------------------------------------------------------------------------------------- */

static void assert_bytes_equal(const void* a, const void* b, size_t size, const char* what)
{
    if (size == 0) return;
    assert_non_null(a);
    assert_non_null(b);
    if (memcmp(a, b, size) != 0) fail_msg("%s differ", what);
}

static void assert_meshes_equal(const sinew_mesh_view* a, const sinew_mesh_view* b)
{
    assert_int_equal(a->vertex_count, b->vertex_count);
    assert_int_equal(a->triangle_count, b->triangle_count);
    assert_int_equal(a->submesh_count, b->submesh_count);
    assert_bytes_equal(a->positions, b->positions, 12u * a->vertex_count, "positions");
    assert_bytes_equal(a->normals, b->normals, 12u * a->vertex_count, "normals");
    assert_bytes_equal(a->indices, b->indices, 12u * a->triangle_count, "indices");
    assert_bytes_equal(a->submesh_first_triangle, b->submesh_first_triangle,
                       4u * a->submesh_count, "sub-mesh offsets");
}

void bake_assert_views_equal(const sinew_rig_view* a, const sinew_rig_view* b)
{
    assert_int_equal(a->joint_count, b->joint_count);
    uint32_t jn = a->joint_count;
    assert_bytes_equal(a->parents, b->parents, 4u * jn, "parents");
    for (uint32_t j = 0; j < jn; ++j) assert_string_equal(a->names[j], b->names[j]);
    assert_bytes_equal(a->bind_matrices, b->bind_matrices, 64u * jn, "bind matrices");
    assert_bytes_equal(a->inverse_bind_matrices, b->inverse_bind_matrices, 64u * jn,
                       "inverse bind matrices");
    assert_meshes_equal(&a->render_mesh, &b->render_mesh);
    assert_meshes_equal(&a->simulation_mesh, &b->simulation_mesh);
    uint32_t vn = a->render_mesh.vertex_count;
    assert_bytes_equal(a->weight_offsets, b->weight_offsets, 4u * ((size_t)vn + 1u),
                       "weight offsets");
    uint32_t en = a->weight_offsets[vn];
    assert_bytes_equal(a->weight_joints, b->weight_joints, 4u * (size_t)en, "weight joints");
    assert_bytes_equal(a->weight_values, b->weight_values, 4u * (size_t)en, "weight values");
    assert_int_equal(a->max_influences, b->max_influences);
    assert_int_equal(a->padded_width, b->padded_width);
    size_t padded = (size_t)vn * a->padded_width * 4u;
    assert_bytes_equal(a->padded_joints, b->padded_joints, padded, "padded joints");
    assert_bytes_equal(a->padded_weights, b->padded_weights, padded, "padded weights");
}

/* ---------------------------------------------------------------------------------------- */
/* Bytes and the format                                                                      */
/* ---------------------------------------------------------------------------------------- */

uint8_t* bake_read_bytes(const char* path, size_t* out_size)
{
    FILE* f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t* data = (uint8_t*)malloc(n > 0 ? (size_t)n : 1u);
    assert_non_null(data);
    if (n > 0 && fread(data, 1, (size_t)n, f) != (size_t)n) fail_msg("cannot read %s", path);
    fclose(f);
    *out_size = (size_t)n;
    return data;
}

void bake_write_bytes(const char* path, const void* data, size_t size)
{
    FILE* f = fopen(path, "wb");
    if (!f) fail_msg("cannot create %s", path);
    if (size && fwrite(data, 1, size, f) != size) fail_msg("cannot write %s", path);
    fclose(f);
}

uint32_t bake_crc32c_bitwise(const void* data, size_t size)
{
    const uint8_t* p = (const uint8_t*)data;
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < size; ++i) {
        crc ^= p[i];
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

uint32_t bake_get_le32(const uint8_t* p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void bake_put_le32(uint8_t* p, uint32_t v)
{
    for (int k = 0; k < 4; ++k) p[k] = (uint8_t)(v >> (8 * k));
}

uint64_t bake_get_le64(const uint8_t* p)
{
    return (uint64_t)bake_get_le32(p) | (uint64_t)bake_get_le32(p + 4) << 32;
}

void bake_fix_checksum(uint8_t* file, size_t size)
{
    uint32_t header = bake_get_le32(file + 12);
    bake_put_le32(file + 24, bake_crc32c_bitwise(file + header, size - header));
}

bool bake_find_chunk(const uint8_t* file, size_t size, const char* tag, size_t* out_offset,
                     uint64_t* out_size)
{
    size_t at = bake_get_le32(file + 12);
    while (at + 16u <= size) {
        uint64_t n = bake_get_le64(file + at + 8);
        if (memcmp(file + at, tag, 4) == 0) {
            *out_offset = at + 16u;
            *out_size = n;
            return true;
        }
        at += 16u + (size_t)((n + 7u) & ~(uint64_t)7u);
    }
    return false;
}

/* ---------------------------------------------------------------------------------------- */
/* Temporary files                                                                           */
/* ---------------------------------------------------------------------------------------- */

void bake_temp_init(bake_temp* temp)
{
    memset(temp, 0, sizeof *temp);
    const char* base = getenv("TMPDIR");
    snprintf(temp->dir, sizeof temp->dir, "%s/sinew-bake-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(temp->dir)) fail_msg("mkdtemp %s failed", temp->dir);
}

const char* bake_temp_path(bake_temp* temp, const char* name)
{
    assert_true(temp->count < 32);
    char* p = temp->paths[temp->count++];
    size_t d = strlen(temp->dir), n = strlen(name);
    assert_true(d + 1u + n < sizeof temp->paths[0]);
    memcpy(p, temp->dir, d);
    p[d] = '/';
    memcpy(p + d + 1u, name, n + 1u);
    return p;
}

void bake_temp_cleanup(bake_temp* temp)
{
    for (int i = 0; i < temp->count; ++i) {
        char tmp[340];
        snprintf(tmp, sizeof tmp, "%s.tmp", temp->paths[i]);
        unlink(temp->paths[i]);
        unlink(tmp);
    }
    if (temp->dir[0] && rmdir(temp->dir) != 0) fail_msg("%s is not empty after the test", temp->dir);
    temp->count = 0;
}
