/*
 * platform.c - the platform model: one-line specs, JSON platform files
 * (cJSON), rank placement and the LogGPS overheads.  The format is documented
 * in docs/platform.md; keep the two in step.
 */
#define _POSIX_C_SOURCE 200809L

#include "core/json.h"
#include "model/model_internal.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------ */
/* Messages                                                            */
/* ------------------------------------------------------------------ */

/* Writes the reason into why (TB__MODEL_WHY bytes) and returns rc. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(char *why, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tb__verrf(why, TB__MODEL_WHY, rc, fmt, ap);
    va_end(ap);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Values                                                              */
/* ------------------------------------------------------------------ */

static int unit_scale(const char *u, double *scale)
{
    static const struct { const char *name; double scale; } units[] = {
        {"", 1.0}, {"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(u, units[i].name) == 0) {
            *scale = units[i].scale;
            return 1;
        }
    return 0;
}

int tb__model_parse_time(const char *s, double *out, char *why)
{
    size_t k = strlen(s);
    while (k > 0 && isalpha((unsigned char)s[k - 1]))
        k--;
    char num[64];
    if (k == 0 || k >= sizeof num)
        return fail(why, TB_ERR_PARSE, "expected a time, got '%s'", s);
    memcpy(num, s, k);
    num[k] = '\0';
    double v, scale;
    int rc = tb_parse_double(num, &v);
    if (rc != TB_OK)
        return fail(why, rc, "expected a time, got '%s'", s);
    if (!unit_scale(s + k, &scale))
        return fail(why, TB_ERR_PARSE, "unknown unit '%s' in '%s' (use ns, us, ms or s)", s + k,
                    s);
    if (v < 0)
        return fail(why, TB_ERR_RANGE, "negative time, got '%s'", s);
    *out = v * scale;
    return TB_OK;
}

/* Splits "a-b" at the first '-' after which both sides are numbers (so
 * "1e-3-2" is 1e-3 to 2).  Returns 1 if found. */
static int split_range(const char *s, double *a, double *b)
{
    char left[64];
    for (const char *d = strchr(s, '-'); d != NULL; d = strchr(d + 1, '-')) {
        size_t k = (size_t)(d - s);
        if (k == 0 || k >= sizeof left)
            continue;
        memcpy(left, s, k);
        left[k] = '\0';
        if (tb_parse_double(left, a) == TB_OK && tb_parse_double(d + 1, b) == TB_OK)
            return 1;
    }
    return 0;
}

int tb__model_parse_speed(const char *s, double *lo, double *hi, char *why)
{
    double a, b;
    if (tb_parse_double(s, &a) == TB_OK) {
        if (!(a > 0))
            return fail(why, TB_ERR_RANGE, "expected a positive speed, got '%s'", s);
        *lo = *hi = a;
        return TB_OK;
    }
    if (!split_range(s, &a, &b))
        return fail(why, TB_ERR_PARSE, "expected a positive speed or a range a-b, got '%s'", s);
    if (!(a > 0) || !(b > 0))
        return fail(why, TB_ERR_RANGE, "expected a positive speed, got '%s'", s);
    if (a > b)
        return fail(why, TB_ERR_RANGE, "range lower bound above upper bound, got '%s'", s);
    *lo = a;
    *hi = b;
    return TB_OK;
}

int tb__model_parse_count(const char *s, long max, long *out, char *why)
{
    long v;
    int rc = tb_parse_long(s, LONG_MIN, LONG_MAX, &v);
    if (rc == TB_ERR_PARSE)
        return fail(why, rc, "expected a positive integer, got '%s'", s);
    if (rc != TB_OK || v < 1)
        return fail(why, TB_ERR_RANGE, "expected a positive integer, got '%s'", s);
    if (v > max)
        return fail(why, TB_ERR_RANGE, "expected a positive integer at most %ld, got '%s'", max,
                    s);
    *out = v;
    return TB_OK;
}

static int parse_bytes(const char *s, double *out, char *why)
{
    double v;
    int rc = tb_parse_double(s, &v);
    if (rc != TB_OK)
        return fail(why, rc, "expected a number of bytes, got '%s'", s);
    if (v < 0)
        return fail(why, TB_ERR_RANGE, "negative size, got '%s'", s);
    *out = v;
    return TB_OK;
}

/* ------------------------------------------------------------------ */
/* Building platforms                                                  */
/* ------------------------------------------------------------------ */

void tb__model_net_defaults(tb_loggps *n)
{
    memset(n, 0, sizeof *n);
    n->S = TB__MODEL_DEFAULT_S;
}

void tb__model_tmpl_defaults(tb__model_tmpl *t)
{
    memset(t, 0, sizeof *t);
    t->speed_lo = t->speed_hi = 1.0;
    t->cores = 1;
}

static int copy_trace(tb_host *h, const tb__model_tmpl *t)
{
    h->trace_time = malloc(t->ntrace * sizeof *h->trace_time);
    h->trace_speed = malloc(t->ntrace * sizeof *h->trace_speed);
    if (h->trace_time == NULL || h->trace_speed == NULL)
        return TB_ERR_NOMEM;
    for (size_t i = 0; i < t->ntrace; i++) {
        h->trace_time[i] = t->trace_time[i];
        h->trace_speed[i] = t->trace_factor[i] * h->speed;
    }
    h->ntrace = t->ntrace;
    return TB_OK;
}

int tb__model_fill_host(tb_host *h, const tb__model_tmpl *t, tb_rng *rng, int cluster,
                        const char *name)
{
    memset(h, 0, sizeof *h);
    if (snprintf(h->name, sizeof h->name, "%s", name) >= (int)sizeof h->name)
        h->name[sizeof h->name - 1] = '\0';
    h->speed = t->speed_lo == t->speed_hi ? t->speed_lo
                                          : tb_rng_uniform(rng, t->speed_lo, t->speed_hi);
    h->cores = t->cores;
    h->cluster = cluster;
    h->kind = TB_SPEED_CONSTANT;
    if (t->ntrace > 0) {
        h->kind = TB_SPEED_TRACE;
        return copy_trace(h, t);
    }
    if (t->load > 0) {
        h->kind = TB_SPEED_LOAD;
        h->lambda = 1.0 / t->load;
    }
    return TB_OK;
}

int tb__model_alloc(tb_platform **out, size_t nhosts, size_t nclusters, uint64_t seed)
{
    tb_platform *p = calloc(1, sizeof *p);
    if (p == NULL)
        return TB_ERR_NOMEM;
    p->seed = seed;
    p->hosts = nhosts ? calloc(nhosts, sizeof *p->hosts) : NULL;
    p->clusters = calloc(nclusters, sizeof *p->clusters);
    if ((nhosts && p->hosts == NULL) || p->clusters == NULL) {
        tb_platform_destroy(&p);
        return TB_ERR_NOMEM;
    }
    p->nhosts = nhosts;
    p->nclusters = nclusters;
    tb__model_net_defaults(&p->wan);
    *out = p;
    return TB_OK;
}

void tb_platform_destroy(tb_platform **pp)
{
    if (pp == NULL || *pp == NULL)
        return;
    tb_platform *p = *pp;
    for (size_t i = 0; i < p->nhosts; i++) {
        free(p->hosts[i].trace_time);
        free(p->hosts[i].trace_speed);
    }
    free(p->hosts);
    free(p->clusters);
    free(p);
    *pp = NULL;
}

/* ------------------------------------------------------------------ */
/* One-line specs                                                      */
/* ------------------------------------------------------------------ */

enum spec_key {
    K_HOSTS, K_CORES, K_SPEED, K_CLUSTERS, K_L, K_OS, K_OR, K_O, K_OB, K_OBYTE,
    K_GAP, K_GBYTE, K_S, K_WANL, K_WANG, K_LOAD, K_NETGAUGE, K_COUNT
};

static const char *const spec_keys[K_COUNT] = {
    "hosts", "cores", "speed", "clusters", "L", "os", "or", "o",
    "ob", "O", "g", "G", "S", "wan-L", "wan-G", "load", "netgauge"};

#define SPEC_KEY_LIST \
    "hosts, cores, speed, clusters, L, o, os, or, ob, O, g, G, S, wan-L, wan-G, load, netgauge"

typedef struct spec_vals {
    unsigned seen; /* bit per spec_key */
    long hosts, cores, clusters;
    double speed_lo, speed_hi, o, load, wan_L, wan_G;
    tb_loggps net;
    tb_loggps ng; /* netgauge=FILE (src/model/netgauge.c) */
} spec_vals;

static double *spec_time_field(spec_vals *v, int k)
{
    switch (k) {
    case K_L: return &v->net.L;
    case K_OS: return &v->net.os;
    case K_OR: return &v->net.or_;
    case K_O: return &v->o;
    case K_OB: return &v->net.ob;
    case K_OBYTE: return &v->net.O;
    case K_GAP: return &v->net.g;
    case K_GBYTE: return &v->net.G;
    case K_WANL: return &v->wan_L;
    case K_WANG: return &v->wan_G;
    case K_LOAD: return &v->load;
    default: return NULL;
    }
}

static int spec_value(spec_vals *v, int k, const char *s, char *why)
{
    switch (k) {
    case K_HOSTS: return tb__model_parse_count(s, TB__MODEL_MAX_HOSTS, &v->hosts, why);
    case K_CORES: return tb__model_parse_count(s, TB__MODEL_MAX_CORES, &v->cores, why);
    case K_CLUSTERS: return tb__model_parse_count(s, TB__MODEL_MAX_HOSTS, &v->clusters, why);
    case K_SPEED: return tb__model_parse_speed(s, &v->speed_lo, &v->speed_hi, why);
    case K_S: return parse_bytes(s, &v->net.S, why);
    case K_NETGAUGE: return tb_loggps_read_netgauge(s, &v->ng, why, TB__MODEL_WHY);
    default: break;
    }
    int rc = tb__model_parse_time(s, spec_time_field(v, k), why);
    if (rc == TB_OK && k == K_LOAD && !(v->load >= TB__MODEL_LOAD_MIN))
        return fail(why, TB_ERR_RANGE, "expected a time of at least 1ns, got '%s'", s);
    return rc;
}

/* Strips blanks at both ends, in place. */
static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

static int spec_key_index(const char *key)
{
    for (int k = 0; k < K_COUNT; k++)
        if (strcmp(key, spec_keys[k]) == 0)
            return k;
    return -1;
}

static int spec_item(spec_vals *v, char *item, char *err, size_t errlen)
{
    item = trim(item);
    char *eq = strchr(item, '=');
    if (item[0] == '\0' || eq == NULL) {
        return tb__errf(err, errlen, TB_ERR_PARSE, "spec: expected key=value, got '%s'", item);
    }
    *eq = '\0';
    char *key = trim(item), *val = trim(eq + 1), why[TB__MODEL_WHY];
    int k = spec_key_index(key);
    if (k < 0) {
        return tb__errf(err, errlen, TB_ERR_PARSE, "spec: unknown key '%s' (keys: %s)", key,
                        SPEC_KEY_LIST);
    }
    if (v->seen & (1u << k)) {
        return tb__errf(err, errlen, TB_ERR_PARSE, "spec: key '%s' given twice", key);
    }
    v->seen |= 1u << k;
    int rc = spec_value(v, k, val, why);
    if (rc != TB_OK)
        tb__errf(err, errlen, rc, "spec: key '%s': %s", key, why);
    return rc;
}

static int spec_has(const spec_vals *v, int k) { return (v->seen >> k) & 1u; }

/* The member of n that spec key k sets, or NULL. */
static double *spec_net_field(tb_loggps *n, int k)
{
    switch (k) {
    case K_L: return &n->L;
    case K_OS: return &n->os;
    case K_OR: return &n->or_;
    case K_OB: return &n->ob;
    case K_OBYTE: return &n->O;
    case K_GAP: return &n->g;
    case K_GBYTE: return &n->G;
    case K_S: return &n->S;
    default: return NULL;
    }
}

/* netgauge=FILE: the file's values for the network keys not given (o is
 * applied after this, so it wins over the file too). */
static void spec_apply_netgauge(spec_vals *v)
{
    for (int k = 0; k < K_COUNT; k++) {
        double *dst = spec_net_field(&v->net, k);
        if (dst != NULL && !spec_has(v, k))
            *dst = *spec_net_field(&v->ng, k);
    }
}

/* Defaults, netgauge, o into os/or (the specific keys win), WAN defaults. */
static int spec_finish(spec_vals *v, char *err, size_t errlen)
{
    if (!spec_has(v, K_HOSTS)) {
        return tb__errf(err, errlen, TB_ERR_PARSE, "spec: key 'hosts' is required");
    }
    if (v->clusters > v->hosts) {
        return tb__errf(err, errlen, TB_ERR_RANGE,
                        "spec: key 'clusters': %ld clusters for %ld hosts "
                        "(each cluster needs a host)",
                        v->clusters, v->hosts);
    }
    if (spec_has(v, K_NETGAUGE))
        spec_apply_netgauge(v);
    if (spec_has(v, K_O) && !spec_has(v, K_OS))
        v->net.os = v->o;
    if (spec_has(v, K_O) && !spec_has(v, K_OR))
        v->net.or_ = v->o;
    if (!spec_has(v, K_WANL))
        v->wan_L = v->net.L;
    if (!spec_has(v, K_WANG))
        v->wan_G = v->net.G;
    return TB_OK;
}

/* Cluster c of k holds hosts [c*n/k, (c+1)*n/k), as mw's groups do. */
static int spec_build(const spec_vals *v, uint64_t seed, tb_platform **out)
{
    size_t n = (size_t)v->hosts, k = (size_t)v->clusters;
    tb_platform *p;
    TB_CHECK(tb__model_alloc(&p, n, k, seed));
    p->wan.L = v->wan_L;
    p->wan.G = v->wan_G;
    tb__model_tmpl t;
    tb__model_tmpl_defaults(&t);
    t.speed_lo = v->speed_lo;
    t.speed_hi = v->speed_hi;
    t.cores = (int)v->cores;
    t.load = v->load;
    tb_rng rng;
    tb_rng_seed_stream(&rng, seed, 0);
    for (size_t c = 0; c < k; c++) {
        snprintf(p->clusters[c].name, sizeof p->clusters[c].name, "c%zu", c);
        p->clusters[c].net = v->net;
        for (size_t i = c * n / k; i < (c + 1) * n / k; i++) {
            char name[32];
            snprintf(name, sizeof name, "h%zu", i);
            /* No trace: cannot fail. */
            (void)tb__model_fill_host(&p->hosts[i], &t, &rng, (int)c, name);
        }
    }
    *out = p;
    return TB_OK;
}

int tb_platform_parse_spec(const char *spec, uint64_t seed, tb_platform **out, char *err,
                           size_t errlen)
{
    if (out == NULL)
        return TB_ERR_INVALID;
    *out = NULL;
    spec_vals v = {0};
    v.cores = v.clusters = 1;
    v.speed_lo = v.speed_hi = 1.0;
    tb__model_net_defaults(&v.net);
    char *copy = spec ? strdup(spec) : NULL;
    if (spec != NULL && copy == NULL)
        return TB_ERR_NOMEM;
    if (copy == NULL || trim(copy)[0] == '\0') {
        free(copy);
        return tb__errf(err, errlen, TB_ERR_PARSE,
                        "spec: empty (expected key=value,..., e.g. hosts=16,speed=1)");
    }
    int rc = TB_OK;
    char *item = copy;
    for (char *comma; rc == TB_OK && item != NULL; item = comma) {
        comma = strchr(item, ',');
        if (comma != NULL)
            *comma++ = '\0';
        rc = spec_item(&v, item, err, errlen);
    }
    free(copy);
    if (rc == TB_OK)
        rc = spec_finish(&v, err, errlen);
    return rc == TB_OK ? spec_build(&v, seed, out) : rc;
}

/* ------------------------------------------------------------------ */
/* JSON platform files                                                 */
/* ------------------------------------------------------------------ */

typedef struct jctx {
    const char *file;
    char *err;
    size_t errlen;
    char path[256]; /* JSON path of the value being read: clusters[0].network.L */
    size_t plen;
    tb_rng rng;     /* speed ranges, drawn in host order */
    tb_platform *p;
    size_t hcap;    /* hosts allocated in p */
} jctx;

typedef struct jtrace {
    size_t n;
    double *time, *factor;
} jtrace;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int jerr(jctx *j, int rc, const char *fmt, ...)
{
    char msg[TB__MODEL_WHY + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (j->plen > 0)
        tb__errf(j->err, j->errlen, rc, "%s: %s: %s", j->file, j->path, msg);
    else
        tb__errf(j->err, j->errlen, rc, "%s: %s", j->file, msg);
    return rc;
}

/* Appends to the path; returns the length to give jpop. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static size_t jpush(jctx *j, const char *fmt, ...)
{
    size_t old = j->plen, room = sizeof j->path - old;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(j->path + old, room, fmt, ap);
    va_end(ap);
    j->plen = n < 0 ? old : (size_t)n >= room ? sizeof j->path - 1 : old + (size_t)n;
    return old;
}

static size_t jpush_key(jctx *j, const char *key)
{
    return j->plen ? jpush(j, ".%s", key) : jpush(j, "%s", key);
}

static void jpop(jctx *j, size_t old)
{
    j->plen = old;
    j->path[old] = '\0';
}

/* Every member of obj is one of keys (NULL-terminated), and none twice. */
static int jcheck_keys(jctx *j, const cJSON *obj, const char *const *keys, const char *list)
{
    if (!cJSON_IsObject(obj))
        return jerr(j, TB_ERR_PARSE, "expected an object, got %s", tb__json_kind(obj));
    for (const cJSON *c = obj->child; c != NULL; c = c->next) {
        int known = 0;
        for (const char *const *k = keys; *k != NULL && !known; k++)
            known = strcmp(*k, c->string) == 0;
        size_t old = jpush_key(j, c->string);
        if (!known)
            return jerr(j, TB_ERR_PARSE, "unknown key (keys: %s)", list);
        for (const cJSON *d = obj->child; d != c; d = d->next)
            if (strcmp(d->string, c->string) == 0)
                return jerr(j, TB_ERR_PARSE, "key given twice");
        jpop(j, old);
    }
    return TB_OK;
}

/* Member `key` of obj or NULL; when present its key is pushed on the path. */
static const cJSON *jmember(jctx *j, const cJSON *obj, const char *key, size_t *old)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v != NULL)
        *old = jpush_key(j, key);
    return v;
}

