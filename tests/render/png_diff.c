/* png_diff A B MAX: compares two PNGs of the same size channel by channel (RGB, 0..1) and
 * prints their mean absolute difference, the largest single difference and how many pixels
 * differ at all. Exits 0 when the sizes match, neither image is one flat colour and the mean
 * is at most MAX; 1 otherwise; 2 on a bad command line. The demo test compares the images of
 * its two drawing paths with it. SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>

#include <sinew/sinew_render.h>

/* An image of one flat colour means nothing was drawn: two such images would match without
 * showing anything. */
static int flat(const uint8_t* rgba, size_t pixels)
{
    for (size_t p = 1; p < pixels; p++)
        for (int c = 0; c < 3; c++)
            if (rgba[4 * p + c] != rgba[c]) return 0;
    return 1;
}

int main(int argc, char** argv)
{
    char* end = NULL;
    double max_mean = argc == 4 ? strtod(argv[3], &end) : -1.0;
    if (argc != 4 || !end || *end || !(max_mean >= 0.0)) {
        fprintf(stderr, "usage: png_diff A B MAX_MEAN_ABS_DIFF\n");
        return 2;
    }
    uint32_t w[2] = {0, 0}, h[2] = {0, 0};
    uint8_t* img[2] = {NULL, NULL};
    int status = 1;
    for (int i = 0; i < 2; i++) {
        sinew_result r = sinew_png_read(argv[1 + i], &w[i], &h[i], &img[i], NULL);
        if (r != SINEW_OK) {
            fprintf(stderr, "png_diff: %s: %s\n", argv[1 + i], sinew_result_string(r));
            goto done;
        }
    }
    if (w[0] != w[1] || h[0] != h[1]) {
        fprintf(stderr, "png_diff: %s is %ux%u, %s is %ux%u\n", argv[1], w[0], h[0], argv[2],
                w[1], h[1]);
        goto done;
    }
    const size_t pixels = (size_t)w[0] * h[0];
    if (flat(img[0], pixels) || flat(img[1], pixels)) {
        fprintf(stderr, "png_diff: %s or %s is one flat colour\n", argv[1], argv[2]);
        goto done;
    }
    double sum = 0.0;
    int largest = 0;
    size_t differing = 0;
    for (size_t p = 0; p < pixels; p++) {
        int any = 0;
        for (int c = 0; c < 3; c++) {
            int d = abs((int)img[0][4 * p + c] - (int)img[1][4 * p + c]);
            sum += d;
            if (d > largest) largest = d;
            any |= d != 0;
        }
        differing += (size_t)any;
    }
    const double mean = sum / (255.0 * 3.0 * (double)pixels);
    printf("png_diff: %s vs %s: mean abs diff %.6f (limit %g), largest %d/255, %zu of %zu "
           "pixels differ\n", argv[1], argv[2], mean, max_mean, largest, differing, pixels);
    status = mean <= max_mean ? 0 : 1;
done:
    free(img[0]);
    free(img[1]);
    return status;
}
