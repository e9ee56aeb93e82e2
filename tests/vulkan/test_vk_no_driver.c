/* Without a Vulkan driver (ctest points VK_DRIVER_FILES and VK_ICD_FILENAMES at nothing):
 * creating a context answers SINEW_ERROR_NO_DEVICE with one log line, never a crash, with and
 * without validation; the output and backend entry points refuse a NULL context.
 * SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "vk_test.h"

static void test_no_driver(void** state)
{
    (void)state;
    const char* files = getenv("VK_DRIVER_FILES");
    assert_non_null(files); /* set by ctest: this test means nothing without it */
    sinew_test_log log;
    sinew_test_log_init(&log);
    for (int validation = 0; validation < 2; ++validation) {
        sinew_vk_context_desc desc = SINEW_VK_CONTEXT_DESC_INIT;
        desc.logger = &log.logger;
        desc.flags = validation ? SINEW_VK_CONTEXT_VALIDATION : 0u;
        sinew_vk_context* ctx = (sinew_vk_context*)&desc;
        sinew_test_log_reset(&log);
        sinew_result r = sinew_vk_context_create(&desc, &ctx);
        print_message("validation=%d: %s (%s)\n", validation, sinew_result_string(r), log.last);
        /* Without the layer installed the validated one says UNSUPPORTED first. */
        if (validation && r == SINEW_ERROR_UNSUPPORTED) continue;
        assert_int_equal(r, SINEW_ERROR_NO_DEVICE);
        assert_null(ctx);
        /* One line from sinew; with validation the loader's own complaints come through the
         * debug messenger before it. */
        if (validation)
            assert_true(log.count[SINEW_LOG_ERROR] >= 1);
        else
            assert_int_equal(log.count[SINEW_LOG_ERROR], 1);
        assert_non_null(strstr(log.last, "vkCreateInstance"));
    }
    sinew_vk_output_desc od = SINEW_VK_OUTPUT_DESC_INIT;
    od.vertex_capacity = 10;
    sinew_vk_output* out = NULL;
    assert_int_equal(sinew_vk_output_create(NULL, &od, &out), SINEW_ERROR_INVALID_ARGUMENT);
    sinew_world* world = sinew_test_world(&log, 1);
    assert_int_equal(sinew_vk_register_backends(world, NULL), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sinew_world_probe_backend(world, "vk-lbs"), SINEW_ERROR_UNKNOWN_BACKEND);
    sinew_world_destroy(world);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_driver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
