/*
 * cmd_flow_run.c - `tenbin flow run`: a workflow executed for real on the
 * ranks of an mpiexec job (tb_flow_run), with the schedulers and triggers
 * of `flow simulate`.
 *
 *   mpiexec -n 4 tenbin flow run montage.json --synthetic --time-scale 0.01 \
 *       --trigger task-finished --log run.json --json
 *
 * Rank 0 reads the workflow and sends its bytes to the others, so only
 * rank 0 needs to see the file; every rank parses them the same way.
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

static const char *cmd = "flow run";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mpiexec -n P tenbin flow run WORKFLOW [options]\n\n"
            "Run a workflow on the job's ranks: rank 0 schedules (and runs tasks too, unless\n"
            "--no-root), every rank runs tasks as processes of their own, files move between\n"
            "ranks over MPI, and the trigger reschedules the tasks not started yet from the\n"
            "speeds each rank shows.\n\n"
            "  WORKFLOW               WfFormat JSON (.json), Pegasus DAX (.dax, .xml) or text;\n"
            "                         without --synthetic every task needs a command\n"
            "  --algo A               heft | cpop | peft | minmin | maxmin | olb | random\n"
            "                         (default heft; --scheduler A is the same)\n"
            "  --trigger T            static | perf-changed | perf-changed-every:N |\n"
            "                         task-finished | its-finished (default static)\n"
            "  --perf-change X        a measured speed this far (relative) from the believed\n"
            "                         one is a speed change (default 0.1)\n"
            "  --synthetic            run a CPU loop of each task's recorded time instead of\n"
            "                         its command, reading and writing its files at their\n"
            "                         recorded sizes\n"
            "  --time-scale F         tasks take their recorded time x F (default 1)\n"
            "  --size-scale F         synthetic files are their recorded size x F (default:\n"
            "                         the time scale)\n"
            "  --slowdown R:F[@Ts[-Us]]   synthetic: rank R runs F times slower from T to U\n"
            "                         seconds into the run (no @: all of it; no -Us: to the end)\n"
            "  --retries N            run a failed task again up to N times, on another rank\n"
            "                         when there is one (default 0)\n"
            "  --input-dir DIR        where the workflow's input files are (default .)\n"
            "  --out-dir DIR          gather the workflow's outputs (files no task reads) here\n"
            "  --work-dir DIR         tasks' directories and files (default: a new directory\n"
            "                         under TMPDIR, removed after a run that succeeded)\n"
            "  --shared-fs            the work directory is seen by every rank: files are read\n"
            "                         in place, not sent\n"
            "  --no-root              rank 0 only schedules\n"
            "  --log FILE             every attempt as JSON (task, rank, host, start, end, exit,\n"
            "                         attempt)\n"
            "  --resume LOG           skip the tasks an earlier run's log says ended well and\n"
            "                         whose outputs are still in its work directory\n"
            "  --gantt FILE.svg       what ran where, as a Gantt chart\n"
            "  --trace FILE.json      the same as a Chrome trace\n"
            "  --seed S               seed of `random` (default 1)\n"
            "  --progress             a line on stderr as tasks finish (the default when\n"
            "                         stderr, or mpiexec's, is a terminal)\n"
            "  --json                 the summary as one JSON line\n"
            "  -q, --quiet            only errors (no progress lines)\n"
            "  -h, --help             this text\n");
}

typedef struct run_opts {
    const char *file, *algo, *gantt, *trace;
    long seed, retries;
    int json, quiet;
    tb_flow_run_opts ro;
} run_opts;

static int parse_scale(const char *opt, const char *val, double *out)
{
    if (tb_parse_double(val, out) || !(*out > 0) || *out > 1e9) {
        tb_cli_error(cmd, "%s: expected a positive number, got '%s'", opt, val);
        return -1;
    }
    return 0;
}

static int parse(int argc, char **argv, run_opts *o)
{
    static const struct option opts[] = {
        {"algo", required_argument, NULL, 'a'},       {"trigger", required_argument, NULL, 'T'},
        {"perf-change", required_argument, NULL, 'c'}, {"synthetic", no_argument, NULL, 'S'},
        {"time-scale", required_argument, NULL, 'x'}, {"size-scale", required_argument, NULL, 'z'},
        {"slowdown", required_argument, NULL, 'w'},   {"retries", required_argument, NULL, 'r'},
        {"input-dir", required_argument, NULL, 'i'},  {"out-dir", required_argument, NULL, 'o'},
        {"work-dir", required_argument, NULL, 'W'},   {"shared-fs", no_argument, NULL, 'F'},
        {"no-root", no_argument, NULL, 'N'},          {"log", required_argument, NULL, 'l'},
        {"gantt", required_argument, NULL, 'g'},      {"trace", required_argument, NULL, 't'},
        {"seed", required_argument, NULL, 's'},       {"progress", no_argument, NULL, 'p'},
        {"json", no_argument, NULL, 'j'},             {"quiet", no_argument, NULL, 'q'},
        {"resume", required_argument, NULL, 'R'},     {"help", no_argument, NULL, 'h'},
        {"scheduler", required_argument, NULL, 'a'}, /* the same as --algo */
        {NULL, 0, NULL, 0},
    };
    const char *help = "tenbin flow run --help";
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":hq", opts, NULL)) != -1) {
        switch (c) {
        case 'a': o->algo = optarg; break;
        case 'T': o->ro.trigger = optarg; break;
        case 'c':
            if (tb_cli_double(cmd, "--perf-change", optarg, 0, 100, TB_CLI_ABOVE,
                              "a number in (0, 100]", &o->ro.perf_change))
                return TB_EXIT_USAGE;
            break;
        case 'S': o->ro.synthetic = 1; break;
        case 'x':
            if (parse_scale("--time-scale", optarg, &o->ro.time_scale))
                return TB_EXIT_USAGE;
            break;
        case 'z':
            if (parse_scale("--size-scale", optarg, &o->ro.size_scale))
                return TB_EXIT_USAGE;
            break;
        case 'w':
        {
            tb_cli_slowdown sd;
            if (tb_cli_parse_slowdown(cmd, optarg, 1, &sd))
                return TB_EXIT_USAGE;
            o->ro.slow_rank = sd.rank;
            o->ro.slow_factor = sd.factor;
            o->ro.slow_at = sd.from;
            o->ro.slow_until = sd.to;
            break;
        }
        case 'r':
            if (tb_cli_long(cmd, "--retries", optarg, 0, 1000, &o->retries))
                return TB_EXIT_USAGE;
            break;
        case 'i': o->ro.input_dir = optarg; break;
        case 'o': o->ro.out_dir = optarg; break;
        case 'W': o->ro.work_dir = optarg; break;
        case 'F': o->ro.shared_fs = 1; break;
        case 'N': o->ro.no_root = 1; break;
        case 'l': o->ro.log = optarg; break;
        case 'R': o->ro.resume = optarg; break;
        case 'g': o->gantt = optarg; break;
        case 't': o->trace = optarg; break;
        case 's':
            if (tb_cli_long(cmd, "--seed", optarg, 0, 1L << 62, &o->seed))
                return TB_EXIT_USAGE;
            break;
        case 'p': o->ro.progress = 1; break;
        case 'j': o->json = 1; break;
        case 'q': o->quiet = 1; break;
        case 'h':
            if (tb_cli_rank() == 0)
                usage(stdout);
            return TB_EXIT_OK;
        default: return tb_cli_bad_option(cmd, help, c, argv);
        }
    }
    if (optind >= argc) {
        tb_cli_error(cmd, "missing the WORKFLOW file (%s)", help);
        return TB_EXIT_USAGE;
    }
    if (optind + 1 < argc) {
        tb_cli_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
        return TB_EXIT_USAGE;
    }
    o->file = argv[optind];
    if (!(o->ro.sched = tb_cli_flow_sched(cmd, o->algo)))
        return TB_EXIT_USAGE;
    tb_flow_trigger tr;
    char err[256];
    if (tb_flow_trigger_parse(o->ro.trigger, &tr, err, sizeof err)) {
        tb_cli_error(cmd, "--trigger: %s", err);
        return TB_EXIT_USAGE;
    }
    if (o->ro.slow_factor > 1 && !o->ro.synthetic) {
        tb_cli_error(cmd, "--slowdown needs --synthetic (a real command runs at the speed it "
                          "runs)");
        return TB_EXIT_USAGE;
    }
    if (o->ro.size_scale > 0 && !o->ro.synthetic) {
        tb_cli_error(cmd, "--size-scale needs --synthetic (real commands write what they write)");
        return TB_EXIT_USAGE;
    }
    o->ro.retries = (int)o->retries;
    o->ro.seed = (uint64_t)o->seed;
    o->ro.progress = tb_progress_wanted(o->ro.progress, o->quiet);
    /* outputs are checked before anything runs */
    if ((o->ro.log && tb_cli_writable(cmd, "--log", o->ro.log)) ||
        (o->gantt && tb_cli_writable(cmd, "--gantt", o->gantt)) ||
        (o->trace && tb_cli_writable(cmd, "--trace", o->trace)))
        return TB_EXIT_USAGE;
    return -1;
}

