/* The headless renderer: skinned meshes rasterised offscreen on the context's queue, the
 * image read back as RGBA8 or left on the device for a blit. SPDX-License-Identifier: MIT
 *
 * One draw is one command buffer, submitted and waited for: the renderer serves samples,
 * tests and a viewer, where simplicity beats overlapping frames. Vertices are pulled from
 * storage buffers in the vertex shader (offset and stride as push constants), so host uploads
 * and the device buffers of GPU backends, packed or interleaved, go through one pipeline. */
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_render.h>

#include "render_internal.h"
#include "vk_internal.h"

/* A buffer with its memory, mapped when host-visible. */
typedef struct render_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    void* mapped;
    VkDeviceSize size;
} render_buffer;

typedef struct render_image {
    VkImage image;
    VkDeviceMemory memory;
    VkImageView view;
} render_image;

/* Per-draw constants of a mesh (mirrors the push_constant block of mesh.vert). */
typedef struct render_push {
    float color[4];
    uint32_t layout[4];     /* position offset, stride, normal offset, stride (in floats) */
    uint32_t colors[4];     /* vertex colour offset, stride (in floats), 1 when present, 0 */
} render_push;

/* Where one mesh of the current frame reads from. */
typedef struct render_slot {
    render_buffer vertices; /* host uploads: packed positions, normals, then colours */
    render_buffer indices;
    VkDescriptorSet set;
} render_slot;

struct sinew_renderer {
    sinew_vk_context* context;
    const sinew_host_api* host;
    VkDevice device;
    VkQueue queue;
    uint32_t width, height, samples, max_meshes;
    uint32_t max_side;
    VkFormat depth_format;
    render_image color_ms, depth, color;    /* color_ms only when samples > 1 */
    VkRenderPass render_pass;
    VkFramebuffer framebuffer;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout pipeline_layout;
    VkPipeline mesh_pipeline, floor_pipeline;
    VkDescriptorPool descriptor_pool;
    VkDescriptorSet floor_set;
    VkCommandPool command_pool;
    VkCommandBuffer cmd;
    VkFence fence;
    render_buffer uniforms;     /* render_frame_ubo */
    render_buffer readback;     /* width * height * 4 */
    render_buffer placeholder;  /* a small storage buffer for bindings a draw does not read */
    render_slot* slots;         /* max_meshes */
    float* scratch;             /* host normals when a mesh has none */
    size_t scratch_floats;
    uint64_t frames;
    uint64_t ownership_transfers;
};

/* An output slot the current draw reads and must acquire from VK_QUEUE_FAMILY_EXTERNAL. */
typedef struct render_transfer {
    const sinew_vk_output* output;
    uint32_t slot;
} render_transfer;

/* Every mesh reads at most two buffers, each spanning at most every slot of its output. */
enum { RENDER_MAX_TRANSFERS = 2 * SINEW_RENDER_MAX_MESHES * SINEW_VK_OUTPUT_MAX_SLOTS };
/* Descriptor bindings of a set (shaders/mesh.vert). */
enum { RENDER_BINDINGS = 4 };

