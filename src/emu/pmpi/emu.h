/*
 * emu.h - the state of one emulated rank inside libtenbin-emu.so (internal).
 *
 * The library is loaded with LD_PRELOAD into an unmodified MPI program.  Its
 * MPI_* functions replace the MPI library's and call the PMPI_* ones.  Each
 * process is one rank of the emulated run and keeps:
 *
 *   - a virtual clock: the rank's time on the target platform.  CPU time
 *     the calling thread spends between MPI calls is compute, divided by the
 *     host's speed at that virtual time; MPI calls cost what the platform's
 *     network model says (tb_net_send, tb_net_recv_cost: the simulator's
 *     arithmetic);
 *   - a connection to the coordinator, which decides what virtual time
 *     alone can decide (which message an MPI_ANY_SOURCE receive or a probe
 *     sees) with conservative synchronisation (docs/emulator.md).
 *
 * The global state below is unavoidable in an interposition library: MPI's
 * own state is global.  It is touched by the thread that calls MPI only.
 */
#ifndef TB_EMU_PMPI_H
#define TB_EMU_PMPI_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "tenbin/core.h"
#include "tenbin/model.h"

/* One communicator the program uses, with the hidden ones beside it. */
typedef struct ecomm {
    MPI_Comm user;  /* the program's handle */
    MPI_Comm hdr;   /* headers of the program's messages (same tags) */
    MPI_Comm coll;  /* data of the emulated collectives */
    MPI_Comm chdr;  /* their headers; also the acknowledgements */
    uint32_t ctx;   /* the same on every member; ctx | 1<<31 for coll */
    int size, rank;
    int *world;     /* world rank of each member */
    int owned;      /* created by the program (freed with MPI_Comm_free) */
} ecomm;

/* The header that travels beside every emulated message (on ecomm.hdr or
 * ecomm.chdr, same source and tag, so the two streams match alike). */
typedef struct ehdr {
    double arrival;   /* virtual time the receiver can take it */
    uint64_t seq;     /* per (sender, receiver) pair, from 1 */
    uint64_t bytes;   /* size in bytes (count x type size) */
    int32_t rdv;      /* rendezvous: the sender waits for the receiver */
    int32_t sync;     /* synchronous send: acknowledge even if eager */
} ehdr;

#endif
