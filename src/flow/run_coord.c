/*
 * run_coord.c - rank 0's coordinator in a workflow run (run.c): it drives
 * the engine (engine.c, the decisions tb_flow_simulate makes) with what
 * really happens, turns its actions into RUN and PUSH messages, measures
 * the hosts' speeds and the network from task ends and transfers, keeps
 * the log of attempts, and stops the run when all is done or one task
 * failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/proto.h"
#include "flow/run_internal.h"

static int coord_abort(runner *r);

static int push(runner *r, uint32_t file, int from, int to)
{
    size_t k = (size_t)file * (size_t)r->size + (size_t)to;
    if (r->have[k] || r->inflight[k])
        return TB_OK;
    r->inflight[k] = 1;
    r->push_t0[k] = tb_tp_now(&r->a);
    r->ninflight++;
    tb_buf b;
    tb_buf_init(&b);
    int rc = tb__flow_pack_push(&b, file, to);
    if (!rc)
        rc = tb__frun_send_msg(r, from, T_PUSH, &b);
    tb_buf_free(&b);
    return rc;
}

/* A rank that has file, preferring `prefer`; -1 if none. */
static int holder(const runner *r, uint32_t file, int prefer)
{
    const uint8_t *h = r->have + (size_t)file * (size_t)r->size;
    if (prefer >= 0 && h[prefer])
        return prefer;
    for (int k = 0; k < r->size; k++)
        if (h[k])
            return k;
    return -1;
}

/* Send RUN for t on host h if all its input files are there (push the
 * missing ones otherwise; their HAVEs call this again). */
static int coord_try_run(runner *r, size_t h)
{
    long t = r->pending_run[h];
    if (t < 0 || r->aborting)
        return TB_OK;
    int rank = r->host_rank[h];
    const uint32_t *files;
    size_t n = tb_flow_task_files(r->f, (size_t)t, 0, &files);
    int missing = 0;
    for (size_t i = 0; i < n && !r->o->shared_fs; i++) {
        if (r->have[(size_t)files[i] * (size_t)r->size + (size_t)rank])
            continue;
        missing = 1;
        int from = holder(r, files[i], 0);
        if (from < 0) {
            /* the workflow's fault, not the machinery's: stop cleanly */
            snprintf(r->res->message, sizeof r->res->message,
                     "%s: task '%s' reads '%s', which no finished task wrote and which is no "
                     "workflow input (a parent missing from the workflow?)",
                     r->f->name, r->f->id[t], r->f->fname[files[i]]);
            tb__frun_rfail(r, TB_ERR_INVALID, "%s", r->res->message);
            return coord_abort(r);
        }
        TB_CHECK(push(r, files[i], from, rank));
    }
    if (missing)
        return TB_OK;
    r->pending_run[h] = -1;
    uint32_t att = ++r->attempts[t];
    r->res->attempts++;
    double iters = 0;
    if (r->o->synthetic)
        iters = tb__flow_engine_work(&r->e, (size_t)t, h) * r->time_scale * r->rate0;
    tb_buf b;
    tb_buf_init(&b);
    int rc = tb__flow_pack_run(&b, (uint32_t)t, att, iters > 0 ? (uint64_t)llround(iters) : 0);
    if (!rc)
        rc = tb__frun_send_msg(r, rank, T_RUN, &b);
    tb_buf_free(&b);
    return rc;
}

static int eng_start(void *ctx, size_t t, size_t h)
{
    runner *r = ctx;
    r->pending_run[h] = (long)t;
    return coord_try_run(r, h);
}

static double eng_send(void *ctx, size_t e, size_t from, size_t to)
{
    runner *r = ctx;
    if (r->o->shared_fs)
        return r->e.now;
    const tb_flow *f = r->f;
    size_t p = r->edge_src[e], s = f->succ[e];
    int fr = r->host_rank[from], tr = r->host_rank[to];
    const uint32_t *out, *in;
    size_t nout = tb_flow_task_files(f, p, 1, &out), nin = tb_flow_task_files(f, s, 0, &in);
    int missing = 0;
    for (size_t i = 0; i < nout; i++) {
        int used = 0;
        for (size_t j = 0; j < nin && !used; j++)
            used = in[j] == out[i];
        if (!used || r->have[(size_t)out[i] * (size_t)r->size + (size_t)tr])
            continue;
        missing = 1;
        if (push(r, out[i], fr, tr) != TB_OK) {
            tb__frun_rfail(r, TB_ERR_MPI, "cannot send a file");
            return r->e.now;
        }
    }
    if (!missing)
        return r->e.now;
    if (tb_grow(&r->waits, &r->capwaits, r->nwaits, sizeof *r->waits, 16) == TB_OK)
        r->waits[r->nwaits++] = (edge_wait){(uint32_t)e, (uint32_t)to, tr};
    return INFINITY;
}

const tb__flow_engine_ops tb__frun_run_ops = {eng_start, eng_send, NULL};

