/* Baked files: round trips bit for bit, backend blobs, the writer's errors, the baked-rig
 * extension. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* rmdir */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bake_test_util.h"

#include <sinew/sinew_import.h>

typedef struct fixture {
    sinew_test_log log;
    sinew_world* world;
    bake_temp temp;
} fixture;

static int setup(void** state)
{
    fixture* f = (fixture*)calloc(1, sizeof *f);
    sinew_test_log_init(&f->log);
    f->world = sinew_test_world(&f->log, 2);
    assert_int_equal(sinew_world_register_backend(f->world, &bake_probe_backend), SINEW_OK);
    assert_int_equal(sinew_world_register_backend(f->world, &bake_old_backend), SINEW_OK);
    bake_temp_init(&f->temp);
    memset(&bake_probe, 0, sizeof bake_probe);
    *state = f;
    return 0;
}

static int teardown(void** state)
{
    fixture* f = (fixture*)*state;
    sinew_world_destroy(f->world);
    bake_temp_cleanup(&f->temp);
    free(f);
    return 0;
}

static bool file_exists(const char* path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Writes `rig` for `backend`, loads it back in the same world, and checks the loaded rig's
 * arrays against the original's bit for bit. Returns the loaded rig. */
static sinew_rig round_trip(fixture* f, sinew_rig rig, const char* backend,
                            const sinew_param* params, uint32_t count, const char* name)
{
    const char* path = bake_temp_path(&f->temp, name);
    assert_int_equal(sinew_bake_write(f->world, rig, backend, params, count, path), SINEW_OK);
    assert_true(file_exists(path));
    char tmp[400];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_false(file_exists(tmp));
    sinew_rig loaded;
    assert_int_equal(sinew_rig_load_baked(f->world, path, &loaded), SINEW_OK);
    assert_int_equal(f->log.count[SINEW_LOG_ERROR], 0);

    const sinew_rig_view* a = bake_capture_view(f->world, rig, params, count);
    const sinew_rig_view* b = bake_capture_view(f->world, loaded, params, count);
    assert_ptr_not_equal(a, b);
    bake_assert_views_equal(a, b);

    /* The public accessors see the same arrays. */
    sinew_rig_info ia = SINEW_RIG_INFO_INIT, ib = SINEW_RIG_INFO_INIT;
    assert_int_equal(sinew_rig_get_info(f->world, rig, &ia), SINEW_OK);
    assert_int_equal(sinew_rig_get_info(f->world, loaded, &ib), SINEW_OK);
    assert_memory_equal(&ia, &ib, sizeof ia);
    const float *pa, *pb, *na, *nb, *wa, *wb;
    const uint32_t *ta, *tb, *oa, *ob, *ja, *jb;
    assert_int_equal(sinew_rig_get_mesh(f->world, rig, &pa, &na, &ta), SINEW_OK);
    assert_int_equal(sinew_rig_get_mesh(f->world, loaded, &pb, &nb, &tb), SINEW_OK);
    assert_memory_equal(pa, pb, 12u * ia.vertex_count);
    assert_memory_equal(na, nb, 12u * ia.vertex_count);
    assert_memory_equal(ta, tb, 12u * ia.triangle_count);
    assert_int_equal(sinew_rig_get_weights(f->world, rig, &oa, &ja, &wa), SINEW_OK);
    assert_int_equal(sinew_rig_get_weights(f->world, loaded, &ob, &jb, &wb), SINEW_OK);
    assert_memory_equal(oa, ob, 4u * (ia.vertex_count + 1u));
    assert_memory_equal(ja, jb, 4u * oa[ia.vertex_count]);
    assert_memory_equal(wa, wb, 4u * oa[ia.vertex_count]);
    for (uint32_t j = 0; j < ia.joint_count; ++j) {
        const char* jname = a->names[j];
        if (*jname) {
            assert_int_equal(sinew_rig_find_joint(f->world, loaded, jname),
                             sinew_rig_find_joint(f->world, rig, jname));
        }
    }
    return loaded;
}

/* Both rigs skinned by `backend` at the same bent pose give the same output bit for bit. */
static void assert_same_skinning(fixture* f, sinew_rig a, sinew_rig b, const char* backend)
{
    sinew_rig_info info = SINEW_RIG_INFO_INIT;
    assert_int_equal(sinew_rig_get_info(f->world, a, &info), SINEW_OK);
    const sinew_rig_view* view = bake_capture_view(f->world, a, NULL, 0);
    float* pose = (float*)malloc(64u * info.joint_count);
    float* out[2] = { (float*)malloc(12u * info.vertex_count), (float*)malloc(12u * info.vertex_count) };
    memcpy(pose, view->bind_matrices, 64u * info.joint_count);
    /* Rotate every joint but the first a little about z, in model space. */
    for (uint32_t j = 1; j < info.joint_count; ++j) {
        float* m = pose + 16u * j;
        float c = 0.9f, s = 0.43588989f;
        for (int col = 0; col < 4; ++col) {
            float x = m[4 * col], y = m[4 * col + 1];
            m[4 * col] = c * x - s * y;
            m[4 * col + 1] = s * x + c * y;
        }
    }
    sinew_rig rigs[2] = { a, b };
    for (int i = 0; i < 2; ++i) {
        sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
        desc.rig = rigs[i];
        desc.backend = backend;
        sinew_skin skin;
        assert_int_equal(sinew_world_add_skin(f->world, &desc, &skin), SINEW_OK);
        sinew_pose_desc p = SINEW_POSE_DESC_INIT;
        p.joint_count = info.joint_count;
        p.matrices = pose;
        assert_int_equal(sinew_skin_set_pose(f->world, skin, &p), SINEW_OK);
        assert_int_equal(sinew_skin_update(f->world, skin, 1.0f / 60.0f), SINEW_OK);
        sinew_output_desc o = SINEW_OUTPUT_DESC_INIT;
        o.vertex_capacity = info.vertex_count;
        o.positions = out[i];
        assert_int_equal(sinew_skin_read_output(f->world, skin, &o), SINEW_OK);
        assert_int_equal(sinew_world_remove_skin(f->world, skin), SINEW_OK);
    }
    assert_memory_equal(out[0], out[1], 12u * info.vertex_count);
    free(out[0]);
    free(out[1]);
    free(pose);
}

static void test_round_trip_procedural(void** state)
{
    fixture* f = (fixture*)*state;
    bake_test_rig tube;
    bake_test_rig_make(&tube);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(f->world, &tube.desc, &rig), SINEW_OK);
    sinew_rig loaded = round_trip(f, rig, "lbs", NULL, 0, "tube.sinew");
    /* lbs has no bake function: the file holds the rig only. */
    const char* backend = "x";
    const void* data = &backend;
    size_t size = 1;
    assert_int_equal(sinew_rig_get_baked(f->world, loaded, &backend, &data, &size), SINEW_OK);
    assert_null(backend);
    assert_null(data);
    assert_int_equal(size, 0);
    sinew_rig_info info = SINEW_RIG_INFO_INIT;
    assert_int_equal(sinew_rig_get_info(f->world, loaded, &info), SINEW_OK);
    assert_int_equal(info.submesh_count, 2);
    assert_int_equal(info.simulation_vertex_count, tube.desc.simulation_mesh.vertex_count);
    assert_int_equal(sinew_rig_find_joint(f->world, loaded, "wrist"), 2);
    assert_same_skinning(f, rig, loaded, "lbs");
    assert_same_skinning(f, rig, loaded, "dqs");
    /* A baked rig baked again gives the same file, byte for byte. */
    const char* first = f->temp.paths[0];
    const char* second = bake_temp_path(&f->temp, "again.sinew");
    assert_int_equal(sinew_bake_write(f->world, loaded, "lbs", NULL, 0, second), SINEW_OK);
    size_t n1, n2;
    uint8_t* b1 = bake_read_bytes(first, &n1);
    uint8_t* b2 = bake_read_bytes(second, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(b1, b2, n1);
    free(b1);
    free(b2);
    bake_test_rig_free(&tube);
}

/* The header and chunks, read from the format's description with an independent checksum. */
static void test_file_layout(void** state)
{
    fixture* f = (fixture*)*state;
    bake_test_rig tube;
    bake_test_rig_make(&tube);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(f->world, &tube.desc, &rig), SINEW_OK);
    const char* path = bake_temp_path(&f->temp, "layout.sinew");
    sinew_param params[] = { { "iterations", "10" }, { "empty", "" } };
    assert_int_equal(sinew_bake_write(f->world, rig, "bakeprobe", params, 2, path), SINEW_OK);
    size_t size;
    uint8_t* file = bake_read_bytes(path, &size);
    assert_memory_equal(file, "SINEWBAK", 8);
    assert_int_equal(bake_get_le32(file + 8), 1u); /* one backend: the format every runtime reads */
    uint32_t header = bake_get_le32(file + 12);
    assert_int_equal(header, 32);
    assert_int_equal(bake_get_le64(file + 16), size - header);
    assert_int_equal(size % 8u, 0);
    assert_int_equal(bake_get_le32(file + 24), bake_crc32c_bitwise(file + header, size - header));
    assert_int_equal(bake_get_le32(file + 28), 0);
    /* The standard check value of CRC-32C: the helper itself is right. */
    assert_int_equal(bake_crc32c_bitwise("123456789", 9), 0xE3069283u);

    size_t at;
    uint64_t n;
    assert_true(bake_find_chunk(file, size, "RIG0", &at, &n));
    assert_int_equal(n, strlen("bake test tube"));
    assert_memory_equal(file + at, "bake test tube", n);
    assert_true(bake_find_chunk(file, size, "SKEL", &at, &n));
    assert_int_equal(bake_get_le32(file + at), 3);
    assert_int_equal(bake_get_le32(file + at + 8), 0xFFFFFFFFu); /* parent of the root: -1 */
    assert_true(bake_find_chunk(file, size, "MESH", &at, &n));
    assert_int_equal(bake_get_le32(file + at), tube.desc.render_mesh.vertex_count);
    assert_int_equal(bake_get_le32(file + at + 4), tube.desc.render_mesh.triangle_count);
    assert_int_equal(bake_get_le32(file + at + 8), 2);
    float x;
    uint32_t bits = bake_get_le32(file + at + 16);
    memcpy(&x, &bits, 4);
    assert_true(x == tube.positions[0]);
    assert_true(bake_find_chunk(file, size, "SIMM", &at, &n));
    assert_int_equal(bake_get_le32(file + at), tube.desc.simulation_mesh.vertex_count);
    assert_true(bake_find_chunk(file, size, "WGHT", &at, &n));
    assert_int_equal(bake_get_le32(file + at), tube.desc.render_mesh.vertex_count);
    assert_true(bake_find_chunk(file, size, "BKND", &at, &n));
    assert_int_equal(bake_get_le32(file + at), strlen("bakeprobe"));
    assert_int_equal(bake_get_le32(file + at + 4), 2);
    assert_memory_equal(file + at + 8, "bakeprobe", 9);
    assert_true(bake_find_chunk(file, size, "BLOB", &at, &n));
    size_t blob_size;
    const sinew_rig_view* view = bake_capture_view(f->world, rig, NULL, 0);
    uint8_t* blob = bake_probe_blob(view, params, 2, &blob_size);
    assert_int_equal(n, blob_size);
    assert_memory_equal(file + at, blob, blob_size);
    free(blob);
    free(file);
    bake_test_rig_free(&tube);
}

