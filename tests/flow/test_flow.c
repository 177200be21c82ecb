/*
 * test_flow.c - workflows: the text format and its errors, independent task
 * sets, the schedulers (Topcuoglu's known answers, properties on random
 * DAGs), the simulator, the triggers, and the reader of the logs
 * `tenbin flow run --resume` takes.
 */
#define _POSIX_C_SOURCE 200809L
#include "tenbin/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../tb_test.h"
#include "flow/flow_internal.h"
#include "tenbin/flow.h"
#include "tenbin/model.h"

/* Topcuoglu, Hariri and Wu (2002), Fig. 2: 10 tasks, 3 hosts. */
static const char topcuoglu[] =
    "# Topcuoglu, Hariri and Wu, IEEE TPDS 13(3), 2002, Fig. 2\n"
    "hosts 3\n"
    "task n1 14 16 9\n"
    "task n2 13 19 18\n"
    "task n3 11 13 19\n"
    "task n4 13 8 17\n"
    "task n5 12 13 10\n"
    "task n6 13 16 9\n"
    "task n7 7 15 11\n"
    "task n8 5 11 14\n"
    "task n9 18 12 20\n"
    "task n10 21 7 16\n"
    "edge n1 n2 18\nedge n1 n3 12\nedge n1 n4 9\nedge n1 n5 11\nedge n1 n6 14\n"
    "edge n2 n8 19\nedge n2 n9 16\nedge n3 n7 23\nedge n4 n8 27\nedge n4 n9 23\n"
    "edge n5 n9 13\nedge n6 n8 15\nedge n7 n10 17\nedge n8 n10 11\nedge n9 n10 13\n";

static tb_flow *parse(const char *text)
{
    tb_flow *f = NULL;
    char err[512];
    if (tb__flow_read_text(text, strlen(text), "t.txt", &f, err, sizeof err) != TB_OK) {
        printf("    parse: %s\n", err);
        return NULL;
    }
    return f;
}

static double schedule_with(const tb_flow *f, const char *algo, tb_flow_schedule *s)
{
    tb_flow_hosts H;
    if (tb_flow_hosts_init(&H, f, NULL) != TB_OK)
        return -1;
    const tb_flow_sched_ops *ops = tb_flow_sched_find(algo);
    double mk = -1;
    char err[256];
    if (ops && ops->schedule(f, &H, NULL, 1, s) == TB_OK &&
        tb_flow_schedule_check(f, &H, s, err, sizeof err) == TB_OK)
        mk = s->makespan;
    else if (ops)
        printf("    %s: %s\n", algo, err);
    tb_flow_hosts_free(&H);
    return mk;
}

/* A task of zero work that HEFT puts at the very start of its successor on
 * the same host is no overlap (the check sorted ties by index; found by
 * tests/fuzz, regress/fuzz_flow_text/heft-zero-work-overlap.txt). */
static void test_check_zero_work(void)
{
    tb_flow *f = parse("task a 2\ntask b 0\nedge b a 0\n");
    TB_ASSERT(f != NULL);
    tb_platform *p = NULL;
    TB_ASSERT_OK(tb_platform_parse_spec("hosts=2,speed=1", 1, &p, NULL, 0));
    tb_flow_hosts H;
    TB_ASSERT_OK(tb_flow_hosts_init(&H, f, p));
    tb_flow_schedule s;
    TB_ASSERT_OK(tb_flow_schedule_init(&s, 2, 2));
    char err[256] = "";
    int rc = tb_flow_sched_find("heft")->schedule(f, &H, NULL, 1, &s);
    int chk = rc == TB_OK ? tb_flow_schedule_check(f, &H, &s, err, sizeof err) : rc;
    int same_host = s.host[0] == s.host[1];
    double mk = s.makespan;
    tb_flow_schedule_free(&s);
    tb_flow_hosts_free(&H);
    tb_platform_destroy(&p);
    tb_flow_destroy(&f);
    if (chk)
        printf("    %s\n", err);
    TB_ASSERT_OK(rc);
    TB_ASSERT(same_host);
    TB_ASSERT_OK(chk);
    TB_ASSERT_NEAR(mk, 2.0, 1e-12);
}

static void test_topcuoglu(void)
{
    tb_flow *f = parse(topcuoglu);
    TB_ASSERT(f != NULL);
    TB_ASSERT_EQ_INT(tb_flow_ntasks(f), 10);
    TB_ASSERT_EQ_INT(tb_flow_nedges(f), 15);
    tb_flow_schedule s;
    TB_ASSERT_OK(tb_flow_schedule_init(&s, 10, 3));
    double heft = schedule_with(f, "heft", &s);
    /* the paper's HEFT schedule: n1 on P3 at 0-9, n10 ends at 80 on P2 */
    int h1 = s.host[0], h10 = s.host[9];
    double cpop = schedule_with(f, "cpop", &s);
    int cp_host = s.host[0];
    double others[5];
    const char *names[5] = {"peft", "minmin", "maxmin", "olb", "random"};
    for (int i = 0; i < 5; i++)
        others[i] = schedule_with(f, names[i], &s);
    tb_flow_schedule_free(&s);
    tb_flow_destroy(&f);
    TB_ASSERT_NEAR(heft, 80.0, 1e-9);
    TB_ASSERT_EQ_INT(h1, 2);
    TB_ASSERT_EQ_INT(h10, 1);
    TB_ASSERT_NEAR(cpop, 86.0, 1e-9);
    TB_ASSERT_EQ_INT(cp_host, 1); /* the critical path n1 n2 n9 n10 goes to P2 */
    for (int i = 0; i < 5; i++)
        TB_ASSERT(others[i] >= 73.0); /* > the critical path at its best */
}

