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
 * that context too.
 *
 * --characters N adds N skins of the one rig to the world (a crowd) and times the update of all
 * of them. The memory figures are the process's anonymous resident memory and the bytes held
 * through the world's allocator (a counting allocator), each read before and after the skins'
 * preparation: the shared rig is measured on its own and not counted per character. */
#include <stdatomic.h>
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
#include "sample_memory.h"
#include "sample_metrics.h"
#include "sample_options.h"
#include "sample_stats.h"

enum { WARMUP_FRAMES = 10, DEFAULT_FRAMES = 600, MAX_REPEAT = 1000, MAX_SWAPS = 4096,
       MAX_CHARACTERS = 1024 };

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
        "  --characters N     skins of the character in the one world, sharing its rig\n"
        "                     (default 1, at most %d): a crowd, timed as one update of all\n"
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
        "The report gives prepare_ms: the time of (the first skin's) sinew_world_add_skin,\n"
        "the backend's preparation from the created rig (import and rig creation left out;\n"
        "from a baked file, the restore from its blob); and load_ms: reading the character's\n"
        "file (the import, or a baked file), creating the rig and that preparation, until the\n"
        "skin is ready to step.\n"
        "\n"
        "Memory, read before and after the skins' preparation: resident_bytes_per_character,\n"
        "the growth of the process's anonymous resident memory (RssAnon, after returning freed\n"
        "pages) over the number of skins; allocated_bytes_per_character, the same for the bytes\n"
        "held through the world's allocator (what the runtime and backends asked for; CHOLMOD's\n"
        "factors and device memory are not in it). The shared rig is counted apart\n"
        "(rig_resident_bytes, rig_allocated_bytes); peak_resident_bytes is the process's peak.\n"
        "simulated_vertices: the vertices a volumetric backend simulates, from its preparation\n"
        "line; the render mesh's for the others.\n"
        "\n"
        "Exit codes: 0 done, 1 runtime error, 2 bad command line, 77 character file missing\n"
        "(unless SINEW_REQUIRE_DATA=1).\n",
        DEFAULT_FRAMES, WARMUP_FRAMES, MAX_CHARACTERS);
}

