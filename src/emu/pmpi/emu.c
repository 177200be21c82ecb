/*
 * emu.c - libtenbin-emu.so: emulate an unmodified MPI program on a modelled
 * platform (S3).  See emu.h for the state, docs/emulator.md for the model and
 * the synchronisation.
 *
 * Every wrapper starts with enter() (charge the compute since the last MPI
 * call to the virtual clock, answer the coordinator) and ends with leave()
 * (start measuring compute again).  Internal work calls internal functions
 * and PMPI_*, never the MPI_* wrappers.
 */
#define _GNU_SOURCE
#include "emu/pmpi/emu.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "emu/proto.h"
#include "emu/ring.h"
#include "emu/wire.h"

#define EMU_API __attribute__((visibility("default")))

enum { ACK_TAG = 32000, COLL_TAG0 = 100 };

/* ---- state ------------------------------------------------------------- */

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

enum { REQ_SEND = 1, REQ_RECV, REQ_ARECV };

typedef struct ereq {
    MPI_Request handle; /* what the program holds */
    int kind;
    MPI_Request real, hreal;
    ecomm *c;
    int coll;
    int peer, tag;     /* comm rank (or MPI_ANY_SOURCE), tag (or MPI_ANY_TAG) */
    void *buf;
    int count;
    MPI_Datatype type;
    ehdr h;            /* sent, or received */
    int dst_world;
    int need_ack, acked;
    double done_at;    /* SEND: virtual completion once known */
    double posted;     /* RECV: clock when posted */
    int acked_out;     /* RECV: its header was seen (and acknowledged if asked) */
    int copied;        /* SEND: real parts go from the copy in buf; the handle
                          is a generalized request the model completes */
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

static struct emu {
    int on;            /* initialised and emulating */
    int fd;            /* coordinator connection */
    tb_emu_shm *shm;   /* on the coordinator's node: frames go through here */
    size_t shm_bytes;
    tb_emu_ring *up, *down;
    int wrank, P;
    tb_platform *plat;
    int *cluster;      /* of each world rank */
    tb_speed_cursor speed;
    double lookahead;
    long sleep_max_ns;  /* longest sleep of a real wait */
    long sleep_long_ns; /* a wait the coordinator ends (it wakes us) */
    int sending_to;     /* world rank a real send holds us for, or -1 */
    int sending_rdv;    /* ... and the model waits for its receiver too */
    pattern sending_ack; /* then: the acknowledgement it waits for */
    size_t copy_min;    /* eager sends above this go from a copy */
    int said_sending;   /* the last report said so */
    double clock, cpu_exit, last_start;
    double compute, send, recv, idle;
    uint64_t msgs_sent, bytes_sent, msgs_recv;
    double *pair_last; /* last arrival per destination */
    uint64_t *seq_to;  /* last sequence number per destination */
    ecomm **comms;
    size_t ncomms, capcomms;
    ecomm **dead;      /* freed by the program, kept until MPI_Finalize */
    size_t ndead, capdead;
    MPI_Comm self;     /* hidden duplicate of MPI_COMM_SELF, for local copies */
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
    tb_buf out, in;    /* in: a view of the frame being read, in rd */
    tb_emu_reader rd; /* what the coordinator sent */
    tb_trace *trace;   /* this rank's events in virtual time, or NULL */
    int owe_report;    /* asked while blocked: answer when running again */
    /* Answers in advance for the next receives of pattern ahead_pat, used
     * from iahead (proto.h DECIDE; dropped, and the coordinator told, once
     * this rank does anything else that waits or takes one of them). */
    pattern ahead_pat;
    ahead *ahead;
    size_t iahead, nahead, capahead;
    int drop_ahead;
    double clock_cost; /* CPU time one read of the thread's CPU clock takes */
} E = {.fd = -1};

/* ---- failing ------------------------------------------------------------ */

/* After telling the coordinator why the run stops: it stops every process
 * (quietly, before the MPI library's abort banner); abort ourselves only if
 * it has not within a few seconds. */
/* Has the coordinator closed our connection?  Waits up to ms for a sign.
 * (After HELLO it sends nothing on TCP to a rank on a ring; a rank on TCP
 * may find a frame there, which is not a close.) */
static int coord_closed(int ms)
{
    struct pollfd p = {E.fd, POLLIN, 0};
    char c;
    if (poll(&p, 1, ms) <= 0)
        return 0;
    ssize_t r = recv(E.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static void wait_to_be_stopped(void)
{
    struct timespec ts = {0, 50000000};
    for (int i = 0; i < 50 && !coord_closed(100); i++)
        nanosleep(&ts, NULL);
}

/* The run cannot go on: tell the coordinator (which prints the line and
 * stops the job), then abort. */
static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (E.fd >= 0) {
        tb_buf b = TB_BUF_INIT;
        if (tb_buf_pack_u8(&b, TB_EMU_FAIL) == TB_OK &&
            tb_buf_pack_bytes(&b, line, (uint32_t)strlen(line)) == TB_OK)
            (void)tb_emu_frame_write(E.fd, &b);
        tb_buf_free(&b);
        wait_to_be_stopped();
    } else {
        fprintf(stderr, "tenbin emu: %s\n", line);
    }
    PMPI_Abort(MPI_COMM_WORLD, 1);
    _exit(1);
}

/* Called (by name, through unsupported.c) for every communicating MPI call
 * the emulator does not model. */
EMU_API void tb__emu_unsupported(const char *name)
{
    die("%s is not emulated", name);
}

static void oom(void) { die("rank %d: out of memory", E.wrank); }

/* Remove pointer p from the unordered array arr[0..n). */
#define UNORDERED_REMOVE(arr, n, p)                                                            \
    do {                                                                                       \
        for (size_t i_ = 0; i_ < (n); i_++)                                                    \
            if ((arr)[i_] == (p)) {                                                            \
                (arr)[i_] = (arr)[--(n)];                                                      \
                break;                                                                         \
            }                                                                                  \
    } while (0)

#define GROW(arr, n, cap)                                                                      \
    do {                                                                                       \
        if (tb_grow(&(arr), &(cap), (n) + 1, sizeof *(arr), 16) != TB_OK)                       \
            oom();                                                                             \
    } while (0)

/* ---- the coordinator connection -------------------------------------- */

static long backoff(long ns);

static void lost_coord(void)
{
    fprintf(stderr, "tenbin emu: rank %d: lost the coordinator\n", E.wrank);
    _exit(1);
}

/* A rank on a ring: end if the coordinator stopped the run (another rank
 * failed) or is gone. */
static void check_coord(void)
{
    if (coord_closed(0))
        _exit(1);
}

/* Tell the coordinator this rank put frames in its ring. */
static void ring_coord(void)
{
    tb_emu_shm *s = E.shm;
    atomic_fetch_or(&tb_emu_shm_dirty(s)[E.wrank / 64], (uint64_t)1 << (E.wrank % 64));
    atomic_fetch_add(&s->bell, 1);
    uint32_t how = atomic_load(&s->coord_sleeping);
    if (how == TB_EMU_ON_BELL) {
        tb_emu_futex_wake(&s->bell, 1);
    } else if (how == TB_EMU_ON_POLL) {
        static const unsigned char bell = TB_EMU_BELL;
        tb_buf b;
        tb_buf_view(&b, &bell, 1);
        if (tb_emu_frame_write(E.fd, &b) != TB_OK)
            lost_coord();
    }
}

/* n bytes up the ring; when it is full, wait for the coordinator to take. */
static void ring_write(const void *p, size_t n)
{
    long ns = 2000;
    while (n > 0) {
        size_t k = tb_emu_ring_put(E.up, p, n);
        p = (const unsigned char *)p + k;
        n -= k;
        if (n == 0)
            break;
        ring_coord();
        if (k == 0) {
            check_coord();
            ns = backoff(ns);
        } else {
            ns = 2000;
        }
    }
}

static void send_frame(void)
{
    if (E.up) {
        unsigned char h[4];
        tb_emu_frame_header(E.out.len, h);
        ring_write(h, 4);
        ring_write(E.out.data, E.out.len);
        ring_coord();
        return;
    }
    if (tb_emu_frame_write(E.fd, &E.out) != TB_OK)
        lost_coord();
}

/* Forget the answers in advance; the next report says so. */
static void drop_ahead(void)
{
    if (E.iahead < E.nahead)
        E.drop_ahead = 1;
    E.iahead = E.nahead = 0;
}

static void pack_report(int type, int state, int kind, double deadline, const pattern *pat,
                        int npat)
{
    tb_buf *b = &E.out;
    tb_buf_clear(b);
    /* Waiting or blocked with answers in advance unused: they are the
     * coordinator's again (it must see the messages to know when we act). */
    if (state != TB_EMU_RUNNING && E.iahead < E.nahead)
        drop_ahead();
    if (E.drop_ahead) {
        kind |= TB_EMU_DROP_AHEAD;
        E.drop_ahead = 0;
    }
    int rc = tb_buf_pack_u8(b, (uint8_t)type);
    rc |= tb_buf_pack_f64(b, E.clock);
    rc |= tb_buf_pack_u8(b, (uint8_t)state);
    rc |= tb_buf_pack_u8(b, (uint8_t)kind);
    rc |= tb_buf_pack_f64(b, deadline);
    rc |= tb_buf_pack_u32(b, (uint32_t)npat);
    for (int i = 0; i < npat; i++) {
        rc |= tb_buf_pack_u32(b, pat[i].ctx);
        rc |= tb_buf_pack_i32(b, pat[i].src);
        rc |= tb_buf_pack_i32(b, pat[i].tag);
    }
    rc |= tb_buf_pack_u32(b, (uint32_t)E.nsends);
    for (size_t i = 0; i < E.nsends; i++) {
        rc |= tb_buf_pack_u32(b, E.sends[i].dst);
        rc |= tb_buf_pack_u32(b, E.sends[i].ctx);
        rc |= tb_buf_pack_i32(b, E.sends[i].tag);
        rc |= tb_buf_pack_u64(b, E.sends[i].seq);
        rc |= tb_buf_pack_f64(b, E.sends[i].arrival);
    }
    rc |= tb_buf_pack_u32(b, (uint32_t)E.nrecvs);
    for (size_t i = 0; i < E.nrecvs; i++) {
        rc |= tb_buf_pack_u32(b, E.recvs[i].src);
        rc |= tb_buf_pack_u64(b, E.recvs[i].seq);
    }
    if (rc != TB_OK)
        oom();
    E.nsends = E.nrecvs = 0;
}

static void report(int state, const pattern *pat, int npat)
{
    /* Running, but held in a real send: the coordinator must know (its
     * destination travels as the deadline). */
    E.said_sending = state == TB_EMU_RUNNING && E.sending_to >= 0;
    if (E.said_sending && E.sending_rdv) /* it acts only after its receiver took it */
        pack_report(TB_EMU_REPORT, TB_EMU_SENDING, TB_EMU_PEEK, E.sending_to, &E.sending_ack, 1);
    else if (E.said_sending)
        pack_report(TB_EMU_REPORT, TB_EMU_SENDING, TB_EMU_PEEK, E.sending_to, pat, npat);
    else
        pack_report(TB_EMU_REPORT, state, TB_EMU_PEEK, INFINITY, pat, npat);
    send_frame();
}

/* A message this rank took (reported with its next report); if it was one
 * of the answers in advance, those are stale (it came another way). */
static void took(uint32_t src, uint64_t seq)
{
    for (size_t i = E.iahead; i < E.nahead; i++)
        if (E.ahead[i].src == src && E.ahead[i].seq == seq) {
            drop_ahead();
            break;
        }
    GROW(E.recvs, E.nrecvs, E.caprecvs);
    E.recvs[E.nrecvs++] = (recvrec){src, seq};
}

/* The next sleep of a doubling backoff, at most cap. */
static long doubled(long ns, long cap) { return 2 * ns < cap ? 2 * ns : cap; }

/* Sleep ns of real time; the next sleep (doubling to TENBIN_EMU_SLEEP_MAX). */
static long backoff(long ns)
{
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
    return doubled(ns, E.sleep_max_ns);
}

/* The next frame from the coordinator into E.in: 1 if there is one, 0 if
 * none came within ns nanoseconds (0: do not wait). */
static int coord_next(long ns)
{
    for (;;) {
        int r = tb_emu_reader_next(&E.rd, &E.in, TB_EMU_FRAME_MAX);
        if (r > 0)
            return 1;
        if (r < 0)
            die("rank %d: malformed message from the coordinator", E.wrank);
        if (E.down) {
            long got = tb_emu_ring_fill(E.down, &E.rd);
            if (got < 0)
                oom();
            if (got > 0)
                continue;
            if (ns == 0)
                return 0;
            if (!tb_emu_ring_sleep(E.down, ns))
                check_coord(); /* the time passed (or a stray wake-up) */
            ns = 0; /* what is there now, and no more waiting */
            continue;
        }
        struct pollfd pf = {E.fd, POLLIN, 0};
        struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
        if (ppoll(&pf, 1, &ts, NULL) <= 0)
            return 0;
        int closed;
        if (tb_emu_reader_fill(E.fd, &E.rd, &closed) < 0)
            _exit(1); /* the coordinator stopped the run (another rank failed) */
    }
}

static int frame_type(void)
{
    uint8_t type = 0;
    (void)tb_buf_unpack_u8(&E.in, &type);
    return type;
}

/* An ASK waiting on the connection: answer it.  Called at every MPI call. */
static void poll_coord(void)
{
    if (E.owe_report) {
        E.owe_report = 0;
        report(TB_EMU_RUNNING, NULL, 0);
    }
    while (coord_next(0)) {
        int type = frame_type();
        if (type == TB_EMU_WAKE)
            continue;
        if (type != TB_EMU_ASK)
            die("rank %d: unexpected message %d from the coordinator", E.wrank, type);
        report(TB_EMU_RUNNING, NULL, 0);
    }
}

/* Blocked (reported): sleep until the coordinator says a message we wait
 * for was sent, or `ns` passed.  Questions are not answered (it knows we
 * are blocked).  Returns 1 if woken. */
static int sleep_on_coord(long ns)
{
    int woken = 0;
    while (coord_next(ns)) {
        ns = 0; /* and whatever else came with it */
        int type = frame_type();
        if (type == TB_EMU_WAKE)
            woken = 1;
        else if (type == TB_EMU_ASK)
            E.owe_report = 1; /* answered once this rank runs again */
        else
            die("rank %d: unexpected message %d from the coordinator", E.wrank, type);
    }
    return woken;
}

typedef struct decision {
    int found;
    int pattern;
    int src_world, tag;
    uint64_t seq;
    double arrival, horizon;
} decision;

/* Ask the coordinator which message matching pat[] arrives first (before
 * `deadline`), and wait for the answer. */
static void progress(void);
static void early_acks(void);
static void reap_detached(void);
static void send_ack(const ecomm *c, int src, uint64_t seq, double taken);
static decision decide_take(const pattern *pat, int npat, double deadline, int take);

static decision decide(const pattern *pat, int npat, double deadline)
{
    return decide_take(pat, npat, deadline, 0);
}

static decision decide_take(const pattern *pat, int npat, double deadline, int take)
{
    if (take && npat == 1 && deadline == INFINITY && E.iahead < E.nahead &&
        !memcmp(pat, &E.ahead_pat, sizeof *pat)) {
        /* Answered in advance.  What this rank sent since its last report
         * goes now, without waiting: its receivers may be asleep until the
         * coordinator hears of it. */
        const ahead *a = &E.ahead[E.iahead++];
        decision d = {1, 0, (int)a->src, a->tag, a->seq, a->arrival, 0.0};
        if (E.nsends > 0 || E.nrecvs > 0)
            report(TB_EMU_RUNNING, NULL, 0);
        return d;
    }
    pack_report(TB_EMU_REPORT, TB_EMU_WAITING, take ? TB_EMU_TAKE : TB_EMU_PEEK, deadline, pat,
                npat);
    send_frame();
    /* Keep MPI moving meanwhile if this rank has requests of its own: a large
     * message it sent may need its help to leave, and posted receives may owe
     * an ack.  Without any, there is nothing to move: sleep until the answer
     * (a rank that wakes every few microseconds on a crowded machine takes
     * the core from the ranks everyone waits for). */
    long ns = E.nreqs > 0 ? 2000 : E.sleep_long_ns;
    for (;;) {
        if (!coord_next(ns)) {
            progress();
            ns = E.nreqs == 0 ? E.sleep_long_ns : doubled(ns, E.sleep_max_ns);
            continue;
        }
        int type = frame_type();
        if (type == TB_EMU_ASK || type == TB_EMU_WAKE)
            continue; /* it knows we wait */
        if (type != TB_EMU_DECIDE)
            die("rank %d: unexpected message %d from the coordinator", E.wrank, type);
        decision d = {0};
        uint8_t found = 0;
        uint32_t pi = 0, src = 0;
        int32_t tag = 0;
        int rc = tb_buf_unpack_u8(&E.in, &found);
        rc |= tb_buf_unpack_u32(&E.in, &pi);
        rc |= tb_buf_unpack_u32(&E.in, &src);
        rc |= tb_buf_unpack_i32(&E.in, &tag);
        rc |= tb_buf_unpack_u64(&E.in, &d.seq);
        rc |= tb_buf_unpack_f64(&E.in, &d.arrival);
        rc |= tb_buf_unpack_f64(&E.in, &d.horizon);
        uint32_t nahead = 0;
        rc |= tb_buf_unpack_u32(&E.in, &nahead);
        if (rc != TB_OK || nahead > TB_EMU_AHEAD_MAX || (nahead > 0 && (!take || npat != 1)))
            die("rank %d: malformed decision from the coordinator", E.wrank);
        E.iahead = E.nahead = 0;
        for (uint32_t i = 0; i < nahead; i++) {
            GROW(E.ahead, E.nahead, E.capahead);
            ahead *a = &E.ahead[E.nahead++];
            rc |= tb_buf_unpack_u32(&E.in, &a->src);
            rc |= tb_buf_unpack_i32(&E.in, &a->tag);
            rc |= tb_buf_unpack_u64(&E.in, &a->seq);
            rc |= tb_buf_unpack_f64(&E.in, &a->arrival);
            if (a->src >= (uint32_t)E.P)
                rc = TB_ERR_PROTOCOL;
        }
        if (rc != TB_OK)
            die("rank %d: malformed decision from the coordinator", E.wrank);
        if (nahead > 0)
            E.ahead_pat = pat[0];
        d.found = found;
        d.pattern = (int)pi;
        d.src_world = (int)src;
        d.tag = tag;
        return d;
    }
}

static int connect_coord(const char *addr)
{
    char host[256];
    const char *colon = strrchr(addr, ':');
    if (!colon || (size_t)(colon - addr) >= sizeof host)
        return -1;
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = 0;
    if (host[0] == '[' && colon > addr + 1 && colon[-1] == ']') { /* [IPv6]:port */
        memmove(host, host + 1, (size_t)(colon - addr) - 2);
        host[colon - addr - 2] = 0;
    }
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0)
        return -1;
    int fd = -1;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
            break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

/* ---- clock and trace ---------------------------------------------------- */

static void trace_span(const char *name, double t0, double t1)
{
    if (E.trace && t1 > t0 && tb_trace_complete(E.trace, 0, "emu", name, t0, t1) != TB_OK)
        oom();
}

static void enter(void)
{
    double cpu = tb_thread_cputime();
    /* The two clock reads around the gap are the library's, not compute
     * (on some machines each is a system call of most of a microsecond). */
    double d = cpu - E.cpu_exit - E.clock_cost;
    if (d > 0) {
        double end;
        if (tb_speed_finish_time(&E.speed, E.clock, d, &end) != TB_OK)
            die("rank %d: the host's speed never lets %g s of compute at t=%g s finish",
                E.wrank, d, E.clock);
        trace_span("compute", E.clock, end);
        E.compute += end - E.clock;
        E.clock = end;
    }
    poll_coord();
    if (E.nreqs > 0) {
        early_acks();
        reap_detached();
    }
}

static void leave(void) { E.cpu_exit = tb_thread_cputime(); }

/* Move the clock to t (if later), counting the gap in *bucket. */
static void advance(double t, double *bucket, const char *what)
{
    if (t > E.clock) {
        trace_span(what, E.clock, t);
        *bucket += t - E.clock;
        E.clock = t;
    }
}

/* ---- communicators ----------------------------------------------------- */

static ecomm *comm_find(MPI_Comm c)
{
    for (size_t i = 0; i < E.ncomms; i++)
        if (E.comms[i]->user == c)
            return E.comms[i];
    return NULL;
}

static ecomm *comm_get(MPI_Comm c, const char *call)
{
    ecomm *e = comm_find(c);
    if (!e)
        die("%s: a communicator not made by an emulated call (MPI_Comm_dup, _split, "
            "_split_type, _create)", call);
    return e;
}

/* Register u (a new intra-communicator) with ctx; collective over u. */
static ecomm *comm_add(MPI_Comm u, uint32_t ctx, int owned)
{
    ecomm *e = calloc(1, sizeof *e);
    if (!e)
        oom();
    e->user = u;
    e->ctx = ctx;
    e->owned = owned;
    PMPI_Comm_size(u, &e->size);
    PMPI_Comm_rank(u, &e->rank);
    e->world = malloc((size_t)e->size * sizeof *e->world);
    if (!e->world)
        oom();
    PMPI_Allgather(&E.wrank, 1, MPI_INT, e->world, 1, MPI_INT, u);
    PMPI_Comm_dup(u, &e->hdr);
    PMPI_Comm_dup(u, &e->coll);
    PMPI_Comm_dup(u, &e->chdr);
    GROW(E.comms, E.ncomms, E.capcomms);
    E.comms[E.ncomms++] = e;
    return e;
}

/* The program freed it: it is no longer found, but requests may still point
 * at it, so it lives until MPI_Finalize. */
static void comm_retire(ecomm *e)
{
    UNORDERED_REMOVE(E.comms, E.ncomms, e);
    GROW(E.dead, E.ndead, E.capdead);
    E.dead[E.ndead++] = e;
}

static void comm_remove(ecomm *e)
{
    UNORDERED_REMOVE(E.comms, E.ncomms, e);
    PMPI_Comm_free(&e->hdr);
    PMPI_Comm_free(&e->coll);
    PMPI_Comm_free(&e->chdr);
    free(e->world);
    free(e);
}

static int comm_rank_of_world(const ecomm *c, int w)
{
    for (int i = 0; i < c->size; i++)
        if (c->world[i] == w)
            return i;
    return -1;
}

static uint32_t ctx_of(const ecomm *c, int coll) { return coll ? c->ctx | 0x80000000u : c->ctx; }

/* ---- point to point ---------------------------------------------------- */

static size_t type_bytes(int count, MPI_Datatype t)
{
    int sz = 0;
    PMPI_Type_size(t, &sz);
    return (size_t)count * (size_t)(sz > 0 ? sz : 0);
}

static void horizons_clear(void) { E.nhz = 0; }

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

static void sleep_wait(int n, MPI_Request *r, MPI_Status *st, int how)
{
    long ns = 2000;
    for (int first = 1;; first = 0) {
        int flag = 0;
        PMPI_Testall(n, r, &flag, st);
        if (flag)
            return;
        if (how == WAIT_ANSWER) {
            /* Our own message that has not left yet (too large to go at
             * once) may need its receiver's help, and a blocked receiver
             * sleeps until the coordinator says its message was sent. */
            if (first && (E.nsends > 0 || E.sending_to >= 0))
                report(TB_EMU_RUNNING, NULL, 0);
            poll_coord();
        }
        early_acks();
        if (how == WAIT_ASLEEP) {
            /* A blocked receive and no request of our own that MPI may need
             * us to move: nothing to do until the message is sent, and the
             * coordinator says when (TB_EMU_WAKE) once the sender reports
             * it.  A sender that computes after its send reports only at
             * its next wait, so look now and then all the same. */
            if (sleep_on_coord(20 * E.sleep_max_ns))
                how = WAIT_BLOCKED; /* it was sent: now look often */
            continue;
        }
        if (how == WAIT_BLOCKED) {
            /* The coordinator wakes us when the message is sent; until
             * then sleep long (a rank that polls often on a machine with
             * hundreds of ranks takes the cores from those that work). */
            if (sleep_on_coord(ns)) {
                ns = 2000;
                continue;
            }
            ns = doubled(ns, 20 * E.sleep_max_ns);
            continue;
        }
        ns = backoff(ns);
    }
}

static void real_wait(MPI_Request *r, MPI_Status *st) { sleep_wait(1, r, st, WAIT_ANSWER); }

/*
 * Acknowledge, as soon as their header is here, the synchronous and
 * rendezvous messages that posted receives got: the receiver took the
 * message when it was both posted and arrived, and its sender must not wait
 * until the program looks at the request (it may be waiting for the sender).
 */
static void early_acks(void)
{
    for (size_t i = 0; i < E.nreqs; i++) {
        ereq *q = E.reqs[i];
        if (q->kind != REQ_RECV || q->acked_out)
            continue;
        int flag = 0;
        MPI_Status st;
        PMPI_Request_get_status(q->hreal, &flag, &st);
        if (!flag)
            continue;
        q->acked_out = 1;
        if (q->h.rdv || q->h.sync)
            send_ack(q->c, st.MPI_SOURCE, q->h.seq,
                     q->posted > q->h.arrival ? q->posted : q->h.arrival);
        /* Matched to this receive: no other receive or probe can see it. */
        took((uint32_t)q->c->world[st.MPI_SOURCE], q->h.seq);
    }
}

static int ack_ready(int dst_world, const ecomm *c, uint64_t seq, double *taken);

/* Sends nobody waits for any more (MPI_Bsend, MPI_Request_free): drop them
 * once their real parts are done (and their acknowledgement, if one comes). */
static void reap_detached(void)
{
    for (size_t i = 0; i < E.nreqs;) {
        ereq *q = E.reqs[i];
        int f0 = 1, f1 = 1;
        double taken;
        if (q->kind == REQ_SEND && q->handle == MPI_REQUEST_NULL) {
            PMPI_Test(&q->hreal, &f0, MPI_STATUS_IGNORE);
            PMPI_Test(&q->real, &f1, MPI_STATUS_IGNORE);
            if (f0 && f1 && (!q->need_ack || q->acked ||
                             ack_ready(q->dst_world, q->c, q->h.seq, &taken))) {
                free(q->buf);
                E.reqs[i] = E.reqs[--E.nreqs];
                free(q);
                continue;
            }
        }
        i++;
    }
}

/* Let MPI move what it has to move (a large message that needs its sender),
 * and acknowledge what posted receives got. */
static void progress(void)
{
    int flag;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, E.self, &flag, MPI_STATUS_IGNORE);
    early_acks();
}

/* A message the coordinator chose is on its way: wait for it to be here. */
static void probe_wait(int src, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *st)
{
    long ns = 2000;
    for (;;) {
        int flag = 0;
        if (msg)
            PMPI_Improbe(src, tag, comm, &flag, msg, st);
        else
            PMPI_Iprobe(src, tag, comm, &flag, st);
        if (flag)
            return;
        early_acks();
        ns = backoff(ns);
    }
}

enum { MODE_STD = 0, MODE_SYNC, MODE_BUFFERED, MODE_READY };

/* Start an emulated send: clock, header, real messages.  The ereq carries
 * what finishing it needs. */
static void send_start_k(ereq *q, ecomm *c, int coll, const void *buf, int count,
                         MPI_Datatype t, int dst, int tag, int mode, size_t k)
{
    memset(q, 0, sizeof *q);
    q->kind = REQ_SEND;
    q->c = c;
    q->coll = coll;
    q->peer = dst;
    q->tag = tag;
    int w = c->world[dst];
    tb_netmsg nm;
    tb_net_send(E.plat, E.P, E.cluster[E.wrank], E.cluster[w], w == E.wrank, k, E.clock,
                E.last_start, &nm);
    if (mode == MODE_BUFFERED && nm.rendezvous) {
        /* Buffered: never waits for the receiver, so the data goes at once:
         * it arrives L + (k-1)G after the overhead, as an eager message. */
        nm.rendezvous = 0;
        nm.arrival = tb_net_rdv_send_end(E.plat, E.cluster[E.wrank], E.cluster[w], k, nm.send_end);
    }
    if (nm.arrival < E.pair_last[w])
        nm.arrival = E.pair_last[w]; /* no overtaking between two ranks */
    E.pair_last[w] = nm.arrival;
    /* What this rank sends can make others answer before a horizon it was
     * given: forget them. */
    horizons_clear();
    q->h.arrival = nm.arrival;
    q->h.seq = ++E.seq_to[w];
    q->h.bytes = k;
    q->h.rdv = nm.rendezvous && mode != MODE_BUFFERED;
    q->h.sync = mode == MODE_SYNC;
    q->dst_world = w;
    q->need_ack = q->h.rdv || q->h.sync;
    q->done_at = nm.send_end;
    advance(nm.send_end, &E.send, "send");
    E.last_start = nm.start;
    E.msgs_sent++;
    E.bytes_sent += k;
    GROW(E.sends, E.nsends, E.capsends);
    E.sends[E.nsends++] = (sendrec){(uint32_t)w, ctx_of(c, coll), tag, q->h.seq, nm.arrival};
    PMPI_Isend(&q->h, sizeof q->h, MPI_BYTE, dst, tag, coll ? c->chdr : c->hdr, &q->hreal);
    PMPI_Isend(buf, count, t, dst, tag, coll ? c->coll : c->user, &q->real);
}

static void send_start(ereq *q, ecomm *c, int coll, const void *buf, int count, MPI_Datatype t,
                       int dst, int tag, int mode)
{
    send_start_k(q, c, coll, buf, count, t, dst, tag, mode, type_bytes(count, t));
}

/* The acknowledgement of (dst, seq): from the stash, or wait for it. */
/* An acknowledgement (sequence bits, time taken) from comm rank src of c. */
static void stash_ack(const ecomm *c, const double m[2], int src)
{
    ack a;
    memcpy(&a.seq, &m[0], sizeof a.seq);
    a.taken = m[1];
    a.src_world = c->world[src];
    GROW(E.acks, E.nacks, E.capacks);
    E.acks[E.nacks++] = a;
}

/* Move every acknowledgement that has come on c into the stash. */
static void collect_acks(const ecomm *c)
{
    for (;;) {
        int flag = 0;
        MPI_Status st;
        PMPI_Iprobe(MPI_ANY_SOURCE, ACK_TAG, c->chdr, &flag, &st);
        if (!flag)
            return;
        double m[2];
        PMPI_Recv(m, 2, MPI_DOUBLE, st.MPI_SOURCE, ACK_TAG, c->chdr, MPI_STATUS_IGNORE);
        stash_ack(c, m, st.MPI_SOURCE);
    }
}

/* Take the acknowledgement of (dst, seq) from the stash: 1 and *taken. */
static int take_ack(int dst_world, uint64_t seq, double *taken)
{
    for (size_t i = 0; i < E.nacks; i++)
        if (E.acks[i].src_world == dst_world && E.acks[i].seq == seq) {
            *taken = E.acks[i].taken;
            E.acks[i] = E.acks[--E.nacks];
            return 1;
        }
    return 0;
}

/* The acknowledgement of (dst, seq) if it has come: 1 and *taken. */
static int ack_ready(int dst_world, const ecomm *c, uint64_t seq, double *taken)
{
    collect_acks(c);
    return take_ack(dst_world, seq, taken);
}

static double wait_ack(int dst_world, const ecomm *c, uint64_t seq, double arrival)
{
    for (;;) {
        double t;
        if (take_ack(dst_world, seq, &t))
            return t;
        /* Blocked until the receiver takes it: nothing to send before.  The
         * pattern names the message (it matches no real message), so the
         * coordinator can tell a run that waits for an acknowledgement on
         * its way from a deadlock. */
        pattern ackp = {TB_EMU_ACK_CTX, dst_world, (int32_t)(seq & 0x7fffffff)};
        /* Its next action is after the receiver took it, so not before the
         * message's arrival: that goes where a deadline would. */
        pack_report(TB_EMU_REPORT, TB_EMU_BLOCKED, TB_EMU_PEEK, arrival, &ackp, 1);
        send_frame();
        double m[2];
        MPI_Status st;
        MPI_Request ar;
        PMPI_Irecv(m, 2, MPI_DOUBLE, MPI_ANY_SOURCE, ACK_TAG, c->chdr, &ar);
        sleep_wait(1, &ar, &st, WAIT_QUIET);
        stash_ack(c, m, st.MPI_SOURCE);
    }
}

static void send_finish(ereq *q)
{
    E.sending_to = q->dst_world;
    E.sending_rdv = q->need_ack && !q->acked;
    E.sending_ack = (pattern){TB_EMU_ACK_CTX, q->dst_world, (int32_t)(q->h.seq & 0x7fffffff)};
    real_wait(&q->hreal, MPI_STATUS_IGNORE);
    real_wait(&q->real, MPI_STATUS_IGNORE);
    E.sending_to = -1;
    E.sending_rdv = 0;
    if (E.said_sending)
        report(TB_EMU_RUNNING, NULL, 0); /* not held any more */
    if (q->need_ack && !q->acked) {
        double taken = wait_ack(q->dst_world, q->c, q->h.seq, q->h.arrival);
        q->acked = 1;
        q->done_at = tb_net_rdv_send_end(E.plat, E.cluster[E.wrank], E.cluster[q->dst_world],
                                         q->h.rdv ? (size_t)q->h.bytes : 0, taken);
    }
    advance(q->done_at, &E.send, "send");
}

static void do_send(ecomm *c, int coll, const void *buf, int count, MPI_Datatype t, int dst,
                    int tag, int mode)
{
    if (dst == MPI_PROC_NULL)
        return;
    ereq q;
    send_start(&q, c, coll, buf, count, t, dst, tag, mode);
    send_finish(&q);
}

/* A received message: charge the receiver, acknowledge if asked. */
static void send_ack(const ecomm *c, int src, uint64_t seq, double taken)
{
    double m[2];
    memcpy(&m[0], &seq, sizeof seq);
    m[1] = taken;
    PMPI_Send(m, 2, MPI_DOUBLE, src, ACK_TAG, c->chdr);
    horizons_clear(); /* the sender may now answer sooner than expected */
}

static void recv_done(ecomm *c, int coll, int src, const ehdr *h, MPI_Status *st, int counted,
                      int acked)
{
    int w = c->world[src];
    advance(h->arrival, &E.idle, "idle");
    double taken = E.clock;
    double cost = tb_net_recv_cost(E.plat, E.P, E.cluster[w], E.cluster[E.wrank], (size_t)h->bytes,
                                   h->rdv);
    advance(E.clock + cost, &E.recv, "recv");
    if ((h->rdv || h->sync) && !acked)
        send_ack(c, src, h->seq, taken);
    (void)coll;
    E.msgs_recv++;
    if (!counted)
        took((uint32_t)w, h->seq);
    (void)st;
}

/* Receive from a known source (comm rank), real data and header.  With
 * `decided`, the coordinator already chose this message: do not report. */
static void recv_known(ecomm *c, int coll, void *buf, int count, MPI_Datatype t, int src, int tag,
                       MPI_Status *st, int decided)
{
    MPI_Status s;
    if (src == MPI_PROC_NULL) {
        PMPI_Recv(buf, count, t, src, tag, coll ? c->coll : c->user, st);
        return;
    }
    ehdr h;
    MPI_Request r[2];
    MPI_Status ss[2];
    PMPI_Irecv(&h, sizeof h, MPI_BYTE, src, tag, coll ? c->chdr : c->hdr, &r[0]);
    PMPI_Irecv(buf, count, t, src, tag, coll ? c->coll : c->user, &r[1]);
    int flag = 0;
    PMPI_Testall(2, r, &flag, ss);
    if (!flag) {
        if (!decided) {
            pattern p = {ctx_of(c, coll), c->world[src], tag == MPI_ANY_TAG ? -1 : tag};
            report(TB_EMU_BLOCKED, &p, 1);
        }
        sleep_wait(2, r, ss, decided ? WAIT_QUIET : E.nreqs == 0 ? WAIT_ASLEEP : WAIT_BLOCKED);
    }
    s = ss[1];
    recv_done(c, coll, src, &h, &s, 0, 0);
    if (st != MPI_STATUS_IGNORE)
        *st = s;
}

static pattern pattern_of(const ecomm *c, int coll, int src, int tag)
{
    pattern p = {ctx_of(c, coll), src == MPI_ANY_SOURCE ? -1 : c->world[src],
                 tag == MPI_ANY_TAG ? -1 : tag};
    return p;
}

static void do_recv(ecomm *c, int coll, void *buf, int count, MPI_Datatype t, int src, int tag,
                    MPI_Status *st)
{
    if (src != MPI_ANY_SOURCE) {
        recv_known(c, coll, buf, count, t, src, tag, st, 0);
        return;
    }
    pattern p = pattern_of(c, coll, src, tag);
    decision d = decide_take(&p, 1, INFINITY, 1);
    if (!d.found)
        die("rank %d: no message can ever arrive (the coordinator found none)", E.wrank);
    int s = comm_rank_of_world(c, d.src_world);
    recv_known(c, coll, buf, count, t, s, d.tag, st, 1);
}

/* A probe or test that found nothing: looking costs the receive overhead of
 * an empty message (S3's ob models exactly this), and at least 1 ns, so a
 * polling loop always moves on in virtual time and ends. */
static void poll_cost(void)
{
    double cost = tb_net_recv_cost(E.plat, E.P, E.cluster[E.wrank], E.cluster[E.wrank], 0, 0);
    advance(E.clock + (cost > 1e-9 ? cost : 1e-9), &E.recv, "poll");
}

/* Remember that nothing matching p arrives before `until`. */
static void hz_set(const pattern *p, double until)
{
    for (size_t i = 0; i < E.nhz; i++)
        if (!memcmp(&E.hz[i].p, p, sizeof *p)) {
            E.hz[i].until = until;
            return;
        }
    GROW(E.hz, E.nhz, E.caphz);
    E.hz[E.nhz++] = (horizon){*p, until};
}

/* Does a remembered horizon say that a look for p at this clock fails? */
static int horizon_says_no(const pattern *p)
{
    for (size_t i = 0; i < E.nhz; i++)
        if (!memcmp(&E.hz[i].p, p, sizeof *p))
            return E.clock < E.hz[i].until;
    return 0;
}

/* Probe: *flag 1 with the status of the message the program would see. */
static void do_probe(ecomm *c, int src, int tag, int blocking, int *flag, MPI_Status *st,
                     MPI_Message *msg)
{
    if (src == MPI_PROC_NULL) {
        *flag = 1;
        if (msg)
            PMPI_Mprobe(src, tag, c->user, msg, st);
        else
            PMPI_Probe(src, tag, c->user, st);
        return;
    }
    pattern p = pattern_of(c, 0, src, tag);
    if (!blocking && horizon_says_no(&p)) {
        poll_cost();
        *flag = 0;
        return;
    }
    decision d = decide(&p, 1, blocking ? INFINITY : E.clock);
    if (!d.found) {
        hz_set(&p, d.horizon);
        poll_cost();
        *flag = 0;
        return;
    }
    advance(d.arrival, &E.idle, "idle");
    int s = comm_rank_of_world(c, d.src_world);
    MPI_Status rs;
    if (msg) {
        probe_wait(s, d.tag, c->user, msg, &rs);
        mprobed m;
        memset(&m, 0, sizeof m);
        m.msg = *msg;
        m.c = c;
        m.src = s;
        m.tag = d.tag;
        /* Its header now, while the stream order still matches. */
        PMPI_Recv(&m.h, sizeof m.h, MPI_BYTE, s, d.tag, c->hdr, MPI_STATUS_IGNORE);
        GROW(E.mp, E.nmp, E.capmp);
        E.mp[E.nmp++] = m;
        took((uint32_t)d.src_world, m.h.seq);
    } else {
        probe_wait(s, d.tag, c->user, NULL, &rs);
    }
    *flag = 1;
    if (st != MPI_STATUS_IGNORE)
        *st = rs;
}

/* ---- requests ------------------------------------------------------------ */

static ereq *req_new(void)
{
    ereq *q = calloc(1, sizeof *q);
    if (!q)
        oom();
    GROW(E.reqs, E.nreqs, E.capreqs);
    E.reqs[E.nreqs++] = q;
    return q;
}

static ereq *req_find(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL)
        return NULL;
    for (size_t i = E.nreqs; i-- > 0;)
        if (E.reqs[i]->handle == h)
            return E.reqs[i];
    return NULL;
}

