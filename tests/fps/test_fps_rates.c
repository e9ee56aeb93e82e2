/* The update rate of the fps backend: dt as whole steps of its timestep through the runtime
 * (the checks shared with ps: tests/ps/rate_world.c). SPDX-License-Identifier: MIT */
#include "rate_world.h"

#include "builtin_backends.h"

/* The same motion at 30, 60 and 144 Hz agrees within 5e-3 of the cylinder's diagonal during
 * the motion: the blend's error is ps's (test_ps_rates: 3.5e-4 at 30 Hz), but fps's joint
 * contacts (joint_collisions) clamp the anchors near the fold by a side test, and the blended
 * pose of the step before the ramp's end clamps a few other anchors than the exact pose does:
 * a transient of 2.9e-3 at 0.5 s, back to 4.5e-4 two steps later (1e-3 everywhere without the
 * joint contacts). One step per update at 30 Hz differs by 0.1. */
int main(void)
{
    return rate_run_all("fps", &sinew_backend_fps, 5e-3, 1e-6);
}
