/*
 * master.c - a master of the node actor (the one of `single`, the K of
 * `multi:K`, or a dynamic child): hand task messages to idle workers, take
 * their results and deliver them (to the fold or result function, or on to
 * the root), record a failure and stop the run, carry the changes of the
 * master count to the root, and handle a master's messages.  At the start
 * the root splits the bag among the K static masters.
 */
#include "tenbin/core.h"

#include <stdlib.h>

#include "mw/node_internal.h"

static int master_fail(tb__mw_node *n, uint64_t task, int rank, int code);

void tb__mw_master_counter_now(tb__mw_node *n, int force)
{
    tb__mw_master *m = n->master;
    double now = tb_tp_now(&n->base);
    if (!force && now - m->last_counter < 1e-3)
        return;
    m->last_counter = now;
    double t = n->trace_t0 + now;
    tb_trace_counter(n->trace, "queue", "tasks", t, (double)tb__queue_count(m->q));
    tb_trace_counter(n->trace, "busy workers", "workers", t, (double)m->nbusy);
}

/* The workers a master has or is about to have (not those leaving it). */
int tb__mw_master_workers(const tb__mw_master *m)
{
    return m->nbusy + m->nidle + m->narriving;
}

static int master_dispatch(tb__mw_node *n, int w)
{
    tb__mw_master *m = n->master;
    TB_CHECK(tb__mw_pack_task_begin(&m->msg));
    uint32_t cnt = 0;
    int gen_failed = 0;
    uint64_t id = 0;
    /* w itself is out of the counts here: just back from a chunk, or taken
     * from the idle stack. */
    int workers = tb__mw_master_workers(m) + 1;
    uint64_t want = tb__chunk_next_fast(&m->ch, w, tb__queue_count(m->q), workers,
                                   n->cfg->timed ? tb_tp_now(&n->base) : 0.0);
    while (cnt < want && tb__queue_count(m->q) > 0 &&
           (cnt == 0 || m->msg.len < TB__MW_MSG_MAX / 2)) {
        int rc = tb__queue_pop_record(m->q, &m->msg, &id);
        if (rc == TB_ERR_TASK) {
            gen_failed = 1;
            break;
        }
        TB_CHECK(rc);
        cnt++;
    }
    tb__mw_pack_task_end(&m->msg, cnt);
    if (gen_failed) {
        /* A task that cannot be made fails the run like a task that fails. */
        TB_LOG_INFO("the generator failed for task %llu: %s", (unsigned long long)id,
                    tb_strerror(m->q->gen_error));
        if (cnt == 0) {
            TB_CHECK(master_fail(n, id, tb__mw_self_rank(n), m->q->gen_error));
            m->idle[m->nidle++] = w;
            return tb__mw_master_check_done(n);
        }
    }
    n->info.tasks_assigned += cnt;
    m->nbusy++;
    TB__MW_AT(m, own, w) = OWN_BUSY;
    tb__mw_master_counter(n, 0);
    if (w == tb__mw_self_rank(n))
        TB_CHECK(tb__mw_worker_begin(n, w, m->msg.data, m->msg.len));
    else
        TB_CHECK(tb_tp_send(&n->base, w, TB__TAG_TASK, &m->msg));
    /* The tasks made before the generator failed have left: master_fail
     * builds its own messages in m->msg, so only now. */
    if (gen_failed)
        TB_CHECK(master_fail(n, id, tb__mw_self_rank(n), m->q->gen_error));
    if (m->win && w != tb__mw_self_rank(n)) {
        /* S1's overload test: right after an assignment, how many messages
         * have arrived and wait; averaged over the last winlen assignments. */
        int c = tb_tp_arrived(&n->base, NULL, -1);
        if (m->winfill == m->winlen) {
            m->winsum -= m->win[m->winpos];
        } else {
            if (m->winpos >= m->wincap) { /* not wrapped yet: winpos == winfill */
                size_t cap = (size_t)m->wincap;
                if (tb_grow(&m->win, &cap, (size_t)m->winpos + 1, sizeof *m->win, 64) != TB_OK)
                    return TB_ERR_NOMEM;
                m->wincap = cap < (size_t)m->winlen ? (int)cap : m->winlen;
            }
            m->winfill++;
        }
        m->win[m->winpos] = c;
        m->winsum += c;
        m->winpos = (m->winpos + 1) % m->winlen;
        m->last_waiting = c;
        TB__MW_AT(m, sent_at, w) = tb_tp_now(&n->base);
    }
    return tb__mw_master_maybe_request(n);
}

