/*
 * coord.c - the emulator's event loop (tb_emu_run): check what the user
 * asked, open the coordinator's socket and shared memory, start the program
 * (launch.c), then until the launcher ends: sleep until a rank says
 * something, read it, let the decisions (decide.c) answer, and stop the run
 * with one line on a deadlock, a rank that never started, or the timeout.
 * Its result is what the ranks reported, with the makespan.
 */
#define _GNU_SOURCE
#include "tenbin/emu.h"

#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/errbuf.h"
#include "core/json.h"
#include "core/proc.h"
#include "emu/coord.h"
#include "tenbin/config.h"

/* One connection of a rank (or a stray) to the coordinator. */
typedef struct conn {
    int fd;
    int rank;
    tb_emu_reader rd;
} conn;

/* How a run stopped early (loop.failed). */
enum {
    STOP_NONE = 0,
    STOP_FAILED = 1,   /* a rank failed or broke the protocol; why says it */
    STOP_TIMEOUT = 2,  /* --timeout */
    STOP_DEADLOCK = 3, /* no rank can go on */
    STOP_NO_START = 4, /* some ranks never reached the coordinator */
    STOP_SIGNAL = 5,   /* stopped from outside (tb_signals_catch) */
};

enum { NEV = 64 }; /* epoll events taken per wake-up */

/* Everything tb_emu_run's loop keeps between its steps. */
typedef struct loop {
    const tb_emu_opts *o;
    char *const *argv;
    coord c;
    int lfd, ep; /* the listening socket, the epoll set (-1: none) */
    conn *conns; /* every connection accepted (a closed one is not reused) */
    size_t nconns, maxconns;
    struct epoll_event *pfd;
    pid_t child; /* the launcher */
    char coord_at[NI_MAXHOST + 16];
    char shm_name[128]; /* the segment's name until every rank mapped it */
    size_t shm_bytes;
    double spin;    /* real seconds to watch the bell before sleeping */
    int yield_spin; /* more ranks than cores: yield while watching */
    int status, exited, failed, finals, nhello, nattached;
    double t0, quiet_since, first_hello, busy_at, socks_at; /* real times */
    double all_hello, all_final;                            /* real times */
    uint32_t seen; /* the shared bell when the rings were last read */
    char why[600];
} loop;

/* Accept every connection waiting on the (non-blocking) listening socket
 * and watch it (epoll data: its index in conns, which never moves). */
static void accept_all(loop *l)
{
    while (l->nconns < l->maxconns) {
        int fd = accept4(l->lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct epoll_event ev = {.events = EPOLLIN, .data.u64 = l->nconns};
        if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
            close(fd);
            continue;
        }
        l->conns[l->nconns++] = (conn){fd, -1, {TB_BUF_INIT}};
    }
}

/* What the user asked, checked before anything starts: the platform opened
 * into *plat, its path made absolute into platform (every rank reads it). */
static int check_request(const tb_emu_opts *o, char *const argv[], tb_platform **plat,
                         char *platform, size_t platlen, char *err, size_t errlen)
{
    if (o->ranks < 1)
        return tb__errf(err, errlen, TB_ERR_RANGE, "-n: expected at least 1 rank, got %d",
                        o->ranks);
    char perr[512];
    int rc = tb_platform_open(o->platform, o->seed, plat, perr, sizeof perr);
    if (rc != TB_OK)
        return tb__errf(err, errlen, rc, "--platform: %s", perr);
    size_t cores = tb_platform_cores(*plat);
    if ((size_t)o->ranks > cores)
        return tb__errf(err, errlen, TB_ERR_SIZE,
                        "%d ranks do not fit the platform: it has %zu cores", o->ranks, cores);
    if (!tb__runnable(argv[0]))
        return tb__errf(err, errlen, TB_ERR_IO, "%s: no such program (or not executable)", argv[0]);
    if (access(o->library, R_OK) != 0)
        return tb__errf(err, errlen, TB_ERR_IO, "%s: cannot read the emulation library: %s",
                        o->library, strerror(errno));
    struct stat st;
    if (stat(o->platform, &st) == 0 && o->platform[0] != '/' &&
        getcwd(platform, platlen - strlen(o->platform) - 2)) {
        strcat(platform, "/");
        strcat(platform, o->platform);
    } else {
        snprintf(platform, platlen, "%s", o->platform);
    }
    return TB_OK;
}

/* The environment's knobs: TENBIN_EMU_SHM (0: TCP for every rank),
 * TENBIN_EMU_SPIN, TENBIN_EMU_AHEAD.  *use_shm gets the first. */
