/* Text and simple shapes drawn into an RGBA8 image on the host: a 5x7 bitmap font (upper-case
 * letters, digits and the punctuation labels need; lower case is drawn upper case), scaled by
 * whole pixels, for labels burnt into the images the samples write. SPDX-License-Identifier:
 * MIT */
#ifndef SINEW_SAMPLE_TEXT_H
#define SINEW_SAMPLE_TEXT_H

#include <stdint.h>

/* An RGBA8 image, rows top to bottom, tightly packed (what sinew_renderer_draw returns). */
typedef struct sample_image {
    uint8_t* rgba;
    uint32_t width, height;
} sample_image;

/* The glyph cell and the pen's advance, in font pixels (one font pixel is `scale` image
 * pixels): 5x7 glyphs, one column between characters, three rows between lines. */
enum {
    SAMPLE_TEXT_GLYPH_WIDTH = 5,
    SAMPLE_TEXT_GLYPH_HEIGHT = 7,
    SAMPLE_TEXT_ADVANCE = 6,
    SAMPLE_TEXT_LINE = 10
};

/* Is pixel (x, y) of character c's glyph set (x right, y down, within the 5x7 cell)? Lower
 * case reads as upper case; a character the font lacks is an outlined box; space and
 * anything outside the cell are clear. */
int sample_text_glyph_pixel(char c, int x, int y);

/* Width and height in image pixels of one line of `text` at `scale` (>= 1): the advance of
 * every character but the last, which is only as wide as its glyph. 0 for an empty text. */
uint32_t sample_text_width(const char* text, uint32_t scale);
uint32_t sample_text_height(uint32_t scale);

/* How many leading characters of `text` fit in `max_width` pixels at `scale`. */
uint32_t sample_text_fit(const char* text, uint32_t scale, uint32_t max_width);

/* Draws one line of `text` with its glyph cell's top-left corner at (x, y), every set font
 * pixel a scale x scale square of colour `rgb` (alpha 255); clipped to the image. */
void sample_text_draw(sample_image* image, int32_t x, int32_t y, const char* text,
                      uint32_t scale, const uint8_t rgb[3]);

/* Blends `rgb` over the rectangle (x, y, width, height), clipped to the image: alpha 255
 * paints it, lower values darken or tint what is there (a band behind text). */
void sample_image_fill(sample_image* image, int32_t x, int32_t y, uint32_t width,
                       uint32_t height, const uint8_t rgb[3], uint8_t alpha);

#endif
