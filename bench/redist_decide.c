/*
 * redist_decide.c - what S4's balancing decision costs as ranks grow.
 *
 * For P = 64 .. 4194304 ranks (x4): the balancer's work at one balancing
 * point (tb__rb_point: the windows unpacked, the smoothed speeds, the
 * guards, the partition, the moves and their predicted time), timed on this
 * machine (median of 5, after one warm-up), and the allgather of the windows
 * before it under a network model (Bruck's algorithm: ceil(log2 P) rounds,
 * round k sends min(2^k, P - 2^k) windows of 88 bytes; L, o and G below).
 * Both are compared with one iteration of a weak-scaled Himeno: 16 planes of
 * 256 x 256 points per rank at speed 1 (6.8 ns per point and sweep, the
 * kernel measured on the reference machine: 7.0 ms).  Prints one line per P
 * and the largest P at which the decision, and decision plus allgather,
 * stay under 1 % of an iteration.
 *
 *   bench_redist_decide [MAX_P] [L_s] [o_s] [G_s_per_byte]
 * defaults: 4194304, 50e-6, 5e-6, 8e-9 (gigabit Ethernet).
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "redist/balance.h"
#include "tenbin/core.h"

enum { REPS = 5, UNITS_PER_RANK = 16 };

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long maxp = argc > 1 ? atol(argv[1]) : 4194304;
    double L = argc > 2 ? atof(argv[2]) : 50e-6, o = argc > 3 ? atof(argv[3]) : 5e-6;
    double G = argc > 4 ? atof(argv[4]) : 8e-9;
    double iter = UNITS_PER_RANK * 254.0 * 254.0 * 6.8e-9;
    printf("# one iteration: %.4g s; network L %.3g s, o %.3g s, G %.3g s/byte\n", iter, L, o, G);
    printf("%9s  %12s  %12s  %10s  %10s\n", "ranks", "decide_s", "allgather_s", "decide_%",
           "both_%");
    long best_d = 0, best_both = 0;
    for (long P = 64; P <= maxp; P *= 4) {
        tb_redist_opts cfg;
        tb_redist_opts_init(&cfg);
        tb__rb b;
        uint64_t *counts = malloc((size_t)P * sizeof *counts);
        double *meas = calloc((size_t)P * TB__RB_PACK, sizeof *meas);
        if (!counts || !meas || tb__rb_init(&b, (int)P, &cfg, 1, 14 * 256.0 * 256 * 4) != TB_OK) {
            fprintf(stderr, "bench_redist_decide: out of memory at P = %ld\n", P);
            return 1;
        }
        b.cost = (tb_redist_cost){L, G, 3, 0, 0, 0, 0};
        tb_rng g;
        tb_rng_seed(&g, 42);
        double t[REPS + 1];
        for (int rep = 0; rep <= REPS; rep++) {
            /* Every rank a window of 10 one-iteration calls at its own speed
             * in [0.5, 1.5), a little noise, at a new balancing point. */
            uint64_t it = (uint64_t)(rep + 1) * 10;
            for (long r = 0; r < P; r++) {
                counts[r] = UNITS_PER_RANK;
                double *m = meas + r * TB__RB_PACK;
                double s = tb_rng_uniform(&g, 0.5, 1.5);
                m[0] = (double)it;
                for (int h = 0; h < 2; h++) {
                    double y = iter / s * tb_rng_uniform(&g, 1, 1.01);
                    double *x = m + 1 + 5 * h;
                    x[0] = 5 * y, x[1] = 5, x[2] = 5, x[3] = 5 * y, x[4] = 5 * y * y;
                }
            }
            tb_redist_decision d;
            double t0 = tb_wtime();
            if (tb__rb_point(&b, it, 1000, counts, meas, &d, NULL, NULL) != TB_OK) {
                fprintf(stderr, "bench_redist_decide: the decision failed at P = %ld\n", P);
                return 1;
            }
            t[rep] = tb_wtime() - t0;
        }
        qsort(t + 1, REPS, sizeof *t, cmp); /* t[0] was the warm-up */
        double dec = t[1 + REPS / 2];
        double gather = 0;
        for (long d = 1; d < P; d *= 2) {
            long blocks = d < P - d ? d : P - d;
            gather += L + 2 * o + (double)blocks * TB__RB_PACK * 8.0 * G;
        }
        double pd = 100 * dec / iter, pb = 100 * (dec + gather) / iter;
        printf("%9ld  %12.4e  %12.4e  %10.3f  %10.3f\n", P, dec, gather, pd, pb);
        if (pd < 1)
            best_d = P;
        if (pb < 1)
            best_both = P;
        tb__rb_free(&b);
        free(counts);
        free(meas);
        fflush(stdout);
    }
    printf("# largest P with the decision under 1 %% of an iteration: %ld; with the allgather "
           "too: %ld\n", best_d, best_both);
    return 0;
}
