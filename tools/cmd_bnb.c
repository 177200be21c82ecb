#define _POSIX_C_SOURCE 200809L
/*
 * cmd_bnb.c - `tenbin bnb PROBLEM FILE`: branch-and-bound with the
 * hierarchical master-worker runtime (S5), under mpiexec or simulated.
 */
#include "tenbin/bnb.h"
#include "tenbin/experiment.h"

#include <float.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../apps/bnb/problems.h"
#include "bnb_history.h"
#include "cli.h"
#include "web.h"

static const char *const cmd = "bnb";

static const tb_bnb_problem *const problems[] = {&tb_bnb_knapsack, &tb_bnb_tsp, &tb_bnb_bmi};

typedef struct bnb_opts {
    const tb_bnb_problem *prob;
    const char *file;
    double gap, task_time, node_cost, status_interval, wan_delay_ms;
    long depth, groups, sites, startup, task_pad, sub_pad;
    int balance_seed, json, quiet, force_moves, progress, no_split;
    const char *sim;
    const char *trace;
    long sim_ranks;
    const char *web;  /* --web [HOST:]PORT, or NULL */
    int web_public;
    const char *history; /* --history FILE, or NULL */
    tb_cli_ckpt ck;                  /* --checkpoint, --checkpoint-interval, --resume */
} bnb_opts;

static void bnb_usage(FILE *out)
{
    fprintf(out,
            "usage: mpiexec -n P tenbin bnb PROBLEM FILE [options]\n"
            "       tenbin bnb PROBLEM FILE --sim PLATFORM [--ranks P] [options]\n\n"
            "Branch-and-bound with a supervisor (rank 0) over groups of a master and its\n"
            "workers (one group per node, or per cluster when simulated).  One rank: the\n"
            "plain sequential best-first search.\n\n"
            "problems:\n"
            "  knapsack FILE          0/1 knapsack: 'n capacity', then n profits, then n weights\n"
            "  tsp FILE               symmetric TSP, a TSPLIB file (EUC_2D, CEIL_2D, ATT, GEO,\n"
            "                         EXPLICIT); the tour as 0-based cities from city 0\n"
            "  bmi FILE               S5's BMI eigenvalue problem (JSON; needs --gap > 0, default\n"
            "                         1e-3): minimise the largest eigenvalue of F(x, y) on a box\n\n"
            "  mpiexec -n P tenbin bnb serve --web [HOST:]PORT [--max-upload BYTES]\n"
            "                         a page that starts runs on these ranks from an upload\n"
            "  tenbin bnb replay FILE.json --web [HOST:]PORT\n"
            "                         serve a finished run's --history as its live view\n"
            "  tenbin bnb generate bmi [--m M] [--nx NX] [--ny NY] [--seed S]\n"
            "                         write a random BMI instance (default the seed's size:\n"
            "                         m = 24, nx = ny = 6) as JSON on stdout\n\n"
            "  --gap G                stop when (upper - lower) / |upper| <= G (default 0: prove)\n"
            "  --depth D|auto         levels a worker expands per task (default auto: adapt to\n"
            "                         --task-time)\n"
            "  --task-time S          target seconds per task (default 0.01)\n"
            "  --groups G             groups of ranks 1..P-1, in contiguous blocks (default: one\n"
            "                         per node, or per cluster when simulated)\n"
            "  --startup K            subproblems per worker the supervisor makes before the\n"
            "                         groups start (default 4; 0: the root to the first group)\n"
            "  --no-split             never cut subproblems wide with the problem's split\n"
            "                         (knapsack has one, bmi with TENBIN_BMI_BOUND=eigen): the\n"
            "                         start-up expands and idle workers wait for the tree to grow\n"
            "  --balance throughput|seed   group shares: workers / time per node (default), or\n"
            "                         workers x time per node as the seed writes it\n"
            "  --status-interval S    seconds between a master's statuses (default 0.05)\n"
            "  --task-pad BYTES       add BYTES to every task message (a program that ships its\n"
            "                         problem data with each task, as the seed's did)\n"
            "  --sub-pad BYTES        add BYTES per subproblem to every message that returns or\n"
            "                         moves subproblems (bigger subproblems on the wire)\n"
            "  --wan-delay MS         hold every message between groups (and the supervisor)\n"
            "                         MS milliseconds before sending it: a wide-area link,\n"
            "                         injected in software (real runs)\n"
            "  --sites N              with --wan-delay: N sites of contiguous ranks 1..P-1\n"
            "                         instead of the groups (a flat group across sites)\n"
            "  --json                 the result as one JSON object on the last line of stdout\n"
            "  --trace FILE.json      a Chrome trace of the run (tasks, start-up, bounds, queues)\n"
            "  --web [HOST:]PORT      serve a live view of the run (bounds, pending work, groups,\n"
            "                         the incumbent, a stop button) on HOST (default 127.0.0.1;\n"
            "                         port 0: any free one); the URL and the stop token go to\n"
            "                         stderr\n"
            "  --web-public           allow --web on an address that is not loopback\n"
            );
    fprintf(out,
            "  --checkpoint FILE      write every open subproblem and the incumbent to FILE\n"
            "                         every --checkpoint-interval seconds (default 300; 0: only\n"
            "                         at the end) and at the end of the run (done, at the gap,\n"
            "                         stopped by a signal or the web view); any number of ranks,\n"
            "                         one too (a simulated run keeps none)\n"
            "  --checkpoint-interval S  seconds between checkpoints during the run\n"
            "  --resume FILE          start from FILE's subproblems instead of the root, on any\n"
            "                         number of ranks (one rank's file on many, and back); the\n"
            "                         same FILE for both continues it\n"
            "  --history FILE.json    write the run's history (what --web shows) at the end,\n"
            "                         for tenbin bnb replay FILE.json --web [HOST:]PORT\n"
            "  --progress             progress lines on stderr (the default when stderr, or\n"
            "                         mpiexec's, is a terminal)\n"
            "  -q, --quiet            no progress lines\n"
            "  --sim SPEC|FILE        simulate on a modelled platform (one process, no mpiexec)\n"
            "  --ranks P              simulated ranks (default: the platform's cores)\n"
            "  --node-cost S          simulated seconds per expanded node at speed 1 (default:\n"
            "                         measured on this machine, and printed for reruns)\n"
            "  -h, --help             this text\n\n"
            "Exit status: 0 ok, 1 run failed, 2 bad usage or bad input.\n");
}

static int bad_value(const char *opt, const char *val, const char *want)
{
    tb_cli_error(cmd, "%s: expected %s, got '%s'", opt, want, val);
    return TB_EXIT_USAGE;
}

/* PROBLEM FILE after the options: -1 to go on, or an exit status. */
static int take_operands(int argc, char **argv, bnb_opts *o)
{
    if (optind >= argc) {
        tb_cli_error(cmd, "which problem? (knapsack, tsp or bmi FILE; tenbin bnb --help)");
        return TB_EXIT_USAGE;
    }
    const char *name = argv[optind++];
    for (size_t i = 0; i < sizeof problems / sizeof problems[0]; i++)
        if (strcmp(name, problems[i]->name) == 0)
            o->prob = problems[i];
    if (!o->prob) {
        tb_cli_error(cmd, "unknown problem '%s' (expected knapsack, tsp or bmi)", name);
        return TB_EXIT_USAGE;
    }
    if (optind >= argc) {
        tb_cli_error(cmd, "%s: which file?", name);
        return TB_EXIT_USAGE;
    }
    o->file = argv[optind++];
    if (optind < argc) {
        tb_cli_error(cmd, "unexpected argument '%s'", argv[optind]);
        return TB_EXIT_USAGE;
    }
    return -1;
}

