/*
 * master.c - branch-and-bound's group master: it holds its group's queue
 * (best bound first, deepest first until there is an incumbent, pruned when
 * the incumbent improves), hands batches of subproblems to its idle workers
 * as TASKs, adapts the depth and the batch of the next tasks to the target
 * task time, reports to the supervisor (STATUS, INC_UP), and answers its
 * GIVE_REQ, MOVE, INC_DOWN and STOP.  A master without workers computes its
 * tasks itself, through worker.c on the worker state it holds.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "bnb/proto.h"
#include "bnb/roles.h"

int tb__bnb_master_init(tb__bnb_actor *a, int group)
{
    const tb_bnb *b = a->b;
    tb__bnb_master *m = &a->master;
    m->group = group;
    tb__bnb_engine_init(&m->eng, b->ops, b->ctx, b->gap);
    tb__bnb_worker_init(&m->w, b, -1);
    m->stop_expect = -1;
    m->depth = b->depth > 0 ? (uint32_t)b->depth : 1;
    m->batch = 1;
    m->auto_depth = b->depth == 0;
    m->self = b->nworkers[group] == 0;
    m->nslots = m->self ? 1 : b->nworkers[group];
    m->slots = calloc((size_t)m->nslots, sizeof *m->slots);
    if (!m->slots)
        return TB_ERR_NOMEM;
    int k = 0;
    for (int r = 1; r < b->size && !m->self; r++)
        if (b->group_of[r] == group && r != a->base.rank)
            m->slots[k++].rank = r;
    if (m->self)
        m->slots[0].rank = a->base.rank;
    m->q.dive = 1;
    m->q.limit = b->pool_limit;
    return TB_OK;
}

void tb__bnb_master_free(tb__bnb_master *m)
{
    tb__bnb_engine_free(&m->eng);
    tb__bnb_worker_free(&m->w);
    tb_buf_free(&m->res);
    tb_buf_free(&m->subs);
    free(m->slots);
    m->slots = NULL;
    tb__bnb_heap_free(&m->q);
}

static int master_status(tb__bnb_actor *a)
{
    tb__bnb_master *m = &a->master;
    uint64_t inflight = 0;
    double lower = tb__bnb_heap_min_bound(&m->q);
    int idle = 0;
    for (int i = 0; i < m->nslots; i++) {
        if (m->slots[i].busy) {
            inflight++;
            if (m->slots[i].bound < lower)
                lower = m->slots[i].bound;
        } else {
            idle = 1;
        }
    }
    tb__bnb_status_msg st = {.queued = m->q.n,
                             .inflight = inflight,
                             .lower = lower,
                             .tasks = m->tasks,
                             .nodes = m->nodes,
                             .busy = m->busy,
                             .workers = (uint32_t)m->nslots,
                             .gives_sent = m->gives_sent,
                             .moves_got = m->moves_got,
                             .hungry = (uint8_t)(m->q.n == 0 && idle)};
    TB_CHECK(tb__bnb_pack_status(&a->msg, &st));
    m->dirty = 0;
    m->to_sup++;
    if (a->tr)
        TB_CHECK(tb_trace_counter(a->tr, "pending", "queued", tb_tp_now(&a->base), (double)m->q.n));
    return tb__bnb_send(a, 0, T_STATUS);
}

static void master_prune(tb__bnb_actor *a)
{
    tb__bnb_master *m = &a->master;
    tb__bnb_heap_prune(&m->q, tb__bnb_cutoff(&m->eng), !isfinite(m->eng.inc));
}

static int master_offer(tb__bnb_actor *a, double inc)
{
    tb__bnb_master *m = &a->master;
    if (!(inc < m->eng.inc))
        return TB_OK;
    tb__bnb_engine_offer(&m->eng, inc);
    master_prune(a);
    m->dirty = 1;
    return TB_OK;
}

/* Hand queued subproblems to idle slots; say so when the queue runs dry. */
static int master_ckpt_try(tb__bnb_actor *a);

