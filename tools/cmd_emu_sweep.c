/*
 * cmd_emu_sweep.c - `tenbin emu sweep`: emulate one program over a range of
 * rank counts (and of master counts, for programs that take one), print the
 * table, plot it, and name the saturation point and the best master count.
 *
 * Saturation point (per variant): the smallest P whose predicted makespan
 * is within --tolerance (default 2 %) of the least makespan of the sweep:
 * adding ranks beyond it gains at most that much.  The best master count:
 * the variant with the least makespan (fewer masters on a tie).  Both are
 * the library's (tb_emu_sweep_saturation), and so is --json.
 */
#define _GNU_SOURCE
#include "tenbin/core.h"

#include <float.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tenbin/config.h"
#include "tenbin/emu.h"
#include "tenbin/model.h"

static const char *const cmd = "emu sweep";

enum { MAX_P = 256, MAX_M = 16 };

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tenbin emu sweep --platform SPEC|FILE --ranks LIST [--masters LIST]\n"
            "                        [options] -- PROGRAM [ARGS...]\n\n"
            "Emulate the program at every P of LIST (2,4,8 or FIRST:LAST:STEP) and, with\n"
            "--masters, for every master count M, replacing {m} in its arguments by M\n"
            "(e.g. -- msmandel --variant ml:{m}).  Prints the predicted makespans and the\n"
            "master's send / receive / compute shares, names each variant's saturation\n"
            "point (the smallest P within --tolerance of its least makespan) and the best\n"
            "master count.  The program's own output is discarded (tenbin emu shows it).\n\n"
            "  --platform SPEC|FILE   the target cluster (docs/platform.md)\n"
            "  --ranks LIST           rank counts P (at most %d values)\n"
            "  --masters LIST         master counts M (at most %d values; needs {m})\n"
            "  --tolerance T          saturation: within T of the least makespan (default 0.02)\n"
            "  --svg FILE             plot: makespan against P, a line per master count\n"
            "  --master R             the rank whose breakdown is the master's (default 0)\n"
            "  --json                 the table as one JSON object on the last line\n"
            "  --progress             a line on stderr per point (the default when stderr is\n"
            "                         a terminal)\n"
            "  -q, --quiet            no progress lines\n"
            "  --seed S, --timeout SECONDS, --mpiexec PATH, --listen ADDR   as tenbin emu\n\n"
            "Exit status: 0 every run predicted, 1 a run failed (the rest still run),\n"
            "2 bad usage.\n",
            MAX_P, MAX_M);
}

/* argv with {m} replaced by m (NULL-terminated; free with free_args). */
static char **with_masters(char **argv, int argc, long m)
{
    char **out = calloc((size_t)argc + 1, sizeof *out);
    char num[32];
    snprintf(num, sizeof num, "%ld", m);
    for (int i = 0; out && i < argc; i++) {
        const char *a = argv[i];
        size_t n = 0;
        for (const char *p = strstr(a, "{m}"); p; p = strstr(p + 3, "{m}"))
            n++;
        out[i] = malloc(strlen(a) + n * strlen(num) + 1);
        if (!out[i])
            break;
        char *w = out[i];
        for (const char *p = a; *p;) {
            if (!strncmp(p, "{m}", 3)) {
                w = stpcpy(w, num);
                p += 3;
            } else {
                *w++ = *p++;
            }
        }
        *w = 0;
    }
    return out;
}

static void free_args(char **a, int argc)
{
    for (int i = 0; a && i < argc; i++)
        free(a[i]);
    free(a);
}

