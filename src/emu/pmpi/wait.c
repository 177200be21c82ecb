/*
 * wait.c - libtenbin-emu.so's requests (emu.c): nonblocking operations, how
 * they complete in virtual time, and the MPI_Wait/Test family (any, some,
 * all), where the coordinator decides which request completes first.
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

/* ---- requests ------------------------------------------------------------ */

ereq *tb__emu_req_new(void)
{
    ereq *q = calloc(1, sizeof *q);
    if (!q)
        tb__emu_oom();
    GROW(E.reqs, E.nreqs, E.capreqs);
    E.reqs[E.nreqs++] = q;
    return q;
}

static ereq *req_find(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL)
        return NULL;
    for (size_t i = E.nreqs; i-- > 0;)
        if (E.reqs[i]->handle == h && !E.reqs[i]->part)
            return E.reqs[i];
    return NULL;
}

static void empty_status(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    memset(st, 0, sizeof *st);
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
}

static void req_drop(ereq *q)
{
    UNORDERED_REMOVE(E.reqs, E.nreqs, q);
    free(q);
}

int tb__emu_grq_query(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int tb__emu_grq_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

int tb__emu_grq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

/* ---- MPI_Cancel ------------------------------------------------------------
 * A wildcard receive (REQ_ARECV) has taken no message until the program
 * waits or tests: cancelled, it takes none.  A receive from a named source
 * has two real receives posted (header and data): both are cancelled in the
 * real MPI, and finishing it looks at what happened.  Both cancelled: the
 * receive is cancelled.  Both matched: it completes as received (MPI lets a
 * cancel fail).  One matched and not the other: the cancelled part is posted
 * again and the receive completes as received, so no message is lost.  A
 * send completes as sent (its message has left, or will: MPI lets a cancel
 * fail, and MPI 4 deprecates cancelling sends).  A cancel is decided in real
 * time: a message that had arrived in virtual time but not yet really may
 * lose to it, which MPI allows too. */

/* Finish a cancelled receive: 1 if it was cancelled (its status says so),
 * 0 if it completes as received (ss[] filled as the receive's). */
static int finish_cancelled_recv(ereq *q, MPI_Status ss[2])
{
    MPI_Request r[2] = {q->hreal, q->real};
    PMPI_Waitall(2, r, ss);
    int c[2] = {0, 0};
    PMPI_Test_cancelled(&ss[0], &c[0]);
    PMPI_Test_cancelled(&ss[1], &c[1]);
    if (c[0] && c[1])
        return 1;
    if (c[0]) { /* the header again: it was sent with the data */
        PMPI_Recv(&q->h, sizeof q->h, MPI_BYTE, ss[1].MPI_SOURCE, ss[1].MPI_TAG, q->c->hdr,
                  &ss[0]);
    } else if (c[1]) {
        PMPI_Recv(q->buf, q->count, q->type, ss[0].MPI_SOURCE, ss[0].MPI_TAG, q->c->user,
                  &ss[1]);
    }
    return 0;
}

static void cancelled_status(MPI_Status *st)
{
    empty_status(st);
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_ERROR = MPI_SUCCESS;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 1);
}

EMU_API int MPI_Cancel(MPI_Request *req)
{
    BEGIN("MPI_Cancel");
    ereq *q = req ? req_find(*req) : NULL;
    if (!q) { /* not a message of the program's (MPI_PROC_NULL, its own generalized requests) */
        int rc = PMPI_Cancel(req);
        tb__emu_leave();
        return rc;
    }
    if (q->kind == REQ_COLL)
        tb__emu_die("MPI_Cancel of a non-blocking collective's request (erroneous in MPI)");
    if (q->kind == REQ_ARECV) {
        q->cancelled = 1;
    } else if (q->kind == REQ_RECV && !q->cancelled) {
        q->cancelled = 1;
        PMPI_Cancel(&q->hreal);
        PMPI_Cancel(&q->real);
    }
    END();
}

/* Finish q (the program waits on it, or a test found it done): the real
 * parts, the clock, the status.  q is freed; *handle becomes NULL. */
