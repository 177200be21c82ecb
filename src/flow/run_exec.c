/*
 * run_exec.c - every rank's executor in a workflow run (run.c): it runs the
 * tasks it is told to as child processes (posix_spawn of the task's command,
 * or a fork that runs the synthetic CPU loop), reports their ends, keeps the
 * files its tasks wrote, and sends and receives files in chunks with a
 * window of acknowledgements.  Also the small helpers all the run's files
 * use.
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

#include "core/proc.h"
#include "flow/proto.h"
#include "flow/run_internal.h"

extern char **environ;

/* How soon a rank with a running task looks at it again: 5 % of the time
 * it has run, between 0.1 and 5 ms (an end is seen within 5 % or 5 ms;
 * waitpid is cheap and the wait sleeps in between). */
static double poll_after(double elapsed)
{
    double d = 0.05 * elapsed;
    return d < 1e-4 ? 1e-4 : d > 5e-3 ? 5e-3 : d;
}

int tb__frun_rfail(runner *r, int code, const char *fmt, ...)
{
    if (r->err_rc == TB_OK) {
        va_list ap;
        va_start(ap, fmt);
        r->err_rc = tb__verrf(r->err, sizeof r->err, code, fmt, ap);
        va_end(ap);
    }
    return code;
}

int tb__frun_strf(char *out, size_t n, const char *fmt, ...)
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

int tb__frun_mkdir_p(const char *path)
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
void tb__frun_rm_tree(const char *path)
{
    pid_t pid;
    char *argv[] = {"rm", "-rf", "--", (char *)path, NULL};
    if (posix_spawnp(&pid, "rm", NULL, NULL, argv, environ) == 0)
        waitpid(pid, NULL, 0);
}

int tb__frun_write_synthetic(const char *path, const char *name, uint64_t size)
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

