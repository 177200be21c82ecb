/*
 * file.c - one file for every rank, through MPI-IO (file.h).
 */
#include "run/file.h"

#include <limits.h>
#include <stdio.h>

#include "core/errbuf.h"
#include "tenbin/core.h"

/* Pieces of at most this many bytes (MPI counts are ints). */
enum { PIECE = 1 << 30 };

static int open_mode(MPI_Comm comm, const char *path, int amode, MPI_File *fh, char *err,
                     size_t errlen)
{
    *fh = MPI_FILE_NULL;
    int rc = MPI_File_open(comm, path, amode, MPI_INFO_NULL, fh);
    int ok = rc == MPI_SUCCESS;
    /* Some implementations fail on one rank only: agree. */
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (ok)
        return TB_OK;
    if (*fh != MPI_FILE_NULL)
        MPI_File_close(fh);
    char why[MPI_MAX_ERROR_STRING] = "refused";
    int wl = 0;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, why, &wl);
    return tb__errf(err, errlen, TB_ERR_IO, "%s: cannot %s: %s", path,
                    (amode & MPI_MODE_RDONLY) ? "read" : "write", why);
}

int tb__run_file_create(MPI_Comm comm, const char *path, MPI_File *fh, char *err, size_t errlen)
{
    tb__run_file_remove(comm, path);
    TB_CHECK(open_mode(comm, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, fh, err, errlen));
    return TB_OK;
}

int tb__run_file_open(MPI_Comm comm, const char *path, MPI_File *fh, char *err, size_t errlen)
{
    return open_mode(comm, path, MPI_MODE_RDONLY, fh, err, errlen);
}

int tb__run_file_write_at(MPI_File fh, uint64_t off, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        int k = n > PIECE ? PIECE : (int)n;
        MPI_Status st;
        int got = 0;
        if (MPI_File_write_at(fh, (MPI_Offset)off, p, k, MPI_BYTE, &st) != MPI_SUCCESS ||
            MPI_Get_count(&st, MPI_BYTE, &got) != MPI_SUCCESS || got != k)
            return TB_ERR_IO;
        p += k;
        off += (uint64_t)k;
        n -= (size_t)k;
    }
    return TB_OK;
}

int tb__run_file_read_at(MPI_File fh, uint64_t off, void *buf, size_t n, size_t *got)
{
    char *p = buf;
    *got = 0;
    while (n > 0) {
        int k = n > PIECE ? PIECE : (int)n;
        MPI_Status st;
        int c = 0;
        if (MPI_File_read_at(fh, (MPI_Offset)off, p, k, MPI_BYTE, &st) != MPI_SUCCESS ||
            MPI_Get_count(&st, MPI_BYTE, &c) != MPI_SUCCESS || c == MPI_UNDEFINED)
            return TB_ERR_IO;
        *got += (size_t)c;
        if (c < k)
            break; /* the end of the file */
        p += k;
        off += (uint64_t)k;
        n -= (size_t)k;
    }
    return TB_OK;
}

int tb__run_file_size(MPI_File fh, uint64_t *size)
{
    MPI_Offset s = 0;
    if (MPI_File_get_size(fh, &s) != MPI_SUCCESS || s < 0)
        return TB_ERR_IO;
    *size = (uint64_t)s;
    return TB_OK;
}

int tb__run_file_close(MPI_Comm comm, MPI_File *fh, int sync)
{
    int ok = 1;
    if (sync && MPI_File_sync(*fh) != MPI_SUCCESS)
        ok = 0;
    if (MPI_File_close(fh) != MPI_SUCCESS)
        ok = 0;
    *fh = MPI_FILE_NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    return ok ? TB_OK : TB_ERR_IO;
}

void tb__run_file_remove(MPI_Comm comm, const char *path)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0)
        remove(path);
    MPI_Barrier(comm);
}
