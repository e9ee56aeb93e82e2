/* The plugin loader and the backend-table checks shared with built-in backends.
 * SPDX-License-Identifier: MIT
 *
 * Negotiation follows the OpenXR loader's pattern: the host offers a range of ABI versions and
 * its struct sizes, the plugin answers with one version and its tables; an answer outside the
 * range, a NULL or short table, "success with nothing in it", or (ABI version 3) a service the
 * world does not provide is refused, logged and the library closed. Registration is all or
 * nothing; each backend is registered with the user pointer its plugin gave (version 3). */
#define _POSIX_C_SOURCE 200809L /* posix_memalign, sysconf, dlopen */
#include "internal.h"

#include <dlfcn.h>
#include <string.h>

#include <sinew/sinew_result_names.h>

#define VTABLE_MIN_SIZE ((uint32_t)(offsetof(sinew_backend_vtable, destroy) + sizeof(void (*)(void*))))
#define PLUGIN_INFO_MIN_SIZE ((uint32_t)(offsetof(sinew_plugin_info, backends) + sizeof(void*)))
#define PLUGIN_INFO_V3_SIZE \
    ((uint32_t)(offsetof(sinew_plugin_info, service_count) + sizeof(uint32_t)))

#define PARAMS_END ((uint32_t)(offsetof(sinew_backend_vtable, param_count) + sizeof(uint32_t)))

/* ABI version 2's parameter descriptions, where the table has them: a NULL array only with
 * a count of 0, and every entry with a key and a known type (CHOICE with its words). */
static sinew_result validate_param_infos(const sinew_host_api* host,
                                         const sinew_backend_vtable* vt, const char* origin)
{
    if (vt->struct_size < PARAMS_END || (!vt->params && vt->param_count == 0)) return SINEW_OK;
    if (!vt->params || vt->param_count > 4096u)
        return sinew_host_fail(host, SINEW_ERROR_PLUGIN_ABI,
                               "%s: backend \"%s\" describes %u parameters in %s", origin,
                               vt->name, vt->param_count, vt->params ? "too many" : "a NULL array");
    for (uint32_t i = 0; i < vt->param_count; ++i) {
        const sinew_param_info* p = &vt->params[i];
        if (!p->key || !p->key[0] || p->type < SINEW_PARAM_FLAG || p->type > SINEW_PARAM_TEXT ||
            (p->type == SINEW_PARAM_CHOICE && (!p->choices || !p->choices[0])))
            return sinew_host_fail(host, SINEW_ERROR_PLUGIN_ABI,
                                   "%s: backend \"%s\": parameter description %u has no key, an "
                                   "unknown type or a choice without words", origin, vt->name, i);
    }
    return SINEW_OK;
}

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
    return validate_param_infos(host, vt, origin);
}

const sinew_param_info* sinew_backend_param_infos(const sinew_backend_vtable* vt,
                                                  uint32_t* count)
{
    *count = 0;
    if (vt->struct_size < PARAMS_END || !vt->params) return NULL;
    *count = vt->param_count;
    return vt->params;
}

sinew_result sinew_backend_result(const sinew_host_api* host, const sinew_backend_vtable* vt,
                                  const char* function, sinew_result r)
{
    /* Checked against the names table, so a code added to sinew_result is known at once. */
    if (r == SINEW_OK || strcmp(sinew_result_name(r), "SINEW_ERROR_UNKNOWN_RESULT") != 0)
        return r;
    return sinew_host_fail(host, SINEW_ERROR_BACKEND_FAILED,
                           "backend \"%s\": %s returned %d, which is not a sinew_result",
                           vt->name, function, (int)r);
}

void sinew_plugins_unload(sinew_world* world)
{
    for (uint32_t i = 0; i < world->plugin_count; ++i) dlclose(world->plugins[i]);
    sinew_host_free(&world->host, world->plugins);
    world->plugins = NULL;
    world->plugin_count = world->plugin_capacity = 0;
}

/* dlopen of `path` and its entry point (POSIX guarantees that a function pointer survives a
 * round trip through void*). */
