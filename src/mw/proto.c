/*
 * proto.c - the bodies of the master-worker runtime's messages: one pack
 * and one unpack function per message (proto.h), all little-endian via
 * tb_buf.  The layouts are listed in mw_internal.h.
 */
#include "tenbin/core.h"

#include "mw/proto.h"
#include "mw/queue.h"

/* ---- RESULT, FWD (the rest are inline in proto.h) -------------------- */

int tb__mw_pack_result_times(tb_buf *b, double wait, double compute, double sq)
{
    TB_CHECK(tb_buf_pack_f64(b, wait));
    TB_CHECK(tb_buf_pack_f64(b, compute));
    return tb_buf_pack_f64(b, sq);
}

int tb__mw_unpack_result_times(const void *data, size_t *len, uint32_t *n, double *wait,
                               double *compute, double *sq)
{
    if (*len < 28)
        return TB_ERR_PARSE;
    tb_buf tail, head;
    *len -= 24;
    tb_buf_view(&tail, (const unsigned char *)data + *len, 24);
    TB_CHECK(tb_buf_unpack_f64(&tail, wait));
    TB_CHECK(tb_buf_unpack_f64(&tail, compute));
    TB_CHECK(tb_buf_unpack_f64(&tail, sq));
    tb_buf_view(&head, data, *len);
    return tb_buf_unpack_u32(&head, n);
}

/* ---- REQ, FAIL, ABORT, HAVE ------------------------------------------- */

int tb__mw_pack_req(tb_buf *b, uint32_t workers, int spells, uint32_t spell)
{
    tb_buf_clear(b);
    TB_CHECK(tb_buf_pack_u32(b, workers));
    return spells ? tb_buf_pack_u32(b, spell) : TB_OK;
}

int tb__mw_unpack_req(const void *data, size_t len, int spells, uint32_t *workers,
                      uint32_t *spell)
{
    tb_buf in;
    tb_buf_view(&in, data, len);
    TB_CHECK(tb_buf_unpack_u32(&in, workers));
    return spells ? tb_buf_unpack_u32(&in, spell) : TB_OK;
}

int tb__mw_pack_fail(tb_buf *b, uint64_t task, int32_t rank, int32_t code)
{
    tb_buf_clear(b);
    TB_CHECK(tb_buf_pack_u64(b, task));
    TB_CHECK(tb_buf_pack_i32(b, rank));
    return tb_buf_pack_i32(b, code);
}

int tb__mw_unpack_fail(const void *data, size_t len, uint64_t *task, int32_t *rank,
                       int32_t *code)
{
    tb_buf in;
    tb_buf_view(&in, data, len);
    TB_CHECK(tb_buf_unpack_u64(&in, task));
    TB_CHECK(tb_buf_unpack_i32(&in, rank));
    return tb_buf_unpack_i32(&in, code);
}

void tb__mw_pack_empty(tb_buf *b) { tb_buf_clear(b); }

/* ---- the counts, DONE, FINISH, STOP ------------------------------------ */

int tb__mw_pack_count(tb_buf *list, int32_t delta, double t)
{
    TB_CHECK(tb_buf_pack_i32(list, delta));
    return tb_buf_pack_f64(list, t);
}

int tb__mw_pack_counts(tb_buf *b, uint32_t n, const tb_buf *list)
{
    TB_CHECK(tb_buf_pack_u32(b, n));
    return tb_buf_append(b, list->data, list->len);
}

int tb__mw_unpack_counts(tb_buf *in, uint32_t *n)
{
    TB_CHECK(tb_buf_unpack_u32(in, n));
    return (size_t)*n * 12 > tb_buf_remaining(in) ? TB_ERR_PARSE : TB_OK;
}

int tb__mw_unpack_count(tb_buf *in, int32_t *delta, double *t)
{
    TB_CHECK(tb_buf_unpack_i32(in, delta));
    return tb_buf_unpack_f64(in, t);
}

int tb__mw_pack_done(tb_buf *b, uint64_t sent, uint32_t n, const tb_buf *counts)
{
    tb_buf_clear(b);
    TB_CHECK(tb_buf_pack_u64(b, sent));
    return tb__mw_pack_counts(b, n, counts);
}

int tb__mw_unpack_done(tb_buf *in, uint64_t *sent) { return tb_buf_unpack_u64(in, sent); }

int tb__mw_pack_finish(tb_buf *b, int32_t status)
{
    tb_buf_clear(b);
    return tb_buf_pack_i32(b, status);
}

int tb__mw_unpack_finish(const void *data, size_t len, int32_t *status)
{
    tb_buf in;
    tb_buf_view(&in, data, len);
    return tb_buf_unpack_i32(&in, status);
}

int tb__mw_pack_stop(tb_buf *b, int32_t status, const unsigned char *ranks, uint32_t n)
{
    tb_buf_clear(b);
    TB_CHECK(tb_buf_pack_i32(b, status));
    TB_CHECK(tb_buf_pack_u32(b, n));
    return tb_buf_append(b, ranks, (size_t)n * 4);
}

int tb__mw_unpack_stop(const void *data, size_t len, int32_t *status, const unsigned char **ranks,
                       uint32_t *n)
{
    tb_buf in;
    tb_buf_view(&in, data, len);
    TB_CHECK(tb_buf_unpack_i32(&in, status));
    TB_CHECK(tb_buf_unpack_u32(&in, n));
    if (tb_buf_remaining(&in) != (size_t)*n * 4)
        return TB_ERR_PARSE;
    *ranks = in.data + in.pos;
    return TB_OK;
}

