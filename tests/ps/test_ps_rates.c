/* The update rate of the ps backend: dt as whole steps of its timestep through the runtime
 * (the checks shared with fps: rate_world.c). SPDX-License-Identifier: MIT */
#include "rate_world.h"

#include "builtin_backends.h"

/* The same motion at 30, 60 and 144 Hz agrees within 1e-3 of the cylinder's diagonal (1.2e-2
 * units) during the motion. What differs between the rates is the steps' poses: 30 Hz gives
 * every other step the linear blend of two updates' matrices, which shrinks the frame at the
 * halfway pose of a 6 degree update by 1 - cos(3 degrees) = 1.4e-3; 5 units out on the forearm
 * that is 7e-3 units, 5.6e-4 of the diagonal, at the one step that sees it, and the tissue
 * follows its anchors with its inertia (measured 3.5e-4 at 30 Hz, 2e-5 at 144 Hz, whose
 * updates are 1.25 degrees apart). One step per update at 30 Hz differs by 0.1. */
int main(void)
{
    return rate_run_all("ps", &sinew_backend_ps, 1e-3, 1e-6);
}
