/* Malformed inputs: each gets its specific result code and exactly one error line that names
 * the file; nothing crashes or leaks (run under valgrind or ASan). SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_support.h"
#include "import_test_util.h"

static sinew_test_log g_log;
static char g_dir[256];
static char g_path[512];

static const char* in_dir(const char* name)
{
    snprintf(g_path, sizeof g_path, "%s/%s", g_dir, name);
    return g_path;
}

static void write_bytes(const char* name, const void* data, size_t size)
{
    FILE* f = fopen(in_dir(name), "wb");
    assert_non_null(f);
    if (size > 0) assert_int_equal(fwrite(data, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

static void write_file(const char* name, const char* text)
{
    write_bytes(name, text, strlen(text));
}

static const char k_good_off[] =
    "OFF\n4 4 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 3\n";
static const char k_good_skel[] = "2\n0 0 0 a root\n0 1 0 b a\n";
static const char k_good_anim[] = "2 2\n0\n1 0 0\n1 0 0\n0 0\n1\n0 0 1\n0 0 1\n0.5 0.25\n";
static const char k_good_ini[] =
    "SIMMESH good.off\nSKELETON good.skel\nANIMATION good0.anim good\n";

/* Writes the good character; a test then replaces one of its files. */
static void write_good_character(void)
{
    write_file("good.off", k_good_off);
    write_file("good.skel", k_good_skel);
    write_file("good0.anim", k_good_anim);
    write_file("good.ini", k_good_ini);
}

static sinew_result import_path(const char* path, const sinew_import_options* options,
                                sinew_character** out)
{
    sinew_test_log_reset(&g_log);
    sinew_character* c = (sinew_character*)(uintptr_t)1; /* must be reset to NULL on failure */
    sinew_result r = sinew_import_character(path, options, &c);
    if (r != SINEW_OK) assert_null(c);
    else assert_non_null(c);
    if (out) *out = c;
    else sinew_import_free(c);
    return r;
}

static sinew_result import_named(const char* name)
{
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.logger = &g_log.logger;
    return import_path(in_dir(name), &options, NULL);
}

/* The import of `name` fails with `code` and one error line that mentions `mention`. */
static void expect_failure(const char* name, sinew_result code, const char* mention)
{
    sinew_result r = import_named(name);
    if (r != code)
        fail_msg("%s: result %d, expected %d (log: %s)", name, (int)r, (int)code, g_log.last);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(g_log.total, 1);
    if (mention && !strstr(g_log.last, mention))
        fail_msg("the error line '%s' does not mention '%s'", g_log.last, mention);
}

static void expect_ok(const char* name)
{
    sinew_result r = import_named(name);
    if (r != SINEW_OK) fail_msg("%s: result %d (log: %s)", name, (int)r, g_log.last);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 0);
}

/* ---------------------------------------------------------------------------------------- */

static void test_good_character(void** state)
{
    (void)state;
    write_good_character();
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.logger = &g_log.logger;
    sinew_character* c = NULL;
    assert_int_equal(import_path(in_dir("good.ini"), &options, &c), SINEW_OK);
    assert_int_equal(g_log.total, 0);
    assert_string_equal(c->name, "good");
    assert_string_equal(c->source_path, in_dir("good.ini"));
    assert_int_equal(c->rig.render_mesh.vertex_count, 4);
    assert_int_equal(c->rig.render_mesh.triangle_count, 4);
    assert_int_equal(c->rig.skeleton.joint_count, 2);
    assert_int_equal(c->rig.skeleton.parents[0], -1);
    assert_int_equal(c->rig.skeleton.parents[1], 0);
    assert_int_equal(c->animation_count, 1);
    const sinew_animation* a = &c->animations[0];
    assert_int_equal(a->key_count, 2);
    /* Frame 1 turns joint b by 0.25 rad about z: its local rotation quaternion is
     * (0, 0, sin 0.125, cos 0.125) and its translation the rest offset (0, 1, 0). */
    const float* q = a->rotations + (1 * 2 + 1) * 4;
    assert_true(fabsf(q[2] - sinf(0.125f)) < 1e-6f && fabsf(q[3] - cosf(0.125f)) < 1e-6f);
    assert_true(fabsf(a->translations[(1 * 2 + 1) * 3 + 1] - 1.0f) < 1e-6f);
    assert_true(fabsf(a->scales[(1 * 2 + 1) * 3 + 2] - 1.0f) < 1e-6f);
    sinew_import_free(c);

    /* An unknown key is a warning, not an error. */
    write_file("extra.ini", "SIMMESH good.off\nSKELETON good.skel\nSOLVER pd 10\n");
    expect_ok("extra.ini");
    assert_int_equal(g_log.count[SINEW_LOG_WARNING], 1);

    /* A comment and CRLF line ends are fine; an ANIMATION without base loads one file. */
    write_file("crlf.ini", "# a comment\r\nSIMMESH good.off\r\nSKELETON good.skel\r\n"
                           "ANIMATION good0.anim\r\n");
    expect_ok("crlf.ini");
    assert_int_equal(g_log.total, 0);
    sinew_import_free(NULL);
}

