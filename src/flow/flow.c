/*
 * flow.c - building and indexing a workflow: tasks, edges, files, the
 * finalize step (edge data from files, successor/predecessor lists, cycle
 * check, topological order, independent task sets) and the accessors.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/flow_internal.h"

int tb__flow_fail(tb_flow *f, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tb__verrf(f->err, sizeof f->err, code, fmt, ap);
    va_end(ap);
    return code;
}

/* ---- name table ------------------------------------------------------------ */

static uint64_t hash_str(const char *s)
{
    return tb_fnv1a(TB_FNV1A_INIT, s, strlen(s));
}

int tb__flow_names_find(const tb_flow_names *t, char *const *names, const char *key,
                        size_t *index)
{
    if (!t->cap)
        return TB_ERR_NOTFOUND;
    size_t mask = t->cap - 1;
    for (size_t i = hash_str(key) & mask;; i = (i + 1) & mask) {
        uint32_t v = t->slot[i];
        if (!v)
            return TB_ERR_NOTFOUND;
        if (strcmp(names[v - 1], key) == 0) {
            if (index)
                *index = v - 1;
            return TB_OK;
        }
    }
}

static int names_grow(tb_flow_names *t, char *const *names)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    uint32_t *slot = calloc(cap, sizeof *slot);
    if (!slot)
        return TB_ERR_NOMEM;
    for (size_t i = 0; i < t->cap; i++) {
        uint32_t v = t->slot[i];
        if (!v)
            continue;
        size_t j = hash_str(names[v - 1]) & (cap - 1);
        while (slot[j])
            j = (j + 1) & (cap - 1);
        slot[j] = v;
    }
    free(t->slot);
    t->slot = slot;
    t->cap = cap;
    return TB_OK;
}

/* names[index] must be set; the caller checked it is not present. */
int tb__flow_names_add(tb_flow_names *t, char *const *names, size_t index)
{
    if ((t->n + 1) * 2 > t->cap) {
        int rc = names_grow(t, names);
        if (rc)
            return rc;
    }
    size_t mask = t->cap - 1;
    size_t i = hash_str(names[index]) & mask;
    while (t->slot[i])
        i = (i + 1) & mask;
    t->slot[i] = (uint32_t)index + 1;
    t->n++;
    return TB_OK;
}

void tb__flow_names_free(tb_flow_names *t)
{
    free(t->slot);
    memset(t, 0, sizeof *t);
}

/* ---- building ---------------------------------------------------------------- */

int tb_flow_create(tb_flow **out, size_t nhosts_costs)
{
    if (!out)
        return TB_ERR_INVALID;
    *out = NULL;
    if (nhosts_costs > 1u << 20)
        return TB_ERR_RANGE;
    tb_flow *f = calloc(1, sizeof *f);
    if (!f)
        return TB_ERR_NOMEM;
    f->q = nhosts_costs;
    *out = f;
    return TB_OK;
}

void tb_flow_destroy(tb_flow **fp)
{
    if (!fp || !*fp)
        return;
    tb_flow *f = *fp;
    for (size_t i = 0; i < f->n; i++) {
        free(f->id[i]);
        if (f->cmd && f->cmd[i]) {
            for (char **a = f->cmd[i]; *a; a++)
                free(*a);
            free(f->cmd[i]);
        }
    }
    free(f->cmd);
    free(f->fin_off);
    free(f->fin);
    free(f->fout_off);
    free(f->fout);
    for (size_t i = 0; i < f->nfiles; i++)
        free(f->fname[i]);
    free(f->id);
    free(f->work);
    free(f->cost);
    tb__flow_names_free(&f->ids);
    tb__flow_names_free(&f->fnames);
    free(f->raw);
    free(f->fname);
    free(f->fsize);
    free(f->use);
    free(f->soff);
    free(f->succ);
    free(f->sdata);
    free(f->poff);
    free(f->pred);
    free(f->pedge);
    free(f->topo);
    free(f->its);
    free(f->its_count);
    free(f);
    *fp = NULL;
}

