/*
 * clock.c - the program's own clocks and sleeps in virtual time (inside
 * libtenbin-emu.so, between MPI_Init and MPI_Finalize).
 *
 * A program that times itself with gettimeofday or clock_gettime (the
 * classic ping-pong benchmarks, Python's time.perf_counter, most
 * applications' own reports) must print the prediction, not the emulation's
 * real speed; a master that sleeps between polls must spend virtual time
 * idle, not get its sleeps for free.  So, on the thread that calls MPI (the
 * one that called it last: MPI_Init's in most programs; mpi4py.futures'
 * pool calls from a thread of its own), while the program (not this library
 * or MPI) runs:
 *
 *   - CLOCK_REALTIME (and _COARSE, and gettimeofday, time, timespec_get):
 *     the real date when virtual time began plus the virtual clock, so that
 *     dates stay plausible; CLOCK_MONOTONIC (_RAW, _COARSE, CLOCK_BOOTTIME):
 *     its value then plus the virtual clock;
 *   - CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID (and clock()): their
 *     value then plus the rank's emulated compute, the CPU time the target
 *     host would have given it;
 *   - nanosleep, clock_nanosleep, usleep, sleep, and the timeouts of select,
 *     pselect, poll, ppoll and epoll_wait when nothing is ready: the virtual
 *     clock moves on by the time asked and the slack Linux adds to it (see
 *     slack() below), counted as idle, and no real time is spent (a sleep
 *     cannot change what the program receives: which message a receive or a
 *     probe sees is decided in virtual time).
 *
 * The program's other threads that have called MPI (outside MPI, then) read
 * the clocks as the last MPI call left them; their sleeps are real.
 * Everywhere else -- before MPI_Init, after MPI_Finalize, inside MPI calls
 * (MPI's own timers and progress), and on every other thread (MPI's
 * progress threads, the program's threads that never called MPI) -- the
 * real functions answer.  Reading a clock from the program's MPI thread is
 * a point where its compute so far is counted, as MPI_Wtime is.
 */
#define _GNU_SOURCE
#include "emu/pmpi/emu.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* Real values when virtual time began. */
static struct {
    double real, mono, pcpu, tcpu;
} base;

typedef int (*gettime_fn)(clockid_t, struct timespec *);
static gettime_fn real_gettime;

/* The next definition of a libc function (ours is the first). */
static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f)
        tb__emu_die("libtenbin-emu: %s not found in the C library", name);
    return f;
}

/* fn = the next definition of `name` (POSIX's way to store what dlsym
 * returns in a function pointer: ISO C has no conversion between the two). */
#define NEXT(fn, name) (*(void **)&(fn) = next(name))

static int real_clock_gettime(clockid_t id, struct timespec *ts)
{
    if (!real_gettime)
        NEXT(real_gettime, "clock_gettime");
    return real_gettime(id, ts);
}

