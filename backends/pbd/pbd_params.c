/* The parameters of `pbd`: a table of keys with their field, bounds and the words of their
 * log line; ps's jump and update keys parse themselves (backends/ps/ps_jump.c, ps_update.c). Defaults and meaning:
 * README.md, "Parameters". SPDX-License-Identifier: MIT */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "pbd_internal.h"

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
    memset(out, 0, sizeof *out);
    out->sliding = p->sliding;
    out->decimate_above = p->decimate_above;
    out->simulation_vertices = p->simulation_vertices;
    memcpy(out->bone_radii, p->bone_radii, sizeof out->bone_radii);
}

/* How the value of a key is read. */
typedef enum pbd_value_kind {
    PBD_VALUE_COUNT, /* a whole number in [lo, hi], into a uint32_t */
    PBD_VALUE_REAL,  /* a number within lo and hi (each bound open or closed), into a double */
    PBD_VALUE_FLAG,  /* 0 or 1, into an int */
    PBD_VALUE_SIMD,  /* auto, scalar or avx512, into a sinew_simd */
    PBD_VALUE_TEXT   /* bone_radii: checked against the rig when the model is built */
} pbd_value_kind;

typedef struct pbd_key {
    const char* name;
    pbd_value_kind kind;
    size_t offset;
    double lo, hi;
    bool lo_open, hi_open;
    const char* range; /* "is not <range>" in the log line */
} pbd_key;

#define PBD_KEY(name, kind, lo, hi, lo_open, hi_open, range) \
    {#name, kind, offsetof(pbd_params, name), lo, hi, lo_open, hi_open, range}

static const pbd_key pbd_keys[] = {
    PBD_KEY(iterations, PBD_VALUE_COUNT, 1.0, 1000.0, false, false, "1..1000"),
    PBD_KEY(timestep, PBD_VALUE_REAL, 0.0, 1.0, true, false, "a number of seconds in (0, 1]"),
    PBD_KEY(damping, PBD_VALUE_REAL, 0.0, 1.0, false, false, "a number in [0, 1]"),
    PBD_KEY(compliance, PBD_VALUE_FLAG, 0.0, 0.0, false, false, NULL),
    PBD_KEY(stretch_compliance, PBD_VALUE_REAL, 0.0, 1e12, false, false,
            "a number in [0, 1e12]"),
    PBD_KEY(volume_compliance, PBD_VALUE_REAL, 0.0, 1e12, false, false, "a number in [0, 1e12]"),
    PBD_KEY(stretch_stiffness, PBD_VALUE_REAL, 0.0, 1.0, false, false, "a number in [0, 1]"),
    PBD_KEY(volume_stiffness, PBD_VALUE_REAL, 0.0, 1.0, false, false, "a number in [0, 1]"),
    PBD_KEY(mass, PBD_VALUE_REAL, 0.0, 1e12, true, false, "a positive number (at most 1e12)"),
    PBD_KEY(collisions, PBD_VALUE_FLAG, 0.0, 0.0, false, false, NULL),
    PBD_KEY(sliding, PBD_VALUE_FLAG, 0.0, 0.0, false, false, NULL),
    PBD_KEY(decimate_above, PBD_VALUE_COUNT, 0.0, 1e8, false, false, "0..100000000"),
    PBD_KEY(simulation_vertices, PBD_VALUE_COUNT, 4.0, 1e8, false, false, "4..100000000"),
    PBD_KEY(bone_radii, PBD_VALUE_TEXT, 0.0, 0.0, false, false, NULL),
    PBD_KEY(profile, PBD_VALUE_FLAG, 0.0, 0.0, false, false, NULL),
    PBD_KEY(simd, PBD_VALUE_SIMD, 0.0, 0.0, false, false, "one of auto, scalar, avx512"),
    PBD_KEY(grain, PBD_VALUE_COUNT, 1.0, 1e8, false, false, "1..100000000"),
};

#undef PBD_KEY

enum { PBD_KEY_COUNT = sizeof pbd_keys / sizeof pbd_keys[0] };

/* Which keys a parameter list has given so far: each may be given once. */
typedef struct pbd_seen {
    bool key[PBD_KEY_COUNT];
    bool jump[2];
    bool update[2];
} pbd_seen;

/* A value of the key's kind within its bounds (sinew_number_parse takes only finite numbers). */
static bool parse_value(const pbd_key* key, const char* text, void* field)
{
    double v = 0.0;
    if (key->kind == PBD_VALUE_SIMD) {
        sinew_simd simd;
        if (!sinew_simd_parse(text, &simd) || simd == SINEW_SIMD_SSE41 || simd == SINEW_SIMD_AVX2)
            return false;
        *(sinew_simd*)field = simd;
        return true;
    }
    if (key->kind == PBD_VALUE_FLAG) {
        if (strcmp(text, "0") != 0 && strcmp(text, "1") != 0) return false;
        *(int*)field = text[0] == '1';
        return true;
    }
    if (!sinew_number_parse(text, &v)) return false;
    if (key->lo_open ? !(v > key->lo) : v < key->lo) return false;
    if (key->hi_open ? !(v < key->hi) : v > key->hi) return false;
    if (key->kind == PBD_VALUE_COUNT) {
        if (v != floor(v)) return false;
        *(uint32_t*)field = (uint32_t)v;
    } else {
        *(double*)field = v;
    }
    return true;
}

/* The value of one of pbd's own keys into its field of *out; one log line when it is bad. */
static sinew_result parse_key_value(const sinew_host_api* host, const pbd_key* key,
                                    const char* value, pbd_params* out)
{
    void* field = (char*)out + key->offset;
    if (key->kind == PBD_VALUE_TEXT) {
        size_t len = strlen(value);
        if (len == 0 || len >= sizeof out->bone_radii)
            return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                   "pbd: %s=\"%.64s\" is empty or longer than %zu characters",
                                   key->name, value, sizeof out->bone_radii - 1u);
        memcpy(field, value, len + 1u);
        return SINEW_OK;
    }
    if (parse_value(key, value, field)) return SINEW_OK;
    if (key->kind == PBD_VALUE_FLAG)
        return sinew_host_fail(host, SINEW_ERROR_PARAMETER, "pbd: %s=\"%s\" is neither 0 nor 1",
                               key->name, value);
    return sinew_host_fail(host, SINEW_ERROR_PARAMETER, "pbd: %s=\"%s\" is not %s%s", key->name,
                           value, key->kind == PBD_VALUE_COUNT ? "a whole number in " : "",
                           key->range);
}

