/*
 * tenbin/mw.h - the master-worker task bag.
 *
 * A program hands Tenbin a bag of independent tasks (byte strings, or a
 * generator that makes task i on demand), a worker function (task bytes in,
 * result bytes out) and a result function called on the root master.  Tenbin
 * decides who computes what: the policy chooses how many masters there are
 * and how tasks move between them.
 *
 *     tb_mw *mw;
 *     tb_mw_create(&mw, MPI_COMM_WORLD);            // collective
 *     tb_mw_set_worker(mw, work, &app);
 *     tb_mw_set_result(mw, on_result, &app);
 *     tb_mw_set_generator(mw, ntasks, make_task, &app);
 *     tb_mw_set_policy(mw, "multi:2");
 *     int rc = tb_mw_run(mw);                        // collective
 *     tb_mw_destroy(&mw);                            // collective
 *
 * Policies (the names accepted by tb_mw_set_policy):
 *   single    one master (rank 0), P-1 workers.  With P = 1 the only rank
 *             computes every task itself.
 *   multi:K   K masters, each with a contiguous group of about P/K ranks (the
 *             master is the group's first rank; a master whose group has no
 *             other rank computes its tasks itself).  Tasks are split among
 *             the masters at the start; a master that hands out its last task
 *             asks another master for more, which answers with half of its
 *             queue or a refusal (S1, section 3.3), so the run ends balanced.
 *             Results reach the root master in batches.
 *   dynamic:paper  S1's dynamically increasing masters, exactly as the paper
 *             has it: start with one master; after each assignment it counts
 *             the messages that have arrived and wait; if their average over
 *             the last n assignments (TENBIN_MW_WINDOW, default 2P) is >= 1
 *             and at least four other workers are busy, the worker whose
 *             result just arrived becomes a child master with half of the
 *             busy workers (each joins when it finishes its current task)
 *             and half of the queue.  Children promote in turn, exchange
 *             tasks with their parent by request, and when done hand
 *             themselves and their workers back.
 *   dynamic   (the default) the same mechanics, but a master promotes only
 *             when one more master is predicted to finish its queue at
 *             least 5 % sooner, from what it measures: its service time per
 *             result, its workers' round trip, its queue (logged with
 *             TENBIN_LOG=info).  Beyond S1: a master that cannot even give
 *             each idle worker a first task before results come back hands
 *             the upper half of its idle workers to a new child master
 *             (fan-out); answers to requests share the queue in proportion
 *             to the two masters' workers; a refusal names the refuser's
 *             child masters, which a requester close enough asks next; and
 *             a child master whose handlers keep it busy less than 5 % of
 *             the time (tasks became long) merges back into its parent,
 *             as under dynamic:wait.
 *   dynamic:wait[:SHARE]  the same mechanics, with S3's triggers: workers
 *             report how long they waited for each task message.  Every 2W
 *             results (W workers, at least 8) a master compares its workers'
 *             mean queueing delay (wait minus that worker's shortest wait)
 *             with their ideal cycle (compute plus shortest wait): above
 *             SHARE (default 0.1) and above the break-even 2/(W-2) it
 *             promotes the next worker that reports;
 *             a child master below SHARE/10 whose own handlers keep it busy
 *             less than a tenth of the time merges: it gives its queue
 *             back to its parent, and returns itself and its workers once
 *             their current tasks are done.  It fans out, shares and
 *             names child masters as dynamic does.
 *
 * Every master sends its results straight to rank 0 (in batches of about
 * TENBIN_MW_FORWARD_BYTES), unless they are folded where they arrive
 * (tb_mw_set_reduce), and the last message of a run, STOP, travels a
 * binomial tree of the workers (the partials go back up the same tree).
 *
 * Task ids are 0, 1, 2, ... in the order tasks were added (or the generator's
 * index).  Every task is computed exactly once and its result delivered
 * exactly once, unless the run fails.
 *
 * Threads: a handle is used by one thread.  MPI must be initialised by the
 * caller (any thread level); the library never touches MPI_COMM_WORLD.
 */
