/* The update rate of the pbd backend: dt as whole steps of its timestep through the runtime
 * (the checks shared with ps and fps: tests/ps/rate_world.c). SPDX-License-Identifier: MIT */
#include "rate_world.h"

#include "builtin_backends.h"

/* The same motion at 30, 60 and 144 Hz: the intermediate poses of an update are linear blends
 * of the skinning matrices (ps_update.c), whose error the motion's tolerance covers as for fps
 * (measured 2.0e-3 at 30 Hz). pbd's particles are single precision, so the settled shapes
 * agree to float rounding (measured 2.2e-6 of the diagonal; ps and fps are held to 1e-6). */
static void test_rates(void** state)
{
    (void)state;
    rate_check_rates("pbd", 5e-3, 1e-5);
}

static void test_interpolated_output(void** state)
{
    (void)state;
    rate_check_interpolated_output("pbd");
}

static void test_rebound_output(void** state)
{
    (void)state;
    rate_check_rebound_output("pbd");
}

static void test_dropped(void** state)
{
    (void)state;
    rate_check_dropped("pbd");
}

static void test_small_dt(void** state)
{
    (void)state;
    rate_check_small_dt("pbd", &sinew_backend_pbd);
}

static void test_jump(void** state)
{
    (void)state;
    rate_check_jump("pbd");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rates),
        cmocka_unit_test(test_interpolated_output),
        cmocka_unit_test(test_rebound_output),
        cmocka_unit_test(test_dropped),
        cmocka_unit_test(test_small_dt),
        cmocka_unit_test(test_jump),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
