/* Handles: a stale handle never addresses a new object, also after more add/remove cycles
 * on one slot than its 16-bit generation can count. SPDX-License-Identifier: MIT */
#include <string.h>

#include "test_rigs.h"
#include "test_support.h"

/* One generation per cycle: 65535 of them fit in the 16 bits, the next one would wrap. */
#define CYCLES 70000u

static sinew_test_log g_log;

static void test_skin_generation_never_wraps(void** state)
{
    (void)state;
    sinew_test_log_init(&g_log);
    sinew_world* world = sinew_test_world(&g_log, 1);
    test_bar bar;
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, test_bar_make(&bar, 3), &rig), SINEW_OK);
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = rig;
    sinew_skin first, skin;
    assert_int_equal(sinew_world_add_skin(world, &desc, &first), SINEW_OK);
    assert_int_equal(sinew_world_remove_skin(world, first), SINEW_OK);
    for (uint32_t i = 0; i < CYCLES; ++i) {
        assert_int_equal(sinew_world_add_skin(world, &desc, &skin), SINEW_OK);
        if (skin.id == first.id) fail_msg("cycle %u gave the first skin's handle again", i);
        assert_int_equal(sinew_world_remove_skin(world, skin), SINEW_OK);
    }
    /* A live skin is not reachable through the stale handle, and survives its use. */
    assert_int_equal(sinew_world_add_skin(world, &desc, &skin), SINEW_OK);
    sinew_test_log_reset(&g_log);
    assert_int_equal(sinew_world_remove_skin(world, first), SINEW_ERROR_INVALID_HANDLE);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    assert_non_null(sinew_skin_backend(world, skin));
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    assert_int_equal(sinew_world_remove_skin(world, skin), SINEW_OK);
    sinew_world_destroy(world);
}

static void test_rig_generation_never_wraps(void** state)
{
    (void)state;
    sinew_test_log_init(&g_log);
    sinew_world* world = sinew_test_world(&g_log, 1);
    test_bar bar;
    const sinew_rig_desc* desc = test_bar_make(&bar, 3);
    sinew_rig first, rig;
    assert_int_equal(sinew_rig_create(world, desc, &first), SINEW_OK);
    assert_int_equal(sinew_rig_destroy(world, first), SINEW_OK);
    for (uint32_t i = 0; i < CYCLES; ++i) {
        assert_int_equal(sinew_rig_create(world, desc, &rig), SINEW_OK);
        if (rig.id == first.id) fail_msg("cycle %u gave the first rig's handle again", i);
        assert_int_equal(sinew_rig_destroy(world, rig), SINEW_OK);
    }
    assert_int_equal(sinew_rig_create(world, desc, &rig), SINEW_OK);
    sinew_test_log_reset(&g_log);
    sinew_rig_info info = SINEW_RIG_INFO_INIT;
    assert_int_equal(sinew_rig_get_info(world, first, &info), SINEW_ERROR_INVALID_HANDLE);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 1);
    assert_int_equal(sinew_rig_get_info(world, rig, &info), SINEW_OK);
    sinew_world_destroy(world);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skin_generation_never_wraps),
        cmocka_unit_test(test_rig_generation_never_wraps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
