/*
 * engine.c - the branch-and-bound expansion shared by workers, masters
 * without workers, the supervisor's start-up and the sequential search:
 * the subproblem queue, one expansion step, a depth-limited task.
 */
#include "bnb/bnb_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- queue ------------------------------------------------------------- */

/* a comes before b */
static int before(const tb__bnb_heap *h, const tb__bnb_sub *a, const tb__bnb_sub *b)
{
    if (h->dive || h->tight) {
        if (a->depth != b->depth)
            return a->depth > b->depth;
        return a->bound < b->bound;
    }
    if (a->bound != b->bound)
        return a->bound < b->bound;
    return a->depth > b->depth;
}

static void sift_up(tb__bnb_heap *h, size_t i)
{
    tb__bnb_sub s = h->a[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(h, &s, &h->a[p]))
            break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = s;
}

static void sift_down(tb__bnb_heap *h, size_t i)
{
    tb__bnb_sub s = h->a[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && before(h, &h->a[c + 1], &h->a[c]))
            c++;
        if (!before(h, &h->a[c], &s))
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    h->a[i] = s;
}

/* What a sub costs the queue: its bytes, its entry, the allocator's word. */
static size_t sub_cost(const tb__bnb_sub *s) { return s->len + sizeof *s + 16; }

static void heapify(tb__bnb_heap *h)
{
    for (size_t i = h->n / 2; i-- > 0;)
        sift_down(h, i);
}

/* Over the limit: depth first until under half of it (the hysteresis keeps
 * the O(n) reorder rare). */
static void check_limit(tb__bnb_heap *h)
{
    int tight = h->tight;
    if (h->limit && !tight && h->bytes > h->limit) {
        tight = 1;
        h->tightened++;
    } else if (tight && (!h->limit || h->bytes < h->limit / 2)) {
        tight = 0;
    }
    if (tight != h->tight) {
        int was_depth_first = h->dive || h->tight;
        h->tight = tight;
        if (was_depth_first != (h->dive || h->tight))
            heapify(h);
    }
}

int tb__bnb_heap_push(tb__bnb_heap *h, tb__bnb_sub s)
{
    TB_CHECK(tb_grow(&h->a, &h->cap, h->n, sizeof *h->a, 64));
    h->a[h->n++] = s;
    h->bytes += sub_cost(&s);
    sift_up(h, h->n - 1);
    check_limit(h);
    return TB_OK;
}

int tb__bnb_heap_pop(tb__bnb_heap *h, tb__bnb_sub *out)
{
    if (h->n == 0)
        return 0;
    *out = h->a[0];
    h->bytes -= sub_cost(out);
    h->a[0] = h->a[--h->n];
    if (h->n > 0)
        sift_down(h, 0);
    check_limit(h);
    return 1;
}

double tb__bnb_heap_min_bound(const tb__bnb_heap *h)
{
    if (h->n == 0)
        return INFINITY;
    if (!h->dive && !h->tight)
        return h->a[0].bound;
    double m = INFINITY;
    for (size_t i = 0; i < h->n; i++)
        if (h->a[i].bound < m)
            m = h->a[i].bound;
    return m;
}

size_t tb__bnb_heap_prune(tb__bnb_heap *h, double cutoff, int dive)
{
    size_t k = 0, dropped = 0;
    for (size_t i = 0; i < h->n; i++) {
        if (h->a[i].bound < cutoff) {
            h->a[k++] = h->a[i];
        } else {
            h->bytes -= sub_cost(&h->a[i]);
            free(h->a[i].data);
            dropped++;
        }
    }
    h->n = k;
    h->dive = dive;
    if (h->tight && h->bytes < h->limit / 2)
        h->tight = 0;
    heapify(h);
    return dropped;
}

void tb__bnb_heap_free(tb__bnb_heap *h)
{
    for (size_t i = 0; i < h->n; i++)
        free(h->a[i].data);
    free(h->a);
    size_t limit = h->limit;
    uint64_t tightened = h->tightened;
    memset(h, 0, sizeof *h);
    h->limit = limit; /* the queue stays usable with its settings */
    h->tightened = tightened;
}

/* ---- children ---------------------------------------------------------- */

