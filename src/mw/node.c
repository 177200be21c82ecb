/*
 * node.c - the master-worker policy as an event-driven state machine.
 *
 * One actor per rank.  Workers compute the tasks of a TASK message one by one
 * and answer with one RESULT message.  Masters (one for `single`, K for
 * `multi:K`) follow S1's Fig. 3 without promotion: hand a task message to each
 * idle worker; when the last task is handed out, ask a member of the request
 * targets R for more (rflag keeps the master alive while it waits); answer
 * requests with half of the queue or a refusal; a refusal drops the target
 * from R.  A master whose group is only itself is its own worker.
 *
 * This file holds the actor's handlers, which pass each event on to the
 * rank's role, and the making of masters: the static ones at the start, a
 * child master when a worker is promoted.  The roles are in worker.c,
 * master.c, request.c, dynamic.c and tree.c (node_internal.h); how a run
 * ends is in tree.c.
 */
#include "tenbin/core.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/errbuf.h"
#include "mw/node_internal.h"

static int child_start(tb__mw_node *n, int parent, const void *data, size_t len);

static int node_start(tb_actor *a)
{
    tb__mw_node *n = (tb__mw_node *)a;
    n->t_start = n->t_wait = tb_tp_now(a);
    if (n->master) {
        n->master->period_start = n->t_start;
        return tb__mw_master_start(n);
    }
    return TB_OK;
}

/* A worker's messages other than TASK (and REDUCE for anyone). */
TB__MW_COLD static int node_message_rare(tb__mw_node *n, int src, int tag, const void *data,
                                         size_t len)
{
    tb_actor *a = &n->base;
    if (tag == TB__TAG_REDUCE)
        return tb__mw_node_reduce(n, src, data, len);
    if (tag == TB__TAG_MSTART)
        return child_start(n, src, data, len);
    if (tag == TB__TAG_REQ) {
        /* A child that has just handed itself back: nothing to give. */
        tb_buf empty = TB_BUF_INIT;
        int rc = tb_tp_send(a, src, TB__TAG_REFUSE, &empty);
        tb_buf_free(&empty);
        return rc;
    }
    if (tag == TB__TAG_ABORT)
        return TB_OK; /* sent to us while we were a master; nothing to stop */
    if (tag == TB__TAG_STOP) {
        int32_t status;
        const unsigned char *ranks;
        uint32_t cnt;
        TB_CHECK(tb__mw_unpack_stop(data, len, &status, &ranks, &cnt));
        int kids;
        TB_CHECK(tb__mw_stop_relay(a, status, ranks, cnt, &n->out, &kids));
        double now = tb_tp_now(a);
        n->idle_s += now - n->t_wait;
        n->info.total_s = now - n->t_start;
        n->status = status;
        return tb__mw_node_end(n, src, kids);
    }
    TB_LOG_ERR("worker rank %d: unexpected message '%s' (tag %d) from rank %d", a->rank,
               tb__mw_tag_name(tag), tag, src);
    return TB_ERR_PROTOCOL;
}

/* Every message: a task to a worker and a master's messages pass on at once
 * (tail calls; the rest is out of line). */
static int node_message(tb_actor *a, int src, int tag, const void *data, size_t len)
{
    tb__mw_node *n = (tb__mw_node *)a;
    if (n->master && tag != TB__TAG_REDUCE)
        return tb__mw_master_message(n, src, tag, data, len);
    if (tag == TB__TAG_TASK)
        return tb__mw_worker_begin(n, src, data, len);
    return node_message_rare(n, src, tag, data, len);
}

static int node_timer(tb_actor *a, uint64_t id)
{
    tb__mw_node *n = (tb__mw_node *)a;
    if (id != TIMER_DISPATCH || !n->master)
        return TB_ERR_PROTOCOL;
    n->master->resume = 0;
    TB_CHECK(tb__mw_master_dispatch_idle(n));
    if (n->master->resume)
        return TB_OK;
    TB_CHECK(tb__mw_master_maybe_request(n));
    return tb__mw_master_check_done(n);
}

/* Rank 0 was signalled to stop: what was delivered is all that is kept. */
static int node_interrupt(tb_actor *a, int sig)
{
    tb__mw_node *n = (tb__mw_node *)a;
    (void)sig;
    const tb__mw_cfg *c = n->cfg;
    uint64_t got = tb__mw_node_results(n) + (c->journal ? c->journal->resumed : 0);
    char kept[512] = "";
    if (c->journal && c->journal->open) {
        char why[256];
        if (tb__mw_journal_sync(c->journal, why, sizeof why) == TB_OK)
            snprintf(kept, sizeof kept, "; the checkpoint %s holds %" PRIu64 " of them",
                     c->journal->w.path, tb__mw_journal_records(c->journal));
        else
            snprintf(kept, sizeof kept, "; the checkpoint could not be written: %s", why);
    }
    tb__errf(c->err, c->errlen, TB_ERR_INTERRUPTED,
             "%" PRIu64 " of %" PRIu64 " tasks were done and delivered%s", got, c->ntasks, kept);
    return TB_ERR_INTERRUPTED;
}

