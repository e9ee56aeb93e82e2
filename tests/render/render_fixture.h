/* Shared by the renderer tests: a validated Vulkan context (or a skip), and image comparison.
 * SPDX-License-Identifier: MIT */
#ifndef SINEW_TEST_RENDER_FIXTURE_H
#define SINEW_TEST_RENDER_FIXTURE_H

#include <stdint.h>

#include <sinew/sinew_render.h>

#include "test_support.h"

/* Exit code ctest reads as "skipped". */
enum { RENDER_TEST_SKIP = 77 };

/* Is SINEW_REQUIRE_VULKAN set to 1 (no device is then a failure, not a skip)? */
int render_require_vulkan(void);

/* Creates a context with SINEW_VK_CONTEXT_VALIDATION | SINEW_VK_CONTEXT_GRAPHICS logging to
 * `log` (NULL: stderr). Returns NULL after printing why when there is no Vulkan device or no
 * validation layer; the caller skips (or fails under SINEW_REQUIRE_VULKAN=1). */
sinew_vk_context* render_test_context(sinew_test_log* log);

/* Validation messages the context has counted so far. */
uint64_t render_validation_messages(const sinew_vk_context* context);

/* Pixels where `image` differs from `empty` (the same scene without meshes) by more than
 * `threshold` in some colour channel: the character's silhouette. */
uint32_t render_silhouette(const uint8_t* image, const uint8_t* empty, uint32_t pixels,
                           int threshold);

/* Mean absolute difference per colour channel, as a fraction of full scale, over the pixels
 * where a or b shows a character (differs from `empty` by more than `threshold`); over the
 * whole image when empty is NULL. 0 when the mask is empty. */
double render_mean_abs_diff(const uint8_t* a, const uint8_t* b, const uint8_t* empty,
                            uint32_t pixels, int threshold);

#endif
