/* compare.png's layout, labels, captions and colour bar. SPDX-License-Identifier: MIT */
#include "demo_compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sample_vertex_volume.h"

static const uint8_t BAND[3] = {16, 18, 24};        /* darker than the renders' background */
static const uint8_t LINES[3] = {90, 96, 108};      /* separators */
static const uint8_t WHITE[3] = {255, 255, 255};

/* Padding around text blocks, in image pixels. */
static uint32_t pad(uint32_t scale) { return 3u * scale; }

void compare_layout_make(uint32_t width, uint32_t row_height, uint32_t columns,
                         uint32_t label_lines, uint32_t closeups, int color_bar,
                         compare_layout* out)
{
    memset(out, 0, sizeof *out);
    out->width = width;
    out->row_height = row_height;
    out->columns = columns ? columns : 1;
    out->rows = 1 + closeups;
    uint32_t scale = width / out->columns / 130u;
    if (row_height / 180u < scale) scale = row_height / 180u;
    out->scale = scale < 1 ? 1 : scale > 4 ? 4 : scale;
    const uint32_t s = out->scale;
    /* Name, a gap, then the figure lines; padding above and below. */
    out->band_height = 2 * pad(s) + sample_text_height(s + 1) + 3 * s +
                       label_lines * SAMPLE_TEXT_LINE * s;
    out->footer_height = color_bar ? 2 * pad(s) + sample_text_height(s) : 0;
    out->height = out->band_height + out->rows * row_height + out->footer_height;
}

uint32_t compare_row_top(const compare_layout* layout, uint32_t row)
{
    return layout->band_height + row * layout->row_height;
}

void compare_clear(sample_image* image, const compare_layout* layout)
{
    sample_image_fill(image, 0, 0, layout->width, layout->height, BAND, 255);
}

void compare_paste_row(sample_image* image, const compare_layout* layout, uint32_t row,
                       const uint8_t* rgba)
{
    const size_t bytes = (size_t)layout->width * layout->row_height * 4u;
    memcpy(image->rgba + (size_t)compare_row_top(layout, row) * layout->width * 4u, rgba, bytes);
}

/* Column c's left edge and width, as the renderer splits the image (the last column takes
 * the remainder). */
static void column_span(const compare_layout* layout, uint32_t c, uint32_t* x0, uint32_t* w)
{
    const uint32_t cw = layout->width / layout->columns;
    *x0 = c * cw;
    *w = c + 1 == layout->columns ? layout->width - *x0 : cw;
}

void compare_draw_frame(sample_image* image, const compare_layout* layout)
{
    const uint32_t above_footer = layout->height - layout->footer_height;
    for (uint32_t c = 1; c < layout->columns; c++) {
        uint32_t x0, w;
        column_span(layout, c, &x0, &w);
        sample_image_fill(image, (int32_t)x0, 0, 1, above_footer, LINES, 255);
    }
    for (uint32_t row = 0; row <= layout->rows; row++)
        sample_image_fill(image, 0, (int32_t)compare_row_top(layout, row), layout->width, 1,
                          LINES, 255);
}

/* One line of text cut to max_width. */
static void draw_fitted(sample_image* image, int32_t x, int32_t y, const char* text,
                        uint32_t scale, uint32_t max_width)
{
    char line[256];
    uint32_t n = sample_text_fit(text, scale, max_width);
    if (n >= sizeof line) n = sizeof line - 1;
    memcpy(line, text, n);
    line[n] = '\0';
    sample_text_draw(image, x, y, line, scale, WHITE);
}

