/*
 * export.c - schedules out: a Gantt chart as SVG (one row per host, a
 * rectangle per task with its id, start and finish as a tooltip) and the
 * trace events the rest of Tenbin writes (Chrome trace JSON, via tb_trace).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "flow/flow_internal.h"

/* Escape &, <, >, " for SVG text and attributes. */
static int put_escaped(tb_buf *b, const char *s)
{
    int rc = TB_OK;
    for (; *s && !rc; s++) {
        switch (*s) {
        case '&': rc = tb_buf_printf(b, "&amp;"); break;
        case '<': rc = tb_buf_printf(b, "&lt;"); break;
        case '>': rc = tb_buf_printf(b, "&gt;"); break;
        case '"': rc = tb_buf_printf(b, "&quot;"); break;
        default: rc = tb_buf_append(b, s, 1); break;
        }
    }
    return rc;
}

/* A "nice" tick step: 1, 2 or 5 times a power of ten, about span/8. */
static double tick_step(double span)
{
    double raw = span / 8, p = pow(10, floor(log10(raw)));
    double m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

int tb_flow_write_gantt(const tb_flow *f, const tb_flow_schedule *s, const char *path)
{
    if (!f || !s || !path || s->ntasks != f->n)
        return TB_ERR_INVALID;
    size_t hosts = s->nhosts ? s->nhosts : 1;
    double t0 = INFINITY, t1 = -INFINITY;
    for (size_t t = 0; t < f->n; t++) {
        t0 = fmin(t0, s->start[t]);
        t1 = fmax(t1, s->finish[t]);
    }
    if (!f->n || !(t1 > t0)) {
        t0 = 0;
        t1 = 1;
    }
    const double left = 70, top = 30, width = 1000, row = hosts > 64 ? 8 : 20;
    double height = row * (double)hosts, sx = width / (t1 - t0);
    tb_buf b = TB_BUF_INIT;
    int rc = tb_buf_printf(
        &b,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
        "font-family=\"sans-serif\" font-size=\"11\">\n"
        "<title>",
        left + width + 20, top + height + 40);
    if (!rc)
        rc = put_escaped(&b, f->name[0] ? f->name : "schedule");
    if (!rc)
        rc = tb_buf_printf(&b, "</title>\n<text x=\"%.0f\" y=\"18\">", left);
    if (!rc)
        rc = put_escaped(&b, f->name[0] ? f->name : "schedule");
    if (!rc)
        rc = tb_buf_printf(&b, ": %zu tasks on %zu hosts, makespan %.6g</text>\n", f->n, hosts,
                           s->makespan);
    for (size_t h = 0; h < hosts && !rc; h++) {
        double y = top + row * (double)h;
        rc = tb_buf_printf(&b,
                           "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" "
                           "fill=\"%s\"/>\n",
                           left, y, width, row, h % 2 ? "#f4f4f4" : "#ffffff");
        if (!rc && (hosts <= 64 || h % 8 == 0))
            rc = tb_buf_printf(&b, "<text x=\"4\" y=\"%.1f\">host %zu</text>\n", y + row * 0.75,
                               h);
    }
    double step = tick_step(t1 - t0);
    for (double x = ceil(t0 / step) * step; x <= t1 + step * 1e-9 && !rc; x += step)
        rc = tb_buf_printf(&b,
                           "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#bbb\"/>"
                           "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
                           left + (x - t0) * sx, top, left + (x - t0) * sx, top + height + 4,
                           left + (x - t0) * sx, top + height + 16, x);
    for (size_t t = 0; t < f->n && !rc; t++) {
        if (s->host[t] < 0)
            continue;
        /* colour: the independent task set, else the task */
        unsigned key = f->its && f->its[t] >= 0 ? 7919u * (unsigned)f->its[t] + 13 : (unsigned)t;
        unsigned hue = (key * 137u) % 360u;
        double x = left + (s->start[t] - t0) * sx, w = (s->finish[t] - s->start[t]) * sx;
        rc = tb_buf_printf(&b,
                           "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                           "fill=\"hsl(%u,60%%,60%%)\" stroke=\"#333\" stroke-width=\"0.3\">"
                           "<title>",
                           x, top + row * (double)s->host[t] + 1, w > 0.2 ? w : 0.2, row - 2, hue);
        if (!rc)
            rc = put_escaped(&b, f->id[t]);
        if (!rc)
            rc = tb_buf_printf(&b, " on host %d: %.6g - %.6g</title></rect>\n", (int)s->host[t],
                               s->start[t], s->finish[t]);
    }
    if (!rc)
        rc = tb_buf_printf(&b, "</svg>\n");
    if (!rc)
        rc = tb_write_file_atomic(path, b.data, b.len);
    tb_buf_free(&b);
    return rc;
}

int tb_flow_trace_schedule(const tb_flow *f, const tb_flow_schedule *s, tb_trace *tr)
{
    if (!f || !s || !tr || s->ntasks != f->n)
        return TB_ERR_INVALID;
    for (size_t t = 0; t < f->n; t++) {
        if (s->host[t] < 0)
            continue;
        int rc = tb_trace_complete(tr, s->host[t], "task", f->id[t], s->start[t], s->finish[t]);
        if (rc)
            return rc;
    }
    return TB_OK;
}
