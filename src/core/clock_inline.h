/*
 * clock_inline.h - tb_wtime inline, for the real transport's clock reads
 * (two or three per task on a worker; as a call chain each cost about as
 * much again as the clock itself).  clock.c's tb_wtime is this.
 */
#ifndef TB_CORE_CLOCK_INLINE_H
#define TB_CORE_CLOCK_INLINE_H

#include <time.h>

/* CLOCK_MONOTONIC in seconds; 0 if the clock fails (an unsupported clock
 * id: callers computing differences then see no time pass). */
static inline double tb__wtime(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif /* TB_CORE_CLOCK_INLINE_H */
