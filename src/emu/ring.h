/*
 * ring.h - the emulator's frames through shared memory, for the ranks on the
 * coordinator's own node (internal; docs/emulator.md, "How ranks talk to the
 * coordinator").
 *
 * The coordinator creates one segment (POSIX shared memory, its name and key
 * in TENBIN_EMU_SEGMENT to the ranks) holding two byte rings per rank: `up`
 * (rank -> coordinator) and `down` (coordinator -> rank), each with one
 * writer and one reader.  The bytes are the same frames as on the TCP
 * connection (wire.h), so a reader takes them with tb_emu_reader as well.  A
 * rank that cannot open the segment (on another node) keeps using its TCP
 * connection, which every rank holds in any case: its HELLO, a FAIL, and its
 * end (the coordinator sees a rank die when the connection closes) go there.
 *
 * Waking.  A reader about to sleep says so (`sleeping`) and sleeps on a
 * futex word that a writer bumps and wakes only when the reader said so: a
 * frame to a reader that is awake costs no system call.  The ranks' rings
 * towards the coordinator share one such word in the header (`bell`), bumped
 * at every frame, which the coordinator also watches while it spins.
 */
#ifndef TB_EMU_RING_H
#define TB_EMU_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/wire.h"
#include "tenbin/core.h"

enum { TB_EMU_RING_BYTES = 16384 }; /* a power of two */

typedef struct tb_emu_ring {
    _Atomic uint64_t head; /* bytes written, ever (the writer's) */
    char pad0[56];
    _Atomic uint64_t tail; /* bytes read, ever (the reader's) */
    char pad1[56];
    _Atomic uint32_t sleeping; /* the reader sleeps on bell (or is about to) */
    _Atomic uint32_t bell;     /* futex word the writer bumps to wake it */
    char pad2[56];
    unsigned char data[TB_EMU_RING_BYTES];
} tb_emu_ring;

/* How the coordinator sleeps, in tb_emu_shm.coord_sleeping. */
enum {
    TB_EMU_AWAKE = 0,
    TB_EMU_ON_BELL, /* on the futex `bell`: wake it there */
    TB_EMU_ON_POLL, /* in poll on the sockets: send a BELL frame on TCP */
};

typedef struct tb_emu_shm { /* the segment's start */
    uint64_t magic, key;
    uint32_t ranks, ring_bytes;
    char pad0[40];
    _Atomic uint32_t coord_sleeping; /* TB_EMU_AWAKE, _ON_BELL, _ON_POLL */
    _Atomic uint32_t bell;           /* bumped at every frame up */
    char pad1[56];
    tb_emu_ring rings[]; /* rank k: [2k] up, [2k + 1] down */
} tb_emu_shm;

#define TB_EMU_SHM_MAGIC 0x746e6269656d7531ull /* "tnbiemu1" */

static inline tb_emu_ring *tb_emu_shm_up(tb_emu_shm *s, int k) { return &s->rings[2 * k]; }
static inline tb_emu_ring *tb_emu_shm_down(tb_emu_shm *s, int k) { return &s->rings[2 * k + 1]; }
/* After the rings: one bit per rank, set when it put a frame up (the
 * coordinator looks at those rings only, not at all P). */
static inline _Atomic uint64_t *tb_emu_shm_dirty(tb_emu_shm *s)
{
    return (_Atomic uint64_t *)(void *)&s->rings[2 * (size_t)s->ranks];
}

/* Create the segment for `ranks` ranks (coordinator): its name (for
 * TENBIN_EMU_SEGMENT, "NAME:KEY") in `env`.  The memory is allocated, not only
 * reserved (a /dev/shm too small for it fails here, not with SIGBUS later).
 * TB_ERR_IO if shared memory is not available: the ranks then use TCP. */
int tb_emu_shm_create(int ranks, tb_emu_shm **out, size_t *bytes, char *name, size_t namelen,
                      char *env, size_t envlen);
/* Open the segment TENBIN_EMU_SEGMENT names and check it is the one meant for a
 * run of `ranks` ranks (a rank).  NULL if not here (another node). */
tb_emu_shm *tb_emu_shm_open(const char *env, int ranks, size_t *bytes);
void tb_emu_shm_unmap(tb_emu_shm *s, size_t bytes);
void tb_emu_shm_unlink(const char *name);

/* Bytes waiting in r. */
static inline uint64_t tb_emu_ring_used(tb_emu_ring *r)
{
    return atomic_load_explicit(&r->head, memory_order_acquire) -
           atomic_load_explicit(&r->tail, memory_order_relaxed);
}
/* Put up to n bytes of p into r; returns how many went (0: full). */
size_t tb_emu_ring_put(tb_emu_ring *r, const void *p, size_t n);
/* Move every byte r has into the reader; returns how many (0: none). */
long tb_emu_ring_fill(tb_emu_ring *r, tb_emu_reader *rd);
/* The writer's side after a put: wake the reader if it sleeps on r->bell. */
void tb_emu_ring_ring(tb_emu_ring *r);
/* The reader's side: sleep until a writer wakes r->bell or `ns` passed,
 * unless bytes are waiting already.  Returns 1 if there may be bytes. */
int tb_emu_ring_sleep(tb_emu_ring *r, long ns);

/* A spinning loop's pause. */
static inline void tb_emu_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

/* Futex wait on *w while it holds v, at most ns (< 0: no limit). */
void tb_emu_futex_wait(_Atomic uint32_t *w, uint32_t v, long ns);
void tb_emu_futex_wake(_Atomic uint32_t *w, int n);

#endif
