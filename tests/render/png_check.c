/* png_check FILE WIDTH HEIGHT: exits 0 when FILE is a readable PNG of that size (0 0: any
 * size), 1 otherwise, printing what it found. The demo test checks its outputs with it.
 * SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>

#include <sinew/sinew_render.h>

int main(int argc, char** argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: png_check FILE WIDTH HEIGHT\n");
        return 2;
    }
    unsigned long want_w = strtoul(argv[2], NULL, 10), want_h = strtoul(argv[3], NULL, 10);
    uint32_t w = 0, h = 0;
    uint8_t* rgba = NULL;
    sinew_result r = sinew_png_read(argv[1], &w, &h, &rgba, NULL);
    if (r != SINEW_OK) {
        fprintf(stderr, "png_check: %s: %s\n", argv[1], sinew_result_string(r));
        return 1;
    }
    /* An image of one flat colour means nothing was drawn. */
    int varied = 0;
    for (size_t p = 1; p < (size_t)w * h && !varied; p++)
        for (int c = 0; c < 3; c++) varied |= rgba[4 * p + c] != rgba[c];
    free(rgba);
    printf("%s: %ux%u PNG%s\n", argv[1], w, h, varied ? "" : ", ONE FLAT COLOUR");
    if ((want_w && w != want_w) || (want_h && h != want_h)) {
        fprintf(stderr, "png_check: %s is %ux%u, expected %lux%lu\n", argv[1], w, h, want_w,
                want_h);
        return 1;
    }
    return varied && w > 0 && h > 0 ? 0 : 1;
}