typedef struct bench {
    sample_character character;
    sinew_world* world;
    sinew_skin skin;                    /* skins[0] */
    sinew_skin* skins;                  /* --characters: every skin of the rig */
    uint32_t characters;
    const char* backend;
    sinew_logger logger;                /* bench_log */
    sample_counting_allocator counter;  /* the world's allocator */
    _Atomic uint32_t simulated_vertices; /* from the backend's preparation line; 0: none */
    /* bytes (-1: unknown): the rig's creation, and the skins' preparation, all of them */
    int64_t rig_resident, rig_allocated, skins_resident, skins_allocated;
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

/* The world's logger: errors and warnings go to stderr (INFO lines too with --profile); a
 * volumetric backend's preparation line ("ps: prepared 4651 skin vertices, ...") gives the
 * number of vertices it simulates. Called from any thread. */
static void bench_log(sinew_log_level level, const char* message, void* user)
{
    bench* b = user;
    char name[32];
    unsigned vertices;
    if (level == SINEW_LOG_INFO &&
        (sscanf(message, "%31[^:]: prepared %u skin vertices", name, &vertices) == 2 ||
         sscanf(message, "%31[^:]: restored from baked data: %u skin vertices", name,
                &vertices) == 2) &&
        strcmp(name, b->backend) == 0)
        atomic_store(&b->simulated_vertices, vertices);
    const sinew_logger* out = sample_stderr_logger();
    if (level <= SINEW_LOG_WARNING || b->profile) out->func(level, message, out->user);
}

static int has_backend(const sinew_world* world, const char* name)
{
    for (uint32_t i = 0; i < sinew_world_backend_count(world); ++i)
        if (strcmp(sinew_world_backend_name(world, i), name) == 0) return 1;
    return 0;
}

/* A backend that is neither built in nor a Vulkan one may come from the CUDA plugin
 * (fps-cuda), which registers its backends when it loads. */
static void load_plugin_for(sinew_world* world, const char* backend)
{
    if (!has_backend(world, backend) && strncmp(backend, "vk-", 3) != 0)
        sinew_world_load_plugin(world, "libsinew_fps_cuda.so");
}

/* Hands the pose of frame `frame` (frame dt seconds on) to every skin; not timed. */
static sinew_result set_frame_pose(bench* b, uint64_t frame)
{
    const double seconds = (double)frame / (1.0 / b->dt); /* frame / 60.0 at the default */
    sinew_result r = b->animation
        ? sinew_animation_sample(b->animation, (float)seconds, 1, b->pose)
        : sample_motion_pose(&b->character, (uint32_t)b->joint, seconds, b->pose);
    for (uint32_t i = 0; i < b->characters && r == SINEW_OK; ++i)
        r = sinew_skin_set_pose(b->world, b->skins[i], &b->pose_desc);
    return r;
}

static int fail(const char* what, sinew_result r)
{
    fprintf(stderr, "sinew-bench: %s failed: %s\n", what, sinew_result_string(r));
    return SAMPLE_EXIT_FAILURE;
}

/* The world, with the counting allocator and bench_log (INFO lines reach it: see there). */
static sinew_result create_world(bench* b, uint32_t threads)
{
    sample_counting_allocator_init(&b->counter);
    b->logger.func = bench_log;
    b->logger.user = b;
    sinew_world_desc world_desc = SINEW_WORLD_DESC_INIT;
    world_desc.allocator = &b->counter.allocator;
    world_desc.logger = &b->logger;
    world_desc.thread_count = threads;
    world_desc.log_level = SINEW_LOG_INFO;
    return sinew_world_create(&world_desc, &b->world);
}

/* Adds the --characters skins of `rig`; the first one's sinew_world_add_skin is prepare_ms. */
static sinew_result add_skins(bench* b, sinew_rig rig, const sample_params* params)
{
    sinew_skin_desc skin_desc = SINEW_SKIN_DESC_INIT;
    skin_desc.rig = rig;
    skin_desc.backend = b->backend;
    skin_desc.params = params->params;
    skin_desc.param_count = params->count;
    for (uint32_t i = 0; i < b->characters; ++i) {
        const double start = sample_now_seconds();
        sinew_result r = sinew_world_add_skin(b->world, &skin_desc, &b->skins[i]);
        if (r != SINEW_OK) return r;
        if (i == 0) b->prepare_ms = 1000.0 * (sample_now_seconds() - start);
    }
    b->skin = b->skins[0];
    return SINEW_OK;
}

/* The memory a step of the preparation took: the growth of the resident and of the allocated
 * bytes since *resident and *allocated, which then hold the new readings. */
static void memory_growth(bench* b, int64_t* resident, int64_t* allocated, int64_t* resident_grown,
                          int64_t* allocated_grown)
{
    const int64_t now_resident = sample_resident_bytes();
    const int64_t now_allocated = sample_counting_allocator_live(&b->counter);
    *resident_grown = now_resident >= 0 && *resident >= 0 ? now_resident - *resident : -1;
    *allocated_grown = now_allocated - *allocated;
    *resident = now_resident;
    *allocated = now_allocated;
}

/* The world, the rig and the skins, ready to step, with the memory the rig and the skins took
 * (the Vulkan context's, made in between, counts for neither). */
static int prepare(bench* b, const sample_params* params, uint32_t threads)
{
    const sinew_rig_desc* rig_desc = &b->character.rig;
    b->skins = calloc(b->characters, sizeof *b->skins);
    if (!b->skins) return fail("allocating the skins", SINEW_ERROR_OUT_OF_MEMORY);
    sinew_result r = create_world(b, threads);
    if (r != SINEW_OK) return fail("sinew_world_create", r);
    load_plugin_for(b->world, b->backend);
    int64_t resident = sample_resident_bytes();
    int64_t allocated = sample_counting_allocator_live(&b->counter);
    int64_t unused_resident, unused_allocated;
    sinew_rig rig;
    const double rig_start = sample_now_seconds();
    if ((r = sinew_rig_create(b->world, rig_desc, &rig)) != SINEW_OK) return fail("sinew_rig_create", r);
    const double rig_ms = 1000.0 * (sample_now_seconds() - rig_start);
    memory_growth(b, &resident, &allocated, &b->rig_resident, &b->rig_allocated);
    if ((r = setup_output(b, b->backend, rig, rig_desc->render_mesh.vertex_count)) != SINEW_OK)
        return fail("setting up the Vulkan context", r);
    memory_growth(b, &resident, &allocated, &unused_resident, &unused_allocated);
    if ((r = add_skins(b, rig, params)) != SINEW_OK) return fail("sinew_world_add_skin", r);
    memory_growth(b, &resident, &allocated, &b->skins_resident, &b->skins_allocated);
    b->load_ms = b->read_ms + rig_ms + b->prepare_ms;
    if ((r = bind_output(b, rig_desc->render_mesh.vertex_count)) != SINEW_OK)
        return fail("binding the output", r);
    return SAMPLE_EXIT_OK;
}

/* `repeat` runs of `frames` timed frames after the warm-up, along one continuous motion (a
 * physics backend never sees the pose jump back): each run's median and p95 in ms. */
static int time_runs(bench* b, uint32_t frames, uint32_t repeat, double* times, double* medians,
                     double* p95s)
{
    uint64_t frame = 0;
    sinew_result r;
    for (uint32_t run_index = 0; run_index < repeat; ++run_index) {
        for (uint32_t f = 0; f < WARMUP_FRAMES + frames; ++f, ++frame) {
            if ((r = set_frame_pose(b, frame)) != SINEW_OK) return fail("posing the skin", r);
            if (f >= WARMUP_FRAMES && (r = swap_tick(b, f - WARMUP_FRAMES)) != SINEW_OK)
                return fail("sinew_skin_set_backend", r);
            const double start = sample_now_seconds();
            r = frame_step(b);
            const double elapsed = sample_now_seconds() - start;
            if (r != SINEW_OK) return fail("sinew_world_update", r);
            if (f >= WARMUP_FRAMES) times[f - WARMUP_FRAMES] = 1000.0 * elapsed;
            if ((r = swap_after_frame(b, 1000.0 * elapsed)) != SINEW_OK)
                return fail("a backend swap", r);
        }
        medians[run_index] = sample_quantile(times, frames, 0.5);  /* sorts times */
        p95s[run_index] = sample_quantile(times, frames, 0.95);
    }
    return SAMPLE_EXIT_OK;
}

/* The figures of a measurement, for the JSON and the text report. */
typedef struct report {
    const char* backend;
    uint32_t frames, repeat, threads, vertices, simulated_vertices, nonfinite;
    const double* medians;              /* each run's median and p95, ms */
    const double* p95s;
    double median, p95;                 /* the median of the runs' medians and of their p95 */
    char motion[256];
} report;

/* Bytes per character as a whole number; -1 (unknown) stays -1. */
static int64_t per_character(const bench* b, int64_t bytes)
{
    return bytes < 0 ? -1 : (bytes + b->characters / 2) / b->characters;
}

static void json_bytes(sample_json* j, const char* key, int64_t bytes)
{
    if (bytes < 0) sample_json_null(j, key);
    else sample_json_int(j, key, bytes);
}

static void write_memory_json(const bench* b, sample_json* j)
{
    json_bytes(j, "resident_bytes_per_character", per_character(b, b->skins_resident));
    json_bytes(j, "allocated_bytes_per_character", per_character(b, b->skins_allocated));
    json_bytes(j, "characters_resident_bytes", b->skins_resident);
    json_bytes(j, "characters_allocated_bytes", b->skins_allocated);
    json_bytes(j, "rig_resident_bytes", b->rig_resident);
    json_bytes(j, "rig_allocated_bytes", b->rig_allocated);
    json_bytes(j, "peak_resident_bytes", sample_peak_resident_bytes());
}

static void write_json(bench* b, const report* rep)
{
    sample_json j;
    sample_json_init(&j, stdout);
    sample_json_begin_object(&j, NULL);
    sample_json_string(&j, "backend", rep->backend);
    sample_json_string(&j, "output", b->output);
    sample_json_string(&j, "character", b->character.source);
    sample_json_uint(&j, "vertices", rep->vertices);
    sample_json_uint(&j, "simulated_vertices", rep->simulated_vertices);
    sample_json_uint(&j, "joints", b->character.rig.skeleton.joint_count);
    sample_json_string(&j, "motion", rep->motion);
    sample_json_uint(&j, "characters", b->characters);
    sample_json_uint(&j, "frames", rep->frames);
    sample_json_uint(&j, "warmup_frames", WARMUP_FRAMES);
    sample_json_uint(&j, "repeat", rep->repeat);
    sample_json_uint(&j, "threads", rep->threads);
    if (b->dt != SAMPLE_DEFAULT_DT) sample_json_number(&j, "dt", b->dt);
    sample_json_number(&j, "ms_per_frame_median", rep->median);
    sample_json_number(&j, "ms_per_frame_p95", rep->p95);
    sample_json_number(&j, "ms_per_character_median", rep->median / b->characters);
    sample_json_number(&j, "vertices_per_second",
                       rep->median > 0.0 ? b->characters * rep->vertices / (rep->median / 1000.0)
                                         : 0.0);
    sample_json_begin_array(&j, "run_medians_ms");
    for (uint32_t i = 0; i < rep->repeat; ++i) sample_json_number(&j, NULL, rep->medians[i]);
    sample_json_end_array(&j);
    sample_json_begin_array(&j, "run_p95_ms");
    for (uint32_t i = 0; i < rep->repeat; ++i) sample_json_number(&j, NULL, rep->p95s[i]);
    sample_json_end_array(&j);
    sample_json_uint(&j, "nonfinite_vertices", rep->nonfinite);
    sample_json_number(&j, "prepare_ms", b->prepare_ms);
    sample_json_number(&j, "load_ms", b->load_ms);
    write_memory_json(b, &j);
    if (b->swap_every) write_swap_json(b, &j);
    sample_json_end_object(&j);
}

static double mib(int64_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0);
}

