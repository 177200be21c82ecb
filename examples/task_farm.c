/*
 * task_farm.c - a bag of tasks over tb_mw: count the primes below 1 000 000.
 *
 * Rank 0 adds one task per block of numbers (the block's bounds, packed with
 * tb_buf_pack_u64); whichever rank Tenbin chooses counts the primes in the
 * block and returns the count and the largest prime it found; the result
 * function, on rank 0, reads them back with tb_buf_unpack_u64 and adds them
 * up.  The answer is known: 78498 primes, the largest 999983.
 *
 *     mpiexec -n 3 ./task_farm
 *
 * Prints the answer on rank 0; exits with status 1 on every rank if it is
 * wrong or the run failed.
 */
#include <inttypes.h>
#include <stdio.h>

#include <mpi.h>
#include <tenbin.h>

enum { LIMIT = 1000000, BLOCK = 10000 };
#define EXPECTED_COUNT 78498u
#define EXPECTED_LARGEST 999983u

typedef struct totals {
    uint64_t count;   /* primes counted so far */
    uint64_t largest; /* largest prime seen so far */
    uint64_t results; /* results received */
} totals;

static int is_prime(uint64_t n)
{
    if (n < 2)
        return 0;
    for (uint64_t d = 2; d * d <= n; d++)
        if (n % d == 0)
            return 0;
    return 1;
}

/* Worker: the task is two u64, [lo, hi); the result is two u64, the count of
 * primes in it and the largest (0 if none). */
static int count_primes(void *ctx, uint64_t id, const void *task, size_t len, tb_buf *result)
{
    (void)ctx;
    (void)id;
    tb_buf in;
    tb_buf_view(&in, task, len);
    uint64_t lo, hi;
    TB_CHECK(tb_buf_unpack_u64(&in, &lo));
    TB_CHECK(tb_buf_unpack_u64(&in, &hi));
    uint64_t count = 0, largest = 0;
    for (uint64_t n = lo; n < hi; n++)
        if (is_prime(n)) {
            count++;
            largest = n;
        }
    TB_CHECK(tb_buf_pack_u64(result, count));
    return tb_buf_pack_u64(result, largest);
}

/* Result function (rank 0, once per task, in any order). */
static int add_result(void *ctx, uint64_t id, const void *res, size_t len)
{
    (void)id;
    totals *t = ctx;
    tb_buf in;
    tb_buf_view(&in, res, len);
    uint64_t count, largest;
    TB_CHECK(tb_buf_unpack_u64(&in, &count));
    TB_CHECK(tb_buf_unpack_u64(&in, &largest));
    if (tb_buf_remaining(&in) != 0)
        return TB_ERR_PARSE;
    t->count += count;
    if (largest > t->largest)
        t->largest = largest;
    t->results++;
    return TB_OK;
}

/* A setup call that fails ends the job: the other ranks would wait for this one. */
static void check(int rc, const char *what)
{
    if (rc != TB_OK) {
        fprintf(stderr, "task_farm: %s: %s\n", what, tb_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    totals t = {0, 0, 0};
    tb_mw *mw;
    check(tb_mw_create(&mw, MPI_COMM_WORLD), "tb_mw_create"); /* collective */
    check(tb_mw_set_worker(mw, count_primes, NULL), "tb_mw_set_worker");
    check(tb_mw_set_result(mw, add_result, &t), "tb_mw_set_result");
    if (rank == 0) { /* tasks are added on rank 0 only */
        tb_buf task = TB_BUF_INIT;
        for (uint64_t lo = 0; lo < LIMIT; lo += BLOCK) {
            tb_buf_clear(&task);
            check(tb_buf_pack_u64(&task, lo), "tb_buf_pack_u64");
            check(tb_buf_pack_u64(&task, lo + BLOCK), "tb_buf_pack_u64");
            check(tb_mw_add_task(mw, task.data, task.len), "tb_mw_add_task"); /* copied */
        }
        tb_buf_free(&task);
    }
    int rc = tb_mw_run(mw); /* collective; the same code on every rank */
    tb_mw_destroy(&mw);     /* collective */

    int ok = rc == TB_OK;
    if (rank == 0 && !ok)
        fprintf(stderr, "task_farm: tb_mw_run: %s\n", tb_strerror(rc));
    if (rank == 0 && ok) {
        ok = t.count == EXPECTED_COUNT && t.largest == EXPECTED_LARGEST &&
             t.results == LIMIT / BLOCK;
        printf("task_farm on %d rank%s: %" PRIu64 " primes below %d, the largest %" PRIu64
               " (expected %u and %u): %s\n",
               size, size == 1 ? "" : "s", t.count, LIMIT, t.largest, EXPECTED_COUNT,
               EXPECTED_LARGEST, ok ? "correct" : "WRONG");
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return ok ? 0 : 1;
}
