/*
 * clock.c - wall and CPU clocks in seconds.
 */
#define _POSIX_C_SOURCE 200809L

#include "tenbin/core.h"

#include <time.h>

#include "core/clock_inline.h"

double tb_wtime(void) { return tb__wtime(); }

double tb_thread_cputime(void) { return tb__clock_seconds(CLOCK_THREAD_CPUTIME_ID); }

double tb_process_cputime(void) { return tb__clock_seconds(CLOCK_PROCESS_CPUTIME_ID); }