/* One emulation with the program's stdout sent to /dev/null. */
static int run_one(tb_emu_opts *o, char **args, int master, tb_emu_sweep_point *c, char *err,
                   size_t errlen)
{
    fflush(stdout);
    int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (saved >= 0 && null >= 0)
        dup2(null, STDOUT_FILENO);
    tb_emu_result *r = NULL;
    int rc = tb_emu_run(o, args, &r, err, errlen);
    fflush(stdout);
    if (saved >= 0) {
        dup2(saved, STDOUT_FILENO);
        close(saved);
    }
    if (null >= 0)
        close(null);
    if (rc != TB_OK)
        return rc;
    const tb_emu_rank *k = &r->rank[master < r->ranks ? master : 0];
    *c = (tb_emu_sweep_point){1, r->makespan_s, k->compute_s, k->send_s, k->recv_s, k->idle_s};
    tb_emu_result_free(&r);
    return TB_OK;
}

static double pct(double x, double t)
{
    return t > 0 ? 100 * x / t : 0;
}

/* The command's options, then the sweep's points and what they make. */
typedef struct sweep {
    const char *platform, *svg, *mpiexec, *listen;
    int progress, quiet, json;
    size_t done;     /* points emulated */
    long stopped_at; /* P of the point a signal stopped, or 0 */
    long P[MAX_P], M[MAX_M], master, seed;
    size_t nP, nM;
    double tol, timeout;
    char **prog; /* the program and its arguments */
    int nargs;
    char lib[PATH_MAX + 64];
    tb_emu_opts o;
    size_t nv;                 /* variants: the master counts, or the program as given */
    tb_emu_sweep_point *cells; /* [nv * nP], variant after variant */
    double *xs, *ys;           /* the plot's: [nP], [nv * nP] */
    tb_emu_sweep_variant var[MAX_M];
    tb_emu_sweep_result res;
} sweep;

/* Returns -1 to go on, or an exit status. */
static int parse_opts(int argc, char **argv, sweep *s)
{
    static const struct option opts[] = {
        {"platform", required_argument, NULL, 'P'},
        {"ranks", required_argument, NULL, 'n'},
        {"masters", required_argument, NULL, 'M'},
        {"tolerance", required_argument, NULL, 'o'},
        {"svg", required_argument, NULL, 'g'},
        {"master", required_argument, NULL, 'm'},
        {"json", no_argument, NULL, 'j'},
        {"seed", required_argument, NULL, 's'},
        {"timeout", required_argument, NULL, 'T'},
        {"mpiexec", required_argument, NULL, 'x'},
        {"listen", required_argument, NULL, 'L'},
        {"help", no_argument, NULL, 'h'},
        {"progress", no_argument, NULL, 'p'},
        {"quiet", no_argument, NULL, 'q'},
        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+:hq", opts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'p':
            s->progress = 1;
            break;
        case 'q':
            s->quiet = 1;
            break;
        case 'P':
            s->platform = optarg;
            break;
        case 'n':
            bad = tb_cli_long_list(cmd, "--ranks", optarg, 1, 1 << 20, s->P, MAX_P, &s->nP);
            break;
        case 'M':
            bad = tb_cli_long_list(cmd, "--masters", optarg, 1, 1 << 20, s->M, MAX_M, &s->nM);
            break;
        case 'g':
            s->svg = optarg;
            break;
        case 'm':
            bad = tb_cli_long(cmd, "--master", optarg, 0, 1 << 20, &s->master);
            break;
        case 'j':
            s->json = 1;
            break;
        case 's':
            bad = tb_cli_long(cmd, "--seed", optarg, 0, 1L << 62, &s->seed);
            break;
        case 'x':
            s->mpiexec = optarg;
            break;
        case 'L':
            s->listen = optarg;
            break;
        case 'o':
            bad = tb_cli_double(cmd, "--tolerance", optarg, 0, 1, TB_CLI_BELOW,
                                "a fraction in [0, 1)", &s->tol);
            break;
        case 'T':
            bad = tb_cli_double(cmd, "--timeout", optarg, 0, DBL_MAX, TB_CLI_ABOVE, "seconds > 0",
                                &s->timeout);
            break;
        case 'h':
            usage(stdout);
            return TB_EXIT_OK;
        default:
            return tb_cli_bad_option(cmd, "tenbin emu sweep --help", c, argv);
        }
        if (bad)
            return TB_EXIT_USAGE;
    }
    s->progress = tb_progress_wanted(s->progress, s->quiet);
    s->prog = argv + optind;
    s->nargs = argc - optind;
    return -1;
}

