/* glTF 2.0, FBX, X, Collada and the rest through assimp (BSD-3, linked by this importer
 * library only, never by the runtime core). SPDX-License-Identifier: MIT
 *
 * The whole scene becomes one rig:
 * - Every triangle mesh instance (a node and one of its meshes) is a sub-mesh of one render
 *   mesh, its vertices moved to model space by the node's global transform.
 * - The skeleton is every node a bone names, every node that carries a mesh without weights
 *   (its vertices ride rigidly on it), and every node on the paths from those up to their
 *   lowest common ancestor, which becomes the root. Joints are ordered parents first.
 * - A bone's bind matrix (model-space rest transform) is mesh_global * inverse(offset), so that
 *   skinning with it reproduces assimp's rule global(bone) * offset * v for every pose and
 *   gives back the model-space mesh in the bind pose. Other joints bind at their node's
 *   global transform.
 * - Weights are every positive influence assimp reports (none are dropped or limited).
 * - Animations are resampled onto the union of their channels' key times, which is exact for
 *   assimp's linear/slerp key interpolation; a joint without a channel holds its node's rest
 *   transform, and channels on nodes above the root are folded into the root's transform.
 * aiImportFile keeps its error text in a global, so concurrent imports through assimp may
 * report each other's message (the result codes stay right).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include "import_internal.h"

/* Nodes beyond this are refused: the node walk and name index are sized by it. */
#define MAX_NODES (1u << 24)

typedef struct scene_node {
    const struct aiNode* node;
    int32_t parent;             /* node index, -1 for the scene root */
    uint32_t depth;
    int32_t joint;              /* joint index, -1 when not in the skeleton */
    uint8_t needed;             /* a bone or a rigid mesh's node */
    float local[16];            /* mTransformation, column-major */
    float global[16];
} scene_node;

typedef struct node_name {
    const char* name;
    uint32_t index;
} node_name;

typedef struct mesh_instance {
    uint32_t node;
    const struct aiMesh* mesh;
    uint32_t first_vertex;
    uint32_t first_triangle;
    uint32_t triangle_count;
    uint8_t rigid;              /* some vertices carry no weight: they ride on the node */
} mesh_instance;

typedef struct assimp_import {
    const import_context* ctx;
    const struct aiScene* scene;
    scene_node* nodes;
    uint32_t node_count;
    node_name* by_name;
    mesh_instance* instances;
    uint32_t instance_count;
    uint32_t vertex_count;
    uint32_t triangle_count;
    uint32_t* joint_nodes;      /* joint -> node */
    uint32_t joint_count;
    uint32_t root;              /* node index of the root joint */
} assimp_import;

static void from_ai_matrix(const struct aiMatrix4x4* m, float out[16])
{
    /* assimp stores rows (a1..a4 is the first row); sinew stores columns. */
    const float rows[16] = { m->a1, m->a2, m->a3, m->a4, m->b1, m->b2, m->b3, m->b4,
                             m->c1, m->c2, m->c3, m->c4, m->d1, m->d2, m->d3, m->d4 };
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) out[c * 4 + r] = rows[r * 4 + c];
}

static int all_finite(const float* v, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (!isfinite(v[i])) return 0;
    return 1;
}

static const char* node_label(const assimp_import* im, uint32_t node)
{
    const char* name = im->nodes[node].node->mName.data;
    return name[0] ? name : "(unnamed)";
}

/* ---------------------------------------------------------------------------------------- */
/* Nodes                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static int compare_node_names(const void* a, const void* b)
{
    const node_name* x = (const node_name*)a;
    const node_name* y = (const node_name*)b;
    int c = strcmp(x->name, y->name);
    if (c != 0) return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int compare_name_only(const void* a, const void* b)
{
    return strcmp(((const node_name*)a)->name, ((const node_name*)b)->name);
}

/* The first node (in pre-order) with that name, or -1. */
static int32_t find_node(const assimp_import* im, const char* name)
{
    node_name key = { name, 0 };
    const node_name* hit = (const node_name*)bsearch(&key, im->by_name, im->node_count,
                                                     sizeof *im->by_name, compare_name_only);
    if (!hit) return -1;
    while (hit > im->by_name && strcmp(hit[-1].name, name) == 0) --hit;
    return (int32_t)hit->index;
}

/* Flattens the node tree in pre-order (parents first) without recursion: a file may nest
 * nodes deeper than the C stack would like. */
/* The walk's stack of nodes still to visit, each with its parent's index. */
typedef struct node_stack {
    struct { const struct aiNode* node; int32_t parent; }* items;
    uint32_t size, capacity;
} node_stack;

/* Appends `node` under `parent` to im->nodes (grown as needed, at most MAX_NODES) with its
 * local and global transforms. */
static sinew_result add_node(assimp_import* im, const struct aiNode* node, int32_t parent,
                             uint32_t* capacity)
{
    uint32_t count = im->node_count;
    if (count == MAX_NODES)
        return import_fail(im->ctx, SINEW_ERROR_LIMIT, "%s: more than %u nodes", im->ctx->path,
                           MAX_NODES);
    if (count == *capacity) {
        scene_node* grown = (scene_node*)realloc(im->nodes, 2 * *capacity * sizeof *grown);
        if (!grown)
            return import_fail(im->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory",
                               im->ctx->path);
        im->nodes = grown;
        *capacity *= 2;
    }
    scene_node* n = &im->nodes[count];
    memset(n, 0, sizeof *n);
    n->node = node;
    n->parent = parent;
    n->joint = -1;
    n->depth = parent >= 0 ? im->nodes[parent].depth + 1 : 0;
    from_ai_matrix(&node->mTransformation, n->local);
    if (!all_finite(n->local, 16))
        return import_fail(im->ctx, SINEW_ERROR_FILE_FORMAT,
                           "%s: node '%s' has a non-finite transform", im->ctx->path,
                           node->mName.data);
    if (parent >= 0) import_mat4_mul(im->nodes[parent].global, n->local, n->global);
    else memcpy(n->global, n->local, sizeof n->global);
    im->node_count = count + 1;
    return SINEW_OK;
}

