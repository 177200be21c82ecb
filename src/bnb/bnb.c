/*
 * bnb.c - hierarchical master-worker branch-and-bound (S5): the supervisor,
 * master and worker actors over the transport interface, the group layout,
 * and the public API (MPI and simulated runs, the sequential search).
 *
 * Why not the mw runtime: mw's tasks are a bag known in advance, each
 * computed once into a result for rank 0; here a task's result is more
 * tasks and a better incumbent, the queue is ordered by bound and pruned,
 * and the supervisor balances queues between groups.  What mw and bnb share
 * is the transport (MPI or simulated) and the actor model; see
 * docs/architecture.md.
 *
 * Messages (tags below).  Every subproblem travels in the wire form of
 * tb__bnb_pack_sub.  Channels that close (supervisor <-> master) carry in
 * their last message the number of messages sent before it, so that the
 * receiver finishes only when it has them all (simulated messages of
 * different sizes may overtake each other).
 *
 * Exactly once: a subproblem is held by one place at a time (a queue, a
 * task in flight, a GIVE or MOVE in flight, the supervisor's pool) and
 * leaves it only into the next.  The supervisor's lower bound and its
 * "nothing pending" test use a master's status only when it has seen every
 * MOVE sent to that master and received every GIVE that master sent, so a
 * subproblem in flight between groups is never missed.  Children's bounds
 * are at least their parent's, so a bound once valid stays valid.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "tenbin/bnb.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/refuse.h"
#include "bnb/bnb_internal.h"
#include "bnb/proto.h"
#include "run/agree.h"
#include "sim/sim.h"
#include "transport/transport.h"


enum { ROLE_SUP, ROLE_MASTER, ROLE_WORKER };
enum { JOB_STARTUP = 1, JOB_TASK = 2 };
enum { TIMER_STATUS = 1, TIMER_PROGRESS = 2 };

struct tb_bnb {
    MPI_Comm comm;
    int rank, size;
    const tb_platform *plat;
    const tb_bnb_ops *ops;
    void *ctx;
    double gap, task_time, node_cost, status_interval, wan_delay;
    int groups, sites, depth, startup, force_moves;
    size_t task_pad;
    size_t sub_pad; /* per subproblem returned or moved (tb_bnb_set_sub_pad) */
    tb_bnb_balance balance;
    FILE *progress;
    double progress_interval; /* s between progress lines (TENBIN_PROGRESS_INTERVAL) */
    tb_bnb_watch_fn watch;    /* tb_bnb_set_watch, or NULL */
    void *watch_arg;
    double watch_interval;
    char *trace_path;
    int ran;
    /* layout */
    int ngroups;
    int *group_of;   /* [size]: group of the rank, -1 for the supervisor */
    int *master_of;  /* [ngroups] */
    int *nworkers;   /* [ngroups] */
    /* results (rank 0) */
    tb_bnb_summary sum;
    tb_bnb_group *gstats;
    tb_buf sol;
};

/* A worker slot of a master: one of its workers, or itself. */
typedef struct slot {
    int rank;
    int busy;
    int stopped;  /* its WSTOP was sent */
    int final;    /* its WFINAL came */
    double bound; /* of the task it has */
} slot;

typedef struct mstat {
    int valid;
    uint64_t queued, inflight, tasks, nodes, gives_sent, moves_got;
    double lower, busy;
    uint32_t workers;
    int hungry;
} mstat;

typedef struct actor {
    tb_actor base; /* first */
    tb_bnb *b;
    int role;
    uint64_t last_nodes; /* nodes of the computation that just ran (simulated cost) */
    double t_end;        /* supervisor: when the last FINAL came */
    tb_trace *tr;        /* this rank's events (tb_bnb_set_trace_file), or NULL */
    double t_startup;    /* supervisor: when its start-up expansion began */
    uint32_t final_depth; /* supervisor: the deepest task depth a master ended with */
    tb__bnb_engine eng;  /* supervisor and master: the incumbent; supervisor: start-up */
    tb__bnb_engine weng; /* worker, and a master without workers: the tasks */
    tb_buf msg, out, res;
    /* worker (and a master without workers) */
    int master;
    tb__bnb_sub *tasks; /* the subproblems of the current task */
    size_t ntasks, captasks;
    uint64_t task_id;
    uint32_t levels;
    uint32_t nout;
    double t_start, free_since;
    int had_task;
    uint64_t w_tasks, w_nodes;
    double w_busy, w_idle, w_startup_idle;
    /* master */
    int group;
    slot *slots;
    int nslots, self;
    tb__bnb_heap q;
    uint32_t depth, batch; /* levels per task, subproblems per task */
    int auto_depth;
    double ewma;
    uint64_t next_id, m_tasks, m_nodes;
    double m_busy, m_idle, m_startup_idle;
    uint64_t gives_sent, moves_got, moved_in, moved_out;
    uint64_t to_sup, from_sup;
    int64_t stop_expect; /* -1 until STOP */
    int stopping, hungry_said, empty_said, dirty;
    /* supervisor */
    mstat *st;
    uint64_t *gives_recv, *moves_sent, *sent_to, *got_from;
    int64_t *final_expect;
    int *req_out, *finaled;
    tb_bnb_group *gs;
    tb__bnb_heap pool;
    int s_stopping, proven;
    double lower, final_lower;
    uint64_t s_nodes;
    double next_progress, next_watch; /* run times of the next line, the next watch */
    int stop_asked;                   /* the watch asked for the end */
    tb_bnb_watch_group *wg;           /* [ngroups]: the watch's groups */
} actor;

static double outward(const tb_bnb *b, double v)
{
    return b->ops->sense == TB_BNB_MAXIMIZE ? -v : v;
}

static int send_msg(actor *a, int dst, int tag)
{
    return tb_tp_send(&a->base, dst, tag, &a->msg);
}

/* Done: no more messages; a pending timer is cancelled (transport.h). */
static void close_actor(actor *a) { a->base.finished = 1; }

/* Append n zero bytes the receiver ignores (tb_bnb_set_task_pad and
 * tb_bnb_set_sub_pad: the message sizes of a program that ships more). */
static int pad(tb_buf *m, size_t n)
{
    if (n == 0)
        return TB_OK;
    TB_CHECK(tb_buf_reserve(m, n));
    memset(m->data + m->len, 0, n);
    m->len += n;
    return TB_OK;
}

static int set_timer(actor *a, double at, uint64_t id) { return tb_tp_timer(&a->base, at, id); }

/* ---- worker -------------------------------------------------------------- */

/* The expansion of a task (the computation of a worker, or of a master
 * without workers): survivors into a->out. */
static void clear_tasks(actor *a)
{
    for (size_t i = 0; i < a->ntasks; i++)
        free(a->tasks[i].data);
    a->ntasks = 0;
}

static int add_task(actor *a, tb__bnb_sub s)
{
    TB_CHECK(tb_grow(&a->tasks, &a->captasks, a->ntasks, sizeof *a->tasks, 8));
    a->tasks[a->ntasks++] = s;
    return TB_OK;
}

static int task_fn(void *arg)
{
    actor *a = arg;
    uint64_t n0 = a->weng.nodes;
    tb_buf_clear(&a->out);
    a->nout = 0;
    int rc = TB_OK;
    for (size_t i = 0; i < a->ntasks && rc == TB_OK; i++) {
        const tb__bnb_sub *t = &a->tasks[i];
        rc = tb__bnb_expand(&a->weng, t->data, t->len, t->bound, t->depth, a->levels, &a->out,
                            &a->nout);
    }
    clear_tasks(a);
    a->last_nodes = a->weng.nodes - n0;
    return rc;
}

/* Take task bytes (after the header) into a->tasks. */
static int read_task(actor *a, tb_buf *in)
{
    clear_tasks(a);
    uint64_t id;
    double inc;
    uint32_t levels, n;
    TB_CHECK(tb_buf_unpack_u64(in, &id));
    TB_CHECK(tb_buf_unpack_f64(in, &inc));
    TB_CHECK(tb_buf_unpack_u32(in, &levels));
    TB_CHECK(tb_buf_unpack_u32(in, &n));
    for (uint32_t i = 0; i < n; i++) {
        tb__bnb_sub sub;
        TB_CHECK(tb__bnb_unpack_sub(in, &sub));
        int rc = add_task(a, sub);
        if (rc != TB_OK) {
            free(sub.data);
            return rc;
        }
    }
    if (levels == 0 || n == 0)
        return TB_ERR_PARSE;
    a->task_id = id;
    a->levels = levels;
    tb__bnb_engine_offer(&a->weng, inc);
    a->weng.improved = 0;
    return TB_OK;
}

/* The result of the task just expanded, into m. */
static int pack_result(actor *a, tb_buf *m, double seconds)
{
    tb_buf_clear(m);
    TB_CHECK(tb_buf_pack_u64(m, a->task_id));
    TB_CHECK(tb_buf_pack_u32(m, a->levels));
    TB_CHECK(tb_buf_pack_u64(m, a->last_nodes));
    TB_CHECK(tb_buf_pack_f64(m, seconds));
    TB_CHECK(tb_buf_pack_f64(m, a->weng.inc));
    if (a->weng.improved)
        TB_CHECK(tb_buf_pack_bytes(m, a->weng.sol.data, (uint32_t)a->weng.sol.len));
    else
        TB_CHECK(tb_buf_pack_bytes(m, NULL, 0));
    a->weng.improved = 0;
    TB_CHECK(tb_buf_pack_u32(m, a->nout));
    TB_CHECK(tb_buf_append(m, a->out.data, a->out.len));
    return pad(m, (size_t)a->nout * a->b->sub_pad);
}

