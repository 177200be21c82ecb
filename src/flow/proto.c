/*
 * proto.c - pack and unpack each message of `tenbin flow run` (proto.h has
 * the layouts).
 */
#include "flow/proto.h"

int tb__flow_pack_run(tb_buf *m, uint32_t task, uint32_t attempt, uint64_t iters)
{
    tb_buf_clear(m);
    TB_CHECK(tb_buf_pack_u32(m, task));
    TB_CHECK(tb_buf_pack_u32(m, attempt));
    return tb_buf_pack_u64(m, iters);
}

int tb__flow_unpack_run(tb_buf *in, uint32_t *task, uint32_t *attempt, uint64_t *iters)
{
    TB_CHECK(tb_buf_unpack_u32(in, task));
    TB_CHECK(tb_buf_unpack_u32(in, attempt));
    return tb_buf_unpack_u64(in, iters);
}

int tb__flow_pack_push(tb_buf *m, uint32_t file, int32_t dst)
{
    tb_buf_clear(m);
    TB_CHECK(tb_buf_pack_u32(m, file));
    return tb_buf_pack_i32(m, dst);
}

int tb__flow_unpack_push(tb_buf *in, uint32_t *file, int32_t *dst)
{
    TB_CHECK(tb_buf_unpack_u32(in, file));
    return tb_buf_unpack_i32(in, dst);
}

int tb__flow_pack_empty(tb_buf *m)
{
    tb_buf_clear(m);
    return TB_OK;
}

int tb__flow_pack_file(tb_buf *m, uint32_t file)
{
    tb_buf_clear(m);
    return tb_buf_pack_u32(m, file);
}

int tb__flow_unpack_file(tb_buf *in, uint32_t *file) { return tb_buf_unpack_u32(in, file); }

int tb__flow_pack_fdata(tb_buf *m, uint32_t file, const void *chunk, size_t n)
{
    tb_buf_clear(m);
    TB_CHECK(tb_buf_pack_u32(m, file));
    return tb_buf_append(m, chunk, n);
}

int tb__flow_pack_fend(tb_buf *m, uint32_t file, uint64_t bytes, uint64_t hash)
{
    tb_buf_clear(m);
    TB_CHECK(tb_buf_pack_u32(m, file));
    TB_CHECK(tb_buf_pack_u64(m, bytes));
    return tb_buf_pack_u64(m, hash);
}

int tb__flow_unpack_fend_tail(tb_buf *in, uint64_t *bytes, uint64_t *hash)
{
    TB_CHECK(tb_buf_unpack_u64(in, bytes));
    return tb_buf_unpack_u64(in, hash);
}

int tb__flow_pack_done(tb_buf *m, const tb__flow_done_msg *d)
{
    tb_buf_clear(m);
    TB_CHECK(tb_buf_pack_u32(m, d->task));
    TB_CHECK(tb_buf_pack_u32(m, d->attempt));
    TB_CHECK(tb_buf_pack_i32(m, d->exit_code));
    TB_CHECK(tb_buf_pack_i32(m, d->signo));
    TB_CHECK(tb_buf_pack_f64(m, d->seconds));
    return tb_buf_pack_bytes(m, d->msg, d->msglen);
}

int tb__flow_unpack_done(tb_buf *in, tb__flow_done_msg *d)
{
    TB_CHECK(tb_buf_unpack_u32(in, &d->task));
    TB_CHECK(tb_buf_unpack_u32(in, &d->attempt));
    TB_CHECK(tb_buf_unpack_i32(in, &d->exit_code));
    TB_CHECK(tb_buf_unpack_i32(in, &d->signo));
    TB_CHECK(tb_buf_unpack_f64(in, &d->seconds));
    return tb_buf_unpack_bytes(in, &d->msg, &d->msglen);
}

int tb__flow_pack_have(tb_buf *m, uint32_t file, uint64_t bytes)
{
    tb_buf_clear(m);
    TB_CHECK(tb_buf_pack_u32(m, file));
    return tb_buf_pack_u64(m, bytes);
}

int tb__flow_unpack_have(tb_buf *in, uint32_t *file, uint64_t *bytes)
{
    TB_CHECK(tb_buf_unpack_u32(in, file));
    return tb_buf_unpack_u64(in, bytes);
}
