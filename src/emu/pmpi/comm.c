/*
 * comm.c - libtenbin-emu.so's communicators (emu.c): the program's
 * communicators with the hidden ones beside each (headers, collectives; for
 * an intercommunicator, its local group), their contexts, and the MPI_Comm_*
 * and MPI_Intercomm_* calls that make and free them.
 */
#define _GNU_SOURCE
#include "emu/pmpi/emu.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "emu/proto.h"
#include "emu/ring.h"
#include "emu/wire.h"

/* ---- communicators ----------------------------------------------------- */

static ecomm *comm_find(MPI_Comm c)
{
    for (size_t i = 0; i < E.ncomms; i++)
        if (E.comms[i]->user == c)
            return E.comms[i];
    return NULL;
}

ecomm *tb__emu_comm_get(MPI_Comm c, const char *call)
{
    ecomm *e = comm_find(c);
    if (!e)
        tb__emu_die("%s: a communicator not made by an emulated call (MPI_Comm_dup, _split, "
                    "_split_type, _create, MPI_Intercomm_create, _merge)",
                    call);
    return e;
}

static ecomm *comm_new(MPI_Comm u, uint32_t ctx, int owned);

/*
 * The local group of intercommunicator e as a hidden intracommunicator (its
 * collectives' steps inside the group): both groups merge, then split by
 * group.  Collective over both groups, as e's creation is.
 */
static ecomm *local_of(const ecomm *e)
{
    MPI_Group g, wg;
    PMPI_Comm_group(e->user, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *r = malloc((size_t)e->size * sizeof *r), *w = malloc((size_t)e->size * sizeof *w);
    if (!r || !w)
        tb__emu_oom();
    for (int i = 0; i < e->size; i++)
        r[i] = i;
    PMPI_Group_translate_ranks(g, e->size, r, wg, w);
    int lmin = INT_MAX, rmin = INT_MAX;
    for (int i = 0; i < e->size; i++)
        lmin = w[i] < lmin ? w[i] : lmin;
    for (int i = 0; i < e->nworld; i++)
        rmin = e->world[i] < rmin ? e->world[i] : rmin;
    free(r);
    free(w);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    int high = lmin > rmin; /* the groups are disjoint: one of each */
    MPI_Comm m, l;
    PMPI_Intercomm_merge(e->user, high, &m);
    PMPI_Comm_split(m, high, e->rank, &l);
    PMPI_Comm_free(&m);
    return comm_new(l, e->ctx | CTX_LOCAL, 1);
}

static ecomm *comm_new(MPI_Comm u, uint32_t ctx, int owned)
{
    ecomm *e = calloc(1, sizeof *e);
    if (!e)
        tb__emu_oom();
    e->user = u;
    e->ctx = ctx;
    e->owned = owned;
    PMPI_Comm_size(u, &e->size);
    PMPI_Comm_rank(u, &e->rank);
    PMPI_Comm_test_inter(u, &e->inter);
    e->nworld = e->size;
    if (e->inter)
        PMPI_Comm_remote_size(u, &e->nworld);
    e->world = malloc((size_t)e->nworld * sizeof *e->world);
    if (!e->world)
        tb__emu_oom();
    /* Over an intercommunicator this gathers the remote group's. */
    PMPI_Allgather(&E.wrank, 1, MPI_INT, e->world, 1, MPI_INT, u);
    PMPI_Comm_dup(u, &e->hdr);
    PMPI_Comm_dup(u, &e->coll);
    PMPI_Comm_dup(u, &e->chdr);
    if (e->inter)
        e->local = local_of(e);
    return e;
}

/* Register u (a new communicator) with ctx; collective over u. */
ecomm *tb__emu_comm_add(MPI_Comm u, uint32_t ctx, int owned)
{
    ecomm *e = comm_new(u, ctx, owned);
    GROW(E.comms, E.ncomms, E.capcomms);
    E.comms[E.ncomms++] = e;
    return e;
}

/* The program freed it: it is no longer found, but requests may still point
 * at it, so it lives until MPI_Finalize. */
static void comm_retire(ecomm *e)
{
    UNORDERED_REMOVE(E.comms, E.ncomms, e);
    GROW(E.dead, E.ndead, E.capdead);
    E.dead[E.ndead++] = e;
}

void tb__emu_comm_remove(ecomm *e)
{
    UNORDERED_REMOVE(E.comms, E.ncomms, e);
    if (e->local) {
        PMPI_Comm_free(&e->local->user); /* ours, hidden */
        tb__emu_comm_remove(e->local);
    }
    PMPI_Comm_free(&e->hdr);
    PMPI_Comm_free(&e->coll);
    PMPI_Comm_free(&e->chdr);
    free(e->world);
    free(e);
}

int tb__emu_comm_rank_of_world(const ecomm *c, int w)
{
    for (int i = 0; i < c->nworld; i++)
        if (c->world[i] == w)
            return i;
    return -1;
}

uint32_t tb__emu_ctx_of(const ecomm *c, int coll) { return coll ? c->ctx | 0x80000000u : c->ctx; }

/* A context past every one in use: communicators are numbered in the order
 * they are made, far below CTX_LOCAL. */
static uint32_t new_ctx(unsigned m)
{
    if (m >= CTX_LOCAL)
        tb__emu_die("more than %u communicators made: not emulated", CTX_LOCAL);
    E.next_ctx = m + 1;
    return m;
}

/*
 * The greatest of v over the members of `group` and those of the group whose
 * leader is rank `remote` of `peer` (which matters at `leader` only): reduce to
 * the leader over group, the two leaders exchange theirs over peer, the
 * leader broadcasts over group.  Both groups call it.
 */
static unsigned agree_across(ecomm *group, int leader, ecomm *peer, int remote, unsigned v)
{
    unsigned m = 0;
    tb__emu_coll_reduce(group, &v, &m, 1, MPI_UNSIGNED, MPI_MAX, leader);
    if (group->rank == leader) {
        unsigned theirs = 0;
        ereq q;
        tb__emu_send_start(&q, peer, 1, &m, 1, MPI_UNSIGNED, remote, COLL_TAG_AGREE, MODE_STD);
        tb__emu_recv_known(peer, 1, &theirs, 1, MPI_UNSIGNED, remote, COLL_TAG_AGREE,
                           MPI_STATUS_IGNORE, 0);
        tb__emu_send_finish(&q);
        if (theirs > m)
            m = theirs;
    }
    tb__emu_coll_bcast(group, &m, 1, MPI_UNSIGNED, leader);
    return m;
}

/* Agree on a context for a communicator made from parent: an emulated
 * allreduce over it (over an intercommunicator, over both its groups). */
static uint32_t agree_ctx(ecomm *parent)
{
    if (parent->inter)
        return new_ctx(agree_across(parent->local, 0, parent, 0, E.next_ctx));
    unsigned v = E.next_ctx, m = 0;
    tb__emu_coll_allreduce(parent, &v, &m, 1, MPI_UNSIGNED, MPI_MAX);
    return new_ctx(m);
}

uint32_t tb__emu_agree_ctx(ecomm *parent) { return agree_ctx(parent); }

/* Every communicator constructor: agree on the new one's context over the
 * parent (an emulated allreduce), let MPI make it, register it. */
#define COMM_MAKE(name, comm, out, ...)                                                            \
    do {                                                                                           \
        BEGIN(#name);                                                                              \
        uint32_t ctx_ = agree_ctx(tb__emu_comm_get(comm, #name));                                  \
        P##name(comm, __VA_ARGS__, out);                                                           \
        if (*(out) != MPI_COMM_NULL)                                                               \
            tb__emu_comm_add(*(out), ctx_, 1);                                                     \
        END();                                                                                     \
    } while (0)

EMU_API int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
    BEGIN("MPI_Comm_dup");
    uint32_t ctx = agree_ctx(tb__emu_comm_get(comm, "MPI_Comm_dup"));
    PMPI_Comm_dup(comm, out);
    tb__emu_comm_add(*out, ctx, 1);
    END();
}

EMU_API int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *out)
{
    COMM_MAKE(MPI_Comm_dup_with_info, comm, out, info);
}

EMU_API int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
    COMM_MAKE(MPI_Comm_split, comm, out, color, key);
}

EMU_API int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out)
{
    COMM_MAKE(MPI_Comm_split_type, comm, out, type, key, info);
}

