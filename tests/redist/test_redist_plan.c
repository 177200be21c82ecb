/*
 * test_redist_plan.c - S4's planning without MPI: the partition by speed
 * (known answers and a brute-force optimum), imbalance, the transfer cost
 * fit, the moves between two layouts, and the pay-off decision's edge cases.
 */
#define _POSIX_C_SOURCE 200809L
#include "tenbin/redist.h"

#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../tb_test.h"
#include "redist/balance.h"
#include "tenbin/core.h"

static void test_partition_known(void)
{
    uint64_t c[4];
    const double s4[] = {1, 1, 1, 0.5};
    TB_ASSERT_OK(tb_redist_partition(126, 4, s4, 0, c));
    TB_ASSERT(c[0] == 36 && c[1] == 36 && c[2] == 36 && c[3] == 18);
    const double s3[] = {1, 1, 0.5};
    TB_ASSERT_OK(tb_redist_partition(62, 3, s3, 0, c));
    TB_ASSERT(c[0] == 25 && c[1] == 25 && c[2] == 12);
    /* Equal speeds: the remainder goes to the lowest ranks. */
    const double e[] = {2, 2, 2};
    TB_ASSERT_OK(tb_redist_partition(128, 3, e, 0, c));
    TB_ASSERT(c[0] == 43 && c[1] == 43 && c[2] == 42);
    /* A rank of speed 0 keeps only its floor. */
    const double z[] = {1, 0, 1};
    TB_ASSERT_OK(tb_redist_partition(10, 3, z, 2, c));
    TB_ASSERT(c[0] == 4 && c[1] == 2 && c[2] == 4);
    /* Huge counts stay exact. */
    const double h[] = {3, 1, 1};
    TB_ASSERT_OK(tb_redist_partition(1000000000000ULL, 3, h, 1, c));
    TB_ASSERT_EQ_U64(c[0] + c[1] + c[2], 1000000000000ULL);
    TB_ASSERT_EQ_U64(c[0], 600000000000ULL);
}

static void test_partition_errors(void)
{
    uint64_t c[3];
    const double ok[] = {1, 1, 1};
    const double neg[] = {1, -1, 1};
    const double nan_[] = {1, NAN, 1};
    const double zero[] = {0, 0, 0};
    TB_ASSERT_EQ_INT(tb_redist_partition(10, 0, ok, 0, c), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_redist_partition(10, 3, NULL, 0, c), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_redist_partition(10, 3, neg, 0, c), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_redist_partition(10, 3, nan_, 0, c), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_redist_partition(10, 3, zero, 0, c), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_redist_partition(5, 3, ok, 2, c), TB_ERR_RANGE);
    TB_ASSERT_OK(tb_redist_partition(6, 3, ok, 2, c));
    TB_ASSERT(c[0] == 2 && c[1] == 2 && c[2] == 2);
}

/* The best max_i c_i / s_i over every composition of n into P parts >= min. */
static double brute(uint64_t n, int P, const double *s, uint64_t min, uint64_t *c, int i)
{
    if (i == P - 1) {
        if (n < min)
            return INFINITY;
        c[i] = n;
        return s[i] > 0 ? (double)n / s[i] : (n ? INFINITY : 0);
    }
    double best = INFINITY;
    for (uint64_t k = min; k + min * (uint64_t)(P - 1 - i) <= n; k++) {
        double t = s[i] > 0 ? (double)k / s[i] : (k ? INFINITY : 0);
        double rest = brute(n - k, P, s, min, c, i + 1);
        double m = t > rest ? t : rest;
        best = m < best ? m : best;
    }
    return best;
}

