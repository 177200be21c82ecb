/*
 * emu.c - libtenbin-emu.so: emulate an unmodified MPI program on a modelled
 * platform (S3).  See emu.h for the state, docs/emulator.md for the model and
 * the synchronisation.  This file: failing, the connection to the
 * coordinator, the virtual clock and the trace, MPI_Init and MPI_Finalize.
 * The other calls by family: p2p.c (sends, receives, probes), wait.c
 * (requests, waits and tests), comm.c (communicators), coll.c
 * (collectives).
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
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
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

/* ---- failing ------------------------------------------------------------ */

struct emu E = {.fd = -1};

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

void tb__emu_die(const char *fmt, ...)
{
    E.in_user = 0;
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
EMU_API void tb__emu_unsupported(const char *name) { tb__emu_die("%s is not emulated", name); }

void tb__emu_oom(void) { tb__emu_die("rank %d: out of memory", E.wrank); }

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
            ns = tb__emu_backoff(ns);
        } else {
            ns = 2000;
        }
    }
}

void tb__emu_send_frame(void)
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

void tb__emu_pack_report(int type, int state, int kind, double deadline, const pattern *pat,
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
        tb__emu_oom();
    E.nsends = E.nrecvs = 0;
}

void tb__emu_report(int state, const pattern *pat, int npat)
{
    /* Running, but held in a real send: the coordinator must know (its
     * destination travels as the deadline). */
    E.said_sending = state == TB_EMU_RUNNING && E.sending_to >= 0;
    if (E.said_sending && E.sending_rdv) /* it acts only after its receiver took it */
        tb__emu_pack_report(TB_EMU_REPORT, TB_EMU_SENDING, TB_EMU_PEEK, E.sending_to,
                            &E.sending_ack, 1);
    else if (E.said_sending)
        tb__emu_pack_report(TB_EMU_REPORT, TB_EMU_SENDING, TB_EMU_PEEK, E.sending_to, pat, npat);
    else
        tb__emu_pack_report(TB_EMU_REPORT, state, TB_EMU_PEEK, INFINITY, pat, npat);
    tb__emu_send_frame();
}

/* A message this rank took (reported with its next report); if it was one
 * of the answers in advance, those are stale (it came another way). */
void tb__emu_took(uint32_t src, uint64_t seq)
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
long tb__emu_doubled(long ns, long cap) { return 2 * ns < cap ? 2 * ns : cap; }

/* Sleep ns of real time; the next sleep (doubling to TENBIN_EMU_SLEEP_MAX). */
long tb__emu_backoff(long ns)
{
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
    return tb__emu_doubled(ns, E.sleep_max_ns);
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
            tb__emu_die("rank %d: malformed message from the coordinator", E.wrank);
        if (E.down) {
            long got = tb_emu_ring_fill(E.down, &E.rd);
            if (got < 0)
                tb__emu_oom();
            if (got > 0)
                continue;
            if (ns == 0)
                return 0;
            if (!tb_emu_ring_sleep(E.down, ns))
                check_coord(); /* the time passed (or a stray wake-up) */
            ns = 0;            /* what is there now, and no more waiting */
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
void tb__emu_poll_coord(void)
{
    if (E.owe_report) {
        E.owe_report = 0;
        tb__emu_report(TB_EMU_RUNNING, NULL, 0);
    }
    while (coord_next(0)) {
        int type = frame_type();
        if (type == TB_EMU_WAKE)
            continue;
        if (type != TB_EMU_ASK)
            tb__emu_die("rank %d: unexpected message %d from the coordinator", E.wrank, type);
        tb__emu_report(TB_EMU_RUNNING, NULL, 0);
    }
}

/* Blocked (reported): sleep until the coordinator says a message we wait
 * for was sent, or `ns` passed.  Questions are not answered (it knows we
 * are blocked).  Returns 1 if woken. */
int tb__emu_sleep_on_coord(long ns)
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
            tb__emu_die("rank %d: unexpected message %d from the coordinator", E.wrank, type);
    }
    return woken;
}

