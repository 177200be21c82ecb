/*
 * proto.h - the master-worker runtime's messages (internal): one table of
 * tags, each with its name for logs and traces, and the functions that pack
 * and unpack their bodies (proto.c; the layouts are in mw_internal.h).  The
 * numbers are the order of the table, from 1.
 */
#ifndef TB_MW_PROTO_H
#define TB_MW_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "tenbin/core.h"
#include "core/buf_inline.h"
#include "transport/tags.h"

#define TB__MW_TAGS(X)                                                                        \
    X(TASK, "task")           /* master -> worker: a chunk of tasks */                        \
    X(RESULT, "result")       /* worker -> master: the chunk's results */                     \
    X(REQ, "request")         /* master -> master: ask for tasks */                           \
    X(GIVE, "give")           /* master -> master: part of a queue */                         \
    X(REFUSE, "refuse")       /* master -> master: nothing to give */                         \
    X(FWD, "forward")         /* master -> rank 0: results of another master */               \
    X(FAIL, "fail")           /* a task failed: towards rank 0, which stops the run */        \
    X(ABORT, "abort")         /* rank 0 -> masters: stop after a failure */                   \
    X(DONE, "done")           /* static master -> tree parent: its subtree is done */         \
    X(FINISH, "finish")       /* down the masters' tree: the run ends (with a status) */      \
    X(STOP, "stop")           /* master -> workers, along a tree: stop */                     \
    X(MSTART, "master-start") /* dynamic: a worker is promoted to master */                   \
    X(FREE, "free")           /* dynamic: a worker the parent promised is the child's now */  \
    X(RETURN, "return")       /* dynamic: a done child and its workers go back to the parent */\
    X(REDUCE, "reduce")       /* folded partials, along the tree to rank 0 */                 \
    X(HAVE, "have")           /* dynamic: a child that was refused has tasks again */

enum tb__mw_tag {
    TB__MW_TAG_NONE_ = 0,
#define TB__MW_TAG_ENUM(name, str) TB__TAG_##name,
    TB__MW_TAGS(TB__MW_TAG_ENUM)
#undef TB__MW_TAG_ENUM
};

/* "task", "result", ...; "unknown" for a number outside the table. */
static inline const char *tb__mw_tag_name(int tag)
{
    static const char *const names[] = {"unknown", TB__MW_TAGS(TB__TAG_STR)};
    return tb__tag_name(names, sizeof names / sizeof names[0], tag);
}

/*
 * The bodies.  A pack function starts the message afresh in b, except where
 * it says it appends; a message of records added one by one has a _begin,
 * a function per record and an _end.  An unpack function of a whole message
 * takes its bytes; one of a part reads `in` at its position.  They fail
 * with TB_ERR_PARSE when the bytes run out (and only then: what is left
 * over is for the caller to judge).
 */

/* TASK: u32 n, task record * n (records appended by tb__queue_pop_record).
 * TASK and RESULT are on every task's path, so their functions are inline. */
static inline int tb__mw_pack_task_begin(tb_buf *b)
{
    tb__buf_clear(b);
    return tb__buf_put_u32(b, 0);
}
static inline void tb__mw_pack_task_end(tb_buf *b, uint32_t n) { tb__buf_patch_u32(b, 0, n); }
static inline int tb__mw_unpack_task_count(tb_buf *in, uint32_t *n)
{
    return tb__buf_get_u32(in, n);
}
static inline int tb__mw_unpack_task(tb_buf *in, uint64_t *id, const void **data, uint32_t *len)
{
    size_t left = tb__buf_left(in);
    if (TB__BUF_LE && left >= 12) {
        /* The record in one go; pos stays where it was if it is short. */
        const unsigned char *p = in->data + in->pos;
        uint32_t n;
        memcpy(&n, p + 8, 4);
        if (left - 12 < n)
            return TB_ERR_PARSE;
        memcpy(id, p, 8);
        *data = p + 12;
        *len = n;
        in->pos += 12 + (size_t)n;
        return TB_OK;
    }
    TB_CHECK(tb__buf_get_u64(in, id));
    return tb__buf_get_bytes(in, data, len);
}

