/*
 * bnb.c - hierarchical master-worker branch-and-bound (S5): the public API
 * (handles, settings, MPI and simulated runs, the sequential search, the
 * summary, calibration), the group layout, and the actors' dispatch of the
 * transport's handlers to their roles: the supervisor (supervisor.c), the
 * group masters (master.c) and their workers (worker.c), whose state is in
 * roles.h.
 *
 * Why not the mw runtime: mw's tasks are a bag known in advance, each
 * computed once into a result for rank 0; here a task's result is more
 * tasks and a better incumbent, the queue is ordered by bound and pruned,
 * and the supervisor balances queues between groups.  What mw and bnb share
 * is the transport (MPI or simulated) and the actor model; see
 * docs/architecture.md.
 *
 * Messages (proto.h).  Every subproblem travels in the wire form of
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
#include "tenbin/experiment.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/refuse.h"
#include "core/strset.h"
#include "run/coll.h"
#include "run/run.h"
#include "bnb/bnb_internal.h"
#include "bnb/proto.h"
#include "bnb/roles.h"
#include "run/agree.h"
#include "sim/sim.h"
#include "transport/transport.h"

/* ---- actor dispatch ------------------------------------------------------ */

static int on_start(tb_actor *ba)
{
    tb__bnb_actor *a = (tb__bnb_actor *)ba;
    switch (a->role) {
    case ROLE_SUP:
        return tb__bnb_sup_start(a);
    case ROLE_MASTER:
        return tb__bnb_master_start(a);
    default:
        return tb__bnb_worker_start(a);
    }
}

static int on_message(tb_actor *ba, int src, int tag, const void *data, size_t len)
{
    tb__bnb_actor *a = (tb__bnb_actor *)ba;
    switch (a->role) {
    case ROLE_SUP:
        return tb__bnb_sup_message(a, src, tag, data, len);
    case ROLE_MASTER:
        return tb__bnb_master_message(a, src, tag, data, len);
    default:
        return tb__bnb_worker_message(a, src, tag, data, len);
    }
}

static int on_computed(tb_actor *ba, uint64_t job, int status)
{
    tb__bnb_actor *a = (tb__bnb_actor *)ba;
    if (status != TB_OK) {
        if (job == JOB_TASK)
            TB__ERR_H(a->b, "rank %d: task %" PRIu64 " failed: %s", a->base.rank,
                      tb__bnb_worker_of(a)->task_id, tb_strerror(status));
        else
            TB__ERR_H(a->b, "rank %d: the start-up task failed: %s", a->base.rank,
                      tb_strerror(status));
        return status;
    }
    if (a->role == ROLE_SUP && job == JOB_STARTUP)
        return tb__bnb_sup_startup_done(a);
    if (a->role == ROLE_MASTER)
        return tb__bnb_master_computed(a);
    return tb__bnb_worker_computed(a);
}

static int on_timer(tb_actor *ba, uint64_t id)
{
    tb__bnb_actor *a = (tb__bnb_actor *)ba;
    if (a->role == ROLE_SUP)
        return tb__bnb_sup_timer(a, id);
    if (a->role == ROLE_MASTER)
        return tb__bnb_master_timer(a, id);
    return TB_OK;
}

/* Rank 0 (the supervisor, or a lone master) was signalled to stop. */
static int on_interrupt(tb_actor *ba, int sig)
{
    tb__bnb_actor *a = (tb__bnb_actor *)ba;
    if (a->role == ROLE_SUP)
        return tb__bnb_sup_interrupt(a, sig);
    TB__ERR_H(a->b, "rank %d: interrupted by %s", a->base.rank, tb_signal_name(sig));
    return TB_ERR_INTERRUPTED;
}

static const tb_actor_ops actor_ops = {sizeof(tb_actor_ops), on_start,   on_message,
                                       on_computed,          on_timer,   on_interrupt};

static const char *role_name(const tb_bnb *b, int rank)
{
    if (rank == 0)
        return "supervisor";
    return b->master_of[b->group_of[rank]] == rank ? "master" : "worker";
}

