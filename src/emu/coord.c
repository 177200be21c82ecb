/*
 * coord.c - the emulator's coordinator: launch the program, then decide in
 * virtual time what only virtual time can decide (tenbin/emu.h,
 * docs/emulator.md, the protocol in emu/proto.h).
 *
 * The rule.  Each rank's next action happens no earlier than its *event
 * time*: its clock if it runs; the arrival of the first known message its
 * receive matches if it is blocked (never, if none is known); likewise for a
 * rank waiting for a decision, or its deadline if earlier.  A message rank k
 * has not reported yet is sent at its event time or later, so it reaches
 * rank j no earlier than bound(k, j) = max(event(k) + lookahead, the arrival
 * of k's last known message to j) (lookahead = least send overhead + least
 * latency of the platform; the second term because a pair keeps its order).
 * A waiting rank j whose first matching known message, from s, arrives at
 * t < bound(k, j) for every k other than j and s gets it; one whose deadline
 * d < bound(k, j) for every k != j with no known message by d gets "none".
 * Otherwise it waits, and the ranks whose bound holds it back are asked for a
 * fresh report (they answer at their next MPI call).  The rank with the least
 * event time can always go on, so the run never stops where the real
 * program would not.
 */
#define _GNU_SOURCE
#include "tenbin/emu.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stddef.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/proc.h"
#include "emu/proto.h"
#include "emu/ring.h"
#include "emu/wire.h"
#include "tenbin/config.h"
#include "tenbin/model.h"

typedef struct cpat {
    uint32_t ctx;
    int32_t src, tag;
} cpat;

typedef struct cmsg {
    uint32_t src, ctx;
    int32_t tag;
    uint64_t seq;
    double arrival;
    int ahead; /* given to its receiver in advance (TB_EMU_AHEAD_MAX): not a candidate */
} cmsg;

typedef struct early {
    uint32_t src;
    uint64_t seq;
} early;

typedef struct crank {
    int fd;
    int hello, done;
    pid_t pid;
    int state;
    double clock, deadline;
    cpat *pat;
    size_t npat, cappat;
    int pending; /* WAITING, not answered yet */
    int take;    /* ... and it takes the message (TB_EMU_TAKE) */
    int asked;
    double ask_clock; /* its clock when last asked */
    double ask_next;  /* real time before which it is not asked again */
    double ask_wait;  /* how long that is: doubles while its clock stands still */
    double heard;     /* real time of its last report */
    cmsg *in; /* known messages to it, not consumed */
    size_t nin, capin;
    early *early; /* consumed before their send was reported */
    size_t nearly, capearly;
    double *lastfrom; /* [P]: latest known arrival from each rank (NULL: none yet) */
    tb_emu_ring *up, *down; /* through shared memory (ring.h), or NULL: TCP */
    tb_emu_reader urd;      /* what came up */
    tb_buf backlog;         /* frames down its ring had no room for yet */
} crank;

typedef struct coord {
    int P;
    crank *r;
    double lookahead;
    tb_emu_result *res;
    char fail[512];
    uint64_t decisions;
    uint64_t unchecked; /* decisions made without the relay check (TB_EMU_SENDING) */
    uint64_t unchecked_rdv; /* of them, made only without ranks held in a rendezvous
                               of the model to the deciding rank (held_rdv) */
    uint64_t ahead;     /* answers given in advance (decide_ahead) */
    size_t ahead_max;   /* at most this many with one decision (TENBIN_EMU_AHEAD) */
    cmsg **scratch;     /* decide_ahead's candidates */
    size_t capscratch;
    tb_buf in, out;
    tb_emu_shm *shm;    /* the ranks on this node, or NULL */
    size_t nbacklog;    /* ranks with frames in their backlog */
    double *ev;         /* [P] event times, valid where !stale */
    unsigned char *stale; /* [P] 1: what ev and want say of the rank changed */
    unsigned char *want;  /* [P] WANT_* */
    unsigned char *askable; /* [P] 1: said hello, not done, not asked yet, and
                               running, sending or blocked (a question to it may help) */
    double *tree;       /* min-tree of ev[k] + lookahead: [1] the root, leaves from tsize */
    size_t tsize;       /* leaves: the least power of two >= P */
    double ask_due; /* real time of the next question held back (INFINITY: none) */
} coord;

/*
 * A running rank reports by itself at its next call that waits, which in
 * most programs comes soon: a question in the meantime costs it and the
 * coordinator a frame and a wake-up each, for nothing.  So a rank is asked
 * only once it has been silent this long (real seconds).  Questions serve
 * ranks that run long without waiting (compute, or sends and tests only).
 */
#define ASK_AFTER 200e-6

/* What a rank wants of decide_pass (cached with its event time). */
enum {
    WANT_NOTHING = 0, /* not waiting for a decision */
    WANT_ANY,         /* any source, no matching message known, no deadline: only questions help */
    WANT_DECISION,    /* anything else waiting */
};

/* Rank i's state, clock, patterns or known messages changed. */
static inline void touch(coord *c, int i) { c->stale[i] = 1; }

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int matches(const cmsg *m, const cpat *p)
{
    return m->ctx == p->ctx && (p->src < 0 || (uint32_t)p->src == m->src) &&
           (p->tag < 0 || p->tag == m->tag);
}

/* The first known message (arrival, source, sequence) matching any of r's
 * patterns; *pi its pattern. */
static const cmsg *first_match(const crank *r, size_t *pi)
{
    const cmsg *best = NULL;
    for (size_t i = 0; i < r->nin; i++) {
        const cmsg *m = &r->in[i];
        if (m->ahead)
            continue;
        size_t k = 0;
        while (k < r->npat && !matches(m, &r->pat[k]))
            k++;
        if (k == r->npat)
            continue;
        if (!best || m->arrival < best->arrival ||
            (m->arrival == best->arrival &&
             (m->src < best->src || (m->src == best->src && m->seq < best->seq)))) {
            best = m;
            *pi = k;
        }
    }
    return best;
}

static double event_time(const crank *r)
{
    switch (r->state) {
    case TB_EMU_RUNNING:
    case TB_EMU_SENDING:
        return r->clock;
    case TB_EMU_BLOCKED:
        if (r->npat == 1 && r->pat[0].ctx == TB_EMU_ACK_CTX)
            /* Waiting for the receiver of its own message: it acts after
             * the message arrived (its arrival travels as the deadline). */
            return r->deadline > r->clock ? r->deadline : r->clock;
        /* fall through */
    case TB_EMU_WAITING: {
        size_t pi;
        const cmsg *m = first_match(r, &pi);
        double t = m ? (m->arrival > r->clock ? m->arrival : r->clock) : INFINITY;
        if (r->state == TB_EMU_WAITING && r->deadline < t)
            t = r->deadline > r->clock ? r->deadline : r->clock;
        return t;
    }
    default:
        return INFINITY;
    }
}

/* Move what rank k's backlog holds into its ring, as far as there is room. */
static void flush_down(coord *c, int k)
{
    crank *r = &c->r[k];
    tb_buf *q = &r->backlog;
    size_t n = tb_emu_ring_put(r->down, q->data + q->pos, q->len - q->pos);
    q->pos += n;
    if (q->pos == q->len) {
        tb_buf_clear(q);
        c->nbacklog--;
    }
    if (n > 0)
        tb_emu_ring_ring(r->down);
}

/* The frame b to rank k: down its ring, or on its connection. */
static int to_rank(coord *c, int k, const tb_buf *b)
{
    crank *r = &c->r[k];
    if (!r->down)
        return tb_emu_frame_write(r->fd, b);
    if (r->backlog.len == 0)
        c->nbacklog++;
    TB_CHECK(tb_emu_frame_append(&r->backlog, b));
    flush_down(c, k);
    return TB_OK;
}

static int send_decide(coord *c, int rank, int found, size_t pi, const cmsg *m, double horizon,
                       cmsg *const *ahead, size_t nahead)
{
    tb_buf *b = &c->out;
    tb_buf_clear(b);
    int rc = tb_buf_pack_u8(b, TB_EMU_DECIDE);
    rc |= tb_buf_pack_u8(b, (uint8_t)found);
    rc |= tb_buf_pack_u32(b, (uint32_t)pi);
    rc |= tb_buf_pack_u32(b, m ? m->src : 0);
    rc |= tb_buf_pack_i32(b, m ? m->tag : 0);
    rc |= tb_buf_pack_u64(b, m ? m->seq : 0);
    rc |= tb_buf_pack_f64(b, m ? m->arrival : 0.0);
    rc |= tb_buf_pack_f64(b, horizon);
    rc |= tb_buf_pack_u32(b, (uint32_t)nahead);
    for (size_t i = 0; i < nahead; i++) {
        rc |= tb_buf_pack_u32(b, ahead[i]->src);
        rc |= tb_buf_pack_i32(b, ahead[i]->tag);
        rc |= tb_buf_pack_u64(b, ahead[i]->seq);
        rc |= tb_buf_pack_f64(b, ahead[i]->arrival);
    }
    if (rc != TB_OK)
        return TB_ERR_NOMEM;
    c->decisions++;
    c->ahead += nahead;
    return to_rank(c, rank, b);
}

