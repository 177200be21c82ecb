/*
 * coll.c - libtenbin-emu.so's collectives (emu.c): each built from emulated
 * point-to-point messages on the communicator's hidden collective
 * communicator, so that they cost what the platform's model says.
 */
#define _GNU_SOURCE
#include "emu/pmpi/emu.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "emu/proto.h"
#include "emu/ring.h"
#include "emu/wire.h"

/* ---- collectives ---------------------------------------------------------
 * Built from the emulated point-to-point on the hidden `coll` communicator,
 * so they cost what their messages cost (docs/emulator.md lists the
 * algorithms).  Tags keep one collective's messages apart from the next. */

static void csend(ecomm *c, const void *b, int n, MPI_Datatype t, int dst, int tag)
{
    if (tb__emu_send_copied(c, dst, n, t, MODE_STD))
        tb__emu_send_detached(c, 1, b, n, t, dst, tag, MODE_STD); /* as send_blocking */
    else
        tb__emu_do_send(c, 1, b, n, t, dst, tag, MODE_STD);
}

static void crecv(ecomm *c, void *b, int n, MPI_Datatype t, int src, int tag)
{
    tb__emu_recv_known(c, 1, b, n, t, src, tag, MPI_STATUS_IGNORE, 0);
}

/* A buffer for count elements of t (true extent). */
static void *tmpbuf(int count, MPI_Datatype t, void **base)
{
    MPI_Aint lb, extent, tlb, textent;
    PMPI_Type_get_extent(t, &lb, &extent);
    PMPI_Type_get_true_extent(t, &tlb, &textent);
    size_t n = count > 0 ? (size_t)textent + (size_t)(count - 1) * (size_t)extent : 1;
    char *p = malloc(n + 1);
    if (!p)
        tb__emu_oom();
    *base = p;
    return p - tlb;
}

/* Local copy of count elements (no virtual cost). */
static void local_copy(const void *src, int scount, MPI_Datatype stype, void *dst, int rcount,
                       MPI_Datatype rtype)
{
    PMPI_Sendrecv(src, scount, stype, 0, 7, dst, rcount, rtype, 0, 7, E.self, MPI_STATUS_IGNORE);
}

