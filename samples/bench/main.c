/* sinew-bench: time the skinning step of one character with one backend.
 * SPDX-License-Identifier: MIT
 *
 * Plays the character's first animation (or a built-in bend-and-twist motion when it has none)
 * with updates of --dt seconds, 1/60 by default, the poses following time, and times
 * sinew_world_update alone: poses are computed and handed
 * over outside the timed region, after a few warm-up frames. With --repeat R the measurement
 * runs R times back to back along the same motion; the clock of a shared machine drifts, so
 * the figure to quote is the median of the runs' medians.
 *
 * --output chooses where the skin writes: its own buffers (the default), a host array bound
 * with sinew_skin_bind_output, or a double-buffered Vulkan output (sinew_vulkan.h) on sinew's
 * own Vulkan context; with the Vulkan output the timed region is a whole frame: begin_frame,
 * the update, end_frame, the wait for the frame's `written` value (the renderer's wait, which
 * includes a GPU backend's dispatch) and the renderer's release. Backends named vk-* run on
 * that context too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew.h>
#include <sinew/sinew_import.h>
#if defined(SINEW_BENCH_HAVE_VULKAN)
#include <sinew/sinew_vulkan.h>
#endif

#include "sample_character.h"
#include "sample_json.h"
#include "sample_log.h"
#include "sample_metrics.h"
#include "sample_options.h"
#include "sample_stats.h"

enum { WARMUP_FRAMES = 10, DEFAULT_FRAMES = 600, MAX_REPEAT = 1000, MAX_SWAPS = 4096 };

static void usage(FILE* out)
{
    fprintf(out,
        "usage: sinew-bench --character PATH --backend NAME [options]\n"
        "\n"
        "Times the skinning step (sinew_world_update) of one character playing its first\n"
        "animation, or a bend-and-twist motion when it has none, one update every --dt.\n"
        "\n"
        "  --character PATH   a text-format .ini character, or any file assimp reads\n"
        "  --backend NAME     skinning backend, e.g. lbs or dqs\n"
        "  --frames N         timed frames per run (default %d, after %d warm-up frames)\n"
        "  --repeat R         runs of the whole measurement (default 1); the report gives the\n"
        "                     median of the runs' medians and each run's median\n"
        "  --threads T        world threads (default: one per core)\n"
        "  --motion M         anim (the first animation; the default when there is one) or\n"
        "                     bend-twist (the built-in motion; the default otherwise)\n"
        "  --set KEY=VALUE    backend parameter (repeatable)\n"
        "  --dt SECONDS       time of one update, sinew_world_update's dt (default 1/60); the\n"
        "                     poses follow time, so a frame of the motion is dt seconds on\n"
        "  --output WHERE     own (the backend's buffers; default), host (a bound host array)\n"
        "                     or vulkan (a bound double-buffered Vulkan output; times whole\n"
        "                     frames: begin, update, end, wait for the frame, release)\n"
        "  --swap-every N     swap the skin between --backend and --swap-to every N timed\n"
        "  --swap-to NAME     frames (the swap's backend without parameters) and report the\n"
        "                     calling thread's time per swap, the time until the new backend\n"
        "                     took over, and the frames while a swap was pending\n"
        "  --profile          pass profile=1 to the backend and show its INFO lines: where the\n"
        "                     preparation's time goes (phase by phase) and, when the skin is\n"
        "                     destroyed, the step's phases\n"
        "  --list-params NAME print the parameters backend NAME takes (key, type, default,\n"
        "                     what it accepts, what it does) and exit; with --json as JSON\n"
        "  --json             print JSON instead of one line of text\n"
        "  --help             print this and exit\n"
        "\n"
        "The report gives prepare_ms: the time of sinew_world_add_skin, the backend's\n"
        "preparation from the created rig (import and rig creation left out; from a baked\n"
        "file, the restore from its blob); and load_ms: reading the character's file (the\n"
        "import, or a baked file), creating the rig and that preparation, until the skin is\n"
        "ready to step.\n"
        "\n"
        "Exit codes: 0 done, 1 runtime error, 2 bad command line, 77 character file missing\n"
        "(unless SINEW_REQUIRE_DATA=1).\n",
        DEFAULT_FRAMES, WARMUP_FRAMES);
}

typedef struct bench {
    sample_character character;
    sinew_world* world;
    sinew_skin skin;
    const sinew_animation* animation;   /* NULL: the built-in motion at `joint` */
    int32_t joint;
    float* pose;
    sinew_pose_desc pose_desc;
    const char* output;                 /* own, host or vulkan */
    double dt;                          /* seconds per update */
    int profile;                        /* --profile: world logs at INFO */
    double prepare_ms;                  /* sinew_world_add_skin */
    double read_ms;                     /* sample_character_load: the file */
    double load_ms;                     /* read_ms, the rig's creation and prepare_ms */
    /* --swap-every: the swaps' figures */
    uint32_t swap_every;
    const char* swap_to;
    const char* swap_from;
    int swapped;                        /* the skin runs (or is going to) swap_to */
    int pending;                        /* a swap asked for and not yet adopted */
    double pending_since;
    uint32_t swaps, busy_skips, pending_frames;
    double call_ms[MAX_SWAPS], ready_ms[MAX_SWAPS];
    double pending_frame_ms_max;
    float* host_output;                 /* --output host */
