/*
 * transport_sim.c - the simulated transport: P actors on a modelled
 * platform, LogGPS message costs, virtual time.  See sim.h for the model.
 *
 * Each rank keeps its mailbox sorted by arrival time.  A message is put there
 * when it is sent (its arrival time is known then), so "how many messages
 * have arrived" at any rank time is exact.  A rank that is free and has mail
 * gets a WAKE event at max(its clock, the first arrival); handlers start at
 * their event's time and advance the rank's clock by the overheads they incur.
 * Events are processed in (time, scheduling order), which makes a run
 * bit-reproducible.
 */
#include "tenbin/core.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

enum { EV_START = 1, EV_WAKE, EV_COMPUTED };

typedef struct sim_msg {
    struct sim_msg *next, *prev;
    double arrival;
    int src, tag;
    int is_timer;
    int rendezvous;
    uint64_t timer_id;
    size_t len;
    size_t wire;         /* bytes the network model charges (len, or a modelled size) */
    unsigned char data[];
} sim_msg;

/* Last arrival time per (source, destination) pair, so that messages
 * between two ranks arrive in the order they were sent, as MPI guarantees
 * (a large message sent first would otherwise be overtaken by a small one),
 * and how many of the pair's messages the destination has seen arrive. */
typedef struct pair_slot {
    uint64_t key; /* src * P + dst + 1; 0 = empty */
    double last;
    int seen; /* its messages among those dst has seen arrive (sim_rank.seen) */
    uint32_t used; /* in a rank's slot: the event count when it was last looked up */
} pair_slot;

/* A rank's state, three cache lines (the array is aligned to 64 bytes):
 * the first is what every event touches (with the computation it runs:
 * its start and its end are events of their own), the second what a
 * message's receiver touches, the third what its sender touches.  A pair
 * as a source (out) and one as a destination (in) live here too, beside
 * what a send touches anyway (pair_slot_for): a worker's pairs with its
 * master then need no lookup in the pairs' table (at a million ranks each
 * lookup there was a cache miss, 18 % of the run). */
typedef struct sim_rank {
    /* line 1 */
    tb_actor *actor;
    double clock;
    sim_msg *head, *tail;
    double wake_at;      /* time of the pending wake */
    uint64_t job;        /* the computation it runs (what `computed` is told) */
    uint32_t wake_gen;   /* only the newest wake counts */
    int job_status;
    unsigned char wake_pending;
    unsigned char computing;     /* busy with a computation (its end is scheduled) */
    unsigned char compute_asked; /* the running handler started one */
    unsigned char in_fn;         /* a computation's fn is running */
    /* line 2.  arrived(): the messages head .. seen (those with arrival <=
     * the clock when it last looked; NULL: none yet), counted per source in
     * the pairs (pair_slot.seen), `distinct` sources with a count.  Kept up
     * to date as messages come and go, so that a look costs what came
     * since, not the whole mailbox: a master of many workers looks after
     * every assignment, with as many results waiting. */
    sim_msg *seen;
    int distinct;
    int cluster;
    double link_free;    /* its link: the earliest start of its next send */
    pair_slot in;        /* its first pair as a destination */
    uint64_t msgs_recv, bytes_recv;
    /* line 3 */
    pair_slot out;       /* its first pair as a source */
    uint64_t msgs_sent, bytes_sent;
    unsigned char pad_[24]; /* to the line's end: ranks do not share lines */
} sim_rank;

#if UINTPTR_MAX == UINT64_MAX /* the lines above count 8-byte pointers */
_Static_assert(sizeof(sim_rank) == 192, "a rank is three cache lines");
#endif

/* n ranks, zeroed, at a cache line's start. */
static sim_rank *ranks_alloc(size_t n)
{
    if (n > SIZE_MAX / sizeof(sim_rank))
        return NULL;
    sim_rank *r = aligned_alloc(64, n * sizeof *r);
    if (r)
        memset(r, 0, n * sizeof *r);
    return r;
}

