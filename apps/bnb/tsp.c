/*
 * tsp.c - symmetric TSP for `tenbin bnb tsp FILE` (TSPLIB files).
 *
 * Input: TSPLIB TYPE TSP with EDGE_WEIGHT_TYPE EUC_2D, CEIL_2D, ATT, GEO
 * (NODE_COORD_SECTION) or EXPLICIT with EDGE_WEIGHT_FORMAT FULL_MATRIX,
 * UPPER_ROW, LOWER_ROW, UPPER_DIAG_ROW or LOWER_DIAG_ROW; distances as
 * TSPLIB defines them (nint, ceil, ATT's pseudo-Euclidean, GEO's sphere).
 *
 * Bound: Held and Karp's 1-trees with Lagrangian node penalties pi (a
 * minimum spanning tree on cities 1..n-1 plus the two cheapest edges at
 * city 0, edge costs d(i,j) + pi_i + pi_j, minus 2 sum pi), improved by
 * subgradient steps; any pi gives a valid lower bound of every tour, so
 * the best one seen is the bound (rounded up: distances are integers).
 * Branching (Volgenant and Jonker): at a city v of degree > 2 in the
 * 1-tree, with free tree edges e1, e2 at v, the children are
 * {e1 out}, {e1 in, e2 out}, {e1 in, e2 in} (the last only if v had no
 * forced edge: two forced edges at a city exclude its others).  Children
 * start their subgradient from the parent's pi.  A subproblem whose best
 * 1-tree has every degree 2 is a tour: evaluated, it is a feasible
 * solution worth its bound.  The root is evaluated with a nearest-neighbour
 * tour improved by 2-opt.
 *
 * A subproblem: f64 bound, u8 is_tour, u16 nin, u16 nout, pi[n] (f64),
 * nin + nout edges (u16 pairs), then, if a tour, the tour (n u16).
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer.h"
#include "problems.h"

enum { EDGE_FREE = 0, EDGE_IN = 1, EDGE_OUT = 2 };
#define BIG 1e9   /* forced edges come first in the tree */
#define INF 1e15  /* excluded edges */

typedef struct tsp {
    int n;
    int32_t *d;        /* n x n */
    int root_iters, child_iters;
    double ub0;        /* the heuristic tour's length */
    uint16_t *tour0;   /* the heuristic tour */
    /* scratch of one 1-tree */
    unsigned char *state; /* n x n */
    double *key, *pi, *best_pi, *g;
    int *parent, *deg, *best_deg, *in_tree, *best_parent;
    int ends0[2], best_ends0[2];
    int *adj;          /* 2n: the two neighbours of each city in a tour-shaped 1-tree */
    uint16_t *tour;
    tb_buf buf;
    double *xy;        /* 2n: the cities' coordinates, or NULL (EXPLICIT) */
} tsp;

static inline int32_t dist(const tsp *T, int i, int j) { return T->d[(size_t)i * T->n + j]; }

/* ---- subproblem bytes --------------------------------------------------- */

typedef struct view {
    double bound;
    int is_tour, nin, nout;
    const unsigned char *pi, *edges, *tour;
} view;

static size_t sub_len(const tsp *T, int nin, int nout, int is_tour)
{
    return 8 + 1 + 2 + 2 + (size_t)T->n * 8 + (size_t)(nin + nout) * 4 +
           (is_tour ? (size_t)T->n * 2 : 0);
}

static int parse_sub(const tsp *T, const void *s, size_t len, view *v)
{
    const unsigned char *b = s;
    if (len < 13)
        return TB_ERR_PARSE;
    uint16_t nin, nout;
    memcpy(&v->bound, b, 8);
    v->is_tour = b[8];
    memcpy(&nin, b + 9, 2);
    memcpy(&nout, b + 11, 2);
    v->nin = nin;
    v->nout = nout;
    if (len != sub_len(T, nin, nout, v->is_tour))
        return TB_ERR_PARSE;
    v->pi = b + 13;
    v->edges = v->pi + (size_t)T->n * 8;
    v->tour = v->edges + (size_t)(nin + nout) * 4;
    return TB_OK;
}

static void edge_at(const view *v, int k, int *i, int *j)
{
    uint16_t a, b;
    memcpy(&a, v->edges + 4 * (size_t)k, 2);
    memcpy(&b, v->edges + 4 * (size_t)k + 2, 2);
    *i = a;
    *j = b;
}

/* ---- 1-trees ------------------------------------------------------------ */

