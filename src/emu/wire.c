/*
 * wire.c - framed messages over a stream socket (see wire.h).
 */
#include "emu/wire.h"

#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

static int write_all(int fd, const void *p, size_t n)
{
    const unsigned char *c = p;
    while (n > 0) {
        /* MSG_NOSIGNAL: a peer that died is an error here, not SIGPIPE. */
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return TB_ERR_IO;
        c += w;
        n -= (size_t)w;
    }
    return TB_OK;
}

/* 1: closed before the first byte; 0: read; -1: error or closed midway. */
static int read_all(int fd, void *p, size_t n)
{
    unsigned char *c = p;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, c + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0 && got == 0)
            return 1;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

int tb_emu_frame_write(int fd, const tb_buf *b)
{
    if (b->len > UINT32_MAX)
        return TB_ERR_RANGE;
    uint32_t n = (uint32_t)b->len;
    unsigned char h[4] = {(unsigned char)n, (unsigned char)(n >> 8), (unsigned char)(n >> 16),
                          (unsigned char)(n >> 24)};
    int rc = write_all(fd, h, 4);
    return rc == TB_OK ? write_all(fd, b->data, b->len) : rc;
}

int tb_emu_frame_read(int fd, tb_buf *b, size_t max, int *closed)
{
    unsigned char h[4];
    if (closed)
        *closed = 0;
    tb_buf_clear(b);
    int r = read_all(fd, h, 4);
    if (r != 0) {
        if (r == 1 && closed)
            *closed = 1;
        return TB_ERR_IO;
    }
    size_t n = (size_t)h[0] | (size_t)h[1] << 8 | (size_t)h[2] << 16 | (size_t)h[3] << 24;
    if (n > max)
        return TB_ERR_RANGE;
    TB_CHECK(tb_buf_reserve(b, n));
    if (n > 0 && read_all(fd, b->data, n) != 0)
        return TB_ERR_IO;
    b->len = n;
    return TB_OK;
}
