/*
 * request.c - masters asking each other for tasks (S1's Fig. 3): a master
 * out of tasks asks its first request target (REQ), which answers with a
 * share of its queue (GIVE) or refuses (REFUSE); a refusal drops the target.
 * Under multi:K (K > 2) refusals and answers carry what the masters know of
 * each other's spells of tasks; under dynamic and dynamic:wait a refusal
 * names the refuser's child masters.
 */
#include "tenbin/core.h"

#include <string.h>

#include "mw/node_internal.h"

int tb__mw_master_request_now(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    m->rflag = 1;
    m->req_at = tb_tp_now(&n->base);
    TB_CHECK(
        tb__mw_pack_req(&m->msg, (uint32_t)tb__mw_master_workers(m), m->kn != NULL, m->epoch));
    return tb_tp_send(&n->base, m->R[0], TB__TAG_REQ, &m->msg);
}

/* A request target refused, or returned: no longer ask it. */
void tb__mw_master_drop_target(tb__mw_master *m, int r)
{
    for (int i = 0; i < m->nR; i++) {
        if (m->R[i] == r) {
            memmove(m->R + i, m->R + i + 1, (size_t)(m->nR - i - 1) * sizeof *m->R);
            m->nR--;
            return;
        }
    }
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
            m->R[m->nR++] = tb__mw_group_start(c, k); /* one per group: capR has room */
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
    return tb__mw_pack_spells(out, n->master->kn, n->cfg->nmasters);
}

/* Merge the spells at in's position (a refusal, or the head of an answer:
 * a giver tells what it knows too, so news of masters given tasks spreads
 * while masters still have tasks to give) and retarget. */
static int master_merge_spells(tb__mw_node *n, tb_buf *in)
{
    tb__mw_master *m = n->master;
    int K = n->cfg->nmasters;
    TB_CHECK(tb__mw_unpack_spells(in, K));
    for (int k = 0; k < K; k++) {
        uint32_t v;
        TB_CHECK(tb__mw_unpack_spell(in, &v));
        if (k != m->k && v > m->kn[k])
            m->kn[k] = v;
    }
    master_retarget(n);
    return TB_OK;
}

int tb__mw_master_learn_spells(tb__mw_node *n, const void *data, size_t len)
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
    if (m->kn) {
        /* Out of tasks to give until this master is given more (one task
         * left is never given). */
        m->kn[m->k] = spell(m->epoch, 1);
        TB_CHECK(tb__mw_pack_refuse_spells(&m->msg, m->kn, n->cfg->nmasters));
        return tb_tp_send(&n->base, src, TB__TAG_REFUSE, &m->msg);
    }
    if ((n->cfg->dynamic != TB__MW_DYNAMIC_PREDICT && n->cfg->dynamic != TB__MW_DYNAMIC_WAIT)) {
        tb__mw_pack_empty(&m->msg);
        return tb_tp_send(&n->base, src, TB__TAG_REFUSE, &m->msg);
    }
    uint32_t cnt = 0;
    TB_CHECK(tb__mw_pack_refuse_ranks(&m->msg));
    if (tb__mw_own(m, src) == OWN_CHILD)
        TB__MW_AT(m, child_dry, src) = 1;
    for (int r = m->lo; r < m->lo + m->span && cnt < (uint32_t)m->nchildren; r++) {
        if (tb__mw_own(m, r) != OWN_CHILD || r == src || TB__MW_AT(m, child_dry, r))
            continue;
        TB_CHECK(tb__mw_pack_rank(&m->msg, r));
        cnt++;
    }
    tb__mw_pack_refuse_ranks_end(&m->msg, cnt);
    return tb_tp_send(&n->base, src, TB__TAG_REFUSE, &m->msg);
}

/* Masters named in a refusal become request targets (after the others),
 * if the refusal came back sooner than a task message's round trip: asking
 * masters far away (across a slow link; a child's masters are near it) for
 * tasks at the end of the run costs more than the tasks they might give, and
 * the master cannot finish while it asks. */
