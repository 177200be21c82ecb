/*
 * sched_core.c - what the list schedulers share: host timelines with an
 * index of idle gaps (insertion policy), data-ready times of a task on every
 * host in O(preds log preds + hosts), the ready heap, and rank averages.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flow/sched_internal.h"

/* ---- set-up ------------------------------------------------------------------ */

static void rank_averages(tb__sched *s)
{
    const tb_flow_hosts *H = s->H;
    s->avgL = s->avgG = 0;
    if (s->m < 2)
        return;
    /* hosts per cluster, then the mean over ordered pairs of distinct hosts */
    double *cnt = calloc(s->C, sizeof *cnt);
    if (!cnt)
        return;
    for (size_t h = 0; h < s->m; h++)
        cnt[H->cluster[h]] += 1;
    double pairs = 0, sl = 0, sg = 0;
    for (size_t a = 0; a < s->C; a++)
        for (size_t b = 0; b < s->C; b++) {
            double np = a == b ? cnt[a] * (cnt[a] - 1) : cnt[a] * cnt[b];
            pairs += np;
            sl += np * H->L[a * s->C + b];
            sg += np * H->G[a * s->C + b];
        }
    free(cnt);
    if (pairs > 0) {
        s->avgL = sl / pairs;
        s->avgG = sg / pairs;
    }
}

int tb__sched_init(tb__sched *s, const tb_flow *f, const tb_flow_hosts *H, const tb_flow_state *st,
                   tb_flow_schedule *out, int insertion)
{
    memset(s, 0, sizeof *s);
    s->f = f;
    s->H = H;
    s->st = st;
    s->out = out;
    s->m = H->nhosts;
    s->C = H->nclusters;
    s->now = st ? st->now : 0.0;
    s->insertion = insertion;
    size_t m = s->m, n = f->n;
    s->ready = malloc(m * sizeof *s->ready);
    s->lastend = malloc(m * sizeof *s->lastend);
    s->maxgap = calloc(m, sizeof *s->maxgap);
    s->gaps = calloc(m, sizeof *s->gaps);
    s->stamp = calloc(m, sizeof *s->stamp);
    s->ovval = malloc(m * sizeof *s->ovval);
    s->gc = malloc(s->C * sizeof *s->gc);
    s->gcarg = malloc(s->C * sizeof *s->gcarg);
    s->placed = calloc(n ? n : 1, 1);
    s->npend = calloc(n ? n : 1, sizeof *s->npend);
    s->heap = malloc((n ? n : 1) * sizeof *s->heap);
    s->inv_speed_mean = malloc(sizeof *s->inv_speed_mean);
    if (!s->ready || !s->lastend || !s->maxgap || !s->gaps || !s->stamp || !s->ovval || !s->gc || !s->gcarg ||
        !s->placed || !s->npend || !s->heap || !s->inv_speed_mean) {
        tb__sched_free(s);
        return TB_ERR_NOMEM;
    }
    double inv = 0;
    for (size_t h = 0; h < m; h++) {
        s->ready[h] = s->now;
        s->lastend[h] = -INFINITY;
        inv += 1.0 / H->speed[h];
    }
    *s->inv_speed_mean = inv / (double)m;
    for (size_t t = 0; t < n; t++) {
        out->host[t] = -1;
        out->start[t] = out->finish[t] = NAN;
        int state = st && st->task_state ? st->task_state[t] : TB_FLOW_PENDING;
        if (state == TB_FLOW_PENDING)
            continue;
        int32_t h = st->host[t];
        if (h < 0 || (size_t)h >= m) {
            tb__sched_free(s);
            return TB_ERR_RANGE;
        }
        out->host[t] = h;
        out->finish[t] = st->finish[t];
        out->start[t] = st->start ? st->start[t] : st->finish[t];
        s->placed[t] = 1;
        if (state == TB_FLOW_RUNNING && st->finish[t] > s->ready[h])
            s->ready[h] = st->finish[t];
    }
    rank_averages(s);
    return TB_OK;
}

void tb__sched_free(tb__sched *s)
{
    if (s->gaps)
        for (size_t h = 0; h < s->m; h++) {
            free(s->gaps[h].start);
            free(s->gaps[h].end);
            free(s->gaps[h].bmax);
        }
    free(s->gaps);
    free(s->ready);
    free(s->lastend);
    free(s->maxgap);
    free(s->stamp);
    free(s->ovval);
    free(s->ovhost);
    free(s->gc);
    free(s->gcarg);
    free(s->pr);
    free(s->prg);
    free(s->placed);
    free(s->npend);
    free(s->heap);
    free(s->inv_speed_mean);
    memset(s, 0, sizeof *s);
}

