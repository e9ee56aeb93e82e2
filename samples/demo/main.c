/* sinew-demo: one character skinned by every available backend side by side, rendered
 * headless with Vulkan. SPDX-License-Identifier: MIT
 *
 * Writes <out>/compare.png (a strong static bend, the backends in columns, where their
 * difference shows), <out>/frames/frame_NNNN.png (the animation, all backends in every frame)
 * and <out>/contact_sheet.png (a grid of those frames), and prints per-backend figures: time
 * per skinning step, and the self-intersections and volume ratio at the compare pose.
 *
 * Each skin writes its own sinew_vk_output (CPU backends through the mapped memory, vk-lbs and
 * vk-dqs on the device), and the renderer draws straight from those buffers with the frame
 * protocol of sinew_vulkan.h; --host-arrays reads every skin back and draws from host arrays
 * instead, for comparison (the images are the same). */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sinew/sinew.h>
#include <sinew/sinew_import.h>
#include <sinew/sinew_render.h>
#include <sinew/sinew_vulkan.h>

#include "sample_character.h"
#include "sample_log.h"
#include "sample_metrics.h"
#include "sample_options.h"
#include "sample_quality.h"
#include "sample_stats.h"

enum {
    MAX_BACKENDS = 8,
    DEFAULT_FIRST = 0,
    DEFAULT_END = 120,      /* 2 s of animation, 40 images: under a minute with ps and fps
                               on 2 shared cores */
    DEFAULT_EVERY = 3,
    COLUMN_WIDTH = 320,     /* default width per backend */
    DEFAULT_HEIGHT = 400,
    SETTLE_STEPS = 60,      /* after the ramp to the compare pose, for physics backends */
    SHEET_MAX_FRAMES = 12,
    SHEET_COLUMNS = 4,
    SHEET_MAX_WIDTH = 1600,
    SHEET_GAP = 4
};
/* How long the reader waits for a published frame's `written` signal before it gives up (a
 * lost signal would otherwise hang the demo). */
static const uint64_t WRITTEN_TIMEOUT_NS = 60ull * 1000000000ull;
static const float DT = 1.0f / 60.0f;
static const char* const DEFAULT_POSE = "bend:120";
/* Backends shown by default, in this order, when registered and able to run here. */
static const char* const DEFAULT_BACKENDS[] = {"lbs", "dqs", "ps", "fps"};

static void usage(FILE* out)
{
    fprintf(out,
        "usage: sinew-demo [options]\n"
        "\n"
        "Skins one character with every available backend side by side (lbs | dqs | ps | fps\n"
        "as registered), renders it headless with Vulkan and writes:\n"
        "  OUT/compare.png         a strong static bend, one column per backend\n"
        "  OUT/frames/frame_NNNN.png  the animation, one image per frame\n"
        "  OUT/contact_sheet.png   a grid of up to %d of those frames\n"
        "\n"
        "  --character PATH   .ini, any file assimp reads, or a baked file (default: the male\n"
        "                     test character under SINEW_DATA_DIR, else assimp-testmodels'\n"
        "                     X/BCN_Epileptic.X, else a procedural arm); `procedural`: the\n"
        "                     arm\n"
        "  --backends LIST    comma-separated backends (default: lbs,dqs,ps,fps where they can\n"
        "                     run; vk-lbs and vk-dqs skin on the Vulkan device); --backend\n"
        "                     NAME shows one\n"
        "  --frames A:B       animation frames A to B-1 at 60 per second (default %d:%d);\n"
        "                     every frame is stepped, frames before A are not drawn\n"
        "  --every N          draw every N-th frame of the range (default %d)\n"
        "  --animation K      the character's animation to play (default 0; without one, a\n"
        "                     built-in bend-and-twist motion)\n"
        "  --pose SPEC        the compare pose: bend:DEG, twist:DEG or anim:K:FRAME (default\n"
        "                     %s), ramped over %d steps and settled for %d\n"
        "  --joint NAME       the joint of bend/twist (default: the first knee, else elbow,\n"
        "                     else the middle joint of the longest chain)\n"
        "  --size WxH         image size (default %d per backend x %d)\n"
        "  --out DIR          output folder (default out)\n"
        "  --threads T        world threads (default: one per core)\n"
        "  --set KEY=VALUE    backend parameter, given to every backend (repeatable)\n"
        "  --host-arrays      read every skin back into host arrays and draw from those (the\n"
        "                     old path, for comparison); by default each skin writes its own\n"
        "                     Vulkan output buffer and the renderer draws from it\n"
        "  --validation       enable the Vulkan validation layer; any message fails the run\n"
        "  --help             print this and exit\n"
        "\n"
        "Exit codes: 0 done, 1 runtime error, 2 bad command line, 77 no Vulkan device or the\n"
        "character file is missing (failures instead under SINEW_REQUIRE_VULKAN=1 and\n"
        "SINEW_REQUIRE_DATA=1).\n",
        SHEET_MAX_FRAMES, DEFAULT_FIRST, DEFAULT_END, DEFAULT_EVERY, DEFAULT_POSE,
        SAMPLE_RAMP_STEPS, SETTLE_STEPS, COLUMN_WIDTH, DEFAULT_HEIGHT);
}

typedef struct demo_options {
    const char* character;
    const char* backend;            /* --backend */
    char* backends_text;            /* --backends, owned copy */
    uint32_t first, end, every;
    uint32_t animation;
    const char* pose;
    const char* joint;
    uint32_t width, height;         /* 0: default */
    const char* out;
    uint32_t threads;
    int validation;
    int host_arrays;                /* --host-arrays: draw from read-back host arrays */
    sample_params params;
} demo_options;