void tb__emu_coll_bcast(ecomm *c, void *buf, int count, MPI_Datatype t, int root)
{
    /* Binomial tree on ranks relative to the root. */
    int n = c->size, me = (c->rank - root + n) % n, mask = 1;
    while (mask < n) {
        if (me & mask) {
            crecv(c, buf, count, t, (me - mask + root) % n, COLL_TAG0 + 1);
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while (mask > 0) {
        if (me + mask < n)
            csend(c, buf, count, t, (me + mask + root) % n, COLL_TAG0 + 1);
        mask >>= 1;
    }
}

/* Reduce into rbuf at root (rbuf significant at root only). */
void tb__emu_coll_reduce(ecomm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype t,
                        MPI_Op op, int root)
{
    int n = c->size, commute = 0;
    PMPI_Op_commutative(op, &commute);
    void *b1, *b2;
    void *acc = tmpbuf(count, t, &b1), *in = tmpbuf(count, t, &b2);
    local_copy(sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, t, acc, count, t);
    if (!commute) {
        /* Linear, in rank order, so a non-commutative op sees r0 op r1 op ... */
        if (c->rank == root) {
            void *b3;
            void *res = tmpbuf(count, t, &b3);
            for (int r = 0; r < n; r++) {
                if (r == root)
                    local_copy(acc, count, t, in, count, t);
                else
                    crecv(c, in, count, t, r, COLL_TAG0 + 2);
                if (r == 0)
                    local_copy(in, count, t, res, count, t);
                else {
                    PMPI_Reduce_local(res, in, count, t, op); /* in = res op in */
                    local_copy(in, count, t, res, count, t);
                }
            }
            local_copy(res, count, t, rbuf, count, t);
            free(b3);
        } else {
            csend(c, acc, count, t, root, COLL_TAG0 + 2);
        }
        free(b1);
        free(b2);
        return;
    }
    /* Binomial tree toward the root. */
    int me = (c->rank - root + n) % n, mask = 1;
    while (mask < n) {
        if (me & mask) {
            csend(c, acc, count, t, (me - mask + root) % n, COLL_TAG0 + 2);
            break;
        }
        if (me + mask < n) {
            crecv(c, in, count, t, (me + mask + root) % n, COLL_TAG0 + 2);
            PMPI_Reduce_local(in, acc, count, t, op); /* acc = in op acc */
        }
        mask <<= 1;
    }
    if (c->rank == root)
        local_copy(acc, count, t, rbuf, count, t);
    free(b1);
    free(b2);
}

void tb__emu_coll_allreduce(ecomm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype t,
                            MPI_Op op)
{
    tb__emu_coll_reduce(c, sbuf, rbuf, count, t, op, 0);
    tb__emu_coll_bcast(c, rbuf, count, t, 0);
}

static void intra_barrier(ecomm *c)
{
    /* Dissemination: ceil(log2 n) rounds of a 0-byte send and receive. */
    int n = c->size;
    for (int d = 1; d < n; d <<= 1) {
        ereq q;
        tb__emu_send_start(&q, c, 1, NULL, 0, MPI_BYTE, (c->rank + d) % n, COLL_TAG0 + 3, MODE_STD);
        crecv(c, NULL, 0, MPI_BYTE, (c->rank - d + n) % n, COLL_TAG0 + 3);
        tb__emu_send_finish(&q);
    }
}

/* ---- over an intercommunicator ---------------------------------------------
 * The steps between the groups are messages on the intercommunicator's own
 * hidden collective communicator (ranks name the remote group), those inside
 * a group on its local one (ecomm.local), with the algorithms above. */

/* Every rank sends an empty message to each rank of the remote group, in
 * rank order, then takes one from each: it leaves once the whole remote group
 * has entered, which is what a barrier over an intercommunicator promises. */
static void inter_barrier(ecomm *c)
{
    int n = c->nworld;
    ereq *q = malloc((size_t)(n > 0 ? n : 1) * sizeof *q);
    if (!q)
        tb__emu_oom();
    for (int j = 0; j < n; j++)
        tb__emu_send_start(&q[j], c, 1, NULL, 0, MPI_BYTE, j, COLL_TAG0 + 3, MODE_STD);
    for (int j = 0; j < n; j++)
        crecv(c, NULL, 0, MPI_BYTE, j, COLL_TAG0 + 3);
    for (int j = 0; j < n; j++)
        tb__emu_send_finish(&q[j]);
    free(q);
}

void tb__emu_coll_barrier(ecomm *c)
{
    if (c->inter)
        inter_barrier(c);
    else
        intra_barrier(c);
}

/* The root (MPI_ROOT) sends to rank 0 of the other group, which broadcasts
 * in its group (binomial); the root's group mates (MPI_PROC_NULL) do
 * nothing. */
static void inter_bcast(ecomm *c, void *buf, int count, MPI_Datatype t, int root)
{
    if (root == MPI_PROC_NULL)
        return;
    if (root == MPI_ROOT) {
        csend(c, buf, count, t, 0, COLL_TAG0 + 1);
        return;
    }
    if (c->rank == 0)
        crecv(c, buf, count, t, root, COLL_TAG0 + 1);
    tb__emu_coll_bcast(c->local, buf, count, t, 0);
}

/* Each group reduces to its rank 0, the two exchange their results, and
 * each broadcasts what it got in its group: a group gets the other group's
 * reduction. */
static void inter_allreduce(ecomm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype t,
                            MPI_Op op)
{
    if (sbuf == MPI_IN_PLACE)
        tb__emu_die("MPI_Allreduce with MPI_IN_PLACE over an intercommunicator is not emulated");
    void *b;
    void *acc = tmpbuf(count, t, &b);
    tb__emu_coll_reduce(c->local, sbuf, acc, count, t, op, 0);
    if (c->rank == 0) {
        ereq q;
        tb__emu_send_start(&q, c, 1, acc, count, t, 0, COLL_TAG0 + 2, MODE_STD);
        crecv(c, rbuf, count, t, 0, COLL_TAG0 + 2);
        tb__emu_send_finish(&q);
    }
    free(b);
    tb__emu_coll_bcast(c->local, rbuf, count, t, 0);
}

/* The communicator of a collective modelled over intracommunicators only. */
static ecomm *intra(MPI_Comm comm, const char *name)
{
    ecomm *c = tb__emu_comm_get(comm, name);
    if (c->inter)
        tb__emu_die("%s over an intercommunicator is not emulated", name);
    return c;
}

/* ---- the non-blocking barrier -------------------------------------------- */

/* A step of a non-blocking collective: a receive posted now. */
static ereq *part_recv(ecomm *c, void *buf, int count, MPI_Datatype t, int src, int tag)
{
    ereq *q = tb__emu_req_new();
    q->kind = REQ_RECV;
    q->part = 1;
    q->c = c;
    q->coll = 1;
    q->peer = src;
    q->tag = tag;
    q->buf = buf;
    q->count = count;
    q->type = t;
    q->posted = E.clock;
    PMPI_Irecv(&q->h, sizeof q->h, MPI_BYTE, src, tag, c->chdr, &q->hreal);
    PMPI_Irecv(buf, count, t, src, tag, c->coll, &q->real);
    return q;
}

/* ... and a send started now. */
static ereq *part_send(ecomm *c, const void *buf, int count, MPI_Datatype t, int dst, int tag)
{
    ereq *q = tb__emu_req_new();
    tb__emu_send_start(q, c, 1, buf, count, t, dst, tag, MODE_STD);
    q->part = 1;
    q->handle = MPI_REQUEST_NULL;
    return q;
}

/*
 * Over an intercommunicator: the barrier's one round (inter_barrier) as
 * non-blocking messages, the sends started and the receives posted now; the
 * request is done when they are (wait.c: MPI_Wait, MPI_Test, MPI_Waitall).
 */
EMU_API int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    BEGIN("MPI_Ibarrier");
    ecomm *c = tb__emu_comm_get(comm, "MPI_Ibarrier");
    if (!c->inter)
        tb__emu_die("MPI_Ibarrier over an intracommunicator is not emulated");
    int n = c->nworld;
    ereq **parts = malloc((size_t)(2 * n > 0 ? 2 * n : 1) * sizeof *parts);
    if (!parts)
        tb__emu_oom();
    for (int j = 0; j < n; j++)
        parts[j] = part_send(c, NULL, 0, MPI_BYTE, j, COLL_TAG0 + 3);
    for (int j = 0; j < n; j++)
        parts[n + j] = part_recv(c, NULL, 0, MPI_BYTE, j, COLL_TAG0 + 3);
    ereq *q = tb__emu_req_new();
    q->kind = REQ_COLL;
    q->c = c;
    q->coll = 1;
    q->parts = parts;
    q->nparts = 2 * n;
    PMPI_Grequest_start(tb__emu_grq_query, tb__emu_grq_free, tb__emu_grq_cancel, NULL, &q->handle);
    *req = q->handle;
    END();
}

static MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

/* Linear gather(v): the root receives from each rank in rank order. */
static void coll_gatherv(ecomm *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                         const int *rcounts, const int *displs, int rcount, MPI_Datatype rtype,
                         int root)
{
    if (c->rank != root) {
        csend(c, sbuf, scount, stype, root, COLL_TAG0 + 4);
        return;
    }
    MPI_Aint ext = extent_of(rtype);
    for (int r = 0; r < c->size; r++) {
        int n = rcounts ? rcounts[r] : rcount;
        char *at = (char *)rbuf + (rcounts ? (MPI_Aint)displs[r] : (MPI_Aint)r * rcount) * ext;
        if (r == root) {
            if (sbuf != MPI_IN_PLACE)
                local_copy(sbuf, scount, stype, at, n, rtype);
        } else {
            crecv(c, at, n, rtype, r, COLL_TAG0 + 4);
        }
    }
}

/* Linear scatter(v): the root sends to each rank in rank order. */
static void coll_scatterv(ecomm *c, const void *sbuf, const int *scounts, const int *displs,
                          int scount, MPI_Datatype stype, void *rbuf, int rcount,
                          MPI_Datatype rtype, int root)
{
    if (c->rank != root) {
        crecv(c, rbuf, rcount, rtype, root, COLL_TAG0 + 5);
        return;
    }
    MPI_Aint ext = extent_of(stype);
    for (int r = 0; r < c->size; r++) {
        int n = scounts ? scounts[r] : scount;
        const char *at =
            (const char *)sbuf + (scounts ? (MPI_Aint)displs[r] : (MPI_Aint)r * scount) * ext;
        if (r == root) {
            if (rbuf != MPI_IN_PLACE)
                local_copy(at, n, stype, rbuf, rcount, rtype);
        } else {
            csend(c, at, n, stype, r, COLL_TAG0 + 5);
        }
    }
}

/* Ring allgather(v): n-1 steps, each passing one block to the right. */
static void coll_allgatherv(ecomm *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            const int *rcounts, const int *displs, int rcount, MPI_Datatype rtype)
{
    int n = c->size, me = c->rank;
    MPI_Aint ext = extent_of(rtype);
#define BLOCK(r) ((char *)rbuf + (rcounts ? (MPI_Aint)displs[r] : (MPI_Aint)(r)*rcount) * ext)
#define COUNT(r) (rcounts ? rcounts[r] : rcount)
    if (sbuf != MPI_IN_PLACE)
        local_copy(sbuf, scount, stype, BLOCK(me), COUNT(me), rtype);
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int s = 0; s < n - 1; s++) {
        int sb = (me - s + n) % n, rb = (me - s - 1 + n) % n;
        ereq q;
        tb__emu_send_start(&q, c, 1, BLOCK(sb), COUNT(sb), rtype, right, COLL_TAG0 + 6, MODE_STD);
        crecv(c, BLOCK(rb), COUNT(rb), rtype, left, COLL_TAG0 + 6);
        tb__emu_send_finish(&q);
    }
#undef BLOCK
#undef COUNT
}

