/*
 * transport_mpi.c - the real transport: one actor per process, MPI messages,
 * wall-clock time.
 *
 * Every send is non-blocking (MPI_Isend on a buffer the transport owns) so
 * that two ranks sending large messages to each other at the same moment
 * cannot deadlock in rendezvous; completed send buffers are recycled so the
 * steady state allocates nothing.  Computation is synchronous: compute() runs
 * the function at once and queues its completion, which the loop delivers
 * before it looks at the network again.
 *
 * Receiving: a rank with nothing else to do blocks in MPI_Recv from any
 * source into a PRE_SIZE buffer, as a hand-written loop does; a rank that
 * polls (sends in flight, timers, a polite wait) keeps a receive posted into
 * that buffer and tests it.  A matched probe (MPI_Mprobe + MPI_Mrecv), which
 * needs no size limit, made Open MPI's round trip 1.4x slower and a posted
 * receive waited on 1.1x (docs/benchmarks.md, "Dispatch").  A message
 * longer than PRE_SIZE goes as a header on the same communicator (tag
 * TAG_BIG: the actor's tag and the length) and its bytes on a second,
 * private communicator, received from that source once the header is in;
 * headers and bodies keep each sender's order, so messages do too.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include "tenbin/core.h"

#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/buf_inline.h"
#include "core/clock_inline.h"
#include "core/guard.h"
#include "transport/transport.h"

enum { POOL_MAX = 64, POOL_MAX_CAP = 1 << 20 };

/* The largest message received straight into a posted buffer, and the tag
 * of the header announcing a longer one (MPI guarantees tags up to 32767;
 * actors use small ones). */
enum { PRE_SIZE = 64 * 1024, TAG_BIG = 32767 };

/* The header of a message longer than PRE_SIZE. */
typedef struct big_hdr {
    int32_t tag;
    int32_t pad;
    uint64_t len;
} big_hdr;

typedef struct send_slot {
    MPI_Request req;
    tb_buf buf;
} send_slot;

typedef struct completion {
    uint64_t job;
    int status;
} completion;

typedef struct tp_timer {
    double at;
    uint64_t id;
    uint64_t seq; /* order of setting: ties of `at` fire in it */
} tp_timer;

/* A message held back to inject wide-area delay (tb_tp_mpi_set_delay). */
typedef struct held_msg {
    double at; /* when it goes to MPI (transport time) */
    int dst, tag;
    tb_buf buf;
} held_msg;

/* How a rank waits for a message when it has nothing else to do. */
typedef enum wait_mode { WAIT_SPIN, WAIT_YIELD, WAIT_SLEEP } wait_mode;

typedef struct tp_mpi {
    tb_tp base;
    wait_mode wait;
    long max_sleep_ns; /* WAIT_SLEEP: the longest sleep (1 ms unless set) */
    MPI_Comm comm;
    MPI_Comm bulk;        /* bodies of messages longer than PRE_SIZE */
    int rank;
    double t0;
    tb__fastclock clk;                    /* the per-task clock (clock_inline.h) */
    tb_buf rbuf;          /* receive buffer of long messages, grown as needed */
    unsigned char *pre;   /* receive buffer, PRE_SIZE */
    MPI_Request preq;     /* the receive posted into it, or MPI_REQUEST_NULL */
    send_slot *sends;     /* outstanding sends */
    size_t nsends, capsends;
    MPI_Request *reqs;    /* scratch for Testsome */
    int *idx;
    tb_buf pool[POOL_MAX]; /* recycled empty buffers */
    int npool;
    completion *done;     /* FIFO of finished computations */
    size_t done_head, done_len, done_cap; /* ring; done_cap a power of 2 */
    double compute_t0;                    /* when the running fn started; -1: none */
    int in_done;                          /* inside a `computed` called by compute() */
    tp_timer *timers;     /* unsorted; few */
    size_t ntimers, captimers;
    uint64_t timer_seq;   /* timers set so far */
    uint64_t msgs_sent, msgs_recv, bytes_sent, bytes_recv;
    double task_timeout;  /* seconds a computation may run, or 0 */
    double *delay;        /* [size] seconds to hold a message to each rank, or NULL */
    held_msg *held;       /* FIFO ring: one delay per destination keeps its order */
    size_t held_head, nheld, capheld; /* capheld a power of 2 */
} tp_mpi;

