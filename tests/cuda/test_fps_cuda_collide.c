/* GPU test: fps-cuda with global collisions (collisions=1; fast projective skinning 2019,
 * Sec. 6: detection on the host, projections, Q_col^T p_col and A + A_col on the device)
 * against fps (solver=pcg, collisions=1) on the male at the arm-into-torso pose of
 * test_fps_collide_world (l_shoulder, 40 degrees about (-0.5, 1, -0.3), ramped over 30 steps,
 * then 30 more steps held), with fps's limb capsules (their contacts' targets on the device)
 * and without: for each launch kind (graph, stream, cooperative where the device has it) and
 * two copies stepped in one batch, every frame's render positions are fps's bits
 * (FPSC_COLLIDE_POSITIONS of the bounding-box diagonal), and so the render mesh's intersecting
 * triangle pairs are fps's count. A swap to fps and back carries the shape (get_state /
 * set_state drop the contacts on both sides). Skips without a GPU or the test data.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "fps_cuda_test_arm.h"
#include "fps_cuda_test_world.h"
#include "sample_metrics.h"

enum { FRAMES = SAMPLE_RAMP_STEPS + 30, MAX_SKINS = 6 };

/* The device's steps give fps's bits (fps_block_sum.h, fps_col_atan2), so both sides detect
 * at the same positions and find the same pairs. */
#define FPSC_COLLIDE_POSITIONS 0.0