#if defined(SINEW_BENCH_HAVE_VULKAN)
    sinew_vk_context* vk;
    sinew_vk_output* vk_output;
#endif
} bench;

/* The Vulkan context for --output vulkan and vk-* backends, and the output binding. */
static sinew_result setup_output(bench* b, const char* backend, sinew_rig rig, uint32_t vertices)
{
    int want_vulkan = strcmp(b->output, "vulkan") == 0 || strncmp(backend, "vk-", 3) == 0;
    if (want_vulkan) {
#if defined(SINEW_BENCH_HAVE_VULKAN)
        sinew_vk_context_desc cd = SINEW_VK_CONTEXT_DESC_INIT;
        cd.logger = sample_stderr_logger();
        sinew_result r = sinew_vk_context_create(&cd, &b->vk);
        if (r == SINEW_OK) r = sinew_vk_register_backends(b->world, b->vk);
        if (r != SINEW_OK) return r;
#else
        (void)rig;
        fprintf(stderr, "sinew-bench: this build has no Vulkan module\n");
        return SINEW_ERROR_UNSUPPORTED;
#endif
    }
    (void)rig;
    (void)vertices;
    return SINEW_OK;
}

static sinew_result bind_output(bench* b, uint32_t vertices)
{
    if (strcmp(b->output, "host") == 0) {
        b->host_output = malloc(sizeof(float) * 6 * vertices);
        if (!b->host_output) return SINEW_ERROR_OUT_OF_MEMORY;
        sinew_output_desc od = SINEW_OUTPUT_DESC_INIT;
        od.vertex_capacity = vertices;
        od.positions = b->host_output;
        od.normals = b->host_output + 3 * (size_t)vertices;
        return sinew_skin_bind_output(b->world, b->skin, &od);
    }
#if defined(SINEW_BENCH_HAVE_VULKAN)
    if (strcmp(b->output, "vulkan") == 0) {
        sinew_vk_output_desc vd = SINEW_VK_OUTPUT_DESC_INIT;
        vd.vertex_capacity = vertices;
        sinew_result r = sinew_vk_output_create(b->vk, &vd, &b->vk_output);
        return r == SINEW_OK ? sinew_vk_output_bind(b->vk_output, b->world, b->skin) : r;
    }
#endif
    return SINEW_OK;
}

