/* Which files an .ini may name: names resolve against the .ini's folder (subfolders too);
 * absolute names and names with `..` are refused with SINEW_ERROR_FILE_PATH unless the caller
 * sets SINEW_IMPORT_ALLOW_ANY_PATH; only regular files are read, so a FIFO or a device is
 * refused at once (FILE_READ) instead of blocking or filling memory; and no error line quotes
 * what a file holds. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_support.h"

#include <sinew/sinew_import.h>

/* A refused FIFO must not block: the test dies (and fails) if an import hangs this long. */
#define HANG_SECONDS 30u

static sinew_test_log g_log;
static char g_dir[256];
static char g_path[512];

static const char k_secret[] = "SECRET-CONTENT-0123456789";

static const char* in_dir(const char* name)
{
    snprintf(g_path, sizeof g_path, "%s/%s", g_dir, name);
    return g_path;
}

static void write_file(const char* name, const char* text)
{
    FILE* f = fopen(in_dir(name), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

static void write_character(const char* folder)
{
    char name[256];
    snprintf(name, sizeof name, "%s/c.off", folder);
    write_file(name, "OFF\n4 4 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 3\n");
    snprintf(name, sizeof name, "%s/c.skel", folder);
    write_file(name, "2\n0 0 0 a root\n0 1 0 b a\n");
    snprintf(name, sizeof name, "%s/c0.anim", folder);
    write_file(name, "1 2\n0\n1 0 0\n1 0 0\n0 0\n");
}

static sinew_result import_with(const char* name, uint32_t flags)
{
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.logger = &g_log.logger;
    options.flags = flags;
    sinew_test_log_reset(&g_log);
    sinew_character* c = NULL;
    alarm(HANG_SECONDS);
    sinew_result r = sinew_import_character(in_dir(name), &options, &c);
    alarm(0);
    sinew_import_free(c);
    return r;
}

/* The import fails with `code` and exactly one error line, which quotes no file content. */
static void expect_refused(const char* name, uint32_t flags, sinew_result code)
{
    sinew_result r = import_with(name, flags);
    print_message("  %s -> %s: %s\n", name, sinew_result_string(r), g_log.last);
    if (r != code)
        fail_msg("%s: %s, expected %s", name, sinew_result_string(r), sinew_result_string(code));
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(g_log.total, 1);
    assert_null(strstr(g_log.last, "SECRET"));
}

static void expect_ok(const char* name, uint32_t flags)
{
    sinew_result r = import_with(name, flags);
    if (r != SINEW_OK) fail_msg("%s: %s (%s)", name, sinew_result_string(r), g_log.last);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 0);
}

static void test_names_stay_in_the_folder(void** state)
{
    (void)state;
    char line[1024];
    mkdir(in_dir("parts"), 0700);
    mkdir(in_dir("sub"), 0700);
    write_character(".");
    write_character("parts");
    /* Subfolders of the .ini's folder are fine. */
    write_file("sub.ini", "SIMMESH parts/c.off\nSKELETON ./parts/c.skel\n"
                          "ANIMATION parts/c0.anim parts/c\n");
    expect_ok("sub.ini", 0);
    /* `..` anywhere in a name, or an absolute name, is refused... */
    write_file("sub/up.ini", "SIMMESH ../c.off\nSKELETON ../c.skel\n");
    expect_refused("sub/up.ini", 0, SINEW_ERROR_FILE_PATH);
    write_file("inner.ini", "SIMMESH parts/../c.off\nSKELETON c.skel\n");
    expect_refused("inner.ini", 0, SINEW_ERROR_FILE_PATH);
    write_file("anim.ini", "SIMMESH c.off\nSKELETON c.skel\nANIMATION c0.anim ../x/c\n");
    expect_refused("anim.ini", 0, SINEW_ERROR_FILE_PATH);
    write_file("zero.ini", "SIMMESH /dev/zero\nSKELETON c.skel\n");
    expect_refused("zero.ini", 0, SINEW_ERROR_FILE_PATH);
    snprintf(line, sizeof line, "SIMMESH c.off\nSKELETON %s\n", in_dir("c.skel"));
    write_file("abs.ini", line);
    expect_refused("abs.ini", 0, SINEW_ERROR_FILE_PATH);
    /* ...unless the caller opts in. */
    expect_ok("sub/up.ini", SINEW_IMPORT_ALLOW_ANY_PATH);
    expect_ok("abs.ini", SINEW_IMPORT_ALLOW_ANY_PATH);
    /* Even then only regular files are read: /dev/zero is refused before any allocation. */
    expect_refused("zero.ini", SINEW_IMPORT_ALLOW_ANY_PATH, SINEW_ERROR_FILE_READ);
}

static void test_only_regular_files(void** state)
{
    (void)state;
    write_character(".");
    /* A FIFO nobody writes to: opening it for reading would wait for a writer forever. */
    assert_int_equal(mkfifo(in_dir("pipe.off"), 0600), 0);
    write_file("pipe.ini", "SIMMESH pipe.off\nSKELETON c.skel\n");
    expect_refused("pipe.ini", 0, SINEW_ERROR_FILE_READ);
    assert_int_equal(mkfifo(in_dir("fifo.ini"), 0600), 0);
    expect_refused("fifo.ini", 0, SINEW_ERROR_FILE_READ);
    /* A link inside the folder to a device is followed, and the device refused. */
    assert_int_equal(symlink("/dev/zero", in_dir("zero.off")), 0);
    write_file("link.ini", "SIMMESH zero.off\nSKELETON c.skel\n");
    expect_refused("link.ini", 0, SINEW_ERROR_FILE_READ);
}

static void test_contents_never_logged(void** state)
{
    (void)state;
    char line[1024];
    write_character(".");
    write_file("secret.txt", k_secret);
    write_file("skel.ini", "SIMMESH c.off\nSKELETON secret.txt\n");
    expect_refused("skel.ini", 0, SINEW_ERROR_FILE_FORMAT);
    write_file("mesh.ini", "SIMMESH secret.txt\nSKELETON c.skel\n");
    expect_refused("mesh.ini", 0, SINEW_ERROR_FILE_FORMAT);
    write_file("anim.ini", "SIMMESH c.off\nSKELETON c.skel\nANIMATION secret.txt\n");
    expect_refused("anim.ini", 0, SINEW_ERROR_FILE_FORMAT);
    snprintf(line, sizeof line, "SIMMESH c.off\nSKELETON %s\n", in_dir("secret.txt"));
    write_file("abs.ini", line);
    expect_refused("abs.ini", SINEW_IMPORT_ALLOW_ANY_PATH, SINEW_ERROR_FILE_FORMAT);
    /* Nor do names inside a skeleton appear: the line says where, not what. */
    write_file("s.skel", "2\n0 0 0 SECRET-A root\n0 1 0 SECRET-B SECRET-C\n");
    write_file("names.ini", "SIMMESH c.off\nSKELETON s.skel\n");
    expect_refused("names.ini", 0, SINEW_ERROR_SKELETON);
    assert_non_null(strstr(g_log.last, "s.skel:3"));
    write_file("key.ini", "SIMMESH c.off\nSKELETON c.skel\nSECRET-KEY 1\n");
    expect_ok("key.ini", 0);
    assert_int_equal(g_log.count[SINEW_LOG_WARNING], 1);
    assert_null(strstr(g_log.last, "SECRET"));
}

static void test_options(void** state)
{
    (void)state;
    write_character(".");
    write_file("ok.ini", "SIMMESH c.off\nSKELETON c.skel\n");
    /* An unknown flag is refused. */
    expect_refused("ok.ini", 0x80u, SINEW_ERROR_INVALID_ARGUMENT);
    /* Options of the first published size (without flags) mean no flag. */
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.logger = &g_log.logger;
    options.flags = 0xFFu; /* beyond struct_size: never read */
    options.struct_size = (uint32_t)offsetof(sinew_import_options, flags);
    sinew_character* c = NULL;
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_import_character(in_dir("ok.ini"), &options, &c), SINEW_OK);
    sinew_import_free(c);
    write_file("abs.ini", "SIMMESH /dev/null\nSKELETON c.skel\n");
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_import_character(in_dir("abs.ini"), &options, &c),
                     SINEW_ERROR_FILE_PATH);
}

