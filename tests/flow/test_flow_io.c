/*
 * test_flow_io.c - reading and writing workflows: WfCommons WfFormat JSON
 * (the WfInstances in tests/data/wfinstances/ and the older inline layout),
 * Pegasus DAX (tests/data/dax/) with the jobs' commands, WfFormat output
 * read back, Makeflow output and its quoting, and the error messages of
 * broken inputs.  Data files are found through $TB_SOURCE_DIR,
 * else relative to this source file.
 */
#define _POSIX_C_SOURCE 200809L

#include "tenbin/flow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tb_test.h"

/* ---------------------------------------------------------------- */
/* Helpers                                                           */
/* ---------------------------------------------------------------- */

/* tests/data/REL */
static void data_path(char *buf, size_t n, const char *rel)
{
    const char *src = getenv("TB_SOURCE_DIR");
    if (src != NULL && src[0] != '\0') {
        snprintf(buf, n, "%s/tests/data/%s", src, rel);
        return;
    }
    const char *file = __FILE__, *slash = strrchr(file, '/');
    int dir = slash ? (int)(slash - file) : 1;
    snprintf(buf, n, "%.*s/../data/%s", dir, slash ? file : ".", rel);
}

/* Read tests/data/REL; prints the error if it fails. */
static tb_flow *read_data(const char *rel)
{
    char path[1024], err[512] = "";
    tb_flow *f = NULL;
    data_path(path, sizeof path, rel);
    int rc = tb_flow_read(path, TB_FLOW_FORMAT_AUTO, &f, err, sizeof err);
    if (rc != TB_OK)
        printf("    %s: %s (%s)\n", rel, err, tb_err_name(rc));
    return f;
}

/* Data of edge from -> to (by task id), or NAN if there is no such edge. */
static double edge_data(const tb_flow *f, const char *from, const char *to)
{
    size_t a, b;
    const size_t *off;
    const uint32_t *succ;
    const double *data;
    if (tb_flow_find(f, from, &a) != TB_OK || tb_flow_find(f, to, &b) != TB_OK)
        return NAN;
    tb_flow_succ(f, &off, &succ, &data);
    for (size_t e = off[a]; e < off[a + 1]; e++)
        if (succ[e] == b)
            return data[e];
    return NAN;
}

static double work_of(const tb_flow *f, const char *id)
{
    size_t t;
    return tb_flow_find(f, id, &t) == TB_OK ? tb_flow_task_work(f, t) : NAN;
}

static double total_edge_data(const tb_flow *f)
{
    const size_t *off;
    const uint32_t *succ;
    const double *data;
    double sum = 0;
    tb_flow_succ(f, &off, &succ, &data);
    for (size_t e = 0; e < tb_flow_nedges(f); e++)
        sum += data[e];
    return sum;
}

/* Same tasks (ids, work) in the same order and the same edges with the same
 * data, bit for bit; 0 if so, else prints the first difference. */
static int same_flow(const tb_flow *a, const tb_flow *b)
{
    if (tb_flow_ntasks(a) != tb_flow_ntasks(b) || tb_flow_nedges(a) != tb_flow_nedges(b)) {
        printf("    %zu tasks %zu edges vs %zu tasks %zu edges\n", tb_flow_ntasks(a),
               tb_flow_nedges(a), tb_flow_ntasks(b), tb_flow_nedges(b));
        return -1;
    }
    const size_t *oa, *ob;
    const uint32_t *sa, *sb;
    const double *da, *db;
    tb_flow_succ(a, &oa, &sa, &da);
    tb_flow_succ(b, &ob, &sb, &db);
    for (size_t t = 0; t < tb_flow_ntasks(a); t++) {
        if (strcmp(tb_flow_task_id(a, t), tb_flow_task_id(b, t)) != 0 ||
            tb_flow_task_work(a, t) != tb_flow_task_work(b, t) || oa[t + 1] != ob[t + 1]) {
            printf("    task %zu: '%s' %.17g vs '%s' %.17g\n", t, tb_flow_task_id(a, t),
                   tb_flow_task_work(a, t), tb_flow_task_id(b, t), tb_flow_task_work(b, t));
            return -1;
        }
    }
    for (size_t e = 0; e < tb_flow_nedges(a); e++) {
        if (sa[e] != sb[e] || da[e] != db[e]) {
            printf("    edge %zu: -> %u %.17g vs -> %u %.17g\n", e, sa[e], da[e], sb[e], db[e]);
            return -1;
        }
    }
    return 0;
}

/* Write f as WfFormat to the scratch file `name` and read it back. */
static tb_flow *round_trip(const tb_flow *f, const char *name)
{
    char path[1024], err[512] = "";
    tb_flow *g = NULL;
    tb_test_path(path, sizeof path, name);
    int rc = tb_flow_write(f, path, TB_FLOW_FORMAT_WFJSON, err, sizeof err);
    if (rc == TB_OK)
        rc = tb_flow_read(path, TB_FLOW_FORMAT_AUTO, &g, err, sizeof err);
    if (rc != TB_OK)
        printf("    %s: %s (%s)\n", name, err, tb_err_name(rc));
    remove(path);
    return g;
}

/* The text of file path (at most n - 1 bytes), then remove it; 0 if read. */
static int slurp(const char *path, char *text, size_t n)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return -1;
    size_t len = fread(text, 1, n - 1, fp);
    fclose(fp);
    remove(path);
    text[len] = '\0';
    return 0;
}

/* Task `id`'s program and arguments are prog and the NULL-terminated want;
 * 0 if so, else prints the difference. */
static int has_command(const tb_flow *f, const char *id, const char *prog,
                       const char *const *want)
{
    size_t t, n = 0;
    if (tb_flow_find(f, id, &t) != TB_OK) {
        printf("    no task '%s'\n", id);
        return -1;
    }
    const char *p = tb_flow_task_program(f, t);
    if ((p == NULL) != (prog == NULL) || (p != NULL && strcmp(p, prog) != 0)) {
        printf("    %s: program '%s', want '%s'\n", id, p ? p : "(none)", prog ? prog : "(none)");
        return -1;
    }
    while (want != NULL && want[n] != NULL)
        n++;
    for (size_t i = 0; i < n || i < tb_flow_task_nargs(f, t); i++) {
        const char *a = tb_flow_task_arg(f, t, i), *w = i < n ? want[i] : NULL;
        if (a == NULL || w == NULL || strcmp(a, w) != 0) {
            printf("    %s: argument %zu '%s', want '%s'\n", id, i, a ? a : "(none)",
                   w ? w : "(none)");
            return -1;
        }
    }
    return 0;
}

