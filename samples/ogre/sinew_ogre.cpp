// The OGRE-to-sinew bridge: see sinew_ogre.h. SPDX-License-Identifier: MIT
#include "sinew_ogre.h"

#include <cstdio>

#include <OgreBone.h>
#include <OgreHardwareBuffer.h>
#include <OgreSubMesh.h>

namespace {

// sinew's matrices are column-major 4x4; OGRE's Affine3 is a row-major 3x4.
void columns_from_affine(const Ogre::Affine3& m, float* out)
{
    for (int column = 0; column < 4; ++column) {
        for (int row = 0; row < 3; ++row) out[4 * column + row] = (float)m[row][column];
        out[4 * column + 3] = column == 3 ? 1.0f : 0.0f;
    }
}

sinew_result refuse(const char* what, sinew_result result)
{
    std::fprintf(stderr, "sinew-ogre: %s\n", what);
    return result;
}

// Positions and normals of the shared vertices, read through each element's buffer.
sinew_result read_vertices(const Ogre::VertexData& vertices, sinew_ogre_rig_source* out)
{
    const Ogre::VertexElement* semantic[2] = {
        vertices.vertexDeclaration->findElementBySemantic(Ogre::VES_POSITION),
        vertices.vertexDeclaration->findElementBySemantic(Ogre::VES_NORMAL)};
    std::vector<float>* target[2] = {&out->positions, &out->normals};
    for (int k = 0; k < 2; ++k) {
        if (!semantic[k] || semantic[k]->getType() != Ogre::VET_FLOAT3)
            return refuse("the mesh needs float3 positions and normals", SINEW_ERROR_UNSUPPORTED);
        const Ogre::HardwareVertexBufferSharedPtr& buffer =
            vertices.vertexBufferBinding->getBuffer(semantic[k]->getSource());
        Ogre::HardwareBufferLockGuard lock(buffer, Ogre::HardwareBuffer::HBL_READ_ONLY);
        target[k]->resize(3 * vertices.vertexCount);
        for (size_t v = 0; v < vertices.vertexCount; ++v) {
            float* element;
            semantic[k]->baseVertexPointerToElement(
                static_cast<char*>(lock.pData) + (vertices.vertexStart + v) * buffer->getVertexSize(),
                &element);
            for (int c = 0; c < 3; ++c) (*target[k])[3 * v + c] = element[c];
        }
    }
    return SINEW_OK;
}

// The triangles of every sub-mesh, one after the other, as 32-bit indices.
sinew_result read_triangles(const Ogre::Mesh& mesh, sinew_ogre_rig_source* out)
{
    out->indices.clear();
    for (const Ogre::SubMesh* sub : mesh.getSubMeshes()) {
        const Ogre::IndexData* data = sub->indexData;
        if (!sub->useSharedVertices || sub->operationType != Ogre::RenderOperation::OT_TRIANGLE_LIST)
            return refuse("every sub-mesh must be a triangle list on the shared vertices",
                          SINEW_ERROR_UNSUPPORTED);
        Ogre::HardwareBufferLockGuard lock(data->indexBuffer, Ogre::HardwareBuffer::HBL_READ_ONLY);
        const bool wide = data->indexBuffer->getType() == Ogre::HardwareIndexBuffer::IT_32BIT;
        for (size_t i = data->indexStart; i < data->indexStart + data->indexCount; ++i)
            out->indices.push_back(wide ? static_cast<const uint32_t*>(lock.pData)[i]
                                        : static_cast<const uint16_t*>(lock.pData)[i]);
    }
    return SINEW_OK;
}

// Bone assignments in sinew's compressed rows: OGRE keeps them ordered by vertex.
sinew_result read_weights(const Ogre::Mesh& mesh, size_t vertex_count, sinew_ogre_rig_source* out)
{
    out->offsets.assign(1, 0u);
    out->joints.clear();
    out->weights.clear();
    const Ogre::Mesh::VertexBoneAssignmentList& assignments = mesh.getBoneAssignments();
    auto next = assignments.begin();
    for (size_t v = 0; v < vertex_count; ++v) {
        for (; next != assignments.end() && next->first == v; ++next) {
            out->joints.push_back(next->second.boneIndex);
            out->weights.push_back((float)next->second.weight);
        }
        out->offsets.push_back((uint32_t)out->joints.size());
    }
    if (out->joints.empty() || next != assignments.end())
        return refuse("the mesh needs bone assignments on its shared vertices", SINEW_ERROR_WEIGHTS);
    return SINEW_OK;
}

// Parents, names and the binding pose: OGRE stores each bone's inverse bind transform as a
// position, scale and orientation, which are inverted back into a model-space matrix.
void read_skeleton(const Ogre::Skeleton& skeleton, sinew_ogre_rig_source* out)
{
    const unsigned short count = skeleton.getNumBones();
    out->parents.resize(count);
    out->names.resize(count);
    out->name_pointers.resize(count);
    out->bind_matrices.resize(16 * (size_t)count);
    for (unsigned short i = 0; i < count; ++i) {
        const Ogre::Bone* bone = skeleton.getBone(i);
        const Ogre::Node* parent = bone->getParent();
        out->parents[i] = parent ? static_cast<const Ogre::Bone*>(parent)->getHandle() : -1;
        out->names[i] = bone->getName();
        const Ogre::Vector3 scale = Ogre::Vector3::UNIT_SCALE / bone->_getBindingPoseInverseScale();
        const Ogre::Affine3 bind(-bone->_getBindingPoseInversePosition(),
                                 bone->_getBindingPoseInverseOrientation().Inverse(), scale);
        columns_from_affine(bind, &out->bind_matrices[16 * (size_t)i]);
    }
    for (unsigned short i = 0; i < count; ++i) out->name_pointers[i] = out->names[i].c_str();
}

} // namespace

