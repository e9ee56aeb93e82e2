/* The bitmap font and drawing into RGBA8 images (sample_text.h): known glyph pixels on a small
 * image, scaling, clipping at the edges, widths, and the blended fill behind labels.
 * SPDX-License-Identifier: MIT */
#include "test_support.h"

#include <stdlib.h>
#include <string.h>

#include "sample_text.h"

enum { W = 40, H = 20 };

static const uint8_t WHITE[3] = {255, 255, 255};
static const uint8_t BLACK[3] = {0, 0, 0};

/* A W x H image filled with grey 50. */
static sample_image grey_image(uint8_t* storage)
{
    for (size_t p = 0; p < (size_t)W * H; p++) {
        storage[4 * p] = storage[4 * p + 1] = storage[4 * p + 2] = 50;
        storage[4 * p + 3] = 255;
    }
    sample_image image = {storage, W, H};
    return image;
}

static int is_white(const sample_image* image, uint32_t x, uint32_t y)
{
    const uint8_t* p = image->rgba + 4u * ((size_t)y * image->width + x);
    return p[0] == 255 && p[1] == 255 && p[2] == 255;
}

static int same_glyph(char a, char b)
{
    for (int y = 0; y < SAMPLE_TEXT_GLYPH_HEIGHT; y++)
        for (int x = 0; x < SAMPLE_TEXT_GLYPH_WIDTH; x++)
            if (sample_text_glyph_pixel(a, x, y) != sample_text_glyph_pixel(b, x, y)) return 0;
    return 1;
}

static void test_glyph_table(void** state)
{
    (void)state;
    /* 'A': the apex row .###., the crossbar row #####, the legs. */
    assert_false(sample_text_glyph_pixel('A', 0, 0));
    assert_true(sample_text_glyph_pixel('A', 1, 0));
    assert_true(sample_text_glyph_pixel('A', 3, 0));
    for (int x = 0; x < 5; x++) assert_true(sample_text_glyph_pixel('A', x, 3));
    assert_true(sample_text_glyph_pixel('A', 0, 6) && sample_text_glyph_pixel('A', 4, 6));
    assert_false(sample_text_glyph_pixel('A', 2, 6));
    /* Lower case reads as upper case; space is clear; outside the cell is clear. */
    for (int y = 0; y < 7; y++)
        for (int x = 0; x < 5; x++) {
            assert_int_equal(sample_text_glyph_pixel('e', x, y),
                             sample_text_glyph_pixel('E', x, y));
            assert_false(sample_text_glyph_pixel(' ', x, y));
        }
    assert_false(sample_text_glyph_pixel('A', 5, 0));
    assert_false(sample_text_glyph_pixel('A', 0, -1));
    /* '1' has its stem in the middle column; '.' sits on the baseline. */
    for (int y = 0; y < 7; y++) assert_true(sample_text_glyph_pixel('1', 2, y));
    assert_true(sample_text_glyph_pixel('.', 1, 6) && !sample_text_glyph_pixel('.', 1, 4));
    /* A character the font lacks is an outlined box. */
    assert_true(sample_text_glyph_pixel('~', 0, 0) && sample_text_glyph_pixel('~', 4, 6));
    assert_false(sample_text_glyph_pixel('~', 2, 3));
    /* Every letter, digit and the label punctuation have a glyph of their own (not the box). */
    const char* needed = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:-/%=()_, ";
    for (const char* c = needed; *c; c++) assert_false(same_glyph(*c, '~'));
    assert_false(same_glyph('0', 'O'));
}

/* "A1" at scale 1 and (2, 3): every image pixel is white exactly where the glyph table says. */
static void test_draw_known_pixels(void** state)
{
    (void)state;
    uint8_t storage[W * H * 4];
    sample_image image = grey_image(storage);
    sample_text_draw(&image, 2, 3, "A1", 1, WHITE);
    for (uint32_t y = 0; y < H; y++)
        for (uint32_t x = 0; x < W; x++) {
            int gx = (int)x - 2, gy = (int)y - 3;
            int want = sample_text_glyph_pixel('A', gx, gy) ||
                       sample_text_glyph_pixel('1', gx - SAMPLE_TEXT_ADVANCE, gy);
            assert_int_equal(is_white(&image, x, y), want);
        }
    /* Untouched pixels keep their colour. */
    assert_int_equal(storage[0], 50);
}

