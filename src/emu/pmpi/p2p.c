/*
 * p2p.c - libtenbin-emu.so's point-to-point calls (emu.c): emulated sends
 * and receives (each a real message with its header beside it, costed by
 * the platform's network model), probes, and the MPI_Send/Recv/Probe
 * family of wrappers.
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

/* ---- point to point ---------------------------------------------------- */

static size_t type_bytes(int count, MPI_Datatype t)
{
    int sz = 0;
    PMPI_Type_size(t, &sz);
    return (size_t)count * (size_t)(sz > 0 ? sz : 0);
}

static void horizons_clear(void) { E.nhz = 0; }

void tb__emu_sleep_wait(int n, MPI_Request *r, MPI_Status *st, int how)
{
    long ns = 2000;
    for (int first = 1;; first = 0) {
        int flag = 0;
        PMPI_Testall(n, r, &flag, st);
        if (flag)
            return;
        if (how == WAIT_ANSWER) {
            /* Our own message that has not left yet (too large to go at
             * once) may need its receiver's help, and a blocked receiver
             * sleeps until the coordinator says its message was sent. */
            if (first && (E.nsends > 0 || E.sending_to >= 0))
                tb__emu_report(TB_EMU_RUNNING, NULL, 0);
            tb__emu_poll_coord();
        }
        tb__emu_early_acks();
        if (how == WAIT_ASLEEP) {
            /* A blocked receive and no request of our own that MPI may need
             * us to move: nothing to do until the message is sent, and the
             * coordinator says when (TB_EMU_WAKE) once the sender reports
             * it.  A sender that computes after its send reports only at
             * its next wait, so look now and then all the same. */
            if (tb__emu_sleep_on_coord(20 * E.sleep_max_ns))
                how = WAIT_BLOCKED; /* it was sent: now look often */
            continue;
        }
        if (how == WAIT_BLOCKED) {
            /* The coordinator wakes us when the message is sent; until
             * then sleep long (a rank that polls often on a machine with
             * hundreds of ranks takes the cores from those that work). */
            if (tb__emu_sleep_on_coord(ns)) {
                ns = 2000;
                continue;
            }
            ns = tb__emu_doubled(ns, 20 * E.sleep_max_ns);
            continue;
        }
        ns = tb__emu_backoff(ns);
    }
}

static void real_wait(MPI_Request *r, MPI_Status *st) { tb__emu_sleep_wait(1, r, st, WAIT_ANSWER); }

/*
 * Acknowledge, as soon as their header is here, the synchronous and
 * rendezvous messages that posted receives got: the receiver took the
 * message when it was both posted and arrived, and its sender must not wait
 * until the program looks at the request (it may be waiting for the sender).
 */
void tb__emu_early_acks(void)
{
    for (size_t i = 0; i < E.nreqs; i++) {
        ereq *q = E.reqs[i];
        if (q->kind != REQ_RECV || q->acked_out)
            continue;
        int flag = 0;
        MPI_Status st;
        PMPI_Request_get_status(q->hreal, &flag, &st);
        if (!flag)
            continue;
        q->acked_out = 1;
        if (q->h.rdv || q->h.sync)
            tb__emu_send_ack(q->c, st.MPI_SOURCE, q->h.seq,
                             q->posted > q->h.arrival ? q->posted : q->h.arrival);
        /* Matched to this receive: no other receive or probe can see it. */
        tb__emu_took((uint32_t)q->c->world[st.MPI_SOURCE], q->h.seq);
    }
}

/* Sends nobody waits for any more (MPI_Bsend, MPI_Request_free): drop them
 * once their real parts are done (and their acknowledgement, if one comes). */
void tb__emu_reap_detached(void)
{
    for (size_t i = 0; i < E.nreqs;) {
        ereq *q = E.reqs[i];
        int f0 = 1, f1 = 1;
        double taken;
        if (q->kind == REQ_SEND && q->handle == MPI_REQUEST_NULL && !q->part) {
            PMPI_Test(&q->hreal, &f0, MPI_STATUS_IGNORE);
            PMPI_Test(&q->real, &f1, MPI_STATUS_IGNORE);
            if (f0 && f1 &&
                (!q->need_ack || q->acked ||
                 tb__emu_ack_ready(q->dst_world, q->c, q->h.seq, &taken))) {
                free(q->buf);
                E.reqs[i] = E.reqs[--E.nreqs];
                free(q);
                continue;
            }
        }
        i++;
    }
}

