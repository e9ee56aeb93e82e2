// The bridge between OGRE 1.12 and sinew: what an OGRE game writes to skin its characters with
// sinew. SPDX-License-Identifier: MIT
//
// Three steps, each one function:
//   1. once per character: describe a sinew rig from an OGRE skinned mesh and its skeleton
//      (positions, normals, triangles, bone assignments, the bones' bind pose);
//   2. every frame: hand the bones' model-space transforms to the character's skin;
//   3. every frame, after sinew_world_update: lock the vertex buffer OGRE draws and let sinew
//      write the skinned positions and normals into it.
#ifndef SINEW_SAMPLES_OGRE_SINEW_OGRE_H
#define SINEW_SAMPLES_OGRE_SINEW_OGRE_H

#include <string>
#include <vector>

#include <OgreMesh.h>
#include <OgreSkeleton.h>
#include <OgreVertexIndexData.h>

#include <sinew/sinew.h>

// A rig descriptor with the arrays it points to. sinew_rig_create copies everything, so the
// source may be dropped once the rig exists.
struct sinew_ogre_rig_source {
    std::vector<float> positions, normals, bind_matrices;
    std::vector<uint32_t> indices, offsets, joints;
    std::vector<float> weights;
    std::vector<int32_t> parents;
    std::vector<std::string> names;
    std::vector<const char*> name_pointers;
    sinew_rig_desc desc;
};

// Reads the shared vertices of `mesh` (float3 positions and normals, read back from their
// buffers: give them a shadow copy), the triangles of every sub-mesh, the bone assignments as
// OGRE keeps them (at most four per vertex, normalised) and the binding pose of the linked
// skeleton (joint i is the bone of handle i). Fills `out`, whose `desc` is then ready for
// sinew_rig_create. Returns an error (with a line on stderr) for a mesh without shared
// vertices, skeleton or bone assignments.
sinew_result sinew_ogre_describe_rig(const Ogre::Mesh& mesh, sinew_ogre_rig_source* out);

// The model-space transform of every bone of `skeleton` (the one an Entity animates), 16
// column-major floats per bone in handle order, in `matrices` (resized): sinew's
// SINEW_POSE_MODEL layout. The skeleton's animation state must have been applied
// (Ogre::Skeleton::setAnimationState or Ogre::Entity::_updateAnimation).
void sinew_ogre_read_pose(const Ogre::Skeleton& skeleton, std::vector<float>* matrices);

// Sets that pose on the skin: one sinew_skin_set_pose in model space.
sinew_result sinew_ogre_set_pose(sinew_world* world, sinew_skin skin,
                                 const std::vector<float>& matrices);

// Writes the skin's current output into the vertex buffer of `vertices` that holds its float3
// positions and normals (one buffer, any interleaving): locks it with HBL_DISCARD and lets
// sinew_skin_read_output fill it through the buffer's stride.
sinew_result sinew_ogre_write_vertices(const sinew_world* world, sinew_skin skin,
                                       const Ogre::VertexData& vertices);

#endif
