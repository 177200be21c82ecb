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

#include "core/json.h"
#include "flow/engine.h"
#include "flow/flow_internal.h"
#include "sim/sim.h"

enum { EV_END = 1, EV_WAKE = 2, EV_SPEED = 3 };

typedef struct simrun {
    const tb_flow *f;
    const tb_platform *plat;
    const tb_flow_sim_opts *o;
    tb_flow_hosts H;
    tb__flow_engine e;
    tb_sim_queue q;
    size_t m;
    tb_speed_cursor *cur;  /* per host */
    uint8_t *has_cursor;
    char *err;
    size_t errlen;
} simrun;

static int simfail(simrun *r, int code, const char *msg)
{
    if (r->err && r->errlen)
        snprintf(r->err, r->errlen, "%s: %s", r->f->name[0] ? r->f->name : "workflow", msg);
    return code;
}

/* The engine starts t on h: its end comes when the host's speed model has
 * done its work. */
static int sim_start(void *ctx, size_t t, size_t h)
{
    simrun *r = ctx;
    double end;
    int rc = tb_speed_finish_time(&r->cur[h], r->e.now + r->H.task_overhead,
                                  tb__flow_engine_work(&r->e, t, h), &end);
    if (rc)
        return simfail(r, rc, "a host's speed model failed");
    if (!isfinite(end))
        return simfail(r, TB_ERR_RANGE, "a task never ends (speed 0 forever)");
    return tb_sim_queue_push(&r->q, end, EV_END, (int)h, t);
}

/* Data leaves now and is there after the network's time.  No event: the
 * host that waits for it wakes up when its last input arrives. */
static double sim_send(void *ctx, size_t e, size_t from, size_t to)
{
    simrun *r = ctx;
    return r->e.now + tb__flow_comm(&r->H, from, to, r->f->sdata[e]);
}

static int sim_wake(void *ctx, size_t h, double at)
{
    simrun *r = ctx;
    return tb_sim_queue_push(&r->q, at, EV_WAKE, (int)h, 0);
}

static const tb__flow_engine_ops sim_ops = {sim_start, sim_send, sim_wake};

static int on_speed(simrun *r, size_t h, double now)
{
    tb_speed_cursor *c = &r->cur[h];
    int rc = tb_speed_cursor_seek(c, now);
    if (rc)
        return simfail(r, rc, "a host's speed model failed");
    if (isfinite(c->t1) && (rc = tb_sim_queue_push(&r->q, c->t1, EV_SPEED, (int)h, 0)))
        return rc;
    return tb__flow_engine_speed(&r->e, h, c->speed, now);
}

static int run(simrun *r)
{
    int rc;
    tb__flow_engine *e = &r->e;
    for (size_t h = 0; h < r->m; h++) {
        if ((rc = tb_speed_cursor_init(&r->cur[h], r->plat, h)))
            return simfail(r, rc, "a host has an unusable speed model");
        r->has_cursor[h] = 1;
        tb_speed_cursor *c = &r->cur[h];
        if ((rc = tb_speed_cursor_seek(c, 0)))
            return rc;
        r->H.speed[h] = c->speed;
        if (isfinite(c->t1) && (rc = tb_sim_queue_push(&r->q, c->t1, EV_SPEED, (int)h, 0)))
            return rc;
    }
    if ((rc = tb__flow_engine_begin(e, 0.0)))
        return rc;
    tb_sim_event ev;
    while (e->ndone < e->n && tb_sim_queue_pop(&r->q, &ev)) {
        size_t h = (size_t)ev.rank;
        switch (ev.type) {
        case EV_END:
            if (r->o->trace)
                tb_trace_complete(r->o->trace, (int)h, "task", r->f->id[ev.a], e->start[ev.a],
                                  ev.t);
            rc = tb__flow_engine_task_end(e, h, (size_t)ev.a, ev.t, 0.0, 0.0);
            break;
        case EV_WAKE:
            rc = tb__flow_engine_wake(e, h, ev.t);
            break;
        default:
            rc = on_speed(r, h, ev.t);
            break;
        }
        if (rc)
            return rc;
    }
    if (e->ndone < e->n)
        return simfail(r, TB_ERR_STATE, "the simulation stopped with tasks left (a bug)");
    return TB_OK;
}

