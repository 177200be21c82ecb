/*
 * clock.c - wall and CPU clocks in seconds, and the counter-read clock of
 * the real transport (tb__fastclock, clock_inline.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "tenbin/core.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/clock_inline.h"

double tb_wtime(void) { return tb__wtime(); }

double tb_thread_cputime(void) { return tb__clock_seconds(CLOCK_THREAD_CPUTIME_ID); }

double tb_process_cputime(void) { return tb__clock_seconds(CLOCK_PROCESS_CPUTIME_ID); }

/* The kernel keeps time with the time-stamp counter: its clock source is
 * "tsc" (it checked that the counter is constant and synchronised). */
static int kernel_uses_tsc(void)
{
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f)
        return 0;
    char name[32] = "";
    int ok = fgets(name, sizeof name, f) != NULL && strncmp(name, "tsc\n", 4) == 0;
    fclose(f);
    return ok;
}

void tb__fastclock_init(tb__fastclock *c)
{
    memset(c, 0, sizeof *c);
    static const char *const words[] = {"auto", "monotonic", NULL};
    int w = 0;
    (void)tb_env_word("TENBIN_CLOCK", words, &w); /* a wrong word: warned, auto */
    c->tsc = TB__HAVE_TSC && w == 0 && kernel_uses_tsc();
    c->last = -HUGE_VAL;
    (void)tb__fastclock_anchor(c);
}

double tb__fastclock_anchor(tb__fastclock *c)
{
    double now = tb__wtime();
    c->anchors++;
#if TB__HAVE_TSC
    if (c->tsc) {
        /* The counter on both sides of the real read: its middle is the
         * anchor, unless something (the scheduler) came between them. */
        for (int tries = 0; tries < 3; tries++) {
            uint64_t a = __rdtsc();
            now = tb__wtime();
            uint64_t b = __rdtsc();
            if (b - a > (TB__FASTCLOCK_SPAN >> 6)) /* over ~30 us: again */
                continue;
            uint64_t t = a + (b - a) / 2;
            if (c->first_t == 0) {
                c->first_t = t;
                c->first_s = now;
            } else if (t - c->first_t >= TB__FASTCLOCK_SPAN && t > c->first_t) {
                c->spt = (now - c->first_s) / (double)(t - c->first_t);
            }
            c->anchor_t = t;
            c->anchor_s = now;
            break;
        }
    }
#endif
    if (now < c->last)
        now = c->last;
    c->last = now;
    return now;
}
