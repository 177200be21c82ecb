/*
 * engine.h - the decisions of a running workflow (S2), shared by the
 * simulator (simulate.c, virtual time) and the MPI runner (run.c, wall
 * time).  One path, two substrates: whatever drives it, the engine decides
 * the same way.
 *
 * The engine holds the plan, each host's queue of pending tasks (by planned
 * start; a host runs them one at a time and never overtakes), where every
 * edge's data is, the trigger, and the scheduler's view of the hosts'
 * speeds.  The substrate tells it what happened:
 *
 *     tb__flow_engine_begin     the first schedule, at time `now`
 *     tb__flow_engine_task_end  a task ended on its host (with the speed
 *                               the substrate measured, if it measures)
 *     tb__flow_engine_speed     a host's speed changed (simulated speeds)
 *     tb__flow_engine_arrived   an edge's data reached the host it was sent
 *                               to (real transfers; simulated ones know
 *                               their arrival time when they leave)
 *     tb__flow_engine_wake      a host's wake-up time came
 *     tb__flow_engine_task_failed  a task failed; it goes to another host
 *
 * and the engine acts through three callbacks: start a task on a host, send
 * an edge's data from one host to another, wake a host at a time.
 */
#ifndef TB_FLOW_ENGINE_H
#define TB_FLOW_ENGINE_H

#include "flow/flow_internal.h"

typedef struct tb__flow_engine_ops {
    /* Start task t on host h now. */
    int (*start)(void *ctx, size_t t, size_t h);
    /* Edge e's data leaves host `from` for host `to` now.  Returns when it
     * will be there, or INFINITY when the substrate reports the arrival
     * (tb__flow_engine_arrived). */
    double (*send)(void *ctx, size_t e, size_t from, size_t to);
    /* Call tb__flow_engine_wake(h) at time `at` (NULL: arrivals are events,
     * so no host ever waits for a time). */
    int (*wake)(void *ctx, size_t h, double at);
} tb__flow_engine_ops;

typedef struct tb__flow_engine {
    const tb_flow *f;
    tb_flow_hosts *H;       /* speeds: the scheduler's view, updated here */
    const tb_flow_sched_ops *sched;
    uint64_t seed;
    tb_flow_trigger trig;
    const tb__flow_engine_ops *ops;
    void *ctx;
    tb_flow_schedule plan;
    size_t n, m, nedges;
    double now;
    int stopped;            /* no task starts any more */

    uint8_t *state;         /* per task: TB_FLOW_* */
    int32_t *host;          /* where it runs or ran */
    double *start, *finish;
    double *expect;         /* scheduler's view: finish, or expected end if running */
    int32_t *edge_host;     /* where each edge's data was sent (-1: nowhere) */
    double *edge_arr;
    uint32_t *topo_pos;     /* position in the topological order */
    uint32_t *its_left;     /* per set: unfinished tasks */

    /* per host */
    uint32_t *qoff;         /* queues: planned pending tasks, CSR by host */
    uint32_t *qtask;
    uint32_t *qpos;         /* next entry of each queue */
    long *running;          /* task or -1 */
    double *acc_work;       /* work done by the running task up to acc_t */
    double *acc_t;
    double *wake_at;        /* earliest pending wake-up of each host (inf: none) */

    size_t ndone;
    double first_start, last_end;
    /* counters */
    double planned;         /* makespan of the first schedule */
    long reschedules, speed_changes;
    double sched_cpu_s;
    uint64_t transfers;

    char *err;
    size_t errlen;
} tb__flow_engine;

/* Set up e for f on hosts H (speeds filled in; H stays the caller's, the
 * engine updates its speeds).  trigger: as tb_flow_trigger_parse. */
int tb__flow_engine_init(tb__flow_engine *e, const tb_flow *f, tb_flow_hosts *H,
                         const tb_flow_sched_ops *sched, const char *trigger, uint64_t seed,
                         const tb__flow_engine_ops *ops, void *ctx, char *err, size_t errlen);
void tb__flow_engine_free(tb__flow_engine *e);

/* Work of task t on host h in seconds at speed 1 (per-host costs were
 * measured at the base speed). */
double tb__flow_engine_work(const tb__flow_engine *e, size_t t, size_t h);

/* Before tb__flow_engine_begin: task t is already done, its output on
 * host h (a resumed run).  The first schedule then plans the rest. */
void tb__flow_engine_mark_done(tb__flow_engine *e, size_t t, size_t h, double at);
int tb__flow_engine_begin(tb__flow_engine *e, double now);
/* Task t ended on host h.  measured > 0: the speed the substrate measured
 * for this task (its work over its time); when it differs from the
 * engine's view by more than rel_change (relative), it counts as a speed
 * change of h, seen by the trigger with the task's end. */
int tb__flow_engine_task_end(tb__flow_engine *e, size_t h, size_t t, double now, double measured,
                             double rel_change);
int tb__flow_engine_speed(tb__flow_engine *e, size_t h, double speed, double now);
int tb__flow_engine_arrived(tb__flow_engine *e, size_t edge, size_t to, double now);
int tb__flow_engine_wake(tb__flow_engine *e, size_t h, double now);
/* Task t failed on host h: pending again, first in the queue of another
 * host (the one free soonest), or of h when there is no other. */
int tb__flow_engine_task_failed(tb__flow_engine *e, size_t h, size_t t, double now);
/* Reschedule now, whatever the trigger (tests, and a substrate that wants to). */
int tb__flow_engine_reschedule(tb__flow_engine *e, double now);

#endif /* TB_FLOW_ENGINE_H */
