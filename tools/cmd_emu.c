/*
 * cmd_emu.c - `tenbin emu`: run an unmodified MPI program with the emulation
 * library preloaded and report how it would run on a modelled platform (S3).
 */
#define _GNU_SOURCE
#include "tenbin/core.h"

#include <float.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tenbin/config.h"
#include "tenbin/emu.h"
#include "tenbin/model.h"

static const char *const cmd = "emu";

static void emu_usage(FILE *out)
{
    fprintf(out,
            "usage: tenbin emu --platform SPEC|FILE -n P [options] -- PROGRAM [ARGS...]\n"
            "       tenbin emu --check [--json] [--] PROGRAM [ARGS...]\n\n"
            "Run an unmodified, dynamically linked MPI program on P real ranks with the\n"
            "emulation library preloaded, and predict how it runs on the platform: each\n"
            "rank keeps a virtual clock (its CPU time between MPI calls scaled by its\n"
            "host's speed, messages costed by the platform's LogGPS model), and the first\n"
            "message in virtual time is the one a wildcard receive or probe sees.\n"
            "The program's own output passes through; the summary comes last.\n\n"
            "  --platform SPEC|FILE   the target cluster (docs/platform.md), e.g.\n"
            "                         hosts=64,L=50us,o=12.1us,ob=0.182us,O=70.8ns,G=20ns\n"
            "  -n, --ranks P          ranks to run (they must fit the platform's cores)\n"
            "  --master R             rank whose breakdown is shown as the master's (default 0)\n"
            "  --seed S               seed of the platform's random parts (default 1)\n"
            "  --trace FILE.json      Chrome trace of the run, in virtual time\n"
            "  --json                 the summary as one JSON object on the last line\n"
            "  --timeout SECONDS      stop a run that takes longer in real time (default none)\n"
            "  --mpiexec PATH         launcher (default %s)\n"
            "  --listen ADDR          address of this machine that the ranks report to\n"
            "                         (default 127.0.0.1; across nodes, one they all reach)\n"
            "  --check                run nothing: list the MPI functions PROGRAM (a script: its\n"
            "                         interpreter; python: mpi4py too) and the libraries it\n"
            "                         loads import that the emulator does not model; exit 0 if\n"
            "                         none (--json: as one JSON object)\n"
            "  -h, --help             this text\n\n"
            "       tenbin emu sweep ... (over a range of P and master counts: --help)\n\n"
            "Exit status: 0 predicted, 1 the program or the emulation failed, 2 bad usage.\n"
            "docs/emulator.md says what is modelled and how.\n",
            TENBIN_MPIEXEC);
}

/* libtenbin-emu.so: TENBIN_EMU_LIBRARY, else beside this executable (build
 * tree), else in the library directory relative to it (installed). */
static int emu_library(char *out, size_t n)
{
    const char *env = getenv("TENBIN_EMU_LIBRARY");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return -1;
    exe[len] = 0;
    char *dir = dirname(exe);
    snprintf(out, n, "%s/libtenbin-emu.so", dir);
    if (access(out, R_OK) == 0)
        return 0;
    snprintf(out, n, "%s/%s/libtenbin-emu.so", dir, TENBIN_BIN_TO_LIB);
    return access(out, R_OK) == 0 ? 0 : -1;
}

int tb_cli_emu_opts(const char *cmd, tb_emu_opts *o, char *lib, size_t liblen,
                    const char *platform, long seed, const char *mpiexec, double timeout,
                    const char *listen)
{
    if (emu_library(lib, liblen) != 0) {
        tb_cli_error(cmd, "cannot find libtenbin-emu.so next to the tenbin executable (set "
                          "TENBIN_EMU_LIBRARY)");
        return -1;
    }
    tb_emu_opts_init(o);
    o->platform = platform;
    o->seed = (uint64_t)seed;
    o->library = lib;
    o->mpiexec = mpiexec;
    o->timeout = timeout;
    o->listen = listen;
    return 0;
}

static double pct(double x, double total) { return total > 0 ? 100.0 * x / total : 0.0; }

/* A host's speed as the tables show it: its base speed, and how it varies. */
static void speed_text(const tb_platform *p, int host, char *buf, size_t n)
{
    if (!p || host < 0 || (size_t)host >= p->nhosts) {
        snprintf(buf, n, "?");
        return;
    }
    const tb_host *h = &p->hosts[host];
    snprintf(buf, n, "%.3g%s", h->speed,
             h->kind == TB_SPEED_TRACE ? " (trace)" : h->kind == TB_SPEED_LOAD ? " (load)" : "");
}