int tb_flow_set_name(tb_flow *f, const char *name)
{
    if (!f || !name)
        return TB_ERR_INVALID;
    snprintf(f->name, sizeof f->name, "%s", name);
    return TB_OK;
}

const char *tb_flow_error(const tb_flow *f)
{
    return f ? f->err : "";
}

static int grow_tasks(tb_flow *f)
{
    if (f->n < f->cap)
        return TB_OK;
    size_t cap = f->cap ? f->cap * 2 : 64;
    char **id = realloc(f->id, cap * sizeof *id);
    if (!id)
        return TB_ERR_NOMEM;
    f->id = id;
    double *work = realloc(f->work, cap * sizeof *work);
    if (!work)
        return TB_ERR_NOMEM;
    f->work = work;
    char ***cmd = realloc(f->cmd, cap * sizeof *cmd);
    if (!cmd)
        return TB_ERR_NOMEM;
    f->cmd = cmd;
    if (f->q) {
        double *cost = realloc(f->cost, cap * f->q * sizeof *cost);
        if (!cost)
            return TB_ERR_NOMEM;
        f->cost = cost;
    }
    f->cap = cap;
    return TB_OK;
}

int tb_flow_add_task(tb_flow *f, const char *id, double work, size_t *index)
{
    if (!f || !id)
        return TB_ERR_INVALID;
    if (f->final)
        return tb__flow_fail(f, TB_ERR_STATE, "%s: workflow already finalized", f->name);
    if (!*id)
        return tb__flow_fail(f, TB_ERR_INVALID, "%s: empty task id", f->name);
    if (!(work >= 0) || !isfinite(work))
        return tb__flow_fail(f, TB_ERR_RANGE, "%s: task '%s': work must be a finite number >= 0",
                             f->name, id);
    if (f->n >= UINT32_MAX - 1)
        return tb__flow_fail(f, TB_ERR_RANGE, "%s: too many tasks", f->name);
    if (tb__flow_names_find(&f->ids, f->id, id, NULL) == TB_OK)
        return tb__flow_fail(f, TB_ERR_INVALID, "%s: duplicate task id '%s'", f->name, id);
    int rc = grow_tasks(f);
    if (rc)
        return rc;
    char *copy = strdup(id);
    if (!copy)
        return TB_ERR_NOMEM;
    size_t t = f->n;
    f->id[t] = copy;
    f->work[t] = work;
    f->cmd[t] = NULL;
    for (size_t h = 0; h < f->q; h++)
        f->cost[t * f->q + h] = NAN;
    f->n++;
    rc = tb__flow_names_add(&f->ids, f->id, t);
    if (rc) {
        f->n--;
        free(copy);
        return rc;
    }
    if (index)
        *index = t;
    return TB_OK;
}

int tb_flow_set_costs(tb_flow *f, size_t task, const double *cost)
{
    if (!f || !cost)
        return TB_ERR_INVALID;
    if (f->final)
        return TB_ERR_STATE;
    if (!f->q || task >= f->n)
        return TB_ERR_RANGE;
    for (size_t h = 0; h < f->q; h++) {
        if (!(cost[h] >= 0) || !isfinite(cost[h]))
            return tb__flow_fail(f, TB_ERR_RANGE,
                                 "%s: task '%s': cost on host %zu must be a finite number >= 0",
                                 f->name, f->id[task], h + 1);
        f->cost[task * f->q + h] = cost[h];
    }
    return TB_OK;
}

