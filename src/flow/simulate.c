/*
 * simulate.c - a workflow on a platform whose host speeds change, under
 * S2's rules (section 5.1 of the paper):
 *   - each host runs one task at a time, in the scheduled order, and never
 *     overtakes: if its next task is not ready it waits;
 *   - a task's work advances at the host's speed over time (constant, a
 *     trace, or S2's load process: base / (1 + dummies));
 *   - a task's output leaves when it ends, to the host its successor is
 *     scheduled on; transfers on one host are free;
 *   - the scheduler (one process) hears of every speed change and task end
 *     and, when the trigger says so, reschedules the unfinished tasks with
 *     the speeds it has heard of; its own time is not simulated.
 * Events run on the simulator's kernel (sim/sim.h), so a run is a pure
 * function of the workflow, the platform's seed and the scheduler's seed.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/flow_internal.h"
#include "sim/sim.h"

enum { EV_END = 1, EV_WAKE = 2, EV_SPEED = 3 };

typedef struct simrun {
    const tb_flow *f;
    const tb_platform *plat;
    const tb_flow_sim_opts *o;
    const tb_flow_sched_ops *sched;
    tb_flow_trigger trig;
    tb_flow_hosts H;
    tb_flow_schedule plan;
    tb_sim_queue q;
    size_t n, m, nedges;
    double now;

    uint8_t *state;      /* per task: TB_FLOW_* */
    int32_t *host;       /* where it runs or ran */
    double *start, *finish;
    double *expect;      /* scheduler's view: finish, or expected end if running */
    int32_t *edge_host;  /* where each edge's data was sent (-1: nowhere) */
    double *edge_arr;
    uint32_t *topo_pos;  /* position in the topological order */
    uint32_t *its_left;  /* per set: unfinished tasks */

    /* per host */
    tb_speed_cursor *cur;
    uint8_t *has_cursor;
    uint32_t *qoff;      /* queues: planned pending tasks, CSR by host */
    uint32_t *qtask;
    uint32_t *qpos;      /* next entry of each queue */
    long *running;       /* task or -1 */
    double *acc_work;    /* work done by the running task up to acc_t */
    double *acc_t;
    double *wake_at;     /* earliest pending wake-up of each host (inf: none) */

    size_t ndone;
    double first_start, last_end;
    tb_flow_sim_result *res;
    char *err;
    size_t errlen;
} simrun;

static int simfail(simrun *r, int code, const char *msg)
{
    if (r->err && r->errlen)
        snprintf(r->err, r->errlen, "%s: %s", r->f->name[0] ? r->f->name : "workflow", msg);
    return code;
}

/* Work of task t on host h in units the speed cursor integrates (seconds
 * at speed 1): per-host costs were measured at the base speed. */