/* Pairwise exchange alltoall(v): in step s send to me+s, receive from me-s. */
static void coll_alltoallv(ecomm *c, const void *sbuf, const int *scounts, const int *sdispls,
                           int scount, MPI_Datatype stype, void *rbuf, const int *rcounts,
                           const int *rdispls, int rcount, MPI_Datatype rtype)
{
    int n = c->size, me = c->rank;
    MPI_Aint se = extent_of(stype), re = extent_of(rtype);
#define SB(r) ((const char *)sbuf + (scounts ? (MPI_Aint)sdispls[r] : (MPI_Aint)(r)*scount) * se)
#define SC(r) (scounts ? scounts[r] : scount)
#define RB(r) ((char *)rbuf + (rcounts ? (MPI_Aint)rdispls[r] : (MPI_Aint)(r)*rcount) * re)
#define RC(r) (rcounts ? rcounts[r] : rcount)
    local_copy(SB(me), SC(me), stype, RB(me), RC(me), rtype);
    for (int s = 1; s < n; s++) {
        int to = (me + s) % n, from = (me - s + n) % n;
        ereq q;
        tb__emu_send_start(&q, c, 1, SB(to), SC(to), stype, to, COLL_TAG0 + 7, MODE_STD);
        crecv(c, RB(from), RC(from), rtype, from, COLL_TAG0 + 7);
        tb__emu_send_finish(&q);
    }
#undef SB
#undef SC
#undef RB
#undef RC
}