/* What the options say together, and the program's {m}: -1 to go on, or
 * an exit status. */
static int check_opts(const sweep *s)
{
    if (!s->platform || s->nP == 0) {
        tb_cli_error(cmd, "--platform and --ranks are required (tenbin emu sweep --help)");
        return TB_EXIT_USAGE;
    }
    if (s->nargs <= 0) {
        tb_cli_error(cmd, "no program given (tenbin emu sweep ... -- PROGRAM ARGS)");
        return TB_EXIT_USAGE;
    }
    int has_m = 0;
    for (int i = 0; i < s->nargs; i++)
        has_m |= strstr(s->prog[i], "{m}") != NULL;
    if (s->nM > 0 && !has_m) {
        tb_cli_error(cmd, "--masters: no {m} in the program's arguments to put the count in");
        return TB_EXIT_USAGE;
    }
    if (s->nM == 0 && has_m) {
        tb_cli_error(cmd, "the program's arguments have {m} but no --masters LIST was given");
        return TB_EXIT_USAGE;
    }
    if (s->master >= s->P[0]) {
        tb_cli_error(cmd, "--master %ld: the smallest P has only %ld ranks", s->master, s->P[0]);
        return TB_EXIT_USAGE;
    }
    if (s->svg && tb_cli_writable(cmd, "--svg", s->svg))
        return TB_EXIT_FAIL;
    return -1;
}

/* The emulator's options, and a platform that holds the largest P (refused
 * now, not after the sweep): -1 to go on, or an exit status. */
static int open_emulator(sweep *s)
{
    if (tb_cli_emu_opts(cmd, &s->o, s->lib, sizeof s->lib, s->platform, s->seed, s->mpiexec,
                        s->timeout, s->listen))
        return TB_EXIT_FAIL;
    tb_platform *plat = NULL;
    if (tb_cli_platform(cmd, "--platform", s->platform, (uint64_t)s->seed, &plat) != 0)
        return TB_EXIT_USAGE;
    size_t cores = tb_platform_cores(plat);
    tb_platform_destroy(&plat);
    if ((size_t)s->P[s->nP - 1] > cores) {
        tb_cli_error(cmd, "--ranks: P = %ld does not fit the platform's %zu cores",
                     s->P[s->nP - 1], cores);
        return TB_EXIT_USAGE;
    }
    return -1;
}

/* The points and the plot's arrays; the result over them.  0, or -1 when
 * out of memory. */
static int alloc_points(sweep *s)
{
    s->nv = s->nM ? s->nM : 1;
    s->cells = calloc(s->nv * s->nP, sizeof *s->cells);
    s->xs = calloc(s->nP, sizeof *s->xs);
    s->ys = calloc(s->nv * s->nP, sizeof *s->ys);
    if (!s->cells || !s->xs || !s->ys)
        return -1;
    for (size_t v = 0; v < s->nv; v++)
        s->var[v] = (tb_emu_sweep_variant){.masters = s->nM ? s->M[v] : 0,
                                           .point = s->cells + v * s->nP};
    s->res = (tb_emu_sweep_result){.tolerance = s->tol, .ranks = s->P, .nranks = s->nP,
                                   .variant = s->var, .nvariants = s->nv};
    return 0;
}

static void free_points(sweep *s)
{
    free(s->cells), free(s->xs), free(s->ys);
}

