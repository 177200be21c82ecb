/*
 * kernel.c - the event queue: a sorted FIFO run beside a 4-ary min-heap, on
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
 * Four children to a node: half the depth of a binary heap, and a node's
 * children (4 x 32 bytes, from index 4i + 1) lie within three cache lines,
 * so a pop touches fewer lines on its way down.  The order (time, then
 * sequence number) is total, so the events come out in the same order
 * whatever the heap's shape.
 */
#include "tenbin/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

void tb_sim_queue_init(tb_sim_queue *q) { memset(q, 0, sizeof *q); }

void tb_sim_queue_free(tb_sim_queue *q)
{
    free(q->heap);
    free(q->run);
    memset(q, 0, sizeof *q);
}

static inline int before(const tb_sim_event *x, const tb_sim_event *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

/* Append e to the run (its time is no earlier than the run's last). */
static int run_append(tb_sim_queue *q, const tb_sim_event *e)
{
    if (q->run_head > 0 && q->run_end == q->run_cap && q->run_head >= q->run_cap / 2) {
        /* the popped half is free: slide the run down instead of growing */
        memmove(q->run, q->run + q->run_head, (q->run_end - q->run_head) * sizeof *q->run);
        q->run_end -= q->run_head;
        q->run_head = 0;
    }
    TB_CHECK(tb_grow(&q->run, &q->run_cap, q->run_end, sizeof *q->run, 1024));
    q->run[q->run_end++] = *e;
    return TB_OK;
}

int tb_sim_queue_push(tb_sim_queue *q, double t, int type, int rank, uint64_t a)
{
    if (isnan(t)) /* no place in the order (every caller checks its times) */
        return TB_ERR_RANGE;
    tb_sim_event e = {t, q->seq, type, rank, a};
    if (q->run_head == q->run_end || t >= q->run[q->run_end - 1].t) {
        TB_CHECK(run_append(q, &e));
        q->seq++;
        return TB_OK;
    }
    TB_CHECK(tb_grow(&q->heap, &q->cap, q->n, sizeof *q->heap, 1024));
    q->seq++;
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

int tb_sim_queue_pop(tb_sim_queue *q, tb_sim_event *out)
{
    if (q->run_head < q->run_end && (q->n == 0 || before(&q->run[q->run_head], &q->heap[0]))) {
        *out = q->run[q->run_head++];
        if (q->run_head == q->run_end)
            q->run_head = q->run_end = 0;
        q->popped++;
        return 1;
    }
    if (q->n == 0)
        return 0;
    *out = q->heap[0];
    q->popped++;
    size_t n = --q->n;
    if (n == 0)
        return 1;
    tb_sim_event last = q->heap[n];
    tb_sim_event *h = q->heap;
    size_t i = 0;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n)
            break;
        size_t end = c + 4 < n ? c + 4 : n, m = c;
        for (size_t j = c + 1; j < end; j++)
            if (before(&h[j], &h[m]))
                m = j;
        if (!before(&h[m], &last))
            break;
        h[i] = h[m];
        i = m;
    }
    h[i] = last;
    return 1;
}
