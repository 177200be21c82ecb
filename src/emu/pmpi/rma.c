/*
 * rma.c - one-sided communication under the emulator (inside libtenbin-emu.so).
 *
 * The data moves for real: every call is also made on the real window, so
 * what a program reads after a synchronisation is what MPI put there.  The
 * virtual clocks follow LogGPS, with the target's processor taking no part
 * (the network puts and gets the data, as RDMA does):
 *
 *   Put, Accumulate of k bytes to a target: the origin pays the send
 *       overhead os + ob*P + O*k and its link's gap (as for a send); the data
 *       is at the target L + (k-1)G after the overhead, whatever k (nothing
 *       to rendezvous with), and the origin learns it L later;
 *   Get of k bytes: a request of one byte leaves after os + ob*P; the data is
 *       back 2L + (k-1)G later;
 *   MPI_Win_lock: a request and its grant, os + ob*P + 2L, and, if another
 *       origin held the lock in a way that excludes this one, the request
 *       waits at the target until that origin's release arrived there;
 *   MPI_Win_unlock, MPI_Win_flush*: until every access to that target (all
 *       targets: _all) is complete at the origin, as idle time; the unlock
 *       sends its release after, one more os + ob*P, which reaches the target
 *       L later;
 *   MPI_Win_lock_all: nothing but the waits for exclusive holders' releases
 *       (the locks are taken as the accesses come);
 *   MPI_Win_fence: until this rank's accesses are complete, then an emulated
 *       barrier over the window's group (the real fence follows, at once on
 *       every member), which is what implementations do;
 *   MPI_Win_create, MPI_Win_allocate: an emulated allreduce over the group
 *       (the members exchange their windows' addresses), then the real call;
 *   MPI_Win_free: complete, emulated barrier, real free.
 *
 * The locks themselves are the emulator's: a real MPI_Win_lock that waits
 * for another origin's exclusive lock would hold this rank inside MPI, deaf
 * to the coordinator, perhaps while that origin waits on a decision that
 * needs this rank.  So every real lock is a shared one (which never waits),
 * and exclusion is a word per rank in a hidden window: -1 held exclusively,
 * n > 0 held shared n times.  An origin takes it with MPI_Compare_and_swap
 * or MPI_Fetch_and_op, and while it cannot, it answers the coordinator and
 * tries again; beside the word, each release leaves its virtual time of
 * arrival at the target (exclusive and shared apart), which the next holder
 * waits for in virtual time.  Contended locks are granted in the real order
 * (the model's wait is from the holder's release on).
 *
 * Not emulated (one line): post, start, complete and wait
 * (emu/unmodelled.h); request-based and atomic calls of the program.
 */
#include "emu/pmpi/emu.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A rank's slots in the hidden window of locks. */
enum { LK_WORD, LK_EXCL_FREE, LK_SHARED_FREE, LK_SLOTS };

typedef struct ewin {
    MPI_Win win;  /* the real window (the program's handle) */
    MPI_Comm dup; /* its group, for the emulated barriers */
    ecomm *c;
    double *done; /* per target rank: when its accesses are complete at the origin */
    MPI_Win locks; /* hidden: LK_SLOTS 8-byte slots per rank (locked by all, always) */
    void *lbase;
    signed char *held; /* per target: 0, 1 shared, 2 exclusive, 3 shared by lock_all */
} ewin;

static ewin **wins;
static size_t nwins, capwins;

static ewin *win_get(MPI_Win w, const char *call)
{
    for (size_t i = 0; i < nwins; i++)
        if (wins[i]->win == w)
            return wins[i];
    tb__emu_die("%s: a window the emulator did not see made", call);
}

/* The window's group, a hidden communicator with an agreed context, and its
 * record; then `make` makes the real window over it. */
static ewin *win_begin(MPI_Comm comm, const char *call)
{
    ecomm *parent = tb__emu_comm_get(comm, call);
    if (parent->inter)
        tb__emu_die("%s over an intercommunicator is not emulated", call);
    uint32_t ctx = tb__emu_agree_ctx(parent); /* the exchange of the windows' addresses */
    ewin *e = calloc(1, sizeof *e);
    if (!e)
        tb__emu_oom();
    PMPI_Comm_dup(comm, &e->dup);
    PMPI_Comm_set_errhandler(e->dup, MPI_ERRORS_RETURN); /* win_made says what failed */
    e->c = tb__emu_comm_add(e->dup, ctx, 0);
    e->done = calloc((size_t)e->c->size, sizeof *e->done);
    e->held = calloc((size_t)e->c->size, sizeof *e->held);
    if (!e->done || !e->held)
        tb__emu_oom();
    GROW(wins, nwins, capwins);
    wins[nwins++] = e;
    return e;
}

