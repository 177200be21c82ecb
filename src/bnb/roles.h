/*
 * roles.h - the branch-and-bound actors' state, one struct per role, and
 * what the role files share (internal).
 *
 * Every rank runs one actor (tb__bnb_actor): rank 0 the supervisor
 * (supervisor.c), each group's first rank its master (master.c), the others
 * the master's workers (worker.c).  The actor holds what every role uses
 * (the transport's base, the handle, the role, the send buffer, the trace)
 * and, in a union, the state of its role.  A master without workers expands
 * its tasks itself: it holds a worker's state too (tb__bnb_master.w).
 * bnb.c dispatches the transport's handlers to the roles and holds the
 * handle (struct tb_bnb), the layout and the API.
 */
#ifndef TB_BNB_ROLES_H
#define TB_BNB_ROLES_H

#include "core/ckpt.h"
#include <stdint.h>
#include <stdio.h>

#include "bnb/bnb_internal.h"
#include "core/refuse.h"
#include "transport/transport.h"

enum { ROLE_SUP, ROLE_MASTER, ROLE_WORKER };
enum { JOB_STARTUP = 1, JOB_TASK = 2 };
enum { TIMER_STATUS = 1, TIMER_PROGRESS = 2, TIMER_CKPT = 3 };

struct tb_bnb {
    MPI_Comm comm;
    int rank, size;
    char err[TB__ERR_LINE]; /* the last failure's line (tb_bnb_error) */
    const tb_platform *plat;
    const tb_bnb_ops *ops;
    void *ctx;
    double gap, task_time, node_cost, status_interval, wan_delay;
    int groups, sites, depth, startup, force_moves;
    int split; /* use the problem's split (tb_bnb_set_split) */
    size_t task_pad;
    size_t sub_pad; /* per subproblem returned or moved (tb_bnb_set_sub_pad) */
    size_t pool_limit; /* bytes of each queue before it goes depth first (tb_bnb_set_pool_limit) */
    size_t msg_budget; /* bytes of subproblems per message (TB__BNB_MSG_BUDGET) */
    char *ckpt_path;   /* tb_bnb_set_checkpoint: the open subproblems go there */
    double ckpt_interval; /* seconds between checkpoint rounds during the run (0: only at the end) */
    char *resume_path; /* tb_bnb_set_resume */
    char *identity;    /* tb_bnb_set_identity */
    char *ckpt_identity; /* what the checkpoint files say this run is (rank 0) */
    tb__ckpt_reader resume; /* rank 0: the checkpoint to resume from, checked, or empty */
    size_t resume_first;    /* offset of its first record */
    tb_bnb_balance balance;
    FILE *progress;
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

/* A checkpoint of open subproblems being written (keep.c). */
typedef struct tb__bnb_keep {
    tb__ckpt_writer w;
    int open;      /* begun, not closed yet */
    uint64_t kept; /* subproblems in it */
} tb__bnb_keep;

/* A worker, or the tasks of a master without workers. */
typedef struct tb__bnb_worker {
    int master;          /* its master's rank (a worker) */
    tb__bnb_engine eng;  /* the tasks' expansion */
    tb__bnb_sub *subs;   /* the subproblems of the current task */
    size_t nsubs, capsubs;
    uint64_t task_id;
    uint32_t levels;
    uint32_t nout;       /* survivors of the task just expanded, in out */
    tb_buf out;
    double t_start, free_since;
    int had_task;
    uint64_t tasks, nodes;
    double busy, idle, startup_idle;
} tb__bnb_worker;

/* A worker slot of a master: one of its workers, or itself. */
typedef struct tb__bnb_slot {
    int rank;
    int busy;
    int stopped;  /* its WSTOP was sent */
    int final;    /* its WFINAL came */
    double bound; /* of the task it has */
} tb__bnb_slot;

/* A group's master. */
typedef struct tb__bnb_master {
    int group;
    tb__bnb_engine eng; /* the incumbent */
    tb__bnb_worker w;   /* self: its own tasks */
    tb_buf res;         /* self: the result of its own task */
    tb_buf subs;        /* the subproblems of a TASK or GIVE being built */
    tb__bnb_slot *slots;
    int nslots, self;
    tb__bnb_heap q;
    uint32_t depth, batch; /* levels per task, subproblems per task */
    int auto_depth;
    double ewma;
    uint64_t next_id, tasks, nodes;
    double busy, idle, startup_idle;
    uint64_t gives_sent, moves_got, moved_in, moved_out;
    uint64_t cuts; /* task answers that stopped at their budget */
    uint64_t to_sup, from_sup;
    int64_t stop_expect; /* -1 until STOP */
    int stopping, hungry_said, empty_said, dirty;
    int ckpt_pending; /* a checkpoint round: no new task until the group's part is sent */
} tb__bnb_master;

/* What the supervisor knows of a group: its master's last STATUS. */
typedef struct tb__bnb_mstat {
    int valid;
    uint64_t queued, inflight, tasks, nodes, gives_sent, moves_got;
    double lower, busy;
    uint32_t workers;
    int hungry;
} tb__bnb_mstat;

/* The supervisor (rank 0); arrays are [ngroups]. */
typedef struct tb__bnb_sup {
    tb__bnb_engine eng; /* the incumbent; the start-up expansion */
    tb__bnb_heap pool;
    tb__bnb_mstat *st;
    uint64_t *gives_recv, *moves_sent, *sent_to, *got_from;
    int64_t *final_expect;
    int *req_out, *finaled;
    tb_bnb_group *gs;
    int stopping, proven;
    int interrupted; /* the signal that asked for the stop, or 0 */
    tb__bnb_keep keep;    /* tb_bnb_set_checkpoint: the snapshot being written */
    int ckpt_round;       /* a round during the run is under way */
    int ckpt_wait;        /* groups whose CKPT_DONE is still to come */
    uint64_t ckpt_rounds; /* rounds written */
    uint64_t nodes_before; /* nodes of the runs it resumed */
    double lower, final_lower;
    uint64_t nodes;
    double t_end;          /* when the last FINAL came */
    double t_startup;      /* when its start-up expansion began */
    uint32_t final_depth;  /* the deepest task depth a master ended with */
    tb_progress *prog;                /* the progress lines (b->progress), or NULL */
    double next_watch;                /* run time of the next watch */
    int stop_asked;                   /* the watch asked for the end */
    tb_bnb_watch_group *wg;           /* the watch's groups */
} tb__bnb_sup;

typedef struct tb__bnb_actor {
    tb_actor base; /* first */
    tb_bnb *b;
    int role;
    uint64_t last_nodes; /* nodes of the computation that just ran (simulated cost) */
    tb_trace *tr;        /* this rank's events (tb_bnb_set_trace_file), or NULL */
    tb_buf msg;          /* the message being built */
    union {
        tb__bnb_sup sup;
        tb__bnb_master master;
        tb__bnb_worker worker;
    };
} tb__bnb_actor;

/* ---- shared helpers ------------------------------------------------------ */

static inline double tb__bnb_outward(const tb_bnb *b, double v)
{
    return b->ops->sense == TB_BNB_MAXIMIZE ? -v : v;
}

static inline int tb__bnb_send(tb__bnb_actor *a, int dst, int tag)
{
    return tb_tp_send(&a->base, dst, tag, &a->msg);
}

/* Done: no more messages; a pending timer is cancelled (transport.h). */
static inline void tb__bnb_close(tb__bnb_actor *a) { a->base.finished = 1; }

static inline int tb__bnb_set_timer(tb__bnb_actor *a, double at, uint64_t id)
{
    return tb_tp_timer(&a->base, at, id);
}

/* ---- keep.c: the checkpoint of open subproblems (kind "bnb-open") -------- */

/* Why a simulated run is refused a checkpoint (tb_bnb_run): the file would
 * hold the search, not the simulation, and a simulation's answer is its
 * timeline on the modelled platform. */
#define TB__BNB_SIM_NO_CKPT                                                                    \
    "a simulated run keeps no checkpoint: a checkpoint holds the open subproblems, not the "   \
    "simulation's virtual clock, platform and messages in flight, so a resumed simulation "    \
    "would time neither run; rerun it (it is deterministic), or checkpoint a real run"

/* Begin a snapshot to b->ckpt_path (the old file stays until it is closed);
 * a failure's line is on b. */
int tb__bnb_keep_open(tb_bnb *b, tb__bnb_keep *k);
/* Add one open subproblem (bound in minimisation sense). */
int tb__bnb_keep_sub(tb__bnb_keep *k, double bound, uint32_t depth, const void *data, size_t len);
/* Add every subproblem of h whose bound is under cutoff (INFINITY: all). */
int tb__bnb_keep_heap(tb__bnb_keep *k, const tb__bnb_heap *h, double cutoff);
/* Add the incumbent of e (value and solution) and the nodes of every run so
 * far, write the file and rename it into place; say so in one line: round
 * N of the run, or round 0 for the end of the run. */
int tb__bnb_keep_close(tb_bnb *b, tb__bnb_keep *k, const tb__bnb_engine *e, uint64_t nodes,
                       uint64_t round);
/* A run that failed: drop the snapshot being written (the old file stays). */
void tb__bnb_keep_drop(tb__bnb_keep *k);
/* --resume: the open subproblems of b->resume (read and checked before the
 * run) into h, its incumbent (+inf if none) and solution (bytes valid while
 * b->resume is) and the nodes of the runs before. */
int tb__bnb_keep_load(tb_bnb *b, tb__bnb_heap *h, double *inc, const void **sol, size_t *sol_len,
                      uint64_t *nodes_before);

/* ---- worker.c ------------------------------------------------------------ */

void tb__bnb_worker_init(tb__bnb_worker *w, const tb_bnb *b, int master);
void tb__bnb_worker_free(tb__bnb_worker *w);
/* The worker state of a (a worker's, or a master's own). */
tb__bnb_worker *tb__bnb_worker_of(tb__bnb_actor *a);
/* Add a subproblem to the current task (taken on success). */
int tb__bnb_worker_add(tb__bnb_worker *w, tb__bnb_sub s);
/* Start the current task's computation; after it, its counters and its
 * result into m. */
int tb__bnb_start_task(tb__bnb_actor *a);
int tb__bnb_end_task(tb__bnb_actor *a, tb_buf *m);
int tb__bnb_worker_start(tb__bnb_actor *a);
int tb__bnb_worker_message(tb__bnb_actor *a, int src, int tag, const void *data, size_t len);
int tb__bnb_worker_computed(tb__bnb_actor *a);

/* ---- master.c ------------------------------------------------------------ */

int tb__bnb_master_init(tb__bnb_actor *a, int group);
void tb__bnb_master_free(tb__bnb_master *m);
int tb__bnb_master_start(tb__bnb_actor *a);
int tb__bnb_master_message(tb__bnb_actor *a, int src, int tag, const void *data, size_t len);
int tb__bnb_master_computed(tb__bnb_actor *a);
int tb__bnb_master_timer(tb__bnb_actor *a, uint64_t id);

/* ---- supervisor.c -------------------------------------------------------- */

int tb__bnb_sup_init(tb__bnb_actor *a);
void tb__bnb_sup_free(tb__bnb_sup *s);
int tb__bnb_sup_start(tb__bnb_actor *a);
int tb__bnb_sup_message(tb__bnb_actor *a, int src, int tag, const void *data, size_t len);
/* The start-up expansion ended: deal its pool. */
int tb__bnb_sup_startup_done(tb__bnb_actor *a);
int tb__bnb_sup_timer(tb__bnb_actor *a, uint64_t id);
/* A stop from outside: end the search as a reached gap would. */
int tb__bnb_sup_interrupt(tb__bnb_actor *a, int sig);

#endif /* TB_BNB_ROLES_H */