uint64_t tb__frun_scaled_size(const runner *r, size_t file)
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
double tb__frun_calibrate(void)
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
double tb__frun_measure_overhead(const char *tasks)
{
    double t[5];
    for (int k = 0; k < 5; k++) {
        char dir[PATH_MAX], out[PATH_MAX + 16], err[PATH_MAX + 16];
        if (tb__frun_strf(dir, sizeof dir, "%s/.probe-%d", tasks, k))
            return 0.0;
        tb__frun_strf(out, sizeof out, "%s/stdout", dir);
        tb__frun_strf(err, sizeof err, "%s/stderr", dir);
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
    double slow_at = r->mono0 + r->o->slow_at, slow_until = r->mono0 + r->o->slow_until;
    const uint64_t slice = 1 << 16;
    uint64_t x = t + 1;
    double done = 0;
    while (done < (double)iters) {
        x = spin(slice, x);
        double now = slow ? tb_wtime() : 0;
        done += slow && now >= slow_at && now <= slow_until ? (double)slice / r->o->slow_factor
                                                            : (double)slice;
    }
    spin_sink = x;
    n = tb_flow_task_files(f, t, 1, &files);
    for (size_t i = 0; i < n; i++)
        if (tb__frun_write_synthetic(f->fname[files[i]], f->fname[files[i]],
                                     tb__frun_scaled_size(r, files[i])) != 0) {
            fprintf(stderr, "cannot write output '%s': %s\n", f->fname[files[i]], strerror(errno));
            _exit(2);
        }
    _exit(0);
}

/* ---- messages ----------------------------------------------------------------- */

int tb__frun_send_msg(runner *r, int dst, int tag, tb_buf *b)
{
    return tb_tp_send(&r->a, dst, tag, b);
}

/* ---- executor ------------------------------------------------------------------ */

static void task_dir(const runner *r, size_t t, uint32_t att, char *out, size_t n)
{
    /* the id when it is a plain name, else the task's index */
    const char *id = r->f->id[t];
    if (strlen(id) <= 100 && !strchr(id, '/') && id[0] != '.')
        tb__frun_strf(out, n, "%s/%s.%u", r->tasks, id, att);
    else
        tb__frun_strf(out, n, "%s/task-%zu.%u", r->tasks, t, att);
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
    tb__flow_done_msg d = {r->ctask, r->cattempt, exit_code, signo, dur, msg,
                           (uint32_t)strlen(msg)};
    int rc = tb__flow_pack_done(&b, &d);
    if (!rc)
        rc = tb__frun_send_msg(r, 0, T_DONE, &b);
    tb_buf_free(&b);
    return rc;
}

int tb__frun_exec_run(runner *r, uint32_t t, uint32_t att, uint64_t iters)
{
    const tb_flow *f = r->f;
    char dir[PATH_MAX], path[PATH_MAX * 2], target[PATH_MAX * 2];
    if (t >= f->n || r->child)
        return tb__frun_rfail(r, TB_ERR_PROTOCOL, "rank %d: a task to run while one runs", r->rank);
    task_dir(r, t, att, dir, sizeof dir);
    r->ctask = t;
    r->cattempt = att;
    char why[PATH_MAX + 64];
    if (tb__frun_mkdir_p(dir) != 0) {
        snprintf(why, sizeof why, "%s: cannot create: %s", dir, strerror(errno));
        return report_done(r, -1, 0, 0.0, why);
    }
    const uint32_t *files;
    size_t n = tb_flow_task_files(f, t, 0, &files);
    for (size_t i = 0; i < n; i++) {
        snprintf(target, sizeof target, "%s/%s", r->store, f->fname[files[i]]);
        snprintf(path, sizeof path, "%s/%s", dir, f->fname[files[i]]);
        if (access(target, R_OK) != 0)
            return tb__frun_rfail(r, TB_ERR_STATE, "rank %d: input '%s' of task '%s' is not here",
                                  r->rank, f->fname[files[i]], f->id[t]);
        if (symlink(target, path) != 0 && errno != EEXIST) {
            tb__frun_strf(why, sizeof why, "%s: cannot link: %s", path, strerror(errno));
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
        return tb__frun_rfail(r, TB_ERR_IO, "rank %d: fork: %s", r->rank, strerror(errno));
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

int tb__frun_exec_timer(runner *r)
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
        if (!o->begun && !(rc = tb__flow_pack_file(&b, o->file)))
            rc = tb__frun_send_msg(r, o->dst, T_FBEGIN, &b);
        o->begun = 1;
        while (!rc && !o->ended && o->unacked < SEND_AHEAD) {
            if (!chunk && !(chunk = malloc(CHUNK))) {
                rc = TB_ERR_NOMEM;
                break;
            }
            ssize_t k = read(o->fd, chunk, CHUNK);
            if (k < 0) {
                rc = tb__frun_rfail(r, TB_ERR_IO, "rank %d: '%s': cannot read: %s", r->rank,
                                    r->f->fname[o->file], strerror(errno));
                break;
            }
            if (k == 0) { /* all sent: the end, with what the receiver must have seen */
                if (!(rc = tb__flow_pack_fend(&b, o->file, o->total, o->hash)))
                    rc = tb__frun_send_msg(r, o->dst, T_FEND, &b);
                close(o->fd);
                o->fd = -1;
                o->ended = 1;
                break;
            }
            o->hash = tb_fnv1a(o->hash, chunk, (size_t)k);
            o->total += (uint64_t)k;
            if (!(rc = tb__flow_pack_fdata(&b, o->file, chunk, (size_t)k)))
                rc = tb__frun_send_msg(r, o->dst, T_FDATA, &b);
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

int tb__frun_exec_push(runner *r, uint32_t file, int dst)
{
    const tb_flow *f = r->f;
    char path[PATH_MAX * 2];
    snprintf(path, sizeof path, "%s/%s", r->store, f->fname[file]);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return tb__frun_rfail(r, TB_ERR_IO, "rank %d: %s: cannot read: %s", r->rank, path,
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
int tb__frun_exec_ack(runner *r, int src, uint32_t file)
{
    for (size_t i = 0; i < r->nouts; i++)
        if (r->outs[i].dst == src && r->outs[i].file == file && r->outs[i].unacked > 0) {
            r->outs[i].unacked--;
            break;
        }
    return pump(r);
}

int tb__frun_exec_file(runner *r, int src, int tag, tb_buf *b, const void *data, size_t len)
{
    const tb_flow *f = r->f;
    uint32_t file;
    TB_CHECK(tb__flow_unpack_file(b, &file));
    if (file >= f->nfiles)
        return TB_ERR_PROTOCOL;
    char path[PATH_MAX * 2], part[PATH_MAX * 2 + 8];
    snprintf(path, sizeof path, "%s/%s", r->store, f->fname[file]);
    snprintf(part, sizeof part, "%s.part%d", path, src);
    if (tag == T_FBEGIN) {
        if (r->in_fds[src] >= 0)
            return tb__frun_rfail(r, TB_ERR_PROTOCOL, "rank %d: two files at once from rank %d",
                                  r->rank, src);
        int fd = open(part, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0)
            return tb__frun_rfail(r, TB_ERR_IO, "rank %d: %s: cannot write: %s", r->rank, part,
                                  strerror(errno));
        r->in_fds[src] = fd;
        r->in_files[src] = file;
        r->in_hashes[src] = TB_FNV1A_INIT;
        r->in_counts[src] = 0;
        return TB_OK;
    }
    int fd = r->in_fds[src];
    if (fd < 0 || r->in_files[src] != file)
        return tb__frun_rfail(r, TB_ERR_PROTOCOL, "rank %d: file data from rank %d out of order",
                              r->rank, src);
    if (tag == T_FDATA) {
        const unsigned char *p = (const unsigned char *)data + 4;
        size_t n = len - 4;
        r->in_hashes[src] = tb_fnv1a(r->in_hashes[src], p, n);
        r->in_counts[src] += n;
        while (n > 0) {
            ssize_t k = write(fd, p, n);
            if (k < 0)
                return tb__frun_rfail(r, TB_ERR_IO, "rank %d: %s: cannot write: %s", r->rank, part,
                                      strerror(errno));
            p += k;
            n -= (size_t)k;
        }
        tb_buf ack;
        tb_buf_init(&ack);
        int rc = tb__flow_pack_file(&ack, file);
        if (!rc)
            rc = tb__frun_send_msg(r, src, T_FACK, &ack);
        tb_buf_free(&ack);
        return rc;
    }
    uint64_t total, h;
    TB_CHECK(tb__flow_unpack_fend_tail(b, &total, &h));
    r->in_fds[src] = -1;
    if (close(fd) != 0)
        return tb__frun_rfail(r, TB_ERR_IO, "rank %d: %s: cannot write: %s", r->rank, part,
                              strerror(errno));
    if (total != r->in_counts[src] || h != r->in_hashes[src]) {
        unlink(part);
        return tb__frun_rfail(
            r, TB_ERR_IO,
            "rank %d: file '%s' from rank %d arrived damaged (%llu of %llu bytes, "
            "hash %016llx, sent %016llx)",
            r->rank, f->fname[file], src, (unsigned long long)r->in_counts[src],
            (unsigned long long)total, (unsigned long long)r->in_hashes[src],
            (unsigned long long)h);
    }
    if (rename(part, path) != 0)
        return tb__frun_rfail(r, TB_ERR_IO, "rank %d: %s: cannot rename: %s", r->rank, path,
                              strerror(errno));
    tb_buf out;
    tb_buf_init(&out);
    int rc = tb__flow_pack_have(&out, file, total);
    if (!rc)
        rc = tb__frun_send_msg(r, 0, T_HAVE, &out);
    tb_buf_free(&out);
    return rc;
}

void tb__frun_exec_kill(runner *r)
{
    if (!r->child || r->killing)
        return;
    kill(r->child, SIGTERM);
    r->killing = 1;
    r->kill_at = tb_wtime() + 2.0;
}
