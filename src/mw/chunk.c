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

int tb__chunker_init(tb__chunker *c, int kind, unsigned fixed, int nranks)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->fixed = fixed ? fixed : 1;
    c->nranks = nranks;
    if (!tb__chunk_timed(kind))
        return TB_OK;
    size_t P = (size_t)nranks;
    c->sum = calloc(P, sizeof *c->sum);
    c->sumsq = calloc(P, sizeof *c->sumsq);
    c->n = calloc(P, sizeof *c->n);
    c->weight = calloc(P, sizeof *c->weight);
    c->sent_at = calloc(P, sizeof *c->sent_at);
    if (!c->sum || !c->sumsq || !c->n || !c->weight || !c->sent_at) {
        tb__chunker_free(c);
        return TB_ERR_NOMEM;
    }
    return TB_OK;
}

void tb__chunker_free(tb__chunker *c)
{
    free(c->sum);
    free(c->sumsq);
    free(c->n);
    free(c->weight);
    free(c->sent_at);
    memset(c, 0, sizeof *c);
}

void tb__chunker_restart(tb__chunker *c)
{
    c->started = 0;
    c->batch_left = 0;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Mean task time of worker i, or of the measured workers when it has none
 * (0 when nobody is measured). */
static double mu_of(const tb__chunker *c, int i, double mean_all)
{
    return c->n[i] ? c->sum[i] / (double)c->n[i] : mean_all;
}

/* The measured workers' mean task time and mean variance. */
static void measured(const tb__chunker *c, double *mu, double *var, int *count)
{
    double s = 0, v = 0;
    int k = 0;
    for (int i = 0; i < c->nranks; i++) {
        if (!c->n[i])
            continue;
        double m = c->sum[i] / (double)c->n[i];
        double x = c->n[i] > 1 ? (c->sumsq[i] - (double)c->n[i] * m * m) / (double)(c->n[i] - 1)
                               : 0;
        s += m;
        v += x > 0 ? x : 0;
        k++;
    }
    *mu = k ? s / k : 0;
    *var = k ? v / k : 0;
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
    double inv = 0;
    for (int i = 0; i < c->nranks; i++)
        if (c->n[i] && c->sum[i] > 0)
            inv += (double)c->n[i] / c->sum[i];
    int rest = workers > k ? workers - k : 0;
    inv += rest / mu;
    double mw = mu_of(c, w, mu);
    if (!(mw > 0) || !(inv > 0))
        return 1.0;
    return (double)(k + rest) * (1 / mw) / inv;
}

uint64_t tb__chunk_next(tb__chunker *c, int worker, uint64_t remaining, int workers, double now)
{
    if (remaining == 0)
        return 0;
    uint64_t P = workers > 0 ? (uint64_t)workers : 1, chunk = 1;
    if (tb__chunk_timed(c->kind) && worker >= 0 && worker < c->nranks)
        c->sent_at[worker] = now;
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
        if (worker >= 0 && worker < c->nranks && c->n[worker] == 0) {
            /* Not measured yet: a quarter of factoring's chunk, to learn its
             * speed before it holds a large share. */
            chunk = (chunk + 3) / 4;
            break;
        }
        if (c->kind == TB__CHUNK_WF) {
            if (!c->weights_fixed) {
                int all = 1;
                for (int i = 0; i < c->nranks && i < (int)P; i++)
                    all &= c->n[i] > 0;
                double w = weight_of(c, worker, workers);
                if (all) {
                    for (int i = 0; i < c->nranks; i++)
                        c->weight[i] = weight_of(c, i, workers);
                    c->weights_fixed = 1;
                }
                chunk = (uint64_t)fmax(1, round(w * (double)chunk));
            } else {
                chunk = (uint64_t)fmax(1, round(c->weight[worker] * (double)chunk));
            }
            break;
        }
        double w = weight_of(c, worker, workers);
        uint64_t wf = (uint64_t)fmax(1, round(w * (double)chunk));
        if (c->kind == TB__CHUNK_AWF) {
            chunk = wf;
            break;
        }
        double mu, var;
        int k;
        measured(c, &mu, &var, &k);
        if (k == 0)
            break;
        double D = 0, inv = 0;
        for (int i = 0; i < c->nranks; i++) {
            if (!c->n[i])
                continue;
            double m = c->sum[i] / (double)c->n[i];
            double x = c->n[i] > 1 ? (c->sumsq[i] - (double)c->n[i] * m * m) /
                                         (double)(c->n[i] - 1)
                                   : var;
            if (m > 0) {
                D += (x > 0 ? x : 0) / m;
                inv += 1 / m;
            }
        }
        int rest = workers > k ? workers - k : 0;
        if (mu > 0) {
            D += rest * var / mu;
            inv += rest / mu;
        }
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

void tb__chunk_observe(tb__chunker *c, int worker, uint64_t tasks, double seconds, double sumsq,
                       double now)
{
    if (!tb__chunk_timed(c->kind) || worker < 0 || worker >= c->nranks || tasks == 0 ||
        !(seconds >= 0))
        return;
    c->sum[worker] += seconds;
    c->sumsq[worker] += sumsq;
    c->n[worker] += tasks;
    double rt = now - c->sent_at[worker];
    if (rt >= seconds && isfinite(rt)) { /* the message's own cost */
        c->overhead_n++;
        c->overhead += (rt - seconds - c->overhead) / (double)c->overhead_n;
    }
}
