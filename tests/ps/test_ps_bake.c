/* Baking of the ps backend: a blob written to memory and restored through a hand-made rig view
 * gives the very model (and system matrix) that an in-memory preparation gives, bit for bit; a
 * truncated, corrupted or foreign blob is refused with SINEW_ERROR_FILE_FORMAT and one log
 * line; and a baked file written and loaded by the runtime simulates exactly like the rig it
 * came from. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sinew/sinew_bake.h>

#include "builtin_backends.h"
#include "ps_fixture.h"
#include "ps_internal.h"

static const sinew_backend_vtable* vt = &sinew_backend_ps;

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Everything prepare computed: the model (derived arrays included) and the system. */
static void dump_instance(void* inst, ps_test_buffer* out)
{
    sinew_bake_writer w = ps_test_buffer_writer(out);
    assert_int_equal(ps_model_dump(ps_instance_model(inst), &w), SINEW_OK);
    assert_int_equal(ps_sim_dump(ps_instance_sim(inst), &w), SINEW_OK);
}

static void round_trip(const char* relative, int corrupt)
{
    const char* path = sinew_test_data_path(relative);
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_INFO, 0);

    ps_test_buffer blob = {0};
    sinew_bake_writer w = ps_test_buffer_writer(&blob);
    double t0 = seconds();
    assert_int_equal(vt->bake(&host.api, &rig.view, NULL, 0, &w), SINEW_OK);
    double t1 = seconds();

    void* fresh = NULL;
    assert_int_equal(vt->prepare(&host.api, &rig.view, NULL, 0, NULL, &fresh), SINEW_OK);
    double t2 = seconds();
    sinew_rig_view baked = rig.view;
    baked.baked_backend = "ps";
    baked.baked_data = blob.data;
    baked.baked_size = blob.size;
    void* restored = NULL;
    sinew_test_log_reset(&host.log);
    assert_int_equal(vt->prepare(&host.api, &baked, NULL, 0, NULL, &restored), SINEW_OK);
    double t3 = seconds();
    assert_non_null(strstr(host.log.last, "restored from baked data"));
    print_message("%s: blob %zu bytes, bake %.0f ms, prepare %.0f ms, prepare from the blob "
                  "%.0f ms\n", relative, blob.size, 1e3 * (t1 - t0), 1e3 * (t2 - t1),
                  1e3 * (t3 - t2));

    ps_test_buffer a = {0}, b = {0};
    dump_instance(fresh, &a);
    dump_instance(restored, &b);
    assert_int_equal(a.size, b.size);
    assert_memory_equal(a.data, b.data, a.size);
    /* and they simulate alike */
    uint32_t jn = rig.view.joint_count, n = rig.view.render_mesh.vertex_count;
    float* skinning = malloc(sizeof(float) * 16u * jn);
    ps_test_skinning(&rig, (uint32_t)sample_default_joint(&rig.character), 60.0f, 30.0f, skinning);
    sinew_pose_view pose = {(uint32_t)sizeof(sinew_pose_view), jn, skinning, skinning, 0u};
    float* pa = malloc(sizeof(float) * 3u * n);
    float* pb = malloc(sizeof(float) * 3u * n);
    sinew_output_view oa = {(uint32_t)sizeof(sinew_output_view), n, pa, 0, NULL, 0, NULL};
    sinew_output_view ob = oa;
    ob.positions = pb;
    void* both[2] = {fresh, restored};
    for (int k = 0; k < 2; ++k) {
        assert_int_equal(vt->set_pose(both[k], &pose), SINEW_OK);
        for (int i = 0; i < 3; ++i) assert_int_equal(vt->step(both[k], 1.0f / 60.0f), SINEW_OK);
    }
    assert_int_equal(vt->read_output(fresh, &oa), SINEW_OK);
    assert_int_equal(vt->read_output(restored, &ob), SINEW_OK);
    assert_memory_equal(pa, pb, 12u * n);
    free(pa);
    free(pb);
    free(skinning);
    vt->destroy(restored);
    vt->destroy(fresh);

    if (corrupt) {
        /* Truncated anywhere: refused, one error line, no instance. */
        unsigned char* copy = malloc(blob.size + 1u);
        size_t step = blob.size / 97u + 1u;
        for (size_t cut = 0; cut < blob.size; cut += (cut + step < blob.size ? step : 1u)) {
            memcpy(copy, blob.data, cut);
            baked.baked_data = copy;
            baked.baked_size = cut;
            void* inst = (void*)&host;
            sinew_test_log_reset(&host.log);
            sinew_result r = vt->prepare(&host.api, &baked, NULL, 0, NULL, &inst);
            if (r != SINEW_ERROR_FILE_FORMAT)
                fail_msg("a blob cut to %zu of %zu bytes gave %s", cut, blob.size,
                         sinew_result_string(r));
            assert_null(inst);
            assert_int_equal(host.log.count[SINEW_LOG_ERROR], 1);
        }
        /* One byte too many. */
        memcpy(copy, blob.data, blob.size);
        copy[blob.size] = 0;
        baked.baked_data = copy;
        baked.baked_size = blob.size + 1u;
        void* inst = NULL;
        assert_int_equal(vt->prepare(&host.api, &baked, NULL, 0, NULL, &inst), SINEW_ERROR_FILE_FORMAT);
        /* Structural corruption: magic, version, fingerprint, a count, a bone index, the first
         * skin vertex's coordinate (NaN), the end marker. */
        const size_t header = 48u;
        const struct {
            size_t offset;
            unsigned char value;
            const char* what;
        } hits[] = {
            {0u, 0x00, "magic"},         {4u, 0x02, "version"},
            {9u, 0x5a, "fingerprint"},   {36u, 0xff, "skin vertex count"},
            {header + 1u, 0xff, "bone joint"},
            {blob.size - 1u, 0x00, "end marker"},
        };
        for (size_t i = 0; i < sizeof hits / sizeof hits[0]; ++i) {
            memcpy(copy, blob.data, blob.size);
            copy[hits[i].offset] ^= hits[i].value ? hits[i].value : 0xff;
            baked.baked_size = blob.size;
            sinew_test_log_reset(&host.log);
            inst = NULL;
            sinew_result r = vt->prepare(&host.api, &baked, NULL, 0, NULL, &inst);
            if (r != SINEW_ERROR_FILE_FORMAT)
                fail_msg("corrupting the %s gave %s", hits[i].what, sinew_result_string(r));
            assert_int_equal(host.log.count[SINEW_LOG_ERROR], 1);
        }
        /* A NaN where the skin positions begin (found by value: the first vertex's x). */
        const ps_model* dummy = NULL;
        (void)dummy;
        double x0 = 0.0;
        {
            ps_model m;
            assert_int_equal(ps_model_build(&host.api, &rig.view, &m), SINEW_OK);
            x0 = m.rest[0];
            ps_model_free(&host.api, &m);
        }
        size_t at = 0;
        for (size_t k = 0; k + 8u <= blob.size; ++k) {
            double v;
            memcpy(&v, blob.data + k, 8u); /* the test runs little-endian or skips this */
            if (v == x0) {
                at = k;
                break;
            }
        }
        if (at) {
            memcpy(copy, blob.data, blob.size);
            double nan = NAN;
            memcpy(copy + at, &nan, 8u);
            assert_int_equal(vt->prepare(&host.api, &baked, NULL, 0, NULL, &inst),
                             SINEW_ERROR_FILE_FORMAT);
        }
        /* No bytes at all for a rig that names ps. */
        baked.baked_data = NULL;
        baked.baked_size = 0;
        assert_int_equal(vt->prepare(&host.api, &baked, NULL, 0, NULL, &inst), SINEW_ERROR_FILE_FORMAT);
        free(copy);
    }
    ps_test_buffer_free(&a);
    ps_test_buffer_free(&b);
    ps_test_buffer_free(&blob);
    ps_test_rig_free(&rig);
}

