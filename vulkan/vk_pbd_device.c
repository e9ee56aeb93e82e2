/* The device side of vk-pbd: pbd's particles, coloured constraints, contacts and upsampling
 * records in storage buffers, one compute pipeline per stage (shaders/pbd_*.comp, SPIR-V
 * embedded at build time) over one descriptor set, and the recording of steps: prediction,
 * one dispatch per colour (Sec. 4: a colour's constraints share no particle, so they run in
 * parallel without atomics), the contacts as one more colour, the velocity update, then the
 * skin's normals and the render mesh into the output buffer. The particles stay on the device
 * (Sec. 5); the host uploads each step's targets of the fixed particles and contact planes.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>

#include "vk_pbd.h"

static const uint32_t pbd_predict_spirv[] =
#include "pbd_predict.spv.inc"
    ;
static const uint32_t pbd_colour_spirv[] =
#include "pbd_colour.spv.inc"
    ;
static const uint32_t pbd_contacts_spirv[] =
#include "pbd_contacts.spv.inc"
    ;
static const uint32_t pbd_velocity_spirv[] =
#include "pbd_velocity.spv.inc"
    ;
static const uint32_t pbd_undo_spirv[] =
#include "pbd_undo.spv.inc"
    ;
static const uint32_t pbd_normals_spirv[] =
#include "pbd_normals.spv.inc"
    ;
static const uint32_t pbd_upsample_spirv[] =
#include "pbd_upsample.spv.inc"
    ;

/* The bindings of shaders/pbd_common.glsl. */
enum {
    B_X, B_V, B_XP, B_W, B_TARGET, B_S_IDX, B_S_PAR, B_V_IDX, B_V_W, B_V_PAR, B_LAMBDA,
    B_C_VERT, B_C_SIDE, B_C_PLANE, B_VT_OFF, B_VT, B_TRI, B_SKIN_N, B_REC, B_SKINNING, B_BLEND,
    B_OUT_POS, B_OUT_NRM, B_STATUS, B_COUNT
};

enum { P_PREDICT, P_COLOUR, P_CONTACTS, P_VELOCITY, P_UNDO, P_NORMALS, P_UPSAMPLE, P_COUNT };

static const struct {
    const uint32_t* code;
    size_t size;
} stage_spirv[P_COUNT] = {
    {pbd_predict_spirv, sizeof pbd_predict_spirv},   {pbd_colour_spirv, sizeof pbd_colour_spirv},
    {pbd_contacts_spirv, sizeof pbd_contacts_spirv}, {pbd_velocity_spirv, sizeof pbd_velocity_spirv},
    {pbd_undo_spirv, sizeof pbd_undo_spirv},         {pbd_normals_spirv, sizeof pbd_normals_spirv},
    {pbd_upsample_spirv, sizeof pbd_upsample_spirv},
};

#define GROUP_SIZE 64u
#define PBD_XPBD 1u
#define PBD_BLEND 2u

/* The push constants of shaders/pbd_common.glsl. */
typedef struct push_block {
    uint32_t N, n, first_s, count_s, first_v, count_v, first_b, count_b, lambda_v, target_at,
        plane_at, contacts, render, flags;
    float h, vel, k_s, k_v, k_b, slack, fraction;
} push_block;

struct vk_pbd_device {
    sinew_vk_context* ctx;
    sinew_host_api host;
    const ps_model* m;
    pbd_sim* sim;
    const pbd_constraints* con;
    ps_collide* contacts;       /* NULL without */
    uint32_t iterations, ring, ring_used, plane_count;
    push_block push;
    sinew_vk_buffer buf[B_COUNT]; /* B_OUT_POS and B_OUT_NRM point at targets instead */
    sinew_vk_buffer own;          /* the render mesh for the host: positions, then normals */
    VkDeviceSize own_nrm;
    sinew_vk_buffer readback;     /* 6N floats: positions and velocities for the host */
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkShaderModule modules[P_COUNT];
    VkPipeline pipes[P_COUNT];
    VkDescriptorPool pool;
    VkDescriptorSet set;
    VkCommandPool cmd_pool;
    VkCommandBuffer cmd;
    VkFence fence;
    bool in_flight, recording;
    vk_pbd_target target;       /* what B_OUT_POS and B_OUT_NRM describe */
    int bound_pipe;
};

/* ---- creation ---- */

static sinew_result oom(const vk_pbd_device* d)
{
    return sinew_host_fail(&d->host, SINEW_ERROR_OUT_OF_MEMORY, "vk-pbd: out of memory");
}

