/*
 * tenbin/flow.h - workflows (S2): task graphs, their formats, list
 * schedulers (HEFT, CPOP, PEFT, min-min, max-min, OLB, random), rescheduling
 * triggers and the simulator that runs a workflow on a platform whose host
 * speeds change.
 *
 * A workflow is a DAG of tasks.  A task has a work (seconds on a host of
 * speed 1) or, in the text format, an execution time per host; an edge has a
 * data volume (bytes; in the text format directly the transfer time).  Files
 * (name, size) and commands are kept when the format has them (WfFormat,
 * DAX), so a converted workflow keeps its files; a workflow can also be
 * written as a Makeflow file to run under cctools' makeflow.
 *
 * Life of a workflow:
 *     tb_flow_create -> tb_flow_add_task / add_edge / add_file / task_use
 *       -> tb_flow_finalize (checks, graph index, independent task sets)
 *       -> schedule, simulate, write ... -> tb_flow_destroy
 * or one of the readers (text, WfFormat JSON, Pegasus DAX), which return a
 * finalized workflow.  Nothing is collective; a workflow is not thread-safe
 * but distinct workflows are independent.
 *
 * Errors name the place: "wf.json: workflow.specification.tasks[3].parents[0]:
 * unknown task 'x'", "dag.txt:12: edge: malformed number 'l2'",
 * "dag.txt: cycle: a -> b -> c -> a".
 */
#ifndef TENBIN_FLOW_H
#define TENBIN_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "tenbin/core.h"
#include "tenbin/export.h"
#include "tenbin/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_flow tb_flow;

/* ---- building ------------------------------------------------------------- */

/* An empty workflow.  nhosts_costs > 0 declares per-host execution times
 * (the text format's `hosts Q`): every task then needs Q costs
 * (tb_flow_set_costs).  Errors: TB_ERR_NOMEM. */
TB_API int tb_flow_create(tb_flow **out, size_t nhosts_costs);
/* NULL-safe; sets *f to NULL. */
TB_API void tb_flow_destroy(tb_flow **f);

/* Add a task.  id: unique, non-empty, copied.  work >= 0, seconds on a host
 * of speed 1 (ignored when the workflow has per-host costs).  *index (if not
 * NULL) gets the task's index, in order of addition from 0.  Errors:
 * TB_ERR_INVALID (empty id, duplicate id: see tb_flow_error), TB_ERR_RANGE
 * (work negative or not finite), TB_ERR_STATE (already finalized). */
TB_API int tb_flow_add_task(tb_flow *f, const char *id, double work, size_t *index);
/* Per-host execution times of task `task` (nhosts_costs values >= 0). */
TB_API int tb_flow_set_costs(tb_flow *f, size_t task, const double *cost);
/* Index of task `id`, or TB_ERR_NOTFOUND. */
TB_API int tb_flow_find(const tb_flow *f, const char *id, size_t *index);

/* Edge from -> to (task indices).  data >= 0: bytes (or, with per-host
 * costs, the transfer time between different hosts); a negative data means
 * "the bytes of the files `from` writes and `to` reads", summed by
 * tb_flow_finalize.  A repeated edge is kept once (the larger data).
 * Errors: TB_ERR_RANGE (bad index, self edge), TB_ERR_STATE. */
TB_API int tb_flow_add_edge(tb_flow *f, size_t from, size_t to, double data);

/* A file (name unique, size in bytes >= 0); *index as for tasks.  Adding a
 * name that exists returns its index and keeps the larger size. */
TB_API int tb_flow_add_file(tb_flow *f, const char *name, double bytes, size_t *index);
/* Task `task` reads (output = 0) or writes (output = 1) file `file`. */
TB_API int tb_flow_task_use(tb_flow *f, size_t task, size_t file, int output);

/* The command that runs task `task`: program (a name looked up in PATH, or
 * a path) and nargs arguments, copied; run without a shell.  A task has
 * none until set (WfFormat's execution.tasks[].command, DAX's <argument>).
 * Errors: TB_ERR_INVALID (empty program), TB_ERR_RANGE, TB_ERR_STATE. */
