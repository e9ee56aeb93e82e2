/* The measurement behind sinew-quality. SPDX-License-Identifier: MIT */
#include "sample_quality.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sample_json.h"
#include "sample_log.h"
#include "sample_metrics.h"
#include "sample_options.h"
#include "sample_tissue.h"

static int parse_u32_text(const char* begin, const char* end, uint32_t* out)
{
    if (begin == end || end - begin > 10) return 0;
    uint64_t v = 0;
    for (const char* p = begin; p < end; ++p) {
        if (*p < '0' || *p > '9') return 0;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (v > UINT32_MAX) return 0;
    *out = (uint32_t)v;
    return 1;
}

int sample_pose_parse(const char* text, sample_pose_spec* out)
{
    if (!text || !out) {
        fprintf(stderr, "option --pose: no pose given\n");
        return 0;
    }
    memset(out, 0, sizeof *out);
    const char* colon = strchr(text, ':');
    if (colon) {
        size_t head = (size_t)(colon - text);
        const char* rest = colon + 1;
        if ((head == 4 && strncmp(text, "bend", 4) == 0) ||
            (head == 5 && strncmp(text, "twist", 5) == 0)) {
            char* end = NULL;
            errno = 0;
            double degrees = strtod(rest, &end);
            if (end != rest && *end == '\0' && errno == 0 && isfinite(degrees) &&
                fabs(degrees) <= 1.0e6) {
                out->kind = head == 4 ? SAMPLE_POSE_BEND : SAMPLE_POSE_TWIST;
                out->degrees = (float)degrees;
                return 1;
            }
        } else if (head == 4 && strncmp(text, "axis", 4) == 0) {
            /* four numbers: the axis, then the angle */
            double v[4];
            const char* cursor = rest;
            int ok = 1;
            for (int k = 0; k < 4 && ok; ++k) {
                char* end = NULL;
                errno = 0;
                v[k] = strtod(cursor, &end);
                ok = end != cursor && errno == 0 && isfinite(v[k]) && fabs(v[k]) <= 1.0e6 &&
                     (k < 3 ? *end == ':' : *end == '\0');
                cursor = end + (k < 3 ? 1 : 0);
            }
            double length = ok ? sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) : 0.0;
            if (ok && length > 1e-6) {
                out->kind = SAMPLE_POSE_AXIS;
                for (int k = 0; k < 3; ++k) out->axis[k] = (float)(v[k] / length);
                out->degrees = (float)v[3];
                return 1;
            }
        } else if (head == 4 && strncmp(text, "anim", 4) == 0) {
            const char* second = strchr(rest, ':');
            if (second && parse_u32_text(rest, second, &out->animation) &&
                parse_u32_text(second + 1, second + 1 + strlen(second + 1), &out->frame)) {
                out->kind = SAMPLE_POSE_ANIM;
                return 1;
            }
        }
    }
    fprintf(stderr, "option --pose: \"%s\" is not bend:DEG, twist:DEG, anim:K:FRAME or axis:X:Y:Z:DEG\n",
            text);
    return 0;
}

/* "anim:K" for a sweep. */
int sample_sweep_pose_parse(const char* text, uint32_t* animation)
{
    if (text && animation && strncmp(text, "anim:", 5) == 0 &&
        parse_u32_text(text + 5, text + strlen(text), animation)) {
        return 1;
    }
    fprintf(stderr, "option --pose: \"%s\" is not anim:K (a sweep gives the frames)\n",
            text ? text : "");
    return 0;
}

int sample_sweep_parse(const char* text, sample_sweep_spec* out)
{
    if (!text || !out) {
        fprintf(stderr, "option --sweep: no range given\n");
        return 0;
    }
    memset(out, 0, sizeof *out);
    const char* end = text + strlen(text);
    const char* colon = strchr(text, ':');
    if (strncmp(text, "loop+", 5) == 0 && parse_u32_text(text + 5, end, &out->after) &&
        out->after <= SAMPLE_SWEEP_MAX_FRAME) {
        out->loop = 1;
        return 1;
    }
    if (colon && parse_u32_text(text, colon, &out->first) &&
        parse_u32_text(colon + 1, end, &out->last) && out->first <= out->last &&
        out->last <= SAMPLE_SWEEP_MAX_FRAME) {
        return 1;
    }
    fprintf(stderr, "option --sweep: \"%s\" is not A:B (0 <= A <= B <= %d) or loop+N\n", text,
            SAMPLE_SWEEP_MAX_FRAME);
    return 0;
}