/* A storage buffer of `bytes` (at least 16) with `data` uploaded (NULL: zeros); host-visible
 * and coherent where the host writes it each step, else device-local where there is such. */
static sinew_result make_buffer(vk_pbd_device* d, int binding, size_t bytes, const void* data,
                                bool host_visible)
{
    const VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                               VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    size_t size = bytes < 16u ? 16u : bytes;
    sinew_vk_buffer* b = &d->buf[binding];
    sinew_result r = sinew_vk_buffer_create(d->ctx, size, usage, host_visible ? hv : 0,
                                            host_visible ? 0 : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                            "vk-pbd buffer", b);
    if (r != SINEW_OK) return r;
    if (b->mapped) {
        if (data) memcpy(b->mapped, data, bytes);
        else memset(b->mapped, 0, size);
        return SINEW_OK;
    }
    void* zeros = data ? NULL : sinew_host_calloc(&d->host, size, 1u);
    if (!data && !zeros) return oom(d);
    r = sinew_vk_buffer_upload(d->ctx, b, 0, data ? data : zeros, data ? bytes : size);
    sinew_host_free(&d->host, zeros);
    return r;
}

/* The particles' state: positions at rest (pbd's start), the rest zero. */
static sinew_result make_state(vk_pbd_device* d)
{
    const pbd_constraints* c = d->con;
    size_t N3 = 3u * (size_t)c->particle_count * sizeof(float);
    size_t n = d->m->n;
    sinew_result r = make_buffer(d, B_X, N3, pbd_sim_positions(d->sim), false);
    if (r == SINEW_OK) r = make_buffer(d, B_V, N3, NULL, false);
    if (r == SINEW_OK) r = make_buffer(d, B_XP, N3, NULL, false);
    if (r == SINEW_OK) r = make_buffer(d, B_W, c->particle_count * sizeof(float), c->inv_mass, false);
    if (r == SINEW_OK) r = make_buffer(d, B_TARGET, d->ring * N3, NULL, true);
    size_t constraints = (size_t)c->stretch_count + c->volume_count + c->bending_count;
    if (r == SINEW_OK) r = make_buffer(d, B_LAMBDA, constraints * sizeof(float), NULL, false);
    if (r == SINEW_OK) r = make_buffer(d, B_SKIN_N, 3u * n * sizeof(float), NULL, false);
    if (r == SINEW_OK) r = make_buffer(d, B_BLEND, 3u * n * sizeof(float), NULL, false);
    if (r == SINEW_OK) r = make_buffer(d, B_STATUS, 4u * sizeof(uint32_t), NULL, true);
    if (r == SINEW_OK)
        r = make_buffer(d, B_SKINNING, (size_t)d->m->joint_count * 16u * sizeof(float), NULL, true);
    return r;
}

/* Four-particle constraint i of pbd's arrays p, w, rest and alpha at row k of the packed ones. */
static void pack_four(uint32_t* idx, float* w4, float* par, uint32_t k, uint32_t* const p[4],
                      float* const w[4], const float* rest, const float* alpha, uint32_t i)
{
    for (int q = 0; q < 4; ++q) {
        idx[4u * k + q] = p[q][i];
        w4[4u * k + q] = w[q][i];
    }
    par[2u * k] = rest[i], par[2u * k + 1u] = alpha[i];
}

/* The constraints as pbd grouped them by colour, packed per constraint: the stretch ones
 * apart, the volume and then the bending ones in the four-particle arrays. */