static int master_feed(tb__bnb_actor *a)
{
    tb__bnb_master *m = &a->master;
    if (m->stopping || m->ckpt_pending)
        return TB_OK;
    if (tb__bnb_splits(a->b) && m->q.n > 0 && m->q.n < (size_t)m->nslots) {
        /* Fewer subproblems than idle workers (the start, the end of a
         * search): cut them so that each idle worker gets one. */
        uint64_t free_slots = 0;
        for (int i = 0; i < m->nslots; i++)
            free_slots += !m->slots[i].busy;
        if (m->q.n < free_slots)
            TB_CHECK(tb__bnb_split_pool(&m->eng, &m->q, free_slots));
    }
    int idle = 0;
    for (int i = 0; i < m->nslots; i++) {
        tb__bnb_slot *s = &m->slots[i];
        if (s->busy)
            continue;
        /* A batch: up to `batch` subproblems, and no more than a fair
         * part of the queue, so that other idle workers get some too. */
        uint64_t fair = 1 + m->q.n / (uint64_t)m->nslots;
        uint32_t want = m->batch < fair ? m->batch : (uint32_t)fair, got = 0;
        double low = INFINITY;
        tb_buf_clear(&m->subs);
        tb__bnb_sub sub;
        while (got < want && m->subs.len < a->b->msg_budget && tb__bnb_heap_pop(&m->q, &sub)) {
            if (!(sub.bound < tb__bnb_cutoff(&m->eng))) {
                free(sub.data); /* the incumbent beat it meanwhile */
                continue;
            }
            if (sub.bound < low)
                low = sub.bound;
            got++;
            int rc;
            if (m->self) {
                rc = tb__bnb_worker_add(&m->w, sub);
                if (rc != TB_OK)
                    free(sub.data);
            } else {
                rc = tb__bnb_pack_sub(&m->subs, sub.bound, sub.depth, sub.data, sub.len);
                free(sub.data);
            }
            TB_CHECK(rc);
        }
        if (got == 0) {
            idle = 1;
            break;
        }
        s->busy = 1;
        s->bound = low;
        uint64_t id = m->next_id++;
        m->dirty = 1;
        if (m->self) {
            m->w.task_id = id;
            m->w.levels = m->depth;
            tb__bnb_engine_offer(&m->w.eng, m->eng.inc);
            m->w.eng.improved = 0;
            TB_CHECK(tb__bnb_start_task(a));
            continue;
        }
        tb__bnb_task_msg t = {.id = id, .inc = m->eng.inc, .levels = m->depth, .n = got};
        TB_CHECK(tb__bnb_pack_task(&a->msg, &t, &m->subs, a->b->task_pad));
        TB_CHECK(tb__bnb_send(a, s->rank, T_TASK));
    }
    /* Tell the supervisor at once when the group runs dry (it may move
     * work here) and when nothing is pending (the end may have come). */
    int busy = 0;
    for (int i = 0; i < m->nslots; i++)
        busy |= m->slots[i].busy;
    int empty = m->q.n == 0 && !busy;
    if (!idle)
        m->hungry_said = 0;
    if (!empty)
        m->empty_said = 0;
    if ((idle && !m->hungry_said) || (empty && !m->empty_said)) {
        m->hungry_said = idle;
        m->empty_said = empty;
        return master_status(a);
    }
    return TB_OK;
}

/* The queue (a copy: it stays) to the supervisor in KEEP messages of at
 * most the budget; per-sender order brings them before what follows. */
static int master_send_queue(tb__bnb_actor *a)
{
    tb__bnb_master *m = &a->master;
    size_t i = 0;
    while (i < m->q.n) {
        tb_buf_clear(&m->subs);
        uint32_t n = 0;
        for (; i < m->q.n && m->subs.len < a->b->msg_budget; i++, n++) {
            const tb__bnb_sub *sub = &m->q.a[i];
            TB_CHECK(tb__bnb_pack_sub(&m->subs, sub->bound, sub->depth, sub->data, sub->len));
        }
        TB_CHECK(tb__bnb_pack_keep(&a->msg, n, &m->subs));
        m->to_sup++;
        TB_CHECK(tb__bnb_send(a, 0, T_KEEP));
    }
    return TB_OK;
}

/* A checkpointed run's end: what is still queued (the answers of the tasks
 * in flight at STOP included), before FINAL. */