/* Parse text (in the format of its name) that must fail with `code` and a
 * message containing `want`. */
static int fails_with(const char *text, const char *name, int code, const char *want)
{
    char err[512] = "";
    tb_flow *f = NULL;
    int rc = tb_flow_parse(text, strlen(text), name, tb_flow_format_of(name), &f, err,
                           sizeof err);
    if (rc == code && f == NULL && strstr(err, want) != NULL)
        return 0;
    printf("    %s: got %s \"%s\", want %s \"%s\"\n", name, tb_err_name(rc), err,
           tb_err_name(code), want);
    tb_flow_destroy(&f);
    return -1;
}

/* ---------------------------------------------------------------- */
/* WfInstances                                                       */
/* ---------------------------------------------------------------- */

/*
 * Expected sizes of the WfInstances, computed independently with Python from
 * the JSON files:
 *   tasks  = len(workflow.specification.tasks)
 *   edges  = len({(p, t.id) for t in tasks for p in t.parents}
 *                | {(t.id, c) for t in tasks for c in t.children})
 *   work   = sum over workflow.execution.tasks of runtimeInSeconds, times
 *            cpu.speedInMHz / 1000 of the machine named by machines[0] when
 *            that machine has a speed (blast and bwa have none)
 *   bytes  = sum over those edges of the sizeInBytes of the files in both
 *            the parent's outputFiles and the child's inputFiles
 */
static const struct {
    const char *file;
    size_t tasks, edges;
    double work, bytes;
} instances[] = {
    {"1000genome-chameleon-2ch-100k-001.json", 52, 76, 3325.554000, 11240567.0},
    {"blast-chameleon-small-001.json", 43, 120, 382.912720, 794.0},
    {"bwa-chameleon-small-001.json", 104, 400, 379.989466, 17612492.0},
    {"cycles-chameleon-1l-1c-9p-001.json", 67, 97, 1786.649629, 1716598.0},
    {"epigenomics-chameleon-hep-1seq-100k-001.json", 41, 48, 648.247014, 353323676.0},
    {"epigenomics-chameleon-ilmn-6seq-50k-001.json", 1695, 2108, 31672.693626, 9382784915.0},
    {"helloworld-chain-5-chameleon.json", 5, 4, 601.488000, 66666668.0},
    {"helloworld-forkjoin-10-chameleon.json", 10, 16, 1234.444800, 145454560.0},
    {"montage-chameleon-2mass-005d-001.json", 58, 114, 266.071200, 549181584.0},
    {"montage-chameleon-2mass-05d-001.json", 1738, 4698, 20609.188444, 25746153604.0},
    {"seismology-chameleon-100p-001.json", 101, 100, 122.067350, 605920.0},
    {"soykb-chameleon-10fastq-10ch-001.json", 96, 194, 14177.420400, 22288969.0},
    {"srasearch-chameleon-10a-001.json", 22, 30, 8913.896446, 10763460131.0},
};

static void test_wfinstances(void)
{
    for (size_t i = 0; i < sizeof instances / sizeof instances[0]; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "wfinstances/%s", instances[i].file);
        tb_flow *f = read_data(rel);
        TB_ASSERT(f != NULL);
        double work = 0;
        for (size_t t = 0; t < tb_flow_ntasks(f); t++)
            work += tb_flow_task_work(f, t);
        size_t n = tb_flow_ntasks(f), m = tb_flow_nedges(f);
        double bytes = total_edge_data(f);
        tb_flow_destroy(&f);
        if (n != instances[i].tasks || m != instances[i].edges)
            printf("    %s\n", instances[i].file);
        TB_ASSERT_EQ_INT(n, instances[i].tasks);
        TB_ASSERT_EQ_INT(m, instances[i].edges);
        TB_ASSERT_NEAR(work, instances[i].work, 1e-5);
        TB_ASSERT(bytes == instances[i].bytes); /* integers well below 2^53 */
    }
}

/* Single values, from Python as above: work = runtimeInSeconds * MHz / 1000
 * of the task's machine, bytes = the shared files of the pair. */
static void test_wfinstance_values(void)
{
    tb_flow *f = read_data("wfinstances/1000genome-chameleon-2ch-100k-001.json");
    TB_ASSERT(f != NULL);
    /* 53.6 s on pegasus-5, 1200 MHz */
    TB_ASSERT_NEAR(work_of(f, "individuals_ID0000001"), 64.32, 1e-9);
    TB_ASSERT(edge_data(f, "individuals_ID0000001", "individuals_merge_ID0000011") == 28281);
    TB_ASSERT_EQ_INT(tb_flow_nfiles(f), 64);
    tb_flow_destroy(&f);

    f = read_data("wfinstances/montage-chameleon-2mass-05d-001.json");
    TB_ASSERT(f != NULL);
    /* 0.134 s on compute-5, 1284 MHz */
    TB_ASSERT_NEAR(work_of(f, "mDiffFit_ID0000101"), 0.172056, 1e-12);
    TB_ASSERT(edge_data(f, "mDiffFit_ID0000101", "mConcatFit_ID0000495") == 268);
    tb_flow_destroy(&f);

    f = read_data("wfinstances/blast-chameleon-small-001.json");
    TB_ASSERT(f != NULL);
    /* worker-2.novalocal has no recorded speed: work = runtime */
    TB_ASSERT(work_of(f, "blastall_ID000002") == 9.798843);
    TB_ASSERT(edge_data(f, "blastall_ID000002", "cat_blast_ID000042") == 19);
    tb_flow_destroy(&f);
}

/* WfFormat 1.4 and earlier: one task list with runtimes and files inline,
 * parents by name, machine clocks in cpu.speed. */