static int start_task(actor *a)
{
    double now = tb_tp_now(&a->base);
    a->w_idle += now - a->free_since;
    if (!a->had_task)
        a->w_startup_idle += now - a->free_since;
    a->had_task = 1;
    a->t_start = now;
    tb_compute c = {task_fn, a, -1.0, "task", a->task_id};
    return tb_tp_compute(&a->base, JOB_TASK, &c);
}

/* After a task: its counters, and its result into m. */
static int end_task(actor *a, tb_buf *m)
{
    double now = tb_tp_now(&a->base);
    double took = now - a->t_start;
    a->w_busy += took;
    a->w_tasks++;
    a->w_nodes += a->last_nodes;
    a->free_since = now;
    if (a->tr)
        TB_CHECK(tb_trace_complete_arg(a->tr, 0, "bnb", "task", a->t_start, now, "nodes",
                                       (int64_t)a->last_nodes));
    return pack_result(a, m, took);
}

static int worker_start(actor *a)
{
    a->free_since = tb_tp_now(&a->base);
    return TB_OK;
}

static int worker_message(actor *a, int src, int tag, const void *data, size_t len)
{
    tb_buf in;
    tb_buf_view(&in, data, len);
    if (tag == T_TASK && src == a->master) {
        TB_CHECK(read_task(a, &in));
        return start_task(a);
    }
    if (tag == T_WSTOP && src == a->master) {
        tb_buf *m = &a->msg;
        tb_buf_clear(m);
        TB_CHECK(tb_buf_pack_u64(m, a->w_tasks));
        TB_CHECK(tb_buf_pack_u64(m, a->w_nodes));
        TB_CHECK(tb_buf_pack_f64(m, a->w_busy));
        TB_CHECK(tb_buf_pack_f64(m, a->w_idle));
        TB_CHECK(tb_buf_pack_f64(m, a->w_startup_idle));
        TB_CHECK(send_msg(a, a->master, T_WFINAL));
        a->base.finished = 1;
        return TB_OK;
    }
    TB_LOG_ERR("branch-and-bound: worker %d: unexpected message '%s' (tag %d) from rank %d",
               a->base.rank, tb__bnb_tag_name(tag), tag, src);
    return TB_ERR_PARSE;
}

/* ---- master -------------------------------------------------------------- */

static int master_result(actor *a, int si, const void *data, size_t len);

static int master_status(actor *a)
{
    uint64_t inflight = 0;
    double lower = tb__bnb_heap_min_bound(&a->q);
    int idle = 0;
    for (int i = 0; i < a->nslots; i++) {
        if (a->slots[i].busy) {
            inflight++;
            if (a->slots[i].bound < lower)
                lower = a->slots[i].bound;
        } else {
            idle = 1;
        }
    }
    tb_buf *m = &a->msg;
    tb_buf_clear(m);
    TB_CHECK(tb_buf_pack_u64(m, a->q.n));
    TB_CHECK(tb_buf_pack_u64(m, inflight));
    TB_CHECK(tb_buf_pack_f64(m, lower));
    TB_CHECK(tb_buf_pack_u64(m, a->m_tasks));
    TB_CHECK(tb_buf_pack_u64(m, a->m_nodes));
    TB_CHECK(tb_buf_pack_f64(m, a->m_busy));
    TB_CHECK(tb_buf_pack_u32(m, (uint32_t)a->nslots));
    TB_CHECK(tb_buf_pack_u64(m, a->gives_sent));
    TB_CHECK(tb_buf_pack_u64(m, a->moves_got));
    TB_CHECK(tb_buf_pack_u8(m, (uint8_t)(a->q.n == 0 && idle)));
    a->dirty = 0;
    a->to_sup++;
    if (a->tr)
        TB_CHECK(tb_trace_counter(a->tr, "pending", "queued", tb_tp_now(&a->base), (double)a->q.n));
    return send_msg(a, 0, T_STATUS);
}

static void master_prune(actor *a)
{
    tb__bnb_heap_prune(&a->q, tb__bnb_cutoff(&a->eng), !isfinite(a->eng.inc));
}

static int master_offer(actor *a, double inc)
{
    if (!(inc < a->eng.inc))
        return TB_OK;
    tb__bnb_engine_offer(&a->eng, inc);
    master_prune(a);
    a->dirty = 1;
    return TB_OK;
}

/* Hand queued subproblems to idle slots; say so when the queue runs dry. */
static int master_feed(actor *a)
{
    if (a->stopping)
        return TB_OK;
    int idle = 0;
    for (int i = 0; i < a->nslots; i++) {
        slot *s = &a->slots[i];
        if (s->busy)
            continue;
        /* A batch: up to `batch` subproblems, and no more than a fair
         * part of the queue, so that other idle workers get some too. */
        uint64_t fair = 1 + a->q.n / (uint64_t)a->nslots;
        uint32_t want = a->batch < fair ? a->batch : (uint32_t)fair, got = 0;
        double low = INFINITY;
        tb_buf *m = &a->msg;
        tb_buf_clear(m);
        if (!a->self) {
            TB_CHECK(tb_buf_pack_u64(m, a->next_id));
            TB_CHECK(tb_buf_pack_f64(m, a->eng.inc));
            TB_CHECK(tb_buf_pack_u32(m, a->depth));
            TB_CHECK(tb_buf_pack_u32(m, 0)); /* the count, set below */
        }
        tb__bnb_sub sub;
        while (got < want && tb__bnb_heap_pop(&a->q, &sub)) {
            if (!(sub.bound < tb__bnb_cutoff(&a->eng))) {
                free(sub.data); /* the incumbent beat it meanwhile */
                continue;
            }
            if (sub.bound < low)
                low = sub.bound;
            got++;
            int rc;
            if (a->self) {
                rc = add_task(a, sub);
                if (rc != TB_OK)
                    free(sub.data);
            } else {
                rc = tb__bnb_pack_sub(m, sub.bound, sub.depth, sub.data, sub.len);
                free(sub.data);
            }
            TB_CHECK(rc);
        }
        if (got == 0) {
            idle = 1;
            break;
        }
        s->busy = 1;
        s->bound = low;
        uint64_t id = a->next_id++;
        a->dirty = 1;
        if (a->self) {
            a->task_id = id;
            a->levels = a->depth;
            tb__bnb_engine_offer(&a->weng, a->eng.inc);
            a->weng.improved = 0;
            TB_CHECK(start_task(a));
            continue;
        }
        for (int k = 0; k < 4; k++) /* the count, little-endian as tb_buf packs */
            m->data[8 + 8 + 4 + k] = (unsigned char)(got >> (8 * k));
        TB_CHECK(pad(m, a->b->task_pad));
        TB_CHECK(send_msg(a, s->rank, T_TASK));
    }
    /* Tell the supervisor at once when the group runs dry (it may move
     * work here) and when nothing is pending (the end may have come). */
    int busy = 0;
    for (int i = 0; i < a->nslots; i++)
        busy |= a->slots[i].busy;
    int empty = a->q.n == 0 && !busy;
    if (!idle)
        a->hungry_said = 0;
    if (!empty)
        a->empty_said = 0;
    if ((idle && !a->hungry_said) || (empty && !a->empty_said)) {
        a->hungry_said = idle;
        a->empty_said = empty;
        return master_status(a);
    }
    return TB_OK;
}

static int master_try_close(actor *a)
{
    if (!a->stopping || a->stop_expect < 0 || a->from_sup < (uint64_t)a->stop_expect)
        return TB_OK;
    int workers = 0;
    for (int i = 0; i < a->nslots; i++) {
        if (a->self) {
            if (a->slots[i].busy)
                return TB_OK;
        } else if (!a->slots[i].final) {
            return TB_OK;
        }
        workers++;
    }
    if (a->self) { /* its own counters are the group's */
        a->m_idle = a->w_idle + (tb_tp_now(&a->base) - a->free_since);
        a->m_startup_idle = a->w_startup_idle;
        if (!a->had_task)
            a->m_startup_idle = a->m_idle;
        a->m_busy = a->w_busy;
    }
    tb_buf *m = &a->msg;
    tb_buf_clear(m);
    TB_CHECK(tb_buf_pack_u64(m, a->to_sup));
    TB_CHECK(tb_buf_pack_u32(m, (uint32_t)workers));
    TB_CHECK(tb_buf_pack_u64(m, a->m_tasks));
    TB_CHECK(tb_buf_pack_u64(m, a->m_nodes));
    TB_CHECK(tb_buf_pack_f64(m, a->m_busy));
    TB_CHECK(tb_buf_pack_f64(m, a->m_idle));
    TB_CHECK(tb_buf_pack_f64(m, a->m_startup_idle));
    TB_CHECK(tb_buf_pack_u64(m, a->moved_in));
    TB_CHECK(tb_buf_pack_u64(m, a->moved_out));
    TB_CHECK(tb_buf_pack_u32(m, a->depth));
    TB_CHECK(send_msg(a, 0, T_FINAL));
    close_actor(a);
    return TB_OK;
}

static int master_stop_slot(actor *a, slot *s)
{
    if (a->self || s->stopped)
        return TB_OK;
    s->stopped = 1;
    tb_buf_clear(&a->msg);
    return send_msg(a, s->rank, T_WSTOP);
}

