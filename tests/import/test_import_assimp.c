/* The assimp path on Debian's assimp-testmodels: counts, hierarchy, weights, and posed
 * meshes compared with a reference that evaluates the same file through assimp's own scene
 * (node tree, channels, bone offsets) and assimp's matrix functions.
 * SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include "test_support.h"
#include "import_test_util.h"

static sinew_test_log g_log;

static sinew_character* load_model(const char* relative, const char** out_path)
{
    const char* path = sinew_test_assimp_path(relative);
    sinew_import_options options = SINEW_IMPORT_OPTIONS_INIT;
    options.logger = &g_log.logger;
    sinew_test_log_reset(&g_log);
    sinew_character* c = NULL;
    sinew_result r = sinew_import_character(path, &options, &c);
    if (r != SINEW_OK) fail_msg("import %s: %d (%s)", path, (int)r, g_log.last);
    assert_int_equal(g_log.count[SINEW_LOG_ERROR], 0);
    if (out_path) *out_path = path;
    return c;
}

/* ---------------------------------------------------------------------------------------- */
/* Reference: the scene as assimp gives it, evaluated here                                  */
/* ---------------------------------------------------------------------------------------- */

typedef struct reference {
    const struct aiScene* scene;
    uint32_t vertex_count, triangle_count, instance_count;
} reference;

static const struct aiScene* reference_scene(const char* path)
{
    /* The same post-processing as the importer, so the vertex sets match. */
    struct aiPropertyStore* props = aiCreatePropertyStore();
    aiSetImportPropertyInteger(props, AI_CONFIG_PP_SBP_REMOVE,
                               aiPrimitiveType_POINT | aiPrimitiveType_LINE);
    const struct aiScene* scene = aiImportFileExWithProperties(
        path,
        aiProcess_Triangulate | aiProcess_JoinIdenticalVertices | aiProcess_GenSmoothNormals |
            aiProcess_SortByPType | aiProcess_ValidateDataStructure,
        NULL, props);
    aiReleasePropertyStore(props);
    assert_non_null(scene);
    return scene;
}

static double ref_lerp_time(double t0, double t1, double t)
{
    if (!(t1 > t0)) return 0.0;
    double u = (t - t0) / (t1 - t0);
    return u < 0 ? 0 : u > 1 ? 1 : u;
}

static struct aiVector3D ref_vector(const struct aiVectorKey* keys, unsigned n, double ticks,
                                    struct aiVector3D rest)
{
    if (n == 0) return rest;
    if (ticks <= keys[0].mTime) return keys[0].mValue;
    if (ticks >= keys[n - 1].mTime) return keys[n - 1].mValue;
    unsigned k = 0;
    while (k + 1 < n && keys[k + 1].mTime <= ticks) ++k;
    double u = ref_lerp_time(keys[k].mTime, keys[k + 1].mTime, ticks);
    struct aiVector3D a = keys[k].mValue, b = keys[k + 1].mValue, r;
    r.x = (float)(a.x + (b.x - a.x) * u);
    r.y = (float)(a.y + (b.y - a.y) * u);
    r.z = (float)(a.z + (b.z - a.z) * u);
    return r;
}

static struct aiQuaternion ref_rotation(const struct aiQuatKey* keys, unsigned n, double ticks,
                                        struct aiQuaternion rest)
{
    if (n == 0) return rest;
    if (ticks <= keys[0].mTime) return keys[0].mValue;
    if (ticks >= keys[n - 1].mTime) return keys[n - 1].mValue;
    unsigned k = 0;
    while (k + 1 < n && keys[k + 1].mTime <= ticks) ++k;
    double u = ref_lerp_time(keys[k].mTime, keys[k + 1].mTime, ticks);
    struct aiQuaternion a = keys[k].mValue, b = keys[k + 1].mValue, r;
    double d = (double)a.w * b.w + (double)a.x * b.x + (double)a.y * b.y + (double)a.z * b.z;
    double sign = d < 0 ? -1.0 : 1.0;
    d = fabs(d);
    double wa = 1.0 - u, wb = u;
    if (d < 0.9999) {
        double th = acos(d);
        wa = sin((1.0 - u) * th) / sin(th);
        wb = sin(u * th) / sin(th);
    }
    wb *= sign;
    double x = wa * a.x + wb * b.x, y = wa * a.y + wb * b.y, z = wa * a.z + wb * b.z,
           w = wa * a.w + wb * b.w;
    double len = sqrt(x * x + y * y + z * z + w * w);
    r.x = (float)(x / len);
    r.y = (float)(y / len);
    r.z = (float)(z / len);
    r.w = (float)(w / len);
    return r;
}