static int read_knobs(loop *l, long *use_shm, char *err, size_t errlen)
{
    long ahead_max;
    /* More ranks than cores: the watching coordinator yields its core in
     * the loop (the rank it waits for may need it) instead of pausing. */
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    l->yield_spin = online > 0 && l->c.P > online;
    const char *bad = NULL;
    if (tb_env_int_in("TENBIN_EMU_SHM", 0, 1, use_shm) != TB_OK)
        bad = "TENBIN_EMU_SHM: expected 0 or 1";
    if (tb_env_double_in("TENBIN_EMU_SPIN", 0, 1, &l->spin) != TB_OK && !bad)
        bad = "TENBIN_EMU_SPIN: expected seconds from 0 to 1";
    if (tb_env_int_in("TENBIN_EMU_AHEAD", 0, TB_EMU_AHEAD_MAX, &ahead_max) != TB_OK && !bad)
        bad = "TENBIN_EMU_AHEAD: expected a number from 0 to 32";
    _Static_assert(TB_EMU_AHEAD_MAX == 32, "the message above says 32");
    l->c.ahead_max = (size_t)ahead_max;
    return bad ? tb__errf(err, errlen, TB_ERR_INVALID, "%s", bad) : TB_OK;
}

/* The coordinator's state, its socket, epoll set and shared memory, then
 * the launcher started on the program. */
static int open_run(loop *l, const tb_platform *plat, const char *platform, char *err,
                    size_t errlen)
{
    const tb_emu_opts *o = l->o;
    l->maxconns = 2 * (size_t)l->c.P + 8; /* every rank's connection and as many strays */
    l->conns = calloc(l->maxconns, sizeof *l->conns);
    l->pfd = calloc(NEV, sizeof *l->pfd);
    if (tb__emu_coord_init(&l->c, plat) != TB_OK || !l->conns || !l->pfd)
        return tb__errf(err, errlen, TB_ERR_NOMEM, "out of memory");
    const char *laddr =
        o->size >= offsetof(tb_emu_opts, listen) + sizeof o->listen && o->listen && *o->listen
            ? o->listen
            : "127.0.0.1";
    l->lfd = tb__emu_listen_on(laddr, l->coord_at, sizeof l->coord_at);
    if (l->lfd < 0)
        return tb__errf(err, errlen, TB_ERR_IO, "cannot listen on %s: %s", laddr,
                        errno == EADDRNOTAVAIL ? "no such address on this machine"
                                               : strerror(errno));
    /* epoll: a wake-up costs what is ready, not a look at all P sockets. */
    l->ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event lev = {.events = EPOLLIN, .data.u64 = UINT64_MAX};
    if (l->ep < 0 || epoll_ctl(l->ep, EPOLL_CTL_ADD, l->lfd, &lev) != 0)
        return tb__errf(err, errlen, TB_ERR_IO, "epoll: %s", strerror(errno));
    long use_shm;
    int rc = read_knobs(l, &use_shm, err, errlen);
    if (rc != TB_OK)
        return rc;
    char seg[200], shm_env[256] = "";
    if (use_shm && tb_emu_shm_create(l->c.P, &l->c.shm, &l->shm_bytes, l->shm_name,
                                     sizeof l->shm_name, seg, sizeof seg) == TB_OK)
        snprintf(shm_env, sizeof shm_env, "TENBIN_EMU_SEGMENT=%s", seg);
    l->t0 = tb_wtime();
    int exec_errno = 0;
    l->child =
        tb__emu_launch(o, l->argv, l->coord_at, platform, shm_env[0] ? shm_env : NULL, &exec_errno);
    if (l->child < 0)
        return tb__errf(err, errlen, TB_ERR_IO, "cannot run %s: %s",
                        o->mpiexec ? o->mpiexec : TENBIN_MPIEXEC,
                        strerror(exec_errno ? exec_errno : errno));
    l->quiet_since = tb_wtime();
    return TB_OK;
}

/* Sleep until a rank says something: up to 10 ms, or until the next
 * question held back is due.  All ranks on the rings: sleep on the bell, and
 * look at the sockets (a rank that ended, a FAIL) every millisecond.  While
 * frames come often, watch the bell a while before sleeping: a wake-up
 * costs more than the gap between frames.  Otherwise sleep in poll on the
 * sockets (ranks on a ring then send a BELL there).  *rung: the bell rang;
 * returns the sockets with something to read (in l->pfd). */
