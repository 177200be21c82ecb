/*
 * wire.h - framed messages over a stream socket, for the emulator's ranks and
 * its coordinator (internal).  A frame is a u32 length, little endian, then
 * that many bytes.  Both calls retry on EINTR and on short reads and writes.
 */
#ifndef TB_EMU_WIRE_H
#define TB_EMU_WIRE_H

#include <stddef.h>

#include "tenbin/core.h"

/* Write b->data[0..len) as one frame.  TB_ERR_IO on failure. */
int tb_emu_frame_write(int fd, const tb_buf *b);
/* Read one frame into b (cleared first; b->pos reset to 0).  TB_ERR_IO on
 * a failure or a closed connection (*closed set to 1 when it closed cleanly
 * before a frame began), TB_ERR_RANGE for a frame over max bytes. */
int tb_emu_frame_read(int fd, tb_buf *b, size_t max, int *closed);

#endif