static void test_polygons_become_fans(void** state)
{
    (void)state;
    write_good_character();
    write_file("poly.off", "OFF\n5 2 0\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n0.5 2 0\n"
                           "4 0 1 2 3\n5 0 1 2 4 3 255 0 0\n");
    write_file("poly.ini", "SIMMESH poly.off\nSKELETON good.skel\n");
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.logger = &g_log.logger;
    sinew_character* c = NULL;
    assert_int_equal(import_path(in_dir("poly.ini"), &options, &c), SINEW_OK);
    /* A quad gives 2 triangles and a pentagon 3, all around the first corner; the
     * trailing colour of the pentagon is ignored. */
    const uint32_t expected[] = { 0, 1, 2, 0, 2, 3, 0, 1, 2, 0, 2, 4, 0, 4, 3 };
    assert_int_equal(c->rig.render_mesh.triangle_count, 5);
    assert_memory_equal(c->rig.render_mesh.indices, expected, sizeof expected);
    assert_int_equal(c->animation_count, 0);
    sinew_import_free(c);
}

static void test_missing_files(void** state)
{
    (void)state;
    write_good_character();
    expect_failure("nonexistent.ini", SINEW_ERROR_FILE_NOT_FOUND, "nonexistent.ini");
    expect_failure("no_folder/x.ini", SINEW_ERROR_FILE_NOT_FOUND, "x.ini");

    write_file("miss_mesh.ini", "SIMMESH missing.off\nSKELETON good.skel\n");
    expect_failure("miss_mesh.ini", SINEW_ERROR_FILE_NOT_FOUND, "missing.off");
    write_file("miss_vis.ini", "SIMMESH good.off\nVISMESH missing_vis.off\nSKELETON good.skel\n");
    expect_failure("miss_vis.ini", SINEW_ERROR_FILE_NOT_FOUND, "missing_vis.off");
    write_file("miss_skel.ini", "SIMMESH good.off\nSKELETON missing.skel\n");
    expect_failure("miss_skel.ini", SINEW_ERROR_FILE_NOT_FOUND, "missing.skel");
    write_file("miss_anim.ini",
               "SIMMESH good.off\nSKELETON good.skel\nANIMATION nope0.anim nope\n");
    expect_failure("miss_anim.ini", SINEW_ERROR_FILE_NOT_FOUND, "nope0.anim");

    /* use_simulation_mesh = 1 never opens the VISMESH file. */
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.logger = &g_log.logger;
    options.use_simulation_mesh = 1;
    assert_int_equal(import_path(in_dir("miss_vis.ini"), &options, NULL), SINEW_OK);

    /* A folder where a file belongs cannot be read. */
    assert_int_equal(mkdir(in_dir("folder.ini"), 0700), 0);
    expect_failure("folder.ini", SINEW_ERROR_FILE_READ, "folder.ini");
    write_file("folder_mesh.ini", "SIMMESH folder.ini\nSKELETON good.skel\n");
    expect_failure("folder_mesh.ini", SINEW_ERROR_FILE_READ, "folder.ini");

    /* An unreadable file (root reads everything, so only checked as a user). */
    if (geteuid() != 0) {
        write_file("locked.ini", k_good_ini);
        assert_int_equal(chmod(in_dir("locked.ini"), 0), 0);
        expect_failure("locked.ini", SINEW_ERROR_FILE_READ, "locked.ini");
    }
}

