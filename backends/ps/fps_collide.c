/* Global collisions of `fps` and `ps` (Komaritzan and Botsch 2019, Sec. 6): see fps_collide.h; the
 * arithmetic is in backends/common/fps_collide_kernels.h. SPDX-License-Identifier: MIT
 *
 * Neighbourhood: a skin vertex always lies on the prisms of its own triangles and, where the
 * skin curves, dips into those of its neighbours' triangles, so each vertex skips the prisms
 * of every triangle around it and around its one-ring neighbours; and the tissue of nearby
 * prisms already overlaps at rest in concave places (armpits, crotch), so every (vertex,
 * triangle) pair found inside at rest is skipped too: these are the same side's neighbours,
 * not a collision. */
#include <sinew/sinew_host.h>

#include "fps_collide.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fps_collide_kernels.h"
#include "sinew_spatial_hash.h"

/* Boxes spanning more cubes than this go to the hash's list of large boxes. */
#define FPS_COLLIDE_MAX_CELLS 512u

struct fps_collide {
    const sinew_host_api* host;
    const ps_model* m;
    uint32_t n, N, n_free, tri_count, tet_count;
    double weight, margin, retain, edge, cell;
    double* tri_sign;     /* per triangle */
    double* tri_rest;     /* FPS_COLLIDE_TRI_REST per triangle (fps_collide_behind) */
    double* skin_rest;    /* 3 per skin vertex */
    uint32_t* skin_bone;  /* n */
    uint8_t* bone_near;   /* bone_count^2 */
    uint32_t bone_count;
    int same_part;        /* desc.same_part: no body-part test */
    uint32_t* tets_r;     /* 4 per tet: rows of x */
    uint32_t* tris_r;     /* 3 per triangle: rows of x */
    uint32_t* skin_row;   /* n: row of x of each skin vertex */
    uint32_t* base_row;   /* n: row of x of the base vertex under each skin vertex */
    uint32_t* skip_ptr;   /* n + 1 */
    uint32_t* skip;
    int skip_borrowed;    /* 1: skip_ptr and skip are the model's (rest_skips) */
    double* boxes;        /* 6 per prism */
    sinew_spatial_hash hash;
    uint32_t* pair_tri;   /* per skin vertex: its pair's triangle or FPS_COLLIDE_NONE */
    uint32_t* next_tri;   /* the update's result */
    uint8_t* next_kept;   /* 1: retained only */
    /* the pair list in vertex order */
    uint32_t pair_count, pair_capacity;
    uint32_t* pair_v;     /* skin vertex (model numbering) */
    uint32_t* pair_row;   /* its row of x */
    uint32_t* pair_t;
    double* contrib;      /* 12 x pair_capacity */
    uint32_t* gather_ptr; /* n_free + 1 */
    uint32_t* gather;     /* 4 x pair_capacity */
    /* A_col */
    uint32_t* a_ptr;      /* n_free + 1 */
    uint32_t* a_col;
    double* a_val;
    uint32_t* t_ptr;      /* n_free + 1: triplets per row before merging */
    uint32_t* t_col;
    double* t_val;
    double* extra;        /* n_free x 3; fps_collide_point_targets' sums by skin vertex */
    uint32_t* pt_count;   /* n: pushes per skin vertex (fps_collide_point_targets) */
    uint32_t detected, retained;
    const double* x;      /* positions of the running update / rhs */
    size_t ldx;
    /* limb capsules (capsule_build); skinning NULL: none */
    const float* skinning;
    double* cap_frame;    /* CAP_FRAME per bone: its rest frame and active range */
    double* cap_R;        /* CAP_SLICES x CAP_SECTORS radii per bone */
    double* cap_pose;     /* 9 per bone: a, u, e1 at the step's pose */
    double* cap_prev;     /* 9 per bone: the same at the previous step (in cap_pose's block) */
    int cap_prev_set;     /* cap_prev holds a step's frames (not after create or reset) */
    uint8_t* cap_has;     /* per bone: 1 when it has a capsule */
    uint8_t* cap_skip;    /* n x bone_count: 1 where the vertex never meets that capsule */
    uint32_t* cap_bone;   /* per skin vertex: the capsule it is held out of, or NONE */
    uint32_t* cap_next;   /* the update's result */
    uint32_t cap_count;
    uint32_t* cap_v;      /* the contacts' skin vertices (increasing) */
    uint32_t* cap_b;      /* and capsules */
    uint32_t* cap_r;      /* and rows of x */
    double* cap_deepest;  /* per skin vertex: the deepest contact it is held out of */
    double* cap_boxes;    /* 6 per bone at the step's pose: where its capsule can hold skin */
    sinew_spatial_hash cap_hash; /* over cap_boxes, rebuilt every step */
    sinew_spatial_hash_view cap_view;
    double cap_cell;
    double* tet_rest;     /* per tet: 6 V at rest (fps_collide_tet_usable) */
    uint64_t* tri_near;   /* per triangle: fps_collide_scene.tri_near (NULL above 64 bones) */
};

static sinew_result oom(const sinew_host_api* host, const char* what)
{
    return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps collisions: out of memory for %s",
                           what);
}

void fps_collide_destroy(fps_collide* c)
{
    if (!c) return;
    const sinew_host_api* host = c->host;
    sinew_spatial_hash_free(host, &c->hash);
    sinew_spatial_hash_free(host, &c->cap_hash);
    if (c->skip_borrowed) c->skip_ptr = c->skip = NULL;
    void* arrays[] = {c->skin_bone, c->bone_near, c->tri_rest, c->skin_rest, c->tri_sign, c->tets_r, c->tris_r, c->skin_row, c->base_row, c->pair_row, c->skip_ptr, c->skip,   c->boxes,  c->pair_tri, c->next_tri,
                      c->next_kept, c->pair_v,  c->pair_t, c->contrib, c->gather_ptr, c->gather,
                      c->a_ptr,    c->a_col,    c->a_val,  c->t_ptr,  c->t_col,    c->t_val,
                      c->extra, c->cap_frame, c->cap_R, c->cap_pose, c->cap_has, c->cap_skip,
                      c->cap_bone, c->cap_next, c->cap_v, c->cap_b, c->cap_r, c->cap_boxes,
                      c->cap_deepest, c->tet_rest, c->tri_near, c->pt_count};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) sinew_host_free(host, arrays[i]);
    sinew_host_free(host, c);
}

/* Rest positions (3 per tissue vertex, interleaved) as column blocks. */
static double* rest_columns(const sinew_host_api* host, const ps_model* m, uint32_t N)
{
    double* x = (double*)sinew_host_calloc(host, 3u * (size_t)N, sizeof(double));
    if (!x) return NULL;
    for (uint32_t i = 0; i < N; ++i)
        for (int c = 0; c < 3; ++c) x[(size_t)c * N + i] = m->rest[3u * (size_t)i + (size_t)c];
    return x;
}

/* Surfaces that touch at rest (closed lips, fingers laid together): a skin vertex within
 * this many mean edge lengths of a triangle at rest never pairs with it, since any motion
 * that presses them together would project one through the other's thin tissue. */
#define FPS_COLLIDE_TOUCH 1.0

/* The distance from p to the segment a-b. */
static double segment_distance(const double p[3], const double a[3], const double b[3])
{
    double ab[3], ap[3];
    for (int k = 0; k < 3; ++k) ab[k] = b[k] - a[k], ap[k] = p[k] - a[k];
    double l2 = fps_col_dot(ab, ab), t = l2 > 0.0 ? fps_col_dot(ap, ab) / l2 : 0.0;
    t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
    for (int k = 0; k < 3; ++k) ap[k] -= t * ab[k];
    return sqrt(fps_col_dot(ap, ap));
}

/* The distance from p to triangle (a, b, c): to its plane where p projects inside it, else to
 * the nearest edge. */
static double triangle_distance(const double p[3], const double a[3], const double b[3],
                                const double c[3])
{
    double e0[3], e1[3], ap[3], nrm[3];
    for (int k = 0; k < 3; ++k) e0[k] = b[k] - a[k], e1[k] = c[k] - a[k], ap[k] = p[k] - a[k];
    fps_col_cross(e0, e1, nrm);
    double n2 = fps_col_dot(nrm, nrm);
    if (n2 > 0.0) {
        /* barycentric coordinates of p's projection from the sub-triangles' areas */
        double q[3], u[3], w[3];
        for (int k = 0; k < 3; ++k) q[k] = ap[k] - fps_col_dot(ap, nrm) / n2 * nrm[k];
        fps_col_cross(e0, q, u);
        fps_col_cross(q, e1, w);
        double s = fps_col_dot(w, nrm) / n2, t = fps_col_dot(u, nrm) / n2;
        if (s >= 0.0 && t >= 0.0 && s + t <= 1.0) return fabs(fps_col_dot(ap, nrm)) / sqrt(n2);
    }
    return fmin(segment_distance(p, a, b), fmin(segment_distance(p, b, c), segment_distance(p, c, a)));
}

/* Whether skin vertex p lies at rest in prism `tri` or touches its skin triangle. */
static int rest_skip(const fps_collide* c, const double* xr, const double p[3], uint32_t tri)
{
    const ps_model* m = c->m;
    for (uint32_t t = 3u * tri; t < 3u * tri + 3u; ++t) {
        double q[4][3];
        for (int k = 0; k < 4; ++k) fps_col_load(xr, c->N, m->tets[4u * t + (uint32_t)k], q[k]);
        if (fps_point_in_tet(p, q[0], q[1], q[2], q[3], NULL)) return 1;
    }
    double a[3], b[3], d[3];
    fps_col_load(xr, c->N, m->triangles[3u * tri], a);
    fps_col_load(xr, c->N, m->triangles[3u * tri + 1u], b);
    fps_col_load(xr, c->N, m->triangles[3u * tri + 2u], d);
    return triangle_distance(p, a, b, d) <= FPS_COLLIDE_TOUCH * c->edge;
}

/* The rest hash over the prisms' boxes, widened by the touching distance. */
static sinew_result skip_hash(fps_collide* c, const double* xr)
{
    const ps_model* m = c->m;
    const double touch = FPS_COLLIDE_TOUCH * c->edge;
    for (uint32_t p = 0; p < c->tri_count; ++p) {
        fps_collide_prism_box(xr, c->N, m->tets, p, c->boxes);
        for (int k = 0; k < 3; ++k) c->boxes[6u * p + k] -= touch, c->boxes[6u * p + 3 + k] += touch;
    }
    return sinew_spatial_hash_build(c->host, &c->hash, c->boxes, c->tri_count, c->cell,
                                    FPS_COLLIDE_MAX_CELLS);
}

