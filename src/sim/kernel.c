/*
 * kernel.c - the event queue: a binary min-heap on (time, sequence).
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

static int before(const tb_sim_event *x, const tb_sim_event *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

int tb_sim_queue_push(tb_sim_queue *q, double t, int type, int rank, uint64_t a, void *p)
{
    TB_CHECK(tb_grow(&q->heap, &q->cap, q->n, sizeof *q->heap, 1024));
    tb_sim_event e = {t, q->seq++, type, rank, a, p};
    size_t i = q->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
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
    tb_sim_event last = q->heap[--q->n];
    size_t i = 0, n = q->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(&q->heap[c + 1], &q->heap[c]))
            c++;
        if (!before(&q->heap[c], &last))
            break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    if (n > 0)
        q->heap[i] = last;
    return 1;
}
