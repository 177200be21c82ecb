/*
 * netgauge.c - LogGPS parameters from the table that Netgauge's LogGP pattern
 * writes (`netgauge -m mpi -x loggp -o FILE`).
 *
 * The file: comment lines starting with '#', then one row per message size,
 * eleven blank-separated columns, times in microseconds:
 *
 *     size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r g G lsqu(g,G)
 *
 * PRTT(n,d,s) is the parametrised round-trip time: n messages of s bytes
 * sent d apart, one reply.  L, o_s, o_r are Netgauge's per-size values, and
 * g, G, lsqu its running least-squares fit (nan in the first rows).  After a
 * detected protocol change a size appears twice in a row; the later row wins.
 *
 * Derivation (LogGP: a one-way message of s bytes takes o_s + L + (s-1)G +
 * o_r; n back-to-back sends are g + (s-1)G apart):
 *   gap(s) = (PRTT(n,0,s) - PRTT(1,0,s)) / (n - 1)          per row
 *   G      = least-squares slope of gap(s) over the larger half of the sizes
 *   os, or = the o_s, o_r columns of the smallest size s0
 *   g      = gap(s0) - (s0-1)G                               (at least 0)
 *   L      = PRTT(1,0,s0)/2 - os - or - (s0-1)G              (at least 0)
 * Netgauge's own L column is PRTT(1,0,s0)/2, which includes both overheads;
 * Tenbin charges them separately.  ob and O stay 0, S at its default (the
 * file does not record the eager limit).  See docs/platform.md.
 */
#define _POSIX_C_SOURCE 200809L

#include "model/model_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    C_SIZE, C_N, C_PRTT1, C_PRTTN, C_PRTTND, C_L, C_OS, C_OR, C_FIT_G, C_FIT_GB, C_LSQU,
    NG_NCOL
};

/* Columns up to here are measurements and must be finite and >= 0; the rest
 * is Netgauge's running fit, which may be nan or negative (and is unused). */
#define NG_LAST_CHECKED C_OR

static const char *const col_name[NG_NCOL] = {
    "size", "n", "PRTT(1,0,s)", "PRTT(n,0,s)", "PRTT(n,PRTT(1,0,s),s)", "L",
    "o_s", "o_r", "g", "G", "lsqu(g,G)"};

#define NG_HEADER "size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r g G lsqu(g,G)"

typedef struct ng_row {
    double size, gap, prtt1, os, or_; /* microseconds (size: bytes) */
} ng_row;

typedef struct ng_reader {
    const char *path;
    char *err;
    size_t errlen;
    long line;
    ng_row *rows;
    size_t nrows, cap;
} ng_reader;

/* Splits line at blanks, in place; returns the number of tokens, of which
 * the first max are stored in tok. */
static int split(char *line, char **tok, int max)
{
    int n = 0;
    char *s = line;
    for (;;) {
        while (isspace((unsigned char)*s))
            s++;
        if (*s == '\0')
            return n;
        if (n < max)
            tok[n] = s;
        n++;
        while (*s != '\0' && !isspace((unsigned char)*s))
            s++;
        if (*s != '\0')
            *s++ = '\0';
    }
}

/* A number in Netgauge's fit columns: anything strtod reads whole, nan and
 * inf included (printf("%lf") of an undefined fit). */
static int fit_number(const char *s)
{
    char *end;
    (void)strtod(s, &end);
    return end != s && *end == '\0';
}

static int bad_col(ng_reader *r, int rc, int c, const char *what, const char *tok)
{
    return tb__errf(r->err, r->errlen, rc, "%s:%ld: column %d (%s): %s, got '%s'", r->path, r->line,
                    c + 1, col_name[c], what, tok);
}

/* Reads the numbers of one data row into v[]. */
static int parse_cols(ng_reader *r, char **tok, double *v)
{
    for (int c = 0; c < NG_NCOL; c++) {
        if (c > NG_LAST_CHECKED) {
            if (!fit_number(tok[c]))
                return bad_col(r, TB_ERR_PARSE, c, "expected a number", tok[c]);
            continue;
        }
        int rc = tb_parse_double(tok[c], &v[c]);
        if (rc != TB_OK)
            return bad_col(r, rc, c, "expected a number", tok[c]);
        if (v[c] < 0)
            return bad_col(r, TB_ERR_RANGE, c, "negative value", tok[c]);
    }
    if (v[C_SIZE] != floor(v[C_SIZE]))
        return bad_col(r, TB_ERR_PARSE, C_SIZE, "expected a whole number of bytes", tok[C_SIZE]);
    if (v[C_N] != floor(v[C_N]) || v[C_N] < 2)
        return bad_col(r, TB_ERR_RANGE, C_N, "expected an integer of at least 2", tok[C_N]);
    return TB_OK;
}

