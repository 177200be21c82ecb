/*
 * bnb_history.c - the history file of `tenbin bnb replay` (bnb_history.h).
 *
 * The checks follow the page (tools/web/index.html): it does arithmetic on
 * the numbers (toFixed, toPrecision, the charts' scales), indexes the
 * TSP's coordinates with the tour and draws the bounds over the points'
 * times, so a value of the wrong type or out of range would break the
 * drawing without a word.  They accept everything the writer
 * (write_history in tools/cmd_bnb.c, with the problems' solution_json and
 * view_json in apps/bnb/) produces; a new problem needs its name and its
 * solution's shape here.
 */
#include "bnb_history.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenbin/core.h"

typedef struct hreader {
    const char *path;
    char *err;
    size_t errlen;
} hreader;

/* What a value must be; want_text says it in messages. */
typedef enum want {
    W_ANY,
    W_OBJECT,
    W_OBJECT_OR_NULL,
    W_ARRAY,
    W_ARRAY_OR_NULL,
    W_STRING,
    W_BOOL,
    W_FALSE,
    W_NUMBER,
    W_NUMBER_OR_NULL,
    W_SECONDS, /* a number >= 0 */
    W_COUNT,   /* a whole number >= 0 */
    W_SENSE,
    W_PROBLEM,
} want;

static const char *const want_text[] = {
    [W_ANY] = "a value",
    [W_OBJECT] = "an object",
    [W_OBJECT_OR_NULL] = "an object or null",
    [W_ARRAY] = "an array",
    [W_ARRAY_OR_NULL] = "an array or null",
    [W_STRING] = "a string",
    [W_BOOL] = "true or false",
    [W_FALSE] = "false (a finished run's)",
    [W_NUMBER] = "a number",
    [W_NUMBER_OR_NULL] = "a number or null",
    [W_SECONDS] = "a number >= 0",
    [W_COUNT] = "a whole number >= 0",
    [W_SENSE] = "\"min\" or \"max\"",
    [W_PROBLEM] = "\"knapsack\", \"tsp\" or \"bmi\"",
};

static const char *const problem_names[] = {"knapsack", "tsp", "bmi"};

