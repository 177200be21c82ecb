/*
 * bnb_fault.c - a branch-and-bound run whose problem fails in a chosen way,
 * for tests/cli/faults.sh.
 *
 *   mpiexec -n P bnb_fault error|segv|disagree|ok OUT
 *
 * The problem: a full binary tree of depth 12 whose leaves have the values
 * of a hash of their path (minimised; bounds prune nothing).  The branch
 * operation of the node at depth 9 on the all-ones path returns an error or
 * dereferences a null pointer.  Rank 0 writes the optimum to OUT only when
 * the run succeeds (through a temporary name).  Exit status: 0 ok, 1 failed,
 * 2 bad usage.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <mpi.h>

#include "tenbin/bnb.h"
#include "tenbin/core.h"

enum { DEPTH = 12, FAIL_DEPTH = 9 };

typedef struct node {
    uint32_t depth;
    uint32_t pad;
    uint64_t path;
} node;

static const char *mode = "ok";

static double leaf_value(uint64_t path)
{
    uint64_t h = path * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    return (double)(h % 100000 + 1); /* >= 1: the bound 0 prunes nothing */
}

static int t_root(void *ctx, tb_buf *sub)
{
    (void)ctx;
    node n = {0, 0, 0};
    return tb_buf_append(sub, &n, sizeof n);
}

static int t_bound(void *ctx, const void *sub, size_t len, double *bound)
{
    (void)ctx;
    (void)sub;
    (void)len;
    *bound = 0;
    return TB_OK;
}

static int t_branch(void *ctx, const void *sub, size_t len, tb_bnb_children *kids)
{
    (void)ctx;
    node n;
    if (len != sizeof n)
        return TB_ERR_PARSE;
    memcpy(&n, sub, sizeof n);
    if (n.depth == FAIL_DEPTH && n.path == (1u << FAIL_DEPTH) - 1) {
        if (strcmp(mode, "error") == 0)
            return TB_ERR_TASK;
        if (strcmp(mode, "segv") == 0) {
            volatile int *p = NULL;
            *p = 1;
        }
    }
    if (n.depth == DEPTH)
        return TB_OK;
    for (uint64_t b = 0; b < 2; b++) {
        node c = {n.depth + 1, 0, n.path << 1 | b};
        TB_CHECK(tb_bnb_child(kids, &c, sizeof c, NAN));
    }
    return TB_OK;
}

static int t_evaluate(void *ctx, const void *sub, size_t len, double *value, tb_buf *solution)
{
    (void)ctx;
    node n;
    if (len != sizeof n)
        return TB_ERR_PARSE;
    memcpy(&n, sub, sizeof n);
    *value = n.depth == DEPTH ? leaf_value(n.path) : NAN;
    return n.depth == DEPTH ? tb_buf_append(solution, &n.path, sizeof n.path) : TB_OK;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 3) {
        if (rank == 0)
            fprintf(stderr, "usage: bnb_fault error|segv|disagree|ok OUT\n");
        MPI_Finalize();
        return 2;
    }
    mode = argv[1];
    tb_bnb_ops ops = {sizeof ops, TB_BNB_MINIMIZE, t_root, t_bound, t_branch, t_evaluate, NULL};
    tb_bnb *b = NULL;
    int rc = tb_bnb_create(&b, MPI_COMM_WORLD, &ops, NULL);
    /* disagree: the last rank asks for another gap, which the run must
     * refuse on every rank before it starts */
    if (rc == TB_OK && strcmp(mode, "disagree") == 0 && rank == 2)
        rc = tb_bnb_set_gap(b, 0.01);
    if (rc == TB_OK)
        rc = tb_bnb_run(b);
    tb_bnb_summary s;
    if (rc == TB_OK)
        rc = tb_bnb_get_summary(b, &s);
    if (rc == TB_OK && rank == 0) {
        char line[64];
        int n = snprintf(line, sizeof line, "%.0f\n", s.optimum);
        rc = tb_write_file_atomic(argv[2], line, (size_t)n);
    }
    tb_bnb_destroy(&b);
    MPI_Finalize();
    return rc == TB_OK ? 0 : 1;
}