/* One timed frame: the update alone, or a whole Vulkan output frame. */
static sinew_result frame_step(bench* b)
{
#if defined(SINEW_BENCH_HAVE_VULKAN)
    if (b->vk_output) {
        sinew_result r = sinew_vk_output_begin_frame(b->vk_output, UINT64_MAX, NULL);
        if (r == SINEW_OK) r = sinew_world_update(b->world, (float)b->dt);
        if (r == SINEW_OK) r = sinew_vk_output_end_frame(b->vk_output);
        sinew_vk_output_info info = SINEW_VK_OUTPUT_INFO_INIT;
        if (r == SINEW_OK) r = sinew_vk_output_get_info(b->vk_output, &info);
        if (r != SINEW_OK) return r;
        sinew_vk_context_info ci;
        memset(&ci, 0, sizeof ci);
        ci.struct_size = sizeof ci;
        sinew_vk_context_get_info(b->vk, &ci);
        VkSemaphoreWaitInfo wi = {VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, NULL, 0, 1,
                                  &info.written, &info.frames};
        if (vkWaitSemaphores(ci.device, &wi, UINT64_MAX) != VK_SUCCESS) return SINEW_ERROR_DEVICE;
        return sinew_vk_output_release(b->vk_output, info.frames);
    }
#endif
    return sinew_world_update(b->world, (float)b->dt);
}

/* --swap-every: every swap_every-th timed frame asks for a swap to the other backend (not
 * timed with the frame; the call's own time is recorded). */
static sinew_result swap_tick(bench* b, uint32_t timed_frame)
{
    if (!b->swap_every || timed_frame == 0 || timed_frame % b->swap_every != 0) return SINEW_OK;
    if (b->pending || b->swaps >= MAX_SWAPS) {
        b->busy_skips++;
        return SINEW_OK;
    }
    const char* to = b->swapped ? b->swap_from : b->swap_to;
    const double start = sample_now_seconds();
    sinew_result r = sinew_skin_set_backend(b->world, b->skin, to, NULL, 0);
    const double now = sample_now_seconds();
    if (r != SINEW_OK) return r;
    b->call_ms[b->swaps] = 1000.0 * (now - start);
    b->pending = 1;
    b->pending_since = now;
    b->swapped = !b->swapped;
    return SINEW_OK;
}

/* After a timed frame: the frames while a swap was pending, and when it ended. */
static sinew_result swap_after_frame(bench* b, double frame_ms)
{
    if (!b->pending) return SINEW_OK;
    b->pending_frames++;
    if (frame_ms > b->pending_frame_ms_max) b->pending_frame_ms_max = frame_ms;
    sinew_result status = sinew_skin_swap_status(b->world, b->skin);
    if (status == SINEW_ERROR_BUSY) return SINEW_OK;
    if (status != SINEW_OK) return status;
    b->ready_ms[b->swaps++] = 1000.0 * (sample_now_seconds() - b->pending_since);
    b->pending = 0;
    return SINEW_OK;
}

/* Hands the pose of frame `frame` (frame dt seconds on) to the skin; not timed. */
static sinew_result set_frame_pose(bench* b, uint64_t frame)
{
    const double seconds = (double)frame / (1.0 / b->dt); /* frame / 60.0 at the default */
    sinew_result r = b->animation
        ? sinew_animation_sample(b->animation, (float)seconds, 1, b->pose)
        : sample_motion_pose(&b->character, (uint32_t)b->joint, seconds, b->pose);
    if (r != SINEW_OK) return r;
    return sinew_skin_set_pose(b->world, b->skin, &b->pose_desc);
}

static int fail(const char* what, sinew_result r)
{
    fprintf(stderr, "sinew-bench: %s failed: %s\n", what, sinew_result_string(r));
    return SAMPLE_EXIT_FAILURE;
}

/* The swaps' figures: the call's time (max, median), the time until the new backend took over
 * (median, max) and the frames run while a swap was pending (count, slowest). */
static void swap_figures(bench* b, double* call_max, double* call_median, double* ready_median,
                         double* ready_max)
{
    *call_max = *ready_max = 0.0;
    for (uint32_t i = 0; i < b->swaps; ++i) {
        if (b->call_ms[i] > *call_max) *call_max = b->call_ms[i];
        if (b->ready_ms[i] > *ready_max) *ready_max = b->ready_ms[i];
    }
    *call_median = b->swaps ? sample_quantile(b->call_ms, b->swaps, 0.5) : 0.0;
    *ready_median = b->swaps ? sample_quantile(b->ready_ms, b->swaps, 0.5) : 0.0;
}

