/*
 * queue.c - a master's task queue: explicit tasks in an arena plus generator
 * ranges.  See queue.h for the layout and the wire records.
 */
#include "tenbin/core.h"

#include <stdlib.h>
#include <string.h>

#include "mw/queue.h"

void tb__queue_init(tb__queue *q, tb_mw_gen_fn gen, void *gen_ctx)
{
    memset(q, 0, sizeof *q);
    q->gen = gen;
    q->gen_ctx = gen_ctx;
}

void tb__queue_free(tb__queue *q)
{
    free(q->ids);
    free(q->off);
    free(q->arena);
    free(q->ranges);
    memset(q, 0, sizeof *q);
}


void tb__queue_clear(tb__queue *q)
{
    q->head = q->tail = 0;
    q->arena_head = q->arena_len = 0;
    if (q->off)
        q->off[0] = 0;
    q->nranges = 0;
    q->nrange_tasks = 0;
}

/* Move the live part of the entry arrays and the arena to the front. */
static void compact(tb__queue *q)
{
    size_t n = q->tail - q->head;
    if (q->head > 0) {
        memmove(q->ids, q->ids + q->head, n * sizeof *q->ids);
        memmove(q->off, q->off + q->head, (n + 1) * sizeof *q->off);
        q->head = 0;
        q->tail = n;
    }
    if (q->arena_head > 0) {
        size_t live = q->arena_len - q->arena_head;
        memmove(q->arena, q->arena + q->arena_head, live);
        for (size_t i = 0; i <= n; i++)
            q->off[i] -= q->arena_head;
        q->arena_len = live;
        q->arena_head = 0;
    }
}

void tb__queue_drop_marked(tb__queue *q, const unsigned char *marked)
{
    compact(q);
    size_t k = 0;
    uint64_t at = 0;
    for (size_t i = 0; i < q->tail; i++) {
        uint64_t id = q->ids[i], lo = q->off[i], len = q->off[i + 1] - lo;
        if (marked[id / 8] >> (id % 8) & 1)
            continue;
        memmove(q->arena + at, q->arena + lo, len);
        q->ids[k] = id;
        q->off[k] = at;
        at += len;
        k++;
    }
    q->tail = k;
    q->off[k] = at;
    q->arena_len = at;
}

int tb__queue_push_unmarked(tb__queue *q, uint64_t n, const unsigned char *marked)
{
    uint64_t lo = 0;
    while (lo < n) {
        while (lo < n && (marked[lo / 8] >> (lo % 8) & 1))
            lo++;
        uint64_t hi = lo;
        while (hi < n && !(marked[hi / 8] >> (hi % 8) & 1))
            hi++;
        TB_CHECK(tb__queue_push_range(q, lo, hi));
        lo = hi;
    }
    return TB_OK;
}

static int grow_entries(tb__queue *q, size_t need)
{
    if (need <= q->cap)
        return TB_OK;
    size_t cap = q->cap ? q->cap : 64;
    while (cap < need)
        cap = cap / 2 * 3 + 1; /* 1.5x keeps the slack within the overhead budget */
    uint64_t *ids = realloc(q->ids, cap * sizeof *ids);
    if (!ids)
        return TB_ERR_NOMEM;
    q->ids = ids;
    uint64_t *off = realloc(q->off, (cap + 1) * sizeof *off);
    if (!off)
        return TB_ERR_NOMEM;
    if (q->cap == 0)
        off[0] = 0;
    q->off = off;
    q->cap = cap;
    return TB_OK;
}

static int grow_arena(tb__queue *q, size_t need)
{
    if (need <= q->arena_cap)
        return TB_OK;
    size_t cap = q->arena_cap ? q->arena_cap : 4096;
    while (cap < need) {
        if (cap > SIZE_MAX / 2)
            return TB_ERR_NOMEM;
        cap = cap / 2 * 3 + 1;
    }
    unsigned char *a = realloc(q->arena, cap);
    if (!a)
        return TB_ERR_NOMEM;
    q->arena = a;
    q->arena_cap = cap;
    return TB_OK;
}

int tb__queue_reserve(tb__queue *q, uint64_t ntasks, size_t bytes)
{
    compact(q);
    TB_CHECK(grow_entries(q, q->tail + (size_t)ntasks));
    return grow_arena(q, q->arena_len + bytes);
}

int tb__queue_push(tb__queue *q, uint64_t id, const void *data, size_t len)
{
    if (q->tail == q->cap || q->arena_len + len > q->arena_cap) {
        /* Reclaim the consumed front before growing. */
        if (q->head > q->cap / 4 || q->arena_head > q->arena_cap / 4)
            compact(q);
        TB_CHECK(grow_entries(q, q->tail + 1));
        TB_CHECK(grow_arena(q, q->arena_len + len));
    }
    if (len > 0)
        memcpy(q->arena + q->arena_len, data, len);
    q->ids[q->tail] = id;
    q->arena_len += len;
    q->tail++;
    q->off[q->tail] = q->arena_len;
    return TB_OK;
}

int tb__queue_push_range(tb__queue *q, uint64_t lo, uint64_t hi)
{
    if (hi <= lo)
        return TB_OK;
    if (!q->gen)
        return TB_ERR_STATE;
    TB_CHECK(tb_grow(&q->ranges, &q->capranges, q->nranges, sizeof *q->ranges, 4));
    q->ranges[q->nranges++] = (tb__range){lo, hi};
    q->nrange_tasks += hi - lo;
    return TB_OK;
}

