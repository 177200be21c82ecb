/*
 * engine.c - the decisions of a running workflow under S2's rules
 * (section 5.1 of the paper), for the simulator and the MPI runner alike:
 *   - each host runs one task at a time, in the scheduled order, and never
 *     overtakes: if its next task is not ready it waits;
 *   - a task's output leaves when it ends, to the host its successor is
 *     scheduled on; transfers on one host are free;
 *   - the scheduler hears of every speed change and task end and, when the
 *     trigger says so, reschedules the unfinished tasks with the speeds it
 *     has heard of; after a reschedule, data of finished tasks leaves at
 *     once for the new host of its successor.
 * See engine.h for the substrate's side.
 */
#define _POSIX_C_SOURCE 200809L
#include "flow/engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int efail(tb__flow_engine *e, int code, const char *msg)
{
    if (e->err && e->errlen)
        snprintf(e->err, e->errlen, "%s: %s", e->f->name[0] ? e->f->name : "workflow", msg);
    return code;
}

double tb__flow_engine_work(const tb__flow_engine *e, size_t t, size_t h)
{
    const tb_flow *f = e->f;
    return f->q ? f->cost[t * f->q + h] * e->H->base_speed[h] : f->work[t];
}

typedef struct qkey {
    double start;
    uint32_t pos, t;
} qkey;

