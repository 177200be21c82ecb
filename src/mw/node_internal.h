/*
 * node_internal.h - what the files of the node actor share: a master's
 * state, what a rank is to a master, and the functions one role calls in
 * another.  The actor is split by role:
 *   node.c     the actor's handlers, a master's making and freeing, the
 *              node's API for the drivers (mw_internal.h)
 *   worker.c   a worker: compute a task message's records, answer RESULT
 *   master.c   a master: dispatch, results and their delivery, failures, the
 *              counts of masters, its messages
 *   request.c  masters asking each other for tasks: REQ, GIVE, REFUSE, and
 *              multi:K's spells
 *   dynamic.c  the dynamic policies: promotion, fan-out, measuring periods,
 *              merging back, a child's return
 *   tree.c     the end of a run: DONE and FINISH along the static masters'
 *              tree, STOP along the workers', the REDUCE of partials
 */
#ifndef TB_MW_NODE_INTERNAL_H
#define TB_MW_NODE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "mw/chunk.h"
#include "mw/mw_internal.h"

/* dynamic: how many of a master's last task round trips it keeps, to judge
 * whether a worker is among its slow ones (dynamic.c). */
enum { TB__MW_RT_RECENT = 64 };

struct tb__mw_master {
    int k;
    int is_root;
    tb__queue own_q;
    tb__queue *q;          /* own_q, or the user's bag on the root */
    int parent;            /* dynamic child: the master that made it; else -1 */
    /* The ranks the per-rank arrays below cover, lo .. lo + span - 1 ([S]):
     * its group's, or a child's (itself and every rank its parent gave it).
     * No other rank is ever its worker or its child, so a master's memory
     * is in proportion to its workers, not to the run (a fan-out makes a
     * child per eight idle workers). */
    int lo, span;
    unsigned char *own;    /* [S]: what each rank is to this master (OWN_*): tb__mw_own */
    int *dest;             /* [S]: the child a leaving worker goes to */
    int *idle;             /* stack of idle workers [S] */
    int nidle;
    int nbusy;             /* OWN_BUSY: computing this master's tasks */
    int nleaving;          /* OWN_LEAVING: the same, then they join a child */
    int narriving;         /* OWN_ARRIVING: ours once the parent frees them */
    int nchildren;         /* OWN_CHILD: masters this one made */
    int *R;                /* request targets, in the order they are tried */
    int nR;
    size_t capR;
    int *win;              /* overload measure: arrivals after the last assignments */
    int winlen, winpos, winfill, wincap; /* a ring of winlen, allocated as it fills */
    long winsum;
    /* predictive policy: what the master measures of itself and its workers */
    double *sent_at;       /* [S]: when the worker got its current task message */
    double rt;             /* mean round trip of a task message, seconds */
    double rt_recent[TB__MW_RT_RECENT]; /* dynamic: the last round trips (a ring) */
    uint64_t rt_n;         /* round trips measured (the ring's next slot, mod its size) */
    int rt_last_w;         /* the worker of the last one */
    double handler;        /* mean time in the handler of a result */
    double recv;           /* mean receive overhead (gaps between back-to-back handlers) */
    double last_exit;      /* end of the previous result handler */
    int last_waiting;      /* messages waited at its end */
    uint64_t samples;
    int eager;             /* made by a fan-out, no result yet: fan out from 16 idle
                              workers without waiting for a message to wait */
    /* dynamic:wait: the workers' waiting times over the current period */
    double *wait_min;      /* [S]: each worker's shortest wait (no queueing) */
    double queue_sum;      /* sum of (wait - wait_min) this period */
    double ideal_sum;      /* sum of (compute + wait_min) this period */
    int period_n;          /* results this period */
    double period_start;
    double busy_sum;       /* time in result handlers this period */
    int want_split;        /* the last period says: promote the next worker */
    int merging;           /* gave its queue back; returns once its workers finish */
    int merged_below;      /* a child merged back: no more fan-out (one master keeps up) */
    int periods;           /* dynamic: periods measured (the first, spanning the start, is not judged) */
    int resume;            /* a timer will go on handing out first tasks */
    int masters_max;       /* root, at the end: most masters at once */
    tb_mw_masters_point *mtraj; /* root: the changes of the master count (in time order
                              once the run is over) */
    size_t mtraj_len, mtraj_cap;
    tb_buf mc;             /* other masters: changes seen in this subtree, i32 delta
                              and f64 time each, to go up with RETURN or DONE */
    uint32_t mc_n;
    int rflag;
    double req_at;         /* when the outstanding request was sent */
    /* multi:K (K > 2): what this master knows of each static master k:
     * kn[k] = 0 nothing, else 1 + 2 e + d: in its e-th spell of tasks (e counts
     * the answers with tasks it received) it had tasks (d = 0) or had run out
     * (d = 1); a larger value is newer.  inR[k]: k is a request target. */
    uint32_t *kn;
    unsigned char *inR;
    uint32_t epoch;        /* answers with tasks this master has received */
    uint32_t *deferred_e;  /* the deferred requesters' epochs */
    int parent_refused;    /* a child: its parent refused it and has not given it tasks since */
    unsigned char *child_dry; /* dynamic: [S] this child asked and was refused since it
                              was last given tasks (or said HAVE): a refusal need not
                              name it */
    int have_initial;      /* the root's initial share has arrived */
    int *deferred;         /* requests that came before the initial share */
    uint32_t *deferred_w;  /* and the requesters' worker counts */
    int ndeferred;
    tb__chunker ch;        /* how many tasks go in a message (cfg's chunk rule) */
    tb_buf msg;            /* message being built */
    tb_buf fwd;            /* results waiting to go to the root */
    uint32_t fwd_n;
    uint64_t fwd_sent;     /* records this master and its returned children sent to the root */
    int failed;
    uint64_t fail_task;
    int fail_rank;
    int fail_code;
    int abort_sent;
    int done_sent;
    int hold_done; /* a result is being handled: no DONE before its records */
    int ndone;             /* static masters: masters of its DONE subtree done */
    int done_up;           /* static masters: DONE sent up the tree */
    uint64_t sub_sent;     /* static masters: records its DONE subtree sent the root */
    uint64_t fwd_expect;   /* root: records the finished masters say they sent it */
    uint64_t fwd_got;      /* root: records received in FWD messages */
    uint64_t results;      /* root: results delivered */
    double last_counter;
};