/* Everything a run owns, released in one place. */
typedef struct quality_run {
    const sample_quality_desc* desc;
    const float* rest;                  /* the render mesh at rest */
    uint32_t vertex_count;
    int32_t joint;                      /* static poses: the posed joint */
    const sinew_animation* animation;   /* ANIM */
    double dt;                          /* seconds per update */
    sinew_world* world;
    int owns_world;         /* else: remove the skin and rig from the caller's world */
    sinew_rig rig;
    sinew_skin skin;
    sample_topology topology;
    sample_tissue tissue;   /* built when the measurement needs it (open_tissue) */
    float* pose;            /* joint_count * 16 */
    float* output;          /* 3 * vertices */
    float* previous;
    sinew_pose_desc pose_desc;
    sinew_output_desc output_desc;
} quality_run;

static void release(quality_run* run)
{
    if (run->owns_world) {
        sinew_world_destroy(run->world);   /* destroys the skin and the rig too */
    } else if (run->world) {
        if (run->skin.id) sinew_world_remove_skin(run->world, run->skin);
        if (run->rig.id) sinew_rig_destroy(run->world, run->rig);
    }
    sample_topology_free(&run->topology);
    sample_tissue_free(&run->tissue);
    free(run->pose);
    free(run->output);
    free(run->previous);
    memset(run, 0, sizeof *run);
}

static sinew_result fail_runtime(sinew_result r, const char* what)
{
    return sample_fail(r, "%s failed: %s", what, sinew_result_string(r));
}

static double largest_move(const float* a, const float* b, uint32_t vertex_count)
{
    double largest = 0.0;
    for (size_t v = 0; v < vertex_count; ++v) {
        double dx = (double)a[3 * v] - b[3 * v], dy = (double)a[3 * v + 1] - b[3 * v + 1],
               dz = (double)a[3 * v + 2] - b[3 * v + 2];
        double d = sqrt(dx * dx + dy * dy + dz * dz);
        if (isnan(d)) return d;   /* a broken mesh never settles */
        if (d > largest) largest = d;
    }
    return largest;
}

/* The character's checks and the pose's target (the animation, or the joint and its axes),
 * before any heavy work. */
static sinew_result check_target(const sample_quality_desc* desc, quality_run* run)
{
    const sample_character* character = desc->character;
    const sinew_rig_desc* rig = &character->rig;
    if (rig->skeleton.joint_count == 0 || rig->render_mesh.vertex_count == 0 ||
        !rig->render_mesh.positions || !rig->skeleton.bind_matrices) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT,
                           "sample_quality_run: character %s has no joints or no render mesh",
                           character->name ? character->name : "?");
    }
    run->rest = rig->render_mesh.positions;
    run->vertex_count = rig->render_mesh.vertex_count;
    run->joint = -1;
    if (desc->pose.kind == SAMPLE_POSE_ANIM) {
        if (desc->pose.animation >= character->animation_count) {
            return sample_fail(SINEW_ERROR_INVALID_ARGUMENT,
                               "pose: animation %u asked for, character %s has %u animations",
                               desc->pose.animation, character->name,
                               character->animation_count);
        }
        run->animation = &character->animations[desc->pose.animation];
        return SINEW_OK;
    }
    if (desc->pose.kind != SAMPLE_POSE_BEND && desc->pose.kind != SAMPLE_POSE_TWIST &&
        desc->pose.kind != SAMPLE_POSE_AXIS) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_quality_run: pose kind %d",
                           (int)desc->pose.kind);
    }
    run->joint = desc->joint ? sample_find_joint(character, desc->joint)
                             : sample_default_joint(character);
    if (run->joint < 0) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "character %s has no joint named \"%s\"",
                           character->name, desc->joint ? desc->joint : "(default)");
    }
    float twist_axis[3], bend_axis[3];
    return sample_joint_axes(character, (uint32_t)run->joint, twist_axis, bend_axis);
}

/* The tissue model, where the measurement needs it: the joint radii for a static pose's local
 * region, the tetrahedron counts for a volumetric backend. Built once per run. */
static sinew_result open_tissue(quality_run* run)
{
    const sample_quality_desc* desc = run->desc;
    const int whole_model = sample_backend_is_volumetric(desc->backend);
    if (!whole_model && desc->pose.kind == SAMPLE_POSE_ANIM) return SINEW_OK;
    sample_tissue_params params;
    if (!sample_tissue_params_parse(desc->params, desc->param_count, &params)) {
        return SINEW_ERROR_INVALID_ARGUMENT;   /* the parser named the key */
    }
    return sample_tissue_build(desc->character, &params, whole_model, desc->logger, &run->tissue);
}