static void test_wfjson_old_layout(void)
{
    const char *text =
        "{\"name\": \"old\", \"schemaVersion\": \"1.4\", \"workflow\": {\n"
        "  \"makespanInSeconds\": 10, \"executedAt\": \"x\",\n"
        "  \"machines\": [{\"nodeName\": \"n1\", \"cpu\": {\"count\": 4, \"speed\": 2000}}],\n"
        "  \"tasks\": [\n"
        "    {\"name\": \"a\", \"type\": \"compute\", \"runtimeInSeconds\": 1.5,\n"
        "     \"machine\": \"n1\", \"parents\": [],\n"
        "     \"files\": [{\"link\": \"output\", \"name\": \"x\", \"sizeInBytes\": 7},\n"
        "               {\"link\": \"output\", \"name\": \"y\", \"size\": 5}]},\n"
        "    {\"name\": \"b\", \"type\": \"compute\", \"runtime\": 2, \"parents\": [\"a\"],\n"
        "     \"files\": [{\"link\": \"input\", \"name\": \"x\", \"sizeInBytes\": 7},\n"
        "               {\"link\": \"input\", \"name\": \"y\", \"size\": 5}]}]}}\n";
    char err[512] = "";
    tb_flow *f = NULL;
    int rc = tb_flow_parse(text, strlen(text), "old.json", TB_FLOW_FORMAT_AUTO, &f, err,
                           sizeof err);
    if (rc != TB_OK)
        printf("    %s\n", err);
    TB_ASSERT_OK(rc);
    TB_ASSERT_EQ_INT(tb_flow_ntasks(f), 2);
    TB_ASSERT_EQ_INT(tb_flow_nedges(f), 1);
    TB_ASSERT(work_of(f, "a") == 3.0); /* 1.5 s at 2000 MHz */
    TB_ASSERT(work_of(f, "b") == 2.0);
    TB_ASSERT(edge_data(f, "a", "b") == 12);
    tb_flow_destroy(&f);
}

/* ---------------------------------------------------------------- */
/* DAX                                                               */
/* ---------------------------------------------------------------- */

static void test_dax_diamond(void)
{
    tb_flow *f = read_data("dax/diamond.dax");
    TB_ASSERT(f != NULL);
    TB_ASSERT_EQ_INT(tb_flow_ntasks(f), 4);
    TB_ASSERT_EQ_INT(tb_flow_nedges(f), 4);
    TB_ASSERT_EQ_INT(tb_flow_nfiles(f), 7);
    TB_ASSERT_STR_EQ(tb_flow_task_id(f, 0), "ID0000001");
    TB_ASSERT(work_of(f, "ID0000001") == 10);
    TB_ASSERT(work_of(f, "ID0000002") == 20.5);
    TB_ASSERT(work_of(f, "ID0000003") == 21.5);
    TB_ASSERT(work_of(f, "ID0000004") == 5);
    TB_ASSERT(edge_data(f, "ID0000001", "ID0000002") == 2011); /* f.b1 + f.meta */
    TB_ASSERT(edge_data(f, "ID0000001", "ID0000003") == 3000);
    TB_ASSERT(edge_data(f, "ID0000002", "ID0000004") == 400);
    TB_ASSERT(edge_data(f, "ID0000003", "ID0000004") == 500);
    TB_ASSERT(isnan(edge_data(f, "ID0000001", "ID0000004")));
    /* findrange x2 share parent and child: one independent task set */
    TB_ASSERT_EQ_INT(tb_flow_nits(f), 1);
    tb_flow_destroy(&f);
}

static void test_dax_profile(void)
{
    tb_flow *f = read_data("dax/profile.dax");
    TB_ASSERT(f != NULL);
    TB_ASSERT_EQ_INT(tb_flow_ntasks(f), 3);
    TB_ASSERT_EQ_INT(tb_flow_nedges(f), 2);
    TB_ASSERT(work_of(f, "a") == 12.5);
    TB_ASSERT(work_of(f, "b") == 3);
    TB_ASSERT(work_of(f, "c") == 0);
    TB_ASSERT(edge_data(f, "a", "b") == 64);
    TB_ASSERT(edge_data(f, "b", "c") == 8);
    tb_flow_destroy(&f);
}

/* A job's command: its name= and the words of its <argument>, file
 * elements standing for their names (DAX 3 and 2). */
static void test_dax_commands(void)
{
    tb_flow *f = read_data("dax/diamond.dax");
    TB_ASSERT(f != NULL);
    const char *pre[] = {"-i", "f.a", "-o", "f.b1", "f.b2", NULL};
    int ok = has_command(f, "ID0000001", "preprocess", pre) == 0 &&
             has_command(f, "ID0000002", "findrange", NULL) == 0; /* no <argument> */
    tb_flow_destroy(&f);
    TB_ASSERT(ok);

    const char *dax =
        "<?xml version=\"1.0\"?>\n"
        "<adag xmlns=\"http://pegasus.isi.edu/schema/DAX\" version=\"3.4\" name=\"c\">\n"
        "  <job id=\"a\" namespace=\"montage\" name=\"mProject\" version=\"1.0\">\n"
        "    <argument>-X  <file name=\"in.fits\"/>\n\t-o<file name=\"p.fits\"/> "
        "<file name=\"h\"/>.hdr<file name=\"2\"/> x&amp;y </argument>\n"
        "    <uses name=\"in.fits\" link=\"input\"/>\n"
        "  </job>\n"
        "  <job id=\"b\" name=\"split\"><argument>-a <filename file=\"in.dat\" "
        "link=\"input\"/> -b</argument></job>\n"
        "  <job id=\"c\" name=\"merge\"><argument>  </argument></job>\n"
        "  <job id=\"d\"/>\n"
        "  <dag id=\"s\" name=\"sub\" file=\"s.dag\"><argument>-v</argument></dag>\n"
        "</adag>\n";
    char err[512] = "";
    TB_ASSERT_OK(tb_flow_parse(dax, strlen(dax), "c.dax", TB_FLOW_FORMAT_AUTO, &f, err,
                               sizeof err));
    const char *a[] = {"-X", "in.fits", "-op.fits", "h.hdr2", "x&y", NULL};
    const char *b[] = {"-a", "in.dat", "-b", NULL};
    ok = has_command(f, "a", "mProject", a) == 0 && has_command(f, "b", "split", b) == 0 &&
         has_command(f, "c", "merge", NULL) == 0 && has_command(f, "d", NULL, NULL) == 0 &&
         has_command(f, "s", NULL, NULL) == 0;
    /* WfFormat keeps them */
    tb_flow *g = ok ? round_trip(f, "dax-cmd.json") : NULL;
    ok = ok && g != NULL && has_command(g, "a", "mProject", a) == 0 &&
         has_command(g, "b", "split", b) == 0 && has_command(g, "c", "merge", NULL) == 0 &&
         has_command(g, "d", NULL, NULL) == 0;
    tb_flow_destroy(&g);
    tb_flow_destroy(&f);
    TB_ASSERT(ok);

    TB_ASSERT(fails_with("<adag>\n<job id=\"a\"><argument>x</argument></job></adag>", "x.dax",
                         TB_ERR_PARSE,
                         "x.dax:2: <job id='a'>: <argument> without a name= (the program)") == 0);
    TB_ASSERT(fails_with("<adag><job id=\"a\" name=\"p\"><argument>x <file/></argument></job>"
                         "</adag>",
                         "x.dax", TB_ERR_PARSE, "x.dax:1: <argument>: <file> without a file name")
              == 0);
    /* a hard limit on the argument text, not unbounded growth */
    size_t n = ((size_t)1 << 20) + 64;
    char *big = malloc(n + 128);
    TB_ASSERT(big != NULL);
    int w = snprintf(big, 128, "<adag>\n<job id=\"a\" name=\"p\">\n<argument>");
    memset(big + w, 'x', n);
    strcpy(big + w + n, "</argument></job></adag>");
    int too_long = fails_with(big, "x.dax", TB_ERR_PARSE, "x.dax:3: <argument>: too long");
    free(big);
    TB_ASSERT(too_long == 0);
}

