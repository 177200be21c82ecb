/*
 * sim.c - S4 on the simulator: a block-distributed iterative application
 * (Himeno's shape) whose ranks are actors on the simulated transport, and
 * whose balancing points run the same balancer (balance.c) as the real
 * arrays (redist.c).  See tb_redist_sim_run in tenbin/redist.h.
 *
 * A rank's life, per iteration: send a halo to each neighbour, wait for
 * theirs, compute (block units x unit work, at the host's speed over virtual
 * time).  At a balancing point: pack the window (the same window code as the
 * real arrays), allgather the windows (Bruck: round k sends to r + 2^k and
 * receives from r - 2^k, min(2^k, P - 2^k) windows), decide, move (one
 * message per run of units changing owner), allreduce the move's time (the
 * same rounds with 8 bytes), go on.  The decision is computed once, by the
 * first rank through the allgather: by then every rank has packed its
 * window (each one reached the allgather before it could be complete).
 * Messages carry a few bytes and are charged for their modelled size.
 */
#define _POSIX_C_SOURCE 200809L
#include "tenbin/model.h"
#include "tenbin/redist.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "balance.h"
#include "core/errbuf.h"
#include "run/run.h"
#include "core/json.h"
#include "sim/sim.h"

enum { T_HALO = 1, T_GATHER, T_MOVE, T_SYNC };
enum { PH_HALO, PH_COMPUTE, PH_GATHER, PH_MOVE, PH_SYNC, PH_DONE };

/* A recorded balancing point (replay). */
typedef struct rec_point {
    uint64_t iteration, total;
    uint64_t *counts, *next;
    double *meas;
    int move;
    double moved, predicted; /* the move's measured and predicted time, if it moved */
} rec_point;

typedef struct rs_run rs_run;

/* A message that arrived before its rank waited for it. */
typedef struct rs_early {
    int tag;
    uint64_t it;
    uint32_t round;
} rs_early;

typedef struct rs_rank {
    tb_actor base;
    rs_run *run;
    uint64_t it;          /* the iteration in progress (1-based) */
    int phase;
    int neighbours;       /* 0, 1 or 2 */
    uint32_t round;       /* collective round waited for */
    uint64_t move_expect; /* move messages still to arrive */
    double t0;            /* start of the computation or of the move */
    double compute_s;
    double finish;
    tb__rb_window win;
    rs_early *early;
    size_t nearly, capearly;
} rs_rank;

struct rs_run {
    const tb_redist_sim_opts *cfg;
    tb_redist_opts bal;     /* the balancing configuration in force (the record's on replay) */
    int P;
    uint64_t units, iters, min_units;
    double unit_bytes;
    tb__run layer;  /* the run layer's run (run/run.h): its simulator, the ranks */
    tb__rb rb;
    tb_redist_cost probe;     /* the modelled probe's line (unscaled) */
    uint64_t *counts, *prev;  /* the layout, and the one before the last move */
    double *meas;             /* [P * TB__RB_PACK] the ranks' windows at the current point */
    uint64_t decided;         /* iteration of the last decision */
    int moving;               /* the last decision moves */
    tb_redist_move *mv;       /* its moves */
    size_t nmv, capmv;
    double move_pred;         /* its predicted time by the probe's line */
    double move_max;          /* slowest rank's move time so far */
    uint64_t move_done;       /* ranks through the move's allreduce */
    tb_redist_sim_result *res;
    size_t caprpts;
    /* replay */
    rec_point *rec;
    size_t nrec, irec;
    char *err;
    size_t errlen;
};

static void set_err(rs_run *run, const char *fmt, ...)
{
    if (!run->err || run->errlen == 0 || run->err[0])
        return; /* the first fault is the one reported */
    va_list ap;
    va_start(ap, fmt);
    tb__verrf(run->err, run->errlen, TB_OK, fmt, ap);
    va_end(ap);
}

/* ---- messages ------------------------------------------------------------ */

static int send_msg(rs_rank *k, int dst, int tag, uint64_t it, uint32_t round, double bytes)
{
    unsigned char body[12];
    memcpy(body, &it, 8);
    memcpy(body + 8, &round, 4);
    tb_buf b = TB_BUF_INIT;
    int rc = tb_buf_append(&b, body, sizeof body);
    if (rc == TB_OK)
        rc = tb_sim_send_modelled(k->run->layer.sim, &k->base, dst, tag, &b,
                                  bytes > 12 ? (size_t)bytes : 12);
    tb_buf_free(&b);
    return rc;
}

