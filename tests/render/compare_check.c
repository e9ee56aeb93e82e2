/* compare_check FILE WIDTH HEIGHT COLUMNS CLOSEUPS COLOR: checks sinew-demo's compare.png
 * against the layout the demo computes for those renders (demo_compare.h; WIDTH x HEIGHT per
 * row, COLUMNS backends, CLOSEUPS close-up rows, COLOR 1 with the colour bar): the size
 * (the close-up rows and the label band grew the image), white label text in every column's
 * band on the band's own colour (not the renders' background), close-up rows that show
 * something other than the full-body row, and with COLOR a footer whose bar has blue and red.
 * Exits 0 when all hold, 1 otherwise, printing what it found. SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_render.h>

#include "demo_compare.h"

static const uint8_t* pixel(const sample_image* image, uint32_t x, uint32_t y)
{
    return image->rgba + 4u * ((size_t)y * image->width + x);
}

static int same_rgb(const uint8_t* a, const uint8_t* b)
{
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

/* Column c of the band: white text pixels, and most pixels neither white nor the colour of
 * the renders' background. */
static int check_band(const sample_image* image, const compare_layout* layout, uint32_t c,
                      const uint8_t* background)
{
    const uint32_t cw = layout->width / layout->columns;
    uint32_t white = 0, as_background = 0, total = 0;
    for (uint32_t y = 0; y < layout->band_height; y++)
        for (uint32_t x = c * cw + 1; x < (c + 1) * cw; x++, total++) {
            const uint8_t* p = pixel(image, x, y);
            white += p[0] == 255 && p[1] == 255 && p[2] == 255;
            as_background += same_rgb(p, background);
        }
    printf("column %u: label band %u px, %u white, %u in the renders' background colour\n", c,
           total, white, as_background);
    return white > 20 && white < total / 2 && as_background == 0;
}

/* Pixels where two rows differ. */
static uint32_t rows_differ(const sample_image* image, const compare_layout* layout,
                            uint32_t a, uint32_t b)
{
    uint32_t n = 0;
    for (uint32_t y = 1; y < layout->row_height; y++)
        for (uint32_t x = 0; x < layout->width; x++)
            n += !same_rgb(pixel(image, x, compare_row_top(layout, a) + y),
                           pixel(image, x, compare_row_top(layout, b) + y));
    return n;
}

/* The footer's bar: clearly blue and clearly red pixels. */
static int check_footer(const sample_image* image, const compare_layout* layout)
{
    uint32_t blue = 0, red = 0;
    for (uint32_t y = layout->height - layout->footer_height; y < layout->height; y++)
        for (uint32_t x = 0; x < layout->width; x++) {
            const uint8_t* p = pixel(image, x, y);
            blue += p[2] > p[0] + 80 && p[2] > p[1] + 40;
            red += p[0] > p[1] + 80 && p[0] > p[2] + 80;
        }
    printf("footer: %u px high, %u blue and %u red pixels\n", layout->footer_height, blue, red);
    return layout->footer_height > 0 && blue > 10 && red > 10;
}

int main(int argc, char** argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: compare_check FILE WIDTH HEIGHT COLUMNS CLOSEUPS COLOR\n");
        return 2;
    }
    const uint32_t w = (uint32_t)strtoul(argv[2], NULL, 10);
    const uint32_t h = (uint32_t)strtoul(argv[3], NULL, 10);
    const uint32_t columns = (uint32_t)strtoul(argv[4], NULL, 10);
    const uint32_t closeups = (uint32_t)strtoul(argv[5], NULL, 10);
    const int color = atoi(argv[6]);
    compare_layout layout;
    compare_layout_make(w, h, columns, 2 + closeups, closeups, color, &layout);
    sample_image image = {NULL, 0, 0};
    sinew_result r = sinew_png_read(argv[1], &image.width, &image.height, &image.rgba, NULL);
    if (r != SINEW_OK) {
        fprintf(stderr, "compare_check: %s: %s\n", argv[1], sinew_result_string(r));
        return 1;
    }
    printf("%s: %ux%u, expected %ux%u (band %u, %u rows of %u, footer %u)\n", argv[1],
           image.width, image.height, layout.width, layout.height, layout.band_height,
           layout.rows, h, layout.footer_height);
    int ok = image.width == layout.width && image.height == layout.height &&
             layout.height > (1 + closeups) * h;
    /* The renders' background: the full-body row's top-left corner, above any character. */
    uint8_t background[3] = {0, 0, 0};
    if (ok) memcpy(background, pixel(&image, 2, compare_row_top(&layout, 0) + 2), 3);
    for (uint32_t c = 0; ok && c < columns; c++) ok = check_band(&image, &layout, c, background);
    for (uint32_t row = 1; ok && row < layout.rows; row++) {
        uint32_t n = rows_differ(&image, &layout, 0, row);
        printf("close-up row %u: %u px differ from the full-body row\n", row, n);
        ok = n > layout.width * h / 10;
    }
    if (ok && color) ok = check_footer(&image, &layout);
    free(image.rgba);
    if (!ok) fprintf(stderr, "compare_check: %s does not have the expected layout\n", argv[1]);
    return ok ? 0 : 1;
}
