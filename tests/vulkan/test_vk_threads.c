/* Vulkan skins updated from the world's worker threads at once: 8 skins (vk-lbs and vk-dqs) on
 * 4 threads for 200 frames of the cylinder's animation, under the validation layers, whose
 * thread-safety checks report any two threads using the queue (or another externally
 * synchronised object) at once. Any validation message fails; every skin still matches its
 * CPU twin at the end. SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "vk_test.h"

#define SKINS 8
#define FRAMES 200

static void test_eight_skins_four_threads(void** state)
{
    (void)state;
    vk_scene s;
    vk_scene_open(&s, "cylinder", 4);
    sinew_skin gpu[SKINS];
    for (int i = 0; i < SKINS; ++i) gpu[i] = vk_scene_add_skin(&s, i % 2 ? "vk-dqs" : "vk-lbs");
    sinew_skin cpu[2] = {vk_scene_add_skin(&s, "lbs"), vk_scene_add_skin(&s, "dqs")};
    for (int f = 0; f < FRAMES; ++f) {
        vk_scene_sample(&s, (float)(f % 60) / 60.0f);
        for (int i = 0; i < SKINS; ++i) vk_scene_pose(&s, gpu[i]);
        for (int i = 0; i < 2; ++i) vk_scene_pose(&s, cpu[i]);
        assert_int_equal(sinew_world_update(s.world, 1.0f / 60.0f), SINEW_OK);
    }
    size_t n3 = (size_t)s.vertices * 3;
    float* pc = malloc(n3 * sizeof(float));
    float* pg = malloc(n3 * sizeof(float));
    assert_true(pc && pg);
    for (int i = 0; i < SKINS; ++i) {
        vk_scene_read(&s, cpu[i % 2], pc, NULL);
        vk_scene_read(&s, gpu[i], pg, NULL);
        assert_true(vk_max_diff(pc, pg, n3) <= 1e-5f * s.diagonal);
    }
    free(pc);
    free(pg);
    print_message("%u validation messages\n", (unsigned)vk_test_validation_messages(s.ctx));
    vk_scene_close(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eight_skins_four_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
