#define _POSIX_C_SOURCE 200809L
/*
 * test_bnb.c - the branch-and-bound runtime (tenbin/bnb.h) on real ranks
 * and simulated: known optima, and every subproblem expanded exactly once
 * (across groups, forced moves, uneven speeds).
 *
 * The subject is a complete binary tree of depth D whose leaves have
 * pseudo-random values; its bound (-1, below every leaf) never prunes, so
 * the whole tree is expanded and each node's visit can be counted.  A
 * second problem has an exact bound at every node (the least leaf below),
 * so the search prunes, and its optimum is known.
 */
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <dsdp/dsdp5.h>

#include "../../apps/bnb/problems.h"
#include "bnb/bnb_internal.h"
#include "tb_test_mpi.h"
#include "tenbin/bnb.h"
#include "tenbin/experiment.h"
#include "tenbin/model.h"
#include "transport/transport.h"

static int rank, size;

typedef struct tree {
    uint32_t D;
    int exact;          /* bound = least leaf below (prunes) */
    uint32_t *visits;   /* [2^(D+1) - 1], by node */
    int split;          /* offer the split op: 1 a node cut into 2^k at once,
                         * 2 tb_bnb_split_by_branch */
} tree;

typedef struct tsub {
    uint32_t depth;
    uint64_t path;
} tsub;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static double leaf(uint64_t path) { return (double)(mix(path + 7) % 100000); }

/* The least leaf below (depth, path), by brute force (small subtrees). */
static double least(const tree *t, uint32_t depth, uint64_t path)
{
    uint32_t h = t->D - depth;
    double m = INFINITY;
    for (uint64_t i = 0; i < ((uint64_t)1 << h); i++) {
        double v = leaf((path << h) | i);
        if (v < m)
            m = v;
    }
    return m;
}

static int t_root(void *ctx, tb_buf *sub)
{
    (void)ctx;
    tsub s = {0, 0};
    return tb_buf_append(sub, &s, sizeof s);
}

static int t_bound(void *ctx, const void *sub, size_t len, double *b)
{
    const tree *t = ctx;
    tsub s;
    if (len != sizeof s)
        return TB_ERR_PARSE;
    memcpy(&s, sub, sizeof s);
    *b = t->exact ? least(t, s.depth, s.path) : -1.0;
    return TB_OK;
}

static int t_branch(void *ctx, const void *sub, size_t len, tb_bnb_children *kids)
{
    const tree *t = ctx;
    tsub s;
    if (len != sizeof s)
        return TB_ERR_PARSE;
    memcpy(&s, sub, sizeof s);
    if (s.depth == t->D)
        return TB_OK;
    for (uint64_t b = 0; b < 2; b++) {
        tsub c = {s.depth + 1, s.path * 2 + b};
        TB_CHECK(tb_bnb_child(kids, &c, sizeof c, NAN));
    }
    return TB_OK;
}

static int t_evaluate(void *ctx, const void *sub, size_t len, double *v, tb_buf *sol)
{
    tree *t = ctx;
    tsub s;
    if (len != sizeof s)
        return TB_ERR_PARSE;
    memcpy(&s, sub, sizeof s);
    t->visits[((uint64_t)1 << s.depth) - 1 + s.path]++;
    if (s.depth == t->D) {
        *v = leaf(s.path);
        return tb_buf_append(sol, &s.path, sizeof s.path);
    }
    return TB_OK;
}

/* The start-up's split: the 2^k descendants k levels down, for the least k
 * that gives `ways` (the levels between are never expanded). */
static const tb_bnb_ops tree_ops;

static int t_split(void *ctx, const void *sub, size_t len, int ways, tb_bnb_children *kids)
{
    const tree *t = ctx;
    if (t->split == 2) /* the library's split from branch */
        return tb_bnb_split_by_branch(&tree_ops, ctx, sub, len, ways, kids);
    tsub s;
    if (len != sizeof s)
        return TB_ERR_PARSE;
    memcpy(&s, sub, sizeof s);
    uint32_t k = 0;
    while (k < t->D - s.depth && ((uint64_t)1 << k) < (uint64_t)ways)
        k++;
    for (uint64_t i = 0; k > 0 && i < ((uint64_t)1 << k); i++) {
        tsub c = {s.depth + k, (s.path << k) | i};
        TB_CHECK(tb_bnb_child(kids, &c, sizeof c, NAN));
    }
    return TB_OK;
}

static const tb_bnb_ops tree_ops = {sizeof(tb_bnb_ops), TB_BNB_MINIMIZE, t_root, t_bound,
                                    t_branch, t_evaluate, NULL};
static const tb_bnb_ops tree_split_ops = {sizeof(tb_bnb_ops), TB_BNB_MINIMIZE, t_root, t_bound,
                                          t_branch, t_evaluate, t_split};

static const tb_bnb_ops *ops_of(const tree *t) { return t->split ? &tree_split_ops : &tree_ops; }

static size_t nnodes(uint32_t D) { return ((size_t)1 << (D + 1)) - 1; }

static void tree_init(tree *t, uint32_t D, int exact)
{
    t->D = D;
    t->exact = exact;
    t->visits = calloc(nnodes(D), sizeof *t->visits);
    t->split = 0;
}

static double brute_min(uint32_t D) { return least(&(tree){D, 0, NULL, 0}, 0, 0); }

/* Every node expanded exactly once (with the split: every leaf exactly
 * once, no node twice): 0 if so, else the first bad node + 1. */
static size_t first_bad(const tree *t)
{
    size_t first_leaf = nnodes(t->D) - ((size_t)1 << t->D);
    for (size_t i = 0; i < nnodes(t->D); i++)
        if (t->split && i < first_leaf ? t->visits[i] > 1 : t->visits[i] != 1)
            return i + 1;
    return 0;
}

/* Nodes never expanded: the levels the split skipped. */
static size_t skipped(const tree *t)
{
    size_t n = 0;
    for (size_t i = 0; i < nnodes(t->D); i++)
        n += t->visits[i] == 0;
    return n;
}

typedef struct cfg {
    int groups, depth, startup, force;
    double gap;
    size_t pad;    /* task pad and per-subproblem pad, bytes */
    size_t budget; /* bytes of subproblems per message (0: the default) */
    size_t pool;   /* bytes of a queue before it goes depth first (0: the default) */
} cfg;

static int configure(tb_bnb *b, const cfg *c)
{
    TB_CHECK(tb_bnb_set_groups(b, c->groups));
    TB_CHECK(tb_bnb_set_depth(b, c->depth));
    TB_CHECK(tb_bnb_set_startup(b, c->startup));
    TB_CHECK(tb_bnb_set_force_moves(b, c->force));
    TB_CHECK(tb_bnb_set_gap(b, c->gap));
    TB_CHECK(tb_bnb_set_task_time(b, 1e-3));
    TB_CHECK(tb_bnb_set_task_pad(b, c->pad));
    TB_CHECK(tb_bnb_set_sub_pad(b, c->pad));
    if (c->budget)
        TB_CHECK(tb_bnb_set_msg_budget(b, c->budget));
    if (c->pool)
        TB_CHECK(tb_bnb_set_pool_limit(b, c->pool));
    return tb_bnb_set_status_interval(b, 1e-3);
}

/* ---- real ranks ------------------------------------------------------- */

/* Run the tree on MPI_COMM_WORLD; rank 0 gets the summed visits. */
static int run_mpi(tree *t, const cfg *c, tb_bnb_summary *s, uint32_t *sum, uint64_t *path)
{
    tb_bnb *b = NULL;
    TB_CHECK(tb_bnb_create(&b, MPI_COMM_WORLD, ops_of(t), t));
    int groups = c->groups;
    if (groups > size - 1)
        groups = size > 1 ? size - 1 : 0;
    cfg cc = *c;
    cc.groups = size > 1 ? groups : 0;
    int rc = configure(b, &cc);
    /* With the split: a start-up of one node, then a cut (real nodes of
     * microseconds would otherwise fill the start-up without one). */
    if (rc == TB_OK && t->split)
        rc = tb_bnb_set_task_time(b, 1e-9);
    if (rc == TB_OK)
        rc = tb_bnb_run(b);
    if (rc == TB_OK && rank == 0)
        rc = tb_bnb_get_summary(b, s);
    /* The solution belongs to the handle. */
    if (rc == TB_OK && rank == 0 && s->solution_len == sizeof *path)
        memcpy(path, s->solution, sizeof *path);
    MPI_Reduce(t->visits, sum, (int)nnodes(t->D), MPI_UINT32_T, MPI_SUM, 0, MPI_COMM_WORLD);
    tb_bnb_destroy(&b);
    return rc;
}

static void check_mpi_split(uint32_t D, const cfg *c, int split)
{
    tree t;
    tree_init(&t, D, 0);
    t.split = split;
    uint32_t *sum = calloc(nnodes(D), sizeof *sum);
    tb_bnb_summary s;
    memset(&s, 0, sizeof s);
    uint64_t path = UINT64_MAX;
    int rc = run_mpi(&t, c, &s, sum, &path);
    int bad = 0;
    if (rank == 0) {
        memcpy(t.visits, sum, nnodes(D) * sizeof *sum);
        bad = (int)first_bad(&t);
    }
    free(sum);
    free(t.visits);
    TB_ASSERT_OK(rc);
    if (rank != 0)
        return;
    TB_ASSERT_EQ_INT(bad, 0);
    TB_ASSERT(s.found && s.proven);
    TB_ASSERT(s.optimum == brute_min(D));
    if (!split)
        TB_ASSERT_EQ_INT(s.nodes, nnodes(D));
    else if (size > 1) /* one rank searches alone, without a start-up */
        TB_ASSERT(s.nodes < nnodes(D));
    TB_ASSERT_EQ_INT(s.solution_len, sizeof path);
    TB_ASSERT(path >> D == 0 && leaf(path) == s.optimum);
}

static void check_mpi(uint32_t D, const cfg *c) { check_mpi_split(D, c, 0); }