static void test_bad_ini(void** state)
{
    (void)state;
    write_good_character();
    write_file("empty.ini", "");
    expect_failure("empty.ini", SINEW_ERROR_FILE_FORMAT, "SIMMESH");
    write_file("noskel.ini", "SIMMESH good.off\n");
    expect_failure("noskel.ini", SINEW_ERROR_FILE_FORMAT, "SKELETON");
    write_file("twice.ini", "SIMMESH good.off\nSIMMESH good.off\nSKELETON good.skel\n");
    expect_failure("twice.ini", SINEW_ERROR_FILE_FORMAT, "twice.ini:2");
    write_file("novalue.ini", "SIMMESH\nSKELETON good.skel\n");
    expect_failure("novalue.ini", SINEW_ERROR_FILE_FORMAT, "novalue.ini:1");
    write_file("trunc.ini", "SIMMESH good.off\nSKELETON");
    expect_failure("trunc.ini", SINEW_ERROR_FILE_TRUNCATED, "trunc.ini:2");
    write_file("extra.ini", "SIMMESH good.off two.off\nSKELETON good.skel\n");
    expect_failure("extra.ini", SINEW_ERROR_FILE_FORMAT, "extra.ini:1");
}

/* Four vertices written wide enough that the size bound lets the parser reach the faces. */
#define VERTS "0.0 0.0 0.0\n1.0 0.0 0.0\n0.0 1.0 0.0\n0.0 0.0 1.0\n"

static void use_mesh(const char* off_text)
{
    write_file("m.off", off_text);
    write_file("m.ini", "SIMMESH m.off\nSKELETON good.skel\n");
}

static void test_bad_off(void** state)
{
    (void)state;
    write_good_character();
    use_mesh("");
    expect_failure("m.ini", SINEW_ERROR_FILE_TRUNCATED, "m.off");
    /* Counts that the remaining bytes cannot hold are refused before allocating... */
    use_mesh("OFF\n4 4 0\n0 0 0\n1 0 0\n0 1");
    expect_failure("m.ini", SINEW_ERROR_FILE_TRUNCATED, "m.off:2");
    /* ...and a file that could hold them but stops early at the line where it stops. */
    use_mesh("OFF\n3 1 0\n0.000000 0.000000 0.000000\n1.000000 0.000000 0.000000\n0.0000");
    expect_failure("m.ini", SINEW_ERROR_FILE_TRUNCATED, "m.off:5");
    use_mesh("OFF\n4 4 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 2 1\n3 0 1 3\n");
    expect_failure("m.ini", SINEW_ERROR_FILE_TRUNCATED, "m.off");
    use_mesh("hello world\n");
    expect_failure("m.ini", SINEW_ERROR_FILE_FORMAT, "m.off:1");
    const unsigned char binary[] = { 0x7f, 'E', 'L', 'F', 0, 0, 1, 2, 0xff, 0xfe, '\n', 0 };
    write_bytes("m.off", binary, sizeof binary);
    expect_failure("m.ini", SINEW_ERROR_FILE_FORMAT, "m.off");
    use_mesh("OFF\n4 4 0\n0 0 0\nnan 0 0\n0 1 0\n0 0 1\n3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 3\n");
    expect_failure("m.ini", SINEW_ERROR_FILE_FORMAT, "m.off:4");
    use_mesh("OFF\n4 4 0\n0 0 0\n1 0 0\n0 inf 0\n0 0 1\n3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 3\n");
    expect_failure("m.ini", SINEW_ERROR_FILE_FORMAT, "m.off:5");
    use_mesh("OFF\n4 4 0\n0 0 0\n1 0 0\n0 1e999 0\n0 0 1\n3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 3\n");
    expect_failure("m.ini", SINEW_ERROR_FILE_FORMAT, "m.off:5");
    use_mesh("OFF\n4 4 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 2 1\n3 0 1 3\n3 0 3 4\n3 1 2 3\n");
    expect_failure("m.ini", SINEW_ERROR_VERTEX_INDEX, "m.off:9");
    use_mesh("OFF\n4 4 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 2 1\n3 0 -1 3\n3 0 3 2\n3 1 2 3\n");
    expect_failure("m.ini", SINEW_ERROR_FILE_FORMAT, "m.off:8");
    use_mesh("OFF\n4000000000 4 0\n0 0 0\n");
    expect_failure("m.ini", SINEW_ERROR_FILE_TRUNCATED, "m.off");
    use_mesh("OFF\n99999999999 4 0\n0 0 0\n");
    expect_failure("m.ini", SINEW_ERROR_FILE_FORMAT, "m.off:2");
    use_mesh("OFF\n-4 4 0\n0 0 0\n");
    expect_failure("m.ini", SINEW_ERROR_FILE_FORMAT, "negative");
    use_mesh("OFF\n0 0 0\n");
    expect_failure("m.ini", SINEW_ERROR_EMPTY_MESH, "m.off");
    use_mesh("OFF\n4 1 0\n" VERTS "2 0 1\n");
    expect_failure("m.ini", SINEW_ERROR_FILE_FORMAT, "m.off:7");
    use_mesh("OFF\n4 1 0\n0.0 0.0 0.0\n1.0 0.0 0.0 7\n0.0 1.0 0.0\n0.0 0.0 1.0\n3 0 1 2\n");
    expect_failure("m.ini", SINEW_ERROR_FILE_FORMAT, "m.off:4");
    use_mesh("OFF\n4 1 0\n0.0 0.0 0.0\n1.0 0.0\n0.0 1.0 0.0\n0.0 0.0 1.0\n3 0 1 2\n");
    expect_failure("m.ini", SINEW_ERROR_FILE_FORMAT, "m.off:4");
    use_mesh("OFF\n4 1 0\n" VERTS "3 0 1 2\n3 0 1 3\n");
    expect_failure("m.ini", SINEW_ERROR_FILE_FORMAT, "m.off:8");
    use_mesh("OFF\n4 1 0\n" VERTS "3 0 1\n");
    expect_failure("m.ini", SINEW_ERROR_FILE_TRUNCATED, "m.off:7");
    use_mesh("OFF\n4 2 0\n" VERTS "3 0 1\n3 0 1 2\n");
    expect_failure("m.ini", SINEW_ERROR_FILE_FORMAT, "m.off:7");
    use_mesh("COFF\n4 1 0\n" VERTS "3 0 1 2\n");
    expect_failure("m.ini", SINEW_ERROR_FILE_FORMAT, "m.off:1");
}