/* Union-find root, with path halving. */
static int uf_find(int *up, int x)
{
    while (up[x] != x)
        x = up[x] = up[up[x]];
    return x;
}

/* Edge states of a subproblem into T->state; 0 if its forced edges are
 * impossible (a city with three, or a cycle shorter than a tour). */
static int load_state(tsp *T, const view *v)
{
    int n = T->n;
    memset(T->state, EDGE_FREE, (size_t)n * n);
    int *nin = T->deg, *up = T->parent;
    for (int i = 0; i < n; i++) {
        nin[i] = 0;
        up[i] = i;
    }
    for (int k = 0; k < v->nin + v->nout; k++) {
        int i, j;
        edge_at(v, k, &i, &j);
        if (i < 0 || j < 0 || i >= n || j >= n || i == j)
            return 0;
        unsigned char st = k < v->nin ? EDGE_IN : EDGE_OUT;
        T->state[(size_t)i * n + j] = T->state[(size_t)j * n + i] = st;
        if (st != EDGE_IN)
            continue;
        if (++nin[i] > 2 || ++nin[j] > 2)
            return 0;
        int ri = uf_find(up, i), rj = uf_find(up, j);
        if (ri == rj && v->nin != n)
            return 0; /* a cycle through fewer than all cities */
        up[ri] = rj;
    }
    /* Two forced edges at a city exclude its others. */
    for (int i = 0; i < n; i++)
        if (nin[i] == 2)
            for (int j = 0; j < n; j++)
                if (j != i && T->state[(size_t)i * n + j] == EDGE_FREE)
                    T->state[(size_t)i * n + j] = T->state[(size_t)j * n + i] = EDGE_OUT;
    return 1;
}

static inline double cost(const tsp *T, const double *pi, int i, int j)
{
    unsigned char st = T->state[(size_t)i * T->n + j];
    if (st == EDGE_OUT)
        return INF;
    double c = dist(T, i, j) + pi[i] + pi[j];
    return st == EDGE_IN ? c - BIG : c;
}

/*
 * One 1-tree with penalties pi: its Lagrangian value (+INF-ish if it needs
 * an excluded edge), T->parent (tree on 1..n-1, parent[1] = -1), T->ends0
 * (the two edges at city 0), T->deg.
 */
static double one_tree(tsp *T, const double *pi)
{
    int n = T->n;
    double *key = T->key;
    int *par = T->parent, *in = T->in_tree, *deg = T->deg;
    for (int i = 0; i < n; i++) {
        key[i] = INFINITY;
        par[i] = -1;
        in[i] = 0;
        deg[i] = 0;
    }
    double L = 0;
    int infeasible = 0;
    key[1] = 0;
    for (int it = 1; it < n; it++) {
        int u = -1;
        for (int i = 1; i < n; i++)
            if (!in[i] && (u < 0 || key[i] < key[u]))
                u = i;
        in[u] = 1;
        if (par[u] >= 0) {
            if (T->state[(size_t)u * n + par[u]] == EDGE_OUT)
                infeasible = 1;
            L += dist(T, u, par[u]) + pi[u] + pi[par[u]];
            deg[u]++;
            deg[par[u]]++;
        }
        for (int v = 1; v < n; v++)
            if (!in[v]) {
                double c = cost(T, pi, u, v);
                if (c < key[v]) {
                    key[v] = c;
                    par[v] = u;
                }
            }
    }
    /* The two cheapest edges at city 0. */
    int a = -1, b = -1;
    for (int j = 1; j < n; j++) {
        double c = cost(T, pi, 0, j);
        if (a < 0 || c < cost(T, pi, 0, a)) {
            b = a;
            a = j;
        } else if (b < 0 || c < cost(T, pi, 0, b)) {
            b = j;
        }
    }
    T->ends0[0] = a;
    T->ends0[1] = b;
    for (int k = 0; k < 2; k++) {
        int j = T->ends0[k];
        if (T->state[j] == EDGE_OUT)
            infeasible = 1;
        L += dist(T, 0, j) + pi[0] + pi[j];
        deg[0]++;
        deg[j]++;
    }
    /* Forced edges not taken (a forced edge the tree could not hold): the
     * subproblem has no tour with them all. */
    for (int i = 0; i < n && !infeasible; i++)
        for (int j = i + 1; j < n; j++)
            if (T->state[(size_t)i * n + j] == EDGE_IN) {
                int has = i == 0   ? (j == a || j == b)
                          : j == 0 ? (i == a || i == b)
                                   : par[i] == j || par[j] == i;
                if (!has) {
                    infeasible = 1;
                    break;
                }
            }
    for (int i = 0; i < n; i++)
        L -= 2 * pi[i];
    return infeasible ? INFINITY : L;
}