/* The comparison with fps's limb capsules on (capsules "1") or off ("0"). */
static void run(const char* path, const char* capsules)
{
    cuda_test_log log = {0};
    sinew_logger logger;
    sinew_world* world = fpsc_test_world(&log, SINEW_LOG_WARNING, &logger);
    CHECK(sinew_world_load_plugin(world, FPSC_PLUGIN_PATH) == SINEW_OK);
    if (sinew_world_probe_backend(world, "fps-cuda") != SINEW_OK) cuda_test_skip("no CUDA device");
    sample_character ch;
    CHECK(sample_character_load(path, NULL, &ch) == SINEW_OK);
    sinew_rig rig = {0};
    CHECK(sinew_rig_create(world, &ch.rig, &rig) == SINEW_OK);

    const char* names[MAX_SKINS];
    sinew_skin skins[MAX_SKINS];
    uint32_t count = 0;
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = rig;
    /* collisions=1: the prism pairs and (capsules=1) fps's limb capsules, on both sides */
    const sinew_param fps_params[5] = {{"solver", "pcg"}, {"collisions", "1"},
                                       {"capsules", capsules}, {"joint_volume", "0"},
                                       {"inelastic_contacts", "0"}};
    desc.backend = "fps";
    desc.params = fps_params;
    desc.param_count = 5;
    CHECK(sinew_world_add_skin(world, &desc, &skins[count]) == SINEW_OK);
    names[count++] = "fps";
    static const char* const launches[3] = {"graph", "stream", "cooperative"};
    desc.backend = "fps-cuda";
    for (int k = 0; k < 3; ++k) {
        sinew_param p[3] = {{"collisions", "1"}, {"capsules", capsules}, {"launch", launches[k]}};
        desc.params = p;
        desc.param_count = 3;
        sinew_result r = sinew_world_add_skin(world, &desc, &skins[count]);
        if (r == SINEW_ERROR_UNSUPPORTED && k == 2) {
            printf("no cooperative launch on this device\n");
            continue;
        }
        CHECK(r == SINEW_OK);
        names[count++] = launches[k];
    }
    /* two copies in one batch: each its own pairs, one launch sequence */
    const sinew_param batched[3] = {{"collisions", "1"}, {"capsules", capsules},
                                    {"batch", "colliding"}};
    desc.params = batched;
    desc.param_count = 3;
    for (int k = 0; k < 2; ++k) {
        CHECK(sinew_world_add_skin(world, &desc, &skins[count]) == SINEW_OK);
        names[count++] = "batched";
    }

    const uint32_t n = ch.rig.render_mesh.vertex_count, joints = ch.rig.skeleton.joint_count;
    float* model = malloc((size_t)joints * 64u);
    float* ref = malloc((size_t)n * 12u);
    float* got = malloc((size_t)n * 12u * MAX_SKINS);
    CHECK(model && ref && got);
    double diag = fpsc_test_diagonal(ch.rig.render_mesh.positions, n);
    double worst[MAX_SKINS] = {0.0};
    uint32_t first_off[MAX_SKINS] = {0}; /* the first frame that differs from fps at all */
    sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
    pose.joint_count = joints;
    pose.matrices = model;
    sinew_output_desc out = SINEW_OUTPUT_DESC_INIT;
    out.vertex_capacity = n;
    for (uint32_t s = 1; s <= FRAMES; ++s) {
        fpsc_arm_pose(&ch, s, model);
        for (uint32_t k = 0; k < count; ++k) CHECK(sinew_skin_set_pose(world, skins[k], &pose) == SINEW_OK);
        CHECK(sinew_world_update(world, 1.0f / 60.0f) == SINEW_OK);
        out.positions = ref;
        CHECK(sinew_skin_read_output(world, skins[0], &out) == SINEW_OK);
        for (uint32_t k = 1; k < count; ++k) {
            float* g = got + 3u * (size_t)n * k;
            out.positions = g;
            CHECK(sinew_skin_read_output(world, skins[k], &out) == SINEW_OK);
            double e = 0.0;
            for (size_t i = 0; i < 3u * (size_t)n; ++i) {
                CHECK(isfinite(g[i]));
                e = fmax(e, fabs((double)g[i] - (double)ref[i]));
            }
            worst[k] = fmax(worst[k], e / diag);
            if (e > 0.0 && !first_off[k]) first_off[k] = s;
        }
    }
    sample_topology topo;
    CHECK(sample_topology_build(ch.rig.render_mesh.positions, n, ch.rig.render_mesh.indices,
                                ch.rig.render_mesh.triangle_count, &topo) == SINEW_OK);
    uint32_t pairs_fps = sample_count_self_intersections(&topo, ref);
    CHECK(pairs_fps != UINT32_MAX);
    printf("male %s at %s, %d frames, capsules=%s: fps (pcg, collisions=1) %u intersecting "
           "pairs\n", FPSC_ARM_POSE, FPSC_ARM_JOINT, FRAMES, capsules, pairs_fps);
    int failed = 0;
    for (uint32_t k = 1; k < count; ++k) {
        uint32_t pairs = sample_count_self_intersections(&topo, got + 3u * (size_t)n * k);
        CHECK(pairs != UINT32_MAX);
        uint32_t diff = pairs > pairs_fps ? pairs - pairs_fps : pairs_fps - pairs;
        printf("  fps-cuda %s: worst %.3g of the diagonal (first difference at frame %u), %u "
               "intersecting pairs\n", names[k], worst[k], first_off[k], pairs);
        failed |= worst[k] > FPSC_COLLIDE_POSITIONS || diff != 0u;
    }
    CHECK(!failed);
    sample_topology_free(&topo);
    /* A swap carries the shape across; the contacts start afresh on either side. */
    CHECK(sinew_skin_set_backend(world, skins[1], "fps", fps_params, 5) == SINEW_OK);
    CHECK(sinew_skin_wait_swap(world, skins[1]) == SINEW_OK);
    CHECK(sinew_skin_set_backend(world, skins[1], "fps-cuda", fps_params + 1, 2) == SINEW_OK);
    CHECK(sinew_skin_wait_swap(world, skins[1]) == SINEW_OK);
    CHECK(sinew_world_update(world, 1.0f / 60.0f) == SINEW_OK);
    out.positions = got;
    CHECK(sinew_skin_read_output(world, skins[1], &out) == SINEW_OK);
    CHECK(sample_count_nonfinite(got, n) == 0);
    free(model);
    free(ref);
    free(got);
    sinew_world_destroy(world);
    sample_character_free(&ch);
}

int main(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/characters/male/male.ini", sinew_import_data_dir());
    if (!cuda_test_data_present(path, "SKIP")) return 77;
    run(path, "1");
    run(path, "0");
    printf("ok\n");
    return 0;
}