static void test_round_trip_backend_blob(void** state)
{
    fixture* f = (fixture*)*state;
    bake_test_rig tube;
    bake_test_rig_make(&tube);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(f->world, &tube.desc, &rig), SINEW_OK);
    const char* backend = "x";
    const void* data = NULL;
    size_t size = 1;
    assert_int_equal(sinew_rig_get_baked(f->world, rig, &backend, &data, &size), SINEW_OK);
    assert_null(backend);
    assert_int_equal(size, 0);

    sinew_param params[] = { { "collisions", "on" }, { "iterations", "10" } };
    sinew_rig loaded = round_trip(f, rig, "bakeprobe", params, 2, "probe.sinew");
    assert_int_equal(bake_probe.bake_calls, 1);
    /* round_trip prepared the loaded rig with the same params: the probe checked its blob. */
    assert_int_equal(bake_probe.prepared_from_blob, 1);
    assert_int_equal(sinew_rig_get_baked(f->world, loaded, &backend, &data, &size), SINEW_OK);
    assert_string_equal(backend, "bakeprobe");
    size_t expected_size;
    const sinew_rig_view* view = bake_capture_view(f->world, loaded, params, 2);
    uint8_t* expected = bake_probe_blob(view, params, 2, &expected_size);
    assert_int_equal(size, expected_size);
    assert_memory_equal(data, expected, size);
    assert_ptr_equal(view->baked_data, data);
    assert_string_equal(view->baked_backend, "bakeprobe");
    free(expected);

    /* Other params than the baked ones: the probe, like a real backend, refuses the blob. */
    sinew_param other[] = { { "collisions", "off" } };
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = loaded;
    desc.backend = "bakeprobe";
    desc.params = other;
    desc.param_count = 1;
    sinew_skin skin;
    sinew_test_log_reset(&f->log);
    assert_int_equal(sinew_world_add_skin(f->world, &desc, &skin), SINEW_ERROR_FILE_FORMAT);
    assert_int_equal(f->log.count[SINEW_LOG_ERROR], 1);
    /* Another backend ignores the blob. */
    desc.backend = "dqs";
    desc.param_count = 0;
    assert_int_equal(sinew_world_add_skin(f->world, &desc, &skin), SINEW_OK);

    /* Read without a world: the descriptor, the params, the blob. */
    sinew_baked_file* file = NULL;
    assert_int_equal(sinew_bake_read(f->temp.paths[0], &f->log.logger, &file), SINEW_OK);
    assert_non_null(file);
    assert_int_equal(file->format_version, 1);
    assert_string_equal(file->source_path, f->temp.paths[0]);
    assert_int_equal(file->struct_size, sizeof(sinew_baked_file));
    assert_string_equal(file->rig->name, "bake test tube");
    assert_int_equal(file->param_count, 2);
    assert_string_equal(file->params[0].key, "collisions");
    assert_string_equal(file->params[0].value, "on");
    assert_string_equal(file->params[1].key, "iterations");
    assert_string_equal(file->params[1].value, "10");
    assert_string_equal(file->baked->backend, "bakeprobe");
    assert_int_equal(file->baked->size, size);
    assert_memory_equal(file->baked->data, data, size);
    assert_ptr_equal(file->rig->next, file->baked);
    /* The descriptor makes the same rig in another world. */
    sinew_test_log log2;
    sinew_test_log_init(&log2);
    sinew_world* other_world = sinew_test_world(&log2, 1);
    assert_int_equal(sinew_world_register_backend(other_world, &bake_probe_backend), SINEW_OK);
    sinew_rig again;
    assert_int_equal(sinew_rig_create(other_world, file->rig, &again), SINEW_OK);
    sinew_bake_free(file);
    const sinew_rig_view* view2 = bake_capture_view(other_world, again, params, 2);
    bake_assert_views_equal(bake_capture_view(f->world, rig, params, 2), view2);
    assert_int_equal(view2->baked_size, size);
    sinew_world_destroy(other_world);
    sinew_bake_free(NULL);
    bake_test_rig_free(&tube);
}

