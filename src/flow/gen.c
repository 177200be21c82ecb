/*
 * gen.c - random task networks as in S2 section 5.2.
 *
 * The network is grown on "nodes", each a task or an independent task set:
 * start with two tasks joined by a stream, then apply one of three
 * operations with equal probability until the task count exceeds the
 * target:
 *   chain             a node other than the first, T, becomes T -> new task
 *                     (the new task takes over T's outputs);
 *   control-parallel  a node other than the first and the last gets a twin
 *                     task with the same inputs and outputs;
 *   data-parallel     a single task other than the first and the last
 *                     becomes a set of its_size tasks.
 * Then every node edge u -> v becomes an edge between every task of u and
 * every task of v.  Work and data are uniform in their ranges, data times
 * the CCR.
 *
 * With sets = TB_FLOW_SETS_GENERATED the network's independent task sets
 * are its set nodes, replacing the structural ones tb_flow_finalize found
 * (which merge a twin into its original's set).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/flow_internal.h"

typedef struct ids {
    uint32_t *v;
    size_t n, cap;
} ids;

typedef struct gnode {
    size_t size; /* tasks */
    ids in, out;
} gnode;

typedef struct gnet {
    gnode *node;
    size_t n, cap;
    size_t last;  /* the exit node */
    size_t tasks;
} gnet;

static int ids_push(ids *l, uint32_t x)
{
    if (tb_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v, 4))
        return TB_ERR_NOMEM;
    l->v[l->n++] = x;
    return TB_OK;
}

static void ids_replace(ids *l, uint32_t from, uint32_t to)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i] == from)
            l->v[i] = to;
}

static int new_node(gnet *g, size_t *out)
{
    if (tb_grow((void **)&g->node, &g->cap, g->n + 1, sizeof *g->node, 64))
        return TB_ERR_NOMEM;
    memset(&g->node[g->n], 0, sizeof g->node[g->n]);
    g->node[g->n].size = 1;
    g->tasks++;
    *out = g->n++;
    return TB_OK;
}

static int op_chain(gnet *g, size_t t)
{
    size_t nn;
    int rc = new_node(g, &nn);
    if (rc)
        return rc;
    gnode *T = &g->node[t], *N = &g->node[nn];
    N->out = T->out;
    for (size_t i = 0; i < N->out.n; i++)
        ids_replace(&g->node[N->out.v[i]].in, (uint32_t)t, (uint32_t)nn);
    memset(&T->out, 0, sizeof T->out);
    if ((rc = ids_push(&T->out, (uint32_t)nn)) || (rc = ids_push(&N->in, (uint32_t)t)))
        return rc;
    if (g->last == t)
        g->last = nn;
    return TB_OK;
}

static int op_twin(gnet *g, size_t t)
{
    size_t nn;
    int rc = new_node(g, &nn);
    if (rc)
        return rc;
    gnode *T = &g->node[t];
    size_t nin = T->in.n, nout = T->out.n;
    for (size_t i = 0; i < nin; i++) {
        uint32_t u = g->node[t].in.v[i];
        if ((rc = ids_push(&g->node[nn].in, u)) || (rc = ids_push(&g->node[u].out, (uint32_t)nn)))
            return rc;
    }
    for (size_t i = 0; i < nout; i++) {
        uint32_t v = g->node[t].out.v[i];
        if ((rc = ids_push(&g->node[nn].out, v)) || (rc = ids_push(&g->node[v].in, (uint32_t)nn)))
            return rc;
    }
    return TB_OK;
}

/* Grow the node network. */
static int grow(gnet *g, const tb_flow_gen_opts *o, tb_rng *r)
{
    size_t a, b;
    int rc;
    if ((rc = new_node(g, &a)) || (rc = new_node(g, &b)))
        return rc;
    if ((rc = ids_push(&g->node[a].out, (uint32_t)b)) || (rc = ids_push(&g->node[b].in, (uint32_t)a)))
        return rc;
    g->last = b;
    while (g->tasks <= o->tasks) {
        int op = (int)tb_rng_below(r, 3);
        if (op == 0) {
            size_t t = 1 + tb_rng_below(r, g->n - 1); /* any but the first */
            rc = op_chain(g, t);
        } else {
            /* any but the first and the last; data-parallel: single tasks,
             * or with dp_draw_any any node, a set staying as it is */
            int any = op == 1 || o->dp_draw_any;
            size_t cand = 0, pick;
            for (size_t i = 1; i < g->n; i++)
                cand += i != g->last && (any || g->node[i].size == 1);
            if (!cand)
                continue;
            pick = tb_rng_below(r, cand);
            size_t t = 1;
            for (;; t++)
                if (t != g->last && (any || g->node[t].size == 1) && pick-- == 0)
                    break;
            if (op == 1) {
                rc = op_twin(g, t);
            } else if (g->node[t].size == 1) {
                g->node[t].size = o->its_size;
                g->tasks += o->its_size - 1;
            }
        }
        if (rc)
            return rc;
    }
    return TB_OK;
}