static void test_cylinder_round_trip_and_corruption(void** state)
{
    (void)state;
    round_trip("characters/cylinder/cylinder.ini", 1);
}

static void test_male_round_trip(void** state)
{
    (void)state;
    round_trip("characters/male/male.ini", 0);
}

/* A blob baked for one rig is refused by another. */
static void test_foreign_blob(void** state)
{
    (void)state;
    const char* p1 = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_rig cyl;
    ps_test_rig_load(&cyl, p1);
    const char* p2 = sinew_test_data_path("characters/tbone/tbone.ini");
    ps_test_rig tbone;
    ps_test_rig_load(&tbone, p2);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    ps_test_buffer blob = {0};
    sinew_bake_writer w = ps_test_buffer_writer(&blob);
    assert_int_equal(vt->bake(&host.api, &cyl.view, NULL, 0, &w), SINEW_OK);
    sinew_rig_view v = tbone.view;
    v.baked_backend = "ps";
    v.baked_data = blob.data;
    v.baked_size = blob.size;
    void* inst = NULL;
    sinew_test_log_reset(&host.log);
    assert_int_equal(vt->prepare(&host.api, &v, NULL, 0, NULL, &inst), SINEW_ERROR_FILE_FORMAT);
    assert_int_equal(host.log.total, 1);
    assert_non_null(strstr(host.log.last, "different rig"));
    /* the same rig with one vertex moved is foreign too */
    float* moved = malloc(sizeof(float) * 3u * cyl.view.render_mesh.vertex_count);
    memcpy(moved, cyl.view.render_mesh.positions, sizeof(float) * 3u * cyl.view.render_mesh.vertex_count);
    moved[0] += 1e-3f;
    v = cyl.view;
    v.render_mesh.positions = moved;
    v.baked_backend = "ps";
    v.baked_data = blob.data;
    v.baked_size = blob.size;
    assert_int_equal(vt->prepare(&host.api, &v, NULL, 0, NULL, &inst), SINEW_ERROR_FILE_FORMAT);
    /* a blob for another backend is not read: ps prepares from scratch */
    v = cyl.view;
    v.baked_backend = "fps";
    v.baked_data = "junk";
    v.baked_size = 4;
    assert_int_equal(vt->prepare(&host.api, &v, NULL, 0, NULL, &inst), SINEW_OK);
    vt->destroy(inst);
    /* bake's own argument checks */
    sinew_param bad = {"iterations", "0"};
    assert_int_equal(vt->bake(&host.api, &cyl.view, &bad, 1, &w), SINEW_ERROR_PARAMETER);
    assert_int_equal(vt->bake(&host.api, &cyl.view, NULL, 0, NULL), SINEW_ERROR_INVALID_ARGUMENT);
    free(moved);
    ps_test_buffer_free(&blob);
    ps_test_rig_free(&cyl);
    ps_test_rig_free(&tbone);
}

