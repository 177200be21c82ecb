/*
 * cmd_sim.c - `tenbin sim mw`: a bag of synthetic tasks on a simulated
 * platform, with the same master-worker policies as real runs.  Runs in one
 * process; no mpiexec.
 */
#include "tenbin/core.h"

#include <float.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "work_dist.h"
#include "tenbin/model.h"
#include "tenbin/mw.h"

static const char *const cmd = "sim mw";

typedef struct sim_opts {
    const char *platform;
    long ranks;
    long tasks;
    double work;
    long task_bytes, result_bytes;
    const char *chunk;
    const char *work_dist;
    const char *policy;
    long seed;
    const char *trace;
    int json;
    int fold; /* --results masters */
} sim_opts;

static void sim_usage(FILE *out)
{
    fprintf(out,
            "usage: tenbin sim mw --platform SPEC|FILE --ranks P --tasks N [options]\n\n"
            "Run a bag of N equal tasks on a simulated platform with the master-worker\n"
            "policies of real runs, and report the virtual makespan.\n\n"
            "  --platform SPEC|FILE   e.g. hosts=16,speed=1,L=50us,o=10us,g=0,G=0,S=65536,\n"
            "                         or a JSON platform file (docs/platform.md)\n"
            "  --ranks P              simulated ranks (default: every core of the platform)\n"
            "  --tasks N              tasks in the bag (default 1000)\n"
            "  --work SECONDS         work of one task at speed 1 (default 0)\n"
            "  --task-bytes B         size of a task message's payload (default 8)\n"
            "  --result-bytes B       size of a result's payload (default 8)\n"
            "  --policy P             single | multi:K | dynamic | dynamic:paper | dynamic:wait[:SHARE]\n"
            "                         (default dynamic)\n"
            "  --chunk N|gss|tss|fac|wf|awf|af|auto   tasks per message, or the rule that\n"
            "                         picks it (see tb_mw_set_chunking; default auto,\n"
            "                         or TENBIN_MW_CHUNK)\n"
            "  --work-dist D          how task times vary around --work: const (default),\n"
            "                         exp (exponential, mean --work), uniform:A-B (--work\n"
            "                         times a factor drawn in [A, B]), trace:FILE (seconds\n"
            "                         at speed 1, one per line, task i takes line i mod n;\n"
            "                         blank lines and lines starting with # are skipped)\n"
            "  --results root|masters where results are consumed: every result travels\n"
            "                         to rank 0 (root, the default), or each master folds\n"
            "                         its own (a count and a sum of task ids) and the sums\n"
            "                         meet on rank 0 along a tree at the end (tb_mw_set_reduce)\n"
            "  --seed S               seed of the platform's random parts (default 1)\n"
            "  --trace FILE.json      Chrome trace of the run, in virtual time\n"
            "  --json                 the summary as one JSON object\n"
            "  -h, --help             this text\n");
}

static int parse_sim_opts(int argc, char **argv, sim_opts *o)
{
    static const struct option opts[] = {
        {"platform", required_argument, NULL, 'P'}, {"ranks", required_argument, NULL, 'n'},
        {"tasks", required_argument, NULL, 'N'},    {"work", required_argument, NULL, 'w'},
        {"task-bytes", required_argument, NULL, 'T'},
        {"result-bytes", required_argument, NULL, 'R'},
        {"policy", required_argument, NULL, 'p'},   {"chunk", required_argument, NULL, 'c'},
        {"seed", required_argument, NULL, 's'},     {"trace", required_argument, NULL, 't'},
        {"work-dist", required_argument, NULL, 'd'}, {"results", required_argument, NULL, 'r'},
        {"json", no_argument, NULL, 'j'},           {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'P': o->platform = optarg; break;
        case 'n': bad = tb_cli_long(cmd, "--ranks", optarg, 1, 1 << 24, &o->ranks); break;
        case 'N': bad = tb_cli_long(cmd, "--tasks", optarg, 0, 1L << 40, &o->tasks); break;
        case 'w':
            bad = tb_cli_double(cmd, "--work", optarg, 0, DBL_MAX, 0, "seconds >= 0", &o->work);
            break;
        case 'T': bad = tb_cli_long(cmd, "--task-bytes", optarg, 0, 1L << 30, &o->task_bytes); break;
        case 'R':
            bad = tb_cli_long(cmd, "--result-bytes", optarg, 0, 1L << 30, &o->result_bytes);
            break;
        case 'p': o->policy = optarg; break;
        case 'c': o->chunk = optarg; break;
        case 'd': o->work_dist = optarg; break;
        case 'r':
            if (strcmp(optarg, "root") == 0 || strcmp(optarg, "masters") == 0) {
                o->fold = optarg[0] == 'm';
            } else {
                tb_cli_error(cmd, "--results: expected root or masters, got '%s'", optarg);
                bad = 1;
            }
            break;
        case 's': bad = tb_cli_long(cmd, "--seed", optarg, 0, 1L << 62, &o->seed); break;
        case 't': o->trace = optarg; break;
        case 'j': o->json = 1; break;
        case 'h': sim_usage(stdout); return TB_EXIT_OK;
        default: /* ':' or '?' */
            return tb_cli_bad_option(cmd, "tenbin sim mw --help", c, argv);
        }
        if (bad)
            return TB_EXIT_USAGE;
    }
    if (optind < argc) {
        tb_cli_error(cmd, "unexpected argument '%s'", argv[optind]);
        return TB_EXIT_USAGE;
    }
    if (!o->platform) {
        tb_cli_error(cmd, "--platform is required (a spec such as hosts=16,L=50us,o=10us or a file)");
        return TB_EXIT_USAGE;
    }
    if (o->trace && tb_cli_writable(cmd, "--trace", o->trace))
        return TB_EXIT_USAGE;
    return -1;
}

