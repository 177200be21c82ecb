/*
 * buf_inline.h - the fast paths of tb_buf's append, pack and unpack, inline
 * for the library's hot paths (the master-worker runtime packs and unpacks
 * several fields per task: as calls into buf.c they cost about as much as
 * the MPI calls around them, docs/benchmarks.md "Where the time goes").
 * Same wire format and the same errors as the tb_buf_* functions, which
 * they fall back to whenever the fast path does not apply (a buffer that
 * must grow, a view, a big-endian host).
 */
#ifndef TB_CORE_BUF_INLINE_H
#define TB_CORE_BUF_INLINE_H

#include <stdint.h>
#include <string.h>

#include "tenbin/core.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TB__BUF_LE 1
#else
#define TB__BUF_LE 0
#endif

/* memcpy of n bytes, without a call into the C library when n <= 16 (a
 * task's or a result's bytes are often a few words). */
static inline void tb__copy(unsigned char *to, const void *from, size_t n)
{
    const unsigned char *f = from;
    if (n >= 8 && n <= 16) {
        memcpy(to, f, 8);
        memcpy(to + n - 8, f + n - 8, 8);
    } else if (n >= 4 && n < 8) {
        memcpy(to, f, 4);
        memcpy(to + n - 4, f + n - 4, 4);
    } else {
        memcpy(to, f, n);
    }
}

/* Room for n more bytes without growing (never for a view: cap 0). */
static inline int tb__buf_room(const tb_buf *b, size_t n)
{
    return b->cap != 0 && n <= b->cap - b->len;
}

/* tb_buf_clear. */
static inline void tb__buf_clear(tb_buf *b)
{
    b->len = 0;
    b->pos = 0;
}

/* tb_buf_view. */
static inline void tb__buf_view(tb_buf *b, const void *data, size_t len)
{
    b->data = (unsigned char *)(uintptr_t)data;
    b->len = data != NULL ? len : 0;
    b->cap = 0;
    b->pos = 0;
}

/* tb_buf_init. */
static inline void tb__buf_init(tb_buf *b)
{
    b->data = NULL;
    b->len = b->cap = b->pos = 0;
}

/* Room for head + n more bytes, without the sum wrapping where size_t is
 * 32 bits. */
static inline int tb__buf_room2(const tb_buf *b, size_t head, size_t n)
{
    return tb__buf_room(b, head) && n <= b->cap - b->len - head;
}

static inline int tb__buf_put(tb_buf *b, const void *data, size_t n)
{
    if (n == 0 || !tb__buf_room(b, n) || data == NULL)
        return tb_buf_append(b, data, n);
    tb__copy(b->data + b->len, data, n);
    b->len += n;
    return TB_OK;
}

static inline int tb__buf_put_u32(tb_buf *b, uint32_t v)
{
    if (!TB__BUF_LE || !tb__buf_room(b, 4))
        return tb_buf_pack_u32(b, v);
    memcpy(b->data + b->len, &v, 4);
    b->len += 4;
    return TB_OK;
}

static inline int tb__buf_put_u64(tb_buf *b, uint64_t v)
{
    if (!TB__BUF_LE || !tb__buf_room(b, 8))
        return tb_buf_pack_u64(b, v);
    memcpy(b->data + b->len, &v, 8);
    b->len += 8;
    return TB_OK;
}

static inline int tb__buf_put_i32(tb_buf *b, int32_t v)
{
    return tb__buf_put_u32(b, (uint32_t)v); /* two's complement, as tb_buf_pack_i32 */
}

/* u32 length, then the bytes (tb_buf_pack_bytes). */
static inline int tb__buf_put_bytes(tb_buf *b, const void *data, uint32_t n)
{
    if (!TB__BUF_LE || !tb__buf_room2(b, 4, n) || (n > 0 && data == NULL))
        return tb_buf_pack_bytes(b, data, n);
    memcpy(b->data + b->len, &n, 4);
    if (n > 0)
        tb__copy(b->data + b->len + 4, data, n);
    b->len += 4 + (size_t)n;
    return TB_OK;
}

/* Bytes that can be read at pos (0 when pos is past len). */
static inline size_t tb__buf_left(const tb_buf *b)
{
    return b->pos <= b->len ? b->len - b->pos : 0;
}

static inline int tb__buf_get_u32(tb_buf *b, uint32_t *v)
{
    if (!TB__BUF_LE)
        return tb_buf_unpack_u32(b, v);
    if (tb__buf_left(b) < 4)
        return TB_ERR_PARSE;
    memcpy(v, b->data + b->pos, 4);
    b->pos += 4;
    return TB_OK;
}

static inline int tb__buf_get_u64(tb_buf *b, uint64_t *v)
{
    if (!TB__BUF_LE)
        return tb_buf_unpack_u64(b, v);
    if (tb__buf_left(b) < 8)
        return TB_ERR_PARSE;
    memcpy(v, b->data + b->pos, 8);
    b->pos += 8;
    return TB_OK;
}

/* The int32_t whose two's complement bit pattern is u (portably). */
static inline int32_t tb__i32_of(uint32_t u)
{
    return u <= INT32_MAX ? (int32_t)u : (int32_t)(u - UINT32_C(0x80000000)) + INT32_MIN;
}

static inline int tb__buf_get_i32(tb_buf *b, int32_t *v)
{
    uint32_t u;
    TB_CHECK(tb__buf_get_u32(b, &u));
    *v = tb__i32_of(u);
    return TB_OK;
}

/* A u32 length and a pointer to that many bytes in place; pos does not
 * move when they are not all there (tb_buf_unpack_bytes). */
static inline int tb__buf_get_bytes(tb_buf *b, const void **data, uint32_t *n)
{
    if (!TB__BUF_LE)
        return tb_buf_unpack_bytes(b, data, n);
    uint32_t len;
    size_t left = tb__buf_left(b);
    if (left < 4)
        return TB_ERR_PARSE;
    memcpy(&len, b->data + b->pos, 4);
    if (left - 4 < len)
        return TB_ERR_PARSE;
    *data = b->data + b->pos + 4;
    *n = len;
    b->pos += 4 + (size_t)len;
    return TB_OK;
}

/* Overwrite 4 bytes at `at` (< len) with v, little-endian: a count written
 * as 0 before the records it counts. */
static inline void tb__buf_patch_u32(tb_buf *b, size_t at, uint32_t v)
{
    if (TB__BUF_LE) {
        memcpy(b->data + at, &v, 4);
        return;
    }
    for (int i = 0; i < 4; i++)
        b->data[at + (size_t)i] = (unsigned char)(v >> (8 * i));
}

#endif /* TB_CORE_BUF_INLINE_H */
