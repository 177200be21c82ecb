/*
 * read_text.c - the text workflow format, for tests and hand-written
 * examples:
 *
 *     # comment (anywhere after '#')
 *     hosts Q                  # optional; then every task has Q costs
 *     task ID C1 C2 ... CQ     # execution time of task ID on each host
 *     edge FROM TO COST        # transfer time between different hosts
 *
 * Without a `hosts` line a task has one number, its work (seconds at speed
 * 1), and an edge's number is its data in bytes: the workflow is then
 * scheduled on a platform.  Edges may name tasks defined later.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/flow_internal.h"

typedef struct text_edge {
    char *from, *to;
    double cost;
    size_t line;
} text_edge;

typedef struct text_reader {
    const char *name;
    char *err;
    size_t errlen;
    tb_flow *f;
    int have_hosts;
    size_t q;
    double *costs;
    text_edge *edges;
    size_t nedges, capedges;
} text_reader;

#define MAX_FIELDS 4096

static int fail(text_reader *r, int code, size_t line, const char *fmt, const char *a,
                const char *b)
{
    char msg[384];
    snprintf(msg, sizeof msg, fmt, a ? a : "", b ? b : "");
    if (r->err && r->errlen)
        snprintf(r->err, r->errlen, "%s:%zu: %s", r->name, line, msg);
    return code;
}

static int number(text_reader *r, const char *tok, size_t line, const char *what, double *out)
{
    if (tb_parse_double(tok, out) != TB_OK)
        return fail(r, TB_ERR_PARSE, line, "%s: malformed number '%s'", what, tok);
    if (*out < 0)
        return fail(r, TB_ERR_RANGE, line, "%s: negative value '%s'", what, tok);
    return TB_OK;
}

static int do_hosts(text_reader *r, char **tok, size_t ntok, size_t line)
{
    long q;
    if (ntok != 2 || tb_parse_long(tok[1], 1, 1 << 20, &q) != TB_OK)
        return fail(r, TB_ERR_PARSE, line, "hosts: expected one positive count%s%s", "", "");
    if (r->f)
        return fail(r, TB_ERR_PARSE, line, "hosts: must come before the first task%s%s", "", "");
    r->have_hosts = 1;
    r->q = (size_t)q;
    return TB_OK;
}

static int do_task(text_reader *r, char **tok, size_t ntok, size_t line)
{
    int rc;
    if (!r->f) {
        if ((rc = tb_flow_create(&r->f, r->have_hosts ? r->q : 0)))
            return rc;
        tb_flow_set_name(r->f, r->name);
        if (r->have_hosts && !(r->costs = malloc(r->q * sizeof *r->costs)))
            return TB_ERR_NOMEM;
    }
    size_t want = r->have_hosts ? r->q : 1;
    if (ntok < 2)
        return fail(r, TB_ERR_PARSE, line, "task: missing id%s%s", "", "");
    if (ntok - 2 != want) {
        char n[64];
        snprintf(n, sizeof n, "%zu numbers, got %zu", want, ntok - 2);
        return fail(r, TB_ERR_PARSE, line, "task '%s': expected %s", tok[1], n);
    }
    double work = 0;
    for (size_t i = 0; i < want; i++) {
        double v;
        if ((rc = number(r, tok[2 + i], line, "task", &v)))
            return rc;
        if (r->have_hosts)
            r->costs[i] = v;
        else
            work = v;
    }
    size_t t;
    if (tb_flow_find(r->f, tok[1], NULL) == TB_OK)
        return fail(r, TB_ERR_INVALID, line, "task: duplicate id '%s'%s", tok[1], "");
    if ((rc = tb_flow_add_task(r->f, tok[1], work, &t)))
        return fail(r, rc, line, "%s%s", tb_flow_error(r->f), "");
    if (r->have_hosts && (rc = tb_flow_set_costs(r->f, t, r->costs)))
        return rc;
    return TB_OK;
}

static int do_edge(text_reader *r, char **tok, size_t ntok, size_t line)
{
    if (ntok != 4)
        return fail(r, TB_ERR_PARSE, line, "edge: expected FROM TO COST%s%s", "", "");
    double cost;
    int rc = number(r, tok[3], line, "edge", &cost);
    if (rc)
        return rc;
    if (tb_grow((void **)&r->edges, &r->capedges, r->nedges + 1, sizeof *r->edges, 64))
        return TB_ERR_NOMEM;
    text_edge *e = &r->edges[r->nedges];
    e->from = strdup(tok[1]);
    e->to = strdup(tok[2]);
    e->cost = cost;
    e->line = line;
    r->nedges++;
    if (!e->from || !e->to)
        return TB_ERR_NOMEM;
    return TB_OK;
}

static int do_line(text_reader *r, char *s, size_t line)
{
    char *hash = strchr(s, '#');
    if (hash)
        *hash = '\0';
    static const char *const sep = " \t\r\f\v";
    char *tok[MAX_FIELDS], *save = NULL;
    size_t ntok = 0;
    for (char *w = strtok_r(s, sep, &save); w; w = strtok_r(NULL, sep, &save)) {
        if (ntok == MAX_FIELDS)
            return fail(r, TB_ERR_PARSE, line, "more than 4096 fields%s%s", "", "");
        tok[ntok++] = w;
    }
    if (!ntok)
        return TB_OK;
    if (strcmp(tok[0], "hosts") == 0)
        return do_hosts(r, tok, ntok, line);
    if (strcmp(tok[0], "task") == 0)
        return do_task(r, tok, ntok, line);
    if (strcmp(tok[0], "edge") == 0)
        return do_edge(r, tok, ntok, line);
    return fail(r, TB_ERR_PARSE, line, "unknown keyword '%s' (expected hosts, task or edge)%s",
                tok[0], "");
}

static int resolve_edges(text_reader *r)
{
    for (size_t i = 0; i < r->nedges; i++) {
        text_edge *e = &r->edges[i];
        size_t a, b;
        if (tb_flow_find(r->f, e->from, &a) != TB_OK)
            return fail(r, TB_ERR_INVALID, e->line, "edge: unknown task '%s'%s", e->from, "");
        if (tb_flow_find(r->f, e->to, &b) != TB_OK)
            return fail(r, TB_ERR_INVALID, e->line, "edge: unknown task '%s'%s", e->to, "");
        int rc = tb_flow_add_edge(r->f, a, b, e->cost);
        if (rc)
            return fail(r, rc, e->line, "edge '%s' -> '%s': a task cannot depend on itself",
                        e->from, e->to);
    }
    return TB_OK;
}

int tb__flow_read_text(const char *data, size_t len, const char *name, tb_flow **out, char *err,
                       size_t errlen)
{
    text_reader r = {.name = name, .err = err, .errlen = errlen};
    *out = NULL;
    int rc = TB_OK;
    size_t line = 0;
    char *buf = NULL;
    size_t cap = 0;
    for (size_t pos = 0; pos < len && !rc;) {
        const char *nl = memchr(data + pos, '\n', len - pos);
        size_t l = nl ? (size_t)(nl - (data + pos)) : len - pos;
        line++;
        if (l + 1 > cap) {
            cap = l + 1 > 256 ? l + 1 : 256;
            char *nb = realloc(buf, cap);
            if (!nb) {
                rc = TB_ERR_NOMEM;
                break;
            }
            buf = nb;
        }
        memcpy(buf, data + pos, l);
        buf[l] = '\0';
        if (memchr(buf, '\0', l))
            rc = fail(&r, TB_ERR_PARSE, line, "NUL byte in text%s%s", "", "");
        else
            rc = do_line(&r, buf, line);
        pos += l + 1;
    }
    if (!rc && !r.f)
        rc = fail(&r, TB_ERR_PARSE, line ? line : 1, "no tasks%s%s", "", "");
    if (!rc)
        rc = resolve_edges(&r);
    if (!rc && (rc = tb_flow_finalize(r.f)) && err && errlen)
        snprintf(err, errlen, "%s", tb_flow_error(r.f));
    if (rc == TB_ERR_NOMEM && err && errlen)
        snprintf(err, errlen, "%s: out of memory", name);
    for (size_t i = 0; i < r.nedges; i++) {
        free(r.edges[i].from);
        free(r.edges[i].to);
    }
    free(r.edges);
    free(r.costs);
    free(buf);
    if (rc)
        tb_flow_destroy(&r.f);
    *out = r.f;
    return rc;
}

int tb__flow_write_text(const tb_flow *f, tb_buf *out, char *err, size_t errlen)
{
    if (!f->q) {
        if (err && errlen)
            snprintf(err, errlen, "%s: the text format needs per-host execution times", f->name);
        return TB_ERR_INVALID;
    }
    int rc = tb_buf_printf(out, "# %s: %zu tasks, %zu edges\nhosts %zu\n", f->name, f->n, f->m,
                           f->q);
    for (size_t t = 0; t < f->n && !rc; t++) {
        rc = tb_buf_printf(out, "task %s", f->id[t]);
        for (size_t h = 0; h < f->q && !rc; h++)
            rc = tb_buf_printf(out, " %.17g", f->cost[t * f->q + h]);
        if (!rc)
            rc = tb_buf_printf(out, "\n");
    }
    for (size_t t = 0; t < f->n && !rc; t++)
        for (size_t e = f->soff[t]; e < f->soff[t + 1] && !rc; e++)
            rc = tb_buf_printf(out, "edge %s %s %.17g\n", f->id[t], f->id[f->succ[e]],
                               f->sdata[e]);
    return rc;
}
