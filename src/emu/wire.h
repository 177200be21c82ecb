/*
 * wire.h - framed messages over a stream socket, for the emulator's ranks and
 * its coordinator (internal).  A frame is a u32 length, little endian, then
 * that many bytes.  Writing retries on EINTR and short writes; reading is buffered (below).
 */
#ifndef TB_EMU_WIRE_H
#define TB_EMU_WIRE_H

#include <stddef.h>

#include "tenbin/core.h"

/* A frame's length header: n, u32 little endian. */
static inline void tb_emu_frame_header(size_t n, unsigned char h[4])
{
    h[0] = (unsigned char)n;
    h[1] = (unsigned char)(n >> 8);
    h[2] = (unsigned char)(n >> 16);
    h[3] = (unsigned char)(n >> 24);
}

/* Append the frame b (its length header, then b's data) to *out. */
int tb_emu_frame_append(tb_buf *out, const tb_buf *b);
/* Write b->data[0..len) as one frame.  TB_ERR_IO on failure. */
int tb_emu_frame_write(int fd, const tb_buf *b);
/*
 * Buffered frame reading: one system call takes every byte the socket has,
 * and the frames in them are handed out one by one (a rank that sent three
 * frames costs its reader one read, not six).
 */
typedef struct tb_emu_reader {
    tb_buf raw; /* bytes read; raw.pos: start of the first frame not handed out */
} tb_emu_reader;

/* Read what fd has now, without waiting.  Returns the bytes read (0: none
 * there), or -1 on an error or a closed connection (*closed set to 1 then if
 * it closed cleanly). */
long tb_emu_reader_fill(int fd, tb_emu_reader *r, int *closed);
/* The next whole frame, as a view into r (valid until the next fill) in
 * *frame: 1 if there is one, 0 if not (yet), TB_ERR_RANGE for a frame over
 * max bytes. */
int tb_emu_reader_next(tb_emu_reader *r, tb_buf *frame, size_t max);
/* Bytes read but not handed out as frames (a frame cut short by a close). */
static inline size_t tb_emu_reader_pending(const tb_emu_reader *r) { return r->raw.len - r->raw.pos; }
void tb_emu_reader_free(tb_emu_reader *r);

#endif