TB_API int tb_flow_set_command(tb_flow *f, size_t task, const char *program, size_t nargs,
                               const char *const *args);

/* Set the name used by error messages and writers (the file name). */
TB_API int tb_flow_set_name(tb_flow *f, const char *name);

/* Check and index: every task has its costs, the graph has no cycle (the
 * error names a task on one), edge data from files; then the topological
 * order, levels and independent task sets.  After it the workflow is read
 * only.  Errors: TB_ERR_INVALID with a message in tb_flow_error(). */
TB_API int tb_flow_finalize(tb_flow *f);
/* The message of the last failed call on f ("" if none). */
TB_API const char *tb_flow_error(const tb_flow *f);

/* ---- reading and writing -------------------------------------------------- */

typedef enum tb_flow_format {
    TB_FLOW_FORMAT_AUTO = 0, /* by content: '{' JSON, '<' DAX, else text */
    TB_FLOW_FORMAT_TEXT,     /* "hosts Q" / "task ID C1..CQ" / "edge FROM TO COST" */
    TB_FLOW_FORMAT_WFJSON,   /* WfCommons WfFormat 1.5 */
    TB_FLOW_FORMAT_DAX,      /* Pegasus DAX (XML, versions 2 and 3) */
    TB_FLOW_FORMAT_MAKEFLOW  /* cctools Makeflow (written only) */
} tb_flow_format;

/* Read a workflow file; returns a finalized workflow.  Errors: TB_ERR_IO
 * (cannot read), TB_ERR_PARSE (syntax, with line or JSON path), TB_ERR_INVALID
 * (unknown parent, duplicate id, cycle ...), one line in err. */
TB_API int tb_flow_read(const char *path, tb_flow_format format, tb_flow **out, char *err,
                        size_t errlen);
/* The same from memory; `name` is used in messages. */
TB_API int tb_flow_parse(const char *data, size_t len, const char *name, tb_flow_format format,
                         tb_flow **out, char *err, size_t errlen);
/* Format from a file name: .json -> WFJSON, .dax/.xml -> DAX, .makeflow/.mf
 * -> MAKEFLOW, else TEXT. */
TB_API tb_flow_format tb_flow_format_of(const char *path);
/* Write a finalized workflow: WFJSON (tasks with runtimes at speed 1, files,
 * and one file per edge that has no file of its own), TEXT (needs per-host
 * costs; TB_ERR_INVALID otherwise) or MAKEFLOW (the tasks' own commands, as
 * tb_flow_write_makeflow with synthetic = 0).  DAX cannot be written
 * (TB_ERR_UNSUPPORTED).  The file is replaced atomically. */
TB_API int tb_flow_write(const tb_flow *f, const char *path, tb_flow_format format, char *err,
                         size_t errlen);
/*
 * Write a finalized workflow as a Makeflow file (cctools' Make-like format:
 * "OUTPUTS: INPUTS" and a tab-indented command per rule; run it with
 * `makeflow FILE`), replaced atomically.  Each task is a rule: its output
 * files are the targets, its input files the sources.  A task that writes
 * nothing, or that precedes a task reading none of its files (a control
 * dependency), also touches a marker file ".tenbin-done-INDEX" (its task
 * index) that is a target of its rule and a source of its successors'.
 *
 * The command is the task's program and arguments, each quoted for /bin/sh
 * (Makeflow runs commands through it).  With synthetic != 0, every task runs
 * instead a portable sh command that sleeps work x time_scale seconds (the
 * mean of its costs with per-host costs) and writes each output as zeros of
 * its size x size_scale bytes (rounded), and files no task writes get rules
 * that create them likewise, so that the workflow runs under Makeflow as
 * under `tb_flow_run` in synthetic mode.  time_scale 0 means 1, size_scale 0
 * means time_scale (as in tb_flow_run_opts).
 *
 * Errors, with one line in err: TB_ERR_INVALID (outside synthetic mode a
 * task without a command; a file name Makeflow cannot write: blanks,
 * control characters, one of \ " ' $ # : = , or "->", or a leading @; a
 * file written by two tasks, or read and written by one; a command word
 * with a control character other than tab), TB_ERR_RANGE (a negative or
 * infinite scale), TB_ERR_STATE (not finalized), TB_ERR_IO, TB_ERR_NOMEM.
 */
