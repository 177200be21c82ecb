/*
 * chunk.c - the masters' chunk rules: fixed, gss, tss, fac, wf, awf, af,
 * auto (see chunk.h for the formulas and their sources).
 */
#include "mw/chunk.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tenbin/core.h"

static const char *const names[] = {"fixed", "gss", "tss", "fac", "wf", "awf", "af", "auto"};

int tb__chunk_parse(const char *name, int *kind, unsigned *fixed)
{
    if (!name || !*name)
        return -1;
    for (int k = 1; k < (int)(sizeof names / sizeof names[0]); k++)
        if (strcmp(name, names[k]) == 0) {
            *kind = k;
            *fixed = 1;
            return 0;
        }
    char *end;
    errno = 0;
    unsigned long v = strtoul(name, &end, 10);
    if (errno || *end || end == name || name[0] == '-' || v < 1 || v > UINT32_MAX)
        return -1;
    *kind = TB__CHUNK_FIXED;
    *fixed = (unsigned)v;
    return 0;
}

const char *tb__chunk_name(int kind)
{
    return kind >= 0 && kind < (int)(sizeof names / sizeof names[0]) ? names[kind] : "?";
}

int tb__chunk_timed(int kind)
{
    return kind == TB__CHUNK_WF || kind == TB__CHUNK_AWF || kind == TB__CHUNK_AF ||
           kind == TB__CHUNK_AUTO;
}

int tb__chunker_init(tb__chunker *c, int kind, unsigned fixed, int lo, int nranks)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->fixed = fixed ? fixed : 1;
    c->lo = lo;
    c->nranks = nranks;
    if (!tb__chunk_timed(kind))
        return TB_OK;
    size_t P = (size_t)nranks;
    c->w = calloc(P, sizeof *c->w);
    if (!c->w)
        return TB_ERR_NOMEM;
    return TB_OK;
}

void tb__chunker_free(tb__chunker *c)
{
    free(c->w);
    memset(c, 0, sizeof *c);
}

void tb__chunker_restart(tb__chunker *c)
{
    c->started = 0;
    c->batch_left = 0;
}

/* auto: an unmeasured worker's first chunk at most this many tasks (enough
 * to estimate its mean task time: within about 1/4 for exponential task
 * times; a single task's time, the probe, misleads by up to 10x there), and
 * no chunk above this many times the floor (the chunk whose message costs
 * 5 % of its compute, or that keeps the master half busy). */
#define TB__AUTO_FIRST 16
#define TB__AUTO_CAP 8.0

/* A count of tasks from a double: at least 1, NaN as 1, and no more than
 * 2^63 (a weight from denormal task times can be 1e300: a plain cast of it
 * is undefined; the caller caps the chunk at the tasks held anyway). */
