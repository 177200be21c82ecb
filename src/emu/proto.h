/*
 * proto.h - what the ranks of an emulated run and the coordinator say to each
 * other (internal; see docs/emulator.md).
 *
 * Each rank holds one TCP connection to the coordinator (the `tenbin emu`
 * process, address in TENBIN_EMU_COORD); a rank on the coordinator's node
 * sends and gets its frames after HELLO through shared memory instead
 * (ring.h), the same bytes.  Frames are a u32 length (of what
 * follows) then a u8 type and the fields, packed with tb_buf_pack_* (little
 * endian, doubles as their bits).
 *
 * rank -> coordinator
 *   HELLO   u32 rank, u32 size, u32 pid, bytes host name, u8 attached (1:
 *           its frames from now on go through shared memory, ring.h)
 *   REPORT  f64 clock, u8 state, u8 kind, f64 deadline, u32 npat, npat x
 *           (u32 ctx, i32 src, i32 tag), u32 nsend, nsend x (u32 dst, u32 ctx,
 *           i32 tag, u64 seq, f64 arrival), u32 nrecv, nrecv x (u32 src, u64 seq)
 *   FINAL   the REPORT fields, then f64 compute, send, recv, idle, u64
 *           messages sent, bytes sent, messages received, then bytes trace
 *           (Chrome trace events of this rank, may be empty)
 *   FAIL    bytes message (one line: the run cannot go on); always on TCP
 *   BELL    (nothing, on TCP): look at my ring (ring.h, TB_EMU_ON_POLL)
 * coordinator -> rank
 *   ASK     (nothing): send a REPORT with state RUNNING when you can
 *   WAKE    (nothing): a message your blocked receive matches was sent
 *   DECIDE  u8 found, u32 pattern, u32 src (world rank), i32 tag, u64 seq,
 *           f64 arrival, f64 horizon (when not found: no message matching the
 *           patterns arrives before it), u32 nahead, nahead x (u32 src, i32
 *           tag, u64 seq, f64 arrival): for a TAKE of one any-source pattern
 *           without deadline, the messages its next such receives take, in
 *           order (decide.c, decide_ahead)
 *
 * Ranks are world ranks; `src` of a pattern is a world rank or -1 (any), `tag`
 * a tag or -1 (any); `ctx` names a communicator (the same on every member).
 */
#ifndef TB_EMU_PROTO_H
#define TB_EMU_PROTO_H

#include <stddef.h>

enum {
    TB_EMU_HELLO = 1,
    TB_EMU_REPORT,
    TB_EMU_FINAL,
    TB_EMU_FAIL,
    TB_EMU_ASK,
    TB_EMU_DECIDE,
    TB_EMU_WAKE, /* a message a blocked rank waits for was sent: look now */
    TB_EMU_BELL, /* a rank put frames in its ring while the coordinator polled */
};

/* A rank's state as the coordinator sees it. */
enum {
    TB_EMU_RUNNING = 0, /* its next send is at clock or later */
    TB_EMU_BLOCKED,     /* in a receive matching the patterns; no answer wanted */
    TB_EMU_WAITING,     /* wants a DECIDE for the patterns (kind, deadline) */
    TB_EMU_DONE,        /* finalised */
    TB_EMU_SENDING,     /* running, but held in the real MPI until a message
                           it sent to the rank in `deadline` leaves (its
                           receiver must post first) */
};

/* What a WAITING rank wants decided (a REPORT's kind). */
enum {
    TB_EMU_TAKE = 0, /* the first message to arrive: it is consumed */
    TB_EMU_PEEK,     /* the first message to arrive: it stays (probes) */
};
/* Or'ed into a REPORT's kind: the answers given in advance that the rank has
 * not used are back in play (it dropped them). */
#define TB_EMU_DROP_AHEAD 0x80
/* At most this many answers in advance with one DECIDE. */
#define TB_EMU_AHEAD_MAX 32

#define TB_EMU_ANY (-1)

/* The context of a BLOCKED pattern that waits for the acknowledgement of the
 * rank's own message (src = its destination, tag = its sequence number's low
 * 31 bits): it matches no message. */
#define TB_EMU_ACK_CTX 0xffffffffu

/* Largest frame either side accepts (a FINAL with a long trace). */
#define TB_EMU_FRAME_MAX (512u << 20)

/* The coordinator fed frames without processes (decide.c), for the fuzz
 * harness tests/fuzz/fuzz_emu_frames.c. */
int tb__emu_coord_feed(int P, const unsigned char *data, size_t len, char *err, size_t errlen);

#endif /* TB_EMU_PROTO_H */