static sinew_result refuse(const void* data, size_t size, void* user)
{
    (void)data, (void)size, (void)user;
    return SINEW_ERROR_FILE_READ;
}

static void test_writer_error_is_passed_on(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    sinew_bake_writer w = {refuse, NULL};
    assert_int_equal(vt->bake(&host.api, &rig.view, NULL, 0, &w), SINEW_ERROR_FILE_READ);
    assert_int_equal(host.log.count[SINEW_LOG_ERROR], 1);
    ps_test_rig_free(&rig);
}

/* Runs `count` skins of the given backends on the given rigs through 10 updates of a bend and
 * reads their render positions into out[k] (3 floats per vertex). */
static void run_skins(sinew_world* world, const sample_character* ch, const sinew_rig* rigs,
                      const char* const* backends, int count, float** out)
{
    uint32_t jn = ch->rig.skeleton.joint_count, n = ch->rig.render_mesh.vertex_count;
    sinew_skin skins[4];
    for (int k = 0; k < count; ++k) {
        sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
        sd.rig = rigs[k];
        sd.backend = backends[k];
        assert_int_equal(sinew_world_add_skin(world, &sd, &skins[k]), SINEW_OK);
    }
    float* model = malloc(sizeof(float) * 16u * jn);
    int32_t joint = sample_default_joint(ch);
    for (int i = 1; i <= 10; ++i) {
        assert_int_equal(sample_bend_twist_pose(ch, (uint32_t)joint, 9.0f * i, 0.0f, model),
                         SINEW_OK);
        sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
        pd.joint_count = jn;
        pd.matrices = model;
        for (int k = 0; k < count; ++k)
            assert_int_equal(sinew_skin_set_pose(world, skins[k], &pd), SINEW_OK);
        assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    }
    for (int k = 0; k < count; ++k) {
        sinew_output_desc od = SINEW_OUTPUT_DESC_INIT;
        od.vertex_capacity = n;
        od.positions = out[k];
        assert_int_equal(sinew_skin_read_output(world, skins[k], &od), SINEW_OK);
        assert_int_equal(sinew_world_remove_skin(world, skins[k]), SINEW_OK);
    }
    free(model);
}

