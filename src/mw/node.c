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
 * forwards its remaining results and tells the root how many result records
 * it (and the children that returned to it) sent; when all K masters are
 * done and that many records have arrived, the root sends FINISH, and each
 * master sends STOP to its workers.  No message can still be in flight at
 * that point: a master says DONE only after every answer it waited for has
 * arrived, and the counts cover the results that travel on other paths.
 */
#include "tenbin/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mw/chunk.h"
#include "mw/mw_internal.h"

struct tb__mw_master {
    int k;
    int is_root;
    tb__queue own_q;
    tb__queue *q;          /* own_q, or the user's bag on the root */
    int parent;            /* dynamic child: the master that made it; else -1 */
    unsigned char *own;    /* [P]: what each rank is to this master (OWN_*) */
    int *dest;             /* [P]: the child a leaving worker goes to */
    int *idle;             /* stack of idle workers [P] */
    int nidle;
    int nbusy;             /* OWN_BUSY: computing this master's tasks */
    int nleaving;          /* OWN_LEAVING: the same, then they join a child */
    int narriving;         /* OWN_ARRIVING: ours once the parent frees them */
    int nchildren;         /* OWN_CHILD: masters this one made */
    int *R;                /* request targets, in the order they are tried [P] */
    int nR;
    int *win;              /* overload measure: arrivals after the last assignments */
    int winlen, winpos, winfill;
    long winsum;
    /* predictive policy: what the master measures of itself and its workers */
    double *sent_at;       /* [P]: when the worker got its current task message */
    double rt;             /* mean round trip of a task message, seconds */
    double handler;        /* mean time in the handler of a result */
    double recv;           /* mean receive overhead (gaps between back-to-back handlers) */
    double last_exit;      /* end of the previous result handler */
    int last_waiting;      /* messages waited at its end */
    uint64_t samples;
    int eager;             /* made by a fan-out, no result yet: fan out from 16 idle
                              workers without waiting for a message to wait */
    /* dynamic:wait: the workers' waiting times over the current period */
    double *wait_min;      /* [P]: each worker's shortest wait (no queueing) */
    double queue_sum;      /* sum of (wait - wait_min) this period */
    double ideal_sum;      /* sum of (compute + wait_min) this period */
    int period_n;          /* results this period */
    double period_start;
    double busy_sum;       /* time in result handlers this period */
    int want_split;        /* the last period says: promote the next worker */
    int merging;           /* gave its queue back; returns once its workers finish */
    int merged_below;      /* a child merged back: no more fan-out (one master keeps up) */
    int periods;           /* dynamic: periods measured (the first, spanning the start, is not judged) */
    int resume;            /* a timer will go on handing out first tasks */
    int masters_max;       /* root, at the end: most masters at once */
    tb_mw_masters_point *mtraj; /* root: the changes of the master count (in time order
                              once the run is over) */
    size_t mtraj_len, mtraj_cap;
    tb_buf mc;             /* other masters: changes seen in this subtree, i32 delta
                              and f64 time each, to go up with RETURN or DONE */
    uint32_t mc_n;
    int rflag;
    double req_at;         /* when the outstanding request was sent */
    /* multi:K (K > 2): what this master knows of each static master k:
     * kn[k] = 0 nothing, else 1 + 2 e + d: in its e-th spell of tasks (e counts
     * the answers with tasks it received) it had tasks (d = 0) or had run out
     * (d = 1); a larger value is newer.  inR[k]: k is a request target. */
    uint32_t *kn;
    unsigned char *inR;
    uint32_t epoch;        /* answers with tasks this master has received */
    uint32_t *deferred_e;  /* the deferred requesters' epochs */
    int parent_refused;    /* a child: its parent refused it and has not given it tasks since */
    unsigned char *child_dry; /* dynamic: [P] this child asked and was refused since it
                              was last given tasks (or said HAVE): a refusal need not
                              name it */
    int have_initial;      /* the root's initial share has arrived */
    int *deferred;         /* requests that came before the initial share */
    uint32_t *deferred_w;  /* and the requesters' worker counts */
    int ndeferred;
    tb__chunker ch;        /* how many tasks go in a message (cfg's chunk rule) */
    tb_buf msg;            /* message being built */
    tb_buf fwd;            /* results waiting to go to the root */
    uint32_t fwd_n;
    uint64_t fwd_sent;     /* records this master and its returned children sent to the root */
    int failed;
    uint64_t fail_task;
    int fail_rank;
    int fail_code;
    int abort_sent;
    int done_sent;
    int hold_done; /* a result is being handled: no DONE before its records */
    int ndone;             /* static masters: masters of its DONE subtree done */
    int done_up;           /* static masters: DONE sent up the tree */
    uint64_t sub_sent;     /* static masters: records its DONE subtree sent the root */
    uint64_t fwd_expect;   /* root: records the finished masters say they sent it */
    uint64_t fwd_got;      /* root: records received in FWD messages */
    uint64_t results;      /* root: results delivered */
    double last_counter;
};

/* The K static masters report DONE and pass FINISH along a binomial tree of
 * their indices (log2 K steps; the root once received K - 1 DONEs and sent
 * K - 1 FINISHes, 6 ms of a 49 ms run at K = 256): master k's parent is k
 * with its lowest set bit cleared; its children are k + 1, k + 2, k + 4, ...
 * below k's lowest set bit (below K for the root). */
static int master_tree_parent(int k) { return k & (k - 1); }

static int master_tree_kids(int k, int K, int *kids)
{
    int lim = k == 0 ? K : (k & -k), c = 0;
    for (int b = 1; b < lim && k + b < K; b <<= 1) {
        if (kids)
            kids[c] = k + b;
        c++;
    }
    return c;
}

/* First byte of a GIVE message. */
enum { GIVE_ANSWER = 0, GIVE_INITIAL = 1, GIVE_INITIAL_PART = 2, GIVE_BACK = 3 };

/* What a rank is to a master. */
enum {
    OWN_NONE = 0, /* not ours */
    OWN_IDLE,     /* ours, waiting for a task */
    OWN_BUSY,     /* computing our task */
    OWN_LEAVING,  /* computing our task; then it joins the child dest[] */
    OWN_ARRIVING, /* computing our parent's task; ours when the parent frees it */
    OWN_CHILD     /* a master we made */
};

static int worker_next(tb__mw_node *n);
static int master_fail(tb__mw_node *n, uint64_t task, int rank, int code);
static int master_result(tb__mw_node *n, int src, const void *data, size_t len);
static int master_check_done(tb__mw_node *n);
static int master_promoted(tb__mw_node *n, int p);

static int self_rank(const tb__mw_node *n) { return n->base.rank; }

/* Where results, failures and counts go: the parent of a dynamic child, else
 * the root. */
static int up_rank(const tb__mw_node *n) { return n->master->parent >= 0 ? n->master->parent : 0; }

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
    n->cur_wait = now - n->t_wait;
    n->t_compute = n->t_arrived = now;
    n->chunk_sq = 0;
    /* A message of one task is computed before this handler returns (both
     * transports run the work function inside tb_tp_compute), so it is read
     * in place; a longer chunk outlives the message and is copied. */
    tb_buf_view(&n->in_view, data, len);
    TB_CHECK(tb_buf_unpack_u32(&n->in_view, &n->in_left));
    if (n->in_left == 1) {
        n->cur_in = &n->in_view;
    } else {
        tb_buf_clear(&n->in);
        TB_CHECK(tb_buf_append(&n->in, data, len));
        n->in.pos = n->in_view.pos;
        n->cur_in = &n->in;
    }
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
    if (n->cfg->timed) {
        /* How long this worker waited for the message, how long it
         * computed, and the sum of its tasks' squared times: for
         * dynamic:wait's statistics (S3) and the adaptive chunk rules. */
        TB_CHECK(tb_buf_pack_f64(&n->out, n->cur_wait));
        TB_CHECK(tb_buf_pack_f64(&n->out, n->t_compute - n->t_arrived));
        TB_CHECK(tb_buf_pack_f64(&n->out, n->chunk_sq));
    }
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
    TB_CHECK(tb_buf_unpack_u64(n->cur_in, &n->cur_id));
    TB_CHECK(tb_buf_unpack_bytes(n->cur_in, &n->cur_data, &len));
    n->cur_len = len;
    tb_compute c = {worker_fn, n, -1.0, "task", n->cur_id};
    return tb_tp_compute(&n->base, n->cur_id, &c);
}

