/* Baking the pose-independent preparation of `ps`: the volumetric skeleton, the welded skin
 * and its shrunken copy with the bone of each vertex, and the upsampling records, written
 * little-endian whatever the host's byte order. Restoring it skips the expensive steps (radii,
 * shrinking, closest points); the tetrahedra's rest data and the factor are rebuilt from it
 * deterministically, so a restored model equals a freshly prepared one bit for bit.
 * SPDX-License-Identifier: MIT
 *
 * Layout (u32/u64 unsigned, f32/f64 IEEE 754, all little-endian):
 *   u32 magic "PBK1", u32 version, u64 rig fingerprint (FNV-1a over the rig's skeleton and
 *   meshes), u32 joint_count, source_vertex_count, source_triangle_count, render_count,
 *   has_simulation_mesh (0, 1, or 2: decimated from the render mesh when baking, whose
 *   vertex and triangle counts are then the source counts), n, triangle_count, bone_count;
 *   bones: u32 joint, child, end0, end1, f64 radius; f64 joint_radius[joints];
 *   u32 joint_rep[joints]; u32 weld[source vertices]; u32 triangles[3 * triangle_count];
 *   f64 rest[6 n] (skin then base); u32 vertex_bone[2 n]; u32 shrink_iterations;
 *   f64 shrink_residual; u32 inside_count; f64 thickness, diagonal;
 *   upsampling per render vertex: u32 triangle, vertex, f32 bary[3], offset[3], normal[3];
 *   with a simulation mesh (own or decimated), per skin vertex: u32 render triangle, f32
 *   bary[3], offset[3];
 *   optional tagged sections (version 2), each at most once, each u32 tag then its fields:
 *     "PCOL" collision candidates (Sec. 5.1): u32 pair count, per pair u32 i, j, bone_i,
 *            bone_j, joint (sorted, no duplicates);
 *     "PSPL" the split of each prism (ps_split.c): u32 prism count, u8 split[count], zero
 *            padding to a multiple of 4 bytes; without it the split is chosen anew;
 *     "PSLD" skin sliding (Sec. 4.2): u32 anchor count, per anchor u32 joint0, joint1, center,
 *            f64 rest[3], axis[3], ref[3], reach; u32 record count, per record u32 vertex,
 *            joint, anchor[4], f64 weight[4], p0[3];
 *     "PSKP" the global collisions' rest skip lists (fps_collide.c): u32 n, total,
 *            offsets[n + 1] (from 0, not decreasing, to total), u32 triangle[total] (each
 *            vertex's list increasing);
 *   u32 end marker "PEND". */
#include <math.h>
#include <string.h>
#include <sinew/sinew_result_names.h>

#include "ps_internal.h"

#define PS_BAKE_END 0x444e4550u
#define PS_BAKE_TAG_COLLISIONS 0x4c4f4350u /* "PCOL" */
#define PS_BAKE_TAG_SLIDING 0x444c5350u    /* "PSLD" */
#define PS_BAKE_TAG_SKIPS 0x504b5350u      /* "PSKP" */
#define PS_BAKE_TAG_SPLIT 0x4c505350u      /* "PSPL" */

/* ---- little-endian writing, in two passes (size, then bytes) ---- */

typedef struct bake_out {
    uint8_t* data; /* NULL in the counting pass */
    size_t size;
} bake_out;

static void put_bytes_le(bake_out* o, uint64_t v, int bytes)
{
    if (o->data)
        for (int i = 0; i < bytes; ++i) o->data[o->size + (size_t)i] = (uint8_t)(v >> (8 * i));
    o->size += (size_t)bytes;
}

static void put_u32(bake_out* o, uint32_t v)
{
    put_bytes_le(o, v, 4);
}

static void put_f32(bake_out* o, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    put_bytes_le(o, u, 4);
}

static void put_f64(bake_out* o, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    put_bytes_le(o, u, 8);
}

/* ---- the rig's fingerprint: FNV-1a over the little-endian bytes of its values ---- */

typedef struct fnv {
    uint64_t h;
} fnv;

static void fnv_u32(fnv* f, uint32_t v)
{
    for (int i = 0; i < 4; ++i) {
        f->h ^= (uint8_t)(v >> (8 * i));
        f->h *= 0x100000001b3ull;
    }
}

static void fnv_floats(fnv* f, const float* v, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        uint32_t u;
        memcpy(&u, v + i, 4);
        fnv_u32(f, u);
    }
}