const tb_actor_ops tb__mw_node_ops = {
    sizeof(tb_actor_ops), node_start, node_message, tb__mw_worker_computed, node_timer,
    node_interrupt,
};

/* The parts every master has: ownership, stacks, request targets, for the
 * ranks lo .. lo + span - 1 (tb__mw_master.lo). */
static int master_alloc(tb__mw_node *n, int lo, int span, tb__mw_master **out)
{
    const tb__mw_cfg *c = n->cfg;
    size_t P = (size_t)span;
    tb__mw_master *m = calloc(1, sizeof *m);
    if (!m)
        return TB_ERR_NOMEM;
    *out = m;
    m->parent = -1;
    m->lo = lo;
    m->span = span;
    m->own = calloc(P, 1);
    m->dest = malloc(P * sizeof *m->dest);
    m->idle = malloc(P * sizeof *m->idle);
    m->capR = (size_t)c->nmasters + 4;
    m->R = malloc(m->capR * sizeof *m->R);
    m->deferred = malloc((size_t)c->nmasters * sizeof *m->deferred);
    m->deferred_w = malloc((size_t)c->nmasters * sizeof *m->deferred_w);
    m->deferred_e = malloc((size_t)c->nmasters * sizeof *m->deferred_e);
    if (!m->own || !m->dest || !m->idle || !m->R || !m->deferred || !m->deferred_w ||
        !m->deferred_e)
        return TB_ERR_NOMEM;
    tb__queue_init(&m->own_q, c->gen, c->gen_ctx);
    m->q = &m->own_q;
    TB_CHECK(tb__chunker_init(&m->ch, c->chunk_kind, c->chunk, lo, span));
    if (c->dynamic) {
        m->winlen = c->window > 0 ? c->window : 2 * c->nranks;
        m->wincap = m->winlen < 64 ? m->winlen : 64; /* grows as it fills (master.c) */
        m->win = calloc((size_t)m->wincap, sizeof *m->win);
        m->sent_at = calloc(P, sizeof *m->sent_at);
        if (!m->win || !m->sent_at)
            return TB_ERR_NOMEM;
    }
    if (c->dynamic == TB__MW_DYNAMIC_PREDICT || c->dynamic == TB__MW_DYNAMIC_WAIT) {
        m->child_dry = calloc(P, 1);
        if (!m->child_dry)
            return TB_ERR_NOMEM;
    }
    if (c->dynamic == TB__MW_DYNAMIC_WAIT) {
        m->wait_min = malloc(P * sizeof *m->wait_min);
        if (!m->wait_min)
            return TB_ERR_NOMEM;
        for (size_t i = 0; i < P; i++)
            m->wait_min[i] = WAIT_SKIP;
    }
    return tb__mw_pack_results_begin(&m->fwd);
}

void tb__mw_master_free(tb__mw_master *m)
{
    if (!m)
        return;
    tb__queue_free(&m->own_q);
    tb__chunker_free(&m->ch);
    free(m->own);
    free(m->dest);
    free(m->idle);
    free(m->R);
    free(m->deferred);
    free(m->deferred_w);
    free(m->win);
    free(m->sent_at);
    free(m->wait_min);
    free(m->kn);
    free(m->child_dry);
    free(m->inR);
    free(m->deferred_e);
    free(m->mtraj);
    tb_buf_free(&m->mc);
    tb_buf_free(&m->msg);
    tb_buf_free(&m->fwd);
    free(m);
}

static int master_init(tb__mw_node *n, int k, tb__queue *root_bag)
{
    const tb__mw_cfg *c = n->cfg;
    tb__mw_master *m;
    int lo = tb__mw_group_start(c, k), hi = tb__mw_group_start(c, k + 1);
    int rc = master_alloc(n, lo, hi - lo, &m);
    n->master = m;
    if (rc != TB_OK)
        return rc;
    m->k = k;
    m->is_root = k == 0;
    if (m->is_root)
        m->q = root_bag;
    m->masters_max = c->nmasters;
    /* Idle stack popped from the end: hand out to the lowest rank first.
     * Alone in its group, a master is its own worker. */
    if (hi - lo == 1) {
        TB__MW_AT(m, own, lo) = OWN_IDLE;
        m->idle[m->nidle++] = lo;
    }
    for (int r = hi - 1; r > lo; r--) {
        TB__MW_AT(m, own, r) = OWN_IDLE;
        m->idle[m->nidle++] = r;
    }
    for (int j = 1; j < c->nmasters; j++)
        TB_CHECK(tb__mw_add_target(m, tb__mw_group_start(c, (k + j) % c->nmasters)));
    if (!c->dynamic && c->nmasters > 2) {
        m->kn = calloc((size_t)c->nmasters, sizeof *m->kn);
        m->inR = malloc((size_t)c->nmasters);
        if (!m->kn || !m->inR)
            return TB_ERR_NOMEM;
        memset(m->inR, 1, (size_t)c->nmasters);
        m->inR[k] = 0;
    }
    return TB_OK;
}

/* A worker receives "master start" (S1 Fig. 4): it becomes a child master
 * of `parent` with the workers the parent frees for it and a share of tasks. */
