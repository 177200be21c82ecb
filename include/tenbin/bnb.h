/*
 * tenbin/bnb.h - hierarchical master-worker branch-and-bound (S5).
 *
 * A problem is an ops table over subproblems that are byte strings (the
 * problem writes and reads them; they travel between ranks as they are).
 * Tenbin runs the search with a supervisor over groups, each group a master
 * and its workers, one group per node (MPI) or per cluster (simulated), so
 * that the master-worker traffic stays inside a group and only statuses,
 * incumbents and moved subproblems cross between groups.
 *
 *     tb_bnb *b;
 *     tb_bnb_create(&b, MPI_COMM_WORLD, &knapsack_ops, &inst);   // collective
 *     tb_bnb_set_gap(b, 0.0);
 *     int rc = tb_bnb_run(b);                                    // collective
 *     tb_bnb_summary s;
 *     tb_bnb_get_summary(b, &s);                                 // rank 0
 *     tb_bnb_destroy(&b);
 *
 * Roles: rank 0 is the supervisor; ranks 1..P-1 are split into groups
 * (contiguous blocks; the first rank of a group is its master, the others
 * its workers; a master without workers expands its subproblems itself).
 * One rank (P = 1) runs the plain sequential best-first search.
 *
 * Worker: expands the subproblem of a task depth-first down to `depth`
 * levels below it, pruning with the incumbent it was given and the ones it
 * finds; returns the subproblems left at that depth (survivors) and any
 * better solution.  Master: a queue of subproblems, best bound first; while
 * no incumbent exists anywhere, deepest first (a dive finds one soon).  It
 * feeds each idle worker one subproblem and the latest incumbent, and
 * adapts the depth so that a task takes about the target task time.
 * Supervisor: expands the root breadth-first until there are `startup`
 * subproblems per worker and deals them to the groups; then it hears each
 * master's status (pending subproblems, their least bound, throughput,
 * incumbent), broadcasts every improvement of the global incumbent, and
 * when a group runs dry moves subproblems so that group i holds
 * N_total x share(i), share(i) proportional to its throughput
 * (workers / mean task time), or as the seed writes it (workers x mean
 * task time) with tb_bnb_set_balance(b, TB_BNB_BALANCE_SEED).
 *
 * The run ends when nothing is pending anywhere (proven optimum), or when
 * (upper - lower) / |upper| <= gap (for minimisation; mirrored for
 * maximisation), the lower bound being the least bound over every pending
 * subproblem, those in flight included.  Every subproblem is processed
 * exactly once.
 *
 * Threads: a handle is used by one thread; the ops are called from that
 * thread only.  MPI must be initialised by the caller.
 */
#ifndef TENBIN_BNB_H
#define TENBIN_BNB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#include "tenbin/core.h"
#include "tenbin/export.h"
#include "tenbin/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tb_bnb_sense { TB_BNB_MINIMIZE = 0, TB_BNB_MAXIMIZE = 1 } tb_bnb_sense;

/* Where branch() puts the children of a subproblem. */
typedef struct tb_bnb_children tb_bnb_children;
/* Add one child (bytes copied) with its bound, or NAN to have the runtime
 * call ops->bound on it.  A bound weaker than the parent's is replaced by
 * the parent's (a child's solutions are the parent's). */
TB_API int tb_bnb_child(tb_bnb_children *kids, const void *sub, size_t len, double bound);
/* What a child's bound must beat to be kept, in the problem's sense: the
 * incumbent less the gap, +inf (minimisation) or -inf (maximisation) while
 * there is none; NAN when branch() is called where it is not known (a
 * split).  A child whose bound reaches it is pruned unseen, so a problem
 * with a cheap and a costly bound may skip the costly one when the cheap
 * one already does (bmi: the eigenvalue bounds before the semidefinite
 * one). */
TB_API double tb_bnb_children_cutoff(const tb_bnb_children *kids);

