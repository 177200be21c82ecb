/*
 * trace_mpi.c - gather every rank's trace events into one file on a root.
 *
 * Each rank serializes its events behind a leading ",\n" separator; the root
 * receives all pieces straight after the file header with one MPI_Gatherv,
 * turns the first separator into whitespace and appends the footer, so the
 * whole file is assembled in a single buffer without further copying.
 * MPI_Gatherv counts and displacements are ints: more than INT_MAX bytes in
 * total is refused with TB_ERR_RANGE (decided on the root and broadcast
 * before any data moves, so no rank is left inside a collective).
 */
#include "tenbin/core.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char header[] = "{\"traceEvents\":[";
static const char footer[] = "\n],\"displayTimeUnit\":\"ms\"}\n";
#define HEADER_LEN (sizeof header - 1)
#define FOOTER_LEN (sizeof footer - 1)

/* This rank's contribution: "" or ",\n" followed by its events. */
static int serialize_piece(const tb_trace *tr, tb_buf *b)
{
    if (tr == NULL)
        return TB_OK;
    TB_CHECK(tb_buf_append(b, ",\n", 2));
    size_t before = b->len;
    TB_CHECK(tb_trace_serialize(tr, b));
    if (b->len == before)
        tb_buf_clear(b); /* no events: send nothing, not a lone separator */
    return TB_OK;
}

/* Root: per-rank byte counts and offsets after the header, or an error code
 * (a rank's own failure travels as its negative size). */
static int plan(const int64_t *sizes, int n, int *counts, int *displs, int64_t *total)
{
    int64_t off = (int64_t)HEADER_LEN;
    for (int i = 0; i < n; i++) {
        if (sizes[i] < 0)
            return (int)sizes[i];
        if (sizes[i] > (int64_t)INT_MAX - off)
            return TB_ERR_RANGE;
        counts[i] = (int)sizes[i];
        displs[i] = (int)off;
        off += sizes[i];
    }
    *total = off;
    return TB_OK;
}

static int mpi_ok(int rc) { return rc == MPI_SUCCESS ? TB_OK : TB_ERR_MPI; }

/* Root: after the gather, make the assembled bytes valid JSON and write. */
static int finish_and_write(char *all, int64_t total, const char *path)
{
    memcpy(all, header, HEADER_LEN);
    /* The first piece's ",\n" becomes "\n " so the array does not start
     * with a comma; other separators stay. */
    if (total > (int64_t)HEADER_LEN)
        memcpy(all + HEADER_LEN, "\n ", 2);
    memcpy(all + total, footer, FOOTER_LEN);
    return tb_write_file_atomic(path, all, (size_t)total + FOOTER_LEN);
}

/* Root's bookkeeping for the exchange. */
typedef struct plan_t {
    int64_t *sizes;
    int *counts, *displs;
    char *all;
    int64_t total;
} plan_t;

static int plan_alloc(plan_t *p, int nranks)
{
    memset(p, 0, sizeof *p);
    p->sizes = malloc((size_t)nranks * sizeof *p->sizes);
    p->counts = malloc((size_t)nranks * sizeof *p->counts);
    p->displs = malloc((size_t)nranks * sizeof *p->displs);
    return p->sizes && p->counts && p->displs ? TB_OK : TB_ERR_NOMEM;
}

static void plan_free(plan_t *p)
{
    free(p->sizes);
    free(p->counts);
    free(p->displs);
    free(p->all);
}

/* Root, after the sizes are in: lay out the pieces and allocate the file. */
static int plan_layout(plan_t *p, int nranks, const char *path)
{
    if (path == NULL)
        return TB_ERR_INVALID;
    TB_CHECK(plan(p->sizes, nranks, p->counts, p->displs, &p->total));
    p->all = malloc((size_t)p->total + FOOTER_LEN);
    return p->all != NULL ? TB_OK : TB_ERR_NOMEM;
}

/* Every step is decided on the root and broadcast, so all ranks take the
 * same path through the collectives and return the same code. */
int tb_trace_write_merged(const tb_trace *tr, MPI_Comm comm, int root, const char *path)
{
    int rank, nranks;
    TB_CHECK(mpi_ok(MPI_Comm_rank(comm, &rank)));
    TB_CHECK(mpi_ok(MPI_Comm_size(comm, &nranks)));
    if (root < 0 || root >= nranks)
        return TB_ERR_INVALID;
    int is_root = rank == root;

    plan_t p;
    int st = is_root ? plan_alloc(&p, nranks) : TB_OK;
    tb_buf mine = TB_BUF_INIT;
    int rc = mpi_ok(MPI_Bcast(&st, 1, MPI_INT, root, comm));
    if (rc == TB_OK && st == TB_OK) {
        int local = serialize_piece(tr, &mine);
        int64_t size = local != TB_OK ? local : (int64_t)mine.len;
        rc = mpi_ok(MPI_Gather(&size, 1, MPI_INT64_T, is_root ? p.sizes : NULL, 1, MPI_INT64_T,
                               root, comm));
    }
    if (rc == TB_OK && st == TB_OK) {
        if (is_root)
            st = plan_layout(&p, nranks, path);
        rc = mpi_ok(MPI_Bcast(&st, 1, MPI_INT, root, comm));
    }
    if (rc == TB_OK && st == TB_OK) {
        rc = mpi_ok(MPI_Gatherv(mine.data, (int)mine.len, MPI_CHAR, is_root ? p.all : NULL,
                                is_root ? p.counts : NULL, is_root ? p.displs : NULL, MPI_CHAR,
                                root, comm));
        if (rc == TB_OK && is_root)
            st = finish_and_write(p.all, p.total, path);
        if (rc == TB_OK)
            rc = mpi_ok(MPI_Bcast(&st, 1, MPI_INT, root, comm));
    }
    if (is_root)
        plan_free(&p);
    tb_buf_free(&mine);
    return rc != TB_OK ? rc : st;
}