static void req_finish(ereq *q, MPI_Request *handle, MPI_Status *st, const decision *d)
{
    MPI_Status s;
    if (q->cancelled && q->kind == REQ_ARECV) {
        PMPI_Grequest_complete(q->handle);
        MPI_Request h = q->handle;
        PMPI_Wait(&h, MPI_STATUS_IGNORE);
        cancelled_status(st);
        req_drop(q);
        *handle = MPI_REQUEST_NULL;
        return;
    }
    if (q->cancelled && q->kind == REQ_RECV) {
        MPI_Status ss[2];
        if (finish_cancelled_recv(q, ss)) {
            cancelled_status(st);
        } else {
            int seen = q->acked_out; /* as an uncancelled receive finishes */
            q->acked_out = 1;
            tb__emu_recv_done(q->c, q->coll, ss[1].MPI_SOURCE, &q->h, &ss[1], seen, seen);
            if (st != MPI_STATUS_IGNORE)
                *st = ss[1];
        }
        req_drop(q);
        *handle = MPI_REQUEST_NULL;
        return;
    }
    if (q->kind == REQ_SEND) {
        if (q->copied) {
            /* Done when the model says; the real parts go on, detached. */
            ereq *dq = tb__emu_req_new();
            *dq = *q;
            dq->handle = MPI_REQUEST_NULL;
            dq->copied = 0;
            q->buf = NULL;
            tb__emu_advance(q->done_at, &E.send, "send");
            PMPI_Grequest_complete(q->handle);
            MPI_Request h = q->handle;
            PMPI_Wait(&h, MPI_STATUS_IGNORE);
        } else {
            tb__emu_send_finish(q);
        }
        if (st != MPI_STATUS_IGNORE) {
            memset(&s, 0, sizeof s);
            s.MPI_SOURCE = MPI_ANY_SOURCE;
            s.MPI_TAG = MPI_ANY_TAG;
            s.MPI_ERROR = MPI_SUCCESS;
            *st = s;
        }
    } else if (q->kind == REQ_RECV) {
        MPI_Request r[2] = {q->hreal, q->real};
        MPI_Status ss[2];
        int flag = 0;
        PMPI_Testall(2, r, &flag, ss);
        if (!flag) {
            if (!d) {
                pattern p = tb__emu_pattern_of(q->c, q->coll, q->peer, q->tag);
                tb__emu_report(TB_EMU_BLOCKED, &p, 1);
            }
            /* q itself is the one request of this rank's list here */
            tb__emu_sleep_wait(2, r, ss,
                               d              ? WAIT_QUIET
                               : E.nreqs == 1 ? WAIT_ASLEEP
                                              : WAIT_BLOCKED);
        }
        int seen = q->acked_out;
        if (!seen) {
            q->acked_out = 1;
            seen = 0;
        }
        tb__emu_recv_done(q->c, q->coll, ss[1].MPI_SOURCE, &q->h, &ss[1], seen, seen);
        if (st != MPI_STATUS_IGNORE)
            *st = ss[1];
    } else if (q->kind == REQ_COLL) {
        /* Its receives first, then its sends (as MPI_Waitall). */
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < q->nparts; i++) {
                ereq *p = q->parts[i];
                if (p && (p->kind == REQ_SEND) == (pass == 1)) {
                    MPI_Request h = MPI_REQUEST_NULL;
                    req_finish(p, &h, MPI_STATUS_IGNORE, NULL);
                    q->parts[i] = NULL;
                }
            }
        free(q->parts);
        PMPI_Grequest_complete(q->handle);
        MPI_Request h = q->handle;
        PMPI_Wait(&h, MPI_STATUS_IGNORE);
        empty_status(st);
    } else { /* REQ_ARECV: decided now or before */
        decision dd;
        if (!d) {
            pattern p = tb__emu_pattern_of(q->c, q->coll, q->peer, q->tag);
            dd = tb__emu_decide(&p, 1, INFINITY);
            d = &dd;
        }
        int src = tb__emu_comm_rank_of_world(q->c, d->src_world);
        tb__emu_recv_known(q->c, q->coll, q->buf, q->count, q->type, src, d->tag, st, 1);
        PMPI_Grequest_complete(q->handle);
        MPI_Request h = q->handle;
        PMPI_Wait(&h, MPI_STATUS_IGNORE);
    }
    req_drop(q);
    *handle = MPI_REQUEST_NULL;
}

