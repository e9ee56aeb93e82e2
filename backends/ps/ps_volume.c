/* The volume term of the tissue energy (Bouaziz et al. 2014, Sec. 5; volume3.h), shared by ps
 * and fps (and fps-cuda through fps): parameters volume_weight and volume_range.
 * SPDX-License-Identifier: MIT */
#include "ps_internal.h"

void ps_volume_params_default(ps_volume_params* p)
{
    p->weight = PS_VOLUME_WEIGHT;
    p->range = PS_VOLUME_RANGE;
}

bool ps_volume_parse(const sinew_host_api* host, const char* backend, const char* key,
                     const char* value, bool seen[2], ps_volume_params* out, sinew_result* result)
{
    static const char* const names[2] = {"volume_weight", "volume_range"};
    double v = 0.0;
    bool ok = false;
    int k = ps_param_of_two(host, backend, key, value, names, seen, &v, &ok, result);
    if (k < 0) return false;
    if (*result != SINEW_OK) return true;
    if (k == 0 && !(ok && v <= 1e12))
        *result = sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                  "%s: volume_weight=\"%s\" is not a number in [0, 1e12] (0: no "
                                  "volume term)", backend, value);
    else if (k == 1 && !(ok && v < 1.0))
        *result = sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                  "%s: volume_range=\"%s\" is not a number in [0, 1)", backend,
                                  value);
    else if (k == 0)
        out->weight = v;
    else
        out->range = v;
    return true;
}

void ps_volume_blend(const ps_volume_params* p, double strain_weight, float* keep, float* lo,
                     float* hi)
{
    *keep = p->weight > 0.0 ? (float)(strain_weight / (strain_weight + p->weight)) : 1.0f;
    *lo = (float)(1.0 - p->range);
    *hi = (float)(1.0 + p->range);
}