static int jnumber(jctx *j, const cJSON *v, const char *expected, double *out)
{
    if (!cJSON_IsNumber(v))
        return jerr(j, TB_ERR_PARSE, "expected %s, got %s", expected, tb__json_kind(v));
    if (!isfinite(v->valuedouble))
        return jerr(j, TB_ERR_RANGE, "expected %s, got a number out of range", expected);
    *out = v->valuedouble;
    return TB_OK;
}

static int jtime(jctx *j, const cJSON *v, double *out)
{
    static const char expected[] = "a time (seconds, or a string like \"50us\")";
    char why[TB__MODEL_WHY];
    if (cJSON_IsString(v)) {
        int rc = tb__model_parse_time(v->valuestring, out, why);
        return rc == TB_OK ? TB_OK : jerr(j, rc, "%s", why);
    }
    double t;
    TB_CHECK(jnumber(j, v, expected, &t));
    if (t < 0)
        return jerr(j, TB_ERR_RANGE, "negative time, got %g", t);
    *out = t;
    return TB_OK;
}

static int jcount(jctx *j, const cJSON *v, long max, long *out)
{
    double x;
    TB_CHECK(jnumber(j, v, "a positive integer", &x));
    if (x != floor(x))
        return jerr(j, TB_ERR_PARSE, "expected a positive integer, got %g", x);
    if (x < 1)
        return jerr(j, TB_ERR_RANGE, "expected a positive integer, got %g", x);
    if (x > (double)max)
        return jerr(j, TB_ERR_RANGE, "expected a positive integer at most %ld, got %g", max, x);
    *out = (long)x;
    return TB_OK;
}

