/*
 * supervisor.c - branch-and-bound's supervisor (rank 0): the start-up
 * expansion of the root into a pool, dealt to the groups by their shares
 * (MOVE); the global incumbent (INC_UP in, INC_DOWN out); balancing between
 * groups from their masters' STATUS (GIVE_REQ, GIVE, MOVE); the end, when
 * nothing is pending or the bound meets the cutoff (STOP, FINAL); progress
 * lines and the watch on a timer.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bnb/proto.h"
#include "bnb/roles.h"

int tb__bnb_sup_init(tb__bnb_actor *a)
{
    const tb_bnb *b = a->b;
    tb__bnb_sup *s = &a->sup;
    size_t G = (size_t)b->ngroups;
    tb__bnb_engine_init(&s->eng, b->ops, b->ctx, b->gap);
    s->st = calloc(G, sizeof *s->st);
    s->gives_recv = calloc(G, sizeof *s->gives_recv);
    s->moves_sent = calloc(G, sizeof *s->moves_sent);
    s->sent_to = calloc(G, sizeof *s->sent_to);
    s->got_from = calloc(G, sizeof *s->got_from);
    s->final_expect = calloc(G, sizeof *s->final_expect);
    s->req_out = calloc(G, sizeof *s->req_out);
    s->finaled = calloc(G, sizeof *s->finaled);
    s->gs = calloc(G, sizeof *s->gs);
    s->wg = calloc(G, sizeof *s->wg);
    if (!s->st || !s->gives_recv || !s->moves_sent || !s->sent_to || !s->got_from ||
        !s->final_expect || !s->req_out || !s->finaled || !s->gs || !s->wg)
        return TB_ERR_NOMEM;
    return TB_OK;
}

void tb__bnb_sup_free(tb__bnb_sup *s)
{
    tb__bnb_keep_drop(&s->keep);
    tb__bnb_engine_free(&s->eng);
    tb__bnb_heap_free(&s->pool);
    tb_progress_destroy(&s->prog);
    free(s->st);
    free(s->gives_recv);
    free(s->moves_sent);
    free(s->sent_to);
    free(s->got_from);
    free(s->final_expect);
    free(s->req_out);
    free(s->finaled);
    free(s->gs);
    free(s->wg);
    memset(s, 0, sizeof *s);
}

static int sup_send(tb__bnb_actor *a, int g, int tag)
{
    tb__bnb_sup *s = &a->sup;
    s->sent_to[g]++;
    return tb__bnb_send(a, a->b->master_of[g], tag);
}

/* Shares of the groups, summing to 1. */
static void sup_shares(tb__bnb_actor *a, double *share)
{
    tb__bnb_sup *s = &a->sup;
    const tb_bnb *b = a->b;
    int G = b->ngroups;
    double known = 0;
    int nknown = 0;
    for (int g = 0; g < G; g++)
        if (s->st[g].valid && s->st[g].nodes > 0 && s->st[g].busy > 0) {
            known += s->st[g].busy / (double)s->st[g].nodes;
            nknown++;
        }
    double mean_tpn = nknown ? known / nknown : 1.0;
    double sum = 0;
    for (int g = 0; g < G; g++) {
        double w = b->nworkers[g] > 0 ? b->nworkers[g] : 1;
        double tpn = mean_tpn;
        if (s->st[g].valid && s->st[g].nodes > 0 && s->st[g].busy > 0)
            tpn = s->st[g].busy / (double)s->st[g].nodes;
        share[g] = b->balance == TB_BNB_BALANCE_SEED ? w * tpn : w / tpn;
        sum += share[g];
    }
    for (int g = 0; g < G; g++)
        share[g] = sum > 0 ? share[g] / sum : 1.0 / G;
}

/* Deal the pool to the groups with weights w (best subproblems first, each
 * to the group furthest below its weight's share so far). */
