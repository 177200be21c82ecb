/*
 * cmd_flow.c - `tenbin flow`: workflows (S2).
 *   flow schedule FILE   a static schedule (HEFT, CPOP, ...), its makespan and
 *                        each task's host, start and finish; Gantt SVG, trace
 *   flow simulate FILE   run it on a platform whose speeds change, with a
 *                        rescheduling trigger
 *   flow run FILE        run it for real on MPI ranks (cmd_flow_run.c)
 *   flow experiment      S2's Tables 3, 4 and 5 (cmd_flow_experiment.c)
 *   flow convert IN OUT  from text, WfFormat JSON or DAX to text, WfFormat JSON
 *                        or Makeflow (real or synthetic commands)
 *   flow generate OUT    one of S2's random task networks
 *   flow info FILE       counts: tasks, edges, files, independent task sets
 * All but `flow run` run in one process, without mpiexec.
 */
#define _POSIX_C_SOURCE 200809L
#include "tenbin/core.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_flow.h"
#include "tenbin/flow.h"
#include "tenbin/model.h"

typedef struct flow_opts {
    const char *cmd;       /* "flow schedule" ... */
    const char *file;
    const char *algo;
    const char *platform;
    const char *trigger;
    const char *gantt;
    const char *trace;
    long seed;
    double task_overhead;
    int json, quiet, tasks;
} flow_opts;

static void schedule_usage(FILE *out, int simulate)
{
    if (!simulate)
        fprintf(out,
                "usage: tenbin flow schedule FILE [options]\n\n"
                "Schedule a workflow statically and print its makespan and, per host, its\n"
                "tasks and busy time (--tasks: each task's host, start and finish; hosts\n"
                "numbered from 0 in file order).\n\n");
    else
        fprintf(out,
                "usage: tenbin flow simulate FILE --platform SPEC|FILE [options]\n\n"
                "Run a workflow on a platform whose host speeds change (constant, traces or\n"
                "S2's load process) under S2's rules, rescheduling when the trigger says so.\n\n");
    fprintf(out,
            "  FILE                   a workflow: text (hosts/task/edge lines), WfFormat\n"
            "                         JSON (.json) or Pegasus DAX (.dax, .xml)\n"
            "  --algo A               heft | cpop | peft | minmin | maxmin | olb | random\n"
            "                         (default heft; --scheduler A is the same)\n"
            "  --platform SPEC|FILE   hosts and network, e.g. hosts=32,speed=1-5,G=0.01,load=100\n"
            "                         (%s)\n",
            simulate ? "required" : "default for a text file with costs: its hosts");
    if (simulate)
        fprintf(out, "  --trigger T            static | perf-changed | perf-changed-every:N |\n"
                     "                         task-finished | its-finished (default static)\n");
    fprintf(out,
            "  --task-overhead S      seconds each task costs besides its work (starting a\n"
            "                         process, opening files; tenbin flow run measures it)\n"
            "  --seed S               seed of the platform's random parts and of `random`\n"
            "                         (default 1)\n"
            "  --gantt FILE.svg       the schedule as a Gantt chart\n"
            "  --trace FILE.json      the schedule as a Chrome trace (host = thread)\n"
            "  --tasks                each task's host, start and finish instead of the\n"
            "                         per-host summary\n"
            "  --json                 the result as one JSON object (with every task)\n"
            "  -q, --quiet            only the makespan line\n"
            "  -h, --help             this text\n");
}