/* Rank 0 reads the file; every rank parses its bytes. */
static int read_workflow(const char *path, tb_flow **out)
{
    char err[512] = "";
    char *data = NULL;
    size_t len = 0;
    long n = -1;
    if (tb_cli_rank() == 0) {
        if (tb_read_file(path, (size_t)1 << 31, &data, &len, err, sizeof err) == TB_OK)
            n = (long)len;
        else
            tb_cli_error(cmd, "%s", err);
    }
    MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (n < 0)
        return -1;
    if (tb_cli_rank() != 0 && !(data = malloc((size_t)n + 1)))
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (long off = 0; off < n;) {
        int k = n - off > (1 << 30) ? 1 << 30 : (int)(n - off);
        MPI_Bcast(data + off, k, MPI_CHAR, 0, MPI_COMM_WORLD);
        off += k;
    }
    int rc = tb_flow_parse(data, (size_t)n, path, TB_FLOW_FORMAT_AUTO, out, err, sizeof err);
    free(data);
    if (rc) {
        tb_cli_error(cmd, "%s", err);
        return -1;
    }
    return 0;
}

/* The library's result, after the workflow, the ranks, the scheduler, the
 * trigger, the task count and the wall time. */
static int print_json(const run_opts *o, const tb_flow *f, int size, const tb_flow_run_result *res,
                      double wall)
{
    tb_buf x = TB_BUF_INIT, j = TB_BUF_INIT;
    int rc = tb_buf_printf(&x, "{\"workflow\": ");
    rc |= tb_buf_json_string(&x, o->file);
    rc |= tb_buf_printf(&x, ", \"ranks\": %d, \"algo\": ", size);
    rc |= tb_buf_json_string(&x, o->algo);
    rc |= tb_buf_printf(&x, ", \"trigger\": ");
    rc |= tb_buf_json_string(&x, o->ro.trigger);
    rc |= tb_buf_printf(&x, ", \"tasks\": %zu, \"wall_s\": %.17g}", tb_flow_ntasks(f), wall);
    rc |= tb_buf_append(&x, "", 1); /* a C string */
    if (!rc)
        rc = tb_flow_run_result_json(res, (const char *)x.data, &j);
    rc = tb_cli_json_line(cmd, rc, &j);
    tb_buf_free(&x);
    tb_buf_free(&j);
    return rc;
}

