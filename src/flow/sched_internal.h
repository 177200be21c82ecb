/*
 * sched_internal.h - the machinery every list scheduler shares: per-host
 * timelines with an index of idle gaps, data-ready times under a running
 * workflow's state, a ready heap, and the average costs used by ranks.
 */
#ifndef TB_FLOW_SCHED_INTERNAL_H
#define TB_FLOW_SCHED_INTERNAL_H

#include "flow/flow_internal.h"

/* Idle gaps of one host before its last task, sorted by start, with the
 * largest length per block of TB__GAP_BLOCK gaps so a search for a gap of
 * a given length skips whole blocks. */
#define TB__GAP_BLOCK 32
typedef struct tb__gaps {
    double *start, *end;
    size_t n, cap;
    double *bmax; /* per block */
    size_t bcap;
} tb__gaps;

/* A predecessor's data as seen from the task being placed: generic value
 * for any other host of cluster c is g[c]; on up to two hosts it is
 * available earlier (its own host, a host it was already sent to). */
typedef struct tb__pred {
    double *g;     /* nclusters values */
    int32_t sh[2]; /* special hosts (-1 none) */
    double sv[2];
} tb__pred;

typedef struct tb__sched {
    const tb_flow *f;
    const tb_flow_hosts *H;
    const tb_flow_state *st;
    tb_flow_schedule *out;
    size_t m, C;
    double now;
    int insertion;     /* HEFT-style insertion into idle gaps */

    double *ready;     /* per host: end of its last task (>= now) */
    double *lastend;   /* per host: end of its last gap (-inf: none) */
    double *maxgap;    /* per host: longest gap (0: none) */
    tb__gaps *gaps;
    uint8_t *placed;   /* per task */

    /* data-ready scratch */
    uint32_t *stamp;   /* per host */
    uint32_t cur;
    double *ovval;     /* per host, valid where stamp == cur */
    int32_t *ovhost;   /* hosts with a special value for the current task */
    size_t nov, capov;
    double *gc;        /* per cluster: data-ready time on a host without special value */
    size_t *gcarg;     /* per cluster: the predecessor that sets it */
    tb__pred *pr;
    double *prg;
    size_t cappr;

    /* averages for ranks */
    double *inv_speed_mean; /* unused when the workflow has costs */
    double avgL, avgG;

    /* ready heap of tasks keyed by prio (largest first), ties by index */
    uint32_t *heap;
    size_t nheap;
    const double *prio;
    uint32_t *npend;   /* per task: predecessors not placed yet */
} tb__sched;

int tb__sched_init(tb__sched *s, const tb_flow *f, const tb_flow_hosts *H, const tb_flow_state *st,
                   tb_flow_schedule *out, int insertion);
void tb__sched_free(tb__sched *s);

/* Mean execution time of t over the hosts and the mean transfer time of
 * data between distinct hosts (the rank averages of HEFT). */
double tb__sched_wbar(const tb__sched *s, size_t t);
static inline double tb__sched_cbar(const tb__sched *s, double data)
{
    return s->avgL + data * s->avgG;
}
/* Upward ranks (HEFT) and downward ranks (CPOP) into n-arrays. */
void tb__sched_rank_up(const tb__sched *s, double *rank);
void tb__sched_rank_down(const tb__sched *s, double *rank);

/* Prepare the data-ready times of task t on every host: afterwards
 * tb__sched_drt(s, h) is the time all its inputs can be on host h. */
int tb__sched_prepare(tb__sched *s, size_t t);
static inline double tb__sched_drt(const tb__sched *s, size_t h)
{
    if (s->stamp[h] == s->cur)
        return s->ovval[h];
    return s->gc[s->H->cluster[h]];
}
/* Earliest start of a task of duration dur on host h, no earlier than drt. */
double tb__sched_est(const tb__sched *s, size_t h, double drt, double dur);
/* Place task t on h at start (from tb__sched_est with the same dur). */
int tb__sched_place(tb__sched *s, size_t t, size_t h, double start, double dur);
/* The best host by earliest finish (plus bias[h] if bias): ties by host
 * index.  Needs tb__sched_prepare(s, t). */
size_t tb__sched_best_eft(const tb__sched *s, size_t t, const double *bias, double *start,
                          double *dur);

/* Ready heap over the pending tasks, by prio (larger first, ties by
 * smaller index).  pop returns -1 when empty. */
int tb__sched_heap_start(tb__sched *s, const double *prio);
long tb__sched_heap_pop(tb__sched *s);
/* After placing t: its successors whose predecessors are all placed enter
 * the heap. */
void tb__sched_release(tb__sched *s, size_t t);

/* Makespan of out (latest finish minus earliest start). */
void tb__sched_finish(tb__sched *s);

#endif /* TB_FLOW_SCHED_INTERNAL_H */
