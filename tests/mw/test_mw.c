/*
 * test_mw.c - the master-worker runtime on real MPI processes.
 *
 * Run as `mpiexec -n P test_mw P [test]`: the first argument is the size the
 * test expects, checked against the communicator it really got (a wrong
 * mpiexec silently starts P one-rank copies).  Every test is collective: all
 * ranks run the same tests in the same order, and assertions come after the
 * collective calls so a failed check cannot leave another rank waiting.
 */
#define _POSIX_C_SOURCE 200809L
#include "tenbin/core.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../apps/mandel/mandel.h"
#include "mw/mw_internal.h"
#include "mw/queue.h"
#include "tb_test_mpi.h"
#include "tenbin/mw.h"

static int rank, size;

/* Policies that fit this communicator: single and a multi-master layout. */
static const char *multi_policy(void)
{
    static char buf[32];
    int k = size >= 8 ? 3 : (size >= 2 ? 2 : 1);
    snprintf(buf, sizeof buf, "multi:%d", k);
    return buf;
}

/* ---- a bag with known results ------------------------------------------- */

typedef struct bag {
    uint64_t n;
    int delay_us;          /* max random delay per task on workers */
    uint64_t fail_task;    /* UINT64_MAX: none */
    int fail_result;       /* result function fails on fail_task instead */
    size_t big;            /* if > 0: every task and result has this size */
    uint32_t *seen;        /* root: deliveries per task */
    uint64_t bad;          /* root: wrong results */
} bag;

static uint64_t task_len(const bag *b, uint64_t id)
{
    if (b->big)
        return b->big;
    tb_rng r;
    tb_rng_seed_stream(&r, 42, id);
    return tb_rng_below(&r, 2000); /* 0 .. 1999 bytes, including empty tasks */
}

static unsigned char task_byte(uint64_t id, uint64_t i) { return (unsigned char)(id * 31 + i * 7); }

/* The generator fails on this task (UINT64_MAX: none). */
static uint64_t g_fail_gen = UINT64_MAX;

static int make_task(void *ctx, uint64_t id, tb_buf *t)
{
    const bag *b = ctx;
    if (id == g_fail_gen)
        return TB_ERR_IO;
    uint64_t len = task_len(b, id);
    TB_CHECK(tb_buf_reserve(t, len));
    for (uint64_t i = 0; i < len; i++)
        t->data[t->len + i] = task_byte(id, i);
    t->len += len;
    return TB_OK;
}

/* Result: id, length, sum of bytes; for big tasks also echo the bytes. */
static int work(void *ctx, uint64_t id, const void *data, size_t len, tb_buf *out)
{
    const bag *b = ctx;
    if (id == b->fail_task && !b->fail_result)
        return TB_ERR_IO;
    if (b->delay_us > 0) {
        tb_rng r;
        tb_rng_seed_stream(&r, 7, id);
        long ns = (long)tb_rng_below(&r, (uint64_t)b->delay_us) * 1000;
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
    }
    uint64_t sum = 0;
    for (size_t i = 0; i < len; i++)
        sum += ((const unsigned char *)data)[i];
    TB_CHECK(tb_buf_pack_u64(out, id));
    TB_CHECK(tb_buf_pack_u64(out, len));
    TB_CHECK(tb_buf_pack_u64(out, sum));
    if (b->big)
        TB_CHECK(tb_buf_append(out, data, len));
    return TB_OK;
}

/* Whether data/len is what work() returns for task id of bag b. */
static int result_ok(const bag *b, uint64_t id, const void *data, size_t len)
{
    tb_buf in;
    uint64_t rid, rlen, rsum, sum = 0, want = task_len(b, id);
    tb_buf_view(&in, data, len);
    if (tb_buf_unpack_u64(&in, &rid) || tb_buf_unpack_u64(&in, &rlen) ||
        tb_buf_unpack_u64(&in, &rsum))
        return 0;
    for (uint64_t i = 0; i < want; i++)
        sum += task_byte(id, i);
    return rid == id && rlen == want && rsum == sum &&
           tb_buf_remaining(&in) == (b->big ? b->big : 0);
}

