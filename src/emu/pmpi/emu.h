/*
 * emu.h - the state of one emulated rank inside libtenbin-emu.so (internal).
 *
 * The library is loaded with LD_PRELOAD into an unmodified MPI program.  Its
 * MPI_* functions replace the MPI library's and call the PMPI_* ones.  Each
 * process is one rank of the emulated run and keeps:
 *
 *   - a virtual clock: the rank's time on the target platform.  CPU time
 *     the calling thread spends between MPI calls is compute, divided by the
 *     host's speed at that virtual time; MPI calls cost what the platform's
 *     network model says (tb_net_send, tb_net_recv_cost: the simulator's
 *     arithmetic);
 *   - a connection to the coordinator, which decides what virtual time
 *     alone can decide (which message an MPI_ANY_SOURCE receive or a probe
 *     sees) with conservative synchronisation (docs/emulator.md).
 *
 * The global state below (E) is unavoidable in an interposition library:
 * MPI's own state is global.  It is touched by the thread inside an MPI call
 * only (threads may call MPI one at a time: threads.c); the fields other
 * threads read are atomic.  The library's files (emu.c, p2p.c, wait.c,
 * comm.c, coll.c, clock.c, threads.c) share it and the functions declared at
 * the end.
 */
#ifndef TB_EMU_PMPI_H
#define TB_EMU_PMPI_H

#include <mpi.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/ring.h"
#include "emu/wire.h"
#include "tenbin/core.h"
#include "tenbin/model.h"

/* One communicator the program uses, with the hidden ones beside it.  For an
 * intercommunicator the ranks messages name are the remote group's (world,
 * nworld), and its collectives' steps inside the local group go on `local`. */
typedef struct ecomm {
    MPI_Comm user; /* the program's handle */
    MPI_Comm hdr;  /* headers of the program's messages (same tags) */
    MPI_Comm coll; /* data of the emulated collectives */
    MPI_Comm chdr; /* their headers; also the acknowledgements */
    uint32_t ctx;  /* the same on every member; ctx | 1<<31 for coll */
    int size, rank; /* of the local group */
    int *world;     /* world rank of each rank a message names: the members,
                       or the remote group of an intercommunicator */
    int nworld;     /* entries of world */
    int inter;      /* an intercommunicator */
    struct ecomm *local; /* inter: a hidden intracommunicator of the local
                            group, context ctx | CTX_LOCAL (not in E.comms) */
    int owned; /* created by the program (freed with MPI_Comm_free) */
} ecomm;

/* The context of an intercommunicator's local group (ecomm.local): apart
 * from every context agreed on, and the same for both groups, whose members
 * differ. */
#define CTX_LOCAL 0x40000000u

/* The header that travels beside every emulated message (on ecomm.hdr or
 * ecomm.chdr, same source and tag, so the two streams match alike). */
typedef struct ehdr {
    double arrival; /* virtual time the receiver can take it */
    uint64_t seq;   /* per (sender, receiver) pair, from 1 */
    uint64_t bytes; /* size in bytes (count x type size) */
    int32_t rdv;    /* rendezvous: the sender waits for the receiver */
    int32_t sync;   /* synchronous send: acknowledge even if eager */
} ehdr;

#define EMU_API __attribute__((visibility("default")))

/* Tags on the hidden communicators: acknowledgements, the collectives'
 * messages (COLL_TAG0 + 1..7), the leaders' exchange that agrees on an
 * intercommunicator's context (on the peer communicator's). */
enum { ACK_TAG = 32000, COLL_TAG0 = 100, COLL_TAG_AGREE = COLL_TAG0 + 8 };

typedef struct sendrec {
    uint32_t dst, ctx;
    int32_t tag;
    uint64_t seq;
    double arrival;
} sendrec;

typedef struct recvrec {
    uint32_t src;
    uint64_t seq;
} recvrec;

typedef struct pattern {
    uint32_t ctx;
    int32_t src; /* world rank or -1 */
    int32_t tag; /* tag or -1 */
} pattern;

/* A message the coordinator said an any-source receive will take, in advance. */
typedef struct ahead {
    uint32_t src; /* world rank */
    int32_t tag;
    uint64_t seq;
    double arrival;
} ahead;

/* REQ_COLL: a non-blocking collective, done when its steps (parts) are. */
enum { REQ_SEND = 1, REQ_RECV, REQ_ARECV, REQ_COLL };

