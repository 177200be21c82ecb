/*
 * tenbin.c - the one command-line tool: `tenbin SUBCOMMAND [options]`.
 */
#define _POSIX_C_SOURCE 200809L
#include "tenbin/core.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "tenbin/config.h"

static const tb_cli_cmd commands[] = {
    {"bnb", tb_cmd_bnb, "branch-and-bound over groups of master and workers (mpiexec or --sim)", 1},
    {"emu", tb_cmd_emu,
     "predict how an unmodified MPI program runs on a modelled cluster (S3 emulator)", 0},
    {"flow", tb_cmd_flow,
     "workflows: schedule (HEFT, CPOP, ...), simulate with rescheduling triggers, S2's experiments",
     0},
    {"himeno", tb_cmd_himeno,
     "the Himeno benchmark on arrays that re-place themselves to match speeds (mpiexec)", 1},
    {"info", tb_cmd_info, "version, MPI library, and the TENBIN_* environment variables", 0},
    {"mandel", tb_cmd_mandel, "render the Mandelbrot set with the master-worker runtime (mpiexec)",
     1},
    {"probe", tb_cmd_probe,
     "measure MPI here (or between nodes) as LogGPS parameters and write a platform file", 0},
    {"sim", tb_cmd_sim, "simulate a run on a modelled platform (sim mw)", 0},
};

static int mpi_rank = 0;

int tb_cli_rank(void) { return mpi_rank; }

void tb_cli_set_rank(int rank) { mpi_rank = rank; }

void tb_cli_error(const char *cmd, const char *fmt, ...)
{
    if (mpi_rank != 0)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "tenbin %s: %s\n", cmd, line);
    fflush(stderr);
}

int tb_cli_long(const char *cmd, const char *opt, const char *val, long min, long max, long *out)
{
    int rc = tb_parse_long(val, min, max, out);
    if (rc == TB_OK)
        return 0;
    tb_cli_error(cmd, "%s: expected an integer in %ld..%ld, got '%s'", opt, min, max, val);
    return -1;
}

int tb_cli_double(const char *cmd, const char *opt, const char *val, double lo, double hi,
                  unsigned flags, const char *want, double *out)
{
    double v;
    if (tb_parse_double(val, &v) == TB_OK && ((flags & TB_CLI_ABOVE) ? v > lo : v >= lo) &&
        ((flags & TB_CLI_BELOW) ? v < hi : v <= hi)) {
        *out = v;
        return 0;
    }
    tb_cli_error(cmd, "%s: expected %s, got '%s'", opt, want, val);
    return -1;
}

int tb_cli_json_line(const char *cmd, int rc, tb_buf *line)
{
    if (rc == TB_OK)
        rc = tb_buf_append(line, "\n", 1);
    if (rc == TB_OK) {
        fwrite(line->data, 1, line->len, stdout);
        fflush(stdout);
    } else {
        tb_cli_error(cmd, "--json: cannot write the result (%s)", tb_strerror(rc));
    }
    return rc;
}

/* One bound of a --slowdown range: a number, then 's' or nothing; *secs
 * says which.  Returns the end of what was read, or NULL. */
static const char *slow_bound(const char *s, double *v, int *secs)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    if (end == s || errno || !isfinite(*v) || *v < 0 || *s == '-' || *s == '+')
        return NULL;
    *secs = *end == 's';
    return *secs ? end + 1 : end;
}

