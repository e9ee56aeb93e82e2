/* Decimal numbers read alike in every locale (backends/common/sinew_number.h): the grammar,
 * round trips against strtod in the C locale, and, under a locale whose decimal point is a
 * comma (de_DE, compiled into the build folder by the test's fixture), the parser, the
 * text-format importer and a backend's parameters still reading "0.5" as one half.
 * SPDX-License-Identifier: MIT */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_import.h>

#include "sinew_number.h"
#include "test_support.h"

static void test_grammar(void** state)
{
    (void)state;
    static const struct { const char* text; double value; } good[] = {
        {"0", 0.0},       {"-0.5", -0.5},   {"+3", 3.0},      {".25", 0.25},
        {"7.", 7.0},      {"1e3", 1000.0},  {"2.5E-2", 0.025}, {"-1e+2", -100.0},
        {"0.95", 0.95},   {"1000000", 1e6},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
        double v = -1.0;
        assert_true(sinew_number_parse(good[i].text, &v));
        assert_true(v == good[i].value);
    }
    static const char* const bad[] = {"", " 1", "1 ", "0x10", "inf", "nan", "-inf", "1e", "e5",
                                      ".", "+", "-", "1.2.3", "1,5", "1e400", "1e-400", "1e+",
                                      "--1", "1f", "0.5 "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        double v = 42.0;
        assert_false(sinew_number_parse(bad[i], &v));
        assert_true(v == 42.0);
    }
    double v = 0.0;
    assert_false(sinew_number_parse(NULL, &v));
    assert_false(sinew_number_parse("1", NULL));
}

/* Every double printed with 17 significant digits reads back to the same bits, as strtod
 * reads it in the C locale. */
static void test_round_trip(void** state)
{
    (void)state;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 20000; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double d;
        uint64_t bits = x & ~(0x7FFull << 52); /* finite: an exponent below the top */
        bits |= (uint64_t)((x >> 52) % 2046u) << 52;
        memcpy(&d, &bits, sizeof d);
        if (fpclassify(d) == FP_SUBNORMAL) continue; /* strtod reports ERANGE for those */
        char text[64];
        snprintf(text, sizeof text, i % 2 ? "%.17g" : "%.17e", d);
        double back = 0.0;
        assert_true(sinew_number_parse(text, &back));
        assert_memory_equal(&back, &d, sizeof d);
    }
}

/* A locale whose decimal point is a comma, or NULL (the test is then skipped). */
static const char* comma_locale(void)
{
    static const char* const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "de_DE"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (setlocale(LC_ALL, names[i]) && strcmp(localeconv()->decimal_point, ",") == 0)
            return names[i];
    setlocale(LC_ALL, "C");
    return NULL;
}

static void test_comma_locale(void** state)
{
    (void)state;
    const char* name = comma_locale();
    if (!name) {
        print_message("no locale with a decimal comma is installed (the fixture compiles "
                      "de_DE with localedef from Debian's locales package); skipped\n");
        skip();
    }
    /* the locale is active: strtod alone stops at the '.' */
    char* end = NULL;
    assert_true(strtod("0.5", &end) == 0.0 && *end == '.');
    double v = 0.0;
    assert_true(sinew_number_parse("0.5", &v) && v == 0.5);
    assert_true(sinew_number_parse("-2.5e-1", &v) && v == -0.25);
    assert_false(sinew_number_parse("0,5", &v));

    /* the text-format importer reads the cylinder's coordinates */
    sinew_character* ch = NULL;
    assert_int_equal(sinew_import_character(
                         sinew_test_data_path("characters/cylinder/cylinder.ini"), NULL, &ch),
                     SINEW_OK);

    /* and a backend its decimal parameters */
    sinew_test_log log;
    sinew_world* world = sinew_test_world(&log, 1);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, &ch->rig, &rig), SINEW_OK);
    const sinew_param params[] = {{"damping", "0.5"}, {"mass", "0.0005"}};
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = rig;
    desc.backend = "pbd";
    desc.params = params;
    desc.param_count = 2;
    sinew_skin skin;
    assert_int_equal(sinew_world_add_skin(world, &desc, &skin), SINEW_OK);
    sinew_world_destroy(world);
    sinew_import_free(ch);
    setlocale(LC_ALL, "C");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grammar),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_comma_locale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
