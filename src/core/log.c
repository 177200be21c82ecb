/*
 * log.c - the logger.
 *
 * This file holds the only global mutable state of the core: the logger's
 * configuration (level threshold, rank shown in the prefix, sink).  Level and
 * rank are atomics so tb_log can test them without locking; the sink and its
 * context are read and called under one mutex so that replacing the sink
 * never races with a call to the old one, and so that lines from several
 * threads are delivered one at a time.  A sink must therefore not log.
 */
#define _POSIX_C_SOURCE 200809L

#include "tenbin/core.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Threshold not read yet: resolved from TENBIN_LOG on first use. */
#define LEVEL_UNSET (-1)
/* Most lines fit here; longer ones are formatted into a heap buffer. */
#define LINE_STACK 1024

static _Atomic int log_level = LEVEL_UNSET;
static _Atomic int log_rank = -1;
static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static tb_log_sink sink_fn; /* NULL: the default sink */
static void *sink_ctx;

static const char *const level_names[] = {"ERROR", "WARN", "INFO", "DEBUG", "TRACE"};

static const char *level_name(tb_log_level level)
{
    if ((int)level < 0 || (size_t)level >= sizeof level_names / sizeof level_names[0])
        return "?";
    return level_names[level];
}

int tb_log_level_parse(const char *s, tb_log_level *out)
{
    static const char *const lower[] = {"error", "warn", "info", "debug", "trace"};
    if (s == NULL || out == NULL)
        return TB_ERR_PARSE;
    for (int i = 0; i <= TB_LOG_TRACE; i++) {
        if (strcasecmp(s, lower[i]) == 0 || (s[0] == (char)('0' + i) && s[1] == '\0')) {
            *out = (tb_log_level)i;
            return TB_OK;
        }
    }
    if (strcasecmp(s, "warning") == 0) {
        *out = TB_LOG_WARN;
        return TB_OK;
    }
    return TB_ERR_PARSE;
}

/*
 * First use: take TENBIN_LOG, or WARN.  The threshold is published before the
 * warning about a bad value is logged, because logging that warning comes
 * back here; the compare-exchange keeps a level set concurrently by
 * tb_log_set_level.
 */
static int resolve_level(void)
{
    /* Reentry (only if TENBIN_LOG were missing from the registry, whose
     * lookup failure is itself logged) or a racing first use: WARN for now. */
    static _Atomic int busy;
    if (atomic_exchange(&busy, 1))
        return TB_LOG_WARN;
    const char *s = NULL, *deflt = tb_env_default("TENBIN_LOG");
    tb_log_level parsed, given;
    if (tb_log_level_parse(deflt, &parsed) != TB_OK)
        parsed = TB_LOG_WARN; /* only if the registry lost TENBIN_LOG's default */
    int bad = 0;
    if (tb_env_string("TENBIN_LOG", &s) == TB_OK && s != NULL) {
        bad = tb_log_level_parse(s, &given) != TB_OK;
        if (!bad)
            parsed = given;
    }
    int expected = LEVEL_UNSET;
    atomic_compare_exchange_strong(&log_level, &expected, (int)parsed);
    if (bad)
        tb_log(TB_LOG_WARN, "TENBIN_LOG=%s: unknown level, using %s", s, deflt ? deflt : "warn");
    atomic_store(&busy, 0);
    return atomic_load(&log_level);
}

static int current_level(void)
{
    int lv = atomic_load(&log_level);
    return lv == LEVEL_UNSET ? resolve_level() : lv;
}

void tb_log_set_level(tb_log_level level)
{
    int lv = (int)level;
    if (lv < TB_LOG_ERROR)
        lv = TB_LOG_ERROR;
    if (lv > TB_LOG_TRACE)
        lv = TB_LOG_TRACE;
    atomic_store(&log_level, lv);
}

tb_log_level tb_log_get_level(void) { return (tb_log_level)current_level(); }

void tb_log_set_rank(int rank) { atomic_store(&log_rank, rank < 0 ? -1 : rank); }

void tb_log_set_sink(tb_log_sink sink, void *ctx)
{
    pthread_mutex_lock(&sink_lock);
    sink_fn = sink;
    sink_ctx = ctx;
    pthread_mutex_unlock(&sink_lock);
}

/* One fprintf per line so lines of concurrent processes sharing stderr do
 * not interleave mid-line. */
static void default_sink(void *ctx, tb_log_level level, int rank, const char *line)
{
    (void)ctx;
    if (rank >= 0)
        fprintf(stderr, "[tenbin r%d %s] %s\n", rank, level_name(level), line);
    else
        fprintf(stderr, "[tenbin %s] %s\n", level_name(level), line);
    fflush(stderr);
}

static void deliver(tb_log_level level, const char *line)
{
    int rank = atomic_load(&log_rank);
    pthread_mutex_lock(&sink_lock);
    if (sink_fn != NULL)
        sink_fn(sink_ctx, level, rank, line);
    else
        default_sink(NULL, level, rank, line);
    pthread_mutex_unlock(&sink_lock);
}

void tb_vlog(tb_log_level level, const char *fmt, va_list ap)
{
    if ((int)level > current_level() || fmt == NULL)
        return;
    char stack[LINE_STACK];
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(stack, sizeof stack, fmt, ap);
    char *line = stack;
    if (n >= (int)sizeof stack) {
        /* Too long for the stack buffer: format again into the heap; if that
         * fails, deliver the truncated text rather than nothing. */
        char *heap = malloc((size_t)n + 1);
        if (heap != NULL) {
            vsnprintf(heap, (size_t)n + 1, fmt, copy);
            line = heap;
        }
    } else if (n < 0) {
        strcpy(stack, "(log format error)");
    }
    va_end(copy);
    deliver(level, line);
    if (line != stack)
        free(line);
}

void tb_log(tb_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tb_vlog(level, fmt, ap);
    va_end(ap);
}
