/* The update rate of the fps backend: dt as whole steps of its timestep through the runtime
 * (the checks shared with ps: tests/ps/rate_world.c). SPDX-License-Identifier: MIT */
#include "rate_world.h"

#include "builtin_backends.h"

/* The same motion at 30, 60 and 144 Hz agrees within 5e-3 of the cylinder's diagonal during
 * the motion: the blend's error is ps's (test_ps_rates: 3.5e-4 at 30 Hz), but fps's joint
 * contacts (joint_collisions) clamp the anchors near the fold by a side test, and the blended
 * pose of the step before the ramp's end clamps a few other anchors than the exact pose does:
 * a transient of 2.9e-3 at 0.5 s, back to 4.5e-4 two steps later (1e-3 everywhere without the
 * joint contacts). One step per update at 30 Hz differs by 0.1. */
static void test_rates(void** state)
{
    (void)state;
    rate_check_rates("fps", 5e-3, 1e-6);
}

static void test_interpolated_output(void** state)
{
    (void)state;
    rate_check_interpolated_output("fps");
}

static void test_rebound_output(void** state)
{
    (void)state;
    rate_check_rebound_output("fps");
}

static void test_dropped(void** state)
{
    (void)state;
    rate_check_dropped("fps");
}

static void test_small_dt(void** state)
{
    (void)state;
    rate_check_small_dt("fps", &sinew_backend_fps);
}

static void test_jump(void** state)
{
    (void)state;
    rate_check_jump("fps");
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