static uint64_t tasks_of(double x)
{
    if (!(x >= 1))
        return 1;
    return x < 9.2e18 ? (uint64_t)x : (uint64_t)9.2e18;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Mean task time of worker i, or of the measured workers when it has none
 * (0 when nobody is measured). */
static double mu_of(const tb__chunker *c, int i, double mean_all)
{
    return c->w[i].n ? c->w[i].sum / (double)c->w[i].n : mean_all;
}

/* The measured workers' mean task time and mean variance. */
static void measured(const tb__chunker *c, double *mu, double *var, int *count)
{
    int k = c->agg_k;
    *mu = k ? c->agg_mu / k : 0;
    *var = k ? c->agg_var / k : 0;
    *count = k;
}

/* Worker w's weight among `workers`: P (1/mu_w) / sum 1/mu_j, the sum over
 * the workers that have returned a chunk, counting the others as average. */
static double weight_of(const tb__chunker *c, int w, int workers)
{
    double mu, var;
    int k;
    measured(c, &mu, &var, &k);
    if (k == 0 || !(mu > 0))
        return 1.0;
    /* The measured workers stand for the `workers` the master has now (some
     * measured ones may have left it for another master, some not be
     * measured yet). */
    double inv = c->agg_inv / k * workers;
    double mw = c->w[w].n ? c->w[w].mu_c : mu;
    if (!(mw > 0) || !(inv > 0))
        return 1.0;
    return (double)workers * (1 / mw) / inv;
}

uint64_t tb__chunk_next(tb__chunker *c, int worker, uint64_t remaining, int workers, double now)
{
    worker = worker >= c->lo ? worker - c->lo : -1; /* its index in the arrays */
    if (remaining == 0)
        return 0;
    uint64_t P = workers > 0 ? (uint64_t)workers : 1, chunk = 1;
    if (tb__chunk_timed(c->kind) && worker >= 0 && worker < c->nranks)
        c->w[worker].sent_at = now;
    switch (c->kind) {
    case TB__CHUNK_FIXED:
        chunk = c->fixed;
        break;
    case TB__CHUNK_GSS:
        chunk = ceil_div(remaining, P);
        break;
    case TB__CHUNK_TSS:
        if (!c->started) {
            double f = (double)ceil_div(remaining, 2 * P);
            double n = ceil(2.0 * (double)remaining / (f + 1));
            c->tss_next = f;
            c->tss_delta = n > 1 ? (f - 1) / (n - 1) : 0;
            c->started = 1;
        }
        chunk = (uint64_t)fmax(1, ceil(c->tss_next - 1e-9));
        c->tss_next -= c->tss_delta;
        break;
    case TB__CHUNK_FAC:
    case TB__CHUNK_WF:
    case TB__CHUNK_AWF:
    case TB__CHUNK_AF:
    case TB__CHUNK_AUTO: {
        if (c->batch_left <= 0) {
            c->batch_chunk = ceil_div(remaining, 2 * P);
            c->batch_left = (int)P;
        }
        c->batch_left--;
        chunk = c->batch_chunk;
        if (c->kind == TB__CHUNK_FAC)
            break;
        if (worker >= 0 && worker < c->nranks && c->w[worker].n == 0) {
            /* Not measured yet: a quarter of factoring's chunk, to learn its
             * speed before it holds a large share; under auto at most
             * TB__AUTO_FIRST tasks. */
            chunk = (chunk + 3) / 4;
            if (c->kind == TB__CHUNK_AUTO && chunk > TB__AUTO_FIRST)
                chunk = TB__AUTO_FIRST;
            break;
        }
        if (c->kind == TB__CHUNK_WF) {
            if (!c->weights_fixed) {
                int all = c->agg_k >= (int)P;
                double w = weight_of(c, worker, workers);
                if (all) {
                    for (int i = 0; i < c->nranks; i++)
                        c->w[i].weight = weight_of(c, i, workers);
                    c->weights_fixed = 1;
                }
                chunk = tasks_of(round(w * (double)chunk));
            } else {
                chunk = tasks_of(round(c->w[worker].weight * (double)chunk));
            }
            break;
        }
        double w = weight_of(c, worker, workers);
        uint64_t wf = tasks_of(round(w * (double)chunk));
        if (c->kind == TB__CHUNK_AWF) {
            chunk = wf;
            break;
        }
        double mu, var;
        int k;
        measured(c, &mu, &var, &k);
        if (k == 0)
            break;
        /* sums over the master's current workers, the measured ones
         * standing for all of them */
        double D = c->agg_D / k * workers, inv = c->agg_inv / k * workers;
        double mi = mu_of(c, worker, mu), R = (double)remaining;
        double af = 1;
        if (inv > 0 && mi > 0) {
            double T = 1 / inv;
            af = (D + 2 * T * R - sqrt(D * D + 4 * D * T * R)) / (2 * mi);
        }
        chunk = (uint64_t)fmax(1, fmin((double)wf, floor(af + 0.5)));
        if (c->kind == TB__CHUNK_AUTO && c->overhead_n && mi > 0) {
            /* never below the chunk whose message costs 5 % of its compute,
             * nor above the weighted factoring chunk */
            double floor_chunk = ceil(c->overhead / (0.05 * mi));
            if (c->handler_n) /* the master at most half busy */
                floor_chunk = fmax(floor_chunk, ceil(2.0 * (double)P * c->handler / mi));
            /* at least one task (messages that cost nothing, in simulation,
             * give a floor of 0: no cap of 0) */
            floor_chunk = fmax(floor_chunk, 1);
            /* nor above TB__AUTO_CAP times that floor: a larger chunk saves
             * under 1/TB__AUTO_CAP of the costs the floor bounds, and risks
             * its whole length on a host whose speed may drop */
            if ((double)chunk > TB__AUTO_CAP * floor_chunk)
                chunk = (uint64_t)(TB__AUTO_CAP * floor_chunk);
            if ((double)chunk < floor_chunk)
                chunk = (uint64_t)fmin(floor_chunk, (double)wf);
        }
        break;
    }
    default:
        break;
    }
    if (chunk < 1)
        chunk = 1;
    return chunk < remaining ? chunk : remaining;
}

void tb__chunk_handler(tb__chunker *c, double seconds)
{
    if (c->kind != TB__CHUNK_AUTO || !(seconds >= 0) || !isfinite(seconds))
        return;
    c->handler_n++;
    c->handler += (seconds - c->handler) / (double)(c->handler_n < 64 ? c->handler_n : 64);
}

void tb__chunk_observe(tb__chunker *c, int worker, uint64_t tasks, double seconds, double sumsq,
                       double now)
{
    worker = worker >= c->lo ? worker - c->lo : -1; /* its index in the arrays */
    if (!tb__chunk_timed(c->kind) || worker < 0 || worker >= c->nranks || tasks == 0 ||
        !(seconds >= 0))
        return;
    tb__chunk_worker *x = &c->w[worker];
    if (x->n) { /* take its old terms out of the sums */
        c->agg_k--;
        c->agg_mu -= x->mu_c;
        c->agg_var -= x->var_c;
        if (x->mu_c > 0) {
            c->agg_inv -= 1 / x->mu_c;
            c->agg_D -= x->var_c / x->mu_c;
        }
    }
    x->sum += seconds;
    x->sumsq += sumsq;
    x->n += tasks;
    double m = x->sum / (double)x->n;
    double v = x->n > 1 ? (x->sumsq - (double)x->n * m * m) / (double)(x->n - 1) : 0;
    x->mu_c = m;
    x->var_c = v > 0 ? v : 0;
    c->agg_k++;
    c->agg_mu += m;
    c->agg_var += x->var_c;
    if (m > 0) {
        c->agg_inv += 1 / m;
        c->agg_D += x->var_c / m;
    }
    double rt = now - x->sent_at;
    if (rt >= seconds && isfinite(rt)) { /* the message's own cost */
        c->overhead_n++;
        c->overhead += (rt - seconds - c->overhead) / (double)c->overhead_n;
    }
}