#ifndef TENBIN_MW_H
#define TENBIN_MW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#include "tenbin/core.h"
#include "tenbin/export.h"
#include "tenbin/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_mw tb_mw;

/*
 * Worker function, called on the rank that computes the task.
 *   task/len   IN   the task's bytes (len may be 0)
 *   result     OUT  append the result's bytes (it arrives empty)
 * Return TB_OK, or any non-zero code to report failure: the run then stops in
 * an orderly way and tb_mw_run returns TB_ERR_TASK on every rank; the code is
 * reported with the task id and the rank (tb_mw_summary.failed_*).
 */
typedef int (*tb_mw_work_fn)(void *ctx, uint64_t task_id, const void *task, size_t len,
                             tb_buf *result);

/* Result function, called on the root master (rank 0) once per task, in no
 * particular order.  A non-zero return stops the run like a worker failure. */
typedef int (*tb_mw_result_fn)(void *ctx, uint64_t task_id, const void *result, size_t len);

/*
 * Results consumed where they arrive (tb_mw_set_reduce).  fold is called on
 * the master that receives the result, with that rank's partial: bytes the
 * library keeps for each rank, empty at the start.  combine merges another
 * rank's partial (other/len) into this rank's.  Both run on any rank that is
 * a master at some time of the run, in no particular order, so a fold that
 * gives the same partial in any order (a sum, a count, a maximum) gives a
 * result that does not depend on the schedule.  Non-zero stops the run like
 * a worker failure.
 */
typedef int (*tb_mw_fold_fn)(void *ctx, tb_buf *partial, uint64_t task_id, const void *result,
                             size_t len);
typedef int (*tb_mw_combine_fn)(void *ctx, tb_buf *partial, const void *other, size_t len);

/* Generator: append the bytes of task `task_id` to `task`.  Called only on
 * masters, but may run on any master, so it must give the same bytes for the
 * same id on every rank (a pure function of the id and the program's input). */
typedef int (*tb_mw_gen_fn)(void *ctx, uint64_t task_id, tb_buf *task);

/* Create a handle over a duplicate of comm.  Collective over comm. */
TB_API int tb_mw_create(tb_mw **out, MPI_Comm comm);
/*
 * Create a handle that runs `ranks` simulated ranks on a modelled platform,
 * in this process, with the same policies (not collective; MPI need not be
 * initialised).  The platform must outlive the handle.  Every callback runs
 * in this process; tasks are added as on rank 0.  Each task really runs
 * (so results are real) and is charged the virtual time given by the cost
 * function (tb_mw_set_cost), or its measured CPU time when none is set (which
 * makes the run depend on the machine).  TB_ERR_SIZE if the ranks do not fit
 * the platform's cores.
 */
TB_API int tb_mw_create_sim(tb_mw **out, const tb_platform *plat, int ranks);
/* Free the handle and its communicator; NULLs *mw.  Collective over comm. */
TB_API void tb_mw_destroy(tb_mw **mw);
/* The line of the last call on mw that failed or refused a value ("" if
 * none has): what happened and why, as it was also logged.  Valid until the
 * next call on mw.  NULL: "". */
TB_API const char *tb_mw_error(const tb_mw *mw);

/* "single", "multi:K", "dynamic", "dynamic:paper" or "dynamic:wait[:SHARE]", optionally followed by
 * ",chunk=RULE" (as tb_mw_set_chunking: "multi:4,chunk=fac"; also in TENBIN_MW_POLICY).
 * TB_ERR_PARSE for an unknown name or rule, TB_ERR_SIZE when K exceeds the number of ranks. */
TB_API int tb_mw_set_policy(tb_mw *mw, const char *spec);
/* A fixed number of tasks per message from a master to a worker (>= 1), as
 * tb_mw_set_chunking(mw, "N").  The default is the rule "auto", or
 * TENBIN_MW_CHUNK (a count or a rule). */