/* Pushes the children of `node` (index self) in reverse, so that the first comes out first;
 * warns once when a child names another parent. */
static sinew_result push_children(assimp_import* im, node_stack* st, const struct aiNode* node,
                                  int32_t self, int* parent_warned)
{
    if (node->mNumChildren > 0 && !node->mChildren)
        return import_fail(im->ctx, SINEW_ERROR_FILE_FORMAT,
                           "%s: node '%s' lists children it does not have", im->ctx->path,
                           node->mName.data);
    if ((uint64_t)st->size + node->mNumChildren > st->capacity) {
        uint64_t wanted = (uint64_t)st->size + node->mNumChildren;
        if (wanted > MAX_NODES)
            return import_fail(im->ctx, SINEW_ERROR_LIMIT, "%s: more than %u nodes",
                               im->ctx->path, MAX_NODES);
        void* grown = realloc(st->items, (size_t)wanted * 2 * sizeof *st->items);
        if (!grown)
            return import_fail(im->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory",
                               im->ctx->path);
        st->items = grown;
        st->capacity = (uint32_t)(wanted * 2);
    }
    for (uint32_t c = node->mNumChildren; c-- > 0;) {
        if (!node->mChildren[c])
            return import_fail(im->ctx, SINEW_ERROR_FILE_FORMAT,
                               "%s: node '%s' has a missing child", im->ctx->path,
                               node->mName.data);
        if (node->mChildren[c]->mParent != node && !*parent_warned) {
            /* Some importers (HL1 MDL) link mParent along the bone chain while mChildren
             * lists the bones flat; the tree is what is walked and what counts. */
            import_log(im->ctx, SINEW_LOG_WARNING,
                       "%s: node '%s' names another parent than the node listing it; the "
                       "child lists are used", im->ctx->path, node->mChildren[c]->mName.data);
            *parent_warned = 1;
        }
        st->items[st->size].node = node->mChildren[c];
        st->items[st->size++].parent = self;
    }
    return SINEW_OK;
}

/* im->by_name: the nodes sorted by name, for find_node. */
static sinew_result index_names(assimp_import* im)
{
    uint32_t count = im->node_count;
    im->by_name = (node_name*)import_calloc(count, sizeof *im->by_name);
    if (!im->by_name)
        return import_fail(im->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory",
                           im->ctx->path);
    for (uint32_t i = 0; i < count; ++i) {
        im->by_name[i].name = im->nodes[i].node->mName.data;
        im->by_name[i].index = i;
    }
    qsort(im->by_name, count, sizeof *im->by_name, compare_node_names);
    return SINEW_OK;
}

/* The scene's nodes in depth-first order (parents before children), walked with an explicit
 * stack so that deep trees cannot overflow the call stack. */