double tb__sched_wbar(const tb__sched *s, size_t t)
{
    const tb_flow *f = s->f;
    if (!f->q)
        return f->work[t] * *s->inv_speed_mean;
    double sum = 0;
    for (size_t h = 0; h < s->m; h++)
        sum += tb__flow_exec(f, s->H, t, h);
    return sum / (double)s->m;
}

void tb__sched_rank_up(const tb__sched *s, double *rank)
{
    const tb_flow *f = s->f;
    for (size_t i = f->n; i-- > 0;) {
        uint32_t t = f->topo[i];
        double best = 0;
        for (size_t e = f->soff[t]; e < f->soff[t + 1]; e++) {
            double v = tb__sched_cbar(s, f->sdata[e]) + rank[f->succ[e]];
            if (v > best)
                best = v;
        }
        rank[t] = tb__sched_wbar(s, t) + best;
    }
}

void tb__sched_rank_down(const tb__sched *s, double *rank)
{
    const tb_flow *f = s->f;
    double *wbar = malloc((f->n ? f->n : 1) * sizeof *wbar);
    for (size_t i = 0; i < f->n; i++) {
        uint32_t t = f->topo[i];
        if (wbar)
            wbar[t] = tb__sched_wbar(s, t);
        double best = 0;
        for (size_t k = f->poff[t]; k < f->poff[t + 1]; k++) {
            uint32_t p = f->pred[k];
            double wp = wbar ? wbar[p] : tb__sched_wbar(s, p);
            double v = rank[p] + wp + tb__sched_cbar(s, f->sdata[f->pedge[k]]);
            if (v > best)
                best = v;
        }
        rank[t] = best;
    }
    free(wbar);
}

/* ---- data-ready times ---------------------------------------------------------- */

static int ensure_pred_space(tb__sched *s, size_t k)
{
    if (k <= s->cappr)
        return TB_OK;
    size_t cap = k < 16 ? 16 : k * 2;
    tb__pred *pr = realloc(s->pr, cap * sizeof *pr);
    if (!pr)
        return TB_ERR_NOMEM;
    s->pr = pr;
    double *g = realloc(s->prg, cap * s->C * sizeof *g);
    if (!g)
        return TB_ERR_NOMEM;
    s->prg = g;
    s->cappr = cap;
    return TB_OK;
}

static int add_override(tb__sched *s, int32_t h)
{
    if (s->stamp[h] == s->cur)
        return TB_OK;
    if (tb_grow((void **)&s->ovhost, &s->capov, s->nov + 1, sizeof *s->ovhost, 16))
        return TB_ERR_NOMEM;
    s->stamp[h] = s->cur;
    s->ovhost[s->nov++] = h;
    return TB_OK;
}

/* Data-ready times of the special hosts of cluster c, given the
 * predecessor `top` of largest g[c].  A host where top is not special gets
 * g[c] of top: top's value there, and no other predecessor's value exceeds
 * its g (a special value never does), which is at most top's.  The at most
 * two hosts where top is special get a direct pass.  O(k + specials). */
static void resolve_cluster(tb__sched *s, size_t k, size_t c, size_t top)
{
    const tb_flow_hosts *H = s->H;
    const tb__pred *t = &s->pr[top];
    for (size_t o = 0; o < s->nov; o++) {
        int32_t h = s->ovhost[o];
        if ((size_t)H->cluster[h] != c)
            continue;
        double acc = t->g[c];
        if (t->sh[0] == h || t->sh[1] == h) {
            acc = -INFINITY;
            for (size_t i = 0; i < k; i++) {
                const tb__pred *q = &s->pr[i];
                double v = q->sh[0] == h ? q->sv[0] : q->sh[1] == h ? q->sv[1] : q->g[c];
                acc = v > acc ? v : acc;
            }
        }
        s->ovval[h] = acc > s->now ? acc : s->now;
    }
}

/* Each predecessor's data is available on any host of cluster c at g[c],
 * earlier on its special hosts (its own, one it was sent to).  The default
 * per cluster is the largest g; special hosts are settled by
 * resolve_cluster. */
