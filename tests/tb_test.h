/*
 * tb_test.h - a tiny header-only test harness (in the spirit of nng's nuts.h
 * and libuv's task.h).
 *
 *     static void test_foo(void) { TB_ASSERT_EQ_INT(1 + 1, 2); }
 *     static const tb_test tests[] = {{"foo", test_foo}, {NULL, NULL}};
 *     TB_TEST_MAIN(tests)
 *
 * `prog` runs every test, `prog foo` only the test named foo.  Each test
 * prints "ok NAME" or "FAIL NAME: file:line: expr"; the exit status is 1 if
 * any failed.  A failed assertion records the failure and returns from the
 * test function, so assertions belong in the test functions themselves (which
 * return void).  MPI programs call tb_test_run() between MPI_Init and
 * MPI_Finalize instead of using TB_TEST_MAIN; this header uses no MPI.
 */
#ifndef TB_TEST_H
#define TB_TEST_H

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenbin/core.h"

typedef struct tb_test {
    const char *name;
    void (*fn)(void);
} tb_test;

/* State of the running test (tests run one at a time). */
static const char *tb_test_current_;
static int tb_test_failed_;

static inline void tb_test_fail_(const char *file, int line, const char *expr)
{
    tb_test_failed_ = 1;
    printf("FAIL %s: %s:%d: %s\n", tb_test_current_, file, line, expr);
    fflush(stdout);
}

/* Extra detail on its own indented line after a FAIL line. */
#define TB_TEST_NOTE_(...)                                                   \
    do {                                                                     \
        printf("    ");                                                      \
        printf(__VA_ARGS__);                                                 \
        printf("\n");                                                        \
    } while (0)

