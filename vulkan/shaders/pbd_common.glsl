// The state and data of vk-pbd's compute shaders (vulkan/vk_pbd_device.c binds them all in one
// set): the particles as structure of arrays (every x, then every y, then every z; N apart),
// as the CPU's pbd keeps them, the constraints grouped by colour, the contacts and the
// upsampling records. Every expression is `precise` and written in the order of the CPU's
// (backends/pbd/pbd_kernels.h, backends/ps/ps_internal.h), so that nothing is fused or
// reassociated. SPDX-License-Identifier: MIT

layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) buffer Positions { float x[]; };
layout(std430, set = 0, binding = 1) buffer Velocities { float v[]; };
layout(std430, set = 0, binding = 2) buffer Previous { float xp[]; };
layout(std430, set = 0, binding = 3) readonly buffer InvMass { float w[]; };
layout(std430, set = 0, binding = 4) readonly buffer Targets { float target[]; };
layout(std430, set = 0, binding = 5) readonly buffer StretchIdx { uvec2 s_idx[]; };
layout(std430, set = 0, binding = 6) readonly buffer StretchPar { vec4 s_par[]; };
// The constraints of four particles: every volume constraint (6 V0, alpha~), then every
// bending constraint (rest angle, alpha~).
layout(std430, set = 0, binding = 7) readonly buffer FourIdx { uvec4 v_idx[]; };
layout(std430, set = 0, binding = 8) readonly buffer FourW { vec4 v_w[]; };
layout(std430, set = 0, binding = 9) readonly buffer FourPar { vec2 v_par[]; };
layout(std430, set = 0, binding = 10) buffer Lambda { float lambda[]; };
layout(std430, set = 0, binding = 11) readonly buffer ContactVertices { uvec4 c_vert[]; };
struct Side { uint contact; float side; float margin; float pad; };
layout(std430, set = 0, binding = 12) readonly buffer ContactSides { Side c_side[]; };
layout(std430, set = 0, binding = 13) readonly buffer ContactPlanes { vec4 c_plane[]; };
layout(std430, set = 0, binding = 14) readonly buffer VertexTriOffsets { uint vt_off[]; };
layout(std430, set = 0, binding = 15) readonly buffer VertexTris { uint vt[]; };
layout(std430, set = 0, binding = 16) readonly buffer Triangles { uint tri[]; };
layout(std430, set = 0, binding = 17) buffer SkinNormals { float skin_n[]; };
struct Record { uvec4 head; vec4 bary; vec4 offset; vec4 normal; };
layout(std430, set = 0, binding = 18) readonly buffer Records { Record rec[]; };
layout(std430, set = 0, binding = 19) readonly buffer Skinning { float skinning[]; };
layout(std430, set = 0, binding = 20) buffer Blend { float blend_from[]; }; // columns of n
layout(std430, set = 0, binding = 21) writeonly buffer OutPositions { float out_pos[]; };
layout(std430, set = 0, binding = 22) writeonly buffer OutNormals { float out_nrm[]; };
layout(std430, set = 0, binding = 23) buffer Status { uint status[]; };

// flags
const uint PBD_XPBD = 1u;   // XPBD multipliers, else plain PBD stiffness factors
const uint PBD_BLEND = 2u;  // interpolate_output: blend_from towards x by `fraction`
const uint PBD_NONE = 0xffffffffu;

layout(push_constant) uniform Push {
    uint N;            // particles: 2n
    uint n;            // skin vertices
    uint first_s;      // the colour's stretch constraints [first_s, first_s + count_s)
    uint count_s;
    uint first_v;      // its volume constraints [first_v, first_v + count_v)
    uint count_v;
    uint first_b;      // its bending constraints [first_b, first_b + count_b), after the
    uint count_b;      // volume constraints in the four-particle arrays
    uint lambda_v;     // where the four-particle multipliers start in lambda
    uint target_at;    // this step's targets in the ring (floats)
    uint plane_at;     // this step's contact planes in the ring (vec4s)
    uint contacts;     // constrained skin vertices
    uint render;       // render vertices
    uint flags;
    float h;           // the time step
    float vel;         // damping / h
    float k_s;         // plain PBD: per-iteration stiffness factors
    float k_v;
    float k_b;
    float slack;       // contacts: violations below this are rounding
    float fraction;    // PBD_BLEND: how far the output goes from blend_from to x
} pc;

float px(uint c, uint i) { return x[c * pc.N + i]; }