/* Arrival time of a receive request's message if the real message is here
 * already (header read), else NAN. */
static double recv_known_arrival(ereq *q)
{
    if (q->kind != REQ_RECV)
        return NAN;
    int f0 = 0, f1 = 0;
    MPI_Status s;
    PMPI_Request_get_status(q->hreal, &f0, &s);
    PMPI_Request_get_status(q->real, &f1, &s);
    return f0 && f1 ? q->h.arrival : NAN;
}

/*
 * Which of reqs[0..n) finishes first in virtual time, no later than
 * `deadline` (INFINITY: wait for one).  Returns its index, or -1 if none
 * finishes by the deadline.  *d is filled when the coordinator decided.
 */
/* Has the acknowledgement of send q come (then its completion is known)? */
static int send_known(ereq *q)
{
    if (!q->need_ack || q->acked)
        return 1;
    double taken;
    if (!tb__emu_ack_ready(q->dst_world, q->c, q->h.seq, &taken))
        return 0;
    q->acked = 1;
    q->done_at = tb_net_rdv_send_end(E.plat, E.cluster[E.wrank], E.cluster[q->dst_world],
                                     q->h.rdv ? (size_t)q->h.bytes : 0, taken);
    return 1;
}

/* (arrival, source, sequence): the order of messages everywhere. */
static int earlier(double a, int sa, uint64_t qa, double b, int sb, uint64_t qb)
{
    return a < b || (a == b && (sa < sb || (sa == sb && qa < qb)));
}

/*
 * Which of reqs[0..n) finishes first in virtual time, no later than
 * `deadline` (INFINITY: wait for one).  Returns its index, or -1 if none
 * finishes by the deadline.  *d is filled when the coordinator decided.
 * Sends finish when their data left (known at once for eager sends, from
 * the receiver's acknowledgement otherwise); receives when their message
 * arrived.  A send whose acknowledgement has not come is not waited for
 * while a receive could finish instead (its receiver may be waiting for
 * this rank).
 */