/* Ask a rank for a fresh report.  A rank whose answers bring the same clock
 * (held in a real wait) is asked again only after a pause that doubles, so
 * the two do not ping-pong. */
static int send_ask(coord *c, int rank)
{
    crank *o = &c->r[rank];
    double now = tb_wtime();
    double due = o->heard + ASK_AFTER > o->ask_next ? o->heard + ASK_AFTER : o->ask_next;
    if (now < due) {
        if (due < c->ask_due)
            c->ask_due = due;
        return TB_OK;
    }
    if (o->clock == o->ask_clock)
        o->ask_wait = o->ask_wait > 0 ? (o->ask_wait < 0.01 ? 2 * o->ask_wait : 0.01) : 1e-4;
    else
        o->ask_wait = 0;
    o->ask_clock = o->clock;
    o->ask_next = now + o->ask_wait;
    tb_buf *b = &c->out;
    tb_buf_clear(b);
    TB_CHECK(tb_buf_pack_u8(b, TB_EMU_ASK));
    o->asked = 1;
    c->askable[rank] = 0;
    return to_rank(c, rank, b);
}

/* One pass over the waiting ranks; *progress set if one was answered. */
/* The earliest time a message the coordinator does not know yet can reach
 * rank j from rank k: k sends at its event time or later, and the pair keeps
 * its order, so not before k's last known message to j either. */
static double bound_from(const coord *c, int j, int k)
{
    double b = c->ev[k] + c->lookahead;
    const double *last = c->r[j].lastfrom;
    if (last && last[k] > b)
        b = last[k];
    return b;
}

/* Could rank k send r a message its patterns match?  (Their sources, or
 * everyone if one takes any source.) */
static int may_send(const crank *r, int k)
{
    if (r->npat == 0)
        return 1;
    for (size_t i = 0; i < r->npat; i++)
        if (r->pat[i].src < 0 || r->pat[i].src == k)
            return 1;
    return 0;
}

/* Does one of r's patterns take any source? */
static int any_source(const crank *r)
{
    for (size_t i = 0; i < r->npat; i++)
        if (r->pat[i].src < 0)
            return 1;
    return 0;
}

/* Is rank k held in the real MPI by a message to j that j has not taken? */
static int held_for(const coord *c, int k, int j)
{
    const crank *o = &c->r[k];
    return o->state == TB_EMU_SENDING && o->deadline == (double)j;
}

/* ... by a message the model sends by rendezvous (it said so with the
 * acknowledgement it waits for)?  Then it cannot act before j takes it, in
 * the model as in the real MPI (docs/emulator.md, "Senders the real MPI
 * holds"): a decision of j that only k holds back is made without k, and
 * counted as unchecked; waiting would wait for ever.  (A send held only by
 * the real MPI may be let go without j: it counts.) */
static int held_rdv(const coord *c, int k, int j)
{
    const crank *o = &c->r[k];
    return held_for(c, k, j) && o->npat == 1 && o->pat[0].ctx == TB_EMU_ACK_CTX &&
           o->pat[0].src == j;
}

/* Least such bound over the ranks that could send j a message its patterns
 * match, but j and s (s = -1: none); *who gets the rank that has it.  With
 * held, ranks held for j are left out and *held gets the least of their
 * bounds (INFINITY: none). */
static double bound_to(const coord *c, int j, int s, int *who, double *held)
{
    const crank *r = &c->r[j];
    double h = INFINITY;
    *who = -1;
    if (held)
        *held = INFINITY;
    for (int k = 0; k < c->P; k++) {
        if (k == j || k == s || !may_send(r, k))
            continue;
        double b = bound_from(c, j, k);
        if (held && held_rdv(c, k, j)) {
            if (b < *held)
                *held = b;
            continue;
        }
        if (b < h) {
            h = b;
            *who = k;
        }
    }
    return h;
}

/* t is safe before bound h: nothing unknown arrives at or before t.  With no
 * lookahead at all, a tie goes to what is known (docs/emulator.md). */
static int before(double t, double h, double la) { return t < h || (la == 0 && t <= h); }

/* Rank k's event time changed: its leaf, and the minima above it. */
static void tree_set(coord *c, int k, double v)
{
    size_t i = c->tsize + (size_t)k;
    c->tree[i] = v;
    for (i >>= 1; i >= 1; i >>= 1) {
        double a = c->tree[2 * i], b = c->tree[2 * i + 1], m = a < b ? a : b;
        if (c->tree[i] == m)
            break; /* and so for every minimum above */
        c->tree[i] = m;
    }
}

/* Is x before bound_from(j, k) for every rank k but j and s that could send
 * j a matching message?  (That is, before bound_to(j, s).)  bound_from(j, k)
 * >= ev[k] + lookahead, so only the ranks whose ev[k] + lookahead is not
 * after x can say no: the tree finds them without looking at the others,
 * and the first that says no ends the search. */
static int safe_before(const coord *c, int j, int s, double x, int *held)
{
    const crank *r = &c->r[j];
    double la = c->lookahead;
    size_t stack[2 * 64], sp = 0;
    stack[sp++] = 1;
    while (sp > 0) {
        size_t i = stack[--sp];
        if (before(x, c->tree[i], la))
            continue; /* every leaf below is after x */
        if (i < c->tsize) {
            stack[sp++] = 2 * i + 1;
            stack[sp++] = 2 * i;
            continue;
        }
        int k = (int)(i - c->tsize);
        if (k != j && k != s && may_send(r, k) && !before(x, bound_from(c, j, k), la)) {
            if (held && held_rdv(c, k, j)) {
                *held = 1; /* it cannot act before j: without it, unchecked */
                continue;
            }
            return 0;
        }
    }
    return 1;
}