static int sup_deal(tb__bnb_actor *a, const double *w)
{
    tb__bnb_sup *s = &a->sup;
    const tb_bnb *b = a->b;
    int G = b->ngroups;
    double wsum = 0;
    for (int g = 0; g < G; g++)
        wsum += w[g];
    if (s->pool.n == 0 || !(wsum > 0) || s->ckpt_round) /* the pool is frozen in a round */
        return TB_OK;
    tb_buf *bufs = calloc((size_t)G, sizeof *bufs);
    uint32_t *cnt = calloc((size_t)G, sizeof *cnt);
    int rc = bufs && cnt ? TB_OK : TB_ERR_NOMEM;
    uint64_t dealt = 0;
    size_t biggest = 0; /* no message over the budget: the rest waits for the next deal */
    tb__bnb_sub sub;
    while (rc == TB_OK && biggest < a->b->msg_budget && tb__bnb_heap_pop(&s->pool, &sub)) {
        dealt++;
        int best = -1;
        double bestv = -INFINITY;
        for (int g = 0; g < G; g++) {
            if (!(w[g] > 0))
                continue;
            double v = w[g] / wsum * (double)dealt - cnt[g];
            if (v > bestv) {
                bestv = v;
                best = g;
            }
        }
        rc = tb__bnb_pack_sub(&bufs[best], sub.bound, sub.depth, sub.data, sub.len);
        free(sub.data);
        cnt[best]++;
        if (bufs[best].len > biggest)
            biggest = bufs[best].len;
    }
    for (int g = 0; g < G && rc == TB_OK; g++) {
        if (cnt[g] == 0)
            continue;
        rc = tb__bnb_pack_move(&a->msg, cnt[g], &bufs[g], (size_t)cnt[g] * b->sub_pad);
        if (rc == TB_OK) {
            s->moves_sent[g]++;
            s->st[g].queued += cnt[g];
            s->st[g].hungry = 0;
            rc = sup_send(a, g, T_MOVE);
        }
    }
    for (int g = 0; bufs && g < G; g++)
        tb_buf_free(&bufs[g]);
    free(bufs);
    free(cnt);
    return rc;
}

/* tb_bnb_set_checkpoint: the snapshot of what is still open (keep.c),
 * begun at the stop or a round with the supervisor's own queue (frozen from
 * now on); the masters' queues come in KEEP messages, the incumbent last. */
static int keep_begin(tb__bnb_actor *a)
{
    tb__bnb_sup *s = &a->sup;
    TB_CHECK(tb__bnb_keep_open(a->b, &s->keep));
    return tb__bnb_keep_heap(&s->keep, &s->pool, INFINITY);
}

/* The last FINAL (or a round's last CKPT_DONE) is in: the incumbent and the
 * nodes so far, then the file replaces the old one in one rename. */
static int keep_end(tb__bnb_actor *a, int final)
{
    tb__bnb_sup *s = &a->sup;
    uint64_t nodes = s->nodes_before + s->nodes;
    for (int g = 0; g < a->b->ngroups; g++) /* a round's: the groups' last statuses */
        nodes += final ? s->gs[g].nodes : s->st[g].nodes;
    return tb__bnb_keep_close(a->b, &s->keep, &s->eng, nodes, final ? 0 : s->ckpt_rounds + 1);
}

static int sup_check(tb__bnb_actor *a);
static int sup_balance(tb__bnb_actor *a, int from);

/* A checkpoint round during the run: the pool is frozen and written, every
 * group sends its queue once its tasks are in; gives that arrive meanwhile
 * are written as they come (they left their group before its part). */
static int ckpt_round_begin(tb__bnb_actor *a)
{
    tb__bnb_sup *s = &a->sup;
    if (s->stopping || s->ckpt_round)
        return TB_OK;
    TB_CHECK(keep_begin(a));
    s->ckpt_round = 1;
    s->ckpt_wait = a->b->ngroups;
    for (int g = 0; g < a->b->ngroups; g++) {
        TB_CHECK(tb__bnb_pack_ckpt(&a->msg));
        TB_CHECK(sup_send(a, g, T_CKPT));
    }
    return TB_OK;
}

static int ckpt_round_end(tb__bnb_actor *a)
{
    tb__bnb_sup *s = &a->sup;
    TB_CHECK(keep_end(a, 0));
    s->ckpt_round = 0;
    s->ckpt_rounds++;
    TB_CHECK(tb__bnb_set_timer(a, tb_tp_now(&a->base) + a->b->ckpt_interval, TIMER_CKPT));
    for (int g = 0; g < a->b->ngroups; g++) /* what waited for the round */
        if (s->st[g].valid && s->st[g].hungry)
            TB_CHECK(sup_balance(a, g));
    return sup_check(a);
}

