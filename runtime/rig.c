/* Rigs: validation of a rig descriptor, the runtime's copy of it, forward kinematics.
 * SPDX-License-Identifier: MIT
 *
 * A rig is validated completely before anything is stored, so a refused descriptor leaves the
 * world untouched. Everything the rig owns lives in one allocation (`block`), laid out in two
 * passes: the first computes offsets, the second fills them.
 *
 * A descriptor carrying sinew_baked_rig_ext (a baked file) is "exact": its normals and weights
 * are the runtime's own, so they are checked and copied unchanged rather than normalised
 * again, which would not be bit for bit the same. */
#include "internal.h"
#include "weights.h"

#include <sinew/sinew_bake.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>

#define MAX_JOINTS 65535u
#define MAX_ELEMENTS (1u << 26) /* vertices or triangles per mesh */

/* The first published size of each descriptor: smaller is refused, larger accepted. */
#define RIG_DESC_MIN_SIZE ((uint32_t)(offsetof(sinew_rig_desc, max_influences) + sizeof(uint32_t)))
#define BAKED_EXT_MIN_SIZE ((uint32_t)(offsetof(sinew_baked_rig_ext, size) + sizeof(size_t)))

bool sinew_matrix_finite(const float* m, uint32_t count)
{
    for (size_t i = 0; i < (size_t)count * 16u; ++i) {
        if (!isfinite(m[i])) return false;
    }
    return true;
}

static sinew_result validate_mesh(const sinew_host_api* host, const sinew_mesh_desc* mesh,
                                  const char* which, bool exact)
{
    if (mesh->vertex_count == 0)
        return sinew_host_fail(host, SINEW_ERROR_EMPTY_MESH, "rig: %s has zero vertices", which);
    if (mesh->triangle_count == 0)
        return sinew_host_fail(host, SINEW_ERROR_EMPTY_MESH, "rig: %s has zero triangles", which);
    if (mesh->vertex_count > MAX_ELEMENTS || mesh->triangle_count > MAX_ELEMENTS)
        return sinew_host_fail(host, SINEW_ERROR_LIMIT,
                               "rig: %s has %u vertices and %u triangles; at most %u each", which,
                               mesh->vertex_count, mesh->triangle_count, MAX_ELEMENTS);
    if (!mesh->positions || !mesh->indices)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "rig: %s has no %s", which,
                               mesh->positions ? "indices" : "positions");
    for (uint32_t i = 0; i < mesh->vertex_count * 3u; ++i) {
        if (!isfinite(mesh->positions[i]))
            return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                                   "rig: %s vertex %u has a non-finite position", which, i / 3u);
    }
    if (exact && !mesh->normals)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "rig: %s has no normals, which a baked rig must carry", which);
    if (mesh->normals) {
        for (uint32_t i = 0; i < mesh->vertex_count * 3u; ++i) {
            if (!isfinite(mesh->normals[i]))
                return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                                       "rig: %s vertex %u has a non-finite normal", which, i / 3u);
        }
    }
    /* Backends rely on unit normals, and an exact rig is not normalised again. */
    for (uint32_t v = 0; exact && v < mesh->vertex_count; ++v) {
        const float* n = mesh->normals + 3u * v;
        double len2 = (double)n[0] * n[0] + (double)n[1] * n[1] + (double)n[2] * n[2];
        if (!(fabs(len2 - 1.0) <= 1e-4))
            return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                                   "rig: %s vertex %u of a baked rig has a normal of length %g, "
                                   "not 1", which, v, sqrt(len2));
    }
    for (uint32_t i = 0; i < mesh->triangle_count * 3u; ++i) {
        if (mesh->indices[i] >= mesh->vertex_count)
            return sinew_host_fail(host, SINEW_ERROR_VERTEX_INDEX,
                                   "rig: %s triangle %u uses vertex %u of %u", which, i / 3u,
                                   mesh->indices[i], mesh->vertex_count);
    }
    if (mesh->submesh_count > 0) {
        if (!mesh->submesh_first_triangle)
            return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                                   "rig: %s has %u sub-meshes but no offsets", which,
                                   mesh->submesh_count);
        for (uint32_t s = 0; s < mesh->submesh_count; ++s) {
            uint32_t first = mesh->submesh_first_triangle[s];
            bool ok = (s == 0) ? first == 0
                               : first > mesh->submesh_first_triangle[s - 1] &&
                                     first < mesh->triangle_count;
            if (!ok)
                return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                                       "rig: %s sub-mesh %u starts at triangle %u: offsets must "
                                       "start at 0 and ascend below %u",
                                       which, s, first, mesh->triangle_count);
        }
    }
    return SINEW_OK;
}

/* Orders joints so that every parent comes before its children; refuses cycles and parents
 * out of range. */