static int by_arrival(const void *a, const void *b)
{
    const cmsg *x = *(cmsg *const *)a, *y = *(cmsg *const *)b;
    if (x->arrival != y->arrival)
        return x->arrival < y->arrival ? -1 : 1;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Answers in advance.  Rank j takes the first message of one any-source
 * pattern (an MPI_Recv from MPI_ANY_SOURCE), and cand is it.  Its next
 * receives with the same pattern will take the next known messages in
 * arrival order, unless something it does not know yet arrives earlier: the
 * answers that are safe now are given with this one (c->scratch, *n of
 * them, marked `ahead`), so that a master draining a queue of results asks
 * once for many.  A message m from s is safe if it arrives before every
 * other rank's bound but j's and s's (as a decision now: safe_before), before
 * s's relay bound (as a decision now), and before j's own relay bound: j
 * runs on at its clock or later and may send to a rank that answers, which
 * arrives two lookaheads later at the earliest.  What j learns later cannot
 * come earlier: every rank's event time only grows but by messages, and a
 * message's chain starts at some rank's event time now.  j drops what is
 * left (TB_EMU_DROP_AHEAD) before it does anything else than run and take
 * them.
 */
static int decide_ahead(coord *c, int j, const cmsg *cand, size_t *n)
{
    crank *r = &c->r[j];
    double la = c->lookahead, own = r->clock + 2 * la;
    size_t k = 0;
    *n = 0;
    if (r->nin > c->capscratch) {
        cmsg **p = realloc(c->scratch, r->nin * sizeof *p);
        if (!p)
            return TB_ERR_NOMEM;
        c->scratch = p;
        c->capscratch = r->nin;
    }
    for (size_t i = 0; i < r->nin; i++) {
        cmsg *m = &r->in[i];
        if (m != cand && !m->ahead && before(m->arrival, own, la) && matches(m, &r->pat[0]))
            c->scratch[k++] = m;
    }
    if (k == 0)
        return TB_OK;
    qsort(c->scratch, k, sizeof *c->scratch, by_arrival);
    size_t i = 0;
    for (; i < k && i < c->ahead_max; i++) {
        cmsg *m = c->scratch[i];
        double x = m->arrival;
        if ((c->P > 2 && !before(x, c->ev[m->src] + 2 * la, la)) ||
            !safe_before(c, j, (int)m->src, x, NULL))
            break;
        m->ahead = 1;
    }
    *n = i;
    return TB_OK;
}

/* One pass over the waiting ranks; *progress set if one was answered. */
static int decide_pass(coord *c, int *progress)
{
    int P = c->P, any = 0;
    /* Event times and wants change only with what a rank reports, what is
     * sent to it, and its decisions (touch()): the others are kept, so a
     * frame costs the coordinator a look at the ranks it changed, and the
     * passes below run over compact arrays. */
    for (int i = 0; i < P; i++) {
        if (c->stale[i]) {
            crank *r = &c->r[i];
            size_t pi;
            c->ev[i] = event_time(r);
            tree_set(c, i, c->ev[i] + c->lookahead);
            c->want[i] = !r->pending ? WANT_NOTHING
                         : r->deadline == INFINITY && any_source(r) && !first_match(r, &pi)
                             ? WANT_ANY
                             : WANT_DECISION;
            c->askable[i] = r->hello && !r->done && !r->asked &&
                            (r->state == TB_EMU_RUNNING || r->state == TB_EMU_SENDING ||
                             r->state == TB_EMU_BLOCKED);
            c->stale[i] = 0;
        }
        any |= c->want[i];
    }
    if (!any)
        return TB_OK;
    double la = c->lookahead;
    int asked_any = 0; /* the question for "any source, no message yet" was put */
    for (int j = 0; j < P; j++) {
        if (c->want[j] == WANT_NOTHING || (c->want[j] == WANT_ANY && asked_any))
            continue;
        crank *r = &c->r[j];
        size_t pi = 0;
        const cmsg *cand = first_match(r, &pi);
        double x = cand ? cand->arrival : INFINITY;
        int who;
        /* The candidate's own sender s cannot send anything to j that
         * arrives before it: the pair keeps its order.  But s can still send
         * to a third rank that relays to j, which arrives no earlier than
         * two lookaheads after s acts (a large message, or one over a slow
         * link, can arrive later than that). */
        double via_s = INFINITY;
        int unchecked = 0, only_rdv = 1; /* only_rdv: every rank left out is held_rdv */
        if (cand && P > 2 && (any_source(r) || r->npat > 1)) {
            via_s = c->ev[cand->src] + 2 * c->lookahead;
            /* s held in the real MPI by a message its receiver has not
             * taken cannot act until someone decides without knowing
             * what it does next: decide, and say so in the result. */
            if (held_for(c, (int)cand->src, j) && !before(x, via_s, la) && x <= r->deadline) {
                via_s = INFINITY;
                unchecked = 1; /* counted if the decision is made */
                only_rdv = held_rdv(c, (int)cand->src, j);
            }
        }
        int held = 0;
        if (cand && x <= r->deadline && before(x, via_s, la) &&
            safe_before(c, j, (int)cand->src, x, &held)) {
            unchecked |= held;
            cmsg copy = *cand;
            size_t nahead = 0;
            if (r->take && r->npat == 1 && r->pat[0].src < 0 && r->deadline == INFINITY &&
                c->ahead_max > 0)
                TB_CHECK(decide_ahead(c, j, cand, &nahead));
            r->pending = 0;
            r->asked = 0; /* it ignored questions while waiting */
            r->state = TB_EMU_RUNNING;
            touch(c, j);
            r->heard = tb_wtime(); /* it reports again at its next wait: no question before */
            if (copy.arrival > r->clock)
                r->clock = copy.arrival;
            c->unchecked += (uint64_t)unchecked;
            c->unchecked_rdv += (uint64_t)(unchecked && only_rdv);
            TB_CHECK(send_decide(c, j, 1, pi, &copy, 0.0, c->scratch, nahead));
            *progress = 1;
            continue;
        }
        double h, hheld;
        if (r->deadline < INFINITY && x > r->deadline &&
            before(r->deadline, h = bound_to(c, j, -1, &who, &hheld), la)) {
            c->unchecked += !before(r->deadline, hheld, la);
            c->unchecked_rdv += !before(r->deadline, hheld, la); /* hheld: held_rdv only */
            if (hheld < h)
                h = hheld; /* the horizon: what is known */
            r->pending = 0;
            r->asked = 0;
            r->state = TB_EMU_RUNNING;
            touch(c, j);
            r->heard = tb_wtime();
            TB_CHECK(send_decide(c, j, 0, 0, NULL, h < x ? h : x, NULL, 0));
            *progress = 1;
            continue;
        }
        /* Held back: ask the ranks whose bound keeps it unsafe.  With any
         * source and nothing to wait for, those are all the ranks that run:
         * the same for every such waiting rank, asked once a pass. */
        double need = x < r->deadline ? x : r->deadline;
        if (need == INFINITY && any_source(r)) {
            if (asked_any)
                continue;
            asked_any = 1;
        }
        /* The ranks a question may help (few, of many). */
        for (int k = 0; k < P; k++) {
            const unsigned char *next = memchr(c->askable + k, 1, (size_t)(P - k));
            if (!next)
                break;
            k = (int)(next - c->askable);
            crank *o = &c->r[k];
            if (k == j || !may_send(r, k))
                continue;
            double b = bound_from(c, j, k);
            if (cand && k == (int)cand->src && via_s < b)
                b = via_s; /* it holds j back through a relay */
            if ((o->state == TB_EMU_RUNNING || o->state == TB_EMU_SENDING ||
                 o->state == TB_EMU_BLOCKED) &&
                !before(need, b, la))
                TB_CHECK(send_ask(c, k));
        }
    }
    return TB_OK;
}

static int decide_all(coord *c)
{
    int progress;
    c->ask_due = INFINITY;
    do {
        progress = 0;
        TB_CHECK(decide_pass(c, &progress));
    } while (progress);
    return TB_OK;
}

/* Is the message (src -> dst, sequence low bits) still unconsumed? */
static int unconsumed(const coord *c, int src, int dst, int32_t seqbits)
{
    const crank *r = &c->r[dst];
    for (size_t i = 0; i < r->nin; i++)
        if (r->in[i].src == (uint32_t)src && (int32_t)(r->in[i].seq & 0x7fffffff) == seqbits)
            return 1;
    return 0;
}

/*
 * Deadlock: every rank has said it waits (none runs, none has a decision
 * coming), and no rank waits for anything that is known to be on its way.
 * Reports carry every send before the wait, so nothing unknown is in flight.
 * Fills `why` with the waits of the first ranks.
 */
static int deadlocked(const coord *c, char *why, size_t n)
{
    int waiting = 0;
    for (int i = 0; i < c->P; i++) {
        const crank *r = &c->r[i];
        if (!r->hello)
            return 0;
        if (r->state == TB_EMU_DONE)
            continue;
        if (r->state == TB_EMU_RUNNING || r->state == TB_EMU_SENDING)
            return 0;
        if (r->state == TB_EMU_WAITING && r->deadline < INFINITY)
            return 0;
        if (r->npat == 1 && r->pat[0].ctx == TB_EMU_ACK_CTX) {
            if (r->pat[0].src < 0 || r->pat[0].src >= c->P ||
                !unconsumed(c, i, r->pat[0].src, r->pat[0].tag))
                return 0; /* its acknowledgement is coming */
        } else if (event_time(r) < INFINITY) {
            return 0;
        }
        waiting++;
    }
    if (waiting == 0)
        return 0;
    size_t len = (size_t)snprintf(why, n, "deadlock: every rank waits for a message no rank will "
                                          "send (");
    int shown = 0;
    for (int i = 0; i < c->P && len < n; i++) {
        const crank *r = &c->r[i];
        if (r->state == TB_EMU_DONE)
            continue;
        if (shown == 3) {
            len += (size_t)snprintf(why + len, n - len, ", ...");
            break;
        }
        const cpat *p = r->npat ? &r->pat[0] : NULL;
        char src[24] = "any", tag[24] = "any";
        if (p && p->src >= 0)
            snprintf(src, sizeof src, "%d", p->src);
        if (p && p->tag >= 0)
            snprintf(tag, sizeof tag, "%d", p->tag);
        if (p && p->ctx == TB_EMU_ACK_CTX)
            len += (size_t)snprintf(why + len, n - len, "%srank %d: its send to %s to be received",
                                    shown ? ", " : "", i, src);
        else
            len += (size_t)snprintf(why + len, n - len, "%srank %d: from %s, tag %s",
                                    shown ? ", " : "", i, src, tag);
        shown++;
    }
    if (len < n)
        snprintf(why + len, n - len, ")");
    return 1;
}

/* At debug level: every rank's state as the coordinator sees it. */
static void dump_state(coord *c, const char *why)
{
    if (tb_log_get_level() < TB_LOG_DEBUG)
        return;
    TB_LOG_DEBUG("emu coordinator: %s", why);
    for (int i = 0; i < c->P; i++) {
        const crank *r = &c->r[i];
        static const char *const names[] = {"running", "blocked", "waiting", "done", "sending"};
        TB_LOG_DEBUG("  rank %d: %s clock %.9g event %.9g deadline %.9g pending %d asked %d "
                     "known messages to it %zu patterns %zu%s",
                     i, r->state >= 0 && r->state <= 4 ? names[r->state] : "?", r->clock,
                     event_time(r), r->deadline, r->pending, r->asked, r->nin, r->npat,
                     r->npat ? "" : "");
        for (size_t k = 0; k < r->npat && k < 4; k++)
            TB_LOG_DEBUG("    pattern ctx %u src %d tag %d", r->pat[k].ctx, r->pat[k].src,
                         r->pat[k].tag);
        for (size_t k = 0; k < r->nin && k < 8; k++)
            TB_LOG_DEBUG("    message from %u ctx %u tag %d seq %llu arrival %.9g", r->in[k].src,
                         r->in[k].ctx, r->in[k].tag, (unsigned long long)r->in[k].seq,
                         r->in[k].arrival);
    }
}

/* ---- frames ---------------------------------------------------------------- */

/* Tell a blocked rank that a message its receive matches was sent (it
 * sleeps until then, docs/emulator.md). */
static void wake(coord *c, int k)
{
    if (c->r[k].fd < 0 && !c->r[k].down)
        return;
    static const unsigned char w = TB_EMU_WAKE;
    tb_buf b;
    tb_buf_view(&b, &w, 1);
    (void)to_rank(c, k, &b); /* a broken connection shows when read */
}

static int consume(coord *c, int dst, uint32_t src, uint64_t seq)
{
    crank *r = &c->r[dst];
    touch(c, dst);
    for (size_t i = 0; i < r->nin; i++)
        if (r->in[i].src == src && r->in[i].seq == seq) {
            r->in[i] = r->in[--r->nin];
            return TB_OK;
        }
    TB_CHECK(tb_grow(&r->early, &r->capearly, r->nearly + 1, sizeof *r->early, 8));
    r->early[r->nearly++] = (early){src, seq};
    return TB_OK;
}

static int add_msg(coord *c, int src, const cmsg *m0, uint32_t dst)
{
    crank *r = &c->r[dst];
    touch(c, (int)dst);
    if (!r->lastfrom) {
        r->lastfrom = malloc((size_t)c->P * sizeof *r->lastfrom);
        if (!r->lastfrom)
            return TB_ERR_NOMEM;
        for (int i = 0; i < c->P; i++)
            r->lastfrom[i] = -INFINITY;
    }
    if (m0->arrival > r->lastfrom[src])
        r->lastfrom[src] = m0->arrival;
    for (size_t i = 0; i < r->nearly; i++)
        if (r->early[i].src == (uint32_t)src && r->early[i].seq == m0->seq) {
            r->early[i] = r->early[--r->nearly];
            return TB_OK; /* already received */
        }
    TB_CHECK(tb_grow(&r->in, &r->capin, r->nin + 1, sizeof *r->in, 8));
    r->in[r->nin++] = *m0;
    /* A blocked receiver sleeps until told: its message is on its way. */
    if (r->state == TB_EMU_BLOCKED) {
        size_t k = 0;
        while (k < r->npat && !matches(m0, &r->pat[k]))
            k++;
        if (k < r->npat)
            wake(c, (int)dst);
    }
    return TB_OK;
}

static int read_report(coord *c, int rank, tb_buf *b)
{
    crank *r = &c->r[rank];
    touch(c, rank);
    uint8_t state, kind;
    uint32_t n;
    int rc = tb_buf_unpack_f64(b, &r->clock);
    rc |= tb_buf_unpack_u8(b, &state);
    rc |= tb_buf_unpack_u8(b, &kind);
    rc |= tb_buf_unpack_f64(b, &r->deadline);
    rc |= tb_buf_unpack_u32(b, &n);
    /* a pattern is 12 bytes: a count the frame cannot hold is refused before
     * anything is allocated for it */
    if (rc != TB_OK || n > 1u << 24 || n > tb_buf_remaining(b) / 12 || state > TB_EMU_SENDING)
        return TB_ERR_PROTOCOL;
    if (kind & TB_EMU_DROP_AHEAD) /* what it was given in advance is back in play */
        for (size_t i = 0; i < r->nin; i++)
            r->in[i].ahead = 0;
    r->take = (kind & ~TB_EMU_DROP_AHEAD) == TB_EMU_TAKE;
    while (r->cappat < n)
        TB_CHECK(tb_grow(&r->pat, &r->cappat, r->cappat, sizeof *r->pat, 4));
    r->npat = n;
    for (uint32_t i = 0; rc == TB_OK && i < n; i++) {
        rc |= tb_buf_unpack_u32(b, &r->pat[i].ctx);
        rc |= tb_buf_unpack_i32(b, &r->pat[i].src);
        rc |= tb_buf_unpack_i32(b, &r->pat[i].tag);
        if (rc == TB_OK && (r->pat[i].src < TB_EMU_ANY || r->pat[i].src >= c->P))
            return TB_ERR_PROTOCOL; /* a rank or any */
    }
    rc |= tb_buf_unpack_u32(b, &n);
    for (uint32_t i = 0; rc == TB_OK && i < n; i++) {
        cmsg m;
        uint32_t dst;
        m.src = (uint32_t)rank;
        m.ahead = 0;
        rc |= tb_buf_unpack_u32(b, &dst);
        rc |= tb_buf_unpack_u32(b, &m.ctx);
        rc |= tb_buf_unpack_i32(b, &m.tag);
        rc |= tb_buf_unpack_u64(b, &m.seq);
        rc |= tb_buf_unpack_f64(b, &m.arrival);
        if (rc == TB_OK && dst >= (uint32_t)c->P)
            return TB_ERR_PROTOCOL;
        if (rc == TB_OK)
            rc = add_msg(c, rank, &m, dst);
    }
    rc |= tb_buf_unpack_u32(b, &n);
    for (uint32_t i = 0; rc == TB_OK && i < n; i++) {
        uint32_t src;
        uint64_t seq;
        rc |= tb_buf_unpack_u32(b, &src);
        rc |= tb_buf_unpack_u64(b, &seq);
        if (rc == TB_OK && src >= (uint32_t)c->P)
            return TB_ERR_PROTOCOL;
        if (rc == TB_OK)
            rc = consume(c, rank, src, seq);
    }
    if (rc != TB_OK)
        return rc == TB_ERR_NOMEM ? rc : TB_ERR_PROTOCOL;
    r->state = state;
    r->asked = 0;
    r->heard = tb_wtime();
    r->pending = state == TB_EMU_WAITING;
    /* Blocked on a message that was sent before it said so: the receive
     * looked before the message was there, and no later send will wake it. */
    size_t pi;
    if (state == TB_EMU_BLOCKED && first_match(r, &pi))
        wake(c, rank);
    return TB_OK;
}

static int read_final(coord *c, int rank, tb_buf *b)
{
    TB_CHECK(read_report(c, rank, b));
    tb_emu_rank *s = &c->res->rank[rank];
    int rc = tb_buf_unpack_f64(b, &s->compute_s);
    rc |= tb_buf_unpack_f64(b, &s->send_s);
    rc |= tb_buf_unpack_f64(b, &s->recv_s);
    rc |= tb_buf_unpack_f64(b, &s->idle_s);
    rc |= tb_buf_unpack_u64(b, &s->messages_sent);
    rc |= tb_buf_unpack_u64(b, &s->bytes_sent);
    rc |= tb_buf_unpack_u64(b, &s->messages_received);
    const void *tr;
    uint32_t trlen;
    rc |= tb_buf_unpack_bytes(b, &tr, &trlen);
    if (rc != TB_OK)
        return TB_ERR_PROTOCOL;
    if (trlen > 0)
        TB_CHECK(tb_buf_append(&c->res->trace[rank], tr, trlen));
    s->end_s = c->r[rank].clock;
    c->r[rank].done = 1;
    c->r[rank].state = TB_EMU_DONE;
    c->r[rank].pending = 0;
    return TB_OK;
}

/* A frame from connection fd; *rank is -1 until its HELLO. */
static int on_frame(coord *c, int fd, int *rank, tb_buf *b)
{
    uint8_t type;
    if (tb_buf_unpack_u8(b, &type) != TB_OK)
        return TB_ERR_PROTOCOL;
    if (type == TB_EMU_FAIL) {
        const void *msg;
        uint32_t n;
        if (tb_buf_unpack_bytes(b, &msg, &n) != TB_OK)
            return TB_ERR_PROTOCOL;
        if (!c->fail[0]) { /* one line, whatever the bytes */
            const unsigned char *m = msg;
            size_t k = 0;
            for (uint32_t i = 0; i < n && k < 500; i++)
                if (m[i] != 0)
                    c->fail[k++] = m[i] < 0x20 || m[i] == 0x7f ? '?' : (char)m[i];
            c->fail[k] = 0;
            if (k == 0 && *rank >= 0)
                snprintf(c->fail, sizeof c->fail, "rank %d stopped the run without saying why",
                         *rank);
            else if (k == 0)
                snprintf(c->fail, sizeof c->fail, "a rank stopped the run without saying why");
        }
        return TB_ERR_ABORTED;
    }
    if (type == TB_EMU_HELLO) {
        uint32_t rk, size, pid;
        int rc = tb_buf_unpack_u32(b, &rk);
        rc |= tb_buf_unpack_u32(b, &size);
        rc |= tb_buf_unpack_u32(b, &pid);
        if (rc != TB_OK || *rank >= 0)
            return TB_ERR_PROTOCOL;
        if (size != (uint32_t)c->P || rk >= size || c->r[rk].hello) {
            snprintf(c->fail, sizeof c->fail,
                     "a rank says it is rank %u of %u, expected one of %d ranks (is the "
                     "program started by another mpiexec?)",
                     rk, size, c->P);
            return TB_ERR_ABORTED;
        }
        const void *host;
        uint32_t hn;
        uint8_t attached = 0;
        if (tb_buf_unpack_bytes(b, &host, &hn) == TB_OK)
            (void)tb_buf_unpack_u8(b, &attached);
        if (attached && !c->shm)
            return TB_ERR_PROTOCOL;
        if (attached) {
            c->r[rk].up = tb_emu_shm_up(c->shm, (int)rk);
            c->r[rk].down = tb_emu_shm_down(c->shm, (int)rk);
        }
        TB_LOG_DEBUG("emu coordinator: rank %u said hello; its frames go %s", rk,
                     attached ? "through shared memory" : "on TCP");
        *rank = (int)rk;
        c->r[rk].fd = fd;
        c->r[rk].hello = 1;
        touch(c, (int)rk);
        c->r[rk].heard = tb_wtime();
        c->r[rk].pid = (pid_t)pid;
        c->r[rk].state = TB_EMU_RUNNING;
        c->r[rk].deadline = INFINITY;
        return TB_OK;
    }
    if (*rank < 0)
        return TB_ERR_PROTOCOL;
    if (type == TB_EMU_BELL)
        return TB_OK; /* it woke the poll: the ring is read after it */
    if (type == TB_EMU_REPORT)
        return read_report(c, *rank, b);
    if (type == TB_EMU_FINAL)
        return read_final(c, *rank, b);
    return TB_ERR_PROTOCOL;
}

/* Hand every whole frame rd holds to on_frame.  Returns 0, or non-zero with
 * `why` set (or c->fail, for a FAIL) if the run cannot go on. */
static int take_frames(coord *c, tb_emu_reader *rd, int fd, int *rank, int *finals, char *why,
                       size_t whylen)
{
    for (;;) {
        int frc = tb_emu_reader_next(rd, &c->in, TB_EMU_FRAME_MAX);
        if (frc == 0)
            return 0;
        int was_done = *rank >= 0 && c->r[*rank].done;
        if (frc > 0)
            frc = on_frame(c, fd, rank, &c->in);
        if (frc == TB_ERR_ABORTED)
            return 1;
        if (frc != TB_OK) {
            snprintf(why, whylen, "rank %d: %s in its message to the coordinator", *rank,
                     tb_strerror(frc));
            return 1;
        }
        if (!was_done && *rank >= 0 && c->r[*rank].done)
            (*finals)++;
    }
}

/* The frames rank k put in its ring. */
static int drain_one(coord *c, int k, int *finals, char *why, size_t whylen)
{
    crank *r = &c->r[k];
    if (tb_emu_ring_fill(r->up, &r->urd) < 0) {
        snprintf(why, whylen, "out of memory");
        return 1;
    }
    int rank = k;
    return take_frames(c, &r->urd, r->fd, &rank, finals, why, whylen);
}

/* The frames of the ranks whose dirty bit is set (all: every ring). */
static int drain_rings(coord *c, int all, int *finals, char *why, size_t whylen)
{
    _Atomic uint64_t *dirty = tb_emu_shm_dirty(c->shm);
    for (int w = 0; w < (c->P + 63) / 64; w++) {
        uint64_t bits = atomic_exchange(&dirty[w], 0);
        for (int k = 64 * w; k < c->P && k < 64 * (w + 1); k++)
            if (c->r[k].up && (all || (bits >> (k - 64 * w) & 1)) &&
                drain_one(c, k, finals, why, whylen))
                return 1;
        /* (A rank whose HELLO is not read yet is drained when it is.) */
    }
    return 0;
}

/* ---- launching ------------------------------------------------------------ */

/* Listen on `addr` (a name or a literal), on a port the kernel picks; `to`
 * gets what the ranks connect to, "HOST:PORT" ("[HOST]:PORT" for IPv6).
 * Returns the socket, or -1 with errno set (EADDRNOTAVAIL for a name that
 * does not resolve). */
static int listen_on(const char *addr, char *to, size_t n)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    if (getaddrinfo(addr, "0", &hints, &res) != 0) {
        errno = EADDRNOTAVAIL;
        return -1;
    }
    int fd = -1, e = EADDRNOTAVAIL;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        char host[NI_MAXHOST], port[NI_MAXSERV];
        if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 1024) != 0 ||
            getsockname(fd, (struct sockaddr *)&ss, &len) != 0 ||
            getnameinfo((struct sockaddr *)&ss, len, host, sizeof host, port, sizeof port,
                        NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
            e = errno;
            close(fd);
            fd = -1;
            continue;
        }
        snprintf(to, n, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, port);
    }
    freeaddrinfo(res);
    if (fd < 0)
        errno = e;
    return fd;
}