/* Adapt the depth of the next tasks to the target task time. */
static void master_adapt(actor *a, uint32_t levels, double seconds)
{
    if (!a->auto_depth || levels != a->depth)
        return;
    a->ewma = a->ewma < 0 ? seconds : 0.7 * a->ewma + 0.3 * seconds;
    double target = a->b->task_time;
    /* Short tasks: more subproblems per task while the queue has them to
     * spare (they are the best ones: the order stays best first), else one
     * level deeper (depth first inside a task may expand nodes that best
     * first never would); long tasks: fewer, then shallower. */
    uint64_t fair = 1 + a->q.n / (uint64_t)a->nslots;
    if (a->ewma < target / 3 && (a->depth < 64 || a->batch < 4096)) {
        if (a->batch < 4096 && a->batch < fair)
            a->batch *= 2;
        else if (a->depth < 64)
            a->depth++;
        a->ewma = -1;
    } else if (a->ewma > 3 * target && (a->depth > 1 || a->batch > 1)) {
        if (a->batch > 1)
            a->batch /= 2;
        else
            a->depth--;
        a->ewma = -1;
    }
}

static int master_result(actor *a, int si, const void *data, size_t len)
{
    slot *s = &a->slots[si];
    if (!s->busy) {
        TB_LOG_ERR("branch-and-bound: master %d: a result from rank %d, which has no task",
                   a->base.rank, s->rank);
        return TB_ERR_PARSE;
    }
    tb_buf in;
    tb_buf_view(&in, data, len);
    uint64_t id, nodes;
    uint32_t levels, n, slen;
    double seconds, inc;
    const void *sol;
    TB_CHECK(tb_buf_unpack_u64(&in, &id));
    TB_CHECK(tb_buf_unpack_u32(&in, &levels));
    TB_CHECK(tb_buf_unpack_u64(&in, &nodes));
    TB_CHECK(tb_buf_unpack_f64(&in, &seconds));
    TB_CHECK(tb_buf_unpack_f64(&in, &inc));
    TB_CHECK(tb_buf_unpack_bytes(&in, &sol, &slen));
    TB_CHECK(tb_buf_unpack_u32(&in, &n));
    s->busy = 0;
    a->m_tasks++;
    a->m_nodes += nodes;
    a->m_busy += seconds;
    a->dirty = 1;
    if (slen > 0 && inc < a->eng.inc) {
        /* A better solution: to the supervisor at once. */
        tb_buf *m = &a->msg;
        tb_buf_clear(m);
        TB_CHECK(tb_buf_pack_f64(m, inc));
        TB_CHECK(tb_buf_pack_bytes(m, sol, slen));
        a->to_sup++;
        TB_CHECK(send_msg(a, 0, T_INC_UP));
    }
    TB_CHECK(master_offer(a, inc));
    if (a->stopping) {
        TB_CHECK(master_stop_slot(a, s));
        return master_try_close(a);
    }
    double cut = tb__bnb_cutoff(&a->eng);
    for (uint32_t i = 0; i < n; i++) {
        tb__bnb_sub sub;
        TB_CHECK(tb__bnb_unpack_sub(&in, &sub));
        if (!(sub.bound < cut)) {
            free(sub.data);
            continue;
        }
        int rc = tb__bnb_heap_push(&a->q, sub);
        if (rc != TB_OK) {
            free(sub.data);
            return rc;
        }
    }
    master_adapt(a, levels, seconds);
    return master_feed(a);
}

static int master_start(actor *a)
{
    a->free_since = tb_tp_now(&a->base);
    a->stop_expect = -1;
    a->ewma = -1;
    TB_CHECK(master_status(a)); /* hungry: the supervisor knows it exists */
    a->hungry_said = 1;
    return set_timer(a, tb_tp_now(&a->base) + a->b->status_interval, TIMER_STATUS);
}

static int master_stop(actor *a, uint64_t expect)
{
    a->stopping = 1;
    a->stop_expect = (int64_t)expect;
    tb__bnb_heap_free(&a->q);
    for (int i = 0; i < a->nslots; i++)
        if (!a->slots[i].busy)
            TB_CHECK(master_stop_slot(a, &a->slots[i]));
    return master_try_close(a);
}

static int master_give(actor *a, uint64_t want)
{
    /* At most half the queue: the donor keeps work for its own workers. */
    uint64_t k = want < a->q.n / 2 ? want : a->q.n / 2;
    tb_buf *m = &a->msg;
    tb_buf_clear(m);
    TB_CHECK(tb_buf_pack_u32(m, (uint32_t)k));
    for (uint64_t i = 0; i < k; i++) {
        tb__bnb_sub sub;
        tb__bnb_heap_pop(&a->q, &sub);
        int rc = tb__bnb_pack_sub(m, sub.bound, sub.depth, sub.data, sub.len);
        free(sub.data);
        TB_CHECK(rc);
    }
    TB_CHECK(pad(m, (size_t)k * a->b->sub_pad));
    a->moved_out += k;
    a->gives_sent++;
    a->to_sup++;
    TB_CHECK(send_msg(a, 0, T_GIVE));
    return master_status(a);
}

static int master_message(actor *a, int src, int tag, const void *data, size_t len)
{
    tb_buf in;
    tb_buf_view(&in, data, len);
    if (src == 0) {
        if (tag != T_STOP)
            a->from_sup++;
        if (tag == T_INC_DOWN) {
            double v;
            TB_CHECK(tb_buf_unpack_f64(&in, &v));
            TB_CHECK(master_offer(a, v));
            return a->stopping ? master_try_close(a) : TB_OK;
        }
        if (tag == T_STOP) {
            uint64_t expect;
            TB_CHECK(tb_buf_unpack_u64(&in, &expect));
            return master_stop(a, expect);
        }
        if (a->stopping) { /* cannot happen: the supervisor stops when no move is in flight */
            TB_LOG_ERR("branch-and-bound: master %d: message %d after the stop", a->base.rank,
                       tag);
            return TB_ERR_STATE;
        }
        if (tag == T_MOVE) {
            uint32_t n;
            TB_CHECK(tb_buf_unpack_u32(&in, &n));
            for (uint32_t i = 0; i < n; i++) {
                tb__bnb_sub sub;
                TB_CHECK(tb__bnb_unpack_sub(&in, &sub));
                int rc = tb__bnb_heap_push(&a->q, sub);
                if (rc != TB_OK) {
                    free(sub.data);
                    return rc;
                }
            }
            a->moved_in += n;
            a->moves_got++;
            master_prune(a);
            a->hungry_said = 0;
            TB_CHECK(master_feed(a));
            return master_status(a);
        }
        if (tag == T_GIVE_REQ) {
            uint64_t want;
            TB_CHECK(tb_buf_unpack_u64(&in, &want));
            return master_give(a, want);
        }
    } else {
        int si = -1;
        for (int i = 0; i < a->nslots; i++)
            if (a->slots[i].rank == src)
                si = i;
        if (si >= 0 && !a->self && tag == T_RESULT)
            return master_result(a, si, data, len);
        if (si >= 0 && !a->self && tag == T_WFINAL) {
            uint64_t tasks, nodes;
            double busy, idle, sidle;
            TB_CHECK(tb_buf_unpack_u64(&in, &tasks));
            TB_CHECK(tb_buf_unpack_u64(&in, &nodes));
            TB_CHECK(tb_buf_unpack_f64(&in, &busy));
            TB_CHECK(tb_buf_unpack_f64(&in, &idle));
            TB_CHECK(tb_buf_unpack_f64(&in, &sidle));
            a->m_idle += idle;
            a->m_startup_idle += sidle;
            a->slots[si].final = 1;
            return master_try_close(a);
        }
    }
    TB_LOG_ERR("branch-and-bound: master %d: unexpected message '%s' (tag %d) from rank %d",
               a->base.rank, tb__bnb_tag_name(tag), tag, src);
    return TB_ERR_PARSE;
}

static int master_computed(actor *a)
{
    TB_CHECK(end_task(a, &a->res)); /* not a->msg: master_result sends with it */
    return master_result(a, 0, a->res.data, a->res.len);
}

/* ---- supervisor ---------------------------------------------------------- */

static int sup_send(actor *a, int g, int tag)
{
    a->sent_to[g]++;
    return send_msg(a, a->b->master_of[g], tag);
}

/* Shares of the groups, summing to 1. */
static void sup_shares(actor *a, double *share)
{
    const tb_bnb *b = a->b;
    int G = b->ngroups;
    double known = 0;
    int nknown = 0;
    for (int g = 0; g < G; g++)
        if (a->st[g].valid && a->st[g].nodes > 0 && a->st[g].busy > 0) {
            known += a->st[g].busy / (double)a->st[g].nodes;
            nknown++;
        }
    double mean_tpn = nknown ? known / nknown : 1.0;
    double sum = 0;
    for (int g = 0; g < G; g++) {
        double w = b->nworkers[g] > 0 ? b->nworkers[g] : 1;
        double tpn = mean_tpn;
        if (a->st[g].valid && a->st[g].nodes > 0 && a->st[g].busy > 0)
            tpn = a->st[g].busy / (double)a->st[g].nodes;
        share[g] = b->balance == TB_BNB_BALANCE_SEED ? w * tpn : w / tpn;
        sum += share[g];
    }
    for (int g = 0; g < G; g++)
        share[g] = sum > 0 ? share[g] / sum : 1.0 / G;
}

/* Deal the pool to the groups with weights w (best subproblems first, each
 * to the group furthest below its weight's share so far). */
