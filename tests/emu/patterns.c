/*
 * patterns.c - plain MPI programs (no Tenbin calls) with known emulated
 * answers, run by tests/cli/emu.sh under `tenbin emu`.
 *
 *   patterns pingpong N BYTES      ranks 2i and 2i+1 bounce a message N times
 *   patterns fanin BYTES           every rank sends to 0; 0 receives with
 *                                  MPI_ANY_SOURCE and prints the order; rank r
 *                                  sleeps (real time) the longer the earlier
 *                                  its message arrives in virtual time
 *   patterns master N K1 K2        rank 0 hands N tasks (K2 bytes) to workers
 *                                  that ask with K1-byte requests, then stops
 *                                  each; near-zero work
 *   patterns iprobe BYTES          rank 0 polls with MPI_Iprobe until rank 1's
 *                                  message has arrived; prints the polls
 *   patterns collectives           every emulated collective, results checked
 *   patterns p2p                   MPI_Sendrecv of a strided datatype around a ring,
 *                                  MPI_Bsend, MPI_Ssend, MPI_Issend + MPI_Test loop,
 *                                  MPI_Mprobe/MPI_Mrecv, MPI_Waitsome; data checked
 *   patterns waitany BYTES         rank 0 posts one MPI_Irecv per other rank and
 *                                  takes them with MPI_Waitany, prints the order
 *   patterns abort                 rank 1 calls MPI_Abort
 *   patterns crash                 rank 1 dies of SIGSEGV
 *   patterns spawn                 calls MPI_Comm_spawn (not emulated)
 *   patterns halo BYTES            ranks 2i, 2i+1: MPI_Isend + MPI_Irecv + MPI_Waitall
 *   patterns tricky                situations that once stalled or fooled the
 *                                  emulator (each prints a line; compare with a
 *                                  real run): an MPI_Ssend whose receive is posted
 *                                  early while the receiver waits on another rank;
 *                                  a wildcard receive while an MPI_Irecv of the
 *                                  same tag is posted; MPI_PROC_NULL requests in
 *                                  MPI_Waitany; a message on MPI_COMM_SELF beside
 *                                  a collective; a large MPI_Isend whose sender
 *                                  then waits in a wildcard receive
 *   patterns chain BYTES [HOW]     3 ranks: 1 sends BYTES to 0, then 1 byte to 2,
 *                                  which passes 1 byte on to 0; 0 takes both with
 *                                  MPI_ANY_SOURCE and prints the order (with a
 *                                  large BYTES the relayed byte arrives first;
 *                                  HOW: isend (MPI_Isend + MPI_Wait) or rsend
 *                                  (MPI_Rsend) for the large one, else MPI_Send)
 *   patterns held BYTES            3 ranks: 1 sends BYTES to 0 (tag 5) at once; 2
 *                                  computes 20 ms of CPU time, then sends 0 an int
 *                                  (tag 1); 0 takes tag 1 from MPI_ANY_SOURCE, then
 *                                  rank 1's message, and prints "held: 2 then 1"
 *                                  (with BYTES above the real MPI's eager limit
 *                                  rank 1 is held in its send until 0 posts it)
 *   patterns relayed               3 ranks: 2 polls with MPI_Iprobe(0) for the message
 *                                  0 sends once 1's message (really 0.3 s late) has
 *                                  woken it from MPI_Recv(1); prints polls and time
 *   patterns inter                 4 ranks: an intercommunicator between WORLD's
 *                                  halves: its sizes and remote group, a wildcard
 *                                  receive across it (the real order reversed) and
 *                                  a reply, MPI_Barrier, MPI_Ibarrier (+ MPI_Wait,
 *                                  + an MPI_Test loop), MPI_Bcast from MPI_ROOT,
 *                                  MPI_Allreduce, each timed from the same
 *                                  virtual time; MPI_Intercomm_merge and an
 *                                  allreduce on the result, MPI_Comm_split into
 *                                  pairs, MPI_Comm_dup, MPI_Comm_disconnect
 *   patterns handover N            2 ranks, MPI_Init_thread(MPI_THREAD_MULTIPLE): prints
 *                                  the level given; rank 0's main thread and a
 *                                  second thread take turns to call MPI, N rounds
 *                                  (the second bounces an int off rank 1), while
 *                                  the main thread, last to call MPI, reads the
 *                                  monotonic clock in a loop (the emulator once
 *                                  took the pair for two threads calling MPI at
 *                                  the same time)
 *   patterns rma                   one-sided: MPI_Win_allocate; under fences every
 *                                  rank puts its rank to the next, gets the previous
 *                                  one's element and accumulates 1 into rank 0's
 *                                  (data checked); then rank 0 alone, under a shared
 *                                  lock of rank 1: lock, put, flush, get + flush,
 *                                  unlock, each timed in whole microseconds; then
 *                                  MPI_Win_lock_all, a put to the next, unlock_all
 *                                  on every rank; MPI_Win_create over a buffer of
 *                                  the program's, a fence, a put, a fence
 *   patterns rma-locks N           exclusive locks: every rank adds 1 to a counter on
 *                                  rank 0 N times under MPI_LOCK_EXCLUSIVE (get, flush,
 *                                  put: it ends at size x N only if the locks exclude);
 *                                  then rank 1 takes rank 0's exclusive lock and holds
 *                                  it over a 1 ms sleep and a put, while rank 0 (really
 *                                  0.5 s later) asks for it: prints whether rank 0
 *                                  waited over 1 ms in virtual time, when it got the
 *                                  lock after rank 1's unlock ended, and the put's value
 *   patterns inter-gather          4 ranks: MPI_Gather over that intercommunicator
 *                                  (not emulated)
 *   patterns deadlock              ranks 0 and 1 each receive from the other first
 *   patterns ssend-deadlock        ranks 0 and 1 each MPI_Ssend to the other first
 *   patterns wtime                 prints MPI_Wtime around a 0.2 s real delay
 *                                  and a busy loop of 0.2 s of real CPU time
 *   patterns cancel                rank 0 cancels a wildcard MPI_Irecv and one
 *                                  from rank 1 that nothing matches (both
 *                                  cancelled), then one whose message rank 1
 *                                  sent before (received: a cancel may fail);
 *                                  rank 1 cancels an MPI_Isend (sent anyway);
 *                                  prints what each got
 *   patterns pollsleep             a task farm's master as HyPhy's: rank 0 polls
 *                                  with MPI_Iprobe and sleeps 1 ms (usleep)
 *                                  between polls until every other rank has sent
 *                                  one message, after sleeping 0.1 s x its rank;
 *                                  prints the polls
 *   patterns clocks                the program's own clocks around sleeps (0.2 s
 *                                  nanosleep, 0.1 s usleep, 0.05 s poll, 0.25 s
 *                                  clock_nanosleep to an absolute time) and a
 *                                  busy loop: prints each clock's differences,
 *                                  and the real date before MPI_Init
 *   patterns stream N BYTES        every other rank sends rank 0 N messages of BYTES
 *                                  back to back (MPI_Send); rank 0 takes them with
 *                                  MPI_ANY_SOURCE
 *   patterns ahead BYTES           every other rank sends rank 0 three messages
 *                                  of (size - rank) BYTES at once; rank 0 sleeps
 *                                  (real time: all are known to the emulator
 *                                  by then) and takes them with MPI_ANY_SOURCE,
 *                                  but also with what must void answers given
 *                                  in advance: a receive from a named source,
 *                                  MPI_Probe, MPI_Iprobe; prints sources and
 *                                  times
 */