/* The test characters name files in their own folder and keep importing. */
static void test_real_characters(void** state)
{
    (void)state;
    const char* names[] = { "cylinder", "tbone", "male" };
    for (int i = 0; i < 3; ++i) {
        char relative[128];
        snprintf(relative, sizeof relative, "characters/%s/%s.ini", names[i], names[i]);
        const char* path = sinew_test_data_path(relative);
        sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
        options.logger = &g_log.logger;
        sinew_character* c = NULL;
        sinew_test_log_reset(&g_log);
        sinew_result r = sinew_import_character(path, &options, &c);
        if (r != SINEW_OK) fail_msg("%s: %s (%s)", path, sinew_result_string(r), g_log.last);
        assert_true(c->animation_count > 0);
        sinew_import_free(c);
    }
}

/* Each test gets a fresh folder. */
static int make_temp_dir(void** state)
{
    (void)state;
    const char* tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/sinew_paths_XXXXXX", tmp && *tmp ? tmp : "/tmp");
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
        cmocka_unit_test_setup_teardown(test_names_stay_in_the_folder, make_temp_dir,
                                        remove_temp_dir),
        cmocka_unit_test_setup_teardown(test_only_regular_files, make_temp_dir,
                                        remove_temp_dir),
        cmocka_unit_test_setup_teardown(test_contents_never_logged, make_temp_dir,
                                        remove_temp_dir),
        cmocka_unit_test_setup_teardown(test_options, make_temp_dir, remove_temp_dir),
        cmocka_unit_test(test_real_characters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