static sinew_result order_skeleton(const sinew_host_api* host, const sinew_skeleton_desc* sk,
                                   uint32_t* order)
{
    uint32_t n = sk->joint_count;
    uint8_t* state = (uint8_t*)sinew_host_calloc(host, n, 1); /* 0 new, 1 visiting, 2 placed */
    uint32_t* stack = (uint32_t*)sinew_host_alloc(host, (size_t)n * sizeof(uint32_t));
    if (!state || !stack) {
        sinew_host_free(host, state);
        sinew_host_free(host, stack);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "rig: out of memory");
    }
    sinew_result result = SINEW_OK;
    uint32_t placed = 0;
    for (uint32_t j = 0; j < n && result == SINEW_OK; ++j) {
        int32_t p = sk->parents[j];
        if (p < -1 || p >= (int32_t)n) {
            result = sinew_host_fail(host, SINEW_ERROR_SKELETON,
                                     "rig: joint %u has parent %d, which does not exist "
                                     "(%u joints)", j, (int)p, n);
        } else if (p == (int32_t)j) {
            result = sinew_host_fail(host, SINEW_ERROR_SKELETON,
                                     "rig: joint %u is its own parent", j);
        }
    }
    for (uint32_t j = 0; j < n && result == SINEW_OK; ++j) {
        /* Walk up to a placed joint or a root, then place the path top-down. */
        uint32_t depth = 0;
        int32_t k = (int32_t)j;
        while (k >= 0 && state[k] != 2) {
            if (state[k] == 1) {
                result = sinew_host_fail(host, SINEW_ERROR_SKELETON,
                                         "rig: the parents of joint %u form a cycle", (uint32_t)k);
                break;
            }
            state[k] = 1;
            stack[depth++] = (uint32_t)k;
            k = sk->parents[k];
        }
        if (result != SINEW_OK) break;
        while (depth > 0) {
            uint32_t q = stack[--depth];
            state[q] = 2;
            order[placed++] = q;
        }
    }
    sinew_host_free(host, state);
    sinew_host_free(host, stack);
    return result;
}

/* Weights of the render mesh in compressed rows, sorted by decreasing weight. */
typedef struct weight_rows {
    uint32_t* offsets;
    uint32_t* joints;
    float* weights;
    uint32_t max_row;
} weight_rows;

static void free_rows(const sinew_host_api* host, weight_rows* rows)
{
    sinew_host_free(host, rows->offsets);
    sinew_host_free(host, rows->joints);
    sinew_host_free(host, rows->weights);
    memset(rows, 0, sizeof *rows);
}

/* Checks that the rows of an exact (baked) rig are what the runtime stores: sorted by
 * decreasing weight, no joint twice, summing to 1. `seen` has joint_count entries, all
 * UINT32_MAX on entry. */
static sinew_result check_exact_rows(const sinew_host_api* host, const sinew_weights_desc* w,
                                     uint32_t vertex_count, uint32_t* seen)
{
    for (uint32_t v = 0; v < vertex_count; ++v) {
        double sum = 0.0;
        for (uint32_t i = w->offsets[v]; i < w->offsets[v + 1]; ++i) {
            if (i > w->offsets[v] && w->weights[i] > w->weights[i - 1])
                return sinew_host_fail(host, SINEW_ERROR_WEIGHTS,
                                       "rig: the weights of vertex %u of a baked rig are not "
                                       "sorted by decreasing weight", v);
            if (seen[w->joints[i]] == v)
                return sinew_host_fail(host, SINEW_ERROR_WEIGHTS,
                                       "rig: vertex %u of a baked rig names joint %u twice", v,
                                       w->joints[i]);
            seen[w->joints[i]] = v;
            sum += w->weights[i];
        }
        if (!(fabs(sum - 1.0) <= 1e-4))
            return sinew_host_fail(host, SINEW_ERROR_WEIGHTS,
                                   "rig: the weights of vertex %u of a baked rig sum to %.7g, "
                                   "not 1", v, sum);
    }
    return SINEW_OK;
}

/* Validates given weights, merges repeated joints, keeps the `cap` largest (0: all), sorts
 * and normalises. Exact rows are only checked and copied. */
/* The rows of w over vertex_count vertices: offsets from 0, ascending, 1 to 1024 influences
 * per vertex, joints in range, weights finite, non-negative and not all zero. *max_row: the
 * longest row. */
