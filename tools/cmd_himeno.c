#define _POSIX_C_SOURCE 200809L
/*
 * cmd_himeno.c - `tenbin himeno`: the Himeno benchmark on block-distributed
 * i-planes that re-place themselves to match measured speeds (S4).  Run
 * under mpiexec.
 *
 * The interior planes i = 1 .. mi-2 are the units of one distribution; p has
 * a halo plane each side, the other six arrays none.  Per iteration: halo
 * exchange, sweep, the slowdown's repeated work, copy back, balancing point.
 * gosa is the last sweep's float sum of ss^2 per rank, summed over the ranks
 * in rank order; p_bitsum is exact and the same for every decomposition.
 */
#include "tenbin/core.h"

#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "himeno/himeno.h"
#include "tenbin/redist.h"

enum { MAX_SLOW = 64, NARRAYS = 7 };

typedef struct slowdown {
    int rank;
    double factor;
    long from, to; /* iterations, inclusive */
} slowdown;

typedef struct himeno_opts {
    const tb_himeno_size *size;
    long iters;
    int balance; /* TB_REDIST_PREDICT, TB_REDIST_NO_PREDICT or TB_REDIST_OFF */
    slowdown slow[MAX_SLOW];
    int nslow;
    long interval;
    double threshold;
    long force_moves;
    long seed;
    int json, quiet;
} himeno_opts;

typedef struct action {
    long iteration;
    int moved;
    tb_redist_decision d;
    char layout[256];
} action;

static const char *const cmd = "himeno";

static void himeno_usage(FILE *out)
{
    fprintf(out,
            "usage: mpiexec -n P tenbin himeno [options]\n\n"
            "The Himeno benchmark (19-point Jacobi, float) on i-planes distributed in blocks\n"
            "that move between ranks when the measured speeds say it pays (S4).\n\n"
            "  --size XS|S|M|L        grid 32x32x64, 64x64x128, 128x128x256, 256x256x512\n"
            "                         (points, boundaries included; default S)\n"
            "  --iters N              Jacobi sweeps (default 100)\n"
            "  --balance on|off|nopredict   move when the gain over the remaining sweeps\n"
            "                         exceeds the predicted cost (on, default); never (off);\n"
            "                         whenever the imbalance passes the threshold (nopredict)\n"
            "  --interval N           sweeps between balancing points (default 10)\n"
            "  --threshold X          imbalance max/avg that allows a move (default 1.05)\n"
            "  --slowdown RANK:FACTOR[@FROM-TO]   RANK computes FACTOR times slower (it\n"
            "                         repeats FACTOR-1 of its sweep's work) during sweeps FROM\n"
            "                         to TO, or the whole run; repeatable; factors multiply\n"
            "  --force-moves N        every N sweeps move to a random layout (testing)\n"
            "  --seed N               seed of --force-moves (default 1)\n"
            "  --json                 print the results as one JSON object\n"
            "  -q, --quiet            no list of balancing actions\n"
            "  -h, --help             this text\n\n"
            "Prints gosa, MFLOPS (34 flops per interior point and sweep), wall time, the\n"
            "balancing actions and p_bitsum (sum of the bit patterns of p: the same for any\n"
            "number of ranks and any moves; gosa may differ from the 4th digit between\n"
            "decompositions, float sums in another order).  Exit status: 0 ok, 1 run\n"
            "failed, 2 bad usage.\n");
}

static int parse_slowdown(const char *s, slowdown *out)
{
    char *end;
    long rank = strtol(s, &end, 10);
    if (end == s || *end != ':' || rank < 0 || rank > 1 << 24)
        return -1;
    s = end + 1;
    double f = strtod(s, &end);
    if (end == s || !(f >= 1) || !isfinite(f))
        return -1;
    long from = 1, to = LONG_MAX;
    if (*end == '@') {
        s = end + 1;
        from = strtol(s, &end, 10);
        if (end == s || *end != '-')
            return -1;
        s = end + 1;
        to = strtol(s, &end, 10);
        if (end == s || from < 1 || to < from)
            return -1;
    }
    if (*end != '\0')
        return -1;
    *out = (slowdown){(int)rank, f, from, to};
    return 0;
}