static int coord_abort(runner *r)
{
    if (r->aborting)
        return TB_OK;
    r->aborting = 1;
    r->e.stopped = 1;
    for (size_t h = 0; h < r->H.nhosts; h++) {
        r->pending_run[h] = -1;
        if (r->e.running[h] >= 0) {
            tb_buf b;
            tb_buf_init(&b);
            int rc = tb__flow_pack_empty(&b);
            if (!rc)
                rc = tb__frun_send_msg(r, r->host_rank[h], T_KILL, &b);
            tb_buf_free(&b);
            TB_CHECK(rc);
        }
    }
    return tb__frun_coord_maybe_stop(r);
}

int tb__frun_coord_maybe_stop(runner *r)
{
    if (r->stopped)
        return TB_OK;
    int done = r->e.ndone == r->e.n && r->gathers == 0;
    int quiet = r->ninflight == 0;
    for (size_t h = 0; h < r->H.nhosts && quiet; h++)
        quiet = r->e.running[h] < 0 || r->pending_run[h] >= 0;
    if (!quiet || !(done || r->aborting))
        return TB_OK;
    r->stopped = 1;
    for (int k = 0; k < r->size; k++) {
        tb_buf b;
        tb_buf_init(&b);
        int rc = tb__flow_pack_empty(&b);
        if (!rc)
            rc = tb__frun_send_msg(r, k, T_STOP, &b);
        tb_buf_free(&b);
        TB_CHECK(rc);
    }
    return TB_OK;
}

static void refit_network(runner *r)
{
    tb_linfit fit;
    double L = -1, G = -1;
    if (r->nxs >= 3 && tb_linfit_compute(r->xs, r->ys, r->nxs, &fit) == TB_OK && fit.slope > 0) {
        L = fit.intercept > 0 ? fit.intercept : 0;
        G = fit.slope;
    } else {
        double sx = 0, sy = 0;
        for (size_t i = 0; i < r->nxs; i++) {
            sx += r->xs[i];
            sy += r->ys[i];
        }
        if (sx > 0) {
            L = 0;
            G = sy / sx;
        }
    }
    if (G < 0)
        return;
    r->res->net_L = L;
    r->res->net_G = G;
    /* the schedule counts the workflow's bytes, the wire carries them x size_scale */
    for (size_t k = 0; k < r->H.nclusters * r->H.nclusters; k++) {
        r->H.L[k] = L;
        r->H.G[k] = G * r->size_scale;
    }
}

int tb__frun_coord_have(runner *r, int src, tb_buf *b)
{
    uint32_t file;
    uint64_t bytes;
    TB_CHECK(tb__flow_unpack_have(b, &file, &bytes));
    if (file >= r->f->nfiles)
        return TB_ERR_PROTOCOL;
    size_t k = (size_t)file * (size_t)r->size + (size_t)src;
    double now = tb_tp_now(&r->a);
    r->have[k] = 1;
    if (r->inflight[k]) {
        r->inflight[k] = 0;
        r->ninflight--;
        if (tb_grow(&r->xs, &r->capxs, r->nxs, sizeof *r->xs, 64) == TB_OK &&
            tb_grow(&r->ys, &r->capys, r->nxs, sizeof *r->ys, 64) == TB_OK) {
            r->xs[r->nxs] = (double)bytes;
            r->ys[r->nxs++] = now - r->push_t0[k];
            refit_network(r);
        }
    }
    r->res->transfers++;
    r->res->transferred_bytes += bytes;
    if (src == 0 && r->is_output[file] && r->o->out_dir && r->gathers > 0)
        r->gathers--;
    /* edges waiting for this file on src */
    const tb_flow *f = r->f;
    for (size_t i = 0; i < r->nwaits && !r->aborting;) {
        edge_wait w = r->waits[i];
        if (w.rank != src) {
            i++;
            continue;
        }
        size_t p = r->edge_src[w.edge], s = f->succ[w.edge];
        const uint32_t *out, *in;
        size_t nout = tb_flow_task_files(f, p, 1, &out), nin = tb_flow_task_files(f, s, 0, &in);
        int all = 1;
        for (size_t a = 0; a < nout && all; a++)
            for (size_t c = 0; c < nin; c++)
                if (in[c] == out[a] && !r->have[(size_t)out[a] * (size_t)r->size + (size_t)src])
                    all = 0;
        if (!all) {
            i++;
            continue;
        }
        r->waits[i] = r->waits[--r->nwaits];
        TB_CHECK(tb__flow_engine_arrived(&r->e, w.edge, w.host, now));
        i = 0; /* the engine may have changed the list */
    }
    int rank_host = r->rank_host[src];
    if (rank_host >= 0)
        TB_CHECK(coord_try_run(r, (size_t)rank_host));
    return tb__frun_coord_maybe_stop(r);
}

int tb__frun_log_attempt(runner *r, uint32_t t, uint32_t att, int rank, double start, double end,
                         int code, int signo, const char *msg)
{
    TB_CHECK(tb_grow(&r->log, &r->caplog, r->nlog, sizeof *r->log, 64));
    attempt *a = &r->log[r->nlog++];
    *a = (attempt){t, att, rank, start, end, code, signo, 0, NULL};
    if (msg && *msg && !(a->error = strdup(msg)))
        return TB_ERR_NOMEM;
    return TB_OK;
}

