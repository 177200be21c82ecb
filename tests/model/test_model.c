/*
 * test_model.c - unit tests of the platform model: specs, JSON platform
 * files, rank placement, LogGPS overheads and the speed cursor.
 * Run with no argument for all tests, or with a test name.
 */
#define _POSIX_C_SOURCE 200809L

#include "tenbin/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tb_test.h"

/* ---------------------------------------------------------------- */
/* Helpers                                                           */
/* ---------------------------------------------------------------- */


/* Writes text to the scratch file `name`; path gets its path. */
static int write_text(const char *name, const char *text, char *path, size_t n)
{
    tb_test_path(path, n, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    size_t len = strlen(text);
    int ok = fwrite(text, 1, len, f) == len;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

static tb_platform *spec_ok(const char *spec, uint64_t seed)
{
    char err[512] = "";
    tb_platform *p = NULL;
    int rc = tb_platform_parse_spec(spec, seed, &p, err, sizeof err);
    if (rc != TB_OK)
        printf("    spec '%s': %s\n", spec, err);
    return p;
}

/* A one-host platform with a piecewise speed (speeds absolute). */
typedef struct trace_plat {
    tb_platform p;
    tb_host h;
    tb_cluster c;
} trace_plat;

static void make_trace(trace_plat *tp, size_t n, double *time, double *speed)
{
    memset(tp, 0, sizeof *tp);
    tp->h.speed = 1;
    tp->h.cores = 1;
    tp->h.kind = TB_SPEED_TRACE;
    tp->h.ntrace = n;
    tp->h.trace_time = time;
    tp->h.trace_speed = speed;
    tp->p.nhosts = 1;
    tp->p.hosts = &tp->h;
    tp->p.nclusters = 1;
    tp->p.clusters = &tp->c;
}

/* ---------------------------------------------------------------- */
/* Specs                                                             */
/* ---------------------------------------------------------------- */

static void test_spec_basic(void)
{
    tb_platform *p = spec_ok("hosts=16,speed=1,L=50us,os=10us,or=10us,g=0,G=8ns,S=65536", 42);
    TB_ASSERT(p != NULL);
    TB_ASSERT_EQ_INT(p->nhosts, 16);
    TB_ASSERT_EQ_INT(p->nclusters, 1);
    TB_ASSERT_EQ_U64(p->seed, 42);
    const tb_loggps *n = &p->clusters[0].net;
    TB_ASSERT(n->L == 50 * 1e-6);
    TB_ASSERT(n->os == 10 * 1e-6);
    TB_ASSERT(n->or_ == 10 * 1e-6);
    TB_ASSERT(n->g == 0);
    TB_ASSERT(n->G == 8 * 1e-9);
    TB_ASSERT(n->S == 65536);
    TB_ASSERT(n->ob == 0 && n->O == 0);
    TB_ASSERT_STR_EQ(p->clusters[0].name, "c0");
    TB_ASSERT_STR_EQ(p->hosts[0].name, "h0");
    TB_ASSERT_STR_EQ(p->hosts[15].name, "h15");
    for (size_t i = 0; i < p->nhosts; i++) {
        TB_ASSERT(p->hosts[i].speed == 1);
        TB_ASSERT_EQ_INT(p->hosts[i].cores, 1);
        TB_ASSERT_EQ_INT(p->hosts[i].cluster, 0);
        TB_ASSERT_EQ_INT(p->hosts[i].kind, TB_SPEED_CONSTANT);
    }
    /* Only L and G of the WAN are used; they default to the cluster's. */
    TB_ASSERT(p->wan.L == n->L && p->wan.G == n->G);
    tb_platform_destroy(&p);
    TB_ASSERT(p == NULL);
    tb_platform_destroy(&p);
}

static void test_spec_defaults(void)
{
    tb_platform *p = spec_ok("hosts=3", 1);
    TB_ASSERT(p != NULL);
    const tb_loggps *n = &p->clusters[0].net;
    TB_ASSERT(n->L == 0 && n->os == 0 && n->or_ == 0 && n->ob == 0 && n->O == 0);
    TB_ASSERT(n->g == 0 && n->G == 0 && n->S == 65536);
    TB_ASSERT(p->hosts[2].speed == 1 && p->hosts[2].cores == 1);
    TB_ASSERT_EQ_INT(p->hosts[2].kind, TB_SPEED_CONSTANT);
    tb_platform_destroy(&p);
}

static void test_spec_units(void)
{
    tb_platform *p = spec_ok("hosts=1,L=2s,os=3ms,or=4,ob=5ns,O=6us,g=7us,G=1e-3ms,S=100", 1);
    TB_ASSERT(p != NULL);
    const tb_loggps *n = &p->clusters[0].net;
    TB_ASSERT(n->L == 2.0);
    TB_ASSERT(n->os == 3 * 1e-3);
    TB_ASSERT(n->or_ == 4.0);
    TB_ASSERT(n->ob == 5 * 1e-9);
    TB_ASSERT(n->O == 6 * 1e-6);
    TB_ASSERT(n->g == 7 * 1e-6);
    TB_ASSERT(n->G == 1e-3 * 1e-3);
    TB_ASSERT(n->S == 100);
    tb_platform_destroy(&p);
    /* Blanks around items, keys and values are allowed. */
    p = spec_ok(" hosts = 4 , L = 50us ", 1);
    TB_ASSERT(p != NULL);
    TB_ASSERT_EQ_INT(p->nhosts, 4);
    TB_ASSERT(p->clusters[0].net.L == 50 * 1e-6);
    tb_platform_destroy(&p);
}

static void test_spec_o(void)
{
    tb_platform *p = spec_ok("hosts=2,o=12us", 1);
    TB_ASSERT(p != NULL);
    TB_ASSERT(p->clusters[0].net.os == 12 * 1e-6);
    TB_ASSERT(p->clusters[0].net.or_ == 12 * 1e-6);
    tb_platform_destroy(&p);
    /* os and or win over o, whatever the order. */
    p = spec_ok("or=1us,o=12us,hosts=2", 1);
    TB_ASSERT(p != NULL);
    TB_ASSERT(p->clusters[0].net.os == 12 * 1e-6);
    TB_ASSERT(p->clusters[0].net.or_ == 1 * 1e-6);
    tb_platform_destroy(&p);
}

static void test_spec_speed(void)
{
    tb_platform *p = spec_ok("hosts=2,speed=2.5", 1);
    TB_ASSERT(p != NULL);
    TB_ASSERT(p->hosts[0].speed == 2.5 && p->hosts[1].speed == 2.5);
    tb_platform_destroy(&p);
    /* An exponent's minus is not a range. */
    p = spec_ok("hosts=1,speed=1e-3", 1);
    TB_ASSERT(p != NULL);
    TB_ASSERT(p->hosts[0].speed == 1e-3);
    tb_platform_destroy(&p);
    p = spec_ok("hosts=8,speed=1e-3-2e-3", 1);
    TB_ASSERT(p != NULL);
    for (size_t i = 0; i < p->nhosts; i++)
        TB_ASSERT(p->hosts[i].speed >= 1e-3 && p->hosts[i].speed < 2e-3);
    tb_platform_destroy(&p);
    p = spec_ok("hosts=3,speed=2-2", 1);
    TB_ASSERT(p != NULL);
    TB_ASSERT(p->hosts[2].speed == 2);
    tb_platform_destroy(&p);
}

static void test_spec_speed_range(void)
{
    tb_platform *a = spec_ok("hosts=64,speed=1-5", 1);
    tb_platform *b = spec_ok("hosts=64,speed=1-5", 1);
    tb_platform *c = spec_ok("hosts=64,speed=1-5", 2);
    TB_ASSERT(a != NULL && b != NULL && c != NULL);
    /* Known answer: stream 0 of the seed, drawn in host order. */
    tb_rng rng;
    tb_rng_seed_stream(&rng, 1, 0);
    int differ = 0, spread = 0;
    for (size_t i = 0; i < 64; i++) {
        double s = a->hosts[i].speed;
        TB_ASSERT(s >= 1 && s < 5);
        TB_ASSERT(s == tb_rng_uniform(&rng, 1, 5));
        TB_ASSERT(s == b->hosts[i].speed);
        differ += s != c->hosts[i].speed;
        spread += s != a->hosts[0].speed;
    }
    TB_ASSERT(differ > 60);
    TB_ASSERT(spread > 60);
    tb_platform_destroy(&a);
    tb_platform_destroy(&b);
    tb_platform_destroy(&c);
}

static void test_spec_clusters(void)
{
    tb_platform *p = spec_ok("hosts=16,clusters=2,L=50us,G=8ns", 1);
    TB_ASSERT(p != NULL);
    TB_ASSERT_EQ_INT(p->nclusters, 2);
    TB_ASSERT_STR_EQ(p->clusters[1].name, "c1");
    for (size_t i = 0; i < 16; i++)
        TB_ASSERT_EQ_INT(p->hosts[i].cluster, i < 8 ? 0 : 1);
    TB_ASSERT(p->clusters[1].net.L == 50 * 1e-6);
    TB_ASSERT(p->wan.L == 50 * 1e-6 && p->wan.G == 8 * 1e-9);
    tb_platform_destroy(&p);
    p = spec_ok("hosts=10,clusters=3,wan-L=10ms,wan-G=80ns", 1);
    TB_ASSERT(p != NULL);
    int count[3] = {0, 0, 0};
    for (size_t i = 0; i < 10; i++)
        count[p->hosts[i].cluster]++;
    TB_ASSERT(count[0] == 3 && count[1] == 3 && count[2] == 4);
    TB_ASSERT(p->wan.L == 10 * 1e-3 && p->wan.G == 80 * 1e-9);
    tb_platform_destroy(&p);
}

static void test_spec_load_cores(void)
{
    tb_platform *p = spec_ok("hosts=4,cores=2,load=10s,speed=3", 1);
    TB_ASSERT(p != NULL);
    TB_ASSERT_EQ_INT(tb_platform_cores(p), 8);
    for (size_t i = 0; i < 4; i++) {
        TB_ASSERT_EQ_INT(p->hosts[i].kind, TB_SPEED_LOAD);
        TB_ASSERT(p->hosts[i].lambda == 1.0 / 10.0);
        TB_ASSERT(p->hosts[i].speed == 3);
        TB_ASSERT_EQ_INT(p->hosts[i].cores, 2);
    }
    tb_platform_destroy(&p);
}

typedef struct spec_case {
    const char *spec;
    int rc;
    const char *msg;
} spec_case;

static const spec_case spec_errors[] = {
    {"hosts=4,foo=1", TB_ERR_PARSE,
     "spec: unknown key 'foo' (keys: hosts, cores, speed, clusters, L, o, os, or, ob, O, g, G, "
     "S, wan-L, wan-G, load, netgauge)"},
    {"hosts=4,hosts=5", TB_ERR_PARSE, "spec: key 'hosts' given twice"},
    {"hosts=4,L", TB_ERR_PARSE, "spec: expected key=value, got 'L'"},
    {"hosts=4,,L=1", TB_ERR_PARSE, "spec: expected key=value, got ''"},
    {"hosts=4,L=-5us", TB_ERR_RANGE, "spec: key 'L': negative time, got '-5us'"},
    {"hosts=4,G=-1", TB_ERR_RANGE, "spec: key 'G': negative time, got '-1'"},
    {"hosts=4,L=5xs", TB_ERR_PARSE,
     "spec: key 'L': unknown unit 'xs' in '5xs' (use ns, us, ms or s)"},
    {"hosts=4,o=us", TB_ERR_PARSE, "spec: key 'o': expected a time, got 'us'"},
    {"hosts=4,L=", TB_ERR_PARSE, "spec: key 'L': expected a time, got ''"},
    {"hosts=0", TB_ERR_RANGE, "spec: key 'hosts': expected a positive integer, got '0'"},
    {"hosts=x", TB_ERR_PARSE, "spec: key 'hosts': expected a positive integer, got 'x'"},
    {"hosts=99999999", TB_ERR_RANGE,
     "spec: key 'hosts': expected a positive integer at most 16777216, got '99999999'"},
    {"hosts=2,cores=-1", TB_ERR_RANGE, "spec: key 'cores': expected a positive integer, got '-1'"},
    {"", TB_ERR_PARSE, "spec: empty (expected key=value,..., e.g. hosts=16,speed=1)"},
    {"  ", TB_ERR_PARSE, "spec: empty (expected key=value,..., e.g. hosts=16,speed=1)"},
    {"hosts=4,speed=5-1", TB_ERR_RANGE,
     "spec: key 'speed': range lower bound above upper bound, got '5-1'"},
    {"hosts=4,speed=0", TB_ERR_RANGE, "spec: key 'speed': expected a positive speed, got '0'"},
    {"hosts=4,speed=fast", TB_ERR_PARSE,
     "spec: key 'speed': expected a positive speed or a range a-b, got 'fast'"},
    {"speed=2", TB_ERR_PARSE, "spec: key 'hosts' is required"},
    {"hosts=2,clusters=3", TB_ERR_RANGE,
     "spec: key 'clusters': 3 clusters for 2 hosts (each cluster needs a host)"},
    {"hosts=4,S=-1", TB_ERR_RANGE, "spec: key 'S': negative size, got '-1'"},
    {"hosts=4,S=big", TB_ERR_PARSE, "spec: key 'S': expected a number of bytes, got 'big'"},
    {"hosts=4,load=0", TB_ERR_RANGE, "spec: key 'load': expected a time of at least 1ns, got '0'"},
    {NULL, 0, NULL}};

static void test_spec_errors(void)
{
    for (const spec_case *c = spec_errors; c->spec != NULL; c++) {
        char err[512] = "";
        tb_platform *p = (tb_platform *)&err; /* must come back NULL */
        int rc = tb_platform_parse_spec(c->spec, 1, &p, err, sizeof err);
        if (rc != c->rc)
            printf("    spec '%s': %s\n", c->spec, err);
        TB_ASSERT_EQ_INT(rc, c->rc);
        TB_ASSERT(p == NULL);
        TB_ASSERT_STR_EQ(err, c->msg);
        /* No message buffer, or a short one, is fine. */
        TB_ASSERT_EQ_INT(tb_platform_parse_spec(c->spec, 1, &p, NULL, 0), c->rc);
        char small[8];
        TB_ASSERT_EQ_INT(tb_platform_parse_spec(c->spec, 1, &p, small, sizeof small), c->rc);
        TB_ASSERT_EQ_INT(strlen(small), 7);
    }
    tb_platform *p = NULL;
    TB_ASSERT_EQ_INT(tb_platform_parse_spec(NULL, 1, &p, NULL, 0), TB_ERR_PARSE);
    TB_ASSERT_EQ_INT(tb_platform_parse_spec("hosts=1", 1, NULL, NULL, 0), TB_ERR_INVALID);
}

/* ---------------------------------------------------------------- */
/* JSON files                                                        */
/* ---------------------------------------------------------------- */

static const char valid_json[] =
    "{\n"
    "  \"clusters\": [\n"
    "    {\"name\": \"a\", \"hosts\": 4, \"cores\": 2, \"speed\": \"1-5\",\n"
    "     \"network\": {\"L\": \"50us\", \"o\": \"10us\", \"or\": 2e-6, \"ob\": \"1ns\",\n"
    "                 \"O\": \"2ns\", \"g\": \"3us\", \"G\": \"8ns\", \"S\": 1024}},\n"
    "    {\"name\": \"b\", \"speed\": 2, \"load\": \"10s\",\n"
    "     \"hosts\": [{\"name\": \"fast\", \"speed\": 4, \"cores\": 3},\n"
    "               {},\n"
    "               {\"trace\": [[0, 1], [\"10s\", 0.5], [20, 0], [\"30s\", 1.5]]}]}\n"
    "  ],\n"
    "  \"wan\": {\"L\": \"10ms\", \"G\": \"80ns\"}\n"
    "}\n";

static void test_json_valid(void)
{
    char path[1024], err[512] = "";
    TB_ASSERT(write_text("valid.json", valid_json, path, sizeof path) == 0);
    tb_platform *p = NULL;
    int rc = tb_platform_load(path, 9, &p, err, sizeof err);
    if (rc != TB_OK)
        printf("    %s\n", err);
    TB_ASSERT_OK(rc);
    TB_ASSERT_EQ_INT(p->nclusters, 2);
    TB_ASSERT_EQ_INT(p->nhosts, 7);
    TB_ASSERT_EQ_U64(p->seed, 9);
    TB_ASSERT_STR_EQ(p->clusters[0].name, "a");
    TB_ASSERT_STR_EQ(p->clusters[1].name, "b");
    const tb_loggps *n = &p->clusters[0].net;
    TB_ASSERT(n->L == 50 * 1e-6 && n->os == 10 * 1e-6 && n->or_ == 2e-6);
    TB_ASSERT(n->ob == 1 * 1e-9 && n->O == 2 * 1e-9 && n->g == 3 * 1e-6);
    TB_ASSERT(n->G == 8 * 1e-9 && n->S == 1024);
    TB_ASSERT(p->clusters[1].net.L == 0 && p->clusters[1].net.S == 65536);
    TB_ASSERT(p->wan.L == 10 * 1e-3 && p->wan.G == 80 * 1e-9);
    /* Cluster a: 4 hosts with drawn speeds, 2 cores, constant. */
    tb_rng rng;
    tb_rng_seed_stream(&rng, 9, 0);
    for (size_t i = 0; i < 4; i++) {
        const tb_host *h = &p->hosts[i];
        char name[8];
        snprintf(name, sizeof name, "a-%zu", i);
        TB_ASSERT_STR_EQ(h->name, name);
        TB_ASSERT(h->speed == tb_rng_uniform(&rng, 1, 5));
        TB_ASSERT(h->cores == 2 && h->cluster == 0 && h->kind == TB_SPEED_CONSTANT);
    }
    /* Cluster b: explicit hosts inheriting speed 2 and the load process. */
    const tb_host *h = &p->hosts[4];
    TB_ASSERT_STR_EQ(h->name, "fast");
    TB_ASSERT(h->speed == 4 && h->cores == 3 && h->cluster == 1);
    TB_ASSERT(h->kind == TB_SPEED_LOAD && h->lambda == 1.0 / 10.0);
    h = &p->hosts[5];
    TB_ASSERT_STR_EQ(h->name, "b-1");
    TB_ASSERT(h->speed == 2 && h->cores == 1 && h->kind == TB_SPEED_LOAD);
    /* A trace replaces the inherited load; its factors scale the base speed. */
    h = &p->hosts[6];
    TB_ASSERT_STR_EQ(h->name, "b-2");
    TB_ASSERT(h->kind == TB_SPEED_TRACE && h->ntrace == 4 && h->lambda == 0);
    TB_ASSERT(h->trace_time[0] == 0 && h->trace_time[1] == 10 && h->trace_time[2] == 20);
    TB_ASSERT(h->trace_time[3] == 30);
    TB_ASSERT(h->trace_speed[0] == 2 && h->trace_speed[1] == 1 && h->trace_speed[2] == 0);
    TB_ASSERT(h->trace_speed[3] == 3);
    TB_ASSERT_EQ_INT(tb_platform_cores(p), 4 * 2 + 3 + 1 + 1);
    tb_platform_destroy(&p);
    remove(path);
}

typedef struct json_case {
    const char *text;
    int rc;
    const char *msg; /* after "PATH" */
} json_case;

static const json_case json_errors[] = {
    {"{\n  \"clusters\": ,\n}", TB_ERR_PARSE, ":2:15: JSON syntax error"},
    {"", TB_ERR_PARSE, ": empty file"},
    {"[]", TB_ERR_PARSE, ": expected an object at the top level, got an empty array"},
    {"{}", TB_ERR_PARSE, ": missing key 'clusters'"},
    {"{\"clusters\": []}", TB_ERR_PARSE,
     ": clusters: expected a non-empty array of clusters, got an empty array"},
    {"{\"clusters\": [{\"hosts\": 2}], \"x\": 1}", TB_ERR_PARSE,
     ": x: unknown key (keys: clusters, wan)"},
    {"{\"clusters\": [{\"hosts\": 2, \"network\": {\"X\": 1}}]}", TB_ERR_PARSE,
     ": clusters[0].network.X: unknown key (keys: L, o, os, or, ob, O, g, G, S, netgauge)"},
    {"{\"clusters\": [{\"hosts\": 2, \"network\": {\"L\": \"-5us\"}}]}", TB_ERR_RANGE,
     ": clusters[0].network.L: negative time, got '-5us'"},
    {"{\"clusters\": [{\"hosts\": 2, \"network\": {\"G\": -0.5}}]}", TB_ERR_RANGE,
     ": clusters[0].network.G: negative time, got -0.5"},
    {"{\"clusters\": [{\"hosts\": 2, \"network\": {\"L\": true}}]}", TB_ERR_PARSE,
     ": clusters[0].network.L: expected a time (seconds, or a string like \"50us\"), got a "
     "boolean"},
    {"{\"clusters\": [{\"hosts\": \"4\"}]}", TB_ERR_PARSE,
     ": clusters[0].hosts: expected a positive integer or an array of hosts, got a string"},
    {"{\"clusters\": [{\"hosts\": 2.5}]}", TB_ERR_PARSE,
     ": clusters[0].hosts: expected a positive integer, got 2.5"},
    {"{\"clusters\": [{\"hosts\": 0}]}", TB_ERR_RANGE,
     ": clusters[0].hosts: expected a positive integer, got 0"},
    {"{\"clusters\": [{\"name\": \"a\"}]}", TB_ERR_PARSE, ": clusters[0]: missing key 'hosts'"},
    {"{\"clusters\": [{\"hosts\": 2, \"hosts\": 3}]}", TB_ERR_PARSE,
     ": clusters[0].hosts: key given twice"},
    {"{\"clusters\": [{\"hosts\": 1}, {\"hosts\": 1}]}", TB_ERR_PARSE,
     ": missing key 'wan' (required with more than one cluster)"},
    {"{\"clusters\": [{\"hosts\": 1, \"trace\": [[5, 1]]}]}", TB_ERR_RANGE,
     ": clusters[0].trace[0][0]: the first point must be at time 0, got 5"},
    {"{\"clusters\": [{\"hosts\": 1, \"trace\": [[0, 1], [10, 2], [\"5s\", 1]]}]}", TB_ERR_RANGE,
     ": clusters[0].trace[2][0]: times must increase, got 5 after 10"},
    {"{\"clusters\": [{\"hosts\": 1, \"trace\": [[0, 1], [10, 0]]}]}", TB_ERR_RANGE,
     ": clusters[0].trace[1][1]: the last speed factor must be positive"},
    {"{\"clusters\": [{\"hosts\": 1, \"trace\": [[0]]}]}", TB_ERR_PARSE,
     ": clusters[0].trace[0]: expected a [time, speed factor] pair, got an array of another "
     "length"},
    {"{\"clusters\": [{\"hosts\": 1, \"load\": 5, \"trace\": [[0, 1]]}]}", TB_ERR_PARSE,
     ": clusters[0]: keys 'load' and 'trace' exclude each other"},
    {"{\"clusters\": [{\"hosts\": [{\"speed\": \"5-1\"}]}]}", TB_ERR_RANGE,
     ": clusters[0].hosts[0].speed: range lower bound above upper bound, got '5-1'"},
    {"{\"clusters\": [{\"hosts\": [1]}]}", TB_ERR_PARSE,
     ": clusters[0].hosts[0]: expected an object, got a number"},
    {"{\"clusters\": [{\"hosts\": 1, \"name\": \"\"}]}", TB_ERR_PARSE,
     ": clusters[0].name: expected a name of 1 to 31 characters, got a string"},
    {"{\"clusters\": [{\"hosts\": 1, \"load\": \"5xs\"}]}", TB_ERR_PARSE,
     ": clusters[0].load: unknown unit 'xs' in '5xs' (use ns, us, ms or s)"},
    {NULL, 0, NULL}};

static void test_json_errors(void)
{
    char path[1024];
    for (const json_case *c = json_errors; c->text != NULL; c++) {
        TB_ASSERT(write_text("bad.json", c->text, path, sizeof path) == 0);
        char err[1024] = "", want[2048];
        tb_platform *p = (tb_platform *)&err;
        int rc = tb_platform_load(path, 1, &p, err, sizeof err);
        if (rc != c->rc)
            printf("    %s\n", err);
        TB_ASSERT_EQ_INT(rc, c->rc);
        TB_ASSERT(p == NULL);
        snprintf(want, sizeof want, "%s%s", path, c->msg);
        TB_ASSERT_STR_EQ(err, want);
    }
    remove(path);
    char err[1024], want[2048];
    tb_platform *p = NULL;
    tb_test_path(path, sizeof path, "does-not-exist.json");
    TB_ASSERT_EQ_INT(tb_platform_load(path, 1, &p, err, sizeof err), TB_ERR_IO);
    snprintf(want, sizeof want, "%s: cannot read: No such file or directory", path);
    TB_ASSERT_STR_EQ(err, want);
}

static void test_open(void)
{
    char path[1024], err[1024] = "", want[2048];
    TB_ASSERT(write_text("open.json", "{\"clusters\": [{\"hosts\": 5}]}", path, sizeof path) == 0);
    tb_platform *p = NULL;
    TB_ASSERT_OK(tb_platform_open(path, 1, &p, err, sizeof err));
    TB_ASSERT_EQ_INT(p->nhosts, 5);
    TB_ASSERT_STR_EQ(p->hosts[4].name, "c0-4");
    tb_platform_destroy(&p);
    remove(path);
    TB_ASSERT_OK(tb_platform_open("hosts=6", 1, &p, err, sizeof err));
    TB_ASSERT_EQ_INT(p->nhosts, 6);
    tb_platform_destroy(&p);
    tb_test_path(path, sizeof path, "missing.json");
    TB_ASSERT_EQ_INT(tb_platform_open(path, 1, &p, err, sizeof err), TB_ERR_IO);
    TB_ASSERT(p == NULL);
    snprintf(want, sizeof want,
             "%s: not a platform file (No such file or directory) nor a spec (key=value,...)",
             path);
    TB_ASSERT_STR_EQ(err, want);
    TB_ASSERT_EQ_INT(tb_platform_open("hosts=0", 1, &p, err, sizeof err), TB_ERR_RANGE);
    TB_ASSERT_STR_EQ(err, "spec: key 'hosts': expected a positive integer, got '0'");
}

/* ---------------------------------------------------------------- */
/* Placement and LogGPS                                              */
/* ---------------------------------------------------------------- */

static void test_host_of(void)
{
    tb_platform *p = spec_ok("hosts=3", 1);
    TB_ASSERT(p != NULL);
    TB_ASSERT_EQ_INT(tb_platform_cores(p), 3);
    TB_ASSERT_EQ_INT(tb_platform_host_of(p, 0), 0);
    TB_ASSERT_EQ_INT(tb_platform_host_of(p, 2), 2);
    TB_ASSERT_EQ_INT(tb_platform_host_of(p, 3), -1);
    TB_ASSERT_EQ_INT(tb_platform_host_of(p, -1), -1);
    tb_platform_destroy(&p);
    p = spec_ok("hosts=3,cores=2", 1);
    TB_ASSERT(p != NULL);
    TB_ASSERT_EQ_INT(tb_platform_cores(p), 6);
    static const long want[] = {0, 0, 1, 1, 2, 2, -1, -1};
    for (long r = 0; r < 8; r++)
        TB_ASSERT_EQ_INT(tb_platform_host_of(p, r), want[r]);
    tb_platform_destroy(&p);
    /* Uneven cores: host 0 has 1, host 1 has 3. */
    char path[1024], err[512] = "";
    TB_ASSERT(write_text("cores.json",
                         "{\"clusters\": [{\"hosts\": [{\"cores\": 1}, {\"cores\": 3}]}]}", path,
                         sizeof path) == 0);
    TB_ASSERT_OK(tb_platform_load(path, 1, &p, err, sizeof err));
    TB_ASSERT_EQ_INT(tb_platform_cores(p), 4);
    static const long want2[] = {0, 1, 1, 1, -1};
    for (long r = 0; r < 5; r++)
        TB_ASSERT_EQ_INT(tb_platform_host_of(p, r), want2[r]);
    tb_platform_destroy(&p);
    remove(path);
    TB_ASSERT_EQ_INT(tb_platform_host_of(NULL, 0), -1);
    TB_ASSERT_EQ_INT(tb_platform_cores(NULL), 0);
}

static void test_loggps(void)
{
    tb_loggps n = {.L = 1, .os = 1e-6, .or_ = 2e-6, .ob = 1e-7, .O = 1e-9, .g = 1, .G = 1};
    TB_ASSERT(tb_loggps_send_overhead(&n, 4, 1000) == 1e-6 + 1e-7 * 4 + 1e-9 * 1000);
    TB_ASSERT(tb_loggps_recv_overhead(&n, 4, 1000) == 2e-6 + 1e-7 * 4 + 1e-9 * 1000);
    TB_ASSERT(tb_loggps_send_overhead(&n, 0, 0) == 1e-6);
    TB_ASSERT(tb_loggps_recv_overhead(&n, 0, 0) == 2e-6);
}

/* ---------------------------------------------------------------- */
/* Speed cursor                                                      */
/* ---------------------------------------------------------------- */

static void test_speed_constant(void)
{
    tb_platform *p = spec_ok("hosts=2,speed=2", 1);
    TB_ASSERT(p != NULL);
    tb_speed_cursor c;
    TB_ASSERT_OK(tb_speed_cursor_init(&c, p, 1));
    TB_ASSERT(c.t0 == 0 && c.t1 == INFINITY && c.speed == 2);
    double end;
    TB_ASSERT_OK(tb_speed_finish_time(&c, 3, 10, &end));
    TB_ASSERT(end == 8);
    TB_ASSERT_OK(tb_speed_cursor_seek(&c, 1e9));
    TB_ASSERT(c.speed == 2 && c.t1 == INFINITY);
    TB_ASSERT_OK(tb_speed_finish_time(&c, 1e9, 0, &end));
    TB_ASSERT(end == 1e9);
    TB_ASSERT_EQ_INT(tb_speed_cursor_seek(&c, -1), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_speed_cursor_seek(&c, NAN), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_speed_finish_time(&c, 1, -1, &end), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_speed_finish_time(&c, 1, INFINITY, &end), TB_ERR_INVALID);
    tb_speed_cursor_free(&c);
    TB_ASSERT_EQ_INT(tb_speed_cursor_init(&c, p, 2), TB_ERR_RANGE);
    tb_speed_cursor_free(&c);
    tb_platform_destroy(&p);
}

static void test_speed_trace(void)
{
    double time[] = {0, 10}, speed[] = {1, 0.5};
    trace_plat tp;
    make_trace(&tp, 2, time, speed);
    tb_speed_cursor c;
    TB_ASSERT_OK(tb_speed_cursor_init(&c, &tp.p, 0));
    TB_ASSERT(c.t0 == 0 && c.t1 == 10 && c.speed == 1);
    double end;
    /* 5 s at speed 1 reach t=10, the other 7 take 14 s at 0.5. */
    TB_ASSERT_OK(tb_speed_finish_time(&c, 5, 12, &end));
    TB_ASSERT(end == 24);
    TB_ASSERT(c.t0 == 0 && c.t1 == 10); /* the cursor stays at the start */
    TB_ASSERT_OK(tb_speed_finish_time(&c, 5, 5, &end));
    TB_ASSERT(end == 10);
    TB_ASSERT_OK(tb_speed_finish_time(&c, 10, 1, &end));
    TB_ASSERT(end == 12);
    TB_ASSERT(c.t0 == 10 && c.t1 == INFINITY && c.speed == 0.5);
    /* Back in time: replays from 0. */
    TB_ASSERT_OK(tb_speed_finish_time(&c, 0, 1, &end));
    TB_ASSERT(end == 1);
    TB_ASSERT(c.t0 == 0 && c.speed == 1);
    tb_speed_cursor_free(&c);
}

static void test_speed_trace_segments(void)
{
    double time[] = {0, 10, 20, 30}, speed[] = {1, 0.5, 0, 2};
    trace_plat tp;
    make_trace(&tp, 4, time, speed);
    tb_speed_cursor c;
    TB_ASSERT_OK(tb_speed_cursor_init(&c, &tp.p, 0));
    double end;
    /* 5 on [5,10), 5 on [10,20), nothing on [20,30), 2 more at speed 2. */
    TB_ASSERT_OK(tb_speed_finish_time(&c, 5, 12, &end));
    TB_ASSERT(end == 31);
    /* Started while stopped: waits until 30. */
    TB_ASSERT_OK(tb_speed_finish_time(&c, 25, 4, &end));
    TB_ASSERT(end == 32);
    /* Work that ends exactly at a boundary. */
    TB_ASSERT_OK(tb_speed_finish_time(&c, 25, 0, &end));
    TB_ASSERT(end == 25);
    TB_ASSERT_OK(tb_speed_cursor_seek(&c, 20));
    TB_ASSERT(c.t0 == 20 && c.t1 == 30 && c.speed == 0);
    TB_ASSERT_OK(tb_speed_cursor_seek(&c, 100));
    TB_ASSERT(c.t0 == 30 && c.t1 == INFINITY && c.speed == 2);
    tb_speed_cursor_free(&c);
    /* A trace that never restarts cannot be used. */
    speed[3] = 0;
    TB_ASSERT_EQ_INT(tb_speed_cursor_init(&c, &tp.p, 0), TB_ERR_INVALID);
    tb_speed_cursor_free(&c);
}

static void test_speed_load_deterministic(void)
{
    tb_platform *p = spec_ok("hosts=2,load=10s,speed=2", 7);
    tb_platform *q = spec_ok("hosts=2,load=10s,speed=2", 8);
    TB_ASSERT(p != NULL && q != NULL);
    tb_speed_cursor a, b, other, seed2;
    TB_ASSERT_OK(tb_speed_cursor_init(&a, p, 0));
    TB_ASSERT_OK(tb_speed_cursor_init(&b, p, 0));
    TB_ASSERT_OK(tb_speed_cursor_init(&other, p, 1));
    TB_ASSERT_OK(tb_speed_cursor_init(&seed2, q, 0));
    int same_other = 1, same_seed = 1;
    for (int i = 0; i < 1000; i++) {
        TB_ASSERT(a.t0 == b.t0 && a.t1 == b.t1 && a.speed == b.speed);
        TB_ASSERT(a.t1 > a.t0 && a.t1 < INFINITY);
        same_other &= a.t1 == other.t1;
        same_seed &= a.t1 == seed2.t1;
        TB_ASSERT_OK(tb_speed_cursor_seek(&a, a.t1));
        TB_ASSERT_OK(tb_speed_cursor_seek(&b, b.t1));
        TB_ASSERT_OK(tb_speed_cursor_seek(&other, other.t1));
        TB_ASSERT_OK(tb_speed_cursor_seek(&seed2, seed2.t1));
    }
    TB_ASSERT(!same_other && !same_seed);
    /* Seeking back replays the same segments. */
    TB_ASSERT_OK(tb_speed_cursor_seek(&b, 100));
    double t0 = b.t0, t1 = b.t1, s = b.speed;
    TB_ASSERT_OK(tb_speed_cursor_seek(&b, 5000));
    TB_ASSERT_OK(tb_speed_cursor_seek(&b, 100));
    TB_ASSERT(b.t0 == t0 && b.t1 == t1 && b.speed == s);
    tb_speed_cursor_free(&a);
    tb_speed_cursor_free(&b);
    tb_speed_cursor_free(&other);
    tb_speed_cursor_free(&seed2);
    tb_platform_destroy(&p);
    tb_platform_destroy(&q);
}

/* M/M/inf with arrival rate lambda and mean stay 1/lambda: one dummy on
 * average, so the time average of 1 + dummies is 2. */
static void test_speed_load_mean(void)
{
    tb_platform *p = spec_ok("hosts=1,load=10s,speed=3", 11);
    TB_ASSERT(p != NULL);
    tb_speed_cursor c;
    TB_ASSERT_OK(tb_speed_cursor_init(&c, p, 0));
    double horizon = 1e5 * 10, sum = 0;
    while (c.t0 < horizon) {
        double k = 3 / c.speed; /* 1 + dummies */
        TB_ASSERT_NEAR(k, floor(k + 0.5), 1e-9);
        sum += (fmin(c.t1, horizon) - c.t0) * k;
        TB_ASSERT_OK(tb_speed_cursor_seek(&c, c.t1));
    }
    TB_ASSERT_NEAR(sum / horizon, 2.0, 0.1);
    tb_speed_cursor_free(&c);
    tb_platform_destroy(&p);
}

/* Walks the segments by hand: the reference for tb_speed_finish_time. */
static double walk_finish(const tb_platform *p, double t, double work)
{
    tb_speed_cursor c;
    if (tb_speed_cursor_init(&c, p, 0) != TB_OK || tb_speed_cursor_seek(&c, t) != TB_OK)
        return NAN;
    double now = t, end = NAN;
    while (isnan(end)) {
        double room = (c.t1 - now) * c.speed;
        if (room >= work) {
            end = now + work / c.speed;
        } else {
            work -= room;
            now = c.t1;
            if (tb_speed_cursor_seek(&c, now) != TB_OK)
                break;
        }
    }
    tb_speed_cursor_free(&c);
    return end;
}

static void test_speed_load_finish(void)
{
    tb_platform *p = spec_ok("hosts=1,load=2s,speed=4", 3);
    TB_ASSERT(p != NULL);
    tb_speed_cursor c;
    TB_ASSERT_OK(tb_speed_cursor_init(&c, p, 0));
    int slower = 0;
    for (int i = 0; i < 200; i++) {
        double t = i * 7.5, w = 1 + (i % 13) * 3.25, end;
        TB_ASSERT_OK(tb_speed_finish_time(&c, t, w, &end));
        TB_ASSERT(end >= t + w / 4);
        slower += end > t + w / 4;
        TB_ASSERT_NEAR(end, walk_finish(p, t, w), 1e-9 * end);
        TB_ASSERT(c.t0 <= t && t < c.t1);
    }
    TB_ASSERT(slower > 150);
    tb_speed_cursor_free(&c);
    tb_platform_destroy(&p);
}

/* Last: removes the scratch directory if this program made it. */
static void test_cleanup(void)
{
    if (tb_test_scratch_made_)
        TB_ASSERT(rmdir(tb_test_scratch_) == 0);
}

/* ---------------------------------------------------------------- */
/* LogGP's gap: the sender's link and the receiver's                  */
/* ---------------------------------------------------------------- */

#define NET_SPEC "hosts=8,L=50us,o=10us,g=3us,G=10ns,S=100000"

/* A stream of n messages of k bytes from one rank: they start T = g + (k-1)G
 * apart (above os, so the link, not the CPU, paces them), arrive T apart, and
 * the receiver, whose or is below T, has the last one at
 * (n-1)T + os + L + (k-1)G + or.  The receiver's link, carrying the same
 * messages, never holds one back. */
static void test_net_gap_stream(void)
{
    tb_platform *p = spec_ok(NET_SPEC, 1);
    TB_ASSERT(p != NULL);
    const int n = 20;
    const size_t k = 65536;
    const double L = 50e-6, o = 10e-6, g = 3e-6, G = 10e-9, T = g + (double)(k - 1) * G;
    double clock = 0, link_free = -INFINITY, rclock = 0;
    tb_netlink rx = {0};
    int ok = 1;
    for (int i = 0; i < n; i++) {
        tb_netmsg m;
        tb_netrecv r;
        tb_net_send(p, 2, 0, 0, 0, k, clock, link_free, &m);
        ok &= !m.rendezvous && fabs(m.start - i * T) <= 1e-15;
        ok &= fabs(m.link_free - (m.start + T)) <= 1e-15;
        clock = m.send_end;
        link_free = m.link_free;
        tb_net_recv(p, 2, 0, 0, 0, k, 0, rclock, m.arrival, &rx, &r);
        ok &= fabs(r.in - m.arrival) <= 1e-15 && r.taken == r.in;
        rclock = r.end;
    }
    tb_platform_destroy(&p);
    TB_ASSERT(ok);
    double want = (n - 1) * T + o + L + (double)(k - 1) * G + o;
    TB_ASSERT_NEAR(rclock, want, 1e-12 * want);
    /* 25 times what the link carries before the gap counted the bytes: */
    TB_ASSERT(T > 25 * o);
}

/* The gap after a message is g + (k-1)G of that (earlier) message, whatever
 * the next one's size or protocol; a message over the wide-area link counts
 * its G; a message to oneself neither waits for the link nor holds it. */
static void test_net_gap_previous_size(void)
{
    tb_platform *p = spec_ok(NET_SPEC, 1);
    TB_ASSERT(p != NULL);
    const double o = 10e-6, g = 3e-6, G = 10e-9;
    tb_netmsg a, b;
    /* big, then 1 byte: the big one's bytes hold the link */
    tb_net_send(p, 2, 0, 0, 0, 65536, 0.0, -INFINITY, &a);
    tb_net_send(p, 2, 0, 0, 0, 1, a.send_end, a.link_free, &b);
    TB_ASSERT_NEAR(b.start, g + 65535 * G, 1e-15);
    /* 1 byte, then big: g after the small one, so the CPU (os) paces it */
    tb_net_send(p, 2, 0, 0, 0, 1, 0.0, -INFINITY, &a);
    tb_net_send(p, 2, 0, 0, 0, 65536, a.send_end, a.link_free, &b);
    TB_ASSERT_NEAR(b.start, o, 1e-15);
    /* a rendezvous (k > S) holds the link for its bytes too */
    tb_net_send(p, 2, 0, 0, 0, 200000, 0.0, -INFINITY, &a);
    TB_ASSERT(a.rendezvous);
    tb_net_send(p, 2, 0, 0, 0, 1, a.send_end, a.link_free, &b);
    TB_ASSERT_NEAR(b.start, g + 199999 * G, 1e-15);
    /* to oneself: no wait, the link stays as it was */
    tb_net_send(p, 2, 0, 0, 0, 65536, 0.0, -INFINITY, &a);
    tb_net_send(p, 2, 0, 0, 1, 65536, a.send_end, a.link_free, &b);
    TB_ASSERT(b.start == a.send_end && b.link_free == a.link_free && b.arrival == b.send_end);
    tb_platform_destroy(&p);
    /* across clusters: the wide-area G */
    p = spec_ok("hosts=4,clusters=2,L=5us,o=1us,g=2us,G=1ns,wan-L=1ms,wan-G=100ns", 1);
    TB_ASSERT(p != NULL);
    tb_net_send(p, 4, 0, 1, 0, 1001, 0.0, -INFINITY, &a);
    TB_ASSERT_NEAR(a.arrival, 1e-6 + 1e-3 + 1000 * 100e-9, 1e-15);
    TB_ASSERT_NEAR(a.link_free, 2e-6 + 1000 * 100e-9, 1e-15);
    tb_net_send(p, 4, 0, 0, 0, 1001, a.send_end, a.link_free, &b);
    TB_ASSERT_NEAR(b.start, 2e-6 + 1000 * 100e-9, 1e-15);
    TB_ASSERT_NEAR(b.link_free, b.start + 2e-6 + 1000 * 1e-9, 1e-15);
    tb_platform_destroy(&p);
}

/* m senders, n messages of k bytes each, all sent back to back from time 0
 * into one receiver that takes them in order of arrival: its link lets them
 * through T = g + (k-1)G apart, so the last is taken at
 * os + L + (k-1)G + (mn-1)T and the receiver is done or later (or < T). */
static void test_net_recv_fanin(void)
{
    tb_platform *p = spec_ok(NET_SPEC, 1);
    TB_ASSERT(p != NULL);
    enum { m = 3, n = 4 };
    const size_t k = 65536;
    const double L = 50e-6, o = 10e-6, g = 3e-6, G = 10e-9, T = g + (double)(k - 1) * G;
    double arrival[m][n];
    for (int s = 0; s < m; s++) {
        double clock = 0, link_free = -INFINITY;
        for (int i = 0; i < n; i++) {
            tb_netmsg msg;
            tb_net_send(p, m + 1, 0, 0, 0, k, clock, link_free, &msg);
            clock = msg.send_end;
            link_free = msg.link_free;
            arrival[s][i] = msg.arrival;
        }
    }
    tb_netlink rx = {0};
    double rclock = 0, prev_in = -INFINITY;
    int ok = 1;
    for (int i = 0; i < n; i++) /* arrival order: round i of every sender, then i+1 */
        for (int s = 0; s < m; s++) {
            tb_netrecv r;
            tb_net_recv(p, m + 1, 0, 0, 0, k, 0, rclock, arrival[s][i], &rx, &r);
            if (prev_in > -INFINITY)
                ok &= fabs(r.in - prev_in - T) <= 1e-12 * T;
            prev_in = r.in;
            rclock = r.end;
        }
    tb_platform_destroy(&p);
    TB_ASSERT(ok);
    double want = o + L + (double)(k - 1) * G + (m * n - 1) * T + o;
    TB_ASSERT_NEAR(rclock, want, 1e-12 * want);
}

/* The receiver's link goes to messages in the order they are taken; a
 * message taken later fills the link's free time around those taken before.
 * G = 1 us a byte, g = 0: 60000 bytes arriving at 59.999 ms (its bytes from
 * 0 on) and 8 bytes at 1.007 ms (from 1 ms on). */
static void test_net_recv_fill(void)
{
    tb_platform *p = spec_ok("hosts=3,L=0,o=0,g=0,G=1us,S=1e9", 1);
    TB_ASSERT(p != NULL);
    tb_netlink rx = {0};
    tb_netrecv small, big;
    /* small first: at its arrival; the big one gets the link but for 7 us */
    tb_net_recv(p, 3, 0, 0, 0, 8, 0, 0.0, 1.007e-3, &rx, &small);
    tb_net_recv(p, 3, 0, 0, 0, 60000, 0, small.end, 59.999e-3, &rx, &big);
    TB_ASSERT_NEAR(small.in, 1.007e-3, 1e-15);
    TB_ASSERT_NEAR(big.in, 60.006e-3, 1e-15);
    /* big first: at its arrival; the small one waits for the link */
    memset(&rx, 0, sizeof rx);
    tb_net_recv(p, 3, 0, 0, 0, 60000, 0, 0.0, 59.999e-3, &rx, &big);
    tb_net_recv(p, 3, 0, 0, 0, 8, 0, big.end, 1.007e-3, &rx, &small);
    TB_ASSERT_NEAR(big.in, 59.999e-3, 1e-15);
    TB_ASSERT_NEAR(small.in, 60.006e-3, 1e-15);
    TB_ASSERT(small.taken == small.in && small.end == small.in);
    /* to oneself: not through the link */
    tb_net_recv(p, 3, 0, 0, 1, 8, 0, 0.0, 1e-3, &rx, &small);
    TB_ASSERT(small.in == 1e-3);
    tb_platform_destroy(&p);
}

/* A rendezvous: the request passes as one byte; its data, pulled when the
 * receiver takes it, holds the link from taken + 2L for (k-1)G, so an eager
 * message arriving meanwhile comes through after it. */
static void test_net_recv_rendezvous(void)
{
    tb_platform *p = spec_ok("hosts=3,L=50us,o=10us,g=0,G=10ns,S=1000", 1);
    TB_ASSERT(p != NULL);
    tb_netlink rx = {0};
    tb_netmsg m;
    tb_netrecv r, e;
    tb_net_send(p, 3, 0, 0, 0, 100001, 0.0, -INFINITY, &m);
    TB_ASSERT(m.rendezvous);
    TB_ASSERT_NEAR(m.arrival, 60e-6, 1e-15);
    tb_net_recv(p, 3, 0, 0, 0, 100001, 1, 100e-6, m.arrival, &rx, &r);
    TB_ASSERT(r.in == m.arrival && r.taken == 100e-6);
    const double data_end = 100e-6 + 100e-6 + 100000 * 10e-9; /* taken + 2L + (k-1)G */
    TB_ASSERT_NEAR(r.end, data_end + 10e-6, 1e-15);
    /* 1000 bytes arriving in the middle of the data's transfer */
    tb_net_recv(p, 3, 0, 0, 0, 1000, 0, r.end, 700e-6, &rx, &e);
    TB_ASSERT_NEAR(e.in, data_end + 999 * 10e-9, 1e-15);
    TB_ASSERT_NEAR(e.end, r.end + 10e-6, 1e-15); /* the receiver was later still */
    tb_platform_destroy(&p);
}

/* The link keeps its last TB_NET_SPANS busy spans: with one more, the oldest
 * is forgotten (as if the link had been free then). g = 1 us, one-byte
 * messages arriving every 10 us hold 1 us each. */
static void test_net_recv_spans(void)
{
    tb_platform *p = spec_ok("hosts=3,L=0,o=0,g=1us,G=0", 1);
    TB_ASSERT(p != NULL);
    tb_netlink rx = {0};
    tb_netrecv r;
    for (int i = 1; i <= TB_NET_SPANS; i++)
        tb_net_recv(p, 3, 0, 0, 0, 1, 0, 0.0, i * 10e-6, &rx, &r);
    TB_ASSERT_EQ_INT(rx.n, TB_NET_SPANS);
    tb_netlink keep = rx;
    /* a message wanting 9..10 us again waits for the first span */
    tb_net_recv(p, 3, 0, 0, 0, 1, 0, 0.0, 10e-6, &keep, &r);
    TB_ASSERT_NEAR(r.in, 11e-6, 1e-15);
    /* one span more (at 16..17 x 10 us) and 9..10 us is forgotten */
    tb_net_recv(p, 3, 0, 0, 0, 1, 0, 0.0, (TB_NET_SPANS + 1) * 10e-6, &rx, &r);
    TB_ASSERT_EQ_INT(rx.n, TB_NET_SPANS);
    tb_net_recv(p, 3, 0, 0, 0, 1, 0, 0.0, 10e-6, &rx, &r);
    TB_ASSERT(r.in == 10e-6);
    tb_platform_destroy(&p);
}

/* tb_net_forget: a receiver that takes its messages in order of arrival
 * and forgets, before each, the spans that end before its arrival less
 * tb_net_need_max gets every message through at the same times, to the
 * bit, as one that keeps every span (messages of 0 bytes to above S, so
 * eager and rendezvous, at times that overlap), and its link stays short. */
static void test_net_forget(void)
{
    tb_platform *p = spec_ok("hosts=3,L=3us,o=1us,g=2us,G=1ns,S=4000", 1);
    TB_ASSERT(p != NULL);
    /* g + (S-1)G */
    TB_ASSERT(tb_net_need_max(p) == 2e-6 + 3999.0 * 1e-9);
    tb_rng r;
    tb_rng_seed(&r, 5);
    tb_netlink keep = {0}, short_ = {0};
    double arrival = 0.0, clock = 0.0;
    int ok = 1, longest = 0, kept_longest = 0;
    for (int i = 0; i < 20000 && ok; i++) {
        arrival += tb_rng_exp(&r, 3e-6); /* 3 us apart on average: a busy link */
        size_t bytes = (size_t)tb_rng_below(&r, 6000);
        int rdv = (double)bytes > p->clusters[0].net.S;
        tb_netrecv a, b;
        tb_net_recv(p, 3, 0, 0, 0, bytes, rdv, clock, arrival, &keep, &a);
        tb_net_forget(&short_, arrival - tb_net_need_max(p));
        tb_net_recv(p, 3, 0, 0, 0, bytes, rdv, clock, arrival, &short_, &b);
        ok = a.in == b.in && a.taken == b.taken && a.end == b.end;
        clock = tb_rng_below(&r, 2) ? a.end : clock; /* sometimes behind, sometimes not */
        longest = short_.n > longest ? short_.n : longest;
        kept_longest = keep.n > kept_longest ? keep.n : kept_longest;
    }
    TB_ASSERT(ok);
    printf("    longest link: %d spans kept, %d with tb_net_forget\n", kept_longest, longest);
    TB_ASSERT(longest < kept_longest);
    /* forgetting more than that does change answers (the test can fail) */
    tb_netlink l = {0};
    tb_netrecv x;
    tb_net_recv(p, 3, 0, 0, 0, 1, 0, 0.0, 10e-6, &l, &x); /* holds 8..10 us */
    tb_netlink f = l;
    tb_net_forget(&f, 11e-6);
    TB_ASSERT_EQ_INT(f.n, 0);
    tb_net_recv(p, 3, 0, 0, 0, 1, 0, 0.0, 10e-6, &l, &x);
    TB_ASSERT(x.in > 10e-6); /* waits for the first */
    tb_net_recv(p, 3, 0, 0, 0, 1, 0, 0.0, 10e-6, &f, &x);
    TB_ASSERT(x.in == 10e-6); /* the first forgotten */
    /* no bound on a message's size (a platform built by hand): nothing may
     * be forgotten */
    p->clusters[0].net.S = INFINITY;
    TB_ASSERT(tb_net_need_max(p) == INFINITY);
    p->clusters[0].net.G = 0.0;
    TB_ASSERT(tb_net_need_max(p) == 2e-6);
    tb_platform_destroy(&p);
}

/* g = G = 0 (pure LogP): neither link ever holds a message back, to the bit. */
static void test_net_no_gap(void)
{
    tb_platform *p = spec_ok("hosts=3,L=50us,o=10us", 1);
    TB_ASSERT(p != NULL);
    tb_netlink rx = {0};
    double clock = 0, link_free = -INFINITY;
    int ok = 1;
    for (int i = 0; i < 100; i++) {
        tb_netmsg m;
        tb_netrecv r;
        tb_net_send(p, 3, 0, 0, 0, (size_t)(i * 997), clock, link_free, &m);
        ok &= m.start == clock;
        clock = m.send_end;
        link_free = m.link_free;
        /* a receiver that looks at a time of its own before the arrival */
        tb_net_recv(p, 3, 0, 0, 0, (size_t)(i * 997), 0, m.arrival - 1e-6 * (i % 3), m.arrival,
                    &rx, &r);
        ok &= r.in == m.arrival && r.taken == m.arrival &&
              r.end == m.arrival + tb_loggps_recv_overhead(&p->clusters[0].net, 3, 0);
    }
    tb_platform_destroy(&p);
    TB_ASSERT(ok);
}

/* A cluster's uplink latency adds to the wide-area L at both ends; inside
 * a cluster it does not count. */
static void test_json_uplink(void)
{
    char path[1024], err[512] = "";
    TB_ASSERT(write_text("uplink.json",
                         "{\"clusters\": [{\"name\": \"client\", \"hosts\": 1},\n"
                         " {\"name\": \"far\", \"hosts\": 2, \"uplink\": \"10ms\",\n"
                         "  \"network\": {\"L\": \"50us\"}},\n"
                         " {\"name\": \"near\", \"hosts\": 2, \"uplink\": \"20us\"}],\n"
                         " \"wan\": {\"L\": \"1ms\", \"G\": 0}}",
                         path, sizeof path) == 0);
    tb_platform *p = NULL;
    int rc = tb_platform_load(path, 1, &p, err, sizeof err);
    if (rc != TB_OK)
        printf("    %s\n", err);
    TB_ASSERT_OK(rc);
    tb_netmsg m;
    tb_net_send(p, 5, 0, 1, 0, 0, 0.0, -1.0, &m); /* client -> far: 1 ms + 10 ms */
    TB_ASSERT_NEAR(m.arrival, 11e-3, 1e-15);
    tb_net_send(p, 5, 1, 2, 0, 0, 0.0, -1.0, &m); /* far -> near: 1 ms + 10 ms + 20 us */
    TB_ASSERT_NEAR(m.arrival, 11.02e-3, 1e-15);
    tb_net_send(p, 5, 1, 1, 0, 0, 0.0, -1.0, &m); /* inside far: its own L */
    TB_ASSERT_NEAR(m.arrival, 50e-6, 1e-15);
    tb_platform_destroy(&p);
    remove(path);
    TB_ASSERT(write_text("uplink_bad.json",
                         "{\"clusters\": [{\"hosts\": 1, \"uplink\": \"-1ms\"}]}", path,
                         sizeof path) == 0);
    TB_ASSERT(tb_platform_load(path, 1, &p, err, sizeof err) != TB_OK);
    TB_ASSERT(strstr(err, "clusters[0].uplink") != NULL);
    remove(path);
}

static const tb_test tests[] = {
    {"json_uplink", test_json_uplink},
    {"net_gap_stream", test_net_gap_stream},
    {"net_gap_previous_size", test_net_gap_previous_size},
    {"net_recv_fanin", test_net_recv_fanin},
    {"net_recv_fill", test_net_recv_fill},
    {"net_recv_rendezvous", test_net_recv_rendezvous},
    {"net_recv_spans", test_net_recv_spans},
    {"net_forget", test_net_forget},
    {"net_no_gap", test_net_no_gap},
    {"spec_basic", test_spec_basic},
    {"spec_defaults", test_spec_defaults},
    {"spec_units", test_spec_units},
    {"spec_o", test_spec_o},
    {"spec_speed", test_spec_speed},
    {"spec_speed_range", test_spec_speed_range},
    {"spec_clusters", test_spec_clusters},
    {"spec_load_cores", test_spec_load_cores},
    {"spec_errors", test_spec_errors},
    {"json_valid", test_json_valid},
    {"json_errors", test_json_errors},
    {"open", test_open},
    {"host_of", test_host_of},
    {"loggps", test_loggps},
    {"speed_constant", test_speed_constant},
    {"speed_trace", test_speed_trace},
    {"speed_trace_segments", test_speed_trace_segments},
    {"speed_load_deterministic", test_speed_load_deterministic},
    {"speed_load_mean", test_speed_load_mean},
    {"speed_load_finish", test_speed_load_finish},
    {"cleanup", test_cleanup},
    {NULL, NULL}};

TB_TEST_MAIN(tests)