static void test_partition_optimal(void)
{
    tb_rng r;
    tb_rng_seed(&r, 11);
    int ok = 1;
    for (int trial = 0; trial < 400 && ok; trial++) {
        int P = 1 + (int)tb_rng_below(&r, 4);
        uint64_t min = tb_rng_below(&r, 3);
        uint64_t n = (uint64_t)P * min + tb_rng_below(&r, 20);
        double s[4];
        for (int i = 0; i < P; i++)
            s[i] = 0.25 * (double)tb_rng_below(&r, 13); /* 0 .. 3 */
        if (s[0] == 0)
            s[0] = 1;
        uint64_t c[4], tmp[4];
        if (tb_redist_partition(n, P, s, min, c) != TB_OK) {
            ok = 0;
            break;
        }
        uint64_t sum = 0;
        double got = 0;
        for (int i = 0; i < P; i++) {
            sum += c[i];
            ok &= c[i] >= min;
            double t = s[i] > 0 ? (double)c[i] / s[i] : (c[i] > min ? INFINITY : 0);
            got = t > got ? t : got;
        }
        /* brute() gives speed-0 ranks nothing beyond min, like the plan. */
        double want = brute(n, P, s, min, tmp, 0);
        ok &= sum == n && fabs(got - want) <= 1e-12 * (want > 1 ? want : 1);
        if (!ok)
            printf("    n=%llu P=%d min=%llu: max time %g, optimum %g\n", (unsigned long long)n, P,
                   (unsigned long long)min, got, want);
    }
    TB_ASSERT(ok);
}

static void test_imbalance(void)
{
    double mx, av;
    const double t[] = {1, 1, 2};
    TB_ASSERT_OK(tb_redist_imbalance(t, 3, &mx, &av));
    TB_ASSERT_NEAR(mx, 1.5, 1e-15);
    TB_ASSERT_NEAR(av, 2.0 / 3.0, 1e-15);
    const double empty[] = {0, 2};
    TB_ASSERT_OK(tb_redist_imbalance(empty, 2, &mx, &av));
    TB_ASSERT_NEAR(mx, 2.0, 0);
    TB_ASSERT_NEAR(av, 0.5, 0);
    const double none[] = {0, 0};
    TB_ASSERT_OK(tb_redist_imbalance(none, 2, &mx, &av));
    TB_ASSERT(mx == 1 && av == 1);
    const double bad[] = {1, -1};
    TB_ASSERT_EQ_INT(tb_redist_imbalance(bad, 2, &mx, &av), TB_ERR_INVALID);
}

static void test_cost_fit(void)
{
    tb_redist_cost m;
    memset(&m, 0, sizeof m);
    const double x[] = {1e3, 1e5, 1e7};
    double y[3];
    for (int i = 0; i < 3; i++)
        y[i] = 20e-6 + 1e-9 * x[i];
    TB_ASSERT_OK(tb_redist_cost_fit(&m, x, y, 3));
    TB_ASSERT_NEAR(m.a, 20e-6, 1e-15);
    TB_ASSERT_NEAR(m.b, 1e-9, 1e-20);
    TB_ASSERT_NEAR(tb_redist_cost_predict(&m, 5e6), 20e-6 + 5e-3, 1e-12);
    /* Real moves refresh the fit: ten transfers on a slower network pull
     * the slope up. */
    for (int i = 0; i < 10; i++)
        TB_ASSERT_OK(tb_redist_cost_add(&m, 1e7, 20e-6 + 4e-9 * 1e7));
    TB_ASSERT_EQ_U64(m.n, 13);
    TB_ASSERT(m.b > 2e-9);
    /* Noise that makes time fall with size: a constant, the mean. */
    const double yn[] = {3e-5, 2e-5, 1e-5};
    TB_ASSERT_OK(tb_redist_cost_fit(&m, x, yn, 3));
    TB_ASSERT(m.b == 0);
    TB_ASSERT_NEAR(m.a, 2e-5, 1e-18);
    /* A negative intercept: the line through the origin. */
    const double yo[] = {0, 0.9e-4, 1e-2};
    TB_ASSERT_OK(tb_redist_cost_fit(&m, x, yo, 3));
    TB_ASSERT(m.a == 0 && m.b > 0);
    /* One size only, too few points, negative times: refused. */
    const double same[] = {1e3, 1e3, 1e3};
    TB_ASSERT_EQ_INT(tb_redist_cost_fit(&m, same, y, 3), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_redist_cost_fit(&m, x, y, 1), TB_ERR_INVALID);
    const double yneg[] = {1, -1, 1};
    TB_ASSERT_EQ_INT(tb_redist_cost_fit(&m, x, yneg, 3), TB_ERR_INVALID);
}