/* A table from before `bake` existed: the pointer past struct_size is never called. */
static void test_old_backend_table(void** state)
{
    fixture* f = (fixture*)*state;
    bake_test_rig tube;
    bake_test_rig_make(&tube);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(f->world, &tube.desc, &rig), SINEW_OK);
    const char* path = bake_temp_path(&f->temp, "old.sinew");
    assert_int_equal(sinew_bake_write(f->world, rig, "oldprobe", NULL, 0, path), SINEW_OK);
    assert_int_equal(bake_probe.bake_calls, 0);
    size_t size;
    uint8_t* file = bake_read_bytes(path, &size);
    size_t at;
    uint64_t n;
    assert_false(bake_find_chunk(file, size, "BKND", &at, &n));
    assert_false(bake_find_chunk(file, size, "BLOB", &at, &n));
    free(file);
    /* backend NULL: the rig only, too. */
    path = bake_temp_path(&f->temp, "none.sinew");
    assert_int_equal(sinew_bake_write(f->world, rig, NULL, NULL, 0, path), SINEW_OK);
    sinew_rig loaded;
    assert_int_equal(sinew_rig_load_baked(f->world, path, &loaded), SINEW_OK);
    assert_int_equal(f->log.count[SINEW_LOG_ERROR], 0);
    bake_test_rig_free(&tube);
}

