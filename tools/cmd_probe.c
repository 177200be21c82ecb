/*
 * cmd_probe.c - `tenbin probe`: measure this machine's (or cluster's) MPI as
 * LogGPS parameters, Netgauge-style, and write a platform file that
 * --platform and --sim accept as is (docs/platform.md, "Measuring a
 * platform").
 *
 * Started outside MPI, it runs itself under `mpiexec -n Pmax` (the largest
 * of --ranks); started by mpiexec (across real nodes, say), it measures in
 * that job.  Rank 0 and rank 1 measure; the other ranks sleep on a pending
 * receive, except while their run size P is measured.
 *
 * Measured, per message size s (rank 0 <-> rank 1, --reps each, medians):
 *   half_rtt  half a ping-pong round trip;
 *   os        time inside MPI_Send (eager sizes: the sender does not wait);
 *   or        time inside MPI_Recv of a message that MPI_Iprobe has seen;
 *   gap       (PRTT(n,0,s) - PRTT(1,0,s)) / (n - 1): n back-to-back sends,
 *             one reply, against one send and one reply (Netgauge's PRTT).
 * The rendezvous threshold S: the largest size whose MPI_Send returns while
 * the receiver is still away (it posts its receive 2 ms late); found by
 * doubling, then bisection to the byte.
 * Per run size P (sub-communicators of the first P ranks): rank 0 is a
 * master that sends one byte to each of the P - 1 others and receives
 * their s0-byte answers with MPI_ANY_SOURCE: the CPU time inside MPI_Send
 * and MPI_Recv (S3's o'_a + o'_b P: the overhead grows with the run).
 * Times are the monotonic clock less its own cost, medians over the
 * repetitions: a rank that loses its core in a call (ranks outnumbering
 * cores) makes an outlier, not the median.  Speeds: every rank times the same
 * loop; a host's speed is rank 0's host's time over its own.
 * A stop from outside (SIGINT, SIGTERM, SIGUSR1: tb_signals_catch) is agreed
 * on between timed calls, every STOP_EVERY repetitions: every rank ends
 * within milliseconds, rank 0 says what was measured, and nothing is
 * written (the platform file is written whole or not at all).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "tenbin/config.h"
#include "tenbin/core.h"
#include "tenbin/model.h"

static const char *const cmd = "probe";

enum { MAX_LIST = 64, TAG = 7, NBURST = 16, STOP_EVERY = 64 };

typedef struct probe_opts {
    long ranks[MAX_LIST], sizes[MAX_LIST];
    size_t nranks, nsizes;
    long reps;
    const char *out, *mpiexec;
    int json, quiet, progress;
} probe_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tenbin probe --out FILE [--ranks LIST] [--sizes LIST] [--reps N] [--json]\n"
            "\n"
            "Measure MPI on this machine (or, under mpiexec, between its nodes) as LogGPS\n"
            "parameters: L, os, or, g, G, O, the rendezvous threshold S and S3's per-rank\n"
            "overhead ob; print each with its standard error and write a platform file.\n"
            "\n"
            "  --out FILE      the platform (JSON) to write (required)\n"
            "  --ranks LIST    run sizes P for ob (default 2,8; 2 is always one): 2,4,8 or 2:16:2\n"
            "  --sizes LIST    message sizes in bytes (default 1,2,4,...,1048576)\n"
            "  --reps N        repetitions per measurement (default 200)\n"
            "  --mpiexec PATH  launcher, when started outside MPI (default %s)\n"
            "  --json          the measurements and the fit as one JSON object on stdout\n"
            "  --progress      a line on stderr per measurement (the default when stderr, or\n"
            "                  mpiexec's, is a terminal)\n"
            "  -q, --quiet     no table, no progress lines\n"
            "\n"
            "Across the nodes of a cluster, start it under mpiexec with rank 0 and rank 1 on\n"
            "two nodes, e.g. mpiexec -n 8 --map-by node tenbin probe --out site.json\n"
            "Ctrl-C, SIGTERM or SIGUSR1 stop it on every rank: one line, no file written,\n"
            "exit 128 + the signal.\n",
            TENBIN_MPIEXEC);
}

/* ---- measuring ----------------------------------------------------------- */

typedef struct sample {
    double *v;
    size_t n;
} sample;

/* Median and its standard error (1.2533 sigma / sqrt(n), sigma from the
 * median absolute deviation). */
