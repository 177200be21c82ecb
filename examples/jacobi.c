/*
 * jacobi.c - a 2-D Jacobi sweep on arrays that Tenbin re-balances (S4).
 *
 * The grid is ROWS x COLS, split by rows over the ranks; two arrays, u and v,
 * are registered with tb_redist_add_array and swapped after every sweep the
 * way every stencil code does it (t = u; u = v; v = t).  The library follows
 * the swap: after a move each name still holds its own data.  Rows whose
 * global index is below 0 or at ROWS are the boundary (1 above, 0 below) and
 * live in the halos of the first and last ranks; columns 0 and COLS-1 are
 * fixed too.
 *
 * The program runs the sweep twice: once with balancing off (the reference)
 * and once as asked, and checks that the two grids are identical bit for bit:
 * every cell is computed by the same expression in the same order whoever
 * owns it, so a move may change the time, never the answer.  The sum printed
 * is taken row by row in global order, so it does not depend on the layout
 * either.
 *
 *     mpiexec -n 3 ./jacobi [--mode predict|nopredict|forced|off] [--interval N]
 *                           [--iters N] [--rows N] [--cols N] [--slow RANK:FACTOR]
 *
 * --slow makes one rank do its sweep FACTOR times (a slower node); forced
 * moves to a new layout every --interval iterations whatever the speeds.
 * Exit status 0 when the grids agree, 1 when they do not, 2 on bad usage.
 */
#define _POSIX_C_SOURCE 200809L

#include <tenbin.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct opts {
    const char *mode;
    uint64_t interval, iters, rows, cols;
    int slow_rank, slow_factor;
} opts;

static int usage(int rank, const char *why)
{
    if (rank == 0)
        fprintf(stderr, "jacobi: %s\nusage: jacobi [--mode predict|nopredict|forced|off] "
                        "[--interval N] [--iters N] [--rows N] [--cols N] [--slow RANK:FACTOR]\n",
                why);
    return 2;
}

static int parse(int argc, char **argv, int rank, opts *o)
{
    *o = (opts){"predict", 5, 200, 120, 400, -1, 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        uint64_t *num = strcmp(a, "--interval") == 0 ? &o->interval
                        : strcmp(a, "--iters") == 0  ? &o->iters
                        : strcmp(a, "--rows") == 0   ? &o->rows
                        : strcmp(a, "--cols") == 0   ? &o->cols
                                                     : NULL;
        if (!v && (num || !strcmp(a, "--mode") || !strcmp(a, "--slow")))
            return usage(rank, "an option needs a value");
        if (num) {
            unsigned long long x = strtoull(v, &end, 10);
            if (*v < '0' || *v > '9' || *end || x == 0)
                return usage(rank, "expected a whole number > 0");
            *num = x;
        } else if (strcmp(a, "--mode") == 0) {
            o->mode = v;
        } else if (strcmp(a, "--slow") == 0) {
            if (sscanf(v, "%d:%d", &o->slow_rank, &o->slow_factor) != 2 || o->slow_factor < 1)
                return usage(rank, "--slow: expected RANK:FACTOR");
        } else {
            return usage(rank, "unknown option");
        }
        i++;
    }
    if (strcmp(o->mode, "predict") && strcmp(o->mode, "nopredict") && strcmp(o->mode, "forced") &&
        strcmp(o->mode, "off"))
        return usage(rank, "--mode: expected predict, nopredict, forced or off");
    if (o->cols < 3)
        return usage(rank, "--cols: at least 3");
    return 0;
}

/* One sweep: v's owned rows from u's (halos included). */
static void sweep(const double *u, double *v, int nlocal, uint64_t cols)
{
    for (int i = 1; i <= nlocal; i++) {
        const double *up = u + (size_t)(i - 1) * cols, *mid = u + (size_t)i * cols,
                     *dn = u + (size_t)(i + 1) * cols;
        double *out = v + (size_t)i * cols;
        out[0] = mid[0];
        for (uint64_t j = 1; j + 1 < cols; j++)
            out[j] = 0.25 * (up[j] + dn[j] + mid[j - 1] + mid[j + 1]);
        out[cols - 1] = mid[cols - 1];
    }
}

/* A layout for a forced move: the rows shifted towards rank k % P. */
static void forced_layout(int P, uint64_t rows, uint64_t k, uint64_t *counts)
{
    uint64_t base = rows / (uint64_t)(P + 1), used = 0;
    for (int i = 0; i < P; i++) {
        counts[i] = base;
        used += base;
    }
    counts[k % (uint64_t)P] += rows - used;
}