static void print_text(const tb_emu_result *r, const char *platform, uint64_t seed, int master)
{
    printf("\ntenbin emu: predicted makespan %.6f s of virtual time for %d ranks on %s\n",
           r->makespan_s, r->ranks, platform);
    printf("            (emulated in %.2f s of real time: %.2f s to start the ranks, %.2f s from "
           "then to the last MPI_Finalize; %" PRIu64 " coordinator decisions)\n",
           r->wall_s, r->startup_s, r->run_s, r->decisions);
    if (r->unchecked_rendezvous > 0)
        printf("            (%" PRIu64 " of the decisions made while a rank was held in a "
               "rendezvous send to the\n"
               "            receiver: exact in the model unless it had posted that receive "
               "ahead with MPI_Irecv)\n",
               r->unchecked_rendezvous);
    tb_platform *p = NULL;
    if (tb_platform_open(platform, seed, &p, NULL, 0) != TB_OK)
        p = NULL;
    printf("%5s  %-12s %-12s %12s %12s %12s %12s %10s %12s\n", "rank", "host", "speed",
           "compute_s", "send_s", "recv_s", "idle_s", "msgs_sent", "bytes_sent");
    for (int i = 0; i < r->ranks; i++) {
        const tb_emu_rank *k = &r->rank[i];
        char sp[32];
        speed_text(p, k->host, sp, sizeof sp);
        printf("%5d  %-12s %-12s %12.6f %12.6f %12.6f %12.6f %10" PRIu64 " %12" PRIu64 "\n",
               k->rank, k->host_name, sp, k->compute_s, k->send_s, k->recv_s, k->idle_s,
               k->messages_sent, k->bytes_sent);
    }
    tb_platform_destroy(&p);
    const tb_emu_rank *m = &r->rank[master];
    double T = r->makespan_s;
    printf("master (rank %d): compute %.6f s (%.1f %%), send %.6f s (%.1f %%), receive %.6f s "
           "(%.1f %%), idle %.6f s (%.1f %%)\n",
           master, m->compute_s, pct(m->compute_s, T), m->send_s, pct(m->send_s, T), m->recv_s,
           pct(m->recv_s, T), m->idle_s, pct(m->idle_s, T));
}

/* Drops the space the library writes after every ',' and ':' outside
 * strings: `tenbin emu --json` has always printed its line compact. */
static void compact(tb_buf *b)
{
    char *s = (char *)b->data, *d = s;
    int in_str = 0;
    for (size_t i = 0; i < b->len; i++) {
        *d++ = s[i];
        if (in_str) {
            if (s[i] == '\\' && i + 1 < b->len)
                *d++ = s[++i];
            else if (s[i] == '"')
                in_str = 0;
        } else if (s[i] == '"') {
            in_str = 1;
        } else if ((s[i] == ',' || s[i] == ':') && i + 1 < b->len && s[i + 1] == ' ') {
            i++;
        }
    }
    b->len = (size_t)(d - s);
}

/* The library's result, after the platform and --master. */
static int print_json(const tb_emu_result *r, const char *platform, int master)
{
    tb_buf x = TB_BUF_INIT, b = TB_BUF_INIT;
    int rc = tb_buf_printf(&x, "{\"platform\": ");
    rc |= tb_buf_json_string(&x, platform);
    rc |= tb_buf_printf(&x, ", \"master\": %d}", master) | tb_buf_append(&x, "", 1);
    if (rc == TB_OK)
        rc = tb_emu_result_json(r, (const char *)x.data, &b);
    if (rc == TB_OK) {
        compact(&b);
        rc = tb_buf_append(&b, "\n", 1);
    }
    if (rc == TB_OK)
        fwrite(b.data, 1, b.len, stdout);
    tb_buf_free(&x);
    tb_buf_free(&b);
    return rc;
}