static void med_err(double *v, size_t n, double *med, double *err)
{
    tb_stats st;
    tb_stats_compute(v, n, &st);
    double *d = malloc(n * sizeof *d);
    if (!d) {
        *med = st.median;
        *err = st.stddev;
        return;
    }
    for (size_t i = 0; i < n; i++)
        d[i] = fabs(v[i] - st.median);
    tb_stats dm;
    tb_stats_compute(d, n, &dm);
    free(d);
    *med = st.median;
    *err = 1.2533 * 1.4826 * dm.median / sqrt((double)n);
}

/* The cost of reading the clock, taken off every timed call. */
static double clock_cost;

static void measure_clock(void)
{
    double d[1001];
    for (int i = 0; i < 1001; i++) {
        double t0 = tb_wtime();
        d[i] = tb_wtime() - t0;
    }
    tb_stats st;
    tb_stats_compute(d, 1001, &st);
    clock_cost = st.median;
}

static void spin(double seconds)
{
    double t = tb_wtime() + seconds;
    while (tb_wtime() < t) {
    }
}

static int reps_for(long reps, long bytes)
{
    long cap = (64L << 20) / (bytes > 0 ? bytes : 1) / NBURST;
    long r = reps < cap ? reps : cap;
    return (int)(r < 10 ? 10 : r);
}

/* A stop from outside (tb_signals_catch) on any rank of comm, agreed by
 * all of them: the signal, or 0 to go on.  Never between a timed call's
 * clock readings. */
static int stop_agreed(MPI_Comm comm)
{
    int sig = tb_signals_pending();
    MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, comm);
    return sig;
}

/* Before repetition i: time to agree on a stop (at 0, then every
 * STOP_EVERY)?  Then the signal, or 0 to go on. */
static int stop_at(MPI_Comm comm, int i)
{
    return i % STOP_EVERY == 0 ? stop_agreed(comm) : 0;
}

/* Between rank 0 and 1 of comm; rank 0 gets the size's measurements.
 * Returns the signal that stopped it (out unset), or 0. */
static int measure_size(MPI_Comm comm, int rank, long bytes, long reps, int eager, char *buf,
                        char *buf2, tb_probe_size *out)
{
    int R = reps_for(reps, bytes), n = (int)bytes;
    double *t = calloc((size_t)R * 4, sizeof *t), *rtt = t, *os = t + R, *or_ = t + 2 * R,
           *gap = t + 3 * R;
    char ack = 0;
    int sig = 0;
    /* ping-pong, warm-up first */
    for (int i = -5; i < R && !(sig = stop_at(comm, i)); i++) {
        if (rank == 0) {
            double t0 = tb_wtime();
            MPI_Send(buf, n, MPI_BYTE, 1, TAG, comm);
            MPI_Recv(buf2, n, MPI_BYTE, 1, TAG, comm, MPI_STATUS_IGNORE);
            if (i >= 0)
                rtt[i] = (tb_wtime() - t0 - clock_cost) / 2;
        } else {
            MPI_Recv(buf2, n, MPI_BYTE, 0, TAG, comm, MPI_STATUS_IGNORE);
            MPI_Send(buf, n, MPI_BYTE, 0, TAG, comm);
        }
    }
    /* overheads (eager sizes only: a rendezvous send waits for the receiver) */
    for (int i = 0; !sig && eager && i < R && !(sig = stop_at(comm, i)); i++) {
        if (rank == 0) {
            double t0 = tb_wtime();
            MPI_Send(buf, n, MPI_BYTE, 1, TAG, comm);
            os[i] = tb_wtime() - t0 - clock_cost;
            MPI_Recv(&ack, 1, MPI_BYTE, 1, TAG, comm, MPI_STATUS_IGNORE);
            int there = 0;
            while (!there)
                MPI_Iprobe(1, TAG, comm, &there, MPI_STATUS_IGNORE);
            t0 = tb_wtime();
            MPI_Recv(buf2, n, MPI_BYTE, MPI_ANY_SOURCE, TAG, comm, MPI_STATUS_IGNORE);
            or_[i] = tb_wtime() - t0 - clock_cost;
            MPI_Send(&ack, 1, MPI_BYTE, 1, TAG, comm);
        } else {
            MPI_Recv(buf2, n, MPI_BYTE, 0, TAG, comm, MPI_STATUS_IGNORE);
            MPI_Send(&ack, 1, MPI_BYTE, 0, TAG, comm);
            MPI_Send(buf, n, MPI_BYTE, 0, TAG, comm);
            MPI_Recv(&ack, 1, MPI_BYTE, 0, TAG, comm, MPI_STATUS_IGNORE);
        }
    }
    /* gap: PRTT(NBURST,0,s) - PRTT(1,0,s) */
    for (int i = -2; !sig && i < R && !(sig = stop_at(comm, i)); i++) {
        double d[2];
        for (int k = 0; k < 2; k++) {
            int cnt = k ? NBURST : 1;
            if (rank == 0) {
                double t0 = tb_wtime();
                for (int j = 0; j < cnt; j++)
                    MPI_Send(buf, n, MPI_BYTE, 1, TAG, comm);
                MPI_Recv(&ack, 1, MPI_BYTE, 1, TAG, comm, MPI_STATUS_IGNORE);
                d[k] = tb_wtime() - t0;
            } else {
                for (int j = 0; j < cnt; j++)
                    MPI_Recv(buf2, n, MPI_BYTE, 0, TAG, comm, MPI_STATUS_IGNORE);
                MPI_Send(&ack, 1, MPI_BYTE, 0, TAG, comm);
            }
        }
        if (rank == 0 && i >= 0)
            gap[i] = (d[1] - d[0]) / (NBURST - 1);
    }
    if (rank == 0 && !sig) {
        out->bytes = (double)bytes;
        med_err(rtt, (size_t)R, &out->half_rtt, &out->e_half_rtt);
        med_err(gap, (size_t)R, &out->gap, &out->e_gap);
        if (eager) {
            med_err(os, (size_t)R, &out->os, &out->e_os);
            med_err(or_, (size_t)R, &out->or_, &out->e_or);
        }
        if (out->gap < 0)
            out->gap = 0;
    }
    free(t);
    return sig;
}

