/*
 * trace.c - in-memory Chrome trace events and their JSON form.
 *
 * Events are small fixed-size records in a growable array; names are stored
 * as pointers (the caller guarantees they outlive the trace), so recording an
 * event is a bounds check and a struct copy.
 */
#include "tenbin/core.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum ev_type { EV_COMPLETE, EV_COUNTER, EV_INSTANT, EV_FLOW_BEGIN, EV_FLOW_END } ev_type;

typedef struct ev {
    unsigned char type; /* ev_type */
    unsigned char has_arg;
    int tid;
    const char *name;
    const char *cat;
    const char *aux; /* argument name (complete) or series (counter) */
    double ts, dur;  /* seconds: ts absolute, dur >= 0 */
    double value;    /* counter value */
    uint64_t id;     /* flow id */
    int64_t arg;     /* complete-event argument */
} ev;

struct tb_trace {
    int pid;
    double origin;
    char *process_name; /* owned; NULL if unset */
    ev *evs;
    size_t n, cap;
};

int tb_trace_create(tb_trace **out, int pid, double origin)
{
    if (out == NULL)
        return TB_ERR_INVALID;
    tb_trace *tr = calloc(1, sizeof *tr);
    if (tr == NULL)
        return TB_ERR_NOMEM;
    tr->pid = pid;
    tr->origin = origin;
    *out = tr;
    return TB_OK;
}

void tb_trace_destroy(tb_trace **tr)
{
    if (tr == NULL || *tr == NULL)
        return;
    free((*tr)->process_name);
    free((*tr)->evs);
    free(*tr);
    *tr = NULL;
}

int tb_trace_set_process_name(tb_trace *tr, const char *name)
{
    if (tr == NULL || name == NULL)
        return TB_ERR_INVALID;
    size_t n = strlen(name) + 1;
    char *copy = malloc(n);
    if (copy == NULL)
        return TB_ERR_NOMEM;
    memcpy(copy, name, n);
    free(tr->process_name);
    tr->process_name = copy;
    return TB_OK;
}

static int push(tb_trace *tr, const ev *e)
{
    if (tr == NULL || e->name == NULL)
        return TB_ERR_INVALID;
    if (tr->n == tr->cap) {
        size_t cap = tr->cap ? tr->cap * 2 : 256;
        if (cap > SIZE_MAX / sizeof *tr->evs)
            return TB_ERR_NOMEM;
        ev *p = realloc(tr->evs, cap * sizeof *p);
        if (p == NULL)
            return TB_ERR_NOMEM;
        tr->evs = p;
        tr->cap = cap;
    }
    tr->evs[tr->n++] = *e;
    return TB_OK;
}

/* A reversed interval (clock noise, misuse) is recorded as zero length rather
 * than dropped, so the event still shows up. */
int tb_trace_complete(tb_trace *tr, int tid, const char *cat, const char *name, double t0,
                      double t1)
{
    ev e = {.type = EV_COMPLETE, .tid = tid, .name = name, .cat = cat, .ts = t0,
            .dur = t1 > t0 ? t1 - t0 : 0.0};
    return push(tr, &e);
}

int tb_trace_complete_arg(tb_trace *tr, int tid, const char *cat, const char *name, double t0,
                          double t1, const char *arg_name, int64_t arg)
{
    if (arg_name == NULL)
        return TB_ERR_INVALID;
    ev e = {.type = EV_COMPLETE, .has_arg = 1, .tid = tid, .name = name, .cat = cat,
            .aux = arg_name, .ts = t0, .dur = t1 > t0 ? t1 - t0 : 0.0, .arg = arg};
    return push(tr, &e);
}

/* JSON has no NaN or infinity, so such values are refused here. */
int tb_trace_counter(tb_trace *tr, const char *name, const char *series, double t, double value)
{
    if (series == NULL || !isfinite(value))
        return TB_ERR_INVALID;
    ev e = {.type = EV_COUNTER, .name = name, .aux = series, .ts = t, .value = value};
    return push(tr, &e);
}

int tb_trace_instant(tb_trace *tr, int tid, const char *name, double t)
{
    ev e = {.type = EV_INSTANT, .tid = tid, .name = name, .ts = t};
    return push(tr, &e);
}

int tb_trace_flow_begin(tb_trace *tr, int tid, const char *name, uint64_t id, double t)
{
    ev e = {.type = EV_FLOW_BEGIN, .tid = tid, .name = name, .ts = t, .id = id};
    return push(tr, &e);
}

int tb_trace_flow_end(tb_trace *tr, int tid, const char *name, uint64_t id, double t)
{
    ev e = {.type = EV_FLOW_END, .tid = tid, .name = name, .ts = t, .id = id};
    return push(tr, &e);
}

size_t tb_trace_count(const tb_trace *tr) { return tr != NULL ? tr->n : 0; }

/* {"name":N[,"cat":C],"ph":PH,"ts":T,"pid":P — the common head. */
static int put_head(const tb_trace *tr, const ev *e, const char *cat, const char *ph,
                    tb_buf *out)
{
    TB_CHECK(tb_buf_append(out, "{\"name\":", 8));
    TB_CHECK(tb_buf_json_string(out, e->name));
    if (cat != NULL) {
        TB_CHECK(tb_buf_append(out, ",\"cat\":", 7));
        TB_CHECK(tb_buf_json_string(out, cat));
    }
    return tb_buf_printf(out, ",\"ph\":\"%s\",\"ts\":%.3f,\"pid\":%d", ph,
                         (e->ts - tr->origin) * 1e6, tr->pid);
}