/* ---------------------------------------------------------------- */
/* Writing WfFormat                                                  */
/* ---------------------------------------------------------------- */

static void test_write_instance(void)
{
    const char *rel[] = {"wfinstances/montage-chameleon-2mass-005d-001.json",
                         "wfinstances/1000genome-chameleon-2ch-100k-001.json", "dax/diamond.dax",
                         "dax/profile.dax"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        tb_flow *f = read_data(rel[i]);
        TB_ASSERT(f != NULL);
        tb_flow *g = round_trip(f, "out.json");
        int same = g != NULL ? same_flow(f, g) : -1;
        /* every edge had files: nothing added */
        size_t nf = tb_flow_nfiles(f), ng = tb_flow_nfiles(g);
        tb_flow_destroy(&f);
        tb_flow_destroy(&g);
        if (same != 0)
            printf("    %s\n", rel[i]);
        TB_ASSERT(same == 0);
        TB_ASSERT_EQ_INT(ng, nf);
    }
}

/* WfFormat 1.5's execution.tasks[].command is the task's command, and a
 * written workflow keeps it. */
static void test_commands(void)
{
    tb_flow *f = read_data("wfinstances/montage-chameleon-2mass-005d-001.json");
    TB_ASSERT(f != NULL);
    size_t t;
    TB_ASSERT(tb_flow_find(f, "mProject_ID0000001", &t) == TB_OK);
    TB_ASSERT(strcmp(tb_flow_task_program(f, t), "mProject") == 0);
    TB_ASSERT_EQ_INT(tb_flow_task_nargs(f, t), 4);
    TB_ASSERT(strcmp(tb_flow_task_arg(f, t, 0), "-X") == 0);
    TB_ASSERT(strcmp(tb_flow_task_arg(f, t, 3), "region-oversized.hdr") == 0);
    TB_ASSERT(tb_flow_task_arg(f, t, 4) == NULL);
    tb_flow *g = round_trip(f, "cmd.json");
    TB_ASSERT(g != NULL);
    for (size_t k = 0; k < tb_flow_ntasks(f); k++) {
        TB_ASSERT(strcmp(tb_flow_task_program(f, k), tb_flow_task_program(g, k)) == 0);
        TB_ASSERT_EQ_INT(tb_flow_task_nargs(f, k), tb_flow_task_nargs(g, k));
        for (size_t i = 0; i < tb_flow_task_nargs(f, k); i++)
            TB_ASSERT(strcmp(tb_flow_task_arg(f, k, i), tb_flow_task_arg(g, k, i)) == 0);
    }
    tb_flow_destroy(&g);
    tb_flow_destroy(&f);
    /* a task without one, and bad ones */
    TB_ASSERT(fails_with("{\"schemaVersion\": \"1.5\", \"workflow\": {\"specification\": "
                         "{\"tasks\": [{\"id\": \"a\", \"parents\": [], \"children\": []}], "
                         "\"files\": []}, \"execution\": {\"tasks\": [{\"id\": \"a\", "
                         "\"runtimeInSeconds\": 1, \"command\": {\"arguments\": []}}]}}}",
                         "c.json", TB_ERR_PARSE, "execution.tasks[0].command.program: missing") == 0);
    TB_ASSERT(fails_with("{\"schemaVersion\": \"1.5\", \"workflow\": {\"specification\": "
                         "{\"tasks\": [{\"id\": \"a\", \"parents\": [], \"children\": []}], "
                         "\"files\": []}, \"execution\": {\"tasks\": [{\"id\": \"a\", "
                         "\"runtimeInSeconds\": 1, \"command\": {\"program\": \"x\", "
                         "\"arguments\": [1]}}]}}}",
                         "c.json", TB_ERR_PARSE, "command.arguments[0]") == 0);
    f = NULL;
    TB_ASSERT(tb_flow_create(&f, 0) == TB_OK);
    TB_ASSERT(tb_flow_add_task(f, "x", 1, &t) == TB_OK);
    TB_ASSERT(tb_flow_finalize(f) == TB_OK);
    TB_ASSERT(tb_flow_task_program(f, t) == NULL);
    TB_ASSERT_EQ_INT(tb_flow_task_nargs(f, t), 0);
    tb_flow_destroy(&f);
}