static int parse_flow_opts(int argc, char **argv, flow_opts *o, int simulate)
{
    static const struct option opts[] = {
        {"algo", required_argument, NULL, 'a'},    {"platform", required_argument, NULL, 'P'},
        {"trigger", required_argument, NULL, 'T'}, {"seed", required_argument, NULL, 's'},
        {"gantt", required_argument, NULL, 'g'},   {"trace", required_argument, NULL, 't'},
        {"json", no_argument, NULL, 'j'},          {"quiet", no_argument, NULL, 'q'},
        {"task-overhead", required_argument, NULL, 'O'},
        {"tasks", no_argument, NULL, 'k'},
        {"scheduler", required_argument, NULL, 'a'}, /* the same as --algo */
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    char help[64];
    snprintf(help, sizeof help, "tenbin %s --help", o->cmd);
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":hq", opts, NULL)) != -1) {
        switch (c) {
        case 'a': o->algo = optarg; break;
        case 'P': o->platform = optarg; break;
        case 'T':
            if (!simulate) {
                tb_cli_error(o->cmd, "--trigger belongs to `tenbin flow simulate`");
                return TB_EXIT_USAGE;
            }
            o->trigger = optarg;
            break;
        case 's':
            if (tb_cli_long(o->cmd, "--seed", optarg, 0, 1L << 62, &o->seed))
                return TB_EXIT_USAGE;
            break;
        case 'g': o->gantt = optarg; break;
        case 't': o->trace = optarg; break;
        case 'O':
            if (tb_cli_double(o->cmd, "--task-overhead", optarg, 0, 1e6, 0,
                              "seconds from 0 to 1e6", &o->task_overhead))
                return TB_EXIT_USAGE;
            break;
        case 'j': o->json = 1; break;
        case 'q': o->quiet = 1; break;
        case 'k': o->tasks = 1; break;
        case 'h': schedule_usage(stdout, simulate); return TB_EXIT_OK;
        default: return tb_cli_bad_option(o->cmd, help, c, argv);
        }
    }
    if (optind >= argc) {
        tb_cli_error(o->cmd, "missing the workflow FILE (%s)", help);
        return TB_EXIT_USAGE;
    }
    if (optind + 1 < argc) {
        tb_cli_error(o->cmd, "unexpected argument '%s'", argv[optind + 1]);
        return TB_EXIT_USAGE;
    }
    o->file = argv[optind];
    if (!tb_cli_flow_sched(o->cmd, o->algo))
        return TB_EXIT_USAGE;
    if (simulate && !o->platform) {
        tb_cli_error(o->cmd, "--platform is required (a spec such as hosts=32,speed=1-5,G=0.01,"
                             "load=100, or a file)");
        return TB_EXIT_USAGE;
    }
    if (simulate) {
        tb_flow_trigger tr;
        char err[256];
        if (tb_flow_trigger_parse(o->trigger, &tr, err, sizeof err)) {
            tb_cli_error(o->cmd, "--trigger: %s", err);
            return TB_EXIT_USAGE;
        }
    }
    if ((o->gantt && tb_cli_writable(o->cmd, "--gantt", o->gantt)) ||
        (o->trace && tb_cli_writable(o->cmd, "--trace", o->trace)))
        return TB_EXIT_USAGE;
    return -1;
}

/* Read the workflow and the platform; print why not. */
static int open_inputs(const flow_opts *o, tb_flow **f, tb_platform **plat)
{
    char err[512];
    if (tb_flow_read(o->file, TB_FLOW_FORMAT_AUTO, f, err, sizeof err)) {
        tb_cli_error(o->cmd, "%s", err);
        return -1;
    }
    if (o->platform && tb_cli_platform(o->cmd, "--platform", o->platform, (uint64_t)o->seed, plat)) {
        tb_flow_destroy(f);
        return -1;
    }
    size_t q = tb_flow_cost_hosts(*f);
    if (!*plat && !q) {
        tb_cli_error(o->cmd, "%s gives work, not per-host times: --platform is required",
                     o->file);
        tb_flow_destroy(f);
        return -1;
    }
    if (*plat && q && (*plat)->nhosts != q) {
        tb_cli_error(o->cmd, "%s has times for %zu hosts but the platform has %zu", o->file, q,
                     (*plat)->nhosts);
        tb_flow_destroy(f);
        tb_platform_destroy(plat);
        return -1;
    }
    return 0;
}

static int write_outputs(const flow_opts *o, const tb_flow *f, const tb_flow_schedule *s)
{
    return tb_cli_flow_write(o->cmd, o->gantt, o->trace, f, s);
}

const tb_flow_sched_ops *tb_cli_flow_sched(const char *cmd, const char *name)
{
    const tb_flow_sched_ops *ops = tb_flow_sched_find(name);
    if (!ops) {
        tb_buf names = TB_BUF_INIT;
        for (size_t i = 0; tb_flow_sched_get(i); i++)
            if (tb_buf_printf(&names, "%s%s", i == 0 ? "" : tb_flow_sched_get(i + 1) ? ", " : " or ",
                              tb_flow_sched_get(i)->name))
                break;
        tb_cli_error(cmd, "--algo: expected %s, got '%s'",
                     names.len ? (const char *)names.data : "?", name);
        tb_buf_free(&names);
    }
    return ops;
}