static int parse_opts(int argc, char **argv, himeno_opts *o)
{
    static const struct option opts[] = {
        {"size", required_argument, NULL, 's'},     {"iters", required_argument, NULL, 'n'},
        {"balance", required_argument, NULL, 'b'},  {"interval", required_argument, NULL, 'I'},
        {"threshold", required_argument, NULL, 'T'}, {"slowdown", required_argument, NULL, 'S'},
        {"force-moves", required_argument, NULL, 'F'}, {"seed", required_argument, NULL, 'r'},
        {"json", no_argument, NULL, 'j'},           {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (!(o->size = tb_himeno_size_find(optarg))) {
                tb_cli_error(cmd, "--size: expected XS, S, M or L, got '%s'", optarg);
                return TB_EXIT_USAGE;
            }
            break;
        case 'n':
            if (tb_cli_long(cmd, "--iters", optarg, 1, 100000000L, &o->iters))
                return TB_EXIT_USAGE;
            break;
        case 'b':
            if (strcmp(optarg, "on") == 0)
                o->balance = TB_REDIST_PREDICT;
            else if (strcmp(optarg, "off") == 0)
                o->balance = TB_REDIST_OFF;
            else if (strcmp(optarg, "nopredict") == 0)
                o->balance = TB_REDIST_NO_PREDICT;
            else {
                tb_cli_error(cmd, "--balance: expected on, off or nopredict, got '%s'", optarg);
                return TB_EXIT_USAGE;
            }
            break;
        case 'I':
            if (tb_cli_long(cmd, "--interval", optarg, 1, 100000000L, &o->interval))
                return TB_EXIT_USAGE;
            break;
        case 'T':
            if (tb_parse_double(optarg, &o->threshold) != TB_OK || !(o->threshold >= 1)) {
                tb_cli_error(cmd, "--threshold: expected a number >= 1, got '%s'", optarg);
                return TB_EXIT_USAGE;
            }
            break;
        case 'S':
            if (o->nslow == MAX_SLOW) {
                tb_cli_error(cmd, "--slowdown: at most %d of them", MAX_SLOW);
                return TB_EXIT_USAGE;
            }
            if (parse_slowdown(optarg, &o->slow[o->nslow])) {
                tb_cli_error(cmd, "--slowdown: expected RANK:FACTOR[@FROM-TO] with FACTOR >= 1 "
                                  "and 1 <= FROM <= TO, got '%s'", optarg);
                return TB_EXIT_USAGE;
            }
            o->nslow++;
            break;
        case 'F':
            if (tb_cli_long(cmd, "--force-moves", optarg, 1, 100000000L, &o->force_moves))
                return TB_EXIT_USAGE;
            break;
        case 'r':
            if (tb_cli_long(cmd, "--seed", optarg, 0, LONG_MAX, &o->seed))
                return TB_EXIT_USAGE;
            break;
        case 'j':
            o->json = 1;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'h':
            if (tb_cli_rank() == 0)
                himeno_usage(stdout);
            return TB_EXIT_OK;
        default: /* ':' or '?' */
            return tb_cli_bad_option(cmd, "tenbin himeno --help", c, argv);
        }
    }
    if (optind < argc) {
        tb_cli_error(cmd, "unexpected argument '%s'", argv[optind]);
        return TB_EXIT_USAGE;
    }
    return -1;
}

/* The slowdown factor of this rank at sweep it. */
static double factor_at(const himeno_opts *o, int rank, long it)
{
    double f = 1;
    for (int i = 0; i < o->nslow; i++)
        if (o->slow[i].rank == rank && it >= o->slow[i].from && it <= o->slow[i].to)
            f *= o->slow[i].factor;
    return f;
}

/* Repeat (f - 1) of a sweep's work: whole sweeps, then a share of the
 * planes; copy 0 repeats the Jacobi step (wrk2 from p: the same values
 * again, the sum thrown away), copy 1 the copy back (p from wrk2 again).
 * Both are idempotent, so the results do not change. */
static volatile float slow_sink;