/* The growing buffers of build_skip: one vertex's list, the hash query's hits and every
 * vertex's list in turn. */
typedef struct skip_buffers {
    uint32_t* list;
    uint32_t list_cap;
    uint32_t* found;
    uint32_t found_cap;
    uint32_t* all;
    size_t total_cap, total;
    uint32_t* stamp; /* per triangle: v + 1 once listed for vertex v */
} skip_buffers;

/* Doubles the vertex's list; false when out of memory. */
static bool grow_list(const sinew_host_api* host, skip_buffers* w)
{
    uint32_t* grown = (uint32_t*)sinew_host_calloc(host, 2u * (size_t)w->list_cap,
                                                   sizeof(uint32_t));
    if (!grown) return false;
    memcpy(grown, w->list, w->list_cap * sizeof(uint32_t));
    sinew_host_free(host, w->list);
    w->list = grown;
    w->list_cap *= 2u;
    return true;
}

/* Appends the triangles around v and around each neighbour of v (the neighbours are the
 * corners of v's triangles) to the list, each once; false when out of memory. */
static bool add_ring_triangles(const fps_collide* c, uint32_t v, skip_buffers* w, uint32_t* len)
{
    const ps_model* m = c->m;
    for (uint32_t a = m->vertex_tri_offsets[v]; a < m->vertex_tri_offsets[v + 1]; ++a) {
        const uint32_t* tri = m->triangles + 3u * m->vertex_tris[a];
        for (int k = 0; k < 3; ++k) {
            uint32_t u = tri[k];
            for (uint32_t b = m->vertex_tri_offsets[u]; b < m->vertex_tri_offsets[u + 1]; ++b) {
                uint32_t t = m->vertex_tris[b];
                if (w->stamp[t] == v + 1u) continue;
                if (*len == w->list_cap && !grow_list(c->host, w)) return false;
                w->stamp[t] = v + 1u;
                w->list[(*len)++] = t;
            }
        }
    }
    return true;
}

/* Appends the prisms that contain p (skin vertex v at rest) or whose skin it touches, while
 * the list has room; false when out of memory. */
static bool add_rest_hits(const fps_collide* c, const double* xr,
                          const sinew_spatial_hash_view* view, uint32_t v, const double p[3],
                          skip_buffers* w, uint32_t* len)
{
    const sinew_host_api* host = c->host;
    uint32_t hits = sinew_spatial_hash_query_point(view, p, w->found, w->found_cap);
    while (hits > w->found_cap) {
        sinew_host_free(host, w->found);
        w->found_cap = 2u * hits;
        w->found = (uint32_t*)sinew_host_calloc(host, w->found_cap, sizeof(uint32_t));
        if (!w->found) return false;
        hits = sinew_spatial_hash_query_point(view, p, w->found, w->found_cap);
    }
    for (uint32_t h = 0; h < hits; ++h) {
        uint32_t tri = w->found[h];
        if (w->stamp[tri] == v + 1u || !rest_skip(c, xr, p, tri)) continue;
        if (*len == w->list_cap) break; /* the ring lists filled it: v is on very many prisms */
        w->stamp[tri] = v + 1u;
        w->list[(*len)++] = tri;
    }
    return true;
}

/* Sorts the first len entries of list (distinct, a few dozen): insertion sort. */
static void sort_small(uint32_t* list, uint32_t len)
{
    for (uint32_t i = 1; i < len; ++i) {
        uint32_t x = list[i], j = i;
        for (; j > 0 && list[j - 1] > x; --j) list[j] = list[j - 1];
        list[j] = x;
    }
}

/* Appends the first count entries of the vertex's list to all, growing it; false when out of
 * memory. */
static bool append_list(const sinew_host_api* host, skip_buffers* w, uint32_t count)
{
    if (w->total + count > w->total_cap) {
        size_t cap = 2u * (w->total + count);
        uint32_t* grown = (uint32_t*)sinew_host_calloc(host, cap, sizeof(uint32_t));
        if (!grown) return false;
        memcpy(grown, w->all, w->total * sizeof(uint32_t));
        sinew_host_free(host, w->all);
        w->all = grown;
        w->total_cap = cap;
    }
    memcpy(w->all + w->total, w->list, count * sizeof(uint32_t));
    w->total += count;
    return true;
}

/* Skin vertex v's skip list (sorted, unique) appended to all; false when out of memory. */
static bool vertex_skip_list(const fps_collide* c, const double* xr,
                             const sinew_spatial_hash_view* view, uint32_t v, skip_buffers* w)
{
    uint32_t len = 0;
    if (!add_ring_triangles(c, v, w, &len)) return false;
    /* the prisms that contain v at rest or whose skin it touches */
    double p[3] = {xr[v], xr[(size_t)c->N + v], xr[2u * (size_t)c->N + v]};
    if (!add_rest_hits(c, xr, view, v, p, w, &len)) return false;
    sort_small(w->list, len);
    return append_list(c->host, w, len);
}

/* build_skip's parallel pass: chunks of SKIP_CHUNK vertices, each listed into its own
 * buffers (counts[v]: the length of v's list), gathered in order afterwards. */
enum { SKIP_CHUNK = 128u };

typedef struct skip_job {
    const fps_collide* c;
    const double* xr;
    sinew_spatial_hash_view view;
    skip_buffers* chunks;
    uint32_t* counts;
    uint8_t* failed; /* per chunk: out of memory */
} skip_job;

static void skip_range(void* data, uint32_t begin, uint32_t end)
{
    skip_job* job = (skip_job*)data;
    const fps_collide* c = job->c;
    const sinew_host_api* host = c->host;
    for (uint32_t k = begin; k < end; ++k) {
        uint32_t v0 = k * SKIP_CHUNK, v1 = v0 + SKIP_CHUNK < c->n ? v0 + SKIP_CHUNK : c->n;
        skip_buffers* w = &job->chunks[k];
        w->list_cap = 256;
        w->found_cap = 64;
        w->total_cap = (size_t)(v1 - v0) * 24u + 16u;
        w->total = 0;
        w->list = (uint32_t*)sinew_host_calloc(host, w->list_cap, sizeof(uint32_t));
        w->found = (uint32_t*)sinew_host_calloc(host, w->found_cap, sizeof(uint32_t));
        w->all = (uint32_t*)sinew_host_calloc(host, w->total_cap, sizeof(uint32_t));
        w->stamp = (uint32_t*)sinew_host_calloc(host, c->tri_count ? c->tri_count : 1u,
                                                sizeof(uint32_t));
        bool ok = w->list && w->found && w->all && w->stamp;
        for (uint32_t v = v0; ok && v < v1; ++v) {
            size_t before = w->total;
            ok = vertex_skip_list(c, job->xr, &job->view, v, w);
            job->counts[v] = (uint32_t)(w->total - before);
        }
        job->failed[k] = !ok;
    }
}

/* The chunks' lists one after the other into c->skip, with c->skip_ptr; false when out of
 * memory. */
static bool gather_skip(fps_collide* c, const skip_job* job, uint32_t chunk_count)
{
    const sinew_host_api* host = c->host;
    size_t total = 0;
    for (uint32_t k = 0; k < chunk_count; ++k) total += job->chunks[k].total;
    c->skip_ptr = (uint32_t*)sinew_host_calloc(host, (size_t)c->n + 1u, sizeof(uint32_t));
    c->skip = (uint32_t*)sinew_host_calloc(host, total ? total : 1u, sizeof(uint32_t));
    if (!c->skip_ptr || !c->skip) return false;
    for (uint32_t v = 0; v < c->n; ++v) c->skip_ptr[v + 1] = c->skip_ptr[v] + job->counts[v];
    size_t at = 0;
    for (uint32_t k = 0; k < chunk_count; ++k) {
        memcpy(c->skip + at, job->chunks[k].all, job->chunks[k].total * sizeof(uint32_t));
        at += job->chunks[k].total;
    }
    return true;
}

/* The skip lists: triangles around v and its one-ring (sorted, unique), plus the triangles
 * whose prisms contain v at rest or whose skin it touches (rest_skip); the vertices in chunks
 * over the job system. */
static sinew_result build_skip(fps_collide* c, const double* xr)
{
    const sinew_host_api* host = c->host;
    sinew_result r = skip_hash(c, xr);
    if (r != SINEW_OK) return r;
    uint32_t chunk_count = (c->n + SKIP_CHUNK - 1u) / SKIP_CHUNK;
    skip_job job = {c, xr, sinew_spatial_hash_get_view(&c->hash), NULL, NULL, NULL};
    job.chunks = (skip_buffers*)sinew_host_calloc(host, chunk_count ? chunk_count : 1u,
                                                  sizeof(skip_buffers));
    job.counts = (uint32_t*)sinew_host_calloc(host, c->n ? c->n : 1u, sizeof(uint32_t));
    job.failed = (uint8_t*)sinew_host_calloc(host, chunk_count ? chunk_count : 1u, 1);
    bool ok = job.chunks && job.counts && job.failed;
    if (ok) sinew_host_parallel_for(host, skip_range, &job, chunk_count, 1u);
    for (uint32_t k = 0; ok && k < chunk_count; ++k) ok = !job.failed[k];
    if (ok) ok = gather_skip(c, &job, chunk_count);
    if (!ok) r = oom(host, "the neighbourhoods");
    for (uint32_t k = 0; job.chunks && k < chunk_count; ++k) {
        sinew_host_free(host, job.chunks[k].list);
        sinew_host_free(host, job.chunks[k].found);
        sinew_host_free(host, job.chunks[k].all);
        sinew_host_free(host, job.chunks[k].stamp);
    }
    sinew_host_free(host, job.chunks);
    sinew_host_free(host, job.counts);
    sinew_host_free(host, job.failed);
    return r;
}

/* The skip lists of the model when it carries them (restored from baked data, where
 * build_skip made them), used where they are: the model outlives the state and nothing
 * changes them; else built. */
static sinew_result rest_skips(fps_collide* c, const double* xr)
{
    const ps_model* m = c->m;
    if (!m->rest_skip_ptr || !m->rest_skip) return build_skip(c, xr);
    c->skip_ptr = m->rest_skip_ptr;
    c->skip = m->rest_skip;
    c->skip_borrowed = 1;
    return SINEW_OK;
}

sinew_result fps_collide_keep_rest_skips(const sinew_host_api* host, ps_model* m)
{
    if (!host || !m || m->n == 0)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps collisions: no model to keep the skip lists in");
    if (m->rest_skip_ptr) return SINEW_OK;
    fps_collide_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.model = m;
    desc.free_count = m->n;
    desc.weight = 1.0;
    fps_collide* c = NULL;
    sinew_result r = fps_collide_create(host, &desc, &c);
    if (r != SINEW_OK) return r;
    /* the model takes the state's lists over */
    m->rest_skip_ptr = c->skip_ptr;
    m->rest_skip = c->skip;
    c->skip_ptr = c->skip = NULL;
    fps_collide_destroy(c);
    return r;
}

