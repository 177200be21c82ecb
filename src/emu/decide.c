/*
 * decide.c - the emulator's coordinator, its decisions: the state it keeps of
 * every rank, the frames the ranks send it, and what it decides in virtual
 * time that only virtual time can decide (tenbin/emu.h, docs/emulator.md, the
 * protocol in emu/proto.h).  No processes, sockets or real clocks of ranks:
 * the event loop (coord.c) feeds it, and so does the fuzz harness
 * (tb__emu_coord_feed, at the end).
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
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/errbuf.h"
#include "emu/coord.h"

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
void tb__emu_flush_down(coord *c, int k)
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
    tb__emu_flush_down(c, k);
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

/* Does leaf `leaf` of the min-tree lie below node i? */
static int below(size_t i, size_t leaf)
{
    while (leaf > i)
        leaf >>= 1;
    return leaf == i;
}

/* The least event time plus lookahead of the ranks but a and b: the earliest
 * arrival of a message none of them sends that nobody has reported yet. */
static double min_except(const coord *c, int a, int b)
{
    size_t la = c->tsize + (size_t)a, lb = c->tsize + (size_t)b, stack[2 * 64], sp = 0;
    double m = INFINITY;
    stack[sp++] = 1;
    while (sp > 0) {
        size_t i = stack[--sp];
        if (c->tree[i] >= m)
            continue;
        if (!below(i, la) && !below(i, lb)) {
            m = c->tree[i];
            continue;
        }
        if (i < c->tsize) {
            stack[sp++] = 2 * i;
            stack[sp++] = 2 * i + 1;
        }
    }
    return m;
}

/*
 * When rank k may act next, as far as a question of rank j that only k's
 * messages can answer goes (a receive, probe or test from a named source).
 * Its event time, or, if it is blocked or waiting, the arrival of a message
 * nobody has reported yet that wakes it: sent by a rank other than k and j
 * (j acts after its question) at that rank's event time or later.  (A
 * question that any source may answer needs no such care: the waker's own
 * bound to j is earlier still.)
 */
static double woken(const coord *c, int j, int k)
{
    const crank *o = &c->r[k];
    double e = c->ev[k];
    if ((o->state != TB_EMU_BLOCKED && o->state != TB_EMU_WAITING) ||
        (o->npat == 1 && o->pat[0].ctx == TB_EMU_ACK_CTX)) /* only its receiver frees it */
        return e;
    double w = min_except(c, k, j);
    if (w < o->clock)
        w = o->clock;
    return w < e ? w : e;
}

/* The earliest time a message the coordinator does not know yet can reach
 * rank j from rank k: k sends at its event time or later (named: j asks
 * about named sources only, so k's waking counts, see woken), and the pair
 * keeps its order, so not before k's last known message to j either. */