static void slow_down(const tb_himeno_block *h, double f, int copy)
{
    double extra = f - 1;
    int whole = (int)extra, planes = (int)lround((extra - whole) * h->n);
    for (int i = 0; i <= whole; i++) {
        int n = i < whole ? h->n : planes;
        if (n == 0)
            continue;
        if (copy)
            tb_himeno_copy(h, 0, n);
        else
            slow_sink = tb_himeno_sweep(h, 0, n);
    }
}

static void format_layout(const uint64_t *c, int n, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < n && len + 24 < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%" PRIu64, i ? "," : "", c[i]);
    if (len + 24 >= cap && cap > 4)
        snprintf(out + cap - 4, 4, "...");
}

/* A random layout, every block >= 1 plane, the same on every rank. */
static void random_layout(uint64_t seed, uint64_t units, int n, uint64_t *c)
{
    tb_rng g;
    tb_rng_seed(&g, seed);
    for (int i = 0; i < n; i++)
        c[i] = 1;
    for (uint64_t u = (uint64_t)n; u < units; u++)
        c[tb_rng_below(&g, (uint64_t)n)]++;
}

typedef struct himeno_run {
    tb_redist *r;
    float *arr[NARRAYS];
    int n, start;
    action *acts;
    size_t nacts, acts_cap;
} himeno_run;

static tb_himeno_block view(const himeno_opts *o, const himeno_run *h)
{
    return (tb_himeno_block){o->size->mi, o->size->mj, o->size->mk, h->start, h->n,
                             h->arr[0], h->arr[1], h->arr[2], h->arr[3],
                             h->arr[4], h->arr[5], h->arr[6]};
}

static int setup(const himeno_opts *o, himeno_run *h, int nranks)
{
    const tb_himeno_size *s = o->size;
    tb_redist_config cfg;
    tb_redist_config_init(&cfg);
    cfg.units = (uint64_t)s->mi - 2;
    cfg.mode = o->balance;
    cfg.interval = (uint64_t)o->interval;
    cfg.threshold = o->threshold;
    if ((uint64_t)nranks > cfg.units) {
        tb_cli_error(cmd, "size %s has %d interior planes: %d ranks cannot have one each",
                     s->name, s->mi - 2, nranks);
        return TB_EXIT_USAGE;
    }
    int rc = tb_redist_create(MPI_COMM_WORLD, &cfg, &h->r);
    static const struct {
        const char *name;
        uint64_t lead;
        int halo;
    } arrays[NARRAYS] = {{"p", 0, 1},    {"a", 4, 0},    {"b", 3, 0},   {"c", 3, 0},
                         {"bnd", 0, 0}, {"wrk1", 0, 0}, {"wrk2", 0, 0}};
    for (int i = 0; rc == TB_OK && i < NARRAYS; i++) {
        tb_redist_array_desc d = {arrays[i].name, 3, {cfg.units, (uint64_t)s->mj,
                                  (uint64_t)s->mk}, 0, 0, MPI_FLOAT, (uint64_t)arrays[i].halo,
                                  (uint64_t)arrays[i].halo, (void **)&h->arr[i]};
        if (arrays[i].lead) { /* a[4][i][j][k]: split the second dimension */
            d.ndims = 4;
            d.dims[0] = arrays[i].lead;
            d.dims[1] = cfg.units;
            d.dims[2] = (uint64_t)s->mj;
            d.dims[3] = (uint64_t)s->mk;
            d.split = 1;
        }
        rc = tb_redist_add_array(h->r, &d, NULL);
    }
    if (rc == TB_OK)
        rc = tb_redist_bind_int(h->r, TB_REDIST_VAR_COUNT, &h->n, 0);
    if (rc == TB_OK)
        rc = tb_redist_bind_int(h->r, TB_REDIST_VAR_START, &h->start, 0);
    if (rc != TB_OK) {
        tb_cli_error(cmd, "cannot distribute the %s grid: %s", s->name, tb_strerror(rc));
        return TB_EXIT_FAIL;
    }
    return -1;
}