static void write_swap_json(bench* b, sample_json* j)
{
    double call_max, call_median, ready_median, ready_max;
    swap_figures(b, &call_max, &call_median, &ready_median, &ready_max);
    sample_json_string(j, "swap_to", b->swap_to);
    sample_json_uint(j, "swap_every", b->swap_every);
    sample_json_uint(j, "swaps", b->swaps);
    sample_json_uint(j, "swaps_skipped_while_pending", b->busy_skips);
    sample_json_number(j, "swap_call_ms_max", call_max);
    sample_json_number(j, "swap_call_ms_median", call_median);
    sample_json_number(j, "swap_ready_ms_median", ready_median);
    sample_json_number(j, "swap_ready_ms_max", ready_max);
    sample_json_uint(j, "frames_while_pending", b->pending_frames);
    sample_json_number(j, "frame_ms_max_while_pending", b->pending_frame_ms_max);
}

static void print_swaps(bench* b)
{
    double call_max, call_median, ready_median, ready_max;
    swap_figures(b, &call_max, &call_median, &ready_median, &ready_max);
    printf("swaps %s <-> %s: %u (%u skipped while one was pending); the call %.3f ms median, "
           "%.3f ms max; taken over after %.1f ms median, %.1f ms max; %u frames while pending, "
           "the slowest %.3f ms\n", b->swap_from, b->swap_to, b->swaps, b->busy_skips,
           call_median, call_max, ready_median, ready_max, b->pending_frames,
           b->pending_frame_ms_max);
}

