/*
 * clock.c - wall and CPU clocks in seconds.
 */
#define _POSIX_C_SOURCE 200809L

#include "tenbin/core.h"

#include <time.h>

#include "core/clock_inline.h"

/* A failing clock_gettime would mean an unsupported clock id; report 0 rather
 * than garbage so callers computing differences see no time pass. */
static double clock_seconds(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double tb_wtime(void) { return tb__wtime(); }

double tb_thread_cputime(void) { return clock_seconds(CLOCK_THREAD_CPUTIME_ID); }

double tb_process_cputime(void) { return clock_seconds(CLOCK_PROCESS_CPUTIME_ID); }