/* Every P of variant v, a progress line each; a failed run: one line. */
static void run_variant(sweep *s, size_t v, tb_progress *prog)
{
    size_t nP = s->nP, n = s->nv * nP;
    char **args = with_masters(s->prog, s->nargs, s->nM ? s->M[v] : 0);
    for (size_t i = 0; args && i < nP; i++) {
        s->o.ranks = (int)s->P[i];
        char err[1024] = "";
        size_t k = v * nP + i + 1;
        if (s->nM)
            tb_progress_note(prog, tb_wtime(), 0,
                             "tenbin emu sweep: point %zu/%zu: P = %ld, %ld master(s)", k, n,
                             s->P[i], s->M[v]);
        else
            tb_progress_note(prog, tb_wtime(), 0, "tenbin emu sweep: point %zu/%zu: P = %ld", k,
                             n, s->P[i]);
        int rc = run_one(&s->o, args, (int)s->master, &s->cells[v * nP + i], err, sizeof err);
        if (rc == TB_ERR_INTERRUPTED) { /* the whole sweep stops: one line, at the end */
            s->stopped_at = s->P[i];
            break;
        }
        s->done++;
        if (rc != TB_OK) {
            s->res.failed_runs++;
            tb_cli_error(cmd, "P = %ld: %s", s->P[i], err);
        }
    }
    if (!args)
        s->res.failed_runs++;
    free_args(args, s->nargs);
}

/* Every point of every variant, then the saturation points. */
static void run_sweep(sweep *s)
{
    /* A line per point (interval 0); without the stream, none. */
    tb_progress *prog = NULL;
    if (tb_progress_create(&prog, s->progress ? stderr : NULL, "points", s->nv * s->nP, 0) !=
        TB_OK)
        prog = NULL;
    for (size_t v = 0; v < s->nv && !s->stopped_at; v++)
        run_variant(s, v, prog);
    tb_progress_destroy(&prog);
    tb_emu_sweep_saturation(&s->res);
}

/* Variant v's name: "M master(s)", or single without master counts. */
static void variant_name(const sweep *s, size_t v, const char *single, char *out, size_t n)
{
    if (s->nM)
        snprintf(out, n, "%ld master%s", s->M[v], s->M[v] == 1 ? "" : "s");
    else
        snprintf(out, n, "%s", single);
}

/* A row per P: the makespan of every variant, the best one's shares. */
static void table_rows(const sweep *s, tb_buf *b)
{
    size_t nP = s->nP;
    for (size_t i = 0; i < nP; i++) {
        tb_buf_printf(b, "%6ld", s->P[i]);
        for (size_t v = 0; v < s->nv; v++) {
            const tb_emu_sweep_point *k = &s->cells[v * nP + i];
            k->ok ? tb_buf_printf(b, " %14.6f", k->makespan_s)
                  : tb_buf_printf(b, " %14s", "failed");
        }
        const tb_emu_sweep_point *k = &s->cells[s->res.best * nP + i];
        if (k->ok)
            tb_buf_printf(b, "   %5.1f / %5.1f / %5.1f / %5.1f", pct(k->compute_s, k->makespan_s),
                          pct(k->send_s, k->makespan_s), pct(k->recv_s, k->makespan_s),
                          pct(k->idle_s, k->makespan_s));
        tb_buf_printf(b, "\n");
    }
}