/* With the split op (the start-up and idle workers cut subproblems wide):
 * still every leaf exactly once and the optimum. */
static void test_mpi_split(void) { check_mpi_split(12, &(cfg){3, 1, 4, 1, 0, 0, 0, 0}, 1); }

static void test_mpi_once(void) { check_mpi(12, &(cfg){0, 2, 4, 0, 0, 0, 0, 0}); }
static void test_mpi_once_auto_depth(void) { check_mpi(12, &(cfg){0, 0, 4, 0, 0, 0, 0, 0}); }
static void test_mpi_once_groups_moves(void) { check_mpi(12, &(cfg){3, 1, 4, 1, 0, 0, 0, 0}); }
/* Padded tasks, results, gives and moves: the receivers skip the padding. */
static void test_mpi_once_padded(void) { check_mpi(11, &(cfg){2, 1, 4, 1, 0, 3000, 0, 0}); }
static void test_mpi_once_no_startup(void) { check_mpi(11, &(cfg){2, 3, 0, 1, 0, 0, 0, 0}); }

/*
 * A search that never dies of its own size: answers of at most ~100 bytes
 * of subproblems (tasks stop descending and return what they have not
 * expanded) and queues of 512 bytes (depth first while over it).  Still every
 * node exactly once and the optimum; the log says both limits were hit.
 * (The supervisor's start-up once went on depth first once its pool was over
 * 512 bytes, until its task time was up: on a loaded machine it expanded the
 * whole tree alone, no task was ever cut, and this failed now and then.)
 */
static int bounded_said[2];

static void bounded_sink(void *ctx, tb_log_level level, int r, const char *line)
{
    (void)ctx, (void)level, (void)r;
    if (strstr(line, "task answers stopped at their budget"))
        bounded_said[0] = 1;
    if (strstr(line, "went over 512 bytes"))
        bounded_said[1] = 1;
}

static void test_mpi_bounded_messages_and_queues(void)
{
    memset(bounded_said, 0, sizeof bounded_said);
    tb_log_level was = tb_log_get_level();
    tb_log_set_sink(bounded_sink, NULL);
    tb_log_set_level(TB_LOG_INFO);
    check_mpi(12, &(cfg){2, 6, 4, 1, 0, 0, 100, 512});
    tb_log_set_level(was);
    tb_log_set_sink(NULL, NULL);
    int said[2] = {bounded_said[0], bounded_said[1]}, all[2] = {0, 0};
    MPI_Allreduce(said, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (size > 1) /* one rank: the sequential search, no tasks */
        TB_ASSERT(all[0]);
    TB_ASSERT(all[1]);
}

/*
 * A stop from outside (tb_signals_catch): rank 0 is sent SIGUSR1 while the
 * search runs (from the watch on the supervisor; from the search itself on
 * one rank).  The run ends cleanly on every rank, unproven, with the
 * incumbent it had and the signal in the summary.
 */
static int watch_calls;

/* The stop comes at the second watch that sees an incumbent: not earlier,
 * or a slow machine (a sanitizer build beside other jobs) stops the search
 * before it has found one, and the test asks that it had. */
static int raise_on_second_watch(void *arg, const tb_bnb_state *st)
{
    (void)arg;
    if (st->found && ++watch_calls == 2)
        raise(SIGUSR1);
    return 0;
}

static uint64_t evals;

static int t_evaluate_raising(void *ctx, const void *sub, size_t len, double *v, tb_buf *sol)
{
    if (++evals == 5000)
        raise(SIGUSR1);
    return t_evaluate(ctx, sub, len, v, sol);
}

static void test_mpi_interrupted(void)
{
    tree t;
    tree_init(&t, 20, 0); /* 2 M nodes: far more than the time to the signal */
    tb_bnb_ops ops = tree_ops;
    ops.evaluate = t_evaluate_raising;
    watch_calls = 0;
    evals = 0;
    TB_ASSERT_OK(tb_signals_catch());
    tb_bnb *b = NULL;
    TB_ASSERT_OK(tb_bnb_create(&b, MPI_COMM_WORLD, size == 1 ? &ops : &tree_ops, &t));
    int rc = configure(b, &(cfg){0, 2, 4, 0, 0, 0, 0, 0});
    if (rc == TB_OK && size > 1)
        rc = tb_bnb_set_watch(b, raise_on_second_watch, NULL, 0.01);
    if (rc == TB_OK)
        rc = tb_bnb_run(b);
    tb_bnb_summary s;
    if (rc == TB_OK)
        rc = tb_bnb_get_summary(b, &s);
    int pending = tb_signals_pending();
    tb_signals_release();
    tb_bnb_destroy(&b);
    free(t.visits);
    TB_ASSERT_OK(rc);
    if (rank != 0)
        return;
    TB_ASSERT_EQ_INT(pending, SIGUSR1);
    if (size == 2) {
        /* A group of one master and no worker runs its tasks back to back
         * and hears of the stop only when its queue is empty. */
        TB_ASSERT_EQ_INT(s.interrupted, s.proven ? 0 : SIGUSR1);
        return;
    }
    TB_ASSERT_EQ_INT(s.interrupted, SIGUSR1);
    TB_ASSERT(!s.proven && s.found);
    TB_ASSERT(s.nodes < nnodes(20));
    TB_ASSERT(s.bound <= s.optimum);
}

/*
 * Stopped, kept, resumed: a search stopped by its watch writes its open
 * subproblems (tb_bnb_set_checkpoint), and a second run from them
 * (tb_bnb_set_resume) proves the optimum.  Over the two runs every node is
 * expanded exactly once: nothing lost at the stop, nothing counted twice
 * (the answers of tasks in flight, the supervisor's queue, each master's).
 */
static int stop_at_second(void *arg, const tb_bnb_state *st)
{
    (void)st;
    return ++*(int *)arg >= 2;
}

/* A node of 200 us, and a watch that stops the run once the supervisor
 * has heard of 100 nodes. */
static int t_evaluate_slow(void *ctx, const void *sub, size_t len, double *v, tb_buf *sol)
{
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
    return t_evaluate(ctx, sub, len, v, sol);
}

static int stop_at_100_nodes(void *arg, const tb_bnb_state *st)
{
    (void)arg;
    return st->nodes >= 100;
}

/* A master without workers (each group one rank) expands its own tasks one
 * after the other: its statuses and the supervisor's messages must still
 * get through between two, or the supervisor hears nothing until the group
 * runs dry and cannot stop it (a tree of 26 s here). */
static void test_mpi_lone_master_heard(void)
{
    if (size < 2)
        return;
    tree t;
    tree_init(&t, 16, 0);
    tb_bnb_ops ops = tree_ops;
    ops.evaluate = t_evaluate_slow;
    tb_bnb *b = NULL;
    TB_ASSERT_OK(tb_bnb_create(&b, MPI_COMM_WORLD, &ops, &t));
    TB_ASSERT_OK(tb_bnb_set_groups(b, size - 1));
    TB_ASSERT_OK(tb_bnb_set_status_interval(b, 1e-3));
    TB_ASSERT_OK(tb_bnb_set_watch(b, stop_at_100_nodes, NULL, 1e-3));
    TB_ASSERT_OK(tb_bnb_run(b));
    if (rank == 0) {
        tb_bnb_summary s;
        TB_ASSERT_OK(tb_bnb_get_summary(b, &s));
        TB_ASSERT(!s.proven);
        TB_ASSERT(s.nodes >= 100 && s.nodes < 20000);
    }
    tb_bnb_destroy(&b);
    free(t.visits);
}

static double kept_interval; /* checkpoint rounds during the run (0: none) */

/* A run on comm of the tree (ops: tree_ops, or one whose evaluate raises a
 * signal) that keeps its open subproblems in path, or resumes from it; a
 * run of 2 or more ranks that does not resume is stopped by its watch at
 * its second call (when *calls starts at 0). */
static int run_kept_on(MPI_Comm comm, const tb_bnb_ops *ops, tree *t, const char *path,
                       int resume, tb_bnb_summary *s, int *calls)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    tb_bnb *b = NULL;
    TB_CHECK(tb_bnb_create(&b, comm, ops, t));
    int rc = configure(b, &(cfg){0, 2, 4, 1, 0, 0, 0, 0});
    if (rc == TB_OK)
        rc = tb_bnb_set_identity(b, "the test tree");
    if (rc == TB_OK)
        rc = tb_bnb_set_checkpoint(b, path, kept_interval);
    if (rc == TB_OK && resume)
        rc = tb_bnb_set_resume(b, path);
    if (rc == TB_OK && !resume && n > 1)
        rc = tb_bnb_set_watch(b, stop_at_second, calls, 0.005);
    if (rc == TB_OK)
        rc = tb_bnb_run(b);
    if (rc == TB_OK && me == 0)
        rc = tb_bnb_get_summary(b, s);
    tb_bnb_destroy(&b);
    return rc;
}

static int run_kept(tree *t, const char *path, int resume, tb_bnb_summary *s, int *calls)
{
    return run_kept_on(MPI_COMM_WORLD, &tree_ops, t, path, resume, s, calls);
}

static void test_mpi_checkpoint_resume_exactly_once(void)
{
    if (size < 3) /* a lone master hears of the stop only at the end */
        return;
    char path[256] = "";
    if (rank == 0) {
        const char *tmp = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/tb_bnb_kept_%ld.ck", tmp && *tmp ? tmp : "/tmp",
                 (long)getpid());
    }
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    tree t;
    tree_init(&t, 17, 0);
    tb_bnb_summary s1, s2;
    int calls = 0;
    int rc1 = run_kept(&t, path, 0, &s1, &calls);
    int rc2 = run_kept(&t, path, 1, &s2, &calls);
    uint32_t *sum = calloc(nnodes(17), sizeof *sum);
    MPI_Reduce(t.visits, sum, (int)nnodes(17), MPI_UINT32_T, MPI_SUM, 0, MPI_COMM_WORLD);
    free(t.visits);
    TB_ASSERT_OK(rc1);
    TB_ASSERT_OK(rc2);
    if (rank == 0) {
        remove(path);
        t.D = 17;
        t.visits = sum;
        size_t bad = first_bad(&t);
        TB_ASSERT(!s1.proven && s1.nodes < nnodes(17)); /* the first run was stopped */
        TB_ASSERT(s2.proven && s2.optimum == brute_min(17));
        TB_ASSERT_EQ_INT(bad, 0);
    }
    free(sum);
}

