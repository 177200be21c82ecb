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
 * Termination: a master is done when its queue is empty, no worker is busy,
 * no request is outstanding and R is empty (or the run failed).  It then
 * forwards its remaining results and tells the root; when all K masters are
 * done the root sends FINISH, and each master sends STOP to its workers.  No
 * message can still be in flight at that point: a master says DONE only
 * after every answer it waited for has arrived, and message order between
 * two ranks is preserved.
 */
#include "tenbin/core.h"

#include <stdlib.h>
#include <string.h>

#include "mw/mw_internal.h"

struct tb__mw_master {
    int k;
    int is_root;
    tb__queue own_q;
    tb__queue *q;          /* own_q, or the user's bag on the root */
    int *workers;          /* group members other than the master, or itself */
    int nworkers;
    int *idle;             /* stack of idle workers */
    int nidle;
    int nbusy;
    int *R;                /* request targets, in the order they are tried */
    int nR;
    int rflag;
    int have_initial;      /* the root's initial share has arrived */
    int *deferred;         /* requests that came before the initial share */
    int ndeferred;
    tb_buf msg;            /* message being built */
    tb_buf fwd;            /* results waiting to go to the root */
    uint32_t fwd_n;
    int failed;
    uint64_t fail_task;
    int fail_rank;
    int fail_code;
    int abort_sent;
    int done_sent;
    int ndone;             /* root: masters done */
    uint64_t results;      /* root: results delivered */
    double last_counter;
};

/* First byte of a GIVE message. */
enum { GIVE_ANSWER = 0, GIVE_INITIAL = 1, GIVE_INITIAL_PART = 2 };

static int worker_next(tb__mw_node *n);
static int master_fail(tb__mw_node *n, uint64_t task, int rank, int code);
static int master_result(tb__mw_node *n, int src, const void *data, size_t len);
static int master_check_done(tb__mw_node *n);

static int self_rank(const tb__mw_node *n) { return n->base.rank; }

/* ---- worker ------------------------------------------------------------ */

static int worker_fn(void *arg)
{
    tb__mw_node *n = arg;
    tb_buf_clear(&n->scratch);
    return n->cfg->work(n->cfg->work_ctx, n->cur_id, n->cur_data, n->cur_len, &n->scratch);
}

/* A TASK message arrived (or a self-dispatch): start on its first task. */
static int worker_begin(tb__mw_node *n, int src, const void *data, size_t len)
{
    /* Two clock reads per task: here and when it is computed (each end
     * time starts the next interval). */
    double now = tb_tp_now(&n->base);
    if (n->master == NULL)
        n->info.idle_s += now - n->t_wait;
    n->t_compute = now;
    tb_buf_clear(&n->in);
    TB_CHECK(tb_buf_append(&n->in, data, len));
    TB_CHECK(tb_buf_unpack_u32(&n->in, &n->in_left));
    n->reply_to = src;
    tb_buf_clear(&n->out);
    n->out_count_at = n->out.len;
    TB_CHECK(tb_buf_pack_u32(&n->out, 0));
    n->out_n = 0;
    return worker_next(n);
}

static int worker_reply(tb__mw_node *n)
{
    tb__patch_u32(&n->out, n->out_count_at, n->out_n);
    n->t_wait = n->t_compute; /* the end of the last computation */
    if (n->reply_to == self_rank(n)) {
        /* The master may start the next chunk at once, which rebuilds `out`:
         * hand it the finished message in the spare buffer instead. */
        tb_buf done = n->out;
        n->out = n->spare;
        n->spare = done;
        tb_buf_clear(&n->out);
        return master_result(n, self_rank(n), n->spare.data, n->spare.len);
    }
    return tb_tp_send(&n->base, n->reply_to, TB__TAG_RESULT, &n->out);
}

static int worker_next(tb__mw_node *n)
{
    if (n->in_left == 0)
        return worker_reply(n);
    uint32_t len;
    TB_CHECK(tb_buf_unpack_u64(&n->in, &n->cur_id));
    TB_CHECK(tb_buf_unpack_bytes(&n->in, &n->cur_data, &len));
    n->cur_len = len;
    tb_compute c = {worker_fn, n, -1.0};
    return tb_tp_compute(&n->base, n->cur_id, &c);
}

