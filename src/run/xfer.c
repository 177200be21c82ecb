/*
 * xfer.c - point-to-point transfers of strided user memory (xfer.h).
 */
#include "run/xfer.h"

#include <limits.h>
#include <stdlib.h>

#include "tenbin/core.h"

/* The datatype and count of a view; *owned says whether *t must be freed.
 * One run goes as bytes while its length fits an int, else as units. */
static int view_type(const tb__run_view *v, MPI_Datatype *t, int *n, int *owned)
{
    *owned = 0;
    if (v->count > INT_MAX || v->unit > INT_MAX || v->rows > INT_MAX ||
        (v->rows > 1 && v->stride > INT_MAX))
        return TB_ERR_RANGE;
    if (v->rows == 1 && (double)v->count * (double)v->unit <= INT_MAX) {
        *t = MPI_BYTE;
        *n = (int)(v->count * v->unit);
        return TB_OK;
    }
    MPI_Datatype unit;
    if (MPI_Type_contiguous((int)v->unit, MPI_BYTE, &unit) != MPI_SUCCESS)
        return TB_ERR_MPI;
    if (v->rows == 1) {
        MPI_Type_commit(&unit);
        *t = unit;
        *n = (int)v->count;
        *owned = 1;
        return TB_OK;
    }
    MPI_Datatype vec;
    int rc = MPI_Type_vector((int)v->rows, (int)v->count, (int)v->stride, unit, &vec);
    MPI_Type_free(&unit);
    if (rc != MPI_SUCCESS)
        return TB_ERR_MPI;
    MPI_Type_commit(&vec);
    *t = vec;
    *n = 1;
    *owned = 1;
    return TB_OK;
}

int tb__run_exchange(MPI_Comm comm, const tb__run_xfer *x, size_t n)
{
    if (n == 0)
        return TB_OK;
    MPI_Request *req = malloc(n * sizeof *req);
    MPI_Datatype *types = malloc(n * sizeof *types);
    int *owned = calloc(n, sizeof *owned);
    int rc = (req && types && owned) ? TB_OK : TB_ERR_NOMEM;
    size_t nreq = 0;
    for (size_t k = 0; rc == TB_OK && k < n; k++) {
        int cnt;
        rc = view_type(&x[k].at, &types[nreq], &cnt, &owned[nreq]);
        if (rc != TB_OK)
            break;
        int mrc = x[k].recv ? MPI_Irecv(x[k].at.base, cnt, types[nreq], x[k].peer, x[k].tag,
                                        comm, &req[nreq])
                            : MPI_Isend(x[k].at.base, cnt, types[nreq], x[k].peer, x[k].tag,
                                        comm, &req[nreq]);
        if (mrc != MPI_SUCCESS) {
            if (owned[nreq])
                MPI_Type_free(&types[nreq]);
            rc = TB_ERR_MPI;
            break;
        }
        nreq++;
    }
    if (nreq && MPI_Waitall((int)nreq, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS && rc == TB_OK)
        rc = TB_ERR_MPI;
    for (size_t k = 0; k < nreq; k++)
        if (owned[k])
            MPI_Type_free(&types[k]);
    free(req);
    free(types);
    free(owned);
    return rc;
}

int tb__run_pingpong(MPI_Comm comm, int peer, int tag, int first, void *buf, size_t bytes,
                     int reps, double *t)
{
    if (bytes > INT_MAX)
        return TB_ERR_RANGE;
    int n = (int)bytes;
    for (int i = -1; i < reps; i++) { /* round -1 warms up */
        double t0 = tb_wtime();
        int rc;
        if (first) {
            rc = MPI_Send(buf, n, MPI_BYTE, peer, tag, comm);
            if (rc == MPI_SUCCESS)
                rc = MPI_Recv(buf, n, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
        } else {
            rc = MPI_Recv(buf, n, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS)
                rc = MPI_Send(buf, n, MPI_BYTE, peer, tag, comm);
        }
        if (rc != MPI_SUCCESS)
            return TB_ERR_MPI;
        if (i >= 0)
            t[i] = (tb_wtime() - t0) / 2;
    }
    return TB_OK;
}

int tb__run_type_size(MPI_Datatype type, size_t *size, long *lb, long *extent)
{
    int sz;
    MPI_Aint l, e;
    if (MPI_Type_size(type, &sz) != MPI_SUCCESS || MPI_Type_get_extent(type, &l, &e) != MPI_SUCCESS)
        return TB_ERR_MPI;
    *size = sz > 0 ? (size_t)sz : 0;
    *lb = (long)l;
    *extent = (long)e;
    return TB_OK;
}
