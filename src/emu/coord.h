/*
 * coord.h - the emulator's coordinator inside (internal): its state of every
 * rank, and what its three parts call of each other: the decisions
 * (decide.c, which the fuzz harness drives alone), the launcher (launch.c)
 * and the event loop that joins them (coord.c, tb_emu_run).
 */
#ifndef TB_EMU_COORD_H
#define TB_EMU_COORD_H

#include <stdint.h>
#include <sys/types.h>

#include "emu/proto.h"
#include "emu/ring.h"
#include "emu/wire.h"
#include "tenbin/emu.h"
#include "tenbin/model.h"

typedef struct cpat {
    uint32_t ctx;
    int32_t src, tag;
} cpat;

typedef struct cmsg {
    uint32_t src, ctx;
    int32_t tag;
    uint64_t seq;
    double arrival;
    int ahead; /* given to its receiver in advance (TB_EMU_AHEAD_MAX): not a candidate */
} cmsg;

typedef struct early {
    uint32_t src;
    uint64_t seq;
} early;

typedef struct crank {
    int fd;
    int hello, done;
    pid_t pid;
    int state;
    double clock, deadline;
    cpat *pat;
    size_t npat, cappat;
    int pending; /* WAITING, not answered yet */
    int take;    /* ... and it takes the message (TB_EMU_TAKE) */
    int asked;
    double ask_clock; /* its clock when last asked */
    double ask_next;  /* real time before which it is not asked again */
    double ask_wait;  /* how long that is: doubles while its clock stands still */
    double heard;     /* real time of its last report */
    cmsg *in;         /* known messages to it, not consumed */
    size_t nin, capin;
    early *early; /* consumed before their send was reported */
    size_t nearly, capearly;
    double *lastfrom;       /* [P]: latest known arrival from each rank (NULL: none yet) */
    tb_emu_ring *up, *down; /* through shared memory (ring.h), or NULL: TCP */
    tb_emu_reader urd;      /* what came up */
    tb_buf backlog;         /* frames down its ring had no room for yet */
} crank;

typedef struct coord {
    int P;
    crank *r;
    double lookahead;
    tb_emu_result *res;
    char fail[512];
    uint64_t decisions;
    uint64_t unchecked;     /* decisions made without the relay check (TB_EMU_SENDING) */
    uint64_t unchecked_rdv; /* of them, made only without ranks held in a rendezvous
                               of the model to the deciding rank (held_rdv) */
    uint64_t ahead;         /* answers given in advance (decide_ahead) */
    size_t ahead_max;       /* at most this many with one decision (TENBIN_EMU_AHEAD) */
    cmsg **scratch;         /* decide_ahead's candidates */
    size_t capscratch;
    tb_buf in, out;
    tb_emu_shm *shm;        /* the ranks on this node, or NULL */
    size_t nbacklog;        /* ranks with frames in their backlog */
    double *ev;             /* [P] event times, valid where !stale */
    unsigned char *stale;   /* [P] 1: what ev and want say of the rank changed */
    unsigned char *want;    /* [P] WANT_* */
    unsigned char *askable; /* [P] 1: said hello, not done, not asked yet, and
                               running, sending or blocked (a question to it may help) */
    double *tree;           /* min-tree of ev[k] + lookahead: [1] the root, leaves from tsize */
    size_t tsize;           /* leaves: the least power of two >= P */
    double ask_due;         /* real time of the next question held back (INFINITY: none) */
} coord;

/* ---- decide.c -------------------------------------------------------------- */

/* c->P and c->lookahead set: the per-rank state, the result's ranks (their
 * hosts from plat; NULL: host 0, no name).  TB_ERR_NOMEM leaves what was
 * made for tb__emu_coord_free. */
int tb__emu_coord_init(coord *c, const tb_platform *plat);
/* What tb__emu_coord_init and the run made (not the shared memory). */
void tb__emu_coord_free(coord *c);
/* Every whole frame rd holds from connection fd (*rank: its rank once it
 * said hello, else -1); *finals counts the FINALs.  Non-zero with the reason
 * in why when the run must stop. */
int tb__emu_take_frames(coord *c, tb_emu_reader *rd, int fd, int *rank, int *finals, char *why,
                        size_t whylen);
/* What rank k's ring holds; all ranks' rings (all: also those not rung). */
int tb__emu_drain_one(coord *c, int k, int *finals, char *why, size_t whylen);
int tb__emu_drain_rings(coord *c, int all, int *finals, char *why, size_t whylen);
/* Decide what can be decided now; TB_ERR_IO if a rank's connection broke. */
int tb__emu_decide_all(coord *c);
/* Move what rank k's backlog holds into its ring, as far as there is room. */
void tb__emu_flush_down(coord *c, int k);
/* 1 with the reason in why if no rank can go on. */
int tb__emu_deadlocked(const coord *c, char *why, size_t n);
/* Every rank's state on stderr (a run stopped by its timeout). */
void tb__emu_dump_state(coord *c, const char *why);

/* ---- launch.c -------------------------------------------------------------- */

/* Listen on addr (a name or a literal), on a port the kernel picks; `to`
 * gets what the ranks connect to.  The socket, or -1 with errno set. */
int tb__emu_listen_on(const char *addr, char *to, size_t n);
/* Start the MPI launcher on the program with the emulation library; -1 if
 * it cannot be run (*exec_errno: why exec failed, if it did). */
pid_t tb__emu_launch(const tb_emu_opts *o, char *const argv[], const char *coord_at,
                     const char *platform, const char *shm_env, int *exec_errno);
/* Signal the launcher, everything it started and every rank that said hello. */
void tb__emu_kill_all(coord *c, pid_t child, int sig);
/* Wait for the launcher to end after tb__emu_kill_all, escalating to SIGKILL. */
int tb__emu_reap(coord *c, pid_t child);

#endif /* TB_EMU_COORD_H */