/* What the options say together: -1 to go on, or an exit status. */
static int check_opts(bnb_opts *o)
{
    if (o->prob->default_gap > 0 && o->gap == 0) {
        tb_cli_error(cmd, "%s: --gap must be above 0 (a continuous problem is never proven "
                          "exactly)", o->prob->name);
        return TB_EXIT_USAGE;
    }
    if (o->gap < 0) /* not given */
        o->gap = o->prob->default_gap;
    if (o->sim && o->wan_delay_ms > 0) {
        tb_cli_error(cmd, "--wan-delay is for real runs; simulated, the platform's wan-L is the "
                          "delay between clusters");
        return TB_EXIT_USAGE;
    }
    if ((o->history && tb_cli_writable(cmd, "--history", o->history)) ||
        (o->trace && tb_cli_writable(cmd, "--trace", o->trace)))
        return TB_EXIT_USAGE;
    /* the library's reason (TB__BNB_SIM_NO_CKPT), with the option */
    if (tb_cli_ckpt_check(cmd, &o->ck, o->sim != NULL,
                          "a checkpoint holds the open subproblems, not the simulation's virtual "
                          "clock, platform and messages in flight, so a resumed simulation would "
                          "time neither run; rerun it (it is deterministic), or checkpoint a real "
                          "run"))
        return TB_EXIT_USAGE;
    if (o->web_public && !o->web) {
        tb_cli_error(cmd, "--web-public goes with --web");
        return TB_EXIT_USAGE;
    }
    if (!o->sim && (o->sim_ranks || o->node_cost >= 0)) {
        tb_cli_error(cmd, "--ranks and --node-cost go with --sim");
        return TB_EXIT_USAGE;
    }
    return -1;
}

/* The options, then PROBLEM FILE, then what they say together: -1 to
 * continue, or an exit status. */
static int parse_opts(int argc, char **argv, bnb_opts *o)
{
    static const struct option opts[] = {
        {"gap", required_argument, NULL, 'g'},       {"depth", required_argument, NULL, 'd'},
        {"task-time", required_argument, NULL, 'T'}, {"groups", required_argument, NULL, 'G'},
        {"startup", required_argument, NULL, 'k'},   {"balance", required_argument, NULL, 'b'},
        {"status-interval", required_argument, NULL, 'i'},
        {"json", no_argument, NULL, 'j'},            {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},            {"sim", required_argument, NULL, 'S'},
        {"ranks", required_argument, NULL, 'n'},     {"node-cost", required_argument, NULL, 'c'},
        {"force-moves", no_argument, NULL, 'F'},     {"no-split", no_argument, NULL, 'X'},     {"wan-delay", required_argument, NULL, 'w'},
        {"task-pad", required_argument, NULL, 'P'},  {"sub-pad", required_argument, NULL, 'B'},
        {"trace", required_argument, NULL, 't'},     {"sites", required_argument, NULL, 's'},
        {"web", required_argument, NULL, 'W'},       {"web-public", no_argument, NULL, 'U'},
        {"history", required_argument, NULL, 'H'},   {"progress", no_argument, NULL, 'p'},
        TB_CLI_CKPT_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
        switch (c) {
        case 'g':
            if (tb_cli_double(cmd, "--gap", optarg, 0, 1, TB_CLI_BELOW, "a number in [0, 1)",
                              &o->gap))
                return TB_EXIT_USAGE;
            break;
        case 'd':
            if (strcmp(optarg, "auto") == 0)
                o->depth = 0;
            else if (tb_cli_long(cmd, "--depth", optarg, 1, 64, &o->depth))
                return TB_EXIT_USAGE;
            break;
        case 'T':
            if (tb_cli_double(cmd, "--task-time", optarg, 0, DBL_MAX, TB_CLI_ABOVE, "seconds > 0",
                              &o->task_time))
                return TB_EXIT_USAGE;
            break;
        case 'G':
            if (tb_cli_long(cmd, "--groups", optarg, 1, 1 << 24, &o->groups))
                return TB_EXIT_USAGE;
            break;
        case 'k':
            if (tb_cli_long(cmd, "--startup", optarg, 0, 1000000, &o->startup))
                return TB_EXIT_USAGE;
            break;
        case 'b':
            if (strcmp(optarg, "throughput") == 0)
                o->balance_seed = 0;
            else if (strcmp(optarg, "seed") == 0)
                o->balance_seed = 1;
            else
                return bad_value("--balance", optarg, "throughput or seed");
            break;
        case 'i':
            if (tb_cli_double(cmd, "--status-interval", optarg, 0, DBL_MAX, TB_CLI_ABOVE,
                              "seconds > 0", &o->status_interval))
                return TB_EXIT_USAGE;
            break;
        case 'j':
            o->json = 1;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'p':
            o->progress = 1;
            break;
        case 'S':
            o->sim = optarg;
            break;
        case 'n':
            if (tb_cli_long(cmd, "--ranks", optarg, 1, 1 << 24, &o->sim_ranks))
                return TB_EXIT_USAGE;
            break;
        case 'c':
            if (tb_cli_double(cmd, "--node-cost", optarg, 0, DBL_MAX, 0, "seconds >= 0",
                              &o->node_cost))
                return TB_EXIT_USAGE;
            break;
        case 'F':
            o->force_moves = 1;
            break;
        case 'X':
            o->no_split = 1;
            break;
        case 't':
            o->trace = optarg;
            break;
        case 'W':
            o->web = optarg;
            break;
        case 'U':
            o->web_public = 1;
            break;
        case 'H':
            o->history = optarg;
            break;
        TB_CLI_CKPT_CASES:
            if (tb_cli_ckpt_option(cmd, c, optarg, &o->ck))
                return TB_EXIT_USAGE;
            break;
        case 's':
            if (tb_cli_long(cmd, "--sites", optarg, 1, 1 << 24, &o->sites))
                return TB_EXIT_USAGE;
            break;
        case 'P':
            if (tb_cli_long(cmd, "--task-pad", optarg, 0, 1L << 30, &o->task_pad))
                return TB_EXIT_USAGE;
            break;
        case 'B':
            if (tb_cli_long(cmd, "--sub-pad", optarg, 0, 1L << 20, &o->sub_pad))
                return TB_EXIT_USAGE;
            break;
        case 'w':
            if (tb_cli_double(cmd, "--wan-delay", optarg, 0, 60000, 0,
                              "milliseconds from 0 to 60000", &o->wan_delay_ms))
                return TB_EXIT_USAGE;
            break;
        case 'h':
            if (tb_cli_rank() == 0)
                bnb_usage(stdout);
            return TB_EXIT_OK;
        default: /* ':' or '?' */
            return tb_cli_bad_option(cmd, "tenbin bnb --help", c, argv);
        }
    }
    int st = take_operands(argc, argv, o);
    return st >= 0 ? st : check_opts(o);
}

/* The live view: the supervisor's state as the page's JSON. */
typedef struct web_run {
    tb_web *web;
    const bnb_opts *o;
    void *ctx;
    double *last_nodes, last_t; /* per group: for the throughput */
    double *rate;
    tb_buf state, point, sol;
    tb_buf hist;    /* every point so far, comma-separated */
    tb_buf problem; /* what does not change (GET /api/problem) */
    int serve;      /* tenbin bnb serve: the page offers to start runs */
} web_run;

static int json_num(tb_buf *b, const char *key, double v)
{
    return isfinite(v) ? tb_buf_printf(b, "\"%s\": %.17g", key, v)
                       : tb_buf_printf(b, "\"%s\": null", key);
}

