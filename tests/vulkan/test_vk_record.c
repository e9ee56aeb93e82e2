/* Recording into the engine's frame (sinew_vk_record): vk-lbs and vk-dqs skins bound to ranges
 * of one buffer the test owns, their dispatches recorded into the test's command buffers with
 * up to SINEW_VK_RECORD_FRAMES of them in flight, under the validation layers. The ranges must
 * hold what lbs and dqs compute on the CPU; read_output, swaps and removal must not depend on
 * the engine's submissions; bad ranges and calls are refused. SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "vk_test.h"

#define SKINS 3
#define FRAMES 12

/* The engine's side: one host-visible storage buffer with every skin's range, a command pool
 * on the context's queue family and a ring of command buffers with fences. */
typedef struct engine {
    VkDevice device;
    VkQueue queue;
    vk_test_buffer mem;
    VkBuffer buffer;
    VkDeviceSize size, stride;          /* per skin: positions, then normals, stride apart */
    void* mapped;
    VkCommandPool pool;
    VkCommandBuffer cmd[SINEW_VK_RECORD_FRAMES];
    VkFence fence[SINEW_VK_RECORD_FRAMES];
    int submitted[SINEW_VK_RECORD_FRAMES];
} engine;

static VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a)
{
    return (v + a - 1u) / a * a;
}

static void engine_buffer(vk_scene* s, engine* e, const sinew_vk_context_info* info)
{
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(info->physical_device, &props);
    VkDeviceSize align = props.limits.minStorageBufferOffsetAlignment;
    e->stride = align_up((VkDeviceSize)s->vertices * 12u, align > 256u ? align : 256u);
    e->size = 2u * SKINS * e->stride;
    vk_test_buffer_create(s->ctx, e->size,
                          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_VERTEX_BUFFER_BIT,
                          &e->mem);
    e->buffer = e->mem.buffer;
    e->mapped = e->mem.mapped;
}

static void engine_open(vk_scene* s, engine* e)
{
    memset(e, 0, sizeof *e);
    sinew_vk_context_info info = SINEW_VK_CONTEXT_INFO_INIT;
    assert_int_equal(sinew_vk_context_get_info(s->ctx, &info), SINEW_OK);
    e->device = info.device;
    e->queue = info.queue;
    engine_buffer(s, e, &info);
    VkCommandPoolCreateInfo pi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pi.queueFamilyIndex = info.queue_family_index;
    assert_int_equal(vkCreateCommandPool(e->device, &pi, NULL, &e->pool), VK_SUCCESS);
    VkCommandBufferAllocateInfo ci = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ci.commandPool = e->pool;
    ci.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ci.commandBufferCount = SINEW_VK_RECORD_FRAMES;
    assert_int_equal(vkAllocateCommandBuffers(e->device, &ci, e->cmd), VK_SUCCESS);
    for (uint32_t k = 0; k < SINEW_VK_RECORD_FRAMES; ++k) {
        VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        assert_int_equal(vkCreateFence(e->device, &fi, NULL, &e->fence[k]), VK_SUCCESS);
    }
}

static void engine_wait(engine* e, uint32_t k)
{
    if (!e->submitted[k]) return;
    assert_int_equal(vkWaitForFences(e->device, 1, &e->fence[k], VK_TRUE, UINT64_MAX), VK_SUCCESS);
    e->submitted[k] = 0;
}

static void engine_close(engine* e)
{
    for (uint32_t k = 0; k < SINEW_VK_RECORD_FRAMES; ++k) {
        engine_wait(e, k);
        vkDestroyFence(e->device, e->fence[k], NULL);
    }
    vkDestroyCommandPool(e->device, e->pool, NULL);
    vk_test_buffer_free(&e->mem);
}

/* Frame slot k: waits for its previous use, records every pending skin into it and submits
 * it; returns the skins recorded. */
static uint32_t engine_frame(vk_scene* s, engine* e, uint32_t k)
{
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    assert_int_equal(vkBeginCommandBuffer(e->cmd[k], &bi), VK_SUCCESS);
    uint32_t recorded = 99;
    assert_int_equal(sinew_vk_record(s->world, e->cmd[k], NULL, &recorded), SINEW_OK);
    assert_int_equal(vkEndCommandBuffer(e->cmd[k]), VK_SUCCESS);
    assert_int_equal(vkResetFences(e->device, 1, &e->fence[k]), VK_SUCCESS);
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &e->cmd[k];
    sinew_vk_context_lock_queue(s->ctx);
    VkResult vr = vkQueueSubmit(e->queue, 1, &si, e->fence[k]);
    sinew_vk_context_unlock_queue(s->ctx);
    assert_int_equal(vr, VK_SUCCESS);
    e->submitted[k] = 1;
    return recorded;
}

/* The range of skin i (positions, then normals one stride later). */
static sinew_vk_range_ext range_of(const engine* e, uint32_t i)
{
    sinew_vk_range_ext r = SINEW_VK_RANGE_EXT_INIT;
    r.buffer = e->buffer;
    r.buffer_size = e->size;
    r.position_offset = 2u * i * e->stride;
    r.normal_offset = r.position_offset + e->stride;
    return r;
}