/* Let MPI move what it has to move (a large message that needs its sender),
 * and acknowledge what posted receives got. */
void tb__emu_progress(void)
{
    int flag;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, E.self, &flag, MPI_STATUS_IGNORE);
    tb__emu_early_acks();
}

/* A message the coordinator chose is on its way: wait for it to be here. */
static void probe_wait(int src, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *st)
{
    long ns = 2000;
    for (;;) {
        int flag = 0;
        if (msg)
            PMPI_Improbe(src, tag, comm, &flag, msg, st);
        else
            PMPI_Iprobe(src, tag, comm, &flag, st);
        if (flag)
            return;
        tb__emu_early_acks();
        ns = tb__emu_backoff(ns);
    }
}

/* Start an emulated send: clock, header, real messages.  The ereq carries
 * what finishing it needs. */
static void send_start_k(ereq *q, ecomm *c, int coll, const void *buf, int count, MPI_Datatype t,
                         int dst, int tag, int mode, size_t k)
{
    memset(q, 0, sizeof *q);
    q->kind = REQ_SEND;
    q->c = c;
    q->coll = coll;
    q->peer = dst;
    q->tag = tag;
    int w = c->world[dst];
    tb_netmsg nm;
    tb_net_send(E.plat, E.P, E.cluster[E.wrank], E.cluster[w], w == E.wrank, k, E.clock,
                E.link_free, &nm);
    if (mode == MODE_BUFFERED && nm.rendezvous) {
        /* Buffered: never waits for the receiver, so the data goes at once:
         * it arrives L + (k-1)G after the overhead, as an eager message. */
        nm.rendezvous = 0;
        nm.arrival = tb_net_rdv_send_end(E.plat, E.cluster[E.wrank], E.cluster[w], k, nm.send_end);
    }
    if (nm.arrival < E.pair_last[w])
        nm.arrival = E.pair_last[w]; /* no overtaking between two ranks */
    E.pair_last[w] = nm.arrival;
    /* What this rank sends can make others answer before a horizon it was
     * given: forget them. */
    horizons_clear();
    q->h.arrival = nm.arrival;
    q->h.seq = ++E.seq_to[w];
    q->h.bytes = k;
    q->h.rdv = nm.rendezvous && mode != MODE_BUFFERED;
    q->h.sync = mode == MODE_SYNC;
    q->dst_world = w;
    q->need_ack = q->h.rdv || q->h.sync;
    q->done_at = nm.send_end;
    tb__emu_advance(nm.send_end, &E.send, "send");
    E.link_free = nm.link_free;
    E.msgs_sent++;
    E.bytes_sent += k;
    GROW(E.sends, E.nsends, E.capsends);
    E.sends[E.nsends++] =
        (sendrec){(uint32_t)w, tb__emu_ctx_of(c, coll), tag, q->h.seq, nm.arrival};
    PMPI_Isend(&q->h, sizeof q->h, MPI_BYTE, dst, tag, coll ? c->chdr : c->hdr, &q->hreal);
    PMPI_Isend(buf, count, t, dst, tag, coll ? c->coll : c->user, &q->real);
}

void tb__emu_send_start(ereq *q, ecomm *c, int coll, const void *buf, int count, MPI_Datatype t,
                        int dst, int tag, int mode)
{
    send_start_k(q, c, coll, buf, count, t, dst, tag, mode, type_bytes(count, t));
}

/* The acknowledgement of (dst, seq): from the stash, or wait for it. */
/* An acknowledgement (sequence bits, time taken) from comm rank src of c. */
static void stash_ack(const ecomm *c, const double m[2], int src)
{
    ack a;
    memcpy(&a.seq, &m[0], sizeof a.seq);
    a.taken = m[1];
    a.src_world = c->world[src];
    GROW(E.acks, E.nacks, E.capacks);
    E.acks[E.nacks++] = a;
}

