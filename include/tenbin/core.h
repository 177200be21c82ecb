/*
 * tenbin/core.h - errors, logging, clocks, the options/environment registry,
 * a deterministic RNG, byte buffers, the Chrome trace writer, progress lines
 * and summary statistics.
 *
 * Everything here is local to one process: no function in this header is
 * collective unless its comment says "Collective".  Thread-safety: the logger
 * is safe to call from several threads; every other object is owned by one
 * thread at a time.
 */
#ifndef TENBIN_CORE_H
#define TENBIN_CORE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#include "tenbin/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Version                                                             */
/* ------------------------------------------------------------------ */

/*
 * A version as one number, major << 16 | minor << 8 | patch (minor and patch
 * below 256), so that versions compare with < and ==.  The version of the
 * headers a program was compiled with is
 *     TB_VERSION_ENCODE(TENBIN_VERSION_MAJOR, TENBIN_VERSION_MINOR,
 *                       TENBIN_VERSION_PATCH)
 * from <tenbin/config.h> (included by <tenbin.h>).
 */
#define TB_VERSION_ENCODE(major, minor, patch)                               \
    (((unsigned)(major) << 16) | ((unsigned)(minor) << 8) | (unsigned)(patch))

/*
 * The version of the library the program runs with, encoded as
 * TB_VERSION_ENCODE: the shared library found at run time, which may be
 * another build than the headers the program was compiled with.  Releases
 * with the same major and minor version are compatible (the CMake package
 * accepts the same minor version only).  Not collective; MPI need not be
 * initialised.
 */
TB_API unsigned tb_version(void);
/* The same version as a string, "MAJOR.MINOR.PATCH" (static, never NULL). */
TB_API const char *tb_version_string(void);

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/*
 * The one error table.  X(NAME, value, message).  TB_OK is 0; every error is
 * negative.  "Nothing to do" and "try again" are not errors and are not here.
 */
#define TB_ERRNO_MAP(X)                                                      \
    X(OK, 0, "success")                                                     \
    X(ERR_NOMEM, -1, "out of memory")                                       \
    X(ERR_INVALID, -2, "invalid argument")                                  \
    X(ERR_RANGE, -3, "value out of range")                                  \
    X(ERR_IO, -4, "input/output error")                                     \
    X(ERR_PARSE, -5, "malformed input")                                     \
    X(ERR_STATE, -6, "call not valid in the current state")                 \
    X(ERR_MPI, -7, "MPI call failed")                                       \
    X(ERR_TASK, -8, "a task failed")                                        \
    X(ERR_SIZE, -9, "rank count does not fit")                              \
    X(ERR_UNSUPPORTED, -10, "not supported")                                \
    X(ERR_PROTOCOL, -11, "unexpected message")                              \
    X(ERR_NOTFOUND, -12, "not found")                                       \
    X(ERR_ABORTED, -13, "run stopped after a failure elsewhere")           \
    X(ERR_TIMEOUT, -14, "timed out")                                        \
    X(ERR_INTERRUPTED, -15, "interrupted by a signal")

typedef enum tb_err {
#define TB__ERR_ENUM(name, val, msg) TB_##name = (val),
    TB_ERRNO_MAP(TB__ERR_ENUM)
#undef TB__ERR_ENUM
} tb_err;

/* Human-readable message for an error code; never NULL. */
TB_API const char *tb_strerror(int err);
/* Symbolic name ("TB_ERR_NOMEM") for an error code; never NULL. */
TB_API const char *tb_err_name(int err);

/* ------------------------------------------------------------------ */
/* Logging                                                             */
/* ------------------------------------------------------------------ */

typedef enum tb_log_level {
    TB_LOG_ERROR = 0,
    TB_LOG_WARN = 1,
    TB_LOG_INFO = 2,
    TB_LOG_DEBUG = 3,
    TB_LOG_TRACE = 4
} tb_log_level;

