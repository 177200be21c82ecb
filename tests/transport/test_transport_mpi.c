/*
 * test_transport_mpi.c - the MPI transport delivers every message once, in
 * each sender's order, with its tag and its bytes, whatever its size.
 *
 *   mpiexec -n N test_transport_mpi N [test]
 *
 * Every rank sends every other rank the same sequence of messages at once
 * (so large ones cross in both directions at the same moment), with sizes
 * around the transport's posted-receive size (64 KiB: longer messages go as
 * a header and a body on a second communicator) and up to 1 MiB.  Each
 * receiver checks order, tag, length and content byte by byte.  The runs
 * cover both receive paths: blocking (nothing else to do) and polled (a
 * polite wait, and messages held back by an injected delay).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>

#include "tb_test_mpi.h"
#include "transport/conformance.h"
#include "transport/transport.h"

static int rank, nranks;

/* The sizes of the messages each rank sends each other rank, in order. */
static const size_t sizes[] = {0,     1,     8,     100,   65535, 65536, 65537, 7,
                               200000, 65536, 0,     1 << 20, 3,    131073, 16};
enum { NMSG = sizeof sizes / sizeof sizes[0] };

static unsigned char byte_at(int src, int seq, size_t i)
{
    return (unsigned char)(src * 131 + seq * 31 + i * 7 + (i >> 8));
}

typedef struct sender {
    tb_actor base;
    int *next;   /* [nranks] sequence number expected next from each rank */
    int got;     /* messages received */
    int bad;     /* first problem seen, or 0 */
    int tag_err; /* what a send with a reserved tag returned */
} sender;

static int s_start(tb_actor *a)
{
    sender *s = (sender *)a;
    tb_buf b = TB_BUF_INIT;
    for (int seq = 0; seq < NMSG; seq++) {
        for (int d = 1; d < nranks; d++) {
            int dst = (rank + d) % nranks;
            tb_buf_clear(&b);
            int rc = tb_buf_reserve(&b, sizes[seq]);
            for (size_t i = 0; rc == TB_OK && i < sizes[seq]; i++)
                b.data[i] = byte_at(rank, seq, i);
            b.len = sizes[seq];
            if (rc == TB_OK)
                rc = tb_tp_send(a, dst, 1 + seq, &b);
            if (rc != TB_OK) {
                tb_buf_free(&b);
                return rc;
            }
        }
    }
    /* Tags from 32767 on belong to the transport. */
    s->tag_err = tb_tp_send(a, (rank + 1) % nranks, 32767, &b);
    tb_buf_free(&b);
    return TB_OK;
}

static int s_message(tb_actor *a, int src, int tag, const void *data, size_t len)
{
    sender *s = (sender *)a;
    int seq = s->next[src]++;
    const unsigned char *p = data;
    if (!s->bad && (seq >= NMSG || tag != 1 + seq || len != sizes[seq]))
        s->bad = 1;
    for (size_t i = 0; !s->bad && i < len; i++)
        if (p[i] != byte_at(src, seq, i))
            s->bad = 2;
    if (++s->got == NMSG * (nranks - 1))
        a->finished = 1;
    return TB_OK;
}

static const tb_actor_ops s_ops = {sizeof(tb_actor_ops), s_start, s_message, NULL, NULL, NULL};

/* One run; returns 1 on every rank when every rank saw everything right. */
static int run(int polite, double delay)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    sender s;
    memset(&s, 0, sizeof s);
    s.base.ops = &s_ops;
    s.next = calloc((size_t)nranks, sizeof *s.next);
    tb_tp *tp = NULL;
    int rc = s.next ? tb_tp_mpi_create(&tp, comm) : TB_ERR_NOMEM;
    if (rc == TB_OK && polite)
        tb_tp_mpi_set_wait_sleep(tp, 1e-4);
    if (rc == TB_OK && delay > 0) {
        double *d = calloc((size_t)nranks, sizeof *d);
        for (int r = 0; d && r < nranks; r++)
            d[r] = r % 2 ? delay : 0;
        rc = d ? tb_tp_mpi_set_delay(tp, d) : TB_ERR_NOMEM;
        free(d);
    }
    MPI_Barrier(comm);
    if (rc == TB_OK)
        rc = tb_tp_mpi_run(tp, &s.base);
    uint64_t ms = 0, mr = 0, bs = 0, br = 0;
    if (tp)
        tb_tp_mpi_counts(tp, &ms, &mr, &bs, &br);
    size_t total = 0;
    for (int i = 0; i < NMSG; i++)
        total += sizes[i];
    int ok = rc == TB_OK && !s.bad && s.tag_err == TB_ERR_RANGE &&
             ms == (uint64_t)NMSG * (uint64_t)(nranks - 1) && mr == ms &&
             bs == (uint64_t)total * (uint64_t)(nranks - 1) && br == bs;
    if (!ok)
        printf("rank %d: rc %d bad %d tag_err %d sent %llu/%llu B recv %llu/%llu B\n", rank, rc,
               s.bad, s.tag_err, (unsigned long long)ms, (unsigned long long)bs,
               (unsigned long long)mr, (unsigned long long)br);
    tb_tp_mpi_destroy(&tp);
    free(s.next);
    MPI_Comm_free(&comm);
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

static void test_blocking(void) { TB_ASSERT(run(0, 0)); }
static void test_polled(void) { TB_ASSERT(run(1, 0)); }
static void test_delayed(void) { TB_ASSERT(run(0, 2e-3)); }
static void test_twice(void)
{
    /* A second transport on the same communicator after the first ended. */
    TB_ASSERT(run(0, 0));
    TB_ASSERT(run(1, 1e-3));
}

/* The transport contract (conformance.h), with a blocking and a polite wait. */
static int conformance(int polite)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    conf_actor c;
    tb_tp *tp = NULL;
    int rc = conf_init(&c, nranks);
    if (rc == TB_OK)
        rc = tb_tp_mpi_create(&tp, comm);
    if (rc == TB_OK && polite)
        tb_tp_mpi_set_wait_sleep(tp, 1e-4);
    double t0 = MPI_Wtime();
    if (rc == TB_OK)
        rc = tb_tp_mpi_run(tp, &c.base);
    double took = MPI_Wtime() - t0;
    const char *why = rc != TB_OK ? tb_strerror(rc) : conf_verdict(&c);
    if (!why && took > 100) /* the far timer was waited for, not cancelled */
        why = "finishing waited for a pending timer";
    if (why)
        printf("rank %d: conformance: %s\n", rank, why);
    tb_tp_mpi_destroy(&tp);
    conf_free(&c);
    MPI_Comm_free(&comm);
    int ok = why == NULL, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

static void test_conformance(void) { TB_ASSERT(conformance(0)); }
static void test_conformance_polite(void) { TB_ASSERT(conformance(1)); }

static const tb_test tests[] = {
    {"conformance", test_conformance},
    {"conformance_polite", test_conformance_polite},
    {"blocking", test_blocking},
    {"polled", test_polled},
    {"delayed", test_delayed},
    {"twice", test_twice},
    {NULL, NULL},
};

TB_TEST_MPI_MAIN(tests, 2, rank, nranks)