/* The best 1-tree bound from pi0 in `iters` subgradient steps; the best
 * penalties in T->best_pi, its tree in best_parent/best_ends0/best_deg.
 * Returns the bound (rounded up), INFINITY if infeasible. */
static double held_karp(tsp *T, const double *pi0, int iters, double ub)
{
    int n = T->n;
    memcpy(T->pi, pi0, (size_t)n * sizeof *T->pi);
    double best = -INFINITY, lam = 2.0;
    int since = 0;
    for (int it = 0; it < iters; it++) {
        double L = one_tree(T, T->pi);
        if (!isfinite(L))
            return INFINITY;
        int tour = 1;
        double norm = 0;
        for (int i = 0; i < n; i++) {
            T->g[i] = T->deg[i] - 2;
            norm += T->g[i] * T->g[i];
            tour &= T->deg[i] == 2;
        }
        if (L > best + 1e-9) {
            best = L;
            since = 0;
            memcpy(T->best_pi, T->pi, (size_t)n * sizeof *T->pi);
            memcpy(T->best_parent, T->parent, (size_t)n * sizeof *T->parent);
            memcpy(T->best_deg, T->deg, (size_t)n * sizeof *T->deg);
            T->best_ends0[0] = T->ends0[0];
            T->best_ends0[1] = T->ends0[1];
        } else if (++since >= 5) {
            lam /= 2;
            since = 0;
        }
        if (tour || ceil(best - 1e-6) >= ub || lam < 1e-4)
            break;
        double step = lam * (ub - L) / norm;
        for (int i = 0; i < n; i++)
            T->pi[i] += step * T->g[i];
    }
    return ceil(best - 1e-6);
}

/* Record the edge u-v in adj (two neighbour slots per city). */
static void link_cities(int *adj, int u, int v)
{
    adj[2 * u + (adj[2 * u] >= 0)] = v;
    adj[2 * v + (adj[2 * v] >= 0)] = u;
}

/* The tour of the best 1-tree when every degree is 2, into T->tour. */
static int best_is_tour(tsp *T)
{
    int n = T->n;
    for (int i = 0; i < n; i++)
        if (T->best_deg[i] != 2)
            return 0;
    /* every degree is 2: two neighbours each, then walk from city 0 */
    int *adj = T->adj;
    for (int i = 0; i < 2 * n; i++)
        adj[i] = -1;
    link_cities(adj, 0, T->best_ends0[0]);
    link_cities(adj, 0, T->best_ends0[1]);
    for (int i = 1; i < n; i++)
        if (T->best_parent[i] >= 0)
            link_cities(adj, i, T->best_parent[i]);
    int prev = -1, cur = 0, ok = 1;
    for (int k = 0; k < n; k++) {
        T->tour[k] = (uint16_t)cur;
        int next = adj[2 * cur] != prev ? adj[2 * cur] : adj[2 * cur + 1];
        if (k < n - 1 && next == 0)
            ok = 0;
        prev = cur;
        cur = next;
    }
    ok &= cur == 0;
    return ok;
}

static int64_t tour_len(const tsp *T, const uint16_t *t)
{
    int64_t s = 0;
    for (int k = 0; k < T->n; k++)
        s += dist(T, t[k], t[(k + 1) % T->n]);
    return s;
}

