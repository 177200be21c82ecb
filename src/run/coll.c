/*
 * coll.c - the collective steps around a run (coll.h).
 */
#include "run/coll.h"

#include <limits.h>
#include <stdlib.h>

#include "tenbin/core.h"

int tb__run_comm_dup(MPI_Comm comm, MPI_Comm *out, int *rank, int *size)
{
    if (MPI_Comm_dup(comm, out) != MPI_SUCCESS) {
        *out = MPI_COMM_NULL;
        return TB_ERR_MPI;
    }
    tb__run_comm_info(*out, rank, size);
    return TB_OK;
}

void tb__run_comm_free(MPI_Comm *c)
{
    if (c && *c != MPI_COMM_NULL)
        MPI_Comm_free(c);
}

void tb__run_comm_info(MPI_Comm comm, int *rank, int *size)
{
    MPI_Comm_rank(comm, rank);
    MPI_Comm_size(comm, size);
}

/* MPI counts are ints: larger blocks go as several. */
void tb__run_bcast(MPI_Comm comm, void *buf, size_t bytes)
{
    unsigned char *p = buf;
    while (bytes > 0) {
        int n = bytes > INT_MAX ? INT_MAX : (int)bytes;
        MPI_Bcast(p, n, MPI_BYTE, 0, comm);
        p += n;
        bytes -= (size_t)n;
    }
}

void tb__run_gather(MPI_Comm comm, const void *mine, void *all, size_t bytes)
{
    MPI_Gather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, 0, comm);
}

void tb__run_allgather(MPI_Comm comm, const void *mine, void *all, size_t bytes)
{
    MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, comm);
}

double tb__run_sum_double(MPI_Comm comm, double v)
{
    double sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
    return sum;
}

uint64_t tb__run_sum_u64_root(MPI_Comm comm, uint64_t v)
{
    uint64_t sum = 0;
    MPI_Reduce(&v, &sum, 1, MPI_UINT64_T, MPI_SUM, 0, comm);
    return sum;
}

int tb__run_node_leader(MPI_Comm comm)
{
    int rank, size;
    tb__run_comm_info(comm, &rank, &size);
    MPI_Comm node;
    int leader = rank;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    return leader;
}

int tb__run_max_i64(MPI_Comm comm, int64_t *v, int n)
{
    return MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_MAX, comm) == MPI_SUCCESS
               ? TB_OK
               : TB_ERR_MPI;
}

int tb__run_max_double(MPI_Comm comm, double *v, int n)
{
    return MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, comm) == MPI_SUCCESS
               ? TB_OK
               : TB_ERR_MPI;
}

int tb__run_min_int(MPI_Comm comm, int *v, int n)
{
    return MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT, MPI_MIN, comm) == MPI_SUCCESS ? TB_OK
                                                                                    : TB_ERR_MPI;
}

void tb__run_barrier(MPI_Comm comm) { MPI_Barrier(comm); }

void tb__run_abort(MPI_Comm comm) { MPI_Abort(comm, 1); }