/* Does a send of bytes return before a receiver 2 ms late posts?  (rank 0's
 * answer, the median of three tries.) */
static int is_eager(MPI_Comm comm, int rank, long bytes, char *buf, char *buf2)
{
    const double late = 2e-3;
    int yes = 0;
    for (int k = 0; k < 3; k++) {
        char ack = 0;
        if (rank == 0) {
            double t0 = tb_wtime();
            MPI_Send(buf, (int)bytes, MPI_BYTE, 1, TAG, comm);
            yes += tb_wtime() - t0 < late / 2;
            MPI_Recv(&ack, 1, MPI_BYTE, 1, TAG, comm, MPI_STATUS_IGNORE);
        } else {
            spin(late);
            MPI_Recv(buf2, (int)bytes, MPI_BYTE, 0, TAG, comm, MPI_STATUS_IGNORE);
            MPI_Send(&ack, 1, MPI_BYTE, 0, TAG, comm);
        }
    }
    int ans = yes >= 2;
    MPI_Bcast(&ans, 1, MPI_INT, 0, comm);
    return ans;
}

/* The rendezvous threshold: the largest eager size, found among the sizes
 * (ascending) and then by bisection to the byte (the largest size if every
 * one is eager, 0 if even the smallest waits).  *sig: the signal that
 * stopped the search (the size returned is then meaningless), or 0. */
