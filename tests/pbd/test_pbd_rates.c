/* The update rate of the pbd backend: dt as whole steps of its timestep through the runtime
 * (the checks shared with ps and fps: tests/ps/rate_world.c). SPDX-License-Identifier: MIT */
#include "rate_world.h"

#include "builtin_backends.h"

/* The same motion at 30, 60 and 144 Hz: the intermediate poses of an update are linear blends
 * of the skinning matrices (ps_update.c), whose error the motion's tolerance covers as for fps
 * (measured 2.0e-3 at 30 Hz). pbd's particles are single precision, so the settled shapes
 * agree to float rounding (measured 2.2e-6 of the diagonal; ps and fps are held to 1e-6). */
int main(void)
{
    return rate_run_all("pbd", &sinew_backend_pbd, 5e-3, 1e-5);
}