static void req_drop(ereq *q)
{
    UNORDERED_REMOVE(E.reqs, E.nreqs, q);
    free(q);
}

static int grq_query(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int grq_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}
static int grq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

/* Finish q (the program waits on it, or a test found it done): the real
 * parts, the clock, the status.  q is freed; *handle becomes NULL. */
static void req_finish(ereq *q, MPI_Request *handle, MPI_Status *st, const decision *d)
{
    MPI_Status s;
    if (q->kind == REQ_SEND) {
        if (q->copied) {
            /* Done when the model says; the real parts go on, detached. */
            ereq *dq = req_new();
            *dq = *q;
            dq->handle = MPI_REQUEST_NULL;
            dq->copied = 0;
            q->buf = NULL;
            advance(q->done_at, &E.send, "send");
            PMPI_Grequest_complete(q->handle);
            MPI_Request h = q->handle;
            PMPI_Wait(&h, MPI_STATUS_IGNORE);
        } else {
            send_finish(q);
        }
        if (st != MPI_STATUS_IGNORE) {
            memset(&s, 0, sizeof s);
            s.MPI_SOURCE = MPI_ANY_SOURCE;
            s.MPI_TAG = MPI_ANY_TAG;
            s.MPI_ERROR = MPI_SUCCESS;
            *st = s;
        }
    } else if (q->kind == REQ_RECV) {
        MPI_Request r[2] = {q->hreal, q->real};
        MPI_Status ss[2];
        int flag = 0;
        PMPI_Testall(2, r, &flag, ss);
        if (!flag) {
            if (!d) {
                pattern p = pattern_of(q->c, q->coll, q->peer, q->tag);
                report(TB_EMU_BLOCKED, &p, 1);
            }
            /* q itself is the one request of this rank's list here */
            sleep_wait(2, r, ss, d ? WAIT_QUIET : E.nreqs == 1 ? WAIT_ASLEEP : WAIT_BLOCKED);
        }
        int seen = q->acked_out;
        if (!seen) {
            q->acked_out = 1;
            seen = 0;
        }
        recv_done(q->c, q->coll, ss[1].MPI_SOURCE, &q->h, &ss[1], seen, seen);
        if (st != MPI_STATUS_IGNORE)
            *st = ss[1];
    } else { /* REQ_ARECV: decided now or before */
        decision dd;
        if (!d) {
            pattern p = pattern_of(q->c, q->coll, q->peer, q->tag);
            dd = decide(&p, 1, INFINITY);
            d = &dd;
        }
        int src = comm_rank_of_world(q->c, d->src_world);
        recv_known(q->c, q->coll, q->buf, q->count, q->type, src, d->tag, st, 1);
        PMPI_Grequest_complete(q->handle);
        MPI_Request h = q->handle;
        PMPI_Wait(&h, MPI_STATUS_IGNORE);
    }
    req_drop(q);
    *handle = MPI_REQUEST_NULL;
}