static int worker_computed(tb_actor *a, uint64_t job, int status)
{
    tb__mw_node *n = (tb__mw_node *)a;
    double now = tb_tp_now(a);
    n->info.busy_s += now - n->t_compute;
    n->chunk_sq += (now - n->t_compute) * (now - n->t_compute);
    n->info.tasks_computed++;
    n->info.last_task_end_s = now - n->t_start;
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

/* The workers a master has or is about to have (not those leaving it). */
static int master_workers(const tb__mw_master *m)
{
    return m->nbusy + m->nidle + m->narriving;
}

static int master_maybe_request(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (m->failed || m->rflag || !m->have_initial || m->nR == 0 || tb__queue_count(m->q) > 0)
        return TB_OK;
    m->rflag = 1;
    m->req_at = tb_tp_now(&n->base);
    tb_buf_clear(&m->msg);
    TB_CHECK(tb_buf_pack_u32(&m->msg, (uint32_t)master_workers(m)));
    if (m->kn)
        TB_CHECK(tb_buf_pack_u32(&m->msg, m->epoch));
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
    /* w itself is out of the counts here: just back from a chunk, or taken
     * from the idle stack. */
    int workers = master_workers(m) + 1;
    uint64_t want = tb__chunk_next(&m->ch, w, tb__queue_count(m->q), workers,
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
    m->own[w] = OWN_BUSY;
    master_counter(n, 0);
    if (w == self_rank(n))
        TB_CHECK(worker_begin(n, w, m->msg.data, m->msg.len));
    else
        TB_CHECK(tb_tp_send(&n->base, w, TB__TAG_TASK, &m->msg));
    if (m->win && w != self_rank(n)) {
        /* S1's overload test: right after an assignment, how many messages
         * have arrived and wait; averaged over the last winlen assignments. */
        int c = tb_tp_arrived(&n->base, NULL, -1);
        if (m->winfill == m->winlen)
            m->winsum -= m->win[m->winpos];
        else
            m->winfill++;
        m->win[m->winpos] = c;
        m->winsum += c;
        m->winpos = (m->winpos + 1) % m->winlen;
        m->last_waiting = c;
        m->sent_at[w] = tb_tp_now(&n->base);
    }
    return master_maybe_request(n);
}

/*
 * Fan-out (dynamic and dynamic:wait): handing a first task to each of many
 * idle workers takes W sends, and a master with thousands of workers is
 * still sending when the first results come back.  A message that waits
 * while eight or more workers are still idle says one master cannot even fill
 * its workers once: an idle worker becomes a child master at once, with half
 * of the idle workers and a share of the queue in proportion, and both go on
 * handing out tasks in parallel (recursively, so W workers start after about
 * log2(W) promotions instead of W sends).  A child made this way fans out
 * again as long as sixteen or more of its workers are idle (each side keeps
 * eight) and no result has reached it: its idle workers wait for the same
 * reason its parent's did, and waiting for a message of its own cost one
 * chunk's time per level of the tree (1024 simulated ranks, 116 us tasks:
 * 39.5 -> 35.5 ms with one task per message, 23.7 -> 21.5 ms under auto).
 * From eight idle workers on, children of a few workers made the runs on
 * two clusters 22 % slower.  dynamic:paper keeps S1's rule.
 */
enum { TIMER_DISPATCH = 1 };

static int cmp_int_desc(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x < y) - (x > y);
}

static int master_fan_out(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    /* Split the idle workers by rank: neighbouring ranks are usually on
     * the same node or cluster (block mapping), so each master keeps a
     * contiguous range, as multi:K's groups do.  The stack, sorted from
     * the highest rank down, pops the lowest first; the child takes the
     * upper half, led by its lowest rank. */
    qsort(m->idle, (size_t)m->nidle, sizeof *m->idle, cmp_int_desc);
    int give = (m->nidle - 1) / 2; /* besides p */
    int p = m->idle[give];
    int workers = m->nbusy + m->nleaving + m->nidle - 1; /* after p leaves */
    uint64_t share = tb__queue_count(m->q) * (uint64_t)(give + 1) / (uint64_t)(workers + 1);
    m->own[p] = OWN_CHILD;
    if (m->child_dry)
        m->child_dry[p] = 0;
    m->nchildren++;
    tb_buf_clear(&m->msg);
    TB_CHECK(tb_buf_pack_u32(&m->msg, 0)); /* no busy workers */
    TB_CHECK(tb_buf_pack_u32(&m->msg, (uint32_t)give));
    for (int i = 0; i < give; i++) {
        m->own[m->idle[i]] = OWN_NONE;
        TB_CHECK(tb_buf_pack_i32(&m->msg, m->idle[i]));
    }
    m->nidle -= give + 1;
    memmove(m->idle, m->idle + give + 1, (size_t)m->nidle * sizeof *m->idle);
    TB_CHECK(tb_buf_pack_u8(&m->msg, 1)); /* the child fans out at once too */
    TB_CHECK(tb__queue_give(m->q, share, TB__MW_MSG_MAX, &m->msg, NULL));
    TB_LOG_INFO("rank %d: a message waits with %d workers still idle: %d becomes a master "
                "with %d of them and %llu tasks",
                self_rank(n), m->nidle + give + 1, p, give, (unsigned long long)share);
    return master_promoted(n, p);
}

static int master_dispatch_idle(tb__mw_node *n)
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
            int h = n->cfg->promote_hook ? n->cfg->promote_hook(n->cfg->hook_ctx, self_rank(n),
                                                                m->idle[m->nidle - 1],
                                                                n->info.tasks_assigned)
                                         : 0;
            yes = h != 0 ? h > 0
                         : m->nidle >= 8 && !m->merged_below &&
                               ((m->eager && m->nidle >= 16) || tb_tp_arrived(&n->base, NULL, -1) > 0);
        }
        if (yes) {
            TB_CHECK(master_fan_out(n));
            if (n->master != m || m->done_sent)
                return TB_OK;
            continue;
        }
        TB_CHECK(master_dispatch(n, m->idle[--m->nidle]));
    }
    return TB_OK;
}

static int master_flush_fwd(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (m->fwd_n == 0)
        return TB_OK;
    tb__patch_u32(&m->fwd, 0, m->fwd_n);
    TB_CHECK(tb_tp_send(&n->base, 0, TB__TAG_FWD, &m->fwd));
    m->fwd_sent += m->fwd_n;
    tb_buf_clear(&m->fwd);
    m->fwd_n = 0;
    return tb_buf_pack_u32(&m->fwd, 0);
}

/* Tell the masters this one made to stop handing out tasks. */
static int master_abort_children(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    for (int r = 0; r < n->cfg->nranks && m->nchildren > 0; r++) {
        if (m->own[r] != OWN_CHILD)
            continue;
        tb_buf_clear(&m->msg);
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
    TB_CHECK(master_abort_children(n));
    if (m->is_root)
        return master_abort_all(n);
    tb_buf_clear(&m->msg);
    TB_CHECK(tb_buf_pack_u64(&m->msg, task));
    TB_CHECK(tb_buf_pack_i32(&m->msg, rank));
    TB_CHECK(tb_buf_pack_i32(&m->msg, code));
    return tb_tp_send(&n->base, up_rank(n), TB__TAG_FAIL, &m->msg);
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
                        (unsigned long long)id, self_rank(n), tb_strerror(rc));
            return master_fail(n, id, self_rank(n), rc);
        }
        if (n->progress)
            tb_progress_update(n->progress, n->info.results_folded);
        return TB_OK;
    }
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

/* Count of masters (+1 or -1 at time t) travels up the tree to the root. */
/* A change of the number of masters (+1 or -1 at time t).  The changes
 * travel to the root with the messages that end a master's work (RETURN,
 * DONE) instead of one message each, hop by hop up the promotion tree (at
 * the end of a 4096-rank run hundreds of returns sent thousands of them
 * through the masters near the root).  The root orders them at the end. */
static int master_count(tb__mw_node *n, int delta, double t)
{
    tb__mw_master *m = n->master;
    if (m->is_root) {
        TB_CHECK(tb_grow(&m->mtraj, &m->mtraj_cap, m->mtraj_len, sizeof *m->mtraj, 64));
        m->mtraj[m->mtraj_len].t_s = t;
        m->mtraj[m->mtraj_len].delta = delta;
        m->mtraj_len++;
        return TB_OK;
    }
    TB_CHECK(tb_buf_pack_i32(&m->mc, delta));
    TB_CHECK(tb_buf_pack_f64(&m->mc, t));
    m->mc_n++;
    return TB_OK;
}

