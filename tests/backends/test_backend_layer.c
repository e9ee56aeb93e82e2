/* The backends stand below the runtime: this program links every built-in backend's objects
 * with only their own libraries, never libsinew, so a backend that calls a runtime symbol
 * fails the build here. Run, it checks that each table names its backend.
 * SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include "builtin_backends.h"

static int check(const sinew_backend_vtable* table, const char* name)
{
    if (table->struct_size == sizeof(sinew_backend_vtable) && strcmp(table->name, name) == 0)
        return 0;
    fprintf(stderr, "test_backend_layer: the table of %s is not what it should be\n", name);
    return 1;
}

int main(void)
{
    int failed = check(&sinew_backend_lbs, "lbs") + check(&sinew_backend_dqs, "dqs");
#if defined(SINEW_HAVE_PS)
    failed += check(&sinew_backend_ps, "ps");
#endif
#if defined(SINEW_HAVE_FPS)
    failed += check(&sinew_backend_fps, "fps");
#endif
#if defined(SINEW_HAVE_PBD)
    failed += check(&sinew_backend_pbd, "pbd");
#endif
    return failed ? 1 : 0;
}