TB_API int tb_mw_set_chunk(tb_mw *mw, unsigned tasks_per_message);
/*
 * How many tasks a master hands a worker at once, by rule (R: tasks the
 * master holds, P: its workers): a number (fixed, as tb_mw_set_chunk),
 * "gss" (ceil(R/P)), "tss" (trapezoid: from ceil(N/2P) down to 1 in equal
 * steps), "fac" (factoring: batches of P chunks of ceil(R/2P)), "wf"
 * (factoring weighted by the workers' measured speeds, fixed once each has
 * returned a chunk), "awf" (the same, re-weighted after every chunk), "af"
 * (adaptive factoring from the measured mean and variance of each worker's
 * task times) or "auto", the default (af, never below the chunk whose
 * message costs 5 % of its compute, nor below the chunk that keeps the
 * master busy at most half the time, as measured).  Works with every policy; results stay
 * exactly-once.  TB_ERR_INVALID for an unknown rule.
 */
TB_API int tb_mw_set_chunking(tb_mw *mw, const char *rule);
TB_API int tb_mw_set_worker(tb_mw *mw, tb_mw_work_fn fn, void *ctx);
TB_API int tb_mw_set_result(tb_mw *mw, tb_mw_result_fn fn, void *ctx);
/*
 * Consume results on the masters that receive them instead of sending every
 * result to rank 0, whose receiving then limits every policy at scale (a
 * master's results cost it only its own workers' messages).  Each result is
 * folded into its master's partial; at the end, if combine is not NULL, the
 * partials travel to rank 0 along a binomial tree (log2 P steps, one message
 * per rank) and are combined there.  Set identically on every rank, instead
 * of tb_mw_set_result (TB_ERR_STATE if both are set).  fold NULL turns it
 * off.
 */
TB_API int tb_mw_set_reduce(tb_mw *mw, tb_mw_fold_fn fold, tb_mw_combine_fn combine, void *ctx);
/* After tb_mw_run: this rank's partial; on rank 0 (and in a simulated run)
 * the combined value of every rank's when a combine function was set.
 * Valid until the handle is destroyed. */
TB_API int tb_mw_get_partial(const tb_mw *mw, const void **data, size_t *len);
/* Lazily generated bag of ntasks tasks; set identically on every rank.
 * Cannot be combined with tb_mw_add_task. */
TB_API int tb_mw_set_generator(tb_mw *mw, uint64_t ntasks, tb_mw_gen_fn fn, void *ctx);
/* Add one task (bytes copied).  Only on rank 0 (TB_ERR_STATE elsewhere).
 * Storage overhead is about 16 bytes per task beyond the payload; call
 * tb_mw_reserve first when the totals are known to avoid regrowth. */
TB_API int tb_mw_add_task(tb_mw *mw, const void *data, size_t len);
TB_API int tb_mw_reserve(tb_mw *mw, uint64_t ntasks, size_t payload_bytes);
/* Real runs: a task whose worker function runs longer than `seconds` ends
 * the job, with one line on stderr naming the task and the rank and exit
 * status 1 (the MPI launcher then stops every rank).  0, the default, sets
 * no limit (also TENBIN_MW_TASK_TIMEOUT).  A worker function that crashes
 * (SIGSEGV, SIGBUS, SIGFPE, SIGILL) ends the job the same way, timeout or
 * not.  TB_ERR_INVALID for a negative or non-finite value. */
TB_API int tb_mw_set_task_timeout(tb_mw *mw, double seconds);
/* Record events of this rank into tr (not owned; NULL disables).  Not for
 * simulated runs (TB_ERR_UNSUPPORTED): use tb_mw_set_trace_file. */
TB_API int tb_mw_set_trace(tb_mw *mw, tb_trace *tr);
/* Write a trace of the run to path (copied): every rank's events in one
 * file, written by rank 0 at the end of tb_mw_run (atomically).  Real runs
 * use wall time from a common origin, simulated runs virtual time. */
