/* The parameters of `pbd`, described as data (backends/common/sinew_params.h) with the rows
 * the tissue backends share (backends/ps/ps_param_rows.h). Defaults and meaning: README.md,
 * "Parameters". SPDX-License-Identifier: MIT */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "pbd_internal.h"
#include "ps_param_rows.h"

void pbd_params_default(pbd_params* p)
{
    memset(p, 0, sizeof *p);
    p->iterations = 10u;
    p->timestep = 1.0 / 60.0;
    p->damping = 0.95;
    p->compliance = 1;
    p->stretch_compliance = 1.0;
    p->volume_compliance = 2.0;
    p->stretch_stiffness = 1.0;
    p->volume_stiffness = 1.0;
    p->bending = 0;
    p->bending_compliance = 10.0;
    p->bending_stiffness = 1.0;
    p->mass = 0.0005;
    p->collisions = 1;
    p->sliding = 1;
    p->simd = SINEW_SIMD_AUTO;
    p->grain = 4096u;
    p->decimate_above = 12000u;
    p->simulation_vertices = 4000u;
    ps_jump_params_default(&p->jump);
    ps_update_params_default(&p->update);
}

void pbd_model_params(const pbd_params* p, ps_params* out)
{
    ps_model_params_of(out, p->sliding, p->decimate_above, p->simulation_vertices, p->bone_radii);
}

static const int pbd_simd_values[3] = {SINEW_SIMD_AUTO, SINEW_SIMD_SCALAR, SINEW_SIMD_AVX512};

/* The solver's keys, which pbd and vk-pbd share (README.md, "Parameters"). */
#define PBD_PARAM_ROWS_SOLVER(X, T)                                                               \
    X(T, iterations, INTEGER, 0, 1.0, 1000.0, "10", NULL,                                          \
      "solver sweeps per step (Sec. 4: n_its)", U32, iterations, NULL)                            \
    X(T, compliance, FLAG, 0, 0.0, 1.0, "1", NULL,                                                  \
      "1: XPBD compliances (Macklin et al. 2016); 0: plain PBD stiffnesses", INT, compliance,     \
      NULL)                                                                                       \
    X(T, stretch_compliance, REAL, 0, 0.0, 1e12, "1", NULL,                                         \
      "XPBD: compliance of the edge strain per unit rest volume", DOUBLE, stretch_compliance,     \
      NULL)                                                                                       \
    X(T, volume_compliance, REAL, 0, 0.0, 1e12, "2", NULL,                                          \
      "XPBD: compliance of the relative volume change per unit rest volume", DOUBLE,              \
      volume_compliance, NULL)                                                                    \
    X(T, stretch_stiffness, REAL, 0, 0.0, 1.0, "1", NULL,                                           \
      "plain PBD: stiffness of the edge constraints", DOUBLE, stretch_stiffness, NULL)            \
    X(T, volume_stiffness, REAL, 0, 0.0, 1.0, "1", NULL,                                            \
      "plain PBD: stiffness of the volume constraints", DOUBLE, volume_stiffness, NULL)           \
    X(T, bending, FLAG, 0, 0.0, 1.0, "0", NULL,                                                     \
      "1: a bending constraint per pair of skin triangles on an edge", INT, bending, NULL)        \
    X(T, bending_compliance, REAL, 0, 0.0, 1e12, "10", NULL,                                         \
      "XPBD: compliance of the skin's bending strain per unit rest volume", DOUBLE,               \
      bending_compliance, NULL)                                                                   \
    X(T, bending_stiffness, REAL, 0, 0.0, 1.0, "1", NULL,                                           \
      "plain PBD: stiffness of the bending constraints", DOUBLE, bending_stiffness, NULL)         \
    X(T, collisions, FLAG, 0, 0.0, 1.0, "1", NULL,                                                  \
      "the folding joints' contacts clamp the base targets (2018 Sec. 5)", INT, collisions, NULL)

