/*
 * sim.h - the discrete-event kernel and the simulated transport (internal).
 *
 * Kernel: events ordered by (time, sequence number); the sequence number is
 * the order of scheduling, so equal times break ties the same way on every
 * run and the whole simulation is bit-reproducible.  An event no earlier
 * than the last one appended to a FIFO run is appended to it (the run stays
 * sorted, since sequence numbers only grow); the others go to a 4-ary heap;
 * a pop takes the earliest of the runs' heads and the heap's top (runs:
 * one for any event, a few for streams the caller names).  Events
 * scheduled in time order (a burst at one moment, a rank's next step after
 * its last) cost O(1) and touch memory in order.
 *
 * Simulated transport: P actors on the hosts of a tb_platform.  Each rank
 * handles one thing at a time.  The LogGPS costs (see docs/architecture.md,
 * "Simulated transport"):
 *   - send of k bytes at rank time T: starts at max(T, previous send start +
 *     g + (k_prev-1)G), keeps the sender busy o_s (+ ob*P + O*k); the message
 *     can be taken at start + o_s + L + (k-1)G (L and G of the wide-area link
 *     between clusters), once the receiver's link, which carries one message
 *     at a time (g + (k-1)G each), has let it through (tb_net_recv);
 *   - taking a message costs the receiver o_r (+ ob*P + O*k); a message above
 *     S bytes synchronises with the receiver: it moves only when taken, so
 *     taking it costs 2L + (k-1)G more (request to send, clear to send, data);
 *     the sender is not blocked, like MPI_Isend;
 *   - compute: the task's work (seconds at speed 1) at the host's speed over
 *     time; the rank takes no message meanwhile;
 *   - "arrived": messages in the rank's mailbox whose arrival time has passed.
 */
#ifndef TB_SIM_H
#define TB_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "tenbin/core.h"
#include "tenbin/model.h"
#include "transport/transport.h"

/* ---- kernel ---------------------------------------------------------------- */

typedef struct tb_sim_event {
    double t;
    uint64_t seq;
    int type;
    int rank;
    uint64_t a;    /* event data */
} tb_sim_event;    /* 32 bytes: two to a cache line */

/* An event as the queue keeps it: its time as an unsigned integer that
 * orders as the time does (kernel.c), so that the order (time, sequence)
 * is two integer comparisons that need no branch. */
typedef struct tb_sim_qent {
    uint64_t key;
    uint64_t seq;
    int type;
    int rank;
    uint64_t a;
} tb_sim_qent;

/* FIFO runs beside the heap (kernel.c): the first for any event, the others
 * for streams of events a caller knows come in time order. */
#define TB_SIM_RUNS 4

typedef struct tb_sim_queue {
    tb_sim_qent *heap;      /* within heap_mem, so that children share lines */
    void *heap_mem;
    size_t n, cap;
    struct tb_sim_run {     /* a FIFO run: events [head, end), in order */
        tb_sim_qent *v;
        size_t head, end, cap;
    } run[TB_SIM_RUNS];     /* 0: any event; the others: streams (push_stream) */
    int nrun;               /* runs in use: 1 + the highest stream's */
    uint64_t seq;
    uint64_t popped;
} tb_sim_queue;

void tb_sim_queue_init(tb_sim_queue *q);
void tb_sim_queue_free(tb_sim_queue *q);
int tb_sim_queue_push(tb_sim_queue *q, double t, int type, int rank, uint64_t a);
/* The same, for an event of stream `stream` (>= 0): a caller's hint that
 * the stream's events tend to come in time order (the wakes a rank's sends
 * cause, say).  Such an event goes to its stream's run when it is no earlier
 * than that run's last; the order of pops is the same either way. */
int tb_sim_queue_push_stream(tb_sim_queue *q, double t, int type, int rank, uint64_t a,
                             unsigned stream);
/* Pop the earliest event; returns 0 when empty. */
int tb_sim_queue_pop(tb_sim_queue *q, tb_sim_event *out);

/* ---- simulated transport ------------------------------------------------- */

/* Work (seconds at speed 1) of computation `job` that actor `a` just ran
 * natively with c (the result is in whatever c->arg says).  cpu_s is the
 * native CPU time it took. */
typedef double (*tb_sim_cost_fn)(void *ctx, tb_actor *a, uint64_t job, const tb_compute *c,
                                 double cpu_s);

typedef struct tb_sim tb_sim;

/* ranks must fit the platform's cores (TB_ERR_SIZE otherwise).  With
 * measure_cpu, each computation's native CPU time is measured and passed to
 * the cost function (two clock reads, a system call on some machines);
 * without it cpu_s is 0. */
int tb_sim_create(tb_sim **out, const tb_platform *plat, int ranks, tb_sim_cost_fn cost,
                  void *cost_ctx, int measure_cpu);
void tb_sim_destroy(tb_sim **s);
tb_tp *tb_sim_transport(tb_sim *s);
/* Run actors[0..ranks) (actor r is rank r) until every actor is finished and
 * no event is left.  A handler error stops the run and is returned. */
int tb_sim_run(tb_sim *s, tb_actor **actors);
/* Send msg (its bytes as they are) but charge the network model for `bytes`:
 * for a modelled application whose data does not exist (S4's simulated
 * arrays move megabytes that are never allocated).  Byte counts count
 * `bytes`. */
int tb_sim_send_modelled(tb_sim *s, tb_actor *from, int dst, int tag, tb_buf *msg, size_t bytes);
/* Virtual time of the last event, events processed, messages sent. */
double tb_sim_end_time(const tb_sim *s);
uint64_t tb_sim_events(const tb_sim *s);
void tb_sim_rank_counts(const tb_sim *s, int rank, uint64_t *msgs_sent, uint64_t *msgs_recv,
                        uint64_t *bytes_sent, uint64_t *bytes_recv);

#endif /* TB_SIM_H */