/* One log line through the context's logger, or stderr without a context. */
static SINEW_PRINTF(3, 4) sinew_result render_fail(const sinew_vk_context* ctx,
                                                   sinew_result result, const char* fmt, ...)
{
    char line[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(line, sizeof line, fmt, args);
    va_end(args);
    if (ctx) return sinew_host_fail(&ctx->host, result, "%s", line);
    fprintf(stderr, "sinew: error: %s\n", line);
    return result;
}

/* The context's own VkResult names are internal to its library, which exports only the API. */
static const char* render_vk_name(VkResult vr)
{
    switch (vr) {
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    default: return "VkResult(other)";
    }
}

static sinew_result render_vk_fail(const sinew_renderer* r, VkResult vr, const char* what)
{
    sinew_result result = vr == VK_ERROR_OUT_OF_HOST_MEMORY ||
                          vr == VK_ERROR_OUT_OF_DEVICE_MEMORY ? SINEW_ERROR_OUT_OF_MEMORY
                                                               : SINEW_ERROR_DEVICE;
    return render_fail(r->context, result, "renderer: %s failed: %s (%d)", what,
                       render_vk_name(vr), (int)vr);
}

/* ---------------------------------------------------------------------------------------- */
/* Memory                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static sinew_result buffer_create(sinew_renderer* r, VkDeviceSize size, VkBufferUsageFlags usage,
                                  render_buffer* out)
{
    memset(out, 0, sizeof *out);
    VkBufferCreateInfo info = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = size;
    info.usage = usage;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkResult vr = vkCreateBuffer(r->device, &info, NULL, &out->buffer);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(r->device, out->buffer, &req);
    int32_t type = sinew_vk_context_find_memory_type(
        r->context, req.memoryTypeBits,
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    if (type < 0)
        return render_fail(r->context, SINEW_ERROR_UNSUPPORTED,
                           "renderer: no host-visible coherent memory for a %llu-byte buffer",
                           (unsigned long long)size);
    VkMemoryAllocateInfo alloc = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = (uint32_t)type;
    vr = vkAllocateMemory(r->device, &alloc, NULL, &out->memory);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkAllocateMemory (buffer)");
    vr = vkBindBufferMemory(r->device, out->buffer, out->memory, 0);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkBindBufferMemory");
    vr = vkMapMemory(r->device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkMapMemory");
    out->size = size;
    return SINEW_OK;
}

static void buffer_destroy(sinew_renderer* r, render_buffer* b)
{
    if (b->buffer) vkDestroyBuffer(r->device, b->buffer, NULL);
    if (b->memory) vkFreeMemory(r->device, b->memory, NULL);
    memset(b, 0, sizeof *b);
}

/* Makes b hold at least `size` bytes; contents are not kept. Only between draws (the
 * previous draw has been waited for, so nothing uses the old buffer). */
static sinew_result buffer_reserve(sinew_renderer* r, render_buffer* b, VkDeviceSize size,
                                   VkBufferUsageFlags usage)
{
    if (b->buffer && b->size >= size) return SINEW_OK;
    VkDeviceSize grown = b->size + b->size / 2;
    buffer_destroy(r, b);
    return buffer_create(r, size > grown ? size : grown, usage, b);
}

static sinew_result image_create(sinew_renderer* r, VkFormat format, VkImageUsageFlags usage,
                                 VkSampleCountFlagBits samples, VkImageAspectFlags aspect,
                                 render_image* out)
{
    VkImageCreateInfo info = {VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    info.imageType = VK_IMAGE_TYPE_2D;
    info.format = format;
    info.extent.width = r->width;
    info.extent.height = r->height;
    info.extent.depth = 1;
    info.mipLevels = 1;
    info.arrayLayers = 1;
    info.samples = samples;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage = usage;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    VkResult vr = vkCreateImage(r->device, &info, NULL, &out->image);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkCreateImage");
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(r->device, out->image, &req);
    int32_t type = sinew_vk_context_find_memory_type(r->context, req.memoryTypeBits,
                                                     VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (type < 0) type = sinew_vk_context_find_memory_type(r->context, req.memoryTypeBits, 0);
    if (type < 0)
        return render_fail(r->context, SINEW_ERROR_UNSUPPORTED,
                           "renderer: no memory type for a %ux%u image", r->width, r->height);
    VkMemoryAllocateInfo alloc = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = (uint32_t)type;
    vr = vkAllocateMemory(r->device, &alloc, NULL, &out->memory);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkAllocateMemory (image)");
    vr = vkBindImageMemory(r->device, out->image, out->memory, 0);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkBindImageMemory");
    VkImageViewCreateInfo view = {VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view.image = out->image;
    view.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view.format = format;
    view.subresourceRange.aspectMask = aspect;
    view.subresourceRange.levelCount = 1;
    view.subresourceRange.layerCount = 1;
    vr = vkCreateImageView(r->device, &view, NULL, &out->view);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkCreateImageView");
    return SINEW_OK;
}

static void image_destroy(sinew_renderer* r, render_image* img)
{
    if (img->view) vkDestroyImageView(r->device, img->view, NULL);
    if (img->image) vkDestroyImage(r->device, img->image, NULL);
    if (img->memory) vkFreeMemory(r->device, img->memory, NULL);
    memset(img, 0, sizeof *img);
}

/* ---------------------------------------------------------------------------------------- */
/* Creation                                                                                 */
/* ---------------------------------------------------------------------------------------- */

static sinew_result create_render_pass(sinew_renderer* r)
{
    const int ms = r->samples > 1;
    VkAttachmentDescription att[3];
    memset(att, 0, sizeof att);
    /* 0: colour (multisampled, or the final image), 1: depth, 2: resolve target. */
    att[0].format = VK_FORMAT_R8G8B8A8_UNORM;
    att[0].samples = (VkSampleCountFlagBits)r->samples;
    att[0].loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    att[0].storeOp = ms ? VK_ATTACHMENT_STORE_OP_DONT_CARE : VK_ATTACHMENT_STORE_OP_STORE;
    att[0].stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
    att[0].stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    att[0].initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    att[0].finalLayout = ms ? VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL
                            : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    att[1] = att[0];
    att[1].format = r->depth_format;
    att[1].storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    att[1].finalLayout = VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL;
    att[2] = att[0];
    att[2].samples = VK_SAMPLE_COUNT_1_BIT;
    att[2].loadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
    att[2].storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    att[2].finalLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    VkAttachmentReference color_ref = {0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkAttachmentReference depth_ref = {1, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL};
    VkAttachmentReference resolve_ref = {2, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkSubpassDescription subpass = {0};
    subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
    subpass.colorAttachmentCount = 1;
    subpass.pColorAttachments = &color_ref;
    subpass.pResolveAttachments = ms ? &resolve_ref : NULL;
    subpass.pDepthStencilAttachment = &depth_ref;
    /* The previous draw's copy or blit reads the image before this one writes it again, and
     * this draw's copy waits for the colour writes. */
    VkSubpassDependency deps[2];
    memset(deps, 0, sizeof deps);
    deps[0].srcSubpass = VK_SUBPASS_EXTERNAL;
    deps[0].dstSubpass = 0;
    deps[0].srcStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT;
    deps[0].srcAccessMask = 0;
    deps[0].dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT |
                           VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT |
                           VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT;
    deps[0].dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT |
                            VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT |
                            VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT;
    deps[1].srcSubpass = 0;
    deps[1].dstSubpass = VK_SUBPASS_EXTERNAL;
    deps[1].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    deps[1].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    deps[1].dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT;
    deps[1].dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    VkRenderPassCreateInfo info = {VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
    info.attachmentCount = ms ? 3 : 2;
    info.pAttachments = att;
    info.subpassCount = 1;
    info.pSubpasses = &subpass;
    info.dependencyCount = 2;
    info.pDependencies = deps;
    VkResult vr = vkCreateRenderPass(r->device, &info, NULL, &r->render_pass);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkCreateRenderPass");

    VkImageView views[3] = {ms ? r->color_ms.view : r->color.view, r->depth.view,
                            r->color.view};
    VkFramebufferCreateInfo fb = {VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
    fb.renderPass = r->render_pass;
    fb.attachmentCount = ms ? 3 : 2;
    fb.pAttachments = views;
    fb.width = r->width;
    fb.height = r->height;
    fb.layers = 1;
    vr = vkCreateFramebuffer(r->device, &fb, NULL, &r->framebuffer);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkCreateFramebuffer");
    return SINEW_OK;
}

static sinew_result create_shader(sinew_renderer* r, const uint32_t* code, size_t size,
                                  VkShaderModule* out)
{
    VkShaderModuleCreateInfo info = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = size;
    info.pCode = code;
    VkResult vr = vkCreateShaderModule(r->device, &info, NULL, out);
    return vr == VK_SUCCESS ? SINEW_OK : render_vk_fail(r, vr, "vkCreateShaderModule");
}

static sinew_result create_pipeline(sinew_renderer* r, const render_spirv* vert,
                                    const render_spirv* frag, VkPipeline* out)
{
    VkShaderModule modules[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
    sinew_result result = create_shader(r, vert->code, vert->size, &modules[0]);
    if (result == SINEW_OK) result = create_shader(r, frag->code, frag->size, &modules[1]);
    if (result == SINEW_OK) {
        VkPipelineShaderStageCreateInfo stages[2] = {
            {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO},
            {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO}};
        stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
        stages[0].module = modules[0];
        stages[0].pName = "main";
        stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
        stages[1].module = modules[1];
        stages[1].pName = "main";
        VkPipelineVertexInputStateCreateInfo input = {
            VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
        VkPipelineInputAssemblyStateCreateInfo assembly = {
            VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
        assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
        VkPipelineViewportStateCreateInfo viewport = {
            VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
        viewport.viewportCount = 1;
        viewport.scissorCount = 1;
        VkPipelineRasterizationStateCreateInfo raster = {
            VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
        raster.polygonMode = VK_POLYGON_MODE_FILL;
        /* No culling: imported meshes are not always closed or consistently wound. */
        raster.cullMode = VK_CULL_MODE_NONE;
        raster.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
        raster.lineWidth = 1.0f;
        VkPipelineMultisampleStateCreateInfo multisample = {
            VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
        multisample.rasterizationSamples = (VkSampleCountFlagBits)r->samples;
        VkPipelineDepthStencilStateCreateInfo depth = {
            VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO};
        depth.depthTestEnable = VK_TRUE;
        depth.depthWriteEnable = VK_TRUE;
        depth.depthCompareOp = VK_COMPARE_OP_LESS_OR_EQUAL;
        VkPipelineColorBlendAttachmentState blend = {0};
        blend.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                               VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
        VkPipelineColorBlendStateCreateInfo color = {
            VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
        color.attachmentCount = 1;
        color.pAttachments = &blend;
        VkDynamicState dynamic_states[2] = {VK_DYNAMIC_STATE_VIEWPORT,
                                            VK_DYNAMIC_STATE_SCISSOR};
        VkPipelineDynamicStateCreateInfo dynamic = {
            VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
        dynamic.dynamicStateCount = 2;
        dynamic.pDynamicStates = dynamic_states;
        VkGraphicsPipelineCreateInfo info = {VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
        info.stageCount = 2;
        info.pStages = stages;
        info.pVertexInputState = &input;
        info.pInputAssemblyState = &assembly;
        info.pViewportState = &viewport;
        info.pRasterizationState = &raster;
        info.pMultisampleState = &multisample;
        info.pDepthStencilState = &depth;
        info.pColorBlendState = &color;
        info.pDynamicState = &dynamic;
        info.layout = r->pipeline_layout;
        info.renderPass = r->render_pass;
        VkResult vr = vkCreateGraphicsPipelines(r->device, VK_NULL_HANDLE, 1, &info, NULL, out);
        if (vr != VK_SUCCESS) result = render_vk_fail(r, vr, "vkCreateGraphicsPipelines");
    }
    for (int i = 0; i < 2; i++)
        if (modules[i]) vkDestroyShaderModule(r->device, modules[i], NULL);
    return result;
}

static sinew_result create_pipelines(sinew_renderer* r)
{
    /* 0: the frame block; 1, 2, 3: positions, normals, vertex colours. */
    VkDescriptorSetLayoutBinding bindings[RENDER_BINDINGS];
    memset(bindings, 0, sizeof bindings);
    bindings[0].binding = 0;
    bindings[0].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    bindings[0].descriptorCount = 1;
    bindings[0].stageFlags = VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT;
    for (uint32_t i = 1; i < RENDER_BINDINGS; i++) {
        bindings[i].binding = i;
        bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        bindings[i].descriptorCount = 1;
        bindings[i].stageFlags = VK_SHADER_STAGE_VERTEX_BIT;
    }
    VkDescriptorSetLayoutCreateInfo set_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_info.bindingCount = RENDER_BINDINGS;
    set_info.pBindings = bindings;
    VkResult vr = vkCreateDescriptorSetLayout(r->device, &set_info, NULL, &r->set_layout);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkCreateDescriptorSetLayout");
    VkPushConstantRange push = {VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0,
                                sizeof(render_push)};
    VkPipelineLayoutCreateInfo layout = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout.setLayoutCount = 1;
    layout.pSetLayouts = &r->set_layout;
    layout.pushConstantRangeCount = 1;
    layout.pPushConstantRanges = &push;
    vr = vkCreatePipelineLayout(r->device, &layout, NULL, &r->pipeline_layout);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkCreatePipelineLayout");
    sinew_result result = create_pipeline(r, &render_shader_mesh_vert,
                                          &render_shader_mesh_frag, &r->mesh_pipeline);
    if (result == SINEW_OK)
        result = create_pipeline(r, &render_shader_floor_vert, &render_shader_floor_frag,
                                 &r->floor_pipeline);
    return result;
}

static sinew_result create_descriptors(sinew_renderer* r)
{
    const uint32_t sets = r->max_meshes + 1;
    VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, sets},
                                     {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                      (RENDER_BINDINGS - 1) * sets}};
    VkDescriptorPoolCreateInfo pool = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool.maxSets = sets;
    pool.poolSizeCount = 2;
    pool.pPoolSizes = sizes;
    VkResult vr = vkCreateDescriptorPool(r->device, &pool, NULL, &r->descriptor_pool);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkCreateDescriptorPool");
    for (uint32_t i = 0; i < sets; i++) {
        VkDescriptorSetAllocateInfo alloc = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        alloc.descriptorPool = r->descriptor_pool;
        alloc.descriptorSetCount = 1;
        alloc.pSetLayouts = &r->set_layout;
        VkDescriptorSet* set = i < r->max_meshes ? &r->slots[i].set : &r->floor_set;
        vr = vkAllocateDescriptorSets(r->device, &alloc, set);
        if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkAllocateDescriptorSets");
    }
    return SINEW_OK;
}

/* Writes every binding of a set. */
static void write_set(sinew_renderer* r, VkDescriptorSet set, VkBuffer positions,
                      VkBuffer normals, VkBuffer colors)
{
    VkDescriptorBufferInfo infos[RENDER_BINDINGS] = {
        {r->uniforms.buffer, 0, sizeof(render_frame_ubo)},
        {positions, 0, VK_WHOLE_SIZE},
        {normals, 0, VK_WHOLE_SIZE},
        {colors, 0, VK_WHOLE_SIZE}};
    VkWriteDescriptorSet writes[RENDER_BINDINGS];
    for (uint32_t i = 0; i < RENDER_BINDINGS; i++) {
        VkWriteDescriptorSet w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        w.dstSet = set;
        w.dstBinding = i;
        w.descriptorCount = 1;
        w.descriptorType = i == 0 ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                                  : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        w.pBufferInfo = &infos[i];
        writes[i] = w;
    }
    vkUpdateDescriptorSets(r->device, RENDER_BINDINGS, writes, 0, NULL);
}

static VkFormat pick_depth_format(VkPhysicalDevice pd)
{
    const VkFormat candidates[3] = {VK_FORMAT_D32_SFLOAT, VK_FORMAT_X8_D24_UNORM_PACK32,
                                    VK_FORMAT_D16_UNORM};
    for (int i = 0; i < 3; i++) {
        VkFormatProperties p;
        vkGetPhysicalDeviceFormatProperties(pd, candidates[i], &p);
        if (p.optimalTilingFeatures & VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT)
            return candidates[i];
    }
    return VK_FORMAT_UNDEFINED;
}

/* The descriptor alone: size, extension chain, size of the image, mesh count, samples. */
static sinew_result check_renderer_desc(sinew_vk_context* ctx, const sinew_renderer_desc* desc)
{
    if (desc->struct_size < sizeof(sinew_renderer_desc))
        return render_fail(ctx, SINEW_ERROR_STRUCT_SIZE,
                           "sinew_renderer_create: struct_size %u < %zu", desc->struct_size,
                           sizeof(sinew_renderer_desc));
    if (desc->next)
        return render_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_create: unknown extension in next");
    if (desc->width == 0 || desc->height == 0)
        return render_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_create: size %ux%u is empty", desc->width,
                           desc->height);
    if (desc->max_meshes > SINEW_RENDER_MAX_MESHES)
        return render_fail(ctx, SINEW_ERROR_LIMIT,
                           "sinew_renderer_create: max_meshes %u over %u", desc->max_meshes,
                           (unsigned)SINEW_RENDER_MAX_MESHES);
    if (desc->samples != 0 && desc->samples != 1 && desc->samples != 2 &&
        desc->samples != 4 && desc->samples != 8)
        return render_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_create: samples %u is not 0, 1, 2, 4 or 8",
                           desc->samples);
    return SINEW_OK;
}

/* What the device offers for this descriptor: a graphics queue, the image's size within the
 * largest side (*max_side), the sample count (*samples; 0 asks for 4 where possible) and a
 * depth format. */
static sinew_result check_device(sinew_vk_context* ctx, const sinew_renderer_desc* desc,
                                 const sinew_vk_context_info* info, uint32_t* max_side,
                                 uint32_t* samples, VkFormat* depth_format)
{
    if (!(info->caps & SINEW_VK_CAP_GRAPHICS))
        return render_fail(ctx, SINEW_ERROR_UNSUPPORTED,
                           "sinew_renderer_create: the context's queue family %u has no "
                           "graphics (create it with SINEW_VK_CONTEXT_GRAPHICS)",
                           info->queue_family_index);
    const VkPhysicalDeviceLimits* limits = &ctx->properties.limits;
    *max_side = SINEW_RENDER_MAX_SIZE;
    if (limits->maxFramebufferWidth < *max_side) *max_side = limits->maxFramebufferWidth;
    if (limits->maxFramebufferHeight < *max_side) *max_side = limits->maxFramebufferHeight;
    if (limits->maxImageDimension2D < *max_side) *max_side = limits->maxImageDimension2D;
    if (desc->width > *max_side || desc->height > *max_side)
        return render_fail(ctx, SINEW_ERROR_LIMIT,
                           "sinew_renderer_create: size %ux%u over the largest side %u",
                           desc->width, desc->height, *max_side);
    VkSampleCountFlags counts = limits->framebufferColorSampleCounts &
                                limits->framebufferDepthSampleCounts;
    *samples = desc->samples;
    if (*samples == 0) *samples = (counts & VK_SAMPLE_COUNT_4_BIT) ? 4 : 1;
    if (!(counts & *samples))
        return render_fail(ctx, SINEW_ERROR_UNSUPPORTED,
                           "sinew_renderer_create: the device cannot render %u samples",
                           *samples);
    *depth_format = pick_depth_format(info->physical_device);
    if (*depth_format == VK_FORMAT_UNDEFINED)
        return render_fail(ctx, SINEW_ERROR_UNSUPPORTED,
                           "sinew_renderer_create: the device has no depth format");
    return SINEW_OK;
}

/* The attachments (multisampled colour when samples > 1, depth, the resolved colour), render
 * pass, pipelines, buffers (uniforms, readback, a placeholder) and descriptors. */
static sinew_result create_targets(sinew_renderer* r)
{
    sinew_result result = SINEW_OK;
    if (r->samples > 1)
        result = image_create(r, VK_FORMAT_R8G8B8A8_UNORM,
                              VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT |
                                  VK_IMAGE_USAGE_TRANSIENT_ATTACHMENT_BIT,
                              (VkSampleCountFlagBits)r->samples, VK_IMAGE_ASPECT_COLOR_BIT,
                              &r->color_ms);
    if (result == SINEW_OK)
        result = image_create(r, r->depth_format, VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT,
                              (VkSampleCountFlagBits)r->samples, VK_IMAGE_ASPECT_DEPTH_BIT,
                              &r->depth);
    if (result == SINEW_OK)
        result = image_create(r, VK_FORMAT_R8G8B8A8_UNORM,
                              VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT |
                                  VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                              VK_SAMPLE_COUNT_1_BIT, VK_IMAGE_ASPECT_COLOR_BIT, &r->color);
    if (result == SINEW_OK) result = create_render_pass(r);
    if (result == SINEW_OK) result = create_pipelines(r);
    if (result == SINEW_OK)
        result = buffer_create(r, sizeof(render_frame_ubo), VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT,
                               &r->uniforms);
    if (result == SINEW_OK)
        result = buffer_create(r, (VkDeviceSize)r->width * r->height * 4u,
                               VK_BUFFER_USAGE_TRANSFER_DST_BIT, &r->readback);
    if (result == SINEW_OK)
        result = buffer_create(r, 64, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, &r->placeholder);
    if (result == SINEW_OK) result = create_descriptors(r);
    if (result == SINEW_OK)
        write_set(r, r->floor_set, r->placeholder.buffer, r->placeholder.buffer,
                  r->placeholder.buffer);
    return result;
}

/* The command pool of the queue family, one resettable command buffer and its fence. */
static sinew_result create_commands(sinew_renderer* r, uint32_t queue_family)
{
    VkCommandPoolCreateInfo pool = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = queue_family;
    VkResult vr = vkCreateCommandPool(r->device, &pool, NULL, &r->command_pool);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkCreateCommandPool");
    VkCommandBufferAllocateInfo alloc = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = r->command_pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    vr = vkAllocateCommandBuffers(r->device, &alloc, &r->cmd);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkAllocateCommandBuffers");
    VkFenceCreateInfo fence = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    vr = vkCreateFence(r->device, &fence, NULL, &r->fence);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkCreateFence");
    return SINEW_OK;
}

sinew_result sinew_renderer_create(sinew_vk_context* ctx, const sinew_renderer_desc* desc,
                                   sinew_renderer** out)
{
    if (out) *out = NULL;
    if (!ctx || !desc || !out)
        return render_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_create: context, desc and out_renderer are required");
    sinew_result result = check_renderer_desc(ctx, desc);
    if (result != SINEW_OK) return result;
    sinew_vk_context_info info = SINEW_VK_CONTEXT_INFO_INIT;
    result = sinew_vk_context_get_info(ctx, &info);
    if (result != SINEW_OK) return result;
    uint32_t max_side = 0, samples = 0;
    VkFormat depth_format = VK_FORMAT_UNDEFINED;
    result = check_device(ctx, desc, &info, &max_side, &samples, &depth_format);
    if (result != SINEW_OK) return result;
    const sinew_host_api* host = &ctx->host;
    sinew_renderer* r = sinew_host_calloc(host, 1, sizeof *r);
    uint32_t max_meshes = desc->max_meshes ? desc->max_meshes : SINEW_RENDER_DEFAULT_MESHES;
    render_slot* slots = sinew_host_calloc(host, max_meshes, sizeof *slots);
    if (!r || !slots) {
        sinew_host_free(host, r);
        sinew_host_free(host, slots);
        return render_fail(ctx, SINEW_ERROR_OUT_OF_MEMORY,
                           "sinew_renderer_create: out of memory");
    }
    r->context = ctx;
    r->host = host;
    r->device = info.device;
    r->queue = info.queue;
    r->width = desc->width;
    r->height = desc->height;
    r->samples = samples;
    r->max_meshes = max_meshes;
    r->max_side = max_side;
    r->depth_format = depth_format;
    r->slots = slots;
    result = create_targets(r);
    if (result == SINEW_OK) result = create_commands(r, info.queue_family_index);
    if (result != SINEW_OK) {
        sinew_renderer_destroy(r);
        return result;
    }
    *out = r;
    return SINEW_OK;
}

void sinew_renderer_destroy(sinew_renderer* r)
{
    if (!r) return;
    if (r->queue) {
        sinew_vk_context_lock_queue(r->context);
        vkQueueWaitIdle(r->queue);
        sinew_vk_context_unlock_queue(r->context);
    }
    if (r->fence) vkDestroyFence(r->device, r->fence, NULL);
    if (r->command_pool) vkDestroyCommandPool(r->device, r->command_pool, NULL);
    if (r->descriptor_pool) vkDestroyDescriptorPool(r->device, r->descriptor_pool, NULL);
    if (r->slots)
        for (uint32_t i = 0; i < r->max_meshes; i++) {
            buffer_destroy(r, &r->slots[i].vertices);
            buffer_destroy(r, &r->slots[i].indices);
        }
    buffer_destroy(r, &r->uniforms);
    buffer_destroy(r, &r->readback);
    buffer_destroy(r, &r->placeholder);
    if (r->mesh_pipeline) vkDestroyPipeline(r->device, r->mesh_pipeline, NULL);
    if (r->floor_pipeline) vkDestroyPipeline(r->device, r->floor_pipeline, NULL);
    if (r->pipeline_layout) vkDestroyPipelineLayout(r->device, r->pipeline_layout, NULL);
    if (r->set_layout) vkDestroyDescriptorSetLayout(r->device, r->set_layout, NULL);
    if (r->framebuffer) vkDestroyFramebuffer(r->device, r->framebuffer, NULL);
    if (r->render_pass) vkDestroyRenderPass(r->device, r->render_pass, NULL);
    image_destroy(r, &r->color_ms);
    image_destroy(r, &r->depth);
    image_destroy(r, &r->color);
    const sinew_host_api* host = r->host;
    sinew_host_free(host, r->scratch);
    sinew_host_free(host, r->slots);
    sinew_host_free(host, r);
}

/* Fields appended after the first published sinew_renderer_info are filled only when the
 * caller's struct_size covers them. */
#define RENDERER_INFO_MIN_SIZE offsetof(sinew_renderer_info, ownership_transfers)

sinew_result sinew_renderer_get_info(const sinew_renderer* r, sinew_renderer_info* out)
{
    if (!r || !out)
        return render_fail(r ? r->context : NULL, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_get_info: renderer and out_info are required");
    if (out->struct_size < RENDERER_INFO_MIN_SIZE)
        return render_fail(r->context, SINEW_ERROR_STRUCT_SIZE,
                           "sinew_renderer_get_info: struct_size %u < %zu", out->struct_size,
                           RENDERER_INFO_MIN_SIZE);
    out->width = r->width;
    out->height = r->height;
    out->samples = r->samples;
    out->max_meshes = r->max_meshes;
    out->frames = r->frames;
    if (out->struct_size >= sizeof(sinew_renderer_info))
        out->ownership_transfers = r->ownership_transfers;
    return SINEW_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Drawing                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static int all_finite(const float* v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

static int strided_finite(const float* xyz, uint32_t count, size_t stride)
{
    const unsigned char* base = (const unsigned char*)xyz;
    for (uint32_t v = 0; v < count; v++)
        if (!all_finite((const float*)(const void*)(base + (size_t)v * stride), 3)) return 0;
    return 1;
}

static int stride_ok(size_t stride)
{
    return stride == 0 || (stride >= 12 && stride % 4 == 0);
}

/* Checks one mesh; one log line for the first problem. */
/* Mesh i's layout: sizes, where its positions and normals come from (host arrays or device
 * buffers, with bounds and normals for a device buffer), strides and offsets. */
static sinew_result check_mesh_layout(const sinew_renderer* r, const sinew_render_mesh* m,
                                      uint32_t i)
{
    const sinew_vk_context* ctx = r->context;
    if (m->struct_size < sizeof(sinew_render_mesh))
        return render_fail(ctx, SINEW_ERROR_STRUCT_SIZE,
                           "sinew_renderer_draw: mesh %u: struct_size %u < %zu", i,
                           m->struct_size, sizeof(sinew_render_mesh));
    if (m->vertex_count == 0 || m->triangle_count == 0)
        return render_fail(ctx, SINEW_ERROR_EMPTY_MESH,
                           "sinew_renderer_draw: mesh %u: %u vertices, %u triangles", i,
                           m->vertex_count, m->triangle_count);
    if (m->triangle_count > UINT32_MAX / 3u)
        return render_fail(ctx, SINEW_ERROR_LIMIT,
                           "sinew_renderer_draw: mesh %u: %u triangles is too many", i,
                           m->triangle_count);
    if (!m->indices)
        return render_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_draw: mesh %u: indices are required", i);
    if ((m->positions != NULL) == (m->position_buffer != VK_NULL_HANDLE))
        return render_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_draw: mesh %u: give positions or position_buffer "
                           "(exactly one)", i);
    if (m->normals && m->normal_buffer)
        return render_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_draw: mesh %u: give normals or normal_buffer, not "
                           "both", i);
    if (m->position_buffer && !m->normals && !m->normal_buffer)
        return render_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_draw: mesh %u: normals are required with "
                           "position_buffer (they are computed for host positions only)", i);
    if (m->position_buffer && !m->bounds)
        return render_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_draw: mesh %u: bounds are required with "
                           "position_buffer", i);
    if (!stride_ok(m->position_stride) || !stride_ok(m->normal_stride))
        return render_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_draw: mesh %u: strides %zu/%zu must be 0 or a "
                           "multiple of 4 of at least 12", i, m->position_stride,
                           m->normal_stride);
    if ((m->position_buffer && m->position_offset % 4u) ||
        (m->normal_buffer && m->normal_offset % 4u))
        return render_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_draw: mesh %u: buffer offsets %llu/%llu must be "
                           "multiples of 4", i, (unsigned long long)m->position_offset,
                           (unsigned long long)m->normal_offset);
    return SINEW_OK;
}

/* Mesh i: its layout (check_mesh_layout), then its data: reach within what the shader's 32-bit
 * float indices address, column, colour, bounds, indices and host arrays. */
static sinew_result check_mesh(const sinew_renderer* r, const sinew_render_mesh* m, uint32_t i,
                               uint32_t column_count)
{
    const sinew_vk_context* ctx = r->context;
    sinew_result result = check_mesh_layout(r, m, i);
    if (result != SINEW_OK) return result;
    size_t ps = m->position_stride ? m->position_stride : 12u;
    size_t ns = m->normal_stride ? m->normal_stride : 12u;
    double last_p = (double)m->position_offset + (double)ps * (m->vertex_count - 1u) + 12.0;
    double last_n = (double)m->normal_offset + (double)ns * (m->vertex_count - 1u) + 12.0;
    if (last_p / 4.0 > (double)UINT32_MAX || last_n / 4.0 > (double)UINT32_MAX)
        return render_fail(ctx, SINEW_ERROR_LIMIT,
                           "sinew_renderer_draw: mesh %u: vertex data reaches past 16 GiB", i);
    if (m->column >= column_count)
        return render_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_draw: mesh %u: column %u out of range (%u columns)",
                           i, m->column, column_count);
    if (!all_finite(m->color, 3))
        return render_fail(ctx, SINEW_ERROR_NONFINITE,
                           "sinew_renderer_draw: mesh %u: colour is not finite", i);
    if (m->bounds) {
        if (!all_finite(m->bounds, 6))
            return render_fail(ctx, SINEW_ERROR_NONFINITE,
                               "sinew_renderer_draw: mesh %u: bounds are not finite", i);
        for (int k = 0; k < 3; k++)
            if (m->bounds[k] > m->bounds[k + 3])
                return render_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                                   "sinew_renderer_draw: mesh %u: bounds min > max on axis %d",
                                   i, k);
    }
    const size_t index_count = 3u * (size_t)m->triangle_count;
    for (size_t k = 0; k < index_count; k++)
        if (m->indices[k] >= m->vertex_count)
            return render_fail(ctx, SINEW_ERROR_VERTEX_INDEX,
                               "sinew_renderer_draw: mesh %u: index %zu is %u, not below the "
                               "vertex count %u", i, k, m->indices[k], m->vertex_count);
    if (m->positions && !strided_finite(m->positions, m->vertex_count, ps))
        return render_fail(ctx, SINEW_ERROR_NONFINITE,
                           "sinew_renderer_draw: mesh %u: a position is not finite", i);
    if (m->normals && !strided_finite(m->normals, m->vertex_count, ns))
        return render_fail(ctx, SINEW_ERROR_NONFINITE,
                           "sinew_renderer_draw: mesh %u: a normal is not finite", i);
    return SINEW_OK;
}

/* Fields appended after the first published sinew_render_frame read as zero when the
 * caller's struct_size does not cover them. */
#define RENDER_FRAME_MIN_SIZE offsetof(sinew_render_frame, flags)

/* Copies the caller's frame into *out, the fields its struct_size leaves out zeroed. */
static sinew_result read_frame(const sinew_renderer* r, const sinew_render_frame* in,
                               sinew_render_frame* out)
{
    if (in->struct_size < RENDER_FRAME_MIN_SIZE)
        return render_fail(r->context, SINEW_ERROR_STRUCT_SIZE,
                           "sinew_renderer_draw: frame struct_size %u < %zu", in->struct_size,
                           RENDER_FRAME_MIN_SIZE);
    memset(out, 0, sizeof *out);
    memcpy(out, in, in->struct_size < sizeof *out ? in->struct_size : sizeof *out);
    return SINEW_OK;
}

/* The appended fields: known flags, finite vertex colours. */
static sinew_result check_appended_fields(const sinew_renderer* r, const sinew_render_frame* f)
{
    if (f->flags & ~(uint32_t)SINEW_RENDER_FRAME_NO_FLOOR)
        return render_fail(r->context, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_draw: unknown frame flags 0x%x", f->flags);
    for (uint32_t i = 0; f->vertex_colors && i < f->mesh_count; i++)
        if (f->vertex_colors[i] &&
            !all_finite(f->vertex_colors[i], 3u * f->meshes[i].vertex_count))
            return render_fail(r->context, SINEW_ERROR_NONFINITE,
                               "sinew_renderer_draw: mesh %u: a vertex colour is not finite", i);
    return SINEW_OK;
}

static sinew_result check_frame(const sinew_renderer* r, const sinew_render_frame* f,
                                uint32_t* out_columns)
{
    const sinew_vk_context* ctx = r->context;
    if (f->next)
        return render_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_draw: unknown extension in frame next");
    if (f->mesh_count > r->max_meshes)
        return render_fail(ctx, SINEW_ERROR_LIMIT,
                           "sinew_renderer_draw: %u meshes over the renderer's max_meshes %u",
                           f->mesh_count, r->max_meshes);
    if (f->mesh_count && !f->meshes)
        return render_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_draw: meshes is NULL with mesh_count %u",
                           f->mesh_count);
    if (f->mesh_count == 0 && !f->bounds)
        return render_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_draw: a frame without meshes needs bounds");
    if (!all_finite(f->up, 3) || !all_finite(f->view_direction, 3))
        return render_fail(ctx, SINEW_ERROR_NONFINITE,
                           "sinew_renderer_draw: up or view_direction is not finite");
    if (f->bounds) {
        if (!all_finite(f->bounds, 6))
            return render_fail(ctx, SINEW_ERROR_NONFINITE,
                               "sinew_renderer_draw: frame bounds are not finite");
        for (int k = 0; k < 3; k++)
            if (f->bounds[k] > f->bounds[k + 3])
                return render_fail(ctx, SINEW_ERROR_INVALID_ARGUMENT,
                                   "sinew_renderer_draw: frame bounds min > max on axis %d", k);
    }
    uint32_t columns = f->column_count;
    if (columns == 0) {
        columns = 1;
        for (uint32_t i = 0; i < f->mesh_count; i++)
            if (f->meshes[i].struct_size >= sizeof(sinew_render_mesh) &&
                f->meshes[i].column < SINEW_RENDER_MAX_MESHES &&
                f->meshes[i].column + 1u > columns)
                columns = f->meshes[i].column + 1u;
    }
    if (columns > r->width || columns > SINEW_RENDER_MAX_MESHES)
        return render_fail(ctx, SINEW_ERROR_LIMIT,
                           "sinew_renderer_draw: %u columns do not fit a %u-pixel width "
                           "(at most %u)", columns, r->width, (unsigned)SINEW_RENDER_MAX_MESHES);
    for (uint32_t i = 0; i < f->mesh_count; i++) {
        sinew_result result = check_mesh(r, &f->meshes[i], i, columns);
        if (result != SINEW_OK) return result;
    }
    *out_columns = columns;
    return check_appended_fields(r, f);
}

/* Copies xyz triples at `stride` into a packed array. */
static void pack_xyz(float* dst, const float* src, uint32_t count, size_t stride)
{
    if (stride == 12) {
        memcpy(dst, src, sizeof(float) * 3u * count);
        return;
    }
    const unsigned char* base = (const unsigned char*)src;
    for (uint32_t v = 0; v < count; v++)
        memcpy(dst + 3u * (size_t)v, base + (size_t)v * stride, sizeof(float) * 3u);
}

/* The host normals of mesh i, packed at dst: copied, or computed from its host positions. */
static sinew_result pack_normals(sinew_renderer* r, const sinew_render_mesh* m, uint32_t i,
                                 float* dst)
{
    const size_t n = m->vertex_count;
    if (m->normals) {
        pack_xyz(dst, m->normals, m->vertex_count, m->normal_stride ? m->normal_stride : 12u);
        return SINEW_OK;
    }
    /* Computed in host memory: mapped device memory can be slow to read back. */
    if (r->scratch_floats < 3u * n) {
        sinew_host_free(r->host, r->scratch);
        r->scratch = sinew_host_alloc(r->host, sizeof(float) * 3u * n);
        r->scratch_floats = r->scratch ? 3u * n : 0u;
        if (!r->scratch)
            return render_fail(r->context, SINEW_ERROR_OUT_OF_MEMORY,
                               "sinew_renderer_draw: mesh %u: out of memory for normals", i);
    }
    render_compute_normals(m->positions, m->position_stride ? m->position_stride : 12u,
                           m->vertex_count, m->indices, m->triangle_count, r->scratch);
    memcpy(dst, r->scratch, sizeof(float) * 3u * n);
    return SINEW_OK;
}

/* Uploads the host data of mesh i (`colors`: its vertex colours or NULL) and fills its
 * descriptor set and push constants. Host arrays go packed into the slot's buffer: positions,
 * normals, colours, each where given. */
static sinew_result prepare_mesh(sinew_renderer* r, const sinew_render_mesh* m,
                                 const float* colors, uint32_t i, render_push* push)
{
    render_slot* slot = &r->slots[i];
    const size_t n = m->vertex_count;
    const VkDeviceSize index_bytes = sizeof(uint32_t) * 3u * (VkDeviceSize)m->triangle_count;
    sinew_result result = buffer_reserve(r, &slot->indices, index_bytes,
                                         VK_BUFFER_USAGE_INDEX_BUFFER_BIT);
    if (result != SINEW_OK) return result;
    memcpy(slot->indices.mapped, m->indices, (size_t)index_bytes);

    const int host_normals = m->normal_buffer == VK_NULL_HANDLE;
    const size_t host_floats = 3u * n * ((m->positions ? 1u : 0u) + (host_normals ? 1u : 0u) +
                                         (colors ? 1u : 0u));
    if (host_floats) {
        result = buffer_reserve(r, &slot->vertices, sizeof(float) * host_floats,
                                VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        if (result != SINEW_OK) return result;
    }
    float* mapped = slot->vertices.mapped;
    uint32_t at = 0;
    VkBuffer positions = m->position_buffer, normals = m->normal_buffer;
    VkBuffer color_buffer = r->placeholder.buffer;
    const size_t ps = m->position_stride ? m->position_stride : 12u;
    const size_t ns = m->normal_stride ? m->normal_stride : 12u;
    push->layout[0] = (uint32_t)(m->position_offset / 4u);
    push->layout[1] = (uint32_t)(ps / 4u);
    push->layout[2] = (uint32_t)(m->normal_offset / 4u);
    push->layout[3] = (uint32_t)(ns / 4u);
    memset(push->colors, 0, sizeof push->colors);
    if (m->positions) {
        pack_xyz(mapped, m->positions, m->vertex_count, ps);
        positions = slot->vertices.buffer;
        push->layout[0] = 0;
        push->layout[1] = 3;
        at = (uint32_t)(3u * n);
    }
    if (host_normals) {
        if ((result = pack_normals(r, m, i, mapped + at)) != SINEW_OK) return result;
        normals = slot->vertices.buffer;
        push->layout[2] = at;
        push->layout[3] = 3;
        at += (uint32_t)(3u * n);
    }
    if (colors) {
        memcpy(mapped + at, colors, sizeof(float) * 3u * n);
        color_buffer = slot->vertices.buffer;
        push->colors[0] = at;
        push->colors[1] = 3;
        push->colors[2] = 1;
    }
    write_set(r, slot->set, positions, normals, color_buffer);
    const int all_zero = m->color[0] == 0.0f && m->color[1] == 0.0f && m->color[2] == 0.0f;
    const float skin[3] = {0.72f, 0.50f, 0.38f};
    for (int k = 0; k < 3; k++) push->color[k] = all_zero ? skin[k] : m->color[k];
    push->color[3] = 1.0f;
    return SINEW_OK;
}

/* Adds the slots of the output behind `buffer`, when it is one whose slots are owned by an
 * external writer, that `count` xyz elements at offset/stride touch. */
static void add_transfers(const sinew_renderer* r, VkBuffer buffer, VkDeviceSize offset,
                          size_t stride, uint32_t count, render_transfer* list, uint32_t* n)
{
    const sinew_vk_output* out = sinew_vk_output_find(r->context, buffer);
    sinew_vk_output_info info = SINEW_VK_OUTPUT_INFO_INIT;
    if (!out || sinew_vk_output_get_info(out, &info) != SINEW_OK || !info.ownership_transfer)
        return;
    const VkDeviceSize bytes = (VkDeviceSize)(stride ? stride : 12u) * (count - 1u) + 12u;
    const uint32_t mask = sinew_vk_output_slots_in(out, offset, bytes);
    for (uint32_t slot = 0; slot < SINEW_VK_OUTPUT_MAX_SLOTS; slot++) {
        if (!(mask & (1u << slot))) continue;
        uint32_t k = 0;
        while (k < *n && (list[k].output != out || list[k].slot != slot)) k++;
        /* Each slot is acquired once per draw, however many meshes read it. */
        if (k == *n && *n < RENDER_MAX_TRANSFERS) list[(*n)++] = (render_transfer){out, slot};
    }
}

/* Records the acquire (or the release) of every collected slot for the vertex shader's
 * storage-buffer reads. */
static sinew_result record_transfers(const sinew_renderer* r, VkCommandBuffer cmd,
                                     const render_transfer* list, uint32_t n, int acquire)
{
    const uint32_t family = r->context->queue_family_index;
    const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_VERTEX_SHADER_BIT;
    sinew_result result = SINEW_OK;
    for (uint32_t k = 0; k < n && result == SINEW_OK; k++)
        result = acquire ? sinew_vk_output_cmd_acquire(list[k].output, list[k].slot, cmd, family,
                                                       stage, VK_ACCESS_SHADER_READ_BIT)
                         : sinew_vk_output_cmd_release(list[k].output, list[k].slot, cmd,
                                                       family, stage, 0);
    return result;
}

/* Records viewport column c of `columns`: the floor (unless the frame leaves it out), then
 * the meshes of that column. */
static void record_column(const sinew_renderer* r, VkCommandBuffer cmd,
                          const sinew_render_frame* f, const render_push* pushes, uint32_t c,
                          uint32_t columns)
{
    /* Columns share the width evenly; the last one takes the remainder. */
    const uint32_t column_width = r->width / columns;
    const uint32_t x0 = c * column_width;
    const uint32_t x1 = c + 1 == columns ? r->width : x0 + column_width;
    VkViewport viewport = {(float)x0, 0.0f, (float)column_width, (float)r->height, 0.0f, 1.0f};
    VkRect2D scissor = {{(int32_t)x0, 0}, {x1 - x0, r->height}};
    vkCmdSetViewport(cmd, 0, 1, &viewport);
    vkCmdSetScissor(cmd, 0, 1, &scissor);
    const VkShaderStageFlags stages = VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT;
    if (!(f->flags & SINEW_RENDER_FRAME_NO_FLOOR)) {
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, r->floor_pipeline);
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, r->pipeline_layout, 0, 1,
                                &r->floor_set, 0, NULL);
        render_push floor_push;
        memset(&floor_push, 0, sizeof floor_push);
        vkCmdPushConstants(cmd, r->pipeline_layout, stages, 0, sizeof floor_push, &floor_push);
        vkCmdDraw(cmd, 6, 1, 0, 0);
    }
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, r->mesh_pipeline);
    for (uint32_t i = 0; i < f->mesh_count; i++) {
        const sinew_render_mesh* m = &f->meshes[i];
        if (m->column != c) continue;
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, r->pipeline_layout, 0, 1,
                                &r->slots[i].set, 0, NULL);
        vkCmdPushConstants(cmd, r->pipeline_layout, stages, 0, sizeof pushes[i], &pushes[i]);
        vkCmdBindIndexBuffer(cmd, r->slots[i].indices.buffer, 0, VK_INDEX_TYPE_UINT32);
        vkCmdDrawIndexed(cmd, 3u * m->triangle_count, 1, 0, 0, 0);
    }
}

/* The box the camera frames: the frame's bounds, else every mesh's (its own bounds, else its
 * positions). */
static void frame_box(const sinew_render_frame* f, float box[6])
{
    const float empty[6] = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
    memcpy(box, f->bounds ? f->bounds : empty, 6 * sizeof(float));
    if (f->bounds) return;
    for (uint32_t i = 0; i < f->mesh_count; i++) {
        const sinew_render_mesh* m = &f->meshes[i];
        if (m->bounds) {
            render_bounds_add(box, m->bounds, 2, 12);
        } else {
            render_bounds_add(box, m->positions, m->vertex_count,
                              m->position_stride ? m->position_stride : 12u);
        }
    }
}

/* The render pass over every column, cleared to the scene's background (gamma encoded). */
static void record_pass(sinew_renderer* r, VkCommandBuffer cmd, const sinew_render_frame* f,
                        const render_push* pushes, uint32_t columns, const render_frame_ubo* ubo)
{
    VkClearValue clears[3];
    memset(clears, 0, sizeof clears);
    for (int k = 0; k < 3; k++) clears[0].color.float32[k] = powf(ubo->background[k], 1.0f / 2.2f);
    clears[0].color.float32[3] = 1.0f;
    clears[1].depthStencil.depth = 1.0f;
    clears[2] = clears[0];
    VkRenderPassBeginInfo pass = {VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
    pass.renderPass = r->render_pass;
    pass.framebuffer = r->framebuffer;
    pass.renderArea.extent.width = r->width;
    pass.renderArea.extent.height = r->height;
    pass.clearValueCount = r->samples > 1 ? 3 : 2;
    pass.pClearValues = clears;
    vkCmdBeginRenderPass(cmd, &pass, VK_SUBPASS_CONTENTS_INLINE);
    for (uint32_t c = 0; c < columns; c++) record_column(r, cmd, f, pushes, c, columns);
    vkCmdEndRenderPass(cmd);
}

/* The resolved image copied into the readback buffer, visible to the host after the fence. */
static void record_readback(sinew_renderer* r, VkCommandBuffer cmd)
{
    VkBufferImageCopy copy = {0};
    copy.imageSubresource.aspectMask = VK_IMAGE_ASPECT_COLOR_BIT;
    copy.imageSubresource.layerCount = 1;
    copy.imageExtent.width = r->width;
    copy.imageExtent.height = r->height;
    copy.imageExtent.depth = 1;
    vkCmdCopyImageToBuffer(cmd, r->color.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                           r->readback.buffer, 1, &copy);
    VkMemoryBarrier to_host = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                         &to_host, 0, NULL, 0, NULL);
}

/* The frame's commands between begin and end: device buffers written earlier on this queue (a
 * compute skinning pass, a transfer) made visible to the vertex shader; output slots written
 * by another API through exported memory acquired from VK_QUEUE_FAMILY_EXTERNAL before the
 * vertex shader reads them and released back after the pass (Vulkan spec, "Queue Family
 * Ownership Transfer"); the pass; the readback when asked. */
static sinew_result record_frame(sinew_renderer* r, VkCommandBuffer cmd,
                                 const sinew_render_frame* f, const render_push* pushes,
                                 uint32_t columns, const render_frame_ubo* ubo, int readback,
                                 uint32_t* transfer_count)
{
    VkMemoryBarrier barrier = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
    vkCmdPipelineBarrier(cmd,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_VERTEX_SHADER_BIT, 0, 1, &barrier, 0, NULL, 0, NULL);
    render_transfer transfers[RENDER_MAX_TRANSFERS];
    *transfer_count = 0;
    for (uint32_t i = 0; i < f->mesh_count; i++) {
        const sinew_render_mesh* m = &f->meshes[i];
        add_transfers(r, m->position_buffer, m->position_offset, m->position_stride,
                      m->vertex_count, transfers, transfer_count);
        add_transfers(r, m->normal_buffer, m->normal_offset, m->normal_stride, m->vertex_count,
                      transfers, transfer_count);
    }
    sinew_result result = record_transfers(r, cmd, transfers, *transfer_count, 1);
    if (result != SINEW_OK) return result;
    record_pass(r, cmd, f, pushes, columns, ubo);
    result = record_transfers(r, cmd, transfers, *transfer_count, 0);
    if (result == SINEW_OK && readback) record_readback(r, cmd);
    return result;
}

/* One submission of cmd, waited for on the renderer's fence (reset after). */
static sinew_result submit_and_wait(sinew_renderer* r, VkCommandBuffer cmd)
{
    VkSubmitInfo submit = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    sinew_vk_context_lock_queue(r->context);
    VkResult vr = vkQueueSubmit(r->queue, 1, &submit, r->fence);
    sinew_vk_context_unlock_queue(r->context);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkQueueSubmit");
    vr = vkWaitForFences(r->device, 1, &r->fence, VK_TRUE, UINT64_MAX);
    VkResult reset = vkResetFences(r->device, 1, &r->fence);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkWaitForFences");
    if (reset != VK_SUCCESS) return render_vk_fail(r, reset, "vkResetFences");
    return SINEW_OK;
}

static sinew_result draw(sinew_renderer* r, const sinew_render_frame* frame, int readback)
{
    uint32_t columns = 1;
    sinew_render_frame given;
    const sinew_render_frame* f = &given;
    sinew_result result = read_frame(r, frame, &given);
    if (result == SINEW_OK) result = check_frame(r, f, &columns);
    if (result != SINEW_OK) return result;
    float box[6];
    frame_box(f, box);
    render_push pushes[SINEW_RENDER_MAX_MESHES];
    for (uint32_t i = 0; i < f->mesh_count && result == SINEW_OK; i++)
        result = prepare_mesh(r, &f->meshes[i], f->vertex_colors ? f->vertex_colors[i] : NULL,
                              i, &pushes[i]);
    if (result != SINEW_OK) return result;
    const uint32_t column_width = r->width / columns;
    render_frame_ubo ubo;
    render_scene_setup(box, f->up, f->view_direction,
                       (float)column_width / (float)r->height, &ubo);
    memcpy(r->uniforms.mapped, &ubo, sizeof ubo);
    VkCommandBuffer cmd = r->cmd;
    VkResult vr = vkResetCommandBuffer(cmd, 0);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkResetCommandBuffer");
    VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vr = vkBeginCommandBuffer(cmd, &begin);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkBeginCommandBuffer");
    uint32_t transfer_count = 0;
    result = record_frame(r, cmd, f, pushes, columns, &ubo, readback, &transfer_count);
    if (result != SINEW_OK) {
        vkEndCommandBuffer(cmd);
        return result;
    }
    vr = vkEndCommandBuffer(cmd);
    if (vr != VK_SUCCESS) return render_vk_fail(r, vr, "vkEndCommandBuffer");
    result = submit_and_wait(r, cmd);
    if (result != SINEW_OK) return result;
    r->frames++;
    r->ownership_transfers += transfer_count;
    return SINEW_OK;
}

sinew_result sinew_renderer_draw(sinew_renderer* r, const sinew_render_frame* frame,
                                 uint8_t* rgba, size_t rgba_size)
{
    if (!r || !frame || !rgba)
        return render_fail(r ? r->context : NULL, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_draw: renderer, frame and rgba are required");
    const size_t need = (size_t)r->width * r->height * 4u;
    if (rgba_size < need)
        return render_fail(r->context, SINEW_ERROR_OUTPUT_BINDING,
                           "sinew_renderer_draw: rgba_size %zu < %zu (%ux%u RGBA)", rgba_size,
                           need, r->width, r->height);
    sinew_result result = draw(r, frame, 1);
    if (result == SINEW_OK) memcpy(rgba, r->readback.mapped, need);
    return result;
}

sinew_result sinew_renderer_draw_image(sinew_renderer* r, const sinew_render_frame* frame,
                                       VkImage* out_image)
{
    if (out_image) *out_image = VK_NULL_HANDLE;
    if (!r || !frame || !out_image)
        return render_fail(r ? r->context : NULL, SINEW_ERROR_INVALID_ARGUMENT,
                           "sinew_renderer_draw_image: renderer, frame and out_image are "
                           "required");
    sinew_result result = draw(r, frame, 0);
    if (result == SINEW_OK) *out_image = r->color.image;
    return result;
}
