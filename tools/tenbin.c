/*
 * tenbin.c - the one command-line tool: `tenbin SUBCOMMAND [options]`.
 */
#define _POSIX_C_SOURCE 200809L
#include "tenbin/core.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Whether a file can be written at path (its directory exists and takes
 * new files), checked before hours of measuring rather than after. */
int tb_cli_writable(const char *cmd, const char *opt, const char *path)
{
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
        if ((!c->needs_mpi && !flow_run) || bnb_tool)
            return c->run(argc - 1, argv + 1);
        /* Funneled: only this thread calls MPI (bnb --web serves from
         * threads of its own that never do). */
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
        tb_log_set_rank(mpi_rank);
        int rc = c->run(argc - 1, argv + 1);
        MPI_Finalize();
        return rc;
    }
    fprintf(stderr, "tenbin: unknown command '%s' (tenbin --help lists them)\n", argv[1]);
    return TB_EXIT_USAGE;
}