/* The table, each variant's saturation point and the best master count. */
static void print_table(const sweep *s)
{
    tb_buf b = TB_BUF_INIT;
    tb_buf_printf(&b, "predicted makespan (s) on %s\n%6s", s->platform, "P");
    for (size_t v = 0; v < s->nv; v++) {
        char label[48];
        variant_name(s, v, "makespan", label, sizeof label);
        tb_buf_printf(&b, " %14s", label);
    }
    tb_buf_printf(&b, "   master (rank %ld) of %s: compute / send / receive / idle %%\n",
                  s->master, s->nM ? "the best master count" : "the run");
    table_rows(s, &b);
    for (size_t v = 0; v < s->nv; v++) {
        const tb_emu_sweep_variant *V = &s->var[v];
        if (!isfinite(V->least_s))
            continue;
        if (s->nM)
            tb_buf_printf(&b, "%ld master(s): ", s->M[v]);
        tb_buf_printf(&b,
                      "saturation point P = %ld (within %.3g %% of the least makespan, "
                      "%.6f s at P = %ld)\n",
                      V->saturation_P, 100 * s->tol, V->least_s, V->best_P);
    }
    const tb_emu_sweep_variant *best = &s->var[s->res.best];
    if (s->nM && isfinite(best->least_s))
        tb_buf_printf(&b, "best master count: %ld (%.6f s at P = %ld)\n", s->M[s->res.best],
                      best->least_s, best->best_P);
    fwrite(b.data, 1, b.len, stdout);
    fflush(stdout);
    tb_buf_free(&b);
}

/* The library's sweep, after the command and the platform; 0, or -1 after
 * one line. */
static int print_json(const sweep *s)
{
    tb_buf x = TB_BUF_INIT, j = TB_BUF_INIT;
    int rc = tb_buf_printf(&x, "{\"command\": \"emu sweep\", \"platform\": ");
    rc |= tb_buf_json_string(&x, s->platform);
    rc |= tb_buf_printf(&x, "}") | tb_buf_append(&x, "", 1); /* a C string */
    if (!rc)
        rc = tb_emu_sweep_result_json(&s->res, (const char *)x.data, &j);
    rc = tb_cli_json_line(cmd, rc, &j);
    tb_buf_free(&x);
    tb_buf_free(&j);
    return rc == TB_OK ? 0 : -1;
}

/* --svg: makespan against P, a line per variant; 0, or -1 after one line. */
static int plot(sweep *s)
{
    tb_cli_series ser[MAX_M];
    char names[MAX_M][48];
    size_t nP = s->nP;
    for (size_t i = 0; i < nP; i++)
        s->xs[i] = (double)s->P[i];
    for (size_t v = 0; v < s->nv; v++) {
        for (size_t i = 0; i < nP; i++)
            s->ys[v * nP + i] = s->cells[v * nP + i].ok ? s->cells[v * nP + i].makespan_s : NAN;
        variant_name(s, v, "predicted", names[v], sizeof names[v]);
        ser[v] = (tb_cli_series){names[v], s->ys + v * nP};
    }
    if (tb_cli_line_chart(s->svg, "tenbin emu sweep: predicted makespan", "ranks P",
                          "makespan (s)", s->xs, nP, ser, s->nv, 0, 0) != TB_OK) {
        tb_cli_error(cmd, "--svg %s: cannot write it", s->svg);
        return -1;
    }
    return 0;
}

int tb_cmd_emu_sweep(int argc, char **argv)
{
    sweep sw = {.tol = 0.02, .seed = 1}, *s = &sw;
    int st = parse_opts(argc, argv, s);
    if (st < 0)
        st = check_opts(s);
    if (st < 0)
        st = open_emulator(s);
    if (st >= 0)
        return st;
    if (alloc_points(s) != 0) {
        free_points(s);
        return TB_EXIT_FAIL;
    }
    run_sweep(s);
    if (s->stopped_at) {
        /* No table: a saturation point of the points before would mislead. */
        tb_cli_error(cmd, "interrupted by %s at P = %ld, after %zu of %zu points: the sweep "
                          "stopped, nothing is reported",
                     tb_signal_name(tb_signals_pending()), s->stopped_at, s->done, s->nv * s->nP);
        free_points(s);
        return TB_EXIT_FAIL;
    }
    int rc = s->res.failed_runs ? TB_EXIT_FAIL : TB_EXIT_OK;
    if (s->json) {
        if (print_json(s) != 0)
            rc = TB_EXIT_FAIL;
    } else {
        print_table(s);
    }
    if (s->svg && plot(s) != 0)
        rc = TB_EXIT_FAIL;
    free_points(s);
    return rc;
}