/* The world (the caller's or a fresh one), the rig and the skin. */
static sinew_result open_skin(quality_run* run)
{
    const sample_quality_desc* desc = run->desc;
    sinew_result r;
    if (desc->world) {
        run->world = desc->world;
    } else {
        sinew_world_desc world_desc = SINEW_WORLD_DESC_INIT;
        world_desc.logger = desc->logger ? desc->logger : sample_stderr_logger();
        world_desc.thread_count = desc->thread_count;
        if ((r = sinew_world_create(&world_desc, &run->world)) != SINEW_OK) {
            return fail_runtime(r, "sinew_world_create");
        }
        run->owns_world = 1;
    }
    if ((r = sinew_rig_create(run->world, &desc->character->rig, &run->rig)) != SINEW_OK) {
        return fail_runtime(r, "sinew_rig_create");
    }
    sinew_skin_desc skin_desc = SINEW_SKIN_DESC_INIT;
    skin_desc.rig = run->rig;
    skin_desc.backend = desc->backend;
    skin_desc.params = desc->params;
    skin_desc.param_count = desc->param_count;
    r = sinew_world_add_skin(run->world, &skin_desc, &run->skin);
    return r == SINEW_OK ? r : fail_runtime(r, "sinew_world_add_skin");
}

/* Checks, topology, buffers, tissue model, world, rig and skin; release() undoes any part. */
static sinew_result open_run(const sample_quality_desc* desc, quality_run* run)
{
    memset(run, 0, sizeof *run);
    run->desc = desc;
    run->dt = desc->dt > 0.0 ? desc->dt : SAMPLE_DEFAULT_DT;
    if (!(run->dt <= SAMPLE_MAX_DT)) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_quality_run: dt %g s is not in "
                           "(0, %g]", run->dt, SAMPLE_MAX_DT);
    }
    sinew_result r = check_target(desc, run);
    if (r != SINEW_OK) return r;
    const sinew_rig_desc* rig = &desc->character->rig;
    const uint32_t joint_count = rig->skeleton.joint_count;
    r = sample_topology_build(run->rest, run->vertex_count, rig->render_mesh.indices,
                              rig->render_mesh.triangle_count, &run->topology);
    if (r != SINEW_OK) return r;
    run->pose = malloc(sizeof(float) * 16 * joint_count);
    run->output = malloc(sizeof(float) * 3 * run->vertex_count);
    run->previous = malloc(sizeof(float) * 3 * run->vertex_count);
    if (!run->pose || !run->output || !run->previous) {
        return sample_fail(SINEW_ERROR_OUT_OF_MEMORY, "sample_quality_run: out of memory");
    }
    if ((r = open_tissue(run)) != SINEW_OK || (r = open_skin(run)) != SINEW_OK) return r;
    sinew_output_desc output = SINEW_OUTPUT_DESC_INIT;
    output.vertex_capacity = run->vertex_count;
    output.positions = run->output;
    run->output_desc = output;
    sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
    pose.joint_count = joint_count;
    pose.matrices = run->pose;
    pose.space = run->animation ? SINEW_POSE_LOCAL : SINEW_POSE_MODEL;
    run->pose_desc = pose;
    return SINEW_OK;
}

/* One update of dt seconds to the animation's pose at `seconds` (looping). Every update before
 * a measured one is simulated, so a physics backend arrives with the momentum the motion gives
 * it. */
static sinew_result step_animation(quality_run* run, float seconds, float dt)
{
    sinew_result r = sinew_animation_sample(run->animation, seconds, 1, run->pose);
    if (r != SINEW_OK) return fail_runtime(r, "sinew_animation_sample");
    if ((r = sinew_skin_set_pose(run->world, run->skin, &run->pose_desc)) != SINEW_OK ||
        (r = sinew_world_update(run->world, dt)) != SINEW_OK) {
        return fail_runtime(r, "posing or stepping the skin");
    }
    return SINEW_OK;
}

/* Updates from animation time 0 to the measured frame's time, frame / 60 s: the first frame's
 * pose for 1/60 s (from rest, whatever dt is, so that every dt starts the motion alike), then
 * one update every dt, the last cut short to end at the frame's time. At dt = 1/60 one update
 * per frame, as a sweep plays. */
static sinew_result play_animation(quality_run* run, uint32_t* steps)
{
    const uint32_t frame = run->desc->pose.frame;
    const double dt = run->dt, end = (double)frame / 60.0;
    const float rate = (float)(1.0 / dt);
    const uint32_t last = (uint32_t)ceil(end / dt - 1e-6);
    double last_dt = last > 0 ? end - (double)(last - 1u) * dt : dt;
    if (fabs(last_dt - dt) < 1e-6 * dt) last_dt = dt; /* a whole number of updates */
    for (uint32_t u = 0; u <= last; ++u) {
        float seconds = u < last ? (float)u / rate : (float)frame / 60.0f;
        double update = u == 0 ? SAMPLE_DEFAULT_DT : u < last ? dt : last_dt;
        sinew_result r = step_animation(run, seconds, (float)update);
        if (r != SINEW_OK) return r;
        ++*steps;
    }
    return SINEW_OK;
}

