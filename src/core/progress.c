/*
 * progress.c - throttled progress lines.
 */
#include "tenbin/core.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct tb_progress {
    FILE *stream;     /* NULL: print nothing */
    uint64_t total, done;
    double interval, start, last;
    int finished;
    char what[]; /* copy of the caller's noun, e.g. "tasks" */
};

int tb_progress_format(char *buf, size_t n, const char *what, uint64_t done, uint64_t total,
                       double elapsed)
{
    if (what == NULL)
        what = "tasks";
    if (total == 0)
        return snprintf(buf, n, "progress: %" PRIu64 "/0 %s (100.0%%)", done, what);
    /* Percent is rounded down so 4095/4096 does not already read 100.0%. */
    double pct = floor(1000.0 * (double)done / (double)total) / 10.0;
    double rate = elapsed > 0 ? (double)done / elapsed : 0.0;
    if (rate <= 0)
        return snprintf(buf, n, "progress: %" PRIu64 "/%" PRIu64 " %s (%.1f%%), %.1f %s/s, ETA -",
                        done, total, what, pct, rate, what);
    double left = done < total ? (double)(total - done) : 0.0;
    return snprintf(buf, n,
                    "progress: %" PRIu64 "/%" PRIu64 " %s (%.1f%%), %.1f %s/s, ETA %.1f s", done,
                    total, what, pct, rate, what, left / rate);
}

int tb_progress_create(tb_progress **out, FILE *stream, const char *what, uint64_t total,
                       double interval)
{
    if (out == NULL)
        return TB_ERR_INVALID;
    if (what == NULL)
        what = "tasks";
    size_t len = strlen(what) + 1;
    tb_progress *p = calloc(1, sizeof *p + len);
    if (p == NULL)
        return TB_ERR_NOMEM;
    memcpy(p->what, what, len);
    p->stream = stream;
    p->total = total;
    p->interval = interval;
    p->start = tb_wtime();
    p->last = p->start;
    *out = p;
    return TB_OK;
}

void tb_progress_destroy(tb_progress **p)
{
    if (p == NULL)
        return;
    free(*p);
    *p = NULL;
}

static void print_line(tb_progress *p, double now)
{
    char line[256];
    if (p->stream == NULL)
        return;
    tb_progress_format(line, sizeof line, p->what, p->done, p->total, now - p->start);
    fprintf(p->stream, "%s\n", line);
    fflush(p->stream);
}

void tb_progress_update(tb_progress *p, uint64_t done)
{
    if (p == NULL || p->finished)
        return;
    p->done = done;
    double now = tb_wtime();
    if (now - p->last >= p->interval) {
        p->last = now;
        print_line(p, now);
    }
}

void tb_progress_finish(tb_progress *p)
{
    if (p == NULL || p->finished)
        return;
    p->finished = 1;
    print_line(p, tb_wtime());
}