static int wait_frames(loop *l, int *rung)
{
    coord *c = &l->c;
    double wait = 0.01;
    if (c->ask_due < INFINITY) {
        double d = c->ask_due - tb_wtime();
        wait = d < 0 ? 0 : d < wait ? d : wait;
    }
    int pr = 0, on_bell = c->shm && l->nattached == c->P;
    *rung = 0;
    if (on_bell && atomic_load(&c->shm->bell) == l->seen && wait > 0) {
        double until = l->busy_at + l->spin, t = tb_wtime();
        if (until - t > wait)
            until = t + wait;
        while (atomic_load_explicit(&c->shm->bell, memory_order_acquire) == l->seen && t < until) {
            if (l->yield_spin)
                sched_yield();
            else
                tb_emu_cpu_relax();
            t = tb_wtime();
        }
    }
    if (c->shm)
        atomic_store(&c->shm->coord_sleeping, on_bell ? TB_EMU_ON_BELL : TB_EMU_ON_POLL);
    if ((c->shm && atomic_load(&c->shm->bell) != l->seen) || wait == 0) {
        /* frames came: no sleep */
    } else if (on_bell) {
        tb_emu_futex_wait(&c->shm->bell, l->seen, (long)(wait * 1e9));
    } else {
        struct timespec wts = {0, (long)(wait * 1e9)};
        struct pollfd epf = {l->ep, POLLIN, 0};
        (void)ppoll(&epf, 1, &wts, NULL);
    }
    if (c->shm) {
        atomic_store(&c->shm->coord_sleeping, TB_EMU_AWAKE);
        uint32_t b = atomic_load(&c->shm->bell);
        *rung = b != l->seen;
        l->seen = b;
    }
    double tnow = tb_wtime();
    if (!on_bell || !*rung || tnow - l->socks_at > 1e-3) {
        l->socks_at = tnow;
        pr = epoll_wait(l->ep, l->pfd, NEV, 0);
    }
    if (pr < 0 && errno != EINTR) {
        snprintf(l->why, sizeof l->why, "poll: %s", strerror(errno));
        l->failed = STOP_FAILED;
    }
    return pr < 0 ? 0 : pr;
}

/* Count the ranks that said hello; once all did, unlink the shared memory
 * (every rank that can has mapped it: no name left behind if this process
 * is killed). */
static void count_hellos(loop *l)
{
    int k = 0;
    for (int i = 0; i < l->c.P; i++)
        k += l->c.r[i].hello;
    if (k > l->nhello && l->nhello == 0)
        l->first_hello = tb_wtime();
    l->nhello = k;
    if (l->nhello == l->c.P) {
        l->all_hello = tb_wtime();
        tb_emu_shm_unlink(l->shm_name);
        l->shm_name[0] = 0;
    }
}

/* Every frame connection cn has: one read, then the frames; a closed
 * connection is closed here too (a rank that ended before MPI_Finalize
 * stops the run). */
static void read_conn(loop *l, conn *cn)
{
    coord *c = &l->c;
    int closed = 0;
    long got = tb_emu_reader_fill(cn->fd, &cn->rd, &closed);
    int was_attached = cn->rank >= 0 && c->r[cn->rank].up;
    l->failed =
        tb__emu_take_frames(c, &cn->rd, cn->fd, &cn->rank, &l->finals, l->why, sizeof l->why);
    if (!l->failed && !was_attached && cn->rank >= 0 && c->r[cn->rank].up) {
        /* Frames it put in the ring before its HELLO was read (their dirty
         * bit may have been taken already). */
        l->nattached++;
        l->failed = tb__emu_drain_one(c, cn->rank, &l->finals, l->why, sizeof l->why);
    }
    /* A rank on a ring that ended: what it put there before (its FINAL)
     * comes first. */
    if (got < 0 && !l->failed && cn->rank >= 0 && c->r[cn->rank].up)
        l->failed = tb__emu_drain_one(c, cn->rank, &l->finals, l->why, sizeof l->why);
    if (got < 0 && !l->failed) {
        int rk = cn->rank;
        close(cn->fd); /* which takes it out of the epoll set */
        cn->fd = -1;
        tb_emu_reader_free(&cn->rd);
        if (rk >= 0 && !c->r[rk].done && !c->fail[0]) {
            snprintf(l->why, sizeof l->why, "rank %d ended before MPI_Finalize", rk);
            l->failed = STOP_FAILED;
        }
        if (rk >= 0)
            c->r[rk].fd = -1;
        return;
    }
    if (cn->rank >= 0 && l->nhello < c->P)
        count_hellos(l);
}

