/* Characters for the samples: loading, the procedural arm, joint choice and posing.
 * SPDX-License-Identifier: MIT */
#include "sample_character.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample_log.h"

#define SAMPLE_PI 3.14159265358979323846

sinew_result sample_character_load(const char* path, const sinew_logger* logger,
                                   sample_character* out)
{
    if (!out) return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_character_load: out is NULL");
    memset(out, 0, sizeof *out);
    if (!path || !*path) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_character_load: path is empty");
    }
    FILE* probe = fopen(path, "rb");
    if (!probe) return sample_fail(SINEW_ERROR_FILE_NOT_FOUND, "character file %s not found", path);
    char magic[8];
    size_t got = fread(magic, 1, sizeof magic, probe);
    fclose(probe);
    if (got == sizeof magic && memcmp(magic, "SINEWBAK", sizeof magic) == 0) {
        sinew_baked_file* baked = NULL;
        sinew_result r = sinew_bake_read(path, logger, &baked);
        if (r != SINEW_OK) return r;   /* the reader logged the line */
        out->baked = baked;
        out->name = baked->rig->name && *baked->rig->name ? baked->rig->name : path;
        out->source = baked->source_path;
        out->rig = *baked->rig;
        return SINEW_OK;
    }

    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.logger = logger;
    sinew_character* character = NULL;
    sinew_result r = sinew_import_character(path, &options, &character);
    if (r != SINEW_OK) return r;   /* the importer logged the line */
    out->imported = character;
    out->name = character->name ? character->name : path;
    out->source = character->source_path ? character->source_path : path;
    out->rig = character->rig;
    out->rest_local = character->rest_local;
    out->animation_count = character->animation_count;
    out->animations = character->animations;
    return SINEW_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* The procedural arm                                                                        */
/* ---------------------------------------------------------------------------------------- */

enum { ARM_JOINTS = 3 };

typedef struct arm_storage {
    float* positions;
    uint32_t* indices;
    uint32_t* offsets;
    uint32_t* joints;
    float* weights;
    int32_t parents[ARM_JOINTS];
    float bind[ARM_JOINTS * 16];
    float rest_local[ARM_JOINTS * 16];
    const char* names[ARM_JOINTS];
} arm_storage;

static void translation(float* m, float x, float y, float z)
{
    memset(m, 0, 16 * sizeof *m);
    m[0] = m[5] = m[10] = m[15] = 1.0f;
    m[12] = x;
    m[13] = y;
    m[14] = z;
}

static void free_arm(arm_storage* arm)
{
    if (!arm) return;
    free(arm->positions);
    free(arm->indices);
    free(arm->offsets);
    free(arm->joints);
    free(arm->weights);
    free(arm);
}

