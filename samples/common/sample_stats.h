/* Timing and order statistics for the benchmark. SPDX-License-Identifier: MIT */
#ifndef SINEW_SAMPLE_STATS_H
#define SINEW_SAMPLE_STATS_H

#include <stddef.h>

/* Monotonic wall-clock time in seconds (arbitrary origin). */
double sample_now_seconds(void);

/* The q-quantile (0 <= q <= 1) of `count` values by linear interpolation between the order
 * statistics (q = 0.5 is the median); sorts `values` in place. NaN when count is 0. */
double sample_quantile(double* values, size_t count, double q);

#endif
