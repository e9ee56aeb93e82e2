/* The plugin loader and the backend-table checks shared with built-in backends.
 * SPDX-License-Identifier: MIT
 *
 * Negotiation follows the OpenXR loader's pattern: the host offers a range of ABI versions and
 * its struct sizes, the plugin answers with one version and its tables; an answer outside the
 * range, a NULL or short table, or "success with nothing in it" is refused, logged and the
 * library closed. Registration is all or nothing. */
#define _POSIX_C_SOURCE 200809L /* posix_memalign, sysconf, dlopen */
#include "internal.h"

#include <dlfcn.h>
#include <string.h>

#define VTABLE_MIN_SIZE ((uint32_t)(offsetof(sinew_backend_vtable, destroy) + sizeof(void (*)(void*))))
#define PLUGIN_INFO_MIN_SIZE ((uint32_t)(offsetof(sinew_plugin_info, backends) + sizeof(void*)))

sinew_result sinew_validate_backend_table(const sinew_host_api* host,
                                          const sinew_backend_vtable* vt, const char* origin)
{
    if (!vt)
        return sinew_host_fail(host, SINEW_ERROR_PLUGIN_ABI, "%s: backend table is NULL", origin);
    if (vt->struct_size < VTABLE_MIN_SIZE)
        return sinew_host_fail(host, SINEW_ERROR_PLUGIN_ABI,
                               "%s: backend table has struct_size %u, below the %u of ABI "
                               "version %u", origin, vt->struct_size, VTABLE_MIN_SIZE,
                               SINEW_PLUGIN_ABI_VERSION);
    if (!vt->name || !vt->name[0] || strlen(vt->name) > 63)
        return sinew_host_fail(host, SINEW_ERROR_PLUGIN_ABI,
                               "%s: backend name is missing or longer than 63 bytes", origin);
    const char* missing = !vt->probe ? "probe" : !vt->prepare ? "prepare"
                        : !vt->set_pose ? "set_pose" : !vt->step ? "step"
                        : !vt->read_output ? "read_output" : !vt->bind_output ? "bind_output"
                        : !vt->get_state ? "get_state" : !vt->set_state ? "set_state"
                        : !vt->destroy ? "destroy" : NULL;
    if (missing)
        return sinew_host_fail(host, SINEW_ERROR_PLUGIN_ABI,
                               "%s: backend \"%s\" has no %s function", origin, vt->name, missing);
    return SINEW_OK;
}

void sinew_plugins_unload(sinew_world* world)
{
    for (uint32_t i = 0; i < world->plugin_count; ++i) dlclose(world->plugins[i]);
    sinew_host_free(&world->host, world->plugins);
    world->plugins = NULL;
    world->plugin_count = world->plugin_capacity = 0;
}

sinew_result sinew_world_load_plugin(sinew_world* world, const char* path)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    const sinew_host_api* host = &world->host;
    if (!path || !*path)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "plugin: path is empty");
    sinew_result r = sinew_grow(host, (void**)&world->plugins, &world->plugin_capacity,
                                world->plugin_count + 1u, sizeof(void*));
    if (r != SINEW_OK) return r;
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* err = dlerror();
        return sinew_host_fail(host, SINEW_ERROR_PLUGIN_LOAD, "plugin %s: cannot load (%s)", path,
                               err ? err : "unknown error");
    }
    /* POSIX guarantees that a function pointer survives a round trip through void*. */
    void* sym = dlsym(lib, SINEW_PLUGIN_ENTRY_NAME);
    if (!sym) {
        dlclose(lib);
        return sinew_host_fail(host, SINEW_ERROR_PLUGIN_LOAD, "plugin %s: no entry point %s", path,
                               SINEW_PLUGIN_ENTRY_NAME);
    }
    sinew_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry);

    sinew_host_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = (uint32_t)sizeof info;
    info.abi_version_min = SINEW_PLUGIN_ABI_VERSION;
    info.abi_version_max = SINEW_PLUGIN_ABI_VERSION;
    info.sizeof_backend_vtable = (uint32_t)sizeof(sinew_backend_vtable);
    info.sizeof_rig_view = (uint32_t)sizeof(sinew_rig_view);
    info.sizeof_host_api = (uint32_t)sizeof(sinew_host_api);
    info.host = host;
    sinew_plugin_info answer;
    memset(&answer, 0, sizeof answer);
    answer.struct_size = (uint32_t)sizeof answer;

    r = entry(&info, &answer);
    if (r != SINEW_OK) {
        dlclose(lib);
        return sinew_host_fail(host, SINEW_ERROR_PLUGIN_ABI,
                               "plugin %s: refused the host's ABI versions %u..%u (%s)", path,
                               info.abi_version_min, info.abi_version_max, sinew_result_string(r));
    }
    if (answer.struct_size < PLUGIN_INFO_MIN_SIZE ||
        answer.abi_version < info.abi_version_min || answer.abi_version > info.abi_version_max) {
        dlclose(lib);
        return sinew_host_fail(host, SINEW_ERROR_PLUGIN_ABI,
                               "plugin %s: answered ABI version %u, outside the host's %u..%u",
                               path, answer.abi_version, info.abi_version_min,
                               info.abi_version_max);
    }
    if (answer.backend_count == 0 || !answer.backends) {
        dlclose(lib);
        return sinew_host_fail(host, SINEW_ERROR_PLUGIN_ABI,
                               "plugin %s: succeeded but offered no backend table", path);
    }
    for (uint32_t i = 0; i < answer.backend_count; ++i) {
        r = sinew_validate_backend_table(host, answer.backends[i], path);
        for (uint32_t k = 0; r == SINEW_OK && k < i; ++k) {
            if (strcmp(answer.backends[k]->name, answer.backends[i]->name) == 0)
                r = sinew_host_fail(host, SINEW_ERROR_PLUGIN_ABI,
                                    "plugin %s: offers backend \"%s\" twice", path,
                                    answer.backends[i]->name);
        }
        if (r == SINEW_OK && sinew_world_find_backend(world, answer.backends[i]->name))
            r = sinew_host_fail(host, SINEW_ERROR_PLUGIN_ABI,
                                "plugin %s: backend \"%s\" is already registered", path,
                                answer.backends[i]->name);
        if (r != SINEW_OK) {
            dlclose(lib);
            return r;
        }
    }
    uint32_t plugin_id = world->plugin_count + 1u;
    uint32_t before = world->backend_count;
    for (uint32_t i = 0; i < answer.backend_count; ++i) {
        r = sinew_world_add_backend(world, answer.backends[i], plugin_id);
        if (r != SINEW_OK) {
            world->backend_count = before; /* all or nothing */
            dlclose(lib);
            return r;
        }
    }
    world->plugins[world->plugin_count++] = lib;
    sinew_host_log(host, SINEW_LOG_INFO, "plugin %s: registered %u backends (ABI %u)", path,
                   answer.backend_count, answer.abi_version);
    return SINEW_OK;
}