static sinew_result make_constraints(vk_pbd_device* d)
{
    const pbd_constraints* c = d->con;
    uint32_t s = c->stretch_count, v = c->volume_count + c->bending_count;
    uint32_t* s_idx = sinew_host_calloc(&d->host, (size_t)s + 1u, 2u * sizeof(uint32_t));
    float* s_par = sinew_host_calloc(&d->host, (size_t)s + 1u, 4u * sizeof(float));
    uint32_t* v_idx = sinew_host_calloc(&d->host, (size_t)v + 1u, 4u * sizeof(uint32_t));
    float* v_w = sinew_host_calloc(&d->host, (size_t)v + 1u, 4u * sizeof(float));
    float* v_par = sinew_host_calloc(&d->host, (size_t)v + 1u, 2u * sizeof(float));
    sinew_result r = s_idx && s_par && v_idx && v_w && v_par ? SINEW_OK : oom(d);
    for (uint32_t i = 0; r == SINEW_OK && i < s; ++i) {
        s_idx[2u * i] = c->stretch_a[i], s_idx[2u * i + 1u] = c->stretch_b[i];
        float par[4] = {c->stretch_w[0][i], c->stretch_w[1][i], c->stretch_rest[i],
                        c->stretch_alpha[i]};
        memcpy(s_par + 4u * i, par, sizeof par);
    }
    for (uint32_t i = 0; r == SINEW_OK && i < c->volume_count; ++i)
        pack_four(v_idx, v_w, v_par, i, c->volume_p, c->volume_w, c->volume_rest,
                  c->volume_alpha, i);
    for (uint32_t i = 0; r == SINEW_OK && i < c->bending_count; ++i)
        pack_four(v_idx, v_w, v_par, c->volume_count + i, c->bending_p, c->bending_w,
                  c->bending_rest, c->bending_alpha, i);
    if (r == SINEW_OK) r = make_buffer(d, B_S_IDX, (size_t)s * 8u, s_idx, false);
    if (r == SINEW_OK) r = make_buffer(d, B_S_PAR, (size_t)s * 16u, s_par, false);
    if (r == SINEW_OK) r = make_buffer(d, B_V_IDX, (size_t)v * 16u, v_idx, false);
    if (r == SINEW_OK) r = make_buffer(d, B_V_W, (size_t)v * 16u, v_w, false);
    if (r == SINEW_OK) r = make_buffer(d, B_V_PAR, (size_t)v * 8u, v_par, false);
    void* scratch[] = {s_idx, s_par, v_idx, v_w, v_par};
    for (size_t k = 0; k < sizeof scratch / sizeof scratch[0]; ++k)
        sinew_host_free(&d->host, scratch[k]);
    return r;
}

/* The joints' contacts (ps_collide.c): per constrained vertex its index, its side entries and
 * whether it moves; per entry its contact, side and margin; a ring of planes per step. */
static sinew_result make_contacts(vk_pbd_device* d)
{
    ps_collide* pc = d->contacts;
    uint32_t vc = pc ? ps_collide_vertex_count(pc) : 0u, ec = pc ? ps_collide_entry_count(pc) : 0u;
    d->plane_count = pc ? ps_collide_contact_count(pc) : 0u;
    uint32_t* off = sinew_host_calloc(&d->host, (size_t)vc + 1u, sizeof(uint32_t));
    uint32_t* vert = sinew_host_calloc(&d->host, (size_t)vc + 1u, 4u * sizeof(uint32_t));
    uint32_t* contact = sinew_host_calloc(&d->host, (size_t)ec + 1u, sizeof(uint32_t));
    float* side = sinew_host_calloc(&d->host, (size_t)ec + 1u, sizeof(float));
    float* margin = sinew_host_calloc(&d->host, (size_t)ec + 1u, sizeof(float));
    float* entry = sinew_host_calloc(&d->host, (size_t)ec + 1u, 4u * sizeof(float));
    sinew_result r = off && vert && contact && side && margin && entry ? SINEW_OK : oom(d);
    if (r == SINEW_OK && pc) {
        ps_collide_skin_entries(pc, off, contact, side, margin, &d->push.slack);
        const uint32_t* vertices = ps_collide_vertices(pc);
        for (uint32_t s = 0; s < vc; ++s) {
            uint32_t row[4] = {vertices[s], off[s], off[s + 1u],
                               d->con->inv_mass[vertices[s]] > 0.0f ? 1u : 0u};
            memcpy(vert + 4u * s, row, sizeof row);
        }
        for (uint32_t e = 0; e < ec; ++e) {
            memcpy(entry + 4u * e, &contact[e], sizeof(uint32_t));
            entry[4u * e + 1u] = side[e], entry[4u * e + 2u] = margin[e];
        }
    }
    d->push.contacts = vc;
    if (r == SINEW_OK) r = make_buffer(d, B_C_VERT, (size_t)vc * 16u, vert, false);
    if (r == SINEW_OK) r = make_buffer(d, B_C_SIDE, (size_t)ec * 16u, entry, false);
    if (r == SINEW_OK)
        r = make_buffer(d, B_C_PLANE, (size_t)d->ring * d->plane_count * 32u, NULL, true);
    void* scratch[] = {off, vert, contact, side, margin, entry};
    for (size_t k = 0; k < sizeof scratch / sizeof scratch[0]; ++k)
        sinew_host_free(&d->host, scratch[k]);
    return r;
}