int tb__mw_master_dispatch_idle(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    int fan = n->cfg->dynamic == TB__MW_DYNAMIC_PREDICT || n->cfg->dynamic == TB__MW_DYNAMIC_WAIT;
    int budget = fan ? 4 : -1;
    while (m->nidle > 0 && !m->failed && tb__queue_count(m->q) > 0) {
        if (budget-- == 0) {
            /* Let what has arrived meanwhile be seen (in simulation, a
             * handler is one event: nothing arrives during it). */
            if (!m->resume) {
                m->resume = 1;
                TB_CHECK(tb_tp_timer(&n->base, tb_tp_now(&n->base), TIMER_DISPATCH));
            }
            return TB_OK;
        }
        int yes = 0;
        if (fan && m->nidle >= 4 && tb__queue_count(m->q) >= 2) {
            /* The rule wants eight idle workers (each side keeps four or
             * more); a test hook may fan out from four. */
            int h = n->cfg->promote_hook
                        ? n->cfg->promote_hook(n->cfg->hook_ctx, tb__mw_self_rank(n),
                                               m->idle[m->nidle - 1], n->info.tasks_assigned)
                        : 0;
            yes = h != 0 ? h > 0
                         : m->nidle >= 8 && !m->merged_below &&
                               ((m->eager && m->nidle >= 16) || tb_tp_arrived(&n->base, NULL, -1) > 0);
        }
        if (yes) {
            TB_CHECK(tb__mw_master_fan_out(n));
            if (n->master != m || m->done_sent)
                return TB_OK;
            continue;
        }
        TB_CHECK(master_dispatch(n, m->idle[--m->nidle]));
    }
    return TB_OK;
}

int tb__mw_master_flush_fwd(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (m->fwd_n == 0)
        return TB_OK;
    tb__mw_pack_results_end(&m->fwd, m->fwd_n);
    TB_CHECK(tb_tp_send(&n->base, 0, TB__TAG_FWD, &m->fwd));
    m->fwd_sent += m->fwd_n;
    m->fwd_n = 0;
    return tb__mw_pack_results_begin(&m->fwd);
}

/* Tell the masters this one made to stop handing out tasks. */
static int master_abort_children(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    for (int r = m->lo; r < m->lo + m->span && m->nchildren > 0; r++) {
        if (tb__mw_own(m, r) != OWN_CHILD)
            continue;
        tb__mw_pack_empty(&m->msg);
        TB_CHECK(tb_tp_send(&n->base, r, TB__TAG_ABORT, &m->msg));
    }
    return TB_OK;
}

static int master_abort_all(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (m->abort_sent)
        return TB_OK;
    m->abort_sent = 1;
    for (int k = 1; k < n->cfg->nmasters; k++) {
        tb__mw_pack_empty(&m->msg);
        TB_CHECK(tb_tp_send(&n->base, tb__mw_group_start(n->cfg, k), TB__TAG_ABORT, &m->msg));
    }
    return TB_OK;
}

/* Record a failure and stop handing out tasks. */
static int master_fail(tb__mw_node *n, uint64_t task, int rank, int code)
{
    tb__mw_master *m = n->master;
    if (m->failed)
        return TB_OK;
    m->failed = 1;
    m->fail_task = task;
    m->fail_rank = rank;
    m->fail_code = code;
    tb__queue_clear(m->q);
    TB_CHECK(master_abort_children(n));
    if (m->is_root)
        return master_abort_all(n);
    TB_CHECK(tb__mw_pack_fail(&m->msg, task, rank, code));
    return tb_tp_send(&n->base, tb__mw_up_rank(n), TB__TAG_FAIL, &m->msg);
}

