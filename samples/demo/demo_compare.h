/* The layout of sinew-demo's compare.png and what is drawn into it besides the renders: a
 * label band over the columns (each backend's name and figures), the full-body row, one
 * close-up row per bent joint with its caption, and with --color volume a footer holding the
 * colour bar and its range. SPDX-License-Identifier: MIT */
#ifndef SINEW_DEMO_COMPARE_H
#define SINEW_DEMO_COMPARE_H

#include <stdint.h>

#include "sample_text.h"

typedef struct compare_layout {
    uint32_t width;             /* the renders' width: columns side by side */
    uint32_t row_height;        /* the renders' height: one row each */
    uint32_t columns;
    uint32_t rows;              /* 1 + close-ups */
    uint32_t scale;             /* text scale of the figures (the names one more) */
    uint32_t band_height;       /* the labels, above row 0 */
    uint32_t footer_height;     /* the colour bar, below the last row; 0 without */
    uint32_t height;            /* the whole image */
} compare_layout;

/* The layout for `columns` renders of width x row_height per row, `label_lines` figure lines
 * under each name, `closeups` close-up rows and, with color_bar, the footer. The text scale
 * grows with the column width and the row height (1 below 260 x 360 pixels per column). */
void compare_layout_make(uint32_t width, uint32_t row_height, uint32_t columns,
                         uint32_t label_lines, uint32_t closeups, int color_bar,
                         compare_layout* out);

/* The first image row of render row `row` (0: full body, 1..: close-ups). */
uint32_t compare_row_top(const compare_layout* layout, uint32_t row);

/* The whole image in the band's colour (dark, unlike the renders' background). */
void compare_clear(sample_image* image, const compare_layout* layout);
/* Copies one render (width x row_height RGBA) into row `row`. */
void compare_paste_row(sample_image* image, const compare_layout* layout, uint32_t row,
                       const uint8_t* rgba);
/* Lines between the columns (above the footer) and between the rows, over everything
 * pasted. */
void compare_draw_frame(sample_image* image, const compare_layout* layout);

/* Column c's labels in the band: `title` (the backend) and `count` figure lines, each cut to
 * the column's width. */
void compare_draw_labels(sample_image* image, const compare_layout* layout, uint32_t column,
                         const char* title, const char* const* lines, uint32_t count);
/* A caption at the top left of render row `row`, on a dark band. */
void compare_draw_caption(sample_image* image, const compare_layout* layout, uint32_t row,
                          const char* text);

/* The colour bar of the volume map with its range (1 / range .. range, log scale, a tick at
 * 1) and a title, one text line high at `scale`, on a dark band, left edge at x and top at y.
 * Returns the width it took. */
uint32_t compare_draw_color_bar(sample_image* image, int32_t x, int32_t y, uint32_t scale,
                                float range);
/* The footer: the colour bar, centred. */
void compare_draw_footer(sample_image* image, const compare_layout* layout, float range);

#endif