/* ---- limb capsules ----
 *
 * The prism pairs above never join bones that meet at a joint, and a skin vertex pushed onto
 * the plane of one triangle of the other side does not keep a limb's flesh out of its
 * neighbour's: on the male with the left arm swung across the chest, the armpit's wall (the
 * clavicle bone's skin) and the chest end up inside the upper arm and the arm's skin inside the
 * chest, a closed crease that the prism pairs do not undo
 * (docs/decisions/2026-11-26-fps-arm-into-torso.md). So each bone's flesh at rest is also a volume of its own: around its
 * segment, in a frame that moves with the bone, the smallest distance of the bone's own skin
 * vertices from the axis per slice along the bone and sector around it (a star-shaped tube
 * inside the skin), interpolated bilinearly so the radius is continuous. The skin vertices of
 * every other bone are held outside it by a point constraint of A_col (the capsule pushes a
 * vertex radially to that radius raised by the margin, unilateral like the pairs), beyond the
 * joint regions (one joint radius of the volumetric skeleton, 2018 Sec. 3.1, from either end:
 * there the parts' flesh shares the joint's sphere and the fold belongs to skin sliding).
 * Never held out of a capsule: the bone's own skin, skin that lay within an edge length of the
 * capsule at rest (the parts' flesh meets there), and a vertex whose anchor is inside the
 * capsule (the bone went through that flesh, as in fps_collide_anchor_through), skin deeper
 * inside than 1.5 times its own tissue's rest thickness (the same, where the anchor lies beyond
 * the tube's active range), and the skin of a part whose own tube's largest radius is below
 * half the tube's radius there (a finger in a leg). The grid (FPS_CAP_SLICES x
 * FPS_CAP_SECTORS), the weight (one edge spring's) and the rest margin (one edge) are the best
 * of a small sweep (docs/decisions/2026-11-26-fps-capsule-parameters.md). On with
 * collisions=1 (fps's default): they resolve the crease at the arm-into-torso pose, and over
 * the male's six animations they lower the pairs; the groin and the knee gain some
 * (docs/decisions/2026-11-26-fps-limb-capsules.md). */

#define CAP_SLICES FPS_CAP_SLICES
#define CAP_SECTORS FPS_CAP_SECTORS
#define CAP_FRAME FPS_CAP_FRAME
#define CAP_THINNER 0.5 /* parts thinner than this fraction of a tube are not held out of it */
#define CAP_TISSUE_DEPTHS 1.5 /* nor skin deeper inside than this many of its tissue's thickness */
#define CAP_PI FPS_CAP_PI
#define CAP_CANDIDATES 64u /* capsules a vertex's query may list before the full loop */

static int cap_bin(double x, int count)
{
    int i = (int)x;
    return i < 0 ? 0 : i >= count ? count - 1 : i;
}

/* Bone b's frame at the step's pose: its rest frame moved by its joint's skinning matrix. */
static void capsule_pose(fps_collide* c, uint32_t b)
{
    const double* r = c->cap_frame + CAP_FRAME * (size_t)b;
    const float* T = c->skinning + 16u * c->m->bones[b].joint;
    double* o = c->cap_pose + 9u * (size_t)b;
    for (int i = 0; i < 3; ++i) {
        o[i] = (double)T[i] * r[0] + (double)T[4 + i] * r[1] + (double)T[8 + i] * r[2] + T[12 + i];
        o[3 + i] = (double)T[i] * r[3] + (double)T[4 + i] * r[4] + (double)T[8 + i] * r[5];
        o[6 + i] = (double)T[i] * r[6] + (double)T[4 + i] * r[7] + (double)T[8 + i] * r[8];
    }
    for (int k = 1; k <= 2; ++k) {
        double l = sqrt(fps_col_dot(o + 3 * k, o + 3 * k));
        for (int i = 0; i < 3; ++i) o[3 * k + i] = l > 0.0 ? o[3 * k + i] / l : 0.0;
    }
}

/* Bone b's box at the step's pose (capsule_pose first): its active segment widened by its
 * reach, outside which fps_capsule_eval is 0; a bone without a capsule gets a NaN box, which
 * the hash leaves out. */
static void capsule_box(fps_collide* c, uint32_t b)
{
    double* box = c->cap_boxes + 6u * (size_t)b;
    if (!c->cap_has[b]) {
        for (int i = 0; i < 6; ++i) box[i] = NAN;
        return;
    }
    const double* r = c->cap_frame + CAP_FRAME * (size_t)b;
    const double* f = c->cap_pose + 9u * (size_t)b;
    const double w = r[12] * (1.0 + 1e-9) + 1e-12; /* rounding: never too tight */
    for (int i = 0; i < 3; ++i) {
        double p0 = f[i] + r[10] * f[3 + i], p1 = f[i] + r[11] * f[3 + i];
        box[i] = fmin(p0, p1) - w;
        box[3 + i] = fmax(p0, p1) + w;
    }
}

/* fps_capsule_eval for bone b in frame f. */
static double capsule_eval(const fps_collide* c, uint32_t b, const double* f, const double x[3],
                           double* t, double* r, double dir[3])
{
    return fps_capsule_eval(c->cap_frame + CAP_FRAME * (size_t)b,
                            c->cap_R + (size_t)b * CAP_SLICES * CAP_SECTORS, f, x, t, r, dir);
}

/* A bone to a leaf joint from a joint with more than three such bones: a fan of a facial
 * rig (mouth corners, lids, brows from the neck), whose segments cross flesh they do not
 * carry; such a bone stands for no limb and gets no tube. */
static bool fan_bone(const ps_model* m, uint32_t b)
{
    uint32_t start = m->bones[b].joint, leaves = 0;
    bool leaf = true;
    for (uint32_t k = 0; k < m->bone_count; ++k)
        if (m->bones[k].joint == m->bones[b].child) leaf = false;
    if (!leaf) return false;
    for (uint32_t k = 0; k < m->bone_count; ++k) {
        if (m->bones[k].joint != start) continue;
        bool child_leaf = true;
        for (uint32_t q = 0; q < m->bone_count; ++q)
            if (m->bones[q].joint == m->bones[k].child) child_leaf = false;
        leaves += child_leaf;
    }
    return leaves > 3u;
}

/* The capsules' arrays (frames, radius tables, poses, boxes, the vertex-capsule skips and the
 * contact lists), with no skin vertex held out of any capsule yet. */
static sinew_result capsule_alloc(fps_collide* c)
{
    const sinew_host_api* host = c->host;
    const uint32_t B = c->bone_count, n = c->n;
    const size_t G = (size_t)CAP_SLICES * CAP_SECTORS;
    c->cap_frame = (double*)sinew_host_calloc(host, CAP_FRAME * (size_t)B + 1u, sizeof(double));
    c->cap_R = (double*)sinew_host_calloc(host, G * B + 1u, sizeof(double));
    c->cap_pose = (double*)sinew_host_calloc(host, 18u * (size_t)B + 1u, sizeof(double));
    c->cap_prev = c->cap_pose ? c->cap_pose + 9u * (size_t)B : NULL;
    c->cap_has = (uint8_t*)sinew_host_calloc(host, (size_t)B + 1u, 1u);
    c->cap_skip = (uint8_t*)sinew_host_calloc(host, (size_t)n * B + 1u, 1u);
    c->cap_bone = (uint32_t*)sinew_host_calloc(host, n, sizeof(uint32_t));
    c->cap_next = (uint32_t*)sinew_host_calloc(host, n, sizeof(uint32_t));
    c->cap_v = (uint32_t*)sinew_host_calloc(host, n, sizeof(uint32_t));
    c->cap_b = (uint32_t*)sinew_host_calloc(host, n, sizeof(uint32_t));
    c->cap_r = (uint32_t*)sinew_host_calloc(host, n, sizeof(uint32_t));
    c->cap_boxes = (double*)sinew_host_calloc(host, 6u * (size_t)B + 6u, sizeof(double));
    c->cap_deepest = (double*)sinew_host_calloc(host, n, sizeof(double));
    if (!c->cap_frame || !c->cap_R || !c->cap_pose || !c->cap_has || !c->cap_skip ||
        !c->cap_bone || !c->cap_next || !c->cap_v || !c->cap_b || !c->cap_r || !c->cap_boxes ||
        !c->cap_deepest)
        return oom(host, "the limb capsules");
    for (uint32_t v = 0; v < n; ++v) c->cap_bone[v] = c->cap_next[v] = FPS_COLLIDE_NONE;
    return SINEW_OK;
}

/* Bone b's rest frame into fr: its start a (fr[0..2]), unit axis u (fr[3..5]), e1 (fr[6..8],
 * the coordinate axis least along u made perpendicular to it), length (fr[9]) and the active
 * range between the joint regions (fr[10], fr[11]; possibly empty). False, fr untouched, for
 * a bone without a joint or length. */
static bool capsule_frame(const ps_model* m, uint32_t b, double* fr)
{
    const ps_bone* bone = &m->bones[b];
    if (bone->end[0] == bone->end[1] || bone->joint >= m->joint_count) return false;
    double a[3], e[3], u[3];
    ps_joint_position(m, bone->end[0], a);
    ps_joint_position(m, bone->end[1], e);
    for (int i = 0; i < 3; ++i) u[i] = e[i] - a[i];
    double len = sqrt(fps_col_dot(u, u));
    if (!(len > 0.0) || !isfinite(len)) return false;
    for (int i = 0; i < 3; ++i) u[i] /= len;
    /* e1: the coordinate axis least along u, made perpendicular to it */
    int k = fabs(u[0]) <= fabs(u[1]) && fabs(u[0]) <= fabs(u[2]) ? 0
            : fabs(u[1]) <= fabs(u[2])                           ? 1
                                                                 : 2;
    double e1[3] = {0.0, 0.0, 0.0};
    e1[k] = 1.0;
    double dot = fps_col_dot(e1, u);
    for (int i = 0; i < 3; ++i) e1[i] -= dot * u[i];
    double l1 = sqrt(fps_col_dot(e1, e1));
    for (int i = 0; i < 3; ++i) e1[i] /= l1;
    for (int i = 0; i < 3; ++i) {
        fr[i] = a[i];
        fr[3 + i] = u[i];
        fr[6 + i] = e1[i];
    }
    fr[9] = len;
    fr[10] = m->joint_radius[bone->end[0]];
    fr[11] = len - m->joint_radius[bone->end[1]];
    return true;
}

