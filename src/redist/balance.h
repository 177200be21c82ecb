/*
 * balance.h - S4's balancer: what happens at a balancing point once every
 * rank's measure of the last window is known (internal).
 *
 * This is the one piece of S4 policy, shared by the real distributed arrays
 * (redist.c, over MPI) and the simulated application (sim.c): a rank's
 * window (its compute time per call between balancing points), the smoothed
 * speeds, the two guards, the decision (tb_redist_decide) and the feedback
 * of measured move times into the cost model.  No MPI, no clock: the caller
 * measures and gathers, this decides.  Fed the same windows, it makes the
 * same decisions on both substrates (tests/cli/himeno_sim.sh replays a real
 * run's record through the simulator and compares).
 *
 * The guards (TB_REDIST_GUARD_*, prediction mode only):
 *  - noise: the gain per iteration must exceed RB_Z standard errors of the
 *    slowest rank's measured time per iteration, and the pay-off test uses
 *    the gain less that margin.  The standard error is the smaller of two
 *    estimates: from the spread of the rank's per-call times in the window,
 *    and from the largest difference between its last three windows' means
 *    (at one level).  A
 *    neighbour's job that steals a core for one sweep raises the spread and
 *    is not followed; a load that stays lowers it, or keeps the windows'
 *    means alike even when it makes single sweeps erratic (time-slicing
 *    with a busy loop on the same core), and is.
 *  - change: a rank whose time per unit differs between the two halves of
 *    the window (by more than RB_Z standard errors and the threshold's
 *    margin) changed speed inside it: its speed restarts from the second
 *    half.  A rank whose two halves both differ that much, and the same way,
 *    from its smoothed history has a new level: its speed restarts from the
 *    window instead of averaging across the change (the stale speed that
 *    made real runs move twice after each change of load).
 */
#ifndef TB_REDIST_BALANCE_H
#define TB_REDIST_BALANCE_H

#include <stddef.h>
#include <stdint.h>

#include "tenbin/redist.h"

/* What one rank measured in the window since the last balancing point: the
 * compute seconds of each call interval (usually one iteration each). */
typedef struct tb__rb_window {
    double *t;        /* [n] compute seconds per call */
    uint64_t *iters;  /* [n] iterations per call */
    size_t n, cap;
} tb__rb_window;

/* Doubles per rank in the gathered measure (see tb__rb_window_pack). */
enum { TB__RB_PACK = 11 };

void tb__rb_window_free(tb__rb_window *w);
void tb__rb_window_clear(tb__rb_window *w);
/* One call interval: `seconds` of compute over `iters` iterations. */
int tb__rb_window_add(tb__rb_window *w, double seconds, uint64_t iters);
/* The window as TB__RB_PACK doubles: the iteration, then for each half of
 * the calls (the first floor(n/2), then the rest): seconds, iterations,
 * calls, and the sum and the sum of squares of each call's seconds per
 * iteration. */
void tb__rb_window_pack(const tb__rb_window *w, uint64_t iteration, double *out);

typedef struct tb__rb {
    int P;
    int mode;             /* TB_REDIST_PREDICT, _NO_PREDICT or _OFF */
    unsigned guards;      /* TB_REDIST_GUARD_* */
    double threshold, smoothing;
    uint64_t min_units;
    double unit_bytes;
    double *unit_time;    /* [P] smoothed seconds per unit and iteration; < 0: none yet */
    double *speeds;       /* [P] 1 / unit_time, as given to the decision */
    double *last_u;       /* [2P] the last two windows' own times per unit (< 0: none) */
    double *se_u;         /* [P] how well unit_time is known at this point (standard error) */
    uint64_t *next;       /* [P] the last plan */
    tb_redist_cost cost;  /* the probe's line (plus real moves, see tb__rb_moved) */
    uint64_t moves;       /* moves measured */
    double factor_sum;    /* sum over them of measured / predicted */
    /* what the last point saw */
    int changed;          /* ranks whose speed changed inside the window */
    int restarted;        /* ranks whose smoothing restarted at a new level */
    double gain_margin;   /* seconds per iteration the noise guard took off the gain */
} tb__rb;

int tb__rb_init(tb__rb *b, int P, const tb_redist_opts *cfg, uint64_t min_units,
                double unit_bytes);
void tb__rb_free(tb__rb *b);

/*
 * A balancing point at `iteration` of `total` (0: unknown, then as many are
 * assumed to remain as have run; *estimated is set).  meas[P * TB__RB_PACK]
 * are the ranks' packed windows, counts[P] the layout they were measured on.
 * Fills b->next and *d (d->move: apply b->next now).  A rank whose window
 * has no compute time gets the speed of the fastest one that has.
 * TB_ERR_STATE if the ranks' iterations differ (*bad_rank says which).
 */
int tb__rb_point(tb__rb *b, uint64_t iteration, uint64_t total, const uint64_t *counts,
                 const double *meas, tb_redist_decision *d, int *estimated, int *bad_rank);

/* A move predicted to take `predicted` seconds took `measured`: later
 * predictions are scaled by the mean ratio. */
void tb__rb_moved(tb__rb *b, double predicted, double measured);
/* The factor applied to the cost model (1 before any move). */
double tb__rb_factor(const tb__rb *b);

#endif /* TB_REDIST_BALANCE_H */