static int web_watch(void *arg, const tb_bnb_state *st)
{
    web_run *w = arg;
    const bnb_opts *o = w->o;
    int max = o->prob->ops->sense == TB_BNB_MAXIMIZE;
    double upper = max ? st->bound : st->incumbent, lower = max ? st->incumbent : st->bound;
    double dt = st->elapsed_s - w->last_t;
    for (int g = 0; g < st->ngroups && dt > 0; g++) {
        double dn = (double)st->groups[g].nodes - w->last_nodes[g];
        w->rate[g] = w->last_t > 0 || st->elapsed_s > 0 ? dn / dt : 0;
        w->last_nodes[g] = (double)st->groups[g].nodes;
    }
    if (dt > 0)
        w->last_t = st->elapsed_s;
    tb_buf *b = &w->state, *p = &w->point;
    tb_buf_clear(b);
    tb_buf_clear(p);
    tb_buf_clear(&w->sol);
    int rc = tb_buf_printf(b, "{\"running\": true, \"problem\": ");
    rc |= tb_buf_json_string(b, o->prob->name);
    rc |= tb_buf_printf(b, ", \"file\": ");
    rc |= tb_buf_json_string(b, o->file);
    rc |= tb_buf_printf(b, ", \"sense\": \"%s\", \"elapsed_s\": %.6f, ",
                        max ? "max" : "min", st->elapsed_s);
    rc |= json_num(b, "upper", upper);
    rc |= tb_buf_printf(b, ", ");
    rc |= json_num(b, "lower", lower);
    rc |= tb_buf_printf(b, ", ");
    rc |= json_num(b, "gap", st->gap);
    rc |= tb_buf_printf(b, ", \"target_gap\": %.17g, \"pending\": %" PRIu64 ", \"nodes\": %" PRIu64
                           ", \"groups\": [",
                        o->gap, st->pending, st->nodes);
    rc |= tb_buf_printf(p, "{\"t\": %.6f, ", st->elapsed_s);
    rc |= json_num(p, "upper", upper);
    rc |= tb_buf_printf(p, ", ");
    rc |= json_num(p, "lower", lower);
    rc |= tb_buf_printf(p, ", \"pending\": %" PRIu64 ", \"groups\": [", st->pending);
    for (int g = 0; g < st->ngroups; g++) {
        const tb_bnb_watch_group *G = &st->groups[g];
        double idle = G->workers * st->elapsed_s - G->busy_s;
        rc |= tb_buf_printf(b,
                            "%s{\"name\": \"group %d\", \"workers\": %d, \"pending\": %" PRIu64
                            ", \"nodes\": %" PRIu64 ", \"tasks\": %" PRIu64
                            ", \"busy_s\": %.6f, \"idle_s\": %.6f, \"throughput\": %.6g}",
                            g ? ", " : "", g, G->workers, G->pending, G->nodes, G->tasks,
                            G->busy_s, idle > 0 ? idle : 0, w->rate[g]);
        rc |= tb_buf_printf(p, "%s%" PRIu64, g ? ", " : "", G->pending);
    }
    rc |= tb_buf_printf(p, "]}");
    rc |= tb_buf_printf(b, "], \"solution\": ");
    if (st->solution &&
        o->prob->solution_json(w->ctx, st->solution, st->solution_len, &w->sol) == TB_OK)
        rc |= tb_buf_append(b, w->sol.data, w->sol.len);
    else
        rc |= tb_buf_printf(b, "null");
    rc |= tb_buf_printf(b, "}");
    if (rc == TB_OK && w->o->history) {
        if (w->hist.len)
            rc = tb_buf_append(&w->hist, ",", 1);
        if (rc == TB_OK)
            rc = tb_buf_append(&w->hist, p->data, p->len);
    }
    if (rc == TB_OK && w->web)
        tb_web_publish(w->web, (const char *)b->data, b->len, (const char *)p->data, p->len, 1);
    return w->web ? tb_web_stop_asked(w->web) : 0;
}

/* What does not change, into w->problem. */
static int web_problem(web_run *w)
{
    const bnb_opts *o = w->o;
    tb_buf *pj = &w->problem;
    tb_buf_clear(pj);
    int rc = tb_buf_printf(pj, "{%s\"problem\": ", w->serve ? "\"serve\": true, " : "");
    rc |= tb_buf_json_string(pj, o->prob->name);
    rc |= tb_buf_printf(pj, ", \"file\": ");
    rc |= tb_buf_json_string(pj, o->file);
    rc |= tb_buf_printf(pj, ", \"view\": ");
    if (o->prob->view_json)
        rc |= o->prob->view_json(w->ctx, pj);
    else
        rc |= tb_buf_printf(pj, "null");
    rc |= tb_buf_printf(pj, "}");
    return rc ? TB_ERR_NOMEM : TB_OK;
}

/* The run's end, as the last state: running false, proven, the result. */
static void web_final(web_run *w, const tb_bnb_summary *s)
{
    const bnb_opts *o = w->o;
    tb_buf *b = &w->state;
    tb_buf_clear(b);
    tb_buf_clear(&w->sol);
    double lower = s->sense == TB_BNB_MINIMIZE ? s->bound : s->optimum;
    double upper = s->sense == TB_BNB_MINIMIZE ? s->optimum : s->bound;
    int rc = tb_buf_printf(b, "{\"running\": false, \"problem\": ");
    rc |= tb_buf_json_string(b, o->prob->name);
    rc |= tb_buf_printf(b, ", \"file\": ");
    rc |= tb_buf_json_string(b, o->file);
    rc |= tb_buf_printf(b, ", \"sense\": \"%s\", \"elapsed_s\": %.6f, ",
                        s->sense == TB_BNB_MAXIMIZE ? "max" : "min", s->makespan_s);
    rc |= json_num(b, "upper", s->found ? upper : NAN);
    rc |= tb_buf_printf(b, ", ");
    rc |= json_num(b, "lower", s->found ? lower : NAN);
    rc |= tb_buf_printf(b, ", ");
    rc |= json_num(b, "gap", s->gap);
    rc |= tb_buf_printf(b,
                        ", \"target_gap\": %.17g, \"proven\": %s, \"nodes\": %" PRIu64
                        ", \"groups\": [",
                        o->gap, s->proven ? "true" : "false", s->nodes);
    for (int g = 0; g < s->ngroups; g++) {
        const tb_bnb_group *G = &s->groups[g];
        rc |= tb_buf_printf(b,
                            "%s{\"name\": \"group %d\", \"workers\": %d, \"pending\": 0"
                            ", \"nodes\": %" PRIu64 ", \"tasks\": %" PRIu64
                            ", \"busy_s\": %.6f, \"idle_s\": %.6f, \"throughput\": 0}",
                            g ? ", " : "", g, G->workers, G->nodes, G->tasks, G->busy_s,
                            G->idle_s);
    }
    rc |= tb_buf_printf(b, "], \"solution\": ");
    if (s->found &&
        o->prob->solution_json(w->ctx, s->solution, s->solution_len, &w->sol) == TB_OK)
        rc |= tb_buf_append(b, w->sol.data, w->sol.len);
    else
        rc |= tb_buf_printf(b, "null");
    rc |= tb_buf_printf(b, "}");
    if (rc == TB_OK && w->web)
        tb_web_publish(w->web, (const char *)b->data, b->len, NULL, 0, 0);
}

/* --history: {"problem": ..., "final": ..., "history": [...]}, written
 * atomically after web_final. */
static int write_history(web_run *w)
{
    tb_buf f = TB_BUF_INIT;
    int rc = tb_buf_printf(&f, "{\"problem\": %.*s,\n \"final\": %.*s,\n \"history\": [%.*s]}\n",
                           (int)w->problem.len, (const char *)w->problem.data, (int)w->state.len,
                           (const char *)w->state.data, (int)w->hist.len,
                           w->hist.len ? (const char *)w->hist.data : "");
    if (rc == TB_OK)
        rc = tb_write_file_atomic(w->o->history, f.data, f.len);
    tb_buf_free(&f);
    return rc;
}