/* The smallest radius of bone b's own skin per slice and sector of its frame fr into R
 * (HUGE_VAL where no vertex falls). */
static void capsule_own_radii(const fps_collide* c, uint32_t b, const double* fr, double* R)
{
    const ps_model* m = c->m;
    const double* a = fr;
    const double* u = fr + 3;
    const double* e1 = fr + 6;
    const double len = fr[9];
    for (size_t i = 0; i < (size_t)CAP_SLICES * CAP_SECTORS; ++i) R[i] = HUGE_VAL;
    for (uint32_t v = 0; v < c->n; ++v) {
        if (m->vertex_bone[v] != b) continue;
        const double* p = m->rest + 3u * v;
        double d[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]}, dir[3];
        double t = fps_col_dot(d, u);
        if (!(t >= 0.0 && t <= len)) continue;
        for (int i = 0; i < 3; ++i) dir[i] = d[i] - t * u[i];
        double rad = sqrt(fps_col_dot(dir, dir));
        if (!(rad > 0.0)) continue;
        for (int i = 0; i < 3; ++i) dir[i] /= rad;
        int ti = cap_bin(t / len * CAP_SLICES, CAP_SLICES);
        int pi = cap_bin((fps_capsule_angle(u, e1, dir) + CAP_PI) / (2.0 * CAP_PI) *
                             CAP_SECTORS,
                         CAP_SECTORS);
        double* slot = R + ti * CAP_SECTORS + pi;
        if (rad < *slot) *slot = rad;
    }
}

/* Fills the empty slots of a radius table; returns whether any radius is positive. */
static int capsule_fill_empty(double* R)
{
    int any = 0;
    for (int ti = 0; ti < CAP_SLICES; ++ti) {
        /* an empty sector takes the smallest radius of its slice (the flesh is there, no
         * vertex happened to fall into it); an empty slice has no capsule */
        double smallest = HUGE_VAL;
        for (int pi = 0; pi < CAP_SECTORS; ++pi)
            smallest = fmin(smallest, R[ti * CAP_SECTORS + pi]);
        for (int pi = 0; pi < CAP_SECTORS; ++pi) {
            double* slot = R + ti * CAP_SECTORS + pi;
            if (*slot == HUGE_VAL) *slot = smallest == HUGE_VAL ? 0.0 : smallest;
            if (*slot > 0.0) any = 1;
        }
    }
    return any;
}

/* Bone b's capsule: its rest frame and radius table, whether it has one (a bone with a range,
 * some flesh and not a fan's) and its reach (fr[12]: the largest radius plus an edge). */
static void capsule_bone(fps_collide* c, uint32_t b)
{
    const size_t G = (size_t)CAP_SLICES * CAP_SECTORS;
    double* fr = c->cap_frame + CAP_FRAME * (size_t)b;
    if (!capsule_frame(c->m, b, fr) || !(fr[11] > fr[10])) return;
    double* R = c->cap_R + (size_t)b * G;
    capsule_own_radii(c, b, fr, R);
    int any = capsule_fill_empty(R);
    c->cap_has[b] = (uint8_t)(any && !fan_bone(c->m, b));
    double largest = 0.0;
    for (size_t i = 0; i < G; ++i) largest = fmax(largest, R[i]);
    fr[12] = largest + c->edge;
}

/* The skin vertices that never meet capsule b: its own bone's, and those within an edge
 * length of it at rest. */
static void capsule_rest_skips(fps_collide* c, uint32_t b)
{
    const ps_model* m = c->m;
    const double* f = c->cap_frame + CAP_FRAME * (size_t)b;
    for (uint32_t v = 0; v < c->n; ++v) {
        double t, rad, dir[3];
        double R = capsule_eval(c, b, f, m->rest + 3u * v, &t, &rad, dir);
        if (m->vertex_bone[v] == b || (R > 0.0 && rad < R + c->edge))
            c->cap_skip[(size_t)v * c->bone_count + b] = 1;
    }
}

/* How deep inside a capsule each skin vertex may be held out of it: CAP_TISSUE_DEPTHS times
 * its own tissue's rest thickness (skin to base). */
static void capsule_depth_limits(fps_collide* c)
{
    const double* rest = c->m->rest;
    for (uint32_t v = 0; v < c->n; ++v) {
        const double* s = rest + 3u * (size_t)v;
        const double* b = rest + 3u * ((size_t)c->n + v);
        double d[3] = {s[0] - b[0], s[1] - b[1], s[2] - b[2]};
        c->cap_deepest[v] = CAP_TISSUE_DEPTHS * sqrt(fps_col_dot(d, d));
    }
}

/* The capsules' rest frames and radius tables, and which skin vertices never meet which. */
static sinew_result capsule_build(fps_collide* c)
{
    const uint32_t B = c->bone_count;
    sinew_result r = capsule_alloc(c);
    if (r != SINEW_OK) return r;
    for (uint32_t b = 0; b < B; ++b) capsule_bone(c, b);
    /* the capsules' hash: cubes twice the largest reach, so a capsule spans a few */
    double reach = 0.0;
    for (uint32_t b = 0; b < B; ++b)
        if (c->cap_has[b]) reach = fmax(reach, c->cap_frame[CAP_FRAME * (size_t)b + 12]);
    c->cap_cell = reach > 0.0 && isfinite(reach) ? 2.0 * reach : 1.0;
    for (uint32_t b = 0; b < B; ++b)
        if (c->cap_has[b]) capsule_rest_skips(c, b);
    capsule_depth_limits(c);
    return SINEW_OK;
}

/* The capsule that free skin vertex v is inside at the current positions (the deepest), or
 * `previous` while v is within delta_col outside it and inside no other; else NONE. */
static uint32_t capsule_detect(const fps_collide* c, uint32_t v, uint32_t previous)
{
    if (c->skin_row[v] >= c->n_free) return FPS_COLLIDE_NONE;
    double xv[3], xb[3];
    fps_col_load(c->x, c->ldx, c->skin_row[v], xv);
    fps_col_load(c->x, c->ldx, c->base_row[v], xb);
    const uint32_t B = c->bone_count;
    uint32_t best = FPS_COLLIDE_NONE;
    double best_depth = 0.0;
    /* only the capsules whose box holds v, in increasing order as the full loop visits them
     * (the same result: elsewhere fps_capsule_eval is 0); all of them when more than fit */
    uint32_t cand[CAP_CANDIDATES];
    uint32_t count = sinew_spatial_hash_query_point(&c->cap_view, xv, cand, CAP_CANDIDATES);
    const int listed = count <= CAP_CANDIDATES;
    if (listed)
        for (uint32_t i = 1; i < count; ++i)
            for (uint32_t k = i; k > 0 && cand[k - 1] > cand[k]; --k) {
                uint32_t t = cand[k];
                cand[k] = cand[k - 1];
                cand[k - 1] = t;
            }
    else
        count = B;
    for (uint32_t k = 0; k < count; ++k) {
        const uint32_t b = listed ? cand[k] : k;
        if (!c->cap_has[b] || c->cap_skip[(size_t)v * B + b]) continue;
        const double* f = c->cap_pose + 9u * (size_t)b;
        double t, r, dir[3];
        double R = capsule_eval(c, b, f, xv, &t, &r, dir);
        if (!(R > 0.0)) continue;
        /* a part less than half as thick as the tube where it enters (a finger in a leg) is
         * not held out: its bone is what went in, and lifting its skin out by more than the
         * part is thick stretches its prisms apart
         * (docs/decisions/2026-11-26-fps-capsule-parameters.md); its skin is left to the prism
         * pairs */
        const uint32_t bv = c->skin_bone[v];
        const double own = c->cap_has[bv] ? c->cap_frame[CAP_FRAME * (size_t)bv + 12] - c->edge : 0.0;
        if (own < CAP_THINNER * R) continue;
        double tb, rb, db[3];
        double Rb = capsule_eval(c, b, f, xb, &tb, &rb, db);
        if (Rb > 0.0 && rb < Rb) continue; /* the anchor is inside */
        double depth = R - r;
        /* deeper than its tissue could lift it: the part's bone has reached the tube, even
         * where the anchor lies beyond the tube's active range (a curled finger's knuckle in
         * the next phalanx's tube), and holding the skin out tears the part
         * (docs/decisions/2026-11-27-fps-contact-depth.md) */
        if (depth > c->cap_deepest[v]) continue;
        if (b == previous && depth > -c->retain && best == FPS_COLLIDE_NONE) {
            best = b;
            best_depth = depth > 0.0 ? depth : 0.0;
            continue;
        }
        if (depth > best_depth) {
            best_depth = depth;
            best = b;
        }
    }
    return best;
}

/* The point target of contact (v, b): v moved radially onto the capsule raised by the margin,
 * or v itself when it is outside that. */
static void capsule_target(const fps_collide* c, uint32_t v, uint32_t b, double p[3])
{
    double x[3];
    fps_col_load(c->x, c->ldx, c->skin_row[v], x);
    fps_capsule_target(c->cap_frame + CAP_FRAME * (size_t)b,
                       c->cap_R + (size_t)b * CAP_SLICES * CAP_SECTORS, c->cap_pose + 9u * (size_t)b,
                       c->margin, x, p);
}

/* The description's checks: a complete model, 1 .. 2n free rows, a positive spring weight and
 * a margin and retention that are finite and not negative. */
static sinew_result check_desc(const sinew_host_api* host, const fps_collide_desc* desc)
{
    const ps_model* m = desc->model;
    if (!m || !m->rest || !m->tets || !m->triangles || !m->vertex_tri_offsets || m->n == 0 ||
        m->tet_count != 3u * m->triangle_count)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps collisions: the model is %s", !m ? "NULL" : "incomplete");
    const uint32_t N = 2u * m->n;
    if (desc->free_count == 0 || desc->free_count > N)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps collisions: %u free rows for %u tissue vertices",
                               desc->free_count, N);
    if (!(desc->weight > 0.0) || !isfinite(desc->weight))
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps collisions: spring weight %g is not positive and finite",
                               desc->weight);
    if (!(desc->margin >= 0.0) || !isfinite(desc->margin))
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps collisions: margin %g is not a finite number >= 0", desc->margin);
    if (!(desc->retain >= 0.0) || !isfinite(desc->retain))
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps collisions: retention %g is not a finite number >= 0",
                               desc->retain);
    return SINEW_OK;
}

/* The per-triangle rest arrays, the per-vertex pair state and the A_col and right-hand side
 * arrays of fixed size; false when one of them cannot be allocated. */
