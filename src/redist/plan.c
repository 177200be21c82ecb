/*
 * plan.c - S4's planning: partition by speed, the transfer cost model, the
 * moves between two block layouts, and the pay-off decision.  No MPI.
 */
#include "tenbin/redist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A heap of ranks for the partition's greedy loops.  Giving (take 0): the
 * top is the rank whose time grows least with one more unit, (c + 1) / s,
 * the lowest rank on a tie.  Taking (take 1): the rank whose time c / s is
 * largest, the highest rank on a tie. */
typedef struct part_heap {
    int *idx;
    size_t len;
    double *key; /* [rank] its time (take) or its time with one more unit */
    int take;
} part_heap;

/* 1 if rank a goes above rank b. */
static int heap_before(const part_heap *h, int a, int b)
{
    double ka = h->key[a], kb = h->key[b];
    if (h->take)
        return ka > kb || (ka == kb && a > b);
    return ka < kb || (ka == kb && a < b);
}

static double heap_key(const uint64_t *c, const double *s, int i, int take)
{
    return take ? (double)c[i] / s[i] : (double)(c[i] + 1) / s[i];
}

static void heap_down(part_heap *h, size_t k)
{
    for (;;) {
        size_t l = 2 * k + 1, r = l + 1, top = k;
        if (l < h->len && heap_before(h, h->idx[l], h->idx[top]))
            top = l;
        if (r < h->len && heap_before(h, h->idx[r], h->idx[top]))
            top = r;
        if (top == k)
            return;
        int t = h->idx[k];
        h->idx[k] = h->idx[top];
        h->idx[top] = t;
        k = top;
    }
}

/*
 * Minimise max_i c_i / s_i subject to sum c_i = n and c_i >= min.
 *
 * Start from c_i = max(min, floor(T0 s_i)) with T0 = (n - P min) / sum s:
 * its sum is at most n, and it is below an optimal solution elementwise
 * (an optimum has the form max(min, floor(T* s_i)) up to ties, and either
 * T* >= T0 or both sums are n).  Then hand out the rest one unit at a time
 * to the block whose time grows least, (c_i + 1) / s_i, lowest rank on a
 * tie: the classic greedy for this min-max problem, optimal from any start
 * below an optimum.  At most about P units are left; a heap picks each one,
 * so this is O(P log P).
 */
/* c_i = max(min, floor(t s_i)) (at most rest); returns their sum. */
static uint64_t floors_at(double t, uint64_t n, int nparts, const double *speeds, uint64_t rest,
                          uint64_t min_units, uint64_t *counts)
{
    (void)n;
    uint64_t given = 0;
    for (int i = 0; i < nparts; i++) {
        double f = floor(t * speeds[i]);
        uint64_t c = f > (double)rest ? rest : (uint64_t)f;
        counts[i] = c > min_units ? c : min_units;
        given += counts[i];
    }
    return given;
}

int tb_redist_partition(uint64_t n, int nparts, const double *speeds, uint64_t min_units,
                        uint64_t *counts)
{
    if (nparts < 1 || !speeds || !counts)
        return TB_ERR_INVALID;
    double sum = 0;
    for (int i = 0; i < nparts; i++) {
        if (!(speeds[i] >= 0) || !isfinite(speeds[i]))
            return TB_ERR_INVALID;
        sum += speeds[i];
    }
    if (!(sum > 0))
        return TB_ERR_INVALID;
    if (min_units > 0 && n / min_units < (uint64_t)nparts)
        return TB_ERR_RANGE;
    uint64_t rest = n - (uint64_t)nparts * min_units;
    double t0 = (double)rest / sum;
    uint64_t given = floors_at(t0, n, nparts, speeds, rest, min_units, counts);
    /* The floors lose about half a unit per block, and every lost unit is a
     * heap step below: start higher, from the time that makes up the loss,
     * if that start is still below n (it is below an optimum then too). */
    if (given < n && nparts > 64) {
        uint64_t *c1 = malloc((size_t)nparts * sizeof *c1);
        double lo = t0, t = t0 + (double)(n - given) / sum;
        for (int step = 0; c1 && step < 8 && given < n; step++) {
            uint64_t g1 = floors_at(t, n, nparts, speeds, rest, min_units, c1);
            if (g1 <= n) {
                if (g1 > given) {
                    memcpy(counts, c1, (size_t)nparts * sizeof *c1);
                    given = g1;
                }
                lo = t;
                t += (double)(n - g1) / sum;
            } else {
                t = lo + (t - lo) / 2;
            }
        }
        free(c1);
    }
    /* Rounding of t0 * s_i can overshoot by a unit or two: take back from
     * the blocks whose time is largest (highest rank on a tie); then hand
     * out the rest.  Both greedy loops pick from a binary heap, so a
     * partition costs O(P log P), not O(P^2) (1024 ranks: 1.5 ms -> 0.1 ms). */
    if (given == n)
        return TB_OK;
    int *heap = malloc((size_t)nparts * sizeof *heap);
    double *key = malloc((size_t)nparts * sizeof *key);
    if (!heap || !key) {
        free(heap);
        free(key);
        return TB_ERR_NOMEM;
    }
    int take = given > n;
    size_t len = 0;
    for (int i = 0; i < nparts; i++)
        if (speeds[i] > 0 && (!take || counts[i] > min_units)) {
            heap[len++] = i;
            key[i] = heap_key(counts, speeds, i, take);
        }
    part_heap h = {heap, len, key, take};
    for (size_t k = len / 2; k-- > 0;)
        heap_down(&h, k);
    while (given != n) {
        if (h.len == 0) {
            free(heap);
            free(key);
            return TB_ERR_RANGE; /* cannot happen: the floors are below n */
        }
        int i = h.idx[0];
        if (take) {
            counts[i]--;
            given--;
            key[i] = heap_key(counts, speeds, i, take);
            if (counts[i] <= min_units) {
                h.idx[0] = h.idx[--h.len];
                heap_down(&h, 0);
                continue;
            }
        } else {
            counts[i]++;
            given++;
        }
        key[i] = heap_key(counts, speeds, i, take);
        heap_down(&h, 0);
    }
    free(heap);
    free(key);
    return TB_OK;
}