sinew_result sinew_ogre_describe_rig(const Ogre::Mesh& mesh, sinew_ogre_rig_source* out)
{
    if (!mesh.sharedVertexData || !mesh.hasSkeleton())
        return refuse("the mesh needs shared vertices and a skeleton", SINEW_ERROR_UNSUPPORTED);
    sinew_result r = read_vertices(*mesh.sharedVertexData, out);
    if (r == SINEW_OK) r = read_triangles(mesh, out);
    if (r == SINEW_OK) r = read_weights(mesh, mesh.sharedVertexData->vertexCount, out);
    if (r != SINEW_OK) return r;
    read_skeleton(*mesh.getSkeleton(), out);

    sinew_rig_desc desc = SINEW_RIG_DESC_INIT;
    desc.name = mesh.getName().c_str();
    desc.skeleton.joint_count = (uint32_t)out->parents.size();
    desc.skeleton.parents = out->parents.data();
    desc.skeleton.bind_matrices = out->bind_matrices.data();
    desc.skeleton.names = out->name_pointers.data();
    desc.render_mesh.vertex_count = (uint32_t)mesh.sharedVertexData->vertexCount;
    desc.render_mesh.positions = out->positions.data();
    desc.render_mesh.normals = out->normals.data();
    desc.render_mesh.triangle_count = (uint32_t)(out->indices.size() / 3);
    desc.render_mesh.indices = out->indices.data();
    desc.weights.offsets = out->offsets.data();
    desc.weights.joints = out->joints.data();
    desc.weights.weights = out->weights.data();
    out->desc = desc;
    return SINEW_OK;
}

void sinew_ogre_read_pose(const Ogre::Skeleton& skeleton, std::vector<float>* matrices)
{
    const unsigned short count = skeleton.getNumBones();
    matrices->resize(16 * (size_t)count);
    for (unsigned short i = 0; i < count; ++i)
        columns_from_affine(skeleton.getBone(i)->_getFullTransform(), &(*matrices)[16 * (size_t)i]);
}

sinew_result sinew_ogre_set_pose(sinew_world* world, sinew_skin skin,
                                 const std::vector<float>& matrices)
{
    sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
    pose.space = SINEW_POSE_MODEL;
    pose.joint_count = (uint32_t)(matrices.size() / 16);
    pose.matrices = matrices.data();
    return sinew_skin_set_pose(world, skin, &pose);
}

sinew_result sinew_ogre_write_vertices(const sinew_world* world, sinew_skin skin,
                                       const Ogre::VertexData& vertices)
{
    const Ogre::VertexElement* position =
        vertices.vertexDeclaration->findElementBySemantic(Ogre::VES_POSITION);
    const Ogre::VertexElement* normal =
        vertices.vertexDeclaration->findElementBySemantic(Ogre::VES_NORMAL);
    if (!position || !normal || position->getSource() != normal->getSource())
        return refuse("positions and normals must share one vertex buffer", SINEW_ERROR_OUTPUT_BINDING);
    const Ogre::HardwareVertexBufferSharedPtr& buffer =
        vertices.vertexBufferBinding->getBuffer(position->getSource());
    // HBL_DISCARD: every vertex is rewritten, so the driver need not keep the old contents.
    Ogre::HardwareBufferLockGuard lock(buffer, Ogre::HardwareBuffer::HBL_DISCARD);
    char* first = static_cast<char*>(lock.pData) + vertices.vertexStart * buffer->getVertexSize();
    sinew_output_desc output = SINEW_OUTPUT_DESC_INIT;
    output.vertex_capacity = (uint32_t)vertices.vertexCount;
    output.positions = reinterpret_cast<float*>(first + position->getOffset());
    output.position_stride = buffer->getVertexSize();
    output.normals = reinterpret_cast<float*>(first + normal->getOffset());
    output.normal_stride = buffer->getVertexSize();
    return sinew_skin_read_output(world, skin, &output);
}
