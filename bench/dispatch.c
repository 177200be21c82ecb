/*
 * bench/dispatch.c - null-task dispatch rate: Tenbin's `single` policy next
 * to a hand-written MPI master-worker loop and the raw one-way small-message
 * rate, in one program so that bench/run can alternate them run by run.
 *
 *   mpiexec -n P bench_dispatch --mode tenbin|auto|hand|raw --tasks N
 *
 * Rank 0 prints one JSON line:
 *   {"mode": "tenbin", "ranks": 4, "tasks": 200000, "rate": ..., "wall_s": ...,
 *    "cpu_s": ...}
 * rate = tasks (or messages, for raw) per second over the dispatch phase only:
 *   tenbin  (one task per message) and auto (the default chunk rule, which
 *           sends several tiny tasks per message): tb_mw_summary.wall_s (tb_mw_run times from its own barrier to the
 *           end of the run on rank 0);
 *   hand    MPI_Wtime on rank 0 from just after a barrier until every result
 *           has arrived and every worker has been told to stop;
 *   raw     MPI_Wtime on rank 0 from just after a barrier until the last of
 *           the N messages has been received.
 * cpu_s is rank 0's process CPU time (tb_process_cputime) over the same
 * window (for tenbin: around tb_mw_run, which includes its set-up and the
 * summary gather, a few collectives).
 *
 * Every task is 8 bytes, every result 8 bytes; the work is nothing.  This is
 * a benchmark: it checks that every result arrived (exit status 1 otherwise)
 * but never judges the timings.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "tenbin/core.h"
#include "tenbin/mw.h"

enum { TAG_TASK = 1, TAG_RESULT = 2, TAG_STOP = 3, TAG_RAW = 4 };

typedef struct run_out {
    double wall_s;
    double cpu_s;
    uint64_t done; /* results (or messages) seen on rank 0 */
} run_out;

static void usage(FILE *out)
{
    fprintf(out, "usage: bench_dispatch --mode tenbin|auto|hand|raw --tasks N [--pairs K]\n"
                 "  (mpiexec -n P with P >= 2; rank 0 prints one JSON line;\n"
                 "   --pairs K: K rounds of tenbin and hand in this one job, in turn)\n");
}

/* ---- tenbin: tb_mw, policy single, chunk 1 (or auto) -------------------- */

static int chunk_auto; /* --mode auto */

static int gen_task(void *ctx, uint64_t id, tb_buf *task)
{
    (void)ctx;
    return tb_buf_append(task, &id, sizeof id);
}

static int work_null(void *ctx, uint64_t id, const void *task, size_t len, tb_buf *result)
{
    (void)ctx;
    (void)id;
    uint64_t v = 0;
    if (len == sizeof v)
        memcpy(&v, task, sizeof v);
    v ^= 0x5a5a5a5a5a5a5a5aull;
    return tb_buf_append(result, &v, sizeof v);
}

static int count_result(void *ctx, uint64_t id, const void *result, size_t len)
{
    (void)id;
    (void)result;
    if (len != sizeof(uint64_t))
        return TB_ERR_PARSE;
    ++*(uint64_t *)ctx;
    return TB_OK;
}

static int run_tenbin(uint64_t ntasks, run_out *out)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tb_mw *mw = NULL;
    uint64_t results = 0;
    int rc = tb_mw_create(&mw, MPI_COMM_WORLD);
    if (rc != TB_OK)
        return rc;
    /* Explicit, so TENBIN_MW_POLICY / TENBIN_MW_CHUNK cannot change the test. */
    if ((rc = tb_mw_set_policy(mw, "single")) != TB_OK || (rc = chunk_auto ? tb_mw_set_chunking(mw, "auto") : tb_mw_set_chunk(mw, 1)) != TB_OK ||
        (rc = tb_mw_set_worker(mw, work_null, NULL)) != TB_OK ||
        (rc = tb_mw_set_result(mw, count_result, &results)) != TB_OK ||
        (rc = tb_mw_set_generator(mw, ntasks, gen_task, NULL)) != TB_OK) {
        tb_mw_destroy(&mw);
        return rc;
    }
    double c0 = tb_process_cputime();
    rc = tb_mw_run(mw);
    double c1 = tb_process_cputime();
    tb_mw_summary s;
    if (rc == TB_OK)
        rc = tb_mw_get_summary(mw, &s);
    if (rc == TB_OK) {
        out->wall_s = s.wall_s;
        out->cpu_s = c1 - c0;
        out->done = rank == 0 ? results : 0;
    }
    tb_mw_destroy(&mw);
    return rc;
}