/* Take one waited-for message from the early list: 1 if it was there. */
static int take_early(rs_rank *k, int tag, uint64_t it, uint32_t round)
{
    for (size_t i = 0; i < k->nearly; i++)
        if (k->early[i].tag == tag && k->early[i].it == it && k->early[i].round == round) {
            k->early[i] = k->early[--k->nearly];
            return 1;
        }
    return 0;
}

/* ---- the balancing point ------------------------------------------------- */

static int decide(rs_run *run, uint64_t it, double now)
{
    tb_redist_sim_result *res = run->res;
    const double *meas = run->meas;
    const rec_point *rp = NULL;
    if (run->rec) {
        while (run->irec < run->nrec && run->rec[run->irec].iteration < it)
            run->irec++;
        if (run->irec == run->nrec || run->rec[run->irec].iteration != it) {
            set_err(run, "replay: the record has no balancing point at iteration %" PRIu64, it);
            return TB_ERR_STATE;
        }
        rp = &run->rec[run->irec++];
        if (memcmp(rp->counts, run->counts, (size_t)run->P * sizeof *run->counts) != 0) {
            set_err(run, "replay: at iteration %" PRIu64 " the layout differs from the record's",
                    it);
            return TB_ERR_STATE;
        }
        meas = rp->meas;
    }
    tb_redist_decision d;
    int est = 0, bad = -1;
    double c0 = tb_thread_cputime();
    int rc = tb__rb_point(&run->rb, it, rp ? rp->total : run->iters, run->counts, meas, &d, &est,
                          &bad);
    res->decide_cpu_s += tb_thread_cputime() - c0;
    if (rc != TB_OK) {
        set_err(run, "balancing point at iteration %" PRIu64 ": %s", it, tb_strerror(rc));
        return rc;
    }
    if (rp) {
        res->replay_points++;
        int same = d.move == rp->move &&
                   memcmp(rp->next, run->rb.next, (size_t)run->P * sizeof *rp->next) == 0;
        if (!same) {
            set_err(run, "replay: at iteration %" PRIu64 " the simulator %s, the real run %s", it,
                    d.move ? "moved" : "kept the layout", rp->move ? "moved" : "kept it");
            return TB_ERR_STATE;
        }
        res->replay_agree++;
    }
    if (tb_grow(&res->pts, &run->caprpts, res->points, sizeof *res->pts, 16) != TB_OK)
        return TB_ERR_NOMEM;
    uint64_t *lay = realloc(res->layouts, (res->points + 1) * (size_t)run->P * sizeof *lay);
    if (!lay)
        return TB_ERR_NOMEM;
    res->layouts = lay;
    memcpy(lay + res->points * (size_t)run->P, run->rb.next, (size_t)run->P * sizeof *lay);
    res->pts[res->points] = (tb_redist_sim_point){it, now, d, 0};
    res->points++;
    if (!d.move && d.units_moved > 0 && d.remaining > 0 && d.imbalance > run->bal.threshold &&
        run->bal.mode == TB_REDIST_PREDICT)
        res->skipped++;
    run->decided = it;
    run->moving = d.move;
    if (!d.move)
        return TB_OK;
    size_t nm = 0;
    TB_CHECK(tb_redist_moves(run->P, run->counts, run->rb.next, NULL, 0, &nm));
    if (nm > run->capmv) {
        tb_redist_move *m = realloc(run->mv, nm * sizeof *m);
        if (!m)
            return TB_ERR_NOMEM;
        run->mv = m;
        run->capmv = nm;
    }
    TB_CHECK(tb_redist_moves(run->P, run->counts, run->rb.next, run->mv, nm, &run->nmv));
    run->move_pred = tb_redist_move_time(&run->probe, run->mv, run->nmv, run->P,
                                         run->unit_bytes);
    for (size_t i = 0; i < run->nmv; i++)
        res->bytes_moved += (uint64_t)((double)run->mv[i].count * run->unit_bytes);
    run->move_max = 0;
    run->move_done = 0;
    memcpy(run->prev, run->counts, (size_t)run->P * sizeof *run->counts);
    memcpy(run->counts, run->rb.next, (size_t)run->P * sizeof *run->counts);
    res->moves++;
    return TB_OK;
}

/* The move's allreduce is over on every rank: its time feeds the model. */
static void move_finished(rs_run *run)
{
    tb_redist_sim_result *res = run->res;
    double measured = run->move_max, predicted = run->move_pred;
    if (run->rec) {
        const rec_point *rp = &run->rec[run->irec - 1];
        measured = rp->moved;
        predicted = rp->predicted;
    }
    if (run->probe.n > 0)
        tb__rb_moved(&run->rb, predicted, measured);
    res->move_s += run->move_max;
    res->pts[res->points - 1].move_s = run->move_max;
}