/* Parameter i: ps's jump and update keys first (they check their own values), then pbd's
 * table. */
static sinew_result parse_param(const sinew_host_api* host, const sinew_param* param, uint32_t i,
                                pbd_seen* seen, pbd_params* out)
{
    const char* key = param->key;
    const char* value = param->value;
    if (!key || !value)
        return sinew_host_fail(host, SINEW_ERROR_PARAMETER, "pbd: parameter %u has a NULL %s",
                               i, key ? "value" : "key");
    sinew_result result;
    if (ps_jump_parse(host, PBD_NAME, key, value, seen->jump, &out->jump, &result)) return result;
    if (ps_update_parse(host, PBD_NAME, key, value, seen->update, &out->update, &result))
        return result;
    int k = 0;
    while (k < PBD_KEY_COUNT && strcmp(key, pbd_keys[k].name) != 0) ++k;
    if (k == PBD_KEY_COUNT)
        return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                               "pbd: unknown parameter \"%s\" (known: iterations, timestep, "
                               "damping, compliance, stretch_compliance, volume_compliance, "
                               "stretch_stiffness, volume_stiffness, mass, collisions, sliding, "
                               "decimate_above, simulation_vertices, bone_radii, profile, simd, "
                               "grain, jump_angle, jump_distance, max_substeps, interpolate_output)", key);
    if (seen->key[k])
        return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                               "pbd: parameter \"%s\" is given twice", key);
    seen->key[k] = true;
    return parse_key_value(host, &pbd_keys[k], value, out);
}

sinew_result pbd_params_parse(const sinew_host_api* host, const sinew_param* params,
                              uint32_t count, pbd_params* out)
{
    pbd_params_default(out);
    if (count > 0 && !params)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "pbd: param_count is %u but params is NULL", count);
    pbd_seen seen;
    memset(&seen, 0, sizeof seen);
    for (uint32_t i = 0; i < count; ++i) {
        sinew_result r = parse_param(host, &params[i], i, &seen, out);
        if (r != SINEW_OK) return r;
    }
    return SINEW_OK;
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