static sinew_result read_output(quality_run* run)
{
    run->output_desc.positions = run->output;
    sinew_result r = sinew_skin_read_output(run->world, run->skin, &run->output_desc);
    return r == SINEW_OK ? r : fail_runtime(r, "sinew_skin_read_output");
}

/* The static target at update s of `ramp` updates (0.5 s): the ramp's fraction of the angle,
 * the whole angle from then on. */
static sinew_result static_pose(quality_run* run, uint32_t s, float ramp)
{
    const sample_quality_desc* desc = run->desc;
    const float t = (float)s < ramp ? (float)s / ramp : 1.0f;
    const float degrees = desc->pose.degrees * t;
    sinew_result r = sample_bend_twist_pose(desc->character, (uint32_t)run->joint,
                                            desc->pose.kind == SAMPLE_POSE_BEND ? degrees : 0.0f,
                                            desc->pose.kind == SAMPLE_POSE_TWIST ? degrees : 0.0f,
                                            run->pose);
    if (r != SINEW_OK || desc->pose.kind != SAMPLE_POSE_AXIS) return r;
    if (!isfinite(degrees)) {
        return sample_fail(SINEW_ERROR_NONFINITE, "pose axis: angle %g is not finite",
                           (double)degrees);
    }
    sample_rotate_subtree(desc->character, (uint32_t)run->joint, desc->pose.axis,
                          degrees * (float)(3.14159265358979323846 / 180.0), run->pose);
    return SINEW_OK;
}

/* Every backend gets the same schedule: a ramp over 0.5 s (a physics backend would tear under
 * a jump), then updates until no vertex moves, which a geometric backend reaches on the first
 * update after the ramp. Moves are compared between updates at least 1/60 s apart (a physics
 * backend's update shorter than its step may run none), with the tolerance scaled by their
 * time; at dt = 1/60 between consecutive updates. */
static sinew_result settle_static(quality_run* run, uint32_t* steps, int* settled)
{
    const double per_frame = (1.0 / 60.0) / run->dt; /* updates per 1/60 s */
    const uint32_t every = per_frame > 1.0 ? (uint32_t)ceil(per_frame - 1e-6) : 1u;
    const double tolerance = SAMPLE_SETTLE_TOLERANCE * (every / per_frame) *
                             sample_bounding_diagonal(run->rest, run->vertex_count);
    const uint32_t frames = run->desc->settle_steps ? run->desc->settle_steps : SAMPLE_SETTLE_STEPS;
    const uint32_t ramp = (uint32_t)ceil(SAMPLE_RAMP_STEPS * per_frame - 1e-6);
    const uint32_t budget = (uint32_t)ceil(frames * per_frame - 1e-6);
    const float ramp_updates = (float)(0.5 / run->dt);
    const size_t bytes = sizeof(float) * 3 * run->vertex_count;
    for (uint32_t s = 1; s <= ramp + budget; ++s) {
        sinew_result r = static_pose(run, s, ramp_updates);
        if (r != SINEW_OK) return r;
        if ((r = sinew_skin_set_pose(run->world, run->skin, &run->pose_desc)) != SINEW_OK ||
            (r = sinew_world_update(run->world, (float)run->dt)) != SINEW_OK) {
            return fail_runtime(r, "posing or stepping the skin");
        }
        if ((r = read_output(run)) != SINEW_OK) return r;
        ++*steps;
        if (s < ramp || (s - ramp) % every != 0) continue;
        if (s > ramp) {
            double move = largest_move(run->output, run->previous, run->vertex_count);
            if (move < tolerance || (tolerance == 0.0 && move == 0.0)) {
                *settled = 1;
                break;
            }
            if (isnan(move)) break;   /* a broken mesh never settles */
        }
        memcpy(run->previous, run->output, bytes);
    }
    return SINEW_OK;
}

/* The figures of one frame of the output: the same measurement for single runs and sweeps.
 * 0 when the intersection count ran out of memory (it logged the line). */
static int measure_frame(const quality_run* run, uint32_t frame, sample_quality_frame* out)
{
    const sample_topology* topology = &run->topology;
    out->frame = frame;
    out->volume = sample_enclosed_volume(topology, run->output);
    out->volume_ratio =
        topology->closed ? out->volume / sample_enclosed_volume(topology, run->rest) : NAN;
    out->self_intersections = sample_count_self_intersections(topology, run->output);
    sample_edge_stretch(topology, run->rest, run->output, &out->min_edge_stretch,
                        &out->max_edge_stretch);
    out->nonfinite_vertices = sample_count_nonfinite(run->output, run->vertex_count);
    return out->self_intersections != UINT32_MAX;
}