static int run(bench* b, const char* backend, const sample_params* params, uint32_t frames,
               uint32_t repeat, uint32_t threads, int json)
{
    const sinew_rig_desc* rig_desc = &b->character.rig;
    sinew_world_desc world_desc = SINEW_WORLD_DESC_INIT;
    world_desc.logger = sample_stderr_logger();
    world_desc.thread_count = threads;
    if (b->profile) world_desc.log_level = SINEW_LOG_INFO;
    sinew_result r = sinew_world_create(&world_desc, &b->world);
    if (r != SINEW_OK) return fail("sinew_world_create", r);
    sinew_rig rig;
    const double rig_start = sample_now_seconds();
    if ((r = sinew_rig_create(b->world, rig_desc, &rig)) != SINEW_OK) return fail("sinew_rig_create", r);
    const double rig_ms = 1000.0 * (sample_now_seconds() - rig_start);
    sinew_skin_desc skin_desc = SINEW_SKIN_DESC_INIT;
    skin_desc.rig = rig;
    skin_desc.backend = backend;
    skin_desc.params = params->params;
    skin_desc.param_count = params->count;
    if ((r = setup_output(b, backend, rig, rig_desc->render_mesh.vertex_count)) != SINEW_OK)
        return fail("setting up the Vulkan context", r);
    const double prepare_start = sample_now_seconds();
    if ((r = sinew_world_add_skin(b->world, &skin_desc, &b->skin)) != SINEW_OK) {
        return fail("sinew_world_add_skin", r);
    }
    b->prepare_ms = 1000.0 * (sample_now_seconds() - prepare_start);
    b->load_ms = b->read_ms + rig_ms + b->prepare_ms;
    if ((r = bind_output(b, rig_desc->render_mesh.vertex_count)) != SINEW_OK)
        return fail("binding the output", r);

    const uint32_t joint_count = rig_desc->skeleton.joint_count;
    b->pose = malloc(sizeof(float) * 16 * joint_count);
    double* times = malloc(sizeof(double) * frames);
    double* medians = malloc(sizeof(double) * repeat);
    double* p95s = malloc(sizeof(double) * repeat);
    double* sorted = malloc(sizeof(double) * repeat);
    float* output = malloc(sizeof(float) * 3 * rig_desc->render_mesh.vertex_count);
    if (!b->pose || !times || !medians || !p95s || !sorted || !output) {
        free(times); free(medians); free(p95s); free(sorted); free(output);
        return fail("allocating frame buffers", SINEW_ERROR_OUT_OF_MEMORY);
    }
    sinew_pose_desc pose_desc = SINEW_POSE_DESC_INIT;
    pose_desc.space = b->animation ? SINEW_POSE_LOCAL : SINEW_POSE_MODEL;
    pose_desc.joint_count = joint_count;
    pose_desc.matrices = b->pose;
    b->pose_desc = pose_desc;

    /* One continuous motion across runs: a physics backend never sees the pose jump back. */
    uint64_t frame = 0;
    int status = SAMPLE_EXIT_OK;
    for (uint32_t run_index = 0; run_index < repeat && status == SAMPLE_EXIT_OK; ++run_index) {
        for (uint32_t f = 0; f < WARMUP_FRAMES + frames; ++f, ++frame) {
            if ((r = set_frame_pose(b, frame)) != SINEW_OK) {
                status = fail("posing the skin", r);
                break;
            }
            if (f >= WARMUP_FRAMES && (r = swap_tick(b, f - WARMUP_FRAMES)) != SINEW_OK) {
                status = fail("sinew_skin_set_backend", r);
                break;
            }
            const double start = sample_now_seconds();
            r = frame_step(b);
            const double elapsed = sample_now_seconds() - start;
            if (r != SINEW_OK) {
                status = fail("sinew_world_update", r);
                break;
            }
            if (f >= WARMUP_FRAMES) times[f - WARMUP_FRAMES] = 1000.0 * elapsed;
            if ((r = swap_after_frame(b, 1000.0 * elapsed)) != SINEW_OK) {
                status = fail("a backend swap", r);
                break;
            }
        }
        if (status != SAMPLE_EXIT_OK) break;
        medians[run_index] = sample_quantile(times, frames, 0.5);  /* sorts times */
        p95s[run_index] = sample_quantile(times, frames, 0.95);
    }

    sinew_output_desc out_desc = SINEW_OUTPUT_DESC_INIT;
    out_desc.vertex_capacity = rig_desc->render_mesh.vertex_count;
    out_desc.positions = output;
    if (status == SAMPLE_EXIT_OK && (r = sinew_skin_read_output(b->world, b->skin, &out_desc)) != SINEW_OK) {
        status = fail("sinew_skin_read_output", r);
    }
    if (status == SAMPLE_EXIT_OK) {
        memcpy(sorted, medians, sizeof(double) * repeat);
        const double median = sample_quantile(sorted, repeat, 0.5);
        memcpy(sorted, p95s, sizeof(double) * repeat);
        const double p95 = sample_quantile(sorted, repeat, 0.5);   /* median of the runs' p95 */
        const uint32_t vertices = rig_desc->render_mesh.vertex_count;
        const double vertices_per_second = median > 0.0 ? vertices / (median / 1000.0) : 0.0;
        const uint32_t nonfinite = sample_count_nonfinite(output, vertices);
        const uint32_t used_threads = sinew_world_thread_count(b->world);
        char motion[256];
        if (b->animation) {
            snprintf(motion, sizeof motion, "animation 0 (%s)",
                     b->animation->name ? b->animation->name : "unnamed");
        } else {
            const char* name = rig_desc->skeleton.names ? rig_desc->skeleton.names[b->joint] : NULL;
            snprintf(motion, sizeof motion, "bend-and-twist at joint %d (%s)", (int)b->joint,
                     name ? name : "unnamed");
        }
        if (json) {
            sample_json j;
            sample_json_init(&j, stdout);
            sample_json_begin_object(&j, NULL);
            sample_json_string(&j, "backend", backend);
            sample_json_string(&j, "output", b->output);
            sample_json_string(&j, "character", b->character.source);
            sample_json_uint(&j, "vertices", vertices);
            sample_json_uint(&j, "joints", joint_count);
            sample_json_string(&j, "motion", motion);
            sample_json_uint(&j, "frames", frames);
            sample_json_uint(&j, "warmup_frames", WARMUP_FRAMES);
            sample_json_uint(&j, "repeat", repeat);
            sample_json_uint(&j, "threads", used_threads);
            if (b->dt != SAMPLE_DEFAULT_DT) sample_json_number(&j, "dt", b->dt);
            sample_json_number(&j, "ms_per_frame_median", median);
            sample_json_number(&j, "ms_per_frame_p95", p95);
            sample_json_number(&j, "vertices_per_second", vertices_per_second);
            sample_json_begin_array(&j, "run_medians_ms");
            for (uint32_t i = 0; i < repeat; ++i) sample_json_number(&j, NULL, medians[i]);
            sample_json_end_array(&j);
            sample_json_begin_array(&j, "run_p95_ms");
            for (uint32_t i = 0; i < repeat; ++i) sample_json_number(&j, NULL, p95s[i]);
            sample_json_end_array(&j);
            sample_json_uint(&j, "nonfinite_vertices", nonfinite);
            sample_json_number(&j, "prepare_ms", b->prepare_ms);
            sample_json_number(&j, "load_ms", b->load_ms);
            if (b->swap_every) write_swap_json(b, &j);
            sample_json_end_object(&j);
        } else {
            char interval[48] = "";
            if (b->dt != SAMPLE_DEFAULT_DT) snprintf(interval, sizeof interval, " of %g s", b->dt);
            printf("%s (output %s) on %s (%u vertices, %s): %.4f ms per frame median, %.4f ms p95, "
                   "%.3g vertices/s, %u threads, %u x %u frames%s, prepared in %.1f ms (loaded "
                   "in %.1f ms)%s\n",
                   backend, b->output, b->character.source, vertices, motion, median, p95,
                   vertices_per_second, used_threads, repeat, frames, interval, b->prepare_ms,
                   b->load_ms, nonfinite ? ", NON-FINITE OUTPUT" : "");
            if (b->swap_every) print_swaps(b);
        }
    }
    free(times);
    free(medians);
    free(p95s);
    free(sorted);
    free(output);
    return status;
}