static int first_done(ereq **qs, int n, double deadline, decision *d, int *decided)
{
    *decided = 0;
    double best = INFINITY;
    int bi = -1, unacked = 0;
    pattern *pat = NULL;
    int *map = NULL, npat = 0;
    for (int i = 0; i < n; i++) {
        ereq *q = qs[i];
        if (q && q->cancelled) /* finished now, by the cancel */
            return i;
    }
    for (int i = 0; i < n; i++) {
        ereq *q = qs[i];
        if (!q)
            continue;
        if (q->kind == REQ_SEND) {
            if (!send_known(q)) {
                if (deadline == INFINITY) {
                    unacked++;
                    continue;
                }
                /* A test: whether it finished by now depends on when its
                 * receiver took it; wait for the receiver to say (posted
                 * receives acknowledge on their own, so this ends unless the
                 * receiver waits for this rank before it posts one). */
                double taken = tb__emu_wait_ack(q->dst_world, q->c, q->h.seq, q->h.arrival);
                q->acked = 1;
                q->done_at =
                    tb_net_rdv_send_end(E.plat, E.cluster[E.wrank], E.cluster[q->dst_world],
                                        q->h.rdv ? (size_t)q->h.bytes : 0, taken);
            }
            /* Ordered by when each finished, not by when the rank looks. */
            if (q->done_at < best) {
                best = q->done_at;
                bi = i;
            }
            continue;
        }
        if (!pat) {
            pat = malloc((size_t)n * sizeof *pat);
            map = malloc((size_t)n * sizeof *map);
            if (!pat || !map)
                tb__emu_oom();
        }
        map[npat] = i;
        pat[npat++] = tb__emu_pattern_of(q->c, q->coll, q->peer, q->tag);
    }
    long ns = 2000;
    for (;;) {
        double limit = best < deadline ? best : deadline;
        /* Waiting for ever on receives while a send waits for its
         * receiver: look at the receives up to now only, then again. */
        double look = limit == INFINITY && unacked ? E.clock : limit;
        if (npat > 0) {
            /* All receives' messages here already: no need to ask. */
            int all_known = 1, rsrc = -1;
            double rbest = INFINITY;
            uint64_t rseq = 0;
            int rbi = -1;
            for (int j = 0; j < npat && all_known; j++) {
                ereq *q = qs[map[j]];
                double a = recv_known_arrival(q); /* NAN for a wildcard receive */
                int src = isnan(a) ? -1 : q->c->world[q->peer];
                if (isnan(a))
                    all_known = 0;
                else if (rbi < 0 || earlier(a, src, q->h.seq, rbest, rsrc, rseq)) {
                    rbest = a;
                    rsrc = src;
                    rseq = q->h.seq;
                    rbi = map[j];
                }
            }
            if (!all_known && npat == 1 && look < INFINITY && best > look &&
                tb__emu_horizon_says_no(&pat[0])) {
                /* the same look failed before and nothing can arrive until later */
            } else if (all_known) {
                if (rbest <= limit && (rbest < best || (rbest == best && rbi < bi))) {
                    bi = rbi;
                    best = rbest;
                }
            } else if (look >= E.clock) {
                decision dd = tb__emu_decide(pat, npat, look);
                if (dd.found) {
                    int i = map[dd.pattern];
                    if (dd.arrival < best || (dd.arrival == best && i < bi)) {
                        *d = dd;
                        *decided = 1;
                        bi = i;
                        best = dd.arrival;
                    }
                } else if (best > look) {
                    tb__emu_hz_set(&pat[0], dd.horizon);
                }
            }
        }
        if (bi >= 0 || deadline < INFINITY || !unacked)
            break;
        /* Nothing yet: an acknowledgement may have come meanwhile. */
        for (int i = 0; i < n; i++)
            if (qs[i] && qs[i]->kind == REQ_SEND && qs[i]->need_ack && !qs[i]->acked &&
                send_known(qs[i])) {
                unacked--;
                if (qs[i]->done_at < best) {
                    best = qs[i]->done_at;
                    bi = i;
                }
            }
        if (bi >= 0)
            break;
        if (npat == 0) {
            /* Only sends waiting for their receivers: wait for the first. */
            for (int i = 0; i < n; i++)
                if (qs[i] && qs[i]->kind == REQ_SEND && !qs[i]->acked) {
                    ereq *q = qs[i];
                    double taken = tb__emu_wait_ack(q->dst_world, q->c, q->h.seq, q->h.arrival);
                    q->acked = 1;
                    q->done_at =
                        tb_net_rdv_send_end(E.plat, E.cluster[E.wrank], E.cluster[q->dst_world],
                                            q->h.rdv ? (size_t)q->h.bytes : 0, taken);
                    best = q->done_at;
                    bi = i;
                    break;
                }
            break;
        }
        tb__emu_progress();
        ns = tb__emu_backoff(ns);
    }
    free(pat);
    free(map);
    return bi >= 0 && best <= deadline ? bi : -1;
}

/*
 * A test of a non-blocking collective at the caller's clock: each of its
 * steps that is done by then is finished (a receive costs its overhead now,
 * as in a real MPI that moves such a collective on inside MPI calls); 1 once
 * all are.
 */
static int coll_test(ereq *q)
{
    int left = 0;
    for (int i = 0; i < q->nparts; i++) {
        ereq *p = q->parts[i];
        if (!p)
            continue;
        decision d;
        int decided;
        ereq *one[1] = {p};
        if (first_done(one, 1, E.clock, &d, &decided) < 0) {
            left++;
            continue;
        }
        MPI_Request h = MPI_REQUEST_NULL;
        req_finish(p, &h, MPI_STATUS_IGNORE, decided ? &d : NULL);
        q->parts[i] = NULL;
    }
    return left == 0;
}