int tb__mw_master_learn_targets(tb__mw_node *n, const void *data, size_t len)
{
    tb__mw_master *m = n->master;
    if (len == 0 || !(tb_tp_now(&n->base) - m->req_at < m->rt))
        return TB_OK;
    tb_buf in;
    uint32_t cnt;
    tb_buf_view(&in, data, len);
    TB_CHECK(tb__mw_unpack_ranks(&in, &cnt));
    for (uint32_t i = 0; i < cnt; i++) {
        int32_t r;
        TB_CHECK(tb__mw_unpack_rank(&in, &r));
        if (r < 0 || r >= n->cfg->nranks)
            return TB_ERR_PROTOCOL;
        int known = r == tb__mw_self_rank(n) || tb__mw_own(m, r) != OWN_NONE;
        for (int j = 0; j < m->nR && !known; j++)
            known = m->R[j] == r;
        if (!known && !m->failed && m->nR < n->cfg->nranks)
            TB_CHECK(tb__mw_add_target(m, r));
    }
    return tb_buf_remaining(&in) == 0 ? TB_OK : TB_ERR_PARSE;
}

/* A request from master src, which has `workers` workers and (multi:K) has
 * run out of tasks in its spell `epoch`. */
int tb__mw_master_answer_request(tb__mw_node *n, int src, uint32_t workers, uint32_t epoch)
{
    tb__mw_master *m = n->master;
    uint64_t have = tb__queue_count(m->q);
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
        uint64_t mine = (uint64_t)tb__mw_master_workers(m);
        give = mine + workers > 0 ? have * workers / (mine + workers) : have / 2;
        if (give < 1)
            give = 1;
        if (give > have - 1)
            give = have - 1;
    }
    TB_CHECK(tb__mw_pack_give(&m->msg, GIVE_ANSWER));
    if (m->child_dry && tb__mw_in(m, src))
        TB__MW_AT(m, child_dry, src) = 0;
    if (m->kn)
        TB_CHECK(master_pack_spells(n, &m->msg));
    TB_CHECK(tb__queue_give(m->q, give, TB__MW_MSG_MAX, &m->msg, NULL));
    tb__mw_master_counter(n, 1);
    TB_CHECK(tb_tp_send(&n->base, src, TB__TAG_GIVE, &m->msg));
    TB_CHECK(tb__mw_master_maybe_request(n));
    return tb__mw_master_check_done(n);
}

int tb__mw_master_give(tb__mw_node *n, int src, const void *data, size_t len)
{
    tb__mw_master *m = n->master;
    int kind;
    tb_buf in;
    TB_CHECK(tb__mw_unpack_give(data, len, &kind, &in));
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
            TB_CHECK(tb__mw_master_answer_request(n, m->deferred[i], m->deferred_w[i],
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
               tb__queue_count(m->q) >=
                   2 * (uint64_t)(tb__mw_master_workers(m) > 0 ? tb__mw_master_workers(m) : 1)) {
        /* Tasks from elsewhere (another master's answer, a merging child's
         * queue): the parent may name this child in refusals again.  Only
         * for two tasks per worker or more: a child named for a few tasks
         * sends every dry master after them at the end of a run, where a
         * task moved costs about as much as one computed (1024 ranks, S1's
         * 116 us tasks: 38.7 ms when no news goes up, 40.9 ms for any
         * task, 39.6 ms with this floor; with 10 ms tasks and dynamic:wait's
         * merges, no news cost 7 %). */
        m->parent_refused = 0;
        tb__mw_pack_empty(&m->msg);
        TB_CHECK(tb_tp_send(&n->base, m->parent, TB__TAG_HAVE, &m->msg));
    }
    tb__mw_master_counter(n, 1);
    TB_CHECK(tb__mw_master_dispatch_idle(n));
    TB_CHECK(tb__mw_master_maybe_request(n));
    return tb__mw_master_check_done(n);
}