/* Append this master's changes to a message (u32 n, records). */
static int master_pack_counts(tb__mw_master *m, tb_buf *out)
{
    TB_CHECK(tb_buf_pack_u32(out, m->mc_n));
    return tb_buf_append(out, m->mc.data, m->mc.len);
}

/* Take the changes at in's position (from RETURN or DONE) as this master's. */
static int master_take_counts(tb__mw_node *n, tb_buf *in)
{
    uint32_t cnt;
    TB_CHECK(tb_buf_unpack_u32(in, &cnt));
    if ((size_t)cnt * 12 > tb_buf_remaining(in))
        return TB_ERR_PARSE;
    for (uint32_t i = 0; i < cnt; i++) {
        int32_t delta;
        double t;
        TB_CHECK(tb_buf_unpack_i32(in, &delta));
        TB_CHECK(tb_buf_unpack_f64(in, &t));
        if (delta != 1 && delta != -1)
            return TB_ERR_PROTOCOL;
        TB_CHECK(master_count(n, delta, t));
    }
    return TB_OK;
}

static int cmp_mpoint(const void *a, const void *b)
{
    const tb_mw_masters_point *x = a, *y = b;
    if (x->t_s != y->t_s)
        return x->t_s < y->t_s ? -1 : 1;
    return (x->delta > y->delta) - (x->delta < y->delta);
}

/* Root, at the end: the changes in time order, the count after each, the
 * most masters at once (and the trace's counter). */
static void root_order_counts(tb__mw_node *n)
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

/* Exponentially weighted mean: quick to start, then about the last 32. */
static double ewma(double mean, double x, uint64_t k)
{
    double a = k < 32 ? 1.0 / (double)(k + 1) : 1.0 / 32.0;
    return mean + a * (x - mean);
}

/* Measurements of the predictive policy, taken as a result arrives from w. */
static void master_measure(tb__mw_node *n, int w, double entry)
{
    tb__mw_master *m = n->master;
    if (!m->sent_at || w == self_rank(n))
        return;
    m->samples++;
    m->rt = ewma(m->rt, entry - m->sent_at[w], m->samples);
    /* Back to back (a message was waiting when the last handler ended): the
     * gap between the two handlers is what receiving one message costs. */
    if (m->last_waiting > 0 && m->last_exit > 0)
        m->recv = ewma(m->recv, entry - m->last_exit, m->samples);
}

/*
 * The policy `dynamic`: promote only when K+1 masters are predicted to finish
 * the queue sooner than K with one worker fewer (S1's open problem).  With W
 * workers of cycle T (a task message's round trip minus the time it queued
 * at this master) and a service time s per result (receive + handler), this
 * master completes X(W) = min(W/T, 1/s) tasks per second.  Promoting p leaves
 * W-1 workers, split in two halves each with its own master:
 * X' = X(a) + X(b).  Promote when Q/X' + T (the moved workers finish their
 * current task first) < 0.95 Q/X, Q the tasks queued here.  Decisions to
 * promote are logged at info level, the others at debug level.
 */
static int master_predict_gain(tb__mw_node *n, int p)
{
    tb__mw_master *m = n->master;
    int W = m->nbusy + m->nidle;
    if (m->samples < (uint64_t)(W < 32 ? 2 * W : 64) || m->winfill == 0)
        return 0; /* not enough measurements yet */
    double s = m->handler + m->recv;
    double waiting = (double)m->winsum / (double)m->winfill;
    double T = m->rt - waiting * s;
    if (!(s > 0) || !(T > 0))
        return 0;
    double Q = (double)tb__queue_count(m->q);
    double x_now = fmin((double)W / T, 1.0 / s);
    int a = (W - 1) - (W - 1) / 2, b = (W - 1) / 2;
    double x_new = fmin((double)a / T, 1.0 / s) + fmin((double)b / T, 1.0 / s);
    double t_now = Q / x_now, t_new = Q / x_new + T;
    /* A 5 % margin: the estimates are noisy, and the model leaves out the
     * promotion's messages and the merge-back at the end. */
    int yes = t_new < 0.95 * t_now;
    tb_log(yes ? TB_LOG_INFO : TB_LOG_DEBUG,
           "rank %d: promote %d? W=%d T=%.3g s service=%.3g s queue=%.0f: %.4g s now, "
           "%.4g s with one more master: %s",
           self_rank(n), p, W, T, s, Q, t_now, t_new, yes ? "yes" : "no");
    return yes;
}

/*
 * S1's rule (Fig. 3, line 14): the master is overloaded (on average at
 * least one message was waiting after each of the last assignments) and at
 * least four other workers are busy, so that both halves keep two or more.
 * A test hook may force or forbid a promotion.
 */
static int master_should_promote(tb__mw_node *n, int p)
{
    tb__mw_master *m = n->master;
    if (m->nbusy - 1 < 4 || tb__queue_count(m->q) < 2)
        return 0;
    if (n->cfg->promote_hook) {
        int h = n->cfg->promote_hook(n->cfg->hook_ctx, self_rank(n), p, n->info.tasks_assigned);
        if (h != 0)
            return h > 0;
    }
    if (n->cfg->dynamic == TB__MW_DYNAMIC_PREDICT)
        return master_predict_gain(n, p);
    if (n->cfg->dynamic == TB__MW_DYNAMIC_WAIT)
        return m->want_split;
    return m->winfill > 0 && m->winsum >= m->winfill;
}

/* Worker p becomes a child master with half of our busy workers and half of
 * our queue.  The busy workers finish the task they have for us first. */
static int master_promote(tb__mw_node *n, int p)
{
    tb__mw_master *m = n->master;
    m->own[p] = OWN_CHILD;
    if (m->child_dry)
        m->child_dry[p] = 0;
    m->nbusy--;
    m->nchildren++;
    int give = m->nbusy / 2;
    tb_buf_clear(&m->msg);
    TB_CHECK(tb_buf_pack_u32(&m->msg, (uint32_t)give));
    for (int r = n->cfg->nranks - 1; r >= 0 && give > 0; r--) {
        if (m->own[r] != OWN_BUSY || r == self_rank(n))
            continue;
        m->own[r] = OWN_LEAVING;
        m->dest[r] = p;
        m->nbusy--;
        m->nleaving++;
        give--;
        TB_CHECK(tb_buf_pack_i32(&m->msg, r));
    }
    TB_CHECK(tb_buf_pack_u32(&m->msg, 0)); /* no idle workers */
    TB_CHECK(tb_buf_pack_u8(&m->msg, 0));  /* no fan-out at once */
    TB_CHECK(tb__queue_give(m->q, tb__queue_count(m->q) / 2, TB__MW_MSG_MAX, &m->msg, NULL));
    return master_promoted(n, p);
}

/* The end of a promotion: p is a request target, the count goes up. */
static int master_promoted(tb__mw_node *n, int p)
{
    tb__mw_master *m = n->master;
    m->R[m->nR++] = p;
    TB_CHECK(tb_tp_send(&n->base, p, TB__TAG_MSTART, &m->msg));
    double now = tb_tp_now(&n->base);
    m->want_split = 0; /* a new period judges the new arrangement */
    m->period_n = 0;
    m->queue_sum = m->ideal_sum = m->busy_sum = 0;
    m->period_start = now;
    n->info.promotions++;
    if (n->info.promotions == 1)
        n->info.first_promotion_s = now - n->t_start;
    master_counter(n, 1);
    TB_CHECK(master_count(n, +1, now));
    TB_CHECK(master_maybe_request(n));
    return master_check_done(n);
}

/* dynamic:wait: a worker's shortest wait is not known yet, or its next
 * report is to be skipped. */
#define WAIT_NONE (-1.0)
#define WAIT_SKIP (-2.0)

static void master_acquired(tb__mw_master *m, int w)
{
    if (m->wait_min)
        m->wait_min[w] = WAIT_SKIP;
}

/* cnt idle workers (i32 ranks in `in`) handed over by another master
 * (RETURN, MSTART): ours now. */
static int master_take_idle(tb__mw_node *n, tb_buf *in, uint32_t cnt)
{
    tb__mw_master *m = n->master;
    for (uint32_t i = 0; i < cnt; i++) {
        int32_t w;
        TB_CHECK(tb_buf_unpack_i32(in, &w));
        if (w < 0 || w >= n->cfg->nranks || m->own[w] != OWN_NONE)
            return TB_ERR_PROTOCOL;
        m->own[w] = OWN_IDLE;
        master_acquired(m, w);
        m->idle[m->nidle++] = w;
    }
    return TB_OK;
}

