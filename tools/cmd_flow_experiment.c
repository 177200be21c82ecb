/*
 * cmd_flow_experiment.c - `tenbin flow experiment`: S2's evaluation (section
 * 5.3) on S2's random task networks and platform.
 *   Table 3: reschedule counts and makespans (normalised by the static
 *            schedule's) of perf-changed, task-finished and its-finished
 *            for 1/lambda = 10, 50, 100, 500, 1000 (CCR 1);
 *   Table 4: perf-changed-every:N with N set so its counts match
 *            its-finished's, against its-finished;
 *   Table 5: the three triggers for CCR 0.01, 0.1, 1, 10 (1/lambda = 100).
 * Every cell is a mean over the same instances (network i and platform i
 * are the same in every cell; only lambda or the CCR changes).  Writes
 * CSV and SVG charts into --out and prints the tables with the paper's
 * counts alongside.
 *
 * --sets chooses the independent task sets its-finished sees: the
 * data-parallel sets the generator made (default; S2's Table 1 gives
 * every set 100 tasks) or the structural ones of tb_flow_finalize, into
 * which control-parallel twins merge.
 */
#define _POSIX_C_SOURCE 200809L
#include "tenbin/core.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cmd_flow.h"
#include "tenbin/flow.h"
#include "tenbin/model.h"

static const char *const cmd = "flow experiment";

typedef struct exp_opts {
    long instances, tasks, its, hosts, seed;
    const char *algo, *out;
    int t3, t4, t5, progress, quiet;
    tb_flow_gen_sets sets;
    int dp_draw_any;
} exp_opts;

static const char *sets_name(tb_flow_gen_sets s)
{
    return s == TB_FLOW_SETS_GENERATED ? "generated" : "structural";
}

/* One cell: a trigger at one x, over the instances. */
typedef struct cell {
    double norm, norm2, mk, resched, cpu;
    long n;
} cell;

static void cell_add(cell *c, double mk, double static_mk, long resched, double cpu)
{
    double r = mk / static_mk;
    c->norm += r;
    c->norm2 += r * r;
    c->mk += mk;
    c->resched += (double)resched;
    c->cpu += cpu;
    c->n++;
}

static double mean(double sum, long n) { return n ? sum / (double)n : NAN; }

static double sd(const cell *c)
{
    if (c->n < 2)
        return 0;
    double m = c->norm / (double)c->n;
    double v = (c->norm2 - (double)c->n * m * m) / (double)(c->n - 1);
    return v > 0 ? sqrt(v) : 0;
}

/* ---- running cells --------------------------------------------------------------- */

typedef struct runner {
    const exp_opts *o;
    tb_flow **flows;  /* per instance, for the current CCR */
    double ccr;
    int said_sets;    /* the sets' summary was printed */
    tb_buf csv;
    char path[4096];
    tb_progress *prog; /* a line per cell and instance (interval 0) */
} runner;

static int make_flows(runner *r, double ccr)
{
    for (long i = 0; i < r->o->instances; i++)
        tb_flow_destroy(&r->flows[i]);
    tb_flow_gen_opts g;
    tb_flow_gen_opts_init(&g);
    g.tasks = (size_t)r->o->tasks;
    g.its_size = (size_t)r->o->its;
    g.ccr = ccr;
    g.sets = r->o->sets;
    g.dp_draw_any = r->o->dp_draw_any;
    r->ccr = ccr;
    double tasks = 0, sets = 0, in_sets = 0;
    size_t largest = 0;
    for (long i = 0; i < r->o->instances; i++) {
        int rc = tb_flow_generate(&g, (uint64_t)r->o->seed * 100003u + (uint64_t)i, &r->flows[i]);
        if (rc) {
            tb_cli_error(cmd, "generating instance %ld: %s", i, tb_strerror(rc));
            return rc;
        }
        tasks += (double)tb_flow_ntasks(r->flows[i]);
        sets += (double)tb_flow_nits(r->flows[i]);
        for (size_t s = 0; s < tb_flow_nits(r->flows[i]); s++) {
            size_t n = tb_flow_its_size(r->flows[i], s);
            in_sets += (double)n;
            largest = n > largest ? n : largest;
        }
    }
    if (!r->said_sets) {
        double n = (double)r->o->instances;
        printf("%s sets: per network %.1f tasks, %.1f sets holding %.1f %% of them (the largest "
               "set %zu)\n",
               sets_name(r->o->sets), tasks / n, sets / n, 100 * in_sets / tasks, largest);
        r->said_sets = 1;
    }
    return TB_OK;
}