static pid_t launch(const tb_emu_opts *o, char *const argv[], const char *coord_at,
                    const char *platform, const char *shm_env, int *exec_errno)
{
    *exec_errno = 0;
    char np[32], coord_env[128 + NI_MAXHOST], seed[32];
    snprintf(np, sizeof np, "%d", o->ranks);
    snprintf(coord_env, sizeof coord_env, "TENBIN_EMU_COORD=%s", coord_at);
    snprintf(seed, sizeof seed, "TENBIN_EMU_SEED=%llu", (unsigned long long)o->seed);
    size_t plen = strlen(platform) + 32, llen = strlen(o->library) + 32;
    char *plat_env = malloc(plen), *pre_env = malloc(llen);
    size_t nargs = 0;
    while (argv[nargs])
        nargs++;
    char **av = calloc(nargs + 32, sizeof *av);
    if (!plat_env || !pre_env || !av) {
        free(plat_env);
        free(pre_env);
        free(av);
        return -1;
    }
    snprintf(plat_env, plen, "TENBIN_EMU_PLATFORM=%s", platform);
    snprintf(pre_env, llen, "LD_PRELOAD=%s", o->library);
    const char *mpiexec = o->mpiexec ? o->mpiexec : TENBIN_MPIEXEC;
    size_t k = 0;
    av[k++] = (char *)mpiexec;
    av[k++] = "-n";
    av[k++] = np;
    /* The emulation library's knobs, for ranks on other nodes too. */
    char knob[2][96];
    const char *knobs[2] = {"TENBIN_EMU_SLEEP_MAX", "TENBIN_EMU_COPY_MIN"};
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(knobs[i]);
        knob[i][0] = 0;
        if (v && *v && strlen(v) < 64)
            snprintf(knob[i], sizeof knob[i], "%s=%s", knobs[i], v);
    }
    const char *envs[] = {coord_env, plat_env, seed, pre_env,
                          o->trace ? "TENBIN_EMU_TRACE=1" : NULL,
                          knob[0][0] ? knob[0] : NULL, knob[1][0] ? knob[1] : NULL,
                          shm_env};
    for (size_t i = 0; i < sizeof envs / sizeof envs[0]; i++) {
        if (!envs[i])
            continue;
        if (o->openmpi) {
            av[k++] = "-x";
            av[k++] = (char *)envs[i];
        } else {
            /* MPICH: -genv NAME VALUE; split at '=' in a copy. */
            char *copy = strdup(envs[i]);
            if (!copy)
                return -1;
            char *eq = strchr(copy, '=');
            *eq = 0;
            av[k++] = "-genv";
            av[k++] = copy;
            av[k++] = eq + 1;
        }
    }
    for (size_t i = 0; i < nargs; i++)
        av[k++] = argv[i];
    av[k] = NULL;
    fflush(stdout);
    fflush(stderr);
    /* The child tells why exec failed through a pipe that a successful exec
     * closes, so the failure is the caller's one line. */
    int ep[2];
    if (pipe2(ep, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(ep[0]);
        setpgid(0, 0);
        execvp(mpiexec, av);
        int e = errno;
        if (write(ep[1], &e, sizeof e) < 0)
            _exit(127);
        _exit(127);
    }
    close(ep[1]);
    if (pid > 0) {
        setpgid(pid, pid);
        int e = 0;
        ssize_t got;
        do
            got = read(ep[0], &e, sizeof e);
        while (got < 0 && errno == EINTR);
        if (got == (ssize_t)sizeof e) {
            *exec_errno = e;
            waitpid(pid, NULL, 0);
            pid = -1;
        }
    }
    close(ep[0]);
    free(plat_env);
    free(pre_env);
    free(av);
    return pid;
}