static sinew_result bind_range(vk_scene* s, sinew_skin skin, const sinew_vk_range_ext* r)
{
    sinew_output_desc out = SINEW_OUTPUT_DESC_INIT;
    out.kind = SINEW_OUTPUT_EXTERNAL;
    out.vertex_capacity = s->vertices;
    out.next = r;
    return sinew_skin_bind_output(s->world, skin, &out);
}

/* Range i against the CPU twin's output (positions; normals too when `normals`). */
static void check_range(vk_scene* s, const engine* e, uint32_t i, sinew_skin twin, int normals)
{
    size_t n3 = (size_t)s->vertices * 3u;
    float* p = malloc(n3 * sizeof(float));
    float* n = malloc(n3 * sizeof(float));
    assert_true(p && n);
    vk_scene_read(s, twin, p, n);
    const float* gp = (const float*)((const char*)e->mapped + 2u * i * e->stride);
    const float* gn = (const float*)((const char*)e->mapped + (2u * i + 1u) * e->stride);
    assert_true(vk_max_diff(p, gp, n3) <= 1e-5f * s->diagonal);
    if (normals) assert_true(vk_max_diff(n, gn, n3) <= 1e-4f);
    free(p);
    free(n);
}

typedef struct fixture {
    vk_scene s;
    engine e;
    sinew_skin gpu[SKINS], lbs, dqs;
    int removed[SKINS];
    sinew_vk_range_ext ranges[SKINS];
} fixture;

/* vk-lbs, vk-dqs and vk-lbs without normals, bound to ranges 0..2; lbs and dqs as twins. */
static void fixture_open(fixture* f)
{
    memset(f->removed, 0, sizeof f->removed);
    vk_scene_open(&f->s, "cylinder", 2);
    engine_open(&f->s, &f->e);
    sinew_param no_normals = {"normals", "0"};
    f->gpu[0] = vk_scene_add_skin(&f->s, "vk-lbs");
    f->gpu[1] = vk_scene_add_skin(&f->s, "vk-dqs");
    f->gpu[2] = vk_scene_add_skin_with(&f->s, "vk-lbs", &no_normals, 1);
    f->lbs = vk_scene_add_skin(&f->s, "lbs");
    f->dqs = vk_scene_add_skin(&f->s, "dqs");
    for (uint32_t i = 0; i < SKINS; ++i) {
        f->ranges[i] = range_of(&f->e, i);
        assert_int_equal(bind_range(&f->s, f->gpu[i], &f->ranges[i]), SINEW_OK);
    }
}

static void fixture_update(fixture* f, float t)
{
    vk_scene_sample(&f->s, t);
    for (uint32_t i = 0; i < SKINS; ++i)
        if (!f->removed[i]) vk_scene_pose(&f->s, f->gpu[i]);
    vk_scene_pose(&f->s, f->lbs);
    vk_scene_pose(&f->s, f->dqs);
    assert_int_equal(sinew_world_update(f->s.world, 1.0f / 60.0f), SINEW_OK);
}

static void fixture_close(fixture* f)
{
    engine_close(&f->e);
    vk_scene_close(&f->s);
}

static void test_frames_in_flight(void** state)
{
    (void)state;
    fixture f;
    fixture_open(&f);
    for (uint32_t frame = 0; frame < FRAMES; ++frame) {
        uint32_t k = frame % SINEW_VK_RECORD_FRAMES;
        engine_wait(&f.e, k); /* the frame that last used slot k, three frames back */
        fixture_update(&f, (float)frame / FRAMES);
        assert_int_equal(engine_frame(&f.s, &f.e, k), SKINS);
    }
    for (uint32_t k = 0; k < SINEW_VK_RECORD_FRAMES; ++k) engine_wait(&f.e, k);
    check_range(&f.s, &f.e, 0, f.lbs, 1);
    check_range(&f.s, &f.e, 1, f.dqs, 1);
    check_range(&f.s, &f.e, 2, f.lbs, 0);
    /* Nothing stepped since: nothing recorded, no barrier. */
    assert_int_equal(engine_frame(&f.s, &f.e, 0), 0);
    fixture_close(&f);
}

/* read_output right after an update, before any recording: the skin's own computation. */
static void test_read_output_without_the_engine(void** state)
{
    (void)state;
    fixture f;
    fixture_open(&f);
    fixture_update(&f, 0.3f);
    size_t n3 = (size_t)f.s.vertices * 3u;
    float* a = malloc(n3 * sizeof(float));
    float* b = malloc(n3 * sizeof(float));
    assert_true(a && b);
    vk_scene_read(&f.s, f.lbs, a, NULL);
    vk_scene_read(&f.s, f.gpu[0], b, NULL);
    assert_true(vk_max_diff(a, b, n3) <= 1e-5f * f.s.diagonal);
    free(a);
    free(b);
    assert_int_equal(engine_frame(&f.s, &f.e, 0), SKINS);
    fixture_close(&f);
}

