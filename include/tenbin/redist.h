/*
 * tenbin/redist.h - S4 (LoRP): block-distributed data re-placed to match
 * measured speeds, only when the move pays.
 *
 * This header has the planning half of S4, which needs no MPI and is what a
 * user calls to inspect or pin a plan:
 *
 *  - tb_redist_partition: the integer block sizes that minimise the largest
 *    predicted time per iteration, count_i / speed_i, with a floor per block
 *    (a block must hold at least its halo);
 *  - tb_redist_cost_*: the transfer cost model time = a + b * bytes, fitted
 *    by least squares to timed transfers and refreshed by real moves;
 *  - tb_redist_moves: what goes where when a contiguous 1-D block layout
 *    changes (global unit ranges, from rank, to rank);
 *  - tb_redist_decide: S4's decision at a balancing point: the plan, the
 *    predicted time per iteration before and after, the predicted cost of the
 *    move, and whether remaining_iterations * (T_now - T_new) > T_move.
 *
 * "Units" are the slices of the split dimension (Himeno: planes along i).
 * Ranks are numbered 0..nparts-1 and hold consecutive blocks in that order.
 * Deterministic: ties go to the lower rank.
 *
 * The second half (tb_redist_create and after) is the distributed side over
 * MPI: arrays registered on one distribution, synchronised variables, speed
 * measurement, balancing points, the move itself and halo exchange.
 */
#ifndef TENBIN_REDIST_H
#define TENBIN_REDIST_H

#include <stddef.h>
#include <stdint.h>

#include "tenbin/core.h"
#include "tenbin/export.h"

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Split n units into nparts consecutive blocks, counts[i] units for rank i,
 * minimising max_i counts[i] / speeds[i] (speeds in units per second, or any
 * common scale), every block at least min_units.  Among partitions with the
 * same largest time, each extra unit goes where it adds the least time, the
 * lower rank on a tie: 126 units at speeds 1, 1, 1, 0.5 give 36, 36, 36, 18;
 * 62 at 1, 1, 0.5 give 25, 25, 12.  A rank of speed 0 gets min_units.
 * TB_ERR_INVALID: nparts < 1, a NULL array, a negative or non-finite speed,
 * or no positive speed; TB_ERR_RANGE: n < nparts * min_units.
 */
TB_API int tb_redist_partition(uint64_t n, int nparts, const double *speeds, uint64_t min_units,
                               uint64_t *counts);

/*
 * Imbalance of per-rank times (seconds per iteration, >= 0): max/avg (>= 1)
 * and avg/max (in (0, 1]).  A rank with an empty block counts with time 0:
 * it is idle, which is imbalance.  All zero: both 1.
 */
TB_API int tb_redist_imbalance(const double *times, int nparts, double *max_over_avg,
                               double *avg_over_max);

/* Transfer cost model, time = a + b * bytes.  Zero-initialise, then fit. */
typedef struct tb_redist_cost {
    double a;       /* seconds per transfer (>= 0) */
    double b;       /* seconds per byte (>= 0) */
    uint64_t n;     /* samples behind the fit */
    /* running sums of the samples (bytes x, seconds y) for the refit */
    double sx, sy, sxx, sxy;
} tb_redist_cost;

/*
 * Least-squares fit of time = a + b * bytes to n timed transfers (n >= 2, at
 * least two distinct sizes; seconds >= 0).  A negative intercept or slope
 * (noise) is clamped to 0 and the other coefficient refitted.  Replaces any
 * previous fit.  TB_ERR_INVALID otherwise.
 */
TB_API int tb_redist_cost_fit(tb_redist_cost *m, const double *bytes, const double *secs, size_t n);
/* Add one measured transfer (a real move) and refit from all samples. */
TB_API int tb_redist_cost_add(tb_redist_cost *m, double bytes, double secs);
/* Predicted seconds for one transfer of `bytes`. */
TB_API double tb_redist_cost_predict(const tb_redist_cost *m, double bytes);

/* One transfer of a re-placement: units [first, first + count) of the global
 * split dimension go from rank `from` to rank `to`. */