/* Signal every descendant of root and its process group (a launcher puts
 * each rank in a group of its own; a rank that has not said hello, e.g.
 * one still in a wrapper script, is known only as a descendant).  Linux's
 * /proc; without it, nothing. */
static void kill_descendants(pid_t root, int sig)
{
    DIR *d = opendir("/proc");
    if (!d)
        return;
    size_t n = 0, cap = 0;
    pid_t(*pp)[3] = NULL; /* pid, parent, group */
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        char path[64], line[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(line, 1, sizeof line - 1, f);
        fclose(f);
        line[len] = 0;
        const char *rp = strrchr(line, ')'); /* the name may hold spaces */
        int ppid, pgid;
        char st;
        if (!rp || sscanf(rp + 1, " %c %d %d", &st, &ppid, &pgid) != 3)
            continue;
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 256;
            void *g = realloc(pp, nc * sizeof *pp);
            if (!g)
                break;
            pp = g;
            cap = nc;
        }
        pp[n][0] = (pid_t)pid;
        pp[n][1] = (pid_t)ppid;
        pp[n][2] = (pid_t)pgid;
        n++;
    }
    closedir(d);
    /* Breadth first from root: mark, then signal (children before their
     * parent could reap them and their pids be reused is not a concern
     * here: a parent that reaps is not stopped yet). */
    unsigned char *in = calloc(n ? n : 1, 1);
    int grew = 1;
    while (in && grew) {
        grew = 0;
        for (size_t i = 0; i < n; i++) {
            if (in[i])
                continue;
            int parent_in = pp[i][1] == root;
            for (size_t k = 0; !parent_in && k < n; k++)
                parent_in = in[k] && pp[k][0] == pp[i][1];
            if (parent_in) {
                in[i] = 1;
                grew = 1;
            }
        }
    }
    for (size_t i = 0; in && i < n; i++)
        if (in[i]) {
            if (pp[i][2] > 1 && pp[i][2] != getpgrp())
                kill(-pp[i][2], sig);
            kill(pp[i][0], sig);
        }
    free(in);
    free(pp);
}

