/*
 * proto.h - the master-worker runtime's messages (internal): one table of
 * tags, each with its name for logs and traces.  The numbers are the
 * order of the table, from 1.
 */
#ifndef TB_MW_PROTO_H
#define TB_MW_PROTO_H

#include "transport/tags.h"

#define TB__MW_TAGS(X)                                                                        \
    X(TASK, "task")           /* master -> worker: a chunk of tasks */                        \
    X(RESULT, "result")       /* worker -> master: the chunk's results */                     \
    X(REQ, "request")         /* master -> master: ask for tasks */                           \
    X(GIVE, "give")           /* master -> master: part of a queue */                         \
    X(REFUSE, "refuse")       /* master -> master: nothing to give */                         \
    X(FWD, "forward")         /* master -> rank 0: results of another master */               \
    X(FAIL, "fail")           /* a task failed: towards rank 0, which stops the run */        \
    X(ABORT, "abort")         /* rank 0 -> masters: stop after a failure */                   \
    X(DONE, "done")           /* static master -> tree parent: its subtree is done */         \
    X(FINISH, "finish")       /* down the masters' tree: the run ends (with a status) */      \
    X(STOP, "stop")           /* master -> workers, along a tree: stop */                     \
    X(MSTART, "master-start") /* dynamic: a worker is promoted to master */                   \
    X(FREE, "free")           /* dynamic: a worker the parent promised is the child's now */  \
    X(RETURN, "return")       /* dynamic: a done child and its workers go back to the parent */\
    X(REDUCE, "reduce")       /* folded partials, along the tree to rank 0 */                 \
    X(HAVE, "have")           /* dynamic: a child that was refused has tasks again */

enum tb__mw_tag {
    TB__MW_TAG_NONE_ = 0,
#define TB__MW_TAG_ENUM(name, str) TB__TAG_##name,
    TB__MW_TAGS(TB__MW_TAG_ENUM)
#undef TB__MW_TAG_ENUM
};

/* "task", "result", ...; "unknown" for a number outside the table. */
static inline const char *tb__mw_tag_name(int tag)
{
    static const char *const names[] = {"unknown", TB__MW_TAGS(TB__TAG_STR)};
    return tb__tag_name(names, sizeof names / sizeof names[0], tag);
}

#endif /* TB_MW_PROTO_H */