static void real_failed(int rc, const char *call)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    PMPI_Error_string(rc, msg, &len);
    tb__emu_die("%s failed in the real MPI: %s", call, msg);
}

/* After the real call: one line if it failed (the real MPI's own words);
 * then the hidden window of locks (every member is here at once). */
static void win_made(ewin *e, int rc, MPI_Win win, const char *call)
{
    if (rc != MPI_SUCCESS)
        real_failed(rc, call);
    e->win = win;
    rc = PMPI_Win_allocate(LK_SLOTS * 8, 8, MPI_INFO_NULL, e->dup, &e->lbase, &e->locks);
    if (rc != MPI_SUCCESS)
        real_failed(rc, call);
    int64_t *word = e->lbase;
    double *t = e->lbase;
    word[LK_WORD] = 0;
    t[LK_EXCL_FREE] = t[LK_SHARED_FREE] = 0;
    PMPI_Barrier(e->dup); /* the words are set before anyone looks */
    PMPI_Win_lock_all(MPI_MODE_NOCHECK, e->locks);
}

EMU_API int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                           MPI_Win *win)
{
    BEGIN("MPI_Win_create");
    ewin *e = win_begin(comm, "MPI_Win_create");
    int rc = PMPI_Win_create(base, size, disp_unit, info, e->dup, win);
    win_made(e, rc, *win, "MPI_Win_create");
    END();
}

EMU_API int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    BEGIN("MPI_Win_allocate");
    ewin *e = win_begin(comm, "MPI_Win_allocate");
    int rc = PMPI_Win_allocate(size, disp_unit, info, e->dup, baseptr, win);
    win_made(e, rc, *win, "MPI_Win_allocate");
    END();
}

/* ---- the clocks ---- */

static int world_of(const ewin *e, int target, const char *call)
{
    if (target < 0 || target >= e->c->size)
        tb__emu_die("%s: target rank %d is not in the window's group of %d", call, target,
                    e->c->size);
    return e->c->world[target];
}

static size_t bytes_of(int count, MPI_Datatype t)
{
    int sz = 0;
    PMPI_Type_size(t, &sz);
    return count > 0 && sz > 0 ? (size_t)count * (size_t)sz : 0;
}

/* The origin sends k bytes (or a request, k = 1) towards world rank w: its
 * overhead and gap are charged, and it returns when they leave. */
static double leave(int w, size_t k)
{
    tb_netmsg nm;
    tb_net_send(E.plat, E.P, E.cluster[E.wrank], E.cluster[w], w == E.wrank, k, E.clock,
                E.link_free, &nm);
    tb__emu_advance(nm.send_end, &E.send, "rma");
    if (w != E.wrank)
        E.link_free = nm.link_free;
    return nm.send_end;
}

/* L + (k-1)G between the origin and world rank w (0 for itself). */
static double wire(int w, size_t k)
{
    if (w == E.wrank)
        return 0;
    return tb_net_rdv_send_end(E.plat, E.cluster[E.wrank], E.cluster[w], k ? k : 1, 0);
}

static void note_done(ewin *e, int target, double t)
{
    if (t > e->done[target])
        e->done[target] = t;
}

/* Idle until every access to target (all: -1) is complete. */
static void complete(ewin *e, int target)
{
    double t = 0;
    for (int i = 0; i < e->c->size; i++) {
        if (target >= 0 && i != target)
            continue;
        if (e->done[i] > t)
            t = e->done[i];
        e->done[i] = 0;
    }
    tb__emu_advance(t, &E.idle, "rma wait");
}

/* A put-like access: k bytes travel to the target. */
static void put_like(ewin *e, int target, size_t k, const char *call)
{
    int w = world_of(e, target, call);
    double sent = leave(w, k);
    note_done(e, target, sent + wire(w, k) + wire(w, 1));
    E.msgs_sent++;
    E.bytes_sent += k;
}

EMU_API int MPI_Put(const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                    int tcount, MPI_Datatype ttype, MPI_Win win)
{
    BEGIN("MPI_Put");
    ewin *e = win_get(win, "MPI_Put");
    put_like(e, target, bytes_of(ocount, otype), "MPI_Put");
    int rc = PMPI_Put(obuf, ocount, otype, target, disp, tcount, ttype, win);
    tb__emu_leave();
    return rc;
}