static int sup_deal(actor *a, const double *w)
{
    const tb_bnb *b = a->b;
    int G = b->ngroups;
    double wsum = 0;
    for (int g = 0; g < G; g++)
        wsum += w[g];
    if (a->pool.n == 0 || !(wsum > 0))
        return TB_OK;
    tb_buf *bufs = calloc((size_t)G, sizeof *bufs);
    uint32_t *cnt = calloc((size_t)G, sizeof *cnt);
    int rc = bufs && cnt ? TB_OK : TB_ERR_NOMEM;
    uint64_t dealt = 0;
    tb__bnb_sub s;
    while (rc == TB_OK && tb__bnb_heap_pop(&a->pool, &s)) {
        dealt++;
        int best = -1;
        double bestv = -INFINITY;
        for (int g = 0; g < G; g++) {
            if (!(w[g] > 0))
                continue;
            double v = w[g] / wsum * (double)dealt - cnt[g];
            if (v > bestv) {
                bestv = v;
                best = g;
            }
        }
        rc = tb__bnb_pack_sub(&bufs[best], s.bound, s.depth, s.data, s.len);
        free(s.data);
        cnt[best]++;
    }
    for (int g = 0; g < G && rc == TB_OK; g++) {
        if (cnt[g] == 0)
            continue;
        tb_buf_clear(&a->msg);
        rc = tb_buf_pack_u32(&a->msg, cnt[g]);
        if (rc == TB_OK)
            rc = tb_buf_append(&a->msg, bufs[g].data, bufs[g].len);
        if (rc == TB_OK)
            rc = pad(&a->msg, (size_t)cnt[g] * b->sub_pad);
        if (rc == TB_OK) {
            a->moves_sent[g]++;
            a->st[g].queued += cnt[g];
            a->st[g].hungry = 0;
            rc = sup_send(a, g, T_MOVE);
        }
    }
    for (int g = 0; bufs && g < G; g++)
        tb_buf_free(&bufs[g]);
    free(bufs);
    free(cnt);
    return rc;
}

static int sup_stop(actor *a, int proven, double lower)
{
    a->s_stopping = 1;
    a->proven = proven;
    a->final_lower = lower;
    for (int g = 0; g < a->b->ngroups; g++) {
        tb_buf_clear(&a->msg);
        TB_CHECK(tb_buf_pack_u64(&a->msg, a->sent_to[g]));
        TB_CHECK(send_msg(a, a->b->master_of[g], T_STOP));
    }
    return TB_OK;
}

/* Is it over?  Only from statuses that have seen every move. */
static int sup_check(actor *a)
{
    if (a->s_stopping)
        return TB_OK;
    int G = a->b->ngroups;
    uint64_t pending = a->pool.n;
    double lower = tb__bnb_heap_min_bound(&a->pool);
    for (int g = 0; g < G; g++) {
        const mstat *s = &a->st[g];
        if (!s->valid || s->gives_sent != a->gives_recv[g] || s->moves_got != a->moves_sent[g] ||
            a->req_out[g])
            return TB_OK;
        pending += s->queued + s->inflight;
        if (s->lower < lower)
            lower = s->lower;
    }
    double inc = a->eng.inc;
    /* With a gap, subproblems that could beat the incumbent by less than
     * the gap were dropped: the bound can only say "within the cutoff". */
    double cut = tb__bnb_cutoff(&a->eng);
    double l = lower < inc ? lower : inc;
    if (a->b->gap > 0 && cut < l)
        l = cut;
    if (l > a->lower) {
        a->lower = l;
        if (a->tr && isfinite(l))
            TB_CHECK(tb_trace_counter(a->tr, "bounds", "bound", tb_tp_now(&a->base),
                                      outward(a->b, l)));
    }
    if (pending == 0 || (isfinite(inc) && !(a->lower < cut)) || a->stop_asked)
        return sup_stop(a, !(a->lower < inc), a->lower);
    return TB_OK;
}

/* A group is hungry: ask the groups above their share for the surplus. */
static int sup_balance(actor *a, int from)
{
    if (a->s_stopping)
        return TB_OK;
    int G = a->b->ngroups;
    double *share = malloc((size_t)G * sizeof *share);
    double *w = calloc((size_t)G, sizeof *w);
    if (!share || !w) {
        free(share);
        free(w);
        return TB_ERR_NOMEM;
    }
    sup_shares(a, share);
    uint64_t total = a->pool.n;
    int hungry = 0;
    for (int g = 0; g < G; g++) {
        total += a->st[g].queued;
        hungry |= a->st[g].valid && a->st[g].hungry;
    }
    int rc = TB_OK;
    if (a->pool.n > 0 && hungry) {
        for (int g = 0; g < G; g++)
            w[g] = a->st[g].hungry ? share[g] : 0;
        rc = sup_deal(a, w);
    } else if (hungry || a->b->force_moves) {
        for (int g = 0; g < G && rc == TB_OK; g++) {
            double target = (double)total * share[g];
            uint64_t q = a->st[g].queued;
            if (a->req_out[g] || q < 2 || (double)q <= target)
                continue;
            if (!hungry && g != from) /* forced moves: from the one that reported */
                continue;
            uint64_t want = (uint64_t)ceil((double)q - target);
            if (want < 1)
                want = 1;
            tb_buf_clear(&a->msg);
            rc = tb_buf_pack_u64(&a->msg, want);
            if (rc == TB_OK) {
                a->req_out[g] = 1;
                rc = sup_send(a, g, T_GIVE_REQ);
            }
        }
    }
    free(share);
    free(w);
    return rc;
}

/* Subproblems a group gave: to the groups below their share. */
static int sup_got_give(actor *a, int from)
{
    int G = a->b->ngroups;
    double *share = malloc((size_t)G * sizeof *share);
    double *w = calloc((size_t)G, sizeof *w);
    if (!share || !w) {
        free(share);
        free(w);
        return TB_ERR_NOMEM;
    }
    sup_shares(a, share);
    uint64_t total = a->pool.n;
    for (int g = 0; g < G; g++)
        total += a->st[g].queued;
    double wsum = 0;
    for (int g = 0; g < G; g++) {
        double deficit = (double)total * share[g] - (double)a->st[g].queued;
        w[g] = g != from && deficit > 0 ? deficit : 0;
        wsum += w[g];
    }
    if (!(wsum > 0)) /* nobody below its share: everybody but the giver */
        for (int g = 0; g < G; g++)
            w[g] = g != from || G == 1 ? share[g] : 0;
    int rc = sup_deal(a, w);
    free(share);
    free(w);
    return rc;
}

static int sup_incumbent(actor *a, double v, const void *sol, uint32_t len)
{
    if (!(v < a->eng.inc))
        return TB_OK;
    a->eng.inc = v;
    if (a->tr)
        TB_CHECK(tb_trace_counter(a->tr, "bounds", "incumbent", tb_tp_now(&a->base),
                                  outward(a->b, v)));
    tb_buf_clear(&a->eng.sol);
    TB_CHECK(tb_buf_append(&a->eng.sol, sol, len));
    if (a->s_stopping)
        return TB_OK;
    for (int g = 0; g < a->b->ngroups; g++) {
        tb_buf_clear(&a->msg);
        TB_CHECK(tb_buf_pack_f64(&a->msg, v));
        TB_CHECK(sup_send(a, g, T_INC_DOWN));
    }
    return TB_OK;
}

/* Start-up: expand best first until every worker can have `startup`
 * subproblems (or the tree is done). */
static int startup_fn(void *arg)
{
    actor *a = arg;
    const tb_bnb *b = a->b;
    uint64_t workers = 0;
    for (int g = 0; g < b->ngroups; g++)
        workers += (uint64_t)(b->nworkers[g] > 0 ? b->nworkers[g] : 1);
    uint64_t want = workers * (uint64_t)b->startup;
    uint64_t n0 = a->eng.nodes;
    /* Within one target task time: the supervisor is one process, and
     * while it expands every worker waits (simulated, its nodes cost the
     * node cost; for real, the clock). */
    double t0 = tb_wtime();
    int rc = TB_OK;
    while (rc == TB_OK && a->pool.n > 0 && a->pool.n < want) {
        double spent = b->plat ? (double)(a->eng.nodes - n0) * b->node_cost : tb_wtime() - t0;
        if (a->eng.nodes > n0 && spent >= b->task_time)
            break;
        if (a->pool.dive && isfinite(a->eng.inc)) {
            tb__bnb_heap_prune(&a->pool, tb__bnb_cutoff(&a->eng), 0);
            continue;
        }
        tb__bnb_sub s;
        tb__bnb_heap_pop(&a->pool, &s);
        rc = tb__bnb_expand_into(&a->eng, &s, &a->pool);
        free(s.data);
    }
    tb__bnb_heap_prune(&a->pool, tb__bnb_cutoff(&a->eng), 0);
    a->last_nodes = a->eng.nodes - n0;
    a->s_nodes += a->last_nodes;
    return rc;
}

static int sup_begin(actor *a)
{
    const tb_bnb *b = a->b;
    if (isfinite(a->eng.inc)) {
        for (int g = 0; g < b->ngroups; g++) {
            tb_buf_clear(&a->msg);
            TB_CHECK(tb_buf_pack_f64(&a->msg, a->eng.inc));
            TB_CHECK(sup_send(a, g, T_INC_DOWN));
        }
    }
    size_t G = b->ngroups > 0 ? (size_t)b->ngroups : 1;
    double *w = calloc(G, sizeof *w);
    if (!w)
        return TB_ERR_NOMEM;
    for (int g = 0; g < b->ngroups; g++)
        w[g] = b->startup > 0 ? (b->nworkers[g] > 0 ? b->nworkers[g] : 1) : g == 0;
    int rc = sup_deal(a, w);
    free(w);
    int any = 0;
    for (int g = 0; g < b->ngroups; g++)
        any |= a->moves_sent[g] > 0;
    if (rc == TB_OK && !any) /* solved during start-up */
        rc = sup_stop(a, 1, a->eng.inc);
    return rc;
}