static void expect_error(const char *text, const char *needle)
{
    tb_flow *f = NULL;
    char err[512] = "";
    int rc = tb__flow_read_text(text, strlen(text), "t.txt", &f, err, sizeof err);
    if (rc == TB_OK || !strstr(err, needle))
        printf("    for %s got rc %d '%s'\n", needle, rc, err);
    tb_flow_destroy(&f);
    TB_ASSERT(rc != TB_OK);
    TB_ASSERT(strstr(err, needle) != NULL);
}

/* The whole message, exactly. */
static void expect_error_is(const char *text, const char *want)
{
    tb_flow *f = NULL;
    char err[512] = "";
    int rc = tb__flow_read_text(text, strlen(text), "t.txt", &f, err, sizeof err);
    if (rc != TB_ERR_INVALID || strcmp(err, want) != 0)
        printf("    want rc %d '%s', got rc %d '%s'\n", TB_ERR_INVALID, want, rc, err);
    tb_flow_destroy(&f);
    TB_ASSERT(rc == TB_ERR_INVALID);
    TB_ASSERT(strcmp(err, want) == 0);
}

/* A cycle error names the whole cycle, edge by edge, from its first task in
 * the file, whichever task the search met first; tasks before and after the
 * cycle are not in it; a long cycle is shortened in the middle. */
static void test_cycle_message(void)
{
    expect_error_is("hosts 1\ntask x 1\ntask a 1\ntask b 1\ntask c 1\ntask y 1\n"
                    "edge x a 1\nedge c a 1\nedge a b 1\nedge b c 1\nedge c y 1\n",
                    "t.txt: cycle: a -> b -> c -> a");
    /* the same cycle listed from its last edge: still from a */
    expect_error_is("hosts 1\ntask a 1\ntask b 1\ntask c 1\n"
                    "edge c a 1\nedge b c 1\nedge a b 1\n",
                    "t.txt: cycle: a -> b -> c -> a");
    /* c is first in the file: the cycle starts there */
    expect_error_is("hosts 1\ntask c 1\ntask a 1\ntask b 1\n"
                    "edge a b 1\nedge b c 1\nedge c a 1\n",
                    "t.txt: cycle: c -> a -> b -> c");
    /* a task on two cycles: one of them, whole */
    expect_error_is("hosts 1\ntask a 1\ntask b 1\ntask c 1\n"
                    "edge a b 1\nedge b a 1\nedge a c 1\nedge c a 1\n",
                    "t.txt: cycle: a -> b -> a");
    /* 12 tasks: the first 7, then the last back to the first */
    char text[1024];
    size_t at = (size_t)snprintf(text, sizeof text, "hosts 1\n");
    for (int i = 0; i < 12; i++)
        at += (size_t)snprintf(text + at, sizeof text - at, "task t%d 1\n", i);
    for (int i = 0; i < 12; i++)
        at += (size_t)snprintf(text + at, sizeof text - at, "edge t%d t%d 1\n", i, (i + 1) % 12);
    expect_error_is(text, "t.txt: cycle of 12 tasks: t0 -> t1 -> t2 -> t3 -> t4 -> t5 -> t6 "
                          "-> ... -> t11 -> t0");
}

static void test_text_errors(void)
{
    expect_error("hosts 2\ntask a 1 2\ntask b 1 2\nedge a b 1\nedge b a 1\n",
                 "t.txt: cycle: a -> b -> a");
    expect_error("hosts 2\ntask a 1 2\nedge a zz 1\n", "t.txt:3: edge: unknown task 'zz'");
    expect_error("hosts 2\ntask a 1 2\ntask a 1 2\n", "t.txt:3: task: duplicate id 'a'");
    expect_error("hosts 2\ntask a 1 l2\n", "t.txt:2: task: malformed number 'l2'");
    expect_error("hosts 2\ntask a 1\n", "t.txt:2: task 'a': expected 2 numbers, got 1");
    expect_error("hosts 2\ntask a 1 2\nedge a a 1\n", "t.txt:3: edge 'a' -> 'a'");
    expect_error("hosts 2\ntask a 1 -2\n", "t.txt:2: task: negative value '-2'");
    expect_error("hosts x\n", "t.txt:1: hosts: expected one positive count");
    expect_error("task a 1\nhosts 2\n", "t.txt:2: hosts: must come before the first task");
    expect_error("# nothing\n", "t.txt:1: no tasks");
    expect_error("tsak a 1\n", "t.txt:1: unknown keyword 'tsak'");
    expect_error("hosts 1\ntask a 1\nedge a\n", "t.txt:3: edge: expected FROM TO COST");
}

