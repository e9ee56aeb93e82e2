/* sinew-plot: a line plot as a PNG, for the benchmark scripts. Reads lines "SERIES X Y LABEL"
 * (whitespace-separated; LABEL optional, drawn beside the point) from stdin and draws each
 * series as a coloured polyline through its points in input order, with axes, tick values, a
 * legend and the title.
 *   sinew-plot --out FILE.png [--title T] [--x-label X] [--y-label Y] [--log-y]
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_render.h>

#include "sample_text.h"

enum { WIDTH = 900, HEIGHT = 600, LEFT = 110, RIGHT = 30, TOP = 60, BOTTOM = 80, SCALE = 2,
       MAX_POINTS = 1024, MAX_SERIES = 8 };

typedef struct point {
    int series;
    double x, y;
    char label[16];
} point;

typedef struct plot {
    point p[MAX_POINTS];
    int count;
    char series[MAX_SERIES][64];
    int series_count;
    int log_y;
    double x0, x1, y0, y1; /* the axes' ranges (y in log10 with --log-y) */
} plot;

static const uint8_t k_colours[MAX_SERIES][3] = {
    {200, 40, 40}, {40, 90, 200}, {30, 150, 60}, {180, 120, 0},
    {140, 50, 170}, {0, 150, 160}, {90, 90, 90}, {220, 80, 160}};

static int series_index(plot* pl, const char* name)
{
    for (int i = 0; i < pl->series_count; ++i)
        if (strcmp(pl->series[i], name) == 0) return i;
    if (pl->series_count == MAX_SERIES) return -1;
    snprintf(pl->series[pl->series_count], sizeof pl->series[0], "%s", name);
    return pl->series_count++;
}

static int read_points(plot* pl, FILE* in)
{
    char line[256], name[64], label[64];
    double x, y;
    while (fgets(line, sizeof line, in)) {
        label[0] = '\0';
        int n = sscanf(line, "%63s %lf %lf %63s", name, &x, &y, label);
        if (n < 3) continue;
        if (pl->count == MAX_POINTS || !isfinite(x) || !isfinite(y) || (pl->log_y && y <= 0.0))
            return 0;
        int s = series_index(pl, name);
        if (s < 0) return 0;
        point* p = &pl->p[pl->count++];
        p->series = s;
        p->x = x;
        p->y = pl->log_y ? log10(y) : y;
        snprintf(p->label, sizeof p->label, "%s", n == 4 ? label : "");
    }
    return pl->count > 0;
}

/* x from 0 to a little past the largest; y to whole decades (log) or padded (linear). */
static void ranges(plot* pl)
{
    pl->x0 = 0.0;
    pl->x1 = 0.0;
    pl->y0 = 1e300;
    pl->y1 = -1e300;
    for (int i = 0; i < pl->count; ++i) {
        pl->x1 = fmax(pl->x1, pl->p[i].x);
        pl->y0 = fmin(pl->y0, pl->p[i].y);
        pl->y1 = fmax(pl->y1, pl->p[i].y);
    }
    pl->x1 = pl->x1 > 0.0 ? pl->x1 * 1.1 : 1.0;
    if (pl->log_y) {
        pl->y0 = floor(pl->y0);
        pl->y1 = ceil(pl->y1);
        if (pl->y1 <= pl->y0) pl->y1 = pl->y0 + 1.0;
    } else {
        double pad = pl->y1 > pl->y0 ? 0.05 * (pl->y1 - pl->y0) : 1.0;
        pl->y0 -= pad;
        pl->y1 += pad;
    }
}

static int px(const plot* pl, double x)
{
    return LEFT + (int)lround((x - pl->x0) / (pl->x1 - pl->x0) * (WIDTH - LEFT - RIGHT));
}

static int py(const plot* pl, double y)
{
    return HEIGHT - BOTTOM - (int)lround((y - pl->y0) / (pl->y1 - pl->y0) * (HEIGHT - TOP - BOTTOM));
}

static void dot(sample_image* im, int x, int y, int r, const uint8_t rgb[3])
{
    sample_image_fill(im, x - r, y - r, (uint32_t)(2 * r + 1), (uint32_t)(2 * r + 1), rgb, 255);
}

static void line(sample_image* im, int x0, int y0, int x1, int y1, const uint8_t rgb[3])
{
    int steps = abs(x1 - x0) > abs(y1 - y0) ? abs(x1 - x0) : abs(y1 - y0);
    for (int i = 0; i <= steps; ++i) {
        double t = steps ? (double)i / steps : 0.0;
        dot(im, (int)lround(x0 + t * (x1 - x0)), (int)lround(y0 + t * (y1 - y0)), 1, rgb);
    }
}