typedef struct tb_redist_move {
    int from, to;
    uint64_t first, count;
} tb_redist_move;

/*
 * The transfers that turn the block layout cur[] into next[] (same total):
 * every unit whose owner changes, in runs, in global order.  There are at
 * most 2 * nparts - 2.  Writes up to cap moves and sets *nmoves to how many
 * there are (call with cap 0 to count).  TB_ERR_INVALID if the totals
 * differ.
 */
TB_API int tb_redist_moves(int nparts, const uint64_t *cur, const uint64_t *next,
                           tb_redist_move *out, size_t cap, size_t *nmoves);

/*
 * Predicted seconds of a set of moves of unit_bytes per unit: each rank sends
 * and receives its transfers one after another, ranks work in parallel, so
 * the move takes the largest per-rank sum of a + b * bytes.
 */
TB_API double tb_redist_move_time(const tb_redist_cost *m, const tb_redist_move *moves,
                                  size_t nmoves, int nparts, double unit_bytes);

/* What tb_redist_decide decided, and from what. */
typedef struct tb_redist_decision {
    int move;               /* 1: apply next[] now */
    double t_now;           /* predicted seconds per iteration with cur[] */
    double t_new;           /* ... with next[] */
    double t_move;          /* predicted seconds of the move */
    double imbalance;       /* max/avg of the per-rank times with cur[] */
    uint64_t remaining;     /* iterations left after this point */
    uint64_t units_moved;   /* units that change owner */
    const char *why;        /* one line, static storage */
} tb_redist_decision;

/* Decision modes. */
enum {
    TB_REDIST_PREDICT = 0,   /* move when remaining * (t_now - t_new) > t_move (S4) */
    TB_REDIST_NO_PREDICT = 1 /* move whenever the imbalance exceeds the threshold (S4's baseline) */
};

/*
 * S4's decision at a balancing point reached after `iteration` of
 * `total_iterations` iterations (1 <= iteration <= total): the partition for
 * the measured speeds (units per second per rank, as tb_redist_partition),
 * and whether to move to it.  No move when the imbalance (max/avg of
 * cur[i] / speeds[i]) is at most `threshold` (>= 1), when next[] equals cur[],
 * when no iteration remains, or (TB_REDIST_PREDICT) when the predicted gain
 * over the remaining iterations does not exceed the predicted cost.  next[]
 * always receives the plan; d explains the decision.
 */
TB_API int tb_redist_decide(int nparts, const uint64_t *cur, const double *speeds,
                            uint64_t iteration, uint64_t total_iterations, double threshold,
                            int mode, const tb_redist_cost *cost, double unit_bytes,
                            uint64_t min_units, uint64_t *next, tb_redist_decision *d);


/* ------------------------------------------------------------------------
 * Distributed arrays (collective calls over the communicator given to
 * tb_redist_create; MPI must be initialised).
 *
 * A tb_redist is one block distribution of `units` units along a split
 * dimension over the ranks of a communicator: rank i owns the consecutive
 * units [start_i, start_i + count_i), every count_i >= max(1, widest halo).
 * Arrays registered on it move together.  Typical loop:
 *
 *     tb_redist_opts cfg;
 *     tb_redist_opts_init(&cfg);
 *     cfg.units = n;
 *     tb_redist_create(&r, MPI_COMM_WORLD, &cfg);
 *     tb_redist_add_array(r, &desc_p, NULL);          // desc.data = (void **)&p
 *     tb_redist_bind_int(r, TB_REDIST_VAR_COUNT, &nlocal, 0);
 *     ... initialise the local blocks ...
 *     tb_redist_probe(r);                             // times 3 transfer sizes
 *     for (it = 1; it <= iters; it++) {
 *         tb_redist_halo_exchange(r);
 *         compute(p, nlocal);
 *         tb_redist_balance(r, it, iters, NULL);      // may move; p, nlocal follow
 *     }
 *     tb_redist_destroy(&r);
 *
 * Speed measure: wall-clock time between balancing points minus the time
 * spent inside this library (halo exchange, probe, balancing, moves) and
 * between tb_redist_pause and tb_redist_resume, divided by units x
 * iterations, smoothed exponentially.  Wall time, not CPU time: a rank that
 * shares its core with another job loses wall time but not CPU time, and
 * the wall time is what the other ranks wait for.  Time a rank spends
 * waiting inside its own MPI calls must be bracketed by pause/resume, or it
 * will look slow (the library's own calls are excluded already).
 *
 * Errors: local checks return TB_ERR_* on the calling rank.  Calls that
 * find the ranks disagreeing (different iteration at a balancing point,
 * different arrays) abort the communicator with a message: they cannot be
 * recovered from.
 * ------------------------------------------------------------------------ */