static const char* param_type_name(uint32_t type)
{
    static const char* const names[] = {"?", "flag", "integer", "real", "choice", "text"};
    return type <= SINEW_PARAM_TEXT ? names[type] : "?";
}

/* What a key accepts, as one phrase: "0 or 1", "[1, 1000]", "(0, 1]", "auto|normal|mls". */
static void param_accepts(const sinew_param_info* p, char* buf, size_t size)
{
    if (p->type == SINEW_PARAM_FLAG) snprintf(buf, size, "0 or 1");
    else if (p->type == SINEW_PARAM_CHOICE) snprintf(buf, size, "%s", p->choices);
    else if (p->type == SINEW_PARAM_TEXT) snprintf(buf, size, "text, at most %g bytes", p->max);
    else
        snprintf(buf, size, "%c%g, %g%c", (p->flags & SINEW_PARAM_MIN_OPEN) ? '(' : '[', p->min,
                 p->max, (p->flags & SINEW_PARAM_MAX_OPEN) ? ')' : ']');
}

static int has_backend(const sinew_world* world, const char* name)
{
    for (uint32_t i = 0; i < sinew_world_backend_count(world); ++i)
        if (strcmp(sinew_world_backend_name(world, i), name) == 0) return 1;
    return 0;
}

/* --list-params NAME: the backend's described parameters, from a world with the built-in
 * backends, the Vulkan ones where a device exists, and the CUDA plugin where it loads. */