/* At scale 2 each font pixel is a 2x2 square. */
static void test_draw_scaled(void** state)
{
    (void)state;
    uint8_t storage[W * H * 4];
    sample_image image = grey_image(storage);
    sample_text_draw(&image, 0, 0, "-", 2, WHITE);
    uint32_t white = 0;
    for (uint32_t y = 0; y < H; y++)
        for (uint32_t x = 0; x < W; x++) white += (uint32_t)is_white(&image, x, y);
    /* '-' is three font pixels in row 3: 12 image pixels in rows 6 and 7, columns 2..7. */
    assert_int_equal(white, 12);
    assert_true(is_white(&image, 2, 6) && is_white(&image, 7, 7));
    assert_false(is_white(&image, 1, 6) || is_white(&image, 8, 6) || is_white(&image, 2, 8));
    assert_int_equal(sample_text_width("-", 2), 10);
    assert_int_equal(sample_text_width("ab", 1), 11);
    assert_int_equal(sample_text_width("", 3), 0);
    assert_int_equal(sample_text_height(3), 21);
    assert_int_equal(sample_text_fit("abcdef", 1, 17), 3);   /* 3 characters are 17 wide */
    assert_int_equal(sample_text_fit("abcdef", 1, 16), 2);
    assert_int_equal(sample_text_fit("abcdef", 1, 1000), 6);
}

/* Text past the edges is clipped, not written out of bounds (the image sits inside a larger
 * buffer whose border must stay untouched). */
static void test_draw_clipped(void** state)
{
    (void)state;
    enum { PAD = 64 };
    uint8_t* buffer = malloc(W * H * 4 + 2 * PAD);
    assert_non_null(buffer);
    memset(buffer, 7, W * H * 4 + 2 * PAD);
    sample_image image = grey_image(buffer + PAD);
    sample_text_draw(&image, -7, -5, "HELLO WORLD 0123", 3, WHITE);
    sample_text_draw(&image, W - 4, H - 3, "8", 2, WHITE);
    for (int i = 0; i < PAD; i++) {
        assert_int_equal(buffer[i], 7);
        assert_int_equal(buffer[PAD + W * H * 4 + i], 7);
    }
    /* The 8's top bar (.###.) scaled by 2 starts two pixels in, inside the image. */
    assert_true(is_white(&image, W - 2, H - 2) && !is_white(&image, W - 4, H - 2));
    free(buffer);
}

/* The fill blends: alpha 255 paints, alpha 0 keeps, half darkens halfway; clipped too. */
static void test_fill(void** state)
{
    (void)state;
    uint8_t storage[W * H * 4];
    sample_image image = grey_image(storage);
    sample_image_fill(&image, -3, -3, 5, 5, BLACK, 255);
    assert_int_equal(storage[0], 0);
    assert_int_equal(storage[4 * 2], 50);   /* x = 2: outside the 5-wide box from -3 */
    sample_image_fill(&image, 10, 0, 1, 1, WHITE, 128);
    assert_int_equal(storage[4 * 10], (255 * 128 + 50 * 127 + 127) / 255);
    sample_image_fill(&image, 12, 0, 1, 1, WHITE, 0);
    assert_int_equal(storage[4 * 12], 50);
    sample_image_fill(&image, W - 1, H - 1, 100, 100, WHITE, 255);
    assert_true(is_white(&image, W - 1, H - 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_glyph_table),
        cmocka_unit_test(test_draw_known_pixels),
        cmocka_unit_test(test_draw_scaled),
        cmocka_unit_test(test_draw_clipped),
        cmocka_unit_test(test_fill),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
