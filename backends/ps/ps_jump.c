/* Pose discontinuities of the physics backends (ps, fps, and fps-cuda through fps). The tissue
 * follows the skeleton with inertia, so a pose that jumps within one update (a teleport, an
 * animation cut, a loop that jumps from its last key back to its first) would drag the skin
 * through the body for many steps. An update whose pose does not continue the previous one
 * (flagged SINEW_POSE_DISCONTINUOUS by the engine, or found here) restarts the tissue from the
 * new pose instead: the skin takes the pose's linear-blend shape, base vertices their anchors,
 * velocities are zero, and the backend steps at the new pose only (ps_update.c interpolates no
 * pose through the jump) and zeroes the velocities again after the first step, which is then
 * quasi-static. SPDX-License-Identifier: MIT
 *
 * The test compares the pose of the update with the one of the previous update (the rest pose
 * before the first, so that a character spawned straight into a far pose restarts from it as
 * well), once per update on the whole change whatever number of steps the update runs: a
 * joint turning more than jump_angle relative to its parent (the angle of
 * R_before^T R_after of its parent-relative rotation), or moving more than jump_distance rig
 * heights relative to where its parent's motion takes it (for a root: its move in model space;
 * this also catches a teleport of a rig whose root is a fixed scene node and whose hips
 * carry the motion). The rig's height is the largest extent of the rest skin's bounding box.
 * After set_state the next pose is taken without a test: the given shape belongs to it (a
 * backend swap hands over the shape and then the pose it was made for). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps_internal.h"

#define PS_JUMP_PI 3.14159265358979323846

void ps_jump_params_default(ps_jump_params* p)
{
    p->angle = 45.0;
    p->distance = 0.5;
}

static void identity_poses(float* skinning, uint32_t joint_count)
{
    for (uint32_t j = 0; j < joint_count; ++j)
        for (int k = 0; k < 16; ++k) skinning[16u * j + k] = (k % 5 == 0) ? 1.0f : 0.0f;
}

sinew_result ps_jump_init(ps_jump* j, const sinew_host_api* host, const char* backend,
                          const sinew_rig_view* rig, const ps_model* m,
                          const ps_jump_params* params)
{
    memset(j, 0, sizeof *j);
    j->host = *host;
    j->backend = backend;
    j->params = *params;
    j->joint_count = rig->joint_count;
    j->parents = rig->parents;
    j->bind = rig->bind_matrices;
    j->names = rig->names;
    j->render_count = rig->render_mesh.vertex_count;
    j->render_rest = rig->render_mesh.positions;
    j->render_indices = rig->render_mesh.indices;
    j->weight_offsets = rig->weight_offsets;
    j->weight_joints = rig->weight_joints;
    j->weight_values = rig->weight_values;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t i = 0; i < m->n; ++i)
        for (int c = 0; c < 3; ++c) {
            lo[c] = fmin(lo[c], m->rest[3u * i + c]);
            hi[c] = fmax(hi[c], m->rest[3u * i + c]);
        }
    for (int c = 0; c < 3 && m->n > 0; ++c) j->height = fmax(j->height, hi[c] - lo[c]);
    j->previous = (float*)sinew_host_calloc(host, j->joint_count, 64u);
    if (!j->previous) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory",
                                             backend);
    identity_poses(j->previous, j->joint_count);
    return SINEW_OK;
}

void ps_jump_free(ps_jump* j)
{
    sinew_host_free(&j->host, j->previous);
    j->previous = NULL;
}

/* ---- the test ---- */

/* The 3x3 part of a column-major 4x4, row-major in doubles. */
static void linear_part(const float* M, double out[9])
{
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) out[3 * r + c] = M[4 * c + r];
}

static void mul3(const double a[9], const double b[9], double out[9])
{
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            out[3 * r + c] = a[3 * r] * b[c] + a[3 * r + 1] * b[3 + c] + a[3 * r + 2] * b[6 + c];
}

/* The inverse by cofactors; false for a singular or non-finite matrix. */
static bool inverse3(const double a[9], double out[9])
{
    double c0 = a[4] * a[8] - a[5] * a[7];
    double c1 = a[5] * a[6] - a[3] * a[8];
    double c2 = a[3] * a[7] - a[4] * a[6];
    double det = a[0] * c0 + a[1] * c1 + a[2] * c2;
    if (!isfinite(det) || fabs(det) < 1e-300) return false;
    double s = 1.0 / det;
    out[0] = c0 * s;
    out[1] = (a[2] * a[7] - a[1] * a[8]) * s;
    out[2] = (a[1] * a[5] - a[2] * a[4]) * s;
    out[3] = c1 * s;
    out[4] = (a[0] * a[8] - a[2] * a[6]) * s;
    out[5] = (a[2] * a[3] - a[0] * a[5]) * s;
    out[6] = c2 * s;
    out[7] = (a[1] * a[6] - a[0] * a[7]) * s;
    out[8] = (a[0] * a[4] - a[1] * a[3]) * s;
    return true;
}

