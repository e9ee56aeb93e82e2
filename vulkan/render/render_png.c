/* PNG files through libpng: 8-bit RGBA out, any PNG in (converted to 8-bit RGBA).
 * SPDX-License-Identifier: MIT */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

#include <sinew/sinew_render.h>

/* Files larger than the renderer can make are still read (contact sheets), up to this. */
#define PNG_MAX_SIDE ((uint32_t)SINEW_RENDER_MAX_SIZE * 8u)

static sinew_result png_fail(const sinew_logger* logger, sinew_result r, const char* fmt, ...)
{
    char line[768];
    va_list args;
    va_start(args, fmt);
    vsnprintf(line, sizeof line, fmt, args);
    va_end(args);
    if (logger && logger->func) logger->func(SINEW_LOG_ERROR, line, logger->user);
    else fprintf(stderr, "sinew: error: %s\n", line);
    return r;
}

/* libpng reports errors by longjmp from this callback; the message is kept for the log. */
typedef struct png_io_state {
    jmp_buf jump;
    char message[256];
} png_io_state;

static void png_on_error(png_structp png, png_const_charp message)
{
    png_io_state* state = png_get_error_ptr(png);
    snprintf(state->message, sizeof state->message, "%s", message ? message : "(libpng)");
    longjmp(state->jump, 1);
}

static void png_on_warning(png_structp png, png_const_charp message)
{
    (void)png;
    (void)message;
}

sinew_result sinew_png_write(const char* path, uint32_t width, uint32_t height,
                             const uint8_t* rgba, const sinew_logger* logger)
{
    if (!path || !rgba)
        return png_fail(logger, SINEW_ERROR_INVALID_ARGUMENT,
                        "sinew_png_write: path and rgba are required (path %s)",
                        path ? path : "NULL");
    if (width == 0 || height == 0)
        return png_fail(logger, SINEW_ERROR_INVALID_ARGUMENT,
                        "sinew_png_write: %s: size %ux%u is empty", path, width, height);
    if (width > PNG_MAX_SIDE || height > PNG_MAX_SIDE)
        return png_fail(logger, SINEW_ERROR_LIMIT, "sinew_png_write: %s: size %ux%u over %u",
                        path, width, height, PNG_MAX_SIDE);
    FILE* file = fopen(path, "wb");
    if (!file)
        return png_fail(logger, SINEW_ERROR_FILE_READ, "sinew_png_write: cannot create %s: %s",
                        path, strerror(errno));
    png_io_state state;
    state.message[0] = '\0';
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &state, png_on_error,
                                              png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(&png, &info);
        fclose(file);
        return png_fail(logger, SINEW_ERROR_OUT_OF_MEMORY, "sinew_png_write: %s: out of memory",
                        path);
    }
    /* Everything libpng touches after setjmp is either not modified or volatile. */
    if (setjmp(state.jump)) {
        png_destroy_write_struct(&png, &info);
        fclose(file);
        return png_fail(logger, SINEW_ERROR_FILE_READ, "sinew_png_write: %s: %s", path,
                        state.message);
    }
    png_init_io(png, file);
    png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB_ALPHA, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    /* Level 3 writes a frame sequence in a fraction of the default level's time, for files
     * a few percent larger. */
    png_set_compression_level(png, 3);
    png_write_info(png, info);
    for (uint32_t y = 0; y < height; y++)
        png_write_row(png, (png_const_bytep)(rgba + (size_t)y * width * 4u));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    if (fclose(file) != 0)
        return png_fail(logger, SINEW_ERROR_FILE_READ, "sinew_png_write: writing %s: %s", path,
                        strerror(errno));
    return SINEW_OK;
}

