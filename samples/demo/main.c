/* sinew-demo: one character skinned by every available backend side by side, rendered
 * headless with Vulkan. SPDX-License-Identifier: MIT
 *
 * Writes <out>/compare.png (strong static bends, the backends in columns, each labelled with
 * its name and figures, the whole body above and a close-up of every bent joint below, where
 * their difference shows), <out>/frames/frame_NNNN.png (the animation, all backends in every
 * frame) and <out>/contact_sheet.png (a grid of those frames), and prints per-backend
 * figures: time per skinning step, and the self-intersections, volume ratio and local volume
 * ratios at the compare pose. --color volume paints the skin by its local volume change.
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

#include "demo_compare.h"
#include "sample_character.h"
#include "sample_log.h"
#include "sample_metrics.h"
#include "sample_options.h"
#include "sample_quality.h"
#include "sample_stats.h"
#include "sample_text.h"
#include "sample_tissue.h"
#include "sample_vertex_volume.h"

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
    SHEET_GAP = 4,
    MAX_TURNS = 4           /* joints a compare pose bends at once (--bend) */
};
/* How long the reader waits for a published frame's `written` signal before it gives up (a
 * lost signal would otherwise hang the demo). */
static const uint64_t WRITTEN_TIMEOUT_NS = 60ull * 1000000000ull;
static const float DT = 1.0f / 60.0f;
#define DEMO_PI 3.14159265358979323846
static const char* const DEFAULT_POSE = "bend:120";
/* The default compare pose of a character that has both joints (the male): the left elbow
 * and the right knee flexed 120 degrees together, each in its anatomical direction. The
 * elbow's bend axis (sample_joint_axes) is its hinge, and it flexes the negative way; the
 * knee's bend axis swings the shin sideways through the other thigh, so the knee turns about
 * the model's lateral axis (x: the male faces -y with z up), which lifts the heel back. */
static const struct {
    const char* joint;
    const char* pose;
} DEFAULT_TURNS[] = {{"l_elbow", "bend:-120"}, {"r_knee", "axis:1:0:0:120"}};
/* --color volume: ratios from 1 / range (blue) to range (red). */
static const float DEFAULT_COLOR_RANGE = 2.0f;
/* A close-up's box, either side of the posed joint: this many joint radii, at least this
 * many times the joint's distance to the nearest rest skin vertex (a thick part, where the
 * volumetric skeleton's sphere is small or absent) and this fraction of the rest body's
 * largest side. */
static const float CLOSEUP_JOINT_RADII = 4.0f;
static const float CLOSEUP_SKIN_DISTANCES = 2.0f;
static const float CLOSEUP_MIN_FRACTION = 0.06f;
/* Backends shown by default, in this order, when registered and able to run here. */
static const char* const DEFAULT_BACKENDS[] = {"lbs", "dqs", "ps", "fps"};

static void usage(FILE* out)
{
    fprintf(out,
        "usage: sinew-demo [options]\n"
        "\n"
        "Skins one character with every available backend side by side (lbs | dqs | ps | fps\n"
        "as registered), renders it headless with Vulkan and writes:\n"
        "  OUT/compare.png         the compare pose, one column per backend: labels (name,\n"
        "                          volume ratio, local volume ratio per bent joint,\n"
        "                          intersecting triangle pairs), the whole body, then one\n"
        "                          close-up row per bent joint\n"
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
        "  --pose SPEC        the compare pose: bend:DEG, twist:DEG, axis:X:Y:Z:DEG or\n"
        "                     anim:K:FRAME at one joint (default %s), ramped over %d steps\n"
        "                     and settled for %d\n"
        "  --joint NAME       the joint of --pose and of the built-in motion (default: the\n"
        "                     first knee, else elbow, else the middle joint of the longest\n"
        "                     chain)\n"
        "  --bend JOINT:DEG   bend JOINT by DEG in the compare pose, repeatable (up to %d\n"
        "                     joints with --turn, turned together; replaces --pose)\n"
        "  --turn JOINT=SPEC  turn JOINT by bend:DEG, twist:DEG or axis:X:Y:Z:DEG in the\n"
        "                     compare pose, like --bend. Default on a character with l_elbow\n"
        "                     and r_knee (the male), when none of --pose, --joint, --bend,\n"
        "                     --turn is given: --turn l_elbow=bend:-120\n"
        "                     --turn r_knee=axis:1:0:0:120\n"
        "  --color MODE       skin (default) or volume[:R]: each vertex coloured by its local\n"
        "                     volume change (posed over rest volume of its one-ring's cone to\n"
        "                     the bone), blue at 1/R and below, white at 1, red at R and above\n"
        "                     (R > 1, default %.0f), with a colour bar in the images\n"
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
        SAMPLE_RAMP_STEPS, SETTLE_STEPS, MAX_TURNS, (double)DEFAULT_COLOR_RANGE, COLUMN_WIDTH,
        DEFAULT_HEIGHT);
}

/* One --bend or --turn: the joint's name and its static pose (bend, twist or axis). */
typedef struct demo_turn {
    char* joint;                /* owned copy */
    sample_pose_spec spec;
} demo_turn;