/* End to end: sinew_bake_write, sinew_rig_load_baked, a ps skin on the loaded rig simulates
 * exactly like one on the original rig. */
static void test_runtime_baked_file(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/tbone/tbone.ini");
    sample_character ch;
    assert_int_equal(sample_character_load(path, NULL, &ch), SINEW_OK);
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_world* world = sinew_test_world(&log, 2);
    sinew_rig rig, loaded;
    assert_int_equal(sinew_rig_create(world, &ch.rig, &rig), SINEW_OK);
    char dir[] = "/tmp/sinew-ps-bake-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char file[64];
    snprintf(file, sizeof file, "%s/tbone.sinew", dir);
    assert_int_equal(sinew_bake_write(world, rig, "ps", NULL, 0, file), SINEW_OK);
    assert_int_equal(sinew_rig_load_baked(world, file, &loaded), SINEW_OK);
    const char* backend = NULL;
    size_t size = 0;
    assert_int_equal(sinew_rig_get_baked(world, loaded, &backend, NULL, &size), SINEW_OK);
    assert_string_equal(backend, "ps");
    assert_true(size > 0);

    uint32_t n = ch.rig.render_mesh.vertex_count;
    const sinew_rig rigs[2] = {rig, loaded};
    const char* const backends[2] = {"ps", "ps"};
    float* out[2];
    for (int k = 0; k < 2; ++k) out[k] = malloc(sizeof(float) * 3u * n);
    run_skins(world, &ch, rigs, backends, 2, out);
    assert_memory_equal(out[0], out[1], sizeof(float) * 3u * n);
    for (int k = 0; k < 2; ++k) free(out[k]);
    sinew_world_destroy(world);
    remove(file);
    rmdir(dir);
    sample_character_free(&ch);
}

/* One file baked for ps and fps: both blobs come back in order, and a skin of either backend
 * on the loaded rig restores from its own blob: it simulates exactly like one prepared from
 * scratch, where fps on a file with ps's blob alone (its candidates of another reach) does
 * not. Bad backend lists are refused. */
