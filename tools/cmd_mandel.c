#define _POSIX_C_SOURCE 200809L
/*
 * cmd_mandel.c - `tenbin mandel`: render the Mandelbrot set as a bag of row
 * tasks on the master-worker runtime.  Run under mpiexec.
 *
 * A task is a block of --rows-per-task rows (8 bytes: first row, row count);
 * its result is the rows' values as little-endian uint32.  Rank 0 assembles
 * the image, so the image and checksum are the same for every policy and
 * every number of ranks.
 */
#include "tenbin/core.h"

#include <float.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../apps/mandel/mandel.h"
#include "cli.h"
#include "tenbin/mw.h"

typedef struct mandel_opts {
    tb_mandel m;
    long rows_per_task;
    const char *policy;
    const char *out;
    const char *trace;
    int checksum, json, quiet;
    const char *sim;      /* platform of a simulated run */
    long sim_ranks;
    double iter_cost;     /* seconds per iteration at speed 1, simulated */
    const char *chunk;    /* --chunk: a count or a chunk rule */
    double task_timeout;  /* --task-timeout: seconds, or < 0 for TENBIN_MW_TASK_TIMEOUT's */
    const struct tb_platform *plat; /* the simulated platform, for the summary */
    tb_cli_ckpt ck;       /* --checkpoint, --checkpoint-interval, --resume */
} mandel_opts;

typedef struct mandel_app {
    const mandel_opts *o;
    uint32_t *img;        /* rank 0 */
    uint64_t ntasks;
} mandel_app;

static const char *const cmd = "mandel";

static void mandel_usage(FILE *out)
{
    fprintf(out,
            "usage: mpiexec -n P tenbin mandel [options]\n\n"
            "Render the Mandelbrot set as a bag of row tasks on the master-worker runtime.\n\n"
            "  --width N              image width in pixels (default 1024)\n"
            "  --height N             image height in pixels (default 1024)\n"
            "  --max-iter N           iterations before a point counts as inside (default 1000)\n"
            "  --region XMIN,XMAX,YMIN,YMAX   the rectangle drawn (default -2,1,-1.5,1.5)\n"
            "  --rows-per-task N      rows in one task (default 1)\n"
            "  --chunk N|gss|tss|fac|wf|awf|af|auto   tasks per message, or the rule that\n"
            "                         picks it from the measured task times (default auto,\n"
            "                         or TENBIN_MW_CHUNK)\n"
            "  --policy P             single | multi:K | dynamic | dynamic:paper | dynamic:wait[:SHARE]\n"
            "                         (default dynamic, or TENBIN_MW_POLICY)\n"
            "  --out FILE.png|FILE.pgm    write the image (PGM holds the raw values)\n"
            "  --trace FILE.json      write a Chrome trace (open it in ui.perfetto.dev)\n"
            "  --checkpoint FILE      keep every row delivered in FILE (a journal, on the disk\n"
            "                         at most every --checkpoint-interval seconds, default 10,\n"
            "                         and when the run is interrupted)\n"
            "  --checkpoint-interval S  seconds between the checkpoint's writes\n"
            "  --resume FILE          take the rows FILE holds and compute only the others (on\n"
            "                         any number of ranks): the same image and checksum\n"
            "  --task-timeout S       a task running longer than S seconds ends the job, with a\n"
            "                         line naming it (default 0: no limit, or TENBIN_MW_TASK_TIMEOUT)\n"
            "  --checksum             print the sum of all pixel values\n"
            "  --json                 print the run summary as one JSON object on stdout\n"
            "  -q, --quiet            no progress lines\n"
            "  --sim SPEC|FILE        simulate the run on a modelled platform instead (one\n"
            "                         process, no mpiexec): same image, virtual time\n"
            "  --ranks P              simulated ranks (default: the platform's cores)\n"
            "  --iter-cost SECONDS    simulated cost of one iteration at speed 1 (default 1e-8)\n"
            "  -h, --help             this text\n\n"
            "Exit status: 0 ok, 1 run failed, 2 bad usage.\n");
}

static int parse_region(const char *s, tb_mandel *m)
{
    double v[4];
    char buf[256];
    if (strlen(s) >= sizeof buf)
        return -1;
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL, *tok = strtok_r(buf, ",", &save);
    int n = 0;
    for (; tok && n < 4; tok = strtok_r(NULL, ",", &save))
        if (tb_parse_double(tok, &v[n++]) != TB_OK)
            return -1;
    if (n != 4 || tok != NULL || !(v[0] < v[1]) || !(v[2] < v[3]))
        return -1;
    m->xmin = v[0];
    m->xmax = v[1];
    m->ymin = v[2];
    m->ymax = v[3];
    return 0;
}