typedef struct tb_redist tb_redist;

/* Configuration of a distribution.  tb_redist_opts_init sets size and the
 * defaults. */
typedef struct tb_redist_opts {
    size_t size;                    /* sizeof(tb_redist_opts), set by tb_redist_opts_init */
    uint64_t units;                 /* global extent of the split dimension (> 0) */
    const uint64_t *initial_counts; /* NULL: equal blocks (the first units%P ranks get one more);
                                       else one count per rank, summing to units */
    double threshold;               /* balance only when max/avg time exceeds it (default 1.05) */
    uint64_t interval;              /* iterations between balancing points (default 10) */
    int mode;                       /* TB_REDIST_PREDICT (default) or TB_REDIST_NO_PREDICT;
                                       TB_REDIST_OFF: measure, never move */
    double probe_bytes[3];          /* the probe's transfer sizes; 0: 1, 8 and 64 units of the
                                       registered arrays (clamped to the smallest block) */
    int probe_repeats;              /* ping-pongs per size, the median is kept (default 5) */
    double smoothing;               /* weight of the newest measure, (0, 1] (default 0.5) */
    unsigned guards;                /* TB_REDIST_GUARD_* of the prediction mode (default both;
                                       0: S4's plain rule) */
    const char *record;             /* NULL, or a file rank 0 writes every balancing point's
                                       measures and decision to (JSON lines), for replay in the
                                       simulator (tenbin himeno --sim --replay) */
} tb_redist_opts;

/*
 * Guards of the prediction mode against moves that do not pay (both on by
 * default).  The speed measure keeps each call interval's compute time, so
 * call tb_redist_balance every iteration even if the interval is longer.
 *  - NOISE: the gain per iteration must exceed 3 standard errors of the
 *    slowest rank's time per iteration (from the spread of its per-iteration
 *    times in the window), and the gain less that margin must pay for the
 *    move: a neighbour's job stealing a core for a sweep or two is not
 *    followed, a load that stays is.
 *  - CHANGE: a rank whose two half-windows differ (3 standard errors, and
 *    more than the threshold's margin) changed speed inside the window: its
 *    speed restarts from the second half; a window whose halves both differ
 *    that much from the smoothed history (a new level) replaces it instead
 *    of being averaged in, so no move follows a stale speed.
 */
enum { TB_REDIST_GUARD_NOISE = 1, TB_REDIST_GUARD_CHANGE = 2 };

/* A third mode next to TB_REDIST_PREDICT / TB_REDIST_NO_PREDICT. */
enum { TB_REDIST_OFF = 2 };

/* Fill *opts with its size and the defaults (units 0: the caller must set
 * it). */
TB_API void tb_redist_opts_init(tb_redist_opts *opts);

/*
 * Collective.  Create a distribution on a duplicate of comm.  TB_ERR_INVALID:
 * units 0, threshold < 1, interval 0, smoothing outside (0, 1], a bad mode,
 * initial counts that do not sum to units or contain a 0; TB_ERR_SIZE: more
 * ranks than units; TB_ERR_INVALID also for options not set up by
 * tb_redist_opts_init.  Every rank must pass the same configuration.
 */
TB_API int tb_redist_create(tb_redist **out, MPI_Comm comm, const tb_redist_opts *opts);
/* Collective.  Free the distribution and the local blocks of its arrays
 * (the registered data pointers are set to NULL); NULLs *r. */
TB_API void tb_redist_destroy(tb_redist **r);
/* The line of the last call on r that failed or refused a value ("" if
 * none has): what happened and why, as it was also logged.  Valid until the
 * next call on r.  NULL: "". */