static double task_work(const simrun *r, size_t t, size_t h)
{
    const tb_flow *f = r->f;
    return f->q ? f->cost[t * f->q + h] * r->H.base_speed[h] : f->work[t];
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
static int build_queues(simrun *r)
{
    size_t m = r->m;
    memset(r->qoff, 0, (m + 1) * sizeof *r->qoff);
    size_t np = 0;
    for (size_t t = 0; t < r->n; t++)
        if (r->state[t] == TB_FLOW_PENDING) {
            r->qoff[r->plan.host[t] + 1]++;
            np++;
        }
    for (size_t h = 0; h < m; h++)
        r->qoff[h + 1] += r->qoff[h];
    qkey *k = malloc((np ? np : 1) * sizeof *k);
    uint32_t *fill = malloc(m * sizeof *fill);
    if (!k || !fill) {
        free(k);
        free(fill);
        return TB_ERR_NOMEM;
    }
    memcpy(fill, r->qoff, m * sizeof *fill);
    for (size_t t = 0; t < r->n; t++)
        if (r->state[t] == TB_FLOW_PENDING)
            k[fill[r->plan.host[t]]++] = (qkey){r->plan.start[t], r->topo_pos[t], (uint32_t)t};
    for (size_t h = 0; h < m; h++) {
        qsort(k + r->qoff[h], r->qoff[h + 1] - r->qoff[h], sizeof *k, cmp_qkey);
        r->qpos[h] = r->qoff[h];
    }
    for (size_t i = 0; i < np; i++)
        r->qtask[i] = k[i].t;
    free(k);
    free(fill);
    return TB_OK;
}

/* Data of edge e leaves `from` now for `to`.  No event: the host that
 * waits for it wakes up when its last input arrives (try_start). */
static void send_edge(simrun *r, size_t e, size_t from, size_t to)
{
    r->edge_host[e] = (int32_t)to;
    r->edge_arr[e] = r->now + tb__flow_comm(&r->H, from, to, r->f->sdata[e]);
    r->res->transfers++;
}

/* Work a running task has done by now, at the speeds seen so far. */
static double done_work(const simrun *r, size_t h)
{
    return r->acc_work[h] + (r->now - r->acc_t[h]) * r->H.speed[h];
}

static int reschedule(simrun *r, int first)
{
    const tb_flow *f = r->f;
    for (size_t h = 0; h < r->m; h++) {
        long t = r->running[h];
        if (t < 0)
            continue;
        double left = task_work(r, (size_t)t, h) - done_work(r, h);
        r->expect[t] = r->now + (left > 0 ? left : 0) / r->H.speed[h];
    }
    tb_flow_state st = {r->now, r->state, r->host, r->start, r->expect, r->edge_host, r->edge_arr};
    double c0 = tb_thread_cputime();
    int rc = r->sched->schedule(f, &r->H, first ? NULL : &st, r->o->seed, &r->plan);
    r->res->sched_cpu_s += tb_thread_cputime() - c0;
    if (rc)
        return simfail(r, rc, "the scheduler failed");
    if (first)
        r->res->planned = r->plan.makespan;
    else
        r->res->reschedules++;
    /* data of finished tasks goes where its successor now runs */
    for (size_t p = 0; p < r->n && !first; p++) {
        if (r->state[p] != TB_FLOW_DONE)
            continue;
        for (size_t e = f->soff[p]; e < f->soff[p + 1]; e++) {
            uint32_t s = f->succ[e];
            int32_t x = r->plan.host[s];
            if (r->state[s] != TB_FLOW_PENDING || x == r->host[p] || x == r->edge_host[e])
                continue;
            send_edge(r, e, (size_t)r->host[p], (size_t)x);
        }
    }
    return build_queues(r);
}

/* When every input of t is on host h: +inf while a predecessor runs (its
 * end will try again). */
static double inputs_time(simrun *r, size_t t, size_t h)
{
    const tb_flow *f = r->f;
    double at = r->now;
    for (size_t k = f->poff[t]; k < f->poff[t + 1]; k++) {
        uint32_t p = f->pred[k], e = f->pedge[k];
        if (r->state[p] != TB_FLOW_DONE)
            return INFINITY;
        if ((size_t)r->host[p] == h)
            continue;
        if ((size_t)r->edge_host[e] != h)
            send_edge(r, e, (size_t)r->host[p], h); /* not sent here yet */
        if (r->edge_arr[e] > at)
            at = r->edge_arr[e];
    }
    return at;
}

static int try_start(simrun *r, size_t h)
{
    if (r->running[h] >= 0 || r->qpos[h] >= r->qoff[h + 1])
        return TB_OK;
    uint32_t t = r->qtask[r->qpos[h]];
    double at = inputs_time(r, t, h);
    if (at > r->now) {
        if (isfinite(at) && at < r->wake_at[h]) {
            r->wake_at[h] = at;
            return tb_sim_queue_push(&r->q, at, EV_WAKE, (int)h, 0, NULL);
        }
        return TB_OK;
    }
    r->qpos[h]++;
    double end;
    int rc = tb_speed_finish_time(&r->cur[h], r->now, task_work(r, t, h), &end);
    if (rc)
        return simfail(r, rc, "a host's speed model failed");
    if (!isfinite(end))
        return simfail(r, TB_ERR_RANGE, "a task never ends (speed 0 forever)");
    r->state[t] = TB_FLOW_RUNNING;
    r->host[t] = (int32_t)h;
    r->start[t] = r->now;
    r->running[h] = t;
    r->acc_work[h] = 0;
    r->acc_t[h] = r->now;
    if (r->now < r->first_start)
        r->first_start = r->now;
    return tb_sim_queue_push(&r->q, end, EV_END, (int)h, t, NULL);
}

static int start_all(simrun *r)
{
    for (size_t h = 0; h < r->m; h++) {
        int rc = try_start(r, h);
        if (rc)
            return rc;
    }
    return TB_OK;
}

static int on_end(simrun *r, size_t h, size_t t)
{
    const tb_flow *f = r->f;
    int rc;
    r->state[t] = TB_FLOW_DONE;
    r->finish[t] = r->expect[t] = r->now;
    r->running[h] = -1;
    r->ndone++;
    r->last_end = r->now;
    if (r->o->trace)
        tb_trace_complete(r->o->trace, (int)h, "task", f->id[t], r->start[t], r->now);
    for (size_t e = f->soff[t]; e < f->soff[t + 1]; e++) {
        int32_t x = r->plan.host[f->succ[e]];
        if ((size_t)x != h)
            send_edge(r, e, h, (size_t)x);
    }
    long left = -1;
    if (f->its[t] >= 0)
        left = --r->its_left[f->its[t]];
    if (r->ndone < r->n && r->trig.ops->task_finished(&r->trig, t, left)) {
        if ((rc = reschedule(r, 0)))
            return rc;
        return start_all(r);
    }
    /* this host, and the hosts of the successors whose input this was */
    if ((rc = try_start(r, h)))
        return rc;
    for (size_t e = f->soff[t]; e < f->soff[t + 1]; e++) {
        int32_t x = r->plan.host[f->succ[e]];
        if ((size_t)x != h && r->qpos[x] < r->qoff[x + 1] && r->qtask[r->qpos[x]] == f->succ[e] &&
            (rc = try_start(r, (size_t)x)))
            return rc;
    }
    return TB_OK;
}

static int on_speed(simrun *r, size_t h)
{
    tb_speed_cursor *c = &r->cur[h];
    int rc = tb_speed_cursor_seek(c, r->now);
    if (rc)
        return simfail(r, rc, "a host's speed model failed");
    if (isfinite(c->t1) && (rc = tb_sim_queue_push(&r->q, c->t1, EV_SPEED, (int)h, 0, NULL)))
        return rc;
    if (c->speed == r->H.speed[h])
        return TB_OK;
    if (r->running[h] >= 0) {
        r->acc_work[h] = done_work(r, h);
        r->acc_t[h] = r->now;
    }
    r->H.speed[h] = c->speed;
    r->res->speed_changes++;
    if (r->trig.ops->speed_changed(&r->trig)) {
        if ((rc = reschedule(r, 0)))
            return rc;
        return start_all(r);
    }
    return TB_OK;
}

static int run(simrun *r)
{
    int rc;
    for (size_t h = 0; h < r->m; h++) {
        if ((rc = tb_speed_cursor_init(&r->cur[h], r->plat, h)))
            return simfail(r, rc, "a host has an unusable speed model");
        r->has_cursor[h] = 1;
        r->running[h] = -1;
        tb_speed_cursor *c = &r->cur[h];
        if ((rc = tb_speed_cursor_seek(c, 0)))
            return rc;
        r->H.speed[h] = c->speed;
        if (isfinite(c->t1) && (rc = tb_sim_queue_push(&r->q, c->t1, EV_SPEED, (int)h, 0, NULL)))
            return rc;
    }
    if ((rc = reschedule(r, 1)) || (rc = start_all(r)))
        return rc;
    tb_sim_event ev;
    while (r->ndone < r->n && tb_sim_queue_pop(&r->q, &ev)) {
        r->now = ev.t;
        size_t h = (size_t)ev.rank;
        switch (ev.type) {
        case EV_END:
            rc = on_end(r, h, (size_t)ev.a);
            break;
        case EV_WAKE:
            if (ev.t == r->wake_at[h])
                r->wake_at[h] = INFINITY;
            rc = try_start(r, h);
            break;
        default:
            rc = on_speed(r, h);
            break;
        }
        if (rc)
            return rc;
    }
    if (r->ndone < r->n)
        return simfail(r, TB_ERR_STATE, "the simulation stopped with tasks left (a bug)");
    r->res->events = r->q.popped;
    r->res->makespan = r->n ? r->last_end - r->first_start : 0.0;
    return TB_OK;
}

static int alloc_run(simrun *r)
{
    size_t n = r->n ? r->n : 1, m = r->m, e = r->nedges ? r->nedges : 1;
    r->state = calloc(n, 1);
    r->host = malloc(n * sizeof *r->host);
    r->start = malloc(n * sizeof *r->start);
    r->finish = malloc(n * sizeof *r->finish);
    r->expect = malloc(n * sizeof *r->expect);
    r->edge_host = malloc(e * sizeof *r->edge_host);
    r->edge_arr = malloc(e * sizeof *r->edge_arr);
    r->topo_pos = malloc(n * sizeof *r->topo_pos);
    r->its_left = malloc((r->f->nits ? r->f->nits : 1) * sizeof *r->its_left);
    r->cur = calloc(m, sizeof *r->cur);
    r->has_cursor = calloc(m, 1);
    r->qoff = malloc((m + 1) * sizeof *r->qoff);
    r->qtask = malloc(n * sizeof *r->qtask);
    r->qpos = malloc(m * sizeof *r->qpos);
    r->running = malloc(m * sizeof *r->running);
    r->acc_work = calloc(m, sizeof *r->acc_work);
    r->acc_t = calloc(m, sizeof *r->acc_t);
    r->wake_at = malloc(m * sizeof *r->wake_at);
    if (!r->wake_at ||!r->state || !r->host || !r->start || !r->finish || !r->expect || !r->edge_host ||
        !r->edge_arr || !r->topo_pos || !r->its_left || !r->cur || !r->has_cursor || !r->qoff ||
        !r->qtask || !r->qpos || !r->running || !r->acc_work || !r->acc_t)
        return TB_ERR_NOMEM;
    for (size_t t = 0; t < r->n; t++) {
        r->host[t] = -1;
        r->start[t] = r->finish[t] = r->expect[t] = NAN;
        r->topo_pos[r->f->topo[t]] = (uint32_t)t;
    }
    for (size_t h = 0; h < m; h++)
        r->wake_at[h] = INFINITY;
    for (size_t i = 0; i < r->nedges; i++) {
        r->edge_host[i] = -1;
        r->edge_arr[i] = INFINITY;
    }
    for (size_t s = 0; s < r->f->nits; s++)
        r->its_left[s] = r->f->its_count[s];
    return TB_OK;
}

static void free_run(simrun *r)
{
    for (size_t h = 0; r->cur && h < r->m; h++)
        if (r->has_cursor[h])
            tb_speed_cursor_free(&r->cur[h]);
    free(r->state);
    free(r->host);
    free(r->start);
    free(r->finish);
    free(r->expect);
    free(r->edge_host);
    free(r->edge_arr);
    free(r->topo_pos);
    free(r->its_left);
    free(r->cur);
    free(r->has_cursor);
    free(r->qoff);
    free(r->qtask);
    free(r->qpos);
    free(r->running);
    free(r->acc_work);
    free(r->acc_t);
    free(r->wake_at);
    tb_sim_queue_free(&r->q);
    tb_flow_schedule_free(&r->plan);
    tb_flow_hosts_free(&r->H);
}

int tb_flow_simulate(const tb_flow *f, const tb_platform *plat, const tb_flow_sim_opts *o,
                     tb_flow_sim_result *res, tb_flow_schedule *sched_out, char *err,
                     size_t errlen)
{
    static const tb_flow_sim_opts defaults = {NULL, NULL, 0, NULL};
    if (!f || !plat || !res || !f->final)
        return TB_ERR_INVALID;
    simrun r;
    memset(&r, 0, sizeof r);
    memset(res, 0, sizeof *res);
    r.f = f;
    r.plat = plat;
    r.o = o ? o : &defaults;
    r.res = res;
    r.err = err;
    r.errlen = errlen;
    r.n = f->n;
    r.m = plat->nhosts;
    r.nedges = f->m;
    r.first_start = INFINITY;
    r.sched = r.o->sched ? r.o->sched : tb_flow_sched_find("heft");
    double c0 = tb_process_cputime();
    int rc = tb_flow_trigger_parse(r.o->trigger ? r.o->trigger : "static", &r.trig, err, errlen);
    if (rc)
        return TB_ERR_INVALID;
    if (f->q && f->q != plat->nhosts) {
        char msg[128];
        snprintf(msg, sizeof msg, "the workflow has costs for %zu hosts, the platform has %zu",
                 f->q, plat->nhosts);
        return simfail(&r, TB_ERR_INVALID, msg);
    }
    tb_sim_queue_init(&r.q);
    if ((rc = tb_flow_hosts_init(&r.H, f, plat)) ||
        (rc = tb_flow_schedule_init(&r.plan, f->n, plat->nhosts)) || (rc = alloc_run(&r))) {
        free_run(&r);
        return simfail(&r, rc, "out of memory");
    }
    rc = run(&r);
    if (!rc && sched_out && sched_out->ntasks == f->n) {
        memcpy(sched_out->host, r.host, f->n * sizeof *r.host);
        memcpy(sched_out->start, r.start, f->n * sizeof *r.start);
        memcpy(sched_out->finish, r.finish, f->n * sizeof *r.finish);
        sched_out->makespan = res->makespan;
    }
    free_run(&r);
    res->sim_cpu_s = tb_process_cputime() - c0;
    return rc;
}