static int sup_stop(tb__bnb_actor *a, int proven, double lower)
{
    tb__bnb_sup *s = &a->sup;
    s->stopping = 1;
    s->proven = proven;
    s->final_lower = lower;
    if (a->b->ckpt_path)
        TB_CHECK(keep_begin(a));
    for (int g = 0; g < a->b->ngroups; g++) {
        TB_CHECK(tb__bnb_pack_stop(&a->msg, s->sent_to[g]));
        TB_CHECK(tb__bnb_send(a, a->b->master_of[g], T_STOP));
    }
    return TB_OK;
}

/* Is it over?  Only from statuses that have seen every move. */
static int sup_check(tb__bnb_actor *a)
{
    tb__bnb_sup *s = &a->sup;
    if (s->stopping || s->ckpt_round) /* after the round */
        return TB_OK;
    int G = a->b->ngroups;
    uint64_t pending = s->pool.n;
    double lower = tb__bnb_heap_min_bound(&s->pool);
    for (int g = 0; g < G; g++) {
        const tb__bnb_mstat *ms = &s->st[g];
        if (!ms->valid || ms->gives_sent != s->gives_recv[g] ||
            ms->moves_got != s->moves_sent[g] || s->req_out[g])
            return TB_OK;
        pending += ms->queued + ms->inflight;
        if (ms->lower < lower)
            lower = ms->lower;
    }
    double inc = s->eng.inc;
    /* With a gap, subproblems that could beat the incumbent by less than
     * the gap were dropped: the bound can only say "within the cutoff". */
    double cut = tb__bnb_cutoff(&s->eng);
    double l = lower < inc ? lower : inc;
    if (a->b->gap > 0 && cut < l)
        l = cut;
    if (l > s->lower) {
        s->lower = l;
        if (a->tr && isfinite(l))
            TB_CHECK(tb_trace_counter(a->tr, "bounds", "bound", tb_tp_now(&a->base),
                                      tb__bnb_outward(a->b, l)));
    }
    if (pending == 0 || (isfinite(inc) && !(s->lower < cut)) || s->stop_asked)
        return sup_stop(a, !(s->lower < inc), s->lower);
    return TB_OK;
}

/* A group is hungry: ask the groups above their share for the surplus. */
static int sup_balance(tb__bnb_actor *a, int from)
{
    tb__bnb_sup *s = &a->sup;
    if (s->stopping || s->ckpt_round) /* after the round */
        return TB_OK;
    int G = a->b->ngroups;
    double *share = malloc((size_t)G * sizeof *share);
    double *w = calloc((size_t)G, sizeof *w);
    if (!share || !w) {
        free(share);
        free(w);
        return TB_ERR_NOMEM;
    }
    sup_shares(a, share);
    uint64_t total = s->pool.n;
    int hungry = 0;
    for (int g = 0; g < G; g++) {
        total += s->st[g].queued;
        hungry |= s->st[g].valid && s->st[g].hungry;
    }
    int rc = TB_OK;
    if (s->pool.n > 0 && hungry) {
        for (int g = 0; g < G; g++)
            w[g] = s->st[g].hungry ? share[g] : 0;
        rc = sup_deal(a, w);
    } else if (hungry || a->b->force_moves) {
        for (int g = 0; g < G && rc == TB_OK; g++) {
            double target = (double)total * share[g];
            uint64_t q = s->st[g].queued;
            if (s->req_out[g] || q < 2 || (double)q <= target)
                continue;
            if (!hungry && g != from) /* forced moves: from the one that reported */
                continue;
            uint64_t want = (uint64_t)ceil((double)q - target);
            if (want < 1)
                want = 1;
            rc = tb__bnb_pack_give_req(&a->msg, want);
            if (rc == TB_OK) {
                s->req_out[g] = 1;
                rc = sup_send(a, g, T_GIVE_REQ);
            }
        }
    }
    free(share);
    free(w);
    return rc;
}