static int master_keep(tb__bnb_actor *a)
{
    TB_CHECK(master_send_queue(a));
    tb__bnb_heap_free(&a->master.q);
    return TB_OK;
}

/* A checkpoint round: once no task of the group is in flight (their
 * answers are in the queue), the queue goes to the supervisor, then
 * CKPT_DONE, and the group works on. */
static int master_ckpt_try(tb__bnb_actor *a)
{
    tb__bnb_master *m = &a->master;
    if (!m->ckpt_pending)
        return TB_OK;
    for (int i = 0; i < m->nslots; i++)
        if (m->slots[i].busy)
            return TB_OK;
    TB_CHECK(master_send_queue(a));
    TB_CHECK(tb__bnb_pack_ckpt_done(&a->msg));
    m->to_sup++;
    TB_CHECK(tb__bnb_send(a, 0, T_CKPT_DONE));
    m->ckpt_pending = 0;
    return master_feed(a);
}

static int master_try_close(tb__bnb_actor *a)
{
    tb__bnb_master *m = &a->master;
    if (!m->stopping || m->stop_expect < 0 || m->from_sup < (uint64_t)m->stop_expect)
        return TB_OK;
    int workers = 0;
    for (int i = 0; i < m->nslots; i++) {
        if (m->self) {
            if (m->slots[i].busy)
                return TB_OK;
        } else if (!m->slots[i].final) {
            return TB_OK;
        }
        workers++;
    }
    if (m->self) { /* its own counters are the group's */
        m->idle = m->w.idle + (tb_tp_now(&a->base) - m->w.free_since);
        m->startup_idle = m->w.startup_idle;
        if (!m->w.had_task)
            m->startup_idle = m->idle;
        m->busy = m->w.busy;
    }
    if (a->b->ckpt_path)
        TB_CHECK(master_keep(a));
    tb__bnb_final_msg f = {.sent = m->to_sup,
                           .workers = (uint32_t)workers,
                           .tasks = m->tasks,
                           .nodes = m->nodes,
                           .busy = m->busy,
                           .idle = m->idle,
                           .startup_idle = m->startup_idle,
                           .moved_in = m->moved_in,
                           .moved_out = m->moved_out,
                           .depth = m->depth};
    TB_CHECK(tb__bnb_pack_final(&a->msg, &f));
    TB_CHECK(tb__bnb_send(a, 0, T_FINAL));
    if (m->cuts || m->q.tightened)
        TB_LOG_INFO("branch-and-bound: master %d: %" PRIu64 " task answers stopped at their "
                    "budget of %zu bytes; its queue went over %zu bytes %" PRIu64 " times "
                    "(depth first until half)",
                    a->base.rank, m->cuts, a->b->msg_budget, m->q.limit, m->q.tightened);
    tb__bnb_close(a);
    return TB_OK;
}

static int master_stop_slot(tb__bnb_actor *a, tb__bnb_slot *s)
{
    tb__bnb_master *m = &a->master;
    if (m->self || s->stopped)
        return TB_OK;
    s->stopped = 1;
    TB_CHECK(tb__bnb_pack_wstop(&a->msg));
    return tb__bnb_send(a, s->rank, T_WSTOP);
}

/* Adapt the depth of the next tasks to the target task time. */
static void master_adapt(tb__bnb_actor *a, uint32_t levels, double seconds)
{
    tb__bnb_master *m = &a->master;
    if (levels == 0) {
        /* The task stopped at its answer's budget: its subtree is wider
         * than one message; smaller tasks from now on (a fixed depth stays,
         * the budget keeps its answers bounded). */
        m->cuts++;
        if (m->auto_depth) {
            if (m->batch > 1)
                m->batch /= 2;
            else if (m->depth > 1)
                m->depth--;
            m->ewma = -1;
        }
        return;
    }
    if (!m->auto_depth || levels != m->depth)
        return;
    m->ewma = m->ewma < 0 ? seconds : 0.7 * m->ewma + 0.3 * seconds;
    double target = a->b->task_time;
    /* Short tasks: more subproblems per task while the queue has them to
     * spare (they are the best ones: the order stays best first), else one
     * level deeper (depth first inside a task may expand nodes that best
     * first never would); long tasks: fewer, then shallower. */
    uint64_t fair = 1 + m->q.n / (uint64_t)m->nslots;
    if (m->ewma < target / 3 && (m->depth < 64 || m->batch < 4096)) {
        if (m->batch < 4096 && m->batch < fair)
            m->batch *= 2;
        else if (m->depth < 64)
            m->depth++;
        m->ewma = -1;
    } else if (m->ewma > 3 * target && (m->depth > 1 || m->batch > 1)) {
        if (m->batch > 1)
            m->batch /= 2;
        else
            m->depth--;
        m->ewma = -1;
    }
}

