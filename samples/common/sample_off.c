/* SPDX-License-Identifier: MIT */
#include "sample_off.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

sinew_result sample_off_write(const char* path, const float* positions, uint32_t vertex_count,
                              const uint32_t* indices, uint32_t triangle_count)
{
    FILE* f = path ? fopen(path, "w") : NULL;
    if (!f) {
        fprintf(stderr, "cannot write %s: %s\n", path ? path : "(null)", strerror(errno));
        return SINEW_ERROR_FILE_READ;
    }
    int ok = fprintf(f, "OFF\n%u %u 0\n", vertex_count, triangle_count) > 0;
    for (uint32_t v = 0; v < vertex_count && ok; ++v) {
        const float* p = positions + 3u * (size_t)v;
        ok = fprintf(f, "%.9g %.9g %.9g\n", (double)p[0], (double)p[1], (double)p[2]) > 0;
    }
    for (uint32_t t = 0; t < triangle_count && ok; ++t) {
        const uint32_t* i = indices + 3u * (size_t)t;
        ok = fprintf(f, "3 %u %u %u\n", i[0], i[1], i[2]) > 0;
    }
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
        fprintf(stderr, "writing %s failed\n", path);
        return SINEW_ERROR_FILE_READ;
    }
    return SINEW_OK;
}