/* Run triggers trig[0..nt) (trig[0] must be "static") on every instance at
 * load mean x; fill cells[0..nt). */
static int run_cells(runner *r, double x, const char *const *trig, size_t nt, cell *cells,
                     const char *what)
{
    const exp_opts *o = r->o;
    const tb_flow_sched_ops *ops = tb_flow_sched_find(o->algo);
    memset(cells, 0, nt * sizeof *cells);
    for (long i = 0; i < o->instances; i++) {
        tb_platform *p = NULL;
        int rc = tb_flow_gen_platform((size_t)o->hosts, x, (uint64_t)o->seed * 100003u + (uint64_t)i,
                                      &p);
        if (rc) {
            tb_cli_error(cmd, "platform of instance %ld: %s", i, tb_strerror(rc));
            return rc;
        }
        double static_mk = NAN;
        for (size_t k = 0; k < nt; k++) {
            tb_flow_sim_opts so;
            tb_flow_sim_opts_init(&so);
            so.sched = ops;
            so.trigger = trig[k];
            so.seed = (uint64_t)i;
            tb_flow_sim_result res;
            char err[512];
            rc = tb_flow_simulate(r->flows[i], p, &so, &res, NULL, err, sizeof err);
            if (rc) {
                tb_cli_error(cmd, "instance %ld, %s: %s", i, trig[k], err);
                tb_platform_destroy(&p);
                return rc;
            }
            if (k == 0)
                static_mk = res.makespan;
            cell_add(&cells[k], res.makespan, static_mk, res.reschedules, res.sched_cpu_s);
        }
        tb_platform_destroy(&p);
        tb_progress_note(r->prog, tb_wtime(), 0, "tenbin flow experiment: %s: instance %ld/%ld",
                         what, i + 1, o->instances);
    }
    return TB_OK;
}

static int csv_row(runner *r, int table, double x, const char *trigger, const cell *c,
                   double paper)
{
    return tb_buf_printf(&r->csv, "%d,%g,%g,%s,%ld,%.6g,%.6g,%.6g,%.6g,%.6g,%g,%s,%s\n", table,
                         x, r->ccr, trigger, c->n, mean(c->resched, c->n), mean(c->norm, c->n),
                         sd(c), mean(c->mk, c->n), mean(c->cpu, c->n), paper,
                         sets_name(r->o->sets), r->o->dp_draw_any ? "any" : "tasks");
}

static int chart_path(runner *r, const char *name, char *buf, size_t len)
{
    if ((size_t)snprintf(buf, len, "%s/%s", r->o->out, name) >= len) {
        tb_cli_error(cmd, "--out: path too long");
        return -1;
    }
    return 0;
}

static const double lambdas[] = {10, 50, 100, 500, 1000};
static const double ccrs[] = {0.01, 0.1, 1, 10};
enum { NL = 5, NC = 4 };
static const char *const trig3[] = {"static", "perf-changed", "task-finished", "its-finished"};
static const double paper3[3][NL] = {{8167, 2003, 1013, 246, 148},
                                     {823, 573, 411, 136, 72},
                                     {33, 33, 32, 32, 26}};
static const double paper4[NL] = {31, 35, 35, 37, 27};
static const double paper5[3][NC] = {{1065, 1086, 1064, 1055},
                                     {428, 421, 429, 424},
                                     {35, 32, 35, 33}};

static void print_header(const char *title)
{
    printf("\n%s\n%-22s %8s %11s %8s %18s\n", title, "trigger", "x", "reschedules", "paper",
           "makespan/static");
}

static void print_row(const char *trig, double x, const cell *c, double paper)
{
    printf("%-22s %8g %11.1f %8.0f %9.4f +- %.4f\n", trig, x, mean(c->resched, c->n), paper,
           mean(c->norm, c->n), sd(c));
}