/* Stop the launcher and its ranks after a failure. */
static void stop_all(loop *l)
{
    tb__emu_kill_all(&l->c, l->child, SIGTERM);
    l->status = tb__emu_reap(&l->c, l->child);
    l->exited = 1;
}

/* Whether the run must stop although nothing failed: a deadlock that held
 * for a while, ranks that never started, the timeout.  Sets failed and why. */
static void check_stuck(loop *l)
{
    coord *c = &l->c;
    /* A deadlock must hold for a while with nothing said: an acknowledgement
     * a rank sent from a posted receive travels outside what the coordinator
     * sees, and wakes its sender a moment later. */
    if (tb_wtime() - l->quiet_since > 0.5 && tb__emu_deadlocked(c, l->why, sizeof l->why)) {
        l->failed = STOP_DEADLOCK;
        return;
    }
    /* MPI_Init ends on every rank at about the same time: ranks that have
     * not said hello long after the first did are not emulated (the preload
     * failed, or another launcher started them). */
    double late = 10 + 0.1 * c->P;
    if (l->nhello > 0 && l->nhello < c->P && tb_wtime() - l->first_hello > late) {
        snprintf(l->why, sizeof l->why,
                 "only %d of %d ranks started under the emulator (%.0f s after the first; "
                 "could the others not preload libtenbin-emu.so? their output says)",
                 l->nhello, c->P, late);
        l->failed = STOP_NO_START;
        return;
    }
    int sig = tb_signals_pending();
    if (sig) { /* the program's ranks are stopped with the launcher */
        snprintf(l->why, sizeof l->why,
                 "interrupted by %s after %.3g s: the program was stopped, nothing is predicted",
                 tb_signal_name(sig), tb_wtime() - l->t0);
        l->failed = STOP_SIGNAL;
        return;
    }
    double timeout = l->o->timeout;
    if (timeout > 0 && tb_wtime() - l->t0 > timeout) {
        if (l->nhello < c->P) /* still starting: say how far it got */
            snprintf(l->why, sizeof l->why,
                     "no end after %g s of real time (stopped; see --timeout): %d of %d "
                     "ranks were out of MPI_Init",
                     timeout, l->nhello, c->P);
        else
            snprintf(l->why, sizeof l->why,
                     "no end after %g s of real time (stopped; see --timeout)", timeout);
        l->failed = STOP_TIMEOUT;
        tb__emu_dump_state(c, "stopped by the timeout");
    }
}

/* One turn of the loop: wait, read, decide, look for a reason to stop. */
static void step(loop *l)
{
    coord *c = &l->c;
    int rung;
    int pr = wait_frames(l, &rung);
    int new_conn = 0;
    for (int i = 0; i < pr && !l->failed; i++) {
        if (l->pfd[i].data.u64 == UINT64_MAX) {
            new_conn = 1;
            continue;
        }
        conn *cn = &l->conns[l->pfd[i].data.u64];
        if (cn->fd >= 0)
            read_conn(l, cn);
    }
    if (new_conn && !l->failed)
        accept_all(l);
    if (c->shm && !l->failed && (rung || pr > 0))
        l->failed = tb__emu_drain_rings(c, 0, &l->finals, l->why, sizeof l->why);
    if (rung || pr > 0)
        l->busy_at = tb_wtime();
    if (!l->failed && tb__emu_decide_all(c) != TB_OK) {
        /* A rank's connection broke while being answered: it ended. */
        snprintf(l->why, sizeof l->why, "lost a rank's connection");
        l->failed = STOP_FAILED;
    }
    for (int k = 0; c->nbacklog > 0 && k < c->P; k++)
        if (c->r[k].backlog.len > 0)
            tb__emu_flush_down(c, k);
    if (pr > 0 || rung)
        l->quiet_since = tb_wtime();
    if (l->finals == c->P && l->all_final == 0)
        l->all_final = tb_wtime();
    if (!l->failed)
        check_stuck(l);
    if (l->failed) {
        stop_all(l);
        return;
    }
    if (waitpid(l->child, &l->status, WNOHANG) == l->child)
        l->exited = 1;
}

/* Frames still buffered after the launcher ended (FINALs, a FAIL), also
 * from ranks whose connection was still waiting to be accepted; then every
 * connection closed. */