/* Move every acknowledgement that has come on c into the stash. */
static void collect_acks(const ecomm *c)
{
    for (;;) {
        int flag = 0;
        MPI_Status st;
        PMPI_Iprobe(MPI_ANY_SOURCE, ACK_TAG, c->chdr, &flag, &st);
        if (!flag)
            return;
        double m[2];
        PMPI_Recv(m, 2, MPI_DOUBLE, st.MPI_SOURCE, ACK_TAG, c->chdr, MPI_STATUS_IGNORE);
        stash_ack(c, m, st.MPI_SOURCE);
    }
}

/* Take the acknowledgement of (dst, seq) from the stash: 1 and *taken. */
static int take_ack(int dst_world, uint64_t seq, double *taken)
{
    for (size_t i = 0; i < E.nacks; i++)
        if (E.acks[i].src_world == dst_world && E.acks[i].seq == seq) {
            *taken = E.acks[i].taken;
            E.acks[i] = E.acks[--E.nacks];
            return 1;
        }
    return 0;
}

/* The acknowledgement of (dst, seq) if it has come: 1 and *taken. */
int tb__emu_ack_ready(int dst_world, const ecomm *c, uint64_t seq, double *taken)
{
    collect_acks(c);
    return take_ack(dst_world, seq, taken);
}

double tb__emu_wait_ack(int dst_world, const ecomm *c, uint64_t seq, double arrival)
{
    for (;;) {
        double t;
        if (take_ack(dst_world, seq, &t))
            return t;
        /* Blocked until the receiver takes it: nothing to send before.  The
         * pattern names the message (it matches no real message), so the
         * coordinator can tell a run that waits for an acknowledgement on
         * its way from a deadlock. */
        pattern ackp = {TB_EMU_ACK_CTX, dst_world, (int32_t)(seq & 0x7fffffff)};
        /* Its next action is after the receiver took it, so not before the
         * message's arrival: that goes where a deadline would. */
        tb__emu_pack_report(TB_EMU_REPORT, TB_EMU_BLOCKED, TB_EMU_PEEK, arrival, &ackp, 1);
        tb__emu_send_frame();
        double m[2];
        MPI_Status st;
        MPI_Request ar;
        PMPI_Irecv(m, 2, MPI_DOUBLE, MPI_ANY_SOURCE, ACK_TAG, c->chdr, &ar);
        tb__emu_sleep_wait(1, &ar, &st, WAIT_QUIET);
        stash_ack(c, m, st.MPI_SOURCE);
    }
}

void tb__emu_send_finish(ereq *q)
{
    E.sending_to = q->dst_world;
    E.sending_rdv = q->need_ack && !q->acked;
    E.sending_ack = (pattern){TB_EMU_ACK_CTX, q->dst_world, (int32_t)(q->h.seq & 0x7fffffff)};
    real_wait(&q->hreal, MPI_STATUS_IGNORE);
    real_wait(&q->real, MPI_STATUS_IGNORE);
    E.sending_to = -1;
    E.sending_rdv = 0;
    if (E.said_sending)
        tb__emu_report(TB_EMU_RUNNING, NULL, 0); /* not held any more */
    if (q->need_ack && !q->acked) {
        double taken = tb__emu_wait_ack(q->dst_world, q->c, q->h.seq, q->h.arrival);
        q->acked = 1;
        q->done_at = tb_net_rdv_send_end(E.plat, E.cluster[E.wrank], E.cluster[q->dst_world],
                                         q->h.rdv ? (size_t)q->h.bytes : 0, taken);
    }
    tb__emu_advance(q->done_at, &E.send, "send");
}

void tb__emu_do_send(ecomm *c, int coll, const void *buf, int count, MPI_Datatype t, int dst,
                     int tag, int mode)
{
    if (dst == MPI_PROC_NULL)
        return;
    ereq q;
    tb__emu_send_start(&q, c, coll, buf, count, t, dst, tag, mode);
    tb__emu_send_finish(&q);
}

/* A received message: charge the receiver, acknowledge if asked. */
void tb__emu_send_ack(const ecomm *c, int src, uint64_t seq, double taken)
{
    double m[2];
    memcpy(&m[0], &seq, sizeof seq);
    m[1] = taken;
    PMPI_Send(m, 2, MPI_DOUBLE, src, ACK_TAG, c->chdr);
    horizons_clear(); /* the sender may now answer sooner than expected */
}

