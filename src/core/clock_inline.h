/*
 * clock_inline.h - tb_wtime inline, for the real transport's clock reads
 * (two or three per task on a worker; as a call chain each cost about as
 * much again as the clock itself).  clock.c's clocks are these.
 */
#ifndef TB_CORE_CLOCK_INLINE_H
#define TB_CORE_CLOCK_INLINE_H

#include <time.h>

/* A clock in seconds; 0 if it fails (an unsupported clock id: callers
 * computing differences then see no time pass). */
static inline double tb__clock_seconds(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CLOCK_MONOTONIC in seconds (tb_wtime). */
static inline double tb__wtime(void) { return tb__clock_seconds(CLOCK_MONOTONIC); }

#endif /* TB_CORE_CLOCK_INLINE_H */
