/* fps-cuda reaches the Vulkan module through the world's services, never by symbol lookup: its
 * lookup (fpsc_vk_find and fpsc_vk_export_memory, cuda/fps_cuda_vk.c, compiled here as in the
 * plugin) runs on the CPU against a Vulkan service table of this test's own, given by
 * hand-made host tables and by a world to a registered backend's host api. Hosts without
 * services, a world without the service and a table that lacks a function are refused with a
 * reason and no log line; the functions found are the fake's, and calls reach it.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#include <sinew/sinew_host.h>

#include "cuda_test.h"
#include "fps_cuda_vk.h"

static int g_calls[4];
static const struct sinew_vk_output* g_seen_output;

static struct sinew_vk_context* fake_context(const sinew_vk_service* service)
{
    (void)service;
    return NULL;
}

static sinew_result fake_export_memory(const struct sinew_vk_output* output,
                                       struct sinew_vk_memory_export* out)
{
    fpsc_vk_memory_export* ex = (fpsc_vk_memory_export*)out;
    CHECK(ex->struct_size == sizeof *ex && ex->fd == -1);
    g_calls[0]++;
    g_seen_output = output;
    ex->fd = 42;
    ex->allocation_size = 4096;
    ex->buffer_size = 1024;
    ex->dedicated = 1;
    return SINEW_OK;
}

static sinew_result fake_export_semaphores(const struct sinew_vk_output* output, int* written,
                                           int* read)
{
    (void)output;
    g_calls[1]++;
    *written = *read = -1;
    return SINEW_ERROR_UNSUPPORTED;
}

static sinew_result fake_set_writer(struct sinew_vk_output* output, int enabled)
{
    (void)output, (void)enabled;
    g_calls[2]++;
    return SINEW_OK;
}

static sinew_result fake_external_frame(struct sinew_vk_output* output, uint64_t* wait,
                                        uint64_t* signal)
{
    (void)output;
    g_calls[3]++;
    *wait = 3;
    *signal = 5;
    return SINEW_OK;
}

static const sinew_vk_service g_fake = {
    {(uint32_t)sizeof(sinew_vk_service), SINEW_VK_SERVICE_VERSION}, fake_context,
    fake_export_memory, fake_export_semaphores, fake_set_writer, fake_external_frame};

/* A host's get_service that hands out the table in service_context. */
static sinew_result table_get_service(const sinew_host_api* host, uint32_t id,
                                      uint32_t min_version, const void** out)
{
    const sinew_vk_service* vk = (const sinew_vk_service*)host->service_context;
    *out = id == SINEW_SERVICE_VULKAN && vk && vk->header.version >= min_version ? vk : NULL;
    return *out ? SINEW_OK : SINEW_ERROR_NO_SERVICE;
}

static void expect_refused(const sinew_host_api* host, const char* words)
{
    const sinew_vk_service* vk = &g_fake;
    const char* why = fpsc_vk_find(host, &vk);
    printf("  refused: %s\n", why ? why : "(not refused)");
    CHECK(why && strstr(why, words));
    CHECK(vk == NULL);
}

static void check_hand_made_hosts(void)
{
    cuda_test_log log = {0};
    sinew_host_api host = cuda_test_host(&log);
    expect_refused(&host, "no services"); /* a table without get_service */
    host.get_service = table_get_service;
    host.struct_size = SINEW_HOST_API_SIZE_V2; /* a host of ABI version 2 */
    expect_refused(&host, "no services");
    host.struct_size = SINEW_HOST_API_SIZE_V3;
    expect_refused(&host, "no Vulkan service");
    sinew_vk_service lacking = g_fake;
    lacking.output_external_frame = NULL;
    host.service_context = &lacking;
    expect_refused(&host, "lacks");
    sinew_vk_service short_table = g_fake;
    short_table.header.struct_size = (uint32_t)sizeof(sinew_service_header);
    host.service_context = &short_table;
    expect_refused(&host, "lacks");

    host.service_context = (void*)&g_fake;
    const sinew_vk_service* vk = NULL;
    CHECK(fpsc_vk_find(&host, &vk) == NULL);
    CHECK(vk == &g_fake);
    /* the plugin's calls reach the fake's functions */
    static int marker;
    const struct sinew_vk_output* output = (const struct sinew_vk_output*)(void*)&marker;
    fpsc_vk_memory_export ex;
    CHECK(fpsc_vk_export_memory(vk, output, &ex) == SINEW_OK);
    CHECK(g_calls[0] == 1 && g_seen_output == output);
    CHECK(ex.fd == 42 && ex.allocation_size == 4096 && ex.buffer_size == 1024 && ex.dedicated);
    int wfd = 0, rfd = 0;
    CHECK(vk->output_export_semaphores(output, &wfd, &rfd) == SINEW_ERROR_UNSUPPORTED);
    CHECK(vk->output_set_external_writer((struct sinew_vk_output*)(void*)&marker, 1) == SINEW_OK);
    uint64_t wait = 0, signal = 0;
    CHECK(vk->output_external_frame((struct sinew_vk_output*)(void*)&marker, &wait, &signal) ==
          SINEW_OK);
    CHECK(wait == 3 && signal == 5);
    CHECK(g_calls[1] == 1 && g_calls[2] == 1 && g_calls[3] == 1);
    CHECK(log.lines == 0);
}

