/*
 * sim_events.c - events per second of the discrete-event kernel, by the
 * classic hold model: keep `pending` events queued; pop the earliest and push
 * one at its time plus an exponential increment, `ops` times.  Prints one
 * JSON line.  (The goal of issue #3: at least 2 million simple events/s.)
 */
#include "tenbin/core.h"

#include <stdio.h>
#include <stdlib.h>

#include "sim/sim.h"

int main(int argc, char **argv)
{
    long pending = argc > 1 ? atol(argv[1]) : 1000;
    long ops = argc > 2 ? atol(argv[2]) : 10000000;
    if (pending < 1 || ops < 1) {
        fprintf(stderr, "usage: sim_events [PENDING [OPS]]\n");
        return 2;
    }
    tb_sim_queue q;
    tb_sim_queue_init(&q);
    tb_rng r;
    tb_rng_seed(&r, 1);
    for (long i = 0; i < pending; i++)
        if (tb_sim_queue_push(&q, tb_rng_exp(&r, 1.0), 0, (int)(i % 1024), 0) != TB_OK)
            return 1;
    double cpu0 = tb_process_cputime(), t0 = tb_wtime();
    tb_sim_event e;
    double sum = 0;
    for (long i = 0; i < ops; i++) {
        tb_sim_queue_pop(&q, &e);
        sum += e.t;
        tb_sim_queue_push(&q, e.t + tb_rng_exp(&r, 1.0), 0, e.rank, 0);
    }
    double cpu = tb_process_cputime() - cpu0, wall = tb_wtime() - t0;
    printf("{\"bench\": \"sim_events\", \"pending\": %ld, \"ops\": %ld, \"events_per_cpu_s\": %.0f, "
           "\"events_per_s\": %.0f, \"check\": %.6g}\n",
           pending, ops, (double)ops / cpu, (double)ops / wall, sum / (double)ops);
    tb_sim_queue_free(&q);
    return 0;
}