static long find_eager(MPI_Comm comm, int rank, const long *sizes, size_t n, char *buf,
                       char *buf2, int *sig)
{
    long lo = 0, hi = -1; /* lo eager, hi not */
    for (size_t i = 0; i < n && hi < 0 && !(*sig = stop_agreed(comm)); i++) {
        if (is_eager(comm, rank, sizes[i], buf, buf2))
            lo = sizes[i];
        else
            hi = sizes[i];
    }
    if (hi < 0 || *sig)
        return lo;
    while (hi - lo > 1 && !(*sig = stop_agreed(comm))) {
        long mid = lo + (hi - lo) / 2;
        if (is_eager(comm, rank, mid, buf, buf2))
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Rank 0 a master of the P ranks of comm: CPU time in MPI_Send of a byte to
 * each, in MPI_Recv(ANY_SOURCE) of their s0-byte answers once all are in.
 * Returns the signal that stopped it (out unset), or 0. */
static int measure_master(MPI_Comm comm, int rank, int P, long s0, long reps, char *buf,
                          tb_probe_run *out)
{
    int R = (int)reps, sig = 0;
    size_t n = (size_t)R * (size_t)(P - 1);
    double *os = rank == 0 ? calloc(2 * n, sizeof *os) : NULL, *or_ = os ? os + n : NULL;
    char go = 1;
    for (int i = -5; i < R && !(sig = stop_at(comm, i)); i++) {
        if (rank == 0) {
            for (int w = 1; w < P; w++) {
                double t0 = tb_wtime();
                MPI_Send(&go, 1, MPI_BYTE, w, TAG, comm);
                if (i >= 0)
                    os[(size_t)i * (P - 1) + (w - 1)] = tb_wtime() - t0 - clock_cost;
            }
            for (int w = 1; w < P; w++) { /* all answers in before the timed receives */
                int there = 0;
                while (!there)
                    MPI_Iprobe(w, TAG, comm, &there, MPI_STATUS_IGNORE);
            }
            for (int w = 1; w < P; w++) {
                double t0 = tb_wtime();
                MPI_Recv(buf, (int)s0, MPI_BYTE, MPI_ANY_SOURCE, TAG, comm, MPI_STATUS_IGNORE);
                if (i >= 0)
                    or_[(size_t)i * (P - 1) + (w - 1)] = tb_wtime() - t0 - clock_cost;
            }
        } else {
            MPI_Recv(&go, 1, MPI_BYTE, 0, TAG, comm, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)s0, MPI_BYTE, 0, TAG, comm);
        }
    }
    if (rank == 0 && !sig) {
        out->P = P;
        med_err(os, n, &out->os, &out->e_os);
        med_err(or_, n, &out->or_, &out->e_or);
    }
    free(os);
    return sig;
}

/* Sleep (not spin) until rank 0 of world says this rank's part may start
 * (0) or that the probe stopped (the signal). */
static int wait_turn(MPI_Comm world)
{
    int v = 0;
    MPI_Request rq;
    MPI_Irecv(&v, 1, MPI_INT, 0, TAG + 1, world, &rq);
    int done = 0;
    while (!done) {
        MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
        if (!done)
            nanosleep(&(struct timespec){0, 200000}, NULL);
    }
    return v;
}

/* Ranks from .. to - 1 may start (sig 0), or are to end (the signal). */
static void wake(MPI_Comm world, int from, int to, int sig)
{
    int v = sig;
    for (int r = from; r < to; r++)
        MPI_Send(&v, 1, MPI_INT, r, TAG + 1, world);
}

static volatile double sink;

/* CPU seconds of a fixed loop (the same work on every rank). */
static double speed_loop(void)
{
    double t0 = tb_thread_cputime(), x = 0.5;
    for (long i = 0; i < 20000000; i++)
        x = x * 3.999 * (1 - x) + 1e-12;
    sink = x;
    return tb_thread_cputime() - t0;
}

typedef struct host_info {
    char name[MPI_MAX_PROCESSOR_NAME];
    int cores;
    double loop_s;
} host_info;

/* ---- output -------------------------------------------------------------- */

static int time_str(tb_buf *b, double s)
{
    return tb_buf_printf(b, "\"%.6gns\"", s * 1e9);
}

static int write_platform(const probe_opts *o, const tb_probe_fit *f, const host_info *hosts,
                          int nhosts, char *err, size_t errlen)
{
    tb_buf b = TB_BUF_INIT;
    const tb_loggps *n = &f->net;
    int rc = tb_buf_printf(&b, "{\"clusters\": [{\"name\": \"probe\", \"hosts\": [");
    for (int h = 0; h < nhosts && rc == TB_OK; h++) {
        rc = tb_buf_printf(&b, "%s\n    {\"name\": ", h ? "," : "");
        if (rc == TB_OK)
            rc = tb_buf_json_string(&b, hosts[h].name);
        if (rc == TB_OK)
            rc = tb_buf_printf(&b, ", \"cores\": %d, \"speed\": %.4g}", hosts[h].cores,
                               hosts[0].loop_s / hosts[h].loop_s);
    }
    if (rc == TB_OK)
        rc = tb_buf_printf(&b, "],\n  \"network\": {\"L\": ");
    double t[] = {n->L, n->os, n->or_, n->ob, n->O, n->g, n->G};
    const char *k[] = {"L", "os", "or", "ob", "O", "g", "G"};
    for (int i = 0; i < 7 && rc == TB_OK; i++) {
        if (i)
            rc = tb_buf_printf(&b, ", \"%s\": ", k[i]);
        if (rc == TB_OK)
            rc = time_str(&b, t[i]);
    }
    if (rc == TB_OK)
        rc = tb_buf_printf(&b, ", \"S\": %.0f}}]}\n", n->S);
    if (rc == TB_OK) {
        rc = tb_write_file_atomic(o->out, b.data, b.len);
        if (rc != TB_OK)
            snprintf(err, errlen, "--out %s: cannot write: %s", o->out, strerror(errno));
    }
    tb_buf_free(&b);
    return rc;
}

static void print_table(const tb_probe_size *sz, size_t ns, const tb_probe_run *runs, size_t nr,
                        const tb_probe_fit *f, long eager, int P0)
{
    printf("message sizes (P = %d; medians, us):\n", P0);
    printf("%10s %12s %10s %10s %10s\n", "bytes", "half RTT", "os", "or", "gap");
    for (size_t i = 0; i < ns; i++) {
        printf("%10.0f %12.3f", sz[i].bytes, sz[i].half_rtt * 1e6);
        if (sz[i].bytes <= (double)eager)
            printf(" %10.3f %10.3f", sz[i].os * 1e6, sz[i].or_ * 1e6);
        else
            printf(" %10s %10s", "(rdv)", "(rdv)");
        printf(" %10.3f\n", sz[i].gap * 1e6);
    }
    printf("master overheads by run size (us): ");
    for (size_t i = 0; i < nr; i++)
        printf("%sP = %d: os %.3f or %.3f", i ? ", " : "", runs[i].P, runs[i].os * 1e6,
               runs[i].or_ * 1e6);
    printf("\nfit (value +- standard error):\n");
    const tb_loggps *n = &f->net, *e = &f->err;
    printf("  L  %10.3f +- %.3f us\n", n->L * 1e6, e->L * 1e6);
    printf("  os %10.3f +- %.3f us\n", n->os * 1e6, e->os * 1e6);
    printf("  or %10.3f +- %.3f us\n", n->or_ * 1e6, e->or_ * 1e6);
    printf("  ob %10.4f +- %.4f us per rank\n", n->ob * 1e6, e->ob * 1e6);
    printf("  O  %10.4f +- %.4f ns per byte\n", n->O * 1e9, e->O * 1e9);
    printf("  g  %10.3f +- %.3f us\n", n->g * 1e6, e->g * 1e6);
    printf("  G  %10.4f +- %.4f ns per byte (%.3g GB/s)\n", n->G * 1e9, e->G * 1e9,
           n->G > 0 ? 1e-9 / n->G : INFINITY);
    printf("  S  %10.0f bytes (the largest eager message)\n", n->S);
}

static void print_json(const probe_opts *o, const tb_probe_size *sz, size_t ns,
                       const tb_probe_run *runs, size_t nr, const tb_probe_fit *f, int P0,
                       const host_info *hosts, int nhosts)
{
    tb_buf b = TB_BUF_INIT;
    tb_buf_printf(&b, "{\"command\": \"probe\", \"out\": ");
    tb_buf_json_string(&b, o->out);
    const tb_loggps *n = &f->net, *e = &f->err;
    tb_buf_printf(&b,
                  ", \"P0\": %d, \"L\": %.9g, \"os\": %.9g, \"or\": %.9g, \"ob\": %.9g, \"O\": "
                  "%.9g, \"g\": %.9g, \"G\": %.9g, \"S\": %.0f, \"errors\": {\"L\": %.3g, \"os\": "
                  "%.3g, \"or\": %.3g, \"ob\": %.3g, \"O\": %.3g, \"g\": %.3g, \"G\": %.3g}",
                  P0, n->L, n->os, n->or_, n->ob, n->O, n->g, n->G, n->S, e->L, e->os, e->or_,
                  e->ob, e->O, e->g, e->G);
    tb_buf_printf(&b, ", \"sizes\": [");
    for (size_t i = 0; i < ns; i++)
        tb_buf_printf(&b,
                      "%s{\"bytes\": %.0f, \"half_rtt\": %.9g, \"os\": %.9g, \"or\": %.9g, "
                      "\"gap\": %.9g}",
                      i ? ", " : "", sz[i].bytes, sz[i].half_rtt, sz[i].os, sz[i].or_,
                      sz[i].gap);
    tb_buf_printf(&b, "], \"runs\": [");
    for (size_t i = 0; i < nr; i++)
        tb_buf_printf(&b, "%s{\"P\": %d, \"os\": %.9g, \"or\": %.9g}", i ? ", " : "", runs[i].P,
                      runs[i].os, runs[i].or_);
    tb_buf_printf(&b, "], \"hosts\": [");
    for (int h = 0; h < nhosts; h++) {
        tb_buf_printf(&b, "%s{\"name\": ", h ? ", " : "");
        tb_buf_json_string(&b, hosts[h].name);
        tb_buf_printf(&b, ", \"cores\": %d, \"speed\": %.4g}", hosts[h].cores,
                      hosts[0].loop_s / hosts[h].loop_s);
    }
    tb_buf_printf(&b, "]}\n");
    fwrite(b.data, 1, b.len, stdout);
    tb_buf_free(&b);
}

/* ---- the run --------------------------------------------------------------- */

static int run_probe(const probe_opts *o)
{
    MPI_Comm world;
    MPI_Comm_dup(MPI_COMM_WORLD, &world);
    int rank, W;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &W);
    long Pmax = o->ranks[o->nranks - 1];
    if (W < 2 || W < Pmax) {
        tb_cli_error(cmd, "mpiexec started %d rank(s); --ranks needs %ld (and at least 2)", W,
                     Pmax < 2 ? 2 : Pmax);
        MPI_Comm_free(&world);
        return TB_EXIT_USAGE;
    }
    long maxb = o->sizes[o->nsizes - 1];
    char *buf = calloc(1, (size_t)maxb + 1), *buf2 = calloc(1, (size_t)maxb + 1);
    tb_probe_size *sz = calloc(o->nsizes, sizeof *sz);
    tb_probe_run *runs = calloc(o->nranks, sizeof *runs);
    host_info *all = calloc((size_t)W, sizeof *all);
    int ok = buf && buf2 && sz && runs && all, allok = 0;
    if (buf && buf2) { /* real pages: untouched ones all map one zero page, copied from cache */
        memset(buf, 0x5a, (size_t)maxb + 1);
        memset(buf2, 0xa5, (size_t)maxb + 1);
    }
    MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, world);
    if (!allok) {
        tb_cli_error(cmd, "out of memory for %ld-byte messages", maxb);
        free(buf), free(buf2), free(sz), free(runs), free(all);
        MPI_Comm_free(&world);
        return TB_EXIT_FAIL;
    }
    measure_clock();
    /* hosts and speeds, one rank at a time so the loop has a core to itself */
    host_info me;
    memset(&me, 0, sizeof me);
    int len = 0;
    MPI_Get_processor_name(me.name, &len);
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    me.cores = c > 0 ? (int)c : 1;
    /* A stop from outside is agreed on at every step (stop_agreed); at says
     * where rank 0 was for its line. */
    int sig = 0;
    char at[96] = "while timing the hosts' speeds";
    for (int r = 0; r < W && !sig; r++) {
        if (r == rank)
            me.loop_s = speed_loop();
        sig = stop_agreed(world);
    }
    MPI_Gather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, 0, world);
    int started = !sig; /* every rank: the communicators exist */

    /* A line per measurement on rank 0 (interval 0); elsewhere, none. */
    tb_progress *prog = NULL;
    if (tb_progress_create(&prog, rank == 0 && o->progress ? stderr : NULL, "measurements", 0,
                           0) != TB_OK)
        prog = NULL;
    /* Every communicator first (collective over all ranks, all awake). */
    MPI_Comm pair, *sub = calloc(o->nranks, sizeof *sub);
    if (started) {
        MPI_Comm_split(world, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
        for (size_t k = 0; sub && k < o->nranks; k++)
            MPI_Comm_split(world, rank < o->ranks[k] ? 0 : MPI_UNDEFINED, rank, &sub[k]);
    }
    /* The pair at P = 2 (--ranks starts with 2); the other ranks sleep. */
    int P0 = 2;
    long eager = 0;
    size_t nsz = 0, nrun = 0; /* measured */
    if (started && rank < 2) {
        snprintf(at, sizeof at, "while finding the rendezvous threshold");
        eager = find_eager(pair, rank, o->sizes, o->nsizes, buf, buf2, &sig);
        for (size_t i = 0; i < o->nsizes && !sig; i++) {
            tb_progress_note(prog, tb_wtime(), 0, "tenbin probe: ping-pong %zu/%zu: %ld bytes",
                             i + 1, o->nsizes, o->sizes[i]);
            snprintf(at, sizeof at, "in the ping-pong of %ld-byte messages", o->sizes[i]);
            sig = measure_size(pair, rank, o->sizes[i], o->reps, o->sizes[i] <= eager, buf,
                               buf2, &sz[i]);
            nsz += !sig;
        }
        MPI_Comm_free(&pair);
    }
    /* The master's overheads at each P; a rank sleeps until rank 0 wakes it
     * for its first run, or to end after a stop. */
    int woken = 2, waited = 0; /* rank 0: ranks below woken are awake */
    for (size_t k = 0; started && k < o->nranks && !sig; k++) {
        int P = (int)o->ranks[k], prev = k ? (int)o->ranks[k - 1] : 2;
        if (rank == 0) {
            wake(world, prev, P, 0);
            woken = P;
        } else if (rank >= prev && rank < P) {
            sig = wait_turn(world);
            waited = 1;
            if (sig)
                break;
        }
        tb_progress_note(prog, tb_wtime(), 0, "tenbin probe: master overheads %zu/%zu: P = %d",
                         k + 1, o->nranks, P);
        snprintf(at, sizeof at, "in the master overheads at P = %d", P);
        if (rank < P) {
            sig = measure_master(sub[k], rank, P, o->sizes[0], o->reps, buf, &runs[k]);
            nrun += !sig;
        }
    }
    for (size_t k = 0; started && k < o->nranks; k++)
        if (rank < o->ranks[k])
            MPI_Comm_free(&sub[k]);
    free(sub);
    if (rank == 0 && started)
        wake(world, woken, W, sig); /* the sleepers: ranks beyond every run size, or a stop */
    else if (started && rank >= 2 && !waited)
        sig = wait_turn(world);
    if (started && !sig) { /* the last look before the file is written */
        snprintf(at, sizeof at, "after the last measurement");
        sig = stop_agreed(world);
    }
    if (sig) {
        tb_cli_error(cmd, "interrupted by %s %s: %zu of %zu message sizes and %zu of %zu run "
                          "sizes were measured; nothing is kept, %s is not written",
                     tb_signal_name(sig), at, nsz, o->nsizes, nrun, o->nranks, o->out);
        tb_progress_destroy(&prog);
        free(buf), free(buf2), free(sz), free(runs), free(all);
        MPI_Comm_free(&world);
        return 128 + sig;
    }

    int rc = TB_EXIT_OK;
    if (rank == 0) {
        /* distinct hosts, in rank order */
        host_info *hosts = calloc((size_t)W, sizeof *hosts);
        int nh = 0;
        for (int r = 0; hosts && r < W; r++) {
            int h = 0;
            while (h < nh && strcmp(hosts[h].name, all[r].name) != 0)
                h++;
            if (h == nh)
                hosts[nh++] = all[r];
            else if (all[r].loop_s < hosts[h].loop_s)
                hosts[h].loop_s = all[r].loop_s; /* the fastest of its ranks */
        }
        tb_probe_fit f;
        char err[512] = "";
        int frc = hosts ? tb_probe_fit_loggps(sz, o->nsizes, P0, runs, o->nranks,
                                              (double)eager, &f, err, sizeof err)
                        : TB_ERR_NOMEM;
        if (frc == TB_OK && eager == 0)
            f.net.S = 0; /* even the smallest message waits for its receiver */
        if (frc == TB_OK)
            frc = write_platform(o, &f, hosts, nh, err, sizeof err);
        if (frc != TB_OK) {
            tb_cli_error(cmd, "%s", err[0] ? err : tb_strerror(frc));
            rc = TB_EXIT_FAIL;
        } else {
            if (!o->quiet && !o->json)
                print_table(sz, o->nsizes, runs, o->nranks, &f, eager, P0);
            if (o->json)
                print_json(o, sz, o->nsizes, runs, o->nranks, &f, P0, hosts, nh);
            else
                printf("wrote %s (%d host%s; --platform %s)\n", o->out, nh, nh == 1 ? "" : "s",
                       o->out);
            fflush(stdout);
        }
        free(hosts);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, world);
    tb_progress_destroy(&prog);
    free(buf), free(buf2), free(sz), free(runs), free(all);
    MPI_Comm_free(&world);
    return rc;
}