/* ---- waits and tests --------------------------------------------------- */

EMU_API int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    BEGIN("MPI_Wait");
    ereq *q = req_find(*req);
    if (q)
        req_finish(q, req, st, NULL);
    else
        PMPI_Wait(req, st);
    END();
}

EMU_API int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    BEGIN("MPI_Waitall");
    /* Receives first: a send that waits for its receiver must not keep this
     * rank from receiving what that receiver may be waiting to send. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            MPI_Status *st = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i];
            ereq *q = req_find(reqs[i]);
            if (q && (q->kind == REQ_SEND) == (pass == 1))
                req_finish(q, &reqs[i], st, NULL);
            else if (!q && pass == 0)
                PMPI_Wait(&reqs[i], st);
        }
    END();
}

/* Requests of the program as ereqs (NULL for inactive ones); unknown real
 * requests are finished by real waits first (they are not messages).  A
 * non-blocking collective's request is for MPI_Wait, MPI_Test and
 * MPI_Waitall only. */
static ereq **collect(int n, MPI_Request reqs[], int *active, const char *call)
{
    ereq **qs = calloc((size_t)(n > 0 ? n : 1), sizeof *qs);
    if (!qs)
        tb__emu_oom();
    *active = 0;
    for (int i = 0; i < n; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        qs[i] = req_find(reqs[i]);
        if (qs[i] && qs[i]->kind == REQ_COLL)
            tb__emu_die("%s on the request of a non-blocking collective is not emulated (MPI_Wait, "
                        "MPI_Test and MPI_Waitall are)",
                        call);
        (*active)++;
    }
    return qs;
}

/* A request that is not a message (MPI_PROC_NULL, I/O, ...) among qs: the
 * first one that is done for real, or -1.  It finishes now in virtual time. */
static int real_done(int n, MPI_Request reqs[], ereq **qs, MPI_Status *st)
{
    for (int i = 0; i < n; i++) {
        if (qs[i] || reqs[i] == MPI_REQUEST_NULL)
            continue;
        int flag = 0;
        PMPI_Test(&reqs[i], &flag, st);
        if (flag)
            return i;
    }
    return -1;
}

/* charge: a failed test costs a poll (not when Waitsome looks for more). */
static int any_common(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st,
                      double deadline, int charge, const char *call)
{
    int active;
    ereq **qs = collect(n, reqs, &active, call);
    *idx = MPI_UNDEFINED;
    if (active == 0) {
        *flag = 1;
        empty_status(st);
        free(qs);
        return 0;
    }
    int r = real_done(n, reqs, qs, st);
    if (r >= 0) {
        *flag = 1;
        *idx = r;
        free(qs);
        return 0;
    }
    int ours = 0;
    for (int k = 0; k < n; k++)
        ours += qs[k] != NULL;
    if (ours == 0) {
        /* Only requests that are not messages, none done: wait for real. */
        if (deadline < INFINITY) {
            *flag = 0;
        } else {
            PMPI_Waitany(n, reqs, idx, st);
            *flag = 1;
        }
        free(qs);
        return 0;
    }
    decision d;
    int decided;
    int i = first_done(qs, n, deadline, &d, &decided);
    *flag = i >= 0;
    if (i < 0 && deadline < INFINITY && charge)
        tb__emu_poll_cost();
    if (i >= 0) {
        req_finish(qs[i], &reqs[i], st, decided ? &d : NULL);
        *idx = i;
    }
    free(qs);
    return 0;
}

EMU_API int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
    BEGIN("MPI_Waitany");
    int flag;
    any_common(n, reqs, idx, &flag, st, INFINITY, 1, "MPI_Waitany");
    END();
}

EMU_API int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
{
    BEGIN("MPI_Testany");
    any_common(n, reqs, idx, flag, st, E.clock, 1, "MPI_Testany");
    END();
}

