/*
 * kernel.c - the event queue: a 4-ary min-heap on (time, sequence).
 *
 * Four children to a node: half the depth of a binary heap, and a node's
 * children (4 x 32 bytes, from index 4i + 1) lie within three cache lines,
 * so a pop touches fewer lines on its way down.  The order (time, then sequence number) is total, so the
 * events come out in the same order whatever the heap's shape.
 */
#include "tenbin/core.h"

#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

void tb_sim_queue_init(tb_sim_queue *q) { memset(q, 0, sizeof *q); }

void tb_sim_queue_free(tb_sim_queue *q)
{
    free(q->heap);
    memset(q, 0, sizeof *q);
}

static inline int before(const tb_sim_event *x, const tb_sim_event *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

int tb_sim_queue_push(tb_sim_queue *q, double t, int type, int rank, uint64_t a)
{
    TB_CHECK(tb_grow(&q->heap, &q->cap, q->n, sizeof *q->heap, 1024));
    tb_sim_event e = {t, q->seq++, type, rank, a};
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