static int jspeed(jctx *j, const cJSON *v, double *lo, double *hi)
{
    char why[TB__MODEL_WHY];
    if (cJSON_IsString(v)) {
        int rc = tb__model_parse_speed(v->valuestring, lo, hi, why);
        return rc == TB_OK ? TB_OK : jerr(j, rc, "%s", why);
    }
    double x;
    TB_CHECK(jnumber(j, v, "a positive speed or a string \"a-b\"", &x));
    if (!(x > 0))
        return jerr(j, TB_ERR_RANGE, "expected a positive speed, got %g", x);
    *lo = *hi = x;
    return TB_OK;
}

static int jopt_time(jctx *j, const cJSON *obj, const char *key, double *out)
{
    size_t old;
    const cJSON *v = jmember(j, obj, key, &old);
    if (v == NULL)
        return TB_OK;
    TB_CHECK(jtime(j, v, out));
    jpop(j, old);
    return TB_OK;
}

static int jopt_bytes(jctx *j, const cJSON *obj, const char *key, double *out)
{
    size_t old;
    const cJSON *v = jmember(j, obj, key, &old);
    if (v == NULL)
        return TB_OK;
    TB_CHECK(jnumber(j, v, "a number of bytes", out));
    if (*out < 0)
        return jerr(j, TB_ERR_RANGE, "negative size, got %g", *out);
    jpop(j, old);
    return TB_OK;
}

