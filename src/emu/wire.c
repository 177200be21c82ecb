/*
 * wire.c - framed messages over a stream socket (see wire.h).
 */
#include "emu/wire.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

/* Send the iovecs whole (one system call unless the socket takes less). */
static int write_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        /* MSG_NOSIGNAL: a peer that died is an error here, not SIGPIPE. */
        ssize_t w = sendmsg(fd, &mh, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return TB_ERR_IO;
        size_t left = (size_t)w;
        while (n > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + left;
            iov->iov_len -= left;
        }
    }
    return TB_OK;
}

int tb_emu_frame_write(int fd, const tb_buf *b)
{
    if (b->len > UINT32_MAX)
        return TB_ERR_RANGE;
    unsigned char h[4];
    tb_emu_frame_header(b->len, h);
    /* Header and body in one segment: two writes would be two wake-ups of
     * the reader on a crowded machine. */
    struct iovec iov[2] = {{h, 4}, {b->data, b->len}};
    return write_all(fd, iov, b->len > 0 ? 2 : 1);
}

int tb_emu_frame_append(tb_buf *out, const tb_buf *b)
{
    if (b->len > UINT32_MAX)
        return TB_ERR_RANGE;
    unsigned char h[4];
    tb_emu_frame_header(b->len, h);
    TB_CHECK(tb_buf_reserve(out, 4 + b->len));
    memcpy(out->data + out->len, h, 4);
    if (b->len)
        memcpy(out->data + out->len + 4, b->data, b->len);
    out->len += 4 + b->len;
    return TB_OK;
}

long tb_emu_reader_fill(int fd, tb_emu_reader *r, int *closed)
{
    tb_buf *b = &r->raw;
    if (closed)
        *closed = 0;
    if (b->pos > 0) { /* drop what was handed out */
        memmove(b->data, b->data + b->pos, b->len - b->pos);
        b->len -= b->pos;
        b->pos = 0;
    }
    if (b->cap - b->len < 4096 && tb_buf_reserve(b, 65536) != TB_OK)
        return -1;
    for (;;) {
        ssize_t n = recv(fd, b->data + b->len, b->cap - b->len, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n == 0 && closed)
            *closed = b->len == 0;
        if (n <= 0)
            return -1;
        b->len += (size_t)n;
        return (long)n;
    }
}

int tb_emu_reader_next(tb_emu_reader *r, tb_buf *frame, size_t max)
{
    tb_buf *b = &r->raw;
    size_t have = b->len - b->pos;
    if (have < 4)
        return 0;
    const unsigned char *h = b->data + b->pos;
    size_t n = (size_t)h[0] | (size_t)h[1] << 8 | (size_t)h[2] << 16 | (size_t)h[3] << 24;
    if (n > max)
        return TB_ERR_RANGE;
    if (have - 4 < n) {
        /* Room for all of it (the fill that brings the rest compacts). */
        if (tb_buf_reserve(b, 4 + n - have) != TB_OK)
            return TB_ERR_NOMEM;
        return 0;
    }
    tb_buf_view(frame, h + 4, n);
    b->pos += 4 + n;
    return 1;
}

void tb_emu_reader_free(tb_emu_reader *r) { tb_buf_free(&r->raw); }