/* One successful result reaches the master. */
static int master_deliver(tb__mw_node *n, uint64_t id, const void *data, uint32_t len)
{
    tb__mw_master *m = n->master;
    if (n->cfg->fold) { /* consumed here: nothing travels to the root */
        if (m->failed)
            return TB_OK;
        n->info.results_folded++;
        int rc = n->cfg->fold(n->cfg->reduce_ctx, &n->partial, id, data, len);
        if (rc != TB_OK) {
            TB_LOG_INFO("fold function failed for task %llu on rank %d: %s",
                        (unsigned long long)id, tb__mw_self_rank(n), tb_strerror(rc));
            return master_fail(n, id, tb__mw_self_rank(n), rc);
        }
        if (n->progress)
            tb_progress_update(n->progress, n->info.results_folded);
        return TB_OK;
    }
    if (!m->is_root) {
        if (m->fwd_n > 0 && m->fwd.len + 16 + len > TB__MW_MSG_MAX)
            TB_CHECK(tb__mw_master_flush_fwd(n));
        TB_CHECK(tb__mw_pack_result(&m->fwd, id, TB_OK, data, len));
        m->fwd_n++;
        return m->fwd.len >= n->cfg->forward_bytes ? tb__mw_master_flush_fwd(n) : TB_OK;
    }
    m->results++;
    if (n->cfg->result && !m->failed) {
        int rc = n->cfg->result(n->cfg->result_ctx, id, data, len);
        if (rc != TB_OK) {
            TB_LOG_INFO("result function failed for task %llu: %s", (unsigned long long)id,
                        tb_strerror(rc));
            return master_fail(n, id, tb__mw_self_rank(n), rc);
        }
    }
    if (n->cfg->journal && !m->failed) /* delivered: kept for a resumed run */
        TB_CHECK(tb__mw_journal_add(n->cfg->journal, id, data, len));
    if (n->progress)
        tb_progress_update(n->progress, m->results);
    return TB_OK;
}

/* Parse result records (RESULT or FWD body) and deliver them. */
static int master_records(tb__mw_node *n, int src, const void *data, size_t len)
{
    tb_buf in;
    tb__buf_view(&in, data, len);
    uint32_t cnt;
    TB_CHECK(tb__mw_unpack_results_count(&in, &cnt));
    for (uint32_t i = 0; i < cnt; i++) {
        uint64_t id;
        int32_t status;
        const void *p;
        uint32_t plen;
        TB_CHECK(tb__mw_unpack_result(&in, &id, &status, &p, &plen));
        if (status != TB_OK) {
            TB_LOG_INFO("task %llu failed on rank %d: %s (code %d)", (unsigned long long)id,
                        src, tb_strerror(status), (int)status);
            TB_CHECK(master_fail(n, id, src, status));
            continue;
        }
        TB_CHECK(master_deliver(n, id, p, plen));
    }
    return tb_buf_remaining(&in) == 0 ? TB_OK : TB_ERR_PARSE;
}

/* Count of masters (+1 or -1 at time t) travels up the tree to the root. */
/* A change of the number of masters (+1 or -1 at time t).  The changes
 * travel to the root with the messages that end a master's work (RETURN,
 * DONE) instead of one message each, hop by hop up the promotion tree (at
 * the end of a 4096-rank run hundreds of returns sent thousands of them
 * through the masters near the root).  The root orders them at the end. */
int tb__mw_master_count(tb__mw_node *n, int delta, double t)
{
    tb__mw_master *m = n->master;
    if (m->is_root) {
        TB_CHECK(tb_grow(&m->mtraj, &m->mtraj_cap, m->mtraj_len, sizeof *m->mtraj, 64));
        m->mtraj[m->mtraj_len].t_s = t;
        m->mtraj[m->mtraj_len].delta = delta;
        m->mtraj_len++;
        return TB_OK;
    }
    TB_CHECK(tb__mw_pack_count(&m->mc, delta, t));
    m->mc_n++;
    return TB_OK;
}

