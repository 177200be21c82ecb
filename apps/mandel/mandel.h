/*
 * mandel.h - the Mandelbrot set, defined so that results can be checked
 * exactly (double precision, C evaluation order, no FMA contraction; the
 * project builds with -ffp-contract=off).
 *
 * dx = (xmax - xmin) / width, dy = (ymax - ymin) / height; pixel (x, y), 0-based,
 * y = 0 at the top: cr = xmin + (x + 0.5) * dx, ci = ymax - (y + 0.5) * dy,
 * zr = zi = 0; for n = 1 .. max_iter: t = zr*zr - zi*zi + cr; zi = 2.0*zr*zi + ci;
 * zr = t; if zr*zr + zi*zi > 4.0 the value is n.  A pixel that never escapes
 * has the value max_iter.
 */
#ifndef TB_APP_MANDEL_H
#define TB_APP_MANDEL_H

#include <stdint.h>

typedef struct tb_mandel {
    int width, height;
    uint32_t max_iter;
    double xmin, xmax, ymin, ymax;
} tb_mandel;

/* Value of one pixel. */
uint32_t tb_mandel_pixel(const tb_mandel *m, int x, int y);
/* Values of row y into out[0..width). */
void tb_mandel_row(const tb_mandel *m, int y, uint32_t *out);
/* Sum of all values (what --checksum prints). */
uint64_t tb_mandel_checksum(const uint32_t *img, size_t n);
/* Write the image as PNG (colour map) or PGM (the values themselves, 8 or 16
 * bits, scaled only when max_iter > 65535), chosen by the file's extension.
 * Written to PATH.tmp and renamed.  Returns a tb_err code; logs the reason. */
int tb_mandel_write(const char *path, const tb_mandel *m, const uint32_t *img);
/* 1 if the path ends in .png or .pgm. */
int tb_mandel_format_ok(const char *path);

#endif