static void expect_one_error(fixture* f, sinew_result got, sinew_result expected,
                             const char* needle)
{
    assert_int_equal(got, expected);
    assert_int_equal(f->log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(f->log.total, 1);
    if (needle && !strstr(f->log.last, needle))
        fail_msg("log line \"%s\" lacks \"%s\"", f->log.last, needle);
    sinew_test_log_reset(&f->log);
}

static void test_write_errors(void** state)
{
    fixture* f = (fixture*)*state;
    bake_test_rig tube;
    bake_test_rig_make(&tube);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(f->world, &tube.desc, &rig), SINEW_OK);
    const char* path = bake_temp_path(&f->temp, "keep.sinew");
    assert_int_equal(sinew_bake_write(f->world, rig, "lbs", NULL, 0, path), SINEW_OK);
    size_t before_size;
    uint8_t* before = bake_read_bytes(path, &before_size);

    assert_int_equal(sinew_bake_write(NULL, rig, "lbs", NULL, 0, path), SINEW_ERROR_INVALID_ARGUMENT);
    expect_one_error(f, sinew_bake_write(f->world, rig, "lbs", NULL, 0, NULL),
                     SINEW_ERROR_INVALID_ARGUMENT, "path");
    expect_one_error(f, sinew_bake_write(f->world, rig, "lbs", NULL, 0, ""),
                     SINEW_ERROR_INVALID_ARGUMENT, "path");
    sinew_rig stale = { rig.id + 1u };
    expect_one_error(f, sinew_bake_write(f->world, stale, "lbs", NULL, 0, path),
                     SINEW_ERROR_INVALID_HANDLE, "rig handle");
    expect_one_error(f, sinew_bake_write(f->world, rig, "no-such-backend", NULL, 0, path),
                     SINEW_ERROR_UNKNOWN_BACKEND, "no-such-backend");
    expect_one_error(f, sinew_bake_write(f->world, rig, "lbs", NULL, 2, path),
                     SINEW_ERROR_INVALID_ARGUMENT, "params");
    sinew_param bad[] = { { "key", NULL } };
    expect_one_error(f, sinew_bake_write(f->world, rig, "bakeprobe", bad, 1, path),
                     SINEW_ERROR_PARAMETER, "parameter 0");
    char missing_dir[400];
    snprintf(missing_dir, sizeof missing_dir, "%s/no/such/folder/x.sinew", f->temp.dir);
    expect_one_error(f, sinew_bake_write(f->world, rig, "lbs", NULL, 0, missing_dir),
                     SINEW_ERROR_FILE_NOT_FOUND, "no/such/folder");
    /* A failing bake leaves the existing file as it was and no temporary behind. */
    sinew_param fail[] = { { "fail", "1" } };
    expect_one_error(f, sinew_bake_write(f->world, rig, "bakeprobe", fail, 1, path),
                     SINEW_ERROR_BACKEND_FAILED, "asked to fail");
    /* A folder where the file should go: the rename fails, the temporary is removed. */
    const char* folder = bake_temp_path(&f->temp, "folder.sinew");
    assert_int_equal(mkdir(folder, 0700), 0);
    expect_one_error(f, sinew_bake_write(f->world, rig, "lbs", NULL, 0, folder),
                     SINEW_ERROR_FILE_READ, "folder.sinew");
    char tmp[400];
    snprintf(tmp, sizeof tmp, "%s.tmp", folder);
    assert_false(file_exists(tmp));
    assert_int_equal(rmdir(folder), 0);
    size_t after_size;
    uint8_t* after = bake_read_bytes(path, &after_size);
    assert_int_equal(before_size, after_size);
    assert_memory_equal(before, after, before_size);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_false(file_exists(tmp));
    free(before);
    free(after);
    bake_test_rig_free(&tube);
}