static void test_its(void)
{
    /* a -> {b1,b2,b3} -> c -> d, and e twin of d (same inputs and outputs:
     * none) -> {d, e} is a set too; f alone after a */
    tb_flow *f = parse("task a 1\ntask b1 1\ntask b2 1\ntask b3 1\ntask c 1\ntask d 1\n"
                       "task e 1\ntask g 1\n"
                       "edge a b1 1\nedge a b2 1\nedge a b3 1\nedge b1 c 1\nedge b2 c 1\n"
                       "edge b3 c 1\nedge c d 1\nedge c e 1\nedge a g 1\n");
    TB_ASSERT(f != NULL);
    size_t nits = tb_flow_nits(f);
    long a = tb_flow_its_of(f, 0), b1 = tb_flow_its_of(f, 1), b3 = tb_flow_its_of(f, 3);
    long c = tb_flow_its_of(f, 4), d = tb_flow_its_of(f, 5), e = tb_flow_its_of(f, 6);
    long g = tb_flow_its_of(f, 7);
    size_t sz0 = tb_flow_its_size(f, 0), sz1 = tb_flow_its_size(f, 1);
    tb_flow_destroy(&f);
    TB_ASSERT_EQ_INT(nits, 2);
    TB_ASSERT_EQ_INT(a, -1);
    TB_ASSERT_EQ_INT(c, -1);
    TB_ASSERT_EQ_INT(g, -1); /* g has a's predecessors but not b's successors */
    TB_ASSERT_EQ_INT(b1, 0);
    TB_ASSERT_EQ_INT(b3, 0);
    TB_ASSERT_EQ_INT(d, 1);
    TB_ASSERT_EQ_INT(e, 1);
    TB_ASSERT_EQ_INT(sz0, 3);
    TB_ASSERT_EQ_INT(sz1, 2);
}

/* A random layered DAG with per-host costs (q hosts); identical hosts and
 * no communication when `plain`. */
static tb_flow *random_dag(uint64_t seed, size_t n, size_t q, int plain)
{
    tb_rng r;
    tb_rng_seed(&r, seed);
    tb_flow *f;
    if (tb_flow_create(&f, q))
        return NULL;
    double *c = malloc(q * sizeof *c);
    for (size_t t = 0; t < n; t++) {
        char id[32];
        snprintf(id, sizeof id, "t%zu", t);
        tb_flow_add_task(f, id, 0, NULL);
        double base = (double)(1 + tb_rng_below(&r, 20));
        for (size_t h = 0; h < q; h++)
            c[h] = plain ? base : (double)(1 + tb_rng_below(&r, 20));
        tb_flow_set_costs(f, t, c);
    }
    free(c);
    for (size_t t = 1; t < n; t++) {
        size_t k = tb_rng_below(&r, 4);
        for (size_t i = 0; i < k; i++) {
            size_t p = tb_rng_below(&r, t);
            tb_flow_add_edge(f, p, t, plain ? 0 : (double)tb_rng_below(&r, 30));
        }
    }
    if (tb_flow_finalize(f)) {
        tb_flow_destroy(&f);
        return NULL;
    }
    return f;
}

/* Longest path with every task at its fastest host and no communication. */
static double critical_path(const tb_flow *f, const tb_flow_hosts *H)
{
    double *best = calloc(f->n, sizeof *best), cp = 0;
    for (size_t i = 0; i < f->n; i++) {
        uint32_t t = f->topo[i];
        double w = INFINITY, ready = 0;
        for (size_t h = 0; h < H->nhosts; h++) {
            double d = tb__flow_exec(f, H, t, h);
            w = d < w ? d : w;
        }
        for (size_t k = f->poff[t]; k < f->poff[t + 1]; k++)
            ready = best[f->pred[k]] > ready ? best[f->pred[k]] : ready;
        best[t] = ready + w;
        cp = best[t] > cp ? best[t] : cp;
    }
    free(best);
    return cp;
}

static void test_random_properties(void)
{
    int bad = 0, cases = 0;
    for (uint64_t seed = 1; seed <= 30; seed++) {
        int plain = seed % 3 == 0;
        size_t q = 2 + seed % 5, n = 20 + (size_t)seed * 7;
        tb_flow *f = random_dag(seed, n, q, plain);
        TB_ASSERT(f != NULL);
        tb_flow_hosts H;
        TB_ASSERT_OK(tb_flow_hosts_init(&H, f, NULL));
        double cp = critical_path(f, &H), work = 0;
        for (size_t t = 0; t < n; t++)
            work += tb__flow_exec(f, &H, t, 0);
        tb_flow_schedule s;
        TB_ASSERT_OK(tb_flow_schedule_init(&s, n, q));
        for (size_t i = 0; tb_flow_sched_get(i); i++) {
            const tb_flow_sched_ops *ops = tb_flow_sched_get(i);
            char err[256];
            cases++;
            if (ops->schedule(f, &H, NULL, seed, &s) != TB_OK ||
                tb_flow_schedule_check(f, &H, &s, err, sizeof err) != TB_OK) {
                printf("    seed %llu %s: %s\n", (unsigned long long)seed, ops->name, err);
                bad++;
                continue;
            }
            double lo = cp;
            if (plain && work / (double)q > lo)
                lo = work / (double)q;
            if (s.makespan < lo * (1 - 1e-12)) {
                printf("    seed %llu %s: makespan %g below bound %g\n",
                       (unsigned long long)seed, ops->name, s.makespan, lo);
                bad++;
            }
            /* Graham: greedy list schedules on identical hosts without
             * communication end by work/P + (1 - 1/P) critical path */
            double graham = work / (double)q + (1.0 - 1.0 / (double)q) * cp;
            if (plain && strcmp(ops->name, "heft") == 0 && s.makespan > graham * (1 + 1e-12)) {
                printf("    seed %llu %s: makespan %g above Graham's bound %g\n",
                       (unsigned long long)seed, ops->name, s.makespan, graham);
                bad++;
            }
        }
        tb_flow_schedule_free(&s);
        tb_flow_hosts_free(&H);
        tb_flow_destroy(&f);
    }
    TB_ASSERT(cases > 100);
    TB_ASSERT_EQ_INT(bad, 0);
}

