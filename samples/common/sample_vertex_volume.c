/* Local volume change per vertex and its colour map. SPDX-License-Identifier: MIT */
#include "sample_vertex_volume.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sample_log.h"

const float SAMPLE_VOLUME_NEUTRAL[3] = {0.75f, 0.75f, 0.75f};
static const float VOLUME_LOST[3] = {0.05f, 0.16f, 0.85f};
static const float VOLUME_GAINED[3] = {0.85f, 0.06f, 0.04f};

/* Inverse of a column-major affine 4x4 (rotation-scale block and translation); 0 when the
 * block is singular. */
static int affine_inverse(const float* m, float* out)
{
    const double a = m[0], b = m[4], c = m[8], d = m[1], e = m[5], f = m[9], g = m[2],
                 h = m[6], k = m[10];
    const double det = a * (e * k - f * h) - b * (d * k - f * g) + c * (d * h - e * g);
    if (!(fabs(det) > 1e-12)) return 0;
    const double inv[9] = {(e * k - f * h) / det, (c * h - b * k) / det, (b * f - c * e) / det,
                           (f * g - d * k) / det, (a * k - c * g) / det, (c * d - a * f) / det,
                           (d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det};
    memset(out, 0, sizeof(float) * 16);
    for (int r = 0; r < 3; r++) {
        for (int col = 0; col < 3; col++) out[col * 4 + r] = (float)inv[r * 3 + col];
        out[12 + r] = (float)-(inv[r * 3] * m[12] + inv[r * 3 + 1] * m[13] +
                               inv[r * 3 + 2] * m[14]);
    }
    out[15] = 1.0f;
    return 1;
}

static void transform_point(const float* m, const float* p, double* out)
{
    for (int r = 0; r < 3; r++)
        out[r] = (double)m[r] * p[0] + (double)m[4 + r] * p[1] + (double)m[8 + r] * p[2] +
                 m[12 + r];
}

/* Signed volume of the tetrahedron (q, a, b, c): positive when (a, b, c) faces away from q. */
static double cone_volume(const double* q, const float* a, const float* b, const float* c)
{
    double u[3], v[3], w[3];
    for (int k = 0; k < 3; k++) {
        u[k] = a[k] - q[k];
        v[k] = b[k] - q[k];
        w[k] = c[k] - q[k];
    }
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) + u[1] * (v[2] * w[0] - v[0] * w[2]) +
            u[2] * (v[0] * w[1] - v[1] * w[0])) / 6.0;
}

/* Closest point to p on segment [a, b], and its squared distance. */
static double closest_on_segment(const float* p, const float* a, const float* b, float* out)
{
    double ab[3], ap[3], len2 = 0.0, t = 0.0;
    for (int k = 0; k < 3; k++) {
        ab[k] = (double)b[k] - a[k];
        ap[k] = (double)p[k] - a[k];
        len2 += ab[k] * ab[k];
        t += ab[k] * ap[k];
    }
    t = len2 > 0.0 ? fmin(fmax(t / len2, 0.0), 1.0) : 0.0;
    double d2 = 0.0;
    for (int k = 0; k < 3; k++) {
        out[k] = (float)(a[k] + t * ab[k]);
        d2 += ((double)p[k] - out[k]) * ((double)p[k] - out[k]);
    }
    return d2;
}

/* Joint j's closest bone point to p: over the segments from j to its children, or j itself
 * when it has none. Returns the squared distance. */
static double closest_on_bones(const sinew_skeleton_desc* s, uint32_t j, const float* p,
                               float* out)
{
    const float* here = s->bind_matrices + 16 * (size_t)j + 12;
    double best = closest_on_segment(p, here, here, out);
    int children = 0;
    for (uint32_t c = 0; c < s->joint_count; c++) {
        if (s->parents[c] != (int32_t)j) continue;
        float q[3];
        double d2 = closest_on_segment(p, here, s->bind_matrices + 16 * (size_t)c + 12, q);
        if (children++ == 0 || d2 < best) {
            best = d2;
            memcpy(out, q, sizeof q);
        }
    }
    return best;
}

/* The reference point of vertex v: the closest bone point among its influences of at least
 * the minimum weight (the heaviest one when none reaches it). */
