/* The built-in backend tables, registered by the runtime through sinew_world_register_backend
 * exactly like a plugin's. SPDX-License-Identifier: MIT */
#ifndef SINEW_COMMON_BUILTIN_BACKENDS_H
#define SINEW_COMMON_BUILTIN_BACKENDS_H

#include <sinew/sinew_plugin.h>

extern const sinew_backend_vtable sinew_backend_lbs;  /* backends/lbs */
extern const sinew_backend_vtable sinew_backend_dqs;  /* backends/dqs */
#if defined(SINEW_HAVE_PS)
extern const sinew_backend_vtable sinew_backend_ps;   /* backends/ps (needs CHOLMOD) */
#endif
#if defined(SINEW_HAVE_FPS)
extern const sinew_backend_vtable sinew_backend_fps;  /* backends/fps (PCG; CHOLMOD optional) */
#endif
#if defined(SINEW_HAVE_PBD)
extern const sinew_backend_vtable sinew_backend_pbd;  /* backends/pbd */
#endif

#endif
