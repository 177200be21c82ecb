/*
 * mw.c - the public task-bag API and its MPI driver: configuration, the
 * run (one node actor on the MPI transport), and the gathered summary.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "tenbin/core.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/refuse.h"
#include "core/strset.h"
#include "run/coll.h"
#include "run/run.h"
#include "run/agree.h"
#include "mw/chunk.h"
#include "mw/mw_internal.h"
#include "sim/sim.h"
#include "tenbin/mw.h"

static void init_defaults(tb_mw *mw);

struct tb_mw {
    MPI_Comm comm;
    int rank, size;
    char err[TB__ERR_LINE]; /* the last failure's line (tb_mw_error) */
    tb__mw_cfg cfg;
    tb__queue bag;          /* rank 0: tasks added, or the generator's range */
    int have_gen;
    uint64_t nadded;
    int warned_add;        /* tb_mw_add_task has logged a refusal */
    tb_trace *trace;
    char *trace_path;
    FILE *progress;
    const tb_platform *plat;  /* simulated runs */
    tb_mw_cost_fn cost;
    void *cost_ctx;
    int ran;
    tb_mw_summary summary;
    tb_mw_rank_info *infos; /* rank 0: one per rank */
    tb_mw_masters_point *mchanges; /* rank 0: the summary's masters_changes */
    tb_buf partial;         /* tb_mw_set_reduce: this rank's partial after the run */
    double task_timeout;    /* real runs: seconds a task may run, 0: no limit */
    char *ckpt_path;        /* tb_mw_set_checkpoint, or NULL */
    double ckpt_interval;
    char *resume_path;      /* tb_mw_set_resume, or NULL */
    char *identity;         /* tb_mw_set_identity, or NULL */
    tb__mw_journal journal; /* rank 0 */
};

int tb_mw_create(tb_mw **out, MPI_Comm comm)
{
    tb_mw *mw = calloc(1, sizeof *mw);
    if (!mw)
        return TB_ERR_NOMEM;
    if (tb__run_comm_dup(comm, &mw->comm, &mw->rank, &mw->size) != TB_OK) {
        free(mw);
        return TB_ERR_MPI;
    }
    init_defaults(mw);
    *out = mw;
    return TB_OK;
}

int tb_mw_create_sim(tb_mw **out, const tb_platform *plat, int ranks)
{
    if (!out || !plat || ranks < 1)
        return TB_ERR_INVALID;
    if ((size_t)ranks > tb_platform_cores(plat))
        return TB_ERR_SIZE;
    tb_mw *mw = calloc(1, sizeof *mw);
    if (!mw)
        return TB_ERR_NOMEM;
    mw->comm = MPI_COMM_NULL;
    mw->plat = plat;
    mw->size = ranks;
    init_defaults(mw);
    *out = mw;
    return TB_OK;
}

static void init_defaults(tb_mw *mw)
{
    tb__queue_init(&mw->bag, NULL, NULL);
    mw->cfg.nranks = mw->size;
    mw->cfg.err = mw->err;
    mw->cfg.errlen = sizeof mw->err;
    mw->cfg.nmasters = 1;
    /* The policy and chunk rule start as the registry's defaults, so that a
     * bad TENBIN_MW_POLICY or TENBIN_MW_CHUNK below leaves them there. */
    tb_mw_set_policy(mw, tb_env_default("TENBIN_MW_POLICY"));
    tb_mw_set_chunking(mw, tb_env_default("TENBIN_MW_CHUNK"));
    long fwd, window;
    double timeout;
    if (tb_env_double("TENBIN_MW_TASK_TIMEOUT", &timeout) == TB_OK &&
        tb_mw_set_task_timeout(mw, timeout) != TB_OK && mw->rank == 0)
        TB_LOG_WARN("ignoring TENBIN_MW_TASK_TIMEOUT=%g: not a number of seconds >= 0", timeout);
    /* Out of range (negative, or absurdly many): quietly the default. */
    tb_env_int_in("TENBIN_MW_WINDOW", 0, (1L << 24) - 1, &window);
    mw->cfg.window = (int)window;
    const char *policy = NULL, *chunk = NULL;
    tb_env_int_in("TENBIN_MW_FORWARD_BYTES", 0, LONG_MAX, &fwd);
    if (tb_env_string("TENBIN_MW_CHUNK", &chunk) == TB_OK && chunk &&
        tb_mw_set_chunking(mw, chunk) != TB_OK && mw->rank == 0)
        TB_LOG_WARN("ignoring TENBIN_MW_CHUNK=%s: not a count >= 1 or a chunk rule (gss, tss, "
                    "fac, wf, awf, af, auto)", chunk);
    mw->cfg.forward_bytes = (size_t)fwd > TB__MW_MSG_MAX ? TB__MW_MSG_MAX : (size_t)fwd;
    if (tb_env_string("TENBIN_MW_POLICY", &policy) == TB_OK && policy &&
        tb_mw_set_policy(mw, policy) != TB_OK && mw->rank == 0)
        TB_LOG_WARN("ignoring TENBIN_MW_POLICY=%s: not a policy for %d ranks", policy,
                    mw->size);
}

const char *tb_mw_error(const tb_mw *h) { return h ? h->err : ""; }

void tb_mw_destroy(tb_mw **pmw)
{
    if (!pmw || !*pmw)
        return;
    tb_mw *mw = *pmw;
    tb__queue_free(&mw->bag);
    free(mw->infos);
    free(mw->mchanges);
    free(mw->trace_path);
    free(mw->ckpt_path);
    free(mw->resume_path);
    free(mw->identity);
    tb__mw_journal_close(&mw->journal, NULL, 0);
    tb_buf_free(&mw->partial);
    tb__run_comm_free(&mw->comm);
    free(mw);
    *pmw = NULL;
}