static void use_skeleton(const char* skel_text)
{
    write_file("s.skel", skel_text);
    write_file("s.ini", "SIMMESH good.off\nSKELETON s.skel\n");
}

static void test_bad_skel(void** state)
{
    (void)state;
    write_good_character();
    use_skeleton("");
    expect_failure("s.ini", SINEW_ERROR_FILE_TRUNCATED, "s.skel");
    use_skeleton("3\n0 0 0 a root\n0 1 0 b a\n");
    expect_failure("s.ini", SINEW_ERROR_FILE_TRUNCATED, "s.skel");
    use_skeleton("2\n0 0 0 a root\n0 1 0 b");
    expect_failure("s.ini", SINEW_ERROR_FILE_TRUNCATED, "s.skel:3");
    use_skeleton("2\n0 0 0 a root\n0 1 0 b c\n");
    expect_failure("s.ini", SINEW_ERROR_SKELETON, "s.skel:3");
    use_skeleton("2\n0 0 0 a root\n0 1 0 a a\n");
    expect_failure("s.ini", SINEW_ERROR_SKELETON, "s.skel:3");
    use_skeleton("3\n0 0 0 a root\n0 1 0 b c\n0 2 0 c b\n");
    expect_failure("s.ini", SINEW_ERROR_SKELETON, "cycle");
    use_skeleton("2\n0 0 0 a root\n0 1 0 b b\n");
    expect_failure("s.ini", SINEW_ERROR_SKELETON, "own parent");
    use_skeleton("1\n0 0 0 root root\n");
    expect_failure("s.ini", SINEW_ERROR_SKELETON, "s.skel:2");
    use_skeleton("0\n");
    expect_failure("s.ini", SINEW_ERROR_SKELETON, "s.skel:1");
    use_skeleton("2\n0 0 0 a root\n0 nan 0 b a\n");
    expect_failure("s.ini", SINEW_ERROR_FILE_FORMAT, "s.skel:3");
    use_skeleton("1000000\n0 0 0 a root\n");
    expect_failure("s.ini", SINEW_ERROR_FILE_TRUNCATED, "s.skel");
    use_skeleton("two\n0 0 0 a root\n");
    expect_failure("s.ini", SINEW_ERROR_FILE_FORMAT, "s.skel:1");
    use_skeleton("2\n0 0 0 a root\n0 1 0 b a extra\n");
    expect_failure("s.ini", SINEW_ERROR_FILE_FORMAT, "s.skel:3");
    /* Parents may follow their children; the skeleton is still a tree. */
    use_skeleton("2\n0 1 0 b a\n0 0 0 a root\n");
    expect_ok("s.ini");
}