static bool alloc_arrays(fps_collide* c)
{
    const sinew_host_api* host = c->host;
    const uint32_t tc = c->tri_count ? c->tri_count : 1u;
    c->tri_sign = (double*)sinew_host_calloc(host, tc, sizeof(double));
    c->tri_rest = (double*)sinew_host_calloc(host, FPS_COLLIDE_TRI_REST * (size_t)tc, sizeof(double));
    c->skin_rest = (double*)sinew_host_calloc(host, 3u * (size_t)c->n, sizeof(double));
    c->boxes = (double*)sinew_host_calloc(host, 6u * (size_t)tc, sizeof(double));
    c->pair_tri = (uint32_t*)sinew_host_calloc(host, c->n, sizeof(uint32_t));
    c->next_tri = (uint32_t*)sinew_host_calloc(host, c->n, sizeof(uint32_t));
    c->next_kept = (uint8_t*)sinew_host_calloc(host, c->n, 1u);
    c->gather_ptr = (uint32_t*)sinew_host_calloc(host, (size_t)c->n_free + 1u, sizeof(uint32_t));
    c->a_ptr = (uint32_t*)sinew_host_calloc(host, (size_t)c->n_free + 1u, sizeof(uint32_t));
    c->t_ptr = (uint32_t*)sinew_host_calloc(host, (size_t)c->n_free + 2u, sizeof(uint32_t));
    c->extra = (double*)sinew_host_calloc(host, 3u * (size_t)c->n_free, sizeof(double));
    c->pt_count = (uint32_t*)sinew_host_calloc(host, c->n, sizeof(uint32_t));
    return c->pt_count && c->tri_sign && c->tri_rest && c->skin_rest && c->boxes && c->pair_tri &&
           c->next_tri && c->next_kept && c->gather_ptr && c->a_ptr && c->t_ptr && c->extra;
}

/* Whether row_of is a permutation of the N tissue vertices (else the rows would alias); seen:
 * N zeroed bytes. */
static sinew_result check_row_of(const sinew_host_api* host, const uint32_t* row_of, uint32_t N,
                                 uint8_t* seen)
{
    for (uint32_t i = 0; i < N; ++i) {
        uint32_t r = row_of[i];
        if (r >= N || seen[r])
            return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                                   "fps collisions: row_of[%u] = %u is %s", i, r,
                                   r >= N ? "out of range" : "repeated");
        seen[r] = 1;
    }
    return SINEW_OK;
}

/* The rows of x of the tets' and triangles' corners and of each skin vertex and the base
 * vertex under it (row_of, or the model's numbering when NULL), with room for the tets' rest
 * volumes. */
static sinew_result map_rows(fps_collide* c, const uint32_t* row_of)
{
    const sinew_host_api* host = c->host;
    const ps_model* m = c->m;
    const uint32_t tc = c->tri_count ? c->tri_count : 1u;
    c->tets_r = (uint32_t*)sinew_host_calloc(host, 4u * (size_t)(c->tet_count ? c->tet_count : 1u),
                                             sizeof(uint32_t));
    c->tris_r = (uint32_t*)sinew_host_calloc(host, 3u * (size_t)tc, sizeof(uint32_t));
    c->skin_row = (uint32_t*)sinew_host_calloc(host, c->n, sizeof(uint32_t));
    c->base_row = (uint32_t*)sinew_host_calloc(host, c->n, sizeof(uint32_t));
    c->tet_rest = (double*)sinew_host_calloc(host, c->tet_count ? c->tet_count : 1u, sizeof(double));
    uint8_t* seen = row_of ? (uint8_t*)sinew_host_calloc(host, c->N, 1u) : NULL;
    sinew_result r = SINEW_OK;
    if (!c->tets_r || !c->tris_r || !c->skin_row || !c->base_row || !c->tet_rest ||
        (row_of && !seen))
        r = oom(host, "its arrays");
    else if (row_of)
        r = check_row_of(host, row_of, c->N, seen);
    sinew_host_free(host, seen);
    if (r != SINEW_OK) return r;
    for (size_t k = 0; k < 4u * (size_t)c->tet_count; ++k)
        c->tets_r[k] = row_of ? row_of[m->tets[k]] : m->tets[k];
    for (size_t k = 0; k < 3u * (size_t)c->tri_count; ++k)
        c->tris_r[k] = row_of ? row_of[m->triangles[k]] : m->triangles[k];
    for (uint32_t v = 0; v < c->n; ++v) {
        c->skin_row[v] = row_of ? row_of[v] : v;
        c->base_row[v] = row_of ? row_of[c->n + v] : c->n + v; /* base of skin v: n + v */
    }
    return SINEW_OK;
}

/* 6 V of each tet at rest (fps_collide_tet_usable). */
static void tet_rest_volumes(fps_collide* c, const double* xr)
{
    const ps_model* m = c->m;
    for (uint32_t t = 0; t < c->tet_count; ++t) {
        double q[4][3], e[3][3];
        for (int k = 0; k < 4; ++k) fps_col_load(xr, c->N, m->tets[4u * t + (uint32_t)k], q[k]);
        for (int k = 0; k < 3; ++k)
            for (int i = 0; i < 3; ++i) e[k][i] = q[k + 1][i] - q[0][i];
        c->tet_rest[t] = fps_col_det3(e[0], e[1], e[2]);
    }
}

/* Adds the lengths of the edges a-b, b-c and c-a to *sum, one after the other. */
static void add_edge_lengths(const double xa[3], const double xb[3], const double xc[3],
                             double* sum)
{
    for (int k = 0; k < 3; ++k) {
        const double* e0 = k == 0 ? xa : k == 1 ? xb : xc;
        const double* e1 = k == 0 ? xb : k == 1 ? xc : xa;
        *sum += sqrt((e1[0] - e0[0]) * (e1[0] - e0[0]) + (e1[1] - e0[1]) * (e1[1] - e0[1]) +
                     (e1[2] - e0[2]) * (e1[2] - e0[2]));
    }
}

/* The orientation of triangle t (normal nrm of its corners xa, xb, xc) that puts the prism's
 * base below the triangle: -1 when the base's centroid lies on the normal's side, else 1. */
static double triangle_sign(const fps_collide* c, const double* xr, const uint32_t* tri,
                            const double xa[3], const double xb[3], const double xc[3],
                            const double nrm[3])
{
    const uint32_t N = c->N;
    double down[3];
    for (int k = 0; k < 3; ++k) {
        double base = (xr[(size_t)k * N + c->n + tri[0]] + xr[(size_t)k * N + c->n + tri[1]] +
                       xr[(size_t)k * N + c->n + tri[2]]) / 3.0;
        down[k] = base - (xa[k] + xb[k] + xc[k]) / 3.0;
    }
    return fps_col_dot(nrm, down) > 0.0 ? -1.0 : 1.0;
}

/* The column under triangle t (fps_collide_behind) into tr (FPS_COLLIDE_TRI_REST values): its
 * oriented normal and centroid, as deep as the prism, as wide as twice the longest edge plus
 * that depth. */
static void triangle_column(const fps_collide* c, const double* xr, const uint32_t* tri,
                            const double xa[3], const double xb[3], const double xc[3],
                            const double nrm[3], double sign, double* tr)
{
    double depth = 0.0, longest = 0.0;
    for (int k = 0; k < 3; ++k) {
        tr[k] = sign * nrm[k];
        tr[3 + k] = (xa[k] + xb[k] + xc[k]) / 3.0;
    }
    for (int k = 0; k < 3; ++k) {
        double b[3], e[3];
        fps_col_load(xr, c->N, c->n + tri[k], b);
        for (int i = 0; i < 3; ++i) {
            b[i] -= tr[3 + i];
            e[i] = (k == 0 ? xb[i] - xa[i] : k == 1 ? xc[i] - xb[i] : xa[i] - xc[i]);
        }
        depth = fmax(depth, -fps_col_dot(b, tr));
        longest = fmax(longest, sqrt(fps_col_dot(e, e)));
    }
    tr[6] = depth;
    tr[7] = 2.0 * longest + depth;
}

/* Triangle t's rest data: its orientation and the column under it, its edge lengths added to
 * *edge_sum. */
static void triangle_rest(fps_collide* c, const double* xr, uint32_t t, double* edge_sum)
{
    const uint32_t* tri = c->m->triangles + 3u * t;
    double xa[3], xb[3], xc[3], nrm[3];
    fps_col_load(xr, c->N, tri[0], xa);
    fps_col_load(xr, c->N, tri[1], xb);
    fps_col_load(xr, c->N, tri[2], xc);
    add_edge_lengths(xa, xb, xc, edge_sum);
    fps_collide_normal(xa, xb, xc, 1.0, nrm);
    c->tri_sign[t] = triangle_sign(c, xr, tri, xa, xb, xc, nrm);
    triangle_column(c, xr, tri, xa, xb, xc, nrm, c->tri_sign[t],
                    c->tri_rest + FPS_COLLIDE_TRI_REST * (size_t)t);
}

/* Which bones are near (fps_collide_same_part): a bone and those that share a joint with it. */
static void bones_near(fps_collide* c)
{
    const ps_model* m = c->m;
    for (uint32_t a = 0; a < c->bone_count; ++a)
        for (uint32_t b = 0; b < c->bone_count; ++b) {
            const ps_bone* x = &m->bones[a];
            const ps_bone* y = &m->bones[b];
            uint32_t jx[4] = {x->joint, x->child, x->end[0], x->end[1]};
            uint32_t jy[4] = {y->joint, y->child, y->end[0], y->end[1]};
            int near = a == b;
            for (int i = 0; i < 4 && !near; ++i)
                for (int k = 0; k < 4 && !near; ++k) near = jx[i] == jy[k];
            c->bone_near[(size_t)a * c->bone_count + b] = (uint8_t)near;
        }
}

/* The body-part test as a word per triangle (up to 64 bones): the near sets of its corners'
 * bones. */
static sinew_result triangle_near_sets(fps_collide* c)
{
    const ps_model* m = c->m;
    c->tri_near = (uint64_t*)sinew_host_calloc(c->host, c->tri_count ? c->tri_count : 1u,
                                               sizeof(uint64_t));
    if (!c->tri_near) return oom(c->host, "its body parts");
    for (uint32_t t = 0; t < c->tri_count; ++t)
        for (int k = 0; k < 3; ++k) {
            const uint32_t bc = c->skin_bone[m->triangles[3u * t + (uint32_t)k]];
            for (uint32_t b = 0; b < c->bone_count; ++b)
                if (c->bone_near[(size_t)bc * c->bone_count + b])
                    c->tri_near[t] |= (uint64_t)1 << b;
        }
    return SINEW_OK;
}