/* Run the sweep; *grid receives the whole grid on rank 0 (rows x cols). */
static int run(const opts *o, int mode_off, double **grid, uint64_t *moves)
{
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    tb_redist_opts cfg;
    tb_redist_opts_init(&cfg);
    cfg.units = o->rows;
    cfg.interval = o->interval;
    cfg.mode = mode_off || !strcmp(o->mode, "off") || !strcmp(o->mode, "forced") ? TB_REDIST_OFF
               : !strcmp(o->mode, "nopredict")                                 ? TB_REDIST_NO_PREDICT
                                                                                : TB_REDIST_PREDICT;
    int forced = !mode_off && !strcmp(o->mode, "forced");
    tb_redist *r;
    int rc = tb_redist_create(&r, MPI_COMM_WORLD, &cfg);
    if (rc != TB_OK)
        return rc;
    double *u = NULL, *v = NULL;
    tb_redist_array_desc du = {.name = "u", .ndims = 2, .dims = {o->rows, o->cols}, .split = 0,
                               .elem_size = sizeof(double), .type = MPI_DATATYPE_NULL,
                               .halo_lo = 1, .halo_hi = 1, .data = (void **)&u};
    tb_redist_array_desc dv = du;
    dv.name = "v";
    dv.data = (void **)&v;
    int nlocal = 0, start = 0;
    if ((rc = tb_redist_add_array(r, &du, NULL)) != TB_OK ||
        (rc = tb_redist_add_array(r, &dv, NULL)) != TB_OK ||
        (rc = tb_redist_bind_int(r, TB_REDIST_VAR_COUNT, &nlocal, 0)) != TB_OK ||
        (rc = tb_redist_bind_int(r, TB_REDIST_VAR_START, &start, 0)) != TB_OK) {
        tb_redist_destroy(&r);
        return rc;
    }
    /* initial values: owned cells from their position; the boundary rows in
     * the edge halos of both arrays */
    for (double *a = u; a; a = a == u ? v : NULL) {
        for (int i = 0; i < nlocal; i++)
            for (uint64_t j = 0; j < o->cols; j++)
                a[(size_t)(i + 1) * o->cols + j] =
                    (double)((uint64_t)(start + i) * 7 + j * 13 % 17) / 100.0;
        if (start == 0)
            for (uint64_t j = 0; j < o->cols; j++)
                a[j] = 1.0;
        if ((uint64_t)(start + nlocal) == o->rows)
            for (uint64_t j = 0; j < o->cols; j++)
                a[(size_t)(nlocal + 1) * o->cols + j] = 0.0;
    }
    uint64_t *counts = malloc((size_t)P * sizeof *counts);
    if (!counts) {
        tb_redist_destroy(&r);
        return TB_ERR_NOMEM;
    }
    rc = tb_redist_probe(r);
    for (uint64_t it = 1; it <= o->iters && rc == TB_OK; it++) {
        rc = tb_redist_halo_exchange(r);
        int reps = rank == o->slow_rank ? o->slow_factor : 1;
        for (int k = 0; k < reps && rc == TB_OK; k++)
            sweep(u, v, nlocal, o->cols);
        double *t = u;
        u = v;
        v = t;
        if (rc != TB_OK)
            break;
        if (forced) {
            if (it % o->interval == 0 && it < o->iters) {
                forced_layout(P, o->rows, it / o->interval, counts);
                rc = tb_redist_apply(r, counts);
            }
        } else {
            rc = tb_redist_balance(r, it, o->iters, NULL);
        }
    }
    free(counts);
    /* gather u's owned rows to rank 0 in global order */
    int *rc_counts = NULL, *displs = NULL;
    if (rank == 0) {
        *grid = malloc(o->rows * o->cols * sizeof **grid);
        rc_counts = malloc((size_t)P * sizeof *rc_counts);
        displs = malloc((size_t)P * sizeof *displs);
        if (!*grid || !rc_counts || !displs)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int mine = nlocal * (int)o->cols, at = start * (int)o->cols;
    MPI_Gather(&mine, 1, MPI_INT, rc_counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gather(&at, 1, MPI_INT, displs, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gatherv(u + o->cols, mine, MPI_DOUBLE, rank == 0 ? *grid : NULL, rc_counts, displs,
                MPI_DOUBLE, 0, MPI_COMM_WORLD);
    free(rc_counts);
    free(displs);
    tb_redist_stats st;
    tb_redist_get_stats(r, &st);
    *moves = st.moves;
    tb_redist_destroy(&r);
    return rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    opts o;
    int st = parse(argc, argv, rank, &o);
    if (st == 0 && o.rows < 2 * (uint64_t)P) {
        st = usage(rank, "--rows: at least two rows per rank");
    }
    if (st != 0) {
        MPI_Finalize();
        return st;
    }
    double *ref = NULL, *got = NULL;
    uint64_t ref_moves = 0, moves = 0;
    int rc = run(&o, 1, &ref, &ref_moves);
    if (rc == TB_OK)
        rc = run(&o, 0, &got, &moves);
    if (rc != TB_OK) {
        if (rank == 0)
            fprintf(stderr, "jacobi: %s\n", tb_strerror(rc));
        MPI_Finalize();
        return 1;
    }
    if (rank == 0) {
        uint64_t differ = 0;
        double sum = 0;
        for (uint64_t i = 0; i < o.rows; i++) {
            double row = 0;
            for (uint64_t j = 0; j < o.cols; j++) {
                row += got[i * o.cols + j];
                differ += memcmp(&got[i * o.cols + j], &ref[i * o.cols + j], sizeof(double)) != 0;
            }
            sum += row;
        }
        printf("jacobi: %" PRIu64 "x%" PRIu64 " grid, %" PRIu64 " sweeps on %d rank%s, mode %s: "
               "sum %.17g after %" PRIu64 " moves; %s\n",
               o.rows, o.cols, o.iters, P, P == 1 ? "" : "s", o.mode, sum, moves,
               differ ? "DIFFERS from the run that never moves" : "identical to the run that "
                                                                  "never moves");
        if (differ) {
            fprintf(stderr, "jacobi: %" PRIu64 " of %" PRIu64 " cells differ\n", differ,
                    o.rows * o.cols);
            st = 1;
        }
    }
    free(ref);
    free(got);
    MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return st;
}
