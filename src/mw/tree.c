/*
 * tree.c - the end of a run: DONE up and FINISH down the static masters'
 * tree, STOP down a tree of each master's workers, and the partials of
 * tb_mw_set_reduce back up the same trees (REDUCE).
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

#include "mw/node_internal.h"

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

/*
 * STOP the ranks of `list` (cnt little-endian i32s) along a binomial tree:
 * the upper half of the list goes to its first rank, which passes the rest
 * of that half on in the same way, and so on with the lower half.  A master
 * that ends up with thousands of workers (the root of a promotion tree at the
 * end of the run) then sends log2(W) messages instead of W.
 */
int tb__mw_stop_relay(tb_actor *a, int32_t status, const unsigned char *list, uint32_t cnt,
                      tb_buf *msg, int *sent)
{
    *sent = 0;
    while (cnt > 0) {
        uint32_t keep = cnt / 2, pass = cnt - keep;
        const unsigned char *upper = list + (size_t)keep * 4;
        tb_buf in;
        int32_t first;
        tb_buf_view(&in, upper, 4);
        TB_CHECK(tb__mw_unpack_rank(&in, &first));
        TB_CHECK(tb__mw_pack_stop(msg, status, upper + 4, pass - 1));
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
        TB_CHECK(tb__mw_pack_reduce(&n->out, n->reduce_failed, n->partial.data, n->partial.len));
        TB_CHECK(tb_tp_send(&n->base, n->reduce_up, TB__TAG_REDUCE, &n->out));
    } else if (n->reduce_failed && n->status == TB_OK) {
        n->status = TB_ERR_TASK; /* the root's partial misses a subtree */
    }
    n->base.finished = 1;
    return TB_OK;
}

/* The run is over for this rank: it has passed STOP on to `kids` ranks, which
 * (and, on the root, the other static masters) send it their partials. */
int tb__mw_node_end(tb__mw_node *n, int up, int kids)
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
int tb__mw_node_reduce(tb__mw_node *n, int src, const void *data, size_t len)
{
    if (!n->cfg->combine || !n->ending || n->reduce_wait <= 0 || len < 1) {
        TB_LOG_ERR("rank %d: unexpected partial from rank %d", tb__mw_self_rank(n), src);
        return TB_ERR_PROTOCOL;
    }
    int failed;
    const void *p;
    size_t plen;
    tb__mw_unpack_reduce(data, len, &failed, &p, &plen);
    n->reduce_wait--;
    if (failed) {
        n->reduce_failed = 1;
    } else if (!n->reduce_failed) {
        int rc = n->cfg->combine(n->cfg->reduce_ctx, &n->partial, p, plen);
        if (rc != TB_OK) {
            TB_LOG_ERR("rank %d: the combine function failed on rank %d's partial: %s",
                       tb__mw_self_rank(n), src, tb_strerror(rc));
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
    for (int r = m->lo; r < m->lo + m->span && rc == TB_OK; r++) {
        if (r == tb__mw_self_rank(n) || tb__mw_own(m, r) == OWN_NONE)
            continue;
        if (tb__mw_own(m, r) != OWN_IDLE)
            rc = TB_ERR_STATE; /* would leave a rank waiting */
        else if ((rc = tb__mw_pack_rank(&list, r)) == TB_OK)
            cnt++;
    }
    int kids = 0;
    if (rc == TB_OK)
        rc = tb__mw_stop_relay(&n->base, status, list.data, cnt, &m->msg, &kids);
    tb_buf_free(&list);
    TB_CHECK(rc);
    tb__mw_master_counter(n, 1);
    n->status = status;
    n->info.total_s = tb_tp_now(&n->base) - n->t_start;
    int K = n->cfg->nmasters;
    if (m->is_root)
        return tb__mw_node_end(n, -1, kids + master_tree_kids(0, K, NULL));
    return tb__mw_node_end(n, tb__mw_group_start(n->cfg, master_tree_parent(m->k)),
                           kids + master_tree_kids(m->k, K, NULL));
}

/* FINISH down the static masters' tree (then each stops its workers). */
int tb__mw_master_pass_finish(tb__mw_node *n, int32_t status)
{
    tb__mw_master *m = n->master;
    int kids[32];
    int c = master_tree_kids(m->k, n->cfg->nmasters, kids);
    for (int i = 0; i < c; i++) {
        TB_CHECK(tb__mw_pack_finish(&m->msg, status));
        TB_CHECK(tb_tp_send(&n->base, tb__mw_group_start(n->cfg, kids[i]), TB__TAG_FINISH,
                            &m->msg));
    }
    return master_stop_workers(n, status);
}

/* The run is over when every static master is done and every result
 * record they and their children sent has arrived (child masters send
 * results straight to the root, so nothing orders them before a DONE). */
int tb__mw_root_maybe_finish(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (!m->done_sent || m->ndone < master_tree_kids(0, n->cfg->nmasters, NULL) ||
        m->fwd_got < m->fwd_expect || n->ending)
        return TB_OK;
    if (n->progress)
        tb_progress_finish(n->progress);
    tb__mw_root_order_counts(n);
    return tb__mw_master_pass_finish(n, m->failed ? TB_ERR_TASK : TB_OK);
}

/* A static master is done and so is its DONE subtree: tell its parent in
 * the tree how many result records the subtree sent the root. */
int tb__mw_master_report_done(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (!m->done_sent || m->ndone < master_tree_kids(m->k, n->cfg->nmasters, NULL))
        return TB_OK;
    if (m->is_root)
        return tb__mw_root_maybe_finish(n);
    if (m->done_up)
        return TB_OK;
    m->done_up = 1;
    TB_CHECK(tb__mw_pack_done(&m->msg, m->fwd_sent + m->sub_sent, m->mc_n, &m->mc));
    return tb_tp_send(&n->base, tb__mw_group_start(n->cfg, master_tree_parent(m->k)),
                      TB__TAG_DONE, &m->msg);
}

int tb__mw_master_check_done_now(tb__mw_node *n)
{
    tb__mw_master *m = n->master;
    if (m->done_sent || m->hold_done || m->resume || !m->have_initial || m->nbusy > 0 || m->nleaving > 0 ||
        m->narriving > 0 || m->nchildren > 0 || m->rflag || tb__queue_count(m->q) > 0 ||
        (m->nR > 0 && !m->failed))
        return TB_OK;
    m->done_sent = 1;
    if (m->parent >= 0)
        return tb__mw_child_return(n);
    if (!m->is_root)
        TB_CHECK(tb__mw_master_flush_fwd(n));
    return tb__mw_master_report_done(n);
}