static void axes(sample_image* im, const plot* pl, const char* x_label, const char* y_label)
{
    const uint8_t ink[3] = {0, 0, 0}, grid[3] = {225, 225, 225};
    char text[32];
    for (int k = 0; k <= 5; ++k) { /* x ticks */
        double x = pl->x0 + (pl->x1 - pl->x0) * k / 5.0;
        line(im, px(pl, x), TOP, px(pl, x), HEIGHT - BOTTOM, grid);
        snprintf(text, sizeof text, "%.3g", x);
        int tx = px(pl, x) - (int)sample_text_width(text, SCALE) / 2;
        int overflow = tx + (int)sample_text_width(text, SCALE) - (WIDTH - 2); /* keep it in */
        sample_text_draw(im, overflow > 0 ? tx - overflow : tx, HEIGHT - BOTTOM + 10, text,
                         SCALE, ink);
    }
    int ticks = pl->log_y ? (int)(pl->y1 - pl->y0) : 5;
    for (int k = 0; k <= ticks; ++k) { /* y ticks */
        double y = pl->y0 + (pl->y1 - pl->y0) * k / ticks;
        line(im, LEFT, py(pl, y), WIDTH - RIGHT, py(pl, y), grid);
        snprintf(text, sizeof text, pl->log_y ? "1E%.0f" : "%.3g", y);
        sample_text_draw(im, LEFT - 10 - (int)sample_text_width(text, SCALE), py(pl, y) - 7,
                         text, SCALE, ink);
    }
    line(im, LEFT, HEIGHT - BOTTOM, WIDTH - RIGHT, HEIGHT - BOTTOM, ink);
    line(im, LEFT, TOP, LEFT, HEIGHT - BOTTOM, ink);
    sample_text_draw(im, (LEFT + WIDTH - RIGHT - (int)sample_text_width(x_label, SCALE)) / 2,
                     HEIGHT - 35, x_label, SCALE, ink);
    sample_text_draw(im, 10, TOP - 24, y_label, SCALE, ink);
}

static void series(sample_image* im, const plot* pl)
{
    const uint8_t ink[3] = {60, 60, 60};
    for (int s = 0; s < pl->series_count; ++s) {
        int last = -1;
        for (int i = 0; i < pl->count; ++i) {
            const point* p = &pl->p[i];
            if (p->series != s) continue;
            if (last >= 0)
                line(im, px(pl, pl->p[last].x), py(pl, pl->p[last].y), px(pl, p->x), py(pl, p->y),
                     k_colours[s]);
            dot(im, px(pl, p->x), py(pl, p->y), 4, k_colours[s]);
            sample_text_draw(im, px(pl, p->x) + 7, py(pl, p->y) - 20, p->label, SCALE, ink);
            last = i;
        }
        int lx = WIDTH - RIGHT - 150, ly = TOP + 10 + 22 * s; /* the legend */
        sample_image_fill(im, lx, ly, 24, 6, k_colours[s], 255);
        sample_text_draw(im, lx + 32, ly - 4, pl->series[s], SCALE, k_colours[s]);
    }
}

int main(int argc, char** argv)
{
    const char *out = NULL, *title = "", *x_label = "", *y_label = "";
    static plot pl;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--log-y") == 0) pl.log_y = 1;
        else if (i + 1 < argc && strcmp(argv[i], "--out") == 0) out = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--title") == 0) title = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--x-label") == 0) x_label = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--y-label") == 0) y_label = argv[++i];
        else {
            fprintf(stderr, "usage: sinew-plot --out FILE.png [--title T] [--x-label X] "
                            "[--y-label Y] [--log-y] < points\n");
            return 2;
        }
    }
    if (!out) {
        fprintf(stderr, "sinew-plot: --out is required\n");
        return 2;
    }
    if (!read_points(&pl, stdin)) {
        fprintf(stderr, "sinew-plot: no points, too many, or a non-positive y with --log-y\n");
        return 1;
    }
    ranges(&pl);
    sample_image im = {calloc((size_t)WIDTH * HEIGHT, 4u), WIDTH, HEIGHT};
    if (!im.rgba) return 1;
    const uint8_t white[3] = {255, 255, 255}, ink[3] = {0, 0, 0};
    sample_image_fill(&im, 0, 0, WIDTH, HEIGHT, white, 255);
    axes(&im, &pl, x_label, y_label);
    series(&im, &pl);
    sample_text_draw(&im, LEFT, 8, title, SCALE, ink);
    sinew_result r = sinew_png_write(out, WIDTH, HEIGHT, im.rgba, NULL);
    free(im.rgba);
    if (r != SINEW_OK) {
        fprintf(stderr, "sinew-plot: cannot write %s: %s\n", out, sinew_result_string(r));
        return 1;
    }
    return 0;
}