static int put_complete(const tb_trace *tr, const ev *e, tb_buf *out)
{
    TB_CHECK(put_head(tr, e, e->cat, "X", out));
    TB_CHECK(tb_buf_printf(out, ",\"tid\":%d,\"dur\":%.3f", e->tid, e->dur * 1e6));
    if (e->has_arg) {
        TB_CHECK(tb_buf_append(out, ",\"args\":{", 9));
        TB_CHECK(tb_buf_json_string(out, e->aux));
        TB_CHECK(tb_buf_printf(out, ":%" PRId64 "}", e->arg));
    }
    return tb_buf_append(out, "}", 1);
}

static int put_event(const tb_trace *tr, const ev *e, tb_buf *out)
{
    switch ((ev_type)e->type) {
    case EV_COMPLETE:
        return put_complete(tr, e, out);
    case EV_COUNTER:
        TB_CHECK(put_head(tr, e, NULL, "C", out));
        TB_CHECK(tb_buf_append(out, ",\"args\":{", 9));
        TB_CHECK(tb_buf_json_string(out, e->aux));
        return tb_buf_printf(out, ":%.17g}}", e->value);
    case EV_INSTANT:
        TB_CHECK(put_head(tr, e, NULL, "i", out));
        return tb_buf_printf(out, ",\"tid\":%d,\"s\":\"t\"}", e->tid);
    case EV_FLOW_BEGIN:
        TB_CHECK(put_head(tr, e, "msg", "s", out));
        return tb_buf_printf(out, ",\"tid\":%d,\"id\":%" PRIu64 "}", e->tid, e->id);
    case EV_FLOW_END:
        /* "bp":"e" binds the arrow head to the enclosing slice. */
        TB_CHECK(put_head(tr, e, "msg", "f", out));
        return tb_buf_printf(out, ",\"tid\":%d,\"id\":%" PRIu64 ",\"bp\":\"e\"}", e->tid, e->id);
    }
    return TB_ERR_STATE;
}

static int put_process_name(const tb_trace *tr, tb_buf *out)
{
    TB_CHECK(tb_buf_printf(out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
                                "\"args\":{\"name\":",
                           tr->pid));
    TB_CHECK(tb_buf_json_string(out, tr->process_name));
    return tb_buf_append(out, "}}", 2);
}

/* On failure the buffer is cut back to its length on entry. */
int tb_trace_serialize(const tb_trace *tr, tb_buf *out)
{
    if (tr == NULL || out == NULL)
        return TB_ERR_INVALID;
    size_t start = out->len;
    int rc = TB_OK;
    const char *sep = "";
    if (tr->process_name != NULL) {
        rc = put_process_name(tr, out);
        sep = ",\n";
    }
    for (size_t i = 0; i < tr->n && rc == TB_OK; i++) {
        rc = tb_buf_append(out, sep, strlen(sep));
        if (rc == TB_OK)
            rc = put_event(tr, &tr->evs[i], out);
        sep = ",\n";
    }
    if (rc != TB_OK && out->cap != 0)
        out->len = start;
    return rc;
}

int tb_trace_write_pieces(const tb_buf *pieces, size_t n, const char *path)
{
    if ((n > 0 && pieces == NULL) || path == NULL)
        return TB_ERR_INVALID;
    tb_buf b = TB_BUF_INIT;
    int rc = tb_buf_printf(&b, "{\"traceEvents\":[\n");
    int any = 0;
    for (size_t i = 0; i < n && rc == TB_OK; i++) {
        if (pieces[i].len == 0)
            continue;
        if (any)
            rc = tb_buf_append(&b, ",\n", 2);
        if (rc == TB_OK)
            rc = tb_buf_append(&b, pieces[i].data, pieces[i].len);
        any = 1;
    }
    if (rc == TB_OK)
        rc = tb_buf_printf(&b, "\n],\"displayTimeUnit\":\"ms\"}\n");
    if (rc == TB_OK)
        rc = tb_write_file_atomic(path, b.data, b.len);
    tb_buf_free(&b);
    return rc;
}

int tb_trace_write_set(const tb_trace *const *trs, size_t n, const char *path)
{
    if ((n > 0 && trs == NULL) || path == NULL)
        return TB_ERR_INVALID;
    tb_buf *pieces = calloc(n ? n : 1, sizeof *pieces);
    if (pieces == NULL)
        return TB_ERR_NOMEM;
    int rc = TB_OK;
    for (size_t i = 0; i < n && rc == TB_OK; i++)
        if (trs[i] != NULL)
            rc = tb_trace_serialize(trs[i], &pieces[i]);
    if (rc == TB_OK)
        rc = tb_trace_write_pieces(pieces, n, path);
    for (size_t i = 0; i < n; i++)
        tb_buf_free(&pieces[i]);
    free(pieces);
    return rc;
}

int tb_trace_write(const tb_trace *tr, const char *path)
{
    if (tr == NULL)
        return TB_ERR_INVALID;
    return tb_trace_write_set(&tr, 1, path);
}