int tb_cli_parse_slowdown(const char *cmd, const char *val, int unit_s, tb_cli_slowdown *out)
{
    const char *unit = unit_s ? "seconds (e.g. 1:3@2.5s-8s)" : "iterations (e.g. 1:3@10-40)";
    const char *s = val;
    char *end;
    errno = 0;
    long rank = strtol(s, &end, 10);
    double f = 0;
    int ok = end != s && *end == ':' && !errno && rank >= 0 && rank <= 1 << 24;
    if (ok) {
        s = end + 1;
        f = strtod(s, &end);
        ok = end != s && f >= 1 && isfinite(f);
    }
    double from = unit_s ? 0 : 1, to = INFINITY;
    int secs = unit_s, secs2 = unit_s;
    if (ok && *end == '@') {
        const char *p = slow_bound(end + 1, &from, &secs);
        if (p && *p == '-')
            p = slow_bound(p + 1, &to, &secs2);
        else
            secs2 = secs;
        ok = p && *p == '\0' && secs == secs2 && to >= from &&
             (secs || (from >= 1 && from == floor(from) && to == floor(to)));
        if (ok && secs != unit_s) {
            tb_cli_error(cmd, "--slowdown %s: FROM and TO count %s here, not %s", val, unit,
                         unit_s ? "iterations" : "seconds");
            return -1;
        }
        end = (char *)"";
    }
    if (!ok || *end != '\0') {
        tb_cli_error(cmd,
                     "--slowdown: expected RANK:FACTOR[@FROM[-TO]] with FACTOR >= 1 and "
                     "FROM <= TO in %s, got '%s'",
                     unit, val);
        return -1;
    }
    *out = (tb_cli_slowdown){(int)rank, f, from, to};
    return 0;
}

static char note[512];

void tb_cli_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note, sizeof note, fmt, ap);
    va_end(ap);
}

/* The note of a command that ended well. */
static int with_note(int status)
{
    if (status == TB_EXIT_OK && note[0] && mpi_rank == 0)
        fprintf(stderr, "%s\n", note);
    return status;
}

int tb_cli_hush(void)
{
    int level = (int)tb_log_get_level();
    if (level > TB_LOG_ERROR)
        tb_log_set_level(TB_LOG_ERROR);
    return level;
}

void tb_cli_unhush(int level) { tb_log_set_level((tb_log_level)level); }

/* Whether a file can be written at path (its directory exists and takes
 * new files; the path is not a directory, nor a file that cannot be
 * replaced), checked before hours of measuring rather than after. */
int tb_cli_writable(const char *cmd, const char *opt, const char *path)
{
    struct stat st;
    if (!*path) {
        tb_cli_error(cmd, "%s: an empty file name", opt);
        return -1;
    }
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        tb_cli_error(cmd, "%s %s: cannot write: it is a directory", opt, path);
        return -1;
    }
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (access(dir, W_OK | X_OK) == 0)
        return 0;
    tb_cli_error(cmd, "%s %s: cannot write: %s", opt, path, strerror(errno));
    return -1;
}

int tb_cli_ckpt_option(const char *cmd, int c, const char *arg, tb_cli_ckpt *o)
{
    switch (c) {
    case TB_CLI_OPT_CHECKPOINT:
        if (tb_cli_writable(cmd, "--checkpoint", arg))
            return TB_EXIT_USAGE;
        o->path = arg;
        return 0;
    case TB_CLI_OPT_CKPT_INTERVAL:
        return tb_cli_double(cmd, "--checkpoint-interval", arg, 0, 1e9, 0, "seconds from 0 to 1e9",
                             &o->interval)
                   ? TB_EXIT_USAGE
                   : 0;
    default:
        o->resume = arg;
        return 0;
    }
}

int tb_cli_ckpt_check(const char *cmd, const tb_cli_ckpt *o, int sim, const char *why)
{
    if (!sim || (!o->path && !o->resume))
        return 0;
    tb_cli_error(cmd, "--%s: a simulated run keeps no checkpoint%s%s",
                 o->path ? "checkpoint" : "resume", why ? ": " : "", why ? why : "");
    return TB_EXIT_USAGE;
}