void tb__emu_recv_done(ecomm *c, int coll, int src, const ehdr *h, MPI_Status *st, int counted,
                       int acked)
{
    int w = c->world[src];
    tb_netrecv nr;
    tb_net_recv(E.plat, E.P, E.cluster[w], E.cluster[E.wrank], w == E.wrank, (size_t)h->bytes,
                h->rdv, E.clock, h->arrival, &E.rx, &nr);
    tb__emu_advance(nr.taken, &E.idle, "idle");
    tb__emu_advance(nr.end, &E.recv, "recv");
    if ((h->rdv || h->sync) && !acked)
        tb__emu_send_ack(c, src, h->seq, nr.taken);
    (void)coll;
    E.msgs_recv++;
    if (!counted)
        tb__emu_took((uint32_t)w, h->seq);
    (void)st;
}

/* Receive from a known source (comm rank), real data and header.  With
 * `decided`, the coordinator already chose this message: do not report. */
void tb__emu_recv_known(ecomm *c, int coll, void *buf, int count, MPI_Datatype t, int src, int tag,
                        MPI_Status *st, int decided)
{
    MPI_Status s;
    if (src == MPI_PROC_NULL) {
        PMPI_Recv(buf, count, t, src, tag, coll ? c->coll : c->user, st);
        return;
    }
    ehdr h;
    MPI_Request r[2];
    MPI_Status ss[2];
    PMPI_Irecv(&h, sizeof h, MPI_BYTE, src, tag, coll ? c->chdr : c->hdr, &r[0]);
    PMPI_Irecv(buf, count, t, src, tag, coll ? c->coll : c->user, &r[1]);
    int flag = 0;
    PMPI_Testall(2, r, &flag, ss);
    if (!flag) {
        if (!decided) {
            pattern p = {tb__emu_ctx_of(c, coll), c->world[src], tag == MPI_ANY_TAG ? -1 : tag};
            tb__emu_report(TB_EMU_BLOCKED, &p, 1);
        }
        tb__emu_sleep_wait(2, r, ss,
                           decided        ? WAIT_QUIET
                           : E.nreqs == 0 ? WAIT_ASLEEP
                                          : WAIT_BLOCKED);
    }
    s = ss[1];
    tb__emu_recv_done(c, coll, src, &h, &s, 0, 0);
    if (st != MPI_STATUS_IGNORE)
        *st = s;
}

pattern tb__emu_pattern_of(const ecomm *c, int coll, int src, int tag)
{
    pattern p = {tb__emu_ctx_of(c, coll), src == MPI_ANY_SOURCE ? -1 : c->world[src],
                 tag == MPI_ANY_TAG ? -1 : tag};
    return p;
}

static void do_recv(ecomm *c, int coll, void *buf, int count, MPI_Datatype t, int src, int tag,
                    MPI_Status *st)
{
    if (src != MPI_ANY_SOURCE) {
        tb__emu_recv_known(c, coll, buf, count, t, src, tag, st, 0);
        return;
    }
    pattern p = tb__emu_pattern_of(c, coll, src, tag);
    decision d = tb__emu_decide_take(&p, 1, INFINITY, 1);
    if (!d.found)
        tb__emu_die("rank %d: no message can ever arrive (the coordinator found none)", E.wrank);
    int s = tb__emu_comm_rank_of_world(c, d.src_world);
    tb__emu_recv_known(c, coll, buf, count, t, s, d.tag, st, 1);
}

/* A probe or test that found nothing: looking costs the receive overhead of
 * an empty message (S3's ob models exactly this), and at least 1 ns, so a
 * polling loop always moves on in virtual time and ends. */
void tb__emu_poll_cost(void)
{
    double cost = tb_net_recv_cost(E.plat, E.P, E.cluster[E.wrank], E.cluster[E.wrank], 0, 0);
    tb__emu_advance(E.clock + (cost > 1e-9 ? cost : 1e-9), &E.recv, "poll");
}