static int on_result(void *ctx, uint64_t id, const void *data, size_t len)
{
    bag *b = ctx;
    if (id == b->fail_task && b->fail_result)
        return TB_ERR_INVALID;
    if (id >= b->n)
        return TB_ERR_RANGE;
    b->seen[id]++;
    if (!result_ok(b, id, data, len))
        b->bad++;
    return TB_OK;
}

typedef struct run_out {
    int rc, rc_min, rc_max;
    uint64_t missing, duplicated, bad, results;
    tb_mw_summary s;
} run_out;

/* Dynamic policies: a hook that forces promotions often (the real machine
 * here is too small to overload a master), deterministically. */
static int force_often(void *ctx, int master, int worker, uint64_t assigned)
{
    (void)ctx;
    if (worker < 0)
        return 1; /* dynamic and dynamic:wait ask whether a child merges back: always */
    uint64_t h = (uint64_t)master * 0x9e3779b97f4a7c15ULL ^ (uint64_t)worker * 0xbf58476d1ce4e5b9ULL ^
                 assigned * 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h % 3 == 0 ? 1 : -1;
}

static tb__mw_promote_hook g_hook;
static const char *g_chunking; /* a chunk rule for run_bag, or NULL */

/* Run a bag (explicit tasks on rank 0, or a generator) and check it. */
static run_out run_bag(bag *b, const char *policy, unsigned chunk, int use_gen)
{
    run_out o;
    memset(&o, 0, sizeof o);
    b->seen = rank == 0 ? calloc(b->n ? b->n : 1, sizeof *b->seen) : NULL;
    b->bad = 0;
    tb_mw *mw;
    tb_mw_create(&mw, MPI_COMM_WORLD);
    tb_mw_set_policy(mw, policy);
    if (chunk) /* 0: as the policy string says */
        tb_mw_set_chunk(mw, chunk);
    if (g_chunking)
        tb_mw_set_chunking(mw, g_chunking);
    tb_mw_set_worker(mw, work, b);
    tb_mw_set_result(mw, on_result, b);
    if (g_hook)
        tb__mw_set_promote_hook(mw, g_hook, NULL);
    if (use_gen) {
        tb_mw_set_generator(mw, b->n, make_task, b);
    } else if (rank == 0) {
        tb_buf t = TB_BUF_INIT;
        for (uint64_t id = 0; id < b->n; id++) {
            tb_buf_clear(&t);
            make_task(b, id, &t);
            tb_mw_add_task(mw, t.data, t.len);
        }
        tb_buf_free(&t);
    }
    o.rc = tb_mw_run(mw);
    tb_mw_get_summary(mw, &o.s);
    MPI_Allreduce(&o.rc, &o.rc_min, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&o.rc, &o.rc_max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        for (uint64_t i = 0; i < b->n; i++) {
            o.missing += b->seen[i] == 0;
            o.duplicated += b->seen[i] > 1;
        }
        o.bad = b->bad;
        o.results = o.s.results;
    }
    /* The summary's per-rank table dies with the handle: copy what is used. */
    o.s.rank = NULL;
    tb_mw_destroy(&mw);
    free(b->seen);
    b->seen = NULL;
    return o;
}

#define CHECK_EXACTLY_ONCE(o, b)                                             \
    do {                                                                     \
        TB_ASSERT_OK((o).rc);                                                \
        TB_ASSERT_EQ_INT((o).rc_min, (o).rc_max);                            \
        if (rank == 0) {                                                     \
            TB_ASSERT_EQ_U64((o).missing, 0);                                \
            TB_ASSERT_EQ_U64((o).duplicated, 0);                             \
            TB_ASSERT_EQ_U64((o).bad, 0);                                    \
            TB_ASSERT_EQ_U64((o).results, (b).n);                            \
        }                                                                    \
    } while (0)

