/*
 * proto.h - branch-and-bound's messages (internal; included by the role
 * files): one table of tags with their names for logs, numbered from 1 in
 * its order.
 * S supervisor, M a group's master, W a worker.  Layouts (little-endian,
 * tb_buf packing):
 *   TASK      M->W  u64 id, f64 incumbent, u32 levels, sub
 *   RESULT    W->M  u64 id, u32 levels, u64 nodes, f64 seconds, f64 inc, bytes
 *                   solution (empty: no better one), u32 n, n subs
 *   WSTOP     M->W  (empty): end
 *   WFINAL    W->M  u64 tasks, u64 nodes, f64 busy, f64 idle, f64 startup idle
 *   MOVE      S->M  u32 n, n subs
 *   STATUS    M->S  see master_status
 *   INC_UP    M->S  f64 value, bytes solution
 *   INC_DOWN  S->M  f64 value
 *   GIVE_REQ  S->M  u64 how many
 *   GIVE      M->S  u32 n, n subs
 *   STOP      S->M  u64 messages sent before this one
 *   FINAL     M->S  u64 messages sent before this one, group counters
 */
#ifndef TB_BNB_PROTO_H
#define TB_BNB_PROTO_H

#include "transport/tags.h"

#define TB__BNB_TAGS(X)                                                                       \
    X(TASK, "task")                                                                           \
    X(RESULT, "result")                                                                       \
    X(WSTOP, "worker-stop")                                                                   \
    X(WFINAL, "worker-final")                                                                 \
    X(MOVE, "move")                                                                           \
    X(STATUS, "status")                                                                       \
    X(INC_UP, "incumbent-up")                                                                 \
    X(INC_DOWN, "incumbent-down")                                                             \
    X(GIVE_REQ, "give-request")                                                               \
    X(GIVE, "give")                                                                           \
    X(STOP, "stop")                                                                           \
    X(FINAL, "final")

enum {
    T_NONE_ = 0,
#define TB__BNB_TAG_ENUM(name, str) T_##name,
    TB__BNB_TAGS(TB__BNB_TAG_ENUM)
#undef TB__BNB_TAG_ENUM
};

/* "task", "result", ...; "unknown" for a number outside the table. */
static inline const char *tb__bnb_tag_name(int tag)
{
    static const char *const names[] = {"unknown", TB__BNB_TAGS(TB__TAG_STR)};
    return tb__tag_name(names, sizeof names / sizeof names[0], tag);
}

#endif /* TB_BNB_PROTO_H */
