/*
 * test_core.c - unit tests of the core library (no MPI communication).
 * Run with no argument for all tests, or with a test name.
 */
#define _POSIX_C_SOURCE 200809L

#include "tenbin/config.h"
#include "tenbin/core.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../tb_test.h"
#include "core/buf_inline.h"
#include "core/ckpt.h"
#include "core/clock_inline.h"
#include "core/json.h"
#include "core/proc.h"
#include "mw/proto.h"

/* ---------------------------------------------------------------- */
/* Helpers                                                           */
/* ---------------------------------------------------------------- */

/* Log capture: every line a sink receives. */
#define CAP_LINES 16
typedef struct capture {
    int calls;
    int level[CAP_LINES];
    int rank[CAP_LINES];
    char line[CAP_LINES][2048];
    size_t len[CAP_LINES]; /* full length, even if the copy was cut */
} capture;

static void capture_sink(void *ctx, tb_log_level level, int rank, const char *line)
{
    capture *c = ctx;
    if (c->calls < CAP_LINES) {
        c->level[c->calls] = (int)level;
        c->rank[c->calls] = rank;
        snprintf(c->line[c->calls], sizeof c->line[0], "%s", line);
        c->len[c->calls] = strlen(line);
    }
    c->calls++;
}

static void capture_start(capture *c, tb_log_level level)
{
    memset(c, 0, sizeof *c);
    tb_log_set_level(level);
    tb_log_set_sink(capture_sink, c);
}

static void capture_stop(void)
{
    tb_log_set_sink(NULL, NULL);
    tb_log_set_level(TB_LOG_WARN);
    tb_log_set_rank(-1);
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Whole file as a NUL-terminated string (caller frees), or NULL. */
static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    size_t got;
    while (s != NULL && (got = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n - 1 == 0) {
            char *t = realloc(s, cap * 2);
            if (t == NULL)
                free(s);
            s = t;
            cap *= 2;
        }
    }
    fclose(f);
    if (s != NULL)
        s[n] = '\0';
    return s;
}

/* A scratch directory, removed (with the files tests leave) by rm_scratch. */
static char scratch[512];

static int make_scratch(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/tb_core_XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    return mkdtemp(scratch) != NULL;
}

static void scratch_path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", scratch, name);
}

static void rm_scratch(const char *const *names)
{
    char p[600];
    for (; *names; names++) {
        scratch_path(p, sizeof p, *names);
        remove(p);
    }
    rmdir(scratch);
}

/*
 * A minimal strict JSON validator (RFC 8259 grammar, no semantics), enough
 * to tell that the trace writer emits something a JSON parser accepts.
 */
static const char *json_value(const char *p, int depth);

static const char *json_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static const char *json_string(const char *p)
{
    if (*p++ != '"')
        return NULL;
    while (*p != '"') {
        if ((unsigned char)*p < 0x20)
            return NULL; /* raw control characters (and the NUL) */
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", p[i]) || p[i] == '\0')
                        return NULL;
                p += 4;
            } else if (!strchr("\"\\/bfnrt", *p) || *p == '\0') {
                return NULL;
            }
        }
        p++;
    }
    return p + 1;
}

static const char *json_digits(const char *p)
{
    if (*p < '0' || *p > '9')
        return NULL;
    while (*p >= '0' && *p <= '9')
        p++;
    return p;
}

static const char *json_number(const char *p)
{
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if ((p = json_digits(p)) == NULL)
        return NULL;
    if (*p == '.' && (p = json_digits(p + 1)) == NULL)
        return NULL;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        p = json_digits(p);
    }
    return p;
}

static const char *json_members(const char *p, char close, int depth)
{
    p = json_ws(p + 1);
    if (*p == close)
        return p + 1;
    for (;;) {
        if (close == '}') {
            if ((p = json_string(json_ws(p))) == NULL)
                return NULL;
            p = json_ws(p);
            if (*p++ != ':')
                return NULL;
        }
        if ((p = json_value(p, depth + 1)) == NULL)
            return NULL;
        p = json_ws(p);
        if (*p == close)
            return p + 1;
        if (*p++ != ',')
            return NULL;
    }
}

static const char *json_value(const char *p, int depth)
{
    if (depth > 64)
        return NULL;
    p = json_ws(p);
    if (*p == '{')
        return json_members(p, '}', depth);
    if (*p == '[')
        return json_members(p, ']', depth);
    if (*p == '"')
        return json_string(p);
    if (strncmp(p, "true", 4) == 0 || strncmp(p, "null", 4) == 0)
        return p + 4;
    if (strncmp(p, "false", 5) == 0)
        return p + 5;
    return json_number(p);
}

static int json_valid(const char *s)
{
    const char *end = json_value(s, 0);
    return end != NULL && *json_ws(end) == '\0';
}

/* ---------------------------------------------------------------- */
/* Logging (first: it checks the lazy read of TENBIN_LOG)           */
/* ---------------------------------------------------------------- */

static void test_log_env_level(void)
{
    /* Nothing has logged yet in this process when this test runs first
     * (it is first in the table, and also when run alone). */
    setenv("TENBIN_LOG", "debug", 1);
    TB_ASSERT_EQ_INT(tb_log_get_level(), TB_LOG_DEBUG);
    unsetenv("TENBIN_LOG");
    tb_log_set_level(TB_LOG_WARN);
    TB_ASSERT_EQ_INT(tb_log_get_level(), TB_LOG_WARN);
}

