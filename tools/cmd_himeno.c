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

#include <float.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "himeno/himeno.h"
#include "tenbin/model.h"
#include "tenbin/redist.h"

enum { MAX_SLOW = 64, NARRAYS = 7, MAX_SIM_RANKS = 64 };

/* Seconds per interior grid point and sweep (Jacobi step and copy-back) at
 * speed 1: the kernel measured here, size M on one rank, 50 sweeps, median
 * of 3 (4.03 M points in 1.38 s: 6.8 ns, 5.0 GFLOPS).  --calibrate
 * measures this machine instead. */
#define SIM_POINT_COST 6.8e-9

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
    int json, quiet, progress;
    unsigned guards;
    const char *record;
    /* simulation */
    const char *sim;
    long ranks[MAX_SIM_RANKS];
    size_t nranks;
    int all_modes;            /* --balance all: off, nopredict and on */
    double point_cost;        /* < 0: the default */
    int calibrate;
    const char *replay;
    const char *svg;
    tb_himeno_size custom;    /* --size IxJxK */
    /* stopping and resuming */
    tb_cli_ckpt ck;           /* --checkpoint, --checkpoint-interval, --resume */
    int resume_done;          /* a checkpoint was read (the balancer's probe came with it) */
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
            "  --slowdown RANK:FACTOR[@FROM[-TO]]   RANK computes FACTOR times slower (it\n"
            "                         repeats FACTOR-1 of its sweep's work) during sweeps FROM\n"
            "                         to TO (to the end without -TO), or the whole run;\n"
            "                         repeatable; factors multiply\n"
            "  --force-moves N        every N sweeps move to a random layout (testing)\n"
            "  --seed N               seed of --force-moves and of the platform (default 1)\n"
            "  --guards LIST          noise,change (default), noise, change or none: the\n"
            "                         prediction's guards against moving on noise and on\n"
            "                         stale speeds (none: S4's plain rule)\n"
            "  --record FILE          write every balancing point's measures (JSON lines) for\n"
            "                         --replay\n"
            "  --checkpoint FILE      keep the grid, the layout and the balancer in FILE every\n"
            "                         --checkpoint-interval seconds (default 60) after a\n"
            "                         sweep, and when the run is stopped (SIGINT, SIGTERM,\n"
            "                         SIGUSR1); written atomically, by every rank (MPI-IO)\n"
            "  --checkpoint-interval S  seconds between checkpoints\n"
            "  --resume FILE          continue from a checkpoint of the same --size, on any\n"
            "                         number of ranks (as many: the same layout and balancer);\n"
            "                         the same FILE as --checkpoint starts afresh when it is\n"
            "                         not there yet (a job that may be requeued)\n"
            "  --json                 print the results as one JSON object\n"
            "  --progress             progress lines on stderr (the default when stderr, or\n"
            "                         mpiexec's, is a terminal)\n"
            "  -q, --quiet            no list of balancing actions, no progress lines\n"
            "  -h, --help             this text\n\n"
            "Simulated (one process, no mpiexec; no grid is allocated):\n"
            "  --sim SPEC|FILE        the platform (docs/platform.md): hosts, speeds over time\n"
            "  --ranks P[,P...]       simulated ranks (several: one run each)\n"
            "  --size IxJxK           also any grid (points along i, j, k)\n"
            "  --balance all          off, nopredict and on, one run each\n"
            "  --point-cost S         seconds per grid point and sweep at speed 1 (default\n"
            "                         6.8e-9: the kernel measured on the reference machine)\n"
            "  --calibrate            measure the kernel here for the point cost\n"
            "  --replay FILE          decide from a real run's --record and check that every\n"
            "                         decision is the recorded one\n"
            "  --svg FILE             several rank counts: makespan per mode, as a chart\n\n"
            "Prints gosa, MFLOPS (34 flops per interior point and sweep), wall time, the\n"
            "balancing actions and p_bitsum (sum of the bit patterns of p: the same for any\n"
            "number of ranks and any moves; gosa may differ from the 4th digit between\n"
            "decompositions, float sums in another order).  Exit status: 0 ok, 1 run\n"
            "failed, 2 bad usage.\n");
}