__attribute__((format(printf, 3, 4))) static int fail(hreader *r, int rc, const char *fmt, ...)
{
    if (r->err == NULL || r->errlen == 0)
        return rc;
    int w = snprintf(r->err, r->errlen, "%s: ", r->path);
    if (w >= 0 && (size_t)w < r->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err + w, r->errlen - (size_t)w, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static int fits(const cJSON *v, want w)
{
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    switch (w) {
    case W_ANY:
        return v != NULL;
    case W_OBJECT:
        return cJSON_IsObject(v);
    case W_OBJECT_OR_NULL:
        return cJSON_IsNull(v) || cJSON_IsObject(v);
    case W_ARRAY:
        return cJSON_IsArray(v);
    case W_ARRAY_OR_NULL:
        return cJSON_IsNull(v) || cJSON_IsArray(v);
    case W_STRING:
        return cJSON_IsString(v) && v->valuestring != NULL;
    case W_BOOL:
        return cJSON_IsBool(v);
    case W_FALSE:
        return cJSON_IsFalse(v);
    case W_NUMBER:
        return isfinite(d);
    case W_NUMBER_OR_NULL:
        return cJSON_IsNull(v) || isfinite(d);
    case W_SECONDS:
        return isfinite(d) && d >= 0;
    case W_COUNT:
        return isfinite(d) && d >= 0 && d == floor(d);
    case W_SENSE:
        return cJSON_IsString(v) && v->valuestring != NULL &&
               (strcmp(v->valuestring, "min") == 0 || strcmp(v->valuestring, "max") == 0);
    case W_PROBLEM:
        if (!cJSON_IsString(v) || v->valuestring == NULL)
            return 0;
        for (size_t i = 0; i < sizeof problem_names / sizeof *problem_names; i++)
            if (strcmp(v->valuestring, problem_names[i]) == 0)
                return 1;
        return 0;
    }
    return 0;
}

/* What v is, for "got ...": its value when a number or a literal (strings
 * are not repeated: they may hold anything, newlines included). */
static const char *got(const cJSON *v, char *buf, size_t n)
{
    if (cJSON_IsNumber(v)) {
        snprintf(buf, n, "%g", v->valuedouble);
        return buf;
    }
    return cJSON_IsNull(v)     ? "null"
           : cJSON_IsTrue(v)   ? "true"
           : cJSON_IsFalse(v)  ? "false"
           : cJSON_IsString(v) ? "a string"
           : cJSON_IsArray(v)  ? "an array"
                               : "an object";
}

/* "AT.KEY" (AT "" at the top), or "AT[IDX]" when key is NULL. */
static void path_of(char *buf, size_t n, const char *at, const char *key, size_t idx)
{
    if (key == NULL)
        snprintf(buf, n, "%s[%zu]", at, idx);
    else
        snprintf(buf, n, "%s%s%s", at, at[0] ? "." : "", key);
}

/* v (NULL: missing) is not what w wants. */
static int bad(hreader *r, const char *at, const char *key, size_t idx, const cJSON *v, want w)
{
    char p[160], g[40];
    path_of(p, sizeof p, at, key, idx);
    if (v == NULL)
        return fail(r, TB_ERR_PARSE, "%s: missing, expected %s", p, want_text[w]);
    return fail(r, TB_ERR_PARSE, "%s: expected %s, got %s", p, want_text[w], got(v, g, sizeof g));
}

/* The member key of object obj (at its path), which must fit w; *out NULL
 * when it is missing and optional. */
static int member(hreader *r, const cJSON *obj, const char *at, const char *key, want w,
                  int optional, const cJSON **out)
{
    const cJSON *found = NULL, *c;
    cJSON_ArrayForEach(c, obj)
    {
        if (c->string == NULL || strcmp(c->string, key) != 0)
            continue;
        if (found != NULL) {
            char p[160];
            path_of(p, sizeof p, at, key, 0);
            return fail(r, TB_ERR_PARSE, "%s: given twice", p);
        }
        found = c;
    }
    *out = found;
    if (found == NULL ? !optional : !fits(found, w))
        return bad(r, at, key, 0, found, w);
    return TB_OK;
}

/* Every item of array a (at its path) fits w; *n their count. */
static int items(hreader *r, const cJSON *a, const char *at, want w, size_t *n)
{
    size_t i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, a)
    {
        if (!fits(c, w))
            return bad(r, at, NULL, i, c, w);
        i++;
    }
    if (n != NULL)
        *n = i;
    return TB_OK;
}

/* A group of the final state. */
static int check_group(hreader *r, const cJSON *g, const char *at)
{
    static const struct {
        const char *key;
        want w;
    } keys[] = {{"name", W_STRING},   {"workers", W_COUNT}, {"pending", W_COUNT},
                {"nodes", W_COUNT},   {"tasks", W_COUNT},   {"busy_s", W_NUMBER},
                {"idle_s", W_NUMBER}, {"throughput", W_NUMBER}};
    const cJSON *v;
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        TB_CHECK(member(r, g, at, keys[k].key, keys[k].w, 0, &v));
    return TB_OK;
}

/* problem; *tsp_n the cities of a TSP (-1 otherwise), *name its name. */
static int check_problem(hreader *r, const cJSON *p, double *tsp_n, const char **name)
{
    const cJSON *v, *view, *n, *coords;
    TB_CHECK(member(r, p, "problem", "problem", W_PROBLEM, 0, &v));
    *name = v->valuestring;
    TB_CHECK(member(r, p, "problem", "file", W_STRING, 0, &v));
    TB_CHECK(member(r, p, "problem", "serve", W_FALSE, 1, &v));
    *tsp_n = -1;
    if (strcmp(*name, "tsp") != 0) /* the page reads no view but the TSP's */
        return member(r, p, "problem", "view", W_OBJECT_OR_NULL, 0, &v);
    TB_CHECK(member(r, p, "problem", "view", W_OBJECT, 0, &view));
    TB_CHECK(member(r, view, "problem.view", "n", W_COUNT, 0, &n));
    *tsp_n = n->valuedouble;
    TB_CHECK(member(r, view, "problem.view", "coords", W_ARRAY_OR_NULL, 0, &coords));
    if (cJSON_IsNull(coords))
        return TB_OK; /* no coordinates (EXPLICIT distances) */
    size_t i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, coords)
    {
        char at[64], g[40];
        snprintf(at, sizeof at, "problem.view.coords[%zu]", i);
        size_t k = 0;
        if (!cJSON_IsArray(c))
            return fail(r, TB_ERR_PARSE, "%s: expected a pair [x, y] of numbers, got %s", at,
                        got(c, g, sizeof g));
        TB_CHECK(items(r, c, at, W_NUMBER, &k));
        if (k != 2)
            return fail(r, TB_ERR_PARSE,
                        "%s: expected a pair [x, y] of numbers, got an array of %zu", at, k);
        i++;
    }
    if ((double)i != *tsp_n)
        return fail(r, TB_ERR_PARSE,
                    "problem.view.coords: expected problem.view.n = %.0f pairs, got %zu", *tsp_n,
                    i);
    return TB_OK;
}

