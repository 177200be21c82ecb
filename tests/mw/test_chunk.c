/*
 * test_chunk.c - the masters' chunk rules against their definitions: known
 * sequences of gss, tss and fac (N = 1000 tasks, P = 4 workers), fixed,
 * weighted factoring's weights from measured speeds, adaptive factoring's
 * formula, auto's floor from the measured message cost, and the names.
 */
#define _POSIX_C_SOURCE 200809L
#include "mw/chunk.h"

#include <math.h>
#include <string.h>

#include "../tb_test.h"
#include "tenbin/core.h"

/* The whole sequence of a rule on one worker: writes up to cap chunks. */
static size_t sequence(const char *rule, uint64_t N, int P, uint64_t *out, size_t cap)
{
    int kind;
    unsigned fixed;
    tb__chunker c;
    if (tb__chunk_parse(rule, &kind, &fixed) != 0 || tb__chunker_init(&c, kind, fixed, 0, P) != TB_OK)
        return 0;
    size_t k = 0;
    for (uint64_t R = N; R > 0 && k < cap; k++) {
        out[k] = tb__chunk_next(&c, 0, R, P, 0);
        R -= out[k];
    }
    tb__chunker_free(&c);
    return k;
}

static void test_known_sequences(void)
{
    uint64_t s[64];
    /* gss: ceil(R / P) */
    static const uint64_t gss[] = {250, 188, 141, 106, 79, 59, 45, 33, 25, 19, 14, 11,
                                   8,   6,   4,   3,   3,  2,  1,  1,  1,  1};
    size_t n = sequence("gss", 1000, 4, s, 64);
    TB_ASSERT_EQ_U64(n, sizeof gss / sizeof gss[0]);
    TB_ASSERT(memcmp(s, gss, sizeof gss) == 0);
    /* tss: f = ceil(1000/8) = 125, ceil(2000/126) = 16 chunks, d = 124/15,
     * f - k d rounded up, the last cut to what remains */
    static const uint64_t tss[] = {125, 117, 109, 101, 92, 84, 76, 68, 59, 51, 43, 35, 26, 14};
    n = sequence("tss", 1000, 4, s, 64);
    TB_ASSERT_EQ_U64(n, sizeof tss / sizeof tss[0]);
    TB_ASSERT(memcmp(s, tss, sizeof tss) == 0);
    /* fac (FAC2): batches of 4 chunks of ceil(R/8) */
    static const uint64_t fac[] = {125, 125, 125, 125, 63, 63, 63, 63, 31, 31, 31, 31, 16, 16,
                                   16,  16,  8,   8,   8,  8,  4,  4,  4,  4,  2,  2,  2,  2,
                                   1,   1,   1,   1};
    n = sequence("fac", 1000, 4, s, 64);
    TB_ASSERT_EQ_U64(n, sizeof fac / sizeof fac[0]);
    TB_ASSERT(memcmp(s, fac, sizeof fac) == 0);
    /* fixed: 300, 300, 300, 100 */
    n = sequence("300", 1000, 4, s, 64);
    TB_ASSERT(n == 4 && s[0] == 300 && s[2] == 300 && s[3] == 100);
}

static void test_weighted(void)
{
    int kind;
    unsigned fixed;
    TB_ASSERT(tb__chunk_parse("wf", &kind, &fixed) == 0);
    tb__chunker c;
    TB_ASSERT_OK(tb__chunker_init(&c, kind, fixed, 0, 2));
    /* Unmeasured workers get a quarter of fac's chunk: ceil(1000/4) / 4. */
    uint64_t R = 1000, x = tb__chunk_next(&c, 0, R, 2, 0);
    TB_ASSERT_EQ_U64(x, 63);
    R -= x;
    tb__chunk_observe(&c, 0, x, (double)x * 1e-3, (double)x * 1e-6, 1); /* 1 ms a task */
    x = tb__chunk_next(&c, 1, R, 2, 0);
    TB_ASSERT_EQ_U64(x, 63);
    R -= x;
    tb__chunk_observe(&c, 1, x, (double)x * 2e-3, (double)x * 4e-6, 1); /* 2 ms a task */
    /* Weights 4/3 and 2/3 of the batch chunk ceil(874/4) = 219. */
    x = tb__chunk_next(&c, 0, R, 2, 0);
    TB_ASSERT_EQ_U64(x, 292);
    R -= x;
    x = tb__chunk_next(&c, 1, R, 2, 0);
    TB_ASSERT_EQ_U64(x, 146);
    tb__chunker_free(&c);
}

