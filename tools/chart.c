/*
 * chart.c - SVG line charts for the commands that plot (flow experiment,
 * emu sweep): one x axis, a line per series, optional log axes, a legend.
 */
#include <math.h>

#include "cli.h"
#include "tenbin/core.h"

static double axis(double v, int logscale) { return logscale ? log10(v) : v; }

int tb_cli_line_chart(const char *path, const char *title, const char *xlabel,
                      const char *ylabel, const double *x, size_t nx, const tb_cli_series *s, size_t ns,
                      int logx, int logy)
{
    static const char *const colour[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"};
    const double L = 70, T = 40, W = 520, H = 300;
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (size_t i = 0; i < nx; i++) {
        x0 = fmin(x0, axis(x[i], logx));
        x1 = fmax(x1, axis(x[i], logx));
        for (size_t k = 0; k < ns; k++)
            if (isfinite(s[k].y[i]) && (!logy || s[k].y[i] > 0)) {
                y0 = fmin(y0, axis(s[k].y[i], logy));
                y1 = fmax(y1, axis(s[k].y[i], logy));
            }
    }
    if (!(y1 > y0)) {
        y0 = isfinite(y0) ? y0 - 1 : 0;
        y1 = y0 + 2;
    }
    if (logy) {
        y0 = floor(y0);
        y1 = ceil(y1);
    } else {
        double pad = (y1 - y0) * 0.1;
        /* non-negative data (times, counts) keeps its axis at or above 0 */
        y0 = y0 >= 0 && y0 - pad < 0 ? 0 : y0 - pad;
        y1 += pad;
    }
    if (!(x1 > x0))
        x1 = x0 + 1;
#define PX(v) (L + (axis(v, logx) - x0) / (x1 - x0) * W)
#define PY(v) (T + H - (axis(v, logy) - y0) / (y1 - y0) * H)
    tb_buf b = TB_BUF_INIT;
    int rc = tb_buf_printf(&b,
                           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
                           "height=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
                           "<title>%s</title><rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                           "<text x=\"%.0f\" y=\"22\" font-size=\"14\">%s</text>\n"
                           "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
                           "stroke=\"#333\"/>\n",
                           L + W + 170, T + H + 50, title, L, title, L, T, W, H);
    /* y ticks */
    int ny = logy ? (int)(y1 - y0) : 5;
    for (int i = 0; i <= ny && !rc; i++) {
        double v = logy ? pow(10, y0 + i) : y0 + (y1 - y0) * i / ny;
        rc = tb_buf_printf(&b,
                           "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                           "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>\n",
                           L, L + W, PY(v), PY(v), L - 6, PY(v) + 4, v);
    }
    for (size_t i = 0; i < nx && !rc; i++)
        rc = tb_buf_printf(&b, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%g</text>\n",
                           PX(x[i]), T + H + 18, x[i]);
    if (!rc)
        rc = tb_buf_printf(&b,
                           "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n"
                           "<text x=\"16\" y=\"%.0f\" transform=\"rotate(-90 16 %.0f)\" "
                           "text-anchor=\"middle\">%s</text>\n",
                           L + W / 2, T + H + 40, xlabel, T + H / 2, T + H / 2, ylabel);
    for (size_t k = 0; k < ns && !rc; k++) {
        const char *c = colour[k % 5];
        rc = tb_buf_printf(&b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
                           c);
        for (size_t i = 0; i < nx && !rc; i++)
            if (isfinite(s[k].y[i]) && (!logy || s[k].y[i] > 0))
                rc = tb_buf_printf(&b, "%.1f,%.1f ", PX(x[i]), PY(s[k].y[i]));
        if (!rc)
            rc = tb_buf_printf(&b, "\"/>\n");
        for (size_t i = 0; i < nx && !rc; i++)
            if (isfinite(s[k].y[i]) && (!logy || s[k].y[i] > 0))
                rc = tb_buf_printf(&b,
                                   "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\">"
                                   "<title>%s: %.6g</title></circle>\n",
                                   PX(x[i]), PY(s[k].y[i]), c, s[k].name, s[k].y[i]);
        if (!rc)
            rc = tb_buf_printf(&b,
                               "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\" "
                               "stroke=\"%s\" stroke-width=\"2\"/><text x=\"%.0f\" "
                               "y=\"%.0f\">%s</text>\n",
                               L + W + 12, L + W + 36, T + 14 + 18.0 * (double)k,
                               T + 14 + 18.0 * (double)k, c, L + W + 42,
                               T + 18 + 18.0 * (double)k, s[k].name);
    }
#undef PX
#undef PY
    if (!rc)
        rc = tb_buf_printf(&b, "</svg>\n");
    if (!rc)
        rc = tb_write_file_atomic(path, b.data, b.len);
    tb_buf_free(&b);
    return rc;
}

