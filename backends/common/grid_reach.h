/* The stopping test of a closest-point search over a uniform grid that visits rings of cells
 * at growing Chebyshev distance (ps_grid_closest, sinew_geodesic_closest).
 * SPDX-License-Identifier: MIT */
#ifndef SINEW_COMMON_GRID_REACH_H
#define SINEW_COMMON_GRID_REACH_H

#include <math.h>
#include <stdint.h>

/* How far p lies inside the cube of the cells within Chebyshev distance r of cell c (grid
 * origin, cube cells of side `cell`), less a rounding margin: every triangle not yet visited
 * lies wholly outside that cube, so at least this far away. Negative for a p outside the
 * grid, whose cell coordinates were clamped. */
static inline double sinew_grid_ring_reach(const double origin[3], double cell,
                                           const uint32_t c[3], double r, const double p[3])
{
    double d = INFINITY;
    for (int k = 0; k < 3; ++k) {
        double lo = origin[k] + ((double)c[k] - r) * cell;
        double hi = origin[k] + ((double)c[k] + r + 1.0) * cell;
        d = fmin(d, fmin(p[k] - lo, hi - p[k]));
    }
    return d - 1e-9 * cell;
}

#endif
