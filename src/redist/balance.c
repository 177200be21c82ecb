/*
 * balance.c - S4's balancer at a balancing point: windows, smoothed speeds,
 * the noise and change guards, the decision, move-time feedback.  Shared by
 * redist.c (MPI) and sim.c (the simulator).  See balance.h.
 */
#include "balance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Standard errors a difference must exceed to count (noise and change
 * guards), and the smallest relative change of speed that counts at all
 * when the threshold is below 1 + RB_REL_MIN. */
#define RB_Z 3.0
#define RB_REL_MIN 0.02

void tb__rb_window_free(tb__rb_window *w)
{
    free(w->t);
    free(w->iters);
    memset(w, 0, sizeof *w);
}

void tb__rb_window_clear(tb__rb_window *w) { w->n = 0; }

int tb__rb_window_add(tb__rb_window *w, double seconds, uint64_t iters)
{
    if (iters == 0)
        return TB_OK;
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 16;
        double *t = realloc(w->t, cap * sizeof *t);
        if (!t)
            return TB_ERR_NOMEM;
        w->t = t;
        uint64_t *it = realloc(w->iters, cap * sizeof *it);
        if (!it)
            return TB_ERR_NOMEM;
        w->iters = it;
        w->cap = cap;
    }
    w->t[w->n] = seconds > 0 ? seconds : 0;
    w->iters[w->n] = iters;
    w->n++;
    return TB_OK;
}

void tb__rb_window_pack(const tb__rb_window *w, uint64_t iteration, double *out)
{
    memset(out, 0, TB__RB_PACK * sizeof *out);
    out[0] = (double)iteration;
    size_t half = w->n / 2;
    for (size_t k = 0; k < w->n; k++) {
        double *h = out + 1 + (k < half ? 0 : 5);
        double y = w->t[k] / (double)w->iters[k];
        h[0] += w->t[k];
        h[1] += (double)w->iters[k];
        h[2] += 1;
        h[3] += y;
        h[4] += y * y;
    }
}

int tb__rb_init(tb__rb *b, int P, const tb_redist_opts *cfg, uint64_t min_units,
                double unit_bytes)
{
    memset(b, 0, sizeof *b);
    if (P < 1 || !cfg)
        return TB_ERR_INVALID;
    b->P = P;
    b->mode = cfg->mode;
    b->guards = cfg->guards;
    b->threshold = cfg->threshold;
    b->smoothing = cfg->smoothing;
    b->min_units = min_units;
    b->unit_bytes = unit_bytes;
    b->unit_time = malloc((size_t)P * sizeof *b->unit_time);
    b->speeds = calloc((size_t)P, sizeof *b->speeds);
    b->next = calloc((size_t)P, sizeof *b->next);
    b->last_u = malloc(2 * (size_t)P * sizeof *b->last_u);
    b->se_u = calloc((size_t)P, sizeof *b->se_u);
    if (!b->unit_time || !b->speeds || !b->next || !b->last_u || !b->se_u) {
        tb__rb_free(b);
        return TB_ERR_NOMEM;
    }
    for (int i = 0; i < P; i++)
        b->unit_time[i] = b->last_u[2 * i] = b->last_u[2 * i + 1] = -1;
    return TB_OK;
}

void tb__rb_free(tb__rb *b)
{
    free(b->unit_time);
    free(b->last_u);
    free(b->se_u);
    free(b->speeds);
    free(b->next);
    memset(b, 0, sizeof *b);
}

/* A rank's window, in seconds per unit and iteration. */
typedef struct rb_stats {
    double u;      /* mean over the window (0: nothing measured) */
    double se;     /* standard error of u (0: fewer than 2 calls) */
    double u1, u2; /* the two halves' means (0: a half is empty) */
    double se12;   /* standard error of u2 - u1 (pooled within the halves) */
    double se_it;  /* standard error of the mean seconds per iteration */
} rb_stats;

static double var_of(double n, double sum, double sumsq)
{
    if (n < 2)
        return 0;
    double v = (sumsq - sum * sum / n) / (n - 1);
    return v > 0 ? v : 0;
}

static rb_stats stats_of(const double *m, uint64_t count)
{
    rb_stats s = {0, 0, 0, 0, 0, 0};
    const double *h1 = m + 1, *h2 = m + 6;
    double t = h1[0] + h2[0], it = h1[1] + h2[1], n = h1[2] + h2[2];
    double c = (double)(count ? count : 1);
    if (!(it > 0) || !(t > 0))
        return s;
    s.u = t / (it * c);
    double sum = h1[3] + h2[3], sumsq = h1[4] + h2[4];
    s.se_it = sqrt(var_of(n, sum, sumsq) / n);
    s.se = s.se_it / c;
    if (h1[1] > 0 && h2[1] > 0) {
        s.u1 = h1[0] / (h1[1] * c);
        s.u2 = h2[0] / (h2[1] * c);
        double ss1 = h1[2] >= 2 ? var_of(h1[2], h1[3], h1[4]) * (h1[2] - 1) : 0;
        double ss2 = h2[2] >= 2 ? var_of(h2[2], h2[3], h2[4]) * (h2[2] - 1) : 0;
        double dof = n - 2;
        double sp = dof > 0 ? sqrt((ss1 + ss2) / dof) : 0;
        s.se12 = sp * sqrt(1 / h1[2] + 1 / h2[2]) / c;
    }
    return s;
}