static int table3_and_4(runner *r, int do3, int do4)
{
    cell c3[NL][4], c4[NL][2];
    char path[4200];
    if (make_flows(r, 1.0))
        return TB_ERR_NOMEM;
    for (int l = 0; l < NL; l++) {
        char what[64];
        snprintf(what, sizeof what, "table 3, 1/lambda = %g", lambdas[l]);
        if (run_cells(r, lambdas[l], trig3, 4, c3[l], what))
            return TB_ERR_INVALID;
    }
    if (do3) {
        print_header("Table 3: reschedules and makespan / static, by 1/lambda (CCR 1)");
        for (int k = 1; k < 4; k++)
            for (int l = 0; l < NL; l++) {
                print_row(trig3[k], lambdas[l], &c3[l][k], paper3[k - 1][l]);
                csv_row(r, 3, lambdas[l], trig3[k], &c3[l][k], paper3[k - 1][l]);
            }
        double y[3][NL], yr[3][NL];
        tb_cli_series s[3], sr[3];
        for (int k = 0; k < 3; k++) {
            for (int l = 0; l < NL; l++) {
                y[k][l] = mean(c3[l][k + 1].norm, c3[l][k + 1].n);
                yr[k][l] = mean(c3[l][k + 1].resched, c3[l][k + 1].n);
            }
            s[k] = (tb_cli_series){trig3[k + 1], y[k]};
            sr[k] = (tb_cli_series){trig3[k + 1], yr[k]};
        }
        if (chart_path(r, "table3-makespan.svg", path, sizeof path) ||
            tb_cli_line_chart(path, "Makespan / static schedule (S2 Fig. 12)", "1/lambda",
                       "normalised makespan", lambdas, NL, s, 3, 1, 0) ||
            chart_path(r, "table3-reschedules.svg", path, sizeof path) ||
            tb_cli_line_chart(path, "Reschedules (S2 Table 3)", "1/lambda", "reschedules", lambdas, NL,
                       sr, 3, 1, 1))
            return TB_ERR_IO;
    }
    if (!do4)
        return TB_OK;
    /* N so that perf-changed-every:N reschedules about as often as
     * its-finished: the ratio of the mean counts */
    long N[NL];
    for (int l = 0; l < NL; l++) {
        double its = mean(c3[l][3].resched, c3[l][3].n), pc = mean(c3[l][1].resched, c3[l][1].n);
        N[l] = its > 0 ? lround(pc / its) : lround(pc) + 1;
        if (N[l] < 1)
            N[l] = 1;
        char spec[64], what[64];
        snprintf(spec, sizeof spec, "perf-changed-every:%ld", N[l]);
        snprintf(what, sizeof what, "table 4, 1/lambda = %g", lambdas[l]);
        const char *trig[] = {"static", spec};
        if (run_cells(r, lambdas[l], trig, 2, c4[l], what))
            return TB_ERR_INVALID;
    }
    print_header("Table 4: perf-changed-every:N at its-finished's counts (CCR 1)");
    double y[2][NL], yr[2][NL];
    for (int l = 0; l < NL; l++) {
        char name[64];
        snprintf(name, sizeof name, "perf-changed-every:%ld", N[l]);
        print_row(name, lambdas[l], &c4[l][1], paper4[l]);
        print_row("its-finished", lambdas[l], &c3[l][3], paper3[2][l]);
        csv_row(r, 4, lambdas[l], name, &c4[l][1], paper4[l]);
        csv_row(r, 4, lambdas[l], "its-finished", &c3[l][3], paper3[2][l]);
        y[0][l] = mean(c4[l][1].norm, c4[l][1].n);
        y[1][l] = mean(c3[l][3].norm, c3[l][3].n);
        yr[0][l] = mean(c4[l][1].resched, c4[l][1].n);
        yr[1][l] = mean(c3[l][3].resched, c3[l][3].n);
    }
    tb_cli_series s[2] = {{"perf-changed-every:N", y[0]}, {"its-finished", y[1]}};
    tb_cli_series sr[2] = {{"perf-changed-every:N", yr[0]}, {"its-finished", yr[1]}};
    if (chart_path(r, "table4-makespan.svg", path, sizeof path) ||
        tb_cli_line_chart(path, "Equal counts: makespan / static (S2 Fig. 13)", "1/lambda",
                   "normalised makespan", lambdas, NL, s, 2, 1, 0) ||
        chart_path(r, "table4-reschedules.svg", path, sizeof path) ||
        tb_cli_line_chart(path, "Equal counts: reschedules (S2 Table 4)", "1/lambda", "reschedules",
                   lambdas, NL, sr, 2, 1, 0))
        return TB_ERR_IO;
    return TB_OK;
}