static void kill_all(coord *c, pid_t child, int sig)
{
    if (child > 0) {
        kill_descendants(child, sig);
        kill(-child, sig);
        kill(child, sig);
    }
    for (int i = 0; i < c->P; i++)
        if (c->r[i].hello && !c->r[i].done && c->r[i].pid > 0)
            kill(c->r[i].pid, sig);
}

/* Wait for the launcher to end after kill_all, escalating to SIGKILL. */
static int reap(coord *c, pid_t child)
{
    int status = 0;
    /* 5 s: a launcher stopping hundreds of ranks on a loaded machine is
     * slow, and SIGKILL would leave it no chance to stop them itself. */
    for (int i = 0; i < 250; i++) {
        pid_t w = waitpid(child, &status, WNOHANG);
        if (w == child)
            return status;
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    kill_all(c, child, SIGKILL);
    waitpid(child, &status, 0);
    return status;
}

typedef struct conn {
    int fd;
    int rank;
    tb_emu_reader rd;
} conn;

/* Accept every connection waiting on the (non-blocking) listening socket
 * and watch it (epoll data: its index in conns, which never moves). */
static void accept_all(int lfd, int ep, conn *conns, size_t *n, size_t max)
{
    while (*n < max) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct epoll_event ev = {.events = EPOLLIN, .data.u64 = *n};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
            close(fd);
            continue;
        }
        conns[(*n)++] = (conn){fd, -1, {TB_BUF_INIT}};
    }
}

/* c->P and c->lookahead set: the per-rank state, the result's ranks (their
 * hosts from plat; NULL: host 0, no name).  TB_ERR_NOMEM leaves what was
 * made for coord_free. */
static int coord_init(coord *c, const tb_platform *plat)
{
    c->r = calloc((size_t)c->P, sizeof *c->r);
    c->ev = calloc((size_t)c->P, sizeof *c->ev);
    c->stale = malloc((size_t)c->P);
    c->want = calloc((size_t)c->P, 1);
    c->askable = calloc((size_t)c->P, 1);
    for (c->tsize = 1; c->tsize < (size_t)c->P; c->tsize *= 2)
        ;
    c->tree = malloc(2 * c->tsize * sizeof *c->tree);
    for (size_t i = 0; c->tree && i < 2 * c->tsize; i++)
        c->tree[i] = INFINITY;
    if (c->stale)
        memset(c->stale, 1, (size_t)c->P);
    c->res = calloc(1, sizeof *c->res);
    if (c->res) {
        c->res->ranks = c->P;
        c->res->rank = calloc((size_t)c->P, sizeof *c->res->rank);
        c->res->trace = calloc((size_t)c->P, sizeof *c->res->trace);
    }
    if (!c->r || !c->ev || !c->stale || !c->want || !c->askable || !c->tree || !c->res ||
        !c->res->rank || !c->res->trace)
        return TB_ERR_NOMEM;
    for (int i = 0; i < c->P; i++) {
        c->r[i].fd = -1;
        tb_emu_rank *s = &c->res->rank[i];
        s->rank = i;
        if (plat) {
            s->host = (int)tb_platform_host_of(plat, i);
            snprintf(s->host_name, sizeof s->host_name, "%s", plat->hosts[s->host].name);
        }
    }
    return TB_OK;
}

/* What coord_init and the run made (not the shared memory). */
static void coord_free(coord *c)
{
    for (int i = 0; c->r && i < c->P; i++) {
        tb_emu_reader_free(&c->r[i].urd);
        tb_buf_free(&c->r[i].backlog);
        free(c->r[i].pat);
        free(c->r[i].in);
        free(c->r[i].early);
        free(c->r[i].lastfrom);
    }
    free(c->r);
    free(c->ev);
    free(c->stale);
    free(c->want);
    free(c->askable);
    free(c->scratch);
    free(c->tree);
    tb_buf_free(&c->in);
    tb_buf_free(&c->out);
    tb_emu_result_free(&c->res);
}