#define POLICY_NAMES                                                                       \
    "single, multi:K (K >= 1), dynamic, dynamic:paper or dynamic:wait[:SHARE] (0 < SHARE <= 100), " \
    "optionally followed by ,chunk=RULE"
#define CHUNK_RULES "a count >= 1, gss, tss, fac, wf, awf, af or auto"

int tb_mw_set_policy(tb_mw *mw, const char *full)
{
    if (!mw || !full)
        return TB__REFUSE_H(mw, TB_ERR_INVALID, "tb_mw_set_policy: %s is NULL",
                            mw ? "the policy" : "the handle");
    /* "POLICY" or "POLICY,chunk=RULE" */
    char spec[sizeof mw->cfg.policy];
    const char *chunk = strstr(full, ",chunk=");
    size_t base = chunk ? (size_t)(chunk - full) : strlen(full);
    const char *keep = mw->cfg.policy;
    if (base >= sizeof spec)
        return TB__REFUSE_H(mw, TB_ERR_PARSE,
                            "tb_mw_set_policy: '%.40s...' is not a policy (expected " POLICY_NAMES
                            "); the policy stays %s",
                            full, keep);
    memcpy(spec, full, base);
    spec[base] = '\0';
    int kind = TB__CHUNK_FIXED;
    unsigned fixed = 0;
    if (chunk && tb__chunk_parse(chunk + 7, &kind, &fixed) != 0)
        return TB__REFUSE_H(mw, TB_ERR_PARSE,
                            "tb_mw_set_policy: '%s': unknown chunk rule (expected " CHUNK_RULES
                            "); the policy stays %s",
                            full, keep);
    long k;
    int dynamic = 0;
    double share = 0;
    if (strcmp(spec, "single") == 0) {
        k = 1;
    } else if (strcmp(spec, "dynamic:paper") == 0) {
        k = 1;
        dynamic = TB__MW_DYNAMIC_PAPER;
    } else if (strcmp(spec, "dynamic") == 0) {
        k = 1;
        dynamic = TB__MW_DYNAMIC_PREDICT;
    } else if (strncmp(spec, "dynamic:wait", 12) == 0 && (spec[12] == '\0' || spec[12] == ':')) {
        k = 1;
        dynamic = TB__MW_DYNAMIC_WAIT;
        share = 0.1;
        if (spec[12] == ':') {
            int rc = tb_parse_double(spec + 13, &share);
            if (rc == TB_OK && !(share > 0 && share <= 100))
                rc = TB_ERR_RANGE;
            if (rc != TB_OK)
                return TB__REFUSE_H(mw, rc,
                                    "tb_mw_set_policy: '%s': the share of waiting time must be "
                                    "a number in (0, 100]; the policy stays %s",
                                    full, keep);
        }
    } else if (strncmp(spec, "multi:", 6) == 0) {
        int rc = tb_parse_long(spec + 6, 1, 1L << 30, &k);
        if (rc != TB_OK)
            return TB__REFUSE_H(mw, rc,
                                "tb_mw_set_policy: '%s': K must be a whole number >= 1; the "
                                "policy stays %s",
                                full, keep);
        if (k > mw->size)
            return TB__REFUSE_H(mw, TB_ERR_SIZE,
                                "tb_mw_set_policy: '%s' needs at least %ld ranks, the "
                                "communicator has %d; the policy stays %s",
                                full, k, mw->size, keep);
    } else {
        return TB__REFUSE_H(mw, TB_ERR_PARSE,
                            "tb_mw_set_policy: '%s' is not a policy (expected " POLICY_NAMES
                            "); the policy stays %s",
                            full, keep);
    }
    mw->cfg.nmasters = (int)k;
    mw->cfg.dynamic = dynamic;
    mw->cfg.wait_split = share;
    snprintf(mw->cfg.policy, sizeof mw->cfg.policy, "%s", spec);
    if (chunk) {
        mw->cfg.chunk_kind = kind;
        mw->cfg.chunk = fixed;
    }
    return TB_OK;
}

void tb__mw_set_promote_hook(tb_mw *mw, tb__mw_promote_hook hook, void *ctx)
{
    mw->cfg.promote_hook = hook;
    mw->cfg.hook_ctx = ctx;
}

int tb_mw_set_chunk(tb_mw *mw, unsigned tasks_per_message)
{
    if (!mw || tasks_per_message == 0)
        return TB__REFUSE_H(mw, TB_ERR_INVALID, "tb_mw_set_chunk: %s",
                            !mw ? "the handle is NULL"
                                : "0 tasks per message (at least 1); the chunk rule is unchanged");
    mw->cfg.chunk = tasks_per_message;
    mw->cfg.chunk_kind = TB__CHUNK_FIXED;
    return TB_OK;
}

int tb_mw_set_chunking(tb_mw *mw, const char *rule)
{
    int kind;
    unsigned fixed;
    if (!mw)
        return TB__REFUSE_H(mw, TB_ERR_INVALID, "tb_mw_set_chunking: the handle is NULL");
    if (tb__chunk_parse(rule, &kind, &fixed) != 0)
        return TB__REFUSE_H(mw, TB_ERR_INVALID,
                            "tb_mw_set_chunking: '%s' is not a rule (expected " CHUNK_RULES
                            "); the chunk rule is unchanged",
                            rule ? rule : "(null)");
    mw->cfg.chunk_kind = kind;
    mw->cfg.chunk = fixed;
    return TB_OK;
}

