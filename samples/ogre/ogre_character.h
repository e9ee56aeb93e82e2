// OGRE assets made from a character sinew's importer reads: the skinned mesh, the skeleton and
// its animations that a game would load from .mesh and .skeleton files, and the mesh OGRE draws
// with sinew's output. SPDX-License-Identifier: MIT
#ifndef SINEW_SAMPLES_OGRE_OGRE_CHARACTER_H
#define SINEW_SAMPLES_OGRE_OGRE_CHARACTER_H

#include <string>
#include <vector>

#include <OgreMesh.h>
#include <OgreSkeleton.h>

#include <sinew/sinew.h>
#include <sinew/sinew_import.h>

// The bones of `skeleton` (joint i becomes the bone of handle i, at most OGRE_MAX_NUM_BONES;
// names made unique), in the bind pose of its model-space bind matrices, and one
// Ogre::Animation per clip, named after the clip or "clip N". Returns the animation names.
std::vector<std::string> ogre_build_skeleton(const sinew_skeleton_desc& skeleton,
                                             const sinew_animation* animations,
                                             uint32_t animation_count, Ogre::Skeleton* out);

// A mesh with the rig's vertices (float3 positions and normals in static buffers with shadow
// copies, so they can be read back), its triangles in one sub-mesh drawn with `material`, and
// the rig's weights as bone assignments on `skeleton`: what OGRE skins in software.
Ogre::MeshPtr ogre_build_skinned_mesh(const std::string& name, const sinew_world* world,
                                      sinew_rig rig, const Ogre::SkeletonPtr& skeleton,
                                      const std::string& material);

// The mesh OGRE draws with sinew's output: the same triangles over one dynamic, write-only
// vertex buffer of interleaved positions and normals, filled at rest, without skeleton. Its
// bounds are those of `skinned` grown by their diagonal on every side, so that no pose of the
// animation leaves them.
Ogre::MeshPtr ogre_build_drawn_mesh(const std::string& name, const Ogre::Mesh& skinned);

#endif