static double real_seconds(clockid_t id)
{
    struct timespec ts;
    if (real_clock_gettime(id, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tb__emu_clock_start(void)
{
    base.real = real_seconds(CLOCK_REALTIME);
    base.mono = real_seconds(CLOCK_MONOTONIC);
    base.pcpu = real_seconds(CLOCK_PROCESS_CPUTIME_ID);
    base.tcpu = real_seconds(CLOCK_THREAD_CPUTIME_ID);
}

/* Whether the caller is the program on its MPI thread (the one that called
 * MPI last), in virtual time. */
static int virtual(void) { return E.on && E.in_user && E.thread == tb__emu_self(); }

/* The virtual clock now, the program's compute so far counted: 1 and *t,
 * or 0 if the caller is not the MPI thread any more (another thread took
 * over since virtual() said so). */
static int now(double *t)
{
    if (!tb__emu_enter_user())
        return 0;
    *t = E.clock;
    tb__emu_leave();
    return 1;
}

/* What clock `id` reads at virtual time t with `compute` seconds of
 * emulated compute; NAN for a clock left real. */
static double reading(clockid_t id, double t, double compute)
{
    switch (id) {
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE:
        return base.real + t;
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_BOOTTIME:
        return base.mono + t;
    case CLOCK_PROCESS_CPUTIME_ID:
        return base.pcpu + compute;
    case CLOCK_THREAD_CPUTIME_ID:
        return base.tcpu + compute;
    default:
        return NAN;
    }
}

static void to_timespec(double s, struct timespec *ts)
{
    double whole = floor(s);
    ts->tv_sec = (time_t)whole;
    ts->tv_nsec = (long)((s - whole) * 1e9);
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static double from_timespec(const struct timespec *ts)
{
    return (double)ts->tv_sec + 1e-9 * (double)ts->tv_nsec;
}

/* Clock `id` as the calling thread reads it in virtual time: 1 and *v, or 0
 * for the real clock.  The MPI thread reads its clock now; another thread
 * that has called MPI (outside MPI: it is not the MPI thread) reads the
 * clock as the last MPI call left it (mpi4py.futures' main thread while its
 * pool's thread calls MPI), so that a program's timings are virtual on
 * every thread that takes part. */
static int virtual_reading(clockid_t id, double *v)
{
    double t, compute;
    if (!E.on)
        return 0;
    if (E.thread == tb__emu_self()) {
        if (!E.in_user || !now(&t))
            return 0;
        compute = E.compute;
    } else if (tb__emu_thread_known()) {
        t = E.shown_clock;
        compute = E.shown_compute;
    } else {
        return 0;
    }
    *v = reading(id, t, compute);
    return !isnan(*v);
}

EMU_API int clock_gettime(clockid_t id, struct timespec *ts)
{
    double v;
    if (!virtual_reading(id, &v))
        return real_clock_gettime(id, ts);
    to_timespec(v, ts);
    return 0;
}

EMU_API int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    double v;
    if (!virtual_reading(CLOCK_REALTIME, &v)) {
        static int (*real)(struct timeval *restrict, void *restrict);
        if (!real)
            NEXT(real, "gettimeofday");
        return real(tv, tz);
    }
    struct timespec ts;
    to_timespec(v, &ts);
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
    return 0;
}

EMU_API time_t time(time_t *out)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out)
        *out = ts.tv_sec;
    return ts.tv_sec;
}

EMU_API int timespec_get(struct timespec *ts, int base_)
{
    if (base_ != TIME_UTC)
        return 0;
    return clock_gettime(CLOCK_REALTIME, ts) == 0 ? base_ : 0;
}

EMU_API clock_t clock(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
        return (clock_t)-1;
    return (clock_t)(from_timespec(&ts) * CLOCKS_PER_SEC);
}

/* ---- sleeps ------------------------------------------------------------- */

/* The program waits `s` seconds of virtual time, idle; if other threads that
 * call MPI run meanwhile, their compute is done during the sleep and it ends
 * no earlier than that (threads.c).  0 if the caller is not the MPI thread
 * any more: then its sleep is a real one. */
static int idle_for(double s)
{
    if (!tb__emu_enter_user())
        return 0;
    double t0 = E.clock;
    if (s > 0 && tb__emu_threads_others()) {
        double allow = 0;
        if (tb_speed_cursor_seek(&E.speed, t0) == TB_OK)
            allow = s * E.speed.speed; /* the CPU time the host gives in s */
        tb__emu_leave();
        double work = tb__emu_threads_beside(allow);
        if (!tb__emu_enter_user())
            return 1; /* another thread calls MPI now: the rank's time is its own */
        double end;
        if (work > 0 && tb_speed_finish_time(&E.speed, t0, work, &end) == TB_OK)
            tb__emu_advance(end, &E.compute, "compute");
    }
    if (s > 0)
        tb__emu_advance(t0 + s, &E.idle, "sleep");
    tb__emu_leave();
    return 1;
}

/*
 * What Linux adds to a timed wait of the calling thread: a sleep ends up to
 * the thread's timer slack after the time asked (PR_GET_TIMERSLACK, 50 us
 * unless the program set it, as it was when MPI_Init began: the library
 * sets its own lower for its waits; none for a real-time thread), and on an idle
 * machine that whole slack passes, since nothing else wakes the timer
 * earlier.  Measured here: nanosleep of 0, 1 us, 1 ms takes 58, 60, 1083 us.
 * The timeout of select, poll and epoll_wait (fds = 1) gets the larger of
 * that and a thousandth of the timeout (a 200th for a thread with nice > 0),
 * at most 100 ms (fs/select.c, select_estimate_accuracy).  A target of
 * Linux nodes has the same; the rest of the 58 us (the wake-up: about 8 us
 * on this machine) is not modelled.
 */
static double slack(double timeout, int fds)
{
    int policy = sched_getscheduler(0);
    if (policy == SCHED_FIFO || policy == SCHED_RR)
        return 0;
    double s = E.user_slack;
    if (fds && timeout > 0) {
        errno = 0;
        int nice = getpriority(PRIO_PROCESS, 0);
        double t = timeout / (nice > 0 && errno == 0 ? 200 : 1000);
        if (t > 0.1)
            t = 0.1;
        if (t > s)
            s = t;
    }
    return s;
}

/* A sleep of s seconds (0 if the time is already past) and its slack. */
static int sleep_for(double s) { return idle_for((s > 0 ? s : 0) + slack(0, 0)); }

/* A timeout of s seconds of a wait on file descriptors and its slack. */
static int timeout_for(double s) { return idle_for(s + slack(s, 1)); }

static int real_nanosleep(const struct timespec *req, struct timespec *rem)
{
    static int (*real)(const struct timespec *, struct timespec *);
    if (!real)
        NEXT(real, "nanosleep");
    return real(req, rem);
}

EMU_API int nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (!virtual() || !req || req->tv_nsec < 0 || req->tv_nsec >= 1000000000L ||
        !sleep_for(from_timespec(req)))
        return real_nanosleep(req, rem);
    if (rem)
        rem->tv_sec = rem->tv_nsec = 0;
    return 0;
}

