/*
 * mw_fault.c - a master-worker run whose user code fails in a chosen way on
 * one task, for tests/cli/faults.sh.
 *
 *   mpiexec -n P mw_fault error|segv|fpe|hang|result|disagree|ok TASK OUT [TIMEOUT]
 *
 * 64 tasks, policy single; task TASK's worker function returns an error,
 * dereferences a null pointer, raises SIGFPE or sleeps for ever, or its
 * result function fails.  Rank 0 writes OUT (the sum of the results) only
 * when the run succeeds, through a temporary name renamed at the end, and
 * prints one line naming the failure otherwise: "mw_fault: task T on rank
 * R failed: ...".  Exit status: 0 ok, 1 the run failed, 2 bad usage.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "tenbin/core.h"
#include "tenbin/mw.h"

enum { NTASKS = 64 };

typedef struct fault {
    const char *mode;
    uint64_t task;
    uint64_t sum;
} fault;

static int gen(void *ctx, uint64_t id, tb_buf *task)
{
    (void)ctx;
    return tb_buf_append(task, &id, sizeof id);
}

static int work(void *ctx, uint64_t id, const void *task, size_t len, tb_buf *result)
{
    fault *f = ctx;
    (void)task;
    (void)len;
    if (id == f->task) {
        if (strcmp(f->mode, "error") == 0)
            return TB_ERR_TASK;
        if (strcmp(f->mode, "segv") == 0) {
            volatile int *p = NULL;
            *p = 1;
        }
        if (strcmp(f->mode, "fpe") == 0)
            raise(SIGFPE);
        if (strcmp(f->mode, "hang") == 0)
            for (;;) {
                struct timespec ts = {1, 0};
                nanosleep(&ts, NULL);
            }
    }
    uint64_t v = id * id;
    return tb_buf_append(result, &v, sizeof v);
}

static int on_result(void *ctx, uint64_t id, const void *result, size_t len)
{
    fault *f = ctx;
    if (strcmp(f->mode, "result") == 0 && id == f->task)
        return TB_ERR_IO;
    uint64_t v = 0;
    if (len != sizeof v)
        return TB_ERR_PARSE;
    memcpy(&v, result, sizeof v);
    f->sum += v;
    return TB_OK;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long task = 0;
    double timeout = 0;
    if (argc < 4 || argc > 5 || tb_parse_long(argv[2], 0, NTASKS - 1, &task) != TB_OK ||
        (argc == 5 && tb_parse_double(argv[4], &timeout) != TB_OK)) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: mw_fault error|segv|fpe|hang|result|disagree|ok TASK OUT [TIMEOUT]\n");
        MPI_Finalize();
        return 2;
    }
    fault f = {argv[1], (uint64_t)task, 0};
    tb_mw *mw = NULL;
    int rc = tb_mw_create(&mw, MPI_COMM_WORLD);
    if (rc == TB_OK)
        /* disagree: the last rank asks for another policy, which the run
         * must refuse on every rank before it starts */
        rc = tb_mw_set_policy(mw, strcmp(f.mode, "disagree") == 0 && rank == 2 ? "multi:2"
                                                                                : "single");
    if (rc == TB_OK)
        rc = tb_mw_set_chunk(mw, 1);
    if (rc == TB_OK && argc == 5) /* else TENBIN_MW_TASK_TIMEOUT's */
        rc = tb_mw_set_task_timeout(mw, timeout);
    if (rc == TB_OK)
        rc = tb_mw_set_worker(mw, work, &f);
    if (rc == TB_OK)
        rc = tb_mw_set_result(mw, on_result, &f);
    if (rc == TB_OK)
        rc = tb_mw_set_generator(mw, NTASKS, gen, NULL);
    if (rc == TB_OK)
        rc = tb_mw_run(mw);
    tb_mw_summary s;
    memset(&s, 0, sizeof s);
    if (mw && tb_mw_get_summary(mw, &s) != TB_OK)
        memset(&s, 0, sizeof s);
    if (rank == 0 && rc == TB_OK) {
        char line[64];
        int n = snprintf(line, sizeof line, "%" PRIu64 "\n", f.sum);
        rc = tb_write_file_atomic(argv[3], line, (size_t)n);
    }
    if (rank == 0 && rc != TB_OK) {
        if (s.failed)
            fprintf(stderr, "mw_fault: task %" PRIu64 " on rank %d failed: %s\n", s.failed_task,
                    s.failed_rank, tb_strerror(s.failed_code));
        else
            fprintf(stderr, "mw_fault: run failed: %s\n", tb_strerror(rc));
    }
    tb_mw_destroy(&mw);
    MPI_Finalize();
    return rc == TB_OK ? 0 : 1;
}
