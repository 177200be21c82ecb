/*
 * mw_internal.h - the master-worker runtime's insides, shared by the MPI
 * driver (mw.c) and any other transport's driver (the simulator).
 *
 * Every rank runs one `tb__mw_node` actor.  A node is a worker, a master, or
 * (on a one-rank group) a master that computes its own tasks.  The policy is
 * the node's handlers in node.c and the files by role they call (listed in
 * node_internal.h); they act only through transport.h.
 *
 * Messages (tags) and their bodies, all little-endian via tb_buf (packed and
 * unpacked by the functions of proto.h):
 *   TASK    master -> worker   u32 n, task record * n
 *   RESULT  worker -> master   u32 n, result record * n (stops after a failure);
 *                              dynamic:wait adds f64 wait, f64 compute:
 *                              the seconds the worker waited for the task
 *                              message and computed it
 *   REQ     master -> master   u32 workers, u32 spell  "give me tasks; I have this
 *                              many workers, and have run out for the spell-th
 *                              time" (multi:K; 0 otherwise)
 *   GIVE    master -> master   u8 kind (0 answer, 1 initial share, 2 part of the
 *                              initial share, more follows), [an answer under
 *                              multi:K, K > 2: the giver's spells, as in REFUSE],
 *                              queue give body
 *   REFUSE  master -> master   multi:K, K > 2: u32 K, u32 * K what the refuser
 *                              knows of each master's spells (request.c); dynamic:
 *                              u32 n, i32 rank * n child masters to ask; else empty
 *   FWD     master -> root     u32 n, result record * n (status 0)
 *   FAIL    master -> root     u64 task, i32 rank, i32 code
 *   ABORT   root -> masters    (empty)      stop handing out tasks
 *   DONE    master -> its parent among the static masters (a binomial tree
 *                              over k; the root at the top)
 *                              u64 sent     all the work of my subtree of static
 *                              masters is finished; they and the children that
 *                              returned to them sent the root `sent` result
 *                              records in FWD messages; counts as in RETURN
 *   FINISH  master -> its children in that tree   i32 status   the run is over
 *   STOP    master -> worker   i32 status, u32 n, i32 rank * n: pass STOP on to
 *                              these ranks (a binomial tree), then leave the loop
 * Dynamic policies (S1), between a master and the masters it makes:
 *   MSTART  master -> worker   u32 n, i32 rank * n (busy workers it will free
 *                              for the new master), u32 m, i32 rank * m (idle
 *                              workers, the new master's at once), u8 fan out
 *                              at once (a fan-out), queue give body
 *   FREE    master -> child    i32 rank     that worker finished our task: yours
 *   RETURN  child -> master    u32 n, i32 rank * n, u64 sent, u8 merged, counts:
 *                              done; take me and these back; records sent to the
 *                              root as in DONE; merged: I merged back for lack of
 *                              work; counts: u32 m, (i32 delta, f64 time) * m, the
 *                              changes of the master count seen in my subtree
 *   HAVE    child -> parent    (empty; dynamic, dynamic:wait) its parent refused it,
 *                              and it has tasks again from another master or a
 *                              merging child: the parent may name it in refusals
 *   REDUCE  rank -> the rank that sent it STOP (a static master: to the root)
 *                              partial bytes: this rank's partial combined with
 *                              its subtree's (tb_mw_set_reduce with a combine)
 * Every master, child or not, sends FWD straight to the root: passing results
 * up the promotion tree made the masters near the root spend their time on
 * their descendants' results.  Nothing then orders a child's FWD before its
 * RETURN, so the counts in RETURN and DONE tell the root how many records to
 * wait for before it says FINISH.  FAIL still goes to the parent.
 * The K static masters send DONE and FINISH along a binomial tree of their
 * indices (tree.c).
 */
#ifndef TB_MW_INTERNAL_H
#define TB_MW_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/ckpt.h"
#include "tenbin/core.h"
#include "tenbin/mw.h"
#include "mw/queue.h"
#include "transport/transport.h"