static void print_text(bench* b, const report* rep)
{
    char interval[48] = "", crowd[96] = "";
    if (b->dt != SAMPLE_DEFAULT_DT) snprintf(interval, sizeof interval, " of %g s", b->dt);
    if (b->characters > 1)
        snprintf(crowd, sizeof crowd, ", %u characters: %.4f ms per character", b->characters,
                 rep->median / b->characters);
    const double vertices_per_second =
        rep->median > 0.0 ? b->characters * rep->vertices / (rep->median / 1000.0) : 0.0;
    printf("%s (output %s) on %s (%u vertices, %u simulated, %s): %.4f ms per frame median, "
           "%.4f ms p95%s, %.3g vertices/s, %u threads, %u x %u frames%s, prepared in %.1f ms "
           "(loaded in %.1f ms)%s\n",
           rep->backend, b->output, b->character.source, rep->vertices, rep->simulated_vertices,
           rep->motion, rep->median, rep->p95, crowd, vertices_per_second, rep->threads,
           rep->repeat, rep->frames, interval, b->prepare_ms, b->load_ms,
           rep->nonfinite ? ", NON-FINITE OUTPUT" : "");
    printf("memory per character: %.3f MiB resident, %.3f MiB allocated; the shared rig %.3f MiB "
           "resident, %.3f MiB allocated; peak %.1f MiB resident\n",
           mib(per_character(b, b->skins_resident)), mib(per_character(b, b->skins_allocated)),
           mib(b->rig_resident), mib(b->rig_allocated), mib(sample_peak_resident_bytes()));
    if (b->swap_every) print_swaps(b);
}

