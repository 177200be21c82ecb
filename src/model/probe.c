/*
 * probe.c - LogGPS parameters fitted to measurements (tb_probe_fit_loggps;
 * the formulas are in tenbin/model.h, the measurements in tools/cmd_probe.c).
 */
#define _POSIX_C_SOURCE 200809L

#include "model/model_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int finite_nonneg(double v) { return isfinite(v) && v >= 0; }

/* sqrt of the sum of squares: independent errors added. */
static double rss(double a, double b, double c, double d)
{
    return sqrt(a * a + b * b + c * c + d * d);
}

/* Least squares of y over x whose points carry standard errors e: the
 * fit's errors are the larger of the residuals' and the points' own carried
 * through (Var slope = sum ((x - mx) e)^2 / sxx^2): with noise that grows
 * with the size, the residuals alone understate the error of the slope. */
static int fit(const double *x, const double *y, const double *e, size_t n, tb_linfit *out)
{
    TB_CHECK(tb_linfit_compute(x, y, n, out));
    double mx = 0, sxx = 0, vs = 0, vi = 0;
    for (size_t i = 0; i < n; i++)
        mx += x[i] / (double)n;
    for (size_t i = 0; i < n; i++)
        sxx += (x[i] - mx) * (x[i] - mx);
    for (size_t i = 0; i < n; i++) {
        double ws = (x[i] - mx) / sxx, wi = 1.0 / (double)n - mx * ws;
        vs += ws * ws * e[i] * e[i];
        vi += wi * wi * e[i] * e[i];
    }
    if (sqrt(vs) > out->se_slope)
        out->se_slope = sqrt(vs);
    if (sqrt(vi) > out->se_intercept)
        out->se_intercept = sqrt(vi);
    return TB_OK;
}

static int check_input(const tb_probe_size *sz, size_t ns, const tb_probe_run *runs, size_t nr,
                       double eager, char *err, size_t errlen)
{
    if (ns < 2) {
        return tb__errf(err, errlen, TB_ERR_RANGE,
                        "probe: %zu message size(s); the fit needs two or more", ns);
    }
    if (nr < 1) {
        return tb__errf(err, errlen, TB_ERR_RANGE, "probe: no run size P");
    }
    for (size_t i = 0; i < ns; i++) {
        const tb_probe_size *s = &sz[i];
        double v[] = {s->bytes, s->half_rtt, s->os, s->or_, s->gap,
                      s->e_half_rtt, s->e_os, s->e_or, s->e_gap};
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
            if (!finite_nonneg(v[k])) {
                return tb__errf(err, errlen, TB_ERR_RANGE,
                                "probe: size %zu (%.17g bytes): a negative or "
                                "non-finite value (%g)",
                                i, s->bytes, v[k]);
            }
        if (i > 0 && !(s->bytes > sz[i - 1].bytes)) {
            return tb__errf(err, errlen, TB_ERR_RANGE,
                            "probe: sizes must ascend (%.17g after %.17g)", s->bytes,
                            sz[i - 1].bytes);
        }
    }
    for (size_t i = 0; i < nr; i++) {
        const tb_probe_run *r = &runs[i];
        if (r->P < 1 || !finite_nonneg(r->os) || !finite_nonneg(r->or_) ||
            !finite_nonneg(r->e_os) || !finite_nonneg(r->e_or)) {
            return tb__errf(err, errlen, TB_ERR_RANGE, "probe: run %zu (P = %d): a bad value", i,
                            r->P);
        }
        for (size_t j = 0; j < i; j++)
            if (runs[j].P == r->P) {
                return tb__errf(err, errlen, TB_ERR_RANGE, "probe: P = %d measured twice", r->P);
            }
    }
    if (!finite_nonneg(eager)) {
        return tb__errf(err, errlen, TB_ERR_RANGE, "probe: bad rendezvous threshold %g", eager);
    }
    return TB_OK;
}