static sinew_result check_weights(const sinew_host_api* host, const sinew_weights_desc* w,
                                  uint32_t vertex_count, uint32_t joint_count, uint32_t* max_row)
{
    if (!w->joints || !w->weights)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "rig: weights have offsets but no %s",
                               w->joints ? "weight values" : "joint indices");
    if (w->offsets[0] != 0)
        return sinew_host_fail(host, SINEW_ERROR_WEIGHTS,
                               "rig: weight offsets must start at 0 (got %u)", w->offsets[0]);
    *max_row = 0;
    for (uint32_t v = 0; v < vertex_count; ++v) {
        uint32_t b = w->offsets[v], e = w->offsets[v + 1];
        if (e < b)
            return sinew_host_fail(host, SINEW_ERROR_WEIGHTS,
                                   "rig: weight offsets descend at vertex %u", v);
        if (e == b)
            return sinew_host_fail(host, SINEW_ERROR_WEIGHTS, "rig: vertex %u has no influence", v);
        if (e - b > 1024u)
            return sinew_host_fail(host, SINEW_ERROR_LIMIT,
                                   "rig: vertex %u has %u influences; at most 1024", v, e - b);
        double sum = 0.0;
        for (uint32_t i = b; i < e; ++i) {
            if (w->joints[i] >= joint_count)
                return sinew_host_fail(host, SINEW_ERROR_JOINT_INDEX,
                                       "rig: vertex %u is weighted to joint %u of %u", v,
                                       w->joints[i], joint_count);
            if (!isfinite(w->weights[i]))
                return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                                       "rig: vertex %u has a non-finite weight", v);
            if (w->weights[i] < 0.0f)
                return sinew_host_fail(host, SINEW_ERROR_WEIGHTS,
                                       "rig: vertex %u has a negative weight %g for joint %u", v,
                                       (double)w->weights[i], w->joints[i]);
            sum += w->weights[i];
        }
        if (!(sum > 0.0))
            return sinew_host_fail(host, SINEW_ERROR_WEIGHTS,
                                   "rig: the weights of vertex %u are all zero", v);
        if (e - b > *max_row) *max_row = e - b;
    }
    return SINEW_OK;
}

/* A baked rig's rows, kept as they are once check_exact_rows accepts them. */
static sinew_result copy_exact_rows(const sinew_host_api* host, const sinew_weights_desc* w,
                                    uint32_t vertex_count, uint32_t joint_count, uint32_t max_row,
                                    weight_rows* out)
{
    uint32_t total = w->offsets[vertex_count];
    uint32_t* seen = (uint32_t*)sinew_host_alloc(host, (size_t)joint_count * sizeof(uint32_t));
    out->offsets = (uint32_t*)sinew_host_alloc(host, ((size_t)vertex_count + 1) * sizeof(uint32_t));
    out->joints = (uint32_t*)sinew_host_alloc(host, (size_t)total * sizeof(uint32_t));
    out->weights = (float*)sinew_host_alloc(host, (size_t)total * sizeof(float));
    if (!seen || !out->offsets || !out->joints || !out->weights) {
        sinew_host_free(host, seen);
        free_rows(host, out);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "rig: out of memory for weights");
    }
    memset(seen, 0xFF, (size_t)joint_count * sizeof(uint32_t));
    sinew_result r = check_exact_rows(host, w, vertex_count, seen);
    sinew_host_free(host, seen);
    if (r != SINEW_OK) {
        free_rows(host, out);
        return r;
    }
    memcpy(out->offsets, w->offsets, ((size_t)vertex_count + 1) * sizeof(uint32_t));
    memcpy(out->joints, w->joints, (size_t)total * sizeof(uint32_t));
    memcpy(out->weights, w->weights, (size_t)total * sizeof(float));
    out->max_row = max_row;
    return SINEW_OK;
}

/* One vertex's row in tj/tw: zero weights dropped, repeated joints merged, sorted by
 * decreasing weight (insertion sort: rows are short). Returns its length. */
static uint32_t merge_row(const sinew_weights_desc* w, uint32_t v, uint32_t* tj, float* tw)
{
    uint32_t n = 0;
    for (uint32_t i = w->offsets[v]; i < w->offsets[v + 1]; ++i) {
        if (w->weights[i] == 0.0f) continue;
        uint32_t k = 0;
        while (k < n && tj[k] != w->joints[i]) ++k;
        if (k == n) {
            tj[n] = w->joints[i];
            tw[n++] = 0.0f;
        }
        tw[k] += w->weights[i];
    }
    for (uint32_t i = 1; i < n; ++i) {
        float kw = tw[i];
        uint32_t kj = tj[i];
        uint32_t k = i;
        while (k > 0 && tw[k - 1] < kw) {
            tw[k] = tw[k - 1];
            tj[k] = tj[k - 1];
            --k;
        }
        tw[k] = kw;
        tj[k] = kj;
    }
    return n;
}

/* The caller's rows merged (merge_row), cut to `cap` influences (0: no cap) and normalised. */
static sinew_result normalise_rows(const sinew_host_api* host, const sinew_weights_desc* w,
                                   uint32_t vertex_count, uint32_t cap, uint32_t max_row,
                                   weight_rows* out)
{
    uint32_t total = w->offsets[vertex_count];
    out->offsets = (uint32_t*)sinew_host_alloc(host, ((size_t)vertex_count + 1) * sizeof(uint32_t));
    out->joints = (uint32_t*)sinew_host_alloc(host, (size_t)total * sizeof(uint32_t));
    out->weights = (float*)sinew_host_alloc(host, (size_t)total * sizeof(float));
    uint32_t* tj = (uint32_t*)sinew_host_alloc(host, (size_t)max_row * sizeof(uint32_t));
    float* tw = (float*)sinew_host_alloc(host, (size_t)max_row * sizeof(float));
    if (!out->offsets || !out->joints || !out->weights || !tj || !tw) {
        free_rows(host, out);
        sinew_host_free(host, tj);
        sinew_host_free(host, tw);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "rig: out of memory for weights");
    }
    uint32_t at = 0;
    out->max_row = 0;
    for (uint32_t v = 0; v < vertex_count; ++v) {
        uint32_t n = merge_row(w, v, tj, tw);
        if (cap > 0 && n > cap) n = cap;
        float sum = 0.0f;
        for (uint32_t i = 0; i < n; ++i) sum += tw[i];
        out->offsets[v] = at;
        for (uint32_t i = 0; i < n; ++i) {
            out->joints[at] = tj[i];
            out->weights[at++] = tw[i] / sum;
        }
        if (n > out->max_row) out->max_row = n;
    }
    out->offsets[vertex_count] = at;
    sinew_host_free(host, tj);
    sinew_host_free(host, tw);
    return SINEW_OK;
}