static void use_animation(const char* anim_text)
{
    write_file("x0.anim", anim_text);
    write_file("x.ini", "SIMMESH good.off\nSKELETON good.skel\nANIMATION x0.anim x\n");
}

static void test_bad_anim(void** state)
{
    (void)state;
    write_good_character();
    use_animation("");
    expect_failure("x.ini", SINEW_ERROR_FILE_TRUNCATED, "x0.anim");
    use_animation("2 2\n0\n1 0 0\n1 0 0\n0 0\n1\n0 0 1\n");
    expect_failure("x.ini", SINEW_ERROR_FILE_TRUNCATED, "x0.anim");
    use_animation("1 3\n0\n1 0 0\n1 0 0\n1 0 0\n0 0 0\n");
    expect_failure("x.ini", SINEW_ERROR_JOINT_COUNT, "x0.anim:1");
    use_animation("1 2\n0\n1 0 0\n0 0 0\n0 0.5\n");
    expect_failure("x.ini", SINEW_ERROR_FILE_FORMAT, "x0.anim:4");
    use_animation("0 2\n");
    expect_failure("x.ini", SINEW_ERROR_FILE_FORMAT, "x0.anim:1");
    use_animation("1 2\n0\n1 0 0\n1 0 0\n0 nan\n");
    expect_failure("x.ini", SINEW_ERROR_FILE_FORMAT, "x0.anim:5");
    use_animation("1 2\n0.5\n1 0 0\n1 0 0\n0 0\n");
    expect_failure("x.ini", SINEW_ERROR_FILE_FORMAT, "x0.anim:2");
    use_animation("1 2\n0\n1 0 0\n1 0 0\n0\n0\n");
    expect_failure("x.ini", SINEW_ERROR_FILE_FORMAT, "x0.anim:5");
    use_animation("100000000 2\n0\n");
    expect_failure("x.ini", SINEW_ERROR_FILE_TRUNCATED, "x0.anim");
    use_animation("1 2\n0\n1 0 0\n1 0 0\n0 0\n7\n");
    expect_failure("x.ini", SINEW_ERROR_FILE_FORMAT, "x0.anim:6");
    /* A zero axis with a zero angle is no rotation; fewer animated joints than the
     * skeleton has leave the rest at identity. */
    use_animation("1 2\n0\n0 0 0\n1 0 0\n0 0\n");
    expect_ok("x.ini");
    use_animation("1 1\n-5\n0 1 0\n0.3\n");
    expect_ok("x.ini");
    /* The series base0, base1, ... stops at the first missing file. */
    use_animation(k_good_anim);
    write_file("x1.anim", k_good_anim);
    write_file("x3.anim", "garbage that is never read");
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.logger = &g_log.logger;
    sinew_character* c = NULL;
    assert_int_equal(import_path(in_dir("x.ini"), &options, &c), SINEW_OK);
    assert_int_equal(c->animation_count, 2);
    assert_string_equal(c->animations[1].name, "x1");
    sinew_import_free(c);
    /* A broken member of the series fails the import, naming it. */
    write_file("x1.anim", "1 2\n0\n");
    expect_failure("x.ini", SINEW_ERROR_FILE_TRUNCATED, "x1.anim");
}

/* Cutting a good file at every byte: each prefix is either still valid or refused with a
 * file error and one line; never anything else. */
static void truncate_everywhere(const char* file, const char* text, const char* ini)
{
    size_t n = strlen(text);
    for (size_t cut = 0; cut < n; ++cut) {
        write_bytes(file, text, cut);
        sinew_result r = import_named(ini);
        if (r == SINEW_OK) {
            assert_int_equal(g_log.count[SINEW_LOG_ERROR], 0);
            continue;
        }
        if (r != SINEW_ERROR_FILE_TRUNCATED && r != SINEW_ERROR_FILE_FORMAT &&
            r != SINEW_ERROR_EMPTY_MESH && r != SINEW_ERROR_SKELETON)
            fail_msg("%s cut at %zu: unexpected result %d (%s)", file, cut, (int)r, g_log.last);
        assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    }
    write_file(file, text);
}