/* RESULT and FWD: u32 n, result record (u64 id, i32 status, bytes) * n;
 * a RESULT of a timed run (cfg.timed) ends with the worker's times. */
static inline int tb__mw_pack_results_begin(tb_buf *b)
{
    tb__buf_clear(b);
    return tb__buf_put_u32(b, 0);
}
static inline int tb__mw_pack_result(tb_buf *b, uint64_t id, int32_t status, const void *data,
                                     uint32_t len)
{
    if (TB__BUF_LE && tb__buf_room2(b, 16, len) && (len == 0 || data != NULL)) {
        /* The record in one go (one check of the room, not three). */
        unsigned char *p = b->data + b->len;
        memcpy(p, &id, 8);
        memcpy(p + 8, &status, 4);
        memcpy(p + 12, &len, 4);
        if (len > 0)
            tb__copy(p + 16, data, len);
        b->len += 16 + (size_t)len;
        return TB_OK;
    }
    TB_CHECK(tb_buf_pack_u64(b, id));
    TB_CHECK(tb_buf_pack_i32(b, status));
    return tb_buf_pack_bytes(b, data, len);
}
static inline void tb__mw_pack_results_end(tb_buf *b, uint32_t n) { tb__buf_patch_u32(b, 0, n); }
/* Appends f64 wait (for the task message), f64 compute, f64 the sum of the
 * squared task times. */
int tb__mw_pack_result_times(tb_buf *b, double wait, double compute, double sq);
static inline int tb__mw_unpack_results_count(tb_buf *in, uint32_t *n)
{
    return tb__buf_get_u32(in, n);
}
static inline int tb__mw_unpack_result(tb_buf *in, uint64_t *id, int32_t *status,
                                       const void **data, uint32_t *len)
{
    size_t left = tb__buf_left(in);
    if (TB__BUF_LE && left >= 16) {
        /* The record in one go; pos stays where it was if it is short. */
        const unsigned char *p = in->data + in->pos;
        uint32_t n, st;
        memcpy(&n, p + 12, 4);
        if (left - 16 < n)
            return TB_ERR_PARSE;
        memcpy(id, p, 8);
        memcpy(&st, p + 8, 4);
        *status = tb__i32_of(st);
        *data = p + 16;
        *len = n;
        in->pos += 16 + (size_t)n;
        return TB_OK;
    }
    TB_CHECK(tb__buf_get_u64(in, id));
    TB_CHECK(tb__buf_get_i32(in, status));
    return tb__buf_get_bytes(in, data, len);
}
/* The times at the end of a timed RESULT of *len bytes, and its record
 * count; *len becomes the length without them. */
int tb__mw_unpack_result_times(const void *data, size_t *len, uint32_t *n, double *wait,
                               double *compute, double *sq);

/* REQ: u32 workers, and under multi:K (K > 2, `spells`) u32 spell. */
int tb__mw_pack_req(tb_buf *b, uint32_t workers, int spells, uint32_t spell);
int tb__mw_unpack_req(const void *data, size_t len, int spells, uint32_t *workers,
                      uint32_t *spell);

/* FAIL: u64 task, i32 rank, i32 code. */
int tb__mw_pack_fail(tb_buf *b, uint64_t task, int32_t rank, int32_t code);
int tb__mw_unpack_fail(const void *data, size_t len, uint64_t *task, int32_t *rank,
                       int32_t *code);

/* ABORT, HAVE, and REFUSE outside multi:K and the dynamic policies: empty. */
void tb__mw_pack_empty(tb_buf *b);

/* The changes of the master count that DONE and RETURN carry:
 * u32 n, (i32 delta, f64 time) * n.  pack_count appends one change to a
 * list of them; pack_counts appends the list to a message. */
int tb__mw_pack_count(tb_buf *list, int32_t delta, double t);
int tb__mw_pack_counts(tb_buf *b, uint32_t n, const tb_buf *list);
int tb__mw_unpack_counts(tb_buf *in, uint32_t *n);
int tb__mw_unpack_count(tb_buf *in, int32_t *delta, double *t);