static void test_moves(void)
{
    tb_redist_move mv[8];
    size_t n = 0;
    const uint64_t a[] = {10, 10, 10}, b[] = {5, 10, 15};
    TB_ASSERT_OK(tb_redist_moves(3, a, b, mv, 8, &n));
    TB_ASSERT(n == 2);
    TB_ASSERT(mv[0].from == 0 && mv[0].to == 1 && mv[0].first == 5 && mv[0].count == 5);
    TB_ASSERT(mv[1].from == 1 && mv[1].to == 2 && mv[1].first == 15 && mv[1].count == 5);
    const uint64_t all0[] = {30, 0, 0}, all2[] = {0, 0, 30};
    TB_ASSERT_OK(tb_redist_moves(3, all0, all2, mv, 8, &n));
    TB_ASSERT(n == 1 && mv[0].from == 0 && mv[0].to == 2 && mv[0].count == 30);
    TB_ASSERT_OK(tb_redist_moves(3, a, a, mv, 8, &n));
    TB_ASSERT(n == 0);
    const uint64_t more[] = {10, 10, 11};
    TB_ASSERT_EQ_INT(tb_redist_moves(3, a, more, mv, 8, &n), TB_ERR_INVALID);
    /* Random layouts: at most 2P-2 runs, and applying them to the owner of
     * every unit gives the new layout. */
    tb_rng r;
    tb_rng_seed(&r, 5);
    int ok = 1;
    for (int trial = 0; trial < 300 && ok; trial++) {
        enum { P = 5, N = 40 };
        uint64_t c[P] = {0}, d[P] = {0};
        for (int u = 0; u < N; u++) {
            c[tb_rng_below(&r, P)]++;
            d[tb_rng_below(&r, P)]++;
        }
        tb_redist_move m2[2 * P];
        TB_ASSERT_OK(tb_redist_moves(P, c, d, m2, 2 * P, &n));
        int own[N], want[N];
        for (int i = 0, u = 0; i < P; i++)
            for (uint64_t k = 0; k < c[i]; k++)
                own[u++] = i;
        for (int i = 0, u = 0; i < P; i++)
            for (uint64_t k = 0; k < d[i]; k++)
                want[u++] = i;
        ok &= n <= 2 * P - 2;
        for (size_t i = 0; i < n && ok; i++)
            for (uint64_t u = m2[i].first; u < m2[i].first + m2[i].count; u++) {
                ok &= own[u] == m2[i].from;
                own[u] = m2[i].to;
            }
        ok &= memcmp(own, want, sizeof own) == 0;
    }
    TB_ASSERT(ok);
    /* Each rank's transfers one after another: rank 1 both sends and
     * receives above, so the move takes two transfers' time. */
    tb_redist_cost one = {1.0, 0.0, 0, 0, 0, 0, 0};
    TB_ASSERT_OK(tb_redist_moves(3, a, b, mv, 8, &n));
    TB_ASSERT_NEAR(tb_redist_move_time(&one, mv, n, 3, 8.0), 2.0, 0);
}

/*
 * 126 units at 42 each on ranks of speed 1, 1, 0.5 units per second: 84 s
 * per iteration now; the plan 51, 50, 25 takes 51 s.  Its moves: [42, 51)
 * from rank 1 to 0 and [84, 101) from 2 to 1; rank 1 takes part in both.
 */