/* The body parts (fps_collide_same_part): each skin vertex's bone and which bones are near. */
static sinew_result body_parts(fps_collide* c)
{
    const sinew_host_api* host = c->host;
    const ps_model* m = c->m;
    c->bone_count = m->bone_count;
    c->skin_bone = (uint32_t*)sinew_host_calloc(host, c->n, sizeof(uint32_t));
    c->bone_near =
        (uint8_t*)sinew_host_calloc(host, (size_t)c->bone_count * c->bone_count + 1u, 1u);
    if (!c->skin_bone || !c->bone_near) return oom(host, "its body parts");
    for (uint32_t v = 0; v < c->n; ++v)
        c->skin_bone[v] = m->vertex_bone[v] < m->bone_count ? m->vertex_bone[v] : 0u;
    bones_near(c);
    return c->bone_count <= 64u ? triangle_near_sets(c) : SINEW_OK;
}

/* Everything at rest (positions xr, NULL when they could not be allocated): the arrays, the
 * rows, the tets' volumes, the triangles' orientations and columns, the body parts, the
 * lengths relative to the mean edge, and the skip lists. */
static sinew_result build_rest(fps_collide* c, const fps_collide_desc* desc, const double* xr)
{
    const ps_model* m = c->m;
    bool arrays = alloc_arrays(c);
    if (!xr || !arrays) return oom(c->host, "its arrays");
    for (uint32_t v = 0; v < c->n; ++v) c->pair_tri[v] = FPS_COLLIDE_NONE;
    sinew_result r = map_rows(c, desc->row_of);
    if (r != SINEW_OK) return r;
    tet_rest_volumes(c, xr);
    /* Sec. 6: delta_col is relative to the mean edge length of the skin, and so are the hash's
     * cubes: prism boxes reach down to the bone, so smaller cubes list each box in many cubes
     * and larger ones lengthen every query's bucket (README.md has the figures, with where a
     * step with collisions goes). */
    double edge_sum = 0.0;
    for (uint32_t t = 0; t < c->tri_count; ++t) triangle_rest(c, xr, t, &edge_sum);
    for (uint32_t v = 0; v < c->n; ++v)
        for (int k = 0; k < 3; ++k)
            c->skin_rest[3u * v + (uint32_t)k] = m->rest[3u * v + (uint32_t)k];
    /* the body parts (fps_collide_same_part): bones that share a joint are near */
    c->same_part = desc->same_part != 0;
    r = body_parts(c);
    if (r != SINEW_OK) return r;
    c->edge = c->tri_count ? edge_sum / (3.0 * c->tri_count) : 0.0;
    c->retain = (desc->retain > 0.0 ? desc->retain : 0.25) * c->edge;
    c->margin *= c->edge;
    c->cell = c->edge > 0.0 && isfinite(c->edge) ? 1.5 * c->edge : 1.0;
    return rest_skips(c, xr);
}

sinew_result fps_collide_create(const sinew_host_api* host, const fps_collide_desc* desc,
                                fps_collide** out)
{
    if (!host || !desc || !out)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "fps collisions: NULL %s",
                               !desc ? "description" : !out ? "output" : "host");
    *out = NULL;
    sinew_result r = check_desc(host, desc);
    if (r != SINEW_OK) return r;
    const ps_model* m = desc->model;
    fps_collide* c = (fps_collide*)sinew_host_calloc(host, 1, sizeof *c);
    if (!c) return oom(host, "its state");
    c->host = host;
    c->m = m;
    c->n = m->n;
    c->N = 2u * m->n;
    c->n_free = desc->free_count;
    c->tri_count = m->triangle_count;
    c->tet_count = m->tet_count;
    c->weight = desc->weight;
    c->margin = desc->margin; /* relative; times the mean edge length below */
    double* xr = rest_columns(host, m, c->N);
    r = build_rest(c, desc, xr);
    sinew_host_free(host, xr);
    c->skinning = desc->skinning;
    if (r == SINEW_OK && c->skinning) r = capsule_build(c);
    if (r != SINEW_OK) {
        fps_collide_destroy(c);
        return r;
    }
    *out = c;
    return SINEW_OK;
}

/* ---- per step ---- */

typedef struct detect_job {
    fps_collide* c;
    fps_collide_scene scene;
} detect_job;

static void boxes_job(void* data, uint32_t begin, uint32_t end)
{
    fps_collide* c = (fps_collide*)data;
    for (uint32_t p = begin; p < end; ++p) fps_collide_prism_box(c->x, c->ldx, c->tets_r, p, c->boxes);
}

static void detect_range(void* data, uint32_t begin, uint32_t end)
{
    detect_job* job = (detect_job*)data;
    fps_collide* c = job->c;
    for (uint32_t v = begin; v < end; ++v) {
        int kept = 0;
        c->next_tri[v] = fps_collide_detect_vertex(&job->scene, v, c->pair_tri[v], &kept);
        c->next_kept[v] = (uint8_t)kept;
        if (c->skinning) c->cap_next[v] = capsule_detect(c, v, c->cap_bone[v]);
    }
}

/* Grows the per-pair arrays to hold `count` pairs. */
static int reserve_pairs(fps_collide* c, uint32_t count)
{
    if (count <= c->pair_capacity && c->pair_v) return 1;
    const sinew_host_api* host = c->host;
    uint32_t cap = count + count / 2u + 64u;
    uint32_t* pv = (uint32_t*)sinew_host_calloc(host, cap, sizeof(uint32_t));
    uint32_t* pr = (uint32_t*)sinew_host_calloc(host, cap, sizeof(uint32_t));
    uint32_t* pt = (uint32_t*)sinew_host_calloc(host, cap, sizeof(uint32_t));
    double* contrib = (double*)sinew_host_calloc(host, 12u * (size_t)cap, sizeof(double));
    uint32_t* gather = (uint32_t*)sinew_host_calloc(host, 4u * (size_t)cap, sizeof(uint32_t));
    uint32_t* a_col = (uint32_t*)sinew_host_calloc(host, 10u * (size_t)cap, sizeof(uint32_t));
    double* a_val = (double*)sinew_host_calloc(host, 10u * (size_t)cap, sizeof(double));
    uint32_t* t_col = (uint32_t*)sinew_host_calloc(host, 10u * (size_t)cap, sizeof(uint32_t));
    double* t_val = (double*)sinew_host_calloc(host, 10u * (size_t)cap, sizeof(double));
    if (!pv || !pr || !pt || !contrib || !gather || !a_col || !a_val || !t_col || !t_val) {
        void* arrays[] = {pv, pr, pt, contrib, gather, a_col, a_val, t_col, t_val};
        for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) sinew_host_free(host, arrays[i]);
        return 0;
    }
    void* old[] = {c->pair_v, c->pair_row, c->pair_t, c->contrib, c->gather, c->a_col, c->a_val, c->t_col, c->t_val};
    for (size_t i = 0; i < sizeof old / sizeof old[0]; ++i) sinew_host_free(host, old[i]);
    c->pair_v = pv;
    c->pair_row = pr;
    c->pair_t = pt;
    c->contrib = contrib;
    c->gather = gather;
    c->a_col = a_col;
    c->a_val = a_val;
    c->t_col = t_col;
    c->t_val = t_val;
    c->pair_capacity = cap;
    return 1;
}

/* The pair list in vertex order from pair_tri. */
static void list_pairs(fps_collide* c)
{
    uint32_t P = 0;
    for (uint32_t v = 0; v < c->n; ++v) {
        if (c->pair_tri[v] == FPS_COLLIDE_NONE) continue;
        c->pair_v[P] = v;
        c->pair_row[P] = c->skin_row[v];
        c->pair_t[P] = c->pair_tri[v];
        ++P;
    }
    c->pair_count = P;
}

/* The capsule contacts in vertex order from cap_bone (none without the limb capsules). */
static void list_capsule_contacts(fps_collide* c)
{
    uint32_t C = 0;
    if (c->skinning)
        for (uint32_t v = 0; v < c->n; ++v) {
            if (c->cap_bone[v] == FPS_COLLIDE_NONE) continue;
            c->cap_v[C] = v;
            c->cap_b[C] = c->cap_bone[v];
            c->cap_r[C] = c->skin_row[v];
            ++C;
        }
    c->cap_count = C;
}

/* The gather lists of the right-hand side: per free row, its slots in pair order (t_ptr is
 * the cursor). */
static void gather_lists(fps_collide* c)
{
    const uint32_t nf = c->n_free, P = c->pair_count;
    const size_t S = c->pair_capacity;
    memset(c->gather_ptr, 0, ((size_t)nf + 1u) * sizeof(uint32_t));
    for (uint32_t p = 0; p < P; ++p) {
        const uint32_t* tri = c->tris_r + 3u * c->pair_t[p];
        uint32_t ends[4] = {c->pair_row[p], tri[0], tri[1], tri[2]};
        for (int s = 0; s < 4; ++s)
            if (ends[s] < nf) c->gather_ptr[ends[s] + 1]++;
    }
    for (uint32_t i = 0; i < nf; ++i) c->gather_ptr[i + 1] += c->gather_ptr[i];
    /* t_ptr as the cursor (then shifted back) */
    memcpy(c->t_ptr, c->gather_ptr, ((size_t)nf + 1u) * sizeof(uint32_t));
    for (uint32_t p = 0; p < P; ++p) {
        const uint32_t* tri = c->tris_r + 3u * c->pair_t[p];
        uint32_t ends[4] = {c->pair_row[p], tri[0], tri[1], tri[2]};
        for (uint32_t s = 0; s < 4; ++s)
            if (ends[s] < nf) c->gather[c->t_ptr[ends[s]]++] = (uint32_t)(3u * s * S) + p;
    }
}

/* A_col's entries bucketed by row into t_col and t_val, the pairs' in pair order, then a
 * diagonal entry per capsule contact: afterwards t_ptr[i] .. t_ptr[i + 1] is row i. */
