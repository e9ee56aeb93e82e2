// OGRE assets from an imported character: see ogre_character.h. SPDX-License-Identifier: MIT
#include "ogre_character.h"

#include <cmath>

#include <OgreAnimation.h>
#include <OgreAnimationTrack.h>
#include <OgreBone.h>
#include <OgreException.h>
#include <OgreHardwareBufferManager.h>
#include <OgreKeyFrame.h>
#include <OgreMeshManager.h>
#include <OgreSubMesh.h>

namespace {

Ogre::Affine3 affine_from_columns(const float* m)
{
    return Ogre::Affine3(m[0], m[4], m[8], m[12], m[1], m[5], m[9], m[13], m[2], m[6], m[10], m[14]);
}

// A bone's transform relative to its parent, as OGRE keeps it: position, orientation, scale.
struct local_transform {
    Ogre::Vector3 position, scale;
    Ogre::Quaternion orientation;
};

// OGRE needs unique, non-empty bone names; imported names may repeat or be missing.
std::string bone_name(const sinew_skeleton_desc& skeleton, uint32_t joint, const Ogre::Skeleton& bones)
{
    const char* name = skeleton.names ? skeleton.names[joint] : nullptr;
    if (name && name[0] && !bones.hasBone(name)) return name;
    return "joint " + std::to_string(joint);
}

// Creates the bones and links them; each takes its rest transform relative to its parent,
// from the model-space bind matrices. The bones' initial state is that transform.
std::vector<local_transform> create_bones(const sinew_skeleton_desc& skeleton, Ogre::Skeleton* out)
{
    if (skeleton.joint_count > OGRE_MAX_NUM_BONES)
        OGRE_EXCEPT(Ogre::Exception::ERR_INVALIDPARAMS, "the character has more joints than OGRE "
                    "has bones (" + std::to_string(OGRE_MAX_NUM_BONES) + ")", "create_bones");
    std::vector<local_transform> rest(skeleton.joint_count);
    for (uint32_t j = 0; j < skeleton.joint_count; ++j)
        out->createBone(bone_name(skeleton, j, *out), (unsigned short)j);
    for (uint32_t j = 0; j < skeleton.joint_count; ++j) {
        Ogre::Affine3 local = affine_from_columns(skeleton.bind_matrices + 16 * (size_t)j);
        const int32_t parent = skeleton.parents[j];
        if (parent >= 0) {
            out->getBone((unsigned short)parent)->addChild(out->getBone((unsigned short)j));
            local = affine_from_columns(skeleton.bind_matrices + 16 * (size_t)parent).inverse() * local;
        }
        local.decomposition(rest[j].position, rest[j].scale, rest[j].orientation);
        Ogre::Bone* bone = out->getBone((unsigned short)j);
        bone->setPosition(rest[j].position);
        bone->setOrientation(rest[j].orientation);
        bone->setScale(rest[j].scale);
    }
    out->setBindingPose();
    return rest;
}

// One clip as an Ogre::Animation. OGRE's key frames move a bone from its initial state (a
// translation added, a rotation and a scale applied after it), while sinew's clips hold each
// joint's whole local transform: each key is made relative to the rest transform.
void add_animation(const sinew_animation& clip, const std::string& name,
                   const std::vector<local_transform>& rest, Ogre::Skeleton* out)
{
    Ogre::Animation* animation = out->createAnimation(name, clip.duration > 0.0f ? clip.duration : 1.0f);
    animation->setInterpolationMode(Ogre::Animation::IM_LINEAR);
    animation->setRotationInterpolationMode(Ogre::Animation::RIM_SPHERICAL);
    const uint32_t joints = std::min<uint32_t>(clip.joint_count, (uint32_t)rest.size());
    for (uint32_t j = 0; j < joints; ++j) {
        Ogre::NodeAnimationTrack* track =
            animation->createNodeTrack((unsigned short)j, out->getBone((unsigned short)j));
        for (uint32_t k = 0; k < clip.key_count; ++k) {
            const size_t at = (size_t)k * clip.joint_count + j;
            const float* q = clip.rotations + 4 * at;
            const float* t = clip.translations + 3 * at;
            const float* s = clip.scales + 3 * at;
            Ogre::TransformKeyFrame* key = track->createNodeKeyFrame(clip.key_times[k]);
            key->setTranslate(Ogre::Vector3(t[0], t[1], t[2]) - rest[j].position);
            key->setRotation(rest[j].orientation.Inverse() * Ogre::Quaternion(q[3], q[0], q[1], q[2]));
            key->setScale(Ogre::Vector3(s[0], s[1], s[2]) / rest[j].scale);
        }
    }
}

// A vertex buffer with a shadow copy, filled with interleaved float3 positions and normals.
Ogre::HardwareVertexBufferSharedPtr position_normal_buffer(Ogre::VertexData* data,
                                                           Ogre::HardwareBuffer::Usage usage,
                                                           bool shadow)
{
    Ogre::VertexDeclaration* declaration = data->vertexDeclaration;
    size_t offset = declaration->addElement(0, 0, Ogre::VET_FLOAT3, Ogre::VES_POSITION).getSize();
    declaration->addElement(0, offset, Ogre::VET_FLOAT3, Ogre::VES_NORMAL);
    Ogre::HardwareVertexBufferSharedPtr buffer =
        Ogre::HardwareBufferManager::getSingleton().createVertexBuffer(
            declaration->getVertexSize(0), data->vertexCount, usage, shadow);
    data->vertexBufferBinding->setBinding(0, buffer);
    return buffer;
}

void fill_vertices(const Ogre::HardwareVertexBufferSharedPtr& buffer, const float* positions,
                   const float* normals, size_t count)
{
    std::vector<float> interleaved(6 * count);
    for (size_t v = 0; v < count; ++v)
        for (int c = 0; c < 3; ++c) {
            interleaved[6 * v + c] = positions[3 * v + c];
            interleaved[6 * v + 3 + c] = normals[3 * v + c];
        }
    buffer->writeData(0, interleaved.size() * sizeof(float), interleaved.data(), true);
}

void set_bounds(Ogre::Mesh* mesh, const float* positions, size_t count)
{
    Ogre::AxisAlignedBox box;
    Ogre::Real radius = 0;
    for (size_t v = 0; v < count; ++v) {
        const Ogre::Vector3 p(positions[3 * v], positions[3 * v + 1], positions[3 * v + 2]);
        box.merge(p);
        radius = std::max(radius, p.length());
    }
    mesh->_setBounds(box, false);
    mesh->_setBoundingSphereRadius(radius);
}

} // namespace

