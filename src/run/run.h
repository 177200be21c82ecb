/*
 * run.h - the run layer (src/run/; internal): one run of a mechanism's
 * actors, on MPI ranks or in the simulator, started and ended one way.
 *
 * A mechanism (mw, bnb) says how to make and free the actor of a rank; the
 * run layer makes the transport (the MPI transport over the mechanism's
 * private communicator, or the simulator over a platform), the actors (every
 * rank's in this process when simulated, this rank's under MPI), the time
 * origin (a barrier, then the real clock), runs them, and counts each
 * actor's messages.  Under MPI a failure to start or a protocol error ends
 * the whole job with one line from the rank that saw it (MPI cannot go on
 * after a rank fails: see docs/architecture.md), kept in the caller's error
 * buffer too.  What a mechanism does with the actors after the run (its
 * summary, its trace) is its own.
 *
 *     tb__run run = {.what = "the branch-and-bound run", .comm = b->comm, ...};
 *     int rc = tb__run_go(&run, &ops, b);    // make, start, run
 *     if (rc == TB_OK) ... read run.actors[0..run.nactors), run.counts ...
 *     tb__run_end(&run, &ops, b);            // free the actors and the transport
 *
 * Checking that every rank passes the same configuration is agree.h's.
 */
#ifndef TB_RUN_RUN_H
#define TB_RUN_RUN_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/sim.h"
#include "transport/transport.h"

/* How a mechanism makes its actors. */
typedef struct tb__run_ops {
    size_t actor_size; /* bytes of one actor; its tb_actor first */
    /* Make rank's actor in a (zeroed memory; the transport sets a->tp and
     * a->rank when the run starts). */
    int (*init)(void *ctx, tb_actor *a, int rank);
    /* Under MPI, just before the run: every rank passed the barrier at real
     * time t0 (tb_wtime), the run's origin.  NULL: nothing to do. */
    void (*started)(void *ctx, tb_actor *a, double t0);
    /* Free what init made (also after a failed init). */
    void (*fini)(void *ctx, tb_actor *a);
} tb__run_ops;

/* Messages and bytes one actor sent and received. */
typedef struct tb__run_counts {
    uint64_t msgs_sent, msgs_recv, bytes_sent, bytes_recv;
} tb__run_counts;

typedef struct tb__run {
    /* ---- set by the caller ---- */
    const char *what;         /* "the master-worker run": in the one line of a failure */
    MPI_Comm comm;            /* a real run (plat NULL): the mechanism's private communicator */
    const tb_platform *plat;  /* a simulated run of `ranks` ranks on it */
    int ranks;
    tb_sim_cost_fn cost;      /* simulated: the work of a computation */
    void *cost_ctx;
    int cost_cpu;             /* simulated: measure each computation's CPU time for cost */
    double task_timeout;      /* real: seconds a computation may run (0: no limit) */
    const double *delay;      /* real: seconds a message to rank r is held ([size]; NULL: none) */
    double wait_sleep;        /* real: > 0: idle ranks sleep (at most this long) whatever
                                 TENBIN_MPI_WAIT says (tb_tp_mpi_set_wait_sleep) */
    tb_actor *actor;          /* real: this rank's actor, made by the caller (ops->init and
                                 ops->fini are then not called; ops may have neither) */
    char *err;                /* where the failure's line goes too (may be NULL); a
                                 line already there is the failure's reason */
    size_t errlen;
    /* ---- set by tb__run_go ---- */
    tb_actor **actors;        /* this process's: every rank's simulated, its own under MPI */
    int nactors;
    int rank;                 /* this process's rank (0 when simulated) */
    double t0;                /* real time when the run started (after a barrier under MPI) */
    double wall_s;            /* real seconds of the run itself */
    double end_s;             /* simulated: virtual time of the last event; real: wall_s */
    uint64_t events;          /* simulated: events the kernel processed */
    tb__run_counts *counts;   /* [nactors] */
    int started;              /* every actor was made and the run began */
    /* ---- private ---- */
    tb_sim *sim;
    tb_tp *tp;
    unsigned char *mem;
    int made; /* actors whose init ran */
} tb__run;

/* Make the transport and the actors, start and run them.  TB_OK when the run
 * ended well; else its error (simulated: the first handler's error; under
 * MPI a failure has ended the job before this returns).  Call tb__run_end
 * in every case. */
int tb__run_go(tb__run *run, const tb__run_ops *ops, void *ctx);
/* Write the run's trace to path: the actors' traces, trace_of(ctx, actor)
 * for each of this process's actors (NULL: none).  Simulated: one file of
 * every rank's; under MPI: collective, merged on rank 0 (every rank returns
 * the same code).  The writer logs a failure with the path and reason. */
int tb__run_write_trace(const tb__run *run, const tb_trace *(*trace_of)(void *ctx, tb_actor *a),
                        void *ctx, const char *path);
/* Free the actors (ops->fini) and the transport. */
void tb__run_end(tb__run *run, const tb__run_ops *ops, void *ctx);

#endif /* TB_RUN_RUN_H */