/* Remember that nothing matching p arrives before `until`. */
void tb__emu_hz_set(const pattern *p, double until)
{
    for (size_t i = 0; i < E.nhz; i++)
        if (!memcmp(&E.hz[i].p, p, sizeof *p)) {
            E.hz[i].until = until;
            return;
        }
    GROW(E.hz, E.nhz, E.caphz);
    E.hz[E.nhz++] = (horizon){*p, until};
}

/* Does a remembered horizon say that a look for p at this clock fails? */
int tb__emu_horizon_says_no(const pattern *p)
{
    for (size_t i = 0; i < E.nhz; i++)
        if (!memcmp(&E.hz[i].p, p, sizeof *p))
            return E.clock < E.hz[i].until;
    return 0;
}

/* Probe: *flag 1 with the status of the message the program would see. */
static void do_probe(ecomm *c, int src, int tag, int blocking, int *flag, MPI_Status *st,
                     MPI_Message *msg)
{
    if (src == MPI_PROC_NULL) {
        *flag = 1;
        if (msg)
            PMPI_Mprobe(src, tag, c->user, msg, st);
        else
            PMPI_Probe(src, tag, c->user, st);
        return;
    }
    pattern p = tb__emu_pattern_of(c, 0, src, tag);
    if (!blocking && tb__emu_horizon_says_no(&p)) {
        tb__emu_poll_cost();
        *flag = 0;
        return;
    }
    decision d = tb__emu_decide(&p, 1, blocking ? INFINITY : E.clock);
    if (!d.found) {
        tb__emu_hz_set(&p, d.horizon);
        tb__emu_poll_cost();
        *flag = 0;
        return;
    }
    tb__emu_advance(d.arrival, &E.idle, "idle");
    int s = tb__emu_comm_rank_of_world(c, d.src_world);
    MPI_Status rs;
    if (msg) {
        probe_wait(s, d.tag, c->user, msg, &rs);
        mprobed m;
        memset(&m, 0, sizeof m);
        m.msg = *msg;
        m.c = c;
        m.src = s;
        m.tag = d.tag;
        /* Its header now, while the stream order still matches. */
        PMPI_Recv(&m.h, sizeof m.h, MPI_BYTE, s, d.tag, c->hdr, MPI_STATUS_IGNORE);
        GROW(E.mp, E.nmp, E.capmp);
        E.mp[E.nmp++] = m;
        tb__emu_took((uint32_t)d.src_world, m.h.seq);
    } else {
        probe_wait(s, d.tag, c->user, NULL, &rs);
    }
    *flag = 1;
    if (st != MPI_STATUS_IGNORE)
        *st = rs;
}

/* Send from a packed copy of buf (the program may reuse buf at once), as a
 * request nobody waits for: reap_detached frees it once the real send is
 * done. */
void tb__emu_send_detached(ecomm *c, int coll, const void *buf, int count, MPI_Datatype t, int dst,
                           int tag, int mode)
{
    MPI_Comm comm = coll ? c->coll : c->user;
    ereq *q = tb__emu_req_new();
    int psize = 0;
    PMPI_Pack_size(count, t, comm, &psize);
    void *copy = malloc((size_t)psize + 1);
    if (!copy)
        tb__emu_oom();
    int pos = 0;
    PMPI_Pack(buf, count, t, copy, psize, &pos, comm);
    send_start_k(q, c, coll, copy, pos, MPI_PACKED, dst, tag, mode, type_bytes(count, t));
    q->buf = copy;
    q->handle = MPI_REQUEST_NULL;
}

/* Should this send go from a copy (send_detached)?  A standard or ready send
 * the model finishes without its receiver, but larger than a real MPI may
 * send without one (eager limits start at a few KiB; TENBIN_EMU_COPY_MIN,
 * default 1024 bytes), does: the sender runs on as the model says instead of
 * waiting in the real MPI for a receive that the receiver may post only after
 * the sender has acted (docs/emulator.md). */
int tb__emu_send_copied(const ecomm *c, int dst, int count, MPI_Datatype t, int mode)
{
    if (dst == MPI_PROC_NULL || (mode != MODE_STD && mode != MODE_READY))
        return 0;
    size_t k = type_bytes(count, t);
    if (k <= E.copy_min)
        return 0;
    int w = c->world[dst];
    tb_netmsg nm;
    tb_net_send(E.plat, E.P, E.cluster[E.wrank], E.cluster[w], w == E.wrank, k, E.clock,
                E.link_free, &nm);
    return !nm.rendezvous; /* the model sends it without its receiver */
}