int tb_cli_flow_write(const char *cmd, const char *gantt, const char *trace, const tb_flow *f,
                      const tb_flow_schedule *s)
{
    if (gantt && tb_flow_write_gantt(f, s, gantt)) {
        tb_cli_error(cmd, "--gantt: cannot write '%s'", gantt);
        return -1;
    }
    if (trace) {
        tb_trace *tr = NULL;
        int rc = tb_trace_create(&tr, 0, 0.0);
        if (!rc)
            rc = tb_trace_set_process_name(tr, "workflow");
        if (!rc)
            rc = tb_flow_trace_schedule(f, s, tr);
        if (!rc)
            rc = tb_trace_write(tr, trace);
        tb_trace_destroy(&tr);
        if (rc) {
            tb_cli_error(cmd, "--trace: cannot write '%s'", trace);
            return -1;
        }
    }
    return 0;
}

/* "tasks": [...], one task a line, without the object's closing brace. */
static int tasks_json(tb_buf *b, const tb_flow *f, const tb_flow_schedule *s)
{
    int rc = tb_buf_printf(b, "\"tasks\": [");
    for (size_t t = 0; t < s->ntasks && !rc; t++) {
        rc = tb_buf_printf(b, "%s\n  {\"id\": ", t ? "," : "");
        if (!rc)
            rc = tb_buf_json_string(b, tb_flow_task_id(f, t));
        if (!rc)
            rc = tb_buf_printf(b, ", \"host\": %d, \"start\": %.17g, \"finish\": %.17g}",
                               (int)s->host[t], s->start[t], s->finish[t]);
    }
    if (!rc)
        rc = tb_buf_printf(b, "\n]");
    return rc;
}

static void print_tasks_text(const tb_flow *f, const tb_flow_schedule *s)
{
    printf("%-24s %6s %14s %14s\n", "task", "host", "start", "finish");
    for (size_t t = 0; t < s->ntasks; t++)
        printf("%-24s %6d %14.6g %14.6g\n", tb_flow_task_id(f, t), (int)s->host[t], s->start[t],
               s->finish[t]);
}

/* Per host: its base speed (when known), tasks, and the time it computes
 * (finish - start of its tasks) as a share of the makespan. */
static void print_hosts_text(const tb_flow_schedule *s, const double *speed)
{
    size_t H = s->nhosts;
    uint64_t *n = calloc(H ? H : 1, sizeof *n);
    double *busy = calloc(H ? H : 1, sizeof *busy);
    if (!n || !busy) {
        free(n);
        free(busy);
        return;
    }
    for (size_t t = 0; t < s->ntasks; t++)
        if (s->host[t] >= 0 && (size_t)s->host[t] < H) {
            n[s->host[t]]++;
            busy[s->host[t]] += s->finish[t] - s->start[t];
        }
    printf("%6s %8s %8s %14s %8s\n", "host", "speed", "tasks", "busy", "busy %");
    for (size_t h = 0; h < H; h++) {
        char sp[16] = "-";
        if (speed)
            snprintf(sp, sizeof sp, "%.3g", speed[h]);
        printf("%6zu %8s %8" PRIu64 " %14.6g %7.1f%%\n", h, sp, n[h], busy[h],
               s->makespan > 0 ? 100.0 * busy[h] / s->makespan : 0.0);
    }
    printf("(--tasks prints each task's host, start and finish)\n");
    free(n);
    free(busy);
}

static int emit(const flow_opts *o, const tb_flow *f, const tb_flow_schedule *s, tb_buf *head,
                const double *speed)
{
    if (o->json) {
        int rc = tasks_json(head, f, s);
        if (!rc)
            rc = tb_buf_printf(head, "}\n");
        if (rc)
            return TB_EXIT_FAIL;
        fwrite(head->data, 1, head->len, stdout);
    } else if (o->tasks) {
        print_tasks_text(f, s);
    } else if (!o->quiet) {
        print_hosts_text(s, speed);
    }
    return TB_EXIT_OK;
}

