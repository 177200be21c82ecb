/*
 * mw.c - the public task-bag API and its MPI driver: configuration, the
 * run (one node actor on the MPI transport), and the gathered summary.
 */
#include "tenbin/core.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mw/mw_internal.h"
#include "tenbin/mw.h"

struct tb_mw {
    MPI_Comm comm;
    int rank, size;
    tb__mw_cfg cfg;
    tb__queue bag;          /* rank 0: tasks added, or the generator's range */
    int have_gen;
    uint64_t nadded;
    tb_trace *trace;
    FILE *progress;
    int ran;
    tb_mw_summary summary;
    tb_mw_rank_info *infos; /* rank 0: one per rank */
};

int tb_mw_create(tb_mw **out, MPI_Comm comm)
{
    tb_mw *mw = calloc(1, sizeof *mw);
    if (!mw)
        return TB_ERR_NOMEM;
    if (MPI_Comm_dup(comm, &mw->comm) != MPI_SUCCESS) {
        free(mw);
        return TB_ERR_MPI;
    }
    MPI_Comm_rank(mw->comm, &mw->rank);
    MPI_Comm_size(mw->comm, &mw->size);
    tb__queue_init(&mw->bag, NULL, NULL);
    mw->cfg.nranks = mw->size;
    mw->cfg.nmasters = 1;
    snprintf(mw->cfg.policy, sizeof mw->cfg.policy, "single");
    long chunk = 1, fwd = 65536;
    const char *policy = NULL;
    tb_env_int("TENBIN_MW_CHUNK", &chunk);
    tb_env_int("TENBIN_MW_FORWARD_BYTES", &fwd);
    mw->cfg.chunk = chunk >= 1 && chunk <= UINT32_MAX ? (unsigned)chunk : 1;
    mw->cfg.forward_bytes = fwd >= 0 ? (size_t)fwd : 65536;
    if (tb_env_string("TENBIN_MW_POLICY", &policy) == TB_OK && policy &&
        tb_mw_set_policy(mw, policy) != TB_OK)
        TB_LOG_WARN("ignoring TENBIN_MW_POLICY=%s: not a policy for %d ranks", policy,
                    mw->size);
    *out = mw;
    return TB_OK;
}

void tb_mw_destroy(tb_mw **pmw)
{
    if (!pmw || !*pmw)
        return;
    tb_mw *mw = *pmw;
    tb__queue_free(&mw->bag);
    free(mw->infos);
    MPI_Comm_free(&mw->comm);
    free(mw);
    *pmw = NULL;
}

int tb_mw_set_policy(tb_mw *mw, const char *spec)
{
    if (!mw || !spec)
        return TB_ERR_INVALID;
    long k;
    if (strcmp(spec, "single") == 0) {
        k = 1;
    } else if (strncmp(spec, "multi:", 6) == 0) {
        int rc = tb_parse_long(spec + 6, 1, 1L << 30, &k);
        if (rc != TB_OK)
            return rc;
        if (k > mw->size)
            return TB_ERR_SIZE;
    } else {
        return TB_ERR_PARSE;
    }
    mw->cfg.nmasters = (int)k;
    snprintf(mw->cfg.policy, sizeof mw->cfg.policy, "%s", spec);
    return TB_OK;
}

int tb_mw_set_chunk(tb_mw *mw, unsigned tasks_per_message)
{
    if (!mw || tasks_per_message == 0)
        return TB_ERR_INVALID;
    mw->cfg.chunk = tasks_per_message;
    return TB_OK;
}

int tb_mw_set_worker(tb_mw *mw, tb_mw_work_fn fn, void *ctx)
{
    if (!mw || !fn)
        return TB_ERR_INVALID;
    mw->cfg.work = fn;
    mw->cfg.work_ctx = ctx;
    return TB_OK;
}

int tb_mw_set_result(tb_mw *mw, tb_mw_result_fn fn, void *ctx)
{
    if (!mw)
        return TB_ERR_INVALID;
    mw->cfg.result = fn;
    mw->cfg.result_ctx = ctx;
    return TB_OK;
}