static void test_log_parse(void)
{
    tb_log_level lv;
    TB_ASSERT_OK(tb_log_level_parse("warn", &lv));
    TB_ASSERT_EQ_INT(lv, TB_LOG_WARN);
    TB_ASSERT_OK(tb_log_level_parse("DEBUG", &lv));
    TB_ASSERT_EQ_INT(lv, TB_LOG_DEBUG);
    TB_ASSERT_OK(tb_log_level_parse("0", &lv));
    TB_ASSERT_EQ_INT(lv, TB_LOG_ERROR);
    TB_ASSERT_OK(tb_log_level_parse("4", &lv));
    TB_ASSERT_EQ_INT(lv, TB_LOG_TRACE);
    TB_ASSERT_OK(tb_log_level_parse("trace", &lv));
    TB_ASSERT_EQ_INT(lv, TB_LOG_TRACE);
    TB_ASSERT_EQ_INT(tb_log_level_parse("5", &lv), TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(tb_log_level_parse("", &lv), TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(tb_log_level_parse("42", &lv), TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(tb_log_level_parse("verbose", &lv), TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(tb_log_level_parse(NULL, &lv), TB_ERR_PARSE);
}

static void test_log_sink(void)
{
    capture c;
    capture_start(&c, TB_LOG_INFO);
    tb_log(TB_LOG_DEBUG, "hidden %d", 1);
    TB_LOG_INFO("shown %d", 2);
    tb_log_set_rank(3);
    TB_LOG_ERR("with rank %s", "x");
    tb_log(TB_LOG_TRACE, "hidden");
    int calls = c.calls;
    capture_stop();
    TB_ASSERT_EQ_INT(calls, 2);
    TB_ASSERT_STR_EQ(c.line[0], "shown 2");
    TB_ASSERT_EQ_INT(c.level[0], TB_LOG_INFO);
    TB_ASSERT_EQ_INT(c.rank[0], -1);
    TB_ASSERT_STR_EQ(c.line[1], "with rank x");
    TB_ASSERT_EQ_INT(c.level[1], TB_LOG_ERROR);
    TB_ASSERT_EQ_INT(c.rank[1], 3);
}

static void test_log_long_line(void)
{
    capture c;
    char big[1800];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    capture_start(&c, TB_LOG_WARN);
    TB_LOG_WARN("<%s>", big);
    capture_stop();
    TB_ASSERT_EQ_INT(c.calls, 1);
    TB_ASSERT_EQ_INT(c.len[0], sizeof big + 1);
    TB_ASSERT(c.line[0][0] == '<' && c.line[0][sizeof big] == '>');
}

/* The default sink's format, by pointing stderr at a file for a moment. */
static void test_log_default_sink(void)
{
    char path[600];
    TB_ASSERT(make_scratch());
    scratch_path(path, sizeof path, "stderr.txt");
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    TB_ASSERT(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    tb_log_set_level(TB_LOG_INFO);
    tb_log_set_rank(3);
    TB_LOG_WARN("msg %d", 7);
    tb_log_set_rank(-1);
    TB_LOG_INFO("plain");
    TB_LOG_DEBUG("filtered");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    capture_stop();
    char *text = read_all(path);
    const char *const names[] = {"stderr.txt", NULL};
    rm_scratch(names);
    TB_ASSERT(text != NULL);
    int same = strcmp(text, "[tenbin r3 WARN] msg 7\n[tenbin INFO] plain\n") == 0;
    if (!same)
        printf("    got: %s", text);
    free(text);
    TB_ASSERT(same);
}

/* ---------------------------------------------------------------- */
/* Errors                                                            */
/* ---------------------------------------------------------------- */

static const int all_codes[] = {
#define CODE(name, val, msg) val,
    TB_ERRNO_MAP(CODE)
#undef CODE
};
static const char *const all_names[] = {
#define NAME(name, val, msg) "TB_" #name,
    TB_ERRNO_MAP(NAME)
#undef NAME
};
#define N_CODES (sizeof all_codes / sizeof all_codes[0])

static void test_err_table(void)
{
    TB_ASSERT_EQ_INT(N_CODES, 16);
    TB_ASSERT_STR_EQ(tb_strerror(TB_OK), "success");
    TB_ASSERT_STR_EQ(tb_err_name(TB_ERR_NOMEM), "TB_ERR_NOMEM");
    TB_ASSERT_STR_EQ(tb_strerror(TB_ERR_PARSE), "malformed input");
    for (size_t i = 0; i < N_CODES; i++) {
        TB_ASSERT(i == 0 ? all_codes[i] == 0 : all_codes[i] < 0);
        TB_ASSERT_STR_EQ(tb_err_name(all_codes[i]), all_names[i]);
        TB_ASSERT(tb_strerror(all_codes[i])[0] != '\0');
        for (size_t j = 0; j < i; j++) {
            TB_ASSERT(all_codes[i] != all_codes[j]);
            TB_ASSERT(strcmp(tb_strerror(all_codes[i]), tb_strerror(all_codes[j])) != 0);
            TB_ASSERT(strcmp(tb_err_name(all_codes[i]), tb_err_name(all_codes[j])) != 0);
        }
    }
    const int unknown[] = {1, -16, -1000, INT_MIN, INT_MAX};
    for (size_t k = 0; k < sizeof unknown / sizeof unknown[0]; k++) {
        const char *m = tb_strerror(unknown[k]);
        TB_ASSERT(m != NULL && tb_err_name(unknown[k]) != NULL);
        for (size_t i = 0; i < N_CODES; i++)
            TB_ASSERT(strcmp(m, tb_strerror(all_codes[i])) != 0);
    }
}

/* The library reports the version it was configured with, in both forms. */
/* One lookup of "can exec run this" for flow run and the emulator. */
static void test_runnable(void)
{
    TB_ASSERT(tb__runnable("sh"));
    TB_ASSERT(tb__runnable("/bin/sh"));
    TB_ASSERT(!tb__runnable("tenbin-no-such-program"));
    TB_ASSERT(!tb__runnable("/etc/hostname-no-such-file"));
    TB_ASSERT(!tb__runnable("/etc/passwd")); /* a file, not executable */
    TB_ASSERT(!tb__runnable(""));
    TB_ASSERT(!tb__runnable(NULL));
    const char *old = getenv("PATH");
    char *keep = old ? strdup(old) : NULL;
    setenv("PATH", "/nonexistent:/etc", 1); /* a directory named passwd's parent: no exec */
    TB_ASSERT(!tb__runnable("sh"));
    TB_ASSERT(!tb__runnable("passwd") || access("/etc/passwd", X_OK) == 0);
    unsetenv("PATH"); /* execvp's default path */
    TB_ASSERT(tb__runnable("sh"));
    if (keep)
        setenv("PATH", keep, 1);
    free(keep);
}

static void test_version(void)
{
    TB_ASSERT_EQ_U64(tb_version(), TB_VERSION_ENCODE(TENBIN_VERSION_MAJOR, TENBIN_VERSION_MINOR,
                                                     TENBIN_VERSION_PATCH));
    TB_ASSERT_STR_EQ(tb_version_string(), TENBIN_VERSION);
    unsigned v = tb_version();
    char s[32];
    snprintf(s, sizeof s, "%u.%u.%u", v >> 16, (v >> 8) & 0xffu, v & 0xffu);
    TB_ASSERT_STR_EQ(s, tb_version_string());
    /* Encoded versions order as the versions do. */
    TB_ASSERT(TB_VERSION_ENCODE(0, 1, 255) < TB_VERSION_ENCODE(0, 2, 0));
    TB_ASSERT(TB_VERSION_ENCODE(0, 255, 255) < TB_VERSION_ENCODE(1, 0, 0));
}

static int fails_range(void) { return TB_ERR_RANGE; }

static int checked(int *reached)
{
    TB_CHECK(TB_OK);
    TB_CHECK(fails_range());
    *reached = 1;
    return TB_OK;
}

static void test_err_check_macro(void)
{
    capture c;
    int reached = 0;
    capture_start(&c, TB_LOG_DEBUG);
    int rc = checked(&reached);
    capture_stop();
    TB_ASSERT_EQ_INT(rc, TB_ERR_RANGE);
    TB_ASSERT_EQ_INT(reached, 0);
    TB_ASSERT_EQ_INT(c.calls, 1);
    TB_ASSERT_EQ_INT(c.level[0], TB_LOG_DEBUG);
    TB_ASSERT(strstr(c.line[0], "test_core.c:checked:") != NULL);
    TB_ASSERT(strstr(c.line[0], ": fails_range(): value out of range") != NULL);
    /* Not logged at the default level. */
    capture_start(&c, TB_LOG_WARN);
    checked(&reached);
    capture_stop();
    TB_ASSERT_EQ_INT(c.calls, 0);
}

/* ---------------------------------------------------------------- */
/* Clocks                                                            */
/* ---------------------------------------------------------------- */

static void test_clock(void)
{
    double w0 = tb_wtime(), p0 = tb_process_cputime(), t0 = tb_thread_cputime();
    volatile double sink = 0;
    while (tb_thread_cputime() - t0 < 0.02)
        for (int i = 0; i < 10000; i++)
            sink += i;
    double w1 = tb_wtime();
    TB_ASSERT(sink > 0);
    TB_ASSERT(w0 > 0 && w1 >= w0);
    TB_ASSERT(tb_process_cputime() - p0 >= 0.015);
    TB_ASSERT(w1 - w0 >= 0.015);
    TB_ASSERT(w1 - w0 < 60);
}

/* The real transport's per-task clock: CLOCK_MONOTONIC's seconds (within a
 * generous millisecond of it: the counter is scaled by a rate measured over
 * the run), never decreasing, and mostly without a real read when the
 * kernel keeps time with the counter. */
static void test_fastclock(void)
{
    unsetenv("TENBIN_CLOCK");
    tb__fastclock c;
    tb__fastclock_init(&c);
    double w0 = tb_wtime(), f0 = tb__fastclock_now(&c), prev = f0;
    TB_ASSERT(fabs(f0 - w0) < 1e-3);
    uint64_t reads = 0;
    int backwards = 0;
    double worst = 0;
    while (tb_wtime() - w0 < 0.05) {
        for (int i = 0; i < 1000; i++, reads++) {
            double v = tb__fastclock_now(&c);
            backwards |= v < prev;
            prev = v;
        }
        double d = fabs(tb__fastclock_now(&c) - tb_wtime());
        worst = d > worst ? d : worst;
    }
    TB_ASSERT(!backwards);
    if (worst >= 1e-3)
        TB_TEST_NOTE_("counter clock off by %g s (tsc %d)", worst, c.tsc);
    TB_ASSERT(worst < 1e-3);
    /* 50 ms in spans of at most 2^22 ticks (1.7 ms at 2.5 GHz, longer
     * on slower counters): far fewer real reads than reads */
    if (c.tsc)
        TB_ASSERT(c.anchors < reads / 10);
    else
        TB_ASSERT(c.anchors >= reads);
    /* a sleep measured both ways */
    double a = tb__fastclock_now(&c), b = tb_wtime();
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    double da = tb__fastclock_now(&c) - a, db = tb_wtime() - b;
    TB_ASSERT(da >= 0.019 && fabs(da - db) < 1e-3);

    setenv("TENBIN_CLOCK", "monotonic", 1);
    tb__fastclock_init(&c);
    TB_ASSERT_EQ_INT(c.tsc, 0);
    uint64_t before = c.anchors;
    (void)tb__fastclock_now(&c);
    TB_ASSERT(c.anchors == before + 1);
    setenv("TENBIN_CLOCK", "tsc-please", 1); /* not a word it knows: a warning, auto */
    tb__fastclock_init(&c);
    TB_ASSERT(fabs(tb__fastclock_now(&c) - tb_wtime()) < 1e-3);
    unsetenv("TENBIN_CLOCK");
}

/* ---------------------------------------------------------------- */
/* Environment registry                                              */
/* ---------------------------------------------------------------- */

static void unset_all(void)
{
    for (size_t i = 0; i < tb_env_count(); i++)
        unsetenv(tb_env_get(i)->name);
}

static void test_env_table(void)
{
    size_t n = tb_env_count();
    TB_ASSERT(n >= 8);
    TB_ASSERT(tb_env_get(n) == NULL);
    unset_all();
    for (size_t i = 0; i < n; i++) {
        const tb_opt_desc *d = tb_env_get(i);
        TB_ASSERT(d != NULL && d->name != NULL && d->help != NULL && d->help[0] != '\0');
        TB_ASSERT(strncmp(d->name, "TENBIN_", 7) == 0);
        for (size_t j = 0; j < i; j++)
            TB_ASSERT(strcmp(d->name, tb_env_get(j)->name) != 0);
        /* Every non-string default exists and parses as its type. */
        int b;
        long l;
        double x;
        const char *s;
        switch (d->type) {
        case TB_OPT_BOOL: TB_ASSERT_OK(tb_env_bool(d->name, &b)); break;
        case TB_OPT_INT: TB_ASSERT_OK(tb_env_int(d->name, &l)); break;
        case TB_OPT_DOUBLE: TB_ASSERT_OK(tb_env_double(d->name, &x)); break;
        case TB_OPT_STRING: TB_ASSERT_OK(tb_env_string(d->name, &s)); break;
        }
    }
}

static void test_env_defaults(void)
{
    int b = -1;
    long l = -1;
    double x = -1;
    const char *s = "unset";
    unset_all();
    TB_ASSERT_OK(tb_env_bool("TENBIN_QUIET", &b));
    TB_ASSERT_EQ_INT(b, 0);
    TB_ASSERT_OK(tb_env_int("TENBIN_MW_WINDOW", &l));
    TB_ASSERT_EQ_INT(l, 0);
    TB_ASSERT_OK(tb_env_string("TENBIN_MW_CHUNK", &s));
    TB_ASSERT_STR_EQ(s, "auto");
    TB_ASSERT_OK(tb_env_int("TENBIN_MW_FORWARD_BYTES", &l));
    TB_ASSERT_EQ_INT(l, 65536);
    TB_ASSERT_OK(tb_env_double("TENBIN_PROGRESS_INTERVAL", &x));
    TB_ASSERT_NEAR(x, 1.0, 0);
    TB_ASSERT_OK(tb_env_string("TENBIN_TRACE", &s));
    TB_ASSERT(s == NULL);
    TB_ASSERT_OK(tb_env_string("TENBIN_MW_POLICY", &s));
    TB_ASSERT_STR_EQ(s, "dynamic");
    TB_ASSERT_OK(tb_env_string("TENBIN_LOG", &s));
    TB_ASSERT_STR_EQ(s, "warn");
}

static void test_env_values(void)
{
    int b = -1;
    long l = -1;
    double x = -1;
    const char *s = NULL;
    unset_all();
    const char *yes[] = {"1", "true", "YES", "On"}, *no[] = {"0", "False", "no", "OFF"};
    for (int i = 0; i < 4; i++) {
        setenv("TENBIN_QUIET", yes[i], 1);
        TB_ASSERT_OK(tb_env_bool("TENBIN_QUIET", &b));
        TB_ASSERT_EQ_INT(b, 1);
        setenv("TENBIN_QUIET", no[i], 1);
        TB_ASSERT_OK(tb_env_bool("TENBIN_QUIET", &b));
        TB_ASSERT_EQ_INT(b, 0);
    }
    setenv("TENBIN_MW_WINDOW", "-8", 1);
    TB_ASSERT_OK(tb_env_int("TENBIN_MW_WINDOW", &l));
    TB_ASSERT_EQ_INT(l, -8);
    setenv("TENBIN_PROGRESS_INTERVAL", "0.25", 1);
    TB_ASSERT_OK(tb_env_double("TENBIN_PROGRESS_INTERVAL", &x));
    TB_ASSERT_NEAR(x, 0.25, 0);
    setenv("TENBIN_TRACE", "out.json", 1);
    TB_ASSERT_OK(tb_env_string("TENBIN_TRACE", &s));
    TB_ASSERT_STR_EQ(s, "out.json");
    /* An empty value means unset. */
    setenv("TENBIN_MW_WINDOW", "", 1);
    TB_ASSERT_OK(tb_env_int("TENBIN_MW_WINDOW", &l));
    TB_ASSERT_EQ_INT(l, 0);
    unset_all();
}

static void test_env_errors(void)
{
    capture c;
    int b = 7;
    long l = 7, ln = 7, lt = 7;
    double x = 7;
    const char *s = "untouched";
    unset_all();
    capture_start(&c, TB_LOG_WARN);
    setenv("TENBIN_QUIET", "maybe", 1);
    int rb = tb_env_bool("TENBIN_QUIET", &b);
    setenv("TENBIN_MW_WINDOW", "8x", 1);
    int ri = tb_env_int("TENBIN_MW_WINDOW", &l);
    setenv("TENBIN_PROGRESS_INTERVAL", "nan", 1);
    int rd = tb_env_double("TENBIN_PROGRESS_INTERVAL", &x);
    int rn = tb_env_int("TENBIN_NO_SUCH_THING", &ln);
    int rs = tb_env_string("HOME", &s);
    int rt = tb_env_int("TENBIN_LOG", &lt); /* declared as a string */
    capture_stop();
    unset_all();
    TB_ASSERT_EQ_INT(rb, TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(ri, TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(rd, TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(rn, TB_ERR_NOTFOUND);
    TB_ASSERT_EQ_INT(rs, TB_ERR_NOTFOUND);
    TB_ASSERT_EQ_INT(rt, TB_ERR_INVALID);
    /* A bad value gives the registry's default, so callers need none. */
    TB_ASSERT_EQ_INT(b, 0);
    TB_ASSERT_EQ_INT(l, 0);
    TB_ASSERT_NEAR(x, 1.0, 0);
    /* An undeclared name or the wrong type leaves the output alone. */
    TB_ASSERT(ln == 7 && lt == 7 && strcmp(s, "untouched") == 0);
    TB_ASSERT_EQ_INT(c.calls, 3); /* one warning per bad value */
    TB_ASSERT(strstr(c.line[0], "TENBIN_QUIET=maybe") != NULL);
    TB_ASSERT(strstr(c.line[1], "TENBIN_MW_WINDOW=8x") != NULL);
    TB_ASSERT(strstr(c.line[2], "TENBIN_PROGRESS_INTERVAL=nan") != NULL);
}

/* tb_env_int_in / tb_env_double_in: out of range is the default, quietly;
 * tb_env_default is the table's text. */
static void test_env_ranges(void)
{
    capture c;
    long l = 7;
    double x = 7;
    unset_all();
    capture_start(&c, TB_LOG_WARN);
    TB_ASSERT_OK(tb_env_int_in("TENBIN_MW_FORWARD_BYTES", 0, LONG_MAX, &l));
    TB_ASSERT_EQ_INT(l, 65536);
    setenv("TENBIN_MW_FORWARD_BYTES", "100", 1);
    TB_ASSERT_OK(tb_env_int_in("TENBIN_MW_FORWARD_BYTES", 0, 100, &l));
    TB_ASSERT_EQ_INT(l, 100);
    setenv("TENBIN_MW_FORWARD_BYTES", "-1", 1);
    TB_ASSERT_EQ_INT(tb_env_int_in("TENBIN_MW_FORWARD_BYTES", 0, LONG_MAX, &l), TB_ERR_RANGE);
    TB_ASSERT_EQ_INT(l, 65536);
    setenv("TENBIN_EMU_SPIN", "2", 1);
    TB_ASSERT_EQ_INT(tb_env_double_in("TENBIN_EMU_SPIN", 0, 1, &x), TB_ERR_RANGE);
    TB_ASSERT_NEAR(x, 50e-6, 0);
    TB_ASSERT_EQ_INT(c.calls, 0); /* the caller says what it expects */
    setenv("TENBIN_EMU_SPIN", "soon", 1);
    TB_ASSERT_EQ_INT(tb_env_double_in("TENBIN_EMU_SPIN", 0, 1, &x), TB_ERR_PARSE);
    TB_ASSERT_NEAR(x, 50e-6, 0);
    TB_ASSERT_EQ_INT(tb_env_int_in("TENBIN_NO_SUCH_THING", 0, 1, &l), TB_ERR_NOTFOUND);
    capture_stop();
    unset_all();
    TB_ASSERT_EQ_INT(c.calls, 1);
    TB_ASSERT_STR_EQ(tb_env_default("TENBIN_MW_POLICY"), "dynamic");
    TB_ASSERT(tb_env_default("TENBIN_TRACE") == NULL);
    TB_ASSERT(tb_env_default("TENBIN_NO_SUCH_THING") == NULL);
}

/* tb_env_word: the index of the word; unset is the default's; another word
 * is one warning line naming the variable and the words, and the default. */
static void test_env_word(void)
{
    static const char *const words[] = {"spin", "yield", "sleep", "auto", NULL};
    capture c;
    int w = -7;
    unset_all();
    capture_start(&c, TB_LOG_WARN);
    TB_ASSERT_OK(tb_env_word("TENBIN_MPI_WAIT", words, &w));
    TB_ASSERT_EQ_INT(w, 3);
    setenv("TENBIN_MPI_WAIT", "yield", 1);
    TB_ASSERT_OK(tb_env_word("TENBIN_MPI_WAIT", words, &w));
    TB_ASSERT_EQ_INT(w, 1);
    setenv("TENBIN_MPI_WAIT", "nap", 1);
    TB_ASSERT_EQ_INT(tb_env_word("TENBIN_MPI_WAIT", words, &w), TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(w, 3);
    w = -7;
    TB_ASSERT_EQ_INT(tb_env_word("TENBIN_NO_SUCH_THING", words, &w), TB_ERR_NOTFOUND);
    TB_ASSERT_EQ_INT(tb_env_word("TENBIN_QUIET", words, &w), TB_ERR_INVALID); /* a bool */
    TB_ASSERT_EQ_INT(w, -7);
    capture_stop();
    unset_all();
    TB_ASSERT_EQ_INT(c.calls, 1);
    TB_ASSERT(strstr(c.line[0], "TENBIN_MPI_WAIT=nap is not spin, yield, sleep or auto; using auto") !=
              NULL);
}

static void test_env_print(void)
{
    unset_all();
    setenv("TENBIN_MW_CHUNK", "4242", 1);
    FILE *f = tmpfile();
    TB_ASSERT(f != NULL);
    tb_env_print(f);
    rewind(f);
    char line[512];
    int help_col = -1, value_col = -1;
    size_t rows = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (help_col < 0) {
            TB_ASSERT(strncmp(line, "NAME ", 5) == 0);
            TB_ASSERT(strstr(line, " TYPE ") && strstr(line, " DEFAULT "));
            help_col = (int)(strstr(line, "HELP") - line);
            value_col = (int)(strstr(line, "VALUE") - line);
            continue;
        }
        const tb_opt_desc *d = tb_env_get(rows++);
        TB_ASSERT(d != NULL);
        TB_ASSERT(strncmp(line, d->name, strlen(d->name)) == 0);
        const char *h = strstr(line, d->help);
        TB_ASSERT(h != NULL && h - line == help_col);
        const char *want = strcmp(d->name, "TENBIN_MW_CHUNK") == 0 ? "4242 " : "- ";
        TB_ASSERT(strncmp(line + value_col, want, strlen(want)) == 0);
    }
    fclose(f);
    unset_all();
    TB_ASSERT_EQ_INT(rows, tb_env_count());
}

/* ---------------------------------------------------------------- */
/* RNG                                                               */
/* ---------------------------------------------------------------- */

/* Independent reference: the published splitmix64 and xoshiro256**. */
static uint64_t ref_splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static uint64_t ref_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t ref_next(uint64_t s[4])
{
    uint64_t r = ref_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = ref_rotl(s[3], 45);
    return r;
}

static void test_rng_known(void)
{
    tb_rng r;
    /* Constants computed separately (Python) from the reference algorithm. */
    tb_rng_seed(&r, 0);
    TB_ASSERT_EQ_U64(r.s[0], 0xe220a8397b1dcdafu);
    TB_ASSERT_EQ_U64(tb_rng_u64(&r), 0x99ec5f36cb75f2b4u);
    TB_ASSERT_EQ_U64(tb_rng_u64(&r), 0xbf6e1f784956452au);
    TB_ASSERT_EQ_U64(tb_rng_u64(&r), 0x1a5f849d4933e6e0u);
    tb_rng_seed(&r, 1);
    TB_ASSERT_EQ_U64(tb_rng_u64(&r), 0xb3f2af6d0fc710c5u);
    TB_ASSERT_EQ_U64(tb_rng_u64(&r), 0x853b559647364ceau);
    const uint64_t seeds[] = {0, 1, 42, 0xdeadbeefu, UINT64_MAX};
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        uint64_t x = seeds[k], s[4];
        for (int i = 0; i < 4; i++)
            s[i] = ref_splitmix(&x);
        tb_rng_seed(&r, seeds[k]);
        for (int i = 0; i < 1000; i++)
            TB_ASSERT_EQ_U64(tb_rng_u64(&r), ref_next(s));
    }
}

static void test_rng_streams(void)
{
    tb_rng a, b;
    tb_rng_seed(&a, 123);
    tb_rng_seed(&b, 123);
    for (int i = 0; i < 100; i++)
        TB_ASSERT_EQ_U64(tb_rng_u64(&a), tb_rng_u64(&b));
    tb_rng_seed(&b, 124);
    TB_ASSERT(tb_rng_u64(&a) != tb_rng_u64(&b));
    /* Stream 0 is the plain seed; other streams all differ. */
    tb_rng_seed(&a, 9);
    tb_rng_seed_stream(&b, 9, 0);
    TB_ASSERT_EQ_U64(tb_rng_u64(&a), tb_rng_u64(&b));
    enum { NS = 1024 };
    static uint64_t first[NS];
    for (uint64_t s = 0; s < NS; s++) {
        tb_rng_seed_stream(&a, 9, s);
        first[s] = tb_rng_u64(&a);
        for (uint64_t t = 0; t < s; t++)
            TB_ASSERT(first[s] != first[t]);
    }
    tb_rng_seed_stream(&a, 9, 5);
    tb_rng_seed_stream(&b, 9, 5);
    TB_ASSERT_EQ_U64(tb_rng_u64(&a), tb_rng_u64(&b));
    tb_rng_seed_stream(&b, 10, 5);
    TB_ASSERT(tb_rng_u64(&a) != tb_rng_u64(&b));
}

static void test_rng_below_uniform(void)
{
    enum { BINS = 10, DRAWS = 100000 };
    long count[BINS] = {0};
    tb_rng r;
    tb_rng_seed(&r, 2024);
    for (int i = 0; i < DRAWS; i++) {
        uint64_t v = tb_rng_below(&r, BINS);
        TB_ASSERT(v < BINS);
        count[v]++;
    }
    double chi2 = 0, expect = (double)DRAWS / BINS;
    for (int i = 0; i < BINS; i++)
        chi2 += (count[i] - expect) * (count[i] - expect) / expect;
    /* 9 degrees of freedom: P(chi2 > 27.88) = 0.001. */
    TB_ASSERT(chi2 < 27.88);
    for (int i = 0; i < 100; i++) {
        TB_ASSERT_EQ_U64(tb_rng_below(&r, 1), 0);
        TB_ASSERT(tb_rng_below(&r, (UINT64_C(1) << 63) + 1) <= (UINT64_C(1) << 63));
        TB_ASSERT(tb_rng_below(&r, UINT64_MAX) < UINT64_MAX);
    }
}

static void test_rng_real(void)
{
    tb_rng r;
    tb_rng_seed(&r, 77);
    double sum = 0, lo = 1, hi = 0;
    enum { N = 100000 };
    for (int i = 0; i < N; i++) {
        double u = tb_rng_double(&r);
        TB_ASSERT(u >= 0 && u < 1);
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
        double v = tb_rng_uniform(&r, -3, 5);
        TB_ASSERT(v >= -3 && v < 5);
        double e = tb_rng_exp(&r, 2.0);
        TB_ASSERT(e >= 0 && isfinite(e));
        sum += e;
    }
    TB_ASSERT(lo < 0.001 && hi > 0.999);
    TB_ASSERT_NEAR(sum / N, 2.0, 0.04);
}

/* ---------------------------------------------------------------- */
/* Buffers                                                           */
/* ---------------------------------------------------------------- */

static uint64_t bits_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static double double_of(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static void test_buf_roundtrip(void)
{
    tb_buf b = TB_BUF_INIT;
    const double dv[] = {0.0, -0.0, -1.5, DBL_MAX, -DBL_MIN, INFINITY,
                         double_of(0x7ff8000000000123u)};
    const int32_t iv[] = {0, -1, INT32_MIN, INT32_MAX};
    TB_ASSERT_OK(tb_buf_pack_u8(&b, 0));
    TB_ASSERT_OK(tb_buf_pack_u8(&b, UINT8_MAX));
    TB_ASSERT_OK(tb_buf_pack_u32(&b, 0));
    TB_ASSERT_OK(tb_buf_pack_u32(&b, UINT32_MAX));
    TB_ASSERT_OK(tb_buf_pack_u64(&b, 0));
    TB_ASSERT_OK(tb_buf_pack_u64(&b, UINT64_MAX));
    for (size_t i = 0; i < 4; i++)
        TB_ASSERT_OK(tb_buf_pack_i32(&b, iv[i]));
    for (size_t i = 0; i < 7; i++)
        TB_ASSERT_OK(tb_buf_pack_f64(&b, dv[i]));
    TB_ASSERT_OK(tb_buf_pack_bytes(&b, "abc", 3));
    TB_ASSERT_OK(tb_buf_pack_bytes(&b, NULL, 0));
    TB_ASSERT_EQ_INT(b.len, 2 + 8 + 16 + 16 + 56 + 7 + 4);

    uint8_t u8;
    uint32_t u32;
    uint64_t u64;
    int32_t i32;
    double d;
    const void *p;
    TB_ASSERT_OK(tb_buf_unpack_u8(&b, &u8));
    TB_ASSERT_EQ_INT(u8, 0);
    TB_ASSERT_OK(tb_buf_unpack_u8(&b, &u8));
    TB_ASSERT_EQ_INT(u8, 255);
    TB_ASSERT_OK(tb_buf_unpack_u32(&b, &u32));
    TB_ASSERT_EQ_U64(u32, 0);
    TB_ASSERT_OK(tb_buf_unpack_u32(&b, &u32));
    TB_ASSERT_EQ_U64(u32, UINT32_MAX);
    TB_ASSERT_OK(tb_buf_unpack_u64(&b, &u64));
    TB_ASSERT_EQ_U64(u64, 0);
    TB_ASSERT_OK(tb_buf_unpack_u64(&b, &u64));
    TB_ASSERT_EQ_U64(u64, UINT64_MAX);
    for (size_t i = 0; i < 4; i++) {
        TB_ASSERT_OK(tb_buf_unpack_i32(&b, &i32));
        TB_ASSERT_EQ_INT(i32, iv[i]);
    }
    for (size_t i = 0; i < 7; i++) {
        TB_ASSERT_OK(tb_buf_unpack_f64(&b, &d));
        TB_ASSERT_EQ_U64(bits_of(d), bits_of(dv[i])); /* sign of zero, NaN payload */
    }
    TB_ASSERT_OK(tb_buf_unpack_bytes(&b, &p, &u32));
    TB_ASSERT(u32 == 3 && memcmp(p, "abc", 3) == 0);
    TB_ASSERT_OK(tb_buf_unpack_bytes(&b, &p, &u32));
    TB_ASSERT_EQ_INT(u32, 0);
    TB_ASSERT_EQ_INT(tb_buf_remaining(&b), 0);
    TB_ASSERT_EQ_INT(tb_buf_unpack_u8(&b, &u8), TB_ERR_PARSE);
    tb_buf_free(&b);
    TB_ASSERT(b.data == NULL && b.len == 0 && b.cap == 0);
}

static void test_buf_layout(void)
{
    static const unsigned char want[] = {
        0x04, 0x03, 0x02, 0x01,                         /* u32 0x01020304 */
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* u64 */
        0xfe, 0xff, 0xff, 0xff,                         /* i32 -2 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f, /* f64 1.0 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0, /* f64 -2.0 */
        0x02, 0x00, 0x00, 0x00, 'h', 'i',               /* bytes "hi" */
        0xab,                                           /* u8 */
    };
    tb_buf b;
    tb_buf_init(&b);
    TB_ASSERT_OK(tb_buf_pack_u32(&b, 0x01020304u));
    TB_ASSERT_OK(tb_buf_pack_u64(&b, 0x0102030405060708u));
    TB_ASSERT_OK(tb_buf_pack_i32(&b, -2));
    TB_ASSERT_OK(tb_buf_pack_f64(&b, 1.0));
    TB_ASSERT_OK(tb_buf_pack_f64(&b, -2.0));
    TB_ASSERT_OK(tb_buf_pack_bytes(&b, "hi", 2));
    TB_ASSERT_OK(tb_buf_pack_u8(&b, 0xab));
    int same = b.len == sizeof want && memcmp(b.data, want, sizeof want) == 0;
    tb_buf_free(&b);
    TB_ASSERT(same);
}

static void test_buf_short(void)
{
    static const unsigned char data[] = {0x01, 0x02, 0x03, 0x0a, 0x00, 0x00, 0x00, 'x', 'y'};
    tb_buf v;
    uint8_t u8;
    uint32_t u32;
    uint64_t u64;
    int32_t i32;
    double d;
    const void *p;
    tb_buf_view(&v, data, 3);
    TB_ASSERT_EQ_INT(tb_buf_unpack_u32(&v, &u32), TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(v.pos, 0);
    TB_ASSERT_EQ_INT(tb_buf_unpack_i32(&v, &i32), TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(tb_buf_unpack_u64(&v, &u64), TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(tb_buf_unpack_f64(&v, &d), TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(v.pos, 0);
    TB_ASSERT_OK(tb_buf_unpack_u8(&v, &u8));
    TB_ASSERT_EQ_INT(u8, 1);
    TB_ASSERT_EQ_INT(tb_buf_unpack_bytes(&v, &p, &u32), TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(v.pos, 1);
    /* Length prefix 10 but only 2 bytes follow: fails, pos restored. */
    tb_buf_view(&v, data + 3, 6);
    TB_ASSERT_EQ_INT(tb_buf_unpack_bytes(&v, &p, &u32), TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(v.pos, 0);
    TB_ASSERT_EQ_INT(tb_buf_remaining(&v), 6);
    /* Views are read-only. */
    TB_ASSERT_EQ_INT(tb_buf_append(&v, "z", 1), TB_ERR_STATE);
    TB_ASSERT_EQ_INT(tb_buf_pack_u8(&v, 1), TB_ERR_STATE);
    TB_ASSERT_EQ_INT(tb_buf_reserve(&v, 1), TB_ERR_STATE);
    TB_ASSERT_EQ_INT(v.len, 6);
    tb_buf_free(&v); /* must not free memory it does not own */
    TB_ASSERT(v.data == NULL);
}

static void test_buf_growth(void)
{
    tb_buf b = TB_BUF_INIT;
    for (int i = 0; i < 100000; i++) {
        unsigned char c = (unsigned char)(i * 7);
        TB_ASSERT_OK(tb_buf_append(&b, &c, 1));
    }
    int ok = b.len == 100000 && b.cap >= b.len;
    for (int i = 0; ok && i < 100000; i++)
        ok = b.data[i] == (unsigned char)(i * 7);
    size_t cap = b.cap;
    tb_buf_clear(&b);
    int cleared = b.len == 0 && b.pos == 0 && b.cap == cap;
    int rc = tb_buf_append(&b, "x", 1) == TB_OK ? tb_buf_reserve(&b, SIZE_MAX) : -999;
    tb_buf_free(&b);
    TB_ASSERT(ok);
    TB_ASSERT(cleared);
    TB_ASSERT_EQ_INT(rc, TB_ERR_RANGE);
}

/* The inline fast paths (core/buf_inline.h, the runtime's task and result
 * records in mw/proto.h) write the bytes the tb_buf_* functions write, read
 * what they read, and fail where they fail, with room and without (the
 * fallback), for every length of a record's bytes around the small-copy
 * cases. */
static void test_buf_inline(void)
{
    unsigned char src[40];
    for (int i = 0; i < 40; i++)
        src[i] = (unsigned char)(0xa0 + i);
    for (uint32_t n = 0; n <= 40; n++) {
        for (int room = 0; room < 2; room++) {
            tb_buf a = TB_BUF_INIT, b = TB_BUF_INIT;
            if (room)
                TB_ASSERT_OK(tb_buf_reserve(&a, 256));
            /* inline */
            TB_ASSERT_OK(tb__buf_put_u32(&a, 7));
            TB_ASSERT_OK(tb__buf_put_u64(&a, UINT64_C(0x0102030405060708)));
            TB_ASSERT_OK(tb__buf_put_i32(&a, -5));
            TB_ASSERT_OK(tb__buf_put_bytes(&a, src, n));
            TB_ASSERT_OK(tb__buf_put(&a, src, n));
            TB_ASSERT_OK(tb__mw_pack_result(&a, 99, INT32_MIN, src, n));
            tb__buf_patch_u32(&a, 0, 3);
            /* the functions */
            TB_ASSERT_OK(tb_buf_pack_u32(&b, 3));
            TB_ASSERT_OK(tb_buf_pack_u64(&b, UINT64_C(0x0102030405060708)));
            TB_ASSERT_OK(tb_buf_pack_i32(&b, -5));
            TB_ASSERT_OK(tb_buf_pack_bytes(&b, src, n));
            TB_ASSERT_OK(tb_buf_append(&b, src, n));
            TB_ASSERT_OK(tb_buf_pack_u64(&b, 99));
            TB_ASSERT_OK(tb_buf_pack_i32(&b, INT32_MIN));
            TB_ASSERT_OK(tb_buf_pack_bytes(&b, src, n));
            TB_ASSERT_EQ_INT(a.len, b.len);
            TB_ASSERT(memcmp(a.data, b.data, a.len) == 0);
            /* and back, inline */
            uint32_t u32, len;
            uint64_t u64;
            int32_t i32;
            const void *p;
            TB_ASSERT_OK(tb__buf_get_u32(&b, &u32));
            TB_ASSERT_EQ_INT(u32, 3);
            TB_ASSERT_OK(tb__buf_get_u64(&b, &u64));
            TB_ASSERT(u64 == UINT64_C(0x0102030405060708));
            TB_ASSERT_OK(tb__buf_get_i32(&b, &i32));
            TB_ASSERT_EQ_INT(i32, -5);
            TB_ASSERT_OK(tb__buf_get_bytes(&b, &p, &len));
            TB_ASSERT(len == n && memcmp(p, src, n) == 0);
            b.pos += n;
            TB_ASSERT_OK(tb__mw_unpack_result(&b, &u64, &i32, &p, &len));
            TB_ASSERT(u64 == 99 && i32 == INT32_MIN && len == n && memcmp(p, src, n) == 0);
            TB_ASSERT_EQ_INT(tb_buf_remaining(&b), 0);
            TB_ASSERT_EQ_INT(tb__buf_get_u32(&b, &u32), TB_ERR_PARSE);
            tb_buf_free(&a);
            tb_buf_free(&b);
        }
        /* A task record and a result record cut short anywhere: TB_ERR_PARSE,
         * nothing read past the end. */
        tb_buf t = TB_BUF_INIT, r = TB_BUF_INIT;
        TB_ASSERT_OK(tb_buf_pack_u64(&t, 12));
        TB_ASSERT_OK(tb_buf_pack_bytes(&t, src, n));
        TB_ASSERT_OK(tb__mw_pack_result(&r, 12, 0, src, n));
        for (size_t cut = 0; cut <= t.len; cut++) {
            tb_buf v;
            uint64_t id;
            const void *p;
            uint32_t len;
            tb__buf_view(&v, t.data, cut);
            int rc = tb__mw_unpack_task(&v, &id, &p, &len);
            TB_ASSERT_EQ_INT(rc, cut == t.len ? TB_OK : TB_ERR_PARSE);
            if (rc == TB_OK)
                TB_ASSERT(id == 12 && len == n && memcmp(p, src, n) == 0);
        }
        for (size_t cut = 0; cut <= r.len; cut++) {
            tb_buf v;
            uint64_t id;
            int32_t st;
            const void *p;
            uint32_t len;
            tb__buf_view(&v, r.data, cut);
            int rc = tb__mw_unpack_result(&v, &id, &st, &p, &len);
            TB_ASSERT_EQ_INT(rc, cut == r.len ? TB_OK : TB_ERR_PARSE);
            if (rc != TB_OK)
                TB_ASSERT(v.pos == 0 || v.pos == 8 || v.pos == 12);
        }
        tb_buf_free(&t);
        tb_buf_free(&r);
    }
    /* A view is never written by the fast paths: they fall back, and the
     * functions refuse. */
    tb_buf v;
    tb__buf_view(&v, src, 4);
    TB_ASSERT_EQ_INT(tb__buf_put_u32(&v, 1), TB_ERR_STATE);
    TB_ASSERT_EQ_INT(tb__mw_pack_result(&v, 1, 0, src, 1), TB_ERR_STATE);
    TB_ASSERT_EQ_INT(v.len, 4);
    /* A length prefix larger than what follows, even near 2^32. */
    unsigned char big[16] = {0};
    big[8] = big[9] = big[10] = big[11] = 0xff;
    tb__buf_view(&v, big, 16);
    uint64_t id;
    const void *p;
    uint32_t len;
    TB_ASSERT_EQ_INT(tb__mw_unpack_task(&v, &id, &p, &len), TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(v.pos, 0);
}

static void test_buf_printf(void)
{
    tb_buf b = TB_BUF_INIT;
    TB_ASSERT_OK(tb_buf_printf(&b, "%s=%d", "a", 1));
    TB_ASSERT_OK(tb_buf_printf(&b, ";%s", ""));
    TB_ASSERT_OK(tb_buf_printf(&b, "%05.2f", 2.25));
    int ok = b.len == 9 && strcmp((const char *)b.data, "a=1;02.25") == 0;
    tb_buf_free(&b);
    TB_ASSERT(ok);
}

/* ---------------------------------------------------------------- */
/* Trace                                                             */
/* ---------------------------------------------------------------- */

static int has(const tb_buf *b, const char *s) { return strstr((const char *)b->data, s) != NULL; }

static int fill_trace(tb_trace *tr)
{
    const double o = 100.0;
    int rc = tb_trace_set_process_name(tr, "rank \"7\" \\ new\nline\x01\ttab");
    if (rc == TB_OK)
        rc = tb_trace_complete(tr, 0, "mw", "compute", o + 0.001, o + 0.0015);
    if (rc == TB_OK)
        rc = tb_trace_complete_arg(tr, 1, "mw", "batch", o + 0.002, o + 0.003, "tasks", 42);
    if (rc == TB_OK)
        rc = tb_trace_counter(tr, "queue", "depth", o + 0.004, 3);
    if (rc == TB_OK)
        rc = tb_trace_instant(tr, 0, "steal", o + 0.005);
    if (rc == TB_OK)
        rc = tb_trace_flow_begin(tr, 0, "task", 99, o + 0.006);
    if (rc == TB_OK)
        rc = tb_trace_flow_end(tr, 2, "task", 99, o + 0.007);
    if (rc == TB_OK)
        rc = tb_trace_complete(tr, 0, NULL, "odd \"name\"", o + 0.009, o + 0.008);
    return rc;
}

static void test_trace_serialize(void)
{
    tb_trace *tr = NULL;
    tb_buf b = TB_BUF_INIT;
    TB_ASSERT_OK(tb_trace_create(&tr, 7, 100.0));
    int rc = fill_trace(tr);
    size_t count = tb_trace_count(tr);
    int bad_counter = tb_trace_counter(tr, "q", "s", 100, NAN);
    int bad_name = tb_trace_instant(tr, 0, NULL, 100);
    if (rc == TB_OK)
        rc = tb_buf_append(&b, "[", 1);
    if (rc == TB_OK)
        rc = tb_trace_serialize(tr, &b);
    if (rc == TB_OK)
        rc = tb_buf_printf(&b, "]");
    tb_trace_destroy(&tr);
    TB_ASSERT(tr == NULL);
    if (rc != TB_OK)
        tb_buf_free(&b);
    TB_ASSERT_OK(rc);
    TB_ASSERT_EQ_INT(count, 7);
    TB_ASSERT_EQ_INT(bad_counter, TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(bad_name, TB_ERR_INVALID);
    int valid = json_valid((const char *)b.data);
    if (!valid)
        printf("    %s\n", (const char *)b.data);
    const char *want[] = {
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":7,\"args\":{\"name\":"
        "\"rank \\\"7\\\" \\\\ new\\nline\\u0001\\ttab\"}}",
        "{\"name\":\"compute\",\"cat\":\"mw\",\"ph\":\"X\",\"ts\":1000.000,\"pid\":7,"
        "\"tid\":0,\"dur\":500.000}",
        "\"ph\":\"X\",\"ts\":2000.000,\"pid\":7,\"tid\":1,\"dur\":1000.000,"
        "\"args\":{\"tasks\":42}}",
        "{\"name\":\"queue\",\"ph\":\"C\",\"ts\":4000.000,\"pid\":7,\"args\":{\"depth\":3}}",
        "{\"name\":\"steal\",\"ph\":\"i\",\"ts\":5000.000,\"pid\":7,\"tid\":0,",
        "{\"name\":\"task\",\"cat\":\"msg\",\"ph\":\"s\",\"ts\":6000.000,\"pid\":7,\"tid\":0,"
        "\"id\":99}",
        "{\"name\":\"task\",\"cat\":\"msg\",\"ph\":\"f\",\"ts\":7000.000,\"pid\":7,\"tid\":2,"
        "\"id\":99,\"bp\":\"e\"}",
        "{\"name\":\"odd \\\"name\\\"\",\"ph\":\"X\",\"ts\":9000.000,\"pid\":7,\"tid\":0,"
        "\"dur\":0.000}",
        "}},\n{", /* separator */
        NULL};
    int missing = -1;
    for (int i = 0; want[i] != NULL && missing < 0; i++)
        if (!has(&b, want[i]))
            missing = i;
    if (missing >= 0)
        printf("    missing %s\n    in %s\n", want[missing], (const char *)b.data);
    tb_buf_free(&b);
    TB_ASSERT(valid);
    TB_ASSERT_EQ_INT(missing, -1);
}

static void test_trace_empty(void)
{
    tb_trace *tr = NULL;
    tb_buf b = TB_BUF_INIT;
    TB_ASSERT_OK(tb_trace_create(&tr, 0, 0));
    TB_ASSERT_EQ_INT(tb_trace_count(tr), 0);
    int rc = tb_trace_serialize(tr, &b);
    tb_trace_destroy(&tr);
    tb_trace_destroy(&tr); /* idempotent */
    TB_ASSERT_OK(rc);
    TB_ASSERT_EQ_INT(b.len, 0);
    tb_buf_free(&b);
}

static void test_trace_write(void)
{
    char path[600], tmp[640], bad[640];
    tb_trace *tr = NULL;
    capture c;
    TB_ASSERT(make_scratch());
    scratch_path(path, sizeof path, "t.json");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    scratch_path(bad, sizeof bad, "missing/dir/t.json");
    TB_ASSERT_OK(tb_trace_create(&tr, 3, tb_wtime()));
    int rc = fill_trace(tr);
    if (rc == TB_OK)
        rc = tb_trace_write(tr, path);
    capture_start(&c, TB_LOG_WARN);
    int rc_bad = tb_trace_write(tr, bad);
    capture_stop();
    tb_trace_destroy(&tr);
    char *text = read_all(path);
    int tmp_left = file_exists(tmp);
    char bad_tmp[700];
    snprintf(bad_tmp, sizeof bad_tmp, "%s.tmp", bad);
    int bad_left = file_exists(bad) || file_exists(bad_tmp);
    const char *const names[] = {"t.json", "t.json.tmp", NULL};
    rm_scratch(names);
    TB_ASSERT_OK(rc);
    TB_ASSERT(text != NULL);
    int ok = json_valid(text) && strncmp(text, "{\"traceEvents\":[", 16) == 0 &&
             strstr(text, "],\"displayTimeUnit\":\"ms\"}\n") != NULL &&
             strstr(text, "\"pid\":3") != NULL;
    free(text);
    TB_ASSERT(ok);
    TB_ASSERT(!tmp_left);
    TB_ASSERT_EQ_INT(rc_bad, TB_ERR_IO);
    TB_ASSERT(!bad_left);
    TB_ASSERT_EQ_INT(c.calls, 1);
    TB_ASSERT_EQ_INT(c.level[0], TB_LOG_ERROR);
    TB_ASSERT(strstr(c.line[0], "missing/dir/t.json: ") != NULL && strstr(c.line[0], "cannot write ") != NULL);
    TB_ASSERT(strstr(c.line[0], strerror(ENOENT)) != NULL);
}

/* Pieces that reached a process as bytes make the same file as the traces. */
static void test_trace_write_pieces(void)
{
    char a[600], b[600];
    tb_trace *tr[3] = {NULL, NULL, NULL};
    tb_buf pieces[3] = {TB_BUF_INIT, TB_BUF_INIT, TB_BUF_INIT};
    TB_ASSERT(make_scratch());
    scratch_path(a, sizeof a, "set.json");
    scratch_path(b, sizeof b, "pieces.json");
    TB_ASSERT_OK(tb_trace_create(&tr[0], 0, 0));
    TB_ASSERT_OK(tb_trace_create(&tr[1], 1, 0)); /* empty: skipped by both */
    TB_ASSERT_OK(tb_trace_create(&tr[2], 2, 0));
    TB_ASSERT_OK(fill_trace(tr[0]));
    TB_ASSERT_OK(fill_trace(tr[2]));
    for (int i = 0; i < 3; i++)
        TB_ASSERT_OK(tb_trace_serialize(tr[i], &pieces[i]));
    int rc1 = tb_trace_write_set((const tb_trace *const *)tr, 3, a);
    int rc2 = tb_trace_write_pieces(pieces, 3, b);
    char *ta = read_all(a), *tb = read_all(b);
    const char *const names[] = {"set.json", "pieces.json", NULL};
    rm_scratch(names);
    for (int i = 0; i < 3; i++) {
        tb_trace_destroy(&tr[i]);
        tb_buf_free(&pieces[i]);
    }
    TB_ASSERT_OK(rc1);
    TB_ASSERT_OK(rc2);
    int same = ta && tb && strcmp(ta, tb) == 0 && json_valid(tb) && strstr(tb, "\"pid\":2");
    free(ta);
    free(tb);
    TB_ASSERT(same);
    TB_ASSERT_EQ_INT(tb_trace_write_pieces(NULL, 1, b), TB_ERR_INVALID);
}

/* ---------------------------------------------------------------- */
/* Progress                                                          */
/* ---------------------------------------------------------------- */

static void test_progress_format(void)
{
    char s[128];
    tb_progress_format(s, sizeof s, "tasks", 1234, 4096, 1234 / 512.3);
    TB_ASSERT_STR_EQ(s, "progress: 1234/4096 tasks (30.1%), 512.3 tasks/s, ETA 5.6 s");
    tb_progress_format(s, sizeof s, "tasks", 0, 0, 3.0);
    TB_ASSERT_STR_EQ(s, "progress: 0/0 tasks (100.0%)");
    tb_progress_format(s, sizeof s, "tasks", 0, 10, 5.0);
    TB_ASSERT_STR_EQ(s, "progress: 0/10 tasks (0.0%), 0.0 tasks/s, ETA -");
    tb_progress_format(s, sizeof s, "tasks", 5, 10, 0.0);
    TB_ASSERT_STR_EQ(s, "progress: 5/10 tasks (50.0%), 0.0 tasks/s, ETA -");
    tb_progress_format(s, sizeof s, "chunks", 10, 10, 2.0);
    TB_ASSERT_STR_EQ(s, "progress: 10/10 chunks (100.0%), 5.0 chunks/s, ETA 0.0 s");
    tb_progress_format(s, sizeof s, "tasks", 4095, 4096, 1.0);
    TB_ASSERT_STR_EQ(s, "progress: 4095/4096 tasks (99.9%), 4095.0 tasks/s, ETA 0.0 s");
    char tiny[10];
    int n = tb_progress_format(tiny, sizeof tiny, "tasks", 0, 0, 1.0);
    TB_ASSERT_EQ_INT(n, (int)strlen("progress: 0/0 tasks (100.0%)"));
    TB_ASSERT_STR_EQ(tiny, "progress:");
}

static int count_lines(FILE *f)
{
    int n = 0, ch;
    rewind(f);
    while ((ch = fgetc(f)) != EOF)
        n += ch == '\n';
    return n;
}

/* tb_progress_note: the caller's text on the caller's clock, rate-limited
 * by the same interval (here TENBIN_PROGRESS_INTERVAL), a final line that
 * ends them; tb_progress_wanted honours TENBIN_QUIET. */
static void test_progress_note(void)
{
    tb_progress *p = NULL;
    FILE *f = tmpfile();
    TB_ASSERT(f != NULL);
    unset_all();
    setenv("TENBIN_PROGRESS_INTERVAL", "2", 1);
    TB_ASSERT_OK(tb_progress_create(&p, f, "nodes", 0, TB_PROGRESS_INTERVAL_ENV));
    unset_all();
    TB_ASSERT_NEAR(tb_progress_note_due(p), 2.0, 0);
    TB_ASSERT_EQ_INT(tb_progress_note(p, 1.0, 0, "x: %d", 1), 0); /* too early */
    TB_ASSERT_EQ_INT(tb_progress_note(p, 2.0, 0, "x: %d", 2), 1);
    TB_ASSERT_NEAR(tb_progress_note_due(p), 4.0, 0);
    TB_ASSERT_EQ_INT(tb_progress_note(p, 3.0, 0, "x: %d", 3), 0);
    TB_ASSERT_EQ_INT(tb_progress_note(p, 3.5, 1, "x: %d", 4), 1); /* final: always */
    TB_ASSERT_EQ_INT(tb_progress_note(p, 9.0, 0, "x: %d", 5), 0); /* ended */
    TB_ASSERT(isinf(tb_progress_note_due(p)));
    char text[64] = "";
    rewind(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    TB_ASSERT_STR_EQ(text, "x: 2\nx: 4\n");
    tb_progress_destroy(&p);
    fclose(f);
    TB_ASSERT(isinf(tb_progress_note_due(NULL)));
    TB_ASSERT_EQ_INT(tb_progress_note(NULL, 0, 1, "x"), 0);
    TB_ASSERT_EQ_INT(tb_progress_wanted(1, 1), 1); /* --progress wins */
    TB_ASSERT_EQ_INT(tb_progress_wanted(0, 1), 0);
    setenv("TENBIN_QUIET", "1", 1);
    TB_ASSERT_EQ_INT(tb_progress_wanted(0, 0), 0);
    TB_ASSERT_EQ_INT(tb_progress_wanted(1, 0), 1);
    unset_all();
}

static void test_progress_throttle(void)
{
    tb_progress *p = NULL;
    FILE *f = tmpfile();
    TB_ASSERT(f != NULL);
    TB_ASSERT_OK(tb_progress_create(&p, f, "tasks", 10, 1e9));
    tb_progress_update(p, 1);
    tb_progress_update(p, 2);
    int before = count_lines(f);
    fseek(f, 0, SEEK_END);
    tb_progress_finish(p);
    tb_progress_finish(p);
    tb_progress_update(p, 3);
    int after = count_lines(f);
    char line[128] = "";
    rewind(f);
    if (fgets(line, sizeof line, f) == NULL)
        line[0] = '\0';
    tb_progress_destroy(&p);
    TB_ASSERT(p == NULL);
    TB_ASSERT_OK(tb_progress_create(&p, f, "tasks", 3, 0));
    fseek(f, 0, SEEK_END);
    tb_progress_update(p, 1);
    tb_progress_update(p, 2);
    tb_progress_update(p, 3);
    int unthrottled = count_lines(f);
    tb_progress_destroy(&p);
    fclose(f);
    TB_ASSERT_EQ_INT(before, 0);
    TB_ASSERT_EQ_INT(after, 1);
    TB_ASSERT(strncmp(line, "progress: 2/10 tasks (20.0%), ", 30) == 0);
    TB_ASSERT_EQ_INT(unthrottled, 4);
    /* No stream: nothing printed, nothing crashes. */
    TB_ASSERT_OK(tb_progress_create(&p, NULL, NULL, 5, 0));
    tb_progress_update(p, 5);
    tb_progress_finish(p);
    tb_progress_destroy(&p);
}

/* ---------------------------------------------------------------- */
/* Statistics                                                        */
/* ---------------------------------------------------------------- */

static void test_stats(void)
{
    double x[] = {4, 1, 3, 2};
    tb_stats s;
    TB_ASSERT_OK(tb_stats_compute(x, 4, &s));
    TB_ASSERT_EQ_INT(s.n, 4);
    TB_ASSERT_NEAR(s.mean, 2.5, 1e-15);
    TB_ASSERT_NEAR(s.median, 2.5, 1e-15);
    TB_ASSERT_NEAR(s.min, 1, 0);
    TB_ASSERT_NEAR(s.max, 4, 0);
    TB_ASSERT_NEAR(s.sum, 10, 0);
    TB_ASSERT_NEAR(s.stddev, sqrt(1.25), 1e-15);
    TB_ASSERT(x[0] == 4 && x[1] == 1 && x[2] == 3 && x[3] == 2); /* not modified */
    double odd[] = {5, -1, 3};
    TB_ASSERT_OK(tb_stats_compute(odd, 3, &s));
    TB_ASSERT_NEAR(s.median, 3, 0);
    TB_ASSERT_NEAR(s.min, -1, 0);
    memset(&s, 0xff, sizeof s);
    TB_ASSERT_OK(tb_stats_compute(NULL, 0, &s));
    TB_ASSERT(s.n == 0 && s.mean == 0 && s.median == 0 && s.min == 0 && s.max == 0 &&
              s.stddev == 0 && s.sum == 0);
    double one = 7;
    TB_ASSERT_OK(tb_stats_compute(&one, 1, &s));
    TB_ASSERT(s.n == 1 && s.mean == 7 && s.median == 7 && s.min == 7 && s.max == 7 &&
              s.stddev == 0 && s.sum == 7);
    TB_ASSERT_EQ_INT(tb_stats_compute(NULL, 2, &s), TB_ERR_INVALID);
}

/* Least squares, worked by hand: slope 9.5 / 5, residual variance 0.7 / 2. */
static void test_linfit(void)
{
    double x[] = {0, 1, 2, 3}, y[] = {1, 3, 4, 7};
    tb_linfit f;
    TB_ASSERT_OK(tb_linfit_compute(x, y, 4, &f));
    TB_ASSERT_NEAR(f.slope, 1.9, 1e-14);
    TB_ASSERT_NEAR(f.intercept, 0.9, 1e-14);
    TB_ASSERT_NEAR(f.se_slope, sqrt(0.07), 1e-14);
    TB_ASSERT_NEAR(f.se_intercept, sqrt(0.245), 1e-14);
    TB_ASSERT_OK(tb_linfit_compute(x, y, 2, &f)); /* two points: exact, no error */
    TB_ASSERT(f.slope == 2 && f.intercept == 1 && f.se_slope == 0 && f.se_intercept == 0);
    double same[] = {2, 2, 2};
    TB_ASSERT_EQ_INT(tb_linfit_compute(same, y, 3, &f), TB_ERR_RANGE);
    TB_ASSERT_EQ_INT(tb_linfit_compute(x, y, 1, &f), TB_ERR_RANGE);
    TB_ASSERT_EQ_INT(tb_linfit_compute(NULL, y, 3, &f), TB_ERR_INVALID);
}

/* ---------------------------------------------------------------- */
/* Parsing and files                                                 */
/* ---------------------------------------------------------------- */

static void test_parse_long(void)
{
    long v = 0;
    TB_ASSERT_OK(tb_parse_long("12", 0, 100, &v));
    TB_ASSERT_EQ_INT(v, 12);
    TB_ASSERT_OK(tb_parse_long("-5", -10, 10, &v));
    TB_ASSERT_EQ_INT(v, -5);
    TB_ASSERT_OK(tb_parse_long("+7", 0, 10, &v));
    TB_ASSERT_EQ_INT(v, 7);
    TB_ASSERT_OK(tb_parse_long("010", 0, 100, &v)); /* decimal, not octal */
    TB_ASSERT_EQ_INT(v, 10);
    v = 99;
    const char *bad[] = {"", " 12", "12 ", "12x", "x", "-", "0x10", "1.5", "\t3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        TB_ASSERT_EQ_INT(tb_parse_long(bad[i], LONG_MIN, LONG_MAX, &v), TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(tb_parse_long(NULL, 0, 1, &v), TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(v, 99);
    TB_ASSERT_EQ_INT(tb_parse_long("101", 0, 100, &v), TB_ERR_RANGE);
    TB_ASSERT_EQ_INT(tb_parse_long("-1", 0, 100, &v), TB_ERR_RANGE);
    TB_ASSERT_EQ_INT(tb_parse_long("99999999999999999999999", LONG_MIN, LONG_MAX, &v),
                     TB_ERR_RANGE);
    TB_ASSERT_EQ_INT(v, 99);
}

static void test_parse_double(void)
{
    double d = 0;
    TB_ASSERT_OK(tb_parse_double("1.5", &d));
    TB_ASSERT_NEAR(d, 1.5, 0);
    TB_ASSERT_OK(tb_parse_double("-2e3", &d));
    TB_ASSERT_NEAR(d, -2000, 0);
    TB_ASSERT_OK(tb_parse_double("1e-400", &d)); /* underflow is accepted */
    TB_ASSERT(fabs(d) < 1e-300);
    d = 42;
    const char *bad[] = {"", " 1", "1 ", "1.0x", "nan", "inf", "-Infinity", "e5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        TB_ASSERT_EQ_INT(tb_parse_double(bad[i], &d), TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(tb_parse_double(NULL, &d), TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(tb_parse_double("1e999", &d), TB_ERR_RANGE);
    TB_ASSERT_EQ_INT(tb_parse_double("-1e999", &d), TB_ERR_RANGE);
    TB_ASSERT_NEAR(d, 42, 0);
}

static void test_write_atomic(void)
{
    char path[600], tmp[640], bad[640];
    capture c;
    TB_ASSERT(make_scratch());
    scratch_path(path, sizeof path, "f.txt");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    scratch_path(bad, sizeof bad, "nope/f.txt");
    int rc1 = tb_write_file_atomic(path, "hello", 5);
    char *t1 = read_all(path);
    int rc2 = tb_write_file_atomic(path, "bye", 3);
    char *t2 = read_all(path);
    int rc3 = tb_write_file_atomic(path, NULL, 0);
    char *t3 = read_all(path);
    int tmp_left = file_exists(tmp);
    capture_start(&c, TB_LOG_WARN);
    int rc_bad = tb_write_file_atomic(bad, "x", 1);
    capture_stop();
    int bad_left = file_exists(bad);
    const char *const names[] = {"f.txt", "f.txt.tmp", NULL};
    rm_scratch(names);
    int ok = t1 && t2 && t3 && strcmp(t1, "hello") == 0 && strcmp(t2, "bye") == 0 &&
             t3[0] == '\0';
    free(t1);
    free(t2);
    free(t3);
    TB_ASSERT_OK(rc1);
    TB_ASSERT_OK(rc2);
    TB_ASSERT_OK(rc3);
    TB_ASSERT(ok);
    TB_ASSERT(!tmp_left);
    TB_ASSERT_EQ_INT(rc_bad, TB_ERR_IO);
    TB_ASSERT(!bad_left);
    TB_ASSERT_EQ_INT(c.calls, 1);
    TB_ASSERT(strstr(c.line[0], "nope/f.txt: ") != NULL && strstr(c.line[0], "cannot write ") != NULL);
    TB_ASSERT_EQ_INT(tb_write_file_atomic(NULL, "x", 1), TB_ERR_INVALID);
}

/* tb_grow: first capacity, doubling, no change while there is room, and
 * the items survive the moves. */
static void test_grow(void)
{
    uint64_t *a = NULL;
    size_t cap = 0, len = 0;
    for (uint64_t i = 0; i < 1000; i++) {
        TB_ASSERT_OK(tb_grow(&a, &cap, len, sizeof *a, 4));
        TB_ASSERT(cap > len);
        a[len++] = i * i;
    }
    TB_ASSERT_EQ_U64(cap, 1024); /* 4, 8, ..., 1024 */
    size_t before = cap;
    TB_ASSERT_OK(tb_grow(&a, &cap, 10, sizeof *a, 4));
    TB_ASSERT_EQ_U64(cap, before);
    int ok = 1;
    for (uint64_t i = 0; i < 1000; i++)
        ok &= a[i] == i * i;
    free(a);
    TB_ASSERT(ok);
    TB_ASSERT_EQ_INT(tb_grow(NULL, &cap, 0, 8, 4), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_grow(&a, &cap, 0, 0, 4), TB_ERR_INVALID);
}

/* FNV-1a's published test vectors (64-bit): "" and "a" and "foobar", and
 * that hashing in pieces is hashing at once. */
static void test_fnv1a(void)
{
    TB_ASSERT(tb_fnv1a(TB_FNV1A_INIT, "", 0) == 0xcbf29ce484222325ULL);
    TB_ASSERT(tb_fnv1a(TB_FNV1A_INIT, "a", 1) == 0xaf63dc4c8601ec8cULL);
    TB_ASSERT(tb_fnv1a(TB_FNV1A_INIT, "foobar", 6) == 0x85944171f73967e8ULL);
    TB_ASSERT(tb_fnv1a(tb_fnv1a(TB_FNV1A_INIT, "foo", 3), "bar", 3) ==
              tb_fnv1a(TB_FNV1A_INIT, "foobar", 6));
}


/* Several threads log while the main thread replaces the sink, the rank and
 * the level (the web view's threads log beside the run's): every line arrives
 * whole and exactly once, and each thread's lines keep their order.  The
 * ThreadSanitizer build runs this (label "threads"). */
enum { LT_THREADS = 4, LT_LINES = 2000 };

typedef struct lt_sink {
    int next[LT_THREADS]; /* next line number expected from each thread */
    int lines;
    int bad;
} lt_sink;

static void lt_sink_fn(void *ctx, tb_log_level level, int rank, const char *line)
{
    lt_sink *k = ctx;
    (void)level;
    (void)rank;
    const char *p = strstr(line, "lt thread ");
    int t = -1, i = -1;
    if (!p || sscanf(p, "lt thread %d line %d", &t, &i) != 2 || t < 0 || t >= LT_THREADS ||
        i < k->next[t]) {
        k->bad++;
        return;
    }
    k->next[t] = i + 1;
    k->lines++;
}

static void *lt_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < LT_LINES; i++)
        tb_log(TB_LOG_ERROR, "lt thread %d line %d", t, i);
    return NULL;
}

static void test_log_threads(void)
{
    lt_sink a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    tb_log_set_level(TB_LOG_WARN);
    tb_log_set_sink(lt_sink_fn, &a);
    pthread_t th[LT_THREADS];
    int started = 0;
    for (int t = 0; t < LT_THREADS; t++)
        if (pthread_create(&th[t], NULL, lt_thread, (void *)(intptr_t)t) == 0)
            started++;
    for (int k = 0; k < 200; k++) { /* the main thread reconfigures meanwhile */
        tb_log_set_sink(lt_sink_fn, k % 2 ? &a : &b);
        tb_log_set_rank(k % 3);
        tb_log_set_level(k % 2 ? TB_LOG_INFO : TB_LOG_WARN);
    }
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    tb_log_set_sink(NULL, NULL);
    tb_log_set_level(TB_LOG_WARN);
    tb_log_set_rank(-1);
    TB_ASSERT_EQ_INT(started, LT_THREADS);
    TB_ASSERT_EQ_INT(a.bad + b.bad, 0);
    TB_ASSERT_EQ_INT(a.lines + b.lines, LT_THREADS * LT_LINES);
}

/* The summaries' writer (core/json.h): numbers exact and as short as that
 * allows, integral doubles with all their digits, counts beyond 2^53 exact,
 * NaN and infinities null, strings escaped, the caller's members first with
 * their numbers exact too, one line with ", " and ": " outside strings. */
static void test_json_writer(void)
{
    cJSON *o = cJSON_CreateObject();
    int bad = 0;
    bad |= tb__json_num(o, "tenth", 0.1);
    bad |= tb__json_num(o, "third", 1.0 / 3);
    bad |= tb__json_num(o, "near", 0.1 + 0.2); /* cJSON's own printer would say 0.3 */
    bad |= tb__json_num(o, "big", 1e16);
    bad |= tb__json_num(o, "huge", 1e300);
    bad |= tb__json_num(o, "neg", -2.5);
    bad |= tb__json_num(o, "nan", NAN);
    bad |= tb__json_num(o, "inf", -INFINITY);
    bad |= tb__json_u64(o, "max", UINT64_MAX);
    bad |= tb__json_int(o, "int", -7);
    bad |= tb__json_bool(o, "yes", 1);
    bad |= tb__json_str(o, "s", "a, \"b\": c\\");
    bad |= tb__json_str(o, "none", NULL);
    double v[3] = {1, NAN, 0.5};
    bad |= tb__json_num_array(o, "v", v, 3);
    tb_buf b = TB_BUF_INIT;
    TB_ASSERT_OK(tb__json_emit(o, bad, "{\"x\": 0.30000000000000004, \"y\": [{\"z\": 1e-7}]}",
                               &b));
    TB_ASSERT_OK(tb_buf_append(&b, "", 1));
    TB_ASSERT_STR_EQ((const char *)b.data,
                     "{\"x\": 0.30000000000000004, \"y\": [{\"z\": 1e-07}], "
                     "\"tenth\": 0.1, \"third\": 0.3333333333333333, "
                     "\"near\": 0.30000000000000004, \"big\": 10000000000000000, "
                     "\"huge\": 1e+300, \"neg\": -2.5, \"nan\": null, "
                     "\"inf\": null, \"max\": 18446744073709551615, \"int\": -7, \"yes\": true, "
                     "\"s\": \"a, \\\"b\\\": c\\\\\", \"none\": null, \"v\": [1, null, 0.5]}");
    /* refused: not an object, not JSON, a key twice; out unchanged */
    size_t len = b.len;
    const char *extras[] = {"[1]", "{\"a\": ", "3", "{\"x\": 1}"};
    int want[] = {TB_ERR_PARSE, TB_ERR_PARSE, TB_ERR_PARSE, TB_ERR_INVALID};
    for (int i = 0; i < 4; i++) {
        o = cJSON_CreateObject();
        TB_ASSERT_EQ_INT(tb__json_num(o, "x", 1), 0);
        TB_ASSERT_EQ_INT(tb__json_emit(o, 0, extras[i], &b), want[i]);
    }
    TB_ASSERT_EQ_INT(tb__json_emit(cJSON_CreateObject(), 1, NULL, &b), TB_ERR_NOMEM);
    TB_ASSERT(b.len == len);
    tb_buf_free(&b);

    /* Values written as text (the per-rank tables) read as the adders write
     * them, integral ones (written without printf) included; an object left
     * open takes more members. */
    const double vals[] = {0,    -0.0,  1,     -1,     12345, 1e16, 99999999999999984.0,
                           1e17, 0.1,   -2.5,  1e-300, 1e300, 4503599627370497.0, NAN,
                           INFINITY};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        o = cJSON_CreateObject();
        TB_ASSERT_EQ_INT(tb__json_num(o, "v", vals[i]), 0);
        tb_buf a = TB_BUF_INIT, t = TB_BUF_INIT;
        TB_ASSERT_OK(tb__json_emit(o, 0, NULL, &a));
        TB_ASSERT_OK(tb__json_put_str(&t, "{\"v\": "));
        TB_ASSERT_OK(tb__json_put_num(&t, vals[i]));
        TB_ASSERT_OK(tb__json_put_str(&t, "}"));
        TB_ASSERT(a.len == t.len && memcmp(a.data, t.data, a.len) == 0);
        if (vals[i] == floor(vals[i]) && fabs(vals[i]) < 1e17) { /* as %.17g writes it */
            char want_text[48];
            snprintf(want_text, sizeof want_text, "{\"v\": %.17g}", vals[i]);
            TB_ASSERT(t.len == strlen(want_text) && memcmp(t.data, want_text, t.len) == 0);
        }
        tb_buf_free(&a);
        tb_buf_free(&t);
    }
    o = cJSON_CreateObject();
    TB_ASSERT_EQ_INT(tb__json_num(o, "a", 0.5), 0);
    static const char *const later[] = {"n", NULL};
    TB_ASSERT_OK(tb__json_emit_open(o, 0, "{\"c\": \"x\"}", later, &b));
    TB_ASSERT_OK(tb__json_put_str(&b, ", \"n\": "));
    TB_ASSERT_OK(tb__json_put_u64(&b, UINT64_MAX));
    TB_ASSERT_OK(tb__json_put_str(&b, "}"));
    TB_ASSERT_OK(tb_buf_append(&b, "", 1));
    TB_ASSERT_STR_EQ((const char *)b.data, "{\"c\": \"x\", \"a\": 0.5, \"n\": 18446744073709551615}");
    b.len = 0;
    TB_ASSERT_EQ_INT(tb__json_emit_open(cJSON_CreateObject(), 0, NULL, NULL, &b), TB_ERR_INVALID);
    TB_ASSERT(b.len == 0);
    /* extra may not name a member the caller appends later */
    o = cJSON_CreateObject();
    TB_ASSERT_EQ_INT(tb__json_num(o, "a", 1), 0);
    TB_ASSERT_EQ_INT(tb__json_emit_open(o, 0, "{\"n\": 2}", later, &b), TB_ERR_INVALID);
    TB_ASSERT(b.len == 0);
    tb_buf_free(&b);
}

/* Read every record of the checkpoint at path: how many, or -1 on error. */
static long ckpt_count(const char *path, const char *identity, size_t *torn, char *err)
{
    tb__ckpt_reader r;
    if (tb__ckpt_read(&r, path, "test", identity, err, 256) != TB_OK)
        return -1;
    uint64_t key;
    const void *d;
    size_t n;
    long k = 0;
    int rc;
    while ((rc = tb__ckpt_next(&r, &key, &d, &n, err, 256)) == 1) {
        /* record i holds key i and i bytes of value i */
        if (key != (uint64_t)k || n != (size_t)k || (n && ((const unsigned char *)d)[0] != k))
            rc = -100;
        if (rc < 0)
            break;
        k++;
    }
    *torn = r.torn;
    tb__ckpt_reader_free(&r);
    return rc < 0 ? -1 : k;
}

/*
 * A journal cut at every byte (a kill in the middle of a write) reads as
 * its whole records before the cut, never as an error; one byte changed in
 * a record before the last is an error; a continued journal drops its torn
 * tail; a snapshot is all or nothing; kind and identity are checked.
 */
static void test_ckpt_journal_cut_anywhere(void)
{
    char path[600], cut[600], err[256];
    TB_ASSERT(make_scratch());
    scratch_path(path, sizeof path, "j.ck");
    scratch_path(cut, sizeof cut, "cut.ck");
    tb__ckpt_writer w;
    TB_ASSERT_OK(tb__ckpt_journal_open(&w, path, "test", "run A", 0, err, sizeof err));
    unsigned char v[8];
    for (int i = 0; i < 8; i++) {
        memset(v, i, sizeof v);
        TB_ASSERT_OK(tb__ckpt_add(&w, (uint64_t)i, v, (size_t)i));
        if (i % 3 == 2)
            TB_ASSERT_OK(tb__ckpt_sync(&w, err, sizeof err));
    }
    TB_ASSERT_OK(tb__ckpt_close(&w, 1, err, sizeof err));
    size_t torn;
    TB_ASSERT_EQ_INT(ckpt_count(path, "run A", &torn, err), 8);
    TB_ASSERT_EQ_INT(torn, 0);
    char *all = read_all(path);
    struct stat st;
    TB_ASSERT(all && stat(path, &st) == 0);
    size_t len = (size_t)st.st_size, header = 0;
    long prev = 0;
    for (size_t n = 0; n <= len; n++) {
        FILE *f = fopen(cut, "wb");
        TB_ASSERT(f && fwrite(all, 1, n, f) == n);
        fclose(f);
        long k = ckpt_count(cut, "run A", &torn, err);
        if (k < 0) { /* only a cut inside the header */
            TB_ASSERT(header == 0 || n < header);
            continue;
        }
        if (!header)
            header = n;
        TB_ASSERT(k >= prev && k <= 8);
        prev = k;
    }
    TB_ASSERT_EQ_INT(prev, 8);
    /* a changed byte in the first record: damaged, said so */
    all[header + 13] ^= 0x55;
    FILE *f = fopen(cut, "wb");
    TB_ASSERT(f && fwrite(all, 1, len, f) == len);
    fclose(f);
    TB_ASSERT_EQ_INT(ckpt_count(cut, "run A", &torn, err), -1);
    TB_ASSERT(strstr(err, "record 1 (at byte") && strstr(err, "is damaged"));
    /* continued after a cut in its last record: 7 records, then 8 again */
    all[header + 13] ^= 0x55;
    f = fopen(cut, "wb");
    TB_ASSERT(f && fwrite(all, 1, len - 3, f) == len - 3);
    fclose(f);
    TB_ASSERT_OK(tb__ckpt_journal_open(&w, cut, "test", "run A", 1, err, sizeof err));
    memset(v, 7, sizeof v);
    TB_ASSERT_OK(tb__ckpt_add(&w, 7, v, 7));
    TB_ASSERT_OK(tb__ckpt_close(&w, 1, err, sizeof err));
    TB_ASSERT_EQ_INT(ckpt_count(cut, "run A", &torn, err), 8);
    TB_ASSERT_EQ_INT(torn, 0);
    /* kind and identity */
    tb__ckpt_reader r;
    TB_ASSERT_EQ_INT(tb__ckpt_read(&r, path, "test", "run B", err, sizeof err), TB_ERR_INVALID);
    TB_ASSERT(strstr(err, "a checkpoint of another run (run A), not of this one (run B)"));
    TB_ASSERT_EQ_INT(tb__ckpt_read(&r, path, "other", "run A", err, sizeof err), TB_ERR_INVALID);
    TB_ASSERT(strstr(err, "a checkpoint of test, not of other"));
    /* a snapshot not committed leaves the old file as it was */
    TB_ASSERT_OK(tb__ckpt_snapshot_open(&w, path, "test", "run A", err, sizeof err));
    TB_ASSERT_OK(tb__ckpt_add(&w, 0, "", 0));
    TB_ASSERT_OK(tb__ckpt_close(&w, 0, err, sizeof err));
    TB_ASSERT_EQ_INT(ckpt_count(path, "run A", &torn, err), 8);
    TB_ASSERT_OK(tb__ckpt_snapshot_open(&w, path, "test", "run A", err, sizeof err));
    TB_ASSERT_OK(tb__ckpt_add(&w, 0, "", 0));
    TB_ASSERT_OK(tb__ckpt_close(&w, 1, err, sizeof err));
    TB_ASSERT_EQ_INT(ckpt_count(path, "run A", &torn, err), 1);
    free(all);
    const char *const names[] = {"j.ck", "cut.ck", "j.ck.tmp", NULL};
    rm_scratch(names);
}

static const tb_test tests[] = {
    {"log_env_level", test_log_env_level}, /* must stay first */
    {"grow", test_grow},
    {"ckpt_journal_cut_anywhere", test_ckpt_journal_cut_anywhere},
    {"fnv1a", test_fnv1a},
    {"log_parse", test_log_parse},
    {"log_sink", test_log_sink},
    {"log_threads", test_log_threads},
    {"log_long_line", test_log_long_line},
    {"log_default_sink", test_log_default_sink},
    {"err_table", test_err_table},
    {"err_check_macro", test_err_check_macro},
    {"version", test_version},
    {"runnable", test_runnable},
    {"clock", test_clock},
    {"fastclock", test_fastclock},
    {"env_table", test_env_table},
    {"env_defaults", test_env_defaults},
    {"env_values", test_env_values},
    {"env_errors", test_env_errors},
    {"env_word", test_env_word},
    {"env_ranges", test_env_ranges},
    {"env_print", test_env_print},
    {"rng_known", test_rng_known},
    {"rng_streams", test_rng_streams},
    {"rng_below_uniform", test_rng_below_uniform},
    {"rng_real", test_rng_real},
    {"buf_roundtrip", test_buf_roundtrip},
    {"buf_layout", test_buf_layout},
    {"buf_short", test_buf_short},
    {"buf_growth", test_buf_growth},
    {"buf_inline", test_buf_inline},
    {"buf_printf", test_buf_printf},
    {"trace_serialize", test_trace_serialize},
    {"trace_empty", test_trace_empty},
    {"trace_write", test_trace_write},
    {"trace_write_pieces", test_trace_write_pieces},
    {"progress_format", test_progress_format},
    {"progress_throttle", test_progress_throttle},
    {"progress_note", test_progress_note},
    {"stats", test_stats},
    {"linfit", test_linfit},
    {"parse_long", test_parse_long},
    {"parse_double", test_parse_double},
    {"write_atomic", test_write_atomic},
    {"json_writer", test_json_writer},
    {NULL, NULL},
};

TB_TEST_MAIN(tests)