/* Subproblems a group gave: to the groups below their share. */
static int sup_got_give(tb__bnb_actor *a, int from)
{
    tb__bnb_sup *s = &a->sup;
    int G = a->b->ngroups;
    double *share = malloc((size_t)G * sizeof *share);
    double *w = calloc((size_t)G, sizeof *w);
    if (!share || !w) {
        free(share);
        free(w);
        return TB_ERR_NOMEM;
    }
    sup_shares(a, share);
    uint64_t total = s->pool.n;
    for (int g = 0; g < G; g++)
        total += s->st[g].queued;
    double wsum = 0;
    for (int g = 0; g < G; g++) {
        double deficit = (double)total * share[g] - (double)s->st[g].queued;
        w[g] = g != from && deficit > 0 ? deficit : 0;
        wsum += w[g];
    }
    if (!(wsum > 0)) /* nobody below its share: everybody but the giver */
        for (int g = 0; g < G; g++)
            w[g] = g != from || G == 1 ? share[g] : 0;
    int rc = sup_deal(a, w);
    free(share);
    free(w);
    return rc;
}

static int sup_incumbent(tb__bnb_actor *a, double v, const void *sol, uint32_t len)
{
    tb__bnb_sup *s = &a->sup;
    if (!(v < s->eng.inc))
        return TB_OK;
    s->eng.inc = v;
    if (a->tr)
        TB_CHECK(tb_trace_counter(a->tr, "bounds", "incumbent", tb_tp_now(&a->base),
                                  tb__bnb_outward(a->b, v)));
    tb_buf_clear(&s->eng.sol);
    TB_CHECK(tb_buf_append(&s->eng.sol, sol, len));
    if (s->stopping)
        return TB_OK;
    for (int g = 0; g < a->b->ngroups; g++) {
        TB_CHECK(tb__bnb_pack_inc_down(&a->msg, v));
        TB_CHECK(sup_send(a, g, T_INC_DOWN));
    }
    return TB_OK;
}

/* Start-up: expand best first until every worker can have `startup`
 * subproblems, the pool is over its limit (it holds work enough to deal;
 * depth first from there would go on until the task time is up, and with a
 * small limit expand the whole tree alone), or the tree is done. */
static int startup_fn(void *arg)
{
    tb__bnb_actor *a = arg;
    tb__bnb_sup *s = &a->sup;
    const tb_bnb *b = a->b;
    uint64_t workers = 0;
    for (int g = 0; g < b->ngroups; g++)
        workers += (uint64_t)(b->nworkers[g] > 0 ? b->nworkers[g] : 1);
    uint64_t want = workers * (uint64_t)b->startup;
    uint64_t n0 = s->eng.nodes;
    /* Within one target task time: the supervisor is one process, and
     * while it expands every worker waits.  Its nodes cost the node cost
     * in the model; the transport says what that is on its clock (real:
     * the wall time so far). */
    int rc = TB_OK;
    /* With the problem's split, the pool is cut to `want` after the
     * expansion (free in the model: it evaluates nothing), so that every
     * worker has work at once instead of after a level of the tree per node
     * (log2(workers) of them for a binary tree).  The expansion is worth
     * the workers' wait while nodes are cheap (a frontier best first, an
     * incumbent); one node that takes the whole budget is not: then the
     * split comes first.  The model knows a node's cost beforehand; a real
     * run learns it from the first node (spent: the wall time so far). */
    int split = tb__bnb_splits(b);
    if (split && tb_tp_spent(&a->base, b->node_cost) >= b->task_time)
        rc = tb__bnb_split_pool(&s->eng, &s->pool, want);
    while (rc == TB_OK && s->pool.n > 0 && s->pool.n < want && !s->pool.tight) {
        double spent = tb_tp_spent(&a->base, (double)(s->eng.nodes - n0) * b->node_cost);
        if (s->eng.nodes > n0 && spent >= b->task_time)
            break;
        if (s->pool.dive && isfinite(s->eng.inc)) {
            tb__bnb_heap_prune(&s->pool, tb__bnb_cutoff(&s->eng), 0);
            continue;
        }
        tb__bnb_sub sub;
        tb__bnb_heap_pop(&s->pool, &sub);
        rc = tb__bnb_expand_into(&s->eng, &sub, &s->pool);
        free(sub.data);
    }
    tb__bnb_heap_prune(&s->pool, tb__bnb_cutoff(&s->eng), 0);
    if (rc == TB_OK && split)
        rc = tb__bnb_split_pool(&s->eng, &s->pool, want);
    a->last_nodes = s->eng.nodes - n0;
    s->nodes += a->last_nodes;
    return rc;
}