static void drain_after(loop *l)
{
    if (!l->failed)
        accept_all(l);
    for (size_t i = 0; i < l->nconns && !l->failed; i++) {
        conn *cn = &l->conns[i];
        if (cn->fd < 0)
            continue;
        while (tb_emu_reader_fill(cn->fd, &cn->rd, NULL) > 0)
            ;
        l->failed = tb__emu_take_frames(&l->c, &cn->rd, cn->fd, &cn->rank, &l->finals, l->why,
                                        sizeof l->why);
    }
    if (l->c.shm && !l->failed && tb__emu_drain_rings(&l->c, 1, &l->finals, l->why, sizeof l->why))
        l->failed = STOP_FAILED;
    for (size_t i = 0; i < l->nconns; i++) {
        if (l->conns[i].fd >= 0)
            close(l->conns[i].fd);
        tb_emu_reader_free(&l->conns[i].rd);
    }
}

/* The one line for a run whose launcher failed (killed, or non-zero). */
static int launcher_failed(const loop *l, int hellos, char *err, size_t errlen)
{
    const char *prog = l->argv[0];
    char st_s[64];
    if (WIFSIGNALED(l->status))
        snprintf(st_s, sizeof st_s, "was killed by signal %d", WTERMSIG(l->status));
    else
        snprintf(st_s, sizeof st_s, "exited with status %d", WEXITSTATUS(l->status));
    if (l->why[0])
        return tb__errf(err, errlen, TB_ERR_STATE, "%s: %s (the launcher %s)", prog, l->why, st_s);
    if (hellos == 0)
        return tb__errf(err, errlen, TB_ERR_STATE,
                        "%s: the run failed before any rank reached the coordinator at %s (the "
                        "launcher %s; ranks on other nodes need --listen with an address of "
                        "this machine they reach)",
                        prog, l->coord_at, st_s);
    return tb__errf(err, errlen, TB_ERR_STATE, "%s: the run failed (the launcher %s)", prog, st_s);
}

/* How the run ended: TB_OK with the result's makespan and idle times
 * complete, or the error and its one line. */
static int verdict(loop *l, char *err, size_t errlen)
{
    coord *c = &l->c;
    const char *prog = l->argv[0];
    int hellos = 0;
    for (int i = 0; i < c->P; i++)
        hellos += c->r[i].hello;
    if (tb_signals_pending() && (l->failed || c->fail[0] || !WIFEXITED(l->status) ||
                                 WEXITSTATUS(l->status) != 0)) {
        /* Ctrl-C reaches the program's ranks too: whatever broke, it was that */
        if (l->failed != STOP_SIGNAL)
            snprintf(l->why, sizeof l->why,
                     "interrupted by %s after %.3g s: the program was stopped, nothing is "
                     "predicted",
                     tb_signal_name(tb_signals_pending()), tb_wtime() - l->t0);
        return tb__errf(err, errlen, TB_ERR_INTERRUPTED, "%s: %s", prog, l->why);
    }
    if (c->fail[0])
        return tb__errf(err, errlen, TB_ERR_STATE, "%s", c->fail);
    if (l->failed == STOP_DEADLOCK || l->failed == STOP_NO_START)
        return tb__errf(err, errlen, TB_ERR_STATE, "%s: %s", prog, l->why);
    if (l->failed == STOP_TIMEOUT)
        return tb__errf(err, errlen, TB_ERR_TIMEOUT, "%s", l->why);
    if (WIFSIGNALED(l->status) || (WIFEXITED(l->status) && WEXITSTATUS(l->status) != 0))
        return launcher_failed(l, hellos, err, errlen);
    if (l->failed)
        return tb__errf(err, errlen, TB_ERR_STATE, "%s: %s", prog, l->why);
    if (hellos < c->P)
        return tb__errf(err, errlen, TB_ERR_STATE,
                        "%s: %d of %d ranks called MPI_Init through the emulator (is it a "
                        "dynamically linked MPI program built with " TENBIN_MPI_FLAVOUR "?)",
                        prog, hellos, c->P);
    if (l->finals < c->P)
        return tb__errf(err, errlen, TB_ERR_STATE, "%s: %d of %d ranks called MPI_Finalize", prog,
                        l->finals, c->P);
    double mk = 0;
    for (int i = 0; i < c->P; i++)
        if (c->res->rank[i].end_s > mk)
            mk = c->res->rank[i].end_s;
    c->res->makespan_s = mk;
    for (int i = 0; i < c->P; i++)
        c->res->rank[i].idle_s += mk - c->res->rank[i].end_s;
    return TB_OK;
}