typedef struct demo {
    demo_options* opt;
    sample_character character;
    sinew_world* world;
    sinew_rig rig;
    uint32_t backend_count;
    const char* backends[MAX_BACKENDS];
    sinew_skin skins[MAX_BACKENDS];
    uint32_t vertices, triangles, joints;
    const uint32_t* indices;
    /* Host copies: every frame with --host-arrays; otherwise only where the demo needs the
     * shape on the CPU (the compare pose's figures and camera, the lbs camera pre-pass). */
    float* positions[MAX_BACKENDS];
    float* normals[MAX_BACKENDS];
    /* One Vulkan output per column (not with --host-arrays): the skin writes it, the renderer
     * draws from it. `bound`: the current skins are bound to them and step with the frame
     * protocol of sinew_vulkan.h. */
    sinew_vk_output* outputs[MAX_BACKENDS];
    int bound;
    VkDevice device;
    float* pose;
    float up[3];
    int32_t joint;                  /* bend/twist joint, -1 when none */
    const sinew_animation* animation;
    sinew_vk_context* vk;
    sinew_renderer* renderer;
    uint32_t width, height;
    uint8_t* image;
    double* step_ms[MAX_BACKENDS];  /* per drawn frame */
    double* render_ms;
    double* write_ms;
} demo;

/* Frames first, first + every, ... below end. */
static uint32_t drawn_frames(const demo_options* opt)
{
    return (opt->end - opt->first + opt->every - 1) / opt->every;
}

static int fail(const char* what, sinew_result r)
{
    fprintf(stderr, "sinew-demo: %s failed: %s\n", what, sinew_result_string(r));
    return SAMPLE_EXIT_FAILURE;
}

static int require_vulkan(void)
{
    const char* v = getenv("SINEW_REQUIRE_VULKAN");
    return v && strcmp(v, "1") == 0;
}