static const struct aiNodeAnim* ref_channel(const struct aiAnimation* anim, const char* node)
{
    for (unsigned c = 0; anim && c < anim->mNumChannels; ++c)
        if (strcmp(anim->mChannels[c]->mNodeName.data, node) == 0) return anim->mChannels[c];
    return NULL;
}

/* The node's local transform at `ticks` (its rest transform without a channel). */
static struct aiMatrix4x4 ref_local(const struct aiNode* node, const struct aiAnimation* anim,
                                    double ticks)
{
    const struct aiNodeAnim* ch = ref_channel(anim, node->mName.data);
    if (!ch) return node->mTransformation;
    struct aiVector3D rest_s, rest_t;
    struct aiQuaternion rest_q;
    aiDecomposeMatrix(&node->mTransformation, &rest_s, &rest_q, &rest_t);
    struct aiVector3D s = ref_vector(ch->mScalingKeys, ch->mNumScalingKeys, ticks, rest_s);
    struct aiVector3D t = ref_vector(ch->mPositionKeys, ch->mNumPositionKeys, ticks, rest_t);
    struct aiQuaternion q = ref_rotation(ch->mRotationKeys, ch->mNumRotationKeys, ticks, rest_q);
    /* T * R * S, as assimp's viewer composes channel keys. (aiMatrix4FromScalingQuaternion-
     * Position of assimp 5.2 scales the rows, S * R, which differs under non-uniform scale.) */
    struct aiMatrix3x3 r;
    aiMatrix3FromQuaternion(&r, &q);
    struct aiMatrix4x4 m;
    aiMatrix4FromMatrix3(&m, &r);
    m.a1 *= s.x; m.b1 *= s.x; m.c1 *= s.x;
    m.a2 *= s.y; m.b2 *= s.y; m.c2 *= s.y;
    m.a3 *= s.z; m.b3 *= s.z; m.c3 *= s.z;
    m.a4 = t.x; m.b4 = t.y; m.c4 = t.z;
    return m;
}

static const struct aiNode* ref_find(const struct aiNode* node, const char* name)
{
    if (strcmp(node->mName.data, name) == 0) return node;
    for (unsigned c = 0; c < node->mNumChildren; ++c) {
        const struct aiNode* hit = ref_find(node->mChildren[c], name);
        if (hit) return hit;
    }
    return NULL;
}

/* Global transform of `target`: the product of local transforms on the path from the root
 * through mChildren (the tree; some importers' mParent pointers disagree with it). */
static int ref_path_global(const struct aiNode* node, const struct aiNode* target,
                           const struct aiAnimation* anim, double ticks,
                           struct aiMatrix4x4 parent_global, struct aiMatrix4x4* out)
{
    struct aiMatrix4x4 local = ref_local(node, anim, ticks);
    /* aiMultiplyMatrix4(dst, src) computes dst = dst * src. */
    aiMultiplyMatrix4(&parent_global, &local);
    if (node == target) {
        *out = parent_global;
        return 1;
    }
    for (unsigned c = 0; c < node->mNumChildren; ++c)
        if (ref_path_global(node->mChildren[c], target, anim, ticks, parent_global, out))
            return 1;
    return 0;
}

static struct aiMatrix4x4 ref_global(const struct aiScene* scene, const struct aiNode* node,
                                     const struct aiAnimation* anim, double ticks)
{
    struct aiMatrix4x4 identity, g;
    aiIdentityMatrix4(&identity);
    assert_true(ref_path_global(scene->mRootNode, node, anim, ticks, identity, &g));
    return g;
}

typedef struct ref_walk {
    const struct aiScene* scene;
    const struct aiAnimation* anim; /* NULL: rest (node transforms, mesh in model space) */
    double ticks;
    float* out;                     /* 3 per vertex, in the importer's vertex order */
    uint32_t written, triangles, instances;
} ref_walk;

/* Skinned positions as assimp defines them: sum of w * global(bone) * offset * v, or the mesh
 * node's global transform for a mesh without bones; meshes in node pre-order. */
