/*
 * proto.h - the messages of `tenbin flow run` (internal): one table of tags
 * with their names for logs, numbered from 1 in its order, and one pack and
 * one unpack function per message (proto.c).  A pack function clears the
 * buffer first; an unpack function reads from the buffer's cursor and
 * returns TB_ERR_RANGE for a message cut short.  Rank 0 is the coordinator (it also runs tasks).  Layouts
 * (little-endian, tb_buf packing):
 *   RUN     coordinator -> rank   u32 task, u32 attempt, u64 loop iterations (synthetic)
 *   PUSH    coordinator -> holder u32 file, i32 destination: send it a copy of the file
 *   KILL    coordinator -> rank   (empty): kill the running attempt
 *   STOP    coordinator -> rank   (empty): the run ends
 *   FBEGIN  rank -> rank          u32 file: a file's copy begins
 *   FDATA   rank -> rank          u32 file, bytes: the next chunk (at most SEND_AHEAD unacked)
 *   FEND    rank -> rank          u32 file, u64 bytes, u64 FNV-1a hash of them: it ends
 *   DONE    rank -> coordinator   u32 task, u32 attempt, i32 exit code, i32 signal, f64
 *                                 seconds, bytes the last line of its stderr: an attempt ended
 *   HAVE    rank -> coordinator   u32 file, u64 bytes: a copy arrived whole
 *   FACK    rank -> rank          u32 file: a chunk is written, send another
 */
#ifndef TB_FLOW_PROTO_H
#define TB_FLOW_PROTO_H

#include <stdint.h>

#include "tenbin/core.h"
#include "transport/tags.h"

#define TB__FLOW_TAGS(X)                                                                      \
    X(RUN, "run")                                                                             \
    X(PUSH, "push")                                                                           \
    X(KILL, "kill")                                                                           \
    X(STOP, "stop")                                                                           \
    X(FBEGIN, "file-begin")                                                                   \
    X(FDATA, "file-data")                                                                     \
    X(FEND, "file-end")                                                                       \
    X(DONE, "done")                                                                           \
    X(HAVE, "have")                                                                           \
    X(FACK, "file-ack")

enum {
    T_NONE_ = 0,
#define TB__FLOW_TAG_ENUM(name, str) T_##name,
    TB__FLOW_TAGS(TB__FLOW_TAG_ENUM)
#undef TB__FLOW_TAG_ENUM
};

/* "run", "push", ...; "unknown" for a number outside the table. */
static inline const char *tb__flow_tag_name(int tag)
{
    static const char *const names[] = {"unknown", TB__FLOW_TAGS(TB__TAG_STR)};
    return tb__tag_name(names, sizeof names / sizeof names[0], tag);
}

/* An attempt's end, as DONE carries it.  msg points into the message. */
typedef struct tb__flow_done_msg {
    uint32_t task, attempt;
    int32_t exit_code, signo;
    double seconds;
    const void *msg; /* the last line of its stderr (not terminated) */
    uint32_t msglen;
} tb__flow_done_msg;

int tb__flow_pack_run(tb_buf *m, uint32_t task, uint32_t attempt, uint64_t iters);
int tb__flow_unpack_run(tb_buf *in, uint32_t *task, uint32_t *attempt, uint64_t *iters);
int tb__flow_pack_push(tb_buf *m, uint32_t file, int32_t dst);
int tb__flow_unpack_push(tb_buf *in, uint32_t *file, int32_t *dst);
/* KILL and STOP are empty. */
int tb__flow_pack_empty(tb_buf *m);
/* FBEGIN, FACK: the file alone. */
int tb__flow_pack_file(tb_buf *m, uint32_t file);
int tb__flow_unpack_file(tb_buf *in, uint32_t *file);
/* FDATA: the file, then the chunk's bytes to the end of the message. */
int tb__flow_pack_fdata(tb_buf *m, uint32_t file, const void *chunk, size_t n);
/* FEND after the file: the bytes sent and their FNV-1a hash. */
int tb__flow_pack_fend(tb_buf *m, uint32_t file, uint64_t bytes, uint64_t hash);
int tb__flow_unpack_fend_tail(tb_buf *in, uint64_t *bytes, uint64_t *hash);
int tb__flow_pack_done(tb_buf *m, const tb__flow_done_msg *d);
int tb__flow_unpack_done(tb_buf *in, tb__flow_done_msg *d);
int tb__flow_pack_have(tb_buf *m, uint32_t file, uint64_t bytes);
int tb__flow_unpack_have(tb_buf *in, uint32_t *file, uint64_t *bytes);

#endif /* TB_FLOW_PROTO_H */