static void test_runtime_two_backends(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/tbone/tbone.ini");
    sample_character ch;
    assert_int_equal(sample_character_load(path, NULL, &ch), SINEW_OK);
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_world* world = sinew_test_world(&log, 2);
    sinew_rig rig, both, ps_only;
    assert_int_equal(sinew_rig_create(world, &ch.rig, &rig), SINEW_OK);
    char dir[] = "/tmp/sinew-ps-bake2-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char file[64], file_ps[64];
    snprintf(file, sizeof file, "%s/both.sinew", dir);
    snprintf(file_ps, sizeof file_ps, "%s/ps.sinew", dir);
    sinew_bake_backend list[2] = {{"ps", NULL, 0u}, {"fps", NULL, 0u}};
    assert_int_equal(sinew_bake_write_backends(world, rig, list, 2, file), SINEW_OK);
    assert_int_equal(sinew_bake_write(world, rig, "ps", NULL, 0, file_ps), SINEW_OK);
    assert_int_equal(sinew_rig_load_baked(world, file, &both), SINEW_OK);
    assert_int_equal(sinew_rig_load_baked(world, file_ps, &ps_only), SINEW_OK);
    uint32_t count = 0;
    assert_int_equal(sinew_rig_get_baked_count(world, both, &count), SINEW_OK);
    assert_int_equal(count, 2);
    const char* names[2] = {NULL, NULL};
    size_t sizes[2] = {0, 0};
    for (uint32_t i = 0; i < 2; ++i)
        assert_int_equal(sinew_rig_get_baked_at(world, both, i, &names[i], NULL, &sizes[i]),
                         SINEW_OK);
    assert_string_equal(names[0], "ps");
    assert_string_equal(names[1], "fps");
    assert_true(sizes[0] > 0 && sizes[1] > 0);
    int errors = log.count[SINEW_LOG_ERROR];
    assert_int_equal(sinew_rig_get_baked_at(world, both, 2, NULL, NULL, NULL),
                     SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sinew_rig_get_baked_count(world, rig, &count), SINEW_OK);
    assert_int_equal(count, 0);

    uint32_t n = ch.rig.render_mesh.vertex_count;
    float* out[4];
    for (int k = 0; k < 4; ++k) out[k] = malloc(sizeof(float) * 3u * n);
    const sinew_rig rigs[4] = {rig, both, rig, both};
    const char* const backends[4] = {"ps", "ps", "fps", "fps"};
    run_skins(world, &ch, rigs, backends, 4, out);
    assert_memory_equal(out[0], out[1], sizeof(float) * 3u * n);
    assert_memory_equal(out[2], out[3], sizeof(float) * 3u * n);
    const sinew_rig other[1] = {ps_only};
    const char* const fps_only[1] = {"fps"};
    run_skins(world, &ch, other, fps_only, 1, &out[1]);
    assert_memory_not_equal(out[2], out[1], sizeof(float) * 3u * n);

    /* A repeated name, no backends, too many, an unknown one: one line each. */
    sinew_bake_backend twice[2] = {{"ps", NULL, 0u}, {"ps", NULL, 0u}};
    assert_int_equal(sinew_bake_write_backends(world, rig, twice, 2, file), SINEW_ERROR_PARAMETER);
    assert_int_equal(sinew_bake_write_backends(world, rig, list, 0, file),
                     SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sinew_bake_write_backends(world, rig, list, SINEW_BAKE_MAX_BACKENDS + 1u,
                                               file), SINEW_ERROR_INVALID_ARGUMENT);
    sinew_bake_backend unknown[1] = {{"no-such-backend", NULL, 0u}};
    assert_int_equal(sinew_bake_write_backends(world, rig, unknown, 1, file),
                     SINEW_ERROR_UNKNOWN_BACKEND);
    assert_int_equal(log.count[SINEW_LOG_ERROR], errors + 5);

    for (int k = 0; k < 4; ++k) free(out[k]);
    sinew_world_destroy(world);
    remove(file);
    remove(file_ps);
    rmdir(dir);
    sample_character_free(&ch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cylinder_round_trip_and_corruption),
        cmocka_unit_test(test_male_round_trip),
        cmocka_unit_test(test_foreign_blob),
        cmocka_unit_test(test_writer_error_is_passed_on),
        cmocka_unit_test(test_runtime_baked_file),
        cmocka_unit_test(test_runtime_two_backends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