typedef struct synth {
    const sim_opts *o;
    tb_work_dist dist; /* --work-dist */
} synth;

static int synth_gen(void *ctx, uint64_t id, tb_buf *t)
{
    const synth *s = ctx;
    (void)id;
    TB_CHECK(tb_buf_reserve(t, (size_t)s->o->task_bytes));
    memset(t->data + t->len, 0, (size_t)s->o->task_bytes);
    t->len += (size_t)s->o->task_bytes;
    return TB_OK;
}

static int synth_work(void *ctx, uint64_t id, const void *task, size_t len, tb_buf *out)
{
    const synth *s = ctx;
    (void)id;
    (void)task;
    (void)len;
    TB_CHECK(tb_buf_reserve(out, (size_t)s->o->result_bytes));
    memset(out->data + out->len, 0, (size_t)s->o->result_bytes);
    out->len += (size_t)s->o->result_bytes;
    return TB_OK;
}

static double synth_cost(void *ctx, uint64_t id, const void *task, size_t len,
                         const void *res, size_t rlen)
{
    const synth *s = ctx;
    (void)task;
    (void)len;
    (void)res;
    (void)rlen;
    return tb_work_dist_time(&s->dist, id);
}

/* --results masters: a partial is the count of results and the sum of their
 * task ids (two u64), so the reduced value can be checked exactly. */
static int synth_partial(const tb_buf *p, uint64_t v[2])
{
    v[0] = v[1] = 0;
    if (p->len == 0)
        return TB_OK;
    tb_buf in;
    tb_buf_view(&in, p->data, p->len);
    TB_CHECK(tb_buf_unpack_u64(&in, &v[0]));
    return tb_buf_unpack_u64(&in, &v[1]);
}

static int synth_store(tb_buf *p, const uint64_t v[2])
{
    tb_buf_clear(p);
    TB_CHECK(tb_buf_pack_u64(p, v[0]));
    return tb_buf_pack_u64(p, v[1]);
}

static int synth_fold(void *ctx, tb_buf *partial, uint64_t id, const void *res, size_t len)
{
    (void)ctx;
    (void)res;
    (void)len;
    uint64_t v[2];
    TB_CHECK(synth_partial(partial, v));
    v[0]++;
    v[1] += id;
    return synth_store(partial, v);
}

static int synth_combine(void *ctx, tb_buf *partial, const void *other, size_t len)
{
    (void)ctx;
    uint64_t v[2], w[2];
    tb_buf ob;
    tb_buf_view(&ob, other, len);
    TB_CHECK(synth_partial(partial, v));
    TB_CHECK(synth_partial(&ob, w));
    v[0] += w[0];
    v[1] += w[1];
    return synth_store(partial, v);
}

/* Open the platform named by --platform, or print why not. */
/* Whether a one-line spec sets `key` (exactly, before its '='). */
static int spec_has(const char *spec, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = spec; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, key, n) == 0 && p[n] == '=')
            return 1;
    return 0;
}

/* A spec that leaves L, o or G unset gets 0 for them: say so once, after a
 * run that went well, so that a free network is a choice and not a
 * surprise. */
