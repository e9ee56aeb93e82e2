/* GPU test: 64 copies of male in one batch (one launch sequence for all) step 30 frames of an
 * animation, stay finite, and give the same bits as an unbatched fps-cuda skin (a batch
 * changes nothing in the arithmetic: each member's sums keep their order). A copy read in the
 * middle of an incomplete round (one skin stepped alone) still gets its own step.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "fps_cuda_test_world.h"

enum { COPIES = 64, FRAMES = 30 };

int main(void)
{
    sinew_character* c = fpsc_test_character("male");
    cuda_test_log log = {0};
    sinew_logger logger;
    sinew_world* world = fpsc_test_world(&log, SINEW_LOG_WARNING, &logger);
    CHECK(sinew_world_load_plugin(world, FPSC_PLUGIN_PATH) == SINEW_OK);
    if (sinew_world_probe_backend(world, "fps-cuda") != SINEW_OK) cuda_test_skip("no CUDA device");
    sinew_rig rig = fpsc_test_baked_rig(world, c, NULL, 0);
    sinew_skin skins[COPIES + 1];
    sinew_param batched[1] = {{"batch", "crowd"}};
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = rig;
    desc.backend = "fps-cuda";
    CHECK(sinew_world_add_skin(world, &desc, &skins[0]) == SINEW_OK); /* alone */
    desc.params = batched;
    desc.param_count = 1;
    for (int i = 1; i <= COPIES; ++i) CHECK(sinew_world_add_skin(world, &desc, &skins[i]) == SINEW_OK);
    uint32_t n = c->rig.render_mesh.vertex_count;
    float* ref = malloc((size_t)n * 12u);
    float* got = malloc((size_t)n * 12u);
    float* local = malloc((size_t)c->rig.skeleton.joint_count * 64u);
    CHECK(ref && got && local);
    double diag = fpsc_test_diagonal(c->rig.render_mesh.positions, n);
    sinew_output_desc out = SINEW_OUTPUT_DESC_INIT;
    out.vertex_capacity = n;
    double worst = 0.0;
    for (int f = 0; f < FRAMES; ++f) {
        fpsc_test_pose(world, skins, COPIES + 1, c, (float)f / 30.0f, local);
        CHECK(sinew_world_update(world, 1.0f / 60.0f) == SINEW_OK);
        out.positions = ref;
        CHECK(sinew_skin_read_output(world, skins[0], &out) == SINEW_OK);
        for (int i = 1; i <= COPIES; ++i) {
            out.positions = got;
            CHECK(sinew_skin_read_output(world, skins[i], &out) == SINEW_OK);
            for (size_t k = 0; k < 3u * (size_t)n; ++k) {
                CHECK(isfinite(got[k]));
                worst = fmax(worst, fabs((double)got[k] - (double)ref[k]) / diag);
            }
        }
    }
    printf("64 batched copies of male vs one alone: worst %.3g of the diagonal\n", worst);
    CHECK(worst == 0.0);
    /* One member stepped alone: the round is incomplete, the read flushes it. */
    CHECK(sinew_skin_update(world, skins[5], 1.0f / 60.0f) == SINEW_OK);
    out.positions = got;
    CHECK(sinew_skin_read_output(world, skins[5], &out) == SINEW_OK);
    out.positions = ref;
    CHECK(sinew_skin_read_output(world, skins[6], &out) == SINEW_OK);
    double moved = 0.0;
    for (size_t k = 0; k < 3u * (size_t)n; ++k) moved = fmax(moved, fabs((double)got[k] - ref[k]));
    printf("a member stepped once more than its neighbour differs by %.3g\n", moved / diag);
    CHECK(moved > 0.0);
    free(ref);
    free(got);
    free(local);
    sinew_world_destroy(world);
    sinew_import_free(c);
    printf("ok\n");
    return 0;
}