int tb_mw_set_generator(tb_mw *mw, uint64_t ntasks, tb_mw_gen_fn fn, void *ctx)
{
    if (!mw || !fn)
        return TB_ERR_INVALID;
    if (mw->nadded > 0 || mw->ran)
        return TB_ERR_STATE;
    mw->have_gen = 1;
    mw->cfg.gen = fn;
    mw->cfg.gen_ctx = ctx;
    mw->cfg.ntasks = ntasks;
    mw->bag.gen = fn;
    mw->bag.gen_ctx = ctx;
    return TB_OK;
}

int tb_mw_add_task(tb_mw *mw, const void *data, size_t len)
{
    if (!mw || (len > 0 && !data))
        return TB_ERR_INVALID;
    if (mw->rank != 0 || mw->have_gen || mw->ran)
        return TB_ERR_STATE;
    if (len > UINT32_MAX)
        return TB_ERR_RANGE;
    TB_CHECK(tb__queue_push(&mw->bag, mw->nadded, data, len));
    mw->nadded++;
    return TB_OK;
}

int tb_mw_reserve(tb_mw *mw, uint64_t ntasks, size_t payload_bytes)
{
    if (!mw)
        return TB_ERR_INVALID;
    if (mw->rank != 0)
        return TB_OK;
    return tb__queue_reserve(&mw->bag, ntasks, payload_bytes);
}

int tb_mw_set_trace(tb_mw *mw, tb_trace *tr)
{
    if (!mw)
        return TB_ERR_INVALID;
    mw->trace = tr;
    return TB_OK;
}

int tb_mw_set_progress(tb_mw *mw, FILE *stream)
{
    if (!mw)
        return TB_ERR_INVALID;
    mw->progress = stream;
    return TB_OK;
}

/* Every rank must agree on the configuration; a mismatch would hang. */
static int check_agreement(tb_mw *mw)
{
    long v[4] = {mw->cfg.nmasters, (long)mw->cfg.chunk, mw->have_gen, mw->cfg.work != NULL};
    long lo[4], hi[4];
    MPI_Allreduce(v, lo, 4, MPI_LONG, MPI_MIN, mw->comm);
    MPI_Allreduce(v, hi, 4, MPI_LONG, MPI_MAX, mw->comm);
    if (memcmp(lo, hi, sizeof lo) != 0) {
        if (mw->rank == 0)
            TB_LOG_ERR("tb_mw_run: ranks disagree on policy, chunk size or generator");
        return TB_ERR_INVALID;
    }
    if (!lo[3]) {
        if (mw->rank == 0)
            TB_LOG_ERR("tb_mw_run: no worker function was set (tb_mw_set_worker)");
        return TB_ERR_STATE;
    }
    return TB_OK;
}

static void build_summary(tb_mw *mw, const tb__mw_node *node, double wall)
{
    tb_mw_summary *s = &mw->summary;
    memset(s, 0, sizeof *s);
    s->ranks = mw->size;
    s->masters = mw->cfg.nmasters;
    snprintf(s->policy, sizeof s->policy, "%s", mw->cfg.policy);
    s->chunk = mw->cfg.chunk;
    s->tasks = mw->cfg.ntasks;
    s->wall_s = wall;
    if (mw->rank != 0)
        return;
    s->results = tb__mw_node_results(node);
    s->tasks_per_s = wall > 0 ? (double)s->results / wall : 0.0;
    s->rank = mw->infos;
    s->failed = tb__mw_node_failure(node, &s->failed_task, &s->failed_rank, &s->failed_code);
    double *idle = malloc((size_t)mw->size * sizeof *idle);
    size_t nw = 0;
    double frac = 0;
    for (int r = 0; r < mw->size; r++) {
        const tb_mw_rank_info *ri = &mw->infos[r];
        s->messages += ri->msgs_sent;
        if (ri->is_master)
            continue;
        if (idle)
            idle[nw] = ri->idle_s;
        nw++;
        frac += ri->total_s > 0 ? ri->idle_s / ri->total_s : 0.0;
    }
    s->worker_idle_fraction_mean = nw ? frac / (double)nw : 0.0;
    if (idle)
        tb_stats_compute(idle, nw, &s->worker_idle_s);
    free(idle);
}