/* name[32]: kept when obj has no "name". */
static int jopt_name(jctx *j, const cJSON *obj, char *name)
{
    size_t old;
    const cJSON *v = jmember(j, obj, "name", &old);
    if (v == NULL)
        return TB_OK;
    size_t n = cJSON_IsString(v) ? strlen(v->valuestring) : 0;
    if (n == 0 || n > 31)
        return jerr(j, TB_ERR_PARSE, "expected a name of 1 to 31 characters, got %s%s",
                    n > 31 ? "a longer " : "", n > 31 ? "string" : tb__json_kind(v));
    memcpy(name, v->valuestring, n + 1);
    jpop(j, old);
    return TB_OK;
}

/* ---- traces: [[time, factor], ...] ---- */

static void jtrace_free(jtrace *tr)
{
    free(tr->time);
    free(tr->factor);
    memset(tr, 0, sizeof *tr);
}

static int jtrace_time(jctx *j, const cJSON *v, jtrace *tr, size_t i)
{
    size_t old = jpush(j, "[0]");
    TB_CHECK(jtime(j, v, &tr->time[i]));
    if (i == 0 && tr->time[0] != 0)
        return jerr(j, TB_ERR_RANGE, "the first point must be at time 0, got %g", tr->time[0]);
    if (i > 0 && !(tr->time[i] > tr->time[i - 1]))
        return jerr(j, TB_ERR_RANGE, "times must increase, got %g after %g", tr->time[i],
                    tr->time[i - 1]);
    jpop(j, old);
    return TB_OK;
}