static int sup_begin(tb__bnb_actor *a)
{
    tb__bnb_sup *s = &a->sup;
    const tb_bnb *b = a->b;
    if (b->ckpt_path && b->ckpt_interval > 0)
        TB_CHECK(tb__bnb_set_timer(a, tb_tp_now(&a->base) + b->ckpt_interval, TIMER_CKPT));
    if (isfinite(s->eng.inc)) {
        for (int g = 0; g < b->ngroups; g++) {
            TB_CHECK(tb__bnb_pack_inc_down(&a->msg, s->eng.inc));
            TB_CHECK(sup_send(a, g, T_INC_DOWN));
        }
    }
    size_t G = b->ngroups > 0 ? (size_t)b->ngroups : 1;
    double *w = calloc(G, sizeof *w);
    if (!w)
        return TB_ERR_NOMEM;
    for (int g = 0; g < b->ngroups; g++)
        w[g] = b->startup > 0 ? (b->nworkers[g] > 0 ? b->nworkers[g] : 1) : g == 0;
    int rc = sup_deal(a, w);
    free(w);
    int any = 0;
    for (int g = 0; g < b->ngroups; g++)
        any |= s->moves_sent[g] > 0;
    if (rc == TB_OK && !any) /* solved during start-up */
        rc = sup_stop(a, 1, s->eng.inc);
    return rc;
}

/* --resume: the open subproblems of the checkpoint (read and checked
 * before the run) instead of the root, and its incumbent, to the groups
 * too. */
static int sup_resume(tb__bnb_actor *a)
{
    tb__bnb_sup *s = &a->sup;
    double inc;
    const void *sol;
    size_t sol_len;
    TB_CHECK(tb__bnb_keep_load(a->b, &s->pool, &inc, &sol, &sol_len, &s->nodes_before));
    if (isfinite(inc))
        TB_CHECK(sup_incumbent(a, inc, sol, (uint32_t)sol_len));
    s->pool.dive = !isfinite(inc);
    return TB_OK;
}

int tb__bnb_sup_start(tb__bnb_actor *a)
{
    tb__bnb_sup *s = &a->sup;
    tb__bnb_sub root;
    s->pool.dive = 1;
    s->pool.limit = a->b->pool_limit;
    if (a->b->resume.data) {
        TB_CHECK(sup_resume(a));
    } else {
        TB_CHECK(tb__bnb_root(&s->eng, &root));
        int rc = tb__bnb_heap_push(&s->pool, root);
        if (rc != TB_OK) {
            free(root.data);
            return rc;
        }
    }
    s->lower = -INFINITY;
    if (a->b->progress && !s->prog)
        TB_CHECK(tb_progress_create(&s->prog, a->b->progress, "nodes", 0,
                                    TB_PROGRESS_INTERVAL_ENV));
    if (a->b->progress || a->b->watch) {
        s->next_watch = 0;
        TB_CHECK(tb__bnb_set_timer(a, a->b->watch ? 0 : tb_progress_note_due(s->prog),
                                   TIMER_PROGRESS));
    }
    if (a->b->startup > 0) {
        s->t_startup = tb_tp_now(&a->base);
        tb_compute c = {startup_fn, a, -1.0, "start-up task", 0, 0, 0.0, 0};
        return tb_tp_compute(&a->base, JOB_STARTUP, &c);
    }
    s->pool.dive = 0;
    return sup_begin(a);
}

static int sup_try_close(tb__bnb_actor *a)
{
    tb__bnb_sup *s = &a->sup;
    for (int g = 0; g < a->b->ngroups; g++)
        if (!s->finaled[g] || s->got_from[g] < (uint64_t)s->final_expect[g])
            return TB_OK;
    s->t_end = tb_tp_now(&a->base);
    if (s->keep.open)
        TB_CHECK(keep_end(a, 1));
    if (s->pool.tightened)
        TB_LOG_INFO("branch-and-bound: the supervisor's queue went over %zu bytes %" PRIu64
                    " times (depth first until half)",
                    s->pool.limit, s->pool.tightened);
    tb__bnb_close(a);
    return TB_OK;
}