int tb_mw_set_worker(tb_mw *mw, tb_mw_work_fn fn, void *ctx)
{
    if (!mw || !fn)
        return TB__REFUSE_H(mw, TB_ERR_INVALID, "tb_mw_set_worker: %s is NULL",
                            mw ? "the work function" : "the handle");
    mw->cfg.work = fn;
    mw->cfg.work_ctx = ctx;
    return TB_OK;
}

int tb_mw_set_result(tb_mw *mw, tb_mw_result_fn fn, void *ctx)
{
    if (!mw)
        return TB__REFUSE_H(mw, TB_ERR_INVALID, "tb_mw_set_result: the handle is NULL");
    mw->cfg.result = fn;
    mw->cfg.result_ctx = ctx;
    return TB_OK;
}

int tb_mw_set_reduce(tb_mw *mw, tb_mw_fold_fn fold, tb_mw_combine_fn combine, void *ctx)
{
    if (!mw || (!fold && combine))
        return TB__REFUSE_H(mw, TB_ERR_INVALID, "tb_mw_set_reduce: %s",
                            !mw ? "the handle is NULL"
                                : "a combine function without a fold function");
    if (mw->ran)
        return TB__REFUSE_H(mw, TB_ERR_STATE, "tb_mw_set_reduce: the bag has already run");
    mw->cfg.fold = fold;
    mw->cfg.combine = combine;
    mw->cfg.reduce_ctx = ctx;
    return TB_OK;
}

int tb_mw_get_partial(const tb_mw *mw, const void **data, size_t *len)
{
    if (!mw || !data || !len)
        return TB_ERR_INVALID;
    if (!mw->ran)
        return TB_ERR_STATE;
    *data = mw->partial.data;
    *len = mw->partial.len;
    return TB_OK;
}

int tb_mw_set_generator(tb_mw *mw, uint64_t ntasks, tb_mw_gen_fn fn, void *ctx)
{
    if (!mw || !fn)
        return TB__REFUSE_H(mw, TB_ERR_INVALID, "tb_mw_set_generator: %s is NULL",
                            mw ? "the generator" : "the handle");
    if (mw->nadded > 0 || mw->ran)
        return TB__REFUSE_H(mw, TB_ERR_STATE, "tb_mw_set_generator: %s",
                            mw->ran ? "the bag has already run"
                                    : "tasks were already added with tb_mw_add_task");
    mw->have_gen = 1;
    mw->cfg.gen = fn;
    mw->cfg.gen_ctx = ctx;
    mw->cfg.ntasks = ntasks;
    mw->bag.gen = fn;
    mw->bag.gen_ctx = ctx;
    return TB_OK;
}

int tb_mw_set_checkpoint(tb_mw *mw, const char *path, double interval_s)
{
    if (!mw || (path && !*path) || !(interval_s >= 0 && isfinite(interval_s)))
        return TB__REFUSE_H(mw, TB_ERR_INVALID, "tb_mw_set_checkpoint: %s",
                            !mw ? "the handle is NULL"
                                : path && !*path ? "an empty path"
                                                 : "expected an interval in seconds >= 0");
    if (mw->plat)
        return TB__REFUSE_H(mw, TB_ERR_UNSUPPORTED,
                            "tb_mw_set_checkpoint: a simulated run keeps no checkpoint");
    mw->ckpt_interval = interval_s;
    return tb__strset(&mw->ckpt_path, path);
}

int tb_mw_set_resume(tb_mw *mw, const char *path)
{
    if (!mw || (path && !*path))
        return TB__REFUSE_H(mw, TB_ERR_INVALID, "tb_mw_set_resume: %s",
                            !mw ? "the handle is NULL" : "an empty path");
    if (mw->plat)
        return TB__REFUSE_H(mw, TB_ERR_UNSUPPORTED,
                            "tb_mw_set_resume: a simulated run resumes nothing");
    return tb__strset(&mw->resume_path, path);
}

int tb_mw_set_identity(tb_mw *mw, const char *what)
{
    if (!mw)
        return TB__REFUSE_H(mw, TB_ERR_INVALID, "tb_mw_set_identity: the handle is NULL");
    return tb__strset(&mw->identity, what);
}

/* Rank 0, before a real run: the results of --resume handed over, the
 * tasks left queued, the checkpoint opened; every rank learns the verdict. */
