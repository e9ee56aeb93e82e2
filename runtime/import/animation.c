/* Sampling imported animations, and the small transform algebra the importers share.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>

#include <cglm/mat4.h>

#include "import_internal.h"

/* Above this cosine the two rotations are so close that slerp's sin(theta) loses precision;
 * a normalised lerp is then indistinguishable from slerp. */
#define IMPORT_SLERP_LINEAR_COS 0.9995f

void import_quat_normalize(float q[4])
{
    float len = sqrtf(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(len > 1e-30f) || !isfinite(len)) {
        q[0] = q[1] = q[2] = 0.0f;
        q[3] = 1.0f;
        return;
    }
    for (int i = 0; i < 4; ++i) q[i] /= len;
}

void import_quat_axis_angle(const float axis[3], float angle, float out_q[4])
{
    float len = sqrtf(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    if (!(len > 0.0f)) {
        out_q[0] = out_q[1] = out_q[2] = 0.0f;
        out_q[3] = 1.0f;
        return;
    }
    float s = sinf(0.5f * angle) / len;
    out_q[0] = axis[0] * s;
    out_q[1] = axis[1] * s;
    out_q[2] = axis[2] * s;
    out_q[3] = cosf(0.5f * angle);
    import_quat_normalize(out_q);
}

void import_quat_slerp(const float a[4], const float b[4], float u, float out_q[4])
{
    float d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    /* q and -q are the same rotation: take the shorter of the two arcs. */
    float sign = 1.0f;
    if (d < 0.0f) {
        d = -d;
        sign = -1.0f;
    }
    float wa, wb;
    if (d > IMPORT_SLERP_LINEAR_COS) {
        wa = 1.0f - u;
        wb = u;
    } else {
        float theta = acosf(d);
        float s = sinf(theta);
        wa = sinf((1.0f - u) * theta) / s;
        wb = sinf(u * theta) / s;
    }
    for (int i = 0; i < 4; ++i) out_q[i] = wa * a[i] + sign * wb * b[i];
    import_quat_normalize(out_q);
}

void import_compose_trs(const float t[3], const float q[4], const float s[3], float out_m[16])
{
    float x = q[0], y = q[1], z = q[2], w = q[3];
    float r[9] = {
        1.0f - 2.0f * (y * y + z * z), 2.0f * (x * y + z * w), 2.0f * (x * z - y * w),
        2.0f * (x * y - z * w), 1.0f - 2.0f * (x * x + z * z), 2.0f * (y * z + x * w),
        2.0f * (x * z + y * w), 2.0f * (y * z - x * w), 1.0f - 2.0f * (x * x + y * y),
    };
    for (int c = 0; c < 3; ++c) {
        for (int row = 0; row < 3; ++row) out_m[c * 4 + row] = r[c * 3 + row] * s[c];
        out_m[c * 4 + 3] = 0.0f;
    }
    out_m[12] = t[0];
    out_m[13] = t[1];
    out_m[14] = t[2];
    out_m[15] = 1.0f;
}

/* Quaternion of a rotation matrix given as three columns (Shepperd's method: branch on the
 * largest diagonal term so the square root never sees a tiny argument). */
static void quat_from_columns(const float c0[3], const float c1[3], const float c2[3],
                              float out_q[4])
{
    float m00 = c0[0], m11 = c1[1], m22 = c2[2];
    float trace = m00 + m11 + m22;
    if (trace > 0.0f) {
        float s = sqrtf(trace + 1.0f) * 2.0f;
        out_q[3] = 0.25f * s;
        out_q[0] = (c1[2] - c2[1]) / s;
        out_q[1] = (c2[0] - c0[2]) / s;
        out_q[2] = (c0[1] - c1[0]) / s;
    } else if (m00 > m11 && m00 > m22) {
        float s = sqrtf(1.0f + m00 - m11 - m22) * 2.0f;
        out_q[3] = (c1[2] - c2[1]) / s;
        out_q[0] = 0.25f * s;
        out_q[1] = (c1[0] + c0[1]) / s;
        out_q[2] = (c2[0] + c0[2]) / s;
    } else if (m11 > m22) {
        float s = sqrtf(1.0f + m11 - m00 - m22) * 2.0f;
        out_q[3] = (c2[0] - c0[2]) / s;
        out_q[0] = (c1[0] + c0[1]) / s;
        out_q[1] = 0.25f * s;
        out_q[2] = (c2[1] + c1[2]) / s;
    } else {
        float s = sqrtf(1.0f + m22 - m00 - m11) * 2.0f;
        out_q[3] = (c0[1] - c1[0]) / s;
        out_q[0] = (c2[0] + c0[2]) / s;
        out_q[1] = (c2[1] + c1[2]) / s;
        out_q[2] = 0.25f * s;
    }
    import_quat_normalize(out_q);
}

void import_decompose_trs(const float m[16], float out_t[3], float out_q[4], float out_s[3])
{
    out_t[0] = m[12];
    out_t[1] = m[13];
    out_t[2] = m[14];
    float c[3][3];
    for (int i = 0; i < 3; ++i) {
        for (int row = 0; row < 3; ++row) c[i][row] = m[i * 4 + row];
        out_s[i] = sqrtf(c[i][0] * c[i][0] + c[i][1] * c[i][1] + c[i][2] * c[i][2]);
    }
    if (!(out_s[0] > 1e-30f) || !(out_s[1] > 1e-30f) || !(out_s[2] > 1e-30f)) {
        /* A collapsed axis has no orientation to recover. */
        out_q[0] = out_q[1] = out_q[2] = 0.0f;
        out_q[3] = 1.0f;
        return;
    }
    float det = c[0][0] * (c[1][1] * c[2][2] - c[1][2] * c[2][1]) -
                c[1][0] * (c[0][1] * c[2][2] - c[0][2] * c[2][1]) +
                c[2][0] * (c[0][1] * c[1][2] - c[0][2] * c[1][1]);
    /* A mirror is carried by a negative x scale so that the rest stays a rotation. */
    if (det < 0.0f) out_s[0] = -out_s[0];
    for (int i = 0; i < 3; ++i)
        for (int row = 0; row < 3; ++row) c[i][row] /= out_s[i];
    quat_from_columns(c[0], c[1], c[2], out_q);
}

void import_mat4_mul(const float a[16], const float b[16], float out_m[16])
{
    mat4 ma, mb, mr;
    memcpy(ma, a, sizeof ma);
    memcpy(mb, b, sizeof mb);
    glm_mat4_mul(ma, mb, mr);
    memcpy(out_m, mr, sizeof mr);
}

int import_mat4_invert(const float m[16], float out_m[16])
{
    /* Cofactor expansion in double: bind matrices of large scenes (FBX in centimetres) carry
     * translations in the thousands, where a float inverse would lose the rotation's digits. */
    double a[16], inv[16];
    for (int i = 0; i < 16; ++i) a[i] = m[i];
    inv[0] = a[5] * a[10] * a[15] - a[5] * a[11] * a[14] - a[9] * a[6] * a[15] +
             a[9] * a[7] * a[14] + a[13] * a[6] * a[11] - a[13] * a[7] * a[10];
    inv[4] = -a[4] * a[10] * a[15] + a[4] * a[11] * a[14] + a[8] * a[6] * a[15] -
             a[8] * a[7] * a[14] - a[12] * a[6] * a[11] + a[12] * a[7] * a[10];
    inv[8] = a[4] * a[9] * a[15] - a[4] * a[11] * a[13] - a[8] * a[5] * a[15] +
             a[8] * a[7] * a[13] + a[12] * a[5] * a[11] - a[12] * a[7] * a[9];
    inv[12] = -a[4] * a[9] * a[14] + a[4] * a[10] * a[13] + a[8] * a[5] * a[14] -
              a[8] * a[6] * a[13] - a[12] * a[5] * a[10] + a[12] * a[6] * a[9];
    inv[1] = -a[1] * a[10] * a[15] + a[1] * a[11] * a[14] + a[9] * a[2] * a[15] -
             a[9] * a[3] * a[14] - a[13] * a[2] * a[11] + a[13] * a[3] * a[10];
    inv[5] = a[0] * a[10] * a[15] - a[0] * a[11] * a[14] - a[8] * a[2] * a[15] +
             a[8] * a[3] * a[14] + a[12] * a[2] * a[11] - a[12] * a[3] * a[10];
    inv[9] = -a[0] * a[9] * a[15] + a[0] * a[11] * a[13] + a[8] * a[1] * a[15] -
             a[8] * a[3] * a[13] - a[12] * a[1] * a[11] + a[12] * a[3] * a[9];
    inv[13] = a[0] * a[9] * a[14] - a[0] * a[10] * a[13] - a[8] * a[1] * a[14] +
              a[8] * a[2] * a[13] + a[12] * a[1] * a[10] - a[12] * a[2] * a[9];
    inv[2] = a[1] * a[6] * a[15] - a[1] * a[7] * a[14] - a[5] * a[2] * a[15] +
             a[5] * a[3] * a[14] + a[13] * a[2] * a[7] - a[13] * a[3] * a[6];
    inv[6] = -a[0] * a[6] * a[15] + a[0] * a[7] * a[14] + a[4] * a[2] * a[15] -
             a[4] * a[3] * a[14] - a[12] * a[2] * a[7] + a[12] * a[3] * a[6];
    inv[10] = a[0] * a[5] * a[15] - a[0] * a[7] * a[13] - a[4] * a[1] * a[15] +
              a[4] * a[3] * a[13] + a[12] * a[1] * a[7] - a[12] * a[3] * a[5];
    inv[14] = -a[0] * a[5] * a[14] + a[0] * a[6] * a[13] + a[4] * a[1] * a[14] -
              a[4] * a[2] * a[13] - a[12] * a[1] * a[6] + a[12] * a[2] * a[5];
    inv[3] = -a[1] * a[6] * a[11] + a[1] * a[7] * a[10] + a[5] * a[2] * a[11] -
             a[5] * a[3] * a[10] - a[9] * a[2] * a[7] + a[9] * a[3] * a[6];
    inv[7] = a[0] * a[6] * a[11] - a[0] * a[7] * a[10] - a[4] * a[2] * a[11] +
             a[4] * a[3] * a[10] + a[8] * a[2] * a[7] - a[8] * a[3] * a[6];
    inv[11] = -a[0] * a[5] * a[11] + a[0] * a[7] * a[9] + a[4] * a[1] * a[11] -
              a[4] * a[3] * a[9] - a[8] * a[1] * a[7] + a[8] * a[3] * a[5];
    inv[15] = a[0] * a[5] * a[10] - a[0] * a[6] * a[9] - a[4] * a[1] * a[10] +
              a[4] * a[2] * a[9] + a[8] * a[1] * a[6] - a[8] * a[2] * a[5];
    double det = a[0] * inv[0] + a[1] * inv[4] + a[2] * inv[8] + a[3] * inv[12];
    if (det == 0.0 || !isfinite(det)) return 0;
    for (int i = 0; i < 16; ++i) {
        double v = inv[i] / det;
        if (!isfinite(v) || fabs(v) > 3.0e38) return 0;
        out_m[i] = (float)v;
    }
    return 1;
}

SINEW_API sinew_result sinew_animation_sample(const sinew_animation* animation, float time,
                                              int loop, float* out_local)
{
    /* There is no logger here: a bad argument is reported by its code alone. */
    if (!animation || !out_local) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!isfinite(time)) return SINEW_ERROR_NONFINITE;
    uint32_t keys = animation->key_count;
    uint32_t joints = animation->joint_count;
    if (keys == 0 || !animation->key_times) return SINEW_ERROR_INVALID_ARGUMENT;
    if (joints > 0 && (!animation->rotations || !animation->translations || !animation->scales))
        return SINEW_ERROR_INVALID_ARGUMENT;
    float first = animation->key_times[0];
    float last = animation->key_times[keys - 1];
    if (!isfinite(first) || !isfinite(last) || last < first) return SINEW_ERROR_INVALID_ARGUMENT;

    float t = time;
    float span = last - first;
    if (loop && span > 0.0f) {
        t = fmodf(time - first, span);
        if (t < 0.0f) t += span;
        t += first;
    }
    if (t < first) t = first;
    if (t > last) t = last;

    /* Largest key with key_times[k] <= t. */
    uint32_t lo = 0, hi = keys - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (animation->key_times[mid] <= t) lo = mid;
        else hi = mid - 1;
    }
    uint32_t k0 = lo;
    uint32_t k1 = k0 + 1 < keys ? k0 + 1 : k0;
    float dt = animation->key_times[k1] - animation->key_times[k0];
    float u = dt > 0.0f ? (t - animation->key_times[k0]) / dt : 0.0f;
    if (!(u >= 0.0f)) u = 0.0f;
    if (u > 1.0f) u = 1.0f;

    for (uint32_t j = 0; j < joints; ++j) {
        size_t a = (size_t)k0 * joints + j;
        size_t b = (size_t)k1 * joints + j;
        float q[4], tr[3], sc[3];
        float qa[4], qb[4];
        memcpy(qa, animation->rotations + a * 4, sizeof qa);
        memcpy(qb, animation->rotations + b * 4, sizeof qb);
        import_quat_normalize(qa);
        import_quat_normalize(qb);
        import_quat_slerp(qa, qb, u, q);
        for (int i = 0; i < 3; ++i) {
            tr[i] = animation->translations[a * 3 + i] * (1.0f - u) +
                    animation->translations[b * 3 + i] * u;
            sc[i] = animation->scales[a * 3 + i] * (1.0f - u) + animation->scales[b * 3 + i] * u;
        }
        import_compose_trs(tr, q, sc, out_local + (size_t)j * 16);
    }
    return SINEW_OK;
}