static int send_blocking(const void *buf, int count, MPI_Datatype t, int dst, int tag,
                         MPI_Comm comm, int mode, const char *name)
{
    BEGIN(name);
    ecomm *c = tb__emu_comm_get(comm, name);
    if (tb__emu_send_copied(c, dst, count, t, mode)) {
        tb__emu_send_detached(c, 0, buf, count, t, dst, tag, mode);
        END();
    }
    tb__emu_do_send(c, 0, buf, count, t, dst, tag, mode);
    END();
}

EMU_API int MPI_Send(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, t, dst, tag, comm, MODE_STD, "MPI_Send");
}

EMU_API int MPI_Ssend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, t, dst, tag, comm, MODE_SYNC, "MPI_Ssend");
}

EMU_API int MPI_Rsend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, t, dst, tag, comm, MODE_READY, "MPI_Rsend");
}

/* Buffered: the sender never waits for the receiver; the real message goes
 * as a standard non-blocking send the library completes later. */
EMU_API int MPI_Bsend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm)
{
    BEGIN("MPI_Bsend");
    if (dst != MPI_PROC_NULL)
        tb__emu_send_detached(tb__emu_comm_get(comm, "MPI_Bsend"), 0, buf, count, t, dst, tag,
                              MODE_BUFFERED);
    END();
}

static int isend_common(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm,
                        MPI_Request *req, int mode, const char *name)
{
    BEGIN(name);
    ecomm *c = tb__emu_comm_get(comm, name);
    if (dst == MPI_PROC_NULL) {
        PMPI_Isend(buf, count, t, dst, tag, comm, req);
        END();
    }
    if (tb__emu_send_copied(c, dst, count, t, mode)) {
        /* As a large blocking send (send_blocking): from a copy, so that
         * the program's wait ends when the model says, not when the real
         * MPI's receiver has posted. */
        tb__emu_send_detached(c, 0, buf, count, t, dst, tag, mode);
        ereq *q = E.reqs[E.nreqs - 1];
        q->copied = 1;
        PMPI_Grequest_start(tb__emu_grq_query, tb__emu_grq_free, tb__emu_grq_cancel, NULL,
                            &q->handle);
        *req = q->handle;
        END();
    }
    ereq *q = tb__emu_req_new();
    tb__emu_send_start(q, c, 0, buf, count, t, dst, tag, mode);
    q->handle = q->real;
    *req = q->handle;
    END();
}

EMU_API int MPI_Isend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm,
                      MPI_Request *req)
{
    return isend_common(buf, count, t, dst, tag, comm, req, MODE_STD, "MPI_Isend");
}

EMU_API int MPI_Issend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm,
                       MPI_Request *req)
{
    return isend_common(buf, count, t, dst, tag, comm, req, MODE_SYNC, "MPI_Issend");
}

EMU_API int MPI_Irsend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm,
                       MPI_Request *req)
{
    return isend_common(buf, count, t, dst, tag, comm, req, MODE_READY, "MPI_Irsend");
}

EMU_API int MPI_Ibsend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm,
                       MPI_Request *req)
{
    return isend_common(buf, count, t, dst, tag, comm, req, MODE_BUFFERED, "MPI_Ibsend");
}

EMU_API int MPI_Recv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
                     MPI_Status *st)
{
    BEGIN("MPI_Recv");
    do_recv(tb__emu_comm_get(comm, "MPI_Recv"), 0, buf, count, t, src, tag, st);
    END();
}