int tb_cmd_emu(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "sweep") == 0)
        return tb_cmd_emu_sweep(argc - 1, argv + 1);
    static const struct option opts[] = {
        {"platform", required_argument, NULL, 'P'}, {"ranks", required_argument, NULL, 'n'},
        {"master", required_argument, NULL, 'm'},   {"seed", required_argument, NULL, 's'},
        {"trace", required_argument, NULL, 't'},    {"json", no_argument, NULL, 'j'},
        {"timeout", required_argument, NULL, 'T'},  {"mpiexec", required_argument, NULL, 'x'},
        {"listen", required_argument, NULL, 'L'},   {"help", no_argument, NULL, 'h'},
        {"check", no_argument, NULL, 'C'},          {NULL, 0, NULL, 0},
    };
    const char *platform = NULL, *trace = NULL, *mpiexec = NULL, *listen = NULL;
    long ranks = 0, master = 0, seed = 1;
    double timeout = 0;
    int json = 0, check = 0, c;
    opterr = 0;
    /* '+': stop at the program's name, whose options are its own. */
    while ((c = getopt_long(argc, argv, "+:hn:", opts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'P': platform = optarg; break;
        case 'n': bad = tb_cli_long(cmd, "-n", optarg, 1, 1 << 20, &ranks); break;
        case 'm': bad = tb_cli_long(cmd, "--master", optarg, 0, 1 << 20, &master); break;
        case 's': bad = tb_cli_long(cmd, "--seed", optarg, 0, 1L << 62, &seed); break;
        case 't': trace = optarg; break;
        case 'j': json = 1; break;
        case 'C': check = 1; break;
        case 'x': mpiexec = optarg; break;
        case 'L': listen = optarg; break;
        case 'T':
            bad = tb_cli_double(cmd, "--timeout", optarg, 0, DBL_MAX, TB_CLI_ABOVE, "seconds > 0",
                                &timeout);
            break;
        case 'h': emu_usage(stdout); return TB_EXIT_OK;
        default: return tb_cli_bad_option(cmd, "tenbin emu --help", c, argv);
        }
        if (bad)
            return TB_EXIT_USAGE;
    }
    if (check) {
        if (optind >= argc) {
            tb_cli_error(cmd, "--check: no program given (tenbin emu --check PROGRAM)");
            return TB_EXIT_USAGE;
        }
        char lib[PATH_MAX];
        if (emu_library(lib, sizeof lib) != 0) {
            tb_cli_error(cmd, "cannot find libtenbin-emu.so next to the tenbin executable (set "
                              "TENBIN_EMU_LIBRARY)");
            return TB_EXIT_FAIL;
        }
        return tb_cli_emu_check(argv + optind, lib, json);
    }
    if (!platform) {
        tb_cli_error(cmd, "--platform is required (a spec such as hosts=8,L=50us,o=10us or a "
                          "file)");
        return TB_EXIT_USAGE;
    }
    if (trace && tb_cli_writable(cmd, "--trace", trace))
        return TB_EXIT_USAGE;
    if (ranks < 1) {
        tb_cli_error(cmd, "-n P is required (the number of ranks)");
        return TB_EXIT_USAGE;
    }
    if (optind >= argc) {
        tb_cli_error(cmd, "no program given (tenbin emu --platform ... -n P -- PROGRAM ARGS)");
        return TB_EXIT_USAGE;
    }
    if (master >= ranks) {
        tb_cli_error(cmd, "--master %ld: there are only %ld ranks", master, ranks);
        return TB_EXIT_USAGE;
    }
    char lib[PATH_MAX + 64];
    tb_emu_opts o;
    if (tb_cli_emu_opts(cmd, &o, lib, sizeof lib, platform, seed, mpiexec, timeout, listen))
        return TB_EXIT_FAIL;
    o.ranks = (int)ranks;
    o.trace = trace != NULL;
    tb_emu_result *r = NULL;
    char err[1024];
    int rc = tb_emu_run(&o, argv + optind, &r, err, sizeof err);
    if (rc != TB_OK) {
        tb_cli_error(cmd, "%s", err);
        int usage = rc == TB_ERR_PARSE || rc == TB_ERR_RANGE || rc == TB_ERR_SIZE ||
                    (rc == TB_ERR_IO && strstr(err, "no such program"));
        return usage ? TB_EXIT_USAGE : TB_EXIT_FAIL;
    }
    if (trace) {
        int trc = tb_trace_write_pieces(r->trace, (size_t)r->ranks, trace);
        if (trc != TB_OK) {
            tb_cli_error(cmd, "--trace %s: cannot write: %s", trace, tb_strerror(trc));
            tb_emu_result_free(&r);
            return TB_EXIT_FAIL;
        }
    }
    fflush(stdout);
    if (json)
        rc = print_json(r, platform, (int)master);
    else
        print_text(r, platform, (uint64_t)seed, (int)master);
    /* Not silent, and in proportion.  A decision made without a rank the
     * real MPI alone holds (its send is eager in the model) may be wrong: a
     * warning, with what to do.  One made only without ranks held in a
     * rendezvous of the model to the deciding rank is what the model
     * implies (they cannot act before that rank takes their message), the
     * documented limit of receives posted ahead aside: a count in the
     * summary and the JSON, not a warning. */
    uint64_t real = r->unchecked - r->unchecked_rendezvous;
    if (real > 0)
        fprintf(stderr,
                "tenbin emu: warning: %" PRIu64 " of %" PRIu64 " wildcard receives were decided "
                "while a rank was held in a real send to the receiver that the model sends "
                "eagerly, so a message it would have relayed through a third rank could not be "
                "ruled out; sends above TENBIN_EMU_COPY_MIN bytes (default %s) are not held: "
                "lower it below the program's messages (docs/emulator.md, Limits)\n",
                real, r->decisions, tb_env_default("TENBIN_EMU_COPY_MIN"));

    tb_emu_result_free(&r);
    return rc == TB_OK ? TB_EXIT_OK : TB_EXIT_FAIL;
}