/* Opens path and checks the PNG signature; the file is left after it. */
static sinew_result open_png(const char* path, const sinew_logger* logger, FILE** out)
{
    FILE* file = fopen(path, "rb");
    if (!file)
        return png_fail(logger, errno == ENOENT ? SINEW_ERROR_FILE_NOT_FOUND
                                                : SINEW_ERROR_FILE_READ,
                        "sinew_png_read: cannot open %s: %s", path, strerror(errno));
    unsigned char signature[8];
    if (fread(signature, 1, 8, file) != 8 || png_sig_cmp(signature, 0, 8) != 0) {
        fclose(file);
        return png_fail(logger, SINEW_ERROR_FILE_FORMAT, "sinew_png_read: %s is not a PNG file",
                        path);
    }
    *out = file;
    return SINEW_OK;
}

/* libpng's transformations that make whatever the file holds 8-bit RGBA (called inside the
 * reader's setjmp). */
static void convert_to_rgba8(png_structp png, png_infop info)
{
    int color_type = png_get_color_type(png, info);
    int depth = png_get_bit_depth(png, info);
    if (depth == 16) png_set_strip_16(png);
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    if (color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA)
        png_set_gray_to_rgb(png);
    if (!(color_type & PNG_COLOR_MASK_ALPHA)) png_set_filler(png, 0xFF, PNG_FILLER_AFTER);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
}

sinew_result sinew_png_read(const char* path, uint32_t* out_width, uint32_t* out_height,
                            uint8_t** out_rgba, const sinew_logger* logger)
{
    if (out_rgba) *out_rgba = NULL;
    if (out_width) *out_width = 0;
    if (out_height) *out_height = 0;
    if (!path || !out_width || !out_height || !out_rgba)
        return png_fail(logger, SINEW_ERROR_INVALID_ARGUMENT,
                        "sinew_png_read: path and the three outputs are required (path %s)",
                        path ? path : "NULL");
    FILE* file = NULL;
    sinew_result opened = open_png(path, logger, &file);
    if (opened != SINEW_OK) return opened;
    png_io_state state;
    state.message[0] = '\0';
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &state, png_on_error,
                                             png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_read_struct(&png, &info, NULL);
        fclose(file);
        return png_fail(logger, SINEW_ERROR_OUT_OF_MEMORY, "sinew_png_read: %s: out of memory",
                        path);
    }
    uint8_t* volatile pixels = NULL;
    png_bytep* volatile rows = NULL;
    if (setjmp(state.jump)) {
        free(pixels);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        fclose(file);
        return png_fail(logger, SINEW_ERROR_FILE_FORMAT, "sinew_png_read: %s is corrupt: %s",
                        path, state.message);
    }
    png_init_io(png, file);
    png_set_sig_bytes(png, 8);
    png_read_info(png, info);
    uint32_t width = png_get_image_width(png, info);
    uint32_t height = png_get_image_height(png, info);
    if (width > PNG_MAX_SIDE || height > PNG_MAX_SIDE) {
        png_destroy_read_struct(&png, &info, NULL);
        fclose(file);
        return png_fail(logger, SINEW_ERROR_LIMIT, "sinew_png_read: %s: size %ux%u over %u",
                        path, width, height, PNG_MAX_SIDE);
    }
    convert_to_rgba8(png, info);
    if (png_get_rowbytes(png, info) != (size_t)width * 4u) {
        png_destroy_read_struct(&png, &info, NULL);
        fclose(file);
        return png_fail(logger, SINEW_ERROR_FILE_FORMAT,
                        "sinew_png_read: %s: unexpected row size after conversion", path);
    }
    pixels = malloc((size_t)width * height * 4u);
    rows = malloc(sizeof(png_bytep) * height);
    if (!pixels || !rows) {
        free(pixels);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        fclose(file);
        return png_fail(logger, SINEW_ERROR_OUT_OF_MEMORY,
                        "sinew_png_read: %s: out of memory for %ux%u", path, width, height);
    }
    for (uint32_t y = 0; y < height; y++) rows[y] = pixels + (size_t)y * width * 4u;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    fclose(file);
    *out_width = width;
    *out_height = height;
    *out_rgba = pixels;
    return SINEW_OK;
}