/* ---- options and launching --------------------------------------------------- */

static int inside_mpiexec(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK",
                          "TENBIN_PROBE_LAUNCHED"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i]))
            return 1;
    return 0;
}

int tb_cmd_probe(int argc, char **argv)
{
    probe_opts o = {.reps = 200, .ranks = {2, 8}, .nranks = 2};
    for (int i = 0; i <= 20; i++)
        o.sizes[i] = 1L << i;
    o.nsizes = 21;
    static const struct option opts[] = {
        {"out", required_argument, NULL, 'o'},   {"ranks", required_argument, NULL, 'r'},
        {"sizes", required_argument, NULL, 's'}, {"reps", required_argument, NULL, 'n'},
        {"mpiexec", required_argument, NULL, 'x'}, {"json", no_argument, NULL, 'j'},
        {"quiet", no_argument, NULL, 'q'},       {"help", no_argument, NULL, 'h'},
        {"progress", no_argument, NULL, 'p'},    {NULL, 0, NULL, 0}};
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            o.out = optarg;
            break;
        case 'r':
            if (tb_cli_long_list(cmd, "--ranks", optarg, 2, 4096, o.ranks, MAX_LIST, &o.nranks))
                return TB_EXIT_USAGE;
            break;
        case 's':
            if (tb_cli_long_list(cmd, "--sizes", optarg, 1, 1L << 28, o.sizes, MAX_LIST, &o.nsizes))
                return TB_EXIT_USAGE;
            if (o.nsizes < 2) {
                tb_cli_error(cmd, "--sizes: G needs two sizes or more, got '%s'", optarg);
                return TB_EXIT_USAGE;
            }
            break;
        case 'n':
            if (tb_cli_long(cmd, "--reps", optarg, 3, 1000000, &o.reps))
                return TB_EXIT_USAGE;
            break;
        case 'x':
            o.mpiexec = optarg;
            break;
        case 'j':
            o.json = 1;
            break;
        case 'p':
            o.progress = 1;
            break;
        case 'q':
            o.quiet = 1;
            break;
        case 'h':
            usage(stdout);
            return TB_EXIT_OK;
        default:
            return tb_cli_bad_option(cmd, "tenbin probe --help", c, argv);
        }
    }
    if (optind < argc) {
        tb_cli_error(cmd, "unexpected argument '%s'", argv[optind]);
        return TB_EXIT_USAGE;
    }
    if (!o.out) {
        tb_cli_error(cmd, "--out FILE is required (the platform file to write)");
        return TB_EXIT_USAGE;
    }
    if (tb_cli_writable(cmd, "--out", o.out))
        return TB_EXIT_FAIL;
    if (o.ranks[0] != 2) { /* the pair's measurements are at P = 2 */
        if (o.nranks == MAX_LIST) {
            tb_cli_error(cmd, "--ranks: at most %d values with 2 added", MAX_LIST - 1);
            return TB_EXIT_USAGE;
        }
        memmove(o.ranks + 1, o.ranks, o.nranks * sizeof *o.ranks);
        o.ranks[0] = 2;
        o.nranks++;
    }
    if (!inside_mpiexec()) {
        /* run ourselves under mpiexec -n Pmax (it cleans up if a rank fails) */
        char np[32], self[4096];
        snprintf(np, sizeof np, "%ld", o.ranks[o.nranks - 1]);
        ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
        if (sl <= 0) {
            tb_cli_error(cmd, "cannot find this program (/proc/self/exe): %s", strerror(errno));
            return TB_EXIT_FAIL;
        }
        self[sl] = 0;
        const char *mpiexec = o.mpiexec ? o.mpiexec : TENBIN_MPIEXEC;
        char **av = calloc((size_t)argc + 8, sizeof *av);
        if (!av)
            return TB_EXIT_FAIL;
        size_t k = 0;
        av[k++] = (char *)mpiexec;
        av[k++] = "-n";
        av[k++] = np;
        av[k++] = self;
        for (int i = 0; i < argc; i++)
            av[k++] = argv[i];
        setenv("TENBIN_PROBE_LAUNCHED", "1", 1);
        fflush(stdout);
        execvp(mpiexec, av);
        tb_cli_error(cmd, "cannot run %s: %s", mpiexec, strerror(errno));
        free(av);
        return TB_EXIT_FAIL;
    }
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    o.progress = rank == 0 && tb_progress_wanted(o.progress, o.quiet);
    tb_log_set_rank(rank);
    tb_cli_set_rank(rank);
    if (rank != 0 && !freopen("/dev/null", "w", stdout))
        return TB_EXIT_FAIL;
    int rc = run_probe(&o);
    MPI_Finalize();
    return rc;
}