TB_API int tb_mw_set_trace_file(tb_mw *mw, const char *path);
/* Virtual cost, in seconds at speed 1, of a task in a simulated run; called
 * after the task ran, with its result. */
typedef double (*tb_mw_cost_fn)(void *ctx, uint64_t task_id, const void *task, size_t len,
                                const void *result, size_t result_len);
TB_API int tb_mw_set_cost(tb_mw *mw, tb_mw_cost_fn fn, void *ctx);
/* Progress lines on stream from rank 0 (NULL, the default, prints none). */
TB_API int tb_mw_set_progress(tb_mw *mw, FILE *stream);

/*
 * Checkpoints (real runs; a bag whose results go to a result function).
 * tb_mw_set_checkpoint: rank 0 keeps a journal at path of every result it
 * delivers (the task id: the generator's index, or the order of
 * tb_mw_add_task; and the result's bytes), on the disk (fsync) at most
 * every interval_s seconds, at the end, and when the run is interrupted
 * (tb_signals_catch).  tb_mw_set_resume: before the run, rank 0 hands the
 * results of the checkpoint at path to the result function, in the order
 * they were delivered, and runs only the other tasks; on any number of
 * ranks.  The same path for both continues the journal, or starts it when
 * there is no file yet (a job script that may be requeued).  A checkpoint of
 * another program or input (tb_mw_set_identity, and the bag's size), a
 * damaged one or one that is not a checkpoint stops tb_mw_run on every rank
 * with one line (tb_mw_error on rank 0); a last record cut short by a kill
 * is dropped and its task runs again.  Set on every rank (rank 0 uses them).
 */
TB_API int tb_mw_set_checkpoint(tb_mw *mw, const char *path, double interval_s);
TB_API int tb_mw_set_resume(tb_mw *mw, const char *path);
/* What this run is, in words (the program and its input: "mandel 1024x1024
 * max-iter 1000 ..."): a checkpoint keeps it, and a resume refuses a
 * checkpoint whose words differ. */
TB_API int tb_mw_set_identity(tb_mw *mw, const char *what);

/*
 * Run the bag to completion.  Collective over the handle's communicator.
 * Returns the same code on every rank: TB_OK, TB_ERR_TASK when a task or the
 * result function failed, or another error (bad configuration).  A handle
 * runs once.
 */
TB_API int tb_mw_run(tb_mw *mw);

/* What each rank did, as gathered on rank 0 at the end of a run. */
typedef struct tb_mw_rank_info {
    int rank;
    int is_master;
    uint64_t tasks_computed;  /* tasks this rank computed */
    uint64_t tasks_assigned;  /* masters: tasks handed to workers or computed */
    double busy_s;            /* time computing (a worker: from a task
                               * message to its results' send) */
    double idle_s;            /* workers: time waiting for a task */
    double total_s;           /* from start to stop on this rank */
    uint64_t msgs_sent, msgs_recv, bytes_sent, bytes_recv;
    uint32_t promotions;      /* dynamic: workers this rank made masters */
    uint32_t times_master;    /* dynamic: times this rank was made a master */
    double first_promotion_s; /* dynamic: when it first promoted (if it did) */
    uint32_t merges;          /* dynamic:wait: times this rank, a child master,
                                 handed its tasks and workers back early */
    uint64_t results_folded;  /* tb_mw_set_reduce: results folded on this rank */
    double last_task_end_s;   /* when this rank's last computation ended */
} tb_mw_rank_info;

/* One change of the number of masters (dynamic policies): at t_s seconds from
 * the start, a promotion (delta +1) or a child master's return (-1), after
 * which there were `masters`. */
typedef struct tb_mw_masters_point {
    double t_s;
    int delta;
    int masters;
} tb_mw_masters_point;

