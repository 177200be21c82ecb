/*
 * queue.h - a master's task queue (internal).
 *
 * Tasks are either explicit (id + bytes) or generator ranges [lo, hi) whose
 * bytes are made on demand.  Explicit payloads live contiguously in one arena
 * in queue order, so an entry costs 16 bytes (id, offset) beyond its payload:
 * the length is the distance to the next offset.  Tasks leave from the head
 * (to workers) or from the tail (to another master).
 *
 * Task records on the wire, shared by the task, give and result messages:
 *   task:   u64 id, u32 len, bytes
 *   result: u64 id, i32 status, u32 len, bytes
 */
#ifndef TB_MW_QUEUE_H
#define TB_MW_QUEUE_H

#include <stdint.h>

#include "tenbin/core.h"
#include "tenbin/mw.h"
#include "core/buf_inline.h"

typedef struct tb__range {
    uint64_t lo, hi;
} tb__range;

typedef struct tb__queue {
    /* explicit tasks: ids[head..tail), payload i = arena[off[i], off[i+1]) with
     * off[tail] == arena_len */
    uint64_t *ids;
    uint64_t *off;   /* tail+1 entries in use */
    size_t head, tail, cap;
    unsigned char *arena;
    size_t arena_head, arena_len, arena_cap;
    /* generator ranges, taken after the explicit tasks */
    tb__range *ranges;
    size_t nranges, capranges;
    uint64_t nrange_tasks;
    tb_mw_gen_fn gen;
    void *gen_ctx;
    int gen_error;   /* code of the last generator failure */
} tb__queue;

/* The largest message the runtime builds (tasks, results, batches): far
 * below MPI's 2 GiB count limit.  A single task or result may not exceed it. */
#define TB__MW_MSG_MAX ((size_t)1 << 30)

void tb__queue_init(tb__queue *q, tb_mw_gen_fn gen, void *gen_ctx);
void tb__queue_free(tb__queue *q);
int tb__queue_reserve(tb__queue *q, uint64_t ntasks, size_t bytes);
static inline uint64_t tb__queue_count(const tb__queue *q)
{
    return (q->tail - q->head) + q->nrange_tasks;
}
/* Drop every task (after a failure). */
void tb__queue_clear(tb__queue *q);
int tb__queue_push(tb__queue *q, uint64_t id, const void *data, size_t len);
int tb__queue_push_range(tb__queue *q, uint64_t lo, uint64_t hi);
/*
 * Pop the head task and append it to msg as a task record.  If the generator
 * fails, msg is left as it was, *id names the task, q->gen_error holds the
 * generator's code and TB_ERR_TASK is returned (the task is consumed: the
 * run fails).
 */
int tb__queue_pop_record(tb__queue *q, tb_buf *msg, uint64_t *id);
/*
 * Move up to n tasks from the tail into a give message, stopping before the
 * message would pass max_bytes (at least one task moves if any is left):
 *   u32 nranges, (u64 lo, u64 hi)*, u32 ntasks, task record*
 * *given (may be NULL) gets the number moved.
 */
int tb__queue_give(tb__queue *q, uint64_t n, size_t max_bytes, tb_buf *msg, uint64_t *given);
/* Add the tasks of a give message (at the tail). */
int tb__queue_take(tb__queue *q, const void *data, size_t len);

/* Drop the explicit tasks whose id has its bit set in marked (a task done
 * in an earlier run); order kept. */
void tb__queue_drop_marked(tb__queue *q, const unsigned char *marked);
/* Queue the generator's tasks [0, n) whose bit is not set in marked, as
 * ranges. */
int tb__queue_push_unmarked(tb__queue *q, uint64_t n, const unsigned char *marked);

#endif /* TB_MW_QUEUE_H */
