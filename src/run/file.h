/*
 * file.h - one file written and read by every rank of a run at once, each at
 * its own offsets (the run layer, src/run/; internal): redist's checkpoints.
 *
 * MPI-IO underneath, so that ranks on several nodes may write disjoint parts
 * of one file on a shared file system (NFS, Lustre): plain pwrite from
 * several clients can clobber a neighbour's bytes in a shared page.  Errors
 * carry one line naming the file.
 */
#ifndef TB_RUN_FILE_H
#define TB_RUN_FILE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* Collective: create path empty for writing (an old file there is
 * replaced), or open it for reading.  TB_ERR_IO with err set on every rank
 * when it cannot be opened. */
int tb__run_file_create(MPI_Comm comm, const char *path, MPI_File *fh, char *err, size_t errlen);
int tb__run_file_open(MPI_Comm comm, const char *path, MPI_File *fh, char *err, size_t errlen);
/* Local: n bytes at byte offset off (any size: written in pieces). */
int tb__run_file_write_at(MPI_File fh, uint64_t off, const void *buf, size_t n);
/* Local: up to n bytes at off; *got says how many were there. */
int tb__run_file_read_at(MPI_File fh, uint64_t off, void *buf, size_t n, size_t *got);
/* The file's size in bytes. */
int tb__run_file_size(MPI_File fh, uint64_t *size);
/* Collective: make what was written durable (sync != 0), then close.  The
 * handle becomes MPI_FILE_NULL.  TB_ERR_IO if the sync or close failed on
 * any rank. */
int tb__run_file_close(MPI_Comm comm, MPI_File *fh, int sync);
/* Collective: rank 0 removes path (missing is fine). */
void tb__run_file_remove(MPI_Comm comm, const char *path);

#endif /* TB_RUN_FILE_H */