static int list_params(const char* backend, int json)
{
    sinew_world_desc wd = SINEW_WORLD_DESC_INIT;
    wd.logger = sample_stderr_logger();
    wd.log_level = SINEW_LOG_ERROR;
    sinew_world* world = NULL;
    if (sinew_world_create(&wd, &world) != SINEW_OK) return SAMPLE_EXIT_FAILURE;
    sinew_vk_context* vk = NULL;
    const sinew_param_info* info = NULL;
    uint32_t count = 0;
#if defined(SINEW_BENCH_HAVE_VULKAN)
    if (!has_backend(world, backend) && strncmp(backend, "vk-", 3) == 0) {
        sinew_vk_context_desc cd = SINEW_VK_CONTEXT_DESC_INIT;
        cd.logger = sample_stderr_logger();
        if (sinew_vk_context_create(&cd, &vk) == SINEW_OK)
            sinew_vk_register_backends(world, vk);
    }
#endif
    if (!has_backend(world, backend)) sinew_world_load_plugin(world, "libsinew_fps_cuda.so");
    sinew_result r = SINEW_ERROR_UNKNOWN_BACKEND;
    if (has_backend(world, backend))
        r = sinew_world_backend_params(world, backend, &info, &count);
    else
        fprintf(stderr, "sinew-bench: no backend named %s\n", backend);
    sample_json js;
    sample_json_init(&js, json && r == SINEW_OK ? stdout : NULL);
    sample_json_begin_array(&js, NULL);
    for (uint32_t i = 0; r == SINEW_OK && i < count; ++i) {
        const sinew_param_info* p = &info[i];
        char accepts[256];
        param_accepts(p, accepts, sizeof accepts);
        sample_json_begin_object(&js, NULL);
        sample_json_string(&js, "key", p->key);
        sample_json_string(&js, "type", param_type_name(p->type));
        sample_json_string(&js, "default", p->default_value);
        sample_json_string(&js, "accepts", accepts);
        sample_json_string(&js, "doc", p->doc ? p->doc : "");
        sample_json_end_object(&js);
        if (!json)
            printf("%-22s %-8s %-22s %-26s %s\n", p->key, param_type_name(p->type),
                   p->default_value ? p->default_value : "(see doc)", accepts,
                   p->doc ? p->doc : "");
    }
    sample_json_end_array(&js);
    sinew_world_destroy(world);
#if defined(SINEW_BENCH_HAVE_VULKAN)
    sinew_vk_context_destroy(vk);
#endif
    return r == SINEW_OK ? SAMPLE_EXIT_OK : SAMPLE_EXIT_USAGE;
}