static void bucket_entries(fps_collide* c)
{
    const uint32_t nf = c->n_free, P = c->pair_count, C = c->cap_count;
    memset(c->t_ptr, 0, ((size_t)nf + 2u) * sizeof(uint32_t));
    uint32_t rows[10], cols[10];
    double vals[10];
    for (uint32_t p = 0; p < P; ++p) {
        uint32_t k = fps_collide_pair_entries(c->pair_row[p], c->tris_r + 3u * c->pair_t[p],
                                              c->weight, nf, rows, cols, vals);
        for (uint32_t e = 0; e < k; ++e) c->t_ptr[rows[e] + 2]++;
    }
    for (uint32_t q = 0; q < C; ++q) c->t_ptr[c->skin_row[c->cap_v[q]] + 2]++;
    for (uint32_t i = 0; i < nf; ++i) c->t_ptr[i + 2] += c->t_ptr[i + 1];
    for (uint32_t p = 0; p < P; ++p) {
        uint32_t k = fps_collide_pair_entries(c->pair_row[p], c->tris_r + 3u * c->pair_t[p],
                                              c->weight, nf, rows, cols, vals);
        for (uint32_t e = 0; e < k; ++e) {
            uint32_t at = c->t_ptr[rows[e] + 1]++;
            c->t_col[at] = cols[e];
            c->t_val[at] = vals[e];
        }
    }
    /* a capsule contact: the point constraint (w / 2) |x_v - p|^2, (v, v) += w */
    for (uint32_t q = 0; q < C; ++q) {
        uint32_t row = c->skin_row[c->cap_v[q]];
        uint32_t at = c->t_ptr[row + 1]++;
        c->t_col[at] = row;
        c->t_val[at] = c->weight;
    }
}

/* Sorts the bucketed entries of row i by column (stable, so duplicates keep pair order). */
static void sort_bucket(fps_collide* c, uint32_t i)
{
    uint32_t b = c->t_ptr[i], e = c->t_ptr[i + 1];
    for (uint32_t j = b + 1; j < e; ++j) {
        uint32_t col = c->t_col[j];
        double val = c->t_val[j];
        uint32_t k = j;
        while (k > b && c->t_col[k - 1] > col) {
            c->t_col[k] = c->t_col[k - 1];
            c->t_val[k] = c->t_val[k - 1];
            --k;
        }
        c->t_col[k] = col;
        c->t_val[k] = val;
    }
}

/* A_col from the bucketed entries: each row sorted by column and its duplicates summed. */
static void merge_rows(fps_collide* c)
{
    uint32_t out = 0;
    c->a_ptr[0] = 0;
    for (uint32_t i = 0; i < c->n_free; ++i) {
        sort_bucket(c, i);
        for (uint32_t j = c->t_ptr[i]; j < c->t_ptr[i + 1]; ++j) {
            if (out > c->a_ptr[i] && c->a_col[out - 1] == c->t_col[j]) {
                c->a_val[out - 1] += c->t_val[j];
            } else {
                c->a_col[out] = c->t_col[j];
                c->a_val[out] = c->t_val[j];
                ++out;
            }
        }
        c->a_ptr[i + 1] = out;
    }
}

/* The pair list, the gather lists of the right-hand side and A_col from pair_tri. */
static void assemble(fps_collide* c)
{
    list_pairs(c);
    list_capsule_contacts(c);
    gather_lists(c);
    /* A_col: the pairs' entries bucketed by row (pair order), each row sorted by column
     * (stable, so duplicates are summed in pair order) and merged. */
    bucket_entries(c);
    merge_rows(c);
}

/* The prisms' boxes and hash at the positions c->x and, with the limb capsules, each bone's
 * frame and box at the step's pose and the capsules' hash. */
static sinew_result build_hashes(fps_collide* c)
{
    const sinew_host_api* host = c->host;
    sinew_host_parallel_for(host, boxes_job, c, c->tri_count, 512);
    sinew_result r = sinew_spatial_hash_build(host, &c->hash, c->boxes, c->tri_count, c->cell,
                                              FPS_COLLIDE_MAX_CELLS);
    if (r != SINEW_OK || !c->skinning) return r;
    const size_t frames = 9u * (size_t)c->bone_count * sizeof(double);
    if (c->cap_prev_set) memcpy(c->cap_prev, c->cap_pose, frames);
    for (uint32_t b = 0; b < c->bone_count; ++b) {
        if (c->cap_has[b]) capsule_pose(c, b);
        capsule_box(c, b);
    }
    if (!c->cap_prev_set) memcpy(c->cap_prev, c->cap_pose, frames);
    c->cap_prev_set = 1;
    r = sinew_spatial_hash_build(host, &c->cap_hash, c->cap_boxes, c->bone_count, c->cap_cell,
                                 4096u);
    if (r == SINEW_OK) c->cap_view = sinew_spatial_hash_get_view(&c->cap_hash);
    return r;
}

/* What the detection of each vertex reads (fps_collide_scene) at the positions c->x. */
static void detect_scene(const fps_collide* c, fps_collide_scene* scene)
{
    scene->x = c->x;
    scene->ldx = c->ldx;
    scene->tets = c->tets_r;
    scene->triangles = c->tris_r;
    scene->skin_row = c->skin_row;
    scene->tri_sign = c->tri_sign;
    scene->skip_ptr = c->skip_ptr;
    scene->skip = c->skip;
    scene->hash = sinew_spatial_hash_get_view(&c->hash);
    scene->retain = c->retain;
    scene->skin_rest = c->skin_rest;
    scene->tri_rest = c->tri_rest;
    scene->skin_bone = c->same_part ? NULL : c->skin_bone;
    scene->tri_skin = c->m->triangles;
    scene->bone_near = c->bone_near;
    scene->bone_count = c->bone_count;
    scene->tri_near = c->same_part ? NULL : c->tri_near;
    /* global pairs only: also drop pairs whose anchor went through (fps_collide_anchor_through)
     * by more than an eighth of a mean edge length (delta_col / 2): deeper allowances let thin
     * parts (fingers on a thigh) be lifted out by more than they are thick
     * (docs/decisions/2026-11-27-fps-contact-depth.md). */
    scene->base_row = c->same_part ? NULL : c->base_row;
    scene->base_depth = FPS_COLLIDE_ANCHOR_DEPTH * c->retain;
    scene->tet_rest = c->same_part ? NULL : c->tet_rest;
}

/* Counts the detection's result: the pairs (*count) and capsule contacts (*caps) it found,
 * the pairs newly detected and retained (c->detected, c->retained); returns whether it
 * differs from the current pairs and contacts. */
static int count_detected(fps_collide* c, uint32_t* count, uint32_t* caps)
{
    uint32_t detected = 0, retained = 0;
    int differs = 0;
    *count = *caps = 0;
    for (uint32_t v = 0; v < c->n; ++v) {
        uint32_t t = c->next_tri[v];
        if (t != c->pair_tri[v]) differs = 1;
        if (t == FPS_COLLIDE_NONE) continue;
        ++*count;
        if (c->next_kept[v]) ++retained;
        else ++detected;
    }
    c->detected = detected;
    c->retained = retained;
    if (c->skinning)
        for (uint32_t v = 0; v < c->n; ++v) {
            if (c->cap_next[v] != c->cap_bone[v]) differs = 1;
            if (c->cap_next[v] != FPS_COLLIDE_NONE) ++*caps;
        }
    return differs;
}

sinew_result fps_collide_update(fps_collide* c, const double* x, size_t ldx, int* changed)
{
    if (changed) *changed = 0;
    if (!c || !x || !changed)
        return sinew_host_fail(c ? c->host : NULL, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps collisions: update with a NULL %s",
                               !c ? "state" : !x ? "position array" : "flag");
    if (ldx < c->N)
        return sinew_host_fail(c->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps collisions: position stride %zu below the %u tissue vertices",
                               ldx, c->N);
    c->x = x;
    c->ldx = ldx;
    sinew_result r = build_hashes(c);
    if (r != SINEW_OK) {
        fps_collide_reset(c);
        *changed = 1;
        return r;
    }
    detect_job job;
    job.c = c;
    detect_scene(c, &job.scene);
    sinew_host_parallel_for(c->host, detect_range, &job, c->n, 256);
    uint32_t count, caps;
    if (!count_detected(c, &count, &caps)) return SINEW_OK;
    /* the capsule contacts take one triplet of A_col each: room as for that many pairs */
    if (!reserve_pairs(c, count + caps)) {
        fps_collide_reset(c);
        *changed = 1;
        return oom(c->host, "the collision pairs");
    }
    memcpy(c->pair_tri, c->next_tri, (size_t)c->n * sizeof(uint32_t));
    if (c->skinning) memcpy(c->cap_bone, c->cap_next, (size_t)c->n * sizeof(uint32_t));
    assemble(c);
    *changed = 1;
    return SINEW_OK;
}

sinew_crs fps_collide_matrix(const fps_collide* c)
{
    sinew_crs a;
    memset(&a, 0, sizeof a);
    if (!c) return a;
    a.rows = c->n_free;
    a.ptr = c->a_ptr;
    a.col = c->a_col;
    a.val = c->a_val;
    return a;
}

static void pair_rhs_range(void* data, uint32_t begin, uint32_t end)
{
    fps_collide* c = (fps_collide*)data;
    for (uint32_t p = begin; p < end; ++p)
        fps_collide_pair_rhs(c->x, c->ldx, c->pair_row[p], c->tris_r + 3u * c->pair_t[p],
                             c->tri_sign[c->pair_t[p]], c->weight, c->margin, c->n_free, p,
                             c->pair_capacity, c->contrib);
}

static void rhs_row_range(void* data, uint32_t begin, uint32_t end)
{
    fps_collide* c = (fps_collide*)data;
    for (uint32_t s = begin; s < end; ++s)
        fps_collide_rhs_row(s, c->gather_ptr, c->gather, c->contrib, c->pair_capacity, c->extra,
                            c->n_free);
}

int fps_collide_rhs(fps_collide* c, const double* x, size_t ldx)
{
    if (!c || !x || ldx < c->N || (c->pair_count == 0 && c->cap_count == 0)) return 0;
    c->x = x;
    c->ldx = ldx;
    if (c->pair_count) {
        sinew_host_parallel_for(c->host, pair_rhs_range, c, c->pair_count, 256);
        sinew_host_parallel_for(c->host, rhs_row_range, c, c->n_free, 1024);
    } else {
        memset(c->extra, 0, 3u * (size_t)c->n_free * sizeof(double));
    }
    /* the capsule contacts: w p on the vertex's row (few: on the calling thread) */
    for (uint32_t q = 0; q < c->cap_count; ++q) {
        double p[3];
        capsule_target(c, c->cap_v[q], c->cap_b[q], p);
        uint32_t row = c->skin_row[c->cap_v[q]];
        for (int i = 0; i < 3; ++i) c->extra[(size_t)i * c->n_free + row] += c->weight * p[i];
    }
    return 1;
}

/* The pairs' pushes: the vertex takes 1 - share of its push to the plane, each corner of the
 * triangle share of it the other way; a corner pushed by several pairs takes their mean
 * (summed into extra by skin vertex, counted in pt_count). Returns the pairs that pushed. */