/* "none", "all", or a comma-separated list of noise and change. */
static int parse_guards(const char *s, unsigned *out)
{
    static const struct {
        const char *name;
        unsigned bit;
    } g[] = {{"noise", TB_REDIST_GUARD_NOISE}, {"change", TB_REDIST_GUARD_CHANGE},
};
    unsigned v = 0;
    if (strcmp(s, "none") == 0) {
        *out = 0;
        return 0;
    }
    if (strcmp(s, "all") == 0) {
        *out = TB_REDIST_GUARD_NOISE | TB_REDIST_GUARD_CHANGE;
        return 0;
    }
    while (*s) {
        size_t n = strcspn(s, ",");
        size_t i = 0;
        while (i < 2 && !(strlen(g[i].name) == n && strncmp(s, g[i].name, n) == 0))
            i++;
        if (i == 2)
            return -1;
        v |= g[i].bit;
        s += n;
        if (*s == ',' && *++s == '\0')
            return -1;
    }
    *out = v;
    return 0;
}

/* --size: XS, S, M, L or IxJxK; 0, or -1 after one line. */
static int parse_size(const char *arg, himeno_opts *o)
{
    if ((o->size = tb_himeno_size_find(arg)))
        return 0;
    int mi, mj, mk, len = 0;
    if (sscanf(arg, "%dx%dx%d%n", &mi, &mj, &mk, &len) != 3 || arg[len] != '\0' || mi < 3 ||
        mj < 3 || mk < 3 || mi > 1 << 24 || mj > 1 << 16 || mk > 1 << 16) {
        tb_cli_error(cmd, "--size: expected XS, S, M, L or IxJxK (each >= 3), got '%s'", arg);
        return -1;
    }
    o->custom = (tb_himeno_size){"custom", mi, mj, mk};
    o->size = &o->custom;
    return 0;
}

/* --balance on|off|nopredict|all; 0, or -1 after one line. */
static int parse_balance(const char *arg, himeno_opts *o)
{
    if (strcmp(arg, "on") == 0)
        o->balance = TB_REDIST_PREDICT;
    else if (strcmp(arg, "off") == 0)
        o->balance = TB_REDIST_OFF;
    else if (strcmp(arg, "nopredict") == 0)
        o->balance = TB_REDIST_NO_PREDICT;
    else if (strcmp(arg, "all") == 0)
        o->all_modes = 1;
    else {
        tb_cli_error(cmd, "--balance: expected on, off, nopredict or all, got '%s'", arg);
        return -1;
    }
    return 0;
}

/* One more --slowdown, in iterations; 0, or -1 after one line. */
static int add_slowdown(const char *arg, himeno_opts *o)
{
    if (o->nslow == MAX_SLOW) {
        tb_cli_error(cmd, "--slowdown: at most %d of them", MAX_SLOW);
        return -1;
    }
    tb_cli_slowdown sd;
    if (tb_cli_parse_slowdown(cmd, arg, 0, &sd))
        return -1;
    o->slow[o->nslow++] =
        (slowdown){sd.rank, sd.factor, (long)sd.from, isinf(sd.to) ? LONG_MAX : (long)sd.to};
    return 0;
}

/* What the options say together (the simulation's go with --sim, the real
 * run's without): -1 to go on, or an exit status. */
static int check_opts(const himeno_opts *o)
{
    if (!o->sim && (o->nranks || o->point_cost > 0 || o->calibrate || o->replay || o->svg ||
                    o->all_modes || o->size == &o->custom)) {
        tb_cli_error(cmd, "--ranks, --point-cost, --calibrate, --replay, --svg, --balance all "
                          "and --size IxJxK go with --sim");
        return TB_EXIT_USAGE;
    }
    if (tb_cli_ckpt_check(cmd, &o->ck, o->sim != NULL, NULL))
        return TB_EXIT_USAGE;
    if (o->sim && (o->force_moves || o->record)) {
        tb_cli_error(cmd, "--force-moves and --record are for real runs");
        return TB_EXIT_USAGE;
    }
    if (o->sim && !o->nranks && !o->replay) {
        tb_cli_error(cmd, "--sim needs --ranks P");
        return TB_EXIT_USAGE;
    }
    if (o->replay && (o->nranks > 1 || o->all_modes)) {
        tb_cli_error(cmd, "--replay takes one run: one --ranks, one --balance");
        return TB_EXIT_USAGE;
    }
    if (o->svg && o->nranks < 2) {
        tb_cli_error(cmd, "--svg charts several rank counts: give --ranks a list");
        return TB_EXIT_USAGE;
    }
    return -1;
}

