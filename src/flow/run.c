/*
 * run.c - a workflow run for real on MPI ranks (tb_flow_run): the actor,
 * setting up, the log.  The executor is in run_exec.c, the coordinator in
 * run_coord.c, the files before the run in run_stage.c.
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
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/json.h"
#include "core/proc.h"
#include "flow/proto.h"
#include "flow/run_internal.h"
#include "run/agree.h"
#include "run/coll.h"
#include "run/run.h"

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
        rc = tb__frun_coord_maybe_stop(r);
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
        if ((rc = tb__flow_unpack_run(&b, &t, &att, &iters)))
            break;
        rc = tb__frun_exec_run(r, t, att, iters);
        break;
    }
    case T_PUSH: {
        uint32_t file;
        int32_t dst;
        if ((rc = tb__flow_unpack_push(&b, &file, &dst)))
            break;
        if (file >= r->f->nfiles || dst < 0 || dst >= r->size)
            rc = TB_ERR_PROTOCOL;
        else
            rc = tb__frun_exec_push(r, file, dst);
        break;
    }
    case T_KILL:
        tb__frun_exec_kill(r);
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
        if (!(rc = tb__flow_unpack_file(&b, &file)))
            rc = tb__frun_exec_ack(r, src, file);
        break;
    }
    case T_FBEGIN:
    case T_FDATA:
    case T_FEND:
        rc = tb__frun_exec_file(r, src, tag, &b, data, len);
        break;
    case T_DONE:
        rc = r->rank == 0 ? tb__frun_coord_done(r, src, &b) : TB_ERR_PROTOCOL;
        break;
    case T_HAVE:
        rc = r->rank == 0 ? tb__frun_coord_have(r, src, &b) : TB_ERR_PROTOCOL;
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
    return tb__frun_exec_timer((runner *)a);
}

static int on_computed(tb_actor *a, uint64_t job, int status)
{
    (void)a;
    (void)job;
    (void)status;
    return TB_OK;
}

static int write_log(runner *r, const char *path);

/* Rank 0 was signalled to stop: the log of what ended so far is written
 * (the tasks' files stay in the work directory), so that --resume LOG runs
 * only the rest; then the job ends. */
static int on_interrupt(tb_actor *a, int sig)
{
    runner *r = (runner *)a;
    (void)sig;
    size_t ok = 0;
    for (size_t i = 0; i < r->nlog; i++)
        ok += r->log[i].exit_code == 0 && !r->log[i].signo;
    if (!r->o->log)
        snprintf(r->err, sizeof r->err,
                 "%zu of %zu tasks had ended well; without --log nothing is kept", ok, r->f->n);
    else if (write_log(r, r->o->log) != TB_OK)
        snprintf(r->err, sizeof r->err, "%zu of %zu tasks had ended well; the log %s could not "
                 "be written", ok, r->f->n, r->o->log);
    else
        snprintf(r->err, sizeof r->err, "%zu of %zu tasks had ended well; --resume %s runs the "
                 "rest", ok, r->f->n, r->o->log);
    return TB_ERR_INTERRUPTED;
}