static void test_sim_static(void)
{
    /* constant speeds, no reschedule: the run is the plan */
    tb_flow *f = parse(topcuoglu);
    TB_ASSERT(f != NULL);
    tb_platform *p = NULL;
    TB_ASSERT_OK(tb_platform_parse_spec("hosts=3,speed=1", 1, &p, NULL, 0));
    tb_flow_sim_result res;
    tb_flow_schedule s;
    TB_ASSERT_OK(tb_flow_schedule_init(&s, 10, 3));
    tb_flow_sim_opts o;
    tb_flow_sim_opts_init(&o);
    o.sched = tb_flow_sched_find("heft");
    o.trigger = "perf-changed";
    int rc = tb_flow_simulate(f, p, &o, &res, &s, NULL, 0);
    o.sched = tb_flow_sched_find("cpop");
    tb_flow_sim_result rc2;
    int rcb = tb_flow_simulate(f, p, &o, &rc2, NULL, NULL, 0);
    tb_flow_hosts H;
    tb_flow_hosts_init(&H, f, p);
    char err[256] = "";
    int chk = tb_flow_schedule_check(f, &H, &s, err, sizeof err);
    tb_flow_hosts_free(&H);
    tb_flow_schedule_free(&s);
    tb_platform_destroy(&p);
    tb_flow_destroy(&f);
    TB_ASSERT_OK(rc);
    TB_ASSERT_OK(rcb);
    TB_ASSERT_NEAR(res.makespan, 80.0, 1e-9);
    TB_ASSERT_NEAR(res.planned, 80.0, 1e-9);
    TB_ASSERT_NEAR(rc2.makespan, 86.0, 1e-9);
    TB_ASSERT_EQ_INT(res.reschedules, 0);
    TB_ASSERT_EQ_INT(res.speed_changes, 0);
    if (chk)
        printf("    %s\n", err);
    TB_ASSERT_OK(chk);
}

/* A fixed cost per task: a chain of three tasks of work 1 on one host of
 * speed 2 takes 3 x (0.25 + 0.5); the plan and the check count it too. */
static void test_sim_task_overhead(void)
{
    tb_flow *f = parse("task a 1\ntask b 1\ntask c 1\nedge a b 0\nedge b c 0\n");
    TB_ASSERT(f != NULL);
    tb_platform *p = NULL;
    TB_ASSERT_OK(tb_platform_parse_spec("hosts=1,speed=2", 1, &p, NULL, 0));
    tb_flow_sim_result res;
    tb_flow_schedule s;
    TB_ASSERT_OK(tb_flow_schedule_init(&s, 3, 1));
    tb_flow_sim_opts o;
    tb_flow_sim_opts_init(&o);
    o.trigger = "task-finished";
    o.task_overhead = 0.25;
    int rc = tb_flow_simulate(f, p, &o, &res, &s, NULL, 0);
    tb_flow_hosts H;
    tb_flow_hosts_init(&H, f, p);
    H.task_overhead = 0.25;
    char err[256] = "";
    int chk = tb_flow_schedule_check(f, &H, &s, err, sizeof err);
    o.task_overhead = -1;
    tb_flow_sim_result bad;
    int rcneg = tb_flow_simulate(f, p, &o, &bad, NULL, NULL, 0);
    tb_flow_hosts_free(&H);
    tb_flow_schedule_free(&s);
    tb_platform_destroy(&p);
    tb_flow_destroy(&f);
    TB_ASSERT_OK(rc);
    TB_ASSERT(res.makespan == 2.25);
    TB_ASSERT(res.planned == 2.25);
    if (chk)
        printf("    %s\n", err);
    TB_ASSERT_OK(chk);
    TB_ASSERT(rcneg != TB_OK);
}