int tb__queue_pop_record(tb__queue *q, tb_buf *msg, uint64_t *id)
{
    if (q->head < q->tail) {
        size_t i = q->head;
        size_t len = (size_t)(q->off[i + 1] - q->off[i]);
        *id = q->ids[i];
        TB_CHECK(tb__buf_put_u64(msg, *id));
        TB_CHECK(tb__buf_put_bytes(msg, q->arena + q->off[i], (uint32_t)len));
        q->head++;
        q->arena_head = (size_t)q->off[q->head];
        if (q->head == q->tail) {
            q->head = q->tail = 0;
            q->arena_head = q->arena_len = 0;
            q->off[0] = 0;
        }
        return TB_OK;
    }
    if (q->nranges == 0)
        return TB_ERR_STATE;
    tb__range *r = &q->ranges[0];
    *id = r->lo++;
    q->nrange_tasks--;
    if (r->lo == r->hi) {
        memmove(q->ranges, q->ranges + 1, (q->nranges - 1) * sizeof *q->ranges);
        q->nranges--;
    }
    size_t start = msg->len;
    TB_CHECK(tb__buf_put_u64(msg, *id));
    size_t at = msg->len;
    TB_CHECK(tb__buf_put_u32(msg, 0));
    int rc = q->gen(q->gen_ctx, *id, msg);
    size_t len = msg->len - at - 4;
    if (rc == TB_OK && len > TB__MW_MSG_MAX)
        rc = TB_ERR_RANGE;
    if (rc != TB_OK) {
        msg->len = start;
        q->gen_error = rc;
        return TB_ERR_TASK;
    }
    tb__buf_patch_u32(msg, at, (uint32_t)len);
    return TB_OK;
}

int tb__queue_give(tb__queue *q, uint64_t n, size_t max_bytes, tb_buf *msg, uint64_t *given)
{
    uint64_t want = n;
    /* Ranges first: a range costs 16 bytes however many tasks it holds. */
    size_t at = msg->len;
    TB_CHECK(tb_buf_pack_u32(msg, 0));
    uint32_t nr = 0;
    while (n > 0 && q->nranges > 0) {
        tb__range *r = &q->ranges[q->nranges - 1];
        uint64_t k = r->hi - r->lo < n ? r->hi - r->lo : n;
        TB_CHECK(tb_buf_pack_u64(msg, r->hi - k));
        TB_CHECK(tb_buf_pack_u64(msg, r->hi));
        r->hi -= k;
        q->nrange_tasks -= k;
        n -= k;
        nr++;
        if (r->hi == r->lo)
            q->nranges--;
    }
    tb__buf_patch_u32(msg, at, nr);
    uint64_t avail = q->tail - q->head;
    uint64_t k = n < avail ? n : avail;
    if (k > UINT32_MAX)
        k = UINT32_MAX;
    /* Byte budget: records are 12 bytes plus the payload. */
    size_t used = msg->len + 4;
    uint64_t fit = 0;
    while (fit < k) {
        size_t i = q->tail - 1 - (size_t)fit;
        size_t rec = 12 + (size_t)(q->off[i + 1] - q->off[i]);
        if ((fit > 0 || want > n) && used + rec > max_bytes)
            break;
        used += rec;
        fit++;
    }
    k = fit;
    if (given)
        *given = want - n + k;
    TB_CHECK(tb_buf_pack_u32(msg, (uint32_t)k));
    size_t first = q->tail - (size_t)k;
    for (size_t i = first; i < q->tail; i++) {
        TB_CHECK(tb_buf_pack_u64(msg, q->ids[i]));
        TB_CHECK(tb_buf_pack_bytes(msg, q->arena + q->off[i],
                                   (uint32_t)(q->off[i + 1] - q->off[i])));
    }
    if (k == 0)
        return TB_OK;
    q->tail = first;
    q->arena_len = (size_t)q->off[first];
    if (q->head == q->tail) {
        q->head = q->tail = 0;
        q->arena_head = q->arena_len = 0;
        q->off[0] = 0;
    }
    return TB_OK;
}

int tb__queue_take(tb__queue *q, const void *data, size_t len)
{
    tb_buf in;
    tb_buf_view(&in, data, len);
    uint32_t nr = 0, nt = 0;
    TB_CHECK(tb_buf_unpack_u32(&in, &nr));
    for (uint32_t i = 0; i < nr; i++) {
        uint64_t lo, hi;
        TB_CHECK(tb_buf_unpack_u64(&in, &lo));
        TB_CHECK(tb_buf_unpack_u64(&in, &hi));
        TB_CHECK(tb__queue_push_range(q, lo, hi));
    }
    TB_CHECK(tb_buf_unpack_u32(&in, &nt));
    for (uint32_t i = 0; i < nt; i++) {
        uint64_t id;
        const void *p;
        uint32_t n;
        TB_CHECK(tb_buf_unpack_u64(&in, &id));
        TB_CHECK(tb_buf_unpack_bytes(&in, &p, &n));
        TB_CHECK(tb__queue_push(q, id, p, n));
    }
    return tb_buf_remaining(&in) == 0 ? TB_OK : TB_ERR_PARSE;
}