static void test_adaptive_factoring(void)
{
    int kind;
    unsigned fixed;
    TB_ASSERT(tb__chunk_parse("af", &kind, &fixed) == 0);
    tb__chunker c;
    TB_ASSERT_OK(tb__chunker_init(&c, kind, fixed, 0, 2));
    /* Two workers measured at 1 ms a task (10 tasks each, the sums giving
     * exactly mean m and sample variance v). */
    double v = 1e-3, m = 1e-3; /* a very uneven task time: sd 31x the mean */
    for (int w = 0; w < 2; w++) {
        (void)tb__chunk_next(&c, w, 1000, 2, 0);
        tb__chunk_observe(&c, w, 10, 10 * m, 9 * v + 10 * m * m, 1);
    }
    /* D = 2 v / m, T = m / 2, R = 980: (D + 2TR - sqrt(D^2 + 4DTR)) / 2m,
     * at most wf's chunk (weight 1 x ceil(980/4) = 245). */
    double D = 2 * v / m, T = m / 2, R = 980;
    double af = (D + 2 * T * R - sqrt(D * D + 4 * D * T * R)) / (2 * m);
    uint64_t want = (uint64_t)fmin(245, floor(af + 0.5));
    uint64_t x = tb__chunk_next(&c, 0, 980, 2, 0);
    TB_ASSERT_EQ_U64(x, want);
    TB_ASSERT(x < 245); /* the variance makes it smaller than factoring's */
    tb__chunker_free(&c);
}

static void test_auto_floor(void)
{
    int kind;
    unsigned fixed;
    TB_ASSERT(tb__chunk_parse("auto", &kind, &fixed) == 0);
    tb__chunker c;
    TB_ASSERT_OK(tb__chunker_init(&c, kind, fixed, 0, 2));
    /* Tasks of 1 us with messages costing 100 us: a chunk of at least
     * 100 / (0.05 * 1) = 2000 tasks, no more than wf's. */
    uint64_t R = 1000000;
    for (int w = 0; w < 2; w++) {
        uint64_t x = tb__chunk_next(&c, w, R, 2, 0);
        R -= x;
        tb__chunk_observe(&c, w, x, (double)x * 1e-6, (double)x * 1e-12, (double)x * 1e-6 + 1e-4);
    }
    uint64_t x = tb__chunk_next(&c, 0, R, 2, 0);
    TB_ASSERT(x >= 2000);
    TB_ASSERT(x <= (R + 3) / 4 + 1);
    tb__chunker_free(&c);
}

/* auto's first chunk for a worker is at most 16 tasks, and no chunk is
 * above 8 times its floor: tasks of 1 ms with messages costing 20 us (floor
 * ceil(20 / (0.05 * 1000)) = 1) get chunks of at most 8, where factoring
 * and wf would hand out a quarter of the bag. */
