/* A tiny program built against an installed sinew. */
#include <stdio.h>
#include <string.h>

#include <sinew/sinew.h>
#include <sinew/sinew_plugin.h>

int main(void)
{
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
    sinew_world_destroy(world);
    return found ? 0 : 1;
}