int tb__bnb_sup_message(tb__bnb_actor *a, int src, int tag, const void *data, size_t len)
{
    tb__bnb_sup *s = &a->sup;
    const tb_bnb *b = a->b;
    int g = src > 0 && src < b->size ? b->group_of[src] : -1;
    if (g < 0 || b->master_of[g] != src) {
        TB_LOG_ERR("branch-and-bound: supervisor: message %d from rank %d, not a master", tag,
                   src);
        return TB_ERR_PARSE;
    }
    tb_buf in;
    tb_buf_view(&in, data, len);
    if (tag != T_FINAL)
        s->got_from[g]++;
    switch (tag) {
    case T_STATUS: {
        tb__bnb_mstat *ms = &s->st[g];
        tb__bnb_status_msg st;
        TB_CHECK(tb__bnb_unpack_status(&in, &st));
        ms->valid = 1;
        ms->queued = st.queued;
        ms->inflight = st.inflight;
        ms->lower = st.lower;
        ms->tasks = st.tasks;
        ms->nodes = st.nodes;
        ms->busy = st.busy;
        ms->workers = st.workers;
        ms->gives_sent = st.gives_sent;
        ms->moves_got = st.moves_got;
        ms->hungry = st.hungry;
        TB_CHECK(sup_check(a));
        return sup_balance(a, g);
    }
    case T_INC_UP: {
        double v;
        const void *sol;
        uint32_t n;
        TB_CHECK(tb__bnb_unpack_inc_up(&in, &v, &sol, &n));
        TB_CHECK(sup_incumbent(a, v, sol, n));
        return sup_check(a);
    }
    case T_GIVE: {
        uint32_t n;
        TB_CHECK(tb__bnb_unpack_give(&in, &n));
        for (uint32_t i = 0; i < n; i++) {
            tb__bnb_sub sub;
            TB_CHECK(tb__bnb_unpack_sub(&in, &sub));
            /* in a round: it left its group before the group's part was
             * taken, after the pool's: kept here, once */
            int rc = s->ckpt_round
                         ? tb__bnb_keep_sub(&s->keep, sub.bound, sub.depth, sub.data, sub.len)
                         : TB_OK;
            if (rc == TB_OK)
                rc = tb__bnb_heap_push(&s->pool, sub);
            if (rc != TB_OK) {
                free(sub.data);
                return rc;
            }
        }
        s->gives_recv[g]++;
        s->req_out[g] = 0;
        s->st[g].queued = s->st[g].queued > n ? s->st[g].queued - n : 0;
        if (s->stopping) /* cannot happen: no stop while a give is asked */
            return TB_ERR_STATE;
        TB_CHECK(sup_got_give(a, g));
        return sup_check(a);
    }
    case T_KEEP: {
        uint32_t n;
        TB_CHECK(tb__bnb_unpack_keep(&in, &n));
        for (uint32_t i = 0; i < n; i++) {
            tb__bnb_sub sub;
            TB_CHECK(tb__bnb_unpack_sub(&in, &sub));
            int rc = s->keep.open
                         ? tb__bnb_keep_sub(&s->keep, sub.bound, sub.depth, sub.data, sub.len)
                         : TB_ERR_STATE;
            free(sub.data);
            TB_CHECK(rc);
        }
        return TB_OK;
    }
    case T_CKPT_DONE:
        TB_CHECK(tb__bnb_unpack_ckpt_done(&in));
        if (!s->ckpt_round || s->ckpt_wait <= 0)
            return TB_ERR_STATE;
        return --s->ckpt_wait == 0 ? ckpt_round_end(a) : TB_OK;
    case T_FINAL: {
        tb_bnb_group *gs = &s->gs[g];
        tb__bnb_final_msg f;
        TB_CHECK(tb__bnb_unpack_final(&in, &f));
        gs->tasks = f.tasks;
        gs->nodes = f.nodes;
        gs->busy_s = f.busy;
        gs->idle_s = f.idle;
        gs->startup_idle_s = f.startup_idle;
        gs->moved_in = f.moved_in;
        gs->moved_out = f.moved_out;
        gs->master = src;
        gs->workers = (int)f.workers;
        s->finaled[g] = 1;
        s->final_expect[g] = (int64_t)f.sent;
        if (f.depth > s->final_depth)
            s->final_depth = f.depth;
        return sup_try_close(a);
    }
    default:
        break;
    }
    TB_LOG_ERR("branch-and-bound: supervisor: unexpected message '%s' (tag %d) from rank %d",
               tb__bnb_tag_name(tag), tag, src);
    return TB_ERR_PARSE;
}