/* pbd's keys: the solver's, the CPU kernels' and job split, then the tissue backends' shared
 * rows. */
#define PBD_PARAM_ROWS(X, T)                                                                      \
    PBD_PARAM_ROWS_SOLVER(X, T)                                                                   \
    X(T, simd, CHOICE, 0, 0.0, 0.0, "auto", "auto|scalar|avx512",                                   \
      "kernels of the projections (the same bits)", INT, simd, pbd_simd_values)                   \
    X(T, grain, INTEGER, 0, 1.0, 1e8, "4096", NULL,                                                 \
      "constraints of a colour per job at least; smaller colours run on the calling thread", U32, \
      grain, NULL)                                                                                \
    PS_PARAM_ROWS_TIME(X, T) PS_PARAM_ROWS_MODEL(X, T) PS_PARAM_ROWS_JUMP(X, T)

/* vk-pbd's keys (vulkan/vk_pbd.c): pbd's without the CPU's simd and grain. */
#define VK_PBD_PARAM_ROWS(X, T)                                                                   \
    PBD_PARAM_ROWS_SOLVER(X, T)                                                                   \
    PS_PARAM_ROWS_TIME(X, T) PS_PARAM_ROWS_MODEL(X, T) PS_PARAM_ROWS_JUMP(X, T)

const sinew_param_info pbd_param_info[PBD_PARAM_COUNT] = {
    PBD_PARAM_ROWS(SINEW_PARAM_INFO_ROW, pbd_params)};
static const sinew_param_slot pbd_param_slots[] = {
    PBD_PARAM_ROWS(SINEW_PARAM_SLOT_ROW, pbd_params)};
_Static_assert(sizeof pbd_param_slots / sizeof pbd_param_slots[0] == PBD_PARAM_COUNT,
               "PBD_PARAM_COUNT is the number of rows");

const sinew_param_info vk_pbd_param_info[VK_PBD_PARAM_COUNT] = {
    VK_PBD_PARAM_ROWS(SINEW_PARAM_INFO_ROW, pbd_params)};
static const sinew_param_slot vk_pbd_param_slots[] = {
    VK_PBD_PARAM_ROWS(SINEW_PARAM_SLOT_ROW, pbd_params)};
_Static_assert(sizeof vk_pbd_param_slots / sizeof vk_pbd_param_slots[0] == VK_PBD_PARAM_COUNT,
               "VK_PBD_PARAM_COUNT is the number of rows");

sinew_result pbd_params_parse(const sinew_host_api* host, const sinew_param* params,
                              uint32_t count, const void* next, pbd_params* out)
{
    pbd_params_default(out);
    return sinew_params_parse(host, PBD_NAME, pbd_param_info, pbd_param_slots, PBD_PARAM_COUNT,
                              params, count, next, out);
}

sinew_result vk_pbd_params_parse(const sinew_host_api* host, const sinew_param* params,
                                 uint32_t count, const void* next, pbd_params* out)
{
    pbd_params_default(out);
    out->simd = SINEW_SIMD_SCALAR;
    return sinew_params_parse(host, VK_PBD_NAME, vk_pbd_param_info, vk_pbd_param_slots,
                              VK_PBD_PARAM_COUNT, params, count, next, out);
}

sinew_result pbd_simd_resolve(const sinew_host_api* host, sinew_simd* simd)
{
#if defined(SINEW_SKIN_X86)
    bool avx512 = sinew_simd_supported(SINEW_SIMD_AVX512);
#else
    bool avx512 = false;
#endif
    if (*simd == SINEW_SIMD_AUTO) *simd = avx512 ? SINEW_SIMD_AVX512 : SINEW_SIMD_SCALAR;
    if (*simd == SINEW_SIMD_AVX512 && !avx512)
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_UNAVAILABLE,
                               "pbd: simd=avx512 is not available on this CPU or in this build");
    return SINEW_OK;
}