/* "2,4,8" or "a:b:step" (inclusive); ascending, distinct, in [min, max]. */
int tb_cli_long_list(const char *cmd, const char *opt, const char *val, long min, long max,
                     long *out, size_t cap, size_t *n)
{
    *n = 0;
    long a, b, step;
    char tail;
    if (sscanf(val, "%ld:%ld:%ld%c", &a, &b, &step, &tail) == 3) {
        if (step < 1 || a > b || a < min || b > max) {
            tb_cli_error(cmd, "%s: expected FIRST:LAST:STEP with %ld <= FIRST <= LAST <= %ld "
                              "and STEP >= 1, got '%s'", opt, min, max, val);
            return -1;
        }
        for (long v = a; v <= b; v += step) {
            if (*n == cap) {
                tb_cli_error(cmd, "%s: more than %zu values in '%s'", opt, cap, val);
                return -1;
            }
            out[(*n)++] = v;
        }
        return 0;
    }
    char *copy = strdup(val), *save = NULL;
    if (!copy)
        return -1;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long v;
        if (*n == cap || tb_cli_long(cmd, opt, tok, min, max, &v)) {
            if (*n == cap)
                tb_cli_error(cmd, "%s: more than %zu values in '%s'", opt, cap, val);
            free(copy);
            return -1;
        }
        if (*n > 0 && v <= out[*n - 1]) {
            tb_cli_error(cmd, "%s: values must ascend, got '%s'", opt, val);
            free(copy);
            return -1;
        }
        out[(*n)++] = v;
    }
    free(copy);
    if (*n == 0) {
        tb_cli_error(cmd, "%s: empty list", opt);
        return -1;
    }
    return 0;
}

int tb_cli_bad_option(const char *cmd, const char *help, int c, char **argv)
{
    if (c == ':')
        tb_cli_error(cmd, "option '%s' needs a value", argv[optind - 1]);
    else
        tb_cli_error(cmd, "unknown option '%s' (%s)", argv[optind - 1], help);
    return TB_EXIT_USAGE;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: tenbin COMMAND [options]   (tenbin help COMMAND for its options)\n\n"
                 "Adaptive load balancing and scheduling on uneven clusters, on MPI.\n\n"
                 "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
}

/* The rank and size a launcher gave this process (Open MPI's or MPICH's
 * mpiexec, srun), from its environment, before MPI is initialised: 0 and 1
 * when no launcher started it. */
static void launcher_rank(int *rank, int *size)
{
    static const char *const vars[][2] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                          {"PMI_RANK", "PMI_SIZE"},
                                          {"SLURM_PROCID", "SLURM_STEP_NUM_TASKS"}};
    *rank = 0;
    *size = 1;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *r = getenv(vars[i][0]), *n = getenv(vars[i][1]);
        long rv, nv;
        if (r && n && tb_parse_long(r, 0, 1L << 30, &rv) == TB_OK &&
            tb_parse_long(n, 1, 1L << 30, &nv) == TB_OK && rv < nv) {
            *rank = (int)rv;
            *size = (int)nv;
            return;
        }
    }
}

/* A command that uses no MPI, started on several ranks: rank 0 runs it and
 * the others end at once (so it prints once); emu, which starts ranks of its
 * own, refuses.  Returns -1 to run, else the exit status. */
static int outside_mpi(const char *name, int argc, char **argv)
{
    int rank, size;
    launcher_rank(&rank, &size);
    if (size == 1 || strcmp(name, "probe") == 0) /* probe measures between the ranks */
        return -1;
    int help = 0;
    for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
        help |= strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
    if (strcmp(name, "emu") == 0 && !help) {
        if (rank == 0)
            fprintf(stderr, "tenbin emu: it starts the program's ranks itself; run it without "
                            "mpiexec or srun (started as rank 0 of %d)\n", size);
        return TB_EXIT_USAGE;
    }
    return rank == 0 ? -1 : TB_EXIT_OK;
}

/* The commands whose runs end cleanly on SIGINT, SIGTERM and SIGUSR1
 * (tb_signals_catch): a run of the library on rank 0 notices them, as do
 * probe's measurements and bnb serve's wait for the next run.  The others
 * keep the default action, so Ctrl-C ends them at once. */
