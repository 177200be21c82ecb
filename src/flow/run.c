/*
 * run.c - a workflow run for real on MPI ranks (tb_flow_run).
 *
 * One actor per rank on the MPI transport.  Every rank is an executor: it
 * runs the tasks it is told to as child processes (posix_spawn of the
 * task's command, or a fork that runs the synthetic CPU loop), keeps the
 * files its tasks wrote in a store directory, and sends files to other
 * ranks when told.  Rank 0 is also the coordinator: it drives the engine
 * (engine.c, the same decisions tb_flow_simulate makes) with what really
 * happens - task ends with their measured speeds, file arrivals - and
 * turns the engine's actions into messages:
 *
 *     engine start(t, h)      -> any input file missing on h is pushed to
 *                                it, then RUN(t) to h's rank
 *     engine send(edge, a, b) -> PUSH(file, b) to a's rank for each file
 *                                of the edge b lacks; arrival = the HAVEs
 *
 *   coordinator -> executor   RUN, PUSH, KILL, STOP
 *   executor -> executor      FBEGIN, FDATA..., FEND (name, bytes, hash); FACK
 *                             back for each FDATA (at most 4 MiB unacknowledged)
 *   executor -> coordinator   DONE (exit, signal, time, stderr's tail),
 *                             HAVE (a file arrived intact)
 *
 * Rank 0 sends to itself through MPI like to any rank, so its executor is
 * the same code.  The run ends when every task is done, every gathered
 * output has arrived and no file is in flight: then STOP, and nothing is
 * left in flight when the ranks leave the transport.  After a failure the
 * coordinator starts nothing, kills what runs, waits for those ends and
 * transfers, then stops.  An error of the machinery itself (a file that
 * cannot be written, a damaged transfer) ends the job with one line from
 * the rank that saw it; tasks die with their rank (PR_SET_PDEATHSIG).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/proc.h"
#include "flow/engine.h"
#include "flow/flow_internal.h"
#include "flow/proto.h"
#include "transport/transport.h"

extern char **environ;


enum { CHUNK = 1 << 20, TAIL = 400, WINDOW = 3, SEND_AHEAD = 4 };
#define DT_FLOOR 0.005 /* seconds per task: below it, times do not tell speeds apart */
/* How long a rank waiting for messages sleeps at most: 0.25 ms while it
 * runs no task (a message waits that long at worst, at 4000 wake-ups a
 * second of a core that has nothing else to do), 1 ms while its task
 * shares the core (measured: 2 % more makespan at 0.25 ms on CPU-bound
 * tasks). */
#define SLEEP_IDLE 2.5e-4
#define SLEEP_BUSY 1e-3

/* How soon a rank with a running task looks at it again: 5 % of the time
 * it has run, between 0.1 and 5 ms (an end is seen within 5 % or 5 ms;
 * waitpid is cheap and the wait sleeps in between). */
static double poll_after(double elapsed)
{
    double d = 0.05 * elapsed;
    return d < 1e-4 ? 1e-4 : d > 5e-3 ? 5e-3 : d;
}

/* One attempt, as the log keeps it. */
typedef struct attempt {
    uint32_t task, attempt;
    int rank;
    double start, end;
    int exit_code, signo;
    int resumed;           /* done by an earlier run (--resume) */
    char *error;
} attempt;

/* A file this rank sends: at most SEND_AHEAD chunks not yet acknowledged
 * (FACK), so a file of any size costs the sender SEND_AHEAD MiB; one file
 * at a time to each rank, in the order they were asked for.  A stream
 * whose FEND is sent stays until its last FACK is in, so that no message
 * is left in flight when the ranks stop. */
typedef struct out_stream {
    int fd, dst;
    uint32_t file;
    uint64_t hash, total;
    int unacked, begun, ended;
} out_stream;

/* A file transfer a wait depends on: edge data bound for a rank. */
typedef struct edge_wait {
    uint32_t edge, host;
    int rank;
} edge_wait;

typedef struct runner {
    tb_actor a; /* first: the transport hands us this */
    const tb_flow *f;
    const tb_flow_run_opts *o;
    int rank, size;
    char root[PATH_MAX];   /* the run's directory */
    char store[PATH_MAX];  /* this rank's files */
    char tasks[PATH_MAX];  /* this rank's task directories */
    double rate0;          /* synthetic: loop iterations per second at rank 0 */
    double time_scale, size_scale;
    double mono0;          /* tb_wtime() at the run's start, for slowdowns */
    int err_rc;
    char err[512];

    /* executor */
    pid_t child;           /* 0: none */
    uint32_t ctask, cattempt;
    double cstart;
    int killing;
    double kill_at;
    int stopping;          /* STOP came while acknowledgements were due */
    out_stream *outs;      /* files being sent, in the order asked */
    size_t nouts, capouts;
    int *in_fds;           /* per sender rank: fd of the file it sends, -1 (a sender
                              sends one file at a time, in order) */
    uint32_t *in_files;
    uint64_t *in_hashes, *in_counts;

    /* coordinator (rank 0) */
    tb__flow_engine e;
    tb_flow_hosts H;
    int engine_ok;
    int *host_rank, *rank_host;
    char (*hostname)[64];
    uint8_t *have, *inflight;     /* nfiles x size */
    double *push_t0;              /* nfiles x size */
    long ninflight;
    uint8_t *is_input, *is_output; /* per file: no task writes it / no task reads it */
    long *pending_run;            /* per host: task waiting for input files, -1 */
    edge_wait *waits;
    size_t nwaits, capwaits;
    uint32_t *edge_src;           /* per edge: its source task */
    uint32_t *attempts;           /* per task */
    uint8_t *resumed;             /* per task: done by the run --resume names */
    double *win_w, *win_d;        /* per host: work and time of its last WINDOW tasks */
    size_t *win_i;
    double *xs, *ys;              /* transfers: bytes, seconds */
    size_t nxs, capxs, capys;
    attempt *log;
    size_t nlog, caplog;
    long gathers;                 /* outputs on their way to rank 0 */
    int aborting, stopped;
    double last_progress;
    tb_flow_run_result *res;
} runner;

/* ---- small helpers -------------------------------------------------------- */

