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

int tb_cmd_emu_sweep(int argc, char **argv)
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
    const char *platform = NULL, *svg = NULL, *mpiexec = NULL, *listen = NULL;
    int progress = 0, quiet = 0;
    long P[MAX_P], M[MAX_M], master = 0, seed = 1;
    size_t nP = 0, nM = 0;
    double tol = 0.02, timeout = 0;
    int json = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+:hq", opts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'p':
            progress = 1;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'P':
            platform = optarg;
            break;
        case 'n':
            bad = tb_cli_long_list(cmd, "--ranks", optarg, 1, 1 << 20, P, MAX_P, &nP);
            break;
        case 'M':
            bad = tb_cli_long_list(cmd, "--masters", optarg, 1, 1 << 20, M, MAX_M, &nM);
            break;
        case 'g':
            svg = optarg;
            break;
        case 'm':
            bad = tb_cli_long(cmd, "--master", optarg, 0, 1 << 20, &master);
            break;
        case 'j':
            json = 1;
            break;
        case 's':
            bad = tb_cli_long(cmd, "--seed", optarg, 0, 1L << 62, &seed);
            break;
        case 'x':
            mpiexec = optarg;
            break;
        case 'L':
            listen = optarg;
            break;
        case 'o':
            bad = tb_cli_double(cmd, "--tolerance", optarg, 0, 1, TB_CLI_BELOW,
                                "a fraction in [0, 1)", &tol);
            break;
        case 'T':
            bad = tb_cli_double(cmd, "--timeout", optarg, 0, DBL_MAX, TB_CLI_ABOVE, "seconds > 0",
                                &timeout);
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
    progress = tb_progress_wanted(progress, quiet);
    if (!platform || nP == 0) {
        tb_cli_error(cmd, "--platform and --ranks are required (tenbin emu sweep --help)");
        return TB_EXIT_USAGE;
    }
    if (optind >= argc) {
        tb_cli_error(cmd, "no program given (tenbin emu sweep ... -- PROGRAM ARGS)");
        return TB_EXIT_USAGE;
    }
    int nargs = argc - optind, has_m = 0;
    for (int i = optind; i < argc; i++)
        has_m |= strstr(argv[i], "{m}") != NULL;
    if (nM > 0 && !has_m) {
        tb_cli_error(cmd, "--masters: no {m} in the program's arguments to put the count in");
        return TB_EXIT_USAGE;
    }
    if (nM == 0 && has_m) {
        tb_cli_error(cmd, "the program's arguments have {m} but no --masters LIST was given");
        return TB_EXIT_USAGE;
    }
    if (master >= P[0]) {
        tb_cli_error(cmd, "--master %ld: the smallest P has only %ld ranks", master, P[0]);
        return TB_EXIT_USAGE;
    }
    if (svg && tb_cli_writable(cmd, "--svg", svg))
        return TB_EXIT_FAIL;
    char lib[PATH_MAX + 64];
    tb_emu_opts o;
    if (tb_cli_emu_opts(cmd, &o, lib, sizeof lib, platform, seed, mpiexec, timeout, listen))
        return TB_EXIT_FAIL;
    /* The platform must hold the largest P: refuse now, not after the sweep. */
    tb_platform *plat = NULL;
    if (tb_cli_platform(cmd, platform, (uint64_t)seed, &plat) != 0)
        return TB_EXIT_USAGE;
    size_t cores = tb_platform_cores(plat);
    tb_platform_destroy(&plat);
    if ((size_t)P[nP - 1] > cores) {
        tb_cli_error(cmd, "--ranks: P = %ld does not fit the platform's %zu cores", P[nP - 1],
                     cores);
        return TB_EXIT_USAGE;
    }
    size_t nv = nM ? nM : 1;
    tb_emu_sweep_point *cells = calloc(nv * nP, sizeof *cells);
    double *xs = calloc(nP, sizeof *xs), *ys = calloc(nv * nP, sizeof *ys);
    if (!cells || !xs || !ys) {
        free(cells), free(xs), free(ys);
        return TB_EXIT_FAIL;
    }
    int failed = 0;
    /* A line per point (interval 0); without the stream, none. */
    tb_progress *prog = NULL;
    if (tb_progress_create(&prog, progress ? stderr : NULL, "points", nv * nP, 0) != TB_OK)
        prog = NULL;
    for (size_t v = 0; v < nv; v++) {
        char **args = with_masters(argv + optind, nargs, nM ? M[v] : 0);
        for (size_t i = 0; args && i < nP; i++) {
            o.ranks = (int)P[i];
            char err[1024] = "";
            size_t k = v * nP + i + 1;
            if (nM)
                tb_progress_note(prog, tb_wtime(), 0,
                                 "tenbin emu sweep: point %zu/%zu: P = %ld, %ld master(s)", k,
                                 nv * nP, P[i], M[v]);
            else
                tb_progress_note(prog, tb_wtime(), 0, "tenbin emu sweep: point %zu/%zu: P = %ld",
                                 k, nv * nP, P[i]);
            int rc = run_one(&o, args, (int)master, &cells[v * nP + i], err, sizeof err);
            if (rc != TB_OK) {
                failed++;
                tb_cli_error(cmd, "P = %ld: %s", P[i], err);
            }
        }
        if (!args)
            failed++;
        free_args(args, nargs);
    }
    tb_progress_destroy(&prog);
    /* saturation and the best variant */
    tb_emu_sweep_variant var[MAX_M];
    for (size_t v = 0; v < nv; v++)
        var[v] = (tb_emu_sweep_variant){.masters = nM ? M[v] : 0, .point = cells + v * nP};
    tb_emu_sweep_result sw = {.tolerance = tol, .ranks = P, .nranks = nP, .variant = var,
                              .nvariants = nv, .failed_runs = failed};
    tb_emu_sweep_saturation(&sw);
    size_t best_v = sw.best;
    double best = var[best_v].least_s;
    int rc = failed ? TB_EXIT_FAIL : TB_EXIT_OK;
    if (json) {
        /* the sweep, after the command and the platform */
        tb_buf x = TB_BUF_INIT, j = TB_BUF_INIT;
        int jrc = tb_buf_printf(&x, "{\"command\": \"emu sweep\", \"platform\": ");
        jrc |= tb_buf_json_string(&x, platform);
        jrc |= tb_buf_printf(&x, "}") | tb_buf_append(&x, "", 1); /* a C string */
        if (!jrc)
            jrc = tb_emu_sweep_result_json(&sw, (const char *)x.data, &j);
        if (tb_cli_json_line(cmd, jrc, &j) != TB_OK)
            rc = TB_EXIT_FAIL;
        tb_buf_free(&x);
        tb_buf_free(&j);
    } else {
        /* the table */
        tb_buf b = TB_BUF_INIT;
        tb_buf_printf(&b, "predicted makespan (s) on %s\n%6s", platform, "P");
        for (size_t v = 0; v < nv; v++) {
            char label[48] = "makespan";
            if (nM)
                snprintf(label, sizeof label, "%ld master%s", M[v], M[v] == 1 ? "" : "s");
            tb_buf_printf(&b, " %14s", label);
        }
        tb_buf_printf(&b, "   master (rank %ld) of %s: compute / send / receive / idle %%\n",
                      master, nM ? "the best master count" : "the run");
        for (size_t i = 0; i < nP; i++) {
            tb_buf_printf(&b, "%6ld", P[i]);
            for (size_t v = 0; v < nv; v++) {
                const tb_emu_sweep_point *k = &cells[v * nP + i];
                k->ok ? tb_buf_printf(&b, " %14.6f", k->makespan_s)
                      : tb_buf_printf(&b, " %14s", "failed");
            }
            const tb_emu_sweep_point *k = &cells[best_v * nP + i];
            if (k->ok)
                tb_buf_printf(&b, "   %5.1f / %5.1f / %5.1f / %5.1f", pct(k->compute_s, k->makespan_s),
                              pct(k->send_s, k->makespan_s), pct(k->recv_s, k->makespan_s),
                              pct(k->idle_s, k->makespan_s));
            tb_buf_printf(&b, "\n");
        }
        for (size_t v = 0; v < nv; v++) {
            if (!isfinite(var[v].least_s))
                continue;
            if (nM)
                tb_buf_printf(&b, "%ld master(s): ", M[v]);
            tb_buf_printf(&b,
                          "saturation point P = %ld (within %.3g %% of the least makespan, "
                          "%.6f s at P = %ld)\n",
                          var[v].saturation_P, 100 * tol, var[v].least_s, var[v].best_P);
        }
        if (nM && isfinite(best))
            tb_buf_printf(&b, "best master count: %ld (%.6f s at P = %ld)\n", M[best_v], best,
                          var[best_v].best_P);
        fwrite(b.data, 1, b.len, stdout);
        fflush(stdout);
        tb_buf_free(&b);
    }
    if (svg) {
        tb_cli_series s[MAX_M];
        char names[MAX_M][48];
        for (size_t i = 0; i < nP; i++)
            xs[i] = (double)P[i];
        for (size_t v = 0; v < nv; v++) {
            for (size_t i = 0; i < nP; i++)
                ys[v * nP + i] = cells[v * nP + i].ok ? cells[v * nP + i].makespan_s : NAN;
            if (nM)
                snprintf(names[v], sizeof names[v], "%ld master%s", M[v], M[v] == 1 ? "" : "s");
            else
                snprintf(names[v], sizeof names[v], "predicted");
            s[v] = (tb_cli_series){names[v], ys + v * nP};
        }
        if (tb_cli_line_chart(svg, "tenbin emu sweep: predicted makespan", "ranks P",
                              "makespan (s)", xs, nP, s, nv, 0, 0) != TB_OK) {
            tb_cli_error(cmd, "--svg %s: cannot write it", svg);
            rc = TB_EXIT_FAIL;
        }
    }
    free(cells), free(xs), free(ys);
    return rc;
}
