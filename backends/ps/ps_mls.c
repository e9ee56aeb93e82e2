/* MLS upsampling of the simulated skin and the bake blob that carries its weights (ps_mls.h).
 * SPDX-License-Identifier: MIT */
#include <string.h>
#include <sinew/sinew_host.h>

#include "ps_mls.h"

ps_upsampling ps_upsampling_resolve(ps_upsampling requested, const ps_model* model)
{
    if (requested != PS_UPSAMPLING_AUTO) return requested;
    /* restore records exist exactly when the simulated surface is not the render mesh. */
    return model->restore ? PS_UPSAMPLING_MLS : PS_UPSAMPLING_NORMAL;
}

sinew_result ps_mls_bake(const sinew_host_api* host, const sinew_rig_view* rig,
                          const ps_model* model, sinew_mls_weights* out)
{
    memset(out, 0, sizeof *out);
    uint32_t n = model->n;
    float* rest = (float*)sinew_host_calloc(host, n, 12u);
    if (!rest) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "MLS weights: out of memory");
    /* The skin layer of the tissue rest positions: the first n of the 2n tissue vertices. */
    for (size_t k = 0; k < 3u * (size_t)n; ++k) rest[k] = (float)model->rest[k];
    sinew_mesh_view sim;
    memset(&sim, 0, sizeof sim);
    sim.vertex_count = n;
    sim.triangle_count = model->triangle_count;
    sim.positions = rest;
    sim.normals = NULL; /* area-weighted, as the per-frame normals are */
    sim.indices = model->triangles;
    sinew_result r = sinew_mls_bake(host, &sim, &rig->render_mesh, out);
    sinew_host_free(host, rest);
    return r;
}

sinew_result ps_mls_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                            ps_model* model, int requested, bool has_mls,
                            sinew_mls_weights* mls)
{
    if (ps_upsampling_resolve((ps_upsampling)requested, model) != PS_UPSAMPLING_MLS) {
        sinew_mls_free(host, mls);
        return SINEW_OK;
    }
    if (has_mls) return SINEW_OK;
    double t0 = ps_seconds();
    sinew_result r = ps_mls_bake(host, rig, model, mls);
    model->build_seconds[PS_BUILD_MLS] = ps_seconds() - t0;
    return r;
}

/* ---- bake blob ---- */

typedef struct mem_sink {
    const sinew_host_api* host;
    uint8_t* data;
    size_t size, capacity;
    bool failed;
} mem_sink;

static sinew_result mem_write(const void* data, size_t size, void* user)
{
    mem_sink* s = (mem_sink*)user;
    if (s->failed) return SINEW_ERROR_OUT_OF_MEMORY;
    if (size > s->capacity - s->size) {
        size_t cap = s->capacity ? s->capacity : 1u << 16;
        while (cap - s->size < size) {
            if (cap > ((size_t)-1) / 2u) {
                s->failed = true;
                return SINEW_ERROR_OUT_OF_MEMORY;
            }
            cap *= 2u;
        }
        uint8_t* grown = (uint8_t*)sinew_host_alloc(s->host, cap);
        if (!grown) {
            s->failed = true;
            return SINEW_ERROR_OUT_OF_MEMORY;
        }
        if (s->size) memcpy(grown, s->data, s->size);
        sinew_host_free(s->host, s->data);
        s->data = grown;
        s->capacity = cap;
    }
    memcpy(s->data + s->size, data, size);
    s->size += size;
    return SINEW_OK;
}