/* The linear part of joint j's skinning matrix relative to its parent's (a root: its own). */
static bool parent_relative(const ps_jump* jp, const float* skinning, uint32_t j, double out[9])
{
    double A[9];
    linear_part(skinning + 16u * j, A);
    int32_t p = jp->parents[j];
    if (p < 0) {
        memcpy(out, A, sizeof A);
        return true;
    }
    double P[9], Pinv[9];
    linear_part(skinning + 16u * (uint32_t)p, P);
    if (!inverse3(P, Pinv)) return false;
    mul3(Pinv, A, out);
    return true;
}

/* Degrees joint j turns relative to its parent from `before` to `after`, or -1 where a matrix
 * is singular. The change C = Q_before^-1 Q_after of the parent-relative part Q = S_p^-1 S_j is
 * similar to the change of the joint's local rotation (Q = B_p L B_j^-1 for bind matrices B),
 * so its trace over the cube root of its determinant (any uniform scale removed) is 1 + 2 cos
 * of the angle whatever the bind matrices are. */
static double turn_degrees(const ps_jump* jp, const float* before, const float* after, uint32_t j)
{
    double qa[9], qb[9], qa_inv[9], C[9];
    if (!parent_relative(jp, before, j, qa) || !parent_relative(jp, after, j, qb) ||
        !inverse3(qa, qa_inv))
        return -1.0;
    mul3(qa_inv, qb, C);
    double det = C[0] * (C[4] * C[8] - C[5] * C[7]) - C[1] * (C[3] * C[8] - C[5] * C[6]) +
                 C[2] * (C[3] * C[7] - C[4] * C[6]);
    if (!(det > 1e-12) || !isfinite(det)) return -1.0;
    double cosine = 0.5 * ((C[0] + C[4] + C[8]) / cbrt(det) - 1.0);
    return acos(fmax(-1.0, fmin(1.0, cosine))) * (180.0 / PS_JUMP_PI);
}

/* How far joint j moves from `before` to `after` beyond what its parent's motion does to it
 * (a root: its whole move), in model units; -1 where the parent's matrix is singular. */