/* A swap vk-lbs -> vk-dqs keeps the range; the old instance, recorded into a frame, is freed
 * by the world's tie after SINEW_VK_RECORD_FRAMES recordings, and a removed skin with it. */
static void test_swap_and_remove(void** state)
{
    (void)state;
    fixture f;
    fixture_open(&f);
    fixture_update(&f, 0.2f);
    assert_int_equal(engine_frame(&f.s, &f.e, 0), SKINS);
    assert_int_equal(sinew_skin_set_backend(f.s.world, f.gpu[0], "vk-dqs", NULL, 0), SINEW_OK);
    assert_int_equal(sinew_skin_wait_swap(f.s.world, f.gpu[0]), SINEW_OK);
    assert_string_equal(sinew_skin_backend(f.s.world, f.gpu[0]), "vk-dqs");
    assert_int_equal(sinew_world_remove_skin(f.s.world, f.gpu[2]), SINEW_OK);
    f.removed[2] = 1;
    for (uint32_t frame = 1; frame <= 2u * SINEW_VK_RECORD_FRAMES; ++frame) {
        uint32_t k = frame % SINEW_VK_RECORD_FRAMES;
        engine_wait(&f.e, k);
        fixture_update(&f, 0.2f + 0.05f * (float)frame);
        assert_int_equal(engine_frame(&f.s, &f.e, k), SKINS - 1);
    }
    for (uint32_t k = 0; k < SINEW_VK_RECORD_FRAMES; ++k) engine_wait(&f.e, k);
    check_range(&f.s, &f.e, 0, f.dqs, 1);
    check_range(&f.s, &f.e, 1, f.dqs, 1);
    fixture_close(&f);
}

static void test_bad_ranges_and_calls(void** state)
{
    (void)state;
    fixture f;
    fixture_open(&f);
    sinew_vk_range_ext r = range_of(&f.e, 0);
    r.buffer_size = r.normal_offset; /* the normals do not fit */
    assert_int_equal(bind_range(&f.s, f.gpu[0], &r), SINEW_ERROR_OUTPUT_BINDING);
    r = range_of(&f.e, 0);
    r.normal_offset = r.position_offset + 12u; /* overlaps the positions */
    assert_int_equal(bind_range(&f.s, f.gpu[0], &r), SINEW_ERROR_OUTPUT_BINDING);
    r = range_of(&f.e, 0);
    r.buffer = VK_NULL_HANDLE;
    assert_int_equal(bind_range(&f.s, f.gpu[0], &r), SINEW_ERROR_OUTPUT_BINDING);
    r = range_of(&f.e, 0);
    r.header.struct_size = sizeof(sinew_ext_header);
    assert_int_equal(bind_range(&f.s, f.gpu[0], &r), SINEW_ERROR_OUTPUT_BINDING);
    /* A CPU backend has no host pointers to write; vk-pbd takes no range. */
    r = range_of(&f.e, 0);
    assert_int_equal(bind_range(&f.s, f.lbs, &r), SINEW_ERROR_OUTPUT_BINDING);
    sinew_vk_record_info info = SINEW_VK_RECORD_INFO_INIT;
    info.struct_size = 4u;
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    assert_int_equal(vkBeginCommandBuffer(f.e.cmd[0], &bi), VK_SUCCESS);
    assert_int_equal(sinew_vk_record(f.s.world, f.e.cmd[0], &info, NULL), SINEW_ERROR_STRUCT_SIZE);
    assert_int_equal(sinew_vk_record(f.s.world, VK_NULL_HANDLE, NULL, NULL),
                     SINEW_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sinew_vk_record(NULL, f.e.cmd[0], NULL, NULL), SINEW_ERROR_INVALID_ARGUMENT);
    sinew_world* plain = sinew_test_world(&f.s.log, 1);
    assert_int_equal(sinew_vk_record(plain, f.e.cmd[0], NULL, NULL), SINEW_ERROR_NO_SERVICE);
    sinew_world_destroy(plain);
    assert_int_equal(vkEndCommandBuffer(f.e.cmd[0]), VK_SUCCESS);
    /* The refused binds changed nothing: every skin still records into its range. */
    fixture_update(&f, 0.6f);
    assert_int_equal(engine_frame(&f.s, &f.e, 0), SKINS);
    engine_wait(&f.e, 0);
    check_range(&f.s, &f.e, 0, f.lbs, 1);
    fixture_close(&f);
}

static void test_vk_pbd_refuses_a_range(void** state)
{
    (void)state;
    vk_scene s;
    vk_scene_open(&s, "cylinder", 1);
    engine e;
    engine_open(&s, &e);
    sinew_skin skin = vk_scene_add_skin(&s, "vk-pbd");
    sinew_vk_range_ext r = range_of(&e, 0);
    assert_int_equal(bind_range(&s, skin, &r), SINEW_ERROR_OUTPUT_BINDING);
    engine_close(&e);
    vk_scene_close(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frames_in_flight),
        cmocka_unit_test(test_read_output_without_the_engine),
        cmocka_unit_test(test_swap_and_remove),
        cmocka_unit_test(test_bad_ranges_and_calls),
        cmocka_unit_test(test_vk_pbd_refuses_a_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