/* The other pairs: a table, open addressing; only pairs that talk take
 * room. */

/* Messages of up to SMALL bytes (every message of the master-worker
 * protocols, and timers) come from a free list of equal blocks, kept for the
 * run: a send and a take cost no malloc and free. */
enum { SMALL = 64 };

struct tb_sim {
    tb_tp base;
    sim_msg *spare; /* free small blocks, linked by next */
    pair_slot *pairs;
    size_t npairs, cappairs;
    const tb_platform *plat;
    int P;
    sim_rank *r;
    /* Per rank too, apart from sim_rank: what only a take or a computation
     * touches (its link: up to 16 busy spans, usually one in use), so that the fields
     * every event touches stay dense (4,096 ranks' fit in a cache). */
    tb_netlink *rx;         /* its link's receiving side */
    double need_max;        /* the most a message needs a link for (tb_net_need_max) */
    tb_speed_cursor *speed; /* its host's speed over time */
    tb_sim_queue q;
    tb_sim_cost_fn cost;
    void *cost_ctx;
    double end;
    int *stamp; /* per-source marks for arrived() */
    unsigned stamp_gen;
    int running; /* rank whose handler runs now, or -1 */
    double ask_work; /* the work of the computation the running handler asked for */
    int measure_cpu;
};

static tb_sim *as_sim(tb_tp *tp) { return (tb_sim *)tp; }

static sim_msg *msg_new(tb_sim *s, size_t k)
{
    sim_msg *m = s->spare;
    if (k > SMALL)
        m = malloc(sizeof(sim_msg) + k);
    else if (m)
        s->spare = m->next;
    else
        m = malloc(sizeof(sim_msg) + SMALL);
    if (m)
        m->len = k;
    return m;
}

/* m's len says which kind of block it is. */
static void msg_free(tb_sim *s, sim_msg *m)
{
    if (m->len > SMALL) {
        free(m);
        return;
    }
    m->next = s->spare;
    s->spare = m;
}

/* Insert m into r's mailbox by arrival time, after equal times (stable). */
static void seen_count(tb_sim *s, int src, int dst, int d);

static void mailbox_insert(tb_sim *s, int dst, sim_msg *m)
{
    sim_rank *r = &s->r[dst];
    sim_msg *after = r->tail;
    while (after && after->arrival > m->arrival)
        after = after->prev;
    m->prev = after;
    m->next = after ? after->next : r->head;
    if (m->next)
        m->next->prev = m;
    else
        r->tail = m;
    if (after)
        after->next = m;
    else
        r->head = m;
    /* Before the last one seen (earlier than it): seen already. */
    if (r->seen && m->arrival < r->seen->arrival && !m->is_timer)
        seen_count(s, m->src, dst, 1);
}

static sim_msg *mailbox_pop(tb_sim *s, int dst)
{
    sim_rank *r = &s->r[dst];
    sim_msg *m = r->head;
    r->head = m->next;
    if (r->head)
        r->head->prev = NULL;
    else
        r->tail = NULL;
    if (r->seen) { /* the head is among those seen */
        if (!m->is_timer)
            seen_count(s, m->src, dst, -1);
        if (r->seen == m)
            r->seen = NULL;
    }
    return m;
}

/*
 * A free rank with mail gets woken at its first arrival.  A message that
 * arrives before the pending wake moves the wake earlier (a new wake event;
 * the older one is ignored by its generation).  The rank whose handler is
 * running is woken when the handler returns, from its final clock.
 */