TB_API int tb_flow_write_makeflow(const tb_flow *f, const char *path, double time_scale,
                                  double size_scale, int synthetic, char *err, size_t errlen);

/* ---- inspecting (finalized workflows) ------------------------------------- */

TB_API size_t tb_flow_ntasks(const tb_flow *f);
TB_API size_t tb_flow_nedges(const tb_flow *f);
TB_API size_t tb_flow_nfiles(const tb_flow *f);
/* Declared hosts of the per-host costs (0 if the workflow uses work). */
TB_API size_t tb_flow_cost_hosts(const tb_flow *f);
TB_API const char *tb_flow_task_id(const tb_flow *f, size_t task);
TB_API double tb_flow_task_work(const tb_flow *f, size_t task);
/* The task's program (NULL: it has no command), its argument count and
 * i-th argument (NULL past the last). */
TB_API const char *tb_flow_task_program(const tb_flow *f, size_t task);
TB_API size_t tb_flow_task_nargs(const tb_flow *f, size_t task);
TB_API const char *tb_flow_task_arg(const tb_flow *f, size_t task, size_t i);
/* The files task reads (output = 0) or writes (output = 1): their count,
 * and *files (if not NULL) the file indices, ascending, each once. */
TB_API size_t tb_flow_task_files(const tb_flow *f, size_t task, int output,
                                 const uint32_t **files);
/* A file's name and size in bytes (NULL / NAN past the last). */
TB_API const char *tb_flow_file_name(const tb_flow *f, size_t file);
TB_API double tb_flow_file_size(const tb_flow *f, size_t file);
/* Independent task sets (S2): maximal sets of >= 2 tasks with the same
 * direct predecessors and the same direct successors (a network from
 * tb_flow_generate with TB_FLOW_SETS_GENERATED has its data-parallel sets
 * instead).  Sets are numbered by their smallest task; tb_flow_its_of gives
 * the set of a task, or -1 if it is in none. */
TB_API size_t tb_flow_nits(const tb_flow *f);
TB_API long tb_flow_its_of(const tb_flow *f, size_t task);
TB_API size_t tb_flow_its_size(const tb_flow *f, size_t its);

/* ---- schedules ------------------------------------------------------------ */

/*
 * What a scheduler is told about hosts: their count, current speeds and the
 * network between them.  Execution time of task t on host h: the per-host
 * cost times base_speed[h]/speed[h] when the workflow has costs, else
 * work / speed[h].  Transfer time of `data` between distinct hosts a and b:
 * L + data*G of their cluster's network (the wide-area L and G between
 * clusters); 0 on the same host.  A task also costs task_overhead seconds
 * on any host (0 by default).  For a workflow with per-host costs the
 * platform is Q hosts with L = 0, G = 1 (the data is the time).  A host runs
 * one task at a time (S2's model), whatever its cores.
 */
typedef struct tb_flow_hosts {
    size_t nhosts;
    double *speed;       /* current speed */
    double *base_speed;  /* speed the per-host costs were measured at */
    int *cluster;        /* cluster of each host */
    size_t nclusters;
    double *L, *G;       /* nclusters x nclusters, row major */
    double task_overhead; /* seconds every task costs on top of its work (starting a
                             process, opening its files); 0 unless set */
} tb_flow_hosts;

/* Hosts of a platform (speeds = base speeds), or Q hosts of speed 1 for a
 * workflow with Q per-host costs when plat is NULL.  TB_ERR_INVALID if the
 * workflow has Q costs and the platform does not have Q hosts. */