/* Arrival time of a receive request's message if the real message is here
 * already (header read), else NAN. */
static double recv_known_arrival(ereq *q)
{
    if (q->kind != REQ_RECV)
        return NAN;
    int f0 = 0, f1 = 0;
    MPI_Status s;
    PMPI_Request_get_status(q->hreal, &f0, &s);
    PMPI_Request_get_status(q->real, &f1, &s);
    return f0 && f1 ? q->h.arrival : NAN;
}

/*
 * Which of reqs[0..n) finishes first in virtual time, no later than
 * `deadline` (INFINITY: wait for one).  Returns its index, or -1 if none
 * finishes by the deadline.  *d is filled when the coordinator decided.
 */
/* Has the acknowledgement of send q come (then its completion is known)? */
static int send_known(ereq *q)
{
    if (!q->need_ack || q->acked)
        return 1;
    double taken;
    if (!ack_ready(q->dst_world, q->c, q->h.seq, &taken))
        return 0;
    q->acked = 1;
    q->done_at = tb_net_rdv_send_end(E.plat, E.cluster[E.wrank], E.cluster[q->dst_world],
                                     q->h.rdv ? (size_t)q->h.bytes : 0, taken);
    return 1;
}

/* (arrival, source, sequence): the order of messages everywhere. */
static int earlier(double a, int sa, uint64_t qa, double b, int sb, uint64_t qb)
{
    return a < b || (a == b && (sa < sb || (sa == sb && qa < qb)));
}

