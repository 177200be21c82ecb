/*
 * signal.c - a stop from outside, noted for the runs to end cleanly
 * (tb_signals_catch in tenbin/core.h).  The handler only stores to a
 * sig_atomic_t, or puts the default action back and raises: both
 * async-signal-safe.
 */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <string.h>
#include <time.h>

#include "tenbin/core.h"

static const int caught[] = {SIGINT, SIGTERM, SIGUSR1};
enum { NCAUGHT = sizeof caught / sizeof caught[0] };

static struct sigaction previous[NCAUGHT];
static volatile sig_atomic_t pending;
static struct timespec first_at; /* when `pending` was noted (written once, in the handler) */
static int catching;

static void on_signal(int sig)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now); /* async-signal-safe (POSIX) */
    if (pending && sig != SIGUSR1) {
        /* The same signal again within a second is the same stop delivered
         * twice: timeout(1) signals the process and then its process group,
         * and a handler that ran between the two took the second for the
         * user's "now" (the run then ended without a word, 1 time in 6). */
        if (sig == pending && (double)(now.tv_sec - first_at.tv_sec) +
                                      1e-9 * (double)(now.tv_nsec - first_at.tv_nsec) <
                                  1.0)
            return;
        /* The second: the user means it. */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    if (!pending) {
        first_at = now;
        pending = sig;
    }
}

int tb_signals_catch(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (catching) {
        /* Again: put ours back where a library replaced it in between
         * (MPICH's MPI_Init takes SIGUSR1); what was noted stays noted. */
        for (int k = 0; k < NCAUGHT; k++) {
            struct sigaction now;
            if (sigaction(caught[k], NULL, &now) == 0 && now.sa_handler != on_signal &&
                sigaction(caught[k], &sa, NULL) != 0)
                return TB_ERR_IO;
        }
        return TB_OK;
    }
    pending = 0;
    for (int k = 0; k < NCAUGHT; k++)
        if (sigaction(caught[k], &sa, &previous[k]) != 0) {
            while (k-- > 0)
                sigaction(caught[k], &previous[k], NULL);
            return TB_ERR_IO;
        }
    catching = 1;
    return TB_OK;
}

void tb_signals_release(void)
{
    if (!catching)
        return;
    for (int k = 0; k < NCAUGHT; k++)
        sigaction(caught[k], &previous[k], NULL);
    catching = 0;
}

int tb_signals_pending(void) { return catching ? (int)pending : 0; }

int tb_signals_caught(void) { return catching; }

const char *tb_signal_name(int sig)
{
    switch (sig) {
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    case SIGUSR1:
        return "SIGUSR1";
    case SIGHUP:
        return "SIGHUP";
    case SIGKILL:
        return "SIGKILL";
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGALRM:
        return "SIGALRM";
    case SIGABRT:
        return "SIGABRT";
    default:
        return "signal";
    }
}