EMU_API int clock_nanosleep(clockid_t id, int flags, const struct timespec *req,
                            struct timespec *rem)
{
    double v = NAN, t = 0;
    if (virtual() && req && req->tv_nsec >= 0 && req->tv_nsec < 1000000000L &&
        id != CLOCK_PROCESS_CPUTIME_ID && id != CLOCK_THREAD_CPUTIME_ID && now(&t))
        v = reading(id, t, E.compute);
    if (isnan(v) ||
        !sleep_for((flags & TIMER_ABSTIME) ? from_timespec(req) - v : from_timespec(req))) {
        static int (*real)(clockid_t, int, const struct timespec *, struct timespec *);
        if (!real)
            NEXT(real, "clock_nanosleep");
        return real(id, flags, req, rem);
    }
    if (rem && !(flags & TIMER_ABSTIME))
        rem->tv_sec = rem->tv_nsec = 0;
    return 0;
}

EMU_API int usleep(useconds_t us)
{
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    return nanosleep(&ts, NULL);
}

EMU_API unsigned int sleep(unsigned int s)
{
    struct timespec ts = {(time_t)s, 0};
    nanosleep(&ts, NULL);
    return 0;
}

/* ---- waits with a timeout --------------------------------------------------
 * Asked without waiting first; if nothing is ready, the timeout passes in
 * virtual time.  An infinite or zero timeout is the real call's. */

EMU_API int poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
    static int (*real)(struct pollfd *, nfds_t, int);
    if (!real)
        NEXT(real, "poll");
    if (!virtual() || timeout_ms <= 0)
        return real(fds, n, timeout_ms);
    int rc = real(fds, n, 0);
    if (rc == 0 && !timeout_for(1e-3 * timeout_ms))
        return real(fds, n, timeout_ms);
    return rc;
}

EMU_API int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask)
{
    static int (*real)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
    if (!real)
        NEXT(real, "ppoll");
    if (!virtual() || !tmo || (tmo->tv_sec == 0 && tmo->tv_nsec == 0))
        return real(fds, n, tmo, mask);
    struct timespec zero = {0, 0};
    int rc = real(fds, n, &zero, mask);
    if (rc == 0 && !timeout_for(from_timespec(tmo)))
        return real(fds, n, tmo, mask);
    return rc;
}

EMU_API int select(int n, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *tv)
{
    static int (*real)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
    if (!real)
        NEXT(real, "select");
    if (!virtual() || !tv || (tv->tv_sec == 0 && tv->tv_usec == 0))
        return real(n, rd, wr, ex, tv);
    double s = (double)tv->tv_sec + 1e-6 * (double)tv->tv_usec;
    struct timeval zero = {0, 0};
    fd_set sets[3];
    fd_set *in[3] = {rd, wr, ex};
    for (int i = 0; i < 3; i++)
        if (in[i])
            sets[i] = *in[i];
    int rc = real(n, rd, wr, ex, &zero);
    if (rc == 0) {
        if (!timeout_for(s)) {
            for (int i = 0; i < 3; i++)
                if (in[i])
                    *in[i] = sets[i];
            return real(n, rd, wr, ex, tv);
        }
        tv->tv_sec = tv->tv_usec = 0; /* Linux says what is left */
    }
    return rc;
}

EMU_API int pselect(int n, fd_set *rd, fd_set *wr, fd_set *ex, const struct timespec *tmo,
                    const sigset_t *mask)
{
    static int (*real)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
                       const sigset_t *);
    if (!real)
        NEXT(real, "pselect");
    if (!virtual() || !tmo || (tmo->tv_sec == 0 && tmo->tv_nsec == 0))
        return real(n, rd, wr, ex, tmo, mask);
    struct timespec zero = {0, 0};
    fd_set sets[3];
    fd_set *in[3] = {rd, wr, ex};
    for (int i = 0; i < 3; i++)
        if (in[i])
            sets[i] = *in[i];
    int rc = real(n, rd, wr, ex, &zero, mask);
    if (rc == 0 && !timeout_for(from_timespec(tmo))) {
        for (int i = 0; i < 3; i++)
            if (in[i])
                *in[i] = sets[i];
        return real(n, rd, wr, ex, tmo, mask);
    }
    return rc;
}