/* DONE: u64 sent, then the counts. */
int tb__mw_pack_done(tb_buf *b, uint64_t sent, uint32_t n, const tb_buf *counts);
int tb__mw_unpack_done(tb_buf *in, uint64_t *sent);

/* FINISH: i32 status. */
int tb__mw_pack_finish(tb_buf *b, int32_t status);
int tb__mw_unpack_finish(const void *data, size_t len, int32_t *status);

/* STOP: i32 status, u32 n, i32 rank * n (given as n little-endian i32s). */
int tb__mw_pack_stop(tb_buf *b, int32_t status, const unsigned char *ranks, uint32_t n);
int tb__mw_unpack_stop(const void *data, size_t len, int32_t *status, const unsigned char **ranks,
                       uint32_t *n);

/* FREE: i32 rank. */
int tb__mw_pack_free(tb_buf *b, int32_t rank);
int tb__mw_unpack_free(const void *data, size_t len, int32_t *rank);

/* REDUCE: u8 failed, the partial's bytes (len >= 1). */
int tb__mw_pack_reduce(tb_buf *b, int failed, const void *partial, size_t len);
void tb__mw_unpack_reduce(const void *data, size_t len, int *failed, const void **partial,
                          size_t *plen);

/* Lists of ranks (in MSTART, RETURN, REFUSE and STOP): u32 n, i32 rank * n.
 * pack_rank appends one rank; the count comes first, from the message's
 * own function. */
int tb__mw_pack_rank(tb_buf *b, int32_t rank);
int tb__mw_unpack_ranks(tb_buf *in, uint32_t *n);
int tb__mw_unpack_rank(tb_buf *in, int32_t *rank);

/* multi:K's spells (in REFUSE and GIVE): u32 K, u32 spell * K.  pack_spells
 * appends them; unpack_spells fails with TB_ERR_PROTOCOL unless K of them
 * follow, which unpack_spell then reads one by one. */
int tb__mw_pack_spells(tb_buf *b, const uint32_t *spells, int K);
int tb__mw_unpack_spells(tb_buf *in, int K);
int tb__mw_unpack_spell(tb_buf *in, uint32_t *spell);

/* GIVE: u8 kind, [spells], the queue's give body (tb__queue_give appends
 * it).  pack_give_kind rewrites the kind of a GIVE being built; unpack_give
 * leaves `in` at the byte after the kind. */
int tb__mw_pack_give(tb_buf *b, int kind);
void tb__mw_pack_give_kind(tb_buf *b, int kind);
int tb__mw_unpack_give(const void *data, size_t len, int *kind, tb_buf *in);

/* REFUSE: under multi:K (K > 2) the spells; under dynamic and dynamic:wait
 * a list of ranks, begun empty and counted at its end; else empty
 * (tb__mw_pack_empty). */
int tb__mw_pack_refuse_spells(tb_buf *b, const uint32_t *spells, int K);
int tb__mw_pack_refuse_ranks(tb_buf *b);
void tb__mw_pack_refuse_ranks_end(tb_buf *b, uint32_t n);

/* MSTART: the busy workers the parent frees (a list of ranks), the idle
 * ones (another), u8 fan out at once, the queue's give body.  Built as
 * pack_mstart(nbusy), nbusy ranks, pack_mstart_idle(nidle), nidle ranks,
 * pack_mstart_end(fan), tb__queue_give. */
int tb__mw_pack_mstart(tb_buf *b, uint32_t nbusy);
int tb__mw_pack_mstart_idle(tb_buf *b, uint32_t nidle);
int tb__mw_pack_mstart_end(tb_buf *b, int fan);
int tb__mw_unpack_mstart_end(tb_buf *in, int *fan);

/* RETURN: the idle workers (a list of ranks, begun empty and counted at the
 * end), u64 sent, u8 merged, the counts. */
int tb__mw_pack_return(tb_buf *b);
int tb__mw_pack_return_end(tb_buf *b, uint32_t nidle, uint64_t sent, int merged, uint32_t ncounts,
                           const tb_buf *counts);
int tb__mw_unpack_return_end(tb_buf *in, uint64_t *sent, int *merged);

#endif /* TB_MW_PROTO_H */