static int rfail(runner *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int rfail(runner *r, int code, const char *fmt, ...)
{
    if (r->err_rc == TB_OK) {
        va_list ap;
        va_start(ap, fmt);
        r->err_rc = tb__verrf(r->err, sizeof r->err, code, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* snprintf that says whether it fit: 0, or -1 (out holds a cut string). */
static int strf(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int strf(char *out, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out, n, fmt, ap);
    va_end(ap);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* Deterministic content of a synthetic file: a stream seeded by its name. */
static void fill_content(const char *name, uint64_t off, unsigned char *buf, size_t n)
{
    uint64_t s = tb_fnv1a(TB_FNV1A_INIT, name, strlen(name));
    for (size_t i = 0; i < n; i++) {
        uint64_t x = (off + i) * 0x9E3779B97F4A7C15ULL ^ s;
        x ^= x >> 29;
        x *= 0xBF58476D1CE4E5B9ULL;
        buf[i] = (unsigned char)(x >> 56);
    }
}

static int mkdir_p(const char *path)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
        return -1;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(tmp, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

/* Remove a directory tree (no symlinks followed). */
static void rm_tree(const char *path)
{
    pid_t pid;
    char *argv[] = {"rm", "-rf", "--", (char *)path, NULL};
    if (posix_spawnp(&pid, "rm", NULL, NULL, argv, environ) == 0)
        waitpid(pid, NULL, 0);
}

static int write_synthetic(const char *path, const char *name, uint64_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0)
        return -1;
    unsigned char buf[65536];
    for (uint64_t off = 0; off < size;) {
        size_t n = size - off < sizeof buf ? (size_t)(size - off) : sizeof buf;
        fill_content(name, off, buf, n);
        if (write(fd, buf, n) != (ssize_t)n) {
            close(fd);
            return -1;
        }
        off += n;
    }
    return close(fd);
}

static uint64_t scaled_size(const runner *r, size_t file)
{
    double b = r->f->fsize[file] * r->size_scale;
    return b > 0 ? (uint64_t)llround(b) : 0;
}

/* ---- the synthetic task ---------------------------------------------------- */

static volatile uint64_t spin_sink;

/* n steps of a dependent chain the compiler cannot shorten. */
static uint64_t spin(uint64_t n, uint64_t x)
{
    for (uint64_t i = 0; i < n; i++)
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x;
}

/* Loop iterations per second on this rank: the best of 5 measurements of
 * about 10 ms each (a rank busy in MPI's start-up, or a core shared for a
 * moment, makes a measurement slow, never fast). */
static double calibrate(void)
{
    uint64_t n = 1 << 14, x = 1;
    double best = 0;
    for (int k = 0; k < 5;) {
        double t0 = tb_wtime();
        x = spin(n, x);
        double t = tb_wtime() - t0;
        if (t < 0.01) {
            n *= 2;
            continue;
        }
        if ((double)n / t > best)
            best = (double)n / t;
        k++;
    }
    spin_sink = x;
    return best;
}

/* What a task costs on this rank besides its work: a directory, a
 * process, its stdout and stderr (the median of 5 empty tasks).  The slow
 * metadata of some disks makes this several milliseconds. */
static double measure_overhead(const char *tasks)
{
    double t[5];
    for (int k = 0; k < 5; k++) {
        char dir[PATH_MAX], out[PATH_MAX + 16], err[PATH_MAX + 16];
        if (strf(dir, sizeof dir, "%s/.probe-%d", tasks, k))
            return 0.0;
        strf(out, sizeof out, "%s/stdout", dir);
        strf(err, sizeof err, "%s/stderr", dir);
        double t0 = tb_wtime();
        if (mkdir(dir, 0777) != 0 && errno != EEXIST)
            return 0.0;
        pid_t pid = fork();
        if (pid == 0) {
            int a = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666);
            int b = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0666);
            _exit(a < 0 || b < 0 || chdir(dir) != 0 ? 1 : 0);
        }
        if (pid < 0 || waitpid(pid, NULL, 0) != pid)
            return 0.0;
        t[k] = tb_wtime() - t0;
        unlink(out);
        unlink(err);
        rmdir(dir);
    }
    tb_stats st;
    return tb_stats_compute(t, 5, &st) == TB_OK ? st.median : 0.0;
}

/* In the child: read inputs, loop, write outputs; never returns. */
static void synthetic_child(runner *r, size_t t, uint64_t iters)
{
    const tb_flow *f = r->f;
    const uint32_t *files;
    size_t n = tb_flow_task_files(f, t, 0, &files);
    unsigned char buf[65536];
    for (size_t i = 0; i < n; i++) {
        int fd = open(f->fname[files[i]], O_RDONLY);
        if (fd < 0) {
            fprintf(stderr, "cannot open input '%s': %s\n", f->fname[files[i]], strerror(errno));
            _exit(2);
        }
        while (read(fd, buf, sizeof buf) > 0)
            ;
        close(fd);
    }
    int slow = r->o->slow_factor > 1 && r->o->slow_rank == r->rank;
    double slow_at = r->mono0 + r->o->slow_at;
    const uint64_t slice = 1 << 16;
    uint64_t x = t + 1;
    double done = 0;
    while (done < (double)iters) {
        x = spin(slice, x);
        done += slow && tb_wtime() >= slow_at ? (double)slice / r->o->slow_factor : (double)slice;
    }
    spin_sink = x;
    n = tb_flow_task_files(f, t, 1, &files);
    for (size_t i = 0; i < n; i++)
        if (write_synthetic(f->fname[files[i]], f->fname[files[i]],
                            scaled_size(r, files[i])) != 0) {
            fprintf(stderr, "cannot write output '%s': %s\n", f->fname[files[i]],
                    strerror(errno));
            _exit(2);
        }
    _exit(0);
}

/* ---- messages ----------------------------------------------------------------- */

static int send_msg(runner *r, int dst, int tag, tb_buf *b)
{
    return tb_tp_send(&r->a, dst, tag, b);
}

/* ---- executor ------------------------------------------------------------------ */

static void task_dir(const runner *r, size_t t, uint32_t att, char *out, size_t n)
{
    /* the id when it is a plain name, else the task's index */
    const char *id = r->f->id[t];
    if (strlen(id) <= 100 && !strchr(id, '/') && id[0] != '.')
        strf(out, n, "%s/%s.%u", r->tasks, id, att);
    else
        strf(out, n, "%s/task-%zu.%u", r->tasks, t, att);
}

/* The last line of stderr's tail (for the failure message). */
static void stderr_tail(const char *dir, char *out, size_t n)
{
    out[0] = 0;
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/stderr", dir);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    off_t end = lseek(fd, 0, SEEK_END);
    off_t from = end > TAIL ? end - TAIL : 0;
    char buf[TAIL + 1];
    ssize_t k = pread(fd, buf, TAIL, from);
    close(fd);
    if (k <= 0)
        return;
    buf[k] = 0;
    while (k > 0 && (buf[k - 1] == '\n' || buf[k - 1] == '\r' || buf[k - 1] == ' '))
        buf[--k] = 0;
    char *line = strrchr(buf, '\n');
    snprintf(out, n, "%s", line ? line + 1 : buf);
}

static int report_done(runner *r, int exit_code, int signo, double dur, const char *msg)
{
    tb_buf b;
    tb_buf_init(&b);
    int rc = tb_buf_pack_u32(&b, r->ctask);
    if (!rc)
        rc = tb_buf_pack_u32(&b, r->cattempt);
    if (!rc)
        rc = tb_buf_pack_i32(&b, exit_code);
    if (!rc)
        rc = tb_buf_pack_i32(&b, signo);
    if (!rc)
        rc = tb_buf_pack_f64(&b, dur);
    if (!rc)
        rc = tb_buf_pack_bytes(&b, msg, (uint32_t)strlen(msg));
    if (!rc)
        rc = send_msg(r, 0, T_DONE, &b);
    tb_buf_free(&b);
    return rc;
}

static int exec_run(runner *r, uint32_t t, uint32_t att, uint64_t iters)
{
    const tb_flow *f = r->f;
    char dir[PATH_MAX], path[PATH_MAX * 2], target[PATH_MAX * 2];
    if (t >= f->n || r->child)
        return rfail(r, TB_ERR_PROTOCOL, "rank %d: a task to run while one runs", r->rank);
    task_dir(r, t, att, dir, sizeof dir);
    r->ctask = t;
    r->cattempt = att;
    char why[PATH_MAX + 64];
    if (mkdir_p(dir) != 0) {
        snprintf(why, sizeof why, "%s: cannot create: %s", dir, strerror(errno));
        return report_done(r, -1, 0, 0.0, why);
    }
    const uint32_t *files;
    size_t n = tb_flow_task_files(f, t, 0, &files);
    for (size_t i = 0; i < n; i++) {
        snprintf(target, sizeof target, "%s/%s", r->store, f->fname[files[i]]);
        snprintf(path, sizeof path, "%s/%s", dir, f->fname[files[i]]);
        if (access(target, R_OK) != 0)
            return rfail(r, TB_ERR_STATE, "rank %d: input '%s' of task '%s' is not here",
                         r->rank, f->fname[files[i]], f->id[t]);
        if (symlink(target, path) != 0 && errno != EEXIST) {
            strf(why, sizeof why, "%s: cannot link: %s", path, strerror(errno));
            return report_done(r, -1, 0, 0.0, why);
        }
    }
    char out[PATH_MAX + 16], errp[PATH_MAX + 16];
    snprintf(out, sizeof out, "%s/stdout", dir);
    snprintf(errp, sizeof errp, "%s/stderr", dir);
    r->cstart = tb_wtime();
    r->killing = 0;
    const char *prog = tb_flow_task_program(f, t);
    size_t na = r->o->synthetic ? 0 : tb_flow_task_nargs(f, t);
    char **argv = calloc(na + 2, sizeof *argv);
    if (!argv)
        return TB_ERR_NOMEM;
    argv[0] = (char *)prog;
    for (size_t i = 0; i < na; i++)
        argv[i + 1] = (char *)tb_flow_task_arg(f, t, i);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        free(argv);
        return rfail(r, TB_ERR_IO, "rank %d: fork: %s", r->rank, strerror(errno));
    }
    if (pid == 0) {
        /* the task dies with its rank (a job killed by the launcher leaves
         * no task behind) */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(125);
        int in = open("/dev/null", O_RDONLY);
        int o1 = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        int o2 = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        /* a relative path names a program from where the run started (a
         * synthetic task may have no program at all) */
        char abs[PATH_MAX];
        if (prog && strchr(prog, '/') && prog[0] != '/' && realpath(prog, abs))
            argv[0] = abs;
        if (in < 0 || o1 < 0 || o2 < 0 || dup2(in, 0) < 0 || dup2(o1, 1) < 0 || dup2(o2, 2) < 0 ||
            chdir(dir) != 0)
            _exit(126);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        if (r->o->synthetic)
            synthetic_child(r, t, iters);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run '%s': %s\n", prog, strerror(errno));
        _exit(127);
    }
    free(argv);
    r->child = pid;
    tb_tp_mpi_set_wait_sleep(r->a.tp, SLEEP_BUSY);
    return tb_tp_timer(&r->a, tb_tp_now(&r->a) + poll_after(0), 1);
}

/* The child ended with status: move its outputs into the store, report. */
static int child_ended(runner *r, int status)
{
    const tb_flow *f = r->f;
    double dur = tb_wtime() - r->cstart;
    r->child = 0;
    tb_tp_mpi_set_wait_sleep(r->a.tp, SLEEP_IDLE);
    char dir[PATH_MAX], msg[512] = "";
    task_dir(r, r->ctask, r->cattempt, dir, sizeof dir);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    int signo = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (code == 0) {
        const uint32_t *files;
        size_t n = tb_flow_task_files(f, r->ctask, 1, &files);
        for (size_t i = 0; i < n; i++) {
            char from[PATH_MAX * 2], to[PATH_MAX * 2];
            const char *name = f->fname[files[i]];
            snprintf(from, sizeof from, "%s/%s", dir, name);
            snprintf(to, sizeof to, "%s/%s", r->store, name);
            struct stat st;
            if (lstat(from, &st) != 0 || !S_ISREG(st.st_mode)) {
                snprintf(msg, sizeof msg, "it did not write its output '%s'", name);
                code = -1;
                break;
            }
            if (rename(from, to) != 0) {
                snprintf(msg, sizeof msg, "its output '%s' cannot be kept: %s", name,
                         strerror(errno));
                code = -1;
                break;
            }
        }
    } else {
        stderr_tail(dir, msg, sizeof msg);
    }
    return report_done(r, code, signo, dur, msg);
}

static int exec_timer(runner *r)
{
    if (!r->child)
        return TB_OK;
    int status;
    pid_t p = waitpid(r->child, &status, WNOHANG);
    if (p == r->child)
        return child_ended(r, status);
    if (r->killing && tb_wtime() > r->kill_at) {
        kill(r->child, SIGKILL);
        r->kill_at = INFINITY;
    }
    return tb_tp_timer(&r->a, tb_tp_now(&r->a) + poll_after(tb_wtime() - r->cstart), 1);
}

/* Send what the window allows of the first unfinished stream to each rank;
 * drop the streams that are over. */
static int pump(runner *r)
{
    char *chunk = NULL;
    int rc = TB_OK;
    tb_buf b;
    tb_buf_init(&b);
    for (size_t i = 0; i < r->nouts && !rc; i++) {
        out_stream *o = &r->outs[i];
        int first = !o->ended;
        for (size_t j = 0; j < i && first; j++)
            first = r->outs[j].ended || r->outs[j].dst != o->dst;
        if (!first)
            continue;
        tb_buf_clear(&b);
        if (!o->begun && !(rc = tb_buf_pack_u32(&b, o->file)))
            rc = send_msg(r, o->dst, T_FBEGIN, &b);
        o->begun = 1;
        while (!rc && !o->ended && o->unacked < SEND_AHEAD) {
            if (!chunk && !(chunk = malloc(CHUNK))) {
                rc = TB_ERR_NOMEM;
                break;
            }
            ssize_t k = read(o->fd, chunk, CHUNK);
            if (k < 0) {
                rc = rfail(r, TB_ERR_IO, "rank %d: '%s': cannot read: %s", r->rank,
                           r->f->fname[o->file], strerror(errno));
                break;
            }
            tb_buf_clear(&b);
            if (k == 0) { /* all sent: the end, with what the receiver must have seen */
                if (!(rc = tb_buf_pack_u32(&b, o->file)) && !(rc = tb_buf_pack_u64(&b, o->total)) &&
                    !(rc = tb_buf_pack_u64(&b, o->hash)))
                    rc = send_msg(r, o->dst, T_FEND, &b);
                close(o->fd);
                o->fd = -1;
                o->ended = 1;
                break;
            }
            o->hash = tb_fnv1a(o->hash, chunk, (size_t)k);
            o->total += (uint64_t)k;
            if (!(rc = tb_buf_pack_u32(&b, o->file)) && !(rc = tb_buf_append(&b, chunk, (size_t)k)))
                rc = send_msg(r, o->dst, T_FDATA, &b);
            o->unacked++;
        }
    }
    size_t w = 0;
    for (size_t i = 0; i < r->nouts; i++)
        if (!r->outs[i].ended || r->outs[i].unacked > 0)
            r->outs[w++] = r->outs[i];
    r->nouts = w;
    free(chunk);
    tb_buf_free(&b);
    /* told to stop while acknowledgements were due: stop now they are in */
    if (r->stopping && r->nouts == 0)
        r->a.finished = 1;
    return rc;
}

static int exec_push(runner *r, uint32_t file, int dst)
{
    const tb_flow *f = r->f;
    char path[PATH_MAX * 2];
    snprintf(path, sizeof path, "%s/%s", r->store, f->fname[file]);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return rfail(r, TB_ERR_IO, "rank %d: %s: cannot read: %s", r->rank, path,
                     strerror(errno));
    if (tb_grow(&r->outs, &r->capouts, r->nouts, sizeof *r->outs, 8) != TB_OK) {
        close(fd);
        return TB_ERR_NOMEM;
    }
    /* FBEGIN goes when the stream's turn comes: the receiver takes one file
     * at a time from each rank */
    r->outs[r->nouts++] = (out_stream){fd, dst, file, TB_FNV1A_INIT, 0, 0, 0, 0};
    return pump(r);
}

/* A chunk of file arrived at src: one more may go. */
static int exec_ack(runner *r, int src, uint32_t file)
{
    for (size_t i = 0; i < r->nouts; i++)
        if (r->outs[i].dst == src && r->outs[i].file == file && r->outs[i].unacked > 0) {
            r->outs[i].unacked--;
            break;
        }
    return pump(r);
}

static int exec_file(runner *r, int src, int tag, tb_buf *b, const void *data, size_t len)
{
    const tb_flow *f = r->f;
    uint32_t file;
    TB_CHECK(tb_buf_unpack_u32(b, &file));
    if (file >= f->nfiles)
        return TB_ERR_PROTOCOL;
    char path[PATH_MAX * 2], part[PATH_MAX * 2 + 8];
    snprintf(path, sizeof path, "%s/%s", r->store, f->fname[file]);
    snprintf(part, sizeof part, "%s.part%d", path, src);
    if (tag == T_FBEGIN) {
        if (r->in_fds[src] >= 0)
            return rfail(r, TB_ERR_PROTOCOL, "rank %d: two files at once from rank %d", r->rank,
                         src);
        int fd = open(part, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0)
            return rfail(r, TB_ERR_IO, "rank %d: %s: cannot write: %s", r->rank, part,
                         strerror(errno));
        r->in_fds[src] = fd;
        r->in_files[src] = file;
        r->in_hashes[src] = TB_FNV1A_INIT;
        r->in_counts[src] = 0;
        return TB_OK;
    }
    int fd = r->in_fds[src];
    if (fd < 0 || r->in_files[src] != file)
        return rfail(r, TB_ERR_PROTOCOL, "rank %d: file data from rank %d out of order",
                     r->rank, src);
    if (tag == T_FDATA) {
        const unsigned char *p = (const unsigned char *)data + 4;
        size_t n = len - 4;
        r->in_hashes[src] = tb_fnv1a(r->in_hashes[src], p, n);
        r->in_counts[src] += n;
        while (n > 0) {
            ssize_t k = write(fd, p, n);
            if (k < 0)
                return rfail(r, TB_ERR_IO, "rank %d: %s: cannot write: %s", r->rank, part,
                             strerror(errno));
            p += k;
            n -= (size_t)k;
        }
        tb_buf ack;
        tb_buf_init(&ack);
        int rc = tb_buf_pack_u32(&ack, file);
        if (!rc)
            rc = send_msg(r, src, T_FACK, &ack);
        tb_buf_free(&ack);
        return rc;
    }
    uint64_t total, h;
    TB_CHECK(tb_buf_unpack_u64(b, &total));
    TB_CHECK(tb_buf_unpack_u64(b, &h));
    r->in_fds[src] = -1;
    if (close(fd) != 0)
        return rfail(r, TB_ERR_IO, "rank %d: %s: cannot write: %s", r->rank, part,
                     strerror(errno));
    if (total != r->in_counts[src] || h != r->in_hashes[src]) {
        unlink(part);
        return rfail(r, TB_ERR_IO,
                     "rank %d: file '%s' from rank %d arrived damaged (%llu of %llu bytes, "
                     "hash %016llx, sent %016llx)",
                     r->rank, f->fname[file], src, (unsigned long long)r->in_counts[src],
                     (unsigned long long)total, (unsigned long long)r->in_hashes[src],
                     (unsigned long long)h);
    }
    if (rename(part, path) != 0)
        return rfail(r, TB_ERR_IO, "rank %d: %s: cannot rename: %s", r->rank, path,
                     strerror(errno));
    tb_buf out;
    tb_buf_init(&out);
    int rc = tb_buf_pack_u32(&out, file);
    if (!rc)
        rc = tb_buf_pack_u64(&out, total);
    if (!rc)
        rc = send_msg(r, 0, T_HAVE, &out);
    tb_buf_free(&out);
    return rc;
}

static void exec_kill(runner *r)
{
    if (!r->child || r->killing)
        return;
    kill(r->child, SIGTERM);
    r->killing = 1;
    r->kill_at = tb_wtime() + 2.0;
}

/* ---- coordinator --------------------------------------------------------------- */

static int coord_maybe_stop(runner *r);
static int coord_abort(runner *r);

static int push(runner *r, uint32_t file, int from, int to)
{
    size_t k = (size_t)file * (size_t)r->size + (size_t)to;
    if (r->have[k] || r->inflight[k])
        return TB_OK;
    r->inflight[k] = 1;
    r->push_t0[k] = tb_tp_now(&r->a);
    r->ninflight++;
    tb_buf b;
    tb_buf_init(&b);
    int rc = tb_buf_pack_u32(&b, file);
    if (!rc)
        rc = tb_buf_pack_i32(&b, to);
    if (!rc)
        rc = send_msg(r, from, T_PUSH, &b);
    tb_buf_free(&b);
    return rc;
}

/* A rank that has file, preferring `prefer`; -1 if none. */
static int holder(const runner *r, uint32_t file, int prefer)
{
    const uint8_t *h = r->have + (size_t)file * (size_t)r->size;
    if (prefer >= 0 && h[prefer])
        return prefer;
    for (int k = 0; k < r->size; k++)
        if (h[k])
            return k;
    return -1;
}

/* Send RUN for t on host h if all its input files are there (push the
 * missing ones otherwise; their HAVEs call this again). */
static int coord_try_run(runner *r, size_t h)
{
    long t = r->pending_run[h];
    if (t < 0 || r->aborting)
        return TB_OK;
    int rank = r->host_rank[h];
    const uint32_t *files;
    size_t n = tb_flow_task_files(r->f, (size_t)t, 0, &files);
    int missing = 0;
    for (size_t i = 0; i < n && !r->o->shared_fs; i++) {
        if (r->have[(size_t)files[i] * (size_t)r->size + (size_t)rank])
            continue;
        missing = 1;
        int from = holder(r, files[i], 0);
        if (from < 0) {
            /* the workflow's fault, not the machinery's: stop cleanly */
            snprintf(r->res->message, sizeof r->res->message,
                     "%s: task '%s' reads '%s', which no finished task wrote and which is no "
                     "workflow input (a parent missing from the workflow?)",
                     r->f->name, r->f->id[t], r->f->fname[files[i]]);
            rfail(r, TB_ERR_INVALID, "%s", r->res->message);
            return coord_abort(r);
        }
        TB_CHECK(push(r, files[i], from, rank));
    }
    if (missing)
        return TB_OK;
    r->pending_run[h] = -1;
    uint32_t att = ++r->attempts[t];
    r->res->attempts++;
    double iters = 0;
    if (r->o->synthetic)
        iters = tb__flow_engine_work(&r->e, (size_t)t, h) * r->time_scale * r->rate0;
    tb_buf b;
    tb_buf_init(&b);
    int rc = tb_buf_pack_u32(&b, (uint32_t)t);
    if (!rc)
        rc = tb_buf_pack_u32(&b, att);
    if (!rc)
        rc = tb_buf_pack_u64(&b, iters > 0 ? (uint64_t)llround(iters) : 0);
    if (!rc)
        rc = send_msg(r, rank, T_RUN, &b);
    tb_buf_free(&b);
    return rc;
}

static int eng_start(void *ctx, size_t t, size_t h)
{
    runner *r = ctx;
    r->pending_run[h] = (long)t;
    return coord_try_run(r, h);
}

static double eng_send(void *ctx, size_t e, size_t from, size_t to)
{
    runner *r = ctx;
    if (r->o->shared_fs)
        return r->e.now;
    const tb_flow *f = r->f;
    size_t p = r->edge_src[e], s = f->succ[e];
    int fr = r->host_rank[from], tr = r->host_rank[to];
    const uint32_t *out, *in;
    size_t nout = tb_flow_task_files(f, p, 1, &out), nin = tb_flow_task_files(f, s, 0, &in);
    int missing = 0;
    for (size_t i = 0; i < nout; i++) {
        int used = 0;
        for (size_t j = 0; j < nin && !used; j++)
            used = in[j] == out[i];
        if (!used || r->have[(size_t)out[i] * (size_t)r->size + (size_t)tr])
            continue;
        missing = 1;
        if (push(r, out[i], fr, tr) != TB_OK) {
            rfail(r, TB_ERR_MPI, "cannot send a file");
            return r->e.now;
        }
    }
    if (!missing)
        return r->e.now;
    if (tb_grow(&r->waits, &r->capwaits, r->nwaits, sizeof *r->waits, 16) == TB_OK)
        r->waits[r->nwaits++] = (edge_wait){(uint32_t)e, (uint32_t)to, tr};
    return INFINITY;
}

static const tb__flow_engine_ops run_ops = {eng_start, eng_send, NULL};

static int coord_abort(runner *r)
{
    if (r->aborting)
        return TB_OK;
    r->aborting = 1;
    r->e.stopped = 1;
    for (size_t h = 0; h < r->H.nhosts; h++) {
        r->pending_run[h] = -1;
        if (r->e.running[h] >= 0) {
            tb_buf b;
            tb_buf_init(&b);
            int rc = send_msg(r, r->host_rank[h], T_KILL, &b);
            tb_buf_free(&b);
            TB_CHECK(rc);
        }
    }
    return coord_maybe_stop(r);
}

static int coord_maybe_stop(runner *r)
{
    if (r->stopped)
        return TB_OK;
    int done = r->e.ndone == r->e.n && r->gathers == 0;
    int quiet = r->ninflight == 0;
    for (size_t h = 0; h < r->H.nhosts && quiet; h++)
        quiet = r->e.running[h] < 0 || r->pending_run[h] >= 0;
    if (!quiet || !(done || r->aborting))
        return TB_OK;
    r->stopped = 1;
    for (int k = 0; k < r->size; k++) {
        tb_buf b;
        tb_buf_init(&b);
        int rc = send_msg(r, k, T_STOP, &b);
        tb_buf_free(&b);
        TB_CHECK(rc);
    }
    return TB_OK;
}

static void refit_network(runner *r)
{
    tb_linfit fit;
    double L = -1, G = -1;
    if (r->nxs >= 3 && tb_linfit_compute(r->xs, r->ys, r->nxs, &fit) == TB_OK && fit.slope > 0) {
        L = fit.intercept > 0 ? fit.intercept : 0;
        G = fit.slope;
    } else {
        double sx = 0, sy = 0;
        for (size_t i = 0; i < r->nxs; i++) {
            sx += r->xs[i];
            sy += r->ys[i];
        }
        if (sx > 0) {
            L = 0;
            G = sy / sx;
        }
    }
    if (G < 0)
        return;
    r->res->net_L = L;
    r->res->net_G = G;
    /* the schedule counts the workflow's bytes, the wire carries them x size_scale */
    for (size_t k = 0; k < r->H.nclusters * r->H.nclusters; k++) {
        r->H.L[k] = L;
        r->H.G[k] = G * r->size_scale;
    }
}

static int coord_have(runner *r, int src, tb_buf *b)
{
    uint32_t file;
    uint64_t bytes;
    TB_CHECK(tb_buf_unpack_u32(b, &file));
    TB_CHECK(tb_buf_unpack_u64(b, &bytes));
    if (file >= r->f->nfiles)
        return TB_ERR_PROTOCOL;
    size_t k = (size_t)file * (size_t)r->size + (size_t)src;
    double now = tb_tp_now(&r->a);
    r->have[k] = 1;
    if (r->inflight[k]) {
        r->inflight[k] = 0;
        r->ninflight--;
        if (tb_grow(&r->xs, &r->capxs, r->nxs, sizeof *r->xs, 64) == TB_OK &&
            tb_grow(&r->ys, &r->capys, r->nxs, sizeof *r->ys, 64) == TB_OK) {
            r->xs[r->nxs] = (double)bytes;
            r->ys[r->nxs++] = now - r->push_t0[k];
            refit_network(r);
        }
    }
    r->res->transfers++;
    r->res->transferred_bytes += bytes;
    if (src == 0 && r->is_output[file] && r->o->out_dir && r->gathers > 0)
        r->gathers--;
    /* edges waiting for this file on src */
    const tb_flow *f = r->f;
    for (size_t i = 0; i < r->nwaits && !r->aborting;) {
        edge_wait w = r->waits[i];
        if (w.rank != src) {
            i++;
            continue;
        }
        size_t p = r->edge_src[w.edge], s = f->succ[w.edge];
        const uint32_t *out, *in;
        size_t nout = tb_flow_task_files(f, p, 1, &out), nin = tb_flow_task_files(f, s, 0, &in);
        int all = 1;
        for (size_t a = 0; a < nout && all; a++)
            for (size_t c = 0; c < nin; c++)
                if (in[c] == out[a] && !r->have[(size_t)out[a] * (size_t)r->size + (size_t)src])
                    all = 0;
        if (!all) {
            i++;
            continue;
        }
        r->waits[i] = r->waits[--r->nwaits];
        TB_CHECK(tb__flow_engine_arrived(&r->e, w.edge, w.host, now));
        i = 0; /* the engine may have changed the list */
    }
    int rank_host = r->rank_host[src];
    if (rank_host >= 0)
        TB_CHECK(coord_try_run(r, (size_t)rank_host));
    return coord_maybe_stop(r);
}

static int log_attempt(runner *r, uint32_t t, uint32_t att, int rank, double start, double end,
                       int code, int signo, const char *msg)
{
    TB_CHECK(tb_grow(&r->log, &r->caplog, r->nlog, sizeof *r->log, 64));
    attempt *a = &r->log[r->nlog++];
    *a = (attempt){t, att, rank, start, end, code, signo, 0, NULL};
    if (msg && *msg && !(a->error = strdup(msg)))
        return TB_ERR_NOMEM;
    return TB_OK;
}

static void progress(runner *r, double now)
{
    if (!r->o->progress)
        return;
    fprintf(stderr, "tenbin: flow run: %zu/%zu tasks done, %ld reschedule%s, %.1f s\n", r->e.ndone,
            r->e.n, r->e.reschedules, r->e.reschedules == 1 ? "" : "s", now);
    r->last_progress = now;
}

/* A host's speed as the trigger sees it: the work of its last WINDOW
 * tasks over their time, so that one task too short for its fixed costs
 * (a process to start, files to open) does not swing it alone; the
 * measured fixed cost of a task is taken out of the times.  0 (no
 * news) while the window's time is within DT_FLOOR per task of what the
 * believed speed predicts: below that, a difference is the measurement's
 * resolution, not the host's speed. */
static double measure_speed(runner *r, size_t h, double work, double dur)
{
    if (!(dur > 0) || !(work > 0))
        return 0.0;
    size_t k = h * WINDOW + r->win_i[h];
    r->win_w[k] = work;
    r->win_d[k] = dur;
    r->win_i[h] = (r->win_i[h] + 1) % WINDOW;
    double w = 0, d = 0;
    size_t n = 0;
    for (size_t i = 0; i < WINDOW; i++) {
        w += r->win_w[h * WINDOW + i];
        d += r->win_d[h * WINDOW + i];
        n += r->win_d[h * WINDOW + i] > 0;
    }
    double c = r->H.task_overhead * (double)n;
    double predicted = w / r->H.speed[h] + c;
    if (fabs(d - predicted) <= DT_FLOOR * (double)n || d - c <= 0.1 * d)
        return 0.0;
    return w / (d - c);
}

static int coord_done(runner *r, int src, tb_buf *b)
{
    const tb_flow *f = r->f;
    uint32_t t, att;
    int32_t code, signo;
    double dur;
    const void *msg;
    uint32_t msglen;
    TB_CHECK(tb_buf_unpack_u32(b, &t));
    TB_CHECK(tb_buf_unpack_u32(b, &att));
    TB_CHECK(tb_buf_unpack_i32(b, &code));
    TB_CHECK(tb_buf_unpack_i32(b, &signo));
    TB_CHECK(tb_buf_unpack_f64(b, &dur));
    TB_CHECK(tb_buf_unpack_bytes(b, &msg, &msglen));
    int h = r->rank_host[src];
    if (t >= f->n || h < 0 || r->e.running[h] != (long)t)
        return rfail(r, TB_ERR_PROTOCOL, "rank %d reported a task it was not running", src);
    char text[512];
    snprintf(text, sizeof text, "%.*s", (int)msglen, (const char *)msg);
    double now = tb_tp_now(&r->a);
    double start = now - dur;
    if (start < r->e.start[t])
        start = r->e.start[t];
    int ok = code == 0 && signo == 0;
    TB_CHECK(log_attempt(r, t, att, src, start, now, code, signo, ok ? NULL : text));
    if (r->aborting) {
        r->e.running[h] = -1;
        return coord_maybe_stop(r);
    }
    if (ok) {
        const uint32_t *files;
        size_t n = tb_flow_task_files(f, t, 1, &files);
        for (size_t i = 0; i < n; i++) {
            r->have[(size_t)files[i] * (size_t)r->size + (size_t)src] = 1;
            if (r->o->out_dir && r->is_output[files[i]] && src != 0 && !r->o->shared_fs) {
                r->gathers++;
                TB_CHECK(push(r, files[i], src, 0));
            }
        }
        r->e.start[t] = start;
        double measured = measure_speed(r, (size_t)h, tb__flow_engine_work(&r->e, t, (size_t)h), dur);
        TB_CHECK(tb__flow_engine_task_end(&r->e, (size_t)h, t, now, measured, r->o->perf_change));
        if (r->err_rc)
            return r->err_rc;
        if (now - r->last_progress >= 1.0 || r->e.ndone == r->e.n)
            progress(r, now);
        return coord_maybe_stop(r);
    }
    r->res->failures++;
    char why[640];
    if (signo)
        snprintf(why, sizeof why, "killed by signal %d", (int)signo);
    else if (code < 0)
        snprintf(why, sizeof why, "%s", text);
    else
        snprintf(why, sizeof why, "exit code %d%s%s", (int)code, text[0] ? ": " : "", text);
    if ((long)att <= r->o->retries) {
        fprintf(stderr, "tenbin: flow run: task '%s' failed on rank %d (%s); retrying (%u of %d)\n",
                f->id[t], src, why, att, r->o->retries);
        TB_CHECK(tb__flow_engine_task_failed(&r->e, (size_t)h, t, now));
        return coord_maybe_stop(r);
    }
    r->res->failed_task = (long)t;
    r->e.running[h] = -1; /* it ran its last attempt */
    strf(r->res->message, sizeof r->res->message,
         "task '%s' failed on rank %d after %u attempt%s: %s", f->id[t], src, att,
         att == 1 ? "" : "s", why);
    return coord_abort(r);
}

/* ---- the actor -------------------------------------------------------------------- */

static int on_start(tb_actor *a)
{
    runner *r = (runner *)a;
    if (r->rank != 0)
        return TB_OK;
    int rc = tb__flow_engine_begin(&r->e, 0.0);
    if (rc == TB_OK && r->err_rc)
        rc = r->err_rc;
    if (rc == TB_OK && r->e.ndone == r->e.n) /* nothing to run, or all of it resumed */
        rc = coord_maybe_stop(r);
    return rc;
}

static int on_message(tb_actor *a, int src, int tag, const void *data, size_t len)
{
    runner *r = (runner *)a;
    tb_buf b;
    tb_buf_view(&b, data, len);
    int rc = TB_OK;
    switch (tag) {
    case T_RUN: {
        uint32_t t, att;
        uint64_t iters;
        if ((rc = tb_buf_unpack_u32(&b, &t)) || (rc = tb_buf_unpack_u32(&b, &att)) ||
            (rc = tb_buf_unpack_u64(&b, &iters)))
            break;
        rc = exec_run(r, t, att, iters);
        break;
    }
    case T_PUSH: {
        uint32_t file;
        int32_t dst;
        if ((rc = tb_buf_unpack_u32(&b, &file)) || (rc = tb_buf_unpack_i32(&b, &dst)))
            break;
        if (file >= r->f->nfiles || dst < 0 || dst >= r->size)
            rc = TB_ERR_PROTOCOL;
        else
            rc = exec_push(r, file, dst);
        break;
    }
    case T_KILL:
        exec_kill(r);
        break;
    case T_STOP:
        if (r->child) {
            kill(r->child, SIGKILL);
            waitpid(r->child, NULL, 0);
            r->child = 0;
        }
        r->stopping = 1;
        a->finished = r->nouts == 0; /* else when the last FACK is in (pump) */
        break;
    case T_FACK: {
        uint32_t file;
        if (!(rc = tb_buf_unpack_u32(&b, &file)))
            rc = exec_ack(r, src, file);
        break;
    }
    case T_FBEGIN:
    case T_FDATA:
    case T_FEND:
        rc = exec_file(r, src, tag, &b, data, len);
        break;
    case T_DONE:
        rc = r->rank == 0 ? coord_done(r, src, &b) : TB_ERR_PROTOCOL;
        break;
    case T_HAVE:
        rc = r->rank == 0 ? coord_have(r, src, &b) : TB_ERR_PROTOCOL;
        break;
    default:
        TB_LOG_ERR("flow run: rank %d: unexpected message '%s' (tag %d) from rank %d", r->rank,
                   tb__flow_tag_name(tag), tag, src);
        rc = TB_ERR_PROTOCOL;
    }
    if (rc == TB_OK && r->err_rc != TB_OK && !r->aborting)
        rc = r->err_rc;
    /* anything but a verdict on the workflow (a file that cannot be written or read, a broken
     * message) ends the job: the caller prints the line and aborts */
    return rc;
}

static int on_timer(tb_actor *a, uint64_t id)
{
    (void)id;
    return exec_timer((runner *)a);
}

static int on_computed(tb_actor *a, uint64_t job, int status)
{
    (void)a;
    (void)job;
    (void)status;
    return TB_OK;
}

static const tb_actor_ops actor_ops = {sizeof(tb_actor_ops), on_start, on_message, on_computed,
                                       on_timer};

/* ---- setting up, the log, tearing down ------------------------------------------ */

static int write_log(runner *r, const char *path)
{
    cJSON *root = cJSON_CreateObject();
    /* where the tasks' files are, for --resume */
    cJSON_AddStringToObject(root, "workflow", r->f->name);
    cJSON_AddStringToObject(root, "work_dir", r->root);
    cJSON_AddBoolToObject(root, "shared_fs", r->o->shared_fs != 0);
    cJSON *arr = cJSON_AddArrayToObject(root, "tasks");
    if (!root || !arr) {
        cJSON_Delete(root);
        return TB_ERR_NOMEM;
    }
    for (size_t i = 0; i < r->nlog; i++) {
        const attempt *a = &r->log[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddItemToArray(arr, o);
        cJSON_AddStringToObject(o, "task", r->f->id[a->task]);
        cJSON_AddNumberToObject(o, "rank", a->rank);
        cJSON_AddStringToObject(o, "host", r->hostname[a->rank]);
        cJSON_AddNumberToObject(o, "start", a->start);
        cJSON_AddNumberToObject(o, "end", a->end);
        if (a->signo)
            cJSON_AddNullToObject(o, "exit");
        else
            cJSON_AddNumberToObject(o, "exit", a->exit_code);
        if (a->signo)
            cJSON_AddNumberToObject(o, "signal", a->signo);
        cJSON_AddNumberToObject(o, "attempt", a->attempt);
        if (a->resumed)
            cJSON_AddTrueToObject(o, "resumed");
        if (a->error)
            cJSON_AddStringToObject(o, "error", a->error);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return TB_ERR_NOMEM;
    int rc = tb_write_file_atomic(path, text, strlen(text));
    free(text);
    return rc;
}

/* Copy src to dst through dst.part, renamed at the end. */
static int copy_file(const char *src, const char *dst)
{
    char part[PATH_MAX * 2 + 8];
    snprintf(part, sizeof part, "%s.part", dst);
    int in = open(src, O_RDONLY), out = -1, rc = -1;
    if (in >= 0)
        out = open(part, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (in >= 0 && out >= 0) {
        char buf[65536];
        ssize_t k;
        rc = 0;
        while ((k = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)k) != k) {
                rc = -1;
                break;
            }
        if (k < 0)
            rc = -1;
    }
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        rc = -1;
    if (rc == 0 && rename(part, dst) != 0)
        rc = -1;
    if (rc != 0)
        unlink(part);
    return rc;
}

/* Every task's program runs on this rank (each distinct one looked up once). */
static int check_programs(runner *r)
{
    const tb_flow *f = r->f;
    const char **seen = NULL;
    size_t nseen = 0, cap = 0;
    int rc = TB_OK;
    for (size_t t = 0; t < f->n && !rc; t++) {
        const char *prog = tb_flow_task_program(f, t);
        int known = 0;
        for (size_t i = 0; i < nseen && !known; i++)
            known = strcmp(seen[i], prog) == 0;
        if (known)
            continue;
        if (!tb__runnable(prog))
            rc = rfail(r, TB_ERR_NOTFOUND,
                       "%s: task '%s' runs '%s', which is not %s on rank %d (install it, or "
                       "run with --synthetic)",
                       f->name, f->id[t], prog,
                       strchr(prog, '/') ? "an executable file" : "found in PATH", r->rank);
        else if (tb_grow((void *)&seen, &cap, nseen, sizeof *seen, 16) == TB_OK)
            seen[nseen++] = prog;
    }
    free(seen);
    return rc;
}

/* Every rank checks the same things, so they agree without talking. */
static int check_workflow(const tb_flow *f, const tb_flow_run_opts *o, int size, char *err,
                          size_t errlen)
{
    size_t hosts = (size_t)size - (o->no_root ? 1 : 0);
    if (hosts == 0) {
        snprintf(err, errlen, "--no-root needs 2 ranks or more (rank 0 only schedules)");
        return TB_ERR_SIZE;
    }
    if (f->q && f->q != hosts) {
        snprintf(err, errlen, "%s: the workflow has costs for %zu hosts, the run has %zu", f->name,
                 f->q, hosts);
        return TB_ERR_SIZE;
    }
    for (size_t i = 0; i < f->nfiles; i++) {
        const char *nm = f->fname[i];
        if (!nm[0] || strchr(nm, '/') || strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0 ||
            strcmp(nm, "stdout") == 0 || strcmp(nm, "stderr") == 0 || strlen(nm) > 200) {
            snprintf(err, errlen,
                     "%s: file '%s' cannot be staged (a plain name is needed: no '/', not "
                     "stdout or stderr, at most 200 bytes)",
                     f->name, nm);
            return TB_ERR_INVALID;
        }
    }
    if (!o->synthetic)
        for (size_t t = 0; t < f->n; t++)
            if (!tb_flow_task_program(f, t)) {
                snprintf(err, errlen,
                         "%s: task '%s' has no command (run it with --synthetic, or give the "
                         "workflow commands: WfFormat's execution.tasks[].command, DAX's "
                         "<argument>)",
                         f->name, f->id[t]);
                return TB_ERR_INVALID;
            }
    if (o->slow_factor > 1 && (!o->synthetic || o->slow_rank < 0 || o->slow_rank >= size)) {
        snprintf(err, errlen, o->synthetic ? "--slowdown: rank %d is not in the run (%d ranks)"
                                           : "--slowdown needs --synthetic (rank %d)",
                 o->slow_rank, size);
        return TB_ERR_INVALID;
    }
    return TB_OK;
}

/* Rank 0: the workflow's inputs into its store. */
static int stage_inputs(runner *r)
{
    const tb_flow *f = r->f;
    const char *in = r->o->input_dir ? r->o->input_dir : ".";
    for (size_t i = 0; i < f->nfiles; i++) {
        if (!r->is_input[i])
            continue;
        char dst[PATH_MAX * 2];
        snprintf(dst, sizeof dst, "%s/%s", r->store, f->fname[i]);
        if (r->o->synthetic) {
            if (write_synthetic(dst, f->fname[i], scaled_size(r, i)) != 0)
                return rfail(r, TB_ERR_IO, "%s: cannot write: %s", dst, strerror(errno));
            continue;
        }
        char src[PATH_MAX * 2], abs[PATH_MAX];
        snprintf(src, sizeof src, "%s/%s", in, f->fname[i]);
        if (!realpath(src, abs)) {
            /* who reads it, for the message */
            const char *reader = "?";
            for (size_t k = 0; k < f->nuse; k++)
                if (f->use[k].file == i && !f->use[k].output) {
                    reader = f->id[f->use[k].task];
                    break;
                }
            return rfail(r, TB_ERR_NOTFOUND,
                         "%s: workflow input '%s' (read by task '%s') is not in %s: %s",
                         f->name, f->fname[i], reader, in, strerror(errno));
        }
        unlink(dst); /* a work directory used before */
        if (symlink(abs, dst) != 0)
            return rfail(r, TB_ERR_IO, "%s: cannot link: %s", dst, strerror(errno));
    }
    return TB_OK;
}

/* Path of file `name` written on rank `rank` of the run kept in dir
 * (either layout: rank stores, or the shared one), if it is there. */
static int kept_file(const char *dir, int rank, const char *name, char *out, size_t n)
{
    struct stat st;
    if (strf(out, n, "%s/rank-%d/files/%s", dir, rank, name) == 0 && stat(out, &st) == 0 &&
        S_ISREG(st.st_mode))
        return 1;
    return strf(out, n, "%s/files/%s", dir, name) == 0 && stat(out, &st) == 0 &&
           S_ISREG(st.st_mode);
}

/* --resume LOG: the tasks LOG says ended well and whose outputs are still
 * in the directory it names are done; their outputs are linked into rank
 * 0's store.  Returns the count in *n. */
static int resume_setup(runner *r, size_t *n)
{
    const tb_flow *f = r->f;
    const char *path = r->o->resume;
    char *text = NULL, err[480];
    size_t len;
    *n = 0;
    if (tb_read_file(path, (size_t)1 << 30, &text, &len, err, sizeof err) != TB_OK)
        return rfail(r, TB_ERR_INVALID, "--resume: %s", err);
    tb__flow_resume log;
    int rc = tb__flow_resume_parse(f, text, len, path, &log, err, sizeof err);
    free(text);
    if (rc)
        return rfail(r, rc, "--resume: %s", err);
    const char *dir = log.work_dir;
    int *rank_of = log.rank;
    r->resumed = calloc(f->n ? f->n : 1, 1);
    if (!r->resumed)
        rc = rfail(r, TB_ERR_NOMEM, "out of memory");
    for (size_t t = 0; t < f->n && !rc; t++) {
        if (rank_of[t] < 0)
            continue;
        const uint32_t *out;
        size_t nout = tb_flow_task_files(f, t, 1, &out), i;
        char src[PATH_MAX];
        for (i = 0; i < nout; i++)
            if (!kept_file(dir, rank_of[t], f->fname[out[i]], src, sizeof src))
                break;
        if (i == nout) /* else an output is gone: it runs again */
            r->resumed[t] = 1; /* a candidate until its parents are known */
    }
    /* a task whose parent runs again runs again too (its inputs change) */
    for (size_t i = 0; i < f->n && !rc; i++) {
        size_t t = f->topo[i];
        for (size_t j = f->poff[t]; j < f->poff[t + 1] && r->resumed[t]; j++)
            r->resumed[t] = r->resumed[f->pred[j]] == 2;
        if (r->resumed[t])
            r->resumed[t] = 2;
    }
    for (size_t t = 0; t < f->n && !rc; t++) {
        r->resumed[t] = r->resumed[t] == 2;
        if (!r->resumed[t])
            continue;
        const uint32_t *out;
        size_t nout = tb_flow_task_files(f, t, 1, &out);
        for (size_t i = 0; i < nout && !rc; i++) {
            char src[PATH_MAX], dst[PATH_MAX * 2];
            kept_file(dir, rank_of[t], f->fname[out[i]], src, sizeof src);
            strf(dst, sizeof dst, "%s/%s", r->store, f->fname[out[i]]);
            unlink(dst);
            if (symlink(src, dst) != 0)
                rc = rfail(r, TB_ERR_IO, "%s: cannot link: %s", dst, strerror(errno));
            else if (r->o->shared_fs)
                memset(r->have + (size_t)out[i] * (size_t)r->size, 1, (size_t)r->size);
            else
                r->have[(size_t)out[i] * (size_t)r->size] = 1;
        }
        (*n)++;
        if (!rc)
            rc = log_attempt(r, (uint32_t)t, 1, 0, 0.0, 0.0, 0, 0, NULL);
        if (!rc)
            r->log[r->nlog - 1].resumed = 1;
    }
    tb__flow_resume_free(&log);
    return rc;
}

/* Remove the work directory this run made (no --work-dir): every rank its
 * own part, then rank 0 the rest.  Collective over comm. */
static void remove_made(runner *r, MPI_Comm comm)
{
    char mine[PATH_MAX + 32];
    snprintf(mine, sizeof mine, "%s/rank-%d", r->root, r->rank);
    if (r->root[0])
        rm_tree(mine);
    MPI_Barrier(comm);
    if (r->rank == 0 && r->root[0])
        rm_tree(r->root);
}

static int coord_setup(runner *r)
{
    const tb_flow *f = r->f;
    size_t nh = (size_t)r->size - (r->o->no_root ? 1 : 0), nf = f->nfiles ? f->nfiles : 1;
    size_t cells = nf * (size_t)r->size;
    r->host_rank = malloc(nh * sizeof *r->host_rank);
    r->rank_host = malloc((size_t)r->size * sizeof *r->rank_host);
    r->have = calloc(cells, 1);
    r->inflight = calloc(cells, 1);
    r->push_t0 = calloc(cells, sizeof *r->push_t0);
    r->is_input = calloc(nf, 1);
    r->is_output = calloc(nf, 1);
    r->pending_run = malloc(nh * sizeof *r->pending_run);
    r->edge_src = malloc((f->m ? f->m : 1) * sizeof *r->edge_src);
    r->attempts = calloc(f->n ? f->n : 1, sizeof *r->attempts);
    r->win_w = calloc(nh * WINDOW, sizeof *r->win_w);
    r->win_d = calloc(nh * WINDOW, sizeof *r->win_d);
    r->win_i = calloc(nh, sizeof *r->win_i);
    if (!r->win_w || !r->win_d || !r->win_i)
        return TB_ERR_NOMEM;
    if (!r->host_rank || !r->rank_host || !r->have || !r->inflight || !r->push_t0 ||
        !r->is_input || !r->is_output || !r->pending_run || !r->edge_src || !r->attempts)
        return TB_ERR_NOMEM;
    for (int k = 0; k < r->size; k++)
        r->rank_host[k] = -1;
    for (size_t h = 0; h < nh; h++) {
        r->host_rank[h] = (int)h + (r->o->no_root ? 1 : 0);
        r->rank_host[r->host_rank[h]] = (int)h;
        r->pending_run[h] = -1;
    }
    for (size_t p = 0; p < f->n; p++)
        for (size_t k = f->soff[p]; k < f->soff[p + 1]; k++)
            r->edge_src[k] = (uint32_t)p;
    memset(r->is_input, 1, nf);
    memset(r->is_output, 1, nf);
    for (size_t k = 0; k < f->nuse; k++) {
        if (f->use[k].output)
            r->is_input[f->use[k].file] = 0;
        else
            r->is_output[f->use[k].file] = 0;
    }
    for (size_t i = 0; i < f->nfiles; i++) {
        if (r->is_input[i] && r->is_output[i])
            r->is_input[i] = r->is_output[i] = 0; /* used by nobody */
        if (r->is_input[i])
            r->have[i * (size_t)r->size] = 1; /* rank 0 has them */
        if (r->o->shared_fs)
            memset(r->have + i * (size_t)r->size, r->is_input[i], (size_t)r->size);
    }
    return TB_OK;
}

static void free_runner(runner *r)
{
    tb__flow_engine_free(&r->e);
    tb_flow_hosts_free(&r->H);
    free(r->host_rank);
    free(r->rank_host);
    free(r->hostname);
    free(r->have);
    free(r->inflight);
    free(r->push_t0);
    free(r->is_input);
    free(r->is_output);
    free(r->pending_run);
    free(r->waits);
    free(r->edge_src);
    free(r->attempts);
    free(r->resumed);
    free(r->win_w);
    free(r->win_d);
    free(r->win_i);
    free(r->xs);
    free(r->ys);
    for (size_t i = 0; i < r->nlog; i++)
        free(r->log[i].error);
    free(r->log);
    if (r->in_fds)
        for (int k = 0; k < r->size; k++)
            if (r->in_fds[k] >= 0)
                close(r->in_fds[k]);
    for (size_t i = 0; i < r->nouts; i++)
        if (r->outs[i].fd >= 0)
            close(r->outs[i].fd);
    free(r->outs);
    free(r->in_fds);
    free(r->in_files);
    free(r->in_hashes);
    free(r->in_counts);
}

/* Agree on ok across comm: the first failing rank's message goes to all. */
static int agree(MPI_Comm comm, int rc, char *err, size_t errlen)
{
    int rank, bad = rc != TB_OK ? 0 : INT_MAX, first;
    MPI_Comm_rank(comm, &rank);
    if (rc != TB_OK)
        bad = rank;
    MPI_Allreduce(&bad, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == INT_MAX)
        return TB_OK;
    char buf[512];
    int code = rc;
    snprintf(buf, sizeof buf, "%s", rank == first ? err : "");
    MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, first, comm);
    MPI_Bcast(&code, 1, MPI_INT, first, comm);
    if (err && errlen)
        snprintf(err, errlen, "%s", buf);
    return code;
}

/* Collective: the run's directory (rank 0 names it: --work-dir, or a new
 * one in TMPDIR, *made) and each rank's store and task directories. */
static int make_dirs(runner *r, MPI_Comm comm, int *made)
{
    const tb_flow_run_opts *o = r->o;
    int rc = TB_OK;
    if (r->rank == 0) {
        if (o->work_dir) {
            /* absolute: tasks' links to their inputs point into it */
            if (mkdir_p(o->work_dir) != 0 || !realpath(o->work_dir, r->root))
                rc = rfail(r, TB_ERR_IO, "%s: cannot create: %s", o->work_dir, strerror(errno));
        } else {
            const char *tmp = getenv("TMPDIR");
            snprintf(r->root, sizeof r->root, "%s/tenbin-flow-XXXXXX", tmp && *tmp ? tmp : "/tmp");
            char abs[PATH_MAX];
            if (!mkdtemp(r->root))
                rc = rfail(r, TB_ERR_IO, "%s: cannot create: %s", r->root, strerror(errno));
            *made = rc == TB_OK;
            if (*made && realpath(r->root, abs))
                memcpy(r->root, abs, sizeof abs);
        }
    }
    MPI_Bcast(r->root, (int)sizeof r->root, MPI_CHAR, 0, comm);
    MPI_Bcast(made, 1, MPI_INT, 0, comm);
    if (!rc) {
        int cut = o->shared_fs ? strf(r->store, sizeof r->store, "%s/files", r->root)
                               : strf(r->store, sizeof r->store, "%s/rank-%d/files", r->root,
                                      r->rank);
        cut |= strf(r->tasks, sizeof r->tasks, "%s/rank-%d/tasks", r->root, r->rank);
        if (cut || strlen(r->tasks) > PATH_MAX - 256)
            rc = rfail(r, TB_ERR_INVALID, "%s: the work directory's path is too long", r->root);
        else if (mkdir_p(r->store) != 0 || mkdir_p(r->tasks) != 0)
            rc = rfail(r, TB_ERR_IO, "rank %d: %s: cannot create: %s", r->rank, r->root,
                       strerror(errno));
    }
    return rc;
}

/* Rank 0: the hosts as the engine sees them (speeds from the measured
 * rates, transfer priors, the tasks' fixed cost) and the engine, with the
 * tasks an earlier run finished marked done. */
static int setup_engine(runner *r, const double *rates, double ovh_sum, size_t nresumed)
{
    const tb_flow *f = r->f;
    const tb_flow_run_opts *o = r->o;
    tb_flow_run_result *res = r->res;
    int rc;
    size_t nh = (size_t)r->size - (o->no_root ? 1 : 0);
    char spec[64];
    snprintf(spec, sizeof spec, "hosts=%zu", nh);
    tb_platform *plat = NULL;
    char perr[256];
    rc = tb_platform_parse_spec(spec, 1, &plat, perr, sizeof perr);
    if (!rc)
        rc = tb_flow_hosts_init(&r->H, f, plat);
    tb_platform_destroy(&plat);
    if (!rc) {
        for (size_t h = 0; h < nh; h++) {
            double s = o->synthetic ? rates[r->host_rank[h]] / (r->rate0 * r->time_scale)
                                    : 1.0 / r->time_scale;
            r->H.speed[h] = r->H.base_speed[h] = s;
        }
        /* priors until transfers are measured: 0.5 ms, 1 GB/s */
        for (size_t k = 0; k < r->H.nclusters * r->H.nclusters; k++) {
            r->H.L[k] = o->shared_fs ? 0 : 5e-4;
            r->H.G[k] = o->shared_fs ? 0 : 1e-9 * r->size_scale;
        }
        r->H.task_overhead = res->task_overhead = ovh_sum / r->size;
        res->net_L = o->shared_fs ? 0 : 5e-4;
        res->net_G = o->shared_fs ? 0 : 1e-9;
        rc = tb__flow_engine_init(&r->e, f, &r->H, o->sched, o->trigger, o->seed, &run_ops, r,
                                  r->err, sizeof r->err);
        r->engine_ok = rc == TB_OK;
        for (size_t t = 0; t < f->n && !rc && nresumed; t++)
            if (r->resumed[t])
                tb__flow_engine_mark_done(&r->e, t, r->rank_host[0] >= 0 ? (size_t)r->rank_host[0] : 0,
                                          0.0);
        res->resumed = (long)nresumed;
    }
    if (rc && !r->err_rc)
        rfail(r, rc, "cannot set up the run: %s", tb_strerror(rc));
    return rc;
}

/* Rank 0, after the run: the result, the outputs copied out, the log and
 * the schedule that ran. */
static int finish_root(runner *r, tb_flow_schedule *sched_out)
{
    const tb_flow *f = r->f;
    const tb_flow_run_opts *o = r->o;
    tb_flow_run_result *res = r->res;
    int rc;
    tb__flow_engine *e = &r->e;
    res->makespan = isfinite(e->first_start) ? e->last_end - e->first_start : 0.0;
    res->planned = e->planned;
    res->reschedules = e->reschedules;
    res->speed_changes = e->speed_changes;
    res->sched_cpu_s = e->sched_cpu_s;
    if (r->err_rc && !res->message[0])
        snprintf(res->message, sizeof res->message, "%s", r->err);
    rc = r->err_rc ? r->err_rc : res->failed_task >= 0 ? TB_ERR_TASK : TB_OK;
    if (!rc && o->out_dir) {
        if (mkdir_p(o->out_dir) != 0)
            rc = rfail(r, TB_ERR_IO, "%s: cannot create: %s", o->out_dir, strerror(errno));
        for (size_t i = 0; i < f->nfiles && !rc; i++) {
            if (!r->is_output[i])
                continue;
            char src[PATH_MAX * 2], dst[PATH_MAX * 2];
            snprintf(src, sizeof src, "%s/%s", r->store, f->fname[i]);
            snprintf(dst, sizeof dst, "%s/%s", o->out_dir, f->fname[i]);
            if (copy_file(src, dst) != 0)
                rc = rfail(r, TB_ERR_IO, "%s: cannot write: %s", dst, strerror(errno));
        }
    }
    if (o->log) {
        int lrc = write_log(r, o->log);
        if (lrc && !rc)
            rc = rfail(r, lrc, "%s: cannot write the log: %s", o->log, tb_strerror(lrc));
    }
    if (!rc && sched_out && sched_out->ntasks == f->n) {
        memcpy(sched_out->host, e->host, f->n * sizeof *e->host);
        memcpy(sched_out->start, e->start, f->n * sizeof *e->start);
        memcpy(sched_out->finish, e->finish, f->n * sizeof *e->finish);
        sched_out->makespan = res->makespan;
    }
    if (rc && rc != TB_ERR_TASK && !res->message[0])
        snprintf(res->message, sizeof res->message, "%s", r->err);
    return rc;
}

int tb_flow_run(const tb_flow *f, MPI_Comm comm, const tb_flow_run_opts *o,
                tb_flow_run_result *res, tb_flow_schedule *sched_out, char *err, size_t errlen)
{
    if (!f || !o || !res || !f->final)
        return TB_ERR_INVALID;
    memset(res, 0, sizeof *res);
    res->failed_task = -1;
    runner *r = calloc(1, sizeof *r);
    if (!r)
        return TB_ERR_NOMEM;
    r->f = f;
    r->o = o;
    r->res = res;
    MPI_Comm_rank(comm, &r->rank);
    MPI_Comm_size(comm, &r->size);
    r->time_scale = o->time_scale > 0 ? o->time_scale : 1.0;
    /* synthetic files are their recorded size x size_scale; real commands
     * write what they write, taken as the recorded sizes */
    r->size_scale = !o->synthetic ? 1.0 : o->size_scale > 0 ? o->size_scale : r->time_scale;
    char msg[512] = "";
    int rc = check_workflow(f, o, r->size, msg, sizeof msg);
    if (rc) { /* every rank found the same */
        snprintf(err, errlen, "%s", msg);
        free(r);
        return rc;
    }
    int made = 0;
    rc = make_dirs(r, comm, &made);
    r->in_fds = malloc((size_t)r->size * sizeof *r->in_fds);
    r->in_files = calloc((size_t)r->size, sizeof *r->in_files);
    r->in_hashes = calloc((size_t)r->size, sizeof *r->in_hashes);
    r->in_counts = calloc((size_t)r->size, sizeof *r->in_counts);
    r->hostname = calloc((size_t)r->size, sizeof *r->hostname);
    if (!rc && (!r->in_fds || !r->in_files || !r->in_hashes || !r->in_counts || !r->hostname))
        rc = rfail(r, TB_ERR_NOMEM, "out of memory");
    for (int k = 0; r->in_fds && k < r->size; k++)
        r->in_fds[k] = -1;
    /* what a task costs besides its work, the mean over the ranks */
    double ovh = rc ? 0.0 : measure_overhead(r->tasks), ovh_sum = 0;
    MPI_Allreduce(&ovh, &ovh_sum, 1, MPI_DOUBLE, MPI_SUM, comm);
    /* speeds: synthetic tasks loop at rank 0's measured rate */
    double rate = o->synthetic ? calibrate() : 1.0;
    double *rates = malloc((size_t)r->size * sizeof *rates);
    if (!rates && !rc)
        rc = rfail(r, TB_ERR_NOMEM, "out of memory");
    if (rates)
        MPI_Allgather(&rate, 1, MPI_DOUBLE, rates, 1, MPI_DOUBLE, comm);
    char me[64] = "";
    gethostname(me, sizeof me - 1);
    if (r->hostname)
        MPI_Gather(me, 64, MPI_CHAR, r->hostname, 64, MPI_CHAR, 0, comm);
    else
        MPI_Gather(me, 64, MPI_CHAR, NULL, 64, MPI_CHAR, 0, comm);
    r->rate0 = rates ? rates[0] : 1.0;
    if (!rc && !o->synthetic && !(o->no_root && r->rank == 0))
        rc = check_programs(r);
    if (r->rank == 0 && !rc) {
        rc = coord_setup(r);
        if (rc)
            rfail(r, rc, "out of memory");
    }
    size_t nresumed = 0;
    if (r->rank == 0 && !rc)
        rc = stage_inputs(r);
    if (r->rank == 0 && !rc && o->resume)
        rc = resume_setup(r, &nresumed);
    if (r->rank == 0 && !rc)
        rc = setup_engine(r, rates, ovh_sum, nresumed);
    free(rates);
    rc = agree(comm, rc ? rc : TB_OK, r->err, sizeof r->err);
    if (rc) {
        /* nothing ran: a directory this run made holds nothing to keep */
        snprintf(err, errlen, "%s", r->err);
        if (made)
            remove_made(r, comm);
        goto out;
    }
    r->mono0 = tb_wtime();
    tb_tp *tp = NULL;
    rc = tb_tp_mpi_create(&tp, comm);
    if (!rc) {
        /* 0.25 ms: a message waits for a sleeping rank at most that long, at
         * 4000 wake-ups a second (a few % of a core) */
        tb_tp_mpi_set_wait_sleep(tp, SLEEP_IDLE);
        r->a.ops = &actor_ops;
        rc = tb_tp_mpi_run(tp, &r->a);
        tb_tp_mpi_destroy(&tp);
    }
    if (rc) {
        /* a transport failure: the others cannot know; end the job */
        fprintf(stderr, "tenbin: flow run: rank %d: %s\n", r->rank,
                r->err_rc ? r->err : tb_strerror(rc));
        MPI_Abort(comm, 1);
    }
    /* rank 0 tells how it went */
    if (r->rank == 0)
        rc = finish_root(r, sched_out);
    MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
    MPI_Bcast(res, (int)sizeof *res, MPI_BYTE, 0, comm);
    if (rc)
        snprintf(err, errlen, "%s", res->message);
    /* a run that went well leaves no directory it made; a failed one keeps
     * it for its stdout and stderr */
    if (made && rc == TB_OK) {
        remove_made(r, comm);
    } else if (rc && r->rank == 0) {
        fprintf(stderr, "tenbin: flow run: the tasks' directories are kept in %s\n", r->root);
    }
out:
    free_runner(r);
    free(r);
    return rc;
}
