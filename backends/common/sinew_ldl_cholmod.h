/* A sinew_ldl over a CHOLMOD factor: for the files that include cholmod.h (ps, fps's direct
 * solver). SPDX-License-Identifier: MIT */
#ifndef SINEW_COMMON_LDL_CHOLMOD_H
#define SINEW_COMMON_LDL_CHOLMOD_H

#include <cholmod.h>

#include "sinew_ldl.h"

/* The two-part solver of a simplicial, real, 32-bit-indexed LDL^T factor (what the physics
 * backends ask CHOLMOD for), sharing like's cut and pattern when it has them (like may be
 * NULL; sinew_ldl_create_like); any other kind of factor is SINEW_ERROR_BACKEND_FAILED with
 * one line. */
static inline sinew_result sinew_ldl_from_cholmod(const sinew_host_api* host,
                                                  const sinew_ldl* like,
                                                  const cholmod_factor* L, sinew_ldl** out)
{
    if (!L || L->is_super || L->is_ll || L->xtype != CHOLMOD_REAL || L->itype != CHOLMOD_INT ||
        L->n > (size_t)INT32_MAX)
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_FAILED,
                               "ldl: the CHOLMOD factor is not a simplicial real LDL^T with "
                               "32-bit indices");
    sinew_ldl_view v = {(uint32_t)L->n,          (const int32_t*)L->p, (const int32_t*)L->nz,
                        (const int32_t*)L->i,    (const double*)L->x,  (const int32_t*)L->Perm};
    return sinew_ldl_create_like(host, like, &v, out);
}

/* Starts CHOLMOD for the factors the physics backends ask it for: quiet (errors come back as
 * status), simplicial LDL^T with AMD ordering only (on these shell-like meshes it solves faster
 * than a supernodal factor), postordered. */
static inline void sinew_cholmod_start_ldl(cholmod_common* cc)
{
    cholmod_start(cc);
    cc->print = 0;
    cc->supernodal = CHOLMOD_SIMPLICIAL;
    cc->final_ll = 0;
    cc->nmethods = 1;
    cc->method[0].ordering = CHOLMOD_AMD;
    cc->postorder = 1;
}

#endif
