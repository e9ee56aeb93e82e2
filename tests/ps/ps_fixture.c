/* SPDX-License-Identifier: MIT */
#include "ps_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void* host_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    size_t rounded = (size + alignment - 1u) / alignment * alignment;
    return aligned_alloc(alignment, rounded ? rounded : alignment);
}

static void host_free(void* p, void* user)
{
    (void)user;
    free(p);
}

static void host_parallel_for(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain,
                              void* user)
{
    const ps_test_host* host = (const ps_test_host*)user;
    (void)grain;
    if (!host->uneven) {
        fn(data, 0, count);
        return;
    }
    /* Fibonacci-sized chunks: every boundary case of a job range shows up somewhere. */
    uint32_t a = 1, b = 2, begin = 0;
    while (begin < count) {
        uint32_t end = count - begin < a ? count : begin + a;
        fn(data, begin, end);
        begin = end;
        uint32_t c = a + b;
        a = b;
        b = c;
    }
}

void ps_test_host_init(ps_test_host* host, sinew_log_level level, int uneven)
{
    memset(host, 0, sizeof *host);
    sinew_test_log_init(&host->log);
    host->uneven = uneven;
    host->api.struct_size = (uint32_t)sizeof(sinew_host_api);
    host->api.allocator.alloc = host_alloc;
    host->api.allocator.free = host_free;
    host->api.logger = host->log.logger;
    host->api.log_level = level;
    host->api.jobs.parallel_for = host_parallel_for;
    host->api.jobs.thread_count = 1;
    host->api.jobs.user = host;
}

void ps_test_rig_load(ps_test_rig* rig, const char* path)
{
    memset(rig, 0, sizeof *rig);
    sinew_result r = sample_character_load(path, NULL, &rig->character);
    if (r != SINEW_OK) fail_msg("loading %s: %s", path, sinew_result_string(r));
    /* ps never reads the inverse bind matrices. */
    r = sample_rig_view_build(&rig->character, &rig->built);
    if (r != SINEW_OK) fail_msg("the rig view of %s: %s", path, sinew_result_string(r));
    rig->view = rig->built.view;
}

void ps_test_rig_free(ps_test_rig* rig)
{
    sample_character_free(&rig->character);
    sample_rig_view_free(&rig->built);
    memset(rig, 0, sizeof *rig);
}

static sinew_result buffer_write(const void* data, size_t size, void* user)
{
    ps_test_buffer* b = (ps_test_buffer*)user;
    if (b->size + size > b->capacity) {
        size_t cap = b->capacity ? b->capacity : 4096u;
        while (cap < b->size + size) cap *= 2u;
        unsigned char* p = realloc(b->data, cap);
        if (!p) return SINEW_ERROR_OUT_OF_MEMORY;
        b->data = p;
        b->capacity = cap;
    }
    if (size) memcpy(b->data + b->size, data, size);
    b->size += size;
    return SINEW_OK;
}

sinew_bake_writer ps_test_buffer_writer(ps_test_buffer* buffer)
{
    sinew_bake_writer w = {buffer_write, buffer};
    return w;
}

void ps_test_buffer_free(ps_test_buffer* buffer)
{
    free(buffer->data);
    memset(buffer, 0, sizeof *buffer);
}

/* Inverse of an affine column-major 4x4 matrix (3x3 part by cofactors). */
static void affine_inverse(const float* m, float* out)
{
    double a[3][3], c[3][3];
    for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) a[r][k] = m[4 * k + r];
    c[0][0] = a[1][1] * a[2][2] - a[1][2] * a[2][1];
    c[0][1] = a[0][2] * a[2][1] - a[0][1] * a[2][2];
    c[0][2] = a[0][1] * a[1][2] - a[0][2] * a[1][1];
    c[1][0] = a[1][2] * a[2][0] - a[1][0] * a[2][2];
    c[1][1] = a[0][0] * a[2][2] - a[0][2] * a[2][0];
    c[1][2] = a[0][2] * a[1][0] - a[0][0] * a[1][2];
    c[2][0] = a[1][0] * a[2][1] - a[1][1] * a[2][0];
    c[2][1] = a[0][1] * a[2][0] - a[0][0] * a[2][1];
    c[2][2] = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    double det = a[0][0] * c[0][0] + a[0][1] * c[1][0] + a[0][2] * c[2][0];
    assert_true(fabs(det) > 1e-12);
    memset(out, 0, 16 * sizeof(float));
    for (int r = 0; r < 3; ++r) {
        double t = 0.0;
        for (int k = 0; k < 3; ++k) {
            out[4 * k + r] = (float)(c[r][k] / det);
            t -= c[r][k] / det * m[12 + k];
        }
        out[12 + r] = (float)t;
    }
    out[15] = 1.0f;
}

void ps_test_skinning(const ps_test_rig* rig, uint32_t joint, float bend_degrees,
                      float twist_degrees, float* out)
{
    uint32_t jn = rig->view.joint_count;
    float* model = malloc(sizeof(float) * 16u * jn);
    assert_non_null(model);
    assert_int_equal(sample_bend_twist_pose(&rig->character, joint, bend_degrees, twist_degrees,
                                            model),
                     SINEW_OK);
    for (uint32_t j = 0; j < jn; ++j) {
        float inv[16];
        affine_inverse(rig->view.bind_matrices + 16u * j, inv);
        const float* a = model + 16u * j;
        float* o = out + 16u * j;
        for (int c = 0; c < 4; ++c)
            for (int r = 0; r < 4; ++r) {
                float s = 0.0f;
                for (int k = 0; k < 4; ++k) s += a[4 * k + r] * inv[4 * c + k];
                o[4 * c + r] = s;
            }
    }
    free(model);
}