/* The supervisor's view now (the groups in s->wg, for the watch). */
static void sup_state(tb__bnb_actor *a, tb_bnb_state *st)
{
    tb__bnb_sup *s = &a->sup;
    const tb_bnb *b = a->b;
    uint64_t pending = s->pool.n, nodes = s->nodes;
    for (int g = 0; g < b->ngroups; g++) {
        const tb__bnb_mstat *m = &s->st[g];
        pending += m->queued + m->inflight;
        nodes += m->nodes;
        if (s->wg)
            s->wg[g] = (tb_bnb_watch_group){b->nworkers[g] > 0 ? b->nworkers[g] : 1,
                                            m->queued + m->inflight, m->nodes, m->tasks, m->busy};
    }
    *st = (tb_bnb_state){0};
    st->elapsed_s = tb_tp_now(&a->base);
    st->found = isfinite(s->eng.inc);
    st->incumbent = tb__bnb_outward(b, s->eng.inc);
    st->bound = tb__bnb_outward(b, s->lower);
    st->gap = tb__bnb_gap(s->eng.inc, s->lower);
    st->pending = pending;
    st->nodes = nodes;
    st->solution = st->found && s->eng.sol.len ? s->eng.sol.data : NULL;
    st->solution_len = st->solution ? s->eng.sol.len : 0;
    st->ngroups = b->ngroups;
    st->groups = s->wg;
}

/* Progress lines and the watch, each at its own interval, on one timer. */
static int sup_tick(tb__bnb_actor *a)
{
    tb__bnb_sup *s = &a->sup;
    const tb_bnb *b = a->b;
    double now = tb_tp_now(&a->base);
    tb_bnb_state st;
    if (s->prog && now >= tb_progress_note_due(s->prog)) {
        sup_state(a, &st);
        tb__bnb_progress_line(s->prog, now, &st);
    }
    if (b->watch && now >= s->next_watch) {
        sup_state(a, &st);
        s->next_watch = now + b->watch_interval;
        if (b->watch(b->watch_arg, &st) && !s->stop_asked) {
            s->stop_asked = 1;
            TB_CHECK(sup_check(a));
        }
    }
    if (s->stopping)
        return TB_OK;
    double next = tb_progress_note_due(s->prog); /* INFINITY without lines */
    if (b->watch && s->next_watch < next)
        next = s->next_watch;
    return tb__bnb_set_timer(a, next, TIMER_PROGRESS);
}

/* The start-up expansion ended: its trace bar, then deal its pool. */
int tb__bnb_sup_startup_done(tb__bnb_actor *a)
{
    if (a->tr)
        TB_CHECK(tb_trace_complete_arg(a->tr, 0, "bnb", "start-up", a->sup.t_startup,
                                       tb_tp_now(&a->base), "nodes", (int64_t)a->last_nodes));
    TB_CHECK(sup_begin(a));
    return sup_check(a);
}

int tb__bnb_sup_interrupt(tb__bnb_actor *a, int sig)
{
    tb__bnb_sup *s = &a->sup;
    if (s->stopping || s->stop_asked)
        return TB_OK;
    s->interrupted = sig;
    s->stop_asked = 1;
    tb_bnb_state st;
    sup_state(a, &st);
    /* Said at once: a launcher may not wait long for the clean end. */
    TB_LOG_WARN("bnb: %s: stopping the search; so far incumbent %.10g, bound %.10g, gap %.3g%%, "
                "%" PRIu64 " nodes",
                tb_signal_name(sig), st.incumbent, st.bound, 100 * st.gap, st.nodes);
    return sup_check(a);
}

int tb__bnb_sup_timer(tb__bnb_actor *a, uint64_t id)
{
    if (a->sup.stopping)
        return TB_OK;
    if (id == TIMER_CKPT)
        return ckpt_round_begin(a);
    return id == TIMER_PROGRESS ? sup_tick(a) : TB_OK;
}
