/* Timing and order statistics for the benchmark. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "sample_stats.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

double sample_now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare_doubles(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

double sample_quantile(double* values, size_t count, double q)
{
    if (!values || count == 0 || !(q >= 0.0 && q <= 1.0)) return NAN;
    qsort(values, count, sizeof *values, compare_doubles);
    double position = q * (double)(count - 1);
    size_t below = (size_t)floor(position);
    size_t above = below + 1 < count ? below + 1 : below;
    double t = position - (double)below;
    return values[below] + t * (values[above] - values[below]);
}