static int run_schedule(int argc, char **argv)
{
    flow_opts o = {.cmd = "flow schedule", .algo = "heft", .seed = 1};
    int st = parse_flow_opts(argc, argv, &o, 0);
    if (st >= 0)
        return st;
    tb_flow *f = NULL;
    tb_platform *plat = NULL;
    if (open_inputs(&o, &f, &plat))
        return TB_EXIT_USAGE;
    tb_flow_hosts H;
    tb_flow_schedule s;
    int rc = tb_flow_hosts_init(&H, f, plat);
    H.task_overhead = o.task_overhead;
    if (!rc && (rc = tb_flow_schedule_init(&s, tb_flow_ntasks(f), H.nhosts)))
        tb_flow_hosts_free(&H);
    if (rc) {
        tb_cli_error(o.cmd, "%s: cannot set up the hosts (%s)", o.file, tb_strerror(rc));
        tb_flow_destroy(&f);
        tb_platform_destroy(&plat);
        return TB_EXIT_FAIL;
    }
    const tb_flow_sched_ops *ops = tb_flow_sched_find(o.algo);
    double c0 = tb_process_cputime();
    rc = ops->schedule(f, &H, NULL, (uint64_t)o.seed, &s);
    double cpu = tb_process_cputime() - c0;
    int ex = TB_EXIT_OK;
    if (rc) {
        tb_cli_error(o.cmd, "%s: %s failed: %s", o.file, o.algo, tb_strerror(rc));
        ex = TB_EXIT_FAIL;
    } else if (write_outputs(&o, f, &s)) {
        ex = TB_EXIT_FAIL;
    } else {
        tb_buf head = TB_BUF_INIT;
        if (o.json)
            tb_buf_printf(&head,
                          "{\"algo\": \"%s\", \"makespan\": %.17g, \"hosts\": %zu, "
                          "\"sched_cpu_s\": %.6g,\n",
                          o.algo, s.makespan, H.nhosts, cpu);
        else
            printf("%s: %s makespan %.10g on %zu hosts (%zu tasks, %zu edges; %.3f s CPU)\n",
                   o.file, o.algo, s.makespan, H.nhosts, tb_flow_ntasks(f), tb_flow_nedges(f),
                   cpu);
        ex = emit(&o, f, &s, &head, H.base_speed);
        tb_buf_free(&head);
    }
    tb_flow_schedule_free(&s);
    tb_flow_hosts_free(&H);
    tb_flow_destroy(&f);
    tb_platform_destroy(&plat);
    return ex;
}

/* The library's result, after the scheduler, the trigger, the hosts'
 * speeds and every task's schedule. */
static int simulate_json(const flow_opts *o, const tb_flow *f, const tb_platform *plat,
                         const tb_flow_sim_result *res, const tb_flow_schedule *s)
{
    tb_buf x = TB_BUF_INIT, j = TB_BUF_INIT;
    int rc = tb_buf_printf(&x, "{\"algo\": ");
    rc |= tb_buf_json_string(&x, o->algo);
    rc |= tb_buf_printf(&x, ", \"trigger\": ");
    rc |= tb_buf_json_string(&x, o->trigger);
    rc |= tb_buf_printf(&x, ", \"hosts\": [");
    for (size_t h = 0; h < plat->nhosts && !rc; h++)
        rc = tb_buf_printf(&x, "%s%.17g", h ? ", " : "", plat->hosts[h].speed);
    rc |= tb_buf_printf(&x, "], ");
    if (!rc)
        rc = tasks_json(&x, f, s);
    rc |= tb_buf_printf(&x, "}") | tb_buf_append(&x, "", 1); /* a C string */
    if (!rc)
        rc = tb_flow_sim_result_json(res, (const char *)x.data, &j);
    rc = tb_cli_json_line(o->cmd, rc, &j);
    tb_buf_free(&x);
    tb_buf_free(&j);
    return rc ? TB_EXIT_FAIL : TB_EXIT_OK;
}