#define _GNU_SOURCE /* syscall */
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int rank, size;

/* A real delay that virtual time does not see: the emulator makes the
 * program's own sleeps virtual (idle time), so these patterns, which only
 * want to be late in real time, go to the kernel directly. */
static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    syscall(SYS_nanosleep, &ts, NULL);
}

/* The process's real CPU time, past the emulator's virtual clocks. */
static double real_cpu(void)
{
    struct timespec ts;
    syscall(SYS_clock_gettime, CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int pingpong(int n, int bytes)
{
    char *buf = calloc((size_t)bytes + 1, 1);
    int peer = rank ^ 1;
    if (peer >= size)
        return 0;
    for (int i = 0; i < n; i++) {
        if (rank % 2 == 0) {
            MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        }
    }
    free(buf);
    return 0;
}

/* Rank r sends (size - r) * bytes: rank size-1 sends least and arrives
 * first in virtual time, but it sleeps longest, so it really arrives last. */
static int fanin(int bytes)
{
    if (rank == 0) {
        char *buf = malloc((size_t)bytes * (size_t)size + 1);
        printf("order:");
        for (int i = 1; i < size; i++) {
            MPI_Status st;
            MPI_Recv(buf, bytes * size, MPI_BYTE, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st);
            int count;
            MPI_Get_count(&st, MPI_BYTE, &count);
            if (count != (size - st.MPI_SOURCE) * bytes) {
                fprintf(stderr, "fanin: wrong count %d from %d\n", count, st.MPI_SOURCE);
                return 1;
            }
            printf(" %d", st.MPI_SOURCE);
        }
        printf("\n");
        free(buf);
    } else {
        char *buf = calloc((size_t)(size - rank) * (size_t)bytes + 1, 1);
        sleep_s(0.05 * rank);
        MPI_Send(buf, (size - rank) * bytes, MPI_BYTE, 0, 5, MPI_COMM_WORLD);
        free(buf);
    }
    return 0;
}

static int master(long n, int k1, int k2)
{
    char *req = calloc((size_t)k1 + 8, 1), *task = calloc((size_t)k2 + 8, 1);
    if (rank == 0) {
        long sent = 0, stopped = 0;
        while (stopped < size - 1) {
            MPI_Status st;
            MPI_Recv(req, k1, MPI_BYTE, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
            int stop = sent == n;
            task[0] = (char)stop;
            MPI_Send(task, k2, MPI_BYTE, st.MPI_SOURCE, 2, MPI_COMM_WORLD);
            if (stop)
                stopped++;
            else
                sent++;
        }
    } else {
        for (;;) {
            MPI_Send(req, k1, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            MPI_Recv(task, k2, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (task[0])
                break;
        }
    }
    free(req);
    free(task);
    return 0;
}

static int iprobe(int bytes)
{
    char *buf = calloc((size_t)bytes + 1, 1);
    if (rank == 1) {
        sleep_s(0.2); /* really late; not late in virtual time */
        MPI_Send(buf, bytes, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
    } else if (rank == 0) {
        long polls = 0;
        int flag = 0;
        MPI_Status st;
        while (!flag) {
            MPI_Iprobe(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &flag, &st);
            polls++;
        }
        double t = MPI_Wtime();
        MPI_Recv(buf, bytes, MPI_BYTE, st.MPI_SOURCE, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("polls %ld source %d seen_at %.9f\n", polls, st.MPI_SOURCE, t);
    }
    free(buf);
    return 0;
}

static int check(int ok, const char *what)
{
    if (!ok)
        fprintf(stderr, "rank %d: %s wrong\n", rank, what);
    return ok ? 0 : 1;
}

static int collectives(void)
{
    int bad = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    int v = rank == 2 % size ? 42 : 0;
    MPI_Bcast(&v, 1, MPI_INT, 2 % size, MPI_COMM_WORLD);
    bad |= check(v == 42, "bcast");
    long s = rank + 1, sum = 0;
    MPI_Reduce(&s, &sum, 1, MPI_LONG, MPI_SUM, size - 1, MPI_COMM_WORLD);
    if (rank == size - 1)
        bad |= check(sum == (long)size * (size + 1) / 2, "reduce");
    double d = rank, mx = -1;
    MPI_Allreduce(&d, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    bad |= check(mx == size - 1, "allreduce");
    /* Large enough to go from a copy (TENBIN_EMU_COPY_MIN) and above a real
     * eager limit. */
    enum { BIG = 100000 };
    double *big = malloc(sizeof(double) * BIG), *bigsum = malloc(sizeof(double) * BIG);
    for (int i = 0; i < BIG; i++)
        big[i] = rank == 1 % size ? i : -1;
    MPI_Bcast(big, BIG, MPI_DOUBLE, 1 % size, MPI_COMM_WORLD);
    for (int i = 0; i < BIG; i++)
        bad |= check(big[i] == i, "large bcast");
    MPI_Allreduce(big, bigsum, BIG, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < BIG; i++)
        bad |= check(bigsum[i] == (double)i * size, "large allreduce");
    free(big);
    free(bigsum);
    int *all = malloc(sizeof(int) * (size_t)size * 2), *cnt = malloc(sizeof(int) * (size_t)size),
        *dsp = malloc(sizeof(int) * (size_t)size);
    MPI_Gather(&rank, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int i = 0; i < size; i++)
            bad |= check(all[i] == i, "gather");
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        bad |= check(all[i] == i, "allgather");
    for (int i = 0; i < size; i++) {
        cnt[i] = 1;
        dsp[i] = size - 1 - i;
    }
    MPI_Allgatherv(&rank, 1, MPI_INT, all, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        bad |= check(all[size - 1 - i] == i, "allgatherv");
    int mine = -1;
    for (int i = 0; i < size; i++)
        all[i] = 100 + i;
    MPI_Scatter(all, 1, MPI_INT, &mine, 1, MPI_INT, 0, MPI_COMM_WORLD);
    bad |= check(mine == 100 + rank, "scatter");
    int *sb = malloc(sizeof(int) * (size_t)size), *rb = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        sb[i] = rank * 1000 + i;
    MPI_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        bad |= check(rb[i] == i * 1000 + rank, "alltoall");
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    int hs, hr;
    MPI_Comm_size(half, &hs);
    MPI_Comm_rank(half, &hr);
    int x = rank, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, half);
    int expect = 0;
    for (int i = rank % 2; i < size; i += 2)
        expect += i;
    bad |= check(y == expect, "split allreduce");
    MPI_Comm dup;
    MPI_Comm_dup(half, &dup);
    MPI_Barrier(dup);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    free(all);
    free(cnt);
    free(dsp);
    free(sb);
    free(rb);
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0)
        printf("collectives %s\n", anybad ? "WRONG" : "ok");
    return anybad;
}

static int p2p(void)
{
    int bad = 0, right = (rank + 1) % size, left = (rank + size - 1) % size;
    /* A vector of 4 blocks of 2 ints, stride 3: 8 ints of 12 travel. */
    MPI_Datatype vec;
    MPI_Type_vector(4, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int out[12], in[12];
    for (int i = 0; i < 12; i++) {
        out[i] = rank * 100 + i;
        in[i] = -1;
    }
    MPI_Status st;
    MPI_Sendrecv(out, 1, vec, right, 1, in, 1, vec, left, 1, MPI_COMM_WORLD, &st);
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    bad |= check(count == 8, "vector count");
    for (int i = 0; i < 12; i++)
        bad |= check(in[i] == (i % 3 == 2 ? -1 : left * 100 + i), "vector data");
    MPI_Type_free(&vec);
    /* Buffered, then synchronous sends around the ring. */
    int bsize = 1024, v = rank, w = -1;
    void *bbuf = malloc((size_t)bsize);
    MPI_Buffer_attach(bbuf, bsize);
    MPI_Bsend(&v, 1, MPI_INT, right, 2, MPI_COMM_WORLD);
    MPI_Recv(&w, 1, MPI_INT, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    bad |= check(w == left, "bsend");
    MPI_Buffer_detach(&bbuf, &bsize);
    free(bbuf);
    MPI_Request r;
    MPI_Issend(&v, 1, MPI_INT, right, 3, MPI_COMM_WORLD, &r);
    MPI_Recv(&w, 1, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int flag = 0;
    while (!flag)
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    bad |= check(w == left && r == MPI_REQUEST_NULL, "issend");
    /* Matched probe. */
    MPI_Send(&v, 1, MPI_INT, right, 4, MPI_COMM_WORLD);
    MPI_Message m;
    MPI_Mprobe(MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &m, &st);
    MPI_Mrecv(&w, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
    bad |= check(w == left && st.MPI_SOURCE == left, "mprobe");
    /* Waitsome over a send and a receive. */
    MPI_Request rs[2];
    int idx[2], n = 0, done = 0;
    MPI_Irecv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &rs[0]);
    MPI_Isend(&v, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &rs[1]);
    while (done < 2) {
        MPI_Waitsome(2, rs, &n, idx, MPI_STATUSES_IGNORE);
        done += n;
    }
    bad |= check(w == left, "waitsome");
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0)
        printf("p2p %s\n", anybad ? "WRONG" : "ok");
    return anybad;
}

static int halo(int bytes)
{
    char *a = calloc((size_t)bytes + 1, 1), *b = calloc((size_t)bytes + 1, 1);
    int peer = rank ^ 1, bad = 0;
    for (int i = 0; i < bytes; i++)
        a[i] = (char)(rank * 31 + i);
    if (peer < size) {
        MPI_Request r[2];
        MPI_Isend(a, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(b, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        for (int i = 0; i < bytes; i++)
            bad |= b[i] != (char)(peer * 31 + i);
        if (bad)
            fprintf(stderr, "halo: rank %d got wrong data from %d\n", rank, peer);
    }
    free(a);
    free(b);
    return bad;
}

static int tricky(void)
{
    int x = rank, y = -1, z = -1;
    /* 1: rank 1's Ssend to 0 ends when 0's early Irecv has it, although 0
     * then waits for rank 2, which waits for rank 1's next message. */
    if (rank == 0 && size >= 3) {
        MPI_Request r;
        MPI_Irecv(&y, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &r);
        MPI_Recv(&z, 1, MPI_INT, 2, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        printf("ssend to an early receive: %d %d\n", y, z);
    } else if (rank == 1 && size >= 3) {
        MPI_Ssend(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        MPI_Send(&x, 1, MPI_INT, 2, 3, MPI_COMM_WORLD);
    } else if (rank == 2) {
        MPI_Recv(&z, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* 2: the posted Irecv from 1 owns 1's message; the wildcard gets 2's. */
    if (rank == 0 && size >= 3) {
        MPI_Request r;
        MPI_Status st;
        MPI_Irecv(&y, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &r);
        sleep_s(0.2);
        MPI_Recv(&z, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        printf("posted irecv got %d, wildcard got %d\n", y, z);
    } else if (rank == 1 || rank == 2) {
        MPI_Send(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
    }
    /* 3: requests that are not messages. */
    MPI_Request r[2];
    int idx;
    MPI_Isend(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&y, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r[1]);
    MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE);
    MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE);
    /* 4: the program's own MPI_COMM_SELF message beside a collective. */
    int self = -1, seven = 7, sum = 0;
    MPI_Request sr;
    MPI_Irecv(&self, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_SELF, &sr);
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Send(&seven, 1, MPI_INT, 0, 3, MPI_COMM_SELF);
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
    if (rank == 0)
        printf("self message %d, allreduce %d\n", self, sum);
    /* 5: a large Isend (real rendezvous) whose sender then waits in a
     * wildcard receive for the reply. */
    int n = 200000;
    char *big = calloc((size_t)n, 1);
    if (rank == 0) {
        MPI_Request br;
        MPI_Isend(big, n, MPI_BYTE, 1, 8, MPI_COMM_WORLD, &br);
        MPI_Recv(&z, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&br, MPI_STATUS_IGNORE);
        printf("large isend then wildcard: %d\n", z);
    } else if (rank == 1) {
        MPI_Recv(big, n, MPI_BYTE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&x, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
    }
    free(big);
    return 0;
}

static int waitany(int bytes)
{
    if (rank == 0) {
        int n = size - 1;
        MPI_Request *r = malloc(sizeof *r * (size_t)n);
        char *buf = malloc((size_t)bytes * (size_t)size * (size_t)n + 1);
        for (int i = 0; i < n; i++)
            MPI_Irecv(buf + (size_t)i * (size_t)bytes * (size_t)size, bytes * size, MPI_BYTE,
                      i + 1, 4, MPI_COMM_WORLD, &r[i]);
        printf("order:");
        for (int i = 0; i < n; i++) {
            int idx;
            MPI_Status st;
            MPI_Waitany(n, r, &idx, &st);
            printf(" %d", st.MPI_SOURCE);
        }
        printf("\n");
        free(r);
        free(buf);
    } else {
        char *buf = calloc((size_t)(size - rank) * (size_t)bytes + 1, 1);
        sleep_s(0.05 * rank);
        MPI_Send(buf, (size - rank) * bytes, MPI_BYTE, 0, 4, MPI_COMM_WORLD);
        free(buf);
    }
    return 0;
}

static int chain(int bytes, const char *how)
{
    char *buf = calloc((size_t)bytes + 1, 1);
    if (rank == 0) {
        printf("chain order:");
        for (int i = 0; i < 2; i++) {
            MPI_Status st;
            MPI_Recv(buf, bytes + 1, MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st);
            printf(" %d", st.MPI_SOURCE);
        }
        printf("\n");
    } else if (rank == 1) {
        if (!strcmp(how, "isend")) {
            MPI_Request r;
            MPI_Isend(buf, bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else if (!strcmp(how, "rsend")) {
            MPI_Rsend(buf, bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
        } else {
            MPI_Send(buf, bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
        }
        MPI_Send(buf, 1, MPI_BYTE, 2, 7, MPI_COMM_WORLD);
    } else if (rank == 2) {
        MPI_Recv(buf, 1, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, 1, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
    }
    free(buf);
    return 0;
}

static int stream(int n, int bytes)
{
    char *buf = calloc((size_t)bytes + 1, 1);
    if (rank == 0) {
        for (long i = 0; i < (long)n * (size - 1); i++)
            MPI_Recv(buf, bytes, MPI_BYTE, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        for (int i = 0; i < n; i++)
            MPI_Send(buf, bytes, MPI_BYTE, 0, 6, MPI_COMM_WORLD);
    }
    free(buf);
    return 0;
}

static int ahead(int bytes)
{
    char *buf = calloc((size_t)bytes * (size_t)size + 1, 1);
    if (rank != 0) {
        for (int i = 0; i < 3; i++)
            MPI_Send(buf, (size - rank) * bytes, MPI_BYTE, 0, 5, MPI_COMM_WORLD);
        free(buf);
        return 0;
    }
    sleep_s(0.2);
    MPI_Status st;
    for (int i = 0; i < 3 * (size - 1); i++) {
        int from = MPI_ANY_SOURCE;
        if (i == 2) {
            from = 1; /* its first message: the latest of the first round */
        } else if (i == 4) {
            MPI_Probe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st);
            printf(" probe:%d@%.9f", st.MPI_SOURCE, MPI_Wtime());
        } else if (i == 6) {
            int flag = 0;
            MPI_Iprobe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &flag, &st);
            printf(" iprobe:%d:%d@%.9f", flag, flag ? st.MPI_SOURCE : -1, MPI_Wtime());
        }
        MPI_Recv(buf, bytes * size, MPI_BYTE, from, 5, MPI_COMM_WORLD, &st);
        printf(" %d@%.9f", st.MPI_SOURCE, MPI_Wtime());
    }
    printf("\n");
    free(buf);
    return 0;
}

static int held(int bytes)
{
    char *buf = calloc((size_t)bytes + 1, 1);
    int v = 7;
    if (rank == 1) {
        MPI_Send(buf, bytes, MPI_BYTE, 0, 5, MPI_COMM_WORLD);
    } else if (rank == 2) {
        clock_t c0 = clock();
        volatile double x = 0;
        while ((double)(clock() - c0) / CLOCKS_PER_SEC < 0.02)
            x += 1;
        MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Status st;
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
        int first = st.MPI_SOURCE;
        MPI_Recv(buf, bytes, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &st);
        printf("held: %d then %d\n", first, st.MPI_SOURCE);
    }
    free(buf);
    return 0;
}

/* Rank 2 polls with MPI_Iprobe for rank 0's message, which rank 0 sends only
 * once rank 1's message (really 0.3 s late) has woken it from a receive. */
static int relayed(void)
{
    int v = 7, polls = 0, flag = 0;
    if (rank == 1) {
        sleep_s(0.3);
        MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Recv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&v, 1, MPI_INT, 2, 2, MPI_COMM_WORLD);
    } else if (rank == 2) {
        while (!flag) {
            MPI_Iprobe(0, 2, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            polls++;
        }
        double t = MPI_Wtime();
        MPI_Recv(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("relayed: polls %d seen_at %.9f\n", polls, t);
    }
    return 0;
}

/* Every rank's clock to the same virtual time (the latest plus 2 ms) by a
 * sleep, which the emulator makes virtual: closed forms start from there.
 * Returns the rank's clock then. */
static double align(void)
{
    double now = MPI_Wtime(), t;
    MPI_Allreduce(&now, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    struct timespec ts = {0, (long)((t + 2e-3 - MPI_Wtime()) * 1e9 + 0.5)};
    nanosleep(&ts, NULL);
    return MPI_Wtime();
}

/* An intercommunicator between WORLD's two halves (4 ranks: A = 0, 1 and B =
 * 2, 3); *a: this rank is in A. */
static MPI_Comm halves(MPI_Comm *half, int *a)
{
    MPI_Comm inter;
    *a = rank < size / 2;
    MPI_Comm_split(MPI_COMM_WORLD, !*a, rank, half);
    MPI_Intercomm_create(*half, 0, MPI_COMM_WORLD, *a ? size / 2 : 0, 7, &inter);
    return inter;
}

static int inter(void)
{
    int bad = 0, a, lr, n = size / 2;
    MPI_Comm half, merged, dup;
    MPI_Comm ic = halves(&half, &a);
    MPI_Comm_rank(ic, &lr);
    /* What it is. */
    int flag = 0, rsize = 0, lsize = 0;
    MPI_Comm_test_inter(ic, &flag);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Comm_size(ic, &lsize);
    bad |= check(flag && rsize == n && lsize == n && lr == rank % n, "inter size");
    MPI_Group rg, wg;
    MPI_Comm_remote_group(ic, &rg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int rr[2] = {0, 1}, wr[2] = {-1, -1};
    MPI_Group_translate_ranks(rg, 2, rr, wg, wr);
    bad |= check(wr[0] == (a ? n : 0) && wr[1] == (a ? n + 1 : 1), "remote group");
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);
    /* A wildcard receive across: A0's 1000 bytes arrive at os + L + 999 G,
     * A1's 10 bytes (really 0.2 s late) at os + L + 9 G, first; B0 answers
     * A1. */
    char buf[1000] = {0};
    double t0 = align();
    if (a && lr == 0) {
        MPI_Send(buf, 1000, MPI_BYTE, 0, 1, ic);
    } else if (a) {
        int v = -1;
        sleep_s(0.2);
        MPI_Send(buf, 10, MPI_BYTE, 0, 1, ic);
        MPI_Recv(&v, 1, MPI_INT, 0, 2, ic, MPI_STATUS_IGNORE);
        printf("inter reply at %.8f\n", MPI_Wtime() - t0);
    } else if (lr == 0) {
        MPI_Status st[2];
        int count;
        MPI_Recv(buf, 1000, MPI_BYTE, MPI_ANY_SOURCE, 1, ic, &st[0]);
        MPI_Recv(buf, 1000, MPI_BYTE, MPI_ANY_SOURCE, 1, ic, &st[1]);
        MPI_Get_count(&st[0], MPI_BYTE, &count);
        printf("inter wildcard: %d (%d bytes) %d at %.8f\n", st[0].MPI_SOURCE, count,
               st[1].MPI_SOURCE, MPI_Wtime() - t0);
        MPI_Send(&st[0].MPI_SOURCE, 1, MPI_INT, 1, 2, ic);
    }
    /* Barriers over it: blocking, non-blocking with MPI_Wait, and with an
     * MPI_Test loop. */
    t0 = align();
    MPI_Barrier(ic);
    printf("inter barrier %d: %.8f\n", rank, MPI_Wtime() - t0);
    MPI_Request r;
    t0 = align();
    MPI_Ibarrier(ic, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    printf("inter ibarrier wait %d: %.8f\n", rank, MPI_Wtime() - t0);
    t0 = align();
    MPI_Ibarrier(ic, &r);
    for (flag = 0; !flag;)
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    bad |= check(r == MPI_REQUEST_NULL, "ibarrier request");
    printf("inter ibarrier test %d: %.8f\n", rank, MPI_Wtime() - t0);
    /* A broadcast from A0 (MPI_ROOT; A1 gives MPI_PROC_NULL) to B. */
    int data[100];
    for (int i = 0; i < 100; i++)
        data[i] = a && lr == 0 ? i : -1;
    t0 = align();
    MPI_Bcast(data, 100, MPI_INT, a ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, ic);
    printf("inter bcast %d: %.8f\n", rank, MPI_Wtime() - t0);
    for (int i = 0; i < 100; i++)
        bad |= check(data[i] == (a && lr ? -1 : i), "inter bcast");
    /* An allreduce: each group gets the other's sum. */
    int x = rank + 1, y = 0;
    t0 = align();
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, ic);
    printf("inter allreduce %d: %.8f\n", rank, MPI_Wtime() - t0);
    bad |= check(y == (a ? 2 * n + 3 : 3), "inter allreduce");
    /* Merged: A first (high = 0), then a collective on it. */
    int mr = -1, sum = 0;
    MPI_Intercomm_merge(ic, !a, &merged);
    MPI_Comm_rank(merged, &mr);
    bad |= check(mr == rank, "merged rank");
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged);
    bad |= check(sum == size * (size - 1) / 2, "merged allreduce");
    /* Split into pairs (A_i, B_i): intercommunicators of one rank a side. */
    MPI_Comm pair;
    int ps = 0, prs = 0, pw = -1;
    MPI_Comm_split(ic, lr, 0, &pair);
    MPI_Comm_size(pair, &ps);
    MPI_Comm_remote_size(pair, &prs);
    MPI_Sendrecv(&rank, 1, MPI_INT, 0, 4, &pw, 1, MPI_INT, 0, 4, pair, MPI_STATUS_IGNORE);
    bad |= check(ps == 1 && prs == 1 && pw == (a ? rank + n : rank - n), "split pairs");
    MPI_Comm_free(&pair);
    /* A duplicate, a message on it, and MPI_Comm_disconnect. */
    MPI_Comm_dup(ic, &dup);
    int v = -1;
    if (a && lr == 0)
        MPI_Send(&rank, 1, MPI_INT, 1, 3, dup);
    else if (!a && lr == 1)
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, dup, MPI_STATUS_IGNORE);
    bad |= check(a || lr != 1 || v == 0, "dup message");
    MPI_Comm_disconnect(&dup);
    MPI_Comm_free(&merged);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&half);
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0)
        printf("inter %s\n", anybad ? "WRONG" : "ok");
    return anybad;
}

static int wtime(void)
{
    double t0 = MPI_Wtime();
    sleep_s(0.2);
    double t1 = MPI_Wtime();
    double c0 = real_cpu();
    volatile double x = 0;
    while (real_cpu() - c0 < 0.2)
        x += 1;
    double t2 = MPI_Wtime();
    if (rank == 0)
        printf("sleep %.6f busy %.6f\n", t1 - t0, t2 - t1);
    return 0;
}

static double secs(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double tod(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + 1e-6 * (double)tv.tv_usec;
}

static int cancel(void)
{
    int a = -1, b = -1, c = -1, d = -1, flag = 0;
    MPI_Request r[2];
    MPI_Status st;
    if (rank == 0) {
        MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(&b, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, &r[1]);
        MPI_Cancel(&r[0]);
        MPI_Cancel(&r[1]);
        int c0 = 0, c1 = 0;
        MPI_Wait(&r[0], &st);
        MPI_Test_cancelled(&st, &c0);
        MPI_Test(&r[1], &flag, &st);
        MPI_Test_cancelled(&st, &c1);
        MPI_Barrier(MPI_COMM_WORLD); /* rank 1 sends tag 5 and 6 now */
        MPI_Recv(&d, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* 5 is here too */
        MPI_Irecv(&c, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &r[0]);
        MPI_Cancel(&r[0]);
        int c2 = 1;
        MPI_Wait(&r[0], &st);
        MPI_Test_cancelled(&st, &c2);
        int e = -1;
        MPI_Recv(&e, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("cancel: wildcard %s, named %s (test flag %d), arrived %s got %d, then %d; sent %d\n",
               c0 ? "cancelled" : "NOT cancelled", c1 ? "cancelled" : "NOT cancelled", flag,
               c2 ? "cancelled" : "received", c, d, e);
    } else if (rank == 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        int five = 5, six = 6, seven = 7;
        MPI_Send(&five, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
        MPI_Send(&six, 1, MPI_INT, 0, 6, MPI_COMM_WORLD);
        MPI_Isend(&seven, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &r[0]);
        MPI_Cancel(&r[0]);
        MPI_Wait(&r[0], &st);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return 0;
}

static int pollsleep(void)
{
    int v = rank;
    if (rank == 0) {
        long polls = 0;
        for (int got = 1; got < size;) {
            int flag = 0;
            MPI_Status st;
            MPI_Iprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, &st);
            polls++;
            if (flag) {
                MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                got++;
            } else {
                usleep(1000);
            }
        }
        printf("polls %ld at %.6f\n", polls, MPI_Wtime());
    } else {
        usleep(100000 * (useconds_t)rank);
        MPI_Send(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    return 0;
}

/* Differences of MPI_Wtime, CLOCK_MONOTONIC, CLOCK_REALTIME, gettimeofday
 * and the process's CPU clock over the sleeps, then over a busy loop. */
static int clocks(double date_before)
{
    double w0 = MPI_Wtime(), m0 = secs(CLOCK_MONOTONIC), r0 = secs(CLOCK_REALTIME), g0 = tod(),
           c0 = secs(CLOCK_PROCESS_CPUTIME_ID);
    time_t t0 = time(NULL);
    struct timespec ts = {0, 200000000L};
    nanosleep(&ts, NULL);
    usleep(100000);
    poll(NULL, 0, 50);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += 250000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
    double w1 = MPI_Wtime(), m1 = secs(CLOCK_MONOTONIC), r1 = secs(CLOCK_REALTIME), g1 = tod(),
           c1 = secs(CLOCK_PROCESS_CPUTIME_ID);
    volatile double x = 0;
    for (long i = 0; i < 20000000L; i++)
        x += 1e-9 * (double)i;
    double w2 = MPI_Wtime(), m2 = secs(CLOCK_MONOTONIC), c2 = secs(CLOCK_PROCESS_CPUTIME_ID);
    if (rank == 0) {
        printf("date %.0f %.0f %ld\n", date_before, r0, (long)t0);
        printf("sleeps wtime %.9f mono %.9f real %.9f tod %.6f cpu %.9f\n", w1 - w0, m1 - m0,
               r1 - r0, g1 - g0, c1 - c0);
        printf("busy wtime %.9f mono %.9f cpu %.9f\n", w2 - w1, m2 - m1, c2 - c1);
    }
    return 0;
}

/* handover: whose turn it is to call MPI on rank 0 (0: main, 1: the other). */
static atomic_int turn;
static int rounds;

static void *handover_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < rounds; i++) {
        while (atomic_load(&turn) != 1)
            ;
        int v = i;
        MPI_Send(&v, 1, MPI_INT, 1, 4, MPI_COMM_WORLD);
        MPI_Recv(&v, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (v != i + 1)
            abort();
        atomic_store(&turn, 0);
    }
    return NULL;
}

static int handover(int n)
{
    int level;
    MPI_Query_thread(&level);
    rounds = n;
    if (rank == 1) {
        for (int i = 0; i < n; i++) {
            int v;
            MPI_Recv(&v, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            v++;
            MPI_Send(&v, 1, MPI_INT, 0, 4, MPI_COMM_WORLD);
        }
    } else if (rank == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, handover_thread, NULL) != 0)
            return 1;
        long reads = 0;
        for (int i = 0; i < n; i++) {
            int flag;
            MPI_Iprobe(1, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE); /* the MPI thread now */
            atomic_store(&turn, 1);
            while (atomic_load(&turn) != 0) {
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                reads++;
            }
        }
        pthread_join(t, NULL);
        printf("handover: level %s rounds %d%s\n",
               level == MPI_THREAD_MULTIPLE     ? "multiple"
               : level == MPI_THREAD_SERIALIZED ? "serialized"
                                                : "lower",
               n, reads > 0 ? "" : " (no clock read)");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return 0;
}

static int rma(void)
{
    double *buf;
    MPI_Win win;
    MPI_Win_allocate(4 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &buf,
                     &win);
    for (int i = 0; i < 4; i++)
        buf[i] = rank * 10 + i;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, bad = 0;
    double me = rank, got = -1, one = 1;
    MPI_Win_fence(0, win);
    MPI_Put(&me, 1, MPI_DOUBLE, next, 0, 1, MPI_DOUBLE, win);
    MPI_Get(&got, 1, MPI_DOUBLE, prev, 1, 1, MPI_DOUBLE, win);
    MPI_Accumulate(&one, 1, MPI_DOUBLE, 0, 3, 1, MPI_DOUBLE, MPI_SUM, win);
    MPI_Win_fence(0, win);
    bad |= buf[0] != prev || got != prev * 10 + 1 || (rank == 0 && buf[3] != 3 + size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        double x = 42, y = -1, t[6];
        t[0] = MPI_Wtime();
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        t[1] = MPI_Wtime();
        MPI_Put(&x, 1, MPI_DOUBLE, 1, 2, 1, MPI_DOUBLE, win);
        t[2] = MPI_Wtime();
        MPI_Win_flush(1, win);
        t[3] = MPI_Wtime();
        MPI_Get(&y, 1, MPI_DOUBLE, 1, 2, 1, MPI_DOUBLE, win);
        MPI_Win_flush(1, win);
        t[4] = MPI_Wtime();
        MPI_Win_unlock(1, win);
        t[5] = MPI_Wtime();
        bad |= y != 42;
        printf("rma: lock %.0f put %.0f flush %.0f get %.0f unlock %.0f us\n", 1e6 * (t[1] - t[0]),
               1e6 * (t[2] - t[1]), 1e6 * (t[3] - t[2]), 1e6 * (t[4] - t[3]), 1e6 * (t[5] - t[4]));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    bad |= rank == 1 && buf[2] != 42;
    MPI_Win_lock_all(0, win);
    double r2 = 100 + rank;
    MPI_Put(&r2, 1, MPI_DOUBLE, next, 1, 1, MPI_DOUBLE, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win); /* to read its own window */
    bad |= buf[1] != 100 + prev;
    MPI_Win_unlock(rank, win);
    MPI_Win_free(&win);
    /* A window over the program's own memory. */
    int mine[2] = {0, 0}, v = rank + 1;
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &half);
    MPI_Win_create(mine, sizeof mine, sizeof(int), MPI_INFO_NULL, half, &win);
    MPI_Comm_free(&half); /* the window keeps its group */
    MPI_Win_fence(0, win);
    MPI_Put(&v, 1, MPI_INT, next, 1, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    bad |= mine[1] != prev + 1;
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0)
        printf("rma: data %s\n", all ? "WRONG" : "right");
    return all;
}

static int rma_locks(int n)
{
    int *b;
    MPI_Win w;
    MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &b, &w);
    b[0] = b[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        int v;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w);
        MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, w);
        MPI_Win_flush(0, w);
        v++;
        MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, w);
        MPI_Win_unlock(0, w);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int count = -1;
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
        count = b[0];
        MPI_Win_unlock(0, w);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        int v = 7;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w);
        usleep(1000);
        MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, w);
        MPI_Win_unlock(0, w);
        double end = MPI_Wtime();
        MPI_Send(&end, 1, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD);
    } else if (rank == 0) {
        struct timespec d = {0, 500000000}; /* real time: rank 1 asks first */
        syscall(SYS_nanosleep, &d, NULL);
        double t0 = MPI_Wtime(), end;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w);
        double t1 = MPI_Wtime();
        int got = b[1];
        MPI_Win_unlock(0, w);
        MPI_Recv(&end, 1, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rma-locks: count %d of %d, waited %s, granted %.2f us after rank 1's unlock, "
               "got %d\n",
               count, size * n, t1 - t0 > 1e-3 ? "over 1 ms" : "less", 1e6 * (t1 - end), got);
    }
    MPI_Win_free(&w);
    return 0;
}

int main(int argc, char **argv)
{
    struct timespec before;
    clock_gettime(CLOCK_REALTIME, &before); /* real: MPI_Init has not run */
    if (argc > 1 && !strcmp(argv[1], "handover")) {
        int level;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
    } else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "";
    int rc = 0;
    if (!strcmp(mode, "pingpong") && argc == 4)
        rc = pingpong(atoi(argv[2]), atoi(argv[3]));
    else if (!strcmp(mode, "fanin") && argc == 3)
        rc = fanin(atoi(argv[2]));
    else if (!strcmp(mode, "master") && argc == 5)
        rc = master(atol(argv[2]), atoi(argv[3]), atoi(argv[4]));
    else if (!strcmp(mode, "iprobe") && argc == 3)
        rc = iprobe(atoi(argv[2]));
    else if (!strcmp(mode, "collectives"))
        rc = collectives();
    else if (!strcmp(mode, "halo") && argc == 3)
        rc = halo(atoi(argv[2]));
    else if (!strcmp(mode, "tricky"))
        rc = tricky();
    else if (!strcmp(mode, "p2p"))
        rc = p2p();
    else if (!strcmp(mode, "waitany") && argc == 3)
        rc = waitany(atoi(argv[2]));
    else if (!strcmp(mode, "chain") && (argc == 3 || argc == 4) && size == 3)
        rc = chain(atoi(argv[2]), argc == 4 ? argv[3] : "send");
    else if (!strcmp(mode, "held") && argc == 3 && size == 3)
        rc = held(atoi(argv[2]));
    else if (!strcmp(mode, "relayed") && size == 3)
        rc = relayed();
    else if (!strcmp(mode, "inter") && size == 4)
        rc = inter();
    else if (!strcmp(mode, "handover") && argc == 3 && size == 2)
        rc = handover(atoi(argv[2]));
    else if (!strcmp(mode, "rma") && size >= 2)
        rc = rma();
    else if (!strcmp(mode, "rma-locks") && argc == 3 && size >= 2)
        rc = rma_locks(atoi(argv[2]));
    else if (!strcmp(mode, "inter-gather") && size == 4) {
        int a, v = 0, all[2];
        MPI_Comm half, ic = halves(&half, &a);
        MPI_Gather(&v, 1, MPI_INT, all, 1, MPI_INT, a ? MPI_ROOT : 0, ic);
    } else if (!strcmp(mode, "wtime"))
        rc = wtime();
    else if (!strcmp(mode, "cancel"))
        rc = cancel();
    else if (!strcmp(mode, "pollsleep"))
        rc = pollsleep();
    else if (!strcmp(mode, "clocks"))
        rc = clocks((double)before.tv_sec);
    else if (!strcmp(mode, "stream") && argc == 4)
        rc = stream(atoi(argv[2]), atoi(argv[3]));
    else if (!strcmp(mode, "ahead") && argc == 3)
        rc = ahead(atoi(argv[2]));
    else if (!strcmp(mode, "abort")) {
        if (rank == 1 % size)
            MPI_Abort(MPI_COMM_WORLD, 3);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(mode, "crash")) {
        if (rank == 1 % size)
            raise(SIGSEGV);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(mode, "deadlock") || !strcmp(mode, "ssend-deadlock")) {
        int v = 0, peer = rank ^ 1;
        if (peer < size) {
            if (mode[0] == 'd') {
                MPI_Recv(&v, 1, MPI_INT, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&v, 1, MPI_INT, peer, 9, MPI_COMM_WORLD);
            } else {
                MPI_Ssend(&v, 1, MPI_INT, peer, 9, MPI_COMM_WORLD);
                MPI_Recv(&v, 1, MPI_INT, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
    } else if (!strcmp(mode, "spawn")) {
        MPI_Comm inter;
        char *args[] = {NULL};
        MPI_Comm_spawn("true", args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       MPI_ERRCODES_IGNORE);
    } else {
        if (rank == 0)
            fprintf(stderr, "patterns: unknown mode or arguments\n");
        rc = 2;
    }
    MPI_Finalize();
    return rc;
}