int tb__sched_prepare(tb__sched *s, size_t t)
{
    const tb_flow *f = s->f;
    const tb_flow_hosts *H = s->H;
    const tb_flow_state *st = s->st;
    const tb_flow_schedule *out = s->out;
    size_t C = s->C, k = f->poff[t + 1] - f->poff[t];
    if (++s->cur == 0) {
        memset(s->stamp, 0, s->m * sizeof *s->stamp);
        s->cur = 1;
    }
    s->nov = 0;
    for (size_t c = 0; c < C; c++)
        s->gc[c] = s->now;
    if (!k)
        return TB_OK;
    int rc = ensure_pred_space(s, k);
    if (rc)
        return rc;
    for (size_t i = 0; i < k; i++) {
        size_t pk = f->poff[t] + i;
        uint32_t p = f->pred[pk], e = f->pedge[pk];
        int32_t hp = out->host[p];
        double fp = out->finish[p], d = f->sdata[e];
        tb__pred *q = &s->pr[i];
        q->g = s->prg + i * C;
        q->sh[0] = hp;
        q->sv[0] = fp;
        q->sh[1] = -1;
        double base = fp;
        if (st && st->task_state && st->task_state[p] == TB_FLOW_DONE) {
            if (base < s->now)
                base = s->now; /* not sent yet: it leaves now */
            if (st->edge_host && st->edge_host[e] >= 0 && st->edge_host[e] != hp) {
                q->sh[1] = st->edge_host[e];
                q->sv[1] = st->edge_arrival[e];
            }
        }
        size_t cp = (size_t)H->cluster[hp];
        for (size_t c = 0; c < C; c++) {
            q->g[c] = base + H->L[cp * C + c] + d * H->G[cp * C + c];
            if (i == 0 || q->g[c] > s->gc[c]) {
                s->gc[c] = q->g[c];
                s->gcarg[c] = i;
            }
        }
        for (int j = 0; j < 2; j++)
            if (q->sh[j] >= 0) {
                double gj = q->g[H->cluster[q->sh[j]]];
                if (q->sv[j] > gj)
                    q->sv[j] = gj;
                if ((rc = add_override(s, q->sh[j])))
                    return rc;
            }
    }
    for (size_t c = 0; c < C; c++) {
        if (s->gc[c] < s->now)
            s->gc[c] = s->now;
        resolve_cluster(s, k, c, s->gcarg[c]);
    }
    return TB_OK;
}

/* ---- host timelines ------------------------------------------------------------ */

