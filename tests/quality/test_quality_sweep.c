/* sinew-quality's sweeps: a frame of a sweep measures what a single anim:K:FRAME run measures,
 * the loop length follows the animation sampler's wrap, and the range forms parse.
 * SPDX-License-Identifier: MIT */
#include "test_support.h"

#include <math.h>
#include <string.h>

#include "sample_character.h"
#include "sample_quality.h"

static sample_quality_desc anim_desc(const sample_character* character, const char* backend,
                                     const char* pose)
{
    sample_quality_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.character = character;
    desc.backend = backend;
    desc.thread_count = 1;
    assert_true(sample_pose_parse(pose, &desc.pose));
    return desc;
}

/* Bit for bit: the sweep reads the output between steps, which must not change the motion.
 * The cylinder's animation loops after 30 frames, so 28..31 crosses its jump. */
static void test_sweep_frames_equal_single_runs(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    sample_character cylinder;
    assert_int_equal(sample_character_load(path, NULL, &cylinder), SINEW_OK);
    const char* backends[] = { "lbs", "fps" };
    const uint32_t frames[] = { 28, 30, 31 };
    for (size_t b = 0; b < 2; ++b) {
        sample_quality_desc desc = anim_desc(&cylinder, backends[b], "anim:0:0");
        sample_sweep_spec spec;
        assert_true(sample_sweep_parse("28:31", &spec));
        sample_sweep_report sweep;
        assert_int_equal(sample_quality_sweep(&desc, &spec, &sweep), SINEW_OK);
        assert_int_equal(sweep.frame_count, 4);
        assert_int_equal(sweep.steps, 32);
        assert_int_equal(sweep.loop_frames, 30);
        assert_int_equal(sweep.tissue.present, b == 1);
        for (size_t i = 0; i < 3; ++i) {
            desc.pose.frame = frames[i];
            sample_quality_report single;
            assert_int_equal(sample_quality_run(&desc, &single), SINEW_OK);
            const sample_quality_frame* f = &sweep.frames[frames[i] - 28];
            print_message("%s frame %u: %u pairs, stretch %.6f\n", backends[b], frames[i],
                          f->self_intersections, f->max_edge_stretch);
            assert_int_equal(f->frame, frames[i]);
            assert_int_equal(f->self_intersections, single.self_intersections);
            assert_true(f->max_edge_stretch == single.max_edge_stretch);
            assert_true(f->min_edge_stretch == single.min_edge_stretch);
            assert_true(f->volume_ratio == single.volume_ratio);
            assert_int_equal(f->nonfinite_vertices, single.nonfinite_vertices);
        }
        sample_sweep_report_free(&sweep);
    }
    sample_character_free(&cylinder);
}

/* The summary is the maximum and the sum over the frames; loop+N ends N frames after the
 * jump. */
static void test_loop_sweep_summary(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    sample_character cylinder;
    assert_int_equal(sample_character_load(path, NULL, &cylinder), SINEW_OK);
    sample_quality_desc desc = anim_desc(&cylinder, "lbs", "anim:0:0");
    sample_sweep_spec spec;
    assert_true(sample_sweep_parse("loop+2", &spec));
    sample_sweep_report sweep;
    assert_int_equal(sample_quality_sweep(&desc, &spec, &sweep), SINEW_OK);
    assert_int_equal(sweep.first, 0);
    assert_int_equal(sweep.last, sweep.loop_frames + 1);
    assert_int_equal(sweep.frame_count, sweep.loop_frames + 2);
    uint32_t most = 0;
    uint64_t sum = 0;
    double stretch = 0.0;
    for (uint32_t i = 0; i < sweep.frame_count; ++i) {
        assert_int_equal(sweep.frames[i].frame, i);
        const uint32_t pairs = sweep.frames[i].self_intersections;
        most = pairs > most ? pairs : most;
        sum += pairs;
        stretch = fmax(stretch, sweep.frames[i].max_edge_stretch);
    }
    assert_int_equal(sweep.max_self_intersections, most);
    assert_int_equal(sweep.sum_self_intersections, sum);
    assert_true(sweep.max_edge_stretch == stretch);
    assert_int_equal(sweep.nonfinite_total, 0);
    sample_sweep_report_free(&sweep);

    /* A sweep needs an animation the character has. */
    desc.pose.animation = cylinder.animation_count;
    assert_int_equal(sample_quality_sweep(&desc, &spec, &sweep), SINEW_ERROR_INVALID_ARGUMENT);
    assert_true(sample_pose_parse("bend:10", &desc.pose));
    assert_int_equal(sample_quality_sweep(&desc, &spec, &sweep), SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sample_quality_sweep(&desc, NULL, &sweep), SINEW_ERROR_INVALID_ARGUMENT);
    sample_character_free(&cylinder);
}