/* Where the live view is, on stderr; first a warning if it is public
 * (what: what anyone who reaches it sees). */
static void say_web(tb_web *w, int pub, const char *what)
{
    if (pub)
        fprintf(stderr, "tenbin: warning: the web view is served on %s, beyond this machine: "
                        "anyone who reaches it sees %s\n",
                tb_web_host(w), what);
    fprintf(stderr, "tenbin: web view at http://%s:%d/ (token %s)\n", tb_web_host(w),
            tb_web_port(w), tb_web_token(w));
    fflush(stderr);
}

static void web_run_free(web_run *w)
{
    tb_web_destroy(&w->web);
    free(w->last_nodes);
    free(w->rate);
    tb_buf_free(&w->state);
    tb_buf_free(&w->point);
    tb_buf_free(&w->sol);
    tb_buf_free(&w->hist);
    tb_buf_free(&w->problem);
}

/* The problem's counters (tb_bnb_problem.counts), n of them, in counts. */
static int print_counts(tb_buf *j, const bnb_opts *o, const uint64_t *counts, int json)
{
    int rc = TB_OK;
    for (int k = 0; k < o->prob->ncounts; k++)
        rc |= json ? tb_buf_printf(j, "%s\"%s\": %" PRIu64, k ? ", " : "", o->prob->count_names[k],
                                   counts[k])
                   : tb_buf_printf(j, "%s%s %" PRIu64, k ? ", " : "", o->prob->count_names[k],
                                   counts[k]);
    return rc;
}

static void print_result(const bnb_opts *o, void *ctx, const tb_bnb_summary *s,
                         const uint64_t *counts)
{
    tb_buf j = TB_BUF_INIT;
    tb_buf sol = TB_BUF_INIT;
    if (s->found)
        o->prob->solution_json(ctx, s->solution, s->solution_len, &sol);
    if (o->json) {
        /* the summary, after what only the problem knows: its name, file
         * and solution (and, for some, the solution's members at the top) */
        tb_buf x = TB_BUF_INIT;
        int rc = tb_buf_printf(&x, "{\"command\": \"bnb\", \"problem\": ");
        rc |= tb_buf_json_string(&x, o->prob->name);
        rc |= tb_buf_printf(&x, ", \"file\": ");
        rc |= tb_buf_json_string(&x, o->file);
        if (s->found && sol.len) {
            rc |= tb_buf_printf(&x, ", \"solution\": %.*s", (int)sol.len, (const char *)sol.data);
            if (o->prob->solution_at_top && sol.len > 2) /* e.g. bmi's "x" and "y" */
                rc |= tb_buf_printf(&x, ", %.*s", (int)sol.len - 2, (const char *)sol.data + 1);
        } else {
            rc |= tb_buf_printf(&x, ", \"solution\": null");
        }
        if (o->sim)
            rc |= tb_buf_printf(&x, ", \"node_cost_s\": %.17g", o->node_cost);
        if (o->prob->ncounts > 0) {
            rc |= tb_buf_printf(&x, ", \"%s\": {", o->prob->name);
            rc |= print_counts(&x, o, counts, 1);
            rc |= tb_buf_printf(&x, "}");
        }
        rc |= tb_buf_printf(&x, "}") | tb_buf_append(&x, "", 1); /* a C string */
        if (!rc)
            rc = tb_bnb_summary_json(s, (const char *)x.data, &j);
        if (!rc)
            rc = tb_buf_append(&j, "\n", 1);
        if (rc) {
            tb_cli_error(cmd, "--json: cannot write the result (%s)", tb_strerror(rc));
            tb_buf_clear(&j);
        }
        tb_buf_free(&x);
    } else {
        if (s->found && s->interrupted)
            tb_buf_printf(&j,
                          "%s %s: best found %.10g (not proven: stopped by %s), bound %.10g, "
                          "gap %.3g%%\nsolution: %.*s\n",
                          o->prob->name, o->file, s->optimum, tb_signal_name(s->interrupted),
                          s->bound, 100 * s->gap, (int)sol.len, (const char *)sol.data);
        else if (s->found)
            tb_buf_printf(&j, "%s %s: optimum %.10g (%s), bound %.10g\nsolution: %.*s\n",
                          o->prob->name, o->file, s->optimum,
                          s->proven ? "proven" : "within the gap", s->bound, (int)sol.len,
                          (const char *)sol.data);
        else if (s->interrupted)
            tb_buf_printf(&j, "%s %s: no feasible solution found before %s\n", o->prob->name,
                          o->file, tb_signal_name(s->interrupted));
        else
            tb_buf_printf(&j, "%s %s: no feasible solution (%s)\n", o->prob->name, o->file,
                          s->proven ? "proven" : "not proven");
        tb_buf_printf(&j,
                      "%" PRIu64 " nodes, %" PRIu64 " tasks, %.17g s%s, %d ranks, %d group%s, %" PRIu64
                      " messages\n",
                      s->nodes, s->tasks, s->makespan_s, s->simulated ? " of virtual time" : "",
                      s->ranks, s->ngroups, s->ngroups == 1 ? "" : "s", s->messages);
        if (o->sim)
            tb_buf_printf(&j, "node cost %.3g s at speed 1 (--node-cost)\n", o->node_cost);
        if (o->prob->ncounts > 0) {
            tb_buf_printf(&j, "%s: ", o->prob->name);
            print_counts(&j, o, counts, 0);
            tb_buf_printf(&j, "\n");
        }
        for (int g = 0; g < s->ngroups; g++) {
            const tb_bnb_group *G = &s->groups[g];
            tb_buf_printf(&j,
                          "  group %d: master %d, %d worker%s, %" PRIu64 " tasks, %" PRIu64
                          " nodes, idle %.3f worker-s summed over its workers (start-up %.3f), "
                          "moved in %" PRIu64
                          ", out %" PRIu64 "\n",
                          g, G->master, G->workers, G->workers == 1 ? "" : "s", G->tasks,
                          G->nodes, G->idle_s,
                          G->startup_idle_s, G->moved_in, G->moved_out);
        }
    }
    fwrite(j.data, 1, j.len, stdout);
    fflush(stdout);
    tb_buf_free(&j);
    tb_buf_free(&sol);
}

/* tenbin bnb replay FILE.json --web [HOST:]PORT [--web-public]: a finished
 * run's history (--history) served as the live view would show it at the
 * end, until SIGINT or SIGTERM. */