/* ---- FREE, REDUCE ----------------------------------------------------- */

int tb__mw_pack_free(tb_buf *b, int32_t rank)
{
    tb_buf_clear(b);
    return tb_buf_pack_i32(b, rank);
}

int tb__mw_unpack_free(const void *data, size_t len, int32_t *rank)
{
    tb_buf in;
    tb_buf_view(&in, data, len);
    return tb_buf_unpack_i32(&in, rank);
}

int tb__mw_pack_reduce(tb_buf *b, int failed, const void *partial, size_t len)
{
    tb_buf_clear(b);
    TB_CHECK(tb_buf_pack_u8(b, (uint8_t)(failed != 0)));
    return tb_buf_append(b, partial, len);
}

void tb__mw_unpack_reduce(const void *data, size_t len, int *failed, const void **partial,
                          size_t *plen)
{
    const unsigned char *p = data;
    *failed = p[0] != 0;
    *partial = p + 1;
    *plen = len - 1;
}

/* ---- lists of ranks, spells ------------------------------------------- */

int tb__mw_pack_rank(tb_buf *b, int32_t rank) { return tb_buf_pack_i32(b, rank); }

int tb__mw_unpack_ranks(tb_buf *in, uint32_t *n) { return tb_buf_unpack_u32(in, n); }

int tb__mw_unpack_rank(tb_buf *in, int32_t *rank) { return tb_buf_unpack_i32(in, rank); }

int tb__mw_pack_spells(tb_buf *b, const uint32_t *spells, int K)
{
    TB_CHECK(tb_buf_pack_u32(b, (uint32_t)K));
    for (int k = 0; k < K; k++)
        TB_CHECK(tb_buf_pack_u32(b, spells[k]));
    return TB_OK;
}

int tb__mw_unpack_spells(tb_buf *in, int K)
{
    uint32_t cnt;
    TB_CHECK(tb_buf_unpack_u32(in, &cnt));
    if (cnt != (uint32_t)K || tb_buf_remaining(in) < (size_t)K * 4)
        return TB_ERR_PROTOCOL;
    return TB_OK;
}

int tb__mw_unpack_spell(tb_buf *in, uint32_t *spell) { return tb_buf_unpack_u32(in, spell); }

/* ---- GIVE, REFUSE ----------------------------------------------------- */

int tb__mw_pack_give(tb_buf *b, int kind)
{
    tb_buf_clear(b);
    return tb_buf_pack_u8(b, (uint8_t)kind);
}

void tb__mw_pack_give_kind(tb_buf *b, int kind) { b->data[0] = (unsigned char)kind; }

int tb__mw_unpack_give(const void *data, size_t len, int *kind, tb_buf *in)
{
    if (len < 1)
        return TB_ERR_PARSE;
    *kind = ((const unsigned char *)data)[0];
    tb_buf_view(in, data, len);
    in->pos = 1;
    return TB_OK;
}

int tb__mw_pack_refuse_spells(tb_buf *b, const uint32_t *spells, int K)
{
    tb_buf_clear(b);
    return tb__mw_pack_spells(b, spells, K);
}

int tb__mw_pack_refuse_ranks(tb_buf *b)
{
    tb_buf_clear(b);
    return tb_buf_pack_u32(b, 0);
}

void tb__mw_pack_refuse_ranks_end(tb_buf *b, uint32_t n) { tb__buf_patch_u32(b, 0, n); }

/* ---- MSTART, RETURN --------------------------------------------------- */

int tb__mw_pack_mstart(tb_buf *b, uint32_t nbusy)
{
    tb_buf_clear(b);
    return tb_buf_pack_u32(b, nbusy);
}

int tb__mw_pack_mstart_idle(tb_buf *b, uint32_t nidle) { return tb_buf_pack_u32(b, nidle); }

int tb__mw_pack_mstart_end(tb_buf *b, int fan) { return tb_buf_pack_u8(b, (uint8_t)fan); }

int tb__mw_unpack_mstart_end(tb_buf *in, int *fan)
{
    uint8_t v;
    TB_CHECK(tb_buf_unpack_u8(in, &v));
    *fan = v;
    return TB_OK;
}

int tb__mw_pack_return(tb_buf *b)
{
    tb_buf_clear(b);
    return tb_buf_pack_u32(b, 0);
}

int tb__mw_pack_return_end(tb_buf *b, uint32_t nidle, uint64_t sent, int merged, uint32_t ncounts,
                           const tb_buf *counts)
{
    tb__buf_patch_u32(b, 0, nidle);
    TB_CHECK(tb_buf_pack_u64(b, sent));
    TB_CHECK(tb_buf_pack_u8(b, (uint8_t)merged));
    return tb__mw_pack_counts(b, ncounts, counts);
}

int tb__mw_unpack_return_end(tb_buf *in, uint64_t *sent, int *merged)
{
    uint8_t v;
    TB_CHECK(tb_buf_unpack_u64(in, sent));
    TB_CHECK(tb_buf_unpack_u8(in, &v));
    *merged = v;
    return TB_OK;
}