static int jtrace_point(jctx *j, const cJSON *pt, jtrace *tr, size_t i)
{
    if (!cJSON_IsArray(pt) || cJSON_GetArraySize(pt) != 2)
        return jerr(j, TB_ERR_PARSE, "expected a [time, speed factor] pair, got %s",
                    cJSON_IsArray(pt) ? "an array of another length" : tb__json_kind(pt));
    TB_CHECK(jtrace_time(j, pt->child, tr, i));
    size_t old = jpush(j, "[1]");
    TB_CHECK(jnumber(j, pt->child->next, "a speed factor", &tr->factor[i]));
    if (tr->factor[i] < 0)
        return jerr(j, TB_ERR_RANGE, "negative speed factor, got %g", tr->factor[i]);
    if (pt->next == NULL && !(tr->factor[i] > 0))
        return jerr(j, TB_ERR_RANGE, "the last speed factor must be positive");
    jpop(j, old);
    return TB_OK;
}

static int jtrace_parse(jctx *j, const cJSON *v, jtrace *tr)
{
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
    if (n == 0)
        return jerr(j, TB_ERR_PARSE, "expected a non-empty array of [time, speed factor] pairs, "
                    "got %s", tb__json_kind(v));
    tr->time = malloc((size_t)n * sizeof *tr->time);
    tr->factor = malloc((size_t)n * sizeof *tr->factor);
    if (tr->time == NULL || tr->factor == NULL)
        return TB_ERR_NOMEM;
    tr->n = (size_t)n;
    size_t i = 0;
    for (const cJSON *pt = v->child; pt != NULL; pt = pt->next, i++) {
        size_t old = jpush(j, "[%zu]", i);
        TB_CHECK(jtrace_point(j, pt, tr, i));
        jpop(j, old);
    }
    return TB_OK;
}

/* ---- hosts ---- */

/* "load" or "trace" of obj replace both inherited ones. */
static int jspeed_model(jctx *j, const cJSON *obj, tb__model_tmpl *t, jtrace *tr)
{
    const cJSON *load = cJSON_GetObjectItemCaseSensitive(obj, "load");
    const cJSON *trace = cJSON_GetObjectItemCaseSensitive(obj, "trace");
    if (load != NULL && trace != NULL)
        return jerr(j, TB_ERR_PARSE, "keys 'load' and 'trace' exclude each other");
    size_t old;
    if (jmember(j, obj, "load", &old) != NULL) {
        TB_CHECK(jtime(j, load, &t->load));
        if (!(t->load >= TB__MODEL_LOAD_MIN))
            return jerr(j, TB_ERR_RANGE, "expected a time of at least 1ns, got %g", t->load);
        t->ntrace = 0;
        jpop(j, old);
    }
    if (jmember(j, obj, "trace", &old) != NULL) {
        TB_CHECK(jtrace_parse(j, trace, tr));
        t->ntrace = tr->n;
        t->trace_time = tr->time;
        t->trace_factor = tr->factor;
        t->load = 0;
        jpop(j, old);
    }
    return TB_OK;
}

/* cores, speed, load, trace of obj over the inherited values in t. */
static int jtmpl(jctx *j, const cJSON *obj, tb__model_tmpl *t, jtrace *tr)
{
    size_t old;
    const cJSON *v;
    if ((v = jmember(j, obj, "cores", &old)) != NULL) {
        long cores;
        TB_CHECK(jcount(j, v, TB__MODEL_MAX_CORES, &cores));
        t->cores = (int)cores;
        jpop(j, old);
    }
    if ((v = jmember(j, obj, "speed", &old)) != NULL) {
        TB_CHECK(jspeed(j, v, &t->speed_lo, &t->speed_hi));
        jpop(j, old);
    }
    return jspeed_model(j, obj, t, tr);
}

static int jadd_host(jctx *j, const tb__model_tmpl *t, int cluster, const char *name)
{
    tb_platform *p = j->p;
    if (p->nhosts >= (size_t)TB__MODEL_MAX_HOSTS)
        return jerr(j, TB_ERR_RANGE, "more than %ld hosts in the platform", TB__MODEL_MAX_HOSTS);
    if (p->nhosts == j->hcap) {
        size_t cap = j->hcap ? 2 * j->hcap : 16;
        tb_host *h = realloc(p->hosts, cap * sizeof *h);
        if (h == NULL)
            return TB_ERR_NOMEM;
        p->hosts = h;
        j->hcap = cap;
    }
    tb_host *h = &p->hosts[p->nhosts++];
    return tb__model_fill_host(h, t, &j->rng, cluster, name);
}

/* Default host name: the cluster's name and the index in the cluster. */
static void host_name(char *name, size_t n, const char *cluster, size_t i)
{
    if (snprintf(name, n, "%s-%zu", cluster, i) >= (int)n)
        name[n - 1] = '\0';
}

static int jhost_obj(jctx *j, const cJSON *h, const tb__model_tmpl *ct, int c, size_t i)
{
    static const char *const keys[] = {"name", "cores", "speed", "load", "trace", NULL};
    TB_CHECK(jcheck_keys(j, h, keys, "name, cores, speed, load, trace"));
    char name[32];
    host_name(name, sizeof name, j->p->clusters[c].name, i);
    tb__model_tmpl t = *ct;
    jtrace tr = {0};
    int rc = jopt_name(j, h, name);
    if (rc == TB_OK)
        rc = jtmpl(j, h, &t, &tr);
    if (rc == TB_OK)
        rc = jadd_host(j, &t, c, name);
    jtrace_free(&tr);
    return rc;
}

