/*
 * transport.h - the interface every policy acts through (internal).
 *
 * Policies (masters, workers, later supervisors and balancers) are written as
 * event-driven state machines: an *actor* has handlers for "started",
 * "message arrived", "computation finished" and "timer fired", and acts only
 * through the transport below: send, count arrivals, now, set a timer,
 * compute.  Two transports implement it:
 *
 *   - mpi (transport_mpi.c): one actor per process, real messages, wall time;
 *   - sim (src/sim): many actors in one process, a discrete-event kernel and
 *     modelled costs, virtual time.
 *
 * A policy never calls MPI, never reads a clock and never sleeps; that is what
 * lets the same code run on a real cluster and on a simulated one.
 *
 * Ownership: a message handed to send() is taken by the transport (the tb_buf
 * comes back empty, possibly with recycled capacity); the bytes passed to the
 * message handler are valid only during the call.
 *
 * The contract both transports obey (tests/transport/conformance.h checks it
 * against each):
 *  - Handlers of one actor never run concurrently; each runs to its end.
 *    start runs once, first.
 *  - Messages: each is delivered once, with its tag and bytes.  Between one
 *    sender and one receiver they arrive in the order sent; across senders
 *    there is no order.  Tags 0..32766 are the policy's (32767 and up:
 *    TB_ERR_RANGE).
 *  - now(): seconds since the run started, never decreasing for an actor
 *    (wall time, or virtual time when simulated).
 *  - Timers: timer(at, id) fires the actor's timer handler once, at a time
 *    >= at (now() in the handler is >= at); timers due together fire in the
 *    order of their `at`, then in the order they were set.  cancel(id)
 *    removes every pending timer of the actor with that id (none: nothing
 *    happens).  A timer set in the past fires as soon as the actor is free.
 *  - Finishing: an actor sets `finished` when it expects no more messages;
 *    its pending timers are then cancelled (never fired, not an error).  A
 *    message that reaches a finished actor is the policy's error: the
 *    simulator reports it at the end, the MPI transport leaves it unread.
 *  - Computing: one computation at a time per actor (TB_ERR_STATE
 *    otherwise); `computed` fires after it, and meanwhile the actor handles
 *    no message or timer.
 *  - Errors: a handler's error ends the run (MPI: the whole job, with one
 *    line).
 */
#ifndef TB_TRANSPORT_H
#define TB_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "tenbin/core.h"

typedef struct tb_tp tb_tp;
typedef struct tb_actor tb_actor;

/* Handlers of an actor.  Each returns TB_OK or an error; an error stops the
 * run (the MPI transport aborts the communicator with a message, because the
 * other ranks cannot know). */
typedef struct tb_actor_ops {
    size_t size; /* sizeof(tb_actor_ops), so the table can grow */
    int (*start)(tb_actor *a);
    int (*message)(tb_actor *a, int src, int tag, const void *data, size_t len);
    int (*computed)(tb_actor *a, uint64_t job, int status);
    int (*timer)(tb_actor *a, uint64_t id);
    /* The process was signalled to stop (tb_signals_catch in tenbin/core.h):
     * called once, on rank 0 only, under MPI (rank 0 ends the run for every
     * rank; the other ranks' transports do not look).  NULL, or a table
     * too small to have it: the run ends with TB_ERR_INTERRUPTED, as it
     * does in the simulator, where every rank is this one process. */
    int (*interrupt)(tb_actor *a, int sig);
} tb_actor_ops;

/* The actor's interrupt handler, or NULL. */
static inline int (*tb_actor_interrupt_of(const tb_actor_ops *ops))(tb_actor *, int)
{
    return ops->size >= offsetof(tb_actor_ops, interrupt) + sizeof ops->interrupt
               ? ops->interrupt
               : NULL;
}

struct tb_actor {
    const tb_actor_ops *ops;
    tb_tp *tp;
    int rank;     /* rank in the transport's communicator */
    int finished; /* set by the actor: it will handle no more events */
};

/*
 * A unit of computation.  fn(arg) really runs on the MPI transport (its
 * return value is the status delivered to `computed`); the simulated
 * transport may run it natively and charges `work` seconds (at speed 1)
 * divided by the host's speed, or the measured time, depending on its model.
 */
typedef struct tb_compute {
    int (*fn)(void *arg);
    void *arg;
    double work; /* modelled seconds at speed 1; < 0 means "measure" */
    const char *what; /* on real runs, what a crash or timeout line calls
                       * the job, with `id`: "task 17 crashed" (NULL: "task"
                       * and the job number) */
    uint64_t id;
    /* The caller's now() read just before, if it has one (start_given): the
     * MPI transport takes it as the computation's start (what spent()
     * measures from) instead of reading the clock once more per task. */
    int start_given;
    double start;
    /* The caller returns compute()'s value at once, with nothing after it
     * (a tail call): the MPI transport may then call `computed` from inside
     * compute() rather than through its loop (once: a computation started
     * from that `computed` is queued as usual). */
    int tail;
} tb_compute;