int tb_cmd_flow_run(int argc, char **argv)
{
    run_opts o = {.algo = "heft", .seed = 1};
    tb_flow_run_opts_init(&o.ro);
    o.ro.trigger = "static";
    o.ro.slow_rank = -1;
    int st = parse(argc, argv, &o);
    if (st >= 0)
        return st;
    tb_flow *f = NULL;
    if (read_workflow(o.file, &f))
        return TB_EXIT_USAGE;
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t hosts = (size_t)size - (o.ro.no_root ? 1 : 0);
    tb_flow_schedule s;
    if (tb_flow_schedule_init(&s, tb_flow_ntasks(f), hosts ? hosts : 1)) {
        tb_flow_destroy(&f);
        return TB_EXIT_FAIL;
    }
    /* the library's own communicator: nothing else on WORLD can match */
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    tb_flow_run_result res;
    char err[640] = "";
    double w0 = tb_wtime();
    int rc = tb_flow_run(f, comm, &o.ro, &res, &s, err, sizeof err);
    double wall = tb_wtime() - w0;
    MPI_Comm_free(&comm);
    int ex = TB_EXIT_OK;
    if (rc == TB_ERR_TASK) {
        tb_cli_error(cmd, "%s", err);
        ex = TB_EXIT_FAIL;
    } else if (rc) {
        tb_cli_error(cmd, "%s", err[0] ? err : tb_strerror(rc));
        /* what is wrong before anything runs is the input's fault */
        ex = rc == TB_ERR_INVALID || rc == TB_ERR_SIZE || rc == TB_ERR_NOTFOUND ||
                     rc == TB_ERR_PARSE
                 ? TB_EXIT_USAGE
                                                                              : TB_EXIT_FAIL;
    } else if (tb_cli_rank() == 0 && tb_cli_flow_write(cmd, o.gantt, o.trace, f, &s)) {
        ex = TB_EXIT_FAIL;
    }
    if (tb_cli_rank() == 0 && (rc == TB_OK || rc == TB_ERR_TASK)) {
        if (o.json) {
            if (print_json(&o, f, size, &res, wall))
                ex = TB_EXIT_FAIL;
        } else if (!o.quiet && rc == TB_OK) {
            printf("%s: %zu tasks on %zu ranks, makespan %.3f s (planned %.3f s), %ld "
                   "reschedule%s for %ld speed change%s, %" PRIu64 " files sent (%" PRIu64
                   " bytes), %ld attempt%s\n",
                   o.file, tb_flow_ntasks(f), hosts, res.makespan, res.planned, res.reschedules,
                   res.reschedules == 1 ? "" : "s", res.speed_changes,
                   res.speed_changes == 1 ? "" : "s", res.transfers, res.transferred_bytes,
                   res.attempts, res.attempts == 1 ? "" : "s");
        }
        fflush(stdout);
    }
    tb_flow_schedule_free(&s);
    tb_flow_destroy(&f);
    return ex;
}