void compare_draw_labels(sample_image* image, const compare_layout* layout, uint32_t column,
                         const char* title, const char* const* lines, uint32_t count)
{
    const uint32_t s = layout->scale;
    uint32_t x0, w;
    column_span(layout, column, &x0, &w);
    const int32_t x = (int32_t)(x0 + pad(s));
    const uint32_t room = w > 2 * pad(s) ? w - 2 * pad(s) : 0;
    int32_t y = (int32_t)pad(s);
    draw_fitted(image, x, y, title, s + 1, room);
    y += (int32_t)(sample_text_height(s + 1) + 3 * s);
    for (uint32_t i = 0; i < count; i++, y += (int32_t)(SAMPLE_TEXT_LINE * s))
        draw_fitted(image, x, y, lines[i], s, room);
}

void compare_draw_caption(sample_image* image, const compare_layout* layout, uint32_t row,
                          const char* text)
{
    const uint32_t s = layout->scale;
    const uint32_t room = layout->width > 4 * pad(s) ? layout->width - 4 * pad(s) : 0;
    uint32_t n = sample_text_fit(text, s, room);
    char line[256];
    if (n >= sizeof line) n = sizeof line - 1;
    memcpy(line, text, n);
    line[n] = '\0';
    const int32_t top = (int32_t)compare_row_top(layout, row) + 1;
    sample_image_fill(image, 0, top, sample_text_width(line, s) + 2 * pad(s),
                      sample_text_height(s) + 2 * pad(s), BAND, 200);
    sample_text_draw(image, (int32_t)pad(s), top + (int32_t)pad(s), line, s, WHITE);
}

/* The gradient: 1 / range at the left, range at the right, log-spaced; a white tick at 1. */
static void draw_gradient(sample_image* image, int32_t x, int32_t y, uint32_t width,
                          uint32_t height, float range)
{
    for (uint32_t i = 0; i < width; i++) {
        const float t = width > 1 ? 2.0f * (float)i / (float)(width - 1) - 1.0f : 0.0f;
        uint8_t rgb[3];
        sample_volume_color_srgb(powf(range, t), range, rgb);
        sample_image_fill(image, x + (int32_t)i, y, 1, height, rgb, 255);
    }
    sample_image_fill(image, x + (int32_t)(width / 2), y - 1, 1, height + 2, WHITE, 255);
}

uint32_t compare_draw_color_bar(sample_image* image, int32_t x, int32_t y, uint32_t scale,
                                float range)
{
    char low[32], high[32];
    snprintf(low, sizeof low, "%.2f", 1.0 / range);
    snprintf(high, sizeof high, "%.2f", (double)range);
    const char* title = "vertex volume ratio";
    const uint32_t gap = SAMPLE_TEXT_ADVANCE * scale;
    const uint32_t bar = 40 * scale, h = sample_text_height(scale);
    const uint32_t width = sample_text_width(title, scale) + gap + sample_text_width(low, scale) +
                           gap + bar + gap + sample_text_width(high, scale);
    sample_image_fill(image, x - (int32_t)pad(scale), y - (int32_t)pad(scale),
                      width + 2 * pad(scale), h + 2 * pad(scale), BAND, 220);
    int32_t at = x;
    sample_text_draw(image, at, y, title, scale, WHITE);
    at += (int32_t)(sample_text_width(title, scale) + gap);
    sample_text_draw(image, at, y, low, scale, WHITE);
    at += (int32_t)(sample_text_width(low, scale) + gap);
    draw_gradient(image, at, y, bar, h, range);
    at += (int32_t)(bar + gap);
    sample_text_draw(image, at, y, high, scale, WHITE);
    return width;
}

void compare_draw_footer(sample_image* image, const compare_layout* layout, float range)
{
    if (layout->footer_height == 0) return;
    const uint32_t s = layout->scale;
    const int32_t y = (int32_t)(compare_row_top(layout, layout->rows) + pad(s));
    /* Measure first (drawn off the image), then draw centred. */
    sample_image nowhere = {NULL, 0, 0};
    uint32_t width = compare_draw_color_bar(&nowhere, 0, 0, s, range);
    int32_t x = width < layout->width ? (int32_t)((layout->width - width) / 2) : (int32_t)pad(s);
    compare_draw_color_bar(image, x, y, s, range);
}
