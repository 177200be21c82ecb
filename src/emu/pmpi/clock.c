/*
 * clock.c - the program's own clocks and sleeps in virtual time (inside
 * libtenbin-emu.so, between MPI_Init and MPI_Finalize).
 *
 * A program that times itself with gettimeofday or clock_gettime (the
 * classic ping-pong benchmarks, Python's time.perf_counter, most
 * applications' own reports) must print the prediction, not the emulation's
 * real speed; a master that sleeps between polls must spend virtual time
 * idle, not get its sleeps for free.  So, on the thread that called
 * MPI_Init, while the program (not this library or MPI) runs:
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
 *     clock moves on by the time asked, counted as idle, and no real time is
 *     spent (a sleep cannot change what the program receives: which message
 *     a receive or a probe sees is decided in virtual time).
 *
 * Everywhere else -- before MPI_Init, after MPI_Finalize, inside MPI calls
 * (MPI's own timers and progress), and on every other thread (MPI's
 * progress threads, the program's helper threads) -- the real functions
 * answer.  Reading a clock from the program is a point where its compute so
 * far is counted, as MPI_Wtime is.
 */
#define _GNU_SOURCE
#include "emu/pmpi/emu.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* The thread that called MPI_Init (set by tb__emu_clock_start). */
static __thread int main_thread;

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
    main_thread = 1;
    base.real = real_seconds(CLOCK_REALTIME);
    base.mono = real_seconds(CLOCK_MONOTONIC);
    base.pcpu = real_seconds(CLOCK_PROCESS_CPUTIME_ID);
    base.tcpu = real_seconds(CLOCK_THREAD_CPUTIME_ID);
}

/* Whether the caller is the program on its MPI thread, in virtual time. */
static int virtual(void) { return main_thread && E.on && E.in_user; }

/* The virtual clock now, the program's compute so far counted. */
static double now(void)
{
    tb__emu_enter();
    double t = E.clock;
    tb__emu_leave();
    return t;
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

EMU_API int clock_gettime(clockid_t id, struct timespec *ts)
{
    if (!virtual())
        return real_clock_gettime(id, ts);
    double t = now();
    double v = reading(id, t, E.compute);
    if (isnan(v))
        return real_clock_gettime(id, ts);
    to_timespec(v, ts);
    return 0;
}

EMU_API int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    if (!virtual()) {
        static int (*real)(struct timeval *restrict, void *restrict);
        if (!real)
            NEXT(real, "gettimeofday");
        return real(tv, tz);
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
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

/* The program waits `s` seconds of virtual time, idle. */
static void idle_for(double s)
{
    tb__emu_enter();
    if (s > 0)
        tb__emu_advance(E.clock + s, &E.idle, "sleep");
    tb__emu_leave();
}

EMU_API int nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (!virtual() || !req || req->tv_nsec < 0 || req->tv_nsec >= 1000000000L) {
        static int (*real)(const struct timespec *, struct timespec *);
        if (!real)
            NEXT(real, "nanosleep");
        return real(req, rem);
    }
    idle_for(from_timespec(req));
    if (rem)
        rem->tv_sec = rem->tv_nsec = 0;
    return 0;
}

EMU_API int clock_nanosleep(clockid_t id, int flags, const struct timespec *req,
                            struct timespec *rem)
{
    double v = NAN, t = 0;
    if (virtual() && req && req->tv_nsec >= 0 && req->tv_nsec < 1000000000L &&
        id != CLOCK_PROCESS_CPUTIME_ID && id != CLOCK_THREAD_CPUTIME_ID) {
        t = now();
        v = reading(id, t, E.compute);
    }
    if (isnan(v)) {
        static int (*real)(clockid_t, int, const struct timespec *, struct timespec *);
        if (!real)
            NEXT(real, "clock_nanosleep");
        return real(id, flags, req, rem);
    }
    idle_for((flags & TIMER_ABSTIME) ? from_timespec(req) - v : from_timespec(req));
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
    if (rc == 0)
        idle_for(1e-3 * timeout_ms);
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
    if (rc == 0)
        idle_for(from_timespec(tmo));
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
    int rc = real(n, rd, wr, ex, &zero);
    if (rc == 0) {
        idle_for(s);
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
    int rc = real(n, rd, wr, ex, &zero, mask);
    if (rc == 0)
        idle_for(from_timespec(tmo));
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
    if (rc == 0)
        idle_for(1e-3 * timeout_ms);
    return rc;
}
