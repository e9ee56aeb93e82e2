/* The render mesh as a normal displacement of the simulated surface (projective skinning
 * Sec. 6, after Botsch et al. 2010): each render vertex is the closest point of the rest
 * simulation surface plus an offset along the interpolated normal there. The offset is kept
 * in the full frame (tangent, bitangent, normal) of that point, so that the rest pose gives the
 * render mesh back exactly even where the offset is not quite parallel to the interpolated
 * normal; the tangential parts are small. SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "ps_internal.h"

typedef struct upsample_ctx {
    const ps_model* m;
    const ps_grid* grid;
    const float* skin;    /* rest skin positions, float */
    const float* normals; /* rest skin vertex normals */
    const float* render_positions;
    const float* render_normals;
    /* restore: render triangles and the grid over them */
    const ps_grid* render_grid;
    const float* render_f;
    const uint32_t* render_indices;
    /* the render grid's build, in the job beside the upsampling records (closest_items) */
    const sinew_host_api* host;
    const sinew_mesh_view* render;
    double* render_d;
    ps_grid* building;
    sinew_result built;
    uint32_t items;
    atomic_uint next_item; /* the next item a job of closest_jobs takes */
} upsample_ctx;

static inline float dot3f(const float a[3], const float b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* Fills a record for the point at `bary` of skin triangle `tri` so that it reproduces
 * position x and normal nr at rest. */
static void make_record(const upsample_ctx* c, uint32_t tri, const float bary[3], const float x[3],
                        const float nr[3], ps_upsample* out)
{
    const uint32_t* t = c->m->triangles + 3u * tri;
    float p[3], tg[3], bt[3], nn[3];
    ps_surface_frame(c->skin + 3u * t[0], c->skin + 3u * t[1], c->skin + 3u * t[2],
                     c->normals + 3u * t[0], c->normals + 3u * t[1], c->normals + 3u * t[2], bary,
                     p, tg, bt, nn);
    float d[3] = {x[0] - p[0], x[1] - p[1], x[2] - p[2]};
    out->triangle = tri;
    out->vertex = 0;
    memcpy(out->bary, bary, sizeof out->bary);
    out->offset[0] = dot3f(d, tg);
    out->offset[1] = dot3f(d, bt);
    out->offset[2] = dot3f(d, nn);
    out->normal[0] = dot3f(nr, tg);
    out->normal[1] = dot3f(nr, bt);
    out->normal[2] = dot3f(nr, nn);
}

static void upsample_range(void* data, uint32_t begin, uint32_t end)
{
    const upsample_ctx* c = (const upsample_ctx*)data;
    for (uint32_t r = begin; r < end; ++r) {
        const float* x = c->render_positions + 3u * r;
        const float* nr = c->render_normals + 3u * r;
        double p[3] = {x[0], x[1], x[2]}, q[3], bary[3];
        uint32_t tri = ps_grid_closest(c->grid, p, q, bary);
        ps_upsample* out = &c->m->upsample[r];
        if (tri == PS_NONE) { /* a simulated surface without triangles: closest vertex */
            double best = -1.0;
            uint32_t bi = 0;
            for (uint32_t i = 0; i < c->m->n; ++i) {
                const double* s = c->m->rest + 3u * i;
                double d = (s[0] - p[0]) * (s[0] - p[0]) + (s[1] - p[1]) * (s[1] - p[1]) +
                           (s[2] - p[2]) * (s[2] - p[2]);
                if (best < 0.0 || d < best) best = d, bi = i;
            }
            out->triangle = PS_NONE;
            out->vertex = bi;
            memset(out->bary, 0, sizeof out->bary);
            for (int k = 0; k < 3; ++k) out->offset[k] = x[k] - c->skin[3u * bi + k];
            memcpy(out->normal, nr, sizeof out->normal);
            continue;
        }
        float b[3] = {(float)bary[0], (float)bary[1], (float)bary[2]};
        make_record(c, tri, b, x, nr, out);
    }
}

static void restore_range(void* data, uint32_t begin, uint32_t end)
{
    const upsample_ctx* c = (const upsample_ctx*)data;
    static const float zero[3] = {0.0f, 0.0f, 0.0f};
    for (uint32_t i = begin; i < end; ++i) {
        const double* p = c->m->rest + 3u * i;
        double q[3], bary[3];
        uint32_t tri = ps_grid_closest(c->render_grid, p, q, bary);
        ps_restore* out = &c->m->restore[i];
        out->triangle = tri;
        float b[3] = {(float)bary[0], (float)bary[1], (float)bary[2]};
        const uint32_t* t = c->render_indices + 3u * tri;
        float fp[3], tg[3], bt[3], nn[3];
        ps_surface_frame(c->render_f + 3u * t[0], c->render_f + 3u * t[1],
                         c->render_f + 3u * t[2], zero, zero, zero, b, fp, tg, bt, nn);
        float d[3] = {(float)p[0] - fp[0], (float)p[1] - fp[1], (float)p[2] - fp[2]};
        memcpy(out->bary, b, sizeof b);
        out->offset[0] = dot3f(d, tg);
        out->offset[1] = dot3f(d, bt);
        out->offset[2] = dot3f(d, nn);
    }
}

/* The render mesh is simulated itself: each vertex is a corner of a skin triangle
 * around its welded vertex (barycentric 1 reproduces it bit for bit). */
static void upsample_welded(const upsample_ctx* c, const sinew_mesh_view* render)
{
    const ps_model* m = c->m;
    for (uint32_t v = 0; v < render->vertex_count; ++v) {
        uint32_t i = m->weld[v];
        ps_upsample* out = &m->upsample[v];
        const float* x = render->positions + 3u * v;
        const float* nr = render->normals + 3u * v;
        if (m->vertex_tri_offsets[i] == m->vertex_tri_offsets[i + 1]) {
            out->triangle = PS_NONE;
            out->vertex = i;
            for (int k = 0; k < 3; ++k) out->offset[k] = x[k] - c->skin[3u * i + k];
            memcpy(out->normal, nr, sizeof out->normal);
            continue;
        }
        uint32_t tri = m->vertex_tris[m->vertex_tri_offsets[i]];
        float b[3] = {0.0f, 0.0f, 0.0f};
        for (int k = 0; k < 3; ++k)
            if (m->triangles[3u * tri + k] == i) b[k] = 1.0f;
        make_record(c, tri, b, x, nr, out);
    }
}

/* Render vertices per job of the upsampling records. */
#define PS_UPSAMPLE_CHUNK 256u

/* Item 0 builds the grid over the render triangles for the way back (build_restore), item
 * k > 0 makes the upsampling records of chunk k - 1 of the render vertices meanwhile. Each job
 * takes items from the shared counter until none is left, so that a thread slowed by other
 * work does not leave the others idle at the end of a fixed range. */
static void closest_jobs(void* data, uint32_t begin, uint32_t end)
{
    (void)begin;
    (void)end;
    upsample_ctx* c = (upsample_ctx*)data;
    for (;;) {
        uint32_t item = atomic_fetch_add_explicit(&c->next_item, 1u, memory_order_relaxed);
        if (item >= c->items) break;
        if (item == 0) {
            const sinew_mesh_view* render = c->render;
            for (size_t k = 0; k < 3u * (size_t)render->vertex_count; ++k)
                c->render_d[k] = render->positions[k];
            c->built = ps_grid_build(c->host, c->render_d, render->vertex_count, render->indices,
                                     render->triangle_count, c->building);
            continue;
        }
        uint32_t r0 = (item - 1u) * PS_UPSAMPLE_CHUNK, rc = c->m->render_count;
        upsample_range(data, r0, rc - r0 < PS_UPSAMPLE_CHUNK ? rc : r0 + PS_UPSAMPLE_CHUNK);
    }
}

/* Each render vertex of a separate simulation mesh from the closest point of the rest skin,
 * found through a grid over the skin triangles; the render grid for build_restore is built
 * beside them into *rgrid (c->built its result). */
static sinew_result upsample_closest(const sinew_host_api* host, upsample_ctx* c, uint32_t rc,
                                     ps_grid* rgrid)
{
    const ps_model* m = c->m;
    ps_grid grid;
    sinew_result r = ps_grid_build(host, m->rest, m->n, m->triangles, m->triangle_count, &grid);
    if (r != SINEW_OK)
        return sinew_host_fail(host, r, "ps: out of memory for the upsampling grid");
    c->grid = &grid;
    c->building = rgrid;
    c->built = SINEW_ERROR_OUT_OF_MEMORY;
    c->items = 1u + (rc + PS_UPSAMPLE_CHUNK - 1u) / PS_UPSAMPLE_CHUNK;
    atomic_init(&c->next_item, 0u);
    uint32_t jobs = host->jobs.thread_count ? host->jobs.thread_count : 1u;
    sinew_host_parallel_for(host, closest_jobs, c, jobs < c->items ? jobs : c->items, 1u);
    ps_grid_free(host, &grid);
    c->grid = NULL;
    return SINEW_OK;
}

/* A separate simulation mesh must cover the render mesh: a render vertex far from the
 * simulated surface would swing its offset through the body. GEOMETRY with one line when one
 * lies more than PS_COVER_DISTANCE of the simulated skin's diagonal away. */
static sinew_result check_cover(const sinew_host_api* host, const ps_model* m)
{
    double worst = 0.0;
    uint32_t far = 0, count = 0;
    for (uint32_t r = 0; r < m->render_count; ++r) {
        const float* o = m->upsample[r].offset;
        double d = sqrt((double)o[0] * o[0] + (double)o[1] * o[1] + (double)o[2] * o[2]);
        if (!(d <= PS_COVER_DISTANCE * m->diagonal)) ++count;
        if (!(d <= worst)) worst = d, far = r;
    }
    if (count == 0) return SINEW_OK;
    return sinew_host_fail(host, SINEW_ERROR_GEOMETRY,
                           "ps: the simulation mesh does not cover the render mesh: %u render "
                           "vertices lie more than %g of its size from it (vertex %u at %g, "
                           "its size %g)", count, PS_COVER_DISTANCE, far, worst, m->diagonal);
}

/* The way back, for set_state: each skin vertex on the render surface, through the render grid
 * built beside the upsampling records (c->built). */
static sinew_result build_restore(const sinew_host_api* host, ps_model* m, upsample_ctx* c,
                                  const sinew_mesh_view* render, ps_grid* rgrid)
{
    uint32_t n = m->n;
    if (c->built != SINEW_OK)
        return sinew_host_fail(host, c->built, "ps: out of memory for the render grid");
    m->restore = (ps_restore*)sinew_host_calloc(host, n ? n : 1u, sizeof(ps_restore));
    if (!m->restore) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
    c->render_grid = rgrid;
    c->render_f = render->positions;
    c->render_indices = render->indices;
    if (render->triangle_count > 0) {
        sinew_host_parallel_for(host, restore_range, c, n, 256u);
    } else {
        /* no render triangles: restore from the closest render vertex (a point triangle) */
        for (uint32_t i = 0; i < n; ++i) m->restore[i].triangle = PS_NONE;
    }
    c->render_grid = NULL;
    return SINEW_OK;
}

sinew_result ps_upsample_build(const sinew_host_api* host, const sinew_rig_view* rig,
                               ps_model* m)
{
    const sinew_mesh_view* render = &rig->render_mesh;
    uint32_t n = m->n, rc = render->vertex_count;
    m->render_count = rc;
    m->upsample = (ps_upsample*)sinew_host_calloc(host, rc, sizeof(ps_upsample));
    float* skin = (float*)sinew_host_calloc(host, n ? n : 1u, 3u * sizeof(float));
    float* normals = (float*)sinew_host_calloc(host, n ? n : 1u, 3u * sizeof(float));
    sinew_result r = SINEW_OK;
    if (!m->upsample || !skin || !normals) {
        r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory for upsampling");
    } else {
        for (size_t k = 0; k < 3u * (size_t)n; ++k) skin[k] = (float)m->rest[k];
        for (uint32_t i = 0; i < n; ++i) ps_vertex_normal(m, skin, i, normals + 3u * i);
        upsample_ctx ctx;
        memset(&ctx, 0, sizeof ctx);
        ctx.m = m;
        ctx.skin = skin;
        ctx.normals = normals;
        ctx.render_positions = render->positions;
        ctx.render_normals = render->normals;
        if (rig->simulation_mesh.vertex_count == 0) {
            upsample_welded(&ctx, render);
        } else {
            /* The render positions in double for the render grid (build_restore). */
            ctx.host = host;
            ctx.render = render;
            ctx.render_d =
                (double*)sinew_host_alloc(host, (rc ? 3u * (size_t)rc : 1u) * sizeof(double));
            ps_grid rgrid;
            memset(&rgrid, 0, sizeof rgrid);
            if (!ctx.render_d)
                r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory");
            if (r == SINEW_OK) r = upsample_closest(host, &ctx, rc, &rgrid);
            if (r == SINEW_OK) r = check_cover(host, m);
            if (r == SINEW_OK) r = build_restore(host, m, &ctx, render, &rgrid);
            ps_grid_free(host, &rgrid);
            sinew_host_free(host, ctx.render_d);
        }
    }
    sinew_host_free(host, skin);
    sinew_host_free(host, normals);
    return r;
}

void ps_upsample_vertex(const ps_model* m, const float* skin_f, const float* skin_n,
                        const float* skinning, uint32_t r, float pos[3], float nrm[3])
{
    const ps_upsample* u = &m->upsample[r];
    if (u->triangle == PS_NONE) {
        /* No triangle around it: rigid with its skin vertex's bone. */
        const float* T = skinning + 16u * m->bones[m->vertex_bone[u->vertex]].joint;
        const float* x = skin_f + 3u * u->vertex;
        for (int k = 0; k < 3; ++k) {
            pos[k] = x[k] + T[k] * u->offset[0] + T[4 + k] * u->offset[1] + T[8 + k] * u->offset[2];
            nrm[k] = T[k] * u->normal[0] + T[4 + k] * u->normal[1] + T[8 + k] * u->normal[2];
        }
        static const float zero[3] = {0.0f, 0.0f, 0.0f};
        ps_normalize3f(nrm, zero);
    } else {
        const uint32_t* t = m->triangles + 3u * u->triangle;
        float p[3], tg[3], bt[3], nn[3];
        ps_surface_frame(skin_f + 3u * t[0], skin_f + 3u * t[1], skin_f + 3u * t[2],
                         skin_n + 3u * t[0], skin_n + 3u * t[1], skin_n + 3u * t[2], u->bary, p,
                         tg, bt, nn);
        for (int k = 0; k < 3; ++k) {
            pos[k] = p[k] + u->offset[0] * tg[k] + u->offset[1] * bt[k] + u->offset[2] * nn[k];
            nrm[k] = u->normal[0] * tg[k] + u->normal[1] * bt[k] + u->normal[2] * nn[k];
        }
    }
}

/* The job of ps_skin_normals and ps_upsample_render. */
typedef struct upsample_job {
    const ps_model* m;
    const float* skin_f;
    float* skin_n;
    const float* skinning;
    float* positions;
    size_t position_stride;
    float* normals;
    size_t normal_stride;
} upsample_job;

static void skin_normal_range(void* data, uint32_t begin, uint32_t end)
{
    const upsample_job* j = (const upsample_job*)data;
    for (uint32_t i = begin; i < end; ++i) ps_vertex_normal(j->m, j->skin_f, i, j->skin_n + 3u * i);
}

void ps_skin_normals(const sinew_host_api* host, const ps_model* m, const float* skin_f,
                     float* skin_n)
{
    upsample_job j = {m, skin_f, skin_n, NULL, NULL, 0u, NULL, 0u};
    sinew_host_parallel_for(host, skin_normal_range, &j, m->n, 1024u);
}

static inline float* at_stride(float* base, size_t stride, uint32_t i)
{
    return (float*)((char*)base + stride * i);
}

static void render_range(void* data, uint32_t begin, uint32_t end)
{
    const upsample_job* j = (const upsample_job*)data;
    for (uint32_t r = begin; r < end; ++r) {
        float pos[3], nrm[3];
        ps_upsample_vertex(j->m, j->skin_f, j->skin_n, j->skinning, r, pos, nrm);
        if (j->positions) memcpy(at_stride(j->positions, j->position_stride, r), pos, sizeof pos);
        if (j->normals) memcpy(at_stride(j->normals, j->normal_stride, r), nrm, sizeof nrm);
    }
}

void ps_upsample_render(const sinew_host_api* host, const ps_model* m, const float* skin_f,
                        const float* skin_n, const float* skinning, float* positions,
                        size_t position_stride, float* normals, size_t normal_stride)
{
    upsample_job j = {m,         skin_f,          (float*)skin_n, skinning,
                      positions, position_stride, normals,        normal_stride};
    sinew_host_parallel_for(host, render_range, &j, m->render_count, 1024u);
}

void ps_render_to_skin(const ps_model* m, const uint32_t* render_indices, const float* render,
                       float* skin, bool offsets)
{
    static const float zero[3] = {0.0f, 0.0f, 0.0f};
    if (!m->restore) {
        for (uint32_t v = m->render_count; v-- > 0;)
            memcpy(skin + 3u * m->weld[v], render + 3u * v, 12u);
        return;
    }
    for (uint32_t i = 0; i < m->n; ++i) {
        const ps_restore* rs = &m->restore[i];
        const uint32_t* t = render_indices + 3u * rs->triangle;
        if (!offsets) {
            for (int k = 0; k < 3; ++k)
                skin[3u * i + k] = rs->bary[0] * render[3u * t[0] + k] +
                                   rs->bary[1] * render[3u * t[1] + k] +
                                   rs->bary[2] * render[3u * t[2] + k];
            continue;
        }
        float p[3], tg[3], bt[3], nn[3];
        ps_surface_frame(render + 3u * t[0], render + 3u * t[1], render + 3u * t[2], zero, zero,
                         zero, rs->bary, p, tg, bt, nn);
        for (int k = 0; k < 3; ++k)
            skin[3u * i + k] = p[k] + rs->offset[0] * tg[k] + rs->offset[1] * bt[k] +
                               rs->offset[2] * nn[k];
    }
}