decision tb__emu_decide(const pattern *pat, int npat, double deadline)
{
    return tb__emu_decide_take(pat, npat, deadline, 0);
}

decision tb__emu_decide_take(const pattern *pat, int npat, double deadline, int take)
{
    if (take && npat == 1 && deadline == INFINITY && E.iahead < E.nahead &&
        !memcmp(pat, &E.ahead_pat, sizeof *pat)) {
        /* Answered in advance.  What this rank sent since its last report
         * goes now, without waiting: its receivers may be asleep until the
         * coordinator hears of it. */
        const ahead *a = &E.ahead[E.iahead++];
        decision d = {1, 0, (int)a->src, a->tag, a->seq, a->arrival, 0.0};
        if (E.nsends > 0 || E.nrecvs > 0)
            tb__emu_report(TB_EMU_RUNNING, NULL, 0);
        return d;
    }
    tb__emu_pack_report(TB_EMU_REPORT, TB_EMU_WAITING, take ? TB_EMU_TAKE : TB_EMU_PEEK, deadline,
                        pat, npat);
    tb__emu_send_frame();
    /* Keep MPI moving meanwhile if this rank has requests of its own: a large
     * message it sent may need its help to leave, and posted receives may owe
     * an ack.  Without any, there is nothing to move: sleep until the answer
     * (a rank that wakes every few microseconds on a crowded machine takes
     * the core from the ranks everyone waits for). */
    long ns = E.nreqs > 0 ? 2000 : E.sleep_long_ns;
    for (;;) {
        if (!coord_next(ns)) {
            tb__emu_progress();
            ns = E.nreqs == 0 ? E.sleep_long_ns : tb__emu_doubled(ns, E.sleep_max_ns);
            continue;
        }
        int type = frame_type();
        if (type == TB_EMU_ASK || type == TB_EMU_WAKE)
            continue; /* it knows we wait */
        if (type != TB_EMU_DECIDE)
            tb__emu_die("rank %d: unexpected message %d from the coordinator", E.wrank, type);
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
            tb__emu_die("rank %d: malformed decision from the coordinator", E.wrank);
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
            tb__emu_die("rank %d: malformed decision from the coordinator", E.wrank);
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
        tb__emu_oom();
}

static void enter_inside(const void *me);

/* What E.inside holds while the MPI thread reads a clock or sleeps in virtual
 * time (tb__emu_enter_user): the rank's state is taken, for a moment that
 * never waits on another rank, and no thread is inside an MPI call. */
static const char user_claim;
/* Threads waiting in tb__emu_enter for such a moment to end: while there are,
 * the clock reads of the thread that called MPI last are real (it is not the
 * MPI thread any more), else a loop of them could keep the state for ever. */
static atomic_int wanting;

void tb__emu_enter(void)
{
    const void *me = tb__emu_self();
    int waits = 0;
    for (;;) {
        const void *none = NULL;
        if (atomic_compare_exchange_strong(&E.inside, &none, me) || none == me)
            break;
        if (none != &user_claim)
            tb__emu_die("rank %d: two threads called MPI at the same time (not emulated: one "
                        "thread at a time may)",
                        E.wrank);
        /* The thread that called MPI last reads a clock just now (mpi4py's
         * pool thread begins a call while the main thread's timed wait
         * reads the monotonic clock): that is over in a moment. */
        if (!waits++)
            atomic_fetch_add(&wanting, 1);
        sched_yield();
    }
    if (waits)
        atomic_fetch_sub(&wanting, 1);
    enter_inside(me);
}

int tb__emu_enter_user(void)
{
    const void *me = tb__emu_self(), *none = NULL;
    if (atomic_load(&wanting) > 0 ||
        !atomic_compare_exchange_strong(&E.inside, &none, &user_claim))
        return 0; /* another thread is in MPI: it is the MPI thread now */
    if (E.thread != me || !E.in_user) {
        E.inside = NULL;
        return 0;
    }
    enter_inside(me);
    return 1;
}

static void enter_inside(const void *me)
{
    E.in_user = 0; /* from here on clocks and sleeps are real (clock.c) */
    E.thread = me;
    /* The calling thread's compute since its last call (threads.c).  The two
     * clock reads around the gap are the library's, not compute (on some
     * machines each is a system call of most of a microsecond). */
    double d = tb__emu_thread_enter(tb_thread_cputime()) - E.clock_cost;
    if (d > 0) {
        double end;
        if (tb_speed_finish_time(&E.speed, E.clock, d, &end) != TB_OK)
            tb__emu_die("rank %d: the host's speed never lets %g s of compute at t=%g s finish",
                        E.wrank, d, E.clock);
        trace_span("compute", E.clock, end);
        E.compute += end - E.clock;
        E.clock = end;
    }
    tb__emu_poll_coord();
    if (E.nreqs > 0) {
        tb__emu_early_acks();
        tb__emu_reap_detached();
    }
}

void tb__emu_leave(void)
{
    tb__emu_thread_leave(tb_thread_cputime());
    E.shown_clock = E.clock;
    E.shown_compute = E.compute;
    E.in_user = 1;
    E.inside = NULL;
}

/* Move the clock to t (if later), counting the gap in *bucket. */
void tb__emu_advance(double t, double *bucket, const char *what)
{
    if (t > E.clock) {
        trace_span(what, E.clock, t);
        *bucket += t - E.clock;
        E.clock = t;
    }
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
        tb__emu_oom();
    tb__emu_send_frame(); /* on TCP */
    if (E.shm) {
        E.up = tb_emu_shm_up(E.shm, E.wrank);
        E.down = tb_emu_shm_down(E.shm, E.wrank);
    }
    const char *seed_s = getenv("TENBIN_EMU_SEED");
    uint64_t seed = seed_s ? strtoull(seed_s, NULL, 10) : 1;
    char err[512];
    if (tb_platform_open(plat, seed, &E.plat, err, sizeof err) != TB_OK)
        tb__emu_die("--platform: %s", err);
    if ((size_t)E.P > tb_platform_cores(E.plat))
        tb__emu_die("%d ranks do not fit the platform (%zu cores)", E.P, tb_platform_cores(E.plat));
    E.cluster = malloc((size_t)E.P * sizeof *E.cluster);
    E.pair_last = malloc((size_t)E.P * sizeof *E.pair_last);
    E.seq_to = calloc((size_t)E.P, sizeof *E.seq_to);
    if (!E.cluster || !E.pair_last || !E.seq_to)
        tb__emu_oom();
    for (int r = 0; r < E.P; r++) {
        E.cluster[r] = E.plat->hosts[tb_platform_host_of(E.plat, r)].cluster;
        E.pair_last[r] = -INFINITY;
    }
    if (tb_speed_cursor_init(&E.speed, E.plat, (size_t)tb_platform_host_of(E.plat, E.wrank)) !=
        TB_OK)
        tb__emu_die("rank %d: bad host speed", E.wrank);
    E.lookahead = tb_net_lookahead(E.plat, E.P);
    double smax;
    if (tb_env_double_in("TENBIN_EMU_SLEEP_MAX", 2e-6, 0.5, &smax) != TB_OK)
        tb__emu_die("TENBIN_EMU_SLEEP_MAX: expected seconds from 2e-6 to 0.5");
    E.sleep_max_ns = (long)(smax * 1e9);
    E.sleep_long_ns = 250 * E.sleep_max_ns;
    E.sending_to = -1;
    long cmin;
    if (tb_env_int_in("TENBIN_EMU_COPY_MIN", 0, LONG_MAX, &cmin) != TB_OK)
        tb__emu_die("TENBIN_EMU_COPY_MIN: expected a number of bytes >= 0");
    E.copy_min = (size_t)cmin;
    /* Sleeps of a few microseconds, not the default 50 us of slack; the
     * program's own sleeps keep its slack in virtual time (clock.c). */
    int slack_ns = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    E.user_slack = slack_ns > 0 ? 1e-9 * slack_ns : 0;
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    E.link_free = -INFINITY;
    if (getenv("TENBIN_EMU_TRACE")) {
        char name[300];
        snprintf(name, sizeof name, "rank %d (%s)", E.wrank,
                 E.plat->hosts[tb_platform_host_of(E.plat, E.wrank)].name);
        if (tb_trace_create(&E.trace, E.wrank, 0.0) != TB_OK ||
            tb_trace_set_process_name(E.trace, name) != TB_OK)
            tb__emu_oom();
    }
    PMPI_Comm_dup(MPI_COMM_SELF, &E.self);
    tb__emu_comm_add(MPI_COMM_WORLD, 0, 0);
    tb__emu_comm_add(MPI_COMM_SELF, (uint32_t)(1 + E.wrank), 0);
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
    tb__emu_clock_start();
    E.thread = tb__emu_self();
    tb__emu_thread_leave(tb_thread_cputime());
    E.shown_clock = E.shown_compute = 0;
    E.in_user = 1;
}

EMU_API int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        emu_start();
    return rc;
}