#include "mw/proto.h"

/* Test hook for dynamic policies: called when worker `worker`'s result
 * reaches master `master` and a promotion is possible; return 1 to force
 * one, -1 to forbid it, 0 to apply the policy's rule.  dynamic and
 * dynamic:wait also call it with worker -1 at the end of each period of a
 * child master that could merge back: 1 forces the merge, -1 forbids it. */
typedef int (*tb__mw_promote_hook)(void *ctx, int master, int worker, uint64_t assigned);

/* Dynamic policies: the paper's overload rule, the predicted gain, or the
 * workers' waiting time (S3's split and merge). */
enum { TB__MW_DYNAMIC_PAPER = 1, TB__MW_DYNAMIC_PREDICT = 2, TB__MW_DYNAMIC_WAIT = 3 };

/* What every node of one run shares (identical on every rank). */
typedef struct tb__mw_cfg {
    int nranks;
    int nmasters;             /* K */
    char policy[32];
    unsigned chunk;           /* the fixed chunk (chunk_kind TB__CHUNK_FIXED) */
    int chunk_kind;           /* TB__CHUNK_* (mw/chunk.h) */
    int timed;                /* workers report their times (dynamic:wait, adaptive chunks) */
    size_t forward_bytes;
    tb_mw_work_fn work;
    void *work_ctx;
    tb_mw_result_fn result;
    void *result_ctx;
    tb_mw_fold_fn fold;       /* results consumed where they arrive */
    tb_mw_combine_fn combine; /* and their partials reduced to rank 0 */
    void *reduce_ctx;
    tb_mw_gen_fn gen;
    void *gen_ctx;
    uint64_t ntasks;          /* generator size, or tasks added on the root */
    int dynamic;              /* masters may promote workers (S1): TB__MW_DYNAMIC_* */
    int window;               /* assignments the overload test averages; 0 = 2P */
    double wait_split;        /* dynamic:wait: split above this queueing share */
    tb__mw_promote_hook promote_hook;
    void *hook_ctx;
    char *err;                /* the handle's error line (tb_mw_error) */
    size_t errlen;
    struct tb__mw_journal *journal; /* rank 0: the checkpoint being written, or NULL */
} tb__mw_cfg;

/* ---- journal.c: the checkpoint (results delivered on rank 0) ---------- */

typedef struct tb__mw_journal {
    tb__ckpt_writer w;
    int open;
    double interval, last; /* seconds between fsyncs; the last one (tb_wtime) */
    unsigned char *done;   /* resumed: bit per task whose result came from the file */
    uint64_t resumed;
    double spent;          /* seconds in the journal's copies and fsyncs (its cost) */
} tb__mw_journal;

/* Read the checkpoint at path and hand its results to result(), marking
 * their tasks done in j->done. */
int tb__mw_journal_resume(tb__mw_journal *j, const char *path, const char *what, uint64_t ntasks,
                          tb_mw_result_fn result, void *result_ctx, char *err, size_t errlen);
/* Start writing the checkpoint at path (append: continue the one there). */
int tb__mw_journal_open(tb__mw_journal *j, const char *path, double interval, int append,
                        const char *what, uint64_t ntasks, char *err, size_t errlen);
/* A result delivered: into the journal (durable at the next interval). */
int tb__mw_journal_add(tb__mw_journal *j, uint64_t id, const void *data, size_t len);
int tb__mw_journal_sync(tb__mw_journal *j, char *err, size_t errlen);
uint64_t tb__mw_journal_records(const tb__mw_journal *j);
int tb__mw_journal_close(tb__mw_journal *j, char *err, size_t errlen);

struct tb_mw;
/* Tests: install a promotion hook on a handle (before tb_mw_run). */
void tb__mw_set_promote_hook(struct tb_mw *mw, tb__mw_promote_hook hook, void *ctx);

/* First rank of master k's group; group k is [group_start(k), group_start(k+1)). */
static inline int tb__mw_group_start(const tb__mw_cfg *c, int k)
{
    return (int)(((int64_t)k * c->nranks) / c->nmasters);
}

