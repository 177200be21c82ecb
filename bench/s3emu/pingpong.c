/*
 * pingpong.c - the LogP parameters of this machine's MPI between two ranks,
 * for the platform bench/s3-emu gives `tenbin emu` when it predicts a real
 * run of bench/simgrid/mw.c at P = 2.
 *
 *   mpiexec -n 2 pingpong [ITERS]      (default 20000 round trips per batch)
 *
 * Rank 0 and rank 1 exchange messages with MPI_Send/MPI_Recv on
 * MPI_COMM_WORLD, as mw.c does.  Round trips: the median over BATCHES
 * batches of the mean over ITERS round trips (after a warm-up batch), so a
 * batch is as long as an mw.c run of ITERS tasks and sees the same share of
 * preemptions on a shared machine:
 *
 *   rtt_1_s          a 1-byte message and a 1-byte reply
 *   rtt_24_28_s      a 24-byte message and a 28-byte reply: one mw.c task and
 *                    its result (rtt_24_28_min_s: the fastest batch)
 *
 * Overheads: the median over ITERS exchanges of a 24/28 ping-pong, minus
 * the cost of one MPI_Wtime call (wtime_s, median of batch means):
 *
 *   os_s             time rank 0 spends inside MPI_Send of the 24-byte
 *                    message (an eager send: it returns once the data is
 *                    handed over)
 *   or_s             time rank 0 spends inside MPI_Recv of the 28-byte reply
 *                    when the reply has already arrived: rank 0 first spins
 *                    for three round trips after its send, then calls MPI_Recv
 *
 * Prints one JSON line on rank 0.  bench/s3-emu sets L = rtt_24_28_s / 2 -
 * os_s - or_s, so that the LogP one-way time os + L + or is the measured half
 * round trip of mw.c's messages.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BATCHES = 7, TAG = 1 };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static unsigned char buf[64];

/* Mean round trip of iters exchanges: rank 0 sends `out` bytes, rank 1
 * answers with `back` bytes. */
static double rtt(int rank, long iters, int out, int back)
{
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(buf, out, MPI_BYTE, 1, TAG, MPI_COMM_WORLD);
            MPI_Recv(buf, back, MPI_BYTE, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, out, MPI_BYTE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, back, MPI_BYTE, 0, TAG, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) / (double)iters;
}

/* Time rank 0 spends in MPI_Send of 24 bytes (os[i]) and in MPI_Recv of the
 * 28-byte reply when it has already arrived (or_[i]), for each of iters
 * exchanges of a 24/28 ping-pong where rank 0 spins `spin` seconds between
 * its send and its receive. */
static void overheads(int rank, long iters, double spin, double *os, double *or_)
{
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            double t0 = MPI_Wtime();
            MPI_Send(buf, 24, MPI_BYTE, 1, TAG, MPI_COMM_WORLD);
            double t1 = MPI_Wtime();
            while (MPI_Wtime() - t1 < spin) {
            }
            double t2 = MPI_Wtime();
            MPI_Recv(buf, 28, MPI_BYTE, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double t3 = MPI_Wtime();
            os[i] = t1 - t0;
            or_[i] = t3 - t2;
        } else {
            MPI_Recv(buf, 24, MPI_BYTE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, 28, MPI_BYTE, 0, TAG, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *end = NULL;
    long iters = argc > 1 ? strtol(argv[1], &end, 10) : 20000;
    if (size != 2 || argc > 2 || (argc > 1 && *end != '\0') || iters < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 pingpong [ITERS]\n");
        MPI_Finalize();
        return 2;
    }
    memset(buf, 0, sizeof buf);

    /* the cost of MPI_Wtime itself */
    double w[BATCHES];
    for (int b = 0; b < BATCHES; b++) {
        double t0 = MPI_Wtime(), t = t0;
        for (long i = 0; i < iters; i++)
            t = MPI_Wtime();
        w[b] = (t - t0) / (double)iters;
    }
    double wtime = median(w, BATCHES);

    double r1[BATCHES], r24[BATCHES];
    (void)rtt(rank, iters, 1, 1); /* warm-up */
    (void)rtt(rank, iters, 24, 28);
    for (int b = 0; b < BATCHES; b++) {
        r1[b] = rtt(rank, iters, 1, 1);
        r24[b] = rtt(rank, iters, 24, 28);
    }
    double rtt1 = median(r1, BATCHES), rtt24 = median(r24, BATCHES);
    double rtt24_min = r24[0]; /* sorted by median() */
    /* rank 1's reply is there after about one round trip: wait three */
    double spin = 3 * rtt24;
    MPI_Bcast(&spin, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double *os = malloc((size_t)iters * sizeof *os), *or_ = malloc((size_t)iters * sizeof *or_);
    if (!os || !or_) {
        fprintf(stderr, "pingpong: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    overheads(rank, iters, spin, os, or_);
    double o_s = median(os, (int)iters) - wtime, o_r = median(or_, (int)iters) - wtime;
    if (rank == 0)
        printf("{\"iters\": %ld, \"batches\": %d, \"rtt_1_s\": %.4e, \"rtt_24_28_s\": %.4e, "
               "\"rtt_24_28_min_s\": %.4e, \"os_s\": %.4e, \"or_s\": %.4e, \"wtime_s\": %.4e}\n",
               iters, BATCHES, rtt1, rtt24, rtt24_min, o_s < 0 ? 0 : o_s, o_r < 0 ? 0 : o_r, wtime);
    free(os);
    free(or_);
    MPI_Finalize();
    return 0;
}
