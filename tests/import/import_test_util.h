/* Small helpers for the importer tests: column-major 4x4 algebra written here, apart from the
 * importer's own, so that the tests check it rather than repeat it. SPDX-License-Identifier: MIT */
#ifndef SINEW_IMPORT_TEST_UTIL_H
#define SINEW_IMPORT_TEST_UTIL_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_import.h>

static inline void tu_mat4_mul(const float* a, const float* b, float* out)
{
    float r[16];
    for (int c = 0; c < 4; ++c)
        for (int row = 0; row < 4; ++row) {
            double s = 0.0;
            for (int k = 0; k < 4; ++k) s += (double)a[k * 4 + row] * b[c * 4 + k];
            r[c * 4 + row] = (float)s;
        }
    memcpy(out, r, sizeof r);
}

static inline void tu_transform_point(const float* m, const float* p, float* out)
{
    float r[3];
    for (int row = 0; row < 3; ++row)
        r[row] = m[row] * p[0] + m[4 + row] * p[1] + m[8 + row] * p[2] + m[12 + row];
    memcpy(out, r, sizeof r);
}

/* Inverse of an affine matrix (rotation-scale block by its adjugate). */
static inline int tu_affine_inverse(const float* m, float* out)
{
    double a = m[0], b = m[4], c = m[8], d = m[1], e = m[5], f = m[9], g = m[2], h = m[6],
           i = m[10];
    double det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g);
    memset(out, 0, 16 * sizeof(float));
    if (det == 0.0 || !isfinite(det)) return 0;
    double inv[9] = { (e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det,
                      (f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det,
                      (d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det };
    /* inv is row-major: inv[r*3+c]. */
    for (int r = 0; r < 3; ++r)
        for (int col = 0; col < 3; ++col) out[col * 4 + r] = (float)inv[r * 3 + col];
    for (int r = 0; r < 3; ++r)
        out[12 + r] = (float)(-(inv[r * 3] * m[12] + inv[r * 3 + 1] * m[13] +
                                inv[r * 3 + 2] * m[14]));
    out[15] = 1.0f;
    return 1;
}

/* Forward kinematics; requires parents before children (the importer's order). */
static inline int tu_forward_kinematics(const int32_t* parents, uint32_t n, const float* local,
                                        float* model)
{
    for (uint32_t j = 0; j < n; ++j) {
        if (parents[j] >= (int32_t)j) return 0;
        if (parents[j] < 0) memcpy(model + j * 16, local + j * 16, 16 * sizeof(float));
        else tu_mat4_mul(model + (size_t)parents[j] * 16, local + (size_t)j * 16, model + j * 16);
    }
    return 1;
}

/* Rotation about a unit-normalised axis (Rodrigues), as a row-major 3x3. */
static inline void tu_rodrigues(const double axis_in[3], double angle, double r[9])
{
    double len = sqrt(axis_in[0] * axis_in[0] + axis_in[1] * axis_in[1] + axis_in[2] * axis_in[2]);
    double x = 0, y = 0, z = 0;
    if (len > 0) {
        x = axis_in[0] / len;
        y = axis_in[1] / len;
        z = axis_in[2] / len;
    }
    double s = sin(angle), c = cos(angle), t = 1.0 - c;
    r[0] = c + x * x * t;     r[1] = x * y * t - z * s; r[2] = x * z * t + y * s;
    r[3] = y * x * t + z * s; r[4] = c + y * y * t;     r[5] = y * z * t - x * s;
    r[6] = z * x * t - y * s; r[7] = z * y * t + x * s; r[8] = c + z * z * t;
}

static inline void tu_mat3_mul(const double* a, const double* b, double* out)
{
    double r[9];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            r[i * 3 + j] = a[i * 3] * b[j] + a[i * 3 + 1] * b[3 + j] + a[i * 3 + 2] * b[6 + j];
    memcpy(out, r, sizeof r);
}

static inline void tu_mat3_apply(const double* m, const double* v, double* out)
{
    double r[3];
    for (int i = 0; i < 3; ++i) r[i] = m[i * 3] * v[0] + m[i * 3 + 1] * v[1] + m[i * 3 + 2] * v[2];
    memcpy(out, r, sizeof r);
}

typedef struct tu_bounds {
    float min[3], max[3];
} tu_bounds;

static inline tu_bounds tu_bounds_of(const float* positions, uint32_t n)
{
    tu_bounds b = { { FLT_MAX, FLT_MAX, FLT_MAX }, { -FLT_MAX, -FLT_MAX, -FLT_MAX } };
    for (uint32_t v = 0; v < n; ++v)
        for (int a = 0; a < 3; ++a) {
            float p = positions[(size_t)v * 3 + a];
            if (p < b.min[a]) b.min[a] = p;
            if (p > b.max[a]) b.max[a] = p;
        }
    return b;
}

static inline float tu_bounds_diagonal(const tu_bounds* b)
{
    float d[3] = { b->max[0] - b->min[0], b->max[1] - b->min[1], b->max[2] - b->min[2] };
    return sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

static inline int32_t tu_find_joint(const sinew_character* c, const char* name)
{
    for (uint32_t j = 0; j < c->rig.skeleton.joint_count; ++j)
        if (c->rig.skeleton.names && strcmp(c->rig.skeleton.names[j], name) == 0) return (int32_t)j;
    return -1;
}

/* Name of joint j's parent, or "" for a root. */
static inline const char* tu_parent_name(const sinew_character* c, const char* joint)
{
    int32_t j = tu_find_joint(c, joint);
    if (j < 0) return "(missing joint)";
    int32_t p = c->rig.skeleton.parents[j];
    return p < 0 ? "" : c->rig.skeleton.names[p];
}

/* Linear blend skinning of the render mesh with the character's own weights. */
static inline void tu_skin(const sinew_character* c, const float* model, float* out)
{
    const sinew_rig_desc* d = &c->rig;
    uint32_t n = d->skeleton.joint_count;
    float* skin = (float*)malloc((size_t)n * 16 * sizeof(float));
    for (uint32_t j = 0; j < n; ++j) {
        float inverse[16];
        tu_affine_inverse(d->skeleton.bind_matrices + (size_t)j * 16, inverse);
        tu_mat4_mul(model + (size_t)j * 16, inverse, skin + (size_t)j * 16);
    }
    for (uint32_t v = 0; v < d->render_mesh.vertex_count; ++v) {
        double acc[3] = { 0, 0, 0 }, total = 0;
        for (uint32_t e = d->weights.offsets[v]; e < d->weights.offsets[v + 1]; ++e) {
            float p[3];
            tu_transform_point(skin + (size_t)d->weights.joints[e] * 16,
                               d->render_mesh.positions + (size_t)v * 3, p);
            for (int a = 0; a < 3; ++a) acc[a] += d->weights.weights[e] * p[a];
            total += d->weights.weights[e];
        }
        for (int a = 0; a < 3; ++a) out[(size_t)v * 3 + a] = (float)(acc[a] / total);
    }
    free(skin);
}

#endif