sinew_result sample_character_make_arm(uint32_t rings, uint32_t sides, sample_character* out)
{
    if (!out) return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_character_make_arm: out is NULL");
    memset(out, 0, sizeof *out);
    if (rings < 2 || sides < 3) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT,
                           "sample_character_make_arm: %u rings of %u sides (need >= 2 and >= 3)",
                           rings, sides);
    }
    if ((uint64_t)rings * sides + 2 > 1000000u) {
        return sample_fail(SINEW_ERROR_LIMIT,
                           "sample_character_make_arm: %u rings of %u sides exceed 1,000,000 vertices",
                           rings, sides);
    }
    const float x0 = -6.0f, x1 = 6.0f, radius = 1.0f, blend = 1.5f;
    const uint32_t vertex_count = rings * sides + 2;
    const uint32_t triangle_count = 2 * sides * (rings - 1) + 2 * sides;
    const uint32_t cap0 = rings * sides, cap1 = cap0 + 1;

    arm_storage* arm = calloc(1, sizeof *arm);
    if (!arm) return sample_fail(SINEW_ERROR_OUT_OF_MEMORY, "sample_character_make_arm: out of memory");
    arm->positions = malloc(sizeof(float) * 3 * vertex_count);
    arm->indices = malloc(sizeof(uint32_t) * 3 * triangle_count);
    arm->offsets = malloc(sizeof(uint32_t) * (vertex_count + 1));
    arm->joints = malloc(sizeof(uint32_t) * 2 * vertex_count);
    arm->weights = malloc(sizeof(float) * 2 * vertex_count);
    if (!arm->positions || !arm->indices || !arm->offsets || !arm->joints || !arm->weights) {
        free_arm(arm);
        return sample_fail(SINEW_ERROR_OUT_OF_MEMORY,
                           "sample_character_make_arm: out of memory for %u vertices", vertex_count);
    }

    for (uint32_t r = 0; r < rings; ++r) {
        float x = x0 + (x1 - x0) * (float)r / (float)(rings - 1);
        for (uint32_t s = 0; s < sides; ++s) {
            double angle = 2.0 * SAMPLE_PI * s / sides;
            float* p = arm->positions + 3 * (size_t)(r * sides + s);
            p[0] = x;
            p[1] = radius * (float)cos(angle);
            p[2] = radius * (float)sin(angle);
        }
    }
    float* c0 = arm->positions + 3 * (size_t)cap0;
    float* c1 = arm->positions + 3 * (size_t)cap1;
    c0[0] = x0; c0[1] = 0.0f; c0[2] = 0.0f;
    c1[0] = x1; c1[1] = 0.0f; c1[2] = 0.0f;

    /* Winding chosen so every normal points out of the tube: the mesh is closed and
     * consistently oriented, so sinew-quality can measure its volume. */
    uint32_t* tri = arm->indices;
    for (uint32_t r = 0; r + 1 < rings; ++r) {
        for (uint32_t s = 0; s < sides; ++s) {
            uint32_t a = r * sides + s, b = r * sides + (s + 1) % sides;
            uint32_t c = a + sides, d = b + sides;
            *tri++ = a; *tri++ = b; *tri++ = d;
            *tri++ = a; *tri++ = d; *tri++ = c;
        }
    }
    for (uint32_t s = 0; s < sides; ++s) {
        uint32_t a = s, b = (s + 1) % sides;
        *tri++ = cap0; *tri++ = b; *tri++ = a;
        uint32_t c = (rings - 1) * sides + s, d = (rings - 1) * sides + (s + 1) % sides;
        *tri++ = cap1; *tri++ = c; *tri++ = d;
    }

    /* Weights: a smoothstep across the elbow keeps the bend free of a crease. */
    uint32_t entry = 0;
    for (uint32_t v = 0; v < vertex_count; ++v) {
        arm->offsets[v] = entry;
        float x = arm->positions[3 * (size_t)v];
        float t = (x + blend) / (2.0f * blend);
        t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
        float w_forearm = t * t * (3.0f - 2.0f * t);
        if (w_forearm < 1.0f) {
            arm->joints[entry] = 0;
            arm->weights[entry++] = 1.0f - w_forearm;
        }
        if (w_forearm > 0.0f) {
            arm->joints[entry] = 1;
            arm->weights[entry++] = w_forearm;
        }
    }
    arm->offsets[vertex_count] = entry;

    arm->parents[0] = -1;
    arm->parents[1] = 0;
    arm->parents[2] = 1;
    arm->names[0] = "shoulder";
    arm->names[1] = "elbow";
    arm->names[2] = "wrist";
    translation(arm->bind, x0, 0.0f, 0.0f);
    translation(arm->bind + 16, 0.0f, 0.0f, 0.0f);
    translation(arm->bind + 32, x1, 0.0f, 0.0f);
    translation(arm->rest_local, x0, 0.0f, 0.0f);
    translation(arm->rest_local + 16, -x0, 0.0f, 0.0f);
    translation(arm->rest_local + 32, x1, 0.0f, 0.0f);

    sinew_rig_desc rig = SINEW_RIG_DESC_INIT;
    rig.name = "procedural arm";
    rig.skeleton.joint_count = ARM_JOINTS;
    rig.skeleton.parents = arm->parents;
    rig.skeleton.bind_matrices = arm->bind;
    rig.skeleton.names = arm->names;
    rig.render_mesh.vertex_count = vertex_count;
    rig.render_mesh.positions = arm->positions;
    rig.render_mesh.triangle_count = triangle_count;
    rig.render_mesh.indices = arm->indices;
    rig.weights.offsets = arm->offsets;
    rig.weights.joints = arm->joints;
    rig.weights.weights = arm->weights;

    out->name = "arm";
    out->source = "procedural arm";
    out->rig = rig;
    out->rest_local = arm->rest_local;
    out->storage = arm;
    return SINEW_OK;
}