static void note_free_network(const char *cmdname, const char *arg)
{
    struct stat st;
    if (stat(arg, &st) == 0 || spec_has(arg, "netgauge"))
        return; /* a file: its network is written out; Netgauge's tables set all */
    /* a workflow's transfer costs L + bytes x G: o plays no part there */
    int L = spec_has(arg, "L"), G = spec_has(arg, "G"),
        o = strncmp(cmdname, "flow", 4) == 0 || spec_has(arg, "o") || spec_has(arg, "os") ||
            spec_has(arg, "or");
    if (L && o && G)
        return;
    char unset[16] = "";
    snprintf(unset, sizeof unset, "%s%s%s%s%s", L ? "" : "L", !L && (!o || !G) ? ", " : "",
             o ? "" : "o", !o && !G ? ", " : "", G ? "" : "G");
    tb_cli_note("tenbin %s: note: the platform leaves %s unset, so %s 0: %s (set %s, "
                        "e.g. L=50us,%sG=8ns)\n",
                cmdname, unset, L + o + G == 2 ? "it is" : "they are",
                L + o + G == 0 ? "messages cost nothing" : "that part of a message costs nothing",
                L + o + G == 2 ? "it" : "them", strncmp(cmdname, "flow", 4) ? "o=10us," : "");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void tb_cli_print_hosts(const tb_platform *p, int ranks, FILE *out)
{
    long last = ranks > 0 ? tb_platform_host_of(p, ranks - 1) : -1;
    size_t used = last >= 0 ? (size_t)last + 1 : p->nhosts, varying = 0;
    double *sp = malloc((used ? used : 1) * sizeof *sp);
    if (!sp)
        return;
    for (size_t h = 0; h < used; h++) {
        sp[h] = p->hosts[h].speed;
        varying += p->hosts[h].kind != TB_SPEED_CONSTANT;
    }
    qsort(sp, used, sizeof *sp, cmp_double);
    fprintf(out, "  hosts             %zu of %zu used; speed", used, p->nhosts);
    if (used && sp[0] == sp[used - 1])
        fprintf(out, " %.3g on every one", sp[0]);
    else if (used)
        fprintf(out, " min %.3g, median %.3g, max %.3g", sp[0], sp[used / 2], sp[used - 1]);
    if (varying)
        fprintf(out, " (base speeds: %zu vary over time)", varying);
    fputc('\n', out);
    free(sp);
}

int tb_cli_platform(const char *cmdname, const char *opt, const char *arg, uint64_t seed,
                    tb_platform **out)
{
    char err[512];
    int rc = tb_platform_open(arg, seed, out, err, sizeof err);
    if (rc != TB_OK) {
        tb_cli_error(cmdname, "%s: %s", opt, err);
        return -1;
    }
    note_free_network(cmdname, arg);
    return 0;
}

static int run_sim_mw(int argc, char **argv)
{
    sim_opts o = {NULL, 0, 1000, 0.0, 8, 8, NULL, NULL, "dynamic", 1, NULL, 0, 0};
    int st = parse_sim_opts(argc, argv, &o);
    if (st >= 0)
        return st;
    synth s = {&o, {TB_WORK_CONST, o.work, 0, 0, (uint64_t)o.seed, NULL, 0}};
    char err[512];
    if (tb_work_dist_parse(o.work_dist, &s.dist, err, sizeof err) != TB_OK) {
        tb_cli_error(cmd, "--work-dist: %s", err);
        return TB_EXIT_USAGE;
    }
    tb_platform *plat = NULL;
    if (tb_cli_platform(cmd, "--platform", o.platform, (uint64_t)o.seed, &plat)) {
        tb_work_dist_free(&s.dist);
        return TB_EXIT_USAGE;
    }
    size_t cores = tb_platform_cores(plat);
    if (o.ranks == 0 && cores > (size_t)1 << 24) {
        tb_cli_error(cmd, "the platform has %zu cores, more than the 16777216 ranks a run may "
                          "have: give --ranks", cores);
        tb_platform_destroy(&plat);
        tb_work_dist_free(&s.dist);
        return TB_EXIT_USAGE;
    }
    if (o.ranks == 0)
        o.ranks = (long)cores;
    if ((size_t)o.ranks > cores) {
        tb_cli_error(cmd, "--ranks %ld does not fit the platform: it has %zu cores", o.ranks,
                     cores);
        tb_platform_destroy(&plat);
        tb_work_dist_free(&s.dist);
        return TB_EXIT_USAGE;
    }
    tb_mw *mw = NULL;
    int rc = tb_mw_create_sim(&mw, plat, (int)o.ranks);
    int hush = tb_cli_hush();
    if (rc == TB_OK)
        rc = tb_mw_set_policy(mw, o.policy);
    int crc = rc == TB_OK && o.chunk ? tb_mw_set_chunking(mw, o.chunk) : TB_OK;
    tb_cli_unhush(hush);
    if (rc != TB_OK && mw) {
        if (rc == TB_ERR_SIZE)
            tb_cli_error(cmd, "--policy %s needs at least %.*s ranks, got --ranks %ld", o.policy,
                         (int)strcspn(o.policy + 6, ","), o.policy + 6, o.ranks);
        else
            tb_cli_error(cmd, "--policy: expected single, multi:K (K >= 1), dynamic, dynamic:paper or "
                     "dynamic:wait[:SHARE] (0 < SHARE <= 100), then optionally ,chunk=RULE, got '%s'",
                         o.policy);
        tb_mw_destroy(&mw);
        tb_platform_destroy(&plat);
        tb_work_dist_free(&s.dist);
        return TB_EXIT_USAGE;
    }
    if (crc != TB_OK) {
        tb_cli_error(cmd, "--chunk: expected a count >= 1 or gss, tss, fac, wf, awf, af or auto, "
                          "got '%s'", o.chunk);
        tb_mw_destroy(&mw);
        tb_platform_destroy(&plat);
        tb_work_dist_free(&s.dist);
        return TB_EXIT_USAGE;
    }
    if (rc == TB_OK) {
        tb_mw_set_worker(mw, synth_work, &s);
        tb_mw_set_generator(mw, (uint64_t)o.tasks, synth_gen, &s);
        tb_mw_set_cost(mw, synth_cost, &s);
        if (o.fold)
            tb_mw_set_reduce(mw, synth_fold, synth_combine, &s);
        if (o.trace)
            rc = tb_mw_set_trace_file(mw, o.trace);
    }
    if (rc == TB_OK)
        rc = tb_mw_run(mw);
    int exit_code = TB_EXIT_OK;
    if (rc != TB_OK) {
        /* The simulator has logged the cause on one line; add one only when
         * it had nothing to say (an allocation failure). */
        if (rc == TB_ERR_NOMEM)
            tb_cli_error(cmd, "simulation failed: %s", tb_strerror(rc));
        exit_code = TB_EXIT_FAIL;
    } else {
        tb_mw_summary sum;
        tb_mw_get_summary(mw, &sum);
        uint64_t red[2] = {0, 0};
        if (o.fold) {
            const void *pd;
            size_t pl;
            tb_buf pb;
            tb_mw_get_partial(mw, &pd, &pl);
            tb_buf_view(&pb, pd, pl);
            synth_partial(&pb, red);
        }
        if (o.json) {
            /* the summary, after what only the command knows */
            tb_buf x = TB_BUF_INIT, j = TB_BUF_INIT;
            int rc = tb_buf_printf(&x, "{\"command\": \"sim mw\", \"platform\": ");
            rc |= tb_buf_json_string(&x, o.platform);
            rc |= tb_buf_printf(&x, ", \"seed\": %ld, \"work_s\": %.9g, \"work_dist\": \"%s\"",
                                o.seed, o.work, tb_work_kind_name[s.dist.kind]);
            if (o.fold)
                rc |= tb_buf_printf(&x, ", \"reduced\": {\"count\": %" PRIu64
                                        ", \"id_sum\": %" PRIu64 "}",
                                    red[0], red[1]);
            rc |= tb_buf_printf(&x, "}") | tb_buf_append(&x, "", 1); /* a C string */
            if (!rc)
                rc = tb_mw_summary_json(&sum, (const char *)x.data, &j);
            tb_cli_json_line(cmd, rc, &j);
            tb_buf_free(&x);
            tb_buf_free(&j);
        } else {
            tb_mw_summary_print(&sum, stdout);
            tb_cli_print_hosts(plat, sum.ranks, stdout);
            if (o.fold)
                printf("  reduced on rank 0 %" PRIu64 " results, task ids summing to %" PRIu64 "\n",
                       red[0], red[1]);
        }
    }
    tb_mw_destroy(&mw);
    tb_platform_destroy(&plat);
    tb_work_dist_free(&s.dist);
    return exit_code;
}

int tb_cmd_sim(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        FILE *out = argc < 2 ? stderr : stdout;
        fprintf(out, "usage: tenbin sim mw [options]   (tenbin sim mw --help)\n");
        return argc < 2 ? TB_EXIT_USAGE : TB_EXIT_OK;
    }
    if (strcmp(argv[1], "mw") == 0)
        return run_sim_mw(argc - 1, argv + 1);
    tb_cli_error("sim", "unknown simulation '%s' (known: mw)", argv[1]);
    return TB_EXIT_USAGE;
}