/*
 * Checkpoint rounds during the run (every 2 ms of a run of about a
 * second): the search still expands every node exactly once and proves the
 * optimum, and the rounds were taken (their lines are logged).
 */
static int rounds_said;

static void rounds_sink(void *ctx, tb_log_level level, int r, const char *line)
{
    (void)ctx, (void)level, (void)r;
    rounds_said += strstr(line, "bnb: checkpoint ") != NULL;
}

static void test_mpi_checkpoint_rounds_exactly_once(void)
{
    if (size < 3)
        return;
    char path[256] = "";
    if (rank == 0) {
        const char *tmp = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/tb_bnb_rounds_%ld.ck", tmp && *tmp ? tmp : "/tmp",
                 (long)getpid());
    }
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    tree t;
    tree_init(&t, 16, 0);
    tb_bnb_summary s;
    int calls = -1000000; /* the watch never stops it */
    rounds_said = 0;
    tb_log_level was = tb_log_get_level();
    tb_log_set_sink(rounds_sink, NULL);
    tb_log_set_level(TB_LOG_INFO);
    kept_interval = 0.002;
    int rc = run_kept(&t, path, 0, &s, &calls);
    kept_interval = 0;
    tb_log_set_level(was);
    tb_log_set_sink(NULL, NULL);
    uint32_t *sum = calloc(nnodes(16), sizeof *sum);
    MPI_Reduce(t.visits, sum, (int)nnodes(16), MPI_UINT32_T, MPI_SUM, 0, MPI_COMM_WORLD);
    free(t.visits);
    TB_ASSERT_OK(rc);
    if (rank == 0) {
        remove(path);
        t.D = 16;
        t.visits = sum;
        TB_ASSERT(s.proven && s.optimum == brute_min(16));
        TB_ASSERT_EQ_INT(first_bad(&t), 0);
        TB_ASSERT(rounds_said > 0);
    }
    free(sum);
}