uint32_t sample_animation_loop_frames(const sinew_animation* animation)
{
    if (!animation || animation->key_count == 0 || !animation->key_times) return 0;
    const float first = animation->key_times[0];
    const float span = animation->key_times[animation->key_count - 1] - first;
    if (!isfinite(span) || (double)span * 60.0 > (double)SAMPLE_MAX_LOOP_FRAMES) return UINT32_MAX;
    if (!(span > 0.0f)) return 1;
    /* The float expressions of the sampler: the frame's time is (float)frame / 60 and it wraps
     * once time - first reaches the span. */
    uint32_t frame = (uint32_t)floor((double)span * 60.0);
    while (frame > 1 && (float)(frame - 1) / 60.0f - first >= span) --frame;
    while ((float)frame / 60.0f - first < span) ++frame;
    return frame;
}

void sample_character_free(sample_character* character)
{
    if (!character) return;
    if (character->imported) sinew_import_free(character->imported);
    sinew_bake_free(character->baked);
    free_arm((arm_storage*)character->storage);
    memset(character, 0, sizeof *character);
}

/* ---------------------------------------------------------------------------------------- */
/* Joints                                                                                    */
/* ---------------------------------------------------------------------------------------- */

int32_t sample_find_joint(const sample_character* character, const char* name)
{
    if (!character || !name || !character->rig.skeleton.names) return -1;
    const sinew_skeleton_desc* s = &character->rig.skeleton;
    for (uint32_t j = 0; j < s->joint_count; ++j) {
        if (s->names[j] && strcmp(s->names[j], name) == 0) return (int32_t)j;
    }
    return -1;
}

static const float* joint_position(const sample_character* character, uint32_t joint)
{
    return character->rig.skeleton.bind_matrices + 16 * (size_t)joint + 12;
}