static int jhosts_list(jctx *j, const cJSON *v, const tb__model_tmpl *t, int c)
{
    if (cJSON_GetArraySize(v) == 0)
        return jerr(j, TB_ERR_RANGE, "expected at least one host");
    size_t i = 0;
    for (const cJSON *h = v->child; h != NULL; h = h->next, i++) {
        size_t old = jpush(j, "[%zu]", i);
        TB_CHECK(jhost_obj(j, h, t, c, i));
        jpop(j, old);
    }
    return TB_OK;
}

static int jhosts(jctx *j, const cJSON *cl, const tb__model_tmpl *t, int c)
{
    size_t old;
    const cJSON *v = jmember(j, cl, "hosts", &old);
    if (v == NULL)
        return jerr(j, TB_ERR_PARSE, "missing key 'hosts'");
    if (cJSON_IsArray(v)) {
        TB_CHECK(jhosts_list(j, v, t, c));
    } else if (cJSON_IsNumber(v)) {
        long n;
        TB_CHECK(jcount(j, v, TB__MODEL_MAX_HOSTS, &n));
        for (long i = 0; i < n; i++) {
            char name[32];
            host_name(name, sizeof name, j->p->clusters[c].name, (size_t)i);
            TB_CHECK(jadd_host(j, t, c, name));
        }
    } else {
        return jerr(j, TB_ERR_PARSE, "expected a positive integer or an array of hosts, got %s",
                    tb__json_kind(v));
    }
    jpop(j, old);
    return TB_OK;
}

/* ---- clusters, wan, the document ---- */

/* "netgauge": FILE (relative to the platform file's directory) sets *n. */
static int jnetgauge(jctx *j, const cJSON *net, tb_loggps *n)
{
    size_t old;
    const cJSON *v = jmember(j, net, "netgauge", &old);
    if (v == NULL)
        return TB_OK;
    if (!cJSON_IsString(v) || v->valuestring[0] == '\0')
        return jerr(j, TB_ERR_PARSE, "expected a file name, got %s", tb__json_kind(v));
    const char *slash = strrchr(j->file, '/');
    int dir = v->valuestring[0] == '/' || slash == NULL ? 0 : (int)(slash - j->file) + 1;
    size_t len = (size_t)dir + strlen(v->valuestring) + 1;
    char *path = malloc(len), msg[TB__MODEL_WHY];
    if (path == NULL)
        return TB_ERR_NOMEM;
    snprintf(path, len, "%.*s%s", dir, j->file, v->valuestring);
    int rc = tb_loggps_read_netgauge(path, n, msg, sizeof msg);
    free(path);
    if (rc != TB_OK)
        return jerr(j, rc, "%s", msg);
    jpop(j, old);
    return TB_OK;
}

static int jnet(jctx *j, const cJSON *cl, tb_loggps *n)
{
    static const char *const keys[] = {"L", "o", "os", "or", "ob", "O", "g", "G", "S",
                                       "netgauge", NULL};
    size_t old;
    const cJSON *v = jmember(j, cl, "network", &old);
    if (v == NULL)
        return TB_OK;
    TB_CHECK(jcheck_keys(j, v, keys, "L, o, os, or, ob, O, g, G, S, netgauge"));
    TB_CHECK(jnetgauge(j, v, n)); /* first: the keys below override it */
    double o = -1;
    TB_CHECK(jopt_time(j, v, "o", &o));
    if (o >= 0)
        n->os = n->or_ = o; /* os and or, read next, win over o */
    TB_CHECK(jopt_time(j, v, "L", &n->L));
    TB_CHECK(jopt_time(j, v, "os", &n->os));
    TB_CHECK(jopt_time(j, v, "or", &n->or_));
    TB_CHECK(jopt_time(j, v, "ob", &n->ob));
    TB_CHECK(jopt_time(j, v, "O", &n->O));
    TB_CHECK(jopt_time(j, v, "g", &n->g));
    TB_CHECK(jopt_time(j, v, "G", &n->G));
    TB_CHECK(jopt_bytes(j, v, "S", &n->S));
    jpop(j, old);
    return TB_OK;
}

static int jcluster(jctx *j, const cJSON *cl, int c)
{
    static const char *const keys[] = {"name", "hosts", "cores", "speed", "load",
                                       "trace", "network", "uplink", NULL};
    TB_CHECK(jcheck_keys(j, cl, keys, "name, hosts, cores, speed, load, trace, network, uplink"));
    tb_cluster *C = &j->p->clusters[c];
    snprintf(C->name, sizeof C->name, "c%d", c);
    tb__model_net_defaults(&C->net);
    C->uplink_L = 0;
    TB_CHECK(jopt_name(j, cl, C->name));
    TB_CHECK(jnet(j, cl, &C->net));
    TB_CHECK(jopt_time(j, cl, "uplink", &C->uplink_L));
    tb__model_tmpl t;
    tb__model_tmpl_defaults(&t);
    jtrace tr = {0};
    int rc = jtmpl(j, cl, &t, &tr);
    if (rc == TB_OK)
        rc = jhosts(j, cl, &t, c);
    jtrace_free(&tr);
    return rc;
}

static int jclusters(jctx *j, const cJSON *cls)
{
    size_t old = jpush_key(j, "clusters");
    int c = 0;
    for (const cJSON *cl = cls->child; cl != NULL; cl = cl->next, c++) {
        size_t o2 = jpush(j, "[%d]", c);
        TB_CHECK(jcluster(j, cl, c));
        jpop(j, o2);
    }
    jpop(j, old);
    return TB_OK;
}

static int jwan(jctx *j, const cJSON *root)
{
    static const char *const keys[] = {"L", "G", NULL};
    size_t old;
    const cJSON *v = jmember(j, root, "wan", &old);
    if (v == NULL && j->p->nclusters > 1)
        return jerr(j, TB_ERR_PARSE, "missing key 'wan' (required with more than one cluster)");
    if (v == NULL)
        return TB_OK;
    TB_CHECK(jcheck_keys(j, v, keys, "L, G"));
    TB_CHECK(jopt_time(j, v, "L", &j->p->wan.L));
    TB_CHECK(jopt_time(j, v, "G", &j->p->wan.G));
    jpop(j, old);
    return TB_OK;
}