int tb_emu_run(const tb_emu_opts *o, char *const argv[], tb_emu_result **out, char *err,
               size_t errlen)
{
    if (!o || o->size < sizeof *o || !argv || !argv[0] || !out || !o->platform || !o->library) {
        set_err(err, errlen, "invalid arguments");
        return TB_ERR_INVALID;
    }
    *out = NULL;
    if (o->ranks < 1) {
        set_err(err, errlen, "-n: expected at least 1 rank, got %d", o->ranks);
        return TB_ERR_RANGE;
    }
    tb_platform *plat = NULL;
    char perr[512];
    int rc = tb_platform_open(o->platform, o->seed, &plat, perr, sizeof perr);
    if (rc != TB_OK) {
        set_err(err, errlen, "--platform: %s", perr);
        return rc;
    }
    size_t cores = tb_platform_cores(plat);
    double la = tb_net_lookahead(plat, o->ranks);
    if ((size_t)o->ranks > cores) {
        set_err(err, errlen, "%d ranks do not fit the platform: it has %zu cores", o->ranks,
                cores);
        tb_platform_destroy(&plat);
        return TB_ERR_SIZE;
    }
    if (!tb__runnable(argv[0])) {
        set_err(err, errlen, "%s: no such program (or not executable)", argv[0]);
        tb_platform_destroy(&plat);
        return TB_ERR_IO;
    }
    if (access(o->library, R_OK) != 0) {
        set_err(err, errlen, "%s: cannot read the emulation library: %s", o->library,
                strerror(errno));
        tb_platform_destroy(&plat);
        return TB_ERR_IO;
    }
    /* A platform file is read by every rank: give them its full path. */
    char platform[4096];
    struct stat st;
    if (stat(o->platform, &st) == 0 && o->platform[0] != '/' &&
        getcwd(platform, sizeof platform - strlen(o->platform) - 2)) {
        strcat(platform, "/");
        strcat(platform, o->platform);
    } else {
        snprintf(platform, sizeof platform, "%s", o->platform);
    }

    coord c = {0};
    char shm_name[128] = "";
    size_t shm_bytes = 0;
    c.P = o->ranks;
    c.lookahead = la;
    int init_rc = coord_init(&c, plat);
    /* Slots for every rank's connection and as many strays (a closed one is
     * not reused). */
    size_t maxconns = 2 * (size_t)c.P + 8;
    conn *conns = calloc(maxconns, sizeof *conns);
    enum { NEV = 64 };
    struct epoll_event *pfd = calloc(NEV, sizeof *pfd);
    if (init_rc != TB_OK || !conns || !pfd) {
        rc = TB_ERR_NOMEM;
        set_err(err, errlen, "out of memory");
        goto done_early;
    }
    const char *laddr = o->size >= offsetof(tb_emu_opts, listen) + sizeof o->listen &&
                                o->listen && *o->listen
                            ? o->listen
                            : "127.0.0.1";
    char coord_at[NI_MAXHOST + 16];
    int lfd = listen_on(laddr, coord_at, sizeof coord_at);
    if (lfd < 0) {
        rc = TB_ERR_IO;
        set_err(err, errlen, "cannot listen on %s: %s", laddr,
                errno == EADDRNOTAVAIL ? "no such address on this machine" : strerror(errno));
        goto done_early;
    }
    /* epoll: a wake-up costs what is ready, not a look at all P sockets. */
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event lev = {.events = EPOLLIN, .data.u64 = UINT64_MAX};
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &lev) != 0) {
        rc = TB_ERR_IO;
        set_err(err, errlen, "epoll: %s", strerror(errno));
        if (ep >= 0)
            close(ep);
        close(lfd);
        goto done_early;
    }
    /* Shared memory for the ranks on this node (TENBIN_EMU_SHM=0: TCP for all). */
    long use_shm = 1;
    double spin = 50e-6;
    long ahead_max = TB_EMU_AHEAD_MAX;
    /* More ranks than cores: the watching coordinator yields its core in
     * the loop (the rank it waits for may need it) instead of pausing. */
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int yield_spin = online > 0 && c.P > online;
    const char *bad = NULL;
    if (tb_env_int("TENBIN_EMU_SHM", &use_shm) != TB_OK || (use_shm != 0 && use_shm != 1))
        bad = "TENBIN_EMU_SHM: expected 0 or 1";
    else if (tb_env_double("TENBIN_EMU_SPIN", &spin) != TB_OK || !(spin >= 0 && spin <= 1))
        bad = "TENBIN_EMU_SPIN: expected seconds from 0 to 1";
    else if (tb_env_int("TENBIN_EMU_AHEAD", &ahead_max) != TB_OK || ahead_max < 0 ||
             ahead_max > TB_EMU_AHEAD_MAX)
        bad = "TENBIN_EMU_AHEAD: expected a number from 0 to 32";
    _Static_assert(TB_EMU_AHEAD_MAX == 32, "the message above says 32");
    c.ahead_max = (size_t)ahead_max;
    if (bad) {
        rc = TB_ERR_INVALID;
        set_err(err, errlen, "%s", bad);
        close(ep);
        close(lfd);
        goto done_early;
    }
    char seg[200], shm_env[256] = "";
    if (use_shm && tb_emu_shm_create(c.P, &c.shm, &shm_bytes, shm_name, sizeof shm_name, seg,
                                     sizeof seg) == TB_OK)
        snprintf(shm_env, sizeof shm_env, "TENBIN_EMU_SEGMENT=%s", seg);
    double t0 = tb_wtime();
    int exec_errno = 0;
    pid_t child = launch(o, argv, coord_at, platform, shm_env[0] ? shm_env : NULL, &exec_errno);
    if (child < 0) {
        close(lfd);
        close(ep);
        rc = TB_ERR_IO;
        set_err(err, errlen, "cannot run %s: %s", o->mpiexec ? o->mpiexec : TENBIN_MPIEXEC,
                strerror(exec_errno ? exec_errno : errno));
        goto done_early;
    }
    size_t nconns = 0;
    int status = 0, exited = 0, failed = 0, finals = 0, nhello = 0, nattached = 0;
    double quiet_since = tb_wtime(), first_hello = 0, busy_at = 0, socks_at = 0;
    double all_hello = 0, all_final = 0; /* real times */
    uint32_t seen = 0; /* the shared bell when the rings were last read */
    char why[600] = "";
    while (!exited) {
        /* Up to 10 ms, or until the next question held back is due (ppoll
         * on the epoll descriptor: a timeout finer than a millisecond). */
        double wait = 0.01;
        if (c.ask_due < INFINITY) {
            double d = c.ask_due - tb_wtime();
            wait = d < 0 ? 0 : d < wait ? d : wait;
        }
        /* All ranks on the rings: sleep on the bell, and look at the sockets
         * (a rank that ended, a FAIL) every millisecond.  While frames come
         * often, watch the bell a while before sleeping: a wake-up costs
         * more than the gap between frames.  Otherwise sleep in poll on the
         * sockets (ranks on a ring then send a BELL there). */
        int pr = 0, rung = 0, on_bell = c.shm && nattached == c.P;
        if (on_bell && atomic_load(&c.shm->bell) == seen && wait > 0) {
            double until = busy_at + spin, t = tb_wtime();
            if (until - t > wait)
                until = t + wait;
            while (atomic_load_explicit(&c.shm->bell, memory_order_acquire) == seen && t < until) {
                if (yield_spin)
                    sched_yield();
                else
                    tb_emu_cpu_relax();
                t = tb_wtime();
            }
        }
        if (c.shm)
            atomic_store(&c.shm->coord_sleeping, on_bell ? TB_EMU_ON_BELL : TB_EMU_ON_POLL);
        if ((c.shm && atomic_load(&c.shm->bell) != seen) || wait == 0) {
            /* frames came: no sleep */
        } else if (on_bell) {
            tb_emu_futex_wait(&c.shm->bell, seen, (long)(wait * 1e9));
        } else {
            struct timespec wts = {0, (long)(wait * 1e9)};
            struct pollfd epf = {ep, POLLIN, 0};
            (void)ppoll(&epf, 1, &wts, NULL);
        }
        if (c.shm) {
            atomic_store(&c.shm->coord_sleeping, TB_EMU_AWAKE);
            uint32_t b = atomic_load(&c.shm->bell);
            rung = b != seen;
            seen = b;
        }
        double tnow = tb_wtime();
        if (!on_bell || !rung || tnow - socks_at > 1e-3) {
            socks_at = tnow;
            pr = epoll_wait(ep, pfd, NEV, 0);
        }
        if (pr < 0 && errno != EINTR) {
            snprintf(why, sizeof why, "poll: %s", strerror(errno));
            failed = 1;
        }
        if (pr < 0)
            pr = 0;
        int new_conn = 0;
        for (int i = 0; i < pr && !failed; i++) {
            if (pfd[i].data.u64 == UINT64_MAX) {
                new_conn = 1;
                continue;
            }
            conn *cn = &conns[pfd[i].data.u64];
            if (cn->fd < 0)
                continue;
            /* Every frame the connection has: one read, then the frames. */
            int closed = 0;
            long got = tb_emu_reader_fill(cn->fd, &cn->rd, &closed);
            int was_attached = cn->rank >= 0 && c.r[cn->rank].up;
            failed = take_frames(&c, &cn->rd, cn->fd, &cn->rank, &finals, why, sizeof why);
            if (!failed && !was_attached && cn->rank >= 0 && c.r[cn->rank].up) {
                /* Frames it put in the ring before its HELLO was read
                 * (their dirty bit may have been taken already). */
                nattached++;
                failed = drain_one(&c, cn->rank, &finals, why, sizeof why);
            }
            /* A rank on a ring that ended: what it put there before (its
             * FINAL) comes first. */
            if (got < 0 && !failed && cn->rank >= 0 && c.r[cn->rank].up)
                failed = drain_one(&c, cn->rank, &finals, why, sizeof why);
            if (got < 0 && !failed) {
                int rk = cn->rank;
                close(cn->fd); /* which takes it out of the epoll set */
                cn->fd = -1;
                tb_emu_reader_free(&cn->rd);
                if (rk >= 0 && !c.r[rk].done && !c.fail[0]) {
                    snprintf(why, sizeof why, "rank %d ended before MPI_Finalize", rk);
                    failed = 1;
                }
                if (rk >= 0)
                    c.r[rk].fd = -1;
                continue;
            }
            if (cn->rank >= 0 && nhello < c.P) {
                int k = 0;
                for (int i = 0; i < c.P; i++)
                    k += c.r[i].hello;
                if (k > nhello && nhello == 0)
                    first_hello = tb_wtime();
                nhello = k;
                /* Every rank that can has mapped the segment: no name left
                 * behind if this process is killed. */
                if (nhello == c.P) {
                    all_hello = tb_wtime();
                    tb_emu_shm_unlink(shm_name);
                    shm_name[0] = 0;
                }
            }
        }
        if (new_conn && !failed)
            accept_all(lfd, ep, conns, &nconns, maxconns);
        if (c.shm && !failed && (rung || pr > 0))
            failed = drain_rings(&c, 0, &finals, why, sizeof why);
        if (rung || pr > 0)
            busy_at = tb_wtime();
        if (!failed && decide_all(&c) != TB_OK) {
            /* A rank's connection broke while being answered: it ended. */
            snprintf(why, sizeof why, "lost a rank's connection");
            failed = 1;
        }
        for (int k = 0; c.nbacklog > 0 && k < c.P; k++)
            if (c.r[k].backlog.len > 0)
                flush_down(&c, k);
        /* A deadlock must hold for a while with nothing said: an
         * acknowledgement a rank sent from a posted receive travels outside
         * what the coordinator sees, and wakes its sender a moment later. */
        if (pr > 0 || rung)
            quiet_since = tb_wtime();
        if (finals == c.P && all_final == 0)
            all_final = tb_wtime();
        if (!failed && tb_wtime() - quiet_since > 0.5 && deadlocked(&c, why, sizeof why))
            failed = 3;
        if (failed) {
            kill_all(&c, child, SIGTERM);
            status = reap(&c, child);
            exited = 1;
            break;
        }
        /* MPI_Init ends on every rank at about the same time: ranks that
         * have not said hello long after the first did are not emulated
         * (the preload failed, or another launcher started them). */
        if (!failed && nhello > 0 && nhello < c.P && tb_wtime() - first_hello > 10 + 0.1 * c.P) {
            snprintf(why, sizeof why,
                     "only %d of %d ranks started under the emulator (%.0f s after the first; "
                     "could the others not preload libtenbin-emu.so? their output says)",
                     nhello, c.P, 10 + 0.1 * c.P);
            failed = 4;
            kill_all(&c, child, SIGTERM);
            status = reap(&c, child);
            exited = 1;
            break;
        }
        if (o->timeout > 0 && tb_wtime() - t0 > o->timeout) {
            if (nhello < c.P) /* still starting: say how far it got */
                snprintf(why, sizeof why,
                         "no end after %g s of real time (stopped; see --timeout): %d of %d "
                         "ranks were out of MPI_Init",
                         o->timeout, nhello, c.P);
            else
                snprintf(why, sizeof why,
                         "no end after %g s of real time (stopped; see --timeout)", o->timeout);
            failed = 2;
            dump_state(&c, "stopped by the timeout");
            kill_all(&c, child, SIGTERM);
            status = reap(&c, child);
            exited = 1;
            break;
        }
        pid_t w = waitpid(child, &status, WNOHANG);
        if (w == child)
            exited = 1;
    }
    /* Frames still buffered after the launcher ended (FINALs, a FAIL), also
     * from ranks whose connection was still waiting to be accepted. */
    if (!failed)
        accept_all(lfd, ep, conns, &nconns, maxconns);
    for (size_t i = 0; i < nconns && !failed; i++) {
        if (conns[i].fd < 0)
            continue;
        while (tb_emu_reader_fill(conns[i].fd, &conns[i].rd, NULL) > 0)
            ;
        failed = take_frames(&c, &conns[i].rd, conns[i].fd, &conns[i].rank, &finals, why,
                             sizeof why);
    }
    if (c.shm && !failed && drain_rings(&c, 1, &finals, why, sizeof why))
        failed = 1;
    for (size_t i = 0; i < nconns; i++) {
        if (conns[i].fd >= 0)
            close(conns[i].fd);
        tb_emu_reader_free(&conns[i].rd);
    }
    close(ep);
    close(lfd);
    c.res->wall_s = tb_wtime() - t0;
    if (all_final == 0)
        all_final = tb_wtime();
    if (all_hello > 0) {
        c.res->startup_s = all_hello - t0;
        c.res->run_s = all_final - all_hello;
    }
    c.res->decisions = c.decisions;
    c.res->unchecked = c.unchecked;
    c.res->unchecked_rendezvous = c.unchecked_rdv;
    c.res->answered_ahead = c.ahead;
    int hellos = 0;
    for (int i = 0; i < c.P; i++)
        hellos += c.r[i].hello;
    if (c.fail[0]) {
        rc = TB_ERR_STATE;
        set_err(err, errlen, "%s", c.fail);
    } else if (failed == 3 || failed == 4) {
        rc = TB_ERR_STATE;
        set_err(err, errlen, "%s: %s", argv[0], why);
    } else if (failed == 2) {
        rc = TB_ERR_TIMEOUT;
        set_err(err, errlen, "%s", why);
    } else if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0)) {
        rc = TB_ERR_STATE;
        char st_s[64];
        if (WIFSIGNALED(status))
            snprintf(st_s, sizeof st_s, "was killed by signal %d", WTERMSIG(status));
        else
            snprintf(st_s, sizeof st_s, "exited with status %d", WEXITSTATUS(status));
        if (why[0])
            set_err(err, errlen, "%s: %s (the launcher %s)", argv[0], why, st_s);
        else if (hellos == 0)
            set_err(err, errlen,
                    "%s: the run failed before any rank reached the coordinator at %s (the "
                    "launcher %s; ranks on other nodes need --listen with an address of this "
                    "machine they reach)",
                    argv[0], coord_at, st_s);
        else
            set_err(err, errlen, "%s: the run failed (the launcher %s)", argv[0], st_s);
    } else if (failed) {
        rc = TB_ERR_STATE;
        set_err(err, errlen, "%s: %s", argv[0], why);
    } else if (hellos < c.P) {
        rc = TB_ERR_STATE;
        set_err(err, errlen,
                "%s: %d of %d ranks called MPI_Init through the emulator (is it a dynamically "
                "linked MPI program built with " TENBIN_MPI_FLAVOUR "?)",
                argv[0], hellos, c.P);
    } else if (finals < c.P) {
        rc = TB_ERR_STATE;
        set_err(err, errlen, "%s: %d of %d ranks called MPI_Finalize", argv[0], finals, c.P);
    } else {
        rc = TB_OK;
        double mk = 0;
        for (int i = 0; i < c.P; i++)
            if (c.res->rank[i].end_s > mk)
                mk = c.res->rank[i].end_s;
        c.res->makespan_s = mk;
        for (int i = 0; i < c.P; i++)
            c.res->rank[i].idle_s += mk - c.res->rank[i].end_s;
        *out = c.res;
        c.res = NULL;
    }