TB_API const char *tb_redist_error(const tb_redist *r);

/* An array to register.  Row-major (C order): dims[ndims-1] varies fastest. */
typedef struct tb_redist_array_desc {
    const char *name;        /* for messages (copied); may be NULL */
    int ndims;               /* 1 to 4 */
    uint64_t dims[4];        /* global extents; dims[split] must equal the units */
    int split;               /* the distributed dimension, 0..ndims-1 */
    size_t elem_size;        /* bytes per element; 0: from `type` */
    MPI_Datatype type;       /* MPI_DATATYPE_NULL, or a contiguous type giving elem_size */
    uint64_t halo_lo;        /* halo planes before the block along split (>= 0) */
    uint64_t halo_hi;        /* halo planes after it (>= 0) */
    void **data;             /* OUT: where the library writes the block's address */
} tb_redist_array_desc;

/*
 * Collective.  Register an array on the distribution and allocate its local
 * block, zero-filled.  Ownership: the library owns the storage.  *desc->data
 * receives its address now and again after every move (the block may be
 * reallocated by tb_redist_balance and tb_redist_apply; do not keep copies of
 * the pointer across those calls); tb_redist_destroy frees it and sets
 * *desc->data to NULL.
 *
 * Swapping arrays is allowed: a stencil code that exchanges two registered
 * arrays' pointers after each sweep (t = u; u = v; v = t) may do so any
 * number of times between library calls.  Each library call that touches
 * the blocks (halo exchange, balancing, apply) first takes every array's
 * block from where its pointer is now, so a move carries each name's data
 * and writes each name's new address back (examples/jacobi.c).  Only an
 * exchange among registered arrays of the same shape can be followed: a
 * pointer set to other memory, or two pointers on one block, stops the job
 * with one line naming the array (MPI_Abort), since the next move would
 * lose that data.
 *
 * Local layout: the global dims with dims[split] replaced by
 * halo_lo + count + halo_hi.  Local index l along split is the global unit
 * start + l - halo_lo.  Halo planes outside the global range (below unit 0 or
 * above the last) belong to the first and last ranks for good: the library
 * never overwrites them, so they may hold a boundary condition.
 *
 * Errors (one logged line naming the array): TB_ERR_INVALID for ndims outside
 * 1..4, split out of range, dims[split] != units, a zero extent, no element
 * size, a non-contiguous type; TB_ERR_RANGE for a halo wider than a rank's
 * block; TB_ERR_NOMEM.  *index_out (may be NULL) receives the array's index.
 */
TB_API int tb_redist_add_array(tb_redist *r, const tb_redist_array_desc *desc, int *index_out);

/* What a synchronised variable holds. */
typedef enum tb_redist_var {
    TB_REDIST_VAR_COUNT = 0, /* units in this rank's block */
    TB_REDIST_VAR_START = 1, /* first global unit of the block */
    TB_REDIST_VAR_END = 2    /* one past its last unit */
} tb_redist_var;

/*
 * Bind a variable that follows the layout: it is set to the value plus
 * `offset` now and after every move (offset 1 and VAR_START give a 1-based
 * or boundary-shifted index; VAR_END with offset -1 an inclusive end).
 * TB_ERR_INVALID for a NULL pointer or an unknown kind; TB_ERR_RANGE if the
 * value does not fit an int.  Local (not collective).
 */
TB_API int tb_redist_bind_int(tb_redist *r, tb_redist_var what, int *var, long offset);
TB_API int tb_redist_bind_i64(tb_redist *r, tb_redist_var what, int64_t *var, int64_t offset);

/* This rank's block, and the whole layout (counts[nparts]). */
TB_API void tb_redist_block(const tb_redist *r, uint64_t *start, uint64_t *count);
TB_API int tb_redist_nparts(const tb_redist *r);
TB_API void tb_redist_counts(const tb_redist *r, uint64_t *counts);

