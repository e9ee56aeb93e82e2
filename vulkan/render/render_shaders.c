/* The renderer's SPIR-V, compiled from shaders/ by glslc at build time (-mfmt=c writes each
 * module as a brace-enclosed list of 32-bit words). SPDX-License-Identifier: MIT */
#include <stddef.h>
#include <stdint.h>

#include "render_internal.h"

static const uint32_t mesh_vert[] =
#include "mesh.vert.inc"
;
static const uint32_t mesh_frag[] =
#include "mesh.frag.inc"
;
static const uint32_t floor_vert[] =
#include "floor.vert.inc"
;
static const uint32_t floor_frag[] =
#include "floor.frag.inc"
;

const render_spirv render_shader_mesh_vert = {mesh_vert, sizeof mesh_vert};
const render_spirv render_shader_mesh_frag = {mesh_frag, sizeof mesh_frag};
const render_spirv render_shader_floor_vert = {floor_vert, sizeof floor_vert};
const render_spirv render_shader_floor_frag = {floor_frag, sizeof floor_frag};