static int replay(int argc, char **argv)
{
    static const struct option opts[] = {{"web", required_argument, NULL, 'W'},
                                         {"web-public", no_argument, NULL, 'U'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *spec = NULL;
    int pub = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'W':
            spec = optarg;
            break;
        case 'U':
            pub = 1;
            break;
        case 'h':
            printf("usage: tenbin bnb replay FILE.json --web [HOST:]PORT [--web-public]\n"
                   "Serve the history a run wrote with --history as its live view, until\n"
                   "interrupted (Ctrl-C).\n");
            return TB_EXIT_OK;
        default:
            return tb_cli_bad_option(cmd, "tenbin bnb replay --help", c, argv);
        }
    }
    if (optind + 1 != argc || !spec) {
        tb_cli_error(cmd, "replay: expected 'replay FILE.json --web [HOST:]PORT'");
        return TB_EXIT_USAGE;
    }
    const char *path = argv[optind];
    char err[512];
    char *text = NULL;
    size_t len = 0;
    if (tb_read_file(path, (size_t)1 << 30, &text, &len, err, sizeof err) != TB_OK) {
        tb_cli_error(cmd, "replay: %s", err);
        return TB_EXIT_USAGE;
    }
    tb_bnb_history hist;
    int rc = tb_bnb_history_read(text, len, path, &hist, err, sizeof err);
    free(text);
    if (rc != TB_OK) {
        tb_cli_error(cmd, "replay: %s", err);
        return rc == TB_ERR_NOMEM ? TB_EXIT_FAIL : TB_EXIT_USAGE;
    }
    /* SIGINT, SIGTERM and SIGUSR1 end the replay: blocked before the server's
     * threads start (they inherit it), then waited for. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1); /* Slurm's --signal ends it too */
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    tb_web *w = NULL;
    if (tb_web_start(&w, spec, pub, err, sizeof err) != 0) {
        tb_cli_error(cmd, "%s", err);
        tb_bnb_history_free(&hist);
        return TB_EXIT_USAGE;
    }
    tb_web_set_problem(w, hist.problem, strlen(hist.problem));
    tb_web_set_history(w, hist.points, strlen(hist.points));
    tb_web_publish(w, hist.final, strlen(hist.final), NULL, 0, 0);
    tb_bnb_history_free(&hist);
    if (pub)
        fprintf(stderr, "tenbin: warning: the replay is served on %s, beyond this machine\n",
                tb_web_host(w));
    fprintf(stderr, "tenbin: replay of %s at http://%s:%d/ (Ctrl-C ends it)\n", path,
            tb_web_host(w), tb_web_port(w));
    fflush(stderr);
    int sig = 0;
    sigwait(&set, &sig);
    tb_web_destroy(&w);
    return TB_EXIT_OK;
}

/* ---- tenbin bnb serve ------------------------------------------------------ */

/* The next run, handed from the server's thread to rank 0's loop. */
typedef struct serve_job {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int have, busy, quit;
    int prob;
    double gap;
    long groups;
    char name[128];
    tb_buf bytes;
    char dir[160]; /* rank 0's scratch directory for checking uploads */
} serve_job;

/* Is the upload an instance the problem reads?  On error, its message with
 * the scratch directory taken out ("name:3: ..."). */
static int serve_check(serve_job *j, int pi, const char *name, const void *body, size_t len,
                       char *msg, size_t msglen)
{
    char path[320];
    snprintf(path, sizeof path, "%s/%s", j->dir, name);
    if (tb_write_file_atomic(path, body, len) != TB_OK) {
        snprintf(msg, msglen, "cannot keep the upload: %s", strerror(errno));
        return 0;
    }
    void *ctx = NULL;
    char err[512] = "";
    int rc = problems[pi]->load(path, &ctx, err, sizeof err);
    problems[pi]->destroy(ctx);
    unlink(path);
    if (rc == TB_OK)
        return 1;
    size_t dl = strlen(j->dir) + 1;
    const char *e = strncmp(err, j->dir, dl - 1) == 0 && err[dl - 1] == '/' ? err + dl : err;
    snprintf(msg, msglen, "%s", e);
    return 0;
}

static int serve_start(void *arg, const char *problem, const char *gap, const char *groups,
                       const char *name, const void *body, size_t len, char *msg, size_t msglen)
{
    serve_job *j = arg;
    int pi = -1;
    for (size_t i = 0; problem && i < sizeof problems / sizeof problems[0]; i++)
        if (strcmp(problem, problems[i]->name) == 0)
            pi = (int)i;
    if (pi < 0) {
        snprintf(msg, msglen, "problem: expected knapsack, tsp or bmi, got '%s'",
                 problem ? problem : "");
        return 400;
    }
    double g = problems[pi]->default_gap;
    if (gap && *gap && (tb_parse_double(gap, &g) != TB_OK || !(g >= 0 && g < 1))) {
        snprintf(msg, msglen, "gap: expected a number in [0, 1), got '%s'", gap);
        return 400;
    }
    if (problems[pi]->default_gap > 0 && g == 0) {
        snprintf(msg, msglen, "gap: must be above 0 for %s", problems[pi]->name);
        return 400;
    }
    long G = 0;
    if (groups && *groups && tb_parse_long(groups, 0, 1 << 20, &G) != TB_OK) {
        snprintf(msg, msglen, "groups: expected an integer >= 0, got '%s'", groups);
        return 400;
    }
    char nm[128] = "upload";
    if (name && *name) { /* a file name, not a path */
        const char *b = strrchr(name, '/');
        b = b ? b + 1 : name;
        size_t k = 0;
        for (; *b && k + 1 < sizeof nm; b++)
            nm[k++] = isalnum((unsigned char)*b) || strchr("._-", *b) ? *b : '_';
        nm[k] = 0;
        if (!k || nm[0] == '.')
            snprintf(nm, sizeof nm, "upload");
    }
    if (len == 0) {
        snprintf(msg, msglen, "the upload is empty (send the instance as the request's body)");
        return 400;
    }
    pthread_mutex_lock(&j->mu);
    int busy = j->busy || j->have;
    pthread_mutex_unlock(&j->mu);
    if (busy) {
        snprintf(msg, msglen, "a run is going on: stop it first");
        return 409;
    }
    if (!serve_check(j, pi, nm, body, len, msg, msglen))
        return 400;
    pthread_mutex_lock(&j->mu);
    int code = 202;
    if (j->busy || j->have) {
        snprintf(msg, msglen, "a run is going on: stop it first");
        code = 409;
    } else {
        tb_buf_clear(&j->bytes);
        if (tb_buf_append(&j->bytes, body, len) != TB_OK) {
            snprintf(msg, msglen, "out of memory");
            code = 500;
        } else {
            j->prob = pi;
            j->gap = g;
            j->groups = G;
            snprintf(j->name, sizeof j->name, "%s", nm);
            j->have = 1;
            pthread_cond_broadcast(&j->cv);
        }
    }
    pthread_mutex_unlock(&j->mu);
    return code;
}

