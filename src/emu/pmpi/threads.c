/*
 * threads.c - the threads of a rank that call MPI (inside libtenbin-emu.so).
 *
 * Most programs call MPI from one thread.  Some call it from several, one at
 * a time: mpi4py.futures' pool on rank 0 sends the tasks and takes the
 * results on a thread of its own, while the program's main thread submits
 * the tasks and waits for the results.  The rank has one virtual clock, so:
 *
 *   - a thread's CPU time between two of its MPI calls is compute, charged to
 *     the clock at its next call (tb__emu_thread_enter);
 *   - a sleep of the thread that calls MPI (clock.c) lasts in real time as
 *     long as another thread that has called MPI runs (state R in
 *     /proc/self/task, not inside an MPI call) and has not yet used the
 *     sleep's worth of CPU time (tb__emu_threads_beside).  Otherwise a
 *     polling loop that sleeps between looks (mpi4py's pool waiting for
 *     tasks) would race through virtual time while the work it waits for
 *     takes real time, and the prediction would depend on how fast this
 *     machine ran that work.  What those threads used meanwhile is compute
 *     done during the sleep: the sleep ends no earlier than that compute
 *     would on the host, and it is not charged again at their next call.
 *
 * A program with one MPI thread pays nothing of this but a lock per call.
 * Real clocks and sleeps here are system calls: the library's own clock and
 * sleep functions (clock.c) would answer in virtual time.
 */
#define _GNU_SOURCE
#include "emu/pmpi/emu.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef struct mthread {
    const void *token; /* tb__emu_self of the thread */
    pid_t tid;
    clockid_t cpu;  /* its CPU clock */
    double counted; /* its CPU time counted so far (as compute, or not: inside MPI) */
    unsigned calls; /* MPI calls it began */
    int gone;       /* its CPU clock cannot be read any more: it ended */
} mthread;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mthread *th;
static size_t nth, capth;
static _Thread_local char token;
static _Thread_local size_t slot; /* 1 + its index in th, 0 before its first call */

const void *tb__emu_self(void) { return &token; }

static double cpu_of(clockid_t id, int *ok)
{
    struct timespec ts;
    *ok = syscall(SYS_clock_gettime, id, &ts) == 0;
    return *ok ? (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec : 0;
}

/* The calling thread's entry (lock held); a new thread has counted nothing. */
static mthread *me_locked(void)
{
    if (slot == 0) {
        if (tb_grow(&th, &capth, nth + 1, sizeof *th, 4) != TB_OK)
            tb__emu_oom();
        mthread *m = &th[nth++];
        memset(m, 0, sizeof *m);
        m->token = &token;
        m->tid = (pid_t)syscall(SYS_gettid);
        if (pthread_getcpuclockid(pthread_self(), &m->cpu) != 0)
            m->cpu = CLOCK_THREAD_CPUTIME_ID;
        slot = nth;
    }
    return &th[slot - 1];
}

double tb__emu_thread_enter(double cpu)
{
    pthread_mutex_lock(&lock);
    mthread *m = me_locked();
    double d = cpu - m->counted;
    m->calls++;
    pthread_mutex_unlock(&lock);
    return d;
}

void tb__emu_thread_leave(double cpu)
{
    pthread_mutex_lock(&lock);
    me_locked()->counted = cpu;
    pthread_mutex_unlock(&lock);
}

int tb__emu_thread_known(void) { return slot != 0; }

int tb__emu_threads_others(void)
{
    pthread_mutex_lock(&lock);
    size_t n = nth;
    pthread_mutex_unlock(&lock);
    return n > 1;
}

/* Thread tid's state is R (running or waiting for a core). */
static int runnable(pid_t tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* its name may hold anything */
    return p && p[1] == ' ' && p[2] == 'R';
}

enum { BESIDE_MAX = 16 };

double tb__emu_threads_beside(double allow)
{
    /* The other threads as they are now. */
    struct {
        size_t i;
        pid_t tid;
        clockid_t cpu;
        const void *token;
        unsigned calls;
        double cpu0, used;
    } o[BESIDE_MAX];
    size_t no = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nth && no < BESIDE_MAX; i++) {
        if (th[i].token == &token || th[i].gone)
            continue;
        int ok;
        double c = cpu_of(th[i].cpu, &ok);
        if (!ok) {
            th[i].gone = 1;
            continue;
        }
        o[no].i = i;
        o[no].tid = th[i].tid;
        o[no].cpu = th[i].cpu;
        o[no].token = th[i].token;
        o[no].calls = th[i].calls;
        o[no].cpu0 = c;
        o[no].used = 0;
        no++;
    }
    pthread_mutex_unlock(&lock);
    if (no == 0)
        return 0;
    /* Wait while one of them runs, outside MPI, and they have not used the
     * sleep's worth. */
    for (;;) {
        double used = 0;
        int running = 0;
        for (size_t k = 0; k < no; k++) {
            int ok;
            double c = cpu_of(o[k].cpu, &ok);
            if (ok)
                o[k].used = c - o[k].cpu0;
            used += o[k].used;
            if (ok && atomic_load(&E.inside) != o[k].token && runnable(o[k].tid))
                running = 1;
        }
        if (!running || used >= allow)
            break;
        double left = allow - used;
        struct timespec ts = {0, left < 50e-6 ? (long)(left * 1e9) + 1000 : 50000};
        syscall(SYS_nanosleep, &ts, NULL);
    }
    /* What they used is compute of this sleep, not of their next call.  A
     * thread that called MPI meanwhile counted its own. */
    double total = 0;
    pthread_mutex_lock(&lock);
    for (size_t k = 0; k < no; k++) {
        mthread *m = &th[o[k].i];
        if (m->calls != o[k].calls || o[k].used <= 0)
            continue;
        m->counted += o[k].used;
        total += o[k].used;
    }
    pthread_mutex_unlock(&lock);
    return total;
}