/* The run's times and counters into its result. */
static void record_times(loop *l)
{
    coord *c = &l->c;
    c->res->wall_s = tb_wtime() - l->t0;
    if (l->all_final == 0)
        l->all_final = tb_wtime();
    if (l->all_hello > 0) {
        c->res->startup_s = l->all_hello - l->t0;
        c->res->run_s = l->all_final - l->all_hello;
    }
    c->res->decisions = c->decisions;
    c->res->unchecked = c->unchecked;
    c->res->unchecked_rendezvous = c->unchecked_rdv;
    c->res->answered_ahead = c->ahead;
}

int tb_emu_run(const tb_emu_opts *o, char *const argv[], tb_emu_result **out, char *err,
               size_t errlen)
{
    if (!o || o->size < sizeof *o || !argv || !argv[0] || !out || !o->platform || !o->library)
        return tb__errf(err, errlen, TB_ERR_INVALID, "invalid arguments");
    *out = NULL;
    tb_platform *plat = NULL;
    char platform[4096];
    int rc = check_request(o, argv, &plat, platform, sizeof platform, err, errlen);
    loop l = {.o = o, .argv = argv, .lfd = -1, .ep = -1};
    if (rc == TB_OK) {
        l.c.P = o->ranks;
        l.c.lookahead = tb_net_lookahead(plat, o->ranks);
        rc = open_run(&l, plat, platform, err, errlen);
    }
    if (rc == TB_OK) {
        while (!l.exited)
            step(&l);
        drain_after(&l);
        record_times(&l);
        rc = verdict(&l, err, errlen);
        if (rc == TB_OK) {
            *out = l.c.res;
            l.c.res = NULL;
        }
    }
    if (l.ep >= 0)
        close(l.ep);
    if (l.lfd >= 0)
        close(l.lfd);
    tb_emu_shm_unlink(l.shm_name);
    tb_emu_shm_unmap(l.c.shm, l.shm_bytes);
    tb__emu_coord_free(&l.c);
    free(l.conns);
    free(l.pfd);
    tb_platform_destroy(&plat);
    return rc;
}

void tb_emu_opts_init(tb_emu_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->openmpi = strcmp(TENBIN_MPI_FLAVOUR, "mpich") != 0;
}

int tb_emu_result_json(const tb_emu_result *r, const char *extra, tb_buf *out)
{
    if (!r || !out)
        return TB_ERR_INVALID;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return TB_ERR_NOMEM;
    int bad = 0;
    bad |= tb__json_num(o, "predicted_makespan_s", r->makespan_s);
    bad |= tb__json_num(o, "wall_s", r->wall_s);
    bad |= tb__json_num(o, "startup_wall_s", r->startup_s);
    bad |= tb__json_num(o, "run_wall_s", r->run_s);
    bad |= tb__json_u64(o, "decisions", r->decisions);
    bad |= tb__json_u64(o, "answered_ahead", r->answered_ahead);
    bad |= tb__json_u64(o, "unchecked_decisions", r->unchecked);
    bad |= tb__json_u64(o, "unchecked_rendezvous", r->unchecked_rendezvous);
    cJSON *ranks = cJSON_AddArrayToObject(o, "ranks");
    bad |= !ranks;
    for (int i = 0; i < r->ranks && !bad; i++) {
        const tb_emu_rank *k = &r->rank[i];
        cJSON *j = cJSON_CreateObject();
        bad |= !cJSON_AddItemToArray(ranks, j);
        if (bad)
            break;
        bad |= tb__json_int(j, "rank", k->rank);
        bad |= tb__json_str(j, "host", k->host_name);
        bad |= tb__json_num(j, "compute_s", k->compute_s);
        bad |= tb__json_num(j, "send_s", k->send_s);
        bad |= tb__json_num(j, "recv_s", k->recv_s);
        bad |= tb__json_num(j, "idle_s", k->idle_s);
        bad |= tb__json_num(j, "end_s", k->end_s);
        bad |= tb__json_u64(j, "messages_sent", k->messages_sent);
        bad |= tb__json_u64(j, "bytes_sent", k->bytes_sent);
        bad |= tb__json_u64(j, "messages_received", k->messages_received);
    }
    return tb__json_emit(o, bad, extra, out);
}

void tb_emu_result_free(tb_emu_result **pr)
{
    if (!pr || !*pr)
        return;
    tb_emu_result *r = *pr;
    for (int i = 0; r->trace && i < r->ranks; i++)
        tb_buf_free(&r->trace[i]);
    free(r->trace);
    free(r->rank);
    free(r);
    *pr = NULL;
}
