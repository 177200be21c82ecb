/*
 * image.c - writing a Mandelbrot image as PNG (libpng) or PGM.
 */
#define _POSIX_C_SOURCE 200809L
#include "tenbin/core.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "mandel.h"

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

int tb_mandel_format_ok(const char *path) { return ends_with(path, ".png") || ends_with(path, ".pgm"); }

/* A smooth colour map; points in the set are black. */
static void colour(uint32_t v, uint32_t max_iter, unsigned char rgb[3])
{
    if (v >= max_iter || max_iter <= 1) {
        rgb[0] = rgb[1] = rgb[2] = 0;
        return;
    }
    double t = log((double)v) / log((double)max_iter);
    double u = 1.0 - t;
    rgb[0] = (unsigned char)(255.0 * fmin(1.0, 9.0 * u * t * t * t));
    rgb[1] = (unsigned char)(255.0 * fmin(1.0, 15.0 * u * u * t * t));
    rgb[2] = (unsigned char)(255.0 * fmin(1.0, 8.5 * u * u * u * t));
}

/* libpng's default handlers print to stderr; ours keep the message for the
 * one error line the caller prints. */
static void png_error_quiet(png_structp png, png_const_charp msg)
{
    char *keep = png_get_error_ptr(png);
    snprintf(keep, 128, "%s", msg);
    png_longjmp(png, 1);
}

static void png_warning_quiet(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static int write_png(FILE *f, const tb_mandel *m, const uint32_t *img, char *why)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, why, png_error_quiet,
                                              png_warning_quiet);
    if (!png)
        return TB_ERR_NOMEM;
    png_infop info = png_create_info_struct(png);
    unsigned char *row = malloc((size_t)m->width * 3);
    if (!info || !row || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(row);
        return TB_ERR_IO;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)m->width, (png_uint_32)m->height, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < m->height; y++) {
        for (int x = 0; x < m->width; x++)
            colour(img[(size_t)y * m->width + x], m->max_iter, row + 3 * x);
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);
    return TB_OK;
}

static int write_pgm(FILE *f, const tb_mandel *m, const uint32_t *img)
{
    uint32_t maxval = m->max_iter > 65535 ? 65535 : (m->max_iter < 1 ? 1 : m->max_iter);
    int wide = maxval > 255;
    fprintf(f, "P5\n%d %d\n%u\n", m->width, m->height, maxval);
    size_t bpp = wide ? 2 : 1;
    unsigned char *row = malloc((size_t)m->width * bpp);
    if (!row)
        return TB_ERR_NOMEM;
    for (int y = 0; y < m->height; y++) {
        for (int x = 0; x < m->width; x++) {
            uint64_t v = img[(size_t)y * m->width + x];
            if (m->max_iter > 65535)
                v = v * 65535 / m->max_iter;
            if (wide) {
                row[2 * x] = (unsigned char)(v >> 8); /* PGM is big-endian */
                row[2 * x + 1] = (unsigned char)v;
            } else {
                row[x] = (unsigned char)v;
            }
        }
        if (fwrite(row, bpp, (size_t)m->width, f) != (size_t)m->width) {
            free(row);
            return TB_ERR_IO;
        }
    }
    free(row);
    return TB_OK;
}

int tb_mandel_write(const char *path, const tb_mandel *m, const uint32_t *img)
{
    size_t n = strlen(path) + 5;
    char *tmp = malloc(n);
    if (!tmp)
        return TB_ERR_NOMEM;
    snprintf(tmp, n, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        TB_LOG_ERR("cannot write %s: %s", path, strerror(errno));
        free(tmp);
        return TB_ERR_IO;
    }
    char why[128] = "";
    errno = 0;
    int rc = ends_with(path, ".png") ? write_png(f, m, img, why) : write_pgm(f, m, img);
    int err = errno;
    if (fclose(f) != 0 && rc == TB_OK) {
        rc = TB_ERR_IO;
        err = errno;
    }
    if (rc == TB_OK && rename(tmp, path) != 0) {
        rc = TB_ERR_IO;
        err = errno;
    }
    if (rc != TB_OK) {
        TB_LOG_ERR("cannot write %s: %s", path,
                   why[0] ? why : (err ? strerror(err) : tb_strerror(rc)));
        remove(tmp);
    }
    free(tmp);
    return rc;
}