int tb_flow_set_command(tb_flow *f, size_t task, const char *program, size_t nargs,
                        const char *const *args)
{
    if (!f || !program || (nargs && !args))
        return TB_ERR_INVALID;
    if (f->final)
        return TB_ERR_STATE;
    if (task >= f->n || nargs > (1u << 20))
        return TB_ERR_RANGE;
    if (!*program)
        return tb__flow_fail(f, TB_ERR_INVALID, "%s: task '%s': empty program name", f->name,
                             f->id[task]);
    char **argv = calloc(nargs + 2, sizeof *argv);
    if (!argv)
        return TB_ERR_NOMEM;
    int ok = (argv[0] = strdup(program)) != NULL;
    for (size_t i = 0; i < nargs && ok; i++)
        ok = args[i] && (argv[i + 1] = strdup(args[i])) != NULL;
    if (!ok) {
        for (char **a = argv; *a; a++)
            free(*a);
        free(argv);
        return TB_ERR_NOMEM;
    }
    if (f->cmd[task]) {
        for (char **a = f->cmd[task]; *a; a++)
            free(*a);
        free(f->cmd[task]);
    }
    f->cmd[task] = argv;
    return TB_OK;
}

int tb_flow_find(const tb_flow *f, const char *id, size_t *index)
{
    if (!f || !id)
        return TB_ERR_INVALID;
    return tb__flow_names_find(&f->ids, f->id, id, index);
}

int tb_flow_add_edge(tb_flow *f, size_t from, size_t to, double data)
{
    if (!f)
        return TB_ERR_INVALID;
    if (f->final)
        return TB_ERR_STATE;
    if (from >= f->n || to >= f->n)
        return tb__flow_fail(f, TB_ERR_RANGE, "%s: edge to a task that does not exist", f->name);
    if (from == to)
        return tb__flow_fail(f, TB_ERR_RANGE, "%s: task '%s' depends on itself", f->name,
                             f->id[from]);
    if (isnan(data) || isinf(data))
        return tb__flow_fail(f, TB_ERR_RANGE, "%s: edge '%s' -> '%s': data is not finite",
                             f->name, f->id[from], f->id[to]);
    if (tb_grow((void **)&f->raw, &f->capraw, f->nraw + 1, sizeof *f->raw, 64))
        return TB_ERR_NOMEM;
    f->raw[f->nraw++] = (tb_flow_raw_edge){(uint32_t)from, (uint32_t)to, data};
    return TB_OK;
}