static void serve_quit(void *arg)
{
    serve_job *j = arg;
    pthread_mutex_lock(&j->mu);
    j->quit = 1;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

/* A broadcast from rank 0 that waits without spinning (ranks wait here
 * between runs for as long as nobody starts one). */
static void bcast_wait(void *buf, int count, MPI_Datatype t)
{
    MPI_Request r;
    MPI_Ibcast(buf, count, t, 0, MPI_COMM_WORLD, &r);
    for (;;) {
        int done = 0;
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
}

/* tenbin bnb serve: the job the web server's thread hands over (rank 0),
 * the live view, and this rank's scratch directory. */
typedef struct server {
    serve_job job;
    web_run web;
    const char *spec; /* --web [HOST:]PORT */
    int pub;          /* --web-public */
    long max_upload;
    int rank, size;
    const char *tmp;  /* uploads are kept there while they run */
    char mydir[160];  /* the scratch directory of a rank other than 0 */
    char err[512];
    int sig;          /* the signal that ended the serve (tb_signals_catch), or 0 */
    char stopped[512]; /* rank 0: the run that signal stopped, or "" */
} server;

/* The next run, as rank 0 broadcasts it. */
typedef struct serve_run {
    long hdr[4]; /* quit, problem, groups, bytes */
    double gap;
    char name[128];
    char path[320]; /* the upload, in this rank's scratch directory */
} serve_run;

/* serve's options: -1 to go on, or an exit status. */
static int serve_opts(int argc, char **argv, server *sv)
{
    static const struct option opts[] = {{"web", required_argument, NULL, 'W'},
                                         {"web-public", no_argument, NULL, 'U'},
                                         {"max-upload", required_argument, NULL, 'M'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'W':
            sv->spec = optarg;
            break;
        case 'U':
            sv->pub = 1;
            break;
        case 'M':
            if (tb_cli_long(cmd, "--max-upload", optarg, 1, 1L << 30, &sv->max_upload))
                return TB_EXIT_USAGE;
            break;
        case 'h':
            if (sv->rank == 0)
                printf("usage: mpiexec -n P tenbin bnb serve --web [HOST:]PORT [--web-public]\n"
                       "                                 [--max-upload BYTES]\n"
                       "Serve a page that starts branch-and-bound runs on these ranks from an\n"
                       "uploaded instance (at most BYTES, default 16 MiB), one at a time, and\n"
                       "watches them, until POST /api/quit, or SIGINT, SIGTERM or SIGUSR1 (a run\n"
                       "going on stops as the page's stop stops it; exit 128 + the signal).\n");
            return TB_EXIT_OK;
        default:
            return tb_cli_bad_option(cmd, "tenbin bnb serve --help", c, argv);
        }
    }
    MPI_Comm_size(MPI_COMM_WORLD, &sv->size);
    if (optind != argc || !sv->spec) {
        tb_cli_error(cmd, "serve: expected 'serve --web [HOST:]PORT'");
        return TB_EXIT_USAGE;
    }
    if (sv->size < 2) {
        tb_cli_error(cmd, "serve needs 2 ranks or more (mpiexec -n P tenbin bnb serve ...)");
        return TB_EXIT_USAGE;
    }
    return -1;
}

/* Rank 0's scratch directory and web server, agreed on by every rank: 0,
 * or -1 after one line. */
static int serve_listen(server *sv)
{
    int ok = 1;
    if (sv->rank == 0) {
        snprintf(sv->job.dir, sizeof sv->job.dir, "%s/tenbin-serve-XXXXXX", sv->tmp);
        if (!mkdtemp(sv->job.dir)) {
            tb_cli_error(cmd, "serve: no scratch directory: %s", strerror(errno));
            ok = 0;
        } else if (tb_web_start(&sv->web.web, sv->spec, sv->pub, sv->err, sizeof sv->err) != 0) {
            tb_cli_error(cmd, "%s", sv->err);
            rmdir(sv->job.dir);
            ok = 0;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok)
        tb_web_destroy(&sv->web.web);
    return ok ? 0 : -1;
}

/* Rank 0: the idle page, which offers to start runs, and its address. */
static void serve_announce(server *sv)
{
    static const char idle[] = "{\"running\": false, \"serve\": true, \"idle\": true}";
    tb_web *w = sv->web.web;
    tb_web_set_problem(w, "{\"serve\": true, \"problem\": null}", 32);
    tb_web_publish(w, idle, sizeof idle - 1, NULL, 0, 0);
    tb_web_set_serve(w, serve_start, serve_quit, &sv->job, (size_t)sv->max_upload);
    say_web(w, sv->pub, "the runs");
}

/* Rank 0 waits for the next run, the quit or a signal (tb_signals_catch:
 * looked at every 0.1 s), and every rank learns which: 1 to run, 0 to quit
 * (sv->sig set when a signal ends the serve). */
static int serve_next(server *sv, serve_run *r)
{
    serve_job *j = &sv->job;
    if (sv->rank == 0) {
        pthread_mutex_lock(&j->mu);
        int sig = 0;
        while (!j->have && !j->quit && !(sig = tb_signals_pending())) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 100000000;
            if (until.tv_nsec >= 1000000000) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&j->cv, &j->mu, &until);
        }
        sig = tb_signals_pending(); /* a run asked for meanwhile is not started */
        r->hdr[0] = j->quit || sig;
        r->hdr[1] = sig;
        if (!r->hdr[0]) {
            r->hdr[1] = j->prob;
            r->hdr[2] = j->groups;
            r->hdr[3] = (long)j->bytes.len;
            r->gap = j->gap;
            snprintf(r->name, sizeof r->name, "%s", j->name);
            j->busy = 1;
            j->have = 0;
        }
        pthread_mutex_unlock(&j->mu);
    }
    bcast_wait(r->hdr, 4, MPI_LONG);
    if (r->hdr[0]) {
        sv->sig = (int)r->hdr[1];
        return 0;
    }
    bcast_wait(&r->gap, 1, MPI_DOUBLE);
    bcast_wait(r->name, (int)sizeof r->name, MPI_CHAR);
    return 1;
}

/* The upload, from rank 0 to every rank, written at r->path: 1 if it was. */
static int serve_receive(server *sv, serve_run *r)
{
    char *bytes = malloc((size_t)r->hdr[3] + 1);
    if (!bytes) /* cannot take part: the others would wait for ever */
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (sv->rank == 0)
        memcpy(bytes, sv->job.bytes.data, (size_t)r->hdr[3]);
    bcast_wait(bytes, (int)r->hdr[3], MPI_BYTE);
    snprintf(r->path, sizeof r->path, "%s/%s", sv->rank == 0 ? sv->job.dir : sv->mydir, r->name);
    int wrote = tb_write_file_atomic(r->path, bytes, (size_t)r->hdr[3]) == TB_OK;
    free(bytes);
    return wrote;
}

/* Rank 0: the live view watches the run of o (its problem, a new history). */
static void serve_watch(server *sv, const bnb_opts *o, void *ctx, tb_bnb *b)
{
    web_run *w = &sv->web;
    w->o = o;
    w->ctx = ctx;
    tb_buf_clear(&w->hist);
    free(w->last_nodes);
    free(w->rate);
    w->last_nodes = calloc((size_t)sv->size, sizeof *w->last_nodes);
    w->rate = calloc((size_t)sv->size, sizeof *w->rate);
    w->last_t = 0; /* the stop flag was cleared when the run was accepted */
    tb_web_set_history(w->web, "", 0);
    if (web_problem(w) == TB_OK)
        tb_web_set_problem(w->web, (const char *)w->problem.data, w->problem.len);
    if (w->last_nodes && w->rate)
        tb_bnb_set_watch(b, web_watch, w, 0.5);
}

/* Rank 0: the run's end, on the page and in a line on stderr; a run a
 * signal stopped is said in the serve's last line (sv->stopped). */
static void serve_report(server *sv, const bnb_opts *o, tb_bnb *b, int rc)
{
    tb_bnb_summary s;
    if (rc == TB_OK && tb_bnb_get_summary(b, &s) == TB_OK) {
        web_final(&sv->web, &s);
        if (s.interrupted && s.found)
            snprintf(sv->stopped, sizeof sv->stopped,
                     "the run of %s %s stopped at %.10g (not proven)", o->prob->name, o->file,
                     s.optimum);
        else if (s.interrupted)
            snprintf(sv->stopped, sizeof sv->stopped,
                     "the run of %s %s stopped before any solution was found", o->prob->name,
                     o->file);
        else
            fprintf(stderr, "tenbin: %s %s: %s %.10g\n", o->prob->name, o->file,
                    s.proven ? "proven" : "stopped at", s.optimum);
    } else {
        tb_cli_error(cmd, "serve: the run of %s failed: %s", o->file, tb_strerror(rc));
    }
}

/* The run of the upload written at r->path (wrote: on this rank), on every
 * rank; its scratch file removed. */
static void serve_one(server *sv, const serve_run *r, int wrote)
{
    bnb_opts o = {.prob = problems[r->hdr[1]], .file = r->name, .gap = r->gap,
                  .task_time = 0.01, .node_cost = -1, .status_interval = 0.05, .startup = 4,
                  .groups = r->hdr[2]};
    void *ctx = NULL;
    int rc = wrote ? o.prob->load(r->path, &ctx, sv->err, sizeof sv->err) : TB_ERR_IO;
    int all = rc == TB_OK;
    MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    tb_bnb *b = NULL;
    if (all && tb_bnb_create(&b, MPI_COMM_WORLD, o.prob->ops, ctx) == TB_OK) {
        tb_bnb_set_gap(b, o.gap);
        tb_bnb_set_groups(b, (int)o.groups <= sv->size - 1 ? (int)o.groups : 0);
        tb_bnb_set_task_time(b, o.task_time);
        tb_bnb_set_split(b, !o.prob->splits || o.prob->splits(ctx));
        if (sv->rank == 0)
            serve_watch(sv, &o, ctx, b);
        rc = tb_bnb_run(b);
        if (sv->rank == 0)
            serve_report(sv, &o, b, rc);
        sv->web.o = NULL; /* o ends here */
        tb_bnb_destroy(&b);
    } else if (sv->rank == 0) {
        tb_cli_error(cmd, "serve: %s: could not be started on every rank", r->name);
    }
    if (ctx)
        o.prob->destroy(ctx);
    unlink(r->path);
}

/* tenbin bnb serve --web [HOST:]PORT [--web-public] [--max-upload BYTES], under
 * mpiexec: the page starts runs on these ranks, one at a time, until POST
 * /api/quit or SIGINT, SIGTERM or SIGUSR1 (tb_signals_catch; a run going on
 * stops as the page's stop stops it, and the exit status is 128 + the
 * signal on every rank). */
static int serve(int argc, char **argv)
{
    server sv = {.job = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER},
                 .max_upload = 16L << 20, .rank = tb_cli_rank(), .size = 1};
    int st = serve_opts(argc, argv, &sv);
    if (st >= 0)
        return st;
    sv.tmp = getenv("TMPDIR");
    if (!sv.tmp || !*sv.tmp || strlen(sv.tmp) > 100)
        sv.tmp = "/tmp";
    sv.web.serve = 1;
    if (serve_listen(&sv) != 0)
        return TB_EXIT_USAGE;
    if (sv.rank == 0) {
        serve_announce(&sv);
    } else {
        snprintf(sv.mydir, sizeof sv.mydir, "%s/tenbin-serve-XXXXXX", sv.tmp);
        if (!mkdtemp(sv.mydir))
            sv.mydir[0] = 0;
    }
    for (;;) {
        serve_run r = {.gap = 0};
        if (!serve_next(&sv, &r))
            break;
        serve_one(&sv, &r, serve_receive(&sv, &r));
        if (sv.rank == 0) {
            pthread_mutex_lock(&sv.job.mu);
            sv.job.busy = 0;
            pthread_mutex_unlock(&sv.job.mu);
        }
    }
    /* The server first: an upload it may still be checking is in the
     * scratch directory until then. */
    web_run_free(&sv.web);
    tb_buf_free(&sv.job.bytes);
    const char *dir = sv.rank == 0 ? sv.job.dir : sv.mydir;
    int gone = !dir[0] || rmdir(dir) == 0, why = errno;
    if (!sv.sig)
        return TB_EXIT_OK;
    char left[256] = "";
    if (!gone)
        snprintf(left, sizeof left, " (but not %s: %s)", dir, strerror(why));
    tb_cli_error(cmd, "serve: interrupted by %s%s%s; the web view is closed and the scratch "
                      "directories removed%s",
                 tb_signal_name(sv.sig), sv.stopped[0] ? ": " : " between runs", sv.stopped,
                 left);
    return 128 + sv.sig;
}

