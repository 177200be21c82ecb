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
 * Deterministic: ties go to the lower rank.  The distributed arrays that use
 * these (registration, halos, synchronised variables, balancing points) are
 * not in this header yet.
 */
#ifndef TENBIN_REDIST_H
#define TENBIN_REDIST_H

#include <stddef.h>
#include <stdint.h>

#include "tenbin/core.h"
#include "tenbin/export.h"

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

#ifdef __cplusplus
}
#endif

#endif /* TENBIN_REDIST_H */
