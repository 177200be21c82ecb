/*
 * kernel.c - the event queue: sorted FIFO runs beside a 4-ary min-heap, on
 * (time, sequence).
 *
 * An event no earlier than the run's last is appended to the run: its
 * sequence number is larger than every queued one, so the run stays sorted
 * by (time, sequence).  Others go to the heap.  The earliest event is the
 * earlier of the run's head and the heap's top, so the order is exactly the
 * heap's alone, and whatever follows time order (a burst of events at one
 * moment, as when messages cost nothing) is pushed and popped in O(1), in
 * memory order, instead of down the heap's levels (cache misses when it
 * holds millions).
 *
 * A caller that knows events come in streams, each in time order though
 * the streams interleave (the simulator: the wakes a rank's sends cause,
 * and a rank's own wake after each of its handlers), pushes them with
 * tb_sim_queue_push_stream: each stream (modulo TB_SIM_RUNS - 1) has a run
 * of its own, and an event goes to it when no earlier than its last.  A pop
 * takes the earliest of the runs' heads and the heap's top.  At 4,096
 * simulated ranks of one master the heap then holds only the computations'
 * ends: 15 % fewer instructions a task (docs/benchmarks.md).  More runs
 * cost every pop a look at their heads: 4 did better than 8 and 16.
 *
 * Four children to a node: half the depth of a binary heap, and a node's
 * children (4 x 32 bytes, from index 4i + 1) fill two whole cache lines
 * (the heap is placed so: heap_grow), so a pop touches fewer lines on its
 * way down.  The order (time, then sequence number) is total, so the
 * events come out in the same order whatever the heap's shape.
 *
 * Comparisons are the kernel's cost: an event's time is kept as an integer
 * that orders as the time does (time_key), the order is one 128-bit integer
 * comparison (time key, sequence) where the compiler has one (else two
 * 64-bit ones combined without a branch), the earliest of four children is
 * a tournament of three such comparisons, and a pop takes the hole down to
 * a leaf before it places the heap's last event (heap_pop).  The hold model
 * at 4,096 pending events went from about 125 to 90 ns an event
 * (bench/sim, docs/benchmarks.md).
 */
#include "tenbin/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

void tb_sim_queue_init(tb_sim_queue *q) { memset(q, 0, sizeof *q); }

void tb_sim_queue_free(tb_sim_queue *q)
{
    free(q->heap_mem);
    for (int i = 0; i < TB_SIM_RUNS; i++)
        free(q->run[i].v);
    memset(q, 0, sizeof *q);
}

/* The time t as an unsigned integer in the same order: a non-negative
 * double's bits order as its value; a negative one's, flipped, order below
 * them.  -0.0 becomes +0.0 first (they are equal times; sequence decides). */
static inline uint64_t time_key(double t)
{
    t += 0.0;
    uint64_t b;
    memcpy(&b, &t, sizeof b);
    return b ^ ((uint64_t)((int64_t)b >> 63) | (UINT64_C(1) << 63));
}

static inline double key_time(uint64_t k)
{
    uint64_t b = k ^ ((k >> 63) ? UINT64_C(1) << 63 : ~UINT64_C(0));
    double t;
    memcpy(&t, &b, sizeof t);
    return t;
}

/* x before y in (time, sequence): without a branch, for the heap's
 * comparisons are as good as random and a mispredicted branch costs more
 * than the comparison. */
static inline int before(const tb_sim_qent *x, const tb_sim_qent *y)
{
#ifdef __SIZEOF_INT128__
    /* one 128-bit comparison: a compare and a subtract with borrow */
    __extension__ typedef unsigned __int128 u128;
    return ((u128)x->key << 64 | x->seq) < ((u128)y->key << 64 | y->seq);
#else
    return (x->key < y->key) | ((x->key == y->key) & (x->seq < y->seq));
#endif
}

static inline void deliver(const tb_sim_qent *e, tb_sim_event *out)
{
    *out = (tb_sim_event){key_time(e->key), e->seq, e->type, e->rank, e->a};
}

/* Append e to run r (its time is no earlier than the run's last). */
static int run_append(struct tb_sim_run *r, const tb_sim_qent *e)
{
    if (r->end == r->cap) {
        if (r->head > 0 && r->head >= r->cap / 2) {
            /* the popped half is free: slide the run down instead of growing */
            memmove(r->v, r->v + r->head, (r->end - r->head) * sizeof *r->v);
            r->end -= r->head;
            r->head = 0;
        } else {
            TB_CHECK(tb_grow(&r->v, &r->cap, r->end, sizeof *r->v, 1024));
        }
    }
    r->v[r->end++] = *e;
    return TB_OK;
}