/* Append a subproblem with the edge lists given and HK from pi0. */
static int make_sub(tsp *T, const double *pi0, int iters, const int *ein, int nin, const int *eout,
                    int nout, tb_buf *out, double *bound)
{
    size_t need = 8 + 1 + 4 + (size_t)T->n * 8 + (size_t)(nin + nout) * 4;
    /* state from the edge lists: build a temporary view */
    tb_buf_clear(&T->buf);
    TB_CHECK(tb_buf_reserve(&T->buf, need + (size_t)T->n * 2));
    unsigned char *b = T->buf.data;
    double zero = 0;
    memcpy(b, &zero, 8);
    b[8] = 0;
    uint16_t a16 = (uint16_t)nin, b16 = (uint16_t)nout;
    memcpy(b + 9, &a16, 2);
    memcpy(b + 11, &b16, 2);
    memcpy(b + 13, pi0, (size_t)T->n * 8);
    unsigned char *e = b + 13 + (size_t)T->n * 8;
    for (int k = 0; k < nin + nout; k++) {
        const int *src = k < nin ? &ein[2 * k] : &eout[2 * (k - nin)];
        uint16_t x = (uint16_t)src[0], y = (uint16_t)src[1];
        memcpy(e + 4 * (size_t)k, &x, 2);
        memcpy(e + 4 * (size_t)k + 2, &y, 2);
    }
    view v;
    v.nin = nin;
    v.nout = nout;
    v.edges = e;
    double bd = INFINITY;
    int tour = 0;
    if (load_state(T, &v)) {
        bd = held_karp(T, pi0, iters, T->ub0);
        if (isfinite(bd)) {
            tour = best_is_tour(T);
            if (tour)
                bd = (double)tour_len(T, T->tour); /* the tree is the tour */
            memcpy(b + 13, T->best_pi, (size_t)T->n * 8);
        }
    }
    memcpy(b, &bd, 8);
    b[8] = (unsigned char)tour;
    size_t len = need;
    if (tour) {
        memcpy(b + need, T->tour, (size_t)T->n * 2);
        len += (size_t)T->n * 2;
    }
    T->buf.len = len;
    *bound = bd;
    return tb_buf_append(out, T->buf.data, T->buf.len);
}

/* ---- ops ---------------------------------------------------------------- */

static int t_root(void *ctx, tb_buf *sub)
{
    tsp *T = ctx;
    double *pi0 = calloc((size_t)T->n, sizeof *pi0);
    if (!pi0)
        return TB_ERR_NOMEM;
    double b;
    int rc = make_sub(T, pi0, T->root_iters, NULL, 0, NULL, 0, sub, &b);
    free(pi0);
    return rc;
}

static int t_bound(void *ctx, const void *s, size_t len, double *bound)
{
    view v;
    TB_CHECK(parse_sub(ctx, s, len, &v));
    *bound = v.bound;
    return TB_OK;
}

static int t_evaluate(void *ctx, const void *s, size_t len, double *value, tb_buf *sol)
{
    tsp *T = ctx;
    view v;
    TB_CHECK(parse_sub(T, s, len, &v));
    if (v.is_tour) {
        *value = v.bound;
        return tb_buf_append(sol, v.tour, (size_t)T->n * 2);
    }
    if (v.nin == 0 && v.nout == 0) { /* the root: the heuristic tour */
        *value = T->ub0;
        return tb_buf_append(sol, T->tour0, (size_t)T->n * 2);
    }
    return TB_OK;
}

