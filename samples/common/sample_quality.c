/* The measurement behind sinew-quality. SPDX-License-Identifier: MIT */
#include "sample_quality.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sample_json.h"
#include "sample_log.h"
#include "sample_metrics.h"

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

/* Everything a run owns, released in one place. */
typedef struct quality_run {
    sinew_world* world;
    int owns_world;         /* else: remove the skin and rig from the caller's world */
    sinew_rig rig;
    sinew_skin skin;
    sample_topology topology;
    float* pose;            /* joint_count * 16 */
    float* output;          /* 3 * vertices */
    float* previous;
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
    free(run->pose);
    free(run->output);
    free(run->previous);
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

sinew_result sample_quality_run(const sample_quality_desc* desc, sample_quality_report* out)
{
    if (!desc || !out || !desc->character) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_quality_run: NULL argument");
    }
    memset(out, 0, sizeof *out);
    const sample_character* character = desc->character;
    const sinew_rig_desc* rig_desc = &character->rig;
    const uint32_t joint_count = rig_desc->skeleton.joint_count;
    const uint32_t vertex_count = rig_desc->render_mesh.vertex_count;
    const float* rest = rig_desc->render_mesh.positions;
    if (joint_count == 0 || vertex_count == 0 || !rest || !rig_desc->skeleton.bind_matrices) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT,
                           "sample_quality_run: character %s has no joints or no render mesh",
                           character->name ? character->name : "?");
    }

    /* Which joint, or which animation: checked before any heavy work. */
    int32_t joint = -1;
    const sinew_animation* animation = NULL;
    if (desc->pose.kind == SAMPLE_POSE_ANIM) {
        if (desc->pose.animation >= character->animation_count) {
            return sample_fail(SINEW_ERROR_INVALID_ARGUMENT,
                               "pose anim:%u:%u: character %s has %u animations",
                               desc->pose.animation, desc->pose.frame, character->name,
                               character->animation_count);
        }
        animation = &character->animations[desc->pose.animation];
    } else if (desc->pose.kind == SAMPLE_POSE_BEND || desc->pose.kind == SAMPLE_POSE_TWIST ||
               desc->pose.kind == SAMPLE_POSE_AXIS) {
        joint = desc->joint ? sample_find_joint(character, desc->joint)
                            : sample_default_joint(character);
        if (joint < 0) {
            return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "character %s has no joint named \"%s\"",
                               character->name, desc->joint ? desc->joint : "(default)");
        }
        float twist_axis[3], bend_axis[3];
        sinew_result r = sample_joint_axes(character, (uint32_t)joint, twist_axis, bend_axis);
        if (r != SINEW_OK) return r;
    } else {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_quality_run: pose kind %d",
                           (int)desc->pose.kind);
    }

    quality_run run;
    memset(&run, 0, sizeof run);
    sinew_result r = sample_topology_build(rest, vertex_count, rig_desc->render_mesh.indices,
                                           rig_desc->render_mesh.triangle_count, &run.topology);
    if (r != SINEW_OK) return r;
    run.pose = malloc(sizeof(float) * 16 * joint_count);
    run.output = malloc(sizeof(float) * 3 * vertex_count);
    run.previous = malloc(sizeof(float) * 3 * vertex_count);
    if (!run.pose || !run.output || !run.previous) {
        release(&run);
        return sample_fail(SINEW_ERROR_OUT_OF_MEMORY, "sample_quality_run: out of memory");
    }

    if (desc->world) {
        run.world = desc->world;
    } else {
        sinew_world_desc world_desc = SINEW_WORLD_DESC_INIT;
        world_desc.logger = desc->logger ? desc->logger : sample_stderr_logger();
        world_desc.thread_count = desc->thread_count;
        r = sinew_world_create(&world_desc, &run.world);
        if (r != SINEW_OK) {
            release(&run);
            return fail_runtime(r, "sinew_world_create");
        }
        run.owns_world = 1;
    }
    r = sinew_rig_create(run.world, rig_desc, &run.rig);
    if (r != SINEW_OK) {
        release(&run);
        return fail_runtime(r, "sinew_rig_create");
    }
    sinew_skin_desc skin_desc = SINEW_SKIN_DESC_INIT;
    skin_desc.rig = run.rig;
    skin_desc.backend = desc->backend;
    skin_desc.params = desc->params;
    skin_desc.param_count = desc->param_count;
    r = sinew_world_add_skin(run.world, &skin_desc, &run.skin);
    if (r != SINEW_OK) {
        release(&run);
        return fail_runtime(r, "sinew_world_add_skin");
    }

    sinew_output_desc output = SINEW_OUTPUT_DESC_INIT;
    output.vertex_capacity = vertex_count;
    output.positions = run.output;
    sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
    pose.joint_count = joint_count;
    pose.matrices = run.pose;
    const float dt = 1.0f / 60.0f;
    uint32_t steps = 0;
    int settled = 0;

    if (animation) {
        /* Every step before the requested one is simulated, so a physics backend arrives
         * with the momentum the motion gives it. */
        pose.space = SINEW_POSE_LOCAL;
        for (uint32_t frame = 0; frame <= desc->pose.frame; ++frame) {
            r = sinew_animation_sample(animation, (float)frame / 60.0f, 1, run.pose);
            if (r != SINEW_OK) {
                release(&run);
                return fail_runtime(r, "sinew_animation_sample");
            }
            if ((r = sinew_skin_set_pose(run.world, run.skin, &pose)) != SINEW_OK ||
                (r = sinew_world_update(run.world, dt)) != SINEW_OK) {
                release(&run);
                return fail_runtime(r, "posing or stepping the skin");
            }
            ++steps;
        }
        r = sinew_skin_read_output(run.world, run.skin, &output);
        if (r != SINEW_OK) {
            release(&run);
            return fail_runtime(r, "sinew_skin_read_output");
        }
    } else {
        /* Every backend gets the same schedule: a ramp (a physics backend would tear under a
         * jump), then steps until no vertex moves, which a geometric backend reaches on the
         * first step after the ramp. */
        const double tolerance = SAMPLE_SETTLE_TOLERANCE * sample_bounding_diagonal(rest, vertex_count);
        const uint32_t budget = desc->settle_steps ? desc->settle_steps : SAMPLE_SETTLE_STEPS;
        pose.space = SINEW_POSE_MODEL;
        for (uint32_t s = 1; s <= SAMPLE_RAMP_STEPS + budget; ++s) {
            /* The last output becomes `previous`; the step writes the other buffer. */
            float* swap = run.previous;
            run.previous = run.output;
            run.output = swap;
            output.positions = run.output;
            const float t = s < SAMPLE_RAMP_STEPS ? (float)s / SAMPLE_RAMP_STEPS : 1.0f;
            const float degrees = desc->pose.degrees * t;
            r = sample_bend_twist_pose(character, (uint32_t)joint,
                                       desc->pose.kind == SAMPLE_POSE_BEND ? degrees : 0.0f,
                                       desc->pose.kind == SAMPLE_POSE_TWIST ? degrees : 0.0f,
                                       run.pose);
            if (r == SINEW_OK && desc->pose.kind == SAMPLE_POSE_AXIS) {
                if (!isfinite(degrees)) {
                    r = sample_fail(SINEW_ERROR_NONFINITE, "pose axis: angle %g is not finite",
                                    (double)degrees);
                } else {
                    sample_rotate_subtree(character, (uint32_t)joint, desc->pose.axis,
                                          degrees * (float)(3.14159265358979323846 / 180.0),
                                          run.pose);
                }
            }
            if (r != SINEW_OK) {
                release(&run);
                return r;
            }
            if ((r = sinew_skin_set_pose(run.world, run.skin, &pose)) != SINEW_OK ||
                (r = sinew_world_update(run.world, dt)) != SINEW_OK ||
                (r = sinew_skin_read_output(run.world, run.skin, &output)) != SINEW_OK) {
                release(&run);
                return fail_runtime(r, "posing, stepping or reading the skin");
            }
            ++steps;
            if (s > SAMPLE_RAMP_STEPS) {
                double move = largest_move(run.output, run.previous, vertex_count);
                if (move < tolerance || (tolerance == 0.0 && move == 0.0)) {
                    settled = 1;
                    break;
                }
                if (isnan(move)) break;   /* a broken mesh never settles */
            }
        }
    }

    const sample_topology* topology = &run.topology;
    out->vertices = vertex_count;
    out->triangles = rig_desc->render_mesh.triangle_count;
    out->joint = joint;
    out->joint_name = (joint >= 0 && rig_desc->skeleton.names) ? rig_desc->skeleton.names[joint] : NULL;
    out->steps = steps;
    out->settled = animation ? 1 : settled;
    out->closed = topology->closed;
    out->rest_volume = sample_enclosed_volume(topology, rest);
    out->volume = sample_enclosed_volume(topology, run.output);
    out->volume_ratio = topology->closed ? out->volume / out->rest_volume : NAN;
    out->self_intersections = sample_count_self_intersections(topology, run.output);
    out->rest_self_intersections = sample_count_self_intersections(topology, rest);
    sample_edge_stretch(topology, rest, run.output, &out->min_edge_stretch, &out->max_edge_stretch);
    out->nonfinite_vertices = sample_count_nonfinite(run.output, vertex_count);
    release(&run);
    if (out->self_intersections == UINT32_MAX || out->rest_self_intersections == UINT32_MAX) {
        return SINEW_ERROR_OUT_OF_MEMORY;   /* the counter logged the line */
    }
    return SINEW_OK;
}