/* Take the changes at in's position (from RETURN or DONE) as this master's. */
int tb__mw_master_take_counts(tb__mw_node *n, tb_buf *in)
{
    uint32_t cnt;
    TB_CHECK(tb__mw_unpack_counts(in, &cnt));
    for (uint32_t i = 0; i < cnt; i++) {
        int32_t delta;
        double t;
        TB_CHECK(tb__mw_unpack_count(in, &delta, &t));
        if (delta != 1 && delta != -1)
            return TB_ERR_PROTOCOL;
        TB_CHECK(tb__mw_master_count(n, delta, t));
    }
    return TB_OK;
}

/* Time order; at the same time a promotion before a return (a master
 * returns no earlier than it was made, so the count never goes below one:
 * with messages that cost nothing every change happens at 0, and the old
 * order, returns first, gave counts of 0, -1, -2, ...). */
static int cmp_mpoint(const void *a, const void *b)
{
    const tb_mw_masters_point *x = a, *y = b;
    if (x->t_s != y->t_s)
        return x->t_s < y->t_s ? -1 : 1;
    return (x->delta < y->delta) - (x->delta > y->delta);
}

/* Root, at the end: the changes in time order, the count after each, the
 * most masters at once (and the trace's counter). */
void tb__mw_root_order_counts(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (m->mtraj_len > 1)
        qsort(m->mtraj, m->mtraj_len, sizeof *m->mtraj, cmp_mpoint);
    int now = n->cfg->nmasters;
    m->masters_max = now;
    for (size_t i = 0; i < m->mtraj_len; i++) {
        now += m->mtraj[i].delta;
        m->mtraj[i].masters = now;
        if (now > m->masters_max)
            m->masters_max = now;
        if (n->trace)
            tb_trace_counter(n->trace, "masters", "masters", n->trace_t0 + m->mtraj[i].t_s,
                             (double)now);
    }
}

int tb__mw_master_result(tb__mw_node *n, int src, const void *data, size_t len)
{
    tb__mw_master *m = n->master;
    if (n->cfg->timed) {
        /* The tail: how long the worker waited, computed, and the sum of
         * its tasks' squared times. */
        double wait, comp, sq;
        uint32_t tasks;
        TB_CHECK(tb__mw_unpack_result_times(data, &len, &tasks, &wait, &comp, &sq));
        tb__chunk_observe(&m->ch, src, tasks, comp, sq, tb_tp_now(&n->base));
        if (n->cfg->dynamic == TB__MW_DYNAMIC_WAIT)
            TB_CHECK(tb__mw_master_wait_stats(n, src, wait, comp));
    }
    if (tb__mw_own(m, src) == OWN_BUSY && !m->win && !m->failed && src != tb__mw_self_rank(n) &&
        tb__queue_count(m->q) > 0) {
        /* The common case: the worker's next task goes out before its
         * results are handled, as a hand-written loop would send it, so the
         * result function and the bookkeeping overlap the worker's next
         * computation instead of delaying it (bench/run, P = 2: ...). */
        m->nbusy--;
        TB__MW_AT(m, own, src) = OWN_IDLE;
        m->hold_done = 1;
        int rc = master_dispatch(n, src);
        m->hold_done = 0;
        TB_CHECK(rc);
        TB_CHECK(master_records(n, src, data, len));
        return tb__mw_master_check_done(n);
    }
    TB_CHECK(master_records(n, src, data, len));
    if (tb__mw_own(m, src) == OWN_LEAVING) {
        /* Its last task for us is done: it now works for the child. */
        TB__MW_AT(m, own, src) = OWN_NONE;
        m->nleaving--;
        TB_CHECK(tb__mw_pack_free(&m->msg, src));
        TB_CHECK(tb_tp_send(&n->base, TB__MW_AT(m, dest, src), TB__TAG_FREE, &m->msg));
        tb__mw_master_counter(n, 0);
        return tb__mw_master_check_done(n);
    }
    if (tb__mw_own(m, src) != OWN_BUSY)
        return TB_ERR_PROTOCOL;
    if (m->win && !m->failed && src != tb__mw_self_rank(n) && tb__mw_master_should_promote(n, src))
        return tb__mw_master_promote(n, src);
    m->nbusy--;
    TB__MW_AT(m, own, src) = OWN_IDLE;
    if (!m->failed && tb__queue_count(m->q) > 0)
        TB_CHECK(master_dispatch(n, src));
    else
        m->idle[m->nidle++] = src;
    tb__mw_master_counter(n, 0);
    TB_CHECK(tb__mw_master_maybe_request(n));
    return tb__mw_master_check_done(n);
}