/* First byte of a GIVE message. */
enum { GIVE_ANSWER = 0, GIVE_INITIAL = 1, GIVE_INITIAL_PART = 2, GIVE_BACK = 3 };

/* What a rank is to a master. */
enum {
    OWN_NONE = 0, /* not ours */
    OWN_IDLE,     /* ours, waiting for a task */
    OWN_BUSY,     /* computing our task */
    OWN_LEAVING,  /* computing our task; then it joins the child dest[] */
    OWN_ARRIVING, /* computing our parent's task; ours when the parent frees it */
    OWN_CHILD     /* a master we made */
};

/* Rank r is in master m's range (tb__mw_master.lo, span). */
static inline int tb__mw_in(const tb__mw_master *m, int r)
{
    return r >= m->lo && r - m->lo < m->span;
}
/* What rank r is to m (OWN_NONE outside its range). */
static inline int tb__mw_own(const tb__mw_master *m, int r)
{
    return tb__mw_in(m, r) ? m->own[r - m->lo] : OWN_NONE;
}
/* The per-rank entries of rank r, which must be in m's range. */
#define TB__MW_AT(m, arr, r) ((m)->arr[(r) - (m)->lo])
/* Append rank r to m's request targets. */
static inline int tb__mw_add_target(tb__mw_master *m, int r)
{
    if (tb_grow(&m->R, &m->capR, (size_t)m->nR + 1, sizeof *m->R, 8) != TB_OK)
        return TB_ERR_NOMEM;
    m->R[m->nR++] = r;
    return TB_OK;
}

/* dynamic:wait: a worker's shortest wait is not known yet, or its next
 * report is to be skipped. */
#define WAIT_NONE (-1.0)
#define WAIT_SKIP (-2.0)

/* The timer that goes on handing out first tasks (master_dispatch_idle). */
enum { TIMER_DISPATCH = 1 };

static inline int tb__mw_self_rank(const tb__mw_node *n) { return n->base.rank; }

/* Where results, failures and counts go: the parent of a dynamic child, else
 * the root. */
static inline int tb__mw_up_rank(const tb__mw_node *n)
{
    return n->master->parent >= 0 ? n->master->parent : 0;
}

/* Exponentially weighted mean: quick to start, then about the last 32. */
static inline double tb__mw_ewma(double mean, double x, uint64_t k)
{
    double a = k < 32 ? 1.0 / (double)(k + 1) : 1.0 / 32.0;
    return mean + a * (x - mean);
}

/* A handler's rare cases out of line, so that the common case's function
 * stays small (no frame to build: a tail call). */