static void choose_reference(sample_vertex_volume* vv, const sinew_skeleton_desc* s,
                             const float* p, uint32_t v, const uint32_t* offsets,
                             const uint32_t* joints, const float* weights)
{
    uint32_t heaviest = offsets[v];
    for (uint32_t e = offsets[v]; e < offsets[v + 1]; e++)
        if (weights[e] > weights[heaviest]) heaviest = e;
    double best = INFINITY;
    vv->carrier[v] = -1;
    for (uint32_t e = offsets[v]; e < offsets[v + 1]; e++) {
        if (joints[e] >= s->joint_count) continue;
        if (weights[e] < SAMPLE_VERTEX_VOLUME_MIN_WEIGHT && e != heaviest) continue;
        float q[3];
        double d2 = closest_on_bones(s, joints[e], p, q);
        if (d2 < best) {
            best = d2;
            vv->carrier[v] = (int32_t)joints[e];
            memcpy(vv->reference + 3 * (size_t)v, q, sizeof q);
        }
    }
}

/* The rest cones, and the vertices whose cone is too flat to have a ratio. */
static sinew_result rest_cones(sample_vertex_volume* vv, const float* rest)
{
    const sample_topology* t = vv->topology;
    double* area = calloc(t->vertex_count, sizeof *area);
    if (!area)
        return sample_fail(SINEW_ERROR_OUT_OF_MEMORY, "sample_vertex_volume_build: out of memory");
    for (uint32_t i = 0; i < t->triangle_count; i++) {
        const uint32_t* tri = t->triangles + 3 * (size_t)i;
        const float *a = rest + 3 * (size_t)tri[0], *b = rest + 3 * (size_t)tri[1],
                    *c = rest + 3 * (size_t)tri[2];
        double e1[3], e2[3];
        for (int k = 0; k < 3; k++) {
            e1[k] = (double)b[k] - a[k];
            e2[k] = (double)c[k] - a[k];
        }
        double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                       e1[0] * e2[1] - e1[1] * e2[0]};
        double tri_area = 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int k = 0; k < 3; k++) {
            const uint32_t v = tri[k];
            if (vv->carrier[v] < 0) continue;
            double q[3] = {vv->reference[3 * v], vv->reference[3 * v + 1],
                           vv->reference[3 * v + 2]};
            vv->rest_volume[v] += cone_volume(q, a, b, c);
            area[v] += tri_area;
        }
    }
    for (uint32_t v = 0; v < t->vertex_count; v++) {
        if (vv->carrier[v] < 0) continue;
        double d2 = 0.0;
        for (int k = 0; k < 3; k++) {
            double dk = (double)rest[3 * v + k] - vv->reference[3 * v + k];
            d2 += dk * dk;
        }
        /* Mean height 3 V / A over the ring against the distance to the reference. */
        if (!(3.0 * vv->rest_volume[v] >= 0.25 * area[v] * sqrt(d2)) || area[v] <= 0.0)
            vv->carrier[v] = -1;
    }
    free(area);
    return SINEW_OK;
}

sinew_result sample_vertex_volume_build(const sample_topology* topology, const float* rest,
                                        const sinew_skeleton_desc* skeleton,
                                        const uint32_t* offsets, const uint32_t* joints,
                                        const float* weights, sample_vertex_volume* out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!topology || !rest || !skeleton || !skeleton->bind_matrices || !skeleton->parents ||
        !offsets || !joints || !weights || !out)
        return sample_fail(SINEW_ERROR_INVALID_ARGUMENT,
                           "sample_vertex_volume_build: NULL argument");
    const uint32_t n = topology->vertex_count, jc = skeleton->joint_count;
    out->topology = topology;
    out->joint_count = jc;
    out->carrier = malloc(sizeof(int32_t) * n);
    out->reference = calloc(3 * (size_t)n, sizeof(float));
    out->rest_volume = calloc(n, sizeof(double));
    out->posed_volume = calloc(n, sizeof(double));
    out->inverse_bind = malloc(sizeof(float) * 16 * jc);
    out->skinning = malloc(sizeof(float) * 16 * jc);
    if (!out->carrier || !out->reference || !out->rest_volume || !out->posed_volume ||
        !out->inverse_bind || !out->skinning) {
        sample_vertex_volume_free(out);
        return sample_fail(SINEW_ERROR_OUT_OF_MEMORY, "sample_vertex_volume_build: out of memory");
    }
    for (uint32_t j = 0; j < jc; j++)
        if (!affine_inverse(skeleton->bind_matrices + 16 * (size_t)j,
                            out->inverse_bind + 16 * (size_t)j)) {
            sample_vertex_volume_free(out);
            return sample_fail(SINEW_ERROR_INVALID_ARGUMENT,
                               "sample_vertex_volume_build: bind matrix %u is singular", j);
        }
    for (uint32_t v = 0; v < n; v++) {
        out->carrier[v] = -1;
        if (topology->weld[v] == v)
            choose_reference(out, skeleton, rest + 3 * (size_t)v, v, offsets, joints, weights);
    }
    sinew_result r = rest_cones(out, rest);
    if (r != SINEW_OK) sample_vertex_volume_free(out);
    return r;
}