static double distance3f(const float* a, const float* b)
{
    double dx = (double)a[0] - b[0], dy = (double)a[1] - b[1], dz = (double)a[2] - b[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* The parent of j, or -1 for a root or an out-of-range parent (the rig refuses those). */
static int32_t parent_of(const sinew_skeleton_desc* s, uint32_t j)
{
    int32_t p = s->parents[j];
    return (p >= 0 && (uint32_t)p < s->joint_count) ? p : -1;
}

int32_t sample_default_joint(const sample_character* character)
{
    if (!character || character->rig.skeleton.joint_count == 0 || !character->rig.skeleton.parents ||
        !character->rig.skeleton.bind_matrices) {
        return -1;
    }
    const sinew_skeleton_desc* s = &character->rig.skeleton;
    const uint32_t n = s->joint_count;
    char* has_child = calloc(n, 1);
    if (!has_child) return -1;
    for (uint32_t j = 0; j < n; ++j) {
        int32_t p = parent_of(s, j);
        if (p >= 0) has_child[p] = 1;
    }
    uint32_t best_leaf = 0, best_count = 0;
    double best_length = -1.0;
    for (uint32_t leaf = 0; leaf < n; ++leaf) {
        if (has_child[leaf]) continue;
        uint32_t count = 1;
        double length = 0.0;
        /* Bounded walk: a cyclic skeleton (which the rig refuses) cannot hang the sample. */
        for (int32_t j = (int32_t)leaf, p = parent_of(s, leaf); p >= 0 && count <= n;
             j = p, p = parent_of(s, (uint32_t)p)) {
            length += distance3f(joint_position(character, (uint32_t)j),
                                 joint_position(character, (uint32_t)p));
            ++count;
        }
        if (count > best_count || (count == best_count && length > best_length)) {
            best_leaf = leaf;
            best_count = count;
            best_length = length;
        }
    }
    free(has_child);
    if (best_count == 0) return -1;   /* every joint has a child: only a cycle does that */
    /* Position k from the root is (count - 1 - k) steps up from the leaf. */
    uint32_t up = best_count - 1 - (best_count - 1) / 2;
    int32_t joint = (int32_t)best_leaf;
    for (uint32_t i = 0; i < up; ++i) joint = parent_of(s, (uint32_t)joint);
    return joint;
}

static int normalize3(float v[3])
{
    double len = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
    if (!(len > 0.0) || !isfinite(len)) return 0;
    for (int k = 0; k < 3; ++k) v[k] = (float)(v[k] / len);
    return 1;
}

sinew_result sample_joint_axes(const sample_character* character, uint32_t joint,
                               float twist_axis[3], float bend_axis[3])
{
    if (!character || !twist_axis || !bend_axis || !character->rig.skeleton.parents ||
        !character->rig.skeleton.bind_matrices) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_joint_axes: NULL argument");
    }
    const sinew_skeleton_desc* s = &character->rig.skeleton;
    if (joint >= s->joint_count) {
        return sample_fail(SINEW_ERROR_JOINT_INDEX, "sample_joint_axes: joint %u of %u", joint,
                           s->joint_count);
    }
    const float* here = joint_position(character, joint);
    int found = 0;
    for (uint32_t c = 0; c < s->joint_count && !found; ++c) {
        if (parent_of(s, c) != (int32_t)joint) continue;
        const float* there = joint_position(character, c);
        for (int k = 0; k < 3; ++k) twist_axis[k] = there[k] - here[k];
        found = normalize3(twist_axis);
    }
    if (!found && parent_of(s, joint) >= 0) {
        const float* parent = joint_position(character, (uint32_t)parent_of(s, joint));
        for (int k = 0; k < 3; ++k) twist_axis[k] = here[k] - parent[k];
        found = normalize3(twist_axis);
    }
    if (!found) {
        const char* name = s->names && s->names[joint] ? s->names[joint] : "";
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT,
                           "joint %u \"%s\" has no child or parent at a distinct position to "
                           "define its twist axis", joint, name);
    }
    /* The world axis least aligned with the twist axis gives the best-conditioned cross
     * product; ties go to the lower axis so the choice is reproducible. */
    int least = 0;
    for (int k = 1; k < 3; ++k) {
        if (fabsf(twist_axis[k]) < fabsf(twist_axis[least])) least = k;
    }
    float world[3] = { 0.0f, 0.0f, 0.0f };
    world[least] = 1.0f;
    bend_axis[0] = twist_axis[1] * world[2] - twist_axis[2] * world[1];
    bend_axis[1] = twist_axis[2] * world[0] - twist_axis[0] * world[2];
    bend_axis[2] = twist_axis[0] * world[1] - twist_axis[1] * world[0];
    normalize3(bend_axis);
    return SINEW_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Poses                                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* out = a * b for column-major 4x4 matrices; out may not alias b. */
static void mat4_mul(const float* a, const float* b, float* out)
{
    for (int c = 0; c < 4; ++c) {
        for (int r = 0; r < 4; ++r) {
            float sum = 0.0f;
            for (int k = 0; k < 4; ++k) sum += a[k * 4 + r] * b[c * 4 + k];
            out[c * 4 + r] = sum;
        }
    }
}

static int in_subtree(const sinew_skeleton_desc* s, uint32_t j, uint32_t root)
{
    int32_t k = (int32_t)j;
    for (uint32_t steps = 0; k >= 0 && steps <= s->joint_count; ++steps) {
        if ((uint32_t)k == root) return 1;
        k = parent_of(s, (uint32_t)k);
    }
    return 0;
}

void sample_rotate_subtree(const sample_character* character, uint32_t joint,
                           const float axis[3], float radians, float* model)
{
    if (!character || !axis || !model || joint >= character->rig.skeleton.joint_count) return;
    const sinew_skeleton_desc* s = &character->rig.skeleton;
    /* T(p) R T(-p): the rotation about the axis through the joint's position p. */
    const float* p = model + 16 * (size_t)joint + 12;
    const float px = p[0], py = p[1], pz = p[2];
    const float c = cosf(radians), sn = sinf(radians), t = 1.0f - c;
    const float x = axis[0], y = axis[1], z = axis[2];
    float m[16] = {
        t * x * x + c,     t * x * y + sn * z, t * x * z - sn * y, 0.0f,
        t * x * y - sn * z, t * y * y + c,     t * y * z + sn * x, 0.0f,
        t * x * z + sn * y, t * y * z - sn * x, t * z * z + c,     0.0f,
        0.0f, 0.0f, 0.0f, 1.0f
    };
    m[12] = px - (m[0] * px + m[4] * py + m[8] * pz);
    m[13] = py - (m[1] * px + m[5] * py + m[9] * pz);
    m[14] = pz - (m[2] * px + m[6] * py + m[10] * pz);
    for (uint32_t j = 0; j < s->joint_count; ++j) {
        if (!in_subtree(s, j, joint)) continue;
        float rotated[16];
        mat4_mul(m, model + 16 * (size_t)j, rotated);
        memcpy(model + 16 * (size_t)j, rotated, sizeof rotated);
    }
}

sinew_result sample_bend_twist_pose(const sample_character* character, uint32_t joint,
                                    float bend_degrees, float twist_degrees, float* out_model)
{
    if (!character || !out_model || !character->rig.skeleton.bind_matrices) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_bend_twist_pose: NULL argument");
    }
    if (!isfinite(bend_degrees) || !isfinite(twist_degrees)) {
        return sample_fail(SINEW_ERROR_NONFINITE, "sample_bend_twist_pose: angle %g / %g is not finite",
                           (double)bend_degrees, (double)twist_degrees);
    }
    float twist_axis[3], bend_axis[3];
    sinew_result r = sample_joint_axes(character, joint, twist_axis, bend_axis);
    if (r != SINEW_OK) return r;
    memcpy(out_model, character->rig.skeleton.bind_matrices,
           sizeof(float) * 16 * character->rig.skeleton.joint_count);
    const float to_radians = (float)(SAMPLE_PI / 180.0);
    if (twist_degrees != 0.0f) {
        sample_rotate_subtree(character, joint, twist_axis, twist_degrees * to_radians, out_model);
    }
    if (bend_degrees != 0.0f) {
        sample_rotate_subtree(character, joint, bend_axis, bend_degrees * to_radians, out_model);
    }
    return SINEW_OK;
}