static void test_generator(void)
{
    tb_flow_gen_opts o;
    tb_flow_gen_opts_init(&o);
    tb_flow *a = NULL, *b = NULL;
    TB_ASSERT_OK(tb_flow_generate(&o, 7, &a));
    TB_ASSERT_OK(tb_flow_generate(&o, 7, &b));
    size_t n = tb_flow_ntasks(a), m = tb_flow_nedges(a), nits = tb_flow_nits(a);
    int same = n == tb_flow_ntasks(b) && m == tb_flow_nedges(b);
    double wa = 0, wb = 0, lo = INFINITY, hi = 0;
    for (size_t t = 0; same && t < n; t++) {
        wa += tb_flow_task_work(a, t);
        wb += tb_flow_task_work(b, t);
        lo = fmin(lo, tb_flow_task_work(a, t));
        hi = fmax(hi, tb_flow_task_work(a, t));
    }
    size_t big = 0, entries = 0, exits = 0;
    for (size_t i = 0; i < nits; i++)
        big += tb_flow_its_size(a, i) >= 100;
    for (size_t t = 0; t < n; t++) {
        entries += a->poff[t + 1] == a->poff[t];
        exits += a->soff[t + 1] == a->soff[t];
    }
    tb_flow_destroy(&a);
    tb_flow_destroy(&b);
    TB_ASSERT(same);
    TB_ASSERT(wa == wb);
    TB_ASSERT(n > 1000 && n <= 1100);
    TB_ASSERT(big >= 1);
    TB_ASSERT(lo >= 100 && hi <= 200);
    TB_ASSERT_EQ_INT(entries, 1);
    TB_ASSERT_EQ_INT(exits, 1);
}

/* Tasks a and b have the same predecessors and the same successors. */
static int same_neighbours(const tb_flow *f, size_t a, size_t b)
{
    size_t np = f->poff[a + 1] - f->poff[a], ns = f->soff[a + 1] - f->soff[a];
    return np == f->poff[b + 1] - f->poff[b] && ns == f->soff[b + 1] - f->soff[b] &&
           !memcmp(f->pred + f->poff[a], f->pred + f->poff[b], np * sizeof *f->pred) &&
           !memcmp(f->succ + f->soff[a], f->succ + f->soff[b], ns * sizeof *f->succ);
}

/* Check G's generated sets against S's structural ones (same network);
 * return 1 if S has more tasks in sets. */
static int check_generated_sets(const tb_flow *G, const tb_flow *S, size_t its_size, int *badp)
{
    int bad = 0;
    size_t n = tb_flow_ntasks(G);
    size_t in_g = 0, in_s = 0, prev_first = 0;
    for (size_t t = 0; t < n; t++) {
        in_g += tb_flow_its_of(G, t) >= 0;
        in_s += tb_flow_its_of(S, t) >= 0;
    }
    size_t counted = 0;
    for (size_t i = 0; i < tb_flow_nits(G); i++) {
        size_t first = n, size = tb_flow_its_size(G, i);
        counted += size;
        for (size_t t = 0; t < n && first == n; t++)
            if (tb_flow_its_of(G, t) == (long)i)
                first = t;
        bad += size != its_size || first == n || first + size > n;
        bad += i > 0 && first <= prev_first; /* numbered by their smallest task */
        prev_first = first;
        for (size_t t = first; t < first + size && t < n; t++) {
            bad += tb_flow_its_of(G, t) != (long)i;
            bad += !same_neighbours(G, first, t);
            bad += tb_flow_its_of(S, t) < 0 || tb_flow_its_of(S, t) != tb_flow_its_of(S, first);
        }
    }
    bad += counted != in_g;
    bad += in_g > in_s;
    *badp += bad;
    return in_g < in_s;
}

/* TB_FLOW_SETS_GENERATED: the same tasks and edges as STRUCTURAL, but the
 * sets are the data-parallel ones: each of exactly its_size consecutive
 * tasks with the same predecessors and successors, each inside one
 * structural set, every task in at most one; twins that the structural
 * definition merges stay out.  With either data-parallel draw. */
static void test_generated_sets(void)
{
    tb_flow_gen_opts o;
    tb_flow_gen_opts_init(&o);
    TB_ASSERT_EQ_INT(o.sets, TB_FLOW_SETS_STRUCTURAL);
    o.tasks = 60;
    o.its_size = 5;
    int bad = 0, differ = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        tb_flow *S = NULL, *G = NULL;
        o.dp_draw_any = seed > 20; /* both readings of the data-parallel draw */
        o.sets = TB_FLOW_SETS_STRUCTURAL;
        TB_ASSERT_OK(tb_flow_generate(&o, seed, &S));
        o.sets = TB_FLOW_SETS_GENERATED;
        TB_ASSERT_OK(tb_flow_generate(&o, seed, &G));
        size_t n = tb_flow_ntasks(G);
        if (n != tb_flow_ntasks(S) || tb_flow_nedges(G) != tb_flow_nedges(S) ||
            memcmp(G->succ, S->succ, G->m * sizeof *G->succ) ||
            memcmp(G->work, S->work, n * sizeof *G->work))
            bad++;
        else
            differ += check_generated_sets(G, S, o.its_size, &bad);
        tb_flow_destroy(&S);
        tb_flow_destroy(&G);
    }
    TB_ASSERT_EQ_INT(bad, 0);
    TB_ASSERT(differ > 0); /* some twin joined a set structurally */
    o.dp_draw_any = 0;
    o.sets = (tb_flow_gen_sets)7;
    tb_flow *f = NULL;
    TB_ASSERT_EQ_INT(tb_flow_generate(&o, 1, &f), TB_ERR_RANGE);
    TB_ASSERT(f == NULL);

    /* the simulator runs its-finished on the generated sets: never more
     * often than task-finished */
    o.sets = TB_FLOW_SETS_GENERATED;
    o.tasks = 300;
    o.its_size = 30;
    tb_platform *p = NULL;
    TB_ASSERT_OK(tb_flow_generate(&o, 3, &f));
    TB_ASSERT_OK(tb_flow_gen_platform(16, 10, 3, &p));
    tb_flow_sim_opts so;
    tb_flow_sim_opts_init(&so);
    so.trigger = "its-finished";
    so.seed = 3;
    tb_flow_sim_result its, task;
    TB_ASSERT_OK(tb_flow_simulate(f, p, &so, &its, NULL, NULL, 0));
    so.trigger = "task-finished";
    TB_ASSERT_OK(tb_flow_simulate(f, p, &so, &task, NULL, NULL, 0));
    size_t nits = tb_flow_nits(f);
    tb_platform_destroy(&p);
    tb_flow_destroy(&f);
    printf("    %zu generated sets: reschedules its-finished %ld, task-finished %ld\n", nits,
           its.reschedules, task.reschedules);
    TB_ASSERT(nits >= 1);
    TB_ASSERT(its.reschedules <= task.reschedules);
}