void sample_vertex_volume_free(sample_vertex_volume* vv)
{
    if (!vv) return;
    free(vv->carrier);
    free(vv->reference);
    free(vv->rest_volume);
    free(vv->posed_volume);
    free(vv->inverse_bind);
    free(vv->skinning);
    memset(vv, 0, sizeof *vv);
}

/* out = a * b, column-major 4x4. */
static void mat4_mul(const float* a, const float* b, float* out)
{
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 4; r++) {
            float sum = 0.0f;
            for (int k = 0; k < 4; k++) sum += a[k * 4 + r] * b[c * 4 + k];
            out[c * 4 + r] = sum;
        }
}

uint32_t sample_vertex_volume_ratios(sample_vertex_volume* vv, const float* positions,
                                     const float* model, float* out_ratios)
{
    const sample_topology* t = vv->topology;
    for (uint32_t j = 0; j < vv->joint_count; j++)
        mat4_mul(model + 16 * (size_t)j, vv->inverse_bind + 16 * (size_t)j,
                 vv->skinning + 16 * (size_t)j);
    memset(vv->posed_volume, 0, sizeof(double) * t->vertex_count);
    for (uint32_t i = 0; i < t->triangle_count; i++) {
        const uint32_t* tri = t->triangles + 3 * (size_t)i;
        for (int k = 0; k < 3; k++) {
            const uint32_t v = tri[k];
            if (vv->carrier[v] < 0) continue;
            double q[3];
            transform_point(vv->skinning + 16 * (size_t)vv->carrier[v],
                            vv->reference + 3 * (size_t)v, q);
            vv->posed_volume[v] += cone_volume(q, positions + 3 * (size_t)tri[0],
                                               positions + 3 * (size_t)tri[1],
                                               positions + 3 * (size_t)tri[2]);
        }
    }
    uint32_t defined = 0;
    for (uint32_t v = 0; v < t->vertex_count; v++) {
        const uint32_t rep = t->weld[v];
        float ratio = NAN;
        if (vv->carrier[rep] >= 0) ratio = (float)(vv->posed_volume[rep] / vv->rest_volume[rep]);
        if (!isfinite(ratio)) ratio = NAN;
        defined += !isnan(ratio);
        out_ratios[v] = ratio;
    }
    return defined;
}

void sample_volume_color(float ratio, float range, float out_rgb[3])
{
    float s = 0.0f;
    if (isfinite(ratio) && ratio > 0.0f && range > 1.0f)
        s = logf(ratio) / logf(range);
    else if (isfinite(ratio) && ratio <= 0.0f)
        s = -1.0f;   /* the cone turned inside out: as lost as can be */
    s = fminf(fmaxf(s, -1.0f), 1.0f);
    const float* end = s < 0.0f ? VOLUME_LOST : VOLUME_GAINED;
    const float w = fabsf(s);
    for (int k = 0; k < 3; k++) out_rgb[k] = SAMPLE_VOLUME_NEUTRAL[k] * (1.0f - w) + end[k] * w;
}

void sample_volume_color_srgb(float ratio, float range, uint8_t out_rgb[3])
{
    float rgb[3];
    sample_volume_color(ratio, range, rgb);
    for (int k = 0; k < 3; k++)
        out_rgb[k] =
            (uint8_t)lrintf(255.0f * powf(fminf(fmaxf(rgb[k], 0.0f), 1.0f), 1.0f / 2.2f));
}