/* A request target refused, or returned: no longer ask it. */
static void master_drop_target(tb__mw_master *m, int r)
{
    for (int i = 0; i < m->nR; i++) {
        if (m->R[i] == r) {
            memmove(m->R + i, m->R + i + 1, (size_t)(m->nR - i - 1) * sizeof *m->R);
            m->nR--;
            return;
        }
    }
}

/* Give the whole queue to the parent, in as many messages as it takes. */
static int master_give_back(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    while (tb__queue_count(m->q) > 0) {
        tb_buf_clear(&m->msg);
        TB_CHECK(tb_buf_pack_u8(&m->msg, GIVE_BACK));
        TB_CHECK(tb__queue_give(m->q, tb__queue_count(m->q), TB__MW_MSG_MAX, &m->msg, NULL));
        TB_CHECK(tb_tp_send(&n->base, m->parent, TB__TAG_GIVE, &m->msg));
    }
    return TB_OK;
}

/*
 * dynamic:wait (S3's DY): each result carries how long its worker waited for
 * the task message.  A worker's shortest wait is its round trip with no
 * queueing at the master; what it waits beyond that is queueing.  At the end
 * of each period of max(8, 2W) results the master compares the mean queueing
 * with the mean ideal cycle (compute + shortest wait): above the share
 * `wait_split`, workers lose that share of their time to this master being
 * busy, and the next worker to report becomes a child master.  A child
 * master whose workers hardly queue (below a tenth of the share) and whose
 * handlers keep it busy less than a tenth of the time is a worker wasted:
 * it merges back into its parent.
 */
/* A child master merges back into its parent: its queue goes back now,
 * itself and its workers once they are idle (child_return). */
static int master_merge(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    m->want_split = 0;
    m->merging = 1;
    m->nR = 0; /* no more requests: what is left here is given back */
    n->info.merges++;
    return master_give_back(n);
}

/* Measuring periods of the merging policies: one more result; 1 when the
 * period of max(8, min(2W, 64)) results is complete. */
static int master_period_step(tb__mw_master *m)
{
    int W = m->nbusy + m->nidle + m->nleaving;
    return ++m->period_n >= (2 * W < 8 ? 8 : 2 * W > 64 ? 64 : 2 * W);
}

/* The share of the period this master was busy: in result handlers, plus
 * receiving each result. */
static double master_period_load(tb__mw_node *n, double now)
{
    tb__mw_master *m = n->master;
    double span = now - m->period_start;
    return span > 0 ? (m->busy_sum + m->period_n * m->recv) / span : 1.0;
}

/* Whether a child master merges back: only a leaf with no workers in transit
 * and no request outstanding can (`can` adds the policy's own condition);
 * `rule` is the policy's verdict, which the test hook may override. */
static int master_merge_verdict(tb__mw_node *n, int can, int rule)
{
    tb__mw_master *m = n->master;
    can = can && m->parent >= 0 && m->nchildren == 0 && m->narriving == 0 && m->nleaving == 0 &&
          !m->rflag && !m->merging;
    if (can && n->cfg->promote_hook) {
        int h = n->cfg->promote_hook(n->cfg->hook_ctx, self_rank(n), -1, n->info.tasks_assigned);
        if (h != 0)
            return h > 0;
    }
    return can && rule;
}

static void master_period_reset(tb__mw_master *m, double now)
{
    m->period_n = 0;
    m->queue_sum = m->ideal_sum = m->busy_sum = 0;
    m->period_start = now;
}

static int master_wait_stats(tb__mw_node *n, int src, double wait, double comp)
{
    tb__mw_master *m = n->master;
    if (!m->wait_min || src == self_rank(n) || m->failed)
        return TB_OK;
    if (m->wait_min[src] == WAIT_SKIP) {
        /* Its first wait with us spans a change of master, not queueing. */
        m->wait_min[src] = WAIT_NONE;
        return TB_OK;
    }
    if (m->wait_min[src] < 0 || wait < m->wait_min[src])
        m->wait_min[src] = wait;
    m->queue_sum += wait - m->wait_min[src];
    m->ideal_sum += comp + m->wait_min[src];
    if (!master_period_step(m))
        return TB_OK;
    int W = m->nbusy + m->nidle + m->nleaving;
    double now = tb_tp_now(&n->base);
    double share = m->queue_sum / m->ideal_sum;
    double load = master_period_load(n, now);
    double th = n->cfg->wait_split;
    /* Splitting pays when the W-1 workers left, queueing about half as much
     * under two masters, beat W workers now: (W-1)/(1+f/2) > W/(1+f), that
     * is f > 2/(W-2).  The share is a floor under that break-even. */
    m->want_split = share > th && W > 4 && share * (W - 2) > 2.0;
    int merge = master_merge_verdict(n, 1, !m->want_split && share < th / 10 && load < 0.1);
    tb_log(m->want_split || merge ? TB_LOG_INFO : TB_LOG_DEBUG,
           "rank %d: workers queued %.3g of their ideal cycle over %d results (split above %.3g), "
           "handlers busy %.3g of the time: %s",
           self_rank(n), share, m->period_n, th, load,
           m->want_split ? "split" : merge ? "merge" : "keep");
    master_period_reset(m, now);
    return merge ? master_merge(n) : TB_OK;
}

/*
 * `dynamic` merges too: a child master whose handlers (and receives) kept it
 * busy less than 5 % of a period of max(8, min(2W, 64)) results is a worker
 * wasted (tasks became long; S1's masters never go back).  Its first period
 * is not judged: it spans the first task of every worker, when no result can
 * come.  A master whose child merged back fans out no more.  Half of
 * dynamic:wait's 10 %: the predictive rule promotes on a 5 % gain, and the
 * gap keeps the two from undoing each other.
 */
static int master_predict_period(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (m->failed || !master_period_step(m))
        return TB_OK;
    double now = tb_tp_now(&n->base);
    double load = master_period_load(n, now);
    int merge = master_merge_verdict(n, m->periods++ > 0, load < 0.05);
    if (merge)
        TB_LOG_INFO("rank %d: handlers busy %.3g of the time over %d results: merge", self_rank(n),
                    load, m->period_n);
    master_period_reset(m, now);
    return merge ? master_merge(n) : TB_OK;
}

static int master_result(tb__mw_node *n, int src, const void *data, size_t len)
{
    tb__mw_master *m = n->master;
    if (n->cfg->timed) {
        /* The tail: how long the worker waited, computed, and the sum of
         * its tasks' squared times. */
        if (len < 28)
            return TB_ERR_PARSE;
        tb_buf tail;
        double wait, comp, sq;
        len -= 24;
        tb_buf_view(&tail, (const unsigned char *)data + len, 24);
        TB_CHECK(tb_buf_unpack_f64(&tail, &wait));
        TB_CHECK(tb_buf_unpack_f64(&tail, &comp));
        TB_CHECK(tb_buf_unpack_f64(&tail, &sq));
        uint32_t tasks;
        tb_buf head;
        tb_buf_view(&head, data, len);
        TB_CHECK(tb_buf_unpack_u32(&head, &tasks));
        tb__chunk_observe(&m->ch, src, tasks, comp, sq, tb_tp_now(&n->base));
        if (n->cfg->dynamic == TB__MW_DYNAMIC_WAIT)
            TB_CHECK(master_wait_stats(n, src, wait, comp));
    }
    if (m->own[src] == OWN_BUSY && !m->win && !m->failed && src != self_rank(n) &&
        tb__queue_count(m->q) > 0) {
        /* The common case: the worker's next task goes out before its
         * results are handled, as a hand-written loop would send it, so the
         * result function and the bookkeeping overlap the worker's next
         * computation instead of delaying it (bench/run, P = 2: ...). */
        m->nbusy--;
        m->own[src] = OWN_IDLE;
        m->hold_done = 1;
        int rc = master_dispatch(n, src);
        m->hold_done = 0;
        TB_CHECK(rc);
        TB_CHECK(master_records(n, src, data, len));
        return master_check_done(n);
    }
    TB_CHECK(master_records(n, src, data, len));
    if (m->own[src] == OWN_LEAVING) {
        /* Its last task for us is done: it now works for the child. */
        m->own[src] = OWN_NONE;
        m->nleaving--;
        tb_buf_clear(&m->msg);
        TB_CHECK(tb_buf_pack_i32(&m->msg, src));
        TB_CHECK(tb_tp_send(&n->base, m->dest[src], TB__TAG_FREE, &m->msg));
        master_counter(n, 0);
        return master_check_done(n);
    }
    if (m->own[src] != OWN_BUSY)
        return TB_ERR_PROTOCOL;
    if (m->win && !m->failed && src != self_rank(n) && master_should_promote(n, src))
        return master_promote(n, src);
    m->nbusy--;
    m->own[src] = OWN_IDLE;
    if (!m->failed && tb__queue_count(m->q) > 0)
        TB_CHECK(master_dispatch(n, src));
    else
        m->idle[m->nidle++] = src;
    master_counter(n, 0);
    TB_CHECK(master_maybe_request(n));
    return master_check_done(n);
}

