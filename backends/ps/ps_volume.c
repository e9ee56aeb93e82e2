/* The volume term of the tissue energy (Bouaziz et al. 2014, Sec. 5; volume3.h), shared by ps
 * and fps (and fps-cuda through fps): parameters volume_weight and volume_range.
 * SPDX-License-Identifier: MIT */
#include <string.h>

#include "ps_internal.h"

void ps_volume_params_default(ps_volume_params* p)
{
    p->weight = PS_VOLUME_WEIGHT;
    p->range = PS_VOLUME_RANGE;
}

bool ps_volume_parse(const sinew_host_api* host, const char* backend, const char* key,
                     const char* value, bool seen[2], ps_volume_params* out, sinew_result* result)
{
    int k = strcmp(key, "volume_weight") == 0 ? 0 : strcmp(key, "volume_range") == 0 ? 1 : -1;
    if (k < 0) return false;
    *result = SINEW_OK;
    if (seen[k]) {
        *result = sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                  "%s: parameter \"%s\" is given twice", backend, key);
        return true;
    }
    seen[k] = true;
    double v = 0.0;
    bool ok = ps_parse_number(value, &v) && v >= 0.0;
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
