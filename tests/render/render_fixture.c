/* Shared by the renderer tests. SPDX-License-Identifier: MIT */
#include "render_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int render_require_vulkan(void)
{
    const char* v = getenv("SINEW_REQUIRE_VULKAN");
    return v && strcmp(v, "1") == 0;
}

sinew_vk_context* render_test_context(sinew_test_log* log)
{
    sinew_vk_context_desc desc = SINEW_VK_CONTEXT_DESC_INIT;
    desc.flags = SINEW_VK_CONTEXT_VALIDATION | SINEW_VK_CONTEXT_GRAPHICS;
    desc.logger = log ? &log->logger : NULL;
    sinew_vk_context* context = NULL;
    sinew_result r = sinew_vk_context_create(&desc, &context);
    if (r != SINEW_OK) {
        fprintf(stderr, "no Vulkan context with validation and graphics: %s (%s)\n",
                sinew_result_string(r), log ? log->last : "see above");
        return NULL;
    }
    return context;
}

uint64_t render_validation_messages(const sinew_vk_context* context)
{
    sinew_vk_context_info info = SINEW_VK_CONTEXT_INFO_INIT;
    if (sinew_vk_context_get_info(context, &info) != SINEW_OK) return UINT64_MAX;
    return info.validation_messages;
}

static int differs(const uint8_t* a, const uint8_t* b, int threshold)
{
    for (int c = 0; c < 3; c++) {
        int d = (int)a[c] - (int)b[c];
        if (d > threshold || -d > threshold) return 1;
    }
    return 0;
}

uint32_t render_silhouette(const uint8_t* image, const uint8_t* empty, uint32_t pixels,
                           int threshold)
{
    uint32_t count = 0;
    for (uint32_t p = 0; p < pixels; p++) count += (uint32_t)differs(image + 4u * p,
                                                                     empty + 4u * p, threshold);
    return count;
}

double render_mean_abs_diff(const uint8_t* a, const uint8_t* b, const uint8_t* empty,
                            uint32_t pixels, int threshold)
{
    double sum = 0.0;
    uint64_t counted = 0;
    for (uint32_t p = 0; p < pixels; p++) {
        const uint8_t* pa = a + 4u * p;
        const uint8_t* pb = b + 4u * p;
        if (empty && !differs(pa, empty + 4u * p, threshold) &&
            !differs(pb, empty + 4u * p, threshold))
            continue;
        for (int c = 0; c < 3; c++) sum += abs((int)pa[c] - (int)pb[c]);
        counted += 3;
    }
    return counted ? sum / (255.0 * (double)counted) : 0.0;
}