static int gather_infos(tb_mw *mw, const tb_mw_rank_info *mine)
{
    if (mw->rank == 0) {
        free(mw->infos);
        mw->infos = calloc((size_t)mw->size, sizeof *mw->infos);
    }
    /* Everyone enters the gather even if rank 0's allocation failed. */
    int ok = mw->rank != 0 || mw->infos != NULL;
    MPI_Gather(mine, (int)sizeof *mine, MPI_BYTE, ok ? (void *)mw->infos : NULL,
               (int)sizeof *mine, MPI_BYTE, 0, mw->comm);
    return ok ? TB_OK : TB_ERR_NOMEM;
}

int tb_mw_run(tb_mw *mw)
{
    if (!mw)
        return TB_ERR_INVALID;
    if (mw->ran)
        return TB_ERR_STATE;
    mw->ran = 1;
    TB_CHECK(check_agreement(mw));
    if (!mw->have_gen) {
        uint64_t n = mw->nadded;
        MPI_Bcast(&n, 1, MPI_UINT64_T, 0, mw->comm);
        mw->cfg.ntasks = n;
    } else if (mw->rank == 0) {
        TB_CHECK(tb__queue_push_range(&mw->bag, 0, mw->cfg.ntasks));
    }

    tb_progress *prog = NULL;
    if (mw->rank == 0 && mw->progress) {
        double interval = 1.0;
        tb_env_double("TENBIN_PROGRESS_INTERVAL", &interval);
        TB_CHECK(tb_progress_create(&prog, mw->progress, "tasks", mw->cfg.ntasks, interval));
    }
    tb_tp *tp = NULL;
    tb__mw_node node;
    int rc = tb_tp_mpi_create(&tp, mw->comm);
    if (rc == TB_OK)
        rc = tb__mw_node_init(&node, &mw->cfg, mw->rank, mw->rank == 0 ? &mw->bag : NULL,
                              mw->trace, prog);
    if (rc != TB_OK) {
        /* Local resource failure before the protocol started: the others
         * would wait for us forever, so stop them all. */
        TB_LOG_ERR("rank %d: cannot start the master-worker run: %s", mw->rank, tb_strerror(rc));
        MPI_Abort(mw->comm, 1);
        return rc;
    }
    if (mw->trace) {
        char name[64];
        snprintf(name, sizeof name, "rank %d (%s)", mw->rank,
                 node.info.is_master ? "master" : "worker");
        tb_trace_set_process_name(mw->trace, name);
    }

    MPI_Barrier(mw->comm);
    double t0 = tb_wtime();
    node.trace_t0 = t0;
    rc = tb_tp_mpi_run(tp, &node.base);
    double wall = tb_wtime() - t0;
    if (rc != TB_OK) {
        TB_LOG_ERR("rank %d: master-worker protocol failed: %s; aborting the job", mw->rank,
                   tb_strerror(rc));
        MPI_Abort(mw->comm, 1);
        return rc;
    }
    tb__mw_node_finish_info(&node);
    tb_tp_mpi_counts(tp, &node.info.msgs_sent, &node.info.msgs_recv, &node.info.bytes_sent,
                     &node.info.bytes_recv);
    rc = gather_infos(mw, &node.info);
    build_summary(mw, &node, wall);
    int status = node.status;
    tb__mw_node_free(&node);
    tb_tp_mpi_destroy(&tp);
    tb_progress_destroy(&prog);
    if (rc != TB_OK)
        return rc;
    return status == TB_OK ? TB_OK : TB_ERR_TASK;
}

int tb_mw_get_summary(const tb_mw *mw, tb_mw_summary *out)
{
    if (!mw || !out)
        return TB_ERR_INVALID;
    if (!mw->ran)
        return TB_ERR_STATE;
    *out = mw->summary;
    return TB_OK;
}

static void print_masters(const tb_mw_summary *s, FILE *out)
{
    if (!s->rank)
        return;
    fprintf(out, "  tasks per master ");
    for (int r = 0; r < s->ranks; r++)
        if (s->rank[r].is_master)
            fprintf(out, " r%d:%" PRIu64, r, s->rank[r].tasks_assigned);
    fputc('\n', out);
}