sinew_result sample_local_region_build(const sample_topology* topology,
                                       const sample_character* character,
                                       const sample_tissue* tissue, uint32_t joint,
                                       sample_local_region* out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!topology || !character || !tissue || !out || !tissue->joint_radius) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT,
                           "sample_local_region_build: NULL argument");
    }
    if (joint >= character->rig.skeleton.joint_count || joint >= tissue->joint_count) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT,
                           "sample_local_region_build: joint %u of %u", joint,
                           character->rig.skeleton.joint_count);
    }
    const float* rest = character->rig.render_mesh.positions;
    const float* bind = character->rig.skeleton.bind_matrices + 16 * (size_t)joint + 12;
    out->joint = joint;
    for (int k = 0; k < 3; ++k) out->rest_centre[k] = bind[k];
    out->radius = 2.0 * tissue->joint_radius[joint];
    out->count = sample_local_select(topology, rest, out->rest_centre, out->radius,
                                     &out->triangles);
    if (out->count == UINT32_MAX) {
        out->count = 0;
        return SINEW_ERROR_OUT_OF_MEMORY;   /* it logged the line */
    }
    out->rest_volume = sample_local_volume(topology, rest, out->triangles, out->count,
                                           out->rest_centre);
    return SINEW_OK;
}

double sample_local_region_ratio(const sample_local_region* region,
                                 const sample_topology* topology, const float* positions,
                                 const float* model)
{
    if (!region || region->count == 0) return NAN;
    const float* posed = model + 16 * (size_t)region->joint + 12;
    const double posed_centre[3] = { posed[0], posed[1], posed[2] };
    double volume = sample_local_volume(topology, positions, region->triangles, region->count,
                                        posed_centre);
    return volume / region->rest_volume;
}

void sample_local_region_free(sample_local_region* region)
{
    if (!region) return;
    free(region->triangles);
    memset(region, 0, sizeof *region);
}

/* local_volume_ratio of a static pose: the region around the joint chosen at rest, its cone
 * volume from the joint's rest centre at rest and from its posed centre (the translation of
 * its model matrix in the pose) in the output. */
static sinew_result measure_local(const quality_run* run, sample_quality_report* out)
{
    sample_local_region region;
    sinew_result r = sample_local_region_build(&run->topology, run->desc->character, &run->tissue,
                                               (uint32_t)run->joint, &region);
    if (r != SINEW_OK) return r;
    out->local_radius = region.radius;
    out->local_triangles = region.count;
    out->local_volume_ratio =
        sample_local_region_ratio(&region, &run->topology, run->output, run->pose);
    sample_local_region_free(&region);
    return SINEW_OK;
}

static sample_quality_tissue tissue_figures(const sample_tissue* tissue)
{
    sample_quality_tissue t;
    memset(&t, 0, sizeof t);
    t.present = tissue->has_model;
    t.tets = tissue->tets;
    t.inverted = tissue->inverted;
    t.degenerate = tissue->degenerate;
    t.poor = tissue->poor;
    return t;
}

/* The report of a single run from its last output. */
static sinew_result fill_report(const quality_run* run, sample_quality_report* out)
{
    const sinew_rig_desc* rig = &run->desc->character->rig;
    sample_quality_frame frame;
    if (!measure_frame(run, 0, &frame)) return SINEW_ERROR_OUT_OF_MEMORY;
    out->vertices = run->vertex_count;
    out->triangles = rig->render_mesh.triangle_count;
    out->joint = run->joint;
    out->joint_name =
        (run->joint >= 0 && rig->skeleton.names) ? rig->skeleton.names[run->joint] : NULL;
    out->closed = run->topology.closed;
    out->rest_volume = sample_enclosed_volume(&run->topology, run->rest);
    out->volume = frame.volume;
    out->volume_ratio = frame.volume_ratio;
    out->self_intersections = frame.self_intersections;
    out->rest_self_intersections = sample_count_self_intersections(&run->topology, run->rest);
    out->min_edge_stretch = frame.min_edge_stretch;
    out->max_edge_stretch = frame.max_edge_stretch;
    out->nonfinite_vertices = frame.nonfinite_vertices;
    out->tissue = tissue_figures(&run->tissue);
    out->local_radius = NAN;
    out->local_volume_ratio = NAN;
    if (out->rest_self_intersections == UINT32_MAX) return SINEW_ERROR_OUT_OF_MEMORY;
    return run->joint >= 0 ? measure_local(run, out) : SINEW_OK;
}

