/*
 * knapsack.c - 0/1 knapsack for `tenbin bnb knapsack FILE`.
 *
 * Input (Pisinger's instances, as in the shared data): the first line is
 * `n capacity`, then n profits, then n weights (non-negative integers,
 * whitespace anywhere).  Maximise the profit of the chosen items under the
 * capacity.
 *
 * Items are sorted by profit/weight, best first.  A subproblem has decided
 * the first k items (in that order): u32 k, i64 profit, i64 room left, then
 * a bitset of the chosen ones.  Bound: Dantzig's, the linear relaxation of
 * the rest (whole items in order while they fit, then the fraction of the
 * first that does not), rounded down since profits are integers.  Branch:
 * take item k (if it fits), or leave it.  Evaluate: the greedy completion
 * (every later item that still fits).
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer.h"
#include "problems.h"

typedef struct knap {
    uint32_t n;
    int64_t cap;
    int64_t *p, *w;   /* sorted by ratio, best first */
    uint32_t *orig;   /* sorted position -> index in the file */
    size_t nbytes;    /* of the bitset */
    unsigned char *scratch;
} knap;

typedef struct ksub {
    uint32_t k;
    int64_t profit, room;
} ksub;

enum { HDR = 4 + 8 + 8 };

static void get_hdr(const void *s, ksub *h)
{
    const unsigned char *b = s;
    memcpy(&h->k, b, 4);
    memcpy(&h->profit, b + 4, 8);
    memcpy(&h->room, b + 12, 8);
}

static void put_hdr(void *s, const ksub *h)
{
    unsigned char *b = s;
    memcpy(b, &h->k, 4);
    memcpy(b + 4, &h->profit, 8);
    memcpy(b + 12, &h->room, 8);
}

static int check_len(const knap *K, size_t len)
{
    return len == HDR + K->nbytes ? TB_OK : TB_ERR_PARSE;
}

static int k_root(void *ctx, tb_buf *sub)
{
    knap *K = ctx;
    TB_CHECK(tb_buf_reserve(sub, HDR + K->nbytes));
    ksub h = {0, 0, K->cap};
    put_hdr(sub->data + sub->len, &h);
    memset(sub->data + sub->len + HDR, 0, K->nbytes);
    sub->len += HDR + K->nbytes;
    return TB_OK;
}

static double dantzig(const knap *K, const ksub *h)
{
    if (h->room < 0)
        return -INFINITY;
    int64_t v = h->profit, r = h->room;
    for (uint32_t i = h->k; i < K->n; i++) {
        if (K->w[i] <= r) {
            v += K->p[i];
            r -= K->w[i];
        } else {
            v += K->p[i] * r / K->w[i]; /* floor of the fraction */
            break;
        }
    }
    return (double)v;
}

static int k_bound(void *ctx, const void *s, size_t len, double *bound)
{
    knap *K = ctx;
    TB_CHECK(check_len(K, len));
    ksub h;
    get_hdr(s, &h);
    *bound = dantzig(K, &h);
    return TB_OK;
}

static int k_branch(void *ctx, const void *s, size_t len, tb_bnb_children *kids)
{
    knap *K = ctx;
    TB_CHECK(check_len(K, len));
    ksub h;
    get_hdr(s, &h);
    if (h.k >= K->n)
        return TB_OK;
    uint32_t i = h.k;
    memcpy(K->scratch, s, len);
    if (K->w[i] <= h.room) {
        ksub t = {i + 1, h.profit + K->p[i], h.room - K->w[i]};
        put_hdr(K->scratch, &t);
        K->scratch[HDR + i / 8] |= (unsigned char)(1u << (i % 8));
        TB_CHECK(tb_bnb_child(kids, K->scratch, len, dantzig(K, &t)));
        K->scratch[HDR + i / 8] &= (unsigned char)~(1u << (i % 8));
    }
    ksub l = {i + 1, h.profit, h.room};
    put_hdr(K->scratch, &l);
    return tb_bnb_child(kids, K->scratch, len, dantzig(K, &l));
}