static int sup_start(actor *a)
{
    tb__bnb_sub root;
    a->pool.dive = 1;
    TB_CHECK(tb__bnb_root(&a->eng, &root));
    int rc = tb__bnb_heap_push(&a->pool, root);
    if (rc != TB_OK) {
        free(root.data);
        return rc;
    }
    a->lower = -INFINITY;
    if (a->b->progress || a->b->watch) {
        a->next_progress = a->b->progress_interval;
        a->next_watch = 0;
        TB_CHECK(set_timer(a, a->b->watch ? 0 : a->next_progress, TIMER_PROGRESS));
    }
    if (a->b->startup > 0) {
        a->t_startup = tb_tp_now(&a->base);
        tb_compute c = {startup_fn, a, -1.0, "start-up task", 0};
        return tb_tp_compute(&a->base, JOB_STARTUP, &c);
    }
    a->pool.dive = 0;
    return sup_begin(a);
}

static int sup_try_close(actor *a)
{
    for (int g = 0; g < a->b->ngroups; g++)
        if (!a->finaled[g] || a->got_from[g] < (uint64_t)a->final_expect[g])
            return TB_OK;
    a->t_end = tb_tp_now(&a->base);
    close_actor(a);
    return TB_OK;
}

static int sup_message(actor *a, int src, int tag, const void *data, size_t len)
{
    const tb_bnb *b = a->b;
    int g = src > 0 && src < b->size ? b->group_of[src] : -1;
    if (g < 0 || b->master_of[g] != src) {
        TB_LOG_ERR("branch-and-bound: supervisor: message %d from rank %d, not a master", tag,
                   src);
        return TB_ERR_PARSE;
    }
    tb_buf in;
    tb_buf_view(&in, data, len);
    if (tag != T_FINAL)
        a->got_from[g]++;
    switch (tag) {
    case T_STATUS: {
        mstat *s = &a->st[g];
        uint8_t hungry;
        s->valid = 1;
        TB_CHECK(tb_buf_unpack_u64(&in, &s->queued));
        TB_CHECK(tb_buf_unpack_u64(&in, &s->inflight));
        TB_CHECK(tb_buf_unpack_f64(&in, &s->lower));
        TB_CHECK(tb_buf_unpack_u64(&in, &s->tasks));
        TB_CHECK(tb_buf_unpack_u64(&in, &s->nodes));
        TB_CHECK(tb_buf_unpack_f64(&in, &s->busy));
        TB_CHECK(tb_buf_unpack_u32(&in, &s->workers));
        TB_CHECK(tb_buf_unpack_u64(&in, &s->gives_sent));
        TB_CHECK(tb_buf_unpack_u64(&in, &s->moves_got));
        TB_CHECK(tb_buf_unpack_u8(&in, &hungry));
        s->hungry = hungry;
        TB_CHECK(sup_check(a));
        return sup_balance(a, g);
    }
    case T_INC_UP: {
        double v;
        const void *sol;
        uint32_t n;
        TB_CHECK(tb_buf_unpack_f64(&in, &v));
        TB_CHECK(tb_buf_unpack_bytes(&in, &sol, &n));
        TB_CHECK(sup_incumbent(a, v, sol, n));
        return sup_check(a);
    }
    case T_GIVE: {
        uint32_t n;
        TB_CHECK(tb_buf_unpack_u32(&in, &n));
        for (uint32_t i = 0; i < n; i++) {
            tb__bnb_sub sub;
            TB_CHECK(tb__bnb_unpack_sub(&in, &sub));
            int rc = tb__bnb_heap_push(&a->pool, sub);
            if (rc != TB_OK) {
                free(sub.data);
                return rc;
            }
        }
        a->gives_recv[g]++;
        a->req_out[g] = 0;
        a->st[g].queued = a->st[g].queued > n ? a->st[g].queued - n : 0;
        if (a->s_stopping) /* cannot happen: no stop while a give is asked */
            return TB_ERR_STATE;
        TB_CHECK(sup_got_give(a, g));
        return sup_check(a);
    }
    case T_FINAL: {
        uint64_t expect;
        tb_bnb_group *gs = &a->gs[g];
        uint32_t workers, depth;
        TB_CHECK(tb_buf_unpack_u64(&in, &expect));
        TB_CHECK(tb_buf_unpack_u32(&in, &workers));
        TB_CHECK(tb_buf_unpack_u64(&in, &gs->tasks));
        TB_CHECK(tb_buf_unpack_u64(&in, &gs->nodes));
        TB_CHECK(tb_buf_unpack_f64(&in, &gs->busy_s));
        TB_CHECK(tb_buf_unpack_f64(&in, &gs->idle_s));
        TB_CHECK(tb_buf_unpack_f64(&in, &gs->startup_idle_s));
        TB_CHECK(tb_buf_unpack_u64(&in, &gs->moved_in));
        TB_CHECK(tb_buf_unpack_u64(&in, &gs->moved_out));
        TB_CHECK(tb_buf_unpack_u32(&in, &depth));
        gs->master = src;
        gs->workers = (int)workers;
        a->finaled[g] = 1;
        a->final_expect[g] = (int64_t)expect;
        if (depth > a->final_depth)
            a->final_depth = depth;
        return sup_try_close(a);
    }
    default:
        break;
    }
    TB_LOG_ERR("branch-and-bound: supervisor: unexpected message '%s' (tag %d) from rank %d",
               tb__bnb_tag_name(tag), tag, src);
    return TB_ERR_PARSE;
}

/* The supervisor's view now (the groups in a->wg). */
static void sup_state(actor *a, tb_bnb_state *st)
{
    const tb_bnb *b = a->b;
    uint64_t pending = a->pool.n, nodes = a->s_nodes;
    for (int g = 0; g < b->ngroups; g++) {
        const mstat *m = &a->st[g];
        pending += m->queued + m->inflight;
        nodes += m->nodes;
        if (a->wg)
            a->wg[g] = (tb_bnb_watch_group){b->nworkers[g] > 0 ? b->nworkers[g] : 1,
                                            m->queued + m->inflight, m->nodes, m->tasks, m->busy};
    }
    *st = (tb_bnb_state){0};
    st->elapsed_s = tb_tp_now(&a->base);
    st->found = isfinite(a->eng.inc);
    st->incumbent = outward(b, a->eng.inc);
    st->bound = outward(b, a->lower);
    st->gap = isfinite(a->eng.inc) && a->eng.inc != 0 && isfinite(a->lower)
                  ? fabs(a->eng.inc - a->lower) / fabs(a->eng.inc)
                  : INFINITY;
    st->pending = pending;
    st->nodes = nodes;
    st->solution = st->found && a->eng.sol.len ? a->eng.sol.data : NULL;
    st->solution_len = st->solution ? a->eng.sol.len : 0;
    st->ngroups = b->ngroups;
    st->groups = a->wg;
}

/* Progress lines and the watch, each at its own interval, on one timer. */
static int sup_tick(actor *a)
{
    const tb_bnb *b = a->b;
    double now = tb_tp_now(&a->base);
    tb_bnb_state st;
    if (b->progress && now >= a->next_progress) {
        sup_state(a, &st);
        fprintf(b->progress,
                "bnb: %.1f s  incumbent %.10g  bound %.10g  gap %.3g%%  pending %" PRIu64
                "  nodes %" PRIu64 "\n",
                now, st.incumbent, st.bound, 100 * st.gap, st.pending, st.nodes);
        fflush(b->progress);
        a->next_progress = now + b->progress_interval;
    }
    if (b->watch && now >= a->next_watch) {
        sup_state(a, &st);
        a->next_watch = now + b->watch_interval;
        if (b->watch(b->watch_arg, &st) && !a->stop_asked) {
            a->stop_asked = 1;
            TB_CHECK(sup_check(a));
        }
    }
    if (a->s_stopping)
        return TB_OK;
    double next = b->progress ? a->next_progress : INFINITY;
    if (b->watch && a->next_watch < next)
        next = a->next_watch;
    return set_timer(a, next, TIMER_PROGRESS);
}

/* ---- actor dispatch ------------------------------------------------------ */

static int on_start(tb_actor *ba)
{
    actor *a = (actor *)ba;
    switch (a->role) {
    case ROLE_SUP:
        return sup_start(a);
    case ROLE_MASTER:
        return master_start(a);
    default:
        return worker_start(a);
    }
}

static int on_message(tb_actor *ba, int src, int tag, const void *data, size_t len)
{
    actor *a = (actor *)ba;
    switch (a->role) {
    case ROLE_SUP:
        return sup_message(a, src, tag, data, len);
    case ROLE_MASTER:
        return master_message(a, src, tag, data, len);
    default:
        return worker_message(a, src, tag, data, len);
    }
}

static int on_computed(tb_actor *ba, uint64_t job, int status)
{
    actor *a = (actor *)ba;
    if (status != TB_OK) {
        if (job == JOB_TASK)
            TB_LOG_ERR("rank %d: task %" PRIu64 " failed: %s", a->base.rank, a->task_id,
                       tb_strerror(status));
        else
            TB_LOG_ERR("rank %d: the start-up task failed: %s", a->base.rank,
                       tb_strerror(status));
        return status;
    }
    if (a->role == ROLE_SUP && job == JOB_STARTUP) {
        if (a->tr)
            TB_CHECK(tb_trace_complete_arg(a->tr, 0, "bnb", "start-up", a->t_startup,
                                           tb_tp_now(&a->base), "nodes", (int64_t)a->last_nodes));
        TB_CHECK(sup_begin(a));
        return sup_check(a);
    }
    if (a->role == ROLE_MASTER)
        return master_computed(a);
    TB_CHECK(end_task(a, &a->msg));
    return send_msg(a, a->master, T_RESULT);
}