static int run_simulate(int argc, char **argv)
{
    flow_opts o = {.cmd = "flow simulate", .algo = "heft", .trigger = "static", .seed = 1};
    int st = parse_flow_opts(argc, argv, &o, 1);
    if (st >= 0)
        return st;
    tb_flow *f = NULL;
    tb_platform *plat = NULL;
    if (open_inputs(&o, &f, &plat))
        return TB_EXIT_USAGE;
    tb_flow_schedule s;
    int ex = TB_EXIT_OK;
    if (tb_flow_schedule_init(&s, tb_flow_ntasks(f), plat->nhosts)) {
        tb_flow_destroy(&f);
        tb_platform_destroy(&plat);
        return TB_EXIT_FAIL;
    }
    tb_flow_sim_opts so;
    tb_flow_sim_opts_init(&so);
    so.sched = tb_flow_sched_find(o.algo);
    so.trigger = o.trigger;
    so.seed = (uint64_t)o.seed;
    so.task_overhead = o.task_overhead;
    tb_flow_sim_result res;
    char err[512];
    double w0 = tb_wtime();
    int rc = tb_flow_simulate(f, plat, &so, &res, &s, err, sizeof err);
    double wall = tb_wtime() - w0;
    if (rc) {
        tb_cli_error(o.cmd, "%s", err);
        ex = rc == TB_ERR_INVALID ? TB_EXIT_USAGE : TB_EXIT_FAIL;
    } else if (write_outputs(&o, f, &s)) {
        ex = TB_EXIT_FAIL;
    } else {
        if (o.json) {
            ex = simulate_json(&o, f, plat, &res, &s);
        } else {
            printf("%s: %s/%s makespan %.10g (planned %.10g); %ld reschedules for %ld speed "
                   "changes; %" PRIu64 " events in %.3f s (scheduler %.3f s CPU)\n",
                   o.file, o.algo, o.trigger, res.makespan, res.planned, res.reschedules,
                   res.speed_changes, res.events, wall, res.sched_cpu_s);
            tb_buf head = TB_BUF_INIT;
            double *speed = malloc(plat->nhosts * sizeof *speed);
            for (size_t h = 0; speed && h < plat->nhosts; h++)
                speed[h] = plat->hosts[h].speed;
            ex = emit(&o, f, &s, &head, speed);
            free(speed);
            tb_buf_free(&head);
        }
    }
    tb_flow_schedule_free(&s);
    tb_flow_destroy(&f);
    tb_platform_destroy(&plat);
    return ex;
}

static void convert_usage(void)
{
    printf("usage: tenbin flow convert IN OUT [--to FORMAT] [--synthetic [--time-scale F]\n"
           "                                  [--size-scale F]]\n\n"
           "Convert a workflow between formats.  IN is text, WfFormat JSON or Pegasus DAX\n"
           "(recognised by content).  OUT is written in FORMAT, else by its name: .json\n"
           "WfFormat 1.5, .makeflow or .mf Makeflow, anything else the text format (which\n"
           "needs per-host times).  DAX cannot be written.\n\n"
           "  --to FORMAT      text | wfjson | makeflow\n"
           "  --synthetic      makeflow: each task sleeps its work and writes its outputs\n"
           "                   as zeros of their sizes instead of running its command (as\n"
           "                   `tenbin flow run --synthetic`); files no task writes are\n"
           "                   made by rules of their own\n"
           "  --time-scale F   synthetic: sleep work x F seconds (default 1)\n"
           "  --size-scale F   synthetic: files of size x F bytes (default: the time scale)\n"
           "  -h, --help       this text\n");
}

/* --to NAME: the format, or -1 after one line. */
static int convert_format(const char *cmd, const char *name)
{
    if (strcmp(name, "text") == 0)
        return TB_FLOW_FORMAT_TEXT;
    if (strcmp(name, "wfjson") == 0)
        return TB_FLOW_FORMAT_WFJSON;
    if (strcmp(name, "makeflow") == 0)
        return TB_FLOW_FORMAT_MAKEFLOW;
    if (strcmp(name, "dax") == 0)
        tb_cli_error(cmd, "--to dax: writing DAX is not supported (text, wfjson or makeflow)");
    else
        tb_cli_error(cmd, "--to: expected text, wfjson or makeflow, got '%s'", name);
    return -1;
}

static int convert_scale(const char *cmd, const char *opt, const char *val, double *out)
{
    if (tb_parse_double(val, out) || !(*out > 0) || *out > 1e9) {
        tb_cli_error(cmd, "%s: expected a positive number, got '%s'", opt, val);
        return -1;
    }
    return 0;
}