static int table5(runner *r)
{
    cell c5[NC][4];
    char path[4200];
    for (int c = 0; c < NC; c++) {
        if (make_flows(r, ccrs[c]))
            return TB_ERR_NOMEM;
        char what[64];
        snprintf(what, sizeof what, "table 5, CCR %g", ccrs[c]);
        if (run_cells(r, 100, trig3, 4, c5[c], what))
            return TB_ERR_INVALID;
    }
    print_header("Table 5: reschedules and makespan / static, by CCR (1/lambda = 100)");
    double y[3][NC], yr[3][NC];
    tb_cli_series s[3], sr[3];
    for (int k = 1; k < 4; k++) {
        for (int c = 0; c < NC; c++) {
            print_row(trig3[k], ccrs[c], &c5[c][k], paper5[k - 1][c]);
            r->ccr = ccrs[c];
            csv_row(r, 5, 100, trig3[k], &c5[c][k], paper5[k - 1][c]);
            y[k - 1][c] = mean(c5[c][k].norm, c5[c][k].n);
            yr[k - 1][c] = mean(c5[c][k].resched, c5[c][k].n);
        }
        s[k - 1] = (tb_cli_series){trig3[k], y[k - 1]};
        sr[k - 1] = (tb_cli_series){trig3[k], yr[k - 1]};
    }
    if (chart_path(r, "table5-makespan.svg", path, sizeof path) ||
        tb_cli_line_chart(path, "Makespan / static by CCR (S2 Fig. 14)", "CCR", "normalised makespan",
                   ccrs, NC, s, 3, 1, 0) ||
        chart_path(r, "table5-reschedules.svg", path, sizeof path) ||
        tb_cli_line_chart(path, "Reschedules by CCR (S2 Table 5)", "CCR", "reschedules", ccrs, NC, sr, 3,
                   1, 1))
        return TB_ERR_IO;
    return TB_OK;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tenbin flow experiment [options]\n\n"
            "Reproduce S2's evaluation on its random task networks: Table 3 (reschedules and\n"
            "makespan by load frequency), Table 4 (every-N baseline at equal counts) and\n"
            "Table 5 (by CCR), as means over the same instances.  Writes results.csv and\n"
            "SVG charts into --out and prints the tables with the paper's counts.\n\n"
            "  --table 3|4|5|all      which tables (default all; 4 runs 3's cells too)\n"
            "  --instances N          instances per cell (default 40, as the paper)\n"
            "  --tasks N              tasks per network (default 1000)\n"
            "  --its-size K           data-parallel set size (default 100)\n"
            "  --sets generated|structural\n"
            "                         the independent task sets its-finished sees: the\n"
            "                         data-parallel sets as generated, each of K tasks\n"
            "                         (default), or maximal groups with the same\n"
            "                         predecessors and successors, which control-parallel\n"
            "                         twins join\n"
            "  --dp-draw tasks|any    data-parallel steps draw among single tasks (default),\n"
            "                         or among all nodes as the other steps, a drawn set\n"
            "                         staying as it is\n"
            "  --hosts N              hosts (default 32)\n"
            "  --algo A               scheduler (default heft)\n"
            "  --seed S               seed of the instances (default 1)\n"
            "  --out DIR              output directory, created if missing (default\n"
            "                         flow-experiment)\n"
            "  --progress             a line on stderr per cell and instance (the default\n"
            "                         when stderr is a terminal)\n"
            "  -q, --quiet            no progress lines\n"
            "  -h, --help             this text\n");
}