/* ---- hand: the textbook MPI master-worker loop -------------------------- */

static int run_hand(uint64_t ntasks, run_out *out)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        double t0 = MPI_Wtime(), c0 = tb_process_cputime();
        uint64_t next = 0, got = 0;
        for (int w = 1; w < size; w++) {
            if (next < ntasks) {
                MPI_Send(&next, 1, MPI_UINT64_T, w, TAG_TASK, MPI_COMM_WORLD);
                next++;
            } else {
                MPI_Send(NULL, 0, MPI_UINT64_T, w, TAG_STOP, MPI_COMM_WORLD);
            }
        }
        while (got < ntasks) {
            uint64_t res;
            MPI_Status st;
            MPI_Recv(&res, 1, MPI_UINT64_T, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &st);
            got++;
            if (next < ntasks) {
                MPI_Send(&next, 1, MPI_UINT64_T, st.MPI_SOURCE, TAG_TASK, MPI_COMM_WORLD);
                next++;
            } else {
                MPI_Send(NULL, 0, MPI_UINT64_T, st.MPI_SOURCE, TAG_STOP, MPI_COMM_WORLD);
            }
        }
        out->wall_s = MPI_Wtime() - t0;
        out->cpu_s = tb_process_cputime() - c0;
        out->done = got;
    } else {
        for (;;) {
            uint64_t task;
            MPI_Status st;
            MPI_Recv(&task, 1, MPI_UINT64_T, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (st.MPI_TAG == TAG_STOP)
                break;
            uint64_t res = task ^ 0x5a5a5a5a5a5a5a5aull;
            MPI_Send(&res, 1, MPI_UINT64_T, 0, TAG_RESULT, MPI_COMM_WORLD);
        }
    }
    return TB_OK;
}

/* ---- raw: every non-root rank streams 8-byte messages to rank 0 ---------- */

static int run_raw(uint64_t nmsgs, run_out *out)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t nsend = (uint64_t)size > 1
                         ? nmsgs * (uint64_t)rank / (uint64_t)(size - 1) -
                               nmsgs * (uint64_t)(rank > 0 ? rank - 1 : 0) / (uint64_t)(size - 1)
                         : 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        double t0 = MPI_Wtime(), c0 = tb_process_cputime();
        uint64_t v;
        for (uint64_t i = 0; i < nmsgs; i++)
            MPI_Recv(&v, 1, MPI_UINT64_T, MPI_ANY_SOURCE, TAG_RAW, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        out->wall_s = MPI_Wtime() - t0;
        out->cpu_s = tb_process_cputime() - c0;
        out->done = nmsgs;
    } else {
        for (uint64_t i = 0; i < nsend; i++)
            MPI_Send(&i, 1, MPI_UINT64_T, 0, TAG_RAW, MPI_COMM_WORLD);
    }
    return TB_OK;
}

/* --pairs K: tenbin (fn) and hand in turn within this job, the order
 * swapped every round; one JSON line a round and a summary (rank 0).  Both
 * loops then run on the same ranks, placed once, seconds apart instead of
 * a process start apart: the per-round ratios spread less than those of
 * separate jobs.  Every run is checked as in one-mode use, and the ranks
 * agree after each round whether to go on (a failure seen on rank 0 alone
 * must not leave the others waiting in the next round). */