static int master_result(tb__bnb_actor *a, int si, const void *data, size_t len)
{
    tb__bnb_master *m = &a->master;
    tb__bnb_slot *s = &m->slots[si];
    if (!s->busy) {
        TB_LOG_ERR("branch-and-bound: master %d: a result from rank %d, which has no task",
                   a->base.rank, s->rank);
        return TB_ERR_PARSE;
    }
    tb_buf in;
    tb_buf_view(&in, data, len);
    tb__bnb_result_msg r;
    TB_CHECK(tb__bnb_unpack_result(&in, &r));
    s->busy = 0;
    m->tasks++;
    m->nodes += r.nodes;
    m->busy += r.seconds;
    m->dirty = 1;
    if (r.sol_len > 0 && r.inc < m->eng.inc) {
        /* A better solution: to the supervisor at once. */
        TB_CHECK(tb__bnb_pack_inc_up(&a->msg, r.inc, r.sol, r.sol_len));
        m->to_sup++;
        TB_CHECK(tb__bnb_send(a, 0, T_INC_UP));
    }
    TB_CHECK(master_offer(a, r.inc));
    if (m->stopping && !a->b->ckpt_path) {
        TB_CHECK(master_stop_slot(a, s));
        return master_try_close(a);
    }
    double cut = tb__bnb_cutoff(&m->eng);
    for (uint32_t i = 0; i < r.n; i++) {
        tb__bnb_sub sub;
        TB_CHECK(tb__bnb_unpack_sub(&in, &sub));
        if (!(sub.bound < cut)) {
            free(sub.data);
            continue;
        }
        int rc = tb__bnb_heap_push(&m->q, sub);
        if (rc != TB_OK) {
            free(sub.data);
            return rc;
        }
    }
    if (m->stopping) { /* its survivors are queued for the checkpoint */
        TB_CHECK(master_stop_slot(a, s));
        return master_try_close(a);
    }
    master_adapt(a, r.levels, r.seconds);
    return m->ckpt_pending ? master_ckpt_try(a) : master_feed(a);
}

int tb__bnb_master_start(tb__bnb_actor *a)
{
    tb__bnb_master *m = &a->master;
    m->w.free_since = tb_tp_now(&a->base);
    m->stop_expect = -1;
    m->ewma = -1;
    TB_CHECK(master_status(a)); /* hungry: the supervisor knows it exists */
    m->hungry_said = 1;
    return tb__bnb_set_timer(a, tb_tp_now(&a->base) + a->b->status_interval, TIMER_STATUS);
}

static int master_stop(tb__bnb_actor *a, uint64_t expect)
{
    tb__bnb_master *m = &a->master;
    m->stopping = 1;
    m->stop_expect = (int64_t)expect;
    if (!a->b->ckpt_path) /* else kept for the checkpoint (master_keep) */
        tb__bnb_heap_free(&m->q);
    for (int i = 0; i < m->nslots; i++)
        if (!m->slots[i].busy)
            TB_CHECK(master_stop_slot(a, &m->slots[i]));
    return master_try_close(a);
}