/* Returns -1 to continue, or an exit status. */
static int parse_opts(int argc, char **argv, mandel_opts *o)
{
    static const struct option opts[] = {
        {"width", required_argument, NULL, 'W'},   {"height", required_argument, NULL, 'H'},
        {"max-iter", required_argument, NULL, 'i'}, {"region", required_argument, NULL, 'r'},
        {"rows-per-task", required_argument, NULL, 'R'},
        {"policy", required_argument, NULL, 'p'},  {"out", required_argument, NULL, 'o'},
        {"trace", required_argument, NULL, 't'},   {"checksum", no_argument, NULL, 'c'},
        {"json", no_argument, NULL, 'j'},          {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},          {"sim", required_argument, NULL, 'S'},
        {"ranks", required_argument, NULL, 'n'},   {"iter-cost", required_argument, NULL, 'I'},
        {"chunk", required_argument, NULL, 'k'},
        {"task-timeout", required_argument, NULL, 'T'},
        TB_CLI_CKPT_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    long v;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
        switch (c) {
        case 'W':
            if (tb_cli_long(cmd, "--width", optarg, 1, 1 << 16, &v))
                return TB_EXIT_USAGE;
            o->m.width = (int)v;
            break;
        case 'H':
            if (tb_cli_long(cmd, "--height", optarg, 1, 1 << 16, &v))
                return TB_EXIT_USAGE;
            o->m.height = (int)v;
            break;
        case 'i':
            if (tb_cli_long(cmd, "--max-iter", optarg, 1, 1000000000L, &v))
                return TB_EXIT_USAGE;
            o->m.max_iter = (uint32_t)v;
            break;
        case 'r':
            if (parse_region(optarg, &o->m)) {
                tb_cli_error(cmd, "--region: expected XMIN,XMAX,YMIN,YMAX with XMIN<XMAX and "
                                  "YMIN<YMAX, got '%s'", optarg);
                return TB_EXIT_USAGE;
            }
            break;
        case 'R':
            if (tb_cli_long(cmd, "--rows-per-task", optarg, 1, 1 << 16, &o->rows_per_task))
                return TB_EXIT_USAGE;
            break;
        case 'p':
            o->policy = optarg;
            break;
        case 'k':
            o->chunk = optarg;
            break;
        case 'o':
            if (!tb_mandel_format_ok(optarg)) {
                tb_cli_error(cmd, "--out: the file name must end in .png or .pgm, got '%s'",
                             optarg);
                return TB_EXIT_USAGE;
            }
            o->out = optarg;
            break;
        case 't':
            o->trace = optarg;
            break;
        case 'c':
            o->checksum = 1;
            break;
        case 'j':
            o->json = 1;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'S':
            o->sim = optarg;
            break;
        case 'n':
            if (tb_cli_long(cmd, "--ranks", optarg, 1, 1 << 24, &o->sim_ranks))
                return TB_EXIT_USAGE;
            break;
        case 'T':
            if (tb_cli_double(cmd, "--task-timeout", optarg, 0, 1e9, 0, "seconds from 0 to 1e9",
                              &o->task_timeout))
                return TB_EXIT_USAGE;
            break;
        case 'I':
            if (tb_cli_double(cmd, "--iter-cost", optarg, 0, DBL_MAX, 0, "seconds >= 0",
                              &o->iter_cost))
                return TB_EXIT_USAGE;
            break;
        TB_CLI_CKPT_CASES:
            if (tb_cli_ckpt_option(cmd, c, optarg, &o->ck))
                return TB_EXIT_USAGE;
            break;
        case 'h':
            if (tb_cli_rank() == 0)
                mandel_usage(stdout);
            return TB_EXIT_OK;
        default: /* ':' or '?' */
            return tb_cli_bad_option(cmd, "tenbin mandel --help", c, argv);
        }
    }
    if (optind < argc) {
        tb_cli_error(cmd, "unexpected argument '%s'", argv[optind]);
        return TB_EXIT_USAGE;
    }
    if (tb_cli_ckpt_check(cmd, &o->ck, o->sim != NULL, NULL))
        return TB_EXIT_USAGE;
    /* A task's result must fit one message (1 GiB). */
    if ((uint64_t)o->rows_per_task * (uint64_t)o->m.width * 4 > ((uint64_t)1 << 30) - 64) {
        tb_cli_error(cmd, "--rows-per-task %ld: a task's result of %ld rows of %d pixels passes "
                          "the 1 GiB message limit", o->rows_per_task, o->rows_per_task,
                     o->m.width);
        return TB_EXIT_USAGE;
    }
    if (!o->sim && (o->sim_ranks || o->iter_cost >= 0)) {
        tb_cli_error(cmd, "--ranks and --iter-cost go with --sim");
        return TB_EXIT_USAGE;
    }
    /* outputs are checked before anything is computed */
    if ((o->out && tb_cli_writable(cmd, "--out", o->out)) ||
        (o->trace && tb_cli_writable(cmd, "--trace", o->trace)))
        return TB_EXIT_USAGE;
    return -1;
}