typedef struct tb_tp_ops {
    size_t size; /* sizeof(tb_tp_ops) */
    /* Send msg to rank dst with a tag; takes msg's content. */
    int (*send)(tb_tp *tp, tb_actor *from, int dst, int tag, tb_buf *msg);
    /* How many of the ranks in from[0..n) (every other rank if from is NULL
     * or n < 0) have a message that has arrived and waits to be received by
     * `a` (S1's overload measure). */
    int (*arrived)(tb_tp *tp, tb_actor *a, const int *from, int n);
    /* Current time of actor a, in seconds since the run started. */
    double (*now)(tb_tp *tp, tb_actor *a);
    /* Fire a's timer handler with `id` at time `at` (seconds, same clock as now). */
    int (*timer)(tb_tp *tp, tb_actor *a, double at, uint64_t id);
    /* Start computation `job`; a's computed handler fires when it ends. */
    int (*compute)(tb_tp *tp, tb_actor *a, uint64_t job, const tb_compute *c);
    /* Cancel a's pending timers with this id. */
    int (*cancel)(tb_tp *tp, tb_actor *a, uint64_t id);
    /* Called from inside a computation's fn: how long the computation has
     * taken so far on this transport's clock.  now() cannot say: simulated,
     * time stands still while fn runs and the cost is charged when it
     * returns.  So the computation says what its own model has done so far
     * (`modelled`, seconds at speed 1, what the simulator's cost hook will
     * charge for it): the simulated transport answers that, the MPI
     * transport the wall time since fn started.  Outside a computation: 0. */
    double (*spent)(tb_tp *tp, tb_actor *a, double modelled);
} tb_tp_ops;

struct tb_tp {
    const tb_tp_ops *ops;
    int size; /* number of ranks */
};

/* Convenience wrappers so policy code reads naturally. */
static inline int tb_tp_send(tb_actor *a, int dst, int tag, tb_buf *msg)
{
    return a->tp->ops->send(a->tp, a, dst, tag, msg);
}
static inline int tb_tp_arrived(tb_actor *a, const int *from, int n)
{
    return a->tp->ops->arrived(a->tp, a, from, n);
}
static inline double tb_tp_now(tb_actor *a) { return a->tp->ops->now(a->tp, a); }
static inline int tb_tp_timer(tb_actor *a, double at, uint64_t id)
{
    return a->tp->ops->timer(a->tp, a, at, id);
}
static inline int tb_tp_compute(tb_actor *a, uint64_t job, const tb_compute *c)
{
    return a->tp->ops->compute(a->tp, a, job, c);
}
static inline int tb_tp_cancel(tb_actor *a, uint64_t id)
{
    return a->tp->ops->cancel(a->tp, a, id);
}
static inline double tb_tp_spent(tb_actor *a, double modelled)
{
    return a->tp->ops->spent(a->tp, a, modelled);
}

/* ---- the MPI transport ------------------------------------------------ */

/*
 * Create an MPI transport over comm (not duplicated here: the caller owns a
 * private communicator).  Collective over comm.  How an idle rank waits comes
 * from TENBIN_MPI_WAIT.  tb_tp_mpi_run drives this process's single actor
 * until it is finished and every send has completed.  Time zero is the call
 * to tb_tp_mpi_run.
 */
int tb_tp_mpi_create(tb_tp **out, MPI_Comm comm);
void tb_tp_mpi_destroy(tb_tp **tp);
int tb_tp_mpi_run(tb_tp *tp, tb_actor *a);
/* Hold every message to rank r for delay[r] seconds (of [size]; copied)
 * before handing it to MPI: wide-area delay injected in software, in
 * order per destination.  NULL: no delay. */
int tb_tp_mpi_set_delay(tb_tp *tp, const double *delay);
/* Wait for messages by sleeping (1 us doubling to max_sleep, at most and
 * by default (0) 1 ms) whatever TENBIN_MPI_WAIT says: for ranks whose work
 * runs in other processes, which a spinning rank would slow down. */
void tb_tp_mpi_set_wait_sleep(tb_tp *tp, double max_sleep);
/* End the job with one line (core/guard.h) when a computation runs longer
 * than `seconds` (0, the default: no limit).  A crash always does. */
void tb_tp_mpi_set_task_timeout(tb_tp *tp, double seconds);
/* Messages and bytes this process sent and received. */
void tb_tp_mpi_counts(const tb_tp *tp, uint64_t *msgs_sent, uint64_t *msgs_recv,
                      uint64_t *bytes_sent, uint64_t *bytes_recv);

#endif /* TB_TRANSPORT_H */