static uint64_t rig_fingerprint(const sinew_rig_view* rig)
{
    fnv f = {0xcbf29ce484222325ull};
    fnv_u32(&f, rig->joint_count);
    for (uint32_t j = 0; j < rig->joint_count; ++j) fnv_u32(&f, (uint32_t)rig->parents[j]);
    fnv_floats(&f, rig->bind_matrices, 16u * (size_t)rig->joint_count);
    const sinew_mesh_view* meshes[2] = {&rig->render_mesh, &rig->simulation_mesh};
    for (int k = 0; k < 2; ++k) {
        const sinew_mesh_view* m = meshes[k];
        fnv_u32(&f, m->vertex_count);
        fnv_u32(&f, m->vertex_count ? m->triangle_count : 0u);
        if (!m->vertex_count) continue;
        fnv_floats(&f, m->positions, 3u * (size_t)m->vertex_count);
        if (k == 0) fnv_floats(&f, m->normals, 3u * (size_t)m->vertex_count);
        for (size_t i = 0; i < 3u * (size_t)m->triangle_count; ++i) fnv_u32(&f, m->indices[i]);
    }
    return f.h;
}

/* The header: magic, version, the rig's fingerprint and the counts. */
static void put_header(bake_out* o, const sinew_rig_view* rig, const ps_model* m, uint64_t print)
{
    const sinew_mesh_view* sim = ps_sim_mesh(rig);
    bool has_sim = rig->simulation_mesh.vertex_count > 0;
    put_u32(o, PS_BAKE_MAGIC);
    put_u32(o, PS_BAKE_VERSION);
    put_bytes_le(o, print, 8);
    put_u32(o, m->joint_count);
    put_u32(o, m->source_vertex_count);
    put_u32(o, m->decimated_triangles ? m->decimated_triangles : sim->triangle_count);
    put_u32(o, m->render_count);
    put_u32(o, has_sim ? 1u : (m->decimated_triangles ? 2u : 0u));
    put_u32(o, m->n);
    put_u32(o, m->triangle_count);
    put_u32(o, m->bone_count);
}

/* The volumetric skeleton: bones, joint radii and joint representatives. */
static void put_skeleton(bake_out* o, const ps_model* m)
{
    for (uint32_t b = 0; b < m->bone_count; ++b) {
        put_u32(o, m->bones[b].joint);
        put_u32(o, m->bones[b].child);
        put_u32(o, m->bones[b].end[0]);
        put_u32(o, m->bones[b].end[1]);
        put_f64(o, m->bones[b].radius);
    }
    for (uint32_t j = 0; j < m->joint_count; ++j) put_f64(o, m->joint_radius[j]);
    for (uint32_t j = 0; j < m->joint_count; ++j) put_u32(o, m->joint_rep[j]);
}

/* The welded skin, its shrunken copy with each vertex's bone, and the shrinking figures. */
static void put_skin(bake_out* o, const ps_model* m)
{
    for (uint32_t v = 0; v < m->source_vertex_count; ++v) put_u32(o, m->weld[v]);
    for (size_t k = 0; k < 3u * (size_t)m->triangle_count; ++k) put_u32(o, m->triangles[k]);
    for (size_t k = 0; k < 6u * (size_t)m->n; ++k) put_f64(o, m->rest[k]);
    for (size_t k = 0; k < 2u * (size_t)m->n; ++k) put_u32(o, m->vertex_bone[k]);
    put_u32(o, m->shrink_iterations);
    put_f64(o, m->shrink_residual);
    put_u32(o, m->inside_count);
    put_f64(o, m->thickness);
    put_f64(o, m->diagonal);
}

/* The upsampling records, and with a simulation mesh (own or decimated) the restore records
 * of the skin vertices. */
static void put_upsampling(bake_out* o, const sinew_rig_view* rig, const ps_model* m)
{
    bool has_sim = rig->simulation_mesh.vertex_count > 0;
    for (uint32_t r = 0; r < m->render_count; ++r) {
        const ps_upsample* u = &m->upsample[r];
        put_u32(o, u->triangle);
        put_u32(o, u->vertex);
        for (int k = 0; k < 3; ++k) put_f32(o, u->bary[k]);
        for (int k = 0; k < 3; ++k) put_f32(o, u->offset[k]);
        for (int k = 0; k < 3; ++k) put_f32(o, u->normal[k]);
    }
    if (has_sim || m->decimated_triangles) {
        for (uint32_t i = 0; i < m->n; ++i) {
            const ps_restore* rs = &m->restore[i];
            put_u32(o, rs->triangle);
            for (int k = 0; k < 3; ++k) put_f32(o, rs->bary[k]);
            for (int k = 0; k < 3; ++k) put_f32(o, rs->offset[k]);
        }
    }
}

/* The "PCOL" section when the model has candidate pairs (Sec. 5.1), and the "PSPL" section
 * when it has a prism split. */