static void ref_walk_node(ref_walk* w, const struct aiNode* node)
{
    for (unsigned k = 0; k < node->mNumMeshes; ++k) {
        const struct aiMesh* mesh = w->scene->mMeshes[node->mMeshes[k]];
        unsigned tris = 0;
        for (unsigned f = 0; f < mesh->mNumFaces; ++f) tris += mesh->mFaces[f].mNumIndices == 3;
        if (tris == 0) continue;
        w->triangles += tris;
        w->instances++;
        struct aiMatrix4x4 mesh_global = ref_global(w->scene, node, w->anim, w->ticks);
        double* acc = (double*)calloc((size_t)mesh->mNumVertices * 4, sizeof(double));
        if (w->anim && mesh->mNumBones > 0) {
            for (unsigned b = 0; b < mesh->mNumBones; ++b) {
                const struct aiBone* bone = mesh->mBones[b];
                const struct aiNode* bn = ref_find(w->scene->mRootNode, bone->mName.data);
                assert_non_null(bn);
                struct aiMatrix4x4 m = ref_global(w->scene, bn, w->anim, w->ticks);
                aiMultiplyMatrix4(&m, &bone->mOffsetMatrix);
                for (unsigned i = 0; i < bone->mNumWeights; ++i) {
                    struct aiVector3D v = mesh->mVertices[bone->mWeights[i].mVertexId];
                    aiTransformVecByMatrix4(&v, &m);
                    double* a = acc + (size_t)bone->mWeights[i].mVertexId * 4;
                    double wt = bone->mWeights[i].mWeight;
                    a[0] += wt * v.x;
                    a[1] += wt * v.y;
                    a[2] += wt * v.z;
                    a[3] += wt;
                }
            }
        }
        for (unsigned v = 0; v < mesh->mNumVertices; ++v) {
            float* o = w->out ? w->out + ((size_t)w->written + v) * 3 : NULL;
            double* a = acc + (size_t)v * 4;
            if (!o) continue;
            if (a[3] > 0) {
                for (int i = 0; i < 3; ++i) o[i] = (float)(a[i] / a[3]);
            } else {
                struct aiVector3D p = mesh->mVertices[v];
                aiTransformVecByMatrix4(&p, &mesh_global);
                o[0] = p.x;
                o[1] = p.y;
                o[2] = p.z;
            }
        }
        free(acc);
        w->written += mesh->mNumVertices;
    }
    for (unsigned c = 0; c < node->mNumChildren; ++c) ref_walk_node(w, node->mChildren[c]);
}

static float max_distance(const float* a, const float* b, uint32_t n)
{
    float worst = 0.0f;
    for (uint32_t v = 0; v < n; ++v) {
        float d[3] = { a[v * 3] - b[v * 3], a[v * 3 + 1] - b[v * 3 + 1],
                       a[v * 3 + 2] - b[v * 3 + 2] };
        float len = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        if (!(len <= worst)) worst = len;
    }
    return worst;
}

/* Rest mesh and posed meshes at a few times of every animation against the reference. */
static void compare_with_reference(const sinew_character* c, const char* path)
{
    const struct aiScene* scene = reference_scene(path);
    const sinew_rig_desc* d = &c->rig;
    uint32_t n = d->render_mesh.vertex_count;
    float* expected = (float*)malloc((size_t)n * 3 * sizeof(float));
    float* actual = (float*)malloc((size_t)n * 3 * sizeof(float));

    ref_walk w = { scene, NULL, 0.0, expected, 0, 0, 0 };
    ref_walk_node(&w, scene->mRootNode);
    assert_int_equal(w.written, n);
    assert_int_equal(w.triangles, d->render_mesh.triangle_count);
    assert_int_equal(w.instances, d->render_mesh.submesh_count);
    tu_bounds rest = tu_bounds_of(d->render_mesh.positions, n);
    float diagonal = tu_bounds_diagonal(&rest);
    assert_true(diagonal > 0.0f);
    assert_true(max_distance(expected, d->render_mesh.positions, n) <= 1e-5f * diagonal);

    /* Bind pose: FK of rest_local gives back the bind matrices, and skinning with them the
     * rest mesh itself. */
    uint32_t joints = d->skeleton.joint_count;
    float* model = (float*)malloc((size_t)joints * 16 * sizeof(float));
    float* local = (float*)malloc((size_t)joints * 16 * sizeof(float));
    assert_true(tu_forward_kinematics(d->skeleton.parents, joints, c->rest_local, model));
    tu_skin(c, model, actual);
    assert_true(max_distance(actual, d->render_mesh.positions, n) <= 1e-4f * diagonal);

    for (uint32_t a = 0; a < c->animation_count; ++a) {
        const sinew_animation* anim = &c->animations[a];
        const struct aiAnimation* src = scene->mAnimations[a];
        double tps = src->mTicksPerSecond > 0 ? src->mTicksPerSecond : 25.0;
        const float fractions[3] = { 0.0f, 0.37f, 0.81f };
        for (int k = 0; k < 3; ++k) {
            float time = anim->duration * fractions[k];
            assert_int_equal(sinew_animation_sample(anim, time, 0, local), SINEW_OK);
            assert_true(tu_forward_kinematics(d->skeleton.parents, joints, local, model));
            tu_skin(c, model, actual);
            ref_walk pw = { scene, src, (double)time * tps, expected, 0, 0, 0 };
            ref_walk_node(&pw, scene->mRootNode);
            float error = max_distance(actual, expected, n);
            if (!(error <= 1e-4f * diagonal))
                fail_msg("%s, animation '%s' at %.3f s: skinned vertices are up to %g away from "
                         "assimp's evaluation (mesh size %g)", path, anim->name, (double)time,
                         (double)error, (double)diagonal);
            /* The posed character stays about as large as at rest. */
            tu_bounds posed = tu_bounds_of(actual, n);
            float posed_diagonal = tu_bounds_diagonal(&posed);
            assert_true(posed_diagonal > 0.3f * diagonal && posed_diagonal < 3.0f * diagonal);
        }
    }
    free(model);
    free(local);
    free(expected);
    free(actual);
    aiReleaseImport(scene);
}

