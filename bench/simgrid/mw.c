/*
 * mw.c - a plain MPI master-worker bag of N zero-work tasks, shaped like
 * Tenbin's `single` policy with chunk 1, for comparing `tenbin sim mw` with
 * SimGrid SMPI (bench/simgrid/run) and tenbin emu with real runs (bench/s3-*).
 *
 *   mpirun -n P mw N [W]      (or smpirun ... mw N)
 *
 * W (default 0): work per task, W steps of a dependent floating-point chain
 * on the worker (about 1.3 ns each on a 2020s x86 core), so that a task has a
 * CPU cost the emulator measures; 0 is the zero-work bag.
 *
 * Rank 0 is the master, ranks 1..P-1 the workers.  The master sends one task
 * to each worker, then loops: MPI_Recv(MPI_ANY_SOURCE) a result and, while
 * tasks are left, MPI_Send the next one to the worker that answered.  When
 * every result is in, it stops the workers along a binomial tree, as Tenbin
 * does: the list of ranks 1..P-1 is split, the upper half goes (in a stop
 * message that carries the rest of that half) to its first rank, which does
 * the same, and so on with the lower half.  A worker loops MPI_Recv a task,
 * MPI_Send its result, until it gets the stop, and passes it on.
 *
 * Message sizes are those of Tenbin's messages with --task-bytes 8
 * --result-bytes 8 (src/mw/mw_internal.h):
 *   task   = 4 (record count) + 8 (id) + 4 (length) + 8 (payload)              = 24 bytes
 *   result = 4 (record count) + 8 (id) + 4 (status) + 4 (length) + 8 (payload) = 28 bytes
 *   stop   = 4 (status) + 4 (count n) + 4 n (ranks to pass it on to)            = 8 + 4n bytes
 * The bytes' contents do not matter (zeros, the id in the id field).
 *
 * Makespan: as Tenbin's, from the start (every rank's MPI_Wtime just after
 * MPI_Init; under SMPI that is simulated time 0 for all) to the moment the
 * last rank is done (the master after its last stop, a worker when its stop
 * arrives): max over ranks of the end time minus min over ranks of the start.
 * Under SMPI MPI_Wtime is simulated time.  On a real machine the start times
 * of different ranks are not synchronised, so the figure is approximate there.
 *
 * Prints one JSON line on rank 0:
 *   {"ranks": P, "tasks": N, "makespan_s": ..., "start_spread_s": ..., "results": N}
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_TASK = 1, TAG_RESULT = 2, TAG_STOP = 3 };
enum { TASK_BYTES = 24, RESULT_BYTES = 28, BUF_BYTES = 32 };
enum { TAG_ANY = MPI_ANY_TAG };

/* Stop the cnt ranks of list along a binomial tree (Tenbin's stop_relay). */
static void stop_relay(const int32_t *list, uint32_t cnt, unsigned char *buf)
{
    while (cnt > 0) {
        uint32_t keep = cnt / 2, pass = cnt - keep;
        const int32_t *upper = list + keep;
        int32_t status = 0;
        uint32_t rest = pass - 1;
        memcpy(buf, &status, 4);
        memcpy(buf + 4, &rest, 4);
        memcpy(buf + 8, upper + 1, (size_t)rest * 4);
        MPI_Send(buf, (int)(8 + 4 * rest), MPI_BYTE, upper[0], TAG_STOP, MPI_COMM_WORLD);
        cnt = keep;
    }
}

static void put_id(unsigned char *msg, uint64_t id)
{
    memcpy(msg + 4, &id, sizeof id);
}

static uint64_t get_id(const unsigned char *msg)
{
    uint64_t id;
    memcpy(&id, msg + 4, sizeof id);
    return id;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double t_start = MPI_Wtime();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    char *end = NULL;
    long long n = argc > 1 ? strtoll(argv[1], &end, 10) : -1;
    int bad = argc < 2 || argc > 3 || *end != '\0' || n < 0 || size < 2;
    long long work = 0;
    if (!bad && argc == 3) {
        work = strtoll(argv[2], &end, 10);
        bad = *end != '\0' || work < 0;
    }
    if (bad) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -n P mw N [W]   (P >= 2 ranks, N >= 0 tasks, "
                            "W >= 0 work steps per task)\n");
        MPI_Finalize();
        return 2;
    }

    unsigned char msg[BUF_BYTES];
    memset(msg, 0, sizeof msg);
    /* stop messages: received in `stop`, passed on from `relay` */
    size_t stop_max = 8 + 4 * (size_t)size < BUF_BYTES ? BUF_BYTES : 8 + 4 * (size_t)size;
    unsigned char *stop = calloc(1, stop_max), *relay = calloc(1, stop_max);
    int32_t *list = calloc((size_t)size, sizeof *list);
    if (!stop || !relay || !list) {
        fprintf(stderr, "mw: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long long results = 0;
    if (rank == 0) {
        long long next = 0;
        int workers = size - 1;
        for (int w = 1; w <= workers && next < n; w++) {
            put_id(msg, (uint64_t)next++);
            MPI_Send(msg, TASK_BYTES, MPI_BYTE, w, TAG_TASK, MPI_COMM_WORLD);
        }
        while (results < n) {
            MPI_Status st;
            MPI_Recv(msg, BUF_BYTES, MPI_BYTE, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &st);
            (void)get_id(msg);
            results++;
            if (next < n) {
                put_id(msg, (uint64_t)next++);
                MPI_Send(msg, TASK_BYTES, MPI_BYTE, st.MPI_SOURCE, TAG_TASK, MPI_COMM_WORLD);
            }
        }
        for (int w = 1; w <= workers; w++)
            list[w - 1] = w;
        stop_relay(list, (uint32_t)workers, relay);
    } else {
        for (;;) {
            MPI_Status st;
            MPI_Recv(stop, (int)stop_max, MPI_BYTE, MPI_ANY_SOURCE, TAG_ANY, MPI_COMM_WORLD, &st);
            if (st.MPI_TAG == TAG_STOP) {
                uint32_t cnt;
                memcpy(&cnt, stop + 4, 4);
                memcpy(list, stop + 8, (size_t)cnt * 4);
                stop_relay(list, cnt, relay);
                break;
            }
            memcpy(msg, stop, TASK_BYTES);
            /* the work, then the result carries the task's id back */
            uint64_t id = get_id(msg);
            double x = (double)id;
            for (long long i = 0; i < work; i++)
                x = x * 0.999999 + 1.0;
            memset(msg, 0, sizeof msg);
            put_id(msg, id);
            memcpy(msg + 20, &x, sizeof x); /* the payload: keeps the loop */
            MPI_Send(msg, RESULT_BYTES, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
        }
    }
    double t_end = MPI_Wtime();

    double t_max = 0, t_min = 0, s_max = 0;
    MPI_Reduce(&t_end, &t_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t_start, &t_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t_start, &s_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("{\"ranks\": %d, \"tasks\": %lld, \"makespan_s\": %.9f, \"start_spread_s\": %.9f, "
               "\"results\": %lld}\n",
               size, n, t_max - t_min, s_max - t_min, results);
    free(stop);
    free(relay);
    free(list);
    MPI_Finalize();
    return 0;
}
