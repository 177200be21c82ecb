/*
 * mandel.c - the Mandelbrot kernel (no dependencies beyond libc).
 */
#define _POSIX_C_SOURCE 200809L
#include "tenbin/core.h"


#include "mandel.h"

uint32_t tb_mandel_pixel(const tb_mandel *m, int x, int y)
{
    double dx = (m->xmax - m->xmin) / m->width;
    double dy = (m->ymax - m->ymin) / m->height;
    double cr = m->xmin + (x + 0.5) * dx;
    double ci = m->ymax - (y + 0.5) * dy;
    double zr = 0.0, zi = 0.0;
    for (uint32_t n = 1; n <= m->max_iter; n++) {
        double t = zr * zr - zi * zi + cr;
        zi = 2.0 * zr * zi + ci;
        zr = t;
        if (zr * zr + zi * zi > 4.0)
            return n;
    }
    return m->max_iter;
}

void tb_mandel_row(const tb_mandel *m, int y, uint32_t *out)
{
    for (int x = 0; x < m->width; x++)
        out[x] = tb_mandel_pixel(m, x, y);
}

uint64_t tb_mandel_checksum(const uint32_t *img, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += img[i];
    return s;
}