#if defined(__GNUC__)
#define TB__MW_COLD __attribute__((noinline, cold))
#else
#define TB__MW_COLD
#endif

/* node.c */
void tb__mw_master_free(tb__mw_master *m);

/* worker.c: a TASK message (or a master's task message to itself) arrives;
 * a task is computed (the actor's `computed` handler). */
int tb__mw_worker_begin(tb__mw_node *n, int src, const void *data, size_t len);
int tb__mw_worker_computed(tb_actor *a, uint64_t job, int status);

/* master.c */
void tb__mw_master_counter_now(tb__mw_node *n, int force);
int tb__mw_master_workers(const tb__mw_master *m);
int tb__mw_master_dispatch_idle(tb__mw_node *n);
int tb__mw_master_flush_fwd(tb__mw_node *n);
int tb__mw_master_result(tb__mw_node *n, int src, const void *data, size_t len);
int tb__mw_master_count(tb__mw_node *n, int delta, double t);
int tb__mw_master_take_counts(tb__mw_node *n, tb_buf *in);
void tb__mw_root_order_counts(tb__mw_node *n);
int tb__mw_master_start(tb__mw_node *n);
int tb__mw_master_message(tb__mw_node *n, int src, int tag, const void *data, size_t len);

/* request.c */
int tb__mw_master_request_now(tb__mw_node *n);
void tb__mw_master_drop_target(tb__mw_master *m, int r);
int tb__mw_master_answer_request(tb__mw_node *n, int src, uint32_t workers, uint32_t epoch);
int tb__mw_master_give(tb__mw_node *n, int src, const void *data, size_t len);
int tb__mw_master_learn_spells(tb__mw_node *n, const void *data, size_t len);
int tb__mw_master_learn_targets(tb__mw_node *n, const void *data, size_t len);

/* dynamic.c */
int tb__mw_master_fan_out(tb__mw_node *n);
void tb__mw_master_measure(tb__mw_node *n, int w, double entry);
int tb__mw_master_should_promote(tb__mw_node *n, int p);
int tb__mw_master_promote(tb__mw_node *n, int p);
void tb__mw_master_acquired(tb__mw_master *m, int w);
int tb__mw_master_take_idle(tb__mw_node *n, tb_buf *in, uint32_t cnt);
int tb__mw_master_wait_stats(tb__mw_node *n, int src, double wait, double comp);
int tb__mw_master_predict_period(tb__mw_node *n);
int tb__mw_child_return(tb__mw_node *n);
int tb__mw_master_on_return(tb__mw_node *n, int src, const void *data, size_t len);

/* tree.c */
int tb__mw_stop_relay(tb_actor *a, int32_t status, const unsigned char *list, uint32_t cnt,
                      tb_buf *msg, int *sent);
int tb__mw_node_end(tb__mw_node *n, int up, int kids);
int tb__mw_node_reduce(tb__mw_node *n, int src, const void *data, size_t len);
int tb__mw_master_pass_finish(tb__mw_node *n, int32_t status);
int tb__mw_root_maybe_finish(tb__mw_node *n);
int tb__mw_master_report_done(tb__mw_node *n);
int tb__mw_master_check_done_now(tb__mw_node *n);

/*
 * Three questions a master asks after every result, with their usual
 * answers (no trace; no one to ask for work, or tasks still queued; workers
 * still busy) settled here, inline, before a call: they are on the path of
 * every task (bench/dispatch-instr).
 */

/* The trace's queue and busy-worker counters, at most every millisecond
 * unless forced. */
static inline void tb__mw_master_counter(tb__mw_node *n, int force)
{
    if (n->trace)
        tb__mw_master_counter_now(n, force);
}

/* Out of tasks and with a request target: ask it (one request at a time). */
static inline int tb__mw_master_maybe_request(tb__mw_node *n)
{
    const tb__mw_master *m = n->master;
    if (m->nR == 0 || m->failed || m->rflag || !m->have_initial || tb__queue_count(m->q) > 0)
        return TB_OK;
    return tb__mw_master_request_now(n);
}

/* Is this master's share done?  Then tell the parent or the root. */
static inline int tb__mw_master_check_done(tb__mw_node *n)
{
    const tb__mw_master *m = n->master;
    if (m->nbusy > 0 || m->done_sent || m->hold_done)
        return TB_OK;
    return tb__mw_master_check_done_now(n);
}

#endif /* TB_MW_NODE_INTERNAL_H */
