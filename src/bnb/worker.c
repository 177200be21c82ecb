/*
 * worker.c - branch-and-bound's worker role: take a TASK (a batch of
 * subproblems, the incumbent, the depth), expand it depth first as one
 * computation, answer with a RESULT (the survivors at that depth, the
 * counters, a better solution if found); at WSTOP, its counters in WFINAL.
 *
 * A master without workers runs its tasks through the same functions, on
 * the worker state it holds (tb__bnb_worker_of).
 */
#include <stdlib.h>

#include "bnb/proto.h"
#include "bnb/roles.h"

void tb__bnb_worker_init(tb__bnb_worker *w, const tb_bnb *b, int master)
{
    w->master = master;
    tb__bnb_engine_init(&w->eng, b->ops, b->ctx, b->gap);
}

/* Drop the subproblems of the current task. */
static void clear_subs(tb__bnb_worker *w)
{
    for (size_t i = 0; i < w->nsubs; i++)
        free(w->subs[i].data);
    w->nsubs = 0;
}

void tb__bnb_worker_free(tb__bnb_worker *w)
{
    tb__bnb_engine_free(&w->eng);
    tb_buf_free(&w->out);
    clear_subs(w);
    free(w->subs);
    w->subs = NULL;
    w->capsubs = 0;
}

tb__bnb_worker *tb__bnb_worker_of(tb__bnb_actor *a)
{
    return a->role == ROLE_MASTER ? &a->master.w : &a->worker;
}

int tb__bnb_worker_add(tb__bnb_worker *w, tb__bnb_sub s)
{
    TB_CHECK(tb_grow(&w->subs, &w->capsubs, w->nsubs, sizeof *w->subs, 8));
    w->subs[w->nsubs++] = s;
    return TB_OK;
}

/* The expansion of a task (the computation of a worker, or of a master
 * without workers): survivors into w->out. */
static int task_fn(void *arg)
{
    tb__bnb_actor *a = arg;
    tb__bnb_worker *w = tb__bnb_worker_of(a);
    uint64_t n0 = w->eng.nodes;
    tb_buf_clear(&w->out);
    w->nout = 0;
    w->eng.cut = 0;
    int rc = TB_OK;
    for (size_t i = 0; i < w->nsubs && rc == TB_OK; i++) {
        const tb__bnb_sub *t = &w->subs[i];
        if (w->eng.cut) { /* the answer is full: the rest goes back as it came */
            rc = tb__bnb_pack_sub(&w->out, t->bound, t->depth, t->data, t->len);
            w->nout++;
        } else {
            rc = tb__bnb_expand(&w->eng, t->data, t->len, t->bound, t->depth, w->levels,
                                a->b->msg_budget, &w->out, &w->nout);
        }
    }
    clear_subs(w);
    a->last_nodes = w->eng.nodes - n0;
    return rc;
}

/* Take a TASK into w->subs. */
static int read_task(tb__bnb_worker *w, tb_buf *in)
{
    clear_subs(w);
    tb__bnb_task_msg t;
    TB_CHECK(tb__bnb_unpack_task(in, &t));
    for (uint32_t i = 0; i < t.n; i++) {
        tb__bnb_sub sub;
        TB_CHECK(tb__bnb_unpack_sub(in, &sub));
        int rc = tb__bnb_worker_add(w, sub);
        if (rc != TB_OK) {
            free(sub.data);
            return rc;
        }
    }
    if (t.levels == 0 || t.n == 0)
        return TB_ERR_PARSE;
    w->task_id = t.id;
    w->levels = t.levels;
    tb__bnb_engine_offer(&w->eng, t.inc);
    w->eng.improved = 0;
    return TB_OK;
}

/* The result of the task just expanded, into m. */
static int pack_result(tb__bnb_actor *a, tb__bnb_worker *w, tb_buf *m, double seconds)
{
    tb__bnb_result_msg r = {.id = w->task_id,
                            .levels = w->eng.cut ? 0 : w->levels, /* 0: stopped at its budget */
                            .nodes = a->last_nodes,
                            .seconds = seconds,
                            .inc = w->eng.inc,
                            .n = w->nout};
    if (w->eng.improved) {
        r.sol = w->eng.sol.data;
        r.sol_len = (uint32_t)w->eng.sol.len;
    }
    w->eng.improved = 0;
    return tb__bnb_pack_result(m, &r, &w->out, (size_t)w->nout * a->b->sub_pad);
}

int tb__bnb_start_task(tb__bnb_actor *a)
{
    tb__bnb_worker *w = tb__bnb_worker_of(a);
    double now = tb_tp_now(&a->base);
    w->idle += now - w->free_since;
    if (!w->had_task)
        w->startup_idle += now - w->free_since;
    w->had_task = 1;
    w->t_start = now;
    tb_compute c = {task_fn, a, -1.0, "task", w->task_id, 0, 0.0, 0};
    return tb_tp_compute(&a->base, JOB_TASK, &c);
}

int tb__bnb_end_task(tb__bnb_actor *a, tb_buf *m)
{
    tb__bnb_worker *w = tb__bnb_worker_of(a);
    double now = tb_tp_now(&a->base);
    double took = now - w->t_start;
    w->busy += took;
    w->tasks++;
    w->nodes += a->last_nodes;
    w->free_since = now;
    if (a->tr)
        TB_CHECK(tb_trace_complete_arg(a->tr, 0, "bnb", "task", w->t_start, now, "nodes",
                                       (int64_t)a->last_nodes));
    return pack_result(a, w, m, took);
}

int tb__bnb_worker_start(tb__bnb_actor *a)
{
    a->worker.free_since = tb_tp_now(&a->base);
    return TB_OK;
}

int tb__bnb_worker_message(tb__bnb_actor *a, int src, int tag, const void *data, size_t len)
{
    tb__bnb_worker *w = &a->worker;
    tb_buf in;
    tb_buf_view(&in, data, len);
    if (tag == T_TASK && src == w->master) {
        TB_CHECK(read_task(w, &in));
        return tb__bnb_start_task(a);
    }
    if (tag == T_WSTOP && src == w->master) {
        TB_CHECK(tb__bnb_unpack_wstop(&in));
        /* The wait since its last task is idle time too (the end of the
         * search, when the open subproblems are fewer than the workers). */
        double now = tb_tp_now(&a->base);
        w->idle += now - w->free_since;
        if (!w->had_task)
            w->startup_idle += now - w->free_since;
        w->free_since = now;
        tb__bnb_wfinal_msg f = {.tasks = w->tasks,
                                .nodes = w->nodes,
                                .busy = w->busy,
                                .idle = w->idle,
                                .startup_idle = w->startup_idle};
        TB_CHECK(tb__bnb_pack_wfinal(&a->msg, &f));
        TB_CHECK(tb__bnb_send(a, w->master, T_WFINAL));
        a->base.finished = 1;
        return TB_OK;
    }
    TB_LOG_ERR("branch-and-bound: worker %d: unexpected message '%s' (tag %d) from rank %d",
               a->base.rank, tb__bnb_tag_name(tag), tag, src);
    return TB_ERR_PARSE;
}

/* A worker's task ended: its result to its master. */
int tb__bnb_worker_computed(tb__bnb_actor *a)
{
    TB_CHECK(tb__bnb_end_task(a, &a->msg));
    return tb__bnb_send(a, a->worker.master, T_RESULT);
}