static int maybe_wake(tb_sim *s, int rank)
{
    sim_rank *r = &s->r[rank];
    if (r->computing || !r->head || r->actor->finished || rank == s->running)
        return TB_OK;
    double t = r->head->arrival > r->clock ? r->head->arrival : r->clock;
    if (r->wake_pending && r->wake_at <= t)
        return TB_OK;
    r->wake_pending = 1;
    r->wake_at = t;
    /* Wakes come in streams in time order: those a rank's sends cause (its
     * clock only grows), and a rank's own after each of its handlers. */
    unsigned stream = s->running >= 0 ? 2u * (unsigned)s->running : 2u * (unsigned)rank + 1u;
    return tb_sim_queue_push_stream(&s->q, t, EV_WAKE, rank, ++r->wake_gen, stream);
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static pair_slot *pair_find(tb_sim *s, uint64_t key)
{
    size_t mask = s->cappairs - 1, i = (size_t)mix(key) & mask;
    while (s->pairs[i].key != 0 && s->pairs[i].key != key)
        i = (i + 1) & mask;
    return &s->pairs[i];
}

static uint64_t pair_key(const tb_sim *s, int src, int dst)
{
    return (uint64_t)src * (uint64_t)s->P + (uint64_t)dst + 1;
}

/* Take p out of the table (linear probing: the entries after it that may
 * move back, move back). */
static void pair_delete(tb_sim *s, pair_slot *p)
{
    size_t mask = s->cappairs - 1, i = (size_t)(p - s->pairs), j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (s->pairs[j].key == 0)
            break;
        size_t home = (size_t)mix(s->pairs[j].key) & mask;
        /* j may fill the hole at i unless its home lies after i, up to j */
        if (j > i ? (home <= i || home > j) : (home <= i && home > j)) {
            s->pairs[i] = s->pairs[j];
            i = j;
        }
    }
    s->pairs[i] = (pair_slot){0, 0.0, 0, 0};
    s->npairs--;
}

static uint32_t pair_tick(const tb_sim *s) { return (uint32_t)s->q.popped; }

/* Where pair (src, dst) goes in the ranks' own lines: src's out slot or
 * dst's in slot, a free one, else the one looked up less recently.  A
 * worker that changes masters (the dynamic policies) then finds its new
 * pairs in its own lines again, not in the table (a cache miss a lookup at
 * thousands of ranks).  Where a pair lives changes nothing it holds. */
static pair_slot *pair_slot_for(tb_sim *s, int src, int dst)
{
    pair_slot *a = &s->r[src].out, *b = &s->r[dst].in;
    if (a->key == 0)
        return a;
    if (b->key == 0)
        return b;
    return (int32_t)(b->used - a->used) < 0 ? b : a;
}

/* Room in the table for one more pair. */
static int pairs_room(tb_sim *s)
{
    if (2 * (s->npairs + 1) <= s->cappairs)
        return TB_OK;
    size_t cap = s->cappairs ? 2 * s->cappairs : 1024;
    pair_slot *old = s->pairs, *fresh = calloc(cap, sizeof *fresh);
    if (!fresh)
        return TB_ERR_NOMEM;
    size_t oldcap = s->cappairs;
    s->pairs = fresh;
    s->cappairs = cap;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].key)
            *pair_find(s, old[i].key) = old[i];
    free(old);
    return TB_OK;
}

/* Slot v's pair, if any, into the table (which has room). */
static void pair_evict(tb_sim *s, const pair_slot *v)
{
    if (v->key == 0)
        return;
    *pair_find(s, v->key) = *v;
    s->npairs++;
}

/* Pair (src, dst): in src's out slot, in dst's in slot, or in the table
 * (then moved to a slot, pair_slot_for); NULL when it has never been sent
 * on.  The pointer holds until the next lookup. */
static pair_slot *pair_at(tb_sim *s, int src, int dst)
{
    uint64_t key = pair_key(s, src, dst);
    pair_slot *p = NULL;
    if (s->r[src].out.key == key) {
        p = &s->r[src].out;
    } else if (s->r[dst].in.key == key) {
        p = &s->r[dst].in;
    } else if (s->cappairs && (p = pair_find(s, key))->key != 0) {
        pair_slot mine = *p, *v = pair_slot_for(s, src, dst);
        pair_delete(s, p);
        pair_evict(s, v); /* into the room p left */
        *v = mine;
        p = v;
    } else {
        return NULL;
    }
    p->used = pair_tick(s);
    return p;
}