EMU_API int MPI_Accumulate(const void *obuf, int ocount, MPI_Datatype otype, int target,
                           MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
    BEGIN("MPI_Accumulate");
    ewin *e = win_get(win, "MPI_Accumulate");
    put_like(e, target, bytes_of(ocount, otype), "MPI_Accumulate");
    int rc = PMPI_Accumulate(obuf, ocount, otype, target, disp, tcount, ttype, op, win);
    tb__emu_leave();
    return rc;
}

EMU_API int MPI_Get(void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                    int tcount, MPI_Datatype ttype, MPI_Win win)
{
    BEGIN("MPI_Get");
    ewin *e = win_get(win, "MPI_Get");
    int w = world_of(e, target, "MPI_Get");
    size_t k = bytes_of(ocount, otype);
    double sent = leave(w, 1);
    note_done(e, target, sent + wire(w, 1) + wire(w, k));
    int rc = PMPI_Get(obuf, ocount, otype, target, disp, tcount, ttype, win);
    tb__emu_leave();
    return rc;
}

/* ---- the locks ---- */

/* Take target's lock word (exclusive or shared), in real time, and return
 * the virtual time the releases that exclude this kind left at the target. */
static double lock_word(ewin *e, int target, int exclusive)
{
    const int64_t one = 1, minus = -1, zero = 0;
    int64_t old = 0;
    long ns = 1000;
    for (;;) {
        if (exclusive)
            PMPI_Compare_and_swap(&minus, &zero, &old, MPI_INT64_T, target, LK_WORD, e->locks);
        else
            PMPI_Fetch_and_op(&one, &old, MPI_INT64_T, target, LK_WORD, MPI_SUM, e->locks);
        PMPI_Win_flush(target, e->locks);
        if (exclusive ? old == 0 : old >= 0)
            break;
        if (!exclusive) { /* an exclusive holder: take the count back, wait */
            PMPI_Fetch_and_op(&minus, &old, MPI_INT64_T, target, LK_WORD, MPI_SUM, e->locks);
            PMPI_Win_flush(target, e->locks);
        }
        tb__emu_poll_coord(); /* held by another origin: answer, nap, try again */
        ns = tb__emu_backoff(ns);
    }
    double t[2];
    PMPI_Fetch_and_op(NULL, &t[0], MPI_DOUBLE, target, LK_EXCL_FREE, MPI_NO_OP, e->locks);
    PMPI_Fetch_and_op(NULL, &t[1], MPI_DOUBLE, target, LK_SHARED_FREE, MPI_NO_OP, e->locks);
    PMPI_Win_flush(target, e->locks);
    return exclusive && t[1] > t[0] ? t[1] : t[0];
}

/* Give target's lock word back; the release reaches the target at `at`. */
static void unlock_word(ewin *e, int target, int exclusive, double at)
{
    const int64_t zero = 0, minus = -1;
    /* Accumulates from one origin to one place are applied in order: the
     * time is there before the word says free. */
    PMPI_Accumulate(&at, 1, MPI_DOUBLE, target, exclusive ? LK_EXCL_FREE : LK_SHARED_FREE, 1,
                    MPI_DOUBLE, MPI_MAX, e->locks);
    PMPI_Win_flush(target, e->locks);
    PMPI_Accumulate(exclusive ? &zero : &minus, 1, MPI_INT64_T, target, LK_WORD, 1, MPI_INT64_T,
                    exclusive ? MPI_REPLACE : MPI_SUM, e->locks);
    PMPI_Win_flush(target, e->locks);
}

/* ---- synchronisation ---- */

EMU_API int MPI_Win_fence(int assert, MPI_Win win)
{
    BEGIN("MPI_Win_fence");
    ewin *e = win_get(win, "MPI_Win_fence");
    complete(e, -1);
    tb__emu_coll_barrier(e->c);
    int rc = PMPI_Win_fence(assert, win);
    tb__emu_leave();
    return rc;
}