EMU_API int MPI_Irecv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
                      MPI_Request *req)
{
    BEGIN("MPI_Irecv");
    ecomm *c = tb__emu_comm_get(comm, "MPI_Irecv");
    if (src == MPI_PROC_NULL) {
        PMPI_Irecv(buf, count, t, src, tag, comm, req);
        END();
    }
    ereq *q = tb__emu_req_new();
    q->c = c;
    q->peer = src;
    q->tag = tag;
    q->buf = buf;
    q->count = count;
    q->type = t;
    if (src == MPI_ANY_SOURCE) {
        /* Which message it gets is decided when the program waits or tests;
         * a generalized request stands for it meanwhile. */
        q->kind = REQ_ARECV;
        PMPI_Grequest_start(tb__emu_grq_query, tb__emu_grq_free, tb__emu_grq_cancel, NULL,
                            &q->handle);
    } else {
        q->kind = REQ_RECV;
        q->posted = E.clock;
        PMPI_Irecv(&q->h, sizeof q->h, MPI_BYTE, src, tag, c->hdr, &q->hreal);
        PMPI_Irecv(buf, count, t, src, tag, comm, &q->real);
        q->handle = q->real;
    }
    *req = q->handle;
    END();
}

EMU_API int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dst, int stag,
                         void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag,
                         MPI_Comm comm, MPI_Status *st)
{
    BEGIN("MPI_Sendrecv");
    ecomm *c = tb__emu_comm_get(comm, "MPI_Sendrecv");
    ereq q;
    int sending = dst != MPI_PROC_NULL;
    if (sending)
        tb__emu_send_start(&q, c, 0, sbuf, scount, stype, dst, stag, MODE_STD);
    do_recv(c, 0, rbuf, rcount, rtype, src, rtag, st);
    if (sending)
        tb__emu_send_finish(&q);
    END();
}

EMU_API int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype t, int dst, int stag, int src,
                                 int rtag, MPI_Comm comm, MPI_Status *st)
{
    BEGIN("MPI_Sendrecv_replace");
    ecomm *c = tb__emu_comm_get(comm, "MPI_Sendrecv_replace");
    int psize = 0, pos = 0;
    PMPI_Pack_size(count, t, comm, &psize);
    void *copy = malloc((size_t)psize + 1);
    if (!copy)
        tb__emu_oom();
    PMPI_Pack(buf, count, t, copy, psize, &pos, comm);
    ereq q;
    int sending = dst != MPI_PROC_NULL;
    if (sending) {
        send_start_k(&q, c, 0, copy, pos, MPI_PACKED, dst, stag, MODE_STD, type_bytes(count, t));
    }
    do_recv(c, 0, buf, count, t, src, rtag, st);
    if (sending)
        tb__emu_send_finish(&q);
    free(copy);
    END();
}

EMU_API int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    BEGIN("MPI_Probe");
    int flag;
    do_probe(tb__emu_comm_get(comm, "MPI_Probe"), src, tag, 1, &flag, st, NULL);
    END();
}

EMU_API int MPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *st)
{
    BEGIN("MPI_Iprobe");
    do_probe(tb__emu_comm_get(comm, "MPI_Iprobe"), src, tag, 0, flag, st, NULL);
    END();
}

EMU_API int MPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *st)
{
    BEGIN("MPI_Mprobe");
    int flag;
    do_probe(tb__emu_comm_get(comm, "MPI_Mprobe"), src, tag, 1, &flag, st, msg);
    END();
}

EMU_API int MPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *msg,
                        MPI_Status *st)
{
    BEGIN("MPI_Improbe");
    do_probe(tb__emu_comm_get(comm, "MPI_Improbe"), src, tag, 0, flag, st, msg);
    if (!*flag)
        *msg = MPI_MESSAGE_NULL;
    END();
}

EMU_API int MPI_Mrecv(void *buf, int count, MPI_Datatype t, MPI_Message *msg, MPI_Status *st)
{
    BEGIN("MPI_Mrecv");
    if (*msg == MPI_MESSAGE_NO_PROC) {
        PMPI_Mrecv(buf, count, t, msg, st);
        END();
    }
    size_t i = 0;
    while (i < E.nmp && E.mp[i].msg != *msg)
        i++;
    if (i == E.nmp)
        tb__emu_die("MPI_Mrecv: a message not from an emulated MPI_Mprobe or MPI_Improbe");
    mprobed m = E.mp[i];
    E.mp[i] = E.mp[--E.nmp];
    MPI_Status s;
    PMPI_Mrecv(buf, count, t, msg, &s);
    tb__emu_recv_done(m.c, 0, m.src, &m.h, &s, 1, 0);
    if (st != MPI_STATUS_IGNORE)
        *st = s;
    END();
}