typedef struct ereq {
    MPI_Request handle; /* what the program holds */
    int kind;
    MPI_Request real, hreal;
    ecomm *c;
    int coll;
    int peer, tag; /* comm rank (or MPI_ANY_SOURCE), tag (or MPI_ANY_TAG) */
    void *buf;
    int count;
    MPI_Datatype type;
    ehdr h; /* sent, or received */
    int dst_world;
    int need_ack, acked;
    double done_at; /* SEND: virtual completion once known */
    double posted;  /* RECV: clock when posted */
    int acked_out;  /* RECV: its header was seen (and acknowledged if asked) */
    int copied;     /* SEND: real parts go from the copy in buf; the handle
                       is a generalized request the model completes */
    int cancelled;  /* RECV, ARECV: MPI_Cancel was called (wait.c) */
    int part;       /* a step of a REQ_COLL: the program never holds it */
    struct ereq **parts; /* COLL: its steps not finished yet (NULL once finished) */
    int nparts;
} ereq;

typedef struct ack {
    int src_world;
    uint64_t seq;
    double taken;
} ack;

typedef struct horizon {
    pattern p;
    double until;
} horizon;

typedef struct mprobed {
    MPI_Message msg;
    ecomm *c;
    int src, tag;
    ehdr h;
} mprobed;

/* This rank's state (the one instance is E, in emu.c). */
struct emu {
    int on;          /* initialised and emulating */
    int fd;          /* coordinator connection */
    tb_emu_shm *shm; /* on the coordinator's node: frames go through here */
    size_t shm_bytes;
    tb_emu_ring *up, *down;
    int wrank, P;
    tb_platform *plat;
    int *cluster; /* of each world rank */
    tb_speed_cursor speed;
    double lookahead;
    long sleep_max_ns;   /* longest sleep of a real wait */
    long sleep_long_ns;  /* a wait the coordinator ends (it wakes us) */
    int sending_to;      /* world rank a real send holds us for, or -1 */
    int sending_rdv;     /* ... and the model waits for its receiver too */
    pattern sending_ack; /* then: the acknowledgement it waits for */
    size_t copy_min;     /* eager sends above this go from a copy */
    int said_sending;    /* the last report said so */
    double clock;
    double link_free; /* the earliest start of this rank's next send (tb_net_send) */
    tb_netlink rx;    /* its link's receiving side (tb_net_recv) */
    double compute, send, recv, idle;
    uint64_t msgs_sent, bytes_sent, msgs_recv;
    double *pair_last; /* last arrival per destination */
    uint64_t *seq_to;  /* last sequence number per destination */
    ecomm **comms;
    size_t ncomms, capcomms;
    ecomm **dead; /* freed by the program, kept until MPI_Finalize */
    size_t ndead, capdead;
    MPI_Comm self; /* hidden duplicate of MPI_COMM_SELF, for local copies */
    uint32_t next_ctx;
    sendrec *sends;
    size_t nsends, capsends;
    recvrec *recvs;
    size_t nrecvs, caprecvs;
    ereq **reqs;
    size_t nreqs, capreqs;
    ack *acks;
    size_t nacks, capacks;
    horizon *hz;
    size_t nhz, caphz;
    mprobed *mp;
    size_t nmp, capmp;
    tb_buf out, in;   /* in: a view of the frame being read, in rd */
    tb_emu_reader rd; /* what the coordinator sent */
    tb_trace *trace;  /* this rank's events in virtual time, or NULL */
    int owe_report;   /* asked while blocked: answer when running again */
    /* Answers in advance for the next receives of pattern ahead_pat, used
     * from iahead (proto.h DECIDE; dropped, and the coordinator told, once
     * this rank does anything else that waits or takes one of them). */
    pattern ahead_pat;
    ahead *ahead;
    size_t iahead, nahead, capahead;
    int drop_ahead;
    double clock_cost; /* CPU time one read of the thread's CPU clock takes */
    double user_slack; /* the program's timer slack, seconds (before ours: clock.c) */
    _Atomic int in_user; /* the program runs (not this library, not MPI): the
                            clock and sleep calls of E.thread are virtual (clock.c) */
    /* The thread that calls MPI (tb__emu_self of the one that called last),
     * and the one inside an MPI call now (NULL: none).  Several threads may
     * call MPI, one at a time (mpi4py.futures' pool calls from a thread of
     * its own). */
    const void *_Atomic thread;
    const void *_Atomic inside;
    /* The clock and compute when the last MPI call ended: what the program's
     * other threads that have called MPI read (clock.c). */
    _Atomic double shown_clock, shown_compute;
};