int tb_bnb_child(tb_bnb_children *kids, const void *sub, size_t len, double bound)
{
    if (!kids || (len > 0 && !sub) || len > UINT32_MAX)
        return TB_ERR_INVALID;
    TB_CHECK(tb_grow(&kids->k, &kids->cap, kids->n, sizeof *kids->k, 16));
    size_t off = kids->bytes.len;
    TB_CHECK(tb_buf_append(&kids->bytes, sub, len));
    kids->k[kids->n++] = (struct tb__bnb_kid){off, len, bound};
    return TB_OK;
}

double tb_bnb_children_cutoff(const tb_bnb_children *kids)
{
    return kids ? kids->cutoff : NAN;
}

int tb_bnb_split_by_branch(const tb_bnb_ops *ops, void *ctx, const void *sub, size_t len,
                           int ways, tb_bnb_children *kids)
{
    if (!ops || !ops->branch || !kids || (len > 0 && !sub))
        return TB_ERR_INVALID;
    size_t want = ways < 2 ? 2 : ways > (1 << 20) ? (size_t)1 << 20 : (size_t)ways;
    /* q: every piece so far in order, q.k[head ..] not cut yet; leaves go
     * to kids at once (kept first, as found) */
    tb_bnb_children q = {TB_BUF_INIT, NULL, 0, 0, NAN}, one = {TB_BUF_INIT, NULL, 0, 0, NAN};
    one.cutoff = kids->cutoff;
    size_t head = 0, leaves = 0;
    int rc = tb_bnb_child(&q, sub, len, NAN);
    while (rc == TB_OK && head < q.n && leaves + (q.n - head) < want) {
        struct tb__bnb_kid p = q.k[head++];
        one.n = 0;
        tb_buf_clear(&one.bytes);
        rc = ops->branch(ctx, q.bytes.data + p.off, p.len, &one);
        if (rc == TB_OK && one.n == 0) { /* a leaf: kept as it is */
            rc = tb_bnb_child(kids, q.bytes.data + p.off, p.len, p.bound);
            leaves++;
        }
        for (size_t i = 0; rc == TB_OK && i < one.n; i++)
            rc = tb_bnb_child(&q, one.bytes.data + one.k[i].off, one.k[i].len,
                              isnan(one.k[i].bound) ? p.bound : one.k[i].bound);
    }
    for (size_t i = head; rc == TB_OK && i < q.n; i++)
        rc = tb_bnb_child(kids, q.bytes.data + q.k[i].off, q.k[i].len, q.k[i].bound);
    tb_buf_free(&q.bytes);
    free(q.k);
    tb_buf_free(&one.bytes);
    free(one.k);
    return rc;
}

/* ---- engine ------------------------------------------------------------ */

void tb__bnb_engine_init(tb__bnb_engine *e, const tb_bnb_ops *ops, void *ctx, double gap)
{
    memset(e, 0, sizeof *e);
    e->ops = ops;
    e->ctx = ctx;
    e->max = ops->sense == TB_BNB_MAXIMIZE;
    e->gap = gap;
    e->inc = INFINITY;
    e->kids.cutoff = NAN;
}

void tb__bnb_engine_free(tb__bnb_engine *e)
{
    tb_buf_free(&e->sol);
    tb_buf_free(&e->kids.bytes);
    free(e->kids.k);
    tb_buf_free(&e->cur);
    tb_buf_free(&e->tmp);
    free(e->stack);
    tb_buf_free(&e->arena);
    memset(e, 0, sizeof *e);
}

double tb__bnb_gap(double inc, double lower)
{
    return isfinite(inc) && inc != 0 && isfinite(lower) ? fabs(inc - lower) / fabs(inc) : INFINITY;
}

double tb__bnb_cutoff(const tb__bnb_engine *e)
{
    if (!isfinite(e->inc))
        return e->inc;
    return e->inc - e->gap * fabs(e->inc);
}

void tb__bnb_engine_offer(tb__bnb_engine *e, double inc)
{
    if (inc < e->inc)
        e->inc = inc;
}

/* The problem's value or bound in minimisation sense. */
static double inward(const tb__bnb_engine *e, double v) { return e->max ? -v : v; }

static int bound_of(tb__bnb_engine *e, const void *data, size_t len, double *b)
{
    double v = NAN;
    TB_CHECK(e->ops->bound(e->ctx, data, len, &v));
    if (isnan(v)) {
        TB_LOG_ERR("branch-and-bound: the problem's bound is not a number");
        return TB_ERR_RANGE;
    }
    *b = inward(e, v);
    return TB_OK;
}