static int on_timer(tb_actor *ba, uint64_t id)
{
    actor *a = (actor *)ba;
    if (a->role == ROLE_SUP && id == TIMER_PROGRESS)
        return a->s_stopping ? TB_OK : sup_tick(a);
    if (a->role == ROLE_MASTER && id == TIMER_STATUS && !a->stopping) {
        if (a->dirty)
            TB_CHECK(master_status(a));
        return set_timer(a, tb_tp_now(&a->base) + a->b->status_interval, TIMER_STATUS);
    }
    return TB_OK;
}

static const tb_actor_ops actor_ops = {sizeof(tb_actor_ops), on_start, on_message, on_computed,
                                       on_timer};

static const char *role_name(const tb_bnb *b, int rank)
{
    if (rank == 0)
        return "supervisor";
    return b->master_of[b->group_of[rank]] == rank ? "master" : "worker";
}

static int actor_init(actor *a, tb_bnb *b, int rank)
{
    memset(a, 0, sizeof *a);
    a->base.ops = &actor_ops;
    a->base.rank = rank;
    a->b = b;
    if (b->trace_path) { /* times from tb_tp_now: from the start of the run */
        char name[80];
        TB_CHECK(tb_trace_create(&a->tr, rank, 0.0));
        if (rank == 0)
            snprintf(name, sizeof name, "rank 0 (supervisor)");
        else
            snprintf(name, sizeof name, "rank %d (group %d %s)", rank, b->group_of[rank],
                     role_name(b, rank));
        TB_CHECK(tb_trace_set_process_name(a->tr, name));
    }
    tb__bnb_engine_init(&a->eng, b->ops, b->ctx, b->gap);
    tb__bnb_engine_init(&a->weng, b->ops, b->ctx, b->gap);
    a->stop_expect = -1;
    if (rank == 0) {
        int G = b->ngroups;
        a->role = ROLE_SUP;
        a->st = calloc((size_t)G, sizeof *a->st);
        a->gives_recv = calloc((size_t)G, sizeof *a->gives_recv);
        a->moves_sent = calloc((size_t)G, sizeof *a->moves_sent);
        a->sent_to = calloc((size_t)G, sizeof *a->sent_to);
        a->got_from = calloc((size_t)G, sizeof *a->got_from);
        a->final_expect = calloc((size_t)G, sizeof *a->final_expect);
        a->req_out = calloc((size_t)G, sizeof *a->req_out);
        a->finaled = calloc((size_t)G, sizeof *a->finaled);
        a->gs = calloc((size_t)G, sizeof *a->gs);
        a->wg = calloc((size_t)G, sizeof *a->wg);
        if (!a->st || !a->gives_recv || !a->moves_sent || !a->sent_to || !a->got_from ||
            !a->final_expect || !a->req_out || !a->finaled || !a->gs || !a->wg)
            return TB_ERR_NOMEM;
        return TB_OK;
    }
    int g = b->group_of[rank];
    if (b->master_of[g] == rank) {
        a->role = ROLE_MASTER;
        a->group = g;
        a->depth = b->depth > 0 ? (uint32_t)b->depth : 1;
        a->batch = 1;
        a->auto_depth = b->depth == 0;
        a->self = b->nworkers[g] == 0;
        a->nslots = a->self ? 1 : b->nworkers[g];
        a->slots = calloc((size_t)a->nslots, sizeof *a->slots);
        if (!a->slots)
            return TB_ERR_NOMEM;
        int k = 0;
        for (int r = 1; r < b->size && !a->self; r++)
            if (b->group_of[r] == g && r != rank)
                a->slots[k++].rank = r;
        if (a->self)
            a->slots[0].rank = rank;
        a->q.dive = 1;
        return TB_OK;
    }
    a->role = ROLE_WORKER;
    a->master = b->master_of[g];
    return TB_OK;
}

static void actor_free(actor *a)
{
    tb_trace_destroy(&a->tr);
    tb__bnb_engine_free(&a->eng);
    tb__bnb_engine_free(&a->weng);
    tb_buf_free(&a->res);
    tb_buf_free(&a->msg);
    tb_buf_free(&a->out);
    clear_tasks(a);
    free(a->tasks);
    free(a->slots);
    tb__bnb_heap_free(&a->q);
    tb__bnb_heap_free(&a->pool);
    free(a->st);
    free(a->gives_recv);
    free(a->moves_sent);
    free(a->sent_to);
    free(a->got_from);
    free(a->final_expect);
    free(a->req_out);
    free(a->finaled);
    free(a->gs);
    free(a->wg);
}

/* ---- layout -------------------------------------------------------------- */

/* Groups from a key per rank (node or cluster), or `groups` contiguous
 * blocks of ranks 1..P-1. */
static int make_layout(tb_bnb *b, const long *key)
{
    int P = b->size;
    free(b->group_of);
    free(b->master_of);
    free(b->nworkers);
    b->group_of = malloc((size_t)P * sizeof *b->group_of);
    b->master_of = malloc((size_t)P * sizeof *b->master_of);
    b->nworkers = calloc((size_t)P, sizeof *b->nworkers);
    if (!b->group_of || !b->master_of || !b->nworkers)
        return TB_ERR_NOMEM;
    b->group_of[0] = -1;
    int G = 0;
    if (b->groups > 0) {
        G = b->groups;
        for (int r = 1; r < P; r++)
            b->group_of[r] = (int)((int64_t)(r - 1) * G / (P - 1));
    } else {
        long *keys = malloc((size_t)P * sizeof *keys);
        if (!keys)
            return TB_ERR_NOMEM;
        for (int r = 1; r < P; r++) {
            int g = 0;
            while (g < G && keys[g] != key[r])
                g++;
            if (g == G)
                keys[G++] = key[r];
            b->group_of[r] = g;
        }
        free(keys);
    }
    for (int g = 0; g < G; g++)
        b->master_of[g] = -1;
    for (int r = 1; r < P; r++) {
        int g = b->group_of[r];
        if (b->master_of[g] < 0)
            b->master_of[g] = r;
        else
            b->nworkers[g]++;
    }
    b->ngroups = G;
    return TB_OK;
}

/* ---- API ----------------------------------------------------------------- */

static int check_ops(const tb_bnb_ops *ops)
{
    if (!ops || ops->size < sizeof(tb_bnb_ops) || !ops->root || !ops->bound || !ops->branch ||
        !ops->evaluate || (ops->sense != TB_BNB_MINIMIZE && ops->sense != TB_BNB_MAXIMIZE))
        return TB_ERR_INVALID;
    return TB_OK;
}

static tb_bnb *new_handle(const tb_bnb_ops *ops, void *ctx)
{
    tb_bnb *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->ops = ops;
    b->ctx = ctx;
    b->task_time = 0.01;
    b->node_cost = 1e-6;
    b->status_interval = 0.05;
    b->startup = 4;
    b->comm = MPI_COMM_NULL;
    return b;
}

int tb_bnb_create(tb_bnb **out, MPI_Comm comm, const tb_bnb_ops *ops, void *ctx)
{
    if (!out || check_ops(ops) != TB_OK)
        return TB_ERR_INVALID;
    tb_bnb *b = new_handle(ops, ctx);
    if (!b)
        return TB_ERR_NOMEM;
    if (MPI_Comm_dup(comm, &b->comm) != MPI_SUCCESS) {
        free(b);
        return TB_ERR_MPI;
    }
    MPI_Comm_rank(b->comm, &b->rank);
    MPI_Comm_size(b->comm, &b->size);
    *out = b;
    return TB_OK;
}

int tb_bnb_create_sim(tb_bnb **out, const tb_platform *plat, int ranks, const tb_bnb_ops *ops,
                      void *ctx)
{
    if (!out || !plat || ranks < 1 || check_ops(ops) != TB_OK)
        return TB_ERR_INVALID;
    if ((size_t)ranks > tb_platform_cores(plat))
        return TB_ERR_SIZE;
    tb_bnb *b = new_handle(ops, ctx);
    if (!b)
        return TB_ERR_NOMEM;
    b->plat = plat;
    b->size = ranks;
    *out = b;
    return TB_OK;
}

void tb_bnb_destroy(tb_bnb **pb)
{
    if (!pb || !*pb)
        return;
    tb_bnb *b = *pb;
    if (b->comm != MPI_COMM_NULL)
        MPI_Comm_free(&b->comm);
    free(b->group_of);
    free(b->master_of);
    free(b->nworkers);
    free(b->gstats);
    free(b->trace_path);
    tb_buf_free(&b->sol);
    free(b);
    *pb = NULL;
}

int tb_bnb_set_gap(tb_bnb *b, double gap)
{
    if (!b || !(gap >= 0 && gap < 1))
        return TB__REFUSE(TB_ERR_RANGE, "tb_bnb_set_gap: %s", !b ? "the handle is NULL"
                          : "the relative gap must be in [0, 1); the gap is unchanged");
    b->gap = gap;
    return TB_OK;
}

int tb_bnb_set_groups(tb_bnb *b, int groups)
{
    if (!b || groups < 0)
        return TB__REFUSE(TB_ERR_RANGE, "tb_bnb_set_groups: %s", !b ? "the handle is NULL"
                          : "a negative number of groups; the groups are unchanged");
    if (groups > 0 && b->size > 1 && groups > b->size - 1)
        return TB__REFUSE(TB_ERR_SIZE, "tb_bnb_set_groups: %d groups need at least %d ranks (a "
                          "supervisor and a master each), the run has %d; the groups are "
                          "unchanged", groups, groups + 1, b->size);
    b->groups = groups;
    return TB_OK;
}

