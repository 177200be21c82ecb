/*
 * buf.c - growable byte buffers; packing is explicit little-endian so the
 * wire format does not depend on the host.
 */
#include "tenbin/core.h"

#include "core/buf_inline.h"

#include <stdlib.h>
#include <string.h>

#define MIN_CAP 64

void tb_buf_init(tb_buf *b) { tb__buf_init(b); }

/* cap == 0 with data set is a view: the memory is not ours. */
void tb_buf_free(tb_buf *b)
{
    if (b->cap != 0)
        free(b->data);
    tb_buf_init(b);
}

static int is_view(const tb_buf *b) { return b->cap == 0 && b->data != NULL; }

int tb_buf_reserve(tb_buf *b, size_t extra)
{
    if (is_view(b))
        return TB_ERR_STATE;
    if (extra > SIZE_MAX - b->len)
        return TB_ERR_RANGE;
    size_t need = b->len + extra;
    if (need <= b->cap)
        return TB_OK;
    /* Doubling keeps appends amortised O(1); fall back to the exact need
     * when doubling would overflow. */
    size_t cap = b->cap < MIN_CAP ? MIN_CAP : b->cap;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    unsigned char *p = realloc(b->data, cap);
    if (p == NULL)
        return TB_ERR_NOMEM;
    b->data = p;
    b->cap = cap;
    return TB_OK;
}

void tb_buf_clear(tb_buf *b) { tb__buf_clear(b); }

/* The cast drops const: a view is only read (appends are refused). */
void tb_buf_view(tb_buf *b, const void *data, size_t len) { tb__buf_view(b, data, len); }

int tb_buf_append(tb_buf *b, const void *data, size_t n)
{
    if (n > 0 && data == NULL)
        return TB_ERR_INVALID;
    /* The reserve only when the room is not there (a work function's
     * result is appended once per task). */
    if (b->cap == 0 || n > b->cap - b->len)
        TB_CHECK(tb_buf_reserve(b, n));
    if (n > 0)
        tb__copy(b->data + b->len, data, n);
    b->len += n;
    return TB_OK;
}

/* Formats in place; the text is followed by a NUL that is not counted in
 * len, so a buffer built only by printf is also a C string. */
int tb_buf_printf(tb_buf *b, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    int rc = n < 0 ? TB_ERR_INVALID : tb_buf_reserve(b, (size_t)n + 1);
    if (rc == TB_OK) {
        vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap2);
        b->len += (size_t)n;
    }
    va_end(ap2);
    return rc;
}

static int pack_le(tb_buf *b, uint64_t v, size_t width)
{
    if (b->cap < width || b->cap - width < b->len) /* also true for views */
        TB_CHECK(tb_buf_reserve(b, width));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* The host order is the wire order: one store (this is on the
     * master-worker hot path, several times per task). */
    memcpy(b->data + b->len, &v, width);
#else
    for (size_t i = 0; i < width; i++)
        b->data[b->len + i] = (unsigned char)(v >> (8 * i));
#endif
    b->len += width;
    return TB_OK;
}

/* Reads without moving pos when the buffer is short. */
static int unpack_le(tb_buf *b, uint64_t *v, size_t width)
{
    if (b->pos > b->len || tb_buf_remaining(b) < width)
        return TB_ERR_PARSE;
    uint64_t x = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(&x, b->data + b->pos, width);
#else
    for (size_t i = 0; i < width; i++)
        x |= (uint64_t)b->data[b->pos + i] << (8 * i);
#endif
    b->pos += width;
    *v = x;
    return TB_OK;
}

int tb_buf_pack_u8(tb_buf *b, uint8_t v) { return pack_le(b, v, 1); }
int tb_buf_pack_u32(tb_buf *b, uint32_t v) { return pack_le(b, v, 4); }
int tb_buf_pack_u64(tb_buf *b, uint64_t v) { return pack_le(b, v, 8); }
/* Two's complement bit pattern: the conversion to uint32_t is defined. */
int tb_buf_pack_i32(tb_buf *b, int32_t v) { return pack_le(b, (uint32_t)v, 4); }

int tb_buf_pack_f64(tb_buf *b, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return pack_le(b, bits, 8);
}

int tb_buf_pack_bytes(tb_buf *b, const void *data, uint32_t n)
{
    /* Reserve both parts first so a failure leaves the buffer unchanged. */
    if (n > 0 && data == NULL)
        return TB_ERR_INVALID;
    /* 4 + n cannot wrap where size_t is wider than 32 bits; elsewhere the
     * append below still refuses an overflowing size. */
    TB_CHECK(tb_buf_reserve(b, 4 + (size_t)n));
    TB_CHECK(tb_buf_pack_u32(b, n));
    return tb_buf_append(b, data, n);
}

int tb_buf_unpack_u8(tb_buf *b, uint8_t *v)
{
    uint64_t x;
    TB_CHECK(unpack_le(b, &x, 1));
    *v = (uint8_t)x;
    return TB_OK;
}

int tb_buf_unpack_u32(tb_buf *b, uint32_t *v)
{
    uint64_t x;
    TB_CHECK(unpack_le(b, &x, 4));
    *v = (uint32_t)x;
    return TB_OK;
}

int tb_buf_unpack_u64(tb_buf *b, uint64_t *v) { return unpack_le(b, v, 8); }

/* Portable inverse of the two's complement packing (no implementation-
 * defined unsigned-to-signed conversion). */
int tb_buf_unpack_i32(tb_buf *b, int32_t *v)
{
    uint32_t u;
    TB_CHECK(tb_buf_unpack_u32(b, &u));
    *v = tb__i32_of(u);
    return TB_OK;
}

int tb_buf_unpack_f64(tb_buf *b, double *v)
{
    uint64_t bits;
    TB_CHECK(unpack_le(b, &bits, 8));
    memcpy(v, &bits, sizeof *v);
    return TB_OK;
}

int tb_buf_unpack_bytes(tb_buf *b, const void **data, uint32_t *n)
{
    size_t start = b->pos;
    uint32_t len;
    TB_CHECK(tb_buf_unpack_u32(b, &len));
    if (tb_buf_remaining(b) < len) {
        b->pos = start;
        return TB_ERR_PARSE;
    }
    *data = b->data != NULL ? (const void *)(b->data + b->pos) : NULL;
    *n = len;
    b->pos += len;
    return TB_OK;
}

/* A JSON string literal: quotes, backslashes and control characters are
 * escaped; other bytes (UTF-8) pass through. */
int tb_buf_json_string(tb_buf *out, const char *s)
{
    TB_CHECK(tb_buf_append(out, "\"", 1));
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        const char *esc = NULL;
        switch (*p) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default: break;
        }
        if (esc != NULL)
            TB_CHECK(tb_buf_append(out, esc, 2));
        else if (*p < 0x20)
            TB_CHECK(tb_buf_printf(out, "\\u%04x", (unsigned)*p));
        else
            TB_CHECK(tb_buf_append(out, p, 1));
    }
    return tb_buf_append(out, "\"", 1);
}