static sinew_result open_plugin(const sinew_host_api* host, const char* path, void** lib,
                                sinew_plugin_entry_fn* entry)
{
    *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!*lib) {
        const char* err = dlerror();
        return sinew_host_fail(host, SINEW_ERROR_PLUGIN_LOAD, "plugin %s: cannot load (%s)", path,
                               err ? err : "unknown error");
    }
    void* sym = dlsym(*lib, SINEW_PLUGIN_ENTRY_NAME);
    if (!sym)
        return sinew_host_fail(host, SINEW_ERROR_PLUGIN_LOAD, "plugin %s: no entry point %s", path,
                               SINEW_PLUGIN_ENTRY_NAME);
    memcpy(entry, &sym, sizeof *entry);
    return SINEW_OK;
}

/* The entry point's answer to the host's ABI range and struct sizes: a version inside the
 * range and at least one backend table. */
static sinew_result negotiate(const sinew_host_api* host, const char* path,
                              sinew_plugin_entry_fn entry, sinew_plugin_info* answer)
{
    sinew_host_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = (uint32_t)sizeof info;
    info.abi_version_min = SINEW_PLUGIN_ABI_VERSION_MIN;
    info.abi_version_max = SINEW_PLUGIN_ABI_VERSION;
    info.sizeof_backend_vtable = (uint32_t)sizeof(sinew_backend_vtable);
    info.sizeof_rig_view = (uint32_t)sizeof(sinew_rig_view);
    info.sizeof_host_api = (uint32_t)sizeof(sinew_host_api);
    info.host = host;
    memset(answer, 0, sizeof *answer);
    answer->struct_size = (uint32_t)sizeof *answer;
    sinew_result r = entry(&info, answer);
    if (r != SINEW_OK)
        return sinew_host_fail(host, SINEW_ERROR_PLUGIN_ABI,
                               "plugin %s: refused the host's ABI versions %u..%u (%s)", path,
                               info.abi_version_min, info.abi_version_max, sinew_result_string(r));
    if (answer->struct_size < PLUGIN_INFO_MIN_SIZE ||
        answer->abi_version < info.abi_version_min || answer->abi_version > info.abi_version_max)
        return sinew_host_fail(host, SINEW_ERROR_PLUGIN_ABI,
                               "plugin %s: answered ABI version %u, outside the host's %u..%u",
                               path, answer->abi_version, info.abi_version_min,
                               info.abi_version_max);
    if (answer->backend_count == 0 || !answer->backends)
        return sinew_host_fail(host, SINEW_ERROR_PLUGIN_ABI,
                               "plugin %s: succeeded but offered no backend table", path);
    /* Bounded before the array is read: a garbage count would walk far past it. */
    if (answer->backend_count > SINEW_PLUGIN_MAX_BACKENDS)
        return sinew_host_fail(host, SINEW_ERROR_LIMIT,
                               "plugin %s: backend_count is %u, above the %u a plugin may offer",
                               path, answer->backend_count, SINEW_PLUGIN_MAX_BACKENDS);
    return SINEW_OK;
}

/* Every offered table valid, no name twice in the plugin or already in the world. */
static sinew_result check_tables(sinew_world* world, const char* path,
                                 const sinew_plugin_info* answer)
{
    const sinew_host_api* host = &world->host;
    for (uint32_t i = 0; i < answer->backend_count; ++i) {
        sinew_result r = sinew_validate_backend_table(host, answer->backends[i], path);
        for (uint32_t k = 0; r == SINEW_OK && k < i; ++k) {
            if (strcmp(answer->backends[k]->name, answer->backends[i]->name) == 0)
                r = sinew_host_fail(host, SINEW_ERROR_PLUGIN_ABI,
                                    "plugin %s: offers backend \"%s\" twice", path,
                                    answer->backends[i]->name);
        }
        if (r == SINEW_OK && sinew_world_find_backend(world, answer->backends[i]->name))
            r = sinew_host_fail(host, SINEW_ERROR_PLUGIN_ABI,
                                "plugin %s: backend \"%s\" is already registered", path,
                                answer->backends[i]->name);
        if (r != SINEW_OK) return r;
    }
    return SINEW_OK;
}