int tb_probe_fit_loggps(const tb_probe_size *sz, size_t ns, int P0, const tb_probe_run *runs,
                        size_t nr, double eager, tb_probe_fit *out, char *err, size_t errlen)
{
    if (!out || (ns && !sz) || (nr && !runs))
        return TB_ERR_INVALID;
    TB_CHECK(check_input(sz, ns, runs, nr, eager, err, errlen));
    const tb_probe_run *r0 = NULL;
    for (size_t i = 0; i < nr; i++)
        if (runs[i].P == P0)
            r0 = &runs[i];
    if (!r0) {
        return tb__errf(err, errlen, TB_ERR_RANGE,
                        "probe: the sizes were measured at P = %d, which has no run", P0);
    }
    size_t cap = ns > nr ? ns : nr;
    double *x = malloc(3 * cap * sizeof *x), *y = x ? x + cap : NULL, *e = x ? x + 2 * cap : NULL;
    if (!x)
        return TB_ERR_NOMEM;
    tb_probe_fit f;
    memset(&f, 0, sizeof f);
    tb__model_net_defaults(&f.net);
    tb_linfit lf;
    int rc = TB_OK;

    /* O: the overheads' slope over the eager sizes. */
    size_t ne = 0;
    for (size_t i = 0; i < ns && (eager <= 0 || sz[i].bytes <= eager); i++, ne++) {
        x[ne] = sz[i].bytes;
        y[ne] = (sz[i].os + sz[i].or_) / 2;
        e[ne] = rss(sz[i].e_os, sz[i].e_or, 0, 0) / 2;
    }
    if (ne >= 2 && fit(x, y, e, ne, &lf) == TB_OK) {
        f.net.O = lf.slope > 0 ? lf.slope : 0;
        f.err.O = lf.se_slope;
    }
    /* ob: the first size's overheads over P. */
    if (nr >= 2) {
        for (size_t i = 0; i < nr; i++) {
            x[i] = runs[i].P;
            y[i] = (runs[i].os + runs[i].or_) / 2;
            e[i] = rss(runs[i].e_os, runs[i].e_or, 0, 0) / 2;
        }
        if (fit(x, y, e, nr, &lf) == TB_OK) {
            f.net.ob = lf.slope > 0 ? lf.slope : 0;
            f.err.ob = lf.se_slope;
        }
    }
    /* os, or: what is left of each run's overheads, averaged. */
    double s0 = sz[0].bytes, eos = 0, eor = 0;
    for (size_t i = 0; i < nr; i++) {
        double base = f.net.ob * runs[i].P + f.net.O * s0;
        f.net.os += (runs[i].os - base) / (double)nr;
        f.net.or_ += (runs[i].or_ - base) / (double)nr;
        eos += runs[i].e_os * runs[i].e_os;
        eor += runs[i].e_or * runs[i].e_or;
    }
    double pm = 0; /* mean P, for the errors of ob P */
    for (size_t i = 0; i < nr; i++)
        pm += runs[i].P / (double)nr;
    f.err.os = rss(sqrt(eos) / (double)nr, f.err.ob * pm, f.err.O * s0, 0);
    f.err.or_ = rss(sqrt(eor) / (double)nr, f.err.ob * pm, f.err.O * s0, 0);
    if (f.net.os < 0)
        f.net.os = 0;
    if (f.net.or_ < 0)
        f.net.or_ = 0;

    /* G over the larger half of the sizes, g and L at the first. */
    size_t k = (ns + 1) / 2 < 2 ? 2 : (ns + 1) / 2;
    for (size_t i = 0; i < k; i++) {
        x[i] = sz[ns - k + i].bytes;
        y[i] = sz[ns - k + i].gap;
        e[i] = sz[ns - k + i].e_gap;
    }
    rc = fit(x, y, e, k, &lf);
    /* A slope below zero by less than two of its standard errors is a G too
     * small to see over these sizes (e.g. 1 and 2 bytes): zero.  Further
     * below, the measurements contradict the model. */
    if (rc == TB_OK && lf.slope < 0 && lf.slope + 2 * lf.se_slope >= 0)
        lf.slope = 0;
    if (rc == TB_OK && !(lf.slope >= 0)) {
        rc = tb__errf(err, errlen, TB_ERR_RANGE,
                      "probe: negative G (%g s per byte, fitted over "
                      "sizes %.17g to %.17g; sizes further apart measure it)",
                      lf.slope, x[0], x[k - 1]);
    }
    free(x);
    if (rc != TB_OK)
        return rc;
    f.net.G = lf.slope;
    f.err.G = lf.se_slope;
    double b0 = s0 > 1 ? s0 - 1 : 0;
    double g = sz[0].gap - b0 * f.net.G;
    f.net.g = g > 0 ? g : 0;
    f.err.g = rss(sz[0].e_gap, b0 * f.err.G, 0, 0);
    double L = sz[0].half_rtt - r0->os - r0->or_ - b0 * f.net.G;
    f.net.L = L > 0 ? L : 0;
    f.err.L = rss(sz[0].e_half_rtt, r0->e_os, r0->e_or, b0 * f.err.G);
    if (eager > 0)
        f.net.S = eager;
    *out = f;
    return TB_OK;
}