/* A file of this test's own, named on rank 0 and known to every rank. */
static void test_path(char *path, size_t n, const char *what)
{
    if (rank == 0) {
        const char *tmp = getenv("TMPDIR");
        snprintf(path, n, "%s/tb_bnb_%s_%ld.ck", tmp && *tmp ? tmp : "/tmp", what,
                 (long)getpid());
    }
    MPI_Bcast(path, (int)n, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* The tree with an evaluate that raises SIGUSR1 at its 5000th call (evals):
 * the sequential search stops between that node and the next. */
static tb_bnb_ops raising_ops(void)
{
    tb_bnb_ops ops = tree_ops;
    ops.evaluate = t_evaluate_raising;
    return ops;
}

/* One rank, stopped by a signal: its search writes its queue and incumbent,
 * and a second run from them proves the optimum.  Every node is expanded
 * exactly once over the two, and the first run expanded exactly the 5000
 * nodes up to the signal. */
static void test_seq_checkpoint_resume_exactly_once(void)
{
    if (size != 1)
        return;
    char path[256];
    test_path(path, sizeof path, "seq_kept");
    tree t;
    tree_init(&t, 17, 0);
    tb_bnb_ops ops = raising_ops();
    tb_bnb_summary s1, s2;
    int calls = 0;
    evals = 0;
    TB_ASSERT_OK(tb_signals_catch());
    int rc1 = run_kept_on(MPI_COMM_WORLD, &ops, &t, path, 0, &s1, &calls);
    int pending = tb_signals_pending();
    tb_signals_release();
    int rc2 = run_kept_on(MPI_COMM_WORLD, &tree_ops, &t, path, 1, &s2, &calls);
    remove(path);
    size_t bad = first_bad(&t);
    free(t.visits);
    TB_ASSERT_OK(rc1);
    TB_ASSERT_OK(rc2);
    TB_ASSERT_EQ_INT(pending, SIGUSR1);
    TB_ASSERT_EQ_INT(s1.interrupted, SIGUSR1);
    TB_ASSERT(!s1.proven && s1.found);
    TB_ASSERT_EQ_INT(s1.nodes, 5000);
    TB_ASSERT(s2.proven && s2.optimum == brute_min(17) && !s2.interrupted);
    TB_ASSERT_EQ_INT(s2.nodes, nnodes(17) - 5000);
    TB_ASSERT_EQ_INT(bad, 0);
}

/*
 * One rank, checkpoints every 2 ms during the run: the search still expands
 * every node once; and a checkpoint taken mid-run is an exact cut: the
 * nodes expanded up to it (the visits copied when its line is logged, after
 * its rename) and those of a run resumed from it are every node once.
 */
static struct {
    const char *path, *copy; /* the run's checkpoint; where the chosen one goes */
    int lines, at;           /* checkpoint lines so far; the one to take */
    const tree *t;
    uint32_t *visits;        /* the tree's visits when it was taken */
} mid;

static void mid_sink(void *ctx, tb_log_level level, int r, const char *line)
{
    (void)ctx, (void)level, (void)r;
    if (!strstr(line, "bnb: checkpoint ") || ++mid.lines != mid.at)
        return;
    if (rename(mid.path, mid.copy) == 0)
        memcpy(mid.visits, mid.t->visits, nnodes(mid.t->D) * sizeof *mid.visits);
}

static void test_seq_checkpoint_rounds_exactly_once(void)
{
    if (size != 1)
        return;
    char path[256], copy[256];
    test_path(path, sizeof path, "seq_rounds");
    test_path(copy, sizeof copy, "seq_rounds_mid");
    remove(copy);
    tree t;
    tree_init(&t, 16, 0);
    uint32_t *cut = calloc(nnodes(16), sizeof *cut);
    mid.path = path;
    mid.copy = copy;
    mid.lines = 0;
    mid.at = 3;
    mid.t = &t;
    mid.visits = cut;
    tb_bnb_summary s, s2;
    int calls = 0;
    tb_log_level was = tb_log_get_level();
    tb_log_set_sink(mid_sink, NULL);
    tb_log_set_level(TB_LOG_INFO);
    kept_interval = 0.002;
    int rc = run_kept_on(MPI_COMM_WORLD, &tree_ops, &t, path, 0, &s, &calls);
    kept_interval = 0;
    tb_log_set_level(was);
    tb_log_set_sink(NULL, NULL);
    size_t bad = first_bad(&t);
    /* from the checkpoint taken mid-run, on the visits up to it */
    memcpy(t.visits, cut, nnodes(16) * sizeof *cut);
    uint64_t before = 0;
    for (size_t i = 0; i < nnodes(16); i++)
        before += cut[i];
    int rc2 = mid.lines >= mid.at ? run_kept_on(MPI_COMM_WORLD, &tree_ops, &t, copy, 1, &s2, &calls)
                                  : TB_ERR_STATE;
    size_t bad2 = first_bad(&t);
    remove(path);
    remove(copy);
    free(cut);
    free(t.visits);
    TB_ASSERT_OK(rc);
    TB_ASSERT(s.proven && s.optimum == brute_min(16));
    TB_ASSERT_EQ_INT(bad, 0);
    TB_ASSERT(mid.lines >= mid.at); /* the rounds were taken */
    TB_ASSERT_OK(rc2);
    TB_ASSERT(before > 0 && before < nnodes(16));
    TB_ASSERT(s2.proven && s2.optimum == brute_min(16));
    TB_ASSERT_EQ_INT(s2.nodes, nnodes(16) - before);
    TB_ASSERT_EQ_INT(bad2, 0);
}

/*
 * One checkpoint format for every rank count: a search stopped on one rank
 * resumes on all of them, and one stopped on all of them resumes on one
 * rank; each time the optimum is proven and every node is expanded exactly
 * once over the two runs.
 */
static void test_checkpoint_across_rank_counts(void)
{
    if (size < 3) /* a lone master hears of the stop only at the end */
        return;
    char path[256];
    test_path(path, sizeof path, "across");
    const uint32_t D = 16;
    /* per way (0: 1 -> size ranks, 1: size -> 1), asserted at the end: no
     * rank leaves the loop's collectives early */
    int rc1[2] = {TB_OK, TB_OK}, rc2[2] = {TB_OK, TB_OK}, pending = 0;
    tb_bnb_summary s1[2], s2[2];
    size_t bad[2] = {0, 0};
    memset(s1, 0, sizeof s1);
    memset(s2, 0, sizeof s2);
    uint32_t *sum = calloc(nnodes(D), sizeof *sum);
    for (int way = 0; way < 2; way++) {
        tree t;
        tree_init(&t, D, 0);
        tb_bnb_ops ops = raising_ops();
        int calls = 0;
        if (way == 0) {
            if (rank == 0) { /* alone, stopped by a signal */
                evals = 0;
                rc1[0] = tb_signals_catch();
                if (rc1[0] == TB_OK)
                    rc1[0] = run_kept_on(MPI_COMM_SELF, &ops, &t, path, 0, &s1[0], &calls);
                pending = tb_signals_pending();
                tb_signals_release();
            }
            MPI_Bcast(&rc1[0], 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (rc1[0] == TB_OK)
                rc2[0] = run_kept_on(MPI_COMM_WORLD, &tree_ops, &t, path, 1, &s2[0], &calls);
        } else {
            rc1[1] = run_kept_on(MPI_COMM_WORLD, &tree_ops, &t, path, 0, &s1[1], &calls);
            if (rank == 0 && rc1[1] == TB_OK)
                rc2[1] = run_kept_on(MPI_COMM_SELF, &tree_ops, &t, path, 1, &s2[1], &calls);
        }
        MPI_Reduce(t.visits, sum, (int)nnodes(D), MPI_UINT32_T, MPI_SUM, 0, MPI_COMM_WORLD);
        free(t.visits);
        if (rank == 0) {
            remove(path);
            t.visits = sum;
            bad[way] = first_bad(&t);
        }
    }
    free(sum);
    for (int way = 0; way < 2; way++) {
        TB_ASSERT_OK(rc1[way]);
        TB_ASSERT_OK(rc2[way]);
    }
    if (rank != 0)
        return;
    /* 1 -> size: the one rank stopped after the signal's node */
    TB_ASSERT_EQ_INT(pending, SIGUSR1);
    TB_ASSERT(!s1[0].proven && s1[0].ranks == 1);
    TB_ASSERT_EQ_INT(s1[0].nodes, 5000);
    TB_ASSERT(s2[0].proven && s2[0].optimum == brute_min(D) && s2[0].ranks == size);
    TB_ASSERT_EQ_INT(bad[0], 0);
    /* size -> 1: stopped by its watch */
    TB_ASSERT(!s1[1].proven && s1[1].nodes < nnodes(D) && s1[1].ranks == size);
    TB_ASSERT(s2[1].proven && s2[1].optimum == brute_min(D) && s2[1].ranks == 1);
    TB_ASSERT_EQ_INT(bad[1], 0);
}

/* The exact bound prunes: still the optimum, proven. */
static void test_mpi_prunes(void)
{
    tree t;
    tree_init(&t, 12, 1);
    tb_bnb *b = NULL;
    TB_ASSERT_OK(tb_bnb_create(&b, MPI_COMM_WORLD, &tree_ops, &t));
    int rc = configure(b, &(cfg){0, 2, 2, 0, 0, 0, 0, 0});
    if (rc == TB_OK)
        rc = tb_bnb_run(b);
    tb_bnb_summary s;
    if (rc == TB_OK)
        rc = tb_bnb_get_summary(b, &s);
    tb_bnb_destroy(&b);
    free(t.visits);
    TB_ASSERT_OK(rc);
    if (rank != 0)
        return;
    TB_ASSERT(s.proven && s.optimum == brute_min(12));
    TB_ASSERT(s.nodes < nnodes(12) / 4); /* it pruned */
}

/* ---- injected wide-area delay ---------------------------------------------- */

/* Ranks 0 and 1 ping-pong ROUNDS times through the MPI transport with the
 * delay set on both; the others have nothing to do. */
enum { ROUNDS = 5 };
typedef struct pinger {
    tb_actor base;
    int left;
    double t0, rtt;
} pinger;

static int ping_start(tb_actor *a)
{
    pinger *p = (pinger *)a;
    if (a->rank > 1) {
        a->finished = 1;
        return TB_OK;
    }
    p->left = ROUNDS;
    p->t0 = tb_tp_now(a);
    if (a->rank == 1)
        return TB_OK;
    tb_buf b = TB_BUF_INIT;
    TB_CHECK(tb_buf_pack_u32(&b, 0));
    int rc = tb_tp_send(a, 1, 1, &b);
    tb_buf_free(&b);
    return rc;
}

static int ping_message(tb_actor *a, int src, int tag, const void *data, size_t len)
{
    pinger *p = (pinger *)a;
    (void)tag;
    tb_buf b = TB_BUF_INIT;
    int rc = tb_buf_append(&b, data, len);
    if (--p->left == 0) {
        a->finished = 1;
        if (a->rank == 0) {
            p->rtt = (tb_tp_now(a) - p->t0) / ROUNDS;
            tb_buf_free(&b);
            return rc;
        }
    }
    if (rc == TB_OK)
        rc = tb_tp_send(a, src, 1, &b);
    tb_buf_free(&b);
    return rc;
}

static const tb_actor_ops ping_ops = {sizeof(tb_actor_ops), ping_start, ping_message, NULL, NULL, NULL};

static double measure_rtt(double delay)
{
    tb_tp *tp = NULL;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    pinger p;
    memset(&p, 0, sizeof p);
    p.base.ops = &ping_ops;
    double *d = calloc((size_t)size, sizeof *d);
    for (int r = 0; r < size; r++)
        d[r] = r != rank ? delay : 0;
    int rc = tb_tp_mpi_create(&tp, comm);
    if (rc == TB_OK)
        rc = tb_tp_mpi_set_delay(tp, d);
    MPI_Barrier(comm);
    if (rc == TB_OK)
        rc = tb_tp_mpi_run(tp, &p.base);
    tb_tp_mpi_destroy(&tp);
    MPI_Comm_free(&comm);
    free(d);
    return rc == TB_OK ? p.rtt : -1;
}

/* The round trip grows by twice the one-way delay (measured against no delay
 * in the same run: at least the delay, and not much more). */
static void test_mpi_wan_delay_rtt(void)
{
    if (size < 2)
        return;
    double base = measure_rtt(0);
    double rtt = measure_rtt(0.02);
    if (rank != 0)
        return;
    TB_ASSERT(base >= 0 && rtt >= 0);
    TB_ASSERT(rtt >= 0.04);
    TB_ASSERT(rtt - base < 0.04 + 0.5); /* loose: a shared 2-core machine */
    printf("  round trip %.3f ms without delay, %.3f ms with 20 ms each way\n", 1e3 * base,
           1e3 * rtt);
}

/* bnb with a delay between groups: the same answer. */
static void test_mpi_wan_delay_bnb(void)
{
    if (size < 3)
        return;
    tree t;
    tree_init(&t, 10, 0);
    uint32_t *sum = calloc(nnodes(10), sizeof *sum);
    tb_bnb *b = NULL;
    int rc = tb_bnb_create(&b, MPI_COMM_WORLD, &tree_ops, &t);
    if (rc == TB_OK)
        rc = configure(b, &(cfg){size > 3 ? 2 : 1, 2, 2, 1, 0, 0, 0, 0});
    if (rc == TB_OK)
        rc = tb_bnb_set_wan_delay(b, 0.005);
    if (rc == TB_OK)
        rc = tb_bnb_run(b);
    tb_bnb_summary s;
    if (rc == TB_OK && rank == 0)
        rc = tb_bnb_get_summary(b, &s);
    MPI_Reduce(t.visits, sum, (int)nnodes(10), MPI_UINT32_T, MPI_SUM, 0, MPI_COMM_WORLD);
    int bad = 0;
    if (rank == 0) {
        memcpy(t.visits, sum, nnodes(10) * sizeof *sum);
        bad = (int)first_bad(&t);
    }
    tb_bnb_destroy(&b);
    free(sum);
    free(t.visits);
    TB_ASSERT_OK(rc);
    if (rank == 0) {
        TB_ASSERT_EQ_INT(bad, 0);
        TB_ASSERT(s.proven && s.optimum == brute_min(10));
    }
}

/* ---- simulated ---------------------------------------------------------- */

static int run_sim(tree *t, const char *spec, int P, const cfg *c, tb_bnb_summary *s,
                   tb_platform **plat, tb_bnb **b)
{
    char err[256];
    TB_CHECK(tb_platform_parse_spec(spec, 7, plat, err, sizeof err));
    TB_CHECK(tb_bnb_create_sim(b, *plat, P, ops_of(t), t));
    TB_CHECK(configure(*b, c));
    TB_CHECK(tb_bnb_set_node_cost(*b, 1e-4));
    TB_CHECK(tb_bnb_run(*b));
    return tb_bnb_get_summary(*b, s);
}

static void check_sim(uint32_t D, const char *spec, int P, const cfg *c, double *makespan)
{
    if (size != 1) /* once is enough: the simulation is in this process */
        return;
    tree t;
    tree_init(&t, D, 0);
    tb_platform *plat = NULL;
    tb_bnb *b = NULL;
    tb_bnb_summary s;
    int rc = run_sim(&t, spec, P, c, &s, &plat, &b);
    size_t bad = first_bad(&t);
    double opt = brute_min(D);
    tb_bnb_destroy(&b);
    tb_platform_destroy(&plat);
    free(t.visits);
    TB_ASSERT_OK(rc);
    TB_ASSERT_EQ_INT(bad, 0);
    TB_ASSERT(s.proven && s.optimum == opt);
    TB_ASSERT(s.simulated);
    if (makespan)
        *makespan = s.makespan_s;
}

static void test_sim_once_small(void) { check_sim(10, "hosts=4,L=10us,o=2us", 3, &(cfg){0, 2, 4, 0, 0, 0, 0, 0}, NULL); }
/* Small message budgets and queue limits, simulated across 3 clusters. */
static void test_sim_once_bounded(void)
{
    check_sim(11, "hosts=9,clusters=3,wan-L=1ms", 9, &(cfg){0, 5, 2, 1, 0, 0, 80, 700}, NULL);
}
static void test_sim_once_self_master(void) { check_sim(10, "hosts=2", 2, &(cfg){0, 0, 4, 0, 0, 0, 0, 0}, NULL); }
static void test_sim_once_64_clusters(void)
{
    check_sim(14, "hosts=64,clusters=4,speed=0.2-5,L=20us,o=5us,wan-L=10ms", 64,
              &(cfg){0, 0, 4, 1, 0, 0, 0, 0}, NULL);
}
static void test_sim_once_1024(void)
{
    check_sim(15, "hosts=1024,clusters=8,speed=0.5-2,L=5us,o=1us,wan-L=1ms", 1024,
              &(cfg){0, 2, 2, 1, 0, 0, 0, 0}, NULL);
}
/* Thousands of simulated ranks, three platform seeds (other speeds, so
 * other timings and moves). */
static void test_sim_once_4096_seeds(void)
{
    if (size != 1)
        return;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        tree t;
        tree_init(&t, 14, 0);
        tb_platform *plat = NULL;
        tb_bnb *b = NULL;
        tb_bnb_summary s;
        char err[256];
        int rc = tb_platform_parse_spec("hosts=4096,clusters=16,speed=0.2-5,L=5us,o=1us,wan-L=2ms",
                                        seed, &plat, err, sizeof err);
        if (rc == TB_OK)
            rc = tb_bnb_create_sim(&b, plat, 4096, &tree_ops, &t);
        if (rc == TB_OK)
            rc = configure(b, &(cfg){0, 1, 1, 1, 0, 0, 0, 0});
        if (rc == TB_OK)
            rc = tb_bnb_set_node_cost(b, 1e-3);
        if (rc == TB_OK)
            rc = tb_bnb_run(b);
        if (rc == TB_OK)
            rc = tb_bnb_get_summary(b, &s);
        size_t bad = first_bad(&t);
        tb_bnb_destroy(&b);
        tb_platform_destroy(&plat);
        free(t.visits);
        TB_ASSERT_OK(rc);
        TB_ASSERT_EQ_INT(bad, 0);
        TB_ASSERT(s.proven && s.optimum == brute_min(14) && s.ngroups == 16);
    }
}

static void test_sim_once_seed_balance_no_startup(void)
{
    check_sim(12, "hosts=32,clusters=4,speed=1-4,wan-L=5ms", 32, &(cfg){0, 1, 0, 1, 0, 0, 0, 0}, NULL);
}

/*
 * The split op (the tree's own, and tb_bnb_split_by_branch over its branch)
 * on 64 simulated ranks in 4 clusters: with nodes cheaper than
 * a task (the supervisor expands first, then cuts what it has) and as dear
 * as one (it cuts first, and no worker waits for its nodes).  Every leaf
 * exactly once, no node twice, levels skipped, the optimum; and cutting
 * first, the workers' idle time before their first task is less than a
 * quarter of what the same run without the split has.
 */
static void test_sim_split(void)
{
    if (size != 1)
        return;
    double startup_idle[2][3] = {{0}};
    for (int dear = 0; dear < 2; dear++)
        for (int split = 0; split < 3; split++) {
            tree t;
            tree_init(&t, 14, 0);
            t.split = split;
            tb_platform *plat = NULL;
            tb_bnb *b = NULL;
            tb_bnb_summary s;
            char err[256];
            int rc = tb_platform_parse_spec("hosts=64,clusters=4,speed=0.5-2,L=20us,o=5us,wan-L=2ms",
                                            7, &plat, err, sizeof err);
            if (rc == TB_OK)
                rc = tb_bnb_create_sim(&b, plat, 64, ops_of(&t), &t);
            if (rc == TB_OK)
                rc = configure(b, &(cfg){0, 1, 4, 0, 0, 0, 0, 0});
            if (rc == TB_OK)
                rc = tb_bnb_set_node_cost(b, dear ? 1e-3 : 1e-5); /* task time 1e-3 */
            if (rc == TB_OK)
                rc = tb_bnb_run(b);
            if (rc == TB_OK)
                rc = tb_bnb_get_summary(b, &s);
            size_t bad = first_bad(&t), skip = skipped(&t);
            for (int g = 0; rc == TB_OK && g < s.ngroups; g++)
                startup_idle[dear][split] += s.groups[g].startup_idle_s;
            /* Every worker's time is busy or idle, to the end of the search
             * (the wait after its last task counts: it once did not, and a
             * run's tail went missing from idle_s): what is left out is the
             * stop's messages. */
            double cover = 0;
            int W = 0;
            for (int g = 0; rc == TB_OK && g < s.ngroups; g++) {
                cover += s.groups[g].busy_s + s.groups[g].idle_s;
                W += (int)s.groups[g].workers;
            }
            tb_bnb_destroy(&b);
            tb_platform_destroy(&plat);
            free(t.visits);
            TB_ASSERT_OK(rc);
            TB_ASSERT_EQ_INT(bad, 0);
            TB_ASSERT(s.proven && s.optimum == brute_min(14));
            TB_ASSERT_EQ_INT(s.nodes + skip, nnodes(14));
            TB_ASSERT(cover <= W * s.makespan_s * (1 + 1e-9) && cover >= 0.95 * W * s.makespan_s);
            if (split)
                TB_ASSERT(skip > 0);
            else
                TB_ASSERT_EQ_INT(skip, 0);
        }
    TB_ASSERT(startup_idle[1][1] < 0.25 * startup_idle[1][0]);
    TB_ASSERT(startup_idle[1][2] < 0.25 * startup_idle[1][0]);
}

/* Bit-reproducible: the same run twice gives the same makespan. */
static void test_sim_deterministic(void)
{
    double a = -1, b = -2;
    check_sim(12, "hosts=16,clusters=2,speed=1-3,L=10us,wan-L=2ms", 16, &(cfg){0, 0, 4, 1, 0, 0, 0, 0},
              &a);
    check_sim(12, "hosts=16,clusters=2,speed=1-3,L=10us,wan-L=2ms", 16, &(cfg){0, 0, 4, 1, 0, 0, 0, 0},
              &b);
    if (size == 1)
        TB_ASSERT(a == b && a > 0);
}

/* Padding subproblems costs time on the wire (simulated) and nothing else. */
static void test_sim_sub_pad(void)
{
    double plain = -1, padded = -1;
    const char *spec = "hosts=8,clusters=2,L=10us,G=10ns,wan-L=2ms";
    check_sim(12, spec, 8, &(cfg){0, 1, 4, 1, 0, 0, 0, 0}, &plain);
    check_sim(12, spec, 8, &(cfg){0, 1, 4, 1, 0, 1 << 16, 0, 0}, &padded);
    if (size == 1)
        TB_ASSERT(padded > plain && plain > 0);
}

/* A gap: stops early, and what it says holds. */
static void test_sim_gap(void)
{
    if (size != 1)
        return;
    tree t;
    tree_init(&t, 14, 1);
    tb_platform *plat = NULL;
    tb_bnb *b = NULL;
    tb_bnb_summary s;
    int rc = run_sim(&t, "hosts=8", 8, &(cfg){0, 2, 4, 0, 0.5, 0, 0, 0}, &s, &plat, &b);
    tb_bnb_destroy(&b);
    tb_platform_destroy(&plat);
    free(t.visits);
    TB_ASSERT_OK(rc);
    double opt = brute_min(14);
    TB_ASSERT(s.found);
    TB_ASSERT(s.bound <= opt && opt <= s.optimum);
    TB_ASSERT(s.proven || (s.optimum - s.bound) <= 0.5 * fabs(s.optimum));
}

/* ---- the BMI problem's bound against dense sampling ----------------------- */

/* lambda_max of F at (x, y) through the problem itself: a box of width 0. */
static double bmi_value(void *ctx, const double *xy, int n)
{
    double box[2 * 16], v = NAN;
    for (int k = 0; k < n; k++)
        box[2 * k] = box[2 * k + 1] = xy[k];
    tb_buf sol = TB_BUF_INIT;
    tb_bnb_bmi.ops->evaluate(ctx, box, (size_t)n * 16, &v, &sol);
    tb_buf_free(&sol);
    return v;
}

enum { BMI_N = 4 }; /* the tests' instances: nx = ny = 2 */

/* The least lambda_max over a G^4 grid of the box [lo, hi]. */
static double bmi_least(void *ctx, const double *lo, const double *hi, int G)
{
    double least = INFINITY;
    for (int g = 0; g < G * G * G * G; g++) {
        double xy[BMI_N];
        for (int k = 0, q = g; k < BMI_N; k++, q /= G)
            xy[k] = lo[k] + (hi[k] - lo[k]) * (q % G) / (G - 1);
        double v = bmi_value(ctx, xy, BMI_N);
        if (v < least)
            least = v;
    }
    return least;
}

/* A simulated search of ctx on the platform spec with P ranks, to a 1e-3
 * gap, nodes costing node_cost (0: the default); its answer checked
 * feasible and worth what it says. */
static int bmi_search(void *ctx, const char *spec, int P, double node_cost, tb_bnb_summary *s)
{
    tb_platform *plat = NULL;
    tb_bnb *b = NULL;
    char err[256];
    int rc = tb_platform_parse_spec(spec, 1, &plat, err, sizeof err);
    if (rc == TB_OK)
        rc = tb_bnb_create_sim(&b, plat, P, tb_bnb_bmi.ops, ctx);
    if (rc == TB_OK)
        rc = tb_bnb_set_gap(b, 1e-3);
    if (rc == TB_OK && node_cost > 0)
        rc = tb_bnb_set_node_cost(b, node_cost);
    if (rc == TB_OK)
        rc = tb_bnb_run(b);
    if (rc == TB_OK)
        rc = tb_bnb_get_summary(b, s);
    if (rc == TB_OK && !s->found)
        rc = TB_ERR_RANGE;
    if (rc == TB_OK)
        rc = tb_bnb_bmi.check(ctx, s->solution, s->solution_len, s->optimum);
    /* the summary's solution lives in the handle: the caller reads only numbers */
    s->solution = NULL;
    s->groups = NULL;
    tb_bnb_destroy(&b);
    tb_platform_destroy(&plat);
    return rc;
}

static void test_bmi_bound_sampling(void)
{
    if (size != 1)
        return;
    char path[600];
    tb_test_path(path, sizeof path, "bmi_test.json");
    FILE *f = fopen(path, "w");
    TB_ASSERT(f != NULL);
    TB_ASSERT_OK(tb_bnb_bmi_generate(f, 5, 2, 2, 11));
    fclose(f);
    void *ctx = NULL;
    char err[256];
    TB_ASSERT_OK(tb_bnb_bmi.load(path, &ctx, err, sizeof err));
    remove(path);
    enum { N = 4, G = 13 };
    tb_rng r;
    tb_rng_seed(&r, 5);
    /* Random sub-boxes of [-1, 1]^4, large and small: the bound is below
     * lambda_max at every grid point of the box. */
    for (int t = 0; t < 60; t++) {
        double lo[N], hi[N], box[2 * N];
        double w = t < 20 ? 2.0 : t < 40 ? 0.5 : 0.02;
        for (int k = 0; k < N; k++) {
            lo[k] = tb_rng_uniform(&r, -1.0, 1.0 - w);
            hi[k] = lo[k] + w;
            box[2 * k] = lo[k];
            box[2 * k + 1] = hi[k];
        }
        double b = NAN;
        TB_ASSERT_OK(tb_bnb_bmi.ops->bound(ctx, box, sizeof box, &b));
        double least = bmi_least(ctx, lo, hi, G);
        TB_ASSERT(b <= least + 1e-9);
        if (w == 0.02) /* tight on small boxes */
            TB_ASSERT(least - b < 0.05 * (fabs(least) + 1));
    }
    /* The search: lower <= sampled minimum, within the gap of upper. */
    tb_bnb_summary s;
    TB_ASSERT_OK(bmi_search(ctx, "hosts=6,clusters=2,wan-L=1ms", 6, 1e-4, &s));
    double all_lo[N] = {-1, -1, -1, -1}, all_hi[N] = {1, 1, 1, 1};
    double least = bmi_least(ctx, all_lo, all_hi, 25);
    double upper = s.optimum, lower = s.bound;
    TB_ASSERT(s.found && lower <= upper);
    TB_ASSERT(lower <= least + 1e-9);
    TB_ASSERT(upper <= least + 1e-9); /* the search beats the grid */
    TB_ASSERT(upper - lower <= 1e-3 * fabs(upper) * (1 + 1e-9));
    tb_bnb_bmi.destroy(ctx);
}

/* ---- the BMI problem's semidefinite bound --------------------------------- */

/* A random instance of the generator's, its entries times `scale`, written
 * to path. */
static int bmi_write(const char *path, int m, int nx, int ny, uint64_t seed, double scale)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return TB_ERR_IO;
    int rc = tb_bnb_bmi_generate_scaled(f, m, nx, ny, seed, scale);
    return fclose(f) == 0 ? rc : TB_ERR_IO;
}

/* The instance in path, its bounds chosen by TENBIN_BMI_BOUND = bound and
 * TENBIN_BMI_SDP_ITERATIONS = its (NULL: unset); NULL if it does not load. */
static void *bmi_open(const char *path, const char *bound, const char *its)
{
    setenv("TENBIN_BMI_BOUND", bound, 1);
    if (its)
        setenv("TENBIN_BMI_SDP_ITERATIONS", its, 1);
    void *ctx = NULL;
    char err[256];
    if (tb_bnb_bmi.load(path, &ctx, err, sizeof err) != TB_OK)
        ctx = NULL;
    unsetenv("TENBIN_BMI_BOUND");
    unsetenv("TENBIN_BMI_SDP_ITERATIONS");
    return ctx;
}

/* The small instance (m = 6, nx = ny = 2, generator seed 17) with the
 * semidefinite bound, its file written under name and removed; NULL if
 * either step fails. */
static void *bmi_small_sdp(const char *name)
{
    char path[600];
    tb_test_path(path, sizeof path, name);
    void *ctx = bmi_write(path, 6, 2, 2, 17, 1.0) == TB_OK ? bmi_open(path, "sdp", NULL) : NULL;
    remove(path);
    return ctx;
}

/* An instance (m = 6, nx = ny = 2, generator seed, entries times scale)
 * opened with the semidefinite bound in *sdp and the eigenvalue bounds
 * alone in *eig, its file written under name and removed; 1 if all went. */
static int bmi_both(const char *name, uint64_t seed, double scale, void **sdp, void **eig)
{
    char path[600];
    tb_test_path(path, sizeof path, name);
    *sdp = *eig = NULL;
    if (bmi_write(path, 6, 2, 2, seed, scale) == TB_OK) {
        *sdp = bmi_open(path, "sdp", NULL);
        *eig = bmi_open(path, "eigen", NULL);
    }
    remove(path);
    return *sdp && *eig;
}

enum { BMI_SDP_BOUNDS, BMI_SDP_FAILED, BMI_SDP_PRUNED, BMI_SDP_REDUCED };

static uint64_t bmi_count(void *ctx, int which)
{
    uint64_t c[4];
    tb_bnb_bmi.counts(ctx, c);
    return c[which];
}

/* The semidefinite bound: below lambda_max at every point sampled in random
 * boxes (also when the solver is stopped after two iterations: the bound
 * comes from the solver's matrix, valid at any accuracy), never below the
 * eigenvalue bounds, far above them on a wide box; the search with it
 * brackets the same optimum in far fewer nodes. */
static void test_bmi_sdp_bound(void)
{
    if (size != 1)
        return;
    char path[600];
    tb_test_path(path, sizeof path, "bmi_sdp.json");
    TB_ASSERT_OK(bmi_write(path, 6, 2, 2, 17, 1.0));
    void *sdp = bmi_open(path, "sdp", NULL), *eig = bmi_open(path, "eigen", NULL);
    void *rough = bmi_open(path, "sdp", "2");
    remove(path);
    TB_ASSERT(sdp && eig && rough);
    enum { N = 4, G = 9 };
    tb_rng r;
    tb_rng_seed(&r, 8);
    int calls = 0;
    for (int t = 0; t < 30; t++) {
        double lo[N], hi[N], box[2 * N];
        double w = t < 10 ? 2.0 : t < 20 ? 0.5 : 0.05;
        for (int k = 0; k < N; k++) {
            lo[k] = tb_rng_uniform(&r, -1.0, 1.0 - w);
            hi[k] = lo[k] + w;
            box[2 * k] = lo[k];
            box[2 * k + 1] = hi[k];
        }
        double bs = NAN, be = NAN, br = NAN;
        TB_ASSERT_OK(tb_bnb_bmi.ops->bound(sdp, box, sizeof box, &bs));
        TB_ASSERT_OK(tb_bnb_bmi.ops->bound(eig, box, sizeof box, &be));
        TB_ASSERT_OK(tb_bnb_bmi.ops->bound(rough, box, sizeof box, &br));
        calls++;
        double least = bmi_least(eig, lo, hi, G);
        TB_ASSERT(bs <= least + 1e-9);
        TB_ASSERT(br <= least + 1e-9);
        TB_ASSERT(bs >= be);
        if (w == 2.0) /* the whole box: the relaxation is far better */
            TB_ASSERT(bs > be + 0.5);
    }
    TB_ASSERT(bmi_count(sdp, BMI_SDP_BOUNDS) == (uint64_t)calls);
    TB_ASSERT(bmi_count(sdp, BMI_SDP_FAILED) == 0);
    TB_ASSERT(bmi_count(eig, BMI_SDP_BOUNDS) == 0);
    /* evaluate: the relaxation's point when better than the centre, a
     * feasible solution worth what it says; a length that is not a box's
     * is refused */
    double whole[2 * N] = {-1, 1, -1, 1, -1, 1, -1, 1}, centre = NAN, at = NAN, zero[N] = {0};
    tb_buf sol = TB_BUF_INIT;
    TB_ASSERT_OK(tb_bnb_bmi.ops->evaluate(eig, whole, sizeof whole, &centre, &sol));
    TB_ASSERT(centre == bmi_value(eig, zero, N));
    tb_buf_clear(&sol);
    TB_ASSERT_OK(tb_bnb_bmi.ops->evaluate(sdp, whole, sizeof whole, &at, &sol));
    TB_ASSERT(at <= centre);
    TB_ASSERT_OK(tb_bnb_bmi.check(sdp, sol.data, sol.len, at));
    double b = NAN;
    TB_ASSERT(tb_bnb_bmi.ops->bound(sdp, whole, sizeof whole - 8, &b) == TB_ERR_PARSE);
    TB_ASSERT(tb_bnb_bmi.ops->evaluate(sdp, whole, sizeof whole + 8, &at, &sol) == TB_ERR_PARSE);
    tb_buf_free(&sol);
    /* the search on both bounds: the same answer within the gap, the
     * semidefinite one in far fewer nodes */
    uint64_t nodes[2];
    double lower[2], upper[2];
    void *ctxs[2] = {sdp, eig};
    for (int k = 0; k < 2; k++) {
        tb_bnb_summary s;
        TB_ASSERT_OK(bmi_search(ctxs[k], "hosts=4", 4, 0, &s));
        nodes[k] = s.nodes;
        lower[k] = s.bound;
        upper[k] = s.optimum;
    }
    TB_ASSERT(lower[0] <= upper[1] && lower[1] <= upper[0]);
    TB_ASSERT(nodes[0] * 4 < nodes[1]);
    TB_ASSERT(bmi_count(sdp, BMI_SDP_FAILED) == 0);
    tb_bnb_bmi.destroy(sdp);
    tb_bnb_bmi.destroy(eig);
    tb_bnb_bmi.destroy(rough);
}

/* A solve that fails (matrices near the largest double: the solver's data
 * overflows) leaves the eigenvalue bounds, counted; the search still ends
 * within the gap with a feasible answer. */
/* Range reduction: a box expanded with a cutoff above its least value
 * (branch, after evaluate) loses only parts where lambda_max reaches the
 * cutoff: every point of a 9^4 grid of the box below it is in a child, and
 * no child's bound is above a point of its own; some boxes do lose parts
 * (the sides shortened are counted), and some go whole when the cutoff is
 * below their least value. */
static void test_bmi_range_reduction(void)
{
    if (size != 1)
        return;
    void *sdp = bmi_small_sdp("bmi_reduce.json");
    TB_ASSERT(sdp != NULL);
    enum { N = 4, G = 9 };
    tb_rng r;
    tb_rng_seed(&r, 21);
    int lost = 0, gone = 0;
    for (int t = 0; t < 40; t++) {
        double lo[N], hi[N], box[2 * N], v;
        double w = t < 20 ? 1.0 : 0.3;
        for (int k = 0; k < N; k++) {
            lo[k] = tb_rng_uniform(&r, -1.0, 1.0 - w);
            hi[k] = lo[k] + w;
            box[2 * k] = lo[k];
            box[2 * k + 1] = hi[k];
        }
        double least = INFINITY, most = -INFINITY, vals[G * G * G * G], pts[G * G * G * G][N];
        for (int g = 0; g < G * G * G * G; g++) {
            for (int k = 0, q = g; k < N; k++, q /= G)
                pts[g][k] = lo[k] + (hi[k] - lo[k]) * (q % G) / (G - 1);
            vals[g] = bmi_value(sdp, pts[g], N);
            least = fmin(least, vals[g]);
            most = fmax(most, vals[g]);
        }
        /* cutoffs from just above the least value to the middle of the range;
         * one below it (the box holds nothing better) */
        double cut = t % 10 == 9 ? least - 1e-3
                                 : least + (most - least) * tb_rng_uniform(&r, 0.02, 0.5);
        tb_buf sol = TB_BUF_INIT;
        TB_ASSERT_OK(tb_bnb_bmi.ops->evaluate(sdp, box, sizeof box, &v, &sol));
        tb_buf_free(&sol);
        tb_bnb_children kids = {TB_BUF_INIT, NULL, 0, 0, cut};
        TB_ASSERT_OK(tb_bnb_bmi.ops->branch(sdp, box, sizeof box, &kids));
        if (kids.n == 0)
            gone++;
        for (int g = 0; g < G * G * G * G; g++) {
            int inside = 0;
            for (size_t c = 0; c < kids.n; c++) {
                double cb[2 * N];
                memcpy(cb, kids.bytes.data + kids.k[c].off, sizeof cb);
                int in = 1;
                for (int k = 0; k < N; k++)
                    in &= pts[g][k] >= cb[2 * k] && pts[g][k] <= cb[2 * k + 1];
                if (in) {
                    inside = 1;
                    TB_ASSERT(kids.k[c].bound <= vals[g] + 1e-9);
                }
            }
            if (vals[g] < cut)
                TB_ASSERT(inside);
            lost += !inside;
        }
        tb_buf_free(&kids.bytes);
        free(kids.k);
    }
    TB_ASSERT(lost > 0);
    TB_ASSERT(gone >= 1);
    TB_ASSERT(bmi_count(sdp, BMI_SDP_REDUCED) > 0);
    tb_bnb_bmi.destroy(sdp);
}

/* The split (start-up and idle workers): the pieces tile the box (their
 * volumes add up to its volume, none overlaps another), each with its
 * parent's bound (NAN), and it solves nothing (a simulated run charges a
 * split nothing); it is used with the eigenvalue bounds alone, not with
 * the semidefinite bound (the tree grows by the relaxation's own cuts). */
static void test_bmi_split(void)
{
    if (size != 1)
        return;
    void *sdp, *eig;
    TB_ASSERT(bmi_both("bmi_split.json", 17, 1.0, &sdp, &eig));
    TB_ASSERT(tb_bnb_bmi.splits(sdp) == 0);
    TB_ASSERT(tb_bnb_bmi.splits(eig) == 1);
    enum { N = 4 };
    double box[2 * N] = {-1, 1, -1, 1, -1, 1, -1, 1};
    tb_bnb_children kids = {TB_BUF_INIT, NULL, 0, 0, NAN};
    TB_ASSERT_OK(tb_bnb_bmi.ops->split(sdp, box, sizeof box, 24, &kids));
    TB_ASSERT(kids.n >= 24);
    TB_ASSERT(bmi_count(sdp, BMI_SDP_BOUNDS) == 0);
    double vol = 0;
    for (size_t c = 0; c < kids.n; c++) {
        double cb[2 * N], lo[N], hi[N], v = 1;
        TB_ASSERT(kids.k[c].len == sizeof cb);
        memcpy(cb, kids.bytes.data + kids.k[c].off, sizeof cb);
        for (int k = 0; k < N; k++) {
            lo[k] = cb[2 * k];
            hi[k] = cb[2 * k + 1];
            v *= hi[k] - lo[k];
        }
        vol += v;
        for (size_t d = 0; d < c; d++) { /* no two share an interior */
            double db[2 * N];
            memcpy(db, kids.bytes.data + kids.k[d].off, sizeof db);
            int apart = 0;
            for (int k = 0; k < N; k++)
                apart |= db[2 * k + 1] <= lo[k] || hi[k] <= db[2 * k];
            TB_ASSERT(apart);
        }
        TB_ASSERT(isnan(kids.k[c].bound));
    }
    TB_ASSERT(fabs(vol - 16.0) < 1e-12);
    tb_buf_free(&kids.bytes);
    free(kids.k);
    tb_bnb_bmi.destroy(eig);
    tb_bnb_bmi.destroy(sdp);
}

static void test_bmi_sdp_fallback(void)
{
    if (size != 1)
        return;
    void *sdp, *eig;
    TB_ASSERT(bmi_both("bmi_big.json", 3, 1e307, &sdp, &eig));
    double box[8] = {-1, 1, -1, 1, -1, 1, -1, 1}, bs = NAN, be = NAN;
    TB_ASSERT_OK(tb_bnb_bmi.ops->bound(sdp, box, sizeof box, &bs));
    TB_ASSERT_OK(tb_bnb_bmi.ops->bound(eig, box, sizeof box, &be));
    TB_ASSERT(bmi_count(sdp, BMI_SDP_FAILED) == 1);
    TB_ASSERT(bs == be);
    tb_bnb_summary s;
    TB_ASSERT_OK(bmi_search(sdp, "hosts=3", 3, 0, &s));
    TB_ASSERT(s.found && s.bound <= s.optimum);
    TB_ASSERT(bmi_count(sdp, BMI_SDP_FAILED) > 1);
    tb_bnb_bmi.destroy(sdp);
    tb_bnb_bmi.destroy(eig);
}

/* DSDP's error reports go to Tenbin's logger at debug level, not to
 * standard output (apps/bnb/bmi.c replaces DSDPError and DSDPFError): a
 * solve given a block that does not exist reports two errors. */
static int dsdp_said;
static void dsdp_sink(void *ctx, tb_log_level level, int r, const char *line)
{
    (void)ctx, (void)r;
    if (level == TB_LOG_DEBUG && strstr(line, "DSDP: "))
        dsdp_said++;
}

static void test_bmi_dsdp_quiet(void)
{
    if (size != 1)
        return;
    char path[600];
    tb_test_path(path, sizeof path, "dsdp_stdout.txt");
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    FILE *f = fopen(path, "w+");
    TB_ASSERT(saved >= 0 && f);
    TB_ASSERT(dup2(fileno(f), STDOUT_FILENO) >= 0);
    tb_log_level was = tb_log_get_level();
    tb_log_set_sink(dsdp_sink, NULL);
    tb_log_set_level(TB_LOG_DEBUG);
    dsdp_said = 0;
    DSDP d = NULL;
    SDPCone sc = NULL;
    int bad = DSDPCreate(2, &d) || DSDPCreateSDPCone(d, 1, &sc);
    int refused = SDPConeSetBlockSize(sc, 5, 3);
    DSDPDestroy(d);
    fflush(stdout);
    tb_log_set_level(was);
    tb_log_set_sink(NULL, NULL);
    TB_ASSERT(dup2(saved, STDOUT_FILENO) >= 0);
    close(saved);
    long written = (fseek(f, 0, SEEK_END), ftell(f));
    fclose(f);
    remove(path);
    TB_ASSERT(!bad && refused != 0);
    TB_ASSERT_EQ_INT((int)written, 0);
    TB_ASSERT(dsdp_said >= 1);
}

/* A problem function that fails stops the run with its error (simulated
 * and sequential: under MPI the job is aborted with a message). */
static int fail_at = -1; /* the depth at which branch fails */
static int t_branch_failing(void *ctx, const void *sub, size_t len, tb_bnb_children *kids)
{
    tsub s;
    memcpy(&s, sub, sizeof s);
    if ((int)s.depth == fail_at)
        return TB_ERR_TASK;
    return t_branch(ctx, sub, len, kids);
}

static void test_problem_error(void)
{
    if (size != 1)
        return;
    tb_bnb_ops ops = tree_ops;
    ops.branch = t_branch_failing;
    char err[128];
    tb_platform *plat = NULL;
    TB_ASSERT_OK(tb_platform_parse_spec("hosts=8,clusters=2", 1, &plat, err, sizeof err));
    for (int P = 1; P <= 8; P *= 2)
        for (fail_at = 0; fail_at <= 6; fail_at += 3) {
            tree t;
            tree_init(&t, 8, 0);
            tb_bnb *b = NULL;
            TB_ASSERT_OK(tb_bnb_create_sim(&b, plat, P, &ops, &t));
            TB_ASSERT_OK(configure(b, &(cfg){0, 2, 2, 0, 0, 0, 0, 0}));
            TB_ASSERT_EQ_INT(tb_bnb_run(b), TB_ERR_TASK);
            tb_bnb_destroy(&b);
            free(t.visits);
        }
    tb_platform_destroy(&plat);
}


static int errors_said;

static void errors_sink(void *ctx, tb_log_level level, int r, const char *line)
{
    (void)ctx, (void)r, (void)line;
    errors_said += level == TB_LOG_ERROR;
}

static void test_api_errors(void)
{
    tree t;
    tree_init(&t, 4, 0);
    tb_bnb *b = NULL;
    tb_bnb_ops bad = tree_ops;
    bad.branch = NULL;
    tb_platform *plat = NULL;
    char err[128];
    TB_ASSERT_OK(tb_platform_parse_spec("hosts=4", 1, &plat, err, sizeof err));
    TB_ASSERT_EQ_INT(tb_bnb_create_sim(&b, plat, 4, &bad, &t), TB_ERR_INVALID);
    /* a table written before split existed (its size ends at evaluate)
     * still runs, without a split; one shorter than that is refused.  Nodes
     * dearer than a task make the start-up cut before expanding, so the
     * whole table does split here. */
    tb_bnb_ops older = tree_split_ops;
    for (int whole = 1; whole >= 0; whole--) {
        older.size = whole ? sizeof older : offsetof(tb_bnb_ops, split);
        memset(t.visits, 0, nnodes(4) * sizeof *t.visits);
        TB_ASSERT_OK(tb_bnb_create_sim(&b, plat, 4, &older, &t));
        TB_ASSERT_OK(tb_bnb_set_task_time(b, 1e-3));
        TB_ASSERT_OK(tb_bnb_set_node_cost(b, 1e-2));
        TB_ASSERT_OK(tb_bnb_run(b));
        TB_ASSERT(whole ? skipped(&t) > 0 : skipped(&t) == 0);
        tb_bnb_destroy(&b);
    }
    older.size = offsetof(tb_bnb_ops, evaluate);
    TB_ASSERT_EQ_INT(tb_bnb_create_sim(&b, plat, 4, &older, &t), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_bnb_create_sim(&b, plat, 5, &tree_ops, &t), TB_ERR_SIZE);
    TB_ASSERT_OK(tb_bnb_create_sim(&b, plat, 4, &tree_ops, &t));
    TB_ASSERT_EQ_INT(tb_bnb_set_gap(b, 1.0), TB_ERR_RANGE);
    TB_ASSERT_EQ_INT(tb_bnb_set_gap(b, -0.1), TB_ERR_RANGE);
    /* every refusal says what and why in one warning line */
    tb_test_warns c = {0, ""};
    tb_log_level old = tb_log_get_level();
    tb_log_set_level(TB_LOG_WARN);
    tb_log_set_sink(tb_test_warn_sink, &c);
    TB_ASSERT_EQ_INT(tb_bnb_set_groups(b, 4), TB_ERR_SIZE);
    tb_log_set_sink(NULL, NULL);
    tb_log_set_level(old);
    TB_ASSERT_EQ_INT(c.n, 1);
    TB_ASSERT(strstr(c.line, "tb_bnb_set_groups: 4 groups need at least 5 ranks (a supervisor "
                             "and a master each), the run has 4; the groups are unchanged"));
    /* ... and the same line is on the handle (tb_bnb_error) */
    TB_ASSERT(strstr(c.line, tb_bnb_error(b)) && tb_bnb_error(b)[0]);
    TB_ASSERT_EQ_INT(tb_bnb_set_depth(b, 65), TB_ERR_RANGE);
    TB_ASSERT_EQ_INT(tb_bnb_set_task_time(b, 0), TB_ERR_RANGE);
    TB_ASSERT_EQ_INT(tb_bnb_set_sub_pad(b, (2u << 20)), TB_ERR_RANGE);
    tb_bnb_summary s;
    TB_ASSERT_EQ_INT(tb_bnb_get_summary(b, &s), TB_ERR_STATE);
    tb_bnb_destroy(&b);
    TB_ASSERT(b == NULL);
    /* a simulated run, of one rank or more, keeps no checkpoint, and says
     * why (the file would not hold the simulation) */
    for (int P = 1; P <= 4; P += 3) {
        TB_ASSERT_OK(tb_bnb_create_sim(&b, plat, P, &tree_ops, &t));
        TB_ASSERT_OK(tb_bnb_set_checkpoint(b, "never-written.ck", 0));
        errors_said = 0;
        tb_log_set_sink(errors_sink, NULL);
        TB_ASSERT_EQ_INT(tb_bnb_run(b), TB_ERR_UNSUPPORTED);
        tb_log_set_sink(NULL, NULL);
        TB_ASSERT_EQ_INT(errors_said, 1);
        TB_ASSERT(strstr(tb_bnb_error(b), "a simulated run keeps no checkpoint: a checkpoint "
                                          "holds the open subproblems, not the simulation's"));
        tb_bnb_destroy(&b);
    }
    TB_ASSERT(access("never-written.ck", F_OK) != 0);
    tb_platform_destroy(&plat);
    /* The same fault, the same code in every module: a NULL handle is
     * TB_ERR_INVALID for every setter (docs/architecture.md, API convention). */
    tb_log_set_level(TB_LOG_ERROR);
    TB_ASSERT_EQ_INT(tb_bnb_set_gap(NULL, 0.1), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_bnb_set_groups(NULL, 1), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_bnb_set_depth(NULL, 2), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_bnb_set_task_time(NULL, 1), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_bnb_set_startup(NULL, 1), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_bnb_set_balance(NULL, TB_BNB_BALANCE_SEED), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_bnb_set_node_cost(NULL, 1e-3), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_bnb_set_status_interval(NULL, 1), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_bnb_set_wan_delay(NULL, 0), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_bnb_set_sites(NULL, 1), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_bnb_set_trace_file(NULL, "x"), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_bnb_set_progress(NULL, stderr), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_bnb_set_watch(NULL, NULL, NULL, 1), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_bnb_run(NULL), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_bnb_get_summary(NULL, &s), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_bnb_set_split(NULL, 1), TB_ERR_INVALID);
    tb_log_set_level(old);
    free(t.visits);
}

/* The summary's JSON parses; without a solution, optimum, bound, upper and
 * lower are null, and an infinite gap too (it was printed as "inf"). */
static void test_summary_json(void)
{
    tb_bnb_group g = {.master = 1, .workers = 2, .tasks = 5, .nodes = 7, .busy_s = 0.5,
                      .idle_s = NAN, .startup_idle_s = 0.125};
    tb_bnb_summary s;
    memset(&s, 0, sizeof s);
    s.ranks = 3;
    s.sense = TB_BNB_MAXIMIZE;
    s.optimum = -INFINITY;
    s.bound = 12.5;
    s.gap = INFINITY;
    s.nodes = 9;
    s.ngroups = 1;
    s.groups = &g;
    tb_buf b = TB_BUF_INIT;
    TB_ASSERT_OK(tb_bnb_summary_json(&s, "{\"problem\": \"p\", \"solution\": null}", &b));
    TB_ASSERT_OK(tb_buf_append(&b, "", 1));
    cJSON *j = cJSON_Parse((const char *)b.data);
    TB_ASSERT(j != NULL);
    TB_ASSERT(cJSON_IsString(cJSON_GetObjectItem(j, "problem")));
    const char *nulls[] = {"optimum", "bound", "upper", "lower", "gap", "solution"};
    for (size_t i = 0; i < sizeof nulls / sizeof *nulls; i++)
        TB_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(j, nulls[i])));
    cJSON *g0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "groups"), 0);
    TB_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(g0, "idle_s")));
    TB_ASSERT(cJSON_GetObjectItem(g0, "startup_idle_s")->valuedouble == 0.125);
    TB_ASSERT(cJSON_GetObjectItem(g0, "moved_out")->valuedouble == 0);
    cJSON_Delete(j);
    /* found, maximising: upper is the bound, lower the optimum */
    s.found = 1;
    s.optimum = 10;
    s.gap = 0.25;
    tb_buf_clear(&b);
    TB_ASSERT_OK(tb_bnb_summary_json(&s, NULL, &b));
    TB_ASSERT_OK(tb_buf_append(&b, "", 1));
    TB_ASSERT(strstr((const char *)b.data, "\"upper\": 12.5, \"lower\": 10,") != NULL);
    TB_ASSERT_EQ_INT(tb_bnb_summary_json(&s, "{\"gap\": 1}", &b), TB_ERR_INVALID);
    tb_buf_free(&b);
}

