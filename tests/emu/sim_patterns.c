/*
 * sim_patterns.c - the message patterns of patterns.c, as actors on the
 * simulated transport; prints the simulated makespan so that tests/cli/emu.sh
 * can check that the emulator and the simulator agree (one LogGPS
 * arithmetic, tb_net_send).
 *
 *   sim_patterns PLATFORM P master N K1 K2
 *   sim_patterns PLATFORM P pingpong N BYTES
 *   sim_patterns PLATFORM P stream N BYTES
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "tenbin/model.h"

typedef struct actor {
    tb_actor base;
    int role; /* 0 master / pinger, 1 worker / ponger */
    long n, sent, stopped, rounds;
    size_t k1, k2;
    int P;
} actor;

static int send_bytes(tb_actor *a, int dst, int tag, size_t k, unsigned char first)
{
    tb_buf b = TB_BUF_INIT;
    int rc = tb_buf_reserve(&b, k + 1);
    if (rc == TB_OK) {
        memset(b.data, 0, k + 1);
        b.data[0] = first;
        b.len = k;
        rc = tb_tp_send(a, dst, tag, &b);
    }
    tb_buf_free(&b);
    return rc;
}

/* ---- master / workers (patterns.c "master") ---- */

static int m_start(tb_actor *a)
{
    actor *x = (actor *)a;
    return x->role == 1 ? send_bytes(a, 0, 1, x->k1, 0) : TB_OK;
}

static int m_message(tb_actor *a, int src, int tag, const void *d, size_t len)
{
    actor *x = (actor *)a;
    (void)tag;
    (void)len;
    if (x->role == 0) {
        int stop = x->sent == x->n;
        int rc = send_bytes(a, src, 2, x->k2, (unsigned char)stop);
        if (stop && ++x->stopped == x->P - 1)
            a->finished = 1;
        if (!stop)
            x->sent++;
        return rc;
    }
    if (((const unsigned char *)d)[0]) {
        a->finished = 1;
        return TB_OK;
    }
    return send_bytes(a, 0, 1, x->k1, 0);
}

/* ---- ping-pong between ranks 2i and 2i+1 ---- */

static int p_start(tb_actor *a)
{
    actor *x = (actor *)a;
    if (a->rank % 2 == 0 && a->rank + 1 < x->P)
        return send_bytes(a, a->rank + 1, 1, x->k1, 0);
    if (a->rank + 1 == x->P && a->rank % 2 == 0)
        a->finished = 1;
    return TB_OK;
}

static int p_message(tb_actor *a, int src, int tag, const void *d, size_t len)
{
    actor *x = (actor *)a;
    (void)tag;
    (void)d;
    (void)len;
    if (a->rank % 2 == 0) {
        if (++x->rounds == x->n) {
            a->finished = 1;
            return TB_OK;
        }
        return send_bytes(a, src, 1, x->k1, 0);
    }
    int rc = send_bytes(a, src, 1, x->k1, 0);
    if (++x->rounds == x->n)
        a->finished = 1;
    return rc;
}

/* ---- streams: every other rank sends rank 0 N messages at once ---- */

static int s_start(tb_actor *a)
{
    actor *x = (actor *)a;
    int rc = TB_OK;
    if (a->rank == 0)
        return TB_OK;
    for (long i = 0; i < x->n && rc == TB_OK; i++)
        rc = send_bytes(a, 0, 6, x->k1, 0);
    a->finished = 1;
    return rc;
}

static int s_message(tb_actor *a, int src, int tag, const void *d, size_t len)
{
    actor *x = (actor *)a;
    (void)src;
    (void)tag;
    (void)d;
    (void)len;
    if (++x->rounds == x->n * (x->P - 1))
        a->finished = 1;
    return TB_OK;
}

static int no_computed(tb_actor *a, uint64_t job, int status)
{
    (void)a;
    (void)job;
    (void)status;
    return TB_ERR_STATE;
}

static const tb_actor_ops master_ops = {sizeof(tb_actor_ops), m_start, m_message, no_computed,
                                        NULL, NULL};
static const tb_actor_ops pingpong_ops = {sizeof(tb_actor_ops), p_start, p_message, no_computed,
                                          NULL, NULL};
static const tb_actor_ops stream_ops = {sizeof(tb_actor_ops), s_start, s_message, no_computed, NULL,
                                        NULL};

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr,
                "usage: sim_patterns PLATFORM P master N K1 K2 | pingpong N BYTES | stream N BYTES\n");
        return 2;
    }
    char err[512];
    tb_platform *plat = NULL;
    if (tb_platform_open(argv[1], 1, &plat, err, sizeof err) != TB_OK) {
        fprintf(stderr, "sim_patterns: %s\n", err);
        return 2;
    }
    int P = atoi(argv[2]);
    const char *mode = argv[3];
    actor *xs = calloc((size_t)P, sizeof *xs);
    tb_actor **acts = calloc((size_t)P, sizeof *acts);
    for (int i = 0; i < P; i++) {
        xs[i].P = P;
        xs[i].n = atol(argv[4]);
        if (!strcmp(mode, "master") && argc == 7) {
            xs[i].base.ops = &master_ops;
            xs[i].role = i == 0 ? 0 : 1;
            xs[i].k1 = (size_t)atol(argv[5]);
            xs[i].k2 = (size_t)atol(argv[6]);
        } else if (!strcmp(mode, "pingpong") && argc == 6) {
            xs[i].base.ops = &pingpong_ops;
            xs[i].k1 = (size_t)atol(argv[5]);
        } else if (!strcmp(mode, "stream") && argc == 6) {
            xs[i].base.ops = &stream_ops;
            xs[i].k1 = (size_t)atol(argv[5]);
        } else {
            fprintf(stderr, "sim_patterns: unknown mode or arguments\n");
            return 2;
        }
        acts[i] = &xs[i].base;
    }
    tb_sim *sim = NULL;
    int rc = tb_sim_create(&sim, plat, P, NULL, NULL, 0);
    if (rc == TB_OK)
        rc = tb_sim_run(sim, acts);
    if (rc != TB_OK) {
        fprintf(stderr, "sim_patterns: %s\n", tb_strerror(rc));
        return 1;
    }
    printf("%.17g\n", tb_sim_end_time(sim));
    tb_sim_destroy(&sim);
    tb_platform_destroy(&plat);
    free(xs);
    free(acts);
    return 0;
}