/* ---- a rank's progress --------------------------------------------------- */

static int begin_iteration(rs_rank *k);

static uint32_t rounds_of(int P)
{
    uint32_t n = 0;
    while ((1ull << n) < (uint64_t)P)
        n++;
    return n;
}

/* Send this rank's message of collective round k->round. */
static int coll_send(rs_rank *k, int tag)
{
    rs_run *run = k->run;
    int P = run->P;
    uint64_t d = 1ull << k->round;
    uint64_t blocks = d < (uint64_t)P - d ? d : (uint64_t)P - d;
    double bytes = tag == T_GATHER ? (double)blocks * TB__RB_PACK * 8.0 : 8.0;
    return send_msg(k, (int)(((uint64_t)k->base.rank + d) % (uint64_t)P), tag, k->it, k->round,
                    bytes);
}

/* The simulated compute has no native part: only its modelled work. */
static int no_op(void *arg)
{
    (void)arg;
    return 0;
}

/* Advance as far as the messages that are here allow. */
static int progress(rs_rank *k)
{
    rs_run *run = k->run;
    tb_actor *a = &k->base;
    for (;;) {
        switch (k->phase) {
        case PH_HALO: {
            while (k->neighbours > 0 && take_early(k, T_HALO, k->it, 0))
                k->neighbours--;
            if (k->neighbours > 0)
                return TB_OK;
            k->phase = PH_COMPUTE;
            k->t0 = tb_tp_now(a);
            double f = run->cfg->work_factor
                           ? run->cfg->work_factor(run->cfg->work_ctx, a->rank, k->it)
                           : 1.0;
            tb_compute c = {no_op, NULL, (double)run->counts[a->rank] * run->cfg->unit_work * f,
                            NULL, 0, 0, 0.0, 0};
            return tb_tp_compute(a, k->it, &c);
        }
        case PH_GATHER:
        case PH_SYNC: {
            int tag = k->phase == PH_GATHER ? T_GATHER : T_SYNC;
            if (k->round < rounds_of(run->P) && !take_early(k, tag, k->it, k->round))
                return TB_OK;
            if (k->round < rounds_of(run->P)) {
                k->round++;
                if (k->round < rounds_of(run->P)) {
                    TB_CHECK(coll_send(k, tag));
                    continue;
                }
            }
            if (k->phase == PH_SYNC) {
                if (++run->move_done == (uint64_t)run->P)
                    move_finished(run);
                k->it++;
                return begin_iteration(k);
            }
            if (run->decided != k->it)
                TB_CHECK(decide(run, k->it, tb_tp_now(a)));
            if (!run->moving) {
                k->it++;
                return begin_iteration(k);
            }
            /* The move: send what leaves this rank, count what comes. */
            k->phase = PH_MOVE;
            k->t0 = tb_tp_now(a);
            k->move_expect = 0;
            for (size_t i = 0; i < run->nmv; i++) {
                const tb_redist_move *m = &run->mv[i];
                if (m->from == a->rank)
                    TB_CHECK(send_msg(k, m->to, T_MOVE, k->it, (uint32_t)i,
                                      (double)m->count * run->unit_bytes));
                if (m->to == a->rank)
                    k->move_expect++;
            }
            continue;
        }
        case PH_MOVE: {
            for (size_t i = 0; k->move_expect > 0 && i < run->nmv; i++)
                if (run->mv[i].to == a->rank && take_early(k, T_MOVE, k->it, (uint32_t)i))
                    k->move_expect--;
            if (k->move_expect > 0)
                return TB_OK;
            double t = tb_tp_now(a) - k->t0;
            if (t > run->move_max)
                run->move_max = t;
            k->phase = PH_SYNC;
            k->round = 0;
            if (rounds_of(run->P) > 0)
                TB_CHECK(coll_send(k, T_SYNC));
            continue;
        }
        default:
            return TB_OK;
        }
    }
}

static int begin_iteration(rs_rank *k)
{
    rs_run *run = k->run;
    tb_actor *a = &k->base;
    if (k->it > run->iters) {
        k->phase = PH_DONE;
        k->finish = tb_tp_now(a);
        a->finished = 1;
        return TB_OK;
    }
    k->phase = PH_HALO;
    k->neighbours = 0;
    for (int d = -1; d <= 1; d += 2) {
        int nb = a->rank + d;
        if (nb < 0 || nb >= run->P)
            continue;
        TB_CHECK(send_msg(k, nb, T_HALO, k->it, 0, run->cfg->halo_bytes));
        k->neighbours++;
    }
    return progress(k);
}

