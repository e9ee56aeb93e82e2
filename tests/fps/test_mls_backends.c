/* fps and ps with MLS upsampling (2019 Sec. 5) through the runtime, on the male character
 * whose render mesh (male.off) is upsampled from its simulation mesh (male_LR20.off): the rest
 * pose comes back exactly (partition of unity), the weights travel in the baked file and
 * reproduce the in-memory preparation bit for bit, `upsampling` switches the method, and a bad
 * value is refused. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sinew/sinew_bake.h>

#include "sample_character.h"
#include "test_support.h"

static double diagonal_of(const float* p, uint32_t n)
{
    float lo[3] = {p[0], p[1], p[2]}, hi[3] = {p[0], p[1], p[2]};
    for (uint32_t v = 0; v < n; ++v)
        for (int k = 0; k < 3; ++k) {
            lo[k] = fminf(lo[k], p[3u * v + k]);
            hi[k] = fmaxf(hi[k], p[3u * v + k]);
        }
    double d2 = 0.0;
    for (int k = 0; k < 3; ++k) d2 += (double)(hi[k] - lo[k]) * (hi[k] - lo[k]);
    return sqrt(d2);
}

/* The backend under test and the parameters it always gets (fps: the PCG solver). */
typedef struct mls_case {
    const char* backend;
    sinew_param base;
    uint32_t base_count;
} mls_case;

static sinew_skin add_skin(sinew_world* world, sinew_rig rig, const char* backend,
                           const sinew_param* params, uint32_t count, sinew_test_log* log)
{
    sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
    sd.rig = rig;
    sd.backend = backend;
    sd.params = params;
    sd.param_count = count;
    sinew_skin skin = {0};
    sinew_result r = sinew_world_add_skin(world, &sd, &skin);
    if (r != SINEW_OK)
        fail_msg("adding a %s skin: %s (%s)", backend, sinew_result_string(r), log->last);
    return skin;
}

static void read_positions(sinew_world* world, sinew_skin skin, uint32_t n, float* out)
{
    sinew_output_desc od = SINEW_OUTPUT_DESC_INIT;
    od.vertex_capacity = n;
    od.positions = out;
    assert_int_equal(sinew_skin_read_output(world, skin, &od), SINEW_OK);
}