static void put_u32(uint8_t* p, uint32_t v)
{
    for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t* p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

sinew_result ps_bake_write_mls(const sinew_host_api* host, const sinew_rig_view* rig,
                            const ps_model* model, const sinew_mls_weights* mls,
                            const sinew_bake_writer* writer)
{
    mem_sink sink = {host, NULL, 0, 0, false};
    sinew_bake_writer mem = {mem_write, &sink};
    sinew_result r = ps_bake_write(host, rig, model, &mem);
    if (r != SINEW_OK) {
        sinew_host_free(host, sink.data);
        return r;
    }
    uint8_t head[20];
    put_u32(head, PS_BAKE_MLS_MAGIC);
    put_u32(head + 4, PS_BAKE_MLS_VERSION);
    put_u32(head + 8, (uint32_t)(sink.size & 0xffffffffu));
    put_u32(head + 12, (uint32_t)((uint64_t)sink.size >> 32));
    put_u32(head + 16, mls && mls->indices ? 1u : 0u);
    r = writer->write(head, 16, writer->user);
    if (r == SINEW_OK) r = writer->write(sink.data, sink.size, writer->user);
    if (r == SINEW_OK) r = writer->write(head + 16, 4, writer->user);
    sinew_host_free(host, sink.data);
    if (r != SINEW_OK)
        return sinew_host_fail(host, r, "tissue bake: the writer refused the model blob");
    if (!(mls && mls->indices)) return SINEW_OK;
    size_t size = sinew_mls_blob_size(mls);
    uint8_t* blob = (uint8_t*)sinew_host_alloc(host, size);
    if (!blob) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "tissue bake: out of memory");
    r = sinew_mls_write(host, mls, blob, size);
    if (r == SINEW_OK) {
        r = writer->write(blob, size, writer->user);
        if (r != SINEW_OK)
            sinew_host_fail(host, r, "tissue bake: the writer refused %zu bytes of MLS weights", size);
    }
    sinew_host_free(host, blob);
    return r;
}

/* The model's blob and the weights' blob of ps_bake_read_mls, restored at once: they lie in
 * separate bytes and share nothing, and the weights' checksum is a serial pass over them. */
typedef struct blob_halves {
    const sinew_host_api* host;
    sinew_host_api quiet; /* the host without its logger, for the weights' job */
    const sinew_rig_view* rig;
    const uint8_t* model_blob;
    size_t model_size;
    const uint8_t* mls_blob;
    size_t mls_size;
    ps_model* model;
    sinew_mls_weights* mls;
    sinew_result result[2];
} blob_halves;

/* Job 0 restores the model, job 1 the weights (silently, see read_model_and_weights), which
 * stay in the rig's blob: it is valid for the instance's lifetime (sinew_plugin.h). */
static void read_halves(void* data, uint32_t begin, uint32_t end)
{
    blob_halves* h = (blob_halves*)data;
    for (uint32_t k = begin; k < end; ++k)
        h->result[k] = k == 0 ? ps_bake_read(h->host, h->rig, h->model_blob, h->model_size,
                                             h->model)
                              : sinew_mls_read_in_place(&h->quiet, h->mls_blob, h->mls_size,
                                                        NULL, h->mls);
}

/* Both halves over the job system. On failure neither is kept, and the one line logged is the
 * one a serial read logs: the model's failure, else the weights' (read again with the
 * logger). */
static sinew_result read_model_and_weights(blob_halves* h)
{
    h->quiet = *h->host;
    h->quiet.logger.func = NULL;
    sinew_host_parallel_for(h->host, read_halves, h, 2u, 1u);
    if (h->result[0] != SINEW_OK) {
        sinew_mls_free(h->host, h->mls);
        return h->result[0];
    }
    if (h->result[1] == SINEW_OK) return SINEW_OK;
    ps_model_free(h->host, h->model);
    sinew_result r = sinew_mls_read_in_place(h->host, h->mls_blob, h->mls_size, NULL, h->mls);
    if (r == SINEW_OK) { /* memory that ran out in the job is back: still a failure */
        sinew_mls_free(h->host, h->mls);
        r = sinew_host_fail(h->host, h->result[1], "tissue bake: out of memory for the MLS "
                            "weights");
    }
    return r;
}