TB_API int tb_flow_hosts_init(tb_flow_hosts *h, const tb_flow *f, const tb_platform *plat);
TB_API void tb_flow_hosts_free(tb_flow_hosts *h);

/* A schedule: host, start and finish of every task; per host the tasks in
 * start order. */
typedef struct tb_flow_schedule {
    size_t ntasks, nhosts;
    int32_t *host;
    double *start, *finish;
    double makespan;       /* latest finish minus earliest start */
} tb_flow_schedule;

TB_API int tb_flow_schedule_init(tb_flow_schedule *s, size_t ntasks, size_t nhosts);
TB_API void tb_flow_schedule_free(tb_flow_schedule *s);

/*
 * A running workflow, for rescheduling its unfinished part.  Tasks with
 * state DONE or RUNNING keep their host; DONE tasks' finish is the real
 * one, RUNNING tasks' finish the expected end.  The output of a done task
 * is at its host and, for edge e (index into the successor lists, see
 * tb_flow_succ), also at edge_host[e] from edge_arrival[e] (edge_host -1:
 * sent nowhere yet).  Data not yet at a host is sent at `now` at the
 * earliest.  NULL arrays mean "nothing started".
 */
enum { TB_FLOW_PENDING = 0, TB_FLOW_RUNNING = 1, TB_FLOW_DONE = 2 };
typedef struct tb_flow_state {
    double now;
    const uint8_t *task_state;   /* per task, TB_FLOW_* */
    const int32_t *host;         /* DONE/RUNNING: the task's host */
    const double *start;         /* DONE/RUNNING: its start (NULL: unknown) */
    const double *finish;        /* DONE: finish; RUNNING: expected end */
    const int32_t *edge_host;    /* per edge, -1 if not sent */
    const double *edge_arrival;
} tb_flow_state;

/* A scheduler: an ops table (grows at the end; check size). */
typedef struct tb_flow_sched_ops {
    size_t size;
    const char *name;
    const char *summary;
    /* Schedule every PENDING task of f (all tasks when st is NULL) onto
     * hosts; DONE and RUNNING tasks are copied from st.  out was set up by
     * tb_flow_schedule_init.  seed: of the random choices (`random`). */
    int (*schedule)(const tb_flow *f, const tb_flow_hosts *hosts, const tb_flow_state *st,
                    uint64_t seed, tb_flow_schedule *out);
} tb_flow_sched_ops;

/* The scheduler called name ("heft", "cpop", "peft", "minmin", "maxmin",
 * "olb", "random"), or NULL. */
TB_API const tb_flow_sched_ops *tb_flow_sched_find(const char *name);
/* The i-th scheduler, NULL past the last. */
TB_API const tb_flow_sched_ops *tb_flow_sched_get(size_t i);

/* Check a schedule against the workflow and hosts (under the hosts' current
 * speeds): every task placed once, durations right, no overlap on a host,
 * no task before its inputs arrive.  TB_OK or TB_ERR_INVALID with the first
 * violation in err. */
TB_API int tb_flow_schedule_check(const tb_flow *f, const tb_flow_hosts *hosts,
                                  const tb_flow_schedule *s, char *err, size_t errlen);

/* Successor lists: tasks succ[off[t] .. off[t+1]) with data[]; the position
 * in that array is the edge index used by tb_flow_state. */
TB_API void tb_flow_succ(const tb_flow *f, const size_t **off, const uint32_t **succ,
                         const double **data);

/* ---- simulation and triggers ---------------------------------------------- */

/* When to reschedule (S2): asked at each message of a runtime, a speed
 * change or a task end; returns 1 to reschedule now.  its_left: tasks of
 * the finished task's independent task set still unfinished (0: it
 * completed the set), or -1 if the task is in no set. */