typedef struct tb_mw_summary {
    int ranks;
    int masters;
    char policy[32];
    unsigned chunk;           /* tasks per message under the fixed rule */
    char chunking[8];         /* the chunk rule: "fixed", "gss", "tss", "fac", "wf", "awf",
                                 "af" or "auto" */
    uint64_t tasks;           /* tasks in the bag */
    uint64_t results;         /* results delivered on rank 0, or folded on every
                                 master (tb_mw_set_reduce) */
    uint64_t resumed;         /* of results: handed over from a checkpoint
                                 (tb_mw_set_resume), not computed in this run */
    double checkpoint_s;      /* rank 0's seconds keeping the checkpoint (tb_mw_set_checkpoint:
                                 copies of the results and fsyncs), 0 without one */
    int reduced;              /* results were folded where they arrived */
    int simulated;            /* a simulated run */
    double makespan_s;        /* start to end of the run: wall time, or virtual */
    double last_task_end_s;   /* when the last computation ended: what follows is the
                                 cost of the run's end (results, requests, STOP) */
    double wall_s;            /* real time of the run (of the simulation) */
    uint64_t events;          /* simulated runs: events processed */
    double tasks_per_s;       /* results / makespan_s */
    double worker_idle_fraction_mean; /* mean over workers of idle_s / total_s */
    tb_stats worker_idle_s;   /* over workers */
    uint64_t messages;        /* sent by all ranks */
    int masters_max;          /* most masters at one time (dynamic policies) */
    uint64_t promotions;      /* workers made masters during the run */
    double first_promotion_s; /* earliest promotion, from the start; -1 if none */
    uint64_t merges;          /* child masters that merged back early (dynamic, dynamic:wait) */
    const tb_mw_masters_point *masters_changes; /* [nmasters_changes] in time order, owned by
                                                 * the handle; the promotion times are the
                                                 * points with delta +1 */
    size_t nmasters_changes;
    const tb_mw_rank_info *rank; /* [ranks], owned by the handle */
    int failed;               /* a task failed */
    uint64_t failed_task;
    int failed_rank;
    int failed_code;
} tb_mw_summary;

/* Summary of the last run; complete on rank 0 only (other ranks get their own
 * counters and rank == NULL).  Valid until the handle is destroyed. */
TB_API int tb_mw_get_summary(const tb_mw *mw, tb_mw_summary *out);

/* Print the summary for people (rank 0). */
TB_API void tb_mw_summary_print(const tb_mw_summary *s, FILE *out);
/*
 * Append the summary to out as one JSON object on one line (no newline):
 * ranks, policy, masters, chunk, chunking, tasks, results, simulated,
 * makespan_s, last_task_end_s, events, wall_s, tasks_per_s (null for a run
 * that failed), worker_idle_fraction_mean, worker_idle_s {mean, median,
 * min, max}, messages, masters_max, promotions, first_promotion_s, merges,
 * results_where ("root" or "masters"), failed; when failed, failed_task,
 * failed_rank, failed_code, failed_error; on rank 0, promotion_times_s,
 * masters_over_time ([[t, masters], ...] from [0, masters]), tasks_assigned
 * ([{rank, tasks}] of the ranks that were masters) and per_rank ([{rank,
 * role, tasks_computed, busy_s, idle_s, total_s, msgs_sent, msgs_recv}]).
 *
 * extra: NULL, or the text of a JSON object whose members come first (what
 * the caller knows and the summary does not: a command, its options).
 * Numbers that are NaN or infinite are null; the others are exact.
 * Errors: TB_ERR_PARSE (extra is not a JSON object), TB_ERR_INVALID (extra
 * repeats one of the keys above), TB_ERR_NOMEM.  The run summaries of the
 * other modules (tb_bnb_summary_json, tb_emu_result_json,
 * tb_flow_sim_result_json, tb_flow_run_result_json,
 * tb_redist_sim_result_json) are written the same way.
 */
TB_API int tb_mw_summary_json(const tb_mw_summary *s, const char *extra, tb_buf *out);

#ifdef __cplusplus
}
#endif
#endif /* TENBIN_MW_H */