int main(int argc, char** argv)
{
    const char* character_path = NULL;
    const char* backend = NULL;
    const char* motion = NULL;
    const char* output = "own";
    uint32_t frames = DEFAULT_FRAMES, repeat = 1, threads = 0;
    double dt = SAMPLE_DEFAULT_DT;
    int json = 0, profile = 0;
    uint32_t swap_every = 0;
    const char* swap_to = NULL;
    const char* list_backend = NULL;
    sample_params params;
    memset(&params, 0, sizeof params);

    for (int i = 1; i < argc; ++i) {
        const char* value = NULL;
        int m;
        if (sample_option_flag(argv, i, "--help") || sample_option_flag(argv, i, "-h")) {
            usage(stdout);
            sample_params_free(&params);
            return SAMPLE_EXIT_OK;
        } else if (sample_option_flag(argv, i, "--json")) {
            json = 1;
        } else if ((m = sample_option_value(argc, argv, &i, "--list-params", &value)) != 0) {
            if (m < 0) goto usage_error;
            list_backend = value;
        } else if (sample_option_flag(argv, i, "--profile")) {
            profile = 1;
        } else if ((m = sample_option_value(argc, argv, &i, "--swap-every", &value)) != 0) {
            if (m < 0 || !sample_parse_u32("--swap-every", value, 1, 10000000, &swap_every))
                goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--swap-to", &value)) != 0) {
            if (m < 0) goto usage_error;
            swap_to = value;
        } else if ((m = sample_shared_option(argc, argv, &i, &character_path, &backend,
                                             &threads, &params)) != 0) {
            if (m < 0) goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--frames", &value)) != 0) {
            if (m < 0 || !sample_parse_u32("--frames", value, 1, 10000000, &frames)) goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--dt", &value)) != 0) {
            if (m < 0 || !sample_parse_seconds("--dt", value, &dt)) goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--repeat", &value)) != 0) {
            if (m < 0 || !sample_parse_u32("--repeat", value, 1, MAX_REPEAT, &repeat)) goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--output", &value)) != 0) {
            if (m < 0) goto usage_error;
            if (strcmp(value, "own") != 0 && strcmp(value, "host") != 0 &&
                strcmp(value, "vulkan") != 0) {
                fprintf(stderr, "sinew-bench: --output %s is not own, host or vulkan\n", value);
                goto usage_error;
            }
            output = value;
        } else if ((m = sample_option_value(argc, argv, &i, "--motion", &value)) != 0) {
            if (m < 0) goto usage_error;
            if (strcmp(value, "anim") != 0 && strcmp(value, "bend-twist") != 0) {
                fprintf(stderr, "sinew-bench: --motion %s is neither anim nor bend-twist\n", value);
                goto usage_error;
            }
            motion = value;
        } else {
            fprintf(stderr, "sinew-bench: unknown option %s\n", argv[i]);
            goto usage_error;
        }
    }
    if (list_backend) {
        sample_params_free(&params);
        return list_params(list_backend, json);
    }
    if (!character_path || !backend) {
        fprintf(stderr, "sinew-bench: --character and --backend are required\n");
        goto usage_error;
    }
    if (!swap_every != !swap_to) {
        fprintf(stderr, "sinew-bench: --swap-every and --swap-to go together\n");
        goto usage_error;
    }

    bench b;
    memset(&b, 0, sizeof b);
    b.output = output;
    b.dt = dt;
    b.profile = profile;
    b.swap_every = swap_every;
    b.swap_to = swap_to;
    b.swap_from = backend;
    if (profile && !sample_params_add(&params, "profile=1")) {
        sample_params_free(&params);
        return SAMPLE_EXIT_USAGE;
    }
    const double read_start = sample_now_seconds();
    sinew_result r = sample_character_load(character_path, NULL, &b.character);
    b.read_ms = 1000.0 * (sample_now_seconds() - read_start);
    if (r == SINEW_ERROR_FILE_NOT_FOUND && !sample_require_data()) {
        fprintf(stderr, "sinew-bench: skipped, %s is missing (SINEW_REQUIRE_DATA=1 makes this an error)\n",
                character_path);
        sample_params_free(&params);
        return SAMPLE_EXIT_SKIP;
    }
    if (r != SINEW_OK) {
        fprintf(stderr, "sinew-bench: cannot load %s: %s\n", character_path, sinew_result_string(r));
        sample_params_free(&params);
        return SAMPLE_EXIT_FAILURE;
    }
    int status = SAMPLE_EXIT_OK;
    const int use_animation = motion ? strcmp(motion, "anim") == 0 : b.character.animation_count > 0;
    if (use_animation && b.character.animation_count == 0) {
        fprintf(stderr, "sinew-bench: --motion anim: %s has no animation\n", character_path);
        status = SAMPLE_EXIT_FAILURE;
    } else if (use_animation) {
        b.animation = &b.character.animations[0];
    } else {
        b.joint = sample_default_joint(&b.character);
        float twist[3], bend[3];
        r = b.joint < 0 ? SINEW_ERROR_SKELETON
                        : sample_joint_axes(&b.character, (uint32_t)b.joint, twist, bend);
        if (r != SINEW_OK) status = fail("choosing a joint for the built-in motion", r);
    }
    if (status == SAMPLE_EXIT_OK) status = run(&b, backend, &params, frames, repeat, threads, json);
#if defined(SINEW_BENCH_HAVE_VULKAN)
    sinew_vk_output_destroy(b.vk_output);
#endif
    sinew_world_destroy(b.world);
#if defined(SINEW_BENCH_HAVE_VULKAN)
    sinew_vk_context_destroy(b.vk);
#endif
    free(b.host_output);
    free(b.pose);
    sample_character_free(&b.character);
    sample_params_free(&params);
    return status;

usage_error:
    sample_params_free(&params);
    usage(stderr);
    return SAMPLE_EXIT_USAGE;
}