static sinew_result import_weights(const sinew_host_api* host, const sinew_weights_desc* w,
                                   uint32_t vertex_count, uint32_t joint_count, uint32_t cap,
                                   bool exact, weight_rows* out)
{
    uint32_t max_row = 0;
    sinew_result r = check_weights(host, w, vertex_count, joint_count, &max_row);
    if (r != SINEW_OK) return r;
    return exact ? copy_exact_rows(host, w, vertex_count, joint_count, max_row, out)
                 : normalise_rows(host, w, vertex_count, cap, max_row, out);
}

static size_t take(size_t* offset, size_t bytes)
{
    size_t at = (*offset + 63u) & ~(size_t)63u;
    *offset = at + bytes;
    return at;
}

/* Area-weighted vertex normals; given normals are normalised, and zero ones replaced. */
static void fill_normals(const sinew_mesh_desc* mesh, float* normals)
{
    memset(normals, 0, (size_t)mesh->vertex_count * 3u * sizeof(float));
    for (uint32_t t = 0; t < mesh->triangle_count; ++t) {
        const uint32_t* tri = mesh->indices + 3u * t;
        vec3 a, b, c, e1, e2, n;
        glm_vec3_copy((float*)mesh->positions + 3u * tri[0], a);
        glm_vec3_copy((float*)mesh->positions + 3u * tri[1], b);
        glm_vec3_copy((float*)mesh->positions + 3u * tri[2], c);
        glm_vec3_sub(b, a, e1);
        glm_vec3_sub(c, a, e2);
        glm_vec3_cross(e1, e2, n); /* length = twice the area: area weighting for free */
        for (int k = 0; k < 3; ++k) glm_vec3_add(normals + 3u * tri[k], n, normals + 3u * tri[k]);
    }
    for (uint32_t v = 0; v < mesh->vertex_count; ++v) {
        float* n = normals + 3u * v;
        if (mesh->normals) {
            const float* given = mesh->normals + 3u * v;
            if (glm_vec3_norm((float*)given) > 0.0f) glm_vec3_copy((float*)given, n);
        }
        float len = glm_vec3_norm(n);
        if (len > 0.0f) {
            glm_vec3_scale(n, 1.0f / len, n);
        } else {
            n[0] = 0.0f; /* an isolated vertex: any unit vector keeps backends finite */
            n[1] = 0.0f;
            n[2] = 1.0f;
        }
    }
}

typedef struct mesh_layout {
    size_t positions, normals, indices, submeshes;
} mesh_layout;

static void plan_mesh(size_t* offset, const sinew_mesh_desc* m, mesh_layout* l)
{
    l->positions = take(offset, (size_t)m->vertex_count * 12u);
    l->normals = take(offset, (size_t)m->vertex_count * 12u);
    l->indices = take(offset, (size_t)m->triangle_count * 12u);
    l->submeshes = take(offset, (size_t)(m->submesh_count ? m->submesh_count : 1u) * 4u);
}

static void fill_mesh(char* block, const sinew_mesh_desc* m, const mesh_layout* l, bool exact,
                      sinew_mesh_view* view)
{
    float* positions = (float*)(block + l->positions);
    float* normals = (float*)(block + l->normals);
    uint32_t* indices = (uint32_t*)(block + l->indices);
    uint32_t* submeshes = (uint32_t*)(block + l->submeshes);
    memcpy(positions, m->positions, (size_t)m->vertex_count * 12u);
    memcpy(indices, m->indices, (size_t)m->triangle_count * 12u);
    if (exact) {
        memcpy(normals, m->normals, (size_t)m->vertex_count * 12u);
    } else {
        fill_normals(m, normals);
    }
    if (m->submesh_count) {
        memcpy(submeshes, m->submesh_first_triangle, (size_t)m->submesh_count * 4u);
    } else {
        submeshes[0] = 0;
    }
    view->vertex_count = m->vertex_count;
    view->triangle_count = m->triangle_count;
    view->positions = positions;
    view->normals = normals;
    view->indices = indices;
    view->submesh_count = m->submesh_count ? m->submesh_count : 1u;
    view->submesh_first_triangle = submeshes;
}