static double move_distance(const ps_jump* jp, const float* before, const float* after, uint32_t j)
{
    const float* b = jp->bind + 16u * j + 12u;
    double rest[3] = {b[0], b[1], b[2]}, xa[3], xb[3], carried[3];
    ps_transform_point(before + 16u * j, rest, xa);
    ps_transform_point(after + 16u * j, rest, xb);
    int32_t p = jp->parents[j];
    if (p < 0) {
        memcpy(carried, xa, sizeof carried);
    } else {
        /* the parent's motion S_p,after S_p,before^-1 applied to the joint's old position */
        const float* Pa = before + 16u * (uint32_t)p;
        double A[9], Ainv[9], d[3], y[3];
        linear_part(Pa, A);
        if (!inverse3(A, Ainv)) return -1.0;
        for (int r = 0; r < 3; ++r) d[r] = xa[r] - Pa[12 + r];
        for (int r = 0; r < 3; ++r)
            y[r] = Ainv[3 * r] * d[0] + Ainv[3 * r + 1] * d[1] + Ainv[3 * r + 2] * d[2];
        ps_transform_point(after + 16u * (uint32_t)p, y, carried);
    }
    double dx = xb[0] - carried[0], dy = xb[1] - carried[1], dz = xb[2] - carried[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

bool ps_jump_detect(const ps_jump* j, const float* before, const float* after,
                    ps_jump_cause* cause)
{
    cause->kind = PS_JUMP_NONE;
    cause->joint = 0;
    cause->amount = 0.0;
    double angle = j->params.angle, distance = j->params.distance * j->height;
    double worst_angle = 0.0, worst_move = 0.0;
    uint32_t angle_joint = 0, move_joint = 0;
    for (uint32_t k = 0; k < j->joint_count; ++k) {
        double a = angle > 0.0 ? turn_degrees(j, before, after, k) : -1.0;
        if (a > worst_angle) {
            worst_angle = a;
            angle_joint = k;
        }
        double d = distance > 0.0 ? move_distance(j, before, after, k) : -1.0;
        if (d > worst_move) {
            worst_move = d;
            move_joint = k;
        }
    }
    if (angle > 0.0 && worst_angle > angle) {
        cause->kind = PS_JUMP_ANGLE;
        cause->joint = angle_joint;
        cause->amount = worst_angle;
    } else if (distance > 0.0 && worst_move > distance) {
        cause->kind = PS_JUMP_DISTANCE;
        cause->joint = move_joint;
        cause->amount = worst_move / j->height;
    }
    return cause->kind != PS_JUMP_NONE;
}

/* ---- the pose sequence ---- */

void ps_jump_set_pose(ps_jump* j, const sinew_pose_view* pose)
{
    if (pose->struct_size >= offsetof(sinew_pose_view, flags) + sizeof(uint32_t))
        j->flags |= pose->flags;
}

void ps_jump_set_state(ps_jump* j)
{
    j->keep_next = true;
    j->flags = 0; /* the shape given after a flagged pose is that pose's */
}

/* The linear-blend shape of the render mesh for `skinning` (weights of the rig). */
static void blend_render(const ps_jump* j, const float* skinning, float* out)
{
    for (uint32_t v = 0; v < j->render_count; ++v) {
        const float* r = j->render_rest + 3u * v;
        double p[3] = {r[0], r[1], r[2]}, acc[3] = {0.0, 0.0, 0.0}, q[3];
        for (uint32_t e = j->weight_offsets[v]; e < j->weight_offsets[v + 1]; ++e) {
            ps_transform_point(skinning + 16u * j->weight_joints[e], p, q);
            for (int c = 0; c < 3; ++c) acc[c] += j->weight_values[e] * q[c];
        }
        for (int c = 0; c < 3; ++c) out[3u * v + c] = (float)acc[c];
    }
}

/* The skin shape a restart takes: the linear-blend render mesh mapped to the skin as set_state
 * maps a shape; without weights each skin vertex moves with its bone. */
static sinew_result restart_shape(const ps_jump* j, const ps_model* m, const float* skinning,
                                  float* skin)
{
    if (!j->weight_offsets || !j->weight_joints || !j->weight_values) {
        for (uint32_t i = 0; i < m->n; ++i) {
            const double* q = m->rest + 3u * i;
            double p[3];
            ps_transform_point(skinning + 16u * m->bones[m->vertex_bone[i]].joint, q, p);
            for (int c = 0; c < 3; ++c) skin[3u * i + c] = (float)p[c];
        }
        return SINEW_OK;
    }
    float* render = (float*)sinew_host_alloc(&j->host, (size_t)j->render_count * 12u);
    if (!render)
        return sinew_host_fail(&j->host, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory",
                               j->backend);
    blend_render(j, skinning, render);
    ps_render_to_skin(m, j->render_indices, render, skin, true);
    sinew_host_free(&j->host, render);
    return SINEW_OK;
}

static void log_restart(const ps_jump* j, const ps_jump_cause* cause)
{
    const sinew_host_api* host = &j->host;
    unsigned long long update = (unsigned long long)j->updates;
    const char* name = cause->kind == PS_JUMP_NONE || cause->kind == PS_JUMP_FLAGGED
                           ? "" : j->names[cause->joint];
    if (cause->kind == PS_JUMP_FLAGGED)
        sinew_host_log(host, SINEW_LOG_INFO, "%s: discontinuous pose (flagged) at update %llu: "
                       "tissue re-initialised from the pose", j->backend, update);
    else if (cause->kind == PS_JUMP_ANGLE)
        sinew_host_log(host, SINEW_LOG_INFO, "%s: pose jump at update %llu (joint %u \"%s\" "
                       "rotated %.0f degrees): tissue re-initialised from the pose", j->backend,
                       update, cause->joint, name, cause->amount);
    else
        sinew_host_log(host, SINEW_LOG_INFO, "%s: pose jump at update %llu (joint %u \"%s\" moved "
                       "%.2f rig heights): tissue re-initialised from the pose", j->backend, update,
                       cause->joint, name, cause->amount);
}

sinew_result ps_jump_begin_update(ps_jump* j, ps_output* o, const ps_model* m,
                                  const float* skinning, bool* reset)
{
    *reset = false;
    j->updates++;
    bool keep = j->keep_next; /* a set_state shape is the current pose's until this update */
    j->keep_next = false;
    if (!skinning) return SINEW_OK;
    ps_jump_cause cause = {PS_JUMP_NONE, 0u, 0.0};
    if (j->flags & SINEW_POSE_DISCONTINUOUS)
        cause.kind = PS_JUMP_FLAGGED;
    else if (!keep)
        (void)ps_jump_detect(j, j->previous, skinning, &cause);
    memcpy(j->previous, skinning, (size_t)j->joint_count * 64u);
    j->flags = 0;
    if (cause.kind == PS_JUMP_NONE) return SINEW_OK;
    float* skin = (float*)sinew_host_alloc(&j->host, (size_t)(m->n ? m->n : 1u) * 12u);
    if (!skin)
        return sinew_host_fail(&j->host, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory",
                               j->backend);
    sinew_result r = restart_shape(j, m, skinning, skin);
    if (r == SINEW_OK) {
        o->ops->set_skin(o->sim, skin, NULL);
        log_restart(j, &cause);
        *reset = true;
    }
    sinew_host_free(&j->host, skin);
    return r;
}
