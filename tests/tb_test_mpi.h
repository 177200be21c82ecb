/*
 * tb_test_mpi.h - the main() of an MPI test program (tb_test.h stays free of
 * MPI).
 *
 *     static int rank, nranks;
 *     ... tests using rank and nranks ...
 *     TB_TEST_MPI_MAIN(tests, 2, rank, nranks)
 *
 * `mpiexec -n N prog N [test]`: the first argument must be the size the
 * program got (so a launcher that starts N singletons is caught), at least
 * min_ranks; then every test, or the one named.  Rank 0 prints every
 * result, the others their failures only.  Exit status, the same on every
 * rank: 1 if a test failed on any rank, 2 for bad usage.
 *
 * TB_TEST_MPI_MAIN_FLAGS(..., TB_TEST_MPI_ERRORS_ONLY): the library logs
 * errors only (unless TENBIN_LOG says otherwise), for programs whose tests
 * fail runs on purpose.
 */
#ifndef TB_TEST_MPI_H
#define TB_TEST_MPI_H

#include <mpi.h>
#include <unistd.h>

#include "tb_test.h"

enum { TB_TEST_MPI_ERRORS_ONLY = 1 };

static inline int tb_test_mpi_main(const tb_test *table, int min_ranks, unsigned flags, int argc,
                                   char **argv, int *rank, int *nranks)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nranks);
    tb_log_set_rank(*rank);
    if ((flags & TB_TEST_MPI_ERRORS_ONLY) && !getenv("TENBIN_LOG"))
        tb_log_set_level(TB_LOG_ERROR);
    tb_test_quiet_ = *rank != 0;
    long want = -1;
    int rc;
    if (argc < 2 || tb_parse_long(argv[1], 1, 1 << 20, &want) != TB_OK || want != *nranks) {
        if (*rank == 0)
            fprintf(stderr, "usage: mpiexec -n N %s N [test]: size is %d\n", argv[0], *nranks);
        rc = 2;
    } else if (*nranks < min_ranks) {
        if (*rank == 0)
            fprintf(stderr, "%s needs at least %d ranks\n", argv[0], min_ranks);
        rc = 2;
    } else {
        rc = tb_test_run(table, argc > 2 ? argv[2] : NULL);
    }
    int any = rc;
    MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (tb_test_scratch_made_)
        rmdir(tb_test_scratch_);
    MPI_Finalize();
    return any;
}

#define TB_TEST_MPI_MAIN_FLAGS(table, min_ranks, flags, rank_var, size_var)                   \
    int main(int argc, char **argv)                                                          \
    {                                                                                        \
        return tb_test_mpi_main((table), (min_ranks), (flags), argc, argv, &(rank_var),      \
                                &(size_var));                                                \
    }
#define TB_TEST_MPI_MAIN(table, min_ranks, rank_var, size_var)                               \
    TB_TEST_MPI_MAIN_FLAGS(table, min_ranks, 0, rank_var, size_var)

#endif /* TB_TEST_MPI_H */