static int t_branch(void *ctx, const void *s, size_t len, tb_bnb_children *kids)
{
    tsp *T = ctx;
    int n = T->n;
    view v;
    TB_CHECK(parse_sub(T, s, len, &v));
    if (v.is_tour || !isfinite(v.bound))
        return TB_OK;
    /* The best 1-tree again (same pi: the same tree). */
    double *pi = malloc((size_t)n * sizeof *pi);
    int *ein = malloc((size_t)(v.nin + 2) * 2 * sizeof *ein);
    int *eout = malloc((size_t)(v.nout + 2) * 2 * sizeof *eout);
    int rc = pi && ein && eout ? TB_OK : TB_ERR_NOMEM;
    if (rc != TB_OK)
        goto out;
    memcpy(pi, v.pi, (size_t)n * 8);
    if (!load_state(T, &v) || !isfinite(one_tree(T, pi)))
        goto out;
    /* v: the city of highest degree above 2 (lowest index on ties) */
    int c = -1;
    for (int i = 0; i < n; i++)
        if (T->deg[i] > 2 && (c < 0 || T->deg[i] > T->deg[c]))
            c = i;
    if (c < 0)
        goto out; /* a tour after all: evaluate found it */
    /* its free tree edges, longest first */
    int nb[64], k = 0, forced = 0;
    for (int j = 0; j < n && k < 64; j++) {
        if (j == c)
            continue;
        int in_tree = c == 0   ? (j == T->ends0[0] || j == T->ends0[1])
                      : j == 0 ? (c == T->ends0[0] || c == T->ends0[1])
                               : T->parent[c] == j || T->parent[j] == c;
        if (!in_tree)
            continue;
        if (T->state[(size_t)c * n + j] == EDGE_IN)
            forced++;
        else
            nb[k++] = j;
    }
    for (int x = 1; x < k; x++) /* by length, descending; stable */
        for (int y = x; y > 0 && dist(T, c, nb[y]) > dist(T, c, nb[y - 1]); y--) {
            int t = nb[y];
            nb[y] = nb[y - 1];
            nb[y - 1] = t;
        }
    if (k < 1)
        goto out;
    for (int q = 0; q < v.nin; q++)
        edge_at(&v, q, &ein[2 * q], &ein[2 * q + 1]);
    for (int q = 0; q < v.nout; q++)
        edge_at(&v, v.nin + q, &eout[2 * q], &eout[2 * q + 1]);
    double b;
    tb_buf kid = TB_BUF_INIT;
    /* 1: e1 out */
    eout[2 * v.nout] = c;
    eout[2 * v.nout + 1] = nb[0];
    rc = make_sub(T, pi, T->child_iters, ein, v.nin, eout, v.nout + 1, &kid, &b);
    if (rc == TB_OK && isfinite(b))
        rc = tb_bnb_child(kids, kid.data, kid.len, b);
    /* 2: e1 in (and, if c then has room for another, e2 out) */
    ein[2 * v.nin] = c;
    ein[2 * v.nin + 1] = nb[0];
    if (rc == TB_OK && forced == 0 && k >= 2) {
        eout[2 * v.nout] = c;
        eout[2 * v.nout + 1] = nb[1];
        tb_buf_clear(&kid);
        rc = make_sub(T, pi, T->child_iters, ein, v.nin + 1, eout, v.nout + 1, &kid, &b);
        if (rc == TB_OK && isfinite(b))
            rc = tb_bnb_child(kids, kid.data, kid.len, b);
        /* 3: e1 in, e2 in */
        ein[2 * v.nin + 2] = c;
        ein[2 * v.nin + 3] = nb[1];
        tb_buf_clear(&kid);
        if (rc == TB_OK)
            rc = make_sub(T, pi, T->child_iters, ein, v.nin + 2, eout, v.nout, &kid, &b);
        if (rc == TB_OK && isfinite(b))
            rc = tb_bnb_child(kids, kid.data, kid.len, b);
    } else if (rc == TB_OK) {
        tb_buf_clear(&kid);
        rc = make_sub(T, pi, T->child_iters, ein, v.nin + 1, eout, v.nout, &kid, &b);
        if (rc == TB_OK && isfinite(b))
            rc = tb_bnb_child(kids, kid.data, kid.len, b);
    }
    tb_buf_free(&kid);
out:
    free(pi);
    free(ein);
    free(eout);
    return rc;
}

static const tb_bnb_ops tsp_ops = {sizeof(tb_bnb_ops), TB_BNB_MINIMIZE, t_root, t_bound, t_branch,
                                   t_evaluate, NULL};

/* ---- input (TSPLIB) ----------------------------------------------------- */

static void t_destroy(void *ctx)
{
    tsp *T = ctx;
    if (!T)
        return;
    free(T->xy);
    free(T->d);
    free(T->tour0);
    free(T->state);
    free(T->key);
    free(T->pi);
    free(T->best_pi);
    free(T->g);
    free(T->parent);
    free(T->deg);
    free(T->best_deg);
    free(T->in_tree);
    free(T->best_parent);
    free(T->tour);
    free(T->adj);
    tb_buf_free(&T->buf);
    free(T);
}

enum { W_EUC_2D, W_CEIL_2D, W_ATT, W_GEO, W_EXPLICIT };
enum { F_FULL, F_UPPER_ROW, F_LOWER_ROW, F_UPPER_DIAG, F_LOWER_DIAG };


static double geo_rad(double x)
{
    const double PI = 3.141592; /* TSPLIB's value */
    double deg = trunc(x);       /* TSPLIB's (int)x, defined for every x */
    double min = x - deg;
    return PI * (deg + 5.0 * min / 3.0) / 180.0;
}

/* The distance of two cities, rounded as TSPLIB rounds it: a whole number,
 * as a double (cities far apart would not fit an int32_t; the caller
 * checks). */
static double coord_dist(int type, const double *p, const double *q)
{
    double dx = p[0] - q[0], dy = p[1] - q[1];
    switch (type) {
    case W_EUC_2D:
        return floor(sqrt(dx * dx + dy * dy) + 0.5);
    case W_CEIL_2D:
        return ceil(sqrt(dx * dx + dy * dy));
    case W_ATT: {
        double r = sqrt((dx * dx + dy * dy) / 10.0), t = floor(r + 0.5);
        return t < r ? t + 1 : t;
    }
    default: { /* GEO */
        const double RRR = 6378.388;
        double lai = geo_rad(p[0]), loi = geo_rad(p[1]), laj = geo_rad(q[0]), loj = geo_rad(q[1]);
        double q1 = cos(loi - loj), q2 = cos(lai - laj), q3 = cos(lai + laj);
        double c = 0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3);
        c = c > 1 ? 1 : c < -1 ? -1 : c; /* rounding may take it past +-1 */
        return floor(RRR * acos(c) + 1.0);
    }
    }
}