void sample_quality_print_json(FILE* out, const sample_quality_desc* desc, const char* pose_text,
                               const sample_quality_report* report)
{
    if (!out || !desc || !desc->character || !report) return;
    sample_json json;
    sample_json_init(&json, out);
    sample_json_begin_object(&json, NULL);
    sample_json_string(&json, "backend", desc->backend ? desc->backend : "lbs");
    sample_json_string(&json, "character", desc->character->source);
    sample_json_string(&json, "pose", pose_text);
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
    sample_json_begin_array(&json, "params");
    for (uint32_t i = 0; i < desc->param_count; ++i) {
        char text[512];
        snprintf(text, sizeof text, "%s=%s", desc->params[i].key, desc->params[i].value);
        sample_json_string(&json, NULL, text);
    }
    sample_json_end_array(&json);
    sample_json_end_object(&json);
}

void sample_quality_print_text(FILE* out, const sample_quality_desc* desc, const char* pose_text,
                               const sample_quality_report* report)
{
    if (!out || !desc || !desc->character || !report) return;
    char volume[32];
    if (isfinite(report->volume_ratio)) snprintf(volume, sizeof volume, "%.4f", report->volume_ratio);
    else snprintf(volume, sizeof volume, "n/a (open mesh)");
    fprintf(out,
            "%s on %s, pose %s%s%s: volume ratio %s, %u self-intersections (%u at rest), "
            "edge stretch %.4f..%.4f, %u non-finite vertices, %u steps%s\n",
            desc->backend ? desc->backend : "lbs", desc->character->source, pose_text ? pose_text : "",
            report->joint_name ? " at " : "", report->joint_name ? report->joint_name : "", volume,
            report->self_intersections, report->rest_self_intersections, report->min_edge_stretch,
            report->max_edge_stretch, report->nonfinite_vertices, report->steps,
            report->settled ? "" : " (not settled)");
}
