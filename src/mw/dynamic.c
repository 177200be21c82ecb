/*
 * dynamic.c - the dynamic policies (S1's promotion, S3's split and merge):
 * when a worker becomes a child master (dynamic:paper's overload rule,
 * dynamic's predicted gain, dynamic:wait's queueing share, and the fan-out
 * of idle workers), the measurements those rules use, a child master's
 * merge back into its parent, and its return once it is done.
 */
#include "tenbin/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mw/node_internal.h"

static int master_promoted(tb__mw_node *n, int p);

static int cmp_int_desc(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x < y) - (x > y);
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
int tb__mw_master_fan_out(tb__mw_node *n)
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
    TB__MW_AT(m, own, p) = OWN_CHILD;
    if (m->child_dry)
        TB__MW_AT(m, child_dry, p) = 0;
    m->nchildren++;
    TB_CHECK(tb__mw_pack_mstart(&m->msg, 0)); /* no busy workers */
    TB_CHECK(tb__mw_pack_mstart_idle(&m->msg, (uint32_t)give));
    for (int i = 0; i < give; i++) {
        TB__MW_AT(m, own, m->idle[i]) = OWN_NONE;
        TB_CHECK(tb__mw_pack_rank(&m->msg, m->idle[i]));
    }
    m->nidle -= give + 1;
    memmove(m->idle, m->idle + give + 1, (size_t)m->nidle * sizeof *m->idle);
    TB_CHECK(tb__mw_pack_mstart_end(&m->msg, 1)); /* the child fans out at once too */
    TB_CHECK(tb__queue_give(m->q, share, TB__MW_MSG_MAX, &m->msg, NULL));
    TB_LOG_INFO("rank %d: a message waits with %d workers still idle: %d becomes a master "
                "with %d of them and %llu tasks",
                tb__mw_self_rank(n), m->nidle + give + 1, p, give, (unsigned long long)share);
    return master_promoted(n, p);
}

/* Measurements of the predictive policy, taken as a result arrives from w. */
void tb__mw_master_measure(tb__mw_node *n, int w, double entry)
{
    tb__mw_master *m = n->master;
    if (!m->sent_at || w == tb__mw_self_rank(n))
        return;
    m->samples++;
    double rt = entry - TB__MW_AT(m, sent_at, w);
    m->rt = tb__mw_ewma(m->rt, rt, m->samples);
    m->rt_recent[m->rt_n++ % TB__MW_RT_RECENT] = rt;
    m->rt_last_w = w;
    /* Back to back (a message was waiting when the last handler ended): the
     * gap between the two handlers is what receiving one message costs. */
    if (m->last_waiting > 0 && m->last_exit > 0)
        m->recv = tb__mw_ewma(m->recv, entry - m->last_exit, m->samples);
}

/*
 * Whom to promote.  A worker made a master computes no more, so the run
 * loses least with a slow one: the reporter p qualifies when its round trip,
 * just measured, is among the slowest third of the master's last
 * TB__MW_RT_RECENT (on equal workers any of them does, near enough).  With
 * speeds 1-4 at P = 64 (bench/s1-sweep) the first reporter, most often a
 * fast worker, was promoted: 1.04 of the best multi:K, now 1.02.
 */
static int master_slow_enough(const tb__mw_master *m, int p)
{
    if (m->rt_last_w != p || m->rt_n == 0)
        return 1;
    uint64_t cnt = m->rt_n < TB__MW_RT_RECENT ? m->rt_n : TB__MW_RT_RECENT, slower = 0;
    double mine = m->rt_recent[(m->rt_n - 1) % TB__MW_RT_RECENT];
    for (uint64_t i = 0; i < cnt; i++)
        slower += m->rt_recent[i] > mine;
    return 3 * slower <= cnt;
}

/*
 * The policy `dynamic`: promote only when K+1 masters are predicted to finish
 * the queue sooner than K with one worker fewer (S1's open problem).  With W
 * workers of cycle T (a task message's round trip minus the time it queued
 * at this master) and a service time s per result (receive + handler), this
 * master completes X(W) = min(W/T, 1/s) tasks per second.  Promoting p leaves
 * W-1 workers, split in two halves each with its own master:
 * X' = X(a) + X(b).  Promote when Q/X' + T (the moved workers finish their
 * current task first) < 0.95 Q/X, Q the tasks queued here, once min(W, 64)
 * results are measured, and p is among the slow workers
 * (master_slow_enough).  Decisions to promote are logged at info level, the
 * others at debug level.
 */
