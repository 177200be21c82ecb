/*
 * speed.c - the speed cursor: a host's speed as piecewise-constant segments
 * in time order, generated lazily, and the exact finish time of work on it.
 *
 * LOAD is S2's load process on one host: dummy tasks arrive as a Poisson
 * process of rate lambda and each stays an exponential time of mean
 * 1/lambda (an M/M/inf queue, one dummy present on average); the host runs at
 * base / (1 + dummies).  Its events come from the host's own random stream
 * (seed, host + 1), so a host's speed does not depend on any other host.
 */
#include "tenbin/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void set_segment(tb_speed_cursor *c, double t0, double t1, double speed)
{
    c->t0 = t0;
    c->t1 = t1;
    c->speed = speed;
}

/* Earliest departure (INFINITY if no dummy); its index in *k. */
static double next_leave(const tb_speed_cursor *c, int *k)
{
    double t = INFINITY;
    *k = -1;
    for (int i = 0; i < c->dummies; i++)
        if (c->leave[i] < t) {
            t = c->leave[i];
            *k = i;
        }
    return t;
}

static int add_dummy(tb_speed_cursor *c, double leave)
{
    if (c->dummies == c->cap) {
        int cap = c->cap ? 2 * c->cap : 8;
        double *p = realloc(c->leave, (size_t)cap * sizeof *p);
        if (p == NULL)
            return TB_ERR_NOMEM;
        c->leave = p;
        c->cap = cap;
    }
    c->leave[c->dummies++] = leave;
    return TB_OK;
}

/* The segment starting at time 0, from the initial random state. */
static void start(tb_speed_cursor *c)
{
    const tb_host *h = c->host;
    c->rng = c->rng0;
    c->dummies = 0;
    c->i = 0;
    switch (h->kind) {
    case TB_SPEED_TRACE:
        set_segment(c, 0, h->ntrace > 1 ? h->trace_time[1] : INFINITY, h->trace_speed[0]);
        break;
    case TB_SPEED_LOAD:
        c->next_arrival = tb_rng_exp(&c->rng, 1.0 / h->lambda);
        set_segment(c, 0, c->next_arrival, h->speed);
        break;
    default:
        set_segment(c, 0, INFINITY, h->speed);
        break;
    }
}

/* LOAD: the event at t1 (an arrival, or the earliest departure). */
static int load_step(tb_speed_cursor *c)
{
    double mean = 1.0 / c->host->lambda, t = c->t1;
    int k;
    double dep = next_leave(c, &k);
    if (c->next_arrival <= dep) {
        TB_CHECK(add_dummy(c, t + tb_rng_exp(&c->rng, mean)));
        c->next_arrival = t + tb_rng_exp(&c->rng, mean);
    } else {
        c->leave[k] = c->leave[--c->dummies];
    }
    dep = next_leave(c, &k);
    set_segment(c, t, fmin(c->next_arrival, dep), c->host->speed / (1.0 + c->dummies));
    return TB_OK;
}

/* Moves to the next segment (the current one must end: t1 finite). */
static int advance(tb_speed_cursor *c)
{
    const tb_host *h = c->host;
    if (h->kind == TB_SPEED_LOAD)
        return load_step(c);
    if (h->kind == TB_SPEED_TRACE && c->i + 1 < h->ntrace) {
        size_t i = ++c->i;
        set_segment(c, h->trace_time[i], i + 1 < h->ntrace ? h->trace_time[i + 1] : INFINITY,
                    h->trace_speed[i]);
    }
    return TB_OK;
}

static int host_valid(const tb_host *h)
{
    switch (h->kind) {
    case TB_SPEED_CONSTANT:
        return h->speed > 0;
    case TB_SPEED_TRACE:
        return h->ntrace > 0 && h->trace_time != NULL && h->trace_speed != NULL &&
               h->trace_time[0] == 0 && h->trace_speed[h->ntrace - 1] > 0;
    case TB_SPEED_LOAD:
        return h->speed > 0 && h->lambda > 0 && isfinite(h->lambda);
    }
    return 0;
}

int tb_speed_cursor_init(tb_speed_cursor *c, const tb_platform *p, size_t host)
{
    if (c == NULL)
        return TB_ERR_INVALID;
    memset(c, 0, sizeof *c);
    if (p == NULL || host >= p->nhosts)
        return TB_ERR_RANGE;
    if (!host_valid(&p->hosts[host]))
        return TB_ERR_INVALID;
    c->host = &p->hosts[host];
    tb_rng_seed_stream(&c->rng0, p->seed, (uint64_t)host + 1);
    start(c);
    return TB_OK;
}

void tb_speed_cursor_free(tb_speed_cursor *c)
{
    if (c == NULL)
        return;
    free(c->leave);
    memset(c, 0, sizeof *c);
}

int tb_speed_cursor_seek(tb_speed_cursor *c, double t)
{
    if (c == NULL || c->host == NULL || !(t >= 0))
        return TB_ERR_INVALID;
    if (!isfinite(t))
        return TB_ERR_RANGE; /* a time that never comes: nothing to seek */
    if (t < c->t0)
        start(c); /* back in time: replay from 0 (same segments) */
    while (t >= c->t1)
        TB_CHECK(advance(c));
    return TB_OK;
}

enum { PAST_SEGMENT = 1 };

/* Work `left` from `now` (inside c's segment): TB_OK with *end when it ends
 * in the segment, PAST_SEGMENT when it runs past it, TB_ERR_RANGE when it
 * never ends.  Reads c only. */
static int segment_end(const tb_speed_cursor *c, double now, double left, double *end)
{
    if (left <= 0) {
        *end = now;
        return TB_OK;
    }
    if (c->t1 == INFINITY && !(c->speed > 0))
        return TB_ERR_RANGE;
    if (c->t1 == INFINITY || (c->t1 - now) * c->speed >= left) {
        *end = now + left / c->speed;
        /* Work too large for the speed: the task would never end. */
        return isfinite(*end) ? TB_OK : TB_ERR_RANGE;
    }
    return PAST_SEGMENT;
}

/* Integrates on c from t (inside c's segment) until work is done. */
static int integrate(tb_speed_cursor *c, double t, double work, double *end)
{
    double left = work, now = t;
    int rc;
    while ((rc = segment_end(c, now, left, end)) == PAST_SEGMENT) {
        left -= (c->t1 - now) * c->speed;
        now = c->t1;
        TB_CHECK(advance(c));
    }
    return rc;
}

/* The cursor stays at t; the integration runs on a copy. */
int tb_speed_finish_time(tb_speed_cursor *c, double t, double work, double *end)
{
    if (end == NULL || !(work >= 0) || !isfinite(work))
        return TB_ERR_INVALID;
    TB_CHECK(tb_speed_cursor_seek(c, t));
    /* Most work ends in the segment it starts in: then the cursor (three
     * cache lines, for every computation of every rank) is not copied. */
    int rc = segment_end(c, t, work, end);
    if (rc != PAST_SEGMENT)
        return rc;
    tb_speed_cursor w = *c;
    w.leave = NULL;
    w.cap = 0;
    if (c->dummies > 0) {
        w.leave = malloc((size_t)c->dummies * sizeof *w.leave);
        if (w.leave == NULL)
            return TB_ERR_NOMEM;
        memcpy(w.leave, c->leave, (size_t)c->dummies * sizeof *w.leave);
        w.cap = c->dummies;
    }
    rc = integrate(&w, t, work, end);
    free(w.leave);
    return rc;
}
