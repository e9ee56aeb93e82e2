/* GPU test: fps-cuda against fps (solver=pcg, the same arithmetic and the same order of the
 * PCG's sums, fps_block_sum.h) over an animation of the cylinder and male: every frame's render
 * positions agree within FPSC_MATCH_POSITIONS of the bounding-box diagonal and the render
 * normals within FPSC_MATCH_NORMALS, for each launch kind (graph, stream, and the cooperative
 * kernel where the device has it), and the launch kinds give the same bits as each other. Male runs with the default upsampling (auto: MLS of 2019 Sec. 5, male simulates a
 * decimated mesh) and once more with upsampling=normal (ps's normal displacement), so both
 * device upsamplings meet fps's; and the male across a pose jump and a flagged cut (run_jump).
 * Skips without a GPU or without the test data.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "fps_cuda_test_world.h"

enum { FRAMES = 90, KINDS = 3 };

/* What the arithmetic leaves: nothing, since both sides round every operation alike and sum
 * in one order (fps_block_sum.h). */
#define FPSC_MATCH_POSITIONS 0.0
#define FPSC_MATCH_NORMALS 0.0

/* The largest difference of two packed float arrays (each value must be finite). */
static double worst_difference(const float* got, const float* ref, size_t count)
{
    double e = 0.0;
    for (size_t i = 0; i < count; ++i) {
        CHECK(isfinite(got[i]));
        e = fmax(e, fabs((double)got[i] - (double)ref[i]));
    }
    return e;
}

static void run(const char* name, const char* upsampling)
{
    sinew_character* c = fpsc_test_character(name);
    cuda_test_log log = {0};
    sinew_logger logger;
    sinew_world* world = fpsc_test_world(&log, SINEW_LOG_WARNING, &logger);
    CHECK(sinew_world_load_plugin(world, FPSC_PLUGIN_PATH) == SINEW_OK);
    sinew_rig rig = {0};
    CHECK(sinew_rig_create(world, &c->rig, &rig) == SINEW_OK);
    static const char* const launches[KINDS] = {"graph", "stream", "cooperative"};
    sinew_skin skins[1 + KINDS];
    uint32_t count = 0;
    /* fps-cuda does not give back the joints' volume and keeps its contacts elastic: fps
     * without either is its reference */
    sinew_param fps_params[4] = {{"solver", "pcg"}, {"upsampling", upsampling},
                                 {"joint_volume", "0"}, {"inelastic_contacts", "0"}};
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = rig;
    desc.backend = "fps";
    desc.params = fps_params;
    desc.param_count = 4;
    CHECK(sinew_world_add_skin(world, &desc, &skins[count++]) == SINEW_OK);
    const char* used[KINDS];
    uint32_t used_count = 0;
    for (int k = 0; k < KINDS; ++k) {
        sinew_param p[2] = {{"launch", launches[k]}, {"upsampling", upsampling}};
        desc.backend = "fps-cuda";
        desc.params = p;
        desc.param_count = 2;
        sinew_result r = sinew_world_add_skin(world, &desc, &skins[count]);
        if (r == SINEW_ERROR_UNSUPPORTED && k == 2) {
            printf("%s: no cooperative launch on this device\n", name);
            continue;
        }
        if (r == SINEW_ERROR_BACKEND_UNAVAILABLE) cuda_test_skip("no CUDA device");
        CHECK(r == SINEW_OK);
        used[used_count++] = launches[k];
        ++count;
    }
    uint32_t n = c->rig.render_mesh.vertex_count;
    const size_t n3 = 3u * (size_t)n;
    float* ref = malloc(n3 * 8u);           /* fps: positions, then normals */
    float* got = malloc(n3 * 8u * KINDS);   /* each launch kind's */
    float* local = malloc((size_t)c->rig.skeleton.joint_count * 64u);
    CHECK(ref && got && local);
    double diag = fpsc_test_diagonal(c->rig.render_mesh.positions, n);
    double worst[KINDS] = {0.0, 0.0, 0.0}, worst_n[KINDS] = {0.0, 0.0, 0.0};
    uint32_t same_bits = 0;
    sinew_output_desc out = SINEW_OUTPUT_DESC_INIT;
    out.vertex_capacity = n;
    for (int f = 0; f < FRAMES; ++f) {
        fpsc_test_pose(world, skins, count, c, (float)f / 30.0f, local);
        CHECK(sinew_world_update(world, 1.0f / 60.0f) == SINEW_OK);
        out.positions = ref;
        out.normals = ref + n3;
        CHECK(sinew_skin_read_output(world, skins[0], &out) == SINEW_OK);
        for (uint32_t k = 1; k < count; ++k) {
            float* g = got + 2u * n3 * (k - 1u);
            out.positions = g;
            out.normals = g + n3;
            CHECK(sinew_skin_read_output(world, skins[k], &out) == SINEW_OK);
            worst[k - 1] = fmax(worst[k - 1], worst_difference(g, ref, n3) / diag);
            worst_n[k - 1] = fmax(worst_n[k - 1], worst_difference(g + n3, ref + n3, n3));
        }
        int same = 1;
        for (uint32_t k = 2; k < count; ++k)
            same &= memcmp(got, got + 2u * n3 * (k - 1u), 2u * n3 * sizeof(float)) == 0;
        same_bits += (uint32_t)same;
    }
    for (uint32_t k = 0; k < used_count; ++k) {
        printf("%s: fps-cuda launch=%s upsampling=%s vs fps (pcg): worst %.3g of the diagonal, "
               "normals %.3g, over %d frames\n", name, used[k], upsampling, worst[k], worst_n[k],
               FRAMES);
        CHECK(worst[k] <= FPSC_MATCH_POSITIONS);
        CHECK(worst_n[k] <= FPSC_MATCH_NORMALS);
    }
    printf("%s: the launch kinds gave the same bits in %u of %d frames\n", name, same_bits,
           FRAMES);
    CHECK(same_bits == (uint32_t)FRAMES);
    /* A swap carries the shape across (get_state / set_state). */
    CHECK(sinew_skin_set_backend(world, skins[1], "fps", fps_params, 4) == SINEW_OK);
    CHECK(sinew_skin_wait_swap(world, skins[1]) == SINEW_OK);
    CHECK(sinew_skin_set_backend(world, skins[1], "fps-cuda", fps_params + 1, 1) == SINEW_OK);
    CHECK(sinew_skin_wait_swap(world, skins[1]) == SINEW_OK);
    CHECK(sinew_world_update(world, 1.0f / 60.0f) == SINEW_OK);
    free(ref);
    free(got);
    free(local);
    sinew_world_destroy(world);
    sinew_import_free(c);
}