/* Flipping bytes with a fixed seed: any result but a crash, and one line per failure. */
static void mutate_everywhere(const char* file, const char* text, const char* ini)
{
    size_t n = strlen(text);
    char* copy = (char*)malloc(n);
    uint32_t seed = 12345u;
    for (int round = 0; round < 300; ++round) {
        memcpy(copy, text, n);
        for (int k = 0; k < 3; ++k) {
            seed = seed * 1664525u + 1013904223u;
            size_t at = (seed >> 8) % n;
            seed = seed * 1664525u + 1013904223u;
            copy[at] = (char)(seed >> 24);
        }
        write_bytes(file, copy, n);
        sinew_result r = import_named(ini);
        assert_int_equal(g_log.count[SINEW_LOG_ERROR], r == SINEW_OK ? 0 : 1);
    }
    free(copy);
    write_file(file, text);
}

static void test_truncation_and_mutation(void** state)
{
    (void)state;
    write_good_character();
    truncate_everywhere("good.off", k_good_off, "good.ini");
    truncate_everywhere("good.skel", k_good_skel, "good.ini");
    truncate_everywhere("good0.anim", k_good_anim, "good.ini");
    mutate_everywhere("good.off", k_good_off, "good.ini");
    mutate_everywhere("good.skel", k_good_skel, "good.ini");
    mutate_everywhere("good0.anim", k_good_anim, "good.ini");
    mutate_everywhere("good.ini", k_good_ini, "good.ini");
}

static void test_other_formats(void** state)
{
    (void)state;
    write_file("garbage.gltf", "{ \"asset\": this is not json at all");
    write_file("garbage.x", "xof 0303txt 0032\nFrame { garbage ;;; }\n");
    const unsigned char binary[] = { 'g', 'l', 'T', 'F', 2, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f };
    write_bytes("garbage.glb", binary, sizeof binary);
    write_file("nomesh.gltf", "{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[0]}],"
                              "\"nodes\":[{\"name\":\"empty\"}],\"scene\":0}");
#if SINEW_TEST_HAS_ASSIMP
    expect_failure("garbage.gltf", SINEW_ERROR_FILE_FORMAT, "garbage.gltf");
    expect_failure("garbage.x", SINEW_ERROR_FILE_FORMAT, "garbage.x");
    expect_failure("garbage.glb", SINEW_ERROR_FILE_FORMAT, "garbage.glb");
    /* A scene without triangles: refused as an empty mesh or by assimp itself. */
    sinew_result r = import_named("nomesh.gltf");
    assert_true(r == SINEW_ERROR_EMPTY_MESH || r == SINEW_ERROR_FILE_FORMAT);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    assert_non_null(strstr(g_log.last, "nomesh.gltf"));
#else
    expect_failure("garbage.gltf", SINEW_ERROR_UNSUPPORTED, "garbage.gltf");
    expect_failure("garbage.x", SINEW_ERROR_UNSUPPORTED, "garbage.x");
#endif
    expect_failure("missing.gltf", SINEW_ERROR_FILE_NOT_FOUND, "missing.gltf");
}

static void test_arguments(void** state)
{
    (void)state;
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.logger = &g_log.logger;
    sinew_character* c = NULL;

    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_import_character(NULL, &options, &c), SINEW_ERROR_INVALID_ARGUMENT);
    assert_null(c);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_import_character("", &options, &c), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_import_character("x.ini", &options, NULL),
                     SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);

    sinew_import_options bad = options;
    bad.use_simulation_mesh = 2;
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_import_character("x.ini", &bad, &c), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    bad = options;
    sinew_ext_header ext = { sizeof ext, SINEW_EXT_BACKEND_PARAMS, NULL };
    bad.next = &ext;
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_import_character("x.ini", &bad, &c), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    /* A too small struct cannot be trusted for its logger: the line goes to stderr. */
    bad = options;
    bad.struct_size = 0;
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_import_character("x.ini", &bad, &c), SINEW_ERROR_STRUCT_SIZE);
    assert_int_equal(g_log.total, 0);
    bad.struct_size = 8;
    assert_int_equal(sinew_import_character("x.ini", &bad, &c), SINEW_ERROR_STRUCT_SIZE);

    /* A larger struct from a newer caller is accepted; a logger without func is silent. */
    struct { sinew_import_options base; uint32_t future; } newer;
    memset(&newer, 0, sizeof newer);
    newer.base = options;
    newer.base.struct_size = sizeof newer;
    write_good_character();
    assert_int_equal(import_path(in_dir("good.ini"), &newer.base, NULL), SINEW_OK);
    sinew_logger silent = { NULL, NULL };
    bad = options;
    bad.logger = &silent;
    assert_int_equal(import_path(in_dir("nothing.ini"), &bad, NULL), SINEW_ERROR_FILE_NOT_FOUND);
    assert_int_equal(g_log.total, 0);
    /* NULL options: defaults, errors on stderr. */
    assert_int_equal(import_path(in_dir("good.ini"), NULL, NULL), SINEW_OK);
}