sinew_result sample_quality_run(const sample_quality_desc* desc, sample_quality_report* out)
{
    if (!desc || !out || !desc->character) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_quality_run: NULL argument");
    }
    memset(out, 0, sizeof *out);
    quality_run run;
    sinew_result r = open_run(desc, &run);
    uint32_t steps = 0;
    int settled = 0;
    if (r == SINEW_OK && run.animation) {
        r = play_animation(&run, &steps);
        if (r == SINEW_OK) r = read_output(&run);
        settled = 1;
    } else if (r == SINEW_OK) {
        r = settle_static(&run, &steps, &settled);
    }
    if (r == SINEW_OK) r = fill_report(&run, out);
    if (r == SINEW_OK && desc->positions)
        memcpy(desc->positions, run.output, sizeof(float) * 3 * run.vertex_count);
    out->steps = steps;
    out->settled = settled;
    release(&run);
    return r;
}

/* ---- sweeps ---- */

/* The frames a spec names for this animation, checked against SAMPLE_SWEEP_MAX_FRAME. */
static sinew_result sweep_range(const sample_sweep_spec* spec, const sinew_animation* animation,
                                sample_sweep_report* out)
{
    out->loop_frames = sample_animation_loop_frames(animation);
    if (out->loop_frames == 0 || out->loop_frames == UINT32_MAX) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT,
                           "sweep: the animation has no keys or no finite length up to %d frames",
                           SAMPLE_MAX_LOOP_FRAMES);
    }
    out->first = spec->loop ? 0 : spec->first;
    out->last = spec->loop ? out->loop_frames - 1 + spec->after : spec->last;
    if (out->first > out->last || out->last > SAMPLE_SWEEP_MAX_FRAME) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT,
                           "sweep: frames %u..%u are not within 0..%d", out->first, out->last,
                           SAMPLE_SWEEP_MAX_FRAME);
    }
    out->frame_count = out->last - out->first + 1;
    return SINEW_OK;
}

/* Plays frames 0..last and measures first..last into out->frames. */
static sinew_result sweep_play(quality_run* run, sample_sweep_report* out)
{
    out->frames = calloc(out->frame_count, sizeof *out->frames);
    if (!out->frames) return sample_fail(SINEW_ERROR_OUT_OF_MEMORY, "sweep: out of memory");
    for (uint32_t frame = 0; frame <= out->last; ++frame) {
        sinew_result r = step_animation(run, (float)frame / 60.0f, 1.0f / 60.0f);
        if (r != SINEW_OK) return r;
        ++out->steps;
        if (frame < out->first) continue;
        if ((r = read_output(run)) != SINEW_OK) return r;
        if (!measure_frame(run, frame, &out->frames[frame - out->first])) {
            return SINEW_ERROR_OUT_OF_MEMORY;
        }
    }
    return SINEW_OK;
}

/* Maximum and sum over the frames. */
static void sweep_summarise(sample_sweep_report* out)
{
    out->max_edge_stretch = NAN;
    for (uint32_t i = 0; i < out->frame_count; ++i) {
        const sample_quality_frame* f = &out->frames[i];
        if (f->self_intersections > out->max_self_intersections) {
            out->max_self_intersections = f->self_intersections;
        }
        out->sum_self_intersections += f->self_intersections;
        if (isfinite(f->max_edge_stretch) &&
            !(f->max_edge_stretch <= out->max_edge_stretch)) {
            out->max_edge_stretch = f->max_edge_stretch;
        }
        out->nonfinite_total += f->nonfinite_vertices;
    }
}

sinew_result sample_quality_sweep(const sample_quality_desc* desc, const sample_sweep_spec* spec,
                                  sample_sweep_report* out)
{
    if (!desc || !spec || !out || !desc->character) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_quality_sweep: NULL argument");
    }
    memset(out, 0, sizeof *out);
    if (desc->pose.kind != SAMPLE_POSE_ANIM) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_quality_sweep: the pose is not "
                           "an animation");
    }
    if (desc->dt > 0.0 && desc->dt != SAMPLE_DEFAULT_DT) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_quality_sweep: a sweep measures "
                           "every frame and updates once per frame (dt 1/60 s, not %g s)",
                           desc->dt);
    }
    quality_run run;
    sinew_result r = open_run(desc, &run);
    if (r == SINEW_OK) r = sweep_range(spec, run.animation, out);
    if (r == SINEW_OK) r = sweep_play(&run, out);
    if (r == SINEW_OK && desc->positions)
        memcpy(desc->positions, run.output, sizeof(float) * 3 * run.vertex_count);
    if (r == SINEW_OK) {
        out->vertices = run.vertex_count;
        out->triangles = desc->character->rig.render_mesh.triangle_count;
        out->animation = desc->pose.animation;
        out->closed = run.topology.closed;
        out->rest_self_intersections = sample_count_self_intersections(&run.topology, run.rest);
        out->tissue = tissue_figures(&run.tissue);
        sweep_summarise(out);
        if (out->rest_self_intersections == UINT32_MAX) r = SINEW_ERROR_OUT_OF_MEMORY;
    }
    release(&run);
    if (r != SINEW_OK) sample_sweep_report_free(out);
    return r;
}

