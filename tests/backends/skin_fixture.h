/* Test fixture for the geometric CPU backends (lbs, dqs): a hand-made host, hand-made rigs,
 * random rigid and non-rigid transforms, and double-precision reference skinning written
 * independently of the kernels. SPDX-License-Identifier: MIT */
#ifndef SINEW_TEST_SKIN_FIXTURE_H
#define SINEW_TEST_SKIN_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "test_support.h"

#include <sinew/sinew_plugin.h>

/* How the fixture's job system splits a parallel_for. */
typedef enum skin_split {
    SKIN_SPLIT_SERIAL = 0, /* one call over everything */
    SKIN_SPLIT_UNEVEN = 1  /* chunks of 1, 2, 3, 5, 7, 11, 13, 17, ... vertices, last first */
} skin_split;

typedef struct skin_host {
    sinew_host_api api;
    sinew_test_log log;
    skin_split split;
    int calls; /* parallel_for calls seen */
} skin_host;

/* api is ready to use; the logger captures into host->log. */
void skin_host_init(skin_host* host, skin_split split);

/* A rig with its own arrays (freed by skin_rig_free). */
typedef struct skin_rig {
    sinew_rig_view view;
    float* positions;
    float* normals;
    uint32_t* joints; /* padded */
    float* weights;   /* padded */
    int32_t* parents;
    const char** names;
    float* identity; /* bind and inverse bind matrices */
} skin_rig;

/* A rig of `vertices` x `joints` with padded width `width` (4, 8 or > 8 as the runtime pads)
 * and every array zeroed; fill positions, normals, joints and weights, then call
 * skin_rig_finish to normalise the normals. */
void skin_rig_alloc(skin_rig* rig, uint32_t vertices, uint32_t joints, uint32_t width);
void skin_rig_free(skin_rig* rig);

/* The runtime's padded width for a largest row of n influences. */
uint32_t skin_padded_width(uint32_t max_influences);

/* A random rig: positions and normals in [-1, 1] (normals unit), each vertex 1..max_influences
 * distinct joints with positive weights sorted by decreasing weight and summing to one. */
void skin_rig_random(skin_rig* rig, uint32_t vertices, uint32_t joints, uint32_t max_influences,
                     uint64_t seed);
/* The same with an explicit padded width >= max_influences (the backends take any width). */
void skin_rig_random_width(skin_rig* rig, uint32_t vertices, uint32_t joints,
                           uint32_t max_influences, uint32_t width, uint64_t seed);

#define SKIN_PI 3.14159265358979323846

/* Deterministic random numbers. */
typedef struct skin_rng {
    uint64_t s;
} skin_rng;
double skin_rand(skin_rng* rng); /* [0, 1) */
double skin_rand_range(skin_rng* rng, double lo, double hi);

/* Column-major 4x4 matrices in float. */
void skin_mat_identity(float m[16]);
/* Rotation by `angle` radians about the unit axis (x, y, z), then translation t. */
void skin_mat_rotation(float m[16], double x, double y, double z, double angle, const double t[3]);
/* A random rotation and a translation in [-0.5, 0.5]^3; non_rigid multiplies by a random
 * symmetric positive definite stretch (eigenvalues 0.6..1.6) and a shear up to 0.3. */
void skin_mat_random(float m[16], skin_rng* rng, bool non_rigid);

/* Reference skinning in double precision, straight from the definitions. Outputs 3 doubles per
 * vertex. lbs_reference also returns, per vertex, the factor by which the normal's rounding
 * error can grow (sum of |w_k M_k n| over |sum w_k M_k n|), for honest tolerances. */
void skin_lbs_reference(const sinew_rig_view* rig, const float* skinning, double* positions,
                        double* normals, double* normal_gain);
/* dqs_reference takes each matrix's nearest rotation (its polar factor when det > 0). */
void skin_dqs_reference(const sinew_rig_view* rig, const float* skinning, double* positions,
                        double* normals);

/* Backend helpers: prepare with simd=`simd` (and normals=`normals`), failing the test on error.
 * Returns NULL (and prints why) when the CPU lacks the instruction set. */
void* skin_prepare(skin_host* host, const sinew_backend_vtable* vt, const skin_rig* rig,
                   const char* simd, bool normals);
void skin_set_pose(const sinew_backend_vtable* vt, void* inst, uint32_t joints,
                   const float* skinning);
/* read_output into packed arrays (3 floats per vertex). */
void skin_read(const sinew_backend_vtable* vt, void* inst, uint32_t vertices, float* positions,
               float* normals);

/* The instruction sets the backends know, in parameter spelling, and whether this CPU has it. */
extern const char* const skin_simd_names[4];
bool skin_simd_available(const char* name);

#endif