static const tb_test tests[] = {
    {"mpi_once", test_mpi_once},
    {"mpi_once_auto_depth", test_mpi_once_auto_depth},
    {"mpi_once_groups_moves", test_mpi_once_groups_moves},
    {"mpi_once_no_startup", test_mpi_once_no_startup},
    {"mpi_once_padded", test_mpi_once_padded},
    {"mpi_split", test_mpi_split},
    {"mpi_bounded_messages_and_queues", test_mpi_bounded_messages_and_queues},
    {"mpi_prunes", test_mpi_prunes},
    {"mpi_interrupted", test_mpi_interrupted},
    {"mpi_checkpoint_resume_exactly_once", test_mpi_checkpoint_resume_exactly_once},
    {"mpi_lone_master_heard", test_mpi_lone_master_heard},
    {"mpi_checkpoint_rounds_exactly_once", test_mpi_checkpoint_rounds_exactly_once},
    {"seq_checkpoint_resume_exactly_once", test_seq_checkpoint_resume_exactly_once},
    {"seq_checkpoint_rounds_exactly_once", test_seq_checkpoint_rounds_exactly_once},
    {"checkpoint_across_rank_counts", test_checkpoint_across_rank_counts},
    {"mpi_wan_delay_rtt", test_mpi_wan_delay_rtt},
    {"mpi_wan_delay_bnb", test_mpi_wan_delay_bnb},
    {"sim_once_small", test_sim_once_small},
    {"sim_once_bounded", test_sim_once_bounded},
    {"sim_once_self_master", test_sim_once_self_master},
    {"sim_once_64_clusters", test_sim_once_64_clusters},
    {"sim_once_1024", test_sim_once_1024},
    {"sim_once_4096_seeds", test_sim_once_4096_seeds},
    {"sim_once_seed_balance_no_startup", test_sim_once_seed_balance_no_startup},
    {"sim_split", test_sim_split},
    {"sim_deterministic", test_sim_deterministic},
    {"sim_sub_pad", test_sim_sub_pad},
    {"sim_gap", test_sim_gap},
    {"bmi_bound_sampling", test_bmi_bound_sampling},
    {"bmi_sdp_bound", test_bmi_sdp_bound},
    {"bmi_sdp_fallback", test_bmi_sdp_fallback},
    {"bmi_dsdp_quiet", test_bmi_dsdp_quiet},
    {"bmi_range_reduction", test_bmi_range_reduction},
    {"bmi_split", test_bmi_split},
    {"problem_error", test_problem_error},
    {"api_errors", test_api_errors},
    {"summary_json", test_summary_json},
    {NULL, NULL},
};

TB_TEST_MPI_MAIN_FLAGS(tests, 1, 0, rank, size)