/* Static master k of rank r, or -1 when r starts no group. */
static int master_index(const tb__mw_cfg *c, int r)
{
    int k = (int)(((int64_t)r * c->nmasters + c->nranks - 1) / c->nranks);
    return k < c->nmasters && tb__mw_group_start(c, k) == r ? k : -1;
}

/* multi:K: learn that static master r is in spell e (1 + 2 e + d, as kn). */
static void master_know(tb__mw_node *n, int r, uint32_t v)
{
    int k = master_index(n->cfg, r);
    if (k >= 0 && v > n->master->kn[k])
        n->master->kn[k] = v;
}

static uint32_t spell(uint32_t epoch, int dry) { return 1 + 2 * epoch + (dry ? 1 : 0); }

/* multi:K: the request targets follow what the master knows: every other
 * master not known to be out of tasks, in the order first tried (the next
 * masters first); one heard of with tasks again goes to the back. */
static void master_retarget(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    const tb__mw_cfg *c = n->cfg;
    int keep = 0;
    for (int i = 0; i < m->nR; i++) {
        int k = master_index(c, m->R[i]);
        if (k >= 0 && m->kn[k] != 0 && ((m->kn[k] - 1) & 1)) {
            m->inR[k] = 0;
            continue;
        }
        m->R[keep++] = m->R[i];
    }
    m->nR = keep;
    for (int j = 1; j < c->nmasters && !m->failed; j++) {
        int k = (m->k + j) % c->nmasters;
        if (!m->inR[k] && m->kn[k] != 0 && !((m->kn[k] - 1) & 1)) {
            m->inR[k] = 1;
            m->R[m->nR++] = tb__mw_group_start(c, k);
        }
    }
}

/* multi:K: what a refusal says.  A master with fewer than two tasks refuses,
 * and passes on what it knows of every master: out of tasks in which spell,
 * or given tasks in which.  The requester stops asking the masters known to
 * be out, asks again any heard of with tasks since, and passes it all on.
 * When every master runs dry at the end of a run, what each knows doubles
 * with every round trip, so the end costs about log2(K) requests instead of
 * K - 1 (a master cannot be done before it has heard from every other); the
 * spells keep a master that was given tasks after it ran dry from being
 * skipped on old news. */
static int master_pack_spells(tb__mw_node *n, tb_buf *out)
{
    TB_CHECK(tb_buf_pack_u32(out, (uint32_t)n->cfg->nmasters));
    for (int k = 0; k < n->cfg->nmasters; k++)
        TB_CHECK(tb_buf_pack_u32(out, n->master->kn[k]));
    return TB_OK;
}

/* Merge the spells at in's position (a refusal, or the head of an answer:
 * a giver tells what it knows too, so news of masters given tasks spreads
 * while masters still have tasks to give) and retarget. */
static int master_merge_spells(tb__mw_node *n, tb_buf *in)
{
    tb__mw_master *m = n->master;
    int K = n->cfg->nmasters;
    uint32_t cnt;
    TB_CHECK(tb_buf_unpack_u32(in, &cnt));
    if (cnt != (uint32_t)K || tb_buf_remaining(in) < (size_t)K * 4)
        return TB_ERR_PROTOCOL;
    for (int k = 0; k < K; k++) {
        uint32_t v;
        TB_CHECK(tb_buf_unpack_u32(in, &v));
        if (k != m->k && v > m->kn[k])
            m->kn[k] = v;
    }
    master_retarget(n);
    return TB_OK;
}

static int master_learn_spells(tb__mw_node *n, const void *data, size_t len)
{
    tb_buf in;
    tb_buf_view(&in, data, len);
    TB_CHECK(master_merge_spells(n, &in));
    return tb_buf_remaining(&in) == 0 ? TB_OK : TB_ERR_PARSE;
}

/* Nothing to give.  Under dynamic and dynamic:wait the refusal names the
 * masters this one made: tasks deep in a promotion tree are then found by
 * any master that runs dry, not only by the child's own parent.  Under
 * multi:K it names the masters known to be out of tasks. */
static int master_refuse(tb__mw_node *n, int src)
{
    tb__mw_master *m = n->master;
    tb_buf_clear(&m->msg);
    if (m->kn) {
        /* Out of tasks to give until this master is given more (one task
         * left is never given). */
        m->kn[m->k] = spell(m->epoch, 1);
        TB_CHECK(master_pack_spells(n, &m->msg));
        return tb_tp_send(&n->base, src, TB__TAG_REFUSE, &m->msg);
    }
    if ((n->cfg->dynamic != TB__MW_DYNAMIC_PREDICT && n->cfg->dynamic != TB__MW_DYNAMIC_WAIT))
        return tb_tp_send(&n->base, src, TB__TAG_REFUSE, &m->msg);
    uint32_t cnt = 0;
    TB_CHECK(tb_buf_pack_u32(&m->msg, 0));
    if (m->own[src] == OWN_CHILD)
        m->child_dry[src] = 1;
    for (int r = 0; r < n->cfg->nranks && cnt < (uint32_t)m->nchildren; r++) {
        if (m->own[r] != OWN_CHILD || r == src || m->child_dry[r])
            continue;
        TB_CHECK(tb_buf_pack_i32(&m->msg, r));
        cnt++;
    }
    tb__patch_u32(&m->msg, 0, cnt);
    return tb_tp_send(&n->base, src, TB__TAG_REFUSE, &m->msg);
}

/* Masters named in a refusal become request targets (after the others),
 * if the refusal came back sooner than a task message's round trip: asking
 * masters far away (across a slow link; a child's masters are near it) for
 * tasks at the end of the run costs more than the tasks they might give, and
 * the master cannot finish while it asks. */
static int master_learn_targets(tb__mw_node *n, const void *data, size_t len)
{
    tb__mw_master *m = n->master;
    if (len == 0 || !(tb_tp_now(&n->base) - m->req_at < m->rt))
        return TB_OK;
    tb_buf in;
    uint32_t cnt;
    tb_buf_view(&in, data, len);
    TB_CHECK(tb_buf_unpack_u32(&in, &cnt));
    for (uint32_t i = 0; i < cnt; i++) {
        int32_t r;
        TB_CHECK(tb_buf_unpack_i32(&in, &r));
        if (r < 0 || r >= n->cfg->nranks)
            return TB_ERR_PROTOCOL;
        int known = r == self_rank(n) || m->own[r] != OWN_NONE;
        for (int j = 0; j < m->nR && !known; j++)
            known = m->R[j] == r;
        if (!known && !m->failed && m->nR < n->cfg->nranks)
            m->R[m->nR++] = r;
    }
    return tb_buf_remaining(&in) == 0 ? TB_OK : TB_ERR_PARSE;
}

/* A request from master src, which has `workers` workers and (multi:K) has
 * run out of tasks in its spell `epoch`. */