/* The run failed on every rank with this task and code, and nothing came twice. */
#define CHECK_FAILED(o, task, code)                                          \
    do {                                                                     \
        TB_ASSERT_EQ_INT((o).rc, TB_ERR_TASK);                               \
        TB_ASSERT_EQ_INT((o).rc_min, (o).rc_max);                            \
        if (rank == 0) {                                                     \
            TB_ASSERT((o).s.failed);                                         \
            TB_ASSERT_EQ_U64((o).s.failed_task, (task));                     \
            TB_ASSERT_EQ_INT((o).s.failed_code, (code));                     \
            TB_ASSERT_EQ_U64((o).duplicated, 0);                             \
        }                                                                    \
    } while (0)

static void test_comm_size(void)
{
    /* main() checked it; this records it in the output. */
    TB_ASSERT(size >= 1);
}

static void test_random_sizes_delays(void)
{
    const char *pol[2] = {"single", multi_policy()};
    for (int p = 0; p < 2; p++) {
        for (int gen = 0; gen < 2; gen++) {
            bag b = {400, 300, UINT64_MAX, 0, 0, NULL, 0};
            run_out o = run_bag(&b, pol[p], 1, gen);
            CHECK_EXACTLY_ONCE(o, b);
        }
    }
}

static void test_chunking(void)
{
    const char *pol[2] = {"single", multi_policy()};
    unsigned chunks[3] = {2, 7, 1000};
    for (int p = 0; p < 2; p++) {
        for (int c = 0; c < 3; c++) {
            bag b = {301, 50, UINT64_MAX, 0, 0, NULL, 0};
            run_out o = run_bag(&b, pol[p], chunks[c], c % 2);
            CHECK_EXACTLY_ONCE(o, b);
        }
    }
}

/* Every chunk rule under every policy: each task exactly once (explicit
 * tasks and a generator alike). */
static void test_chunk_rules(void)
{
    static const char *const rules[] = {"gss", "tss", "fac", "wf", "awf", "af", "auto"};
    const char *pol[4] = {"single", multi_policy(), "dynamic", "dynamic:wait"};
    for (int r = 0; r < 7; r++)
        for (int p = 0; p < 4; p++) {
            g_chunking = rules[r];
            bag b = {257, 40, UINT64_MAX, 0, 0, NULL, 0};
            run_out o = run_bag(&b, pol[p], 1, (r + p) % 2);
            g_chunking = NULL;
            CHECK_EXACTLY_ONCE(o, b);
            TB_ASSERT_STR_EQ(o.s.chunking, rules[r]);
        }
}