static void test_decide(void)
{
    const uint64_t cur[] = {42, 42, 42};
    const double sp[] = {1, 1, 0.5};
    uint64_t next[3];
    tb_redist_decision d;
    tb_redist_cost c10 = {10.0, 0.0, 0, 0, 0, 0, 0}, c20 = {20.0, 0.0, 0, 0, 0, 0, 0};
    TB_ASSERT_OK(tb_redist_decide(3, cur, sp, 99, 100, 1.05, TB_REDIST_PREDICT, &c10, 8, 1, next,
                                  &d));
    TB_ASSERT(next[0] == 51 && next[1] == 50 && next[2] == 25);
    TB_ASSERT(d.t_now == 84 && d.t_new == 51 && d.t_move == 20 && d.remaining == 1);
    TB_ASSERT_EQ_U64(d.units_moved, 26);
    TB_ASSERT(d.move == 1); /* 1 x 33 s > 20 s */
    /* The move costs 40 s: one iteration left does not pay it... */
    TB_ASSERT_OK(tb_redist_decide(3, cur, sp, 99, 100, 1.05, TB_REDIST_PREDICT, &c20, 8, 1, next,
                                  &d));
    TB_ASSERT(d.move == 0 && d.t_move == 40);
    /* ...two do (66 s > 40 s), and the paper's baseline moves anyway. */
    TB_ASSERT_OK(tb_redist_decide(3, cur, sp, 98, 100, 1.05, TB_REDIST_PREDICT, &c20, 8, 1, next,
                                  &d));
    TB_ASSERT(d.move == 1);
    TB_ASSERT_OK(tb_redist_decide(3, cur, sp, 99, 100, 1.05, TB_REDIST_NO_PREDICT, &c20, 8, 1,
                                  next, &d));
    TB_ASSERT(d.move == 1);
    /* The last iteration: nothing remains to gain. */
    TB_ASSERT_OK(tb_redist_decide(3, cur, sp, 100, 100, 1.05, TB_REDIST_NO_PREDICT, &c10, 8, 1,
                                  next, &d));
    TB_ASSERT(d.move == 0 && d.remaining == 0);
    /* The plan is the current layout. */
    const uint64_t bal[] = {51, 50, 25};
    TB_ASSERT_OK(tb_redist_decide(3, bal, sp, 10, 100, 1.0, TB_REDIST_NO_PREDICT, &c10, 8, 1, next,
                                  &d));
    TB_ASSERT(d.move == 0 && d.units_moved == 0);
    /* Below the threshold: 84 / avg(42, 42, 84) = 1.5. */
    TB_ASSERT_OK(tb_redist_decide(3, cur, sp, 10, 100, 1.5, TB_REDIST_NO_PREDICT, &c10, 8, 1, next,
                                  &d));
    TB_ASSERT(d.move == 0);
    TB_ASSERT_NEAR(d.imbalance, 1.5, 1e-15);
    /* Bad calls. */
    TB_ASSERT_EQ_INT(tb_redist_decide(3, cur, sp, 0, 100, 1.05, 0, &c10, 8, 1, next, &d),
                     TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_redist_decide(3, cur, sp, 101, 100, 1.05, 0, &c10, 8, 1, next, &d),
                     TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_redist_decide(3, cur, sp, 1, 100, 0.5, 0, &c10, 8, 1, next, &d),
                     TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_redist_decide(3, cur, sp, 1, 100, 1.05, 7, &c10, 8, 1, next, &d),
                     TB_ERR_INVALID);
}

/* A window of n one-iteration calls: `slow` of them (the last ones, or the
 * first with at_start) take f times t, the rest t. */
static void window(tb__rb_window *w, int n, double t, int slow, double f, int at_start)
{
    tb__rb_window_clear(w);
    for (int k = 0; k < n; k++) {
        int s = at_start ? k < slow : k >= n - slow;
        tb__rb_window_add(w, s ? t * f : t, 1);
    }
}

/* One balancing point of two ranks, 63 units each, windows of 10 calls. */
static int point2(tb__rb *b, uint64_t it, const double *t, const int *slow, const double *f,
                  tb_redist_decision *d)
{
    static const uint64_t counts[2] = {63, 63};
    double meas[2 * TB__RB_PACK];
    tb__rb_window w = {NULL, NULL, 0, 0};
    for (int r = 0; r < 2; r++) {
        window(&w, 10, t[r], slow[r], f[r], 0);
        tb__rb_window_pack(&w, it, meas + r * TB__RB_PACK);
    }
    tb__rb_window_free(&w);
    return tb__rb_point(b, it, 200, counts, meas, d, NULL, NULL);
}

static void test_balance_window(void)
{
    tb__rb_window w = {NULL, NULL, 0, 0};
    TB_ASSERT_OK(tb__rb_window_add(&w, 1.0, 1));
    TB_ASSERT_OK(tb__rb_window_add(&w, 2.0, 1));
    TB_ASSERT_OK(tb__rb_window_add(&w, 6.0, 2));
    TB_ASSERT_OK(tb__rb_window_add(&w, 5.0, 0)); /* no iteration: ignored */
    double m[TB__RB_PACK];
    tb__rb_window_pack(&w, 30, m);
    TB_ASSERT(m[0] == 30);
    /* first half: the first call; second half: the other two */
    TB_ASSERT(m[1] == 1 && m[2] == 1 && m[3] == 1 && m[4] == 1 && m[5] == 1);
    TB_ASSERT(m[6] == 8 && m[7] == 3 && m[8] == 2 && m[9] == 5 && m[10] == 13);
    tb__rb_window_free(&w);
}