static int on_start(tb_actor *a)
{
    rs_rank *k = (rs_rank *)a;
    k->it = 1;
    return begin_iteration(k);
}

static int on_message(tb_actor *a, int src, int tag, const void *data, size_t len)
{
    (void)src;
    rs_rank *k = (rs_rank *)a;
    if (len < 12)
        return TB_ERR_STATE;
    rs_early e = {tag, 0, 0};
    memcpy(&e.it, data, 8);
    memcpy(&e.round, (const unsigned char *)data + 8, 4);
    TB_CHECK(tb_grow(&k->early, &k->capearly, k->nearly, sizeof *k->early, 8));
    k->early[k->nearly++] = e;
    return progress(k);
}

static int on_computed(tb_actor *a, uint64_t job, int status)
{
    (void)job;
    (void)status;
    rs_rank *k = (rs_rank *)a;
    rs_run *run = k->run;
    double t = tb_tp_now(a) - k->t0;
    k->compute_s += t;
    TB_CHECK(tb__rb_window_add(&k->win, t, 1));
    int point = k->it % run->bal.interval == 0 && k->it < run->iters;
    if (!point) {
        k->it++;
        return begin_iteration(k);
    }
    tb__rb_window_pack(&k->win, k->it, run->meas + (size_t)a->rank * TB__RB_PACK);
    tb__rb_window_clear(&k->win);
    k->phase = PH_GATHER;
    k->round = 0;
    if (rounds_of(run->P) > 0)
        TB_CHECK(coll_send(k, T_GATHER));
    return progress(k);
}

static const tb_actor_ops rs_ops = {sizeof(tb_actor_ops), on_start, on_message, on_computed, NULL,
                                   NULL};

/* The run layer's view of a rank (run/run.h). */
static int rank_init(void *ctx, tb_actor *a, int rank)
{
    rs_rank *k = (rs_rank *)a;
    (void)rank;
    k->base.ops = &rs_ops;
    k->run = ctx;
    return TB_OK;
}

static void rank_fini(void *ctx, tb_actor *a)
{
    rs_rank *k = (rs_rank *)a;
    (void)ctx;
    tb__rb_window_free(&k->win);
    free(k->early);
}

static const tb__run_ops rank_ops = {sizeof(rs_rank), rank_init, NULL, rank_fini};

static rs_rank *rank_of(const rs_run *run, int i) { return (rs_rank *)run->layer.actors[i]; }

static double sim_cost(void *ctx, tb_actor *a, uint64_t job, const tb_compute *c, double cpu_s)
{
    (void)ctx;
    (void)a;
    (void)job;
    (void)cpu_s;
    return c->work;
}

/* ---- the record ---------------------------------------------------------- */

static int json_u64s(const cJSON *arr, uint64_t *out, int n)
{
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != n)
        return -1;
    int i = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, arr)
    {
        /* whole and below 2^53: exact as a double, defined as a cast */
        if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0) || x->valuedouble > 9007199254740992.0 ||
            x->valuedouble != floor(x->valuedouble))
            return -1;
        out[i++] = (uint64_t)x->valuedouble;
    }
    return 0;
}

static int json_doubles(const cJSON *arr, double *out, int n)
{
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != n)
        return -1;
    int i = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, arr)
    {
        if (!cJSON_IsNumber(x))
            return -1;
        out[i++] = x->valuedouble;
    }
    return 0;
}

static double num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(x) ? x->valuedouble : dflt;
}

/* A whole number in [lo, hi] (absent: dflt), so that the casts of the
 * record's numbers are defined; 0 if it is one. */
static int whole(const cJSON *o, const char *key, double dflt, double lo, double hi,
                 double *out)
{
    double v = num(o, key, dflt);
    *out = v;
    return v >= lo && v <= hi && v == floor(v) ? 0 : -1;
}

/* The record's limits: ranks a simulation can hold, and counts exact in a
 * double. */
#define REC_MAX_RANKS (1 << 24)
#define REC_MAX_COUNT 9007199254740992.0

static void free_record(rs_run *run)
{
    for (size_t i = 0; i < run->nrec; i++) {
        free(run->rec[i].counts);
        free(run->rec[i].next);
        free(run->rec[i].meas);
    }
    free(run->rec);
    run->rec = NULL;
    run->nrec = 0;
}