/* The range of ranks an MSTART gives (its two lists) and the child itself. */
static int mstart_range(tb__mw_node *n, const void *data, size_t len, int *lo, int *hi)
{
    tb_buf in;
    tb_buf_view(&in, data, len);
    *lo = *hi = tb__mw_self_rank(n);
    for (int list = 0; list < 2; list++) {
        uint32_t cnt;
        TB_CHECK(tb__mw_unpack_ranks(&in, &cnt));
        for (uint32_t i = 0; i < cnt; i++) {
            int32_t w;
            TB_CHECK(tb__mw_unpack_rank(&in, &w));
            if (w < 0 || w >= n->cfg->nranks)
                return TB_ERR_PROTOCOL;
            if (w < *lo)
                *lo = w;
            if (w > *hi)
                *hi = w;
        }
    }
    return TB_OK;
}

static int child_start(tb__mw_node *n, int parent, const void *data, size_t len)
{
    tb__mw_master *m;
    int lo, hi;
    TB_CHECK(mstart_range(n, data, len, &lo, &hi));
    int rc = master_alloc(n, lo, hi - lo + 1, &m);
    if (rc != TB_OK) {
        tb__mw_master_free(m);
        return rc;
    }
    n->master = m;
    double now = tb_tp_now(&n->base);
    n->idle_s += now - n->t_wait;
    n->info.times_master++;
    m->k = -1;
    m->parent = parent;
    m->period_start = now;
    m->have_initial = 1;
    TB_CHECK(tb__mw_add_target(m, parent));
    tb_buf in;
    uint32_t cnt;
    tb_buf_view(&in, data, len);
    TB_CHECK(tb__mw_unpack_ranks(&in, &cnt));
    for (uint32_t i = 0; i < cnt; i++) {
        int32_t w;
        TB_CHECK(tb__mw_unpack_rank(&in, &w));
        if (!tb__mw_in(m, w))
            return TB_ERR_PROTOCOL;
        TB__MW_AT(m, own, w) = OWN_ARRIVING;
        m->narriving++;
    }
    TB_CHECK(tb__mw_unpack_ranks(&in, &cnt));
    TB_CHECK(tb__mw_master_take_idle(n, &in, cnt));
    TB_CHECK(tb__mw_unpack_mstart_end(&in, &m->eager));
    TB_CHECK(tb__queue_take(m->q, in.data + in.pos, tb_buf_remaining(&in)));
    tb__chunker_restart(&m->ch);
    tb__mw_master_counter(n, 1);
    TB_CHECK(tb__mw_master_dispatch_idle(n));
    TB_CHECK(tb__mw_master_maybe_request(n));
    return tb__mw_master_check_done(n);
}

int tb__mw_node_init(tb__mw_node *n, const tb__mw_cfg *cfg, int rank, tb__queue *root_bag,
                     tb_trace *trace, tb_progress *progress)
{
    memset(n, 0, sizeof *n);
    n->base.ops = &tb__mw_node_ops;
    n->base.rank = rank;
    n->cfg = cfg;
    n->trace = trace;
    n->progress = rank == 0 ? progress : NULL;
    n->info.rank = rank;
    for (int k = 0; k < cfg->nmasters; k++) {
        if (tb__mw_group_start(cfg, k) == rank) {
            n->info.is_master = 1;
            return master_init(n, k, root_bag);
        }
    }
    return TB_OK;
}

void tb__mw_node_free(tb__mw_node *n)
{
    tb__mw_master_free(n->master);
    n->master = NULL;
    tb_buf_free(&n->in);
    tb_buf_free(&n->out);
    tb_buf_free(&n->scratch);
    tb_buf_free(&n->spare);
    tb_buf_free(&n->partial);
}

int tb__mw_node_failure(const tb__mw_node *n, uint64_t *task, int *rank, int *code)
{
    const tb__mw_master *m = n->master;
    if (!m || !m->failed || !m->is_root)
        return 0;
    *task = m->fail_task;
    *rank = m->fail_rank;
    *code = m->fail_code;
    return 1;
}

uint64_t tb__mw_node_results(const tb__mw_node *n) { return n->master ? n->master->results : 0; }

int tb__mw_node_masters_max(const tb__mw_node *n)
{
    return n->master ? n->master->masters_max : 0;
}

size_t tb__mw_node_masters_changes(const tb__mw_node *n, tb_mw_masters_point *out, size_t cap)
{
    const tb__mw_master *m = n->master;
    if (!m)
        return 0;
    for (size_t i = 0; i < m->mtraj_len && i < cap; i++)
        out[i] = m->mtraj[i];
    return m->mtraj_len;
}

void tb__mw_node_finish_info(tb__mw_node *n)
{
    /* kept in the node's first lines while it ran */
    n->info.busy_s = n->busy_s;
    n->info.idle_s = n->idle_s;
    n->info.tasks_computed = n->tasks_computed;
    if (n->tasks_computed > 0)
        n->info.last_task_end_s = n->t_last_end - n->t_start;
    if (n->info.total_s <= 0)
        n->info.total_s = tb_tp_now(&n->base) - n->t_start;
}