/* The root splits the bag into K contiguous shares: master k gets ids
 * [k*N/K, (k+1)*N/K) of the bag's order. */
static int root_split(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    int K = n->cfg->nmasters;
    uint64_t N = tb__queue_count(m->q);
    for (int k = K - 1; k >= 1; k--) {
        uint64_t share = (uint64_t)(k + 1) * N / (uint64_t)K - (uint64_t)k * N / (uint64_t)K;
        /* A large share goes in several messages; the last one says so. */
        do {
            uint64_t given = 0;
            TB_CHECK(tb__mw_pack_give(&m->msg, GIVE_INITIAL_PART));
            TB_CHECK(tb__queue_give(m->q, share, TB__MW_MSG_MAX, &m->msg, &given));
            share -= given;
            if (share == 0)
                tb__mw_pack_give_kind(&m->msg, GIVE_INITIAL);
            TB_CHECK(tb_tp_send(&n->base, tb__mw_group_start(n->cfg, k), TB__TAG_GIVE, &m->msg));
        } while (share > 0);
    }
    return TB_OK;
}

int tb__mw_master_start(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (!m->is_root)
        return TB_OK; /* wait for the initial share */
    TB_CHECK(root_split(n));
    m->have_initial = 1;
    tb__mw_master_counter(n, 1);
    TB_CHECK(tb__mw_master_dispatch_idle(n));
    TB_CHECK(tb__mw_master_maybe_request(n));
    return tb__mw_master_check_done(n);
}

/* A worker's results: handle them, and time the handler (the chunk rule
 * auto and S1's overload prediction use it). */
static int master_on_result(tb__mw_node *n, int src, const void *data, size_t len)
{
    tb__mw_master *m = n->master;
    if (!tb__mw_in(m, src))
        return TB_ERR_PROTOCOL; /* a result from a rank that was never ours */
    m->eager = 0;
    if (!m->sent_at) {
        if (n->cfg->chunk_kind != TB__CHUNK_AUTO)
            return tb__mw_master_result(n, src, data, len);
        double t0 = tb_tp_now(&n->base);
        int rc = tb__mw_master_result(n, src, data, len);
        if (rc == TB_OK && n->master == m)
            tb__chunk_handler(&m->ch, tb_tp_now(&n->base) - t0);
        return rc;
    }
    double entry = tb_tp_now(&n->base);
    tb__mw_master_measure(n, src, entry);
    int rc = tb__mw_master_result(n, src, data, len);
    if (rc == TB_OK && n->master == m) {
        double exit = tb_tp_now(&n->base);
        m->handler = tb__mw_ewma(m->handler, exit - entry, m->samples);
        tb__chunk_handler(&m->ch, exit - entry);
        m->busy_sum += exit - entry;
        m->last_exit = exit;
        if (n->cfg->dynamic == TB__MW_DYNAMIC_PREDICT && src != tb__mw_self_rank(n) &&
            !m->done_sent) {
            rc = tb__mw_master_predict_period(n);
            if (rc == TB_OK && m->merging)
                rc = tb__mw_master_check_done(n);
        }
    }
    return rc;
}