/* The extension on a hand-made descriptor: only the runtime's own kind of arrays pass. */
static void test_baked_extension(void** state)
{
    fixture* f = (fixture*)*state;
    bake_test_rig tube;
    bake_test_rig_make(&tube);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(f->world, &tube.desc, &rig), SINEW_OK);
    const sinew_rig_view* v = bake_capture_view(f->world, rig, NULL, 0);

    /* A descriptor over the rig's own arrays is accepted and copied bit for bit. */
    sinew_baked_rig_ext ext = SINEW_BAKED_RIG_EXT_INIT;
    ext.source = "hand-made";
    sinew_rig_desc d = tube.desc;
    d.next = &ext;
    d.render_mesh.normals = v->render_mesh.normals;
    d.simulation_mesh.normals = v->simulation_mesh.normals;
    d.weights.offsets = v->weight_offsets;
    d.weights.joints = v->weight_joints;
    d.weights.weights = v->weight_values;
    sinew_rig copy;
    assert_int_equal(sinew_rig_create(f->world, &d, &copy), SINEW_OK);
    bake_assert_views_equal(v, bake_capture_view(f->world, copy, NULL, 0));

    /* The original, unnormalised weights are refused, the line naming the source. */
    sinew_rig out;
    sinew_rig_desc bad = d;
    bad.weights = tube.desc.weights;
    expect_one_error(f, sinew_rig_create(f->world, &bad, &out), SINEW_ERROR_WEIGHTS, "hand-made: rig:");
    bad = d;
    bad.render_mesh.normals = NULL;
    expect_one_error(f, sinew_rig_create(f->world, &bad, &out), SINEW_ERROR_INVALID_ARGUMENT, "normals");
    float* normals = (float*)malloc(12u * v->render_mesh.vertex_count);
    memcpy(normals, v->render_mesh.normals, 12u * v->render_mesh.vertex_count);
    normals[3] *= 2.0f;
    normals[4] *= 2.0f;
    normals[5] *= 2.0f;
    bad = d;
    bad.render_mesh.normals = normals;
    expect_one_error(f, sinew_rig_create(f->world, &bad, &out), SINEW_ERROR_INVALID_ARGUMENT, "length");
    free(normals);
    bad = d;
    bad.weights.offsets = NULL;
    expect_one_error(f, sinew_rig_create(f->world, &bad, &out), SINEW_ERROR_INVALID_ARGUMENT, "weights");
    bad = d;
    bad.max_influences = 4;
    expect_one_error(f, sinew_rig_create(f->world, &bad, &out), SINEW_ERROR_INVALID_ARGUMENT, "max_influences");
    /* A weight row out of order. */
    uint32_t en = v->weight_offsets[v->render_mesh.vertex_count];
    float* w = (float*)malloc(4u * en);
    memcpy(w, v->weight_values, 4u * en);
    uint32_t row = 0;
    while (v->weight_offsets[row + 1] - v->weight_offsets[row] < 2u ||
           v->weight_values[v->weight_offsets[row]] == v->weight_values[v->weight_offsets[row] + 1])
        ++row;
    uint32_t b0 = v->weight_offsets[row];
    float t = w[b0];
    w[b0] = w[b0 + 1];
    w[b0 + 1] = t;
    bad = d;
    bad.weights.weights = w;
    expect_one_error(f, sinew_rig_create(f->world, &bad, &out), SINEW_ERROR_WEIGHTS, "sorted");
    free(w);
    /* A repeated joint in a row. */
    uint32_t* jj = (uint32_t*)malloc(4u * en);
    memcpy(jj, v->weight_joints, 4u * en);
    jj[b0 + 1] = jj[b0];
    bad = d;
    bad.weights.joints = jj;
    expect_one_error(f, sinew_rig_create(f->world, &bad, &out), SINEW_ERROR_WEIGHTS, "twice");
    free(jj);

    sinew_baked_rig_ext e2 = ext;
    bad = d;
    bad.next = &e2;
    e2.backend = "bakeprobe";
    expect_one_error(f, sinew_rig_create(f->world, &bad, &out), SINEW_ERROR_INVALID_ARGUMENT, "empty");
    e2 = ext;
    e2.data = "abc";
    e2.size = 3;
    expect_one_error(f, sinew_rig_create(f->world, &bad, &out), SINEW_ERROR_INVALID_ARGUMENT, "no backend");
    e2 = ext;
    e2.struct_size = 8;
    expect_one_error(f, sinew_rig_create(f->world, &bad, &out), SINEW_ERROR_STRUCT_SIZE, "struct_size");
    e2 = ext;
    e2.next = &ext;
    expect_one_error(f, sinew_rig_create(f->world, &bad, &out), SINEW_ERROR_UNSUPPORTED, "next");
    sinew_ext_header other = { (uint32_t)sizeof(sinew_ext_header), SINEW_EXT_VULKAN_OUTPUT, NULL };
    bad.next = &other;
    expect_one_error(f, sinew_rig_create(f->world, &bad, &out), SINEW_ERROR_UNSUPPORTED, "extension");

    /* With a blob: copied into the rig, visible through the view. */
    e2 = ext;
    e2.backend = "somebackend";
    e2.data = "0123456789";
    e2.size = 10;
    bad.next = &e2;
    assert_int_equal(sinew_rig_create(f->world, &bad, &out), SINEW_OK);
    const char* name;
    const void* data;
    size_t size;
    assert_int_equal(sinew_rig_get_baked(f->world, out, &name, &data, &size), SINEW_OK);
    assert_string_equal(name, "somebackend");
    assert_int_equal(size, 10);
    assert_memory_equal(data, "0123456789", 10);
    assert_ptr_not_equal(data, e2.data);
    assert_int_equal(f->log.count[SINEW_LOG_ERROR], 0);
    bake_test_rig_free(&tube);
}