extern struct emu E;

/* Remove pointer p from the unordered array arr[0..n). */
#define UNORDERED_REMOVE(arr, n, p)                                                                \
    do {                                                                                           \
        for (size_t i_ = 0; i_ < (n); i_++)                                                        \
            if ((arr)[i_] == (p)) {                                                                \
                (arr)[i_] = (arr)[--(n)];                                                          \
                break;                                                                             \
            }                                                                                      \
    } while (0)

#define GROW(arr, n, cap)                                                                          \
    do {                                                                                           \
        if (tb_grow(&(arr), &(cap), (n) + 1, sizeof *(arr), 16) != TB_OK)                          \
            tb__emu_oom();                                                                         \
    } while (0)

typedef struct decision {
    int found;
    int pattern;
    int src_world, tag;
    uint64_t seq;
    double arrival, horizon;
} decision;

/* Wait for a real request, answering the coordinator meanwhile. */
/*
 * Wait for real requests without holding a core: test, then sleep, from 2 us
 * doubling to TENBIN_EMU_SLEEP_MAX.  Virtual time does not care how long the
 * real wait takes, and a rank that sleeps leaves the cores to the ranks that
 * have work (a blocking MPI wait would spin, or yield in a loop, which on an
 * oversubscribed machine starves the very rank everyone waits for).  With
 * `answer`, the coordinator's questions are answered meanwhile (the rank has
 * not reported that it is blocked).
 */
enum { WAIT_ANSWER, WAIT_QUIET, WAIT_BLOCKED, WAIT_ASLEEP };

enum { MODE_STD = 0, MODE_SYNC, MODE_BUFFERED, MODE_READY };

#define BEGIN(call)                                                                                \
    if (!E.on)                                                                                     \
        tb__emu_die("%s called before MPI_Init or after MPI_Finalize", call);                      \
    tb__emu_enter()

#define END()                                                                                      \
    do {                                                                                           \
        tb__emu_leave();                                                                           \
        return MPI_SUCCESS;                                                                        \
    } while (0)

/* ---- what the files share -------------------------------------------------- */

/* Virtual time begins for the program's own clocks and sleeps (clock.c): on
 * the calling thread, when MPI_Init returns. */
void tb__emu_clock_start(void);

/* The run cannot go on: tell the coordinator (which prints the line and
 * stops the job), then abort. */
void tb__emu_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

void tb__emu_oom(void);

void tb__emu_send_frame(void);

void tb__emu_pack_report(int type, int state, int kind, double deadline, const pattern *pat,
                         int npat);

void tb__emu_report(int state, const pattern *pat, int npat);

/* A message this rank took (reported with its next report); if it was one
 * of the answers in advance, those are stale (it came another way). */
void tb__emu_took(uint32_t src, uint64_t seq);

/* The next sleep of a doubling backoff, at most cap. */
long tb__emu_doubled(long ns, long cap);

long tb__emu_backoff(long ns);

/* An ASK waiting on the connection: answer it.  Called at every MPI call. */
void tb__emu_poll_coord(void);

/* Blocked (reported): sleep until the coordinator says a message we wait
 * for was sent, or `ns` passed.  Questions are not answered (it knows we
 * are blocked).  Returns 1 if woken. */
int tb__emu_sleep_on_coord(long ns);

decision tb__emu_decide(const pattern *pat, int npat, double deadline);

decision tb__emu_decide_take(const pattern *pat, int npat, double deadline, int take);

/* An MPI call begins: the compute since the calling thread's last call goes
 * on the clock, the coordinator is answered. */
void tb__emu_enter(void);

void tb__emu_leave(void);

/* The same for a clock or sleep call of the program on the MPI thread (clock.c):
 * 0, and nothing done, if that is not the MPI thread any more (another
 * thread calls MPI now, or called it last). */
int tb__emu_enter_user(void);

/* ---- the threads that call MPI (threads.c) ---- */

/* A token of the calling thread (E.thread, E.inside). */
const void *tb__emu_self(void);

/* An MPI call of the calling thread begins with its CPU time at `cpu`: the
 * CPU time since its last call, not counted yet (all it ran, at its first). */
double tb__emu_thread_enter(double cpu);

/* ... and ends with its CPU time at `cpu`. */
void tb__emu_thread_leave(double cpu);

/* Has another thread than the caller called MPI?  Has the caller? */
int tb__emu_threads_others(void);
int tb__emu_thread_known(void);

