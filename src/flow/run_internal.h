/*
 * run_internal.h - a workflow run on MPI ranks, inside (internal): the
 * runner every rank keeps, and what the files of tb_flow_run call of each
 * other: run.c (the actor, setting up and the log), run_exec.c (every rank's
 * executor: tasks as child processes, files sent and received),
 * run_coord.c (rank 0's coordinator: the engine's decisions into messages)
 * and run_stage.c (directories, input files, what a resumed run keeps).
 */
#ifndef TB_FLOW_RUN_INTERNAL_H
#define TB_FLOW_RUN_INTERNAL_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "flow/engine.h"
#include "flow/flow_internal.h"
#include "transport/transport.h"

enum { CHUNK = 1 << 20, TAIL = 400, WINDOW = 3, SEND_AHEAD = 4 };

#define DT_FLOOR 0.005 /* seconds per task: below it, times do not tell speeds apart */

/* How long a rank waiting for messages sleeps at most: 0.25 ms while it
 * runs no task (a message waits that long at worst, at 4000 wake-ups a
 * second of a core that has nothing else to do), 1 ms while its task
 * shares the core (measured: 2 % more makespan at 0.25 ms on CPU-bound
 * tasks). */
#define SLEEP_IDLE 2.5e-4

#define SLEEP_BUSY 1e-3

/* One attempt, as the log keeps it. */
typedef struct attempt {
    uint32_t task, attempt;
    int rank;
    double start, end;
    int exit_code, signo;
    int resumed; /* done by an earlier run (--resume) */
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
    char root[PATH_MAX];  /* the run's directory */
    char store[PATH_MAX]; /* this rank's files */
    char tasks[PATH_MAX]; /* this rank's task directories */
    double rate0;         /* synthetic: loop iterations per second at rank 0 */
    double time_scale, size_scale;
    double mono0; /* tb_wtime() at the run's start, for slowdowns */
    int err_rc;
    char err[512];

    /* executor */
    pid_t child; /* 0: none */
    uint32_t ctask, cattempt;
    double cstart;
    int killing;
    double kill_at;
    int stopping;     /* STOP came while acknowledgements were due */
    out_stream *outs; /* files being sent, in the order asked */
    size_t nouts, capouts;
    int *in_fds; /* per sender rank: fd of the file it sends, -1 (a sender
                    sends one file at a time, in order) */
    uint32_t *in_files;
    uint64_t *in_hashes, *in_counts;

    /* coordinator (rank 0) */
    tb__flow_engine e;
    tb_flow_hosts H;
    int engine_ok;
    int *host_rank, *rank_host;
    char (*hostname)[64];
    uint8_t *have, *inflight; /* nfiles x size */
    double *push_t0;          /* nfiles x size */
    long ninflight;
    uint8_t *is_input, *is_output; /* per file: no task writes it / no task reads it */
    long *pending_run;             /* per host: task waiting for input files, -1 */
    edge_wait *waits;
    size_t nwaits, capwaits;
    uint32_t *edge_src;    /* per edge: its source task */
    uint32_t *attempts;    /* per task */
    uint8_t *resumed;      /* per task: done by the run --resume names */
    double *win_w, *win_d; /* per host: work and time of its last WINDOW tasks */
    size_t *win_i;
    double *xs, *ys; /* transfers: bytes, seconds */
    size_t nxs, capxs, capys;
    attempt *log;
    size_t nlog, caplog;
    long gathers; /* outputs on their way to rank 0 */
    int aborting, stopped;
    tb_progress *prog; /* the coordinator's progress lines (o->progress) */
    tb_flow_run_result *res;
} runner;

/* ---- shared between the files of this module ---- */

int tb__frun_rfail(runner *r, int code, const char *fmt, ...);

int tb__frun_strf(char *out, size_t n, const char *fmt, ...);

int tb__frun_mkdir_p(const char *path);

/* Remove a directory tree (no symlinks followed). */
void tb__frun_rm_tree(const char *path);

int tb__frun_write_synthetic(const char *path, const char *name, uint64_t size);

uint64_t tb__frun_scaled_size(const runner *r, size_t file);

/* Loop iterations per second on this rank: the best of 5 measurements of
 * about 10 ms each (a rank busy in MPI's start-up, or a core shared for a
 * moment, makes a measurement slow, never fast). */
double tb__frun_calibrate(void);

/* What a task costs on this rank besides its work: a directory, a
 * process, its stdout and stderr (the median of 5 empty tasks).  The slow
 * metadata of some disks makes this several milliseconds. */
double tb__frun_measure_overhead(const char *tasks);

/* ---- messages ----------------------------------------------------------------- */

int tb__frun_send_msg(runner *r, int dst, int tag, tb_buf *b);

int tb__frun_exec_run(runner *r, uint32_t t, uint32_t att, uint64_t iters);

int tb__frun_exec_timer(runner *r);

int tb__frun_exec_push(runner *r, uint32_t file, int dst);

/* A chunk of file arrived at src: one more may go. */
int tb__frun_exec_ack(runner *r, int src, uint32_t file);

int tb__frun_exec_file(runner *r, int src, int tag, tb_buf *b, const void *data, size_t len);

void tb__frun_exec_kill(runner *r);

extern const tb__flow_engine_ops tb__frun_run_ops;

int tb__frun_coord_maybe_stop(runner *r);

int tb__frun_coord_have(runner *r, int src, tb_buf *b);

int tb__frun_log_attempt(runner *r, uint32_t t, uint32_t att, int rank, double start, double end,
                         int code, int signo, const char *msg);

int tb__frun_coord_done(runner *r, int src, tb_buf *b);

/* Copy src to dst through dst.part, renamed at the end. */
int tb__frun_copy_file(const char *src, const char *dst);

/* Rank 0: the workflow's inputs into its store. */
int tb__frun_stage_inputs(runner *r);

/* --resume LOG: the tasks LOG says ended well and whose outputs are still
 * in the directory it names are done; their outputs are linked into rank
 * 0's store.  Returns the count in *n. */
int tb__frun_resume_setup(runner *r, size_t *n);

/* Remove the work directory this run made (no --work-dir): every rank its
 * own part, then rank 0 the rest.  Collective over comm. */
void tb__frun_remove_made(runner *r, MPI_Comm comm);

/* Collective: the run's directory (rank 0 names it: --work-dir, or a new
 * one in TMPDIR, *made) and each rank's store and task directories. */
int tb__frun_make_dirs(runner *r, MPI_Comm comm, int *made);

#endif /* TB_FLOW_RUN_INTERNAL_H */