void sample_joint_turned_direction(const sample_character* character, uint32_t joint,
                                   const float* model, const float rest_direction[3],
                                   float out[3])
{
    if (out != rest_direction) memcpy(out, rest_direction, sizeof(float) * 3);
    const float* m = model + 16 * (size_t)joint;
    const float* b = character->rig.skeleton.bind_matrices + 16 * (size_t)joint;
    if (memcmp(m, b, sizeof(float) * 12) == 0) return;   /* not turned: exactly as at rest */
    /* Solve B x = d for the bind block B (Cramer's rule), then apply the model block. */
    const double det = (double)b[0] * ((double)b[5] * b[10] - (double)b[9] * b[6]) -
                       (double)b[4] * ((double)b[1] * b[10] - (double)b[9] * b[2]) +
                       (double)b[8] * ((double)b[1] * b[6] - (double)b[5] * b[2]);
    if (!(fabs(det) > 1e-12)) return;
    const float* d = rest_direction;
    double x[3];
    for (int k = 0; k < 3; ++k) {
        double col[9];
        for (int c = 0; c < 3; ++c)
            for (int r = 0; r < 3; ++r) col[3 * c + r] = c == k ? d[r] : b[4 * c + r];
        x[k] = (col[0] * (col[4] * col[8] - col[7] * col[5]) -
                col[3] * (col[1] * col[8] - col[7] * col[2]) +
                col[6] * (col[1] * col[5] - col[4] * col[2])) / det;
    }
    float turned[3];
    for (int r = 0; r < 3; ++r)
        turned[r] = (float)(m[r] * x[0] + m[4 + r] * x[1] + m[8 + r] * x[2]);
    if (normalize3(turned)) memcpy(out, turned, sizeof turned);
}

sinew_result sample_turn_joint(const sample_character* character, uint32_t joint,
                               float bend_degrees, float twist_degrees, float* model)
{
    if (!character || !model || !character->rig.skeleton.bind_matrices) {
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT, "sample_turn_joint: NULL argument");
    }
    if (!isfinite(bend_degrees) || !isfinite(twist_degrees)) {
        return sample_fail(SINEW_ERROR_NONFINITE,
                           "sample_turn_joint: angle %g / %g is not finite",
                           (double)bend_degrees, (double)twist_degrees);
    }
    float twist_axis[3], bend_axis[3];
    sinew_result r = sample_joint_axes(character, joint, twist_axis, bend_axis);
    if (r != SINEW_OK) return r;
    sample_joint_turned_direction(character, joint, model, twist_axis, twist_axis);
    sample_joint_turned_direction(character, joint, model, bend_axis, bend_axis);
    const float to_radians = (float)(SAMPLE_PI / 180.0);
    if (twist_degrees != 0.0f) {
        sample_rotate_subtree(character, joint, twist_axis, twist_degrees * to_radians, model);
    }
    if (bend_degrees != 0.0f) {
        sample_rotate_subtree(character, joint, bend_axis, bend_degrees * to_radians, model);
    }
    return SINEW_OK;
}

sinew_result sample_motion_pose(const sample_character* character, uint32_t joint,
                                double seconds, float* out_model)
{
    if (!isfinite(seconds)) {
        return sample_fail(SINEW_ERROR_NONFINITE, "sample_motion_pose: time %g is not finite", seconds);
    }
    /* Both start at zero, so a physics backend begins from rest without a jump. */
    double bend = 45.0 * (1.0 - cos(2.0 * SAMPLE_PI * seconds / 2.0));
    double twist = 90.0 * sin(2.0 * SAMPLE_PI * seconds / 3.0);
    return sample_bend_twist_pose(character, joint, (float)bend, (float)twist, out_model);
}