/* The skin's triangles and vertex-triangle lists, and the upsampling records (2018 Sec. 6)
 * with the joint of a rigid record's bone. */
static sinew_result make_surface(vk_pbd_device* d)
{
    const ps_model* m = d->m;
    uint32_t* rec = sinew_host_calloc(&d->host, (size_t)m->render_count + 1u, 64u);
    if (!rec) return oom(d);
    for (uint32_t i = 0; i < m->render_count; ++i) {
        const ps_upsample* u = &m->upsample[i];
        uint32_t* r = rec + 16u * i;
        r[0] = u->triangle == PS_NONE ? UINT32_MAX : u->triangle;
        r[1] = u->vertex;
        r[2] = m->bones[m->vertex_bone[u->vertex]].joint;
        memcpy(r + 4, u->bary, 12u);
        memcpy(r + 8, u->offset, 12u);
        memcpy(r + 12, u->normal, 12u);
    }
    sinew_result r = make_buffer(d, B_REC, (size_t)m->render_count * 64u, rec, false);
    sinew_host_free(&d->host, rec);
    if (r == SINEW_OK)
        r = make_buffer(d, B_VT_OFF, ((size_t)m->n + 1u) * 4u, m->vertex_tri_offsets, false);
    if (r == SINEW_OK)
        r = make_buffer(d, B_VT, (size_t)m->vertex_tri_offsets[m->n] * 4u, m->vertex_tris, false);
    if (r == SINEW_OK)
        r = make_buffer(d, B_TRI, (size_t)m->triangle_count * 12u, m->triangles, false);
    return r;
}

/* The render mesh and the particles as the host reads them back: coherent host memory,
 * cached where there is some. */
static sinew_result make_readback(vk_pbd_device* d)
{
    const VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VkDeviceSize bytes = (VkDeviceSize)d->m->render_count * 12u;
    d->own_nrm = (bytes + 255u) / 256u * 256u;
    sinew_result r = sinew_vk_buffer_create(d->ctx, d->own_nrm + (bytes ? bytes : 16u), usage, hv,
                                            VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
                                            "vk-pbd render readback", &d->own);
    if (r == SINEW_OK)
        r = sinew_vk_buffer_create(d->ctx, 6u * (VkDeviceSize)d->con->particle_count * 4u + 16u,
                                   usage, hv, VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
                                   "vk-pbd state readback", &d->readback);
    return r;
}

/* One set layout of B_COUNT storage buffers and one push-constant block for every stage. */
static sinew_result make_layout(vk_pbd_device* d)
{
    if (d->ctx->properties.limits.maxPerStageDescriptorStorageBuffers < B_COUNT)
        return sinew_host_fail(&d->host, SINEW_ERROR_BACKEND_UNAVAILABLE,
                               "vk-pbd: the device binds %u storage buffers per stage, %u needed",
                               d->ctx->properties.limits.maxPerStageDescriptorStorageBuffers,
                               (unsigned)B_COUNT);
    _Static_assert(B_COUNT <= SINEW_VK_MAX_STORAGE_BINDINGS, "too many bindings");
    return sinew_vk_compute_layouts(d->ctx, B_COUNT, (uint32_t)sizeof(push_block), "vk-pbd",
                                    &d->set_layout, &d->layout);
}

static sinew_result make_pipelines(vk_pbd_device* d)
{
    VkDevice dev = d->ctx->device;
    for (int p = 0; p < P_COUNT; ++p) {
        VkShaderModuleCreateInfo sm = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        sm.codeSize = stage_spirv[p].size;
        sm.pCode = stage_spirv[p].code;
        VkResult vr = vkCreateShaderModule(dev, &sm, NULL, &d->modules[p]);
        if (vr != VK_SUCCESS) return sinew_vk_fail(d->ctx, vr, "vkCreateShaderModule (vk-pbd)");
        VkComputePipelineCreateInfo cp = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        cp.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
        cp.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        cp.stage.module = d->modules[p];
        cp.stage.pName = "main";
        cp.layout = d->layout;
        vr = vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cp, NULL, &d->pipes[p]);
        if (vr != VK_SUCCESS) return sinew_vk_fail(d->ctx, vr, "vkCreateComputePipelines (vk-pbd)");
    }
    return SINEW_OK;
}

/* The descriptor set over the buffers (the output pair at the own readback buffer until a
 * submission names another target), the command buffer and its fence. */