/* Nearest neighbour from city 0, then 2-opt until no move gains. */
static void heuristic(tsp *T)
{
    int n = T->n;
    uint16_t *t = T->tour0;
    unsigned char *used = calloc((size_t)n, 1);
    if (!used) { /* the identity tour is a tour too */
        for (int i = 0; i < n; i++)
            t[i] = (uint16_t)i;
    } else {
        t[0] = 0;
        used[0] = 1;
        for (int k = 1; k < n; k++) {
            int best = -1;
            for (int j = 0; j < n; j++)
                if (!used[j] && (best < 0 || dist(T, t[k - 1], j) < dist(T, t[k - 1], best)))
                    best = j;
            t[k] = (uint16_t)best;
            used[best] = 1;
        }
        free(used);
    }
    for (int improved = 1; improved;) {
        improved = 0;
        for (int i = 0; i < n - 1; i++)
            for (int j = i + 2; j < n; j++) {
                int a = t[i], b = t[i + 1], c = t[j], e = t[(j + 1) % n];
                if (a == e)
                    continue;
                int64_t delta = (int64_t)dist(T, a, c) + dist(T, b, e) - dist(T, a, b) -
                                dist(T, c, e);
                if (delta < 0) {
                    for (int l = i + 1, r = j; l < r; l++, r--) {
                        uint16_t x = t[l];
                        t[l] = t[r];
                        t[r] = x;
                    }
                    improved = 1;
                }
            }
    }
    T->ub0 = (double)tour_len(T, t);
}

static int alloc_scratch(tsp *T)
{
    size_t n = (size_t)T->n;
    T->tour0 = malloc(n * sizeof *T->tour0);
    T->state = malloc(n * n);
    T->key = malloc(n * sizeof *T->key);
    T->pi = malloc(n * sizeof *T->pi);
    T->best_pi = malloc(n * sizeof *T->best_pi);
    T->g = malloc(n * sizeof *T->g);
    T->parent = malloc(n * sizeof *T->parent);
    T->deg = malloc(n * sizeof *T->deg);
    T->best_deg = malloc(n * sizeof *T->best_deg);
    T->in_tree = malloc(n * sizeof *T->in_tree);
    T->best_parent = malloc(n * sizeof *T->best_parent);
    T->tour = malloc(n * sizeof *T->tour);
    T->adj = malloc(2 * n * sizeof *T->adj);
    return T->tour0 && T->state && T->key && T->pi && T->best_pi && T->g && T->parent && T->deg &&
                   T->best_deg && T->in_tree && T->best_parent && T->tour && T->adj
               ? TB_OK
               : TB_ERR_NOMEM;
}