/* Read the record: its header sets the configuration, its points the
 * measures.  One line of error naming the file and line. */
static int read_record(rs_run *run, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        set_err(run, "%s: %s", path, strerror(errno));
        return TB_ERR_IO;
    }
    char *line = NULL;
    size_t cap = 0, cap_rec = 0;
    long lineno = 0;
    int rc = TB_OK, P = 0;
    while (rc == TB_OK && getline(&line, &cap, f) > 0) {
        lineno++;
        cJSON *o = cJSON_Parse(line);
        if (!o || !cJSON_IsObject(o)) {
            set_err(run, "%s:%ld: not a JSON object", path, lineno);
            rc = TB_ERR_PARSE;
        } else if (lineno == 1) {
            const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "record");
            const cJSON *mode = cJSON_GetObjectItemCaseSensitive(o, "mode");
            const cJSON *cost = cJSON_GetObjectItemCaseSensitive(o, "cost");
            double c[7], ranks, units, interval, guards, min_units;
            double unit_bytes = num(o, "unit_bytes", 0);
            if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "tenbin redist") != 0 ||
                whole(o, "ranks", 0, 1, REC_MAX_RANKS, &ranks) ||
                whole(o, "units", 0, ranks, REC_MAX_COUNT, &units) ||
                whole(o, "interval", 0, 1, REC_MAX_COUNT, &interval) ||
                whole(o, "guards", 0, 0, 255, &guards) ||
                whole(o, "min_units", 1, 1, REC_MAX_COUNT, &min_units) ||
                !(unit_bytes >= 0 && unit_bytes <= REC_MAX_COUNT / 64) || !cJSON_IsString(mode) ||
                json_doubles(cost, c, 7) != 0 || !(c[2] >= 0 && c[2] <= REC_MAX_COUNT)) {
                set_err(run, "%s:1: not a record of tenbin's balancing points (ranks, units, "
                             "interval, mode and cost expected, whole numbers in range)", path);
                rc = TB_ERR_PARSE;
            } else if (run->cfg && run->cfg->platform &&
                       (size_t)ranks > tb_platform_cores(run->cfg->platform)) {
                /* before a point allocates its per-rank arrays */
                set_err(run, "%s:1: the record's %.0f ranks do not fit the platform's %zu cores",
                        path, ranks, tb_platform_cores(run->cfg->platform));
                rc = TB_ERR_SIZE;
            } else {
                P = (int)ranks;
                run->P = P;
                run->units = (uint64_t)units;
                run->bal.interval = (uint64_t)interval;
                run->bal.threshold = num(o, "threshold", 1.05);
                run->bal.smoothing = num(o, "smoothing", 0.5);
                run->bal.guards = (unsigned)guards;
                run->bal.mode = strcmp(mode->valuestring, "nopredict") == 0 ? TB_REDIST_NO_PREDICT
                                : strcmp(mode->valuestring, "off") == 0     ? TB_REDIST_OFF
                                                                            : TB_REDIST_PREDICT;
                run->unit_bytes = unit_bytes;
                run->min_units = (uint64_t)min_units;
                run->probe = (tb_redist_cost){c[0], c[1], (uint64_t)c[2], c[3], c[4], c[5], c[6]};
            }
        } else if (cJSON_GetObjectItemCaseSensitive(o, "point")) {
            double it, total, move;
            if (P < 1 || whole(o, "point", 0, 1, REC_MAX_COUNT, &it) ||
                whole(o, "total", 0, 0, REC_MAX_COUNT, &total) ||
                whole(o, "move", 0, 0, 1, &move)) {
                set_err(run, "%s:%ld: a balancing point needs point >= 1, total and move (0 or "
                             "1) as whole numbers, after the record's first line", path, lineno);
                rc = TB_ERR_PARSE;
            } else if (tb_grow(&run->rec, &cap_rec, run->nrec, sizeof *run->rec, 16) != TB_OK) {
                rc = TB_ERR_NOMEM;
            } else {
                rec_point *p = &run->rec[run->nrec];
                memset(p, 0, sizeof *p);
                p->counts = calloc((size_t)P, sizeof *p->counts);
                p->next = calloc((size_t)P, sizeof *p->next);
                p->meas = calloc((size_t)P * TB__RB_PACK, sizeof *p->meas);
                run->nrec++;
                p->iteration = (uint64_t)it;
                p->total = (uint64_t)total;
                p->move = (int)move;
                if (!p->counts || !p->next || !p->meas)
                    rc = TB_ERR_NOMEM;
                else if (p->iteration < 1 ||
                         json_u64s(cJSON_GetObjectItemCaseSensitive(o, "counts"), p->counts, P) ||
                         json_u64s(cJSON_GetObjectItemCaseSensitive(o, "next"), p->next, P) ||
                         json_doubles(cJSON_GetObjectItemCaseSensitive(o, "meas"), p->meas,
                                      P * TB__RB_PACK)) {
                    set_err(run, "%s:%ld: a balancing point needs point, counts[%d], next[%d] and "
                                 "meas[%d]", path, lineno, P, P, P * TB__RB_PACK);
                    rc = TB_ERR_PARSE;
                }
            }
        } else if (cJSON_GetObjectItemCaseSensitive(o, "moved")) {
            if (run->nrec == 0 || !run->rec[run->nrec - 1].move) {
                set_err(run, "%s:%ld: a move that follows no moving point", path, lineno);
                rc = TB_ERR_PARSE;
            } else {
                run->rec[run->nrec - 1].moved = num(o, "moved", 0);
                run->rec[run->nrec - 1].predicted = num(o, "predicted", 0);
            }
        }
        cJSON_Delete(o);
    }
    free(line);
    if (rc == TB_OK && ferror(f)) {
        set_err(run, "%s: %s", path, strerror(errno));
        rc = TB_ERR_IO;
    }
    fclose(f);
    if (rc == TB_OK && lineno == 0) {
        set_err(run, "%s: empty record", path);
        rc = TB_ERR_PARSE;
    }
    return rc;
}