int tb_redist_imbalance(const double *times, int nparts, double *max_over_avg,
                        double *avg_over_max)
{
    if (!times || nparts < 1 || !max_over_avg || !avg_over_max)
        return TB_ERR_INVALID;
    double mx = 0, sum = 0;
    for (int i = 0; i < nparts; i++) {
        if (!(times[i] >= 0) || !isfinite(times[i]))
            return TB_ERR_INVALID;
        sum += times[i];
        mx = times[i] > mx ? times[i] : mx;
    }
    if (mx == 0) {
        *max_over_avg = *avg_over_max = 1.0;
        return TB_OK;
    }
    double avg = sum / nparts;
    *max_over_avg = mx / avg;
    *avg_over_max = avg / mx;
    return TB_OK;
}

/* Refit a and b from the running sums, clamping both at 0. */
static int cost_refit(tb_redist_cost *m)
{
    double n = (double)m->n;
    double var = m->sxx - m->sx * m->sx / n;
    if (m->n < 2 || !(var > 0))
        return TB_ERR_INVALID;
    double b = (m->sxy - m->sx * m->sy / n) / var;
    double a = (m->sy - b * m->sx) / n;
    if (b < 0) { /* time does not grow with size: a constant */
        b = 0;
        a = m->sy / n;
    } else if (a < 0) { /* through the origin */
        a = 0;
        b = m->sxy / m->sxx;
    }
    m->a = a;
    m->b = b;
    return TB_OK;
}

int tb_redist_cost_fit(tb_redist_cost *m, const double *bytes, const double *secs, size_t n)
{
    if (!m || !bytes || !secs || n < 2)
        return TB_ERR_INVALID;
    tb_redist_cost f;
    memset(&f, 0, sizeof f);
    for (size_t i = 0; i < n; i++) {
        if (!(bytes[i] >= 0) || !(secs[i] >= 0) || !isfinite(bytes[i]) || !isfinite(secs[i]))
            return TB_ERR_INVALID;
        f.n++;
        f.sx += bytes[i];
        f.sy += secs[i];
        f.sxx += bytes[i] * bytes[i];
        f.sxy += bytes[i] * secs[i];
    }
    TB_CHECK(cost_refit(&f));
    *m = f;
    return TB_OK;
}

int tb_redist_cost_add(tb_redist_cost *m, double bytes, double secs)
{
    if (!m || !(bytes >= 0) || !(secs >= 0) || !isfinite(bytes) || !isfinite(secs))
        return TB_ERR_INVALID;
    tb_redist_cost f = *m;
    f.n++;
    f.sx += bytes;
    f.sy += secs;
    f.sxx += bytes * bytes;
    f.sxy += bytes * secs;
    if (cost_refit(&f) != TB_OK) {
        /* One size only so far: keep the old coefficients, count the sample. */
        f.a = m->a;
        f.b = m->b;
    }
    *m = f;
    return TB_OK;
}

double tb_redist_cost_predict(const tb_redist_cost *m, double bytes)
{
    return m ? m->a + m->b * bytes : 0.0;
}