/* Each task's files: ascending, each once, inputs and outputs apart. */
static void test_task_files(void)
{
    tb_flow *f = NULL;
    size_t a, b, x, y, z;
    TB_ASSERT(tb_flow_create(&f, 0) == TB_OK);
    TB_ASSERT(tb_flow_add_task(f, "a", 1, &a) == TB_OK);
    TB_ASSERT(tb_flow_add_task(f, "b", 1, &b) == TB_OK);
    TB_ASSERT(tb_flow_add_file(f, "z", 10, &z) == TB_OK);
    TB_ASSERT(tb_flow_add_file(f, "y", 20, &y) == TB_OK);
    TB_ASSERT(tb_flow_add_file(f, "x", 30, &x) == TB_OK);
    TB_ASSERT(tb_flow_task_use(f, b, x, 0) == TB_OK);
    TB_ASSERT(tb_flow_task_use(f, a, y, 1) == TB_OK);
    TB_ASSERT(tb_flow_task_use(f, a, z, 1) == TB_OK);
    TB_ASSERT(tb_flow_task_use(f, b, z, 0) == TB_OK);
    TB_ASSERT(tb_flow_task_use(f, b, z, 0) == TB_OK); /* twice */
    TB_ASSERT(tb_flow_task_use(f, b, y, 1) == TB_OK);
    TB_ASSERT(tb_flow_add_edge(f, a, b, -1) == TB_OK);
    TB_ASSERT(tb_flow_finalize(f) == TB_OK);
    const uint32_t *v;
    TB_ASSERT_EQ_INT(tb_flow_task_files(f, a, 0, &v), 0);
    TB_ASSERT_EQ_INT(tb_flow_task_files(f, a, 1, &v), 2);
    TB_ASSERT(v[0] == z && v[1] == y);
    TB_ASSERT_EQ_INT(tb_flow_task_files(f, b, 0, &v), 2);
    TB_ASSERT(v[0] == z && v[1] == x);
    TB_ASSERT_EQ_INT(tb_flow_task_files(f, b, 1, &v), 1);
    TB_ASSERT(v[0] == y);
    TB_ASSERT(strcmp(tb_flow_file_name(f, x), "x") == 0 && tb_flow_file_size(f, x) == 30);
    TB_ASSERT(tb_flow_file_name(f, 3) == NULL);
    tb_flow_destroy(&f);
}

/* Edges whose data is not (all) in files get files of their own. */
static void test_write_edge_files(void)
{
    tb_flow *f = NULL;
    size_t a, b, c, d, x, f1, f2;
    TB_ASSERT_OK(tb_flow_create(&f, 0));
    TB_ASSERT_OK(tb_flow_set_name(f, "edges"));
    TB_ASSERT_OK(tb_flow_add_task(f, "a", 1.25, &a));
    TB_ASSERT_OK(tb_flow_add_task(f, "b", 0, &b));
    TB_ASSERT_OK(tb_flow_add_task(f, "c", 1e-3, &c));
    TB_ASSERT_OK(tb_flow_add_task(f, "d", 0.1, &d));
    /* a file called like the one a->b would get, read by nobody */
    TB_ASSERT_OK(tb_flow_add_file(f, "a__b", 3, &x));
    TB_ASSERT_OK(tb_flow_add_file(f, "f1", 10, &f1));
    TB_ASSERT_OK(tb_flow_add_file(f, "f2", 8, &f2));
    TB_ASSERT_OK(tb_flow_task_use(f, a, x, 1));
    TB_ASSERT_OK(tb_flow_task_use(f, a, f1, 1));
    TB_ASSERT_OK(tb_flow_task_use(f, c, f1, 0));
    TB_ASSERT_OK(tb_flow_task_use(f, a, f2, 1));
    TB_ASSERT_OK(tb_flow_task_use(f, d, f2, 0));
    TB_ASSERT_OK(tb_flow_add_edge(f, a, b, 5));    /* no file: "a__b#2" */
    TB_ASSERT_OK(tb_flow_add_edge(f, a, c, -1));   /* f1: 10 */
    TB_ASSERT_OK(tb_flow_add_edge(f, b, d, 7.5));  /* fractional bytes */
    TB_ASSERT_OK(tb_flow_add_edge(f, c, d, 0));    /* nothing to carry */
    TB_ASSERT_OK(tb_flow_add_edge(f, a, d, 20));   /* f2 has 8 of them */
    TB_ASSERT_OK(tb_flow_finalize(f));
    TB_ASSERT(edge_data(f, "a", "c") == 10);

    tb_flow *g = round_trip(f, "edges.json");
    int same = g != NULL ? same_flow(f, g) : -1;
    size_t nf = tb_flow_nfiles(f), ng = tb_flow_nfiles(g);
    tb_flow_destroy(&f);
    tb_flow_destroy(&g);
    TB_ASSERT(same == 0);
    TB_ASSERT_EQ_INT(ng, nf + 3); /* a->b, b->d, a->d */
}

/* The written file, as text: the fields the schema requires. */
static void test_write_text(void)
{
    tb_flow *f = read_data("dax/profile.dax");
    TB_ASSERT(f != NULL);
    char path[1024], err[512] = "";
    tb_test_path(path, sizeof path, "profile.json");
    int rc = tb_flow_write(f, path, TB_FLOW_FORMAT_AUTO, err, sizeof err);
    tb_flow_destroy(&f);
    TB_ASSERT_OK(rc);
    char text[8192];
    TB_ASSERT(slurp(path, text, sizeof text) == 0);
    TB_ASSERT(strstr(text, "\"schemaVersion\": \"1.5\"") != NULL);
    TB_ASSERT(strstr(text, "\"name\": \"profile.dax\"") != NULL);
    TB_ASSERT(strstr(text, "\"makespanInSeconds\": 0") != NULL);
    TB_ASSERT(strstr(text, "\"executedAt\": ") != NULL);
    /* the job's name is its program (it has no <argument>) */
    TB_ASSERT(strstr(text, "{\"id\": \"a\", \"runtimeInSeconds\": 12.5, \"command\": "
                           "{\"program\": \"split\", \"arguments\": []}}") != NULL);
    TB_ASSERT(strstr(text, "{\"id\": \"part.dat\", \"sizeInBytes\": 64}") != NULL);
    TB_ASSERT(strstr(text, "\"parents\": [\"a\"], \"children\": [\"c\"]") != NULL);
}

/* ---------------------------------------------------------------- */
/* Writing Makeflow                                                  */
/* ---------------------------------------------------------------- */

/* Write f as Makeflow (synthetic or not) to a scratch file; its text in
 * text, or the error in text with the code returned. */
static int makeflow_text(const tb_flow *f, int synthetic, char *text, size_t n)
{
    char path[1024];
    tb_test_path(path, sizeof path, "t.makeflow");
    int rc = synthetic ? tb_flow_write_makeflow(f, path, 0.5, 1e-3, 1, text, n)
                       : tb_flow_write(f, path, TB_FLOW_FORMAT_AUTO, text, n);
    if (rc == TB_OK && slurp(path, text, n) != 0)
        rc = TB_ERR_IO;
    return rc;
}

/* Quoting for Makeflow and sh; rules, markers for edges without files, and
 * the synthetic commands. */