/* ---- the run --------------------------------------------------------------- */

/* The probe, modelled: one-way times of 1, 8 and 64 units between ranks 0
 * and 1 under the platform's network, fitted as the real probe fits its
 * measures. */
static void model_probe(rs_run *run)
{
    memset(&run->probe, 0, sizeof run->probe);
    if (run->P < 2 || !(run->unit_bytes > 0))
        return;
    const tb_platform *p = run->cfg->platform;
    int c0 = p->hosts[tb_platform_host_of(p, 0)].cluster;
    int c1 = p->hosts[tb_platform_host_of(p, 1)].cluster;
    double bytes[3], secs[3];
    static const double units[3] = {1, 8, 64};
    for (int i = 0; i < 3; i++) {
        bytes[i] = units[i] * run->unit_bytes;
        tb_netmsg nm;
        tb_net_send(p, run->P, c0, c1, 0, (size_t)bytes[i], 0, -INFINITY, &nm);
        secs[i] = nm.arrival + tb_net_recv_cost(p, run->P, c0, c1, (size_t)bytes[i],
                                                nm.rendezvous);
    }
    if (tb_redist_cost_fit(&run->probe, bytes, secs, 3) != TB_OK)
        memset(&run->probe, 0, sizeof run->probe);
}

void tb_redist_sim_result_free(tb_redist_sim_result **pres)
{
    if (!pres || !*pres)
        return;
    tb_redist_sim_result *res = *pres;
    free(res->compute_s);
    free(res->wait_s);
    free(res->counts);
    free(res->pts);
    free(res->layouts);
    free(res);
    *pres = NULL;
}

void tb_redist_sim_opts_init(tb_redist_sim_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->size = sizeof *opts;
    opts->min_units = 1;
    tb_redist_opts_init(&opts->balance);
}