typedef struct tb_flow_trigger tb_flow_trigger;
typedef struct tb_flow_trigger_ops {
    size_t size;
    const char *name;
    const char *summary;
    int (*speed_changed)(tb_flow_trigger *tr);
    int (*task_finished)(tb_flow_trigger *tr, size_t task, long its_left);
} tb_flow_trigger_ops;

struct tb_flow_trigger {
    const tb_flow_trigger_ops *ops;
    long every;    /* perf-changed-every: N */
    long count;    /* speed changes seen (perf-changed-every) */
    int flag;      /* a speed changed since the last reschedule */
};
/* Parse a trigger: "static", "perf-changed", "perf-changed-every:N" (N >= 1),
 * "task-finished", "its-finished".  TB_ERR_PARSE with a line in err. */
TB_API int tb_flow_trigger_parse(const char *spec, tb_flow_trigger *out, char *err, size_t errlen);
/* The i-th trigger kind (NULL past the last), for listings. */
TB_API const tb_flow_trigger_ops *tb_flow_trigger_get(size_t i);

/* tb_flow_sim_opts_init sets size and the defaults. */
typedef struct tb_flow_sim_opts {
    size_t size;                     /* sizeof(tb_flow_sim_opts), set by tb_flow_sim_opts_init */
    const tb_flow_sched_ops *sched;  /* NULL: heft */
    const char *trigger;             /* NULL: "static" */
    uint64_t seed;                   /* of the scheduler (random) */
    tb_trace *trace;                 /* if not NULL: tasks and transfers */
    double task_overhead;            /* seconds each task costs before its work (>= 0) */
} tb_flow_sim_opts;

TB_API void tb_flow_sim_opts_init(tb_flow_sim_opts *o);

typedef struct tb_flow_sim_result {
    double makespan;        /* first start to last end */
    double planned;         /* makespan of the first (static) schedule */
    long reschedules;       /* schedules after the first */
    long speed_changes;
    double sched_cpu_s;     /* CPU time in the scheduler, first one included */
    uint64_t events;        /* of the event kernel: task ends, wake-ups, speed changes */
    uint64_t transfers;     /* data sent between distinct hosts (re-sends included);
                               they need no event of their own */
    double sim_cpu_s;       /* CPU time of the whole simulation */
} tb_flow_sim_result;

/* Run f on plat (host speeds from its speed models: constant, trace or S2's
 * load process) under S2's rules: one task at a time per host in scheduled
 * order, no overtaking; a task's output leaves when it ends; transfers on
 * the same host are free.  sched_out (optional, initialised by the caller)
 * gets what happened.  Deterministic for a given platform seed and
 * opts->seed.  Errors: TB_ERR_INVALID (bad trigger, mismatched hosts),
 * TB_ERR_NOMEM. */
TB_API int tb_flow_simulate(const tb_flow *f, const tb_platform *plat, const tb_flow_sim_opts *o,
                            tb_flow_sim_result *res, tb_flow_schedule *sched_out, char *err,
                            size_t errlen);

/*
 * Append the result to out as one JSON object on one line (no newline):
 * makespan, planned, reschedules, speed_changes, events, transfers,
 * sched_cpu_s, sim_cpu_s.  extra: NULL, or the text of a JSON object whose
 * members come first (what the caller knows: the scheduler, the trigger,
 * the hosts, the tasks' schedule).  NaN and infinities are null.  As
 * tb_mw_summary_json (tenbin/mw.h): TB_ERR_PARSE, TB_ERR_INVALID (extra
 * repeats a key), TB_ERR_NOMEM.
 */
TB_API int tb_flow_sim_result_json(const tb_flow_sim_result *r, const char *extra, tb_buf *out);

/* ---- running for real (MPI) ---------------------------------------------- */