/*
 * A problem.  Values and bounds are in the problem's own sense: for
 * minimisation a bound is a lower bound of every solution in the
 * subproblem, for maximisation an upper bound.  Every function returns
 * TB_OK or an error, which stops the run.
 *
 * When each is called, on a subproblem S whose bound is b:
 *  - root: once, on rank 0 (the supervisor), then bound on the root.
 *  - bound: on every child branch() added with a NAN bound.
 *  - evaluate: once on every S that is expanded, before branch, unless b
 *    can no longer beat the incumbent (by more than the gap), in which case
 *    S is pruned unseen.  A value it returns that beats the incumbent
 *    becomes the incumbent, with its solution bytes.
 *  - branch: after evaluate, unless the value just found pruned S.
 * A leaf is an S whose branch adds no child: its value counts only through
 * evaluate, so evaluate must return a leaf's own value (its bound should
 * equal that value).  Subproblems are pruned, never valued, by bound alone.
 *
 * Where: the supervisor expands the first levels (start-up), then workers
 * (or masters without workers) expand the rest, so every op may run on any
 * rank.  ctx must therefore describe the same instance on every rank (each
 * rank reads the same file, or rank 0 broadcasts it before tb_bnb_create),
 * and a subproblem's bytes must mean the same everywhere: no pointers, no
 * rank-local indices.  tb_bnb_run compares every setting and the root's
 * size and bound across the ranks before it starts, and refuses with one
 * line if they differ; an instance that differs only deeper in the tree is
 * not detected and gives a wrong optimum.
 */
typedef struct tb_bnb_ops {
    size_t size; /* sizeof(tb_bnb_ops), so the table can grow */
    tb_bnb_sense sense;
    /* The whole problem as a subproblem: append its bytes. */
    int (*root)(void *ctx, tb_buf *sub);
    /* A bound of every solution in sub (+inf for minimisation, -inf for
     * maximisation when it has none). */
    int (*bound)(void *ctx, const void *sub, size_t len, double *bound);
    /* The children of sub (none: a leaf, fully evaluated). */
    int (*branch)(void *ctx, const void *sub, size_t len, tb_bnb_children *kids);
    /* A feasible solution inside sub if one is cheap to find (a leaf's own,
     * a greedy completion): its value in *value and its bytes appended to
     * solution; leave *value NAN when there is none. */
    int (*evaluate)(void *ctx, const void *sub, size_t len, double *value, tb_buf *solution);
    /* Optional (NULL, or a table whose size ends before it: none).  Cut sub
     * into `ways` or more subproblems that together hold every solution of
     * sub, each added with tb_bnb_child (bound NAN: sub's own), evaluating
     * nothing and computing no costly bound.  The start-up calls it while
     * there are fewer open subproblems than it wants for the workers, so
     * that every worker has work after one node's time instead of after
     * log2(workers) levels of a binary tree: a box cut along several
     * variables at once, a node fixed by several decisions.  Fewer than
     * `ways` pieces, or none, is allowed (sub cannot be cut that far).  A
     * piece without a bound of its own keeps sub's, so one that a bound
     * would have pruned is expanded once.  Simulated runs charge it
     * nothing. */
    int (*split)(void *ctx, const void *sub, size_t len, int ways, tb_bnb_children *kids);
} tb_bnb_ops;

/* A split made of the problem's own branch: branch sub, then the oldest
 * piece not yet cut, breadth first, until there are `ways` pieces (or only
 * leaves), and add them to kids with the bounds branch gave (NAN: the
 * parent's).  For a problem whose branch is cheap and needs no evaluation
 * (a box bisected, an item fixed): its split is then one call. */
TB_API int tb_bnb_split_by_branch(const tb_bnb_ops *ops, void *ctx, const void *sub, size_t len,
                                  int ways, tb_bnb_children *kids);

typedef enum tb_bnb_balance {
    TB_BNB_BALANCE_THROUGHPUT = 0, /* share(i) ~ workers(i) / task_time(i) */
    TB_BNB_BALANCE_SEED = 1        /* share(i) ~ workers(i) x task_time(i), as the seed writes */
} tb_bnb_balance;