static void put_collisions_and_split(bake_out* o, const ps_model* m)
{
    if (m->has_collision_pairs) {
        put_u32(o, PS_BAKE_TAG_COLLISIONS);
        put_u32(o, m->collision_pair_count);
        for (uint32_t k = 0; k < m->collision_pair_count; ++k) {
            const ps_collision_pair* c = &m->collision_pairs[k];
            put_u32(o, c->i);
            put_u32(o, c->j);
            put_u32(o, c->bone_i);
            put_u32(o, c->bone_j);
            put_u32(o, c->joint);
        }
    }
    if (m->prism_split) {
        put_u32(o, PS_BAKE_TAG_SPLIT);
        put_u32(o, m->triangle_count);
        for (uint32_t p = 0; p < m->triangle_count; ++p) put_bytes_le(o, m->prism_split[p], 1);
        for (uint32_t p = m->triangle_count; p % 4u; ++p) put_bytes_le(o, 0, 1);
    }
}

/* The "PSLD" section: skin sliding's anchors and records (Sec. 4.2). */
static void put_sliding(bake_out* o, const ps_model* m)
{
    put_u32(o, PS_BAKE_TAG_SLIDING);
    put_u32(o, m->slide_anchor_count);
    for (uint32_t a = 0; a < m->slide_anchor_count; ++a) {
        const ps_slide_anchor* an = &m->slide_anchors[a];
        put_u32(o, an->joint[0]);
        put_u32(o, an->joint[1]);
        put_u32(o, an->center);
        for (int k = 0; k < 3; ++k) put_f64(o, an->rest[k]);
        for (int k = 0; k < 3; ++k) put_f64(o, an->axis[k]);
        for (int k = 0; k < 3; ++k) put_f64(o, an->ref[k]);
        put_f64(o, an->reach);
    }
    put_u32(o, m->slide_vertex_count);
    for (uint32_t i = 0; i < m->slide_vertex_count; ++i) {
        const ps_slide_vertex* v = &m->slide_vertices[i];
        put_u32(o, v->vertex);
        put_u32(o, v->joint);
        for (int k = 0; k < 4; ++k) put_u32(o, v->anchor[k]);
        for (int k = 0; k < 4; ++k) put_f64(o, v->weight[k]);
        for (int k = 0; k < 3; ++k) put_f64(o, v->p0[k]);
    }
}

/* The "PSKP" section when the model keeps the global collisions' rest skip lists. */
static void put_rest_skips(bake_out* o, const ps_model* m)
{
    if (!m->rest_skip_ptr) return;
    uint32_t total = m->rest_skip_ptr[m->n];
    put_u32(o, PS_BAKE_TAG_SKIPS);
    put_u32(o, m->n);
    put_u32(o, total);
    for (uint32_t v = 0; v <= m->n; ++v) put_u32(o, m->rest_skip_ptr[v]);
    for (uint32_t k = 0; k < total; ++k) put_u32(o, m->rest_skip[k]);
}

/* The whole blob in the layout above (counting only while o->data is NULL). */
static void serialise(bake_out* o, const sinew_rig_view* rig, const ps_model* m, uint64_t print)
{
    put_header(o, rig, m, print);
    put_skeleton(o, m);
    put_skin(o, m);
    put_upsampling(o, rig, m);
    put_collisions_and_split(o, m);
    put_sliding(o, m);
    put_rest_skips(o, m);
    put_u32(o, PS_BAKE_END);
}

sinew_result ps_bake_write(const sinew_host_api* host, const sinew_rig_view* rig,
                           const ps_model* model, const sinew_bake_writer* writer)
{
    uint64_t print = rig_fingerprint(rig);
    bake_out o = {NULL, 0};
    serialise(&o, rig, model, print);
    size_t size = o.size;
    o.data = (uint8_t*)sinew_host_alloc(host, size);
    if (!o.data)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps bake: out of memory for %zu "
                               "bytes", size);
    o.size = 0;
    serialise(&o, rig, model, print);
    sinew_result r = writer->write(o.data, size, writer->user);
    sinew_host_free(host, o.data);
    if (r != SINEW_OK)
        return sinew_host_fail(host, r, "ps bake: the writer refused %zu bytes (%s)", size,
                               sinew_result_name(r));
    return SINEW_OK;
}

/* ---- reading, every field bounds-checked ---- */

typedef struct bake_in {
    const uint8_t* data;
    size_t size;
    size_t pos;
    bool short_read;
} bake_in;