/* The calling thread sleeps, outside MPI: wait in real time while another
 * thread that has called MPI runs, until they used `allow` seconds of CPU
 * time; returns the CPU time they used (now counted, as compute of the
 * sleep). */
double tb__emu_threads_beside(double allow);

/* Move the clock to t (if later), counting the gap in *bucket. */
void tb__emu_advance(double t, double *bucket, const char *what);

ecomm *tb__emu_comm_get(MPI_Comm c, const char *call);

/* Register u (a new intra-communicator) with ctx; collective over u. */
ecomm *tb__emu_comm_add(MPI_Comm u, uint32_t ctx, int owned);

void tb__emu_comm_remove(ecomm *e);

/* A context for a communicator made from parent, agreed by an emulated
 * allreduce over it (collective over parent). */
uint32_t tb__emu_agree_ctx(ecomm *parent);

int tb__emu_comm_rank_of_world(const ecomm *c, int w);

uint32_t tb__emu_ctx_of(const ecomm *c, int coll);

void tb__emu_sleep_wait(int n, MPI_Request *r, MPI_Status *st, int how);

void tb__emu_early_acks(void);

void tb__emu_reap_detached(void);

/* Ask the coordinator which message matching pat[] arrives first (before
 * `deadline`), and wait for the answer. */
void tb__emu_progress(void);

void tb__emu_send_start(ereq *q, ecomm *c, int coll, const void *buf, int count, MPI_Datatype t,
                        int dst, int tag, int mode);

int tb__emu_ack_ready(int dst_world, const ecomm *c, uint64_t seq, double *taken);

double tb__emu_wait_ack(int dst_world, const ecomm *c, uint64_t seq, double arrival);

void tb__emu_send_finish(ereq *q);

void tb__emu_do_send(ecomm *c, int coll, const void *buf, int count, MPI_Datatype t, int dst,
                     int tag, int mode);

void tb__emu_send_ack(const ecomm *c, int src, uint64_t seq, double taken);

void tb__emu_recv_done(ecomm *c, int coll, int src, const ehdr *h, MPI_Status *st, int counted,
                       int acked);

/* Receive from a known source (comm rank), real data and header.  With
 * `decided`, the coordinator already chose this message: do not report. */
void tb__emu_recv_known(ecomm *c, int coll, void *buf, int count, MPI_Datatype t, int src, int tag,
                        MPI_Status *st, int decided);

pattern tb__emu_pattern_of(const ecomm *c, int coll, int src, int tag);

/* A probe or test that found nothing: looking costs the receive overhead of
 * an empty message (S3's ob models exactly this), and at least 1 ns, so a
 * polling loop always moves on in virtual time and ends. */
void tb__emu_poll_cost(void);

/* Remember that nothing matching p arrives before `until`. */
void tb__emu_hz_set(const pattern *p, double until);

/* Does a remembered horizon say that a look for p at this clock fails? */
int tb__emu_horizon_says_no(const pattern *p);

/* Send from a packed copy of buf (the program may reuse buf at once), as a
 * request nobody waits for: reap_detached frees it once the real send is
 * done. */
void tb__emu_send_detached(ecomm *c, int coll, const void *buf, int count, MPI_Datatype t, int dst,
                           int tag, int mode);

/* Should this send go from a copy (send_detached)?  A standard or ready send
 * the model finishes without its receiver, but larger than a real MPI may
 * send without one (eager limits start at a few KiB; TENBIN_EMU_COPY_MIN,
 * default 1024 bytes), does: the sender runs on as the model says instead of
 * waiting in the real MPI for a receive that the receiver may post only after
 * the sender has acted (docs/emulator.md). */
int tb__emu_send_copied(const ecomm *c, int dst, int count, MPI_Datatype t, int mode);

ereq *tb__emu_req_new(void);

int tb__emu_grq_query(void *extra, MPI_Status *st);

int tb__emu_grq_free(void *extra);

int tb__emu_grq_cancel(void *extra, int complete);

/* The emulated collectives the communicators' agreements are made of
 * (coll.c): allreduce, binomial reduce and broadcast over an
 * intracommunicator, and the barrier (over either kind). */
void tb__emu_coll_allreduce(ecomm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype t,
                            MPI_Op op);
void tb__emu_coll_reduce(ecomm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype t,
                         MPI_Op op, int root);
void tb__emu_coll_bcast(ecomm *c, void *buf, int count, MPI_Datatype t, int root);
void tb__emu_coll_barrier(ecomm *c);

#endif /* TB_EMU_PMPI_H */