static sinew_result make_objects(vk_pbd_device* d)
{
    VkDevice dev = d->ctx->device;
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, B_COUNT};
    VkDescriptorPoolCreateInfo dp = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dp.maxSets = 1;
    dp.poolSizeCount = 1;
    dp.pPoolSizes = &ps;
    VkResult vr = vkCreateDescriptorPool(dev, &dp, NULL, &d->pool);
    VkDescriptorSetAllocateInfo da = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    da.descriptorPool = d->pool;
    da.descriptorSetCount = 1;
    da.pSetLayouts = &d->set_layout;
    if (vr == VK_SUCCESS) vr = vkAllocateDescriptorSets(dev, &da, &d->set);
    VkCommandPoolCreateInfo cpi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    cpi.queueFamilyIndex = d->ctx->queue_family_index;
    if (vr == VK_SUCCESS) vr = vkCreateCommandPool(dev, &cpi, NULL, &d->cmd_pool);
    VkCommandBufferAllocateInfo ca = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ca.commandPool = d->cmd_pool;
    ca.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ca.commandBufferCount = 1;
    if (vr == VK_SUCCESS) vr = vkAllocateCommandBuffers(dev, &ca, &d->cmd);
    VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (vr == VK_SUCCESS) vr = vkCreateFence(dev, &fi, NULL, &d->fence);
    if (vr != VK_SUCCESS) return sinew_vk_fail(d->ctx, vr, "vk-pbd: command objects");
    VkDescriptorBufferInfo info[B_COUNT];
    VkDeviceSize bytes = (VkDeviceSize)d->m->render_count * 12u;
    bytes = bytes ? bytes : 16u;
    for (uint32_t i = 0; i < B_COUNT; ++i) {
        info[i] = (VkDescriptorBufferInfo){d->buf[i].buffer, 0, VK_WHOLE_SIZE};
        if (i == B_OUT_POS) info[i] = (VkDescriptorBufferInfo){d->own.buffer, 0, bytes};
        if (i == B_OUT_NRM) info[i] = (VkDescriptorBufferInfo){d->own.buffer, d->own_nrm, bytes};
    }
    sinew_vk_write_storage(d->ctx, d->set, 0u, B_COUNT, info);
    d->target = (vk_pbd_target){d->own.buffer, 0, d->own_nrm};
    return SINEW_OK;
}

/* The push constants every stage shares. */
static void push_defaults(vk_pbd_device* d, const pbd_params* p)
{
    push_block* b = &d->push;
    b->N = d->con->particle_count;
    b->n = d->m->n;
    b->lambda_v = d->con->stretch_count;
    b->render = d->m->render_count;
    b->flags = p->compliance ? PBD_XPBD : 0u;
    b->h = (float)p->timestep;
    b->vel = (float)(p->damping / p->timestep);
    /* plain PBD: the stiffness of the whole solve per iteration (pbd_sim.c, Mueller et al.
     * 2006 Sec. 3.3) */
    double its = (double)p->iterations;
    b->k_s = (float)(1.0 - pow(1.0 - p->stretch_stiffness, 1.0 / its));
    b->k_v = (float)(1.0 - pow(1.0 - p->volume_stiffness, 1.0 / its));
    b->k_b = (float)(1.0 - pow(1.0 - p->bending_stiffness, 1.0 / its));
}

void vk_pbd_device_destroy(vk_pbd_device* d)
{
    if (!d) return;
    sinew_vk_context* ctx = d->ctx;
    VkDevice dev = ctx->device;
    if (d->in_flight) vkWaitForFences(dev, 1, &d->fence, VK_TRUE, UINT64_MAX);
    if (d->fence) vkDestroyFence(dev, d->fence, NULL);
    if (d->cmd_pool) vkDestroyCommandPool(dev, d->cmd_pool, NULL);
    if (d->pool) vkDestroyDescriptorPool(dev, d->pool, NULL);
    for (int p = 0; p < P_COUNT; ++p) {
        if (d->pipes[p]) vkDestroyPipeline(dev, d->pipes[p], NULL);
        if (d->modules[p]) vkDestroyShaderModule(dev, d->modules[p], NULL);
    }
    if (d->layout) vkDestroyPipelineLayout(dev, d->layout, NULL);
    if (d->set_layout) vkDestroyDescriptorSetLayout(dev, d->set_layout, NULL);
    for (int i = 0; i < B_COUNT; ++i) sinew_vk_buffer_destroy(ctx, &d->buf[i]);
    sinew_vk_buffer_destroy(ctx, &d->own);
    sinew_vk_buffer_destroy(ctx, &d->readback);
    sinew_host_api host = d->host;
    sinew_host_free(&host, d);
}

