/*
 * sched.c - the list schedulers behind tb_flow_sched_ops: HEFT and CPOP
 * (Topcuoglu, Hariri and Wu 2002), PEFT (Arabnejad and Barbosa 2014),
 * min-min, max-min and OLB (Braun et al. 2001), and random; plus the hosts a
 * scheduler sees and the check of a schedule.
 *
 * Every scheduler takes tasks from a ready heap (a task enters when all its
 * predecessors are placed), so the order is topological even when ranks tie;
 * ties go to the smaller task index, host ties to the smaller host index.
 * Each reschedules a running workflow the same way it schedules a new one:
 * DONE and RUNNING tasks are fixed, hosts are free from `now` (or the end of
 * their running task), data of finished tasks leaves at `now` at the
 * earliest unless it already went to the host that needs it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/sched_internal.h"

/* ---- hosts and schedules ------------------------------------------------------ */

int tb_flow_hosts_init(tb_flow_hosts *h, const tb_flow *f, const tb_platform *plat)
{
    if (!h || !f)
        return TB_ERR_INVALID;
    memset(h, 0, sizeof *h);
    size_t m = plat ? plat->nhosts : f->q;
    if (!m)
        return TB_ERR_INVALID; /* work-based workflows need a platform */
    if (f->q && f->q != m)
        return TB_ERR_INVALID;
    size_t C = plat ? plat->nclusters : 1;
    if (!C)
        C = 1;
    h->nhosts = m;
    h->nclusters = C;
    h->speed = malloc(m * sizeof *h->speed);
    h->base_speed = malloc(m * sizeof *h->base_speed);
    h->cluster = malloc(m * sizeof *h->cluster);
    h->L = malloc(C * C * sizeof *h->L);
    h->G = malloc(C * C * sizeof *h->G);
    if (!h->speed || !h->base_speed || !h->cluster || !h->L || !h->G) {
        tb_flow_hosts_free(h);
        return TB_ERR_NOMEM;
    }
    for (size_t i = 0; i < m; i++) {
        h->speed[i] = h->base_speed[i] = plat ? plat->hosts[i].speed : 1.0;
        h->cluster[i] = plat ? plat->hosts[i].cluster : 0;
    }
    for (size_t a = 0; a < C; a++)
        for (size_t b = 0; b < C; b++) {
            double L = 0, G = 1; /* per-host costs: the data is the time */
            if (!f->q && plat) {
                const tb_loggps *n = a == b ? &plat->clusters[a].net : &plat->wan;
                L = n->L;
                G = n->G;
            }
            h->L[a * C + b] = L;
            h->G[a * C + b] = G;
        }
    return TB_OK;
}

void tb_flow_hosts_free(tb_flow_hosts *h)
{
    if (!h)
        return;
    free(h->speed);
    free(h->base_speed);
    free(h->cluster);
    free(h->L);
    free(h->G);
    memset(h, 0, sizeof *h);
}

int tb_flow_schedule_init(tb_flow_schedule *s, size_t ntasks, size_t nhosts)
{
    if (!s)
        return TB_ERR_INVALID;
    memset(s, 0, sizeof *s);
    size_t n = ntasks ? ntasks : 1;
    s->host = malloc(n * sizeof *s->host);
    s->start = malloc(n * sizeof *s->start);
    s->finish = malloc(n * sizeof *s->finish);
    if (!s->host || !s->start || !s->finish) {
        tb_flow_schedule_free(s);
        return TB_ERR_NOMEM;
    }
    s->ntasks = ntasks;
    s->nhosts = nhosts;
    return TB_OK;
}

void tb_flow_schedule_free(tb_flow_schedule *s)
{
    if (!s)
        return;
    free(s->host);
    free(s->start);
    free(s->finish);
    memset(s, 0, sizeof *s);
}

static int close_enough(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b) + 1.0);
}

typedef struct check_key {
    int32_t host;
    uint32_t t;
    double start, finish;
} check_key;