static int cmp_start(const void *a, const void *b)
{
    const double *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Tasks that overlap on a host (each task done exactly once: every task
 * has a host and a finish after its start). */
static int host_overlaps(const tb_flow_schedule *s)
{
    int bad = 0;
    double *iv = malloc(s->ntasks * 2 * sizeof *iv);
    for (size_t h = 0; h < s->nhosts; h++) {
        size_t n = 0;
        for (size_t t = 0; t < s->ntasks; t++) {
            if (s->host[t] < 0 || !(s->finish[t] >= s->start[t]))
                bad += h == 0;
            if (s->host[t] == (int32_t)h) {
                iv[2 * n] = s->start[t];
                iv[2 * n + 1] = s->finish[t];
                n++;
            }
        }
        qsort(iv, n, 2 * sizeof *iv, cmp_start);
        for (size_t i = 1; i < n; i++)
            bad += iv[2 * i] < iv[2 * i - 1];
    }
    free(iv);
    return bad;
}

/* On generated networks under S2's load: counts its <= task <= perf,
 * runs are bit-reproducible, every run respects the dependencies. */
static void test_triggers(void)
{
    tb_flow_gen_opts o;
    tb_flow_gen_opts_init(&o);
    o.tasks = 300;
    o.its_size = 30;
    const char *trig[] = {"static", "perf-changed", "task-finished", "its-finished",
                          "perf-changed-every:5"};
    int bad = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        tb_flow *f = NULL;
        tb_platform *p = NULL;
        TB_ASSERT_OK(tb_flow_generate(&o, seed, &f));
        TB_ASSERT_OK(tb_flow_gen_platform(16, 50, seed, &p));
        tb_flow_sim_result r[5], again;
        tb_flow_schedule s;
        TB_ASSERT_OK(tb_flow_schedule_init(&s, tb_flow_ntasks(f), 16));
        for (int i = 0; i < 5; i++) {
            tb_flow_sim_opts so;
            tb_flow_sim_opts_init(&so);
            so.trigger = trig[i];
            so.seed = seed;
            char err[256] = "";
            if (tb_flow_simulate(f, p, &so, &r[i], &s, err, sizeof err) != TB_OK) {
                printf("    %s: %s\n", trig[i], err);
                bad++;
                continue;
            }
            /* dependencies and one task at a time per host, in real times */
            for (size_t t = 0; t < f->n; t++)
                for (size_t k = f->poff[t]; k < f->poff[t + 1]; k++)
                    if (s.start[t] < s.finish[f->pred[k]])
                        bad++;
            bad += host_overlaps(&s);
        }
        tb_flow_sim_opts so;
        tb_flow_sim_opts_init(&so);
        so.trigger = "task-finished";
        so.seed = seed;
        TB_ASSERT_OK(tb_flow_simulate(f, p, &so, &again, NULL, NULL, 0));
        if (memcmp(&again.makespan, &r[2].makespan, sizeof again.makespan) ||
            again.reschedules != r[2].reschedules)
            bad++;
        printf("    seed %llu: makespan static %.1f perf %.1f task %.1f its %.1f every5 %.1f; "
               "reschedules %ld %ld %ld %ld, changes %ld\n",
               (unsigned long long)seed, r[0].makespan, r[1].makespan, r[2].makespan,
               r[3].makespan, r[4].makespan, r[1].reschedules, r[2].reschedules,
               r[3].reschedules, r[4].reschedules, r[1].speed_changes);
        if (!(r[3].reschedules <= r[2].reschedules && r[2].reschedules <= r[1].reschedules))
            bad++;
        if (r[0].reschedules != 0 || r[1].reschedules != r[1].speed_changes)
            bad++;
        tb_flow_schedule_free(&s);
        tb_platform_destroy(&p);
        tb_flow_destroy(&f);
    }
    TB_ASSERT_EQ_INT(bad, 0);
}

/* A diamond a -> b, c -> d and a lone e, for the resume logs. */
static const char resume_flow[] = "task a 1\ntask b 1\ntask c 1\ntask d 1\ntask e 1\n"
                                  "edge a b 0\nedge a c 0\nedge b d 0\nedge c d 0\n";

