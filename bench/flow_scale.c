/*
 * flow_scale.c - how HEFT and the workflow simulator scale (S2's target:
 * 1e5-1e6 tasks or hosts).
 *
 *   bench_flow_scale heft N M wide|narrow [RUNS]
 *       HEFT on a layered DAG of N tasks on M hosts (speeds 1-5, link speed
 *       100): wide = levels of N/100 tasks, narrow = levels of 10 tasks; each
 *       task has 1-3 parents in the level above, work 100-200, data 100-200.
 *       Prints the median CPU time of the schedule (reading and ranks
 *       included, building the DAG not).
 *   bench_flow_scale sim N LOADMEAN TRIGGER [RUNS]
 *       S2's random network of N tasks on S2's 32-host platform with load of
 *       mean 1/lambda = LOADMEAN: kernel events plus transfers per CPU
 *       second of the simulation, the scheduler's own time taken out.
 * One JSON line per run on stdout.  Uses only the public API.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenbin/core.h"
#include "tenbin/flow.h"
#include "tenbin/model.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static tb_flow *layered(size_t n, size_t width, uint64_t seed)
{
    tb_flow *f;
    if (tb_flow_create(&f, 0))
        return NULL;
    tb_rng r;
    tb_rng_seed(&r, seed);
    char id[32];
    for (size_t t = 0; t < n; t++) {
        snprintf(id, sizeof id, "t%zu", t);
        if (tb_flow_add_task(f, id, tb_rng_uniform(&r, 100, 200), NULL))
            goto fail;
    }
    for (size_t t = width; t < n; t++) {
        size_t level0 = (t / width - 1) * width, k = 1 + tb_rng_below(&r, 3);
        for (size_t i = 0; i < k; i++)
            if (tb_flow_add_edge(f, level0 + tb_rng_below(&r, width), t,
                                 tb_rng_uniform(&r, 100, 200)))
                goto fail;
    }
    if (tb_flow_finalize(f))
        goto fail;
    return f;
fail:
    fprintf(stderr, "bench_flow_scale: %s\n", tb_flow_error(f));
    tb_flow_destroy(&f);
    return NULL;
}

static int bench_heft(size_t n, size_t m, const char *shape, int runs)
{
    size_t width = strcmp(shape, "wide") == 0 ? (n / 100 ? n / 100 : 1) : 10;
    tb_flow *f = layered(n, width, 42);
    if (!f)
        return 1;
    char spec[96];
    snprintf(spec, sizeof spec, "hosts=%zu,speed=1-5,L=0,G=0.01", m);
    tb_platform *p = NULL;
    tb_flow_hosts H;
    tb_flow_schedule s;
    if (tb_platform_parse_spec(spec, 1, &p, NULL, 0) || tb_flow_hosts_init(&H, f, p) ||
        tb_flow_schedule_init(&s, n, m))
        return 1;
    const tb_flow_sched_ops *heft = tb_flow_sched_find("heft");
    double *cpu = malloc((size_t)runs * sizeof *cpu);
    for (int i = 0; i < runs; i++) {
        double c0 = tb_process_cputime(), w0 = tb_wtime();
        if (heft->schedule(f, &H, NULL, 0, &s))
            return 1;
        cpu[i] = tb_process_cputime() - c0;
        printf("{\"bench\": \"heft\", \"tasks\": %zu, \"hosts\": %zu, \"shape\": \"%s\", "
               "\"edges\": %zu, \"cpu_s\": %.4f, \"wall_s\": %.4f, \"makespan\": %.10g}\n",
               n, m, shape, tb_flow_nedges(f), cpu[i], tb_wtime() - w0, s.makespan);
        fflush(stdout);
    }
    qsort(cpu, (size_t)runs, sizeof *cpu, cmp_double);
    fprintf(stderr, "heft %zu tasks x %zu hosts (%s): median %.3f s CPU\n", n, m, shape,
            cpu[runs / 2]);
    free(cpu);
    tb_flow_schedule_free(&s);
    tb_flow_hosts_free(&H);
    tb_platform_destroy(&p);
    tb_flow_destroy(&f);
    return 0;
}

static int bench_sim(size_t n, double load, const char *trigger, int runs)
{
    tb_flow_gen_opts g;
    tb_flow_gen_opts_init(&g);
    g.tasks = n;
    tb_flow *f = NULL;
    tb_platform *p = NULL;
    if (tb_flow_generate(&g, 1, &f) || tb_flow_gen_platform(32, load, 1, &p))
        return 1;
    double *rate = malloc((size_t)runs * sizeof *rate);
    for (int i = 0; i < runs; i++) {
        tb_flow_sim_opts o;
        tb_flow_sim_opts_init(&o);
        o.trigger = trigger;
        tb_flow_sim_result res;
        char err[256];
        if (tb_flow_simulate(f, p, &o, &res, NULL, err, sizeof err)) {
            fprintf(stderr, "bench_flow_scale: %s\n", err);
            return 1;
        }
        double own = res.sim_cpu_s - res.sched_cpu_s;
        double actions = (double)res.events + (double)res.transfers;
        rate[i] = actions / own;
        printf("{\"bench\": \"sim\", \"tasks\": %zu, \"edges\": %zu, \"load\": %g, "
               "\"trigger\": \"%s\", \"events\": %llu, \"transfers\": %llu, "
               "\"reschedules\": %ld, \"cpu_s\": %.4f, \"sched_cpu_s\": %.4f, "
               "\"actions_per_s\": %.0f, \"events_per_s\": %.0f}\n",
               tb_flow_ntasks(f), tb_flow_nedges(f), load, trigger,
               (unsigned long long)res.events, (unsigned long long)res.transfers, res.reschedules,
               res.sim_cpu_s, res.sched_cpu_s, rate[i], (double)res.events / own);
        fflush(stdout);
    }
    qsort(rate, (size_t)runs, sizeof *rate, cmp_double);
    fprintf(stderr, "sim %zu tasks, 1/lambda %g, %s: median %.3g events+transfers/s (scheduler excluded)\n",
            tb_flow_ntasks(f), load, trigger, rate[runs / 2]);
    free(rate);
    tb_platform_destroy(&p);
    tb_flow_destroy(&f);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "heft") == 0)
        return bench_heft(strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10), argv[4],
                          argc > 5 ? atoi(argv[5]) : 3);
    if (argc >= 5 && strcmp(argv[1], "sim") == 0)
        return bench_sim(strtoul(argv[2], NULL, 10), atof(argv[3]), argv[4],
                         argc > 5 ? atoi(argv[5]) : 3);
    fprintf(stderr, "usage: bench_flow_scale heft N M wide|narrow [RUNS]\n"
                    "       bench_flow_scale sim N LOADMEAN TRIGGER [RUNS]\n");
    return 2;
}