/* Several threads may call MPI, one at a time: MPI_THREAD_SERIALIZED at most,
 * whatever the MPI underneath gives.  A program that asked for
 * MPI_THREAD_MULTIPLE sees that and serialises its calls (mpi4py.futures
 * takes a lock around them), or says itself that it cannot run. */
static int thread_level(int real)
{
    return real == MPI_THREAD_MULTIPLE ? MPI_THREAD_SERIALIZED : real;
}

EMU_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) {
        emu_start();
        if (E.on)
            *provided = thread_level(*provided);
    }
    return rc;
}

EMU_API int MPI_Query_thread(int *provided)
{
    int rc = PMPI_Query_thread(provided);
    if (rc == MPI_SUCCESS && E.on)
        *provided = thread_level(*provided);
    return rc;
}

EMU_API int MPI_Finalize(void)
{
    if (!E.on)
        return PMPI_Finalize();
    tb__emu_enter();
    tb__emu_pack_report(TB_EMU_FINAL, TB_EMU_DONE, TB_EMU_PEEK, INFINITY, NULL, 0);
    int rc = tb_buf_pack_f64(&E.out, E.compute);
    rc |= tb_buf_pack_f64(&E.out, E.send);
    rc |= tb_buf_pack_f64(&E.out, E.recv);
    rc |= tb_buf_pack_f64(&E.out, E.idle);
    rc |= tb_buf_pack_u64(&E.out, E.msgs_sent);
    rc |= tb_buf_pack_u64(&E.out, E.bytes_sent);
    rc |= tb_buf_pack_u64(&E.out, E.msgs_recv);
    tb_buf tr = TB_BUF_INIT;
    if (E.trace && tb_trace_serialize(E.trace, &tr) != TB_OK)
        tb__emu_oom();
    rc |= tb_buf_pack_bytes(&E.out, tr.len ? (const void *)tr.data : "", (uint32_t)tr.len);
    tb_buf_free(&tr);
    tb_trace_destroy(&E.trace);
    if (rc != TB_OK)
        tb__emu_oom();
    tb__emu_send_frame();
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
        if (E.reqs[i]->kind == REQ_COLL)
            free(E.reqs[i]->parts);
        free(E.reqs[i]);
    }
    E.nreqs = 0;
    while (E.ncomms > 0)
        tb__emu_comm_remove(E.comms[E.ncomms - 1]);
    for (size_t i = 0; i < E.ndead; i++)
        tb__emu_comm_remove(E.dead[i]); /* not in E.comms any more: only freed */
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
    E.in_user = 0;
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
    tb__emu_enter();
    double t = E.clock;
    tb__emu_leave();
    return t;
}

EMU_API double MPI_Wtick(void) { return E.on ? 1e-9 : PMPI_Wtick(); }