static tp_mpi *as_mpi(tb_tp *tp) { return (tp_mpi *)tp; }

static void recycle(tp_mpi *m, tb_buf *b)
{
    if (m->npool < POOL_MAX && b->cap <= POOL_MAX_CAP && b->cap > 0) {
        tb__buf_clear(b);
        m->pool[m->npool++] = *b;
    } else {
        tb_buf_free(b);
    }
    tb__buf_init(b);
}

/* Complete whatever sends have finished; returns TB_OK or TB_ERR_MPI. */
static int progress_sends(tp_mpi *m)
{
    if (m->nsends == 0)
        return TB_OK;
    for (size_t i = 0; i < m->nsends; i++)
        m->reqs[i] = m->sends[i].req;
    int outcount = 0;
    if (MPI_Testsome((int)m->nsends, m->reqs, &outcount, m->idx, MPI_STATUSES_IGNORE) !=
        MPI_SUCCESS)
        return TB_ERR_MPI;
    if (outcount <= 0 || outcount == MPI_UNDEFINED)
        return TB_OK;
    for (int k = 0; k < outcount; k++)
        recycle(m, &m->sends[m->idx[k]].buf);
    /* Compact: keep slots whose buffer is still in flight. */
    size_t w = 0;
    for (size_t i = 0; i < m->nsends; i++) {
        if (m->reqs[i] == MPI_REQUEST_NULL)
            continue;
        m->sends[w] = m->sends[i];
        m->sends[w].req = m->reqs[i];
        w++;
    }
    m->nsends = w;
    return TB_OK;
}

static int grow_sends(tp_mpi *m)
{
    if (m->nsends < m->capsends)
        return TB_OK;
    size_t cap = m->capsends ? 2 * m->capsends : 16;
    send_slot *s = realloc(m->sends, cap * sizeof *s);
    if (!s)
        return TB_ERR_NOMEM;
    m->sends = s;
    MPI_Request *r = realloc(m->reqs, cap * sizeof *r);
    if (!r)
        return TB_ERR_NOMEM;
    m->reqs = r;
    int *ix = realloc(m->idx, cap * sizeof *ix);
    if (!ix)
        return TB_ERR_NOMEM;
    m->idx = ix;
    m->capsends = cap;
    return TB_OK;
}

/* A recycled empty buffer, or a new one. */
static void pool_get(tp_mpi *m, tb_buf *b)
{
    if (m->npool > 0)
        *b = m->pool[--m->npool];
    else
        tb__buf_init(b);
}

/* Take msg's content into *out and hand back a recycled buffer so the
 * caller can build the next message. */
static void take_buf(tp_mpi *m, tb_buf *msg, tb_buf *out)
{
    *out = *msg;
    pool_get(m, msg);
}

/* An MPI_Isend still in flight: its slot (made sure of before the send)
 * keeps buf's memory and buf gets a recycled one. */
static void park(tp_mpi *m, MPI_Request req, tb_buf *buf)
{
    send_slot *s = &m->sends[m->nsends++];
    s->req = req;
    take_buf(m, buf, &s->buf);
}

/* MPI_Isend of buf's bytes on comm.  A send that completes at once (an
 * eager message, the common case) leaves buf empty with its memory, ready
 * for the next message; one still in flight is parked.  Either way buf's
 * content is taken. */
static inline int post_send_on(tp_mpi *m, MPI_Comm comm, int dst, int tag, tb_buf *buf)
{
    /* A slot for the send in case it stays in flight, before it starts (a
     * failure here must not leave a send that only the peer can finish). */
    if (m->nsends >= m->capsends) {
        TB_CHECK(progress_sends(m));
        TB_CHECK(grow_sends(m));
    }
    MPI_Request req;
    if (MPI_Isend(buf->data, (int)buf->len, MPI_BYTE, dst, tag, comm, &req) != MPI_SUCCESS) {
        tb__buf_clear(buf);
        return TB_ERR_MPI;
    }
    /* Eager messages are usually complete already; finding out now keeps
     * the loop on the cheaper blocking path. */
    int flag = 0;
    MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    if (flag)
        tb__buf_clear(buf);
    else
        park(m, req, buf);
    return TB_OK;
}