/* The baked-rig extension of a descriptor's chain, or NULL; the only extension a rig takes. */
static sinew_result find_baked_ext(const sinew_host_api* host, const void* next,
                                   const sinew_baked_rig_ext** out)
{
    *out = NULL;
    if (!next) return SINEW_OK;
    const sinew_ext_header* h = (const sinew_ext_header*)next;
    if (h->type != SINEW_EXT_BAKED_RIG)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "rig: desc.next holds extension type 0x%x, and a rig takes only "
                               "SINEW_EXT_BAKED_RIG", (unsigned)h->type);
    if (h->struct_size < BAKED_EXT_MIN_SIZE)
        return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE,
                               "rig: sinew_baked_rig_ext.struct_size %u is too small (at least "
                               "%u; use SINEW_BAKED_RIG_EXT_INIT)", h->struct_size,
                               BAKED_EXT_MIN_SIZE);
    if (h->next)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "rig: sinew_baked_rig_ext.next is not NULL, and nothing may "
                               "follow it");
    *out = (const sinew_baked_rig_ext*)next;
    return SINEW_OK;
}

static sinew_result create_rig(const sinew_host_api* host, const sinew_rig_desc* desc,
                               const sinew_baked_rig_ext* baked, sinew_rig_data** out);

/* Checks desc and, where out is not NULL, builds the rig from it. */
static sinew_result check_and_create(const sinew_host_api* host, const sinew_rig_desc* desc,
                                     sinew_rig_data** out)
{
    if (out) *out = NULL;
    if (!desc) return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "rig: desc is NULL");
    if (desc->struct_size < RIG_DESC_MIN_SIZE)
        return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE,
                               "rig: struct_size %u is too small (at least %u; use "
                               "SINEW_RIG_DESC_INIT)", desc->struct_size, RIG_DESC_MIN_SIZE);
    const sinew_baked_rig_ext* baked = NULL;
    sinew_result r = find_baked_ext(host, desc->next, &baked);
    if (r != SINEW_OK) return r;
    if (!baked || !baked->source) return create_rig(host, desc, baked, out);
    /* Every line of a baked rig names where it came from (the file). */
    sinew_prefix_logger prefix;
    sinew_host_api named = sinew_host_with_prefix(host, baked->source, &prefix);
    return create_rig(&named, desc, baked, out);
}

sinew_result sinew_rig_data_create(const sinew_host_api* host, const sinew_rig_desc* desc,
                                   sinew_rig_data** out)
{
    return check_and_create(host, desc, out);
}

sinew_result sinew_rig_data_check(const sinew_host_api* host, const sinew_rig_desc* desc)
{
    return check_and_create(host, desc, NULL);
}

/* The baked blobs of the extension in order (the first, then the extra ones, when the
 * struct has them): at most SINEW_BAKE_MAX_BACKENDS, each a name of 1 to 63 bytes with a
 * non-empty blob, no name twice; or none at all. */
static sinew_result gather_blobs(const sinew_host_api* host, const sinew_baked_rig_ext* baked,
                                 sinew_baked_blob* list, uint32_t* count)
{
    const char* first = baked->backend && baked->backend[0] ? baked->backend : NULL;
    const size_t extra_end = offsetof(sinew_baked_rig_ext, extra) + sizeof baked->extra;
    uint32_t extra = baked->struct_size >= extra_end ? baked->extra_count : 0u;
    *count = 0;
    if (!first && (baked->data || baked->size))
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "rig: baked data (%zu bytes) names no backend", baked->size);
    if ((!first && extra) || extra > SINEW_BAKE_MAX_BACKENDS - 1u || (extra && !baked->extra))
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "rig: %u extra baked blobs (at most %u, after a first backend, "
                               "from a non-NULL array)", extra, SINEW_BAKE_MAX_BACKENDS - 1u);
    if (!first) return SINEW_OK;
    sinew_baked_blob head = { first, baked->data, baked->size };
    for (uint32_t i = 0; i <= extra; ++i) {
        const sinew_baked_blob* b = i == 0 ? &head : &baked->extra[i - 1u];
        if (!b->backend || !b->backend[0] || strlen(b->backend) > 63)
            return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                                   "rig: baked backend name %u is empty or longer than 63 bytes",
                                   i);
        if (!b->data || b->size == 0)
            return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                                   "rig: baked data for backend \"%s\" is empty", b->backend);
        for (uint32_t k = 0; k < i; ++k)
            if (strcmp(list[k].backend, b->backend) == 0)
                return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                                       "rig: backend \"%s\" has two baked blobs", b->backend);
        list[(*count)++] = *b;
    }
    return SINEW_OK;
}

/* The baked extension's own rules: its blobs (gather_blobs); weights given and kept as they
 * are. */
static sinew_result check_baked(const sinew_host_api* host, const sinew_rig_desc* desc,
                                const sinew_baked_rig_ext* baked, sinew_baked_blob* list,
                                uint32_t* count)
{
    sinew_result r = gather_blobs(host, baked, list, count);
    if (r != SINEW_OK) return r;
    if (desc->weights.offsets == NULL)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "rig: a baked rig must carry its weights");
    if (desc->max_influences != 0)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "rig: max_influences %u on a baked rig, whose weights are kept "
                               "as they are (use 0)", desc->max_influences);
    return SINEW_OK;
}