static void check_mls_male(const mls_case* tc)
{
    const char* path = sinew_test_data_path("characters/male/male.ini");
    sample_character ch;
    assert_int_equal(sample_character_load(path, NULL, &ch), SINEW_OK);
    assert_true(ch.rig.simulation_mesh.vertex_count > 0); /* what makes auto choose mls */
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_world* world = sinew_test_world(&log, 2);
    sinew_rig rig;
    assert_int_equal(sinew_rig_create(world, &ch.rig, &rig), SINEW_OK);
    uint32_t n = ch.rig.render_mesh.vertex_count, jn = ch.rig.skeleton.joint_count;
    double diagonal = diagonal_of(ch.rig.render_mesh.positions, n);

    /* A bad value is refused with one line. */
    sinew_param bad[] = {{"upsampling", "cubic"}};
    sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
    sd.rig = rig;
    sd.backend = tc->backend;
    sd.params = bad;
    sd.param_count = 1;
    sinew_skin none;
    int lines = log.count[SINEW_LOG_ERROR];
    assert_int_equal(sinew_world_add_skin(world, &sd, &none), SINEW_ERROR_PARAMETER);
    assert_int_equal(log.count[SINEW_LOG_ERROR], lines + 1);
    assert_non_null(strstr(log.last, "upsampling"));

    /* The baked file carries the weights. */
    char dir[] = "/tmp/sinew-fps-mls-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char file[256];
    snprintf(file, sizeof file, "%s/male-%s.sinew", dir, tc->backend);
    const sinew_param* base = tc->base_count ? &tc->base : NULL;
    assert_int_equal(sinew_bake_write(world, rig, tc->backend, base, tc->base_count, file),
                     SINEW_OK);
    sinew_rig baked;
    assert_int_equal(sinew_rig_load_baked(world, file, &baked), SINEW_OK);
    const char* backend = NULL;
    size_t size = 0;
    assert_int_equal(sinew_rig_get_baked(world, baked, &backend, NULL, &size), SINEW_OK);
    assert_string_equal(backend, tc->backend);
    /* 20 indices and 2 x 20 weights per render vertex at least: the weights are in there. */
    assert_true(size > (size_t)n * 20u * 12u);

    sinew_skin fresh = add_skin(world, rig, tc->backend, base, tc->base_count, &log);
    sinew_skin restored = add_skin(world, baked, tc->backend, base, tc->base_count, &log);
    sinew_param normal[] = {{"upsampling", "normal"}, tc->base};
    sinew_skin plain = add_skin(world, rig, tc->backend, normal, 1u + tc->base_count, &log);

    /* Rest pose: positions come back within float rounding (eq. 8, partition of unity). */
    float* out = malloc(sizeof(float) * 3u * n);
    float* other = malloc(sizeof(float) * 3u * n);
    float* pose = malloc(sizeof(float) * 16u * jn);
    assert_non_null(out);
    assert_non_null(other);
    assert_non_null(pose);
    assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    read_positions(world, fresh, n, out);
    double worst = 0.0;
    for (uint32_t v = 0; v < n; ++v) {
        double d2 = 0.0;
        for (int c = 0; c < 3; ++c) {
            double d = (double)out[3u * v + c] - ch.rig.render_mesh.positions[3u * v + c];
            d2 += d * d;
        }
        worst = fmax(worst, sqrt(d2));
    }
    print_message("male at rest through %s + MLS: largest error %.2e of the diagonal\n",
                  tc->backend, worst / diagonal);
    assert_true(worst / diagonal <= 1e-5);

    /* A bend: the restored skin equals the freshly prepared one bit for bit, and normal
     * displacement gives a different (but close) surface. */
    int32_t joint = sample_default_joint(&ch);
    assert_true(joint >= 0);
    assert_int_equal(sample_bend_twist_pose(&ch, (uint32_t)joint, 70.0f, 20.0f, pose), SINEW_OK);
    sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
    pd.joint_count = jn;
    pd.matrices = pose;
    sinew_skin all[3] = {fresh, restored, plain};
    for (int k = 0; k < 3; ++k) assert_int_equal(sinew_skin_set_pose(world, all[k], &pd), SINEW_OK);
    for (int s = 0; s < 4; ++s) assert_int_equal(sinew_world_update(world, 1.0f / 60.0f), SINEW_OK);
    read_positions(world, fresh, n, out);
    read_positions(world, restored, n, other);
    assert_memory_equal(out, other, sizeof(float) * 3u * n);
    read_positions(world, plain, n, other);
    double moved = 0.0, apart = 0.0;
    for (uint32_t v = 0; v < n; ++v) {
        double d2 = 0.0, m2 = 0.0;
        for (int c = 0; c < 3; ++c) {
            double d = (double)out[3u * v + c] - other[3u * v + c];
            double m = (double)out[3u * v + c] - ch.rig.render_mesh.positions[3u * v + c];
            d2 += d * d;
            m2 += m * m;
        }
        apart = fmax(apart, sqrt(d2));
        moved = fmax(moved, sqrt(m2));
        assert_true(isfinite(out[3u * v]) && isfinite(out[3u * v + 1]) && isfinite(out[3u * v + 2]));
    }
    print_message("%s bend 70 / twist 20: moved up to %.3f, MLS against normal displacement up "
                  "to %.2e of the diagonal\n", tc->backend, moved / diagonal, apart / diagonal);
    assert_true(moved / diagonal > 0.01); /* the pose did something */
    assert_true(apart > 0.0);             /* the parameter switches the method */
    assert_true(apart / diagonal < 0.02); /* both follow the same simulated skin */

    free(out);
    free(other);
    free(pose);
    unlink(file);
    rmdir(dir);
    sinew_world_destroy(world);
    sample_character_free(&ch);
}

static void test_mls_fps(void** state)
{
    (void)state;
    const mls_case tc = {"fps", {"solver", "pcg"}, 1u};
    check_mls_male(&tc);
}

#if defined(MLS_TEST_PS)
static void test_mls_ps(void** state)
{
    (void)state;
    const mls_case tc = {"ps", {NULL, NULL}, 0u};
    check_mls_male(&tc);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mls_fps),
#if defined(MLS_TEST_PS)
        cmocka_unit_test(test_mls_ps),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