typedef struct tb_bnb tb_bnb;

/* A run on the ranks of comm (duplicated).  Collective over comm.  ops and
 * ctx must outlive the handle. */
TB_API int tb_bnb_create(tb_bnb **out, MPI_Comm comm, const tb_bnb_ops *ops, void *ctx);
/* A run of `ranks` simulated ranks on a modelled platform, in this process
 * (not collective).  Each task really runs; it is charged its nodes times
 * the node cost (tb_bnb_set_node_cost) at the host's speed.  TB_ERR_SIZE if
 * the ranks do not fit the platform. */
TB_API int tb_bnb_create_sim(tb_bnb **out, const tb_platform *plat, int ranks,
                             const tb_bnb_ops *ops, void *ctx);
TB_API void tb_bnb_destroy(tb_bnb **b);
/* The line of the last call on b that failed or refused a value ("" if
 * none has): what happened and why, as it was also logged.  Valid until the
 * next call on b.  NULL: "". */
TB_API const char *tb_bnb_error(const tb_bnb *b);

/* Relative gap at which to stop, in [0, 1) (default 0: prove the optimum). */
TB_API int tb_bnb_set_gap(tb_bnb *b, double gap);
/* Groups (default 0: one per node under MPI, one per cluster simulated);
 * TB_ERR_SIZE when there are fewer than groups + 1 ranks. */
TB_API int tb_bnb_set_groups(tb_bnb *b, int groups);
/* Depth a worker expands per task (>= 1), or 0 (default) to adapt it to the
 * target task time. */
TB_API int tb_bnb_set_depth(tb_bnb *b, int depth);
/* Target task time in seconds (default 0.01: enough to hide a round trip
 * to a master on the same cluster; a master is never across the WAN). */
TB_API int tb_bnb_set_task_time(tb_bnb *b, double seconds);
/* Subproblems per worker the supervisor makes before the groups start,
 * expanding for at most one target task time (default 4; 0: the root goes
 * to the first group and the others wait for the balancer, the seed's
 * start-up). */
TB_API int tb_bnb_set_startup(tb_bnb *b, int per_worker);
/* Whether to cut subproblems wide with the problem's split (tb_bnb_ops) at
 * start-up and for idle workers (default 1; without a split op it does
 * nothing).  0: the start-up expands and idle workers wait for the tree
 * to grow, as without one. */
TB_API int tb_bnb_set_split(tb_bnb *b, int on);
TB_API int tb_bnb_set_balance(tb_bnb *b, tb_bnb_balance how);
/* Simulated runs: seconds per node at speed 1 (default 1e-6). */
TB_API int tb_bnb_set_node_cost(tb_bnb *b, double seconds);
/* Bytes each queue of pending subproblems (the sequential search's, each
 * master's, the supervisor's) may hold before it is searched depth first
 * until it is down to half (default 256 MiB; 0: no limit).  Best first
 * keeps the fewest nodes but its queue can grow without end on a hard
 * instance; depth first empties it.  Each message of subproblems (a task,
 * its answer, a transfer between groups) also stops at 8 MiB: a task whose
 * subtree is wider returns what it has not expanded, still to be searched. */