static int cmp_by_host_start(const void *pa, const void *pb)
{
    const check_key *a = pa, *b = pb;
    if (a->host != b->host)
        return a->host < b->host ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    /* A zero-length task at another's start comes first: it ends before
     * the other begins. */
    if (a->finish != b->finish)
        return a->finish < b->finish ? -1 : 1;
    return a->t < b->t ? -1 : a->t > b->t;
}

int tb_flow_schedule_check(const tb_flow *f, const tb_flow_hosts *H, const tb_flow_schedule *s,
                           char *err, size_t errlen)
{
#define FAIL(...)                                                            \
    do {                                                                     \
        if (err && errlen)                                                   \
            snprintf(err, errlen, __VA_ARGS__);                              \
        free(idx);                                                           \
        return TB_ERR_INVALID;                                               \
    } while (0)
    check_key *idx = NULL;
    if (s->ntasks != f->n)
        FAIL("schedule has %zu tasks, workflow %zu", s->ntasks, f->n);
    for (size_t t = 0; t < f->n; t++) {
        if (s->host[t] < 0 || (size_t)s->host[t] >= H->nhosts)
            FAIL("task '%s' has no host", f->id[t]);
        double d = tb__flow_exec(f, H, t, (size_t)s->host[t]);
        if (!close_enough(s->finish[t] - s->start[t], d))
            FAIL("task '%s' runs %.9g, expected %.9g", f->id[t], s->finish[t] - s->start[t], d);
        for (size_t k = f->poff[t]; k < f->poff[t + 1]; k++) {
            uint32_t p = f->pred[k];
            double arr = s->finish[p] +
                         tb__flow_comm(H, (size_t)s->host[p], (size_t)s->host[t],
                                       f->sdata[f->pedge[k]]);
            if (s->start[t] < arr && !close_enough(s->start[t], arr))
                FAIL("task '%s' starts at %.9g before the data of '%s' (%.9g)", f->id[t],
                     s->start[t], f->id[p], arr);
        }
    }
    idx = malloc((f->n ? f->n : 1) * sizeof *idx);
    if (!idx)
        return TB_ERR_NOMEM;
    for (size_t t = 0; t < f->n; t++)
        idx[t] = (check_key){s->host[t], (uint32_t)t, s->start[t], s->finish[t]};
    qsort(idx, f->n, sizeof *idx, cmp_by_host_start);
    for (size_t i = 1; i < f->n; i++) {
        uint32_t a = idx[i - 1].t, b = idx[i].t;
        if (s->host[a] == s->host[b] && s->start[b] < s->finish[a] &&
            !close_enough(s->start[b], s->finish[a]))
            FAIL("tasks '%s' and '%s' overlap on host %d", f->id[a], f->id[b], (int)s->host[a]);
    }
    free(idx);
    return TB_OK;
#undef FAIL
}

/* ---- HEFT ------------------------------------------------------------------------ */

/* Place every task from the heap on the host of earliest finish (plus
 * bias, PEFT's optimistic cost, if given: bias is n x m). */
static int place_all_eft(tb__sched *s, const double *bias)
{
    long t;
    while ((t = tb__sched_heap_pop(s)) >= 0) {
        int rc = tb__sched_prepare(s, (size_t)t);
        if (rc)
            return rc;
        double start, dur;
        size_t h = tb__sched_best_eft(s, (size_t)t, bias ? bias + (size_t)t * s->m : NULL,
                                      &start, &dur);
        if ((rc = tb__sched_place(s, (size_t)t, h, start, dur)))
            return rc;
        tb__sched_release(s, (size_t)t);
    }
    return TB_OK;
}

static int run_heft(const tb_flow *f, const tb_flow_hosts *H, const tb_flow_state *st,
                    uint64_t seed, tb_flow_schedule *out)
{
    (void)seed;
    tb__sched s;
    int rc = tb__sched_init(&s, f, H, st, out, 1);
    if (rc)
        return rc;
    double *rank = malloc((f->n ? f->n : 1) * sizeof *rank);
    if (!rank) {
        tb__sched_free(&s);
        return TB_ERR_NOMEM;
    }
    tb__sched_rank_up(&s, rank);
    tb__sched_heap_start(&s, rank);
    rc = place_all_eft(&s, NULL);
    if (!rc)
        tb__sched_finish(&s);
    free(rank);
    tb__sched_free(&s);
    return rc;
}