static void test_auto_first_and_cap(void)
{
    tb__chunker c;
    TB_ASSERT_OK(tb__chunker_init(&c, TB__CHUNK_AUTO, 1, 0, 2));
    uint64_t R = 1000000;
    for (int w = 0; w < 2; w++) {
        uint64_t x = tb__chunk_next(&c, w, R, 2, 0);
        TB_ASSERT_EQ_U64(x, 16);
        R -= x;
        tb__chunk_observe(&c, w, x, (double)x * 1e-3, (double)x * 1e-6, (double)x * 1e-3 + 2e-5);
    }
    for (int i = 0; i < 100; i++) {
        uint64_t x = tb__chunk_next(&c, i % 2, R, 2, 0);
        TB_ASSERT(x >= 1 && x <= 8);
        R -= x;
    }
    tb__chunker_free(&c);
    /* Messages that cost nothing (a floor of 0 tasks) cap nothing at 0:
     * the floor counts as one task, the chunk as 8. */
    TB_ASSERT_OK(tb__chunker_init(&c, TB__CHUNK_AUTO, 1, 0, 2));
    R = 1000000;
    for (int w = 0; w < 2; w++) {
        uint64_t x = tb__chunk_next(&c, w, R, 2, 0);
        R -= x;
        tb__chunk_observe(&c, w, x, (double)x * 1e-3, (double)x * 1e-6, (double)x * 1e-3);
    }
    TB_ASSERT_EQ_U64(tb__chunk_next(&c, 0, R, 2, 0), 8);
    tb__chunker_free(&c);
    /* awf, the literature's rule, keeps its chunks: a quarter of fac's first. */
    TB_ASSERT_OK(tb__chunker_init(&c, TB__CHUNK_AWF, 1, 0, 2));
    TB_ASSERT_EQ_U64(tb__chunk_next(&c, 0, 1000000, 2, 0), 62500);
    tb__chunker_free(&c);
}

/* Task times far apart (a denormal against a second) make weights near
 * 1e300: every rule still gives a chunk in [1, remaining]. */
static void test_extreme_weights(void)
{
    static const char *const rules[] = {"wf", "awf", "af", "auto"};
    for (int r = 0; r < 4; r++) {
        int kind;
        unsigned fixed;
        TB_ASSERT(tb__chunk_parse(rules[r], &kind, &fixed) == 0);
        tb__chunker c;
        TB_ASSERT_OK(tb__chunker_init(&c, kind, fixed, 0, 3));
        uint64_t R = UINT64_MAX / 2;
        for (int w = 0; w < 3; w++) {
            uint64_t x = tb__chunk_next(&c, w, R, 3, 0);
            TB_ASSERT(x >= 1 && x <= R);
            double t = w == 0 ? 1e-310 : w == 1 ? 1.0 : 1e300;
            tb__chunk_observe(&c, w, 1, t, t * t, t + 1e-6);
        }
        for (int i = 0; i < 30; i++) {
            uint64_t x = tb__chunk_next(&c, i % 3, R, 3, 1.0);
            TB_ASSERT(x >= 1 && x <= R);
        }
        TB_ASSERT(tb__chunk_next(&c, 0, 5, 3, 1.0) <= 5);
        tb__chunker_free(&c);
    }
}

static void test_names(void)
{
    int kind;
    unsigned fixed;
    static const char *const rules[] = {"gss", "tss", "fac", "wf", "awf", "af", "auto"};
    for (int i = 0; i < 7; i++) {
        TB_ASSERT(tb__chunk_parse(rules[i], &kind, &fixed) == 0);
        TB_ASSERT_STR_EQ(tb__chunk_name(kind), rules[i]);
    }
    TB_ASSERT(tb__chunk_parse("12", &kind, &fixed) == 0 && kind == TB__CHUNK_FIXED && fixed == 12);
    TB_ASSERT(tb__chunk_parse("0", &kind, &fixed) != 0);
    TB_ASSERT(tb__chunk_parse("-3", &kind, &fixed) != 0);
    TB_ASSERT(tb__chunk_parse("guided", &kind, &fixed) != 0);
    TB_ASSERT(tb__chunk_parse("", &kind, &fixed) != 0);
    TB_ASSERT(tb__chunk_parse("99999999999", &kind, &fixed) != 0);
}

static const tb_test tests[] = {
    {"known_sequences", test_known_sequences},
    {"weighted", test_weighted},
    {"adaptive_factoring", test_adaptive_factoring},
    {"auto_floor", test_auto_floor},
    {"auto_first_and_cap", test_auto_first_and_cap},
    {"extreme_weights", test_extreme_weights},
    {"names", test_names},
    {NULL, NULL},
};

TB_TEST_MAIN(tests)
