/* The service tables a world provides to its backends beside the core services of its host api
 * (sinew_world_set_service; the Vulkan module provides SINEW_SERVICE_VULKAN). One slot per
 * known id; backends read them through host->get_service from any thread (a swap's preparation
 * runs on its own), so the slots are atomic. SPDX-License-Identifier: MIT */
#include "internal.h"

/* Each known id's name and the size of its table's first version (index: the id). */
typedef struct known_service {
    const char* name;
    uint32_t min_size;
} known_service;

static const known_service known[SINEW_SERVICE_SLOTS] = {
    {NULL, 0u},
    {"vulkan", (uint32_t)sizeof(sinew_vk_service)},
};

static bool is_known(uint32_t id)
{
    return id > 0u && id < SINEW_SERVICE_SLOTS;
}

const char* sinew_service_name(uint32_t id)
{
    return is_known(id) ? known[id].name : "unknown";
}

static sinew_result host_get_service(const sinew_host_api* host, uint32_t id,
                                     uint32_t min_version, const void** out_table)
{
    if (!host || !host->service_context) return SINEW_ERROR_INVALID_ARGUMENT;
    return sinew_world_get_service((const sinew_world*)host->service_context,
                                   (sinew_service_id)id, min_version, out_table);
}

void sinew_world_services_init(sinew_world* world)
{
    world->host.services_version = SINEW_HOST_SERVICES_VERSION;
    world->host.backend_user = NULL;
    world->host.get_service = host_get_service;
    world->host.service_context = world;
}

sinew_result sinew_world_get_service(const sinew_world* world, sinew_service_id id,
                                     uint32_t min_version, const void** out_table)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!out_table)
        return sinew_host_fail(&world->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_world_get_service: out_table is NULL");
    const sinew_service_header* table = NULL;
    if (is_known((uint32_t)id))
        table = atomic_load_explicit(&world->services[id], memory_order_acquire);
    *out_table = table && table->version >= min_version ? table : NULL;
    return *out_table ? SINEW_OK : SINEW_ERROR_NO_SERVICE;
}

/* A table for slot `id`: a known id, and (unless NULL) a header of its first version's size at
 * least and a version. */
static sinew_result check_table(const sinew_host_api* host, uint32_t id, const void* table)
{
    if (!is_known(id))
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_world_set_service: id %u is no service this runtime knows",
                               id);
    const sinew_service_header* h = (const sinew_service_header*)table;
    if (h && h->struct_size < known[id].min_size)
        return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE,
                               "sinew_world_set_service: the %s table's struct_size %u is below "
                               "the %u of its first version", known[id].name, h->struct_size,
                               known[id].min_size);
    if (h && h->version == 0u)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_world_set_service: the %s table has version 0",
                               known[id].name);
    return SINEW_OK;
}

sinew_result sinew_world_set_service(sinew_world* world, sinew_service_id id, const void* table)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = sinew_world_check_idle(world, "sinew_world_set_service");
    if (r == SINEW_OK) r = check_table(&world->host, (uint32_t)id, table);
    if (r != SINEW_OK) return r;
    atomic_store_explicit(&world->services[id], (const sinew_service_header*)table,
                          memory_order_release);
    return SINEW_OK;
}
