/*
 * bnb_internal.h - what the branch-and-bound runtime's parts share: the
 * subproblem queue, the expansion engine, the wire form of subproblems.
 *
 * Inside the runtime every value and bound is in minimisation sense (a
 * maximisation problem's values are negated on the way in and out), so
 * "better" is always "smaller".
 */
#ifndef TB_BNB_INTERNAL_H
#define TB_BNB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tenbin/bnb.h"
#include "tenbin/core.h"

/* A pending subproblem: its bound, its depth in the tree, its bytes. */
typedef struct tb__bnb_sub {
    double bound;
    uint32_t depth;
    uint32_t len;
    unsigned char *data; /* malloc'd, owned by whoever holds the sub */
} tb__bnb_sub;

/*
 * Queue of pending subproblems: best bound first, or deepest first while
 * `dive` is set (no incumbent yet) or while the queue is `tight` (its bytes
 * went over `limit`, until they are back under half of it: depth first
 * expands the subproblems that end soonest, so the queue stops growing).
 * Ties go to the deeper (then the better-bounded) one, so the order is the
 * same on every run.
 */
typedef struct tb__bnb_heap {
    tb__bnb_sub *a;
    size_t n, cap;
    int dive;
    int tight;
    size_t bytes; /* what the queue holds: the subs' bytes and their entries */
    size_t limit; /* 0: no limit */
    uint64_t tightened; /* times it went over its limit */
} tb__bnb_heap;

/* The default limit of a queue's bytes (tb_bnb_set_pool_limit). */
#define TB__BNB_POOL_LIMIT ((size_t)256 << 20)
/* The most bytes of subproblems one message carries: a task's answer stops
 * descending once it holds this much and returns what it has not expanded
 * (the rest stays searchable), and a task or a transfer of subproblems
 * between groups stops adding at it. */
#define TB__BNB_MSG_BUDGET ((size_t)8 << 20)

int tb__bnb_heap_push(tb__bnb_heap *h, tb__bnb_sub s);
/* Pop the first; 0 if empty. */
int tb__bnb_heap_pop(tb__bnb_heap *h, tb__bnb_sub *out);
/* Least bound of the queue (+inf if empty). */
double tb__bnb_heap_min_bound(const tb__bnb_heap *h);
/* Drop (free) the subs whose bound cannot beat cutoff, and reorder with
 * the given dive flag; returns how many were dropped. */
size_t tb__bnb_heap_prune(tb__bnb_heap *h, double cutoff, int dive);
void tb__bnb_heap_free(tb__bnb_heap *h);

struct tb_bnb_children {
    tb_buf bytes;
    struct tb__bnb_kid {
        size_t off, len;
        double bound;
    } *k;
    size_t n, cap;
    double cutoff; /* tb_bnb_children_cutoff's: the problem's sense, NAN if none known */
};

/* Expansion engine: the problem, the incumbent, counters. */
typedef struct tb__bnb_engine {
    const tb_bnb_ops *ops;
    void *ctx;
    int max;        /* the problem maximises: negate its values */
    double gap;     /* relative gap under which a subproblem is not worth it */
    double inc;     /* incumbent value (minimisation sense), +inf if none */
    tb_buf sol;     /* its bytes, when found here */
    int improved;   /* inc was improved by this engine since last cleared */
    int cut;        /* an expansion stopped at its budget since last cleared */
    uint64_t nodes; /* subproblems expanded */
    tb_bnb_children kids;
    tb_buf cur;     /* the subproblem being expanded */
    tb_buf tmp;     /* evaluate's solution */
    /* depth-first stack of a task: entries over one byte arena */
    struct tb__bnb_frame {
        size_t off, len;
        double bound;
        uint32_t depth;
    } *stack;
    size_t nstack, capstack;
    tb_buf arena;
} tb__bnb_engine;

void tb__bnb_engine_init(tb__bnb_engine *e, const tb_bnb_ops *ops, void *ctx, double gap);
void tb__bnb_engine_free(tb__bnb_engine *e);
/* The value under which a bound is still worth expanding. */
double tb__bnb_cutoff(const tb__bnb_engine *e);
/* The relative gap |inc - lower| / |inc| (minimisation sense), INFINITY
 * without an incumbent, at 0 or with no finite lower bound. */