/* ---- CPOP ------------------------------------------------------------------------ */

static int prio_is_cp(double p, double cp)
{
    return fabs(p - cp) <= 1e-9 * (fabs(cp) + 1.0);
}

static int run_cpop(const tb_flow *f, const tb_flow_hosts *H, const tb_flow_state *st,
                    uint64_t seed, tb_flow_schedule *out)
{
    (void)seed;
    tb__sched s;
    int rc = tb__sched_init(&s, f, H, st, out, 1);
    if (rc)
        return rc;
    size_t n = f->n ? f->n : 1;
    double *up = malloc(n * sizeof *up), *down = malloc(n * sizeof *down);
    uint8_t *oncp = calloc(n, 1);
    if (!up || !down || !oncp) {
        rc = TB_ERR_NOMEM;
        goto out;
    }
    tb__sched_rank_up(&s, up);
    tb__sched_rank_down(&s, down);
    double cp = -INFINITY;
    for (size_t t = 0; t < f->n; t++) {
        up[t] += down[t]; /* priority */
        if (up[t] > cp)
            cp = up[t];
    }
    /* the critical path: from the first entry task on it, follow successors
     * whose priority equals its length */
    long t = -1;
    for (size_t i = 0; i < f->n && t < 0; i++)
        if (f->poff[i + 1] == f->poff[i] && prio_is_cp(up[i], cp))
            t = (long)i;
    while (t >= 0) {
        oncp[t] = 1;
        long next = -1;
        for (size_t e = f->soff[t]; e < f->soff[t + 1] && next < 0; e++)
            if (prio_is_cp(up[f->succ[e]], cp))
                next = f->succ[e];
        t = next;
    }
    /* the critical-path host: least total execution time of the path */
    size_t cph = 0;
    double best = INFINITY;
    for (size_t h = 0; h < s.m; h++) {
        double sum = 0;
        for (size_t i = 0; i < f->n; i++)
            if (oncp[i])
                sum += tb__flow_exec(f, H, i, h);
        if (sum < best) {
            best = sum;
            cph = h;
        }
    }
    tb__sched_heap_start(&s, up);
    while ((t = tb__sched_heap_pop(&s)) >= 0) {
        if ((rc = tb__sched_prepare(&s, (size_t)t)))
            goto out;
        double start, dur;
        size_t h;
        if (oncp[t]) {
            h = cph;
            dur = tb__flow_exec(f, H, (size_t)t, h);
            start = tb__sched_est(&s, h, tb__sched_drt(&s, h), dur);
        } else {
            h = tb__sched_best_eft(&s, (size_t)t, NULL, &start, &dur);
        }
        if ((rc = tb__sched_place(&s, (size_t)t, h, start, dur)))
            goto out;
        tb__sched_release(&s, (size_t)t);
    }
    tb__sched_finish(&s);
out:
    free(up);
    free(down);
    free(oncp);
    tb__sched_free(&s);
    return rc;
}

/* ---- PEFT ------------------------------------------------------------------------ */