/* The log must be refused with code and exactly message, leaving out empty. */
static void expect_resume_error(const tb_flow *f, const char *log, int code, const char *message)
{
    tb__flow_resume r;
    char err[512] = "";
    int rc = tb__flow_resume_parse(f, log, strlen(log), "log.json", &r, err, sizeof err);
    if (rc != code || strcmp(err, message) != 0)
        printf("    for %s\n    got %s '%s'\n", log, tb_strerror(rc), err);
    TB_ASSERT_EQ_INT(rc, code);
    TB_ASSERT_STR_EQ(err, message);
    TB_ASSERT(r.work_dir == NULL && r.rank == NULL && r.ndone == 0);
}

static void test_resume_log(void)
{
    tb_flow *f = parse(resume_flow);
    TB_ASSERT(f != NULL);
    /* a success, a failure retried with success, a kill, a success with a
     * signal (not one), a failed task no longer in the workflow */
    static const char good[] =
        "{\"workflow\": \"t.txt\", \"work_dir\": \"/old/run\", \"shared_fs\": false,\n"
        " \"tasks\": [\n"
        "  {\"task\": \"a\", \"rank\": 1, \"host\": \"h\", \"start\": 0, \"end\": 1, \"exit\": 0,"
        " \"attempt\": 1},\n"
        "  {\"task\": \"b\", \"rank\": 0, \"exit\": 1, \"attempt\": 1, \"error\": \"no\"},\n"
        "  {\"task\": \"c\", \"rank\": 2, \"exit\": null, \"signal\": 9, \"attempt\": 1},\n"
        "  {\"task\": \"b\", \"rank\": 2, \"exit\": 0, \"attempt\": 2},\n"
        "  {\"task\": \"e\", \"rank\": 0, \"exit\": 0, \"signal\": 15, \"attempt\": 1},\n"
        "  {\"task\": \"gone\", \"rank\": 0, \"exit\": 3, \"attempt\": 1}]}\n";
    tb__flow_resume r;
    char err[512] = "";
    int rc = tb__flow_resume_parse(f, good, strlen(good), "log.json", &r, err, sizeof err);
    if (rc)
        printf("    %s\n", err);
    TB_ASSERT_OK(rc);
    int want[5] = {1, 2, -1, -1, -1}, ok = strcmp(r.work_dir, "/old/run") == 0 && r.ndone == 2;
    for (size_t t = 0; t < 5; t++)
        ok &= r.rank[t] == want[t];
    tb__flow_resume_free(&r);
    TB_ASSERT(ok);
    TB_ASSERT(r.work_dir == NULL && r.rank == NULL);
    /* a later success of the same task counts, a later failure does not undo it */
    static const char again[] = "{\"work_dir\": \"w\", \"tasks\": [\n"
                                "{\"task\": \"d\", \"rank\": 1, \"exit\": 0},\n"
                                "{\"task\": \"d\", \"rank\": 3, \"exit\": 0},\n"
                                "{\"task\": \"d\", \"rank\": 0, \"exit\": 2}]}";
    TB_ASSERT_OK(tb__flow_resume_parse(f, again, strlen(again), "log.json", &r, err, sizeof err));
    ok = r.rank[3] == 3 && r.ndone == 1;
    tb__flow_resume_free(&r);
    TB_ASSERT(ok);

    const int P = TB_ERR_PARSE;
    const char *nolog = "log.json: not a log of tenbin flow run (a JSON object with work_dir and "
                        "tasks): ";
    char want_msg[256];
    expect_resume_error(f, "", P, "log.json: not JSON (near line 1)");
    expect_resume_error(f, "{\"work_dir\": \"w\",\n\"tasks\": [}", P,
                        "log.json: not JSON (near line 2)");
    expect_resume_error(f, "{\"work_dir\": \"w\", \"tasks\": []} x", P,
                        "log.json: not JSON (near line 1)");
    snprintf(want_msg, sizeof want_msg, "%sno work_dir", nolog);
    expect_resume_error(f, "{\"tasks\": []}", P, want_msg);
    snprintf(want_msg, sizeof want_msg, "%stasks: expected an array, got a number", nolog);
    expect_resume_error(f, "{\"work_dir\": \"w\", \"tasks\": 3}", P, want_msg);
    snprintf(want_msg, sizeof want_msg, "%swork_dir: expected a directory, got an empty string",
             nolog);
    expect_resume_error(f, "{\"work_dir\": \"\", \"tasks\": []}", P, want_msg);
    snprintf(want_msg, sizeof want_msg, "%sgot an array", nolog);
    expect_resume_error(f, "[{\"work_dir\": \"w\", \"tasks\": []}]", P, want_msg);
#define LOG(attempts) "{\"work_dir\": \"w\", \"tasks\": [{\"task\": \"a\", \"rank\": 0, " \
                      "\"exit\": 0}, " attempts "]}"
    expect_resume_error(f, LOG("{\"task\": \"b\", \"rank\": 2.5, \"exit\": 0}"), P,
                        "log.json: tasks[1].rank: expected a whole number >= 0, got 2.5");
    expect_resume_error(f, LOG("{\"task\": \"b\", \"rank\": -1, \"exit\": 0}"), P,
                        "log.json: tasks[1].rank: expected a whole number >= 0, got -1");
    expect_resume_error(f, LOG("{\"task\": \"b\", \"rank\": 1e300, \"exit\": 0}"), P,
                        "log.json: tasks[1].rank: 1e+300 is too large (at most 2147483647)");
    expect_resume_error(f, LOG("{\"task\": \"b\", \"rank\": \"1\", \"exit\": 0}"), P,
                        "log.json: tasks[1].rank: expected a whole number >= 0, got a string");
    expect_resume_error(f, LOG("{\"task\": \"b\", \"exit\": 0}"), P,
                        "log.json: tasks[1]: no task or rank");
    expect_resume_error(f, LOG("{\"task\": 7, \"rank\": 0, \"exit\": 0}"), P,
                        "log.json: tasks[1].task: expected a string, got a number");
    expect_resume_error(f, LOG("{\"task\": \"b\", \"rank\": 0, \"exit\": 0.5}"), P,
                        "log.json: tasks[1].exit: expected a whole number or null, got 0.5");
    expect_resume_error(f, LOG("{\"task\": \"b\", \"rank\": 0, \"exit\": \"0\"}"), P,
                        "log.json: tasks[1].exit: expected a whole number or null, got a string");
    expect_resume_error(f, LOG("{\"task\": \"b\", \"rank\": 0}"), P, "log.json: tasks[1]: no exit");
    expect_resume_error(f, LOG("{\"task\": \"b\", \"rank\": 0, \"exit\": null, \"signal\": true}"),
                        P, "log.json: tasks[1].signal: expected a whole number, got a boolean");
    expect_resume_error(f, LOG("[1]"), P, "log.json: tasks[1]: expected an object, got an array");
    expect_resume_error(f, LOG("{\"task\": \"zz\", \"rank\": 0, \"exit\": 0}"), TB_ERR_INVALID,
                        "log.json: task 'zz' is not in t.txt");
    expect_resume_error(f, LOG("{\"task\": \"z\\nz\", \"rank\": 0, \"exit\": 0}"), TB_ERR_INVALID,
                        "log.json: task 'z?z' is not in t.txt");
#undef LOG
    tb_flow_destroy(&f);
}