static int master_predict_gain(tb__mw_node *n, int p)
{
    tb__mw_master *m = n->master;
    int W = m->nbusy + m->nidle;
    /* W results, not 2W: at P = 64 and 256 (bench/s1-sweep) the wait for
     * the second W cost 3-5 % of the run. */
    if (m->samples < (uint64_t)(W < 64 ? W : 64) || m->winfill == 0)
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
    int gain = t_new < 0.95 * t_now;
    int yes = gain && master_slow_enough(m, p);
    /* Asked on most results: the line is made only when it is shown. */
    tb_log_level lv = yes ? TB_LOG_INFO : TB_LOG_DEBUG;
    if (lv <= tb_log_get_level())
        tb_log(lv,
               "rank %d: promote %d? W=%d T=%.3g s service=%.3g s queue=%.0f: %.4g s now, "
               "%.4g s with one more master: %s",
               tb__mw_self_rank(n), p, W, T, s, Q, t_now, t_new,
               yes ? "yes" : gain ? "not this one (a fast worker)" : "no");
    return yes;
}

/*
 * S1's rule (Fig. 3, line 14): the master is overloaded (on average at
 * least one message was waiting after each of the last assignments) and at
 * least four other workers are busy, so that both halves keep two or more.
 * A test hook may force or forbid a promotion.
 */