static uint64_t get_bytes_le(bake_in* in, int bytes)
{
    if (in->short_read || in->size - in->pos < (size_t)bytes) {
        in->short_read = true;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= (uint64_t)in->data[in->pos + (size_t)i] << (8 * i);
    in->pos += (size_t)bytes;
    return v;
}

static uint32_t get_u32(bake_in* in)
{
    return (uint32_t)get_bytes_le(in, 4);
}

static float get_f32(bake_in* in)
{
    uint32_t u = (uint32_t)get_bytes_le(in, 4);
    float v;
    memcpy(&v, &u, 4);
    return v;
}

static double get_f64(bake_in* in)
{
    uint64_t u = get_bytes_le(in, 8);
    double v;
    memcpy(&v, &u, 8);
    return v;
}

/* Can `count` items of `item` bytes still follow? (Checked before allocating for them.) */
static bool room_for(const bake_in* in, size_t count, size_t item)
{
    return !in->short_read && count <= (in->size - in->pos) / item;
}

#define BAD(...) sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT, "ps baked data: " __VA_ARGS__)

/* The "PCOL" section: pairs of distinct skin vertices, bones in range, the joint an end of
 * bone_i, strictly increasing (sorted and unique as written). */
static sinew_result read_collisions(const sinew_host_api* host, bake_in* in, ps_model* m)
{
    if (m->has_collision_pairs) return BAD("the collision section appears twice");
    uint32_t count = get_u32(in);
    if (!room_for(in, count, 20u)) return BAD("truncated in the collision pairs (%u)", count);
    m->collision_pairs =
        (ps_collision_pair*)sinew_host_calloc(host, count ? count : 1u, sizeof(ps_collision_pair));
    if (!m->collision_pairs)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps baked data: out of memory");
    m->has_collision_pairs = 1;
    for (uint32_t k = 0; k < count; ++k) {
        ps_collision_pair* c = &m->collision_pairs[k];
        c->i = get_u32(in);
        c->j = get_u32(in);
        c->bone_i = get_u32(in);
        c->bone_j = get_u32(in);
        c->joint = get_u32(in);
        bool ok = c->i < m->n && c->j < m->n && c->i != c->j && c->bone_i < m->bone_count &&
                  c->bone_j < m->bone_count && c->joint < m->joint_count &&
                  (m->bones[c->bone_i].end[0] == c->joint || m->bones[c->bone_i].end[1] == c->joint);
        if (ok && k > 0) {
            const uint32_t* a = &m->collision_pairs[k - 1].i;
            const uint32_t* b = &c->i;
            int q = 0;
            while (q < 5 && a[q] == b[q]) ++q;
            ok = q < 5 && a[q] < b[q];
        }
        if (!ok) return BAD("collision pair %u is out of range or out of order", k);
        m->collision_pair_count = k + 1u;
    }
    return SINEW_OK;
}

/* The offsets of the "PSKP" section: from 0, not decreasing, to total. */
static bool skip_offsets_ok(const uint32_t* ptr, uint32_t n, uint32_t total)
{
    if (ptr[0] != 0u || ptr[n] != total) return false;
    for (uint32_t v = 0; v < n; ++v)
        if (ptr[v + 1] < ptr[v]) return false;
    return true;
}

/* The "PSKP" section: the model's vertex count, offsets as above, every triangle in range
 * and each vertex's list increasing. */
static sinew_result read_rest_skips(const sinew_host_api* host, bake_in* in, ps_model* m)
{
    if (m->rest_skip_ptr) return BAD("the skip-list section appears twice");
    uint32_t n = get_u32(in), total = get_u32(in);
    if (n != m->n) return BAD("skip lists for %u vertices in a model of %u", n, m->n);
    if (!room_for(in, (size_t)n + 1u + total, 4u)) return BAD("truncated in the skip lists");
    m->rest_skip_ptr = (uint32_t*)sinew_host_calloc(host, (size_t)n + 1u, sizeof(uint32_t));
    m->rest_skip = (uint32_t*)sinew_host_calloc(host, total ? total : 1u, sizeof(uint32_t));
    if (!m->rest_skip_ptr || !m->rest_skip)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps baked data: out of memory");
    for (uint32_t v = 0; v <= n; ++v) m->rest_skip_ptr[v] = get_u32(in);
    if (!skip_offsets_ok(m->rest_skip_ptr, n, total)) return BAD("the skip lists' offsets are out of order");
    for (uint32_t v = 0; v < n; ++v)
        for (uint32_t k = m->rest_skip_ptr[v]; k < m->rest_skip_ptr[v + 1]; ++k) {
            uint32_t t = m->rest_skip[k] = get_u32(in);
            if (t >= m->triangle_count || (k > m->rest_skip_ptr[v] && t <= m->rest_skip[k - 1]))
                return BAD("skip list of vertex %u: triangle %u out of range or order", v, t);
        }
    return SINEW_OK;
}

/* The "PSPL" section: one split per prism, each below 6, zero padding to 4 bytes. */
static sinew_result read_split(const sinew_host_api* host, bake_in* in, ps_model* m)
{
    if (m->prism_split) return BAD("the split section appears twice");
    uint32_t count = get_u32(in);
    size_t padded = ((size_t)count + 3u) / 4u * 4u;
    if (count != m->triangle_count || !room_for(in, padded, 1u))
        return BAD("the split section holds %u prisms, not %u", count, m->triangle_count);
    m->prism_split = (uint8_t*)sinew_host_calloc(host, count ? count : 1u, 1u);
    if (!m->prism_split)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps baked data: out of memory");
    for (size_t p = 0; p < padded; ++p) {
        uint8_t v = in->data[in->pos++];
        if (p < count ? v >= 6u : v != 0u) return BAD("prism split %zu is out of range", p);
        if (p < count) m->prism_split[p] = v;
    }
    return SINEW_OK;
}

/* The "PSLD" section: anchors and records in range, every number finite. */
static sinew_result read_sliding(const sinew_host_api* host, bake_in* in, ps_model* m)
{
    if (m->slide_anchors) return BAD("the sliding section appears twice");
    uint32_t ac = get_u32(in);
    if (!room_for(in, ac, 92u)) return BAD("truncated in the sliding anchors (%u)", ac);
    m->slide_anchors = (ps_slide_anchor*)sinew_host_calloc(host, ac ? ac : 1u, sizeof(ps_slide_anchor));
    if (!m->slide_anchors)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps baked data: out of memory");
    for (uint32_t a = 0; a < ac; ++a) {
        ps_slide_anchor* an = &m->slide_anchors[a];
        an->joint[0] = get_u32(in);
        an->joint[1] = get_u32(in);
        an->center = get_u32(in);
        bool ok = an->joint[0] < m->joint_count && an->joint[1] < m->joint_count &&
                  an->center < m->joint_count;
        for (int k = 0; k < 3; ++k) ok = isfinite(an->rest[k] = get_f64(in)) && ok;
        for (int k = 0; k < 3; ++k) ok = isfinite(an->axis[k] = get_f64(in)) && ok;
        for (int k = 0; k < 3; ++k) ok = isfinite(an->ref[k] = get_f64(in)) && ok;
        ok = isfinite(an->reach = get_f64(in)) && ok;
        if (!ok) return BAD("sliding anchor %u is out of range or not finite", a);
    }
    m->slide_anchor_count = ac;
    uint32_t vc = get_u32(in);
    if (!room_for(in, vc, 80u)) return BAD("truncated in the sliding records (%u)", vc);
    m->slide_vertices = (ps_slide_vertex*)sinew_host_calloc(host, vc ? vc : 1u, sizeof(ps_slide_vertex));
    if (!m->slide_vertices)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps baked data: out of memory");
    for (uint32_t i = 0; i < vc; ++i) {
        ps_slide_vertex* v = &m->slide_vertices[i];
        v->vertex = get_u32(in);
        v->joint = get_u32(in);
        bool ok = v->vertex >= m->n && v->vertex < 2u * m->n && v->joint < m->joint_count;
        for (int k = 0; k < 4; ++k) ok = (v->anchor[k] = get_u32(in)) < ac && ok;
        for (int k = 0; k < 4; ++k) ok = isfinite(v->weight[k] = get_f64(in)) && ok;
        for (int k = 0; k < 3; ++k) ok = isfinite(v->p0[k] = get_f64(in)) && ok;
        if (!ok) return BAD("sliding record %u is out of range or not finite", i);
    }
    m->slide_vertex_count = vc;
    return SINEW_OK;
}

/* The header: magic, version, the rig's fingerprint and counts that match the rig; sets the
 * model's counts. *has_sim: restore records follow the upsampling records. */
static sinew_result read_header(const sinew_host_api* host, const sinew_rig_view* rig,
                                bake_in* in, ps_model* m, bool* has_sim)
{
    const sinew_mesh_view* sim = ps_sim_mesh(rig);
    *has_sim = rig->simulation_mesh.vertex_count > 0;
    uint32_t magic = get_u32(in), version = get_u32(in);
    if (in->short_read) return BAD("%zu bytes are too few for a header", in->size);
    if (magic != PS_BAKE_MAGIC) return BAD("wrong magic number 0x%08x", magic);
    if (version != PS_BAKE_VERSION)
        return BAD("format version %u, this build reads version %u", version, PS_BAKE_VERSION);
    uint64_t print = get_bytes_le(in, 8);
    uint32_t jc = get_u32(in), svc = get_u32(in), stc = get_u32(in), rc = get_u32(in);
    uint32_t hs = get_u32(in), n = get_u32(in), tc = get_u32(in), bc = get_u32(in);
    if (in->short_read) return BAD("truncated in the header");
    if (print != rig_fingerprint(rig))
        return BAD("made for a different rig (its skeleton or meshes differ)");
    /* hs 2: a simulation mesh decimated from the render mesh at bake time (ps_decimate.c);
     * the blob carries everything the model needs of it. */
    bool decimated = hs == 2u && !*has_sim;
    if (decimated) {
        if (svc == 0 || svc > rig->render_mesh.vertex_count || stc == 0 || stc > 4u * svc)
            return BAD("a decimated mesh of %u vertices and %u triangles for a render mesh of %u "
                       "vertices", svc, stc, rig->render_mesh.vertex_count);
        m->decimated_triangles = stc;
        *has_sim = true; /* restore records follow */
    }
    if (jc != rig->joint_count || rc != rig->render_mesh.vertex_count ||
        (!decimated && (svc != sim->vertex_count || stc != sim->triangle_count ||
                        hs != (*has_sim ? 1u : 0u))))
        return BAD("counts (%u joints, %u/%u simulated vertices/triangles, %u render vertices) "
                   "do not match the rig", jc, svc, stc, rc);
    if (n == 0 || n > svc || tc > stc || bc == 0 || bc > jc)
        return BAD("inconsistent sizes: %u skin vertices, %u triangles, %u bones", n, tc, bc);
    m->joint_count = jc;
    m->joint_rest = rig->bind_matrices;
    m->source_vertex_count = svc;
    m->n = n;
    m->triangle_count = tc;
    m->bone_count = bc;
    m->render_count = rc;
    return SINEW_OK;
}

/* Allocates the model's arrays for the header's counts, once the bones are known to fit. */
static sinew_result alloc_model(const sinew_host_api* host, const bake_in* in, ps_model* m,
                                bool has_sim)
{
    uint32_t jc = m->joint_count, svc = m->source_vertex_count, n = m->n;
    uint32_t tc = m->triangle_count, bc = m->bone_count, rc = m->render_count;
    if (!room_for(in, bc, 24u)) return BAD("truncated in the bones");
    m->bones = (ps_bone*)sinew_host_calloc(host, bc, sizeof(ps_bone));
    m->joint_radius = (double*)sinew_host_calloc(host, jc, sizeof(double));
    m->joint_rep = (uint32_t*)sinew_host_calloc(host, jc, sizeof(uint32_t));
    m->weld = (uint32_t*)sinew_host_calloc(host, svc, sizeof(uint32_t));
    m->triangles = (uint32_t*)sinew_host_calloc(host, tc ? tc : 1u, 3u * sizeof(uint32_t));
    m->rest = (double*)sinew_host_calloc(host, n, 6u * sizeof(double));
    m->vertex_bone = (uint32_t*)sinew_host_calloc(host, n, 2u * sizeof(uint32_t));
    m->upsample = (ps_upsample*)sinew_host_calloc(host, rc, sizeof(ps_upsample));
    if (has_sim) m->restore = (ps_restore*)sinew_host_calloc(host, n, sizeof(ps_restore));
    if (!m->bones || !m->joint_radius || !m->joint_rep || !m->weld || !m->triangles || !m->rest ||
        !m->vertex_bone || !m->upsample || (has_sim && !m->restore))
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps baked data: out of memory");
    return SINEW_OK;
}

/* The volumetric skeleton: bones with joints in range and non-negative finite radii, joint
 * radii, joint representatives. */
static sinew_result read_skeleton(const sinew_host_api* host, bake_in* in, ps_model* m)
{
    uint32_t jc = m->joint_count;
    for (uint32_t b = 0; b < m->bone_count; ++b) {
        ps_bone* bone = &m->bones[b];
        bone->joint = get_u32(in);
        bone->child = get_u32(in);
        bone->end[0] = get_u32(in);
        bone->end[1] = get_u32(in);
        bone->radius = get_f64(in);
        if (bone->joint >= jc || bone->child >= jc || bone->end[0] >= jc || bone->end[1] >= jc ||
            !isfinite(bone->radius) || bone->radius < 0.0)
            return BAD("bone %u names joints out of range or has radius %g", b, bone->radius);
    }
    for (uint32_t j = 0; j < jc; ++j) {
        m->joint_radius[j] = get_f64(in);
        if (!isfinite(m->joint_radius[j]) || m->joint_radius[j] < 0.0)
            return BAD("joint %u has radius %g", j, m->joint_radius[j]);
    }
    for (uint32_t j = 0; j < jc; ++j)
        if ((m->joint_rep[j] = get_u32(in)) >= jc) return BAD("joint %u: bad representative", j);
    return SINEW_OK;
}

/* The welded skin: the weld map, triangles in range and not collapsed, finite vertices (skin
 * then base), each vertex's bone, and the shrinking figures. */
static sinew_result read_skin(const sinew_host_api* host, bake_in* in, ps_model* m)
{
    uint32_t svc = m->source_vertex_count, n = m->n, tc = m->triangle_count, bc = m->bone_count;
    if (!room_for(in, svc, 4u)) return BAD("truncated in the weld map");
    for (uint32_t v = 0; v < svc; ++v)
        if ((m->weld[v] = get_u32(in)) >= n) return BAD("vertex %u welds to %u of %u", v, m->weld[v], n);
    if (!room_for(in, tc, 12u)) return BAD("truncated in the triangles");
    for (uint32_t t = 0; t < tc; ++t) {
        uint32_t* tri = m->triangles + 3u * t;
        for (int k = 0; k < 3; ++k) tri[k] = get_u32(in);
        if (tri[0] >= n || tri[1] >= n || tri[2] >= n || tri[0] == tri[1] || tri[1] == tri[2] ||
            tri[0] == tri[2])
            return BAD("triangle %u (%u %u %u) is out of range or collapsed", t, tri[0], tri[1],
                       tri[2]);
    }
    if (!room_for(in, n, 48u)) return BAD("truncated in the vertices");
    for (size_t k = 0; k < 6u * (size_t)n; ++k)
        if (!isfinite(m->rest[k] = get_f64(in))) return BAD("vertex coordinate %zu is not finite", k);
    for (size_t k = 0; k < 2u * (size_t)n; ++k)
        if ((m->vertex_bone[k] = get_u32(in)) >= bc)
            return BAD("vertex %zu follows bone %u of %u", k, m->vertex_bone[k], bc);
    m->shrink_iterations = get_u32(in);
    m->shrink_residual = get_f64(in);
    m->inside_count = get_u32(in);
    m->thickness = get_f64(in);
    m->diagonal = get_f64(in);
    if (!isfinite(m->shrink_residual) || !(m->thickness > 0.0) || !isfinite(m->thickness) ||
        !(m->diagonal > 0.0) || !isfinite(m->diagonal) || m->inside_count > n)
        return BAD("bad shrinking figures");
    return SINEW_OK;
}

/* The upsampling records, in range and finite, and with a simulation mesh the restore
 * records of the skin vertices. */
static sinew_result read_upsampling(const sinew_host_api* host, const sinew_rig_view* rig,
                                    bake_in* in, ps_model* m, bool has_sim)
{
    uint32_t n = m->n, tc = m->triangle_count, rc = m->render_count;
    if (!room_for(in, rc, 44u)) return BAD("truncated in the upsampling records");
    for (uint32_t r = 0; r < rc; ++r) {
        ps_upsample* u = &m->upsample[r];
        u->triangle = get_u32(in);
        u->vertex = get_u32(in);
        bool ok = true;
        for (int k = 0; k < 3; ++k) ok = ok && isfinite(u->bary[k] = get_f32(in));
        for (int k = 0; k < 3; ++k) ok = ok && isfinite(u->offset[k] = get_f32(in));
        for (int k = 0; k < 3; ++k) ok = ok && isfinite(u->normal[k] = get_f32(in));
        if (!ok || (u->triangle == PS_NONE ? u->vertex >= n : (u->triangle >= tc || u->vertex != 0)))
            return BAD("upsampling record %u is out of range or not finite", r);
    }
    if (has_sim) {
        if (!room_for(in, n, 28u)) return BAD("truncated in the restore records");
        for (uint32_t i = 0; i < n; ++i) {
            ps_restore* rs = &m->restore[i];
            rs->triangle = get_u32(in);
            bool ok = rs->triangle < rig->render_mesh.triangle_count;
            for (int k = 0; k < 3; ++k) ok = isfinite(rs->bary[k] = get_f32(in)) && ok;
            for (int k = 0; k < 3; ++k) ok = isfinite(rs->offset[k] = get_f32(in)) && ok;
            if (!ok) return BAD("restore record %u is out of range or not finite", i);
        }
    }
    return SINEW_OK;
}

/* The optional tagged sections, then the end marker, with nothing after it. */
static sinew_result read_sections(const sinew_host_api* host, bake_in* in, ps_model* m)
{
    uint32_t end = get_u32(in);
    while (!in->short_read && (end == PS_BAKE_TAG_COLLISIONS || end == PS_BAKE_TAG_SLIDING ||
                               end == PS_BAKE_TAG_SPLIT || end == PS_BAKE_TAG_SKIPS)) {
        sinew_result r = end == PS_BAKE_TAG_SLIDING ? read_sliding(host, in, m)
                         : end == PS_BAKE_TAG_SPLIT ? read_split(host, in, m)
                         : end == PS_BAKE_TAG_SKIPS ? read_rest_skips(host, in, m)
                                                    : read_collisions(host, in, m);
        if (r != SINEW_OK) return r;
        end = get_u32(in);
    }
    if (in->short_read) return BAD("truncated before the end marker");
    if (end != PS_BAKE_END) return BAD("end marker 0x%08x is wrong", end);
    if (in->pos != in->size) return BAD("%zu bytes follow the end marker", in->size - in->pos);
    return SINEW_OK;
}

/* The whole blob in the layout above, every field checked. */
static sinew_result read_model(const sinew_host_api* host, const sinew_rig_view* rig,
                               bake_in* in, ps_model* m)
{
    bool has_sim = false;
    sinew_result r = read_header(host, rig, in, m, &has_sim);
    if (r == SINEW_OK) r = alloc_model(host, in, m, has_sim);
    if (r == SINEW_OK) r = read_skeleton(host, in, m);
    if (r == SINEW_OK) r = read_skin(host, in, m);
    if (r == SINEW_OK) r = read_upsampling(host, rig, in, m, has_sim);
    if (r == SINEW_OK) r = read_sections(host, in, m);
    return r;
}

sinew_result ps_bake_read(const sinew_host_api* host, const sinew_rig_view* rig,
                          const void* data, size_t size, ps_model* m)
{
    memset(m, 0, sizeof *m);
    if (!data || size == 0) return BAD("the rig names backend \"ps\" but carries no bytes");
    bake_in in = {(const uint8_t*)data, size, 0, false};
    sinew_result r = read_model(host, rig, &in, m);
    if (r == SINEW_OK) r = ps_tissue_build(host, m);
    if (r != SINEW_OK) ps_model_free(host, m);
    return r;
}

sinew_result ps_model_dump(const ps_model* m, const sinew_bake_writer* w)
{
    /* Native byte order is fine here: only two dumps of the same process are compared. */
    struct {
        const void* p;
        size_t bytes;
    } parts[] = {
        {&m->joint_count, sizeof m->joint_count},
        {&m->bone_count, sizeof m->bone_count},
        {&m->n, sizeof m->n},
        {&m->triangle_count, sizeof m->triangle_count},
        {&m->tet_count, sizeof m->tet_count},
        {&m->render_count, sizeof m->render_count},
        {&m->degenerate_count, sizeof m->degenerate_count},
        {&m->inverted_count, sizeof m->inverted_count},
        {&m->shrink_iterations, sizeof m->shrink_iterations},
        {&m->shrink_residual, sizeof m->shrink_residual},
        {&m->inside_count, sizeof m->inside_count},
        {&m->thickness, sizeof m->thickness},
        {&m->diagonal, sizeof m->diagonal},
        {m->bones, m->bone_count * sizeof(ps_bone)},
        {m->joint_radius, m->joint_count * sizeof(double)},
        {m->joint_rep, m->joint_count * sizeof(uint32_t)},
        {m->weld, m->source_vertex_count * sizeof(uint32_t)},
        {m->triangles, 3u * (size_t)m->triangle_count * sizeof(uint32_t)},
        {m->rest, 6u * (size_t)m->n * sizeof(double)},
        {m->vertex_bone, 2u * (size_t)m->n * sizeof(uint32_t)},
        {m->tets, 4u * (size_t)m->tet_count * sizeof(uint32_t)},
        {m->tet_A, 12u * (size_t)m->tet_count * sizeof(double)},
        {m->tet_volume, (size_t)m->tet_count * sizeof(double)},
        {m->tet_excluded, (size_t)m->tet_count},
        {m->prism_split, m->prism_split ? (size_t)m->triangle_count : 0u},
        {m->upsample, (size_t)m->render_count * sizeof(ps_upsample)},
        {m->restore, m->restore ? (size_t)m->n * sizeof(ps_restore) : 0u},
        {m->vertex_tri_offsets, ((size_t)m->n + 1u) * sizeof(uint32_t)},
        {m->vertex_tris, 3u * (size_t)m->triangle_count * sizeof(uint32_t)},
        {&m->has_collision_pairs, sizeof m->has_collision_pairs},
        {&m->collision_pair_count, sizeof m->collision_pair_count},
        {m->collision_pairs, (size_t)m->collision_pair_count * sizeof(ps_collision_pair)},
        {&m->decimated_triangles, sizeof m->decimated_triangles},
        {&m->slide_anchor_count, sizeof m->slide_anchor_count},
        {m->slide_anchors, (size_t)m->slide_anchor_count * sizeof(ps_slide_anchor)},
        {&m->slide_vertex_count, sizeof m->slide_vertex_count},
        {m->slide_vertices, (size_t)m->slide_vertex_count * sizeof(ps_slide_vertex)},
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i) {
        if (!parts[i].bytes) continue;
        sinew_result r = w->write(parts[i].p, parts[i].bytes, w->user);
        if (r != SINEW_OK) return r;
    }
    return SINEW_OK;
}
