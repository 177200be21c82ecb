/*
 * comm.c - libtenbin-emu.so's communicators (emu.c): the program's
 * communicators with the hidden ones beside each (headers, collectives),
 * their contexts, and the MPI_Comm_* calls that make and free them.
 */
#define _GNU_SOURCE
#include "emu/pmpi/emu.h"

#include <arpa/inet.h>
#include <errno.h>
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
                    "_split_type, _create)",
                    call);
    return e;
}

/* Register u (a new intra-communicator) with ctx; collective over u. */
ecomm *tb__emu_comm_add(MPI_Comm u, uint32_t ctx, int owned)
{
    ecomm *e = calloc(1, sizeof *e);
    if (!e)
        tb__emu_oom();
    e->user = u;
    e->ctx = ctx;
    e->owned = owned;
    PMPI_Comm_size(u, &e->size);
    PMPI_Comm_rank(u, &e->rank);
    e->world = malloc((size_t)e->size * sizeof *e->world);
    if (!e->world)
        tb__emu_oom();
    PMPI_Allgather(&E.wrank, 1, MPI_INT, e->world, 1, MPI_INT, u);
    PMPI_Comm_dup(u, &e->hdr);
    PMPI_Comm_dup(u, &e->coll);
    PMPI_Comm_dup(u, &e->chdr);
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
    PMPI_Comm_free(&e->hdr);
    PMPI_Comm_free(&e->coll);
    PMPI_Comm_free(&e->chdr);
    free(e->world);
    free(e);
}

int tb__emu_comm_rank_of_world(const ecomm *c, int w)
{
    for (int i = 0; i < c->size; i++)
        if (c->world[i] == w)
            return i;
    return -1;
}

uint32_t tb__emu_ctx_of(const ecomm *c, int coll) { return coll ? c->ctx | 0x80000000u : c->ctx; }

static uint32_t agree_ctx(ecomm *parent)
{
    unsigned v = E.next_ctx, m = 0;
    tb__emu_coll_allreduce(parent, &v, &m, 1, MPI_UNSIGNED, MPI_MAX);
    E.next_ctx = m + 1;
    return m;
}

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

EMU_API int MPI_Comm_free(MPI_Comm *comm)
{
    BEGIN("MPI_Comm_free");
    ecomm *e = comm_find(*comm);
    if (e && e->owned)
        comm_retire(e);
    PMPI_Comm_free(comm);
    END();
}