static int stops_cleanly(const char *name, int argc, char **argv)
{
    if (strcmp(name, "bnb") == 0 || strcmp(name, "probe") == 0)
        return 1;
    if (strcmp(name, "flow") == 0)
        return argc > 2 && strcmp(argv[2], "run") == 0;
    if (strcmp(name, "emu") == 0) /* emu and emu sweep: the program's ranks are stopped too */
        return !(argc > 2 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0));
    return strcmp(name, "mandel") == 0 || strcmp(name, "himeno") == 0 ||
           strcmp(name, "sim") == 0;
}

/* A run stopped by a signal: the status a shell gives a process the signal
 * ended (the command said what it kept). */
static int interrupted_status(int rc)
{
    int sig = tb_signals_pending();
    if (sig && (rc == TB_EXIT_OK || rc == TB_EXIT_FAIL))
        return 128 + sig;
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return TB_EXIT_USAGE;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        return TB_EXIT_OK;
    }
    /* tenbin help [COMMAND [SUBCOMMAND]]: the same as tenbin COMMAND ... --help. */
    static char help_opt[] = "--help";
    char *help_argv[5];
    if (strcmp(argv[1], "help") == 0) {
        if (argc == 2) {
            usage(stdout);
            return TB_EXIT_OK;
        }
        if (argc > 4 || argv[2][0] == '-' || (argc == 4 && argv[3][0] == '-')) {
            fprintf(stderr, "tenbin: help takes a command and at most one subcommand "
                            "(tenbin help flow run)\n");
            return TB_EXIT_USAGE;
        }
        int n = 0;
        help_argv[n++] = argv[0];
        for (int i = 2; i < argc; i++)
            help_argv[n++] = argv[i];
        help_argv[n++] = help_opt;
        help_argv[n] = NULL;
        argc = n;
        argv = help_argv;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("tenbin %s\n", TENBIN_VERSION);
        return TB_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        const tb_cli_cmd *c = &commands[i];
        if (strcmp(argv[1], c->name) != 0)
            continue;
        /* bnb's generate and replay do not search: no MPI (replay waits
         * for SIGINT/SIGTERM, which MPI's own threads would take). */
        int bnb_tool = strcmp(c->name, "bnb") == 0 && argc > 2 &&
                       (strcmp(argv[2], "generate") == 0 || strcmp(argv[2], "replay") == 0);
        int flow_run = strcmp(c->name, "flow") == 0 && argc > 2 && strcmp(argv[2], "run") == 0;
        if ((!c->needs_mpi && !flow_run) || bnb_tool) {
            int st = outside_mpi(c->name, argc, argv);
            if (st >= 0)
                return st;
            int caught = stops_cleanly(c->name, argc, argv) && tb_signals_catch() == TB_OK;
            st = with_note(c->run(argc - 1, argv + 1));
            return caught ? interrupted_status(st) : st;
        }
        /* Funneled: only this thread calls MPI (bnb --web serves from
         * threads of its own that never do). */
        /* Caught before MPI_Init too: a one-rank start takes a few tenths of
         * a second, and a stop in them is a stop of the run (not a death
         * with nothing said); again after, for what MPI_Init replaced. */
        int stops = stops_cleanly(c->name, argc, argv);
        if (stops)
            (void)tb_signals_catch();
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
        tb_log_set_rank(mpi_rank);
        int caught = stops && tb_signals_catch() == TB_OK;
        int rc = with_note(c->run(argc - 1, argv + 1));
        if (caught)
            rc = interrupted_status(rc);
        MPI_Finalize();
        return rc;
    }
    fprintf(stderr, "tenbin: unknown command '%s' (tenbin --help lists them)\n", argv[1]);
    return TB_EXIT_USAGE;
}