/* The slot of pair (src, dst), created at -infinity if new (in a slot:
 * pair_slot_for). */
static int pair_get(tb_sim *s, int src, int dst, pair_slot **out)
{
    pair_slot *p = pair_at(s, src, dst);
    if (!p) {
        p = pair_slot_for(s, src, dst);
        if (p->key != 0) {
            TB_CHECK(pairs_room(s));
            pair_evict(s, p);
        }
        *p = (pair_slot){pair_key(s, src, dst), -INFINITY, 0, pair_tick(s)};
    }
    *out = p;
    return TB_OK;
}

/* One more (d = 1) or one fewer (-1) message from src among those dst has
 * seen; its pair exists (it was sent). */
static void seen_count(tb_sim *s, int src, int dst, int d)
{
    pair_slot *p = pair_at(s, src, dst);
    if (d > 0 ? p->seen++ == 0 : --p->seen == 0)
        s->r[dst].distinct += d;
}

static int send_wire(tb_sim *s, tb_actor *from, int dst, int tag, tb_buf *msg, size_t wire)
{
    if (dst < 0 || dst >= s->P)
        return TB_ERR_INVALID;
    sim_rank *a = &s->r[from->rank], *b = &s->r[dst];
    size_t k = msg->len;
    sim_msg *m = msg_new(s, k);
    if (!m)
        return TB_ERR_NOMEM;
    tb_netmsg nm;
    tb_net_send(s->plat, s->P, a->cluster, b->cluster, from->rank == dst, wire, a->clock,
                a->link_free, &nm);
    a->clock = nm.send_end;
    a->link_free = nm.link_free;
    m->rendezvous = nm.rendezvous;
    m->arrival = nm.arrival;
    if (!isfinite(m->arrival)) {
        msg_free(s, m);
        TB_LOG_ERR("simulation: a message from rank %d to rank %d would never arrive "
                   "(check the platform's L, G and overheads)", from->rank, dst);
        return TB_ERR_RANGE;
    }
    pair_slot *pair;
    int rc = pair_get(s, from->rank, dst, &pair);
    if (rc != TB_OK) {
        msg_free(s, m);
        return rc;
    }
    if (m->arrival < pair->last)
        m->arrival = pair->last; /* no overtaking between two ranks */
    pair->last = m->arrival;
    m->src = from->rank;
    m->tag = tag;
    m->is_timer = 0;
    m->len = k;
    m->wire = wire;
    if (k > 0)
        memcpy(m->data, msg->data, k);
    tb_buf_clear(msg);
    a->msgs_sent++;
    a->bytes_sent += wire;
    mailbox_insert(s, dst, m);
    return maybe_wake(s, dst);
}

static int sim_send(tb_tp *tp, tb_actor *from, int dst, int tag, tb_buf *msg)
{
    return send_wire(as_sim(tp), from, dst, tag, msg, msg->len);
}

int tb_sim_send_modelled(tb_sim *s, tb_actor *from, int dst, int tag, tb_buf *msg, size_t bytes)
{
    return send_wire(s, from, dst, tag, msg, bytes);
}

static int sim_arrived(tb_tp *tp, tb_actor *act, const int *from, int n)
{
    tb_sim *s = as_sim(tp);
    sim_rank *r = &s->r[act->rank];
    /* Count distinct sources with a message already here (arrival by the
     * clock), as MPI_Iprobe per source would: the counts (sim_rank.seen)
     * take in what arrived since the last look. */
    for (sim_msg *m = r->seen ? r->seen->next : r->head; m && m->arrival <= r->clock;
         m = m->next) {
        if (!m->is_timer)
            seen_count(s, m->src, act->rank, 1);
        r->seen = m;
    }
    if (from == NULL || n < 0)
        return r->distinct;
    if (++s->stamp_gen == 0) {
        memset(s->stamp, 0, (size_t)s->P * sizeof *s->stamp);
        s->stamp_gen = 1;
    }
    int count = 0;
    for (int i = 0; i < n; i++) {
        if (from[i] < 0 || from[i] >= s->P || s->stamp[from[i]] == (int)s->stamp_gen)
            continue;
        s->stamp[from[i]] = (int)s->stamp_gen;
        const pair_slot *p = pair_at(s, from[i], act->rank);
        count += p && p->seen > 0;
    }
    return count;
}