/* A backend registered in a world, whose host api the test keeps. */
static const sinew_host_api* g_backend_host;

static sinew_result spy_probe(const sinew_host_api* host)
{
    g_backend_host = host;
    return SINEW_OK;
}

static sinew_result spy_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                const sinew_param* params, uint32_t count, const void* next,
                                void** out)
{
    (void)host, (void)rig, (void)params, (void)count, (void)next, (void)out;
    return SINEW_ERROR_UNSUPPORTED;
}

static sinew_result spy_set_pose(void* i, const sinew_pose_view* p) { (void)i, (void)p; return SINEW_OK; }
static sinew_result spy_step(void* i, float dt) { (void)i, (void)dt; return SINEW_OK; }
static sinew_result spy_output(void* i, const sinew_output_view* o) { (void)i, (void)o; return SINEW_OK; }
static sinew_result spy_state(void* i, const sinew_state_view* s) { (void)i, (void)s; return SINEW_OK; }
static void spy_destroy(void* i) { (void)i; }

static const sinew_backend_vtable g_spy = {
    (uint32_t)sizeof(sinew_backend_vtable), "test-vk-spy", SINEW_BACKEND_FLAG_GPU, spy_probe,
    spy_prepare, spy_set_pose, spy_step, spy_output, spy_output, spy_state, spy_state,
    spy_destroy, NULL, NULL, 0u};

/* What a backend of a world is handed finds the service the world provides (as the Vulkan
 * module provides it), and nothing once the world has none. */
static void check_world_host(void)
{
    cuda_test_log log = {0};
    sinew_host_api host = cuda_test_host(&log);
    sinew_world_desc desc = SINEW_WORLD_DESC_INIT;
    desc.logger = &host.logger;
    desc.thread_count = 1;
    sinew_world* world = NULL;
    CHECK(sinew_world_create(&desc, &world) == SINEW_OK);
    CHECK(sinew_world_register_backend(world, &g_spy) == SINEW_OK);
    CHECK(sinew_world_probe_backend(world, "test-vk-spy") == SINEW_OK);
    CHECK(g_backend_host != NULL);
    expect_refused(g_backend_host, "no Vulkan service");
    CHECK(sinew_world_set_service(world, SINEW_SERVICE_VULKAN, &g_fake) == SINEW_OK);
    const sinew_vk_service* vk = NULL;
    CHECK(fpsc_vk_find(g_backend_host, &vk) == NULL && vk == &g_fake);
    /* a copy of the host api (as the plugin keeps one in its instance) finds it too */
    sinew_host_api copy = *g_backend_host;
    vk = NULL;
    CHECK(fpsc_vk_find(&copy, &vk) == NULL && vk == &g_fake);
    CHECK(sinew_world_set_service(world, SINEW_SERVICE_VULKAN, NULL) == SINEW_OK);
    expect_refused(&copy, "no Vulkan service");
    CHECK(log.lines == 0);
    sinew_world_destroy(world);
}

int main(void)
{
    check_hand_made_hosts();
    check_world_host();
    printf("ok: fps-cuda finds the Vulkan functions through the world's service table\n");
    return 0;
}