void tb_mw_summary_print(const tb_mw_summary *s, FILE *out)
{
    fprintf(out, "summary: %d ranks, policy %s (%d master%s), %u task%s per message\n", s->ranks,
            s->policy, s->masters, s->masters == 1 ? "" : "s", s->chunk,
            s->chunk == 1 ? "" : "s");
    fprintf(out, "  tasks             %" PRIu64 " done in %.3f s (%.1f tasks/s)\n", s->results,
            s->wall_s, s->tasks_per_s);
    print_masters(s, out);
    if (s->worker_idle_s.n == 0)
        fprintf(out, "  worker idle       no workers: the masters computed every task\n");
    else
        fprintf(out, "  worker idle       mean %.1f%% of run time; idle s: median %.3f, "
                     "min %.3f, max %.3f\n",
                100.0 * s->worker_idle_fraction_mean, s->worker_idle_s.median,
                s->worker_idle_s.min, s->worker_idle_s.max);
    fprintf(out, "  messages          %" PRIu64 "\n", s->messages);
    if (s->failed)
        fprintf(out, "  FAILED            task %" PRIu64 " on rank %d: %s (code %d)\n",
                s->failed_task, s->failed_rank, tb_strerror(s->failed_code), s->failed_code);
}

int tb_mw_summary_json(const tb_mw_summary *s, tb_buf *out)
{
    TB_CHECK(tb_buf_printf(out,
                           "\"ranks\": %d, \"policy\": \"%s\", \"masters\": %d, \"chunk\": %u, "
                           "\"tasks\": %" PRIu64 ", \"results\": %" PRIu64 ", \"wall_s\": %.6f, "
                           "\"tasks_per_s\": %.3f, \"worker_idle_fraction_mean\": %.6f, "
                           "\"worker_idle_s\": {\"mean\": %.6f, \"median\": %.6f, \"min\": %.6f, "
                           "\"max\": %.6f}, \"messages\": %" PRIu64 ", \"failed\": %s",
                           s->ranks, s->policy, s->masters, s->chunk, s->tasks, s->results,
                           s->wall_s, s->tasks_per_s, s->worker_idle_fraction_mean,
                           s->worker_idle_s.mean, s->worker_idle_s.median, s->worker_idle_s.min,
                           s->worker_idle_s.max, s->messages, s->failed ? "true" : "false"));
    if (s->failed)
        TB_CHECK(tb_buf_printf(out,
                               ", \"failed_task\": %" PRIu64 ", \"failed_rank\": %d, "
                               "\"failed_code\": %d, \"failed_error\": \"%s\"",
                               s->failed_task, s->failed_rank, s->failed_code,
                               tb_strerror(s->failed_code)));
    if (!s->rank)
        return TB_OK;
    TB_CHECK(tb_buf_printf(out, ", \"tasks_assigned\": ["));
    const char *sep = "";
    for (int r = 0; r < s->ranks; r++) {
        if (!s->rank[r].is_master)
            continue;
        TB_CHECK(tb_buf_printf(out, "%s{\"rank\": %d, \"tasks\": %" PRIu64 "}", sep, r,
                               s->rank[r].tasks_assigned));
        sep = ", ";
    }
    TB_CHECK(tb_buf_printf(out, "], \"per_rank\": ["));
    for (int r = 0; r < s->ranks; r++) {
        const tb_mw_rank_info *ri = &s->rank[r];
        TB_CHECK(tb_buf_printf(out,
                               "%s{\"rank\": %d, \"role\": \"%s\", \"tasks_computed\": %" PRIu64
                               ", \"busy_s\": %.6f, \"idle_s\": %.6f, \"total_s\": %.6f, "
                               "\"msgs_sent\": %" PRIu64 ", \"msgs_recv\": %" PRIu64 "}",
                               r ? ", " : "", r, ri->is_master ? "master" : "worker",
                               ri->tasks_computed, ri->busy_s, ri->idle_s, ri->total_s,
                               ri->msgs_sent, ri->msgs_recv));
    }
    return tb_buf_printf(out, "]");
}