static int run_convert(int argc, char **argv)
{
    const char *cmd = "flow convert";
    static const struct option opts[] = {
        {"to", required_argument, NULL, 'o'},         {"synthetic", no_argument, NULL, 'S'},
        {"time-scale", required_argument, NULL, 'x'}, {"size-scale", required_argument, NULL, 'z'},
        {"help", no_argument, NULL, 'h'},             {NULL, 0, NULL, 0},
    };
    int to = TB_FLOW_FORMAT_AUTO, synthetic = 0, c;
    const char *scale_opt = NULL;
    double time_scale = 0, size_scale = 0;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            if ((to = convert_format(cmd, optarg)) < 0)
                return TB_EXIT_USAGE;
            break;
        case 'S': synthetic = 1; break;
        case 'x':
        case 'z':
            scale_opt = c == 'x' ? "--time-scale" : "--size-scale";
            if (convert_scale(cmd, scale_opt, optarg, c == 'x' ? &time_scale : &size_scale))
                return TB_EXIT_USAGE;
            break;
        case 'h': convert_usage(); return TB_EXIT_OK;
        default: return tb_cli_bad_option(cmd, "tenbin flow convert --help", c, argv);
        }
    }
    if (optind + 2 != argc) {
        tb_cli_error(cmd, "expected IN OUT (tenbin flow convert --help)");
        return TB_EXIT_USAGE;
    }
    const char *in = argv[optind], *out = argv[optind + 1];
    if (to == TB_FLOW_FORMAT_AUTO)
        to = tb_flow_format_of(out);
    if (to == TB_FLOW_FORMAT_DAX) {
        tb_cli_error(cmd, "%s: writing DAX is not supported (write .json, .makeflow or text)", out);
        return TB_EXIT_USAGE;
    }
    if (synthetic && to != TB_FLOW_FORMAT_MAKEFLOW) {
        tb_cli_error(cmd, "--synthetic needs Makeflow output (--to makeflow, or OUT.makeflow)");
        return TB_EXIT_USAGE;
    }
    if (scale_opt && !synthetic) {
        tb_cli_error(cmd, "%s needs --synthetic (real commands take what they take)", scale_opt);
        return TB_EXIT_USAGE;
    }
    tb_flow *f = NULL;
    char err[512];
    if (tb_flow_read(in, TB_FLOW_FORMAT_AUTO, &f, err, sizeof err)) {
        tb_cli_error(cmd, "%s", err);
        return TB_EXIT_USAGE;
    }
    int rc = to == TB_FLOW_FORMAT_MAKEFLOW
                 ? tb_flow_write_makeflow(f, out, time_scale, size_scale, synthetic, err,
                                          sizeof err)
                 : tb_flow_write(f, out, (tb_flow_format)to, err, sizeof err);
    tb_flow_destroy(&f);
    if (rc) {
        tb_cli_error(cmd, "%s", err);
        return rc == TB_ERR_INVALID ? TB_EXIT_USAGE : TB_EXIT_FAIL;
    }
    return TB_EXIT_OK;
}

static int run_generate(int argc, char **argv)
{
    const char *cmd = "flow generate";
    static const struct option opts[] = {
        {"tasks", required_argument, NULL, 'n'}, {"its-size", required_argument, NULL, 'i'},
        {"ccr", required_argument, NULL, 'c'},   {"seed", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
    };
    tb_flow_gen_opts g;
    tb_flow_gen_opts_init(&g);
    long tasks = (long)g.tasks, its = (long)g.its_size, seed = 1;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (tb_cli_long(cmd, "--tasks", optarg, 2, 1L << 26, &tasks))
                return TB_EXIT_USAGE;
            break;
        case 'i':
            if (tb_cli_long(cmd, "--its-size", optarg, 2, 1L << 20, &its))
                return TB_EXIT_USAGE;
            break;
        case 'c':
            if (tb_cli_double(cmd, "--ccr", optarg, 0, 1e12, 0, "a number from 0 to 1e12",
                              &g.ccr))
                return TB_EXIT_USAGE;
            break;
        case 's':
            if (tb_cli_long(cmd, "--seed", optarg, 0, 1L << 62, &seed))
                return TB_EXIT_USAGE;
            break;
        case 'h':
            printf("usage: tenbin flow generate [--tasks N] [--its-size K] [--ccr C] [--seed S] "
                   "OUT.json\n\n"
                   "Write one of S2's random task networks (section 5.2) as WfFormat JSON:\n"
                   "grown by chain, control-parallel and data-parallel steps until it has more\n"
                   "than N tasks (default 1000); sets of K tasks (default 100); work 100-200,\n"
                   "data 100-200 times C (default 1).\n");
            return TB_EXIT_OK;
        default: return tb_cli_bad_option(cmd, "tenbin flow generate --help", c, argv);
        }
    }
    if (optind + 1 != argc) {
        tb_cli_error(cmd, "expected one OUT file (tenbin flow generate --help)");
        return TB_EXIT_USAGE;
    }
    g.tasks = (size_t)tasks;
    g.its_size = (size_t)its;
    tb_flow *f = NULL;
    int rc = tb_flow_generate(&g, (uint64_t)seed, &f);
    char err[512] = "";
    if (!rc)
        rc = tb_flow_write(f, argv[optind], tb_flow_format_of(argv[optind]), err, sizeof err);
    tb_flow_destroy(&f);
    if (rc) {
        tb_cli_error(cmd, "%s", err[0] ? err : tb_strerror(rc));
        return TB_EXIT_FAIL;
    }
    return TB_EXIT_OK;
}