/* A master's messages other than RESULT. */
TB__MW_COLD static int master_message_rare(tb__mw_node *n, int src, int tag, const void *data,
                                           size_t len)
{
    tb__mw_master *m = n->master;
    tb_buf in;
    switch (tag) {
    case TB__TAG_FWD: { /* results of another master */
        uint32_t cnt;
        if (!m->is_root)
            return TB_ERR_PROTOCOL;
        tb__buf_view(&in, data, len);
        TB_CHECK(tb__mw_unpack_results_count(&in, &cnt));
        m->fwd_got += cnt;
        TB_CHECK(master_records(n, src, data, len));
        return tb__mw_root_maybe_finish(n);
    }
    case TB__TAG_REQ: {
        uint32_t workers, epoch = 0;
        TB_CHECK(tb__mw_unpack_req(data, len, m->kn != NULL, &workers, &epoch));
        if (!m->have_initial) {
            m->deferred_w[m->ndeferred] = workers;
            m->deferred_e[m->ndeferred] = epoch;
            m->deferred[m->ndeferred++] = src;
            return TB_OK;
        }
        return tb__mw_master_answer_request(n, src, workers, epoch);
    }
    case TB__TAG_GIVE:
        return tb__mw_master_give(n, src, data, len);
    case TB__TAG_HAVE: /* a child that was refused has tasks again */
        if (!m->child_dry)
            return TB_ERR_PROTOCOL;
        if (tb__mw_own(m, src) == OWN_CHILD)
            TB__MW_AT(m, child_dry, src) = 0;
        return TB_OK;
    case TB__TAG_REFUSE:
        if (m->parent >= 0 && src == m->parent && n->cfg->dynamic != TB__MW_DYNAMIC_PAPER)
            m->parent_refused = 1;
        if (m->kn) { /* src's own spell in the refusal drops it */
            TB_CHECK(tb__mw_master_learn_spells(n, data, len));
        } else {
            tb__mw_master_drop_target(m, src);
            TB_CHECK(tb__mw_master_learn_targets(n, data, len));
        }
        m->rflag = 0;
        TB_CHECK(tb__mw_master_maybe_request(n));
        return tb__mw_master_check_done(n);
    case TB__TAG_FAIL: {
        uint64_t task;
        int32_t rank, code;
        TB_CHECK(tb__mw_unpack_fail(data, len, &task, &rank, &code));
        TB_CHECK(master_fail(n, task, rank, code)); /* passes it up */
        if (m->is_root)
            TB_CHECK(master_abort_all(n));
        return tb__mw_master_check_done(n);
    }
    case TB__TAG_ABORT:
        if (!m->failed) {
            m->failed = 1;
            tb__queue_clear(m->q);
            TB_CHECK(master_abort_children(n));
        }
        return tb__mw_master_check_done(n);
    case TB__TAG_FREE: { /* a worker the parent promised is ours now */
        int32_t w;
        TB_CHECK(tb__mw_unpack_free(data, len, &w));
        if (w < 0 || w >= n->cfg->nranks || tb__mw_own(m, w) != OWN_ARRIVING)
            return TB_ERR_PROTOCOL;
        TB__MW_AT(m, own, w) = OWN_IDLE;
        tb__mw_master_acquired(m, w);
        m->narriving--;
        m->idle[m->nidle++] = w;
        TB_CHECK(tb__mw_master_dispatch_idle(n));
        TB_CHECK(tb__mw_master_maybe_request(n));
        return tb__mw_master_check_done(n);
    }
    case TB__TAG_RETURN: /* a child is done: it and its workers are ours */
        return tb__mw_master_on_return(n, src, data, len);
    case TB__TAG_DONE: { /* a static master's subtree is done */
        uint64_t sent;
        if (m->k < 0)
            return TB_ERR_PROTOCOL;
        tb__buf_view(&in, data, len);
        TB_CHECK(tb__mw_unpack_done(&in, &sent));
        TB_CHECK(tb__mw_master_take_counts(n, &in));
        if (tb_buf_remaining(&in) != 0)
            return TB_ERR_PARSE;
        if (m->is_root)
            m->fwd_expect += sent;
        else
            m->sub_sent += sent;
        m->ndone++;
        return tb__mw_master_report_done(n);
    }
    case TB__TAG_FINISH: {
        int32_t status;
        TB_CHECK(tb__mw_unpack_finish(data, len, &status));
        return tb__mw_master_pass_finish(n, status);
    }
    default:
        TB_LOG_ERR("master rank %d: unexpected message '%s' (tag %d) from rank %d",
                   tb__mw_self_rank(n), tb__mw_tag_name(tag), tag, src);
        return TB_ERR_PROTOCOL;
    }
}

int tb__mw_master_message(tb__mw_node *n, int src, int tag, const void *data, size_t len)
{
    /* A worker's results: on the path of every task (a tail call). */
    if (tag == TB__TAG_RESULT)
        return master_on_result(n, src, data, len);
    return master_message_rare(n, src, tag, data, len);
}