/*
 * Which of reqs[0..n) finishes first in virtual time, no later than
 * `deadline` (INFINITY: wait for one).  Returns its index, or -1 if none
 * finishes by the deadline.  *d is filled when the coordinator decided.
 * Sends finish when their data left (known at once for eager sends, from
 * the receiver's acknowledgement otherwise); receives when their message
 * arrived.  A send whose acknowledgement has not come is not waited for
 * while a receive could finish instead (its receiver may be waiting for
 * this rank).
 */
static int first_done(ereq **qs, int n, double deadline, decision *d, int *decided)
{
    *decided = 0;
    double best = INFINITY;
    int bi = -1, unacked = 0;
    pattern *pat = NULL;
    int *map = NULL, npat = 0;
    for (int i = 0; i < n; i++) {
        ereq *q = qs[i];
        if (!q)
            continue;
        if (q->kind == REQ_SEND) {
            if (!send_known(q)) {
                if (deadline == INFINITY) {
                    unacked++;
                    continue;
                }
                /* A test: whether it finished by now depends on when its
                 * receiver took it; wait for the receiver to say (posted
                 * receives acknowledge on their own, so this ends unless the
                 * receiver waits for this rank before it posts one). */
                double taken = wait_ack(q->dst_world, q->c, q->h.seq, q->h.arrival);
                q->acked = 1;
                q->done_at = tb_net_rdv_send_end(E.plat, E.cluster[E.wrank],
                                                 E.cluster[q->dst_world],
                                                 q->h.rdv ? (size_t)q->h.bytes : 0, taken);
            }
            /* Ordered by when each finished, not by when the rank looks. */
            if (q->done_at < best) {
                best = q->done_at;
                bi = i;
            }
            continue;
        }
        if (!pat) {
            pat = malloc((size_t)n * sizeof *pat);
            map = malloc((size_t)n * sizeof *map);
            if (!pat || !map)
                oom();
        }
        map[npat] = i;
        pat[npat++] = pattern_of(q->c, q->coll, q->peer, q->tag);
    }
    long ns = 2000;
    for (;;) {
        double limit = best < deadline ? best : deadline;
        /* Waiting for ever on receives while a send waits for its
         * receiver: look at the receives up to now only, then again. */
        double look = limit == INFINITY && unacked ? E.clock : limit;
        if (npat > 0) {
            /* All receives' messages here already: no need to ask. */
            int all_known = 1, rsrc = -1;
            double rbest = INFINITY;
            uint64_t rseq = 0;
            int rbi = -1;
            for (int j = 0; j < npat && all_known; j++) {
                ereq *q = qs[map[j]];
                double a = recv_known_arrival(q);
                int src = q->c->world[q->peer];
                if (isnan(a))
                    all_known = 0;
                else if (rbi < 0 || earlier(a, src, q->h.seq, rbest, rsrc, rseq)) {
                    rbest = a;
                    rsrc = src;
                    rseq = q->h.seq;
                    rbi = map[j];
                }
            }
            if (!all_known && npat == 1 && look < INFINITY && best > look &&
                horizon_says_no(&pat[0])) {
                /* the same look failed before and nothing can arrive until later */
            } else if (all_known) {
                if (rbest <= limit && (rbest < best || (rbest == best && rbi < bi))) {
                    bi = rbi;
                    best = rbest;
                }
            } else if (look >= E.clock) {
                decision dd = decide(pat, npat, look);
                if (dd.found) {
                    int i = map[dd.pattern];
                    if (dd.arrival < best || (dd.arrival == best && i < bi)) {
                        *d = dd;
                        *decided = 1;
                        bi = i;
                        best = dd.arrival;
                    }
                } else if (best > look) {
                    hz_set(&pat[0], dd.horizon);
                }
            }
        }
        if (bi >= 0 || deadline < INFINITY || !unacked)
            break;
        /* Nothing yet: an acknowledgement may have come meanwhile. */
        for (int i = 0; i < n; i++)
            if (qs[i] && qs[i]->kind == REQ_SEND && qs[i]->need_ack && !qs[i]->acked &&
                send_known(qs[i])) {
                unacked--;
                if (qs[i]->done_at < best) {
                    best = qs[i]->done_at;
                    bi = i;
                }
            }
        if (bi >= 0)
            break;
        if (npat == 0) {
            /* Only sends waiting for their receivers: wait for the first. */
            for (int i = 0; i < n; i++)
                if (qs[i] && qs[i]->kind == REQ_SEND && !qs[i]->acked) {
                    ereq *q = qs[i];
                    double taken = wait_ack(q->dst_world, q->c, q->h.seq, q->h.arrival);
                    q->acked = 1;
                    q->done_at = tb_net_rdv_send_end(E.plat, E.cluster[E.wrank],
                                                     E.cluster[q->dst_world],
                                                     q->h.rdv ? (size_t)q->h.bytes : 0, taken);
                    best = q->done_at;
                    bi = i;
                    break;
                }
            break;
        }
        progress();
        ns = backoff(ns);
    }
    free(pat);
    free(map);
    return bi >= 0 && best <= deadline ? bi : -1;
}