/*
 * Run a workflow on the ranks of comm: rank 0 schedules with the same
 * engine tb_flow_simulate uses (scheduler, trigger, queues, no overtaking)
 * and, unless root_runs is 0, executes tasks too; every other rank
 * executes.  A task is its command (program and arguments, no shell) run
 * with posix_spawn in a working directory of its own on its rank, stdout
 * and stderr kept there; or, in synthetic mode, a CPU loop of its work x
 * time_scale seconds (at the speed rank 0 measured) that reads its inputs
 * and writes its outputs at their sizes x size_scale.  Files a task reads
 * and another rank wrote are sent over MPI before it starts (or read in
 * place with shared_fs); files no task writes come from input_dir (created
 * in synthetic mode); files no task reads are gathered into out_dir.
 *
 * What the trigger sees are the speeds measured on each rank: a task that
 * took longer or shorter than its work at the rank's speed says so, and a
 * relative change above perf_change is a speed change.  Rescheduling moves
 * only tasks that have not started.  A task that fails (exit != 0, a
 * signal, a missing output) is retried up to `retries` times, on another
 * rank when there is one; then the run stops (running tasks are killed),
 * the result names the task, and TB_ERR_TASK is returned on every rank.
 * Collective over comm; every rank passes the same workflow and options.
 */
/* tb_flow_run_opts_init sets size and the defaults. */
typedef struct tb_flow_run_opts {
    size_t size;                    /* sizeof(tb_flow_run_opts), set by tb_flow_run_opts_init */
    const tb_flow_sched_ops *sched; /* NULL: heft */
    const char *trigger;            /* NULL: "static" */
    uint64_t seed;
    int synthetic;
    double time_scale;              /* 0: 1 */
    double size_scale;              /* synthetic: 0 means time_scale */
    int retries;
    int shared_fs;                  /* work_dir is seen by every rank */
    int no_root;                    /* rank 0 only schedules */
    const char *work_dir;           /* NULL: a new directory under TMPDIR, removed after a
                                       run that succeeded */
    const char *input_dir;          /* NULL: "." */
    const char *out_dir;            /* NULL: workflow outputs stay where they were written */
    double perf_change;             /* 0: 0.1 */
    int slow_rank;                  /* synthetic: this rank runs 1/slow_factor as fast */
    double slow_factor;             /* <= 1: no slowdown */
    double slow_at;                 /* from this many seconds into the run */
    double slow_until;              /* ... until this many (tb_flow_run_opts_init: INFINITY) */
    const char *log;                /* JSON log of every attempt, written on rank 0 */
    int progress;                   /* a line on stderr per finished task */
    const char *resume;             /* a log of an earlier run: tasks it says ended well and
                                       whose outputs are still in its work directory (seen
                                       from rank 0) are not run again */
} tb_flow_run_opts;

TB_API void tb_flow_run_opts_init(tb_flow_run_opts *o);

typedef struct tb_flow_run_result {
    double makespan;          /* first start to last end, seconds */
    double planned;           /* makespan of the first schedule */
    long reschedules, speed_changes;
    long attempts, failures;  /* attempts started and failed */
    long resumed;             /* tasks done by the run resumed */
    uint64_t transfers, transferred_bytes;
    double net_L, net_G;      /* the network the schedule last used: latency (s), time per
                                 byte sent (s/B), fitted to the measured transfers */
    double task_overhead;     /* what a task costs besides its work (s), measured at the
                                 start: the schedule counts it */
    double sched_cpu_s;
    long failed_task;         /* the task that stopped the run, or -1 */
    char message[512];        /* why the run stopped, "" if it did not */
} tb_flow_run_result;

/* sched_out (optional, initialised by the caller) gets each task's rank
 * index (a host: ranks in order, rank 0 first unless no_root), start and
 * end as rank 0 saw them.  Returns TB_OK, TB_ERR_TASK (a task failed:
 * res->message), or another error with one line in err (bad options,
 * files, a rank's error). */
TB_API int tb_flow_run(const tb_flow *f, MPI_Comm comm, const tb_flow_run_opts *o,
                       tb_flow_run_result *res, tb_flow_schedule *sched_out, char *err,
                       size_t errlen);