/* Nodes to tasks and edges. */
static int expand(const gnet *g, const tb_flow_gen_opts *o, tb_rng *r, tb_flow *f)
{
    size_t *first = malloc(g->n * sizeof *first);
    if (!first)
        return TB_ERR_NOMEM;
    int rc = TB_OK;
    size_t k = 0;
    for (size_t i = 0; i < g->n && !rc; i++) {
        first[i] = k;
        for (size_t j = 0; j < g->node[i].size && !rc; j++) {
            char id[32];
            snprintf(id, sizeof id, "t%zu", k++);
            rc = tb_flow_add_task(f, id, tb_rng_uniform(r, o->work_min, o->work_max), NULL);
        }
    }
    for (size_t u = 0; u < g->n && !rc; u++)
        for (size_t e = 0; e < g->node[u].out.n && !rc; e++) {
            uint32_t v = g->node[u].out.v[e];
            for (size_t i = 0; i < g->node[u].size && !rc; i++)
                for (size_t j = 0; j < g->node[v].size && !rc; j++)
                    rc = tb_flow_add_edge(f, first[u] + i, first[v] + j,
                                          tb_rng_uniform(r, o->data_min, o->data_max) * o->ccr);
        }
    free(first);
    return rc;
}

/* Make the set nodes the workflow's independent task sets (after
 * tb_flow_finalize, which numbered the tasks node by node as expand added
 * them).  Sets are numbered by their smallest task, as find_its does. */
static int generated_sets(const gnet *g, tb_flow *f)
{
    size_t nits = 0;
    for (size_t i = 0; i < g->n; i++)
        nits += g->node[i].size > 1;
    uint32_t *cnt = malloc((nits ? nits : 1) * sizeof *cnt);
    if (!cnt)
        return TB_ERR_NOMEM;
    size_t k = 0, s = 0;
    for (size_t i = 0; i < g->n; i++) {
        int32_t set = -1;
        if (g->node[i].size > 1) {
            cnt[s] = (uint32_t)g->node[i].size;
            set = (int32_t)s++;
        }
        for (size_t j = 0; j < g->node[i].size; j++)
            f->its[k++] = set;
    }
    free(f->its_count);
    f->its_count = cnt;
    f->nits = nits;
    return TB_OK;
}

void tb_flow_gen_opts_init(tb_flow_gen_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->tasks = 1000;
    o->its_size = 100;
    o->work_min = 100;
    o->work_max = 200;
    o->data_min = 100;
    o->data_max = 200;
    o->ccr = 1.0;
    o->sets = TB_FLOW_SETS_STRUCTURAL;
    o->dp_draw_any = 0;
}

int tb_flow_generate(const tb_flow_gen_opts *o, uint64_t seed, tb_flow **out)
{
    if (!o || !out || o->size < sizeof *o)
        return TB_ERR_INVALID;
    *out = NULL;
    if (o->tasks < 2 || o->its_size < 2 || o->its_size > (1u << 20) || o->tasks > (1u << 28) ||
        !(o->work_min >= 0 && o->work_max >= o->work_min) ||
        !(o->data_min >= 0 && o->data_max >= o->data_min) || !(o->ccr >= 0) ||
        (o->sets != TB_FLOW_SETS_STRUCTURAL && o->sets != TB_FLOW_SETS_GENERATED))
        return TB_ERR_RANGE;
    tb_rng r;
    tb_rng_seed(&r, seed);
    gnet g = {0};
    tb_flow *f = NULL;
    int rc = grow(&g, o, &r);
    if (!rc)
        rc = tb_flow_create(&f, 0);
    if (!rc) {
        char name[64];
        snprintf(name, sizeof name, "random-%llu", (unsigned long long)seed);
        tb_flow_set_name(f, name);
        rc = expand(&g, o, &r, f);
    }
    if (!rc)
        rc = tb_flow_finalize(f);
    if (!rc && o->sets == TB_FLOW_SETS_GENERATED)
        rc = generated_sets(&g, f);
    for (size_t i = 0; i < g.n; i++) {
        free(g.node[i].in.v);
        free(g.node[i].out.v);
    }
    free(g.node);
    if (rc)
        tb_flow_destroy(&f);
    *out = f;
    return rc;
}

int tb_flow_gen_platform(size_t hosts, double load_mean, uint64_t seed, tb_platform **out)
{
    if (!out || !hosts || hosts > 1u << 20)
        return TB_ERR_INVALID;
    char spec[160];
    snprintf(spec, sizeof spec, "hosts=%zu,speed=1-5,L=0,G=0.01", hosts);
    int rc = tb_platform_parse_spec(spec, seed, out, NULL, 0);
    if (rc || !(load_mean > 0))
        return rc;
    /* load on a random half: shuffle the host indices, load the first half */
    size_t *idx = malloc(hosts * sizeof *idx);
    if (!idx) {
        tb_platform_destroy(out);
        return TB_ERR_NOMEM;
    }
    tb_rng r;
    tb_rng_seed_stream(&r, seed, 0x5eed10ad);
    for (size_t i = 0; i < hosts; i++)
        idx[i] = i;
    for (size_t i = hosts; i > 1; i--) {
        size_t j = tb_rng_below(&r, i), t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
    for (size_t i = 0; i < hosts / 2; i++) {
        tb_host *h = &(*out)->hosts[idx[i]];
        h->kind = TB_SPEED_LOAD;
        h->lambda = 1.0 / load_mean;
    }
    free(idx);
    return TB_OK;
}