static int prepare_checkpoint(tb_mw *mw)
{
    int rc = TB_OK;
    tb__mw_journal *j = &mw->journal;
    const char *resume =
        mw->rank == 0 ? tb_checkpoint_resume_from(mw->resume_path, mw->ckpt_path) : NULL;
    int same = resume && mw->ckpt_path && strcmp(resume, mw->ckpt_path) == 0;
    if (mw->rank == 0 && (mw->cfg.fold || mw->cfg.combine) && (mw->ckpt_path || mw->resume_path))
        rc = TB__FAIL_H(mw, TB_ERR_UNSUPPORTED,
                        "tb_mw_run: a run whose results are folded (tb_mw_set_reduce) keeps no "
                        "checkpoint: it has no result per task to keep");
    /* a new file gets what the old one had as it is read */
    if (rc == TB_OK && mw->rank == 0 && mw->ckpt_path && !same)
        rc = tb__mw_journal_open(j, mw->ckpt_path, mw->ckpt_interval, 0, mw->identity,
                                 mw->cfg.ntasks, mw->err, sizeof mw->err);
    if (rc == TB_OK && mw->rank == 0 && resume)
        rc = tb__mw_journal_resume(j, resume, mw->identity, mw->cfg.ntasks,
                                   mw->cfg.result, mw->cfg.result_ctx, mw->err, sizeof mw->err);
    if (rc == TB_OK && mw->rank == 0 && same)
        rc = tb__mw_journal_open(j, mw->ckpt_path, mw->ckpt_interval, 1, mw->identity,
                                 mw->cfg.ntasks, mw->err, sizeof mw->err);
    if (rc == TB_OK && mw->rank == 0)
        rc = tb__mw_journal_sync(j, mw->err, sizeof mw->err);
    if (rc == TB_OK && mw->rank == 0) {
        if (mw->have_gen)
            rc = j->done ? tb__queue_push_unmarked(&mw->bag, mw->cfg.ntasks, j->done)
                         : tb__queue_push_range(&mw->bag, 0, mw->cfg.ntasks);
        else if (j->done)
            tb__queue_drop_marked(&mw->bag, j->done);
    }
    if (mw->rank == 0 && rc != TB_OK && !mw->err[0])
        TB__ERR_H(mw, "tb_mw_run: cannot queue the tasks: %s", tb_strerror(rc));
    else if (mw->rank == 0 && rc != TB_OK && rc != TB_ERR_UNSUPPORTED)
        tb_log(TB_LOG_ERROR, "%s", mw->err); /* the checkpoint's line: kept and logged */
    if (rc == TB_OK && mw->rank == 0 && mw->journal.open)
        mw->cfg.journal = j;
    tb__run_bcast(mw->comm, &rc, sizeof rc);
    return rc;
}

int tb_mw_add_task(tb_mw *mw, const void *data, size_t len)
{
    if (!mw)
        return TB__REFUSE_H(mw, TB_ERR_INVALID, "tb_mw_add_task: the handle is NULL");
    int rc = len > 0 && !data                  ? TB_ERR_INVALID
             : mw->rank != 0 || mw->have_gen || mw->ran ? TB_ERR_STATE
             : len > TB__MW_MSG_MAX - 64       ? TB_ERR_RANGE
                                               : TB_OK;
    if (rc != TB_OK) {
        /* once per bag: a loop adding tasks on every rank would repeat it */
        if (!mw->warned_add++)
            TB_LOG_WARN("tb_mw_add_task: %s (not logged again for this bag)",
                        rc == TB_ERR_INVALID ? "a task of length > 0 with NULL data"
                        : mw->rank != 0 ? "tasks are added on rank 0 only (or use "
                                          "tb_mw_set_generator on every rank)"
                        : mw->have_gen ? "the bag has a generator"
                        : mw->ran      ? "the bag has already run"
                                       : "a task over 1 GiB");
        return rc;
    }
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
        return TB__REFUSE_H(mw, TB_ERR_INVALID, "tb_mw_set_trace: the handle is NULL");
    if (mw->plat && tr)
        return TB__REFUSE_H(mw, TB_ERR_UNSUPPORTED,
                            "tb_mw_set_trace: a simulated bag writes its "
                            "trace with tb_mw_set_trace_file");
    mw->trace = tr;
    return TB_OK;
}

int tb_mw_set_trace_file(tb_mw *mw, const char *path)
{
    if (!mw)
        return TB__REFUSE_H(mw, TB_ERR_INVALID, "tb_mw_set_trace_file: the handle is NULL");
    return tb__strset(&mw->trace_path, path);
}

int tb_mw_set_task_timeout(tb_mw *mw, double seconds)
{
    if (!mw || !(seconds >= 0) || seconds > 1e9)
        return TB__REFUSE_H(
            mw, TB_ERR_INVALID, "tb_mw_set_task_timeout: %s",
            !mw ? "the handle is NULL"
                : "expected seconds in [0, 1e9] (0: none); the timeout is unchanged");
    mw->task_timeout = seconds;
    return TB_OK;
}

int tb_mw_set_cost(tb_mw *mw, tb_mw_cost_fn fn, void *ctx)
{
    if (!mw)
        return TB__REFUSE_H(mw, TB_ERR_INVALID, "tb_mw_set_cost: the handle is NULL");
    mw->cost = fn;
    mw->cost_ctx = ctx;
    return TB_OK;
}

int tb_mw_set_progress(tb_mw *mw, FILE *stream)
{
    if (!mw)
        return TB__REFUSE_H(mw, TB_ERR_INVALID, "tb_mw_set_progress: the handle is NULL");
    mw->progress = stream;
    return TB_OK;
}

/* Every rank must agree on the configuration; a mismatch would hang. */
static int check_agreement(tb_mw *mw)
{
    const tb__agree_item items[] = {
        tb__agree_int("the number of masters (tb_mw_set_policy)", mw->cfg.nmasters),
        tb__agree_int("the dynamic policy (tb_mw_set_policy)", mw->cfg.dynamic),
        tb__agree_double("dynamic:wait's share (tb_mw_set_policy)", mw->cfg.wait_split),
        tb__agree_int("the chunk rule (tb_mw_set_chunking)", mw->cfg.chunk_kind),
        tb__agree_int("the chunk size (tb_mw_set_chunk)", (int64_t)mw->cfg.chunk),
        tb__agree_int("having a generator (tb_mw_set_generator)", mw->have_gen),
        tb__agree_int("having a work function (tb_mw_set_worker)", mw->cfg.work != NULL),
        tb__agree_int("having a fold function (tb_mw_set_reduce)", mw->cfg.fold != NULL),
        tb__agree_int("having a combine function (tb_mw_set_reduce)", mw->cfg.combine != NULL),
    };
    int rc = tb__run_agree(mw->comm, "tb_mw_run", items, (int)(sizeof items / sizeof items[0]));
    if (rc != TB_OK)
        return rc;
    if (!mw->cfg.work) {
        if (mw->rank == 0)
            TB__ERR_H(mw, "tb_mw_run: no worker function was set (tb_mw_set_worker)");
        return TB_ERR_STATE;
    }
    return TB_OK;
}

