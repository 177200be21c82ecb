/*
 * worker.c - the worker side of the node actor: the records of a TASK
 * message are computed one by one (each through tb_tp_compute) and their
 * results gathered into one RESULT message for the master that sent it.  A
 * master that is its own worker hands its task messages to itself and takes
 * the results back without a message.
 */
#include "tenbin/core.h"

#include "mw/node_internal.h"

static int worker_next(tb__mw_node *n);

static int worker_fn(void *arg)
{
    tb__mw_node *n = arg;
    tb__buf_clear(&n->scratch);
    return n->cfg->work(n->cfg->work_ctx, n->cur_id, n->cur_data, n->cur_len, &n->scratch);
}

/* A TASK message arrived (or a self-dispatch): start on its first task. */
int tb__mw_worker_begin(tb__mw_node *n, int src, const void *data, size_t len)
{
    /* Two clock reads per task: here and when it is computed (each end
     * time starts the next interval). */
    double now = tb_tp_now(&n->base);
    if (n->master == NULL)
        n->idle_s += now - n->t_wait;
    n->t_compute = n->t_arrived = now;
    n->chunk_sq = 0;
    /* A message of one task is computed before this handler returns (both
     * transports run the work function inside tb_tp_compute), so it is read
     * in place; a longer chunk outlives the message and is copied. */
    tb__buf_view(&n->in_view, data, len);
    TB_CHECK(tb__mw_unpack_task_count(&n->in_view, &n->in_left));
    if (n->in_left == 1) {
        n->cur_in = &n->in_view;
    } else {
        tb__buf_clear(&n->in);
        TB_CHECK(tb_buf_append(&n->in, data, len));
        n->in.pos = n->in_view.pos;
        n->cur_in = &n->in;
    }
    n->reply_to = src;
    TB_CHECK(tb__mw_pack_results_begin(&n->out));
    n->out_n = 0;
    return worker_next(n);
}

static int worker_reply(tb__mw_node *n)
{
    tb__mw_pack_results_end(&n->out, n->out_n);
    if (n->cfg->timed) {
        /* How long this worker waited for the message, how long it
         * computed, and the sum of its tasks' squared times: for
         * dynamic:wait's statistics (S3) and the adaptive chunk rules. */
        TB_CHECK(tb__mw_pack_result_times(&n->out, n->t_arrived - n->t_wait,
                                          n->t_compute - n->t_arrived, n->chunk_sq));
    }
    n->t_wait = n->t_compute; /* the end of the last computation */
    if (n->reply_to == tb__mw_self_rank(n)) {
        /* The master may start the next chunk at once, which rebuilds `out`:
         * hand it the finished message in the spare buffer instead. */
        tb_buf done = n->out;
        n->out = n->spare;
        n->spare = done;
        tb__buf_clear(&n->out);
        return tb__mw_master_result(n, tb__mw_self_rank(n), n->spare.data, n->spare.len);
    }
    return tb_tp_send(&n->base, n->reply_to, TB__TAG_RESULT, &n->out);
}

static int worker_next(tb__mw_node *n)
{
    if (n->in_left == 0)
        return worker_reply(n);
    uint32_t len;
    TB_CHECK(tb__mw_unpack_task(n->cur_in, &n->cur_id, &n->cur_data, &len));
    n->cur_len = len;
    /* t_compute was read just now (at the message, or the end of the
     * previous task).  Nothing runs after the compute here, but a master
     * that is its own worker comes from master_dispatch, which does: its
     * tasks complete through the loop (tail 0). */
    tb_compute c = {worker_fn, n, -1.0, "task", n->cur_id, 1, n->t_compute,
                    n->reply_to != tb__mw_self_rank(n)};
    return tb_tp_compute(&n->base, n->cur_id, &c);
}

/* A task ended at `now`: the worker's accounting. */
static void worker_account(tb__mw_node *n, uint64_t job, double now)
{
    n->busy_s += now - n->t_compute;
    n->chunk_sq += (now - n->t_compute) * (now - n->t_compute);
    n->tasks_computed++;
    n->t_last_end = now;
    if (n->trace)
        tb_trace_complete_arg(n->trace, 0, "mw", "task", n->trace_t0 + n->t_compute,
                              n->trace_t0 + now, "id", (int64_t)job);
    n->t_compute = now;
}

int tb__mw_worker_computed(tb_actor *a, uint64_t job, int status)
{
    tb__mw_node *n = (tb__mw_node *)a;
    /* The last task of a message to another rank, in a run that sends no
     * times: its result leaves first, and the clock is read after the send,
     * off the master's path (the task's busy time then includes sending
     * its result). */
    int last = n->in_left == 1 && !n->cfg->timed && n->reply_to != tb__mw_self_rank(n);
    if (!last)
        worker_account(n, job, tb_tp_now(a));
    /* A result must fit one message whatever the rank count (a master that
     * is its own worker would otherwise accept what a send cannot carry).
     * The master keeps a chunk's tasks under the same budget, so a chunk of
     * results only passes it when the results are larger than the tasks. */
    if (status == TB_OK && n->out.len + 16 + n->scratch.len > TB__MW_MSG_MAX)
        status = TB_ERR_RANGE;
    TB_CHECK(tb__mw_pack_result(&n->out, job, status, n->scratch.data,
                                status == TB_OK ? (uint32_t)n->scratch.len : 0));
    n->out_n++;
    n->in_left--;
    if (status != TB_OK)
        n->in_left = 0; /* the rest of the chunk is not computed */
    if (!last)
        return worker_next(n);
    tb__mw_pack_results_end(&n->out, n->out_n);
    int rc = tb_tp_send(&n->base, n->reply_to, TB__TAG_RESULT, &n->out);
    worker_account(n, job, tb_tp_now(a));
    n->t_wait = n->t_compute;
    return rc;
}