static double bound_from(const coord *c, int j, int k, int named)
{
    double b = (named ? woken(c, j, k) : c->ev[k]) + c->lookahead;
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

/* Is a named source of r's patterns blocked or waiting (so that a message of
 * a third rank may wake it: woken)? */
static int wakeable_source(const coord *c, const crank *r)
{
    for (size_t i = 0; i < r->npat; i++) {
        int k = r->pat[i].src;
        if (k < 0 || k >= c->P)
            continue;
        const crank *o = &c->r[k];
        if ((o->state == TB_EMU_BLOCKED || o->state == TB_EMU_WAITING) &&
            !(o->npat == 1 && o->pat[0].ctx == TB_EMU_ACK_CTX))
            return 1;
    }
    return 0;
}

/* Least such bound over the ranks that could send j a message its patterns
 * match, but j and s (s = -1: none); *who gets the rank that has it.  With
 * held, ranks held for j are left out and *held gets the least of their
 * bounds (INFINITY: none). */
static double bound_to(const coord *c, int j, int s, int *who, double *held)
{
    const crank *r = &c->r[j];
    double h = INFINITY;
    int named = !any_source(r);
    *who = -1;
    if (held)
        *held = INFINITY;
    for (int k = 0; k < c->P; k++) {
        if (k == j || k == s || !may_send(r, k))
            continue;
        double b = bound_from(c, j, k, named);
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
    if (!any_source(r)) {
        /* Named sources only: those few, with their waking (woken: the
         * tree's bounds are not theirs). */
        for (size_t i = 0; i < r->npat; i++) {
            int k = r->pat[i].src;
            if (k < 0 || k >= c->P || k == j || k == s ||
                before(x, bound_from(c, j, k, 1), la))
                continue;
            if (held && held_rdv(c, k, j)) {
                *held = 1;
                continue;
            }
            return 0;
        }
        return 1;
    }
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
        if (k != j && k != s && may_send(r, k) && !before(x, bound_from(c, j, k, 0), la)) {
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
        /* The ranks a question may help (few, of many): with named sources
         * only, those and, if one of them is blocked or waiting, the ranks
         * that may wake it. */
        int named = !any_source(r), chained = named && wakeable_source(c, r);
        for (int k = 0; k < P; k++) {
            const unsigned char *next = memchr(c->askable + k, 1, (size_t)(P - k));
            if (!next)
                break;
            k = (int)(next - c->askable);
            crank *o = &c->r[k];
            if (k == j || (!may_send(r, k) && !chained))
                continue;
            double b = may_send(r, k) ? bound_from(c, j, k, named) : c->ev[k] + 2 * la;
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

int tb__emu_decide_all(coord *c)
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
int tb__emu_deadlocked(const coord *c, char *why, size_t n)
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
    size_t len = (size_t)snprintf(why, n,
                                  "deadlock: every rank waits for a message no rank will "
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
void tb__emu_dump_state(coord *c, const char *why)
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
int tb__emu_take_frames(coord *c, tb_emu_reader *rd, int fd, int *rank, int *finals, char *why,
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
int tb__emu_drain_one(coord *c, int k, int *finals, char *why, size_t whylen)
{
    crank *r = &c->r[k];
    if (tb_emu_ring_fill(r->up, &r->urd) < 0) {
        snprintf(why, whylen, "out of memory");
        return 1;
    }
    int rank = k;
    return tb__emu_take_frames(c, &r->urd, r->fd, &rank, finals, why, whylen);
}

/* The frames of the ranks whose dirty bit is set (all: every ring). */
int tb__emu_drain_rings(coord *c, int all, int *finals, char *why, size_t whylen)
{
    _Atomic uint64_t *dirty = tb_emu_shm_dirty(c->shm);
    for (int w = 0; w < (c->P + 63) / 64; w++) {
        uint64_t bits = atomic_exchange(&dirty[w], 0);
        for (int k = 64 * w; k < c->P && k < 64 * (w + 1); k++)
            if (c->r[k].up && (all || (bits >> (k - 64 * w) & 1)) &&
                tb__emu_drain_one(c, k, finals, why, whylen))
                return 1;
        /* (A rank whose HELLO is not read yet is drained when it is.) */
    }
    return 0;
}

/* c->P and c->lookahead set: the per-rank state, the result's ranks (their
 * hosts from plat; NULL: host 0, no name).  TB_ERR_NOMEM leaves what was
 * made for coord_free. */
int tb__emu_coord_init(coord *c, const tb_platform *plat)
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
void tb__emu_coord_free(coord *c)
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
    if (P < 1 || P > 64 || (!data && len))
        return tb__errf(err, errlen, TB_ERR_INVALID, "invalid arguments");
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
    int rc = sink < 0 ? TB_ERR_IO : tb__emu_coord_init(&c, NULL);
    if (rc != TB_OK)
        tb__errf(err, errlen, rc, "cannot set up: %s", tb_strerror(rc));
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
            tb__errf(err, errlen, rc, "%s", c.fail);
            break;
        }
        if (rc != TB_OK) {
            tb__errf(err, errlen, rc, "rank %d: %s in its message to the coordinator", rank[k],
                     tb_strerror(rc));
            break;
        }
        if ((rc = tb__emu_decide_all(&c)) != TB_OK) {
            tb__errf(err, errlen, rc, "deciding: %s", tb_strerror(rc));
            break;
        }
        char why[512], drain[4096];
        while (read(sv[1], drain, sizeof drain) > 0)
            ;
        if (tb__emu_deadlocked(&c, why, sizeof why))
            rc = tb__errf(err, errlen, TB_ERR_STATE, "%s", why);
    }
    tb__emu_coord_free(&c);
    for (int i = 0; i < 2; i++)
        if (sv[i] >= 0)
            close(sv[i]);
    return rc;
}