/* The options: -1 to go on, or an exit status. */
static int parse_opts(int argc, char **argv, himeno_opts *o)
{
    static const struct option opts[] = {
        {"size", required_argument, NULL, 's'},     {"iters", required_argument, NULL, 'n'},
        {"balance", required_argument, NULL, 'b'},  {"interval", required_argument, NULL, 'I'},
        {"threshold", required_argument, NULL, 'T'}, {"slowdown", required_argument, NULL, 'S'},
        {"force-moves", required_argument, NULL, 'F'}, {"seed", required_argument, NULL, 'r'},
        {"json", no_argument, NULL, 'j'},           {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},           {"guards", required_argument, NULL, 'g'},
        {"record", required_argument, NULL, 'R'},   {"sim", required_argument, NULL, 'm'},
        {"ranks", required_argument, NULL, 'P'},    {"point-cost", required_argument, NULL, 'c'},
        {"calibrate", no_argument, NULL, 'C'},      {"replay", required_argument, NULL, 'y'},
        {"svg", required_argument, NULL, 'v'},      {"progress", no_argument, NULL, 'p'},
        TB_CLI_CKPT_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (parse_size(optarg, o))
                return TB_EXIT_USAGE;
            break;
        case 'n':
            if (tb_cli_long(cmd, "--iters", optarg, 1, 100000000L, &o->iters))
                return TB_EXIT_USAGE;
            break;
        case 'b':
            if (parse_balance(optarg, o))
                return TB_EXIT_USAGE;
            break;
        case 'I':
            if (tb_cli_long(cmd, "--interval", optarg, 1, 100000000L, &o->interval))
                return TB_EXIT_USAGE;
            break;
        case 'T':
            if (tb_cli_double(cmd, "--threshold", optarg, 1, DBL_MAX, 0, "a number >= 1",
                              &o->threshold))
                return TB_EXIT_USAGE;
            break;
        case 'S':
            if (add_slowdown(optarg, o))
                return TB_EXIT_USAGE;
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
        case 'g':
            if (parse_guards(optarg, &o->guards) != 0) {
                tb_cli_error(cmd, "--guards: expected none, all, or a list of noise and change, "
                                  "got '%s'", optarg);
                return TB_EXIT_USAGE;
            }
            break;
        case 'R':
            if (tb_cli_writable(cmd, "--record", optarg))
                return TB_EXIT_USAGE;
            o->record = optarg;
            break;
        case 'm':
            o->sim = optarg;
            break;
        TB_CLI_CKPT_CASES:
            if (tb_cli_ckpt_option(cmd, c, optarg, &o->ck))
                return TB_EXIT_USAGE;
            break;
        case 'P':
            if (tb_cli_long_list(cmd, "--ranks", optarg, 1, 1 << 24, o->ranks, MAX_SIM_RANKS,
                                 &o->nranks))
                return TB_EXIT_USAGE;
            break;
        case 'c':
            if (tb_cli_double(cmd, "--point-cost", optarg, 0, DBL_MAX, TB_CLI_ABOVE, "seconds > 0",
                              &o->point_cost))
                return TB_EXIT_USAGE;
            break;
        case 'C':
            o->calibrate = 1;
            break;
        case 'y':
            o->replay = optarg;
            break;
        case 'v':
            if (tb_cli_writable(cmd, "--svg", optarg))
                return TB_EXIT_USAGE;
            o->svg = optarg;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'p':
            o->progress = 1;
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
    o->progress = tb_cli_rank() == 0 && tb_progress_wanted(o->progress, o->quiet);
    return check_opts(o);
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
    long from;         /* sweeps done before this run (--resume) */
    double last_ckpt;  /* rank 0: when the last checkpoint was written */
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
    tb_redist_opts cfg;
    tb_redist_opts_init(&cfg);
    cfg.units = (uint64_t)s->mi - 2;
    cfg.mode = o->balance;
    cfg.interval = (uint64_t)o->interval;
    cfg.threshold = o->threshold;
    cfg.guards = o->guards;
    cfg.record = o->record;
    if ((uint64_t)nranks > cfg.units) {
        tb_cli_error(cmd, "size %s has %d interior planes: %d ranks cannot have one each",
                     s->name, s->mi - 2, nranks);
        return TB_EXIT_USAGE;
    }
    int rc = tb_redist_create(&h->r, MPI_COMM_WORLD, &cfg);
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
        if (rc == TB_OK && i > 0) /* only p changes: the rest is set again on resume */
            rc = tb_redist_set_kept(h->r, i, 0);
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

/* --resume (after the grid is initialised: the checkpoint replaces it):
 * -1 to go on, or an exit status. */
static int resume(himeno_opts *o, himeno_run *h)
{
    char what[96];
    snprintf(what, sizeof what, "himeno %dx%dx%d", o->size->mi, o->size->mj, o->size->mk);
    int rc = tb_redist_set_identity(h->r, what);
    const char *from = tb_checkpoint_resume_from(o->ck.resume, o->ck.path);
    uint64_t it = 0;
    if (rc == TB_OK && from)
        rc = tb_redist_restore(h->r, from, &it);
    if (rc != TB_OK) {
        if (!tb_redist_error(h->r)[0]) /* else the library has said what and where */
            tb_cli_error(cmd, "--resume %s: %s", from, tb_strerror(rc));
        return TB_EXIT_FAIL;
    }
    o->resume_done = from != NULL;
    if (from && it >= (uint64_t)o->iters) {
        tb_cli_error(cmd, "--resume %s: it holds %" PRIu64 " sweeps, as many as --iters %ld "
                          "asks or more; ask for more",
                     from, it, o->iters);
        return TB_EXIT_USAGE;
    }
    if (from) { /* the arrays checkpoints leave out, on the restored layout */
        tb_himeno_block b = view(o, h);
        tb_himeno_init_coefficients(&b);
    }
    h->from = (long)it;
    h->last_ckpt = MPI_Wtime();
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

/* Before sweep `it`, the ranks agree on a stop from outside
 * (tb_signals_catch) on any rank, and on whether a checkpoint is due after
 * the sweep (rank 0's clock).  Kept out of the arrays' speed measure. */
static int before_sweep(const himeno_opts *o, himeno_run *h, int *ckpt_due)
{
    int v[2] = {tb_signals_pending(), 0};
    if (o->ck.path && tb_cli_rank() == 0)
        v[1] = MPI_Wtime() - h->last_ckpt >= o->ck.interval;
    tb_redist_pause(h->r);
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    tb_redist_resume(h->r);
    *ckpt_due = v[1];
    return v[0];
}

/* The grid after sweep `it` to --checkpoint (collective). */
static int keep(const himeno_opts *o, himeno_run *h, long it)
{
    int rc = tb_redist_checkpoint(h->r, o->ck.path, (uint64_t)it);
    h->last_ckpt = MPI_Wtime();
    return rc;
}

/* A stop agreed before sweep `it`: the last checkpoint, and one line. */
static int stopped(const himeno_opts *o, himeno_run *h, long it, int sig)
{
    int rc = o->ck.path ? keep(o, h, it - 1) : TB_OK;
    if (rc != TB_OK)
        return rc;
    if (o->ck.path)
        tb_cli_error(cmd, "interrupted by %s before sweep %ld of %ld; the checkpoint %s holds "
                          "sweeps 1-%ld (--resume %s continues)",
                     tb_signal_name(sig), it, o->iters, o->ck.path, it - 1, o->ck.path);
    else
        tb_cli_error(cmd, "interrupted by %s before sweep %ld of %ld; nothing is written",
                     tb_signal_name(sig), it, o->iters);
    return TB_ERR_INTERRUPTED;
}

/* The main loop; returns a TB_ERR_* code. */
static int iterate(const himeno_opts *o, himeno_run *h, int rank, int nranks, float *gosa)
{
    uint64_t *lay = calloc((size_t)nranks, sizeof *lay);
    if (!lay)
        return TB_ERR_NOMEM;
    int rc = TB_OK;
    tb_progress *prog = NULL;
    if (o->progress && !o->sim) {
        if (tb_progress_create(&prog, stderr, "sweeps", (uint64_t)o->iters,
                               TB_PROGRESS_INTERVAL_ENV) != TB_OK)
            prog = NULL;
    }
    for (long it = h->from + 1; rc == TB_OK && it <= o->iters; it++) {
        if (prog)
            tb_progress_update(prog, (uint64_t)it - 1);
        int due = 0, sig = before_sweep(o, h, &due);
        if (sig) {
            rc = stopped(o, h, it, sig);
            break;
        }
        if (it == o->iters)
            due = o->ck.path != NULL; /* the end is kept too: --iters may grow */
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
        } else if (o->balance != TB_REDIST_OFF) {
            tb_redist_plan plan;
            rc = tb_redist_balance(h->r, (uint64_t)it, (uint64_t)o->iters, &plan);
            if (rc == TB_OK && plan.valid && plan.decision.units_moved > 0 &&
                plan.decision.imbalance > o->threshold && plan.decision.remaining > 0)
                rc = record(h, it, plan.decision.move, &plan.decision, plan.next, nranks);
        }
        if (rc == TB_OK && due)
            rc = keep(o, h, it);
    }
    if (prog && rc == TB_OK) {
        tb_progress_update(prog, (uint64_t)o->iters);
        tb_progress_finish(prog);
    }
    tb_progress_destroy(&prog);
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
    double mflops = tb_himeno_flops(o->size) * (double)(o->iters - h->from) / wall / 1e6;
    static const char *const modes[] = {"on", "nopredict", "off"};
    if (o->json) {
        tb_buf j = TB_BUF_INIT;
        tb_buf_printf(&j, "{\"command\": \"himeno\", \"size\": \"%s\", \"ranks\": %d, "
                          "\"iters\": %ld, \"balance\": \"%s\", \"gosa\": %.9e, \"p_bitsum\": "
                          "%" PRIu64 ", \"wall_s\": %.6f, \"mflops\": %.3f, \"moves\": %" PRIu64
                          ", \"skipped\": %" PRIu64 ", \"bytes_moved\": %" PRIu64
                          ", \"move_s\": %.6f, \"probe_s\": %.6f, \"cost_a_s\": %.6e, "
                          "\"cost_b_s_per_byte\": %.6e, \"resumed\": %ld, \"checkpoints\": %" PRIu64
                          ", \"checkpoint_s\": %.6f, \"layout\": [%s], \"actions\": [",
                      o->size->name, nranks, o->iters, modes[o->balance], (double)gosa, bitsum,
                      wall, mflops, st.moves, st.skipped, st.bytes_moved, st.move_s, st.probe_s,
                      st.cost.a, st.cost.b, h->from, st.checkpoints, st.checkpoint_s, layout);
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
        if (st.checkpoints)
            printf("checkpoint:  %" PRIu64 " written in %.3f s (%.2f %% of the run)\n",
                   st.checkpoints, st.checkpoint_s, 100 * st.checkpoint_s / wall);
        if (h->from)
            printf("resumed:     sweeps 1-%ld came from %s (MFLOPS and wall are this run's)\n",
                   h->from, o->ck.resume);
    }
    fflush(stdout);
}

/* ---- simulated runs (--sim) ---------------------------------------------- */

static double sim_factor(void *ctx, int rank, uint64_t it)
{
    return factor_at(ctx, rank, (long)it);
}

/* Seconds per interior point and sweep of this machine's kernel: a block of
 * 8 planes of the grid's cross-section, 20 sweeps (Jacobi step and copy
 * back), the median of 5. */
static int calibrate(const tb_himeno_size *s, double *out)
{
    enum { N = 8, SWEEPS = 20, REPS = 5 };
    size_t plane = (size_t)s->mj * (size_t)s->mk;
    static const int planes[NARRAYS] = {N + 2, 4 * N, 3 * N, 3 * N, N, N, N};
    float *arr[NARRAYS] = {NULL};
    int ok = 1;
    for (int i = 0; i < NARRAYS; i++)
        ok &= (arr[i] = calloc((size_t)planes[i] * plane, sizeof(float))) != NULL;
    double t[REPS];
    if (ok) {
        tb_himeno_block b = {N + 2, s->mj, s->mk, 0, N, arr[0], arr[1], arr[2], arr[3],
                             arr[4], arr[5], arr[6]};
        tb_himeno_init(&b);
        for (int r = 0; r < REPS; r++) {
            double t0 = tb_wtime();
            for (int k = 0; k < SWEEPS; k++) {
                slow_sink = tb_himeno_sweep(&b, 0, N);
                tb_himeno_copy(&b, 0, N);
            }
            t[r] = (tb_wtime() - t0) / ((double)SWEEPS * N * (double)(s->mj - 2) *
                                        (double)(s->mk - 2));
        }
    }
    for (int i = 0; i < NARRAYS; i++)
        free(arr[i]);
    if (!ok)
        return TB_ERR_NOMEM;
    tb_stats st;
    TB_CHECK(tb_stats_compute(t, REPS, &st));
    *out = st.median;
    return TB_OK;
}

static const char *const mode_names[] = {"on", "nopredict", "off"};

static void sim_print(const himeno_opts *o, const tb_redist_sim_opts *c,
                      const tb_redist_sim_result *r, int multi)
{
    int P = c->ranks;
    double csum = 0, wsum = 0, wmax = 0;
    for (int i = 0; i < P; i++) {
        csum += r->compute_s[i];
        wsum += r->wait_s[i];
        wmax = r->wait_s[i] > wmax ? r->wait_s[i] : wmax;
    }
    const char *mode = mode_names[c->balance.mode];
    if (o->json) {
        /* the library's result, after the problem's size and its cost per
         * grid point */
        tb_buf x = TB_BUF_INIT, j = TB_BUF_INIT;
        int rc = tb_buf_printf(&x,
                               "{\"command\": \"himeno\", \"size\": [%d, %d, %d], "
                               "\"point_cost_s\": %.17g}",
                               o->size->mi, o->size->mj, o->size->mk,
                               c->unit_work / ((double)(o->size->mj - 2) * (o->size->mk - 2)));
        rc |= tb_buf_append(&x, "", 1); /* a C string */
        if (!rc)
            rc = tb_redist_sim_result_json(c, r, (const char *)x.data, &j);
        tb_cli_json_line(cmd, rc, &j);
        tb_buf_free(&x);
        tb_buf_free(&j);
        return;
    }
    if (multi) {
        printf("%7d  %-9s  %12.4f  %5" PRIu64 "  %9.4f  %12" PRIu64 "  %9.4f  %9.4f\n", P, mode,
               r->makespan_s, r->moves, r->move_s, r->bytes_moved, wsum / P, wmax);
        return;
    }
    printf("himeno %dx%dx%d simulated on %s: %d ranks, %" PRIu64 " sweeps, balance %s%s\n",
           o->size->mi, o->size->mj, o->size->mk, o->sim, P, c->iters, mode,
           c->replay ? " (replayed)" : "");
    if (!o->quiet)
        for (uint64_t k = 0; k < r->points; k++) {
            const tb_redist_sim_point *pt = &r->pts[k];
            const tb_redist_decision *d = &pt->decision;
            if (!(d->units_moved > 0 && d->imbalance > c->balance.threshold && d->remaining > 0))
                continue;
            char lay[256];
            format_layout(r->layouts + k * (uint64_t)P, P, lay, sizeof lay);
            printf("  sweep %" PRIu64 " (t=%.3f s): %s planes %s (imbalance %.3f; %.3g -> %.3g "
                   "s/sweep, move %.3g s): %s\n", pt->iteration, pt->time,
                   d->move ? "moved to" : "kept, plan was", lay, d->imbalance, d->t_now,
                   d->t_new, d->t_move, d->why);
        }
    char lay[256];
    format_layout(r->counts, P, lay, sizeof lay);
    printf("makespan:    %.4f s (simulated)\n", r->makespan_s);
    printf("moves:       %" PRIu64 " (%" PRIu64 " bytes, %.4f s), %" PRIu64
           " skipped as not paying\n", r->moves, r->bytes_moved, r->move_s, r->skipped);
    printf("per rank:    compute %.4f s, waiting %.4f s on average (at most %.4f s)\n", csum / P,
           wsum / P, wmax);
    printf("layout:      %s\n", lay);
    printf("decisions:   %" PRIu64 " points, %.3g s of CPU in all\n", r->points, r->decide_cpu_s);
    if (c->replay)
        printf("replay:      %" PRIu64 " of %" PRIu64 " decisions equal the record's\n",
               r->replay_agree, r->replay_points);
    printf("simulation:  %" PRIu64 " events in %.3f s\n", r->events, r->wall_s);
}

static int himeno_sim(himeno_opts *o)
{
    const tb_himeno_size *s = o->size;
    double pc = o->point_cost > 0 ? o->point_cost : SIM_POINT_COST;
    if (o->calibrate) {
        if (calibrate(s, &pc) != TB_OK) {
            tb_cli_error(cmd, "--calibrate: cannot allocate the test block");
            return TB_EXIT_FAIL;
        }
        fprintf(stderr, "tenbin himeno: calibrated: %.4g s per point and sweep\n", pc);
    }
    tb_platform *plat = NULL;
    if (tb_cli_platform(cmd, "--sim", o->sim, (uint64_t)o->seed, &plat) != 0)
        return TB_EXIT_USAGE;
    long one = 0;
    const long *ranks = o->nranks ? o->ranks : &one;
    size_t nr = o->nranks ? o->nranks : 1;
    for (size_t i = 0; i < nr; i++) {
        if (ranks[i] && (uint64_t)ranks[i] > tb_platform_cores(plat)) {
            tb_cli_error(cmd, "--ranks %ld: the platform has %zu cores", ranks[i],
                         tb_platform_cores(plat));
            tb_platform_destroy(&plat);
            return TB_EXIT_USAGE;
        }
        if (ranks[i] > s->mi - 2) {
            tb_cli_error(cmd, "a %dx%dx%d grid has %d interior planes: %ld ranks cannot have one "
                              "each", s->mi, s->mj, s->mk, s->mi - 2, ranks[i]);
            tb_platform_destroy(&plat);
            return TB_EXIT_USAGE;
        }
        for (int k = 0; k < o->nslow; k++)
            if (ranks[i] && o->slow[k].rank >= ranks[i]) {
                tb_cli_error(cmd, "--slowdown %d:...: there are only %ld ranks", o->slow[k].rank,
                             ranks[i]);
                tb_platform_destroy(&plat);
                return TB_EXIT_USAGE;
            }
    }
    static const int all[3] = {TB_REDIST_OFF, TB_REDIST_NO_PREDICT, TB_REDIST_PREDICT};
    int nmodes = o->all_modes ? 3 : 1;
    int multi = (nr > 1 || nmodes > 1) && !o->json;
    double plane = (double)s->mj * (double)s->mk * sizeof(float);
    double *mk = calloc(nr * 3, sizeof *mk);
    if (!mk) {
        tb_platform_destroy(&plat);
        return TB_EXIT_FAIL;
    }
    if (multi)
        printf("himeno %dx%dx%d simulated on %s, %ld sweeps\n%7s  %-9s  %12s  %5s  %9s  %12s  "
               "%9s  %9s\n", s->mi, s->mj, s->mk, o->sim, o->iters, "ranks", "balance",
               "makespan_s", "moves", "move_s", "bytes_moved", "wait_avg", "wait_max");
    int ex = TB_EXIT_OK;
    for (size_t i = 0; i < nr && ex == TB_EXIT_OK; i++)
        for (int m = 0; m < nmodes && ex == TB_EXIT_OK; m++) {
            tb_redist_sim_opts c;
            tb_redist_sim_opts_init(&c);
            c.platform = plat;
            c.ranks = (int)ranks[i];
            c.units = (uint64_t)s->mi - 2;
            c.iters = (uint64_t)o->iters;
            c.unit_work = pc * (double)(s->mj - 2) * (double)(s->mk - 2);
            c.unit_bytes = 14 * plane; /* p, bnd, wrk1, wrk2, a (4), b (3), c (3) */
            c.halo_bytes = plane;      /* p's plane each way */
            c.balance.mode = o->all_modes ? all[m] : o->balance;
            c.balance.threshold = o->threshold;
            c.balance.interval = (uint64_t)o->interval;
            c.balance.guards = o->guards;
            c.replay = o->replay;
            if (o->nslow) {
                c.work_factor = sim_factor;
                c.work_ctx = o;
            }
            tb_redist_sim_result *r = NULL;
            char err[512];
            int rc = tb_redist_sim_run(&c, &r, err, sizeof err);
            if (rc == TB_OK) {
                c.ranks = r->ranks; /* on replay, the record's */
                c.balance = r->balance;
                sim_print(o, &c, r, multi);
                mk[i * 3 + (size_t)m] = r->makespan_s;
            } else {
                tb_cli_error(cmd, "%s", err[0] ? err : tb_strerror(rc));
                ex = rc == TB_ERR_STATE ? TB_EXIT_FAIL
                     : rc == TB_ERR_INVALID || rc == TB_ERR_SIZE || rc == TB_ERR_PARSE ||
                             rc == TB_ERR_IO
                         ? TB_EXIT_USAGE
                         : TB_EXIT_FAIL;
            }
            tb_redist_sim_result_free(&r);
        }
    if (ex == TB_EXIT_OK && o->svg) {
        double *x = calloc(nr, sizeof *x);
        tb_cli_series ser[3];
        int ns = 0;
        for (size_t i = 0; x && i < nr; i++)
            x[i] = (double)ranks[i];
        for (int m = 0; m < nmodes; m++) {
            double *y = calloc(nr, sizeof *y);
            for (size_t i = 0; y && i < nr; i++)
                y[i] = mk[i * 3 + (size_t)m];
            ser[ns++] = (tb_cli_series){mode_names[o->all_modes ? all[m] : o->balance], y};
        }
        if (!x || tb_cli_line_chart(o->svg, "himeno, simulated", "ranks", "makespan (s)", x, nr,
                                    ser, (size_t)ns, 1, 1) != 0)
            ex = TB_EXIT_FAIL;
        for (int m = 0; m < ns; m++)
            free((void *)ser[m].y);
        free(x);
    }
    free(mk);
    tb_platform_destroy(&plat);
    return ex;
}

int tb_cmd_himeno(int argc, char **argv)
{
    himeno_opts o;
    memset(&o, 0, sizeof o);
    o.size = tb_himeno_size_find("S");
    o.iters = 100;
    o.balance = TB_REDIST_PREDICT;
    o.interval = 10;
    o.threshold = 1.05;
    o.seed = 1;
    o.guards = TB_REDIST_GUARD_NOISE | TB_REDIST_GUARD_CHANGE;
    o.point_cost = -1;
    o.ck.interval = 60;
    int ex = parse_opts(argc, argv, &o);
    if (ex >= 0)
        return ex;
    if (o.sim)
        return himeno_sim(&o);
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
    ex = resume(&o, &h);
    if (ex >= 0) {
        tb_redist_destroy(&h.r);
        return ex;
    }
    /* a resumed balancer comes with its probe (tb_redist_restore) */
    int rc = o.balance != TB_REDIST_OFF && !o.resume_done ? tb_redist_probe(h.r) : TB_OK;
    float gosa = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (rc == TB_OK)
        rc = iterate(&o, &h, rank, nranks, &gosa);
    MPI_Barrier(MPI_COMM_WORLD);
    double wall = MPI_Wtime() - t0;
    if (rc != TB_OK) {
        if (rc != TB_ERR_INTERRUPTED) /* it said what was kept */
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
