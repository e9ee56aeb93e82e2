/* Baked files that must be refused: corrupt, truncated, foreign, newer, inconsistent or with
 * invalid content. Each refusal has its code, exactly one log line naming the file, and leaves
 * the world as it was. SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bake_test_util.h"

typedef struct fixture {
    sinew_test_log log;
    sinew_world* world;
    bake_temp temp;
    bake_test_rig tube;
    sinew_rig original, good;
    const char* case_path;
    uint8_t* bytes;                     /* a good file with every chunk (SIMM, BKND, BLOB) */
    size_t size;
} fixture;

static int setup(void** state)
{
    fixture* f = (fixture*)calloc(1, sizeof *f);
    sinew_test_log_init(&f->log);
    f->world = sinew_test_world(&f->log, 1);
    assert_int_equal(sinew_world_register_backend(f->world, &bake_probe_backend), SINEW_OK);
    bake_temp_init(&f->temp);
    bake_test_rig_make(&f->tube);
    assert_int_equal(sinew_rig_create(f->world, &f->tube.desc, &f->original), SINEW_OK);
    const char* good = bake_temp_path(&f->temp, "good.sinew");
    assert_int_equal(sinew_bake_write(f->world, f->original, "bakeprobe", NULL, 0, good), SINEW_OK);
    assert_int_equal(sinew_rig_load_baked(f->world, good, &f->good), SINEW_OK);
    f->bytes = bake_read_bytes(good, &f->size);
    f->case_path = bake_temp_path(&f->temp, "case.sinew");
    assert_int_equal(f->log.total, 0);
    *state = f;
    return 0;
}

static int teardown(void** state)
{
    fixture* f = (fixture*)*state;
    /* The rig loaded before every refusal is untouched, and no refusal took a rig slot: a new
     * rig gets the third slot. */
    bake_assert_views_equal(bake_capture_view(f->world, f->original, NULL, 0),
                            bake_capture_view(f->world, f->good, NULL, 0));
    sinew_rig third;
    assert_int_equal(sinew_rig_create(f->world, &f->tube.desc, &third), SINEW_OK);
    assert_int_equal(third.id & 0xFFFFu, 3u);
    sinew_world_destroy(f->world);
    bake_temp_cleanup(&f->temp);
    bake_test_rig_free(&f->tube);
    free(f->bytes);
    free(f);
    return 0;
}

/* Loads `data` as a file twice (into the world and without one): both refuse it with
 * `expected`, each with one log line that names the file and contains `needle`. */
static void expect_refused(fixture* f, const void* data, size_t size, sinew_result expected,
                           const char* needle)
{
    bake_write_bytes(f->case_path, data, size);
    for (int pass = 0; pass < 2; ++pass) {
        sinew_test_log_reset(&f->log);
        sinew_result r;
        if (pass == 0) {
            sinew_rig rig = { 12345u };
            r = sinew_rig_load_baked(f->world, f->case_path, &rig);
            assert_int_equal(rig.id, 0);
        } else {
            sinew_baked_file* file = (sinew_baked_file*)&r;
            r = sinew_bake_read(f->case_path, &f->log.logger, &file);
            assert_null(file);
        }
        if (r != expected)
            fail_msg("%s: got %s, expected %s (log: %s)", pass ? "sinew_bake_read" : "load",
                     sinew_result_string(r), sinew_result_string(expected), f->log.last);
        assert_int_equal(f->log.count[SINEW_LOG_ERROR], 1);
        assert_int_equal(f->log.total, 1);
        if (!strstr(f->log.last, f->case_path))
            fail_msg("log line \"%s\" does not name the file", f->log.last);
        if (needle && !strstr(f->log.last, needle))
            fail_msg("log line \"%s\" lacks \"%s\"", f->log.last, needle);
    }
    sinew_test_log_reset(&f->log);
}

/* A copy of the good file to edit. */
static uint8_t* copy_of(const fixture* f)
{
    uint8_t* c = (uint8_t*)malloc(f->size + 64u);
    assert_non_null(c);
    memcpy(c, f->bytes, f->size);
    return c;
}