sinew_result ps_bake_read_mls(const sinew_host_api* host, const sinew_rig_view* rig,
                           const void* data, size_t size, ps_model* model,
                           sinew_mls_weights* mls, bool* has_mls)
{
    *has_mls = false;
    memset(mls, 0, sizeof *mls);
    const uint8_t* p = (const uint8_t*)data;
    if (!p || size < 4u || get_u32(p) != PS_BAKE_MLS_MAGIC)
        return ps_bake_read(host, rig, data, size, model); /* ps's blob alone */
    if (size < 16u)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "tissue bake: the blob ends inside its header (%zu bytes)", size);
    uint32_t version = get_u32(p + 4);
    if (version != PS_BAKE_MLS_VERSION)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "tissue bake: version %u, this build reads version %u", version,
                               PS_BAKE_MLS_VERSION);
    uint64_t model_size = (uint64_t)get_u32(p + 8) | (uint64_t)get_u32(p + 12) << 32;
    if (model_size > size - 16u || size - 16u - model_size < 4u)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "tissue bake: a model of %llu bytes does not fit a blob of %zu",
                               (unsigned long long)model_size, size);
    const uint8_t* rest = p + 16u + model_size;
    size_t rest_size = size - 16u - (size_t)model_size;
    uint32_t flag = get_u32(rest);
    if (flag > 1u)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "tissue bake: MLS flag %u is neither 0 nor 1", flag);
    if (flag == 0u && rest_size != 4u)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "tissue bake: %zu bytes follow the blob", rest_size - 4u);
    if (flag == 0u) return ps_bake_read(host, rig, p + 16u, (size_t)model_size, model);
    blob_halves h;
    memset(&h, 0, sizeof h);
    h.host = host;
    h.rig = rig;
    h.model_blob = p + 16u;
    h.model_size = (size_t)model_size;
    h.mls_blob = rest + 4u;
    h.mls_size = rest_size - 4u;
    h.model = model;
    h.mls = mls;
    sinew_result r = read_model_and_weights(&h);
    if (r != SINEW_OK) return r;
    if (mls->simulation_count != model->n || mls->render_count != rig->render_mesh.vertex_count) {
        r = sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                            "tissue bake: MLS weights for %u -> %u vertices, the model has %u -> %u",
                            mls->simulation_count, mls->render_count, model->n,
                            rig->render_mesh.vertex_count);
        sinew_mls_free(host, mls);
        ps_model_free(host, model);
        return r;
    }
    *has_mls = true;
    return SINEW_OK;
}

void ps_mls_upsample_skin(const sinew_host_api* host, const ps_model* m,
                          const sinew_mls_weights* mls, const float* blend_from,
                          float blend_fraction, float* skin_f, float* skin_n,
                          const float* skinning, float* positions, size_t position_stride,
                          float* normals, size_t normal_stride)
{
    if (blend_from) sinew_step_blend(blend_from, skin_f, 3u * m->n, blend_fraction, skin_f);
    ps_skin_normals(host, m, skin_f, skin_n);
    if (mls) {
        /* 2019 eq. 8: positions as weighted sums; normals by linear MLS of the skin's normals.
         * The inputs are finite (the step checked them), so apply cannot refuse them. */
        sinew_mls_apply(host, mls, m->n, skin_f, normals ? skin_n : NULL, positions,
                        position_stride, normals, normal_stride);
    } else {
        ps_upsample_render(host, m, skin_f, skin_n, skinning, positions, position_stride,
                           normals, normal_stride);
    }
}

/* Row of skin vertex i in the simulation's arrays. */
static inline uint32_t row_of(const uint32_t* inv, uint32_t i)
{
    return inv ? inv[i] : i;
}

void ps_mls_render_velocities(const sinew_host_api* host, const ps_model* m,
                              const sinew_mls_weights* mls, const double* v, uint32_t N,
                              const uint32_t* inv, float* skin_f, float* velocities)
{
    if (mls) {
        /* The MLS weights reproduce affine fields, so they carry velocities as positions. */
        for (uint32_t i = 0; i < m->n; ++i)
            for (int c = 0; c < 3; ++c)
                skin_f[3u * i + c] = (float)v[(size_t)c * N + row_of(inv, i)];
        sinew_mls_apply(host, mls, m->n, skin_f, NULL, velocities, 12u, NULL, 0u);
        return;
    }
    for (uint32_t r = 0; r < m->render_count; ++r) {
        const ps_upsample* u = &m->upsample[r];
        for (int c = 0; c < 3; ++c) {
            const double* vc = v + (size_t)c * N;
            double val;
            if (u->triangle == PS_NONE) {
                val = vc[row_of(inv, u->vertex)];
            } else {
                const uint32_t* t = m->triangles + 3u * u->triangle;
                val = u->bary[0] * vc[row_of(inv, t[0])] + u->bary[1] * vc[row_of(inv, t[1])] +
                      u->bary[2] * vc[row_of(inv, t[2])];
            }
            velocities[3u * r + c] = (float)val;
        }
    }
}