double tb__bnb_gap(double inc, double lower);
/* The progress line of a run (supervisor or one rank), `now` s into it:
 * incumbent, bound, gap, pending, nodes from st. */
void tb__bnb_progress_line(tb_progress *p, double now, const tb_bnb_state *st);
/* Offer a solution found elsewhere (minimisation sense). */
void tb__bnb_engine_offer(tb__bnb_engine *e, double inc);
/* The root as a sub (bound computed); *out's data is malloc'd. */
int tb__bnb_root(tb__bnb_engine *e, tb__bnb_sub *out);
/*
 * Expand sub (the bytes, its bound, its depth) down to `levels` levels
 * below it, depth first.  Survivors (subproblems at that depth still worth
 * it) are appended to `out` in wire form (tb__bnb_pack_sub) and counted in
 * *nout.  Once out holds `budget` bytes (0: no budget), the expansion stops
 * and what it has not expanded yet goes to out as it is, at its own depth,
 * and e->cut is set.  levels = 0 is not allowed.
 */
int tb__bnb_expand(tb__bnb_engine *e, const void *data, size_t len, double bound, uint32_t depth,
                   uint32_t levels, size_t budget, tb_buf *out, uint32_t *nout);
/* Expand one sub (one level), pushing the children worth it into h. */
int tb__bnb_expand_into(tb__bnb_engine *e, const tb__bnb_sub *s, tb__bnb_heap *h);
/* The problem's split, if it has one (tb_bnb_ops.split, within its size). */
int tb__bnb_can_split(const tb_bnb_ops *ops);
/* The run uses it: the problem has one and tb_bnb_set_split left it on. */
int tb__bnb_splits(const tb_bnb *b);
/* Cut s into `ways` or more with the problem's split, the pieces that can
 * still beat the incumbent into h (bound: their own, at least s's, or
 * s's); *added: how many (0: s could not be cut; it is not in h then). */
int tb__bnb_split_into(tb__bnb_engine *e, const tb__bnb_sub *s, int ways, tb__bnb_heap *h,
                       size_t *added);
/* While h holds fewer than `want` (and is within its limit), cut each of
 * its subproblems into its share of `want` with the problem's split; stops
 * when none can be cut further. */
int tb__bnb_split_pool(tb__bnb_engine *e, tb__bnb_heap *h, uint64_t want);

/* Wire form of a sub: f64 bound, u32 depth, bytes. */
int tb__bnb_pack_sub(tb_buf *b, double bound, uint32_t depth, const void *data, size_t len);
/* Read one; the sub's data is a fresh copy. */
int tb__bnb_unpack_sub(tb_buf *b, tb__bnb_sub *out);

/* The plain sequential best-first search (P = 1), stopping after max_nodes
 * expanded nodes if not 0, its queue limited to pool_limit bytes (0: no
 * limit); the solution stays in e->sol. */
int tb__bnb_serial(tb__bnb_engine *e, uint64_t max_nodes, size_t pool_limit, double *bound_left,
                   int *proven);

/* Called between two nodes of the sequential search every `every` wall
 * seconds (0: never), with the incumbent and the queue: the whole state of
 * the search at that moment (a checkpoint). */
typedef struct tb__bnb_serial_hook {
    double every;
    int (*fn)(void *arg, const tb__bnb_engine *e, const tb__bnb_heap *h);
    void *arg;
} tb__bnb_serial_hook;

/* The same search from the subproblems in h (the root, or those of a
 * checkpoint; deepest first while h->dive and there is no incumbent),
 * calling hook (or NULL) on the way.  It stops when h is empty, at the
 * gap, after max_nodes, or at a signal (tb_signals_pending), between two
 * nodes: what is still open is left in h for the caller. */
int tb__bnb_serial_on(tb__bnb_engine *e, tb__bnb_heap *h, uint64_t max_nodes,
                      const tb__bnb_serial_hook *hook, double *bound_left, int *proven);

#endif /* TB_BNB_INTERNAL_H */