/* tenbin bnb generate bmi [--m M] [--nx NX] [--ny NY] [--seed S] */
static int generate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"m", required_argument, NULL, 'm'},    {"nx", required_argument, NULL, 'x'},
        {"ny", required_argument, NULL, 'y'},   {"seed", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
    };
    long m = 24, nx = 6, ny = 6, seed = 1;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            if (tb_cli_long(cmd, "--m", optarg, 1, 1000, &m))
                return TB_EXIT_USAGE;
            break;
        case 'x':
            if (tb_cli_long(cmd, "--nx", optarg, 1, 60, &nx))
                return TB_EXIT_USAGE;
            break;
        case 'y':
            if (tb_cli_long(cmd, "--ny", optarg, 1, 60, &ny))
                return TB_EXIT_USAGE;
            break;
        case 's':
            if (tb_cli_long(cmd, "--seed", optarg, 0, 0x7fffffffL, &seed))
                return TB_EXIT_USAGE;
            break;
        case 'h':
            printf("usage: tenbin bnb generate bmi [--m M] [--nx NX] [--ny NY] [--seed S]\n\n"
                   "Write a random instance of S5's BMI eigenvalue problem as JSON on stdout\n"
                   "(for tenbin bnb bmi FILE).\n\n"
                   "  --m M      size of the matrices F(x, y) (default 24, the seed's)\n"
                   "  --nx NX    variables x (default 6)\n"
                   "  --ny NY    variables y (default 6)\n"
                   "  --seed S   seed of the random coefficients (default 1)\n"
                   "  -h, --help this text\n");
            return TB_EXIT_OK;
        default:
            return tb_cli_bad_option(cmd, "tenbin bnb generate --help", c, argv);
        }
    }
    if (optind >= argc || strcmp(argv[optind], "bmi") != 0 || optind + 1 < argc) {
        tb_cli_error(cmd, "generate: expected 'generate bmi [--m M] [--nx NX] [--ny NY] "
                          "[--seed S]'");
        return TB_EXIT_USAGE;
    }
    if (tb_cli_rank() != 0)
        return TB_EXIT_OK;
    if (tb_bnb_bmi_generate(stdout, (int)m, (int)nx, (int)ny, (uint64_t)seed) != TB_OK ||
        fflush(stdout) != 0) {
        tb_cli_error(cmd, "generate: cannot write the instance");
        return TB_EXIT_FAIL;
    }
    return TB_EXIT_OK;
}

/* tenbin bnb PROBLEM FILE: the options, the instance, the live view, the
 * platform when simulated, and the engine. */
typedef struct bnb_run {
    bnb_opts o;
    int rank, size;
    void *ctx; /* the instance */
    web_run web;
    tb_platform *plat;
    tb_bnb *b;
    char err[512];
} bnb_run;

/* Every rank reads the instance (workers expand it); all agree on the
 * outcome.  -1 to go on, or an exit status. */
static int load_instance(bnb_run *r)
{
    int rc = r->o.prob->load(r->o.file, &r->ctx, r->err, sizeof r->err);
    int ok = rc == TB_OK;
    if (!r->o.sim)
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) {
        if (rc != TB_OK)
            tb_cli_error(cmd, "%s", r->err);
        return TB_EXIT_USAGE;
    }
    return -1;
}

/* --web: rank 0 serves the live view, where the supervisor runs, and says
 * where.  -1 to go on, or an exit status. */
static int open_web(bnb_run *r)
{
    const bnb_opts *o = &r->o;
    int ok = 1;
    if (r->rank == 0 &&
        tb_web_start(&r->web.web, o->web, o->web_public, r->err, sizeof r->err) != 0) {
        tb_cli_error(cmd, "%s", r->err);
        ok = 0;
    } else if (!o->sim && r->size < 2) {
        tb_cli_error(cmd, "--web needs 2 ranks or more (one rank runs the sequential search, "
                          "which has no supervisor to watch)");
        tb_web_destroy(&r->web.web);
        ok = 0;
    }
    if (!o->sim)
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok)
        return TB_EXIT_USAGE;
    if (r->rank == 0) {
        tb_web *w = r->web.web;
        if (web_problem(&r->web) == TB_OK)
            tb_web_set_problem(w, (const char *)r->web.problem.data, r->web.problem.len);
        say_web(w, o->web_public, "the run");
    }
    return -1;
}

/* The engine, on --sim's platform or on MPI_COMM_WORLD, if the ranks hold
 * --sites and --groups.  -1 to go on, or an exit status. */