EMU_API int MPI_Barrier(MPI_Comm comm)
{
    BEGIN("MPI_Barrier");
    tb__emu_coll_barrier(tb__emu_comm_get(comm, "MPI_Barrier"));
    END();
}

EMU_API int MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm)
{
    BEGIN("MPI_Bcast");
    ecomm *c = tb__emu_comm_get(comm, "MPI_Bcast");
    if (c->inter)
        inter_bcast(c, buf, count, t, root);
    else
        tb__emu_coll_bcast(c, buf, count, t, root);
    END();
}

EMU_API int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, int root,
                       MPI_Comm comm)
{
    BEGIN("MPI_Reduce");
    tb__emu_coll_reduce(intra(comm, "MPI_Reduce"), sbuf, rbuf, count, t, op, root);
    END();
}

EMU_API int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op,
                          MPI_Comm comm)
{
    BEGIN("MPI_Allreduce");
    ecomm *c = tb__emu_comm_get(comm, "MPI_Allreduce");
    if (c->inter)
        inter_allreduce(c, sbuf, rbuf, count, t, op);
    else
        tb__emu_coll_allreduce(c, sbuf, rbuf, count, t, op);
    END();
}

EMU_API int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                       MPI_Datatype rtype, int root, MPI_Comm comm)
{
    BEGIN("MPI_Gather");
    coll_gatherv(intra(comm, "MPI_Gather"), sbuf, scount, stype, rbuf, NULL, NULL,
                 rcount, rtype, root);
    END();
}

