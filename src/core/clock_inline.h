/*
 * clock_inline.h - tb_wtime inline, for the real transport's clock reads
 * (two or three per task on a worker; as a call chain each cost about as
 * much again as the clock itself).  clock.c's clocks are these.
 *
 * tb__fastclock: CLOCK_MONOTONIC's seconds read from the processor's
 * time-stamp counter where the kernel itself keeps time with it (its clock
 * source is "tsc": the counter runs at a constant rate and agrees across
 * cores).  clock_gettime orders the counter's read after every earlier
 * instruction (lfence) and costs 35 ns a read here; a plain read 12.5 ns,
 * two or three times a task (docs/benchmarks.md, "The clock off the fence").
 *
 * The counter is turned into seconds against clock_gettime: an anchor (a
 * real read and the counter beside it) at least every TB__FASTCLOCK_SPAN
 * ticks, the rate from the first anchor to the newest (so it sharpens as
 * the run goes on), and no value below one returned before.  Until a span
 * has passed every read is a real one.  Elsewhere (another processor or
 * clock source, TENBIN_CLOCK=monotonic) every read is a real one.
 */
#ifndef TB_CORE_CLOCK_INLINE_H
#define TB_CORE_CLOCK_INLINE_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <x86intrin.h>
#define TB__HAVE_TSC 1
#else
#define TB__HAVE_TSC 0
#endif

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

/* Ticks between anchors: 2^22, about 1.7 ms at 2.5 GHz. */
#define TB__FASTCLOCK_SPAN (UINT64_C(1) << 22)

typedef struct tb__fastclock {
    int tsc;            /* reads use the counter */
    double spt;         /* seconds per tick; 0 until a span has passed */
    double anchor_s;    /* the newest anchor: CLOCK_MONOTONIC ... */
    uint64_t anchor_t;  /* ... and the counter beside it */
    double first_s;     /* the first anchor, for the rate */
    uint64_t first_t;
    double last;        /* the latest value returned */
    uint64_t anchors;   /* real reads made (for tests) */
} tb__fastclock;

/* Set c up (TENBIN_CLOCK and the kernel's clock source decide whether the
 * counter is used) and take the first anchor. */
void tb__fastclock_init(tb__fastclock *c);
/* A real read: a new anchor, the rate updated; the value, never below the
 * last one. */
double tb__fastclock_anchor(tb__fastclock *c);

/* CLOCK_MONOTONIC's seconds, never below the previous value of c. */
static inline double tb__fastclock_now(tb__fastclock *c)
{
#if TB__HAVE_TSC
    if (c->tsc) {
        uint64_t d = __rdtsc() - c->anchor_t; /* wraps huge if it went back */
        if (d < TB__FASTCLOCK_SPAN && c->spt > 0) {
            double v = c->anchor_s + (double)d * c->spt;
            if (v < c->last)
                v = c->last;
            c->last = v;
            return v;
        }
    }
#endif
    return tb__fastclock_anchor(c);
}

#endif /* TB_CORE_CLOCK_INLINE_H */