EMU_API int epoll_wait(int fd, struct epoll_event *ev, int max, int timeout_ms)
{
    static int (*real)(int, struct epoll_event *, int, int);
    if (!real)
        NEXT(real, "epoll_wait");
    if (!virtual() || timeout_ms <= 0)
        return real(fd, ev, max, timeout_ms);
    int rc = real(fd, ev, max, 0);
    if (rc == 0 && !timeout_for(1e-3 * timeout_ms))
        return real(fd, ev, max, timeout_ms);
    return rc;
}

/* ---- timed waits on other threads -------------------------------------------
 * A thread that reads virtual clocks computes the deadlines of its timed
 * waits on condition variables, semaphores and mutexes from them, but the
 * kernel holds them against the real clocks: the wait would end at once, or
 * much too late.  Those waits are on other threads of the program (Python's
 * interpreter lock, for one), not on anything virtual time decides, so they
 * wait the time asked in real time: the deadline is moved to the real clock. */

/* The virtual time the caller's clocks read now (without counting its compute
 * since its last call): 1 and *t, or 0 if they read real time. */
static int virtual_now(double *t)
{
    if (!E.on)
        return 0;
    if (E.thread == tb__emu_self()) {
        if (!E.in_user)
            return 0;
        *t = E.clock;
        return 1;
    }
    if (!tb__emu_thread_known())
        return 0;
    *t = E.shown_clock;
    return 1;
}

/* *abs, a deadline on clock id (-1: whichever of CLOCK_MONOTONIC and
 * CLOCK_REALTIME it is nearer to, for a condition variable whose clock is not
 * known here) in the caller's virtual time, on the real clock: 1 and *out. */
static int real_deadline(clockid_t id, const struct timespec *abs, struct timespec *out)
{
    double t;
    if (!abs || abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000L || !virtual_now(&t))
        return 0;
    double d = from_timespec(abs), vm = reading(CLOCK_MONOTONIC, t, 0),
           vr = reading(CLOCK_REALTIME, t, 0);
    if (id < 0)
        id = fabs(d - vm) < fabs(d - vr) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
    double v = reading(id, t, 0);
    if (isnan(v))
        return 0;
    to_timespec(real_seconds(id) + (d - v), out);
    return 1;
}

EMU_API int pthread_cond_timedwait(pthread_cond_t *restrict c, pthread_mutex_t *restrict m,
                                   const struct timespec *restrict abs)
{
    static int (*real)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
    if (!real)
        NEXT(real, "pthread_cond_timedwait");
    struct timespec r;
    return real(c, m, real_deadline(-1, abs, &r) ? &r : abs);
}

EMU_API int pthread_cond_clockwait(pthread_cond_t *restrict c, pthread_mutex_t *restrict m,
                                   clockid_t id, const struct timespec *restrict abs)
{
    static int (*real)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
    if (!real)
        NEXT(real, "pthread_cond_clockwait");
    struct timespec r;
    return real(c, m, id, real_deadline(id, abs, &r) ? &r : abs);
}

EMU_API int sem_timedwait(sem_t *restrict sem, const struct timespec *restrict abs)
{
    static int (*real)(sem_t *, const struct timespec *);
    if (!real)
        NEXT(real, "sem_timedwait");
    struct timespec r;
    return real(sem, real_deadline(CLOCK_REALTIME, abs, &r) ? &r : abs);
}

EMU_API int sem_clockwait(sem_t *restrict sem, clockid_t id, const struct timespec *restrict abs)
{
    static int (*real)(sem_t *, clockid_t, const struct timespec *);
    if (!real)
        NEXT(real, "sem_clockwait");
    struct timespec r;
    return real(sem, id, real_deadline(id, abs, &r) ? &r : abs);
}

EMU_API int pthread_mutex_timedlock(pthread_mutex_t *restrict m,
                                    const struct timespec *restrict abs)
{
    static int (*real)(pthread_mutex_t *, const struct timespec *);
    if (!real)
        NEXT(real, "pthread_mutex_timedlock");
    struct timespec r;
    return real(m, real_deadline(CLOCK_REALTIME, abs, &r) ? &r : abs);
}

EMU_API int pthread_mutex_clocklock(pthread_mutex_t *restrict m, clockid_t id,
                                    const struct timespec *restrict abs)
{
    static int (*real)(pthread_mutex_t *, clockid_t, const struct timespec *);
    if (!real)
        NEXT(real, "pthread_mutex_clocklock");
    struct timespec r;
    return real(m, id, real_deadline(id, abs, &r) ? &r : abs);
}