static int path_exists(const char* path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* mkdir -p for one folder path. */
static int make_dirs(const char* path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return 0;
    for (char* p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return 0;
        *p = '/';
    }
    return mkdir(buf, 0777) == 0 || errno == EEXIST;
}

/* ---------------------------------------------------------------------------------------- */
/* The character and its skins                                                              */
/* ---------------------------------------------------------------------------------------- */

/* The default character: the male test character, else assimp's BCN_Epileptic.X, else the
 * procedural arm (so the demo always has something to show). */
static sinew_result load_character(demo* d)
{
    const char* path = d->opt->character;
    char buf[4096];
    if (!path) {
        snprintf(buf, sizeof buf, "%s/characters/male/male.ini", sinew_import_data_dir());
        if (!path_exists(buf)) {
            const char* models = getenv("SINEW_ASSIMP_MODELS_DIR");
            snprintf(buf, sizeof buf, "%s/X/BCN_Epileptic.X",
                     models && *models ? models : "/usr/share/assimp/models");
        }
        if (path_exists(buf)) path = buf;
    }
    if (!path || strcmp(path, "procedural") == 0)
        return sample_character_make_arm(48, 24, &d->character);
    return sample_character_load(path, NULL, &d->character);
}

/* Up is the longest side of the rest box when that is y or z (a standing character), else y
 * (a lying arm). */
static void pick_up_axis(demo* d)
{
    const float* p = d->character.rig.render_mesh.positions;
    float lo[3] = {p[0], p[1], p[2]}, hi[3] = {p[0], p[1], p[2]};
    for (uint32_t v = 1; v < d->vertices; v++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fminf(lo[k], p[3 * v + k]);
            hi[k] = fmaxf(hi[k], p[3 * v + k]);
        }
    float e[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
    d->up[0] = d->up[1] = d->up[2] = 0.0f;
    if (e[2] > e[1] && e[2] > e[0]) d->up[2] = 1.0f;
    else d->up[1] = 1.0f;
}

static int name_contains(const char* name, const char* word)
{
    for (; name && *name; name++) {
        size_t i = 0;
        while (word[i] && tolower((unsigned char)name[i]) == word[i]) i++;
        if (!word[i]) return 1;
    }
    return 0;
}

/* A knee, else an elbow (where skinning methods differ most visibly under a bend), else the
 * middle joint of the longest chain. */
static int32_t demo_default_joint(const sample_character* c)
{
    const char* const words[2] = {"knee", "elbow"};
    const char* const* names = c->rig.skeleton.names;
    for (int w = 0; w < 2 && names; w++)
        for (uint32_t j = 0; j < c->rig.skeleton.joint_count; j++)
            if (name_contains(names[j], words[w])) return (int32_t)j;
    return sample_default_joint(c);
}

/* Adds one skin per backend; with `bind`, each writes its column's Vulkan output from then
 * on (d->bound). */
static sinew_result add_skins(demo* d, int bind)
{
    /* Set first, so that remove_skins also unbinds the outputs of a partial success. */
    d->bound = bind;
    for (uint32_t b = 0; b < d->backend_count; b++) {
        sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
        sd.rig = d->rig;
        sd.backend = d->backends[b];
        sd.params = d->opt->params.params;
        sd.param_count = d->opt->params.count;
        sinew_result r = sinew_world_add_skin(d->world, &sd, &d->skins[b]);
        if (r != SINEW_OK) {
            fprintf(stderr, "sinew-demo: backend %s cannot skin %s: %s\n", d->backends[b],
                    d->character.source, sinew_result_string(r));
            return r;
        }
        if (bind) r = sinew_vk_output_bind(d->outputs[b], d->world, d->skins[b]);
        if (r != SINEW_OK) {
            fprintf(stderr, "sinew-demo: binding backend %s to its Vulkan output: %s\n",
                    d->backends[b], sinew_result_string(r));
            return r;
        }
    }
    return SINEW_OK;
}

static void remove_skins(demo* d)
{
    for (uint32_t b = 0; b < d->backend_count; b++) {
        if (d->bound) sinew_vk_output_unbind(d->outputs[b]);
        if (d->skins[b].id) sinew_world_remove_skin(d->world, d->skins[b]);
        d->skins[b].id = 0;
    }
    d->bound = 0;
}

/* Copies skin b's current shape into the host arrays. */
static sinew_result read_back(demo* d, uint32_t b)
{
    sinew_output_desc out = SINEW_OUTPUT_DESC_INIT;
    out.vertex_capacity = d->vertices;
    out.positions = d->positions[b];
    out.normals = d->normals[b];
    return sinew_skin_read_output(d->world, d->skins[b], &out);
}

/* Hands `pose` (model or local space) to every skin and steps each one alone (timed, so that
 * the step time per backend is its own). Unbound skins are read back into the host arrays.
 * Bound skins write frame f of their output: begin_frame (waits until slot f % 2 is
 * released, points the skin at it), the update, end_frame (`written` = f + 1, on the host
 * after a CPU backend, in queue order after vk-lbs/vk-dqs). Every frame published here must
 * then be consumed by render() or skip_frame(). */
static sinew_result step_all(demo* d, sinew_pose_space space, double* out_ms)
{
    sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
    pd.space = space;
    pd.joint_count = d->joints;
    pd.matrices = d->pose;
    for (uint32_t b = 0; b < d->backend_count; b++) {
        sinew_result r = sinew_skin_set_pose(d->world, d->skins[b], &pd);
        if (r != SINEW_OK) return r;
        if (d->bound && (r = sinew_vk_output_begin_frame(d->outputs[b], UINT64_MAX, NULL)) !=
                            SINEW_OK)
            return r;
        double t0 = sample_now_seconds();
        r = sinew_skin_update(d->world, d->skins[b], DT);
        if (out_ms) out_ms[b] = 1000.0 * (sample_now_seconds() - t0);
        /* A begun frame is ended even after a failed update, so the output stays usable. */
        if (d->bound) {
            sinew_result e = sinew_vk_output_end_frame(d->outputs[b]);
            if (r == SINEW_OK) r = e;
        } else if (r == SINEW_OK) {
            r = read_back(d, b);
        }
        if (r != SINEW_OK) return r;
    }
    return SINEW_OK;
}

/* The reader's side of the latest published frame of column b: waits on the CPU until
 * `written` reaches it and returns the output's info (read_slot and its offsets). */
static sinew_result wait_written(demo* d, uint32_t b, sinew_vk_output_info* info)
{
    sinew_result r = sinew_vk_output_get_info(d->outputs[b], info);
    if (r != SINEW_OK) return r;
    VkSemaphoreWaitInfo wi = {VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wi.semaphoreCount = 1;
    wi.pSemaphores = &info->written;
    wi.pValues = &info->frames;
    VkResult vr = vkWaitSemaphores(d->device, &wi, WRITTEN_TIMEOUT_NS);
    if (vr != VK_SUCCESS) {
        fprintf(stderr, "sinew-demo: frame %llu of backend %s was not written (%s, VkResult "
                        "%d)\n", (unsigned long long)info->frames, d->backends[b],
                vr == VK_TIMEOUT ? "timed out" : "wait failed", (int)vr);
        return SINEW_ERROR_DEVICE;
    }
    return SINEW_OK;
}

/* Consumes a published frame that is not drawn (the compare ramp, frames between the drawn
 * ones): waits for `written` and releases the slot so the frame after next can reuse it. */
static sinew_result skip_frame(demo* d)
{
    for (uint32_t b = 0; d->bound && b < d->backend_count; b++) {
        sinew_vk_output_info info = SINEW_VK_OUTPUT_INFO_INIT;
        sinew_result r = wait_written(d, b, &info);
        if (r == SINEW_OK) r = sinew_vk_output_release(d->outputs[b], info.frames);
        if (r != SINEW_OK) return r;
    }
    return SINEW_OK;
}

/* The animation's pose at `frame` (60 per second, looping), or the built-in motion. */
static sinew_result animation_pose(demo* d, uint32_t frame, sinew_pose_space* space)
{
    double seconds = (double)frame / 60.0;
    if (d->animation) {
        *space = SINEW_POSE_LOCAL;
        return sinew_animation_sample(d->animation, (float)seconds, 1, d->pose);
    }
    *space = SINEW_POSE_MODEL;
    return sample_motion_pose(&d->character, (uint32_t)d->joint, seconds, d->pose);
}

/* ---------------------------------------------------------------------------------------- */
/* Images                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static void host_bounds(const demo* d, uint32_t b, float box[6])
{
    for (int k = 0; k < 3; k++) {
        box[k] = INFINITY;
        box[k + 3] = -INFINITY;
    }
    for (uint32_t v = 0; v < d->vertices; v++)
        for (int k = 0; k < 3; k++) {
            box[k] = fminf(box[k], d->positions[b][3 * v + k]);
            box[k + 3] = fmaxf(box[k + 3], d->positions[b][3 * v + k]);
        }
}

/* Draws the latest frame into d->image: from the host arrays, or (bound skins) from each
 * output's read_slot after waiting for `written`, releasing every slot after the draw (the
 * draw has finished on the queue when sinew_renderer_draw returns, so the release is a host
 * signal of `read`). The renderer acquires and releases externally written slots itself.
 * `bounds` NULL fits the camera to the meshes: with buffers, the renderer cannot see the
 * vertices, so each mesh's box comes from the host arrays, which the caller has read back
 * (the compare pose); with a frame box each mesh gets that box, which the renderer only uses
 * for the camera when the frame has none. The time covers the wait, the draw with its
 * readback and the release. */
static sinew_result render(demo* d, const float* bounds, double* out_ms)
{
    double t0 = sample_now_seconds();
    sinew_render_mesh meshes[MAX_BACKENDS];
    float boxes[MAX_BACKENDS][6];
    sinew_vk_output_info infos[MAX_BACKENDS];
    sinew_result r = SINEW_OK;
    for (uint32_t b = 0; b < d->backend_count && r == SINEW_OK; b++) {
        sinew_render_mesh m = SINEW_RENDER_MESH_INIT;
        m.vertex_count = d->vertices;
        m.triangle_count = d->triangles;
        m.indices = d->indices;
        m.column = b;
        if (d->bound) {
            sinew_vk_output_info info = SINEW_VK_OUTPUT_INFO_INIT;
            r = wait_written(d, b, &info);
            infos[b] = info;
            m.position_buffer = info.buffer;
            m.position_offset = info.position_offset;
            m.normal_buffer = info.buffer;
            m.normal_offset = info.normal_offset;
            if (bounds) memcpy(boxes[b], bounds, sizeof boxes[b]);
            else host_bounds(d, b, boxes[b]);
            m.bounds = boxes[b];
        } else {
            m.positions = d->positions[b];
            m.normals = d->normals[b];
        }
        meshes[b] = m;
    }
    if (r != SINEW_OK) return r;
    sinew_render_frame frame = SINEW_RENDER_FRAME_INIT;
    frame.meshes = meshes;
    frame.mesh_count = d->backend_count;
    frame.column_count = d->backend_count;
    frame.bounds = bounds;
    memcpy(frame.up, d->up, sizeof frame.up);
    r = sinew_renderer_draw(d->renderer, &frame, d->image, (size_t)d->width * d->height * 4u);
    /* Released also after a failed draw: the queue is idle either way, and the writers must
     * not wait for a frame nobody will read. */
    for (uint32_t b = 0; d->bound && b < d->backend_count; b++) {
        sinew_result e = sinew_vk_output_release(d->outputs[b], infos[b].frames);
        if (r == SINEW_OK) r = e;
    }
    if (out_ms) *out_ms = 1000.0 * (sample_now_seconds() - t0);
    return r;
}

/* Box-filters the current image down by `factor` into the sheet at (x0, y0). */
static void paste_thumbnail(const demo* d, uint32_t factor, uint8_t* sheet, uint32_t sheet_w,
                            uint32_t x0, uint32_t y0)
{
    const uint32_t tw = d->width / factor, th = d->height / factor;
    for (uint32_t y = 0; y < th; y++)
        for (uint32_t x = 0; x < tw; x++) {
            uint32_t sum[4] = {0, 0, 0, 0};
            for (uint32_t sy = 0; sy < factor; sy++)
                for (uint32_t sx = 0; sx < factor; sx++) {
                    const uint8_t* p = d->image +
                        4u * ((size_t)(y * factor + sy) * d->width + x * factor + sx);
                    for (int c = 0; c < 4; c++) sum[c] += p[c];
                }
            uint8_t* q = sheet + 4u * ((size_t)(y0 + y) * sheet_w + x0 + x);
            for (int c = 0; c < 4; c++) q[c] = (uint8_t)(sum[c] / (factor * factor));
        }
}

/* ---------------------------------------------------------------------------------------- */
/* The two parts of the run                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* Ramps every backend to the compare pose, lets physics settle, renders compare.png and
 * measures each backend's result. */
static int run_compare(demo* d, const sample_topology* topo, double rest_volume)
{
    sample_pose_spec spec;
    const char* text = d->opt->pose ? d->opt->pose : DEFAULT_POSE;
    if (!sample_pose_parse(text, &spec)) return SAMPLE_EXIT_USAGE;
    sinew_result r = add_skins(d, !d->opt->host_arrays);
    if (r != SINEW_OK) return SAMPLE_EXIT_FAILURE;
    if (spec.kind == SAMPLE_POSE_ANIM) {
        if (spec.animation >= d->character.animation_count) {
            fprintf(stderr, "sinew-demo: --pose %s: %s has %u animations\n", text,
                    d->character.source, d->character.animation_count);
            return SAMPLE_EXIT_USAGE;
        }
        for (uint32_t f = 0; f <= spec.frame && r == SINEW_OK; f++) {
            r = sinew_animation_sample(&d->character.animations[spec.animation],
                                       (float)f / 60.0f, 1, d->pose);
            if (r == SINEW_OK) r = step_all(d, SINEW_POSE_LOCAL, NULL);
            if (r == SINEW_OK && f < spec.frame) r = skip_frame(d);
        }
    } else {
        if (d->joint < 0) {
            fprintf(stderr, "sinew-demo: --pose %s needs a joint with a neighbour\n", text);
            return SAMPLE_EXIT_FAILURE;
        }
        /* A ramp, as an engine would animate into the pose, then still frames to settle. */
        const uint32_t steps = SAMPLE_RAMP_STEPS + SETTLE_STEPS;
        for (uint32_t s = 1; s <= steps && r == SINEW_OK; s++) {
            float a = s >= SAMPLE_RAMP_STEPS ? 1.0f : (float)s / SAMPLE_RAMP_STEPS;
            float bend = spec.kind == SAMPLE_POSE_BEND ? spec.degrees * a : 0.0f;
            float twist = spec.kind == SAMPLE_POSE_TWIST ? spec.degrees * a : 0.0f;
            r = sample_bend_twist_pose(&d->character, (uint32_t)d->joint, bend, twist, d->pose);
            if (r == SINEW_OK) r = step_all(d, SINEW_POSE_MODEL, NULL);
            if (r == SINEW_OK && s < steps) r = skip_frame(d);
        }
    }
    /* The figures below and the camera of compare.png need the shape on the CPU: one copy
     * (the host-array path has it already). */
    for (uint32_t b = 0; d->bound && b < d->backend_count && r == SINEW_OK; b++)
        r = read_back(d, b);
    if (r != SINEW_OK) return fail("posing the compare frame", r);
    if ((r = render(d, NULL, NULL)) != SINEW_OK) return fail("rendering compare.png", r);
    char path[4096];
    snprintf(path, sizeof path, "%s/compare.png", d->opt->out);
    if ((r = sinew_png_write(path, d->width, d->height, d->image, NULL)) != SINEW_OK)
        return fail("writing compare.png", r);
    const char* joint_name = d->joint >= 0 && d->character.rig.skeleton.names
        ? d->character.rig.skeleton.names[d->joint] : NULL;
    printf("wrote %s: %s%s%s, columns", path, text, joint_name ? " at " : "",
           joint_name ? joint_name : "");
    for (uint32_t b = 0; b < d->backend_count; b++) printf(" %s", d->backends[b]);
    printf("\n");
    for (uint32_t b = 0; b < d->backend_count; b++) {
        uint32_t intersections = topo ? sample_count_self_intersections(topo, d->positions[b])
                                      : 0;
        double volume = topo && topo->closed ? sample_enclosed_volume(topo, d->positions[b])
                                             : NAN;
        printf("  %-6s at the compare pose: ", d->backends[b]);
        if (topo) printf("%u self-intersecting triangle pairs", intersections);
        if (rest_volume > 0.0 && isfinite(volume))
            printf(", volume ratio %.4f", volume / rest_volume);
        else if (topo)
            printf(", volume ratio n/a (open mesh)");
        printf("\n");
    }
    remove_skins(d);
    return SAMPLE_EXIT_OK;
}

/* The camera box of the animation: the lbs pose of every frame from 0 to end, with a margin
 * for the physics backends' secondary motion, so that the camera stays still. */
static int animation_bounds(demo* d, float box[6])
{
    const char* saved_name = d->backends[0];
    uint32_t saved_count = d->backend_count;
    d->backends[0] = "lbs";
    d->backend_count = 1;
    sinew_result r = add_skins(d, 0);
    for (int k = 0; k < 3; k++) {
        box[k] = INFINITY;
        box[k + 3] = -INFINITY;
    }
    for (uint32_t f = 0; f < d->opt->end && r == SINEW_OK; f++) {
        sinew_pose_space space;
        r = animation_pose(d, f, &space);
        if (r == SINEW_OK) r = step_all(d, space, NULL);
        if (r != SINEW_OK || f < d->opt->first) continue;
        for (uint32_t v = 0; v < d->vertices; v++)
            for (int k = 0; k < 3; k++) {
                box[k] = fminf(box[k], d->positions[0][3 * v + k]);
                box[k + 3] = fmaxf(box[k + 3], d->positions[0][3 * v + k]);
            }
    }
    remove_skins(d);
    d->backends[0] = saved_name;
    d->backend_count = saved_count;
    if (r != SINEW_OK) return fail("posing the animation (lbs pre-pass)", r);
    for (int k = 0; k < 3; k++) {
        float margin = 0.05f * (box[k + 3] - box[k]);
        box[k] -= margin;
        box[k + 3] += margin;
    }
    return SAMPLE_EXIT_OK;
}

static int run_animation(demo* d)
{
    float box[6];
    int status = animation_bounds(d, box);
    if (status != SAMPLE_EXIT_OK) return status;
    const uint32_t first = d->opt->first, end = d->opt->end, every = d->opt->every;
    const uint32_t count = drawn_frames(d->opt);
    char path[4096];
    snprintf(path, sizeof path, "%s/frames", d->opt->out);
    if (!make_dirs(path)) {
        fprintf(stderr, "sinew-demo: cannot create %s: %s\n", path, strerror(errno));
        return SAMPLE_EXIT_FAILURE;
    }
    /* The contact sheet: up to SHEET_MAX_FRAMES frames spread evenly over the range. */
    const uint32_t picks = count < SHEET_MAX_FRAMES ? count : SHEET_MAX_FRAMES;
    const uint32_t sheet_cols = picks < SHEET_COLUMNS ? picks : SHEET_COLUMNS;
    const uint32_t sheet_rows = (picks + sheet_cols - 1) / sheet_cols;
    uint32_t factor = (d->width * sheet_cols + SHEET_MAX_WIDTH - 1) / SHEET_MAX_WIDTH;
    if (factor == 0) factor = 1;
    const uint32_t tw = d->width / factor, th = d->height / factor;
    const uint32_t sheet_w = sheet_cols * tw + (sheet_cols + 1) * SHEET_GAP;
    const uint32_t sheet_h = sheet_rows * th + (sheet_rows + 1) * SHEET_GAP;
    uint8_t* sheet = calloc((size_t)sheet_w * sheet_h, 4);
    if (!sheet) return fail("allocating the contact sheet", SINEW_ERROR_OUT_OF_MEMORY);
    for (size_t p = 0; p < (size_t)sheet_w * sheet_h; p++) {
        sheet[4 * p + 0] = sheet[4 * p + 1] = sheet[4 * p + 2] = 24;
        sheet[4 * p + 3] = 255;
    }

    sinew_result r = add_skins(d, !d->opt->host_arrays);
    uint32_t pick = 0, last = first;
    double step_ms[MAX_BACKENDS];
    for (uint32_t f = 0; f < end && r == SINEW_OK; f++) {
        sinew_pose_space space;
        r = animation_pose(d, f, &space);
        if (r == SINEW_OK) r = step_all(d, space, step_ms);
        if (r != SINEW_OK) {
            fail("stepping the animation", r);
            break;
        }
        if (f < first || (f - first) % every != 0) {
            if ((r = skip_frame(d)) != SINEW_OK) {
                fail("releasing a frame", r);
                break;
            }
            continue;
        }
        const uint32_t i = (f - first) / every;
        for (uint32_t b = 0; b < d->backend_count; b++) d->step_ms[b][i] = step_ms[b];
        if ((r = render(d, box, &d->render_ms[i])) != SINEW_OK) {
            fail("rendering a frame", r);
            break;
        }
        snprintf(path, sizeof path, "%s/frames/frame_%04u.png", d->opt->out, f);
        last = f;
        double t0 = sample_now_seconds();
        if ((r = sinew_png_write(path, d->width, d->height, d->image, NULL)) != SINEW_OK) {
            fail("writing a frame", r);
            break;
        }
        d->write_ms[i] = 1000.0 * (sample_now_seconds() - t0);
        /* Pick k is frame first + round(k (count - 1) / (picks - 1)). */
        uint32_t want = picks > 1 ? (uint32_t)((double)pick * (count - 1) / (picks - 1) + 0.5)
                                  : 0;
        if (pick < picks && i == want) {
            paste_thumbnail(d, factor, sheet, sheet_w,
                            SHEET_GAP + (pick % sheet_cols) * (tw + SHEET_GAP),
                            SHEET_GAP + (pick / sheet_cols) * (th + SHEET_GAP));
            pick++;
        }
    }
    remove_skins(d);
    if (r == SINEW_OK) {
        printf("wrote %s/frames/frame_%04u.png .. frame_%04u.png (%u frames, every %u, "
               "%ux%u)\n", d->opt->out, first, last, count, every, d->width, d->height);
        snprintf(path, sizeof path, "%s/contact_sheet.png", d->opt->out);
        r = sinew_png_write(path, sheet_w, sheet_h, sheet, NULL);
        if (r == SINEW_OK)
            printf("wrote %s (%u frames, %ux%u)\n", path, picks, sheet_w, sheet_h);
        else
            fail("writing the contact sheet", r);
    }
    free(sheet);
    return r == SINEW_OK ? SAMPLE_EXIT_OK : SAMPLE_EXIT_FAILURE;
}

static void print_figures(demo* d)
{
    const uint32_t count = drawn_frames(d->opt);
    const char* motion = d->animation ? (d->animation->name ? d->animation->name : "unnamed")
                                      : "built-in bend-and-twist";
    printf("per step over %u drawn frames of %s (%u vertices, %u threads):\n", count, motion,
           d->vertices, sinew_world_thread_count(d->world));
    for (uint32_t b = 0; b < d->backend_count; b++)
        printf("  %-6s %.3f ms per step (median)\n", d->backends[b],
               sample_quantile(d->step_ms[b], count, 0.5));
    sinew_renderer_info info = SINEW_RENDERER_INFO_INIT;
    sinew_renderer_get_info(d->renderer, &info);
    sinew_vk_context_info vk = SINEW_VK_CONTEXT_INFO_INIT;
    sinew_vk_context_get_info(d->vk, &vk);
    printf("render: %.2f ms per frame (median, from %s, %ux%u, %u columns, %ux MSAA, %s), "
           "PNG write %.2f ms\n", sample_quantile(d->render_ms, count, 0.5),
           d->opt->host_arrays ? "host arrays" : "Vulkan output buffers", d->width, d->height,
           d->backend_count, info.samples, vk.device_name,
           sample_quantile(d->write_ms, count, 0.5));
}

/* ---------------------------------------------------------------------------------------- */
/* Options and main                                                                         */
/* ---------------------------------------------------------------------------------------- */

static int parse_range(const char* text, uint32_t* first, uint32_t* end)
{
    unsigned a = 0, b = 0;
    char tail = 0;
    if (sscanf(text, "%u:%u%c", &a, &b, &tail) != 2 || b <= a || b > 1000000) {
        fprintf(stderr, "sinew-demo: --frames %s is not A:B with A < B <= 1000000\n", text);
        return 0;
    }
    *first = a;
    *end = b;
    return 1;
}

static int parse_size(const char* text, uint32_t* w, uint32_t* h)
{
    unsigned a = 0, b = 0;
    char tail = 0;
    if (sscanf(text, "%ux%u%c", &a, &b, &tail) != 2 || a == 0 || b == 0 ||
        a > SINEW_RENDER_MAX_SIZE || b > SINEW_RENDER_MAX_SIZE) {
        fprintf(stderr, "sinew-demo: --size %s is not WxH with sides 1..%d\n", text,
                SINEW_RENDER_MAX_SIZE);
        return 0;
    }
    *w = a;
    *h = b;
    return 1;
}

/* The backends to show: --backends, --backend, or the defaults that can run here. */
static int choose_backends(demo* d)
{
    if (d->opt->backends_text || d->opt->backend) {
        char* text = d->opt->backends_text;
        if (!text) {
            d->backends[d->backend_count++] = d->opt->backend;
        } else {
            for (char* name = strtok(text, ","); name; name = strtok(NULL, ",")) {
                if (d->backend_count == MAX_BACKENDS) {
                    fprintf(stderr, "sinew-demo: at most %d backends\n", MAX_BACKENDS);
                    return SAMPLE_EXIT_USAGE;
                }
                d->backends[d->backend_count++] = name;
            }
        }
        for (uint32_t b = 0; b < d->backend_count; b++) {
            /* Without a device the vk-* backends are not registered; the run is skipped. */
            if (!d->vk && strncmp(d->backends[b], "vk-", 3) == 0) continue;
            sinew_result r = sinew_world_probe_backend(d->world, d->backends[b]);
            if (r != SINEW_OK) {
                fprintf(stderr, "sinew-demo: backend %s: %s\n", d->backends[b],
                        sinew_result_string(r));
                return SAMPLE_EXIT_FAILURE;
            }
        }
    } else {
        for (size_t i = 0; i < sizeof DEFAULT_BACKENDS / sizeof *DEFAULT_BACKENDS; i++)
            if (sinew_world_probe_backend(d->world, DEFAULT_BACKENDS[i]) == SINEW_OK)
                d->backends[d->backend_count++] = DEFAULT_BACKENDS[i];
    }
    if (d->backend_count == 0) {
        fprintf(stderr, "sinew-demo: no backend given\n");
        return SAMPLE_EXIT_USAGE;
    }
    return SAMPLE_EXIT_OK;
}

/* The Vulkan context, made before the backends are chosen so that vk-lbs and vk-dqs are
 * registered. Without a device d->vk stays NULL and the run is skipped once the command
 * line's backends have been checked (a bad name is still an error). */
static int setup_context(demo* d)
{
    sinew_vk_context_desc desc = SINEW_VK_CONTEXT_DESC_INIT;
    desc.flags = SINEW_VK_CONTEXT_GRAPHICS |
                 (d->opt->validation ? SINEW_VK_CONTEXT_VALIDATION : 0u);
    desc.logger = sample_stderr_logger();
    sinew_result r = sinew_vk_context_create(&desc, &d->vk);
    if (r == SINEW_ERROR_NO_DEVICE && !require_vulkan()) return SAMPLE_EXIT_OK;
    if (r != SINEW_OK) return fail("creating the Vulkan context", r);
    sinew_vk_context_info info = SINEW_VK_CONTEXT_INFO_INIT;
    if ((r = sinew_vk_context_get_info(d->vk, &info)) != SINEW_OK)
        return fail("sinew_vk_context_get_info", r);
    d->device = info.device;
    if ((r = sinew_vk_register_backends(d->world, d->vk)) != SINEW_OK)
        return fail("sinew_vk_register_backends", r);
    return SAMPLE_EXIT_OK;
}

/* One output per column for the skins to write: device-local for the Vulkan module's compute
 * backends (vk-*), which write on the device, host-visible and mapped for every other
 * backend, which writes through the mapping. */
static int create_outputs(demo* d)
{
    for (uint32_t b = 0; b < d->backend_count; b++) {
        sinew_vk_output_desc od = SINEW_VK_OUTPUT_DESC_INIT;
        od.vertex_capacity = d->vertices;
        od.flags = strncmp(d->backends[b], "vk-", 3) == 0 ? SINEW_VK_OUTPUT_DEVICE_LOCAL : 0u;
        sinew_result r = sinew_vk_output_create(d->vk, &od, &d->outputs[b]);
        if (r != SINEW_OK) return fail("sinew_vk_output_create", r);
    }
    return SAMPLE_EXIT_OK;
}

static int setup_renderer(demo* d)
{
    sinew_renderer_desc rd = SINEW_RENDERER_DESC_INIT;
    rd.width = d->width;
    rd.height = d->height;
    rd.max_meshes = MAX_BACKENDS;
    sinew_result r = sinew_renderer_create(d->vk, &rd, &d->renderer);
    if (r != SINEW_OK) return fail("creating the renderer", r);
    d->image = malloc((size_t)d->width * d->height * 4u);
    if (!d->image) return fail("allocating the image", SINEW_ERROR_OUT_OF_MEMORY);
    return SAMPLE_EXIT_OK;
}

static int run(demo* d)
{
    demo_options* opt = d->opt;
    sinew_world_desc wd = SINEW_WORLD_DESC_INIT;
    wd.logger = sample_stderr_logger();
    wd.thread_count = opt->threads;
    sinew_result r = sinew_world_create(&wd, &d->world);
    if (r != SINEW_OK) return fail("sinew_world_create", r);
    int status = setup_context(d);
    if (status == SAMPLE_EXIT_OK) status = choose_backends(d);
    if (status != SAMPLE_EXIT_OK) return status;
    if (!d->vk) {
        fprintf(stderr, "sinew-demo: skipped, no Vulkan device with graphics (install a "
                        "driver, e.g. mesa-vulkan-drivers; SINEW_REQUIRE_VULKAN=1 makes this "
                        "an error)\n");
        return SAMPLE_EXIT_SKIP;
    }

    r = load_character(d);
    if (r == SINEW_ERROR_FILE_NOT_FOUND && !sample_require_data()) {
        fprintf(stderr, "sinew-demo: skipped, %s is missing (SINEW_REQUIRE_DATA=1 makes this "
                        "an error)\n", opt->character);
        return SAMPLE_EXIT_SKIP;
    }
    if (r != SINEW_OK) return fail("loading the character", r);
    const sinew_rig_desc* rig = &d->character.rig;
    if ((r = sinew_rig_create(d->world, rig, &d->rig)) != SINEW_OK)
        return fail("sinew_rig_create", r);
    sinew_rig_info info = SINEW_RIG_INFO_INIT;
    sinew_rig_get_info(d->world, d->rig, &info);
    d->vertices = info.vertex_count;
    d->triangles = info.triangle_count;
    d->joints = info.joint_count;
    if ((r = sinew_rig_get_mesh(d->world, d->rig, NULL, NULL, &d->indices)) != SINEW_OK)
        return fail("sinew_rig_get_mesh", r);
    pick_up_axis(d);

    d->joint = opt->joint ? sample_find_joint(&d->character, opt->joint)
                          : demo_default_joint(&d->character);
    if (opt->joint && d->joint < 0) {
        fprintf(stderr, "sinew-demo: --joint %s: no such joint in %s\n", opt->joint,
                d->character.source);
        return SAMPLE_EXIT_USAGE;
    }
    if (d->character.animation_count > 0) {
        if (opt->animation >= d->character.animation_count) {
            fprintf(stderr, "sinew-demo: --animation %u: %s has %u\n", opt->animation,
                    d->character.source, d->character.animation_count);
            return SAMPLE_EXIT_USAGE;
        }
        d->animation = &d->character.animations[opt->animation];
    } else if (d->joint < 0) {
        fprintf(stderr, "sinew-demo: %s has no animation and no joint to move\n",
                d->character.source);
        return SAMPLE_EXIT_FAILURE;
    }
    printf("character %s: %u vertices, %u triangles, %u joints; backends", d->character.source,
           d->vertices, d->triangles, d->joints);
    for (uint32_t b = 0; b < d->backend_count; b++) printf(" %s", d->backends[b]);
    printf("; drawn from %s\n", opt->host_arrays ? "host arrays (--host-arrays)"
                                                  : "each skin's Vulkan output buffers");

    d->width = opt->width ? opt->width : COLUMN_WIDTH * d->backend_count;
    d->height = opt->height ? opt->height : DEFAULT_HEIGHT;
    if (d->width < d->backend_count) {
        fprintf(stderr, "sinew-demo: --size: %u columns need a width of at least %u\n",
                d->backend_count, d->backend_count);
        return SAMPLE_EXIT_USAGE;
    }
    if ((status = setup_renderer(d)) != SAMPLE_EXIT_OK) return status;
    if (!opt->host_arrays && (status = create_outputs(d)) != SAMPLE_EXIT_OK) return status;
    const uint32_t count = drawn_frames(opt);
    d->pose = malloc(sizeof(float) * 16 * d->joints);
    d->render_ms = calloc(count, sizeof(double));
    d->write_ms = calloc(count, sizeof(double));
    if (!d->pose || !d->render_ms || !d->write_ms)
        return fail("allocating", SINEW_ERROR_OUT_OF_MEMORY);
    for (uint32_t b = 0; b < d->backend_count; b++) {
        d->positions[b] = malloc(sizeof(float) * 3 * d->vertices);
        d->normals[b] = malloc(sizeof(float) * 3 * d->vertices);
        d->step_ms[b] = calloc(count, sizeof(double));
        if (!d->positions[b] || !d->normals[b] || !d->step_ms[b])
            return fail("allocating", SINEW_ERROR_OUT_OF_MEMORY);
    }
    if (!make_dirs(opt->out)) {
        fprintf(stderr, "sinew-demo: cannot create %s: %s\n", opt->out, strerror(errno));
        return SAMPLE_EXIT_FAILURE;
    }

    /* Quality figures need the welded topology of the rest mesh (open meshes get no volume). */
    sample_topology topo;
    memset(&topo, 0, sizeof topo);
    const int have_topo = sample_topology_build(rig->render_mesh.positions,
                                                rig->render_mesh.vertex_count,
                                                rig->render_mesh.indices,
                                                rig->render_mesh.triangle_count,
                                                &topo) == SINEW_OK;
    double rest_volume = have_topo && topo.closed
        ? sample_enclosed_volume(&topo, rig->render_mesh.positions) : NAN;
    double t0 = sample_now_seconds();
    status = run_compare(d, have_topo ? &topo : NULL, rest_volume);
    sample_topology_free(&topo);
    if (status == SAMPLE_EXIT_OK) status = run_animation(d);
    if (status == SAMPLE_EXIT_OK) {
        print_figures(d);
        printf("total %.1f s\n", sample_now_seconds() - t0);
    }
    if (opt->validation) {
        sinew_vk_context_info vk = SINEW_VK_CONTEXT_INFO_INIT;
        sinew_vk_context_get_info(d->vk, &vk);
        if (vk.validation_messages != 0) {
            fprintf(stderr, "sinew-demo: %llu Vulkan validation messages\n",
                    (unsigned long long)vk.validation_messages);
            status = SAMPLE_EXIT_FAILURE;
        }
    }
    return status;
}

/* Outputs before the world (each unbinds its skin), the world (its vk-* skins) before the
 * context they run on. */
static void cleanup(demo* d)
{
    sinew_renderer_destroy(d->renderer);
    for (uint32_t b = 0; b < MAX_BACKENDS; b++) sinew_vk_output_destroy(d->outputs[b]);
    sinew_world_destroy(d->world);
    sinew_vk_context_destroy(d->vk);
    sample_character_free(&d->character);
    for (uint32_t b = 0; b < MAX_BACKENDS; b++) {
        free(d->positions[b]);
        free(d->normals[b]);
        free(d->step_ms[b]);
    }
    free(d->pose);
    free(d->image);
    free(d->render_ms);
    free(d->write_ms);
}

int main(int argc, char** argv)
{
    demo_options opt;
    memset(&opt, 0, sizeof opt);
    opt.first = DEFAULT_FIRST;
    opt.end = DEFAULT_END;
    opt.every = DEFAULT_EVERY;
    opt.out = "out";
    int status = SAMPLE_EXIT_OK;
    for (int i = 1; i < argc; ++i) {
        const char* value = NULL;
        int m;
        if (sample_option_flag(argv, i, "--help") || sample_option_flag(argv, i, "-h")) {
            usage(stdout);
            goto done;
        } else if (sample_option_flag(argv, i, "--validation")) {
            opt.validation = 1;
        } else if (sample_option_flag(argv, i, "--host-arrays")) {
            opt.host_arrays = 1;
        } else if ((m = sample_shared_option(argc, argv, &i, &opt.character, &opt.backend,
                                             &opt.threads, &opt.params)) != 0) {
            if (m < 0) goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--backends", &value)) != 0) {
            if (m < 0) goto usage_error;
            free(opt.backends_text);
            opt.backends_text = strdup(value);
            if (!opt.backends_text) {
                status = fail("copying --backends", SINEW_ERROR_OUT_OF_MEMORY);
                goto done;
            }
        } else if ((m = sample_option_value(argc, argv, &i, "--frames", &value)) != 0) {
            if (m < 0 || !parse_range(value, &opt.first, &opt.end)) goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--every", &value)) != 0) {
            if (m < 0 || !sample_parse_u32("--every", value, 1, 1000000, &opt.every))
                goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--size", &value)) != 0) {
            if (m < 0 || !parse_size(value, &opt.width, &opt.height)) goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--animation", &value)) != 0) {
            if (m < 0 || !sample_parse_u32("--animation", value, 0, 1000000, &opt.animation))
                goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--pose", &value)) != 0) {
            sample_pose_spec spec;
            if (m < 0 || !sample_pose_parse(value, &spec)) goto usage_error;
            opt.pose = value;
        } else if ((m = sample_option_value(argc, argv, &i, "--joint", &value)) != 0) {
            if (m < 0) goto usage_error;
            opt.joint = value;
        } else if ((m = sample_option_value(argc, argv, &i, "--out", &value)) != 0) {
            if (m < 0 || !*value) goto usage_error;
            opt.out = value;
        } else {
            fprintf(stderr, "sinew-demo: unknown option %s\n", argv[i]);
            goto usage_error;
        }
    }
    {
        demo d;
        memset(&d, 0, sizeof d);
        d.opt = &opt;
        status = run(&d);
        cleanup(&d);
    }
    goto done;
usage_error:
    usage(stderr);
    status = SAMPLE_EXIT_USAGE;
done:
    free(opt.backends_text);
    sample_params_free(&opt.params);
    return status;
}