static void test_balance_guards(void)
{
    tb_redist_opts cfg;
    tb_redist_opts_init(&cfg);
    tb__rb b;
    tb_redist_decision d;
    const double t[2] = {0.63, 0.63};
    /* Equal speeds, rank 1 slowed 3x in one sweep of ten: 20 % on average,
     * imbalance 1.2 / 1.1 above the 5 % threshold.  S4's plain rule moves,
     * the noise guard not. */
    const int one[2] = {0, 1};
    const double two[2] = {1, 2}, three[2] = {1, 3};
    cfg.guards = 0;
    TB_ASSERT_OK(tb__rb_init(&b, 2, &cfg, 1, 1e3));
    TB_ASSERT_OK(point2(&b, 10, t, one, three, &d));
    TB_ASSERT(d.move == 1);
    tb__rb_free(&b);
    cfg.guards = TB_REDIST_GUARD_NOISE;
    TB_ASSERT_OK(tb__rb_init(&b, 2, &cfg, 1, 1e3));
    TB_ASSERT_OK(point2(&b, 10, t, one, three, &d));
    TB_ASSERT(d.move == 0 && d.units_moved > 0);
    TB_ASSERT_STR_EQ(d.why, "the gain is within the measurement noise");
    TB_ASSERT(b.gain_margin > 0);
    /* The same rank slowed all through the next window: a load that stays. */
    const int all[2] = {0, 10};
    TB_ASSERT_OK(point2(&b, 20, t, all, two, &d));
    TB_ASSERT(d.move == 1);
    tb__rb_free(&b);

    /* A new level (2x from the start of the window after one at 1x): the
     * change guard restarts the speed, the plain smoothing averages. */
    const int none[2] = {0, 0};
    for (int g = 0; g < 2; g++) {
        cfg.guards = g ? TB_REDIST_GUARD_CHANGE : 0;
        TB_ASSERT_OK(tb__rb_init(&b, 2, &cfg, 1, 1e3));
        TB_ASSERT_OK(point2(&b, 10, t, none, two, &d));
        TB_ASSERT(d.move == 0 && b.restarted == 0);
        TB_ASSERT_OK(point2(&b, 20, t, all, two, &d));
        TB_ASSERT_EQ_INT(b.restarted, g);
        TB_ASSERT_NEAR(b.unit_time[1], g ? 0.02 : 0.015, 1e-12);
        /* 2x: 84 + 42; averaged (1.5x): 76 + 50 */
        TB_ASSERT_EQ_U64(b.next[0], (uint64_t)(g ? 84 : 76));
        tb__rb_free(&b);
    }
    /* A change inside the window (the last 5 sweeps at 2x): the speed is the
     * second half's. */
    const int half[2] = {0, 5};
    cfg.guards = TB_REDIST_GUARD_CHANGE;
    TB_ASSERT_OK(tb__rb_init(&b, 2, &cfg, 1, 1e3));
    TB_ASSERT_OK(point2(&b, 10, t, half, two, &d));
    TB_ASSERT_EQ_INT(b.changed, 1);
    TB_ASSERT_NEAR(b.unit_time[1], 0.02, 1e-12);
    TB_ASSERT_EQ_U64(b.next[0], 84);
    tb__rb_free(&b);
}

static void test_balance_state(void)
{
    tb_redist_opts cfg;
    tb_redist_opts_init(&cfg);
    tb__rb b;
    tb_redist_decision d;
    TB_ASSERT_OK(tb__rb_init(&b, 2, &cfg, 1, 1e3));
    /* Ranks at different iterations. */
    uint64_t counts[2] = {5, 5};
    double meas[2 * TB__RB_PACK] = {0};
    meas[0] = 10;
    meas[TB__RB_PACK] = 20;
    int bad = -1;
    TB_ASSERT_EQ_INT(tb__rb_point(&b, 10, 100, counts, meas, &d, NULL, &bad), TB_ERR_STATE);
    TB_ASSERT_EQ_INT(bad, 1);
    /* Nothing measured: every rank gets speed 1, nothing moves. */
    meas[TB__RB_PACK] = 10;
    int est = 0;
    TB_ASSERT_OK(tb__rb_point(&b, 10, 0, counts, meas, &d, &est, NULL));
    TB_ASSERT(est == 1 && d.remaining == 10 && d.move == 0);
    TB_ASSERT(b.speeds[0] == 1 && b.speeds[1] == 1);
    /* Moves scale the cost model by measured / predicted. */
    TB_ASSERT(tb__rb_factor(&b) == 1.0);
    tb__rb_moved(&b, 0.01, 0.03);
    tb__rb_moved(&b, 0.01, 0.01);
    TB_ASSERT_NEAR(tb__rb_factor(&b), 2.0, 1e-12);
    tb__rb_moved(&b, 0, 1); /* nothing predicted: no ratio */
    TB_ASSERT_EQ_U64(b.moves, 2);
    tb__rb_free(&b);
}