/* Simulated cost of a task: its iterations (the sum of its pixel values). */
static double mandel_cost(void *ctx, uint64_t id, const void *task, size_t len,
                          const void *result, size_t rlen)
{
    const mandel_app *app = ctx;
    tb_buf in;
    uint64_t iters = 0;
    uint32_t v;
    (void)id;
    (void)task;
    (void)len;
    tb_buf_view(&in, result, rlen);
    while (tb_buf_unpack_u32(&in, &v) == TB_OK)
        iters += v;
    return (double)iters * app->o->iter_cost;
}

static int mandel_gen(void *ctx, uint64_t id, tb_buf *task)
{
    const mandel_app *app = ctx;
    uint64_t y0 = id * (uint64_t)app->o->rows_per_task;
    uint64_t n = (uint64_t)app->o->rows_per_task;
    if (y0 + n > (uint64_t)app->o->m.height)
        n = (uint64_t)app->o->m.height - y0;
    TB_CHECK(tb_buf_pack_u32(task, (uint32_t)y0));
    return tb_buf_pack_u32(task, (uint32_t)n);
}

static int mandel_work(void *ctx, uint64_t id, const void *data, size_t len, tb_buf *result)
{
    const mandel_app *app = ctx;
    const tb_mandel *m = &app->o->m;
    tb_buf in;
    uint32_t y0, n;
    (void)id;
    tb_buf_view(&in, data, len);
    TB_CHECK(tb_buf_unpack_u32(&in, &y0));
    TB_CHECK(tb_buf_unpack_u32(&in, &n));
    if ((uint64_t)y0 + n > (uint64_t)m->height)
        return TB_ERR_RANGE;
    uint32_t *row = malloc((size_t)m->width * sizeof *row);
    if (!row)
        return TB_ERR_NOMEM;
    int rc = tb_buf_reserve(result, (size_t)n * (size_t)m->width * 4);
    for (uint32_t r = 0; r < n && rc == TB_OK; r++) {
        tb_mandel_row(m, (int)(y0 + r), row);
        for (int x = 0; x < m->width && rc == TB_OK; x++)
            rc = tb_buf_pack_u32(result, row[x]);
    }
    free(row);
    return rc;
}

static int mandel_result(void *ctx, uint64_t id, const void *data, size_t len)
{
    mandel_app *app = ctx;
    const tb_mandel *m = &app->o->m;
    uint64_t y0 = id * (uint64_t)app->o->rows_per_task;
    if (id >= app->ntasks || y0 >= (uint64_t)m->height)
        return TB_ERR_RANGE;
    size_t npix = len / 4;
    if (len % 4 != 0 || npix % (size_t)m->width != 0 ||
        y0 + npix / (size_t)m->width > (uint64_t)m->height)
        return TB_ERR_PARSE;
    tb_buf in;
    tb_buf_view(&in, data, len);
    uint32_t *dst = app->img + y0 * (uint64_t)m->width;
    for (size_t i = 0; i < npix; i++)
        TB_CHECK(tb_buf_unpack_u32(&in, &dst[i]));
    return TB_OK;
}

/* tb_mw_set_policy, its refusal reported by policy_error instead */
static int set_policy(tb_mw *mw, const char *policy)
{
    int hush = tb_cli_hush();
    int rc = tb_mw_set_policy(mw, policy);
    tb_cli_unhush(hush);
    return rc;
}