int tb_flow_add_file(tb_flow *f, const char *name, double bytes, size_t *index)
{
    if (!f || !name)
        return TB_ERR_INVALID;
    if (f->final)
        return TB_ERR_STATE;
    if (!(bytes >= 0) || !isfinite(bytes))
        return tb__flow_fail(f, TB_ERR_RANGE, "%s: file '%s': size must be a number >= 0",
                             f->name, name);
    size_t i;
    if (tb__flow_names_find(&f->fnames, f->fname, name, &i) == TB_OK) {
        if (bytes > f->fsize[i])
            f->fsize[i] = bytes;
        if (index)
            *index = i;
        return TB_OK;
    }
    if (f->nfiles >= f->capfiles) {
        size_t cap = f->capfiles ? f->capfiles * 2 : 64;
        char **fn = realloc(f->fname, cap * sizeof *fn);
        if (!fn)
            return TB_ERR_NOMEM;
        f->fname = fn;
        double *fs = realloc(f->fsize, cap * sizeof *fs);
        if (!fs)
            return TB_ERR_NOMEM;
        f->fsize = fs;
        f->capfiles = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return TB_ERR_NOMEM;
    i = f->nfiles;
    f->fname[i] = copy;
    f->fsize[i] = bytes;
    f->nfiles++;
    if (tb__flow_names_add(&f->fnames, f->fname, i)) {
        f->nfiles--;
        free(copy);
        return TB_ERR_NOMEM;
    }
    if (index)
        *index = i;
    return TB_OK;
}

int tb_flow_task_use(tb_flow *f, size_t task, size_t file, int output)
{
    if (!f)
        return TB_ERR_INVALID;
    if (f->final)
        return TB_ERR_STATE;
    if (task >= f->n || file >= f->nfiles)
        return TB_ERR_RANGE;
    if (tb_grow((void **)&f->use, &f->capuse, f->nuse + 1, sizeof *f->use, 64))
        return TB_ERR_NOMEM;
    f->use[f->nuse++] = (tb_flow_use){(uint32_t)task, (uint32_t)file, output ? 1 : 0};
    return TB_OK;
}

/* ---- finalize ------------------------------------------------------------------ */

static int cmp_raw(const void *a, const void *b)
{
    const tb_flow_raw_edge *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    if (x->to != y->to)
        return x->to < y->to ? -1 : 1;
    return 0;
}

static int cmp_use(const void *a, const void *b)
{
    const tb_flow_use *x = a, *y = b;
    if (x->output != y->output)
        return x->output > y->output ? -1 : 1; /* outputs first */
    if (x->task != y->task)
        return x->task < y->task ? -1 : 1;
    return x->file < y->file ? -1 : x->file > y->file;
}

/* Bytes of the files `from` writes and `to` reads: uses are sorted (outputs
 * by task then file, inputs likewise); off[] index each task's run. */
static double shared_bytes(const tb_flow *f, const size_t *out_off, const size_t *in_off,
                           size_t nout, uint32_t from, uint32_t to)
{
    if (f->use == NULL) /* no file at all (NULL + 0 is undefined) */
        return 0;
    const tb_flow_use *o = f->use, *in = f->use + nout;
    size_t i = out_off[from], ie = out_off[from + 1];
    size_t j = in_off[to], je = in_off[to + 1];
    double sum = 0;
    while (i < ie && j < je) {
        if (o[i].file < in[j].file)
            i++;
        else if (o[i].file > in[j].file)
            j++;
        else {
            sum += f->fsize[o[i].file];
            uint32_t file = o[i].file;
            while (i < ie && o[i].file == file)
                i++;
            while (j < je && in[j].file == file)
                j++;
        }
    }
    return sum;
}

static int edge_data_from_files(tb_flow *f)
{
    int need = 0;
    for (size_t e = 0; e < f->nraw && !need; e++)
        need = f->raw[e].data < 0;
    if (!need)
        return TB_OK;
    if (f->nuse)
        qsort(f->use, f->nuse, sizeof *f->use, cmp_use);
    size_t nout = 0;
    while (nout < f->nuse && f->use[nout].output)
        nout++;
    size_t *out_off = calloc(f->n + 1, sizeof *out_off);
    size_t *in_off = calloc(f->n + 1, sizeof *in_off);
    if (!out_off || !in_off) {
        free(out_off);
        free(in_off);
        return TB_ERR_NOMEM;
    }
    for (size_t u = 0; u < f->nuse; u++)
        (u < nout ? out_off : in_off)[f->use[u].task + 1]++;
    for (size_t t = 0; t < f->n; t++) {
        out_off[t + 1] += out_off[t];
        in_off[t + 1] += in_off[t];
    }
    for (size_t e = 0; e < f->nraw; e++)
        if (f->raw[e].data < 0)
            f->raw[e].data = shared_bytes(f, out_off, in_off, nout, f->raw[e].from, f->raw[e].to);
    free(out_off);
    free(in_off);
    return TB_OK;
}

/* Sorted, deduplicated raw edges -> CSR successor and predecessor lists. */
static int build_lists(tb_flow *f)
{
    if (f->nraw)
        qsort(f->raw, f->nraw, sizeof *f->raw, cmp_raw);
    size_t m = 0;
    for (size_t e = 0; e < f->nraw; e++) {
        if (m && f->raw[m - 1].from == f->raw[e].from && f->raw[m - 1].to == f->raw[e].to) {
            if (f->raw[e].data > f->raw[m - 1].data)
                f->raw[m - 1].data = f->raw[e].data;
            continue;
        }
        f->raw[m++] = f->raw[e];
    }
    f->m = m;
    f->soff = calloc(f->n + 1, sizeof *f->soff);
    f->poff = calloc(f->n + 1, sizeof *f->poff);
    f->succ = malloc((m ? m : 1) * sizeof *f->succ);
    f->sdata = malloc((m ? m : 1) * sizeof *f->sdata);
    f->pred = malloc((m ? m : 1) * sizeof *f->pred);
    f->pedge = malloc((m ? m : 1) * sizeof *f->pedge);
    if (!f->soff || !f->poff || !f->succ || !f->sdata || !f->pred || !f->pedge)
        return TB_ERR_NOMEM;
    for (size_t e = 0; e < m; e++) {
        f->soff[f->raw[e].from + 1]++;
        f->poff[f->raw[e].to + 1]++;
    }
    for (size_t t = 0; t < f->n; t++) {
        f->soff[t + 1] += f->soff[t];
        f->poff[t + 1] += f->poff[t];
    }
    /* raw is sorted by (from, to): successor lists fill in order */
    for (size_t e = 0; e < m; e++) {
        f->succ[e] = f->raw[e].to;
        f->sdata[e] = f->raw[e].data;
    }
    /* predecessors: walk sources in increasing order so each list is sorted */
    size_t *fill = malloc((f->n ? f->n : 1) * sizeof *fill);
    if (!fill)
        return TB_ERR_NOMEM;
    memcpy(fill, f->poff, f->n * sizeof *fill);
    for (size_t e = 0; e < m; e++) {
        size_t p = fill[f->raw[e].to]++;
        f->pred[p] = f->raw[e].from;
        f->pedge[p] = (uint32_t)e;
    }
    free(fill);
    free(f->raw);
    f->raw = NULL;
    f->nraw = f->capraw = 0;
    return TB_OK;
}

/* Tasks of a cycle named in a cycle error before "... ->" shortens it. */
#define CYCLE_SHOWN 8

/* The first predecessor of t that Kahn's algorithm left (indeg > 0); every
 * task left has one. */
static size_t back_on_cycle(const tb_flow *f, const uint32_t *indeg, size_t t)
{
    for (size_t e = f->poff[t]; e < f->poff[t + 1]; e++)
        if (indeg[f->pred[e]])
            return f->pred[e];
    return t; /* not reached: t would have been sorted */
}

/* Kahn's algorithm; on a cycle, name it: "cycle: a -> b -> c -> a". */
static int topo_sort(tb_flow *f)
{
    size_t n = f->n;
    f->topo = malloc((n ? n : 1) * sizeof *f->topo);
    uint32_t *indeg = malloc((n ? n : 1) * sizeof *indeg);
    if (!f->topo || !indeg) {
        free(indeg);
        return TB_ERR_NOMEM;
    }
    size_t head = 0, tail = 0;
    for (size_t t = 0; t < n; t++) {
        indeg[t] = (uint32_t)(f->poff[t + 1] - f->poff[t]);
        if (!indeg[t])
            f->topo[tail++] = (uint32_t)t;
    }
    while (head < tail) {
        uint32_t t = f->topo[head++];
        for (size_t e = f->soff[t]; e < f->soff[t + 1]; e++)
            if (--indeg[f->succ[e]] == 0)
                f->topo[tail++] = f->succ[e];
    }
    if (tail == n) {
        free(indeg);
        return TB_OK;
    }
    /* Every task left has a predecessor left: walking back from one must
     * repeat, and the first repeated task lies on a cycle. */
    size_t t = 0;
    while (indeg[t] == 0)
        t++;
    uint8_t *seen = calloc(n, 1);
    if (!seen) {
        free(indeg);
        return TB_ERR_NOMEM;
    }
    while (!seen[t]) {
        seen[t] = 1;
        t = back_on_cycle(f, indeg, t);
    }
    free(seen);
    /* The walk from t comes back to t: the cycle is t's chain of chosen
     * predecessors, read backwards.  Name it from its first task in file
     * order, edge by edge, so the user sees which edge to drop. */
    size_t len = 0, first = t;
    for (size_t u = t;;) {
        len++;
        if (u < first)
            first = u;
        u = back_on_cycle(f, indeg, u);
        if (u == t)
            break;
    }
    /* fwd: the cycle in edge order from first, first again at the end */
    uint32_t *fwd = malloc((len + 1) * sizeof *fwd);
    if (!fwd) {
        free(indeg);
        return TB_ERR_NOMEM;
    }
    fwd[0] = fwd[len] = (uint32_t)first;
    for (size_t i = len - 1, u = first; i > 0; i--) {
        u = back_on_cycle(f, indeg, u);
        fwd[i] = (uint32_t)u;
    }
    if (len <= CYCLE_SHOWN)
        tb__flow_fail(f, TB_ERR_INVALID, "%s: cycle: ", f->name);
    else
        tb__flow_fail(f, TB_ERR_INVALID, "%s: cycle of %zu tasks: ", f->name, len);
    size_t at = strlen(f->err);
    for (size_t i = 0; i <= len && at < sizeof f->err; i++) {
        if (len > CYCLE_SHOWN && i == CYCLE_SHOWN - 1) {
            at += (size_t)snprintf(f->err + at, sizeof f->err - at, "... -> ");
            i = len - 1; /* the last task, then back to the first */
            if (at >= sizeof f->err)
                break;
        }
        at += (size_t)snprintf(f->err + at, sizeof f->err - at, i < len ? "%s -> " : "%s",
                               f->id[fwd[i]]);
    }
    free(fwd);
    free(indeg);
    return TB_ERR_INVALID;
}

/* Independent task sets: tasks grouped by (predecessor list, successor
 * list); a group of two or more is a set.  Two tasks with the same
 * predecessors cannot depend on each other (a -> b would make a its own
 * predecessor), so the groups are independent by construction. */
typedef struct its_key {
    uint64_t hp, hs; /* hashes of the predecessor and successor lists */
    uint32_t t;
} its_key;

static int cmp_lists(const uint32_t *a, size_t na, const uint32_t *b, size_t nb)
{
    if (na != nb)
        return na < nb ? -1 : 1;
    for (size_t i = 0; i < na; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* By both hashes, then task: equal lists end up adjacent, in task order. */
static int cmp_its(const void *pa, const void *pb)
{
    const its_key *a = pa, *b = pb;
    if (a->hp != b->hp)
        return a->hp < b->hp ? -1 : 1;
    if (a->hs != b->hs)
        return a->hs < b->hs ? -1 : 1;
    return a->t < b->t ? -1 : a->t > b->t;
}

static int same_lists(const tb_flow *f, uint32_t a, uint32_t b)
{
    return cmp_lists(f->pred + f->poff[a], f->poff[a + 1] - f->poff[a], f->pred + f->poff[b],
                     f->poff[b + 1] - f->poff[b]) == 0 &&
           cmp_lists(f->succ + f->soff[a], f->soff[a + 1] - f->soff[a], f->succ + f->soff[b],
                     f->soff[b + 1] - f->soff[b]) == 0;
}

static uint64_t hash_list(uint64_t h, const uint32_t *v, size_t n)
{
    h ^= n * 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n; i++) {
        h ^= v[i];
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h;
}

static int find_its(tb_flow *f)
{
    size_t n = f->n;
    f->its = malloc((n ? n : 1) * sizeof *f->its);
    its_key *k = malloc((n ? n : 1) * sizeof *k);
    if (!f->its || !k) {
        free(k);
        return TB_ERR_NOMEM;
    }
    for (size_t t = 0; t < n; t++) {
        k[t] = (its_key){hash_list(7, f->pred + f->poff[t], f->poff[t + 1] - f->poff[t]),
                         hash_list(11, f->succ + f->soff[t], f->soff[t + 1] - f->soff[t]),
                         (uint32_t)t};
        f->its[t] = -1;
    }
    if (n)
        qsort(k, n, sizeof *k, cmp_its);
    size_t nits = 0, cap = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        /* a hash collision only ends a group early: 128 bits make it moot */
        while (j < n && k[j].hp == k[i].hp && k[j].hs == k[i].hs && same_lists(f, k[i].t, k[j].t))
            j++;
        if (j - i >= 2) {
            if (tb_grow((void **)&f->its_count, &cap, nits + 1, sizeof *f->its_count, 16)) {
                free(k);
                return TB_ERR_NOMEM;
            }
            f->its_count[nits] = (uint32_t)(j - i);
            for (size_t x = i; x < j; x++)
                f->its[k[x].t] = (int32_t)nits;
            nits++;
        }
        i = j;
    }
    /* number sets by their smallest task so the numbering does not depend on
     * the hash */
    if (nits) {
        int32_t *ren = malloc(nits * sizeof *ren);
        uint32_t *cnt = malloc(nits * sizeof *cnt);
        if (!ren || !cnt) {
            free(ren);
            free(cnt);
            free(k);
            return TB_ERR_NOMEM;
        }
        for (size_t s = 0; s < nits; s++)
            ren[s] = -1;
        int32_t next = 0;
        for (size_t t = 0; t < n; t++)
            if (f->its[t] >= 0 && ren[f->its[t]] < 0) {
                ren[f->its[t]] = next;
                cnt[next] = f->its_count[f->its[t]];
                next++;
            }
        for (size_t t = 0; t < n; t++)
            if (f->its[t] >= 0)
                f->its[t] = ren[f->its[t]];
        memcpy(f->its_count, cnt, nits * sizeof *cnt);
        free(ren);
        free(cnt);
    }
    f->nits = nits;
    free(k);
    return TB_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Each task's input and output files as sorted lists without repeats. */
static int build_file_lists(tb_flow *f)
{
    f->fin_off = calloc(f->n + 1, sizeof *f->fin_off);
    f->fout_off = calloc(f->n + 1, sizeof *f->fout_off);
    f->fin = malloc((f->nuse ? f->nuse : 1) * sizeof *f->fin);
    f->fout = malloc((f->nuse ? f->nuse : 1) * sizeof *f->fout);
    size_t *fill = calloc(2 * (f->n + 1), sizeof *fill);
    if (!f->fin_off || !f->fout_off || !f->fin || !f->fout || !fill) {
        free(fill);
        return TB_ERR_NOMEM;
    }
    for (size_t u = 0; u < f->nuse; u++)
        (f->use[u].output ? f->fout_off : f->fin_off)[f->use[u].task + 1]++;
    for (size_t t = 0; t < f->n; t++) {
        f->fin_off[t + 1] += f->fin_off[t];
        f->fout_off[t + 1] += f->fout_off[t];
    }
    size_t *fi = fill, *fo = fill + f->n + 1;
    for (size_t u = 0; u < f->nuse; u++) {
        uint32_t t = f->use[u].task;
        if (f->use[u].output)
            f->fout[f->fout_off[t] + fo[t]++] = f->use[u].file;
        else
            f->fin[f->fin_off[t] + fi[t]++] = f->use[u].file;
    }
    free(fill);
    /* sort each list and drop repeats, compacting in place */
    for (int out = 0; out < 2; out++) {
        size_t *off = out ? f->fout_off : f->fin_off;
        uint32_t *v = out ? f->fout : f->fin;
        size_t w = 0;
        for (size_t t = 0; t < f->n; t++) {
            size_t b = off[t], e = off[t + 1];
            if (e - b > 1)
                qsort(v + b, e - b, sizeof *v, cmp_u32);
            off[t] = w;
            for (size_t k = b; k < e; k++)
                if (k == b || v[k] != v[k - 1])
                    v[w++] = v[k];
        }
        off[f->n] = w;
    }
    return TB_OK;
}

int tb_flow_finalize(tb_flow *f)
{
    if (!f)
        return TB_ERR_INVALID;
    if (f->final)
        return tb__flow_fail(f, TB_ERR_STATE, "%s: workflow already finalized", f->name);
    for (size_t t = 0; t < f->n && f->q; t++)
        if (isnan(f->cost[t * f->q]))
            return tb__flow_fail(f, TB_ERR_INVALID, "%s: task '%s' has no execution times",
                                 f->name, f->id[t]);
    int rc = edge_data_from_files(f);
    if (!rc)
        rc = build_lists(f);
    if (!rc)
        rc = topo_sort(f);
    if (!rc)
        rc = find_its(f);
    if (!rc)
        rc = build_file_lists(f);
    if (rc) {
        if (rc == TB_ERR_NOMEM)
            tb__flow_fail(f, rc, "%s: out of memory", f->name);
        return rc;
    }
    f->final = 1;
    return TB_OK;
}

/* ---- accessors --------------------------------------------------------------- */

size_t tb_flow_ntasks(const tb_flow *f) { return f ? f->n : 0; }
size_t tb_flow_nedges(const tb_flow *f) { return f && f->final ? f->m : 0; }
size_t tb_flow_nfiles(const tb_flow *f) { return f ? f->nfiles : 0; }
size_t tb_flow_cost_hosts(const tb_flow *f) { return f ? f->q : 0; }
size_t tb_flow_nits(const tb_flow *f) { return f && f->final ? f->nits : 0; }

const char *tb_flow_task_id(const tb_flow *f, size_t task)
{
    return f && task < f->n ? f->id[task] : NULL;
}

double tb_flow_task_work(const tb_flow *f, size_t task)
{
    return f && task < f->n ? f->work[task] : NAN;
}

const char *tb_flow_task_program(const tb_flow *f, size_t task)
{
    return f && task < f->n && f->cmd[task] ? f->cmd[task][0] : NULL;
}

size_t tb_flow_task_nargs(const tb_flow *f, size_t task)
{
    size_t n = 0;
    if (f && task < f->n && f->cmd[task])
        while (f->cmd[task][n + 1])
            n++;
    return n;
}

const char *tb_flow_task_arg(const tb_flow *f, size_t task, size_t i)
{
    return i < tb_flow_task_nargs(f, task) ? f->cmd[task][i + 1] : NULL;
}

size_t tb_flow_task_files(const tb_flow *f, size_t task, int output, const uint32_t **files)
{
    if (!f || !f->final || task >= f->n) {
        if (files)
            *files = NULL;
        return 0;
    }
    const size_t *off = output ? f->fout_off : f->fin_off;
    if (files)
        *files = (output ? f->fout : f->fin) + off[task];
    return off[task + 1] - off[task];
}

int tb__flow_shares_file(const tb_flow *f, size_t from, size_t to)
{
    size_t i = f->fout_off[from], ie = f->fout_off[from + 1];
    size_t j = f->fin_off[to], je = f->fin_off[to + 1];
    while (i < ie && j < je) {
        if (f->fout[i] == f->fin[j])
            return 1;
        if (f->fout[i] < f->fin[j])
            i++;
        else
            j++;
    }
    return 0;
}

const char *tb_flow_file_name(const tb_flow *f, size_t file)
{
    return f && file < f->nfiles ? f->fname[file] : NULL;
}

double tb_flow_file_size(const tb_flow *f, size_t file)
{
    return f && file < f->nfiles ? f->fsize[file] : NAN;
}

long tb_flow_its_of(const tb_flow *f, size_t task)
{
    return f && f->final && task < f->n ? f->its[task] : -1;
}

size_t tb_flow_its_size(const tb_flow *f, size_t its)
{
    return f && f->final && its < f->nits ? f->its_count[its] : 0;
}

void tb_flow_succ(const tb_flow *f, const size_t **off, const uint32_t **succ,
                  const double **data)
{
    *off = f->soff;
    *succ = f->succ;
    *data = f->sdata;
}