int tb__mw_master_should_promote(tb__mw_node *n, int p)
{
    tb__mw_master *m = n->master;
    if (m->nbusy - 1 < 4 || tb__queue_count(m->q) < 2)
        return 0;
    if (n->cfg->promote_hook) {
        int h = n->cfg->promote_hook(n->cfg->hook_ctx, tb__mw_self_rank(n), p,
                                     n->info.tasks_assigned);
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
int tb__mw_master_promote(tb__mw_node *n, int p)
{
    tb__mw_master *m = n->master;
    TB__MW_AT(m, own, p) = OWN_CHILD;
    if (m->child_dry)
        TB__MW_AT(m, child_dry, p) = 0;
    m->nbusy--;
    m->nchildren++;
    int give = m->nbusy / 2;
    TB_CHECK(tb__mw_pack_mstart(&m->msg, (uint32_t)give));
    for (int r = m->lo + m->span - 1; r >= m->lo && give > 0; r--) {
        if (tb__mw_own(m, r) != OWN_BUSY || r == tb__mw_self_rank(n))
            continue;
        TB__MW_AT(m, own, r) = OWN_LEAVING;
        TB__MW_AT(m, dest, r) = p;
        m->nbusy--;
        m->nleaving++;
        give--;
        TB_CHECK(tb__mw_pack_rank(&m->msg, r));
    }
    TB_CHECK(tb__mw_pack_mstart_idle(&m->msg, 0)); /* no idle workers */
    TB_CHECK(tb__mw_pack_mstart_end(&m->msg, 0));  /* no fan-out at once */
    TB_CHECK(tb__queue_give(m->q, tb__queue_count(m->q) / 2, TB__MW_MSG_MAX, &m->msg, NULL));
    return master_promoted(n, p);
}

/* The end of a promotion: p is a request target, the count goes up. */
static int master_promoted(tb__mw_node *n, int p)
{
    tb__mw_master *m = n->master;
    TB_CHECK(tb__mw_add_target(m, p));
    TB_CHECK(tb_tp_send(&n->base, p, TB__TAG_MSTART, &m->msg));
    double now = tb_tp_now(&n->base);
    m->want_split = 0; /* a new period judges the new arrangement */
    m->period_n = 0;
    m->queue_sum = m->ideal_sum = m->busy_sum = 0;
    m->period_start = now;
    n->info.promotions++;
    if (n->info.promotions == 1)
        n->info.first_promotion_s = now - n->t_start;
    tb__mw_master_counter(n, 1);
    TB_CHECK(tb__mw_master_count(n, +1, now));
    TB_CHECK(tb__mw_master_maybe_request(n));
    return tb__mw_master_check_done(n);
}

/* Worker w joins this master from another one. */
void tb__mw_master_acquired(tb__mw_master *m, int w)
{
    if (m->wait_min)
        TB__MW_AT(m, wait_min, w) = WAIT_SKIP;
}

/* cnt idle workers (i32 ranks in `in`) handed over by another master
 * (RETURN, MSTART): ours now. */
int tb__mw_master_take_idle(tb__mw_node *n, tb_buf *in, uint32_t cnt)
{
    tb__mw_master *m = n->master;
    for (uint32_t i = 0; i < cnt; i++) {
        int32_t w;
        TB_CHECK(tb__mw_unpack_rank(in, &w));
        if (!tb__mw_in(m, w) || tb__mw_own(m, w) != OWN_NONE)
            return TB_ERR_PROTOCOL;
        TB__MW_AT(m, own, w) = OWN_IDLE;
        tb__mw_master_acquired(m, w);
        m->idle[m->nidle++] = w;
    }
    return TB_OK;
}

/* Give the whole queue to the parent, in as many messages as it takes. */
static int master_give_back(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    while (tb__queue_count(m->q) > 0) {
        TB_CHECK(tb__mw_pack_give(&m->msg, GIVE_BACK));
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
        int h = n->cfg->promote_hook(n->cfg->hook_ctx, tb__mw_self_rank(n), -1,
                                     n->info.tasks_assigned);
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

int tb__mw_master_wait_stats(tb__mw_node *n, int src, double wait, double comp)
{
    tb__mw_master *m = n->master;
    if (!m->wait_min || src == tb__mw_self_rank(n) || m->failed)
        return TB_OK;
    if (TB__MW_AT(m, wait_min, src) == WAIT_SKIP) {
        /* Its first wait with us spans a change of master, not queueing. */
        TB__MW_AT(m, wait_min, src) = WAIT_NONE;
        return TB_OK;
    }
    if (TB__MW_AT(m, wait_min, src) < 0 || wait < TB__MW_AT(m, wait_min, src))
        TB__MW_AT(m, wait_min, src) = wait;
    m->queue_sum += wait - TB__MW_AT(m, wait_min, src);
    m->ideal_sum += comp + TB__MW_AT(m, wait_min, src);
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
           tb__mw_self_rank(n), share, m->period_n, th, load,
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
int tb__mw_master_predict_period(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (m->failed || !master_period_step(m))
        return TB_OK;
    double now = tb_tp_now(&n->base);
    double load = master_period_load(n, now);
    int merge = master_merge_verdict(n, m->periods++ > 0, load < 0.05);
    if (merge)
        TB_LOG_INFO("rank %d: handlers busy %.3g of the time over %d results: merge",
                    tb__mw_self_rank(n), load, m->period_n);
    master_period_reset(m, now);
    return merge ? master_merge(n) : TB_OK;
}

/* A dynamic child that has finished hands itself and its workers back to
 * its parent (S1 Fig. 3, line 49) and becomes a worker again.  Its results
 * went ahead of this message, to the root.  (Handing the last batch to the
 * parent instead, to save the root a receive per child, was tried: the
 * batches then reach the root together at the very end, where the root's
 * receiving bandwidth is the limit, and the run took 1.5x longer.) */
int tb__mw_child_return(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    TB_CHECK(tb__mw_master_flush_fwd(n));
    uint32_t cnt = 0;
    TB_CHECK(tb__mw_pack_return(&m->msg));
    for (int r = m->lo; r < m->lo + m->span; r++) {
        if (r == tb__mw_self_rank(n) || tb__mw_own(m, r) != OWN_IDLE)
            continue;
        TB_CHECK(tb__mw_pack_rank(&m->msg, r));
        cnt++;
    }
    TB_CHECK(tb__mw_pack_return_end(&m->msg, cnt, m->fwd_sent, m->merging, m->mc_n, &m->mc));
    int parent = m->parent;
    int rc = tb_tp_send(&n->base, parent, TB__TAG_RETURN, &m->msg);
    tb__mw_master_counter(n, 1);
    tb__mw_master_free(m);
    n->master = NULL;
    n->t_wait = tb_tp_now(&n->base);
    return rc;
}

/* A child master is done: it and its workers are this master's again. */
int tb__mw_master_on_return(tb__mw_node *n, int src, const void *data, size_t len)
{
    tb__mw_master *m = n->master;
    tb_buf in;
    uint32_t cnt;
    tb_buf_view(&in, data, len);
    TB_CHECK(tb__mw_unpack_ranks(&in, &cnt));
    if (tb__mw_own(m, src) != OWN_CHILD)
        return TB_ERR_PROTOCOL;
    TB__MW_AT(m, own, src) = OWN_IDLE;
    tb__mw_master_acquired(m, src);
    m->nchildren--;
    tb__mw_master_drop_target(m, src);
    m->idle[m->nidle++] = src;
    TB_CHECK(tb__mw_master_take_idle(n, &in, cnt));
    uint64_t sent;
    int merged;
    TB_CHECK(tb__mw_unpack_return_end(&in, &sent, &merged));
    TB_CHECK(tb__mw_master_take_counts(n, &in));
    if (tb_buf_remaining(&in) != 0)
        return TB_ERR_PARSE;
    m->merged_below |= merged;
    if (m->is_root)
        m->fwd_expect += sent;
    else
        m->fwd_sent += sent;
    TB_CHECK(tb__mw_master_count(n, -1, tb_tp_now(&n->base)));
    TB_CHECK(tb__mw_master_dispatch_idle(n));
    TB_CHECK(tb__mw_master_maybe_request(n));
    return tb__mw_master_check_done(n);
}