static int policy_error(const char *policy, int rc, int ranks, int simulated)
{
    if (rc == TB_ERR_SIZE)
        tb_cli_error(cmd, "--policy %s needs at least %.*s ranks, but %s %d", policy,
                     (int)strcspn(policy + 6, ","), policy + 6,
                     simulated ? "the simulation has" : "mpiexec started", ranks);
    else
        tb_cli_error(cmd, "--policy: expected single, multi:K (K >= 1), dynamic, dynamic:paper or "
                     "dynamic:wait[:SHARE] (0 < SHARE <= 100), then optionally ,chunk=RULE, got '%s'",
                     policy);
    return TB_EXIT_USAGE;
}

static void print_results(const mandel_opts *o, const tb_mw_summary *s, uint64_t sum)
{
    if (o->json) {
        /* the summary, after what only the command knows */
        tb_buf x = TB_BUF_INIT, j = TB_BUF_INIT;
        int rc = tb_buf_printf(&x, "{\"command\": \"mandel\", \"width\": %d, \"height\": %d, "
                                   "\"max_iter\": %u, \"rows_per_task\": %ld",
                               o->m.width, o->m.height, o->m.max_iter, o->rows_per_task);
        if (o->checksum)
            rc |= tb_buf_printf(&x, ", \"checksum\": %" PRIu64, sum);
        rc |= tb_buf_printf(&x, "}") | tb_buf_append(&x, "", 1); /* a C string */
        if (!rc)
            rc = tb_mw_summary_json(s, (const char *)x.data, &j);
        tb_cli_json_line(cmd, rc, &j);
        tb_buf_free(&x);
        tb_buf_free(&j);
    } else {
        tb_mw_summary_print(s, stdout);
        if (o->plat)
            tb_cli_print_hosts(o->plat, s->ranks, stdout);
        if (o->checksum)
            printf("checksum: %" PRIu64 "\n", sum);
    }
    fflush(stdout);
}

/* Configure the bag, run it, write the image and print the results. */
static int run_mandel(tb_mw *mw, mandel_opts *o, int rank)
{
    mandel_app app = {o, NULL, 0};
    if (o->task_timeout >= 0 && tb_mw_set_task_timeout(mw, o->task_timeout) != TB_OK)
        return TB_EXIT_USAGE; /* checked when parsed */
    int hush = tb_cli_hush();
    int crc = o->chunk ? tb_mw_set_chunking(mw, o->chunk) : TB_OK;
    tb_cli_unhush(hush);
    if (crc != TB_OK) {
        tb_cli_error(cmd, "--chunk: expected a count >= 1 or gss, tss, fac, wf, awf, af or auto, "
                          "got '%s'", o->chunk);
        return TB_EXIT_USAGE;
    }
    app.ntasks = ((uint64_t)o->m.height + (uint64_t)o->rows_per_task - 1) /
                 (uint64_t)o->rows_per_task;
    int ok = 1;
    if (rank == 0) {
        app.img = calloc((size_t)o->m.width * (size_t)o->m.height, sizeof *app.img);
        ok = app.img != NULL;
    }
    if (!o->sim) /* every rank must agree before the collective run */
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) {
        tb_cli_error(cmd, "cannot allocate a %dx%d image", o->m.width, o->m.height);
        return TB_EXIT_FAIL;
    }
    tb_mw_set_worker(mw, mandel_work, &app);
    tb_mw_set_result(mw, mandel_result, &app);
    tb_mw_set_generator(mw, app.ntasks, mandel_gen, &app);
    tb_mw_set_progress(mw, o->quiet ? NULL : stderr);
    if (o->sim)
        tb_mw_set_cost(mw, mandel_cost, &app);
    int rc = o->trace ? tb_mw_set_trace_file(mw, o->trace) : TB_OK;
    if (rc == TB_OK && (o->ck.path || o->ck.resume)) {
        /* what the rows are: a checkpoint of another picture is refused */
        char what[256];
        snprintf(what, sizeof what,
                 "mandel %dx%d max-iter %u region %.17g,%.17g,%.17g,%.17g rows-per-task %ld",
                 o->m.width, o->m.height, (unsigned)o->m.max_iter, o->m.xmin, o->m.xmax,
                 o->m.ymin, o->m.ymax, o->rows_per_task);
        rc = tb_mw_set_identity(mw, what);
        if (rc == TB_OK && o->ck.path)
            rc = tb_mw_set_checkpoint(mw, o->ck.path, o->ck.interval);
        if (rc == TB_OK && o->ck.resume)
            rc = tb_mw_set_resume(mw, o->ck.resume);
    }
    if (rc == TB_OK)
        rc = tb_mw_run(mw);
    tb_mw_summary s;
    tb_mw_get_summary(mw, &s);
    int exit_code = rc == TB_OK ? TB_EXIT_OK : TB_EXIT_FAIL;
    if (rank == 0) {
        uint64_t sum = tb_mandel_checksum(app.img, (size_t)o->m.width * (size_t)o->m.height);
        if (s.failed) {
            tb_cli_error(cmd, "run failed: task %" PRIu64 " on rank %d: %s", s.failed_task,
                         s.failed_rank, tb_strerror(s.failed_code));
        } else if (rc != TB_OK && !o->trace) {
            if (!tb_mw_error(mw)[0]) /* else the library has said what and where */
                tb_cli_error(cmd, "run failed: %s", tb_strerror(rc));
        } else if (rc == TB_OK || o->trace) {
            /* A trace that could not be written has been reported; the image
             * and the summary are still good. */
            if (o->out && tb_mandel_write(o->out, &o->m, app.img) != TB_OK)
                exit_code = TB_EXIT_FAIL;
            print_results(o, &s, sum);
        }
    }
    free(app.img);
    return exit_code;
}

