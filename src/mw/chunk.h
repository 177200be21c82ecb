/*
 * chunk.h - how many tasks a master hands a worker at once (internal).
 *
 * The loop self-scheduling rules, as a master's chunk rule (R: tasks the
 * master still holds, P: its workers, N and P0: the tasks and workers when
 * its share arrived):
 *   fixed N  min(N, R)
 *   gss      ceil(R / P)                          (guided, Polychronopoulos & Kuck)
 *   tss      f - k*d: f = ceil(N0 / 2P0), n = ceil(2 N0 / (f + 1)) chunks,
 *            d = (f - 1) / (n - 1), rounded up      (trapezoid, Tzen & Ni)
 *   fac      batches of P chunks of ceil(R_b / 2P), R_b the tasks at the
 *            batch's start                        (factoring FAC2, Hummel et al.)
 *   wf       fac's chunk times the worker's weight w_i = P (1/mu_i) / sum 1/mu_j,
 *            the weights fixed once every worker has a measured chunk
 *                                                 (weighted factoring)
 *   awf      the same, weights from every chunk so far
 *                                                 (adaptive weighted factoring, AWF-C)
 *   af       (D + 2TR - sqrt(D^2 + 4DTR)) / 2mu_i, D = sum sigma_j^2/mu_j,
 *            T = 1 / sum 1/mu_j, at most wf's chunk (adaptive factoring,
 *            Banicescu & Liu; mu, sigma^2: the mean and variance of a task's
 *            time on each worker, measured by the workers)
 *   auto     af, but never below the chunk that keeps the measured cost of
 *            a message (round trip less the chunk's compute) under 5 % of
 *            the chunk's compute, nor below the chunk that keeps the master
 *            busy at most half the time (2 P h / mu, h its measured time per
 *            result), nor above wf's chunk, nor above 8 times the larger
 *            of those two floors (a larger chunk would save under 1/8 of
 *            what they bound and risks its whole length on a host whose
 *            speed drops).  No parameter.
 * Under wf, awf, af and auto a worker's first chunk is a quarter of fac's,
 * to measure it before it holds a large share (under auto at most 16
 * tasks); workers not measured yet count as the mean of those that are
 * (weight 1).
 * Deterministic: the same observations give the same chunks.
 */
#ifndef TB_MW_CHUNK_H
#define TB_MW_CHUNK_H

#include <stddef.h>
#include <stdint.h>

enum {
    TB__CHUNK_FIXED = 0,
    TB__CHUNK_GSS,
    TB__CHUNK_TSS,
    TB__CHUNK_FAC,
    TB__CHUNK_WF,
    TB__CHUNK_AWF,
    TB__CHUNK_AF,
    TB__CHUNK_AUTO
};

/* The rule named `name` ("gss", ..., "auto", or a number for fixed):
 * kind and fixed size; -1 if the name is unknown. */
int tb__chunk_parse(const char *name, int *kind, unsigned *fixed);
/* Its name ("fixed" for fixed). */
const char *tb__chunk_name(int kind);
/* Whether it needs the workers' timings. */
int tb__chunk_timed(int kind);

typedef struct tb__chunk_worker {
    double sum, sumsq;    /* seconds and squared seconds of its measured tasks */
    uint64_t n;           /* its measured tasks */
    double weight;        /* wf's fixed weight */
    double sent_at;       /* when its current chunk left */
    double mu_c, var_c;   /* its mean task time and task-time variance, as last summed */
} tb__chunk_worker;       /* 56 bytes */

typedef struct tb__chunker {
    int kind;
    unsigned fixed;
    int lo, nranks;       /* the per-worker arrays are of ranks lo .. lo + nranks - 1 */
    int started;          /* a share has been seen (tss, fac batches) */
    double tss_next, tss_delta;
    uint64_t batch_chunk; /* fac, wf, awf: the batch's chunk */
    int batch_left;       /* chunks left in the batch */
    int weights_fixed;    /* wf: the weights are set */
    /* per worker [nranks], rank r at r - lo: one cache line a worker, since a
     * result touches all of it (at a million simulated ranks seven arrays
     * were seven cache misses) */
    tb__chunk_worker *w;
    /* sums over the measured workers, kept up to date in O(1) per chunk */
    int agg_k;            /* workers with a measured task */
    double agg_mu, agg_var, agg_inv, agg_D; /* sum of mu, var, 1/mu, var/mu */
    double overhead;      /* auto: the mean cost of a chunk's message, seconds */
    uint64_t overhead_n;
    double handler;       /* auto: the master's mean time to handle a result, seconds */
    uint64_t handler_n;
} tb__chunker;

/* For a master whose workers are among ranks lo .. lo + nranks - 1 (others
 * are never measured). */
int tb__chunker_init(tb__chunker *c, int kind, unsigned fixed, int lo, int nranks);
void tb__chunker_free(tb__chunker *c);
/* New tasks arrived (a share, or tasks given by another master): the next
 * chunk starts a new trapezoid or batch from `tasks` and `workers`. */
void tb__chunker_restart(tb__chunker *c);
/* The next chunk for `worker` with `remaining` tasks held and `workers`
 * workers (>= 1); between 1 and remaining (remaining >= 1). */
uint64_t tb__chunk_next(tb__chunker *c, int worker, uint64_t remaining, int workers, double now);
/* The same, inline for a fixed chunk (the dispatch path of chunk 1). */
static inline uint64_t tb__chunk_next_fast(tb__chunker *c, int worker, uint64_t remaining,
                                           int workers, double now)
{
    if (c->kind == TB__CHUNK_FIXED && remaining > 0) {
        uint64_t chunk = c->fixed > 0 ? c->fixed : 1;
        return chunk < remaining ? chunk : remaining;
    }
    return tb__chunk_next(c, worker, remaining, workers, now);
}
/* auto: the master took `seconds` to handle a result (and hand out the
 * next chunk). */
void tb__chunk_handler(tb__chunker *c, double seconds);
/* Worker `worker` returned a chunk of `tasks` tasks that took `seconds` of
 * compute (and `sumsq`, the sum of the squared task times), at `now`. */
void tb__chunk_observe(tb__chunker *c, int worker, uint64_t tasks, double seconds, double sumsq,
                       double now);

#endif /* TB_MW_CHUNK_H */