static int record(himeno_run *h, long it, int moved, const tb_redist_decision *d,
                  const uint64_t *layout, int nranks)
{
    if (tb_grow(&h->acts, &h->acts_cap, h->nacts, sizeof *h->acts, 16) != TB_OK)
        return TB_ERR_NOMEM;
    action *a = &h->acts[h->nacts++];
    a->iteration = it;
    a->moved = moved;
    a->d = *d;
    format_layout(layout, nranks, a->layout, sizeof a->layout);
    return TB_OK;
}

/* The main loop; returns a TB_ERR_* code. */
static int iterate(const himeno_opts *o, himeno_run *h, int rank, int nranks, float *gosa)
{
    uint64_t *lay = calloc((size_t)nranks, sizeof *lay);
    if (!lay)
        return TB_ERR_NOMEM;
    int rc = TB_OK;
    for (long it = 1; rc == TB_OK && it <= o->iters; it++) {
        rc = tb_redist_halo_exchange(h->r);
        if (rc != TB_OK)
            break;
        tb_himeno_block b = view(o, h);
        *gosa = tb_himeno_sweep(&b, 0, b.n);
        double f = factor_at(o, rank, it);
        if (f > 1)
            slow_down(&b, f, 0);
        tb_himeno_copy(&b, 0, b.n);
        if (f > 1)
            slow_down(&b, f, 1);
        if (o->force_moves && it % o->force_moves == 0 && it < o->iters) {
            random_layout((uint64_t)o->seed * 1000003u + (uint64_t)it, (uint64_t)o->size->mi - 2,
                          nranks, lay);
            rc = tb_redist_apply(h->r, lay);
            tb_redist_decision d = {0};
            d.move = 1;
            d.why = "forced (--force-moves)";
            if (rc == TB_OK)
                rc = record(h, it, 1, &d, lay, nranks);
            continue;
        }
        if (o->balance == TB_REDIST_OFF)
            continue;
        tb_redist_plan plan;
        rc = tb_redist_balance(h->r, (uint64_t)it, (uint64_t)o->iters, &plan);
        if (rc == TB_OK && plan.valid && plan.decision.units_moved > 0 &&
            plan.decision.imbalance > o->threshold && plan.decision.remaining > 0)
            rc = record(h, it, plan.decision.move, &plan.decision, plan.next, nranks);
    }
    free(lay);
    return rc;
}

static void print_results(const himeno_opts *o, const himeno_run *h, int nranks, float gosa,
                          uint64_t bitsum, double wall)
{
    tb_redist_stats st;
    tb_redist_get_stats(h->r, &st);
    uint64_t *c = calloc((size_t)nranks, sizeof *c);
    char layout[256] = "";
    if (c) {
        tb_redist_counts(h->r, c);
        format_layout(c, nranks, layout, sizeof layout);
    }
    free(c);
    double mflops = tb_himeno_flops(o->size) * (double)o->iters / wall / 1e6;
    static const char *const modes[] = {"on", "nopredict", "off"};
    if (o->json) {
        tb_buf j = TB_BUF_INIT;
        tb_buf_printf(&j, "{\"command\": \"himeno\", \"size\": \"%s\", \"ranks\": %d, "
                          "\"iters\": %ld, \"balance\": \"%s\", \"gosa\": %.9e, \"p_bitsum\": "
                          "%" PRIu64 ", \"wall_s\": %.6f, \"mflops\": %.3f, \"moves\": %" PRIu64
                          ", \"skipped\": %" PRIu64 ", \"bytes_moved\": %" PRIu64
                          ", \"move_s\": %.6f, \"probe_s\": %.6f, \"cost_a_s\": %.6e, "
                          "\"cost_b_s_per_byte\": %.6e, \"layout\": [%s], \"actions\": [",
                      o->size->name, nranks, o->iters, modes[o->balance], (double)gosa, bitsum,
                      wall, mflops, st.moves, st.skipped, st.bytes_moved, st.move_s, st.probe_s,
                      st.cost.a, st.cost.b, layout);
        for (size_t i = 0; i < h->nacts; i++) {
            const action *a = &h->acts[i];
            tb_buf_printf(&j, "%s{\"iteration\": %ld, \"moved\": %s, \"layout\": [%s], "
                              "\"t_now_s\": %.6e, \"t_new_s\": %.6e, \"t_move_s\": %.6e, "
                              "\"imbalance\": %.4f, \"why\": \"%s\"}",
                          i ? ", " : "", a->iteration, a->moved ? "true" : "false", a->layout,
                          a->d.t_now, a->d.t_new, a->d.t_move, a->d.imbalance, a->d.why);
        }
        tb_buf_printf(&j, "]}\n");
        fwrite(j.data, 1, j.len, stdout);
        tb_buf_free(&j);
    } else {
        printf("himeno %s (%dx%dx%d), %d ranks, %ld sweeps, balance %s\n", o->size->name,
               o->size->mi, o->size->mj, o->size->mk, nranks, o->iters, modes[o->balance]);
        if (!o->quiet)
            for (size_t i = 0; i < h->nacts; i++) {
                const action *a = &h->acts[i];
                if (a->d.t_now == 0 && a->moved) {
                    printf("  sweep %ld: moved to planes %s: %s\n", a->iteration, a->layout,
                           a->d.why);
                    continue;
                }
                printf("  sweep %ld: %s planes %s (imbalance %.3f; %.3g -> %.3g s/sweep, move "
                       "%.3g s): %s\n", a->iteration, a->moved ? "moved to" : "kept, plan was",
                       a->layout, a->d.imbalance, a->d.t_now, a->d.t_new, a->d.t_move, a->d.why);
            }
        printf("gosa:        %.6e\n", (double)gosa);
        printf("MFLOPS:      %.1f\n", mflops);
        printf("wall:        %.3f s\n", wall);
        printf("moves:       %" PRIu64 " (%" PRIu64 " bytes, %.3f s), %" PRIu64
               " skipped as not paying\n", st.moves, st.bytes_moved, st.move_s, st.skipped);
        printf("layout:      %s\n", layout);
        printf("p_bitsum:    %" PRIu64 "\n", bitsum);
    }
    fflush(stdout);
}