/* tb_redist_sim_run into a zeroed *res. */
static int sim_run(const tb_redist_sim_opts *cfg, tb_redist_sim_result *res, char *err,
                   size_t errlen)
{
    rs_run run;
    memset(&run, 0, sizeof run);
    run.cfg = cfg;
    run.err = err;
    run.errlen = errlen;
    run.res = res;
    if (!cfg || !cfg->platform) {
        set_err(&run, "no configuration or platform");
        return TB_ERR_INVALID;
    }
    run.bal = cfg->balance;
    run.P = cfg->ranks;
    run.units = cfg->units;
    run.iters = cfg->iters;
    run.min_units = cfg->min_units ? cfg->min_units : 1;
    run.unit_bytes = cfg->unit_bytes;
    int rc = TB_OK;
    if (cfg->replay) {
        rc = read_record(&run, cfg->replay);
        if (rc == TB_OK && cfg->ranks && cfg->ranks != run.P) {
            set_err(&run, "%s: the record has %d ranks, not %d", cfg->replay, run.P, cfg->ranks);
            rc = TB_ERR_INVALID;
        }
        if (rc == TB_OK && cfg->units && cfg->units != run.units) {
            set_err(&run, "%s: the record has %" PRIu64 " units, not %" PRIu64, cfg->replay,
                    run.units, cfg->units);
            rc = TB_ERR_INVALID;
        }
        if (rc != TB_OK) {
            free_record(&run);
            return rc;
        }
    }
    const tb_redist_opts *b = &run.bal;
    if (run.P < 1 || run.iters < 1 || !(cfg->unit_work > 0) || !isfinite(cfg->unit_work) ||
        !(run.unit_bytes >= 0) || !(cfg->halo_bytes >= 0) || !(b->threshold >= 1) ||
        b->interval < 1 || !(b->smoothing > 0) || b->smoothing > 1 ||
        (b->mode != TB_REDIST_PREDICT && b->mode != TB_REDIST_NO_PREDICT &&
         b->mode != TB_REDIST_OFF)) {
        set_err(&run, "invalid simulation: %d ranks, %" PRIu64 " iterations, unit work %g s, "
                      "threshold %g, interval %" PRIu64, run.P, run.iters, cfg->unit_work,
                b->threshold, b->interval);
        free_record(&run);
        return TB_ERR_INVALID;
    }
    if (run.units / run.min_units < (uint64_t)run.P) {
        set_err(&run, "%" PRIu64 " units cannot give %d ranks %" PRIu64 " each", run.units, run.P,
                run.min_units);
        free_record(&run);
        return TB_ERR_SIZE;
    }
    if ((size_t)run.P > tb_platform_cores(cfg->platform)) {
        set_err(&run, "%d ranks do not fit the platform's %zu cores", run.P,
                tb_platform_cores(cfg->platform));
        free_record(&run);
        return TB_ERR_SIZE;
    }
    int P = run.P;
    res->ranks = P;
    res->balance = run.bal;
    run.counts = calloc((size_t)P, sizeof *run.counts);
    run.prev = calloc((size_t)P, sizeof *run.prev);
    run.meas = calloc((size_t)P * TB__RB_PACK, sizeof *run.meas);
    res->compute_s = calloc((size_t)P, sizeof *res->compute_s);
    res->wait_s = calloc((size_t)P, sizeof *res->wait_s);
    res->counts = calloc((size_t)P, sizeof *res->counts);
    if (!run.counts || !run.prev || !run.meas || !res->compute_s || !res->wait_s || !res->counts)
        rc = TB_ERR_NOMEM;
    if (rc == TB_OK)
        rc = tb__rb_init(&run.rb, P, b, run.min_units, run.unit_bytes);
    if (rc == TB_OK) {
        for (int i = 0; i < P; i++)
            run.counts[i] = run.units / (uint64_t)P + ((uint64_t)i < run.units % (uint64_t)P);
        if (!run.rec)
            model_probe(&run);
        run.rb.cost = run.probe;
        res->cost = run.probe;
    }
    run.layer = (tb__run){.what = "the simulated application", .plat = cfg->platform, .ranks = P,
                          .cost = sim_cost, .cost_ctx = &run};
    if (rc == TB_OK) {
        rc = tb__run_go(&run.layer, &rank_ops, &run);
        if (rc != TB_OK)
            set_err(&run, "simulation failed: %s", tb_strerror(rc));
    }
    res->wall_s = run.layer.wall_s;
    if (rc == TB_OK && run.rec && run.irec != run.nrec) {
        set_err(&run, "replay: the simulation ended with %zu of the record's %zu points unused",
                run.nrec - run.irec, run.nrec);
        rc = TB_ERR_STATE;
    }
    if (rc == TB_OK) {
        res->events = run.layer.events;
        for (int i = 0; i < P; i++) {
            const rs_rank *k = rank_of(&run, i);
            res->compute_s[i] = k->compute_s;
            res->makespan_s = k->finish > res->makespan_s ? k->finish : res->makespan_s;
        }
        for (int i = 0; i < P; i++)
            res->wait_s[i] = rank_of(&run, i)->finish - res->compute_s[i];
        memcpy(res->counts, run.counts, (size_t)P * sizeof *run.counts);
    }
    tb__run_end(&run.layer, &rank_ops, &run);
    tb__rb_free(&run.rb);
    free(run.counts);
    free(run.prev);
    free(run.meas);
    free(run.mv);
    free_record(&run);
    return rc;
}

