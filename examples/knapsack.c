/*
 * knapsack.c - a problem for tb_bnb: a 0/1 knapsack of 30 items whose
 * profits are close to their weights (the hard kind for this bound), with a
 * known optimum: 802, found by dynamic programming over the capacities.
 *
 * A problem is four functions over subproblems that are byte strings (here
 * packed with the tb_buf helpers): the root, a bound, the children, and a
 * cheap feasible solution.  Items are listed best profit per weight first.
 * A subproblem has decided the first k items: u32 k, u64 profit, u64 room
 * left, u32 the chosen items as bits.  Bound: the linear relaxation of the
 * rest (Dantzig), rounded down since profits are integers.  Children: take
 * item k if it fits, or leave it.  Solution: the greedy completion.
 *
 *     mpiexec -n 3 ./knapsack
 *
 * Prints the optimum on rank 0; exits with status 1 on every rank if it or
 * the chosen items are wrong, or the run failed.
 */
#include <inttypes.h>
#include <stdio.h>

#include <mpi.h>
#include <tenbin.h>

enum { N = 30, CAPACITY = 587, OPTIMUM = 802 };
static const uint64_t profit[N] = {27, 30, 30, 33, 42, 27, 53, 53, 29, 54, 47, 51, 62, 61, 73,
                                   27, 66, 46, 53, 68, 50, 60, 70, 52, 48, 44, 54, 52, 55, 55};
static const uint64_t weight[N] = {12, 15, 16, 21, 29, 19, 38, 38, 21, 40, 35, 38, 49, 49, 59,
                                   22, 54, 38, 44, 57, 42, 51, 60, 45, 42, 39, 48, 47, 50, 50};

typedef struct sub {
    uint32_t k;      /* items 0..k-1 decided */
    uint64_t profit; /* of the chosen ones */
    uint64_t room;   /* capacity left */
    uint32_t chosen; /* bit i: item i taken */
} sub;

static int pack(const sub *s, tb_buf *out)
{
    TB_CHECK(tb_buf_pack_u32(out, s->k));
    TB_CHECK(tb_buf_pack_u64(out, s->profit));
    TB_CHECK(tb_buf_pack_u64(out, s->room));
    return tb_buf_pack_u32(out, s->chosen);
}

static int unpack(const void *bytes, size_t len, sub *s)
{
    tb_buf in;
    tb_buf_view(&in, bytes, len);
    TB_CHECK(tb_buf_unpack_u32(&in, &s->k));
    TB_CHECK(tb_buf_unpack_u64(&in, &s->profit));
    TB_CHECK(tb_buf_unpack_u64(&in, &s->room));
    TB_CHECK(tb_buf_unpack_u32(&in, &s->chosen));
    return s->k <= N && tb_buf_remaining(&in) == 0 ? TB_OK : TB_ERR_PARSE;
}

/* Whole items in order while they fit, then the fraction of the next. */
static double dantzig(const sub *s)
{
    uint64_t v = s->profit, room = s->room;
    for (uint32_t i = s->k; i < N; i++) {
        if (weight[i] > room)
            return (double)(v + profit[i] * room / weight[i]);
        v += profit[i];
        room -= weight[i];
    }
    return (double)v;
}

static int k_root(void *ctx, tb_buf *out)
{
    (void)ctx;
    sub s = {0, 0, CAPACITY, 0};
    return pack(&s, out);
}

static int k_bound(void *ctx, const void *bytes, size_t len, double *bound)
{
    (void)ctx;
    sub s;
    TB_CHECK(unpack(bytes, len, &s));
    *bound = dantzig(&s);
    return TB_OK;
}

static int add_child(tb_bnb_children *kids, const sub *s)
{
    tb_buf b = TB_BUF_INIT;
    int rc = pack(s, &b);
    if (rc == TB_OK)
        rc = tb_bnb_child(kids, b.data, b.len, dantzig(s)); /* copies the bytes */
    tb_buf_free(&b);
    return rc;
}

static int k_branch(void *ctx, const void *bytes, size_t len, tb_bnb_children *kids)
{
    (void)ctx;
    sub s;
    TB_CHECK(unpack(bytes, len, &s));
    if (s.k == N)
        return TB_OK; /* a leaf */
    uint32_t i = s.k;
    if (weight[i] <= s.room) {
        sub take = {i + 1, s.profit + profit[i], s.room - weight[i], s.chosen | 1u << i};
        TB_CHECK(add_child(kids, &take));
    }
    sub leave = {i + 1, s.profit, s.room, s.chosen};
    return add_child(kids, &leave);
}

static int k_evaluate(void *ctx, const void *bytes, size_t len, double *value, tb_buf *solution)
{
    (void)ctx;
    sub s;
    TB_CHECK(unpack(bytes, len, &s));
    for (uint32_t i = s.k; i < N; i++)
        if (weight[i] <= s.room) {
            s.profit += profit[i];
            s.room -= weight[i];
            s.chosen |= 1u << i;
        }
    *value = (double)s.profit;
    return tb_buf_pack_u32(solution, s.chosen);
}

static const tb_bnb_ops knapsack = {sizeof(tb_bnb_ops), TB_BNB_MAXIMIZE, k_root, k_bound,
                                    k_branch, k_evaluate, NULL};

/* The solution's items fit and make the optimum. */
static int check_solution(const tb_bnb_summary *s)
{
    tb_buf in;
    uint32_t chosen;
    tb_buf_view(&in, s->solution, s->solution_len);
    if (tb_buf_unpack_u32(&in, &chosen) != TB_OK || tb_buf_remaining(&in) != 0)
        return 0;
    uint64_t p = 0, w = 0;
    for (int i = 0; i < N; i++)
        if (chosen >> i & 1u) {
            p += profit[i];
            w += weight[i];
        }
    return w <= CAPACITY && p == OPTIMUM && s->optimum == (double)OPTIMUM;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    tb_bnb *b;
    int rc = tb_bnb_create(&b, MPI_COMM_WORLD, &knapsack, NULL); /* collective */
    if (rc != TB_OK) {
        fprintf(stderr, "knapsack: tb_bnb_create: %s\n", tb_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    rc = tb_bnb_run(b); /* collective; the same code on every rank */
    int ok = rc == TB_OK;
    if (rank == 0 && !ok)
        fprintf(stderr, "knapsack: tb_bnb_run: %s\n", tb_strerror(rc));
    if (rank == 0 && ok) {
        tb_bnb_summary s = {0};
        ok = tb_bnb_get_summary(b, &s) == TB_OK && s.found && s.proven && check_solution(&s);
        printf("knapsack on %d rank%s: optimum %.0f after %" PRIu64
               " subproblems (expected %d): %s\n",
               size, size == 1 ? "" : "s", s.optimum, s.nodes, OPTIMUM, ok ? "correct" : "WRONG");
    }
    tb_bnb_destroy(&b);
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return ok ? 0 : 1;
}
