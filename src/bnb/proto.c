/*
 * proto.c - branch-and-bound's messages packed and unpacked, one function
 * each way per message (proto.h has the layouts and the structs).  Every
 * field goes through tb_buf's little-endian packing, in the order of
 * proto.h's table; nothing here decides anything.
 */
#include <string.h>

#include "bnb/proto.h"

/* n zero bytes the receiver ignores (tb_bnb_set_task_pad and
 * tb_bnb_set_sub_pad: the message sizes of a program that ships more). */
static int pad_zeros(tb_buf *m, size_t n)
{
    if (n == 0)
        return TB_OK;
    TB_CHECK(tb_buf_reserve(m, n));
    memset(m->data + m->len, 0, n);
    m->len += n;
    return TB_OK;
}

/* u32 n, the packed subs, the padding. */
static int pack_subs(tb_buf *m, uint32_t n, const tb_buf *subs, size_t pad)
{
    TB_CHECK(tb_buf_pack_u32(m, n));
    TB_CHECK(tb_buf_append(m, subs->data, subs->len));
    return pad_zeros(m, pad);
}

int tb__bnb_pack_task(tb_buf *m, const tb__bnb_task_msg *t, const tb_buf *subs, size_t pad)
{
    tb_buf_clear(m);
    TB_CHECK(tb_buf_pack_u64(m, t->id));
    TB_CHECK(tb_buf_pack_f64(m, t->inc));
    TB_CHECK(tb_buf_pack_u32(m, t->levels));
    return pack_subs(m, t->n, subs, pad);
}

int tb__bnb_unpack_task(tb_buf *in, tb__bnb_task_msg *t)
{
    TB_CHECK(tb_buf_unpack_u64(in, &t->id));
    TB_CHECK(tb_buf_unpack_f64(in, &t->inc));
    TB_CHECK(tb_buf_unpack_u32(in, &t->levels));
    return tb_buf_unpack_u32(in, &t->n);
}

int tb__bnb_pack_result(tb_buf *m, const tb__bnb_result_msg *r, const tb_buf *subs, size_t pad)
{
    tb_buf_clear(m);
    TB_CHECK(tb_buf_pack_u64(m, r->id));
    TB_CHECK(tb_buf_pack_u32(m, r->levels));
    TB_CHECK(tb_buf_pack_u64(m, r->nodes));
    TB_CHECK(tb_buf_pack_f64(m, r->seconds));
    TB_CHECK(tb_buf_pack_f64(m, r->inc));
    TB_CHECK(tb_buf_pack_bytes(m, r->sol, r->sol_len));
    return pack_subs(m, r->n, subs, pad);
}

int tb__bnb_unpack_result(tb_buf *in, tb__bnb_result_msg *r)
{
    TB_CHECK(tb_buf_unpack_u64(in, &r->id));
    TB_CHECK(tb_buf_unpack_u32(in, &r->levels));
    TB_CHECK(tb_buf_unpack_u64(in, &r->nodes));
    TB_CHECK(tb_buf_unpack_f64(in, &r->seconds));
    TB_CHECK(tb_buf_unpack_f64(in, &r->inc));
    TB_CHECK(tb_buf_unpack_bytes(in, &r->sol, &r->sol_len));
    return tb_buf_unpack_u32(in, &r->n);
}

int tb__bnb_pack_wstop(tb_buf *m)
{
    tb_buf_clear(m);
    return TB_OK;
}

int tb__bnb_unpack_wstop(tb_buf *in)
{
    (void)in; /* empty; anything there is ignored, as ever */
    return TB_OK;
}

int tb__bnb_pack_wfinal(tb_buf *m, const tb__bnb_wfinal_msg *f)
{
    tb_buf_clear(m);
    TB_CHECK(tb_buf_pack_u64(m, f->tasks));
    TB_CHECK(tb_buf_pack_u64(m, f->nodes));
    TB_CHECK(tb_buf_pack_f64(m, f->busy));
    TB_CHECK(tb_buf_pack_f64(m, f->idle));
    return tb_buf_pack_f64(m, f->startup_idle);
}

int tb__bnb_unpack_wfinal(tb_buf *in, tb__bnb_wfinal_msg *f)
{
    TB_CHECK(tb_buf_unpack_u64(in, &f->tasks));
    TB_CHECK(tb_buf_unpack_u64(in, &f->nodes));
    TB_CHECK(tb_buf_unpack_f64(in, &f->busy));
    TB_CHECK(tb_buf_unpack_f64(in, &f->idle));
    return tb_buf_unpack_f64(in, &f->startup_idle);
}

int tb__bnb_pack_move(tb_buf *m, uint32_t n, const tb_buf *subs, size_t pad)
{
    tb_buf_clear(m);
    return pack_subs(m, n, subs, pad);
}

int tb__bnb_unpack_move(tb_buf *in, uint32_t *n) { return tb_buf_unpack_u32(in, n); }

int tb__bnb_pack_status(tb_buf *m, const tb__bnb_status_msg *s)
{
    tb_buf_clear(m);
    TB_CHECK(tb_buf_pack_u64(m, s->queued));
    TB_CHECK(tb_buf_pack_u64(m, s->inflight));
    TB_CHECK(tb_buf_pack_f64(m, s->lower));
    TB_CHECK(tb_buf_pack_u64(m, s->tasks));
    TB_CHECK(tb_buf_pack_u64(m, s->nodes));
    TB_CHECK(tb_buf_pack_f64(m, s->busy));
    TB_CHECK(tb_buf_pack_u32(m, s->workers));
    TB_CHECK(tb_buf_pack_u64(m, s->gives_sent));
    TB_CHECK(tb_buf_pack_u64(m, s->moves_got));
    return tb_buf_pack_u8(m, s->hungry);
}