/*
 * Collective.  Time ping-pongs of the three probe sizes between neighbouring
 * ranks (0-1, 2-3, ..., then 1-2, 3-4, ...), keep each size's median and the
 * largest over the pairs, and fit the transfer cost model.  Call it just
 * before the main loop: it also starts the speed measure.  If it has not been
 * called, the first balancing point calls it and only starts measuring.
 */
TB_API int tb_redist_probe(tb_redist *r);

/* Exclude the time between these two calls from the speed measure (for the
 * caller's own communication).  Local; pairs must not nest. */
TB_API void tb_redist_pause(tb_redist *r);
TB_API void tb_redist_resume(tb_redist *r);

/*
 * Collective.  Fill the halo planes of every registered array from the
 * neighbouring ranks' blocks (the global edges' halos are left alone).  The
 * library calls it at the end of every move, so halos are valid after a
 * move; the caller calls it when its computation has changed the planes next
 * to the block edges.
 */
TB_API int tb_redist_halo_exchange(tb_redist *r);

/* A plan computed at a balancing point. */
typedef struct tb_redist_plan {
    int valid;                /* 0: no plan at this call (not a balancing point, or the
                                 first point, which only starts measuring) */
    uint64_t iteration;       /* as passed */
    uint64_t total;           /* as passed, or the estimate when 0 was passed */
    int total_estimated;      /* 1: the total was unknown; remaining = iterations run so far */
    const uint64_t *counts;   /* [nparts] the layout now (library storage, valid until the
                                 next call on r) */
    const uint64_t *next;     /* [nparts] the proposed layout */
    const double *speeds;     /* [nparts] measured units per second, smoothed */
    tb_redist_decision decision;
} tb_redist_plan;

/*
 * Collective.  At iteration `iteration` of `total` (0: unknown), if this is a
 * balancing point (a multiple of the interval, not the last iteration):
 * gather the ranks' measured speeds and compute the plan and S4's decision,
 * without moving.  Otherwise plan->valid is 0.  All ranks get the same plan
 * (computed on rank 0).  Aborts the communicator if ranks disagree on the
 * iteration.
 */
TB_API int tb_redist_plan_at(tb_redist *r, uint64_t iteration, uint64_t total,
                             tb_redist_plan *plan);

/*
 * Collective.  Move every array to the layout counts[nparts] (rank 0's counts
 * are used; each >= the floor, summing to the units): the units that change
 * owner travel directly between old and new owner, then each rank re-lays its
 * blocks in place, and halos are exchanged.  Extra memory per rank: the
 * units it receives (plus, if realloc cannot grow in place, one copy of the
 * block while it grows; on Linux blocks grow by mremap, without a copy).
 * The measured time refreshes the cost model: later predictions are scaled
 * by the mean ratio of measured to predicted move times.  TB_ERR_INVALID/RANGE for a bad
 * layout (on every rank), TB_ERR_NOMEM.
 */
TB_API int tb_redist_apply(tb_redist *r, const uint64_t *counts);

/*
 * Collective.  The one-call form: tb_redist_plan_at and, if the decision is
 * to move (and the mode is not TB_REDIST_OFF), tb_redist_apply.  plan may be
 * NULL.  Logs each move at info level.
 */
TB_API int tb_redist_balance(tb_redist *r, uint64_t iteration, uint64_t total,
                             tb_redist_plan *plan);

/*
 * Checkpoints: stop a run and resume it later, on as many ranks or on
 * another number.
 *
 * tb_redist_checkpoint (collective): write every registered array (each
 * rank its own block, the global edges' halo planes included, the halos
 * between ranks not), the layout, the balancer's state (measured speeds,
 * cost model, counters) and `iteration` (the caller's place: call it right
 * after a balancing point, or anywhere) to path.  Atomic: every rank writes
 * path.tmp at its own offsets (MPI-IO, so a shared file system is fine),
 * syncs, and rank 0 renames it over path; a kill at any moment leaves the
 * previous checkpoint whole.  Every piece carries a checksum.
 *
 * tb_redist_restore (collective, after the arrays are registered in the
 * same order and with the same shapes, before the loop; in place of
 * tb_redist_probe): read it back.  On as many ranks as wrote it, the
 * layout and the balancer's state are restored; on another number of ranks
 * the layout stays as it is now (equal blocks, or initial_counts) and the
 * probe runs again.  Each rank reads only the pieces its block overlaps.
 * *iteration receives the one given to tb_redist_checkpoint.  Refused, with
 * one line on every rank (tb_redist_error; logged on rank 0): not a
 * checkpoint, one of another run (tb_redist_set_identity) or of other
 * arrays, a file cut short, a damaged piece (TB_ERR_PARSE, TB_ERR_INVALID,
 * TB_ERR_IO).  A failure after the layout was taken (a damaged piece) leaves
 * the arrays' contents undefined: stop the run.
 *
 * tb_redist_set_identity (local, same on every rank): what the run is in
 * words (the program and its input); a restore refuses a checkpoint whose
 * words differ.  Default: "".
 */