static double sim_now(tb_tp *tp, tb_actor *a) { return as_sim(tp)->r[a->rank].clock; }

static int sim_timer(tb_tp *tp, tb_actor *a, double at, uint64_t id)
{
    tb_sim *s = as_sim(tp);
    sim_msg *m = msg_new(s, 0);
    if (!m)
        return TB_ERR_NOMEM;
    memset(m, 0, sizeof *m);
    m->arrival = at;
    m->is_timer = 1;
    m->timer_id = id;
    m->src = a->rank;
    mailbox_insert(s, a->rank, m);
    return maybe_wake(s, a->rank);
}

static int sim_compute(tb_tp *tp, tb_actor *a, uint64_t job, const tb_compute *c)
{
    tb_sim *s = as_sim(tp);
    sim_rank *r = &s->r[a->rank];
    if (r->computing || r->compute_asked || a->rank != s->running)
        return TB_ERR_STATE; /* one computation at a time per rank, asked by its handler */
    double cpu0 = s->measure_cpu ? tb_thread_cputime() : 0.0;
    r->in_fn = 1;
    int status = c->fn(c->arg);
    r->in_fn = 0;
    double cpu = s->measure_cpu ? tb_thread_cputime() - cpu0 : 0.0;
    double work = s->cost ? s->cost(s->cost_ctx, a, job, c, cpu) : cpu;
    if (!(work >= 0) || !isfinite(work)) {
        TB_LOG_ERR("simulation: the cost of computation %llu is %g s, not a finite time >= 0",
                   (unsigned long long)job, work);
        return TB_ERR_RANGE;
    }
    /* It starts when the handler returns: anything the handler does after
     * this call (sends) comes first on this rank's CPU. */
    r->compute_asked = 1;
    s->ask_work = work;
    r->job = job;
    r->job_status = status;
    return TB_OK;
}

/* After a handler: start the computation it asked for, from its final clock. */
static int start_compute(tb_sim *s, int rank)
{
    sim_rank *r = &s->r[rank];
    if (!r->compute_asked)
        return TB_OK;
    r->compute_asked = 0;
    double end;
    int rc = tb_speed_finish_time(&s->speed[rank], r->clock, s->ask_work, &end);
    if (rc != TB_OK) {
        TB_LOG_ERR("simulation: rank %d: a computation of %g s at t=%.9g s never ends "
                   "(check the host's speed and the task's cost)", rank, s->ask_work, r->clock);
        return rc;
    }
    r->computing = 1;
    return tb_sim_queue_push(&s->q, end, EV_COMPUTED, rank, r->job);
}

static int sim_cancel(tb_tp *tp, tb_actor *a, uint64_t id)
{
    tb_sim *s = as_sim(tp);
    sim_rank *r = &s->r[a->rank];
    for (sim_msg *m = r->head, *next; m; m = next) {
        next = m->next;
        if (!m->is_timer || m->timer_id != id)
            continue;
        if (r->seen == m)
            r->seen = m->prev; /* a timer: not counted */
        if (m->prev)
            m->prev->next = m->next;
        else
            r->head = m->next;
        if (m->next)
            m->next->prev = m->prev;
        else
            r->tail = m->prev;
        msg_free(s, m);
    }
    return TB_OK; /* a wake left for it finds nothing due and waits again */
}