static size_t gap_first_end_at_least(const tb__gaps *g, double x)
{
    size_t lo = 0, hi = g->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g->end[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

double tb__sched_est(const tb__sched *s, size_t h, double drt, double dur)
{
    double r = s->ready[h];
    if (!s->insertion || s->maxgap[h] < dur || drt + dur > s->lastend[h])
        return drt > r ? drt : r;
    const tb__gaps *g = &s->gaps[h];
    size_t i = gap_first_end_at_least(g, drt + dur);
    if (i < g->n) {
        double s0 = g->start[i] > drt ? g->start[i] : drt;
        if (g->end[i] - s0 >= dur)
            return s0;
    }
    /* later gaps start after drt: any of length >= dur will do */
    for (size_t j = i + 1; j < g->n;) {
        if (j % TB__GAP_BLOCK == 0 && g->bmax[j / TB__GAP_BLOCK] < dur) {
            j += TB__GAP_BLOCK;
            continue;
        }
        if (g->end[j] - g->start[j] >= dur)
            return g->start[j];
        j++;
    }
    return drt > r ? drt : r;
}

static void gaps_reindex(tb__sched *s, size_t h, size_t from)
{
    tb__gaps *g = &s->gaps[h];
    size_t nb = (g->n + TB__GAP_BLOCK - 1) / TB__GAP_BLOCK;
    double mx = 0;
    for (size_t b = 0; b < nb; b++) {
        if (b >= from / TB__GAP_BLOCK) {
            double bm = 0;
            size_t e = (b + 1) * TB__GAP_BLOCK < g->n ? (b + 1) * TB__GAP_BLOCK : g->n;
            for (size_t j = b * TB__GAP_BLOCK; j < e; j++)
                if (g->end[j] - g->start[j] > bm)
                    bm = g->end[j] - g->start[j];
            g->bmax[b] = bm;
        }
        if (g->bmax[b] > mx)
            mx = g->bmax[b];
    }
    s->maxgap[h] = mx;
    s->lastend[h] = g->n ? g->end[g->n - 1] : -INFINITY;
}

static int gaps_reserve(tb__gaps *g, size_t n)
{
    if (n > g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 16;
        while (cap < n)
            cap *= 2;
        double *a = realloc(g->start, cap * sizeof *a);
        if (!a)
            return TB_ERR_NOMEM;
        g->start = a;
        double *b = realloc(g->end, cap * sizeof *b);
        if (!b)
            return TB_ERR_NOMEM;
        g->end = b;
        g->cap = cap;
    }
    size_t nb = (n + TB__GAP_BLOCK - 1) / TB__GAP_BLOCK;
    if (nb > g->bcap) {
        size_t bcap = nb * 2;
        double *m = realloc(g->bmax, bcap * sizeof *m);
        if (!m)
            return TB_ERR_NOMEM;
        g->bmax = m;
        g->bcap = bcap;
    }
    return TB_OK;
}

/* Gaps shorter than this (relative) are rounding dust, not idle time. */
static int is_gap(double a, double b)
{
    return b - a > 1e-12 * (fabs(a) + fabs(b) + 1.0);
}

int tb__sched_place(tb__sched *s, size_t t, size_t h, double start, double dur)
{
    tb_flow_schedule *out = s->out;
    double fin = start + dur;
    out->host[t] = (int32_t)h;
    out->start[t] = start;
    out->finish[t] = fin;
    s->placed[t] = 1;
    tb__gaps *g = &s->gaps[h];
    if (start >= s->ready[h]) {
        if (s->insertion && is_gap(s->ready[h], start)) {
            if (gaps_reserve(g, g->n + 1))
                return TB_ERR_NOMEM;
            g->start[g->n] = s->ready[h];
            g->end[g->n] = start;
            g->n++;
            gaps_reindex(s, h, g->n - 1);
        }
        s->ready[h] = fin;
        return TB_OK;
    }
    /* inside gap i: keep what is left on either side */
    size_t i = gap_first_end_at_least(g, fin);
    if (i >= g->n || g->start[i] > start)
        return TB_ERR_STATE; /* not from tb__sched_est */
    double a0 = g->start[i], a1 = start, b0 = fin, b1 = g->end[i];
    int left = is_gap(a0, a1), right = is_gap(b0, b1);
    int keep = left + right;
    if (gaps_reserve(g, g->n + 1))
        return TB_ERR_NOMEM;
    if (keep == 0) {
        memmove(g->start + i, g->start + i + 1, (g->n - i - 1) * sizeof *g->start);
        memmove(g->end + i, g->end + i + 1, (g->n - i - 1) * sizeof *g->end);
        g->n--;
    } else if (keep == 1) {
        g->start[i] = left ? a0 : b0;
        g->end[i] = left ? a1 : b1;
    } else {
        memmove(g->start + i + 1, g->start + i, (g->n - i) * sizeof *g->start);
        memmove(g->end + i + 1, g->end + i, (g->n - i) * sizeof *g->end);
        g->end[i] = a1;
        g->start[i + 1] = b0;
        g->n++;
    }
    gaps_reindex(s, h, i);
    return TB_OK;
}

size_t tb__sched_best_eft(const tb__sched *s, size_t t, const double *bias, double *start,
                          double *dur)
{
    size_t best = 0;
    double bv = INFINITY, bs = 0, bd = 0;
    for (size_t h = 0; h < s->m; h++) {
        double d = tb__flow_exec(s->f, s->H, t, h);
        double est = tb__sched_est(s, h, tb__sched_drt(s, h), d);
        double v = est + d + (bias ? bias[h] : 0.0);
        if (v < bv) {
            bv = v;
            best = h;
            bs = est;
            bd = d;
        }
    }
    *start = bs;
    *dur = bd;
    return best;
}

/* ---- ready heap --------------------------------------------------------------- */

static int heap_before(const tb__sched *s, uint32_t a, uint32_t b)
{
    if (s->prio[a] != s->prio[b])
        return s->prio[a] > s->prio[b];
    return a < b;
}

static void heap_push(tb__sched *s, uint32_t t)
{
    size_t i = s->nheap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!heap_before(s, t, s->heap[p]))
            break;
        s->heap[i] = s->heap[p];
        i = p;
    }
    s->heap[i] = t;
}

long tb__sched_heap_pop(tb__sched *s)
{
    if (!s->nheap)
        return -1;
    uint32_t top = s->heap[0], last = s->heap[--s->nheap];
    size_t i = 0, n = s->nheap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && heap_before(s, s->heap[c + 1], s->heap[c]))
            c++;
        if (!heap_before(s, s->heap[c], last))
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (n)
        s->heap[i] = last;
    return top;
}

int tb__sched_heap_start(tb__sched *s, const double *prio)
{
    const tb_flow *f = s->f;
    s->prio = prio;
    s->nheap = 0;
    for (size_t t = 0; t < f->n; t++) {
        if (s->placed[t])
            continue;
        uint32_t c = 0;
        for (size_t k = f->poff[t]; k < f->poff[t + 1]; k++)
            c += !s->placed[f->pred[k]];
        s->npend[t] = c;
        if (!c)
            heap_push(s, (uint32_t)t);
    }
    return TB_OK;
}

void tb__sched_release(tb__sched *s, size_t t)
{
    const tb_flow *f = s->f;
    for (size_t e = f->soff[t]; e < f->soff[t + 1]; e++) {
        uint32_t c = f->succ[e];
        if (!s->placed[c] && --s->npend[c] == 0)
            heap_push(s, c);
    }
}

void tb__sched_finish(tb__sched *s)
{
    tb_flow_schedule *out = s->out;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t t = 0; t < s->f->n; t++) {
        if (out->start[t] < lo)
            lo = out->start[t];
        if (out->finish[t] > hi)
            hi = out->finish[t];
    }
    out->makespan = s->f->n ? hi - lo : 0.0;
}
