/*
 * cli.h - what the subcommands of the `tenbin` tool share.
 *
 * Exit statuses: 0 success, 1 the run failed, 2 bad usage or bad input.
 * Only rank 0 prints results and usage errors; every exit path finalises MPI.
 */
#ifndef TB_CLI_H
#define TB_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "tenbin/core.h"

enum { TB_EXIT_OK = 0, TB_EXIT_FAIL = 1, TB_EXIT_USAGE = 2 };

typedef struct tb_cli_cmd {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand's name */
    const char *summary;
    int needs_mpi;                     /* MPI is initialised around run */
} tb_cli_cmd;

/* Rank of this process in MPI_COMM_WORLD, or 0 before MPI is initialised. */
int tb_cli_rank(void);
/* For commands that start MPI themselves: errors then come from rank 0 only. */
void tb_cli_set_rank(int rank);
/* "tenbin CMD: message" on stderr, from rank 0 only. */
void tb_cli_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The getopt_long failure c (':' for a missing value, anything else for an
 * unknown option) as one usage line naming `help` (e.g. "tenbin mandel
 * --help"); returns TB_EXIT_USAGE.  Call it from the switch's default. */
int tb_cli_bad_option(const char *cmd, const char *help, int c, char **argv);
/* Parse an integer option value, printing the error; returns 0 on success. */
int tb_cli_long(const char *cmd, const char *opt, const char *val, long min, long max, long *out);
/* Parse a finite real option value in [lo, hi] (TB_CLI_ABOVE: lo itself
 * excluded; TB_CLI_BELOW: hi excluded), printing "OPT: expected WANT, got
 * 'VAL'" otherwise; returns 0 on success. */
enum { TB_CLI_ABOVE = 1, TB_CLI_BELOW = 2 };
int tb_cli_double(const char *cmd, const char *opt, const char *val, double lo, double hi,
                  unsigned flags, const char *want, double *out);
/*
 * --slowdown RANK:FACTOR[@FROM[-TO]], the one syntax of every command that
 * slows a rank down: RANK works FACTOR (>= 1) times slower from FROM to TO
 * (both included; no @: the whole run; no -TO: to the end).  FROM and TO
 * count iterations (sweeps) when plain, seconds of the run when they end in
 * 's' (`1:3@10-40` vs `1:3@2.5s-8s`); a command takes the unit it can
 * honour (unit_s: 1 seconds, 0 iterations) and names the other in its error.
 */
typedef struct tb_cli_slowdown {
    int rank;
    double factor;
    double from, to; /* iterations from 1, or seconds from 0; to: INFINITY if open */
} tb_cli_slowdown;
int tb_cli_parse_slowdown(const char *cmd, const char *val, int unit_s, tb_cli_slowdown *out);
/* The --json line a command built in *line (rc: how building it went):
 * written to stdout with its newline, or "--json: cannot write the result"
 * on stderr.  Returns rc, or the error of appending the newline. */
int tb_cli_json_line(const char *cmd, int rc, tb_buf *line);
/* 0 if a file can be created at path, else -1 after "OPT PATH: cannot write: why". */
int tb_cli_writable(const char *cmd, const char *opt, const char *path);
/* A note for the user printed once on stderr (rank 0) after the command
 * ends well, not before an error line; the last one set wins. */
void tb_cli_note(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* A setter that refuses logs a warning (for programs that ignore its code);
 * a command that reports the refusal itself, naming the option, calls the
 * setter between tb_cli_hush() and tb_cli_unhush(level) so the user reads one
 * line, not two. */
int tb_cli_hush(void);
void tb_cli_unhush(int level);
/* A list of integers in [min, max], ascending and distinct: "2,4,8" or
 * FIRST:LAST:STEP (inclusive); at most cap values.  0, or -1 after one line. */
int tb_cli_long_list(const char *cmd, const char *opt, const char *val, long min, long max,
                     long *out, size_t cap, size_t *n);

struct tb_platform;
/* Open the platform SPEC|FILE given to option opt ("--platform", "--sim"),
 * printing the reason on failure; 0 on success. */
int tb_cli_platform(const char *cmd, const char *opt, const char *arg, uint64_t seed,
                    struct tb_platform **out);
/* One summary line: the hosts `ranks` ranks use and their speeds. */
void tb_cli_print_hosts(const struct tb_platform *p, int ranks, FILE *out);

/* A line chart as an SVG file (written atomically): x[nx] on the x axis, a
 * line per series (y[nx]; non-finite values are gaps), log10 axes if asked. */
typedef struct tb_cli_series {
    const char *name;
    const double *y;
} tb_cli_series;
int tb_cli_line_chart(const char *path, const char *title, const char *xlabel, const char *ylabel,
                      const double *x, size_t nx, const tb_cli_series *s, size_t ns, int logx,
                      int logy);

int tb_cmd_bnb(int argc, char **argv);
int tb_cmd_emu(int argc, char **argv);
int tb_cmd_emu_sweep(int argc, char **argv);
struct tb_emu_opts;
/* The options every emulation of cmd shares: libtenbin-emu.so found
 * (TENBIN_EMU_LIBRARY, else beside the executable, else in the library
 * directory relative to it) into lib, the platform, seed, launcher, timeout
 * and listening address.  0, or -1 after one line. */
/* --checkpoint FILE, --checkpoint-interval S and --resume FILE: the same in
 * every long command (mandel, himeno, bnb).  Put TB_CLI_CKPT_OPTIONS in the
 * getopt_long table, hand its codes to tb_cli_ckpt_option, and call
 * tb_cli_ckpt_check after the loop. */
typedef struct tb_cli_ckpt {
    const char *path;   /* --checkpoint FILE, or NULL */
    double interval;    /* --checkpoint-interval S (set the command's default first) */
    const char *resume; /* --resume FILE, or NULL */
} tb_cli_ckpt;
enum { TB_CLI_OPT_CHECKPOINT = 0x1000, TB_CLI_OPT_CKPT_INTERVAL, TB_CLI_OPT_RESUME };
#define TB_CLI_CKPT_OPTIONS                                                                        \
    {"checkpoint", required_argument, NULL, TB_CLI_OPT_CHECKPOINT},                                \
        {"checkpoint-interval", required_argument, NULL, TB_CLI_OPT_CKPT_INTERVAL},                \
        {"resume", required_argument, NULL, TB_CLI_OPT_RESUME}
#define TB_CLI_CKPT_CASES                                                                          \
    case TB_CLI_OPT_CHECKPOINT:                                                                    \
    case TB_CLI_OPT_CKPT_INTERVAL:                                                                 \
    case TB_CLI_OPT_RESUME
/* Option c (one of the three) with its argument into o: 0, or TB_EXIT_USAGE
 * after one line (a --checkpoint FILE that cannot be written, an interval
 * out of 0..1e9 s). */
int tb_cli_ckpt_option(const char *cmd, int c, const char *arg, tb_cli_ckpt *o);
/* A simulated run (sim != 0) keeps no checkpoint: 0, or TB_EXIT_USAGE after
 * one line, which goes on with `why` if it is not NULL. */
int tb_cli_ckpt_check(const char *cmd, const tb_cli_ckpt *o, int sim, const char *why);

/* `tenbin emu --check PROGRAM [ARGS]` (tools/emu_check.c): the MPI functions
 * the program imports, by what the emulator does with them (lib: the
 * emulation library); an exit status. */
int tb_cli_emu_check(char **argv, const char *lib, int json);

int tb_cli_emu_opts(const char *cmd, struct tb_emu_opts *o, char *lib, size_t liblen,
                    const char *platform, long seed, const char *mpiexec, double timeout,
                    const char *listen);
int tb_cmd_flow(int argc, char **argv);
int tb_cmd_himeno(int argc, char **argv);
int tb_cmd_info(int argc, char **argv);
int tb_cmd_mandel(int argc, char **argv);
int tb_cmd_probe(int argc, char **argv);
int tb_cmd_sim(int argc, char **argv);

#endif