static size_t chunk_at(const fixture* f, const uint8_t* file, const char* tag, uint64_t* size)
{
    size_t at;
    uint64_t n;
    if (!bake_find_chunk(file, f->size, tag, &at, &n)) fail_msg("no chunk %s", tag);
    if (size) *size = n;
    return at;
}

static void test_checksum(void** state)
{
    fixture* f = (fixture*)*state;
    uint64_t blob_size;
    size_t blob = chunk_at(f, f->bytes, "BLOB", &blob_size);
    size_t offsets[] = { 32u, 33u, 48u, f->size / 2u, blob + (size_t)blob_size / 2u, f->size - 1u };
    for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; ++i) {
        uint8_t* c = copy_of(f);
        c[offsets[i]] ^= 0x10u;
        expect_refused(f, c, f->size, SINEW_ERROR_FILE_FORMAT, "checksum");
        free(c);
    }
    /* The checksum field itself. */
    uint8_t* c = copy_of(f);
    c[24] ^= 1u;
    expect_refused(f, c, f->size, SINEW_ERROR_FILE_FORMAT, "checksum");
    free(c);
}

static void test_truncated(void** state)
{
    fixture* f = (fixture*)*state;
    expect_refused(f, f->bytes, 0, SINEW_ERROR_FILE_TRUNCATED, NULL);
    for (size_t cut = 1; cut < f->size; cut += cut < 80u ? 1u : 211u)
        expect_refused(f, f->bytes, cut, SINEW_ERROR_FILE_TRUNCATED, NULL);
    expect_refused(f, f->bytes, f->size - 1u, SINEW_ERROR_FILE_TRUNCATED, NULL);
    /* A header announcing an absurd payload is a truncated file, not an allocation. */
    uint8_t* c = copy_of(f);
    c[23] = 0x80u;
    expect_refused(f, c, f->size, SINEW_ERROR_FILE_TRUNCATED, "announces");
    free(c);
}

static void test_foreign_and_newer(void** state)
{
    fixture* f = (fixture*)*state;
    uint8_t* c = copy_of(f);
    c[7] = 'X';
    expect_refused(f, c, f->size, SINEW_ERROR_FILE_FORMAT, "magic");
    const char* text = "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
    expect_refused(f, text, strlen(text), SINEW_ERROR_FILE_FORMAT, "magic");
    expect_refused(f, "SINE", 4, SINEW_ERROR_FILE_TRUNCATED, NULL);
    free(c);

    c = copy_of(f);
    bake_put_le32(c + 8, 7u);
    expect_refused(f, c, f->size, SINEW_ERROR_UNSUPPORTED, "format version 7, this runtime reads 2");
    /* A newer version is recognised even when the rest is cut short. */
    expect_refused(f, c, 12, SINEW_ERROR_UNSUPPORTED, "format version 7");
    bake_put_le32(c + 8, 0u);
    expect_refused(f, c, f->size, SINEW_ERROR_FILE_FORMAT, "version 0");
    free(c);

    c = copy_of(f);
    bake_put_le32(c + 28, 1u);
    expect_refused(f, c, f->size, SINEW_ERROR_UNSUPPORTED, "flags");
    free(c);
    c = copy_of(f);
    bake_put_le32(c + 12, 36u);
    expect_refused(f, c, f->size, SINEW_ERROR_FILE_FORMAT, "header size");
    bake_put_le32(c + 12, 16u);
    expect_refused(f, c, f->size, SINEW_ERROR_FILE_FORMAT, "header size");
    free(c);
    /* Bytes after the payload. */
    c = copy_of(f);
    memset(c + f->size, 0, 8);
    expect_refused(f, c, f->size + 8u, SINEW_ERROR_FILE_FORMAT, "after");
    free(c);
}