static int k_evaluate(void *ctx, const void *s, size_t len, double *value, tb_buf *sol)
{
    knap *K = ctx;
    TB_CHECK(check_len(K, len));
    ksub h;
    get_hdr(s, &h);
    if (h.room < 0)
        return TB_OK;
    TB_CHECK(tb_buf_reserve(sol, K->nbytes));
    unsigned char *bits = sol->data + sol->len;
    memcpy(bits, (const unsigned char *)s + HDR, K->nbytes);
    int64_t v = h.profit, r = h.room;
    for (uint32_t i = h.k; i < K->n; i++)
        if (K->w[i] <= r) {
            v += K->p[i];
            r -= K->w[i];
            bits[i / 8] |= (unsigned char)(1u << (i % 8));
        }
    sol->len += K->nbytes;
    *value = (double)v;
    return TB_OK;
}

static const tb_bnb_ops knap_ops;

/* The start-up's split: k_branch breadth first (the next items fixed),
 * each piece with its Dantzig bound (cheap). */
static int k_split(void *ctx, const void *s, size_t len, int ways, tb_bnb_children *kids)
{
    return tb_bnb_split_by_branch(&knap_ops, ctx, s, len, ways, kids);
}

static const tb_bnb_ops knap_ops = {sizeof(tb_bnb_ops), TB_BNB_MAXIMIZE, k_root, k_bound,
                                    k_branch, k_evaluate, k_split};

/* ---- input ----------------------------------------------------------------- */

static void k_destroy(void *ctx)
{
    knap *K = ctx;
    if (!K)
        return;
    free(K->p);
    free(K->w);
    free(K->orig);
    free(K->scratch);
    free(K);
}

static const knap *sort_ctx;
static int by_ratio(const void *a, const void *b)
{
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const knap *K = sort_ctx;
    /* p_i / w_i > p_j / w_j, without division (weights may be 0) */
    int64_t l = K->p[i] * K->w[j], r = K->p[j] * K->w[i]; /* each < 2^62 */
    if (l != r)
        return l > r ? -1 : 1;
    return i < j ? -1 : i > j;
}