/* The chunk rule in the policy string ("POLICY,chunk=RULE"). */
static void test_policy_chunk(void)
{
    tb_mw *mw;
    TB_ASSERT_OK(tb_mw_create(&mw, MPI_COMM_WORLD));
    int a = tb_mw_set_policy(mw, "single,chunk=nope");
    int b = tb_mw_set_policy(mw, "single,chunk=0");
    int c = tb_mw_set_policy(mw, "single,chunk=");
    /* the refusal's line is reachable on the handle (tb_mw_error) */
    char line[512];
    snprintf(line, sizeof line, "%s", tb_mw_error(mw));
    tb_mw_destroy(&mw);
    TB_ASSERT(strstr(line, "tb_mw_set_policy: 'single,chunk=': ") == line);
    TB_ASSERT_STR_EQ(tb_mw_error(NULL), "");
    TB_ASSERT_EQ_INT(a, TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(b, TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(c, TB_ERR_PARSE);
    const char *pol[2] = {"single,chunk=fac", size >= 2 ? "multi:2,chunk=auto" : "single,chunk=auto"};
    const char *want[2] = {"fac", "auto"};
    for (int p = 0; p < 2; p++) {
        bag b = {123, 40, UINT64_MAX, 0, 0, NULL, 0};
        run_out o = run_bag(&b, pol[p], 0, p);
        CHECK_EXACTLY_ONCE(o, b);
        TB_ASSERT_STR_EQ(o.s.chunking, want[p]);
        TB_ASSERT(strchr(o.s.policy, ',') == NULL); /* the policy's name alone */
    }
}

static void test_empty_bag(void)
{
    const char *pol[2] = {"single", multi_policy()};
    for (int p = 0; p < 2; p++) {
        bag b = {0, 0, UINT64_MAX, 0, 0, NULL, 0};
        run_out o = run_bag(&b, pol[p], 1, p);
        CHECK_EXACTLY_ONCE(o, b);
    }
}

static void test_one_task_and_few_tasks(void)
{
    const char *pol[2] = {"single", multi_policy()};
    uint64_t counts[3] = {1, 2, (uint64_t)(size > 2 ? size - 2 : 1)};
    for (int p = 0; p < 2; p++) {
        for (int c = 0; c < 3; c++) {
            bag b = {counts[c], 100, UINT64_MAX, 0, 0, NULL, 0};
            run_out o = run_bag(&b, pol[p], 1, c % 2);
            CHECK_EXACTLY_ONCE(o, b);
        }
    }
}

static void test_mib_tasks(void)
{
    const char *pol[2] = {"single", multi_policy()};
    for (int p = 0; p < 2; p++) {
        bag b = {6, 0, UINT64_MAX, 0, (size_t)1 << 20, NULL, 0};
        run_out o = run_bag(&b, pol[p], p + 1, p);
        CHECK_EXACTLY_ONCE(o, b);
    }
}

static void test_failing_worker(void)
{
    const char *pol[2] = {"single", multi_policy()};
    for (int p = 0; p < 2; p++) {
        bag b = {200, 100, 137, 0, 0, NULL, 0};
        run_out o = run_bag(&b, pol[p], 1, p);
        CHECK_FAILED(o, 137, TB_ERR_IO);
        if (rank == 0) {
            TB_ASSERT(o.s.failed_rank >= 0 && o.s.failed_rank < size);
            TB_ASSERT_EQ_U64(o.bad, 0);
        }
    }
}

/* A generator that fails in the middle of a chunk: the tasks made before
 * it still go out, and the run fails with the generator's task and code
 * (it once sent its failure message in the chunk's buffer and ended with
 * "malformed input"). */
static void test_failing_generator(void)
{
    const char *pol[2] = {"single", multi_policy()};
    for (int p = 0; p < 2; p++) {
        bag b = {200, 0, UINT64_MAX, 0, 0, NULL, 0};
        g_fail_gen = 58;
        run_out o = run_bag(&b, pol[p], 3, 1);
        g_fail_gen = UINT64_MAX;
        CHECK_FAILED(o, 58, TB_ERR_IO);
    }
}

static void test_failing_result_function(void)
{
    bag b = {100, 0, 17, 1, 0, NULL, 0};
    run_out o = run_bag(&b, multi_policy(), 3, 1);
    CHECK_FAILED(o, 17, TB_ERR_INVALID);
    TB_ASSERT(rank != 0 || o.s.failed_rank == 0);
}

static void test_policy_names(void)
{
    tb_mw *mw;
    TB_ASSERT_OK(tb_mw_create(&mw, MPI_COMM_WORLD));
    int a = tb_mw_set_policy(mw, "bogus");
    int b = tb_mw_set_policy(mw, "multi:0");
    int c = tb_mw_set_policy(mw, "multi:x");
    char big[32];
    snprintf(big, sizeof big, "multi:%d", size + 1);
    int d = tb_mw_set_policy(mw, big);
    int e = tb_mw_set_policy(mw, "single");
    int f = tb_mw_set_chunk(mw, 0);
    int g = tb_mw_add_task(mw, "x", 1);
    int h = tb_mw_set_policy(mw, "dynamic:wait:0");
    int i = tb_mw_set_policy(mw, "dynamic:wait:x");
    int j = tb_mw_set_policy(mw, "dynamic:waits");
    int k = tb_mw_set_policy(mw, "dynamic:wait:0.3");
    tb_mw_destroy(&mw);
    TB_ASSERT(mw == NULL);
    TB_ASSERT_EQ_INT(a, TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(b, TB_ERR_RANGE);
    TB_ASSERT_EQ_INT(c, TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(d, TB_ERR_SIZE);
    TB_ASSERT_OK(e);
    TB_ASSERT_EQ_INT(f, TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(g, rank == 0 ? TB_OK : TB_ERR_STATE);
    TB_ASSERT_EQ_INT(h, TB_ERR_RANGE);
    TB_ASSERT_EQ_INT(i, TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(j, TB_ERR_PARSE);
    TB_ASSERT_OK(k);
}

/* Every rank a master of its own group (K = P): all work moves through
 * requests between masters, with random delays making the races vary. */
static void test_all_masters(void)
{
    char pol[32];
    snprintf(pol, sizeof pol, "multi:%d", size);
    for (unsigned chunk = 1; chunk <= 3; chunk += 2) {
        bag b = {257, 200, UINT64_MAX, 0, 0, NULL, 0};
        run_out o = run_bag(&b, pol, chunk, chunk == 1);
        CHECK_EXACTLY_ONCE(o, b);
    }
    bag f = {120, 100, 77, 0, 0, NULL, 0};
    run_out o = run_bag(&f, pol, 1, 1);
    TB_ASSERT_EQ_INT(o.rc, TB_ERR_TASK);
    TB_ASSERT_EQ_INT(o.rc_min, o.rc_max);
    if (rank == 0)
        TB_ASSERT_EQ_U64(o.s.failed_task, 77);
}

/* A last task must not bounce between masters while every worker is busy:
 * few long tasks, several masters, and the message count stays small. */
static void test_no_pingpong(void)
{
    bag b = {3, 150000, UINT64_MAX, 0, 0, NULL, 0};
    run_out o = run_bag(&b, multi_policy(), 1, 1);
    CHECK_EXACTLY_ONCE(o, b);
    if (rank == 0) {
        uint64_t K = (uint64_t)o.s.masters;
        uint64_t bound = 2 * b.n + 4 * K * K + 2 * (uint64_t)size + 10;
        if (o.s.messages > bound)
            printf("    %llu messages for %llu tasks (bound %llu)\n",
                   (unsigned long long)o.s.messages, (unsigned long long)b.n,
                   (unsigned long long)bound);
        TB_ASSERT(o.s.messages <= bound);
    }
}

/* S1's dynamic masters on real processes, promotions (and dynamic:wait's
 * merges) forced by the hook: every task exactly once, failures reported,
 * with and without chunking. */
static void test_dynamic_forced(void)
{
    g_hook = force_often;
    int ok = 1;
    uint64_t promotions = 0, merges = 0;
    const char *pols[3] = {"dynamic:paper", "dynamic", "dynamic:wait"};
    for (unsigned chunk = 1; chunk <= 3 && ok; chunk++) {
        bag b = {500, 200, UINT64_MAX, 0, 0, NULL, 0};
        run_out o = run_bag(&b, pols[chunk - 1], chunk, chunk != 2);
        ok = o.rc == TB_OK && o.rc_min == o.rc_max &&
             (rank != 0 || (o.missing == 0 && o.duplicated == 0 && o.bad == 0 && o.results == b.n));
        promotions += o.s.promotions;
        merges += o.s.merges;
    }
    bag f = {300, 100, 211, 0, 0, NULL, 0};
    run_out fo = run_bag(&f, "dynamic:paper", 1, 1);
    g_hook = NULL;
    TB_ASSERT(ok);
    TB_ASSERT_EQ_INT(fo.rc, TB_ERR_TASK);
    TB_ASSERT_EQ_INT(fo.rc_min, fo.rc_max);
    if (rank == 0) {
        TB_ASSERT_EQ_U64(fo.s.failed_task, 211);
        TB_ASSERT_EQ_U64(fo.duplicated, 0);
        /* Promotion needs four other busy workers: possible from P = 6 on. */
        TB_ASSERT(size < 6 || promotions > 0);
        TB_ASSERT(size >= 6 || promotions == 0);
        /* dynamic:wait's children merge back when the hook says so. */
        TB_ASSERT(size < 8 || merges > 0);
    }
}

/* ---- results folded where they arrive (tb_mw_set_reduce) ---------------- */

/* A partial: deliveries per task (u32 each) and wrong results (u32), so the
 * reduced partial on rank 0 says whether every task arrived exactly once. */
typedef struct fold_ctx {
    bag *b;
    uint64_t fail_fold; /* UINT64_MAX: none */
} fold_ctx;

static int partial_init(tb_buf *p, uint64_t n)
{
    if (p->len)
        return TB_OK;
    TB_CHECK(tb_buf_reserve(p, (n + 1) * 4));
    memset(p->data, 0, (n + 1) * 4);
    p->len = (n + 1) * 4;
    return TB_OK;
}

static int fold_result(void *ctx, tb_buf *partial, uint64_t id, const void *data, size_t len)
{
    fold_ctx *f = ctx;
    if (id == f->fail_fold)
        return TB_ERR_INVALID;
    if (id >= f->b->n)
        return TB_ERR_RANGE;
    TB_CHECK(partial_init(partial, f->b->n));
    uint32_t *c = (uint32_t *)(void *)partial->data;
    c[id]++;
    if (!result_ok(f->b, id, data, len))
        c[f->b->n]++;
    return TB_OK;
}

static int combine_counts(void *ctx, tb_buf *partial, const void *other, size_t len)
{
    fold_ctx *f = ctx;
    if (len == 0)
        return TB_OK; /* a rank that was never a master */
    if (len != (f->b->n + 1) * 4)
        return TB_ERR_PARSE;
    TB_CHECK(partial_init(partial, f->b->n));
    uint32_t *c = (uint32_t *)(void *)partial->data;
    const unsigned char *o = other;
    for (uint64_t i = 0; i <= f->b->n; i++) {
        uint32_t v;
        memcpy(&v, o + 4 * i, 4);
        c[i] += v;
    }
    return TB_OK;
}

/* Run a bag whose results are folded on the masters; with combine, read the
 * reduced partial on rank 0, else add up every rank's partial here. */
static run_out run_folded(bag *b, const char *policy, int combine, uint64_t fail_fold)
{
    run_out o;
    memset(&o, 0, sizeof o);
    fold_ctx f = {b, fail_fold};
    tb_mw *mw;
    tb_mw_create(&mw, MPI_COMM_WORLD);
    tb_mw_set_policy(mw, policy);
    tb_mw_set_worker(mw, work, b);
    tb_mw_set_reduce(mw, fold_result, combine ? combine_counts : NULL, &f);
    if (g_hook)
        tb__mw_set_promote_hook(mw, g_hook, NULL);
    tb_mw_set_generator(mw, b->n, make_task, b);
    o.rc = tb_mw_run(mw);
    tb_mw_get_summary(mw, &o.s);
    o.s.rank = NULL;
    MPI_Allreduce(&o.rc, &o.rc_min, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&o.rc, &o.rc_max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    const void *pd;
    size_t pl;
    tb_mw_get_partial(mw, &pd, &pl);
    size_t want = (size_t)(b->n + 1) * 4;
    uint32_t *mine = calloc(b->n + 1, 4), *all = calloc(b->n + 1, 4);
    if (pl == want)
        memcpy(mine, pd, want);
    else if (pl != 0)
        mine[b->n] = 1000000; /* a malformed partial */
    if (combine) {
        if (rank == 0)
            memcpy(all, mine, want);
    } else {
        MPI_Reduce(mine, all, (int)(b->n + 1), MPI_UINT32_T, MPI_SUM, 0, MPI_COMM_WORLD);
    }
    if (rank == 0) {
        for (uint64_t i = 0; i < b->n; i++) {
            o.missing += all[i] == 0;
            o.duplicated += all[i] > 1;
        }
        o.bad = all[b->n];
        o.results = o.s.results;
    }
    free(mine);
    free(all);
    tb_mw_destroy(&mw);
    return o;
}

/* Results folded where they arrive: exactly once under every policy (forced
 * promotions included), with the partials reduced on rank 0 or left on each
 * rank; a failing fold stops the run everywhere; a reduction and a result
 * function together are refused on every rank. */
static void test_reduce(void)
{
    const char *pols[5] = {"single", multi_policy(), "dynamic:paper", "dynamic", "dynamic:wait"};
    for (int p = 0; p < 5; p++) {
        g_hook = p >= 2 ? force_often : NULL;
        for (int combine = 0; combine <= 1; combine++) {
            bag b = {400, p >= 2 ? 200 : 0, UINT64_MAX, 0, 0, NULL, 0};
            run_out o = run_folded(&b, pols[p], combine, UINT64_MAX);
            CHECK_EXACTLY_ONCE(o, b);
            TB_ASSERT(rank != 0 || o.s.reduced);
        }
    }
    g_hook = NULL;
    bag fb = {300, 0, UINT64_MAX, 0, 0, NULL, 0};
    run_out fo = run_folded(&fb, multi_policy(), 1, 123);
    CHECK_FAILED(fo, 123, TB_ERR_INVALID);
    bag both = {10, 0, UINT64_MAX, 0, 0, NULL, 0};
    fold_ctx f = {&both, UINT64_MAX};
    tb_mw *mw;
    TB_ASSERT_OK(tb_mw_create(&mw, MPI_COMM_WORLD));
    tb_mw_set_worker(mw, work, &both);
    tb_mw_set_generator(mw, both.n, make_task, &both);
    tb_mw_set_result(mw, on_result, &both);
    TB_ASSERT_EQ_INT(tb_mw_set_reduce(mw, NULL, combine_counts, &f), TB_ERR_INVALID);
    TB_ASSERT_OK(tb_mw_set_reduce(mw, fold_result, combine_counts, &f));
    TB_ASSERT_EQ_INT(tb_mw_run(mw), TB_ERR_STATE);
    tb_mw_destroy(&mw);
}

static void test_balance_multi(void)
{
    /* With equal tasks, every master's group ends up working: each master
     * hands out at least one task, and the counts add up to the bag. */
    bag b = {600, 200, UINT64_MAX, 0, 0, NULL, 0};
    tb_mw_summary s;
    run_out o;
    tb_mw *mw;
    b.seen = rank == 0 ? calloc(b.n, sizeof *b.seen) : NULL;
    tb_mw_create(&mw, MPI_COMM_WORLD);
    tb_mw_set_policy(mw, multi_policy());
    tb_mw_set_worker(mw, work, &b);
    tb_mw_set_result(mw, on_result, &b);
    tb_mw_set_generator(mw, b.n, make_task, &b);
    o.rc = tb_mw_run(mw);
    tb_mw_get_summary(mw, &s);
    uint64_t assigned = 0, computed = 0;
    int masters = 0, idle_masters = 0;
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            computed += s.rank[r].tasks_computed;
            if (s.rank[r].is_master) {
                masters++;
                assigned += s.rank[r].tasks_assigned;
                idle_masters += s.rank[r].tasks_assigned == 0;
            }
        }
    }
    tb_mw_destroy(&mw);
    free(b.seen);
    TB_ASSERT_OK(o.rc);
    if (rank == 0) {
        TB_ASSERT_EQ_INT(masters, s.masters);
        TB_ASSERT_EQ_U64(assigned, b.n);
        TB_ASSERT_EQ_U64(computed, b.n);
        TB_ASSERT_EQ_INT(idle_masters, 0);
        TB_ASSERT(s.worker_idle_fraction_mean >= 0.0 && s.worker_idle_fraction_mean <= 1.0);
    }
}

/* Mandelbrot rows through the runtime equal the serial image. */
typedef struct mapp {
    tb_mandel m;
    uint32_t *img;
} mapp;

static int mgen(void *ctx, uint64_t id, tb_buf *t)
{
    (void)ctx;
    return tb_buf_pack_u32(t, (uint32_t)id);
}

static int mwork(void *ctx, uint64_t id, const void *d, size_t len, tb_buf *out)
{
    const mapp *a = ctx;
    (void)id;
    if (len != 4)
        return TB_ERR_PARSE;
    uint32_t y = ((const unsigned char *)d)[0] | (uint32_t)((const unsigned char *)d)[1] << 8;
    TB_CHECK(tb_buf_reserve(out, (size_t)a->m.width * 4));
    uint32_t *row = (uint32_t *)(void *)(out->data + out->len);
    tb_mandel_row(&a->m, (int)y, row);
    out->len += (size_t)a->m.width * 4;
    return TB_OK;
}

static int mres(void *ctx, uint64_t id, const void *d, size_t len)
{
    mapp *a = ctx;
    if (len != (size_t)a->m.width * 4)
        return TB_ERR_PARSE;
    memcpy(a->img + id * (uint64_t)a->m.width, d, len);
    return TB_OK;
}

static void test_mandel_matches_serial(void)
{
    mapp a = {{96, 64, 500, -2.0, 1.0, -1.5, 1.5}, NULL};
    size_t npix = (size_t)a.m.width * (size_t)a.m.height;
    uint32_t *serial = malloc(npix * 4);
    for (int y = 0; y < a.m.height; y++)
        tb_mandel_row(&a.m, y, serial + (size_t)y * a.m.width);
    const char *pol[4] = {"single", multi_policy(), "dynamic:paper", "dynamic:wait"};
    int same[4] = {0, 0, 0, 0}, rcs[4];
    for (int p = 0; p < 4; p++) {
        a.img = calloc(npix, 4);
        tb_mw *mw;
        tb_mw_create(&mw, MPI_COMM_WORLD);
        tb_mw_set_policy(mw, pol[p]);
        tb_mw_set_chunk(mw, (unsigned)(p % 3 * 2 + 1));
        tb_mw_set_worker(mw, mwork, &a);
        tb_mw_set_result(mw, mres, &a);
        tb_mw_set_generator(mw, (uint64_t)a.m.height, mgen, &a);
        if (p >= 2)
            tb__mw_set_promote_hook(mw, force_often, NULL);
        rcs[p] = tb_mw_run(mw);
        tb_mw_destroy(&mw);
        same[p] = memcmp(a.img, serial, npix * 4) == 0;
        free(a.img);
    }
    uint64_t sum = tb_mandel_checksum(serial, npix);
    free(serial);
    TB_ASSERT_OK(rcs[0]);
    TB_ASSERT_OK(rcs[1]);
    TB_ASSERT_OK(rcs[2]);
    TB_ASSERT_OK(rcs[3]);
    if (rank == 0) {
        TB_ASSERT(same[0]);
        TB_ASSERT(same[1]);
        TB_ASSERT(same[2]);
        TB_ASSERT(same[3]);
        TB_ASSERT(sum > npix); /* not all ones: the image has structure */
    }
}

static const tb_test tests[] = {
    {"comm_size", test_comm_size},
    {"policy_names", test_policy_names},
    {"random_sizes_delays", test_random_sizes_delays},
    {"chunking", test_chunking},
    {"chunk_rules", test_chunk_rules},
    {"policy_chunk", test_policy_chunk},
    {"empty_bag", test_empty_bag},
    {"one_task_and_few_tasks", test_one_task_and_few_tasks},
    {"mib_tasks", test_mib_tasks},
    {"failing_worker", test_failing_worker},
    {"failing_generator", test_failing_generator},
    {"failing_result_function", test_failing_result_function},
    {"all_masters", test_all_masters},
    {"no_pingpong", test_no_pingpong},
    {"dynamic_forced", test_dynamic_forced},
    {"balance_multi", test_balance_multi},
    {"reduce", test_reduce},
    {"mandel_matches_serial", test_mandel_matches_serial},
    {NULL, NULL},
};

TB_TEST_MPI_MAIN_FLAGS(tests, 1, TB_TEST_MPI_ERRORS_ONLY, rank, size)