/* final.solution (not null) of the named problem. */
static int check_solution(hreader *r, const cJSON *s, const char *name, double tsp_n)
{
    const char *at = "final.solution";
    char g[40];
    if (strcmp(name, "bmi") == 0) {
        const cJSON *x, *y;
        if (!cJSON_IsObject(s))
            return fail(r, TB_ERR_PARSE,
                        "%s: expected null or {\"x\": [...], \"y\": [...]}, got %s", at,
                        got(s, g, sizeof g));
        TB_CHECK(member(r, s, at, "x", W_ARRAY, 0, &x));
        TB_CHECK(member(r, s, at, "y", W_ARRAY, 0, &y));
        TB_CHECK(items(r, x, "final.solution.x", W_NUMBER, NULL));
        return items(r, y, "final.solution.y", W_NUMBER, NULL);
    }
    if (!cJSON_IsArray(s))
        return fail(r, TB_ERR_PARSE, "%s: expected null or an array of %s, got %s", at,
                    tsp_n >= 0 ? "cities" : "items", got(s, g, sizeof g));
    size_t n = 0;
    TB_CHECK(items(r, s, at, W_COUNT, &n));
    if (tsp_n < 0)
        return TB_OK;
    /* A tour: every city of the view once would be the writer's; the page
     * needs the indices within its coordinates. */
    if ((double)n != tsp_n)
        return fail(r, TB_ERR_PARSE, "%s: expected a tour of problem.view.n = %.0f cities, got %zu",
                    at, tsp_n, n);
    size_t i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, s)
    {
        if (c->valuedouble >= tsp_n)
            return fail(r, TB_ERR_PARSE,
                        "%s[%zu]: expected a city below problem.view.n = %.0f, got %g", at, i,
                        tsp_n, c->valuedouble);
        i++;
    }
    return TB_OK;
}

static int check_final(hreader *r, const cJSON *f, const char *name, double tsp_n)
{
    static const struct {
        const char *key;
        want w;
        int optional;
    } keys[] = {{"running", W_FALSE, 0},        {"file", W_STRING, 0},
                {"sense", W_SENSE, 0},          {"elapsed_s", W_SECONDS, 0},
                {"upper", W_NUMBER_OR_NULL, 0}, {"lower", W_NUMBER_OR_NULL, 0},
                {"gap", W_NUMBER_OR_NULL, 0},   {"target_gap", W_SECONDS, 0},
                {"proven", W_BOOL, 0},          {"nodes", W_COUNT, 0},
                {"idle", W_FALSE, 1},           {"pending", W_COUNT, 1}};
    const cJSON *v, *groups, *sol;
    TB_CHECK(member(r, f, "final", "problem", W_PROBLEM, 0, &v));
    if (strcmp(v->valuestring, name) != 0)
        return fail(r, TB_ERR_PARSE,
                    "final.problem: expected \"%s\" as problem.problem, got \"%s\"", name,
                    v->valuestring); /* both among problem_names: safe to repeat */
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        TB_CHECK(member(r, f, "final", keys[k].key, keys[k].w, keys[k].optional, &v));
    TB_CHECK(member(r, f, "final", "groups", W_ARRAY, 0, &groups));
    size_t i = 0;
    const cJSON *g;
    cJSON_ArrayForEach(g, groups)
    {
        char at[48];
        snprintf(at, sizeof at, "final.groups[%zu]", i);
        if (!cJSON_IsObject(g))
            return bad(r, "final.groups", NULL, i, g, W_OBJECT);
        TB_CHECK(check_group(r, g, at));
        i++;
    }
    TB_CHECK(member(r, f, "final", "solution", W_ANY, 0, &sol));
    return cJSON_IsNull(sol) ? TB_OK : check_solution(r, sol, name, tsp_n);
}

static int check_points(hreader *r, const cJSON *h, size_t *npoints)
{
    size_t i = 0;
    double last_t = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, h)
    {
        char at[48];
        snprintf(at, sizeof at, "history[%zu]", i);
        const cJSON *t, *v, *groups;
        if (!cJSON_IsObject(p))
            return bad(r, "history", NULL, i, p, W_OBJECT);
        TB_CHECK(member(r, p, at, "t", W_SECONDS, 0, &t));
        /* the chart's time axis runs from the first point's to the last's */
        if (i > 0 && t->valuedouble < last_t)
            return fail(r, TB_ERR_PARSE,
                        "%s.t: expected >= history[%zu].t = %g (times go forward), got %g", at,
                        i - 1, last_t, t->valuedouble);
        last_t = t->valuedouble;
        TB_CHECK(member(r, p, at, "upper", W_NUMBER_OR_NULL, 0, &v));
        TB_CHECK(member(r, p, at, "lower", W_NUMBER_OR_NULL, 0, &v));
        TB_CHECK(member(r, p, at, "pending", W_COUNT, 0, &v));
        TB_CHECK(member(r, p, at, "groups", W_ARRAY, 0, &groups));
        char gat[64];
        snprintf(gat, sizeof gat, "%s.groups", at);
        TB_CHECK(items(r, groups, gat, W_COUNT, NULL));
        i++;
    }
    *npoints = i;
    return TB_OK;
}