/* A message longer than PRE_SIZE: a header, then the body on `bulk`. */
static int post_big(tp_mpi *m, int dst, int tag, tb_buf *buf)
{
    tb_buf h;
    pool_get(m, &h);
    big_hdr hd = {tag, 0, buf->len};
    int rc = tb_buf_append(&h, &hd, sizeof hd);
    if (rc == TB_OK)
        rc = post_send_on(m, m->comm, dst, TAG_BIG, &h);
    recycle(m, &h);
    if (rc != TB_OK) {
        tb__buf_clear(buf);
        return rc;
    }
    return post_send_on(m, m->bulk, dst, tag, buf);
}

/* Send buf's content (taken) to dst: straight into its posted receive, or
 * as a header and a body when it is longer than PRE_SIZE. */
static int post_send(tp_mpi *m, int dst, int tag, tb_buf *buf)
{
    m->msgs_sent++;
    m->bytes_sent += buf->len;
    if (buf->len > PRE_SIZE)
        return post_big(m, dst, tag, buf);
    return post_send_on(m, m->comm, dst, tag, buf);
}

/* Hand the held messages that are due to MPI. */
static int release_held(tp_mpi *m)
{
    if (m->nheld == 0)
        return TB_OK;
    double now = tb__fastclock_now(&m->clk) - m->t0;
    while (m->nheld > 0 && m->held[m->held_head].at <= now) {
        held_msg *h = &m->held[m->held_head];
        m->held_head = (m->held_head + 1) & (m->capheld - 1);
        m->nheld--;
        int rc = post_send(m, h->dst, h->tag, &h->buf);
        recycle(m, &h->buf);
        TB_CHECK(rc);
    }
    return TB_OK;
}

static int hold(tp_mpi *m, int dst, int tag, tb_buf *msg)
{
    if (m->nheld == m->capheld) { /* grow the ring, unrolled */
        size_t cap = m->capheld ? 2 * m->capheld : 16;
        held_msg *h = malloc(cap * sizeof *h);
        if (!h)
            return TB_ERR_NOMEM;
        for (size_t i = 0; i < m->nheld; i++)
            h[i] = m->held[(m->held_head + i) & (m->capheld - 1)];
        free(m->held);
        m->held = h;
        m->held_head = 0;
        m->capheld = cap;
    }
    held_msg *h = &m->held[(m->held_head + m->nheld) & (m->capheld - 1)];
    h->at = tb__fastclock_now(&m->clk) - m->t0 + m->delay[dst];
    h->dst = dst;
    h->tag = tag;
    take_buf(m, msg, &h->buf);
    m->nheld++;
    return TB_OK;
}

static int mpi_send(tb_tp *tp, tb_actor *from, int dst, int tag, tb_buf *msg)
{
    tp_mpi *m = as_mpi(tp);
    (void)from;
    if (msg->len > INT_MAX) {
        TB_LOG_ERR("message of %zu bytes to rank %d exceeds the 2 GiB MPI count limit",
                   msg->len, dst);
        return TB_ERR_RANGE;
    }
    if (dst < 0 || dst >= m->base.size || tag < 0 || tag >= TAG_BIG)
        return TB_ERR_RANGE;
    if (m->delay && m->delay[dst] > 0)
        return hold(m, dst, tag, msg);
    return post_send(m, dst, tag, msg);
}

int tb_tp_mpi_set_delay(tb_tp *tp, const double *delay)
{
    tp_mpi *m = as_mpi(tp);
    free(m->delay);
    m->delay = NULL;
    if (!delay)
        return TB_OK;
    m->delay = malloc((size_t)m->base.size * sizeof *m->delay);
    if (!m->delay)
        return TB_ERR_NOMEM;
    memcpy(m->delay, delay, (size_t)m->base.size * sizeof *m->delay);
    return TB_OK;
}

