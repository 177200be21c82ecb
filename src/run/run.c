/*
 * run.c - the run layer: one run of a mechanism's actors, real or
 * simulated (run.h).
 */
#include "run/run.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errbuf.h"
#include "tenbin/core.h"

/* Under MPI the job cannot go on after a rank fails: one line, then abort.
 * The reason is what the mechanism put in err, else the code's message. */
static int abort_job(tb__run *run, int starting, int rc)
{
    char line[1024];
    const char *why = run->err && run->err[0] ? run->err : tb_strerror(rc);
    int sig = rc == TB_ERR_INTERRUPTED ? tb_signals_pending() : 0;
    if (sig)
        /* Stopped from outside: the exit status a shell gives a process
         * the signal ended, so a launcher or a batch script can tell. */
        snprintf(line, sizeof line, "rank %d: %s interrupted by %s: %s; ending the job",
                 run->rank, run->what, tb_signal_name(sig),
                 run->err && run->err[0] ? run->err : "nothing of it is kept");
    else if (starting)
        snprintf(line, sizeof line, "rank %d: cannot start %s: %s; aborting the job", run->rank,
                 run->what, why);
    else
        snprintf(line, sizeof line, "rank %d: %s failed: %s; aborting the job", run->rank,
                 run->what, why);
    tb__errf(run->err, run->errlen, rc, "%s", line);
    tb_log(TB_LOG_ERROR, "%s", line);
    MPI_Abort(run->comm, sig ? 128 + sig : 1);
    return rc;
}

static int make_actors(tb__run *run, const tb__run_ops *ops, void *ctx, int first)
{
    /* Each actor starts a cache line: a simulated worker's hot state is its
     * first lines (tb__mw_node), and thousands of ranks outgrow the L2. */
    size_t stride = (ops->actor_size + 63) & ~(size_t)63;
    size_t n = (size_t)run->nactors;
    if (n > SIZE_MAX / stride)
        return TB_ERR_NOMEM;
    run->mem = aligned_alloc(64, (n ? n : 1) * stride);
    run->actors = calloc(n, sizeof *run->actors);
    run->counts = calloc(n, sizeof *run->counts);
    if (!run->mem || !run->actors || !run->counts)
        return TB_ERR_NOMEM;
    memset(run->mem, 0, n * stride);
    for (int i = 0; i < run->nactors; i++) {
        tb_actor *a = (tb_actor *)(run->mem + (size_t)i * stride);
        run->actors[i] = a;
        run->made = i + 1;
        TB_CHECK(ops->init(ctx, a, first + i));
    }
    return TB_OK;
}

static int go_sim(tb__run *run, const tb__run_ops *ops, void *ctx)
{
    run->nactors = run->ranks;
    run->rank = 0;
    int rc = tb_sim_create(&run->sim, run->plat, run->ranks, run->cost, run->cost_ctx,
                           run->cost_cpu);
    if (rc == TB_OK)
        rc = make_actors(run, ops, ctx, 0);
    if (rc != TB_OK) {
        tb__errf(run->err, run->errlen, rc, "cannot set up the simulation of %d ranks: %s",
                 run->ranks, tb_strerror(rc));
        tb_log(TB_LOG_ERROR, "cannot set up the simulation of %d ranks: %s", run->ranks,
               tb_strerror(rc));
        return rc;
    }
    run->t0 = tb_wtime();
    run->started = 1;
    rc = tb_sim_run(run->sim, run->actors);
    run->wall_s = tb_wtime() - run->t0;
    run->end_s = tb_sim_end_time(run->sim);
    if (rc == TB_ERR_INTERRUPTED) {
        tb__errf(run->err, run->errlen, rc,
                 "the simulation of %s interrupted by %s at %.9g s of virtual time (%.3g s of "
                 "real time); nothing of it is kept",
                 run->what, tb_signal_name(tb_signals_pending()), run->end_s, run->wall_s);
        tb_log(TB_LOG_ERROR, "%s", run->err ? run->err : "simulation interrupted");
    }
    run->events = tb_sim_events(run->sim);
    for (int r = 0; r < run->ranks; r++) {
        tb__run_counts *c = &run->counts[r];
        tb_sim_rank_counts(run->sim, r, &c->msgs_sent, &c->msgs_recv, &c->bytes_sent,
                           &c->bytes_recv);
    }
    return rc;
}

static int go_mpi(tb__run *run, const tb__run_ops *ops, void *ctx)
{
    run->nactors = 1;
    MPI_Comm_rank(run->comm, &run->rank);
    int rc = tb_tp_mpi_create(&run->tp, run->comm);
    if (rc == TB_OK && run->task_timeout > 0)
        tb_tp_mpi_set_task_timeout(run->tp, run->task_timeout);
    if (rc == TB_OK && run->delay)
        rc = tb_tp_mpi_set_delay(run->tp, run->delay);
    if (rc == TB_OK && run->wait_sleep > 0)
        tb_tp_mpi_set_wait_sleep(run->tp, run->wait_sleep);
    if (rc == TB_OK && run->actor) {
        run->actors = &run->actor;
        run->counts = calloc(1, sizeof *run->counts);
        rc = run->counts ? TB_OK : TB_ERR_NOMEM;
    } else if (rc == TB_OK) {
        rc = make_actors(run, ops, ctx, run->rank);
    }
    if (rc != TB_OK)
        return abort_job(run, 1, rc);
    tb_actor *a = run->actors[0];
    MPI_Barrier(run->comm); /* a common time origin */
    run->t0 = tb_wtime();
    run->started = 1;
    if (ops && ops->started)
        ops->started(ctx, a, run->t0);
    rc = tb_tp_mpi_run(run->tp, a);
    run->wall_s = tb_wtime() - run->t0;
    run->end_s = run->wall_s;
    if (rc != TB_OK)
        return abort_job(run, 0, rc);
    tb__run_counts *c = &run->counts[0];
    tb_tp_mpi_counts(run->tp, &c->msgs_sent, &c->msgs_recv, &c->bytes_sent, &c->bytes_recv);
    return TB_OK;
}

int tb__run_go(tb__run *run, const tb__run_ops *ops, void *ctx)
{
    if (!run || (run->plat && run->actor) ||
        (!run->actor && (!ops || !ops->init || ops->actor_size < sizeof(tb_actor))))
        return TB_ERR_INVALID;
    return run->plat ? go_sim(run, ops, ctx) : go_mpi(run, ops, ctx);
}

int tb__run_write_trace(const tb__run *run, const tb_trace *(*trace_of)(void *ctx, tb_actor *a),
                        void *ctx, const char *path)
{
    if (!run->plat)
        return tb_trace_write_merged(trace_of(ctx, run->actors[0]), run->comm, 0, path);
    const tb_trace **trs = calloc((size_t)run->nactors, sizeof *trs);
    if (!trs)
        return TB_ERR_NOMEM;
    for (int i = 0; i < run->nactors; i++)
        trs[i] = trace_of(ctx, run->actors[i]);
    int rc = tb_trace_write_set(trs, (size_t)run->nactors, path);
    free(trs);
    return rc;
}

void tb__run_end(tb__run *run, const tb__run_ops *ops, void *ctx)
{
    for (int i = 0; i < run->made; i++)
        if (ops && ops->fini)
            ops->fini(ctx, run->actors[i]);
    free(run->mem);
    if (run->actors != &run->actor)
        free(run->actors);
    free(run->counts);
    run->mem = NULL;
    run->actors = NULL;
    run->counts = NULL;
    run->made = 0;
    tb_sim_destroy(&run->sim);
    tb_tp_mpi_destroy(&run->tp);
}
