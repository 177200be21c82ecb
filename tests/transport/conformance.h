/*
 * conformance.h - one suite for every transport (the contract in
 * src/transport/transport.h), as nng runs one suite against each of its
 * transports.  The actor below is run on every rank by
 * tests/transport/test_transport_mpi.c (real ranks, Open MPI and MPICH) and
 * by tests/sim/test_sim.c (the simulated transport); each checks the verdict
 * of every rank.
 *
 * Each actor, at start: sets timers out of order (ids 1..6: one in the past,
 * three due at the same time, one cancelled), starts one computation and sees a
 * second one refused, and sends every other rank NMSG messages numbered in
 * order.  It checks: each message once, in its sender's order, with its tag
 * and bytes; timers fire in the order of their time, ties in the order set,
 * each at or after its time, the cancelled one never; now() never goes back;
 * `computed` comes once; spent() goes forward inside the computation and is 0
 * outside it.  When everything has arrived and fired it sets a
 * timer far in the future and finishes: that timer is cancelled, the run
 * ends at once, and it is no error.
 */
#ifndef TB_TEST_CONFORMANCE_H
#define TB_TEST_CONFORMANCE_H

#include <stdlib.h>
#include <string.h>

#include "transport/transport.h"

enum { CONF_NMSG = 40, CONF_FAR_TIMER = 99 };

typedef struct conf_actor {
    tb_actor base;
    int P;
    int *next;          /* [P] the sequence number expected next from each rank */
    int got;            /* messages received */
    double at[7];       /* when timer id was due */
    int fired[7];       /* how many times timer id fired */
    int order[7], nfired;
    int computed;
    int second_compute; /* what a second compute returned */
    double last_now;
    const char *bad;    /* the first broken rule, or NULL */
} conf_actor;

/* Inside a computation, spent() is a time that does not go back;
 * outside one it is 0. */
static int conf_job(void *arg)
{
    conf_actor *c = arg;
    double s1 = tb_tp_spent(&c->base, 0.25), s2 = tb_tp_spent(&c->base, 0.5);
    if (!(s1 >= 0 && s2 >= s1 && s2 < 1e6) && !c->bad)
        c->bad = "spent() inside a computation: not a time that goes forward";
    return 7;
}

static void conf_check_now(conf_actor *c)
{
    double t = tb_tp_now(&c->base);
    if (t < c->last_now && !c->bad)
        c->bad = "now() went back";
    c->last_now = t;
}

static int conf_maybe_finish(conf_actor *c)
{
    if (c->got < CONF_NMSG * (c->P - 1) || c->nfired < 5 || !c->computed)
        return TB_OK;
    /* far in the future: cancelled by finishing, never waited for */
    TB_CHECK(tb_tp_timer(&c->base, tb_tp_now(&c->base) + 1000.0, CONF_FAR_TIMER));
    c->base.finished = 1;
    return TB_OK;
}

static int conf_start(tb_actor *a)
{
    conf_actor *c = (conf_actor *)a;
    double t = tb_tp_now(a);
    c->last_now = t;
    /* ids: 5 in the past, 2 at +1 ms, 1, 3 and 6 at +3 ms (set in that
     * order, after 2: an unordered store that swaps removed entries would
     * reorder them), 4 at +2 ms but cancelled */
    const double due[7] = {0, t + 3e-3, t + 1e-3, t + 3e-3, t + 2e-3, t - 1.0, t + 3e-3};
    const int set[6] = {2, 1, 4, 3, 5, 6};
    for (int k = 0; k < 6; k++) {
        c->at[set[k]] = due[set[k]];
        TB_CHECK(tb_tp_timer(a, due[set[k]], (uint64_t)set[k]));
    }
    TB_CHECK(tb_tp_cancel(a, 4));
    tb_compute job = {conf_job, c, 1e-4, "conformance job", 0, 0, 0.0, 0};
    TB_CHECK(tb_tp_compute(a, 11, &job));
    c->second_compute = tb_tp_compute(a, 12, &job);
    if (tb_tp_spent(a, 0.25) != 0.0 && !c->bad)
        c->bad = "spent() outside a computation is not 0";
    tb_buf b = TB_BUF_INIT;
    for (int seq = 0; seq < CONF_NMSG; seq++)
        for (int d = 1; d < c->P; d++) {
            int dst = (a->rank + d) % c->P;
            tb_buf_clear(&b);
            int rc = tb_buf_pack_u32(&b, (uint32_t)a->rank);
            if (rc == TB_OK)
                rc = tb_buf_pack_u32(&b, (uint32_t)seq);
            if (rc == TB_OK)
                rc = tb_tp_send(a, dst, 100 + seq % 7, &b);
            if (rc != TB_OK) {
                tb_buf_free(&b);
                return rc;
            }
        }
    tb_buf_free(&b);
    return TB_OK;
}