int tb_redist_moves(int nparts, const uint64_t *cur, const uint64_t *next, tb_redist_move *out,
                    size_t cap, size_t *nmoves)
{
    if (nparts < 1 || !cur || !next || !nmoves || (cap > 0 && !out))
        return TB_ERR_INVALID;
    uint64_t tc = 0, tn = 0;
    for (int i = 0; i < nparts; i++) {
        tc += cur[i];
        tn += next[i];
    }
    if (tc != tn)
        return TB_ERR_INVALID;
    /* Walk both layouts together: each step is a run of units with one old
     * owner and one new owner. */
    size_t k = 0;
    int a = 0, b = 0;
    uint64_t pos = 0, end_a = cur[0], end_b = next[0];
    while (pos < tc) {
        while (pos >= end_a)
            end_a += cur[++a];
        while (pos >= end_b)
            end_b += next[++b];
        uint64_t end = end_a < end_b ? end_a : end_b;
        if (a != b) {
            if (k < cap)
                out[k] = (tb_redist_move){a, b, pos, end - pos};
            k++;
        }
        pos = end;
    }
    *nmoves = k;
    return TB_OK;
}

double tb_redist_move_time(const tb_redist_cost *m, const tb_redist_move *moves, size_t nmoves,
                           int nparts, double unit_bytes)
{
    if (!m || nparts < 1 || (nmoves > 0 && !moves))
        return 0.0;
    double *t = calloc((size_t)nparts, sizeof *t);
    if (!t)
        return INFINITY;
    double worst = 0;
    for (size_t i = 0; i < nmoves; i++) {
        double c = tb_redist_cost_predict(m, (double)moves[i].count * unit_bytes);
        if (moves[i].from >= 0 && moves[i].from < nparts)
            t[moves[i].from] += c;
        if (moves[i].to >= 0 && moves[i].to < nparts)
            t[moves[i].to] += c;
    }
    for (int r = 0; r < nparts; r++)
        worst = t[r] > worst ? t[r] : worst;
    free(t);
    return worst;
}

/* Time of a block: count / speed; on a rank of speed 0 it takes forever
 * unless it is empty. */
static double block_time(uint64_t count, double speed)
{
    return count == 0 ? 0.0 : speed > 0 ? (double)count / speed : INFINITY;
}

/* Largest block time of a layout, and (if sum) the sum of them. */
static double layout_time(int nparts, const uint64_t *counts, const double *speeds, double *sum)
{
    double worst = 0, total = 0;
    for (int i = 0; i < nparts; i++) {
        double t = block_time(counts[i], speeds[i]);
        worst = t > worst ? t : worst;
        total += t;
    }
    if (sum)
        *sum = total;
    return worst;
}

int tb_redist_decide(int nparts, const uint64_t *cur, const double *speeds, uint64_t iteration,
                     uint64_t total_iterations, double threshold, int mode,
                     const tb_redist_cost *cost, double unit_bytes, uint64_t min_units,
                     uint64_t *next, tb_redist_decision *d)
{
    if (nparts < 1 || !cur || !speeds || !cost || !next || !d || !(threshold >= 1) ||
        !(unit_bytes >= 0) || (mode != TB_REDIST_PREDICT && mode != TB_REDIST_NO_PREDICT) ||
        iteration < 1 || iteration > total_iterations)
        return TB_ERR_INVALID;
    memset(d, 0, sizeof *d);
    uint64_t n = 0;
    for (int i = 0; i < nparts; i++)
        n += cur[i];
    TB_CHECK(tb_redist_partition(n, nparts, speeds, min_units, next));
    double sum;
    double mx = layout_time(nparts, cur, speeds, &sum);
    d->imbalance = mx > 0 ? (isfinite(mx) ? mx / (sum / nparts) : INFINITY) : 1.0;
    d->t_now = mx;
    d->t_new = layout_time(nparts, next, speeds, NULL);
    d->remaining = total_iterations - iteration;
    size_t nm = 0;
    TB_CHECK(tb_redist_moves(nparts, cur, next, NULL, 0, &nm));
    tb_redist_move *mv = nm ? malloc(nm * sizeof *mv) : NULL;
    if (nm && !mv)
        return TB_ERR_NOMEM;
    TB_CHECK(tb_redist_moves(nparts, cur, next, mv, nm, &nm));
    for (size_t i = 0; i < nm; i++)
        d->units_moved += mv[i].count;
    d->t_move = tb_redist_move_time(cost, mv, nm, nparts, unit_bytes);
    free(mv);
    if (d->units_moved == 0)
        d->why = "the plan is the current layout";
    else if (d->remaining == 0)
        d->why = "no iteration remains";
    else if (d->imbalance <= threshold)
        d->why = "imbalance at or below the threshold";
    else if (mode == TB_REDIST_NO_PREDICT)
        d->move = 1, d->why = "imbalance above the threshold (no prediction)";
    else if ((double)d->remaining * (d->t_now - d->t_new) > d->t_move)
        d->move = 1, d->why = "the gain over the remaining iterations exceeds the move's cost";
    else
        d->why = "the gain over the remaining iterations does not exceed the move's cost";
    return TB_OK;
}