/* ---- MPI_Init / Finalize ------------------------------------------------ */

static void emu_start(void)
{
    const char *addr = getenv("TENBIN_EMU_COORD");
    const char *plat = getenv("TENBIN_EMU_PLATFORM");
    if (!addr || !plat) {
        fprintf(stderr, "libtenbin-emu: TENBIN_EMU_COORD and TENBIN_EMU_PLATFORM are not set; "
                        "run the program with `tenbin emu`\n");
        PMPI_Abort(MPI_COMM_WORLD, 1);
        _exit(1);
    }
    PMPI_Comm_rank(MPI_COMM_WORLD, &E.wrank);
    PMPI_Comm_size(MPI_COMM_WORLD, &E.P);
    E.fd = connect_coord(addr);
    if (E.fd < 0) {
        fprintf(stderr, "libtenbin-emu: rank %d: cannot reach the coordinator at %s\n", E.wrank,
                addr);
        PMPI_Abort(MPI_COMM_WORLD, 1);
        _exit(1);
    }
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    /* On the coordinator's node: its shared memory, opened before HELLO
     * (which says so) so that the coordinator may unlink it once all said
     * hello. */
    E.shm = tb_emu_shm_open(getenv("TENBIN_EMU_SEGMENT"), E.P, &E.shm_bytes);
    tb_buf_clear(&E.out);
    int rc = tb_buf_pack_u8(&E.out, TB_EMU_HELLO);
    rc |= tb_buf_pack_u32(&E.out, (uint32_t)E.wrank);
    rc |= tb_buf_pack_u32(&E.out, (uint32_t)E.P);
    rc |= tb_buf_pack_u32(&E.out, (uint32_t)getpid());
    rc |= tb_buf_pack_bytes(&E.out, host, (uint32_t)strlen(host));
    rc |= tb_buf_pack_u8(&E.out, E.shm != NULL);
    if (rc != TB_OK)
        oom();
    send_frame(); /* on TCP */
    if (E.shm) {
        E.up = tb_emu_shm_up(E.shm, E.wrank);
        E.down = tb_emu_shm_down(E.shm, E.wrank);
    }
    const char *seed_s = getenv("TENBIN_EMU_SEED");
    uint64_t seed = seed_s ? strtoull(seed_s, NULL, 10) : 1;
    char err[512];
    if (tb_platform_open(plat, seed, &E.plat, err, sizeof err) != TB_OK)
        die("--platform: %s", err);
    if ((size_t)E.P > tb_platform_cores(E.plat))
        die("%d ranks do not fit the platform (%zu cores)", E.P, tb_platform_cores(E.plat));
    E.cluster = malloc((size_t)E.P * sizeof *E.cluster);
    E.pair_last = malloc((size_t)E.P * sizeof *E.pair_last);
    E.seq_to = calloc((size_t)E.P, sizeof *E.seq_to);
    if (!E.cluster || !E.pair_last || !E.seq_to)
        oom();
    for (int r = 0; r < E.P; r++) {
        E.cluster[r] = E.plat->hosts[tb_platform_host_of(E.plat, r)].cluster;
        E.pair_last[r] = -INFINITY;
    }
    if (tb_speed_cursor_init(&E.speed, E.plat, (size_t)tb_platform_host_of(E.plat, E.wrank)) !=
        TB_OK)
        die("rank %d: bad host speed", E.wrank);
    E.lookahead = tb_net_lookahead(E.plat, E.P);
    double smax = 200e-6;
    if (tb_env_double("TENBIN_EMU_SLEEP_MAX", &smax) != TB_OK || !(smax >= 2e-6 && smax <= 0.5))
        die("TENBIN_EMU_SLEEP_MAX: expected seconds from 2e-6 to 0.5");
    E.sleep_max_ns = (long)(smax * 1e9);
    E.sleep_long_ns = 250 * E.sleep_max_ns;
    E.sending_to = -1;
    long cmin = 1024;
    if (tb_env_int("TENBIN_EMU_COPY_MIN", &cmin) != TB_OK || cmin < 0)
        die("TENBIN_EMU_COPY_MIN: expected a number of bytes >= 0");
    E.copy_min = (size_t)cmin;
    /* Sleeps of a few microseconds, not the default 50 us of slack. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    E.last_start = -INFINITY;
    if (getenv("TENBIN_EMU_TRACE")) {
        char name[300];
        snprintf(name, sizeof name, "rank %d (%s)", E.wrank,
                 E.plat->hosts[tb_platform_host_of(E.plat, E.wrank)].name);
        if (tb_trace_create(&E.trace, E.wrank, 0.0) != TB_OK ||
            tb_trace_set_process_name(E.trace, name) != TB_OK)
            oom();
    }
    PMPI_Comm_dup(MPI_COMM_SELF, &E.self);
    comm_add(MPI_COMM_WORLD, 0, 0);
    comm_add(MPI_COMM_SELF, (uint32_t)(1 + E.wrank), 0);
    E.next_ctx = (uint32_t)E.P + 1;
    E.on = 1;
    /* What reading the CPU clock costs, taken off every gap between calls:
     * the least of a few back-to-back reads. */
    E.clock_cost = INFINITY;
    for (int i = 0; i < 64; i++) {
        double a = tb_thread_cputime(), b = tb_thread_cputime();
        if (b - a < E.clock_cost)
            E.clock_cost = b - a;
    }
    if (!(E.clock_cost >= 0) || E.clock_cost > 1e-5)
        E.clock_cost = 0;
    /* Virtual time starts when MPI_Init returns, on every rank. */
    PMPI_Barrier(MPI_COMM_WORLD);
    E.clock = 0;
    E.cpu_exit = tb_thread_cputime();
}

EMU_API int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        emu_start();
    return rc;
}

EMU_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        emu_start();
    return rc;
}