/* A skeleton of 1 .. MAX_JOINTS joints with parents and finite, invertible bind matrices. */
static sinew_result check_skeleton(const sinew_host_api* host, const sinew_skeleton_desc* sk)
{
    if (sk->joint_count == 0)
        return sinew_host_fail(host, SINEW_ERROR_SKELETON, "rig: the skeleton has no joint");
    if (sk->joint_count > MAX_JOINTS)
        return sinew_host_fail(host, SINEW_ERROR_LIMIT, "rig: %u joints; at most %u",
                               sk->joint_count, MAX_JOINTS);
    if (!sk->parents || !sk->bind_matrices)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "rig: the skeleton has no %s",
                               sk->parents ? "bind matrices" : "parents");
    for (uint32_t j = 0; j < sk->joint_count; ++j) {
        if (!sinew_matrix_finite(sk->bind_matrices + 16u * j, 1))
            return sinew_host_fail(host, SINEW_ERROR_NONFINITE,
                                   "rig: the bind matrix of joint %u is not finite", j);
        float det = glm_mat4_det((vec4*)(sk->bind_matrices + 16u * j));
        if (!(fabsf(det) > 1e-12f))
            return sinew_host_fail(host, SINEW_ERROR_SKELETON,
                                   "rig: the bind matrix of joint %u is singular", j);
    }
    return SINEW_OK;
}

/* The meshes (the simulation mesh when it has vertices or positions) and the influence cap of
 * automatic weights (0, 4 or 8). */
static sinew_result check_meshes(const sinew_host_api* host, const sinew_rig_desc* desc,
                                 bool exact, bool has_sim)
{
    sinew_result r = validate_mesh(host, &desc->render_mesh, "render mesh", exact);
    if (r == SINEW_OK && has_sim)
        r = validate_mesh(host, &desc->simulation_mesh, "simulation mesh", exact);
    if (r != SINEW_OK) return r;
    uint32_t cap = desc->max_influences;
    if (!desc->weights.offsets && cap != 0 && cap != 4 && cap != 8)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "rig: max_influences %u for automatic weights must be 0, 4 or 8",
                               cap);
    return SINEW_OK;
}

/* The weight rows of the render mesh: the given ones, checked and normalised, or automatic
 * weights of at most max_influences (default 4) per vertex. */
static sinew_result weight_rows_of(const sinew_host_api* host, const sinew_rig_desc* desc,
                                   bool exact, weight_rows* rows)
{
    const sinew_skeleton_desc* sk = &desc->skeleton;
    const sinew_mesh_desc* rm = &desc->render_mesh;
    uint32_t cap = desc->max_influences;
    if (desc->weights.offsets)
        return import_weights(host, &desc->weights, rm->vertex_count, sk->joint_count, cap, exact,
                              rows);
    sinew_auto_weights aw = { 0 };
    sinew_result r = sinew_compute_auto_weights(host, rm->vertex_count, rm->positions,
                                                rm->triangle_count, rm->indices, sk->joint_count,
                                                sk->parents, sk->bind_matrices, cap ? cap : 4u, &aw);
    rows->offsets = aw.offsets;
    rows->joints = aw.joints;
    rows->weights = aw.weights;
    if (r == SINEW_OK)
        for (uint32_t v = 0; v < rm->vertex_count; ++v) {
            uint32_t n = aw.offsets[v + 1] - aw.offsets[v];
            if (n > rows->max_row) rows->max_row = n;
        }
    return r;
}

/* Where each part of a rig lies in its one allocation. */
typedef struct rig_layout {
    size_t size;
    size_t rig, parents, name_ptrs, names, rig_name, bind, inv, order;
    mesh_layout render, sim;
    size_t woff, wj, ww, pj, pw;
    size_t baked_name[SINEW_BAKE_MAX_BACKENDS], baked[SINEW_BAKE_MAX_BACKENDS];
    size_t rig_name_bytes;
    uint32_t width, entries;
} rig_layout;

