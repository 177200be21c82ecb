/*
 * coll.h - the collective steps a mechanism's driver takes around its run
 * (the run layer, src/run/; internal): making its private communicator,
 * broadcasting a verdict, gathering per-rank figures, the node layout.  The
 * one place besides the transport where the library calls MPI, so that a
 * driver's code does not depend on the substrate it runs on.  Each is
 * collective over comm; rank 0 is the root.
 */
#ifndef TB_RUN_COLL_H
#define TB_RUN_COLL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* A private duplicate of comm for a handle, with this rank and the size.
 * TB_ERR_MPI if MPI refuses. */
int tb__run_comm_dup(MPI_Comm comm, MPI_Comm *out, int *rank, int *size);
/* Free a communicator of tb__run_comm_dup (MPI_COMM_NULL: nothing). */
void tb__run_comm_free(MPI_Comm *c);
/* This rank and the size of comm. */
void tb__run_comm_info(MPI_Comm comm, int *rank, int *size);
/* Rank 0's `bytes` bytes at buf to every rank. */
void tb__run_bcast(MPI_Comm comm, void *buf, size_t bytes);
/* Every rank's `bytes` bytes to all[rank * bytes]: at rank 0 only (all may be
 * NULL on the others), or at every rank. */
void tb__run_gather(MPI_Comm comm, const void *mine, void *all, size_t bytes);
void tb__run_allgather(MPI_Comm comm, const void *mine, void *all, size_t bytes);
/* The sum of every rank's v: at every rank, or at rank 0 (elsewhere 0). */
double tb__run_sum_double(MPI_Comm comm, double v);
uint64_t tb__run_sum_u64_root(MPI_Comm comm, uint64_t v);
/* The smallest rank of comm on this rank's node (shared memory). */
int tb__run_node_leader(MPI_Comm comm);
/* In place: the element-wise maximum (minimum) over every rank of v[0..n).
 * TB_ERR_MPI if MPI fails. */
int tb__run_max_i64(MPI_Comm comm, int64_t *v, int n);
int tb__run_max_double(MPI_Comm comm, double *v, int n);
int tb__run_min_int(MPI_Comm comm, int *v, int n);
void tb__run_barrier(MPI_Comm comm);
/* End the whole job now (after the caller said why in one line). */
void tb__run_abort(MPI_Comm comm);

#endif /* TB_RUN_COLL_H */