static int run_peft(const tb_flow *f, const tb_flow_hosts *H, const tb_flow_state *st,
                    uint64_t seed, tb_flow_schedule *out)
{
    (void)seed;
    tb__sched s;
    int rc = tb__sched_init(&s, f, H, st, out, 1);
    if (rc)
        return rc;
    size_t n = f->n ? f->n : 1, m = s.m;
    if (n > SIZE_MAX / sizeof(double) / m) {
        tb__sched_free(&s);
        return TB_ERR_NOMEM;
    }
    double *oct = malloc(n * m * sizeof *oct);
    double *mins = malloc(n * sizeof *mins), *rank = malloc(n * sizeof *rank);
    if (!oct || !mins || !rank) {
        rc = TB_ERR_NOMEM;
        goto out;
    }
    /* OCT(t,h) = max over successors s of min over h' of
     * OCT(s,h') + w(s,h') + (h' != h ? cbar : 0)
     *          = max_s min(mins[s] + cbar, OCT(s,h) + w(s,h)) */
    for (size_t i = f->n; i-- > 0;) {
        uint32_t t = f->topo[i];
        double *row = oct + (size_t)t * m;
        for (size_t h = 0; h < m; h++)
            row[h] = 0;
        for (size_t e = f->soff[t]; e < f->soff[t + 1]; e++) {
            uint32_t c = f->succ[e];
            double far = mins[c] + tb__sched_cbar(&s, f->sdata[e]);
            const double *crow = oct + (size_t)c * m;
            for (size_t h = 0; h < m; h++) {
                double near = crow[h] + tb__flow_exec(f, H, c, h);
                double v = near < far ? near : far;
                if (v > row[h])
                    row[h] = v;
            }
        }
        double mn = INFINITY, sum = 0;
        for (size_t h = 0; h < m; h++) {
            double v = row[h] + tb__flow_exec(f, H, t, h);
            if (v < mn)
                mn = v;
            sum += row[h];
        }
        mins[t] = mn;
        rank[t] = sum / (double)m;
    }
    tb__sched_heap_start(&s, rank);
    rc = place_all_eft(&s, oct);
    if (!rc)
        tb__sched_finish(&s);
out:
    free(oct);
    free(mins);
    free(rank);
    tb__sched_free(&s);
    return rc;
}

/* ---- min-min and max-min ---------------------------------------------------------- */

typedef struct mm_entry {
    uint32_t t;
    uint32_t h;
    double start, dur;
} mm_entry;

static int mm_best(tb__sched *s, mm_entry *e)
{
    int rc = tb__sched_prepare(s, e->t);
    if (rc)
        return rc;
    size_t h = tb__sched_best_eft(s, e->t, NULL, &e->start, &e->dur);
    e->h = (uint32_t)h;
    return TB_OK;
}

/* Each round places, of all ready tasks, the one whose best completion time
 * is smallest (min-min) or largest (max-min).  Only host h changes in a
 * round and only for the worse, so a task whose best host is another keeps
 * it: just the tasks that had h are recomputed. */
static int run_minmax(const tb_flow *f, const tb_flow_hosts *H, const tb_flow_state *st,
                      tb_flow_schedule *out, int want_max)
{
    tb__sched s;
    int rc = tb__sched_init(&s, f, H, st, out, 0);
    if (rc)
        return rc;
    size_t n = f->n ? f->n : 1, nr = 0;
    mm_entry *r = malloc(n * sizeof *r);
    double *prio = malloc(n * sizeof *prio);
    if (!r || !prio) {
        rc = TB_ERR_NOMEM;
        goto out;
    }
    for (size_t t = 0; t < f->n; t++)
        prio[t] = -(double)t;
    tb__sched_heap_start(&s, prio);
    for (;;) {
        long t;
        while ((t = tb__sched_heap_pop(&s)) >= 0) {
            r[nr].t = (uint32_t)t;
            if ((rc = mm_best(&s, &r[nr])))
                goto out;
            nr++;
        }
        if (!nr)
            break;
        size_t pick = 0;
        for (size_t i = 1; i < nr; i++) {
            double a = r[i].start + r[i].dur, b = r[pick].start + r[pick].dur;
            if (want_max ? a > b : a < b)
                pick = i;
            else if (a == b && r[i].t < r[pick].t)
                pick = i;
        }
        mm_entry e = r[pick];
        r[pick] = r[--nr];
        if ((rc = tb__sched_place(&s, e.t, e.h, e.start, e.dur)))
            goto out;
        for (size_t i = 0; i < nr; i++)
            if (r[i].h == e.h && (rc = mm_best(&s, &r[i])))
                goto out;
        tb__sched_release(&s, e.t);
    }
    tb__sched_finish(&s);
out:
    free(r);
    free(prio);
    tb__sched_free(&s);
    return rc;
}