static int differs(double a, double b, double se, double rel)
{
    double d = fabs(a - b);
    double lo = a < b ? a : b;
    return d > RB_Z * se && d > rel * lo;
}

int tb__rb_point(tb__rb *b, uint64_t iteration, uint64_t total, const uint64_t *counts,
                 const double *meas, tb_redist_decision *d, int *estimated, int *bad_rank)
{
    if (!counts || !meas || !d || iteration < 1)
        return TB_ERR_INVALID;
    int P = b->P;
    double rel = b->threshold - 1 > RB_REL_MIN ? b->threshold - 1 : RB_REL_MIN;
    int guard = b->mode == TB_REDIST_PREDICT || b->mode == TB_REDIST_OFF;
    int g_noise = guard && (b->guards & TB_REDIST_GUARD_NOISE);
    int g_change = guard && (b->guards & TB_REDIST_GUARD_CHANGE);
    b->changed = b->restarted = 0;
    b->gain_margin = 0;
    double tmin = INFINITY;
    for (int i = 0; i < P; i++) {
        const double *m = meas + (size_t)i * TB__RB_PACK;
        if (m[0] != (double)iteration) {
            if (bad_rank)
                *bad_rank = i;
            return TB_ERR_STATE;
        }
        rb_stats s = stats_of(m, counts[i]);
        b->se_u[i] = s.se;
        if (s.u > 0) {
            double *ut = &b->unit_time[i];
            int level = 1; /* the same level as the last window */
            if (g_change && s.u1 > 0 && s.u2 > 0 && differs(s.u1, s.u2, s.se12, rel)) {
                *ut = s.u2; /* the speed since the change */
                b->changed++;
                level = 0;
            } else if (*ut < 0) {
                *ut = s.u;
            } else if (g_change && s.u1 > 0 && s.u2 > 0 && differs(s.u1, *ut, s.se12, rel) &&
                       differs(s.u2, *ut, s.se12, rel) && (s.u1 > *ut) == (s.u2 > *ut)) {
                *ut = s.u; /* a new level all through the window: do not average across it */
                b->restarted++;
                level = 0;
            } else {
                *ut = b->smoothing * s.u + (1 - b->smoothing) * *ut;
            }
            /* Three windows alike say more than one window's spread when
             * single calls are erratic but their mean is not (time-slicing). */
            double *lu = b->last_u + 2 * i;
            if (!level)
                lu[0] = lu[1] = -1;
            double between = fmax(fabs(s.u - lu[0]), fabs(lu[0] - lu[1])) / sqrt(2.0);
            if (lu[0] > 0 && lu[1] > 0 && between < b->se_u[i])
                b->se_u[i] = between;
            lu[1] = lu[0];
            lu[0] = s.u;
        }
        if (b->unit_time[i] > 0 && b->unit_time[i] < tmin)
            tmin = b->unit_time[i];
    }
    for (int i = 0; i < P; i++) {
        double t = b->unit_time[i];
        b->speeds[i] = t > 0 ? 1 / t : isfinite(tmin) ? 1 / tmin : 1;
    }
    if (estimated)
        *estimated = 0;
    if (total == 0) {
        total = 2 * iteration;
        if (estimated)
            *estimated = 1;
    }
    if (iteration > total)
        return TB_ERR_INVALID;
    int mode = b->mode == TB_REDIST_OFF ? TB_REDIST_PREDICT : b->mode;
    tb_redist_cost cost = b->cost;
    double k = tb__rb_factor(b);
    cost.a *= k;
    cost.b *= k;
    TB_CHECK(tb_redist_decide(P, counts, b->speeds, iteration, total, b->threshold, mode, &cost,
                              b->unit_bytes, b->min_units, b->next, d));
    if (d->move && g_noise) {
        /* The slowest rank's time per iteration sets t_now; se_u says how
         * well that time is known. */
        int j = 0;
        double worst = -1;
        for (int i = 0; i < P; i++) {
            double t = counts[i] ? (double)counts[i] / b->speeds[i] : 0;
            if (t > worst) {
                worst = t;
                j = i;
            }
        }
        b->gain_margin = RB_Z * (double)counts[j] * b->se_u[j];
        double gain = d->t_now - d->t_new - b->gain_margin;
        if (!(gain > 0)) {
            d->move = 0;
            d->why = "the gain is within the measurement noise";
        } else if (!((double)d->remaining * gain > d->t_move)) {
            d->move = 0;
            d->why = "the gain beyond the measurement noise does not pay for the move";
        }
    }
    if (b->mode == TB_REDIST_OFF && d->move) {
        d->move = 0;
        d->why = "balancing is off";
    }
    return TB_OK;
}

void tb__rb_moved(tb__rb *b, double predicted, double measured)
{
    if (predicted > 0 && measured >= 0 && isfinite(measured)) {
        b->moves++;
        b->factor_sum += measured / predicted;
    }
}

double tb__rb_factor(const tb__rb *b) { return b->moves ? b->factor_sum / (double)b->moves : 1.0; }