/* The whole text as one JSON value, blanks after it allowed. */
static int parse(hreader *r, const char *text, size_t len, cJSON **root)
{
    const char *end = text;
    *root = len ? cJSON_ParseWithLengthOpts(text, len, &end, 0) : NULL;
    if (*root != NULL) {
        while (end < text + len && (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n'))
            end++;
        if (end == text + len)
            return TB_OK;
        cJSON_Delete(*root);
        *root = NULL;
    }
    if (len == 0)
        return fail(r, TB_ERR_PARSE, "empty, not JSON");
    size_t pos = end >= text && end <= text + len ? (size_t)(end - text) : 0;
    long line = 1, col = 1;
    for (size_t i = 0; i < pos; i++) {
        col = text[i] == '\n' ? 1 : col + 1;
        line += text[i] == '\n';
    }
    /* the message without the path's ": " after it: path:line:col */
    if (r->err != NULL && r->errlen > 0)
        snprintf(r->err, r->errlen, "%s:%ld:%ld: not JSON", r->path, line, col);
    return TB_ERR_PARSE;
}

/* The re-printed texts; the points' array loses its brackets. */
static int print_all(const cJSON *prob, const cJSON *fin, const cJSON *hist, tb_bnb_history *h)
{
    h->problem = cJSON_PrintUnformatted(prob);
    h->final = cJSON_PrintUnformatted(fin);
    h->points = cJSON_PrintUnformatted(hist);
    if (h->problem == NULL || h->final == NULL || h->points == NULL)
        return TB_ERR_NOMEM;
    size_t n = strlen(h->points); /* "[...]" */
    if (n < 2)
        return TB_ERR_NOMEM; /* cannot be: an array prints as [] at least */
    memmove(h->points, h->points + 1, n - 2);
    h->points[n - 2] = '\0';
    return TB_OK;
}

int tb_bnb_history_read(const char *text, size_t len, const char *path, tb_bnb_history *out,
                        char *err, size_t errlen)
{
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    hreader r = {.path = path ? path : "<history>", .err = err, .errlen = errlen};
    if (out == NULL || (text == NULL && len > 0))
        return fail(&r, TB_ERR_INVALID, "no history to read");
    memset(out, 0, sizeof *out);
    cJSON *root;
    TB_CHECK(parse(&r, text, len, &root));
    const cJSON *prob, *fin, *hist;
    const char *name = NULL;
    double tsp_n = -1;
    tb_bnb_history h = {0};
    char g[40];
    int rc = cJSON_IsObject(root)
                 ? TB_OK
                 : fail(&r, TB_ERR_PARSE,
                        "expected an object {\"problem\", \"final\", \"history\"} as tenbin bnb "
                        "--history writes it, got %s",
                        got(root, g, sizeof g));
    if (rc == TB_OK)
        rc = member(&r, root, "", "problem", W_OBJECT, 0, &prob);
    if (rc == TB_OK)
        rc = member(&r, root, "", "final", W_OBJECT, 0, &fin);
    if (rc == TB_OK)
        rc = member(&r, root, "", "history", W_ARRAY, 0, &hist);
    if (rc == TB_OK)
        rc = check_problem(&r, prob, &tsp_n, &name);
    if (rc == TB_OK)
        rc = check_final(&r, fin, name, tsp_n);
    if (rc == TB_OK)
        rc = check_points(&r, hist, &h.npoints);
    if (rc == TB_OK && (rc = print_all(prob, fin, hist, &h)) != TB_OK)
        fail(&r, rc, "out of memory");
    cJSON_Delete(root);
    if (rc != TB_OK) {
        tb_bnb_history_free(&h);
        return rc;
    }
    *out = h;
    return TB_OK;
}

void tb_bnb_history_free(tb_bnb_history *h)
{
    if (h == NULL)
        return;
    cJSON_free(h->problem);
    cJSON_free(h->final);
    cJSON_free(h->points);
    memset(h, 0, sizeof *h);
}