int tb__bnb_unpack_status(tb_buf *in, tb__bnb_status_msg *s)
{
    TB_CHECK(tb_buf_unpack_u64(in, &s->queued));
    TB_CHECK(tb_buf_unpack_u64(in, &s->inflight));
    TB_CHECK(tb_buf_unpack_f64(in, &s->lower));
    TB_CHECK(tb_buf_unpack_u64(in, &s->tasks));
    TB_CHECK(tb_buf_unpack_u64(in, &s->nodes));
    TB_CHECK(tb_buf_unpack_f64(in, &s->busy));
    TB_CHECK(tb_buf_unpack_u32(in, &s->workers));
    TB_CHECK(tb_buf_unpack_u64(in, &s->gives_sent));
    TB_CHECK(tb_buf_unpack_u64(in, &s->moves_got));
    return tb_buf_unpack_u8(in, &s->hungry);
}

int tb__bnb_pack_inc_up(tb_buf *m, double value, const void *sol, uint32_t len)
{
    tb_buf_clear(m);
    TB_CHECK(tb_buf_pack_f64(m, value));
    return tb_buf_pack_bytes(m, sol, len);
}

int tb__bnb_unpack_inc_up(tb_buf *in, double *value, const void **sol, uint32_t *len)
{
    TB_CHECK(tb_buf_unpack_f64(in, value));
    return tb_buf_unpack_bytes(in, sol, len);
}

int tb__bnb_pack_inc_down(tb_buf *m, double value)
{
    tb_buf_clear(m);
    return tb_buf_pack_f64(m, value);
}

int tb__bnb_unpack_inc_down(tb_buf *in, double *value) { return tb_buf_unpack_f64(in, value); }

int tb__bnb_pack_give_req(tb_buf *m, uint64_t want)
{
    tb_buf_clear(m);
    return tb_buf_pack_u64(m, want);
}

int tb__bnb_unpack_give_req(tb_buf *in, uint64_t *want) { return tb_buf_unpack_u64(in, want); }

int tb__bnb_pack_give(tb_buf *m, uint32_t n, const tb_buf *subs, size_t pad)
{
    tb_buf_clear(m);
    return pack_subs(m, n, subs, pad);
}

int tb__bnb_unpack_give(tb_buf *in, uint32_t *n) { return tb_buf_unpack_u32(in, n); }

int tb__bnb_pack_keep(tb_buf *m, uint32_t n, const tb_buf *subs)
{
    tb_buf_clear(m);
    return pack_subs(m, n, subs, 0);
}

int tb__bnb_unpack_keep(tb_buf *in, uint32_t *n) { return tb_buf_unpack_u32(in, n); }

int tb__bnb_pack_ckpt(tb_buf *m) { return tb__bnb_pack_wstop(m); }
int tb__bnb_unpack_ckpt(tb_buf *in) { return tb__bnb_unpack_wstop(in); }
int tb__bnb_pack_ckpt_done(tb_buf *m) { return tb__bnb_pack_wstop(m); }
int tb__bnb_unpack_ckpt_done(tb_buf *in) { return tb__bnb_unpack_wstop(in); }

int tb__bnb_pack_stop(tb_buf *m, uint64_t sent)
{
    tb_buf_clear(m);
    return tb_buf_pack_u64(m, sent);
}

int tb__bnb_unpack_stop(tb_buf *in, uint64_t *sent) { return tb_buf_unpack_u64(in, sent); }

int tb__bnb_pack_final(tb_buf *m, const tb__bnb_final_msg *f)
{
    tb_buf_clear(m);
    TB_CHECK(tb_buf_pack_u64(m, f->sent));
    TB_CHECK(tb_buf_pack_u32(m, f->workers));
    TB_CHECK(tb_buf_pack_u64(m, f->tasks));
    TB_CHECK(tb_buf_pack_u64(m, f->nodes));
    TB_CHECK(tb_buf_pack_f64(m, f->busy));
    TB_CHECK(tb_buf_pack_f64(m, f->idle));
    TB_CHECK(tb_buf_pack_f64(m, f->startup_idle));
    TB_CHECK(tb_buf_pack_u64(m, f->moved_in));
    TB_CHECK(tb_buf_pack_u64(m, f->moved_out));
    return tb_buf_pack_u32(m, f->depth);
}

int tb__bnb_unpack_final(tb_buf *in, tb__bnb_final_msg *f)
{
    TB_CHECK(tb_buf_unpack_u64(in, &f->sent));
    TB_CHECK(tb_buf_unpack_u32(in, &f->workers));
    TB_CHECK(tb_buf_unpack_u64(in, &f->tasks));
    TB_CHECK(tb_buf_unpack_u64(in, &f->nodes));
    TB_CHECK(tb_buf_unpack_f64(in, &f->busy));
    TB_CHECK(tb_buf_unpack_f64(in, &f->idle));
    TB_CHECK(tb_buf_unpack_f64(in, &f->startup_idle));
    TB_CHECK(tb_buf_unpack_u64(in, &f->moved_in));
    TB_CHECK(tb_buf_unpack_u64(in, &f->moved_out));
    return tb_buf_unpack_u32(in, &f->depth);
}