static int conf_message(tb_actor *a, int src, int tag, const void *data, size_t len)
{
    conf_actor *c = (conf_actor *)a;
    conf_check_now(c);
    tb_buf v;
    tb_buf_view(&v, data, len);
    uint32_t from = 0, seq = 0;
    if (tb_buf_unpack_u32(&v, &from) != TB_OK || tb_buf_unpack_u32(&v, &seq) != TB_OK ||
        (int)from != src)
        c->bad = c->bad ? c->bad : "a message's bytes or source";
    else if ((int)seq != c->next[src] || tag != 100 + (int)seq % 7)
        c->bad = c->bad ? c->bad : "a sender's order, or a tag";
    c->next[src]++;
    c->got++;
    return conf_maybe_finish(c);
}

static int conf_computed(tb_actor *a, uint64_t job, int status)
{
    conf_actor *c = (conf_actor *)a;
    conf_check_now(c);
    if (job != 11 || status != 7 || c->computed++)
        c->bad = c->bad ? c->bad : "computed: job, status or count";
    return conf_maybe_finish(c);
}

static int conf_timer(tb_actor *a, uint64_t id)
{
    conf_actor *c = (conf_actor *)a;
    conf_check_now(c);
    if (id == CONF_FAR_TIMER || id == 4 || id < 1 || id > 6) {
        c->bad = c->bad ? c->bad : "a cancelled timer fired";
        return TB_OK;
    }
    if (tb_tp_now(a) < c->at[id])
        c->bad = c->bad ? c->bad : "a timer fired before its time";
    if (c->fired[id]++)
        c->bad = c->bad ? c->bad : "a timer fired twice";
    c->order[c->nfired++] = (int)id;
    return conf_maybe_finish(c);
}

static const tb_actor_ops conf_ops = {sizeof(tb_actor_ops), conf_start, conf_message,
                                      conf_computed, conf_timer, NULL};

/* Set up an actor for a run of P ranks; conf_free after. */
static inline int conf_init(conf_actor *c, int P)
{
    memset(c, 0, sizeof *c);
    c->base.ops = &conf_ops;
    c->P = P;
    c->next = calloc((size_t)P, sizeof *c->next);
    return c->next ? TB_OK : TB_ERR_NOMEM;
}

static inline void conf_free(conf_actor *c)
{
    free(c->next);
    c->next = NULL;
}

/* The verdict after the run: NULL if the contract held. */
static inline const char *conf_verdict(const conf_actor *c)
{
    static const int want[5] = {5, 2, 1, 3, 6};
    if (c->bad)
        return c->bad;
    if (!c->base.finished)
        return "did not finish";
    if (c->got != CONF_NMSG * (c->P - 1))
        return "messages lost or extra";
    if (c->second_compute != TB_ERR_STATE)
        return "a second computation was not refused";
    if (c->nfired != 5 || memcmp(c->order, want, sizeof want) != 0)
        return "timers out of order (want 5, 2, 1, 3, 6; 4 cancelled)";
    return NULL;
}

#endif /* TB_TEST_CONFORMANCE_H */