static int mandel_sim(mandel_opts *o, int size)
{
    if (size != 1) {
        tb_cli_error(cmd, "--sim runs every simulated rank in one process: start it without "
                          "mpiexec (or with -n 1), not on %d ranks", size);
        return TB_EXIT_USAGE;
    }
    if (o->iter_cost < 0)
        o->iter_cost = 1e-8;
    tb_platform *plat = NULL;
    if (tb_cli_platform(cmd, "--sim", o->sim, 1, &plat))
        return TB_EXIT_USAGE;
    size_t cores = tb_platform_cores(plat);
    if (!o->sim_ranks && cores > (size_t)1 << 24) {
        tb_cli_error(cmd, "the platform has %zu cores, more than the 16777216 ranks a run may "
                          "have: give --ranks", cores);
        tb_platform_destroy(&plat);
        return TB_EXIT_USAGE;
    }
    long ranks = o->sim_ranks ? o->sim_ranks : (long)cores;
    tb_mw *mw = NULL;
    int rc = (size_t)ranks > cores ? TB_ERR_SIZE : tb_mw_create_sim(&mw, plat, (int)ranks);
    if (rc == TB_ERR_SIZE) {
        tb_cli_error(cmd, "--ranks %ld does not fit the platform: it has %zu cores", ranks, cores);
        tb_platform_destroy(&plat);
        return TB_EXIT_USAGE;
    }
    int exit_code = TB_EXIT_FAIL;
    if (rc != TB_OK)
        tb_cli_error(cmd, "cannot create the simulation: %s", tb_strerror(rc));
    else if (o->policy && (rc = set_policy(mw, o->policy)) != TB_OK)
        exit_code = policy_error(o->policy, rc, (int)ranks, 1);
    else {
        o->plat = plat;
        exit_code = run_mandel(mw, o, 0);
        o->plat = NULL;
    }
    tb_mw_destroy(&mw);
    tb_platform_destroy(&plat);
    return exit_code;
}

int tb_cmd_mandel(int argc, char **argv)
{
    mandel_opts o = {{1024, 1024, 1000, -2.0, 1.0, -1.5, 1.5}, 1, NULL, NULL, NULL, 0, 0, 0,
                     NULL, 0, -1.0, NULL, -1.0, NULL, {NULL, 10.0, NULL}};
    int quiet_env;
    tb_env_bool("TENBIN_QUIET", &quiet_env);
    tb_env_string("TENBIN_TRACE", &o.trace);
    o.quiet = quiet_env;
    int st = parse_opts(argc, argv, &o);
    if (st >= 0)
        return st;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (o.sim)
        return mandel_sim(&o, size);

    tb_mw *mw = NULL;
    int rc = tb_mw_create(&mw, MPI_COMM_WORLD);
    if (rc != TB_OK) {
        tb_cli_error(cmd, "cannot create the runtime: %s", tb_strerror(rc));
        return TB_EXIT_FAIL;
    }
    int exit_code;
    if (o.policy && (rc = set_policy(mw, o.policy)) != TB_OK)
        exit_code = policy_error(o.policy, rc, size, 0);
    else
        exit_code = run_mandel(mw, &o, rank);
    tb_mw_destroy(&mw);
    return exit_code;
}
