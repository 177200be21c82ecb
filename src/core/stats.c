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