static int create_engine(bnb_run *r)
{
    const bnb_opts *o = &r->o;
    int rc;
    if (o->sim) {
        if (tb_cli_platform(cmd, "--sim", o->sim, 1, &r->plat) != 0)
            return TB_EXIT_USAGE;
        r->size = o->sim_ranks ? (int)o->sim_ranks : (int)tb_platform_cores(r->plat);
        rc = tb_bnb_create_sim(&r->b, r->plat, r->size, o->prob->ops, r->ctx);
        if (rc == TB_ERR_SIZE) {
            tb_cli_error(cmd, "--ranks %d does not fit the platform: it has %zu cores", r->size,
                         tb_platform_cores(r->plat));
            return TB_EXIT_USAGE;
        }
    } else {
        rc = tb_bnb_create(&r->b, MPI_COMM_WORLD, o->prob->ops, r->ctx);
    }
    int size = r->size;
    if (rc == TB_OK && o->sites > 0 && size > 1 && o->sites > size - 1) {
        tb_cli_error(cmd, "--sites %ld needs at least %ld ranks, but mpiexec started %d", o->sites,
                     o->sites + 1, size);
        return TB_EXIT_USAGE;
    }
    if (rc == TB_OK && o->groups > 0 && size > 1 && o->groups > size - 1) {
        tb_cli_error(cmd, "--groups %ld needs at least %ld ranks (a supervisor and a master per "
                          "group), but %s %d",
                     o->groups, o->groups + 1, o->sim ? "the simulation has" : "mpiexec started",
                     size);
        return TB_EXIT_USAGE;
    }
    if (rc != TB_OK) {
        tb_cli_error(cmd, "cannot start: %s", tb_strerror(rc));
        return TB_EXIT_FAIL;
    }
    return -1;
}

/* The options into the engine; the node cost, when simulated without one,
 * calibrated here (and printed for reruns); progress and the watch on
 * rank 0. */
static void configure(bnb_run *r)
{
    bnb_opts *o = &r->o;
    tb_bnb *b = r->b;
    tb_bnb_set_gap(b, o->gap);
    tb_bnb_set_depth(b, (int)o->depth);
    tb_bnb_set_task_time(b, o->task_time);
    tb_bnb_set_groups(b, (int)o->groups);
    tb_bnb_set_startup(b, (int)o->startup);
    tb_bnb_set_balance(b, o->balance_seed ? TB_BNB_BALANCE_SEED : TB_BNB_BALANCE_THROUGHPUT);
    tb_bnb_set_status_interval(b, o->status_interval);
    tb_bnb_set_force_moves(b, o->force_moves);
    tb_bnb_set_split(b, !o->no_split && (!o->prob->splits || o->prob->splits(r->ctx)));
    tb_bnb_set_wan_delay(b, o->wan_delay_ms / 1000);
    tb_bnb_set_task_pad(b, (size_t)o->task_pad);
    tb_bnb_set_sub_pad(b, (size_t)o->sub_pad);
    tb_bnb_set_sites(b, (int)o->sites);
    if (o->trace)
        tb_bnb_set_trace_file(b, o->trace);
    if (o->ck.path || o->ck.resume) {
        /* the instance by its bytes: a checkpoint of another file is refused */
        char *text = NULL, why[256], what[512];
        size_t len = 0;
        uint64_t h = tb_read_file(o->file, SIZE_MAX, &text, &len, why, sizeof why) == TB_OK
                         ? tb_fnv1a(TB_FNV1A_INIT, text, len)
                         : 0;
        free(text);
        const char *base = strrchr(o->file, '/');
        snprintf(what, sizeof what, "bnb %s %s (fnv1a %016" PRIx64 "), gap %.17g", o->prob->name,
                 base ? base + 1 : o->file, h, o->gap);
        tb_bnb_set_identity(b, what);
        tb_bnb_set_checkpoint(b, o->ck.path, o->ck.interval);
        tb_bnb_set_resume(b, o->ck.resume);
    }
    if (o->sim && o->node_cost < 0 &&
        tb_bnb_calibrate(o->prob->ops, r->ctx, 0.2, &o->node_cost) != TB_OK)
        o->node_cost = 1e-6;
    if (o->sim)
        tb_bnb_set_node_cost(b, o->node_cost);
    if (r->rank == 0 && tb_progress_wanted(o->progress, o->quiet))
        tb_bnb_set_progress(b, stderr);
    web_run *w = &r->web;
    if (r->rank == 0 && (w->web || o->history)) {
        w->last_nodes = calloc((size_t)r->size, sizeof *w->last_nodes);
        w->rate = calloc((size_t)r->size, sizeof *w->rate);
        /* Out of memory here: the run goes on unwatched (every rank
         * must call tb_bnb_run), and --history says so at the end. */
        if (w->last_nodes && w->rate && (w->web || web_problem(w) == TB_OK))
            tb_bnb_set_watch(b, web_watch, w, 0.5);
    }
}

/* The run, then on rank 0 the result checked and printed, the live view's
 * last state and --history.  Returns the exit status. */
static int run_and_report(bnb_run *r)
{
    const bnb_opts *o = &r->o;
    int rc = tb_bnb_run(r->b);
    if (rc != TB_OK) {
        if (!tb_bnb_error(r->b)[0]) /* else the library has said what and where */
            tb_cli_error(cmd, "run failed: %s", tb_strerror(rc));
        return TB_EXIT_FAIL;
    }
    /* the problem's counters, summed over the ranks (a simulated run's
     * ranks share this process's) */
    uint64_t counts[16] = {0}, total[16] = {0};
    int nc = o->prob->ncounts < 16 ? o->prob->ncounts : 16;
    if (nc > 0) {
        o->prob->counts(r->ctx, counts);
        if (o->sim)
            memcpy(total, counts, sizeof counts);
        else
            MPI_Reduce(counts, total, nc, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    }
    if (r->rank != 0)
        return TB_EXIT_OK;
    int exit_code = TB_EXIT_OK;
    tb_bnb_summary s;
    tb_bnb_get_summary(r->b, &s);
    if (s.found && o->prob->check(r->ctx, s.solution, s.solution_len, s.optimum) != TB_OK) {
        tb_cli_error(cmd, "internal error: the solution found is not feasible or not "
                          "worth %.17g",
                     s.optimum);
        exit_code = TB_EXIT_FAIL;
    } else {
        print_result(o, r->ctx, &s, total);
    }
    if (r->web.web || o->history)
        web_final(&r->web, &s);
    if (o->history && write_history(&r->web) != TB_OK) {
        tb_cli_error(cmd, "--history %s: cannot write it", o->history);
        exit_code = TB_EXIT_FAIL;
    }
    return exit_code;
}

int tb_cmd_bnb(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "generate") == 0)
        return generate(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "replay") == 0)
        return replay(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "serve") == 0)
        return serve(argc - 1, argv + 1);
    bnb_run run = {.o = {.gap = -1, .task_time = 0.01, .node_cost = -1, .status_interval = 0.05,
                         .startup = 4, .ck.interval = 300},
                   .size = 1};
    bnb_run *r = &run;
    int st = parse_opts(argc, argv, &r->o);
    if (st >= 0)
        return st;
    r->rank = tb_cli_rank();
    if (!r->o.sim)
        MPI_Comm_size(MPI_COMM_WORLD, &r->size);
    st = load_instance(r);
    r->web.o = &r->o;
    r->web.ctx = r->ctx;
    if (st < 0 && r->o.web)
        st = open_web(r);
    if (st < 0)
        st = create_engine(r);
    if (st < 0) {
        configure(r);
        st = run_and_report(r);
    }
    web_run_free(&r->web);
    tb_bnb_destroy(&r->b);
    tb_platform_destroy(&r->plat);
    r->o.prob->destroy(r->ctx);
    return st;
}
