/*
 * work_dist.c - the task times of `tenbin sim mw --work-dist` (work_dist.h).
 */
#include "work_dist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenbin/core.h"

const char *const tb_work_kind_name[4] = {"const", "exp", "uniform", "trace"};

#define TRACE_MAX_BYTES ((size_t)1 << 30)

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

int tb_work_dist_read_trace(const char *text, size_t len, const char *name, tb_work_dist *d,
                            char *err, size_t errlen)
{
    double *times = NULL;
    size_t n = 0, cap = 0;
    long lineno = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        lineno++;
        while (p < eol && is_blank(*p))
            p++;
        if (p < eol && *p != '#') {
            /* strtod stops at eol at the latest: a number holds no newline,
             * and text[len] is 0.  An embedded 0 byte ends it early, and
             * what follows is then not blank. */
            char *stop;
            double v = strtod(p, &stop);
            const char *q = stop;
            while (q < eol && is_blank(*q))
                q++;
            if (stop == p || q != eol || !(v >= 0) || !isfinite(v)) {
                snprintf(err, errlen, "%s:%ld: expected seconds >= 0", name, lineno);
                free(times);
                return TB_ERR_PARSE;
            }
            if (tb_grow(&times, &cap, n, sizeof *times, 256) != TB_OK) {
                snprintf(err, errlen, "%s: out of memory at line %ld", name, lineno);
                free(times);
                return TB_ERR_NOMEM;
            }
            times[n++] = v;
        }
        p = nl ? nl + 1 : end;
    }
    if (n == 0) {
        snprintf(err, errlen, "%s: no task times", name);
        free(times);
        return TB_ERR_PARSE;
    }
    d->kind = TB_WORK_TRACE;
    d->times = times;
    d->ntimes = n;
    return TB_OK;
}

int tb_work_dist_parse(const char *spec, tb_work_dist *d, char *err, size_t errlen)
{
    if (!spec || strcmp(spec, "const") == 0) {
        d->kind = TB_WORK_CONST;
        return TB_OK;
    }
    if (strcmp(spec, "exp") == 0) {
        d->kind = TB_WORK_EXP;
        return TB_OK;
    }
    if (strncmp(spec, "uniform:", 8) == 0) {
        char *end;
        double a = strtod(spec + 8, &end), b;
        if (end != spec + 8 && *end == '-') {
            const char *s = end + 1;
            b = strtod(s, &end);
            if (end != s && *end == '\0' && a >= 0 && b >= a && isfinite(b)) {
                d->kind = TB_WORK_UNIFORM;
                d->a = a;
                d->b = b;
                return TB_OK;
            }
        }
        snprintf(err, errlen, "expected uniform:A-B with 0 <= A <= B, got '%s'", spec);
        return TB_ERR_PARSE;
    }
    if (strncmp(spec, "trace:", 6) == 0) {
        char *text = NULL;
        size_t len = 0;
        int rc = tb_read_file(spec + 6, TRACE_MAX_BYTES, &text, &len, err, errlen);
        if (rc == TB_OK)
            rc = tb_work_dist_read_trace(text, len, spec + 6, d, err, errlen);
        free(text);
        return rc;
    }
    snprintf(err, errlen, "expected const, exp, uniform:A-B or trace:FILE, got '%s'", spec);
    return TB_ERR_PARSE;
}

double tb_work_dist_time(const tb_work_dist *d, uint64_t id)
{
    if (d->kind == TB_WORK_CONST)
        return d->mean;
    if (d->kind == TB_WORK_TRACE)
        return d->times[id % d->ntimes];
    /* A stream per task: the same time whichever rank runs it, in any order. */
    tb_rng r;
    tb_rng_seed_stream(&r, d->seed, id + 1);
    return d->kind == TB_WORK_EXP ? tb_rng_exp(&r, d->mean)
                                  : d->mean * tb_rng_uniform(&r, d->a, d->b);
}

void tb_work_dist_free(tb_work_dist *d)
{
    free(d->times);
    d->times = NULL;
    d->ntimes = 0;
}