/* Pass 1: the offsets of every array, padded rows `width` wide (4, 8 or the longest row). */
static void plan_rig(const sinew_rig_desc* desc, bool has_sim, const weight_rows* rows,
                     const sinew_baked_blob* blobs, uint32_t blob_count, rig_layout* l)
{
    const sinew_skeleton_desc* sk = &desc->skeleton;
    const sinew_mesh_desc* rm = &desc->render_mesh;
    const uint32_t jn = sk->joint_count;
    memset(l, 0, sizeof *l);
    l->width = rows->max_row <= 4 ? 4u : rows->max_row <= 8 ? 8u : rows->max_row;
    l->entries = rows->offsets[rm->vertex_count];
    size_t names_bytes = 0;
    for (uint32_t j = 0; j < jn; ++j) {
        names_bytes += (sk->names && sk->names[j] ? strlen(sk->names[j]) : 0u) + 1u;
    }
    l->rig_name_bytes = (desc->name ? strlen(desc->name) : 0u) + 1u;
    l->rig = take(&l->size, sizeof(sinew_rig_data));
    l->parents = take(&l->size, (size_t)jn * 4u);
    l->name_ptrs = take(&l->size, (size_t)jn * sizeof(char*));
    l->names = take(&l->size, names_bytes);
    l->rig_name = take(&l->size, l->rig_name_bytes);
    l->bind = take(&l->size, (size_t)jn * 64u);
    l->inv = take(&l->size, (size_t)jn * 64u);
    l->order = take(&l->size, (size_t)jn * 4u);
    plan_mesh(&l->size, rm, &l->render);
    if (has_sim) plan_mesh(&l->size, &desc->simulation_mesh, &l->sim);
    l->woff = take(&l->size, ((size_t)rm->vertex_count + 1u) * 4u);
    l->wj = take(&l->size, (size_t)l->entries * 4u);
    l->ww = take(&l->size, (size_t)l->entries * 4u);
    l->pj = take(&l->size, (size_t)rm->vertex_count * l->width * 4u);
    l->pw = take(&l->size, (size_t)rm->vertex_count * l->width * 4u);
    for (uint32_t i = 0; i < blob_count; ++i) {
        l->baked_name[i] = take(&l->size, strlen(blobs[i].backend) + 1u);
        l->baked[i] = take(&l->size, blobs[i].size);
    }
}

/* Pass 2, the skeleton: parents, names, the rig's name, bind matrices and their inverses, the
 * order of forward kinematics. */
static void fill_skeleton(char* block, const rig_layout* l, const sinew_rig_desc* desc,
                          const uint32_t* order, sinew_rig_data* rig)
{
    const sinew_skeleton_desc* sk = &desc->skeleton;
    const uint32_t jn = sk->joint_count;
    sinew_rig_view* v = &rig->view;
    v->struct_size = (uint32_t)sizeof(sinew_rig_view);
    v->joint_count = jn;
    int32_t* parents = (int32_t*)(block + l->parents);
    memcpy(parents, sk->parents, (size_t)jn * 4u);
    v->parents = parents;
    char** name_ptrs = (char**)(block + l->name_ptrs);
    char* names = block + l->names;
    for (uint32_t j = 0; j < jn; ++j) {
        const char* src = sk->names && sk->names[j] ? sk->names[j] : "";
        size_t len = strlen(src);
        memcpy(names, src, len + 1u);
        name_ptrs[j] = names;
        names += len + 1u;
    }
    v->names = (const char* const*)name_ptrs;
    rig->name = block + l->rig_name;
    if (desc->name) memcpy(rig->name, desc->name, l->rig_name_bytes);
    float* bind = (float*)(block + l->bind);
    float* inv = (float*)(block + l->inv);
    memcpy(bind, sk->bind_matrices, (size_t)jn * 64u);
    for (uint32_t j = 0; j < jn; ++j) glm_mat4_inv((vec4*)(bind + 16u * j), (vec4*)(inv + 16u * j));
    v->bind_matrices = bind;
    v->inverse_bind_matrices = inv;
    rig->fk_order = (uint32_t*)(block + l->order);
    memcpy(rig->fk_order, order, (size_t)jn * 4u);
}

/* Pass 2, the weights: the compressed rows and the same rows padded to `width` per vertex. */
static void fill_weights(char* block, const rig_layout* l, uint32_t vertex_count,
                         const weight_rows* rows, sinew_rig_view* v)
{
    uint32_t* woff = (uint32_t*)(block + l->woff);
    uint32_t* wj = (uint32_t*)(block + l->wj);
    float* ww = (float*)(block + l->ww);
    memcpy(woff, rows->offsets, ((size_t)vertex_count + 1u) * 4u);
    memcpy(wj, rows->joints, (size_t)l->entries * 4u);
    memcpy(ww, rows->weights, (size_t)l->entries * 4u);
    uint32_t* pj = (uint32_t*)(block + l->pj);
    float* pw = (float*)(block + l->pw);
    for (uint32_t vert = 0; vert < vertex_count; ++vert) {
        uint32_t k = 0;
        for (uint32_t i = woff[vert]; i < woff[vert + 1]; ++i, ++k) {
            pj[(size_t)vert * l->width + k] = wj[i];
            pw[(size_t)vert * l->width + k] = ww[i];
        }
    }
    v->weight_offsets = woff;
    v->weight_joints = wj;
    v->weight_values = ww;
    v->max_influences = rows->max_row;
    v->padded_width = l->width;
    v->padded_joints = pj;
    v->padded_weights = pw;
}

/* Pass 2, the baked blobs: names and bytes copied, the first one in the view. */
static void fill_baked(char* block, const rig_layout* l, const sinew_baked_blob* blobs,
                       uint32_t count, sinew_rig_data* rig)
{
    for (uint32_t i = 0; i < count; ++i) {
        memcpy(block + l->baked_name[i], blobs[i].backend, strlen(blobs[i].backend) + 1u);
        memcpy(block + l->baked[i], blobs[i].data, blobs[i].size);
        rig->baked[i].backend = block + l->baked_name[i];
        rig->baked[i].data = block + l->baked[i];
        rig->baked[i].size = blobs[i].size;
    }
    rig->baked_count = count;
    if (count) {
        rig->view.baked_backend = rig->baked[0].backend;
        rig->view.baked_data = rig->baked[0].data;
        rig->view.baked_size = rig->baked[0].size;
    }
}