TB_API int tb_bnb_set_pool_limit(tb_bnb *b, size_t bytes);
/*
 * Stopping and resuming a search (real runs, of any number of ranks).  With
 * tb_bnb_set_checkpoint, a run that ends -- stopped from outside
 * (tb_signals_catch), by the watch, at the gap, or proven -- writes every
 * subproblem still open (the supervisor's, each master's queue, the answers
 * of the tasks in flight; on one rank, the sequential search's queue), the
 * incumbent and its solution to path, as one file replaced atomically; the
 * accounting that proves termination makes each subproblem appear once.
 * Every interval_s seconds of the run (0: only at the end) a checkpoint
 * round writes the same: each group stops taking new tasks until its tasks
 * in flight are back, sends its queue and goes on; the supervisor deals
 * nothing meanwhile (one rank: between two nodes).  A run killed outright
 * then redoes at most one interval's work.  tb_bnb_set_resume starts from
 * such a file instead of the root, on any number of ranks (a checkpoint of
 * one rank resumes on many, and back), and proves the same optimum.
 * The same path for both continues the search, or starts it when there is
 * no file yet.  A checkpoint of another instance or settings (the words of
 * tb_bnb_set_identity, the sense, the root's size and bound), damaged or not
 * a checkpoint, stops tb_bnb_run on every rank with one line (tb_bnb_error).
 * A run killed outright (SIGKILL, a lost node) keeps the last checkpoint
 * written, whole.  Set on every rank.  A simulated run keeps none
 * (TB_ERR_UNSUPPORTED from tb_bnb_run).
 */
TB_API int tb_bnb_set_checkpoint(tb_bnb *b, const char *path, double interval_s);
TB_API int tb_bnb_set_resume(tb_bnb *b, const char *path);
TB_API int tb_bnb_set_identity(tb_bnb *b, const char *what);
/* Seconds between a master's statuses to the supervisor (default 0.05). */
TB_API int tb_bnb_set_status_interval(tb_bnb *b, double seconds);
/* MPI runs: hold every message between groups (the supervisor counting as
 * a group of its own) for this one-way delay in seconds before handing it
 * to MPI, to try a wide-area placement on one cluster (default 0).
 * Simulated runs take the delay from the platform (TB_ERR_UNSUPPORTED). */
TB_API int tb_bnb_set_wan_delay(tb_bnb *b, double seconds);
/* The sites between which tb_bnb_set_wan_delay holds messages: 0 (the
 * default) for the groups, or this many contiguous blocks of ranks
 * 1..P-1 (so that one flat group can span sites); the supervisor is always
 * a site of its own.  TB_ERR_SIZE for more sites than ranks 1..P-1. */
TB_API int tb_bnb_set_sites(tb_bnb *b, int sites);
/* Write a Chrome trace of the run to path (copied; NULL: none) at the end
 * of tb_bnb_run: every worker's tasks (with their nodes), the supervisor's
 * start-up, counters of the incumbent, the lower bound and each master's
 * queue; times from the start of the run (virtual when simulated).  Written
 * atomically by rank 0. */
TB_API int tb_bnb_set_trace_file(tb_bnb *b, const char *path);
/* Progress lines (bounds, gap, pending) on stream from the supervisor every
 * TENBIN_PROGRESS_INTERVAL seconds (NULL, the default: none). */
TB_API int tb_bnb_set_progress(tb_bnb *b, FILE *stream);
/* What the supervisor knows of a group during a run (tb_bnb_state). */
typedef struct tb_bnb_watch_group {
    int workers;       /* ranks that expand (the master itself if none) */
    uint64_t pending;  /* subproblems queued at its master or in its workers' tasks */
    uint64_t nodes;    /* expanded by its workers so far */
    uint64_t tasks;    /* tasks its workers finished */
    double busy_s;     /* its workers' expanding time so far, summed */
} tb_bnb_watch_group;

/* The supervisor's view of a run, as of its latest statuses. */
typedef struct tb_bnb_state {
    double elapsed_s;  /* since the start of the run (virtual when simulated) */
    int found;         /* an incumbent exists */
    double incumbent;  /* its value in the problem's sense (+-inf before one) */
    double bound;      /* the proven bound in the problem's sense (-+inf before one) */
    double gap;        /* |incumbent - bound| / |incumbent|, INFINITY when undefined */
    uint64_t pending;  /* subproblems left, everywhere */
    uint64_t nodes;    /* expanded so far, everywhere */
    const void *solution; /* the incumbent's bytes (the problem's encoding), or NULL */
    size_t solution_len;
    int ngroups;
    const tb_bnb_watch_group *groups; /* [ngroups] */
} tb_bnb_state;