EMU_API int MPI_Finalize(void)
{
    if (!E.on)
        return PMPI_Finalize();
    enter();
    pack_report(TB_EMU_FINAL, TB_EMU_DONE, TB_EMU_PEEK, INFINITY, NULL, 0);
    int rc = tb_buf_pack_f64(&E.out, E.compute);
    rc |= tb_buf_pack_f64(&E.out, E.send);
    rc |= tb_buf_pack_f64(&E.out, E.recv);
    rc |= tb_buf_pack_f64(&E.out, E.idle);
    rc |= tb_buf_pack_u64(&E.out, E.msgs_sent);
    rc |= tb_buf_pack_u64(&E.out, E.bytes_sent);
    rc |= tb_buf_pack_u64(&E.out, E.msgs_recv);
    tb_buf tr = TB_BUF_INIT;
    if (E.trace && tb_trace_serialize(E.trace, &tr) != TB_OK)
        oom();
    rc |= tb_buf_pack_bytes(&E.out, tr.len ? (const void *)tr.data : "", (uint32_t)tr.len);
    tb_buf_free(&tr);
    tb_trace_destroy(&E.trace);
    if (rc != TB_OK)
        oom();
    send_frame();
    E.on = 0;
    /* Sends the program never waited for still hold real requests. */
    for (size_t i = 0; i < E.nreqs; i++) {
        if (E.reqs[i]->kind == REQ_SEND) {
            PMPI_Wait(&E.reqs[i]->hreal, MPI_STATUS_IGNORE);
            PMPI_Wait(&E.reqs[i]->real, MPI_STATUS_IGNORE);
            if (E.reqs[i]->copied)
                PMPI_Grequest_complete(E.reqs[i]->handle); /* never waited for */
            if (E.reqs[i]->handle == MPI_REQUEST_NULL || E.reqs[i]->copied)
                free(E.reqs[i]->buf);
        }
        free(E.reqs[i]);
    }
    E.nreqs = 0;
    while (E.ncomms > 0)
        comm_remove(E.comms[E.ncomms - 1]);
    for (size_t i = 0; i < E.ndead; i++)
        comm_remove(E.dead[i]); /* not in E.comms any more: only freed */
    PMPI_Comm_free(&E.self);
    rc = PMPI_Finalize();
    close(E.fd);
    E.fd = -1;
    E.up = E.down = NULL;
    tb_emu_shm_unmap(E.shm, E.shm_bytes);
    E.shm = NULL;
    return rc;
}

EMU_API int MPI_Abort(MPI_Comm comm, int code)
{
    if (E.on && E.fd >= 0) {
        char line[128];
        snprintf(line, sizeof line, "rank %d called MPI_Abort with code %d", E.wrank, code);
        tb_buf b = TB_BUF_INIT;
        if (tb_buf_pack_u8(&b, TB_EMU_FAIL) == TB_OK &&
            tb_buf_pack_bytes(&b, line, (uint32_t)strlen(line)) == TB_OK)
            (void)tb_emu_frame_write(E.fd, &b);
        tb_buf_free(&b);
        wait_to_be_stopped();
    }
    return PMPI_Abort(comm, code);
}

EMU_API double MPI_Wtime(void)
{
    if (!E.on)
        return PMPI_Wtime();
    enter();
    double t = E.clock;
    leave();
    return t;
}

EMU_API double MPI_Wtick(void) { return E.on ? 1e-9 : PMPI_Wtick(); }

/* ---- point-to-point wrappers --------------------------------------------- */

#define BEGIN(call)                                                                            \
    if (!E.on)                                                                                 \
        die("%s called before MPI_Init or after MPI_Finalize", call);                          \
    enter()
#define END()                                                                                  \
    do {                                                                                       \
        leave();                                                                               \
        return MPI_SUCCESS;                                                                    \
    } while (0)

/* Send from a packed copy of buf (the program may reuse buf at once), as a
 * request nobody waits for: reap_detached frees it once the real send is
 * done. */
static void send_detached(ecomm *c, int coll, const void *buf, int count, MPI_Datatype t,
                          int dst, int tag, int mode)
{
    MPI_Comm comm = coll ? c->coll : c->user;
    ereq *q = req_new();
    int psize = 0;
    PMPI_Pack_size(count, t, comm, &psize);
    void *copy = malloc((size_t)psize + 1);
    if (!copy)
        oom();
    int pos = 0;
    PMPI_Pack(buf, count, t, copy, psize, &pos, comm);
    send_start_k(q, c, coll, copy, pos, MPI_PACKED, dst, tag, mode, type_bytes(count, t));
    q->buf = copy;
    q->handle = MPI_REQUEST_NULL;
}

/* Should this send go from a copy (send_detached)?  A standard or ready send
 * the model finishes without its receiver, but larger than a real MPI may
 * send without one (eager limits start at a few KiB; TENBIN_EMU_COPY_MIN,
 * default 1024 bytes), does: the sender runs on as the model says instead of
 * waiting in the real MPI for a receive that the receiver may post only after
 * the sender has acted (docs/emulator.md). */
static int send_copied(const ecomm *c, int dst, int count, MPI_Datatype t, int mode)
{
    if (dst == MPI_PROC_NULL || (mode != MODE_STD && mode != MODE_READY))
        return 0;
    size_t k = type_bytes(count, t);
    if (k <= E.copy_min)
        return 0;
    int w = c->world[dst];
    tb_netmsg nm;
    tb_net_send(E.plat, E.P, E.cluster[E.wrank], E.cluster[w], w == E.wrank, k, E.clock,
                E.last_start, &nm);
    return !nm.rendezvous; /* the model sends it without its receiver */
}

static int send_blocking(const void *buf, int count, MPI_Datatype t, int dst, int tag,
                         MPI_Comm comm, int mode, const char *name)
{
    BEGIN(name);
    ecomm *c = comm_get(comm, name);
    if (send_copied(c, dst, count, t, mode)) {
        send_detached(c, 0, buf, count, t, dst, tag, mode);
        END();
    }
    do_send(c, 0, buf, count, t, dst, tag, mode);
    END();
}

EMU_API int MPI_Send(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, t, dst, tag, comm, MODE_STD, "MPI_Send");
}
EMU_API int MPI_Ssend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, t, dst, tag, comm, MODE_SYNC, "MPI_Ssend");
}
EMU_API int MPI_Rsend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, t, dst, tag, comm, MODE_READY, "MPI_Rsend");
}
/* Buffered: the sender never waits for the receiver; the real message goes
 * as a standard non-blocking send the library completes later. */
EMU_API int MPI_Bsend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm)
{
    BEGIN("MPI_Bsend");
    if (dst != MPI_PROC_NULL)
        send_detached(comm_get(comm, "MPI_Bsend"), 0, buf, count, t, dst, tag, MODE_BUFFERED);
    END();
}

static int isend_common(const void *buf, int count, MPI_Datatype t, int dst, int tag,
                        MPI_Comm comm, MPI_Request *req, int mode, const char *name)
{
    BEGIN(name);
    ecomm *c = comm_get(comm, name);
    if (dst == MPI_PROC_NULL) {
        PMPI_Isend(buf, count, t, dst, tag, comm, req);
        END();
    }
    if (send_copied(c, dst, count, t, mode)) {
        /* As a large blocking send (send_blocking): from a copy, so that
         * the program's wait ends when the model says, not when the real
         * MPI's receiver has posted. */
        send_detached(c, 0, buf, count, t, dst, tag, mode);
        ereq *q = E.reqs[E.nreqs - 1];
        q->copied = 1;
        PMPI_Grequest_start(grq_query, grq_free, grq_cancel, NULL, &q->handle);
        *req = q->handle;
        END();
    }
    ereq *q = req_new();
    send_start(q, c, 0, buf, count, t, dst, tag, mode);
    q->handle = q->real;
    *req = q->handle;
    END();
}

EMU_API int MPI_Isend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm,
                      MPI_Request *req)
{
    return isend_common(buf, count, t, dst, tag, comm, req, MODE_STD, "MPI_Isend");
}
EMU_API int MPI_Issend(const void *buf, int count, MPI_Datatype t, int dst, int tag,
                       MPI_Comm comm, MPI_Request *req)
{
    return isend_common(buf, count, t, dst, tag, comm, req, MODE_SYNC, "MPI_Issend");
}
EMU_API int MPI_Irsend(const void *buf, int count, MPI_Datatype t, int dst, int tag,
                       MPI_Comm comm, MPI_Request *req)
{
    return isend_common(buf, count, t, dst, tag, comm, req, MODE_READY, "MPI_Irsend");
}
EMU_API int MPI_Ibsend(const void *buf, int count, MPI_Datatype t, int dst, int tag,
                       MPI_Comm comm, MPI_Request *req)
{
    return isend_common(buf, count, t, dst, tag, comm, req, MODE_BUFFERED, "MPI_Ibsend");
}

EMU_API int MPI_Recv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
                     MPI_Status *st)
{
    BEGIN("MPI_Recv");
    do_recv(comm_get(comm, "MPI_Recv"), 0, buf, count, t, src, tag, st);
    END();
}

EMU_API int MPI_Irecv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
                      MPI_Request *req)
{
    BEGIN("MPI_Irecv");
    ecomm *c = comm_get(comm, "MPI_Irecv");
    if (src == MPI_PROC_NULL) {
        PMPI_Irecv(buf, count, t, src, tag, comm, req);
        END();
    }
    ereq *q = req_new();
    q->c = c;
    q->peer = src;
    q->tag = tag;
    q->buf = buf;
    q->count = count;
    q->type = t;
    if (src == MPI_ANY_SOURCE) {
        /* Which message it gets is decided when the program waits or tests;
         * a generalized request stands for it meanwhile. */
        q->kind = REQ_ARECV;
        PMPI_Grequest_start(grq_query, grq_free, grq_cancel, NULL, &q->handle);
    } else {
        q->kind = REQ_RECV;
        q->posted = E.clock;
        PMPI_Irecv(&q->h, sizeof q->h, MPI_BYTE, src, tag, c->hdr, &q->hreal);
        PMPI_Irecv(buf, count, t, src, tag, comm, &q->real);
        q->handle = q->real;
    }
    *req = q->handle;
    END();
}

EMU_API int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dst, int stag,
                         void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag,
                         MPI_Comm comm, MPI_Status *st)
{
    BEGIN("MPI_Sendrecv");
    ecomm *c = comm_get(comm, "MPI_Sendrecv");
    ereq q;
    int sending = dst != MPI_PROC_NULL;
    if (sending)
        send_start(&q, c, 0, sbuf, scount, stype, dst, stag, MODE_STD);
    do_recv(c, 0, rbuf, rcount, rtype, src, rtag, st);
    if (sending)
        send_finish(&q);
    END();
}

EMU_API int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype t, int dst, int stag, int src,
                                 int rtag, MPI_Comm comm, MPI_Status *st)
{
    BEGIN("MPI_Sendrecv_replace");
    ecomm *c = comm_get(comm, "MPI_Sendrecv_replace");
    int psize = 0, pos = 0;
    PMPI_Pack_size(count, t, comm, &psize);
    void *copy = malloc((size_t)psize + 1);
    if (!copy)
        oom();
    PMPI_Pack(buf, count, t, copy, psize, &pos, comm);
    ereq q;
    int sending = dst != MPI_PROC_NULL;
    if (sending) {
        send_start_k(&q, c, 0, copy, pos, MPI_PACKED, dst, stag, MODE_STD, type_bytes(count, t));
    }
    do_recv(c, 0, buf, count, t, src, rtag, st);
    if (sending)
        send_finish(&q);
    free(copy);
    END();
}

EMU_API int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    BEGIN("MPI_Probe");
    int flag;
    do_probe(comm_get(comm, "MPI_Probe"), src, tag, 1, &flag, st, NULL);
    END();
}

EMU_API int MPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *st)
{
    BEGIN("MPI_Iprobe");
    do_probe(comm_get(comm, "MPI_Iprobe"), src, tag, 0, flag, st, NULL);
    END();
}

EMU_API int MPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *st)
{
    BEGIN("MPI_Mprobe");
    int flag;
    do_probe(comm_get(comm, "MPI_Mprobe"), src, tag, 1, &flag, st, msg);
    END();
}