EMU_API int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    BEGIN("MPI_Test");
    ereq *q = req_find(*req);
    if (!q) {
        PMPI_Test(req, flag, st);
        END();
    }
    if (q->kind == REQ_COLL) {
        *flag = coll_test(q);
        if (*flag)
            req_finish(q, req, st, NULL);
        else
            tb__emu_poll_cost();
        END();
    }
    int idx;
    any_common(1, req, &idx, flag, st, E.clock, 1, "MPI_Test");
    END();
}

static int some_common(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[],
                       double deadline, const char *call)
{
    int active;
    ereq **qs = collect(n, reqs, &active, call);
    free(qs);
    if (active == 0) {
        *outcount = MPI_UNDEFINED;
        return 0;
    }
    *outcount = 0;
    int first, flag;
    MPI_Status st;
    any_common(n, reqs, &first, &flag, &st, deadline, 1, call);
    if (!flag)
        return 0;
    idx[0] = first;
    if (sts != MPI_STATUSES_IGNORE)
        sts[0] = st;
    *outcount = 1;
    /* Then every other one done by now. */
    for (;;) {
        int j;
        any_common(n, reqs, &j, &flag, &st, E.clock, 0, call);
        if (!flag || j == MPI_UNDEFINED)
            break;
        idx[*outcount] = j;
        if (sts != MPI_STATUSES_IGNORE)
            sts[*outcount] = st;
        (*outcount)++;
    }
    return 0;
}

EMU_API int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    BEGIN("MPI_Waitsome");
    some_common(n, reqs, outcount, idx, sts, INFINITY, "MPI_Waitsome");
    END();
}

EMU_API int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    BEGIN("MPI_Testsome");
    some_common(n, reqs, outcount, idx, sts, E.clock, "MPI_Testsome");
    END();
}

EMU_API int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    BEGIN("MPI_Testall");
    /* All done by now, or none is touched: each must finish by the clock. */
    int active;
    ereq **qs = collect(n, reqs, &active, "MPI_Testall");
    int all = 1;
    for (int i = 0; i < n && all; i++) {
        if (!qs[i]) {
            int f = 1;
            MPI_Status st;
            if (reqs[i] != MPI_REQUEST_NULL)
                PMPI_Request_get_status(reqs[i], &f, &st);
            all = f;
            continue;
        }
        decision d;
        int decided;
        ereq *one[1] = {qs[i]};
        if (first_done(one, 1, E.clock, &d, &decided) < 0)
            all = 0;
    }
    free(qs);
    *flag = all;
    if (!all)
        tb__emu_poll_cost();
    if (all)
        for (int i = 0; i < n; i++) {
            MPI_Status *st = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i];
            ereq *q = req_find(reqs[i]);
            if (q)
                req_finish(q, &reqs[i], st, NULL);
            else
                PMPI_Wait(&reqs[i], st);
        }
    END();
}

EMU_API int MPI_Request_free(MPI_Request *req)
{
    BEGIN("MPI_Request_free");
    ereq *q = req_find(*req);
    if (q && q->kind == REQ_COLL)
        tb__emu_die("MPI_Request_free of a non-blocking collective's request is not emulated");
    if (q && q->kind != REQ_SEND)
        tb__emu_die("MPI_Request_free of a receive request is not emulated");
    if (q) {
        /* Its data still goes; the library completes it at MPI_Finalize. */
        if (q->copied) {
            PMPI_Grequest_complete(q->handle);
            PMPI_Request_free(&q->handle);
            q->copied = 0;
        }
        q->handle = MPI_REQUEST_NULL;
        *req = MPI_REQUEST_NULL;
    } else {
        PMPI_Request_free(req);
    }
    END();
}

EMU_API int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *st)
{
    ereq *q = E.on ? req_find(req) : NULL;
    if (q)
        tb__emu_die("MPI_Request_get_status on %s request is not emulated (use MPI_Test)",
                    q->kind == REQ_COLL ? "a non-blocking collective's" : "a point-to-point");
    return PMPI_Request_get_status(req, flag, st);
}
