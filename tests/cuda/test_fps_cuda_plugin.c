/* The fps-cuda plugin on any machine: it loads through the plugin ABI, its entry refuses a
 * host of another ABI, and where no GPU or driver exists its probe says
 * SINEW_ERROR_BACKEND_UNAVAILABLE and adding a skin with it fails with one log line. With a
 * GPU, the probe succeeds (the gpu-labelled tests do the rest). fps's parameters that the
 * plugin takes (collisions, pose jumps) are checked before any device is asked for, and a rig
 * bakes for it without one.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>

#include "fps_cuda_test_world.h"

/* A tetrahedron with one joint: enough for a rig (the refusal comes before any preparation). */
static sinew_rig tetra_rig(sinew_world* world)
{
    static const float positions[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    static const uint32_t indices[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
    static const int32_t parents[1] = {-1};
    static const float bind[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    sinew_rig_desc desc = SINEW_RIG_DESC_INIT;
    desc.skeleton.joint_count = 1;
    desc.skeleton.parents = parents;
    desc.skeleton.bind_matrices = bind;
    desc.render_mesh.vertex_count = 4;
    desc.render_mesh.positions = positions;
    desc.render_mesh.triangle_count = 4;
    desc.render_mesh.indices = indices;
    sinew_rig rig = {0};
    CHECK(sinew_rig_create(world, &desc, &rig) == SINEW_OK);
    return rig;
}

/* The plugin library opened and its entry point; dlclose(*lib) when done. */
static sinew_plugin_entry_fn open_entry(void** lib)
{
    *lib = dlopen(FPSC_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    CHECK(*lib != NULL);
    sinew_plugin_entry_fn entry = NULL;
    void* sym = dlsym(*lib, SINEW_PLUGIN_ENTRY_NAME);
    CHECK(sym != NULL);
    memcpy(&entry, &sym, sizeof entry);
    return entry;
}

/* The host description the entry point takes, for ABI versions lo .. hi. */
static sinew_host_info host_info(sinew_host_api* host, uint32_t lo, uint32_t hi)
{
    sinew_host_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    info.abi_version_min = lo;
    info.abi_version_max = hi;
    info.sizeof_backend_vtable = sizeof(sinew_backend_vtable);
    info.sizeof_rig_view = sizeof(sinew_rig_view);
    info.sizeof_host_api = sizeof(sinew_host_api);
    info.host = host;
    return info;
}

static void check_entry_refuses_other_abi(void)
{
    void* lib = NULL;
    sinew_plugin_entry_fn entry = open_entry(&lib);
    /* Nothing but the entry point is exported (cudart is linked in statically). */
    CHECK(dlsym(lib, "cudaGetDeviceCount") == NULL);
    CHECK(dlsym(lib, "fps_sim_create") == NULL);
    cuda_test_log log = {0};
    sinew_host_api host = cuda_test_host(&log);
    sinew_host_info info =
        host_info(&host, SINEW_PLUGIN_ABI_VERSION + 1u, SINEW_PLUGIN_ABI_VERSION + 3u);
    sinew_plugin_info out;
    memset(&out, 0, sizeof out);
    out.struct_size = sizeof out;
    CHECK(entry(&info, &out) == SINEW_ERROR_PLUGIN_ABI);
    CHECK(log.lines == 1);
    CHECK(out.backend_count == 0);
    info.abi_version_min = SINEW_PLUGIN_ABI_VERSION;
    info.abi_version_max = SINEW_PLUGIN_ABI_VERSION;
    CHECK(entry(&info, &out) == SINEW_OK);
    CHECK(out.backend_count == 1);
    CHECK(strcmp(out.backends[0]->name, "fps-cuda") == 0);
    CHECK(out.backends[0]->flags == (SINEW_BACKEND_FLAG_GPU | SINEW_BACKEND_FLAG_PHYSICS));
    CHECK(out.backends[0]->probe(NULL) == SINEW_ERROR_INVALID_ARGUMENT);
    dlclose(lib);
}

/* fps's collision parameters (Sec. 6: collisions, collision_weight) through the plugin's own
 * prepare, whose parameter checks run on the host before any device is asked for: bad values
 * are refused with fps's message and one line, GPU or not; collisions=1 with a valid weight
 * passes them (it is no longer refused as unsupported) and is then refused only by what
 * follows: no device here, or (with a GPU) the NULL rig this call passes. */
static void check_collision_params(void)
{
    void* lib = NULL;
    sinew_plugin_entry_fn entry = open_entry(&lib);
    cuda_test_log log = {0};
    sinew_host_api host = cuda_test_host(&log);
    host.log_level = SINEW_LOG_WARNING;
    sinew_host_info info = host_info(&host, SINEW_PLUGIN_ABI_VERSION, SINEW_PLUGIN_ABI_VERSION);
    sinew_plugin_info out;
    memset(&out, 0, sizeof out);
    out.struct_size = sizeof out;
    CHECK(entry(&info, &out) == SINEW_OK && out.backend_count == 1);
    const sinew_backend_vtable* vt = out.backends[0];
    const sinew_param bad[][2] = {{{"collisions", "1"}, {"collision_weight", "-1"}},
                                  {{"collisions", "1"}, {"collision_weight", "nan"}},
                                  {{"collisions", "1"}, {"collision_weight", "2e6"}},
                                  {{"collisions", "2"}, {"collision_weight", "1"}}};
    for (int k = 0; k < 4; ++k) {
        void* inst = (void*)&log;
        int before = log.lines;
        CHECK(vt->prepare(&host, NULL, bad[k], 2, NULL, &inst) == SINEW_ERROR_PARAMETER);
        CHECK(log.lines == before + 1);
        CHECK(strstr(log.last, k < 3 ? "collision_weight" : "collisions") != NULL);
        CHECK(inst == NULL);
    }
    /* the plugin's own keys through the shared parser: a word that is no launch mode, an
     * ordinal out of range, a key given twice */
    const sinew_param own_bad[][2] = {{{"launch", "fast"}, {"device", "0"}},
                                      {{"device", "65"}, {"launch", "auto"}},
                                      {{"device", "1"}, {"device", "2"}}};
    const char* own_key[3] = {"launch", "device", "twice"};
    for (int k = 0; k < 3; ++k) {
        void* inst = (void*)&log;
        int before = log.lines;
        CHECK(vt->prepare(&host, NULL, own_bad[k], 2, NULL, &inst) == SINEW_ERROR_PARAMETER);
        CHECK(log.lines == before + 1);
        CHECK(strstr(log.last, own_key[k]) != NULL);
        CHECK(inst == NULL);
    }
    /* fps's limb capsules: capsules=1 with collisions=0 is fps's parameter error; with
     * collisions the parameters pass (the device runs the capsules too) and only what follows
     * refuses */
    {
        const sinew_param alone[2] = {{"collisions", "0"}, {"capsules", "1"}};
        void* inst = (void*)&log;
        int before = log.lines;
        CHECK(vt->prepare(&host, NULL, alone, 2, NULL, &inst) == SINEW_ERROR_PARAMETER);
        CHECK(log.lines == before + 1);
        CHECK(strstr(log.last, "capsules") != NULL);
        CHECK(inst == NULL);
        const sinew_param caps[2] = {{"collisions", "1"}, {"capsules", "1"}};
        inst = (void*)&log;
        before = log.lines;
        sinew_result r = vt->prepare(&host, NULL, caps, 2, NULL, &inst);
        CHECK(r == SINEW_ERROR_BACKEND_UNAVAILABLE || r == SINEW_ERROR_INVALID_ARGUMENT);
        CHECK(log.lines == before + 1);
        CHECK(strstr(log.last, "capsules") == NULL);
        CHECK(inst == NULL);
    }
    /* the joints' volume is fps's alone: asked for, it is refused before any device; given as
     * 0, it passes */
    {
        const sinew_param jv[1] = {{"joint_volume", "1"}};
        void* inst = (void*)&log;
        int before = log.lines;
        CHECK(vt->prepare(&host, NULL, jv, 1, NULL, &inst) == SINEW_ERROR_UNSUPPORTED);
        CHECK(log.lines == before + 1);
        CHECK(strstr(log.last, "joint_volume") != NULL);
        CHECK(inst == NULL);
        const sinew_param off[1] = {{"joint_volume", "0"}};
        before = log.lines;
        sinew_result r = vt->prepare(&host, NULL, off, 1, NULL, &inst);
        CHECK(r == SINEW_ERROR_BACKEND_UNAVAILABLE || r == SINEW_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(log.last, "joint_volume") == NULL);
    }
    /* inelastic contacts are fps's alone too (the device keeps the contacts' speeds) */
    {
        const sinew_param in[1] = {{"inelastic_contacts", "1"}};
        void* inst = (void*)&log;
        int before = log.lines;
        CHECK(vt->prepare(&host, NULL, in, 1, NULL, &inst) == SINEW_ERROR_UNSUPPORTED);
        CHECK(log.lines == before + 1);
        CHECK(strstr(log.last, "inelastic_contacts") != NULL);
        CHECK(inst == NULL);
    }
    const sinew_param good[2] = {{"collisions", "1"}, {"collision_weight", "2.5"}};
    void* inst = NULL;
    int before = log.lines;
    sinew_result r = vt->prepare(&host, NULL, good, 2, NULL, &inst);
    CHECK(r == SINEW_ERROR_BACKEND_UNAVAILABLE || r == SINEW_ERROR_INVALID_ARGUMENT);
    CHECK(log.lines == before + 1);
    CHECK(strstr(log.last, "collision") == NULL);
    CHECK(inst == NULL);
    dlclose(lib);
}

/* fps's pose-jump parameters (jump_angle, jump_distance) through the plugin's prepare, whose
 * parameter checks run before any device is asked for: bad values are fps's refusal with one
 * line, good ones pass them and only what follows refuses (no device, or the NULL rig). */
static void check_jump_params(void)
{
    void* lib = NULL;
    sinew_plugin_entry_fn entry = open_entry(&lib);
    cuda_test_log log = {0};
    sinew_host_api host = cuda_test_host(&log);
    host.log_level = SINEW_LOG_WARNING;
    sinew_host_info info = host_info(&host, SINEW_PLUGIN_ABI_VERSION, SINEW_PLUGIN_ABI_VERSION);
    sinew_plugin_info out;
    memset(&out, 0, sizeof out);
    out.struct_size = sizeof out;
    CHECK(entry(&info, &out) == SINEW_OK && out.backend_count == 1);
    const sinew_backend_vtable* vt = out.backends[0];
    const sinew_param bad[3] = {{"jump_angle", "-1"}, {"jump_angle", "190"},
                                {"jump_distance", "nan"}};
    for (int k = 0; k < 3; ++k) {
        void* inst = (void*)&log;
        int before = log.lines;
        CHECK(vt->prepare(&host, NULL, &bad[k], 1, NULL, &inst) == SINEW_ERROR_PARAMETER);
        CHECK(log.lines == before + 1);
        CHECK(strstr(log.last, bad[k].key) != NULL);
        CHECK(inst == NULL);
    }
    const sinew_param good[2] = {{"jump_angle", "60"}, {"jump_distance", "0"}};
    void* inst = NULL;
    int before = log.lines;
    sinew_result r = vt->prepare(&host, NULL, good, 2, NULL, &inst);
    CHECK(r == SINEW_ERROR_BACKEND_UNAVAILABLE || r == SINEW_ERROR_INVALID_ARGUMENT);
    CHECK(log.lines == before + 1);
    CHECK(strstr(log.last, "jump") == NULL);
    CHECK(inst == NULL);
    dlclose(lib);
}

/* A rig baked for fps-cuda (no device needed: the blob is fps's) loads with that backend's
 * blob, the way the gpu tests and the benchmark prepare many copies. */
static void check_bake(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/characters/cylinder/cylinder.ini", sinew_import_data_dir());
    if (!cuda_test_data_present(path, "bake check skipped")) return;
    sinew_character* c = fpsc_test_character("cylinder");
    cuda_test_log log = {0};
    sinew_logger logger;
    sinew_world* world = fpsc_test_world(&log, SINEW_LOG_WARNING, &logger);
    CHECK(sinew_world_load_plugin(world, FPSC_PLUGIN_PATH) == SINEW_OK);
    sinew_rig rig = fpsc_test_baked_rig(world, c, NULL, 0);
    const char* backend = NULL;
    size_t size = 0;
    CHECK(sinew_rig_get_baked(world, rig, &backend, NULL, &size) == SINEW_OK);
    CHECK(backend && strcmp(backend, "fps-cuda") == 0 && size > 0);
    sinew_world_destroy(world);
    sinew_import_free(c);
}

int main(void)
{
    check_entry_refuses_other_abi();
    check_collision_params();
    check_jump_params();
    check_bake();

    cuda_test_log log = {0};
    sinew_logger logger;
    sinew_world* world = fpsc_test_world(&log, SINEW_LOG_WARNING, &logger);
    CHECK(sinew_world_load_plugin(world, FPSC_PLUGIN_PATH) == SINEW_OK);
    int listed = 0;
    for (uint32_t i = 0; i < sinew_world_backend_count(world); ++i)
        listed |= strcmp(sinew_world_backend_name(world, i), "fps-cuda") == 0;
    CHECK(listed);
    int lines = log.lines;
    sinew_result probe = sinew_world_probe_backend(world, "fps-cuda");
    if (probe == SINEW_OK) {
        printf("a CUDA device is present: fps-cuda is available (gpu tests cover it)\n");
        sinew_world_destroy(world);
        return 0;
    }
    /* No GPU or no driver: refused with one line, at the default log level. */
    CHECK(probe == SINEW_ERROR_BACKEND_UNAVAILABLE);
    CHECK(log.lines == lines + 1);
    CHECK(strstr(log.last, "fps-cuda") != NULL);

    sinew_rig rig = tetra_rig(world);
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = rig;
    desc.backend = "fps-cuda";
    sinew_skin skin = {0};
    lines = log.lines;
    CHECK(sinew_world_add_skin(world, &desc, &skin) == SINEW_ERROR_BACKEND_UNAVAILABLE);
    CHECK(log.lines == lines + 1);
    CHECK(skin.id == 0);
    /* The world goes on with other backends. */
    desc.backend = "lbs";
    CHECK(sinew_world_add_skin(world, &desc, &skin) == SINEW_OK);
    CHECK(sinew_world_update(world, 1.0f / 60.0f) == SINEW_OK);
    sinew_world_destroy(world);

    /* At INFO the plugin says why (the CUDA runtime's answer) before the world's refusal. */
    cuda_test_log info_log = {0};
    world = fpsc_test_world(&info_log, SINEW_LOG_INFO, &logger);
    CHECK(sinew_world_load_plugin(world, FPSC_PLUGIN_PATH) == SINEW_OK);
    lines = info_log.lines;
    CHECK(sinew_world_probe_backend(world, "fps-cuda") == SINEW_ERROR_BACKEND_UNAVAILABLE);
    CHECK(info_log.lines == lines + 2);
    sinew_world_destroy(world);
    printf("ok: fps-cuda loads and refuses cleanly without a GPU\n");
    return 0;
}