static void free_run(simrun *r)
{
    for (size_t h = 0; r->cur && h < r->m; h++)
        if (r->has_cursor[h])
            tb_speed_cursor_free(&r->cur[h]);
    free(r->cur);
    free(r->has_cursor);
    tb__flow_engine_free(&r->e);
    tb_sim_queue_free(&r->q);
    tb_flow_hosts_free(&r->H);
}

int tb_flow_simulate(const tb_flow *f, const tb_platform *plat, const tb_flow_sim_opts *o,
                     tb_flow_sim_result *res, tb_flow_schedule *sched_out, char *err,
                     size_t errlen)
{
    static const tb_flow_sim_opts defaults = {sizeof defaults, NULL, NULL, 0, NULL, 0.0};
    if (!f || !plat || !res || !f->final)
        return TB_ERR_INVALID;
    if (o && o->size < sizeof *o)
        return tb__errf(err, errlen, TB_ERR_INVALID,
                        "options not set up by tb_flow_sim_opts_init");
    simrun r;
    memset(&r, 0, sizeof r);
    memset(res, 0, sizeof *res);
    r.f = f;
    r.plat = plat;
    r.o = o ? o : &defaults;
    r.err = err;
    r.errlen = errlen;
    r.m = plat->nhosts;
    double c0 = tb_process_cputime();
    tb_flow_trigger trig;
    if (tb_flow_trigger_parse(r.o->trigger ? r.o->trigger : "static", &trig, err, errlen))
        return TB_ERR_INVALID;
    if (f->q && f->q != plat->nhosts) {
        char msg[128];
        snprintf(msg, sizeof msg, "the workflow has costs for %zu hosts, the platform has %zu",
                 f->q, plat->nhosts);
        return simfail(&r, TB_ERR_INVALID, msg);
    }
    tb_sim_queue_init(&r.q);
    int rc = tb_flow_hosts_init(&r.H, f, plat);
    if (!rc && !(r.o->task_overhead >= 0 && isfinite(r.o->task_overhead)))
        rc = TB_ERR_RANGE;
    if (!rc)
        r.H.task_overhead = r.o->task_overhead;
    if (!rc) {
        r.cur = calloc(r.m ? r.m : 1, sizeof *r.cur);
        r.has_cursor = calloc(r.m ? r.m : 1, 1);
        rc = r.cur && r.has_cursor ? TB_OK : TB_ERR_NOMEM;
    }
    if (!rc)
        rc = tb__flow_engine_init(&r.e, f, &r.H, r.o->sched, r.o->trigger, r.o->seed, &sim_ops,
                                  &r, err, errlen);
    if (rc) {
        free_run(&r);
        return simfail(&r, rc, "out of memory");
    }
    rc = run(&r);
    tb__flow_engine *e = &r.e;
    res->planned = e->planned;
    res->reschedules = e->reschedules;
    res->speed_changes = e->speed_changes;
    res->sched_cpu_s = e->sched_cpu_s;
    res->transfers = e->transfers;
    res->events = r.q.popped;
    res->makespan = f->n && !rc ? e->last_end - e->first_start : 0.0;
    if (!rc && sched_out && sched_out->ntasks == f->n) {
        memcpy(sched_out->host, e->host, f->n * sizeof *e->host);
        memcpy(sched_out->start, e->start, f->n * sizeof *e->start);
        memcpy(sched_out->finish, e->finish, f->n * sizeof *e->finish);
        sched_out->makespan = res->makespan;
    }
    free_run(&r);
    res->sim_cpu_s = tb_process_cputime() - c0;
    return rc;
}

void tb_flow_sim_opts_init(tb_flow_sim_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

int tb_flow_sim_result_json(const tb_flow_sim_result *r, const char *extra, tb_buf *out)
{
    if (!r || !out)
        return TB_ERR_INVALID;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return TB_ERR_NOMEM;
    int bad = 0;
    bad |= tb__json_num(o, "makespan", r->makespan);
    bad |= tb__json_num(o, "planned", r->planned);
    bad |= tb__json_int(o, "reschedules", r->reschedules);
    bad |= tb__json_int(o, "speed_changes", r->speed_changes);
    bad |= tb__json_u64(o, "events", r->events);
    bad |= tb__json_u64(o, "transfers", r->transfers);
    bad |= tb__json_num(o, "sched_cpu_s", r->sched_cpu_s);
    bad |= tb__json_num(o, "sim_cpu_s", r->sim_cpu_s);
    return tb__json_emit(o, bad, extra, out);
}