static int actor_init(tb__bnb_actor *a, tb_bnb *b, int rank)
{
    memset(a, 0, sizeof *a);
    a->base.ops = &actor_ops;
    a->base.rank = rank;
    a->b = b;
    int g = rank == 0 ? -1 : b->group_of[rank];
    a->role = rank == 0 ? ROLE_SUP : b->master_of[g] == rank ? ROLE_MASTER : ROLE_WORKER;
    if (b->trace_path) { /* times from tb_tp_now: from the start of the run */
        char name[80];
        TB_CHECK(tb_trace_create(&a->tr, rank, 0.0));
        if (rank == 0)
            snprintf(name, sizeof name, "rank 0 (supervisor)");
        else
            snprintf(name, sizeof name, "rank %d (group %d %s)", rank, g, role_name(b, rank));
        TB_CHECK(tb_trace_set_process_name(a->tr, name));
    }
    switch (a->role) {
    case ROLE_SUP:
        return tb__bnb_sup_init(a);
    case ROLE_MASTER:
        return tb__bnb_master_init(a, g);
    default:
        tb__bnb_worker_init(&a->worker, b, b->master_of[g]);
        return TB_OK;
    }
}

/* Also after a failed or no actor_init (a zeroed actor). */
static void actor_free(tb__bnb_actor *a)
{
    tb_trace_destroy(&a->tr);
    tb_buf_free(&a->msg);
    switch (a->role) {
    case ROLE_SUP:
        tb__bnb_sup_free(&a->sup);
        break;
    case ROLE_MASTER:
        tb__bnb_master_free(&a->master);
        break;
    default:
        tb__bnb_worker_free(&a->worker);
        break;
    }
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
    if (!ops || ops->size < offsetof(tb_bnb_ops, split) || !ops->root || !ops->bound || !ops->branch ||
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
    b->split = 1;
    b->pool_limit = TB__BNB_POOL_LIMIT;
    b->msg_budget = TB__BNB_MSG_BUDGET;
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
    if (tb__run_comm_dup(comm, &b->comm, &b->rank, &b->size) != TB_OK) {
        free(b);
        return TB_ERR_MPI;
    }
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

const char *tb_bnb_error(const tb_bnb *h) { return h ? h->err : ""; }

void tb_bnb_destroy(tb_bnb **pb)
{
    if (!pb || !*pb)
        return;
    tb_bnb *b = *pb;
    tb__run_comm_free(&b->comm);
    free(b->group_of);
    free(b->master_of);
    free(b->nworkers);
    free(b->gstats);
    free(b->trace_path);
    free(b->ckpt_path);
    free(b->resume_path);
    free(b->identity);
    free(b->ckpt_identity);
    tb__ckpt_reader_free(&b->resume);
    tb_buf_free(&b->sol);
    free(b);
    *pb = NULL;
}

int tb_bnb_set_gap(tb_bnb *b, double gap)
{
    if (!b || !(gap >= 0 && gap < 1))
        return TB__REFUSE_H(b, !b ? TB_ERR_INVALID : TB_ERR_RANGE, "tb_bnb_set_gap: %s",
                            !b ? "the handle is NULL"
                               : "the relative gap must be in [0, 1); the gap is unchanged");
    b->gap = gap;
    return TB_OK;
}

int tb_bnb_set_groups(tb_bnb *b, int groups)
{
    if (!b || groups < 0)
        return TB__REFUSE_H(b, !b ? TB_ERR_INVALID : TB_ERR_RANGE, "tb_bnb_set_groups: %s",
                            !b ? "the handle is NULL"
                               : "a negative number of groups; the groups are unchanged");
    if (groups > 0 && b->size > 1 && groups > b->size - 1)
        return TB__REFUSE_H(b, TB_ERR_SIZE,
                            "tb_bnb_set_groups: %d groups need at least %d ranks (a "
                            "supervisor and a master each), the run has %d; the groups are "
                            "unchanged",
                            groups, groups + 1, b->size);
    b->groups = groups;
    return TB_OK;
}

int tb_bnb_set_depth(tb_bnb *b, int depth)
{
    if (!b || depth < 0 || depth > 64)
        return TB__REFUSE_H(b, !b ? TB_ERR_INVALID : TB_ERR_RANGE, "tb_bnb_set_depth: %s",
                            !b ? "the handle is NULL"
                               : "the depth must be in [0, 64]; the depth is unchanged");
    b->depth = depth;
    return TB_OK;
}

int tb_bnb_set_task_time(tb_bnb *b, double s)
{
    if (!b || !(s > 0 && isfinite(s)))
        return TB__REFUSE_H(b, !b ? TB_ERR_INVALID : TB_ERR_RANGE, "tb_bnb_set_task_time: %s",
                            !b ? "the handle is NULL"
                               : "expected seconds > 0; the task time is unchanged");
    b->task_time = s;
    return TB_OK;
}

int tb_bnb_set_startup(tb_bnb *b, int per_worker)
{
    if (!b || per_worker < 0 || per_worker > 1000000)
        return TB__REFUSE_H(b, !b ? TB_ERR_INVALID : TB_ERR_RANGE, "tb_bnb_set_startup: %s",
                            !b ? "the handle is NULL"
                               : "expected 0 to 1000000 subproblems per worker; unchanged");
    b->startup = per_worker;
    return TB_OK;
}

int tb__bnb_splits(const tb_bnb *b) { return b->split && tb__bnb_can_split(b->ops); }

int tb_bnb_set_split(tb_bnb *b, int on)
{
    if (!b)
        return TB__REFUSE_H(b, TB_ERR_INVALID, "tb_bnb_set_split: the handle is NULL");
    b->split = on != 0;
    return TB_OK;
}

int tb_bnb_set_balance(tb_bnb *b, tb_bnb_balance how)
{
    if (!b || (how != TB_BNB_BALANCE_THROUGHPUT && how != TB_BNB_BALANCE_SEED))
        return TB__REFUSE_H(b, !b ? TB_ERR_INVALID : TB_ERR_RANGE, "tb_bnb_set_balance: %s",
                            !b ? "the handle is NULL" : "unknown balancing rule; unchanged");
    b->balance = how;
    return TB_OK;
}

int tb_bnb_set_node_cost(tb_bnb *b, double s)
{
    if (!b || !(s >= 0 && isfinite(s)))
        return TB__REFUSE_H(b, !b ? TB_ERR_INVALID : TB_ERR_RANGE, "tb_bnb_set_node_cost: %s",
                            !b ? "the handle is NULL"
                               : "expected seconds >= 0; the node cost is unchanged");
    b->node_cost = s;
    return TB_OK;
}

int tb_bnb_set_pool_limit(tb_bnb *b, size_t bytes)
{
    if (!b)
        return TB__REFUSE_H(b, TB_ERR_INVALID, "tb_bnb_set_pool_limit: the handle is NULL");
    b->pool_limit = bytes;
    return TB_OK;
}

int tb_bnb_set_status_interval(tb_bnb *b, double s)
{
    if (!b || !(s > 0 && isfinite(s)))
        return TB__REFUSE_H(b, !b ? TB_ERR_INVALID : TB_ERR_RANGE, "tb_bnb_set_status_interval: %s",
                            !b ? "the handle is NULL"
                               : "expected seconds > 0; the interval is unchanged");
    b->status_interval = s;
    return TB_OK;
}

int tb_bnb_set_wan_delay(tb_bnb *b, double seconds)
{
    if (!b || !(seconds >= 0 && seconds <= 60))
        return TB__REFUSE_H(b, !b ? TB_ERR_INVALID : TB_ERR_RANGE, "tb_bnb_set_wan_delay: %s",
                            !b ? "the handle is NULL"
                               : "expected seconds in [0, 60]; the delay is unchanged");
    if (b->plat && seconds > 0)
        return TB__REFUSE_H(b, TB_ERR_UNSUPPORTED,
                            "tb_bnb_set_wan_delay: a simulated run takes its "
                            "wide-area delay from the platform's links (wan-L=...)");
    b->wan_delay = seconds;
    return TB_OK;
}

int tb_bnb_set_sites(tb_bnb *b, int sites)
{
    if (!b || sites < 0)
        return TB__REFUSE_H(b, !b ? TB_ERR_INVALID : TB_ERR_RANGE, "tb_bnb_set_sites: %s",
                            !b ? "the handle is NULL" : "a negative number of sites; unchanged");
    if (sites > 0 && b->size > 1 && sites > b->size - 1)
        return TB__REFUSE_H(b, TB_ERR_SIZE,
                            "tb_bnb_set_sites: %d sites need at least %d ranks, the "
                            "run has %d; unchanged",
                            sites, sites + 1, b->size);
    b->sites = sites;
    return TB_OK;
}

int tb_bnb_set_trace_file(tb_bnb *b, const char *path)
{
    if (!b)
        return TB__REFUSE_H(b, TB_ERR_INVALID, "tb_bnb_set_trace_file: the handle is NULL");
    return tb__strset(&b->trace_path, path);
}

int tb_bnb_set_task_pad(tb_bnb *b, size_t bytes)
{
    if (!b || bytes > ((size_t)1 << 30))
        return TB__REFUSE_H(b, !b ? TB_ERR_INVALID : TB_ERR_RANGE, "tb_bnb_set_task_pad: %s",
                            !b ? "the handle is NULL" : "at most 1 GiB; unchanged");
    b->task_pad = bytes;
    return TB_OK;
}

int tb_bnb_set_sub_pad(tb_bnb *b, size_t bytes)
{
    if (!b || bytes > ((size_t)1 << 20))
        return TB__REFUSE_H(b, !b ? TB_ERR_INVALID : TB_ERR_RANGE, "tb_bnb_set_sub_pad: %s",
                            !b ? "the handle is NULL" : "at most 1 MiB; unchanged");
    b->sub_pad = bytes;
    return TB_OK;
}

int tb_bnb_set_progress(tb_bnb *b, FILE *stream)
{
    if (!b)
        return TB__REFUSE_H(b, TB_ERR_INVALID, "tb_bnb_set_progress: the handle is NULL");
    b->progress = stream;
    return TB_OK;
}

int tb_bnb_set_watch(tb_bnb *b, tb_bnb_watch_fn fn, void *arg, double interval)
{
    if (!b || !(interval > 0 && interval <= 3600))
        return TB__REFUSE_H(b, TB_ERR_INVALID, "tb_bnb_set_watch: %s",
                            !b ? "the handle is NULL"
                               : "the interval must be in (0, 3600] seconds; no watch is set");
    b->watch = fn;
    b->watch_arg = arg;
    b->watch_interval = interval;
    return TB_OK;
}

int tb_bnb_set_checkpoint(tb_bnb *b, const char *path, double interval_s)
{
    if (!b || (path && !*path) || !(interval_s >= 0 && isfinite(interval_s)))
        return TB__REFUSE_H(b, TB_ERR_INVALID, "tb_bnb_set_checkpoint: %s",
                            !b ? "the handle is NULL"
                            : path && !*path ? "an empty path"
                                             : "expected an interval in seconds >= 0");
    b->ckpt_interval = interval_s;
    return tb__strset(&b->ckpt_path, path);
}

int tb_bnb_set_resume(tb_bnb *b, const char *path)
{
    if (!b || (path && !*path))
        return TB__REFUSE_H(b, TB_ERR_INVALID, "tb_bnb_set_resume: %s",
                            !b ? "the handle is NULL" : "an empty path");
    return tb__strset(&b->resume_path, path);
}

int tb_bnb_set_identity(tb_bnb *b, const char *what)
{
    if (!b)
        return TB__REFUSE_H(b, TB_ERR_INVALID, "tb_bnb_set_identity: the handle is NULL");
    return tb__strset(&b->identity, what);
}

int tb_bnb_set_msg_budget(tb_bnb *b, size_t bytes)
{
    if (!b || bytes == 0)
        return TB__REFUSE_H(b, !b ? TB_ERR_INVALID : TB_ERR_RANGE, "tb_bnb_set_msg_budget: %s",
                            !b ? "the handle is NULL" : "expected bytes >= 1; unchanged");
    b->msg_budget = bytes;
    return TB_OK;
}

int tb_bnb_set_force_moves(tb_bnb *b, int on)
{
    if (!b)
        return TB__REFUSE_H(b, TB_ERR_INVALID, "tb_bnb_set_force_moves: the handle is NULL");
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
    s->optimum = tb__bnb_outward(b, e->inc);
    s->bound = tb__bnb_outward(b, lower < e->inc ? lower : e->inc);
    s->proven = proven;
    s->gap = proven || !s->found ? 0 : tb__bnb_gap(e->inc, lower);
    tb_buf_clear(&b->sol);
    tb_buf_append(&b->sol, e->sol.data, e->sol.len);
    s->solution = b->sol.data;
    s->solution_len = b->sol.len;
}

/* ---- checkpoints: the file is the same for every rank count ------------ */

/* What a checkpoint of this run says it is: the caller's words
 * (tb_bnb_set_identity) and what the library knows of the instance, its
 * sense and its root.  One rank or many, the same words: a checkpoint of
 * one resumes on the other. */
static int set_ckpt_identity(tb_bnb *b, int64_t root_len, double root_bound)
{
    size_t n = strlen(b->identity ? b->identity : "") + 128;
    free(b->ckpt_identity);
    b->ckpt_identity = malloc(n);
    if (!b->ckpt_identity)
        return TB_ERR_NOMEM;
    snprintf(b->ckpt_identity, n, "%s%s%s; root %" PRId64 " bytes, bound %.17g",
             b->identity ? b->identity : "", b->identity ? "; " : "",
             b->ops->sense == TB_BNB_MAXIMIZE ? "maximise" : "minimise", root_len, root_bound);
    return TB_OK;
}

/* The checkpoint to resume from into b->resume, read and checked whole (a
 * damaged record is refused now, not halfway); none when there is no
 * --resume, or when it is the file to keep and not there yet (a first
 * run).  A refusal's line is on b. */
static int read_resume(tb_bnb *b)
{
    const char *path = tb_checkpoint_resume_from(b->resume_path, b->ckpt_path);
    if (!path)
        return TB_OK;
    char err[TB__ERR_LINE];
    int rc = tb__ckpt_read(&b->resume, path, "bnb-open", b->ckpt_identity, err, sizeof err);
    b->resume_first = b->resume.at;
    uint64_t key;
    const void *d;
    size_t n;
    int k;
    while (rc == TB_OK && (k = tb__ckpt_next(&b->resume, &key, &d, &n, err, sizeof err)) != 0)
        if (k < 0)
            rc = k;
    if (rc != TB_OK)
        TB__ERR_H(b, "%s", err);
    b->resume.at = b->resume_first;
    return rc;
}

/* The sequential search's checkpoint: its queue and incumbent between two
 * nodes, in the supervisor's format (keep.c). */
typedef struct serial_keep {
    tb_bnb *b;
    uint64_t nodes_before; /* of the runs it resumed */
    uint64_t rounds;       /* written during the run */
    tb_progress *prog;     /* progress lines (tb_bnb_set_progress), or NULL */
    double t0, next_ckpt;  /* the run's start; the next checkpoint, from t0 */
} serial_keep;

static int serial_write(serial_keep *k, const tb__bnb_engine *e, const tb__bnb_heap *h,
                        uint64_t round)
{
    tb__bnb_keep w = {0};
    int rc = tb__bnb_keep_open(k->b, &w);
    if (rc == TB_OK)
        rc = tb__bnb_keep_heap(&w, h, tb__bnb_cutoff(e));
    if (rc == TB_OK)
        rc = tb__bnb_keep_close(k->b, &w, e, k->nodes_before + e->nodes, round);
    tb__bnb_keep_drop(&w);
    return rc;
}

void tb__bnb_progress_line(tb_progress *p, double now, const tb_bnb_state *st)
{
    tb_progress_note(p, now, 0,
                     "bnb: %.1f s  incumbent %.10g  bound %.10g  gap %.3g%%  pending %" PRIu64
                     "  nodes %" PRIu64,
                     now, st->incumbent, st->bound, 100 * st->gap, st->pending, st->nodes);
}

/* Between two nodes, every so often: a progress line as a parallel run's
 * supervisor prints it, and the checkpoint when it is due. */
static int serial_round(void *arg, const tb__bnb_engine *e, const tb__bnb_heap *h)
{
    serial_keep *k = arg;
    double now = tb_wtime() - k->t0;
    if (k->prog && now >= tb_progress_note_due(k->prog)) {
        double mb = tb__bnb_heap_min_bound(h), lower = mb < e->inc ? mb : e->inc;
        tb_bnb_state st = {.incumbent = tb__bnb_outward(k->b, e->inc),
                           .bound = tb__bnb_outward(k->b, lower),
                           .gap = tb__bnb_gap(e->inc, lower),
                           .pending = h->n,
                           .nodes = e->nodes};
        tb__bnb_progress_line(k->prog, now, &st);
    }
    if (k->b->ckpt_path && k->b->ckpt_interval > 0 && now >= k->next_ckpt) {
        TB_CHECK(serial_write(k, e, h, k->rounds + 1));
        k->rounds++;
        k->next_ckpt = now + k->b->ckpt_interval;
    }
    return TB_OK;
}

/* The sequential search's start: the root, or with a checkpoint to resume
 * its open subproblems and incumbent.  With a checkpoint to keep or to
 * resume, the instance's words first (from the root). */
static int serial_start(tb_bnb *b, tb__bnb_engine *e, tb__bnb_heap *h, serial_keep *k)
{
    tb__bnb_sub root = {0};
    TB_CHECK(tb__bnb_root(e, &root));
    int rc = TB_OK;
    if (b->ckpt_path || b->resume_path) {
        rc = set_ckpt_identity(b, (int64_t)root.len, root.bound);
        if (rc == TB_OK)
            rc = read_resume(b);
    }
    if (rc == TB_OK && b->resume.data) {
        double inc;
        const void *sol;
        size_t sol_len;
        rc = tb__bnb_keep_load(b, h, &inc, &sol, &sol_len, &k->nodes_before);
        if (rc == TB_OK && isfinite(inc)) {
            e->inc = inc;
            tb_buf_clear(&e->sol);
            rc = tb_buf_append(&e->sol, sol, sol_len);
        }
        free(root.data);
        return rc;
    }
    if (rc == TB_OK && (rc = tb__bnb_heap_push(h, root)) == TB_OK)
        return TB_OK;
    free(root.data);
    return rc;
}

/* P = 1: the sequential search, kept in a checkpoint as a parallel run's
 * is (tb_bnb_set_checkpoint): every interval between two nodes, and at the
 * end whatever ends it. */
static int run_serial(tb_bnb *b)
{
    tb__bnb_engine e;
    tb__bnb_engine_init(&e, b->ops, b->ctx, b->gap);
    tb__bnb_heap h = {.dive = 1, .limit = b->pool_limit};
    double lower = 0, t0 = tb_wtime();
    serial_keep k = {b, 0, 0, NULL, t0, b->ckpt_interval};
    /* the hook's period: the checkpoint's, or the progress lines' if shorter */
    tb__bnb_serial_hook hook = {b->ckpt_path ? b->ckpt_interval : 0, serial_round, &k};
    int proven = 0;
    int rc = b->progress ? tb_progress_create(&k.prog, b->progress, "nodes", 0,
                                              TB_PROGRESS_INTERVAL_ENV)
                         : TB_OK;
    if (rc == TB_OK && k.prog) {
        double every = tb_progress_note_due(k.prog); /* its interval, on a clock from 0 */
        every = every > 0.05 ? every : 0.05;
        if (!(hook.every > 0) || every < hook.every)
            hook.every = every;
    }
    if (rc == TB_OK)
        rc = serial_start(b, &e, &h, &k);
    if (rc == TB_OK)
        rc = tb__bnb_serial_on(&e, &h, 0, &hook, &lower, &proven);
    if (rc == TB_OK && b->ckpt_path) /* a failed run keeps the last checkpoint as it was */
        rc = serial_write(&k, &e, &h, 0);
    tb_progress_destroy(&k.prog);
    tb__bnb_heap_free(&h);
    double wall = tb_wtime() - t0;
    memset(&b->sum, 0, sizeof b->sum);
    if (rc == TB_OK) {
        summary_base(b, &e, lower, proven);
        b->sum.interrupted = proven ? 0 : tb_signals_pending();
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
    return (double)((tb__bnb_actor *)ba)->last_nodes * b->node_cost;
}

/* The supervisor holds the results: into the summary. */
static int finish_summary(tb_bnb *b, const tb__bnb_sup *sup, double makespan, double wall,
                          uint64_t msgs)
{
    summary_base(b, &sup->eng, sup->final_lower, sup->proven);
    tb_bnb_summary *s = &b->sum;
    s->interrupted = sup->proven ? 0 : sup->interrupted; /* done anyway: not cut short */
    s->makespan_s = makespan;
    s->wall_s = wall;
    s->messages = msgs;
    s->nodes = sup->nodes;
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

/* The run layer's view of the actors (run/run.h). */
static int run_actor_init(void *ctx, tb_actor *a, int rank)
{
    return actor_init((tb__bnb_actor *)a, ctx, rank);
}

static void run_actor_fini(void *ctx, tb_actor *a)
{
    (void)ctx;
    actor_free((tb__bnb_actor *)a);
}

static const tb__run_ops run_ops = {sizeof(tb__bnb_actor), run_actor_init, NULL, run_actor_fini};

static tb__bnb_actor *run_actor(const tb__run *run, int i) { return (tb__bnb_actor *)run->actors[i]; }

static const tb_trace *actor_trace(void *ctx, tb_actor *a)
{
    (void)ctx;
    return ((tb__bnb_actor *)a)->tr;
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
    tb__run run = {.what = "the branch-and-bound run", .plat = b->plat, .ranks = P,
                   .cost = sim_cost_fn, .cost_ctx = b, .err = b->err, .errlen = sizeof b->err};
    rc = tb__run_go(&run, &run_ops, b);
    if (rc == TB_OK) {
        uint64_t msgs = 0;
        for (int r = 0; r < P; r++)
            msgs += run.counts[r].msgs_sent;
        memset(&b->sum, 0, sizeof b->sum);
        const tb__bnb_sup *sup = &run_actor(&run, 0)->sup;
        rc = finish_summary(b, sup, sup->t_end, run.wall_s, msgs);
    }
    if (rc == TB_OK && b->trace_path)
        rc = tb__run_write_trace(&run, actor_trace, NULL, b->trace_path);
    tb__run_end(&run, &run_ops, b);
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
        tb__agree_int("the split (tb_bnb_set_split)", b->split),
        tb__agree_int("the balancing rule (tb_bnb_set_balance)", b->balance),
        tb__agree_double("the status interval (tb_bnb_set_status_interval)", b->status_interval),
        tb__agree_double("the wide-area delay (tb_bnb_set_wan_delay)", b->wan_delay),
        tb__agree_int("the task padding", (int64_t)b->task_pad),
        tb__agree_int("the subproblem padding", (int64_t)b->sub_pad),
        tb__agree_int("forced moves", b->force_moves),
        tb__agree_int("the message budget", (int64_t)b->msg_budget),
        tb__agree_int("whether the open subproblems are kept (tb_bnb_set_checkpoint)",
                      b->ckpt_path != NULL),
        tb__agree_double("the checkpoint interval (tb_bnb_set_checkpoint)", b->ckpt_interval),
    };
    if (rc == TB_OK && b->rank == 0 && (b->ckpt_path || b->resume_path))
        rc = set_ckpt_identity(b, root_len, root_bound);
    int arc = tb__run_agree(b->comm, "tb_bnb_run", items, (int)(sizeof items / sizeof items[0]));
    return arc != TB_OK ? arc : rc;
}

/* Rank 0: the checkpoint to resume from, read and checked whole before the
 * run (a damaged record is refused now, not halfway); every rank learns the
 * verdict. */
static int prepare_resume(tb_bnb *b)
{
    int rc = b->rank == 0 ? read_resume(b) : TB_OK;
    tb__run_bcast(b->comm, &rc, sizeof rc);
    return rc;
}

static int run_mpi(tb_bnb *b)
{
    int P = b->size;
    TB_CHECK(check_agreement(b));
    TB_CHECK(prepare_resume(b));
    /* Node of each rank: the smallest rank of b->comm on its node. */
    int leader = tb__run_node_leader(b->comm);
    int *leaders = malloc((size_t)P * sizeof *leaders);
    long *key = malloc((size_t)P * sizeof *key);
    if (!leaders || !key) {
        free(leaders);
        free(key);
        return TB_ERR_NOMEM;
    }
    tb__run_allgather(b->comm, &leader, leaders, sizeof leader);
    for (int r = 0; r < P; r++)
        key[r] = leaders[r];
    free(leaders);
    int rc = make_layout(b, key);
    free(key);
    TB_CHECK(rc);
    double *delay = NULL;
    if (b->wan_delay > 0) {
        /* Every message between groups (the supervisor is a site of its
         * own) is held for the one-way delay. */
        delay = calloc((size_t)P, sizeof *delay);
        if (!delay)
            return TB_ERR_NOMEM;
        for (int r = 0; r < P; r++)
            delay[r] = site_of(b, r) != site_of(b, b->rank) ? b->wan_delay : 0;
    }
    tb__run run = {.what = "the branch-and-bound run", .comm = b->comm, .delay = delay,
                   .err = b->err, .errlen = sizeof b->err};
    rc = tb__run_go(&run, &run_ops, b); /* a failure has ended the job */
    free(delay);
    if (rc != TB_OK) {
        tb__run_end(&run, &run_ops, b);
        return rc;
    }
    tb__bnb_actor *a = run_actor(&run, 0);
    uint64_t total = tb__run_sum_u64_root(b->comm, run.counts[0].msgs_sent);
    memset(&b->sum, 0, sizeof b->sum);
    if (b->rank == 0)
        rc = finish_summary(b, &a->sup, run.wall_s, run.wall_s, total);
    tb__run_bcast(b->comm, &rc, sizeof rc);
    if (rc == TB_OK && b->trace_path) /* collective */
        rc = tb__run_write_trace(&run, actor_trace, NULL, b->trace_path);
    tb__run_end(&run, &run_ops, b);
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
    if ((b->ckpt_path || b->resume_path) && b->plat)
        return TB__FAIL_H(b, TB_ERR_UNSUPPORTED, "tb_bnb_run: %s", TB__BNB_SIM_NO_CKPT);
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
        int proven, rc = tb__bnb_serial(&e, budget, 0, &lower, &proven);
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


int tb_bnb_summary_json(const tb_bnb_summary *s, const char *extra, tb_buf *out)
{
    if (!s || !out)
        return TB_ERR_INVALID;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return TB_ERR_NOMEM;
    int bad = 0;
    /* upper and lower as the sense puts them; no values without a solution */
    double lower = s->sense == TB_BNB_MINIMIZE ? s->bound : s->optimum;
    double upper = s->sense == TB_BNB_MINIMIZE ? s->optimum : s->bound;
    bad |= tb__json_num(o, "optimum", s->found ? s->optimum : NAN);
    bad |= tb__json_num(o, "bound", s->found ? s->bound : NAN);
    bad |= tb__json_num(o, "upper", s->found ? upper : NAN);
    bad |= tb__json_num(o, "lower", s->found ? lower : NAN);
    bad |= tb__json_bool(o, "proven", s->proven);
    bad |= tb__json_str(o, "interrupted", s->interrupted ? tb_signal_name(s->interrupted) : NULL);
    bad |= tb__json_num(o, "gap", s->gap);
    bad |= tb__json_u64(o, "nodes", s->nodes);
    bad |= tb__json_u64(o, "tasks", s->tasks);
    bad |= tb__json_int(o, "depth", s->depth);
    bad |= tb__json_num(o, "makespan_s", s->makespan_s);
    bad |= tb__json_num(o, "wall_s", s->wall_s);
    bad |= tb__json_int(o, "ranks", s->ranks);
    bad |= tb__json_bool(o, "simulated", s->simulated);
    bad |= tb__json_u64(o, "messages", s->messages);
    cJSON *groups = cJSON_AddArrayToObject(o, "groups");
    bad |= !groups;
    for (int g = 0; g < s->ngroups && !bad; g++) {
        const tb_bnb_group *G = &s->groups[g];
        cJSON *j = cJSON_CreateObject();
        bad |= !cJSON_AddItemToArray(groups, j);
        if (bad)
            break;
        bad |= tb__json_int(j, "master", G->master);
        bad |= tb__json_int(j, "workers", G->workers);
        bad |= tb__json_u64(j, "tasks", G->tasks);
        bad |= tb__json_u64(j, "nodes", G->nodes);
        bad |= tb__json_num(j, "busy_s", G->busy_s);
        bad |= tb__json_num(j, "idle_s", G->idle_s);
        bad |= tb__json_num(j, "startup_idle_s", G->startup_idle_s);
        bad |= tb__json_u64(j, "moved_in", G->moved_in);
        bad |= tb__json_u64(j, "moved_out", G->moved_out);
    }
    return tb__json_emit(o, bad, extra, out);
}