static int k_load(const char *path, void **out, char *err, size_t errlen)
{
    tb_lexer r;
    if (tb_lexer_open(&r, path, err, errlen) != TB_OK)
        return TB_ERR_IO;
    int rc = TB_ERR_PARSE;
    knap *K = calloc(1, sizeof *K);
    int64_t n = 0, cap = 0;
    int got = K ? tb_lexer_int(&r, 0, INT32_MAX, &n) : -1;
    if (got == 0)
        tb_lexer_error(&r, r.line, "empty file (expected 'n capacity')");
    if (got <= 0)
        goto out;
    if (n < 1 || n > 10000000) {
        tb_lexer_error(&r, r.tok_line, "the number of items must be 1..10000000, got %" PRId64, n);
        goto out;
    }
    if ((got = tb_lexer_int(&r, 0, INT32_MAX, &cap)) <= 0) {
        if (got == 0)
            tb_lexer_error(&r, r.tok_line, "expected the capacity after the number of items");
        goto out;
    }
    K->n = (uint32_t)n;
    K->cap = cap;
    int64_t *p = calloc((size_t)n, sizeof *p), *w = calloc((size_t)n, sizeof *w);
    K->p = p;
    K->w = w;
    K->orig = calloc((size_t)n, sizeof *K->orig);
    K->nbytes = ((size_t)n + 7) / 8;
    K->scratch = malloc(HDR + K->nbytes);
    if (!p || !w || !K->orig || !K->scratch) {
        snprintf(err, errlen, "%s: out of memory for %" PRId64 " items", path, n);
        rc = TB_ERR_NOMEM;
        goto out;
    }
    for (int pass = 0; pass < 2; pass++) {
        int64_t *dst = pass ? w : p;
        for (int64_t i = 0; i < n; i++) {
            if ((got = tb_lexer_int(&r, 0, INT32_MAX, &dst[i])) <= 0) {
                if (got == 0)
                    tb_lexer_error(&r, r.tok_line, "expected %" PRId64 " %s, found %" PRId64, n,
                                   pass ? "weights" : "profits", i);
                goto out;
            }
        }
    }
    int64_t extra;
    if ((got = tb_lexer_int(&r, 0, INT32_MAX, &extra)) != 0) {
        if (got > 0)
            tb_lexer_error(&r, r.tok_line, "unexpected '%" PRId64 "' after the %" PRId64 " weights",
                           extra, n);
        goto out;
    }
    /* Sort (the ratio order), keeping where each item came from. */
    int64_t *p0 = malloc((size_t)n * sizeof *p0), *w0 = malloc((size_t)n * sizeof *w0);
    if (!p0 || !w0) {
        free(p0);
        free(w0);
        snprintf(err, errlen, "%s: out of memory for %" PRId64 " items", path, n);
        rc = TB_ERR_NOMEM;
        goto out;
    }
    memcpy(p0, p, (size_t)n * sizeof *p);
    memcpy(w0, w, (size_t)n * sizeof *w);
    for (uint32_t i = 0; i < K->n; i++)
        K->orig[i] = i;
    sort_ctx = K;
    qsort(K->orig, K->n, sizeof *K->orig, by_ratio);
    for (uint32_t i = 0; i < K->n; i++) {
        p[i] = p0[K->orig[i]];
        w[i] = w0[K->orig[i]];
    }
    free(p0);
    free(w0);
    rc = TB_OK;
out:
    tb_lexer_close(&r);
    if (rc != TB_OK) {
        if (K && rc == TB_ERR_PARSE && !err[0])
            snprintf(err, errlen, "%s: cannot read it", path);
        k_destroy(K);
        return rc;
    }
    *out = K;
    return TB_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The chosen items as indices in the file, ascending. */
static int chosen(const knap *K, const void *sol, size_t len, uint32_t **out, size_t *nout)
{
    if (len != K->nbytes)
        return TB_ERR_PARSE;
    const unsigned char *bits = sol;
    uint32_t *v = malloc((size_t)K->n * sizeof *v + 1);
    if (!v)
        return TB_ERR_NOMEM;
    size_t k = 0;
    for (uint32_t i = 0; i < K->n; i++)
        if (bits[i / 8] & (1u << (i % 8)))
            v[k++] = K->orig[i];
    qsort(v, k, sizeof *v, cmp_u32);
    *out = v;
    *nout = k;
    return TB_OK;
}

static int k_solution_json(void *ctx, const void *sol, size_t len, tb_buf *out)
{
    uint32_t *v;
    size_t k;
    TB_CHECK(chosen(ctx, sol, len, &v, &k));
    int rc = tb_buf_printf(out, "[");
    for (size_t i = 0; i < k && rc == TB_OK; i++)
        rc = tb_buf_printf(out, "%s%" PRIu32, i ? ", " : "", v[i]);
    if (rc == TB_OK)
        rc = tb_buf_printf(out, "]");
    free(v);
    return rc;
}

static int k_check(void *ctx, const void *sol, size_t len, double value)
{
    const knap *K = ctx;
    uint32_t *v;
    size_t k;
    TB_CHECK(chosen(K, sol, len, &v, &k));
    int64_t pw = 0, ww = 0;
    for (uint32_t i = 0; i < K->n; i++)
        if (((const unsigned char *)sol)[i / 8] & (1u << (i % 8))) {
            pw += K->p[i];
            ww += K->w[i];
        }
    free(v);
    return ww <= K->cap && (double)pw == value ? TB_OK : TB_ERR_RANGE;
}

const tb_bnb_problem tb_bnb_knapsack = {.name = "knapsack",
                                        .ops = &knap_ops,
                                        .load = k_load,
                                        .destroy = k_destroy,
                                        .solution_json = k_solution_json,
                                        .check = k_check};