int tb__bnb_root(tb__bnb_engine *e, tb__bnb_sub *out)
{
    tb_buf_clear(&e->cur);
    TB_CHECK(e->ops->root(e->ctx, &e->cur));
    if (e->cur.len > UINT32_MAX)
        return TB_ERR_RANGE;
    double b;
    TB_CHECK(bound_of(e, e->cur.data, e->cur.len, &b));
    unsigned char *d = malloc(e->cur.len ? e->cur.len : 1);
    if (!d)
        return TB_ERR_NOMEM;
    if (e->cur.len)
        memcpy(d, e->cur.data, e->cur.len);
    *out = (tb__bnb_sub){b, 0, (uint32_t)e->cur.len, d};
    return TB_OK;
}

/*
 * One step on the subproblem in e->cur (bound b): evaluate it (maybe a
 * better incumbent), and unless it is no longer worth it, branch: the
 * children are in e->kids with bounds in minimisation sense, each at
 * least b.  Returns TB_OK with e->kids.n == 0 when it was pruned or is a
 * leaf.
 */
static int step(tb__bnb_engine *e, double b)
{
    e->kids.n = 0;
    tb_buf_clear(&e->kids.bytes);
    if (!(b < tb__bnb_cutoff(e)))
        return TB_OK;
    e->nodes++;
    double v = NAN;
    tb_buf_clear(&e->tmp);
    TB_CHECK(e->ops->evaluate(e->ctx, e->cur.data, e->cur.len, &v, &e->tmp));
    if (!isnan(v) && inward(e, v) < e->inc) {
        e->inc = inward(e, v);
        tb_buf_clear(&e->sol);
        TB_CHECK(tb_buf_append(&e->sol, e->tmp.data, e->tmp.len));
        e->improved = 1;
    }
    double cut = tb__bnb_cutoff(e);
    if (!(b < cut))
        return TB_OK;
    e->kids.cutoff = e->max ? -cut : cut;
    TB_CHECK(e->ops->branch(e->ctx, e->cur.data, e->cur.len, &e->kids));
    for (size_t i = 0; i < e->kids.n; i++) {
        struct tb__bnb_kid *k = &e->kids.k[i];
        double kb;
        if (isnan(k->bound))
            TB_CHECK(bound_of(e, e->kids.bytes.data + k->off, k->len, &kb));
        else
            kb = inward(e, k->bound);
        k->bound = kb < b ? b : kb;
    }
    return TB_OK;
}

static int set_cur(tb__bnb_engine *e, const void *data, size_t len)
{
    tb_buf_clear(&e->cur);
    return tb_buf_append(&e->cur, data, len);
}

/* Child k of e->kids into h, as a subproblem of its own (bound b). */
static int push_kid(tb__bnb_engine *e, const struct tb__bnb_kid *k, double b, uint32_t depth,
                    tb__bnb_heap *h)
{
    if (k->len > UINT32_MAX)
        return TB_ERR_RANGE;
    unsigned char *d = malloc(k->len ? k->len : 1);
    if (!d)
        return TB_ERR_NOMEM;
    if (k->len)
        memcpy(d, e->kids.bytes.data + k->off, k->len);
    int rc = tb__bnb_heap_push(h, (tb__bnb_sub){b, depth, (uint32_t)k->len, d});
    if (rc != TB_OK)
        free(d);
    return rc;
}

int tb__bnb_expand_into(tb__bnb_engine *e, const tb__bnb_sub *s, tb__bnb_heap *h)
{
    TB_CHECK(set_cur(e, s->data, s->len));
    TB_CHECK(step(e, s->bound));
    double cut = tb__bnb_cutoff(e);
    for (size_t i = 0; i < e->kids.n; i++) {
        const struct tb__bnb_kid *k = &e->kids.k[i];
        if (k->bound < cut)
            TB_CHECK(push_kid(e, k, k->bound, s->depth + 1, h));
    }
    return TB_OK;
}

int tb__bnb_can_split(const tb_bnb_ops *ops)
{
    return ops->size >= offsetof(tb_bnb_ops, split) + sizeof ops->split && ops->split;
}