int tb_bnb_set_depth(tb_bnb *b, int depth)
{
    if (!b || depth < 0 || depth > 64)
        return TB__REFUSE(TB_ERR_RANGE, "tb_bnb_set_depth: %s", !b ? "the handle is NULL"
                          : "the depth must be in [0, 64]; the depth is unchanged");
    b->depth = depth;
    return TB_OK;
}

int tb_bnb_set_task_time(tb_bnb *b, double s)
{
    if (!b || !(s > 0 && isfinite(s)))
        return TB__REFUSE(TB_ERR_RANGE, "tb_bnb_set_task_time: %s", !b ? "the handle is NULL"
                          : "expected seconds > 0; the task time is unchanged");
    b->task_time = s;
    return TB_OK;
}

int tb_bnb_set_startup(tb_bnb *b, int per_worker)
{
    if (!b || per_worker < 0 || per_worker > 1000000)
        return TB__REFUSE(TB_ERR_RANGE, "tb_bnb_set_startup: %s", !b ? "the handle is NULL"
                          : "expected 0 to 1000000 subproblems per worker; unchanged");
    b->startup = per_worker;
    return TB_OK;
}

int tb_bnb_set_balance(tb_bnb *b, tb_bnb_balance how)
{
    if (!b || (how != TB_BNB_BALANCE_THROUGHPUT && how != TB_BNB_BALANCE_SEED))
        return TB__REFUSE(TB_ERR_RANGE, "tb_bnb_set_balance: %s", !b ? "the handle is NULL"
                          : "unknown balancing rule; unchanged");
    b->balance = how;
    return TB_OK;
}

int tb_bnb_set_node_cost(tb_bnb *b, double s)
{
    if (!b || !(s >= 0 && isfinite(s)))
        return TB__REFUSE(TB_ERR_RANGE, "tb_bnb_set_node_cost: %s", !b ? "the handle is NULL"
                          : "expected seconds >= 0; the node cost is unchanged");
    b->node_cost = s;
    return TB_OK;
}

int tb_bnb_set_status_interval(tb_bnb *b, double s)
{
    if (!b || !(s > 0 && isfinite(s)))
        return TB__REFUSE(TB_ERR_RANGE, "tb_bnb_set_status_interval: %s",
                          !b ? "the handle is NULL"
                             : "expected seconds > 0; the interval is unchanged");
    b->status_interval = s;
    return TB_OK;
}

int tb_bnb_set_wan_delay(tb_bnb *b, double seconds)
{
    if (!b || !(seconds >= 0 && seconds <= 60))
        return TB__REFUSE(TB_ERR_RANGE, "tb_bnb_set_wan_delay: %s", !b ? "the handle is NULL"
                          : "expected seconds in [0, 60]; the delay is unchanged");
    if (b->plat && seconds > 0)
        return TB__REFUSE(TB_ERR_UNSUPPORTED, "tb_bnb_set_wan_delay: a simulated run takes its "
                          "wide-area delay from the platform's links (wan-L=...)");
    b->wan_delay = seconds;
    return TB_OK;
}

int tb_bnb_set_sites(tb_bnb *b, int sites)
{
    if (!b || sites < 0)
        return TB__REFUSE(TB_ERR_RANGE, "tb_bnb_set_sites: %s", !b ? "the handle is NULL"
                          : "a negative number of sites; unchanged");
    if (sites > 0 && b->size > 1 && sites > b->size - 1)
        return TB__REFUSE(TB_ERR_SIZE, "tb_bnb_set_sites: %d sites need at least %d ranks, the "
                          "run has %d; unchanged", sites, sites + 1, b->size);
    b->sites = sites;
    return TB_OK;
}

int tb_bnb_set_trace_file(tb_bnb *b, const char *path)
{
    if (!b)
        return TB__REFUSE(TB_ERR_INVALID, "tb_bnb_set_trace_file: the handle is NULL");
    char *p = NULL;
    if (path && !(p = strdup(path)))
        return TB_ERR_NOMEM;
    free(b->trace_path);
    b->trace_path = p;
    return TB_OK;
}

int tb_bnb_set_task_pad(tb_bnb *b, size_t bytes)
{
    if (!b || bytes > ((size_t)1 << 30))
        return TB__REFUSE(TB_ERR_RANGE, "tb_bnb_set_task_pad: %s", !b ? "the handle is NULL"
                          : "at most 1 GiB; unchanged");
    b->task_pad = bytes;
    return TB_OK;
}

int tb_bnb_set_sub_pad(tb_bnb *b, size_t bytes)
{
    if (!b || bytes > ((size_t)1 << 20))
        return TB__REFUSE(TB_ERR_RANGE, "tb_bnb_set_sub_pad: %s", !b ? "the handle is NULL"
                          : "at most 1 MiB; unchanged");
    b->sub_pad = bytes;
    return TB_OK;
}

int tb_bnb_set_progress(tb_bnb *b, FILE *stream)
{
    if (!b)
        return TB__REFUSE(TB_ERR_INVALID, "tb_bnb_set_progress: the handle is NULL");
    b->progress = stream;
    b->progress_interval = 1.0;
    tb_env_double("TENBIN_PROGRESS_INTERVAL", &b->progress_interval);
    return TB_OK;
}

int tb_bnb_set_watch(tb_bnb *b, tb_bnb_watch_fn fn, void *arg, double interval)
{
    if (!b || !(interval > 0 && interval <= 3600))
        return TB__REFUSE(TB_ERR_INVALID, "tb_bnb_set_watch: %s", !b ? "the handle is NULL"
                          : "the interval must be in (0, 3600] seconds; no watch is set");
    b->watch = fn;
    b->watch_arg = arg;
    b->watch_interval = interval;
    return TB_OK;
}

int tb_bnb_set_force_moves(tb_bnb *b, int on)
{
    if (!b)
        return TB__REFUSE(TB_ERR_INVALID, "tb_bnb_set_force_moves: the handle is NULL");
    b->force_moves = on != 0;
    return TB_OK;
}

static void summary_base(tb_bnb *b, const tb__bnb_engine *e, double lower, int proven)
{
    tb_bnb_summary *s = &b->sum;
    s->ranks = b->size;
    s->simulated = b->plat != NULL;
    s->sense = b->ops->sense;
    s->found = isfinite(e->inc);
    s->optimum = outward(b, e->inc);
    s->bound = outward(b, lower < e->inc ? lower : e->inc);
    s->proven = proven;
    s->gap = proven || !s->found ? 0
             : e->inc != 0      ? fabs(e->inc - lower) / fabs(e->inc)
                                : INFINITY;
    tb_buf_clear(&b->sol);
    tb_buf_append(&b->sol, e->sol.data, e->sol.len);
    s->solution = b->sol.data;
    s->solution_len = b->sol.len;
}

/* P = 1: the sequential search. */
static int run_serial(tb_bnb *b)
{
    tb__bnb_engine e;
    tb__bnb_engine_init(&e, b->ops, b->ctx, b->gap);
    double lower = 0, t0 = tb_wtime();
    int proven = 0;
    int rc = tb__bnb_serial(&e, 0, &lower, &proven);
    double wall = tb_wtime() - t0;
    memset(&b->sum, 0, sizeof b->sum);
    if (rc == TB_OK) {
        summary_base(b, &e, lower, proven);
        b->sum.nodes = e.nodes;
        b->sum.wall_s = wall;
        b->sum.makespan_s = wall;
        if (b->plat) {
            tb_speed_cursor c;
            rc = tb_speed_cursor_init(&c, b->plat, (size_t)tb_platform_host_of(b->plat, 0));
            if (rc == TB_OK) {
                rc = tb_speed_finish_time(&c, 0, (double)e.nodes * b->node_cost,
                                          &b->sum.makespan_s);
                tb_speed_cursor_free(&c);
            }
        }
    }
    if (rc == TB_OK && b->trace_path) {
        /* one rank: the sequential search as one bar (virtual time when
         * simulated) */
        tb_trace *tr = NULL;
        double origin = b->plat ? 0.0 : t0;
        rc = tb_trace_create(&tr, 0, origin);
        if (rc == TB_OK)
            rc = tb_trace_set_process_name(tr, "rank 0 (sequential search)");
        if (rc == TB_OK)
            rc = tb_trace_complete_arg(tr, 0, "bnb", "search", origin,
                                       origin + b->sum.makespan_s, "nodes", (int64_t)e.nodes);
        if (rc == TB_OK)
            rc = tb_trace_write(tr, b->trace_path);
        tb_trace_destroy(&tr);
    }
    tb__bnb_engine_free(&e);
    return rc;
}

static double sim_cost_fn(void *ctx, tb_actor *ba, uint64_t job, const tb_compute *c,
                          double cpu_s)
{
    const tb_bnb *b = ctx;
    (void)job;
    (void)c;
    (void)cpu_s;
    return (double)((actor *)ba)->last_nodes * b->node_cost;
}

/* The supervisor's actor holds the results: into the summary. */
static int finish_summary(tb_bnb *b, actor *sup, double makespan, double wall, uint64_t msgs)
{
    summary_base(b, &sup->eng, sup->final_lower, sup->proven);
    tb_bnb_summary *s = &b->sum;
    s->makespan_s = makespan;
    s->wall_s = wall;
    s->messages = msgs;
    s->nodes = sup->s_nodes;
    s->depth = (int)sup->final_depth;
    free(b->gstats);
    b->gstats = calloc((size_t)b->ngroups, sizeof *b->gstats);
    if (!b->gstats)
        return TB_ERR_NOMEM;
    for (int g = 0; g < b->ngroups; g++) {
        b->gstats[g] = sup->gs[g];
        s->nodes += sup->gs[g].nodes;
        s->tasks += sup->gs[g].tasks;
    }
    s->ngroups = b->ngroups;
    s->groups = b->gstats;
    return TB_OK;
}