/* Sets every skin's pose to animation `a` of `c` at `time`, with `flags`. */
static void pose_all(sinew_world* world, const sinew_skin* skins, uint32_t count,
                     const sinew_character* c, uint32_t a, float time, uint32_t flags,
                     float* local)
{
    CHECK(sinew_animation_sample(&c->animations[a], time, 1, local) == SINEW_OK);
    sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
    pose.space = SINEW_POSE_LOCAL;
    pose.joint_count = c->rig.skeleton.joint_count;
    pose.matrices = local;
    pose.flags = flags;
    for (uint32_t i = 0; i < count; ++i)
        CHECK(sinew_skin_set_pose(world, skins[i], &pose) == SINEW_OK);
}

/* Pose discontinuities: the male's animation 5 across its loop jump at frame 60 (detected on
 * the host with fps's code, the device state re-uploaded) and then a flagged cut back to frame
 * 20's pose at frame 70: fps-cuda (graph and stream launches) follows fps (pcg) within
 * FPSC_MATCH_POSITIONS of the diagonal at every frame, the restarts' quasi-static steps included. */
static void run_jump(void)
{
    enum { ANIMATION = 5, LAST = 80, CUT = 70 };
    sinew_character* c = fpsc_test_character("male");
    CHECK(c->animation_count > ANIMATION);
    cuda_test_log log = {0};
    sinew_logger logger;
    sinew_world* world = fpsc_test_world(&log, SINEW_LOG_WARNING, &logger);
    CHECK(sinew_world_load_plugin(world, FPSC_PLUGIN_PATH) == SINEW_OK);
    sinew_rig rig = {0};
    CHECK(sinew_rig_create(world, &c->rig, &rig) == SINEW_OK);
    sinew_skin skins[3];
    sinew_param fps_params[3] = {{"solver", "pcg"}, {"joint_volume", "0"},
                                 {"inelastic_contacts", "0"}};
    sinew_param graph[1] = {{"launch", "graph"}}, stream[1] = {{"launch", "stream"}};
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = rig;
    for (int k = 0; k < 3; ++k) {
        desc.param_count = k == 0 ? 3 : 1;
        desc.backend = k == 0 ? "fps" : "fps-cuda";
        desc.params = k == 0 ? fps_params : k == 1 ? graph : stream;
        sinew_result r = sinew_world_add_skin(world, &desc, &skins[k]);
        if (r == SINEW_ERROR_BACKEND_UNAVAILABLE) cuda_test_skip("no CUDA device");
        CHECK(r == SINEW_OK);
    }
    uint32_t n = c->rig.render_mesh.vertex_count;
    float* ref = malloc((size_t)n * 12u);
    float* got = malloc((size_t)n * 12u);
    float* local = malloc((size_t)c->rig.skeleton.joint_count * 64u);
    CHECK(ref && got && local);
    double diag = fpsc_test_diagonal(c->rig.render_mesh.positions, n);
    double worst = 0.0;
    sinew_output_desc out = SINEW_OUTPUT_DESC_INIT;
    out.vertex_capacity = n;
    for (int f = 0; f <= LAST; ++f) {
        if (f == CUT) pose_all(world, skins, 3, c, ANIMATION, 20.0f / 60.0f,
                               SINEW_POSE_DISCONTINUOUS, local);
        else pose_all(world, skins, 3, c, ANIMATION, (float)f / 60.0f, 0u, local);
        CHECK(sinew_world_update(world, 1.0f / 60.0f) == SINEW_OK);
        out.positions = ref;
        CHECK(sinew_skin_read_output(world, skins[0], &out) == SINEW_OK);
        for (int k = 1; k < 3; ++k) {
            out.positions = got;
            CHECK(sinew_skin_read_output(world, skins[k], &out) == SINEW_OK);
            double e = 0.0;
            for (size_t i = 0; i < 3u * (size_t)n; ++i) {
                CHECK(isfinite(got[i]));
                e = fmax(e, fabs((double)got[i] - (double)ref[i]));
            }
            worst = fmax(worst, e / diag);
        }
    }
    printf("male, animation %d across its loop jump and a flagged cut: fps-cuda vs fps (pcg) "
           "worst %.3g of the diagonal\n", ANIMATION, worst);
    CHECK(worst <= FPSC_MATCH_POSITIONS);
    free(ref);
    free(got);
    free(local);
    sinew_world_destroy(world);
    sinew_import_free(c);
}

int main(void)
{
    run("cylinder", "auto");
    run("male", "auto");
    run("male", "normal");
    run_jump();
    printf("ok\n");
    return 0;
}