static int master_give(tb__bnb_actor *a, uint64_t want)
{
    tb__bnb_master *m = &a->master;
    /* At most half the queue: the donor keeps work for its own workers. */
    uint64_t k = want < m->q.n / 2 ? want : m->q.n / 2;
    tb_buf_clear(&m->subs);
    uint64_t i = 0;
    for (; i < k && m->subs.len < a->b->msg_budget; i++) { /* no message over the budget */
        tb__bnb_sub sub;
        tb__bnb_heap_pop(&m->q, &sub);
        int rc = tb__bnb_pack_sub(&m->subs, sub.bound, sub.depth, sub.data, sub.len);
        free(sub.data);
        TB_CHECK(rc);
    }
    k = i;
    TB_CHECK(tb__bnb_pack_give(&a->msg, (uint32_t)k, &m->subs, (size_t)k * a->b->sub_pad));
    m->moved_out += k;
    m->gives_sent++;
    m->to_sup++;
    TB_CHECK(tb__bnb_send(a, 0, T_GIVE));
    return master_status(a);
}

int tb__bnb_master_message(tb__bnb_actor *a, int src, int tag, const void *data, size_t len)
{
    tb__bnb_master *m = &a->master;
    tb_buf in;
    tb_buf_view(&in, data, len);
    if (src == 0) {
        if (tag != T_STOP)
            m->from_sup++;
        if (tag == T_INC_DOWN) {
            double v;
            TB_CHECK(tb__bnb_unpack_inc_down(&in, &v));
            TB_CHECK(master_offer(a, v));
            return m->stopping ? master_try_close(a) : TB_OK;
        }
        if (tag == T_STOP) {
            uint64_t expect;
            TB_CHECK(tb__bnb_unpack_stop(&in, &expect));
            return master_stop(a, expect);
        }
        if (m->stopping) { /* cannot happen: the supervisor stops when no move is in flight */
            TB_LOG_ERR("branch-and-bound: master %d: message %d after the stop", a->base.rank,
                       tag);
            return TB_ERR_STATE;
        }
        if (tag == T_MOVE) {
            uint32_t n;
            TB_CHECK(tb__bnb_unpack_move(&in, &n));
            for (uint32_t i = 0; i < n; i++) {
                tb__bnb_sub sub;
                TB_CHECK(tb__bnb_unpack_sub(&in, &sub));
                int rc = tb__bnb_heap_push(&m->q, sub);
                if (rc != TB_OK) {
                    free(sub.data);
                    return rc;
                }
            }
            m->moved_in += n;
            m->moves_got++;
            master_prune(a);
            m->hungry_said = 0;
            TB_CHECK(master_feed(a));
            return master_status(a);
        }
        if (tag == T_GIVE_REQ) {
            uint64_t want;
            TB_CHECK(tb__bnb_unpack_give_req(&in, &want));
            return master_give(a, want);
        }
        if (tag == T_CKPT) {
            TB_CHECK(tb__bnb_unpack_ckpt(&in));
            m->ckpt_pending = 1;
            return master_ckpt_try(a);
        }
    } else {
        int si = -1;
        for (int i = 0; i < m->nslots; i++)
            if (m->slots[i].rank == src)
                si = i;
        if (si >= 0 && !m->self && tag == T_RESULT)
            return master_result(a, si, data, len);
        if (si >= 0 && !m->self && tag == T_WFINAL) {
            tb__bnb_wfinal_msg f;
            TB_CHECK(tb__bnb_unpack_wfinal(&in, &f));
            m->idle += f.idle;
            m->startup_idle += f.startup_idle;
            m->slots[si].final = 1;
            return master_try_close(a);
        }
    }
    TB_LOG_ERR("branch-and-bound: master %d: unexpected message '%s' (tag %d) from rank %d",
               a->base.rank, tb__bnb_tag_name(tag), tag, src);
    return TB_ERR_PARSE;
}

int tb__bnb_master_computed(tb__bnb_actor *a)
{
    tb__bnb_master *m = &a->master;
    TB_CHECK(tb__bnb_end_task(a, &m->res)); /* not a->msg: master_result sends with it */
    return master_result(a, 0, m->res.data, m->res.len);
}

/* The status timer: a STATUS when something changed since the last. */
int tb__bnb_master_timer(tb__bnb_actor *a, uint64_t id)
{
    tb__bnb_master *m = &a->master;
    if (id != TIMER_STATUS || m->stopping)
        return TB_OK;
    if (m->dirty)
        TB_CHECK(master_status(a));
    return tb__bnb_set_timer(a, tb_tp_now(&a->base) + a->b->status_interval, TIMER_STATUS);
}