typedef struct tb__mw_master tb__mw_master;

typedef struct tb__mw_node {
    /* What a worker touches for every task, in four cache lines (the
     * simulator at thousands of ranks waits for memory: each of a task's
     * two events at a worker touches these four and no other line of it;
     * docs/benchmarks.md), then the rest; nodes start a cache line
     * (run.c). */
    /* line 0 */
    tb_actor base;
    const tb__mw_cfg *cfg;
    tb__mw_master *master;    /* non-NULL while this node is a master */
    uint32_t in_left;         /* records still to compute */
    int reply_to;             /* master that sent it */
    uint32_t out_n;
    int ending;               /* STOP or FINISH came: no more work */
    uint64_t cur_id;
    /* line 1 */
    const void *cur_data;
    size_t cur_len;
    tb_buf *cur_in;           /* which of in_view and in is being read */
    tb_trace *trace;          /* may be NULL */
    double t_wait, t_compute;
    double busy_s, idle_s;    /* info's, kept here while the node runs (finish_info) */
    /* line 2 */
    tb_buf out;               /* result message being built */
    tb_buf scratch;           /* the worker function's result */
    /* line 3 */
    tb_buf in_view;           /* the message itself, for a chunk of one task */
    uint64_t tasks_computed;  /* info's, as busy_s */
    double t_last_end;        /* when its last computation ended (info.last_task_end_s) */
    double t_arrived;         /* when the current task message arrived */
    double chunk_sq;          /* sum of the squared task times of the current chunk */
    /* counters for the summary */
    double t_start;
    tb_mw_rank_info info;
    /* the rest */
    tb_buf in;                /* copy of the task message being worked (chunks of 2 or more) */
    tb_buf spare;             /* a master's own results while it reads them */
    double trace_t0;          /* trace clock at transport time zero */
    tb_progress *progress;    /* root only, may be NULL */
    tb__queue *root_bag;      /* root only: the tasks added by the user */
    int status;               /* final status of the run seen by this node */
    tb_buf partial;           /* tb_mw_set_reduce: this rank's partial */
    int reduce_wait;          /* REDUCE messages still to come before this rank ends */
    int reduce_up;            /* where this rank's partial goes (-1: it is the root) */
    int reduce_failed;        /* a fold or combine of this subtree failed */
} tb__mw_node;

#if UINTPTR_MAX == UINT64_MAX /* the layout above counts 8-byte pointers and sizes */
_Static_assert(offsetof(tb__mw_node, cur_data) == 64 && offsetof(tb__mw_node, out) == 128 &&
                   offsetof(tb__mw_node, in_view) == 192 && offsetof(tb__mw_node, t_start) == 256,
               "a worker's per-task fields are the node's first four cache lines");
#endif

/* Initialise node `rank` of a run: role from cfg; root_bag is the root's
 * queue (rank 0) or NULL.  The node's transport is set when it runs. */
int tb__mw_node_init(tb__mw_node *n, const tb__mw_cfg *cfg, int rank, tb__queue *root_bag,
                     tb_trace *trace, tb_progress *progress);
void tb__mw_node_free(tb__mw_node *n);
/* Fill n->info's fields that come from the node (not the transport's counts).
 * Root: failed_* describe the first failure. */
void tb__mw_node_finish_info(tb__mw_node *n);
int tb__mw_node_failure(const tb__mw_node *n, uint64_t *task, int *rank, int *code);
uint64_t tb__mw_node_results(const tb__mw_node *n);
/* Root: the most masters at any time of the run. */
int tb__mw_node_masters_max(const tb__mw_node *n);
/* Root: the changes of the master count, in time order (up to cap into out);
 * returns how many there are. */
size_t tb__mw_node_masters_changes(const tb__mw_node *n, tb_mw_masters_point *out, size_t cap);

extern const tb_actor_ops tb__mw_node_ops;

#endif /* TB_MW_INTERNAL_H */