int tb__bnb_split_into(tb__bnb_engine *e, const tb__bnb_sub *s, int ways, tb__bnb_heap *h,
                       size_t *added)
{
    *added = 0;
    e->kids.n = 0;
    tb_buf_clear(&e->kids.bytes);
    TB_CHECK(e->ops->split(e->ctx, s->data, s->len, ways, &e->kids));
    if (e->kids.n < 2) /* not cut: s stays as it is */
        return TB_OK;
    double cut = tb__bnb_cutoff(e);
    for (size_t i = 0; i < e->kids.n; i++) {
        const struct tb__bnb_kid *k = &e->kids.k[i];
        double kb = isnan(k->bound) ? s->bound : inward(e, k->bound);
        if (kb < s->bound)
            kb = s->bound;
        if (!(kb < cut))
            continue;
        TB_CHECK(push_kid(e, k, kb, s->depth + 1, h));
        (*added)++;
    }
    /* every piece pruned: s is done, as if it had been */
    if (*added == 0)
        *added = 1;
    return TB_OK;
}

int tb__bnb_split_pool(tb__bnb_engine *e, tb__bnb_heap *h, uint64_t want)
{
    while (h->n > 0 && h->n < want && !h->tight) {
        size_t n = h->n;
        uint64_t ways = (want + n - 1) / n;
        tb__bnb_sub *subs = malloc(n * sizeof *subs);
        if (!subs)
            return TB_ERR_NOMEM;
        for (size_t i = 0; i < n; i++)
            tb__bnb_heap_pop(h, &subs[i]);
        int rc = TB_OK, cut = 0;
        for (size_t i = 0; i < n; i++) {
            size_t added = 0;
            if (rc == TB_OK)
                rc = tb__bnb_split_into(e, &subs[i], ways > INT_MAX ? INT_MAX : (int)ways, h,
                                        &added);
            if (rc == TB_OK && added == 0) { /* not cut: back as it was */
                rc = tb__bnb_heap_push(h, subs[i]);
                if (rc == TB_OK)
                    continue;
            }
            cut |= added > 0;
            free(subs[i].data);
        }
        free(subs);
        if (rc != TB_OK)
            return rc;
        if (!cut)
            break; /* nothing can be cut further */
    }
    return TB_OK;
}

static int push_frame(tb__bnb_engine *e, const void *data, size_t len, double bound,
                      uint32_t depth)
{
    TB_CHECK(tb_grow(&e->stack, &e->capstack, e->nstack, sizeof *e->stack, 64));
    size_t off = e->arena.len;
    TB_CHECK(tb_buf_append(&e->arena, data, len));
    e->stack[e->nstack++] = (struct tb__bnb_frame){off, len, bound, depth};
    return TB_OK;
}

/* The budget is spent: what is left on the stack goes out as it is. */
static int flush_stack(tb__bnb_engine *e, tb_buf *out, uint32_t *nout)
{
    double cut = tb__bnb_cutoff(e);
    for (size_t i = 0; i < e->nstack; i++) {
        const struct tb__bnb_frame *f = &e->stack[i];
        if (!(f->bound < cut))
            continue;
        TB_CHECK(tb__bnb_pack_sub(out, f->bound, f->depth, e->arena.data + f->off, f->len));
        (*nout)++;
    }
    e->nstack = 0;
    e->cut = 1;
    return TB_OK;
}

int tb__bnb_expand(tb__bnb_engine *e, const void *data, size_t len, double bound, uint32_t depth,
                   uint32_t levels, size_t budget, tb_buf *out, uint32_t *nout)
{
    if (levels == 0)
        return TB_ERR_INVALID;
    e->nstack = 0;
    tb_buf_clear(&e->arena);
    TB_CHECK(push_frame(e, data, len, bound, depth));
    while (e->nstack > 0) {
        if (budget && out->len >= budget)
            return flush_stack(e, out, nout);
        struct tb__bnb_frame f = e->stack[--e->nstack];
        if (!(f.bound < tb__bnb_cutoff(e))) {
            e->arena.len = f.off;
            continue;
        }
        if (f.depth == depth + levels) {
            TB_CHECK(tb__bnb_pack_sub(out, f.bound, f.depth, e->arena.data + f.off, f.len));
            (*nout)++;
            e->arena.len = f.off;
            continue;
        }
        TB_CHECK(set_cur(e, e->arena.data + f.off, f.len));
        e->arena.len = f.off; /* the frame's bytes are in cur now */
        TB_CHECK(step(e, f.bound));
        double cut = tb__bnb_cutoff(e);
        /* Last child pushed first: the first child is expanded first. */
        for (size_t i = e->kids.n; i-- > 0;) {
            const struct tb__bnb_kid *k = &e->kids.k[i];
            if (k->bound < cut)
                TB_CHECK(push_frame(e, e->kids.bytes.data + k->off, k->len, k->bound,
                                    f.depth + 1));
        }
    }
    return TB_OK;
}