/* Simulated time stands still while fn runs: its own model says. */
static double sim_spent(tb_tp *tp, tb_actor *a, double modelled)
{
    return as_sim(tp)->r[a->rank].in_fn ? modelled : 0.0;
}

static const tb_tp_ops sim_ops = {
    sizeof(tb_tp_ops), sim_send, sim_arrived, sim_now, sim_timer, sim_compute, sim_cancel,
    sim_spent,
};

int tb_sim_create(tb_sim **out, const tb_platform *plat, int ranks, tb_sim_cost_fn cost,
                  void *cost_ctx, int measure_cpu)
{
    if (!plat || ranks < 1)
        return TB_ERR_INVALID;
    if ((size_t)ranks > tb_platform_cores(plat))
        return TB_ERR_SIZE;
    tb_sim *s = calloc(1, sizeof *s);
    if (!s)
        return TB_ERR_NOMEM;
    s->base.ops = &sim_ops;
    s->base.size = ranks;
    s->plat = plat;
    s->P = ranks;
    s->cost = cost;
    s->cost_ctx = cost_ctx;
    s->measure_cpu = measure_cpu || cost == NULL;
    s->need_max = tb_net_need_max(plat);
    s->r = ranks_alloc((size_t)ranks);
    s->stamp = calloc((size_t)ranks, sizeof *s->stamp);
    s->rx = calloc((size_t)ranks, sizeof *s->rx);
    s->speed = calloc((size_t)ranks, sizeof *s->speed);
    tb_sim_queue_init(&s->q);
    if (!s->r || !s->stamp || !s->rx || !s->speed) {
        tb_sim_destroy(&s);
        return TB_ERR_NOMEM;
    }
    s->running = -1;
    /* Ranks fill the hosts' cores in order (tb_platform_host_of), walked once. */
    size_t h = 0;
    int used = 0;
    for (int i = 0; i < ranks; i++) {
        while (used >= plat->hosts[h].cores) {
            h++;
            used = 0;
        }
        used++;
        s->r[i].cluster = plat->hosts[h].cluster;
        s->r[i].link_free = -INFINITY;
        int rc = tb_speed_cursor_init(&s->speed[i], plat, h);
        if (rc != TB_OK) {
            tb_sim_destroy(&s);
            return rc;
        }
    }
    *out = s;
    return TB_OK;
}

void tb_sim_destroy(tb_sim **ps)
{
    if (!ps || !*ps)
        return;
    tb_sim *s = *ps;
    for (int i = 0; s->r && i < s->P; i++) {
        while (s->r[i].head)
            msg_free(s, mailbox_pop(s, i));
        if (s->speed)
            tb_speed_cursor_free(&s->speed[i]);
    }
    while (s->spare) {
        sim_msg *m = s->spare;
        s->spare = m->next;
        free(m);
    }
    free(s->r);
    free(s->stamp);
    free(s->rx);
    free(s->speed);
    free(s->pairs);
    tb_sim_queue_free(&s->q);
    free(s);
    *ps = NULL;
}

tb_tp *tb_sim_transport(tb_sim *s) { return &s->base; }

/* Take the first message of a woken rank and hand it to the actor. */
static int take(tb_sim *s, int rank, double t)
{
    sim_rank *r = &s->r[rank];
    if (!r->head || r->head->arrival > t)
        return maybe_wake(s, rank);
    sim_msg *m = mailbox_pop(s, rank);
    if (t > r->clock)
        r->clock = t;
    int rc;
    if (m->is_timer) {
        rc = r->actor->ops->timer ? r->actor->ops->timer(r->actor, m->timer_id) : TB_OK;
    } else {
        tb_netrecv nr;
        /* m is the earliest of its mailbox, and every later message arrives
         * after now: the spans that end before m's arrival less the most a
         * message needs the link for are no longer of use (tb_net_forget). */
        if (m->src != rank)
            tb_net_forget(&s->rx[rank], m->arrival - s->need_max);
        tb_net_recv(s->plat, s->P, s->r[m->src].cluster, r->cluster, m->src == rank, m->wire,
                    m->rendezvous, r->clock, m->arrival, &s->rx[rank], &nr);
        r->clock = nr.end;
        if (!isfinite(r->clock)) {
            TB_LOG_ERR("simulation: rank %d would never finish receiving a message from rank %d "
                       "(check the platform's L, G and overheads)", rank, m->src);
            msg_free(s, m);
            return TB_ERR_RANGE;
        }
        r->msgs_recv++;
        r->bytes_recv += m->wire;
        rc = r->actor->ops->message(r->actor, m->src, m->tag, m->data, m->len);
    }
    msg_free(s, m);
    return rc;
}

