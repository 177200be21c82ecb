/*
 * proto.h - branch-and-bound's messages (internal; included by the role
 * files): one table of tags with their names for logs, numbered from 1 in
 * its order.
 * S supervisor, M a group's master, W a worker.  Layouts (little-endian,
 * tb_buf packing):
 *   TASK      M->W  u64 id, f64 incumbent, u32 levels, u32 n, n subs, the
 *                   task padding
 *   RESULT    W->M  u64 id, u32 levels, u64 nodes, f64 seconds, f64 inc, bytes
 *                   solution (empty: no better one), u32 n, n subs
 *   WSTOP     M->W  (empty): end
 *   WFINAL    W->M  u64 tasks, u64 nodes, f64 busy, f64 idle, f64 startup idle
 *   MOVE      S->M  u32 n, n subs
 *   STATUS    M->S  u64 queued, u64 in flight, f64 least bound, u64 tasks,
 *                   u64 nodes, f64 busy, u32 workers, u64 GIVEs sent, u64
 *                   MOVEs received, u8 hungry
 *   INC_UP    M->S  f64 value, bytes solution
 *   INC_DOWN  S->M  f64 value
 *   GIVE_REQ  S->M  u64 how many
 *   GIVE      M->S  u32 n, n subs
 *   STOP      S->M  u64 messages sent before this one
 *   FINAL     M->S  u64 messages sent before this one, group counters
 *   KEEP      M->S  u32 n, n subs: a checkpointed run's open subproblems
 *                   (tb_bnb_set_checkpoint), after STOP before FINAL, or
 *                   after CKPT before CKPT_DONE
 *   CKPT      S->M  (empty): a checkpoint round: once no task is in
 *                   flight, send the queue (a copy) in KEEPs, then CKPT_DONE
 *   CKPT_DONE M->S  (empty): the group's part of the round is sent
 * RESULT, MOVE and GIVE end with the subproblem padding (per sub).
 */
#ifndef TB_BNB_PROTO_H
#define TB_BNB_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "tenbin/core.h"
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
    X(FINAL, "final")                                                                         \
    X(KEEP, "keep")                                                                           \
    X(CKPT, "checkpoint")                                                                     \
    X(CKPT_DONE, "checkpoint-done")

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


/*
 * One pack and one unpack function per message (proto.c).  A pack function
 * clears m and writes the whole message; an unpack function reads it from
 * the start of the receive view.  For the messages that carry subproblems
 * (TASK, RESULT, MOVE, GIVE) the subs are given packed already, back to
 * back in their wire form (tb__bnb_pack_sub), and unpacking stops in front
 * of them: the caller reads the n subs with tb__bnb_unpack_sub.  Padding
 * (pad bytes of zeros, tb_bnb_set_task_pad and tb_bnb_set_sub_pad) ends a
 * message and is never read.
 */

typedef struct tb__bnb_task_msg {
    uint64_t id;
    double inc;      /* the master's incumbent */
    uint32_t levels; /* levels to expand below each sub */
    uint32_t n;      /* subs */
} tb__bnb_task_msg;

typedef struct tb__bnb_result_msg {
    uint64_t id;
    uint32_t levels; /* of the task; 0: the answer stopped at its budget (TB__BNB_MSG_BUDGET) */
    uint64_t nodes;
    double seconds;
    double inc;        /* the worker's incumbent */
    const void *sol;   /* a better solution's bytes (unpacked: into the view) */
    uint32_t sol_len;  /* 0: none */
    uint32_t n;        /* surviving subs */
} tb__bnb_result_msg;

typedef struct tb__bnb_wfinal_msg {
    uint64_t tasks, nodes;
    double busy, idle, startup_idle;
} tb__bnb_wfinal_msg;

typedef struct tb__bnb_status_msg {
    uint64_t queued, inflight;
    double lower; /* least bound queued or in flight */
    uint64_t tasks, nodes;
    double busy;
    uint32_t workers;
    uint64_t gives_sent, moves_got;
    uint8_t hungry; /* nothing queued and a slot idle */
} tb__bnb_status_msg;

typedef struct tb__bnb_final_msg {
    uint64_t sent; /* messages to the supervisor before this one */
    uint32_t workers;
    uint64_t tasks, nodes;
    double busy, idle, startup_idle;
    uint64_t moved_in, moved_out;
    uint32_t depth; /* levels per task at the end */
} tb__bnb_final_msg;

int tb__bnb_pack_task(tb_buf *m, const tb__bnb_task_msg *t, const tb_buf *subs, size_t pad);
int tb__bnb_unpack_task(tb_buf *in, tb__bnb_task_msg *t);
int tb__bnb_pack_result(tb_buf *m, const tb__bnb_result_msg *r, const tb_buf *subs, size_t pad);
int tb__bnb_unpack_result(tb_buf *in, tb__bnb_result_msg *r);
int tb__bnb_pack_wstop(tb_buf *m);
int tb__bnb_unpack_wstop(tb_buf *in);
int tb__bnb_pack_wfinal(tb_buf *m, const tb__bnb_wfinal_msg *f);
int tb__bnb_unpack_wfinal(tb_buf *in, tb__bnb_wfinal_msg *f);
int tb__bnb_pack_move(tb_buf *m, uint32_t n, const tb_buf *subs, size_t pad);
int tb__bnb_unpack_move(tb_buf *in, uint32_t *n);
int tb__bnb_pack_status(tb_buf *m, const tb__bnb_status_msg *s);
int tb__bnb_unpack_status(tb_buf *in, tb__bnb_status_msg *s);
int tb__bnb_pack_inc_up(tb_buf *m, double value, const void *sol, uint32_t len);
int tb__bnb_unpack_inc_up(tb_buf *in, double *value, const void **sol, uint32_t *len);
int tb__bnb_pack_inc_down(tb_buf *m, double value);
int tb__bnb_unpack_inc_down(tb_buf *in, double *value);
int tb__bnb_pack_give_req(tb_buf *m, uint64_t want);
int tb__bnb_unpack_give_req(tb_buf *in, uint64_t *want);
int tb__bnb_pack_give(tb_buf *m, uint32_t n, const tb_buf *subs, size_t pad);
int tb__bnb_unpack_give(tb_buf *in, uint32_t *n);
int tb__bnb_pack_keep(tb_buf *m, uint32_t n, const tb_buf *subs);
int tb__bnb_pack_ckpt(tb_buf *m);
int tb__bnb_unpack_ckpt(tb_buf *in);
int tb__bnb_pack_ckpt_done(tb_buf *m);
int tb__bnb_unpack_ckpt_done(tb_buf *in);
int tb__bnb_unpack_keep(tb_buf *in, uint32_t *n);
int tb__bnb_pack_stop(tb_buf *m, uint64_t sent);
int tb__bnb_unpack_stop(tb_buf *in, uint64_t *sent);
int tb__bnb_pack_final(tb_buf *m, const tb__bnb_final_msg *f);
int tb__bnb_unpack_final(tb_buf *in, tb__bnb_final_msg *f);

#endif /* TB_BNB_PROTO_H */
