/*
 * xfer.h - point-to-point transfers of user memory that a mechanism posts
 * all at once and waits for together (the run layer, src/run/; internal):
 * redist's halo exchanges and moves, and its probe's ping-pongs.
 *
 * Memory is described by a strided view, so a block's columns leave and
 * arrive where they are, without packing: under MPI a view becomes a
 * derived datatype (a vector of rows).  Messages between two ranks with one
 * tag are matched in the order they were posted (MPI's order).
 */
#ifndef TB_RUN_XFER_H
#define TB_RUN_XFER_H

#include <mpi.h>
#include <stddef.h>

/* `rows` runs of `count` units of `unit` bytes, the runs `stride` units
 * apart (stride >= count; rows == 1: one contiguous run, stride unused). */
typedef struct tb__run_view {
    void *base;
    size_t rows, count, unit, stride;
} tb__run_view;

typedef struct tb__run_xfer {
    int peer, tag;
    int recv; /* 1: receive into the view; 0: send it */
    tb__run_view at;
} tb__run_xfer;

/* Bytes a view covers (rows x count x unit). */
static inline double tb__run_view_bytes(const tb__run_view *v)
{
    return (double)v->rows * (double)v->count * (double)v->unit;
}

/* Post every transfer of x[0..n) and wait for all of them.  TB_ERR_MPI when
 * MPI refuses one (those already posted are still waited for), TB_ERR_RANGE
 * when a view does not fit MPI's int counts. */
int tb__run_exchange(MPI_Comm comm, const tb__run_xfer *x, size_t n);

/* `reps` + 1 ping-pongs of `bytes` at buf with peer (the first is a warm-up
 * and not timed); `first` says which side sends first.  t[i] (reps of them)
 * is round i's one-way time in seconds, half its round trip. */
int tb__run_pingpong(MPI_Comm comm, int peer, int tag, int first, void *buf, size_t bytes,
                     int reps, double *t);

/* The size and extent of a user's MPI datatype: TB_ERR_MPI when MPI cannot
 * say. */
int tb__run_type_size(MPI_Datatype type, size_t *size, long *lb, long *extent);

#endif /* TB_RUN_XFER_H */