static int run_pairs(int (*fn)(uint64_t, run_out *), const char *mode, uint64_t ntasks, long pairs,
                     int rank, int size)
{
    double *ratio = malloc((size_t)pairs * sizeof *ratio);
    double *rt = malloc((size_t)pairs * sizeof *rt), *rh = malloc((size_t)pairs * sizeof *rh);
    int status = ratio && rt && rh ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    for (long k = 0; k < pairs && status == 0; k++) {
        run_out o[2] = {{0, 0, 0}, {0, 0, 0}}; /* [0] tenbin, [1] hand */
        for (int j = 0; j < 2 && status == 0; j++) {
            int which = (int)((k + j) % 2);
            int rc = which == 0 ? fn(ntasks, &o[0]) : run_hand(ntasks, &o[1]);
            if (rank == 0 && (rc != TB_OK || o[which].done != ntasks)) {
                fprintf(stderr, "bench_dispatch: round %ld, %s: %s\n", k,
                        which == 0 ? mode : "hand",
                        rc != TB_OK ? tb_strerror(rc) : "not every result arrived");
                status = 1;
            } else if (rc != TB_OK) {
                status = 1;
            }
        }
        MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0 && status == 0) {
            rt[k] = (double)ntasks / o[0].wall_s;
            rh[k] = (double)ntasks / o[1].wall_s;
            ratio[k] = rt[k] / rh[k];
            printf("{\"mode\": \"pair\", \"round\": %ld, \"%s\": %.1f, \"hand\": %.1f, "
                   "\"ratio\": %.4f}\n",
                   k, mode, rt[k], rh[k], ratio[k]);
        }
    }
    tb_stats sr, st, sh;
    if (rank == 0 && status == 0 && tb_stats_compute(ratio, (size_t)pairs, &sr) == TB_OK &&
        tb_stats_compute(rt, (size_t)pairs, &st) == TB_OK &&
        tb_stats_compute(rh, (size_t)pairs, &sh) == TB_OK) {
        printf("{\"mode\": \"pairs\", \"ranks\": %d, \"tasks\": %" PRIu64 ", \"pairs\": %ld, "
               "\"ratio_median\": %.4f, \"ratio_min\": %.4f, \"ratio_max\": %.4f, "
               "\"%s_median\": %.1f, \"hand_median\": %.1f}\n",
               size, ntasks, pairs, sr.median, sr.min, sr.max, mode, st.median, sh.median);
        fflush(stdout);
    }
    free(ratio);
    free(rt);
    free(rh);
    return status;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const char *mode = NULL;
    long ntasks = 200000, pairs = 0;
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
            mode = argv[++i];
        } else if (strcmp(argv[i], "--tasks") == 0 && i + 1 < argc) {
            if (tb_parse_long(argv[++i], 1, 1L << 40, &ntasks) != TB_OK)
                bad = 1;
        } else if (strcmp(argv[i], "--pairs") == 0 && i + 1 < argc) {
            if (tb_parse_long(argv[++i], 1, 100000, &pairs) != TB_OK)
                bad = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            if (rank == 0)
                usage(stdout);
            MPI_Finalize();
            return 0;
        } else {
            bad = 1;
        }
    }
    int (*fn)(uint64_t, run_out *) = NULL;
    if (mode && strcmp(mode, "tenbin") == 0)
        fn = run_tenbin;
    else if (mode && strcmp(mode, "auto") == 0) {
        fn = run_tenbin;
        chunk_auto = 1;
    }
    else if (mode && strcmp(mode, "hand") == 0)
        fn = run_hand;
    else if (mode && strcmp(mode, "raw") == 0)
        fn = run_raw;
    if (pairs > 0 && fn != run_tenbin) { /* pairs: tenbin or auto against hand */
        if (rank == 0)
            fprintf(stderr, "bench_dispatch: --pairs needs --mode tenbin or auto\n");
        bad = 1;
    }
    if (bad || !fn || size < 2) {
        if (rank == 0) {
            if (size < 2)
                fprintf(stderr, "bench_dispatch: needs at least 2 ranks (got %d)\n", size);
            usage(stderr);
        }
        MPI_Finalize();
        return 2;
    }

    if (pairs > 0) {
        int st = run_pairs(fn, mode, (uint64_t)ntasks, pairs, rank, size);
        MPI_Finalize();
        return st;
    }
    run_out r = {0, 0, 0};
    int rc = fn((uint64_t)ntasks, &r);
    int status = 0;
    if (rank == 0) {
        if (rc != TB_OK) {
            fprintf(stderr, "bench_dispatch: mode %s failed: %s\n", mode, tb_strerror(rc));
            status = 1;
        } else if (r.done != (uint64_t)ntasks) {
            fprintf(stderr, "bench_dispatch: mode %s delivered %" PRIu64 " of %ld\n", mode,
                    r.done, ntasks);
            status = 1;
        } else {
            printf("{\"mode\": \"%s\", \"ranks\": %d, \"tasks\": %ld, \"rate\": %.1f, "
                   "\"wall_s\": %.6f, \"cpu_s\": %.6f}\n",
                   mode, size, ntasks, r.wall_s > 0 ? (double)ntasks / r.wall_s : 0.0, r.wall_s,
                   r.cpu_s);
            fflush(stdout);
        }
    } else if (rc != TB_OK) {
        status = 1;
    }
    MPI_Finalize();
    return status;
}