static uint32_t pair_pushes(fps_collide* c, const double* x, size_t ldx, double* t, double share)
{
    const size_t ld = c->n_free;
    uint32_t moved = 0;
    memset(c->pt_count, 0, (size_t)c->n * sizeof(uint32_t));
    for (int i = 0; i < 3; ++i) memset(c->extra + (size_t)i * ld, 0, (size_t)c->n * sizeof(double));
    for (uint32_t q = 0; q < c->pair_count; ++q) {
        uint32_t tri = c->pair_t[q];
        const uint32_t* rows = c->tris_r + 3u * tri;
        double xv[3], xk[3][3], p[3];
        fps_col_load(t, ldx, c->pair_row[q], xv);
        for (int k = 0; k < 3; ++k) fps_col_load(x, ldx, rows[k], xk[k]);
        if (fps_collide_project(xv, xk[0], xk[1], xk[2], c->tri_sign[tri], c->margin, p) >=
            c->margin)
            continue;
        for (int i = 0; i < 3; ++i) {
            double d = p[i] - xv[i];
            t[(size_t)i * ldx + c->pair_row[q]] = xv[i] + (1.0 - share) * d;
            for (int k = 0; k < 3; ++k) c->extra[(size_t)i * ld + c->m->triangles[3u * tri + (uint32_t)k]] -= share * d;
        }
        for (int k = 0; k < 3; ++k) c->pt_count[c->m->triangles[3u * tri + (uint32_t)k]]++;
        ++moved;
    }
    for (uint32_t v = 0; v < c->n && moved; ++v)
        if (c->pt_count[v])
            for (int i = 0; i < 3; ++i)
                t[(size_t)i * ldx + c->skin_row[v]] += c->extra[(size_t)i * ld + v] / c->pt_count[v];
    return moved;
}

uint32_t fps_collide_point_targets(fps_collide* c, const double* x, size_t ldx, double* t,
                                   double share)
{
    if (!c || !x || !t || ldx < c->N || c->n_free < c->n) return 0;
    uint32_t moved = pair_pushes(c, x, ldx, t, share);
    c->x = t;
    c->ldx = ldx;
    for (uint32_t q = 0; q < c->cap_count; ++q) {
        double p[3];
        uint32_t row = c->skin_row[c->cap_v[q]];
        capsule_target(c, c->cap_v[q], c->cap_b[q], p);
        for (int i = 0; i < 3; ++i) t[(size_t)i * ldx + row] = p[i];
        ++moved;
    }
    return moved;
}

/* Pair q's contact made inelastic: its vertex loses its speed away from its triangle
 * (relative to the corners' mean) along the triangle's normal; the corners keep theirs (taking
 * half from them pulled the torso's skin out into the arm pressed against it). */
static void pair_stop(const fps_collide* c, uint32_t q, const double* x, size_t ldx, double* v)
{
    const uint32_t tri = c->pair_t[q], row = c->pair_row[q];
    if (row >= c->n_free) return;
    const uint32_t* rows = c->tris_r + 3u * tri;
    double xk[3][3], n[3], rel = 0.0;
    for (int k = 0; k < 3; ++k) fps_col_load(x, ldx, rows[k], xk[k]);
    if (!fps_collide_normal(xk[0], xk[1], xk[2], c->tri_sign[tri], n)) return;
    for (int i = 0; i < 3; ++i) {
        double mean = 0.0;
        for (int k = 0; k < 3; ++k) mean += v[(size_t)i * ldx + rows[k]];
        rel += (v[(size_t)i * ldx + row] - mean / 3.0) * n[i];
    }
    if (rel > 0.0)
        for (int i = 0; i < 3; ++i) v[(size_t)i * ldx + row] -= rel * n[i];
}

/* Capsule contact q made inelastic: the vertex's speed away from the tube's axis, relative to
 * the tube's own motion at the vertex (the point of the previous step's frame with the
 * vertex's coordinates in the current one, over the step), is removed. */
static void capsule_stop(const fps_collide* c, uint32_t q, const double* x, size_t ldx,
                         double* v, double per_step)
{
    const uint32_t b = c->cap_b[q], row = c->skin_row[c->cap_v[q]];
    const double* f = c->cap_pose + 9u * (size_t)b;
    const double* g = c->cap_prev + 9u * (size_t)b;
    double xv[3], t, r, dir[3], d[3], e2[3], e2p[3];
    fps_col_load(x, ldx, row, xv);
    if (!(capsule_eval(c, b, f, xv, &t, &r, dir) > 0.0) || !(r > 0.0)) return;
    fps_col_cross(f + 3, f + 6, e2);
    fps_col_cross(g + 3, g + 6, e2p);
    for (int i = 0; i < 3; ++i) d[i] = xv[i] - f[i];
    const double a = fps_col_dot(d, f + 3), w1 = fps_col_dot(d, f + 6), w2 = fps_col_dot(d, e2);
    double rel = 0.0;
    for (int i = 0; i < 3; ++i) {
        double was = g[i] + a * g[3 + i] + w1 * g[6 + i] + w2 * e2p[i];
        rel += (v[(size_t)i * ldx + row] - per_step * (xv[i] - was)) * dir[i];
    }
    if (rel > 0.0)
        for (int i = 0; i < 3; ++i) v[(size_t)i * ldx + row] -= rel * dir[i];
}

void fps_collide_stop_separation(const fps_collide* c, const double* x, size_t ldx, double* v,
                                 double per_step)
{
    if (!c || !x || !v || ldx < c->N) return;
    for (uint32_t q = 0; q < c->pair_count; ++q) pair_stop(c, q, x, ldx, v);
    if (c->cap_prev_set)
        for (uint32_t q = 0; q < c->cap_count; ++q) capsule_stop(c, q, x, ldx, v, per_step);
}

const double* fps_collide_extra(const fps_collide* c)
{
    return c ? c->extra : NULL;
}

size_t fps_collide_extra_ld(const fps_collide* c)
{
    return c ? c->n_free : 0u;
}

void fps_collide_reset(fps_collide* c)
{
    if (!c) return;
    for (uint32_t v = 0; v < c->n; ++v) c->pair_tri[v] = FPS_COLLIDE_NONE;
    c->pair_count = 0;
    c->cap_count = 0;
    if (c->cap_bone)
        for (uint32_t v = 0; v < c->n; ++v) c->cap_bone[v] = FPS_COLLIDE_NONE;
    c->detected = c->retained = 0;
    c->cap_prev_set = 0;
    memset(c->a_ptr, 0, ((size_t)c->n_free + 1u) * sizeof(uint32_t));
    memset(c->gather_ptr, 0, ((size_t)c->n_free + 1u) * sizeof(uint32_t));
    /* the scratch that grew with the poses since (the hash of the prisms' boxes, the pair
     * arrays) goes too: after a teleport the state holds what the new pose needs, not the
     * largest pose it ever saw */
    sinew_spatial_hash_free(c->host, &c->hash);
    void* pairs[] = {c->pair_v, c->pair_row, c->pair_t, c->contrib, c->gather,
                     c->a_col, c->a_val, c->t_col, c->t_val};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; ++i) sinew_host_free(c->host, pairs[i]);
    c->pair_v = c->pair_row = c->pair_t = c->gather = c->a_col = c->t_col = NULL;
    c->contrib = c->a_val = c->t_val = NULL;
    c->pair_capacity = 0;
}

uint32_t fps_collide_pair_count(const fps_collide* c)
{
    return c ? c->pair_count : 0u;
}

const uint32_t* fps_collide_pair_vertices(const fps_collide* c)
{
    return c ? c->pair_v : NULL;
}

const uint32_t* fps_collide_pair_triangles(const fps_collide* c)
{
    return c ? c->pair_t : NULL;
}

void fps_collide_free_of_capsules(fps_collide* c, const uint32_t* vertices, uint32_t count)
{
    if (!c || !c->cap_skip) return;
    for (uint32_t k = 0; k < count; ++k)
        if (vertices[k] < c->n)
            memset(c->cap_skip + (size_t)vertices[k] * c->bone_count, 1, c->bone_count);
}

void fps_collide_free_of_capsule(fps_collide* c, uint32_t vertex, uint32_t bone)
{
    if (!c || !c->cap_skip || vertex >= c->n || bone >= c->bone_count) return;
    c->cap_skip[(size_t)vertex * c->bone_count + bone] = 1;
}

uint32_t fps_collide_capsule_count(const fps_collide* c)
{
    return c ? c->cap_count : 0u;
}

void fps_collide_stats(const fps_collide* c, uint32_t* detected, uint32_t* retained)
{
    if (detected) *detected = c ? c->detected : 0u;
    if (retained) *retained = c ? c->retained : 0u;
}

double fps_collide_retain_distance(const fps_collide* c)
{
    return c ? c->retain : 0.0;
}

double fps_collide_cell_size(const fps_collide* c)
{
    return c ? c->cell : 0.0;
}

int fps_collide_skips(const fps_collide* c, uint32_t v, uint32_t triangle)
{
    if (!c || v >= c->n || triangle >= c->tri_count) return 0;
    fps_collide_scene scene;
    memset(&scene, 0, sizeof scene);
    scene.skip_ptr = c->skip_ptr;
    scene.skip = c->skip;
    scene.skin_rest = c->skin_rest;
    scene.tri_rest = c->tri_rest;
    scene.skin_bone = c->same_part ? NULL : c->skin_bone;
    scene.tri_skin = c->m->triangles;
    scene.bone_near = c->bone_near;
    scene.bone_count = c->bone_count;
    return fps_collide_skipped(&scene, v, triangle);
}

sinew_result fps_collide_get_data(const sinew_host_api* host, const fps_collide* c,
                                  fps_collide_data* out)
{
    if (!c || !out)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps collisions: get_data with a NULL %s",
                               !c ? "collision state" : "output");
    memset(out, 0, sizeof *out);
    out->n_free = c->n_free;
    out->tissue_count = c->N;
    out->triangle_count = c->tri_count;
    out->weight = c->weight;
    out->margin = c->margin;
    out->triangles = c->tris_r;
    out->sign = c->tri_sign;
    out->pair_count = c->pair_count;
    out->stride = c->pair_capacity;
    out->pair_row = c->pair_row;
    out->pair_tri = c->pair_t;
    out->gather_ptr = c->gather_ptr;
    out->gather = c->gather;
    if (c->skinning) {
        out->bone_count = c->bone_count;
        out->cap_frame = c->cap_frame;
        out->cap_radii = c->cap_R;
        out->cap_pose = c->cap_pose;
        out->cap_count = c->cap_count;
        out->cap_row = c->cap_r;
        out->cap_bone = c->cap_b;
    }
    return SINEW_OK;
}