static void test_sample_arguments(void** state)
{
    (void)state;
    float times[2] = { 0.0f, 1.0f };
    float rotations[8] = { 0, 0, 0, 1, 0, 0, 1, 0 };
    float translations[6] = { 0, 0, 0, 2, 0, 0 };
    float scales[6] = { 1, 1, 1, 3, 3, 3 };
    sinew_animation a = { NULL, 1, 2, times, rotations, translations, scales, 1.0f };
    float out[16];
    assert_int_equal(sinew_animation_sample(NULL, 0.0f, 0, out), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sinew_animation_sample(&a, 0.0f, 0, NULL), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sinew_animation_sample(&a, NAN, 0, out), SINEW_ERROR_NONFINITE);
    assert_int_equal(sinew_animation_sample(&a, INFINITY, 1, out), SINEW_ERROR_NONFINITE);
    sinew_animation empty = a;
    empty.key_count = 0;
    assert_int_equal(sinew_animation_sample(&empty, 0.0f, 0, out), SINEW_ERROR_INVALID_ARGUMENT);
    sinew_animation no_rotations = a;
    no_rotations.rotations = NULL;
    assert_int_equal(sinew_animation_sample(&no_rotations, 0.0f, 0, out),
                     SINEW_ERROR_INVALID_ARGUMENT);

    /* Half way from identity to a half turn about z: a quarter turn, translation (1,0,0),
     * scale 2, composed as T * R * S. */
    assert_int_equal(sinew_animation_sample(&a, 0.5f, 0, out), SINEW_OK);
    const float expected[16] = { 0, 2, 0, 0, -2, 0, 0, 0, 0, 0, 2, 0, 1, 0, 0, 1 };
    for (int i = 0; i < 16; ++i) assert_true(fabsf(out[i] - expected[i]) < 1e-5f);
    /* Shortest arc: the key -q is the same rotation as q, so nothing turns between them. */
    float flipped[8] = { 0, 0, 0.38268343f, 0.92387953f, 0, 0, -0.38268343f, -0.92387953f };
    a.rotations = flipped;
    assert_int_equal(sinew_animation_sample(&a, 0.5f, 0, out), SINEW_OK);
    float c45 = 0.70710678f;
    assert_true(fabsf(out[0] - 2.0f * c45) < 1e-5f && fabsf(out[1] - 2.0f * c45) < 1e-5f);
    /* Looping negative time wraps: -0.25 is 0.75. */
    float wrapped[16], direct[16];
    a.rotations = rotations;
    assert_int_equal(sinew_animation_sample(&a, -0.25f, 1, wrapped), SINEW_OK);
    assert_int_equal(sinew_animation_sample(&a, 0.75f, 0, direct), SINEW_OK);
    for (int i = 0; i < 16; ++i) assert_true(fabsf(wrapped[i] - direct[i]) < 1e-5f);
}

static int make_temp_dir(void** state)
{
    (void)state;
    const char* tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/sinew_import_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int remove_temp_dir(void** state)
{
    (void)state;
    char command[600];
    /* The folder is this test's own, made by mkdtemp above. */
    snprintf(command, sizeof command, "rm -rf '%s'", g_dir);
    return system(command) == 0 ? 0 : -1;
}

int main(void)
{
    sinew_test_log_init(&g_log);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_character),
        cmocka_unit_test(test_polygons_become_fans),
        cmocka_unit_test(test_missing_files),
        cmocka_unit_test(test_bad_ini),
        cmocka_unit_test(test_bad_off),
        cmocka_unit_test(test_bad_skel),
        cmocka_unit_test(test_bad_anim),
        cmocka_unit_test(test_truncation_and_mutation),
        cmocka_unit_test(test_other_formats),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_sample_arguments),
    };
    return cmocka_run_group_tests(tests, make_temp_dir, remove_temp_dir);
}