TB_API int tb_redist_set_identity(tb_redist *r, const char *what);
/* Collective: whether checkpoints keep array `index` (tb_redist_add_array's
 * order; default 1).  Leave out constant coefficients and scratch space:
 * after tb_redist_restore such a block is zero-filled on the new layout and
 * the caller fills it again.  TB_ERR_RANGE for an unknown index. */
TB_API int tb_redist_set_kept(tb_redist *r, int index, int kept);
TB_API int tb_redist_checkpoint(tb_redist *r, const char *path, uint64_t iteration);
TB_API int tb_redist_restore(tb_redist *r, const char *path, uint64_t *iteration);

/* Counters of a distribution (this rank's view; totals are global). */
typedef struct tb_redist_stats {
    uint64_t points;          /* balancing points with a plan */
    uint64_t moves;           /* moves applied */
    uint64_t skipped;         /* plans not applied because they did not pay (PREDICT) */
    uint64_t bytes_moved;     /* global bytes that changed owner, all moves */
    double move_s;            /* seconds spent moving (largest rank, summed over moves) */
    double probe_s;           /* seconds of the probe */
    uint64_t peak_extra_bytes;/* largest extra memory this rank allocated during a move */
    tb_redist_cost cost;      /* the probe's transfer cost model */
    double move_factor;       /* mean over the moves of measured / predicted-by-cost time; the
                                 decision scales the model by it once a move has been made */
    uint64_t checkpoints;     /* tb_redist_checkpoint calls of this run */
    double checkpoint_s;      /* seconds in them on this rank (every rank waits for the
                                 slowest: the run's cost of its checkpoints) */
} tb_redist_stats;

TB_API void tb_redist_get_stats(const tb_redist *r, tb_redist_stats *st);

/* ------------------------------------------------------------------------
 * The simulated application: a block-distributed iterative code (Himeno's
 * shape: per iteration a halo exchange with the neighbours, then compute
 * proportional to the block) on a modelled platform, balanced by the same
 * balancer as the real arrays.  Each rank is an actor on the simulator:
 * compute is the block's work at its host's speed over virtual time
 * (constant, trace or load process), halo planes and moves are messages
 * costed by the platform's network, a balancing point is an allgather of the
 * ranks' windows (Bruck's algorithm, ceil(log2 P) rounds), the decision, the
 * move (one message per run of units changing owner) and an allreduce of
 * the move's time, as tb_redist_balance does.  Deterministic: the same
 * configuration gives the same results bit for bit.
 * ------------------------------------------------------------------------ */

struct tb_platform;

/* tb_redist_sim_opts_init sets size and the defaults. */
typedef struct tb_redist_sim_opts {
    size_t size;             /* sizeof(tb_redist_sim_opts), set by tb_redist_sim_opts_init */
    const struct tb_platform *platform; /* ranks fill its hosts' cores in order */
    int ranks;
    uint64_t units;          /* extent of the split dimension (>= ranks * min_units) */
    uint64_t iters;          /* iterations (>= 1) */
    double unit_work;        /* seconds at speed 1 of one unit's share of an iteration (> 0) */
    double unit_bytes;       /* bytes that move with a unit (all arrays) */
    double halo_bytes;       /* bytes sent to each neighbour per iteration */
    uint64_t min_units;      /* smallest block (>= 1) */
    tb_redist_opts balance;  /* threshold, interval, mode, guards, smoothing (units, counts,
                                probe and record are not used) */
    double (*work_factor)(void *ctx, int rank, uint64_t iteration);
                             /* NULL, or a factor (>= 1) on a rank's work at an iteration:
                                a slowdown counted in iterations, as `himeno --slowdown` */
    void *work_ctx;
    const char *replay;      /* NULL, or a record (tb_redist_opts.record) of a real run:
                                its measured windows and move times drive the decisions, its
                                configuration replaces the one above, and every decision is
                                compared with the recorded one */
} tb_redist_sim_opts;

