/*
 * guard.h - calls into user code on a real run end the job cleanly when
 * they crash or hang (internal).
 *
 * Between tb__guard_enter and tb__guard_leave, a crash (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL) or a call that runs longer than `timeout` seconds (> 0;
 * SIGALRM from a real-time interval timer) writes one line to stderr,
 *
 *   tenbin: rank 2: task 17 crashed (signal 11, SIGSEGV); ending the job
 *   tenbin: rank 2: task 17 ran longer than the task timeout (5 s); ending the job
 *
 * and ends the process with status 1, which makes the MPI launcher stop every
 * other rank (the launcher then reports that a process exited without
 * finalizing).  The handlers installed before (the MPI library's backtrace
 * printer, a sanitizer's) are not called for a guarded crash: they would end
 * the job with the signal's status instead; a debugger still stops at the
 * fault.  Outside a guarded call the handlers pass every signal on to them
 * as if they were not there.
 *
 * Entering and leaving cost a few stores; with a timeout, two setitimer calls.
 * One guarded call at a time per process (the MPI transport's compute).
 */
#ifndef TB_CORE_GUARD_H
#define TB_CORE_GUARD_H

#include <signal.h>
#include <stdint.h>

/* The state the signal handler reads (guard.c); set through the functions
 * below only. */
typedef struct tb__guard_state {
    volatile sig_atomic_t installed; /* our handlers are in place */
    volatile sig_atomic_t active;    /* inside a guarded call */
    const char *volatile what;
    volatile uint64_t id;
    volatile int rank;
    volatile double timeout;
} tb__guard_state;
extern tb__guard_state tb__guard;

int tb__guard_enter_slow(const char *what, uint64_t id, int rank, double timeout);
void tb__guard_leave_slow(void);

/* what: a static string ("task"); id: its number; rank: shown in the line.
 * Inline: every task of a real run passes here, and without a timeout it is
 * a few stores once the handlers are in place. */
static inline int tb__guard_enter(const char *what, uint64_t id, int rank, double timeout)
{
    if (!tb__guard.installed || timeout > 0 || tb__guard.timeout > 0)
        return tb__guard_enter_slow(what, id, rank, timeout);
    tb__guard.what = what;
    tb__guard.id = id;
    tb__guard.rank = rank;
    tb__guard.active = 1;
    return 0;
}

static inline void tb__guard_leave(void)
{
    if (tb__guard.timeout > 0)
        tb__guard_leave_slow();
    else
        tb__guard.active = 0;
}

#endif /* TB_CORE_GUARD_H */
