/* Pose discontinuities in fps through the runtime: the parameters jump_angle and jump_distance
 * (checked like the others), and the checks shared with ps (tests/ps/jump_world.c): the male's
 * loop jump, a flagged pose on the cylinder and the log lines. SPDX-License-Identifier: MIT */
#include <string.h>

#include "jump_world.h"
#include "sample_character.h"

static void test_parameters(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    sample_character ch;
    assert_int_equal(sample_character_load(path, NULL, &ch), SINEW_OK);
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_world* world = sinew_test_world(&log, 1);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, &ch.rig, &rig), SINEW_OK);
    const sinew_param bad[][1] = {{{"jump_angle", "-5"}}, {{"jump_angle", "200"}},
                                  {{"jump_angle", "inf"}}, {{"jump_distance", "-1"}},
                                  {{"jump_distance", "x"}}, {{"jump_distance", "2e6"}}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
        sd.rig = rig;
        sd.backend = "fps";
        sd.params = bad[i];
        sd.param_count = 1;
        sinew_skin skin;
        sinew_test_log_reset(&log);
        assert_int_equal(sinew_world_add_skin(world, &sd, &skin), SINEW_ERROR_PARAMETER);
        if (log.count[SINEW_LOG_ERROR] != 1 || !strstr(log.last, bad[i][0].key))
            fail_msg("%s=%s: %d error lines, last \"%s\"", bad[i][0].key, bad[i][0].value,
                     log.count[SINEW_LOG_ERROR], log.last);
    }
    const sinew_param good[] = {{"jump_angle", "90"}, {"jump_distance", "0"}};
    sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
    sd.rig = rig;
    sd.backend = "fps";
    sd.params = good;
    sd.param_count = 2;
    sinew_skin skin;
    assert_int_equal(sinew_world_add_skin(world, &sd, &skin), SINEW_OK);
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    sinew_world_destroy(world);
    sample_character_free(&ch);
}

static void test_male_loop(void** state)
{
    (void)state;
    jump_check_male_loop("fps");
}

static void test_flag(void** state)
{
    (void)state;
    jump_check_flag("fps");
}

static void test_log(void** state)
{
    (void)state;
    jump_check_log("fps");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parameters),
        cmocka_unit_test(test_male_loop),
        cmocka_unit_test(test_flag),
        cmocka_unit_test(test_log),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