static int jroot(jctx *j, const cJSON *root, uint64_t seed)
{
    static const char *const keys[] = {"clusters", "wan", NULL};
    if (!cJSON_IsObject(root))
        return jerr(j, TB_ERR_PARSE, "expected an object at the top level, got %s", tb__json_kind(root));
    TB_CHECK(jcheck_keys(j, root, keys, "clusters, wan"));
    const cJSON *cls = cJSON_GetObjectItemCaseSensitive(root, "clusters");
    if (cls == NULL)
        return jerr(j, TB_ERR_PARSE, "missing key 'clusters'");
    int n = cJSON_IsArray(cls) ? cJSON_GetArraySize(cls) : 0;
    if (n == 0) {
        jpush_key(j, "clusters");
        return jerr(j, TB_ERR_PARSE, "expected a non-empty array of clusters, got %s", tb__json_kind(cls));
    }
    TB_CHECK(tb__model_alloc(&j->p, 0, (size_t)n, seed));
    TB_CHECK(jclusters(j, cls));
    return jwan(j, root);
}

int tb__model_from_json(const void *root, const char *file, uint64_t seed, tb_platform **out,
                        char *err, size_t errlen)
{
    jctx j = {.file = file, .err = err, .errlen = errlen};
    tb_rng_seed_stream(&j.rng, seed, 0);
    int rc = jroot(&j, root, seed);
    if (rc != TB_OK) {
        tb_platform_destroy(&j.p);
        return rc;
    }
    *out = j.p;
    return TB_OK;
}

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

