/*
 * test_probe.c - tb_probe_fit_loggps: the fit behind `tenbin probe` recovers
 * known LogGPS parameters from synthetic measurements, exactly without
 * noise and within its own standard errors with 1 % noise; bad input is
 * refused with one line.
 */
#define _POSIX_C_SOURCE 200809L

#include "tenbin/model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../tb_test.h"

/* The truth: Open MPI over shared memory, roughly. */
static const tb_loggps truth = {.L = 20e-6, .os = 3e-6, .or_ = 4e-6, .ob = 0.2e-6,
                                .O = 0.5e-9, .g = 5e-6, .G = 0.1e-9, .S = 4096};

enum { NS = 21, NR = 3 };
static const int Ps[NR] = {2, 4, 8};

static double noisy(tb_rng *r, double v, double rel)
{
    if (rel == 0)
        return v;
    /* Box-Muller */
    double u1 = tb_rng_double(r), u2 = tb_rng_double(r);
    double z = sqrt(-2 * log(u1 > 0 ? u1 : 1e-300)) * cos(6.283185307179586 * u2);
    return v * (1 + rel * z);
}

/* Measurements the model would give, with relative noise rel. */
static void synth(tb_probe_size *sz, tb_probe_run *runs, double rel, uint64_t seed)
{
    tb_rng r;
    tb_rng_seed(&r, seed);
    const tb_loggps *t = &truth;
    for (int i = 0; i < NS; i++) {
        double s = (double)(1u << i);
        double os = t->os + t->ob * Ps[0] + t->O * s, or_ = t->or_ + t->ob * Ps[0] + t->O * s;
        tb_probe_size *p = &sz[i];
        p->bytes = s;
        p->os = noisy(&r, os, rel);
        p->or_ = noisy(&r, or_, rel);
        p->half_rtt = noisy(&r, os + t->L + (s - 1) * t->G + or_, rel);
        p->gap = noisy(&r, t->g + (s - 1) * t->G, rel);
        p->e_os = rel * os;
        p->e_or = rel * or_;
        p->e_half_rtt = rel * (os + t->L + (s - 1) * t->G + or_);
        p->e_gap = rel * (t->g + (s - 1) * t->G);
    }
    for (int i = 0; i < NR; i++) {
        double os = t->os + t->ob * Ps[i] + t->O, or_ = t->or_ + t->ob * Ps[i] + t->O;
        runs[i] = (tb_probe_run){Ps[i], noisy(&r, os, rel), noisy(&r, or_, rel), rel * os,
                                 rel * or_};
    }
    if (rel == 0) /* the first run is the one the sizes were measured in */
        runs[0].os = sz[0].os, runs[0].or_ = sz[0].or_;
}