/* One balancing point of a simulated run. */
typedef struct tb_redist_sim_point {
    uint64_t iteration;
    double time;             /* virtual seconds when the first rank decided */
    tb_redist_decision decision;
    double move_s;           /* the move's time (slowest rank), 0 if none */
} tb_redist_sim_point;

typedef struct tb_redist_sim_result {
    int ranks;               /* as run (on replay, the record's) */
    tb_redist_opts balance;/* the balancing configuration in force (on replay, the record's) */
    double makespan_s;       /* virtual: the last rank's end */
    double move_s;           /* summed over moves, each its slowest rank */
    uint64_t moves, points, skipped, bytes_moved;
    double *compute_s;       /* [ranks] virtual seconds computing */
    double *wait_s;          /* [ranks] the rest: halos, balancing points, moves */
    uint64_t *counts;        /* [ranks] the final layout */
    tb_redist_sim_point *pts;/* [points] */
    uint64_t *layouts;       /* [points * ranks] each point's plan */
    double decide_cpu_s;     /* real CPU seconds the decisions took, all points */
    double wall_s;           /* real seconds of the simulation */
    uint64_t events;
    tb_redist_cost cost;     /* the modelled probe's line */
    uint64_t replay_points;  /* replay: points compared */
    uint64_t replay_agree;   /* ... whose decision and plan equal the record's */
} tb_redist_sim_result;

/*
 * Run the simulated application.  Errors (one line in err): TB_ERR_INVALID
 * for a bad configuration, TB_ERR_SIZE when the ranks do not fit the
 * platform's cores or the units, TB_ERR_IO / TB_ERR_PARSE for a record that
 * cannot be read, TB_ERR_STATE for a replay whose decisions diverge from the
 * record (err names the point).  *out gets the result on success (free it
 * with tb_redist_sim_result_free), NULL on an error.
 */
TB_API void tb_redist_sim_opts_init(tb_redist_sim_opts *opts);
TB_API int tb_redist_sim_run(const tb_redist_sim_opts *opts, tb_redist_sim_result **out,
                             char *err, size_t errlen);
/* Free a result of tb_redist_sim_run and set *res to NULL (NULL is fine). */
TB_API void tb_redist_sim_result_free(tb_redist_sim_result **res);

/*
 * Append the result of a run with opts to out as one JSON object on one
 * line (no newline): simulated (true), ranks, iters, balance ("on",
 * "nopredict" or "off"), guards, threshold, interval, makespan_s, moves,
 * skipped, points, bytes_moved, move_s, cost_a_s, cost_b_s_per_byte,
 * decide_cpu_s, wall_s, events, on replay replay_points and replay_agree,
 * compute_s and wait_s (per rank), layout (the final counts), actions (the
 * points whose plan moved units past the threshold with iterations left:
 * [{iteration, time_s, moved, layout, t_now_s, t_new_s, t_move_s, move_s,
 * imbalance (to 4 decimals), why}]).  extra: NULL, or the text of a JSON
 * object whose members come first (what the caller knows: the problem's
 * size).  NaN and infinities are null.  As tb_mw_summary_json
 * (tenbin/mw.h): TB_ERR_PARSE, TB_ERR_INVALID (extra repeats a key),
 * TB_ERR_NOMEM.
 */
TB_API int tb_redist_sim_result_json(const tb_redist_sim_opts *opts,
                                     const tb_redist_sim_result *r, const char *extra,
                                     tb_buf *out);

#ifdef __cplusplus
}
#endif

#endif /* TENBIN_REDIST_H */