static int master_answer_request(tb__mw_node *n, int src, uint32_t workers, uint32_t epoch)
{
    tb__mw_master *m = n->master;
    uint64_t have = tb__queue_count(m->q);
    tb_buf_clear(&m->msg);
    /* Half of the queue, and never the last task: giving away a last task
     * while every worker is busy makes it bounce between masters (each asks
     * as soon as its queue is empty) until a worker frees. */
    if (m->failed || have < 2) {
        if (m->kn)
            master_know(n, src, spell(epoch, 1));
        return master_refuse(n, src);
    }
    if (m->kn)
        master_know(n, src, spell(epoch + 1, 0)); /* its next spell has tasks */
    uint64_t give = have / 2;
    if ((n->cfg->dynamic == TB__MW_DYNAMIC_PREDICT || n->cfg->dynamic == TB__MW_DYNAMIC_WAIT)) {
        /* Masters of a promotion tree have very different numbers of
         * workers: half of a big queue to a master of four workers is the
         * run's tail.  Share in proportion to the workers instead. */
        uint64_t mine = (uint64_t)master_workers(m);
        give = mine + workers > 0 ? have * workers / (mine + workers) : have / 2;
        if (give < 1)
            give = 1;
        if (give > have - 1)
            give = have - 1;
    }
    TB_CHECK(tb_buf_pack_u8(&m->msg, GIVE_ANSWER));
    if (m->child_dry)
        m->child_dry[src] = 0;
    if (m->kn)
        TB_CHECK(master_pack_spells(n, &m->msg));
    TB_CHECK(tb__queue_give(m->q, give, TB__MW_MSG_MAX, &m->msg, NULL));
    master_counter(n, 1);
    TB_CHECK(tb_tp_send(&n->base, src, TB__TAG_GIVE, &m->msg));
    TB_CHECK(master_maybe_request(n));
    return master_check_done(n);
}

static int master_give(tb__mw_node *n, int src, const void *data, size_t len)
{
    tb__mw_master *m = n->master;
    if (len < 1)
        return TB_ERR_PARSE;
    int kind = ((const unsigned char *)data)[0];
    tb_buf in;
    tb_buf_view(&in, data, len);
    in.pos = 1;
    if (kind == GIVE_ANSWER && m->kn) {
        m->epoch++; /* answers always carry tasks */
        m->kn[m->k] = spell(m->epoch, 0);
        TB_CHECK(master_merge_spells(n, &in));
    }
    TB_CHECK(tb__queue_take(m->q, in.data + in.pos, tb_buf_remaining(&in)));
    tb__chunker_restart(&m->ch);
    if (kind == GIVE_INITIAL_PART)
        return TB_OK; /* more of the initial share follows */
    if (kind == GIVE_INITIAL) {
        m->have_initial = 1;
        for (int i = 0; i < m->ndeferred; i++)
            TB_CHECK(master_answer_request(n, m->deferred[i], m->deferred_w[i],
                                           m->deferred_e[i]));
        m->ndeferred = 0;
    } else if (kind == GIVE_ANSWER) {
        m->rflag = 0;
    } /* GIVE_BACK: a child merging back, unasked */
    if (m->failed)
        tb__queue_clear(m->q);
    if (m->parent >= 0 && src == m->parent) {
        m->parent_refused = 0;
    } else if (m->parent_refused &&
               tb__queue_count(m->q) >= 2 * (uint64_t)(master_workers(m) > 0 ? master_workers(m) : 1)) {
        /* Tasks from elsewhere (another master's answer, a merging child's
         * queue): the parent may name this child in refusals again.  Only
         * for two tasks per worker or more: a child named for a few tasks
         * sends every dry master after them at the end of a run, where a
         * task moved costs about as much as one computed (1024 ranks, S1's
         * 116 us tasks: 38.7 ms when no news goes up, 40.9 ms for any
         * task, 39.6 ms with this floor; with 10 ms tasks and dynamic:wait's
         * merges, no news cost 7 %). */
        m->parent_refused = 0;
        tb_buf_clear(&m->msg);
        TB_CHECK(tb_tp_send(&n->base, m->parent, TB__TAG_HAVE, &m->msg));
    }
    master_counter(n, 1);
    TB_CHECK(master_dispatch_idle(n));
    TB_CHECK(master_maybe_request(n));
    return master_check_done(n);
}

/*
 * STOP the ranks of `list` (cnt little-endian i32s) along a binomial tree:
 * the upper half of the list goes to its first rank, which passes the rest
 * of that half on in the same way, and so on with the lower half.  A master
 * that ends up with thousands of workers (the root of a promotion tree at the
 * end of the run) then sends log2(W) messages instead of W.
 */
static int stop_relay(tb_actor *a, int32_t status, const unsigned char *list, uint32_t cnt,
                      tb_buf *msg, int *sent)
{
    *sent = 0;
    while (cnt > 0) {
        uint32_t keep = cnt / 2, pass = cnt - keep;
        const unsigned char *upper = list + (size_t)keep * 4;
        tb_buf in;
        int32_t first;
        tb_buf_view(&in, upper, 4);
        TB_CHECK(tb_buf_unpack_i32(&in, &first));
        tb_buf_clear(msg);
        TB_CHECK(tb_buf_pack_i32(msg, status));
        TB_CHECK(tb_buf_pack_u32(msg, pass - 1));
        TB_CHECK(tb_buf_append(msg, upper + 4, (size_t)(pass - 1) * 4));
        TB_CHECK(tb_tp_send(a, first, TB__TAG_STOP, msg));
        ++*sent;
        cnt = keep;
    }
    return TB_OK;
}

/* This rank's partial goes up once its subtree's have come (tb_mw_set_reduce
 * with a combine function); then the rank is done. */
static int node_reduce_step(tb__mw_node *n)
{
    if (n->reduce_wait > 0)
        return TB_OK;
    if (n->reduce_up >= 0) {
        tb_buf_clear(&n->out);
        TB_CHECK(tb_buf_pack_u8(&n->out, (uint8_t)(n->reduce_failed != 0)));
        TB_CHECK(tb_buf_append(&n->out, n->partial.data, n->partial.len));
        TB_CHECK(tb_tp_send(&n->base, n->reduce_up, TB__TAG_REDUCE, &n->out));
    } else if (n->reduce_failed && n->status == TB_OK) {
        n->status = TB_ERR_TASK; /* the root's partial misses a subtree */
    }
    n->base.finished = 1;
    return TB_OK;
}

/* The run is over for this rank: it has passed STOP on to `kids` ranks, which
 * (and, on the root, the other static masters) send it their partials. */
static int node_end(tb__mw_node *n, int up, int kids)
{
    n->ending = 1;
    if (!n->cfg->combine) {
        n->base.finished = 1;
        return TB_OK;
    }
    n->reduce_up = up;
    n->reduce_wait = kids;
    return node_reduce_step(n);
}

/* A partial from a rank this one sent STOP to (or, on the root, a master). */
static int node_reduce(tb__mw_node *n, int src, const void *data, size_t len)
{
    if (!n->cfg->combine || !n->ending || n->reduce_wait <= 0 || len < 1) {
        TB_LOG_ERR("rank %d: unexpected partial from rank %d", self_rank(n), src);
        return TB_ERR_PROTOCOL;
    }
    const unsigned char *p = data;
    n->reduce_wait--;
    if (p[0]) {
        n->reduce_failed = 1;
    } else if (!n->reduce_failed) {
        int rc = n->cfg->combine(n->cfg->reduce_ctx, &n->partial, p + 1, len - 1);
        if (rc != TB_OK) {
            TB_LOG_ERR("rank %d: the combine function failed on rank %d's partial: %s",
                       self_rank(n), src, tb_strerror(rc));
            n->reduce_failed = 1;
        }
    }
    return node_reduce_step(n);
}

static int master_stop_workers(tb__mw_node *n, int status)
{
    tb__mw_master *m = n->master;
    tb_buf list = TB_BUF_INIT;
    uint32_t cnt = 0;
    int rc = TB_OK;
    for (int r = 0; r < n->cfg->nranks && rc == TB_OK; r++) {
        if (r == self_rank(n) || m->own[r] == OWN_NONE)
            continue;
        if (m->own[r] != OWN_IDLE)
            rc = TB_ERR_STATE; /* would leave a rank waiting */
        else if ((rc = tb_buf_pack_i32(&list, r)) == TB_OK)
            cnt++;
    }
    int kids = 0;
    if (rc == TB_OK)
        rc = stop_relay(&n->base, status, list.data, cnt, &m->msg, &kids);
    tb_buf_free(&list);
    TB_CHECK(rc);
    master_counter(n, 1);
    n->status = status;
    n->info.total_s = tb_tp_now(&n->base) - n->t_start;
    int K = n->cfg->nmasters;
    if (m->is_root)
        return node_end(n, -1, kids + master_tree_kids(0, K, NULL));
    return node_end(n, tb__mw_group_start(n->cfg, master_tree_parent(m->k)),
                    kids + master_tree_kids(m->k, K, NULL));
}