static int mpi_arrived(tb_tp *tp, tb_actor *a, const int *from, int n)
{
    tp_mpi *m = as_mpi(tp);
    (void)a;
    /* The posted receive may hold a message a probe no longer sees. */
    int in = -1, flag = 0;
    MPI_Status st;
    if (m->preq != MPI_REQUEST_NULL && MPI_Request_get_status(m->preq, &flag, &st) == MPI_SUCCESS &&
        flag)
        in = st.MPI_SOURCE;
    int count = 0;
    if (from == NULL || n < 0) {
        /* Every other rank, as S1 probes every worker. */
        for (int r = 0; r < m->base.size; r++) {
            flag = r == in;
            if (r != m->rank && !flag)
                MPI_Iprobe(r, MPI_ANY_TAG, m->comm, &flag, MPI_STATUS_IGNORE);
            count += flag != 0;
        }
        return count;
    }
    for (int i = 0; i < n; i++) {
        flag = from[i] == in;
        if (!flag)
            MPI_Iprobe(from[i], MPI_ANY_TAG, m->comm, &flag, MPI_STATUS_IGNORE);
        count += flag != 0;
    }
    return count;
}

static double mpi_now(tb_tp *tp, tb_actor *a)
{
    (void)a;
    tp_mpi *m = as_mpi(tp);
    return tb__fastclock_now(&m->clk) - m->t0;
}

static int mpi_timer(tb_tp *tp, tb_actor *a, double at, uint64_t id)
{
    tp_mpi *m = as_mpi(tp);
    (void)a;
    TB_CHECK(tb_grow(&m->timers, &m->captimers, m->ntimers, sizeof *m->timers, 8));
    m->timers[m->ntimers++] = (tp_timer){at, id, m->timer_seq++};
    return TB_OK;
}

static int mpi_compute(tb_tp *tp, tb_actor *a, uint64_t job, const tb_compute *c)
{
    tp_mpi *m = as_mpi(tp);
    if (m->done_len > 0)
        return TB_ERR_STATE; /* one computation at a time (transport.h) */
    TB_CHECK(tb__guard_enter(c->what ? c->what : "task", c->what ? c->id : job, m->rank,
                             m->task_timeout));
    m->compute_t0 = c->start_given ? m->t0 + c->start : tb__fastclock_now(&m->clk);
    int status = c->fn(c->arg);
    m->compute_t0 = -1;
    tb__guard_leave();
    if (c->tail && !m->in_done) {
        /* Nothing of the caller's runs after this: deliver the completion
         * now instead of one trip through the loop later. */
        m->in_done = 1;
        int rc = a->ops->computed(a, job, status);
        m->in_done = 0;
        return rc;
    }
    if (m->done_len == m->done_cap) {
        size_t cap = m->done_cap ? 2 * m->done_cap : 8;
        completion *d = malloc(cap * sizeof *d);
        if (!d)
            return TB_ERR_NOMEM;
        for (size_t i = 0; i < m->done_len; i++)
            d[i] = m->done[(m->done_head + i) & (m->done_cap - 1)];
        free(m->done);
        m->done = d;
        m->done_cap = cap;
        m->done_head = 0;
    }
    m->done[(m->done_head + m->done_len) & (m->done_cap - 1)] = (completion){job, status};
    m->done_len++;
    return TB_OK;
}

static int mpi_cancel(tb_tp *tp, tb_actor *a, uint64_t id)
{
    (void)a;
    tp_mpi *m = as_mpi(tp);
    for (size_t i = 0; i < m->ntimers;)
        if (m->timers[i].id == id)
            m->timers[i] = m->timers[--m->ntimers];
        else
            i++;
    return TB_OK;
}

/* Real time runs during a computation: the wall time since fn started. */
static double mpi_spent(tb_tp *tp, tb_actor *a, double modelled)
{
    (void)a, (void)modelled;
    tp_mpi *m = as_mpi(tp);
    return m->compute_t0 >= 0 ? tb__fastclock_now(&m->clk) - m->compute_t0 : 0.0;
}

static const tb_tp_ops mpi_ops = {
    sizeof(tb_tp_ops), mpi_send, mpi_arrived, mpi_now, mpi_timer, mpi_compute, mpi_cancel,
    mpi_spent,
};

enum { WAIT_AUTO = WAIT_SLEEP + 1 }; /* TENBIN_MPI_WAIT's words, in wait_mode's order */

/*
 * MPI libraries wait by spinning, which is right on dedicated cores and
 * wrong when ranks outnumber cores or share them with other jobs: a spinning
 * master then takes the CPU from the workers it waits for.  "auto" yields
 * when this node runs more of our ranks than it has cores for us.
 * Collective over comm (it counts the ranks sharing this node).
 */
