/*
 * proto.h - the messages of `tenbin flow run` (internal; included by run.c):
 * one table of tags with their names for logs, numbered from 1 in its
 * order.  Rank 0 is the coordinator (it also runs tasks).  Layouts
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

#endif /* TB_FLOW_PROTO_H */