static int fits(const struct tb_sim_run *r, const tb_sim_qent *e)
{
    return r->head == r->end || e->key >= r->v[r->end - 1].key;
}

/* Twice the room (1,024 events at first), placed so that every node's four
 * children (4 x 32 bytes from index 4i + 1) fill two whole cache lines:
 * the heap starts half a line into a line-aligned block. */
_Static_assert(sizeof(tb_sim_qent) == 32, "heap_grow places four 32-byte entries on two lines");

static int heap_grow(tb_sim_queue *q)
{
    enum { LINE = 64 };
    size_t cap = q->cap ? 2 * q->cap : 1024;
    if (cap > (SIZE_MAX - 2 * LINE) / sizeof *q->heap)
        return TB_ERR_NOMEM;
    size_t bytes = (cap * sizeof *q->heap + LINE + LINE - 1) / LINE * LINE;
    unsigned char *mem = aligned_alloc(LINE, bytes);
    if (!mem)
        return TB_ERR_NOMEM;
    tb_sim_qent *h = (tb_sim_qent *)(void *)(mem + LINE - sizeof *q->heap);
    if (q->n > 0)
        memcpy(h, q->heap, q->n * sizeof *h);
    free(q->heap_mem);
    q->heap_mem = mem;
    q->heap = h;
    q->cap = cap;
    return TB_OK;
}

static int heap_push(tb_sim_queue *q, tb_sim_qent e)
{
    if (q->n == q->cap)
        TB_CHECK(heap_grow(q));
    size_t i = q->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!before(&e, &q->heap[parent]))
            break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = e;
    return TB_OK;
}

/* An event at t to run i if it fits there (no earlier than the run's
 * last), else to the heap. */
static int push_to(tb_sim_queue *q, int i, double t, int type, int rank, uint64_t a)
{
    if (isnan(t)) /* no place in the order (every caller checks its times) */
        return TB_ERR_RANGE;
    tb_sim_qent e = {time_key(t), q->seq, type, rank, a};
    struct tb_sim_run *r = &q->run[i];
    if (fits(r, &e)) {
        TB_CHECK(run_append(r, &e));
        if (i >= q->nrun)
            q->nrun = i + 1;
    } else {
        TB_CHECK(heap_push(q, e));
    }
    q->seq++;
    return TB_OK;
}

int tb_sim_queue_push(tb_sim_queue *q, double t, int type, int rank, uint64_t a)
{
    return push_to(q, 0, t, type, rank, a);
}

int tb_sim_queue_push_stream(tb_sim_queue *q, double t, int type, int rank, uint64_t a,
                             unsigned stream)
{
    return push_to(q, 1 + (int)(stream % (TB_SIM_RUNS - 1)), t, type, rank, a);
}

/* Take the heap's top: the hole it leaves goes down to a leaf along the
 * earliest children (the earliest of four by a tournament of three
 * comparisons, no branch), and the heap's last event goes into it and up
 * as far as it must: it came from the bottom, so it rarely goes far.  The
 * usual way (compare the last event at every level on the way down) takes
 * a branch per level that is mispredicted about half the time. */
static void heap_pop(tb_sim_queue *q)
{
    size_t n = --q->n;
    if (n == 0)
        return;
    tb_sim_qent *h = q->heap;
    size_t i = 0;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c + 3 < n) {
            size_t a = c + (size_t)before(&h[c + 1], &h[c]);
            size_t b = c + 2 + (size_t)before(&h[c + 3], &h[c + 2]);
            size_t m = before(&h[b], &h[a]) ? b : a;
            h[i] = h[m];
            i = m;
            continue;
        }
        if (c >= n)
            break;
        size_t m = c; /* the last node with children: fewer than four */
        for (size_t j = c + 1; j < n; j++)
            if (before(&h[j], &h[m]))
                m = j;
        h[i] = h[m];
        i = m;
        break;
    }
    tb_sim_qent last = h[n];
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!before(&last, &h[parent]))
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = last;
}

int tb_sim_queue_pop(tb_sim_queue *q, tb_sim_event *out)
{
    struct tb_sim_run *m = NULL;
    for (int i = 0; i < q->nrun; i++) {
        struct tb_sim_run *r = &q->run[i];
        if (r->head < r->end && (!m || before(&r->v[r->head], &m->v[m->head])))
            m = r;
    }
    if (m && (q->n == 0 || before(&m->v[m->head], &q->heap[0]))) {
        deliver(&m->v[m->head++], out);
        if (m->head == m->end)
            m->head = m->end = 0;
        q->popped++;
        return 1;
    }
    if (q->n == 0)
        return 0;
    deliver(&q->heap[0], out);
    q->popped++;
    heap_pop(q);
    return 1;
}
