/*
 * sinew: a skinning runtime for game engines.
 * SPDX-License-Identifier: MIT
 *
 * The headless renderer (library sinew_render, part of the Vulkan module): rasterises skinned
 * meshes on a sinew_vk_context into an offscreen image, with a depth test, per-vertex normals
 * (and optional per-vertex colours), two lights and a floor grid for scale, from a camera
 * fitted to the meshes' bounding box.
 * Several meshes can share the image side by side, one viewport column each, all seen by the
 * same camera so that they compare at the same scale. The image is read back as RGBA8 or left
 * on the device for a blit (the viewer's swapchain). PNG files are written and read with
 * libpng.
 *
 * Mesh data comes from host arrays (copied into the renderer's buffers at every draw) or
 * straight from VkBuffers, e.g. the output buffers a GPU skinning backend writes: the renderer
 * reads them as storage buffers, so they need VK_BUFFER_USAGE_STORAGE_BUFFER_BIT.
 *
 * Conventions are those of sinew.h: struct_size first, zero means default for options (never
 * for data), one log line per refusal (through the context's logger; the PNG functions take
 * a logger, NULL meaning stderr). A renderer is externally synchronised, like its context;
 * drawing submits to the context's queue and waits for it.
 */
#ifndef SINEW_SINEW_RENDER_H
#define SINEW_SINEW_RENDER_H

#include <sinew/sinew_vulkan.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sinew_renderer sinew_renderer;

enum {
    SINEW_RENDER_MAX_SIZE = 8192,       /* largest width or height (the device may allow less) */
    SINEW_RENDER_MAX_MESHES = 64,       /* largest max_meshes */
    SINEW_RENDER_DEFAULT_MESHES = 16
};

typedef struct sinew_renderer_desc {
    uint32_t struct_size;
    const void* next;                   /* no extensions yet: must be NULL */
    uint32_t width, height;             /* required: 1..SINEW_RENDER_MAX_SIZE and within the
                                           device's framebuffer limits (else SINEW_ERROR_LIMIT) */
    uint32_t max_meshes;                /* meshes per draw; 0: SINEW_RENDER_DEFAULT_MESHES */
    uint32_t samples;                   /* multisampling: 0 = 4 where the device has it, else
                                           1; otherwise 1, 2, 4 or 8 (UNSUPPORTED when the
                                           device lacks it) */
} sinew_renderer_desc;

#define SINEW_RENDERER_DESC_INIT { (uint32_t)sizeof(sinew_renderer_desc), NULL, 0u, 0u, 0u, 0u }

/* Needs a context with SINEW_VK_CAP_GRAPHICS (create it with SINEW_VK_CONTEXT_GRAPHICS):
 * SINEW_ERROR_UNSUPPORTED otherwise. Errors: INVALID_ARGUMENT (NULL, bad field), STRUCT_SIZE,
 * LIMIT (size), UNSUPPORTED, DEVICE / OUT_OF_MEMORY (Vulkan failures). */
SINEW_API sinew_result sinew_renderer_create(sinew_vk_context* context,
                                             const sinew_renderer_desc* desc,
                                             sinew_renderer** out_renderer);
/* Waits for the queue and destroys the renderer. NULL is ignored. */
SINEW_API void sinew_renderer_destroy(sinew_renderer* renderer);

/* One mesh to draw. Positions come either from host memory (`positions`) or from a device
 * buffer (`position_buffer`), exactly one of the two; the same for normals, which may also be
 * left out when positions are on the host (they are then computed, area-weighted). Element v
 * of an array lies at byte `offset + v * stride`; strides are 0 (tightly packed, 12) or a
 * multiple of 4 of at least 12, and buffer offsets multiples of 4. Buffers must have been
 * written before the draw: by the host, or by work submitted earlier to the context's queue
 * (a barrier at the start of the draw makes such writes visible); work on other queues must
 * be finished by the caller.
 *
 * A buffer that is a sinew_vk_output's (sinew_vk_output_get_info().buffer, on the renderer's
 * context) is recognised: where that output transfers ownership (an external writer such as
 * fps-cuda on exportable memory, sinew_vk_output_info.ownership_transfer), the draw acquires
 * every slot a mesh reads from VK_QUEUE_FAMILY_EXTERNAL before the vertex shader and releases
 * it back after the render pass, in its own command buffer (sinew_vk_output_cmd_acquire /
 * _release; counted in sinew_renderer_info.ownership_transfers). The caller still waits for
 * `written` before the draw and signals `read` after it, as before, and must not acquire those
 * slots itself around the draw. Other buffers, and outputs without such a writer, are read as
 * they always were. */
typedef struct sinew_render_mesh {
    uint32_t struct_size;
    uint32_t vertex_count;              /* required */
    uint32_t triangle_count;            /* required */
    const uint32_t* indices;            /* required: 3 * triangle_count, each < vertex_count */
    const float* positions;             /* host xyz, finite */
    size_t position_stride;
    const float* normals;               /* host xyz; NULL: computed (host positions only) */
    size_t normal_stride;
    VkBuffer position_buffer;           /* device xyz (STORAGE_BUFFER usage) */
    VkDeviceSize position_offset;
    VkBuffer normal_buffer;             /* required with position_buffer */
    VkDeviceSize normal_offset;
    const float* bounds;                /* 6 floats, min xyz then max xyz: required with
                                           position_buffer; NULL: from the host positions */
    uint32_t column;                    /* viewport column (< the frame's column_count) */
    float color[3];                     /* base colour, linear RGB in [0, 1]; all zero: a
                                           skin tone */
} sinew_render_mesh;