static int add_row(ng_reader *r, const double *v)
{
    ng_row row = {.size = v[C_SIZE],
                  .gap = (v[C_PRTTN] - v[C_PRTT1]) / (v[C_N] - 1),
                  .prtt1 = v[C_PRTT1],
                  .os = v[C_OS],
                  .or_ = v[C_OR]};
    if (r->nrows > 0) {
        double last = r->rows[r->nrows - 1].size;
        if (row.size < last) {
            return tb__errf(r->err, r->errlen, TB_ERR_PARSE,
                            "%s:%ld: sizes must increase, got %.17g after %.17g", r->path, r->line,
                            row.size, last);
        }
        if (row.size == last) { /* repeated after a protocol change: the later row wins */
            r->rows[r->nrows - 1] = row;
            return TB_OK;
        }
    }
    if (r->nrows == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        ng_row *rows = realloc(r->rows, cap * sizeof *rows);
        if (rows == NULL)
            return TB_ERR_NOMEM;
        r->rows = rows;
        r->cap = cap;
    }
    r->rows[r->nrows++] = row;
    return TB_OK;
}

static int parse_line(ng_reader *r, char *line)
{
    char *tok[NG_NCOL];
    const char *p = line;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '\0' || *p == '#')
        return TB_OK;
    /* Netgauge's screen output ("Testing 1 bytes 1000 times:", " L=75.1 s=1
     * o_s=..."), not its -o file, is a common mistake: say so. */
    int screen = strncmp(p, "Testing", 7) == 0 || strstr(p, "L=") != NULL;
    int n = split(line, tok, NG_NCOL);
    if (n != NG_NCOL) {
        return tb__errf(r->err, r->errlen, TB_ERR_PARSE,
                        "%s:%ld: expected %d columns (%s), got %d%s", r->path, r->line, NG_NCOL,
                        NG_HEADER, n,
                        screen ? " (this looks like netgauge's screen output; give the file it "
                                 "writes with -o FILE)"
                               : "");
    }
    double v[NG_NCOL];
    TB_CHECK(parse_cols(r, tok, v));
    return add_row(r, v);
}

static int read_rows(ng_reader *r)
{
    errno = 0;
    FILE *f = fopen(r->path, "r");
    if (f == NULL) {
        return tb__errf(r->err, r->errlen, TB_ERR_IO, "%s: cannot read: %s", r->path,
                        strerror(errno));
    }
    char *line = NULL;
    size_t cap = 0;
    int rc = TB_OK;
    errno = 0;
    while (rc == TB_OK && getline(&line, &cap, f) >= 0) {
        r->line++;
        rc = parse_line(r, line);
    }
    if (rc == TB_OK && ferror(f)) {
        rc = tb__errf(r->err, r->errlen, TB_ERR_IO, "%s: cannot read: %s", r->path,
                      strerror(errno ? errno : EIO));
    }
    free(line);
    fclose(f);
    return rc;
}

/* Least-squares slope of gap over size for rows[lo, hi) (distinct sizes);
 * NaN if it cannot be fitted. */
static double slope(const ng_row *rows, size_t lo, size_t hi)
{
    size_t n = hi - lo;
    double *x = malloc(2 * n * sizeof *x), *y = x + n;
    tb_linfit f;
    if (!x)
        return NAN;
    for (size_t i = 0; i < n; i++) {
        x[i] = rows[lo + i].size;
        y[i] = rows[lo + i].gap;
    }
    int rc = tb_linfit_compute(x, y, n, &f);
    free(x);
    return rc == TB_OK ? f.slope : NAN;
}

static int derive(ng_reader *r, tb_loggps *out)
{
    if (r->nrows == 0) {
        return tb__errf(r->err, r->errlen, TB_ERR_PARSE,
                        "%s: no data rows (expected the table of "
                        "'netgauge -x loggp -o FILE': %s)",
                        r->path, NG_HEADER);
    }
    if (r->nrows == 1) {
        return tb__errf(r->err, r->errlen, TB_ERR_PARSE,
                        "%s: only one message size (%.17g bytes); G needs "
                        "two or more",
                        r->path, r->rows[0].size);
    }
    size_t m = r->nrows, k = (m + 1) / 2 < 2 ? 2 : (m + 1) / 2;
    double G = slope(r->rows, m - k, m);
    if (!(G >= 0)) {
        return tb__errf(r->err, r->errlen, TB_ERR_RANGE,
                        "%s: negative G (%g us per byte, fitted over sizes "
                        "%.17g to %.17g)",
                        r->path, G, r->rows[m - k].size, r->rows[m - 1].size);
    }
    const ng_row *s0 = &r->rows[0];
    double bytes = s0->size > 1 ? s0->size - 1 : 0; /* the (s-1) of LogGP */
    double g = s0->gap - bytes * G;
    double L = s0->prtt1 / 2 - s0->os - s0->or_ - bytes * G;
    tb__model_net_defaults(out);
    out->L = (L > 0 ? L : 0) * 1e-6;
    out->os = s0->os * 1e-6;
    out->or_ = s0->or_ * 1e-6;
    out->g = (g > 0 ? g : 0) * 1e-6;
    out->G = G * 1e-6;
    return TB_OK;
}

int tb_loggps_read_netgauge(const char *path, tb_loggps *out, char *err, size_t errlen)
{
    if (path == NULL || out == NULL)
        return TB_ERR_INVALID;
    ng_reader r = {.path = path, .err = err, .errlen = errlen};
    tb_loggps net;
    int rc = read_rows(&r);
    if (rc == TB_OK)
        rc = derive(&r, &net);
    free(r.rows);
    if (rc == TB_OK)
        *out = net;
    return rc;
}