/*
 * A sink receives one fully formatted line without its trailing newline.
 * The default sink writes "[tenbin r3 WARN] text\n" to stderr and flushes.
 */
typedef void (*tb_log_sink)(void *ctx, tb_log_level level, int rank, const char *line);

/* The level threshold is read from TENBIN_LOG (error|warn|info|debug|trace or
 * 0-4) the first time anything is logged; tb_log_set_level overrides it. */
TB_API void tb_log_set_level(tb_log_level level);
TB_API tb_log_level tb_log_get_level(void);
/* Rank shown in the prefix; -1 (the default) shows no rank. */
TB_API void tb_log_set_rank(int rank);
/* Replace the sink; NULL restores the default. */
TB_API void tb_log_set_sink(tb_log_sink sink, void *ctx);
/* Parse "warn", "3", ...; returns TB_ERR_PARSE if unknown. */
TB_API int tb_log_level_parse(const char *s, tb_log_level *out);

TB_API void tb_log(tb_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
TB_API void tb_vlog(tb_log_level level, const char *fmt, va_list ap);

#define TB_LOG_ERR(...) tb_log(TB_LOG_ERROR, __VA_ARGS__)
#define TB_LOG_WARN(...) tb_log(TB_LOG_WARN, __VA_ARGS__)
#define TB_LOG_INFO(...) tb_log(TB_LOG_INFO, __VA_ARGS__)
#define TB_LOG_DEBUG(...) tb_log(TB_LOG_DEBUG, __VA_ARGS__)

/*
 * Check macro: evaluate an expression returning a tb_err; on failure log
 * "file:func:line: expr: message" at debug level and return the code from the
 * enclosing function.
 */
TB_API void tb__check_failed(const char *file, const char *func, int line, const char *expr,
                             int err);
#define TB_CHECK(expr)                                                       \
    do {                                                                     \
        int tb__rc = (expr);                                                 \
        if (tb__rc != TB_OK) {                                               \
            tb__check_failed(__FILE__, __func__, __LINE__, #expr, tb__rc);   \
            return tb__rc;                                                   \
        }                                                                    \
    } while (0)

/* ------------------------------------------------------------------ */
/* Clocks                                                              */
/* ------------------------------------------------------------------ */

/* Monotonic wall time in seconds from an arbitrary origin. */
TB_API double tb_wtime(void);
/* CPU time consumed by the calling thread, in seconds. */
TB_API double tb_thread_cputime(void);
/* CPU time consumed by the whole process, in seconds. */
TB_API double tb_process_cputime(void);

/* ------------------------------------------------------------------ */
/* Signals                                                             */
/* ------------------------------------------------------------------ */

/*
 * A long run stopped from outside ends cleanly.  After tb_signals_catch,
 * SIGINT (Ctrl-C), SIGTERM (kill, scancel, a launcher ending a job) and
 * SIGUSR1 (what Slurm's --signal sends ahead of a time limit) no longer end
 * the process: the first is noted, and the run in progress ends as soon as
 * it can on rank 0, which every launcher signals (mpiexec forwards SIGUSR1
 * and turns SIGINT and SIGTERM into SIGTERM to every rank; srun signals
 * every rank).  Branch-and-bound stops its search as a reached gap would
 * (the incumbent, unproven); the other mechanisms end with one line and
 * TB_ERR_INTERRUPTED (under MPI: the job ends with exit status 128 + the
 * signal, as a shell reports a process the signal killed).  A second SIGINT
 * or SIGTERM ends the process at once, by the default action -- unless it is
 * the first one again within a second (timeout(1) signals the process, then
 * its process group).
 * Called again while in force, it puts its handler back where one was
 * replaced since (a program calls it before MPI_Init, so that a stop during
 * start-up is noted, and after, since MPICH's MPI_Init takes SIGUSR1).
 * tb_signals_release puts back the handlers that were there before.
 */
TB_API int tb_signals_catch(void);
TB_API void tb_signals_release(void);
/* The first signal noted since tb_signals_catch, or 0. */
TB_API int tb_signals_pending(void);
/* Whether tb_signals_catch is in force. */
TB_API int tb_signals_caught(void);
/* "SIGINT", "SIGTERM", ... ("signal" for one it does not name);
 * async-signal-safe. */
TB_API const char *tb_signal_name(int sig);

/* The checkpoint a run resumes from: resume, or NULL when there is none, or
 * when it is also the checkpoint to keep (ckpt) and no file is there yet --
 * the first run of a job that may be requeued ("--checkpoint F --resume F"). */
TB_API const char *tb_checkpoint_resume_from(const char *resume, const char *ckpt);

/* ------------------------------------------------------------------ */
/* Options / environment registry                                      */
/* ------------------------------------------------------------------ */

typedef enum tb_opt_type { TB_OPT_BOOL, TB_OPT_INT, TB_OPT_DOUBLE, TB_OPT_STRING } tb_opt_type;

typedef struct tb_opt_desc {
    const char *name;    /* full variable name, "TENBIN_LOG" */
    tb_opt_type type;
    const char *deflt;   /* default as text, may be NULL for "unset" */
    const char *help;    /* one line */
} tb_opt_desc;

/*
 * Every TENBIN_* variable is declared once in src/core/env_table.h, with its
 * type and default; the table is the only place a default lives.  These read
 * a variable from the environment, or give the default when it is unset (or
 * empty).  A value that does not parse gives TB_ERR_PARSE, a logged warning
 * naming the variable, and the default in *out, so a caller never needs a
 * default of its own.  An undeclared name gives TB_ERR_NOTFOUND, a name
 * declared with another type TB_ERR_INVALID; *out is then untouched.
 */
TB_API int tb_env_bool(const char *name, int *out);
TB_API int tb_env_int(const char *name, long *out);
TB_API int tb_env_double(const char *name, double *out);
/* As tb_env_int / tb_env_double, for a caller that accepts only [lo, hi]: a
 * number outside it gives TB_ERR_RANGE and the default in *out, with no
 * line logged (the caller says what it expects, or ignores it quietly). */
TB_API int tb_env_int_in(const char *name, long lo, long hi, long *out);
TB_API int tb_env_double_in(const char *name, double lo, double hi, double *out);
/* *out points into the environment or the static default; may be NULL. */
TB_API int tb_env_string(const char *name, const char **out);
/* A string that must be one of `words` (NULL-terminated): *out is its index.
 * Another value gives TB_ERR_PARSE, one warning line naming the variable and
 * the words, and the default's index (-1 if the default is not a word). */
TB_API int tb_env_word(const char *name, const char *const *words, int *out);
/* The declared default as text (what `tenbin info --env` shows), for a caller
 * that validates a string itself and falls back to the default; NULL for an
 * undeclared name or a variable without a default. */
TB_API const char *tb_env_default(const char *name);
/* Number of declared options and the i-th description. */
TB_API size_t tb_env_count(void);
TB_API const tb_opt_desc *tb_env_get(size_t i);
/* Print the registry as a table: name, type, default, current value, help. */
TB_API void tb_env_print(FILE *out);

/* ------------------------------------------------------------------ */
/* Deterministic random numbers (xoshiro256**, seeded with splitmix64)  */
/* ------------------------------------------------------------------ */

typedef struct tb_rng {
    uint64_t s[4];
} tb_rng;

TB_API void tb_rng_seed(tb_rng *r, uint64_t seed);
/* Independent stream `stream` of seed `seed` (e.g. one per rank). */
TB_API void tb_rng_seed_stream(tb_rng *r, uint64_t seed, uint64_t stream);
TB_API uint64_t tb_rng_u64(tb_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
TB_API double tb_rng_double(tb_rng *r);
/* Uniform integer in [0, n) without modulo bias; n > 0. */
TB_API uint64_t tb_rng_below(tb_rng *r, uint64_t n);
/* Uniform in [a, b). */
TB_API double tb_rng_uniform(tb_rng *r, double a, double b);
/* Exponential with the given mean (> 0). */
TB_API double tb_rng_exp(tb_rng *r, double mean);

/* ------------------------------------------------------------------ */
/* Byte buffers with pack/unpack                                       */
/* ------------------------------------------------------------------ */

/*
 * A growable byte buffer.  Zero-initialise (TB_BUF_INIT) or tb_buf_init;
 * tb_buf_free releases the memory.  Packing writes little-endian fixed-width
 * integers and IEEE doubles; unpacking reads at `pos` and fails with
 * TB_ERR_PARSE on a short buffer, never reading past `len`.
 */
typedef struct tb_buf {
    unsigned char *data;
    size_t len;  /* bytes written */
    size_t cap;  /* bytes allocated */
    size_t pos;  /* read cursor for unpack */
} tb_buf;

#define TB_BUF_INIT {NULL, 0, 0, 0}

TB_API void tb_buf_init(tb_buf *b);
TB_API void tb_buf_free(tb_buf *b);
/* Make room for `extra` more bytes. */
TB_API int tb_buf_reserve(tb_buf *b, size_t extra);
/* len = pos = 0, memory kept. */
TB_API void tb_buf_clear(tb_buf *b);
/* View of existing memory for unpacking (not owned; do not free or append). */
TB_API void tb_buf_view(tb_buf *b, const void *data, size_t len);
TB_API int tb_buf_append(tb_buf *b, const void *data, size_t n);
TB_API int tb_buf_printf(tb_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Append s as a JSON string literal (quotes, backslashes and control
 * characters escaped; UTF-8 passes through). */
TB_API int tb_buf_json_string(tb_buf *b, const char *s);
TB_API int tb_buf_pack_u8(tb_buf *b, uint8_t v);
TB_API int tb_buf_pack_u32(tb_buf *b, uint32_t v);
TB_API int tb_buf_pack_u64(tb_buf *b, uint64_t v);
TB_API int tb_buf_pack_i32(tb_buf *b, int32_t v);
TB_API int tb_buf_pack_f64(tb_buf *b, double v);
/* u32 length followed by the bytes. */
TB_API int tb_buf_pack_bytes(tb_buf *b, const void *data, uint32_t n);
TB_API int tb_buf_unpack_u8(tb_buf *b, uint8_t *v);
TB_API int tb_buf_unpack_u32(tb_buf *b, uint32_t *v);
TB_API int tb_buf_unpack_u64(tb_buf *b, uint64_t *v);
TB_API int tb_buf_unpack_i32(tb_buf *b, int32_t *v);
TB_API int tb_buf_unpack_f64(tb_buf *b, double *v);
/* Points *data into the buffer (no copy); *n gets the length. */
TB_API int tb_buf_unpack_bytes(tb_buf *b, const void **data, uint32_t *n);
/* Bytes left to unpack. */
static inline size_t tb_buf_remaining(const tb_buf *b) { return b->len - b->pos; }

/* ------------------------------------------------------------------ */
/* Chrome trace-event JSON writer                                      */
/* ------------------------------------------------------------------ */

/*
 * Events are kept in memory per rank with timestamps in seconds (relative to
 * the origin given at creation) and written as Chrome trace-event JSON
 * (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU),
 * one "process" per rank, which Perfetto and chrome://tracing open.
 * Names and categories must be string literals or otherwise outlive the
 * trace (they are stored as pointers).
 */
typedef struct tb_trace tb_trace;

/* pid = rank shown in the viewer; origin = tb_wtime() value of time zero. */
TB_API int tb_trace_create(tb_trace **out, int pid, double origin);
TB_API void tb_trace_destroy(tb_trace **tr);
/* Name shown for this process ("rank 3 (master)"); copied. */
TB_API int tb_trace_set_process_name(tb_trace *tr, const char *name);
/* Complete event ("X") on thread tid from t0 to t1 (absolute tb_wtime). */
TB_API int tb_trace_complete(tb_trace *tr, int tid, const char *cat, const char *name,
                             double t0, double t1);
/* Complete event with one integer argument shown in the viewer. */
TB_API int tb_trace_complete_arg(tb_trace *tr, int tid, const char *cat, const char *name,
                                 double t0, double t1, const char *arg_name, int64_t arg);
/* Counter event ("C"): series `series` of counter `name` takes `value` at t. */
TB_API int tb_trace_counter(tb_trace *tr, const char *name, const char *series, double t,
                            double value);
/* Instant event ("i") on thread tid. */
TB_API int tb_trace_instant(tb_trace *tr, int tid, const char *name, double t);
/* Message arrow: flow start ("s") at the sender and flow end ("f") at the
 * receiver; both sides use the same id. */
TB_API int tb_trace_flow_begin(tb_trace *tr, int tid, const char *name, uint64_t id, double t);
TB_API int tb_trace_flow_end(tb_trace *tr, int tid, const char *name, uint64_t id, double t);
TB_API size_t tb_trace_count(const tb_trace *tr);
/* Append this rank's events as JSON objects separated by ",\n" (no brackets). */
TB_API int tb_trace_serialize(const tb_trace *tr, tb_buf *out);
/* Write a complete trace file of this process's events alone.  The file is
 * written to "PATH.tmp" and renamed, so a failed run leaves no partial file. */
TB_API int tb_trace_write(const tb_trace *tr, const char *path);
/* Write the events of n traces (NULL entries skipped) into one file, e.g.
 * the ranks of a simulated run; same atomic write. */
TB_API int tb_trace_write_set(const tb_trace *const *trs, size_t n, const char *path);
/* Write n pieces, each the output of tb_trace_serialize (empty ones
 * skipped), e.g. traces that reached this process as bytes; same atomic write. */
TB_API int tb_trace_write_pieces(const tb_buf *pieces, size_t n, const char *path);
/*
 * Collective over comm: every rank passes its trace (or NULL for none); rank
 * `root` gathers all events and writes one file (tmp + rename).  Returns the
 * same code on every rank.
 */
TB_API int tb_trace_write_merged(const tb_trace *tr, MPI_Comm comm, int root, const char *path);

/* ------------------------------------------------------------------ */
/* Progress lines                                                      */
/* ------------------------------------------------------------------ */

/*
 * The one mechanism for progress lines: every long-running command and
 * module prints them through a tb_progress.  The N-of-M kind reads
 * "progress: 1234/4096 tasks (30.1%), 512.3 tasks/s, ETA 5.6 s" on the given
 * stream, at most once per `interval` seconds, and once at the end; a module
 * with a different kind of line (bnb's incumbent and bound) passes its own
 * text through tb_progress_note, rate-limited the same way.
 */
typedef struct tb_progress tb_progress;

/* For tb_progress_create's interval: TENBIN_PROGRESS_INTERVAL (the default
 * for lines a user watches).  0 prints every update or note. */
#define TB_PROGRESS_INTERVAL_ENV (-1.0)

/* A NULL stream prints nothing (the calls stay valid); what: the noun of the
 * count, "tasks" when NULL; interval < 0: TB_PROGRESS_INTERVAL_ENV. */
TB_API int tb_progress_create(tb_progress **out, FILE *stream, const char *what,
                              uint64_t total, double interval);
TB_API void tb_progress_destroy(tb_progress **p);
/* Set the absolute count done; prints if the interval has passed. */
TB_API void tb_progress_update(tb_progress *p, uint64_t done);
/* Print the final line (even if throttled). */
TB_API void tb_progress_finish(tb_progress *p);
/* Format one line into buf (for tests); returns snprintf's result. */
TB_API int tb_progress_format(char *buf, size_t n, const char *what, uint64_t done,
                              uint64_t total, double elapsed);
/*
 * A line of the caller's own text (printf-style; the caller's prefix, no
 * newline), printed when the interval has passed since the last line on the
 * caller's clock `now` (seconds from the start of the run, virtual in a
 * simulation); final prints it regardless and ends the lines, as
 * tb_progress_finish.  Returns 1 if the line was printed.
 */
TB_API int tb_progress_note(tb_progress *p, double now, int final, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* When, on tb_progress_note's clock, the next note is due (INFINITY once
 * finished): for a caller that sets a timer for it. */
TB_API double tb_progress_note_due(const tb_progress *p);
/*
 * Whether to print progress lines at all: yes when forced (--progress), no
 * when quiet (-q) or TENBIN_QUIET, else only when the user watches: stderr
 * is a terminal or, for a rank under an MPI launcher (whose stderr is a
 * pipe), the launcher's stderr is.
 */
TB_API int tb_progress_wanted(int forced, int quiet);


/* ------------------------------------------------------------------ */
/* Hashing                                                             */
/* ------------------------------------------------------------------ */

/* FNV-1a over n bytes, continuing from h (start from TB_FNV1A_INIT):
 * names in hash tables, file contents checked after a transfer. */
#define TB_FNV1A_INIT 14695981039346656037ULL
TB_API uint64_t tb_fnv1a(uint64_t h, const void *data, size_t n);

/* ------------------------------------------------------------------ */
/* Summary statistics                                                  */
/* ------------------------------------------------------------------ */

typedef struct tb_stats {
    size_t n;
    double mean, median, min, max, stddev, sum;
} tb_stats;

/* Statistics of n values (n may be 0: all fields 0).  Does not modify x. */
TB_API int tb_stats_compute(const double *x, size_t n, tb_stats *out);

/* Least-squares line y = intercept + slope x, with the standard errors of
 * both (0 when n == 2: two points fit exactly). */
typedef struct tb_linfit {
    double slope, intercept;
    double se_slope, se_intercept;
} tb_linfit;

/* Fit n >= 2 points with at least two distinct x (TB_ERR_RANGE otherwise). */
TB_API int tb_linfit_compute(const double *x, const double *y, size_t n, tb_linfit *out);

/* ------------------------------------------------------------------ */
/* Small helpers shared by the tools                                   */
/* ------------------------------------------------------------------ */

/* Strict number parsing: the whole string must be a number in range.
 * Return TB_ERR_PARSE or TB_ERR_RANGE otherwise. */
TB_API int tb_parse_long(const char *s, long min, long max, long *out);
TB_API int tb_parse_double(const char *s, double *out);
/* Read a whole file of at most max bytes into *data, NUL-terminated (the
 * caller frees; *len excludes the NUL).  Errors, with one line in err:
 * TB_ERR_IO "PATH: cannot read: REASON", TB_ERR_RANGE "PATH: cannot read:
 * larger than MAX bytes", TB_ERR_NOMEM. */
TB_API int tb_read_file(const char *path, size_t max, char **data, size_t *len, char *err,
                        size_t errlen);
/* The program exec would run for prog, into out (n bytes): prog itself if
 * it holds a '/' and is executable, else the first regular executable file
 * of that name in a PATH directory (an empty entry is the current directory;
 * no PATH: /usr/local/bin:/usr/bin:/bin, as execvp).  1 if found, else 0. */
TB_API int tb_which(const char *prog, char *out, size_t n);
/* Write a whole file atomically (PATH.tmp, fsync, then rename). */
TB_API int tb_write_file_atomic(const char *path, const void *data, size_t len);
/* Make room for one more item in a growable array: `items` is the address of
 * the array pointer (e.g. &q->heap), *cap its capacity in items, len the
 * items in use.  When len == *cap the array doubles (from `first` items);
 * otherwise nothing happens.  TB_ERR_NOMEM leaves the array as it was. */
TB_API int tb_grow(void *items, size_t *cap, size_t len, size_t item_size, size_t first);

#ifdef __cplusplus
}
#endif
#endif /* TENBIN_CORE_H */