sinew_result vk_pbd_device_create(sinew_vk_context* ctx, const sinew_host_api* host,
                                  const ps_model* m, pbd_sim* sim, const pbd_params* p,
                                  uint32_t ring, vk_pbd_device** out)
{
    *out = NULL;
    vk_pbd_device* d = sinew_host_calloc(host, 1, sizeof *d);
    if (!d) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "vk-pbd: out of memory");
    d->ctx = ctx;
    d->host = *host;
    d->m = m;
    d->sim = sim;
    d->con = pbd_sim_constraints(sim);
    d->contacts = pbd_sim_contacts(sim);
    d->iterations = p->iterations;
    d->ring = ring ? ring : 1u;
    d->bound_pipe = -1;
    push_defaults(d, p);
    sinew_result r = make_layout(d);
    if (r == SINEW_OK) r = make_state(d);
    if (r == SINEW_OK) r = make_constraints(d);
    if (r == SINEW_OK) r = make_contacts(d);
    if (r == SINEW_OK) r = make_surface(d);
    if (r == SINEW_OK) r = make_readback(d);
    if (r == SINEW_OK) r = make_pipelines(d);
    if (r == SINEW_OK) r = make_objects(d);
    if (r != SINEW_OK) {
        vk_pbd_device_destroy(d);
        return r;
    }
    *out = d;
    return SINEW_OK;
}

/* ---- recording ---- */

/* Every dispatch and copy of a step reads what the one before it wrote. */
static void barrier(VkCommandBuffer cmd)
{
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                       VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    vkCmdPipelineBarrier(cmd, stages, stages, 0, 1, &mb, 0, NULL, 0, NULL);
}

/* One dispatch of stage p over `threads` with the current push constants, then a barrier. */
static void dispatch(vk_pbd_device* d, int p, uint32_t threads)
{
    if (threads == 0) return;
    if (d->bound_pipe != p) {
        vkCmdBindPipeline(d->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, d->pipes[p]);
        d->bound_pipe = p;
    }
    vkCmdPushConstants(d->cmd, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof d->push, &d->push);
    vkCmdDispatch(d->cmd, (threads + GROUP_SIZE - 1u) / GROUP_SIZE, 1, 1);
    barrier(d->cmd);
}

sinew_result vk_pbd_device_wait(vk_pbd_device* d)
{
    if (!d->in_flight) return SINEW_OK;
    VkResult vr = vkWaitForFences(d->ctx->device, 1, &d->fence, VK_TRUE, UINT64_MAX);
    if (vr != VK_SUCCESS) return sinew_vk_fail(d->ctx, vr, "vkWaitForFences (vk-pbd)");
    d->in_flight = false;
    uint32_t* status = (uint32_t*)d->buf[B_STATUS].mapped;
    if (status[0] == 0u) return SINEW_OK;
    status[0] = 0u;
    return sinew_host_fail(&d->host, SINEW_ERROR_BACKEND_FAILED,
                           "vk-pbd: a step produced a non-finite position; the shape before it "
                           "is kept and the velocities are cleared");
}