/* ---- wire -------------------------------------------------------------- */

int tb__bnb_pack_sub(tb_buf *b, double bound, uint32_t depth, const void *data, size_t len)
{
    if (len > UINT32_MAX)
        return TB_ERR_RANGE;
    TB_CHECK(tb_buf_pack_f64(b, bound));
    TB_CHECK(tb_buf_pack_u32(b, depth));
    return tb_buf_pack_bytes(b, data, (uint32_t)len);
}

int tb__bnb_unpack_sub(tb_buf *b, tb__bnb_sub *out)
{
    double bound;
    uint32_t depth, len;
    const void *data;
    TB_CHECK(tb_buf_unpack_f64(b, &bound));
    TB_CHECK(tb_buf_unpack_u32(b, &depth));
    TB_CHECK(tb_buf_unpack_bytes(b, &data, &len));
    unsigned char *d = malloc(len ? len : 1);
    if (!d)
        return TB_ERR_NOMEM;
    if (len)
        memcpy(d, data, len);
    *out = (tb__bnb_sub){bound, depth, len, d};
    return TB_OK;
}

/* ---- the sequential search --------------------------------------------- */

int tb__bnb_serial_on(tb__bnb_engine *e, tb__bnb_heap *h, uint64_t max_nodes,
                      const tb__bnb_serial_hook *hook, double *bound_left, int *proven)
{
    int rc = TB_OK;
    int dive = h->dive;
    double next = hook && hook->every > 0 ? tb_wtime() + hook->every : INFINITY;
    unsigned steps = 0; /* the clock every 64 turns: a read costs 50 ns here, a node from 0.5 us */
    tb__bnb_sub s;
    while (rc == TB_OK && h->n > 0 && (max_nodes == 0 || e->nodes < max_nodes) &&
           !tb_signals_pending()) {
        if (dive && isfinite(e->inc)) {
            dive = 0;
            tb__bnb_heap_prune(h, tb__bnb_cutoff(e), 0);
            continue;
        }
        /* Best first: with a gap, stop once the best bound is close enough
         * (not while the queue is depth first for its size: its least
         * bound is not at the top then). */
        if (!dive && !h->tight && !(tb__bnb_heap_min_bound(h) < tb__bnb_cutoff(e)))
            break;
        /* Between two nodes the queue and the incumbent are the whole
         * search: a checkpoint taken here is exact. */
        if (next < INFINITY && (++steps & 63) == 0 && tb_wtime() >= next) {
            rc = hook->fn(hook->arg, e, h);
            next = tb_wtime() + hook->every;
            continue;
        }
        tb__bnb_heap_pop(h, &s);
        rc = tb__bnb_expand_into(e, &s, h);
        free(s.data);
    }
    /* What is left cannot beat the incumbent by more than the gap; with
     * nothing left that could beat it at all, the incumbent is optimal. */
    double mb = tb__bnb_heap_min_bound(h);
    double left = mb < e->inc ? mb : e->inc;
    /* With a gap, what was dropped may beat the incumbent by less than it. */
    if (e->gap > 0 && tb__bnb_cutoff(e) < left)
        left = tb__bnb_cutoff(e);
    *proven = !(left < e->inc);
    *bound_left = left;
    if (h->tightened)
        TB_LOG_INFO("branch-and-bound: the queue went over %zu bytes %" PRIu64
                    " times (depth first until half)", h->limit, h->tightened);
    return rc;
}

int tb__bnb_serial(tb__bnb_engine *e, uint64_t max_nodes, size_t pool_limit, double *bound_left,
                   int *proven)
{
    tb__bnb_heap h = {.dive = 1, .limit = pool_limit};
    tb__bnb_sub s = {0}; /* unset when the root or its bound fails */
    int rc = tb__bnb_root(e, &s);
    if (rc == TB_OK)
        rc = tb__bnb_heap_push(&h, s);
    if (rc != TB_OK && rc != TB_ERR_NOMEM)
        free(s.data);
    if (rc == TB_OK)
        rc = tb__bnb_serial_on(e, &h, max_nodes, NULL, bound_left, proven);
    tb__bnb_heap_free(&h);
    return rc;
}