/*
 * Append the result to out as one JSON object on one line (no newline):
 * makespan_s, planned_s, reschedules, speed_changes, attempts, failures,
 * resumed, transfers, transferred_bytes, net_L_s, net_G_s_per_byte,
 * task_overhead_s, sched_cpu_s, failed (a task stopped the run).  extra:
 * NULL, or the text of a JSON object whose members come first (the
 * workflow, the ranks, the wall time as the caller measured them).  NaN and
 * infinities are null.  As tb_mw_summary_json (tenbin/mw.h): TB_ERR_PARSE,
 * TB_ERR_INVALID (extra repeats a key), TB_ERR_NOMEM.
 */
TB_API int tb_flow_run_result_json(const tb_flow_run_result *r, const char *extra, tb_buf *out);

/* ---- random task networks (S2 section 5.2) -------------------------------- */

/* Which independent task sets a generated network has (tb_flow_nits ...):
 *   STRUCTURAL  those tb_flow_finalize finds, maximal groups with the same
 *               direct predecessors and successors: a control-parallel twin
 *               joins its original's set, a task and its twin form a set of
 *               2, sets grown from twins merge (sets of 2 to a few hundred).
 *   GENERATED   only the sets the data-parallel steps made, each of exactly
 *               its_size tasks (S2's Table 1 gives every set 100); a twin
 *               stays a task of its own, as S2's generator adds it ("a new
 *               task T_j with the same input and output streams as T_i").
 * The tasks and edges are the same either way. */
typedef enum tb_flow_gen_sets {
    TB_FLOW_SETS_STRUCTURAL = 0,
    TB_FLOW_SETS_GENERATED = 1
} tb_flow_gen_sets;

typedef struct tb_flow_gen_opts {
    size_t size;            /* sizeof(tb_flow_gen_opts), set by tb_flow_gen_opts_init */
    size_t tasks;           /* grow until more than this many (S2: 1000) */
    size_t its_size;        /* data-parallel sets (S2: 100) */
    double work_min, work_max;   /* S2: 100-200 */
    double data_min, data_max;   /* base volume (S2: 100-200), times ccr */
    double ccr;
    tb_flow_gen_sets sets;  /* default STRUCTURAL */
    int dp_draw_any;        /* data-parallel draws any node but the first and the
                               last, as the other two steps do, and a drawn set stays
                               as it is; 0 (default): it draws among single tasks */
} tb_flow_gen_opts;
/* Its size and S2's defaults. */
TB_API void tb_flow_gen_opts_init(tb_flow_gen_opts *o);
/* A random network from seed: start with two tasks joined by a stream, then
 * apply chain, control-parallel or data-parallel with equal probability.
 * Tasks are numbered node by node, so a generated set's tasks are
 * consecutive.  Errors: TB_ERR_INVALID (NULL, or options not set up by
 * tb_flow_gen_opts_init), TB_ERR_RANGE (a bad option),
 * TB_ERR_NOMEM. */
TB_API int tb_flow_generate(const tb_flow_gen_opts *o, uint64_t seed, tb_flow **out);
/* S2's platform (section 5.2): `hosts` hosts of speed uniform in 1-5, links
 * of speed 100 (G = 0.01 per unit of data, L = 0), and S2's load process of
 * mean 1/lambda = load_mean on a random half of the hosts (no load if
 * load_mean <= 0).  Free with tb_platform_destroy. */
TB_API int tb_flow_gen_platform(size_t hosts, double load_mean, uint64_t seed, tb_platform **out);

/* ---- schedule export ------------------------------------------------------ */

/* Gantt chart of a schedule as SVG (one row per host), written atomically. */
TB_API int tb_flow_write_gantt(const tb_flow *f, const tb_flow_schedule *s, const char *path);
/* A schedule as events of a trace (host = thread), for tb_trace_write. */
TB_API int tb_flow_trace_schedule(const tb_flow *f, const tb_flow_schedule *s, tb_trace *tr);

#ifdef __cplusplus
}
#endif
#endif /* TENBIN_FLOW_H */