/* The animation's name, or the built-in motion's joint. */
static void describe_motion(const bench* b, char* buf, size_t size)
{
    const sinew_rig_desc* rig_desc = &b->character.rig;
    if (b->animation) {
        snprintf(buf, size, "animation 0 (%s)", b->animation->name ? b->animation->name : "unnamed");
        return;
    }
    const char* name = rig_desc->skeleton.names ? rig_desc->skeleton.names[b->joint] : NULL;
    snprintf(buf, size, "bend-and-twist at joint %d (%s)", (int)b->joint, name ? name : "unnamed");
}

/* Vertices with a NaN or infinite coordinate in every skin's output. */
static int count_nonfinite(bench* b, float* output, uint32_t vertices, uint32_t* nonfinite)
{
    sinew_output_desc out_desc = SINEW_OUTPUT_DESC_INIT;
    out_desc.vertex_capacity = vertices;
    out_desc.positions = output;
    *nonfinite = 0;
    for (uint32_t i = 0; i < b->characters; ++i) {
        sinew_result r = sinew_skin_read_output(b->world, b->skins[i], &out_desc);
        if (r != SINEW_OK) return fail("sinew_skin_read_output", r);
        *nonfinite += sample_count_nonfinite(output, vertices);
    }
    return SAMPLE_EXIT_OK;
}