EMU_API int MPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *msg,
                        MPI_Status *st)
{
    BEGIN("MPI_Improbe");
    do_probe(comm_get(comm, "MPI_Improbe"), src, tag, 0, flag, st, msg);
    if (!*flag)
        *msg = MPI_MESSAGE_NULL;
    END();
}

EMU_API int MPI_Mrecv(void *buf, int count, MPI_Datatype t, MPI_Message *msg, MPI_Status *st)
{
    BEGIN("MPI_Mrecv");
    if (*msg == MPI_MESSAGE_NO_PROC) {
        PMPI_Mrecv(buf, count, t, msg, st);
        END();
    }
    size_t i = 0;
    while (i < E.nmp && E.mp[i].msg != *msg)
        i++;
    if (i == E.nmp)
        die("MPI_Mrecv: a message not from an emulated MPI_Mprobe or MPI_Improbe");
    mprobed m = E.mp[i];
    E.mp[i] = E.mp[--E.nmp];
    MPI_Status s;
    PMPI_Mrecv(buf, count, t, msg, &s);
    recv_done(m.c, 0, m.src, &m.h, &s, 1, 0);
    if (st != MPI_STATUS_IGNORE)
        *st = s;
    END();
}

/* ---- waits and tests --------------------------------------------------- */

EMU_API int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    BEGIN("MPI_Wait");
    ereq *q = req_find(*req);
    if (q)
        req_finish(q, req, st, NULL);
    else
        PMPI_Wait(req, st);
    END();
}

EMU_API int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    BEGIN("MPI_Waitall");
    /* Receives first: a send that waits for its receiver must not keep this
     * rank from receiving what that receiver may be waiting to send. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            MPI_Status *st = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i];
            ereq *q = req_find(reqs[i]);
            if (q && (q->kind == REQ_SEND) == (pass == 1))
                req_finish(q, &reqs[i], st, NULL);
            else if (!q && pass == 0)
                PMPI_Wait(&reqs[i], st);
        }
    END();
}

/* Requests of the program as ereqs (NULL for inactive ones); unknown real
 * requests are finished by real waits first (they are not messages). */
static ereq **collect(int n, MPI_Request reqs[], int *active)
{
    ereq **qs = calloc((size_t)(n > 0 ? n : 1), sizeof *qs);
    if (!qs)
        oom();
    *active = 0;
    for (int i = 0; i < n; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        qs[i] = req_find(reqs[i]);
        (*active)++;
    }
    return qs;
}

/* A request that is not a message (MPI_PROC_NULL, I/O, ...) among qs: the
 * first one that is done for real, or -1.  It finishes now in virtual time. */
static int real_done(int n, MPI_Request reqs[], ereq **qs, MPI_Status *st)
{
    for (int i = 0; i < n; i++) {
        if (qs[i] || reqs[i] == MPI_REQUEST_NULL)
            continue;
        int flag = 0;
        PMPI_Test(&reqs[i], &flag, st);
        if (flag)
            return i;
    }
    return -1;
}

static void empty_status(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    memset(st, 0, sizeof *st);
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
}

/* charge: a failed test costs a poll (not when Waitsome looks for more). */
static int any_common(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st,
                      double deadline, int charge)
{
    int active;
    ereq **qs = collect(n, reqs, &active);
    *idx = MPI_UNDEFINED;
    if (active == 0) {
        *flag = 1;
        empty_status(st);
        free(qs);
        return 0;
    }
    int r = real_done(n, reqs, qs, st);
    if (r >= 0) {
        *flag = 1;
        *idx = r;
        free(qs);
        return 0;
    }
    int ours = 0;
    for (int k = 0; k < n; k++)
        ours += qs[k] != NULL;
    if (ours == 0) {
        /* Only requests that are not messages, none done: wait for real. */
        if (deadline < INFINITY) {
            *flag = 0;
        } else {
            PMPI_Waitany(n, reqs, idx, st);
            *flag = 1;
        }
        free(qs);
        return 0;
    }
    decision d;
    int decided;
    int i = first_done(qs, n, deadline, &d, &decided);
    *flag = i >= 0;
    if (i < 0 && deadline < INFINITY && charge)
        poll_cost();
    if (i >= 0) {
        req_finish(qs[i], &reqs[i], st, decided ? &d : NULL);
        *idx = i;
    }
    free(qs);
    return 0;
}

EMU_API int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
    BEGIN("MPI_Waitany");
    int flag;
    any_common(n, reqs, idx, &flag, st, INFINITY, 1);
    END();
}

EMU_API int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
{
    BEGIN("MPI_Testany");
    any_common(n, reqs, idx, flag, st, E.clock, 1);
    END();
}

EMU_API int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    BEGIN("MPI_Test");
    ereq *q = req_find(*req);
    if (!q) {
        PMPI_Test(req, flag, st);
        END();
    }
    int idx;
    any_common(1, req, &idx, flag, st, E.clock, 1);
    END();
}

static int some_common(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[],
                       double deadline)
{
    int active;
    ereq **qs = collect(n, reqs, &active);
    free(qs);
    if (active == 0) {
        *outcount = MPI_UNDEFINED;
        return 0;
    }
    *outcount = 0;
    int first, flag;
    MPI_Status st;
    any_common(n, reqs, &first, &flag, &st, deadline, 1);
    if (!flag)
        return 0;
    idx[0] = first;
    if (sts != MPI_STATUSES_IGNORE)
        sts[0] = st;
    *outcount = 1;
    /* Then every other one done by now. */
    for (;;) {
        int j;
        any_common(n, reqs, &j, &flag, &st, E.clock, 0);
        if (!flag || j == MPI_UNDEFINED)
            break;
        idx[*outcount] = j;
        if (sts != MPI_STATUSES_IGNORE)
            sts[*outcount] = st;
        (*outcount)++;
    }
    return 0;
}

EMU_API int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    BEGIN("MPI_Waitsome");
    some_common(n, reqs, outcount, idx, sts, INFINITY);
    END();
}

EMU_API int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    BEGIN("MPI_Testsome");
    some_common(n, reqs, outcount, idx, sts, E.clock);
    END();
}

EMU_API int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    BEGIN("MPI_Testall");
    /* All done by now, or none is touched: each must finish by the clock. */
    int active;
    ereq **qs = collect(n, reqs, &active);
    int all = 1;
    for (int i = 0; i < n && all; i++) {
        if (!qs[i]) {
            int f = 1;
            MPI_Status st;
            if (reqs[i] != MPI_REQUEST_NULL)
                PMPI_Request_get_status(reqs[i], &f, &st);
            all = f;
            continue;
        }
        decision d;
        int decided;
        ereq *one[1] = {qs[i]};
        if (first_done(one, 1, E.clock, &d, &decided) < 0)
            all = 0;
    }
    free(qs);
    *flag = all;
    if (!all)
        poll_cost();
    if (all)
        for (int i = 0; i < n; i++) {
            MPI_Status *st = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i];
            ereq *q = req_find(reqs[i]);
            if (q)
                req_finish(q, &reqs[i], st, NULL);
            else
                PMPI_Wait(&reqs[i], st);
        }
    END();
}

EMU_API int MPI_Request_free(MPI_Request *req)
{
    BEGIN("MPI_Request_free");
    ereq *q = req_find(*req);
    if (q && q->kind != REQ_SEND)
        die("MPI_Request_free of a receive request is not emulated");
    if (q) {
        /* Its data still goes; the library completes it at MPI_Finalize. */
        if (q->copied) {
            PMPI_Grequest_complete(q->handle);
            PMPI_Request_free(&q->handle);
            q->copied = 0;
        }
        q->handle = MPI_REQUEST_NULL;
        *req = MPI_REQUEST_NULL;
    } else {
        PMPI_Request_free(req);
    }
    END();
}

EMU_API int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *st)
{
    if (E.on && req_find(req))
        die("MPI_Request_get_status on a point-to-point request is not emulated (use MPI_Test)");
    return PMPI_Request_get_status(req, flag, st);
}

/* ---- communicators --------------------------------------------------- */

/* Agree on a context for a new communicator: an emulated allreduce over the
 * parent (max of the members' next free context). */
static void coll_allreduce(ecomm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype t,
                           MPI_Op op);

static uint32_t agree_ctx(ecomm *parent)
{
    unsigned v = E.next_ctx, m = 0;
    coll_allreduce(parent, &v, &m, 1, MPI_UNSIGNED, MPI_MAX);
    E.next_ctx = m + 1;
    return m;
}

/* Every communicator constructor: agree on the new one's context over the
 * parent (an emulated allreduce), let MPI make it, register it. */
#define COMM_MAKE(name, comm, out, ...)                                                        \
    do {                                                                                       \
        BEGIN(#name);                                                                          \
        uint32_t ctx_ = agree_ctx(comm_get(comm, #name));                                      \
        P##name(comm, __VA_ARGS__, out);                                                       \
        if (*(out) != MPI_COMM_NULL)                                                           \
            comm_add(*(out), ctx_, 1);                                                         \
        END();                                                                                 \
    } while (0)

EMU_API int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
    BEGIN("MPI_Comm_dup");
    uint32_t ctx = agree_ctx(comm_get(comm, "MPI_Comm_dup"));
    PMPI_Comm_dup(comm, out);
    comm_add(*out, ctx, 1);
    END();
}

EMU_API int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *out)
{
    COMM_MAKE(MPI_Comm_dup_with_info, comm, out, info);
}

EMU_API int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
    COMM_MAKE(MPI_Comm_split, comm, out, color, key);
}

EMU_API int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out)
{
    COMM_MAKE(MPI_Comm_split_type, comm, out, type, key, info);
}

EMU_API int MPI_Comm_create(MPI_Comm comm, MPI_Group g, MPI_Comm *out)
{
    COMM_MAKE(MPI_Comm_create, comm, out, g);
}

EMU_API int MPI_Comm_free(MPI_Comm *comm)
{
    BEGIN("MPI_Comm_free");
    ecomm *e = comm_find(*comm);
    if (e && e->owned)
        comm_retire(e);
    PMPI_Comm_free(comm);
    END();
}

/* ---- collectives ---------------------------------------------------------
 * Built from the emulated point-to-point on the hidden `coll` communicator,
 * so they cost what their messages cost (docs/emulator.md lists the
 * algorithms).  Tags keep one collective's messages apart from the next. */

static void csend(ecomm *c, const void *b, int n, MPI_Datatype t, int dst, int tag)
{
    if (send_copied(c, dst, n, t, MODE_STD))
        send_detached(c, 1, b, n, t, dst, tag, MODE_STD); /* as send_blocking */
    else
        do_send(c, 1, b, n, t, dst, tag, MODE_STD);
}
static void crecv(ecomm *c, void *b, int n, MPI_Datatype t, int src, int tag)
{
    recv_known(c, 1, b, n, t, src, tag, MPI_STATUS_IGNORE, 0);
}

/* A buffer for count elements of t (true extent). */
static void *tmpbuf(int count, MPI_Datatype t, void **base)
{
    MPI_Aint lb, extent, tlb, textent;
    PMPI_Type_get_extent(t, &lb, &extent);
    PMPI_Type_get_true_extent(t, &tlb, &textent);
    size_t n = count > 0 ? (size_t)textent + (size_t)(count - 1) * (size_t)extent : 1;
    char *p = malloc(n + 1);
    if (!p)
        oom();
    *base = p;
    return p - tlb;
}