/* One joint translated from x = 0 to x = 1 over `span` seconds: the sampled x is the wrapped
 * time over the span. */
static float sampled_x(const sinew_animation* animation, uint32_t frame)
{
    float local[16];
    assert_int_equal(sinew_animation_sample(animation, (float)frame / 60.0f, 1, local), SINEW_OK);
    return local[12];
}

static void test_loop_frames_follow_the_sampler(void** state)
{
    (void)state;
    float rotations[8] = { 0, 0, 0, 1, 0, 0, 0, 1 };
    float translations[6] = { 0, 0, 0, 1, 0, 0 };
    float scales[6] = { 1, 1, 1, 1, 1, 1 };
    const float spans[] = { 0.5f, 1.60003f, 1.0f / 60.0f, 3.3f };
    const uint32_t expected[] = { 30, 97, 1, 198 };
    for (size_t i = 0; i < sizeof spans / sizeof spans[0]; ++i) {
        float times[2] = { 0.0f, spans[i] };
        sinew_animation a = { NULL, 1, 2, times, rotations, translations, scales, spans[i] };
        const uint32_t loop = sample_animation_loop_frames(&a);
        assert_int_equal(loop, expected[i]);
        /* Frame loop - 1 is the loop's last (time still rising), frame loop starts again. */
        if (loop > 1) assert_true(sampled_x(&a, loop - 1) > sampled_x(&a, loop - 2));
        assert_true(sampled_x(&a, loop) < sampled_x(&a, loop - 1) || loop == 1);
        assert_true(sampled_x(&a, loop) <= sampled_x(&a, 1) + 1e-6f);
    }
    float one[1] = { 0.0f };
    sinew_animation still = { NULL, 1, 1, one, rotations, translations, scales, 0.0f };
    assert_int_equal(sample_animation_loop_frames(&still), 1);
    assert_int_equal(sample_animation_loop_frames(NULL), 0);
    float forever[2] = { 0.0f, 1e9f };
    sinew_animation endless = { NULL, 1, 2, forever, rotations, translations, scales, 1e9f };
    assert_int_equal(sample_animation_loop_frames(&endless), UINT32_MAX);
}

static void test_sweep_forms(void** state)
{
    (void)state;
    sample_sweep_spec spec;
    assert_true(sample_sweep_parse("3:9", &spec));
    assert_false(spec.loop);
    assert_int_equal(spec.first, 3);
    assert_int_equal(spec.last, 9);
    assert_true(sample_sweep_parse("4:4", &spec));
    assert_true(sample_sweep_parse("loop+30", &spec));
    assert_true(spec.loop);
    assert_int_equal(spec.after, 30);
    assert_true(sample_sweep_parse("loop+0", &spec));
    const char* bad[] = { "", "3", "9:3", "3:", ":3", "-1:3", "3:x", "loop", "loop+", "loop-3",
                          "loop+x", "1:99999999", "loop+99999999", "3:9:1" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        if (sample_sweep_parse(bad[i], &spec)) fail_msg("accepted \"%s\"", bad[i]);
    }
    uint32_t k = 0;
    assert_true(sample_sweep_pose_parse("anim:2", &k));
    assert_int_equal(k, 2);
    const char* bad_poses[] = { "anim:", "anim:2:3", "anim:x", "bend:3", "" };
    for (size_t i = 0; i < sizeof bad_poses / sizeof bad_poses[0]; ++i) {
        if (sample_sweep_pose_parse(bad_poses[i], &k)) fail_msg("accepted \"%s\"", bad_poses[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_frames_equal_single_runs),
        cmocka_unit_test(test_loop_sweep_summary),
        cmocka_unit_test(test_loop_frames_follow_the_sampler),
        cmocka_unit_test(test_sweep_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