EMU_API int MPI_Win_lock(int type, int target, int assert, MPI_Win win)
{
    BEGIN("MPI_Win_lock");
    ewin *e = win_get(win, "MPI_Win_lock");
    int w = world_of(e, target, "MPI_Win_lock");
    if (e->held[target])
        tb__emu_die("MPI_Win_lock: target %d is locked already by this rank", target);
    int excl = type == MPI_LOCK_EXCLUSIVE;
    if (!(assert & MPI_MODE_NOCHECK)) {
        double sent = leave(w, 1), at = sent + wire(w, 1);
        double freed = lock_word(e, target, excl); /* the request waits for that */
        if (freed > at)
            at = freed;
        tb__emu_advance(at + wire(w, 1), &E.idle, "rma lock");
        e->held[target] = (signed char)(excl ? 2 : 1);
    } else {
        e->held[target] = -1; /* the program says no one else locks it meanwhile */
    }
    int rc = PMPI_Win_lock(MPI_LOCK_SHARED, target, assert, win);
    tb__emu_leave();
    return rc;
}

EMU_API int MPI_Win_unlock(int target, MPI_Win win)
{
    BEGIN("MPI_Win_unlock");
    ewin *e = win_get(win, "MPI_Win_unlock");
    int w = world_of(e, target, "MPI_Win_unlock");
    complete(e, target);
    double sent = leave(w, 1); /* the release */
    int rc = PMPI_Win_unlock(target, win);
    if (e->held[target] > 0)
        unlock_word(e, target, e->held[target] == 2, sent + wire(w, 1));
    e->held[target] = 0;
    tb__emu_leave();
    return rc;
}

EMU_API int MPI_Win_lock_all(int assert, MPI_Win win)
{
    BEGIN("MPI_Win_lock_all");
    ewin *e = win_get(win, "MPI_Win_lock_all");
    for (int t = 0; t < e->c->size; t++) {
        if (e->held[t])
            tb__emu_die("MPI_Win_lock_all: target %d is locked already by this rank", t);
        if (assert & MPI_MODE_NOCHECK) {
            e->held[t] = -3;
            continue;
        }
        double freed = lock_word(e, t, 0);
        if (freed > 0) /* an exclusive holder's release: its news comes back */
            tb__emu_advance(freed + wire(e->c->world[t], 1), &E.idle, "rma lock");
        e->held[t] = 3;
    }
    int rc = PMPI_Win_lock_all(assert, win);
    tb__emu_leave();
    return rc;
}

EMU_API int MPI_Win_unlock_all(MPI_Win win)
{
    BEGIN("MPI_Win_unlock_all");
    ewin *e = win_get(win, "MPI_Win_unlock_all");
    complete(e, -1);
    int rc = PMPI_Win_unlock_all(win);
    for (int t = 0; t < e->c->size; t++) {
        if (e->held[t] == 3)
            unlock_word(e, t, 0, E.clock + wire(e->c->world[t], 1));
        e->held[t] = 0;
    }
    tb__emu_leave();
    return rc;
}

/* MPI_Win_flush and its kin: the origin waits for completion (a local
 * completion is taken as the remote one: the model has no cheaper). */
#define FLUSH(name, target, ...)                                                                   \
    {                                                                                              \
        BEGIN(#name);                                                                              \
        ewin *e = win_get(win, #name);                                                             \
        if ((target) >= 0)                                                                         \
            world_of(e, (target), #name);                                                          \
        complete(e, (target));                                                                     \
        int rc = P##name(__VA_ARGS__);                                                             \
        tb__emu_leave();                                                                           \
        return rc;                                                                                 \
    }

EMU_API int MPI_Win_flush(int target, MPI_Win win) FLUSH(MPI_Win_flush, target, target, win)
EMU_API int MPI_Win_flush_local(int target, MPI_Win win)
    FLUSH(MPI_Win_flush_local, target, target, win)
EMU_API int MPI_Win_flush_all(MPI_Win win) FLUSH(MPI_Win_flush_all, -1, win)
EMU_API int MPI_Win_flush_local_all(MPI_Win win) FLUSH(MPI_Win_flush_local_all, -1, win)

EMU_API int MPI_Win_free(MPI_Win *win)
{
    BEGIN("MPI_Win_free");
    ewin *e = win_get(*win, "MPI_Win_free");
    complete(e, -1);
    tb__emu_coll_barrier(e->c);
    int rc = PMPI_Win_free(win);
    PMPI_Win_unlock_all(e->locks);
    PMPI_Win_free(&e->locks);
    for (size_t i = 0; i < nwins; i++)
        if (wins[i] == e) {
            wins[i] = wins[--nwins];
            break;
        }
    tb__emu_comm_remove(e->c);
    PMPI_Comm_free(&e->dup);
    free(e->done);
    free(e->held);
    free(e);
    tb__emu_leave();
    return rc;
}