static sinew_result collect_nodes(assimp_import* im)
{
    const struct aiNode* root = im->scene->mRootNode;
    if (!root)
        return import_fail(im->ctx, SINEW_ERROR_FILE_FORMAT, "%s: the scene has no root node",
                           im->ctx->path);
    uint32_t capacity = 64;
    node_stack st = { NULL, 0, 64 };
    im->node_count = 0;
    im->nodes = (scene_node*)malloc(capacity * sizeof *im->nodes);
    st.items = malloc(st.capacity * sizeof *st.items);
    sinew_result res = SINEW_OK;
    int parent_warned = 0;
    if (!im->nodes || !st.items)
        res = import_fail(im->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", im->ctx->path);
    if (res == SINEW_OK) {
        st.items[0].node = root;
        st.items[0].parent = -1;
        st.size = 1;
    }
    while (res == SINEW_OK && st.size > 0) {
        const struct aiNode* node = st.items[st.size - 1].node;
        int32_t parent = st.items[--st.size].parent;
        res = add_node(im, node, parent, &capacity);
        if (res == SINEW_OK)
            res = push_children(im, &st, node, (int32_t)im->node_count - 1, &parent_warned);
    }
    if (res == SINEW_OK) res = index_names(im);
    free(st.items);
    return res;
}

/* ---------------------------------------------------------------------------------------- */
/* Meshes and the skeleton they need                                                        */
/* ---------------------------------------------------------------------------------------- */

static uint32_t triangle_faces(const struct aiMesh* mesh)
{
    uint32_t n = 0;
    for (uint32_t f = 0; f < mesh->mNumFaces; ++f) n += mesh->mFaces[f].mNumIndices == 3;
    return n;
}

static sinew_result collect_instances(assimp_import* im)
{
    const struct aiScene* scene = im->scene;
    uint64_t instances = 0;
    for (uint32_t i = 0; i < im->node_count; ++i) instances += im->nodes[i].node->mNumMeshes;
    if (instances > 0) {
        if (instances > UINT32_MAX / 2)
            return import_fail(im->ctx, SINEW_ERROR_LIMIT, "%s: too many mesh instances",
                               im->ctx->path);
        im->instances = (mesh_instance*)import_calloc((size_t)instances, sizeof *im->instances);
        if (!im->instances)
            return import_fail(im->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory",
                               im->ctx->path);
    }
    uint64_t vertices = 0, triangles = 0;
    uint32_t skipped = 0;
    for (uint32_t i = 0; i < im->node_count; ++i) {
        const struct aiNode* node = im->nodes[i].node;
        for (uint32_t k = 0; k < node->mNumMeshes; ++k) {
            uint32_t index = node->mMeshes[k];
            if (index >= scene->mNumMeshes || !scene->mMeshes[index])
                return import_fail(im->ctx, SINEW_ERROR_FILE_FORMAT,
                                   "%s: node '%s' names mesh %u of %u", im->ctx->path,
                                   node_label(im, i), (unsigned)index,
                                   (unsigned)scene->mNumMeshes);
            const struct aiMesh* mesh = scene->mMeshes[index];
            uint32_t tris = mesh->mVertices && mesh->mFaces ? triangle_faces(mesh) : 0;
            if (tris == 0 || mesh->mNumVertices == 0) {
                ++skipped;
                continue;
            }
            mesh_instance* inst = &im->instances[im->instance_count++];
            inst->node = i;
            inst->mesh = mesh;
            inst->first_vertex = (uint32_t)vertices;
            inst->first_triangle = (uint32_t)triangles;
            inst->triangle_count = tris;
            vertices += mesh->mNumVertices;
            triangles += tris;
            if (vertices > UINT32_MAX / 4 || triangles > UINT32_MAX / 4)
                return import_fail(im->ctx, SINEW_ERROR_LIMIT,
                                   "%s: more than %u vertices or triangles", im->ctx->path,
                                   (unsigned)(UINT32_MAX / 4));
        }
    }
    if (skipped > 0)
        import_log(im->ctx, SINEW_LOG_WARNING, "%s: %u mesh instances without triangles skipped",
                   im->ctx->path, (unsigned)skipped);
    if (im->instance_count == 0)
        return import_fail(im->ctx, SINEW_ERROR_EMPTY_MESH, "%s: the scene has no triangle mesh",
                           im->ctx->path);
    im->vertex_count = (uint32_t)vertices;
    im->triangle_count = (uint32_t)triangles;
    return SINEW_OK;
}

/* Marks the nodes the meshes need: bones, and the nodes of meshes with unweighted vertices. */
static sinew_result mark_needed_nodes(assimp_import* im)
{
    uint32_t largest = 0;
    for (uint32_t i = 0; i < im->instance_count; ++i)
        if (im->instances[i].mesh->mNumVertices > largest)
            largest = im->instances[i].mesh->mNumVertices;
    uint8_t* weighted = (uint8_t*)import_calloc(largest, 1);
    if (!weighted)
        return import_fail(im->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", im->ctx->path);
    sinew_result res = SINEW_OK;
    for (uint32_t i = 0; i < im->instance_count && res == SINEW_OK; ++i) {
        mesh_instance* inst = &im->instances[i];
        const struct aiMesh* mesh = inst->mesh;
        memset(weighted, 0, mesh->mNumVertices);
        if (mesh->mNumBones > 0 && !mesh->mBones) {
            res = import_fail(im->ctx, SINEW_ERROR_FILE_FORMAT,
                              "%s: mesh '%s' lists bones it does not have", im->ctx->path,
                              mesh->mName.data);
            break;
        }
        for (uint32_t b = 0; b < mesh->mNumBones && res == SINEW_OK; ++b) {
            const struct aiBone* bone = mesh->mBones[b];
            int32_t node = bone ? find_node(im, bone->mName.data) : -1;
            if (node < 0) {
                res = import_fail(im->ctx, SINEW_ERROR_SKELETON,
                                  "%s: bone '%s' of mesh '%s' names no node of the scene",
                                  im->ctx->path, bone ? bone->mName.data : "(null)",
                                  mesh->mName.data);
                break;
            }
            im->nodes[node].needed = 1;
            if (bone->mNumWeights > 0 && !bone->mWeights) {
                res = import_fail(im->ctx, SINEW_ERROR_FILE_FORMAT,
                                  "%s: bone '%s' lists weights it does not have", im->ctx->path,
                                  bone->mName.data);
                break;
            }
            for (uint32_t w = 0; w < bone->mNumWeights; ++w) {
                const struct aiVertexWeight* vw = &bone->mWeights[w];
                if (vw->mVertexId >= mesh->mNumVertices) {
                    res = import_fail(im->ctx, SINEW_ERROR_VERTEX_INDEX,
                                      "%s: bone '%s' weights vertex %u of mesh '%s', which has "
                                      "%u vertices", im->ctx->path, bone->mName.data,
                                      (unsigned)vw->mVertexId, mesh->mName.data,
                                      (unsigned)mesh->mNumVertices);
                    break;
                }
                if (!isfinite(vw->mWeight) || vw->mWeight < 0.0f) {
                    res = import_fail(im->ctx, SINEW_ERROR_FILE_FORMAT,
                                      "%s: bone '%s' gives vertex %u of mesh '%s' the weight %g",
                                      im->ctx->path, bone->mName.data, (unsigned)vw->mVertexId,
                                      mesh->mName.data, (double)vw->mWeight);
                    break;
                }
                if (vw->mWeight > 0.0f) weighted[vw->mVertexId] = 1;
            }
        }
        for (uint32_t v = 0; v < mesh->mNumVertices && !inst->rigid; ++v)
            inst->rigid = !weighted[v];
        if (inst->rigid) im->nodes[inst->node].needed = 1;
    }
    free(weighted);
    return res;
}

/* The skeleton: needed nodes and every node between them and their lowest common ancestor. */
static sinew_result build_skeleton(assimp_import* im)
{
    int32_t lca = -1;
    for (uint32_t i = 0; i < im->node_count; ++i) {
        if (!im->nodes[i].needed) continue;
        if (lca < 0) {
            lca = (int32_t)i;
            continue;
        }
        int32_t a = lca, b = (int32_t)i;
        while (im->nodes[a].depth > im->nodes[b].depth) a = im->nodes[a].parent;
        while (im->nodes[b].depth > im->nodes[a].depth) b = im->nodes[b].parent;
        while (a != b) {
            a = im->nodes[a].parent;
            b = im->nodes[b].parent;
        }
        lca = a;
    }
    /* mark_needed_nodes marks at least the node of the first instance's mesh or a bone. */
    if (lca < 0)
        return import_fail(im->ctx, SINEW_ERROR_SKELETON, "%s: no node to build a skeleton from",
                           im->ctx->path);
    im->root = (uint32_t)lca;

    /* joint = 0 marks membership for now; indices are given in pre-order below. */
    for (uint32_t i = 0; i < im->node_count; ++i) {
        if (!im->nodes[i].needed) continue;
        for (int32_t k = (int32_t)i; im->nodes[k].joint < 0; k = im->nodes[k].parent) {
            im->nodes[k].joint = 0;
            if (k == lca) break;
        }
    }
    uint32_t joints = 0;
    for (uint32_t i = 0; i < im->node_count; ++i)
        if (im->nodes[i].joint >= 0) im->nodes[i].joint = (int32_t)joints++;
    im->joint_count = joints;
    im->joint_nodes = (uint32_t*)import_calloc(joints, sizeof(uint32_t));
    if (!im->joint_nodes)
        return import_fail(im->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", im->ctx->path);
    for (uint32_t i = 0; i < im->node_count; ++i)
        if (im->nodes[i].joint >= 0) im->joint_nodes[im->nodes[i].joint] = i;
    return SINEW_OK;
}

static int matrices_close(const float* a, const float* b)
{
    float scale = 1.0f;
    for (int i = 0; i < 16; ++i) {
        if (fabsf(a[i]) > scale) scale = fabsf(a[i]);
    }
    for (int i = 0; i < 16; ++i)
        if (fabsf(a[i] - b[i]) > 1e-3f * scale) return 0;
    return 1;
}

static sinew_result fill_skeleton(assimp_import* im, sinew_character* character)
{
    import_storage* st = import_storage_of(character);
    uint32_t n = im->joint_count;
    character->rig.skeleton.joint_count = n;
    st->parents = (int32_t*)import_calloc(n, sizeof(int32_t));
    st->bind_matrices = (float*)import_calloc((size_t)n * 16, sizeof(float));
    st->names = (char**)import_calloc(n, sizeof(char*));
    uint8_t* from_bone = (uint8_t*)import_calloc(n, 1);
    if (!st->parents || !st->bind_matrices || !st->names || !from_bone) {
        free(from_bone);
        return import_fail(im->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", im->ctx->path);
    }
    st->name_count = n;
    for (uint32_t j = 0; j < n; ++j) {
        const scene_node* node = &im->nodes[im->joint_nodes[j]];
        st->parents[j] = im->joint_nodes[j] == im->root ? -1 : im->nodes[node->parent].joint;
        memcpy(st->bind_matrices + (size_t)j * 16, node->global, 16 * sizeof(float));
        if (node->node->mName.data[0]) {
            st->names[j] = import_strdup(node->node->mName.data);
        } else {
            char fallback[32];
            snprintf(fallback, sizeof fallback, "node%u", (unsigned)im->joint_nodes[j]);
            st->names[j] = import_strdup(fallback);
        }
        if (!st->names[j]) {
            free(from_bone);
            return import_fail(im->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory",
                               im->ctx->path);
        }
    }

    sinew_result res = SINEW_OK;
    int warned = 0;
    for (uint32_t i = 0; i < im->instance_count && res == SINEW_OK; ++i) {
        const mesh_instance* inst = &im->instances[i];
        const float* mesh_global = im->nodes[inst->node].global;
        for (uint32_t b = 0; b < inst->mesh->mNumBones; ++b) {
            const struct aiBone* bone = inst->mesh->mBones[b];
            uint32_t j = (uint32_t)im->nodes[find_node(im, bone->mName.data)].joint;
            float offset[16], inverse[16], bind[16];
            from_ai_matrix(&bone->mOffsetMatrix, offset);
            if (!all_finite(offset, 16) || !import_mat4_invert(offset, inverse)) {
                res = import_fail(im->ctx, SINEW_ERROR_SKELETON,
                                  "%s: bone '%s' has a singular or non-finite offset matrix",
                                  im->ctx->path, bone->mName.data);
                break;
            }
            import_mat4_mul(mesh_global, inverse, bind);
            float* slot = st->bind_matrices + (size_t)j * 16;
            if (!from_bone[j]) {
                memcpy(slot, bind, sizeof bind);
                from_bone[j] = 1;
            } else if (!warned && !matrices_close(slot, bind)) {
                /* One bind matrix per joint cannot serve two meshes that disagree; the first
                 * mesh keeps its exact rest shape. */
                import_log(im->ctx, SINEW_LOG_WARNING,
                           "%s: meshes disagree on the bind pose of bone '%s'; the first "
                           "mesh's is used", im->ctx->path, bone->mName.data);
                warned = 1;
            }
        }
    }
    free(from_bone);
    if (res != SINEW_OK) return res;
    return import_rest_local_from_bind(im->ctx, character);
}

static sinew_result fill_mesh(assimp_import* im, sinew_character* character)
{
    import_storage* st = import_storage_of(character);
    sinew_mesh_desc* rm = &character->rig.render_mesh;
    rm->vertex_count = im->vertex_count;
    rm->triangle_count = im->triangle_count;
    rm->submesh_count = im->instance_count;
    st->positions = (float*)import_calloc((size_t)im->vertex_count * 3, sizeof(float));
    st->normals = (float*)import_calloc((size_t)im->vertex_count * 3, sizeof(float));
    st->indices = (uint32_t*)import_calloc((size_t)im->triangle_count * 3, sizeof(uint32_t));
    st->submesh_first_triangle = (uint32_t*)import_calloc(im->instance_count, sizeof(uint32_t));
    if (!st->positions || !st->normals || !st->indices || !st->submesh_first_triangle)
        return import_fail(im->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory for %u vertices",
                           im->ctx->path, (unsigned)im->vertex_count);

    int keep_normals = 1;
    for (uint32_t i = 0; i < im->instance_count; ++i) {
        const mesh_instance* inst = &im->instances[i];
        const struct aiMesh* mesh = inst->mesh;
        const float* m = im->nodes[inst->node].global;
        /* Normals move with the inverse transpose, so that non-uniform scale keeps them
         * perpendicular to the surface. */
        float inverse[16], nm[9] = { 0 };
        if (!mesh->mNormals || !import_mat4_invert(m, inverse)) keep_normals = 0;
        else
            for (int c = 0; c < 3; ++c)
                for (int r = 0; r < 3; ++r) nm[c * 3 + r] = inverse[r * 4 + c];
        for (uint32_t v = 0; v < mesh->mNumVertices; ++v) {
            const struct aiVector3D* p = &mesh->mVertices[v];
            float* out = st->positions + ((size_t)inst->first_vertex + v) * 3;
            for (int r = 0; r < 3; ++r)
                out[r] = m[r] * p->x + m[4 + r] * p->y + m[8 + r] * p->z + m[12 + r];
            if (!all_finite(out, 3))
                return import_fail(im->ctx, SINEW_ERROR_FILE_FORMAT,
                                   "%s: vertex %u of mesh '%s' is not finite", im->ctx->path,
                                   (unsigned)v, mesh->mName.data);
            if (!keep_normals) continue;
            const struct aiVector3D* q = &mesh->mNormals[v];
            float* on = st->normals + ((size_t)inst->first_vertex + v) * 3;
            for (int r = 0; r < 3; ++r) on[r] = nm[r] * q->x + nm[3 + r] * q->y + nm[6 + r] * q->z;
            float length = sqrtf(on[0] * on[0] + on[1] * on[1] + on[2] * on[2]);
            if (!(length > 1e-20f) || !isfinite(length)) keep_normals = 0;
            else
                for (int r = 0; r < 3; ++r) on[r] /= length;
        }
        st->submesh_first_triangle[i] = inst->first_triangle;
        uint32_t* tri = st->indices + (size_t)inst->first_triangle * 3;
        for (uint32_t f = 0; f < mesh->mNumFaces; ++f) {
            const struct aiFace* face = &mesh->mFaces[f];
            if (face->mNumIndices != 3) continue;
            if (!face->mIndices)
                return import_fail(im->ctx, SINEW_ERROR_FILE_FORMAT,
                                   "%s: face %u of mesh '%s' has no indices", im->ctx->path,
                                   (unsigned)f, mesh->mName.data);
            for (int c = 0; c < 3; ++c) {
                if (face->mIndices[c] >= mesh->mNumVertices)
                    return import_fail(im->ctx, SINEW_ERROR_VERTEX_INDEX,
                                       "%s: face %u of mesh '%s' uses vertex %u of %u",
                                       im->ctx->path, (unsigned)f, mesh->mName.data,
                                       (unsigned)face->mIndices[c], (unsigned)mesh->mNumVertices);
                *tri++ = face->mIndices[c] + inst->first_vertex;
            }
        }
    }
    if (!keep_normals) {
        /* Some mesh lacks usable normals: let the runtime compute all of them alike. */
        free(st->normals);
        st->normals = NULL;
    }
    return SINEW_OK;
}

/* A bone listed twice for one mesh gives a vertex two entries of one joint: they are merged,
 * compacting the rows in place (the write position never passes the read position). */
static void merge_repeated_joints(import_storage* st, uint32_t vertices)
{
    uint32_t* offsets = st->weight_offsets;
    uint32_t write = 0, read_start = 0;
    for (uint32_t v = 0; v < vertices; ++v) {
        uint32_t read_end = offsets[v + 1], row = write;
        for (uint32_t e = read_start; e < read_end; ++e) {
            uint32_t k = row;
            while (k < write && st->weight_joints[k] != st->weight_joints[e]) ++k;
            if (k < write) {
                st->weight_values[k] += st->weight_values[e];
            } else {
                st->weight_joints[write] = st->weight_joints[e];
                st->weight_values[write++] = st->weight_values[e];
            }
        }
        offsets[v] = row;
        read_start = read_end;
    }
    offsets[vertices] = write;
}

static sinew_result fill_weights(assimp_import* im, sinew_character* character)
{
    import_storage* st = import_storage_of(character);
    uint32_t vertices = im->vertex_count;
    st->weight_offsets = (uint32_t*)import_calloc((size_t)vertices + 1, sizeof(uint32_t));
    if (!st->weight_offsets)
        return import_fail(im->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", im->ctx->path);
    uint32_t* offsets = st->weight_offsets;

    /* Count pass: positive influences per vertex, or one rigid entry for a vertex without. */
    for (uint32_t i = 0; i < im->instance_count; ++i) {
        const mesh_instance* inst = &im->instances[i];
        for (uint32_t b = 0; b < inst->mesh->mNumBones; ++b) {
            const struct aiBone* bone = inst->mesh->mBones[b];
            for (uint32_t w = 0; w < bone->mNumWeights; ++w)
                if (bone->mWeights[w].mWeight > 0.0f)
                    ++offsets[inst->first_vertex + bone->mWeights[w].mVertexId + 1];
        }
        for (uint32_t v = 0; v < inst->mesh->mNumVertices; ++v)
            if (offsets[inst->first_vertex + v + 1] == 0) offsets[inst->first_vertex + v + 1] = 1;
    }
    uint64_t total = 0;
    for (uint32_t v = 0; v < vertices; ++v) {
        total += offsets[v + 1];
        if (total > UINT32_MAX / 2)
            return import_fail(im->ctx, SINEW_ERROR_LIMIT, "%s: more than %u skin influences",
                               im->ctx->path, (unsigned)(UINT32_MAX / 2));
        offsets[v + 1] = (uint32_t)total;
    }
    st->weight_joints = (uint32_t*)import_calloc((size_t)total, sizeof(uint32_t));
    st->weight_values = (float*)import_calloc((size_t)total, sizeof(float));
    uint32_t* cursor = (uint32_t*)import_calloc(vertices, sizeof(uint32_t));
    if (!st->weight_joints || !st->weight_values || !cursor) {
        free(cursor);
        return import_fail(im->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", im->ctx->path);
    }
    memcpy(cursor, offsets, (size_t)vertices * sizeof(uint32_t));

    /* Fill pass. */
    for (uint32_t i = 0; i < im->instance_count; ++i) {
        const mesh_instance* inst = &im->instances[i];
        for (uint32_t b = 0; b < inst->mesh->mNumBones; ++b) {
            const struct aiBone* bone = inst->mesh->mBones[b];
            uint32_t joint = (uint32_t)im->nodes[find_node(im, bone->mName.data)].joint;
            for (uint32_t w = 0; w < bone->mNumWeights; ++w) {
                const struct aiVertexWeight* vw = &bone->mWeights[w];
                if (!(vw->mWeight > 0.0f)) continue;
                uint32_t e = cursor[inst->first_vertex + vw->mVertexId]++;
                st->weight_joints[e] = joint;
                st->weight_values[e] = vw->mWeight;
            }
        }
        uint32_t rigid_joint = (uint32_t)im->nodes[inst->node].joint;
        for (uint32_t v = 0; v < inst->mesh->mNumVertices; ++v) {
            uint32_t g = inst->first_vertex + v;
            if (cursor[g] == offsets[g]) {
                st->weight_joints[cursor[g]] = rigid_joint;
                st->weight_values[cursor[g]++] = 1.0f;
            }
        }
    }
    free(cursor);

    merge_repeated_joints(st, vertices);
    return SINEW_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Animations                                                                               */
/* ---------------------------------------------------------------------------------------- */

typedef struct rest_trs {
    float t[3], q[4], s[3];
} rest_trs;

static int compare_doubles(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

/* Index of the last key at or before `time` (0 when before all). */
#define LAST_KEY_AT_OR_BEFORE(keys, count, time, out)                                      \
    do {                                                                                    \
        uint32_t lo_ = 0, hi_ = (count) - 1;                                                \
        while (lo_ < hi_) {                                                                 \
            uint32_t mid_ = lo_ + (hi_ - lo_ + 1) / 2;                                      \
            if ((keys)[mid_].mTime <= (time)) lo_ = mid_;                                   \
            else hi_ = mid_ - 1;                                                            \
        }                                                                                   \
        (out) = lo_;                                                                        \
    } while (0)

static float key_fraction(double t0, double t1, double time)
{
    if (!(t1 > t0)) return 0.0f;
    double u = (time - t0) / (t1 - t0);
    return (float)(u < 0.0 ? 0.0 : u > 1.0 ? 1.0 : u);
}

/* Linear interpolation between vector keys, clamped outside them (assimp's evaluation). */
static void sample_vector(const struct aiVectorKey* keys, uint32_t count, double time,
                          const float fallback[3], float out[3])
{
    if (count == 0) {
        memcpy(out, fallback, 3 * sizeof(float));
        return;
    }
    uint32_t k;
    LAST_KEY_AT_OR_BEFORE(keys, count, time, k);
    uint32_t k1 = k + 1 < count ? k + 1 : k;
    float u = time <= keys[k].mTime ? 0.0f : key_fraction(keys[k].mTime, keys[k1].mTime, time);
    const struct aiVector3D* a = &keys[k].mValue;
    const struct aiVector3D* b = &keys[k1].mValue;
    out[0] = a->x + (b->x - a->x) * u;
    out[1] = a->y + (b->y - a->y) * u;
    out[2] = a->z + (b->z - a->z) * u;
}

static void sample_rotation(const struct aiQuatKey* keys, uint32_t count, double time,
                            const float fallback[4], float out[4])
{
    if (count == 0) {
        memcpy(out, fallback, 4 * sizeof(float));
        return;
    }
    uint32_t k;
    LAST_KEY_AT_OR_BEFORE(keys, count, time, k);
    uint32_t k1 = k + 1 < count ? k + 1 : k;
    float u = time <= keys[k].mTime ? 0.0f : key_fraction(keys[k].mTime, keys[k1].mTime, time);
    float a[4] = { keys[k].mValue.x, keys[k].mValue.y, keys[k].mValue.z, keys[k].mValue.w };
    float b[4] = { keys[k1].mValue.x, keys[k1].mValue.y, keys[k1].mValue.z, keys[k1].mValue.w };
    import_quat_normalize(a);
    import_quat_normalize(b);
    import_quat_slerp(a, b, u, out);
}

static sinew_result check_channel(const assimp_import* im, const struct aiAnimation* anim,
                                  const struct aiNodeAnim* ch)
{
    int bad = (ch->mNumPositionKeys && !ch->mPositionKeys) ||
              (ch->mNumRotationKeys && !ch->mRotationKeys) ||
              (ch->mNumScalingKeys && !ch->mScalingKeys);
    for (uint32_t k = 0; !bad && k < ch->mNumPositionKeys; ++k) {
        const struct aiVectorKey* key = &ch->mPositionKeys[k];
        bad = !isfinite(key->mTime) || !isfinite(key->mValue.x) || !isfinite(key->mValue.y) ||
              !isfinite(key->mValue.z);
    }
    for (uint32_t k = 0; !bad && k < ch->mNumScalingKeys; ++k) {
        const struct aiVectorKey* key = &ch->mScalingKeys[k];
        bad = !isfinite(key->mTime) || !isfinite(key->mValue.x) || !isfinite(key->mValue.y) ||
              !isfinite(key->mValue.z);
    }
    for (uint32_t k = 0; !bad && k < ch->mNumRotationKeys; ++k) {
        const struct aiQuatKey* key = &ch->mRotationKeys[k];
        float n = key->mValue.x * key->mValue.x + key->mValue.y * key->mValue.y +
                  key->mValue.z * key->mValue.z + key->mValue.w * key->mValue.w;
        bad = !isfinite(key->mTime) || !isfinite(n) || !(n > 1e-12f);
    }
    if (bad)
        return import_fail(im->ctx, SINEW_ERROR_FILE_FORMAT,
                           "%s: animation '%s' has a missing, non-finite or zero key for node "
                           "'%s'", im->ctx->path, anim->mName.data, ch->mNodeName.data);
    return SINEW_OK;
}

static void channel_trs(const struct aiNodeAnim* ch, const rest_trs* rest, double ticks,
                        float t[3], float q[4], float s[3])
{
    if (!ch) {
        memcpy(t, rest->t, sizeof rest->t);
        memcpy(q, rest->q, sizeof rest->q);
        memcpy(s, rest->s, sizeof rest->s);
        return;
    }
    sample_vector(ch->mPositionKeys, ch->mNumPositionKeys, ticks, rest->t, t);
    sample_rotation(ch->mRotationKeys, ch->mNumRotationKeys, ticks, rest->q, q);
    sample_vector(ch->mScalingKeys, ch->mNumScalingKeys, ticks, rest->s, s);
}

typedef struct anim_scratch {
    const struct aiNodeAnim** node_channel;   /* per node, NULL when none */
    rest_trs* rest;                           /* per node */
    double* times;
} anim_scratch;

static void append_times(double* times, size_t* count, const struct aiVectorKey* keys,
                         uint32_t n, double tps)
{
    for (uint32_t k = 0; k < n; ++k) times[(*count)++] = keys[k].mTime / tps;
}

/* The animation's channel of each node (s->node_channel), kept for the skeleton's nodes and
 * those above its root; *key_total: an upper bound of their key times, *above_root: 1 when a
 * node above the root is animated. */
static sinew_result collect_channels(assimp_import* im, const struct aiAnimation* anim,
                                     anim_scratch* s, uint64_t* key_total, int* above_root)
{
    const import_context* ctx = im->ctx;
    memset(s->node_channel, 0, (size_t)im->node_count * sizeof *s->node_channel);
    *key_total = 2;
    *above_root = 0;
    if (anim->mNumChannels > 0 && !anim->mChannels)
        return import_fail(ctx, SINEW_ERROR_FILE_FORMAT, "%s: animation '%s' lists channels it "
                           "does not have", ctx->path, anim->mName.data);
    for (uint32_t c = 0; c < anim->mNumChannels; ++c) {
        const struct aiNodeAnim* ch = anim->mChannels[c];
        if (!ch) continue;
        int32_t node = find_node(im, ch->mNodeName.data);
        if (node < 0) continue;
        int relevant = im->nodes[node].joint >= 0;
        if (!relevant) {
            for (int32_t k = im->nodes[im->root].parent; k >= 0; k = im->nodes[k].parent)
                if (k == node) relevant = *above_root = 1;
        }
        if (!relevant || s->node_channel[node]) continue;
        sinew_result res = check_channel(im, anim, ch);
        if (res != SINEW_OK) return res;
        s->node_channel[node] = ch;
        *key_total += (uint64_t)ch->mNumPositionKeys + ch->mNumRotationKeys + ch->mNumScalingKeys;
    }
    if (*key_total > MAX_ANIMATION_ENTRIES)
        return import_fail(ctx, SINEW_ERROR_LIMIT, "%s: animation '%s' has more than %llu keys",
                           ctx->path, anim->mName.data,
                           (unsigned long long)MAX_ANIMATION_ENTRIES);
    return SINEW_OK;
}

/* Every key time of the kept channels in seconds, with 0 and the duration, sorted into
 * s->times; *unique: how many remain once keys before 0 are dropped (they shape the
 * interpolation at 0 but are not kept) and times closer than a microsecond merged. */
static sinew_result key_times(assimp_import* im, const struct aiAnimation* anim, double tps,
                              uint64_t key_total, anim_scratch* s, size_t* unique)
{
    double* times = (double*)import_calloc((size_t)key_total, sizeof(double));
    if (!times)
        return import_fail(im->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", im->ctx->path);
    free(s->times);
    s->times = times;
    size_t count = 0;
    times[count++] = 0.0;
    if (anim->mDuration > 0.0 && isfinite(anim->mDuration)) times[count++] = anim->mDuration / tps;
    for (uint32_t i = 0; i < im->node_count; ++i) {
        const struct aiNodeAnim* ch = s->node_channel[i];
        if (!ch) continue;
        append_times(times, &count, ch->mPositionKeys, ch->mNumPositionKeys, tps);
        append_times(times, &count, ch->mScalingKeys, ch->mNumScalingKeys, tps);
        for (uint32_t k = 0; k < ch->mNumRotationKeys; ++k)
            times[count++] = ch->mRotationKeys[k].mTime / tps;
    }
    qsort(times, count, sizeof *times, compare_doubles);
    *unique = 0;
    for (size_t i = 0; i < count; ++i) {
        if (times[i] < 0.0) continue;
        if (*unique > 0 && times[i] - times[*unique - 1] < 1e-6) continue;
        times[(*unique)++] = times[i];
    }
    return SINEW_OK;
}

/* The transform of the nodes above the skeleton's root at `ticks`: animated when above_root,
 * else their rest transform. */
static void above_root_at(const assimp_import* im, const anim_scratch* s, int above_root,
                          double ticks, float above[16])
{
    const scene_node* root = &im->nodes[im->root];
    if (!above_root) {
        memcpy(above, im->nodes[root->parent].global, 16 * sizeof(float));
        return;
    }
    float m[16];
    int32_t chain[64];
    uint32_t depth = 0;
    memset(above, 0, 16 * sizeof(float));
    above[0] = above[5] = above[10] = above[15] = 1.0f;
    for (int32_t a = root->parent; a >= 0; a = im->nodes[a].parent) {
        if (depth == 64) {
            /* Deeper chains fall back to their rest transform from here up. */
            memcpy(above, im->nodes[a].global, 16 * sizeof(float));
            break;
        }
        chain[depth++] = a;
    }
    while (depth-- > 0) {
        float at[3], aq[4], as[3];
        channel_trs(s->node_channel[chain[depth]], &s->rest[chain[depth]], ticks, at, aq, as);
        import_compose_trs(at, aq, as, m);
        import_mat4_mul(above, m, above);
    }
}

/* Every joint's local transform at each key time; the root joint's in model space (the nodes
 * above it come first). */
static void sample_keys(const assimp_import* im, const anim_scratch* s, double tps,
                        int above_root, sinew_animation* out)
{
    const scene_node* root = &im->nodes[im->root];
    const uint32_t joints = im->joint_count;
    for (size_t k = 0; k < out->key_count; ++k) {
        double ticks = s->times[k] * tps;
        out->key_times[k] = (float)s->times[k];
        for (uint32_t j = 0; j < joints; ++j) {
            uint32_t node = im->joint_nodes[j];
            size_t e = k * joints + j;
            float* t = out->translations + e * 3;
            float* q = out->rotations + e * 4;
            float* sc = out->scales + e * 3;
            channel_trs(s->node_channel[node], &s->rest[node], ticks, t, q, sc);
            if (node != im->root || root->parent < 0) continue;
            float above[16], local[16], model[16];
            above_root_at(im, s, above_root, ticks, above);
            import_compose_trs(t, q, sc, local);
            import_mat4_mul(above, local, model);
            import_decompose_trs(model, t, q, sc);
        }
    }
}

static sinew_result convert_animation(assimp_import* im, const struct aiAnimation* anim,
                                      uint32_t index, anim_scratch* s, sinew_animation* out)
{
    const import_context* ctx = im->ctx;
    char fallback[32];
    snprintf(fallback, sizeof fallback, "animation%u", (unsigned)index);
    out->name = import_strdup(anim->mName.length ? anim->mName.data : fallback);
    if (!out->name)
        return import_fail(ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", ctx->path);
    uint64_t key_total = 0;
    int above_root = 0;
    sinew_result r = collect_channels(im, anim, s, &key_total, &above_root);
    if (r != SINEW_OK) return r;
    double tps = anim->mTicksPerSecond > 0.0 && isfinite(anim->mTicksPerSecond)
                     ? anim->mTicksPerSecond
                     : 25.0; /* assimp's documented default when the file gives none */
    size_t unique = 0;
    r = key_times(im, anim, tps, key_total, s, &unique);
    if (r != SINEW_OK) return r;
    uint32_t joints = im->joint_count;
    if ((uint64_t)unique * joints > MAX_ANIMATION_ENTRIES)
        return import_fail(ctx, SINEW_ERROR_LIMIT,
                           "%s: animation '%s' needs %zu keys of %u joints, more than %llu",
                           ctx->path, anim->mName.data, unique, (unsigned)joints,
                           (unsigned long long)MAX_ANIMATION_ENTRIES);
    size_t entries = unique * joints;
    out->joint_count = joints;
    out->key_count = (uint32_t)unique;
    out->key_times = (float*)import_calloc(unique, sizeof(float));
    out->rotations = (float*)import_calloc(entries * 4, sizeof(float));
    out->translations = (float*)import_calloc(entries * 3, sizeof(float));
    out->scales = (float*)import_calloc(entries * 3, sizeof(float));
    if (!out->key_times || !out->rotations || !out->translations || !out->scales)
        return import_fail(ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory for animation '%s'",
                           ctx->path, anim->mName.data);
    sample_keys(im, s, tps, above_root, out);
    out->duration = out->key_times[unique - 1];
    return SINEW_OK;
}

static sinew_result fill_animations(assimp_import* im, sinew_character* character)
{
    const struct aiScene* scene = im->scene;
    if (scene->mNumAnimations == 0) return SINEW_OK;
    if (!scene->mAnimations)
        return import_fail(im->ctx, SINEW_ERROR_FILE_FORMAT, "%s: the scene lists animations it "
                           "does not have", im->ctx->path);
    anim_scratch s;
    memset(&s, 0, sizeof s);
    s.node_channel = (const struct aiNodeAnim**)import_calloc(im->node_count,
                                                              sizeof *s.node_channel);
    s.rest = (rest_trs*)import_calloc(im->node_count, sizeof *s.rest);
    character->animations = (sinew_animation*)import_calloc(scene->mNumAnimations,
                                                            sizeof(sinew_animation));
    sinew_result res = SINEW_OK;
    if (!s.node_channel || !s.rest || !character->animations) {
        res = import_fail(im->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", im->ctx->path);
    } else {
        for (uint32_t i = 0; i < im->node_count; ++i)
            import_decompose_trs(im->nodes[i].local, s.rest[i].t, s.rest[i].q, s.rest[i].s);
        for (uint32_t a = 0; a < scene->mNumAnimations && res == SINEW_OK; ++a) {
            if (!scene->mAnimations[a]) continue;
            sinew_animation* out = &character->animations[character->animation_count++];
            res = convert_animation(im, scene->mAnimations[a], a, &s, out);
        }
    }
    free(s.node_channel);
    free(s.rest);
    free(s.times);
    return res;
}

/* ---------------------------------------------------------------------------------------- */
/* Entry                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static sinew_result convert_scene(assimp_import* im, sinew_character* character)
{
    sinew_result res;
    if ((res = collect_nodes(im)) != SINEW_OK || (res = collect_instances(im)) != SINEW_OK ||
        (res = mark_needed_nodes(im)) != SINEW_OK || (res = build_skeleton(im)) != SINEW_OK ||
        (res = fill_skeleton(im, character)) != SINEW_OK ||
        (res = fill_mesh(im, character)) != SINEW_OK ||
        (res = fill_weights(im, character)) != SINEW_OK)
        return res;
    return fill_animations(im, character);
}

sinew_result import_assimp_character(const import_context* ctx, sinew_character* character)
{
    sinew_result res = import_check_readable(ctx, ctx->path);
    if (res != SINEW_OK) return res;

    /* Triangles only (points and lines are dropped), identical vertices welded, smooth
     * normals where the file has none, and assimp's own consistency check. No
     * aiProcess_LimitBoneWeights: every influence is kept. */
    struct aiPropertyStore* props = aiCreatePropertyStore();
    if (!props) return import_fail(ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", ctx->path);
    aiSetImportPropertyInteger(props, AI_CONFIG_PP_SBP_REMOVE,
                               aiPrimitiveType_POINT | aiPrimitiveType_LINE);
    unsigned flags = aiProcess_Triangulate | aiProcess_JoinIdenticalVertices |
                     aiProcess_GenSmoothNormals | aiProcess_SortByPType |
                     aiProcess_ValidateDataStructure;
    const struct aiScene* scene = aiImportFileExWithProperties(ctx->path, flags, NULL, props);
    aiReleasePropertyStore(props);
    if (!scene) {
        const char* why = aiGetErrorString();
        return import_fail(ctx, SINEW_ERROR_FILE_FORMAT, "%s: assimp cannot read it: %s",
                           ctx->path, why && *why ? why : "no reason given");
    }

    assimp_import im;
    memset(&im, 0, sizeof im);
    im.ctx = ctx;
    im.scene = scene;
    res = convert_scene(&im, character);
    free(im.nodes);
    free(im.by_name);
    free(im.instances);
    free(im.joint_nodes);
    aiReleaseImport(scene);
    return res;
}
