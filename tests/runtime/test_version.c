/* sinew_version(): the library's version equals the headers' macros and the CMake project's.
 * SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include "test_support.h"

static void test_matches_header(void** state)
{
    (void)state;
    uint32_t v = sinew_version();
    assert_int_equal(v, SINEW_VERSION);
    assert_int_equal(SINEW_VERSION_GET_MAJOR(v), SINEW_VERSION_MAJOR);
    assert_int_equal(SINEW_VERSION_GET_MINOR(v), SINEW_VERSION_MINOR);
    assert_int_equal(SINEW_VERSION_GET_PATCH(v), SINEW_VERSION_PATCH);
}

static void test_string_matches_project(void** state)
{
    (void)state;
    char expected[32];
    snprintf(expected, sizeof expected, "%u.%u.%u", (unsigned)SINEW_VERSION_MAJOR,
             (unsigned)SINEW_VERSION_MINOR, (unsigned)SINEW_VERSION_PATCH);
    assert_string_equal(sinew_version_string(), expected);
    assert_string_equal(sinew_version_string(), SINEW_TEST_PROJECT_VERSION);
}

/* Packed versions order like their parts. */
static void test_packing_orders(void** state)
{
    (void)state;
    assert_true(SINEW_MAKE_VERSION(0, 1, 4095) < SINEW_MAKE_VERSION(0, 2, 0));
    assert_true(SINEW_MAKE_VERSION(0, 1023, 0) < SINEW_MAKE_VERSION(1, 0, 0));
    assert_int_equal(SINEW_VERSION_GET_MINOR(SINEW_MAKE_VERSION(3, 1023, 7)), 1023);
    assert_int_equal(SINEW_VERSION_GET_PATCH(SINEW_MAKE_VERSION(3, 1023, 7)), 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_header),
        cmocka_unit_test(test_string_matches_project),
        cmocka_unit_test(test_packing_orders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
