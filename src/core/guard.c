/*
 * guard.c - end the job with one line when a guarded call crashes or hangs
 * (guard.h).  The signal handler uses only async-signal-safe calls: write,
 * sigaction, raise, _exit.
 */
#define _POSIX_C_SOURCE 200809L

#include "core/guard.h"

#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "tenbin/core.h"

static const int guarded_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGALRM};
enum { NSIG_GUARDED = sizeof guarded_signals / sizeof guarded_signals[0] };

static struct sigaction previous[NSIG_GUARDED];
tb__guard_state tb__guard;

static size_t put_str(char *b, size_t at, size_t cap, const char *s)
{
    while (*s && at + 1 < cap)
        b[at++] = *s++;
    return at;
}

static size_t put_u64(char *b, size_t at, size_t cap, uint64_t v)
{
    char d[24];
    int n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n > 0 && at + 1 < cap)
        b[at++] = d[--n];
    return at;
}

/* "tenbin: rank R: WHAT ID " */
static size_t line_head(char *b, size_t cap)
{
    size_t at = put_str(b, 0, cap, "tenbin: rank ");
    at = put_u64(b, at, cap, (uint64_t)(tb__guard.rank < 0 ? 0 : tb__guard.rank));
    at = put_str(b, at, cap, ": ");
    at = put_str(b, at, cap, tb__guard.what ? tb__guard.what : "task");
    at = put_str(b, at, cap, " ");
    return put_u64(b, at, cap, tb__guard.id);
}

static void say(const char *b, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, b, n);
        if (w <= 0)
            return;
        b += w;
        n -= (size_t)w;
    }
}

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
    int k = 0;
    while (k < NSIG_GUARDED && guarded_signals[k] != sig)
        k++;
    if (k == NSIG_GUARDED)
        return;
    char b[256];
    if (sig == SIGALRM) {
        if (!tb__guard.active) { /* not ours: whoever had SIGALRM before */
            struct sigaction *p = &previous[k];
            if ((p->sa_flags & SA_SIGINFO) && p->sa_sigaction)
                p->sa_sigaction(sig, info, uctx);
            else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN)
                p->sa_handler(sig);
            return;
        }
        size_t at = line_head(b, sizeof b);
        at = put_str(b, at, sizeof b, " ran longer than the task timeout (");
        double t = tb__guard.timeout;
        at = put_u64(b, at, sizeof b, (uint64_t)t);
        uint64_t ms = (uint64_t)((t - floor(t)) * 1000 + 0.5);
        if (ms > 0 && ms < 1000) {
            char frac[4] = {(char)('0' + ms / 100), (char)('0' + ms / 10 % 10),
                            (char)('0' + ms % 10), 0};
            int n = 3;
            while (n > 0 && frac[n - 1] == '0')
                frac[--n] = 0;
            at = put_str(b, at, sizeof b, ".");
            at = put_str(b, at, sizeof b, frac);
        }
        at = put_str(b, at, sizeof b, " s); ending the job\n");
        say(b, at);
        _exit(1);
    }
    struct sigaction *p = &previous[k];
    if (tb__guard.active) {
        size_t at = line_head(b, sizeof b);
        at = put_str(b, at, sizeof b, " crashed (signal ");
        at = put_u64(b, at, sizeof b, (uint64_t)sig);
        at = put_str(b, at, sizeof b, ", ");
        at = put_str(b, at, sizeof b, tb_signal_name(sig));
        at = put_str(b, at, sizeof b, "); ending the job\n");
        say(b, at);
        _exit(1);
    }
    /* Pass it on: restore the previous action and let the signal happen
     * again (a fault re-executes; a sent signal is raised once more). */
    sigaction(sig, p, NULL);
    tb__guard.installed = 0;
    if (info == NULL || info->si_code <= 0)
        raise(sig);
}

static int install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < NSIG_GUARDED; k++)
        if (sigaction(guarded_signals[k], &sa, &previous[k]) != 0)
            return TB_ERR_IO;
    tb__guard.installed = 1;
    return TB_OK;
}

int tb__guard_enter_slow(const char *what, uint64_t id, int rank, double timeout)
{
    if (!tb__guard.installed)
        TB_CHECK(install());
    tb__guard.what = what;
    tb__guard.id = id;
    tb__guard.rank = rank;
    tb__guard.timeout = timeout;
    tb__guard.active = 1;
    if (timeout > 0) {
        struct itimerval it;
        memset(&it, 0, sizeof it);
        it.it_value.tv_sec = (time_t)timeout;
        it.it_value.tv_usec = (suseconds_t)((timeout - floor(timeout)) * 1e6);
        if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
            it.it_value.tv_usec = 1;
        if (setitimer(ITIMER_REAL, &it, NULL) != 0)
            return TB_ERR_IO;
    }
    return TB_OK;
}

void tb__guard_leave_slow(void)
{
    if (tb__guard.timeout > 0) {
        struct itimerval off;
        memset(&off, 0, sizeof off);
        setitimer(ITIMER_REAL, &off, NULL);
    }
    tb__guard.active = 0;
}