static void test_write_makeflow(void)
{
    tb_flow *f = NULL;
    size_t a, b, c, o, in;
    TB_ASSERT_OK(tb_flow_create(&f, 0));
    TB_ASSERT_OK(tb_flow_set_name(f, "q.json"));
    TB_ASSERT_OK(tb_flow_add_task(f, "a", 2, &a));
    TB_ASSERT_OK(tb_flow_add_task(f, "b", 0, &b));
    TB_ASSERT_OK(tb_flow_add_task(f, "c", 1, &c));
    TB_ASSERT_OK(tb_flow_add_file(f, "out/o.txt", 1500, &o));
    TB_ASSERT_OK(tb_flow_add_file(f, "in.txt", 10, &in));
    TB_ASSERT_OK(tb_flow_task_use(f, a, in, 0));
    TB_ASSERT_OK(tb_flow_task_use(f, a, o, 1));
    TB_ASSERT_OK(tb_flow_task_use(f, c, o, 0));
    TB_ASSERT_OK(tb_flow_add_edge(f, a, b, 0)); /* no file: a marker */
    TB_ASSERT_OK(tb_flow_add_edge(f, a, c, -1));
    TB_ASSERT_OK(tb_flow_add_edge(f, b, c, 0));
    const char *args[] = {"it's a", "$x #y \\z", "-o=1", ""};
    TB_ASSERT_OK(tb_flow_set_command(f, a, "my prog", 4, args));
    TB_ASSERT_OK(tb_flow_set_command(f, b, "true", 0, NULL));
    TB_ASSERT_OK(tb_flow_finalize(f));
    char text[4096];
    /* c has no command */
    TB_ASSERT_EQ_INT(makeflow_text(f, 0, text, sizeof text), TB_ERR_INVALID);
    TB_ASSERT(strstr(text, "q.json: task 'c' has no command") != NULL);

    TB_ASSERT_OK(makeflow_text(f, 1, text, sizeof text));
    TB_ASSERT(strstr(text, "\n# input\nin.txt:\n\thead -c 0 /dev/zero > in.txt\n") != NULL);
    TB_ASSERT(strstr(text, "\nout/o.txt .tenbin-done-0: in.txt\n\tsleep 1 && mkdir -p out && "
                           "head -c 2 /dev/zero > out/o.txt && touch .tenbin-done-0\n") != NULL);
    TB_ASSERT(strstr(text, "\n.tenbin-done-1: .tenbin-done-0\n\ttouch .tenbin-done-1\n") != NULL);
    TB_ASSERT(strstr(text, "\n# task c\n.tenbin-done-2: out/o.txt .tenbin-done-1\n\tsleep 0.5 "
                           "&& touch .tenbin-done-2\n") != NULL);
    tb_flow_destroy(&f);

    /* every task with a command: each word quoted for sh, then escaped for
     * Makeflow (\, $ and #; a quote as '\\\'') */
    TB_ASSERT_OK(tb_flow_create(&f, 0));
    TB_ASSERT_OK(tb_flow_add_task(f, "a", 2, &a));
    TB_ASSERT_OK(tb_flow_add_file(f, "o.txt", 1500, &o));
    TB_ASSERT_OK(tb_flow_task_use(f, a, o, 1));
    TB_ASSERT_OK(tb_flow_set_command(f, a, "my prog", 4, args));
    TB_ASSERT_OK(tb_flow_finalize(f));
    TB_ASSERT_OK(makeflow_text(f, 0, text, sizeof text));
    TB_ASSERT(strstr(text, "\n# task a\no.txt:\n\t'my prog' 'it'\\\\\\''s a' "
                           "'\\$x \\#y \\\\z' '-o=1' ''\n") != NULL);
    tb_flow_destroy(&f);
}