/* The results of flow simulate and flow run as JSON: they parse, NaN and
 * infinities are null, the caller's members come first, a key of the
 * result cannot come twice. */
static void test_result_json(void)
{
    tb_flow_sim_result sr;
    memset(&sr, 0, sizeof sr);
    sr.makespan = 80;
    sr.planned = NAN;
    sr.sched_cpu_s = INFINITY;
    sr.reschedules = 3;
    tb_buf b = TB_BUF_INIT;
    TB_ASSERT_OK(tb_flow_sim_result_json(&sr, "{\"algo\": \"heft\", \"hosts\": [1, 2]}", &b));
    TB_ASSERT_OK(tb_buf_append(&b, "", 1));
    const char *t = (const char *)b.data;
    TB_ASSERT(strstr(t, "{\"algo\": \"heft\", \"hosts\": [1, 2], \"makespan\": 80, ") == t);
    cJSON *j = cJSON_Parse(t);
    TB_ASSERT(j != NULL);
    TB_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(j, "planned")));
    TB_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(j, "sched_cpu_s")));
    TB_ASSERT(cJSON_GetObjectItem(j, "reschedules")->valuedouble == 3);
    cJSON_Delete(j);
    TB_ASSERT_EQ_INT(tb_flow_sim_result_json(&sr, "{\"makespan\": 1}", &b), TB_ERR_INVALID);

    tb_flow_run_result rr;
    memset(&rr, 0, sizeof rr);
    rr.makespan = 1.5;
    rr.net_L = NAN;
    rr.net_G = -INFINITY;
    rr.failed_task = -1;
    tb_buf_clear(&b);
    TB_ASSERT_OK(tb_flow_run_result_json(&rr, NULL, &b));
    TB_ASSERT_OK(tb_buf_append(&b, "", 1));
    j = cJSON_Parse((const char *)b.data);
    TB_ASSERT(j != NULL);
    TB_ASSERT(cJSON_GetObjectItem(j, "makespan_s")->valuedouble == 1.5);
    TB_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(j, "net_L_s")));
    TB_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(j, "net_G_s_per_byte")));
    TB_ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(j, "failed")));
    cJSON_Delete(j);
    rr.failed_task = 4;
    tb_buf_clear(&b);
    TB_ASSERT_OK(tb_flow_run_result_json(&rr, "{}", &b));
    TB_ASSERT_OK(tb_buf_append(&b, "", 1));
    TB_ASSERT(strstr((const char *)b.data, "\"failed\": true}") != NULL);
    tb_buf_free(&b);
}

static const tb_test tests[] = {
    {"check_zero_work", test_check_zero_work},
    {"sim_static", test_sim_static},
    {"sim_task_overhead", test_sim_task_overhead},
    {"generator", test_generator},
    {"generated_sets", test_generated_sets},
    {"triggers", test_triggers},
    {"topcuoglu", test_topcuoglu},
    {"text_errors", test_text_errors},
    {"cycle_message", test_cycle_message},
    {"its", test_its},
    {"random_properties", test_random_properties},
    {"resume_log", test_resume_log},
    {"result_json", test_result_json},
    {NULL, NULL},
};

TB_TEST_MAIN(tests)