done_early:
    tb_emu_shm_unlink(shm_name);
    tb_emu_shm_unmap(c.shm, shm_bytes);
    coord_free(&c);
    free(conns);
    free(pfd);
    tb_platform_destroy(&plat);
    return rc;
}

void tb_emu_result_free(tb_emu_result **pr)
{
    if (!pr || !*pr)
        return;
    tb_emu_result *r = *pr;
    for (int i = 0; r->trace && i < r->ranks; i++)
        tb_buf_free(&r->trace[i]);
    free(r->trace);
    free(r->rank);
    free(r);
    *pr = NULL;
}

/*
 * The coordinator fed frames as the ranks' connections would bring them,
 * without processes, sockets or clocks of ranks: for the fuzz harness
 * (tests/fuzz/fuzz_emu_frames.c).  data is a sequence of records: u8
 * connection (taken mod P + 1: one more connection than ranks, a stray),
 * u16 length (little endian), then that many bytes, one frame (its type and
 * fields, proto.h).  After each frame the coordinator decides what it can
 * and looks for a deadlock, as in a run; its frames to the ranks are read
 * and dropped.  TB_OK if every frame was taken; else the error that would end
 * the run, with its line in err.
 */
int tb__emu_coord_feed(int P, const unsigned char *data, size_t len, char *err, size_t errlen)
{
    if (P < 1 || P > 64 || (!data && len)) {
        set_err(err, errlen, "invalid arguments");
        return TB_ERR_INVALID;
    }
    coord c = {0};
    c.P = P;
    c.lookahead = 1e-6;
    c.ahead_max = TB_EMU_AHEAD_MAX;
    /* The ranks' end of every connection: one socket pair, whose other end
     * is emptied after each frame. */
    int sv[2] = {-1, -1};
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0)
        fcntl(sv[1], F_SETFL, O_NONBLOCK);
    int sink = sv[0];
    int rank[65];
    for (int k = 0; k <= P; k++)
        rank[k] = -1;
    int rc = sink < 0 ? TB_ERR_IO : coord_init(&c, NULL);
    if (rc != TB_OK)
        set_err(err, errlen, "cannot set up: %s", tb_strerror(rc));
    size_t off = 0;
    while (rc == TB_OK && len - off >= 3) {
        int k = data[off] % (P + 1);
        size_t n = (size_t)data[off + 1] | (size_t)data[off + 2] << 8;
        off += 3;
        if (n > len - off)
            n = len - off;
        tb_buf_clear(&c.in);
        rc = tb_buf_append(&c.in, data + off, n);
        off += n;
        if (rc == TB_OK)
            rc = on_frame(&c, sink, &rank[k], &c.in);
        if (rc == TB_ERR_ABORTED) {
            set_err(err, errlen, "%s", c.fail);
            break;
        }
        if (rc != TB_OK) {
            set_err(err, errlen, "rank %d: %s in its message to the coordinator", rank[k],
                    tb_strerror(rc));
            break;
        }
        if ((rc = decide_all(&c)) != TB_OK) {
            set_err(err, errlen, "deciding: %s", tb_strerror(rc));
            break;
        }
        char why[512], drain[4096];
        while (read(sv[1], drain, sizeof drain) > 0)
            ;
        if (deadlocked(&c, why, sizeof why)) {
            set_err(err, errlen, "%s", why);
            rc = TB_ERR_STATE;
        }
    }
    coord_free(&c);
    for (int i = 0; i < 2; i++)
        if (sv[i] >= 0)
            close(sv[i]);
    return rc;
}
