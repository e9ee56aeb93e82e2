/* Small hand-made rigs for runtime tests. SPDX-License-Identifier: MIT */
#include "test_rigs.h"

#include <math.h>
#include <string.h>

void test_mat_identity(float* m)
{
    memset(m, 0, 16 * sizeof(float));
    m[0] = m[5] = m[10] = m[15] = 1.0f;
}

void test_mat_rotation_z(float* m, float radians, float cx, float cy, float cz)
{
    /* Rotation about the z axis through (cx, cy, cz). */
    float c = cosf(radians), s = sinf(radians);
    test_mat_identity(m);
    m[0] = c;
    m[1] = s;
    m[4] = -s;
    m[5] = c;
    m[12] = cx - (c * cx - s * cy);
    m[13] = cy - (s * cx + c * cy);
    m[14] = cz - cz;
}

const sinew_rig_desc* test_bar_make(test_bar* bar, uint32_t rings)
{
    memset(bar, 0, sizeof *bar);
    const float h = 0.25f;
    const float corner[4][2] = { { -h, -h }, { h, -h }, { h, h }, { -h, h } };
    uint32_t nv = rings * 4u;
    for (uint32_t r = 0; r < rings; ++r) {
        float x = 2.0f * (float)r / (float)(rings - 1u);
        for (uint32_t k = 0; k < 4; ++k) {
            float* p = bar->positions + 3u * (4u * r + k);
            p[0] = x;
            p[1] = corner[k][0];
            p[2] = corner[k][1];
        }
    }
    uint32_t nt = 0;
    for (uint32_t r = 0; r + 1 < rings; ++r) {
        for (uint32_t k = 0; k < 4; ++k) {
            uint32_t a = 4u * r + k, b = 4u * r + (k + 1u) % 4u;
            uint32_t c = a + 4u, d = b + 4u;
            uint32_t* t = bar->indices + 3u * nt;
            t[0] = a; t[1] = b; t[2] = d;
            t[3] = a; t[4] = d; t[5] = c;
            nt += 2;
        }
    }
    /* Caps: two triangles at each end. */
    uint32_t last = 4u * (rings - 1u);
    uint32_t caps[12] = { 0, 2, 1, 0, 3, 2, last, last + 1, last + 2, last, last + 2, last + 3 };
    memcpy(bar->indices + 3u * nt, caps, sizeof caps);
    nt += 4;

    bar->parents[0] = -1;
    bar->parents[1] = 0;
    test_mat_identity(bar->bind);
    test_mat_identity(bar->bind + 16);
    bar->bind[16 + 12] = 1.0f;
    bar->names[0] = "root";
    bar->names[1] = "elbow";
    uint32_t at = 0;
    for (uint32_t v = 0; v < nv; ++v) {
        float x = bar->positions[3u * v];
        bar->offsets[v] = at;
        if (fabsf(x - 1.0f) < 1e-6f) {
            bar->joints[at] = 0; bar->weights[at++] = 0.5f;
            bar->joints[at] = 1; bar->weights[at++] = 0.5f;
        } else {
            bar->joints[at] = x < 1.0f ? 0u : 1u;
            bar->weights[at++] = 1.0f;
        }
    }
    bar->offsets[nv] = at;

    sinew_rig_desc init = SINEW_RIG_DESC_INIT;
    bar->desc = init;
    bar->desc.name = "bar";
    bar->desc.skeleton.joint_count = 2;
    bar->desc.skeleton.parents = bar->parents;
    bar->desc.skeleton.bind_matrices = bar->bind;
    bar->desc.skeleton.names = bar->names;
    bar->desc.render_mesh.vertex_count = nv;
    bar->desc.render_mesh.positions = bar->positions;
    bar->desc.render_mesh.triangle_count = nt;
    bar->desc.render_mesh.indices = bar->indices;
    bar->desc.weights.offsets = bar->offsets;
    bar->desc.weights.joints = bar->joints;
    bar->desc.weights.weights = bar->weights;
    return &bar->desc;
}