#define SINEW_RENDER_MESH_INIT { (uint32_t)sizeof(sinew_render_mesh), 0u, 0u, NULL, NULL, 0u, \
    NULL, 0u, VK_NULL_HANDLE, 0u, VK_NULL_HANDLE, 0u, NULL, 0u, { 0.0f, 0.0f, 0.0f } }

/* What one image shows. The camera looks at the centre of `bounds` (or of the union of the
 * meshes' bounds) from `view_direction`, far enough that the bounding sphere fits one column;
 * the floor grid lies under the box, across the up axis, with a line spacing of 1, 2 or 5
 * times a power of ten (about an eighth of the box's diagonal). */
typedef struct sinew_render_frame {
    uint32_t struct_size;
    const void* next;                   /* must be NULL */
    const sinew_render_mesh* meshes;    /* mesh_count entries (at most max_meshes) */
    uint32_t mesh_count;                /* 0 draws the floor alone (needs `bounds`) */
    uint32_t column_count;              /* 0: one more than the largest mesh column */
    const float* bounds;                /* 6 floats for the camera fit; NULL: the meshes' */
    float up[3];                        /* all zero: +y */
    float view_direction[3];            /* from the target towards the camera; all zero: the
                                           front (+z for y up, -y for z up, +z for x up) turned
                                           25 degrees about up and raised 20 degrees */
    /* Appended (a caller's struct_size up to `view_direction` is still accepted and draws as
     * before: the floor, every mesh in its base colour): */
    uint32_t flags;                     /* SINEW_RENDER_FRAME_* bits; 0: none */
    const float* const* vertex_colors;  /* NULL, or mesh_count pointers: entry i NULL (mesh i
                                           in its base colour) or meshes[i].vertex_count packed
                                           linear RGB triples, finite, used in place of the
                                           base colour (clamped to [0, 1]) */
} sinew_render_frame;

/* sinew_render_frame.flags */
enum {
    SINEW_RENDER_FRAME_NO_FLOOR = 1u    /* leave the floor out (a close-up cut from a larger
                                           scene, where a floor under the box would cross it) */
};

#define SINEW_RENDER_FRAME_INIT { (uint32_t)sizeof(sinew_render_frame), NULL, NULL, 0u, 0u, \
    NULL, { 0.0f, 0.0f, 0.0f }, { 0.0f, 0.0f, 0.0f }, 0u, NULL }

/* Draws the frame and copies the image into `rgba` (width * height * 4 bytes, rows top to
 * bottom, tightly packed, alpha 255). Errors: INVALID_ARGUMENT (NULL, bad field, column out of
 * range, no bounds), STRUCT_SIZE, LIMIT (too many meshes), VERTEX_INDEX (an index >=
 * vertex_count), EMPTY_MESH (no vertices or triangles), NONFINITE (host positions, bounds or
 * vertex colours), OUTPUT_BINDING (rgba_size too small), OUT_OF_MEMORY, DEVICE. */
SINEW_API sinew_result sinew_renderer_draw(sinew_renderer* renderer,
                                           const sinew_render_frame* frame, uint8_t* rgba,
                                           size_t rgba_size);

/* Draws the frame and leaves it on the device: *out_image is the renderer's single-sample
 * VK_FORMAT_R8G8B8A8_UNORM colour image (created with TRANSFER_SRC usage), in layout
 * VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, valid and unchanged until the next draw. The work is
 * finished when this returns. Errors as sinew_renderer_draw. */
SINEW_API sinew_result sinew_renderer_draw_image(sinew_renderer* renderer,
                                                 const sinew_render_frame* frame,
                                                 VkImage* out_image);

typedef struct sinew_renderer_info {
    uint32_t struct_size;
    uint32_t width, height;
    uint32_t samples;                   /* the multisample count in use */
    uint32_t max_meshes;
    uint64_t frames;                    /* draws done */
    /* Appended (a caller's struct_size up to `frames` is still accepted): */
    uint64_t ownership_transfers;       /* output slots acquired from and released to
                                           VK_QUEUE_FAMILY_EXTERNAL by the draws done */
} sinew_renderer_info;

#define SINEW_RENDERER_INFO_INIT { (uint32_t)sizeof(sinew_renderer_info), 0u, 0u, 0u, 0u, 0u, \
    0u }

SINEW_API sinew_result sinew_renderer_get_info(const sinew_renderer* renderer,
                                               sinew_renderer_info* out_info);

/* ---------------------------------------------------------------------------------------- */
/* PNG files (8-bit RGBA)                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Writes width * height RGBA8 pixels (rows top to bottom, tightly packed). Errors:
 * INVALID_ARGUMENT (NULL, zero size), LIMIT (a side over SINEW_RENDER_MAX_SIZE * 8), FILE_READ
 * (cannot create or write the file). */
SINEW_API sinew_result sinew_png_write(const char* path, uint32_t width, uint32_t height,
                                       const uint8_t* rgba, const sinew_logger* logger);

/* Reads a PNG of any colour type and depth, converted to 8-bit RGBA, into a buffer from
 * malloc that the caller frees with free(). Errors: INVALID_ARGUMENT (NULL), FILE_NOT_FOUND,
 * FILE_FORMAT (not a PNG or corrupt), LIMIT (a side over SINEW_RENDER_MAX_SIZE * 8),
 * OUT_OF_MEMORY. */
SINEW_API sinew_result sinew_png_read(const char* path, uint32_t* out_width,
                                      uint32_t* out_height, uint8_t** out_rgba,
                                      const sinew_logger* logger);

#ifdef __cplusplus
}
#endif

#endif /* SINEW_SINEW_RENDER_H */
