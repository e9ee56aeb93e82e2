/* Writing a triangle mesh as an OFF file (the text format the test characters' meshes come
 * in), so that the shapes the tools measure can be kept and compared. SPDX-License-Identifier:
 * MIT */
#ifndef SINEW_SAMPLE_OFF_H
#define SINEW_SAMPLE_OFF_H

#include <stdint.h>

#include <sinew/sinew.h>

/* Writes "OFF", the counts, one line of 3 positions per vertex (9 significant digits: floats
 * read back bit for bit) and one "3 a b c" line per triangle. SINEW_ERROR_FILE_READ after one
 * line on stderr when the file cannot be written. */
sinew_result sample_off_write(const char* path, const float* positions, uint32_t vertex_count,
                              const uint32_t* indices, uint32_t triangle_count);

#endif