static void line_col(const char *text, size_t pos, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < pos; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

int tb_platform_load(const char *path, uint64_t seed, tb_platform **out, char *err,
                     size_t errlen)
{
    if (path == NULL || out == NULL)
        return TB_ERR_INVALID;
    *out = NULL;
    char *text;
    size_t len;
    TB_CHECK(tb_read_file(path, TB__MODEL_MAX_FILE, &text, &len, err, errlen));
    const char *end = text;
    /* The length includes the NUL: cJSON checks for it after the value. */
    cJSON *root = len ? cJSON_ParseWithLengthOpts(text, len + 1, &end, 1) : NULL;
    int rc = TB_OK;
    if (len == 0) {
        rc = tb__errf(err, errlen, TB_ERR_PARSE, "%s: empty file", path);
    } else if (root == NULL) {
        int line, col;
        line_col(text, (size_t)(end - text), &line, &col);
        rc = tb__errf(err, errlen, TB_ERR_PARSE, "%s:%d:%d: JSON syntax error", path, line, col);
    } else {
        rc = tb__model_from_json(root, path, seed, out, err, errlen);
    }
    cJSON_Delete(root);
    free(text);
    return rc;
}

int tb_platform_open(const char *arg, uint64_t seed, tb_platform **out, char *err, size_t errlen)
{
    if (arg == NULL || out == NULL)
        return TB_ERR_INVALID;
    struct stat st;
    if (stat(arg, &st) == 0)
        return tb_platform_load(arg, seed, out, err, errlen);
    int e = errno;
    if (arg[0] != '\0' && strchr(arg, '=') == NULL) {
        *out = NULL;
        return tb__errf(err, errlen, TB_ERR_IO,
                        "%s: not a platform file (%s) nor a spec (key=value,...)", arg,
                        strerror(e));
    }
    return tb_platform_parse_spec(arg, seed, out, err, errlen);
}

/* ------------------------------------------------------------------ */
/* Placement and LogGPS                                                */
/* ------------------------------------------------------------------ */

size_t tb_platform_cores(const tb_platform *p)
{
    size_t n = 0;
    for (size_t i = 0; p != NULL && i < p->nhosts; i++)
        n += (size_t)p->hosts[i].cores;
    return n;
}

long tb_platform_host_of(const tb_platform *p, long rank)
{
    if (p == NULL || rank < 0)
        return -1;
    for (size_t i = 0; i < p->nhosts; i++) {
        if (rank < p->hosts[i].cores)
            return (long)i;
        rank -= p->hosts[i].cores;
    }
    return -1;
}

double tb_loggps_send_overhead(const tb_loggps *n, int P, size_t bytes)
{
    return n->os + n->ob * (double)P + n->O * (double)bytes;
}

double tb_loggps_recv_overhead(const tb_loggps *n, int P, size_t bytes)
{
    return n->or_ + n->ob * (double)P + n->O * (double)bytes;
}

/* L and G of the link between two clusters. */
static void link_of(const tb_platform *p, int src_cluster, int dst_cluster, double *L, double *G)
{
    const tb_loggps *n = &p->clusters[src_cluster].net;
    int same = src_cluster == dst_cluster;
    *L = same ? n->L
              : p->wan.L + p->clusters[src_cluster].uplink_L + p->clusters[dst_cluster].uplink_L;
    *G = same ? n->G : p->wan.G;
}

/* (k-1)G: the bytes after the first, none for an empty message. */
static double bytes_time(size_t bytes, double G)
{
    return bytes > 0 ? (double)(bytes - 1) * G : 0.0;
}

void tb_net_send(const tb_platform *p, int P, int src_cluster, int dst_cluster, int self,
                 size_t bytes, double clock, double link_free, tb_netmsg *out)
{
    const tb_loggps *n = &p->clusters[src_cluster].net;
    double L, G;
    link_of(p, src_cluster, dst_cluster, &L, &G);
    double start = clock;
    if (!self && start < link_free)
        start = link_free;
    out->start = start;
    out->send_end = start + tb_loggps_send_overhead(n, P, bytes);
    out->rendezvous = !self && (double)bytes > n->S;
    out->arrival = out->send_end + (self ? 0.0 : L);
    if (!self && !out->rendezvous)
        out->arrival += bytes_time(bytes, G);
    out->link_free = self ? link_free : start + n->g + bytes_time(bytes, G);
}

/* The first span that ends after t (strictly, or at t too when `at`): the
 * spans are ascending and disjoint, so their ends ascend too.  A binary
 * search: a link keeps up to TB_NET_SPANS of them, and a linear scan read
 * them all for every message (at thousands of ranks, misses). */
static int span_after(const tb_netlink *l, double t, int at)
{
    int lo = 0, hi = l->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (l->span[mid].to < t || (!at && l->span[mid].to == t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Mark from..to busy on the link: the union with its spans, merging those it
 * touches; with TB_NET_SPANS spans kept, the oldest is forgotten. */
static void link_hold(tb_netlink *l, double from, double to)
{
    if (!(to > from))
        return;
    tb_netspan *sp = l->span;
    int i = span_after(l, from, 1); /* the first with to >= from */
    int j = i;
    while (j < l->n && sp[j].from <= to) {
        if (sp[j].from < from)
            from = sp[j].from;
        if (sp[j].to > to)
            to = sp[j].to;
        j++;
    }
    if (j > i) { /* spans i..j-1 become one */
        sp[i] = (tb_netspan){from, to};
        memmove(&sp[i + 1], &sp[j], (size_t)(l->n - j) * sizeof *sp);
        l->n -= j - i - 1;
        return;
    }
    if (l->n == TB_NET_SPANS) { /* full: forget the oldest (maybe this one) */
        if (i == 0)
            return;
        memmove(&sp[0], &sp[1], (size_t)(l->n - 1) * sizeof *sp);
        l->n--;
        i--;
    }
    memmove(&sp[i + 1], &sp[i], (size_t)(l->n - i) * sizeof *sp);
    sp[i] = (tb_netspan){from, to};
    l->n++;
}

void tb_net_forget(tb_netlink *l, double t)
{
    int k = 0;
    while (k < l->n && l->span[k].to < t)
        k++;
    if (k > 0) {
        memmove(&l->span[0], &l->span[k], (size_t)(l->n - k) * sizeof l->span[0]);
        l->n -= k;
    }
}

double tb_net_need_max(const tb_platform *p)
{
    double g = 0.0, bytes = 0.0;
    for (size_t c = 0; c < p->nclusters; c++) {
        const tb_loggps *n = &p->clusters[c].net;
        if (n->g > g)
            g = n->g;
        /* an eager message has at most S bytes: (S-1)G over its own
         * cluster's network or the wide-area link */
        double k1 = n->S > 1.0 ? n->S - 1.0 : 0.0;
        double G = p->nclusters > 1 && p->wan.G > n->G ? p->wan.G : n->G;
        if (G > 0.0 && k1 * G > bytes) /* S infinite: INFINITY */
            bytes = k1 * G;
    }
    return g + bytes;
}

/* A message that needs the link for `need` and would be through at `arrival`
 * on a free link: when it is through, given the busy spans (each span that
 * overlaps the time it needs pushes it back by the span's length after its
 * first possible moment).  Exactly `arrival` when nothing overlaps. */
static double link_through(const tb_netlink *l, double arrival, double need)
{
    double first = arrival - need, in = arrival, delay = 0.0;
    /* Spans that end by `first` add nothing (and start before `in`). */
    for (int i = span_after(l, first, 0); i < l->n && l->span[i].from < in; i++) {
        const tb_netspan *sp = &l->span[i];
        if (sp->to <= first)
            continue;
        delay += sp->to - (sp->from > first ? sp->from : first);
        in = arrival + delay;
    }
    return in;
}

void tb_net_recv(const tb_platform *p, int P, int src_cluster, int dst_cluster, int self,
                 size_t bytes, int rendezvous, double clock, double arrival, tb_netlink *link,
                 tb_netrecv *out)
{
    out->in = arrival;
    if (!self) {
        double L, G;
        link_of(p, src_cluster, dst_cluster, &L, &G);
        double g = p->clusters[dst_cluster].net.g;
        double need = g + (rendezvous ? 0.0 : bytes_time(bytes, G));
        out->in = link_through(link, arrival, need);
        link_hold(link, arrival - need, out->in); /* what it used, and what it skipped */
        out->taken = clock > out->in ? clock : out->in;
        if (rendezvous) {
            double data = out->taken + 2.0 * L;
            link_hold(link, data, data + bytes_time(bytes, G));
        }
    } else {
        out->taken = clock > arrival ? clock : arrival;
    }
    out->end = out->taken + tb_net_recv_cost(p, P, src_cluster, dst_cluster, bytes, rendezvous);
}

double tb_net_recv_cost(const tb_platform *p, int P, int src_cluster, int dst_cluster,
                        size_t bytes, int rendezvous)
{
    double cost = tb_loggps_recv_overhead(&p->clusters[dst_cluster].net, P, bytes);
    if (rendezvous) {
        double L, G;
        link_of(p, dst_cluster, src_cluster, &L, &G);
        cost += 2.0 * L + bytes_time(bytes, G);
    }
    return cost;
}

double tb_net_rdv_send_end(const tb_platform *p, int src_cluster, int dst_cluster, size_t bytes,
                           double taken)
{
    double L, G;
    link_of(p, src_cluster, dst_cluster, &L, &G);
    return taken + L + bytes_time(bytes, G);
}

double tb_net_lookahead(const tb_platform *p, int P)
{
    double o = INFINITY, L = p->nclusters > 1 ? p->wan.L : INFINITY;
    for (size_t c = 0; c < p->nclusters; c++) {
        double oc = tb_loggps_send_overhead(&p->clusters[c].net, P, 0);
        if (oc < o)
            o = oc;
        if (p->clusters[c].net.L < L)
            L = p->clusters[c].net.L;
    }
    return o + L;
}