static int parse(int argc, char **argv, exp_opts *o)
{
    static const struct option opts[] = {
        {"table", required_argument, NULL, 'T'},    {"instances", required_argument, NULL, 'n'},
        {"tasks", required_argument, NULL, 't'},    {"its-size", required_argument, NULL, 'i'},
        {"hosts", required_argument, NULL, 'H'},    {"algo", required_argument, NULL, 'a'},
        {"seed", required_argument, NULL, 's'},     {"out", required_argument, NULL, 'o'},
        {"progress", no_argument, NULL, 'p'},       {"help", no_argument, NULL, 'h'},
        {"sets", required_argument, NULL, 'S'},     {"dp-draw", required_argument, NULL, 'D'},
        {"quiet", no_argument, NULL, 'q'},          {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":hq", opts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'T':
            if (strcmp(optarg, "all") == 0)
                o->t3 = o->t4 = o->t5 = 1;
            else if (strcmp(optarg, "3") == 0 || strcmp(optarg, "4") == 0 ||
                     strcmp(optarg, "5") == 0) {
                o->t3 = optarg[0] == '3';
                o->t4 = optarg[0] == '4';
                o->t5 = optarg[0] == '5';
            } else {
                tb_cli_error(cmd, "--table: expected 3, 4, 5 or all, got '%s'", optarg);
                bad = 1;
            }
            break;
        case 'n': bad = tb_cli_long(cmd, "--instances", optarg, 1, 100000, &o->instances); break;
        case 't': bad = tb_cli_long(cmd, "--tasks", optarg, 2, 1L << 24, &o->tasks); break;
        case 'i': bad = tb_cli_long(cmd, "--its-size", optarg, 2, 1L << 20, &o->its); break;
        case 'H': bad = tb_cli_long(cmd, "--hosts", optarg, 1, 1L << 16, &o->hosts); break;
        case 'S':
            if (strcmp(optarg, "generated") == 0)
                o->sets = TB_FLOW_SETS_GENERATED;
            else if (strcmp(optarg, "structural") == 0)
                o->sets = TB_FLOW_SETS_STRUCTURAL;
            else {
                tb_cli_error(cmd, "--sets: expected generated or structural, got '%s'", optarg);
                bad = 1;
            }
            break;
        case 'D':
            if (strcmp(optarg, "tasks") == 0 || strcmp(optarg, "any") == 0)
                o->dp_draw_any = optarg[0] == 'a';
            else {
                tb_cli_error(cmd, "--dp-draw: expected tasks or any, got '%s'", optarg);
                bad = 1;
            }
            break;
        case 'a': o->algo = optarg; break;
        case 's': bad = tb_cli_long(cmd, "--seed", optarg, 0, 1L << 40, &o->seed); break;
        case 'o': o->out = optarg; break;
        case 'p': o->progress = 1; break;
        case 'q': o->quiet = 1; break;
        case 'h': usage(stdout); return TB_EXIT_OK;
        default: return tb_cli_bad_option(cmd, "tenbin flow experiment --help", c, argv);
        }
        if (bad)
            return TB_EXIT_USAGE;
    }
    if (optind < argc) {
        tb_cli_error(cmd, "unexpected argument '%s'", argv[optind]);
        return TB_EXIT_USAGE;
    }
    o->progress = tb_progress_wanted(o->progress, o->quiet);
    if (!tb_flow_sched_find(o->algo)) {
        tb_cli_error(cmd, "--algo: expected heft, cpop, peft, minmin, maxmin, olb or random, "
                          "got '%s'",
                     o->algo);
        return TB_EXIT_USAGE;
    }
    if (mkdir(o->out, 0777) != 0 && errno != EEXIST) {
        tb_cli_error(cmd, "--out: cannot create '%s': %s", o->out, strerror(errno));
        return TB_EXIT_USAGE;
    }
    struct stat sb;
    if (stat(o->out, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        tb_cli_error(cmd, "--out: '%s' is not a directory", o->out);
        return TB_EXIT_USAGE;
    }
    return -1;
}

int tb_cmd_flow_experiment(int argc, char **argv)
{
    exp_opts o = {40, 1000, 100, 32, 1, "heft", "flow-experiment", 1, 1, 1, 0, 0,
                  TB_FLOW_SETS_GENERATED, 0};
    int st = parse(argc, argv, &o);
    if (st >= 0)
        return st;
    runner r = {.o = &o};
    r.flows = calloc((size_t)o.instances, sizeof *r.flows);
    if (!r.flows || tb_progress_create(&r.prog, o.progress ? stderr : NULL, "instances", 0, 0)) {
        free(r.flows);
        return TB_EXIT_FAIL;
    }
    printf("S2 experiment: %ld instances of > %ld tasks (data-parallel sets of %ld, drawn among "
           "%s), %ld hosts of speed 1-5, link speed 100, load on half of the hosts; scheduler %s; "
           "%s sets\n",
           o.instances, o.tasks, o.its, o.dp_draw_any ? "all nodes" : "single tasks", o.hosts,
           o.algo, sets_name(o.sets));
    tb_buf_printf(&r.csv, "table,inv_lambda,ccr,trigger,instances,reschedules,norm_makespan,"
                          "norm_makespan_sd,makespan,sched_cpu_s,paper_reschedules,sets,dp_draw\n");
    int rc = TB_OK;
    if (o.t3 || o.t4)
        rc = table3_and_4(&r, o.t3, o.t4);
    if (!rc && o.t5)
        rc = table5(&r);
    char path[4200];
    if (!rc && !chart_path(&r, "results.csv", path, sizeof path))
        rc = tb_write_file_atomic(path, r.csv.data, r.csv.len);
    else if (!rc)
        rc = TB_ERR_IO;
    if (!rc)
        printf("\nwrote %s/results.csv and the charts (*.svg)\n", o.out);
    else if (rc == TB_ERR_IO)
        tb_cli_error(cmd, "cannot write into '%s'", o.out);
    for (long i = 0; i < o.instances; i++)
        tb_flow_destroy(&r.flows[i]);
    free(r.flows);
    tb_buf_free(&r.csv);
    tb_progress_destroy(&r.prog);
    fflush(stdout);
    return rc ? TB_EXIT_FAIL : TB_EXIT_OK;
}
