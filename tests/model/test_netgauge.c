/*
 * test_netgauge.c - tb_loggps_read_netgauge (Netgauge's LogGP table) and the
 * platform hooks: the spec key netgauge=FILE and "network": {"netgauge": FILE}
 * in JSON files.  Data files: tests/data/netgauge/ (found through
 * $TB_SOURCE_DIR, else relative to this source file).
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

static char made[64][600];    /* files written into it */
static size_t nmade;


/* tests/data/netgauge/NAME */
static void data_path(char *buf, size_t n, const char *name)
{
    const char *src = getenv("TB_SOURCE_DIR");
    if (src != NULL && src[0] != '\0') {
        snprintf(buf, n, "%s/tests/data/netgauge/%s", src, name);
        return;
    }
    const char *file = __FILE__, *slash = strrchr(file, '/');
    int dir = slash ? (int)(slash - file) : 1;
    snprintf(buf, n, "%.*s/../data/netgauge/%s", dir, slash ? file : ".", name);
}

static void remember(const char *path)
{
    for (size_t i = 0; i < nmade; i++)
        if (strcmp(made[i], path) == 0)
            return;
    if (nmade < sizeof made / sizeof made[0])
        snprintf(made[nmade++], sizeof made[0], "%s", path);
}

static int write_text(const char *path, const char *text)
{
    remember(path);
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    size_t len = strlen(text);
    int ok = fwrite(text, 1, len, f) == len;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* Writes text to the scratch file `name`; path gets its path. */
static int write_tmp(const char *name, const char *text, char *path, size_t n)
{
    tb_test_path(path, n, name);
    return write_text(path, text);
}

/* Copies the data file `name` into the scratch directory. */
static int copy_data(const char *name)
{
    char from[1024], to[1024], buf[4096];
    data_path(from, sizeof from, name);
    tb_test_path(to, sizeof to, name);
    remember(to);
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    int ok = in != NULL && out != NULL;
    size_t got;
    while (ok && (got = fread(buf, 1, sizeof buf, in)) > 0)
        ok = fwrite(buf, 1, got, out) == got;
    if (in != NULL)
        fclose(in);
    if (out != NULL && fclose(out) != 0)
        ok = 0;
    return ok ? 0 : -1;
}

/* Does s end with suffix? */
static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

#define HEADER                                                                                \
    "# size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r g G lsqu(g,G)\n"        \
    "# to get o: plot \"./loggp.out\" using 1:(($5-$3)/($2-1)-$3)\n"                          \
    "# to get g,G: plot \"./loggp.out\" using 1:($4-$3)/($2-1)\n"

/*
 * A table built from known parameters (microseconds, all exact in binary):
 * L = 50, os = 12, or = 13, g = 16, G = 1/128 (7.8125 ns per byte), n = 10.
 * PRTT(1,0,s) = 2(L + os + or + (s-1)G), PRTT(n,0,s) = PRTT(1,0,s) + 9(g + (s-1)G),
 * PRTT(n,d,s) = PRTT(1,0,s) + 9(os + d) with d = PRTT(1,0,s).
 */
static const char exact_table[] =
    HEADER
    "1 10 150.000000 294.000000 1608.000000 75.000000 12.000000 13.000000 "
    "-nan -nan -nan\n"
    "1025 10 166.000000 382.000000 1768.000000 75.000000 12.000000 13.000000 "
    "15.992188 0.007812 -nan\n"
    "2049 10 182.000000 470.000000 1928.000000 75.000000 12.000000 13.000000 "
    "15.992188 0.007812 0.000000\n"
    "3073 10 198.000000 558.000000 2088.000000 75.000000 12.000000 13.000000 "
    "15.992188 0.007812 0.000000\n";

/* Reads `path`; on failure prints the message. */
static int read_ok(const char *path, tb_loggps *n)
{
    char err[512] = "";
    int rc = tb_loggps_read_netgauge(path, n, err, sizeof err);
    if (rc != TB_OK)
        printf("    %s\n", err);
    return rc;
}

/* ---------------------------------------------------------------- */
/* The reader                                                        */
/* ---------------------------------------------------------------- */

static void test_exact(void)
{
    char path[1024];
    TB_ASSERT(write_tmp("exact.out", exact_table, path, sizeof path) == 0);
    tb_loggps n;
    TB_ASSERT_OK(read_ok(path, &n));
    /* Exact: every step is exact in binary, then one multiplication by 1e-6. */
    TB_ASSERT(n.L == 50 * 1e-6);
    TB_ASSERT(n.os == 12 * 1e-6);
    TB_ASSERT(n.or_ == 13 * 1e-6);
    TB_ASSERT(n.g == 16 * 1e-6);
    TB_ASSERT(n.G == 0.0078125 * 1e-6);
    TB_ASSERT(n.ob == 0 && n.O == 0);
    TB_ASSERT(n.S == 65536);
}

/* G from the larger half only; g, o from the smallest size; a size given
 * twice (Netgauge's protocol-change row) counts once, the later row. */
static void test_large_half(void)
{
    /* gap(s): 20 + s/256 below 4096 bytes (another protocol), 30 + s/64
     * from 4096 on; eight sizes, so the fit uses the last four. */
    static const char table[] =
        HEADER
        "1 10 100 280 1000 50 10 11 -nan -nan -nan\n"
        "1024 10 100 316 1000 50 20 21 0 0 0\n"
        "2048 10 100 352 1000 50 20 21 0 0 0\n"
        "3072 10 100 388 1000 50 20 21 0 0 0\n"
        "4096 10 999 999 1000 50 20 21 0 0 0\n" /* replaced by the next row */
        "4096 10 100 946 1000 50 20 21 0 0 0\n"
        "8192 10 100 1522 1000 50 20 21 0 0 0\n"
        "12288 10 100 2098 1000 50 20 21 0 0 0\n"
        "16384 10 100 2674 1000 50 20 21 0 0 0\n";
    char path[1024];
    TB_ASSERT(write_tmp("half.out", table, path, sizeof path) == 0);
    tb_loggps n;
    TB_ASSERT_OK(read_ok(path, &n));
    TB_ASSERT(n.G == (1.0 / 64) * 1e-6);
    TB_ASSERT(n.os == 10 * 1e-6 && n.or_ == 11 * 1e-6);
    /* s0 = 1: no (s0-1)G correction; gap(1) = (280-100)/9 = 20. */
    TB_ASSERT(n.g == 20 * 1e-6);
    TB_ASSERT(n.L == (50 - 10 - 11) * 1e-6);
}

/* The smallest size above 1 byte: (s0-1)G comes off g and L. */
static void test_first_size_correction(void)
{
    /* As exact_table, starting at 513 bytes: (s0-1)G = 4 us. */
    static const char table[] =
        HEADER
        "513 10 158 338 1688 79 12 13 -nan -nan -nan\n"
        "1025 10 166 382 1768 79 12 13 0 0 0\n"
        "1537 10 174 426 1848 79 12 13 0 0 0\n";
    char path[1024];
    TB_ASSERT(write_tmp("s0.out", table, path, sizeof path) == 0);
    tb_loggps n;
    TB_ASSERT_OK(read_ok(path, &n));
    TB_ASSERT(n.G == 0.0078125 * 1e-6);
    TB_ASSERT(n.g == 16 * 1e-6);
    TB_ASSERT(n.L == 50 * 1e-6);
}

/* Overheads above half the round trip: L is clamped at 0, not negative. */
static void test_clamp(void)
{
    static const char table[] =
        HEADER
        "1 10 40 130 1000 20 15 10 -nan -nan -nan\n"
        "1025 10 48 146 1000 20 15 10 0 0 0\n";
    char path[1024];
    TB_ASSERT(write_tmp("clamp.out", table, path, sizeof path) == 0);
    tb_loggps n;
    TB_ASSERT_OK(read_ok(path, &n));
    TB_ASSERT(n.L == 0);
    TB_ASSERT(n.os == 15 * 1e-6 && n.or_ == 10 * 1e-6);
}

/* Blank lines, CRLF line ends, tabs, indented comments. */
static void test_layout(void)
{
    static const char table[] =
        "  # comment\r\n\r\n"
        "1\t10 150 294 1608 75 12 13 nan nan nan\r\n"
        "\n"
        "1025 10 166 382 1768 75 12 13 inf -inf 1e300\r\n";
    char path[1024];
    TB_ASSERT(write_tmp("layout.out", table, path, sizeof path) == 0);
    tb_loggps n;
    TB_ASSERT_OK(read_ok(path, &n));
    TB_ASSERT(n.G == 0.0078125 * 1e-6);
    TB_ASSERT(n.L == 50 * 1e-6);
}

/* The sample files: values from an independent computation of the same
 * derivation (a script over the file's numbers), to 1e-9 us. */
static void test_samples(void)
{
    char path[1024];
    tb_loggps n;
    data_path(path, sizeof path, "gige-small.out");
    TB_ASSERT_OK(read_ok(path, &n));
    TB_ASSERT_NEAR(n.L, 49.883663e-6, 1e-15);
    TB_ASSERT_NEAR(n.os, 11.949689e-6, 1e-15);
    TB_ASSERT_NEAR(n.or_, 13.509554e-6, 1e-15);
    TB_ASSERT_NEAR(n.g, 14.023278e-6, 1e-15);
    TB_ASSERT_NEAR(n.G, 0.008581688574e-6, 1e-18);

    data_path(path, sizeof path, "gige-mpi.out");
    TB_ASSERT_OK(read_ok(path, &n));
    TB_ASSERT_NEAR(n.L, 50.291570e-6, 1e-15);
    TB_ASSERT_NEAR(n.os, 11.966176e-6, 1e-15);
    TB_ASSERT_NEAR(n.or_, 13.424583e-6, 1e-15);
    TB_ASSERT_NEAR(n.g, 13.904225667e-6, 1e-15);
    TB_ASSERT_NEAR(n.G, 0.008479544084e-6, 1e-18);
    TB_ASSERT(n.S == 65536 && n.ob == 0 && n.O == 0);
}

/* ---------------------------------------------------------------- */
/* Errors                                                            */
/* ---------------------------------------------------------------- */

/* rc and the message after "PATH" for the data file or scratch table. */
static int expect_err(const char *path, int rc_want, const char *after_path)
{
    char err[1024] = "", want[2048];
    tb_loggps n = {.L = -1};
    int rc = tb_loggps_read_netgauge(path, &n, err, sizeof err);
    snprintf(want, sizeof want, "%s%s", path, after_path);
    if (rc != rc_want || strcmp(err, want) != 0 || n.L != -1) {
        printf("    %s: rc %s, want %s\n    got:  %s\n    want: %s\n", path, tb_err_name(rc),
               tb_err_name(rc_want), err, want);
        return -1;
    }
    return 0;
}

static void test_errors_files(void)
{
    char path[1024];
    data_path(path, sizeof path, "no-such-file.out");
    TB_ASSERT(expect_err(path, TB_ERR_IO, ": cannot read: No such file or directory") == 0);
    data_path(path, sizeof path, "no-rows.out");
    TB_ASSERT(expect_err(path, TB_ERR_PARSE,
                         ": no data rows (expected the table of 'netgauge -x loggp -o FILE': "
                         "size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r g G "
                         "lsqu(g,G))") == 0);
    data_path(path, sizeof path, "bad-number.out");
    TB_ASSERT(expect_err(path, TB_ERR_PARSE,
                         ":5: column 8 (o_r): expected a number, got '13.83x245'") == 0);
    data_path(path, sizeof path, "bad-negative.out");
    TB_ASSERT(expect_err(path, TB_ERR_RANGE,
                         ":6: column 7 (o_s): negative value, got '-66.210807'") == 0);
    data_path(path, sizeof path, "screen.txt");
    TB_ASSERT(expect_err(path, TB_ERR_PARSE,
                         ":1: expected 11 columns (size n PRTT(1,0,s) PRTT(n,0,s) "
                         "PRTT(n,PRTT(1,0,s),s) L o_s o_r g G lsqu(g,G)), got 5 (this looks "
                         "like netgauge's screen output; give the file it writes with -o FILE)")
              == 0);
}

typedef struct err_case {
    const char *rows; /* after HEADER: the first row is line 4 */
    int rc;
    const char *msg;  /* after the path */
} err_case;

static const err_case err_cases[] = {
    {"", TB_ERR_PARSE,
     ": no data rows (expected the table of 'netgauge -x loggp -o FILE': size n PRTT(1,0,s) "
     "PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r g G lsqu(g,G))"},
    {"1 10 150 294 1608 75 12 13 0 0\n", TB_ERR_PARSE,
     ":4: expected 11 columns (size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r "
     "g G lsqu(g,G)), got 10"},
    {"1 10 150 294 1608 75 12 13 0 0 0 0 7 8\n", TB_ERR_PARSE,
     ":4: expected 11 columns (size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r "
     "g G lsqu(g,G)), got 14"},
    {"1 10 150 294 1608 75 12 13 0 0 0\n1025 10 1,5 382 1768 75 12 13 0 0 0\n", TB_ERR_PARSE,
     ":5: column 3 (PRTT(1,0,s)): expected a number, got '1,5'"},
    {"1 10 150 294 1608 75 12 nan 0 0 0\n", TB_ERR_PARSE,
     ":4: column 8 (o_r): expected a number, got 'nan'"},
    {"1 10 150 294 1608 75 12 13 0 0.0x 0\n", TB_ERR_PARSE,
     ":4: column 10 (G): expected a number, got '0.0x'"},
    {"1 10 150 294 1608 1e999 12 13 0 0 0\n", TB_ERR_RANGE,
     ":4: column 6 (L): expected a number, got '1e999'"},
    {"1 10 -150 294 1608 75 12 13 0 0 0\n", TB_ERR_RANGE,
     ":4: column 3 (PRTT(1,0,s)): negative value, got '-150'"},
    {"-1 10 150 294 1608 75 12 13 0 0 0\n", TB_ERR_RANGE,
     ":4: column 1 (size): negative value, got '-1'"},
    {"1.5 10 150 294 1608 75 12 13 0 0 0\n", TB_ERR_PARSE,
     ":4: column 1 (size): expected a whole number of bytes, got '1.5'"},
    {"1 1 150 294 1608 75 12 13 0 0 0\n", TB_ERR_RANGE,
     ":4: column 2 (n): expected an integer of at least 2, got '1'"},
    {"2049 10 182 470 1928 75 12 13 0 0 0\n1025 10 166 382 1768 75 12 13 0 0 0\n", TB_ERR_PARSE,
     ":5: sizes must increase, got 1025 after 2049"},
    {"1 10 150 294 1608 75 12 13 0 0 0\n1 10 150 294 1608 75 12 13 0 0 0\n", TB_ERR_PARSE,
     ": only one message size (1 bytes); G needs two or more"},
    {"1 10 150 294 1608 75 12 13 0 0 0\n1025 10 166 310 1768 75 12 13 0 0 0\n"
     "2049 10 182 290 1928 75 12 13 0 0 0\n",
     TB_ERR_RANGE, ": negative G (-0.00390625 us per byte, fitted over sizes 1025 to 2049)"},
};

static void test_errors_table(void)
{
    for (size_t i = 0; i < sizeof err_cases / sizeof err_cases[0]; i++) {
        char text[2048], path[1024], name[32];
        snprintf(text, sizeof text, "%s%s", HEADER, err_cases[i].rows);
        snprintf(name, sizeof name, "err%zu.out", i);
        TB_ASSERT(write_tmp(name, text, path, sizeof path) == 0);
        TB_ASSERT(expect_err(path, err_cases[i].rc, err_cases[i].msg) == 0);
    }
}

static void test_errors_args(void)
{
    tb_loggps n;
    TB_ASSERT_EQ_INT(tb_loggps_read_netgauge(NULL, &n, NULL, 0), TB_ERR_INVALID);
    TB_ASSERT_EQ_INT(tb_loggps_read_netgauge("x", NULL, NULL, 0), TB_ERR_INVALID);
    /* No message buffer: the code alone. */
    TB_ASSERT_EQ_INT(tb_loggps_read_netgauge("no-such-file.out", &n, NULL, 0), TB_ERR_IO);
}

/* ---------------------------------------------------------------- */
/* Platform hooks                                                    */
/* ---------------------------------------------------------------- */

static int same_net(const tb_loggps *a, const tb_loggps *b)
{
    return a->L == b->L && a->os == b->os && a->or_ == b->or_ && a->ob == b->ob &&
           a->O == b->O && a->g == b->g && a->G == b->G && a->S == b->S;
}

static void test_spec(void)
{
    char path[1024], spec[1200], err[1024] = "";
    data_path(path, sizeof path, "gige-mpi.out");
    tb_loggps ng;
    TB_ASSERT_OK(read_ok(path, &ng));
    tb_platform *p = NULL;

    snprintf(spec, sizeof spec, "hosts=4,clusters=2,netgauge=%s", path);
    TB_ASSERT_OK(tb_platform_parse_spec(spec, 1, &p, err, sizeof err));
    TB_ASSERT(same_net(&p->clusters[0].net, &ng) && same_net(&p->clusters[1].net, &ng));
    TB_ASSERT(p->wan.L == ng.L && p->wan.G == ng.G); /* wan-L, wan-G default to L, G */
    tb_platform_destroy(&p);

    /* Explicit keys win, before or after netgauge=; o over the file's os/or. */
    snprintf(spec, sizeof spec, "L=1us,hosts=2,o=2us,netgauge=%s,G=8ns,S=1024,ob=1ns", path);
    TB_ASSERT_OK(tb_platform_parse_spec(spec, 1, &p, err, sizeof err));
    tb_loggps want = ng;
    want.L = 1 * 1e-6;
    want.os = want.or_ = 2 * 1e-6;
    want.G = 8 * 1e-9;
    want.S = 1024;
    want.ob = 1 * 1e-9;
    TB_ASSERT(same_net(&p->clusters[0].net, &want));
    tb_platform_destroy(&p);

    /* os and or over o over the file. */
    snprintf(spec, sizeof spec, "hosts=2,netgauge=%s,o=2us,or=3us", path);
    TB_ASSERT_OK(tb_platform_parse_spec(spec, 1, &p, err, sizeof err));
    TB_ASSERT(p->clusters[0].net.os == 2 * 1e-6 && p->clusters[0].net.or_ == 3 * 1e-6);
    TB_ASSERT(p->clusters[0].net.g == ng.g && p->clusters[0].net.L == ng.L);
    tb_platform_destroy(&p);

    /* Also through tb_platform_open (a spec: contains '='). */
    snprintf(spec, sizeof spec, "hosts=2,netgauge=%s", path);
    TB_ASSERT_OK(tb_platform_open(spec, 1, &p, err, sizeof err));
    TB_ASSERT(same_net(&p->clusters[0].net, &ng));
    tb_platform_destroy(&p);
}

static void test_spec_errors(void)
{
    char err[1024] = "", path[1024], spec[2200], want[2048];
    tb_platform *p = NULL;
    TB_ASSERT_EQ_INT(tb_platform_parse_spec("hosts=2,netgauge=no-such.out", 1, &p, err,
                                            sizeof err), TB_ERR_IO);
    TB_ASSERT_STR_EQ(err, "spec: key 'netgauge': no-such.out: cannot read: No such file or "
                          "directory");
    TB_ASSERT(p == NULL);

    data_path(path, sizeof path, "bad-number.out");
    snprintf(spec, sizeof spec, "hosts=2,netgauge=%s", path);
    TB_ASSERT_EQ_INT(tb_platform_parse_spec(spec, 1, &p, err, sizeof err), TB_ERR_PARSE);
    snprintf(want, sizeof want, "spec: key 'netgauge': %s:5: column 8 (o_r): expected a number, "
             "got '13.83x245'", path);
    TB_ASSERT_STR_EQ(err, want);

    data_path(path, sizeof path, "gige-small.out");
    snprintf(spec, sizeof spec, "hosts=2,netgauge=%s,netgauge=%s", path, path);
    TB_ASSERT_EQ_INT(tb_platform_parse_spec(spec, 1, &p, err, sizeof err), TB_ERR_PARSE);
    TB_ASSERT_STR_EQ(err, "spec: key 'netgauge' given twice");
}

/* Loads the JSON text written to the scratch file `name`. */
static int load_json(const char *name, const char *json, tb_platform **p, char *err, size_t n,
                     char *path, size_t pn)
{
    if (write_tmp(name, json, path, pn) != 0)
        return TB_ERR_IO;
    return tb_platform_load(path, 1, p, err, n);
}

static void test_json(void)
{
    char path[1024], err[1024] = "", jpath[1024];
    TB_ASSERT(copy_data("gige-small.out") == 0);
    data_path(path, sizeof path, "gige-small.out");
    tb_loggps ng;
    TB_ASSERT_OK(read_ok(path, &ng));
    tb_platform *p = NULL;

    /* Relative to the JSON file's directory (the scratch directory, which is
     * not necessarily the working directory); overrides win. */
    TB_ASSERT_OK(load_json("plat.json",
                           "{\"clusters\": ["
                           " {\"name\": \"a\", \"hosts\": 2,"
                           "  \"network\": {\"netgauge\": \"gige-small.out\"}},"
                           " {\"name\": \"b\", \"hosts\": 2,"
                           "  \"network\": {\"G\": \"9ns\", \"netgauge\": \"gige-small.out\","
                           "               \"o\": \"1us\", \"os\": \"2us\", \"S\": 100}}],"
                           " \"wan\": {\"L\": \"10ms\"}}",
                           &p, err, sizeof err, jpath, sizeof jpath));
    TB_ASSERT(same_net(&p->clusters[0].net, &ng));
    tb_loggps want = ng;
    want.G = 9 * 1e-9; /* as the platform parser computes "9ns" */
    want.os = 2 * 1e-6;
    want.or_ = 1 * 1e-6;
    want.S = 100;
    TB_ASSERT(same_net(&p->clusters[1].net, &want));
    tb_platform_destroy(&p);

    /* An absolute path is taken as it is. */
    if (path[0] == '/') {
        char json[2048];
        snprintf(json, sizeof json,
                 "{\"clusters\": [{\"hosts\": 1, \"network\": {\"netgauge\": \"%s\"}}]}", path);
        TB_ASSERT_OK(load_json("abs.json", json, &p, err, sizeof err, jpath, sizeof jpath));
        TB_ASSERT(same_net(&p->clusters[0].net, &ng));
        tb_platform_destroy(&p);
    }
}

static void test_json_errors(void)
{
    char err[1024] = "", jpath[1024], want[4096];
    tb_platform *p = NULL;
    TB_ASSERT_EQ_INT(load_json("e1.json",
                               "{\"clusters\": [{\"hosts\": 1, \"network\": {\"netgauge\": 5}}]}",
                               &p, err, sizeof err, jpath, sizeof jpath),
                     TB_ERR_PARSE);
    TB_ASSERT(ends_with(err, ".json: clusters[0].network.netgauge: expected a file name, got a "
                             "number"));
    TB_ASSERT_EQ_INT(load_json("e2.json",
                               "{\"clusters\": [{\"hosts\": 1,"
                               " \"network\": {\"netgauge\": \"\"}}]}",
                               &p, err, sizeof err, jpath, sizeof jpath),
                     TB_ERR_PARSE);
    TB_ASSERT(ends_with(err, ".json: clusters[0].network.netgauge: expected a file name, got a "
                             "string"));

    TB_ASSERT_EQ_INT(load_json("e3.json",
                               "{\"clusters\": [{\"hosts\": 1,"
                               " \"network\": {\"netgauge\": \"missing.out\"}}]}",
                               &p, err, sizeof err, jpath, sizeof jpath),
                     TB_ERR_IO);
    snprintf(want, sizeof want, "%s: clusters[0].network.netgauge: %s/missing.out: cannot read: "
             "No such file or directory", jpath, tb_test_scratch_dir());
    TB_ASSERT_STR_EQ(err, want);

    char text[1024], tpath[1024];
    snprintf(text, sizeof text, "%s%s", HEADER, "1 10 150 294 1608 75 -12 13 0 0 0\n");
    TB_ASSERT(write_tmp("neg.out", text, tpath, sizeof tpath) == 0);
    TB_ASSERT_EQ_INT(load_json("e4.json",
                               "{\"clusters\": [{\"hosts\": 1,"
                               " \"network\": {\"netgauge\": \"neg.out\", \"L\": \"1us\"}}]}",
                               &p, err, sizeof err, jpath, sizeof jpath),
                     TB_ERR_RANGE);
    snprintf(want, sizeof want, "%s: clusters[0].network.netgauge: %s:4: column 7 (o_s): "
             "negative value, got '-12'", jpath, tpath);
    TB_ASSERT_STR_EQ(err, want);
    TB_ASSERT(p == NULL);
}

/* Last: removes what the tests wrote when the scratch directory is ours. */
static void test_cleanup(void)
{
    if (!tb_test_scratch_made_)
        return;
    for (size_t i = 0; i < nmade; i++)
        TB_ASSERT(unlink(made[i]) == 0);
    TB_ASSERT(rmdir(tb_test_scratch_) == 0);
}

static const tb_test tests[] = {
    {"exact", test_exact},
    {"large_half", test_large_half},
    {"first_size_correction", test_first_size_correction},
    {"clamp", test_clamp},
    {"layout", test_layout},
    {"samples", test_samples},
    {"errors_files", test_errors_files},
    {"errors_table", test_errors_table},
    {"errors_args", test_errors_args},
    {"spec", test_spec},
    {"spec_errors", test_spec_errors},
    {"json", test_json},
    {"json_errors", test_json_errors},
    {"cleanup", test_cleanup},
    {NULL, NULL}};

TB_TEST_MAIN(tests)