void sample_sweep_report_free(sample_sweep_report* report)
{
    if (!report) return;
    free(report->frames);
    memset(report, 0, sizeof *report);
}

/* ---- printing ---- */

/* Whether the run updates at another interval than 1/60 s (reports then say so). */
static int other_dt(const sample_quality_desc* desc)
{
    return desc->dt > 0.0 && desc->dt != SAMPLE_DEFAULT_DT;
}

/* The members every report begins with (dt only where it is not 1/60 s). */
static void json_head(sample_json* json, const sample_quality_desc* desc, const char* pose_text)
{
    sample_json_string(json, "backend", desc->backend ? desc->backend : "lbs");
    sample_json_string(json, "character", desc->character->source);
    sample_json_string(json, "pose", pose_text);
    if (other_dt(desc)) sample_json_number(json, "dt", desc->dt);
}

/* The tissue figures (volumetric backends only) and the parameters, which end every report. */
static void json_tail(sample_json* json, const sample_quality_desc* desc,
                      const sample_quality_tissue* tissue)
{
    if (tissue->present) {
        sample_json_uint(json, "tissue_tets", tissue->tets);
        sample_json_uint(json, "tissue_inverted", tissue->inverted);
        sample_json_uint(json, "tissue_degenerate", tissue->degenerate);
        sample_json_uint(json, "tissue_poor", tissue->poor);
    }
    sample_json_begin_array(json, "params");
    for (uint32_t i = 0; i < desc->param_count; ++i) {
        char text[512];
        snprintf(text, sizeof text, "%s=%s", desc->params[i].key, desc->params[i].value);
        sample_json_string(json, NULL, text);
    }
    sample_json_end_array(json);
}

void sample_quality_print_json(FILE* out, const sample_quality_desc* desc, const char* pose_text,
                               const sample_quality_report* report)
{
    if (!out || !desc || !desc->character || !report) return;
    sample_json json;
    sample_json_init(&json, out);
    sample_json_begin_object(&json, NULL);
    json_head(&json, desc, pose_text);
    sample_json_string(&json, "joint", report->joint_name);
    sample_json_uint(&json, "vertices", report->vertices);
    sample_json_uint(&json, "triangles", report->triangles);
    sample_json_uint(&json, "steps", report->steps);
    sample_json_bool(&json, "settled", report->settled);
    sample_json_bool(&json, "closed", report->closed);
    sample_json_number(&json, "volume_ratio", report->volume_ratio);
    sample_json_number(&json, "rest_volume", report->rest_volume);
    sample_json_number(&json, "volume", report->volume);
    sample_json_uint(&json, "self_intersections", report->self_intersections);
    sample_json_uint(&json, "rest_self_intersections", report->rest_self_intersections);
    sample_json_number(&json, "max_edge_stretch", report->max_edge_stretch);
    sample_json_number(&json, "min_edge_stretch", report->min_edge_stretch);
    sample_json_uint(&json, "nonfinite_vertices", report->nonfinite_vertices);
    sample_json_number(&json, "local_volume_ratio", report->local_volume_ratio);
    if (report->joint >= 0) sample_json_uint(&json, "local_triangles", report->local_triangles);
    else sample_json_null(&json, "local_triangles");
    sample_json_number(&json, "local_radius", report->local_radius);
    json_tail(&json, desc, &report->tissue);
    sample_json_end_object(&json);
}

/* "0.9876", or `missing` for NaN. */
static const char* format_ratio(char* text, size_t size, double value, const char* missing)
{
    if (isfinite(value)) snprintf(text, size, "%.4f", value);
    else snprintf(text, size, "%s", missing);
    return text;
}

