/*
 * progress.c - throttled progress lines, the one mechanism for them: the
 * interval (TENBIN_PROGRESS_INTERVAL), the rate limit, the final line, and
 * whether the user watches at all.
 */
#define _POSIX_C_SOURCE 200809L

#include "tenbin/core.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tb_progress {
    FILE *stream;     /* NULL: print nothing */
    uint64_t total, done;
    double interval, start, last;
    double note_last; /* the last note, on the caller's clock */
    int finished;
    char what[]; /* copy of the caller's noun, e.g. "tasks" */
};

int tb_progress_format(char *buf, size_t n, const char *what, uint64_t done, uint64_t total,
                       double elapsed)
{
    if (what == NULL)
        what = "tasks";
    if (total == 0)
        return snprintf(buf, n, "progress: %" PRIu64 "/0 %s (100.0%%)", done, what);
    /* Percent is rounded down so 4095/4096 does not already read 100.0%. */
    double pct = floor(1000.0 * (double)done / (double)total) / 10.0;
    double rate = elapsed > 0 ? (double)done / elapsed : 0.0;
    if (rate <= 0)
        return snprintf(buf, n, "progress: %" PRIu64 "/%" PRIu64 " %s (%.1f%%), %.1f %s/s, ETA -",
                        done, total, what, pct, rate, what);
    double left = done < total ? (double)(total - done) : 0.0;
    return snprintf(buf, n,
                    "progress: %" PRIu64 "/%" PRIu64 " %s (%.1f%%), %.1f %s/s, ETA %.1f s", done,
                    total, what, pct, rate, what, left / rate);
}

int tb_progress_create(tb_progress **out, FILE *stream, const char *what, uint64_t total,
                       double interval)
{
    if (out == NULL)
        return TB_ERR_INVALID;
    if (what == NULL)
        what = "tasks";
    size_t len = strlen(what) + 1;
    tb_progress *p = calloc(1, sizeof *p + len);
    if (p == NULL)
        return TB_ERR_NOMEM;
    memcpy(p->what, what, len);
    if (interval < 0)
        tb_env_double("TENBIN_PROGRESS_INTERVAL", &interval);
    p->stream = stream;
    p->total = total;
    p->interval = interval;
    p->start = tb_wtime();
    p->last = p->start;
    *out = p;
    return TB_OK;
}

void tb_progress_destroy(tb_progress **p)
{
    if (p == NULL)
        return;
    free(*p);
    *p = NULL;
}

static void print_line(tb_progress *p, double now)
{
    char line[256];
    if (p->stream == NULL)
        return;
    tb_progress_format(line, sizeof line, p->what, p->done, p->total, now - p->start);
    fprintf(p->stream, "%s\n", line);
    fflush(p->stream);
}

void tb_progress_update(tb_progress *p, uint64_t done)
{
    if (p == NULL || p->finished)
        return;
    p->done = done;
    double now = tb_wtime();
    if (now - p->last >= p->interval) {
        p->last = now;
        print_line(p, now);
    }
}

void tb_progress_finish(tb_progress *p)
{
    if (p == NULL || p->finished)
        return;
    p->finished = 1;
    print_line(p, tb_wtime());
}

int tb_progress_note(tb_progress *p, double now, int final, const char *fmt, ...)
{
    if (p == NULL || p->finished || fmt == NULL)
        return 0;
    /* The same test as tb_progress_note_due's, so that a timer set for it
     * finds the note due. */
    if (!final && !(now >= p->note_last + p->interval))
        return 0;
    p->note_last = now;
    p->finished = final;
    if (p->stream == NULL)
        return 0;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(p->stream, fmt, ap);
    va_end(ap);
    fputc('\n', p->stream);
    fflush(p->stream);
    return 1;
}

double tb_progress_note_due(const tb_progress *p)
{
    if (p == NULL || p->finished)
        return INFINITY;
    return p->note_last + p->interval;
}

/* ---- whether the user watches --------------------------------------------- */

/* 1: fd 2 of process pid is a terminal; 0: a file or /dev/null; -1: a
 * pipe or socket (look at who reads it), or unknown. */
static int stderr_kind(long pid)
{
    char path[64], target[256];
    snprintf(path, sizeof path, "/proc/%ld/fd/2", pid);
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0)
        return -1;
    target[n] = '\0';
    if (strncmp(target, "/dev/pts/", 9) == 0 || strncmp(target, "/dev/tty", 8) == 0)
        return 1;
    if (strncmp(target, "pipe:", 5) == 0 || strncmp(target, "socket:", 7) == 0)
        return -1;
    return 0;
}

static long parent_of(long pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char buf[512];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close = strrchr(buf, ')'); /* the name may hold spaces */
    long ppid = -1;
    if (!close || sscanf(close + 1, " %*c %ld", &ppid) != 1)
        return -1;
    return ppid;
}

/* Open MPI's and MPICH's launchers and daemons, by process name. */
static int is_launcher(long pid)
{
    static const char *const names[] = {"mpiexec", "mpirun", "orterun", "orted", "prterun",
                                        "prted", "hydra_pmi_proxy", "mpiexec.hydra",
                                        "mpiexec.mpich", "mpiexec.openmpi", "mpirun.openmpi",
                                        "mpirun.mpich"};
    char path[64], comm[64] = "";
    snprintf(path, sizeof path, "/proc/%ld/comm", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    if (!fgets(comm, sizeof comm, f))
        comm[0] = '\0';
    fclose(f);
    comm[strcspn(comm, "\n")] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(comm, names[i]) == 0)
            return 1;
    return 0;
}

int tb_progress_wanted(int forced, int quiet)
{
    if (forced)
        return 1;
    int quiet_env;
    tb_env_bool("TENBIN_QUIET", &quiet_env);
    if (quiet || quiet_env)
        return 0;
    if (isatty(STDERR_FILENO))
        return 1;
    /* A rank's stderr is a pipe to its launcher: ask the launcher's (and
     * its own launcher's: Hydra's proxy, then mpiexec), never a shell's. */
    long pid = (long)getpid();
    for (int up = 0; up < 4 && pid > 1; up++) {
        int k = stderr_kind(pid);
        if (k >= 0)
            return k;
        pid = parent_of(pid);
        if (pid <= 1 || !is_launcher(pid))
            return 0;
    }
    return 0;
}
