/* The parameter rows (sinew_params.h's X-macro form) that the tissue backends share: the model's
 * shape, skin sliding, pose jumps, the volume terms and the update's steps, for a parameter
 * struct T whose fields carry these names. Each backend lists the rows it takes beside its own
 * (ps.c, fps.c, pbd_params.c). SPDX-License-Identifier: MIT */
#ifndef SINEW_PS_PARAM_ROWS_H
#define SINEW_PS_PARAM_ROWS_H

#include "sinew_params.h"
#include "sinew_step_clock.h"

/* The words of simd for the backends with AVX2 and AVX-512 kernels, and what each stores. */
#define PS_SIMD_CHOICES "auto|scalar|avx2|avx512"
extern const int ps_simd_values[4];
/* upsampling's words, stored as ps_upsampling (their index). */
#define PS_UPSAMPLING_CHOICES "auto|normal|mls"

#define PS_PARAM_ROWS_TIME(X, T)                                                                  \
    X(T, timestep, REAL, SINEW_PARAM_MIN_OPEN, 0.0, 1.0, "0.016666666666666666", NULL,              \
      "the fixed step h in seconds (the matrix holds M / h^2); updates run whole steps of it",     \
      DOUBLE, timestep, NULL)                                                                     \
    X(T, damping, REAL, 0, 0.0, 1.0, "0.95", NULL,                                                \
      "lambda of the velocity update v = lambda (x' - x) / h: 1 none, 0 quasi-static", DOUBLE,    \
      damping, NULL)                                                                              \
    X(T, max_substeps, INTEGER, 0, 1.0, (double)SINEW_STEP_CLOCK_MAX_SUBSTEPS, "4", NULL,         \
      "steps one update may run; whole steps beyond are dropped and counted", U32,                \
      update.max_substeps, NULL)                                                                  \
    X(T, interpolate_output, FLAG, 0, 0.0, 1.0, "0", NULL,                                         \
      "1: the output blends the last two steps by the carried fraction (one step behind)", INT,   \
      update.interpolate_output, NULL)

#define PS_PARAM_ROWS_MODEL(X, T)                                                                 \
    X(T, mass, REAL, SINEW_PARAM_MIN_OPEN, 0.0, 1e12, "0.0005", NULL,                              \
      "tissue density, scaled by the squared mean tissue thickness of the rig", DOUBLE, mass,      \
      NULL)                                                                                       \
    X(T, sliding, FLAG, 0, 0.0, 1.0, "1", NULL, "skin sliding at joints (2018 Sec. 4.2)", INT,    \
      sliding, NULL)                                                                              \
    X(T, decimate_above, INTEGER, 0, 0.0, 1e8, "12000", NULL,                                      \
      "a lone render mesh above this many vertices is decimated for the simulation (0: never)",   \
      U32, decimate_above, NULL)                                                                  \
    X(T, simulation_vertices, INTEGER, 0, 4.0, 1e8, "4000", NULL,                                   \
      "the vertex count the decimated simulation mesh aims at", U32, simulation_vertices, NULL)  \
    X(T, bone_radii, TEXT, 0, 0.0, 1023.0, "", NULL,                                               \
      "joint:radius,... user-given bone radii of the volumetric skeleton (2018 Sec. 3.1)", TEXT,  \
      bone_radii, NULL)                                                                           \
    X(T, profile, FLAG, 0, 0.0, 1.0, "0", NULL,                                                    \
      "1: INFO lines with the preparation's phases and the per-step means", INT, profile, NULL)

#define PS_PARAM_ROWS_JUMP(X, T)                                                                  \
    X(T, jump_angle, REAL, 0, 0.0, 180.0, "45", NULL,                                              \
      "degrees a joint may turn relative to its parent in one update before the tissue restarts " \
      "from the pose (0: never)", DOUBLE, jump.angle, NULL)                                       \
    X(T, jump_distance, REAL, 0, 0.0, 1e6, "0.5", NULL,                                             \
      "rig heights a joint may move relative to its parent in one update before the tissue "      \
      "restarts (0: never)", DOUBLE, jump.distance, NULL)

#define PS_PARAM_ROWS_VOLUME(X, T)                                                                \
    X(T, volume_weight, REAL, 0, 0.0, 1e12, "0", NULL,                                              \
      "stiffness of the volume term per unit rest volume (Bouaziz et al. 2014 Sec. 5; 0: none)",  \
      DOUBLE, volume.weight, NULL)                                                                \
    X(T, volume_range, REAL, SINEW_PARAM_MAX_OPEN, 0.0, 1.0, "0.01", NULL,                         \
      "half-width of the band of det F that the volume term leaves alone", DOUBLE, volume.range,   \
      NULL)

/* The joints' volume (ps_joint_volume.c); each backend gives its gain's default (DEFAULT, a
 * string), which its parameter defaults must match. */
#define PS_PARAM_ROWS_JOINT_VOLUME(X, T, DEFAULT)                                                 \
    X(T, joint_volume, REAL, 0, 0.0, 10.0, DEFAULT, NULL,                                           \
      "gain of the pull that gives back the volume lost around a bending joint (0: none)",        \
      DOUBLE, volume.joint, NULL)                                                                 \
    X(T, joint_volume_reach, REAL, SINEW_PARAM_MIN_OPEN, 0.0, 20.0, "3.5", NULL,                    \
      "radius of the skin region around a joint whose volume is kept, in joint radii", DOUBLE,    \
      volume.joint_reach, NULL)

#endif