int tb_cmd_himeno(int argc, char **argv)
{
    himeno_opts o = {tb_himeno_size_find("S"), 100, TB_REDIST_PREDICT, {{0}}, 0, 10, 1.05, 0,
                     1, 0, 0};
    int ex = parse_opts(argc, argv, &o);
    if (ex >= 0)
        return ex;
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int i = 0; i < o.nslow; i++)
        if (o.slow[i].rank >= nranks) {
            tb_cli_error(cmd, "--slowdown %d:...: there are only %d ranks (0..%d)",
                         o.slow[i].rank, nranks, nranks - 1);
            return TB_EXIT_USAGE;
        }
    himeno_run h = {0};
    ex = setup(&o, &h, nranks);
    if (ex >= 0) {
        tb_redist_destroy(&h.r);
        return ex;
    }
    tb_himeno_block b = view(&o, &h);
    tb_himeno_init(&b);
    int rc = o.balance != TB_REDIST_OFF ? tb_redist_probe(h.r) : TB_OK;
    float gosa = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (rc == TB_OK)
        rc = iterate(&o, &h, rank, nranks, &gosa);
    MPI_Barrier(MPI_COMM_WORLD);
    double wall = MPI_Wtime() - t0;
    if (rc != TB_OK) {
        tb_cli_error(cmd, "run failed: %s", tb_strerror(rc));
        free(h.acts);
        tb_redist_destroy(&h.r);
        return TB_EXIT_FAIL;
    }
    /* gosa: per-rank float sums added in rank order; p_bitsum: exact. */
    float *all = rank == 0 ? malloc((size_t)nranks * sizeof *all) : NULL;
    MPI_Gather(&gosa, 1, MPI_FLOAT, all, 1, MPI_FLOAT, 0, MPI_COMM_WORLD);
    b = view(&o, &h);
    uint64_t bits = tb_himeno_bitsum(&b, rank == 0, rank == nranks - 1), total = 0;
    MPI_Reduce(&bits, &total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        float g = 0;
        for (int i = 0; all && i < nranks; i++)
            g += all[i];
        print_results(&o, &h, nranks, g, total, wall);
    }
    free(all);
    free(h.acts);
    tb_redist_destroy(&h.r);
    return TB_EXIT_OK;
}