EMU_API int MPI_Comm_create(MPI_Comm comm, MPI_Group g, MPI_Comm *out)
{
    COMM_MAKE(MPI_Comm_create, comm, out, g);
}

/*
 * An intercommunicator: the members agree on its context across the two
 * groups (reduce in each group to its leader, the leaders exchange over the
 * peer communicator, broadcast in each group), as an allreduce over the
 * members would.
 */
EMU_API int MPI_Intercomm_create(MPI_Comm local, int local_leader, MPI_Comm peer,
                                 int remote_leader, int tag, MPI_Comm *out)
{
    BEGIN("MPI_Intercomm_create");
    ecomm *l = tb__emu_comm_get(local, "MPI_Intercomm_create");
    if (l->inter)
        tb__emu_die("MPI_Intercomm_create: its local communicator is an intercommunicator");
    ecomm *p = l->rank == local_leader ? tb__emu_comm_get(peer, "MPI_Intercomm_create") : NULL;
    uint32_t ctx = new_ctx(agree_across(l, local_leader, p, remote_leader, E.next_ctx));
    PMPI_Intercomm_create(local, local_leader, peer, remote_leader, tag, out);
    if (*out != MPI_COMM_NULL)
        tb__emu_comm_add(*out, ctx, 1);
    END();
}

EMU_API int MPI_Intercomm_merge(MPI_Comm inter, int high, MPI_Comm *out)
{
    BEGIN("MPI_Intercomm_merge");
    ecomm *c = tb__emu_comm_get(inter, "MPI_Intercomm_merge");
    if (!c->inter)
        tb__emu_die("MPI_Intercomm_merge: not an intercommunicator");
    uint32_t ctx = agree_ctx(c);
    PMPI_Intercomm_merge(inter, high, out);
    tb__emu_comm_add(*out, ctx, 1);
    END();
}

/* What Open MPI does with a communicator of the run itself: a barrier over
 * it, then MPI_Comm_free.  The barrier is the emulated one; the real call is
 * MPI_Comm_free, since MPI_Comm_disconnect's real barrier would hold this
 * rank, deaf to the coordinator, until the last member is in (a member of the
 * remote group may still wait for a decision that needs this rank's report). */
EMU_API int MPI_Comm_disconnect(MPI_Comm *comm)
{
    BEGIN("MPI_Comm_disconnect");
    ecomm *e = tb__emu_comm_get(*comm, "MPI_Comm_disconnect");
    tb__emu_coll_barrier(e);
    if (e->owned)
        comm_retire(e);
    PMPI_Comm_free(comm);
    END();
}

EMU_API int MPI_Comm_free(MPI_Comm *comm)
{
    BEGIN("MPI_Comm_free");
    ecomm *e = comm_find(*comm);
    if (e && e->owned)
        comm_retire(e);
    PMPI_Comm_free(comm);
    END();
}