static wait_mode choose_wait(MPI_Comm comm)
{
    static const char *const words[] = {"spin", "yield", "sleep", "auto", NULL};
    int mode = WAIT_AUTO;
    (void)tb_env_word("TENBIN_MPI_WAIT", words, &mode); /* a wrong word: warned, auto */
    MPI_Comm node;
    int local = 1;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local);
    /* MPI launchers often bind each rank to one core, so one rank's mask
     * says little: count the cores in the union of the node's masks. */
    cpu_set_t set, all;
    CPU_ZERO(&set);
    CPU_ZERO(&all);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int have = sched_getaffinity(0, sizeof set, &set) == 0, have_all = 0;
    MPI_Allreduce(&have, &have_all, 1, MPI_INT, MPI_LAND, node);
    if (have_all) {
        MPI_Allreduce(&set, &all, (int)sizeof set, MPI_BYTE, MPI_BOR, node);
        cores = CPU_COUNT(&all);
    }
    MPI_Comm_free(&node);
    if (mode >= 0 && mode != WAIT_AUTO)
        return (wait_mode)mode;
    return local > cores ? WAIT_YIELD : WAIT_SPIN;
}

int tb_tp_mpi_create(tb_tp **out, MPI_Comm comm)
{
    tp_mpi *m = calloc(1, sizeof *m);
    if (!m)
        return TB_ERR_NOMEM;
    m->pre = malloc(PRE_SIZE);
    if (!m->pre) {
        free(m);
        return TB_ERR_NOMEM;
    }
    m->preq = MPI_REQUEST_NULL;
    m->compute_t0 = -1;
    if (MPI_Comm_dup(comm, &m->bulk) != MPI_SUCCESS) {
        free(m->pre);
        free(m);
        return TB_ERR_MPI;
    }
    m->base.ops = &mpi_ops;
    m->comm = comm;
    m->wait = choose_wait(comm);
    m->max_sleep_ns = 1000000;
    MPI_Comm_rank(comm, &m->rank);
    MPI_Comm_size(comm, &m->base.size);
    tb__fastclock_init(&m->clk);
    m->t0 = m->clk.last;
    *out = &m->base;
    return TB_OK;
}

void tb_tp_mpi_destroy(tb_tp **tp)
{
    if (!tp || !*tp)
        return;
    tp_mpi *m = as_mpi(*tp);
    if (m->preq != MPI_REQUEST_NULL) { /* a run that failed */
        MPI_Cancel(&m->preq);
        MPI_Wait(&m->preq, MPI_STATUS_IGNORE);
    }
    /* tb_tp_mpi_run drains its sends and error paths abort the job, so
     * nothing is in flight here; if something were, let MPI finish it
     * (cancelling sends is deprecated) and leak its buffer rather than free
     * memory MPI may still read. */
    for (size_t i = 0; i < m->nsends; i++)
        MPI_Request_free(&m->sends[i].req);
    for (int i = 0; i < m->npool; i++)
        tb_buf_free(&m->pool[i]);
    tb_buf_free(&m->rbuf);
    free(m->sends);
    free(m->reqs);
    free(m->idx);
    free(m->done);
    free(m->timers);
    for (size_t i = 0; i < m->nheld; i++)
        tb_buf_free(&m->held[(m->held_head + i) & (m->capheld - 1)].buf);
    free(m->held);
    free(m->delay);
    free(m->pre);
    MPI_Comm_free(&m->bulk);
    free(m);
    *tp = NULL;
}

/* Fire the earliest due timer, if any; *fired tells whether one fired. */
static int fire_timer(tp_mpi *m, tb_actor *a, int *fired)
{
    *fired = 0;
    if (m->ntimers == 0)
        return TB_OK;
    double now = tb__fastclock_now(&m->clk) - m->t0;
    size_t best = 0;
    for (size_t i = 1; i < m->ntimers; i++) {
        const tp_timer *t = &m->timers[i], *b = &m->timers[best];
        if (t->at < b->at || (t->at == b->at && t->seq < b->seq))
            best = i;
    }
    if (m->timers[best].at > now)
        return TB_OK;
    uint64_t id = m->timers[best].id;
    m->timers[best] = m->timers[--m->ntimers];
    *fired = 1;
    return a->ops->timer ? a->ops->timer(a, id) : TB_OK;
}