/* What Makeflow cannot express: one line naming the culprit. */
static void test_makeflow_errors(void)
{
    static const struct {
        const char *file, *arg, *want;
        int second_writer;
    } cases[] = {
        {"a b.txt", "x", "file 'a b.txt': Makeflow cannot name it", 0},
        {"x:y", "x", "file 'x:y': Makeflow cannot name it", 0},
        {"@x", "x", "file '@x': Makeflow cannot name it", 0},
        {"a->b", "x", "file 'a->b': Makeflow cannot name it", 0},
        {".tenbin-done-0", "x", "file '.tenbin-done-0': Makeflow cannot name it", 0},
        {"o.txt", "line\nbreak", "task 'a': an argument has a newline", 0},
        {"o.txt", "x", "file 'o.txt' is written by tasks 'a' and 'b'", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_flow *f = NULL;
        size_t a, b, o;
        TB_ASSERT_OK(tb_flow_create(&f, 0));
        TB_ASSERT_OK(tb_flow_add_task(f, "a", 1, &a));
        TB_ASSERT_OK(tb_flow_add_task(f, "b", 1, &b));
        TB_ASSERT_OK(tb_flow_add_file(f, cases[i].file, 1, &o));
        TB_ASSERT_OK(tb_flow_task_use(f, a, o, 1));
        TB_ASSERT_OK(tb_flow_task_use(f, b, o, cases[i].second_writer));
        TB_ASSERT_OK(tb_flow_set_command(f, a, "p", 1, &cases[i].arg));
        TB_ASSERT_OK(tb_flow_set_command(f, b, "p", 0, NULL));
        TB_ASSERT_OK(tb_flow_finalize(f));
        char text[1024] = "";
        int rc = makeflow_text(f, 0, text, sizeof text);
        tb_flow_destroy(&f);
        if (rc != TB_ERR_INVALID || strstr(text, cases[i].want) == NULL)
            printf("    %s: got %s \"%s\"\n", cases[i].want, tb_err_name(rc), text);
        TB_ASSERT_EQ_INT(rc, TB_ERR_INVALID);
        TB_ASSERT(strstr(text, cases[i].want) != NULL);
    }
    /* a task that reads what it writes; bad scales */
    tb_flow *f = NULL;
    size_t a, o;
    char path[1024], err[512] = "";
    TB_ASSERT_OK(tb_flow_create(&f, 0));
    TB_ASSERT_OK(tb_flow_add_task(f, "a", 1, &a));
    TB_ASSERT_OK(tb_flow_add_file(f, "o", 1, &o));
    TB_ASSERT_OK(tb_flow_task_use(f, a, o, 0));
    TB_ASSERT_OK(tb_flow_task_use(f, a, o, 1));
    TB_ASSERT_OK(tb_flow_finalize(f));
    tb_test_path(path, sizeof path, "rw.makeflow");
    int rc = tb_flow_write_makeflow(f, path, 1, 1, 1, err, sizeof err);
    int range = tb_flow_write_makeflow(f, path, -1, 1, 1, NULL, 0);
    tb_flow_destroy(&f);
    TB_ASSERT_EQ_INT(rc, TB_ERR_INVALID);
    TB_ASSERT(strstr(err, "task 'a' reads and writes file 'o'") != NULL);
    TB_ASSERT_EQ_INT(range, TB_ERR_RANGE);
    TB_ASSERT(access(path, F_OK) != 0);
}

/* ---------------------------------------------------------------- */
/* Formats and errors                                                */
/* ---------------------------------------------------------------- */

static void test_format_of(void)
{
    TB_ASSERT_EQ_INT(tb_flow_format_of("a/b.json"), TB_FLOW_FORMAT_WFJSON);
    TB_ASSERT_EQ_INT(tb_flow_format_of("B.JSON"), TB_FLOW_FORMAT_WFJSON);
    TB_ASSERT_EQ_INT(tb_flow_format_of("x.dax"), TB_FLOW_FORMAT_DAX);
    TB_ASSERT_EQ_INT(tb_flow_format_of("x.xml"), TB_FLOW_FORMAT_DAX);
    TB_ASSERT_EQ_INT(tb_flow_format_of("x.makeflow"), TB_FLOW_FORMAT_MAKEFLOW);
    TB_ASSERT_EQ_INT(tb_flow_format_of("x.MF"), TB_FLOW_FORMAT_MAKEFLOW);
    TB_ASSERT_EQ_INT(tb_flow_format_of("dag.txt"), TB_FLOW_FORMAT_TEXT);
    TB_ASSERT_EQ_INT(tb_flow_format_of("dir.json/dag"), TB_FLOW_FORMAT_TEXT);
    TB_ASSERT_EQ_INT(tb_flow_format_of("dag"), TB_FLOW_FORMAT_TEXT);
}

/* A valid one-task workflow around the tasks list `tasks`. */
#define WF(tasks)                                                                   \
    "{\"name\": \"t\", \"schemaVersion\": \"1.5\",\n"                               \
    " \"workflow\": {\"specification\": {\"tasks\": [\n" tasks "]}}}\n"
#define T(id, parents) "{\"name\": \"" id "\", \"id\": \"" id "\", \"parents\": " parents \
                       ", \"children\": []}"

static void test_wfjson_errors(void)
{
    TB_ASSERT(fails_with(WF(T("a", "[]") ",\n" T("b", "[\"x\"]")), "wf.json", TB_ERR_INVALID,
                         "wf.json: workflow.specification.tasks[1].parents[0]: unknown task "
                         "'x'") == 0);
    TB_ASSERT(fails_with(WF(T("a", "[]") ",\n" T("a", "[]")), "wf.json", TB_ERR_INVALID,
                         "wf.json: workflow.specification.tasks[1].id: duplicate task 'a'") == 0);
    TB_ASSERT(fails_with(WF(T("a", "[\"b\"]") ",\n" T("b", "[\"a\"]")), "wf.json",
                         TB_ERR_INVALID, "wf.json: cycle: a -> b -> a") == 0);
    TB_ASSERT(fails_with(WF(T("a", "[\"a\"]")), "wf.json", TB_ERR_INVALID,
                         "tasks[0].parents[0]: task 'a' depends on itself") == 0);
    TB_ASSERT(fails_with(WF(T("a", "3")), "wf.json", TB_ERR_PARSE,
                         "wf.json: workflow.specification.tasks[0].parents: expected an array, "
                         "got a number") == 0);
    TB_ASSERT(fails_with(WF(T("a", "[3]")), "wf.json", TB_ERR_PARSE,
                         "tasks[0].parents[0]: expected a string, got a number") == 0);
    TB_ASSERT(fails_with("{\"workflow\": {\"specification\": {\"tasks\": [\n"
                         "  {\"id\": \"a\", \"parents\": [],, }]}}}",
                         "wf.json", TB_ERR_PARSE, "wf.json: not JSON (near line 2)") == 0);
    TB_ASSERT(fails_with("{\"workflow\": {}} x", "wf.json", TB_ERR_PARSE, "not JSON") == 0);
    TB_ASSERT(fails_with("[1, 2]", "wf.json", TB_ERR_PARSE,
                         "wf.json: expected a JSON object, got an array") == 0);
    TB_ASSERT(fails_with("{\"name\": \"x\"}", "wf.json", TB_ERR_PARSE, "workflow: missing") == 0);
    TB_ASSERT(fails_with("{\"schemaVersion\": \"2.0\", \"workflow\": {}}", "wf.json",
                         TB_ERR_PARSE, "schemaVersion '2.0'") == 0);
    TB_ASSERT(fails_with("{\"workflow\": {\"specification\": {\"tasks\": [{\"id\": \"a\","
                         " \"inputFiles\": [\"nope\"]}]}}}",
                         "wf.json", TB_ERR_INVALID,
                         "tasks[0].inputFiles[0]: unknown file 'nope'") == 0);
    TB_ASSERT(fails_with("{\"workflow\": {\"specification\": {\"tasks\": [{\"id\": \"a\"}]},"
                         " \"execution\": {\"tasks\": [{\"id\": \"a\", \"runtimeInSeconds\": "
                         "-1}]}}}",
                         "wf.json", TB_ERR_INVALID,
                         "workflow.execution.tasks[0].runtimeInSeconds: must be a finite") == 0);
    TB_ASSERT(fails_with("{\"workflow\": {\"specification\": {\"tasks\": [{\"id\": \"a\"}]},"
                         " \"execution\": {\"tasks\": [{\"id\": \"b\", \"runtimeInSeconds\": "
                         "1}]}}}",
                         "wf.json", TB_ERR_INVALID,
                         "workflow.execution.tasks[0].id: unknown task 'b'") == 0);
}

static void test_dax_errors(void)
{
    const char *head = "<?xml version=\"1.0\"?>\n<adag name=\"x\">\n"
                       "  <job id=\"j1\" runtime=\"1\"/>\n";
    char text[1024];
    snprintf(text, sizeof text, "%s  <child ref=\"j1\">\n    <parent ref=\"j9\"/>\n"
             "  </child>\n</adag>\n", head);
    TB_ASSERT(fails_with(text, "x.dax", TB_ERR_INVALID, "x.dax:5: <parent ref='j9'>: unknown job")
              == 0);
    snprintf(text, sizeof text, "%s  <child ref=\"j2\"/>\n</adag>\n", head);
    TB_ASSERT(fails_with(text, "x.dax", TB_ERR_INVALID, "x.dax:4: <child ref='j2'>: unknown job")
              == 0);
    snprintf(text, sizeof text, "%s  <job id=\"j1\"/>\n</adag>\n", head);
    TB_ASSERT(fails_with(text, "x.dax", TB_ERR_INVALID, "x.dax:4: <job id='j1'>: duplicate job")
              == 0);
    snprintf(text, sizeof text, "%s  <job id=\"j2\" runtime=\"1O\"/>\n</adag>\n", head);
    TB_ASSERT(fails_with(text, "x.dax", TB_ERR_PARSE,
                         "x.dax:4: <job runtime='1O'>: malformed number") == 0);
    snprintf(text, sizeof text, "%s  <job id=\"j2\"/>\n  <child ref=\"j1\"><parent ref=\"j2\"/>"
             "</child>\n  <child ref=\"j2\"><parent ref=\"j1\"/></child>\n</adag>\n", head);
    TB_ASSERT(fails_with(text, "x.dax", TB_ERR_INVALID, "x.dax: cycle: j1 -> j2 -> j1") == 0);
    TB_ASSERT(fails_with("<dag><job id=\"a\"/></dag>", "x.dax", TB_ERR_PARSE,
                         "x.dax:1: <dag>: not a DAX") == 0);
    TB_ASSERT(fails_with("<adag><job id=\"a\"><uses file=\"f\" link=\"sideways\"/></job></adag>",
                         "x.dax", TB_ERR_PARSE, "link='sideways'>: unknown link") == 0);

    char path[1024], err[512] = "";
    tb_flow *f = NULL;
    data_path(path, sizeof path, "dax/malformed.dax");
    TB_ASSERT_EQ_INT(tb_flow_read(path, TB_FLOW_FORMAT_AUTO, &f, err, sizeof err), TB_ERR_PARSE);
    TB_ASSERT(f == NULL);
    TB_ASSERT(strstr(err, "malformed.dax:5: not well-formed (invalid token)") != NULL);
}

/* Every proper prefix of a valid file is an error, never a crash. */
static void test_truncated(void)
{
    const char *rel[] = {"dax/diamond.dax", "wfinstances/helloworld-chain-5-chameleon.json"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char path[1024];
        data_path(path, sizeof path, rel[i]);
        FILE *fp = fopen(path, "rb");
        TB_ASSERT(fp != NULL);
        static char text[16384];
        size_t len = fread(text, 1, sizeof text, fp);
        fclose(fp);
        TB_ASSERT(len > 0 && len < sizeof text);
        for (size_t n = 0; n < len; n++) {
            /* trailing blanks of a complete document are allowed */
            size_t k = len;
            while (k > 0 && strchr(" \t\r\n", text[k - 1]) != NULL)
                k--;
            if (n >= k)
                break;
            char err[256] = "";
            tb_flow *f = NULL;
            /* by name: a short prefix does not show its format yet */
            tb_flow_format fmt = tb_flow_format_of(rel[i]);
            int rc = tb_flow_parse(text, n, rel[i], fmt, &f, err, sizeof err);
            if (rc == TB_OK || err[0] == '\0')
                printf("    %s: %zu bytes: %s\n", rel[i], n, err);
            TB_ASSERT(rc != TB_OK && f == NULL && err[0] != '\0');
            /* no message buffer: still an error, no crash */
            TB_ASSERT(tb_flow_parse(text, n, rel[i], fmt, &f, NULL, 0) != TB_OK);
        }
    }
}

static void test_io_errors(void)
{
    char path[1024], err[512] = "";
    tb_flow *f = NULL;
    tb_test_path(path, sizeof path, "no-such-file.json");
    TB_ASSERT_EQ_INT(tb_flow_read(path, TB_FLOW_FORMAT_AUTO, &f, err, sizeof err), TB_ERR_IO);
    TB_ASSERT(f == NULL);
    TB_ASSERT(strstr(err, "no-such-file.json: cannot read: No such file or directory") != NULL);

    f = read_data("dax/profile.dax");
    TB_ASSERT(f != NULL);
    tb_test_path(path, sizeof path, "no-such-dir/out.json");
    err[0] = '\0';
    int rc = tb_flow_write(f, path, TB_FLOW_FORMAT_WFJSON, err, sizeof err);
    int dax = tb_flow_write(f, path, TB_FLOW_FORMAT_DAX, NULL, 0);
    tb_flow_destroy(&f);
    TB_ASSERT_EQ_INT(rc, TB_ERR_IO);
    TB_ASSERT(strstr(err, "out.json: cannot write") != NULL);
    TB_ASSERT_EQ_INT(dax, TB_ERR_UNSUPPORTED);

    TB_ASSERT_OK(tb_flow_create(&f, 0));
    TB_ASSERT_OK(tb_flow_add_task(f, "a", 1, NULL));
    tb_test_path(path, sizeof path, "unfinished.json");
    rc = tb_flow_write(f, path, TB_FLOW_FORMAT_WFJSON, err, sizeof err);
    tb_flow_destroy(&f);
    TB_ASSERT_EQ_INT(rc, TB_ERR_STATE);
    TB_ASSERT(access(path, F_OK) != 0);
}

/* Last: removes the scratch directory if this program made it. */
static void test_cleanup(void)
{
    if (tb_test_scratch_made_)
        TB_ASSERT(rmdir(tb_test_scratch_) == 0);
}

static const tb_test tests[] = {
    {"wfinstances", test_wfinstances},
    {"wfinstance_values", test_wfinstance_values},
    {"wfjson_old_layout", test_wfjson_old_layout},
    {"dax_diamond", test_dax_diamond},
    {"dax_profile", test_dax_profile},
    {"dax_commands", test_dax_commands},
    {"write_instance", test_write_instance},
    {"write_edge_files", test_write_edge_files},
    {"commands", test_commands},
    {"task_files", test_task_files},
    {"write_text", test_write_text},
    {"write_makeflow", test_write_makeflow},
    {"makeflow_errors", test_makeflow_errors},
    {"format_of", test_format_of},
    {"wfjson_errors", test_wfjson_errors},
    {"dax_errors", test_dax_errors},
    {"truncated", test_truncated},
    {"io_errors", test_io_errors},
    {"cleanup", test_cleanup},
    {NULL, NULL}};

TB_TEST_MAIN(tests)