static void test_missing_and_unreadable(void** state)
{
    fixture* f = (fixture*)*state;
    for (int pass = 0; pass < 2; ++pass) {
        const char* path = pass == 0 ? "/nonexistent/folder/x.sinew" : f->temp.dir;
        sinew_result expected = pass == 0 ? SINEW_ERROR_FILE_NOT_FOUND : SINEW_ERROR_FILE_READ;
        sinew_test_log_reset(&f->log);
        sinew_rig rig;
        assert_int_equal(sinew_rig_load_baked(f->world, path, &rig), expected);
        assert_int_equal(f->log.count[SINEW_LOG_ERROR], 1);
        assert_int_equal(f->log.total, 1);
        assert_non_null(strstr(f->log.last, path));
        sinew_baked_file* file = NULL;
        assert_int_equal(sinew_bake_read(path, &f->log.logger, &file), expected);
        assert_null(file);
        assert_int_equal(f->log.count[SINEW_LOG_ERROR], 2);
    }
    sinew_test_log_reset(&f->log);
    sinew_rig rig;
    assert_int_equal(sinew_rig_load_baked(NULL, f->case_path, &rig), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sinew_rig_load_baked(f->world, NULL, &rig), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sinew_rig_load_baked(f->world, f->case_path, NULL), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sinew_bake_read(f->case_path, &f->log.logger, NULL), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(f->log.count[SINEW_LOG_ERROR], 3);
    sinew_test_log_reset(&f->log);
}

/* Rebuilds a file from the good one's header and `payload`, with size and checksum fixed. */
static uint8_t* rebuild(const fixture* f, const uint8_t* payload, size_t payload_size,
                        size_t* out_size)
{
    uint8_t* c = (uint8_t*)malloc(32u + payload_size);
    assert_non_null(c);
    memcpy(c, f->bytes, 32);
    memcpy(c + 32, payload, payload_size);
    for (int k = 0; k < 8; ++k) c[16 + k] = (uint8_t)((uint64_t)payload_size >> (8 * k));
    bake_fix_checksum(c, 32u + payload_size);
    *out_size = 32u + payload_size;
    return c;
}

static void test_chunks(void** state)
{
    fixture* f = (fixture*)*state;
    const uint8_t* payload = f->bytes + 32;
    size_t payload_size = f->size - 32u;
    uint8_t* p = (uint8_t*)malloc(payload_size + 64u);

    /* An unknown chunk first is skipped: the file loads. */
    memcpy(p, "XTRA", 4);
    memset(p + 4, 0, 12);
    p[8] = 5;
    memcpy(p + 16, "hello\0\0\0", 8);
    memcpy(p + 24, payload, payload_size);
    size_t n;
    uint8_t* c = rebuild(f, p, payload_size + 24u, &n);
    bake_write_bytes(f->case_path, c, n);
    sinew_rig rig;
    assert_int_equal(sinew_rig_load_baked(f->world, f->case_path, &rig), SINEW_OK);
    bake_assert_views_equal(bake_capture_view(f->world, f->original, NULL, 0),
                            bake_capture_view(f->world, rig, NULL, 0));
    assert_int_equal(sinew_rig_destroy(f->world, rig), SINEW_OK);
    free(c);

    /* A header grown by a later version: the payload starts at header_size. */
    c = (uint8_t*)malloc(f->size + 8u);
    memcpy(c, f->bytes, 32);
    memset(c + 32, 0xAB, 8);
    memcpy(c + 40, payload, payload_size);
    bake_put_le32(c + 12, 40u);
    bake_write_bytes(f->case_path, c, f->size + 8u);
    assert_int_equal(sinew_rig_load_baked(f->world, f->case_path, &rig), SINEW_OK);
    assert_int_equal(sinew_rig_destroy(f->world, rig), SINEW_OK);
    assert_int_equal(f->log.total, 0);
    free(c);

    /* A known chunk twice. */
    uint64_t rig0_size;
    size_t rig0 = chunk_at(f, f->bytes, "RIG0", &rig0_size) - 16u;
    size_t rig0_total = 16u + (size_t)((rig0_size + 7u) & ~7ull);
    memcpy(p, payload, payload_size);
    memcpy(p + payload_size, f->bytes + rig0, rig0_total);
    c = rebuild(f, p, payload_size + rig0_total, &n);
    expect_refused(f, c, n, SINEW_ERROR_FILE_FORMAT, "twice");
    free(c);

    /* The backend's BKND and BLOB once more: twice in version 1; in version 2 (several
     * backends) a backend named twice; and a BKND without its BLOB. */
    uint64_t bknd_size, blob_size;
    size_t bknd = chunk_at(f, f->bytes, "BKND", &bknd_size) - 16u;
    size_t blob = chunk_at(f, f->bytes, "BLOB", &blob_size) - 16u;
    size_t bknd_total = 16u + (size_t)((bknd_size + 7u) & ~7ull);
    size_t blob_total = 16u + (size_t)((blob_size + 7u) & ~7ull);
    uint8_t* q = (uint8_t*)malloc(payload_size + bknd_total + blob_total);
    memcpy(q, payload, payload_size);
    memcpy(q + payload_size, f->bytes + bknd, bknd_total);
    memcpy(q + payload_size + bknd_total, f->bytes + blob, blob_total);
    c = rebuild(f, q, payload_size + bknd_total + blob_total, &n);
    expect_refused(f, c, n, SINEW_ERROR_FILE_FORMAT, "BKND appears twice");
    bake_put_le32(c + 8, 2u);
    bake_fix_checksum(c, n);
    expect_refused(f, c, n, SINEW_ERROR_FILE_FORMAT, "names backend \"bakeprobe\" twice");
    free(c);
    c = rebuild(f, q, payload_size + bknd_total, &n);
    bake_put_le32(c + 8, 2u);
    bake_fix_checksum(c, n);
    expect_refused(f, c, n, SINEW_ERROR_FILE_FORMAT, "BKND comes without chunk BLOB");
    free(c);
    free(q);

    /* A required chunk missing; BKND without BLOB. */
    const char* renamed[][2] = { { "WGHT", "WGHT is missing" }, { "SKEL", "SKEL is missing" },
                                 { "MESH", "MESH is missing" }, { "RIG0", "RIG0 is missing" },
                                 { "BLOB", "BKND comes without chunk BLOB" },
                                 { "BKND", "BLOB comes without chunk BKND" } };
    for (size_t i = 0; i < sizeof renamed / sizeof renamed[0]; ++i) {
        c = copy_of(f);
        size_t at = chunk_at(f, c, renamed[i][0], NULL) - 16u;
        c[at + 3] = 'z';
        bake_fix_checksum(c, f->size);
        expect_refused(f, c, f->size, SINEW_ERROR_FILE_FORMAT, renamed[i][1]);
        free(c);
    }

    /* A chunk claiming more than is left, and a payload ending inside a chunk header. */
    c = copy_of(f);
    c[rig0 + 8 + 5] = 1;
    bake_fix_checksum(c, f->size);
    expect_refused(f, c, f->size, SINEW_ERROR_FILE_FORMAT, "claims");
    free(c);
    memcpy(p, payload, payload_size);
    memset(p + payload_size, 0, 8);
    c = rebuild(f, p, payload_size + 8u, &n);
    expect_refused(f, c, n, SINEW_ERROR_FILE_FORMAT, "runs past");
    free(c);
    free(p);
}

/* Edits a 32-bit field of the good file at `offset`, fixes the checksum, expects refusal. */
static void expect_edit_refused(fixture* f, size_t offset, uint32_t value, sinew_result expected,
                                const char* needle)
{
    uint8_t* c = copy_of(f);
    bake_put_le32(c + offset, value);
    bake_fix_checksum(c, f->size);
    expect_refused(f, c, f->size, expected, needle);
    free(c);
}

static uint32_t float_bits(float x)
{
    uint32_t b;
    memcpy(&b, &x, 4);
    return b;
}

static void test_content(void** state)
{
    fixture* f = (fixture*)*state;
    uint32_t vn = f->tube.desc.render_mesh.vertex_count;
    uint32_t tn = f->tube.desc.render_mesh.triangle_count;
    size_t mesh = chunk_at(f, f->bytes, "MESH", NULL);
    size_t indices = mesh + 16u + 24u * vn;
    expect_edit_refused(f, indices + 4u * 7u, vn + 5u, SINEW_ERROR_VERTEX_INDEX, "triangle 2");
    expect_edit_refused(f, mesh + 16u + 4u * 4u, float_bits(NAN), SINEW_ERROR_NONFINITE,
                        "vertex 1");
    expect_edit_refused(f, mesh + 16u + 12u * vn, float_bits(INFINITY), SINEW_ERROR_NONFINITE,
                        "normal");
    expect_edit_refused(f, mesh + 16u + 12u * vn, float_bits(3.0f), SINEW_ERROR_INVALID_ARGUMENT,
                        "length");
    /* The second sub-mesh starting past the triangles. */
    expect_edit_refused(f, indices + 12u * tn + 4u, tn + 1u, SINEW_ERROR_INVALID_ARGUMENT,
                        "sub-mesh 1");
    /* Counts that do not match the chunk's size. */
    expect_edit_refused(f, mesh, vn + 1u, SINEW_ERROR_FILE_FORMAT, "chunk MESH");
    expect_edit_refused(f, mesh + 4u, tn - 1u, SINEW_ERROR_FILE_FORMAT, "chunk MESH");

    size_t sim = chunk_at(f, f->bytes, "SIMM", NULL);
    uint32_t svn = f->tube.desc.simulation_mesh.vertex_count;
    expect_edit_refused(f, sim + 16u + 24u * svn, 0xFFFFFFFFu, SINEW_ERROR_VERTEX_INDEX,
                        "simulation mesh");

    size_t skel = chunk_at(f, f->bytes, "SKEL", NULL);
    expect_edit_refused(f, skel + 8u, 2u, SINEW_ERROR_SKELETON, "cycle");
    expect_edit_refused(f, skel + 12u, 7u, SINEW_ERROR_SKELETON, "parent 7");
    expect_edit_refused(f, skel + 20u, float_bits(NAN), SINEW_ERROR_NONFINITE, "bind matrix");
    expect_edit_refused(f, skel, 4u, SINEW_ERROR_FILE_FORMAT, "chunk SKEL");
    /* A NUL inside a joint name ("shoulder" begins after the three lengths). */
    expect_edit_refused(f, skel + 8u + 72u * 3u, 0x00006873u, SINEW_ERROR_FILE_FORMAT, "NUL");

    size_t wght = chunk_at(f, f->bytes, "WGHT", NULL);
    size_t offsets = wght + 8u;
    uint32_t en = bake_get_le32(f->bytes + wght + 4u);
    size_t joints = offsets + 4u * (vn + 1u);
    size_t values = joints + 4u * en;
    expect_edit_refused(f, joints, 3u, SINEW_ERROR_JOINT_INDEX, "joint 3 of 3");
    expect_edit_refused(f, values, float_bits(NAN), SINEW_ERROR_NONFINITE, "weight");
    expect_edit_refused(f, values, float_bits(-1.0f), SINEW_ERROR_WEIGHTS, "negative");
    expect_edit_refused(f, values, float_bits(0.25f), SINEW_ERROR_WEIGHTS, NULL);
    expect_edit_refused(f, offsets + 4u, 0u, SINEW_ERROR_WEIGHTS, "no influence");
    expect_edit_refused(f, offsets + 8u, en + 9u, SINEW_ERROR_FILE_FORMAT, "descend");
    expect_edit_refused(f, offsets, 1u, SINEW_ERROR_WEIGHTS, "start at 0");
    expect_edit_refused(f, wght, vn - 1u, SINEW_ERROR_FILE_FORMAT, "render mesh has");
    expect_edit_refused(f, offsets + 4u * vn, en - 1u, SINEW_ERROR_FILE_FORMAT, "end at");

    size_t bknd = chunk_at(f, f->bytes, "BKND", NULL);
    expect_edit_refused(f, bknd, 0u, SINEW_ERROR_FILE_FORMAT, "backend name");
    expect_edit_refused(f, bknd, 64u, SINEW_ERROR_FILE_FORMAT, "backend name");
    expect_edit_refused(f, bknd + 4u, 1000000u, SINEW_ERROR_FILE_FORMAT, "parameters");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_checksum, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_and_newer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_and_unreadable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chunks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_content, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