/* The simulation's result as JSON: it parses, NaN and infinities are null,
 * only the points past the threshold are actions, their imbalance to 4
 * decimals. */
static void test_sim_result_json(void)
{
    double compute[2] = {1.5, NAN}, wait[2] = {INFINITY, 0.25};
    uint64_t counts[2] = {30, 34}, layouts[4] = {31, 33, 32, 32};
    tb_redist_sim_point pts[2];
    memset(pts, 0, sizeof pts);
    pts[0].iteration = 10;
    pts[0].decision.units_moved = 1;
    pts[0].decision.imbalance = 1.123456;
    pts[0].decision.remaining = 5;
    pts[0].decision.move = 1;
    pts[0].decision.t_move = NAN;
    pts[0].decision.why = "a \"reason\"";
    pts[1].iteration = 20; /* below the threshold: not an action */
    pts[1].decision.units_moved = 1;
    pts[1].decision.imbalance = 1.01;
    pts[1].decision.remaining = 5;
    pts[1].decision.why = "kept";
    tb_redist_sim_result r;
    memset(&r, 0, sizeof r);
    r.ranks = 2;
    r.balance.mode = TB_REDIST_NO_PREDICT;
    r.balance.threshold = 1.05;
    r.balance.interval = 10;
    r.makespan_s = NAN;
    r.points = 2;
    r.pts = pts;
    r.layouts = layouts;
    r.compute_s = compute;
    r.wait_s = wait;
    r.counts = counts;
    tb_redist_sim_opts opts;
    tb_redist_sim_opts_init(&opts);
    opts.iters = 30;
    tb_buf b = TB_BUF_INIT;
    TB_ASSERT_OK(tb_redist_sim_result_json(&opts, &r, "{\"command\": \"himeno\"}", &b));
    TB_ASSERT_OK(tb_buf_append(&b, "", 1));
    cJSON *j = cJSON_Parse((const char *)b.data);
    TB_ASSERT(j != NULL);
    TB_ASSERT_STR_EQ(cJSON_GetObjectItem(j, "command")->valuestring, "himeno");
    TB_ASSERT_STR_EQ(cJSON_GetObjectItem(j, "balance")->valuestring, "nopredict");
    TB_ASSERT(cJSON_GetObjectItem(j, "iters")->valuedouble == 30);
    TB_ASSERT(cJSON_GetObjectItem(j, "threshold")->valuedouble == 1.05);
    TB_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(j, "makespan_s")));
    TB_ASSERT(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "compute_s"), 1)));
    TB_ASSERT(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "wait_s"), 0)));
    TB_ASSERT(cJSON_GetObjectItem(j, "replay_points") == NULL);
    cJSON *acts = cJSON_GetObjectItem(j, "actions");
    TB_ASSERT_EQ_INT(cJSON_GetArraySize(acts), 1);
    cJSON *a = cJSON_GetArrayItem(acts, 0);
    TB_ASSERT(cJSON_GetObjectItem(a, "imbalance")->valuedouble == 1.1235);
    TB_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(a, "t_move_s")));
    TB_ASSERT(cJSON_GetArrayItem(cJSON_GetObjectItem(a, "layout"), 1)->valuedouble == 33);
    TB_ASSERT_STR_EQ(cJSON_GetObjectItem(a, "why")->valuestring, "a \"reason\"");
    cJSON_Delete(j);
    tb_buf_free(&b);
}

static const tb_test tests[] = {
    {"partition_known", test_partition_known},
    {"partition_errors", test_partition_errors},
    {"partition_optimal", test_partition_optimal},
    {"imbalance", test_imbalance},
    {"cost_fit", test_cost_fit},
    {"moves", test_moves},
    {"decide", test_decide},
    {"balance_window", test_balance_window},
    {"balance_guards", test_balance_guards},
    {"balance_state", test_balance_state},
    {"sim_result_json", test_sim_result_json},
    {NULL, NULL},
};

TB_TEST_MAIN(tests)