static int worker_computed(tb_actor *a, uint64_t job, int status)
{
    tb__mw_node *n = (tb__mw_node *)a;
    double now = tb_tp_now(a);
    n->info.busy_s += now - n->t_compute;
    n->info.tasks_computed++;
    if (n->trace)
        tb_trace_complete_arg(n->trace, 0, "mw", "task", n->trace_t0 + n->t_compute,
                              n->trace_t0 + now, "id", (int64_t)job);
    /* A result must fit one message whatever the rank count (a master that
     * is its own worker would otherwise accept what a send cannot carry).
     * The master keeps a chunk's tasks under the same budget, so a chunk of
     * results only passes it when the results are larger than the tasks. */
    if (status == TB_OK && n->out.len + 16 + n->scratch.len > TB__MW_MSG_MAX)
        status = TB_ERR_RANGE;
    TB_CHECK(tb_buf_pack_u64(&n->out, job));
    TB_CHECK(tb_buf_pack_i32(&n->out, status));
    TB_CHECK(tb_buf_pack_bytes(&n->out, n->scratch.data,
                               status == TB_OK ? (uint32_t)n->scratch.len : 0));
    n->out_n++;
    n->in_left--;
    n->t_compute = now;
    if (status != TB_OK)
        n->in_left = 0; /* the rest of the chunk is not computed */
    return worker_next(n);
}

/* ---- master: queue, dispatch, requests ---------------------------------- */

static void master_counter(tb__mw_node *n, int force)
{
    tb__mw_master *m = n->master;
    if (!n->trace)
        return;
    double now = tb_tp_now(&n->base);
    if (!force && now - m->last_counter < 1e-3)
        return;
    m->last_counter = now;
    double t = n->trace_t0 + now;
    tb_trace_counter(n->trace, "queue", "tasks", t, (double)tb__queue_count(m->q));
    tb_trace_counter(n->trace, "busy workers", "workers", t, (double)m->nbusy);
}

static int master_maybe_request(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (m->failed || m->rflag || !m->have_initial || m->nR == 0 || tb__queue_count(m->q) > 0)
        return TB_OK;
    m->rflag = 1;
    tb_buf_clear(&m->msg);
    return tb_tp_send(&n->base, m->R[0], TB__TAG_REQ, &m->msg);
}

static int master_dispatch(tb__mw_node *n, int w)
{
    tb__mw_master *m = n->master;
    tb_buf_clear(&m->msg);
    TB_CHECK(tb_buf_pack_u32(&m->msg, 0));
    uint32_t cnt = 0;
    int gen_failed = 0;
    uint64_t id = 0;
    while (cnt < n->cfg->chunk && tb__queue_count(m->q) > 0 &&
           (cnt == 0 || m->msg.len < TB__MW_MSG_MAX / 2)) {
        int rc = tb__queue_pop_record(m->q, &m->msg, &id);
        if (rc == TB_ERR_TASK) {
            gen_failed = 1;
            break;
        }
        TB_CHECK(rc);
        cnt++;
    }
    tb__patch_u32(&m->msg, 0, cnt);
    if (gen_failed) {
        /* A task that cannot be made fails the run like a task that fails. */
        TB_LOG_INFO("the generator failed for task %llu: %s", (unsigned long long)id,
                    tb_strerror(m->q->gen_error));
        TB_CHECK(master_fail(n, id, self_rank(n), m->q->gen_error));
        if (cnt == 0) {
            m->idle[m->nidle++] = w;
            return master_check_done(n);
        }
    }
    n->info.tasks_assigned += cnt;
    m->nbusy++;
    master_counter(n, 0);
    if (w == self_rank(n))
        TB_CHECK(worker_begin(n, w, m->msg.data, m->msg.len));
    else
        TB_CHECK(tb_tp_send(&n->base, w, TB__TAG_TASK, &m->msg));
    return master_maybe_request(n);
}

static int master_dispatch_idle(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    while (m->nidle > 0 && !m->failed && tb__queue_count(m->q) > 0)
        TB_CHECK(master_dispatch(n, m->idle[--m->nidle]));
    return TB_OK;
}

static int master_flush_fwd(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (m->fwd_n == 0)
        return TB_OK;
    tb__patch_u32(&m->fwd, 0, m->fwd_n);
    TB_CHECK(tb_tp_send(&n->base, 0, TB__TAG_FWD, &m->fwd));
    tb_buf_clear(&m->fwd);
    m->fwd_n = 0;
    return tb_buf_pack_u32(&m->fwd, 0);
}