static int run_info(int argc, char **argv)
{
    const char *cmd = "flow info";
    if (argc != 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        FILE *out = argc == 2 ? stdout : stderr;
        fprintf(out, "usage: tenbin flow info FILE\n\nCount a workflow's tasks, edges, files "
                     "and independent task sets.\n");
        return argc == 2 ? TB_EXIT_OK : TB_EXIT_USAGE;
    }
    tb_flow *f = NULL;
    char err[512];
    if (tb_flow_read(argv[1], TB_FLOW_FORMAT_AUTO, &f, err, sizeof err)) {
        tb_cli_error(cmd, "%s", err);
        return TB_EXIT_USAGE;
    }
    size_t largest = 0, in_sets = 0;
    for (size_t i = 0; i < tb_flow_nits(f); i++) {
        size_t n = tb_flow_its_size(f, i);
        in_sets += n;
        largest = n > largest ? n : largest;
    }
    double work = 0;
    for (size_t t = 0; t < tb_flow_ntasks(f); t++)
        work += tb_flow_task_work(f, t);
    printf("%s: %zu tasks, %zu edges, %zu files, %zu independent task sets (%zu tasks, the "
           "largest %zu)",
           argv[1], tb_flow_ntasks(f), tb_flow_nedges(f), tb_flow_nfiles(f), tb_flow_nits(f),
           in_sets, largest);
    if (tb_flow_cost_hosts(f))
        printf(", times for %zu hosts\n", tb_flow_cost_hosts(f));
    else
        printf(", work %.6g s at speed 1\n", work);
    tb_flow_destroy(&f);
    return TB_EXIT_OK;
}

int tb_cmd_flow(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **);
        const char *summary;
    } subs[] = {
        {"schedule", run_schedule, "a static schedule (heft, cpop, peft, minmin, maxmin, olb, random)"},
        {"simulate", run_simulate, "run on a platform whose speeds change, with a trigger"},
        {"run", tb_cmd_flow_run, "run for real on MPI ranks (under mpiexec), with a trigger"},
        {"experiment", tb_cmd_flow_experiment, "S2's Tables 3, 4 and 5 as CSV and SVG"},
        {"convert", run_convert, "from text, WfFormat JSON, DAX to text, WfFormat JSON, Makeflow"},
        {"generate", run_generate, "one of S2's random task networks"},
        {"info", run_info, "tasks, edges, files, independent task sets"},
    };
    size_t n = sizeof subs / sizeof subs[0];
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        FILE *out = argc < 2 ? stderr : stdout;
        fprintf(out, "usage: tenbin flow COMMAND ...   (tenbin flow COMMAND --help)\n\n");
        for (size_t i = 0; i < n; i++)
            fprintf(out, "  %-12s %s\n", subs[i].name, subs[i].summary);
        return argc < 2 ? TB_EXIT_USAGE : TB_EXIT_OK;
    }
    for (size_t i = 0; i < n; i++)
        if (strcmp(argv[1], subs[i].name) == 0)
            return subs[i].fn(argc - 1, argv + 1);
    tb_cli_error("flow", "unknown command '%s' (schedule, simulate, run, experiment, convert, "
                         "generate, info)",
                 argv[1]);
    return TB_EXIT_USAGE;
}