/* Shape checks common to every assimp character. */
static void assert_rig_shape(const sinew_character* c, uint32_t max_influences)
{
    const sinew_rig_desc* d = &c->rig;
    assert_int_equal(d->struct_size, sizeof(sinew_rig_desc));
    assert_int_equal(d->max_influences, 0);
    assert_non_null(d->weights.offsets);
    assert_int_equal(d->weights.offsets[0], 0);
    uint32_t widest = 0;
    for (uint32_t v = 0; v < d->render_mesh.vertex_count; ++v) {
        uint32_t begin = d->weights.offsets[v], end = d->weights.offsets[v + 1];
        assert_true(end > begin);
        if (end - begin > widest) widest = end - begin;
        for (uint32_t e = begin; e < end; ++e) {
            assert_true(d->weights.joints[e] < d->skeleton.joint_count);
            assert_true(d->weights.weights[e] > 0.0f);
            for (uint32_t f = begin; f < e; ++f)
                assert_true(d->weights.joints[f] != d->weights.joints[e]);
        }
    }
    assert_int_equal(widest, max_influences);
    for (uint32_t i = 0; i < 3 * d->render_mesh.triangle_count; ++i)
        assert_true(d->render_mesh.indices[i] < d->render_mesh.vertex_count);
    if (d->render_mesh.submesh_count > 0) {
        assert_int_equal(d->render_mesh.submesh_first_triangle[0], 0);
        for (uint32_t s = 1; s < d->render_mesh.submesh_count; ++s)
            assert_true(d->render_mesh.submesh_first_triangle[s] >
                        d->render_mesh.submesh_first_triangle[s - 1]);
    }
    for (uint32_t j = 0; j < d->skeleton.joint_count; ++j)
        assert_true(d->skeleton.parents[j] < (int32_t)j);
    assert_int_equal(d->skeleton.parents[0], -1);
    for (uint32_t a = 0; a < c->animation_count; ++a) {
        const sinew_animation* anim = &c->animations[a];
        assert_int_equal(anim->joint_count, d->skeleton.joint_count);
        assert_true(anim->key_count >= 1);
        assert_true(anim->key_times[0] == 0.0f);
        for (uint32_t k = 1; k < anim->key_count; ++k)
            assert_true(anim->key_times[k] > anim->key_times[k - 1]);
        assert_true(anim->duration == anim->key_times[anim->key_count - 1]);
    }
}

static void assert_near(double actual, double expected, double tolerance, const char* what)
{
    if (!(fabs(actual - expected) <= tolerance))
        fail_msg("%s: %.7g, expected %.7g", what, actual, expected);
}

/* ---------------------------------------------------------------------------------------- */

