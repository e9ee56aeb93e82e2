/* The tissue model of projective skinning (backends/ps, the sinew_tissue library) built from a
 * sample character, for the figures sinew-quality defines the same way for every backend: the
 * joint radii of the volumetric skeleton (2018 Sec. 3.1), which size the region of
 * local_volume_ratio, and the tetrahedron counts of the tissue mesh (Sec. 3.3) that the
 * volumetric backends simulate. SPDX-License-Identifier: MIT */
#ifndef SINEW_SAMPLE_TISSUE_H
#define SINEW_SAMPLE_TISSUE_H

#include <stdint.h>

#include <sinew/sinew.h>
#include <sinew/sinew_plugin.h>

#include "sample_character.h"

/* The rig view a backend receives, built from a character the way the runtime builds it for
 * what the tissue model reads: skeleton, meshes, area-weighted unit normals for a mesh that
 * brings none, and the render mesh's weights as the runtime holds them (normalised, computed
 * when the character brings none; skin shrinking reads them). Inverse bind matrices are left
 * out (the model does not read them). */
typedef struct sample_rig_view {
    sinew_rig_view view;
    float* render_normals;      /* owned; NULL when the render mesh has its own */
    float* simulation_normals;  /* owned; NULL without a simulation mesh */
    uint32_t* weight_offsets;   /* owned */
    uint32_t* weight_joints;
    float* weight_values;
} sample_rig_view;

/* Errors: INVALID_ARGUMENT (NULL), OUT_OF_MEMORY, and what sinew_rig_create refuses; one line
 * each. On failure *out is zeroed.
 * The view points into the character, which must outlive it. */
sinew_result sample_rig_view_build(const sample_character* character, sample_rig_view* out);
void sample_rig_view_free(sample_rig_view* view);

/* The backend parameters that shape the model (the rest are the backends' business): the
 * defaults are ps's and fps's (backends/ps/ps.c, backends/fps/fps.c). */
enum { SAMPLE_TISSUE_DECIMATE_ABOVE = 12000, SAMPLE_TISSUE_SIMULATION_VERTICES = 4000 };
typedef struct sample_tissue_params {
    uint32_t decimate_above;        /* decimate a lone render mesh above this (0: never) */
    uint32_t simulation_vertices;   /* target size of that decimated mesh, >= 4 */
    char bone_radii[1024];          /* "" or "joint:radius,..." (Sec. 3.1, user-given radii) */
} sample_tissue_params;

/* Reads bone_radii, decimate_above and simulation_vertices from `params` over the defaults
 * and ignores every other key, so that a whole --set list can be passed. 0 after one line
 * naming the key when one of these values is malformed (the ranges ps accepts). */
int sample_tissue_params_parse(const sinew_param* params, uint32_t count,
                               sample_tissue_params* out);

/* Is `backend` one that simulates the tissue model (ps, fps, fps-cuda, pbd)? */
int sample_backend_is_volumetric(const char* backend);

typedef struct sample_tissue {
    uint32_t joint_count;
    double* joint_radius;   /* per joint: the radius of its rep (the first ancestor at the
                               same position, or itself); 0 where no sphere sits */
    int has_model;          /* the tissue mesh was built: the counts below are set */
    uint32_t tets;          /* 3 per prism (Sec. 3.3) */
    uint32_t inverted;      /* rest orientation disagrees with the prism's skin */
    uint32_t degenerate;    /* left out of the strain energy */
    uint32_t poor;          /* well oriented but below the quality threshold */
} sample_tissue;

/* Builds the model as ps and fps do (a lone large render mesh decimated first, then the weld
 * and the volumetric skeleton, ps_model_build_with when whole_model): the skeleton alone is
 * enough for the joint radii. logger NULL: stderr; the build's own warnings are dropped (the
 * backend reports them) and its errors pass. Errors: INVALID_ARGUMENT, OUT_OF_MEMORY and the
 * model's own (an unknown joint in bone_radii is SINEW_ERROR_PARAMETER). */
sinew_result sample_tissue_build(const sample_character* character,
                                 const sample_tissue_params* params, int whole_model,
                                 const sinew_logger* logger, sample_tissue* out);
void sample_tissue_free(sample_tissue* tissue);

#endif