#define TB_ASSERT(cond)                                                      \
    do {                                                                     \
        if (!(cond)) {                                                       \
            tb_test_fail_(__FILE__, __LINE__, #cond);                        \
            return;                                                          \
        }                                                                    \
    } while (0)

#define TB_ASSERT_EQ_INT(a, b)                                               \
    do {                                                                     \
        long long tb_a_ = (long long)(a), tb_b_ = (long long)(b);            \
        if (tb_a_ != tb_b_) {                                                \
            tb_test_fail_(__FILE__, __LINE__, #a " == " #b);                 \
            TB_TEST_NOTE_("%lld != %lld", tb_a_, tb_b_);                     \
            return;                                                          \
        }                                                                    \
    } while (0)

#define TB_ASSERT_EQ_U64(a, b)                                               \
    do {                                                                     \
        uint64_t tb_a_ = (uint64_t)(a), tb_b_ = (uint64_t)(b);               \
        if (tb_a_ != tb_b_) {                                                \
            tb_test_fail_(__FILE__, __LINE__, #a " == " #b);                 \
            TB_TEST_NOTE_("0x%016" PRIx64 " != 0x%016" PRIx64, tb_a_, tb_b_); \
            return;                                                          \
        }                                                                    \
    } while (0)

#define TB_ASSERT_NEAR(a, b, tol)                                            \
    do {                                                                     \
        double tb_a_ = (double)(a), tb_b_ = (double)(b);                     \
        if (!(fabs(tb_a_ - tb_b_) <= (double)(tol))) {                       \
            tb_test_fail_(__FILE__, __LINE__, #a " ~= " #b " +- " #tol);     \
            TB_TEST_NOTE_("%.17g vs %.17g", tb_a_, tb_b_);                   \
            return;                                                          \
        }                                                                    \
    } while (0)

#define TB_ASSERT_STR_EQ(a, b)                                               \
    do {                                                                     \
        const char *tb_a_ = (a), *tb_b_ = (b);                               \
        if (tb_a_ == NULL || tb_b_ == NULL || strcmp(tb_a_, tb_b_) != 0) {   \
            tb_test_fail_(__FILE__, __LINE__, #a " == " #b);                 \
            TB_TEST_NOTE_("\"%s\" != \"%s\"", tb_a_ ? tb_a_ : "(null)",      \
                          tb_b_ ? tb_b_ : "(null)");                         \
            return;                                                          \
        }                                                                    \
    } while (0)

#define TB_ASSERT_OK(expr)                                                   \
    do {                                                                     \
        int tb_rc_ = (expr);                                                 \
        if (tb_rc_ != TB_OK) {                                               \
            tb_test_fail_(__FILE__, __LINE__, #expr);                        \
            TB_TEST_NOTE_("%s: %s", tb_err_name(tb_rc_), tb_strerror(tb_rc_)); \
            return;                                                          \
        }                                                                    \
    } while (0)

/*
 * Scratch directory for files a test writes: $TB_TEST_TMP (CTest gives each
 * test its own), else a fresh directory under $TMPDIR made on first use
 * (tb_test_scratch_made_ says so; the program removes it at the end).  The
 * program must define _POSIX_C_SOURCE 200809L (mkdtemp) before any include.
 */
static char tb_test_scratch_[512];
static int tb_test_scratch_made_;

static inline const char *tb_test_scratch_dir(void)
{
    if (tb_test_scratch_[0] != '\0')
        return tb_test_scratch_;
    const char *dir = getenv("TB_TEST_TMP");
    if (dir != NULL && dir[0] != '\0') {
        snprintf(tb_test_scratch_, sizeof tb_test_scratch_, "%s", dir);
        return tb_test_scratch_;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(tb_test_scratch_, sizeof tb_test_scratch_, "%s/tenbin_test_XXXXXX",
             tmp && tmp[0] ? tmp : "/tmp");
    tb_test_scratch_made_ = mkdtemp(tb_test_scratch_) != NULL;
    if (!tb_test_scratch_made_)
        snprintf(tb_test_scratch_, sizeof tb_test_scratch_, ".");
    return tb_test_scratch_;
}

/* Path of `name` in the scratch directory ("" if it does not fit in n). */
static inline void tb_test_path(char *buf, size_t n, const char *name)
{
    int w = snprintf(buf, n, "%s/%s", tb_test_scratch_dir(), name);
    if (w < 0 || (size_t)w >= n)
        buf[0] = '\0';
}

/* 1: print failures only, not "ok NAME" and the count (the ranks other
 * than 0 of an MPI test program, tb_test_mpi.h). */
static int tb_test_quiet_;

/* Runs the NULL-terminated table, or only the test named `only` (if not
 * NULL).  Returns 0 if all ran tests passed, 1 if one failed, 2 if `only`
 * names no test. */
/* Warning lines the library logs (its setters' refusals): how many, and the
 * first.  tb_log_set_sink(tb_test_warn_sink, &cap) with the level at least
 * TB_LOG_WARN, then check cap.n and cap.line. */
typedef struct tb_test_warns {
    int n;
    char line[512];
} tb_test_warns;

static inline void tb_test_warn_sink(void *ctx, tb_log_level level, int rank, const char *line)
{
    (void)rank;
    tb_test_warns *c = (tb_test_warns *)ctx;
    if (level == TB_LOG_WARN && c->n++ == 0)
        snprintf(c->line, sizeof c->line, "%s", line);
}

static inline int tb_test_run(const tb_test *table, const char *only)
{
    int failed = 0, ran = 0;
    for (const tb_test *t = table; t->name != NULL; t++) {
        if (only != NULL && strcmp(only, t->name) != 0)
            continue;
        tb_test_current_ = t->name;
        tb_test_failed_ = 0;
        t->fn();
        ran++;
        if (tb_test_failed_)
            failed++;
        else if (!tb_test_quiet_)
            printf("ok %s\n", t->name);
        fflush(stdout);
    }
    if (ran == 0) {
        fprintf(stderr, "no test named %s\n", only ? only : "(any)");
        return 2;
    }
    if (!tb_test_quiet_)
        printf("%d/%d tests passed\n", ran - failed, ran);
    return failed ? 1 : 0;
}

#define TB_TEST_MAIN(table)                                                  \
    int main(int argc, char **argv)                                          \
    {                                                                        \
        return tb_test_run((table), argc > 1 ? argv[1] : NULL);              \
    }

#endif /* TB_TEST_H */