static int handle(tb_sim *s, const tb_sim_event *e)
{
    sim_rank *r = &s->r[e->rank];
    int rc = TB_OK;
    s->running = e->rank;
    switch (e->type) {
    case EV_START:
        r->clock = e->t;
        rc = r->actor->ops->start(r->actor);
        break;
    case EV_WAKE:
        if (e->a != r->wake_gen) {
            s->running = -1;
            return TB_OK; /* superseded by an earlier wake */
        }
        r->wake_pending = 0;
        if (r->computing || r->actor->finished) {
            s->running = -1;
            return TB_OK;
        }
        rc = take(s, e->rank, e->t);
        break;
    case EV_COMPUTED:
        r->clock = e->t;
        r->computing = 0;
        rc = r->actor->ops->computed(r->actor, r->job, r->job_status);
        break;
    default:
        rc = TB_ERR_STATE;
    }
    s->running = -1;
    if (rc == TB_OK)
        rc = start_compute(s, e->rank);
    if (rc != TB_OK)
        return rc;
    if (r->clock > s->end)
        s->end = r->clock;
    return maybe_wake(s, e->rank);
}

int tb_sim_run(tb_sim *s, tb_actor **actors)
{
    for (int i = 0; i < s->P; i++) {
        s->r[i].actor = actors[i];
        actors[i]->tp = &s->base;
        actors[i]->rank = i;
        actors[i]->finished = 0;
        TB_CHECK(tb_sim_queue_push(&s->q, 0.0, EV_START, i, 0));
    }
    tb_sim_event e;
    uint64_t n = 0;
    while (tb_sim_queue_pop(&s->q, &e)) {
        if ((++n & 1023) == 0 && tb_signals_pending()) { /* a stop from outside */
            s->end = e.t;
            return TB_ERR_INTERRUPTED; /* every rank is this process */
        }
        int rc = handle(s, &e);
        if (rc != TB_OK) {
            /* Where it failed said why, at error level, when it knew more. */
            TB_LOG_DEBUG("simulation: rank %d at t=%.9g s: %s", e.rank, e.t, tb_strerror(rc));
            return rc;
        }
    }
    for (int i = 0; i < s->P; i++) {
        /* a finished actor's pending timers are cancelled (transport.h) */
        const sim_msg *m = s->r[i].head;
        while (m && m->is_timer && actors[i]->finished)
            m = m->next;
        if (!actors[i]->finished || m) {
            TB_LOG_ERR("simulation: rank %d %s when no event was left", i,
                       !actors[i]->finished ? "was still waiting"
                                            : "had messages it never received");
            return TB_ERR_STATE;
        }
    }
    return TB_OK;
}

double tb_sim_end_time(const tb_sim *s) { return s->end; }
uint64_t tb_sim_events(const tb_sim *s) { return s->q.popped; }

void tb_sim_rank_counts(const tb_sim *s, int rank, uint64_t *msgs_sent, uint64_t *msgs_recv,
                        uint64_t *bytes_sent, uint64_t *bytes_recv)
{
    const sim_rank *r = &s->r[rank];
    *msgs_sent = r->msgs_sent;
    *msgs_recv = r->msgs_recv;
    *bytes_sent = r->bytes_sent;
    *bytes_recv = r->bytes_recv;
}
