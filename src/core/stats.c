/*
 * stats.c - summary statistics of a sample.
 */
#include "tenbin/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Total order with NaNs last, so qsort always sees a consistent comparator. */
static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    if (isnan(a) || isnan(b))
        return isnan(a) - isnan(b);
    return (a > b) - (a < b);
}

static int median_of(const double *x, size_t n, double *out)
{
    double *s = malloc(n * sizeof *s);
    if (s == NULL)
        return TB_ERR_NOMEM;
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    *out = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
    free(s);
    return TB_OK;
}

int tb_stats_compute(const double *x, size_t n, tb_stats *out)
{
    if (out == NULL || (n > 0 && x == NULL))
        return TB_ERR_INVALID;
    memset(out, 0, sizeof *out);
    if (n == 0)
        return TB_OK;
    if (n > SIZE_MAX / sizeof *x)
        return TB_ERR_RANGE;
    double sum = 0, lo = x[0], hi = x[0];
    for (size_t i = 0; i < n; i++) {
        sum += x[i];
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    double mean = sum / (double)n, ss = 0;
    /* Second pass about the mean: no cancellation from sum of squares. */
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - mean) * (x[i] - mean);
    TB_CHECK(median_of(x, n, &out->median));
    out->n = n;
    out->sum = sum;
    out->mean = mean;
    out->min = lo;
    out->max = hi;
    out->stddev = sqrt(ss / (double)n);
    return TB_OK;
}

int tb_linfit_compute(const double *x, const double *y, size_t n, tb_linfit *out)
{
    if (out == NULL || x == NULL || y == NULL)
        return TB_ERR_INVALID;
    if (n < 2)
        return TB_ERR_RANGE;
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (!(sxx > 0))
        return TB_ERR_RANGE;
    tb_linfit f = {.slope = sxy / sxx};
    f.intercept = my - f.slope * mx;
    if (n > 2) {
        double ss = 0;
        for (size_t i = 0; i < n; i++) {
            double r = y[i] - f.intercept - f.slope * x[i];
            ss += r * r;
        }
        double s2 = ss / (double)(n - 2);
        f.se_slope = sqrt(s2 / sxx);
        f.se_intercept = sqrt(s2 * (1.0 / (double)n + mx * mx / sxx));
    }
    *out = f;
    return TB_OK;
}