static void test_bcn_epileptic(void** state)
{
    (void)state;
    const char* path;
    sinew_character* c = load_model("X/BCN_Epileptic.X", &path);
    const sinew_rig_desc* d = &c->rig;
    assert_string_equal(c->name, "BCN_Epileptic");
    assert_int_equal(d->render_mesh.vertex_count, 3014);
    assert_int_equal(d->render_mesh.triangle_count, 5126);
    assert_int_equal(d->render_mesh.submesh_count, 3);
    assert_int_equal(d->skeleton.joint_count, 54); /* the 54 bones; the root is one of them */
    assert_string_equal(d->skeleton.names[0], "B_Root_Pelvis_L");
    assert_string_equal(tu_parent_name(c, "B_Knee_Left"), "B_Hip_Left");
    assert_string_equal(tu_parent_name(c, "B_Hand_Right"), "B_ForeArm_Right");
    assert_string_equal(tu_parent_name(c, "B_Jaw"), "B_Neck");
    assert_string_equal(tu_parent_name(c, "B_Spine1"), "B_Root_Pelvis_T");
    assert_rig_shape(c, 3);
    assert_non_null(d->render_mesh.normals);
    assert_int_equal(c->animation_count, 1);
    assert_string_equal(c->animations[0].name, "Epileptisch");
    assert_near(c->animations[0].duration, 15840.0 / 4800.0, 1e-5, "duration");
    assert_int_equal(c->animations[0].key_count, 100);
    compare_with_reference(c, path);
    sinew_import_free(c);
}

static void test_testwuson(void** state)
{
    (void)state;
    const char* path;
    sinew_character* c = load_model("X/Testwuson.X", &path);
    const sinew_rig_desc* d = &c->rig;
    assert_int_equal(d->render_mesh.vertex_count, 3205);
    assert_int_equal(d->render_mesh.triangle_count, 3732);
    assert_int_equal(d->render_mesh.submesh_count, 1);
    /* 37 bones under the node Root, which is no bone but their common ancestor. */
    assert_int_equal(d->skeleton.joint_count, 38);
    assert_string_equal(d->skeleton.names[0], "Root");
    assert_string_equal(tu_parent_name(c, "Tail02"), "Tail01");
    assert_string_equal(tu_parent_name(c, "Spine_Back01"), "Root");
    assert_rig_shape(c, 4);
    assert_int_equal(c->animation_count, 3);
    assert_string_equal(c->animations[0].name, "Wuson_Run");
    assert_string_equal(c->animations[1].name, "Wuson_Walk");
    assert_string_equal(c->animations[2].name, "Wuson_Bind");
    assert_near(c->animations[0].duration, 4640.0 / 4800.0, 1e-5, "run duration");
    assert_near(c->animations[1].duration, 17280.0 / 4800.0, 1e-5, "walk duration");
    assert_int_equal(c->animations[2].key_count, 1);
    assert_near(c->animations[2].duration, 0.0, 0.0, "bind duration");
    compare_with_reference(c, path);
    sinew_import_free(c);
}

static void test_fbx_animation_with_skeleton(void** state)
{
    (void)state;
    const char* path;
    sinew_character* c = load_model("FBX/animation_with_skeleton.fbx", &path);
    const sinew_rig_desc* d = &c->rig;
    assert_int_equal(d->render_mesh.vertex_count, 2464);
    assert_int_equal(d->render_mesh.triangle_count, 2112);
    /* 14 bones in two chains under the node Armature. */
    assert_int_equal(d->skeleton.joint_count, 15);
    assert_string_equal(d->skeleton.names[0], "Armature");
    assert_string_equal(tu_parent_name(c, "Bone"), "Armature");
    assert_string_equal(tu_parent_name(c, "Bone.007"), "Armature");
    assert_string_equal(tu_parent_name(c, "Bone.001"), "Bone");
    assert_string_equal(tu_parent_name(c, "Bone.013"), "Bone.012");
    assert_rig_shape(c, 6);
    assert_int_equal(c->animation_count, 1);
    assert_near(c->animations[0].duration, 20.0 / 24.0, 1e-5, "duration");
    /* Bone.005 has 14 keys, every other channel 2 at the same ends: the union is 14. */
    assert_int_equal(c->animations[0].key_count, 14);
    compare_with_reference(c, path);
    sinew_import_free(c);
}