typedef struct demo_options {
    const char* character;
    const char* backend;            /* --backend */
    char* backends_text;            /* --backends, owned copy */
    uint32_t first, end, every;
    uint32_t animation;
    const char* pose;
    const char* joint;
    demo_turn turns[MAX_TURNS];     /* --bend and --turn, in the order given */
    uint32_t turn_count;
    float color_range;              /* --color volume[:R]; 0: skin colour */
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
    sinew_pose_space pose_space;    /* of `pose` */
    float* model;                   /* `pose` in model space, where the demo needs it */
    float up[3];
    float rest_box[6];              /* of the render mesh: min xyz, max xyz */
    int32_t joint;                  /* --pose and motion joint, -1 when none */
    /* The compare pose: joints turned together from the bind pose (none for an animation
     * frame), each by bend and twist degrees about its axes, or about a model-space axis. */
    uint32_t turn_count;
    int32_t turn_joint[MAX_TURNS];
    float turn_bend[MAX_TURNS], turn_twist[MAX_TURNS];
    float turn_axis_degrees[MAX_TURNS], turn_axis[MAX_TURNS][3];
    /* Welded rest topology for the figures (have_topology), the tissue model's joint radii
     * for local_volume_ratio and the close-ups, and with --color volume the per-vertex
     * measure (have_volume) and each column's colours. */
    sample_topology topology;
    int have_topology;
    sample_tissue tissue;
    sample_vertex_volume volume;
    int have_volume;
    float* ratios;
    float* colors[MAX_BACKENDS];
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
 * (a lying arm). Keeps the rest box for the close-ups. */
static void pick_up_axis(demo* d)
{
    const float* p = d->character.rig.render_mesh.positions;
    float lo[3] = {p[0], p[1], p[2]}, hi[3] = {p[0], p[1], p[2]};
    for (uint32_t v = 1; v < d->vertices; v++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fminf(lo[k], p[3 * v + k]);
            hi[k] = fmaxf(hi[k], p[3 * v + k]);
        }
    memcpy(d->rest_box, lo, sizeof lo);
    memcpy(d->rest_box + 3, hi, sizeof hi);
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
    d->pose_space = space;
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

/* What one draw of the current frame shows: the camera box (NULL: fitted to the meshes), the
 * view direction (zero: the renderer's three-quarter view) and sinew_render_frame flags. */
typedef struct demo_view {
    const float* bounds;
    float direction[3];
    uint32_t flags;
} demo_view;

/* The reader's side begins (bound skins): waits until every column's latest frame is written
 * and keeps its info (read_slot and offsets) for the draws. *waited says how many columns to
 * release, also after a failure. */
static sinew_result read_begin(demo* d, sinew_vk_output_info* infos, uint32_t* waited)
{
    *waited = 0;
    for (uint32_t b = 0; d->bound && b < d->backend_count; b++) {
        sinew_vk_output_info info = SINEW_VK_OUTPUT_INFO_INIT;
        sinew_result r = wait_written(d, b, &info);
        if (r != SINEW_OK) return r;
        infos[b] = info;
        *waited = b + 1;
    }
    return SINEW_OK;
}

/* ... and ends: releases every waited slot (the draws have finished on the queue when
 * sinew_renderer_draw returns, so the release is a host signal of `read`). Released also
 * after a failed draw: the queue is idle either way, and the writers must not wait for a
 * frame nobody will read. */
static sinew_result read_end(demo* d, const sinew_vk_output_info* infos, uint32_t waited,
                             sinew_result r)
{
    for (uint32_t b = 0; b < waited; b++) {
        sinew_result e = sinew_vk_output_release(d->outputs[b], infos[b].frames);
        if (r == SINEW_OK) r = e;
    }
    return r;
}

/* Draws the current frame as `view` sees it into d->image: from the host arrays, or (bound
 * skins, between read_begin and read_end) from each output's read_slot. The renderer acquires
 * and releases externally written slots itself. Without view bounds the camera fits the
 * meshes: with buffers, the renderer cannot see the vertices, so each mesh's box comes from
 * the host arrays, which the caller has read back (the compare pose); with a view box each
 * mesh gets that box, which the renderer only uses for the camera when the frame has none.
 * With --color volume the columns' colours (update_colors) paint the skin. */
static sinew_result draw_view(demo* d, const sinew_vk_output_info* infos, const demo_view* view)
{
    sinew_render_mesh meshes[MAX_BACKENDS];
    float boxes[MAX_BACKENDS][6];
    const float* colors[MAX_BACKENDS];
    for (uint32_t b = 0; b < d->backend_count; b++) {
        sinew_render_mesh m = SINEW_RENDER_MESH_INIT;
        m.vertex_count = d->vertices;
        m.triangle_count = d->triangles;
        m.indices = d->indices;
        m.column = b;
        if (d->bound) {
            m.position_buffer = infos[b].buffer;
            m.position_offset = infos[b].position_offset;
            m.normal_buffer = infos[b].buffer;
            m.normal_offset = infos[b].normal_offset;
            if (view->bounds) memcpy(boxes[b], view->bounds, sizeof boxes[b]);
            else host_bounds(d, b, boxes[b]);
            m.bounds = boxes[b];
        } else {
            m.positions = d->positions[b];
            m.normals = d->normals[b];
        }
        meshes[b] = m;
        colors[b] = d->colors[b];
    }
    sinew_render_frame frame = SINEW_RENDER_FRAME_INIT;
    frame.meshes = meshes;
    frame.mesh_count = d->backend_count;
    frame.column_count = d->backend_count;
    frame.bounds = view->bounds;
    memcpy(frame.up, d->up, sizeof frame.up);
    memcpy(frame.view_direction, view->direction, sizeof frame.view_direction);
    frame.flags = view->flags;
    frame.vertex_colors = d->opt->color_range > 0.0f ? colors : NULL;
    return sinew_renderer_draw(d->renderer, &frame, d->image,
                               (size_t)d->width * d->height * 4u);
}

/* Draws the latest frame of the animation into d->image within the camera box `bounds`: the
 * wait for `written`, the draw with its readback and the release, which out_ms times. */
static sinew_result render(demo* d, const float* bounds, double* out_ms)
{
    double t0 = sample_now_seconds();
    sinew_vk_output_info infos[MAX_BACKENDS];
    uint32_t waited = 0;
    demo_view view = {bounds, {0.0f, 0.0f, 0.0f}, 0u};
    sinew_result r = read_begin(d, infos, &waited);
    if (r == SINEW_OK) r = draw_view(d, infos, &view);
    r = read_end(d, infos, waited, r);
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

/* The current pose in model space (d->model): the animation's local pose through the rig's
 * forward kinematics, or a copy. */
static sinew_result model_pose(demo* d)
{
    if (d->pose_space == SINEW_POSE_LOCAL)
        return sinew_rig_local_to_model(d->world, d->rig, d->pose, d->model);
    memcpy(d->model, d->pose, sizeof(float) * 16 * d->joints);
    return SINEW_OK;
}

/* With --color volume: every column's vertex colours from its host positions and d->model. */
static void update_colors(demo* d)
{
    if (!d->have_volume) return;
    for (uint32_t b = 0; b < d->backend_count; b++) {
        sample_vertex_volume_ratios(&d->volume, d->positions[b], d->model, d->ratios);
        for (uint32_t v = 0; v < d->vertices; v++)
            sample_volume_color(d->ratios[v], d->opt->color_range, d->colors[b] + 3 * v);
    }
}

/* The compare pose at ramp fraction `a` (0 rest, 1 the target) into d->pose: every turn
 * applied in order from the bind pose (sample_turn_joint carries later joints' axes). */
static sinew_result compare_pose(demo* d, float a)
{
    memcpy(d->pose, d->character.rig.skeleton.bind_matrices, sizeof(float) * 16 * d->joints);
    for (uint32_t i = 0; i < d->turn_count; i++) {
        const uint32_t j = (uint32_t)d->turn_joint[i];
        sinew_result r = sample_turn_joint(&d->character, j, d->turn_bend[i] * a,
                                           d->turn_twist[i] * a, d->pose);
        if (r != SINEW_OK) return r;
        if (d->turn_axis_degrees[i] != 0.0f)
            sample_rotate_subtree(&d->character, j, d->turn_axis[i],
                                  d->turn_axis_degrees[i] * a * (float)(DEMO_PI / 180.0),
                                  d->pose);
    }
    return SINEW_OK;
}

/* Steps every backend into the compare pose (a ramp, as an engine would animate into it,
 * then still frames so that physics backends settle; or the animation up to its frame) and
 * copies the result to the host: the figures and the camera boxes need it. */
static sinew_result pose_compare(demo* d, const sample_pose_spec* spec)
{
    sinew_result r = SINEW_OK;
    if (spec->kind == SAMPLE_POSE_ANIM) {
        for (uint32_t f = 0; f <= spec->frame && r == SINEW_OK; f++) {
            r = sinew_animation_sample(&d->character.animations[spec->animation],
                                       (float)f / 60.0f, 1, d->pose);
            if (r == SINEW_OK) r = step_all(d, SINEW_POSE_LOCAL, NULL);
            if (r == SINEW_OK && f < spec->frame) r = skip_frame(d);
        }
    } else {
        const uint32_t steps = SAMPLE_RAMP_STEPS + SETTLE_STEPS;
        for (uint32_t s = 1; s <= steps && r == SINEW_OK; s++) {
            float a = s >= SAMPLE_RAMP_STEPS ? 1.0f : (float)s / SAMPLE_RAMP_STEPS;
            r = compare_pose(d, a);
            if (r == SINEW_OK) r = step_all(d, SINEW_POSE_MODEL, NULL);
            if (r == SINEW_OK && s < steps) r = skip_frame(d);
        }
    }
    /* One copy to the host (the host-array path has it already). */
    for (uint32_t b = 0; d->bound && b < d->backend_count && r == SINEW_OK; b++)
        r = read_back(d, b);
    return r == SINEW_OK ? model_pose(d) : r;
}

/* One column's figures at the compare pose. */
typedef struct compare_figures {
    uint32_t intersections;
    double volume_ratio;            /* NaN: open mesh or no topology */
    double local[MAX_TURNS];        /* local_volume_ratio per turn; NaN: no region */
} compare_figures;

/* The figures of every column: intersecting triangle pairs and the enclosed volume ratio of
 * the welded mesh, and local_volume_ratio around every turned joint (sample_local_region,
 * sinew-quality's definition). */
static int measure_compare(demo* d, compare_figures* figures)
{
    const sinew_rig_desc* rig = &d->character.rig;
    const sample_topology* topo = d->have_topology ? &d->topology : NULL;
    const double rest_volume = topo && topo->closed
        ? sample_enclosed_volume(topo, rig->render_mesh.positions) : NAN;
    sample_local_region regions[MAX_TURNS];
    memset(regions, 0, sizeof regions);
    sinew_result r = SINEW_OK;
    for (uint32_t i = 0; i < d->turn_count && topo && d->tissue.joint_radius && r == SINEW_OK;
         i++)
        r = sample_local_region_build(topo, &d->character, &d->tissue,
                                      (uint32_t)d->turn_joint[i], &regions[i]);
    for (uint32_t b = 0; b < d->backend_count && r == SINEW_OK; b++) {
        compare_figures* f = &figures[b];
        f->intersections = topo ? sample_count_self_intersections(topo, d->positions[b]) : 0;
        f->volume_ratio = topo && topo->closed && rest_volume > 0.0
            ? sample_enclosed_volume(topo, d->positions[b]) / rest_volume : NAN;
        for (uint32_t i = 0; i < d->turn_count; i++)
            f->local[i] = sample_local_region_ratio(&regions[i], topo, d->positions[b],
                                                    d->model);
    }
    for (uint32_t i = 0; i < d->turn_count; i++) sample_local_region_free(&regions[i]);
    return r == SINEW_OK ? SAMPLE_EXIT_OK : fail("selecting the local volume regions", r);
}

static const char* joint_label(const demo* d, int32_t joint, char* buf, size_t size)
{
    const char* const* names = d->character.rig.skeleton.names;
    if (names && names[joint]) return names[joint];
    snprintf(buf, size, "joint %d", (int)joint);
    return buf;
}

/* The figure lines of one column's label: the volume ratio, local_volume_ratio per turned
 * joint, the intersecting pairs. Returns how many. */
static uint32_t figure_lines(const demo* d, const compare_figures* f, char lines[][96])
{
    uint32_t n = 0;
    if (isfinite(f->volume_ratio)) snprintf(lines[n++], 96, "volume %.4f", f->volume_ratio);
    else snprintf(lines[n++], 96, "volume n/a");
    for (uint32_t i = 0; i < d->turn_count; i++) {
        char buf[32];
        const char* name = joint_label(d, d->turn_joint[i], buf, sizeof buf);
        if (isfinite(f->local[i])) snprintf(lines[n++], 96, "%s local %.3f", name, f->local[i]);
        else snprintf(lines[n++], 96, "%s local n/a", name);
    }
    if (d->have_topology) snprintf(lines[n++], 96, "intersections %u", f->intersections);
    else snprintf(lines[n++], 96, "intersections n/a");
    return n;
}

/* The distance from joint j's rest centre to the nearest vertex of the rest mesh. */
static float skin_distance(const demo* d, uint32_t j)
{
    const float* c = d->character.rig.skeleton.bind_matrices + 16 * (size_t)j + 12;
    const float* p = d->character.rig.render_mesh.positions;
    float best = INFINITY;
    for (uint32_t v = 0; v < d->vertices; v++) {
        float dx = p[3 * v] - c[0], dy = p[3 * v + 1] - c[1], dz = p[3 * v + 2] - c[2];
        best = fminf(best, dx * dx + dy * dy + dz * dz);
    }
    return sqrtf(best);
}

/* Close-up i of compare.png: a box around turn i's joint at its posed centre (its half side
 * from the CLOSEUP_* constants), seen along the joint's bend axis (or the axis of an axis
 * turn) from the side away from the body's centre (the turn's plane face on, so the crease
 * and the bulge show in profile), without the floor. */
static void closeup_view(const demo* d, uint32_t i, float box[6], demo_view* view)
{
    const uint32_t j = (uint32_t)d->turn_joint[i];
    const float* centre = d->model + 16 * (size_t)j + 12;
    float body = 0.0f, body_centre[3];
    for (int k = 0; k < 3; k++) {
        body = fmaxf(body, d->rest_box[k + 3] - d->rest_box[k]);
        body_centre[k] = 0.5f * (d->rest_box[k] + d->rest_box[k + 3]);
    }
    float half = fmaxf(CLOSEUP_MIN_FRACTION * body, CLOSEUP_SKIN_DISTANCES * skin_distance(d, j));
    if (d->tissue.joint_radius)
        half = fmaxf(half, CLOSEUP_JOINT_RADII * (float)d->tissue.joint_radius[j]);
    for (int k = 0; k < 3; k++) {
        box[k] = centre[k] - half;
        box[k + 3] = centre[k] + half;
    }
    memset(view, 0, sizeof *view);
    view->bounds = box;
    view->flags = SINEW_RENDER_FRAME_NO_FLOOR;
    float twist[3], bend[3];
    if (d->turn_axis_degrees[i] != 0.0f) {
        /* A turn about a model-space axis leaves that axis fixed: its plane face on. */
        memcpy(view->direction, d->turn_axis[i], sizeof view->direction);
    } else if (d->turn_bend[i] != 0.0f &&
               sample_joint_axes(&d->character, j, twist, bend) == SINEW_OK) {
        sample_joint_turned_direction(&d->character, j, d->model, bend, view->direction);
    } else {
        return;   /* a twist: the renderer's three-quarter view */
    }
    float out = 0.0f;
    for (int k = 0; k < 3; k++) out += view->direction[k] * (centre[k] - body_centre[k]);
    if (out < 0.0f)
        for (int k = 0; k < 3; k++) view->direction[k] = -view->direction[k];
}

/* The rows of compare.png: the whole body (camera fitted to every column's shape), then the
 * close-ups, all drawn from the same published frame between one wait and one release. */
static sinew_result draw_compare_rows(demo* d, sample_image* image,
                                      const compare_layout* layout)
{
    sinew_vk_output_info infos[MAX_BACKENDS];
    uint32_t waited = 0;
    sinew_result r = read_begin(d, infos, &waited);
    for (uint32_t row = 0; row < layout->rows && r == SINEW_OK; row++) {
        demo_view view = {NULL, {0.0f, 0.0f, 0.0f}, 0u};
        float box[6];
        if (row > 0) closeup_view(d, row - 1, box, &view);
        r = draw_view(d, infos, &view);
        if (r == SINEW_OK) compare_paste_row(image, layout, row, d->image);
    }
    return read_end(d, infos, waited, r);
}

/* Labels, captions and the colour bar over the pasted rows. */
static void draw_compare_text(demo* d, sample_image* image, const compare_layout* layout,
                              const compare_figures* figures)
{
    for (uint32_t b = 0; b < d->backend_count; b++) {
        char lines[2 + MAX_TURNS][96];
        const char* pointers[2 + MAX_TURNS];
        uint32_t n = figure_lines(d, &figures[b], lines);
        for (uint32_t i = 0; i < n; i++) pointers[i] = lines[i];
        compare_draw_labels(image, layout, b, d->backends[b], pointers, n);
    }
    for (uint32_t i = 0; i < d->turn_count; i++) {
        char buf[32], caption[160];
        const char* name = joint_label(d, d->turn_joint[i], buf, sizeof buf);
        const float deg = d->turn_bend[i] != 0.0f ? d->turn_bend[i]
                        : d->turn_twist[i] != 0.0f ? d->turn_twist[i] : d->turn_axis_degrees[i];
        const char* how = d->turn_bend[i] != 0.0f ? "bend" : d->turn_twist[i] != 0.0f ? "twist"
                                                                                      : "axis turn";
        snprintf(caption, sizeof caption, "close-up: %s, %s %g", name, how, (double)deg);
        compare_draw_caption(image, layout, 1 + i, caption);
    }
    compare_draw_footer(image, layout, d->opt->color_range);
    compare_draw_frame(image, layout);
}

/* compare.png: the label band, the full-body row, one close-up row per turned joint and,
 * with --color volume, the colour bar (demo_compare.h has the layout). */
static int render_compare(demo* d, const compare_figures* figures, const char* path)
{
    compare_layout layout;
    compare_layout_make(d->width, d->height, d->backend_count, 2 + d->turn_count,
                        d->turn_count, d->opt->color_range > 0.0f, &layout);
    sample_image image = {malloc((size_t)layout.width * layout.height * 4u), layout.width,
                          layout.height};
    if (!image.rgba) return fail("allocating compare.png", SINEW_ERROR_OUT_OF_MEMORY);
    compare_clear(&image, &layout);
    update_colors(d);
    sinew_result r = draw_compare_rows(d, &image, &layout);
    if (r == SINEW_OK) {
        draw_compare_text(d, &image, &layout, figures);
        r = sinew_png_write(path, image.width, image.height, image.rgba, NULL);
    }
    free(image.rgba);
    if (r != SINEW_OK) return fail("rendering or writing compare.png", r);
    printf("wrote %s (%ux%u: labels, the whole body, %u close-up row%s%s)\n", path,
           layout.width, layout.height, d->turn_count, d->turn_count == 1 ? "" : "s",
           layout.footer_height ? ", the colour bar" : "");
    return SAMPLE_EXIT_OK;
}

/* The figures as text, one line per column. */
static void print_compare(const demo* d, const compare_figures* figures)
{
    for (uint32_t b = 0; b < d->backend_count; b++) {
        const compare_figures* f = &figures[b];
        printf("  %-6s at the compare pose: ", d->backends[b]);
        if (d->have_topology) printf("%u self-intersecting triangle pairs", f->intersections);
        if (isfinite(f->volume_ratio)) printf(", volume ratio %.4f", f->volume_ratio);
        else if (d->have_topology) printf(", volume ratio n/a (open mesh)");
        for (uint32_t i = 0; i < d->turn_count; i++) {
            char buf[32], value[32];
            if (isfinite(f->local[i])) snprintf(value, sizeof value, "%.3f", f->local[i]);
            else snprintf(value, sizeof value, "n/a");
            printf(", local volume ratio %s at %s", value,
                   joint_label(d, d->turn_joint[i], buf, sizeof buf));
        }
        printf("\n");
    }
}

/* Ramps every backend to the compare pose, lets physics settle, measures each backend's
 * result and writes compare.png. */
static int run_compare(demo* d, const sample_pose_spec* spec, const char* pose_text)
{
    if (add_skins(d, !d->opt->host_arrays) != SINEW_OK) return SAMPLE_EXIT_FAILURE;
    sinew_result r = pose_compare(d, spec);
    if (r != SINEW_OK) return fail("posing the compare frame", r);
    compare_figures figures[MAX_BACKENDS];
    memset(figures, 0, sizeof figures);
    int status = measure_compare(d, figures);
    char path[4096];
    snprintf(path, sizeof path, "%s/compare.png", d->opt->out);
    if (status == SAMPLE_EXIT_OK) status = render_compare(d, figures, path);
    if (status != SAMPLE_EXIT_OK) return status;
    printf("compare pose %s, columns", pose_text);
    for (uint32_t b = 0; b < d->backend_count; b++) printf(" %s", d->backends[b]);
    printf("\n");
    print_compare(d, figures);
    remove_skins(d);
    return SAMPLE_EXIT_OK;
}

/* --color volume on an animation frame: the shapes on the host (bound skins are read back)
 * and the pose in model space, then the colours. Nothing without it. */
static sinew_result frame_colors(demo* d)
{
    if (!d->have_volume) return SINEW_OK;
    sinew_result r = SINEW_OK;
    for (uint32_t b = 0; d->bound && b < d->backend_count && r == SINEW_OK; b++)
        r = read_back(d, b);
    if (r == SINEW_OK) r = model_pose(d);
    if (r == SINEW_OK) update_colors(d);
    return r;
}

/* --color volume: the colour bar at the bottom left of a frame, in the smallest text. */
static void draw_frame_color_bar(demo* d)
{
    if (!d->have_volume) return;
    sample_image image = {d->image, d->width, d->height};
    const int32_t margin = 6;
    compare_draw_color_bar(&image, margin,
                           (int32_t)d->height - margin - (int32_t)sample_text_height(1), 1,
                           d->opt->color_range);
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
        if ((r = frame_colors(d)) != SINEW_OK) {
            fail("colouring a frame", r);
            break;
        }
        if ((r = render(d, box, &d->render_ms[i])) != SINEW_OK) {
            fail("rendering a frame", r);
            break;
        }
        draw_frame_color_bar(d);
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

/* Appends a turn of `name_length` characters of `name` with `spec`. */
static int add_option_turn(demo_options* opt, const char* name, size_t name_length,
                           const sample_pose_spec* spec)
{
    if (opt->turn_count == MAX_TURNS) {
        fprintf(stderr, "sinew-demo: at most %d --bend and --turn joints\n", MAX_TURNS);
        return 0;
    }
    demo_turn* t = &opt->turns[opt->turn_count];
    t->joint = strndup(name, name_length);
    if (!t->joint) return 0;
    t->spec = *spec;
    opt->turn_count++;
    return 1;
}

/* --bend JOINT:DEG (the last colon splits: joint names may hold one). */
static int parse_bend(demo_options* opt, const char* text)
{
    const char* colon = strrchr(text, ':');
    char* end = NULL;
    double degrees = colon ? strtod(colon + 1, &end) : NAN;
    if (!colon || colon == text || end == colon + 1 || *end != '\0' || !isfinite(degrees) ||
        fabs(degrees) > 3600.0) {
        fprintf(stderr, "sinew-demo: --bend %s is not JOINT:DEG with |DEG| <= 3600\n", text);
        return 0;
    }
    sample_pose_spec spec = {SAMPLE_POSE_BEND, (float)degrees, {0.0f, 0.0f, 0.0f}, 0u, 0u};
    return add_option_turn(opt, text, (size_t)(colon - text), &spec);
}

/* --turn JOINT=SPEC (the last '=' splits; a pose spec holds none). */
static int parse_turn(demo_options* opt, const char* text)
{
    const char* eq = strrchr(text, '=');
    sample_pose_spec spec;
    if (!eq || eq == text || !sample_pose_parse(eq + 1, &spec) || spec.kind == SAMPLE_POSE_ANIM) {
        fprintf(stderr, "sinew-demo: --turn %s is not JOINT=bend:DEG, JOINT=twist:DEG or "
                        "JOINT=axis:X:Y:Z:DEG\n", text);
        return 0;
    }
    return add_option_turn(opt, text, (size_t)(eq - text), &spec);
}

/* --color skin | volume | volume:R (R > 1). */
static int parse_color(demo_options* opt, const char* text)
{
    char* end = NULL;
    if (strcmp(text, "skin") == 0) {
        opt->color_range = 0.0f;
        return 1;
    }
    if (strcmp(text, "volume") == 0) {
        opt->color_range = DEFAULT_COLOR_RANGE;
        return 1;
    }
    if (strncmp(text, "volume:", 7) == 0) {
        double range = strtod(text + 7, &end);
        if (end != text + 7 && *end == '\0' && range > 1.0 && range <= 1000.0) {
            opt->color_range = (float)range;
            return 1;
        }
    }
    fprintf(stderr, "sinew-demo: --color %s is not skin, volume or volume:R with 1 < R <= "
                    "1000\n", text);
    return 0;
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

/* Adds one turn of the compare pose: a bend, twist or axis spec at `joint`. */
static void add_turn(demo* d, int32_t joint, const sample_pose_spec* spec)
{
    const uint32_t i = d->turn_count++;
    d->turn_joint[i] = joint;
    d->turn_bend[i] = spec->kind == SAMPLE_POSE_BEND ? spec->degrees : 0.0f;
    d->turn_twist[i] = spec->kind == SAMPLE_POSE_TWIST ? spec->degrees : 0.0f;
    d->turn_axis_degrees[i] = spec->kind == SAMPLE_POSE_AXIS ? spec->degrees : 0.0f;
    memcpy(d->turn_axis[i], spec->axis, sizeof spec->axis);
}

/* Writes "KIND DEG" for a turn's spec into buf. */
static const char* turn_text(const sample_pose_spec* spec, char* buf, size_t size)
{
    const char* kind = spec->kind == SAMPLE_POSE_BEND    ? "bend"
                     : spec->kind == SAMPLE_POSE_TWIST ? "twist"
                                                       : "axis";
    if (spec->kind == SAMPLE_POSE_AXIS)
        snprintf(buf, size, "axis %.3g %.3g %.3g %g", (double)spec->axis[0],
                 (double)spec->axis[1], (double)spec->axis[2], (double)spec->degrees);
    else
        snprintf(buf, size, "%s %g", kind, (double)spec->degrees);
    return buf;
}

/* The compare pose: the --bend and --turn joints, else --pose at the --pose joint, else on a
 * character with the DEFAULT_TURNS joints those, else DEFAULT_POSE at the default joint.
 * `text` gets a description for the log. */
static int choose_turns(demo* d, sample_pose_spec* spec, char* text, size_t size)
{
    const demo_options* opt = d->opt;
    const size_t defaults = sizeof DEFAULT_TURNS / sizeof *DEFAULT_TURNS;
    int use_defaults = !opt->turn_count && !opt->pose && !opt->joint;
    for (size_t i = 0; i < defaults && use_defaults; i++)
        use_defaults = sample_find_joint(&d->character, DEFAULT_TURNS[i].joint) >= 0;
    const uint32_t turns = opt->turn_count ? opt->turn_count
                         : use_defaults ? (uint32_t)defaults : 0u;
    text[0] = '\0';
    for (uint32_t i = 0; i < turns; i++) {
        const char* name = opt->turn_count ? opt->turns[i].joint : DEFAULT_TURNS[i].joint;
        sample_pose_spec turn;
        if (opt->turn_count) turn = opt->turns[i].spec;
        else if (!sample_pose_parse(DEFAULT_TURNS[i].pose, &turn)) return SAMPLE_EXIT_FAILURE;
        const int32_t j = sample_find_joint(&d->character, name);
        if (j < 0) {
            fprintf(stderr, "sinew-demo: --bend/--turn %s: no such joint in %s\n", name,
                    d->character.source);
            return SAMPLE_EXIT_USAGE;
        }
        add_turn(d, j, &turn);
        char buf[96];
        size_t at = strlen(text);
        snprintf(text + at, size - at, "%s%s %s", i ? ", " : "", name,
                 turn_text(&turn, buf, sizeof buf));
    }
    if (turns) return SAMPLE_EXIT_OK;
    const char* pose = opt->pose ? opt->pose : DEFAULT_POSE;
    if (!sample_pose_parse(pose, spec)) return SAMPLE_EXIT_USAGE;
    if (spec->kind == SAMPLE_POSE_ANIM) {
        snprintf(text, size, "%s", pose);
        if (spec->animation < d->character.animation_count) return SAMPLE_EXIT_OK;
        fprintf(stderr, "sinew-demo: --pose %s: %s has %u animations\n", pose,
                d->character.source, d->character.animation_count);
        return SAMPLE_EXIT_USAGE;
    }
    if (d->joint < 0) {
        fprintf(stderr, "sinew-demo: --pose %s needs a joint with a neighbour\n", pose);
        return SAMPLE_EXIT_FAILURE;
    }
    add_turn(d, d->joint, spec);
    char buf[32];
    snprintf(text, size, "%s at %s", pose, joint_label(d, d->joint, buf, sizeof buf));
    return SAMPLE_EXIT_OK;
}

/* Loads the character, makes its rig and picks the --pose / motion joint and the animation. */
static int open_character(demo* d)
{
    const demo_options* opt = d->opt;
    sinew_result r = load_character(d);
    if (r == SINEW_ERROR_FILE_NOT_FOUND && !sample_require_data()) {
        fprintf(stderr, "sinew-demo: skipped, %s is missing (SINEW_REQUIRE_DATA=1 makes this "
                        "an error)\n", opt->character);
        return SAMPLE_EXIT_SKIP;
    }
    if (r != SINEW_OK) return fail("loading the character", r);
    if ((r = sinew_rig_create(d->world, &d->character.rig, &d->rig)) != SINEW_OK)
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
    return SAMPLE_EXIT_OK;
}

/* The image size, the renderer, the outputs and the per-run arrays. */
static int allocate(demo* d)
{
    const demo_options* opt = d->opt;
    d->width = opt->width ? opt->width : COLUMN_WIDTH * d->backend_count;
    d->height = opt->height ? opt->height : DEFAULT_HEIGHT;
    if (d->width < d->backend_count) {
        fprintf(stderr, "sinew-demo: --size: %u columns need a width of at least %u\n",
                d->backend_count, d->backend_count);
        return SAMPLE_EXIT_USAGE;
    }
    int status = setup_renderer(d);
    if (status != SAMPLE_EXIT_OK) return status;
    if (!opt->host_arrays && (status = create_outputs(d)) != SAMPLE_EXIT_OK) return status;
    const uint32_t count = drawn_frames(opt);
    d->pose = malloc(sizeof(float) * 16 * d->joints);
    d->model = malloc(sizeof(float) * 16 * d->joints);
    d->render_ms = calloc(count, sizeof(double));
    d->write_ms = calloc(count, sizeof(double));
    if (!d->pose || !d->model || !d->render_ms || !d->write_ms)
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
    return SAMPLE_EXIT_OK;
}

/* What the figures and colours measure against: the welded rest topology (open meshes get no
 * volume), the tissue model's joint radii (local_volume_ratio's regions and the close-ups'
 * boxes; without them those figures are n/a), and for --color volume the per-vertex measure
 * with the rig's weights. */
static int prepare_measures(demo* d)
{
    const sinew_rig_desc* rig = &d->character.rig;
    d->have_topology = sample_topology_build(rig->render_mesh.positions,
                                             rig->render_mesh.vertex_count,
                                             rig->render_mesh.indices,
                                             rig->render_mesh.triangle_count,
                                             &d->topology) == SINEW_OK;
    sample_tissue_params params;
    if (d->turn_count > 0 &&
        sample_tissue_params_parse(d->opt->params.params, d->opt->params.count, &params) &&
        sample_tissue_build(&d->character, &params, 0, sample_stderr_logger(), &d->tissue) !=
            SINEW_OK)
        fprintf(stderr, "sinew-demo: no volumetric skeleton for %s: local volume ratios are "
                        "n/a\n", d->character.source);
    if (d->opt->color_range <= 0.0f) return SAMPLE_EXIT_OK;
    const uint32_t *offsets = NULL, *joints = NULL;
    const float* weights = NULL;
    sinew_result r = d->have_topology
        ? sinew_rig_get_weights(d->world, d->rig, &offsets, &joints, &weights)
        : SINEW_ERROR_INVALID_ARGUMENT;
    if (r == SINEW_OK)
        r = sample_vertex_volume_build(&d->topology, rig->render_mesh.positions, &rig->skeleton,
                                       offsets, joints, weights, &d->volume);
    if (r != SINEW_OK) return fail("preparing --color volume", r);
    d->have_volume = 1;
    d->ratios = malloc(sizeof(float) * d->vertices);
    for (uint32_t b = 0; b < d->backend_count; b++)
        d->colors[b] = malloc(sizeof(float) * 3 * d->vertices);
    for (uint32_t b = 0; b < d->backend_count; b++)
        if (!d->colors[b] || !d->ratios) return fail("allocating", SINEW_ERROR_OUT_OF_MEMORY);
    return SAMPLE_EXIT_OK;
}

/* The Vulkan context and the backends; SKIP without a device. */
static int open_world(demo* d)
{
    sinew_world_desc wd = SINEW_WORLD_DESC_INIT;
    wd.logger = sample_stderr_logger();
    wd.thread_count = d->opt->threads;
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
    return SAMPLE_EXIT_OK;
}

static int run(demo* d)
{
    int status = open_world(d);
    if (status == SAMPLE_EXIT_OK) status = open_character(d);
    sample_pose_spec spec;
    memset(&spec, 0, sizeof spec);
    char pose_text[512];
    if (status == SAMPLE_EXIT_OK) status = choose_turns(d, &spec, pose_text, sizeof pose_text);
    if (status != SAMPLE_EXIT_OK) return status;
    printf("character %s: %u vertices, %u triangles, %u joints; backends", d->character.source,
           d->vertices, d->triangles, d->joints);
    for (uint32_t b = 0; b < d->backend_count; b++) printf(" %s", d->backends[b]);
    printf("; drawn from %s\n", d->opt->host_arrays ? "host arrays (--host-arrays)"
                                                     : "each skin's Vulkan output buffers");
    if ((status = allocate(d)) != SAMPLE_EXIT_OK) return status;
    double t0 = sample_now_seconds();
    status = prepare_measures(d);
    if (status == SAMPLE_EXIT_OK) status = run_compare(d, &spec, pose_text);
    if (status == SAMPLE_EXIT_OK) status = run_animation(d);
    if (status == SAMPLE_EXIT_OK) {
        print_figures(d);
        printf("total %.1f s\n", sample_now_seconds() - t0);
    }
    if (d->opt->validation) {
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
        free(d->colors[b]);
    }
    sample_vertex_volume_free(&d->volume);
    sample_tissue_free(&d->tissue);
    sample_topology_free(&d->topology);
    free(d->ratios);
    free(d->model);
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
        } else if ((m = sample_option_value(argc, argv, &i, "--bend", &value)) != 0) {
            if (m < 0 || !parse_bend(&opt, value)) goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--turn", &value)) != 0) {
            if (m < 0 || !parse_turn(&opt, value)) goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--color", &value)) != 0) {
            if (m < 0 || !parse_color(&opt, value)) goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--out", &value)) != 0) {
            if (m < 0 || !*value) goto usage_error;
            opt.out = value;
        } else {
            fprintf(stderr, "sinew-demo: unknown option %s\n", argv[i]);
            goto usage_error;
        }
    }
    if (opt.turn_count && opt.pose) {
        fprintf(stderr, "sinew-demo: --bend or --turn and --pose both give the compare pose: "
                        "use one\n");
        goto usage_error;
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
    for (uint32_t b = 0; b < opt.turn_count; b++) free(opt.turns[b].joint);
    sample_params_free(&opt.params);
    return status;
}