/* After the view is complete: one copy of it per blob, carrying that blob. */
static void fill_baked_views(sinew_rig_data* rig)
{
    for (uint32_t i = 0; i < rig->baked_count; ++i) {
        rig->baked_views[i] = rig->view;
        rig->baked_views[i].baked_backend = rig->baked[i].backend;
        rig->baked_views[i].baked_data = rig->baked[i].data;
        rig->baked_views[i].baked_size = rig->baked[i].size;
    }
}

/* Zeroes the block except the blobs' bytes, which fill_baked copies: a baked rig's blobs are
 * most of its size, and writing them twice doubles the cost of fresh memory. */
static void zero_all_but_blobs(char* block, const rig_layout* l, const sinew_baked_blob* blobs,
                               uint32_t count)
{
    size_t at = 0;
    for (uint32_t i = 0; i < count; ++i) {
        memset(block + at, 0, l->baked[i] - at);
        at = l->baked[i] + blobs[i].size;
    }
    memset(block + at, 0, l->size - at);
}

/* The rig in one allocation, from checked parts: skeleton, meshes, weights, baked blobs. */
static sinew_result fill_rig(const sinew_host_api* host, const sinew_rig_desc* desc, bool exact,
                             bool has_sim, const uint32_t* order, const weight_rows* rows,
                             const sinew_baked_blob* blobs, uint32_t blob_count,
                             sinew_rig_data** out)
{
    rig_layout l;
    plan_rig(desc, has_sim, rows, blobs, blob_count, &l);
    char* block = (char*)sinew_host_alloc(host, l.size);
    if (!block)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "rig: out of memory (%zu bytes)", l.size);
    zero_all_but_blobs(block, &l, blobs, blob_count);
    sinew_rig_data* rig = (sinew_rig_data*)(block + l.rig);
    rig->block = block;
    sinew_rig_view* v = &rig->view;
    fill_skeleton(block, &l, desc, order, rig);
    fill_mesh(block, &desc->render_mesh, &l.render, exact, &v->render_mesh);
    if (has_sim) fill_mesh(block, &desc->simulation_mesh, &l.sim, exact, &v->simulation_mesh);
    fill_baked(block, &l, blobs, blob_count, rig);
    fill_weights(block, &l, desc->render_mesh.vertex_count, rows, v);
    fill_baked_views(rig);
    rig->pose_size = sinew_rig_pose_size(v);
    *out = rig;
    return SINEW_OK;
}

static sinew_result create_rig(const sinew_host_api* host, const sinew_rig_desc* desc,
                               const sinew_baked_rig_ext* baked, sinew_rig_data** out)
{
    const bool exact = baked != NULL;
    sinew_baked_blob blobs[SINEW_BAKE_MAX_BACKENDS];
    uint32_t blob_count = 0;
    sinew_result r = baked ? check_baked(host, desc, baked, blobs, &blob_count) : SINEW_OK;
    if (r == SINEW_OK) r = check_skeleton(host, &desc->skeleton);
    const bool has_sim = desc->simulation_mesh.vertex_count > 0 || desc->simulation_mesh.positions;
    if (r == SINEW_OK) r = check_meshes(host, desc, exact, has_sim);
    if (r != SINEW_OK) return r;
    const uint32_t jn = desc->skeleton.joint_count;
    uint32_t* order = (uint32_t*)sinew_host_alloc(host, (size_t)jn * sizeof(uint32_t));
    if (!order) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "rig: out of memory");
    weight_rows rows = { 0 };
    r = order_skeleton(host, &desc->skeleton, order);
    if (r == SINEW_OK) r = weight_rows_of(host, desc, exact, &rows);
    if (r == SINEW_OK && out)
        r = fill_rig(host, desc, exact, has_sim, order, &rows, blobs, blob_count, out);
    free_rows(host, &rows);
    sinew_host_free(host, order);
    return r;
}

void sinew_rig_data_destroy(const sinew_host_api* host, sinew_rig_data* rig)
{
    if (rig) sinew_host_free(host, rig->block);
}

const sinew_rig_view* sinew_rig_data_view_for(const sinew_rig_data* rig, const char* backend)
{
    for (uint32_t i = 0; i < rig->baked_count; ++i)
        if (strcmp(rig->baked[i].backend, backend) == 0) return &rig->baked_views[i];
    return &rig->view;
}

void sinew_rig_data_local_to_model(const sinew_rig_data* rig, const float* local, float* model)
{
    for (uint32_t i = 0; i < rig->view.joint_count; ++i) {
        uint32_t j = rig->fk_order[i];
        int32_t p = rig->view.parents[j];
        if (p < 0) {
            memcpy(model + 16u * j, local + 16u * j, 64u);
        } else {
            glm_mat4_mul((vec4*)(model + 16u * (uint32_t)p), (vec4*)(local + 16u * j),
                         (vec4*)(model + 16u * j));
        }
    }
}