static void test_gltf_simple_skin(void** state)
{
    (void)state;
    const char* path;
    sinew_character* c = load_model("glTF2/simple_skin/simple_skin.gltf", &path);
    const sinew_rig_desc* d = &c->rig;
    assert_int_equal(d->render_mesh.vertex_count, 10);
    assert_int_equal(d->render_mesh.triangle_count, 8);
    assert_int_equal(d->skeleton.joint_count, 2);
    assert_int_equal(d->skeleton.parents[1], 0);
    assert_rig_shape(c, 2);
    /* The glTF tutorial's mesh: a 1 x 2 strip in the xy plane. */
    tu_bounds b = tu_bounds_of(d->render_mesh.positions, d->render_mesh.vertex_count);
    const float lo[3] = { 0, 0, 0 }, hi[3] = { 1, 2, 0 };
    for (int a = 0; a < 3; ++a) {
        assert_near(b.min[a], lo[a], 1e-6, "min");
        assert_near(b.max[a], hi[a], 1e-6, "max");
    }
    /* Both inverse bind matrices are a translation by (-0.5, -1, 0): bind at (0.5, 1, 0). */
    for (int j = 0; j < 2; ++j) {
        assert_near(d->skeleton.bind_matrices[j * 16 + 12], 0.5, 1e-6, "bind x");
        assert_near(d->skeleton.bind_matrices[j * 16 + 13], 1.0, 1e-6, "bind y");
    }
    assert_int_equal(c->animation_count, 1);
    const sinew_animation* anim = &c->animations[0];
    assert_int_equal(anim->key_count, 12);
    assert_near(anim->duration, 5.5, 1e-5, "duration");
    /* In this file both joints sit at (0, 1, 0) (node 1 is translated by (0, 1, 0), node 2
     * not at all). At 1.0 s the key turns joint 1 by 90 degrees about z, quaternion
     * (0, 0, 0.707, 0.707): its model transform maps x to y. */
    float local[32], model[32];
    assert_int_equal(sinew_animation_sample(anim, 1.0f, 0, local), SINEW_OK);
    assert_true(tu_forward_kinematics(d->skeleton.parents, 2, local, model));
    assert_near(model[16 + 12], 0.0, 1e-5, "joint 1 x");
    assert_near(model[16 + 13], 1.0, 1e-5, "joint 1 y");
    assert_near(model[16 + 0], 0.0, 1e-3, "joint 1 x axis, x");
    assert_near(model[16 + 1], 1.0, 1e-3, "joint 1 x axis, y");
    /* Vertex 8, (0, 2, 0), rides on joint 1 alone: T(0,1,0) Rz(90) T(-0.5,-1,0) (0,2,0)
     * = (0,1,0) + Rz(90) (-0.5,1,0) = (-1, 0.5, 0). */
    float skinned[30];
    tu_skin(c, model, skinned);
    assert_near(d->render_mesh.positions[8 * 3 + 1], 2.0, 1e-6, "vertex 8 at rest");
    assert_near(skinned[8 * 3 + 0], -1.0, 2e-3, "vertex 8 posed x");
    assert_near(skinned[8 * 3 + 1], 0.5, 2e-3, "vertex 8 posed y");
    compare_with_reference(c, path);
    sinew_import_free(c);
}

/* More of assimp's test models, each for a case the four characters above do not cover. */
static void test_more_models_match_assimp(void** state)
{
    (void)state;
    static const struct {
        const char* path;
        int warnings;
    } models[] = {
        { "ASE/anim.ASE", 0 },                     /* non-uniform scale keys, rigid meshes */
        { "ASE/MotionCaptureROM.ase", 0 },          /* 26 joints of motion capture */
        { "Collada/anims_with_full_rotations_between_keys.DAE", 0 }, /* 128 joints */
        { "FBX/huesitos.fbx", 0 },
        { "MDL/MDL (HL1)/unnamed_bones.mdl", 1 },   /* mParent disagrees with mChildren */
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; ++i) {
        const char* path;
        sinew_character* c = load_model(models[i].path, &path);
        assert_int_equal(g_log.count[SINEW_LOG_WARNING], models[i].warnings);
        uint32_t widest = 0;
        for (uint32_t v = 0; v < c->rig.render_mesh.vertex_count; ++v) {
            uint32_t k = c->rig.weights.offsets[v + 1] - c->rig.weights.offsets[v];
            if (k > widest) widest = k;
        }
        assert_rig_shape(c, widest);
        assert_true(c->animation_count >= 1);
        compare_with_reference(c, path);
        sinew_import_free(c);
    }
}

int main(void)
{
    sinew_test_log_init(&g_log);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bcn_epileptic),
        cmocka_unit_test(test_testwuson),
        cmocka_unit_test(test_fbx_animation_with_skeleton),
        cmocka_unit_test(test_gltf_simple_skin),
        cmocka_unit_test(test_more_models_match_assimp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