static int run_sim(tb_bnb *b)
{
    int P = b->size;
    long *key = calloc((size_t)P, sizeof *key);
    if (!key)
        return TB_ERR_NOMEM;
    for (int r = 0; r < P; r++)
        key[r] = b->plat->hosts[tb_platform_host_of(b->plat, r)].cluster;
    int rc = make_layout(b, key);
    free(key);
    TB_CHECK(rc);
    tb_sim *sim = NULL;
    actor *acts = calloc((size_t)P, sizeof *acts);
    tb_actor **ptrs = calloc((size_t)P, sizeof *ptrs);
    rc = acts && ptrs ? TB_OK : TB_ERR_NOMEM;
    if (rc == TB_OK)
        rc = tb_sim_create(&sim, b->plat, P, sim_cost_fn, b, 0);
    for (int r = 0; r < P && rc == TB_OK; r++) {
        rc = actor_init(&acts[r], b, r);
        ptrs[r] = &acts[r].base;
    }
    double t0 = tb_wtime();
    if (rc == TB_OK)
        rc = tb_sim_run(sim, ptrs);
    double wall = tb_wtime() - t0;
    if (rc == TB_OK) {
        uint64_t msgs = 0;
        for (int r = 0; r < P; r++) {
            uint64_t ms, mr, bs, br;
            tb_sim_rank_counts(sim, r, &ms, &mr, &bs, &br);
            msgs += ms;
        }
        memset(&b->sum, 0, sizeof b->sum);
        rc = finish_summary(b, &acts[0], acts[0].t_end, wall, msgs);
    }
    if (rc == TB_OK && b->trace_path) {
        const tb_trace **trs = calloc((size_t)P, sizeof *trs);
        rc = trs ? TB_OK : TB_ERR_NOMEM;
        for (int r = 0; trs && r < P; r++)
            trs[r] = acts[r].tr;
        if (rc == TB_OK)
            rc = tb_trace_write_set(trs, (size_t)P, b->trace_path);
        free(trs);
    }
    for (int r = 0; acts && r < P; r++)
        actor_free(&acts[r]);
    free(acts);
    free(ptrs);
    tb_sim_destroy(&sim);
    return rc;
}

/* The site of a rank for the injected delay: its group, or one of `sites`
 * contiguous blocks of ranks 1..P-1; the supervisor is a site of its own. */
static int site_of(const tb_bnb *b, int r)
{
    if (r == 0)
        return -1;
    if (b->sites > 0)
        return (int)((int64_t)(r - 1) * b->sites / (b->size - 1));
    return b->group_of[r];
}

/* Every rank must search the same problem with the same settings: a rank
 * configured otherwise would expand subproblems of another instance, or
 * wait for messages that never come.  The instance is compared through its
 * root subproblem's size and bound (each rank computes them from its ctx;
 * not its bytes, which may hold a struct's padding). */
static int check_agreement(tb_bnb *b)
{
    tb__bnb_engine e;
    tb__bnb_engine_init(&e, b->ops, b->ctx, b->gap);
    tb__bnb_sub root = {0};
    int rc = tb__bnb_root(&e, &root);
    int64_t root_len = rc == TB_OK ? (int64_t)root.len : -1;
    double root_bound = rc == TB_OK ? root.bound : 0.0;
    free(root.data);
    tb__bnb_engine_free(&e);
    const tb__agree_item items[] = {
        tb__agree_int("whether the root could be made (the problem's root and bound ops)",
                      rc == TB_OK),
        tb__agree_int("the instance (its root subproblem's size: the same file on every rank?)",
                      root_len),
        tb__agree_double("the instance (its root's bound: the same file on every rank?)",
                         root_bound),
        tb__agree_int("the sense (minimise or maximise)", b->ops->sense),
        tb__agree_double("the gap (tb_bnb_set_gap)", b->gap),
        tb__agree_int("the groups (tb_bnb_set_groups)", b->groups),
        tb__agree_int("the sites (tb_bnb_set_sites)", b->sites),
        tb__agree_int("the depth (tb_bnb_set_depth)", b->depth),
        tb__agree_double("the task time (tb_bnb_set_task_time)", b->task_time),
        tb__agree_int("the start-up (tb_bnb_set_startup)", b->startup),
        tb__agree_int("the balancing rule (tb_bnb_set_balance)", b->balance),
        tb__agree_double("the status interval (tb_bnb_set_status_interval)", b->status_interval),
        tb__agree_double("the wide-area delay (tb_bnb_set_wan_delay)", b->wan_delay),
        tb__agree_int("the task padding", (int64_t)b->task_pad),
        tb__agree_int("the subproblem padding", (int64_t)b->sub_pad),
        tb__agree_int("forced moves", b->force_moves),
    };
    int arc = tb__run_agree(b->comm, "tb_bnb_run", items, (int)(sizeof items / sizeof items[0]));
    return arc != TB_OK ? arc : rc;
}

static int run_mpi(tb_bnb *b)
{
    int P = b->size;
    TB_CHECK(check_agreement(b));
    /* Node of each rank: the smallest rank of b->comm on its node. */
    MPI_Comm node;
    int leader = b->rank;
    MPI_Comm_split_type(b->comm, MPI_COMM_TYPE_SHARED, b->rank, MPI_INFO_NULL, &node);
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    int *leaders = malloc((size_t)P * sizeof *leaders);
    long *key = malloc((size_t)P * sizeof *key);
    if (!leaders || !key) {
        free(leaders);
        free(key);
        return TB_ERR_NOMEM;
    }
    MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, b->comm);
    for (int r = 0; r < P; r++)
        key[r] = leaders[r];
    free(leaders);
    int rc = make_layout(b, key);
    free(key);
    TB_CHECK(rc);
    tb_tp *tp = NULL;
    actor a;
    rc = tb_tp_mpi_create(&tp, b->comm);
    if (rc == TB_OK && b->wan_delay > 0) {
        /* Every message between groups (the supervisor is a site of its
         * own) is held for the one-way delay. */
        double *delay = calloc((size_t)P, sizeof *delay);
        rc = delay ? TB_OK : TB_ERR_NOMEM;
        for (int r = 0; delay && r < P; r++)
            delay[r] = site_of(b, r) != site_of(b, b->rank) ? b->wan_delay : 0;
        if (rc == TB_OK)
            rc = tb_tp_mpi_set_delay(tp, delay);
        free(delay);
    }
    if (rc == TB_OK)
        rc = actor_init(&a, b, b->rank);
    if (rc != TB_OK) {
        TB_LOG_ERR("rank %d: cannot start the branch-and-bound run: %s; aborting the job",
                   b->rank, tb_strerror(rc));
        MPI_Abort(b->comm, 1);
        return rc;
    }
    MPI_Barrier(b->comm);
    double t0 = tb_wtime();
    rc = tb_tp_mpi_run(tp, &a.base);
    double wall = tb_wtime() - t0;
    if (rc != TB_OK) {
        TB_LOG_ERR("rank %d: branch-and-bound run failed: %s; aborting the job", b->rank,
                   tb_strerror(rc));
        MPI_Abort(b->comm, 1);
        return rc;
    }
    uint64_t ms, mr, bs, br, total = 0;
    tb_tp_mpi_counts(tp, &ms, &mr, &bs, &br);
    MPI_Reduce(&ms, &total, 1, MPI_UINT64_T, MPI_SUM, 0, b->comm);
    memset(&b->sum, 0, sizeof b->sum);
    if (b->rank == 0)
        rc = finish_summary(b, &a, wall, wall, total);
    MPI_Bcast(&rc, 1, MPI_INT, 0, b->comm);
    if (rc == TB_OK && b->trace_path) /* collective */
        rc = tb_trace_write_merged(a.tr, b->comm, 0, b->trace_path);
    actor_free(&a);
    tb_tp_mpi_destroy(&tp);
    return rc;
}

int tb_bnb_run(tb_bnb *b)
{
    if (!b)
        return TB_ERR_INVALID;
    if (b->ran)
        return TB_ERR_STATE;
    b->ran = 1;
    if (b->groups > 0 && b->size > 1 && b->groups > b->size - 1)
        return TB_ERR_SIZE;
    if (b->size == 1) {
        int rc = run_serial(b);
        b->sum.ranks = 1;
        return rc;
    }
    return b->plat ? run_sim(b) : run_mpi(b);
}

int tb_bnb_calibrate(const tb_bnb_ops *ops, void *ctx, double seconds, double *node_cost)
{
    if (check_ops(ops) != TB_OK || !node_cost || !(seconds > 0))
        return TB_ERR_INVALID;
    /* Sequential searches of 16, 64, 256 ... nodes until one takes long
     * enough to time (or the whole tree is done). */
    for (uint64_t budget = 16;; budget *= 4) {
        tb__bnb_engine e;
        tb__bnb_engine_init(&e, ops, ctx, 0);
        double lower, c0 = tb_thread_cputime();
        int proven, rc = tb__bnb_serial(&e, budget, &lower, &proven);
        double cpu = tb_thread_cputime() - c0;
        uint64_t nodes = e.nodes;
        tb__bnb_engine_free(&e);
        TB_CHECK(rc);
        if (cpu >= seconds || nodes < budget || budget > ((uint64_t)1 << 40)) {
            *node_cost = nodes > 0 ? cpu / (double)nodes : 0;
            return TB_OK;
        }
    }
}

int tb_bnb_get_summary(const tb_bnb *b, tb_bnb_summary *out)
{
    if (!b || !out)
        return TB_ERR_INVALID;
    if (!b->ran)
        return TB_ERR_STATE;
    *out = b->sum;
    return TB_OK;
}