static int master_abort_all(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (m->abort_sent)
        return TB_OK;
    m->abort_sent = 1;
    for (int k = 1; k < n->cfg->nmasters; k++) {
        tb_buf_clear(&m->msg);
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
    if (m->is_root)
        return master_abort_all(n);
    tb_buf_clear(&m->msg);
    TB_CHECK(tb_buf_pack_u64(&m->msg, task));
    TB_CHECK(tb_buf_pack_i32(&m->msg, rank));
    TB_CHECK(tb_buf_pack_i32(&m->msg, code));
    return tb_tp_send(&n->base, 0, TB__TAG_FAIL, &m->msg);
}

/* One successful result reaches the master. */
static int master_deliver(tb__mw_node *n, uint64_t id, const void *data, uint32_t len)
{
    tb__mw_master *m = n->master;
    if (!m->is_root) {
        if (m->fwd_n > 0 && m->fwd.len + 16 + len > TB__MW_MSG_MAX)
            TB_CHECK(master_flush_fwd(n));
        TB_CHECK(tb_buf_pack_u64(&m->fwd, id));
        TB_CHECK(tb_buf_pack_i32(&m->fwd, TB_OK));
        TB_CHECK(tb_buf_pack_bytes(&m->fwd, data, len));
        m->fwd_n++;
        return m->fwd.len >= n->cfg->forward_bytes ? master_flush_fwd(n) : TB_OK;
    }
    m->results++;
    if (n->cfg->result && !m->failed) {
        int rc = n->cfg->result(n->cfg->result_ctx, id, data, len);
        if (rc != TB_OK) {
            TB_LOG_INFO("result function failed for task %llu: %s", (unsigned long long)id,
                        tb_strerror(rc));
            return master_fail(n, id, self_rank(n), rc);
        }
    }
    if (n->progress)
        tb_progress_update(n->progress, m->results);
    return TB_OK;
}

/* Parse result records (RESULT or FWD body) and deliver them. */
static int master_records(tb__mw_node *n, int src, const void *data, size_t len)
{
    tb_buf in;
    tb_buf_view(&in, data, len);
    uint32_t cnt;
    TB_CHECK(tb_buf_unpack_u32(&in, &cnt));
    for (uint32_t i = 0; i < cnt; i++) {
        uint64_t id;
        int32_t status;
        const void *p;
        uint32_t plen;
        TB_CHECK(tb_buf_unpack_u64(&in, &id));
        TB_CHECK(tb_buf_unpack_i32(&in, &status));
        TB_CHECK(tb_buf_unpack_bytes(&in, &p, &plen));
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

static int master_result(tb__mw_node *n, int src, const void *data, size_t len)
{
    tb__mw_master *m = n->master;
    TB_CHECK(master_records(n, src, data, len));
    m->nbusy--;
    if (!m->failed && tb__queue_count(m->q) > 0)
        TB_CHECK(master_dispatch(n, src));
    else
        m->idle[m->nidle++] = src;
    master_counter(n, 0);
    TB_CHECK(master_maybe_request(n));
    return master_check_done(n);
}

static int master_answer_request(tb__mw_node *n, int src)
{
    tb__mw_master *m = n->master;
    uint64_t have = tb__queue_count(m->q);
    tb_buf_clear(&m->msg);
    /* Half of the queue, and never the last task: giving away a last task
     * while every worker is busy makes it bounce between masters (each asks
     * as soon as its queue is empty) until a worker frees. */
    if (m->failed || have < 2)
        return tb_tp_send(&n->base, src, TB__TAG_REFUSE, &m->msg);
    TB_CHECK(tb_buf_pack_u8(&m->msg, GIVE_ANSWER));
    TB_CHECK(tb__queue_give(m->q, have / 2, TB__MW_MSG_MAX, &m->msg, NULL));
    master_counter(n, 1);
    TB_CHECK(tb_tp_send(&n->base, src, TB__TAG_GIVE, &m->msg));
    TB_CHECK(master_maybe_request(n));
    return master_check_done(n);
}

static int master_give(tb__mw_node *n, const void *data, size_t len)
{
    tb__mw_master *m = n->master;
    if (len < 1)
        return TB_ERR_PARSE;
    int kind = ((const unsigned char *)data)[0];
    TB_CHECK(tb__queue_take(m->q, (const unsigned char *)data + 1, len - 1));
    if (kind == GIVE_INITIAL_PART)
        return TB_OK; /* more of the initial share follows */
    if (kind == GIVE_INITIAL) {
        m->have_initial = 1;
        for (int i = 0; i < m->ndeferred; i++)
            TB_CHECK(master_answer_request(n, m->deferred[i]));
        m->ndeferred = 0;
    } else {
        m->rflag = 0;
    }
    if (m->failed)
        tb__queue_clear(m->q);
    master_counter(n, 1);
    TB_CHECK(master_dispatch_idle(n));
    TB_CHECK(master_maybe_request(n));
    return master_check_done(n);
}

static int master_stop_workers(tb__mw_node *n, int status)
{
    tb__mw_master *m = n->master;
    for (int i = 0; i < m->nworkers; i++) {
        if (m->workers[i] == self_rank(n))
            continue;
        tb_buf_clear(&m->msg);
        TB_CHECK(tb_buf_pack_i32(&m->msg, status));
        TB_CHECK(tb_tp_send(&n->base, m->workers[i], TB__TAG_STOP, &m->msg));
    }
    master_counter(n, 1);
    n->status = status;
    n->info.total_s = tb_tp_now(&n->base) - n->t_start;
    n->base.finished = 1;
    return TB_OK;
}

static int root_maybe_finish(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (m->ndone < n->cfg->nmasters)
        return TB_OK;
    int status = m->failed ? TB_ERR_TASK : TB_OK;
    for (int k = 1; k < n->cfg->nmasters; k++) {
        tb_buf_clear(&m->msg);
        TB_CHECK(tb_buf_pack_i32(&m->msg, status));
        TB_CHECK(tb_tp_send(&n->base, tb__mw_group_start(n->cfg, k), TB__TAG_FINISH, &m->msg));
    }
    if (n->progress)
        tb_progress_finish(n->progress);
    return master_stop_workers(n, status);
}

static int master_check_done(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (m->done_sent || !m->have_initial || m->nbusy > 0 || m->rflag ||
        tb__queue_count(m->q) > 0 || (m->nR > 0 && !m->failed))
        return TB_OK;
    m->done_sent = 1;
    if (m->is_root) {
        m->ndone++;
        return root_maybe_finish(n);
    }
    TB_CHECK(master_flush_fwd(n));
    tb_buf_clear(&m->msg);
    return tb_tp_send(&n->base, 0, TB__TAG_DONE, &m->msg);
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
            tb_buf_clear(&m->msg);
            TB_CHECK(tb_buf_pack_u8(&m->msg, GIVE_INITIAL_PART));
            TB_CHECK(tb__queue_give(m->q, share, TB__MW_MSG_MAX, &m->msg, &given));
            share -= given;
            if (share == 0)
                m->msg.data[0] = GIVE_INITIAL;
            TB_CHECK(tb_tp_send(&n->base, tb__mw_group_start(n->cfg, k), TB__TAG_GIVE, &m->msg));
        } while (share > 0);
    }
    return TB_OK;
}

static int master_start(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (!m->is_root)
        return TB_OK; /* wait for the initial share */
    TB_CHECK(root_split(n));
    m->have_initial = 1;
    master_counter(n, 1);
    TB_CHECK(master_dispatch_idle(n));
    TB_CHECK(master_maybe_request(n));
    return master_check_done(n);
}

static int master_message(tb__mw_node *n, int src, int tag, const void *data, size_t len)
{
    tb__mw_master *m = n->master;
    tb_buf in;
    switch (tag) {
    case TB__TAG_RESULT:
        return master_result(n, src, data, len);
    case TB__TAG_FWD:
        if (!m->is_root)
            return TB_ERR_PROTOCOL;
        return master_records(n, src, data, len);
    case TB__TAG_REQ:
        if (!m->have_initial) {
            m->deferred[m->ndeferred++] = src;
            return TB_OK;
        }
        return master_answer_request(n, src);
    case TB__TAG_GIVE:
        return master_give(n, data, len);
    case TB__TAG_REFUSE:
        for (int i = 0; i < m->nR; i++) {
            if (m->R[i] == src) {
                memmove(m->R + i, m->R + i + 1, (size_t)(m->nR - i - 1) * sizeof *m->R);
                m->nR--;
                break;
            }
        }
        m->rflag = 0;
        TB_CHECK(master_maybe_request(n));
        return master_check_done(n);
    case TB__TAG_FAIL: {
        uint64_t task;
        int32_t rank, code;
        tb_buf_view(&in, data, len);
        TB_CHECK(tb_buf_unpack_u64(&in, &task));
        TB_CHECK(tb_buf_unpack_i32(&in, &rank));
        TB_CHECK(tb_buf_unpack_i32(&in, &code));
        if (!m->is_root)
            return TB_ERR_PROTOCOL;
        TB_CHECK(master_fail(n, task, rank, code));
        TB_CHECK(master_abort_all(n));
        return master_check_done(n);
    }
    case TB__TAG_ABORT:
        m->failed = 1;
        tb__queue_clear(m->q);
        return master_check_done(n);
    case TB__TAG_DONE:
        if (!m->is_root)
            return TB_ERR_PROTOCOL;
        m->ndone++;
        return root_maybe_finish(n);
    case TB__TAG_FINISH: {
        int32_t status;
        tb_buf_view(&in, data, len);
        TB_CHECK(tb_buf_unpack_i32(&in, &status));
        return master_stop_workers(n, status);
    }
    default:
        TB_LOG_ERR("master rank %d: unexpected message tag %d from rank %d", self_rank(n), tag,
                   src);
        return TB_ERR_PROTOCOL;
    }
}

/* ---- the actor ------------------------------------------------------------ */

static int node_start(tb_actor *a)
{
    tb__mw_node *n = (tb__mw_node *)a;
    n->t_start = n->t_wait = tb_tp_now(a);
    if (n->master)
        return master_start(n);
    return TB_OK;
}

static int node_message(tb_actor *a, int src, int tag, const void *data, size_t len)
{
    tb__mw_node *n = (tb__mw_node *)a;
    if (n->master)
        return master_message(n, src, tag, data, len);
    if (tag == TB__TAG_TASK)
        return worker_begin(n, src, data, len);
    if (tag == TB__TAG_STOP) {
        tb_buf in;
        int32_t status;
        tb_buf_view(&in, data, len);
        TB_CHECK(tb_buf_unpack_i32(&in, &status));
        double now = tb_tp_now(a);
        n->info.idle_s += now - n->t_wait;
        n->info.total_s = now - n->t_start;
        n->status = status;
        a->finished = 1;
        return TB_OK;
    }
    TB_LOG_ERR("worker rank %d: unexpected message tag %d from rank %d", a->rank, tag, src);
    return TB_ERR_PROTOCOL;
}

const tb_actor_ops tb__mw_node_ops = {
    sizeof(tb_actor_ops), node_start, node_message, worker_computed, NULL,
};

static int master_init(tb__mw_node *n, int k, tb__queue *root_bag)
{
    const tb__mw_cfg *c = n->cfg;
    tb__mw_master *m = calloc(1, sizeof *m);
    if (!m)
        return TB_ERR_NOMEM;
    n->master = m;
    m->k = k;
    m->is_root = k == 0;
    tb__queue_init(&m->own_q, c->gen, c->gen_ctx);
    m->q = m->is_root ? root_bag : &m->own_q;
    int lo = tb__mw_group_start(c, k), hi = tb__mw_group_start(c, k + 1);
    m->nworkers = hi - lo > 1 ? hi - lo - 1 : 1;
    m->workers = malloc((size_t)m->nworkers * sizeof *m->workers);
    m->idle = malloc((size_t)m->nworkers * sizeof *m->idle);
    m->R = malloc((size_t)c->nmasters * sizeof *m->R);
    m->deferred = malloc((size_t)c->nmasters * sizeof *m->deferred);
    if (!m->workers || !m->idle || !m->R || !m->deferred)
        return TB_ERR_NOMEM;
    if (hi - lo == 1)
        m->workers[0] = lo; /* alone: its own worker */
    else
        for (int i = 0; i < m->nworkers; i++)
            m->workers[i] = lo + 1 + i;
    /* Idle stack popped from the end: hand out to the lowest rank first. */
    for (int i = 0; i < m->nworkers; i++)
        m->idle[i] = m->workers[m->nworkers - 1 - i];
    m->nidle = m->nworkers;
    for (int j = 1; j < c->nmasters; j++)
        m->R[m->nR++] = tb__mw_group_start(c, (k + j) % c->nmasters);
    TB_CHECK(tb_buf_pack_u32(&m->fwd, 0));
    return TB_OK;
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
    tb__mw_master *m = n->master;
    if (m) {
        tb__queue_free(&m->own_q);
        free(m->workers);
        free(m->idle);
        free(m->R);
        free(m->deferred);
        tb_buf_free(&m->msg);
        tb_buf_free(&m->fwd);
        free(m);
        n->master = NULL;
    }
    tb_buf_free(&n->in);
    tb_buf_free(&n->out);
    tb_buf_free(&n->scratch);
    tb_buf_free(&n->spare);
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

void tb__mw_node_finish_info(tb__mw_node *n)
{
    if (n->info.total_s <= 0)
        n->info.total_s = tb_tp_now(&n->base) - n->t_start;
}
