/*
 * work_dist.h - the task times of `tenbin sim mw --work-dist`: constant,
 * exponential, uniform factors, or a trace file of measured times.  Kept
 * apart from the command so the trace reader can be fuzzed on its own
 * (tests/fuzz/fuzz_sim_work_dist.c).
 */
#ifndef TB_TOOLS_WORK_DIST_H
#define TB_TOOLS_WORK_DIST_H

#include <stddef.h>
#include <stdint.h>

typedef enum tb_work_kind {
    TB_WORK_CONST = 0, /* every task takes mean */
    TB_WORK_EXP,       /* exponential with mean `mean` */
    TB_WORK_UNIFORM,   /* mean times a factor drawn in [a, b] */
    TB_WORK_TRACE,     /* task i takes times[i mod ntimes] */
} tb_work_kind;

typedef struct tb_work_dist {
    tb_work_kind kind;
    double mean;   /* seconds at speed 1 (--work) */
    double a, b;   /* uniform's factors */
    uint64_t seed; /* exp and uniform: a stream per task from it */
    double *times; /* trace's task times, seconds >= 0 */
    size_t ntimes;
} tb_work_dist;

/* Names of the kinds, indexed by tb_work_kind: "const", "exp", ... */
extern const char *const tb_work_kind_name[4];

/*
 * Parse spec (const, exp, uniform:A-B, trace:FILE; NULL is const) into d,
 * reading FILE for a trace; d->mean and d->seed are the caller's to set.
 * TB_OK, or an error with one line in err (without the option's name).
 */
int tb_work_dist_parse(const char *spec, tb_work_dist *d, char *err, size_t errlen);

/*
 * Read a trace of task times from text[0..len) (text[len] must be 0, as
 * tb_read_file leaves it): one number of seconds >= 0 per line; blank lines
 * and lines whose first non-blank character is '#' are skipped.  name is
 * the file's, for messages ("times.txt:3: expected seconds >= 0").  At
 * least one time.  On success d->kind is TB_WORK_TRACE and d->times is the
 * caller's to free (tb_work_dist_free); on failure d is unchanged.
 */
int tb_work_dist_read_trace(const char *text, size_t len, const char *name, tb_work_dist *d,
                            char *err, size_t errlen);

/* The time of task id, in seconds at speed 1: the same for a given id
 * whichever rank runs it, in any order. */
double tb_work_dist_time(const tb_work_dist *d, uint64_t id);

void tb_work_dist_free(tb_work_dist *d);

#endif