int tb_redist_sim_run(const tb_redist_sim_opts *opts, tb_redist_sim_result **out, char *err,
                      size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!out)
        return tb__errf(err, errlen, TB_ERR_INVALID, "no place for the result");
    *out = NULL;
    if (opts && (opts->size < sizeof *opts || opts->balance.size < sizeof opts->balance))
        return tb__errf(err, errlen, TB_ERR_INVALID,
                        "options not set up by tb_redist_sim_opts_init");
    tb_redist_sim_result *res = calloc(1, sizeof *res);
    if (!res)
        return tb__errf(err, errlen, TB_ERR_NOMEM, "out of memory");
    int rc = sim_run(opts, res, err, errlen);
    if (rc != TB_OK)
        tb_redist_sim_result_free(&res);
    *out = res;
    return rc;
}

int tb_redist_sim_result_json(const tb_redist_sim_opts *opts, const tb_redist_sim_result *r,
                              const char *extra, tb_buf *out)
{
    if (!opts || !r || !out)
        return TB_ERR_INVALID;
    static const char *const modes[] = {"on", "nopredict", "off"};
    const tb_redist_opts *bal = &r->balance;
    int P = r->ranks;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return TB_ERR_NOMEM;
    int bad = 0;
    bad |= tb__json_bool(o, "simulated", 1);
    bad |= tb__json_int(o, "ranks", P);
    bad |= tb__json_u64(o, "iters", opts->iters);
    bad |= tb__json_str(o, "balance", bal->mode >= 0 && bal->mode <= 2 ? modes[bal->mode] : NULL);
    bad |= tb__json_u64(o, "guards", bal->guards);
    bad |= tb__json_num(o, "threshold", bal->threshold);
    bad |= tb__json_u64(o, "interval", bal->interval);
    bad |= tb__json_num(o, "makespan_s", r->makespan_s);
    bad |= tb__json_u64(o, "moves", r->moves);
    bad |= tb__json_u64(o, "skipped", r->skipped);
    bad |= tb__json_u64(o, "points", r->points);
    bad |= tb__json_u64(o, "bytes_moved", r->bytes_moved);
    bad |= tb__json_num(o, "move_s", r->move_s);
    bad |= tb__json_num(o, "cost_a_s", r->cost.a);
    bad |= tb__json_num(o, "cost_b_s_per_byte", r->cost.b);
    bad |= tb__json_num(o, "decide_cpu_s", r->decide_cpu_s);
    bad |= tb__json_num(o, "wall_s", r->wall_s);
    bad |= tb__json_u64(o, "events", r->events);
    if (opts->replay) {
        bad |= tb__json_u64(o, "replay_points", r->replay_points);
        bad |= tb__json_u64(o, "replay_agree", r->replay_agree);
    }
    bad |= tb__json_num_array(o, "compute_s", r->compute_s, (size_t)P);
    bad |= tb__json_num_array(o, "wait_s", r->wait_s, (size_t)P);
    bad |= tb__json_u64_array(o, "layout", r->counts, (size_t)P);
    cJSON *acts = cJSON_AddArrayToObject(o, "actions");
    bad |= !acts;
    /* the points that planned a move worth considering: moved, or kept */
    for (uint64_t k = 0; k < r->points && !bad; k++) {
        const tb_redist_sim_point *pt = &r->pts[k];
        const tb_redist_decision *d = &pt->decision;
        if (!(d->units_moved > 0 && d->imbalance > bal->threshold && d->remaining > 0))
            continue;
        cJSON *a = cJSON_CreateObject();
        bad |= !cJSON_AddItemToArray(acts, a);
        if (bad)
            break;
        /* the imbalance to 4 decimals, as it has always been written */
        char imb[48];
        snprintf(imb, sizeof imb, "%.4f", d->imbalance);
        bad |= tb__json_u64(a, "iteration", pt->iteration);
        bad |= tb__json_num(a, "time_s", pt->time);
        bad |= tb__json_bool(a, "moved", d->move);
        bad |= tb__json_u64_array(a, "layout", r->layouts + k * (uint64_t)P, (size_t)P);
        bad |= tb__json_num(a, "t_now_s", d->t_now);
        bad |= tb__json_num(a, "t_new_s", d->t_new);
        bad |= tb__json_num(a, "t_move_s", d->t_move);
        bad |= tb__json_num(a, "move_s", pt->move_s);
        bad |= tb__json_num(a, "imbalance", isfinite(d->imbalance) ? strtod(imb, NULL) : NAN);
        bad |= tb__json_str(a, "why", d->why);
    }
    return tb__json_emit(o, bad, extra, out);
}