std::vector<std::string> ogre_build_skeleton(const sinew_skeleton_desc& skeleton,
                                             const sinew_animation* animations,
                                             uint32_t animation_count, Ogre::Skeleton* out)
{
    const std::vector<local_transform> rest = create_bones(skeleton, out);
    std::vector<std::string> names;
    for (uint32_t a = 0; a < animation_count; ++a) {
        std::string name = animations[a].name ? animations[a].name : "";
        if (name.empty() || out->hasAnimation(name)) name = "clip " + std::to_string(a);
        add_animation(animations[a], name, rest, out);
        names.push_back(name);
    }
    return names;
}

Ogre::MeshPtr ogre_build_skinned_mesh(const std::string& name, const sinew_world* world,
                                      sinew_rig rig, const Ogre::SkeletonPtr& skeleton,
                                      const std::string& material)
{
    sinew_rig_info info = SINEW_RIG_INFO_INIT;
    const float *positions, *normals, *weights;
    const uint32_t *indices, *offsets, *joints;
    if (sinew_rig_get_info(world, rig, &info) != SINEW_OK ||
        sinew_rig_get_mesh(world, rig, &positions, &normals, &indices) != SINEW_OK ||
        sinew_rig_get_weights(world, rig, &offsets, &joints, &weights) != SINEW_OK)
        OGRE_EXCEPT(Ogre::Exception::ERR_INVALIDPARAMS, "cannot read the rig", "ogre_build_skinned_mesh");

    Ogre::MeshPtr mesh = Ogre::MeshManager::getSingleton().createManual(name, Ogre::RGN_DEFAULT);
    mesh->sharedVertexData = new Ogre::VertexData();
    mesh->sharedVertexData->vertexCount = info.vertex_count;
    fill_vertices(position_normal_buffer(mesh->sharedVertexData,
                                         Ogre::HBU_GPU_ONLY, true),
                  positions, normals, info.vertex_count);

    Ogre::SubMesh* sub = mesh->createSubMesh();
    sub->useSharedVertices = true;
    sub->setMaterialName(material);
    sub->indexData->indexCount = 3 * (size_t)info.triangle_count;
    sub->indexData->indexBuffer = Ogre::HardwareBufferManager::getSingleton().createIndexBuffer(
        Ogre::HardwareIndexBuffer::IT_32BIT, sub->indexData->indexCount,
        Ogre::HBU_GPU_ONLY, true);
    sub->indexData->indexBuffer->writeData(0, sub->indexData->indexCount * sizeof(uint32_t),
                                           indices, true);

    mesh->setSkeletonName(skeleton->getName());
    for (uint32_t v = 0; v < info.vertex_count; ++v)
        for (uint32_t e = offsets[v]; e < offsets[v + 1]; ++e)
            mesh->addBoneAssignment({v, (unsigned short)joints[e], weights[e]});
    // OGRE keeps at most OGRE_MAX_BLEND_WEIGHTS (4) influences per vertex, the largest, and
    // renormalises them: the weights sinew gets back from the mesh are these.
    mesh->_compileBoneAssignments();
    set_bounds(mesh.get(), positions, info.vertex_count);
    mesh->load();
    return mesh;
}

Ogre::MeshPtr ogre_build_drawn_mesh(const std::string& name, const Ogre::Mesh& skinned)
{
    const Ogre::VertexData* source = skinned.sharedVertexData;
    Ogre::MeshPtr mesh = Ogre::MeshManager::getSingleton().createManual(name, Ogre::RGN_DEFAULT);
    mesh->sharedVertexData = new Ogre::VertexData();
    mesh->sharedVertexData->vertexCount = source->vertexCount;
    // Rewritten every frame by the CPU and only drawn by the GPU.
    Ogre::HardwareVertexBufferSharedPtr buffer = position_normal_buffer(
        mesh->sharedVertexData, Ogre::HBU_CPU_TO_GPU, false);
    buffer->copyData(*source->vertexBufferBinding->getBuffer(0), 0, 0, buffer->getSizeInBytes(), true);

    for (const Ogre::SubMesh* from : skinned.getSubMeshes()) {
        Ogre::SubMesh* sub = mesh->createSubMesh();
        sub->useSharedVertices = true;
        sub->setMaterialName(from->getMaterialName());
        sub->indexData->indexBuffer = from->indexData->indexBuffer;  // shared, never written
        sub->indexData->indexStart = from->indexData->indexStart;
        sub->indexData->indexCount = from->indexData->indexCount;
    }
    const Ogre::AxisAlignedBox& bounds = skinned.getBounds();
    const Ogre::Vector3 grow = Ogre::Vector3(bounds.getSize().length());
    mesh->_setBounds(Ogre::AxisAlignedBox(bounds.getMinimum() - grow, bounds.getMaximum() + grow), false);
    mesh->_setBoundingSphereRadius(skinned.getBoundingSphereRadius() + grow.x);
    mesh->load();
    return mesh;
}