static int t_load(const char *path, void **out, char *err, size_t errlen)
{
    tb_lexer x;
    if (tb_lexer_open(&x, path, err, errlen) != TB_OK)
        return TB_ERR_IO;
    tsp *T = calloc(1, sizeof *T);
    int rc = T ? TB_ERR_PARSE : TB_ERR_NOMEM;
    int n = 0, type = -1, format = -1, have_data = 0;
    double *xy = NULL;
    char line[512];
    if (!T)
        goto out;
    /* Header: KEY : VALUE lines up to a section. */
    while (fgets(line, sizeof line, x.f)) {
        char *p = line, *colon = strchr(line, ':');
        while (isspace((unsigned char)*p))
            p++;
        char key[64] = "", val[256] = "";
        size_t k = 0;
        while (*p && *p != ':' && !isspace((unsigned char)*p) && k + 1 < sizeof key)
            key[k++] = *p++;
        key[k] = 0;
        if (colon) {
            char *v = colon + 1;
            while (isspace((unsigned char)*v))
                v++;
            snprintf(val, sizeof val, "%s", v);
            for (size_t e = strlen(val); e > 0 && isspace((unsigned char)val[e - 1]); e--)
                val[e - 1] = 0;
        }
        if (!key[0]) {
            x.line++;
            continue;
        }
        if (strcmp(key, "EOF") == 0)
            break;
        if (strcmp(key, "NODE_COORD_SECTION") == 0 || strcmp(key, "EDGE_WEIGHT_SECTION") == 0) {
            int coords = key[0] == 'N';
            x.tok_line = x.line;
            x.line++;
            if (have_data) { /* its n and its matrix are set: one data section only */
                tb_lexer_error(&x, x.line - 1, "%s after the data section", key);
                goto out;
            }
            if (n < 3) {
                tb_lexer_error(&x, x.line - 1, "%s before a DIMENSION of 3 or more", key);
                goto out;
            }
            if (coords ? type == W_EXPLICIT || type < 0 : type != W_EXPLICIT || format < 0) {
                tb_lexer_error(&x, x.line - 1, "%s does not go with the EDGE_WEIGHT_TYPE%s given",
                               key, coords ? "" : "/FORMAT");
                goto out;
            }
            if (!T->d)
                T->d = calloc((size_t)n * n, sizeof *T->d);
            if (!T->d) {
                rc = TB_ERR_NOMEM;
                goto out;
            }
            if (coords) {
                xy = calloc((size_t)n * 2, sizeof *xy);
                if (!xy) {
                    rc = TB_ERR_NOMEM;
                    goto out;
                }
                for (int i = 0; i < n; i++) {
                    double id;
                    if (tb_lexer_double(&x, "a city number", &id) <= 0 ||
                        tb_lexer_double(&x, "an x coordinate", &xy[2 * i]) <= 0 ||
                        tb_lexer_double(&x, "a y coordinate", &xy[2 * i + 1]) <= 0)
                        goto out;
                    if (id != i + 1) {
                        tb_lexer_error(&x, x.tok_line, "expected city %d, got %g", i + 1, id);
                        goto out;
                    }
                }
                for (int i = 0; i < n; i++)
                    for (int j = 0; j < n; j++) {
                        double v = i == j ? 0 : coord_dist(type, &xy[2 * i], &xy[2 * j]);
                        if (!(v <= 1e8)) { /* as explicit weights: sums fit, BIG dominates */
                            tb_lexer_error(&x, x.tok_line,
                                           "cities %d and %d: distance %g out of range (at most "
                                           "1e8)", i + 1, j + 1, v);
                            goto out;
                        }
                        T->d[(size_t)i * n + j] = (int32_t)v;
                    }
            } else {
                for (int i = 0; i < n; i++) {
                    int lo = 0, hi = n; /* j range of row i */
                    switch (format) {
                    case F_UPPER_ROW:
                        lo = i + 1;
                        break;
                    case F_LOWER_ROW:
                        hi = i;
                        break;
                    case F_UPPER_DIAG:
                        lo = i;
                        break;
                    case F_LOWER_DIAG:
                        hi = i + 1;
                        break;
                    default:
                        break;
                    }
                    for (int j = lo; j < hi; j++) {
                        double w;
                        if (tb_lexer_double(&x, "an edge weight", &w) <= 0)
                            goto out;
                        if (w < 0 || w > 1e8 || w != floor(w)) {
                            tb_lexer_error(&x, x.line,
                                           "edge weights must be integers from 0 to 1e8, got %g",
                                           w);
                            goto out;
                        }
                        T->d[(size_t)i * n + j] = T->d[(size_t)j * n + i] = (int32_t)w;
                    }
                }
                for (int i = 0; i < n; i++)
                    T->d[(size_t)i * n + i] = 0;
            }
            have_data = 1;
            /* the rest of the section's last line */
            if (!fgets(line, sizeof line, x.f))
                break;
            x.line++;
            continue;
        }
        if (strcmp(key, "DISPLAY_DATA_SECTION") == 0) {
            x.line++;
            for (int i = 0; i < n && fgets(line, sizeof line, x.f); i++)
                x.line++;
            continue;
        }
        if (!colon) {
            tb_lexer_error(&x, x.line, "expected 'KEY : value' or a section, got '%s'", key);
            goto out;
        }
        if (strcmp(key, "TYPE") == 0 && strcmp(val, "TSP") != 0) {
            tb_lexer_error(&x, x.line, "TYPE %s: only symmetric TSP (TYPE : TSP) is solved", val);
            goto out;
        } else if (strcmp(key, "DIMENSION") == 0) {
            char *end;
            long v = strtol(val, &end, 10);
            if (*end || end == val || v < 3 || v > 4000) {
                tb_lexer_error(&x, x.line, "DIMENSION must be 3..4000, got '%s'", val);
                goto out;
            }
            if (have_data) {
                tb_lexer_error(&x, x.line, "DIMENSION after the data section");
                goto out;
            }
            n = (int)v;
        } else if (strcmp(key, "EDGE_WEIGHT_TYPE") == 0) {
            static const char *const names[] = {"EUC_2D", "CEIL_2D", "ATT", "GEO", "EXPLICIT"};
            for (int t = 0; t < 5; t++)
                if (strcmp(val, names[t]) == 0)
                    type = t;
            if (type < 0) {
                snprintf(err, errlen,
                         "%s:%d: EDGE_WEIGHT_TYPE %s is not supported (EUC_2D, CEIL_2D, ATT, GEO, "
                         "EXPLICIT)",
                         path, x.line, val);
                goto out;
            }
        } else if (strcmp(key, "EDGE_WEIGHT_FORMAT") == 0) {
            static const char *const names[] = {"FULL_MATRIX", "UPPER_ROW", "LOWER_ROW",
                                                "UPPER_DIAG_ROW", "LOWER_DIAG_ROW"};
            for (int t = 0; t < 5; t++)
                if (strcmp(val, names[t]) == 0)
                    format = t;
            if (format < 0 && strcmp(val, "FUNCTION") != 0) {
                tb_lexer_error(&x, x.line, "EDGE_WEIGHT_FORMAT %s is not supported", val);
                goto out;
            }
        }
        x.line++;
    }
    if (!have_data) {
        tb_lexer_error(&x, x.line, "no NODE_COORD_SECTION or EDGE_WEIGHT_SECTION");
        goto out;
    }
    T->n = n;
    T->root_iters = 1000;
    T->child_iters = 50;
    T->xy = xy; /* the live view draws the tour on them */
    xy = NULL;
    rc = alloc_scratch(T);
    if (rc == TB_OK)
        heuristic(T);
out:
    free(xy);
    tb_lexer_close(&x);
    if (rc != TB_OK) {
        if (rc == TB_ERR_NOMEM)
            snprintf(err, errlen, "%s: out of memory", path);
        t_destroy(T);
        return rc;
    }
    *out = T;
    return TB_OK;
}