static int cmp_qkey(const void *pa, const void *pb)
{
    const qkey *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Host queues from the plan: pending tasks by host, by planned start, ties
 * in topological order (a zero-length task and its successor may share a
 * start time). */
static int build_queues(tb__flow_engine *e)
{
    size_t m = e->m;
    memset(e->qoff, 0, (m + 1) * sizeof *e->qoff);
    size_t np = 0;
    for (size_t t = 0; t < e->n; t++)
        if (e->state[t] == TB_FLOW_PENDING) {
            e->qoff[e->plan.host[t] + 1]++;
            np++;
        }
    for (size_t h = 0; h < m; h++)
        e->qoff[h + 1] += e->qoff[h];
    qkey *k = malloc((np ? np : 1) * sizeof *k);
    uint32_t *fill = malloc(m * sizeof *fill);
    if (!k || !fill) {
        free(k);
        free(fill);
        return TB_ERR_NOMEM;
    }
    memcpy(fill, e->qoff, m * sizeof *fill);
    for (size_t t = 0; t < e->n; t++)
        if (e->state[t] == TB_FLOW_PENDING)
            k[fill[e->plan.host[t]]++] = (qkey){e->plan.start[t], e->topo_pos[t], (uint32_t)t};
    for (size_t h = 0; h < m; h++) {
        qsort(k + e->qoff[h], e->qoff[h + 1] - e->qoff[h], sizeof *k, cmp_qkey);
        e->qpos[h] = e->qoff[h];
    }
    for (size_t i = 0; i < np; i++)
        e->qtask[i] = k[i].t;
    free(k);
    free(fill);
    return TB_OK;
}

/* Data of edge e leaves `from` now for `to`. */
static void send_edge(tb__flow_engine *e, size_t edge, size_t from, size_t to)
{
    e->edge_host[edge] = (int32_t)to;
    e->edge_arr[edge] = e->ops->send(e->ctx, edge, from, to);
    e->transfers++;
}

/* Work a running task has done by now, at the speeds seen so far. */
static double done_work(const tb__flow_engine *e, size_t h)
{
    return e->acc_work[h] + (e->now - e->acc_t[h]) * e->H->speed[h];
}

static int reschedule(tb__flow_engine *e, int first)
{
    const tb_flow *f = e->f;
    for (size_t h = 0; h < e->m; h++) {
        long t = e->running[h];
        if (t < 0)
            continue;
        double left = tb__flow_engine_work(e, (size_t)t, h) - done_work(e, h);
        e->expect[t] = e->now + (left > 0 ? left : 0) / e->H->speed[h];
        /* still starting: the rest of its fixed cost too */
        double starting = e->start[t] + e->H->task_overhead - e->now;
        if (starting > 0)
            e->expect[t] += starting;
    }
    tb_flow_state st = {e->now, e->state, e->host, e->start, e->expect, e->edge_host, e->edge_arr};
    double c0 = tb_thread_cputime();
    /* the first schedule of a resumed run keeps what was done */
    int rc = e->sched->schedule(f, e->H, first && !e->ndone ? NULL : &st, e->seed, &e->plan);
    e->sched_cpu_s += tb_thread_cputime() - c0;
    if (rc)
        return efail(e, rc, "the scheduler failed");
    if (first)
        e->planned = e->plan.makespan;
    else
        e->reschedules++;
    /* data of finished tasks goes where its successor now runs */
    for (size_t p = 0; p < e->n && !first; p++) {
        if (e->state[p] != TB_FLOW_DONE)
            continue;
        for (size_t k = f->soff[p]; k < f->soff[p + 1]; k++) {
            uint32_t s = f->succ[k];
            int32_t x = e->plan.host[s];
            if (e->state[s] != TB_FLOW_PENDING || x == e->host[p] || x == e->edge_host[k])
                continue;
            send_edge(e, k, (size_t)e->host[p], (size_t)x);
        }
    }
    return build_queues(e);
}

/* When every input of t is on host h: +inf while a predecessor runs (its
 * end will try again) or while data is on its way with an arrival the
 * substrate will report. */
static double inputs_time(tb__flow_engine *e, size_t t, size_t h)
{
    const tb_flow *f = e->f;
    double at = e->now;
    for (size_t k = f->poff[t]; k < f->poff[t + 1]; k++) {
        uint32_t p = f->pred[k], edge = f->pedge[k];
        if (e->state[p] != TB_FLOW_DONE)
            return INFINITY;
        if ((size_t)e->host[p] == h)
            continue;
        if ((size_t)e->edge_host[edge] != h)
            send_edge(e, edge, (size_t)e->host[p], h); /* not sent here yet */
        if (e->edge_arr[edge] > at)
            at = e->edge_arr[edge];
    }
    return at;
}

static int try_start(tb__flow_engine *e, size_t h)
{
    if (e->stopped || e->running[h] >= 0 || e->qpos[h] >= e->qoff[h + 1])
        return TB_OK;
    uint32_t t = e->qtask[e->qpos[h]];
    double at = inputs_time(e, t, h);
    if (at > e->now) {
        if (isfinite(at) && at < e->wake_at[h] && e->ops->wake) {
            e->wake_at[h] = at;
            return e->ops->wake(e->ctx, h, at);
        }
        return TB_OK;
    }
    e->qpos[h]++;
    e->state[t] = TB_FLOW_RUNNING;
    e->host[t] = (int32_t)h;
    e->start[t] = e->now;
    e->running[h] = t;
    e->acc_work[h] = 0;
    e->acc_t[h] = e->now;
    if (e->now < e->first_start)
        e->first_start = e->now;
    return e->ops->start(e->ctx, t, h);
}

static int start_all(tb__flow_engine *e)
{
    for (size_t h = 0; h < e->m; h++) {
        int rc = try_start(e, h);
        if (rc)
            return rc;
    }
    return TB_OK;
}

void tb__flow_engine_mark_done(tb__flow_engine *e, size_t t, size_t h, double at)
{
    if (e->state[t] == TB_FLOW_DONE)
        return;
    e->state[t] = TB_FLOW_DONE;
    e->host[t] = (int32_t)h;
    e->start[t] = e->finish[t] = e->expect[t] = at;
    e->ndone++;
    if (e->f->its[t] >= 0)
        e->its_left[e->f->its[t]]--;
}

int tb__flow_engine_begin(tb__flow_engine *e, double now)
{
    e->now = now;
    int rc = reschedule(e, 1);
    return rc ? rc : start_all(e);
}

int tb__flow_engine_reschedule(tb__flow_engine *e, double now)
{
    e->now = now;
    int rc = reschedule(e, 0);
    return rc ? rc : start_all(e);
}

int tb__flow_engine_task_end(tb__flow_engine *e, size_t h, size_t t, double now, double measured,
                             double rel_change)
{
    const tb_flow *f = e->f;
    int rc;
    e->now = now;
    e->state[t] = TB_FLOW_DONE;
    e->finish[t] = e->expect[t] = now;
    e->running[h] = -1;
    e->ndone++;
    e->last_end = now;
    for (size_t k = f->soff[t]; k < f->soff[t + 1]; k++) {
        int32_t x = e->plan.host[f->succ[k]];
        if ((size_t)x != h)
            send_edge(e, k, h, (size_t)x);
    }
    int again = 0;
    if (measured > 0 && isfinite(measured) &&
        fabs(measured - e->H->speed[h]) > rel_change * e->H->speed[h]) {
        e->H->speed[h] = measured;
        e->speed_changes++;
        again = e->trig.ops->speed_changed(&e->trig);
    }
    long left = -1;
    if (f->its[t] >= 0)
        left = --e->its_left[f->its[t]];
    if (e->ndone < e->n && (e->trig.ops->task_finished(&e->trig, t, left) || again)) {
        if ((rc = reschedule(e, 0)))
            return rc;
        return start_all(e);
    }
    /* this host, and the hosts of the successors whose input this was */
    if ((rc = try_start(e, h)))
        return rc;
    for (size_t k = f->soff[t]; k < f->soff[t + 1]; k++) {
        int32_t x = e->plan.host[f->succ[k]];
        if ((size_t)x != h && e->qpos[x] < e->qoff[x + 1] && e->qtask[e->qpos[x]] == f->succ[k] &&
            (rc = try_start(e, (size_t)x)))
            return rc;
    }
    return TB_OK;
}

int tb__flow_engine_speed(tb__flow_engine *e, size_t h, double speed, double now)
{
    e->now = now;
    if (speed == e->H->speed[h])
        return TB_OK;
    if (e->running[h] >= 0) {
        e->acc_work[h] = done_work(e, h);
        e->acc_t[h] = now;
    }
    e->H->speed[h] = speed;
    e->speed_changes++;
    if (e->trig.ops->speed_changed(&e->trig)) {
        int rc = reschedule(e, 0);
        return rc ? rc : start_all(e);
    }
    return TB_OK;
}

int tb__flow_engine_arrived(tb__flow_engine *e, size_t edge, size_t to, double now)
{
    e->now = now;
    if (edge >= e->nedges || e->edge_host[edge] != (int32_t)to)
        return TB_OK; /* sent elsewhere since: a reschedule moved its task */
    e->edge_arr[edge] = now;
    return try_start(e, to);
}

int tb__flow_engine_wake(tb__flow_engine *e, size_t h, double now)
{
    e->now = now;
    if (now == e->wake_at[h])
        e->wake_at[h] = INFINITY;
    return try_start(e, h);
}

int tb__flow_engine_task_failed(tb__flow_engine *e, size_t h, size_t t, double now)
{
    e->now = now;
    e->state[t] = TB_FLOW_PENDING;
    e->host[t] = -1;
    e->start[t] = e->expect[t] = NAN;
    e->running[h] = -1;
    size_t x = h;
    double best = INFINITY;
    for (size_t k = 0; k < e->m; k++) {
        if (k == h)
            continue;
        double free_at = e->running[k] >= 0 ? e->expect[e->running[k]] : now;
        if (!(free_at >= now))
            free_at = now;
        if (free_at < best) {
            best = free_at;
            x = k;
        }
    }
    e->plan.host[t] = (int32_t)x;
    e->plan.start[t] = -INFINITY;
    int rc = build_queues(e);
    return rc ? rc : start_all(e);
}

int tb__flow_engine_init(tb__flow_engine *e, const tb_flow *f, tb_flow_hosts *H,
                         const tb_flow_sched_ops *sched, const char *trigger, uint64_t seed,
                         const tb__flow_engine_ops *ops, void *ctx, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    e->f = f;
    e->H = H;
    e->sched = sched ? sched : tb_flow_sched_find("heft");
    e->seed = seed;
    e->ops = ops;
    e->ctx = ctx;
    e->err = err;
    e->errlen = errlen;
    e->n = f->n;
    e->m = H->nhosts;
    e->nedges = f->m;
    e->first_start = INFINITY;
    if (tb_flow_trigger_parse(trigger ? trigger : "static", &e->trig, err, errlen))
        return TB_ERR_INVALID;
    size_t n = e->n ? e->n : 1, m = e->m, ne = e->nedges ? e->nedges : 1;
    int rc = tb_flow_schedule_init(&e->plan, f->n, m);
    if (rc)
        return efail(e, rc, "out of memory");
    e->state = calloc(n, 1);
    e->host = malloc(n * sizeof *e->host);
    e->start = malloc(n * sizeof *e->start);
    e->finish = malloc(n * sizeof *e->finish);
    e->expect = malloc(n * sizeof *e->expect);
    e->edge_host = malloc(ne * sizeof *e->edge_host);
    e->edge_arr = malloc(ne * sizeof *e->edge_arr);
    e->topo_pos = malloc(n * sizeof *e->topo_pos);
    e->its_left = malloc((f->nits ? f->nits : 1) * sizeof *e->its_left);
    e->qoff = malloc((m + 1) * sizeof *e->qoff);
    e->qtask = malloc(n * sizeof *e->qtask);
    e->qpos = malloc(m * sizeof *e->qpos);
    e->running = malloc(m * sizeof *e->running);
    e->acc_work = calloc(m, sizeof *e->acc_work);
    e->acc_t = calloc(m, sizeof *e->acc_t);
    e->wake_at = malloc(m * sizeof *e->wake_at);
    if (!e->wake_at || !e->state || !e->host || !e->start || !e->finish || !e->expect ||
        !e->edge_host || !e->edge_arr || !e->topo_pos || !e->its_left || !e->qoff || !e->qtask ||
        !e->qpos || !e->running || !e->acc_work || !e->acc_t)
        return efail(e, TB_ERR_NOMEM, "out of memory");
    for (size_t t = 0; t < e->n; t++) {
        e->host[t] = -1;
        e->start[t] = e->finish[t] = e->expect[t] = NAN;
        e->topo_pos[f->topo[t]] = (uint32_t)t;
    }
    for (size_t h = 0; h < m; h++) {
        e->wake_at[h] = INFINITY;
        e->running[h] = -1;
    }
    for (size_t i = 0; i < e->nedges; i++) {
        e->edge_host[i] = -1;
        e->edge_arr[i] = INFINITY;
    }
    for (size_t s = 0; s < f->nits; s++)
        e->its_left[s] = f->its_count[s];
    return TB_OK;
}

void tb__flow_engine_free(tb__flow_engine *e)
{
    if (!e)
        return;
    free(e->state);
    free(e->host);
    free(e->start);
    free(e->finish);
    free(e->expect);
    free(e->edge_host);
    free(e->edge_arr);
    free(e->topo_pos);
    free(e->its_left);
    free(e->qoff);
    free(e->qtask);
    free(e->qpos);
    free(e->running);
    free(e->acc_work);
    free(e->acc_t);
    free(e->wake_at);
    tb_flow_schedule_free(&e->plan);
    memset(e, 0, sizeof *e);
}