/* FINISH down the static masters' tree (then each stops its workers). */
static int master_pass_finish(tb__mw_node *n, int32_t status)
{
    tb__mw_master *m = n->master;
    int kids[32];
    int c = master_tree_kids(m->k, n->cfg->nmasters, kids);
    for (int i = 0; i < c; i++) {
        tb_buf_clear(&m->msg);
        TB_CHECK(tb_buf_pack_i32(&m->msg, status));
        TB_CHECK(tb_tp_send(&n->base, tb__mw_group_start(n->cfg, kids[i]), TB__TAG_FINISH,
                            &m->msg));
    }
    return master_stop_workers(n, status);
}

/* The run is over when every static master is done and every result
 * record they and their children sent has arrived (child masters send
 * results straight to the root, so nothing orders them before a DONE). */
static int root_maybe_finish(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (!m->done_sent || m->ndone < master_tree_kids(0, n->cfg->nmasters, NULL) ||
        m->fwd_got < m->fwd_expect || n->ending)
        return TB_OK;
    if (n->progress)
        tb_progress_finish(n->progress);
    root_order_counts(n);
    return master_pass_finish(n, m->failed ? TB_ERR_TASK : TB_OK);
}

/* A static master is done and so is its DONE subtree: tell its parent in
 * the tree how many result records the subtree sent the root. */
static int master_report_done(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (!m->done_sent || m->ndone < master_tree_kids(m->k, n->cfg->nmasters, NULL))
        return TB_OK;
    if (m->is_root)
        return root_maybe_finish(n);
    if (m->done_up)
        return TB_OK;
    m->done_up = 1;
    tb_buf_clear(&m->msg);
    TB_CHECK(tb_buf_pack_u64(&m->msg, m->fwd_sent + m->sub_sent));
    TB_CHECK(master_pack_counts(m, &m->msg));
    return tb_tp_send(&n->base, tb__mw_group_start(n->cfg, master_tree_parent(m->k)),
                      TB__TAG_DONE, &m->msg);
}

static void master_free(tb__mw_master *m);
static int child_start(tb__mw_node *n, int parent, const void *data, size_t len);

/* A dynamic child that has finished hands itself and its workers back to
 * its parent (S1 Fig. 3, line 49) and becomes a worker again.  Its results
 * went ahead of this message, to the root.  (Handing the last batch to the
 * parent instead, to save the root a receive per child, was tried: the
 * batches then reach the root together at the very end, where the root's
 * receiving bandwidth is the limit, and the run took 1.5x longer.) */
static int child_return(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    TB_CHECK(master_flush_fwd(n));
    tb_buf_clear(&m->msg);
    uint32_t cnt = 0;
    TB_CHECK(tb_buf_pack_u32(&m->msg, 0));
    for (int r = 0; r < n->cfg->nranks; r++) {
        if (r == self_rank(n) || m->own[r] != OWN_IDLE)
            continue;
        TB_CHECK(tb_buf_pack_i32(&m->msg, r));
        cnt++;
    }
    tb__patch_u32(&m->msg, 0, cnt);
    TB_CHECK(tb_buf_pack_u64(&m->msg, m->fwd_sent));
    TB_CHECK(tb_buf_pack_u8(&m->msg, (uint8_t)m->merging));
    TB_CHECK(master_pack_counts(m, &m->msg));
    int parent = m->parent;
    int rc = tb_tp_send(&n->base, parent, TB__TAG_RETURN, &m->msg);
    master_counter(n, 1);
    master_free(m);
    n->master = NULL;
    n->t_wait = tb_tp_now(&n->base);
    return rc;
}

static int master_check_done(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (m->done_sent || m->hold_done || m->resume || !m->have_initial || m->nbusy > 0 || m->nleaving > 0 ||
        m->narriving > 0 || m->nchildren > 0 || m->rflag || tb__queue_count(m->q) > 0 ||
        (m->nR > 0 && !m->failed))
        return TB_OK;
    m->done_sent = 1;
    if (m->parent >= 0)
        return child_return(n);
    if (!m->is_root)
        TB_CHECK(master_flush_fwd(n));
    return master_report_done(n);
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

/* A worker's results: handle them, and time the handler (the chunk rule
 * auto and S1's overload prediction use it). */
static int master_on_result(tb__mw_node *n, int src, const void *data, size_t len)
{
    tb__mw_master *m = n->master;
    m->eager = 0;
    if (!m->sent_at) {
        if (n->cfg->chunk_kind != TB__CHUNK_AUTO)
            return master_result(n, src, data, len);
        double t0 = tb_tp_now(&n->base);
        int rc = master_result(n, src, data, len);
        if (rc == TB_OK && n->master == m)
            tb__chunk_handler(&m->ch, tb_tp_now(&n->base) - t0);
        return rc;
    }
    double entry = tb_tp_now(&n->base);
    master_measure(n, src, entry);
    int rc = master_result(n, src, data, len);
    if (rc == TB_OK && n->master == m) {
        double exit = tb_tp_now(&n->base);
        m->handler = ewma(m->handler, exit - entry, m->samples);
        tb__chunk_handler(&m->ch, exit - entry);
        m->busy_sum += exit - entry;
        m->last_exit = exit;
        if (n->cfg->dynamic == TB__MW_DYNAMIC_PREDICT && src != self_rank(n) &&
            !m->done_sent) {
            rc = master_predict_period(n);
            if (rc == TB_OK && m->merging)
                rc = master_check_done(n);
        }
    }
    return rc;
}

/* A child master is done: it and its workers are this master's again. */
static int master_on_return(tb__mw_node *n, int src, const void *data, size_t len)
{
    tb__mw_master *m = n->master;
    tb_buf in;
    uint32_t cnt;
    tb_buf_view(&in, data, len);
    TB_CHECK(tb_buf_unpack_u32(&in, &cnt));
    if (m->own[src] != OWN_CHILD)
        return TB_ERR_PROTOCOL;
    m->own[src] = OWN_IDLE;
    master_acquired(m, src);
    m->nchildren--;
    master_drop_target(m, src);
    m->idle[m->nidle++] = src;
    TB_CHECK(master_take_idle(n, &in, cnt));
    uint64_t sent;
    uint8_t merged;
    TB_CHECK(tb_buf_unpack_u64(&in, &sent));
    TB_CHECK(tb_buf_unpack_u8(&in, &merged));
    TB_CHECK(master_take_counts(n, &in));
    if (tb_buf_remaining(&in) != 0)
        return TB_ERR_PARSE;
    m->merged_below |= merged;
    if (m->is_root)
        m->fwd_expect += sent;
    else
        m->fwd_sent += sent;
    TB_CHECK(master_count(n, -1, tb_tp_now(&n->base)));
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
        return master_on_result(n, src, data, len);
    case TB__TAG_FWD: { /* results of another master */
        uint32_t cnt;
        if (!m->is_root)
            return TB_ERR_PROTOCOL;
        tb_buf_view(&in, data, len);
        TB_CHECK(tb_buf_unpack_u32(&in, &cnt));
        m->fwd_got += cnt;
        TB_CHECK(master_records(n, src, data, len));
        return root_maybe_finish(n);
    }
    case TB__TAG_REQ: {
        uint32_t workers, epoch = 0;
        tb_buf_view(&in, data, len);
        TB_CHECK(tb_buf_unpack_u32(&in, &workers));
        if (m->kn)
            TB_CHECK(tb_buf_unpack_u32(&in, &epoch));
        if (!m->have_initial) {
            m->deferred_w[m->ndeferred] = workers;
            m->deferred_e[m->ndeferred] = epoch;
            m->deferred[m->ndeferred++] = src;
            return TB_OK;
        }
        return master_answer_request(n, src, workers, epoch);
    }
    case TB__TAG_GIVE:
        return master_give(n, src, data, len);
    case TB__TAG_HAVE: /* a child that was refused has tasks again */
        if (!m->child_dry)
            return TB_ERR_PROTOCOL;
        if (m->own[src] == OWN_CHILD)
            m->child_dry[src] = 0;
        return TB_OK;
    case TB__TAG_REFUSE:
        if (m->parent >= 0 && src == m->parent && n->cfg->dynamic != TB__MW_DYNAMIC_PAPER)
            m->parent_refused = 1;
        if (m->kn) { /* src's own spell in the refusal drops it */
            TB_CHECK(master_learn_spells(n, data, len));
        } else {
            master_drop_target(m, src);
            TB_CHECK(master_learn_targets(n, data, len));
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
        TB_CHECK(master_fail(n, task, rank, code)); /* passes it up */
        if (m->is_root)
            TB_CHECK(master_abort_all(n));
        return master_check_done(n);
    }
    case TB__TAG_ABORT:
        if (!m->failed) {
            m->failed = 1;
            tb__queue_clear(m->q);
            TB_CHECK(master_abort_children(n));
        }
        return master_check_done(n);
    case TB__TAG_FREE: { /* a worker the parent promised is ours now */
        int32_t w;
        tb_buf_view(&in, data, len);
        TB_CHECK(tb_buf_unpack_i32(&in, &w));
        if (w < 0 || w >= n->cfg->nranks || m->own[w] != OWN_ARRIVING)
            return TB_ERR_PROTOCOL;
        m->own[w] = OWN_IDLE;
        master_acquired(m, w);
        m->narriving--;
        m->idle[m->nidle++] = w;
        TB_CHECK(master_dispatch_idle(n));
        TB_CHECK(master_maybe_request(n));
        return master_check_done(n);
    }
    case TB__TAG_RETURN: /* a child is done: it and its workers are ours */
        return master_on_return(n, src, data, len);
    case TB__TAG_DONE: { /* a static master's subtree is done */
        uint64_t sent;
        if (m->k < 0)
            return TB_ERR_PROTOCOL;
        tb_buf_view(&in, data, len);
        TB_CHECK(tb_buf_unpack_u64(&in, &sent));
        TB_CHECK(master_take_counts(n, &in));
        if (tb_buf_remaining(&in) != 0)
            return TB_ERR_PARSE;
        if (m->is_root)
            m->fwd_expect += sent;
        else
            m->sub_sent += sent;
        m->ndone++;
        return master_report_done(n);
    }
    case TB__TAG_FINISH: {
        int32_t status;
        tb_buf_view(&in, data, len);
        TB_CHECK(tb_buf_unpack_i32(&in, &status));
        return master_pass_finish(n, status);
    }
    default:
        TB_LOG_ERR("master rank %d: unexpected message '%s' (tag %d) from rank %d", self_rank(n),
                   tb__mw_tag_name(tag), tag, src);
        return TB_ERR_PROTOCOL;
    }
}