/* Local copy of count elements (no virtual cost). */
static void local_copy(const void *src, int scount, MPI_Datatype stype, void *dst, int rcount,
                       MPI_Datatype rtype)
{
    PMPI_Sendrecv(src, scount, stype, 0, 7, dst, rcount, rtype, 0, 7, E.self, MPI_STATUS_IGNORE);
}

static void coll_bcast(ecomm *c, void *buf, int count, MPI_Datatype t, int root)
{
    /* Binomial tree on ranks relative to the root. */
    int n = c->size, me = (c->rank - root + n) % n, mask = 1;
    while (mask < n) {
        if (me & mask) {
            crecv(c, buf, count, t, (me - mask + root) % n, COLL_TAG0 + 1);
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while (mask > 0) {
        if (me + mask < n)
            csend(c, buf, count, t, (me + mask + root) % n, COLL_TAG0 + 1);
        mask >>= 1;
    }
}

/* Reduce into rbuf at root (rbuf significant at root only). */
static void coll_reduce(ecomm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype t,
                        MPI_Op op, int root)
{
    int n = c->size, commute = 0;
    PMPI_Op_commutative(op, &commute);
    void *b1, *b2;
    void *acc = tmpbuf(count, t, &b1), *in = tmpbuf(count, t, &b2);
    local_copy(sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, t, acc, count, t);
    if (!commute) {
        /* Linear, in rank order, so a non-commutative op sees r0 op r1 op ... */
        if (c->rank == root) {
            void *b3;
            void *res = tmpbuf(count, t, &b3);
            for (int r = 0; r < n; r++) {
                if (r == root)
                    local_copy(acc, count, t, in, count, t);
                else
                    crecv(c, in, count, t, r, COLL_TAG0 + 2);
                if (r == 0)
                    local_copy(in, count, t, res, count, t);
                else {
                    PMPI_Reduce_local(res, in, count, t, op); /* in = res op in */
                    local_copy(in, count, t, res, count, t);
                }
            }
            local_copy(res, count, t, rbuf, count, t);
            free(b3);
        } else {
            csend(c, acc, count, t, root, COLL_TAG0 + 2);
        }
        free(b1);
        free(b2);
        return;
    }
    /* Binomial tree toward the root. */
    int me = (c->rank - root + n) % n, mask = 1;
    while (mask < n) {
        if (me & mask) {
            csend(c, acc, count, t, (me - mask + root) % n, COLL_TAG0 + 2);
            break;
        }
        if (me + mask < n) {
            crecv(c, in, count, t, (me + mask + root) % n, COLL_TAG0 + 2);
            PMPI_Reduce_local(in, acc, count, t, op); /* acc = in op acc */
        }
        mask <<= 1;
    }
    if (c->rank == root)
        local_copy(acc, count, t, rbuf, count, t);
    free(b1);
    free(b2);
}

static void coll_allreduce(ecomm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype t,
                           MPI_Op op)
{
    coll_reduce(c, sbuf, rbuf, count, t, op, 0);
    coll_bcast(c, rbuf, count, t, 0);
}

static void coll_barrier(ecomm *c)
{
    /* Dissemination: ceil(log2 n) rounds of a 0-byte send and receive. */
    int n = c->size;
    for (int d = 1; d < n; d <<= 1) {
        ereq q;
        send_start(&q, c, 1, NULL, 0, MPI_BYTE, (c->rank + d) % n, COLL_TAG0 + 3, MODE_STD);
        crecv(c, NULL, 0, MPI_BYTE, (c->rank - d + n) % n, COLL_TAG0 + 3);
        send_finish(&q);
    }
}

static MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

/* Linear gather(v): the root receives from each rank in rank order. */
static void coll_gatherv(ecomm *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                         const int *rcounts, const int *displs, int rcount, MPI_Datatype rtype,
                         int root)
{
    if (c->rank != root) {
        csend(c, sbuf, scount, stype, root, COLL_TAG0 + 4);
        return;
    }
    MPI_Aint ext = extent_of(rtype);
    for (int r = 0; r < c->size; r++) {
        int n = rcounts ? rcounts[r] : rcount;
        char *at = (char *)rbuf + (rcounts ? (MPI_Aint)displs[r] : (MPI_Aint)r * rcount) * ext;
        if (r == root) {
            if (sbuf != MPI_IN_PLACE)
                local_copy(sbuf, scount, stype, at, n, rtype);
        } else {
            crecv(c, at, n, rtype, r, COLL_TAG0 + 4);
        }
    }
}

/* Linear scatter(v): the root sends to each rank in rank order. */
static void coll_scatterv(ecomm *c, const void *sbuf, const int *scounts, const int *displs,
                          int scount, MPI_Datatype stype, void *rbuf, int rcount,
                          MPI_Datatype rtype, int root)
{
    if (c->rank != root) {
        crecv(c, rbuf, rcount, rtype, root, COLL_TAG0 + 5);
        return;
    }
    MPI_Aint ext = extent_of(stype);
    for (int r = 0; r < c->size; r++) {
        int n = scounts ? scounts[r] : scount;
        const char *at =
            (const char *)sbuf + (scounts ? (MPI_Aint)displs[r] : (MPI_Aint)r * scount) * ext;
        if (r == root) {
            if (rbuf != MPI_IN_PLACE)
                local_copy(at, n, stype, rbuf, rcount, rtype);
        } else {
            csend(c, at, n, stype, r, COLL_TAG0 + 5);
        }
    }
}

/* Ring allgather(v): n-1 steps, each passing one block to the right. */
static void coll_allgatherv(ecomm *c, const void *sbuf, int scount, MPI_Datatype stype,
                            void *rbuf, const int *rcounts, const int *displs, int rcount,
                            MPI_Datatype rtype)
{
    int n = c->size, me = c->rank;
    MPI_Aint ext = extent_of(rtype);
#define BLOCK(r) ((char *)rbuf + (rcounts ? (MPI_Aint)displs[r] : (MPI_Aint)(r) * rcount) * ext)
#define COUNT(r) (rcounts ? rcounts[r] : rcount)
    if (sbuf != MPI_IN_PLACE)
        local_copy(sbuf, scount, stype, BLOCK(me), COUNT(me), rtype);
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int s = 0; s < n - 1; s++) {
        int sb = (me - s + n) % n, rb = (me - s - 1 + n) % n;
        ereq q;
        send_start(&q, c, 1, BLOCK(sb), COUNT(sb), rtype, right, COLL_TAG0 + 6, MODE_STD);
        crecv(c, BLOCK(rb), COUNT(rb), rtype, left, COLL_TAG0 + 6);
        send_finish(&q);
    }
#undef BLOCK
#undef COUNT
}

/* Pairwise exchange alltoall(v): in step s send to me+s, receive from me-s. */
static void coll_alltoallv(ecomm *c, const void *sbuf, const int *scounts, const int *sdispls,
                           int scount, MPI_Datatype stype, void *rbuf, const int *rcounts,
                           const int *rdispls, int rcount, MPI_Datatype rtype)
{
    int n = c->size, me = c->rank;
    MPI_Aint se = extent_of(stype), re = extent_of(rtype);
#define SB(r) ((const char *)sbuf + (scounts ? (MPI_Aint)sdispls[r] : (MPI_Aint)(r) * scount) * se)
#define SC(r) (scounts ? scounts[r] : scount)
#define RB(r) ((char *)rbuf + (rcounts ? (MPI_Aint)rdispls[r] : (MPI_Aint)(r) * rcount) * re)
#define RC(r) (rcounts ? rcounts[r] : rcount)
    local_copy(SB(me), SC(me), stype, RB(me), RC(me), rtype);
    for (int s = 1; s < n; s++) {
        int to = (me + s) % n, from = (me - s + n) % n;
        ereq q;
        send_start(&q, c, 1, SB(to), SC(to), stype, to, COLL_TAG0 + 7, MODE_STD);
        crecv(c, RB(from), RC(from), rtype, from, COLL_TAG0 + 7);
        send_finish(&q);
    }
#undef SB
#undef SC
#undef RB
#undef RC
}

EMU_API int MPI_Barrier(MPI_Comm comm)
{
    BEGIN("MPI_Barrier");
    coll_barrier(comm_get(comm, "MPI_Barrier"));
    END();
}

EMU_API int MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm)
{
    BEGIN("MPI_Bcast");
    coll_bcast(comm_get(comm, "MPI_Bcast"), buf, count, t, root);
    END();
}

EMU_API int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op,
                       int root, MPI_Comm comm)
{
    BEGIN("MPI_Reduce");
    coll_reduce(comm_get(comm, "MPI_Reduce"), sbuf, rbuf, count, t, op, root);
    END();
}

EMU_API int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op,
                          MPI_Comm comm)
{
    BEGIN("MPI_Allreduce");
    coll_allreduce(comm_get(comm, "MPI_Allreduce"), sbuf, rbuf, count, t, op);
    END();
}

EMU_API int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                       MPI_Datatype rtype, int root, MPI_Comm comm)
{
    BEGIN("MPI_Gather");
    coll_gatherv(comm_get(comm, "MPI_Gather"), sbuf, scount, stype, rbuf, NULL, NULL, rcount,
                 rtype, root);
    END();
}

EMU_API int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                        const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                        MPI_Comm comm)
{
    BEGIN("MPI_Gatherv");
    coll_gatherv(comm_get(comm, "MPI_Gatherv"), sbuf, scount, stype, rbuf, rcounts, displs, 0,
                 rtype, root);
    END();
}

EMU_API int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                        MPI_Datatype rtype, int root, MPI_Comm comm)
{
    BEGIN("MPI_Scatter");
    coll_scatterv(comm_get(comm, "MPI_Scatter"), sbuf, NULL, NULL, scount, stype, rbuf, rcount,
                  rtype, root);
    END();
}

EMU_API int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[],
                         MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                         MPI_Comm comm)
{
    BEGIN("MPI_Scatterv");
    coll_scatterv(comm_get(comm, "MPI_Scatterv"), sbuf, scounts, displs, 0, stype, rbuf, rcount,
                  rtype, root);
    END();
}

EMU_API int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                          int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    BEGIN("MPI_Allgather");
    coll_allgatherv(comm_get(comm, "MPI_Allgather"), sbuf, scount, stype, rbuf, NULL, NULL,
                    rcount, rtype);
    END();
}

EMU_API int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                           const int rcounts[], const int displs[], MPI_Datatype rtype,
                           MPI_Comm comm)
{
    BEGIN("MPI_Allgatherv");
    coll_allgatherv(comm_get(comm, "MPI_Allgatherv"), sbuf, scount, stype, rbuf, rcounts, displs,
                    0, rtype);
    END();
}

EMU_API int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                         MPI_Datatype rtype, MPI_Comm comm)
{
    BEGIN("MPI_Alltoall");
    if (sbuf == MPI_IN_PLACE)
        die("MPI_Alltoall with MPI_IN_PLACE is not emulated");
    coll_alltoallv(comm_get(comm, "MPI_Alltoall"), sbuf, NULL, NULL, scount, stype, rbuf, NULL,
                   NULL, rcount, rtype);
    END();
}

EMU_API int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                          MPI_Datatype stype, void *rbuf, const int rcounts[],
                          const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
    BEGIN("MPI_Alltoallv");
    if (sbuf == MPI_IN_PLACE)
        die("MPI_Alltoallv with MPI_IN_PLACE is not emulated");
    coll_alltoallv(comm_get(comm, "MPI_Alltoallv"), sbuf, scounts, sdispls, 0, stype, rbuf,
                   rcounts, rdispls, 0, rtype);
    END();
}