void sample_quality_print_text(FILE* out, const sample_quality_desc* desc, const char* pose_text,
                               const sample_quality_report* report)
{
    if (!out || !desc || !desc->character || !report) return;
    char volume[32], local[96] = "", tissue[128] = "";
    format_ratio(volume, sizeof volume, report->volume_ratio, "n/a (open mesh)");
    if (report->joint >= 0) {
        char ratio[32];
        snprintf(local, sizeof local, ", local volume ratio %s over %u triangles",
                 format_ratio(ratio, sizeof ratio, report->local_volume_ratio, "n/a"),
                 report->local_triangles);
    }
    if (report->tissue.present) {
        snprintf(tissue, sizeof tissue, ", tissue %u tets (%u inverted, %u degenerate, %u poor)",
                 report->tissue.tets, report->tissue.inverted, report->tissue.degenerate,
                 report->tissue.poor);
    }
    char dt[48] = "";
    if (other_dt(desc)) snprintf(dt, sizeof dt, ", updates of %g s", desc->dt);
    fprintf(out,
            "%s on %s, pose %s%s%s%s: volume ratio %s%s, %u self-intersections (%u at rest), "
            "edge stretch %.4f..%.4f, %u non-finite vertices, %u steps%s%s\n",
            desc->backend ? desc->backend : "lbs", desc->character->source,
            pose_text ? pose_text : "", report->joint_name ? " at " : "", report->joint_name ? report->joint_name : "", dt, volume,
            local, report->self_intersections, report->rest_self_intersections,
            report->min_edge_stretch, report->max_edge_stretch, report->nonfinite_vertices,
            report->steps, report->settled ? "" : " (not settled)", tissue);
}

void sample_sweep_print_json(FILE* out, const sample_quality_desc* desc, const char* pose_text,
                             const sample_sweep_report* report)
{
    if (!out || !desc || !desc->character || !report) return;
    sample_json json;
    sample_json_init(&json, out);
    sample_json_begin_object(&json, NULL);
    json_head(&json, desc, pose_text);
    sample_json_uint(&json, "animation", report->animation);
    sample_json_uint(&json, "loop_frames", report->loop_frames);
    sample_json_uint(&json, "first_frame", report->first);
    sample_json_uint(&json, "last_frame", report->last);
    sample_json_uint(&json, "vertices", report->vertices);
    sample_json_uint(&json, "triangles", report->triangles);
    sample_json_uint(&json, "steps", report->steps);
    sample_json_bool(&json, "closed", report->closed);
    sample_json_uint(&json, "rest_self_intersections", report->rest_self_intersections);
    sample_json_begin_array(&json, "frames");
    for (uint32_t i = 0; i < report->frame_count; ++i) {
        const sample_quality_frame* f = &report->frames[i];
        sample_json_begin_object(&json, NULL);
        sample_json_uint(&json, "frame", f->frame);
        sample_json_uint(&json, "self_intersections", f->self_intersections);
        sample_json_number(&json, "max_edge_stretch", f->max_edge_stretch);
        sample_json_number(&json, "min_edge_stretch", f->min_edge_stretch);
        sample_json_number(&json, "volume_ratio", f->volume_ratio);
        sample_json_uint(&json, "nonfinite_vertices", f->nonfinite_vertices);
        sample_json_end_object(&json);
    }
    sample_json_end_array(&json);
    sample_json_uint(&json, "max_self_intersections", report->max_self_intersections);
    sample_json_uint(&json, "sum_self_intersections", report->sum_self_intersections);
    sample_json_number(&json, "max_edge_stretch", report->max_edge_stretch);
    sample_json_uint(&json, "nonfinite_total", report->nonfinite_total);
    json_tail(&json, desc, &report->tissue);
    sample_json_end_object(&json);
}

void sample_sweep_print_text(FILE* out, const sample_quality_desc* desc, const char* pose_text,
                             const sample_sweep_report* report)
{
    if (!out || !desc || !desc->character || !report) return;
    for (uint32_t i = 0; i < report->frame_count; ++i) {
        const sample_quality_frame* f = &report->frames[i];
        char volume[32];
        fprintf(out, "frame %u: %u self-intersections, edge stretch %.4f..%.4f, volume ratio %s, "
                "%u non-finite vertices\n", f->frame, f->self_intersections, f->min_edge_stretch,
                f->max_edge_stretch, format_ratio(volume, sizeof volume, f->volume_ratio, "n/a"),
                f->nonfinite_vertices);
    }
    fprintf(out, "%s on %s, %s frames %u..%u (loop %u frames): %llu self-intersections in all, "
            "at most %u in a frame, largest edge stretch %.4f, %llu non-finite vertices\n",
            desc->backend ? desc->backend : "lbs", desc->character->source,
            pose_text ? pose_text : "", report->first, report->last, report->loop_frames,
            (unsigned long long)report->sum_self_intersections, report->max_self_intersections,
            report->max_edge_stretch, (unsigned long long)report->nonfinite_total);
}