static void build_summary(tb_mw *mw, const tb__mw_node *node, double makespan, double wall,
                          uint64_t events)
{
    tb_mw_summary *s = &mw->summary;
    memset(s, 0, sizeof *s);
    s->ranks = mw->size;
    s->masters = mw->cfg.nmasters;
    snprintf(s->policy, sizeof s->policy, "%s", mw->cfg.policy);
    s->chunk = mw->cfg.chunk;
    snprintf(s->chunking, sizeof s->chunking, "%s", tb__chunk_name(mw->cfg.chunk_kind));
    s->tasks = mw->cfg.ntasks;
    s->simulated = mw->plat != NULL;
    s->makespan_s = makespan;
    s->wall_s = wall;
    s->events = events;
    if (mw->rank != 0)
        return;
    s->resumed = mw->journal.resumed;
    s->checkpoint_s = mw->journal.spent;
    s->results = tb__mw_node_results(node) + s->resumed;
    s->reduced = mw->cfg.fold != NULL;
    if (s->reduced) {
        s->results = 0;
        for (int r = 0; r < mw->size; r++)
            s->results += mw->infos[r].results_folded;
    }
    s->masters_max = tb__mw_node_masters_max(node);
    free(mw->mchanges);
    mw->mchanges = NULL;
    size_t nch = tb__mw_node_masters_changes(node, NULL, 0);
    if (nch > 0 && (mw->mchanges = malloc(nch * sizeof *mw->mchanges)) != NULL) {
        s->nmasters_changes = tb__mw_node_masters_changes(node, mw->mchanges, nch);
        s->masters_changes = mw->mchanges;
    }
    s->first_promotion_s = -1.0;
    for (int r = 0; r < mw->size; r++) {
        const tb_mw_rank_info *ri = &mw->infos[r];
        s->promotions += ri->promotions;
        if (ri->last_task_end_s > s->last_task_end_s)
            s->last_task_end_s = ri->last_task_end_s;
        s->merges += ri->merges;
        if (ri->promotions && (s->first_promotion_s < 0 || ri->first_promotion_s < s->first_promotion_s))
            s->first_promotion_s = ri->first_promotion_s;
    }
    s->tasks_per_s = makespan > 0 ? (double)(s->results - s->resumed) / makespan : 0.0;
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

/* Stop every rank when this one cannot go on: the others are already in the
 * protocol or a collective and would wait for it forever. */
static int abort_run(tb_mw *mw, const char *what, int rc)
{
    TB__ERR_H(mw, "rank %d: %s: %s; aborting the job", mw->rank, what, tb_strerror(rc));
    tb__run_abort(mw->comm);
    return rc;
}

static int gather_infos(tb_mw *mw, const tb_mw_rank_info *mine)
{
    if (mw->rank == 0) {
        free(mw->infos);
        mw->infos = calloc((size_t)mw->size, sizeof *mw->infos);
        if (!mw->infos)
            return abort_run(mw, "cannot gather the summary", TB_ERR_NOMEM);
    }
    tb__run_gather(mw->comm, mine, mw->infos, sizeof *mine);
    return TB_OK;
}

/* The simulator's cost hook: the task just ran in node `a`. */
static double sim_cost(void *ctx, tb_actor *a, uint64_t job, const tb_compute *c, double cpu_s)
{
    const tb_mw *mw = ctx;
    const tb__mw_node *n = (const tb__mw_node *)a;
    (void)job;
    (void)c;
    if (!mw->cost)
        return cpu_s;
    return mw->cost(mw->cost_ctx, n->cur_id, n->cur_data, n->cur_len, n->scratch.data,
                    n->scratch.len);
}

/* What the run layer's callbacks need (run/run.h): the handle, the
 * simulated ranks' traces, the progress lines. */
typedef struct run_ctx {
    tb_mw *mw;
    tb_trace **traces; /* simulated with a trace file: one per rank; else NULL */
    tb_trace *own;     /* real with a trace file and no tb_mw_set_trace: this rank's */
    tb_progress *prog;
} run_ctx;

static void name_trace(tb_trace *tr, const tb__mw_node *n)
{
    char name[64];
    snprintf(name, sizeof name, "rank %d (%s)", n->base.rank,
             n->info.is_master ? "master" : "worker");
    tb_trace_set_process_name(tr, name);
}

static int run_node_init(void *ctx, tb_actor *a, int rank)
{
    run_ctx *rc = ctx;
    tb_mw *mw = rc->mw;
    tb_trace *tr = mw->plat ? NULL : mw->trace;
    if (rc->traces) {
        TB_CHECK(tb_trace_create(&rc->traces[rank], rank, 0.0));
        tr = rc->traces[rank];
    }
    tb__mw_node *n = (tb__mw_node *)a;
    TB_CHECK(tb__mw_node_init(n, &mw->cfg, rank, rank == 0 ? &mw->bag : NULL, tr, rc->prog));
    if (rc->traces)
        name_trace(tr, n);
    return TB_OK;
}

/* Real runs: the trace's origin and the node's are the run's start. */
static void run_node_started(void *ctx, tb_actor *a, double t0)
{
    run_ctx *rc = ctx;
    tb_mw *mw = rc->mw;
    tb__mw_node *n = (tb__mw_node *)a;
    if (mw->trace_path && !mw->trace && tb_trace_create(&rc->own, mw->rank, t0) == TB_OK)
        n->trace = rc->own;
    if (n->trace)
        name_trace(n->trace, n);
    n->trace_t0 = t0;
}

static const tb_trace *node_trace(void *ctx, tb_actor *a)
{
    (void)ctx;
    return ((const tb__mw_node *)a)->trace;
}

static void run_node_fini(void *ctx, tb_actor *a)
{
    (void)ctx;
    tb__mw_node_free((tb__mw_node *)a);
}

static const tb__run_ops run_ops = {sizeof(tb__mw_node), run_node_init, run_node_started,
                                    run_node_fini};

/* Run every rank in this process on the simulated transport. */
static int run_sim(tb_mw *mw)
{
    if (!mw->cfg.work)
        return TB_ERR_STATE;
    if (mw->have_gen)
        TB_CHECK(tb__queue_push_range(&mw->bag, 0, mw->cfg.ntasks));
    else
        mw->cfg.ntasks = mw->nadded;
    int P = mw->size;
    run_ctx ctx = {mw, NULL, NULL, NULL};
    int rc = TB_OK;
    if (mw->trace_path && !(ctx.traces = calloc((size_t)P, sizeof *ctx.traces)))
        rc = TB_ERR_NOMEM;
    if (rc == TB_OK && mw->progress) {
        /* the rate and ETA of simulating, in real time (the summary's times
         * are virtual) */
        rc = tb_progress_create(&ctx.prog, mw->progress, "simulated tasks", mw->cfg.ntasks,
                                TB_PROGRESS_INTERVAL_ENV);
    }
    tb__run run = {.what = "the master-worker run",
                   .plat = mw->plat,
                   .ranks = P,
                   .cost = sim_cost,
                   .cost_ctx = mw,
                   .cost_cpu = mw->cost == NULL,
                   .err = mw->err,
                   .errlen = sizeof mw->err};
    if (rc == TB_OK)
        rc = tb__run_go(&run, &run_ops, &ctx);
    int set_up = run.started; /* nothing to write from a half-made setup */
    if (rc == TB_OK) {
        free(mw->infos);
        mw->infos = calloc((size_t)P, sizeof *mw->infos);
        rc = mw->infos ? TB_OK : TB_ERR_NOMEM;
    }
    if (rc == TB_OK) {
        for (int r = 0; r < P; r++) {
            tb__mw_node *n = (tb__mw_node *)run.actors[r];
            tb__mw_node_finish_info(n);
            n->info.msgs_sent = run.counts[r].msgs_sent;
            n->info.msgs_recv = run.counts[r].msgs_recv;
            n->info.bytes_sent = run.counts[r].bytes_sent;
            n->info.bytes_recv = run.counts[r].bytes_recv;
            mw->infos[r] = n->info;
        }
        tb__mw_node *root = (tb__mw_node *)run.actors[0];
        build_summary(mw, root, run.end_s, run.wall_s, run.events);
        if (root->status != TB_OK)
            rc = TB_ERR_TASK;
        tb_buf_free(&mw->partial);
        mw->partial = root->partial;
        root->partial = (tb_buf)TB_BUF_INIT;
    }
    if (set_up && rc != TB_ERR_NOMEM && ctx.traces) {
        int trc = tb__run_write_trace(&run, node_trace, NULL, mw->trace_path);
        if (rc == TB_OK)
            rc = trc;
    }
    tb__run_end(&run, &run_ops, &ctx);
    for (int r = 0; ctx.traces && r < P; r++)
        tb_trace_destroy(&ctx.traces[r]);
    free(ctx.traces);
    tb_progress_destroy(&ctx.prog);
    return rc;
}

int tb_mw_run(tb_mw *mw)
{
    if (!mw)
        return TB_ERR_INVALID;
    if (mw->ran)
        return TB_ERR_STATE;
    mw->ran = 1;
    if (mw->cfg.fold && mw->cfg.result) {
        if (mw->rank == 0)
            TB__ERR_H(mw, "tb_mw_run: both a result function and a reduction were set "
                          "(tb_mw_set_result, tb_mw_set_reduce): results go to one of them");
        return TB_ERR_STATE;
    }
    mw->cfg.timed = mw->cfg.dynamic == TB__MW_DYNAMIC_WAIT || tb__chunk_timed(mw->cfg.chunk_kind);
    if (mw->plat)
        return run_sim(mw);
    TB_CHECK(check_agreement(mw));
    if (!mw->have_gen) {
        uint64_t n = mw->nadded;
        tb__run_bcast(mw->comm, &n, sizeof n);
        mw->cfg.ntasks = n;
    }
    TB_CHECK(prepare_checkpoint(mw));

    tb_progress *prog = NULL;
    if (mw->rank == 0 && mw->progress) {
        int rc = tb_progress_create(&prog, mw->progress, "tasks", mw->cfg.ntasks,
                                    TB_PROGRESS_INTERVAL_ENV);
        if (rc != TB_OK)
            return abort_run(mw, "cannot start progress lines", rc);
    }
    run_ctx ctx = {mw, NULL, NULL, prog};
    tb__run run = {.what = "the master-worker run",
                   .comm = mw->comm,
                   .task_timeout = mw->task_timeout,
                   .err = mw->err,
                   .errlen = sizeof mw->err};
    int rc = tb__run_go(&run, &run_ops, &ctx); /* a failure has ended the job */
    if (rc != TB_OK) {
        tb__run_end(&run, &run_ops, &ctx);
        tb_progress_destroy(&prog);
        return rc;
    }
    tb__mw_node *node = (tb__mw_node *)run.actors[0];
    if (mw->rank == 0 && mw->journal.open) { /* the whole run is in it */
        char why[256];
        if (tb__mw_journal_close(&mw->journal, why, sizeof why) != TB_OK)
            TB_LOG_ERR("checkpoint: %s", why);
    }
    tb__mw_node_finish_info(node);
    node->info.msgs_sent = run.counts[0].msgs_sent;
    node->info.msgs_recv = run.counts[0].msgs_recv;
    node->info.bytes_sent = run.counts[0].bytes_sent;
    node->info.bytes_recv = run.counts[0].bytes_recv;
    rc = gather_infos(mw, &node->info);
    build_summary(mw, node, run.wall_s, run.wall_s, 0);
    int status = node->status;
    tb_buf_free(&mw->partial);
    mw->partial = node->partial;
    node->partial = (tb_buf)TB_BUF_INIT;
    if (mw->trace_path) {
        /* On failure the writer has logged the path and the reason. */
        int trc = tb__run_write_trace(&run, node_trace, NULL, mw->trace_path);
        if (rc == TB_OK)
            rc = trc;
    }
    tb__run_end(&run, &run_ops, &ctx);
    tb_progress_destroy(&prog);
    tb_trace_destroy(&ctx.own);
    if (status != TB_OK)
        return TB_ERR_TASK;
    return rc;
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
        if (s->rank[r].is_master || s->rank[r].times_master > 0)
            fprintf(out, " r%d:%" PRIu64, r, s->rank[r].tasks_assigned);
    fputc('\n', out);
}

void tb_mw_summary_print(const tb_mw_summary *s, FILE *out)
{
    if (strcmp(s->chunking, "fixed") == 0 || !s->chunking[0])
        fprintf(out, "summary: %d ranks, policy %s (%d master%s), %u task%s per message\n",
                s->ranks, s->policy, s->masters, s->masters == 1 ? "" : "s", s->chunk,
                s->chunk == 1 ? "" : "s");
    else
        fprintf(out, "summary: %d ranks, policy %s (%d master%s), chunks by %s\n", s->ranks,
                s->policy, s->masters, s->masters == 1 ? "" : "s", s->chunking);
    if (s->failed) /* no rate: the run did not do its work */
        fprintf(out, "  tasks             %" PRIu64 " of %" PRIu64 " done when the run failed, "
                     "after %.6f s%s\n", s->results, s->tasks, s->makespan_s,
                s->simulated ? " of virtual time" : "");
    else if (s->simulated)
        fprintf(out, "  tasks             %" PRIu64 " done in %.6f s of virtual time (%.1f tasks/s); "
                     "%" PRIu64 " events simulated in %.3f s of real time\n",
                s->results, s->makespan_s, s->tasks_per_s, s->events, s->wall_s);
    else
        fprintf(out, "  tasks             %" PRIu64 " done in %.3f s (%.1f tasks/s)\n", s->results,
                s->makespan_s, s->tasks_per_s);
    if (s->resumed)
        fprintf(out, "  resumed           %" PRIu64 " of them from a checkpoint, not computed "
                     "again\n", s->resumed);
    if (s->checkpoint_s > 0)
        fprintf(out, "  checkpoint        %.3f s on rank 0 (%.2f %% of the run)\n",
                s->checkpoint_s, s->makespan_s > 0 ? 100 * s->checkpoint_s / s->makespan_s : 0);
    print_masters(s, out);
    if (s->reduced)
        fprintf(out, "  results           folded on the masters that received them\n");
    if (s->worker_idle_s.n == 0)
        fprintf(out, "  worker idle       no workers: the masters computed every task\n");
    else
        fprintf(out, "  worker idle       mean %.1f%% of run time; idle s: median %.3f, "
                     "min %.3f, max %.3f\n",
                100.0 * s->worker_idle_fraction_mean, s->worker_idle_s.median,
                s->worker_idle_s.min, s->worker_idle_s.max);
    fprintf(out, "  messages          %" PRIu64 "\n", s->messages);
    if (s->promotions > 0)
        fprintf(out, "  masters           at most %d; %" PRIu64 " promotions, the first after %.6f s; "
                     "%" PRIu64 " early merges\n",
                s->masters_max, s->promotions, s->first_promotion_s, s->merges);
    if (s->failed)
        fprintf(out, "  FAILED            task %" PRIu64 " on rank %d: %s (code %d)\n",
                s->failed_task, s->failed_rank, tb_strerror(s->failed_code), s->failed_code);
}

int tb_mw_summary_json(const tb_mw_summary *s, const char *extra, tb_buf *out)
{
    if (!s || !out)
        return TB_ERR_INVALID;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return TB_ERR_NOMEM;
    int bad = 0;
    bad |= tb__json_int(o, "ranks", s->ranks);
    bad |= tb__json_str(o, "policy", s->policy);
    bad |= tb__json_int(o, "masters", s->masters);
    bad |= tb__json_int(o, "chunk", (long)s->chunk);
    bad |= tb__json_str(o, "chunking", s->chunking);
    bad |= tb__json_u64(o, "tasks", s->tasks);
    bad |= tb__json_u64(o, "results", s->results);
    bad |= tb__json_u64(o, "resumed", s->resumed);
    if (s->checkpoint_s > 0) /* only with a checkpoint: simulated runs keep none */
        bad |= tb__json_num(o, "checkpoint_s", s->checkpoint_s);
    bad |= tb__json_bool(o, "simulated", s->simulated);
    bad |= tb__json_num(o, "makespan_s", s->makespan_s);
    bad |= tb__json_num(o, "last_task_end_s", s->last_task_end_s);
    bad |= tb__json_u64(o, "events", s->events);
    bad |= tb__json_num(o, "wall_s", s->wall_s);
    /* no rate for a run that failed */
    bad |= tb__json_num(o, "tasks_per_s", s->failed ? NAN : s->tasks_per_s);
    bad |= tb__json_num(o, "worker_idle_fraction_mean", s->worker_idle_fraction_mean);
    cJSON *idle = cJSON_AddObjectToObject(o, "worker_idle_s");
    bad |= !idle;
    if (idle) {
        bad |= tb__json_num(idle, "mean", s->worker_idle_s.mean);
        bad |= tb__json_num(idle, "median", s->worker_idle_s.median);
        bad |= tb__json_num(idle, "min", s->worker_idle_s.min);
        bad |= tb__json_num(idle, "max", s->worker_idle_s.max);
    }
    bad |= tb__json_u64(o, "messages", s->messages);
    bad |= tb__json_int(o, "masters_max", s->masters_max);
    bad |= tb__json_u64(o, "promotions", s->promotions);
    bad |= tb__json_num(o, "first_promotion_s", s->first_promotion_s);
    bad |= tb__json_u64(o, "merges", s->merges);
    bad |= tb__json_str(o, "results_where", s->reduced ? "masters" : "root");
    bad |= tb__json_bool(o, "failed", s->failed);
    if (s->failed) {
        bad |= tb__json_u64(o, "failed_task", s->failed_task);
        bad |= tb__json_int(o, "failed_rank", s->failed_rank);
        bad |= tb__json_int(o, "failed_code", s->failed_code);
        bad |= tb__json_str(o, "failed_error", tb_strerror(s->failed_code));
    }
    if (s->rank && !bad) {
        /* The master count over time: every promotion's time, and [t, masters]
         * after each change. */
        cJSON *pt = cJSON_AddArrayToObject(o, "promotion_times_s");
        cJSON *mt = cJSON_AddArrayToObject(o, "masters_over_time");
        bad |= !pt || !mt;
        for (size_t i = 0; i < s->nmasters_changes && !bad; i++)
            if (s->masters_changes[i].delta > 0)
                bad |= !cJSON_AddItemToArray(pt, tb__json_num_item(s->masters_changes[i].t_s));
        for (size_t i = 0; i <= s->nmasters_changes && !bad; i++) {
            cJSON *p = cJSON_CreateArray();
            bad |= !cJSON_AddItemToArray(mt, p);
            if (!bad) {
                bad |= !cJSON_AddItemToArray(
                    p, tb__json_num_item(i ? s->masters_changes[i - 1].t_s : 0));
                bad |= !cJSON_AddItemToArray(
                    p, cJSON_CreateNumber(i ? s->masters_changes[i - 1].masters : s->masters));
            }
        }
    }
    if (!s->rank)
        return tb__json_emit(o, bad, extra, out);
    /* The per-rank tables, a row a rank, as text: at a million simulated
     * ranks their cJSON objects took 7 s and 480 MB. */
    size_t len0 = out->len;
    static const char *const tables[] = {"tasks_assigned", "per_rank", NULL};
    int rc = tb__json_emit_open(o, bad, extra, tables, out);
    if (rc != TB_OK)
        return rc;
    rc = tb__json_put_str(out, ", \"tasks_assigned\": [");
    int first = 1;
    for (int r = 0; r < s->ranks && rc == TB_OK; r++) {
        if (!s->rank[r].is_master && s->rank[r].times_master == 0)
            continue;
        rc |= tb__json_put_str(out, first ? "{\"rank\": " : ", {\"rank\": ");
        rc |= tb__json_put_u64(out, (uint64_t)r);
        rc |= tb__json_put_member_u64(out, "tasks", s->rank[r].tasks_assigned);
        rc |= tb__json_put_str(out, "}");
        first = 0;
    }
    rc |= tb__json_put_str(out, "], \"per_rank\": [");
    for (int r = 0; r < s->ranks && rc == TB_OK; r++) {
        const tb_mw_rank_info *ri = &s->rank[r];
        rc |= tb__json_put_str(out, r ? ", {\"rank\": " : "{\"rank\": ");
        rc |= tb__json_put_u64(out, (uint64_t)r);
        rc |= tb__json_put_str(out, ri->is_master ? ", \"role\": \"master\""
                                                  : ", \"role\": \"worker\"");
        rc |= tb__json_put_member_u64(out, "tasks_computed", ri->tasks_computed);
        rc |= tb__json_put_member_num(out, "busy_s", ri->busy_s);
        rc |= tb__json_put_member_num(out, "idle_s", ri->idle_s);
        rc |= tb__json_put_member_num(out, "total_s", ri->total_s);
        rc |= tb__json_put_member_u64(out, "msgs_sent", ri->msgs_sent);
        rc |= tb__json_put_member_u64(out, "msgs_recv", ri->msgs_recv);
        rc |= tb__json_put_str(out, "}");
    }
    rc |= tb__json_put_str(out, "]}");
    if (rc != TB_OK) { /* nothing half-written */
        out->len = len0;
        return TB_ERR_NOMEM;
    }
    return TB_OK;
}