/* ---- the actor ------------------------------------------------------------ */

static int node_start(tb_actor *a)
{
    tb__mw_node *n = (tb__mw_node *)a;
    n->t_start = n->t_wait = tb_tp_now(a);
    if (n->master) {
        n->master->period_start = n->t_start;
        return master_start(n);
    }
    return TB_OK;
}

static int node_message(tb_actor *a, int src, int tag, const void *data, size_t len)
{
    tb__mw_node *n = (tb__mw_node *)a;
    if (tag == TB__TAG_REDUCE)
        return node_reduce(n, src, data, len);
    if (n->master)
        return master_message(n, src, tag, data, len);
    if (tag == TB__TAG_TASK)
        return worker_begin(n, src, data, len);
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
        tb_buf in;
        int32_t status;
        uint32_t cnt;
        tb_buf_view(&in, data, len);
        TB_CHECK(tb_buf_unpack_i32(&in, &status));
        TB_CHECK(tb_buf_unpack_u32(&in, &cnt));
        if (tb_buf_remaining(&in) != (size_t)cnt * 4)
            return TB_ERR_PARSE;
        int kids;
        TB_CHECK(stop_relay(a, status, in.data + in.pos, cnt, &n->out, &kids));
        double now = tb_tp_now(a);
        n->info.idle_s += now - n->t_wait;
        n->info.total_s = now - n->t_start;
        n->status = status;
        return node_end(n, src, kids);
    }
    TB_LOG_ERR("worker rank %d: unexpected message '%s' (tag %d) from rank %d", a->rank,
               tb__mw_tag_name(tag), tag, src);
    return TB_ERR_PROTOCOL;
}

static int node_timer(tb_actor *a, uint64_t id)
{
    tb__mw_node *n = (tb__mw_node *)a;
    if (id != TIMER_DISPATCH || !n->master)
        return TB_ERR_PROTOCOL;
    n->master->resume = 0;
    TB_CHECK(master_dispatch_idle(n));
    if (n->master->resume)
        return TB_OK;
    TB_CHECK(master_maybe_request(n));
    return master_check_done(n);
}

const tb_actor_ops tb__mw_node_ops = {
    sizeof(tb_actor_ops), node_start, node_message, worker_computed, node_timer,
};

/* The parts every master has: ownership, stacks, request targets. */
static int master_alloc(tb__mw_node *n, tb__mw_master **out)
{
    const tb__mw_cfg *c = n->cfg;
    size_t P = (size_t)c->nranks;
    tb__mw_master *m = calloc(1, sizeof *m);
    if (!m)
        return TB_ERR_NOMEM;
    *out = m;
    m->parent = -1;
    m->own = calloc(P, 1);
    m->dest = malloc(P * sizeof *m->dest);
    m->idle = malloc(P * sizeof *m->idle);
    m->R = malloc((P + (size_t)c->nmasters) * sizeof *m->R);
    m->deferred = malloc((size_t)c->nmasters * sizeof *m->deferred);
    m->deferred_w = malloc((size_t)c->nmasters * sizeof *m->deferred_w);
    m->deferred_e = malloc((size_t)c->nmasters * sizeof *m->deferred_e);
    if (!m->own || !m->dest || !m->idle || !m->R || !m->deferred || !m->deferred_w ||
        !m->deferred_e)
        return TB_ERR_NOMEM;
    tb__queue_init(&m->own_q, c->gen, c->gen_ctx);
    m->q = &m->own_q;
    TB_CHECK(tb__chunker_init(&m->ch, c->chunk_kind, c->chunk, c->nranks));
    if (c->dynamic) {
        m->winlen = c->window > 0 ? c->window : 2 * c->nranks;
        m->win = calloc((size_t)m->winlen, sizeof *m->win);
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
        for (size_t r = 0; r < P; r++)
            m->wait_min[r] = WAIT_SKIP;
    }
    return tb_buf_pack_u32(&m->fwd, 0);
}

static void master_free(tb__mw_master *m)
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
    int rc = master_alloc(n, &m);
    n->master = m;
    if (rc != TB_OK)
        return rc;
    m->k = k;
    m->is_root = k == 0;
    if (m->is_root)
        m->q = root_bag;
    m->masters_max = c->nmasters;
    int lo = tb__mw_group_start(c, k), hi = tb__mw_group_start(c, k + 1);
    /* Idle stack popped from the end: hand out to the lowest rank first.
     * Alone in its group, a master is its own worker. */
    if (hi - lo == 1) {
        m->own[lo] = OWN_IDLE;
        m->idle[m->nidle++] = lo;
    }
    for (int r = hi - 1; r > lo; r--) {
        m->own[r] = OWN_IDLE;
        m->idle[m->nidle++] = r;
    }
    for (int j = 1; j < c->nmasters; j++)
        m->R[m->nR++] = tb__mw_group_start(c, (k + j) % c->nmasters);
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
static int child_start(tb__mw_node *n, int parent, const void *data, size_t len)
{
    tb__mw_master *m;
    int rc = master_alloc(n, &m);
    if (rc != TB_OK) {
        master_free(m);
        return rc;
    }
    n->master = m;
    double now = tb_tp_now(&n->base);
    n->info.idle_s += now - n->t_wait;
    n->info.times_master++;
    m->k = -1;
    m->parent = parent;
    m->period_start = now;
    m->have_initial = 1;
    m->R[m->nR++] = parent;
    tb_buf in;
    uint32_t cnt;
    tb_buf_view(&in, data, len);
    TB_CHECK(tb_buf_unpack_u32(&in, &cnt));
    for (uint32_t i = 0; i < cnt; i++) {
        int32_t w;
        TB_CHECK(tb_buf_unpack_i32(&in, &w));
        if (w < 0 || w >= n->cfg->nranks)
            return TB_ERR_PROTOCOL;
        m->own[w] = OWN_ARRIVING;
        m->narriving++;
    }
    TB_CHECK(tb_buf_unpack_u32(&in, &cnt));
    TB_CHECK(master_take_idle(n, &in, cnt));
    uint8_t eager;
    TB_CHECK(tb_buf_unpack_u8(&in, &eager));
    m->eager = eager;
    TB_CHECK(tb__queue_take(m->q, in.data + in.pos, tb_buf_remaining(&in)));
    tb__chunker_restart(&m->ch);
    master_counter(n, 1);
    TB_CHECK(master_dispatch_idle(n));
    TB_CHECK(master_maybe_request(n));
    return master_check_done(n);
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
    master_free(n->master);
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
    if (n->info.total_s <= 0)
        n->info.total_s = tb_tp_now(&n->base) - n->t_start;
}