/* A line every TENBIN_PROGRESS_INTERVAL as tasks finish, and the last one. */
static void progress(runner *r, double now)
{
    if (!r->o->progress)
        return;
    if (!r->prog && tb_progress_create(&r->prog, stderr, "tasks", r->e.n,
                                       TB_PROGRESS_INTERVAL_ENV) != TB_OK)
        return;
    tb_progress_note(r->prog, now, r->e.ndone == r->e.n,
                     "tenbin: flow run: %zu/%zu tasks done, %ld reschedule%s, %.1f s", r->e.ndone,
                     r->e.n, r->e.reschedules, r->e.reschedules == 1 ? "" : "s", now);
}

/* A host's speed as the trigger sees it: the work of its last WINDOW
 * tasks over their time, so that one task too short for its fixed costs
 * (a process to start, files to open) does not swing it alone; the
 * measured fixed cost of a task is taken out of the times.  0 (no
 * news) while the window's time is within DT_FLOOR per task of what the
 * believed speed predicts: below that, a difference is the measurement's
 * resolution, not the host's speed. */
static double measure_speed(runner *r, size_t h, double work, double dur)
{
    if (!(dur > 0) || !(work > 0))
        return 0.0;
    size_t k = h * WINDOW + r->win_i[h];
    r->win_w[k] = work;
    r->win_d[k] = dur;
    r->win_i[h] = (r->win_i[h] + 1) % WINDOW;
    double w = 0, d = 0;
    size_t n = 0;
    for (size_t i = 0; i < WINDOW; i++) {
        w += r->win_w[h * WINDOW + i];
        d += r->win_d[h * WINDOW + i];
        n += r->win_d[h * WINDOW + i] > 0;
    }
    double c = r->H.task_overhead * (double)n;
    double predicted = w / r->H.speed[h] + c;
    if (fabs(d - predicted) <= DT_FLOOR * (double)n || d - c <= 0.1 * d)
        return 0.0;
    return w / (d - c);
}

int tb__frun_coord_done(runner *r, int src, tb_buf *b)
{
    const tb_flow *f = r->f;
    tb__flow_done_msg d;
    TB_CHECK(tb__flow_unpack_done(b, &d));
    uint32_t t = d.task, att = d.attempt, msglen = d.msglen;
    int32_t code = d.exit_code, signo = d.signo;
    double dur = d.seconds;
    const void *msg = d.msg;
    int h = r->rank_host[src];
    if (t >= f->n || h < 0 || r->e.running[h] != (long)t)
        return tb__frun_rfail(r, TB_ERR_PROTOCOL, "rank %d reported a task it was not running",
                              src);
    char text[512];
    snprintf(text, sizeof text, "%.*s", (int)msglen, (const char *)msg);
    double now = tb_tp_now(&r->a);
    double start = now - dur;
    if (start < r->e.start[t])
        start = r->e.start[t];
    int ok = code == 0 && signo == 0;
    TB_CHECK(tb__frun_log_attempt(r, t, att, src, start, now, code, signo, ok ? NULL : text));
    if (r->aborting) {
        r->e.running[h] = -1;
        return tb__frun_coord_maybe_stop(r);
    }
    if (ok) {
        const uint32_t *files;
        size_t n = tb_flow_task_files(f, t, 1, &files);
        for (size_t i = 0; i < n; i++) {
            r->have[(size_t)files[i] * (size_t)r->size + (size_t)src] = 1;
            if (r->o->out_dir && r->is_output[files[i]] && src != 0 && !r->o->shared_fs) {
                r->gathers++;
                TB_CHECK(push(r, files[i], src, 0));
            }
        }
        r->e.start[t] = start;
        double measured =
            measure_speed(r, (size_t)h, tb__flow_engine_work(&r->e, t, (size_t)h), dur);
        TB_CHECK(tb__flow_engine_task_end(&r->e, (size_t)h, t, now, measured, r->o->perf_change));
        if (r->err_rc)
            return r->err_rc;
        progress(r, now);
        return tb__frun_coord_maybe_stop(r);
    }
    r->res->failures++;
    char why[640];
    if (signo)
        snprintf(why, sizeof why, "killed by signal %d", (int)signo);
    else if (code < 0)
        snprintf(why, sizeof why, "%s", text);
    else
        snprintf(why, sizeof why, "exit code %d%s%s", (int)code, text[0] ? ": " : "", text);
    if ((long)att <= r->o->retries) {
        fprintf(stderr, "tenbin: flow run: task '%s' failed on rank %d (%s); retrying (%u of %d)\n",
                f->id[t], src, why, att, r->o->retries);
        TB_CHECK(tb__flow_engine_task_failed(&r->e, (size_t)h, t, now));
        return tb__frun_coord_maybe_stop(r);
    }
    r->res->failed_task = (long)t;
    r->e.running[h] = -1; /* it ran its last attempt */
    tb__frun_strf(r->res->message, sizeof r->res->message,
                  "task '%s' failed on rank %d after %u attempt%s: %s", f->id[t], src, att,
                  att == 1 ? "" : "s", why);
    return coord_abort(r);
}