static int t_solution_json(void *ctx, const void *sol, size_t len, tb_buf *out)
{
    const tsp *T = ctx;
    if (len != (size_t)T->n * 2)
        return TB_ERR_PARSE;
    TB_CHECK(tb_buf_printf(out, "["));
    for (int k = 0; k < T->n; k++) {
        uint16_t c;
        memcpy(&c, (const unsigned char *)sol + 2 * k, 2);
        TB_CHECK(tb_buf_printf(out, "%s%u", k ? ", " : "", (unsigned)c));
    }
    return tb_buf_printf(out, "]");
}

static int t_check(void *ctx, const void *sol, size_t len, double value)
{
    const tsp *T = ctx;
    if (len != (size_t)T->n * 2)
        return TB_ERR_PARSE;
    uint16_t *t = malloc(len);
    unsigned char *seen = calloc((size_t)T->n, 1);
    int rc = t && seen ? TB_OK : TB_ERR_NOMEM;
    if (rc == TB_OK) {
        memcpy(t, sol, len);
        for (int k = 0; k < T->n && rc == TB_OK; k++)
            if (t[k] >= T->n || seen[t[k]]++)
                rc = TB_ERR_RANGE;
        if (rc == TB_OK && (double)tour_len(T, t) != value)
            rc = TB_ERR_RANGE;
    }
    free(t);
    free(seen);
    return rc;
}

/* The cities' coordinates for the live view (GEO: latitude and longitude
 * as TSPLIB writes them). */
static int t_view_json(void *ctx, tb_buf *out)
{
    const tsp *T = ctx;
    if (!T->xy)
        return tb_buf_printf(out, "{\"n\": %d, \"coords\": null}", T->n);
    int rc = tb_buf_printf(out, "{\"n\": %d, \"coords\": [", T->n);
    for (int i = 0; i < T->n && rc == TB_OK; i++)
        rc = tb_buf_printf(out, "%s[%.10g, %.10g]", i ? ", " : "", T->xy[2 * i], T->xy[2 * i + 1]);
    return rc == TB_OK ? tb_buf_printf(out, "]}") : rc;
}

const tb_bnb_problem tb_bnb_tsp = {.name = "tsp",
                                   .ops = &tsp_ops,
                                   .load = t_load,
                                   .destroy = t_destroy,
                                   .solution_json = t_solution_json,
                                   .check = t_check,
                                   .view_json = t_view_json};