/* Called on rank 0 by the supervisor every `interval` seconds of run time
 * (the first time at once), while the run goes on; the state and what it
 * points to are valid during the call only.  Return nonzero to stop the
 * search as if the gap were reached: the run ends cleanly (every rank
 * finishes), with the incumbent and bound it has, unproven unless they
 * already meet.  Not called after the run (tb_bnb_get_summary is). */
typedef int (*tb_bnb_watch_fn)(void *arg, const tb_bnb_state *state);
TB_API int tb_bnb_set_watch(tb_bnb *b, tb_bnb_watch_fn fn, void *arg, double interval);

/* Run the search.  Collective.  TB_OK, or the first error (a problem
 * function's, or the transport's), the same on every rank. */
TB_API int tb_bnb_run(tb_bnb *b);

typedef struct tb_bnb_group {
    int master;             /* rank of its master */
    int workers;            /* ranks that expand (the master itself if none) */
    uint64_t tasks;         /* tasks its workers did */
    uint64_t nodes;         /* subproblems its workers expanded */
    double busy_s;          /* summed over its workers: expanding */
    double idle_s;          /* summed over its workers: waiting for a task, to the end */
    double startup_idle_s;  /* the part of idle_s before each worker's first task */
    uint64_t moved_in;      /* subproblems the supervisor gave it */
    uint64_t moved_out;     /* subproblems it gave the supervisor */
} tb_bnb_group;

typedef struct tb_bnb_summary {
    int ranks;
    int simulated;
    tb_bnb_sense sense;
    int found;              /* a feasible solution exists (else optimum is +-inf) */
    double optimum;         /* the incumbent's value, in the problem's sense */
    double bound;           /* the best bound of what was left (== optimum when proven) */
    int proven;             /* nothing left: the incumbent is optimal */
    int interrupted;        /* the signal that stopped the search (tb_signals_catch), or 0 */
    double gap;             /* |optimum - bound| / |optimum| (0 when proven) */
    uint64_t nodes;         /* subproblems expanded, supervisor's included */
    uint64_t tasks;
    int depth;              /* depth of the last tasks */
    double makespan_s;      /* start to end: wall time, or virtual */
    double wall_s;          /* real seconds of the run */
    uint64_t messages;      /* sent by all ranks (simulated runs; MPI: rank 0's view) */
    const void *solution;   /* the incumbent's bytes (owned by the handle) */
    size_t solution_len;
    int ngroups;
    const tb_bnb_group *groups; /* [ngroups], owned by the handle */
} tb_bnb_summary;

/* CPU seconds per expanded node of this problem on this machine: the
 * sequential search run on growing node budgets until one takes at least
 * `seconds` of CPU (or the search ends).  For tb_bnb_set_node_cost. */
TB_API int tb_bnb_calibrate(const tb_bnb_ops *ops, void *ctx, double seconds, double *node_cost);

/* Complete on rank 0 (the supervisor); valid until the handle is destroyed. */
TB_API int tb_bnb_get_summary(const tb_bnb *b, tb_bnb_summary *out);

/*
 * Append the summary to out as one JSON object on one line (no newline):
 * optimum, bound, upper, lower (null when no solution was found), proven,
 * gap, nodes, tasks, depth, makespan_s, wall_s, ranks, simulated, messages,
 * groups ([{master, workers, tasks, nodes, busy_s, idle_s, startup_idle_s,
 * moved_in, moved_out}]).  The solution is the problem's to write: pass it
 * in extra, NULL or the text of a JSON object whose members come first.
 * NaN and infinities are null.  As tb_mw_summary_json (tenbin/mw.h):
 * TB_ERR_PARSE, TB_ERR_INVALID (extra repeats a key), TB_ERR_NOMEM.
 */
TB_API int tb_bnb_summary_json(const tb_bnb_summary *s, const char *extra, tb_buf *out);

#ifdef __cplusplus
}
#endif
#endif /* TENBIN_BNB_H */