/* Whether the answer carries ABI version 3's fields: a plugin of that version whose answer
 * reaches them. */
static bool has_v3_fields(const sinew_plugin_info* answer)
{
    return answer->abi_version >= 3u && answer->struct_size >= PLUGIN_INFO_V3_SIZE;
}

/* The services a plugin of ABI version 3 cannot work without, each provided by the world now. */
static sinew_result check_services(const sinew_world* world, const char* path,
                                   const sinew_plugin_info* answer)
{
    const sinew_host_api* host = &world->host;
    if (!has_v3_fields(answer) || answer->service_count == 0) return SINEW_OK;
    if (answer->service_count > SINEW_PLUGIN_MAX_SERVICES)
        return sinew_host_fail(host, SINEW_ERROR_LIMIT,
                               "plugin %s: service_count is %u, above the %u a plugin may ask for",
                               path, answer->service_count, SINEW_PLUGIN_MAX_SERVICES);
    if (!answer->services)
        return sinew_host_fail(host, SINEW_ERROR_PLUGIN_ABI,
                               "plugin %s: service_count is %u but services is NULL", path,
                               answer->service_count);
    for (uint32_t i = 0; i < answer->service_count; ++i) {
        const sinew_service_request* q = &answer->services[i];
        const void* table = NULL;
        if (sinew_world_get_service(world, (sinew_service_id)q->id, q->min_version, &table) ==
            SINEW_OK)
            continue;
        if (q->id == 0 || q->id >= SINEW_SERVICE_SLOTS)
            return sinew_host_fail(host, SINEW_ERROR_NO_SERVICE,
                                   "plugin %s: needs service id %u, which this runtime does not "
                                   "know (a later sinew's?)", path, q->id);
        return sinew_host_fail(host, SINEW_ERROR_NO_SERVICE,
                               "plugin %s: needs the %s service (id %u) at version %u or later, "
                               "which this world does not provide (provide it before loading "
                               "the plugin)", path, sinew_service_name(q->id), q->id,
                               q->min_version);
    }
    return SINEW_OK;
}

/* Registers all of the plugin's tables, each with its user pointer, or, on a failure, none. */
static sinew_result register_tables(sinew_world* world, const sinew_plugin_info* answer)
{
    uint32_t plugin_id = world->plugin_count + 1u;
    uint32_t before = world->backend_count;
    void* const* users = has_v3_fields(answer) ? answer->backend_users : NULL;
    for (uint32_t i = 0; i < answer->backend_count; ++i) {
        sinew_result r = sinew_world_add_backend(world, answer->backends[i], plugin_id,
                                                 users ? users[i] : NULL);
        if (r != SINEW_OK) {
            sinew_world_drop_backends(world, before);
            return r;
        }
    }
    return SINEW_OK;
}

sinew_result sinew_world_load_plugin(sinew_world* world, const char* path)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    const sinew_host_api* host = &world->host;
    sinew_result r = sinew_world_check_idle(world, "sinew_world_load_plugin");
    if (r != SINEW_OK) return r;
    if (!path || !*path)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "plugin: path is empty");
    char found[4096];
    path = sinew_plugin_find(path, found, sizeof found);
    r = sinew_grow(host, (void**)&world->plugins, &world->plugin_capacity,
                                world->plugin_count + 1u, sizeof(void*));
    if (r != SINEW_OK) return r;
    void* lib = NULL;
    sinew_plugin_entry_fn entry = NULL;
    sinew_plugin_info answer;
    r = open_plugin(host, path, &lib, &entry);
    if (r == SINEW_OK) r = negotiate(host, path, entry, &answer);
    if (r == SINEW_OK) r = check_tables(world, path, &answer);
    if (r == SINEW_OK) r = check_services(world, path, &answer);
    if (r == SINEW_OK) r = register_tables(world, &answer);
    if (r != SINEW_OK) {
        if (lib) dlclose(lib);
        return r;
    }
    world->plugins[world->plugin_count++] = lib;
    sinew_host_log(host, SINEW_LOG_INFO, "plugin %s: registered %u backends (ABI %u)", path,
                   answer.backend_count, answer.abi_version);
    return SINEW_OK;
}