#define CHECK_PARAM(f, name, tol)                                                              \
    do {                                                                                       \
        double got_ = (f).net.name, want_ = truth.name, e_ = (f).err.name;                     \
        if (!(fabs(got_ - want_) <= (tol)(e_, want_))) {                                       \
            printf("  %s: fitted %.6g +- %.3g, true %.6g\n", #name, got_, e_, want_);          \
            TB_ASSERT(0);                                                                      \
        }                                                                                      \
    } while (0)

static double exact_tol(double e, double want) { return 1e-9 * want + 0 * e; }
/* Four standard errors, and a little for the clamps at zero. */
static double noisy_tol(double e, double want) { return 4 * e + 1e-3 * want; }

static void test_exact(void)
{
    tb_probe_size sz[NS];
    tb_probe_run runs[NR];
    synth(sz, runs, 0, 1);
    tb_probe_fit f;
    char err[256] = "";
    TB_ASSERT_OK(tb_probe_fit_loggps(sz, NS, 2, runs, NR, 4096, &f, err, sizeof err));
    CHECK_PARAM(f, L, exact_tol);
    CHECK_PARAM(f, os, exact_tol);
    CHECK_PARAM(f, or_, exact_tol);
    CHECK_PARAM(f, ob, exact_tol);
    CHECK_PARAM(f, O, exact_tol);
    CHECK_PARAM(f, g, exact_tol);
    CHECK_PARAM(f, G, exact_tol);
    TB_ASSERT(f.net.S == 4096);
    TB_ASSERT(f.err.G < 1e-20 && f.err.ob < 1e-18);
}

/* 1 % noise, several seeds: every parameter within four of its standard
 * errors, and the errors are not absurdly wide (under a third of the value
 * for the parameters that matter at this size). */
static void test_noisy(void)
{
    for (uint64_t seed = 1; seed <= 20; seed++) {
        tb_probe_size sz[NS];
        tb_probe_run runs[NR];
        synth(sz, runs, 0.01, seed);
        tb_probe_fit f;
        char err[256] = "";
        TB_ASSERT_OK(tb_probe_fit_loggps(sz, NS, 2, runs, NR, 4096, &f, err, sizeof err));
        CHECK_PARAM(f, L, noisy_tol);
        CHECK_PARAM(f, os, noisy_tol);
        CHECK_PARAM(f, or_, noisy_tol);
        CHECK_PARAM(f, ob, noisy_tol);
        CHECK_PARAM(f, O, noisy_tol);
        CHECK_PARAM(f, g, noisy_tol);
        CHECK_PARAM(f, G, noisy_tol);
        TB_ASSERT(f.err.G < truth.G / 3 && f.err.L < truth.L / 3 && f.err.os < truth.os / 3 &&
                  f.err.ob < truth.ob / 2);
    }
}

/* One run size: ob is 0 and the overheads keep the run's share. */
static void test_one_run(void)
{
    tb_probe_size sz[NS];
    tb_probe_run runs[NR];
    synth(sz, runs, 0, 3);
    tb_probe_fit f;
    TB_ASSERT_OK(tb_probe_fit_loggps(sz, NS, 2, runs, 1, 0, &f, NULL, 0));
    TB_ASSERT(f.net.ob == 0);
    TB_ASSERT_NEAR(f.net.os, truth.os + 2 * truth.ob, 1e-15);
    TB_ASSERT(f.net.S == 65536); /* not measured: the default */
}

static void expect_err(const tb_probe_size *sz, size_t ns, int P0, const tb_probe_run *runs,
                       size_t nr, double eager, const char *want)
{
    tb_probe_fit f;
    char err[256] = "";
    TB_ASSERT_EQ_INT(tb_probe_fit_loggps(sz, ns, P0, runs, nr, eager, &f, err, sizeof err),
                     TB_ERR_RANGE);
    if (!strstr(err, want)) {
        printf("  got '%s', want '%s'\n", err, want);
        TB_ASSERT(0);
    }
}

static void test_errors(void)
{
    tb_probe_size sz[NS];
    tb_probe_run runs[NR];
    synth(sz, runs, 0, 4);
    expect_err(sz, 1, 2, runs, NR, 0, "1 message size(s); the fit needs two or more");
    expect_err(sz, NS, 2, runs, 0, 0, "no run size P");
    expect_err(sz, NS, 3, runs, NR, 0, "measured at P = 3, which has no run");
    tb_probe_size bad[NS];
    memcpy(bad, sz, sizeof bad);
    bad[3].bytes = 2;
    expect_err(bad, NS, 2, runs, NR, 0, "sizes must ascend (2 after 4)");
    memcpy(bad, sz, sizeof bad);
    bad[5].gap = -1;
    expect_err(bad, NS, 2, runs, NR, 0, "size 5 (32 bytes): a negative or non-finite value");
    memcpy(bad, sz, sizeof bad);
    bad[7].os = NAN;
    expect_err(bad, NS, 2, runs, NR, 0, "size 7");
    memcpy(bad, sz, sizeof bad);
    for (int i = 0; i < NS; i++) /* gaps that shrink with size */
        bad[i].gap = 1e-3 / (i + 1);
    expect_err(bad, NS, 2, runs, NR, 0, "negative G");
    /* Gaps that fall with size by less than their noise: G is zero. */
    memcpy(bad, sz, sizeof bad);
    for (int i = 0; i < NS; i++) {
        bad[i].gap = 1e-6 - 1e-16 * bad[i].bytes;
        bad[i].e_gap = 1e-7;
    }
    tb_probe_fit f;
    TB_ASSERT_OK(tb_probe_fit_loggps(bad, NS, 2, runs, NR, 0, &f, NULL, 0));
    TB_ASSERT(f.net.G == 0 && f.err.G > 0);
    tb_probe_run twice[2] = {runs[0], runs[0]};
    expect_err(sz, NS, 2, twice, 2, 0, "P = 2 measured twice");
    expect_err(sz, NS, 2, runs, NR, -1, "bad rendezvous threshold");
    TB_ASSERT_EQ_INT(tb_probe_fit_loggps(sz, NS, 2, runs, NR, 0, NULL, NULL, 0), TB_ERR_INVALID);
}

static const tb_test tests[] = {
    {"exact", test_exact},   {"noisy", test_noisy}, {"one_run", test_one_run},
    {"errors", test_errors}, {NULL, NULL}};

TB_TEST_MAIN(tests)