static int post_recv(tp_mpi *m)
{
    return MPI_Irecv(m->pre, PRE_SIZE, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, m->comm,
                     &m->preq) == MPI_SUCCESS
               ? TB_OK
               : TB_ERR_MPI;
}

/* The header of a message longer than PRE_SIZE is in m->pre: receive its
 * body into m->rbuf. */
static int receive_big(tp_mpi *m, int src, int count, const unsigned char **data, int *len,
                       int *tag)
{
    big_hdr hd;
    if (count != (int)sizeof hd)
        return TB_ERR_MPI;
    memcpy(&hd, m->pre, sizeof hd);
    if (hd.len > INT_MAX || hd.tag < 0 || hd.tag >= TAG_BIG)
        return TB_ERR_MPI;
    tb_buf_clear(&m->rbuf);
    TB_CHECK(tb_buf_reserve(&m->rbuf, (size_t)hd.len));
    if (MPI_Recv(m->rbuf.data, (int)hd.len, MPI_BYTE, src, hd.tag, m->bulk, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS)
        return TB_ERR_MPI;
    *data = m->rbuf.data;
    *len = (int)hd.len;
    *tag = hd.tag;
    return TB_OK;
}

/* A message is in m->pre (st describes it): fetch a long message's body
 * and hand the message to the actor. */
static int deliver(tp_mpi *m, tb_actor *a, const MPI_Status *st)
{
    int count = 0;
    MPI_Get_count(st, MPI_BYTE, &count);
    const unsigned char *data = m->pre;
    int src = st->MPI_SOURCE, tag = st->MPI_TAG;
    if (tag == TAG_BIG)
        TB_CHECK(receive_big(m, src, count, &data, &count, &tag));
    m->msgs_recv++;
    m->bytes_recv += (uint64_t)count;
    return a->ops->message(a, src, tag, data, (size_t)count);
}

/* The run is over: withdraw the posted receive.  Every rank's run ends
 * before any rank's next one begins (the callers synchronise), so a
 * message it caught would be one sent to a finished actor: say so and drop it. */
static void cancel_recv(tp_mpi *m)
{
    if (m->preq == MPI_REQUEST_NULL)
        return;
    MPI_Status st;
    MPI_Cancel(&m->preq);
    MPI_Wait(&m->preq, &st);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    if (!cancelled)
        TB_LOG_WARN("rank %d: a message (tag %d) from rank %d arrived after the run ended; dropped",
                    m->rank, st.MPI_TAG, st.MPI_SOURCE);
}

int tb_tp_mpi_run(tb_tp *tp, tb_actor *a)
{
    tp_mpi *m = as_mpi(tp);
    m->t0 = tb__fastclock_anchor(&m->clk);
    a->tp = tp;
    a->rank = m->rank;
    TB_CHECK(a->ops->start(a));
    long backoff = 0;       /* ns, for WAIT_SLEEP */
    double idle_since = -1; /* start of the current empty polling, or -1 */
    /* Rank 0 looks for a stop from outside, so it never blocks then. */
    int watch = m->rank == 0 && tb_signals_caught(), told = 0;
    while (!a->finished) {
        if (watch && !told && tb_signals_pending()) {
            told = 1;
            int (*interrupt)(tb_actor *, int) = tb_actor_interrupt_of(a->ops);
            if (!interrupt)
                return TB_ERR_INTERRUPTED;
            TB_CHECK(interrupt(a, tb_signals_pending()));
            continue;
        }
        if (m->done_len > 0) {
            completion c = m->done[m->done_head];
            m->done_head = (m->done_head + 1) & (m->done_cap - 1);
            m->done_len--;
            TB_CHECK(a->ops->computed(a, c.job, c.status));
            /* An actor that starts its next computation from this one's
             * end (a branch-and-bound master that expands its own tasks)
             * would hold the loop here for as long as it has work: a timer
             * due and a message waiting get their turn between two. */
            if (m->ntimers > 0 && !a->finished) {
                int fired = 0;
                TB_CHECK(fire_timer(m, a, &fired));
            }
            if (m->done_len > 0 && !a->finished) {
                MPI_Status st;
                int flag = 0;
                if (m->preq == MPI_REQUEST_NULL)
                    TB_CHECK(post_recv(m));
                if (MPI_Test(&m->preq, &flag, &st) != MPI_SUCCESS)
                    return TB_ERR_MPI;
                if (flag)
                    TB_CHECK(deliver(m, a, &st));
            }
            continue;
        }
        if (m->ntimers > 0) {
            int fired = 0;
            TB_CHECK(fire_timer(m, a, &fired));
            if (fired)
                continue;
        }
        if (m->nheld > 0)
            TB_CHECK(release_held(m));
        MPI_Status st;
        if ((m->nsends | m->ntimers | m->nheld) == 0 && m->wait == WAIT_SPIN &&
            !(watch && !told)) {
            int rc = m->preq != MPI_REQUEST_NULL
                         ? MPI_Wait(&m->preq, &st)
                         : MPI_Recv(m->pre, PRE_SIZE, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                    m->comm, &st);
            if (rc != MPI_SUCCESS)
                return TB_ERR_MPI;
            TB_CHECK(deliver(m, a, &st));
            continue;
        }
        /* Outstanding sends or timers, or a polite wait: poll. */
        int flag = 0;
        if (m->preq == MPI_REQUEST_NULL)
            TB_CHECK(post_recv(m));
        if (MPI_Test(&m->preq, &flag, &st) != MPI_SUCCESS)
            return TB_ERR_MPI;
        if (flag) {
            TB_CHECK(deliver(m, a, &st));
            idle_since = -1.0;
            backoff = 0;
            continue;
        }
        TB_CHECK(progress_sends(m));
        if (m->wait == WAIT_SPIN)
            continue;
        /* Spin a little first: most answers come within microseconds, and a
         * yield or sleep on every empty poll costs 3x in dispatch rate. */
        double now = tb__fastclock_now(&m->clk);
        if (idle_since < 0)
            idle_since = now;
        if (now - idle_since < 50e-6)
            continue;
        if (m->wait == WAIT_YIELD) {
            sched_yield();
        } else {
            /* 1 us doubling to 1 ms: quick answers stay quick, long waits
             * cost almost no CPU. */
            backoff = backoff ? (backoff < m->max_sleep_ns ? 2 * backoff : backoff) : 1000;
            if (backoff > m->max_sleep_ns)
                backoff = m->max_sleep_ns;
            long ns = backoff;
            if (m->nheld > 0) { /* not past the next held message's time */
                double due = m->held[m->held_head].at - (tb__fastclock_now(&m->clk) - m->t0);
                if (due * 1e9 < ns)
                    ns = due > 0 ? (long)(due * 1e9) : 0;
            }
            for (size_t i = 0; i < m->ntimers; i++) { /* nor past a timer's */
                double due = m->timers[i].at - (tb__fastclock_now(&m->clk) - m->t0);
                if (due * 1e9 < ns)
                    ns = due > 0 ? (long)(due * 1e9) : 0;
            }
            struct timespec ts = {0, ns};
            nanosleep(&ts, NULL);
        }
    }
    /* Nothing may be left in flight when the run returns. */
    while (m->nheld > 0) {
        TB_CHECK(release_held(m));
        TB_CHECK(progress_sends(m));
    }
    while (m->nsends > 0)
        TB_CHECK(progress_sends(m));
    cancel_recv(m);
    return TB_OK;
}

void tb_tp_mpi_set_wait_sleep(tb_tp *tp, double max_sleep)
{
    as_mpi(tp)->wait = WAIT_SLEEP;
    if (max_sleep > 0)
        as_mpi(tp)->max_sleep_ns = max_sleep < 1e-3 ? (long)(max_sleep * 1e9) : 1000000;
}

void tb_tp_mpi_set_task_timeout(tb_tp *tp, double seconds)
{
    as_mpi(tp)->task_timeout = seconds > 0 ? seconds : 0;
}

void tb_tp_mpi_counts(const tb_tp *tp, uint64_t *msgs_sent, uint64_t *msgs_recv,
                      uint64_t *bytes_sent, uint64_t *bytes_recv)
{
    const tp_mpi *m = (const tp_mpi *)tp;
    *msgs_sent = m->msgs_sent;
    *msgs_recv = m->msgs_recv;
    *bytes_sent = m->bytes_sent;
    *bytes_recv = m->bytes_recv;
}