EMU_API int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                        const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                        MPI_Comm comm)
{
    BEGIN("MPI_Gatherv");
    coll_gatherv(intra(comm, "MPI_Gatherv"), sbuf, scount, stype, rbuf, rcounts, displs,
                 0, rtype, root);
    END();
}

EMU_API int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                        MPI_Datatype rtype, int root, MPI_Comm comm)
{
    BEGIN("MPI_Scatter");
    coll_scatterv(intra(comm, "MPI_Scatter"), sbuf, NULL, NULL, scount, stype, rbuf,
                  rcount, rtype, root);
    END();
}

EMU_API int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[],
                         MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                         MPI_Comm comm)
{
    BEGIN("MPI_Scatterv");
    coll_scatterv(intra(comm, "MPI_Scatterv"), sbuf, scounts, displs, 0, stype, rbuf,
                  rcount, rtype, root);
    END();
}

EMU_API int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                          MPI_Datatype rtype, MPI_Comm comm)
{
    BEGIN("MPI_Allgather");
    coll_allgatherv(intra(comm, "MPI_Allgather"), sbuf, scount, stype, rbuf, NULL, NULL,
                    rcount, rtype);
    END();
}

EMU_API int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                           const int rcounts[], const int displs[], MPI_Datatype rtype,
                           MPI_Comm comm)
{
    BEGIN("MPI_Allgatherv");
    coll_allgatherv(intra(comm, "MPI_Allgatherv"), sbuf, scount, stype, rbuf, rcounts,
                    displs, 0, rtype);
    END();
}

EMU_API int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                         MPI_Datatype rtype, MPI_Comm comm)
{
    BEGIN("MPI_Alltoall");
    if (sbuf == MPI_IN_PLACE)
        tb__emu_die("MPI_Alltoall with MPI_IN_PLACE is not emulated");
    coll_alltoallv(intra(comm, "MPI_Alltoall"), sbuf, NULL, NULL, scount, stype, rbuf,
                   NULL, NULL, rcount, rtype);
    END();
}

EMU_API int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                          MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[],
                          MPI_Datatype rtype, MPI_Comm comm)
{
    BEGIN("MPI_Alltoallv");
    if (sbuf == MPI_IN_PLACE)
        tb__emu_die("MPI_Alltoallv with MPI_IN_PLACE is not emulated");
    coll_alltoallv(intra(comm, "MPI_Alltoallv"), sbuf, scounts, sdispls, 0, stype, rbuf,
                   rcounts, rdispls, 0, rtype);
    END();
}