/* An imported character: automatic weights, bit for bit through the file. */
static void round_trip_character(void** state, const char* relative, const char* name)
{
    fixture* f = (fixture*)*state;
    const char* path = sinew_test_data_path(relative);
    sinew_character* character = NULL;
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.logger = &f->log.logger;
    assert_int_equal(sinew_import_character(path, &options, &character), SINEW_OK);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(f->world, &character->rig, &rig), SINEW_OK);
    sinew_rig loaded = round_trip(f, rig, "lbs", NULL, 0, name);
    assert_same_skinning(f, rig, loaded, "lbs");
    assert_same_skinning(f, rig, loaded, "dqs");
    /* And with the probe's blob. */
    char blob_name[64];
    snprintf(blob_name, sizeof blob_name, "blob-%s", name);
    round_trip(f, rig, "bakeprobe", NULL, 0, blob_name);
    assert_int_equal(bake_probe.prepared_from_blob, 1);
    sinew_import_free(character);
}

static void test_round_trip_cylinder(void** state)
{
    round_trip_character(state, "characters/cylinder/cylinder.ini", "cylinder.sinew");
}

static void test_round_trip_male(void** state)
{
    round_trip_character(state, "characters/male/male.ini", "male.sinew");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip_procedural, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_backend_blob, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_backend_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_baked_extension, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_cylinder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_male, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