static int run(bench* b, const sample_params* params, uint32_t frames, uint32_t repeat,
               uint32_t threads, int json)
{
    int status = prepare(b, params, threads);
    if (status != SAMPLE_EXIT_OK) return status;
    const sinew_rig_desc* rig_desc = &b->character.rig;
    const uint32_t joint_count = rig_desc->skeleton.joint_count;
    const uint32_t vertices = rig_desc->render_mesh.vertex_count;
    b->pose = malloc(sizeof(float) * 16 * joint_count);
    double* times = malloc(sizeof(double) * frames);
    double* medians = malloc(sizeof(double) * repeat);
    double* p95s = malloc(sizeof(double) * repeat);
    double* sorted = malloc(sizeof(double) * repeat);
    float* output = malloc(sizeof(float) * 3 * vertices);
    if (!b->pose || !times || !medians || !p95s || !sorted || !output)
        status = fail("allocating frame buffers", SINEW_ERROR_OUT_OF_MEMORY);
    sinew_pose_desc pose_desc = SINEW_POSE_DESC_INIT;
    pose_desc.space = b->animation ? SINEW_POSE_LOCAL : SINEW_POSE_MODEL;
    pose_desc.joint_count = joint_count;
    pose_desc.matrices = b->pose;
    b->pose_desc = pose_desc;

    report rep;
    memset(&rep, 0, sizeof rep);
    if (status == SAMPLE_EXIT_OK) status = time_runs(b, frames, repeat, times, medians, p95s);
    if (status == SAMPLE_EXIT_OK) status = count_nonfinite(b, output, vertices, &rep.nonfinite);
    if (status == SAMPLE_EXIT_OK) {
        rep.backend = b->backend;
        rep.frames = frames;
        rep.repeat = repeat;
        rep.threads = sinew_world_thread_count(b->world);
        rep.vertices = vertices;
        rep.simulated_vertices = atomic_load(&b->simulated_vertices);
        if (rep.simulated_vertices == 0) rep.simulated_vertices = vertices;
        rep.medians = medians;
        rep.p95s = p95s;
        memcpy(sorted, medians, sizeof(double) * repeat);
        rep.median = sample_quantile(sorted, repeat, 0.5);
        memcpy(sorted, p95s, sizeof(double) * repeat);
        rep.p95 = sample_quantile(sorted, repeat, 0.5);   /* median of the runs' p95 */
        describe_motion(b, rep.motion, sizeof rep.motion);
        if (json) write_json(b, &rep);
        else print_text(b, &rep);
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
    uint32_t frames = DEFAULT_FRAMES, repeat = 1, threads = 0, characters = 1;
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
        } else if ((m = sample_option_value(argc, argv, &i, "--characters", &value)) != 0) {
            if (m < 0 || !sample_parse_u32("--characters", value, 1, MAX_CHARACTERS, &characters))
                goto usage_error;
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
    if (characters > 1 && swap_every) {
        fprintf(stderr, "sinew-bench: --characters above 1 and --swap-every do not go together\n");
        goto usage_error;
    }
    if (characters > 1 && strcmp(output, "own") != 0) {
        fprintf(stderr, "sinew-bench: --characters above 1 needs --output own\n");
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
    b.backend = backend;
    b.characters = characters;
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
    if (status == SAMPLE_EXIT_OK) status = run(&b, &params, frames, repeat, threads, json);
#if defined(SINEW_BENCH_HAVE_VULKAN)
    sinew_vk_output_destroy(b.vk_output);
#endif
    sinew_world_destroy(b.world);
#if defined(SINEW_BENCH_HAVE_VULKAN)
    sinew_vk_context_destroy(b.vk);
#endif
    free(b.host_output);
    free(b.pose);
    free(b.skins);
    sample_character_free(&b.character);
    sample_params_free(&params);
    return status;

usage_error:
    sample_params_free(&params);
    usage(stderr);
    return SAMPLE_EXIT_USAGE;
}