static int run_minmin(const tb_flow *f, const tb_flow_hosts *H, const tb_flow_state *st,
                      uint64_t seed, tb_flow_schedule *out)
{
    (void)seed;
    return run_minmax(f, H, st, out, 0);
}

static int run_maxmin(const tb_flow *f, const tb_flow_hosts *H, const tb_flow_state *st,
                      uint64_t seed, tb_flow_schedule *out)
{
    (void)seed;
    return run_minmax(f, H, st, out, 1);
}

/* ---- OLB and random ----------------------------------------------------------------- */

/* Tasks in index order as they become ready; OLB takes the host free
 * first, random a uniform host.  Neither looks at execution times. */
static int run_simple(const tb_flow *f, const tb_flow_hosts *H, const tb_flow_state *st,
                      uint64_t seed, tb_flow_schedule *out, int random)
{
    tb__sched s;
    int rc = tb__sched_init(&s, f, H, st, out, 0);
    if (rc)
        return rc;
    double *prio = malloc((f->n ? f->n : 1) * sizeof *prio);
    if (!prio) {
        tb__sched_free(&s);
        return TB_ERR_NOMEM;
    }
    for (size_t t = 0; t < f->n; t++)
        prio[t] = -(double)t;
    tb_rng rng;
    tb_rng_seed(&rng, seed);
    tb__sched_heap_start(&s, prio);
    long t;
    while ((t = tb__sched_heap_pop(&s)) >= 0) {
        if ((rc = tb__sched_prepare(&s, (size_t)t)))
            break;
        size_t h = 0;
        if (random) {
            h = (size_t)tb_rng_below(&rng, s.m);
        } else {
            for (size_t i = 1; i < s.m; i++)
                if (s.ready[i] < s.ready[h])
                    h = i;
        }
        double dur = tb__flow_exec(f, H, (size_t)t, h);
        double start = tb__sched_est(&s, h, tb__sched_drt(&s, h), dur);
        if ((rc = tb__sched_place(&s, (size_t)t, h, start, dur)))
            break;
        tb__sched_release(&s, (size_t)t);
    }
    if (!rc)
        tb__sched_finish(&s);
    free(prio);
    tb__sched_free(&s);
    return rc;
}

static int run_olb(const tb_flow *f, const tb_flow_hosts *H, const tb_flow_state *st,
                   uint64_t seed, tb_flow_schedule *out)
{
    return run_simple(f, H, st, seed, out, 0);
}

static int run_random(const tb_flow *f, const tb_flow_hosts *H, const tb_flow_state *st,
                      uint64_t seed, tb_flow_schedule *out)
{
    return run_simple(f, H, st, seed, out, 1);
}

/* ---- registry ------------------------------------------------------------------------ */

static const tb_flow_sched_ops scheds[] = {
    {sizeof(tb_flow_sched_ops), "heft",
     "HEFT: upward rank, earliest finish with insertion (Topcuoglu et al.)", run_heft},
    {sizeof(tb_flow_sched_ops), "cpop",
     "CPOP: critical path on its best host, others by earliest finish", run_cpop},
    {sizeof(tb_flow_sched_ops), "peft",
     "PEFT: optimistic cost table, earliest finish plus optimistic cost", run_peft},
    {sizeof(tb_flow_sched_ops), "minmin", "min-min: the ready task that can finish first, first",
     run_minmin},
    {sizeof(tb_flow_sched_ops), "maxmin", "max-min: the ready task that finishes last, first",
     run_maxmin},
    {sizeof(tb_flow_sched_ops), "olb", "OLB: the next ready task on the host free first", run_olb},
    {sizeof(tb_flow_sched_ops), "random", "random: a uniform host for each task (seeded)",
     run_random},
};

const tb_flow_sched_ops *tb_flow_sched_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof scheds / sizeof scheds[0]; i++)
        if (strcmp(scheds[i].name, name) == 0)
            return &scheds[i];
    return NULL;
}

const tb_flow_sched_ops *tb_flow_sched_get(size_t i)
{
    return i < sizeof scheds / sizeof scheds[0] ? &scheds[i] : NULL;
}