static const tb_actor_ops actor_ops = {sizeof(tb_actor_ops), on_start, on_message, on_computed,
                                       on_timer, on_interrupt};

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
            rc = tb__frun_rfail(
                r, TB_ERR_NOTFOUND,
                "%s: task '%s' runs '%s', which is not %s on rank %d (install it, or "
                "run with --synthetic)",
                f->name, f->id[t], prog, strchr(prog, '/') ? "an executable file" : "found in PATH",
                r->rank);
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
        snprintf(err, errlen,
                 o->synthetic ? "--slowdown: rank %d is not in the run (%d ranks)"
                              : "--slowdown needs --synthetic (rank %d)",
                 o->slow_rank, size);
        return TB_ERR_INVALID;
    }
    return TB_OK;
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
    if (!r->host_rank || !r->rank_host || !r->have || !r->inflight || !r->push_t0 || !r->is_input ||
        !r->is_output || !r->pending_run || !r->edge_src || !r->attempts)
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
    tb_progress_destroy(&r->prog);
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
        rc = tb__flow_engine_init(&r->e, f, &r->H, o->sched, o->trigger, o->seed, &tb__frun_run_ops,
                                  r, r->err, sizeof r->err);
        r->engine_ok = rc == TB_OK;
        for (size_t t = 0; t < f->n && !rc && nresumed; t++)
            if (r->resumed[t])
                tb__flow_engine_mark_done(&r->e, t,
                                          r->rank_host[0] >= 0 ? (size_t)r->rank_host[0] : 0, 0.0);
        res->resumed = (long)nresumed;
    }
    if (rc && !r->err_rc)
        tb__frun_rfail(r, rc, "cannot set up the run: %s", tb_strerror(rc));
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
        if (tb__frun_mkdir_p(o->out_dir) != 0)
            rc = tb__frun_rfail(r, TB_ERR_IO, "%s: cannot create: %s", o->out_dir, strerror(errno));
        for (size_t i = 0; i < f->nfiles && !rc; i++) {
            if (!r->is_output[i])
                continue;
            char src[PATH_MAX * 2], dst[PATH_MAX * 2];
            snprintf(src, sizeof src, "%s/%s", r->store, f->fname[i]);
            snprintf(dst, sizeof dst, "%s/%s", o->out_dir, f->fname[i]);
            if (tb__frun_copy_file(src, dst) != 0)
                rc = tb__frun_rfail(r, TB_ERR_IO, "%s: cannot write: %s", dst, strerror(errno));
        }
    }
    if (o->log) {
        int lrc = write_log(r, o->log);
        if (lrc && !rc)
            rc = tb__frun_rfail(r, lrc, "%s: cannot write the log: %s", o->log, tb_strerror(lrc));
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

int tb_flow_run(const tb_flow *f, MPI_Comm comm, const tb_flow_run_opts *o, tb_flow_run_result *res,
                tb_flow_schedule *sched_out, char *err, size_t errlen)
{
    if (!f || !o || !res || !f->final)
        return TB_ERR_INVALID;
    if (o->size < sizeof *o)
        return tb__errf(err, errlen, TB_ERR_INVALID,
                        "options not set up by tb_flow_run_opts_init");
    memset(res, 0, sizeof *res);
    res->failed_task = -1;
    runner *r = calloc(1, sizeof *r);
    if (!r)
        return TB_ERR_NOMEM;
    r->f = f;
    r->o = o;
    r->res = res;
    tb__run_comm_info(comm, &r->rank, &r->size);
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
    rc = tb__frun_make_dirs(r, comm, &made);
    r->in_fds = malloc((size_t)r->size * sizeof *r->in_fds);
    r->in_files = calloc((size_t)r->size, sizeof *r->in_files);
    r->in_hashes = calloc((size_t)r->size, sizeof *r->in_hashes);
    r->in_counts = calloc((size_t)r->size, sizeof *r->in_counts);
    r->hostname = calloc((size_t)r->size, sizeof *r->hostname);
    if (!rc && (!r->in_fds || !r->in_files || !r->in_hashes || !r->in_counts || !r->hostname))
        rc = tb__frun_rfail(r, TB_ERR_NOMEM, "out of memory");
    for (int k = 0; r->in_fds && k < r->size; k++)
        r->in_fds[k] = -1;
    /* what a task costs besides its work, the mean over the ranks */
    double ovh = rc ? 0.0 : tb__frun_measure_overhead(r->tasks), ovh_sum = 0;
    ovh_sum = tb__run_sum_double(comm, ovh);
    /* speeds: synthetic tasks loop at rank 0's measured rate */
    double rate = o->synthetic ? tb__frun_calibrate() : 1.0;
    double *rates = malloc((size_t)r->size * sizeof *rates);
    if (!rates && !rc)
        rc = tb__frun_rfail(r, TB_ERR_NOMEM, "out of memory");
    if (rates)
        tb__run_allgather(comm, &rate, rates, sizeof rate);
    char me[64] = "";
    gethostname(me, sizeof me - 1);
    tb__run_gather(comm, me, r->hostname, sizeof me);
    r->rate0 = rates ? rates[0] : 1.0;
    if (!rc && !o->synthetic && !(o->no_root && r->rank == 0))
        rc = check_programs(r);
    if (r->rank == 0 && !rc) {
        rc = coord_setup(r);
        if (rc)
            tb__frun_rfail(r, rc, "out of memory");
    }
    size_t nresumed = 0;
    if (r->rank == 0 && !rc)
        rc = tb__frun_stage_inputs(r);
    if (r->rank == 0 && !rc && o->resume)
        rc = tb__frun_resume_setup(r, &nresumed);
    if (r->rank == 0 && !rc)
        rc = setup_engine(r, rates, ovh_sum, nresumed);
    free(rates);
    rc = tb__run_first_error(comm, rc ? rc : TB_OK, r->err, sizeof r->err);
    if (rc) {
        /* nothing ran: a directory this run made holds nothing to keep */
        snprintf(err, errlen, "%s", r->err);
        if (made)
            tb__frun_remove_made(r, comm);
        goto out;
    }
    r->mono0 = tb_wtime();
    r->a.ops = &actor_ops;
    /* 0.25 ms: a message waits for a sleeping rank at most that long, at
     * 4000 wake-ups a second (a few % of a core).  A failure of the
     * machinery (the others cannot know) ends the job with its line. */
    tb__run run = {.what = "the workflow run", .comm = comm, .wait_sleep = SLEEP_IDLE,
                   .actor = &r->a, .err = r->err, .errlen = sizeof r->err};
    rc = tb__run_go(&run, NULL, NULL);
    tb__run_end(&run, NULL, NULL);
    /* rank 0 tells how it went */
    if (r->rank == 0)
        rc = finish_root(r, sched_out);
    tb__run_bcast(comm, &rc, sizeof rc);
    tb__run_bcast(comm, res, sizeof *res);
    if (rc)
        snprintf(err, errlen, "%s", res->message);
    /* a run that went well leaves no directory it made; a failed one keeps
     * it for its stdout and stderr */
    if (made && rc == TB_OK) {
        tb__frun_remove_made(r, comm);
    } else if (rc && r->rank == 0) {
        fprintf(stderr, "tenbin: flow run: the tasks' directories are kept in %s\n", r->root);
    }
out:
    free_runner(r);
    free(r);
    return rc;
}

void tb_flow_run_opts_init(tb_flow_run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->slow_rank = -1;
    o->slow_until = INFINITY;
}

int tb_flow_run_result_json(const tb_flow_run_result *r, const char *extra, tb_buf *out)
{
    if (!r || !out)
        return TB_ERR_INVALID;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return TB_ERR_NOMEM;
    int bad = 0;
    bad |= tb__json_num(o, "makespan_s", r->makespan);
    bad |= tb__json_num(o, "planned_s", r->planned);
    bad |= tb__json_int(o, "reschedules", r->reschedules);
    bad |= tb__json_int(o, "speed_changes", r->speed_changes);
    bad |= tb__json_int(o, "attempts", r->attempts);
    bad |= tb__json_int(o, "failures", r->failures);
    bad |= tb__json_int(o, "resumed", r->resumed);
    bad |= tb__json_u64(o, "transfers", r->transfers);
    bad |= tb__json_u64(o, "transferred_bytes", r->transferred_bytes);
    bad |= tb__json_num(o, "net_L_s", r->net_L);
    bad |= tb__json_num(o, "net_G_s_per_byte", r->net_G);
    bad |= tb__json_num(o, "task_overhead_s", r->task_overhead);
    bad |= tb__json_num(o, "sched_cpu_s", r->sched_cpu_s);
    bad |= tb__json_bool(o, "failed", r->failed_task >= 0);
    return tb__json_emit(o, bad, extra, out);
}