/* Points the output pair of the descriptor set at `t` (nothing may be recorded or in flight). */
static void set_target(vk_pbd_device* d, vk_pbd_target t)
{
    if (t.buffer == d->target.buffer && t.pos == d->target.pos && t.nrm == d->target.nrm) return;
    VkDeviceSize bytes = (VkDeviceSize)d->m->render_count * 12u;
    VkDescriptorBufferInfo info[2] = {{t.buffer, t.pos, bytes ? bytes : 16u},
                                      {t.buffer, t.nrm, bytes ? bytes : 16u}};
    VkWriteDescriptorSet w[2];
    memset(w, 0, sizeof w);
    for (uint32_t i = 0; i < 2; ++i) {
        w[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        w[i].dstSet = d->set;
        w[i].dstBinding = B_OUT_POS + i;
        w[i].descriptorCount = 1;
        w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        w[i].pBufferInfo = &info[i];
    }
    vkUpdateDescriptorSets(d->ctx->device, 2, w, 0, NULL);
    d->target = t;
}

sinew_result vk_pbd_device_begin(vk_pbd_device* d, const vk_pbd_target* target)
{
    sinew_result r = vk_pbd_device_wait(d);
    if (r != SINEW_OK) return r;
    if (target) set_target(d, *target);
    VkResult vr = vkResetCommandBuffer(d->cmd, 0);
    VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if (vr == VK_SUCCESS) vr = vkBeginCommandBuffer(d->cmd, &begin);
    if (vr != VK_SUCCESS) return sinew_vk_fail(d->ctx, vr, "vkBeginCommandBuffer (vk-pbd)");
    vkCmdBindDescriptorSets(d->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, d->layout, 0, 1, &d->set, 0,
                            NULL);
    d->bound_pipe = -1;
    d->ring_used = 0;
    d->recording = true;
    return SINEW_OK;
}

sinew_result vk_pbd_device_submit(vk_pbd_device* d, sinew_vk_output* wait_output,
                                  uint64_t wait_read)
{
    sinew_vk_context* ctx = d->ctx;
    d->recording = false;
    sinew_vk_cmd_results_barrier(ctx, d->cmd,
                                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
                                     VK_PIPELINE_STAGE_TRANSFER_BIT,
                                 VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    sinew_result r = sinew_vk_submit_compute(ctx, d->cmd, d->fence, wait_output, wait_read, "vk-pbd");
    if (r != SINEW_OK) return r;
    d->in_flight = true;
    return SINEW_OK;
}

/* The host's part of a step: the targets of the fixed particles and the contact planes of
 * the step's pose into the ring's next slot (pbd_sim_targets places them as pbd does). */
static void upload_step(vk_pbd_device* d)
{
    size_t N3 = 3u * (size_t)d->push.N;
    const double* t = pbd_sim_targets(d->sim);
    float* dst = (float*)d->buf[B_TARGET].mapped + (size_t)d->ring_used * N3;
    for (size_t k = 0; k < N3; ++k) dst[k] = (float)t[k];
    d->push.target_at = (uint32_t)((size_t)d->ring_used * N3);
    d->push.plane_at = 2u * d->ring_used * d->plane_count;
    if (d->contacts)
        ps_collide_planes(d->contacts, (float*)d->buf[B_C_PLANE].mapped +
                                           (size_t)d->ring_used * 8u * d->plane_count);
    d->ring_used++;
}

/* The coloured sweeps (Sec. 4): one dispatch per colour, the contacts after each sweep. */
static void record_sweeps(vk_pbd_device* d)
{
    const pbd_constraints* c = d->con;
    for (uint32_t it = 0; it < d->iterations; ++it) {
        for (uint32_t q = 0; q < c->colour_count; ++q) {
            d->push.first_s = c->stretch_offsets[q];
            d->push.count_s = c->stretch_offsets[q + 1u] - c->stretch_offsets[q];
            d->push.first_v = c->volume_offsets[q];
            d->push.count_v = c->volume_offsets[q + 1u] - c->volume_offsets[q];
            d->push.first_b = c->volume_count + c->bending_offsets[q];
            d->push.count_b = c->bending_offsets[q + 1u] - c->bending_offsets[q];
            dispatch(d, P_COLOUR, d->push.count_s + d->push.count_v + d->push.count_b);
        }
        if (d->contacts) dispatch(d, P_CONTACTS, d->push.contacts);
    }
}

sinew_result vk_pbd_device_step(vk_pbd_device* d)
{
    if (d->ring_used == d->ring) { /* the ring is full: run what is recorded first */
        sinew_result r = vk_pbd_device_submit(d, NULL, 0);
        if (r == SINEW_OK) r = vk_pbd_device_begin(d, NULL);
        if (r != SINEW_OK) return r;
    }
    upload_step(d);
    uint32_t N = d->push.N;
    /* XPBD: the multipliers start from zero each step (Macklin et al. 2016, Alg. 1) */
    vkCmdFillBuffer(d->cmd, d->buf[B_LAMBDA].buffer, 0, VK_WHOLE_SIZE, 0u);
    barrier(d->cmd);
    dispatch(d, P_PREDICT, N);
    record_sweeps(d);
    dispatch(d, P_VELOCITY, 3u * N);
    dispatch(d, P_UNDO, 3u * N);
    return SINEW_OK;
}

void vk_pbd_device_clear_velocities(vk_pbd_device* d)
{
    vkCmdFillBuffer(d->cmd, d->buf[B_V].buffer, 0, VK_WHOLE_SIZE, 0u);
    barrier(d->cmd);
}

void vk_pbd_device_keep_skin(vk_pbd_device* d)
{
    VkDeviceSize n = (VkDeviceSize)d->push.n * 4u, N = (VkDeviceSize)d->push.N * 4u;
    VkBufferCopy regions[3] = {{0, 0, n}, {N, n, n}, {2u * N, 2u * n, n}};
    if (n) vkCmdCopyBuffer(d->cmd, d->buf[B_X].buffer, d->buf[B_BLEND].buffer, 3, regions);
    barrier(d->cmd);
}

void vk_pbd_device_upsample(vk_pbd_device* d, bool blend, float fraction)
{
    const float* skinning = pbd_sim_skinning(d->sim);
    memcpy(d->buf[B_SKINNING].mapped, skinning, (size_t)d->m->joint_count * 64u);
    uint32_t flags = d->push.flags;
    d->push.flags = (flags & ~PBD_BLEND) | (blend ? PBD_BLEND : 0u);
    d->push.fraction = fraction;
    dispatch(d, P_NORMALS, d->push.n);
    dispatch(d, P_UPSAMPLE, d->push.render);
    d->push.flags = flags;
}

/* ---- the host's copies ---- */

sinew_result vk_pbd_device_read_render(vk_pbd_device* d, bool blend, float fraction,
                                       float* positions, size_t position_stride,
                                       float* normals, size_t normal_stride)
{
    vk_pbd_target own = {d->own.buffer, 0, d->own_nrm};
    sinew_result r = vk_pbd_device_begin(d, &own);
    if (r != SINEW_OK) return r;
    vk_pbd_device_upsample(d, blend, fraction);
    r = vk_pbd_device_submit(d, NULL, 0);
    if (r == SINEW_OK) r = vk_pbd_device_wait(d);
    if (r != SINEW_OK) return r;
    const float* pos = (const float*)d->own.mapped;
    const float* nrm = (const float*)((const char*)d->own.mapped + d->own_nrm);
    for (uint32_t i = 0; i < d->m->render_count; ++i) {
        if (positions) memcpy((char*)positions + position_stride * i, pos + 3u * i, 12u);
        if (normals) memcpy((char*)normals + normal_stride * i, nrm + 3u * i, 12u);
    }
    return SINEW_OK;
}

typedef struct copy_job {
    VkBuffer x, v, dst;
    VkDeviceSize bytes;
} copy_job;

static void record_state_copy(VkCommandBuffer cmd, void* user)
{
    const copy_job* j = user;
    VkBufferCopy to_x = {0, 0, j->bytes}, to_v = {0, j->bytes, j->bytes};
    vkCmdCopyBuffer(cmd, j->x, j->dst, 1, &to_x);
    vkCmdCopyBuffer(cmd, j->v, j->dst, 1, &to_v);
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                         &mb, 0, NULL, 0, NULL);
}

sinew_result vk_pbd_device_read_state(vk_pbd_device* d, float* x, float* v)
{
    sinew_result r = vk_pbd_device_wait(d);
    if (r != SINEW_OK) return r;
    VkDeviceSize bytes = 3u * (VkDeviceSize)d->push.N * 4u;
    copy_job job = {d->buf[B_X].buffer, d->buf[B_V].buffer, d->readback.buffer, bytes};
    r = sinew_vk_context_submit_wait(d->ctx, record_state_copy, &job);
    if (r != SINEW_OK) return r;
    if (x) memcpy(x, d->readback.mapped, bytes);
    if (v) memcpy(v, (const char*)d->readback.mapped + bytes, bytes);
    return SINEW_OK;
}

sinew_result vk_pbd_device_set_skin(vk_pbd_device* d, const float* positions,
                                    const float* velocities)
{
    uint32_t n = d->push.n, N = d->push.N;
    float* column = sinew_host_calloc(&d->host, n ? n : 1u, sizeof(float));
    sinew_result r = column ? vk_pbd_device_wait(d) : oom(d);
    for (int c = 0; r == SINEW_OK && c < 6; ++c) {
        const float* from = c < 3 ? positions : velocities;
        for (uint32_t i = 0; i < n; ++i) column[i] = from ? from[3u * i + c % 3] : 0.0f;
        r = sinew_vk_buffer_upload(d->ctx, &d->buf[c < 3 ? B_X : B_V],
                                   (VkDeviceSize)(c % 3) * N * 4u, column, (VkDeviceSize)n * 4u);
    }
    sinew_host_free(&d->host, column);
    return r;
}

vk_pbd_target vk_pbd_device_own_target(const vk_pbd_device* d)
{
    vk_pbd_target own = {d->own.buffer, 0, d->own_nrm};
    return own;
}
