/* A tiny program built against an installed sinew: the runtime, the importers and, where
 * installed, the Vulkan module and the renderer, with plugins named by file name alone.
 *   consumer [PLUGIN_FILE BACKEND]...  loads each plugin through the search path and expects
 *                                      its backend registered. */
#include <stdio.h>
#include <string.h>

#include <sinew/sinew.h>
#include <sinew/sinew_import.h>
#include <sinew/sinew_plugin.h>
#if defined(CONSUMER_HAS_VULKAN)
#  include <sinew/sinew_vulkan.h>
#endif
#if defined(CONSUMER_HAS_RENDER)
#  include <sinew/sinew_render.h>
#endif

static int has_backend(const sinew_world* world, const char* name)
{
    for (uint32_t i = 0; i < sinew_world_backend_count(world); ++i)
        if (strcmp(sinew_world_backend_name(world, i), name) == 0) return 1;
    return 0;
}

/* The libraries besides the runtime: one call into each, none needing a device. */
static int check_libraries(void)
{
    const char* data = sinew_import_data_dir();
    printf("consumer: sinew %s, data folder %s\n", sinew_version_string(), data);
#if defined(CONSUMER_HAS_VULKAN)
    sinew_vk_context_destroy(NULL);
#endif
#if defined(CONSUMER_HAS_RENDER)
    sinew_renderer_destroy(NULL);
#endif
    return sinew_version() == SINEW_VERSION && data && *data;
}

static int load_plugins(sinew_world* world, int count, char** args)
{
    for (int i = 0; i + 1 < count; i += 2) {
        sinew_result r = sinew_world_load_plugin(world, args[i]);
        int found = r == SINEW_OK && has_backend(world, args[i + 1]);
        printf("consumer: plugin %s: %s, backend %s %s\n", args[i], sinew_result_string(r),
               args[i + 1], found ? "present" : "MISSING");
        if (!found) return 0;
    }
    return 1;
}

int main(int argc, char** argv)
{
    if (!check_libraries()) {
        fprintf(stderr, "consumer: library version %s or data folder wrong\n",
                sinew_version_string());
        return 1;
    }
    sinew_world_desc desc = SINEW_WORLD_DESC_INIT;
    desc.thread_count = 1;
    sinew_world* world = NULL;
    sinew_result r = sinew_world_create(&desc, &world);
    if (r != SINEW_OK) {
        fprintf(stderr, "consumer: %s\n", sinew_result_string(r));
        return 1;
    }
    int found = sinew_world_probe_backend(world, "lbs") == SINEW_OK &&
                sinew_world_probe_backend(world, "dqs") == SINEW_OK;
    printf("consumer: %u backends, lbs and dqs %s\n", sinew_world_backend_count(world),
           found ? "present" : "MISSING");
    int plugins = load_plugins(world, argc - 1, argv + 1);
    sinew_world_destroy(world);
    return found && plugins ? 0 : 1;
}
